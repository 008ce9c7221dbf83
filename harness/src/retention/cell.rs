//! One cell, wherever it runs: its setup, the agent's side, the verifier on a
//! copy of what the agent left, and the record of it; the verdict on whether it
//! counts; running a plan's cells, some at a time. The pieces of a cell's setup
//! (its PATH, the task's setup, the verified copy) serve the session benchmark
//! too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::broker::{placeholder_for, Broker, Config as BrokerConfig};
use crate::driver::{Act, Driver, Model, Outcome, Tokens};
use crate::isolation::vm::{Forward, Job};
use crate::isolation::{Isolation, VmHost};
use crate::tasks::Task;

use super::plan::{variant_command, Cell};

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

/// The PATH a cell's commands see: `dirs` (where `lens`, and `rtk` for its
/// variant, are) ahead of the harness's own PATH.
pub fn tool_path(dirs: &[&Path]) -> OsString {
    let mut path = OsString::new();
    for d in dirs {
        path.push(d);
        path.push(":");
    }
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

/// Runs the task's `setup` in `dir` with `path` as PATH; an error names the
/// task and carries what setup printed on stderr.
pub fn set_up(task: &Task, dir: &Path, path: &std::ffi::OsStr) -> Result<()> {
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
    Ok(())
}

/// Copies what the agent left in `dir` to `copy`, where the verifier will run:
/// nothing of the verifier is ever in the agent's directory. Returns `copy`.
pub fn verified_copy(dir: &Path, copy: &Path) -> Result<PathBuf> {
    copy_dir(dir, copy)?;
    Ok(copy.to_path_buf())
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
    set_up(task, dir, path)?;
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
            let mut dirs = vec![tools.lens_dir.as_path()];
            dirs.extend(tools.rtk_dir.as_deref());
            let path = tool_path(&dirs);
            let guest = agent_side(cell.task, &cell.variant, driver, model, None, &dir, &path)?;
            (
                guest,
                verified_copy(&dir, &root.join(format!("{name}.verify")))?,
            )
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
