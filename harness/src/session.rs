//! The paired-session benchmark: the same session run raw and through Lens, pair
//! after pair, and the difference in what the agent was given, tested.
//!
//! A session (`tasks/sessions/NAME.toml`) is a retention task (its setup,
//! verifier and fix) plus a fixed, realistic sequence of shell commands the agent
//! is told to work through before it finishes the task. Each pair is one run of
//! the `raw` arm (the commands as written) and one of the `lens` arm (each behind
//! `lens`), in an order drawn from the seed for that pair, so drift over the sweep
//! (a warming cache, a loaded machine, an API having a slow hour) lands on both
//! arms alike. Every run starts from a fresh directory and ends with the task's
//! verifier, on a copy of the directory.
//!
//! From each run: the bytes of every tool result the agent was given, tokens with
//! their kinds apart (input, output, cache read, cache write: never summed with
//! equal weight), turns, tool calls, how many results were Lens views, and the
//! recoveries (`lens show` fetches; reruns of a listed command beyond the times
//! the sequence lists it). The report tests the paired log ratio of tool-result
//! bytes with the exact permutation test and gives a seeded bootstrap interval of
//! the median ratio, with the pair count and its p floor; [`default_pairs`] is the
//! smallest count whose floor is under 0.01.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::driver::{scripted, Act, Agent, Driver, Model, Outcome, Tokens};
use crate::env;
use crate::retention::{set_up, tool_path, verdict, verified_copy, verify, Verdict};
use crate::stats;
use crate::sweep::{
    agent_record, agent_version, lens_in_scratch, lens_version, print_preflight, status_word,
};
use crate::tasks::Task;

/// The two arms, in report order.
pub const ARMS: [&str; 2] = ["raw", "lens"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSession {
    description: String,
    task: String,
    commands: Vec<String>,
}

/// A loaded session.
#[derive(Debug, Clone)]
pub struct Session {
    /// File stem.
    pub name: String,
    /// What it stands for.
    pub description: String,
    /// The retention task it runs on.
    pub task: Task,
    /// The commands, in order, as the raw arm runs them.
    pub commands: Vec<String>,
}

impl Session {
    /// A command as `arm` runs it.
    pub fn arm_command(arm: &str, command: &str) -> String {
        if arm == "lens" {
            format!("lens {command}")
        } else {
            command.to_string()
        }
    }

    /// The prompt a real agent is given for `arm`.
    pub fn prompt(&self, arm: &str) -> String {
        let mut p = String::from(
            "Work through these shell commands in this directory, in this order, reading each \
             result before you run the next:\n",
        );
        for (i, c) in self.commands.iter().enumerate() {
            p.push_str(&format!("{}. `{}`\n", i + 1, Session::arm_command(arm, c)));
        }
        p.push_str("Then: ");
        p.push_str(
            &self
                .task
                .prompt
                .replace("{command}", &Session::arm_command(arm, &self.task.command)),
        );
        p
    }
}

/// Loads `root/*.toml` (every session, or only the named ones), each with its task
/// from `tasks`.
pub fn load_all(root: &Path, tasks: &Path, only: &[String]) -> Result<Vec<Session>> {
    let mut out = Vec::new();
    let entries =
        std::fs::read_dir(root).with_context(|| format!("cannot read {}", root.display()))?;
    for e in entries {
        let path = e?.path();
        if path.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .context("a session file has no name")?
            .to_string();
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        let raw: RawSession = toml::from_str(
            &std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        )
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim()))?;
        let task = Task::load(&tasks.join(&raw.task)).with_context(|| {
            format!("{}: its task {:?} does not load", path.display(), raw.task)
        })?;
        if !raw.commands.contains(&task.command) {
            bail!(
                "{}: the commands must include the task's command `{}`",
                path.display(),
                task.command
            );
        }
        out.push(Session {
            name,
            description: raw.description,
            task,
            commands: raw.commands,
        });
    }
    for o in only {
        if !out.iter().any(|s| &s.name == o) {
            bail!("no session named {o:?} under {}", root.display());
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The smallest number of pairs whose two-sided p floor is below 0.01.
pub fn default_pairs() -> usize {
    (1..64)
        .find(|&n| stats::p_floor(n) < 0.01)
        .expect("a floor below 0.01")
}

/// One run of the plan.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Session name.
    pub session: String,
    /// Pair, from 1.
    pub pair: usize,
    /// `raw` or `lens`.
    pub arm: String,
    /// 0 when this arm ran first in its pair, 1 when second.
    pub position: usize,
}

impl Planned {
    /// `session/pair/arm`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.session, self.pair, self.arm)
    }
}

/// Pair after pair, every session in each; within a pair the arms' order is
/// drawn from `seed`.
pub fn plan(sessions: &[Session], pairs: usize, seed: u64) -> Vec<Planned> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for pair in 1..=pairs {
        for s in sessions {
            let lens_first = rng.gen::<bool>();
            let order = if lens_first {
                ["lens", "raw"]
            } else {
                ["raw", "lens"]
            };
            for (position, arm) in order.iter().enumerate() {
                out.push(Planned {
                    session: s.name.clone(),
                    pair,
                    arm: arm.to_string(),
                    position,
                });
            }
        }
    }
    out
}

/// One run's record.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Session.
    pub session: String,
    /// Pair, from 1.
    pub pair: usize,
    /// Arm.
    pub arm: String,
    /// 0 first in its pair, 1 second.
    pub position: usize,
    /// Tokens by kind, when the agent reported them.
    pub tokens: Option<Tokens>,
    /// Bytes of every tool result the agent was given.
    pub tool_result_bytes: u64,
    /// Those bytes / 4, rounded up: an estimate, not a tokenizer's count.
    pub tool_result_tokens_est: u64,
    /// Model turns.
    pub turns: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Tool results that were Lens views.
    pub views: u64,
    /// `lens show` calls.
    pub fetches: u64,
    /// Runs of a listed command beyond the times the sequence lists it.
    pub reruns: u64,
    /// The verifier's verdict (false when cut off).
    pub success: bool,
    /// True when the time limit ended the agent (a failure, counted).
    pub cut_off: bool,
    /// Why the run is not counted (infrastructure only).
    pub excluded: Option<String>,
    /// The harness's error, when it could not run it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the agent, seconds.
    pub duration_s: f64,
    /// The agent as it described itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Agent>,
    /// The end of the agent's stderr.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent_stderr: String,
    /// The shell commands the agent ran.
    pub commands: Vec<String>,
}

impl RunRecord {
    fn empty(p: &Planned) -> RunRecord {
        RunRecord {
            session: p.session.clone(),
            pair: p.pair,
            arm: p.arm.clone(),
            position: p.position,
            tokens: None,
            tool_result_bytes: 0,
            tool_result_tokens_est: 0,
            turns: 0,
            tool_calls: 0,
            views: 0,
            fetches: 0,
            reruns: 0,
            success: false,
            cut_off: false,
            excluded: None,
            error: None,
            duration_s: 0.0,
            agent: None,
            agent_stderr: String::new(),
            commands: Vec::new(),
        }
    }

    /// The record of a run the harness could not run: excluded, with the error.
    pub fn failed(p: &Planned, e: &anyhow::Error) -> RunRecord {
        let mut r = RunRecord::empty(p);
        let e = format!("{e:#}");
        r.excluded = Some(format!("harness error: {e}"));
        r.error = Some(e);
        r
    }

    /// `session/pair/arm`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.session, self.pair, self.arm)
    }
}

/// Fetches and reruns in what a session ran: `lens show` calls, and runs of each
/// listed command (with or without `lens` in front) beyond the times the list
/// has it.
pub fn recovery(ran: &[String], listed: &[String]) -> (u64, u64) {
    let fetches = ran.iter().filter(|c| c.contains("lens show")).count() as u64;
    let mut wanted: BTreeMap<&str, i64> = BTreeMap::new();
    for c in listed {
        *wanted.entry(c.as_str()).or_default() += 1;
    }
    let mut got: BTreeMap<&str, i64> = BTreeMap::new();
    for c in ran {
        let bare = c.trim().strip_prefix("lens ").unwrap_or(c.trim());
        if let Some((k, _)) = wanted.get_key_value(bare) {
            *got.entry(k).or_default() += 1;
        }
    }
    let reruns = got.iter().map(|(k, n)| (n - wanted[k]).max(0) as u64).sum();
    (fetches, reruns)
}

/// Where a run's binaries are.
pub struct Tools {
    /// Directory holding `lens`.
    pub lens_dir: PathBuf,
}

/// Runs one planned run in a fresh directory under `root`.
pub fn run_one(
    p: &Planned,
    s: &Session,
    driver: Driver,
    model: Model,
    root: &Path,
    tools: &Tools,
) -> Result<RunRecord> {
    let dir = root.join(format!("{}-{}-{}", p.session, p.pair, p.arm));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let path = tool_path(&[&tools.lens_dir]);
    set_up(&s.task, &dir, &path)?;
    let prompt = s.prompt(&p.arm);
    let started = Instant::now();
    let outcome: Outcome = if driver.simulated() {
        scripted::act_session(&s.task, &prompt, &s.commands, p.arm == "lens", &dir, &path)?
    } else if model == Model::Scripted {
        let home = dir.with_extension("home");
        let _ = std::fs::remove_dir_all(&home);
        let how = Act {
            model,
            hook: false,
            home: &home,
            vm: None,
        };
        let lines = s
            .commands
            .iter()
            .map(|c| Session::arm_command(&p.arm, c))
            .collect();
        let out = driver.act_scripted_session(&how, &s.task, lines, &prompt, &dir, &path);
        let _ = std::fs::remove_dir_all(&home);
        out?
    } else {
        let command = Session::arm_command(&p.arm, &s.task.command);
        driver.act(&s.task, &prompt, &command, &dir, &path)?
    };
    let duration_s = (started.elapsed().as_secs_f64() * 100.0).round() / 100.0;
    let copy = root.join(format!("{}-{}-{}.verify", p.session, p.pair, p.arm));
    let passed = verify(&s.task, &verified_copy(&dir, &copy)?)?;
    let _ = std::fs::remove_dir_all(&dir);
    let mut r = RunRecord::empty(p);
    match verdict(outcome.tokens, outcome.exit) {
        Verdict::Excluded(why) => r.excluded = Some(why),
        Verdict::CutOff => r.cut_off = true,
        Verdict::Counted => {}
    }
    let (fetches, reruns) = recovery(&outcome.commands, &s.commands);
    r.tokens = outcome.tokens;
    r.tool_result_bytes = outcome.bytes_read;
    r.tool_result_tokens_est = outcome.bytes_read.div_ceil(4);
    r.turns = outcome.turns;
    r.tool_calls = outcome.tool_calls;
    r.views = outcome.views;
    r.fetches = fetches;
    r.reruns = reruns;
    r.success = passed && !r.cut_off;
    r.duration_s = duration_s;
    r.agent = outcome.agent;
    r.agent_stderr = outcome.stderr;
    r.commands = outcome.commands;
    Ok(r)
}

/// Everything a session sweep recorded.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct SessionSweep {
    /// The command that produced it.
    pub command: String,
    /// Revision.
    pub git_revision: String,
    /// When.
    pub date: String,
    /// Where.
    pub machine: env::Machine,
    /// Tool versions (lens, the agent CLI).
    pub tools: BTreeMap<String, String>,
    /// Seed of the arm order and of the statistics.
    pub seed: u64,
    /// Driver.
    pub driver: String,
    /// True for the scripted agent.
    pub simulation: bool,
    /// The model behind a real driver: `real`, or `scripted` (the model server
    /// on 127.0.0.1, whose own counts the tokens are).
    #[serde(default)]
    pub model: Model,
    /// The scripted agent's cost model, when simulated.
    pub cost_model: Option<String>,
    /// Pairs per session.
    pub pairs: usize,
    /// The sessions, with their commands.
    pub sessions: BTreeMap<String, Vec<String>>,
    /// Every run, in the order they ran.
    pub runs: Vec<RunRecord>,
    /// False while running or when interrupted.
    pub complete: bool,
}

/// The runs of an earlier, interrupted session sweep that a resumed one keeps,
/// by key: every recorded run the harness could run. `now` is the sweep about
/// to run. Refuses a sweep of another driver, model, seed, pair count,
/// revision, tool version or session list, in one line saying which.
pub fn resumable(old: SessionSweep, now: &SessionSweep) -> Result<BTreeMap<String, RunRecord>> {
    let model = |m: Model| {
        if m == Model::Scripted {
            "--model scripted"
        } else {
            "--model real"
        }
    };
    let sessions = |s: &SessionSweep| format!("{:?}", s.sessions);
    let checks = [
        ("driver", old.driver.clone(), now.driver.clone()),
        ("model", model(old.model).into(), model(now.model).into()),
        ("seed", old.seed.to_string(), now.seed.to_string()),
        ("pair count", old.pairs.to_string(), now.pairs.to_string()),
        (
            "revision",
            old.git_revision.clone(),
            now.git_revision.clone(),
        ),
        ("set of sessions or commands", sessions(&old), sessions(now)),
    ];
    for (what, was, is) in checks {
        if was != is {
            bail!("it holds a sweep with another {what} ({was} there, {is} here); resume with the same flags and tools");
        }
    }
    for tool in old.tools.keys().chain(now.tools.keys()) {
        let version =
            |s: &SessionSweep| s.tools.get(tool).cloned().unwrap_or_else(|| "none".into());
        if version(&old) != version(now) {
            bail!(
                "it holds a sweep with another {tool} version ({} there, {} here); resume with the same flags and tools",
                version(&old),
                version(now)
            );
        }
    }
    Ok(old
        .runs
        .into_iter()
        .filter(|r| r.error.is_none())
        .map(|r| (r.key(), r))
        .collect())
}

/// One session's row of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Session.
    pub session: String,
    /// Pairs with both arms counted.
    pub pairs: usize,
    /// Runs excluded (either arm).
    pub excluded: usize,
    /// Median tool-result bytes, raw and lens.
    pub bytes: (Option<f64>, Option<f64>),
    /// Median paired ratio lens/raw of tool-result bytes.
    pub ratio: Option<f64>,
    /// Its seeded bootstrap 95% interval.
    pub interval: Option<(f64, f64)>,
    /// Exact (or seeded Monte Carlo) permutation p of the paired log ratios.
    pub p: Option<f64>,
    /// The smallest p that many pairs can give.
    pub p_floor: Option<f64>,
    /// Success rates, raw and lens.
    pub success: (Option<f64>, Option<f64>),
    /// Median tokens by kind, raw and lens.
    pub tokens: (Option<Tokens>, Option<Tokens>),
    /// Lens views, fetches and reruns over the lens arm's runs.
    pub views: u64,
    /// `lens show` calls in the lens arm.
    pub fetches: u64,
    /// Reruns in the lens arm.
    pub reruns: u64,
    /// Reruns in the raw arm.
    pub raw_reruns: u64,
}

fn median_of(v: Vec<f64>) -> Option<f64> {
    (!v.is_empty()).then(|| stats::median(&v))
}

fn median_tokens(runs: &[&RunRecord]) -> Option<Tokens> {
    let ts: Vec<Tokens> = runs.iter().filter_map(|r| r.tokens).collect();
    if ts.is_empty() {
        return None;
    }
    let m = |f: fn(&Tokens) -> u64| {
        stats::median(&ts.iter().map(|t| f(t) as f64).collect::<Vec<_>>()).round() as u64
    };
    Some(Tokens {
        input: m(|t| t.input),
        output: m(|t| t.output),
        cache_read: m(|t| t.cache_read),
        cache_write: m(|t| t.cache_write),
    })
}

/// Aggregates a sweep, one row per session.
pub fn report(s: &SessionSweep) -> Vec<Row> {
    let mut rows = Vec::new();
    for name in s.sessions.keys() {
        let arm = |a: &str| -> Vec<&RunRecord> {
            s.runs
                .iter()
                .filter(|r| &r.session == name && r.arm == a && r.excluded.is_none())
                .collect()
        };
        let (raw, lens) = (arm("raw"), arm("lens"));
        let excluded = s
            .runs
            .iter()
            .filter(|r| &r.session == name && r.excluded.is_some())
            .count();
        let pairs: Vec<(f64, f64)> = lens
            .iter()
            .filter_map(|l| {
                let r = raw.iter().find(|r| r.pair == l.pair)?;
                // +1 keeps a run that read nothing from a log of zero.
                Some((
                    r.tool_result_bytes as f64 + 1.0,
                    l.tool_result_bytes as f64 + 1.0,
                ))
            })
            .collect();
        let ratios: Vec<f64> = pairs.iter().map(|(r, l)| l / r).collect();
        let logs: Vec<f64> = ratios.iter().map(|x| x.ln()).collect();
        let some = !pairs.is_empty();
        let success = |v: &[&RunRecord]| {
            (!v.is_empty()).then(|| v.iter().filter(|r| r.success).count() as f64 / v.len() as f64)
        };
        rows.push(Row {
            session: name.clone(),
            pairs: pairs.len(),
            excluded,
            bytes: (
                median_of(raw.iter().map(|r| r.tool_result_bytes as f64).collect()),
                median_of(lens.iter().map(|r| r.tool_result_bytes as f64).collect()),
            ),
            ratio: median_of(ratios.clone()),
            interval: some.then(|| {
                stats::bootstrap_median(&ratios, 0.95, stats::BOOTSTRAP_RESAMPLES, s.seed)
            }),
            p: some.then(|| stats::permutation_p(&logs, s.seed)),
            p_floor: some.then(|| stats::p_floor(pairs.len())),
            success: (success(&raw), success(&lens)),
            tokens: (median_tokens(&raw), median_tokens(&lens)),
            views: lens.iter().map(|r| r.views).sum(),
            fetches: lens.iter().map(|r| r.fetches).sum(),
            reruns: lens.iter().map(|r| r.reruns).sum(),
            raw_reruns: raw.iter().map(|r| r.reruns).sum(),
        });
    }
    rows
}

/// The report as markdown.
pub fn markdown(s: &SessionSweep) -> String {
    let mut out = String::new();
    if s.simulation {
        out.push_str(&format!(
            "SIMULATION: driver `{}` is the scripted agent; its tokens follow a stated cost model, not a model's. {}\n\n",
            s.driver,
            s.cost_model.as_deref().unwrap_or("")
        ));
    } else {
        let agent = s.runs.iter().find_map(|r| r.agent.as_ref());
        out.push_str(&format!(
            "Driver `{}`: the real {} CLI ({}), model {}{}.\n\n",
            s.driver,
            s.driver,
            agent
                .and_then(|a| a.version.clone())
                .or_else(|| s.tools.get(&s.driver).cloned())
                .unwrap_or_else(|| "version unknown".into()),
            agent
                .and_then(|a| a.model.clone())
                .unwrap_or_else(|| "unknown".into()),
            if s.model == Model::Scripted {
                " (scripted: the harness's model server on 127.0.0.1 played a deterministic agent; tokens are the server's own counts)"
            } else {
                ""
            }
        ));
    }
    if !s.complete {
        out.push_str(&format!(
            "PARTIAL: {} runs recorded; the sweep did not finish (resume it with --resume).\n\n",
            s.runs.len()
        ));
    }
    let f = |x: Option<f64>, d: usize| x.map_or("–".to_string(), |v| format!("{v:.d$}"));
    let pct = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{:.0}%", v * 100.0));
    out.push_str("| session | pairs | tool-result bytes raw | lens | median ratio | 95% CI | p (perm.) | p floor | success raw / lens | views | fetches | reruns (lens / raw) |\n");
    out.push_str("|---|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---|\n");
    let rows = report(s);
    for r in &rows {
        let mut pairs = r.pairs.to_string();
        if r.excluded > 0 {
            pairs.push_str(&format!(" (+{} runs excluded)", r.excluded));
        }
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} | {} | {} / {} |\n",
            r.session,
            pairs,
            f(r.bytes.0, 0),
            f(r.bytes.1, 0),
            f(r.ratio, 3),
            r.interval
                .map_or("–".into(), |(a, b)| format!("{a:.3}–{b:.3}")),
            f(r.p, 4),
            f(r.p_floor, 4),
            pct(r.success.0),
            pct(r.success.1),
            r.views,
            r.fetches,
            r.reruns,
            r.raw_reruns,
        ));
    }
    out.push_str("\nMedian tokens per run, by kind (never summed with equal weight):\n\n");
    out.push_str("| session | arm | input | output | cache read | cache write |\n|---|---|---:|---:|---:|---:|\n");
    for r in &rows {
        for (arm, t) in [("raw", r.tokens.0), ("lens", r.tokens.1)] {
            match t {
                Some(t) => out.push_str(&format!(
                    "| {} | {arm} | {} | {} | {} | {} |\n",
                    r.session, t.input, t.output, t.cache_read, t.cache_write
                )),
                None => out.push_str(&format!("| {} | {arm} | – | – | – | – |\n", r.session)),
            }
        }
    }
    out.push_str(
        "\nEach pair runs the session raw and through Lens in an order drawn from the seed; the ratio is lens/raw of the bytes of every tool result the agent was given; p is a paired permutation test of the log ratios (exact up to 20 pairs), the interval a seeded percentile bootstrap of the median ratio. Runs the time limit cut off count as failures; only infrastructure failures are excluded.\n",
    );
    out
}

/// What `harness session plan|run` was asked for (its flags, parsed).
pub struct SessionArgs {
    /// `--driver`.
    pub driver: Driver,
    /// `--model`.
    pub model: Model,
    /// `--sessions`: the sessions to run, all when empty.
    pub only: Vec<String>,
    /// `--pairs`.
    pub pairs: usize,
    /// `--seed`.
    pub seed: u64,
    /// `--run`.
    pub go: bool,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--save`.
    pub save: bool,
    /// `--resume`.
    pub resume: bool,
}

/// `harness session plan` (`run` false) and `harness session run`: the plan and
/// the preflight; with `--run`, every run, written out after each.
pub fn cmd(run: bool, a: SessionArgs) -> Result<()> {
    let SessionArgs {
        driver,
        model,
        only,
        pairs,
        seed,
        go,
        out,
        save,
        resume,
    } = a;
    let root = crate::sweep::repo_root();
    let sessions = load_all(&root.join("tasks/sessions"), &root.join("tasks"), &only)?;
    let planned = plan(&sessions, pairs, seed);
    println!(
        "{} runs: {} sessions x {pairs} pairs x 2 arms, driver {}, each pair's order drawn from seed {seed}",
        planned.len(),
        sessions.len(),
        driver.name()
    );
    for s in &sessions {
        println!("  {} (task {}): {}", s.name, s.task.name, s.description);
        for c in &s.commands {
            println!("      {c}");
        }
    }
    if pairs < default_pairs() {
        println!(
            "note: with {pairs} pairs the smallest p the test can give is {:.4}",
            crate::stats::p_floor(pairs)
        );
    }
    let lens = std::env::var_os("LENS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(format!("out/release/{}/lens", std::env::consts::ARCH)));
    if driver.simulated() && model == Model::Scripted {
        bail!("--model scripted puts the scripted model behind a real agent CLI; pick --driver claude, codex, gemini, opencode, kilo, qwen or copilot");
    }
    let mut missing = driver.preflight(model);
    if missing.is_empty() && !driver.simulated() {
        println!(
            "preflight: starting {} once on a trivial prompt, as a run would...",
            driver.name()
        );
        missing.extend(driver.start_check(model, &[]));
    }
    if !lens.is_file() {
        missing.push(format!(
            "no lens binary at {}; run `make build`",
            lens.display()
        ));
    }
    if !driver.simulated() && model == Model::Real {
        eprintln!(
            "harness: warning: sessions run in a directory on this machine; the {} agent can read the task's verifier",
            driver.name()
        );
    }
    print_preflight(&missing);
    if !run || !go {
        println!(
            "nothing was run and nothing was spent{}",
            if run { "; add --run to run it" } else { "" }
        );
        return Ok(());
    }
    if !missing.is_empty() {
        bail!("the preflight failed; nothing was run");
    }
    let out = root.join(crate::save::destination(
        out,
        save,
        &format!("session-{}.json", driver.name()),
    ));
    let keys = |v: &serde_json::Value| -> std::collections::BTreeSet<String> {
        v["sessions"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    crate::save::refuse_partial(
        &out,
        &sessions.iter().map(|s| s.name.clone()).collect(),
        keys,
    )?;
    let mut tools = BTreeMap::new();
    tools.insert("lens".to_string(), lens_version(&lens));
    if let Some(bin) = driver.binary_name() {
        let version = agent_version(driver, model);
        tools.insert(bin.to_string(), agent_record(driver, model, &version));
    }
    let mut sweep = SessionSweep {
        command: env::command_line(),
        git_revision: env::git_revision(),
        date: env::utc_now(),
        machine: env::machine(),
        tools,
        seed,
        driver: driver.name().into(),
        simulation: driver.simulated(),
        model,
        cost_model: driver
            .simulated()
            .then(crate::driver::scripted::session_cost_model),
        pairs,
        sessions: sessions
            .iter()
            .map(|s| (s.name.clone(), s.commands.clone()))
            .collect(),
        runs: Vec::new(),
        complete: false,
    };
    // --resume: only a sweep measured as this one is keeps its runs.
    let mut done: BTreeMap<String, RunRecord> = BTreeMap::new();
    if resume {
        if let Ok(bytes) = std::fs::read(&out) {
            let old: SessionSweep = serde_json::from_slice(&bytes).with_context(|| {
                format!("--resume: {} is not a session results file", out.display())
            })?;
            done =
                resumable(old, &sweep).with_context(|| format!("--resume: {}", out.display()))?;
            println!("resume: {} runs already recorded", done.len());
        }
    }
    let scratch = std::env::temp_dir()
        .join("lens-session")
        .join(format!("{:07}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    lens_in_scratch(&scratch);
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let write = |sweep: &SessionSweep| crate::save::write_json(&out, sweep);
    let tools = Tools {
        lens_dir: lens.parent().context("lens has a directory")?.to_path_buf(),
    };
    let by_name: BTreeMap<&str, &Session> = sessions.iter().map(|s| (s.name.as_str(), s)).collect();
    let started = Instant::now();
    for (i, p) in planned.iter().enumerate() {
        let r = match done.remove(&p.key()) {
            Some(r) => r,
            None => {
                let r = run_one(
                    p,
                    by_name[p.session.as_str()],
                    driver,
                    model,
                    &scratch,
                    &tools,
                )
                .unwrap_or_else(|e| RunRecord::failed(p, &e));
                println!(
                    "[{}/{}] {} pair {} {}: {} · {} result bytes · {} calls · {} views · {:.0}s elapsed",
                    i + 1,
                    planned.len(),
                    p.session,
                    p.pair,
                    p.arm,
                    status_word(r.error.is_some(), r.cut_off, r.success),
                    r.tool_result_bytes,
                    r.tool_calls,
                    r.views,
                    started.elapsed().as_secs_f64()
                );
                r
            }
        };
        sweep.runs.push(r);
        write(&sweep)?;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    sweep.complete = true;
    write(&sweep)?;
    print!("\n{}", markdown(&sweep));
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// `harness session report FILE`: a session results file's table.
pub fn print_report(file: &str) -> Result<()> {
    let sweep: SessionSweep = serde_json::from_slice(
        &std::fs::read(file).with_context(|| format!("cannot read {file}"))?,
    )
    .with_context(|| format!("{file} is not a session results file"))?;
    print!("{}", markdown(&sweep));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions() -> Vec<Session> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        load_all(&root.join("sessions"), &root, &[]).unwrap()
    }

    #[test]
    fn eight_pairs_are_the_fewest_with_a_floor_under_one_percent() {
        assert_eq!(default_pairs(), 8);
        assert!(stats::p_floor(7) > 0.01);
    }

    #[test]
    fn the_plan_pairs_every_session_and_draws_each_pairs_order() {
        let s = sessions();
        assert!(s.len() >= 2);
        let p = plan(&s, 8, 7);
        assert_eq!(p.len(), s.len() * 8 * 2);
        assert_eq!(p, plan(&s, 8, 7), "seeded");
        // Both orders occur, and each pair holds one run of each arm.
        let firsts: Vec<&str> = p
            .iter()
            .filter(|r| r.position == 0)
            .map(|r| r.arm.as_str())
            .collect();
        assert!(firsts.contains(&"raw") && firsts.contains(&"lens"));
        for pair in p.chunks(2) {
            assert_eq!(pair[0].pair, pair[1].pair);
            assert_ne!(pair[0].arm, pair[1].arm);
        }
        // Pair 1 of every session comes before pair 2 of any.
        let last_of_1 = p.iter().rposition(|r| r.pair == 1).unwrap();
        let first_of_2 = p.iter().position(|r| r.pair == 2).unwrap();
        assert!(last_of_1 < first_of_2);
    }

    #[test]
    fn recoveries_are_fetches_and_runs_beyond_the_list() {
        let listed: Vec<String> = ["ls", "cargo build", "cargo build"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let ran: Vec<String> = [
            "lens ls",
            "lens cargo build",
            "lens show 0a1b2c3d",
            "cargo build",
            "lens cargo build",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(recovery(&ran, &listed), (1, 1));
        assert_eq!(recovery(&listed, &listed), (0, 0));
    }

    #[test]
    fn the_prompt_lists_the_arms_commands_then_the_task() {
        let s = &sessions()[0];
        let p = s.prompt("lens");
        assert!(p.contains(&format!("1. `lens {}`", s.commands[0])));
        assert!(p.contains(&format!("`lens {}`", s.task.command)));
        assert!(!s.prompt("raw").contains("lens "));
    }

    fn record(session: &str, pair: usize, arm: &str, bytes: u64, success: bool) -> RunRecord {
        let mut r = RunRecord::empty(&Planned {
            session: session.into(),
            pair,
            arm: arm.into(),
            position: 0,
        });
        r.tool_result_bytes = bytes;
        r.success = success;
        r.tokens = Some(Tokens {
            input: 10,
            output: 20,
            cache_read: bytes,
            cache_write: bytes / 4,
        });
        r
    }

    #[test]
    fn the_report_pairs_by_pair_and_tests_the_log_ratio() {
        let mut runs = Vec::new();
        for pair in 1..=8 {
            runs.push(record("s", pair, "raw", 10_000 + pair as u64 * 100, true));
            runs.push(record(
                "s",
                pair,
                "lens",
                2_000 + pair as u64 * 7,
                pair != 3,
            ));
        }
        runs.push({
            let mut r = record("s", 9, "raw", 5, false);
            r.excluded = Some("never started: zero tokens".into());
            r
        });
        let sweep = SessionSweep {
            command: "c".into(),
            git_revision: "r".into(),
            date: "d".into(),
            machine: env::machine(),
            tools: BTreeMap::new(),
            seed: 1,
            driver: "scripted".into(),
            simulation: true,
            model: Model::Real,
            cost_model: None,
            pairs: 8,
            sessions: [("s".to_string(), vec!["ls".to_string()])].into(),
            runs,
            complete: true,
        };
        // Resuming keeps the runs only for a sweep measured the same way.
        let kept = resumable(sweep.clone(), &sweep).unwrap();
        assert_eq!(kept.len(), sweep.runs.len());
        let mut other = sweep.clone();
        other.model = Model::Scripted;
        let e = resumable(sweep.clone(), &other).unwrap_err().to_string();
        assert!(
            e.contains("another model (--model real there, --model scripted here)"),
            "{e}"
        );
        let mut other = sweep.clone();
        other.tools.insert("claude".into(), "2.1.328".into());
        let e = resumable(sweep.clone(), &other).unwrap_err().to_string();
        assert!(
            e.contains("another claude version (none there, 2.1.328 here)"),
            "{e}"
        );
        let mut other = sweep.clone();
        other.sessions.insert("t".into(), vec!["ls".into()]);
        assert!(resumable(sweep.clone(), &other).is_err());
        let rows = report(&sweep);
        let r = &rows[0];
        assert_eq!((r.pairs, r.excluded), (8, 1));
        assert_eq!(r.p, Some(stats::p_floor(8)), "every pair went the same way");
        assert!(r.ratio.unwrap() < 0.25 && r.ratio.unwrap() > 0.15);
        let (lo, hi) = r.interval.unwrap();
        assert!(lo <= r.ratio.unwrap() && r.ratio.unwrap() <= hi);
        assert_eq!(r.success, (Some(1.0), Some(7.0 / 8.0)));
        let md = markdown(&sweep);
        assert!(md.starts_with("SIMULATION"));
        assert!(md.contains("| s | 8 (+1 runs excluded) |"), "{md}");
        assert!(md.contains("| s | lens | 10 | 20 |"), "{md}");
    }
}
