//! Levels 1 and 0 narrow the ranked view further; they only drop lines.
//!
//! Level 1 is the failures, or, when nothing failed, the head of what was kept: never
//! an empty view, because a reader shown nothing runs the command again. Level 0 keeps
//! one line (the failure, or the last line when nothing failed) under a count that
//! `render` prints.

use crate::doc::{Class, Doc, Fate, Reason, Stream};

/// Lines level 1 shows when nothing failed.
pub const HEAD: usize = 20;

/// Narrows the view to level 1.
pub fn one(doc: &mut Doc) {
    let has_error = doc
        .lines
        .iter()
        .any(|l| l.shown() && l.class == Class::Error);
    let failures: Vec<bool> = doc
        .lines
        .iter()
        .map(|l| l.fate == Fate::Force || (l.shown() && l.class == Class::Error))
        .collect();
    if has_error || (doc.failed() && failures.iter().any(|&f| f)) {
        for (l, keep) in doc.lines.iter_mut().zip(failures) {
            if !keep && l.shown() {
                l.fate = Fate::Drop(Reason::Level);
            }
        }
        return;
    }
    // Nothing failed that we can point at: the head of what was kept (or, for a
    // failing command, the tail, which is where the reason usually is).
    let shown: Vec<usize> = (0..doc.lines.len())
        .filter(|&i| doc.lines[i].shown() && doc.lines[i].class != Class::Blank)
        .collect();
    let keep: Vec<usize> = if doc.failed() {
        shown.iter().rev().take(HEAD).copied().collect()
    } else {
        shown.iter().take(HEAD).copied().collect()
    };
    let mut mask = vec![false; doc.lines.len()];
    for i in keep {
        mask[i] = true;
    }
    for (l, k) in doc.lines.iter_mut().zip(mask) {
        if !k && l.shown() {
            l.fate = Fate::Drop(Reason::Level);
        }
    }
}

/// Narrows the view to level 0: one line.
pub fn zero(doc: &mut Doc) {
    // The first failure, even one a digest grouped: it is the likeliest cause, where
    // the last shown error is usually a summary ("could not compile").
    let pick = doc
        .lines
        .iter()
        .position(|l| l.class == Class::Error && l.fate != Fate::Drop(Reason::Repeat))
        .or_else(|| {
            let last_in = |s: Stream| {
                doc.range(s)
                    .rev()
                    .find(|&i| doc.lines[i].class != Class::Blank)
            };
            if doc.failed() {
                last_in(Stream::Stderr).or_else(|| last_in(Stream::Stdout))
            } else {
                last_in(Stream::Stdout).or_else(|| last_in(Stream::Stderr))
            }
        });
    for (i, l) in doc.lines.iter_mut().enumerate() {
        if Some(i) == pick {
            l.fate = Fate::Force;
        } else {
            l.fate = Fate::Drop(Reason::Level);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::{blocks, classify};

    fn prepared<'a>(argv: &'a [String], out: &'a str, err: &'a str, exit: i32) -> Doc<'a> {
        let mut d = Doc::new(argv, out, err, exit);
        blocks::run(&mut d);
        classify::run(&mut d);
        d
    }

    fn shown(d: &Doc) -> Vec<String> {
        d.lines
            .iter()
            .filter(|l| l.shown())
            .map(|l| l.raw.to_string())
            .collect()
    }

    #[test]
    fn level_one_without_failure_is_the_head() {
        let argv = vec![];
        let out: String = (0..50).map(|i| format!("file{i}.txt\n")).collect();
        let mut d = prepared(&argv, &out, "", 0);
        one(&mut d);
        let s = shown(&d);
        assert_eq!(s.len(), HEAD);
        assert_eq!(s[0], "file0.txt");
    }

    #[test]
    fn level_one_with_failure_is_the_failures() {
        let argv = vec![];
        let mut d = prepared(&argv, "a\nb\n", "warning: w\nerror: boom\n", 1);
        d.lines[3].fate = Fate::Force;
        one(&mut d);
        assert_eq!(shown(&d), vec!["error: boom"]);
    }

    #[test]
    fn level_zero_picks_the_first_failure_even_when_grouped() {
        let argv = vec![];
        let mut d = prepared(
            &argv,
            "",
            "error[E0308]: mismatched types\n  --> a.rs:1:1\nerror: could not compile `x`\n",
            101,
        );
        d.lines[0].fate = Fate::Drop(Reason::Grouped);
        d.lines[1].fate = Fate::Drop(Reason::Grouped);
        zero(&mut d);
        assert_eq!(shown(&d), vec!["error[E0308]: mismatched types"]);
    }

    #[test]
    fn level_zero_picks_the_failure_or_the_last_line() {
        let argv = vec![];
        let mut d = prepared(&argv, "a\nerror: root\nerror: more\n", "", 1);
        zero(&mut d);
        assert_eq!(shown(&d), vec!["error: root"]);
        let mut d = prepared(&argv, "a\nb\nlast\n\n", "", 0);
        zero(&mut d);
        assert_eq!(shown(&d), vec!["last"]);
        let mut d = prepared(&argv, "out\n", "why it failed\n", 2);
        zero(&mut d);
        assert_eq!(shown(&d), vec!["why it failed"]);
    }
}
