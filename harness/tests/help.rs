//! `--help` and `-h` on every subcommand of `harness`, and on `compare`: usage and
//! flags on stdout, nothing on stderr, exit 0, and nothing run.

use std::process::Command;

/// Each way to ask for help, the usage line it must print and the flags it must name.
const HELP: &[(&str, &[&str], &str, &[&str])] = &[
    (
        env!("CARGO_BIN_EXE_harness"),
        &["plan"],
        "harness plan",
        &[
            "--driver",
            "--model",
            "--tasks",
            "--variants",
            "--repeats",
            "--isolation",
            "--vm-memory",
            "--seed",
            "--shards",
            "--out",
        ],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["run"],
        "harness run",
        &[
            "--run", "--out", "--save", "--jobs", "--resume", "--plan", "--shard",
        ],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["merge"],
        "harness merge",
        &["--out", "--save"],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["report"],
        "harness report",
        &[],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["transcripts"],
        "harness transcripts",
        &["--store", "--json"],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["session"],
        "harness session plan",
        &[
            "--driver",
            "--model",
            "--sessions",
            "--pairs",
            "--seed",
            "--isolation",
            "--run",
        ],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["session", "run"],
        "harness session run",
        &["--out", "--save", "--resume"],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["session", "report"],
        "harness session report",
        &[],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["model-server"],
        "harness model-server",
        &["--script", "--log", "--port-file"],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["guest-cell"],
        "harness guest-cell",
        &[
            "--task",
            "--variant",
            "--driver",
            "--work",
            "--out",
            "--model-url",
            "--model-key",
        ],
    ),
    (
        env!("CARGO_BIN_EXE_harness"),
        &["relay"],
        "harness relay",
        &[],
    ),
    (
        env!("CARGO_BIN_EXE_compare"),
        &[],
        "compare",
        &[
            "--mode",
            "--cases",
            "--lens",
            "--rtk",
            "--no-rtk",
            "--out",
            "--save",
            "--show",
            "--cases-dir",
            "--work",
            "--isolation",
            "--vm-memory",
            "--render",
        ],
    ),
];

#[test]
fn every_subcommand_answers_help_and_h() {
    for (bin, words, usage, flags) in HELP {
        // Help stands anywhere among the subcommand's words.
        for tail in [&["--help"][..], &["-h"], &["--out", "x.json", "--help"]] {
            let args: Vec<&str> = [*words, tail].concat();
            let out = Command::new(bin).args(&args).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
            assert!(err.is_empty(), "{args:?} wrote on stderr: {err}");
            let synopsis: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
            assert!(text.starts_with("usage: "), "{args:?}: {text}");
            assert!(
                synopsis.iter().any(|l| l
                    .trim_start()
                    .trim_start_matches("usage: ")
                    .starts_with(usage)),
                "{args:?} names no usage line for {usage}: {text}"
            );
            for f in flags.iter().chain(&["-h, --help"]) {
                assert!(text.contains(f), "{args:?} does not name {f}: {text}");
            }
        }
    }
}

#[test]
fn an_undocumented_flag_is_refused_pointing_at_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["merge", "--frobnicate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown argument \"--frobnicate\"") && err.contains("harness merge --help"),
        "{err}"
    );
}
