//! The retention benchmark: for every (task, variant, repeat) a cell starts from a
//! clean directory, an agent works the task with the command run through the
//! variant, and the task's verifier, on the host, says whether the work was done.
//!
//! Only infrastructure failures are excluded from the counts: a cell that never
//! started (zero tokens, or the agent exited without reporting any: the API was
//! unreachable), a microVM that did not boot, an error of the harness itself. Each
//! is reported with its reason, and none is the filter losing. A cell the time
//! limit cut off is counted, as a failure: an agent that flails until the limit has
//! lost. The knee is the first level, going down from level 2, where the success
//! rate falls below raw's; with no raw cell counted there is no knee to find, and
//! the report says so.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::broker::{placeholder_for, Broker, Config as BrokerConfig};
use crate::driver::{Act, Driver, Model, Outcome, Tokens};
use crate::env;
use crate::isolation::vm::{Forward, Job};
use crate::isolation::{Isolation, VmHost, VmRecord};
use crate::stats;
use crate::tasks::Task;

/// The variants, in report order: raw first, then the levels going down, rtk,
/// and `hook`: Lens as a user installs it (`lens init --agent … --global` into
/// the agent's HOME), the prompt naming the plain command.
pub const VARIANTS: [&str; 6] = ["raw", "level2", "level1", "level0", "rtk", "hook"];

/// The command line a variant runs.
pub fn variant_command(variant: &str, command: &str) -> String {
    match variant {
        "raw" | "hook" => command.to_string(),
        "rtk" => format!("rtk {command}"),
        v => format!("lens --level {} {command}", v.trim_start_matches("level")),
    }
}

/// One cell of the plan.
#[derive(Debug, Clone)]
pub struct Cell<'a> {
    /// The task.
    pub task: &'a Task,
    /// The variant.
    pub variant: String,
    /// 1-based repeat.
    pub repeat: usize,
}

/// Every cell, task by task; the rtk variant only where rtk claims the command.
pub fn plan<'a>(tasks: &'a [Task], variants: &[String], repeats: usize) -> Vec<Cell<'a>> {
    let mut cells = Vec::new();
    for task in tasks {
        for v in variants {
            if v == "rtk" && !task.rtk {
                continue;
            }
            for repeat in 1..=repeats {
                cells.push(Cell {
                    task,
                    variant: v.clone(),
                    repeat,
                });
            }
        }
    }
    cells
}

/// One cell's record.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct CellResult {
    /// Task name.
    pub task: String,
    /// Variant.
    pub variant: String,
    /// Repeat, from 1.
    pub repeat: usize,
    /// Tokens as the agent reported them.
    pub tokens: Option<Tokens>,
    /// Their total.
    pub tokens_total: Option<u64>,
    /// Tool calls.
    pub tool_calls: u64,
    /// Turns.
    pub turns: u64,
    /// Bytes the agent read from the command (and its recoveries).
    pub bytes_read: u64,
    /// `lens show` calls the agent made.
    #[serde(default)]
    pub fetches: u64,
    /// Runs of the task's command after the first.
    #[serde(default)]
    pub reruns: u64,
    /// The verifier's verdict.
    pub success: bool,
    /// Why the cell is not counted, when it is not.
    pub excluded: Option<String>,
    /// Wall time of the agent, seconds (a simulation's is not an agent's; under
    /// TCG emulation not a native time either).
    pub duration_s: f64,
    /// The microVM boot, for cells that ran in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<CellVm>,
    /// True when the time limit ended the agent: counted, as a failure.
    #[serde(default)]
    pub cut_off: bool,
    /// The harness's own error, when the cell could not be run (then excluded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The agent CLI's version and model, as it reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<crate::driver::Agent>,
    /// The end of what the agent wrote to stderr.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent_stderr: String,
    /// Shell results that were Lens views.
    #[serde(default)]
    pub views: u64,
    /// Bytes the shell commands printed (where the agent CLI cut a result, the
    /// size it saved or stated), beside `bytes_read`, what the model received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed_bytes: Option<u64>,
    /// Results the agent CLI cut before the model read them.
    #[serde(default)]
    pub agent_cuts: u64,
    /// The shell commands the agent ran, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
}

impl CellResult {
    /// A cell with nothing recorded yet.
    pub fn empty(task: &str, variant: &str, repeat: usize) -> CellResult {
        CellResult {
            task: task.into(),
            variant: variant.into(),
            repeat,
            tokens: None,
            tokens_total: None,
            tool_calls: 0,
            turns: 0,
            bytes_read: 0,
            fetches: 0,
            reruns: 0,
            success: false,
            excluded: None,
            duration_s: 0.0,
            vm: None,
            cut_off: false,
            error: None,
            agent: None,
            agent_stderr: String::new(),
            views: 0,
            printed_bytes: None,
            agent_cuts: 0,
            commands: Vec::new(),
        }
    }

    /// The record of a cell the harness could not run: excluded, with the error.
    pub fn failed(cell: &Cell, error: &anyhow::Error) -> CellResult {
        let mut r = CellResult::empty(&cell.task.name, &cell.variant, cell.repeat);
        let e = format!("{error:#}");
        r.excluded = Some(format!("harness error: {e}"));
        r.error = Some(e);
        r
    }

    /// The cell's key in a plan: `task/variant/repeat`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.task, self.variant, self.repeat)
    }
}

/// How a finished session counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Counted; the verifier decides.
    Counted,
    /// Counted as a failure: the time limit ended the agent.
    CutOff,
    /// Not counted: an infrastructure failure, with its reason.
    Excluded(String),
}

/// How a session that ended with `agent_exit` and `tokens` counts. Zero tokens, or
/// a non-zero exit with no tokens reported, is a session that never reached the
/// model (not installed, no credit, API unreachable): excluded. The time limit is
/// the agent's loss. Any other exit leaves the verdict to the verifier.
pub fn verdict(tokens: Option<Tokens>, agent_exit: i32) -> Verdict {
    if agent_exit == 124 {
        return Verdict::CutOff;
    }
    match tokens {
        Some(t) if t.total() == 0 => Verdict::Excluded("never started: zero tokens".into()),
        None if agent_exit != 0 => Verdict::Excluded(format!(
            "never started: the agent exited {agent_exit} without reporting tokens"
        )),
        _ => Verdict::Counted,
    }
}

/// Everything a sweep recorded.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Sweep {
    /// The command that produced it.
    pub command: String,
    /// Revision.
    pub git_revision: String,
    /// When.
    pub date: String,
    /// Where.
    pub machine: env::Machine,
    /// Tool versions.
    pub tools: BTreeMap<String, String>,
    /// Seed for everything random in the report's statistics.
    pub seed: u64,
    /// Driver.
    pub driver: String,
    /// True when the agent is the scripted simulation.
    pub simulation: bool,
    /// The model behind a real driver: `real`, or `scripted` (the model server
    /// on 127.0.0.1).
    #[serde(default)]
    pub model: Model,
    /// `dir` or `vm`.
    pub isolation: String,
    /// The scripted agent's cost model, when simulated.
    pub cost_model: Option<String>,
    /// The microVM (accelerator, image manifest), when cells ran in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmRecord>,
    /// The plan this sweep ran (or, for a shard, its part of one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<SweepPlan>,
    /// Every cell.
    pub cells: Vec<CellResult>,
    /// False while the sweep is still running (or was interrupted): results are
    /// written after every cell.
    #[serde(default = "yes")]
    pub complete: bool,
}

fn yes() -> bool {
    true
}

/// The part of a plan a sweep ran.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SweepPlan {
    /// The plan's hash.
    pub hash: String,
    /// The shard this sweep ran, from 0.
    pub shard: usize,
    /// How many shards the plan has.
    pub shards: usize,
    /// The keys (`task/variant/repeat`) of the cells it was given, in order.
    pub cells: Vec<String>,
    /// The keys of every cell of the plan, in the plan's order (the same in
    /// every shard), which a merge restores.
    #[serde(default)]
    pub order: Vec<String>,
}

/// Where a sweep's binaries are.
pub struct Tools {
    /// Directory holding `lens`.
    pub lens_dir: PathBuf,
    /// Directory holding `rtk`, if installed.
    pub rtk_dir: Option<PathBuf>,
    /// The `harness` binary, which a microVM cell carries in to act as the agent's
    /// side (`harness guest-cell`).
    pub harness: PathBuf,
}

/// Where cells run.
#[derive(Clone, Copy)]
pub enum Place<'a> {
    /// A fresh directory on this machine.
    Dir,
    /// One microVM per cell, from the verified image.
    Vm(&'a VmHost),
}

/// A microVM cell's boot, for the record.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct CellVm {
    /// Wall time of the boot, seconds (emulated under TCG: see the sweep's `vm`).
    pub wall_s: f64,
    /// The guest job's exit code.
    pub guest_exit: Option<i32>,
    /// The end of the guest's serial console.
    pub serial_tail: String,
    /// Requests the credential broker forwarded, and refused, for a real agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker: Option<(usize, usize)>,
}

/// A guest's outcome of a real CLI against the scripted model on the host:
/// what the model server counted (tokens, calls, turns, what the model read)
/// in place of the guest's empty counts, with the guest's exit, stderr and
/// agent version kept.
fn with_server_counts(
    guest: Outcome,
    requests: Vec<crate::model_server::Exchange>,
    cli: crate::agent_cli::AgentCli,
) -> Outcome {
    let run = crate::agent_cli::RunOutcome {
        exit: guest.exit,
        timed_out: false,
        stdout: String::new(),
        stderr: guest.stderr.clone(),
        requests,
        wall: Duration::ZERO,
    };
    let mut counted = Outcome::from_run(&run, cli);
    counted.agent = guest.agent;
    counted.stderr = guest.stderr;
    counted
}

/// What the agent's side of a cell writes, inside a microVM, for the host.
#[derive(Serialize, Deserialize, Debug)]
pub struct GuestOutcome {
    /// The session.
    pub outcome: Outcome,
    /// Its wall time, seconds.
    pub duration_s: f64,
}

/// The agent's side of a cell, wherever it runs: the task's setup in `dir`, then
/// the agent with the variant's command.
pub fn agent_side(
    task: &Task,
    variant: &str,
    driver: Driver,
    model: Model,
    vm: Option<&crate::driver::InVm>,
    dir: &Path,
    path: &std::ffi::OsStr,
) -> Result<GuestOutcome> {
    let setup = Command::new(task.dir.join("setup"))
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()?;
    anyhow::ensure!(
        setup.status.success(),
        "setup of {} failed: {}",
        task.name,
        String::from_utf8_lossy(&setup.stderr)
    );
    let command = variant_command(variant, &task.command);
    let prompt = task.prompt.replace("{command}", &command);
    // The agent's HOME, beside the cell (the hook variant installs Lens there).
    let home = dir.with_extension("home");
    let _ = std::fs::remove_dir_all(&home);
    let how = Act {
        model,
        hook: variant == "hook",
        home: &home,
        vm,
    };
    let started = Instant::now();
    let outcome = driver.act_with(&how, task, &prompt, &command, dir, path)?;
    let duration_s = (started.elapsed().as_secs_f64() * 100.0).round() / 100.0;
    Ok(GuestOutcome {
        outcome,
        duration_s,
    })
}

/// Runs one cell: setup, the agent, then the verifier, on the host, against a copy
/// of the cell's directory.
pub fn run_cell(
    cell: &Cell,
    driver: Driver,
    model: Model,
    place: Place,
    root: &Path,
    tools: &Tools,
) -> Result<CellResult> {
    let name = format!("{}-{}-{}", cell.task.name, cell.variant, cell.repeat);
    let mut record = CellResult::empty(&cell.task.name, &cell.variant, cell.repeat);
    let (guest, work) = match place {
        Place::Dir => {
            let dir = Isolation::Dir.cell_dir(root, &name)?;
            let mut path = OsString::from(&tools.lens_dir);
            if let Some(r) = &tools.rtk_dir {
                path.push(":");
                path.push(r);
            }
            path.push(":");
            path.push(std::env::var_os("PATH").unwrap_or_default());
            let guest = agent_side(cell.task, &cell.variant, driver, model, None, &dir, &path)?;
            // The verifier runs against a copy: nothing of it is in the cell.
            let copy = root.join(format!("{name}.verify"));
            copy_dir(&dir, &copy)?;
            (guest, copy)
        }
        Place::Vm(host) => {
            match vm_cell(cell, driver, model, host, root, &name, tools, &mut record)? {
                Some(x) => x,
                None => return Ok(record),
            }
        }
    };
    let passed = verify(cell.task, &work)?;
    let o = guest.outcome;
    let verdict = match verdict(o.tokens, o.exit) {
        Verdict::Excluded(why) => Err(why),
        v => Ok(v == Verdict::CutOff),
    };
    record.cut_off = verdict == Ok(true);
    record.excluded = verdict.err();
    record.agent = o.agent.clone();
    record.agent_stderr = o.stderr.clone();
    record.tokens = o.tokens;
    record.tokens_total = o.tokens.map(|t| t.total());
    record.tool_calls = o.tool_calls;
    record.turns = o.turns;
    record.bytes_read = o.bytes_read;
    record.views = o.views;
    record.printed_bytes = o.printed_bytes;
    record.agent_cuts = o.agent_cuts;
    record.commands = o.commands.clone();
    let rec = crate::driver::recovery(&o.commands, &cell.task.command);
    record.fetches = rec.fetches;
    record.reruns = rec.reruns;
    // A cell the time limit ended has lost, whatever it left behind.
    record.success = passed && !record.cut_off;
    record.duration_s = guest.duration_s;
    Ok(record)
}

/// A cell in its own microVM: the task (without its verifier) and this harness go
/// in on the job disk, the agent's side runs in the guest, and the guest's working
/// directory and outcome come back. `None` when the cell did not finish, with the
/// reason in `record.excluded`.
#[allow(clippy::too_many_arguments)]
fn vm_cell(
    cell: &Cell,
    driver: Driver,
    model: Model,
    host: &VmHost,
    root: &Path,
    name: &str,
    tools: &Tools,
    record: &mut CellResult,
) -> Result<Option<(GuestOutcome, PathBuf)>> {
    let staged = root.join(format!("{name}.job"));
    let _ = std::fs::remove_dir_all(&staged);
    let task_in = staged.join("tasks").join(&cell.task.name);
    std::fs::create_dir_all(&task_in)?;
    std::fs::create_dir_all(staged.join("bin"))?;
    std::fs::copy(&tools.harness, staged.join("bin/harness"))
        .with_context(|| format!("cannot copy {} into the job", tools.harness.display()))?;
    for e in std::fs::read_dir(&cell.task.dir)? {
        let e = e?;
        if e.file_name() == "verify" {
            continue; // nothing the verifier knows goes into the guest
        }
        let to = task_in.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &to)?;
        } else {
            std::fs::copy(e.path(), to)?;
        }
    }
    // A real agent reaches its API only through the broker, holding a placeholder.
    // With the scripted model the API is the project's model server on the
    // host's loopback, and the key the broker puts in is one made for the cell:
    // the same route, so the cell proves what a real model's cell relies on.
    let mut exports = String::new();
    let mut guest_args = String::new();
    let mut scripted = None;
    let broker = match (model, driver.broker_route(), driver.key_var()) {
        (Model::Scripted, _, _) => {
            let cli = driver.cli().with_context(|| {
                format!("the {} agent's model cannot be scripted; use --model real", driver.name())
            })?;
            // The agent applies the task's fix where the guest has it.
            let mut in_guest = cell.task.clone();
            in_guest.dir = PathBuf::from(format!("/job/tasks/{}", cell.task.name));
            let server = crate::model_server::Server::start(crate::driver::scripted_model::script(&in_guest))
                .context("cannot start the model server")?;
            let key = format!("sk-lens-cell-{:016x}", rand::random::<u64>());
            let placeholder = placeholder_for(&key);
            let (header, prefix) = cli.key_header();
            let broker = Broker::start(BrokerConfig {
                upstream: server.url(),
                header: header.into(),
                prefix: prefix.into(),
                key: key.clone(),
                placeholder: placeholder.clone(),
            })?;
            guest_args = format!(" --model-url http://10.0.2.100:80 --model-key {placeholder}");
            scripted = Some((server, cli));
            Some((broker, key))
        }
        (_, _, None) => None,
        (_, None, Some(_)) => bail!(
            "the {} agent's API address cannot be set, so it cannot go through the credential broker; run it with --isolation dir",
            driver.name()
        ),
        (_, Some(route), Some(var)) => {
            let key = std::env::var(var).with_context(|| format!("{var} is not set"))?;
            let placeholder = placeholder_for(&key);
            let upstream = std::env::var("LENS_BROKER_UPSTREAM")
                .unwrap_or_else(|_| route.upstream.to_string());
            exports = format!(
                "export {}={} {var}={placeholder}\n",
                route.base_var, route.base
            );
            Some((
                Broker::start(BrokerConfig {
                    upstream,
                    header: route.header.into(),
                    prefix: route.prefix.into(),
                    key: key.clone(),
                    placeholder,
                })?,
                key,
            ))
        }
    };
    if driver.cli().is_some() {
        // The image's agent CLIs (image/build-rootfs.sh), found by name or by
        // the harness's own lookup.
        exports.push_str(
            "export LENS_AGENTS_BIN=/opt/agents/node_modules/.bin PATH=/opt/agents/node_modules/.bin:$PATH\n",
        );
    }
    std::fs::write(
        staged.join("run.sh"),
        format!(
            "set -u\nexport LENS_STORE=/tmp/lens-store LENS_LOG_DIR=/tmp/lens-log\n{exports}\
             mkdir -p /job/work /job/out\n\
             exec /job/bin/harness guest-cell --task /job/tasks/{task} --variant {variant} \
             --driver {driver} --work /job/work --out /job/out/outcome.json{guest_args}\n",
            task = cell.task.name,
            variant = cell.variant,
            driver = driver.name(),
        ),
    )?;
    let job = Job {
        staged: staged.clone(),
        disk_mib: 4096,
        limit: Duration::from_secs(cell.task.time_limit_s + 600),
        // Relayed by the harness binary as the sweep found it at its start:
        // a rebuild during the sweep leaves this process's own link pointing
        // at a deleted file.
        broker: broker.as_ref().map(|(b, _)| Forward {
            port: b.port,
            relay: tools.harness.clone(),
        }),
        readback: vec!["/out".into(), "/work".into()],
        echo: false,
    };
    let boot = host.machine.run(&job, &root.join(format!("{name}.vm")))?;
    let _ = std::fs::remove_dir_all(&staged);
    let mut forwarded = None;
    if let Some((b, key)) = &broker {
        if boot.serial.contains(key.as_str()) {
            bail!("the real API key appeared in the guest's serial log; nothing of this cell is recorded");
        }
        let log = b.log();
        let refused = log.iter().filter(|e| e.refused.is_some()).count();
        forwarded = Some((log.len() - refused, refused));
    }
    drop(broker);
    record.vm = Some(CellVm {
        wall_s: boot.wall_s,
        guest_exit: boot.exit,
        serial_tail: boot.serial_tail(2000),
        broker: forwarded,
    });
    if let Some(why) = boot.not_started() {
        record.excluded = Some(why);
        return Ok(None);
    }
    if boot.timed_out {
        // The limit ended the whole microVM: the agent's loss, not an exclusion.
        record.cut_off = true;
        return Ok(None);
    }
    let outcome = boot
        .returned
        .get("/out")
        .map(|d| d.join("outcome.json"))
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|b| serde_json::from_slice::<GuestOutcome>(&b).ok());
    let (Some(mut outcome), Some(work)) = (outcome, boot.returned.get("/work")) else {
        record.excluded = Some(format!(
            "not run: the guest wrote no outcome (job exit {:?})",
            boot.exit
        ));
        return Ok(None);
    };
    if let Some((server, cli)) = scripted {
        // The tokens, calls and bytes read are the model server's own counts;
        // the guest's run saw no server of its own.
        outcome.outcome = with_server_counts(outcome.outcome, server.requests(), cli);
    }
    Ok(Some((outcome, work.clone())))
}

/// Runs every cell `slots` has no record for, `jobs` at a time, in the plan's
/// order, and returns every cell's record in that order. A cell `run` fails on is
/// recorded as failed (see [`CellResult::failed`]) and the others still run;
/// `after` sees each new record and every record so far, under a lock, as soon as
/// the cell ends, so a sweep can be written out after every cell.
pub fn run_cells<'a>(
    cells: &[Cell<'a>],
    slots: Vec<Option<CellResult>>,
    jobs: usize,
    run: impl Fn(&Cell<'a>) -> Result<CellResult> + Sync,
    after: impl Fn(&Cell<'a>, &CellResult, &[Option<CellResult>]) + Sync,
) -> Vec<Option<CellResult>> {
    assert_eq!(cells.len(), slots.len(), "one slot per cell");
    let todo: Vec<usize> = (0..cells.len()).filter(|&i| slots[i].is_none()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots = std::sync::Mutex::new(slots);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(todo.len().max(1)) {
            scope.spawn(|| loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(&i) = todo.get(n) else { break };
                let c = &cells[i];
                let r = run(c).unwrap_or_else(|e| CellResult::failed(c, &e));
                let mut s = slots.lock().unwrap_or_else(|p| p.into_inner());
                s[i] = Some(r.clone());
                after(c, &r, &s);
            });
        }
    });
    slots.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// The cells of an earlier, interrupted run of the same plan that a resumed sweep
/// keeps, by key: every recorded cell except those the harness itself could not
/// run (they spent nothing, and run again). `now` is the sweep about to run,
/// before any cell. Refuses a sweep of another driver, model, isolation,
/// revision or tool version, or of another plan (its hash covers the cells, the
/// seed, the agent CLI's version and the tasks' definitions), in one line
/// saying which: the cells kept and the cells run must measure the same thing.
pub fn resumable(old: Sweep, now: &Sweep) -> Result<BTreeMap<String, CellResult>> {
    let differ = |what: &str, was: &str, is: &str| -> Result<()> {
        if was != is {
            bail!("it holds a sweep of another {what} ({was} there, {is} here); resume with the same flags and tools, or write elsewhere with --out");
        }
        Ok(())
    };
    let model = |m: Model| {
        if m == Model::Scripted {
            "--model scripted"
        } else {
            "--model real"
        }
    };
    differ("driver", &old.driver, &now.driver)?;
    differ("model", model(old.model), model(now.model))?;
    differ("isolation", &old.isolation, &now.isolation)?;
    differ("revision", &old.git_revision, &now.git_revision)?;
    for tool in old.tools.keys().chain(now.tools.keys()) {
        let version = |s: &Sweep| s.tools.get(tool).cloned().unwrap_or_else(|| "none".into());
        differ(&format!("{tool} version"), &version(&old), &version(now))?;
    }
    let hash = |s: &Sweep| {
        s.plan
            .as_ref()
            .map_or("none".to_string(), |p| p.hash.clone())
    };
    differ("plan", &hash(&old), &hash(now))?;
    Ok(old
        .cells
        .into_iter()
        .filter(|c| c.error.is_none())
        .map(|c| (c.key(), c))
        .collect())
}

/// Runs the task's verifier, on the host, in `work` (a copy of what the agent
/// left), then removes `work`: true when the verifier passes.
pub fn verify(task: &Task, work: &Path) -> Result<bool> {
    let out = Command::new(task.dir.join("verify"))
        .current_dir(work)
        .stdin(Stdio::null())
        .output()?;
    let _ = std::fs::remove_dir_all(work);
    Ok(out.status.success())
}

/// Copies a directory whole (`cp -a`) over whatever `to` held.
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(to);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .context("cp")?
        .success();
    anyhow::ensure!(ok, "could not copy {} for the verifier", from.display());
    Ok(())
}

/// One row of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Task.
    pub task: String,
    /// Variant.
    pub variant: String,
    /// Cells counted.
    pub counted: usize,
    /// Cells excluded.
    pub excluded: usize,
    /// Counted cells the time limit ended (failures).
    pub cut_off: usize,
    /// Median tokens over counted cells.
    pub median_tokens: Option<f64>,
    /// That over raw's.
    pub ratio: Option<f64>,
    /// Share of counted cells the verifier passed.
    pub success: Option<f64>,
    /// Median tool calls.
    pub median_calls: Option<f64>,
    /// Median bytes read.
    pub median_bytes: Option<f64>,
    /// `lens show` calls over the row's cells.
    pub fetches: u64,
    /// Reruns of the task's command over the row's cells.
    pub reruns: u64,
    /// Shell results that were Lens views, over the row's cells.
    pub views: u64,
    /// Median bytes the commands printed (where every cell could tell).
    pub median_printed: Option<f64>,
    /// Results the agent CLI cut, over the row's cells.
    pub agent_cuts: u64,
    /// Pairs with raw: the same repeat, both counted, both with tokens.
    pub pairs: usize,
    /// The smallest p-value that many pairs can give.
    pub p_floor: Option<f64>,
    /// Paired permutation p-value of log token ratios against raw.
    pub p: Option<f64>,
    /// Bootstrap 95% interval of the median paired ratio.
    pub interval: Option<(f64, f64)>,
}

/// A task's knee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Knee {
    /// The first level whose success falls below raw's.
    At(String),
    /// Success never falls below raw's.
    None,
    /// No raw cell was counted, so there is nothing to compare with.
    NoRaw,
}

/// Aggregates a sweep into rows and each task's knee.
pub fn report(s: &Sweep) -> (Vec<Row>, BTreeMap<String, Knee>) {
    // Tasks in the order they first appear (cells are interleaved across tasks).
    let mut tasks: Vec<String> = Vec::new();
    for c in &s.cells {
        if !tasks.contains(&c.task) {
            tasks.push(c.task.clone());
        }
    }
    let counted = |task: &str, v: &str| -> Vec<&CellResult> {
        s.cells
            .iter()
            .filter(|c| c.task == task && c.variant == v && c.excluded.is_none())
            .collect()
    };
    let mut rows = Vec::new();
    let mut knees = BTreeMap::new();
    for task in &tasks {
        let raw = counted(task, "raw");
        let raw_median = median_of(raw.iter().filter_map(|c| c.tokens_total.map(|t| t as f64)));
        let raw_success = success_of(&raw);
        let mut knee = if raw.is_empty() {
            Knee::NoRaw
        } else {
            Knee::None
        };
        for v in VARIANTS {
            let all: Vec<&CellResult> = s
                .cells
                .iter()
                .filter(|c| &c.task == task && c.variant == v)
                .collect();
            if all.is_empty() {
                continue;
            }
            let cells = counted(task, v);
            let med = median_of(
                cells
                    .iter()
                    .filter_map(|c| c.tokens_total.map(|t| t as f64)),
            );
            let success = success_of(&cells);
            // Pairs: the same repeat of raw and this variant, both counted.
            let pairs: Vec<(f64, f64)> = cells
                .iter()
                .filter_map(|c| {
                    let r = raw.iter().find(|r| r.repeat == c.repeat)?;
                    Some((r.tokens_total? as f64, c.tokens_total? as f64))
                })
                .filter(|(r, x)| *r > 0.0 && *x > 0.0)
                .collect();
            let (p, interval) = if v != "raw" && !pairs.is_empty() {
                let logs: Vec<f64> = pairs.iter().map(|(r, x)| (x / r).ln()).collect();
                let ratios: Vec<f64> = pairs.iter().map(|(r, x)| x / r).collect();
                (
                    Some(stats::permutation_p(&logs, s.seed)),
                    Some(stats::bootstrap_median(
                        &ratios,
                        0.95,
                        stats::BOOTSTRAP_RESAMPLES,
                        s.seed,
                    )),
                )
            } else {
                (None, None)
            };
            if v.starts_with("level") && knee == Knee::None {
                if let (Some(x), Some(r)) = (success, raw_success) {
                    if x < r {
                        knee = Knee::At(v.to_string());
                    }
                }
            }
            rows.push(Row {
                task: task.clone(),
                variant: v.to_string(),
                counted: cells.len(),
                excluded: all.len() - cells.len(),
                cut_off: cells.iter().filter(|c| c.cut_off).count(),
                median_tokens: med,
                ratio: med.zip(raw_median).map(|(m, r)| m / r),
                success,
                median_calls: median_of(cells.iter().map(|c| c.tool_calls as f64)),
                median_bytes: median_of(cells.iter().map(|c| c.bytes_read as f64)),
                fetches: cells.iter().map(|c| c.fetches).sum(),
                reruns: cells.iter().map(|c| c.reruns).sum(),
                views: cells.iter().map(|c| c.views).sum(),
                median_printed: if cells.iter().all(|c| c.printed_bytes.is_some()) {
                    median_of(
                        cells
                            .iter()
                            .filter_map(|c| c.printed_bytes.map(|b| b as f64)),
                    )
                } else {
                    None
                },
                agent_cuts: cells.iter().map(|c| c.agent_cuts).sum(),
                pairs: if v == "raw" { 0 } else { pairs.len() },
                p_floor: (v != "raw" && !pairs.is_empty()).then(|| stats::p_floor(pairs.len())),
                p,
                interval,
            });
        }
        knees.insert(task.clone(), knee);
    }
    (rows, knees)
}

fn median_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| stats::median(&v))
}

fn success_of(cells: &[&CellResult]) -> Option<f64> {
    (!cells.is_empty())
        .then(|| cells.iter().filter(|c| c.success).count() as f64 / cells.len() as f64)
}

/// The report as markdown.
pub fn markdown(s: &Sweep) -> String {
    let (rows, knees) = report(s);
    let mut out = String::new();
    if s.simulation {
        out.push_str(&format!(
            "SIMULATION: driver `{}` is the scripted agent; tokens follow its stated cost model, not a model's.\n\n",
            s.driver
        ));
    } else {
        let agent = s.cells.iter().find_map(|c| c.agent.as_ref());
        let version = agent
            .and_then(|a| a.version.clone())
            .or_else(|| s.tools.get(&s.driver).cloned())
            .unwrap_or_else(|| "version unknown".into());
        let model = agent
            .and_then(|a| a.model.clone())
            .unwrap_or_else(|| "model unknown".into());
        out.push_str(&format!(
            "Driver `{}`: the real {} CLI ({version}), model {model}{}.\n\n",
            s.driver,
            s.driver,
            if s.model == Model::Scripted {
                " (scripted: the harness's model server on 127.0.0.1 played a deterministic agent; tokens are the server's own counts, bytes/4)"
            } else {
                ""
            }
        ));
    }
    if let Some(vm) = &s.vm {
        out.push_str(&format!(
            "Cells ran in microVMs ({}, {} MiB, {} CPUs) from the image built {}{}.\n\n",
            match vm.accel {
                crate::isolation::vm::Accel::Kvm => "KVM",
                crate::isolation::vm::Accel::Tcg => "TCG software emulation",
            },
            vm.memory_mib,
            vm.cpus,
            vm.image.built_at,
            if vm.timings_emulated {
                "; wall-clock times in the record are emulated, not native"
            } else {
                ""
            }
        ));
    }
    if !s.complete {
        out.push_str(&format!(
            "PARTIAL: {} cells recorded so far; the sweep did not finish (resume it with --resume).\n\n",
            s.cells.len()
        ));
    }
    out.push_str("| task | variant | cells | median tokens | vs raw | success | tool calls | bytes read | fetches | reruns | pairs | p (perm.) | p floor | median ratio 95% CI | views | bytes printed | agent cuts |\n");
    out.push_str(
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n",
    );
    let f = |x: Option<f64>, d: usize| x.map_or("–".to_string(), |v| format!("{v:.d$}"));
    for r in &rows {
        let mut cells = r.counted.to_string();
        if r.cut_off > 0 {
            cells.push_str(&format!(" ({} cut off)", r.cut_off));
        }
        if r.excluded > 0 {
            cells.push_str(&format!(" (+{} excluded)", r.excluded));
        }
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.task,
            r.variant,
            cells,
            f(r.median_tokens, 0),
            f(r.ratio, 2),
            r.success
                .map_or("–".into(), |s| format!("{:.0}%", s * 100.0)),
            f(r.median_calls, 0),
            f(r.median_bytes, 0),
            r.fetches,
            r.reruns,
            if r.variant == "raw" {
                "–".to_string()
            } else {
                r.pairs.to_string()
            },
            f(r.p, 3),
            f(r.p_floor, 3),
            r.interval
                .map_or("–".into(), |(a, b)| format!("{a:.2}–{b:.2}")),
            r.views,
            f(r.median_printed, 0),
            r.agent_cuts,
        ));
    }
    out.push('\n');
    for (task, knee) in &knees {
        out.push_str(&format!(
            "knee of {task}: {}\n",
            match knee {
                Knee::At(k) => format!("{k} (first level whose success falls below raw's)"),
                Knee::None => "none (success never falls below raw's)".to_string(),
                Knee::NoRaw => "unknown: every raw cell of this task was excluded, so there is nothing to compare with".to_string(),
            }
        ));
    }
    let excluded: Vec<String> = s
        .cells
        .iter()
        .filter_map(|c| {
            c.excluded
                .as_ref()
                .map(|e| format!("{}/{}/{}: {e}", c.task, c.variant, c.repeat))
        })
        .collect();
    if !excluded.is_empty() {
        out.push_str(&format!(
            "\nexcluded cells (infrastructure, not counted as losses): {}\n",
            excluded.join("; ")
        ));
    }
    out.push_str(
        "\npairs: the same repeat of raw and the variant, both counted; p floor: the smallest two-sided p a permutation test on that many pairs can give (2/2^n). Cells the time limit cut off count as failures. bytes read: what the model received; bytes printed: what the commands printed, where the agent CLI cut a result counted at the size it saved or stated (agent cuts: how many it cut), so a raw row whose two differ was already cut by the agent.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(
        task: &str,
        variant: &str,
        repeat: usize,
        tokens: u64,
        success: bool,
        excluded: Option<&str>,
    ) -> CellResult {
        let mut c = CellResult::empty(task, variant, repeat);
        c.tokens = Some(Tokens {
            input: tokens,
            ..Tokens::default()
        });
        c.tokens_total = Some(tokens);
        c.tool_calls = 3;
        c.turns = 4;
        c.bytes_read = 100;
        c.success = success;
        c.excluded = excluded.map(String::from);
        c.duration_s = 1.0;
        c
    }

    fn sweep(cells: Vec<CellResult>) -> Sweep {
        Sweep {
            command: "harness run".into(),
            git_revision: "r".into(),
            date: "d".into(),
            machine: env::machine(),
            tools: BTreeMap::new(),
            seed: 1,
            driver: "scripted".into(),
            simulation: true,
            model: Model::Real,
            isolation: "dir".into(),
            cost_model: None,
            vm: None,
            plan: None,
            cells,
            complete: true,
        }
    }

    #[test]
    fn only_infrastructure_failures_are_excluded() {
        let t = |n| {
            Some(Tokens {
                input: n,
                ..Tokens::default()
            })
        };
        assert_eq!(
            verdict(t(0), 0),
            Verdict::Excluded("never started: zero tokens".into())
        );
        // The API was never reached: no tokens and a failed exit.
        assert!(matches!(verdict(None, 1), Verdict::Excluded(w) if w.contains("exited 1")));
        // An agent that spent tokens and then failed has failed, not been excluded.
        assert_eq!(verdict(t(13_493), 1), Verdict::Counted);
        // The time limit is a loss, counted.
        assert_eq!(verdict(t(10), 124), Verdict::CutOff);
        assert_eq!(verdict(None, 124), Verdict::CutOff);
        assert_eq!(verdict(t(10), 0), Verdict::Counted);
        // Unknown tokens (a CLI that does not report them) are not "zero".
        assert_eq!(verdict(None, 0), Verdict::Counted);
    }

    #[test]
    fn cut_off_cells_count_as_failures_and_pairs_are_per_row() {
        let mut cut = cell("t", "level2", 2, 9_000, false, None);
        cut.cut_off = true;
        let s = sweep(vec![
            cell("t", "raw", 1, 1000, true, None),
            cell("t", "raw", 2, 1100, true, None),
            cell("t", "raw", 3, 1200, true, None),
            cell("t", "level2", 1, 500, true, None),
            cut,
            cell("t", "level2", 3, 600, true, None),
            cell("t", "level1", 1, 700, true, None),
            cell(
                "t",
                "level1",
                2,
                800,
                true,
                Some("never started: zero tokens"),
            ),
            cell(
                "t",
                "level1",
                3,
                800,
                true,
                Some("never started: zero tokens"),
            ),
        ]);
        let (rows, knees) = report(&s);
        let l2 = rows.iter().find(|r| r.variant == "level2").unwrap();
        assert_eq!((l2.counted, l2.cut_off, l2.excluded), (3, 1, 0));
        assert_eq!(l2.success, Some(2.0 / 3.0));
        assert_eq!((l2.pairs, l2.p_floor), (3, Some(0.25)));
        let l1 = rows.iter().find(|r| r.variant == "level1").unwrap();
        assert_eq!((l1.pairs, l1.p_floor), (1, Some(1.0)));
        assert_eq!(knees["t"], Knee::At("level2".into()));
        let md = markdown(&s);
        assert!(md.contains("| t | level2 | 3 (1 cut off) |"), "{md}");
        assert!(
            md.contains("| 3 | 0.250 | 0.250 |") || md.contains("| 3 |"),
            "{md}"
        );
    }

    #[test]
    fn a_task_whose_raw_cells_were_all_excluded_has_no_knee_and_says_so() {
        let s = sweep(vec![
            cell("t", "raw", 1, 0, false, Some("never started: zero tokens")),
            cell("t", "level2", 1, 500, true, None),
        ]);
        let (_, knees) = report(&s);
        assert_eq!(knees["t"], Knee::NoRaw);
        let md = markdown(&s);
        assert!(md.contains("knee of t: unknown: every raw cell"), "{md}");
        assert!(!md.contains("knee of t: none"));
    }

    fn tasks_named(names: &[&str]) -> Vec<Task> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        crate::tasks::load_all(
            &root,
            &names.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
        .unwrap()
    }

    #[test]
    fn a_failing_cell_is_recorded_and_the_sweep_goes_on_writing_after_every_cell() {
        let tasks = tasks_named(&["last-line-trap"]);
        let cells = plan(&tasks, &["raw".into(), "level2".into()], 3);
        let writes = std::sync::Mutex::new(Vec::new());
        let slots = run_cells(
            &cells,
            vec![None; cells.len()],
            2,
            |c| {
                if c.variant == "level2" && c.repeat == 2 {
                    anyhow::bail!("setup of {} failed: disk full", c.task.name);
                }
                let mut r = CellResult::empty(&c.task.name, &c.variant, c.repeat);
                r.success = true;
                Ok(r)
            },
            |_, _, so_far| writes.lock().unwrap().push(so_far.iter().flatten().count()),
        );
        assert!(slots.iter().all(Option::is_some), "every cell has a record");
        let failed: Vec<&CellResult> = slots
            .iter()
            .flatten()
            .filter(|c| c.error.is_some())
            .collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].key(), "last-line-trap/level2/2");
        assert!(failed[0].excluded.as_deref().unwrap().contains("disk full"));
        // One write per cell, each holding one more record than the last.
        let mut w = writes.into_inner().unwrap();
        w.sort();
        assert_eq!(w, (1..=cells.len()).collect::<Vec<_>>());
    }

    #[test]
    fn resuming_keeps_recorded_cells_and_reruns_only_the_rest() {
        let tasks = tasks_named(&["last-line-trap"]);
        let cells = plan(&tasks, &["raw".into(), "level2".into()], 2);
        let mut s = sweep(vec![
            cell("last-line-trap", "raw", 1, 900, true, None),
            CellResult::failed(&cells[1], &anyhow::anyhow!("boom")),
        ]);
        s.plan = Some(SweepPlan {
            hash: "h".into(),
            shard: 0,
            shards: 1,
            cells: Vec::new(),
            order: Vec::new(),
        });
        s.tools.insert("claude".into(), "2.1.328 (pinned)".into());
        // What differs is named; the cells kept must measure what the rest will.
        let refused = |now: &Sweep| resumable(s.clone(), now).unwrap_err().to_string();
        let mut other = s.clone();
        other.plan.as_mut().unwrap().hash = "other".into();
        assert!(refused(&other).contains("another plan (h there, other here)"));
        let mut other = s.clone();
        other.driver = "claude".into();
        assert!(refused(&other).contains("another driver"));
        let mut other = s.clone();
        other.model = Model::Scripted;
        assert!(
            refused(&other).contains("another model (--model real there, --model scripted here)"),
            "{}",
            refused(&other)
        );
        let mut other = s.clone();
        other
            .tools
            .insert("claude".into(), "2.1.329 (pinned)".into());
        assert!(refused(&other).contains("another claude version"));
        let mut other = s.clone();
        other.tools.clear();
        assert!(refused(&other).contains("(2.1.328 (pinned) there, none here)"));
        let mut other = s.clone();
        other.git_revision = "r2".into();
        assert!(refused(&other).contains("another revision"));
        let mut other = s.clone();
        other.isolation = "vm".into();
        assert!(refused(&other).contains("another isolation"));
        let mut kept = resumable(s.clone(), &s).unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["last-line-trap/raw/1"]);
        let recorded: Vec<Option<CellResult>> = cells
            .iter()
            .map(|c| kept.remove(&format!("{}/{}/{}", c.task.name, c.variant, c.repeat)))
            .collect();
        let ran = std::sync::Mutex::new(Vec::new());
        let slots = run_cells(
            &cells,
            recorded,
            1,
            |c| {
                ran.lock()
                    .unwrap()
                    .push(format!("{}/{}", c.variant, c.repeat));
                Ok(CellResult::empty(&c.task.name, &c.variant, c.repeat))
            },
            |_, _, _| {},
        );
        let mut ran = ran.into_inner().unwrap();
        ran.sort();
        assert_eq!(ran, ["level2/1", "level2/2", "raw/2"]);
        // The kept cell's record is the one from before, not a rerun.
        let first = slots
            .iter()
            .flatten()
            .find(|c| c.key() == "last-line-trap/raw/1")
            .unwrap();
        assert_eq!(first.tokens_total, Some(900));
    }

    #[test]
    fn interleaved_cells_give_one_row_per_task_and_variant() {
        let s = sweep(vec![
            cell("a", "raw", 1, 10, true, None),
            cell("b", "raw", 1, 10, true, None),
            cell("a", "level2", 1, 5, true, None),
            cell("b", "level2", 1, 5, true, None),
            cell("a", "raw", 2, 10, true, None),
        ]);
        let (rows, _) = report(&s);
        let keys: Vec<String> = rows
            .iter()
            .map(|r| format!("{}/{}", r.task, r.variant))
            .collect();
        assert_eq!(keys, ["a/raw", "a/level2", "b/raw", "b/level2"]);
    }

    #[test]
    fn a_partial_sweep_says_so() {
        let mut s = sweep(vec![cell("t", "raw", 1, 10, true, None)]);
        s.complete = false;
        assert!(markdown(&s).contains("PARTIAL: 1 cells recorded"));
    }

    #[test]
    fn excluded_cells_are_not_losses_and_the_knee_is_found() {
        let s = sweep(vec![
            cell("t", "raw", 1, 1000, true, None),
            cell("t", "raw", 2, 1100, true, None),
            cell("t", "level2", 1, 500, true, None),
            cell(
                "t",
                "level2",
                2,
                13_493,
                false,
                Some("cut off: the agent exited 1"),
            ),
            cell("t", "level1", 1, 700, false, None),
            cell("t", "level1", 2, 800, true, None),
            cell("t", "level0", 1, 2000, false, None),
        ]);
        let (rows, knees) = report(&s);
        let l2 = rows.iter().find(|r| r.variant == "level2").unwrap();
        assert_eq!((l2.counted, l2.excluded), (1, 1));
        assert_eq!(l2.success, Some(1.0));
        assert_eq!(l2.median_tokens, Some(500.0));
        assert_eq!(l2.ratio, Some(500.0 / 1050.0));
        assert_eq!(knees["t"], Knee::At("level1".into()));
        let md = markdown(&s);
        assert!(md.starts_with("SIMULATION"));
        assert!(md.contains("knee of t: level1"));
        assert!(md.contains("t/level2/2: cut off: the agent exited 1"));
    }

    #[test]
    fn rtk_cells_only_where_rtk_claims_the_command() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        let tasks = crate::tasks::load_all(&root, &[]).unwrap();
        let variants: Vec<String> = VARIANTS.iter().map(|v| v.to_string()).collect();
        let cells = plan(&tasks, &variants, 3);
        let rtk: Vec<&str> = cells
            .iter()
            .filter(|c| c.variant == "rtk")
            .map(|c| c.task.name.as_str())
            .collect();
        assert_eq!(rtk.len(), 6);
        assert!(rtk
            .iter()
            .all(|t| *t == "cargo-cascade" || *t == "cascading-errors"));
        assert_eq!(cells.len(), 5 * 5 * 3 + 6);
        assert_eq!(variant_command("hook", "make -k"), "make -k");
        assert_eq!(
            variant_command("level0", "make -k"),
            "lens --level 0 make -k"
        );
    }

    #[test]
    fn the_verifier_runs_on_a_copy_and_decides() {
        let root = std::env::temp_dir().join(format!("retention-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let tasks = crate::tasks::load_all(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks"),
            &["last-line-trap".into()],
        )
        .unwrap();
        let lens = Path::new(env!("CARGO_MANIFEST_DIR")).join("../out/.cargo/debug");
        let tools = Tools {
            lens_dir: lens,
            rtk_dir: None,
            harness: PathBuf::new(),
        };
        let cell = Cell {
            task: &tasks[0],
            variant: "raw".into(),
            repeat: 1,
        };
        let r = run_cell(
            &cell,
            Driver::Scripted,
            Model::Real,
            Place::Dir,
            &root,
            &tools,
        )
        .unwrap();
        assert!(r.success, "{r:?}");
        assert_eq!(r.tool_calls, 2);
        assert!(r.bytes_read > 150_000);
        // The same cell with the answer withheld fails verification.
        let dir = root.join("last-line-trap-raw-1");
        std::fs::write(dir.join("answer.txt"), "ACC-00000000\n").unwrap();
        let verdict = Command::new(tasks[0].dir.join("verify"))
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(!verdict.status.success());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
