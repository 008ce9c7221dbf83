//! Blocks: runs of non-blank lines that belong together.
//!
//! A block ends at a blank line, and also where an unindented line follows an
//! indented continuation (`error: …` then `  --> …` then the next `error: …`).
//! Whether the block has such a continuation is a flag set while the block is built;
//! asking later by scanning the block would make parsing quadratic in its length.

use crate::doc::{Block, Class, Doc, Stream};

/// True when a line continues the block above it rather than opening one.
pub fn is_continuation(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(b' ' | b'\t') => true,
        // rustc's numbered source lines: `12 |     let x = …`
        Some(b'0'..=b'9') => {
            let rest = text.trim_start_matches(|c: char| c.is_ascii_digit());
            rest.trim_start().starts_with('|')
        }
        _ => false,
    }
}

/// Builds `doc.blocks` and sets each line's block index. One pass.
pub fn run(doc: &mut Doc) {
    doc.blocks.clear();
    for stream in [Stream::Stdout, Stream::Stderr] {
        let range = doc.range(stream);
        let mut open: Option<Block> = None;
        for i in range {
            let blank = doc.lines[i].class == Class::Blank;
            let cont = !blank && is_continuation(&doc.lines[i].text);
            // A sampled stream's gap ends any block: the lines on either side of it
            // were not next to each other.
            let closes = match &open {
                None => false,
                Some(b) => blank || (!cont && b.has_continuation) || doc.after_gap(i),
            };
            if closes {
                doc.blocks.push(open.take().expect("open block"));
            }
            if blank {
                // A blank line is a block of its own, so every line has one.
                doc.blocks.push(Block {
                    start: i,
                    end: i + 1,
                    has_continuation: false,
                });
                doc.lines[i].block = (doc.blocks.len() - 1) as u32;
                continue;
            }
            let b = open.get_or_insert(Block {
                start: i,
                end: i,
                has_continuation: false,
            });
            if cont && b.end > b.start {
                b.has_continuation = true;
            }
            b.end = i + 1;
            doc.lines[i].block = doc.blocks.len() as u32;
        }
        if let Some(b) = open {
            doc.blocks.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks_of(out: &str) -> Vec<(usize, usize, bool)> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, out, "", 0);
        run(&mut doc);
        for (bi, b) in doc.blocks.iter().enumerate() {
            for l in &doc.lines[b.start..b.end] {
                assert_eq!(l.block as usize, bi);
            }
        }
        doc.blocks
            .iter()
            .map(|b| (b.start, b.end, b.has_continuation))
            .collect()
    }

    #[test]
    fn splits_diagnostics_without_blank_lines() {
        let out = "error: a\n  --> x.rs:1\nerror: b\n  --> y.rs:2\n";
        assert_eq!(blocks_of(out), vec![(0, 2, true), (2, 4, true)]);
    }

    #[test]
    fn unindented_lines_form_one_block() {
        let out = "a\nb\nc\n\nd\n";
        assert_eq!(
            blocks_of(out),
            vec![(0, 3, false), (3, 4, false), (4, 5, false)]
        );
    }

    #[test]
    fn numbered_source_lines_continue() {
        assert!(is_continuation("12 |     let x = 1;"));
        assert!(is_continuation("   |"));
        assert!(!is_continuation("12 apples"));
        assert!(!is_continuation("error: x"));
    }
}
