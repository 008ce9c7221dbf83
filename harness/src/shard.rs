//! Sweeps beyond one machine: a plan written to a file, its cells split into
//! shards an existing engine runs (a GitHub Actions matrix, a Kubernetes indexed
//! Job; see `deploy/`), and the shards' result files merged back into one.
//!
//! The plan is deterministic for its seed. Cells run interleaved (every variant
//! of repeat 1, then of repeat 2, …, shuffled within a repeat by the seed), so
//! drift over the hours a sweep takes is not confounded with the variant; and a
//! shard holds whole (task, repeat) groups, so each pair the report compares (a
//! variant and raw of the same task and repeat) ran on one machine.
//!
//! A shard's results carry the plan's hash and the cells it was given. `merge`
//! refuses shards of different plans, revisions, tools, drivers or images (one
//! line saying which), and a merge with a cell missing or run twice.
//!
//! The hash covers everything that decides what a cell measures besides the
//! revision and the tools (which a results file records, and `merge` and
//! `--resume` compare): the cells and their order, the seed, the shards, the
//! driver, the model behind it, the agent CLI's version, the isolation, and
//! each task's definition. A sweep resumed with another `--model` (or after
//! the CLI was upgraded, or a task edited) has another hash and is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::driver::Model;
use crate::retention::{self, Cell, Sweep};
use crate::tasks::Task;

/// The plan file format; a plan of another version is made again.
pub const VERSION: u32 = 2;

/// What the cells of a plan measure, besides the cells themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measures<'a> {
    /// The driver.
    pub driver: &'a str,
    /// The model behind a real driver.
    pub model: Model,
    /// The agent CLI and its version (empty for the scripted agent).
    pub agent: &'a str,
    /// `dir` or `vm`.
    pub isolation: &'a str,
}

/// One cell of a written plan.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PlannedCell {
    /// Task name.
    pub task: String,
    /// Variant.
    pub variant: String,
    /// Repeat, from 1.
    pub repeat: usize,
    /// The shard that runs it, from 0.
    pub shard: usize,
}

impl PlannedCell {
    /// The cell's key: `task/variant/repeat`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.task, self.variant, self.repeat)
    }
}

/// A plan as a file: what to run, in which order, on which shard.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Plan {
    /// The format version.
    pub version: u32,
    /// The seed of the order and the shard assignment (and the report's statistics).
    pub seed: u64,
    /// How many shards.
    pub shards: usize,
    /// The driver.
    pub driver: String,
    /// The model behind a real driver.
    #[serde(default)]
    pub model: Model,
    /// The agent CLI's version as the plan's machine found it (empty for the
    /// scripted agent).
    #[serde(default)]
    pub agent: String,
    /// `dir` or `vm`.
    pub isolation: String,
    /// Each planned task's definition, as [`Task::digest`].
    #[serde(default)]
    pub tasks: BTreeMap<String, String>,
    /// The revision the plan was made at.
    pub git_revision: String,
    /// FNV-1a of the cells, their order and shards, the seed, what they
    /// measure ([`Measures`]) and the tasks' digests.
    pub hash: String,
    /// Every cell, in the order they run.
    pub cells: Vec<PlannedCell>,
}

/// A small seeded generator (SplitMix64): the plan must not change when a
/// dependency's generator does.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// The interleaved, seeded order of `cells`, split into `shards`.
pub fn make(cells: &[Cell], shards: usize, seed: u64, m: &Measures, revision: &str) -> Plan {
    let shards = shards.max(1);
    let mut rng = SplitMix(seed);
    // Whole (task, repeat) groups to shards: a seeded deal, round-robin.
    let mut groups: Vec<(String, usize)> = cells
        .iter()
        .map(|c| (c.task.name.clone(), c.repeat))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    rng.shuffle(&mut groups);
    let shard_of: BTreeMap<(String, usize), usize> = groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| (g, i % shards))
        .collect();
    // Interleaved: repeat by repeat, shuffled within each.
    let mut by_repeat: BTreeMap<usize, Vec<PlannedCell>> = BTreeMap::new();
    for c in cells {
        by_repeat.entry(c.repeat).or_default().push(PlannedCell {
            task: c.task.name.clone(),
            variant: c.variant.clone(),
            repeat: c.repeat,
            shard: shard_of[&(c.task.name.clone(), c.repeat)],
        });
    }
    let mut ordered = Vec::new();
    for (_, mut group) in by_repeat {
        rng.shuffle(&mut group);
        ordered.extend(group);
    }
    let tasks = digests(cells.iter().map(|c| c.task));
    let hash = plan_hash(&ordered, seed, shards, m, &tasks);
    Plan {
        version: VERSION,
        seed,
        shards,
        driver: m.driver.to_string(),
        model: m.model,
        agent: m.agent.to_string(),
        isolation: m.isolation.to_string(),
        tasks,
        git_revision: revision.to_string(),
        hash,
        cells: ordered,
    }
}

/// Each task's digest, by name.
pub fn digests<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> BTreeMap<String, String> {
    tasks
        .into_iter()
        .map(|t| (t.name.clone(), t.digest()))
        .collect()
}

fn plan_hash(
    cells: &[PlannedCell],
    seed: u64,
    shards: usize,
    m: &Measures,
    tasks: &BTreeMap<String, String>,
) -> String {
    let text = cells
        .iter()
        .map(|c| format!("{}@{}", c.key(), c.shard))
        .collect::<Vec<_>>()
        .join("\n");
    let tasks = tasks
        .iter()
        .map(|(name, d)| format!("{name}={d}"))
        .collect::<Vec<_>>()
        .join(",");
    let model = match m.model {
        Model::Real => "real",
        Model::Scripted => "scripted",
    };
    let Measures {
        driver,
        agent,
        isolation,
        ..
    } = m;
    let whole = format!(
        "{seed}/{shards}/{driver}\nmodel {model}\nagent {agent}\nisolation {isolation}\ntasks {tasks}\n{text}"
    );
    format!("{:016x}", crate::tasks::fnv1a(whole.as_bytes()))
}

impl Plan {
    /// Reads a plan file, checking its hash.
    pub fn load(path: &Path) -> Result<Plan> {
        let p: Plan = serde_json::from_slice(
            &std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
        )
        .with_context(|| {
            format!(
                "{} is not a plan file (harness plan --shards N --out FILE writes one)",
                path.display()
            )
        })?;
        if p.version != VERSION {
            bail!(
                "{} is a plan of format {} (this harness writes {VERSION}, whose hash covers the model, the agent CLI's version and the tasks); make it again",
                path.display(),
                p.version
            );
        }
        if plan_hash(&p.cells, p.seed, p.shards, &p.measures(), &p.tasks) != p.hash {
            bail!("{} was edited after it was made (its hash does not match its cells); make it again", path.display());
        }
        Ok(p)
    }

    /// What its cells measure.
    pub fn measures(&self) -> Measures<'_> {
        Measures {
            driver: &self.driver,
            model: self.model,
            agent: &self.agent,
            isolation: &self.isolation,
        }
    }

    /// Why a shard of this plan cannot run here, measuring `here` with the
    /// tasks `tasks`: one line naming what differs, and the flag that fixes it
    /// where there is one.
    pub fn refuse_here(&self, here: &Measures, tasks: &[Task]) -> Result<()> {
        let mine = self.measures();
        if mine.driver != here.driver {
            bail!("the plan is for driver {0}; pass --driver {0}", mine.driver);
        }
        if mine.model != here.model {
            let name = |m: Model| {
                if m == Model::Scripted {
                    "scripted"
                } else {
                    "real"
                }
            };
            bail!(
                "the plan is for --model {}; pass --model {}",
                name(mine.model),
                name(mine.model)
            );
        }
        if mine.isolation != here.isolation {
            bail!(
                "the plan is for --isolation {0}; pass --isolation {0}",
                mine.isolation
            );
        }
        // A plan made where the CLI was not installed names no version; the
        // shards' results record theirs, and `merge` compares them.
        if !mine.agent.is_empty() && mine.agent != here.agent {
            bail!(
                "the plan was made with the agent CLI at {:?}, this machine has {:?}; install that version here, or make the plan again",
                mine.agent,
                here.agent
            );
        }
        for (name, digest) in digests(tasks) {
            if self.tasks.get(&name).is_some_and(|d| *d != digest) {
                bail!("task {name} is not as it was when the plan was made (tasks/{name} differs); run the plan at its revision {}, or make it again", self.git_revision);
            }
        }
        Ok(())
    }

    /// The keys of one shard's cells, in order.
    pub fn shard(&self, k: usize) -> Vec<&PlannedCell> {
        self.cells.iter().filter(|c| c.shard == k).collect()
    }
}

/// Merges shard results of one plan into one sweep whose cells are in the plan's
/// order, as `report` reads it.
pub fn merge(parts: Vec<(String, Sweep)>) -> Result<Sweep> {
    let Some((first_name, first)) = parts.first() else {
        bail!("merge needs at least one results file");
    };
    let Some(plan) = &first.plan else {
        bail!("{first_name} is not a shard of a plan (it has no plan hash); only `harness run --plan FILE --shard K` results merge");
    };
    for (name, s) in &parts[1..] {
        let same = |what: &str, a: String, b: String| -> Result<()> {
            if a != b {
                bail!("{name} and {first_name} differ in their {what} ({b} against {a}); they are not shards of one sweep");
            }
            Ok(())
        };
        let Some(p) = &s.plan else {
            bail!("{name} is not a shard of a plan (it has no plan hash)");
        };
        same("plan", plan.hash.clone(), p.hash.clone())?;
        same(
            "revision",
            first.git_revision.clone(),
            s.git_revision.clone(),
        )?;
        same("driver", first.driver.clone(), s.driver.clone())?;
        same(
            "tool versions",
            format!("{:?}", first.tools),
            format!("{:?}", s.tools),
        )?;
        same(
            "image",
            format!("{:?}", first.vm.as_ref().map(|v| &v.image)),
            format!("{:?}", s.vm.as_ref().map(|v| &v.image)),
        )?;
    }
    // Every shard of the plan, each once.
    let mut shards_seen = BTreeMap::new();
    for (name, s) in &parts {
        let k = s.plan.as_ref().map_or(0, |p| p.shard);
        if let Some(other) = shards_seen.insert(k, name.clone()) {
            bail!("shard {k} is in both {other} and {name}");
        }
    }
    let missing_shards: Vec<usize> = (0..plan.shards)
        .filter(|k| !shards_seen.contains_key(k))
        .collect();
    if !missing_shards.is_empty() {
        bail!(
            "shards {missing_shards:?} of {} are missing; merge every shard's results",
            plan.shards
        );
    }
    // Every planned cell, once.
    let planned: Vec<String> = parts
        .iter()
        .flat_map(|(_, s)| s.plan.as_ref().map(|p| p.cells.clone()).unwrap_or_default())
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (_, s) in &parts {
        for c in &s.cells {
            *seen
                .entry(format!("{}/{}/{}", c.task, c.variant, c.repeat))
                .or_default() += 1;
        }
    }
    let twice: Vec<&String> = seen
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(k, _)| k)
        .collect();
    if !twice.is_empty() {
        bail!("cells ran twice: {}", join_some(&twice));
    }
    let missing: Vec<&String> = planned.iter().filter(|k| !seen.contains_key(*k)).collect();
    if !missing.is_empty() {
        bail!(
            "{} planned cells have no result: {}",
            missing.len(),
            join_some(&missing)
        );
    }
    let plan_order = plan.order.clone();
    let order: BTreeMap<&String, usize> =
        plan_order.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut cells: Vec<_> = parts.iter().flat_map(|(_, s)| s.cells.clone()).collect();
    cells.sort_by_key(|c| {
        order
            .get(&format!("{}/{}/{}", c.task, c.variant, c.repeat))
            .copied()
    });
    let mut merged = first.clone();
    merged.cells = cells;
    merged.plan = Some(crate::retention::SweepPlan {
        hash: plan.hash.clone(),
        shard: 0,
        shards: 1,
        cells: plan_order.clone(),
        order: plan_order,
    });
    merged.command = crate::env::command_line();
    Ok(merged)
}

fn join_some(v: &[&String]) -> String {
    let shown: Vec<&str> = v.iter().take(5).map(|s| s.as_str()).collect();
    if v.len() > 5 {
        format!("{}, and {} more", shown.join(", "), v.len() - 5)
    } else {
        shown.join(", ")
    }
}

/// `harness merge`: one sweep from the results files of its shards, written to
/// `out` (or results/ with `save`), its table printed.
pub fn merge_files(files: &[String], out: Option<PathBuf>, save: bool) -> Result<()> {
    let mut parts = Vec::new();
    for f in files {
        let s: Sweep =
            serde_json::from_slice(&std::fs::read(f).with_context(|| format!("cannot read {f}"))?)
                .with_context(|| format!("{f} is not a retention results file"))?;
        parts.push((f.clone(), s));
    }
    let merged = merge(parts)?;
    let out = crate::save::destination(out, save, &format!("retention-{}.json", merged.driver));
    crate::save::refuse_partial(
        &out,
        &task_variant_pairs(&serde_json::to_value(&merged)?),
        task_variant_pairs,
    )?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut json = serde_json::to_vec_pretty(&merged)?;
    json.push(b'\n');
    std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
    print!("{}", retention::markdown(&merged));
    eprintln!(
        "merged {} files ({} cells) into {}",
        files.len(),
        merged.cells.len(),
        out.display()
    );
    Ok(())
}

/// The task/variant pairs a retention results file holds.
pub fn task_variant_pairs(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    v["cells"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    format!(
                        "{}/{}",
                        c["task"].as_str().unwrap_or(""),
                        c["variant"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository's retention tasks (`only` names some; empty is all).
    fn repo_tasks(only: &[&str]) -> Vec<crate::tasks::Task> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        crate::tasks::load_all(&root, &only).unwrap()
    }

    const SCRIPTED: Measures = Measures {
        driver: "scripted",
        model: Model::Real,
        agent: "",
        isolation: "dir",
    };

    #[test]
    fn cells_run_repeat_by_repeat_shuffled_within_each_by_the_seed() {
        let tasks = repo_tasks(&[]);
        let variants: Vec<String> = ["raw", "level2", "level1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cells = crate::retention::plan(&tasks, &variants, 3);
        let p = make(&cells, 1, 7, &SCRIPTED, "r");
        assert_eq!(p.cells.len(), cells.len());
        // Every cell of repeat 1 before any of repeat 2, and so on: drift over the
        // sweep lands on every variant alike.
        let repeats: Vec<usize> = p.cells.iter().map(|c| c.repeat).collect();
        let mut sorted = repeats.clone();
        sorted.sort();
        assert_eq!(repeats, sorted);
        // Within a repeat the order is the seed's, not the variants' order.
        let first: Vec<String> = p
            .cells
            .iter()
            .take(cells.len() / 3)
            .map(|c| c.key())
            .collect();
        let by_plan: Vec<String> = cells
            .iter()
            .filter(|c| c.repeat == 1)
            .map(|c| format!("{}/{}/{}", c.task.name, c.variant, c.repeat))
            .collect();
        assert_ne!(first, by_plan);
        let other = make(&cells, 1, 8, &SCRIPTED, "r");
        assert_ne!(p.cells, other.cells);
        assert_eq!(p.cells, make(&cells, 1, 7, &SCRIPTED, "r").cells);
    }

    #[test]
    fn the_hash_changes_with_the_model_the_agent_cli_the_isolation_and_the_tasks() {
        let tasks = repo_tasks(&["last-line-trap"]);
        let cells = crate::retention::plan(&tasks, &["raw".into(), "level2".into()], 2);
        let claude = Measures {
            driver: "claude",
            model: Model::Scripted,
            agent: "2.1.328 (pinned)",
            isolation: "dir",
        };
        let base = make(&cells, 1, 7, &claude, "r");
        assert_eq!(base.hash, make(&cells, 1, 7, &claude, "r").hash);
        let other = [
            Measures {
                model: Model::Real,
                ..claude.clone()
            },
            Measures {
                agent: "2.1.329 (pinned)",
                ..claude.clone()
            },
            Measures {
                isolation: "vm",
                ..claude.clone()
            },
            Measures {
                driver: "codex",
                ..claude.clone()
            },
        ];
        for m in &other {
            let p = make(&cells, 1, 7, m, "r");
            assert_eq!(p.cells, base.cells, "{m:?}: the same cells");
            assert_ne!(p.hash, base.hash, "{m:?}: another hash");
        }
        // A task edited since: the same cells, another hash.
        let mut edited = base.clone();
        edited
            .tasks
            .insert("last-line-trap".into(), "0000000000000000".into());
        assert_ne!(
            plan_hash(&edited.cells, 7, 1, &claude, &edited.tasks),
            base.hash
        );
        // Here is where a shard of it runs: the same measures and tasks, or a
        // refusal naming what differs.
        base.refuse_here(&claude, &tasks).unwrap();
        let why = |m: &Measures| base.refuse_here(m, &tasks).unwrap_err().to_string();
        assert!(
            why(&other[0]).contains("pass --model scripted"),
            "{}",
            why(&other[0])
        );
        assert!(why(&other[1]).contains("2.1.328"), "{}", why(&other[1]));
        assert!(
            why(&other[2]).contains("pass --isolation dir"),
            "{}",
            why(&other[2])
        );
        let e = edited.refuse_here(&claude, &tasks).unwrap_err().to_string();
        assert!(e.contains("task last-line-trap is not as it was"), "{e}");
    }

    #[test]
    fn a_plan_file_edited_to_another_model_or_of_an_older_format_is_refused() {
        let tasks = repo_tasks(&["last-line-trap"]);
        let cells = crate::retention::plan(&tasks, &["raw".into()], 1);
        let claude = Measures {
            driver: "claude",
            model: Model::Real,
            agent: "2.1.328 (Claude Code)",
            isolation: "vm",
        };
        let plan = make(&cells, 1, 7, &claude, "r");
        let dir = std::env::temp_dir().join(format!("lens-plan-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("plan.json");
        let write = |p: &Plan| std::fs::write(&file, serde_json::to_vec(p).unwrap()).unwrap();
        write(&plan);
        assert_eq!(Plan::load(&file).unwrap(), plan);
        let mut scripted = plan.clone();
        scripted.model = Model::Scripted;
        write(&scripted);
        let e = Plan::load(&file).unwrap_err().to_string();
        assert!(e.contains("was edited after it was made"), "{e}");
        let mut old = plan.clone();
        old.version = 1;
        write(&old);
        let e = Plan::load(&file).unwrap_err().to_string();
        assert!(e.contains("a plan of format 1"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
