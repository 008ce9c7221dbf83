//! Every shape on real outputs produced apart from the compare cases: other
//! projects (this repository's own history and sources, small projects written for
//! the purpose), other tool versions and flags. For each: the level-2 view accounts
//! for every raw line (markers with exact ranges, no renumbering), it is smaller than
//! the raw output, the shape's digest is used, and every distinct name of the raw
//! output is still recoverable from the view, by the rule the compare table counts
//! with (`harness::measure::name_kept`: the name printed, or a path's directory and
//! last part on one line).

mod common;

use common::{check_stream, HANDLE};
use harness::measure::name_kept;
use lens_core::stages::ansi;
use lens_core::{view, Handle, Level, Options, Request, DEFAULT_BUDGET};
use regex::Regex;

struct Shape {
    fixture: &'static str,
    text: &'static str,
    argv: &'static str,
    on_stderr: bool,
    exit: i32,
    names: &'static str,
}

macro_rules! fixture {
    ($f:literal) => {
        ($f, include_str!(concat!("fixtures/", $f)))
    };
}

fn shapes() -> Vec<Shape> {
    let s = |(fixture, text): (&'static str, &'static str),
             argv: &'static str,
             on_stderr: bool,
             exit: i32,
             names: &'static str| Shape {
        fixture,
        text,
        argv,
        on_stderr,
        exit,
        names,
    };
    vec![
        s(
            fixture!("git-log-lens.stdout"),
            "git log -n 40",
            false,
            0,
            r"(?m)^commit ([0-9a-f]{7})",
        ),
        s(
            fixture!("git-log-stat.stdout"),
            "git log -n 12 --stat=100",
            false,
            0,
            r"(?m)^commit ([0-9a-f]{7})",
        ),
        // The files --stat lists are names too: the agent asked for them.
        s(
            fixture!("git-log-stat.stdout"),
            "git log -n 12 --stat=100",
            false,
            0,
            r"(?m)^ (\S+?)\s+\|\s+(?:\d|Bin)",
        ),
        // git log -p: every file the patches touch, and their changed lines.
        s(
            fixture!("git-log-p-lens.stdout"),
            "git log -p -n 3",
            false,
            0,
            r"(?m)^diff --git a/(\S+)",
        ),
        s(
            fixture!("git-log-p-lens.stdout"),
            "git log -p -n 3",
            false,
            0,
            r"(?m)^commit ([0-9a-f]{7})",
        ),
        s(
            fixture!("git-diff-lens.stdout"),
            "git diff f58ddfd 89b656c -- harness/src",
            false,
            0,
            r"(?m)^diff --git a/(\S+)",
        ),
        s(
            fixture!("grep-rn-lens.stdout"),
            "grep -rn LazyLock lens-core/src",
            false,
            0,
            r"(?m)^([^:\s]+\.rs):\d+:",
        ),
        s(
            fixture!("find-lens.stdout"),
            "find lens-core harness -name *.rs",
            false,
            0,
            r"(?m)^(\S+\.rs)$",
        ),
        // 150 untracked snapshots numbered 001..150: one brace range holds them all.
        s(
            fixture!("git-status-numbered.stdout"),
            "git -c status.showUntrackedFiles=all status",
            false,
            0,
            r"(?m)^\t(?:modified:   )?(\S+)$",
        ),
        // pip 23.2 on this machine's Python: a table under a ruler.
        s(
            fixture!("pip-list.stdout"),
            "pip list",
            false,
            0,
            r"(?m)^([A-Za-z0-9][\w.-]*) +\d",
        ),
        // docker 20.10 ps, ten containers, one publishing a port: every name.
        s(
            fixture!("docker-ps.stdout"),
            "docker ps",
            false,
            0,
            r"(?m)^[0-9a-f]{12} .* (\S+)$",
        ),
        s(
            fixture!("ls-l-lens.stdout"),
            "ls -l lens-core/src/stages",
            false,
            0,
            r"(?m)^-\S+\s+\d+\s+\S+\s+\S+\s+\d+\s+\w+\s+\d+\s+[\d:]+\s+(\S+)$",
        ),
        s(
            fixture!("ruff-concise.stdout"),
            "ruff check --output-format concise inv",
            false,
            1,
            r"(?m)^(\S+\.py:\d+:\d+): [A-Z]+\d+",
        ),
        s(
            fixture!("ruff-full-other.stdout"),
            "ruff check inv",
            false,
            1,
            r"(?m)--> (\S+\.py:\d+:\d+)",
        ),
        s(
            fixture!("tsc-plain-other.stdout"),
            "tsc -p . --pretty false",
            false,
            2,
            r"(?m)^(src/\S+\.ts\(\d+,\d+\))",
        ),
        s(
            fixture!("tsc-pretty-other.stdout"),
            "tsc -p . --pretty true",
            false,
            2,
            r"(?m)^(src/\S+\.ts:\d+:\d+) - ",
        ),
        // Go: a scratch module of three packages, go 1.19; every report's location.
        s(
            fixture!("go-build-other.stderr"),
            "go build ./...",
            true,
            1,
            r"(?m)^(\S+\.go:\d+:\d+): ",
        ),
        // go test -v with subtests and a panic, scratch module: every failure.
        s(
            fixture!("go-test-v-other.stdout"),
            "go test -v ./...",
            false,
            1,
            r"(?m)^\s*--- FAIL: (\S+)",
        ),
        s(
            fixture!("go-vet-other.stderr"),
            "go vet ./...",
            true,
            1,
            r"(?m)^(?:vet: )?(\S+\.go:\d+:\d+): ",
        ),
        // mypy 1.13 --strict on a scratch inventory package: every location.
        s(
            fixture!("mypy-strict-other.stdout"),
            "mypy --strict inventory",
            false,
            1,
            r"(?m)^(\S+\.py:\d+): error",
        ),
        // jest 29 --verbose on a scratch library, two suites failing: every file.
        s(
            fixture!("jest-verbose-other.stderr"),
            "jest --verbose",
            true,
            1,
            r"(?m)^(?:PASS|FAIL) (\S+\.test\.js)",
        ),
        s(
            fixture!("gcc-other.stderr"),
            "gcc -Wall -c a.c b.c c.c",
            true,
            1,
            r"(?m)^(\S+\.c:\d+:\d+): (?:error|warning)",
        ),
        s(
            fixture!("cargo-build-other.stderr"),
            "cargo build",
            true,
            101,
            r"--> (src/\S+?:\d+:\d+)",
        ),
        s(
            fixture!("eslint-stylish-other.stdout"),
            "eslint lib",
            false,
            1,
            r"(?m)^/tmp/widgets/(\S+\.js)$",
        ),
        s(
            fixture!("pytest-classes-long.txt"),
            "pytest",
            false,
            1,
            r"(?m)^FAILED (\S+?)(?: - |$)",
        ),
        s(
            fixture!("pytest-classes-v-short.txt"),
            "pytest -v --tb=short",
            false,
            1,
            r"(?m)^FAILED (\S+?)(?: - |$)",
        ),
        // Tests that xfailed or xpassed keep their ids and reasons, in -rxX's
        // short summary and in -v's result lines.
        s(
            fixture!("pytest-xfail-rxX.stdout"),
            "pytest -rxX",
            false,
            0,
            r"(?m)^(?:XFAIL|XPASS) (\S+)",
        ),
        s(
            fixture!("pytest-xfail-v.stdout"),
            "pytest -v",
            false,
            0,
            r"(?m)^(\S+::\S+) (?:XFAIL|XPASS)",
        ),
        // apt list on the machine this was built on: every upgradable package
        // stays (the budget used to keep 2 of 75).
        s(
            fixture!("apt-list-installed.stdout"),
            "apt list --installed",
            false,
            0,
            r"(?m)^(\S+?)/\S+ \S+ \S+ \[installed,upgradable to:",
        ),
        // A JSON array of objects on one line (it used to be elided whole): one
        // row per element with its name and version.
        s(
            fixture!("pip-list-json.stdout"),
            "pip list --format=json",
            false,
            0,
            r#""name": "([^"]+)""#,
        ),
        s(
            fixture!("cargo-test-backtrace.stdout"),
            "cargo test --no-fail-fast",
            false,
            101,
            r"(?m)^test (\S+) \.\.\. FAILED$",
        ),
    ]
}

#[test]
fn every_shape_keeps_every_name_on_outputs_it_was_not_written_against() {
    let mut report = Vec::new();
    for sh in shapes() {
        let argv: Vec<String> = sh.argv.split_whitespace().map(String::from).collect();
        let (out, err) = if sh.on_stderr {
            ("", sh.text)
        } else {
            (sh.text, "")
        };
        let req = Request {
            argv: &argv,
            stdout: out.as_bytes(),
            stderr: err.as_bytes(),
            exit: sh.exit,
        };
        let mut opts = Options::new(Level::Two, Handle::parse(HANDLE));
        if sh.text.len() <= opts.budget {
            // Under the budget a digest is used only when it drops nothing a
            // reader uses: what one drops shows as the raw output coming back.
            let whole = view(&req, &opts);
            if !whole.elided {
                assert_eq!(whole.len(), sh.text.len(), "{}", sh.fixture);
            }
            // The shape itself is exercised as if the output were over the budget.
            opts.budget = sh.text.len() - 1;
        }
        let v = view(&req, &opts);
        let (vo, ve) = (
            String::from_utf8_lossy(&v.stdout).into_owned(),
            String::from_utf8_lossy(&v.stderr).into_owned(),
        );
        check_stream(&vo, out, "stdout").unwrap_or_else(|e| panic!("{}: {e}", sh.fixture));
        check_stream(&ve, err, "stderr").unwrap_or_else(|e| panic!("{}: {e}", sh.fixture));
        let shown = format!("{vo}{ve}");
        assert!(
            shown.len() < sh.text.len(),
            "{}: view {} bytes, raw {}",
            sh.fixture,
            shown.len(),
            sh.text.len()
        );
        assert!(
            shown.contains(" digest="),
            "{}: no digest in\n{shown}",
            sh.fixture
        );
        let re = Regex::new(sh.names).unwrap();
        // Names as a reader sees them: colour codes out (Lens prints none).
        let visible: String = sh
            .text
            .lines()
            .map(|l| ansi::visible(l).into_owned() + "\n")
            .collect();
        let mut names: Vec<&str> = re
            .captures_iter(&visible)
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        assert!(
            names.len() >= 2,
            "{}: only {} names",
            sh.fixture,
            names.len()
        );
        let lost: Vec<&&str> = names.iter().filter(|n| !name_kept(&shown, n)).collect();
        assert!(
            lost.is_empty(),
            "{}: {} of {} names lost: {lost:?}\n{shown}",
            sh.fixture,
            lost.len(),
            names.len()
        );
        report.push(format!(
            "{:<32} {:>6} -> {:>5} bytes, {} names",
            sh.fixture,
            sh.text.len(),
            shown.len(),
            names.len()
        ));
    }
    eprintln!("{}", report.join("\n"));
}

/// Clippy on a crate written for the purpose (2.2 KB, under the budget): every
/// suggested fix stays, as clippy printed it.
#[test]
fn under_the_budget_clippys_suggestions_stay() {
    let text = include_str!("fixtures/clippy-small.stderr");
    let argv: Vec<String> = vec!["cargo".into(), "clippy".into()];
    let req = Request {
        argv: &argv,
        stdout: b"",
        stderr: text.as_bytes(),
        exit: 0,
    };
    let v = view(&req, &Options::new(Level::Two, Handle::parse(HANDLE)));
    let shown = String::from_utf8_lossy(&v.stderr);
    assert!(shown.contains("help: change this to"), "{shown}");
    assert!(
        shown.contains("pub fn total(v: &[u32]) -> u32 {"),
        "{shown}"
    );
    assert!(
        shown.contains("pub fn is_empty(s: &str) -> bool {"),
        "{shown}"
    );
    assert!(shown.contains("t += v[i]"), "{shown}");
}

/// Maven 3.8.7 run offline against Debian's repository: a three-module reactor
/// whose second module's test fails. What the view must hold is the failing
/// test, the assertion and every reactor row; Maven's advice is one digest line
/// and what it names, and must not crowd them. The room the digests leave goes
/// to the modules' banners, so the view is held to the budget, not to half the
/// raw.
#[test]
fn a_failed_maven_reactor_keeps_its_failure_and_every_module() {
    let text = include_str!("fixtures/mvn-install-reactor.stdout");
    let argv: Vec<String> = vec!["mvn".into(), "-o".into(), "-B".into(), "install".into()];
    let req = Request {
        argv: &argv,
        stdout: text.as_bytes(),
        stderr: b"",
        exit: 1,
    };
    let v = view(&req, &Options::new(Level::Two, Handle::parse(HANDLE)));
    let shown = String::from_utf8_lossy(&v.stdout).into_owned();
    check_stream(&shown, text, "stdout").unwrap();
    assert!(shown.len() <= DEFAULT_BUDGET, "{} bytes", shown.len());
    assert!(shown.len() < text.len() * 3 / 5, "{} bytes", shown.len());
    assert!(
        shown.contains("lines of Maven's advice")
            && shown.contains("[ERROR]   mvn <args> -rf :depots"),
        "{shown}"
    );
    for want in [
        "DepotsTest.costOfThird:9 expected:<4> but was:<3>",
        "java.lang.AssertionError: expected:<4> but was:<3>",
        "[INFO] fleet ....",
        "[INFO] routes ....",
        "[INFO] depots ....",
        "[INFO] billing ....",
        "[INFO] BUILD FAILURE",
        "Failed to execute goal",
    ] {
        assert!(shown.contains(want), "{want}\n{shown}");
    }
    // Level 1 shows the failures, not Maven's advice on rerunning the build.
    let v1 = view(&req, &Options::new(Level::One, Handle::parse(HANDLE)));
    let one = String::from_utf8_lossy(&v1.stdout);
    assert!(one.contains("expected:<4> but was:<3>"), "{one}");
    assert!(!one.contains("re-run Maven with the -e switch"), "{one}");
}
