//! The retention benchmark: for every (task, variant, repeat) a cell starts from a
//! clean directory, an agent works the task with the command run through the
//! variant, and the task's verifier, on the host, says whether the work was done.
//!
//! A cell the agent never finished is excluded, not counted: zero tokens means it
//! never started, a non-zero agent exit means it was cut off. Both are reported with
//! their reason, and neither is the filter losing. The knee is the first level,
//! going down from level 2, where the success rate falls below raw's.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::broker::{placeholder_for, Broker, Config as BrokerConfig};
use crate::driver::{Driver, Outcome, Tokens};
use crate::env;
use crate::isolation::vm::Job;
use crate::isolation::{Isolation, VmHost, VmRecord};
use crate::stats;
use crate::tasks::Task;

/// The variants, in report order: raw first, then the levels going down.
pub const VARIANTS: [&str; 5] = ["raw", "level2", "level1", "level0", "rtk"];

/// The command line a variant runs.
pub fn variant_command(variant: &str, command: &str) -> String {
    match variant {
        "raw" => command.to_string(),
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
}

/// Why a finished session does not count, if it does not.
pub fn exclusion(tokens: Option<Tokens>, agent_exit: i32) -> Option<String> {
    if agent_exit == 124 {
        return Some("cut off: the time limit ended the agent".into());
    }
    if agent_exit != 0 {
        return Some(format!("cut off: the agent exited {agent_exit}"));
    }
    match tokens {
        Some(t) if t.total() == 0 => Some("never started: zero tokens".into()),
        _ => None,
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
    let started = Instant::now();
    let outcome = driver.act(task, &prompt, &command, dir, path)?;
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
    place: Place,
    root: &Path,
    tools: &Tools,
) -> Result<CellResult> {
    let name = format!("{}-{}-{}", cell.task.name, cell.variant, cell.repeat);
    let mut record = CellResult {
        task: cell.task.name.clone(),
        variant: cell.variant.clone(),
        repeat: cell.repeat,
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
    };
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
            let guest = agent_side(cell.task, &cell.variant, driver, &dir, &path)?;
            // The verifier runs against a copy: nothing of it is in the cell.
            let copy = root.join(format!("{name}.verify"));
            copy_dir(&dir, &copy)?;
            (guest, copy)
        }
        Place::Vm(host) => match vm_cell(cell, driver, host, root, &name, tools, &mut record)? {
            Some(x) => x,
            None => return Ok(record),
        },
    };
    let verdict = Command::new(cell.task.dir.join("verify"))
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()?;
    let _ = std::fs::remove_dir_all(&work);
    let o = guest.outcome;
    record.excluded = exclusion(o.tokens, o.exit);
    record.tokens = o.tokens;
    record.tokens_total = o.tokens.map(|t| t.total());
    record.tool_calls = o.tool_calls;
    record.turns = o.turns;
    record.bytes_read = o.bytes_read;
    let rec = crate::driver::recovery(&o.commands, &cell.task.command);
    record.fetches = rec.fetches;
    record.reruns = rec.reruns;
    record.success = verdict.status.success();
    record.duration_s = guest.duration_s;
    Ok(record)
}

/// A cell in its own microVM: the task (without its verifier) and this harness go
/// in on the job disk, the agent's side runs in the guest, and the guest's working
/// directory and outcome come back. `None` when the cell did not finish, with the
/// reason in `record.excluded`.
fn vm_cell(
    cell: &Cell,
    driver: Driver,
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
    let mut exports = String::new();
    let broker = match (driver.broker_route(), driver.key_var()) {
        (_, None) => None,
        (None, Some(_)) => bail!(
            "the {} agent's API address cannot be set, so it cannot go through the credential broker; run it with --isolation dir",
            driver.name()
        ),
        (Some(route), Some(var)) => {
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
    std::fs::write(
        staged.join("run.sh"),
        format!(
            "set -u\nexport LENS_STORE=/tmp/lens-store LENS_LOG_DIR=/tmp/lens-log\n{exports}\
             mkdir -p /job/work /job/out\n\
             exec /job/bin/harness guest-cell --task /job/tasks/{task} --variant {variant} \
             --driver {driver} --work /job/work --out /job/out/outcome.json\n",
            task = cell.task.name,
            variant = cell.variant,
            driver = driver.name(),
        ),
    )?;
    let job = Job {
        staged: staged.clone(),
        disk_mib: 4096,
        limit: Duration::from_secs(cell.task.time_limit_s + 600),
        broker_port: broker.as_ref().map(|(b, _)| b.port),
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
        record.excluded = Some("cut off: the time limit ended the microVM".into());
        return Ok(None);
    }
    let outcome = boot
        .returned
        .get("/out")
        .map(|d| d.join("outcome.json"))
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|b| serde_json::from_slice::<GuestOutcome>(&b).ok());
    let (Some(outcome), Some(work)) = (outcome, boot.returned.get("/work")) else {
        record.excluded = Some(format!(
            "cut off: the guest wrote no outcome (job exit {:?})",
            boot.exit
        ));
        return Ok(None);
    };
    Ok(Some((outcome, work.clone())))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
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
    /// Paired permutation p-value of log token ratios against raw.
    pub p: Option<f64>,
    /// Bootstrap 95% interval of the median paired ratio.
    pub interval: Option<(f64, f64)>,
}

/// Aggregates a sweep into rows and each task's knee.
pub fn report(s: &Sweep) -> (Vec<Row>, BTreeMap<String, Option<String>>) {
    let mut tasks: Vec<String> = s.cells.iter().map(|c| c.task.clone()).collect();
    tasks.dedup();
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
        let mut knee = None;
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
                    Some(stats::bootstrap_median(&ratios, 0.95, 20_000, s.seed)),
                )
            } else {
                (None, None)
            };
            if v.starts_with("level") && knee.is_none() {
                if let (Some(x), Some(r)) = (success, raw_success) {
                    if x < r {
                        knee = Some(v.to_string());
                    }
                }
            }
            rows.push(Row {
                task: task.clone(),
                variant: v.to_string(),
                counted: cells.len(),
                excluded: all.len() - cells.len(),
                median_tokens: med,
                ratio: med.zip(raw_median).map(|(m, r)| m / r),
                success,
                median_calls: median_of(cells.iter().map(|c| c.tool_calls as f64)),
                median_bytes: median_of(cells.iter().map(|c| c.bytes_read as f64)),
                fetches: cells.iter().map(|c| c.fetches).sum(),
                reruns: cells.iter().map(|c| c.reruns).sum(),
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
    out.push_str("| task | variant | cells | median tokens | vs raw | success | tool calls | bytes read | fetches | reruns | p (perm.) | median ratio 95% CI |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    let f = |x: Option<f64>, d: usize| x.map_or("–".to_string(), |v| format!("{v:.d$}"));
    for r in &rows {
        let cells = if r.excluded > 0 {
            format!("{} (+{} excluded)", r.counted, r.excluded)
        } else {
            r.counted.to_string()
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
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
            f(r.p, 3),
            r.interval
                .map_or("–".into(), |(a, b)| format!("{a:.2}–{b:.2}")),
        ));
    }
    out.push('\n');
    for (task, knee) in &knees {
        out.push_str(&format!(
            "knee of {task}: {}\n",
            knee.as_deref().map_or(
                "none (success never falls below raw's)".to_string(),
                |k| format!("{k} (first level whose success falls below raw's)")
            )
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
            "\nexcluded cells (not counted as losses): {}\n",
            excluded.join("; ")
        ));
    }
    let n = s.cells.iter().filter(|c| c.variant == "raw").count() / knees.len().max(1);
    out.push_str(&format!(
        "\nWith {n} pairs per cell the smallest two-sided p a permutation test can give is {:.3}.\n",
        stats::p_floor(n)
    ));
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
        CellResult {
            task: task.into(),
            variant: variant.into(),
            repeat,
            tokens: Some(Tokens {
                input: tokens,
                ..Tokens::default()
            }),
            tokens_total: Some(tokens),
            tool_calls: 3,
            turns: 4,
            bytes_read: 100,
            fetches: 0,
            reruns: 0,
            success,
            excluded: excluded.map(String::from),
            duration_s: 1.0,
            vm: None,
        }
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
            isolation: "dir".into(),
            cost_model: None,
            vm: None,
            plan: None,
            cells,
        }
    }

    #[test]
    fn exclusion_rules() {
        let t = |n| {
            Some(Tokens {
                input: n,
                ..Tokens::default()
            })
        };
        assert_eq!(
            exclusion(t(0), 0).as_deref(),
            Some("never started: zero tokens")
        );
        assert_eq!(
            exclusion(t(13_493), 1).as_deref(),
            Some("cut off: the agent exited 1")
        );
        assert_eq!(
            exclusion(t(10), 124).as_deref(),
            Some("cut off: the time limit ended the agent")
        );
        assert_eq!(exclusion(t(10), 0), None);
        // Unknown tokens (a CLI that does not report them) are not "zero".
        assert_eq!(exclusion(None, 0), None);
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
        assert_eq!(knees["t"].as_deref(), Some("level1"));
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
        assert_eq!(cells.len(), 5 * 4 * 3 + 6);
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
        let r = run_cell(&cell, Driver::Scripted, Place::Dir, &root, &tools).unwrap();
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
