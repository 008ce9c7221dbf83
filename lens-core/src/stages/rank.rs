//! Rank and budget: when what is left is larger than the budget, keep the lines that
//! say the most per byte and drop the rest.
//!
//! A line's score comes from its class, from how rare its shape is in this output
//! (digits and ids masked, so `record 17 ok` and `record 18 ok` share one shape and a
//! one-off line stands out), and from its position: the first lines name what ran, the
//! last ones usually say how it ended.

use std::collections::HashMap;

use crate::doc::{Class, Doc, Fate, Reason, Stream};
use crate::handle::{chunk_hash, PrehashedState};
use crate::par;

/// Bytes one marker line costs, roughly; reserved per gap the selection opens.
const MARKER_COST: usize = 72;

/// Scores every line, then fits the kept ones under `budget` bytes.
pub fn run(doc: &mut Doc, budget: usize) {
    let (shown, forced) = cap_forced(doc, budget.saturating_mul(4));
    if shown <= budget {
        return;
    }
    // Scores only order what does not fit: most outputs never need them.
    score(doc);
    fit(doc, budget.saturating_sub(forced));
}

const LETTER: u8 = 1;
const DIGIT: u8 = 2;
const JOINER: u8 = 4;

/// What each byte can be in a word: a word starts at a letter or digit and goes on
/// over letters, digits and `_`.
static KIND: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = if c.is_ascii_alphabetic() {
            LETTER
        } else if c.is_ascii_digit() {
            DIGIT
        } else if c == b'_' {
            JOINER
        } else {
            0
        };
        i += 1;
    }
    t
};

/// The first ASCII digit in `b` at or after `from`, eight bytes at a time: with
/// each byte's `'0'` taken away, a digit is a byte below 10, and the classic
/// has-less-than test finds the lowest such byte exactly.
fn next_digit(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let x = w ^ (ONES * u64::from(b'0'));
        let below_ten = x.wrapping_sub(ONES * 10) & !x & HIGH;
        if below_ten != 0 {
            return Some(i + below_ten.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    b[i..].iter().position(u8::is_ascii_digit).map(|d| i + d)
}

/// A hash of the line's shape: runs of letters and digits that contain a digit are
/// masked, so numbered repeats of one template share a shape. Shapes are compared
/// within one run only, so the hash need not be stable across versions.
///
/// The line, with each word that holds a digit replaced by a mask, is hashed as
/// the stretches between masked words (eight bytes per multiply) and one token per
/// mask. A line is scanned for digits only; the words around them are found by
/// looking left and right, so lines without numbers hash at full speed.
pub fn shape(text: &str) -> u64 {
    const MASK: u64 = 0x6d61_736b;
    let b = text.trim().as_bytes();
    let in_word = |c: u8| KIND[usize::from(c)] != 0;
    let mut h = 0u64;
    let mut from = 0;
    let mut i = 0;
    while let Some(digit) = next_digit(b, i) {
        // The word holding the digit: back over word bytes, then forward past the
        // joiners it cannot start with; ahead to its end.
        let mut start = digit;
        while start > from && in_word(b[start - 1]) {
            start -= 1;
        }
        while KIND[usize::from(b[start])] == JOINER {
            start += 1;
        }
        let mut end = digit + 1;
        while end < b.len() && in_word(b[end]) {
            end += 1;
        }
        h = chunk_hash(h, &b[from..start]);
        h = (h ^ MASK).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        from = end;
        i = end;
    }
    chunk_hash(h, &b[from..])
}

/// The score of a plain line with nothing for it: one of more than a hundred
/// lines of its shape, not near either end, no word of trouble. Such lines are
/// what the marker over them says they are like (`all like "step … applied …
/// ok"`); the budget is not filled with them, so a view is no larger than what
/// it must show. A line scoring this or less is never chosen for room alone.
const COMMON: i32 = 100 - 50;

/// Scores every line (see the module doc); `budget` calls it when it must trim.
pub fn score(doc: &mut Doc) {
    let mut counts: HashMap<u64, u32, PrehashedState> =
        HashMap::with_capacity_and_hasher(doc.lines.len() / 4 + 1, PrehashedState::default());
    // (shape, names trouble), the per-line half of the work, on every core. Shapes
    // are counted over every line; only lines still to be ranked need the words.
    let facts: Vec<(u64, bool)> = par::map(&doc.lines, |l| {
        let ranked = l.fate == Fate::Keep && l.class == Class::Plain;
        (shape(&l.text), ranked && mentions_trouble(&l.text))
    });
    let shapes: Vec<u64> = facts.iter().map(|f| f.0).collect();
    for s in &shapes {
        *counts.entry(*s).or_default() += 1;
    }
    for stream in [Stream::Stdout, Stream::Stderr] {
        let range = doc.range(stream);
        let (start, end) = (range.start, range.end);
        // Position of each line counted from the stream's last non-blank line.
        let mut from_end = usize::MAX;
        let mut tail_rank = vec![usize::MAX; end - start];
        let mut seen = 0usize;
        for i in (start..end).rev() {
            if doc.lines[i].class != Class::Blank {
                from_end = seen;
                seen += 1;
            }
            tail_rank[i - start] = from_end;
        }
        for i in start..end {
            let l = &doc.lines[i];
            let mut s: i32 = match l.class {
                Class::Error => 1000,
                Class::Summary => 500,
                Class::Warning => 300,
                Class::Plain => 100,
                Class::Source => 60,
                Class::Blank => 0,
                Class::Progress => -100,
            };
            s += match counts.get(&shapes[i]).copied().unwrap_or(1) {
                1 => 200,
                2..=3 => 100,
                4..=10 => 30,
                11..=100 => 0,
                _ => -50,
            };
            if i - start < 3 {
                s += 150;
            }
            if tail_rank[i - start] < 5 {
                s += 350 - 40 * tail_rank[i - start] as i32;
            }
            if facts[i].1 {
                s += 150;
            }
            doc.lines[i].score = s;
        }
    }
}

/// True when a line names trouble (`error`, `FAILED`, `Warning`, `not found`, …),
/// in any case. One pass over the bytes, no allocation: it runs on every plain line.
fn mentions_trouble(text: &str) -> bool {
    let b = text.as_bytes();
    let at =
        |i: usize, w: &[u8]| b.len() - i >= w.len() && b[i..i + w.len()].eq_ignore_ascii_case(w);
    (0..b.len()).any(|i| match b[i] | 0x20 {
        b'e' => at(i, b"error") || at(i, b"exception"),
        b'f' => at(i, b"fail"),
        b'w' => at(i, b"warn"),
        b'p' => at(i, b"panic"),
        b'd' => at(i, b"denied"),
        b'n' => at(i, b"not found"),
        b'm' => at(i, b"missing"),
        _ => false,
    })
}

/// Forced lines can outgrow any budget (a cascade of errors); past `ceiling` bytes,
/// the later ones go back to being ranked like any other line. Returns the bytes
/// shown and the bytes still forced, from the same pass.
fn cap_forced(doc: &mut Doc, ceiling: usize) -> (usize, usize) {
    let (mut shown, mut forced, mut spent) = (0, 0, 0usize);
    for l in doc.lines.iter_mut() {
        let cost = l.text.len() + 1;
        if l.fate == Fate::Force {
            spent += cost;
            if spent > ceiling {
                l.fate = Fate::Keep;
            } else {
                forced += cost;
            }
        }
        if l.shown() {
            shown += cost;
        }
    }
    (shown, forced)
}

/// Keeps the best-scored lines that fit in `room` bytes and drops the other
/// unforced ones.
fn fit(doc: &mut Doc, mut room: usize) {
    // Highest score first, then earliest line: one integer per line, so the sort
    // compares keys rather than reaching into the lines. Blank lines are never
    // chosen on their own.
    let mut order: Vec<u64> = doc
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.fate == Fate::Keep && l.class != Class::Blank && l.score > COMMON)
        .map(|(i, l)| {
            let descending = !((l.score as u32) ^ 0x8000_0000);
            (u64::from(descending) << 32) | i as u64
        })
        .collect();
    order.sort_unstable();
    let mut chosen = vec![false; doc.lines.len()];
    for key in order {
        let i = (key & 0xffff_ffff) as usize;
        let cost = doc.lines[i].text.len() + 1 + MARKER_COST;
        if cost <= room {
            room -= cost;
            chosen[i] = true;
        }
    }
    for (i, l) in doc.lines.iter_mut().enumerate() {
        if l.fate == Fate::Keep && !chosen[i] {
            l.fate = Fate::Drop(Reason::Budget);
        }
    }
    // A blank line kept between two dropped ones only splits one marker into two.
    for i in 0..doc.lines.len() {
        if doc.lines[i].class != Class::Blank || doc.lines[i].fate != Fate::Keep {
            continue;
        }
        let before = i == 0 || !doc.lines[i - 1].shown();
        let after = i + 1 >= doc.lines.len() || !doc.lines[i + 1].shown();
        if before && after {
            doc.lines[i].fate = Fate::Drop(Reason::Budget);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify;

    #[test]
    fn trouble_words_in_any_case() {
        for yes in [
            "Error: x",
            "3 FAILED",
            "a Warning",
            "kernel panic",
            "NullPointerException",
            "permission denied",
            "file Not Found",
            "missing ;",
        ] {
            assert!(mentions_trouble(yes), "{yes}");
        }
        for no in ["all good", "er ror", "not fou nd", "", "miss"] {
            assert!(!mentions_trouble(no), "{no}");
        }
    }

    #[test]
    fn next_digit_matches_a_search_at_every_offset() {
        let line = b"ab/c 9 xyz:0 q\x7f\xb9\xff 12 k\x39\x2f\x3a end 5";
        for from in 0..=line.len() {
            let want = line[from..]
                .iter()
                .position(u8::is_ascii_digit)
                .map(|d| from + d);
            assert_eq!(next_digit(line, from), want, "from {from}");
        }
        // Bytes just outside the digits, in every lane.
        for lane in 0..8 {
            let mut w = *b"////////";
            w[lane] = b':';
            assert_eq!(next_digit(&w, 0), None);
            w[lane] = b'0';
            assert_eq!(next_digit(&w, 0), Some(lane));
            w[lane] = b'9';
            assert_eq!(next_digit(&w, 0), Some(lane));
        }
    }

    #[test]
    fn shape_masks_numbered_tokens() {
        assert_eq!(shape("record 17 ok"), shape("record 18 ok"));
        assert_eq!(shape("id a1b2c3 done"), shape("id ffff00 done"));
        assert_ne!(shape("record 17 ok"), shape("record 17 failed"));
        assert_eq!(shape("  a_1 = x  "), shape("b_2 = x"));
        assert_ne!(shape("a_b = x"), shape("a_1 = x"));
        assert_ne!(shape("a-b"), shape("a_b"));
        assert_ne!(shape("x: 1"), shape("x:"));
        assert_eq!(shape("__7 x"), shape("__8 x"));
        assert_ne!(shape("__7 x"), shape("_7 x"));
        assert_eq!(shape("v1.2.3-rc1"), shape("v2.0.0-rc9"));
        assert_ne!(shape("a 1 b"), shape("a 1 1 b"));
        assert_eq!(shape("é9 ünïcode 3"), shape("é1 ünïcode 4"));
    }

    #[test]
    fn keeps_the_rare_line_and_the_tail_under_budget() {
        let mut out = String::new();
        for i in 0..2000 {
            out.push_str(&format!(
                "processing record {i} checksum {:08x} ok\n",
                i * 7919
            ));
            if i == 1000 {
                out.push_str("the deploy key is stored under vault path kv/app\n");
            }
        }
        out.push_str("done: 2000 records\n");
        let argv = vec![];
        let mut doc = Doc::new(&argv, &out, "", 0);
        classify::run(&mut doc);
        run(&mut doc, 1024);
        let kept: Vec<&str> = doc
            .lines
            .iter()
            .filter(|l| l.shown())
            .map(|l| l.raw)
            .collect();
        assert!(kept.contains(&"the deploy key is stored under vault path kv/app"));
        assert!(kept.contains(&"done: 2000 records"));
        let bytes: usize = kept.iter().map(|l| l.len() + 1).sum();
        assert!(bytes <= 1024, "{bytes}");
    }

    #[test]
    fn fit_takes_the_highest_scores_first_then_the_earliest() {
        // Lines a..e scored 60, 207, 97, 207, 1000, fitted into room for `n` lines.
        let fitted = |scores: [i32; 5], n: usize| -> Vec<String> {
            let argv = vec![];
            let mut doc = Doc::new(&argv, "a\nb\nc\nd\ne\n", "", 0);
            for (l, s) in doc.lines.iter_mut().zip(scores) {
                l.score = s;
            }
            fit(&mut doc, n * (2 + MARKER_COST));
            doc.lines
                .iter()
                .filter(|l| l.shown())
                .map(|l| l.raw.to_string())
                .collect()
        };
        let scores = [60, 207, 97, 207, 1000];
        // e (1000), then b and d (207, b first).
        assert_eq!(fitted(scores, 3), ["b", "d", "e"]);
        // The lower scores come last, 97 before 60.
        assert_eq!(fitted(scores, 4), ["b", "c", "d", "e"]);
        // A line with nothing for it (one of many of its shape, away from the
        // ends) is not chosen to fill room: its marker says what it is like.
        assert_eq!(
            fitted([COMMON, 207, COMMON - 10, 207, 1000], 5),
            ["b", "d", "e"]
        );
    }

    #[test]
    fn leaves_small_outputs_alone() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "a\nb\n", "", 0);
        run(&mut doc, 1024);
        assert!(doc.lines.iter().all(|l| l.fate == Fate::Keep));
    }

    #[test]
    fn caps_forced_lines() {
        let argv = vec![];
        let out = "error: x\n".repeat(100);
        let mut doc = Doc::new(&argv, &out, "", 1);
        for l in doc.lines.iter_mut() {
            l.fate = Fate::Force;
        }
        run(&mut doc, 40);
        let shown = doc.lines.iter().filter(|l| l.shown()).count();
        assert!((16..100).contains(&shown), "{shown}");
    }
}
