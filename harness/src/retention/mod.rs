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

mod cell;
mod plan;
mod report;

pub use cell::{
    agent_side, copy_dir, run_cell, run_cells, set_up, tool_path, verdict, verified_copy, verify,
    CellResult, CellVm, GuestOutcome, Place, Tools, Verdict,
};
pub use plan::{plan, variant_command, Cell, VARIANTS};
pub use report::{markdown, report, resumable, Knee, Row, Sweep, SweepPlan};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{Driver, Model, Tokens};
    use crate::env;
    use crate::tasks::Task;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

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
