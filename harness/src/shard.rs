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

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::retention::{Cell, Sweep};

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
    /// `dir` or `vm`.
    pub isolation: String,
    /// The revision the plan was made at.
    pub git_revision: String,
    /// FNV-1a of the cells, their order and shards, the seed and the driver.
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
pub fn make(
    cells: &[Cell],
    shards: usize,
    seed: u64,
    driver: &str,
    isolation: &str,
    revision: &str,
) -> Plan {
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
    let hash = plan_hash(&ordered, seed, shards, driver);
    Plan {
        version: 1,
        seed,
        shards,
        driver: driver.to_string(),
        isolation: isolation.to_string(),
        git_revision: revision.to_string(),
        hash,
        cells: ordered,
    }
}

fn plan_hash(cells: &[PlannedCell], seed: u64, shards: usize, driver: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let text = cells
        .iter()
        .map(|c| format!("{}@{}", c.key(), c.shard))
        .collect::<Vec<_>>()
        .join("\n");
    for b in format!("{seed}/{shards}/{driver}\n{text}").bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
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
        if plan_hash(&p.cells, p.seed, p.shards, &p.driver) != p.hash {
            bail!("{} was edited after it was made (its hash does not match its cells); make it again", path.display());
        }
        Ok(p)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_run_repeat_by_repeat_shuffled_within_each_by_the_seed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        let tasks = crate::tasks::load_all(&root, &[]).unwrap();
        let variants: Vec<String> = ["raw", "level2", "level1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cells = crate::retention::plan(&tasks, &variants, 3);
        let p = make(&cells, 1, 7, "scripted", "dir", "r");
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
        let other = make(&cells, 1, 8, "scripted", "dir", "r");
        assert_ne!(p.cells, other.cells);
        assert_eq!(p.cells, make(&cells, 1, 7, "scripted", "dir", "r").cells);
    }
}
