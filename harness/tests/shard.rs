//! Sharded sweeps end to end with the scripted agent: `harness plan --shards 4`,
//! four `harness run --shard K` processes at once, then `harness merge`, give the
//! cells one unsharded `harness run` gives with the same seed; a merge of shards
//! from different revisions, or with a shard missing, is refused in one line.
//! (The two trap tasks print fresh random text each run, so their views differ in
//! a few bytes between any two runs; the tasks here print the same every time.)

mod lens_bin;

use lens_bin::lens_binary;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn harness(args: &[&str], dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_harness"));
    c.args(args).current_dir(dir).env("LENS_BIN", lens_binary());
    c
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

const CELLS: [&str; 8] = [
    "--driver",
    "scripted",
    "--tasks",
    "fix-failing-test,cascading-errors",
    "--variants",
    "raw,level2,level1",
    "--repeats",
    "2",
];

/// The cells of a results file without what differs between runs (wall time).
fn cells(path: &Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.as_object_mut().unwrap().remove("duration_s");
            c
        })
        .collect()
}

#[test]
fn four_shards_merged_are_the_unsharded_sweep_cell_for_cell() {
    let dir = std::env::temp_dir().join(format!("lens-shard-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    let mut args: Vec<&str> = vec!["plan"];
    args.extend(CELLS);
    let p = plan.to_str().unwrap();
    args.extend(["--shards", "4", "--out", p]);
    let out = ok(harness(&args, &dir).output().unwrap());
    assert!(String::from_utf8_lossy(&out.stdout).contains("12 cells in 4 shards"));
    // Every (task, repeat) group lands in one shard.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    let mut groups = std::collections::BTreeMap::new();
    for c in v["cells"].as_array().unwrap() {
        let g = (
            c["task"].as_str().unwrap().to_string(),
            c["repeat"].as_u64().unwrap(),
        );
        let s = c["shard"].as_u64().unwrap();
        assert_eq!(
            *groups.entry(g).or_insert(s),
            s,
            "a pair split across shards"
        );
    }
    // Four shards at once, each in a sweep directory of its own.
    let shards: Vec<PathBuf> = (0..4)
        .map(|k| dir.join(format!("shard-{k}.json")))
        .collect();
    let children: Vec<_> = (0..4)
        .map(|k| {
            let k_s = k.to_string();
            harness(
                &[
                    "run",
                    "--run",
                    "--driver",
                    "scripted",
                    "--plan",
                    p,
                    "--shard",
                    &k_s,
                    "--out",
                    shards[k].to_str().unwrap(),
                ],
                &dir,
            )
            .output()
        })
        .collect();
    for c in children {
        ok(c.unwrap());
    }
    let merged = dir.join("merged.json");
    let mut m = vec!["merge"];
    m.extend(shards.iter().map(|s| s.to_str().unwrap()));
    m.extend(["--out", merged.to_str().unwrap()]);
    ok(harness(&m, &dir).output().unwrap());
    let whole = dir.join("whole.json");
    let mut w = vec!["run", "--run"];
    w.extend(CELLS);
    w.extend(["--out", whole.to_str().unwrap()]);
    ok(harness(&w, &dir).output().unwrap());
    let (m, w) = (cells(&merged), cells(&whole));
    assert_eq!(m.len(), w.len());
    for (a, b) in m.iter().zip(&w) {
        assert_eq!(a, b, "a merged cell differs from the unsharded run's");
    }
    assert_eq!(cells(&whole).len(), 12);
    // The report reads the merge as if it had run on one machine.
    let report = ok(harness(&["report", merged.to_str().unwrap()], &dir)
        .output()
        .unwrap());
    assert!(String::from_utf8_lossy(&report.stdout).contains("| fix-failing-test | level2 |"));

    // Refusals: a shard missing, a shard of another revision.
    let three: Vec<&str> = std::iter::once("merge")
        .chain(shards[..3].iter().map(|s| s.to_str().unwrap()))
        .collect();
    let out = harness(&three, &dir).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("missing") && e.lines().count() == 1,
        "{e}"
    );
    let text = std::fs::read_to_string(&shards[3]).unwrap();
    let other = text.replacen("\"git_revision\": \"", "\"git_revision\": \"0ther", 1);
    let odd = dir.join("other-revision.json");
    std::fs::write(&odd, other).unwrap();
    let mixed: Vec<&str> = std::iter::once("merge")
        .chain(shards[..3].iter().map(|s| s.to_str().unwrap()))
        .chain(std::iter::once(odd.to_str().unwrap()))
        .collect();
    let out = harness(&mixed, &dir).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("revision") && e.lines().count() == 1,
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
