//! Budget: the last word on level 2's size, and on a digest's at every level.
//!
//! `rank` fits the kept lines under the budget, but a view is also its markers and
//! its digests, which rank never saw: a digest listing 3,000 locations on one line,
//! or six hundred markers kept apart by the blank lines between them. The rule this
//! stage holds: **level 2 prints at most the budget plus the force-kept failure
//! lines, each run of them with the one marker that may follow it** (a failure and
//! its context are shown whatever they cost, up to rank's ceiling, and what comes
//! between two failures is announced). To hold it, a line dropped alone between
//! two shown ones comes back when it is shorter than its marker, a blank line
//! between two elided regions goes with them, digests get what room is left
//! (fairly: the smallest in full, the rest an equal share), cut between two of
//! their names with the count of names left out in the marker, and if kept lines
//! and markers alone are still over, the lowest-ranked kept lines go.

use crate::digest::Detail;
use crate::doc::{Class, Doc, Fate, Reason, Stream};
use crate::stages::rank;

/// Bytes a marker line costs at most, about: the longest reason lists with
/// eight-digit line numbers run a little past this, most are shorter.
pub const MARKER_COST: usize = 96;

/// What a marker's description (`; all like "…"; no error or warning`) adds at most.
pub const DESCRIPTION_COST: usize = 96;

/// Holds the rule above for `budget`, at `detail` (the level's digest detail).
/// `level_two` is false for levels 1 and 0, which only ever drop lines: a line
/// they left out stays out.
pub fn run(doc: &mut Doc, budget: usize, detail: Detail, level_two: bool) {
    drop_stranded_lines(doc);
    if level_two {
        restore_short_gaps(doc);
    }
    drop_stranded_blanks(doc);
    let mut cost = Cost::of(doc);
    if cost.kept + cost.markers > budget {
        trim(doc, budget);
        cost = Cost::of(doc);
    }
    let room = budget.saturating_sub(cost.kept + cost.markers);
    share_room(doc, room, detail);
}

/// A plain line kept alone between two budget gaps, made like the lines around
/// it (same first word, last word and word count), looks to a reader like a sign
/// of something hidden, and says nothing the gaps' lines do not: it goes with
/// them. (Its rarity was only in an id the shape could not mask, such as
/// `ACC-CFFFCFEE`.) A line unlike its neighbours stays: that is the one a reader
/// may have run the command for.
fn drop_stranded_lines(doc: &mut Doc) {
    let skeleton = |t: &str| {
        let mut w = t.split_whitespace();
        let first = w.next().unwrap_or("");
        let count = 1 + w.clone().count();
        (first.to_string(), w.last().unwrap_or("").to_string(), count)
    };
    for i in 1..doc.lines.len().saturating_sub(1) {
        let gap = |l: &crate::doc::Line| {
            l.fate == Fate::Drop(Reason::Budget) && l.stream == doc.lines[i].stream
        };
        let l = &doc.lines[i];
        let lone = l.fate == Fate::Keep
            && l.class == Class::Plain
            && gap(&doc.lines[i - 1])
            && gap(&doc.lines[i + 1]);
        if !lone {
            continue;
        }
        let me = skeleton(&l.text);
        if me == skeleton(&doc.lines[i - 1].text) || me == skeleton(&doc.lines[i + 1].text) {
            doc.lines[i].fate = Fate::Drop(Reason::Budget);
        }
    }
}

/// A line dropped for the budget alone between two shown lines costs a marker
/// longer than itself: it is shown instead.
fn restore_short_gaps(doc: &mut Doc) {
    for i in 1..doc.lines.len().saturating_sub(1) {
        // A redraw shows only as its marker and last drawing (see `redraw`).
        let short = doc.lines[i].fate == Fate::Drop(Reason::Budget)
            && !doc.lines[i].redrawn
            && doc.lines[i].text.len() + 1 < MARKER_COST / 2;
        let (prev, next) = (&doc.lines[i - 1], &doc.lines[i + 1]);
        let alone = prev.shown()
            && next.shown()
            && prev.stream == doc.lines[i].stream
            && next.stream == doc.lines[i].stream
            && !doc.after_gap(i)
            && !doc.after_gap(i + 1);
        if short && alone {
            doc.lines[i].fate = Fate::Keep;
        }
    }
}

/// A blank line between two elided regions (or between one and the stream's
/// edge) only keeps two markers apart: it goes with them, under the reason of
/// the region before it.
fn drop_stranded_blanks(doc: &mut Doc) {
    for stream in [Stream::Stdout, Stream::Stderr] {
        let range = doc.range(stream);
        let hidden = |doc: &Doc, i: usize| -> bool {
            !range.contains(&i) || !doc.lines[i].shown() || doc.after_gap(i)
        };
        for i in range.clone() {
            let l = &doc.lines[i];
            if l.class != Class::Blank || !l.shown() {
                continue;
            }
            let before = i == range.start || !doc.lines[i - 1].shown() || doc.after_gap(i);
            let after = i + 1 >= range.end || hidden(doc, i + 1);
            let open = before && after && (i > range.start || i + 1 < range.end);
            if !open {
                continue;
            }
            let reason = (range.start..i)
                .rev()
                .find_map(|j| match doc.lines[j].fate {
                    Fate::Drop(r) => Some(r),
                    _ => None,
                })
                .unwrap_or(Reason::Budget);
            doc.lines[i].fate = Fate::Drop(reason);
        }
    }
}

/// What a view costs, as far as the budget is concerned.
struct Cost {
    /// Shown lines that are not forced.
    kept: usize,
    /// Marker lines, at `MARKER_COST` each, but for those right after a forced
    /// line: a failure's context ends in one, which the rule charges to it.
    markers: usize,
}

impl Cost {
    fn of(doc: &Doc) -> Cost {
        let mut kept = 0;
        let mut runs = 0;
        // Every elided run, those right after a forced line included: a marker's
        // description is charged to the budget wherever the marker is.
        let mut all_runs = 0usize;
        let mut described = 0usize;
        for stream in [Stream::Stdout, Stream::Stderr] {
            let range = doc.range(stream);
            let mut in_run = false;
            for i in range.clone() {
                let l = &doc.lines[i];
                let after_forced = i > range.start && doc.lines[i - 1].fate == Fate::Force;
                if doc.after_gap(i) && !in_run {
                    runs += usize::from(!after_forced);
                    all_runs += 1;
                }
                in_run = !l.shown() && (in_run || doc.after_gap(i));
                if l.shown() {
                    if l.fate == Fate::Keep {
                        kept += l.text.len() + 1;
                    }
                    in_run = false;
                } else if !in_run {
                    runs += usize::from(!after_forced);
                    all_runs += 1;
                    in_run = true;
                }
                if !l.shown() && matches!(l.fate, Fate::Drop(Reason::Budget | Reason::Level)) {
                    described += 1;
                }
            }
            let last = range.end.checked_sub(1).filter(|&i| i >= range.start);
            let held_to = last.map_or(0, |i| doc.lines[i].no);
            if doc.total(stream) > held_to && last.is_none_or(|i| doc.lines[i].shown()) {
                runs += 1;
                all_runs += 1;
            }
        }
        // Every run with a budget or level line may carry a description; a
        // bound, not a count of runs (those lines are at least one per run).
        Cost {
            kept,
            markers: runs * MARKER_COST + described.min(all_runs) * DESCRIPTION_COST,
        }
    }
}

/// Drops the lowest-ranked kept lines until kept lines and markers fit.
fn trim(doc: &mut Doc, budget: usize) {
    rank::score(doc);
    let mut order: Vec<usize> = (0..doc.lines.len())
        .filter(|&i| doc.lines[i].fate == Fate::Keep)
        .collect();
    order.sort_by_key(|&i| (doc.lines[i].score, std::cmp::Reverse(i)));
    for i in order {
        let cost = Cost::of(doc);
        if cost.kept + cost.markers <= budget {
            return;
        }
        doc.lines[i].fate = Fate::Drop(Reason::Budget);
    }
}

/// Gives each shown digest its share of `room`: digests in full while they fit,
/// and an equal share of what is left to the rest.
fn share_room(doc: &mut Doc, room: usize, detail: Detail) {
    // Digests print after their region's marker: those whose first line is shown
    // are not printed and cost nothing.
    let printed: Vec<usize> = (0..doc.digests.len())
        .filter(|&k| {
            let d = &doc.digests[k];
            d.start < doc.lines.len() && !doc.lines[d.start].shown()
        })
        .collect();
    let mut sized: Vec<(usize, usize)> = printed
        .iter()
        .map(|&k| {
            let size: usize = doc.digests[k]
                .lines(doc, detail)
                .iter()
                .map(|l| l.len() + 1)
                .sum();
            (size, k)
        })
        .collect();
    let total: usize = sized.iter().map(|s| s.0).sum();
    if total <= room {
        return;
    }
    sized.sort_unstable();
    let mut left = room;
    let mut count = sized.len();
    for (size, k) in sized {
        let share = left / count.max(1);
        let give = size.min(share);
        doc.digests[k].room = Some(give);
        left -= give;
        count -= 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::{view, Handle, Level, Options, Request};

    fn level2(out: &str, err: &str, exit: i32, budget: usize) -> String {
        let argv = vec!["tool".to_string()];
        let req = Request {
            argv: &argv,
            stdout: out.as_bytes(),
            stderr: err.as_bytes(),
            exit,
        };
        let mut opts = Options::new(Level::Two, Handle::parse("1a2b3c4d"));
        opts.budget = budget;
        let v = view(&req, &opts);
        format!(
            "{}{}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        )
    }

    #[test]
    fn a_digest_of_three_thousand_errors_is_cut_to_the_budget() {
        let mut err: String = (0..3000)
            .map(|i| {
                format!(
                    "src/file{}.c:{}:5: error: use of undeclared identifier 'var{i}'\n",
                    i % 40,
                    i + 1
                )
            })
            .collect();
        err.push_str("3000 errors generated.\n");
        let v = level2("", &err, 1, 4096);
        assert!(v.len() <= 4096 + 200, "{} bytes", v.len());
        let marker = v.lines().next().unwrap();
        let m = crate::Marker::parse(marker).unwrap();
        assert!(m.unlisted > 2000 && m.last == 3000, "{marker}");
        assert!(
            v.contains("src/file0.c:1:5: error: use of undeclared identifier 'var0'"),
            "{v}"
        );
        // The list says how many of its items it leaves out.
        assert!(
            v.lines().any(|l| l
                .rsplit_once(", … +")
                .is_some_and(|(_, n)| n.parse::<usize>().is_ok_and(|n| n > 100))),
            "{v}"
        );
    }

    #[test]
    fn a_lone_line_like_its_neighbours_is_not_stranded_between_two_gaps() {
        // The retention task's audit: ids without a digit made one line "rare".
        let mut out = String::new();
        for i in 0..3000u32 {
            let id = if i == 1500 {
                "CFFFCFEE".to_string()
            } else {
                format!("{:08X}", i.wrapping_mul(2654435761))
            };
            out.push_str(&format!(
                "checked ACC-{id} balance {}.{:02} ok\n",
                i % 997,
                i % 100
            ));
        }
        out.push_str("reconciliation failed for account ACC-A30F8ACA\n");
        let v = level2(&out, "", 0, 4096);
        assert!(!v.contains("ACC-CFFFCFEE"), "{v}");
        assert!(v.contains("reconciliation failed"));
        // A line unlike its neighbours stays.
        let needle = out.replace("checked ACC-CFFFCFEE balance", "the token is XK-991 for");
        let v = level2(&needle, "", 0, 4096);
        assert!(v.contains("the token is XK-991"), "{v}");
    }

    #[test]
    fn blank_lines_between_elided_regions_go_with_them() {
        let mut out = String::new();
        for w in 0..200 {
            for k in 0..20 {
                out.push_str(&format!("   Compiling crate_{w}_{k} v0.1.0\n"));
            }
            out.push_str(&format!(
                "warning: unused variable: `v{w}`\n  --> src/m{w}.rs:{}:9\n   |\n\n",
                w + 1
            ));
        }
        let v = level2("", &out, 0, 4096);
        assert!(v.len() <= 4096, "{} bytes:\n{v}", v.len());
        assert!(!v.contains("]\n\n[lens:"), "{v}");
    }
}
