//! Log lines: what servers, CI runners and test harnesses print, each line led by a
//! timestamp (ISO 8601, syslog, Python logging, Go's `log`, a bare clock, any of
//! them in brackets), or written as logfmt (`ts=… level=error msg=…`) or as JSON
//! with a `level` field.
//!
//! Two rules follow from them. A timestamp is not a location: `2024-01-01 12:59:59
//! error: …` reads like `path:line:` to a shape that looks for one, and every such
//! shape asks [`starts_with_clock`] first. And a log line's class is its level word,
//! wherever the timestamp puts it (`ERROR`, `[error]`, `level=error`,
//! `"level":"error"`, `production.ERROR:`); a line without one is read by the
//! generic shapes from where its message starts, so `… panic: …` and `… error: …`
//! still fail.
//!
//! The scan is by hand, byte by byte from the line's start: it runs on every line,
//! and a line that does not start like a log line is let go after one or two bytes.

use crate::doc::Class;

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

fn digits(b: &[u8], at: usize, n: usize) -> bool {
    b.len() >= at + n && b[at..at + n].iter().all(u8::is_ascii_digit)
}

/// Where a clock `H:MM`, `HH:MM:SS`, with fractions and a zone, that starts at
/// `at` ends.
fn clock(b: &[u8], at: usize) -> Option<usize> {
    let h = if digits(b, at, 2) {
        2
    } else if digits(b, at, 1) {
        1
    } else {
        return None;
    };
    let mut i = at + h;
    if b.get(i) != Some(&b':') || !digits(b, i + 1, 2) {
        return None;
    }
    i += 3;
    let mut seconds = false;
    if b.get(i) == Some(&b':') && digits(b, i + 1, 2) {
        i += 3;
        seconds = true;
    }
    if seconds && matches!(b.get(i), Some(b'.' | b',')) && digits(b, i + 1, 1) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    match b.get(i) {
        Some(b'Z') => i += 1,
        Some(b'+' | b'-') if digits(b, i + 1, 2) => {
            i += 3;
            if b.get(i) == Some(&b':') && digits(b, i + 1, 2) {
                i += 3;
            } else if digits(b, i, 2) {
                i += 2;
            }
        }
        _ => {}
    }
    // `12:34` alone is as likely a ratio or a location as a time: a clock without
    // seconds counts only after a date.
    Some(i).filter(|_| seconds || at > 0)
}

/// Where a date `YYYY-MM-DD` or `YYYY/MM/DD` (with its clock, after a `T` or a
/// space) starting at `at` ends.
fn date_time(b: &[u8], at: usize) -> Option<usize> {
    if !digits(b, at, 4) {
        return None;
    }
    let sep = *b.get(at + 4)?;
    if !matches!(sep, b'-' | b'/')
        || !digits(b, at + 5, 2)
        || b.get(at + 7) != Some(&sep)
        || !digits(b, at + 8, 2)
    {
        return None;
    }
    let i = at + 10;
    match b.get(i) {
        Some(b'T' | b' ') => clock(b, i + 1),
        _ => None,
    }
}

/// Where a syslog stamp `Jan  1 12:00:00` starting at `at` ends.
fn syslog(b: &[u8], at: usize) -> Option<usize> {
    if b.len() < at + 7 || !MONTHS.iter().any(|m| &b[at..at + 3] == *m) || b[at + 3] != b' ' {
        return None;
    }
    let mut i = at + 4;
    if b[i] == b' ' {
        i += 1;
    }
    let day = if digits(b, i, 2) { 2 } else { 1 };
    if !digits(b, i, day) || b.get(i + day) != Some(&b' ') {
        return None;
    }
    clock(b, i + day + 1)
}

/// How a line's timestamp was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stamp {
    /// A date and a clock, or a bare clock.
    Clock,
    /// Syslog's: a host and a tag (`app[12]:`) follow it.
    Syslog,
}

/// The timestamp a line starts with (in brackets or not), and where what follows
/// it (spaces skipped) starts.
fn stamp(text: &str) -> Option<(Stamp, usize)> {
    let b = text.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_digit() || first == b'[' || first.is_ascii_uppercase()) {
        return None;
    }
    let open = usize::from(first == b'[');
    let (kind, mut end) = if let Some(e) = date_time(b, open) {
        (Stamp::Clock, e)
    } else if let Some(e) = syslog(b, open) {
        (Stamp::Syslog, e)
    } else if let Some(e) = clock(b, open) {
        (Stamp::Clock, e)
    } else {
        return None;
    };
    if open == 1 {
        // `[2024-01-01 12:00:00 +0000]`, `[12:00:00.123]`: anything up to the
        // bracket's close, which must come soon.
        let close = b[end..].iter().take(12).position(|&c| c == b']')?;
        end += close + 1;
    }
    match b.get(end) {
        None => {}
        Some(c) if c.is_ascii_whitespace() || matches!(c, b'|' | b':' | b',' | b']') => {}
        _ => return None,
    }
    while b
        .get(end)
        .is_some_and(|&c| c.is_ascii_whitespace() || c == b'|' || c == b':')
    {
        end += 1;
    }
    Some((kind, end))
}

/// True when a line starts with a date or a time of day, so what reads like a
/// `path:line:` at its start (`2024-01-01 12:59:59 …`, `12:59:59 …`) is a clock.
pub fn starts_with_clock(text: &str) -> bool {
    stamp(text).is_some()
}

/// True when what reads as a `path` before `:line:` is the hour of a clock: its
/// last word is one or two digits after a date (`2024-01-01 12`,
/// `ts=2024-01-01T12`, `[12`), or it is the hour alone.
pub fn is_clock_location(path: &str) -> bool {
    let b = path.as_bytes();
    let n = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 2 {
        return false;
    }
    let before = &b[..b.len() - n];
    match before.last() {
        None => true,
        Some(b' ' | b'[' | b'=' | b'"') => true,
        Some(b'T') => before.len() >= 2 && before[before.len() - 2].is_ascii_digit(),
        _ => false,
    }
}

/// The class a level word gives: `ERROR`, `err`, `fatal`, `panic`, `WARN`,
/// `info`… (any case), or `None` for a word that is not a level.
fn level_word(word: &str) -> Option<Class> {
    let w = word.to_ascii_lowercase();
    match w.as_str() {
        "error" | "err" | "fatal" | "crit" | "critical" | "panic" | "alert" | "emerg"
        | "emergency" | "severe" | "e" | "f" => Some(Class::Error),
        "warn" | "warning" | "w" => Some(Class::Warning),
        "info" | "debug" | "trace" | "notice" | "verbose" | "dbg" | "fine" | "finer" | "finest"
        | "config" | "i" | "d" | "t" | "v" => Some(Class::Plain),
        _ => None,
    }
}

/// A token read as a level: bare (`ERROR`), in brackets or angles (`[error]`,
/// `<warn>`), before a colon (`error:`), or after a logger's dotted name
/// (`production.ERROR:`). One letter counts only in brackets; a lowercase word
/// only decorated or right after the timestamp.
fn level_token(token: &str, first: bool) -> Option<Class> {
    let decorated = token.starts_with(['[', '<', '(']) || token.ends_with(':');
    let w = token
        .trim_start_matches(['[', '<', '('])
        .trim_end_matches(':')
        .trim_end_matches([']', '>', ')'])
        .trim_end_matches(':');
    let w = w.rsplit('.').next().unwrap_or(w);
    if w.is_empty() || (w.len() == 1 && !token.starts_with('[')) {
        return None;
    }
    let upper = w.bytes().all(|c| c.is_ascii_uppercase());
    if !(upper || decorated || first) {
        return None;
    }
    level_word(w)
}

/// The class of a log line's message (what follows its timestamp and, for
/// syslog, its host and tag): its level word when one of its first tokens is
/// one, else what the generic shapes read in the message.
fn message_class(rest: &str, generic: fn(&str) -> Class) -> Class {
    let mut seen = 0;
    for (k, token) in rest.split_whitespace().enumerate() {
        if k > 5 || seen > 2 {
            break;
        }
        if let Some(c) = level_token(token, seen == 0) {
            return c;
        }
        // Separators, a pid and a thread name (`-`, `1234`, `[main]`) come
        // between a timestamp and a level.
        let filler = matches!(token, "-" | "|" | "--" | ":")
            || token.bytes().all(|c| c.is_ascii_digit() || c == b'#')
            || (token.starts_with('[') && token.ends_with(']'));
        if !filler {
            seen += 1;
        }
    }
    generic(rest)
}

/// The value after `key=` in a logfmt line (quotes taken off).
fn logfmt_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(at) = text[from..].find(key) {
        let at = from + at;
        let starts = at == 0 || text.as_bytes()[at - 1] == b' ';
        if starts && text[at + key.len()..].starts_with('=') {
            let v = &text[at + key.len() + 1..];
            let v = v.split(' ').next().unwrap_or("");
            return Some(v.trim_matches('"'));
        }
        from = at + key.len();
    }
    None
}

/// The value of a JSON line's `"level"` (or `"severity"`, `"lvl"`) string field.
fn json_level(text: &str) -> Option<&str> {
    for key in ["\"level\"", "\"severity\"", "\"lvl\"", "\"levelname\""] {
        let Some(at) = text.find(key) else {
            continue;
        };
        let rest = text[at + key.len()..].trim_start().strip_prefix(':')?;
        let rest = rest.trim_start().strip_prefix('"')?;
        return rest.split('"').next();
    }
    None
}

/// True when a line is a log record of its own: it starts with a timestamp or a
/// bracketed level (`[INFO]`), or is logfmt or JSON with a level. What follows a
/// record up to the next one (a stack trace) belongs to it; the next record does
/// not.
pub fn is_record(text: &str) -> bool {
    if let Some(word) = text.strip_prefix('[').and_then(|t| t.split(']').next()) {
        if level_word(word).is_some() && word.len() > 1 {
            return true;
        }
    }
    stamp(text).is_some() || class(text, |_| Class::Plain).is_some()
}

/// The class of a line when it is a log line: its timestamp (or logfmt, or
/// JSON) says so; `None` for any other line. `generic` classifies a message
/// that names no level.
pub fn class(text: &str, generic: fn(&str) -> Class) -> Option<Class> {
    let first = *text.as_bytes().first()?;
    if first == b'{' && text.trim_end().ends_with('}') {
        let level = json_level(text)?;
        return Some(level_word(level).unwrap_or(Class::Plain));
    }
    if matches!(first, b't' | b'l') {
        let logfmt = ["ts=", "time=", "t=", "timestamp=", "level=", "lvl="]
            .iter()
            .any(|k| text.starts_with(k));
        if logfmt {
            let level = logfmt_value(text, "level").or_else(|| logfmt_value(text, "lvl"))?;
            return Some(level_word(level).unwrap_or(Class::Plain));
        }
        return None;
    }
    if first == b'[' {
        // `[ERROR] message`: a level in brackets, no timestamp.
        if let Some(close) = text.find(']').filter(|&c| c < 12) {
            let word = &text[1..close];
            if word.len() > 1 && word.bytes().all(|c| c.is_ascii_alphabetic()) {
                return match level_word(word) {
                    Some(c @ (Class::Error | Class::Warning)) => Some(c),
                    _ => None,
                };
            }
        }
    }
    let (kind, mut end) = stamp(text)?;
    if kind == Stamp::Syslog {
        // `host app[12]: message`: the host, then the tag ending in a colon.
        let rest = &text[end..];
        let mut words = rest.splitn(3, ' ');
        let (host, tag) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        if !host.is_empty() && tag.ends_with(':') {
            end += host.len() + 1 + tag.len();
        }
    }
    Some(message_class(text[end..].trim_start(), generic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify::class_of;

    #[test]
    fn an_hour_is_not_a_path() {
        for p in [
            "2024-01-01 12",
            "ts=2024-01-01T12",
            "[12",
            "12",
            "Jan  1 12",
        ] {
            assert!(is_clock_location(p), "{p}");
        }
        for p in ["src/a.rs", "./12", "OUT12", "file 123", "v2"] {
            assert!(!is_clock_location(p), "{p}");
        }
    }

    #[test]
    fn timestamps_of_every_common_format_are_clocks() {
        for t in [
            "2024-01-01 12:00:00 info: request 1 ok",
            "2024-01-01T12:00:00Z error: boom",
            "2024-01-01T12:00:00.123456+02:00 x",
            "2024-01-01 12:00:00,123 ERROR app: msg",
            "2024/01/01 12:00:00 msg",
            "12:59:59 ERROR: x",
            "Jan  1 12:00:00 host app[12]: started",
            "Dec 31 23:59:59 host kernel: x",
            "[2024-01-01 12:00:00] ERROR x",
            "[12:00:00.123] x",
            "[2024-01-01T12:00:00.000+0000] x",
        ] {
            assert!(starts_with_clock(t), "{t}");
        }
        for t in [
            "src/a.rs:12:5: error: x",
            "12:34: text",
            "2024-01-01 release notes",
            "lib/x.py:120:1: E501 line too long",
            "Jane 12:00:00 x",
            "1234:56:78",
            "",
        ] {
            assert!(!starts_with_clock(t), "{t}");
        }
    }

    fn cls(t: &str) -> Class {
        class_of(t)
    }

    #[test]
    fn iso_8601() {
        assert_eq!(
            cls("2024-01-01T12:00:00Z ERROR connection refused"),
            Class::Error
        );
        assert_eq!(
            cls("2024-01-01T12:00:00.5Z WARN slow query"),
            Class::Warning
        );
        assert_eq!(cls("2024-01-01T12:00:00Z INFO request 4 ok"), Class::Plain);
        assert_eq!(
            cls("2024-01-01 12:59:59 error: connection refused"),
            Class::Error
        );
        assert_eq!(cls("2024-01-01 12:00:00 info: request 1 ok"), Class::Plain);
        assert_eq!(
            cls("2024-01-01T12:00:00.1234567Z error[E0308]: mismatched types"),
            Class::Error
        );
    }

    #[test]
    fn bare_clock() {
        assert_eq!(cls("12:59:59 ERROR: disk full"), Class::Error);
        assert_eq!(cls("12:59:59 panic: runtime error"), Class::Error);
        assert_eq!(cls("12:00:01 INFO: up"), Class::Plain);
    }

    #[test]
    fn syslog() {
        assert_eq!(
            cls("Jan  1 12:00:00 web1 app[12]: error: upstream timed out"),
            Class::Error
        );
        assert_eq!(
            cls("Jan  1 12:00:00 web1 sshd[99]: Accepted key"),
            Class::Plain
        );
        assert_eq!(
            cls("Jan 11 12:00:00 web1 app: WARNING low memory"),
            Class::Warning
        );
        // An ordinary word `error` deep in the message is not a level.
        assert_eq!(
            cls("Jan  1 12:00:00 web1 app[12]: retried after an error once"),
            Class::Plain
        );
    }

    #[test]
    fn python_logging() {
        assert_eq!(
            cls("2024-01-01 12:00:00,123 ERROR billing.worker: charge failed"),
            Class::Error
        );
        assert_eq!(
            cls("2024-01-01 12:00:00,123 - billing - WARNING - retrying"),
            Class::Warning
        );
        assert_eq!(
            cls("2024-01-01 12:00:00,123 INFO billing.worker: charged 12"),
            Class::Plain
        );
        assert_eq!(
            cls("2024-01-01 12:00:00,123 CRITICAL root: out of memory"),
            Class::Error
        );
    }

    #[test]
    fn go_log() {
        assert_eq!(cls("2024/01/01 12:00:00 listening on :8080"), Class::Plain);
        assert_eq!(cls("2024/01/01 12:00:00 panic: nil map"), Class::Error);
        assert_eq!(
            cls("2024/01/01 12:00:00 error: dial tcp 10.0.0.1:5432: refused"),
            Class::Error
        );
        assert_eq!(cls("2024/01/01 12:00:00.123456 [ERROR] x"), Class::Error);
    }

    #[test]
    fn logfmt() {
        assert_eq!(
            cls("ts=2024-01-01T12:00:00Z level=error msg=\"dial failed\" addr=10.0.0.1:5432"),
            Class::Error
        );
        assert_eq!(
            cls("time=\"2024-01-01T12:00:00Z\" level=warning msg=\"slow\""),
            Class::Warning
        );
        assert_eq!(
            cls("level=info ts=2024-01-01T12:00:00Z msg=ok"),
            Class::Plain
        );
        // `t=` starting an ordinary line is not logfmt without a level.
        assert_eq!(cls("total 108"), Class::Plain);
    }

    #[test]
    fn bracketed_levels() {
        assert_eq!(cls("[ERROR] could not bind 0.0.0.0:80"), Class::Error);
        assert_eq!(cls("[WARN] config key deprecated"), Class::Warning);
        assert_eq!(
            cls("[2024-01-01 12:00:00] ERROR payment declined"),
            Class::Error
        );
        assert_eq!(
            cls("[2024-01-01 12:00:00] production.ERROR: Undefined index"),
            Class::Error
        );
        assert_eq!(cls("[2024-01-01 12:00:00] [info] up"), Class::Plain);
        assert_eq!(
            cls("2024-01-01 12:00:00.123 [main] ERROR c.e.App - failed to start"),
            Class::Error
        );
    }

    #[test]
    fn json_lines() {
        assert_eq!(
            cls(r#"{"ts":"2024-01-01T12:00:00Z","level":"error","msg":"refused"}"#),
            Class::Error
        );
        assert_eq!(cls(r#"{"level": "warn", "msg": "slow"}"#), Class::Warning);
        assert_eq!(cls(r#"{"severity":"INFO","message":"ok"}"#), Class::Plain);
        assert_eq!(cls(r#"{"msg":"no level here"}"#), Class::Plain);
    }
}
