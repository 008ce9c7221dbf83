//! Where results go. An ordinary run writes under `out/`; only a deliberate
//! `--save` (what `make results` passes) writes the committed design record in
//! `results/`, and a run that covers less than the record it would replace (a
//! `--cases` or `--tasks` subset) is refused there: a partial run never
//! overwrites a full one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// The file a run writes: `out` when given, else `results/NAME` with `save`,
/// else `out/NAME`.
pub fn destination(out: Option<PathBuf>, save: bool, name: &str) -> PathBuf {
    match (out, save) {
        (Some(p), _) => p,
        (None, true) => PathBuf::from("results").join(name),
        (None, false) => PathBuf::from("out").join(name),
    }
}

/// Refuses to replace a committed record (a file in a `results` directory) when
/// the results already there cover keys (cases, task and variant pairs) this run
/// does not; `keys_of` reads them from the JSON. Anything under `out/` is scratch
/// and always replaced.
pub fn refuse_partial(
    path: &Path,
    new: &BTreeSet<String>,
    keys_of: impl Fn(&serde_json::Value) -> BTreeSet<String>,
) -> Result<()> {
    let committed = path
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == "results");
    if !committed {
        return Ok(());
    }
    let Some(old) = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return Ok(());
    };
    let lost: Vec<String> = keys_of(&old).difference(new).cloned().collect();
    if !lost.is_empty() {
        bail!(
            "{} holds {} this run does not ({}); a partial run does not replace a full one: run them all, or write elsewhere with --out",
            path.display(),
            if lost.len() == 1 { "a result".to_string() } else { format!("{} results", lost.len()) },
            lost.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(())
}

/// Writes `value` as pretty JSON to `path`, whole: to a side file first, then
/// renamed over, so a reader (or a crash) never sees half a record.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(value)?;
    json.push(b'\n');
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, json)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_write_under_out_unless_saved_and_a_subset_never_replaces_the_whole() {
        assert_eq!(
            destination(None, false, "compare.json"),
            PathBuf::from("out/compare.json")
        );
        assert_eq!(
            destination(None, true, "compare.json"),
            PathBuf::from("results/compare.json")
        );
        assert_eq!(
            destination(Some("x.json".into()), true, "c"),
            PathBuf::from("x.json")
        );
        let dir = std::env::temp_dir()
            .join(format!("lens-save-{}", std::process::id()))
            .join("results");
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.json");
        std::fs::write(&f, r#"{"cases":[{"name":"a"},{"name":"b"}]}"#).unwrap();
        let keys = |v: &serde_json::Value| {
            v["cases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_string())
                .collect()
        };
        let one: BTreeSet<String> = ["a".to_string()].into();
        let e = refuse_partial(&f, &one, keys).unwrap_err().to_string();
        assert!(e.contains("partial run") && e.contains("(b)"), "{e}");
        let both: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        assert!(refuse_partial(&f, &both, keys).is_ok());
        assert!(refuse_partial(&dir.join("none.json"), &one, keys).is_ok());
        // Outside a results directory, anything goes.
        let scratch = dir.parent().unwrap().join("r.json");
        std::fs::copy(&f, &scratch).unwrap();
        assert!(refuse_partial(&scratch, &one, keys).is_ok());
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}
