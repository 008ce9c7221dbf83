//! The microVM smoke test: boot the image's kernel and initrd (built by
//! `make image-boot`) under QEMU with a job disk, run a command in the guest, and
//! read what it wrote back on the host. Ignored by plain `cargo test` because it
//! needs qemu-system-x86 and the boot files; `make vm-smoke` runs it, and CI does.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::broker::{placeholder_for, Broker, Config};
use harness::isolation::vm::{self, Accel, Job, Machine};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Boots the staged job with the broker on `broker_port`, reading `/out` back;
/// fails the test when the guest does not start.
fn boot_with_broker(staged: PathBuf, broker_port: u16, scratch: &Path) -> vm::Boot {
    let job = Job {
        staged,
        disk_mib: 16,
        limit: Duration::from_secs(120),
        broker_port: Some(broker_port),
        readback: vec!["/out".into()],
        echo: false,
    };
    let boot = machine().run(&job, &scratch.join("boot")).unwrap();
    eprintln!("{}", boot.serial_tail(1000));
    assert!(boot.started, "{:?}", boot.not_started());
    boot
}

fn machine() -> Machine {
    let qemu = vm::find_qemu()
        .expect("qemu-system-x86_64 is not installed; apt-get install qemu-system-x86");
    let boot = repo().join("out/image");
    for f in ["vmlinuz", "initrd.img"] {
        assert!(
            boot.join(f).is_file(),
            "{} is missing; run make image-boot",
            boot.join(f).display()
        );
    }
    Machine {
        qemu,
        kernel: boot.join("vmlinuz"),
        initrd: boot.join("initrd.img"),
        rootfs: None,
        accel: Accel::Tcg,
        memory_mib: 256,
        cpus: 1,
    }
}

#[test]
#[ignore = "needs qemu-system-x86 and make image-boot; run by make vm-smoke"]
fn boots_runs_a_command_and_returns_its_output() {
    let base = machine();
    let scratch = std::env::temp_dir().join(format!("vm-smoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (accel, why) = vm::probe(&base, &scratch).unwrap();
    eprintln!("accelerator: {accel:?} ({why})");
    let m = Machine { accel, ..base };

    let staged = scratch.join("job");
    std::fs::create_dir_all(staged.join("in")).unwrap();
    std::fs::write(staged.join("in/numbers"), "3\n4\n5\n").unwrap();
    std::fs::write(
        staged.join("run.sh"),
        "echo from the guest\n\
         mkdir -p out\n\
         uname -r > out/kernel\n\
         awk '{ s += $1 } END { print s }' in/numbers > out/sum\n\
         exit 3\n",
    )
    .unwrap();
    let job = Job {
        staged,
        disk_mib: 32,
        limit: Duration::from_secs(120),
        broker_port: None,
        readback: vec!["/out".into()],
        echo: false,
    };
    let boot = m.run(&job, &scratch.join("boot")).unwrap();
    eprintln!("{}", boot.serial_tail(1000));
    assert!(boot.started, "{:?}", boot.not_started());
    assert!(!boot.timed_out);
    assert_eq!(boot.exit, Some(3), "the job's exit code crosses back");
    assert!(boot.serial.contains("from the guest"));
    let out = &boot.returned["/out"];
    assert_eq!(std::fs::read_to_string(out.join("sum")).unwrap(), "12\n");
    assert_eq!(std::fs::read_to_string(out.join("exit")).unwrap(), "3\n");
    assert!(std::fs::read_to_string(out.join("kernel"))
        .unwrap()
        .ends_with("-amd64\n"));
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
#[ignore = "needs qemu-system-x86 and make image-boot; run by make vm-smoke"]
fn a_guest_that_never_reaches_its_job_is_recorded_as_never_started() {
    let m = Machine {
        memory_mib: 256,
        ..machine()
    };
    let scratch = std::env::temp_dir().join(format!("vm-smoke-ns-{}", std::process::id()));
    let staged = scratch.join("job");
    std::fs::create_dir_all(&staged).unwrap();
    std::fs::write(staged.join("run.sh"), "exit 0\n").unwrap();
    // A kernel that is not a kernel: QEMU refuses it before the guest exists.
    let broken = Machine {
        kernel: staged.join("run.sh"),
        ..m
    };
    let job = Job {
        staged: staged.clone(),
        disk_mib: 8,
        limit: Duration::from_secs(30),
        broker_port: None,
        readback: vec!["/out".into()],
        echo: false,
    };
    let boot = broken.run(&job, &scratch.join("boot")).unwrap();
    assert!(!boot.started);
    let why = boot.not_started().unwrap();
    assert!(why.starts_with("never started: "), "{why}");
    assert!(boot.returned.is_empty());
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
#[ignore = "needs qemu-system-x86 and make image-boot; run by make vm-smoke"]
fn the_guest_reaches_the_broker_and_nothing_else() {
    let key = "sk-test-REAL-0123456789abcdef";
    let ph = placeholder_for(key);
    let up = common::upstream();
    let broker = Broker::start(Config {
        upstream: format!("http://127.0.0.1:{}", up.port),
        header: "x-api-key".into(),
        prefix: String::new(),
        key: key.into(),
        placeholder: ph.clone(),
    })
    .unwrap();
    let scratch = std::env::temp_dir().join(format!("vm-smoke-net-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let staged = scratch.join("job");
    std::fs::create_dir_all(&staged).unwrap();
    // Through the broker; then straight at the upstream's port on the host (the
    // gateway, 10.0.2.2), which restrict=on must stop. busybox's wget crashes
    // resolving even a literal address (static glibc without NSS); nc does not.
    std::fs::write(
        staged.join("run.sh"),
        format!(
            "mkdir -p out\n\
             printf 'GET /v1/models HTTP/1.1\\r\\nHost: 10.0.2.100\\r\\nx-api-key: {ph}\\r\\n\\r\\n' \
               | timeout 10 nc 10.0.2.100 80 > out/models\n\
             printf 'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' | timeout 5 nc 10.0.2.2 {port} > out/direct\n",
            port = up.port
        ),
    )
    .unwrap();
    let boot = boot_with_broker(staged, broker.port, &scratch);
    let out = &boot.returned["/out"];
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_default();
    // busybox nc waits for input after the broker closes; timeout ends it.
    assert!(
        read("models").starts_with("HTTP/1.1 200 OK"),
        "{}",
        read("models")
    );
    // The upstream saw the real key; the guest got the echo with the placeholder.
    let seen = up.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "exactly one request reached the upstream");
    assert!(seen[0].contains(&format!("x-api-key: {key}")));
    assert!(read("models").contains(&ph));
    assert!(!read("models").contains(key));
    assert!(!boot.serial.contains(key));
    assert_eq!(read("direct"), "", "the guest reached the host directly");
    std::fs::remove_dir_all(&scratch).unwrap();
}

// What a real CLI in a microVM cell with the scripted model goes through: the
// guest holds only the placeholder and calls the broker, which puts the real
// value in its place on the way to the model server on the host's loopback.
// The model server never sees the placeholder, and the real value never
// reaches the guest (not in the answer, not on the console).
#[test]
#[ignore = "needs qemu-system-x86 and make image-boot; run by make vm-smoke"]
fn the_broker_hands_the_scripted_model_the_real_key_and_the_guest_the_placeholder() {
    use harness::model_server::{Script, Server};
    let key = "sk-test-REAL-fedcba9876543210";
    let ph = placeholder_for(key);
    let server = Server::start(Script::commands(vec!["git status".into()], "Done.")).unwrap();
    let broker = Broker::start(Config {
        upstream: server.url(),
        header: "x-api-key".into(),
        prefix: String::new(),
        key: key.into(),
        placeholder: ph.clone(),
    })
    .unwrap();
    let scratch = std::env::temp_dir().join(format!("vm-smoke-model-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let staged = scratch.join("job");
    std::fs::create_dir_all(&staged).unwrap();
    // One Messages call as Claude Code makes it, with the key it was given.
    let body = r#"{"model":"claude-scripted","max_tokens":64,"stream":false,"messages":[{"role":"user","content":"Run the commands."}],"tools":[{"name":"Bash","description":"Run a shell command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]}"#;
    std::fs::write(
        staged.join("run.sh"),
        format!(
            "mkdir -p out\n\
             export ANTHROPIC_API_KEY={ph}\n\
             printf 'POST /v1/messages HTTP/1.1\\r\\nHost: 10.0.2.100\\r\\nx-api-key: %s\\r\\ncontent-type: application/json\\r\\ncontent-length: {len}\\r\\n\\r\\n%s' \
               \"$ANTHROPIC_API_KEY\" '{body}' | timeout 10 nc 10.0.2.100 80 > out/answer\n\
             env > out/env\n",
            len = body.len()
        ),
    )
    .unwrap();
    let boot = boot_with_broker(staged, broker.port, &scratch);
    let out = &boot.returned["/out"];
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_default();
    // The scripted model answered the guest: its first step, the shell call.
    let answer = read("answer");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(
        answer.contains("tool_use") && answer.contains("git status"),
        "{answer}"
    );
    // The model server got the real value, and nothing of the placeholder.
    let seen = server.requests();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].kind, "turn");
    let api_key: Vec<&str> = seen[0]
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("x-api-key"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(api_key, [key]);
    assert!(
        !seen[0].headers.iter().any(|(_, v)| v.contains(&ph)) && !seen[0].body.contains(&ph),
        "the placeholder reached the model server: {:?}",
        seen[0].headers
    );
    // The guest held the placeholder only, and never saw the real value.
    assert!(read("env").contains(&format!("ANTHROPIC_API_KEY={ph}")));
    for (what, text) in [
        ("answer", answer.as_str()),
        ("env", &read("env")),
        ("serial", &boot.serial),
    ] {
        assert!(
            !text.contains(key),
            "the real key reached the guest's {what}"
        );
    }
    let log = broker.log();
    assert_eq!(
        (
            log.len(),
            log.iter().filter(|e| e.refused.is_some()).count()
        ),
        (1, 0)
    );
    std::fs::remove_dir_all(&scratch).unwrap();
}
