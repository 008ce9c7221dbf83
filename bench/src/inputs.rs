//! Benchmark inputs: recorded real outputs from the compare cases.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// One recorded run: what the command printed and how it ended.
#[derive(Clone, Debug)]
pub struct Input {
    /// A short name for reports.
    pub name: String,
    /// The command that printed it.
    pub argv: Vec<String>,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
    /// Its exit code.
    pub exit: i32,
}

impl Input {
    /// The input repeated `k` times, stream by stream.
    pub fn scaled(&self, k: usize) -> Input {
        Input {
            name: format!("{}×{k}", self.name),
            argv: self.argv.clone(),
            stdout: self.stdout.repeat(k),
            stderr: self.stderr.repeat(k),
            exit: self.exit,
        }
    }

    /// Bytes of both streams.
    pub fn len(&self) -> usize {
        self.stdout.len() + self.stderr.len()
    }

    /// True when both streams are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(serde::Deserialize)]
struct Calls {
    calls: Vec<Call>,
}

#[derive(serde::Deserialize)]
struct Call {
    argv: Vec<String>,
    exit: i32,
    stdout: String,
    stderr: String,
}

/// The workspace's `cases/` directory.
pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")
}

/// The raw run of a case: the first call its recording holds.
pub fn case(name: &str) -> Result<Input> {
    let dir = cases_dir().join(name).join("recording");
    let calls: Calls = serde_json::from_slice(
        &std::fs::read(dir.join("calls.json"))
            .with_context(|| format!("no recording for case {name}"))?,
    )?;
    let c = calls.calls.into_iter().next().context("empty recording")?;
    Ok(Input {
        name: name.to_string(),
        argv: c.argv,
        stdout: std::fs::read(dir.join(&c.stdout))?,
        stderr: std::fs::read(dir.join(&c.stderr))?,
        exit: c.exit,
    })
}

/// The inputs every stage is measured on: a cargo cascade, a pytest run, a long
/// build log with one error in the middle, a git log, a grep over many files, and
/// the shapes' other families (clippy, eslint, ruff, tsc, ls, find, git diff).
pub const CASES: [&str; 12] = [
    "cargo-build",
    "pytest",
    "build-log",
    "git-log",
    "grep",
    "cargo-clippy",
    "eslint",
    "ruff",
    "tsc",
    "git-diff",
    "find",
    "make-gcc",
];

/// Loads `CASES`.
pub fn standard() -> Result<Vec<Input>> {
    CASES.iter().map(|c| case(c)).collect()
}

/// About `target` bytes of log built by concatenating every standard input's streams.
pub fn large_log(target: usize) -> Result<Input> {
    let parts = standard()?;
    let mut stdout = Vec::with_capacity(target + (1 << 20));
    while stdout.len() < target {
        for p in &parts {
            stdout.extend_from_slice(&p.stdout);
            stdout.extend_from_slice(&p.stderr);
        }
    }
    Ok(Input {
        name: format!("log-{}MB", target >> 20),
        argv: vec!["sh".into(), "ci.sh".into()],
        stdout,
        stderr: Vec::new(),
        exit: 1,
    })
}
