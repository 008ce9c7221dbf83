//! The promise under real conditions, at sizes a test can afford: pruning never
//! takes a run just printed, memory stays bounded whatever the output, a signal
//! still shows and stores what was captured, redraws never hide an error, and
//! hostile or damaged files cost nothing but a one-line notice. The large sizes
//! are measured by `lens-bench reliability` (results/reliability.json).

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{handle_in, Sandbox};

/// The tests that put hundreds of megabytes through Lens take turns: side by
/// side on two cores, a starved reader can miss the end of a command's output
/// (see the note in `memory_stays_bounded_past_the_limit_…`).
static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|p| p.into_inner())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Ages a stored run, as if written `hours` ago.
fn age(sb: &Sandbox, handle: &str, hours: u64) {
    let t = std::time::SystemTime::now() - Duration::from_secs(hours * 3600);
    let dir = std::fs::File::open(sb.store().join(handle)).unwrap();
    dir.set_modified(t).unwrap();
}

#[test]
fn pruning_spares_the_run_just_printed_and_says_what_it_pruned() {
    let sb = Sandbox::new();
    common::write(&sb.config(), b"[store]\nmax_bytes = \"1k\"\n");
    let first = sb.run(&["seq", "1", "10000"]);
    let h1 = handle_in(&first.stdout).unwrap();
    // The run just printed is over the cap on its own, and still there.
    assert_eq!(sb.run(&["show", &h1]).status.code(), Some(0));
    // An hour later, and the prune stamp old: the next run prunes the first.
    age(&sb, &h1, 2);
    let stamp = std::fs::File::options()
        .write(true)
        .open(sb.store().join(".pruned"))
        .unwrap();
    stamp
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(7200))
        .unwrap();
    let second = sb.run(&["seq", "1", "10001"]);
    let h2 = handle_in(&second.stdout).unwrap();
    let shown = sb.run(&["show", &h2]);
    assert_eq!(shown.status.code(), Some(0));
    assert_eq!(shown.stdout.len(), second_len());
    let gone = sb.run(&["show", &h1]);
    assert_eq!(gone.status.code(), Some(1));
    let e = text(&gone.stderr);
    assert!(e.contains("was pruned") && e.lines().count() == 1, "{e}");
}

#[test]
fn pruning_never_takes_a_run_in_progress() {
    // A run still writing, its directory older than the prune age, in a store
    // over its cap: another run's prune once took it, and its handle, printed
    // at the end, opened nothing.
    let sb = Sandbox::new();
    common::write(
        &sb.config(),
        b"[store]\nmax_bytes = \"1k\"\nmax_age_days = 0\n",
    );
    let mut first = sb
        .lens()
        .args(["sh", "-c", "seq 1 100000; sleep 3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Past 250 ms the run is written to the store as it arrives.
    let t = Instant::now();
    let dir = loop {
        let found = std::fs::read_dir(sb.store()).ok().and_then(|d| {
            d.flatten()
                .map(|e| e.path())
                .find(|p| std::fs::metadata(p.join("stdout")).is_ok_and(|m| m.len() > 500_000))
        });
        if let Some(d) = found {
            break d;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the run never reached the store"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let old = std::time::SystemTime::now() - Duration::from_secs(3 * 86_400);
    std::fs::File::open(&dir)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let second = sb.run(&["seq", "1", "10001"]);
    assert!(handle_in(&second.stdout).is_some());
    assert!(dir.is_dir(), "the run in progress was pruned");
    let mut out = Vec::new();
    first.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    assert!(first.wait().unwrap().success());
    let h = handle_in(&out).unwrap();
    assert_eq!(sb.store().join(&h), dir);
    let shown = sb.run(&["show", &h]);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
    assert_eq!(
        shown.stdout,
        (1..=100000)
            .map(|i| format!("{i}\n"))
            .collect::<String>()
            .into_bytes()
    );
}

fn second_len() -> usize {
    (1..=10001).map(|i: u32| i.to_string().len() + 1).sum()
}

/// Lens under an address-space limit far below the output: it must stream.
#[cfg(target_os = "linux")]
#[test]
fn memory_stays_bounded_past_the_limit_and_the_store_is_byte_identical() {
    // Run beside another heavy test on a loaded machine, this once lost the
    // error on the last line: the child exited, and the main thread stopped
    // waiting for a reader still starved of CPU (run.rs: AFTER_EXIT, then
    // STOP_WAIT). A known gap in `lens <cmd>`, not what this test measures.
    let _turn = heavy();
    let sb = Sandbox::new();
    let lens = env!("CARGO_BIN_EXE_lens");
    // 64 MB of short lines, an error on the last line, in 400 MiB of address
    // space (each thread's allocator arena reserves 64 MiB of it): holding the
    // output as Lens once did, some 70 bytes per line besides the line, cannot fit.
    let script = "yes 'record ok' | head -c 64000000; echo 'error: the last line'";
    let out = Command::new("sh")
        .env("LENS_STORE", sb.store())
        .env("LENS_LOG_DIR", sb.log_dir())
        .env("LENS_CONFIG", sb.config())
        .env("LENS_BIN", lens)
        .args([
            "-c",
            &format!("ulimit -v 409600; exec \"$LENS_BIN\" sh -c \"{script}\""),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let view = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{view}\n{}", text(&out.stderr));
    assert!(view.len() < 8192, "view of {} bytes", view.len());
    assert!(view.contains("error: the last line"), "{view}");
    assert!(view.contains("bulk"), "{view}");
    let inner = handle_in(view.as_bytes()).unwrap();
    let mut shown = sb
        .lens()
        .args(["show", &inner])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = shown.stdout.take().unwrap();
    let mut want = b"record ok\n".repeat(6_400_000);
    want.extend_from_slice(b"error: the last line\n");
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0usize;
    loop {
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        assert!(
            total + n <= want.len() && buf[..n] == want[total..total + n],
            "differs at {total}"
        );
        total += n;
    }
    assert!(shown.wait().unwrap().success());
    assert_eq!(total, want.len());
}

/// Starts `lens sh -c script`, waits for `ready` in a file the script writes,
/// then sends `signal` to Lens alone.
fn signalled(sb: &Sandbox, script: &str, signal: &str) -> (std::process::Output, Duration) {
    let ready = sb.root.join("ready");
    // A signal ignored by whoever started the tests stays ignored across exec
    // (a job started in the background of a shell ignores SIGINT and SIGQUIT),
    // and Lens rightly leaves an ignored signal alone. python3 puts the
    // signals sent here back to their defaults, then becomes this `lens`.
    let lens = sb.lens();
    let mut cmd = Command::new("python3");
    cmd.args([
        "-c",
        "import os, signal, sys\n\
         for s in (1, 2, 3, 15): signal.signal(s, signal.SIG_DFL)\n\
         os.execv(sys.argv[1], sys.argv[1:])",
    ])
    .arg(lens.get_program())
    .args(["sh", "-c", script])
    .env("READY", &ready)
    .stdin(Stdio::null());
    for (k, v) in lens.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    if let Some(d) = lens.get_current_dir() {
        cmd.current_dir(d);
    }
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !ready.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the script never got ready"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(50));
    let sent = Instant::now();
    let ok = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    (out, sent.elapsed())
}

#[test]
fn a_term_shows_and_stores_what_was_captured_and_ends_the_child() {
    let sb = Sandbox::new();
    let pid_file = sb.root.join("child.pid");
    let script = format!(
        "echo $$ > {}; seq 1 100; echo 'error: important'; touch \"$READY\"; sleep 30",
        pid_file.display()
    );
    let (out, took) = signalled(&sb, &script, "-TERM");
    assert_eq!(out.status.code(), Some(143));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("1\n2\n") && stdout.contains("error: important\n"),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    let last = stderr.lines().last().unwrap();
    let notice = lens_core::CutShort::parse(last).unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(notice.signal, "SIGTERM");
    let h = notice.handle.unwrap();
    let shown = sb.run(&["show", &h]);
    assert_eq!(text(&shown.stdout), stdout);
    assert!(sb.runlog().contains("\"cut_short\":15"), "{}", sb.runlog());
    // The child's process group got the signal: the shell and its sleep are gone,
    // well before the sleep would have ended.
    assert!(took < Duration::from_secs(10), "{took:?}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let alive = Command::new("kill")
        .args(["-0", pid.trim()])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(!alive.success(), "the child outlived Lens");
}

#[test]
fn a_grandchild_holding_the_pipe_does_not_hang_a_signalled_run() {
    let sb = Sandbox::new();
    if Command::new("setsid").arg("true").status().is_err() {
        eprintln!("skipped: setsid is not installed");
        return;
    }
    // A process in a session of its own holds stdout open and outlives the group.
    let script = "echo start; setsid sleep 20 & touch \"$READY\"; sleep 20";
    let (out, took) = signalled(&sb, script, "-INT");
    assert_eq!(out.status.code(), Some(130));
    assert!(text(&out.stdout).starts_with("start\n"));
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert!(text(&out.stderr).contains("[lens: cut short by SIGINT handle="));
}

#[test]
fn a_redraw_never_hides_an_error() {
    let sb = Sandbox::new();
    let out = sb.run(&[
        "sh",
        "-c",
        "printf 'error: disk full on /dev/sda1\\rOK\\n'; exit 1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("error: disk full on /dev/sda1"));
    // A progress redraw is announced: its marker, then its last drawing.
    let script = "seq 1 3000; printf '10%%\\r55%%\\r100%% done\\n'";
    let out = sb.run(&["sh", "-c", script]);
    let v = text(&out.stdout);
    assert!(
        v.contains("(1 line: redrawn)") && v.contains("digest=1]\n100% done\n"),
        "{v}"
    );
}

#[test]
fn hostile_configs_cost_a_notice_not_the_run() {
    let sb = Sandbox::new();
    for config in ["/dev/zero", "/dev/urandom"] {
        let t = Instant::now();
        let out = sb
            .lens()
            .env("LENS_CONFIG", config)
            .args(["echo", "hello"])
            .output()
            .unwrap();
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(out.stdout, b"hello\n");
        let e = text(&out.stderr);
        assert!(
            e.contains("not a regular file") && e.lines().count() == 1,
            "{e}"
        );
    }
    let fifo = sb.root.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let out = sb
            .lens()
            .env("LENS_CONFIG", &fifo)
            .args(["echo", "hello"])
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"hello\n");
    }
    common::write(&sb.config(), &vec![b'#'; 2 << 20]);
    let out = sb.run(&["echo", "hello"]);
    assert_eq!(out.stdout, b"hello\n");
    assert!(text(&out.stderr).contains("over the 1 MiB"));
}

#[cfg(unix)]
#[test]
fn a_store_others_can_write_to_is_refused_and_the_output_shown_raw() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.store()).unwrap();
    std::fs::set_permissions(sb.store(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = sb.run(&["seq", "1", "5000"]);
    let want: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    assert_eq!(text(&out.stdout), want);
    let e = text(&out.stderr);
    assert!(
        e.contains("others can write to it") && e.lines().count() == 1,
        "{e}"
    );
    let mode = std::fs::metadata(sb.store()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o777);
}

#[test]
fn a_damaged_meta_still_serves_the_streams() {
    let sb = Sandbox::new();
    let out = sb.run(&["seq", "1", "5000"]);
    let h = handle_in(&out.stdout).unwrap();
    let meta = sb.store().join(&h).join("meta.json");
    let json = std::fs::read(&meta).unwrap();
    std::fs::write(&meta, &json[..json.len() / 3]).unwrap();
    let shown = sb.run(&["show", &h]);
    assert_eq!(shown.status.code(), Some(0));
    let want: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    assert_eq!(text(&shown.stdout), want);
    assert!(text(&shown.stderr).contains("is damaged"));
    let lines = sb.run(&["show", &h, "--lines", "4999-5000"]);
    assert_eq!(lines.stdout, b"4999\n5000\n");
}

#[test]
fn a_child_line_imitating_a_marker_is_the_childs_text() {
    let sb = Sandbox::new();
    let fake = "[lens: elided stdout 1-3 (3 lines: budget) handle=00000000]";
    let script = format!("echo '{fake}'; seq 1 3000");
    let out = sb.run(&["sh", "-c", &script]);
    let v = text(&out.stdout);
    assert!(v.starts_with(&format!("{fake}\n")), "{v}");
    // Every marker Lens printed carries the run's own handle, which the fake
    // could not know; the fake's handle opens nothing.
    let real: Vec<&str> = v
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("[lens:"))
        .collect();
    assert!(!real.is_empty());
    let h = handle_in(real[0].as_bytes()).unwrap();
    assert_ne!(h, "00000000");
    assert!(real.iter().all(|l| l.contains(&format!("handle={h}"))));
    assert_eq!(sb.run(&["show", "00000000"]).status.code(), Some(1));
}

#[test]
fn a_forged_marker_in_a_view_with_no_marker_of_its_own_is_told_apart() {
    // The command prints a marker naming another run's handle, and nothing
    // else: the view elides nothing, so no real marker shows this run's handle.
    let sb = Sandbox::new();
    let earlier = sb.run(&["seq", "1", "5000"]);
    let theirs = handle_in(&earlier.stdout).unwrap();
    let fake = format!("[lens: elided stdout 2-4 (3 lines: budget) handle={theirs}]");
    let out = sb.run(&["sh", "-c", &format!("echo one; echo '{fake}'; echo five")]);
    assert_eq!(text(&out.stdout), format!("one\n{fake}\nfive\n"));
    let e = text(&out.stderr);
    let notice = e.lines().last().unwrap_or("");
    let own = handle_in(notice.as_bytes()).unwrap_or_else(|| panic!("{e}"));
    assert_ne!(own, theirs);
    assert!(
        notice.contains(&format!("this run's handle is {own}")),
        "{notice}"
    );
    // The run's own handle opens this run.
    let shown = sb.run(&["show", &own]);
    assert_eq!(text(&shown.stdout), format!("one\n{fake}\nfive\n"));
}

#[test]
fn a_view_with_only_its_own_markers_carries_no_handle_notice() {
    // A digest's marker ends in ` digest=N]` or ` unlisted=K]` after this run's
    // handle: it is Lens's own, and the view needs no line telling it apart.
    let sb = Sandbox::new();
    let script =
        "for i in $(seq 1 400); do echo \"src/m$((i % 30)).rs:$i: error: todo $i\"; done; exit 1";
    let out = sb.run(&["sh", "-c", script]);
    let v = text(&out.stdout);
    assert!(v.contains(" digest="), "{v}");
    let e = text(&out.stderr);
    assert!(!e.contains("this run's handle is"), "{e}");
}

#[test]
fn a_stderr_only_run_shows_its_lines_by_default() {
    let sb = Sandbox::new();
    let out = sb.run(&["sh", "-c", "seq 1 3000 >&2"]);
    let h = handle_in(&out.stderr).unwrap();
    let lines = sb.run(&["show", &h, "--lines", "2-3"]);
    assert_eq!(lines.stdout, b"2\n3\n");
}

/// `n` lines of `seq 1 n`.
fn seq_text(n: u64) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect()
}

#[test]
fn a_run_past_its_store_bound_passes_the_rest_through_whole() {
    // Past [store] max_run_bytes the output once lost its middle; now every
    // byte reaches the reader and the store holds the whole lines before the
    // point the notice names.
    let sb = Sandbox::new();
    common::write(&sb.config(), b"[store]\nmax_run_bytes = \"4m\"\n");
    let out = sb.run(&["seq", "1", "1500000"]);
    assert_eq!(out.status.code(), Some(0));
    let want = seq_text(1_500_000);
    assert!(
        out.stdout == want,
        "{} of {} bytes",
        out.stdout.len(),
        want.len()
    );
    let e = text(&out.stderr);
    assert!(
        e.contains("[lens: stdout from line 315466 (byte 2097150) on passed through whole"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    let h = handle_in(&out.stderr).unwrap();
    let dir = sb.store().join(&h);
    // What the store holds is what meta.json says: the lines before the point.
    let stored = std::fs::read(dir.join("stdout")).unwrap();
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
    let u = &meta["unstored"][0];
    assert_eq!(u["stream"], "stdout");
    assert_eq!(u["from_byte"], stored.len() as u64);
    assert_eq!(u["to_byte"], want.len() as u64);
    assert_eq!(u["from_line"], 315_466);
    assert_eq!(u["to_line"], 1_500_000);
    assert!(stored[..] == want[..stored.len()] && stored.ends_with(b"\n"));
    assert_eq!(stored.iter().filter(|&&b| b == b'\n').count(), 315_465);
    assert_eq!(meta["stdout_lines"], 1_500_000);
    let head = sb.run(&["show", &h, "--lines", "315464-315465"]);
    assert_eq!(text(&head.stdout), "315464\n315465\n");
    let gap = sb.run(&["show", &h, "--lines", "500000-500001"]);
    assert!(gap.stdout.is_empty());
    assert!(
        text(&gap.stderr).contains("were not stored"),
        "{}",
        text(&gap.stderr)
    );
    // The whole stream: its stored head, then what it says of the rest (it
    // once spoke of a tail the store does not hold).
    let whole = sb.run(&["show", &h]);
    assert!(whole.stdout == want[..stored.len()]);
    let e = text(&whole.stderr);
    assert!(
        e.contains("lines 315466-1500000")
            && e.contains("the store holds lines 1-315465 of it")
            && !e.contains("tail"),
        "{e}"
    );
}

#[test]
fn a_huge_line_past_the_store_bound_reaches_the_reader_whole() {
    // One 10 MB line between short ones, and one alone through `cat`: both
    // once vanished. Past a 4 MiB bound every byte is printed, and the store
    // holds only whole lines before the huge one.
    let sb = Sandbox::new();
    common::write(&sb.config(), b"[store]\nmax_run_bytes = \"4m\"\n");
    let huge = vec![b'a'; 10_000_000];
    let mut file = seq_text(10);
    file.extend_from_slice(&huge);
    file.push(b'\n');
    file.extend_from_slice(&seq_text(20)[21..]);
    let path = sb.root.join("middle.txt");
    common::write(&path, &file);
    let out = sb.run(&["sh", "-c", "cat middle.txt; echo done >&2"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout == file,
        "{} of {} bytes",
        out.stdout.len(),
        file.len()
    );
    let e = text(&out.stderr);
    assert!(
        e.starts_with("done\n") && e.contains("stdout from line 11 (byte 21) on"),
        "{e}"
    );
    let h = handle_in(&out.stderr).unwrap();
    assert_eq!(
        std::fs::read(sb.store().join(&h).join("stdout")).unwrap(),
        seq_text(10)
    );

    let alone = sb.root.join("alone.txt");
    common::write(&alone, &huge);
    let out = sb.run(&["cat", "alone.txt"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout == huge,
        "{} of {} bytes",
        out.stdout.len(),
        huge.len()
    );
    let e = text(&out.stderr);
    assert!(e.contains("stdout from line 1 (byte 0) on"), "{e}");
    let h = handle_in(&out.stderr).unwrap();
    assert!(std::fs::read(sb.store().join(&h).join("stdout"))
        .unwrap()
        .is_empty());
}

/// Past the store bound, the output streams through Lens in bounded memory.
#[cfg(target_os = "linux")]
#[test]
fn output_past_the_store_bound_streams_in_bounded_memory() {
    let _turn = heavy();
    let sb = Sandbox::new();
    common::write(&sb.config(), b"[store]\nmax_run_bytes = \"4m\"\n");
    // 200 MB in 400 MiB of address space (each thread's allocator arena
    // reserves 64 MiB of it): held, it cannot fit.
    let out = Command::new("sh")
        .env("LENS_STORE", sb.store())
        .env("LENS_LOG_DIR", sb.log_dir())
        .env("LENS_CONFIG", sb.config())
        .env("LENS_BIN", env!("CARGO_BIN_EXE_lens"))
        .args([
            "-c",
            "ulimit -v 409600; \"$LENS_BIN\" sh -c 'yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000' | cksum",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let want = Command::new("sh")
        .args([
            "-c",
            "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000 | cksum",
        ])
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        text(&want.stdout),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("passed through whole"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_config_value_the_flags_refuse_is_refused_and_the_defaults_apply() {
    // `budget = "0"` once made the view one marker over every line; `--budget 0`
    // was refused. Both go through one reading now.
    let sb = Sandbox::new();
    let script = "seq 1 5000; echo 'error: the one line that matters'; seq 1 100";
    let plain = sb.run(&["sh", "-c", script]);
    for bad in ["budget = \"0\"", "budget = 0", "level = 9"] {
        common::write(&sb.config(), bad.as_bytes());
        let out = sb.run(&["sh", "-c", script]);
        assert_eq!(out.status.code(), Some(0));
        let e = text(&out.stderr);
        let key = bad.split(' ').next().unwrap();
        assert!(
            e.lines().count() == 1
                && e.contains(&sb.config().display().to_string())
                && e.contains(&format!("{key} = "))
                && e.contains("using defaults"),
            "{bad}: {e}"
        );
        // The view is the one the defaults give, the error line in it.
        let strip = |b: &[u8]| text(b).replace(&handle_in(b).unwrap_or_default(), "H");
        assert_eq!(strip(&out.stdout), strip(&plain.stdout), "{bad}");
        assert!(text(&out.stdout).contains("error: the one line"), "{bad}");
    }
    let flag = sb.run(&["--budget", "0", "echo", "x"]);
    assert_eq!(flag.status.code(), Some(2));
}

/// Runs `script` under `sh` with the sandbox's environment, `$LENS_BIN` and
/// `$IN` (a file in the sandbox) set.
fn sh(sb: &Sandbox, script: &str) -> std::process::Output {
    Command::new("sh")
        .env("LENS_STORE", sb.store())
        .env("LENS_LOG_DIR", sb.log_dir())
        .env("LENS_CONFIG", sb.config())
        .env("LENS_BIN", env!("CARGO_BIN_EXE_lens"))
        .env("IN", sb.root.join("in.log"))
        .env("EV", sb.root.join("event.json"))
        // A debug build under a loaded machine: the deadline is not what
        // these tests measure.
        .env("LENS_HOOK_TIMEOUT_MS", "600000")
        .current_dir(&sb.root)
        .args(["-c", script])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn output_an_agent_captured_streams_in_bounded_memory() {
    let _turn = heavy();
    // `lens --as` once read the whole log into memory (1 GiB: 2.9 GiB peak),
    // and a hook refused a full-output file over 64 MiB. Both now read it as
    // `lens <cmd>` reads a child: 200 MB in 400 MiB of address space.
    let sb = Sandbox::new();
    let made = sh(
        &sb,
        "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000 > \"$IN\"; printf '\\nerror: the build failed\\n' >> \"$IN\"",
    );
    assert!(made.status.success());
    let out = sh(&sb, "ulimit -v 409600; \"$LENS_BIN\" --as make < \"$IN\"");
    let view = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        view.starts_with("[lens: view of ")
            && view.contains("error: the build failed")
            && view.len() < 16 << 10,
        "{}",
        &view[..view.len().min(2000)]
    );
    let h = handle_in(&out.stdout).unwrap();
    let shown = sh(&sb, &format!("\"$LENS_BIN\" show {h} | cksum"));
    let want = sh(&sb, "cksum < \"$IN\"");
    assert_eq!(text(&shown.stdout), text(&want.stdout));

    // A Claude Code event naming a 100 MB persisted output.
    let full = sb.root.join("persisted.txt");
    let cut = sh(
        &sb,
        &format!(
            "head -c 100000000 \"$IN\" > '{}'; printf '\\nerror: the build failed\\n' >> '{}'",
            full.display(),
            full.display()
        ),
    );
    assert!(cut.status.success());
    let event = serde_json::json!({
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "cwd": sb.root.display().to_string(),
        "tool_input": {"command": "make", "description": "build"},
        "tool_response": {
            "stdout": "0123456789abcdefghijklmnopqrstuvwxyz\n".repeat(800),
            "stderr": "", "interrupted": false, "isImage": false,
            "persistedOutputPath": full.display().to_string(),
        },
    });
    common::write(&sb.root.join("event.json"), event.to_string().as_bytes());
    let out = sh(&sb, "ulimit -v 409600; \"$LENS_BIN\" hook claude < \"$EV\"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", text(&out.stdout));
    });
    let view = answer
        .pointer("/hookSpecificOutput/updatedToolOutput/stdout")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    assert!(
        view.starts_with("[lens: view of ") && view.contains("error: the build failed"),
        "{answer}"
    );
}

#[test]
fn a_hook_event_past_what_lens_parses_is_still_read_to_its_end() {
    let _turn = heavy();
    // Lens once stopped reading an event at 64 MiB: the agent's writer met a
    // closed pipe. A 70 MB event is read whole: exit 0, a view or no answer.
    let sb = Sandbox::new();
    let event = serde_json::json!({
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "make"},
        "tool_response": {"stdout": "x".repeat(70_000_000), "stderr": ""},
    });
    common::write(&sb.root.join("event.json"), event.to_string().as_bytes());
    let out = sh(
        &sb,
        "(cat \"$EV\"; echo \"writer=$?\" >&2) | \"$LENS_BIN\" hook claude; echo \"lens=$?\" >&2",
    );
    let e = text(&out.stderr);
    assert!(e.contains("writer=0") && e.contains("lens=0"), "{e}");
    let answer = text(&out.stdout);
    assert!(
        answer.is_empty() || answer.contains("[lens: view"),
        "{answer}"
    );
}

/// Peak RSS in KiB of `lens hook AGENT < $EV`, by `/usr/bin/time -f %M`, and
/// what it printed.
fn hook_peak_kib(sb: &Sandbox, agent: &str) -> (u64, std::process::Output) {
    assert!(
        std::path::Path::new("/usr/bin/time").exists(),
        "this test measures peak memory with GNU time: apt-get install time"
    );
    let rss = sb.root.join("rss.txt");
    let out = sh(
        sb,
        &format!(
            "/usr/bin/time -f %M -o '{}' \"$LENS_BIN\" hook {agent} < \"$EV\"",
            rss.display()
        ),
    );
    let kib = std::fs::read_to_string(&rss)
        .unwrap_or_default()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in {}", rss.display()));
    (kib, out)
}

#[test]
fn a_big_inline_hook_event_is_filtered_in_bounded_memory() {
    let _turn = heavy();
    // An event once was read whole, copied, and parsed into owned strings: a
    // 50 MB inline output peaked at about 147 MiB. The output string is now
    // streamed out of the event as it is read.
    let sb = Sandbox::new();
    let mut output = String::with_capacity(51 << 20);
    let mut i = 0;
    while output.len() < 50_000_000 {
        i += 1;
        output.push_str(&format!(
            "   Compiling crate-{i} v0.1.0 (\"/src/{i}\")\tcafé \u{1}\\ ok\n"
        ));
    }
    output.push_str("error: the build failed\n");
    let want = sb.root.join("want.txt");
    common::write(&want, output.as_bytes());
    let events = [
        (
            "claude",
            serde_json::json!({
                "session_id": "s", "cwd": sb.root.display().to_string(),
                "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": "make", "description": "build"},
                "tool_response": {"stdout": output, "stderr": "", "interrupted": false, "isImage": false},
                "tool_use_id": "t1",
            }),
            "/hookSpecificOutput/updatedToolOutput/stdout",
        ),
        (
            "opencode",
            serde_json::json!({
                "command": "make", "output": output, "exit": 2, "outputPath": null,
                "cwd": sb.root.display().to_string(),
            }),
            "/output",
        ),
        (
            "kilo",
            serde_json::json!({
                "command": "make", "output": output, "exit": 2, "outputPath": null,
                "cwd": sb.root.display().to_string(),
            }),
            "/output",
        ),
        (
            "copilot",
            serde_json::json!({
                "timestamp": 1, "cwd": sb.root.display().to_string(),
                "toolName": "bash", "toolArgs": {"command": "make", "description": "build"},
                "toolResult": {"resultType": "success",
                    "textResultForLlm": format!("{output}\n<shellId: 1 completed with exit code 2>")},
            }),
            "/modifiedResult/textResultForLlm",
        ),
    ];
    drop(output);
    for (agent, event, at) in events {
        common::write(&sb.root.join("event.json"), event.to_string().as_bytes());
        drop(event);
        let (kib, out) = hook_peak_kib(&sb, agent);
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", text(&out.stderr));
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{agent}: {e}: {}", text(&out.stdout)));
        let view = answer
            .pointer(at)
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        assert!(
            view.starts_with("[lens: view of ") && view.contains("error: the build failed"),
            "{agent}: {answer}"
        );
        // The stored run is the output, byte for byte.
        let h = handle_in(view.as_bytes()).unwrap();
        let shown = sh(&sb, &format!("\"$LENS_BIN\" show {h} | cksum"));
        let wanted = sh(&sb, &format!("cksum < '{}'", want.display()));
        assert_eq!(text(&shown.stdout), text(&wanted.stdout), "{agent}");
        assert!(kib <= 64 << 10, "{agent}: peak RSS {kib} KiB");
    }
}
