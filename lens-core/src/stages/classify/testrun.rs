//! Test runners: the per-test result lines of cargo test, pytest (progress and -v),
//! go test -v, node's test runner and TAP, and jest/vitest. A run of them becomes
//! one count line naming every failure; the failures' own sections, and the
//! runner's summary, stay as printed.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::digest::{Body, Digest};
use crate::doc::{Doc, Stream};

/// What one result line says.
enum Outcome {
    Pass,
    Fail(String),
    Skip,
    /// pytest's progress line: a file and one letter per test.
    Progress(String, String),
    /// Bookkeeping inside a run (`=== RUN`, `=== PAUSE`).
    Other,
}

static CARGO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test (\S+(?: - .+)?) \.\.\. (ok|FAILED|ignored.*)$").expect("compiles")
});
static PYTEST_V: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b").expect("compiles")
});
static PYTEST_PROGRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+\.py) ([.FEsxX]+)\s*(?:\[\s*\d+%\])?$").expect("compiles"));
static GO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:--- (PASS|FAIL|SKIP): (\S+)|=== (?:RUN|PAUSE|CONT|NAME)\s)")
        .expect("compiles")
});
static MARKS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(✓|✔|√)|(✗|✕|✖|×)|(↓|○)) (.+?)(?: \(\d+(?:\.\d+)? ?m?s\))?$")
        .expect("compiles")
});
static TAP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(not ok|ok) \d+ - (.+)$").expect("compiles"));

/// The line up to its first space. A pytest node id or file name comes first, so
/// testing this word alone costs less than searching the line (and a byte loop
/// finds the end of a short word sooner than a general search starts).
fn first_word(text: &str) -> &str {
    let end = text.bytes().position(|b| b == b' ').unwrap_or(text.len());
    &text[..end]
}

fn outcome(text: &str, colon: bool) -> Option<Outcome> {
    // Byte tests first: most lines are not test results, and the patterns are then
    // never compiled or run.
    let t = text.trim_start();
    // Every mark is outside ASCII: an ASCII first byte settles it.
    let mark = t.as_bytes().first().is_some_and(|&b| b >= 0x80)
        && t.chars().next().is_some_and(|c| "✓✔√✗✕✖×↓○".contains(c));
    let first = first_word(text);
    let maybe = text.starts_with("test ")
        || t.starts_with("--- ")
        || t.starts_with("=== ")
        || text.starts_with("ok ")
        || text.starts_with("not ok ")
        || mark
        // Both pytest forms put a space after the first word (a bare path, as
        // find prints, is not a result).
        || first.len() < text.len() && (colon && first.contains("::") || first.ends_with(".py"));
    if !maybe {
        return None;
    }
    if let Some(c) = CARGO.captures(text) {
        return Some(match &c[2] {
            "ok" => Outcome::Pass,
            "FAILED" => Outcome::Fail(c[1].to_string()),
            _ => Outcome::Skip,
        });
    }
    if let Some(c) = PYTEST_PROGRESS.captures(text) {
        return Some(Outcome::Progress(c[1].to_string(), c[2].to_string()));
    }
    if let Some(c) = PYTEST_V.captures(text) {
        return Some(match &c[2] {
            "PASSED" | "XFAIL" => Outcome::Pass,
            "SKIPPED" => Outcome::Skip,
            _ => Outcome::Fail(c[1].to_string()),
        });
    }
    if let Some(c) = GO.captures(text) {
        return Some(match c.get(1).map(|m| m.as_str()) {
            Some("PASS") => Outcome::Pass,
            Some("FAIL") => Outcome::Fail(c[2].to_string()),
            Some(_) => Outcome::Skip,
            None => Outcome::Other,
        });
    }
    if let Some(c) = TAP.captures(text) {
        return Some(if &c[1] == "ok" {
            Outcome::Pass
        } else {
            Outcome::Fail(c[2].to_string())
        });
    }
    if let Some(c) = MARKS.captures(text) {
        return Some(if c.get(1).is_some() {
            Outcome::Pass
        } else if c.get(2).is_some() {
            Outcome::Fail(c[4].to_string())
        } else {
            Outcome::Skip
        });
    }
    None
}

/// Runs shorter than this stay as printed.
const MIN_RUN: usize = 4;

/// Finds runs of test result lines in `range` and adds a digest for each.
pub fn find(doc: &Doc, out: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        if outcome(&doc.lines[i].text, doc.lines[i].colon).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        let (mut pass, mut skip) = (0usize, 0usize);
        let mut failed: Vec<String> = Vec::new();
        let mut files = 0usize;
        while i < range.end {
            match outcome(&doc.lines[i].text, doc.lines[i].colon) {
                None => break,
                Some(Outcome::Pass) => pass += 1,
                Some(Outcome::Skip) => skip += 1,
                Some(Outcome::Other) => {}
                Some(Outcome::Fail(name)) => failed.push(name),
                Some(Outcome::Progress(file, marks)) => {
                    files += 1;
                    for m in marks.chars() {
                        match m {
                            '.' | 'x' => pass += 1,
                            's' => skip += 1,
                            _ => failed.push(file.clone()),
                        }
                    }
                }
            }
            i += 1;
        }
        if i - start < MIN_RUN && files == 0 {
            continue;
        }
        let total = pass + skip + failed.len();
        let mut line = format!("{total} tests: {pass} passed");
        if skip > 0 {
            line.push_str(&format!(", {skip} skipped"));
        }
        if !failed.is_empty() {
            failed.dedup();
            line.push_str(&format!(", failed: {}", failed.join(", ")));
        }
        out.digests.push(Digest {
            stream,
            start,
            end: i,
            failure: !failed.is_empty(),
            body: Body::Lines(vec![line]),
            needs: Vec::new(),
            room: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify;

    fn digest(text: &str) -> Vec<(usize, usize, String)> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, text, "", 1);
        classify::run(&mut doc);
        doc.digests
            .iter()
            .map(|d| {
                (
                    d.start,
                    d.end,
                    d.lines(&doc, crate::digest::Detail::Full).join("\n"),
                )
            })
            .collect()
    }

    #[test]
    fn cargo_test() {
        let out = "running 5 tests\ntest a::one ... ok\ntest a::two ... FAILED\ntest a::three ... ok\ntest a::four ... ignored, slow\ntest a::five ... ok\n\nfailures:\n";
        assert_eq!(
            digest(out),
            vec![(
                1,
                6,
                "5 tests: 3 passed, 1 skipped, failed: a::two".to_string()
            )]
        );
    }

    #[test]
    fn pytest_progress_and_verbose() {
        let out = "tests/test_a.py ........F.. [ 40%]\ntests/test_b.py .s.. [100%]\n";
        assert_eq!(
            digest(out),
            vec![(
                0,
                2,
                "15 tests: 13 passed, 1 skipped, failed: tests/test_a.py".to_string()
            )]
        );
        let v = "t.py::a PASSED [ 25%]\nt.py::b PASSED [ 50%]\nt.py::c FAILED [ 75%]\nt.py::d PASSED [100%]\n";
        assert_eq!(digest(v)[0].2, "4 tests: 3 passed, failed: t.py::c");
    }

    #[test]
    fn go_and_jest_and_tap() {
        let go =
            "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.01s)\n";
        assert_eq!(digest(go)[0].2, "2 tests: 1 passed, failed: TestB");
        let jest = "  ✓ adds (2 ms)\n  ✓ subtracts\n  ✕ divides (1 ms)\n  ✓ multiplies\n";
        assert_eq!(digest(jest)[0].2, "4 tests: 3 passed, failed: divides");
        let tap = "ok 1 - a\nok 2 - b\nnot ok 3 - c\nok 4 - d\n";
        assert_eq!(digest(tap)[0].2, "4 tests: 3 passed, failed: c");
    }

    #[test]
    fn short_runs_stay() {
        assert!(digest("test a ... ok\ntest b ... ok\n").is_empty());
    }
}
