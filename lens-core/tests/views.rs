//! Views keep what is rare: the reproductions of the outputs where a view used to
//! lose the one line that mattered (a log's error under a timestamp, the unusual
//! match among routine ones, the outlier file of a listing, a commit of a `git log
//! -p`), and the property that a digest's cut drops what repeats first, for every
//! shape that cuts.

mod common;

use common::{check_stream, HANDLE};
use lens_core::{view, Handle, Level, Options, Request};
use proptest::prelude::*;

/// The view of stdout `out` of `cmd` (split on spaces) at `level`; the view is
/// checked against the raw output line by line.
fn view_of(cmd: &str, out: &str, exit: i32, level: Level) -> String {
    let argv: Vec<String> = cmd.split(' ').map(str::to_string).collect();
    let req = Request {
        argv: &argv,
        stdout: out.as_bytes(),
        stderr: b"",
        exit,
    };
    let v = view(&req, &Options::new(level, Handle::parse(HANDLE)));
    let text = String::from_utf8(v.stdout.into_owned()).expect("utf-8");
    if level == Level::Two {
        check_stream(&text, out, "stdout").expect("the view accounts for every raw line");
    }
    text
}

/// `before` info lines, the line `odd`, then `after` more, each from `info(n)`.
fn log(before: usize, odd: &str, after: usize, info: impl Fn(usize) -> String) -> String {
    let mut s = String::new();
    for n in 0..before {
        s.push_str(&info(n));
        s.push('\n');
    }
    s.push_str(odd);
    s.push('\n');
    for n in before..before + after {
        s.push_str(&info(n));
        s.push('\n');
    }
    s
}

fn iso_info(n: usize) -> String {
    format!(
        "2024-01-01 12:{:02}:{:02} info: request {n} ok",
        (n / 60) % 60,
        n % 60
    )
}

#[test]
fn a_timestamped_logs_error_is_kept_and_counted_at_every_level() {
    let error = "2024-01-01 12:59:59 error: connection refused";
    for (before, after) in [(2000, 2000), (100, 100)] {
        let out = log(before, error, after, iso_info);
        let two = view_of("cat log", &out, 0, Level::Two);
        assert!(
            two.contains(error),
            "level 2 of {}: {two}",
            before + after + 1
        );
        assert!(two.len() < out.len());
        let one = view_of("cat log", &out, 0, Level::One);
        assert!(one.contains(error), "level 1: {one}");
        let zero = view_of("cat log", &out, 0, Level::Zero);
        assert!(zero.contains(" errors=1 "), "level 0: {zero}");
        assert!(zero.contains(error), "level 0: {zero}");
    }
}

/// The routine line of a log, numbered.
type InfoLine = Box<dyn Fn(usize) -> String>;

#[test]
fn every_common_log_format_keeps_its_error() {
    let cases: Vec<(&str, InfoLine)> = vec![
        (
            "2024-01-01 12:59:59,123 ERROR billing.worker: charge failed",
            Box::new(|n| format!("2024-01-01 12:00:{:02},{n:03} INFO billing.worker: charged {n}", n % 60)),
        ),
        (
            "2024/01/01 12:59:59 panic: assignment to entry in nil map",
            Box::new(|n| format!("2024/01/01 12:00:{:02} handled request {n}", n % 60)),
        ),
        (
            "12:59:59 ERROR: disk full",
            Box::new(|n| format!("12:00:{:02} INFO: wrote block {n}", n % 60)),
        ),
        (
            "2024-01-01T12:59:59.120Z WARN pool exhausted",
            Box::new(|n| format!("2024-01-01T12:00:{:02}.{n:03}Z INFO served {n}", n % 60)),
        ),
        (
            "Jan  1 12:59:59 web1 app[4242]: error: upstream timed out",
            Box::new(|n| format!("Jan  1 12:00:{:02} web1 app[4242]: served /item/{n}", n % 60)),
        ),
        (
            "ts=2024-01-01T12:59:59Z level=error msg=\"dial tcp 10.0.0.9:5432: connection refused\"",
            Box::new(|n| format!("ts=2024-01-01T12:00:{:02}Z level=info msg=\"served\" id={n}", n % 60)),
        ),
        (
            "[2024-01-01 12:59:59] ERROR payment declined for order 77",
            Box::new(|n| format!("[2024-01-01 12:00:{:02}] INFO order {n} paid", n % 60)),
        ),
        (
            "[ERROR] could not bind 0.0.0.0:80",
            Box::new(|n| format!("[INFO] worker {n} ready")),
        ),
        (
            r#"{"ts":"2024-01-01T12:59:59Z","level":"error","msg":"refused"}"#,
            Box::new(|n| format!(r#"{{"ts":"2024-01-01T12:00:{:02}Z","level":"info","msg":"ok {n}"}}"#, n % 60)),
        ),
    ];
    for (odd, info) in cases {
        let out = log(600, odd, 600, info);
        let two = view_of("cat app.log", &out, 0, Level::Two);
        assert!(two.contains(odd), "{odd}: {two}");
        let zero = view_of("cat app.log", &out, 0, Level::Zero);
        let counted = zero.contains(" errors=1 ") || zero.contains(" warnings=1 ");
        assert!(counted, "{odd}: {zero}");
    }
}

/// `grep -rnE 'TODO|FIXME' .` over 30 files, ten routine TODOs each, one
/// `FIXME(security)` in the 23rd file's middle.
fn todos() -> String {
    let mut out = String::new();
    for f in 0..30 {
        for k in 0..10 {
            out.push_str(&format!(
                "./src/mod{f:02}/handler.rs:{}:    // TODO: tidy up case {k} of module {f}\n",
                k * 7 + 3
            ));
            if f == 22 && k == 5 {
                out.push_str(&format!(
                    "./src/mod{f:02}/handler.rs:60:    // FIXME(security): token is written to the log\n"
                ));
            }
        }
    }
    out
}

#[test]
fn grep_keeps_the_unusual_match_among_routine_ones() {
    let out = todos();
    let two = view_of("grep -rnE TODO|FIXME .", &out, 0, Level::Two);
    assert!(two.contains("FIXME(security)"), "{two}");
    assert!(two.contains(" unlisted="), "the digest was cut: {two}");
    // Every file is still named.
    for f in 0..30 {
        assert!(
            two.contains(&format!("./src/mod{f:02}/handler.rs:")),
            "{f}: {two}"
        );
    }
}

/// `ls -la` of 600 rotated logs of a few KB and one 48 MB core file.
fn big_ls() -> String {
    let mut out = String::from("total 51200\ndrwxr-xr-x  2 app app     4096 Mar 10 09:00 .\ndrwxr-xr-x 12 app app     4096 Mar  1 08:00 ..\n");
    for i in 0..600 {
        let name = format!("worker-{:03}.log", i);
        if i == 417 {
            out.push_str("-rw-------  1 app app 50331648 Mar  9 23:41 core.31337\n");
        }
        out.push_str(&format!(
            "-rw-r--r--  1 app app {:>8} Mar  9 23:{:02} {name}\n",
            2000 + (i * 37) % 900,
            i % 60
        ));
    }
    out
}

#[test]
fn a_large_listing_keeps_its_outlier() {
    let out = big_ls();
    let two = view_of("ls -la /var/log/app", &out, 0, Level::Two);
    assert!(two.contains("core.31337(50331648)"), "{two}");
    assert!(two.contains(" unlisted="), "{two}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// One line unlike the others among `n` that repeat one template is kept
    /// when the digest must be cut, wherever it is, for every shape that cuts.
    #[test]
    fn an_unusual_entry_among_repeated_ones_is_always_kept(
        n in 300usize..900,
        at in 0usize..1000,
        shape in 0usize..5,
    ) {
        let at = at % n;
        let (cmd, lines, odd): (&str, Vec<String>, &str) = match shape {
            0 => (
                "grep -rn TODO .",
                (0..n).map(|i| format!("./pkg/f{:02}.go:{}:// TODO: revisit branch {i}", i % 25, i + 1)).collect(),
                "./pkg/f07.go:9999:// SECURITY: key checked in TODO",
            ),
            1 => (
                "find . -name *.o",
                (0..n).map(|i| format!("./build/obj{}/unit_{i}_{}.o", i % 9, i * 7 % 13)).collect(),
                "./build/obj3/passwords.txt",
            ),
            2 => (
                "ls -l",
                (0..n).map(|i| format!("-rw-r--r-- 1 u u {:>5} Jan  1  2026 part_{i}_{}.bin", 1000 + i % 50, i % 7)).collect(),
                "-rw-r--r-- 1 u u  1010 Jan  1  2026 notes.txt",
            ),
            3 => (
                "git status",
                {
                    let mut v = vec!["On branch main".to_string(), "Changes not staged for commit:".to_string()];
                    v.extend((0..n).map(|i| format!("\tmodified:   snapshots/frame_{i}_{}.snap", i % 3)));
                    v
                },
                "\tdeleted:    src/auth/session.rs",
            ),
            _ => (
                "kubectl get pods",
                {
                    let mut v = vec!["NAME          READY   STATUS    RESTARTS   AGE".to_string()];
                    v.extend((0..n).map(|i| format!("web-{i:<9} 1/1     Running   0          {}d", i % 9 + 1)));
                    v
                },
                "db-0          0/1     Error     7          2d",
            ),
        };
        let mut lines = lines;
        let first_entry = usize::from(shape >= 3) + usize::from(shape == 3);
        lines.insert((at + first_entry).min(lines.len()), odd.to_string());
        let out: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let two = view_of(cmd, &out, 0, Level::Two);
        prop_assert!(two.contains(" unlisted="), "not cut: {}", two);
        let needle = match shape {
            0 => "SECURITY: key checked",
            1 => "passwords.txt",
            2 => "notes.txt",
            3 => "src/auth/session.rs",
            _ => "db-0",
        };
        prop_assert!(two.contains(needle), "{} lost: {}", needle, two);
    }
}
