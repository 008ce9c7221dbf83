//! One `cargo test` binary's report, from `running N tests` to its `test result:`
//! line, becomes one digest: the result line as printed, then each failure as its
//! name and panic location, what it printed, its panic message, and the frames of
//! its backtrace that are in the project (the standard library's and dependencies'
//! frames go). The per-test `ok` lines, the list of failures that repeats the
//! sections' names, and the `RUST_BACKTRACE` note are what is left out; the marker
//! fetches them.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::digest::{Body, Digest};
use crate::doc::{Doc, Stream};

static RUNNING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^running \d+ tests?$").expect("compiles"));
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^---- (.+?) (?:stdout|stderr) ----$").expect("compiles"));
/// `thread 'a::b' (4711) panicked at src/lib.rs:9:5:` (1.73+; the thread id since
/// 1.87), or the older `thread 'a::b' panicked at 'msg', src/lib.rs:9:5`.
static PANIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^thread '(.+?)'(?: \(\d+\))? panicked at (.+?):?$").expect("compiles")
});
static FRAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s+\d+: (.+)$").expect("compiles"));
static AT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s+at (.+)$").expect("compiles"));

/// One failing test as the digest shows it.
struct Failure {
    name: String,
    at: Option<String>,
    lines: Vec<String>,
}

/// True for a frame location outside the project: the standard library, a
/// dependency in cargo's registry or git checkouts.
fn foreign(at: &str) -> bool {
    at.starts_with("/rustc/")
        || at.contains("/rustlib/")
        || at.contains("/.cargo/registry/")
        || at.contains("/.cargo/git/")
}

/// Finds each test binary's report in `range` and adds a digest for it.
pub fn find(doc: &Doc, out: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        if !doc.lines[i].text.starts_with("running ") || !RUNNING.is_match(&doc.lines[i].text) {
            i += 1;
            continue;
        }
        let start = i;
        let Some(end) = (start + 1..range.end).find(|&j| {
            let t = doc.lines[j].text.as_ref();
            t.starts_with("test result: ") || RUNNING.is_match(t)
        }) else {
            return;
        };
        if !doc.lines[end].text.starts_with("test result: ") {
            i = end;
            continue;
        }
        let failures = sections(doc, start + 1, end);
        let mut lines = vec![doc.lines[end].text.to_string()];
        for f in &failures {
            lines.push(match &f.at {
                Some(at) => format!("FAILED {} ({at})", f.name),
                None => format!("FAILED {}", f.name),
            });
            lines.extend(f.lines.iter().cloned());
        }
        out.digests.push(Digest {
            stream,
            start,
            end: end + 1,
            failure: !failures.is_empty() || doc.lines[end].text.contains("FAILED"),
            body: Body::Lines(lines),
            needs: Vec::new(),
            room: None,
        });
        i = end + 1;
    }
}

/// The `---- name stdout ----` sections between `from` and `to`.
fn sections(doc: &Doc, from: usize, to: usize) -> Vec<Failure> {
    let mut out: Vec<Failure> = Vec::new();
    let mut frame: Option<String> = None;
    let mut in_message = false;
    for l in &doc.lines[from..to] {
        let t = l.text.as_ref();
        if let Some(c) = SECTION.captures(t) {
            out.push(Failure {
                name: c[1].to_string(),
                at: None,
                lines: Vec::new(),
            });
            frame = None;
            in_message = false;
            continue;
        }
        let Some(f) = out.last_mut() else { continue };
        if t == "failures:" {
            // The closing list of names: every one has had its section.
            out.push(Failure {
                name: String::new(),
                at: None,
                lines: Vec::new(),
            });
            continue;
        }
        if f.name.is_empty() {
            continue;
        }
        if let Some(c) = PANIC.captures(t) {
            f.at = Some(c[2].to_string());
            in_message = true;
            continue;
        }
        if t.starts_with("note: ") && t.contains("RUST_BACKTRACE") {
            in_message = false;
            continue;
        }
        if t == "stack backtrace:" {
            in_message = false;
            continue;
        }
        if let Some(c) = FRAME.captures(t) {
            if !in_message {
                frame = Some(c[1].to_string());
                continue;
            }
        }
        if let Some(c) = AT.captures(t) {
            if let Some(func) = frame.take() {
                if !foreign(&c[1]) {
                    f.lines.push(format!("  at {} {func}", &c[1]));
                }
                continue;
            }
        }
        if t.is_empty() {
            continue;
        }
        f.lines.push(t.to_string());
    }
    out.retain(|f| !f.name.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use crate::digest::Detail;
    use crate::doc::Doc;

    /// The compare case's run: three assertion failures, no backtrace.
    const MONEY: &str = include_str!("../../../../cases/cargo-test/recording/000.stdout");
    /// Another crate with RUST_BACKTRACE=1: unit tests with captured output and a
    /// should_panic, an integration test, and doc-tests.
    const LEDGER: &str = include_str!("../../../tests/fixtures/cargo-test-backtrace.stdout");

    fn digests(stdout: &str) -> Vec<Vec<String>> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, stdout, "", 101);
        crate::stages::classify::run(&mut doc);
        // The report digests; the per-test lines' own digests sit inside them.
        let mut last = 0;
        let mut out = Vec::new();
        for d in &doc.digests {
            if d.start >= last {
                out.push(d.lines(&doc, Detail::Full));
                last = d.end;
            }
        }
        out
    }

    #[test]
    fn a_report_is_its_result_and_its_failures() {
        let d = digests(MONEY);
        assert_eq!(d.len(), 1);
        let d = &d[0];
        assert!(d[0].starts_with("test result: FAILED. 77 passed; 3 failed;"));
        assert_eq!(
            &d[1..5],
            [
                "FAILED tests::reduced_rate_rounds (src/lib.rs:422:9)",
                "assertion `left == right` failed",
                "  left: 1068",
                " right: 1069",
            ]
        );
        assert_eq!(d.len(), 13, "{d:#?}");
        assert!(!d.iter().any(|l| l.contains("RUST_BACKTRACE")));
    }

    #[test]
    fn backtraces_keep_the_project_frames_and_each_binary_has_its_digest() {
        let d = digests(LEDGER);
        assert_eq!(d.len(), 3, "{d:#?}");
        assert_eq!(
            d[0],
            [
                "test result: FAILED. 7 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s",
                "FAILED tests::split_keeps_the_total (src/lib.rs:28:9)",
                "parts: [33, 33, 33]",
                "assertion `left == right` failed: lost a cent splitting [33, 33, 33]",
                "  left: 99",
                " right: 100",
                "  at ./src/lib.rs:28:9 ledger::tests::split_keeps_the_total",
                "  at ./src/lib.rs:25:31 ledger::tests::split_keeps_the_total::{{closure}}",
            ]
        );
        assert_eq!(d[1][1], "FAILED split_in_two (tests/api.rs:3:5)");
        assert_eq!(
            d[2],
            ["test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s"]
        );
    }
}
