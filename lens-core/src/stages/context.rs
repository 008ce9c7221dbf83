//! Context: failures are force-kept with a few neighbours, and a failing command's
//! stderr is force-kept (its tail, within the budget).
//!
//! Context forces only lines still kept: it never rescues a line dropped as progress,
//! as a repeat, or as another report of a cause already in the view.

use crate::doc::{Class, Doc, Fate, Stream};
use crate::stages::classify::log;

/// Lines of the block kept after a failure line (its message, location and help).
const AFTER: usize = 24;
/// Lines kept before a failure line.
const BEFORE: usize = 2;

/// Forces failures, their neighbours and a failing command's stderr tail.
pub fn run(doc: &mut Doc, budget: usize) {
    let n = doc.lines.len();
    let mut i = 0;
    while i < n {
        if doc.lines[i].class != Class::Error || !doc.lines[i].shown() {
            i += 1;
            continue;
        }
        let stream = doc.lines[i].stream;
        let block = doc.blocks.get(doc.lines[i].block as usize);
        let block_end = block.map_or(i + 1, |b| b.end);
        let lo = i.saturating_sub(BEFORE);
        let mut hi = block_end.max(i + 1 + BEFORE).min(i + 1 + AFTER).min(n);
        // A log record's context is what it carries (a stack trace), up to the
        // next record: that one is kept or not on its own.
        if log::is_record(&doc.lines[i].text) {
            hi = (i + 1..hi)
                .find(|&j| log::is_record(&doc.lines[j].text))
                .unwrap_or(hi);
        }
        for l in &mut doc.lines[lo..hi] {
            if l.stream == stream && l.fate == Fate::Keep && l.class != Class::Progress {
                l.fate = Fate::Force;
            }
        }
        i += 1;
    }
    if doc.failed() {
        let mut spent = 0usize;
        let range = doc.range(Stream::Stderr);
        for l in doc.lines[range].iter_mut().rev() {
            if l.fate != Fate::Keep || l.class == Class::Progress {
                continue;
            }
            spent += l.text.len() + 1;
            if spent > budget / 2 {
                break;
            }
            l.fate = Fate::Force;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Reason;
    use crate::stages::{blocks, classify};

    #[test]
    fn forces_the_failure_and_its_block() {
        let argv = vec![];
        let out = "a\nb\nc\nerror: x\n  --> f.rs:1\n  = help: y\nd\ne\nf\ng\n";
        let mut doc = Doc::new(&argv, out, "", 0);
        blocks::run(&mut doc);
        classify::run(&mut doc);
        run(&mut doc, 1000);
        let forced: Vec<_> = doc.lines.iter().map(|l| l.fate == Fate::Force).collect();
        assert_eq!(
            forced,
            vec![false, true, true, true, true, true, false, false, false, false]
        );
    }

    #[test]
    fn does_not_rescue_dropped_lines() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "x\nerror: y\n", "", 0);
        blocks::run(&mut doc);
        classify::run(&mut doc);
        doc.lines[0].fate = Fate::Drop(Reason::Cause);
        run(&mut doc, 1000);
        assert_eq!(doc.lines[0].fate, Fate::Drop(Reason::Cause));
    }

    #[test]
    fn forces_failing_stderr_tail_within_half_the_budget() {
        let argv = vec![];
        let err: String = (0..100).map(|i| format!("line {i:04}\n")).collect();
        let mut doc = Doc::new(&argv, "", &err, 1);
        blocks::run(&mut doc);
        classify::run(&mut doc);
        run(&mut doc, 200);
        let forced = doc.lines.iter().filter(|l| l.fate == Fate::Force).count();
        assert_eq!(forced, 10);
        assert_eq!(doc.lines[99].fate, Fate::Force);
        assert_eq!(doc.lines[0].fate, Fate::Keep);
    }
}
