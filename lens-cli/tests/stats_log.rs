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
