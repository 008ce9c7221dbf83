//! `compare`: the byte, needle and names table of Lens against raw output and rtk.
//!
//! Invoked under another program's name it is that program's record/replay shim.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use harness::compare::{self, Mode, Settings};
use harness::isolation::vm::Job;
use harness::isolation::VmHost;
use harness::report::{self, CompareResults};
use harness::{case, env, shim};

const USAGE: &str = "\
usage: compare [--mode replay|record|live] [--cases a,b,...] [--lens PATH] [--rtk PATH | --no-rtk]
               [--out FILE | --save] [--show ARM] [--cases-dir DIR] [--work DIR]
               [--isolation dir|vm] [--vm-memory MIB]
       compare --render FILE

Runs every case in cases/ raw, through Lens at levels 2, 1 and 0, and through rtk
where rtk claims the command; prints a markdown table and writes out/compare.json
(--save: results/compare.json, the committed record, refused for a --cases subset).

  replay  (default) serve every command from the committed recordings; rtk is re-run
          when installed, else its recorded view is used and labelled so
  record  run the real tools and refresh the recordings
  live    run everything for real, each arm on a freshly set-up project
  --isolation vm  run every case live inside one microVM booted from the image
                  (make image), so both tools read the same builds; writes
                  out/compare-vm.json (--save: results/compare-vm.json)
  --show ARM     after the table, print each case's view for ARM (raw, lens-2,
                 lens-1, lens-0): what the agent would have read
  --render FILE  print the markdown table of an existing results file
  -h, --help     print this help

Examples:
  compare                                   every case, replayed: out/compare.json
  compare --cases git-status,grep           two cases
  compare --cases git-status --show lens-2  the README's git status view
  compare --save                            refresh results/compare.json
  compare --render results/compare.json     the committed table";

struct Args {
    mode: Mode,
    cases: Vec<String>,
    lens: Option<PathBuf>,
    rtk: Option<PathBuf>,
    no_rtk: bool,
    out: Option<PathBuf>,
    save: bool,
    show: Option<String>,
    cases_dir: PathBuf,
    vm: bool,
    vm_memory: u64,
    work: PathBuf,
    render: Option<PathBuf>,
}

fn parse(args: Vec<String>) -> Result<Args> {
    let mut a = Args {
        mode: Mode::Replay,
        cases: Vec::new(),
        lens: None,
        rtk: None,
        no_rtk: false,
        out: None,
        save: false,
        show: None,
        cases_dir: PathBuf::from("cases"),
        vm: false,
        vm_memory: 4096,
        work: PathBuf::from("/tmp/lens-compare"),
        render: None,
    };
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        // Only the flags USAGE names: the help and the parser cannot drift apart.
        let flags = lens_cli::flags_in(USAGE);
        if flag.starts_with('-') && !flags.contains(&flag.as_str()) {
            bail!(
                "unknown argument {flag:?}; the flags are {} (see compare --help)",
                flags.join(", ")
            );
        }
        let mut val = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--mode" => {
                let v = val()?;
                a.mode = Mode::parse(&v)
                    .with_context(|| format!("--mode {v:?}: use replay, record or live"))?;
            }
            "--cases" => {
                a.cases = val()?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            }
            "--lens" => a.lens = Some(PathBuf::from(val()?)),
            "--rtk" => a.rtk = Some(PathBuf::from(val()?)),
            "--no-rtk" => a.no_rtk = true,
            "--out" => a.out = Some(PathBuf::from(val()?)),
            "--save" => a.save = true,
            "--show" => a.show = Some(val()?),
            "--cases-dir" => a.cases_dir = PathBuf::from(val()?),
            "--work" => a.work = PathBuf::from(val()?),
            "--render" => a.render = Some(PathBuf::from(val()?)),
            "--isolation" => match val()?.as_str() {
                "dir" => a.vm = false,
                "vm" => a.vm = true,
                v => bail!("--isolation {v:?}: use dir or vm"),
            },
            "--vm-memory" => {
                a.vm_memory = val()?
                    .parse()
                    .context("--vm-memory takes MiB as a whole number")?
            }
            "-h" | "--help" => std::process::exit(lens_cli::print_help(USAGE)),
            other => bail!("unknown argument {other:?}; see compare --help"),
        }
    }
    Ok(a)
}

fn main() {
    let raw: Vec<OsString> = std::env::args_os().collect();
    if let Some(code) = shim::main_if_shim(&raw) {
        std::process::exit(code);
    }
    let args: Vec<String> = raw
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match parse(args).and_then(run) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("compare: {e:#}");
            std::process::exit(1);
        }
    }
}

fn default_lens() -> PathBuf {
    std::env::var_os("LENS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("out/release/{}/lens", std::env::consts::ARCH)))
}

fn run(a: Args) -> Result<()> {
    if let Some(file) = a.render {
        let r: CompareResults = serde_json::from_slice(
            &std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?,
        )
        .with_context(|| format!("{} is not a compare results file", file.display()))?;
        print!("{}", report::markdown(&r));
        return Ok(());
    }
    if a.vm {
        return run_in_vm(a);
    }
    let out = harness::save::destination(a.out.clone(), a.save, "compare.json");
    let lens = a.lens.unwrap_or_else(default_lens);
    let lens = lens.canonicalize().with_context(|| {
        format!(
            "no lens binary at {}; build it with `make build` or pass --lens",
            lens.display()
        )
    })?;
    let real_path = std::env::var_os("PATH").unwrap_or_default();
    let rtk = if a.no_rtk {
        None
    } else {
        a.rtk.or_else(|| shim::find_program("rtk", &real_path))
    };
    let work = a.work;
    std::fs::create_dir_all(&work)?;
    let settings = Settings {
        mode: a.mode,
        lens,
        rtk,
        work_root: work.canonicalize()?,
        self_exe: std::env::current_exe()?,
        real_path,
    };
    let cases = case::load_all(&a.cases_dir, &a.cases)?;
    if cases.is_empty() {
        bail!("no cases under {}", a.cases_dir.display());
    }
    let names: std::collections::BTreeSet<String> = cases.iter().map(|c| c.name.clone()).collect();
    harness::save::refuse_partial(&out, &names, case_names)?;
    warm_rtk(&settings);
    let mut results = Vec::new();
    let mut tools = std::collections::BTreeMap::new();
    for (i, c) in cases.iter().enumerate() {
        let t = Instant::now();
        eprint!("[{}/{}] {} ... ", i + 1, cases.len(), c.name);
        let r = compare::run_case(c, &settings).with_context(|| format!("case {}", c.name))?;
        let bytes = |n: &str| {
            r.arms
                .iter()
                .find(|x| x.name == n)
                .and_then(|x| x.measure.as_ref())
                .map_or("not claimed".to_string(), |m| format!("{} B", m.bytes))
        };
        eprintln!(
            "raw {} B, lens {}, rtk {} ({:.1}s)",
            r.raw_bytes,
            bytes("lens-2"),
            bytes("rtk"),
            t.elapsed().as_secs_f64()
        );
        for (k, v) in &r.versions {
            tools.entry(k.clone()).or_insert_with(|| v.clone());
        }
        results.push(r);
    }
    let record = CompareResults {
        command: env::command_line(),
        git_revision: env::git_revision(),
        date: env::utc_now(),
        mode: format!("{:?}", settings.mode).to_lowercase(),
        machine: env::machine(),
        tools,
        cases: results,
        vm: None,
    };
    write_results(&record, &out)?;
    if let Some(arm) = &a.show {
        for c in &record.cases {
            let view =
                compare::kept_view(&settings.work_root, &c.name, arm).with_context(|| {
                    format!(
                        "no view of {arm} for {}; arms are raw, lens-2, lens-1 and lens-0",
                        c.name
                    )
                })?;
            println!("\n$ {arm}: {}", c.name);
            print!("{}", String::from_utf8_lossy(&view));
        }
    }
    Ok(())
}

/// The case names of a compare results file.
fn case_names(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    v["cases"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn write_results(record: &CompareResults, out: &Path) -> Result<()> {
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut json = serde_json::to_vec_pretty(record)?;
    json.push(b'\n');
    std::fs::write(out, json).with_context(|| format!("cannot write {}", out.display()))?;
    print!("{}", report::markdown(record));
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// `--isolation vm`: this binary and the cases go in on a job disk; inside one
/// microVM booted from the image, `compare --mode live` runs every case against the
/// image's own lens, rtk and tools; the results come back and are stamped with the
/// accelerator and the image's manifest.
fn run_in_vm(a: Args) -> Result<()> {
    if a.mode != Mode::Replay {
        bail!("--isolation vm always runs live inside the guest; drop --mode");
    }
    if a.lens.is_some() || a.rtk.is_some() || a.no_rtk {
        bail!("--isolation vm uses the image's lens and rtk (make image rebuilds them); drop --lens/--rtk/--no-rtk");
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()?;
    let out = harness::save::destination(a.out.clone(), a.save, "compare-vm.json");
    if a.save && !a.cases.is_empty() {
        bail!("--save writes the committed record, which covers every case; drop --cases, or write elsewhere with --out");
    }
    let scratch = std::env::temp_dir().join("lens-compare-vm");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    eprintln!("preflight: booting the image once...");
    let host = VmHost::preflight(&repo, &scratch, a.vm_memory)?;
    eprintln!(
        "preflight: the image boots ({:?}: {})",
        host.machine.accel, host.accel_reason
    );
    let staged = scratch.join("job");
    std::fs::create_dir_all(staged.join("bin"))?;
    std::fs::copy(std::env::current_exe()?, staged.join("bin/compare"))?;
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&a.cases_dir)
        .arg(staged.join("cases"))
        .status()?
        .success();
    if !copied {
        bail!("cannot copy {} into the job", a.cases_dir.display());
    }
    let only = if a.cases.is_empty() {
        String::new()
    } else {
        format!(" --cases {}", a.cases.join(","))
    };
    std::fs::write(
        staged.join("run.sh"),
        format!(
            "set -u\nexport LENS_STORE=/tmp/lens-store LENS_LOG_DIR=/tmp/lens-log\n\
             mkdir -p /job/out\n\
             {{ /job/bin/compare --mode live --lens /usr/local/bin/lens --rtk /usr/local/bin/rtk \
             --cases-dir /job/cases --work /tmp/lens-compare --out /job/out/compare.json{only} \
             2>&1 > /job/out/table.md; echo $? > /job/out/code; }} | tee /job/out/progress.log\n\
             exit $(cat /job/out/code)\n"
        ),
    )?;
    let job = Job {
        staged,
        disk_mib: 1024,
        limit: Duration::from_secs(3 * 3600),
        broker: None,
        readback: vec!["/out".into()],
        echo: true,
    };
    eprintln!("running every case inside the microVM (emulated under TCG: minutes)...");
    let boot = host.machine.run(&job, &scratch.join("boot"))?;
    if let Some(why) = boot.not_started() {
        bail!("{why}; serial log tail:\n{}", boot.serial_tail(2000));
    }
    let results = boot
        .returned
        .get("/out")
        .map(|d| d.join("compare.json"))
        .and_then(|f| std::fs::read(f).ok());
    let Some(results) = results.filter(|_| boot.exit == Some(0)) else {
        bail!(
            "compare failed inside the guest (exit {:?}{}); serial log tail:\n{}",
            boot.exit,
            if boot.timed_out { ", time limit" } else { "" },
            boot.serial_tail(3000)
        );
    };
    let mut record: CompareResults = serde_json::from_slice(&results)
        .context("the guest's compare.json is not a compare results file")?;
    record.command = env::command_line();
    record.git_revision = env::git_revision();
    record.vm = Some(host.record());
    write_results(&record, &out)
}

/// rtk prints a once-a-day notice about its agent hook on its first run under a
/// HOME; a real installation has the hook, so one discarded run takes the notice out
/// of every measured view.
fn warm_rtk(s: &Settings) {
    if let Some(rtk) = &s.rtk {
        let home = s.work_root.join(".rtk-home");
        let _ = std::fs::create_dir_all(&home);
        let _ = std::process::Command::new(rtk)
            .args(["ls", "/"])
            .env("HOME", &home)
            .env_remove("XDG_DATA_HOME")
            .output();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_handles_every_flag_the_help_names_and_no_other() {
        let flags = lens_cli::flags_in(USAGE);
        assert!(flags.contains(&"--help") && flags.contains(&"-h"));
        // -h and --help print and exit; the integration test runs them.
        for flag in flags.into_iter().filter(|f| *f != "-h" && *f != "--help") {
            for tail in [vec![flag], vec![flag, "1"]] {
                if let Err(e) = parse(tail.iter().map(|s| s.to_string()).collect()) {
                    let e = format!("{e:#}");
                    assert!(!e.contains(&format!("unknown argument {flag:?}")), "{e}");
                }
            }
        }
        let e = parse(vec!["--frobnicate".into()]).err().unwrap();
        assert!(format!("{e}").contains("see compare --help"), "{e}");
    }
}
