//! `tools/agent_arms.py`, the kit for two-arm agent runs over `tasks/`: its
//! wrapper answers a lens arm's command as the after-tool hook would (a view,
//! and `lens show` of that view's handle left whole), a raw arm's as the
//! command printed it, keeps the command's exit code, and counts calls,
//! `lens show` calls and bytes per task. Without python3 it says so and passes.

mod lens_bin;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use regex::Regex;

fn tool() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/agent_arms.py")
}

fn python() -> bool {
    let ok = Command::new("python3").arg("--version").output().is_ok();
    if !ok {
        eprintln!("skipped: python3 is not installed");
    }
    ok
}

/// A scratch directory of this test's own, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agent-arms-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn kit(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(tool())
        .args(args)
        .output()
        .unwrap()
}

/// The arm's wrapper, run as the agent runs it: from `dir`.
fn run(arm: &Path, dir: &Path, command: &str) -> Output {
    Command::new(arm.join("run"))
        .arg(command)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_lens_arm_answers_as_the_hook_would_and_counts_each_call() {
    if !python() {
        return;
    }
    let root = scratch("lens");
    let arm = root.join("arm");
    let lens = lens_bin::lens_binary();
    let made = kit(&[
        "new",
        arm.to_str().unwrap(),
        "--mode",
        "lens",
        "--lens",
        lens.to_str().unwrap(),
        "--tasks",
        "last-line-trap",
    ]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let prompt = std::fs::read_to_string(arm.join("prompt.md")).unwrap();
    assert!(
        prompt.contains("<!-- lens:begin -->") && prompt.contains("lens show"),
        "the awareness block as lens init writes it:\n{prompt}"
    );
    let task = arm.join("last-line-trap");

    // The audit's 5,000 lines come back as a view that names its handle.
    let view = run(&arm, &task, "python3 audit.py");
    assert!(view.status.success());
    let view = text(&view.stdout);
    assert!(view.starts_with("[lens: view of 5000 lines"), "{view}");
    assert!(view.contains("reconciliation failed for account ACC-"));
    let marker =
        Regex::new(r"\[lens: elided stdout (\d+)-(\d+) [^\n]*handle=([0-9a-f]{8})\]").unwrap();
    let c = marker.captures(&view).expect("a marker");
    let (b, h) = (c[2].parse::<usize>().unwrap(), c[3].to_string());

    // Fetching the last hidden lines gives exactly those raw lines.
    let fetched = run(&arm, &task, &format!("lens show {h} --lines {}-{b}", b - 2));
    let raw = std::fs::read_to_string(arm.join("state/raw-1.txt")).unwrap();
    let want: Vec<&str> = raw.lines().skip(b - 3).take(3).collect();
    assert_eq!(text(&fetched.stdout), want.join("\n") + "\n");

    // The command's exit code is the wrapper's; a command outside a task's
    // directory is refused and not counted.
    assert_eq!(
        run(&arm, &task, "echo no >&2; exit 3").status.code(),
        Some(3)
    );
    let outside = run(&arm, &arm, "ls");
    assert_eq!(outside.status.code(), Some(2));
    assert!(
        text(&outside.stderr).contains("cd "),
        "{}",
        text(&outside.stderr)
    );

    // Not done until answer.txt holds the account of the run that wrote it.
    let verify = |arm: &Path| kit(&["verify", arm.to_str().unwrap()]);
    assert!(!verify(&arm).status.success());
    let answer = "python3 audit.py | tail -1 | sed 's/.* //' > answer.txt";
    assert!(run(&arm, &task, answer).status.success());
    let verified = verify(&arm);
    assert!(verified.status.success(), "{}", text(&verified.stdout));

    // Four calls, one of them `lens show`; the bytes are what was shown.
    let tally = text(&kit(&["tally", arm.to_str().unwrap()]).stdout);
    let shown = view.len() + text(&fetched.stdout).len() + "no\n".len();
    assert!(
        tally.contains(&format!("| last-line-trap | 4 / 1 / {} |", fmt(shown))),
        "{tally}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_raw_arm_shows_what_the_command_printed_both_streams_in_order() {
    if !python() {
        return;
    }
    let root = scratch("raw");
    let arm = root.join("arm");
    let made = kit(&[
        "new",
        arm.to_str().unwrap(),
        "--mode",
        "raw",
        "--tasks",
        "mid-stream-trap",
    ]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    assert!(!std::fs::read_to_string(arm.join("prompt.md"))
        .unwrap()
        .contains("lens"));
    let task = arm.join("mid-stream-trap");
    let out = run(&arm, &task, "sh ./migrate.sh; echo done >&2");
    let printed = text(&out.stdout);
    assert_eq!(printed.lines().count(), 4_801, "every line, unshortened");
    assert!(printed.ends_with("done\n"));
    let tally = text(&kit(&["tally", arm.to_str().unwrap()]).stdout);
    assert!(
        tally.contains("| mid-stream-trap | 1 / 0 / 30,000 |"),
        "a call's bytes are capped at what the agent's shell shows:\n{tally}"
    );

    // A second arm of the same name, or a task that does not exist, is
    // refused in one line.
    for args in [
        vec!["new", arm.to_str().unwrap(), "--mode", "raw"],
        vec![
            "new",
            root.join("b").to_str().unwrap(),
            "--mode",
            "raw",
            "--tasks",
            "no-such",
        ],
    ] {
        let said = kit(&args);
        assert_eq!(said.status.code(), Some(2));
        assert_eq!(
            text(&said.stderr).lines().count(),
            1,
            "{}",
            text(&said.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `n` with thousands separated by commas, as the tally prints it.
fn fmt(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
