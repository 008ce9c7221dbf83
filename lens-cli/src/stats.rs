//! `lens stats`: what the run log says Lens saved, per command as the user typed
//! it and per project, counting only what reached the model: a `lens <cmd>`
//! run's view, and an agent hook's view where the hook answered with one (an
//! output the hook left as the agent had it saved nothing). Every `lens show`
//! is logged with the bytes it printed, and the savings are reported net of
//! those fetches: a view the agent then fetched whole saved nothing.
//!
//! Tokens are estimated, not counted: one token per four bytes, rounded up,
//! which is about what a BPE tokenizer makes of English and code (it
//! undercounts dense symbols and non-Latin text). No tokenizer is shipped.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::runlog::Record;
use lens_core::Stream;

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

/// Outputs an agent's hook left as the agent had them, by why.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct RawRun {
    /// Why (`unchanged`: the view would be no smaller; `reads-file`: the agent
    /// asked to read a file; `not-text`, `not-stored`, `level-3`).
    pub why: String,
    /// How often.
    pub times: u64,
}

/// What one agent's model read, from the records its hook wrote.
#[derive(Serialize, Debug, Default, Clone, PartialEq, Eq)]
pub struct AgentTotals {
    /// Command outputs the hook saw (fetches not included).
    pub results: u64,
    /// Bytes the model would have read of them without Lens: the agent's own
    /// cut, preview or limit.
    pub would_read_bytes: u64,
    /// Bytes the model read of them with Lens: the view where the hook
    /// answered with one, else what the agent gave it.
    pub read_bytes: u64,
    /// `lens show` runs the agent made.
    pub fetches: u64,
    /// Bytes the model read of those: the page the hook answered, else the
    /// agent's own cut of what `lens show` printed.
    pub fetched_bytes: u64,
    /// `would_read_bytes - read_bytes - fetched_bytes` (negative when
    /// fetching cost more than the views saved).
    pub saved_bytes: i64,
}

/// The whole report.
#[derive(Serialize, Debug, PartialEq)]
pub struct Report {
    /// The first run counted (milliseconds since the epoch), if any.
    pub since_ms: Option<u64>,
    /// How tokens are estimated.
    pub token_estimate: &'static str,
    /// Totals over every run: a `lens <cmd>` run counts the bytes its command
    /// wrote, an agent's result what the agent would have shown without Lens.
    pub total: Totals,
    /// Per agent, what its model would have read without Lens and read with
    /// it, and what it fetched.
    pub agents: BTreeMap<String, AgentTotals>,
    /// `lens <cmd>` runs (no agent): bytes the commands wrote and Lens
    /// printed, counted raw.
    pub lens_runs: Totals,
    /// Per command, most bytes saved first.
    pub commands: Vec<(String, Totals)>,
    /// Per project (git root of the working directory), most bytes saved first.
    pub projects: Vec<(String, Totals)>,
    /// Command outputs an agent's after-tool hook saw.
    pub hook_seen: u64,
    /// Of those, answered with a view the model read instead.
    pub hook_applied: u64,
    /// The rest, by why they were left as they were.
    pub hook_raw: Vec<RawRun>,
    /// `lens show` runs no agent's hook saw (those are in `agents`).
    pub fetches: u64,
    /// Bytes those fetches printed.
    pub fetched_bytes: u64,
    /// Bytes saved net of fetches: `bytes_in - bytes_out - fetched_bytes`
    /// and every agent's `fetched_bytes` over every counted run (negative
    /// when fetching cost more than the views saved).
    pub net_saved_bytes: i64,
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
#[cfg(test)]
pub fn report(records: &[Record], unreadable_lines: usize, since_ms: Option<u64>) -> Report {
    let mut agg = Aggregate::new(since_ms);
    for r in records {
        agg.add(r);
    }
    agg.finish(unreadable_lines)
}

/// The report built one record at a time, so a log of any size is read in
/// bounded memory: it holds one entry per command, project and reason a hook
/// left a command raw, never the records.
pub struct Aggregate {
    since_ms: Option<u64>,
    total: Totals,
    per: BTreeMap<String, Totals>,
    projects: BTreeMap<String, Totals>,
    raw: BTreeMap<String, u64>,
    agents: BTreeMap<String, AgentTotals>,
    lens_runs: Totals,
    /// Fetches no agent's record has claimed yet, by handle.
    loose: BTreeMap<String, Vec<u64>>,
    agent_fetched: u64,
    seen: u64,
    applied: u64,
    fetches: u64,
    fetched: u64,
}

impl Aggregate {
    /// An empty aggregate of the records at or after `since_ms`.
    pub fn new(since_ms: Option<u64>) -> Aggregate {
        Aggregate {
            since_ms,
            total: Totals::default(),
            per: BTreeMap::new(),
            projects: BTreeMap::new(),
            raw: BTreeMap::new(),
            agents: BTreeMap::new(),
            lens_runs: Totals::default(),
            loose: BTreeMap::new(),
            agent_fetched: 0,
            seen: 0,
            applied: 0,
            fetches: 0,
            fetched: 0,
        }
    }

    /// Counts one record.
    pub fn add(&mut self, r: &Record) {
        if self.since_ms.is_some_and(|s| r.ts_ms < s) {
            return;
        }
        if let Some(h) = &r.hook {
            // The model read the answer where the hook gave one, else what
            // the agent gave it; records from before `would_read` was logged
            // fall back on the raw size.
            let would = h.would_read.or(r.bytes_in).unwrap_or(0);
            let read = if h.applied {
                r.bytes_out.unwrap_or(0)
            } else {
                would
            };
            let a = self.agents.entry(h.agent.clone()).or_default();
            if r.fetch {
                a.fetches += 1;
                a.fetched_bytes += read;
                a.saved_bytes -= read as i64;
                self.agent_fetched += read;
                // The `lens show` process logged this fetch too, whole, just
                // before: the agent's record counts it, as the model read it.
                if let Some(bytes) = r
                    .handle
                    .as_ref()
                    .and_then(|h| self.loose.get_mut(h))
                    .and_then(Vec::pop)
                {
                    self.fetches -= 1;
                    self.fetched -= bytes;
                }
                return;
            }
            a.results += 1;
            a.would_read_bytes += would;
            a.read_bytes += read;
            a.saved_bytes += would as i64 - read as i64;
            self.seen += 1;
            if h.applied {
                self.applied += 1;
            } else {
                let why = h.raw.clone().unwrap_or_else(|| "unknown".into());
                *self.raw.entry(why).or_default() += 1;
                return;
            }
            // Counted from what the model would have read, never the raw size.
            let seen = Record {
                bytes_in: Some(would),
                bytes_out: Some(read),
                ..r.clone()
            };
            self.count(&seen);
            return;
        }
        if r.fetch {
            let bytes = r.bytes_out.unwrap_or(0);
            self.fetches += 1;
            self.fetched += bytes;
            if let Some(h) = &r.handle {
                self.loose.entry(h.clone()).or_default().push(bytes);
            }
            return;
        }
        self.lens_runs.add(r);
        self.count(r);
    }

    fn count(&mut self, r: &Record) {
        self.total.add(r);
        self.per.entry(command_key(&r.argv)).or_default().add(r);
        if let Some(p) = &r.project {
            self.projects.entry(p.clone()).or_default().add(r);
        }
    }

    /// The report, with the count of log lines that did not parse.
    pub fn finish(self, unreadable_lines: usize) -> Report {
        let mut hook_raw: Vec<RawRun> = self
            .raw
            .into_iter()
            .map(|(why, times)| RawRun { why, times })
            .collect();
        hook_raw.sort_by(|a, b| b.times.cmp(&a.times).then(a.why.cmp(&b.why)));
        let total = self.total;
        let net_saved_bytes = total.bytes_in as i64
            - total.bytes_out as i64
            - self.fetched as i64
            - self.agent_fetched as i64;
        Report {
            since_ms: self.since_ms,
            token_estimate: "one token per 4 bytes, rounded up",
            total,
            agents: self.agents,
            lens_runs: self.lens_runs,
            commands: sorted(self.per),
            projects: sorted(self.projects),
            hook_seen: self.seen,
            hook_applied: self.applied,
            hook_raw,
            fetches: self.fetches,
            fetched_bytes: self.fetched,
            net_saved_bytes,
            unreadable_lines,
        }
    }
}

fn human(n: u64) -> String {
    match n {
        n if n >= 10 << 20 => format!("{:.1} MB", n as f64 / (1 << 20) as f64),
        n if n >= 10 << 10 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn signed(n: i64) -> String {
    if n < 0 {
        format!("-{}", human(n.unsigned_abs()))
    } else {
        human(n as u64)
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
    if !r.agents.is_empty() {
        s.push_str(
            "\nagent     results  would read   read     fetches  fetched    saved  (bytes the model read: without Lens, with it)\n",
        );
        for (name, a) in &r.agents {
            s.push_str(&format!(
                "{:<8}  {:>7}  {:>10}  {:>10}  {:>5}  {:>10}  {:>10}\n",
                name,
                a.results,
                human(a.would_read_bytes),
                human(a.read_bytes),
                a.fetches,
                human(a.fetched_bytes),
                signed(a.saved_bytes)
            ));
        }
    }
    let l = &r.lens_runs;
    if l.runs > 0 {
        s.push_str(&format!(
            "\nlens <cmd> runs: {} ({} passthrough), {} of raw output in, {} shown, {:.1}% saved\n",
            l.runs,
            l.passthrough,
            human(l.bytes_in),
            human(l.bytes_out),
            l.saved_pct
        ));
    }
    section(&mut s, "command", &r.commands);
    section(&mut s, "project", &r.projects);
    if r.fetches > 0 || t.runs > 0 {
        s.push_str(&format!(
            "\n{} fetches with lens show outside an agent's hook printed {}; net of every fetch, {} saved\n",
            r.fetches,
            human(r.fetched_bytes),
            signed(r.net_saved_bytes)
        ));
    }
    if r.hook_seen > 0 {
        s.push_str(&format!(
            "The agent hooks saw {} command outputs; the model read Lens's view of {}.\n",
            r.hook_seen, r.hook_applied
        ));
        for raw in &r.hook_raw {
            s.push_str(&format!(
                "  {:>4}x  left as the agent had it: {}\n",
                raw.times, raw.why
            ));
        }
    }
    s
}

/// `lens stats`: the run log summed up, as a table or JSON.
pub(crate) fn cmd(json: bool, since_ms: Option<u64>) -> i32 {
    let dir = crate::paths::log_dir();
    let mut agg = Aggregate::new(since_ms);
    let bad = match crate::runlog::read_each(&dir, |r| agg.add(&r)) {
        Ok(bad) => bad,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => {
            crate::capture::say(&format!(
                "lens stats: cannot read {} ({e}); check LENS_LOG_DIR",
                dir.join("runs.jsonl").display()
            ));
            return 1;
        }
    };
    let report = agg.finish(bad);
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => crate::capture::print_to(Stream::Stdout, format!("{s}\n").as_bytes()),
            Err(e) => {
                crate::capture::say(&format!("lens stats: {e}"));
                return 1;
            }
        }
    } else {
        crate::capture::print_to(Stream::Stdout, table(&report).as_bytes());
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
            fetch: false,
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
    fn only_views_that_reached_the_model_count_and_fetches_are_netted_out() {
        let mut old = rec("cargo build", Some((1000, 100)));
        old.ts_ms = 1;
        let hook = |c: &str, applied: bool, why: Option<&str>, bytes: (u64, u64)| {
            let mut r = Record::hook(20, "claude", c.to_string(), applied);
            r.argv = vec!["git".into(), "status".into()];
            r.bytes_in = Some(bytes.0);
            r.bytes_out = Some(bytes.1);
            r.hook.as_mut().unwrap().raw = why.map(String::from);
            r
        };
        let r = report(
            &[
                old,
                rec("ls", Some((10, 10))),
                hook("cat x", false, Some("reads-file"), (900, 900)),
                hook("echo hi", false, Some("unchanged"), (3, 3)),
                hook("echo ho", false, Some("unchanged"), (3, 3)),
                hook("git status", true, None, (5000, 1000)),
                Record::fetch(
                    30,
                    vec!["lens".into(), "show".into()],
                    "0000abcd".into(),
                    1500,
                ),
            ],
            0,
            Some(5),
        );
        assert_eq!(r.total.runs, 2);
        assert_eq!((r.total.bytes_in, r.total.bytes_out), (5010, 1010));
        assert_eq!((r.hook_seen, r.hook_applied), (4, 1));
        assert_eq!(
            r.hook_raw,
            [
                RawRun {
                    why: "unchanged".into(),
                    times: 2
                },
                RawRun {
                    why: "reads-file".into(),
                    times: 1
                }
            ]
        );
        assert_eq!(
            (r.fetches, r.fetched_bytes, r.net_saved_bytes),
            (1, 1500, 2500)
        );
        let t = table(&r);
        assert!(
            t.contains(
                "1 fetches with lens show outside an agent's hook printed 1500 B; net of every fetch, 2500 B saved"
            ),
            "{t}"
        );
        assert!(t.contains("the model read Lens's view of 1"), "{t}");
        // Old records of the rewriting hooks count as nothing applied.
        let old_hook: Record = serde_json::from_str(
            r#"{"ts_ms":9,"argv":[],"level":2,"hook":{"agent":"claude","command":"git status","rewritten":true}}"#,
        )
        .unwrap();
        assert!(!old_hook.hook.unwrap().applied);
        // Records from before `would_read` was logged count their raw size;
        // the ones the hook left raw count as read whole.
        let c = &r.agents["claude"];
        assert_eq!((c.results, c.would_read_bytes), (4, 5906));
        assert_eq!(c.read_bytes, 1906);
        assert_eq!((c.fetches, c.saved_bytes), (0, 4000));
    }

    #[test]
    fn an_agents_fetch_is_the_page_its_model_read_and_counted_once() {
        let mut seen = Record::hook(20, "gemini", "seq 1 70000".into(), true);
        seen.bytes_in = Some(408_894);
        seen.bytes_out = Some(300);
        seen.hook.as_mut().unwrap().would_read = Some(40_300);
        // `lens show` logs what it printed; the hook then logs the page.
        let printed = Record::fetch(
            21,
            vec!["lens".into(), "show".into()],
            "0000abcd".into(),
            1_800_000,
        );
        let mut page = Record::hook(22, "gemini", "lens show 0000abcd".into(), true);
        page.fetch = true;
        page.handle = Some("0000abcd".into());
        page.bytes_out = Some(39_000);
        page.hook.as_mut().unwrap().would_read = Some(40_300);
        let r = report(&[seen, printed, page], 0, None);
        let g = &r.agents["gemini"];
        assert_eq!(
            (g.results, g.would_read_bytes, g.read_bytes),
            (1, 40_300, 300)
        );
        assert_eq!((g.fetches, g.fetched_bytes), (1, 39_000));
        assert_eq!(g.saved_bytes, 40_300 - 300 - 39_000);
        // Never the raw 400 KB, and the whole `lens show` is not counted again.
        assert_eq!(
            (r.total.bytes_in, r.fetches, r.fetched_bytes),
            (40_300, 0, 0)
        );
        assert_eq!(r.net_saved_bytes, 1000);
    }
}
