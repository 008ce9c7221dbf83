//! Maven: Surefire's and Failsafe's results (`mvn test`, `mvn install`). Each
//! test class prints `Running x.FooTest` and then `Tests run: 3, Failures: 0,
//! Errors: 0, Skipped: 1, Time elapsed: 0.02 s -- in x.FooTest` (`- in` before
//! Surefire 3). A run of classes that passed becomes one count line and the
//! classes by package, with the skipped counts (Surefire's `T E S T S` banner
//! above the first goes with them, and what a passing class printed between its
//! two lines, counted); a class that failed or erred, with its stack trace, stays
//! as printed and ends the run. Their times, and each
//! class's own test count, are in the stored output the marker names. The
//! aggregate `Tests run:` line under `Results:` is not a class's and stays.
//!
//! Under a failed build Maven prints the same advice every time (re-run with
//! `-e` or `-X`, read the help page, resume with `-rf`), seven lines or more
//! tagged `[ERROR]`. Its digest is the lines in it that name something of this
//! run (the reports directory, the help page, the module to resume from), as
//! printed, under one line saying the rest is Maven's advice.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::digest::Digest;
use crate::doc::{Doc, Stream};

/// A level tag, as Maven prints it before every line (absent under `-B -q` and in
/// Surefire's own console output).
const TAG: &str = r"^(?:\[(?:INFO|WARNING|ERROR)\] )?";

static RUNNING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"{TAG}Running (\S+)$")).expect("compiles"));
static CLASS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"{TAG}Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+), Time elapsed: [^,]*?(<<< .*?)? --? in (\S+)$"
    ))
    .expect("compiles")
});

static BANNER_RULE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"{TAG}-{{20,}}$")).expect("compiles"));

/// A class's result line, when the class passed: its name, tests and skipped.
fn passed(text: &str) -> Option<(&str, u64, u64)> {
    if !text.contains("Tests run: ") {
        return None;
    }
    let c = CLASS.captures(text)?;
    let n = |i: usize| c[i].parse::<u64>().ok();
    if n(2)? != 0 || n(3)? != 0 || c.get(5).is_some() {
        return None;
    }
    Some((c.get(6)?.as_str(), n(1)?, n(4)?))
}

/// A class's result line, whatever the result.
fn closes(text: &str) -> bool {
    text.contains("Tests run: ") && CLASS.is_match(text)
}

/// Lines a class may print before its result and still go with it: past this the
/// run ends (a hung class, or a log that only looks like one), so no line is read
/// by more than a few runs.
const MAX_PRINTED: usize = 500;

fn running(text: &str) -> Option<&str> {
    if !text.contains("Running ") {
        return None;
    }
    Some(RUNNING.captures(text)?.get(1)?.as_str())
}

/// A line Maven tagged with its level, or the reactor's own `[INFO]`: not a test's
/// output.
fn tagged(text: &str) -> bool {
    ["[INFO]", "[WARNING]", "[ERROR]", "[DEBUG]"]
        .iter()
        .any(|t| text.starts_with(t))
}

/// The advice under a failed build: what each line of it is.
#[derive(PartialEq)]
enum Advice {
    /// Says something of this run (a path, a page, a module): kept verbatim.
    Names,
    /// The same words under every failed build.
    Boilerplate,
}

static ADVICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^\[ERROR\] ?(?:$|-> \[Help \d+\]$",
        r"|To see the full stack trace of the errors, re-run Maven with the -e switch",
        r"|Re-run Maven using the -X switch to enable full debug logging",
        r"|For more information about the errors and possible solutions, please read the following articles:$",
        r"|(?:See|Please refer to) dump files \(if any exist\)",
        r"|After correcting the problems, you can resume the build with the command$)",
    ))
    .expect("compiles")
});
static ADVICE_NAMES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\[ERROR\] (?:\[Help \d+\] \S+$|(?:See|Please refer to) \S+ for the individual test results\.?$|  mvn <args> -rf \S+$)",
    )
    .expect("compiles")
});

fn advice(text: &str) -> Option<Advice> {
    if !text.starts_with("[ERROR]") {
        return None;
    }
    if ADVICE.is_match(text) {
        Some(Advice::Boilerplate)
    } else if ADVICE_NAMES.is_match(text) {
        Some(Advice::Names)
    } else {
        None
    }
}

/// Runs of advice shorter than this stay as printed.
const MIN_ADVICE: usize = 4;

/// Adds a digest for every run of Maven's advice in `range`.
fn find_advice(doc: &Doc, out: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        if advice(&doc.lines[i].text).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        let mut named = Vec::new();
        while i < range.end {
            match advice(&doc.lines[i].text) {
                Some(Advice::Names) => named.push(doc.lines[i].text.to_string()),
                Some(Advice::Boilerplate) => {}
                None => break,
            }
            i += 1;
        }
        let boilerplate = i - start - named.len();
        if i - start >= MIN_ADVICE && boilerplate > 0 {
            let mut lines = vec![format!(
                "{boilerplate} lines of Maven's advice (re-run with -e or -X, read the help page){}",
                if named.is_empty() { "" } else { "; what it names:" }
            )];
            lines.extend(named);
            out.digests.push(Digest::of_lines(stream, start, i, lines));
        }
    }
}

/// Adds a digest for every run of passed classes and of advice in `range`.
pub fn find(doc: &Doc, out: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    find_advice(doc, out, stream, range.clone());
    let text = |i: usize| doc.lines[i].text.as_ref();
    let mut i = range.start;
    while i < range.end {
        if running(text(i)).is_none() && passed(text(i)).is_none() {
            i += 1;
            continue;
        }
        // The run: classes starting and passing, and what a class prints between
        // the two. It ends where every class it started has passed; a class that
        // started and did not pass (it failed, or is still running) is not in it.
        let start = i;
        let mut open: Vec<&str> = Vec::new();
        let mut end = start;
        let mut classes: Vec<(&str, u64, u64)> = Vec::new();
        let mut closed = 0;
        let mut printed = 0;
        let mut printed_at_end = 0;
        while i < range.end {
            let t = text(i);
            if let Some(name) = running(t) {
                open.push(name);
            } else if let Some(p) = passed(t) {
                open.retain(|n| *n != p.0);
                classes.push(p);
            } else if !open.is_empty()
                && !tagged(t)
                && !closes(t)
                && printed - printed_at_end < MAX_PRINTED
            {
                printed += 1;
            } else {
                break;
            }
            i += 1;
            if open.is_empty() {
                end = i;
                closed = classes.len();
                printed_at_end = printed;
            }
        }
        classes.truncate(closed);
        if !classes.is_empty() {
            // Surefire's banner right above the first class says nothing the count
            // line does not: it goes with the run.
            let banner = start >= range.start + 3
                && BANNER_RULE.is_match(text(start - 3))
                && text(start - 2).ends_with(" T E S T S")
                && BANNER_RULE.is_match(text(start - 1));
            let from = if banner { start - 3 } else { start };
            out.digests.push(Digest::of_lines(
                stream,
                from,
                end,
                lines(&classes, printed_at_end),
            ));
        }
        i = end.max(start + 1);
    }
}

/// A count line, then one line per package (in the order first met) naming its
/// classes.
fn lines(classes: &[(&str, u64, u64)], printed: usize) -> Vec<String> {
    let tests: u64 = classes.iter().map(|c| c.1).sum();
    let skipped: u64 = classes.iter().map(|c| c.2).sum();
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut head = format!(
        "{} passed, {}",
        plural(classes.len() as u64, "test class", "test classes"),
        plural(tests, "test", "tests")
    );
    if skipped > 0 {
        head.push_str(&format!(", {skipped} skipped"));
    }
    if printed > 0 {
        head.push_str(&format!(
            "; the {} they printed are in the stored output",
            plural(printed as u64, "line", "lines")
        ));
    }
    let mut packages: Vec<(&str, Vec<String>)> = Vec::new();
    for &(name, _, skip) in classes {
        let (package, class) = name.rsplit_once('.').unwrap_or(("", name));
        let item = if skip > 0 {
            format!("{class} ({skip} skipped)")
        } else {
            class.to_string()
        };
        match packages.iter_mut().find(|(p, _)| *p == package) {
            Some((_, items)) => items.push(item),
            None => packages.push((package, vec![item])),
        }
    }
    let mut out = vec![head];
    for (package, items) in packages {
        let items = items.join(", ");
        out.push(if package.is_empty() {
            items
        } else {
            format!("{package}: {items}")
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::doc::Doc;
    use crate::stages::classify::testing;

    const RUN: &str = "\
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running com.acme.ledger.AccountTest
[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.412 s -- in com.acme.ledger.AccountTest
[INFO] Running com.acme.ledger.LedgerTest
[WARNING] Tests run: 30, Failures: 0, Errors: 0, Skipped: 4, Time elapsed: 1.9 s -- in com.acme.ledger.LedgerTest
[INFO] Running com.acme.ledger.io.CsvTest
[INFO] Tests run: 5, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s -- in com.acme.ledger.io.CsvTest
[INFO] Running com.acme.ledger.TransferTest
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE! -- in com.acme.ledger.TransferTest
[ERROR] com.acme.ledger.TransferTest.overdraft -- Time elapsed: 0.02 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <-5> but was: <0>
\tat com.acme.ledger.TransferTest.overdraft(TransferTest.java:41)

[INFO] Running com.acme.ledger.RateTest
[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 s -- in com.acme.ledger.RateTest
[INFO]
[INFO] Results:
[INFO]
[ERROR] Tests run: 52, Failures: 1, Errors: 0, Skipped: 4
";

    #[test]
    fn passed_classes_become_a_count_and_their_names_by_package() {
        assert_eq!(
            testing::digest_lines(RUN),
            vec![
                "3 test classes passed, 47 tests, 4 skipped",
                "com.acme.ledger: AccountTest, LedgerTest (4 skipped)",
                "com.acme.ledger.io: CsvTest",
                "1 test class passed, 2 tests",
                "com.acme.ledger: RateTest",
            ]
        );
    }

    #[test]
    fn a_failed_class_and_the_aggregate_stay_outside_every_digest() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, RUN, "", 1);
        super::super::run(&mut doc);
        let regions: Vec<(usize, usize)> = doc.digests.iter().map(|d| (d.start, d.end)).collect();
        // Lines 0-2 (0-based) are Surefire's banner and 3-8 the three passed
        // classes; line 9, `Running` the failed class, starts what stays; 15-16 are
        // the last class.
        assert_eq!(regions, vec![(0, 9), (15, 17)]);
    }

    #[test]
    fn surefire_2_and_untagged_lines_read_the_same() {
        let out = "Running x.Foo\nTests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.123 s - in x.Foo\nRunning x.Bar\nTests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 sec - in x.Bar\n";
        assert_eq!(
            testing::digest_lines(out),
            vec!["2 test classes passed, 4 tests", "x: Foo, Bar"]
        );
    }

    #[test]
    fn a_class_still_running_ends_the_run() {
        let out = "[INFO] Running x.A\n[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s -- in x.A\n[INFO] Running x.B\n";
        let argv = vec![];
        let mut doc = Doc::new(&argv, out, "", 0);
        super::super::run(&mut doc);
        assert_eq!(doc.digests.len(), 1);
        assert_eq!((doc.digests[0].start, doc.digests[0].end), (0, 2));
    }

    #[test]
    fn what_a_passing_class_printed_goes_with_it_and_is_counted() {
        let out = "[INFO] Running x.Help\n usage: tool\n\n Footer\n[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s -- in x.Help\n[INFO] Running x.Parse\n[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s -- in x.Parse\n[INFO]\n";
        let argv = vec![];
        let mut doc = Doc::new(&argv, out, "", 0);
        super::super::run(&mut doc);
        assert_eq!(doc.digests.len(), 1);
        assert_eq!((doc.digests[0].start, doc.digests[0].end), (0, 7));
        assert_eq!(
            testing::digest_lines(out),
            vec![
                "2 test classes passed, 6 tests; the 3 lines they printed are in the stored output",
                "x: Help, Parse"
            ]
        );
    }

    #[test]
    fn mavens_advice_is_one_line_and_what_it_names() {
        let out = "\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project ledger: There are test failures.
[ERROR] 
[ERROR] See /w/ledger/target/surefire-reports for the individual test results.
[ERROR] See dump files (if any exist) [date].dump, [date]-jvmRun[N].dump and [date].dumpstream.
[ERROR] -> [Help 1]
[ERROR] 
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
[ERROR] 
[ERROR] For more information about the errors and possible solutions, please read the following articles:
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException
[ERROR] 
[ERROR] After correcting the problems, you can resume the build with the command
[ERROR]   mvn <args> -rf :ledger
";
        let argv = vec![];
        let mut doc = Doc::new(&argv, out, "", 1);
        super::super::run(&mut doc);
        assert_eq!(doc.digests.len(), 1);
        // The failure itself stays as printed.
        assert_eq!((doc.digests[0].start, doc.digests[0].end), (1, 14));
        assert_eq!(
            testing::digest_lines(out),
            vec![
                "10 lines of Maven's advice (re-run with -e or -X, read the help page); what it names:",
                "[ERROR] See /w/ledger/target/surefire-reports for the individual test results.",
                "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException",
                "[ERROR]   mvn <args> -rf :ledger",
            ]
        );
    }

    #[test]
    fn an_error_among_the_advice_ends_it() {
        let out = "[ERROR] -> [Help 1]\n[ERROR] \n[ERROR] cannot find symbol\n[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n";
        assert!(testing::digest_lines(out).is_empty());
    }
}
