//! User filters through the real binary: a project's file is ignored until
//! `lens trust` and again after any change, with one line after the command's
//! output; `lens verify` reports each test and fails naming what the view held;
//! `--as … --filters FILE` previews a draft; a bad file costs nothing but a
//! line; and every example in examples/filters passes its own tests.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use common::{write, Sandbox};

/// The example filter lens-core's unit tests read too.
const FILTER: &str = include_str!("../../lens-core/tests/filter-fixtures/acme.toml");

/// A git project under the sandbox with an `acme-build` that prints 300 debug
/// lines and an error on stdout, a line on stderr, and exits 3.
fn project(sb: &Sandbox) -> PathBuf {
    let p = sb.root.join("proj");
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::create_dir_all(p.join(".lens")).unwrap();
    write(&p.join(".lens/filters.toml"), FILTER.as_bytes());
    let tool = p.join("acme-build");
    write(
        &tool,
        b"#!/bin/sh\nfor i in $(seq 300); do echo \"DEBUG step $i\"; done\necho 'ERR boom'\necho 'child says bye' >&2\nexit 3\n",
    );
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p
}

fn run_in(sb: &Sandbox, dir: &Path, args: &[&str]) -> Output {
    sb.lens().current_dir(dir).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The text with each run's handle taken out: two runs of one command differ
/// only there.
fn unhandled(b: &[u8]) -> String {
    regex::Regex::new("handle=[0-9a-f]{8}")
        .unwrap()
        .replace_all(&text(b), "handle=H")
        .into_owned()
}

const FILTERED: &str = "[lens: elided stdout 1-300 (300 lines: filter) handle=";

#[test]
fn a_project_filter_applies_only_while_trusted() {
    let sb = Sandbox::new();
    let p = project(&sb);
    // Untrusted: the built-in view, the child's streams as ever, and one line
    // after the child's stderr naming the file and `lens trust`.
    let out = run_in(&sb, &p, &["./acme-build"]);
    assert_eq!(out.status.code(), Some(3));
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert!(!o.contains(FILTERED) && o.contains("ERR boom"), "{o}");
    let file = p.join(".lens/filters.toml");
    assert_eq!(
        e,
        format!(
            "child says bye\nlens: {} is not trusted, so its filters are ignored; read it, then run `lens trust` in that project\n",
            file.display()
        )
    );
    // Trusted: the filter is the command's shape, and nothing is said.
    let t = run_in(&sb, &p, &["trust"]);
    assert_eq!(t.status.code(), Some(0), "{t:?}");
    assert!(text(&t.stdout).contains("trusted") && text(&t.stdout).contains("acme-build"));
    let record = std::fs::read_to_string(sb.root.join("trusted-filters")).unwrap();
    assert!(record.contains("/proj/.lens/filters.toml"), "{record}");
    let names: Vec<_> = std::fs::read_dir(&p)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "trust wrote into the repository: {names:?}");
    let out = run_in(&sb, &p.join(".lens"), &["../acme-build"]);
    assert_eq!(out.status.code(), Some(3));
    let o = text(&out.stdout);
    assert!(o.starts_with(FILTERED), "{o}");
    assert!(o.ends_with("]\nERR boom\n"), "{o}");
    assert_eq!(text(&out.stderr), "child says bye\n");
    // Changed: ignored again until trusted again.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    f.write_all(b"# edited\n").unwrap();
    let out = run_in(&sb, &p, &["./acme-build"]);
    assert!(!text(&out.stdout).contains(FILTERED));
    let e = text(&out.stderr);
    assert!(
        e.starts_with("child says bye\nlens: ") && e.contains("changed since `lens trust`"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 2, "{e}");
    run_in(&sb, &p, &["trust"]);
    assert!(text(&run_in(&sb, &p, &["./acme-build"]).stdout).starts_with(FILTERED));
}

#[test]
fn trust_outside_a_project_or_of_a_broken_file_is_refused() {
    let sb = Sandbox::new();
    let out = sb.run(&["trust"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not in a git repository"));
    let p = project(&sb);
    write(&p.join(".lens/filters.toml"), b"[[filter]]\nname = \"x\"\n");
    let out = run_in(&sb, &p, &["trust"]);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(
        e.contains("is not trusted") && e.contains("missing field `match`"),
        "{e}"
    );
    assert!(!sb.root.join("trusted-filters").exists());
}

/// The project without a filter file of its own, the example filter as the
/// user's, and `acme-build` run there once.
fn run_under_users_filter(sb: &Sandbox) -> (PathBuf, Output) {
    let p = project(sb);
    std::fs::remove_file(p.join(".lens/filters.toml")).unwrap();
    write(&sb.root.join("filters.toml"), FILTER.as_bytes());
    let out = run_in(sb, &p, &["./acme-build"]);
    (p, out)
}

#[test]
fn a_users_own_filter_applies_without_trust() {
    let sb = Sandbox::new();
    let (_, out) = run_under_users_filter(&sb);
    assert!(text(&out.stdout).starts_with(FILTERED), "{out:?}");
    assert_eq!(text(&out.stderr), "child says bye\n");
}

#[test]
fn a_level_of_a_filtered_run_is_the_filtered_view_at_that_level() {
    let sb = Sandbox::new();
    let (p, out) = run_under_users_filter(&sb);
    let view = text(&out.stdout);
    assert!(view.starts_with(FILTERED), "{view}");
    let h = common::handle_in(&out.stdout).expect("a handle");
    // Level 2 is the view the run printed, and level 1 still hides what the
    // filter hides (before, `--level` ignored the filter and printed the
    // built-in view of the 300 debug lines).
    for level in ["2", "1"] {
        let shown = run_in(&sb, &p, &["show", &h, "--level", level]);
        assert_eq!(shown.status.code(), Some(0), "{shown:?}");
        let s = text(&shown.stdout);
        assert!(
            s.contains(FILTERED) && s.contains("ERR boom"),
            "level {level}: {s}"
        );
        assert!(!s.contains("DEBUG step"), "level {level}: {s}");
        if level == "2" {
            assert_eq!(s, view);
        }
    }
}

#[test]
fn verify_reports_each_test_and_fails_naming_the_view() {
    let sb = Sandbox::new();
    let good = sb.root.join("good.toml");
    write(&good, FILTER.as_bytes());
    let out = sb.run(&["verify", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let o = text(&out.stdout);
    let lines: Vec<&str> = o.lines().collect();
    assert_eq!(lines.len(), 3, "{o}");
    assert!(
        lines[0].starts_with("ok   ")
            && lines[0].ends_with("acme-build / drops debug, keeps errors")
    );
    assert!(lines[1].ends_with("acme-build / invariants on 64 generated outputs"));
    assert_eq!(lines[2], "2 passed, 0 failed");
    // A wrong expectation: the test, what it expected and what the view held.
    let bad = sb.root.join("bad.toml");
    write(
        &bad,
        FILTER
            .replace(
                "expect_missing = [\"DEBUG a\"]",
                "expect_missing = [\"ERR boom\"]",
            )
            .as_bytes(),
    );
    let out = sb.run(&["verify", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let o = text(&out.stdout);
    let fail = o.lines().find(|l| l.starts_with("FAIL")).unwrap();
    assert!(
        fail.contains("bad.toml: acme-build / drops debug, keeps errors"),
        "{fail}"
    );
    assert!(
        fail.contains("expected the view not to contain \"ERR boom\""),
        "{fail}"
    );
    assert!(
        fail.contains(r#"the view held "[lens: elided stdout 1-1 (1 line: filter) handle=7e57f11e]\nERR boom\n""#),
        "{fail}"
    );
    assert!(o.ends_with("3 passed, 1 failed\n"), "{o}");
    // A file that does not parse is a failure too, named in one line.
    write(&bad, b"[[filter]]\nname = \"x\"\nmatch = '('\n");
    let out = sb.run(&["verify", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("filter \"x\": match pattern \"(\" does not compile"));
    // With nothing to verify, it says where filters go.
    let out = sb.run(&["verify"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("filters.toml"));
}

fn as_with(sb: &Sandbox, args: &[&str], input: &[u8]) -> Output {
    let mut child = sb
        .lens()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_draft_previews_on_a_saved_output_untrusted() {
    let sb = Sandbox::new();
    let draft = sb.root.join("draft.toml");
    write(&draft, FILTER.as_bytes());
    let log: String = (1..=300)
        .map(|i| format!("DEBUG step {i}\n"))
        .chain(["ERR boom\n".to_string()])
        .collect();
    let d = draft.to_str().unwrap();
    let out = as_with(
        &sb,
        &["--as", "acme-build --all", "--filters", d, "--exit", "1"],
        log.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    let o = text(&out.stdout);
    assert!(o.contains(FILTERED) && o.ends_with("]\nERR boom\n"), "{o}");
    assert!(out.stderr.is_empty(), "{out:?}");
    // A command no filter of the draft covers: the built-in view, and why.
    let out = as_with(&sb, &["--as", "make", "--filters", d], log.as_bytes());
    assert!(!text(&out.stdout).contains(FILTERED));
    assert!(
        text(&out.stderr).contains("no filter in") && text(&out.stderr).contains("covers \"make\"")
    );
    // A draft that is not there is said, not silently skipped.
    let out = as_with(
        &sb,
        &["--as", "acme-build", "--filters", "missing.toml"],
        log.as_bytes(),
    );
    assert!(!text(&out.stdout).contains(FILTERED));
    assert!(
        text(&out.stderr).contains("--filters missing.toml: there is no such file"),
        "{out:?}"
    );
}

#[test]
fn a_bad_filter_file_is_one_line_and_the_command_runs_as_ever() {
    let sb = Sandbox::new();
    let p = project(&sb);
    std::fs::remove_file(p.join(".lens/filters.toml")).unwrap();
    let before = run_in(&sb, &p, &["./acme-build"]);
    for (bad, needle) in [
        (
            "[[filter]]\nname = \"acme\"\nmatch = 'acme'\ndrop = ['(']\n",
            "filter \"acme\": drop pattern \"(\" does not compile",
        ),
        (
            "[[filter]]\nname = \"acme\"\nmatch = 'acme'\ndorp = ['x']\n",
            "filter \"acme\": unknown field `dorp`",
        ),
        ("[[filter]\n", "not valid TOML at line 1"),
        (
            "[[filter]]\nname = \"acme\"\nmatch = '(a{500}){500}'\n",
            "too large once compiled",
        ),
    ] {
        let file = sb.root.join("filters.toml");
        write(&file, bad.as_bytes());
        let out = run_in(&sb, &p, &["./acme-build"]);
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(unhandled(&out.stdout), unhandled(&before.stdout), "{bad}");
        let e = text(&out.stderr);
        let want = format!("child says bye\nlens: filters {} ignored: ", file.display());
        assert!(e.starts_with(&want) && e.contains(needle), "{e}");
        assert!(e.ends_with("; the built-in shapes are used\n"), "{e}");
        assert_eq!(e.lines().count(), 2, "{e}");
    }
}
#[test]
fn every_example_filter_passes_its_tests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/filters");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    let sb = Sandbox::new();
    let args: Vec<&str> = ["verify"]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    let out = sb.run(&args);
    let o = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{o}");
    assert!(o.ends_with(" 0 failed\n"), "{o}");
    // Each file has tests of its own, not only the invariant checks.
    for f in &files {
        let own = o
            .lines()
            .filter(|l| l.starts_with(&format!("ok   {f}: ")))
            .count();
        assert!(own >= 3, "{f} has {own} passing lines:\n{o}");
    }
}
