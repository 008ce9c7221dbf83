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

/// Holds the rule above for `budget`, at `detail` (the level's digest detail).
pub fn run(doc: &mut Doc, budget: usize, detail: Detail) {
    restore_short_gaps(doc);
    drop_stranded_blanks(doc);
    let mut cost = Cost::of(doc);
    if cost.kept + cost.markers > budget {
        trim(doc, budget);
        cost = Cost::of(doc);
    }
    let room = budget.saturating_sub(cost.kept + cost.markers);
    share_room(doc, room, detail);
}

/// A line dropped for the budget alone between two shown lines costs a marker
/// longer than itself: it is shown instead.
fn restore_short_gaps(doc: &mut Doc) {
    for i in 1..doc.lines.len().saturating_sub(1) {
        let short = doc.lines[i].fate == Fate::Drop(Reason::Budget)
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
        for stream in [Stream::Stdout, Stream::Stderr] {
            let range = doc.range(stream);
            let mut in_run = false;
            for i in range.clone() {
                let l = &doc.lines[i];
                let after_forced = i > range.start && doc.lines[i - 1].fate == Fate::Force;
                if doc.after_gap(i) && !in_run && !after_forced {
                    runs += 1;
                }
                in_run = !l.shown() && (in_run || doc.after_gap(i));
                if l.shown() {
                    if l.fate == Fate::Keep {
                        kept += l.text.len() + 1;
                    }
                    in_run = false;
                } else if !in_run {
                    runs += usize::from(!after_forced);
                    in_run = true;
                }
            }
            let last = range.end.checked_sub(1).filter(|&i| i >= range.start);
            let held_to = last.map_or(0, |i| doc.lines[i].no);
            if doc.total(stream) > held_to && last.is_none_or(|i| doc.lines[i].shown()) {
                runs += 1;
            }
        }
        Cost {
            kept,
            markers: runs * MARKER_COST,
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
        assert!(v.lines().any(|l| l.ends_with(", …")), "{v}");
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
