//! The agent runner's own guarantees, with a stand-in program in place of a real
//! CLI (this file is its own process, so pointing LENS_AGENTS_BIN at the stand-in
//! touches no other test): the environment is emptied, HOME and PATH are the
//! spec's, and the time limit ends the CLI and everything it started.

use std::path::Path;
use std::time::Duration;

use harness::agent_cli::{AgentCli, RunSpec, PLACEHOLDER_KEY};
use harness::model_server::Script;

fn write_program(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(path)
        .status()
        .unwrap();
}

#[test]
fn the_cli_gets_an_empty_environment_and_is_ended_with_its_children_at_the_limit() {
    let root = std::env::temp_dir().join(format!("lens-agent-cli-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let bin = root.join("bin");
    let (home, project) = (root.join("home"), root.join("project"));
    for d in [&bin, &home, &project] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::env::set_var("LENS_AGENTS_BIN", &bin);
    std::env::set_var("LENS_SHOULD_NOT_LEAK", "1");

    // Prints its environment and working directory, then waits on a child.
    write_program(
        &bin.join("claude"),
        "#!/bin/sh\nenv | sort\npwd\nsleep 300 &\necho $! > child.pid\nwait\n",
    );
    let mut spec = RunSpec::new("hi", Script::commands(vec![], "done"), &home, &project)
        .env("EXTRA_FROM_SPEC", "yes");
    spec.extra_path = Some(root.join("lens-bin"));
    spec.time_limit = Duration::from_millis(1500);
    let out = AgentCli::Claude.run(&spec).unwrap();

    assert!(out.timed_out);
    assert_eq!(out.exit, 124);
    let vars: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    assert!(!vars.contains(&"LENS_SHOULD_NOT_LEAK"), "{vars:?}");
    assert!(!vars.contains(&"CARGO_MANIFEST_DIR"), "{vars:?}");
    assert!(out.stdout.contains(&format!("HOME={}\n", home.display())));
    assert!(out
        .stdout
        .contains(&format!("ANTHROPIC_API_KEY={PLACEHOLDER_KEY}\n")));
    assert!(out.stdout.contains("ANTHROPIC_BASE_URL=http://127.0.0.1:"));
    assert!(out.stdout.contains("EXTRA_FROM_SPEC=yes\n"));
    let path = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("PATH="))
        .unwrap();
    let dirs: Vec<&str> = path.split(':').collect();
    assert_eq!(dirs[0], bin.to_str().unwrap());
    assert_eq!(dirs[1], root.join("lens-bin").to_str().unwrap());
    assert_eq!(&dirs[dirs.len() - 2..], ["/usr/bin", "/bin"]);
    assert!(out.stdout.contains(&format!("\n{}\n", project.display())));

    // The child the stand-in started went with it (gone, or a zombie nobody
    // has reaped yet).
    // SIGKILL is sent to the group when the run ends; the kernel may take a
    // moment to finish the child off, so its state is read until it is gone
    // (a loaded machine once showed it still running right after the kill).
    let pid = std::fs::read_to_string(project.join("child.pid")).unwrap();
    let read_stat =
        || std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    let gone = |stat: &str| {
        matches!(
            stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]),
            None | Some("Z") | Some("X")
        )
    };
    let mut stat = read_stat();
    for _ in 0..250 {
        if gone(&stat) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        stat = read_stat();
    }
    let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
    assert!(
        matches!(state, None | Some("Z") | Some("X")),
        "the CLI's child {} outlived the time limit: {stat}",
        pid.trim()
    );
    std::fs::remove_dir_all(&root).unwrap();
}
