//! Dedupe: a line repeated right after itself, or a block identical to one already
//! shown, is dropped; the marker carries how many repeats went.

use std::collections::HashMap;

use crate::doc::{Class, Doc, Reason};
use crate::handle::{chunk_hash, PrehashedState};

/// Drops adjacent repeated lines and repeated multi-line blocks.
pub fn run(doc: &mut Doc) {
    // Adjacent repeats, per stream (a stream boundary breaks a run).
    for i in 1..doc.lines.len() {
        let (prev, cur) = (&doc.lines[i - 1], &doc.lines[i]);
        if prev.stream == cur.stream
            && cur.class != Class::Blank
            && cur.class != Class::Progress
            && prev.text == cur.text
        {
            doc.lines[i].drop_for(Reason::Repeat);
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
        assert_eq!(
            fates("a\na\na\nb\na\n"),
            vec![true, false, false, true, true]
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
