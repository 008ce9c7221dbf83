//! Views keep what is rare: the reproductions of the outputs where a view used to
//! lose the one line that mattered (a log's error under a timestamp).

mod common;

use common::{check_stream, HANDLE};
use lens_core::{view, Handle, Level, Options, Request};

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
