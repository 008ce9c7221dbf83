//! Shortening a list that does not fit its room: the one place a digest's list
//! of names (a grep's files, a find's directories, the packages apt can upgrade)
//! gives up detail, and it gives up detail before it gives up a name.
//!
//! A prefix of a list is never the answer: the item a reader ran the command for
//! is as likely to be last as first. So [`fit`] climbs a ladder, stopping at the
//! first rung that fits: every item in full; items shortened (the longest first,
//! down to its bare name and count); names folded under their common directory
//! into the shell's brace form (`src/api/{invoice,refund}.rs`, numbered runs as
//! `handler_{001..220}.rs`); then directories or name prefixes standing for the
//! items under them with counts (`services/ledger/ (12 files, 40 matches)`), the
//! deepest grouping that fits; then the shallowest groups with the names too
//! short to be in one under their first letter; last, one group per first
//! letter. Every item is
//! named on every rung or falls under a group line that names its prefix and
//! counts it; the raw region holds the detail.

use std::collections::HashMap;

use crate::digest::{number_runs, shared_prefix};

/// One item of a list to fit.
#[derive(Clone, Debug)]
pub struct Item {
    /// Its forms, longest first, each with the count of names (a file's matches)
    /// it leaves out; the last is its bare name, the least it is ever shown as.
    pub forms: Vec<(String, usize)>,
    /// Where it sits: a path (`src/api/a.rs`, `./app/`) split at `/`, or a name
    /// (`python3-yaml`) split after each `-`. What groups it.
    pub key: String,
    /// The names it stands for (a file's matches, a directory's files); a group
    /// counts them, and a group leaves them all out.
    pub names: usize,
}

pub use crate::digest::body::Nouns;

/// `count noun`, the noun agreeing with the count.
pub fn counted(n: usize, (one, many): (&str, &str)) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The lines of `items` in at most `room` bytes (newlines counted), and how many
/// names they leave out. Never drops an item: when not even one group per first
/// letter fits, that is returned over the room.
pub fn fit(items: &[Item], room: usize, nouns: Nouns) -> (Vec<String>, usize) {
    let size = |lines: &[String]| lines.iter().map(|l| l.len() + 1).sum::<usize>();
    // 1: every item in full.
    let full: Vec<String> = items.iter().map(|i| i.forms[0].0.clone()).collect();
    if size(&full) <= room {
        return (full, 0);
    }
    // 2: the longest item a step shorter, again and again, down to bare names.
    if let Some(fitted) = shortened(items, room) {
        return fitted;
    }
    // 3 and 4: names folded under their directory, then ever shallower groups.
    let deepest = items.iter().map(|i| parts(&i.key, nouns.sep).len()).max();
    let deepest = deepest.unwrap_or(0);
    let fits = |lines: &[Line]| lines.iter().map(|l| l.text.len() + 1).sum::<usize>() <= room;
    for depth in (1..=deepest).rev() {
        let lines = grouped(items, nouns, Some(depth), false);
        if fits(&lines) {
            return refine(items, lines, room);
        }
    }
    // 5: the shallowest groups, and the names too short to be in one (a
    // directory's `Makefile`, `NOTES1.md`) under their first letter.
    let lines = grouped(items, nouns, Some(1), true);
    if fits(&lines) {
        return refine(items, lines, room);
    }
    // 6: the last resort, one group per first letter; an item is never dropped.
    refine(items, grouped(items, nouns, None, false), room)
}

/// Rung 2: the item whose current form is longest steps down to its next form
/// until the list fits; `None` when its bare names do not.
fn shortened(items: &[Item], room: usize) -> Option<(Vec<String>, usize)> {
    let bare: usize = items
        .iter()
        .map(|i| i.forms.last().map_or(0, |f| f.0.len()) + 1)
        .sum();
    if bare > room {
        return None;
    }
    let mut at = vec![0usize; items.len()];
    let mut total: usize = items.iter().map(|i| i.forms[0].0.len() + 1).sum();
    let mut heap: std::collections::BinaryHeap<(usize, std::cmp::Reverse<usize>)> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.forms.len() > 1)
        .map(|(k, i)| (i.forms[0].0.len(), std::cmp::Reverse(k)))
        .collect();
    while total > room {
        let (len, std::cmp::Reverse(k)) = heap.pop()?;
        at[k] += 1;
        let now = items[k].forms[at[k]].0.len();
        total = total - len + now;
        if at[k] + 1 < items[k].forms.len() {
            heap.push((now, std::cmp::Reverse(k)));
        }
    }
    let lines = items
        .iter()
        .zip(&at)
        .map(|(i, &a)| i.forms[a].0.clone())
        .collect();
    let unlisted = items.iter().zip(&at).map(|(i, &a)| i.forms[a].1).sum();
    Some((lines, unlisted))
}

/// A key's parts, each with the separator that ends it: `src/api/a.rs` is
/// `src/`, `api/`, `a.rs`.
fn parts<'a>(key: &'a str, sep: &str) -> Vec<&'a str> {
    key.split_inclusive(|c| sep.contains(c)).collect()
}

/// The count a group or a fold prints: `(3 files, 12 matches)`, `(4 packages)`.
fn count_of(nouns: Nouns, items: usize, names: usize) -> String {
    match nouns.name {
        Some(name) => format!("({}, {})", counted(items, nouns.item), counted(names, name)),
        None => format!("({})", counted(items, nouns.item)),
    }
}

/// A line of a grouped list: the items it stands for (in their order) and the
/// names it leaves out.
struct Line {
    text: String,
    members: Vec<usize>,
    left: usize,
}

/// Rungs 3 to 6. With `Some(depth)`, an item whose key has more than `depth`
/// parts falls under the group of its first `depth` parts (a group of one item
/// names it instead), and the items left named are folded with their siblings,
/// or, with `lone`, fall under the group of their first letter; with `None`,
/// every item falls under the group of its key's first letter. Each line
/// stands where its first item stood.
fn grouped(items: &[Item], nouns: Nouns, depth: Option<usize>, lone: bool) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    let mut named: Vec<usize> = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let p = parts(&item.key, nouns.sep);
        let first = || {
            item.key
                .chars()
                .next()
                .map(String::from)
                .unwrap_or_default()
        };
        let prefix = match depth {
            Some(d) if p.len() > d => p[..d].concat(),
            Some(_) if lone => first(),
            Some(_) => {
                named.push(k);
                continue;
            }
            None => first(),
        };
        let g = *group_of.entry(prefix.clone()).or_insert_with(|| {
            groups.push((prefix, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(k);
    }
    for (prefix, members) in groups {
        if members.len() == 1 && depth.is_some() {
            named.push(members[0]);
            continue;
        }
        let names: usize = members.iter().map(|&k| items[k].names).sum();
        // A path's group ends in its `/`; any other prefix says it is one.
        let star = if prefix.ends_with('/') { "" } else { "*" };
        lines.push(Line {
            text: format!("{prefix}{star} {}", count_of(nouns, members.len(), names)),
            members,
            left: names,
        });
    }
    named.sort_unstable();
    // The named items, folded with the others under the same parent.
    let mut by_parent: Vec<(String, Vec<usize>)> = Vec::new();
    let mut parent_of: HashMap<String, usize> = HashMap::new();
    for &k in &named {
        let p = parts(&items[k].key, nouns.sep);
        let parent = p[..p.len().saturating_sub(1)].concat();
        let g = *parent_of.entry(parent.clone()).or_insert_with(|| {
            by_parent.push((parent, Vec::new()));
            by_parent.len() - 1
        });
        by_parent[g].1.push(k);
    }
    for (parent, members) in by_parent {
        let bare = |k: usize| items[k].forms.last().expect("a form").clone();
        let left: usize = members.iter().map(|&k| bare(k).1).sum();
        if members.len() == 1 {
            lines.push(Line {
                text: bare(members[0]).0,
                members,
                left,
            });
            continue;
        }
        let leaves: Vec<String> = members
            .iter()
            .map(|&k| items[k].key[parent.len()..].to_string())
            .collect();
        let names: usize = members.iter().map(|&k| items[k].names).sum();
        // Folded names count themselves; what they leave out is counted.
        let count = match nouns.name {
            Some(_) => format!(" {}", count_of(nouns, members.len(), names)),
            None => String::new(),
        };
        lines.push(Line {
            text: format!("{parent}{}{count}", fold(&leaves)),
            members,
            left,
        });
    }
    lines.sort_by_key(|l| l.members[0]);
    lines
}

/// The room a grouping leaves, spent: the lines cheapest to open are replaced
/// by their items in full, or else by their bare names, while the list still
/// fits (a small directory beside large ones is shown whole).
fn refine(items: &[Item], lines: Vec<Line>, room: usize) -> (Vec<String>, usize) {
    let cost = |texts: &mut dyn Iterator<Item = &String>| texts.map(|t| t.len() + 1).sum::<usize>();
    let mut total = cost(&mut lines.iter().map(|l| &l.text));
    let opened = |l: &Line, form: Option<usize>| -> Vec<&(String, usize)> {
        l.members
            .iter()
            .map(|&k| {
                let forms = &items[k].forms;
                &forms[form.unwrap_or(forms.len() - 1)]
            })
            .collect()
    };
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| cost(&mut opened(&lines[i], Some(0)).into_iter().map(|f| &f.0)));
    let mut open: Vec<Option<Vec<&(String, usize)>>> = vec![None; lines.len()];
    for i in order {
        let now = lines[i].text.len() + 1;
        for form in [Some(0), None] {
            let forms = opened(&lines[i], form);
            let after = cost(&mut forms.iter().map(|f| &f.0));
            if forms.len() == 1 && forms[0].0 == lines[i].text {
                break;
            }
            if total - now + after <= room {
                total = total - now + after;
                open[i] = Some(forms);
                break;
            }
        }
    }
    let mut out = Vec::new();
    let mut unlisted = 0;
    for (l, o) in lines.into_iter().zip(open) {
        match o {
            Some(forms) => {
                for (text, left) in forms {
                    out.push(text.clone());
                    unlisted += left;
                }
            }
            None => {
                out.push(l.text);
                unlisted += l.left;
            }
        }
    }
    (out, unlisted)
}

/// Names as one brace expression the shell expands back to them: numbered runs
/// as ranges (`f_{001..150}.png`), then the text every name shares around them
/// said once (`{invoice,refund}.rs`).
pub fn fold(names: &[String]) -> String {
    let runs = number_runs(names);
    if runs.len() == 1 {
        return runs[0].clone();
    }
    let texts: Vec<&str> = runs.iter().map(String::as_str).collect();
    let reversed: Vec<String> = texts.iter().map(|t| t.chars().rev().collect()).collect();
    let reversed: Vec<&str> = reversed.iter().map(String::as_str).collect();
    let mut pre = shared_prefix(&texts).len();
    let mut suf = shared_prefix(&reversed).len();
    let shortest = texts.iter().map(|t| t.len()).min().unwrap_or(0);
    // A brace in what is shared would split a range; the shared text never
    // overlaps itself in the shortest name.
    let first = texts[0];
    while pre > 0 && first[..pre].contains(['{', '}', ',']) {
        pre = first[..pre].rfind(['{', '}', ',']).unwrap_or(0);
    }
    while suf > 0 && first[first.len() - suf..].contains(['{', '}', ',']) {
        let tail = &first[first.len() - suf..];
        suf = tail.len() - tail.find(['{', '}', ',']).map_or(tail.len(), |i| i + 1);
    }
    if pre + suf > shortest {
        suf = shortest - pre;
    }
    while !first.is_char_boundary(first.len() - suf) {
        suf -= 1;
    }
    let middles: Vec<&str> = texts.iter().map(|t| &t[pre..t.len() - suf]).collect();
    format!(
        "{}{{{}}}{}",
        &first[..pre],
        middles.join(","),
        &first[first.len() - suf..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: Nouns = Nouns {
        item: ("file", "files"),
        name: Some(("match", "matches")),
        sep: "/",
    };

    /// A grep's file with `n` matches: in full, then bare with its count.
    fn file(path: &str, n: usize) -> Item {
        let matches: Vec<String> = (1..=n).map(|i| format!("{}:fn f{i}", i * 10)).collect();
        Item {
            forms: vec![
                (format!("{path}: {}", matches.join(" ")), 0),
                (format!("{path}: {} … +{}", matches[0], n - 1), n - 1),
                (format!("{path} ({})", counted(n, ("match", "matches"))), n),
            ],
            key: path.to_string(),
            names: n,
        }
    }

    fn size(lines: &[String]) -> usize {
        lines.iter().map(|l| l.len() + 1).sum()
    }

    #[test]
    fn a_list_that_fits_is_every_item_in_full() {
        let items = [file("src/a.rs", 2), file("src/b.rs", 3)];
        let (lines, unlisted) = fit(&items, 1000, FILES);
        assert_eq!(
            lines,
            [
                "src/a.rs: 10:fn f1 20:fn f2",
                "src/b.rs: 10:fn f1 20:fn f2 30:fn f3"
            ]
        );
        assert_eq!(unlisted, 0);
    }

    #[test]
    fn items_are_shortened_the_longest_first() {
        let items = [file("src/a.rs", 2), file("src/b.rs", 9)];
        let room = items[0].forms[0].0.len() + items[1].forms[1].0.len() + 2;
        let (lines, unlisted) = fit(&items, room, FILES);
        assert_eq!(
            lines,
            ["src/a.rs: 10:fn f1 20:fn f2", "src/b.rs: 10:fn f1 … +8"]
        );
        assert_eq!(unlisted, 8);
        // Tighter, both go down to their bare names and counts.
        let (lines, unlisted) = fit(&items, 42, FILES);
        assert_eq!(lines, ["src/a.rs (2 matches)", "src/b.rs (9 matches)"]);
        assert_eq!(unlisted, 11);
    }

    #[test]
    fn names_fold_under_their_directory_with_ranges() {
        let mut items: Vec<Item> = ["invoice", "payout", "refund"]
            .iter()
            .map(|n| file(&format!("services/ledger/{n}.rs"), 4))
            .collect();
        items.extend((1..=120).map(|i| file(&format!("src/handlers/handler_{i:03}.rs"), 1)));
        items.push(file("README.md", 2));
        let want = [
            "services/ledger/{invoice,payout,refund}.rs (3 files, 12 matches)",
            "src/handlers/handler_{001..120}.rs (120 files, 120 matches)",
            "README.md (2 matches)",
        ];
        let room = want.iter().map(|l| l.len() + 1).sum();
        let (lines, unlisted) = fit(&items, room, FILES);
        assert_eq!(lines, want);
        assert_eq!(unlisted, 12 + 120 + 2);
        // What room is left opens the cheapest lines again.
        let (lines, unlisted) = fit(&items, room + 70, FILES);
        assert_eq!(lines[0], "services/ledger/invoice.rs (4 matches)");
        assert_eq!(lines[2], "services/ledger/refund.rs (4 matches)");
        assert_eq!(lines[4], "README.md: 10:fn f1 20:fn f2");
        assert_eq!(unlisted, 12 + 120);
    }

    #[test]
    fn groups_are_the_deepest_that_fit_with_counts() {
        let mut items = Vec::new();
        for (dir, n) in [("billing", 30), ("ledger", 25), ("web", 40)] {
            for i in 0..n {
                items.push(file(&format!("services/{dir}/m{}x{i}.rs", i * 7), 2));
            }
        }
        items.push(file("tools/gen.py", 3));
        let (lines, unlisted) = fit(&items, 200, FILES);
        assert_eq!(
            lines,
            [
                "services/billing/ (30 files, 60 matches)",
                "services/ledger/ (25 files, 50 matches)",
                "services/web/ (40 files, 80 matches)",
                // The room left shows the lone file whole.
                "tools/gen.py: 10:fn f1 20:fn f2 30:fn f3",
            ]
        );
        assert_eq!(unlisted, 190);
        // Shallower when that does not fit.
        let (lines, _) = fit(&items, 80, FILES);
        assert_eq!(
            lines,
            [
                "services/ (95 files, 190 matches)",
                "tools/gen.py: 10:fn f1 20:fn f2 30:fn f3"
            ]
        );
    }

    #[test]
    fn the_last_resort_groups_by_first_letter_and_drops_nothing() {
        let nouns = Nouns {
            item: ("package", "packages"),
            name: None,
            sep: "-",
        };
        let items: Vec<Item> = [
            "python3-yaml",
            "python3-requests",
            "python3-six",
            "libc6",
            "zlib1g",
        ]
        .iter()
        .map(|n| Item {
            forms: vec![(format!("{n} 1.0 -> 1.1"), 0), (n.to_string(), 1)],
            key: n.to_string(),
            names: 1,
        })
        .collect();
        // Names with no `-` fold under no prefix at all.
        let (lines, unlisted) = fit(&items, 50, nouns);
        assert!(size(&lines) <= 50, "{lines:?}");
        // (Two names with nothing in common cost less apart than folded.)
        assert_eq!(lines.join("|"), "python3-{yaml,requests,six}|libc6|zlib1g");
        assert_eq!(unlisted, 5);
        let (lines, _) = fit(&items, 40, nouns);
        assert_eq!(lines.join("|"), "python3-* (3 packages)|libc6|zlib1g");
        // No room at all: still every item under a group.
        let (lines, unlisted) = fit(&items, 0, nouns);
        assert_eq!(
            lines.join("|"),
            "p* (3 packages)|l* (1 package)|z* (1 package)"
        );
        assert_eq!(unlisted, 5);
    }

    #[test]
    fn names_of_one_directory_group_by_word_and_the_rest_by_first_letter() {
        let nouns = Nouns {
            item: ("name", "names"),
            name: None,
            sep: "-_",
        };
        let mut names: Vec<String> = Vec::new();
        for w in ["alpha", "bravo", "config"] {
            names.extend(
                (0..12).map(|i| format!("{w}-{}.py", ["x", "yy", "zzz"][i % 3].repeat(i + 1))),
            );
        }
        names.extend((0..9).map(|i| format!("Makefile{}.md", i * 7)));
        names.extend((0..9).map(|i| format!("NOTES{}.txt", i * 5)));
        let items: Vec<Item> = names
            .iter()
            .map(|n| Item {
                forms: vec![(format!("{n}(1234)"), 0), (n.clone(), 0)],
                key: n.clone(),
                names: 1,
            })
            .collect();
        let (lines, unlisted) = fit(&items, 90, nouns);
        assert!(size(&lines) <= 90, "{lines:?}");
        // The words stay groups of their own; the names with no word to
        // group by go under their first letter, not every name.
        assert_eq!(
            lines.join("|"),
            "alpha-* (12 names)|bravo-* (12 names)|config-* (12 names)|M* (9 names)|N* (9 names)"
        );
        assert_eq!(unlisted, names.len());
    }

    #[test]
    fn a_fold_never_splits_a_range() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(fold(&names(&["a.rs", "b.rs"])), "{a,b}.rs");
        assert_eq!(
            fold(&names(&["f_1.png", "f_2.png", "f_3.png", "f_x.png"])),
            "f_{{1..3},x}.png"
        );
        assert_eq!(fold(&names(&["x", "xy"])), "x{,y}");
    }
}
