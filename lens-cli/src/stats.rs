//! `lens stats`: what the run log says Lens saved, per command as the user typed
//! it and per project, and which commands an agent ran raw that Lens has a shape
//! for (the hook saw them and could not rewrite them: piped, redirected).
//!
//! Tokens are estimated, not counted: one token per four bytes, rounded up,
//! which is about what a BPE tokenizer makes of English and code (it
//! undercounts dense symbols and non-Latin text). No tokenizer is shipped.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::rewrite::SHAPED;
use crate::runlog::Record;

/// The estimate's rule: bytes / 4, rounded up.
pub fn tokens(bytes: u64) -> u64 {
    bytes.div_ceil(4)
}

/// Totals for one command, one project, or all of them.
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
    /// Estimated tokens of `bytes_in`.
    pub tokens_in: u64,
    /// Estimated tokens of `bytes_out`.
    pub tokens_out: u64,
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
        self.tokens_in = tokens(self.bytes_in);
        self.tokens_out = tokens(self.bytes_out);
        self.saved_pct = if self.bytes_in == 0 {
            0.0
        } else {
            let saved = self.bytes_in.saturating_sub(self.bytes_out) as f64;
            (saved * 1000.0 / self.bytes_in as f64).round() / 10.0
        };
    }
}

/// A command the hook let run raw though Lens has a shape for it.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct RawRun {
    /// The command line as the agent wrote it.
    pub command: String,
    /// How often.
    pub times: u64,
}

/// The whole report.
#[derive(Serialize, Debug, PartialEq)]
pub struct Report {
    /// The first run counted (milliseconds since the epoch), if any.
    pub since_ms: Option<u64>,
    /// How tokens are estimated.
    pub token_estimate: &'static str,
    /// Totals over every run.
    pub total: Totals,
    /// Per command, most bytes saved first.
    pub commands: Vec<(String, Totals)>,
    /// Per project (git root of the working directory), most bytes saved first.
    pub projects: Vec<(String, Totals)>,
    /// Commands an agent's hook saw: how many it rewrote, how many ran raw.
    pub hook_seen: u64,
    /// Of those, rewritten to run under Lens.
    pub hook_rewritten: u64,
    /// Commands run raw most often that Lens has a shape for.
    pub raw_shaped: Vec<RawRun>,
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

/// True when some simple command of `line` runs a program Lens has a shape for.
fn has_shape(line: &str) -> bool {
    crate::rewrite::simple_commands(line)
        .unwrap_or_default()
        .iter()
        .any(|c| {
            let program = c
                .split_whitespace()
                .find(|w| !w.contains('='))
                .unwrap_or("");
            let program = program.rsplit('/').next().unwrap_or(program);
            SHAPED.iter().any(|(p, _)| *p == program)
        })
}

fn sorted(map: BTreeMap<String, Totals>) -> Vec<(String, Totals)> {
    let mut v: Vec<(String, Totals)> = map.into_iter().collect();
    v.sort_by_key(|(k, t)| {
        (
            std::cmp::Reverse(t.bytes_in.saturating_sub(t.bytes_out)),
            k.clone(),
        )
    });
    v
}

/// Aggregates the records at or after `since_ms`.
pub fn report(records: &[Record], unreadable_lines: usize, since_ms: Option<u64>) -> Report {
    let mut total = Totals::default();
    let mut per: BTreeMap<String, Totals> = BTreeMap::new();
    let mut projects: BTreeMap<String, Totals> = BTreeMap::new();
    let mut raw: BTreeMap<String, u64> = BTreeMap::new();
    let (mut seen, mut rewritten) = (0, 0);
    for r in records
        .iter()
        .filter(|r| since_ms.is_none_or(|s| r.ts_ms >= s))
    {
        if let Some(h) = &r.hook {
            seen += 1;
            if h.rewritten {
                rewritten += 1;
            } else if has_shape(&h.command) {
                *raw.entry(h.command.clone()).or_default() += 1;
            }
            continue;
        }
        total.add(r);
        per.entry(command_key(&r.argv)).or_default().add(r);
        if let Some(p) = &r.project {
            projects.entry(p.clone()).or_default().add(r);
        }
    }
    let mut raw_shaped: Vec<RawRun> = raw
        .into_iter()
        .map(|(command, times)| RawRun { command, times })
        .collect();
    raw_shaped.sort_by(|a, b| b.times.cmp(&a.times).then(a.command.cmp(&b.command)));
    raw_shaped.truncate(20);
    Report {
        since_ms,
        token_estimate: "one token per 4 bytes, rounded up",
        total,
        commands: sorted(per),
        projects: sorted(projects),
        hook_seen: seen,
        hook_rewritten: rewritten,
        raw_shaped,
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

fn section(s: &mut String, title: &str, rows: &[(String, Totals)]) {
    if rows.is_empty() {
        return;
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(7).max(7);
    s.push_str(&format!(
        "\n{:<width$}  {:>5}  {:>5}  {:>10}  {:>10}  {:>9}  {:>6}\n",
        title, "runs", "pass", "in", "shown", "~tok saved", "saved"
    ));
    for (k, c) in rows {
        s.push_str(&format!(
            "{:<width$}  {:>5}  {:>5}  {:>10}  {:>10}  {:>9}  {:>5.1}%\n",
            k,
            c.runs,
            c.passthrough,
            human(c.bytes_in),
            human(c.bytes_out),
            c.tokens_in.saturating_sub(c.tokens_out),
            c.saved_pct
        ));
    }
}

/// The report as tables.
pub fn table(r: &Report) -> String {
    let t = &r.total;
    let mut s = format!(
        "{} runs ({} passthrough), {} in, {} shown, {:.1}% saved; about {} tokens in, {} shown ({})\n",
        t.runs,
        t.passthrough,
        human(t.bytes_in),
        human(t.bytes_out),
        t.saved_pct,
        t.tokens_in,
        t.tokens_out,
        r.token_estimate
    );
    if r.unreadable_lines > 0 {
        s.push_str(&format!(
            "({} unreadable log lines skipped)\n",
            r.unreadable_lines
        ));
    }
    section(&mut s, "command", &r.commands);
    section(&mut s, "project", &r.projects);
    if r.hook_seen > 0 {
        s.push_str(&format!(
            "\nThe agent hooks saw {} commands and ran {} under Lens.\n",
            r.hook_seen, r.hook_rewritten
        ));
    }
    if !r.raw_shaped.is_empty() {
        s.push_str("Run raw though Lens has a shape for them (piped or redirected):\n");
        for raw in &r.raw_shaped {
            s.push_str(&format!("  {:>4}x  {}\n", raw.times, raw.command));
        }
    }
    s
}

/// `lens stats`: the run log summed up, as a table or JSON.
pub(crate) fn cmd(json: bool, since_ms: Option<u64>) -> i32 {
    let dir = crate::paths::log_dir();
    let (records, bad) = match crate::runlog::read(&dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), 0),
        Err(e) => {
            eprintln!(
                "lens stats: cannot read {} ({e}); check LENS_LOG_DIR",
                dir.join("runs.jsonl").display()
            );
            return 1;
        }
    };
    let report = report(&records, bad, since_ms);
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("lens stats: {e}");
                return 1;
            }
        }
    } else {
        print!("{}", table(&report));
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(argv: &str, bytes: Option<(u64, u64)>) -> Record {
        Record {
            ts_ms: 10,
            argv: argv.split(' ').map(String::from).collect(),
            level: 2,
            passthrough: bytes.is_none(),
            exit: bytes.map(|_| 0),
            dur_ms: bytes.map(|_| 1),
            bytes_in: bytes.map(|b| b.0),
            bytes_out: bytes.map(|b| b.1),
            handle: None,
            cut_short: None,
            hook: None,
            project: Some("/src/app".into()),
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
    fn aggregates_and_counts_passthrough_projects_and_tokens() {
        let r = report(
            &[
                rec("cargo build", Some((1000, 100))),
                rec("cargo build", Some((1000, 100))),
                rec("vim x", None),
                rec("ls", Some((10, 10))),
            ],
            2,
            None,
        );
        assert_eq!(r.total.runs, 4);
        assert_eq!(r.total.passthrough, 1);
        assert_eq!(r.total.bytes_in, 2010);
        assert_eq!(r.total.bytes_out, 210);
        assert_eq!((r.total.tokens_in, r.total.tokens_out), (503, 53));
        assert_eq!(r.total.saved_pct, 89.6);
        assert_eq!(r.commands[0].0, "cargo build");
        assert_eq!(r.commands[0].1.saved_pct, 90.0);
        assert_eq!(r.projects[0].0, "/src/app");
        let t = table(&r);
        assert!(
            t.starts_with("4 runs (1 passthrough), 2010 B in, 210 B shown, 89.6% saved; about 503 tokens in, 53 shown"),
            "{t}"
        );
        assert!(t.contains("2 unreadable"));
    }

    #[test]
    fn since_and_the_hooks_raw_commands() {
        let mut old = rec("cargo build", Some((1000, 100)));
        old.ts_ms = 1;
        let hook = |c: &str, rw: bool| Record::hook(20, "claude", c.to_string(), rw);
        let r = report(
            &[
                old,
                rec("ls", Some((10, 10))),
                hook("cargo test | tail -5", false),
                hook("cargo test | tail -5", false),
                hook("echo hi", false),
                hook("git status", true),
            ],
            0,
            Some(5),
        );
        assert_eq!(r.total.runs, 1);
        assert_eq!((r.hook_seen, r.hook_rewritten), (4, 1));
        assert_eq!(
            r.raw_shaped,
            [RawRun {
                command: "cargo test | tail -5".into(),
                times: 2
            }]
        );
        assert!(table(&r).contains("   2x  cargo test | tail -5"));
    }
}
