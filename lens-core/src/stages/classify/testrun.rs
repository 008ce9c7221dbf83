//! Test runners: the per-test result lines of cargo test, pytest (progress and -v),
//! go test -v, node's test runner and TAP, jest/vitest, and Gradle's
//! (`com.example.FooTest > adds PASSED`). A run of them becomes one count line
//! naming every failure; the failures' own sections, and the runner's summary,
//! stay as printed. Gradle prints a failed test's trace right under its `FAILED`
//! line, so that line ends a run and stays above its trace.

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
    /// A test's own output inside a run: go test's `    x_test.go:12: got 3`.
    Log,
    /// go test's verdict on a package (`ok  \texample.com/x\t0.005s`,
    /// `FAIL\texample.com/y\t0.003s`): the end of that package's results.
    Package,
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
    Regex::new(r"^\s*(?:(✓|✔|√)|(✗|✕|✖|✘|×)|(↓|○)) (.+?)( \(\d+(?:\.\d+)? ?m?s\))?$")
        .expect("compiles")
});
/// go test's line for a package, and its bare `PASS`/`FAIL` before it.
static GO_PACKAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:(?:ok|FAIL|\?) *\t\S+\t|(PASS|FAIL)$)").expect("compiles"));
/// go test's `t.Errorf`/`t.Log` line; its continuation lines are indented deeper
/// (eight spaces).
static GO_LOG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ {4,}(?:\S+_test\.go:\d+: |\s)").expect("compiles"));
static GRADLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\S+ > \S.*? (PASSED|FAILED|SKIPPED)$").expect("compiles"));
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
        && t.chars().next().is_some_and(|c| "✓✔√✗✕✖✘×↓○".contains(c));
    let first = first_word(text);
    if text.starts_with("        ")
        || text.starts_with("    ") && colon && t.contains("_test.go:") && GO_LOG.is_match(text)
    {
        return Some(Outcome::Log);
    }
    if matches!(text.as_bytes().first(), Some(b'o' | b'F' | b'P' | b'?')) {
        if let Some(c) = GO_PACKAGE.captures(text) {
            return Some(if c.get(1).is_some() {
                Outcome::Other
            } else {
                Outcome::Package
            });
        }
    }
    let gradle = text.contains(" > ")
        && (text.ends_with(" PASSED") || text.ends_with(" FAILED") || text.ends_with(" SKIPPED"));
    if gradle && !first.contains("::") {
        if let Some(c) = GRADLE.captures(text) {
            return match &c[1] {
                "PASSED" => Some(Outcome::Pass),
                "SKIPPED" => Some(Outcome::Skip),
                _ => None,
            };
        }
    }
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
        // A test runner's own time is in parentheses (`(3 ms)`); a job's is bare.
        if is_ci_job(&c[4]) || c.get(5).is_none() && ends_in_job_time(&c[4]) {
            return None;
        }
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

/// A CI run's job line after its mark (`gh run view`'s `build in 1m2s (ID 4)`,
/// `gh pr checks`' `build  1m2s  https://…`): a job, not a test.
fn is_ci_job(name: &str) -> bool {
    let name = name.trim();
    if name.contains("https://") {
        return true;
    }
    let name = match name.rsplit_once(" (ID ") {
        Some((job, id)) if id.trim_end_matches(')').bytes().all(|c| c.is_ascii_digit()) => job,
        _ => name,
    };
    name.rsplit_once(" in ").is_some_and(|(_, took)| {
        !took.is_empty()
            && took.starts_with(|c: char| c.is_ascii_digit())
            && took.ends_with(['s', 'm', 'h'])
            && took
                .bytes()
                .all(|c| c.is_ascii_digit() || b"hms".contains(&c))
    })
}

/// A job line of a CI run's summary (`✓ lint 4s`, `✗ test (3.1) 1m3s`): its
/// name ends in a time of seconds, minutes or hours. A test runner's times are
/// in milliseconds (vitest's `× rounds half up 11ms`) or in parentheses.
fn ends_in_job_time(name: &str) -> bool {
    let took = name.trim_end().rsplit(' ').next().unwrap_or("");
    name.trim_end().contains(' ')
        && took.starts_with(|c: char| c.is_ascii_digit())
        && took.ends_with(['s', 'm', 'h'])
        && !took.ends_with("ms")
        && took
            .bytes()
            .all(|c| c.is_ascii_digit() || b".hms".contains(&c))
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
        let mut run = Run::default();
        while i < range.end {
            let Some(o) = outcome(&doc.lines[i].text, doc.lines[i].colon) else {
                break;
            };
            // A bare PASS/FAIL or a package's line only continues a run of go's.
            let verdict = matches!(o, Outcome::Package)
                || doc.lines[i].text == "PASS"
                || doc.lines[i].text == "FAIL";
            if verdict && !run.go {
                break;
            }
            run.add(doc, i, o);
            i += 1;
        }
        // A run does not end in lines no test claimed (log lines, or a bare
        // PASS/FAIL whose package line is not in it).
        while i > start && run.pending.last() == Some(&(i - 1)) {
            run.pending.pop();
            i -= 1;
        }
        if i == start {
            i += 1;
            continue;
        }
        if i - start < MIN_RUN && run.files == 0 {
            continue;
        }
        let failure = run.failed_any;
        let lines = run.finish(doc);
        out.digests.push(Digest {
            stream,
            start,
            end: i,
            failure,
            body: Body::Lines(lines),
            needs: Vec::new(),
            room: None,
        });
    }
}

/// A run of result lines being read: the counts since the last package line,
/// and the digest lines so far.
#[derive(Default)]
struct Run {
    pass: usize,
    skip: usize,
    failed: Vec<String>,
    files: usize,
    /// The run is go test's (`=== RUN`, `--- PASS`).
    go: bool,
    /// The test go started last (`=== RUN`, `=== CONT`).
    current: Option<String>,
    failed_any: bool,
    /// Log lines of the test running now (and, at the run's end, bare
    /// PASS/FAIL lines), and those of failed tests with their `--- FAIL` lines.
    pending: Vec<usize>,
    shown: Vec<usize>,
    lines: Vec<String>,
}

impl Run {
    fn add(&mut self, doc: &Doc, i: usize, o: Outcome) {
        let text = &doc.lines[i].text;
        match o {
            Outcome::Pass | Outcome::Skip => {
                if matches!(o, Outcome::Pass) {
                    self.pass += 1;
                } else {
                    self.skip += 1;
                }
                // Log lines go with the test that passed only when it is the one
                // that started last (go prints a subtest's and a parallel test's
                // logs before its parent's verdict); any other stay shown.
                let name = text.trim_start().split(' ').nth(2);
                if name.is_some() && name == self.current.as_deref() {
                    self.pending.clear();
                } else {
                    self.shown.append(&mut self.pending);
                }
            }
            Outcome::Other => {
                self.go |= text.starts_with("=== ");
                if text.as_ref() == "PASS" || text.as_ref() == "FAIL" {
                    self.pending.push(i);
                } else if let Some(name) = text.split_whitespace().nth(2) {
                    self.current = Some(name.to_string());
                }
            }
            Outcome::Log => self.pending.push(i),
            Outcome::Fail(name) => {
                self.failed.push(name);
                self.failed_any = true;
                let go = text.trim_start().starts_with("--- ");
                self.go |= go;
                if go {
                    self.shown.append(&mut self.pending);
                    self.shown.push(i);
                }
            }
            Outcome::Package => {
                // The package's line as printed, with its counts, then its failures.
                self.pending.clear();
                let counts = self.counts(false);
                // The package line says they are tests.
                let counts = counts.split_once(": ").map_or(counts.as_str(), |c| c.1);
                self.lines.push(format!("{text}  ({counts})"));
                self.flush_shown(doc);
            }
            Outcome::Progress(file, marks) => {
                self.files += 1;
                for m in marks.chars() {
                    match m {
                        '.' | 'x' => self.pass += 1,
                        's' => self.skip += 1,
                        _ => {
                            self.failed.push(file.clone());
                            self.failed_any = true;
                        }
                    }
                }
            }
        }
        if matches!(text.as_ref(), "PASS" | "FAIL") || text.starts_with("--- PASS") {
            self.go = true;
        }
    }

    /// `24 tests: 18 passed, failed: A, B` (with `named`, else `6 failed`), and
    /// starts the next package's count.
    fn counts(&mut self, named: bool) -> String {
        let total = self.pass + self.skip + self.failed.len();
        let mut line = format!("{total} tests: {} passed", self.pass);
        if self.skip > 0 {
            line.push_str(&format!(", {} skipped", self.skip));
        }
        if !self.failed.is_empty() {
            self.failed.dedup();
            if named {
                line.push_str(&format!(", failed: {}", self.failed.join(", ")));
            } else {
                line.push_str(&format!(", {} failed", self.failed.len()));
            }
        }
        (self.pass, self.skip) = (0, 0);
        self.failed.clear();
        line
    }

    fn flush_shown(&mut self, doc: &Doc) {
        self.lines
            .extend(self.shown.drain(..).map(|k| doc.lines[k].text.to_string()));
    }

    /// The digest's lines: a count line for the results after the last
    /// package line, if any, and every failure's lines.
    fn finish(mut self, doc: &Doc) -> Vec<String> {
        if self.pass + self.skip + self.failed.len() > 0 || self.lines.is_empty() {
            // Without go's `--- FAIL` lines to name them, the count names them.
            let named = self.shown.is_empty();
            let counts = self.counts(named);
            self.lines.push(counts);
            self.flush_shown(doc);
        }
        self.lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify;

    #[test]
    fn a_ci_runs_jobs_are_not_tests() {
        let run = "✓ main CI · 7012345678\nTriggered via push about 1 hour ago\n\nJOBS\n✓ lint in 32s (ID 111)\n✓ build in 1m2s (ID 112)\n✓ test (ubuntu) in 2m14s (ID 113)\n✓ test (macos) in 3m (ID 114)\n✓ docs in 41s (ID 115)\n";
        assert!(
            digest(run).iter().all(|(_, _, d)| !d.contains("tests:")),
            "{:?}",
            digest(run)
        );
        let checks = "✓  lint   32s  https://github.com/o/r/actions/runs/1/job/111\n✓  build  1m2s  https://github.com/o/r/actions/runs/1/job/112\n✓  test   2m14s  https://github.com/o/r/actions/runs/1/job/113\n✓  docs   41s  https://github.com/o/r/actions/runs/1/job/115\n";
        assert!(digest(checks).is_empty(), "{:?}", digest(checks));
        // A test named like a job is still a test.
        assert!(!ends_in_job_time("rounds half up 11ms"));
        assert!(!ends_in_job_time("test/money.test.js (12 tests) 4ms"));
        assert!(!is_ci_job("logs in as admin"));
        assert!(!is_ci_job("adds (3 ms)"));
    }

    #[test]
    fn a_ci_job_summary_with_a_failed_job_is_not_a_passing_test_run() {
        // A workflow's jobs as a runner's summary prints them, then the failed
        // job's log.
        let run = "CI #418 · push · main\n\
✓ lint 4s\n\
✓ typecheck 12s\n\
✓ test (3.11) 1m2s\n\
✗ test (3.12) 58s\n\
✓ build 31s\n\
✓ docs 9s\n\
\n\
test (3.12)\n\
  FAILED tests/test_money.py::test_round_half_up - assert 1.0 == 2.0\n\
  1 failed, 211 passed in 41.20s\n\
  Error: Process completed with exit code 1.\n";
        // gh prints a failed job's mark as `X` where it cannot print `✗`.
        for run in [run.to_string(), run.replace("✗ test", "X test")] {
            let found = digest(&run);
            assert!(
                found.iter().all(|(_, _, d)| !d.contains("tests:")),
                "{found:?}"
            );
        }
        // A failing test marked ✘ is a failure.
        let ava = "  ✔ adds\n  ✔ subtracts\n  ✘ divides\n  ✔ multiplies\n";
        assert_eq!(digest(ava)[0].2, "4 tests: 3 passed, failed: divides");
    }

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
        assert_eq!(
            digest(go)[0].2,
            "2 tests: 1 passed, 1 failed\n--- FAIL: TestB (0.01s)"
        );
        let jest = "  ✓ adds (2 ms)\n  ✓ subtracts\n  ✕ divides (1 ms)\n  ✓ multiplies\n";
        assert_eq!(digest(jest)[0].2, "4 tests: 3 passed, failed: divides");
        let tap = "ok 1 - a\nok 2 - b\nnot ok 3 - c\nok 4 - d\n";
        assert_eq!(digest(tap)[0].2, "4 tests: 3 passed, failed: c");
    }

    #[test]
    fn go_test_v_is_a_line_per_package_and_each_failure_as_printed() {
        let mut out = String::new();
        for t in 0..6 {
            out.push_str(&format!(
                "=== RUN   TestSum{t}\n--- PASS: TestSum{t} (0.00s)\n"
            ));
        }
        out.push_str("PASS\nok  \texample.com/m/money\t0.004s\n");
        for t in 0..6 {
            out.push_str(&format!("=== RUN   TestCut{t}\n"));
            if t == 3 {
                out.push_str("    cut_test.go:41: cut(7): got 3, want 4\n        extra detail\n--- FAIL: TestCut3 (0.00s)\n");
            } else {
                out.push_str(&format!(
                    "    cut_test.go:9: log of a passing test\n--- PASS: TestCut{t} (0.00s)\n"
                ));
            }
        }
        out.push_str("FAIL\nFAIL\texample.com/m/cut\t0.003s\nFAIL\n");
        let d = digest(&out);
        assert_eq!(d.len(), 1, "{d:#?}");
        // The last bare FAIL (go's verdict on the whole run) stays as printed.
        let n = out.lines().count();
        assert_eq!((d[0].0, d[0].1), (0, n - 1));
        assert_eq!(
            d[0].2,
            "ok  \texample.com/m/money\t0.004s  (6 passed)\n\
             FAIL\texample.com/m/cut\t0.003s  (5 passed, 1 failed)\n\
             \x20   cut_test.go:41: cut(7): got 3, want 4\n\
             \x20       extra detail\n\
             --- FAIL: TestCut3 (0.00s)"
        );
    }

    #[test]
    fn a_subtests_log_printed_before_its_parents_verdict_stays() {
        let out = "=== RUN   TestScale\n=== RUN   TestScale/half\n=== RUN   TestScale/third\n    geom_test.go:12: Scale(10, 33) = 3, want 4\n=== RUN   TestScale/full\n--- FAIL: TestScale (0.00s)\n    --- PASS: TestScale/half (0.00s)\n    --- FAIL: TestScale/third (0.00s)\n    --- PASS: TestScale/full (0.00s)\n=== RUN   TestArea\n    geom_test.go:18: area ok\n--- PASS: TestArea (0.00s)\nFAIL\nFAIL\texample.org/kit/geom\t0.004s\n";
        let d = digest(out);
        assert_eq!(
            d[0].2,
            "FAIL\texample.org/kit/geom\t0.004s  (3 passed, 2 failed)\n\
             \x20   geom_test.go:12: Scale(10, 33) = 3, want 4\n\
             --- FAIL: TestScale (0.00s)\n\
             \x20   --- FAIL: TestScale/third (0.00s)"
        );
    }

    #[test]
    fn gradles_passed_tests_are_counted_and_a_failed_one_stays_above_its_trace() {
        let out = "> Task :app:testDebugUnitTest\n\
com.acme.CartTest > addsItem PASSED\n\
com.acme.CartTest > removesItem PASSED\n\
com.acme.CartTest > emptiesCart SKIPPED\n\
com.acme.PriceTest > rounds PASSED\n\
com.acme.PriceTest > discounts FAILED\n\
\x20   java.lang.AssertionError: expected:<90> but was:<100>\n\
\x20       at com.acme.PriceTest.discounts(PriceTest.kt:31)\n\
com.acme.PriceTest > taxes PASSED\n\
\n\
6 tests completed, 1 failed, 1 skipped\n";
        assert_eq!(
            digest(out),
            vec![(1, 5, "4 tests: 3 passed, 1 skipped".to_string())]
        );
    }

    #[test]
    fn short_runs_stay() {
        assert!(digest("test a ... ok\ntest b ... ok\n").is_empty());
    }
}
