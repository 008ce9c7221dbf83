//! Record and replay shims.
//!
//! In `record` and `replay` modes every program a case declares is a symlink, first
//! on PATH, to the `compare` binary itself; invoked under another name, `compare`
//! acts as that program's shim. A call is keyed by its exact argv, because a filter
//! may run the underlying tool with flags of its own (`git log --pretty=…`,
//! `eslint -f json`). Recording runs the real program (with the real PATH and HOME,
//! so nested calls are not shimmed) and keeps its stdout, stderr and exit code; a
//! call already recorded is served from the recording, so every arm reads the same
//! bytes. Replay only serves.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::platform;

/// Environment variable holding the shim mode (`record` or `replay`).
pub const MODE_VAR: &str = "COMPARE_SHIM";
/// Environment variable holding the recording directory.
pub const RECORDING_VAR: &str = "COMPARE_RECORDING";
/// The PATH the real programs are found on (record mode).
pub const REAL_PATH_VAR: &str = "COMPARE_REAL_PATH";
/// The HOME the real programs run with (record mode).
pub const REAL_HOME_VAR: &str = "COMPARE_REAL_HOME";

/// One recorded call.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Program name and arguments, as the shim received them.
    pub argv: Vec<String>,
    /// Exit code (128 + signum for a signal death).
    pub exit: i32,
    /// File holding stdout, relative to the recording directory.
    pub stdout: String,
    /// File holding stderr.
    pub stderr: String,
}

/// Every call a case's arms made.
#[derive(Serialize, Deserialize, Debug, Default)]
pub struct Calls {
    /// In the order first made.
    pub calls: Vec<Call>,
}

impl Calls {
    /// Reads `dir/calls.json`; an absent file is an empty recording.
    pub fn load(dir: &Path) -> Result<Calls> {
        let path = dir.join("calls.json");
        match std::fs::read(&path) {
            Ok(b) => {
                serde_json::from_slice(&b).with_context(|| format!("{} is damaged", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Calls::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    fn save(&self, dir: &Path) -> Result<()> {
        let tmp = dir.join("calls.json.tmp");
        let mut json = serde_json::to_vec_pretty(self)?;
        json.push(b'\n');
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, dir.join("calls.json"))?;
        Ok(())
    }

    /// The recorded call with exactly this argv.
    pub fn find(&self, argv: &[String]) -> Option<&Call> {
        self.calls.iter().find(|c| c.argv == argv)
    }
}

/// What a shim produced.
pub struct Output {
    /// Bytes for stdout.
    pub stdout: Vec<u8>,
    /// Bytes for stderr.
    pub stderr: Vec<u8>,
    /// Exit code.
    pub exit: i32,
}

/// Serves (or, recording, makes) the call `argv` from the recording in `dir`.
pub fn serve(
    dir: &Path,
    argv: &[String],
    record: bool,
    real_path: Option<&OsString>,
) -> Result<Output> {
    let mut calls = Calls::load(dir)?;
    if let Some(c) = calls.find(argv) {
        return Ok(Output {
            stdout: std::fs::read(dir.join(&c.stdout))?,
            stderr: std::fs::read(dir.join(&c.stderr))?,
            exit: c.exit,
        });
    }
    if !record {
        anyhow::bail!(
            "no recording of `{}` in {}; refresh the recordings with `make compare-record`",
            argv.join(" "),
            dir.display()
        );
    }
    let real_path = real_path.context("record mode without COMPARE_REAL_PATH")?;
    let program = find_program(&argv[0], real_path).with_context(|| {
        format!(
            "{} is not installed (not on PATH); install it to record this case",
            argv[0]
        )
    })?;
    let mut cmd = Command::new(program);
    cmd.args(&argv[1..])
        .env("PATH", real_path)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null());
    if let Some(home) = std::env::var_os(REAL_HOME_VAR) {
        cmd.env("HOME", home);
    }
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {}", argv[0]))?;
    let exit = platform::exit_code(out.status);
    let n = calls.calls.len();
    let call = Call {
        argv: argv.to_vec(),
        exit,
        stdout: format!("{n:03}.stdout"),
        stderr: format!("{n:03}.stderr"),
    };
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(&call.stdout), &out.stdout)?;
    std::fs::write(dir.join(&call.stderr), &out.stderr)?;
    calls.calls.push(call);
    calls.save(dir)?;
    Ok(Output {
        stdout: out.stdout,
        stderr: out.stderr,
        exit,
    })
}

/// Finds an executable named `name` on `path`.
pub fn find_program(name: &str, path: &OsString) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| p.is_file() && platform::is_executable(p))
}

/// Runs as a shim when invoked under a program's name. Returns the exit code, or
/// `None` when this process is not a shim.
pub fn main_if_shim(args: &[OsString]) -> Option<i32> {
    let mode = std::env::var(MODE_VAR).ok()?;
    let name = Path::new(args.first()?).file_name()?.to_str()?.to_string();
    if name == "compare" {
        return None;
    }
    let dir = PathBuf::from(std::env::var_os(RECORDING_VAR)?);
    let mut argv = vec![name];
    argv.extend(args[1..].iter().map(|a| a.to_string_lossy().into_owned()));
    let real_path = std::env::var_os(REAL_PATH_VAR);
    match serve(&dir, &argv, mode == "record", real_path.as_ref()) {
        Ok(out) => {
            let _ = std::io::stdout().write_all(&out.stdout);
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().write_all(&out.stderr);
            Some(out.exit)
        }
        Err(e) => {
            eprintln!("compare shim: {e:#}");
            Some(127)
        }
    }
}

/// Makes `dir` hold one symlink per program, each pointing at `target`.
pub fn install(dir: &Path, programs: &[String], target: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    for p in programs {
        platform::symlink(target, &dir.join(p))
            .with_context(|| format!("cannot create the shim for {p}"))?;
    }
    Ok(())
}

/// Which programs of a list are installed on `path`: name to resolved path.
pub fn installed(programs: &[String], path: &OsString) -> BTreeMap<String, Option<PathBuf>> {
    programs
        .iter()
        .map(|p| (p.clone(), find_program(p, path)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("harness-shim-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn records_once_then_replays_the_same_bytes() {
        let dir = tmp("rec");
        let path = std::env::var_os("PATH").unwrap();
        let argv: Vec<String> = ["sh", "-c", "echo out; echo err >&2; date +%N; exit 3"]
            .map(String::from)
            .to_vec();
        let first = serve(&dir, &argv, true, Some(&path)).unwrap();
        assert_eq!(first.exit, 3);
        assert!(first.stdout.starts_with(b"out\n"));
        assert_eq!(first.stderr, b"err\n");
        // A second call, even in record mode, is served: the nanoseconds do not move.
        let again = serve(&dir, &argv, true, Some(&path)).unwrap();
        assert_eq!(again.stdout, first.stdout);
        let replayed = serve(&dir, &argv, false, None).unwrap();
        assert_eq!(replayed.stdout, first.stdout);
        assert_eq!(replayed.exit, 3);
        let calls = Calls::load(&dir).unwrap();
        assert_eq!(calls.calls.len(), 1);
        assert_eq!(calls.calls[0].argv, argv);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn replay_of_an_unrecorded_call_names_the_fix() {
        let dir = tmp("miss");
        let e = serve(&dir, &["git".into(), "log".into()], false, None)
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("make compare-record"));
    }

    #[test]
    fn recording_a_missing_program_says_to_install_it() {
        let dir = tmp("missing");
        let path = OsString::from("/nonexistent");
        let e = serve(&dir, &["ruff".into()], true, Some(&path))
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("ruff is not installed"), "{e:#}");
    }

    #[test]
    fn argv_is_the_key() {
        let dir = tmp("key");
        let path = std::env::var_os("PATH").unwrap();
        serve(&dir, &["echo".into(), "a".into()], true, Some(&path)).unwrap();
        serve(&dir, &["echo".into(), "b".into()], true, Some(&path)).unwrap();
        let b = serve(&dir, &["echo".into(), "b".into()], false, None).unwrap();
        assert_eq!(b.stdout, b"b\n");
        assert!(serve(&dir, &["echo".into(), "a".into(), "b".into()], false, None).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
