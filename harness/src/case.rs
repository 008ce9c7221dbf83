//! Cases: `cases/<name>/case.toml`, declared before anything is measured.
//!
//! ```toml
//! description = "ruff check over 50 modules, one finding each"
//! table = "overlap"                    # or "lens-only"
//! command = ["ruff", "check", "."]
//! programs = ["ruff"]                  # what the arms may call: shimmed on PATH
//! versions = [["ruff", "--version"]]   # what names the tool versions
//! needle = 'F841.*retry_count'        # the information, on one line; or
//! # needle_name = "app/payments/refund.py" (a path, recoverable from a listing)
//! names = '^(\S+\.py):\d+:\d+:'        # capture group 1: a distinct name
//!
//! [rtk]                                # absent: rtk does not claim this command
//! argv = ["rtk", "ruff", "check", "."]
//! ```

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use regex::Regex;
use serde::Deserialize;

use crate::measure::Needle;

/// Which table a case belongs to.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Table {
    /// A command both tools claim: a quality comparison.
    Overlap,
    /// A command only Lens claims: coverage, reported separately.
    LensOnly,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawCase {
    description: String,
    table: Table,
    command: Vec<String>,
    programs: Vec<String>,
    #[serde(default)]
    versions: Vec<Vec<String>>,
    #[serde(default)]
    needle: Option<String>,
    #[serde(default)]
    needle_name: Option<String>,
    names: String,
    #[serde(default)]
    rtk: Option<RawRtk>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawRtk {
    argv: Vec<String>,
}

/// A loaded, validated case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Directory name under `cases/`.
    pub name: String,
    /// The case's directory.
    pub dir: PathBuf,
    /// What it measures.
    pub description: String,
    /// Which table.
    pub table: Table,
    /// The command, as run raw and after `lens --level N`.
    pub command: Vec<String>,
    /// Programs shimmed on PATH.
    pub programs: Vec<String>,
    /// Commands whose first output line names a tool's version.
    pub versions: Vec<Vec<String>>,
    /// The line the command was run for.
    pub needle: Needle,
    /// Extracts the distinct names from the raw output (capture group 1).
    pub names: Regex,
    /// rtk's own invocation, when rtk claims the command.
    pub rtk: Option<Vec<String>>,
}

impl Case {
    /// Loads `dir/case.toml`.
    pub fn load(dir: &Path) -> Result<Case> {
        // Absolute, because shims read the recording from the project's directory.
        let dir = &dir
            .canonicalize()
            .with_context(|| format!("no case directory {}", dir.display()))?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .context("case directory has no name")?
            .to_string();
        let path = dir.join("case.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let raw: RawCase = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), one_line(&e.to_string())))?;
        if raw.command.is_empty() {
            bail!(
                "{}: command is empty; give the argv the case runs",
                path.display()
            );
        }
        let program = raw.command[0].clone();
        if !raw.programs.contains(&program) {
            bail!(
                "{}: programs must list {program:?}, the command's own program",
                path.display()
            );
        }
        let needle = match (&raw.needle, &raw.needle_name) {
            (Some(p), None) => Needle::Pattern(
                Regex::new(p)
                    .with_context(|| format!("{}: needle is not a valid regex", path.display()))?,
            ),
            (None, Some(n)) => Needle::Name(n.clone()),
            _ => bail!(
                "{}: give exactly one of needle (a regex) or needle_name (a path)",
                path.display()
            ),
        };
        let names = Regex::new(&format!("(?m){}", raw.names))
            .with_context(|| format!("{}: names is not a valid regex", path.display()))?;
        if names.captures_len() < 2 {
            bail!(
                "{}: names needs a capture group around the name",
                path.display()
            );
        }
        if let Some(r) = &raw.rtk {
            if r.argv.first().map(String::as_str) != Some("rtk") {
                bail!("{}: [rtk] argv must start with \"rtk\"", path.display());
            }
        }
        Ok(Case {
            name,
            dir: dir.to_path_buf(),
            description: raw.description,
            table: raw.table,
            command: raw.command,
            programs: raw.programs,
            versions: raw.versions,
            needle,
            names,
            rtk: raw.rtk.map(|r| r.argv),
        })
    }

    /// The setup script that builds the project the command runs in.
    pub fn setup(&self) -> PathBuf {
        self.dir.join("setup")
    }

    /// Where this case's recordings live.
    pub fn recording(&self) -> PathBuf {
        self.dir.join("recording")
    }
}

/// Loads every case under `root`, sorted by table then name; `only` filters by name.
pub fn load_all(root: &Path, only: &[String]) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    let entries = std::fs::read_dir(root)
        .with_context(|| format!("cannot read cases directory {}", root.display()))?;
    for e in entries {
        let dir = e?.path();
        if !dir.join("case.toml").is_file() {
            continue;
        }
        let case = Case::load(&dir)?;
        if only.is_empty() || only.contains(&case.name) {
            cases.push(case);
        }
    }
    for o in only {
        if !cases.iter().any(|c| &c.name == o) {
            bail!("no case named {o:?} under {}", root.display());
        }
    }
    cases.sort_by(|a, b| (a.table as u8, &a.name).cmp(&(b.table as u8, &b.name)));
    Ok(cases)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_case(name: &str, toml: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("harness-case-{}-{name}", std::process::id()));
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("case.toml"), toml).unwrap();
        root
    }

    const GOOD: &str = r#"
description = "d"
table = "overlap"
command = ["ruff", "check", "."]
programs = ["ruff"]
needle = 'F401'
names = '^(\S+\.py):\d+'
[rtk]
argv = ["rtk", "ruff", "check", "."]
"#;

    #[test]
    fn loads_a_case() {
        let root = write_case("ruff", GOOD);
        let cases = load_all(&root, &[]).unwrap();
        assert_eq!(cases.len(), 1);
        let c = &cases[0];
        assert_eq!(c.name, "ruff");
        assert_eq!(c.table, Table::Overlap);
        assert_eq!(c.rtk.as_deref().unwrap()[0], "rtk");
        assert!(c.names.is_match("x\na.py:3"));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn rejects_bad_cases_with_the_fix() {
        for (bad, needle) in [
            (
                GOOD.replace("programs = [\"ruff\"]", "programs = []"),
                "programs must list",
            ),
            (
                GOOD.replace(r"'^(\S+\.py):\d+'", r"'^\S+\.py'"),
                "capture group",
            ),
            (
                GOOD.replace("needle = 'F401'", "needle = '('"),
                "needle is not a valid regex",
            ),
            (
                GOOD.replace("argv = [\"rtk\",", "argv = [\"other\","),
                "must start with",
            ),
            (
                GOOD.replace("table = \"overlap\"", "table = \"mine\""),
                "unknown variant",
            ),
        ] {
            let root = write_case("bad", &bad);
            let e = format!("{:#}", load_all(&root, &[]).unwrap_err());
            assert!(e.contains(needle), "{e}");
            std::fs::remove_dir_all(root).unwrap();
        }
    }

    #[test]
    fn unknown_case_name_is_an_error() {
        let root = write_case("ruff", GOOD);
        let e = load_all(&root, &["nope".into()]).unwrap_err().to_string();
        assert!(e.contains("no case named \"nope\""), "{e}");
        std::fs::remove_dir_all(root).unwrap();
    }
}
