//! `lens <cmd>` as a process in a pipeline, a terminal and under a caller's
//! signals: it behaves as the command would without it. Each test is one of the
//! reproductions in issue 22.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::Sandbox;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Waits for `child` at most `limit`; kills it and fails the test past that.
fn wait_within(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The stdout file of the one run in `store`, if there is one yet.
fn stored_stdout(store: &Path) -> Option<String> {
    std::fs::read_dir(store)
        .ok()?
        .flatten()
        .find_map(|e| std::fs::read_to_string(e.path().join("stdout")).ok())
}

/// What a finished child printed on its piped stdout.
fn stdout_of(child: &mut Child) -> String {
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    out
}

/// A shell running `script` with `$LENS` set to the binary and the sandbox's
/// environment.
fn shell(sb: &Sandbox, script: &str) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", script])
        .env("LENS", env!("CARGO_BIN_EXE_lens"))
        .env("LENS_STORE", sb.store())
        .env("LENS_LOG_DIR", sb.log_dir())
        .env("LENS_CONFIG", sb.config())
        .current_dir(&sb.root)
        .stdin(Stdio::null());
    c
}

/// True while `pid` runs (a zombie nobody reaped has ended).
fn alive(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    if let Ok(stat) = stat {
        return stat
            .rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'));
    }
    Command::new("kill")
        .args(["-0", pid.trim()])
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

fn read_pid(path: &Path) -> String {
    let t = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.ends_with('\n') {
                return s;
            }
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no pid file");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_closed_reader_ends_the_command_as_the_pipe_would_have() {
    // `lens yes | head -1`'s reader, gone while the command still writes.
    let sb = Sandbox::new();
    let mut child = sb
        .lens()
        .args(["sh", "-c", "echo first; sleep 1; yes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes once Lens holds `first` (a run past 250 ms is written to
    // the store as it arrives): had it gone before, `echo` itself would have met
    // the closed pipe, raw or not, and there would be nothing to store.
    let t = Instant::now();
    while stored_stdout(&sb.store()).is_none_or(|s| s != "first\n") {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "`first` never reached the store"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(child.stdout.take());
    let status = wait_within(
        &mut child,
        Duration::from_secs(10),
        "lens yes with no reader",
    );
    assert_eq!(status.code(), Some(141));
    // What it had is stored, and the log says the pipe cut it short.
    let log = sb.runlog();
    assert!(log.contains("\"cut_short\":13"), "{log}");
    let h = log.split("\"handle\":\"").nth(1).unwrap()[..8].to_string();
    // What came before the reader went; `yes` met the closed pipe at its first
    // write, as it would have raw.
    let shown = sb.run(&["show", &h]);
    assert_eq!(text(&shown.stdout), "first\n");
}

#[test]
fn a_flood_into_head_ends_as_it_would_raw() {
    // `lens yes | head -1` and `lens seq 1 N | head -1`: head waits for its first
    // line, which a view printed at the end never gives it. A stream past its
    // head's bound in the store shows its opening while it runs.
    let sb = Sandbox::new();
    common::write(&sb.config(), b"[store]\nmax_run_bytes = \"4m\"\n");
    for (cmd, first) in [("yes", "y"), ("seq 1 1000000000", "1")] {
        let script = format!(r#""$LENS" {cmd} | head -1; echo "exit ${{PIPESTATUS[0]}}""#);
        let mut c = Command::new("bash");
        c.args(["-c", &script])
            .env("LENS", env!("CARGO_BIN_EXE_lens"))
            .env("LENS_STORE", sb.store())
            .env("LENS_LOG_DIR", sb.log_dir())
            .env("LENS_CONFIG", sb.config())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let Ok(mut child) = c.spawn() else {
            eprintln!("skipped: bash is not installed");
            return;
        };
        wait_within(
            &mut child,
            Duration::from_secs(20),
            &format!("lens {cmd} | head -1"),
        );
        assert_eq!(
            stdout_of(&mut child),
            format!("{first}\nexit 141\n"),
            "{cmd}"
        );
    }
    // What it stored is bounded, and the log says the closed pipe cut it short.
    assert!(
        sb.store_bytes() < 8 << 20,
        "{} bytes stored",
        sb.store_bytes()
    );
    assert_eq!(
        sb.runlog().matches("\"cut_short\":13").count(),
        2,
        "{}",
        sb.runlog()
    );
}

#[test]
fn a_flood_into_a_pipe_that_is_read_whole_reaches_it_in_order() {
    // Past its share of the store the flood passes through as it arrives: no
    // line twice, line numbers as in the raw output, every gap a marker.
    let sb = Sandbox::new();
    common::write(&sb.config(), b"[store]\nmax_run_bytes = \"4m\"\n");
    let out = shell(
        &sb,
        r#""$LENS" sh -c 'seq 1 3000000; echo "error: disk on fire"; seq 3000002 3100000' | cat"#,
    )
    .output()
    .unwrap();
    let v = text(&out.stdout);
    let lines: Vec<&str> = v.lines().collect();
    assert_eq!(lines[0], "1", "{v}");
    assert!(v.contains("error: disk on fire"), "{v}");
    assert!(v.ends_with("3100000\n"), "{v}");
    let (mut next, mut digest) = (1u64, 0);
    for l in &lines {
        if digest > 0 {
            digest -= 1;
        } else if let Some(m) = lens_core::Marker::parse(l) {
            assert_eq!(u64::from(m.first), next, "gap before {l}\n{v}");
            next = u64::from(m.last) + 1;
            digest = m.digest;
        } else if let Ok(n) = l.parse::<u64>() {
            assert_eq!(n, next, "{l} out of place\n{v}");
            next += 1;
        } else if *l == "error: disk on fire" {
            assert_eq!(next, 3_000_001, "{v}");
            next += 1;
        }
    }
    assert_eq!(next, 3_100_001, "{v}");
}

#[test]
fn a_reader_that_closes_during_the_view_gets_sigpipe_s_exit_code() {
    // `lens --level 3 seq 1 300000 | head -1`: the reader goes after one line,
    // while Lens writes the view; raw, seq would die of SIGPIPE.
    let sb = Sandbox::new();
    let out = Command::new("bash")
        .args([
            "-c",
            r#""$LENS" --level 3 seq 1 300000 | head -1; echo "exit ${PIPESTATUS[0]}""#,
        ])
        .env("LENS", env!("CARGO_BIN_EXE_lens"))
        .env("LENS_STORE", sb.store())
        .env("LENS_LOG_DIR", sb.log_dir())
        .env("LENS_CONFIG", sb.config())
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: bash is not installed");
        return;
    };
    assert_eq!(text(&out.stdout), "1\nexit 141\n");
}

#[test]
fn merged_streams_keep_the_order_the_command_wrote_them_in() {
    let sb = Sandbox::new();
    let script = r#""$LENS" sh -c 'echo out1; echo err1 >&2; echo out2; echo err2 >&2' 2>&1"#;
    let out = shell(&sb, script).output().unwrap();
    assert_eq!(text(&out.stdout), "out1\nerr1\nout2\nerr2\n");
    // An elided merged run is one stream in the store, in order.
    let script =
        r#""$LENS" sh -c 'seq 1 3000; echo "error: in step 3000" >&2; seq 3001 6000' 2>&1"#;
    let out = shell(&sb, script).output().unwrap();
    let v = text(&out.stdout);
    assert!(v.contains("error: in step 3000"), "{v}");
    let h = common::handle_in(&out.stdout).unwrap();
    let lines = sb.run(&["show", &h, "--lines", "3000-3002"]);
    assert_eq!(text(&lines.stdout), "3000\nerror: in step 3000\n3001\n");
    let meta = std::fs::read_to_string(sb.store().join(&h).join("meta.json")).unwrap();
    assert!(meta.contains("\"merged\": true"), "{meta}");
    // Apart, they stay apart.
    let out = shell(&sb, r#""$LENS" sh -c 'echo out; echo err >&2' 2>/dev/null"#)
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "out\n");
}

#[test]
fn a_signal_ends_lens_while_its_reader_is_stalled() {
    let sb = Sandbox::new();
    let fifo = sb.root.join("fifo");
    if !Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: mkfifo failed");
        return;
    }
    // Held open for reading, never read.
    let _held = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let out = std::fs::File::options().write(true).open(&fifo).unwrap();
    let mut child = sb
        .lens()
        .args(["--level", "3", "seq", "1", "300000"])
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "lens did not block");
    let sent = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = wait_within(
        &mut child,
        Duration::from_secs(10),
        "lens on a stalled FIFO",
    );
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(143));
}

#[test]
fn a_grandchild_holding_the_pipe_does_not_hold_lens() {
    let sb = Sandbox::new();
    let t = Instant::now();
    let out = sb
        .lens()
        .args(["sh", "-c", "sleep 6 & echo hi"])
        .stdout(std::fs::File::create(sb.root.join("out")).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(sb.root.join("out")).unwrap(), b"hi\n");
    let e = text(&out.stderr);
    assert!(e.contains("was not captured"), "{e}");
}

#[test]
fn a_closed_stdin_stays_closed() {
    let sb = Sandbox::new();
    let raw = shell(&sb, "cat <&-").output().unwrap();
    let lens = shell(&sb, r#""$LENS" cat <&-"#).output().unwrap();
    assert_eq!(lens.status.code(), raw.status.code());
    assert_ne!(lens.status.code(), Some(0));
}

#[test]
fn ignored_signals_stay_ignored_and_are_not_forwarded() {
    let sb = Sandbox::new();
    // The child inherits the caller's ignored HUP: its own kill does not end it.
    let out = shell(
        &sb,
        r#"trap '' HUP; "$LENS" sh -c 'kill -HUP $$; echo survived'"#,
    )
    .output()
    .unwrap();
    assert_eq!(text(&out.stdout), "survived\n", "{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
    // A HUP sent to Lens (nohup) is not forwarded.
    let flag = sb.root.join("survived");
    let pid_file = sb.root.join("lens.pid");
    let script = format!(
        r#"trap '' HUP; "$LENS" sh -c 'sleep 1; touch {}' & echo $! > {}; wait"#,
        flag.display(),
        pid_file.display()
    );
    let mut child = shell(&sb, &script).spawn().unwrap();
    let pid = read_pid(&pid_file);
    std::thread::sleep(Duration::from_millis(200));
    Command::new("kill")
        .args(["-HUP", pid.trim()])
        .status()
        .unwrap();
    wait_within(&mut child, Duration::from_secs(10), "nohup lens");
    assert!(flag.exists(), "the HUP ended the job");
    // An ignored SIGPIPE stays ignored for the child (Linux shows it).
    if Path::new("/proc/self/status").exists() {
        let out = shell(
            &sb,
            r#"trap '' PIPE; "$LENS" sh -c 'grep SigIgn /proc/self/status'"#,
        )
        .output()
        .unwrap();
        let line = text(&out.stdout);
        let mask = u64::from_str_radix(line.trim().rsplit('\t').next().unwrap(), 16).unwrap();
        assert!(mask & (1 << 12) != 0, "{line}");
    }
}

#[test]
fn a_kill_aimed_at_lens_s_group_reaches_the_command_s_processes() {
    let sb = Sandbox::new();
    if Command::new("timeout").arg("--version").output().is_err() {
        eprintln!("skipped: timeout is not installed");
        return;
    }
    let pids = sb.root.join("pids");
    let script = format!(
        r#"timeout -s KILL 2 "$LENS" sh -c 'sleep 43 & echo $! > {p}; sleep 44 & echo $! >> {p}; wait'"#,
        p = pids.display()
    );
    let mut child = shell(&sb, &script).spawn().unwrap();
    wait_within(&mut child, Duration::from_secs(10), "timeout");
    std::thread::sleep(Duration::from_millis(200));
    let pids = std::fs::read_to_string(&pids).unwrap();
    for pid in pids.lines() {
        assert!(!alive(pid), "sleep {pid} outlived the kill");
    }
}

#[test]
fn a_command_reading_the_terminal_is_in_its_foreground() {
    let sb = Sandbox::new();
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: script (util-linux) is not installed");
        return;
    }
    let lens = env!("CARGO_BIN_EXE_lens");
    let inner = format!("{lens} sh -c 'read x </dev/tty; echo got $x' </dev/null");
    let mut child = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .env("LENS_STORE", sb.store())
        .env("LENS_LOG_DIR", sb.log_dir())
        .env("LENS_CONFIG", sb.config())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    use std::io::Write;
    input.write_all(b"hello\n").unwrap();
    let status = wait_within(&mut child, Duration::from_secs(10), "lens reading /dev/tty");
    drop(input);
    let out = stdout_of(&mut child);
    assert!(status.success(), "{out}");
    assert!(out.contains("got hello"), "{out}");
}

#[test]
fn a_run_killed_outright_is_stored_and_the_next_run_logs_it_as_cut_short() {
    let sb = Sandbox::new();
    if Command::new("timeout").arg("--version").output().is_err() {
        eprintln!("skipped: timeout is not installed");
        return;
    }
    let script =
        r#"timeout -s KILL 2 "$LENS" sh -c 'for i in 1 2 3; do echo step $i; done; sleep 20'"#;
    let mut child = shell(&sb, script).spawn().unwrap();
    let status = wait_within(&mut child, Duration::from_secs(10), "timeout -s KILL");
    assert_ne!(status.code(), Some(0));
    let next = sb.run(&["echo", "next"]);
    assert_eq!(next.stdout, b"next\n");
    let e = text(&next.stderr);
    assert!(
        e.contains("was killed before it could show its output"),
        "{e}"
    );
    let h = common::handle_in(e.replace("lens show ", "handle=").as_bytes()).unwrap();
    let shown = sb.run(&["show", &h]);
    assert_eq!(text(&shown.stdout), "step 1\nstep 2\nstep 3\n");
    assert!(shown.stderr.is_empty(), "{}", text(&shown.stderr));
    let log = sb.runlog();
    assert!(
        log.contains(&format!("\"handle\":\"{h}\",\"cut_short\":9")),
        "{log}"
    );
    // Logged once.
    let again = sb.run(&["echo", "again"]);
    assert!(again.stderr.is_empty(), "{}", text(&again.stderr));
}

#[test]
fn a_follow_mode_prints_as_it_goes() {
    // `lens tail -f`: under the filter it would print nothing until stopped.
    let sb = Sandbox::new();
    let log = sb.root.join("app.log");
    std::fs::write(&log, "listening on http://localhost:3000\n").unwrap();
    let mut child = sb
        .lens()
        .args(["tail", "-f", log.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        let n = out.read(&mut buf).unwrap_or(0);
        let _ = tx.send(buf[..n].to_vec());
    });
    let first = rx.recv_timeout(Duration::from_secs(5));
    let _ = child.kill();
    let _ = child.wait();
    let first = first.expect("no output from lens tail -f within 5 s");
    assert!(text(&first).starts_with("listening on"), "{}", text(&first));
    assert!(
        sb.runlog().contains("\"passthrough\":true"),
        "{}",
        sb.runlog()
    );
}

/// Runs `lens args…` with its stdout a pipe whose reader closed before Lens
/// started: the shell in front waits for the word to go, sent once the read
/// end is dropped.
fn into_a_closed_pipe(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    use std::io::Write;
    let mut child = shell(sb, r#"read go; exec "$LENS" "$@""#)
        .arg("sh")
        .args(args)
        .env("HOME", &sb.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut go = child.stdin.take().unwrap();
    go.write_all(b"go\n").unwrap();
    drop(go);
    child.wait_with_output().unwrap()
}

#[test]
fn lens_s_own_output_into_a_closed_pipe_ends_quietly() {
    // `lens --help | head -0` and the like once panicked (exit 101, "Broken
    // pipe"); they end as a command killed by SIGPIPE would, saying nothing.
    let sb = Sandbox::new();
    sb.run(&["seq", "1", "5000"]);
    for args in [
        &["--help"][..],
        &["stats"],
        &["init", "--agent", "claude", "--dry-run"],
    ] {
        let out = into_a_closed_pipe(&sb, args);
        assert_eq!(
            out.status.code(),
            Some(141),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "{args:?}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_under_lens_s_stdout_fails_the_run_in_one_line() {
    // `seq 1 5000 > /dev/full` exits 1 with "No space left on device"; under
    // Lens it once exited 0 and said nothing.
    let sb = Sandbox::new();
    let full = || {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let stored = sb.run(&["seq", "1", "5000"]);
    let h = common::handle_in(&stored.stdout).unwrap();
    // A hook's answer too: it once exited 0 with nothing written.
    let event = sb.root.join("event.json");
    common::write(&event, b"{}");
    let cases: [(&[&str], i32); 5] = [
        (&["seq", "1", "5000"], 1),
        (&["sh", "-c", "seq 1 5000; exit 3"], 3),
        (&["--as", "seq 1 5000"], 1),
        (&["show", &h], 1),
        (&["hook", "gemini"], 1),
    ];
    for (args, code) in cases {
        let mut c = sb.lens();
        c.args(args).stdout(full()).stderr(Stdio::piped());
        if args[0] == "--as" {
            c.stdin(std::fs::File::open(sb.store().join(&h).join("stdout")).unwrap());
        }
        if args[0] == "hook" {
            c.stdin(std::fs::File::open(&event).unwrap());
        }
        let out = c.output().unwrap();
        let e = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {e}");
        assert!(
            e.lines().count() == 1 && e.contains("cannot write to stdout: No space left on device"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn an_install_into_a_closed_pipe_installs_every_agent_asked_for() {
    // `init` once wrote its report with println!: the first line into a
    // closed reader ended Lens after claude's install, before codex's.
    let sb = Sandbox::new();
    let out = into_a_closed_pipe(&sb, &["init", "--agent", "claude,codex", "--global"]);
    assert_eq!(out.status.code(), Some(141), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let claude = std::fs::read_to_string(sb.root.join(".claude/settings.json")).unwrap();
    assert!(claude.contains("lens hook claude"), "{claude}");
    let codex = std::fs::read_to_string(sb.root.join(".codex/hooks.json")).unwrap_or_default();
    assert!(codex.contains("lens hook codex"), "{codex}");
}
