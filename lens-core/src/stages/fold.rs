//! Fold: units that repeat but for their numbers are shown once.
//!
//! `make -k` over sixteen files prints, for each, the compiler's command line,
//! its errors and `make: *** [Makefile:9: build/codec_07.o] Error 1`. Once the
//! other stages have kept the first file's errors and grouped the rest, the view
//! still holds a command line, a marker and a `make: ***` line per file. Three or
//! more such units in a row, the same but for numbers that count up by one from
//! unit to unit, become one region: its marker says `folded`, and its digest is
//! each shown line of the unit once, every number that changes written as the
//! range it runs through:
//!
//! ```text
//! [lens: elided stdout 22-336 (315 lines: grouped 285, folded 30) handle=… digest=2]
//! cc -O1 -Wall -std=c11 -Iinclude -c src/codec_{N}.c -o build/codec_{N}.o  (N = 01..15)
//! make: *** [Makefile:9: build/codec_{01..15}.o] Error 1
//! ```
//!
//! A line with one changing number writes it as a range, as a shell would
//! expand it; a line with several names them `{N}` and the range once, and is
//! folded only when they all run through the same values. Nothing else is
//! folded: a number that changes in any other way (a
//! time, a count, a hash with letters in it) leaves the lines as they were, so
//! every folded line can be read back exactly, unit by unit. The regions between
//! a unit's shown lines keep their reasons in the marker, and a unit whose region
//! prints a digest is not folded. Runs once the budget has chosen the lines,
//! before the level narrows them.

use crate::digest::{Detail, Digest};
use crate::doc::{Doc, Fate, Reason, Stream};

/// Fewest units a fold stands for: two alike could be chance.
const MIN_UNITS: usize = 3;

/// Most items (shown lines and elided regions) in a unit.
const MAX_PERIOD: usize = 8;

/// Bytes of a marker line, the cost of an elided region in the view and of the
/// marker a fold adds.
const MARKER_BYTES: usize = 72;

/// One item of a stream's view: a shown line, or a run of elided lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    Shown(usize),
    Elided(usize, usize),
}

/// A shown line split at its digit runs: the text between them, and the runs.
#[derive(Debug, PartialEq, Eq)]
struct Split<'t> {
    between: Vec<&'t str>,
    numbers: Vec<&'t str>,
}

fn split(text: &str) -> Split<'_> {
    let (mut between, mut numbers) = (Vec::new(), Vec::new());
    let b = text.as_bytes();
    let (mut i, mut from) = (0, 0);
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            between.push(&text[from..start]);
            numbers.push(&text[start..i]);
            from = i;
        } else {
            i += 1;
        }
    }
    between.push(&text[from..]);
    Split { between, numbers }
}

/// Folds every run of repeated units in both streams.
pub fn run(doc: &mut Doc) {
    let mut added = false;
    for stream in [Stream::Stdout, Stream::Stderr] {
        let range = doc.range(stream);
        // A sampled stream's held lines are not next to each other everywhere.
        if doc.total(stream) as usize != range.len() {
            continue;
        }
        let items = items(doc, range.clone());
        let mut s = 0;
        while s < items.len() {
            match best_fold(doc, &items, s) {
                Some((p, k, lines)) => {
                    apply(doc, &items[s..s + p * k], stream, lines);
                    added = true;
                    s += p * k;
                }
                None => s += 1,
            }
        }
    }
    if added {
        doc.digests.sort_by_key(|d| d.start);
    }
}

fn items(doc: &Doc, range: std::ops::Range<usize>) -> Vec<Item> {
    let mut items = Vec::new();
    let mut i = range.start;
    while i < range.end {
        if doc.lines[i].shown() {
            items.push(Item::Shown(i));
            i += 1;
        } else {
            let start = i;
            while i < range.end && !doc.lines[i].shown() {
                i += 1;
            }
            items.push(Item::Elided(start, i));
        }
    }
    items
}

/// The best fold starting at item `s`: its period, its number of units and the
/// digest lines, when folding saves bytes.
fn best_fold(doc: &Doc, items: &[Item], s: usize) -> Option<(usize, usize, Vec<String>)> {
    // A fold starts at a shown line. Its region joins an elided region beside
    // it into one marker, so a neighbour whose digest prints lines would put two
    // regions' digests under one marker: no fold there.
    if !matches!(items[s], Item::Shown(_)) || (s > 0 && !quiet(doc, items[s - 1])) {
        return None;
    }
    let mut best: Option<(usize, usize, Vec<String>, usize)> = None;
    for p in 1..=MAX_PERIOD {
        if s + p * MIN_UNITS > items.len() {
            break;
        }
        let mut k = 1;
        while s + (k + 1) * p <= items.len()
            && alike(doc, &items[s..s + p], &items[s + k * p..s + (k + 1) * p])
        {
            k += 1;
        }
        // Its numbers must count up unit by unit; fewer units may.
        while k >= MIN_UNITS {
            let end = s + k * p;
            let after_ok = end == items.len() || quiet(doc, items[end]);
            if after_ok {
                if let Some(lines) = folded(doc, &items[s..end], p, k) {
                    let before = bytes(doc, &items[s..end]);
                    let after = MARKER_BYTES + lines.iter().map(|l| l.len() + 1).sum::<usize>();
                    let saved = before.saturating_sub(after);
                    if saved > MARKER_BYTES && best.as_ref().is_none_or(|b| saved > b.3) {
                        best = Some((p, k, lines, saved));
                    }
                    break;
                }
            }
            k -= 1;
        }
    }
    best.map(|(p, k, lines, _)| (p, k, lines))
}

/// Two units alike: the same items in the same order, shown lines the same but
/// for their digit runs, elided regions without a digest of their own.
fn alike(doc: &Doc, a: &[Item], b: &[Item]) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Item::Shown(i), Item::Shown(j)) => {
            split(&doc.lines[*i].text).between == split(&doc.lines[*j].text).between
        }
        (Item::Elided(s1, e1), Item::Elided(s2, e2)) => {
            !has_digest(doc, *s1, *e1) && !has_digest(doc, *s2, *e2)
        }
        _ => false,
    })
}

/// True for a shown line, or an elided region that prints no digest.
fn quiet(doc: &Doc, item: Item) -> bool {
    match item {
        Item::Shown(_) => true,
        Item::Elided(s, e) => !has_digest(doc, s, e),
    }
}

/// True when a digest prints lines after the region's marker. A region's
/// digest can print nothing: later reports of a cause whose places an earlier
/// digest already lists.
fn has_digest(doc: &Doc, start: usize, end: usize) -> bool {
    doc.digests.iter().any(|d| {
        d.start >= start
            && d.start < end
            && !d
                .lines_within(doc, Detail::Full, d.room.unwrap_or(usize::MAX))
                .0
                .is_empty()
    })
}

/// The digest lines of `k` units of `p` items: each shown line of the unit once,
/// a number that changes written as its range; `None` when a number changes in
/// any other way than up by one per unit.
fn folded(doc: &Doc, run: &[Item], p: usize, k: usize) -> Option<Vec<String>> {
    let mut lines = Vec::new();
    let mut any_range = false;
    for (j, item) in run[..p].iter().enumerate() {
        let Item::Shown(_) = item else { continue };
        let splits: Vec<Split> = (0..k)
            .map(|u| match run[u * p + j] {
                Item::Shown(i) => split(&doc.lines[i].text),
                Item::Elided(..) => unreachable!("units are alike"),
            })
            .collect();
        let first = &splits[0];
        let values = |n: usize| -> Vec<&str> { splits.iter().map(|s| s.numbers[n]).collect() };
        // The numbers that change: each must count up, and where a line has
        // more than one, all must run through the same values (`codec_07.c`
        // built to `codec_07.o`), named once as N so the line cannot be read
        // as a product of two ranges.
        let changing: Vec<usize> = (0..first.numbers.len())
            .filter(|&n| values(n).iter().any(|v| *v != first.numbers[n]))
            .collect();
        let Some(&lead) = changing.first() else {
            lines.push(doc_text(first));
            continue;
        };
        let run_of = values(lead);
        if !counts_up(&run_of) || changing.iter().any(|&n| values(n) != run_of) {
            return None;
        }
        any_range = true;
        let range = format!("{}..{}", run_of[0], run_of[k - 1]);
        let one = changing.len() == 1;
        let mut out = String::new();
        for (n, between) in first.between.iter().enumerate() {
            out.push_str(between);
            let Some(&v) = first.numbers.get(n) else {
                break;
            };
            match (changing.contains(&n), one) {
                (false, _) => out.push_str(v),
                (true, true) => out.push_str(&format!("{{{range}}}")),
                (true, false) => out.push_str("{N}"),
            }
        }
        if !one {
            out.push_str(&format!("  (N = {range})"));
        }
        lines.push(out);
    }
    // Units the same to the digit are a repeat, which dedupe says better.
    any_range.then_some(lines)
}

/// True when `values` count up by one, each written as wide as the first (zero
/// padded) or without leading zeros.
fn counts_up(values: &[&str]) -> bool {
    let Some(first) = values.first().and_then(|v| v.parse::<u64>().ok()) else {
        return false;
    };
    let width = values[0].len();
    let padded = values[0].starts_with('0') && width > 1;
    values.iter().enumerate().all(|(u, v)| {
        let expect = first + u as u64;
        let text = if padded {
            format!("{expect:0width$}")
        } else {
            expect.to_string()
        };
        *v == text
    })
}

/// Bytes the items take in the view now: shown lines, and a marker for each
/// elided region.
fn doc_text(s: &Split) -> String {
    let mut out = String::new();
    for (n, between) in s.between.iter().enumerate() {
        out.push_str(between);
        if let Some(v) = s.numbers.get(n) {
            out.push_str(v);
        }
    }
    out
}

fn bytes(doc: &Doc, run: &[Item]) -> usize {
    run.iter()
        .map(|it| match *it {
            Item::Shown(i) => doc.lines[i].text.len() + 1,
            Item::Elided(..) => MARKER_BYTES,
        })
        .sum()
}

fn apply(doc: &mut Doc, run: &[Item], stream: Stream, lines: Vec<String>) {
    let start = match run[0] {
        Item::Shown(i) | Item::Elided(i, _) => i,
    };
    let end = match run[run.len() - 1] {
        Item::Shown(i) => i + 1,
        Item::Elided(_, e) => e,
    };
    for it in run {
        if let Item::Shown(i) = *it {
            doc.lines[i].fate = Fate::Drop(Reason::Folded);
        }
    }
    doc.digests
        .push(Digest::of_lines(stream, start, end, lines));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Class;

    /// `make -k` over `n` files as the view has it once the first file's errors
    /// are shown: per file a command line, 3 elided error lines, a make line.
    fn make_k(n: usize) -> String {
        let mut s = String::new();
        for f in 0..n {
            s.push_str(&format!(
                "cc -c src/codec_{f:02}.c -o build/codec_{f:02}.o\n"
            ));
            for e in 0..3 {
                s.push_str(&format!(
                    "src/codec_{f:02}.c:{}:5: error: unknown type name 'size_t'\n",
                    4 + e
                ));
            }
            s.push_str(&format!(
                "make: *** [Makefile:9: build/codec_{f:02}.o] Error 1\n"
            ));
        }
        s
    }

    fn doc_with_errors_elided(out: &str) -> Doc<'_> {
        static ARGV: Vec<String> = Vec::new();
        let mut doc = Doc::new(&ARGV, out, "", 2);
        for l in &mut doc.lines {
            if l.text.contains(": error:") {
                l.fate = Fate::Drop(Reason::Grouped);
                l.class = Class::Error;
            }
        }
        doc
    }

    fn fates(doc: &Doc) -> Vec<bool> {
        doc.lines.iter().map(|l| l.shown()).collect()
    }

    #[test]
    fn units_that_count_up_fold_into_one_region_with_ranges() {
        let out = make_k(16);
        let mut doc = doc_with_errors_elided(&out);
        run(&mut doc);
        // Every file's unit is folded: nothing before the first unit to keep.
        assert!(fates(&doc).iter().all(|s| !s), "{:?}", fates(&doc));
        assert_eq!(doc.digests.len(), 1);
        assert_eq!(
            doc.digests[0].lines(&doc, crate::digest::Detail::Full),
            vec![
                "cc -c src/codec_{N}.c -o build/codec_{N}.o  (N = 00..15)".to_string(),
                "make: *** [Makefile:9: build/codec_{00..15}.o] Error 1".to_string(),
            ]
        );
        assert_eq!((doc.digests[0].start, doc.digests[0].end), (0, 80));
    }

    #[test]
    fn a_number_that_does_not_count_up_leaves_the_lines_alone() {
        // A time per unit: no range reads it back, so nothing is folded.
        let out: String = (0..6)
            .map(|i| format!("step {i} took {}ms\n", [12, 7, 30, 9, 11, 4][i]))
            .collect();
        let mut doc = doc_with_errors_elided(&out);
        run(&mut doc);
        assert!(fates(&doc).iter().all(|s| *s));
        assert!(doc.digests.is_empty());
    }

    #[test]
    fn two_units_or_identical_units_are_not_folded() {
        let two = make_k(2);
        let mut doc = doc_with_errors_elided(&two);
        run(&mut doc);
        assert!(doc.digests.is_empty());
        let same = "ok: cached step 1\n".repeat(8);
        let mut doc = doc_with_errors_elided(&same);
        run(&mut doc);
        assert!(doc.digests.is_empty());
    }

    #[test]
    fn a_unit_that_differs_in_words_ends_the_fold() {
        let mut out = make_k(5);
        out.push_str("cc -c src/other.c -o build/other.o\n");
        let mut doc = doc_with_errors_elided(&out);
        run(&mut doc);
        let shown = fates(&doc);
        assert!(shown[..25].iter().all(|s| !s));
        assert!(shown[25], "the different line stays");
    }

    #[test]
    fn numbers_that_change_apart_are_not_folded() {
        // A file and a line that both count up, but not together: as ranges
        // they would read as every file at every line.
        let out: String = (0..6)
            .map(|i| format!("src/f{i}.rs:{}: match\n", 10 + 2 * i))
            .collect();
        let mut doc = doc_with_errors_elided(&out);
        run(&mut doc);
        assert!(doc.digests.is_empty());
        let out: String = (0..6)
            .map(|i| format!("src/f{i}.rs:{}: match\n", 10 + i))
            .collect();
        let mut doc = doc_with_errors_elided(&out);
        run(&mut doc);
        assert!(doc.digests.is_empty(), "two ranges of different values");
    }

    #[test]
    fn counts_up_reads_padding_and_plain_numbers() {
        assert!(counts_up(&["01", "02", "03"]));
        assert!(counts_up(&["9", "10", "11"]));
        assert!(counts_up(&["099", "100", "101"]));
        assert!(!counts_up(&["09", "10", "12"]));
        assert!(!counts_up(&["1", "02", "3"]));
    }
}
