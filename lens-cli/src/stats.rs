//! `lens stats`: what the run log says Lens saved, per command as the user typed it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::runlog::Record;

/// Totals for one command, or for all of them.
#[derive(Serialize, Debug, Default, Clone, PartialEq)]
pub struct Totals {
    /// Runs recorded (filtered and passthrough).
    pub runs: u64,
    /// Runs exec'd untouched.
    pub passthrough: u64,
    /// Bytes the commands wrote (filtered runs only).
    pub bytes_in: u64,
    /// Bytes Lens printed (filtered runs only).
    pub bytes_out: u64,
    /// Share of `bytes_in` not printed, in percent.
    pub saved_pct: f64,
}

impl Totals {
    fn add(&mut self, r: &Record) {
        self.runs += 1;
        if r.passthrough {
            self.passthrough += 1;
        }
        self.bytes_in += r.bytes_in.unwrap_or(0);
        self.bytes_out += r.bytes_out.unwrap_or(0);
        self.saved_pct = if self.bytes_in == 0 {
            0.0
        } else {
            let saved = self.bytes_in.saturating_sub(self.bytes_out) as f64;
            (saved * 1000.0 / self.bytes_in as f64).round() / 10.0
        };
    }
}

/// The whole report.
#[derive(Serialize, Debug, PartialEq)]
pub struct Report {
    /// Totals over every run.
    pub total: Totals,
    /// Per command, most bytes saved first.
    pub commands: Vec<(String, Totals)>,
    /// Lines of the log that did not parse.
    pub unreadable_lines: usize,
}

/// The name a run is reported under: the program and, when the next word is a
/// subcommand rather than an operand, that word (`cargo build`, `git log`, `pytest`).
pub fn command_key(argv: &[String]) -> String {
    let Some(first) = argv.first() else {
        return String::new();
    };
    let program = first.rsplit('/').next().unwrap_or(first);
    match argv.get(1) {
        Some(sub)
            if !sub.starts_with('-')
                && !sub.contains(['/', '.', '=', ' '])
                && sub
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            format!("{program} {sub}")
        }
        _ => program.to_string(),
    }
}

/// Aggregates records.
pub fn report(records: &[Record], unreadable_lines: usize) -> Report {
    let mut total = Totals::default();
    let mut per: BTreeMap<String, Totals> = BTreeMap::new();
    for r in records {
        total.add(r);
        per.entry(command_key(&r.argv)).or_default().add(r);
    }
    let mut commands: Vec<(String, Totals)> = per.into_iter().collect();
    commands.sort_by_key(|(k, t)| {
        (
            std::cmp::Reverse(t.bytes_in.saturating_sub(t.bytes_out)),
            k.clone(),
        )
    });
    Report {
        total,
        commands,
        unreadable_lines,
    }
}

fn human(n: u64) -> String {
    match n {
        n if n >= 10 << 20 => format!("{:.1} MB", n as f64 / (1 << 20) as f64),
        n if n >= 10 << 10 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// The report as a table.
pub fn table(r: &Report) -> String {
    let t = &r.total;
    let mut s = format!(
        "{} runs ({} passthrough), {} in, {} shown, {:.1}% saved\n",
        t.runs,
        t.passthrough,
        human(t.bytes_in),
        human(t.bytes_out),
        t.saved_pct
    );
    if r.unreadable_lines > 0 {
        s.push_str(&format!(
            "({} unreadable log lines skipped)\n",
            r.unreadable_lines
        ));
    }
    if r.commands.is_empty() {
        return s;
    }
    let width = r
        .commands
        .iter()
        .map(|(k, _)| k.len())
        .max()
        .unwrap_or(7)
        .max(7);
    s.push_str(&format!(
        "\n{:<width$}  {:>5}  {:>5}  {:>10}  {:>10}  {:>6}\n",
        "command", "runs", "pass", "in", "shown", "saved"
    ));
    for (k, c) in &r.commands {
        s.push_str(&format!(
            "{:<width$}  {:>5}  {:>5}  {:>10}  {:>10}  {:>5.1}%\n",
            k,
            c.runs,
            c.passthrough,
            human(c.bytes_in),
            human(c.bytes_out),
            c.saved_pct
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(argv: &str, bytes: Option<(u64, u64)>) -> Record {
        Record {
            ts_ms: 0,
            argv: argv.split(' ').map(String::from).collect(),
            level: 2,
            passthrough: bytes.is_none(),
            exit: bytes.map(|_| 0),
            dur_ms: bytes.map(|_| 1),
            bytes_in: bytes.map(|b| b.0),
            bytes_out: bytes.map(|b| b.1),
            handle: None,
            cut_short: None,
        }
    }

    #[test]
    fn keys_follow_what_was_typed() {
        let k = |s: &str| command_key(&s.split(' ').map(String::from).collect::<Vec<_>>());
        assert_eq!(k("cargo build --release"), "cargo build");
        assert_eq!(k("/usr/bin/git log -5"), "git log");
        assert_eq!(k("pytest tests/"), "pytest");
        assert_eq!(k("python script.py"), "python");
        assert_eq!(k("ls -la"), "ls");
    }

    #[test]
    fn aggregates_and_counts_passthrough() {
        let r = report(
            &[
                rec("cargo build", Some((1000, 100))),
                rec("cargo build", Some((1000, 100))),
                rec("vim x", None),
                rec("ls", Some((10, 10))),
            ],
            2,
        );
        assert_eq!(r.total.runs, 4);
        assert_eq!(r.total.passthrough, 1);
        assert_eq!(r.total.bytes_in, 2010);
        assert_eq!(r.total.bytes_out, 210);
        assert_eq!(r.total.saved_pct, 89.6);
        assert_eq!(r.commands[0].0, "cargo build");
        assert_eq!(r.commands[0].1.saved_pct, 90.0);
        let t = table(&r);
        assert!(
            t.starts_with("4 runs (1 passthrough), 2010 B in, 210 B shown, 89.6% saved\n"),
            "{t}"
        );
        assert!(t.contains("2 unreadable"));
    }
}
