//! Shapes shared across tools: the way most of them say error, warning and done.

use std::sync::LazyLock;

use regex::Regex;

use crate::doc::Class;
use crate::stages::blocks;

static ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:",
        r"(?:error|fatal|ERROR|FATAL|Error)(?:\[[\w-]+\])?:",
        r"|\S+?:\d+(?::\d+)?:\s*(?:fatal )?error\b",
        r"|\S+\(\d+,\d+\): error\b",
        r"|Traceback \(most recent call last\)",
        r"|(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt|Exit)(?::|$)",
        r"|E\s{2,}\S",
        r"|FAILED\b|FAIL\b|--- FAIL\b",
        r"|thread '.*' panicked",
        r"|npm (?:ERR!|error\b)",
        r"|make(?:\[\d+\])?: \*\*\*",
        r"|\s*(?:✗|✖|×|✘)\s",
        r"|Segmentation fault|Aborted|Killed\b",
        r")"
    ))
    .expect("error pattern compiles")
});

static ERROR_ANYWHERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"panicked at|: (?:fatal )?error:").expect("compiles"));

static WARNING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:",
        r"(?:warning|WARNING|Warning|WARN|warn)(?:\[[\w-]+\])?:",
        r"|\S+?:\d+(?::\d+)?:\s*warning\b",
        r"|npm WARN\b|npm warn\b",
        r"|\S+Warning: ",
        r")"
    ))
    .expect("warning pattern compiles")
});

static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:",
        r"test result:|\s*Finished\b|\s*Running\b",
        r"|=+ .*\b(?:passed|failed|errors?|skipped|no tests ran)\b.* =+$",
        r"|(?:Tests|Test Suites|Test Files|Snapshots):\s",
        r"|(?:ok|FAIL|PASS)\s+\S+\s+[\d.]+s$|PASS$|ok$",
        r"|Found \d+ errors?|\d+ problems?\b|✖ \d+ problems?",
        r"|error: could not compile|Ran \d+ tests?|OK(?: \(.*\))?$|FAILED \(",
        r"|# (?:pass|fail|tests|suites)\s+\d+",
        r"|\d+ (?:passed|failed)\b",
        r")"
    ))
    .expect("summary pattern compiles")
});

/// True when a line reads as a failure.
pub fn is_error(text: &str) -> bool {
    might_be_error(text) && (ERROR.is_match(text) || ERROR_ANYWHERE.is_match(text))
}

/// True when a line sums up the run.
pub fn is_summary(text: &str) -> bool {
    might_be_summary(text) && SUMMARY.is_match(text)
}

/// One pass over a line for any of `needles` (a literal alternation, which the regex
/// crate runs as a multi-substring search and compiles in microseconds).
fn literals(needles: &[&str]) -> Regex {
    let alternation: Vec<String> = needles.iter().map(|n| regex::escape(n)).collect();
    Regex::new(&alternation.join("|")).expect("literals compile")
}

// Every alternative of ERROR and ERROR_ANYWHERE holds one of these words (or starts
// with E), so a line without any cannot match; most lines have none, and the full
// patterns are then never compiled or run. Likewise for SUMMARY and WARNING.
const ERROR_LIST: &[&str] = &[
    "rror",
    "RROR",
    "atal",
    "ATAL",
    "Traceback",
    "xception",
    "nterrupt",
    "Exit",
    "FAIL",
    "panicked",
    "npm ",
    "make",
    "Segmentation",
    "Aborted",
    "Killed",
    "✗",
    "✖",
    "×",
    "✘",
];
const SUMMARY_LIST: &[&str] = &[
    "test result",
    "Finished",
    "Running",
    "Test",
    "Snapshots",
    "FAIL",
    "PASS",
    "Found",
    "problem",
    "compile",
    "Ran ",
    "OK",
    "passed",
    "failed",
];
const WARNING_LIST: &[&str] = &["arn", "ARN"];

static ERROR_WORDS: LazyLock<Regex> = LazyLock::new(|| literals(ERROR_LIST));
static SUMMARY_WORDS: LazyLock<Regex> = LazyLock::new(|| literals(SUMMARY_LIST));
static WARNING_WORDS: LazyLock<Regex> = LazyLock::new(|| literals(WARNING_LIST));
/// All three lists in one scan.
static ANY_WORDS: LazyLock<Regex> =
    LazyLock::new(|| literals(&[ERROR_LIST, SUMMARY_LIST, WARNING_LIST].concat()));

fn might_be_error(text: &str) -> bool {
    text.starts_with('E') || ERROR_WORDS.is_match(text)
}

fn might_be_summary(text: &str) -> bool {
    text.starts_with('=')
        || text.starts_with("ok")
        || text.starts_with('#')
        || SUMMARY_WORDS.is_match(text)
}

fn might_be_warning(text: &str) -> bool {
    WARNING_WORDS.is_match(text)
}

/// The class of one line, from its text alone.
pub fn class_of(text: &str) -> Class {
    if text.trim().is_empty() {
        return Class::Blank;
    }
    // Most lines hold none of the words any of the three classes needs: one scan
    // for all of them decides that, instead of three.
    let maybe =
        text.starts_with(['E', '=', '#']) || text.starts_with("ok") || ANY_WORDS.is_match(text);
    if !maybe {
        return if is_source_quote(text) {
            Class::Source
        } else {
            Class::Plain
        };
    }
    // Summaries first: `test result: FAILED.` is a summary that happens to fail.
    if is_summary(text) {
        Class::Summary
    } else if is_error(text) {
        Class::Error
    } else if might_be_warning(text) && WARNING.is_match(text) {
        Class::Warning
    } else if is_source_quote(text) {
        Class::Source
    } else {
        Class::Plain
    }
}

/// rustc-style quoted source and its gutter (`12 |  code`, `   |    ^^^`), and the
/// suggested edit under a `help:` (`5 -     return y;`, `5 +     y`, `78 ~ fn f(`).
fn is_source_quote(text: &str) -> bool {
    let t = text.trim_start();
    let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
    if blocks::is_continuation(text) && rest.trim_start().starts_with('|') {
        return true;
    }
    rest.len() < t.len()
        && ["- ", "+ ", "~ "]
            .iter()
            .any(|p| rest.trim_start_matches(' ').starts_with(p))
        && rest.starts_with(' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_from_several_tools() {
        for l in [
            "error[E0308]: mismatched types",
            "error: could not find `Cargo.toml`",
            "src/main.c:3:5: error: expected ';'",
            "src/a.ts(3,7): error TS2322: Type 'string' is not assignable",
            "Traceback (most recent call last):",
            "ValueError: bad value",
            "E       assert 1 == 2",
            "FAILED tests/test_a.py::test_x - assert 1 == 2",
            "--- FAIL: TestThing (0.00s)",
            "thread 'main' panicked at src/main.rs:2:5:",
            "npm ERR! code E404",
            "make: *** [Makefile:3: all] Error 1",
            "fatal: not a git repository",
        ] {
            assert_eq!(class_of(l), Class::Error, "{l}");
        }
    }

    #[test]
    fn not_errors() {
        for l in [
            "0 errors",
            "Compiled with no error reports",
            "test error_handling ... ok",
            "   Compiling errno v0.3",
        ] {
            assert_ne!(class_of(l), Class::Error, "{l}");
        }
    }

    #[test]
    fn warnings_summaries_and_source() {
        assert_eq!(class_of("warning: unused variable: `x`"), Class::Warning);
        assert_eq!(class_of("a.c:1:2: warning: implicit"), Class::Warning);
        assert_eq!(
            class_of("test result: FAILED. 3 passed; 1 failed"),
            Class::Summary
        );
        assert_eq!(
            class_of("========= 2 failed, 40 passed in 0.31s ========="),
            Class::Summary
        );
        assert_eq!(class_of("    Finished `dev` profile"), Class::Summary);
        assert_eq!(class_of("12 |     let x = 1;"), Class::Source);
        assert_eq!(class_of("   |         ^ expected"), Class::Source);
        assert_eq!(class_of("5 -     return y + 1.0;"), Class::Source);
        assert_eq!(class_of("78 ~ pub fn f(v: &[String]) {"), Class::Source);
        assert_eq!(class_of("12 apples and 3 pears"), Class::Plain);
    }
}
