//! Dedupe: a line repeated right after itself, or a block identical to one already
//! shown, is dropped; the marker carries how many repeats went. A run of repeats
//! shorter than the marker that would stand for it stays: eliding it would make
//! the view longer.

use std::collections::HashMap;

use crate::doc::{Class, Doc, Reason};
use crate::handle::{chunk_hash, PrehashedState};

/// Bytes of the shortest marker (`[lens: elided stdout 9-9 (1 line: repeat)
/// handle=1a2b3c4d]` and its newline), which a run of repeats must outweigh.
const MARKER_COST: usize = 60;

/// Drops adjacent repeated lines and repeated multi-line blocks.
pub fn run(doc: &mut Doc) {
    // Adjacent repeats, per stream (a stream boundary breaks a run).
    let mut i = 1;
    while i < doc.lines.len() {
        let repeats = |j: usize| {
            let (prev, cur) = (&doc.lines[j - 1], &doc.lines[j]);
            prev.stream == cur.stream
                && cur.class != Class::Blank
                && cur.class != Class::Progress
                && cur.shown()
                && prev.text == cur.text
        };
        if !repeats(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < doc.lines.len() && repeats(i) {
            i += 1;
        }
        let bytes: usize = doc.lines[start..i].iter().map(|l| l.text.len() + 1).sum();
        // Next to a line already dropped the run joins that line's marker for free.
        let beside_elided = i < doc.lines.len() && !doc.lines[i].shown();
        if bytes >= MARKER_COST || beside_elided {
            for l in &mut doc.lines[start..i] {
                l.drop_for(Reason::Repeat);
            }
        }
    }
    // Whole blocks seen before. Keyed by a hash of the block's text, confirmed by
    // comparing the text, so a hash collision cannot drop a distinct block.
    let mut seen: HashMap<(u8, u64), Vec<usize>, PrehashedState> = HashMap::default();
    for bi in 0..doc.blocks.len() {
        let b = &doc.blocks[bi];
        if b.len() < 2 {
            continue;
        }
        // Each line's length goes into its hash, so line breaks need no separator.
        let h = doc.lines[b.start..b.end]
            .iter()
            .fold(0, |h, l| chunk_hash(h, l.text.as_bytes()));
        let stream = doc.lines[b.start].stream as u8;
        let earlier = seen.entry((stream, h)).or_default();
        let repeat = earlier.iter().any(|&ej| same_block(doc, ej, bi));
        if repeat {
            let (s, e) = (b.start, b.end);
            for l in &mut doc.lines[s..e] {
                l.drop_for(Reason::Repeat);
            }
        } else {
            earlier.push(bi);
        }
    }
}

fn same_block(doc: &Doc, a: usize, b: usize) -> bool {
    let (x, y) = (&doc.blocks[a], &doc.blocks[b]);
    x.len() == y.len()
        && doc.lines[x.start..x.end]
            .iter()
            .zip(&doc.lines[y.start..y.end])
            .all(|(l, m)| l.text == m.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Fate;
    use crate::stages::blocks;

    fn fates(out: &str) -> Vec<bool> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, out, "", 0);
        blocks::run(&mut doc);
        run(&mut doc);
        doc.lines.iter().map(|l| l.fate == Fate::Keep).collect()
    }

    #[test]
    fn drops_adjacent_repeats() {
        let a = "a line long enough that two repeats outweigh a marker";
        assert_eq!(
            fates(&format!("{a}\n{a}\n{a}\nb\n{a}\n")),
            vec![true, false, false, true, true]
        );
    }

    #[test]
    fn a_repeat_shorter_than_its_marker_stays() {
        let frame = "\tat x.Y.z(Y.java:1)";
        assert_eq!(
            fates(&format!("x\nx\nx\n{frame}\n{frame}\n{frame}\nend\n")),
            vec![true, true, true, true, true, true, true]
        );
        // Three repeats of that frame outweigh it.
        assert_eq!(
            fates(&format!("{frame}\n{frame}\n{frame}\n{frame}\nend\n")),
            vec![true, false, false, false, true]
        );
    }

    #[test]
    fn drops_repeated_blocks_only_when_identical() {
        let out = "warn x\n  at 1\n\nwarn x\n  at 1\n\nwarn x\n  at 2\n";
        assert_eq!(
            fates(out),
            vec![true, true, true, false, false, true, true, true]
        );
    }

    #[test]
    fn blank_runs_are_left_to_render() {
        assert_eq!(fates("a\n\n\nb\n"), vec![true, true, true, true]);
    }
}
