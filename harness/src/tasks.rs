//! Retention tasks: `tasks/<name>/task.toml` with `setup`, `verify` and `fix`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use regex::Regex;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    description: String,
    prompt: String,
    command: String,
    time_limit_s: u64,
    needs: String,
    rtk: bool,
    #[serde(default = "yes")]
    confirm: bool,
}

fn yes() -> bool {
    true
}

/// A loaded task.
#[derive(Debug, Clone)]
pub struct Task {
    /// Directory name.
    pub name: String,
    /// The task's directory (setup, verify, fix).
    pub dir: PathBuf,
    /// What it tests.
    pub description: String,
    /// The prompt, with `{command}` where the variant's command goes.
    pub prompt: String,
    /// The command the agent is told to run, as a shell command line.
    pub command: String,
    /// Seconds the agent gets.
    pub time_limit_s: u64,
    /// The information the task needs (capture group 1 if any, else the match).
    pub needs: Regex,
    /// Whether rtk claims the command (its arm runs only then).
    pub rtk: bool,
    /// Whether running the command again confirms the fix (false where each run
    /// prints a new answer, as the traps do).
    pub confirm: bool,
}

impl Task {
    /// Loads `dir/task.toml` and checks the scripts exist.
    pub fn load(dir: &Path) -> Result<Task> {
        Task::load_with(dir, true)
    }

    /// Loads a task as the agent's side sees it inside a microVM: without the
    /// verifier, which stays on the host.
    pub fn load_for_agent(dir: &Path) -> Result<Task> {
        Task::load_with(dir, false)
    }

    fn load_with(dir: &Path, with_verifier: bool) -> Result<Task> {
        let dir = dir
            .canonicalize()
            .with_context(|| format!("no task directory {}", dir.display()))?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .context("task has no name")?
            .to_string();
        let path = dir.join("task.toml");
        let raw: RawTask = toml::from_str(
            &std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        )
        .map_err(|e| {
            anyhow::anyhow!(
                "{}: {}",
                path.display(),
                e.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })?;
        for script in ["setup", "verify", "fix"] {
            if script == "verify" && !with_verifier {
                continue;
            }
            if !dir.join(script).is_file() {
                bail!("task {name} has no {script} script; every task needs setup, verify and fix");
            }
        }
        if !raw.prompt.contains("{command}") {
            bail!(
                "{}: the prompt must name the command as {{command}}",
                path.display()
            );
        }
        Ok(Task {
            needs: Regex::new(&raw.needs)
                .with_context(|| format!("{}: needs is not a valid regex", path.display()))?,
            name,
            dir,
            description: raw.description,
            prompt: raw.prompt,
            command: raw.command,
            time_limit_s: raw.time_limit_s,
            rtk: raw.rtk,
            confirm: raw.confirm,
        })
    }

    /// FNV-1a of every file of the task's directory (its definition, setup,
    /// verifier, fix and whatever they read), by path: a plan records it, so a
    /// sweep resumed after a task was edited is refused.
    pub fn digest(&self) -> String {
        fn walk(dir: &Path, rel: &str, into: &mut Vec<(String, Vec<u8>)>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                let name = format!("{rel}{}", e.file_name().to_string_lossy());
                let p = e.path();
                if p.is_dir() {
                    walk(&p, &format!("{name}/"), into);
                } else {
                    into.push((name, std::fs::read(&p).unwrap_or_default()));
                }
            }
        }
        let mut files = Vec::new();
        walk(&self.dir, "", &mut files);
        files.sort();
        let mut bytes = Vec::new();
        for (name, body) in files {
            bytes.extend(format!("{name}\0{}\0", body.len()).bytes());
            bytes.extend(body);
        }
        format!("{:016x}", fnv1a(&bytes))
    }

    /// The information the task needs, if `text` holds it.
    pub fn find(&self, text: &str) -> Option<String> {
        self.needs.captures(text).map(|c| {
            c.get(1)
                .unwrap_or_else(|| c.get(0).expect("match"))
                .as_str()
                .to_string()
        })
    }
}

/// 64-bit FNV-1a of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Every task under `root`, by name; `only` filters.
pub fn load_all(root: &Path, only: &[String]) -> Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for e in std::fs::read_dir(root).with_context(|| format!("cannot read {}", root.display()))? {
        let dir = e?.path();
        if dir.join("task.toml").is_file() {
            let t = Task::load(&dir)?;
            if only.is_empty() || only.contains(&t.name) {
                tasks.push(t);
            }
        }
    }
    for o in only {
        if !tasks.iter().any(|t| &t.name == o) {
            bail!("no task named {o:?} under {}", root.display());
        }
    }
    tasks.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_tasks_load() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks");
        let tasks = load_all(&root, &[]).unwrap();
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cargo-cascade",
                "cascading-errors",
                "fix-failing-test",
                "last-line-trap",
                "mid-stream-trap"
            ]
        );
        let mid = &tasks[4];
        assert_eq!(
            mid.find("step 2400/4800 migration token: 0123456789abcdef\n")
                .as_deref(),
            Some("0123456789abcdef")
        );
        assert_eq!(mid.find("nothing"), None);
        assert!(tasks[0].rtk && !tasks[4].rtk);
    }

    #[test]
    fn a_tasks_digest_changes_with_any_of_its_files() {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/last-line-trap");
        let root = std::env::temp_dir().join(format!("lens-task-digest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let dir = root.join("last-line-trap");
        assert!(std::process::Command::new("cp")
            .arg("-a")
            .arg(&from)
            .arg(&dir)
            .status()
            .unwrap()
            .success());
        let original = Task::load(&from).unwrap().digest();
        // A copy elsewhere is the same task.
        assert_eq!(Task::load(&dir).unwrap().digest(), original);
        let fix = dir.join("fix");
        let body = std::fs::read_to_string(&fix).unwrap();
        std::fs::write(&fix, format!("{body}\n")).unwrap();
        assert_ne!(Task::load(&dir).unwrap().digest(), original);
        std::fs::write(&fix, &body).unwrap();
        assert_eq!(Task::load(&dir).unwrap().digest(), original);
        std::fs::write(dir.join("extra.txt"), "x").unwrap();
        assert_ne!(Task::load(&dir).unwrap().digest(), original);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
