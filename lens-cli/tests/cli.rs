//! The `lens` binary end to end: the issue's acceptance run, flags, show, stats,
//! passthrough and error messages.

mod common;

use common::{handle_in, Sandbox};

const CASCADE: &str = r#"for i in $(seq 5000); do echo "Compiling crate$i v0.1.0"; done; echo "error: boom" >&2; exit 3"#;

#[test]
fn progress_flood_with_an_error() {
    let sb = Sandbox::new();
    let out = sb.run(&["sh", "-c", CASCADE]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "error: boom\n");
    assert!(
        out.stdout.len() < 1024,
        "view is {} bytes",
        out.stdout.len()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("[lens: elided stdout 1-4999 (4999 lines: progress) handle="),
        "{stdout}"
    );
    let h = handle_in(&out.stdout).unwrap();
    let shown = sb.run(&["show", &h]);
    let expected: String = (1..=5000)
        .map(|i| format!("Compiling crate{i} v0.1.0\n"))
        .collect();
    assert_eq!(shown.stdout, expected.as_bytes());
    assert_eq!(shown.stderr, b"error: boom\n");
    let part = sb.run(&["show", &h, "--stream", "stdout", "--lines", "2-3"]);
    assert_eq!(
        part.stdout,
        b"Compiling crate2 v0.1.0\nCompiling crate3 v0.1.0\n"
    );
    let err = sb.run(&["show", &h, "--stream", "stderr"]);
    assert_eq!(err.stdout, b"error: boom\n");
}

#[test]
fn show_renders_a_level_from_the_store() {
    let sb = Sandbox::new();
    let out = sb.run(&["--level", "0", "sh", "-c", CASCADE]);
    let h = handle_in(&out.stdout).unwrap();
    let two = sb.run(&["show", &h, "--level", "2"]);
    assert!(String::from_utf8_lossy(&two.stdout).contains("Compiling crate5000"));
    let bad = sb.run(&["show", &h, "--level", "2", "--lines", "1-2"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn show_refuses_anything_but_a_handle() {
    let sb = Sandbox::new();
    for h in ["../../etc/passwd", "ABCDEF01", "abc", "0123456789"] {
        let out = sb.run(&["show", h]);
        assert_eq!(out.status.code(), Some(1));
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("not a handle") && e.lines().count() == 1, "{e}");
    }
    let out = sb.run(&["show", "0badc0de"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no stored run 0badc0de"));
}

#[test]
fn unknown_flag_before_the_command_executes_nothing() {
    let sb = Sandbox::new();
    let marker = sb.root.join("touched");
    let out = sb.run(&["--frobnicate", "touch", marker.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!marker.exists());
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("--frobnicate"));
}

#[test]
fn flags_after_the_command_belong_to_it() {
    let sb = Sandbox::new();
    let out = sb.run(&[
        "sh",
        "-c",
        "echo \"$@\"",
        "sh",
        "--level",
        "3",
        "--budget",
        "1",
    ]);
    assert_eq!(out.stdout, b"--level 3 --budget 1\n");
    let out = sb.run(&["--", "echo", "--level"]);
    assert_eq!(out.stdout, b"--level\n");
}

#[test]
fn levels_and_budget_change_the_view() {
    let sb = Sandbox::new();
    // Each row with a word of its own (letters only, so no two rows share a
    // shape): 400 rows of one shape would be three, a marker and five at every
    // level and budget, since the budget is not filled with lines alike.
    let script = "for i in $(seq 400); do echo \"row $i of the $(printf %x $((i * 2654435761 % 4294967296)) | tr 0-9 g-p) listing\"; done";
    let sizes: Vec<usize> = ["3", "2", "1", "0"]
        .iter()
        .map(|l| sb.run(&["--level", l, "sh", "-c", script]).stdout.len())
        .collect();
    assert!(
        sizes[0] > sizes[1] && sizes[1] > sizes[2] && sizes[2] > sizes[3],
        "{sizes:?}"
    );
    let small = sb.run(&["--budget", "1k", "sh", "-c", script]).stdout.len();
    let large = sb.run(&["--budget", "8k", "sh", "-c", script]).stdout.len();
    assert!(small < large && small <= 1024 + 400, "{small} {large}");
}

#[test]
fn missing_command_is_127() {
    let sb = Sandbox::new();
    let out = sb.run(&["no-such-command-lens-test"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("command not found"));
}

#[test]
fn stats_reports_what_was_typed() {
    let sb = Sandbox::new();
    sb.run(&["sh", "-c", CASCADE]);
    sb.run(&["sh", "-c", CASCADE]);
    sb.run(&["echo", "hi"]);
    let json = sb.run(&["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["total"]["runs"], 3);
    assert_eq!(v["commands"][0][0], "sh");
    assert_eq!(v["commands"][0][1]["runs"], 2);
    assert!(v["total"]["saved_pct"].as_f64().unwrap() > 99.0);
    let table = String::from_utf8(sb.run(&["stats"]).stdout).unwrap();
    assert!(table.starts_with("3 runs (0 passthrough)"), "{table}");
}

#[test]
fn interactive_commands_pass_through_by_exec() {
    let sb = Sandbox::new();
    // Bare python3 is a REPL; with stdin at EOF it exits at once.
    let out = sb.run(&["python3"]);
    assert_eq!(out.status.code(), Some(0));
    let log = sb.runlog();
    assert!(
        log.contains(r#""argv":["python3"],"level":3,"passthrough":true}"#),
        "{log}"
    );
}

#[test]
fn help_and_version() {
    let sb = Sandbox::new();
    let h = sb.run(&["--help"]);
    assert!(String::from_utf8_lossy(&h.stdout).starts_with("usage: lens"));
    let v = sb.run(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&v.stdout),
        format!("lens {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn every_subcommand_answers_help() {
    let sb = Sandbox::new();
    // Each of Lens's own subcommands, with the flags its help must name.
    let subcommands: [(&str, &[&str]); 6] = [
        (
            "show",
            &[
                "--lines",
                "--stream",
                "--level",
                "--budget",
                "--max-bytes",
                "--grep",
                "--context",
            ],
        ),
        ("stats", &["--json", "--since"]),
        (
            "init",
            &[
                "--agent",
                "--global",
                "--project",
                "--dry-run",
                "--uninstall",
            ],
        ),
        ("hook", &["claude", "codex", "gemini", "opencode"]),
        ("verify", &["FILE", "filters.toml"]),
        ("trust", &[".lens/filters.toml"]),
    ];
    for (cmd, flags) in subcommands {
        for h in ["--help", "-h"] {
            let out = sb.run(&[cmd, h]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "lens {cmd} {h}: {text}");
            assert!(out.stderr.is_empty(), "lens {cmd} {h}: {out:?}");
            assert!(text.starts_with(&format!("usage: lens {cmd}")), "{text}");
            for f in flags.iter().chain(&["--help"]) {
                assert!(text.contains(f), "lens {cmd} {h} names {f}: {text}");
            }
        }
    }
    // From the command name on, the words are the command's: `--help` goes to it.
    let tool = sb.root.join("sometool");
    common::write(&tool, b"#!/bin/sh\necho \"sometool got: $*\"\n");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = sb.run(&[tool.to_str().unwrap(), "--help"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "sometool got: --help\n"
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn config_overrides_apply_per_command() {
    let sb = Sandbox::new();
    common::write(&sb.config(), b"[[command]]\nprefix = \"sh\"\nlevel = 0\n");
    let script = "for i in $(seq 100); do echo \"row $i\"; done";
    let out = sb.run(&["sh", "-c", script]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.starts_with("[lens: summary exit=0 stdout=100"), "{s}");
    let out = sb.run(&["--level", "3", "sh", "-c", script]);
    assert_eq!(
        out.stdout.len(),
        (1..=100).map(|i| format!("row {i}\n").len()).sum::<usize>()
    );
}

#[test]
fn store_dirs_are_private() {
    let sb = Sandbox::new();
    let out = sb.run(&["sh", "-c", CASCADE]);
    let h = handle_in(&out.stdout).unwrap();
    assert_eq!(lens_cli::platform::mode(&sb.store()), Some(0o700));
    assert_eq!(lens_cli::platform::mode(&sb.store().join(h)), Some(0o700));
    let meta: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            sb.store()
                .join(handle_in(&out.stdout).unwrap())
                .join("meta.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(meta["exit"], 3);
    assert_eq!(meta["stdout_lines"], 5000);
    assert_eq!(meta["argv"][0], "sh");
}
