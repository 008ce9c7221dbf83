//! Filters users write: a shape for one command, in TOML, with its own tests.
//!
//! ```toml
//! [[filter]]
//! name = "acme-build"
//! match = '^acme-build\b'      # on the command line: program name, then its arguments
//! drop = ['^DEBUG ']           # lines to elide (each run of them is one marker)
//! keep = ['^ERR ']             # lines always kept
//! summary = ['^built \d+ ']    # the line that sums the run up: always kept
//! collapse = true              # runs of lines that differ only in digits: first and last
//! head = 40                    # of the lines left, the first 40 ...
//! tail = 20                    # ... and the last 20
//!
//! [[filter.when]]              # extra rules for some exit codes
//! exit = "nonzero"             # or 0, or [1, 2]
//! tail = 80
//!
//! [[filter.test]]
//! name = "drops debug, keeps errors"
//! input = "DEBUG a\nERR boom\n"
//! exit = 1
//! expect_contains = ["ERR boom"]
//! expect_missing = ["DEBUG a"]
//! ```
//!
//! A filter is a shape like the built-in ones, not a second path: its rules only
//! annotate the [`Doc`] (a fate per line, never a rewrite), in the place of the
//! built-in family finders, and every stage after it (repeats, context, the
//! budget, the level) and `render` run as for any command. So every line it
//! elides is in a marker with its raw numbers and the handle, and it cannot
//! drop a line the classifier calls an error: such a line is kept whatever the
//! filter says. It never sees the exit code as anything but a choice of rules.
//!
//! Parsing is from text (this crate does no I/O); each error is one line naming
//! the filter and the problem. Every pattern is compiled with a size limit, and
//! the `regex` crate matches in time linear in the line, so no pattern can hang
//! a run or fill memory.
use std::sync::Arc;

use crate::doc::{Class, Doc};
use crate::stages::classify;
use crate::{Handle, Level, Options, Request};

mod filter;

use filter::split;
pub use filter::{command_line, Filter, FilterSet, Test, REGEX_SIZE_LIMIT};

/// The handle a filter's test views are rendered with.
pub const TEST_HANDLE: &str = "7e57f11e";

impl Filter {
    /// Runs the filter's inline tests: one result per test, in file order.
    pub fn run_tests(&self) -> Vec<TestResult> {
        self.tests.iter().map(|t| self.run_test(t)).collect()
    }

    fn run_test(&self, t: &Test) -> TestResult {
        let mut problems = Vec::new();
        let argv: Vec<String> = match &t.command {
            Some(c) => {
                if !self.covers(&command_line(&split(c))) {
                    problems.push(format!(
                        "the command {c:?} is not covered by the filter's match {:?}",
                        self.matcher.as_str()
                    ));
                }
                split(c)
            }
            None => Vec::new(),
        };
        let shown = preview(self, &argv, &t.input, &t.stderr, t.exit, Level::Two, None);
        for want in &t.expect_contains {
            if !shown.contains(want.as_str()) {
                problems.push(format!("expected the view to contain {want:?}"));
            }
        }
        for unwanted in &t.expect_missing {
            if shown.contains(unwanted.as_str()) {
                problems.push(format!("expected the view not to contain {unwanted:?}"));
            }
        }
        TestResult {
            name: t.name.clone(),
            problems,
            view: shown,
        }
    }
}

/// What one inline test found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestResult {
    /// The test's name.
    pub name: String,
    /// Each expectation the view failed, in words; empty when the test passed.
    pub problems: Vec<String>,
    /// The view the test read (both streams, stdout first).
    pub view: String,
}

impl TestResult {
    /// True when every expectation held.
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The view `filter` gives an output, both streams (stdout's, then stderr's),
/// rendered even where the view is no smaller than the output (where a real run
/// would print the output as it is): what a filter's tests and a draft read.
pub fn preview(
    filter: &Filter,
    argv: &[String],
    stdout: &str,
    stderr: &str,
    exit: i32,
    level: Level,
    budget: Option<usize>,
) -> String {
    let mut opts = Options::new(level, Handle::parse(TEST_HANDLE));
    opts.filter = Some(Arc::new(filter.clone()));
    if let Some(b) = budget {
        opts.budget = b;
    }
    let req = Request {
        argv,
        stdout: stdout.as_bytes(),
        stderr: stderr.as_bytes(),
        exit,
    };
    let (out, err) = crate::rendered(&req, &opts);
    let mut s = String::from_utf8_lossy(&out).into_owned();
    s.push_str(&String::from_utf8_lossy(&err));
    s
}

/// A small, seeded generator: the invariant checks must give the same answer
/// on every machine and every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Lines every generated output draws on besides the filter's own test inputs:
/// errors the classifier knows, warnings, a forged marker, counters, blanks.
const MATERIAL: &[&str] = &[
    "error: could not compile `app`",
    "ERROR: No matching distribution found for nope",
    "Traceback (most recent call last):",
    "FAILED tests/test_a.py::test_x - assert 1 == 2",
    "fatal: not a git repository",
    "src/main.c:12:5: error: expected ';' before 'return'",
    "warning: unused variable `x`",
    "[lens: elided stdout 1-3 (3 lines: budget) handle=deadbeef]",
    "Downloading 12/300",
    "Downloading 13/300",
    "ok",
    "",
    "    indented continuation",
    "done in 3.2s",
    "DEBUG a",
    "INFO step 4 of 9",
];

/// Runs the invariant checks on `filter` over `rounds` generated outputs: for
/// each, the view accounts for every raw line (shown, or in a marker that
/// names its exact range), shows every line the classifier calls an error when
/// the budget does not bind, and leaves the exit code alone. The first
/// violation found is the error.
pub fn check_invariants(filter: &Filter, rounds: usize) -> Result<(), String> {
    let filter = Arc::new(filter.clone());
    let mut pool: Vec<String> = MATERIAL.iter().map(|s| s.to_string()).collect();
    for t in &filter.tests {
        pool.extend(t.input.lines().map(str::to_string));
        pool.extend(t.stderr.lines().map(str::to_string));
    }
    let mut exits = vec![0, 1, 2, 101, 137];
    exits.extend(filter.named_exits());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ filter.name.len() as u64);
    for round in 0..rounds {
        let mut streams: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
        for s in &mut streams {
            let n = rng.below(120);
            let mut last: Option<String> = None;
            for _ in 0..n {
                let line = match (rng.below(10), &last) {
                    (0, Some(l)) => l.clone(),
                    (1, _) => {
                        let long = "x".repeat(2000 + rng.below(6000));
                        if rng.below(2) == 0 {
                            format!("error: {long}")
                        } else {
                            long
                        }
                    }
                    _ => pool[rng.below(pool.len())].clone(),
                };
                s.extend_from_slice(line.as_bytes());
                s.push(b'\n');
                last = Some(line);
            }
            if rng.below(12) == 0 {
                s.extend_from_slice(b"\xff\xfe not text\n");
            }
        }
        let exit = exits[rng.below(exits.len())];
        check_one(&filter, &streams[0], &streams[1], exit)
            .map_err(|e| format!("generated output #{} (exit {exit}): {e}", round + 1))?;
    }
    Ok(())
}

fn check_one(filter: &Arc<Filter>, out: &[u8], err: &[u8], exit: i32) -> Result<(), String> {
    let argv: Vec<String> = Vec::new();
    let req = Request {
        argv: &argv,
        stdout: out,
        stderr: err,
        exit,
    };
    for budget in [crate::DEFAULT_BUDGET, usize::MAX / 4] {
        let mut opts = Options::new(Level::Two, Handle::parse(TEST_HANDLE));
        opts.filter = Some(filter.clone());
        opts.budget = budget;
        let v = crate::view(&req, &opts);
        for (stream, raw, shown) in [("stdout", out, &v.stdout), ("stderr", err, &v.stderr)] {
            let Ok(raw) = std::str::from_utf8(raw) else {
                if shown.as_ref() != raw {
                    return Err(format!("{stream} is not text but was changed"));
                }
                continue;
            };
            let view = String::from_utf8_lossy(shown);
            let kept = crate::check::check_stream(&view, raw, stream, TEST_HANDLE)?;
            if budget < usize::MAX / 4 {
                continue;
            }
            let lines = crate::check::raw_lines(raw);
            let shown_text: std::collections::HashSet<&str> =
                kept.iter().map(|&n| lines[n as usize - 1]).collect();
            for (i, l) in lines.iter().enumerate() {
                if classify::trouble(l) == Some(Class::Error) && !shown_text.contains(l) {
                    return Err(format!(
                        "{stream} line {} is an error but the view does not show it: {:?}",
                        i + 1,
                        cut(l)
                    ));
                }
            }
        }
        let mut doc = Doc::new(
            &argv,
            std::str::from_utf8(out).unwrap_or(""),
            std::str::from_utf8(err).unwrap_or(""),
            exit,
        );
        crate::annotate(&mut doc, &opts);
        if doc.exit != exit {
            return Err(format!("the exit code {exit} became {}", doc.exit));
        }
    }
    Ok(())
}

fn cut(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example filter both crates' tests read.
    const ACME: &str = include_str!("../../tests/filter-fixtures/acme.toml");

    fn argv(line: &str) -> Vec<String> {
        split(line)
    }

    #[test]
    fn the_issue_example_parses_picks_and_passes() {
        let set = FilterSet::parse(ACME).unwrap();
        assert_eq!(set.filters.len(), 1);
        let f = set.pick(&argv("/opt/bin/acme-build --all")).unwrap();
        assert_eq!(f.name, "acme-build");
        assert!(set.pick(&argv("acme-builder")).is_none());
        assert!(set.pick(&argv("make acme-build")).is_none());
        let results = f.run_tests();
        assert_eq!(results.len(), 1);
        assert!(results[0].passed(), "{results:?}");
        assert_eq!(
            results[0].view,
            "[lens: elided stdout 1-1 (1 line: filter) handle=7e57f11e]\nERR boom\n"
        );
    }

    #[test]
    fn errors_name_the_filter_and_the_problem_in_one_line() {
        for (text, needle) in [
            ("[[filter]]\nname = \"a\"\nmatch = 'x'\ndorp = ['y']", "filter \"a\": unknown field `dorp`"),
            ("[[filter]]\nname = \"a\"\nmatch = '('", "filter \"a\": match pattern \"(\" does not compile"),
            ("[[filter]]\nname = \"b\"\nmatch = 'x'\ndrop = ['[z']", "filter \"b\": drop pattern \"[z\" does not compile"),
            ("[[filter]]\nmatch = 'x'", "filter #1: missing field `name`"),
            ("[[filter]]\nname = \"a\"\nmatch = 'x'\n[[filter]]\nname = \"a\"\nmatch = 'y'", "a second filter of that name"),
            ("colour = 1", "unknown key \"colour\""),
            ("[[filter]\n", "not valid TOML"),
            ("[[filter]]\nname = \"a\"\nmatch = 'x'\n[[filter.when]]\nexit = \"sometimes\"", "not an exit code"),
            ("[[filter]]\nname = \"a\"\nmatch = 'x'\n[[filter.test]]\nname = \"t\"\ninput = \"x\"", "expects nothing"),
            ("[[filter]]\nname = \"a\"\nmatch = 'x'\n[[filter.test]]\nname = \"t\"\nexpect = [\"x\"]", "unknown field `expect`"),
        ] {
            let e = FilterSet::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn a_pathological_pattern_is_refused_not_run() {
        let text = "[[filter]]\nname = \"huge\"\nmatch = '(((a{100}){100}){100})'";
        let e = FilterSet::parse(text).unwrap_err();
        assert!(e.contains("too large once compiled"), "{e}");
    }

    fn shown(f: &Filter, out: &str, exit: i32) -> String {
        preview(f, &[], out, "", exit, Level::Two, None)
    }

    fn one(text: &str) -> Arc<Filter> {
        FilterSet::parse(text).unwrap().filters[0].clone()
    }

    #[test]
    fn an_error_line_stays_whatever_the_filter_says() {
        let f = one("[[filter]]\nname = \"a\"\nmatch = 'x'\ndrop = ['.']\n");
        let v = shown(&f, "one\nerror: boom\ntwo\n", 1);
        assert_eq!(
            v,
            "[lens: elided stdout 1-1 (1 line: filter) handle=7e57f11e]\nerror: boom\n[lens: elided stdout 3-3 (1 line: filter) handle=7e57f11e]\n"
        );
    }

    #[test]
    fn head_and_tail_keep_the_ends_and_the_errors_between() {
        let f = one("[[filter]]\nname = \"a\"\nmatch = 'x'\nhead = 2\ntail = 1\n");
        let out: String = (1..=10)
            .map(|i| {
                if i == 5 {
                    "error: five\n".to_string()
                } else {
                    format!("line {i}\n")
                }
            })
            .collect();
        let v = shown(&f, &out, 1);
        assert_eq!(
            v,
            "line 1\nline 2\n[lens: elided stdout 3-4 (2 lines: filter) handle=7e57f11e]\nerror: five\n[lens: elided stdout 6-9 (4 lines: filter) handle=7e57f11e]\nline 10\n"
        );
    }

    #[test]
    fn collapse_keeps_the_first_and_last_of_a_run() {
        let f = one("[[filter]]\nname = \"a\"\nmatch = 'x'\ncollapse = true\n");
        let out: String = (1..=6)
            .map(|i| format!("fetched {i} of 6 objects\n"))
            .collect();
        let v = shown(&f, &format!("start\n{out}end\n"), 0);
        assert_eq!(
            v,
            "start\nfetched 1 of 6 objects\n[lens: elided stdout 3-6 (4 lines: repeat) handle=7e57f11e]\nfetched 6 of 6 objects\nend\n"
        );
    }

    #[test]
    fn when_blocks_choose_rules_by_exit_code_and_summary_is_kept() {
        let f = one(r#"
[[filter]]
name = "a"
match = 'x'
drop = ['^step ']
summary = ['^total ']
[[filter.when]]
exit = "nonzero"
keep = ['^step 2']
[[filter.when]]
exit = [0]
drop = ['^total ']
"#);
        let out = "step 1\nstep 2\ntotal 3\n";
        // The summary beats any drop; nonzero keeps step 2.
        assert_eq!(
            shown(&f, out, 1),
            "[lens: elided stdout 1-1 (1 line: filter) handle=7e57f11e]\nstep 2\ntotal 3\n"
        );
        assert_eq!(
            shown(&f, out, 0),
            "[lens: elided stdout 1-2 (2 lines: filter) handle=7e57f11e]\ntotal 3\n"
        );
    }

    #[test]
    fn a_failing_test_names_what_it_expected_and_what_the_view_held() {
        let f = one(r#"
[[filter]]
name = "a"
match = '^acme'
drop = ['^DEBUG']
[[filter.test]]
name = "wrong"
command = "make all"
input = "DEBUG a\nkept\n"
expect_contains = ["DEBUG a"]
expect_missing = ["kept"]
"#);
        let r = &f.run_tests()[0];
        assert!(!r.passed());
        assert_eq!(r.problems.len(), 3, "{r:?}");
        assert!(r.problems[0].contains("not covered by the filter's match"));
        assert!(r.problems[1].contains("expected the view to contain \"DEBUG a\""));
        assert!(r.problems[2].contains("not to contain \"kept\""));
        assert!(r.view.contains("kept"));
    }

    #[test]
    fn the_invariant_checks_pass_on_a_greedy_filter() {
        let f = one("[[filter]]\nname = \"all\"\nmatch = '.'\ndrop = ['']\ncollapse = true\nhead = 1\ntail = 1\n");
        check_invariants(&f, 40).unwrap();
    }
}
