//! Shapes shared across tools: the way most of them say error, warning and done.

use std::sync::LazyLock;

use regex::Regex;

use crate::doc::Class;
use crate::stages::blocks;

// The error and warning lexicon: every line Lens calls an error or a warning is
// one these patterns (or a log line's level, `log::class`) call so, and a
// marker's count of a region's errors and warnings asks the same question
// (`trouble`). All are anchored or literal-led, and the `regex` crate runs them in
// time linear in the line.
static ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:",
        r"(?:error|fatal|ERROR|FATAL|Error)(?:\[[\w-]+\])?:",
        r"|PHP (?:Fatal|Parse) error:",
        r"|(?:[Ff]atal|FATAL) (?:[Ee]rror|ERROR|[Ee]xception|EXCEPTION)\b",
        r"|\S+?:\d+(?::\d+)?:\s*(?:fatal )?error\b",
        r"|\S+\(\d+,\d+\): error\b",
        r"|Traceback \(most recent call last\)",
        r"|(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt|Exit)(?::|$)",
        r"|Exception in thread\b",
        r"|\s*Uncaught (?:\(in promise\) )?[\w.]*(?:Error|Exception)\b",
        r"|E\s{2,}\S",
        r"|FAILED\b|FAIL\b|--- FAIL\b",
        r"|thread '.*' panicked|panic: |fatal error: ",
        // An upper-case level word leading the line: `ERROR worker crashed`,
        // `CRITICAL disk full`, `SEVERE: x`.
        r"|(?:ERROR|FATAL|CRITICAL|CRIT|SEVERE|PANIC)(?:$|[\s:\],|])",
        // Android's logcat, brief (`E/Tag( 12): …`), tag (`E Tag: …`) and
        // threadtime (`01-01 12:00:00.123  12  34 E Tag: …`) formats.
        r"|(?:\d\d-\d\d \d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+\s+)?[EF][/ ][\w.$-]+\s*(?:\(\s*\d+\))?: ",
        // The kernel's and systemd's priority prefix: 0 emerg to 3 err.
        r"|<[0-3]>",
        r"|npm (?:ERR!|error\b)",
        r"|make(?:\[\d+\])?: \*\*\*",
        r"|(?:\S*/)?ld(?:\.\w+)?: (?:symbol\(s\) not found|library not found|cannot find|framework not found)",
        r"|Undefined symbols for architecture",
        r"|\s*(?:✗|✖|×|✘)\s",
        r"|Segmentation fault|Aborted|Killed\b",
        r")"
    ))
    .expect("error pattern compiles")
});

static ERROR_ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"panicked at|: (?:fatal )?error:|undefined reference to `",
        // A logfmt or JSON level past the line's start (`app | level=error …`).
        r#"|(?:^|\s)(?:level|lvl)=(?:error|fatal|crit|critical|panic)\b"#,
        r#"|"(?:level|severity|lvl)": ?"(?i:error|err|fatal|crit|critical|panic|emerg|alert)""#,
    ))
    .expect("compiles")
});

static WARNING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:",
        r"(?:warning|WARNING|Warning|WARN|warn)(?:\[[\w-]+\])?:",
        r"|(?:WARNING|WARN)(?:$|[\s\],|])",
        r"|\S+?:\d+(?::\d+)?:\s*warning\b",
        r"|npm WARN\b|npm warn\b|PHP Warning:",
        r"|\S+Warning: ",
        r"|(?:\d\d-\d\d \d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+\s+)?W[/ ][\w.$-]+\s*(?:\(\s*\d+\))?: ",
        r"|<4>",
        r")",
        r#"|(?:^|\s)(?:level|lvl)=warn(?:ing)?\b|"(?:level|severity|lvl)": ?"(?i:warn|warning)""#,
    ))
    .expect("warning pattern compiles")
});

/// The advice Maven prints under every failed build, each line tagged `[ERROR]`:
/// how to rerun it, where to read more, the empty lines between. Not a failure.
static MAVEN_ADVICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^\[ERROR\] ?(?:$|-> \[Help \d+\]$|\[Help \d+\] http",
        r"|To see the full stack trace of the errors|Re-run Maven using the -X switch",
        r"|For more information about the errors and possible solutions",
        r"|Please refer to (?:dump files|\S+ for the individual test results)",
        r"|After correcting the problems, you can resume the build|  mvn <args> -rf :)"
    ))
    .expect("compiles")
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
        // Maven: the reactor summary, its module rows, the build's verdict.
        r"|\[INFO\] (?:Reactor Summary\b|BUILD (?:SUCCESS|FAILURE)\b|\S.*? \.{2,} ?(?:SUCCESS|FAILURE|SKIPPED)\b)",
        // Surefire's aggregate under `Results:` (a class's own line ends `-- in x.Y`).
        r"|\[INFO\] Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+$",
        r")"
    ))
    .expect("summary pattern compiles")
});

/// True when a line reads as a failure.
pub fn is_error(text: &str) -> bool {
    error_given(text, words(text))
}

fn error_given(text: &str, lists: u8) -> bool {
    might_be_error(text, lists) && (ERROR.is_match(text) || ERROR_ANYWHERE.is_match(text))
}

/// True when a line sums up the run.
pub fn is_summary(text: &str) -> bool {
    summary_given(text, words(text))
}

fn summary_given(text: &str, lists: u8) -> bool {
    might_be_summary(text, lists) && SUMMARY.is_match(text)
}

// Every alternative of ERROR and ERROR_ANYWHERE holds one of the error words (or
// starts with E), so a line without any cannot match; likewise for SUMMARY and
// WARNING. Most lines hold none, and the full patterns are then never compiled or
// run. The words are found by `words`, a scanner with nothing to build: a literal
// regex over them cost a fresh process more to compile (about 1.5M instructions)
// than the rest of filtering a short output.
const IN_ERROR: u8 = 1;
const IN_SUMMARY: u8 = 2;
const IN_WARNING: u8 = 4;

/// A word, the lists it belongs to, and its anchor: the offset of a byte pair in it
/// that ordinary text rarely holds, which is what the scan looks for.
struct Word {
    text: &'static str,
    anchor: usize,
    lists: u8,
}

const fn w(text: &'static str, anchor: usize, lists: u8) -> Word {
    Word {
        text,
        anchor,
        lists,
    }
}

const WORDS: &[Word] = &[
    w("rror", 0, IN_ERROR),
    w("RROR", 0, IN_ERROR),
    w("atal", 1, IN_ERROR),
    w("ATAL", 1, IN_ERROR),
    w("Traceback", 0, IN_ERROR),
    w("xception", 0, IN_ERROR),
    w("nterrupt", 3, IN_ERROR),
    w("Exit", 0, IN_ERROR),
    w("FAIL", 0, IN_ERROR | IN_SUMMARY),
    w("panic", 2, IN_ERROR),
    w("PANIC", 2, IN_ERROR),
    w("CRIT", 0, IN_ERROR),
    w("crit", 0, IN_ERROR),
    w("SEVERE", 0, IN_ERROR),
    w("ld: ", 1, IN_ERROR),
    w("symbol(s)", 6, IN_ERROR),
    w("ndefined ", 4, IN_ERROR),
    w("\"err\"", 0, IN_ERROR),
    w("npm ", 0, IN_ERROR),
    w("make", 1, IN_ERROR),
    w("Segmentation", 0, IN_ERROR),
    w("Aborted", 0, IN_ERROR),
    w("Killed", 0, IN_ERROR),
    w("✗", 1, IN_ERROR),
    w("✖", 1, IN_ERROR),
    w("×", 0, IN_ERROR),
    w("✘", 1, IN_ERROR),
    w("test result", 9, IN_SUMMARY),
    w("Finished", 0, IN_SUMMARY),
    w("Running", 0, IN_SUMMARY),
    w("Test", 0, IN_SUMMARY),
    w("Snapshots", 0, IN_SUMMARY),
    w("PASS", 0, IN_SUMMARY),
    w("Found", 0, IN_SUMMARY),
    w("problem", 3, IN_SUMMARY),
    w("compile", 2, IN_SUMMARY),
    w("Ran ", 0, IN_SUMMARY),
    w("OK", 0, IN_SUMMARY),
    w("passed", 2, IN_SUMMARY),
    w("failed", 2, IN_SUMMARY),
    w("SUCCESS", 0, IN_SUMMARY),
    w("SKIPPED", 0, IN_SUMMARY),
    w("Reactor Summary", 0, IN_SUMMARY),
    w("arn", 1, IN_WARNING),
    w("ARN", 1, IN_WARNING),
];

const fn pair(a: u8, b: u8) -> usize {
    a as usize | (b as usize) << 8
}

/// One bit per byte pair: set when some word's anchor is that pair.
static ANCHORS: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let mut i = 0;
    while i < WORDS.len() {
        let b = WORDS[i].text.as_bytes();
        let k = pair(b[WORDS[i].anchor], b[WORDS[i].anchor + 1]);
        t[k >> 6] |= 1 << (k & 63);
        i += 1;
    }
    t
};

/// Buckets of words by anchor pair: a hit checks the few words in its pair's
/// bucket (indices plus one, 0 ends the list) instead of every word. Source code
/// holds anchor pairs often (`return` holds `rn`), so this is most of the scan's
/// cost on a diff. A bucket that overflows fails the build.
const BUCKETS: usize = 64;

const fn bucket(k: usize) -> usize {
    (k.wrapping_mul(0x9e37) >> 9) & (BUCKETS - 1)
}

static BY_ANCHOR: [[u8; 4]; BUCKETS] = {
    let mut t = [[0u8; 4]; BUCKETS];
    let mut i = 0;
    while i < WORDS.len() {
        let b = WORDS[i].text.as_bytes();
        let slot = bucket(pair(b[WORDS[i].anchor], b[WORDS[i].anchor + 1]));
        let mut j = 0;
        while t[slot][j] != 0 {
            j += 1;
        }
        t[slot][j] = i as u8 + 1;
        i += 1;
    }
    t
};

/// The lists (`IN_*` bits) that any word in `text` belongs to.
fn words(text: &str) -> u8 {
    let b = text.as_bytes();
    let mut lists = 0;
    let mut i = 0;
    // Eight pairs from one load (and the byte after it), tested without a branch;
    // only a chunk with an anchor hit looks further.
    while i + 9 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let last = (w >> 56) | u64::from(b[i + 8]) << 8;
        let mut hits = 0u32;
        for j in 0..8 {
            let k = if j < 7 { (w >> (8 * j)) & 0xffff } else { last };
            hits |= u32::from(anchored(k as u16)) << j;
        }
        while hits != 0 {
            let j = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            lists |= found_at(b, i + j);
        }
        if lists == IN_ERROR | IN_SUMMARY | IN_WARNING {
            return lists;
        }
        i += 8;
    }
    for at in i..b.len().saturating_sub(1) {
        if anchored(u16::from(b[at]) | u16::from(b[at + 1]) << 8) {
            lists |= found_at(b, at);
        }
    }
    lists
}

/// True when some word's anchor is the pair `k` (first byte low).
fn anchored(k: u16) -> bool {
    ANCHORS[usize::from(k >> 6)] & (1 << (k & 63)) != 0
}

/// The lists of the words whose anchor pair starts at `b[i]`.
fn found_at(b: &[u8], i: usize) -> u8 {
    let k = pair(b[i], b[i + 1]);
    let mut lists = 0;
    for &n in BY_ANCHOR[bucket(k)].iter().take_while(|&&n| n != 0) {
        let word = &WORDS[usize::from(n) - 1];
        let t = word.text.as_bytes();
        let found = pair(t[word.anchor], t[word.anchor + 1]) == k
            && i >= word.anchor
            && b[i - word.anchor..].starts_with(t);
        if found {
            lists |= word.lists;
        }
    }
    lists
}

fn might_be_error(text: &str, lists: u8) -> bool {
    text.starts_with(['E', 'F', '<']) || lists & IN_ERROR != 0 || logcat_clock(text)
}

fn might_be_warning(text: &str, lists: u8) -> bool {
    text.starts_with(['W', '<']) || lists & IN_WARNING != 0 || logcat_clock(text)
}

/// True when a line starts like logcat's threadtime format, `01-01 12:00:00.123`:
/// its level letter comes after the pid and the tid, past where a word is sought.
fn logcat_clock(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() > 20 && b[2] == b'-' && b[5] == b' ' && b[8] == b':' && b[0].is_ascii_digit()
}

/// What the lexicon calls a line: an error, a warning, or neither (`None`). A
/// summary that fails (`error: could not compile …`, `FAILED (failures=1)`) is an
/// error here: a marker counting a region's trouble must not miss it, though the
/// line's class is `Summary`. A log line is what its level says.
pub fn trouble(text: &str) -> Option<Class> {
    let class = match class_of(text) {
        Class::Summary => error_or_warning(text, words(text)),
        c => Some(c),
    };
    class.filter(|c| matches!(c, Class::Error | Class::Warning))
}

fn error_or_warning(text: &str, lists: u8) -> Option<Class> {
    if error_given(text, lists) {
        Some(Class::Error)
    } else if might_be_warning(text, lists) && WARNING.is_match(text) {
        Some(Class::Warning)
    } else {
        None
    }
}

fn might_be_summary(text: &str, lists: u8) -> bool {
    text.starts_with('=')
        || text.starts_with("ok")
        || text.starts_with('#')
        || lists & IN_SUMMARY != 0
}

/// The class of one line, from its text alone.
pub fn class_of(text: &str) -> Class {
    if text.trim().is_empty() {
        return Class::Blank;
    }
    if text.starts_with("[ERROR]") && MAVEN_ADVICE.is_match(text) {
        return Class::Plain;
    }
    // A log line is classified by its level word, wherever its timestamp puts it.
    if let Some(class) = super::log::class(text, class_of) {
        return class;
    }
    // Most lines hold none of the words any of the three classes needs: one scan
    // for all of them decides that, and says which of the three patterns can match.
    let lists = words(text);
    let maybe = lists != 0
        || text.starts_with(['E', 'F', 'W', '<', '=', '#'])
        || text.starts_with("ok")
        || logcat_clock(text);
    if !maybe {
        return if is_source_quote(text) {
            Class::Source
        } else {
            Class::Plain
        };
    }
    // Summaries first: `test result: FAILED.` is a summary that happens to fail.
    if summary_given(text, lists) {
        Class::Summary
    } else if let Some(class) = error_or_warning(text, lists) {
        class
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

/// The error and warning forms the lexicon's tests (here and in `render`) hold
/// it to.
#[cfg(test)]
pub(crate) mod forms {
    /// The twenty error forms of issue 29 and the common log formats: each is an
    /// error to the lexicon and to a line's class.
    pub const ERROR_FORMS: &[&str] = &[
        // Called "no error or warning" before the lexicon held them.
        "FATAL ERROR: out of memory",
        "ERROR worker crashed at 17",
        "E AndroidRuntime: FATAL EXCEPTION: main",
        "01-01 12:00:00.123  1234  1234 E AndroidRuntime: FATAL EXCEPTION: main",
        "E/AndroidRuntime( 1234): FATAL EXCEPTION: main",
        "panic: runtime error: index out of range [5] with length 3",
        "CRITICAL disk almost full on /var",
        "CRIT the pool is exhausted",
        "ld: symbol(s) not found for architecture arm64",
        "Uncaught TypeError: Cannot read properties of undefined (reading 'x')",
        "Exception in thread \"main\" java.lang.NullPointerException",
        "PHP Fatal error:  Uncaught Exception: boom in /srv/a.php:3",
        "fatal error: all goroutines are asleep - deadlock!",
        "/usr/bin/ld: cannot find -lssl",
        "SEVERE: Servlet.service() threw exception",
        "<3>kernel: I/O error on sda",
        "web-1  | level=error msg=\"connection refused\"",
        "app | {\"severity\":\"ERROR\",\"message\":\"boom\"",
        // Already errors before.
        "error: linking with `cc` failed",
        "error[E0308]: mismatched types",
        "src/main.c:3:5: error: expected ';' before '}' token",
        "Traceback (most recent call last):",
        "npm ERR! code E404",
        "FAILED tests/test_a.py::test_x - assert 1 == 2",
        "thread 'main' panicked at src/main.rs:2:5:",
        "[ERROR] could not bind 0.0.0.0:80",
        "[error] upstream timed out",
        "2024-01-01 12:00:00 ERROR db: connection refused",
        "level=error msg=\"connection refused\"",
        "{\"level\":\"error\",\"msg\":\"connection refused\"}",
        "{\"severity\":\"ERROR\",\"message\":\"boom\"}",
        "FATAL: database system is shut down",
        "Segmentation fault (core dumped)",
        "fatal: not a git repository",
        "make: *** [Makefile:3: all] Error 1",
    ];

    /// Warnings in the same formats.
    pub const WARNING_FORMS: &[&str] = &[
        "warning: unused variable: `x`",
        "src/a.c:1:2: warning: implicit declaration",
        "WARN config key deprecated",
        "WARNING: the cache is stale",
        "[WARN] config key deprecated",
        "2024-01-01 12:00:00 WARNING disk at 91%",
        "level=warn msg=slow",
        "{\"level\":\"warn\",\"msg\":\"slow\"}",
        "W/ActivityManager( 512): Slow operation",
        "npm WARN deprecated left-pad@1.0.0",
        "PHP Warning:  Undefined variable $x in /srv/a.php on line 3",
        "<4>kernel: low memory",
    ];

    /// Lines that name errors without being one: calling them errors would keep
    /// them over what matters and make markers cry wolf.
    pub const NOT_TROUBLE: &[&str] = &[
        "0 errors",
        "no errors found",
        "Compiled with no error reports",
        "error_count=0 warning_count=0",
        "ErrorHandler registered for /api",
        "src/errors.go",
        "ok  \texample.com/errors\t0.01s",
        "cc -Wall -Werror -o app main.c",
        "test error_handling ... ok",
        "   Compiling errno v0.3.8",
        "ERRORS: 0",
        "Warnings: none",
        "the panic button is documented in panic.md",
        "Everything critical passed",
        "Each entry must be unique",
        "2024-01-01 12:00:00 INFO retrying after error budget check",
    ];
}

#[cfg(test)]
mod tests {
    use super::forms::{ERROR_FORMS, NOT_TROUBLE, WARNING_FORMS};

    #[test]
    fn mavens_advice_under_a_failed_build_is_not_a_failure() {
        for advice in [
            "[ERROR] -> [Help 1]",
            "[ERROR] ",
            "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.",
            "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException",
            "[ERROR]   mvn <args> -rf :depots",
        ] {
            assert_eq!(class_of(advice), Class::Plain, "{advice}");
        }
        let failure = "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test (default-test) on project depots: There are test failures.";
        assert!(!MAVEN_ADVICE.is_match(failure));
    }
    use super::*;

    #[test]
    fn the_word_scan_finds_what_a_search_finds() {
        let naive = |text: &str| {
            WORDS
                .iter()
                .filter(|w| text.contains(w.text))
                .fold(0, |l, w| l | w.lists)
        };
        for text in [
            "",
            "r",
            "error",
            "rror at the start",
            "an ERROR and a warning",
            "✗ broken ×",
            "make[1]: *** Error 2",
            "test result: ok. 3 passed",
            "Running unittests (target/debug/deps/x)",
            "npm WARN deprecated",
            "fatal: x",
            "nothing here at all",
            "panicked at src/main.rs",
            "nterrupt",
        ] {
            assert_eq!(words(text), naive(text), "{text:?}");
        }
        // Every word is found alone, at the start, in the middle and at the end.
        for w in WORDS {
            for text in [
                w.text.to_string(),
                format!("a {}", w.text),
                format!("{} z", w.text),
                format!("é{}é", w.text),
            ] {
                assert_eq!(words(&text) & w.lists, w.lists, "{text:?}");
                assert_eq!(words(&text), naive(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn mavens_reactor_summary_and_verdict_are_summary_lines() {
        for t in [
            "[INFO] Reactor Summary for ledger-parent 1.4.0-SNAPSHOT:",
            "[INFO] ledger-api ........................................ SUCCESS [  5.121 s]",
            "[INFO] ledger-billing .................................... FAILURE [  2.004 s]",
            "[INFO] ledger-cli ........................................ SKIPPED",
            "[INFO] BUILD SUCCESS",
            "[INFO] BUILD FAILURE",
            "[INFO] Tests run: 977, Failures: 0, Errors: 0, Skipped: 61",
        ] {
            assert!(is_summary(t), "{t:?}");
        }
        for t in [
            "[INFO] Building jar: /w/target/ledger-api-1.4.0-SNAPSHOT.jar",
            "[INFO] --- maven-surefire-plugin:3.2.2:test (default-test) @ ledger-api ---",
            "[INFO] Running com.example.ledger.api.CaseTest",
            "[INFO] Tests run: 34, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 1.0 s -- in x.UtilTest",
        ] {
            assert!(!is_summary(t), "{t:?}");
        }
    }

    #[test]
    fn a_maven_build_over_the_budget_keeps_its_reactor_summary() {
        let mut log = String::from("[INFO] Scanning for projects...\n");
        let mods: Vec<String> = (0..8).map(|i| format!("ledger-mod{i}")).collect();
        for m in &mods {
            for k in 0..30 {
                log.push_str(&format!(
                    "[INFO] --- maven-compiler-plugin:3.11.0:compile (default-compile) @ {m} --- step {k}\n"
                ));
            }
        }
        log.push_str("[INFO] Reactor Summary for ledger-parent 1.4.0-SNAPSHOT:\n[INFO] \n");
        for (i, m) in mods.iter().enumerate() {
            log.push_str(&format!(
                "[INFO] {m} {} SUCCESS [  {}.{:03} s]\n",
                ".".repeat(40 - m.len()),
                [3, 1, 4, 1, 5, 9, 2, 6][i],
                (i * 389) % 1000
            ));
        }
        log.push_str("[INFO] BUILD SUCCESS\n[INFO] Total time:  24.118 s\n");
        assert!(log.len() > crate::DEFAULT_BUDGET * 3);
        let argv: Vec<String> = vec!["mvn".into(), "install".into()];
        let req = crate::Request {
            argv: &argv,
            stdout: log.as_bytes(),
            stderr: b"",
            exit: 0,
        };
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("0a1b2c3d"));
        let v = crate::view(&req, &opts);
        let text = String::from_utf8_lossy(&v.stdout);
        assert!(
            text.contains("[INFO] Reactor Summary for ledger-parent"),
            "{text}"
        );
        for m in &mods {
            assert!(text.contains(&format!("[INFO] {m} ")), "{m}: {text}");
        }
        assert!(text.contains("[INFO] BUILD SUCCESS"));
    }

    proptest::proptest! {
        #[test]
        fn the_word_scan_agrees_on_any_text(text in "[a-zA-Z ✗×:]{0,40}|(rror|arn|FAIL|Test|ok|make|[a-z ]){0,12}") {
            let naive = WORDS
                .iter()
                .filter(|w| text.contains(w.text))
                .fold(0, |l, w| l | w.lists);
            proptest::prop_assert_eq!(words(&text), naive);
        }
    }

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
    fn every_common_error_form_is_an_error() {
        for l in ERROR_FORMS {
            assert_eq!(class_of(l), Class::Error, "{l}");
            assert_eq!(trouble(l), Some(Class::Error), "{l}");
        }
    }

    #[test]
    fn every_common_warning_form_is_a_warning() {
        for l in WARNING_FORMS {
            assert_eq!(class_of(l), Class::Warning, "{l}");
            assert_eq!(trouble(l), Some(Class::Warning), "{l}");
        }
    }

    #[test]
    fn words_about_errors_are_not_trouble() {
        for l in NOT_TROUBLE {
            assert_eq!(trouble(l), None, "{l}");
            assert!(!matches!(class_of(l), Class::Error | Class::Warning), "{l}");
        }
    }

    #[test]
    fn a_failing_summary_is_trouble_though_its_class_is_summary() {
        let l = "error: could not compile `app` (bin \"app\") due to 1 previous error";
        assert_eq!(class_of(l), Class::Summary);
        assert_eq!(trouble(l), Some(Class::Error));
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
