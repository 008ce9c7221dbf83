//! Big outputs: what `lens` costs in time and memory when a command prints a
//! gigabyte, and what it keeps, against `cat` writing the same bytes to a file
//! and against rtk on a large cargo log. `lens-bench big` runs these and writes
//! them to `results/reliability.json`.
//!
//! Every timing is the median of alternated runs (A B A B …) in one process, so
//! the ratios compare arms under the same load; peak RSS is read by
//! `/usr/bin/time -f %M`.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// One command, run with Lens's store in the scratch directory.
pub struct Runner {
    /// Where inputs, copies and the store go.
    pub scratch: PathBuf,
    /// PATH for the arms (a shim directory first, when one is set up).
    pub path: String,
}

/// A timed run: wall seconds, peak RSS in KiB, and what it printed.
pub struct Ran {
    /// Wall-clock seconds.
    pub secs: f64,
    /// Peak resident set, KiB.
    pub rss_kib: u64,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
}

impl Runner {
    /// The config file the arms read (`LENS_CONFIG`).
    pub fn config(&self) -> PathBuf {
        self.scratch.join("config.toml")
    }

    /// With `whole`, the arms' store keeps a run whole however large (the
    /// throughput rows compare `lens show` with the input byte for byte);
    /// without, Lens's defaults apply (`[store] max_run_bytes` = 256 MiB).
    pub fn store_whole(&self, whole: bool) -> Result<()> {
        if whole {
            std::fs::write(self.config(), "[store]\nmax_run_bytes = \"64g\"\n")?;
        } else if self.config().exists() {
            std::fs::remove_file(self.config())?;
        }
        Ok(())
    }

    /// The store, log and config the arms use.
    pub fn store(&self) -> PathBuf {
        self.scratch.join("store")
    }

    /// Runs `argv` under `/usr/bin/time`, stdout to `into` (a file) or captured.
    pub fn run(&self, argv: &[String], into: Option<&Path>) -> Result<Ran> {
        self.run_from(argv, None, into)
    }

    /// [`Runner::run`] with stdin read from `from` (else empty).
    pub fn run_from(
        &self,
        argv: &[String],
        from: Option<&Path>,
        into: Option<&Path>,
    ) -> Result<Ran> {
        let rss = self.scratch.join("rss.txt");
        let mut cmd = Command::new("/usr/bin/time");
        cmd.arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&rss)
            .args(argv)
            .env("PATH", &self.path)
            .env("LENS_STORE", self.store())
            .env("LENS_LOG_DIR", self.scratch.join("log"))
            .env("LENS_CONFIG", self.config())
            .current_dir(&self.scratch)
            .stderr(Stdio::piped());
        match from {
            Some(p) => cmd.stdin(File::open(p)?),
            None => cmd.stdin(Stdio::null()),
        };
        match into {
            Some(p) => cmd.stdout(File::create(p)?),
            None => cmd.stdout(Stdio::piped()),
        };
        let t = Instant::now();
        let out = cmd.output().with_context(|| {
            format!(
                "cannot run {} (is /usr/bin/time installed?)",
                argv.join(" ")
            )
        })?;
        let secs = t.elapsed().as_secs_f64();
        let rss_kib = std::fs::read_to_string(&rss)?
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0);
        Ok(Ran {
            secs,
            rss_kib,
            stdout: out.stdout,
            stderr: out.stderr,
        })
    }

    /// Empties the store between runs: a gigabyte per run would fill the disk.
    pub fn clear_store(&self) {
        let _ = std::fs::remove_dir_all(self.store());
    }
}

/// Writes `size` bytes of `line` repeated (cut at `size`) to `path`.
pub fn write_input(path: &Path, line: &[u8], size: u64) -> Result<()> {
    let mut f = std::io::BufWriter::with_capacity(8 << 20, File::create(path)?);
    let block = line.repeat((8 << 20) / line.len().max(1) + 1);
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        f.write_all(&block[..n])?;
        left -= n as u64;
    }
    f.flush()?;
    Ok(())
}

/// True when `lens show handle` prints exactly the bytes of `file`.
pub fn show_matches(runner: &Runner, lens: &Path, handle: &str, file: &Path) -> Result<bool> {
    let mut child = Command::new(lens)
        .args(["show", handle])
        .env("LENS_STORE", runner.store())
        .env("LENS_CONFIG", runner.config())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut shown = child.stdout.take().context("no stdout")?;
    let mut want = File::open(file)?;
    let (mut a, mut b) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    let mut same = true;
    loop {
        let n = read_full(&mut shown, &mut a)?;
        let m = read_full(&mut want, &mut b)?;
        if n != m || a[..n] != b[..m] {
            same = false;
            break;
        }
        if n == 0 {
            break;
        }
    }
    drop(shown);
    let _ = child.wait();
    Ok(same)
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The handle in the first marker or notice of a view.
pub fn handle_in(text: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(text);
    let i = s.find("handle=")?;
    s.get(i + 7..i + 15).map(str::to_string)
}

/// The median of some seconds.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// One size-and-shape of output through Lens against `cat` into a file.
#[derive(Serialize)]
pub struct Throughput {
    /// How the output reached Lens ([`Via::name`]).
    pub path: String,
    /// What the lines look like.
    pub input: String,
    /// Bytes.
    pub bytes: u64,
    /// Median seconds of `cat INPUT > COPY`.
    pub cat_secs: f64,
    /// Median seconds of `lens cat INPUT` (view to a pipe, output to the store).
    pub lens_secs: f64,
    /// `lens_secs / cat_secs`.
    pub ratio: f64,
    /// Fastest run of `cat INPUT > COPY`, seconds.
    pub cat_best_secs: f64,
    /// Fastest run of `lens cat INPUT`, seconds.
    pub lens_best_secs: f64,
    /// `lens_best_secs / cat_best_secs`: the ratio with the machine's
    /// interference least in it (it only ever adds time).
    pub best_ratio: f64,
    /// Peak RSS of Lens, MiB (the highest of its runs).
    pub lens_rss_mib: f64,
    /// Bytes of the view Lens printed.
    pub view_bytes: usize,
    /// `lens show HANDLE` printed the input byte for byte.
    pub show_identical: bool,
}

/// How the output reaches Lens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// `lens cat FILE`: Lens runs the command.
    Run,
    /// `lens --as make < FILE`: a saved log.
    As,
    /// `lens hook claude < EVENT`: a Claude Code event whose
    /// `persistedOutputPath` is FILE.
    Hook,
}

impl Via {
    /// How the row names it.
    pub fn name(self) -> &'static str {
        match self {
            Via::Run => "lens cat FILE",
            Via::As => "lens --as make < FILE",
            Via::Hook => "lens hook claude < EVENT (persistedOutputPath: FILE)",
        }
    }
}

/// Runs `input` (already written to `file`) `runs` times each through cat and
/// Lens, alternated.
pub fn throughput(
    runner: &Runner,
    lens: &Path,
    input: &str,
    file: &Path,
    runs: usize,
) -> Result<Throughput> {
    throughput_by(runner, lens, input, file, runs, Via::Run)
}

/// [`throughput`] with the output reaching Lens by `path`.
pub fn throughput_by(
    runner: &Runner,
    lens: &Path,
    input: &str,
    file: &Path,
    runs: usize,
    via: Via,
) -> Result<Throughput> {
    let bytes = std::fs::metadata(file)?.len();
    let copy = runner.scratch.join("copy");
    let cat = vec!["cat".to_string(), file.display().to_string()];
    let lens_s = lens.display().to_string();
    let event = runner.scratch.join("event.json");
    let (through, stdin): (Vec<String>, Option<&Path>) = match via {
        Via::Run => (vec![lens_s, "cat".into(), file.display().to_string()], None),
        Via::As => (vec![lens_s, "--as".into(), "make".into()], Some(file)),
        Via::Hook => {
            // What Claude Code 2.1.328 hands over for a command whose output
            // it persisted: the first 30,000 characters inline, the path.
            let mut head = vec![0u8; 30_000];
            let n = read_full(&mut File::open(file)?, &mut head)?;
            let e = serde_json::json!({
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "cwd": runner.scratch.display().to_string(),
                "tool_input": {"command": "make", "description": "build"},
                "tool_response": {
                    "stdout": String::from_utf8_lossy(&head[..n]),
                    "stderr": "", "interrupted": false, "isImage": false,
                    "persistedOutputPath": file.display().to_string(),
                },
            });
            std::fs::write(&event, e.to_string())?;
            (vec![lens_s, "hook".into(), "claude".into()], Some(&event))
        }
    };
    let (mut cat_t, mut lens_t, mut rss) = (Vec::new(), Vec::new(), 0u64);
    let mut last_view = Vec::new();
    for _ in 0..runs {
        runner.clear_store();
        let c = runner.run(&cat, Some(&copy))?;
        std::fs::remove_file(&copy)?;
        cat_t.push(c.secs);
        runner.clear_store();
        let l = runner.run_from(&through, stdin, None)?;
        lens_t.push(l.secs);
        rss = rss.max(l.rss_kib);
        last_view = l.stdout;
    }
    // A hook past its time limit answers nothing: no handle, and the row says so.
    let show_identical = match handle_in(&last_view) {
        Some(h) => show_matches(runner, lens, &h, file)?,
        None if via == Via::Run => bail!("Lens printed no marker"),
        None => false,
    };
    runner.clear_store();
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (cb, lb) = (best(&cat_t), best(&lens_t));
    let (c, l) = (median(cat_t), median(lens_t));
    Ok(Throughput {
        path: via.name().to_string(),
        input: input.to_string(),
        bytes,
        cat_secs: round3(c),
        lens_secs: round3(l),
        ratio: round3(l / c),
        cat_best_secs: round3(cb),
        lens_best_secs: round3(lb),
        best_ratio: round3(lb / cb),
        lens_rss_mib: round1(rss as f64 / 1024.0),
        view_bytes: last_view.len(),
        show_identical,
    })
}

/// One arm on a cargo log: time, memory, and whether the error survived.
#[derive(Serialize)]
pub struct LogArm {
    /// `lens` or `rtk`.
    pub arm: String,
    /// Median seconds.
    pub secs: f64,
    /// Peak RSS, MiB (the highest of its runs).
    pub rss_mib: f64,
    /// Bytes printed (both streams).
    pub view_bytes: usize,
    /// The error on the log's last line is in the view.
    pub error_kept: bool,
    /// A line of the view that says the capture was cut, if one does.
    pub truncation_notice: Option<String>,
}

/// A cargo log of `mb` MB run through a `cargo` shim by each arm, `runs` times
/// each, alternated.
pub fn cargo_log(
    runner: &Runner,
    arms: &[(&str, Vec<String>)],
    runs: usize,
    needle: &str,
) -> Result<Vec<LogArm>> {
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); arms.len()];
    let mut rss = vec![0u64; arms.len()];
    let mut last: Vec<Option<Ran>> = (0..arms.len()).map(|_| None).collect();
    for _ in 0..runs {
        for (k, (_, argv)) in arms.iter().enumerate() {
            runner.clear_store();
            let r = runner.run(argv, None)?;
            times[k].push(r.secs);
            rss[k] = rss[k].max(r.rss_kib);
            last[k] = Some(r);
        }
    }
    runner.clear_store();
    let mut out = Vec::new();
    for (k, (name, _)) in arms.iter().enumerate() {
        let r = last[k].take().context("no run")?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&r.stderr)
        );
        out.push(LogArm {
            arm: name.to_string(),
            secs: round3(median(std::mem::take(&mut times[k]))),
            rss_mib: round1(rss[k] as f64 / 1024.0),
            view_bytes: r.stdout.len() + r.stderr.len(),
            error_kept: text.contains(needle),
            truncation_notice: text
                .lines()
                .find(|l| l.contains("truncated"))
                .map(str::to_string),
        });
    }
    Ok(out)
}

/// Puts a `cargo` on `dir` that prints `log` on stderr and fails as cargo does.
pub fn cargo_shim(dir: &Path, log: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let shim = dir.join("cargo");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\ncat '{}' >&2\nexit 101\n", log.display()),
    )?;
    let ok = Command::new("chmod")
        .arg("+x")
        .arg(&shim)
        .status()?
        .success();
    if !ok {
        bail!("cannot make {} executable", shim.display());
    }
    Ok(())
}

/// Lens as a process: a closed reader, the per-run store bound, a run killed
/// outright, and memory on error lines over both streams (issue 22).
#[derive(Serialize)]
pub struct Process {
    /// `lens yes` whose reader closes: seconds from the close to Lens's exit.
    pub closed_reader_exit_secs: f64,
    /// Its exit code (141: SIGPIPE, as `yes` raw).
    pub closed_reader_exit_code: Option<i32>,
    /// Bytes it left in the store.
    pub closed_reader_stored_bytes: u64,
    /// `lens yes | head -1`: seconds from the start to Lens's exit, its exit
    /// code (141 as raw) and the bytes it left in the store.
    pub head_one_secs: f64,
    pub head_one_exit_code: Option<i32>,
    pub head_one_stored_bytes: u64,
    /// The bytes written through `lens` for the store-bound run.
    pub bound_input_bytes: u64,
    /// What that run stored (the default max_run_bytes is 256 MiB).
    pub bound_stored_bytes: u64,
    /// Its view said which lines were not stored.
    pub bound_notice: bool,
    /// A run SIGKILLed after printing 1,000 lines: the next run named it and
    /// `lens show` gave back all 1,000 lines.
    pub killed_recovered: bool,
    /// Seconds the next run took to notice and log it.
    pub killed_next_run_secs: f64,
    /// Peak RSS of Lens on `errors_bytes` of error lines, half on each stream:
    /// the highest of its runs.
    pub errors_rss_mib: f64,
    /// The peak RSS of each of those runs.
    pub errors_rss_runs_mib: Vec<f64>,
    /// The size of that output.
    pub errors_bytes: u64,
}

/// Runs the process measurements with `lens`; `errors_bytes` of error lines.
pub fn process(runner: &Runner, lens: &Path, errors_bytes: u64) -> Result<Process> {
    let env = |c: &mut Command| {
        c.env("PATH", &runner.path)
            .env("LENS_STORE", runner.store())
            .env("LENS_LOG_DIR", runner.scratch.join("log"))
            .env("LENS_CONFIG", runner.config())
            .current_dir(&runner.scratch)
            .stdin(Stdio::null());
    };
    // A reader that goes after 200 ms, as `lens yes | head -1` would once fed.
    runner.clear_store();
    let mut c = Command::new(lens);
    env(&mut c);
    let mut child = c
        .arg("yes")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    std::thread::sleep(std::time::Duration::from_millis(200));
    let t = Instant::now();
    drop(child.stdout.take());
    let status = exit_within_a_minute(&mut child, t)?;
    let closed_reader_exit_secs = round3(t.elapsed().as_secs_f64());
    let closed_reader_stored_bytes = dir_bytes(&runner.store());
    // `lens yes | head -1`: head waits for a first line, then goes.
    runner.clear_store();
    let t = Instant::now();
    let mut c = Command::new(lens);
    env(&mut c);
    let mut lens_yes = c
        .arg("yes")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let piped = lens_yes.stdout.take().context("no stdout pipe")?;
    let head = Command::new("head")
        .arg("-1")
        .stdin(Stdio::from(piped))
        .stdout(Stdio::null())
        .status()?;
    if !head.success() {
        bail!("head -1 failed after lens yes");
    }
    let head_status = exit_within_a_minute(&mut lens_yes, t)?;
    let head_one_secs = round3(t.elapsed().as_secs_f64());
    let head_one_stored_bytes = dir_bytes(&runner.store());
    // The bound: 1 GiB of 64-byte lines through `lens sh -c 'yes … | head -c'`.
    runner.clear_store();
    let bound_input_bytes: u64 = 1 << 30;
    let line = "x".repeat(63);
    let script = format!("yes {line} | head -c {bound_input_bytes}");
    let bound = runner.run(
        &[lens.display().to_string(), "sh".into(), "-c".into(), script],
        None,
    )?;
    let bound_stored_bytes = dir_bytes(&runner.store());
    let bound_notice =
        String::from_utf8_lossy(&bound.stderr).contains("passed through whole and was not stored");
    // Killed outright after 1,000 lines; the next run logs and names it.
    runner.clear_store();
    let mut c = Command::new("timeout");
    env(&mut c);
    c.args(["-s", "KILL", "2"])
        .arg(lens)
        .args(["sh", "-c", "seq 1 1000; sleep 30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let t = Instant::now();
    let mut c = Command::new(lens);
    env(&mut c);
    let next = c.arg("true").output()?;
    let killed_next_run_secs = round3(t.elapsed().as_secs_f64());
    let said = String::from_utf8_lossy(&next.stderr).into_owned();
    let killed_recovered = match said.split("lens show ").nth(1).and_then(|h| h.get(..8)) {
        Some(h) => {
            let mut c = Command::new(lens);
            env(&mut c);
            let shown = c.args(["show", h]).output()?;
            let want: String = (1..=1000).map(|i| format!("{i}\n")).collect();
            shown.stdout == want.as_bytes()
        }
        None => false,
    };
    // Memory on error lines over both streams.
    runner.clear_store();
    let half = errors_bytes / 2;
    let err = "error[E0308]: mismatched types at src/lib.rs:10:5 expected u32 found i64";
    let script = format!("yes '{err}' | head -c {half}; yes '{err}' | head -c {half} >&2");
    // Peak memory here moves with how the two readers interleave: the highest
    // of a few runs is the figure a user can rely on.
    let mut errors_rss = Vec::new();
    for _ in 0..3 {
        let errors = runner.run(
            &[
                lens.display().to_string(),
                "sh".into(),
                "-c".into(),
                script.clone(),
            ],
            None,
        )?;
        errors_rss.push(round1(errors.rss_kib as f64 / 1024.0));
        runner.clear_store();
    }
    Ok(Process {
        closed_reader_exit_secs,
        closed_reader_exit_code: exit_code(status),
        closed_reader_stored_bytes,
        head_one_secs,
        head_one_exit_code: exit_code(head_status),
        head_one_stored_bytes,
        bound_input_bytes,
        bound_stored_bytes,
        bound_notice,
        killed_recovered,
        killed_next_run_secs,
        errors_rss_mib: errors_rss.iter().copied().fold(0.0, f64::max),
        errors_rss_runs_mib: errors_rss,
        errors_bytes,
    })
}

/// Waits for `child`, killing it a minute after `since`.
fn exit_within_a_minute(
    child: &mut std::process::Child,
    since: Instant,
) -> Result<std::process::ExitStatus> {
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(s);
        }
        if since.elapsed().as_secs() > 60 {
            let _ = child.kill();
            return Ok(child.wait()?);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The exit code a shell would show: 128 + the signal for a signal death.
fn exit_code(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.code().or_else(|| status.signal().map(|s| 128 + s))
}

/// Bytes of the regular files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_cut_at_their_size_and_handles_are_found() {
        let dir = std::env::temp_dir().join(format!("lens-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("in");
        write_input(&p, b"abc\n", 10).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abc\nabc\nab");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            handle_in(b"x\n[lens: elided stdout 1-2 (2 lines: bulk) handle=0123abcd]\n").as_deref(),
            Some("0123abcd")
        );
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    }
}
