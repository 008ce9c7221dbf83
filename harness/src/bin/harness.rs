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
//! This file parses each subcommand's flags and dispatches; the work is in the
//! library: [`harness::sweep`] (plan, run, report, guest-cell),
//! [`harness::session`], [`harness::shard::merge_files`],
//! [`harness::replay::transcripts`], [`harness::model_server::serve`].
//!
//! `harness X --help` prints X's help text from [`SUBCOMMANDS`]; each parser
//! refuses a flag its help text does not name, and the tests below check that
//! it handles every flag the text does name.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use harness::driver::{self, Driver, Model};
use harness::isolation::Isolation;
use harness::retention::VARIANTS;
use harness::sweep::{self, SweepArgs};
use harness::{session, shard};

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

fn parse(args: &[String]) -> Result<SweepArgs> {
    let mut a = SweepArgs {
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
        Some("plan") => parse(&args[1..]).and_then(|a| sweep::plan_and_maybe_run(a, false)),
        Some("run") => parse(&args[1..]).and_then(|a| sweep::plan_and_maybe_run(a, true)),
        Some("report") => args
            .get(1)
            .context("harness report needs a results file")
            .and_then(|f| sweep::report(Path::new(f))),
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
    harness::model_server::serve(&script, &log, port_file)
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
    shard::merge_files(&files, out, save)
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
    let flag = |f: &str| {
        args.iter()
            .position(|a| a == f)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    sweep::guest_cell(sweep::GuestCell {
        task: get("--task")?,
        variant: get("--variant")?,
        driver: get("--driver")?,
        work: get("--work")?,
        out: get("--out")?,
        model_url: flag("--model-url"),
        model_key: flag("--model-key"),
    })
}

/// `harness session plan|run|report`.
fn session(args: &[String]) -> Result<()> {
    let (sub, rest) = match args.split_first() {
        Some((s, r)) => (s.as_str(), r),
        None => bail!("harness session needs plan, run or report; see harness --help"),
    };
    if sub == "report" {
        let file = rest
            .first()
            .context("harness session report needs a results file")?;
        return session::print_report(file);
    }
    if sub != "plan" && sub != "run" {
        bail!("unknown session subcommand {sub:?}; use plan, run or report");
    }
    let mut a = session::SessionArgs {
        driver: Driver::Scripted,
        model: Model::Real,
        only: Vec::new(),
        pairs: session::default_pairs(),
        seed: 20261201,
        go: false,
        out: None,
        save: false,
        resume: false,
    };
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let mut val = || it.next().with_context(|| format!("{flag} needs a value"));
        known("session", flag, SESSION_HELP)?;
        match flag.as_str() {
            "--driver" => a.driver = driver::parse_or_bail(val()?)?,
            "--model" => a.model = Model::parse(val()?)?,
            "--sessions" => {
                a.only = val()?
                    .split(',')
                    .filter(|x| !x.is_empty())
                    .map(String::from)
                    .collect()
            }
            "--pairs" => {
                a.pairs = val()?.parse().context("--pairs takes a whole number")?;
                if a.pairs == 0 {
                    bail!("--pairs must be at least 1");
                }
            }
            "--seed" => a.seed = val()?.parse().context("--seed takes a whole number")?,
            "--run" => a.go = true,
            "--out" => a.out = Some(PathBuf::from(val()?)),
            "--save" => a.save = true,
            "--resume" => a.resume = true,
            "--isolation" => {
                let v = val()?;
                if v != "dir" {
                    bail!("--isolation {v}: sessions run in a fresh directory only (dir); microVM sessions are not built yet");
                }
            }
            other => bail!("unknown argument {other:?}; see harness --help"),
        }
    }
    session::cmd(sub == "run", a)
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
    harness::replay::transcripts(&files, json_out, store.as_deref())
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
