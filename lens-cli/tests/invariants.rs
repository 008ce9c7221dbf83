//! Property tests of the invariants, driving the real binary. One per invariant the
//! process boundary can break; the library's own are in lens-core/tests.

mod common;

use std::process::Command;

use common::{handle_in, write, Sandbox};
use lens_core::Marker;
use proptest::prelude::*;

fn text_stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            3 => "[a-z]{1,10}( [a-z0-9]{1,8}){0,5}",
            2 => (1u32..300).prop_map(|i| format!("   Compiling dep{i} v1.0.{i}")),
            1 => Just("error: something broke".to_string()),
            1 => Just(String::new()),
            1 => Just("repeated".to_string()),
        ],
        0..300,
    )
    .prop_map(|lines| {
        let mut s = lines.join("\n");
        if !s.is_empty() {
            s.push('\n');
        }
        s.into_bytes()
    })
}

/// Writes both streams to files and returns a command that replays them, stdout
/// first, then stderr, then exits with `code`.
fn replay(sb: &Sandbox, out: &[u8], err: &[u8], code: i32) -> Vec<String> {
    write(&sb.root.join("o"), out);
    write(&sb.root.join("e"), err);
    vec![
        "sh".into(),
        "-c".into(),
        format!("cat o; cat e >&2; exit {code}"),
    ]
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Invariant 1: Lens puts nothing in the child's environment.
    #[test]
    fn explicit_invocation_leaves_the_environment_alone(name in "LENSPROP_[A-Z]{1,8}", value in "[a-z0-9]{0,12}") {
        let sb = Sandbox::new();
        let via_lens = sb.lens().args(["--level", "3", "env"]).env(&name, &value).output().unwrap();
        let direct = Command::new("env")
            .env("LENS_STORE", sb.store())
            .env("LENS_LOG_DIR", sb.log_dir())
            .env("LENS_CONFIG", sb.config())
            .env("GIT_CEILING_DIRECTORIES", std::env::temp_dir())
            .env(&name, &value)
            .current_dir(&sb.root)
            .output()
            .unwrap();
        let sorted = |b: &[u8]| {
            let mut v: Vec<String> = String::from_utf8_lossy(b).lines().map(String::from).collect();
            v.sort();
            v
        };
        prop_assert_eq!(sorted(&via_lens.stdout), sorted(&direct.stdout));
    }

    /// Invariant 2: the child's exit code comes back unchanged.
    #[test]
    fn exit_code_fidelity(code in 0i32..256, level in 0u8..4) {
        let sb = Sandbox::new();
        let out = sb.run(&["--level", &level.to_string(), "sh", "-c", &format!("echo out; exit {code}")]);
        prop_assert_eq!(out.status.code(), Some(code));
    }

    /// Invariant 2: a signal death becomes 128 + signum.
    #[test]
    fn signal_death_is_128_plus_signum(sig in prop::sample::select(vec![1, 2, 3, 6, 9, 13, 14, 15])) {
        let sb = Sandbox::new();
        // A signal ignored by whoever started the tests stays ignored across
        // exec, and `sh` may not reset it, so `kill -3 $$` would do nothing
        // (a job runner that ignores SIGQUIT). python3 puts each signal back
        // to its default, then becomes the `sh` that Lens waits for.
        let reset = "import os, signal, sys\n\
                     for s in (1, 2, 3, 6, 13, 14, 15): signal.signal(s, signal.SIG_DFL)\n\
                     os.execvp('sh', ['sh', '-c', sys.argv[1]])";
        let script = format!("echo before; kill -{sig} $$");
        let out = sb.run(&["python3", "-c", reset, &script]);
        prop_assert_eq!(out.status.code(), Some(128 + sig));
        prop_assert_eq!(out.stdout, b"before\n".to_vec());
    }

    /// Invariant 3: each stream's view holds only that stream's lines; at level 3
    /// they are the child's bytes exactly.
    #[test]
    fn streams_stay_separate(out in text_stream(), err in text_stream(), code in 0i32..3) {
        let sb = Sandbox::new();
        let cmd = replay(&sb, &out, &err, code);
        let mut a = vec!["--level", "3"];
        a.extend(args(&cmd));
        let raw = sb.run(&a);
        prop_assert_eq!(&raw.stdout, &out);
        prop_assert_eq!(&raw.stderr, &err);
        let viewed = sb.run(&args(&cmd));
        let out_lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
        let err_lines: Vec<&str> = std::str::from_utf8(&err).unwrap().lines().collect();
        for l in String::from_utf8_lossy(&viewed.stdout).lines() {
            match Marker::parse(l) {
                Some(m) => prop_assert_eq!(m.stream.name(), "stdout"),
                None => prop_assert!(out_lines.contains(&l), "{l:?} is not a stdout line"),
            }
        }
        for l in String::from_utf8_lossy(&viewed.stderr).lines() {
            match Marker::parse(l) {
                Some(m) => prop_assert_eq!(m.stream.name(), "stderr"),
                None => prop_assert!(err_lines.contains(&l), "{l:?} is not a stderr line"),
            }
        }
    }

    /// Invariants 4 and 5: when anything is elided a marker says so, and its handle
    /// returns both streams byte for byte.
    #[test]
    fn nothing_is_unrecoverable(out in text_stream(), err in text_stream(), level in 0u8..3) {
        let sb = Sandbox::new();
        let cmd = replay(&sb, &out, &err, 1);
        let mut a = vec!["--level".to_string(), level.to_string()];
        a.extend(cmd);
        let viewed = sb.run(&args(&a));
        let all = [viewed.stdout.clone(), viewed.stderr.clone()].concat();
        if viewed.stdout != out || viewed.stderr != err {
            let h = handle_in(&all);
            prop_assert!(h.is_some(), "view changed without a marker");
            let shown = sb.run(&["show", &h.unwrap()]);
            prop_assert_eq!(&shown.stdout, &out);
            prop_assert_eq!(&shown.stderr, &err);
        }
    }

    /// Invariant 5: if the store cannot be written, nothing is elided.
    #[test]
    fn unstorable_output_is_shown_raw(out in text_stream(), code in 0i32..3) {
        let sb = Sandbox::new();
        let cmd = replay(&sb, &out, b"", code);
        write(&sb.root.join("store-is-a-file"), b"x");
        let res = sb.lens().args(args(&cmd)).env("LENS_STORE", sb.root.join("store-is-a-file")).output().unwrap();
        prop_assert_eq!(res.status.code(), Some(code));
        prop_assert_eq!(&res.stdout, &out);
        let e = String::from_utf8_lossy(&res.stderr);
        prop_assert!(e.is_empty() || e.starts_with("lens: could not store"), "{e}");
    }

    /// Invariant 6: output that is not UTF-8 passes through byte for byte.
    #[test]
    fn binary_output_passes_through(mut bytes in prop::collection::vec(any::<u8>(), 0..5000), code in 0i32..3) {
        bytes.extend_from_slice(b"\xff\xfe");
        let sb = Sandbox::new();
        let cmd = replay(&sb, &bytes, &bytes, code);
        let res = sb.run(&args(&cmd));
        prop_assert_eq!(res.status.code(), Some(code));
        prop_assert_eq!(&res.stdout, &bytes);
        prop_assert_eq!(&res.stderr, &bytes);
    }

    /// Invariant 9: a broken config is reported after the child's output, on stderr,
    /// and changes nothing else.
    #[test]
    fn diagnostics_follow_the_childs_output(out in text_stream(), err in text_stream()) {
        let sb = Sandbox::new();
        let cmd = replay(&sb, &out, &err, 0);
        let clean = sb.run(&args(&cmd));
        write(&sb.config(), b"level = [broken");
        let broken = sb.run(&args(&cmd));
        prop_assert_eq!(broken.status.code(), Some(0));
        let strip = |b: &[u8]| String::from_utf8_lossy(b).split("handle=").map(|s| s.get(8..).unwrap_or("").to_string()).collect::<Vec<_>>();
        prop_assert_eq!(strip(&broken.stdout), strip(&clean.stdout));
        let e = String::from_utf8_lossy(&broken.stderr);
        let last = e.lines().last().unwrap_or("");
        prop_assert!(last.starts_with("lens: config ") && last.contains("ignored"), "{last}");
        prop_assert_eq!(strip(&broken.stderr[..broken.stderr.len() - last.len() - 1]), strip(&clean.stderr));
    }

    /// Invariant 10: an unwritable log directory never fails the run.
    #[test]
    fn logging_never_fails_the_run(out in text_stream(), code in 0i32..3) {
        let sb = Sandbox::new();
        let cmd = replay(&sb, &out, b"", code);
        write(&sb.root.join("log-is-a-file"), b"x");
        let res = sb.lens().args(args(&cmd)).env("LENS_LOG_DIR", sb.root.join("log-is-a-file")).output().unwrap();
        prop_assert_eq!(res.status.code(), Some(code));
        prop_assert!(res.stderr.is_empty(), "{}", String::from_utf8_lossy(&res.stderr));
    }

    /// Invariants 4, 5 and 8 for output an agent captured: what `lens --as`
    /// (the path every after-tool hook takes) prints is the output as it came,
    /// or a view whose markers name line ranges inside it and whose handle opens
    /// it byte for byte; and a file the agent asked to read is never shortened.
    #[test]
    fn captured_output_is_shown_whole_or_recoverable(out in text_stream(), line in prop_oneof![
        Just("make 2>&1 | tail -n 400"), Just("cargo build"), Just("cd x && npx tsc"),
        Just("echo $(date) && ./run.sh"), Just("cat build.log"), Just("sed -n 1,400p log.txt"),
    ]) {
        let sb = Sandbox::new();
        let mut c = sb.lens();
        c.args(["--as", line]).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), &out).unwrap();
        drop(child.stdin.take());
        let res = child.wait_with_output().unwrap();
        prop_assert_eq!(res.status.code(), Some(0));
        let reads_file = line.starts_with("cat ") || line.starts_with("sed ");
        match handle_in(&res.stdout) {
            None => prop_assert_eq!(&res.stdout, &out),
            Some(h) => {
                prop_assert!(!reads_file, "a file read was shortened");
                prop_assert!(res.stdout.len() < out.len());
                let lines = out.iter().filter(|&&b| b == b'\n').count() as u32;
                for l in String::from_utf8_lossy(&res.stdout).lines() {
                    if let Some(m) = Marker::parse(l) {
                        prop_assert!(m.first >= 1 && m.last <= lines && m.first <= m.last, "{l}");
                    }
                }
                let shown = sb.lens().args(["show", &h]).output().unwrap();
                prop_assert_eq!(shown.stdout, out);
            }
        }
    }
}
