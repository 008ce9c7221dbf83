//! `harness model-server`: serves a script file on the port it writes, and logs
//! every request as a JSON line.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[test]
fn the_command_serves_the_script_and_logs_each_request() {
    let dir = std::env::temp_dir().join(format!("lens-model-server-cmd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (script, log, port_file) = (
        dir.join("script.toml"),
        dir.join("log.jsonl"),
        dir.join("port"),
    );
    std::fs::write(&script, "commands = [\"seq 1 3\"]\nfinal = \"fin\"\n").unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("model-server")
        .arg("--script")
        .arg(&script)
        .arg("--log")
        .arg(&log)
        .arg("--port-file")
        .arg(&port_file)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let port: u16 = loop {
        if let Some(p) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break p;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no port file");
        std::thread::sleep(Duration::from_millis(20));
    };
    let body = r#"{"model":"m","max_tokens":9,"tools":[{"name":"Bash","input_schema":{"properties":{"command":{"type":"string"}}}}],"messages":[{"role":"user","content":"go"}]}"#;
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(
        answer.contains(r#""input":{"command":"seq 1 3"}"#),
        "{answer}"
    );
    let line: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(line["kind"], "turn");
    assert_eq!(line["dialect"], "anthropic");
    assert_eq!(line["action"]["command"], "seq 1 3");
    assert_eq!(line["usage"]["input_tokens"], body.len().div_ceil(4));
    std::fs::remove_dir_all(&dir).unwrap();
}
