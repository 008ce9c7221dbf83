//! Render: turns an annotated `Doc` into the bytes of each stream's view.
//!
//! Render decides nothing about what to keep. It prints shown lines as the view text,
//! and every run of dropped lines as exactly one marker.

use std::collections::HashMap;

use crate::digest::{Body, Detail, Digest};
use crate::doc::{Class, Doc, Fate, Line, Reason, Severity, Stream};
use crate::marker::{tally_weighted, Marker, PREFIX};
use crate::stages::classify;
use crate::stages::rank::shape;

/// The view of one stream; `None` when nothing in it changed, so the caller can emit
/// the child's bytes as they were. Digests are printed after their region's marker
/// at `detail`, or not at all when `detail` is `None` (level 0).
pub fn stream(doc: &Doc, stream: Stream, handle: &str, detail: Option<Detail>) -> Option<String> {
    let range = doc.range(stream);
    let base = range.start;
    let lines = &doc.lines[range.clone()];
    let total = doc.total(stream);
    let mut digests = doc.digests.iter().filter(|d| d.stream == stream).peekable();
    let heads: HashMap<usize, Severity> = doc
        .findings
        .iter()
        .filter(|f| range.contains(&f.head))
        .map(|f| (f.head, f.severity))
        .collect();
    let untouched = total as usize == lines.len()
        && lines
            .iter()
            .all(|l| l.shown() && l.text.len() == l.raw.len());
    if untouched {
        return None;
    }
    // Raw lines before held line `i` that the doc does not hold (a sampled
    // stream's gap): announced with the run they fall in.
    let gap_before = |i: usize| -> u32 {
        let prev = if i == 0 { 0 } else { lines[i - 1].no };
        let next = lines.get(i).map_or(total + 1, |l| l.no);
        next.saturating_sub(prev + 1)
    };
    let mut out = String::with_capacity(1024);
    // Regions of the digests printed so far that left names out (`unlisted`).
    let mut cut: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while i <= lines.len() {
        if i < lines.len() && lines[i].shown() && gap_before(i) == 0 {
            out.push_str(&lines[i].text);
            out.push('\n');
            i += 1;
            continue;
        }
        // A run: the gap before line `i`, then dropped lines and the gaps between
        // them, up to the next shown line (or the stream's end).
        let start = i;
        let first = if i == 0 { 1 } else { lines[i - 1].no + 1 };
        let mut weighted: Vec<(Reason, u32)> = Vec::new();
        let gap = gap_before(i);
        let mut gaps = gap > 0;
        if gap > 0 {
            weighted.push((Reason::Bulk, gap));
        }
        while i < lines.len() && !lines[i].shown() {
            if let Fate::Drop(r) = lines[i].fate {
                weighted.push((r, 1));
            }
            i += 1;
            let gap = gap_before(i);
            if gap > 0 {
                gaps = true;
                weighted.push((Reason::Bulk, gap));
            }
        }
        let last = if i < lines.len() {
            lines[i].no - 1
        } else {
            total
        };
        if weighted.is_empty() {
            // The stream's end with nothing elided after its last line.
            break;
        }
        let mut digest = Vec::new();
        let mut unlisted = 0;
        // The digests printed after this marker, for `digested`.
        let mut printed: Vec<&Digest> = Vec::new();
        while let Some(d) = digests.peek() {
            if d.start >= base + i {
                break;
            }
            if d.start >= base + start {
                match (detail, &d.body) {
                    (Some(detail), _) => {
                        let (lines, left_out) =
                            d.lines_within(doc, detail, d.room.unwrap_or(usize::MAX));
                        digest.extend(lines);
                        unlisted += left_out;
                        printed.push(d);
                        if left_out > 0 {
                            cut.push(d.start..d.end);
                        }
                    }
                    // A redraw's last drawing stands for its line at every level.
                    (None, Body::Redrawn(t)) => digest.push(t.clone()),
                    (None, _) => {}
                }
            }
            digests.next();
        }
        // A region left out by the budget or the level says what it held; a
        // gap's lines were not read, so a region with one says nothing.
        let described = !gaps && described(&lines[start..i]);
        let run = &lines[start..i];
        let digested = (!described && !gaps && unlisted == 0 && detail.is_some())
            .then(|| {
                digested(
                    doc,
                    run,
                    base + start,
                    &heads,
                    &printed,
                    &cut,
                    &out,
                    &digest,
                )
            })
            .flatten();
        let m = Marker {
            stream,
            first,
            last,
            reasons: tally_weighted(weighted.into_iter()),
            handle: handle.to_string(),
            digest: digest.len(),
            unlisted,
            like: described.then(|| like(&lines[start..i])).flatten(),
            trouble: if described {
                Some(trouble(run, base + start, &heads))
            } else {
                digested
            },
            digested: digested.is_some(),
        };
        out.push_str(&m.render());
        out.push('\n');
        for l in digest {
            out.push_str(&l);
            out.push('\n');
        }
        // The run ended at a shown line (or at the stream's end).
        match lines.get(i) {
            Some(l) => {
                out.push_str(&l.text);
                out.push('\n');
                i += 1;
            }
            None => break,
        }
    }
    Some(out)
}

/// True when a run of dropped lines gets a description: ten lines or more (a
/// gap large enough to doubt), at least half of them left out by the budget or
/// the level (the reasons that say nothing of what the lines were; `progress`
/// or `repeat` say it).
pub fn described(run: &[Line]) -> bool {
    let unexplained = run
        .iter()
        .filter(|l| matches!(l.fate, Fate::Drop(Reason::Budget | Reason::Level)))
        .count();
    run.len() >= 10 && unexplained * 2 >= run.len()
}

/// Bytes the shape in a description takes at most.
const LIKE_MAX: usize = 40;

/// The shape most of a run's non-blank lines share, as its first such line with
/// each word that varies (one holding a digit, or an id of hex digits only)
/// shown as `…`; `None` when no shape covers half, or when the shape keeps no
/// word (`…`, `… - …`): it would say nothing.
fn like(run: &[Line]) -> Option<crate::marker::Like> {
    let mut counts: HashMap<u64, (usize, usize)> = HashMap::new();
    let mut shapes = Vec::with_capacity(run.len());
    let mut nonblank = 0;
    for (k, l) in run.iter().enumerate() {
        if l.class == Class::Blank {
            shapes.push(None);
            continue;
        }
        nonblank += 1;
        let s = shape(&l.text);
        shapes.push(Some(s));
        counts.entry(s).or_insert((0, k)).0 += 1;
    }
    let (top, &(count, at)) = counts
        .iter()
        .max_by_key(|&(_, &(c, at))| (c, std::cmp::Reverse(at)))?;
    if count < 2 || count * 2 < nonblank {
        return None;
    }
    // The shape's hash masks only words holding a digit: an id drawn from hex
    // digits may hold none (`ACC-ABCDEFAB` among `ACC-5A00D131`, one line in a
    // few thousand). Such a line still has the shape the marker shows, so the
    // lines outside it are checked word by word, up to the first that differs.
    let all = count == nonblank || {
        let key = mask_words(&run[at].text);
        run.iter()
            .zip(&shapes)
            .all(|(l, s)| s.is_none_or(|s| s == *top) || mask_words(&l.text) == key)
    };
    Some(masked(&run[at].text))
        .filter(|m| m.chars().any(char::is_alphanumeric))
        .map(|shape| crate::marker::Like { all, shape })
}

/// A line with every word that varies as `…` (see `mask_words`), quotes as
/// `'`, cut to `LIKE_MAX` bytes.
pub fn masked(text: &str) -> String {
    let mut out = mask_words(text);
    if out.len() > LIKE_MAX {
        let mut cut = LIKE_MAX;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// A line, trimmed, with every word that holds a digit or is an id of six or
/// more hex digits in one case (`ABCDEFAB`, `deadbeef`) as `…`, quotes as `'`,
/// and masked words joined by `.`, `-`, `:`, `/` or `,` as one `…`.
fn mask_words(text: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let varies = |w: &str| {
        let hex = |digits: &[u8]| w.bytes().all(|b| digits.contains(&b));
        w.bytes().any(|b| b.is_ascii_digit())
            || (w.len() >= 6 && (hex(b"0123456789abcdef") || hex(b"0123456789ABCDEF")))
    };
    let flush = |word: &mut String, out: &mut String| {
        if varies(word) {
            out.push('…');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.trim().chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out);
        out.push(if c == '"' { '\'' } else { c });
    }
    flush(&mut word, &mut out);
    // `v1.0.0` is three masked words; one `…` says it.
    for joint in ["….…", "…-…", "…:…", "…/…", "…,…"] {
        while out.contains(joint) {
            out = out.replace(joint, "…");
        }
    }
    out
}

/// Errors and warnings among a run's lines (`at` is the run's first index in the
/// doc): a line counts when its class says so, when a family's finder reported
/// it (`F401 …`, `undefined: x`), or when the lexicon does (a progress line or a
/// summary can still hold an error), so a region is never said to hold none
/// while it holds one.
fn trouble(run: &[Line], at: usize, heads: &HashMap<usize, Severity>) -> (u32, u32) {
    let (mut errors, mut warnings) = (0, 0);
    for (k, l) in run.iter().enumerate() {
        match trouble_class(l, heads.get(&(at + k))) {
            Some(Class::Error) => errors += 1,
            Some(Class::Warning) => warnings += 1,
            _ => {}
        }
    }
    (errors, warnings)
}

/// `Error` or `Warning` when a line is one, by its class, a finder's report
/// (`head`: the severity of the finding whose message line it is) or the lexicon.
fn trouble_class(l: &Line, head: Option<&Severity>) -> Option<Class> {
    match (l.class, head) {
        (Class::Error | Class::Warning, _) => Some(l.class),
        (_, Some(Severity::Error)) => Some(Class::Error),
        (_, Some(Severity::Warning)) => Some(Class::Warning),
        // A plain or source line's class is already the lexicon's answer.
        (Class::Summary | Class::Progress, None) => classify::trouble(&l.text),
        (_, None) => None,
    }
}

/// The errors and warnings of a run of dropped lines, when every one of them
/// stands in a digest the view prints: a report of a cause whose first report
/// a digest prints verbatim (above the marker, in `above`, or after it, in
/// `after`) with every place it was reported (no digest in `cut`, those that
/// left names out, holds it), or a folded line, which the fold's digest after
/// this marker prints once per number. `None` when the run holds none, or one
/// that no printed digest stands for: then the marker says nothing of them.
#[allow(clippy::too_many_arguments)]
fn digested(
    doc: &Doc,
    run: &[Line],
    at: usize,
    heads: &HashMap<usize, Severity>,
    printed: &[&Digest],
    cut: &[std::ops::Range<usize>],
    above: &str,
    after: &[String],
) -> Option<(u32, u32)> {
    let shown = |i: usize| {
        let text: &str = &doc.lines[i].text;
        !cut.iter().any(|r| r.contains(&i))
            && (above.lines().any(|l| l == text) || after.iter().any(|l| l == text))
    };
    let (mut errors, mut warnings) = (0, 0);
    for (k, l) in run.iter().enumerate() {
        let i = at + k;
        let class = trouble_class(l, heads.get(&i));
        if class.is_none() {
            continue;
        }
        let stands = match l.fate {
            Fate::Drop(Reason::Folded) => printed
                .iter()
                .any(|d| matches!(d.body, Body::Lines(_)) && (d.start..d.end).contains(&i)),
            Fate::Drop(Reason::Grouped) => doc.digests.iter().any(|d| {
                matches!(d.body, Body::Findings(_))
                    && (d.start..d.end).contains(&i)
                    && !d.needs.is_empty()
                    && d.needs.iter().all(|&n| shown(n))
                    && doc.findings.iter().any(|f| (f.start..f.end).contains(&i))
            }),
            _ => false,
        };
        if !stands {
            return None;
        }
        match class {
            Some(Class::Error) => errors += 1,
            _ => warnings += 1,
        }
    }
    (errors + warnings > 0).then_some((errors, warnings))
}

/// The count line level 0 leads with.
///
/// ```text
/// [lens: summary exit=3 stdout=5000 stderr=1 errors=1 warnings=0 handle=1a2b3c4d]
/// ```
pub fn summary(doc: &Doc, handle: &str) -> String {
    let count = |c: Class| doc.lines.iter().filter(|l| l.class == c).count();
    format!(
        "{PREFIX}summary exit={} stdout={} stderr={} errors={} warnings={} handle={handle}]",
        doc.exit,
        doc.total(Stream::Stdout),
        doc.total(Stream::Stderr),
        count(Class::Error),
        count(Class::Warning),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_masks_the_words_that_vary() {
        assert_eq!(masked("   Compiling dep12 v1.0.0"), "Compiling … …");
        assert_eq!(
            masked("checked ACC-5B57871B balance 557.21 ok"),
            "checked ACC-… balance … ok"
        );
        assert_eq!(masked("say \"hi\" 3 times"), "say 'hi' … times");
        assert!(masked(&"word ".repeat(40)).ends_with('…'));
        // An id of hex digits varies whether or not it holds a digit; a word
        // of a few such letters, or of both cases, is a word.
        assert_eq!(
            masked("checked ACC-ABCDEFAB balance 1.00 ok"),
            "checked ACC-… balance … ok"
        );
        assert_eq!(masked("commit deadbeef by ada"), "commit … by ada");
        assert_eq!(masked("a bad cafe, a Facade"), "a bad cafe, a Facade");
    }

    /// A run whose ids are drawn from hex digits, one of them without a digit
    /// (as one line in about two thousand is), is all like its shape; another
    /// word in that place, and it is only most like it.
    #[test]
    fn an_id_without_a_digit_still_has_the_shape() {
        let lines = |odd: &str| -> String {
            let mut s = String::new();
            for i in 0..2000 {
                if i % 500 == 250 {
                    s.push_str(&odd.replace(
                        "{}",
                        ["CCAADABA", "DEDBDDAD", "AFCFDCFE", "CEEABDBD"][i as usize / 500],
                    ));
                } else {
                    s.push_str(&format!(
                        "checked ACC-{:08X} balance {}.{:02} ok",
                        0x5A00_D131u32.wrapping_mul(i + 7),
                        i,
                        i % 100
                    ));
                }
                s.push('\n');
            }
            s.push_str("reconciliation failed for account ACC-6EDB45C0\n");
            s
        };
        let marker = |text: &str| {
            let argv = vec!["python3".to_string(), "audit.py".to_string()];
            let req = crate::Request {
                argv: &argv,
                stdout: text.as_bytes(),
                stderr: b"",
                exit: 0,
            };
            let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("1a2b3c4d"));
            let v = crate::view(&req, &opts);
            let v = String::from_utf8(v.stdout.into_owned()).unwrap();
            let m: Vec<&str> = v
                .lines()
                .filter(|l| l.starts_with("[lens: elided"))
                .collect();
            assert_eq!(m.len(), 1, "{v}");
            m[0].to_string()
        };
        let m = marker(&lines("checked ACC-{} balance 7.00 ok"));
        assert!(
            m.contains("; all like \"checked ACC-… balance … ok\""),
            "{m}"
        );
        let m = marker(&lines("checked ACC-{}X balance 7.00 ok"));
        assert!(
            m.contains("; most like \"checked ACC-… balance … ok\""),
            "{m}"
        );
    }

    #[test]
    fn one_marker_per_run() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "a\nb\nc\nd\ne\n", "", 0);
        doc.lines[1].fate = Fate::Drop(Reason::Progress);
        doc.lines[2].fate = Fate::Drop(Reason::Repeat);
        doc.lines[4].fate = Fate::Drop(Reason::Budget);
        let v = stream(&doc, Stream::Stdout, "0000abcd", Some(Detail::Full)).unwrap();
        assert_eq!(
            v,
            "a\n[lens: elided stdout 2-3 (2 lines: progress 1, repeat 1) handle=0000abcd]\nd\n\
             [lens: elided stdout 5-5 (1 line: budget) handle=0000abcd]\n"
        );
    }

    #[test]
    fn untouched_stream_is_none() {
        let argv = vec![];
        let doc = Doc::new(&argv, "a\n", "\x1b[31mred\x1b[0m\n", 0);
        assert!(stream(&doc, Stream::Stdout, "00000000", None).is_none());
        assert_eq!(
            stream(&doc, Stream::Stderr, "00000000", None).as_deref(),
            Some("red\n")
        );
    }

    #[test]
    fn digests_follow_their_marker() {
        use crate::digest::Digest;
        let argv = vec![];
        let mut doc = Doc::new(&argv, "keep\nx\ny\n", "", 0);
        doc.lines[1].fate = Fate::Drop(Reason::Grouped);
        doc.lines[2].fate = Fate::Drop(Reason::Grouped);
        doc.digests.push(Digest {
            stream: Stream::Stdout,
            start: 1,
            end: 3,
            failure: false,
            body: Body::Lines(vec!["x and y".into()]),
            needs: Vec::new(),
            room: None,
        });
        let v = stream(&doc, Stream::Stdout, "0000abcd", Some(Detail::Full)).unwrap();
        assert_eq!(v, "keep\n[lens: elided stdout 2-3 (2 lines: grouped) handle=0000abcd digest=1]\nx and y\n");
        let v0 = stream(&doc, Stream::Stdout, "0000abcd", None).unwrap();
        assert_eq!(
            v0,
            "keep\n[lens: elided stdout 2-3 (2 lines: grouped) handle=0000abcd]\n"
        );
    }

    /// `make -k` of tasks/cascading-errors, annotated at level 2.
    fn make_k(argv: &[String]) -> Doc<'_> {
        let raw = include_str!("../tests/fixtures/make-k-cascade.stdout");
        let mut doc = Doc::new(argv, raw, "", 2);
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("0a1b2c3d"));
        crate::annotate(&mut doc, &opts);
        doc
    }

    /// The markers of `view` with their region's raw errors (`: error: ` and
    /// make's `*** … Error 1`).
    fn markers(view: &str, doc: &Doc) -> Vec<(Marker, u32)> {
        view.lines()
            .filter_map(Marker::parse)
            .map(|m| {
                let errors = doc.lines[m.first as usize - 1..m.last as usize]
                    .iter()
                    .filter(|l| l.text.contains(": error: ") || l.text.contains("] Error "))
                    .count() as u32;
                (m, errors)
            })
            .collect()
    }

    #[test]
    fn reports_of_a_cause_a_digest_shows_are_said_to_be_in_a_digest() {
        // An agent read `grouped 285, folded 30` over fifteen files' errors
        // and fetched them all to learn whether any was not the one shown.
        let argv: Vec<String> = ["make", "-k"].map(String::from).to_vec();
        let doc = make_k(&argv);
        let v = stream(&doc, Stream::Stdout, "0a1b2c3d", Some(Detail::Full)).unwrap();
        let ms = markers(&v, &doc);
        assert!(ms.len() >= 2, "{v}");
        for (m, errors) in &ms {
            assert!(*errors > 0, "{v}");
            assert!(m.digested, "{v}");
            assert_eq!(m.trouble, Some((*errors, 0)), "{v}");
        }
        assert!(
            v.contains("(315 lines: grouped 285, folded 30; 75 errors, each in a digest)"),
            "{v}"
        );
        // Without digests (level 0) nothing stands for the errors: no claim.
        let v0 = stream(&doc, Stream::Stdout, "0a1b2c3d", None).unwrap();
        assert!(!v0.contains("each in a digest"), "{v0}");
    }

    #[test]
    fn one_error_no_digest_stands_for_takes_the_claim_away() {
        let argv: Vec<String> = ["make", "-k"].map(String::from).to_vec();
        let mut doc = make_k(&argv);
        // A report in the last region, left out for a reason no digest stands for.
        let i = (0..doc.lines.len())
            .rev()
            .find(|&i| {
                doc.lines[i].fate == Fate::Drop(Reason::Grouped)
                    && doc.lines[i].text.contains(": error: ")
            })
            .unwrap();
        doc.lines[i].fate = Fate::Drop(Reason::Repeat);
        let v = stream(&doc, Stream::Stdout, "0a1b2c3d", Some(Detail::Full)).unwrap();
        let (m, _) = markers(&v, &doc)
            .into_iter()
            .find(|(m, _)| (m.first..=m.last).contains(&doc.lines[i].no))
            .unwrap();
        assert!(!m.digested && m.trouble.is_none(), "{v}");
        // A cause whose first report no digest prints: the same.
        let mut doc = make_k(&argv);
        for d in &mut doc.digests {
            if let Body::Findings(gs) = &mut d.body {
                gs.clear();
            }
        }
        let v = stream(&doc, Stream::Stdout, "0a1b2c3d", Some(Detail::Full)).unwrap();
        assert!(!v.contains("each in a digest"), "{v}");
    }

    /// A view of `text` with lines `drop` left out by the budget.
    fn budget_view(text: &str, drop: std::ops::Range<usize>) -> String {
        let argv = vec![];
        let mut doc = Doc::new(&argv, text, "", 1);
        crate::stages::progress::run(&mut doc);
        crate::stages::classify::run(&mut doc);
        for l in &mut doc.lines[drop] {
            l.fate = Fate::Drop(Reason::Budget);
        }
        stream(&doc, Stream::Stdout, "0000abcd", Some(Detail::Full)).unwrap()
    }

    #[test]
    fn a_region_is_never_said_to_hold_no_error_when_it_holds_one() {
        use crate::stages::classify::generic_forms::{ERROR_FORMS, WARNING_FORMS};
        for (form, want) in ERROR_FORMS
            .iter()
            .map(|f| (f, "; 1 error)"))
            .chain(WARNING_FORMS.iter().map(|f| (f, "; 1 warning)")))
        {
            let mut lines: Vec<String> = (0..30).map(|i| format!("processed job {i} ok")).collect();
            lines.insert(15, form.to_string());
            let v = budget_view(&(lines.join("\n") + "\n"), 1..30);
            assert!(v.contains(want), "{form}: {v}");
        }
    }

    #[test]
    fn a_summary_a_progress_line_or_a_finding_holding_trouble_is_counted() {
        let mut text: String = (0..20).map(|i| format!("step {i} of 20 done\n")).collect();
        text.push_str("error: could not compile `app` (bin \"app\") due to 1 previous error\n");
        text.push_str("Compiling app: error: out of memory\n");
        text.push_str("svc/m.py:3:8: F401 [*] `os` imported but unused\n");
        text.push_str("tail\n");
        let argv = vec![];
        let mut doc = Doc::new(&argv, &text, "", 1);
        crate::stages::classify::run(&mut doc);
        assert_eq!(doc.lines[20].class, Class::Summary);
        // As a stage that read it as progress would leave it.
        doc.lines[21].class = Class::Progress;
        assert_eq!(doc.lines[22].class, Class::Plain);
        assert!(doc.findings.iter().any(|f| f.head == 22));
        for l in &mut doc.lines[..23] {
            l.fate = Fate::Drop(Reason::Budget);
        }
        let v = stream(&doc, Stream::Stdout, "0000abcd", Some(Detail::Full)).unwrap();
        assert!(
            v.contains("(23 lines: budget; most like \"step … of … done\"; 3 errors)"),
            "{v}"
        );
    }

    #[test]
    fn a_shape_that_keeps_no_word_is_not_shown() {
        let text: String = (0..30).map(|i| format!("{i}.{}\n", i * 7)).collect();
        let v = budget_view(&text, 0..29);
        assert!(!v.contains("like"), "{v}");
        assert!(v.contains("(29 lines: budget; no error or warning)"), "{v}");
        // A shape with a word still says it.
        let text: String = (0..30).map(|i| format!("row {i}\n")).collect();
        assert!(budget_view(&text, 0..29).contains("like \"row …\""));
    }

    #[test]
    fn summary_counts() {
        let argv = vec![];
        let doc = Doc::new(&argv, "a\nb\n", "c\n", 3);
        assert_eq!(
            summary(&doc, "0000abcd"),
            "[lens: summary exit=3 stdout=2 stderr=1 errors=0 warnings=0 handle=0000abcd]"
        );
    }
}
