//! `lens stats` over a damaged or large run log: bad lines are skipped and
//! counted, and every record is read, the newest too. Issue 22 item 14.

mod common;

use common::Sandbox;

fn record(i: usize, argv: &str) -> String {
    format!(
        r#"{{"ts_ms":{i},"argv":["{argv}"],"level":2,"exit":0,"dur_ms":1,"bytes_in":100,"bytes_out":10}}"#
    )
}

#[test]
fn a_bad_byte_costs_its_line_not_the_report() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.log_dir()).unwrap();
    let mut log = format!("{}\n", record(1, "ls")).into_bytes();
    log.extend_from_slice(b"{\"ts_ms\":2,\"argv\":[\"\xff\"]}\n");
    log.extend_from_slice(format!("{}\n", record(3, "ls")).as_bytes());
    std::fs::write(sb.log_dir().join("runs.jsonl"), log).unwrap();
    let out = sb.run(&["stats"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.starts_with("2 runs"), "{t}");
    assert!(t.contains("(1 unreadable log lines skipped)"), "{t}");
}

#[test]
fn every_record_of_a_large_log_is_counted_the_newest_too() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.log_dir()).unwrap();
    // Past the 16 MiB per file a read once stopped at, over both files of the
    // rotation.
    let pad = "x".repeat(400);
    let line = |i: usize| record(i, &format!("old{pad}"));
    let n = 40_000;
    let older: String = (0..n).map(|i| line(i) + "\n").collect();
    assert!(older.len() > 16 << 20);
    std::fs::write(sb.log_dir().join("runs.1.jsonl"), older).unwrap();
    let mut newer: String = (n..2 * n).map(|i| line(i) + "\n").collect();
    newer.push_str(&record(2 * n, "newest"));
    newer.push('\n');
    std::fs::write(sb.log_dir().join("runs.jsonl"), newer).unwrap();
    let out = sb.run(&["stats", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"]["runs"], 2 * n + 1);
    assert_eq!(v["unreadable_lines"], 0);
    let commands = v["commands"].as_array().unwrap();
    assert!(commands.iter().any(|c| c[0] == "newest"), "{commands:?}");
}

/// Runs `lens hook <agent>` with `event` on stdin.
fn hook(sb: &Sandbox, agent: &str, event: &serde_json::Value) -> String {
    use std::io::Write;
    let mut child = sb
        .lens()
        .args(["hook", agent])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

/// Issue 30 item 2: an agent's result counts what that agent would have
/// shown its model without Lens (Claude Code's 2 KB preview of a persisted
/// output), never the command's whole output, and a `lens show` it ran is a
/// fetch of the bytes the model read.
#[test]
fn each_agent_is_reported_with_what_its_model_would_have_read_and_read() {
    let sb = Sandbox::new();
    let dir = tempfile_dir(&sb);
    let full: String = (1..=70_000).map(|i| format!("{i}\n")).collect();
    let path = dir.join("persisted.txt");
    std::fs::write(&path, &full).unwrap();
    let event = serde_json::json!({
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": dir,
        "tool_input": {"command": "seq 1 70000"},
        "tool_response": {"stdout": &full[..30_000], "stderr": "", "interrupted": false,
            "isImage": false, "persistedOutputPath": path, "persistedOutputSize": full.len()},
    });
    let answer = hook(&sb, "claude", &event);
    let view: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let shown = view["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .unwrap()
        .len() as u64;
    // An output under every limit: the model reads it as it is, in both arms.
    let small = serde_json::json!({
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": dir,
        "tool_input": {"command": "git status"},
        "tool_response": {"stdout": "On branch main\nnothing to commit", "stderr": ""},
    });
    assert_eq!(hook(&sb, "claude", &small), "");
    let handle = common::handle_in(answer.as_bytes()).unwrap();
    let page = "1000\n".repeat(300);
    let fetch = serde_json::json!({
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": dir,
        "tool_input": {"command": format!("lens show {handle} --lines 1000-1299")},
        "tool_response": {"stdout": page, "stderr": ""},
    });
    assert_eq!(hook(&sb, "claude", &fetch), "");

    let out = sb.run(&["stats", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &v["agents"]["claude"];
    let would = a["would_read_bytes"].as_u64().unwrap();
    // The preview block (about 2.2 KB) and the small output, not 388 KB.
    assert!((2_100..2_500).contains(&(would - 32)), "{a}");
    // The view as logged ends with the newline the answer trims.
    let read = a["read_bytes"].as_u64().unwrap();
    assert_eq!(read, shown + 1 + 32, "{a}");
    assert_eq!(a["fetches"], 1, "{a}");
    // The page as Claude Code hands it over, its last newline trimmed.
    assert_eq!(a["fetched_bytes"], 1499, "{a}");
    assert_eq!(
        a["saved_bytes"].as_i64().unwrap(),
        would as i64 - read as i64 - 1499,
        "{a}"
    );
    assert_eq!(v["total"]["bytes_in"].as_u64().unwrap(), would - 32, "{v}");
    assert_eq!(v["lens_runs"]["runs"], 0, "{v}");

    let t = String::from_utf8(sb.run(&["stats"]).stdout).unwrap();
    let row = t
        .lines()
        .find(|l| l.starts_with("claude "))
        .unwrap_or_else(|| panic!("{t}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[1], "2", "{t}");
}

/// `lens <cmd>` runs keep counting the command's raw output, labelled so.
#[test]
fn lens_runs_count_raw_output_under_their_own_label() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.log_dir()).unwrap();
    std::fs::write(
        sb.log_dir().join("runs.jsonl"),
        format!("{}\n{}\n", record(1, "ls"), record(2, "ls")),
    )
    .unwrap();
    let out = sb.run(&["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["lens_runs"]["bytes_in"], 200);
    assert_eq!(v["lens_runs"]["bytes_out"], 20);
    assert_eq!(v["agents"], serde_json::json!({}));
    let t = String::from_utf8(sb.run(&["stats"]).stdout).unwrap();
    assert!(
        t.contains(
            "lens <cmd> runs: 2 (0 passthrough), 200 B of raw output in, 20 B shown, 90.0% saved"
        ),
        "{t}"
    );
}

fn tempfile_dir(sb: &Sandbox) -> std::path::PathBuf {
    let d = sb.root.join("work");
    std::fs::create_dir_all(&d).unwrap();
    d
}
