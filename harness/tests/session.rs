//! `harness session` end to end with the scripted agent: the plan spends nothing,
//! a run writes every run's record with the verdicts and the statistics, and a
//! resumed run reruns nothing it already recorded.

mod lens_bin;

use lens_bin::lens_binary;
use std::path::Path;
use std::process::{Command, Output};

fn harness(args: &[&str], dir: &Path) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(dir)
        .env("LENS_BIN", lens_binary())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn plan_names_the_sessions_and_spends_nothing() {
    let dir = std::env::temp_dir();
    let out = harness(&["session", "plan"], &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("48 runs: 3 sessions x 8 pairs x 2 arms"),
        "{text}"
    );
    assert!(text.contains("rust-build-fix (task cargo-cascade)"));
    assert!(text.contains("python-test-fix (task fix-failing-test)"));
    assert!(text.contains("nothing was run and nothing was spent"));
}

#[test]
fn a_scripted_session_run_records_pairs_and_resumes_without_rerunning() {
    let dir = std::env::temp_dir().join(format!("lens-session-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.json");
    let f = file.to_str().unwrap();
    let args = [
        "session",
        "run",
        "--run",
        "--sessions",
        "python-test-fix",
        "--pairs",
        "3",
        "--out",
        f,
    ];
    let out = harness(&args, &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("with 3 pairs the smallest p the test can give is 0.2500"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v["complete"], true);
    assert_eq!(v["simulation"], true);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    for r in runs {
        assert_eq!(r["success"], true, "{r}");
        let lens = r["arm"] == "lens";
        assert_eq!(r["views"].as_u64().unwrap() > 0, lens, "{r}");
        assert!(r["tool_result_bytes"].as_u64().unwrap() > 0);
        assert!(r["tokens"]["cache_read"].as_u64().unwrap() > 0);
    }
    // Each pair holds both arms, one first and one second.
    for pair in 1..=3 {
        let mut pos: Vec<u64> = runs
            .iter()
            .filter(|r| r["pair"] == pair)
            .map(|r| r["position"].as_u64().unwrap())
            .collect();
        pos.sort();
        assert_eq!(pos, [0, 1]);
    }
    assert!(text.contains("| python-test-fix | 3 |"), "{text}");
    // Resuming a finished sweep runs nothing again.
    let out = harness(&[&args[..], &["--resume"]].concat(), &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("resume: 6 runs already recorded"), "{text}");
    assert!(!text.contains("[1/6]"), "{text}");
    let again: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(again["runs"], v["runs"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
