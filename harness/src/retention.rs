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
use std::time::Instant;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::driver::{Driver, Tokens};
use crate::env;
use crate::isolation::Isolation;
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
#[derive(Serialize, Deserialize, Debug, Clone)]
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
    /// The verifier's verdict.
    pub success: bool,
    /// Why the cell is not counted, when it is not.
    pub excluded: Option<String>,
    /// Wall time of the agent, seconds (a simulation's is not an agent's).
    pub duration_s: f64,
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
#[derive(Serialize, Deserialize, Debug)]
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
    /// Every cell.
    pub cells: Vec<CellResult>,
}

/// Where a sweep's binaries are.
pub struct Tools {
    /// Directory holding `lens`.
    pub lens_dir: PathBuf,
    /// Directory holding `rtk`, if installed.
    pub rtk_dir: Option<PathBuf>,
}

/// Runs one cell: setup, the agent, then the verifier on a copy of the directory.
pub fn run_cell(
    cell: &Cell,
    driver: Driver,
    isolation: Isolation,
    root: &Path,
    tools: &Tools,
) -> Result<CellResult> {
    let name = format!("{}-{}-{}", cell.task.name, cell.variant, cell.repeat);
    let dir = isolation.cell_dir(root, &name)?;
    let setup = Command::new(cell.task.dir.join("setup"))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()?;
    anyhow::ensure!(
        setup.status.success(),
        "setup of {} failed: {}",
        cell.task.name,
        String::from_utf8_lossy(&setup.stderr)
    );
    let mut path = OsString::from(&tools.lens_dir);
    if let Some(r) = &tools.rtk_dir {
        path.push(":");
        path.push(r);
    }
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let command = variant_command(&cell.variant, &cell.task.command);
    let prompt = cell.task.prompt.replace("{command}", &command);
    let started = Instant::now();
    let outcome = driver.act(cell.task, &prompt, &command, &dir, &path)?;
    let duration_s = (started.elapsed().as_secs_f64() * 100.0).round() / 100.0;
    // The verifier runs on the host, against a copy: nothing of it is in the cell.
    let copy = root.join(format!("{name}.verify"));
    copy_dir(&dir, &copy)?;
    let verdict = Command::new(cell.task.dir.join("verify"))
        .current_dir(&copy)
        .stdin(Stdio::null())
        .output()?;
    let _ = std::fs::remove_dir_all(&copy);
    let excluded = exclusion(outcome.tokens, outcome.exit);
    Ok(CellResult {
        task: cell.task.name.clone(),
        variant: cell.variant.clone(),
        repeat: cell.repeat,
        tokens: outcome.tokens,
        tokens_total: outcome.tokens.map(|t| t.total()),
        tool_calls: outcome.tool_calls,
        turns: outcome.turns,
        bytes_read: outcome.bytes_read,
        success: verdict.status.success(),
        excluded,
        duration_s,
    })
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
    out.push_str("| task | variant | cells | median tokens | vs raw | success | tool calls | bytes read | p (perm.) | median ratio 95% CI |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    let f = |x: Option<f64>, d: usize| x.map_or("–".to_string(), |v| format!("{v:.d$}"));
    for r in &rows {
        let cells = if r.excluded > 0 {
            format!("{} (+{} excluded)", r.counted, r.excluded)
        } else {
            r.counted.to_string()
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.task,
            r.variant,
            cells,
            f(r.median_tokens, 0),
            f(r.ratio, 2),
            r.success
                .map_or("–".into(), |s| format!("{:.0}%", s * 100.0)),
            f(r.median_calls, 0),
            f(r.median_bytes, 0),
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
            success,
            excluded: excluded.map(String::from),
            duration_s: 1.0,
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
        };
        let cell = Cell {
            task: &tasks[0],
            variant: "raw".into(),
            repeat: 1,
        };
        let r = run_cell(&cell, Driver::Scripted, Isolation::Dir, &root, &tools).unwrap();
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
