//! A real agent runs in a microVM unless told otherwise, and is warned about when
//! told to run in a directory, where it could read the task's verifier.

use std::process::Command;

fn plan(args: &[&str]) -> (String, String) {
    plan_with(args, &[])
}

fn plan_with(args: &[&str], env: &[(&str, &std::path::Path)]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("plan")
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_real_agent_defaults_to_a_microvm_and_a_directory_warns() {
    let (out, err) = plan(&["--driver", "claude", "--tasks", "mid-stream-trap"]);
    assert!(out.contains("isolation Vm"), "{out}");
    assert!(!err.contains("can read the task's verifier"), "{err}");
    let (out, err) = plan(&[
        "--driver",
        "claude",
        "--tasks",
        "mid-stream-trap",
        "--isolation",
        "dir",
    ]);
    assert!(out.contains("isolation Dir"), "{out}");
    assert!(err.contains("can read the task's verifier"), "{err}");
    // The scripted agent stays in a directory, unwarned.
    let (out, err) = plan(&["--tasks", "mid-stream-trap"]);
    assert!(out.contains("isolation Dir"), "{out}");
    assert!(err.is_empty(), "{err}");
    // A real CLI in a microVM needs an image that holds it (here an empty
    // image folder): refused up front, before the agent is started once.
    let empty = std::env::temp_dir().join(format!("lens-no-image-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let (out, _) = plan_with(
        &[
            "--driver",
            "claude",
            "--model",
            "scripted",
            "--tasks",
            "mid-stream-trap",
            "--isolation",
            "vm",
        ],
        &[("LENS_IMAGE_DIR", &empty)],
    );
    assert!(out.contains("preflight: NOT ready"), "{out}");
    assert!(out.contains("make image`"), "{out}");
    assert!(!out.contains("starting claude once"), "{out}");
}
