//! The microVM smoke test: boot the image's kernel and initrd (built by
//! `make image-boot`) under QEMU with a job disk, run a command in the guest, and
//! read what it wrote back on the host. Ignored by plain `cargo test` because it
//! needs qemu-system-x86 and the boot files; `make vm-smoke` runs it, and CI does.

mod agents_ready;
mod common;
mod lens_bin;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::broker::{placeholder_for, Broker, Config};
use harness::isolation::vm::{self, Accel, Forward, Job, Machine};

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
        broker: Some(forward(broker_port)),
        readback: vec!["/out".into()],
        echo: false,
    };
    let boot = machine().run(&job, &scratch.join("boot")).unwrap();
    eprintln!("{}", boot.serial_tail(1000));
    assert!(boot.started, "{:?}", boot.not_started());
    boot
}

/// A broker in front of `upstream` that puts `key` in `header` (after
/// `prefix`) where the guest sends the key's placeholder.
fn broker_to(upstream: String, header: &str, prefix: &str, key: &str) -> Broker {
    Broker::start(Config {
        upstream,
        header: header.into(),
        prefix: prefix.into(),
        key: key.into(),
        placeholder: placeholder_for(key),
    })
    .unwrap()
}

/// An empty scratch folder for one test, and the job folder in it.
fn fresh_job(tag: &str) -> (PathBuf, PathBuf) {
    let scratch = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let staged = scratch.join("job");
    std::fs::create_dir_all(&staged).unwrap();
    (scratch, staged)
}

/// The broker on `port`, each guest connection relayed by the harness binary.
fn forward(port: u16) -> Forward {
    Forward {
        port,
        relay: env!("CARGO_BIN_EXE_harness").into(),
    }
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
        broker: None,
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
        broker: None,
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
    let broker = broker_to(
        format!("http://127.0.0.1:{}", up.port),
        "x-api-key",
        "",
        key,
    );
    let (scratch, staged) = fresh_job("vm-smoke-net");
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
    let broker = broker_to(server.url(), "x-api-key", "", key);
    let (scratch, staged) = fresh_job("vm-smoke-model");
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

/// The files a guest with no root image needs to run the host's `lens` (a
/// glibc binary): the binary, and the loader and libraries it links, which the
/// job's script puts where the loader looks (the initrd's root is writable).
fn stage_lens(staged: &Path) {
    let lens = lens_bin::lens_binary();
    std::fs::create_dir_all(staged.join("bin")).unwrap();
    std::fs::create_dir_all(staged.join("sys/lib")).unwrap();
    std::fs::copy(&lens, staged.join("bin/lens")).unwrap();
    let ldd = std::process::Command::new("ldd")
        .arg(&lens)
        .output()
        .unwrap();
    for line in String::from_utf8_lossy(&ldd.stdout).lines() {
        let path = line
            .split_whitespace()
            .find(|w| w.starts_with('/'))
            .map(PathBuf::from);
        if let Some(p) = path {
            let name = p.file_name().unwrap().to_owned();
            std::fs::copy(&p, staged.join("sys/lib").join(name)).unwrap();
        }
    }
}

/// Links `from` to `to`, or copies it when they are on different filesystems.
fn link_or_copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}

// A real agent CLI in the microVM, end to end: Codex CLI (its static binary,
// from `make agents`) runs in a guest with no root image, with Lens installed
// by `lens init` inside the guest, against the scripted model on the host's
// loopback, reached only through the broker. The guest holds the placeholder;
// the broker puts the real value in; the model reads Lens's view of the
// command, whose handle opens to the full output in the guest's store.
#[test]
#[ignore = "needs qemu-system-x86, make image-boot and make agents; run by make vm-smoke"]
fn a_real_codex_in_the_guest_reads_lens_views_through_the_broker() {
    use harness::agent_cli::AgentCli;
    use harness::model_server::{Script, Server};
    if !agents_ready::available(AgentCli::Codex) {
        return;
    }
    let native = AgentCli::bin_dir()
        .join("../@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    assert!(
        native.is_file(),
        "{} is missing; run make agents",
        native.display()
    );
    let key = "sk-test-REAL-codex-0123456789";
    let ph = placeholder_for(key);
    let server = Server::start(Script::commands(vec!["seq 1 3000".into()], "Done.")).unwrap();
    let broker = broker_to(server.url(), "authorization", "Bearer ", key);
    let (scratch, staged) = fresh_job("vm-smoke-codex");
    std::fs::create_dir_all(staged.join("project")).unwrap();
    std::fs::create_dir_all(staged.join("home/.codex")).unwrap();
    stage_lens(&staged);
    link_or_copy(&native, &staged.join("bin/codex"));
    let provider = "model_providers.scripted={name=\"scripted\", base_url=\"http://10.0.2.100:80/v1\", wire_api=\"responses\", env_key=\"LENS_SCRIPTED_KEY\"}";
    std::fs::write(
        staged.join("run.sh"),
        format!(
            "mkdir -p out /lib64 /lib/x86_64-linux-gnu /etc\n\
             cp sys/lib/* /lib/x86_64-linux-gnu/ && ln -sf /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 /lib64/\n\
             echo 'root:x:0:0:root:/job/home:/bin/sh' > /etc/passwd\n\
             export HOME=/job/home CODEX_HOME=/job/home/.codex PATH=/job/bin:/bin SHELL=/bin/sh\n\
             export LENS_STORE=/job/lens/store LENS_LOG_DIR=/job/lens/log LENS_CONFIG=/job/lens/none.toml\n\
             export LENS_SCRIPTED_KEY={ph}\n\
             cd /job/project; date +%s > /job/out/t0\n\
             lens init --agent codex --global > /job/out/init 2>&1; echo \"init $?\" >> /job/out/init\n\
             codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
               --dangerously-bypass-hook-trust -c 'model=\"scripted\"' -c 'model_provider=\"scripted\"' \
               -c '{provider}' -c 'analytics.enabled=false' 'Run the commands.' \
               < /dev/null > /job/out/stdout 2> /job/out/stderr\n\
             echo $? > /job/out/codex-exit; date +%s > /job/out/t1\n\
             env > /job/out/env\n",
        ),
    )
    .unwrap();
    let job = Job {
        staged,
        disk_mib: 512,
        limit: Duration::from_secs(300),
        broker: Some(forward(broker.port)),
        readback: vec!["/out".into(), "/lens".into()],
        echo: false,
    };
    let m = Machine {
        memory_mib: 1536,
        cpus: 2,
        ..machine()
    };
    let boot = m.run(&job, &scratch.join("boot")).unwrap();
    assert!(boot.started, "{:?}", boot.not_started());
    let out = &boot.returned["/out"];
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_default();
    let describe = || {
        format!(
            "serial: {}\ninit: {}\nstdout: {}\nstderr: {}",
            boot.serial_tail(2000),
            read("init"),
            read("stdout"),
            read("stderr")
        )
    };
    assert_eq!(read("codex-exit").trim(), "0", "{}", describe());
    assert!(read("init").ends_with("init 0\n"), "{}", describe());

    // Two model calls through the broker (QEMU relays each connection), the
    // second carrying the command's result as Codex's hook left it: Lens's view.
    let seen = server.requests();
    let turns: Vec<_> = seen.iter().filter(|e| e.kind == "turn").collect();
    assert_eq!(turns.len(), 2, "{seen:?}\n{}", describe());
    let results = &turns[1].tool_results;
    assert_eq!(results.len(), 1, "{results:?}");
    let view = &results[0].text;
    assert!(
        view.contains("\n2996\n3000") || view.contains("2999\n3000"),
        "{view}"
    );
    let at = view
        .find("[lens: elided stdout ")
        .expect("the model read a Lens view");
    let h = view[at..].find("handle=").unwrap() + at + 7;
    let handle = &view[h..h + 8];
    assert!(view.len() < 2000, "{} bytes reached the model", view.len());
    // The command ran as the model asked for it (the hook rewrote nothing).
    assert!(
        read("stdout").contains(r#""command":"/bin/sh -lc 'seq 1 3000'""#),
        "{}",
        describe()
    );
    // The handle opens, on the host, to all of what the command printed in
    // the guest.
    let store = boot.returned["/lens"].join("store");
    let shown = std::process::Command::new(lens_bin::lens_binary())
        .args(["show", handle])
        .env("LENS_STORE", &store)
        .env("LENS_LOG_DIR", scratch.join("log"))
        .env("LENS_CONFIG", scratch.join("none.toml"))
        .output()
        .unwrap();
    let want: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout),
        want,
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );

    // The model server got the real key on every call and never the
    // placeholder; the guest held the placeholder and never the real key.
    for t in &turns {
        let auth: Vec<&str> = t
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(auth, [format!("Bearer {key}")]);
        assert!(!t.headers.iter().any(|(_, v)| v.contains(&ph)) && !t.body.contains(&ph));
    }
    assert!(read("env").contains(&format!("LENS_SCRIPTED_KEY={ph}")));
    for (what, text) in [
        ("env", read("env")),
        ("stdout", read("stdout")),
        ("stderr", read("stderr")),
        ("serial", boot.serial.clone()),
    ] {
        assert!(
            !text.contains(key),
            "the real key reached the guest's {what}"
        );
    }
    let log = broker.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log.iter().all(|e| e.refused.is_none() && e.status == 200),
        "{log:?}"
    );
    std::fs::remove_dir_all(&scratch).unwrap();
}
