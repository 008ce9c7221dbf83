//! What a sweep recorded and what it reports: the results file, resuming an
//! interrupted sweep, and the table with each variant's success rate and knee.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::driver::Model;
use crate::env;
use crate::isolation::VmRecord;
use crate::stats;

use super::cell::CellResult;
use super::plan::VARIANTS;

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
