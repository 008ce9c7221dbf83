//! pytest's whole report, when it is one: the session header, the per-file progress
//! (or `-v` result lines), the FAILURES and ERRORS sections and the short summary,
//! down to the closing count line. It becomes one digest: pytest's own count, then
//! each failure as its node id and location, the failing source line (`>`), and the
//! exception lines (`E`) without pytest's `+ where` introspection of
//! sub-expressions. Captured output of a failing test stays, line for line.
//!
//! Warnings stay as printed. A report with a section this does not know (passes,
//! durations, coverage) ends the digest before that section, which stays as
//! printed.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::digest::{Body, Digest};
use crate::doc::{Doc, Stream};

/// A banner: `===== title =====`.
static BANNER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^={3,} (.+?) ={3,}$").expect("compiles"));
/// A failure's title: `_____ test_name _____`.
static TITLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^_{3,} (.+?) _{3,}$").expect("compiles"));
/// A traceback entry's location: `tests/test_tax.py:19: AssertionError`.
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?\.py:\d+):(?: |$)").expect("compiles"));
/// A short-summary line: `FAILED tests/test_tax.py::test_x - AssertionError: …`.
static SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(FAILED|ERROR) (\S+)(?: - |$)").expect("compiles"));
/// pytest's closing count: `3 failed, 61 passed in 0.10s`.
static COUNTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:no tests ran|\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)\b.*) in [\d.]+s")
        .expect("compiles")
});
/// A test that neither passed nor failed, as `-v` prints it:
/// `tests/t.py::test_x XFAIL (reason)  [ 90%]` (also XPASS, SKIPPED).
static VERBOSE_OTHER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+::\S+) (XFAIL|XPASS|SKIPPED)\b ?(.*?)\s*(?:\[\s*\d+%\])?$").expect("compiles")
});
/// The same in the short summary (`-rxXs`): `XFAIL tests/t.py::test_x - reason`.
static SUMMARY_OTHER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(XFAIL|XPASS|SKIPPED) (?:\[\d+\] )?(\S+)(?: - (.*))?$").expect("compiles")
});
/// The introspection pytest adds under an assertion (`+  where x = f(y)`).
static WHERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^E\s+\+\s+(?:where|and)\s").expect("compiles"));
/// A sub-section inside a failure: `----- Captured stdout call -----`.
static CAPTURED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^-{3,} (Captured .+?) -{3,}$").expect("compiles"));

fn banner(text: &str) -> Option<&str> {
    if !text.starts_with("===") {
        return None;
    }
    BANNER
        .captures(text)
        .map(|c| c.get(1).expect("group").as_str())
}

/// One failing test, as the digest shows it.
#[derive(Default)]
struct Failure {
    title: String,
    /// The first frame's location (the test's own line) and the last one's (where
    /// it raised), when they differ.
    first: Option<String>,
    location: Option<String>,
    source: Option<String>,
    errors: Vec<String>,
    captured: Vec<String>,
    /// The previous line was a location (`--tb=short` prints the source next).
    after_location: bool,
}

/// Finds a pytest report in `range` and adds its digest.
pub fn find(doc: &Doc, out: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let text = |i: usize| doc.lines[i].text.as_ref();
    let Some(start) = range
        .clone()
        .find(|&i| banner(text(i)) == Some("test session starts"))
    else {
        return;
    };
    // The report's sections, in order; the digest ends at the first one it does
    // not know, or just after the closing count.
    let mut end = None;
    let mut failures: Vec<Failure> = Vec::new();
    let mut summary: Vec<(String, String)> = Vec::new(); // (kind, node id)
    let mut warnings: Vec<String> = Vec::new();
    // Tests that xfailed, xpassed or were skipped, by node id: kind and reason.
    let mut others: Vec<(String, String, String)> = Vec::new();
    let mut other = |kind: &str, id: &str, reason: &str| {
        if !others.iter().any(|(_, i, _)| i == id) {
            others.push((kind.to_string(), id.to_string(), reason.to_string()));
        }
    };
    let mut section = "header";
    let mut counts = None;
    for i in start + 1..range.end {
        let t = text(i);
        if let Some(title) = banner(t) {
            if COUNTS.is_match(title) {
                counts = Some(title.to_string());
                end = Some(i + 1);
                break;
            }
            section = match title {
                "FAILURES" | "ERRORS" => "failures",
                "short test summary info" => "summary",
                "warnings summary" => "warnings",
                // The output of tests that passed unexpectedly: the summary names them.
                "XPASSES" => "xpasses",
                _ => {
                    end = Some(i);
                    break;
                }
            };
            continue;
        }
        match section {
            "header" => {
                if let Some(c) = VERBOSE_OTHER.captures(t) {
                    let reason = c[3].trim().trim_start_matches('(').trim_end_matches(')');
                    other(&c[2], &c[1], reason);
                }
            }
            "failures" => failure_line(t, &mut failures),
            "summary" => {
                if let Some(c) = SUMMARY.captures(t) {
                    summary.push((c[1].to_string(), c[2].to_string()));
                } else if let Some(c) = SUMMARY_OTHER.captures(t) {
                    other(&c[1], &c[2], c.get(3).map_or("", |m| m.as_str()));
                }
            }
            // Warnings stay, as printed, but for the blank lines and the link to
            // pytest's documentation.
            "warnings" if !t.trim().is_empty() && !t.starts_with("-- Docs: ") => {
                warnings.push(t.to_string())
            }
            _ => {}
        }
    }
    let Some(end) = end else { return };
    if end <= start + 1 {
        return;
    }
    // Results in the header part: per-file progress or -v lines.
    let mut lines = Vec::new();
    lines.push(counts.unwrap_or_else(|| progress_counts(doc, start, end)));
    for (kind, id, reason) in &others {
        lines.push(if reason.is_empty() {
            format!("{kind} {id}")
        } else {
            format!("{kind} {id} - {reason}")
        });
    }
    for f in &failures {
        let id = node_id(f, &summary);
        let mut head = format!("FAILED {id}");
        match (&f.first, &f.location) {
            (Some(a), Some(b)) if a != b => head.push_str(&format!(" ({a}, raised at {b})")),
            (_, Some(b)) => head.push_str(&format!(" ({b})")),
            _ => {}
        }
        lines.push(head);
        if let Some(src) = &f.source {
            lines.push(format!("> {src}"));
        }
        lines.extend(dedent(&f.errors));
        lines.extend(f.captured.iter().cloned());
    }
    if !warnings.is_empty() {
        lines.push("warnings:".into());
        lines.extend(warnings);
    }
    out.digests.push(Digest {
        stream,
        start,
        end,
        failure: !failures.is_empty(),
        body: Body::Lines(lines),
        needs: Vec::new(),
        room: None,
    });
}

/// One line of a FAILURES or ERRORS section.
fn failure_line(t: &str, failures: &mut Vec<Failure>) {
    if let Some(c) = TITLE.captures(t) {
        failures.push(Failure {
            title: c[1].to_string(),
            ..Failure::default()
        });
        return;
    }
    let Some(f) = failures.last_mut() else { return };
    if let Some(c) = CAPTURED.captures(t) {
        f.captured.push(format!("{}:", &c[1]));
        return;
    }
    if !f.captured.is_empty() {
        f.captured.push(t.to_string());
        return;
    }
    let after_location = std::mem::take(&mut f.after_location);
    if after_location && t.starts_with("    ") {
        // --tb=short: `path:N: in func` then the line, indented.
        f.source = Some(t.trim().to_string());
        f.errors.clear();
    } else if let Some(rest) = t.strip_prefix('>') {
        // The last frame's failing line wins; earlier frames are the way there.
        f.source = Some(rest.trim().to_string());
        f.errors.clear();
    } else if t.starts_with("E ") || t == "E" {
        if !WHERE.is_match(t) {
            f.errors.push(t.to_string());
        }
    } else if let Some(c) = LOCATION.captures(t) {
        if f.first.is_none() {
            f.first = Some(c[1].to_string());
        }
        f.location = Some(c[1].to_string());
        f.after_location = true;
    }
}

/// The E lines with the run of spaces they all share after `E` taken out, so the
/// message reads `E AssertionError: …` and a diff keeps its own indentation.
fn dedent(errors: &[String]) -> Vec<String> {
    let pad = errors
        .iter()
        .filter_map(|e| {
            let body = &e[1..];
            (!body.trim().is_empty()).then(|| body.len() - body.trim_start().len())
        })
        .min()
        .unwrap_or(1);
    errors
        .iter()
        .map(|e| {
            if pad > 1 && e.len() > pad {
                format!("E {}", &e[1 + pad..])
            } else {
                e.clone()
            }
        })
        .collect()
}

/// The failure's node id: from the short summary when it names one ending in the
/// failure's title, else its file and title.
fn node_id(f: &Failure, summary: &[(String, String)]) -> String {
    let title = f.title.trim_start_matches("ERROR collecting ").trim();
    let as_path = title.replace('.', "::");
    let found = summary.iter().find(|(_, id)| {
        id.ends_with(&format!("::{as_path}")) || id.ends_with(&format!("::{title}")) || id == title
    });
    if let Some((_, id)) = found {
        return id.clone();
    }
    match f.first.as_deref().and_then(|l| l.split(':').next()) {
        Some(file) if !f.title.starts_with("ERROR collecting") => format!("{file}::{as_path}"),
        _ => title.to_string(),
    }
}

/// Counts from the progress lines, when the closing count is outside the digest.
fn progress_counts(doc: &Doc, start: usize, end: usize) -> String {
    let (mut pass, mut fail, mut skip) = (0usize, 0usize, 0usize);
    let (mut xfail, mut xpass) = (0usize, 0usize);
    for l in &doc.lines[start..end] {
        let t = l.text.as_ref();
        if let Some((file, marks)) = t.split_once(' ') {
            let marks = marks.split('[').next().unwrap_or("").trim();
            if file.ends_with(".py")
                && !marks.is_empty()
                && marks.chars().all(|c| ".FEsxX".contains(c))
            {
                for m in marks.chars() {
                    match m {
                        '.' => pass += 1,
                        'x' => xfail += 1,
                        'X' => xpass += 1,
                        's' => skip += 1,
                        _ => fail += 1,
                    }
                }
            }
        }
    }
    let mut s = format!(
        "{} tests: {pass} passed",
        pass + fail + skip + xfail + xpass
    );
    if fail > 0 {
        s.push_str(&format!(", {fail} failed"));
    }
    if xfail > 0 {
        s.push_str(&format!(", {xfail} xfailed"));
    }
    if xpass > 0 {
        s.push_str(&format!(", {xpass} xpassed"));
    }
    if skip > 0 {
        s.push_str(&format!(", {skip} skipped"));
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::digest::Detail;
    use crate::doc::Doc;

    /// The report's digest (the first; the progress lines' own, inside it, is
    /// dropped when the digests are applied).
    fn digest_lines(stdout: &str) -> Vec<String> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, stdout, "", 1);
        crate::stages::classify::run(&mut doc);
        doc.digests[0].lines(&doc, Detail::Full)
    }

    /// A pricing package: three failed assertions, default traceback.
    const PRICING: &str = include_str!("../../../../cases/pytest/recording/000.stdout");
    /// Another project: a class, a raise in a helper with captured output, a list
    /// diff, a parametrized case, a warning and a skip; default and `-v --tb=short`.
    const CLASSES_LONG: &str = include_str!("../../../tests/fixtures/pytest-classes-long.txt");
    const CLASSES_SHORT: &str = include_str!("../../../tests/fixtures/pytest-classes-v-short.txt");

    #[test]
    fn one_digest_with_every_failure_its_line_and_its_assertion() {
        let d = digest_lines(PRICING);
        assert_eq!(d[0], "3 failed, 61 passed in 0.10s");
        assert_eq!(
            &d[1..4],
            [
                "FAILED tests/test_invoice.py::test_invoice_total_three_lines (tests/test_invoice.py:8)",
                "> assert pricing.invoice_total(lines) == Decimal('118.79')",
                "E AssertionError: assert Decimal('118.78') == Decimal('118.79')",
            ]
        );
        assert_eq!(d.len(), 10);
        assert!(d.iter().all(|l| !l.contains("where")), "{d:#?}");
    }

    #[test]
    fn classes_helpers_captured_output_and_warnings_in_either_traceback_style() {
        for (out, name) in [(CLASSES_LONG, "long"), (CLASSES_SHORT, "short")] {
            let d = digest_lines(out);
            assert!(
                d[0].starts_with("3 failed, 11 passed, 1 skipped, 1 warning in "),
                "{name}"
            );
            let at = |prefix: &str| {
                d.iter()
                    .position(|l| l.starts_with(prefix))
                    .unwrap_or_else(|| panic!("{name}: no {prefix:?} in {d:#?}"))
            };
            let i = at("FAILED tests/test_inventory.py::TestStock::test_remove_too_many ");
            assert!(
                d[i].ends_with(
                    "(tests/test_inventory.py:28, raised at tests/test_inventory.py:14)"
                ),
                "{name}: {}",
                d[i]
            );
            assert!(d[i + 1].starts_with("> raise ValueError("), "{name}");
            assert_eq!(
                d[i + 2],
                "E ValueError: not enough nut: have 1, need 2",
                "{name}"
            );
            assert_eq!(d[i + 4], "stock before: {'nut': 1}", "{name}");
            let j = at("FAILED tests/test_inventory.py::TestStock::test_listing ");
            assert_eq!(
                d[j + 1],
                "> assert sorted(s.items) == [\"a\", \"c\"]",
                "{name}"
            );
            assert_eq!(
                d[j + 2],
                "E AssertionError: assert ['a', 'b'] == ['a', 'c']"
            );
            assert!(
                d.contains(&"E   At index 1 diff: 'b' != 'c'".to_string()),
                "{name}"
            );
            let k = at("FAILED tests/test_inventory.py::test_square[4-15] ");
            assert_eq!(d[k + 2], "E assert (4 * 4) == 15", "{name}");
            assert!(d
                .iter()
                .any(|l| l.contains("DeprecationWarning: deprecated thing")));
        }
    }

    #[test]
    fn an_unknown_section_ends_the_digest_before_it() {
        let out = "============================= test session starts ==============================\n\
                   collected 4 items\n\n\
                   t/test_a.py ..F.                                                  [100%]\n\n\
                   =================================== FAILURES ===================================\n\
                   ___________________________________ test_c ___________________________________\n\n\
                   >       assert 1 == 2\n\
                   E       assert 1 == 2\n\n\
                   t/test_a.py:9: AssertionError\n\
                   ============================ slowest 3 durations =============================\n\
                   0.01s call     t/test_a.py::test_a\n\
                   ========================= 1 failed, 3 passed in 0.02s ==========================\n";
        let d = digest_lines(out);
        assert_eq!(
            d,
            [
                "4 tests: 3 passed, 1 failed",
                "FAILED t/test_a.py::test_c (t/test_a.py:9)",
                "> assert 1 == 2",
                "E assert 1 == 2",
            ]
        );
    }

    #[test]
    fn progress_marks_count_xfailed_and_xpassed_apart_from_passed() {
        let out = "============================= test session starts ==============================\n\
                   collected 6 items\n\n\
                   t/test_a.py ..xxXs                                                [100%]\n\n\
                   ============================ slowest 3 durations =============================\n\
                   0.01s call     t/test_a.py::test_a\n\
                   ============= 2 passed, 1 skipped, 2 xfailed, 1 xpassed in 0.02s ==============\n";
        let d = digest_lines(out);
        assert_eq!(d, ["6 tests: 2 passed, 2 xfailed, 1 xpassed, 1 skipped"]);
    }
}
