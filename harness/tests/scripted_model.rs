//! The retention cell end to end through each real agent CLI with the scripted
//! model (`--model scripted`): Claude Code, Codex, Gemini CLI and OpenCode at
//! their pinned versions run against the model server on 127.0.0.1, which plays
//! the deterministic agent, in the raw, level 2 and hook variants of a small
//! task, each cell in a directory. No credential, no network. Skipped with one
//! line when the CLIs are not installed (`make agents`), unless
//! LENS_REQUIRE_AGENTS=1.

mod agents_ready;
mod lens_bin;

use std::path::{Path, PathBuf};

use harness::agent_cli::AgentCli;
use harness::driver::{Driver, Model};
use harness::retention::{self, Cell, CellResult, Place, Tools};

fn available() -> bool {
    // Every CLI is checked (and named when missing), not only the first.
    let ready: Vec<bool> = AgentCli::ALL
        .iter()
        .map(|c| agents_ready::available(*c))
        .collect();
    ready.iter().all(|r| *r)
}

fn run(driver: Driver, task: &harness::tasks::Task, root: &Path, tools: &Tools) -> Vec<CellResult> {
    ["raw", "level2", "hook"]
        .iter()
        .map(|v| {
            let cell = Cell {
                task,
                variant: v.to_string(),
                repeat: 1,
            };
            let r = retention::run_cell(
                &cell,
                driver,
                Model::Scripted,
                Place::Dir,
                &root.join(driver.name()),
                tools,
            )
            .unwrap();
            eprintln!(
                "{} {v}: success {} · {:?} tokens · {} calls · {} bytes read · {:?} printed · {} views · {} fetches · {} reruns · {:?}",
                driver.name(),
                r.success,
                r.tokens_total,
                r.tool_calls,
                r.bytes_read,
                r.printed_bytes,
                r.views,
                r.fetches,
                r.reruns,
                r.commands
            );
            r
        })
        .collect()
}

/// Runs the harness binary with `args` and `--out out_file`, the lens under
/// test as LENS_BIN; asserts it succeeded and returns its stdout.
fn harness_run(args: &[&str], out_file: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .arg("--out")
        .arg(out_file)
        .env("LENS_BIN", lens_bin::lens_binary())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The last-line-trap task, a fresh scratch root named `name`, and the tools
/// a cell runs with. Every lens the cells run writes under the root (the CLIs
/// get these variables in their env).
fn cell_setup(name: &str) -> (Vec<harness::tasks::Task>, PathBuf, Tools) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let tasks = harness::tasks::load_all(&repo.join("tasks"), &["last-line-trap".into()]).unwrap();
    let root = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    std::env::set_var("LENS_STORE", root.join("store"));
    std::env::set_var("LENS_LOG_DIR", root.join("log"));
    std::env::set_var("LENS_CONFIG", root.join("none.toml"));
    let lens = lens_bin::lens_binary();
    let tools = Tools {
        lens_dir: lens.parent().unwrap().to_path_buf(),
        rtk_dir: None,
        harness: PathBuf::new(),
    };
    (tasks, root, tools)
}

#[test]
fn every_cli_works_a_cell_per_variant_through_the_scripted_model() {
    if !available() {
        return;
    }
    let (tasks, root, tools) = cell_setup("lens-scripted-model");
    let task = &tasks[0];
    // Two CLIs at a time: the machine may have two cores.
    let lanes = [
        [Driver::Opencode, Driver::Codex],
        [Driver::Gemini, Driver::Claude],
    ];
    let results: Vec<(Driver, Vec<CellResult>)> = std::thread::scope(|s| {
        let handles: Vec<_> = lanes
            .iter()
            .map(|lane| {
                let (root, tools) = (&root, &tools);
                s.spawn(move || {
                    lane.iter()
                        .map(|d| (*d, run(*d, task, root, tools)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (driver, cells) in &results {
        let cli = driver.cli().unwrap();
        for c in cells {
            let what = format!("{} {}: {c:?}", driver.name(), c.variant);
            assert!(c.excluded.is_none() && c.error.is_none(), "{what}");
            assert!(c.success, "{what}");
            // The tokens are the model server's, and the record names the CLI.
            assert!(c.tokens_total.unwrap() > 1000, "{what}");
            let agent = c.agent.as_ref().unwrap();
            assert_eq!(agent.cli, cli.name());
            assert_eq!(agent.version.as_deref(), Some(cli.version()), "{what}");
            assert_eq!(agent.model.as_deref(), Some("scripted"));
            let first = &c.commands[0];
            match c.variant.as_str() {
                "level2" => {
                    assert_eq!(first, "lens --level 2 python3 audit.py", "{what}");
                    assert!(c.views >= 1, "{what}");
                }
                v => {
                    assert_eq!(first, "python3 audit.py", "{what}");
                    if v == "raw" {
                        assert_eq!(c.views, 0, "{what}");
                    }
                }
            }
            assert!(c.commands.iter().any(|x| x.contains("/fix")), "{what}");
        }
        let (raw, level2, hook) = (&cells[0], &cells[1], &cells[2]);
        assert!(level2.bytes_read < raw.bytes_read, "{}", driver.name());
        // Codex hands its hook only ~10 KB of a big output and no path to the
        // rest, so its hook passes this one through; the others get the view.
        if *driver != Driver::Codex {
            assert!(hook.views >= 1, "{} hook: {hook:?}", driver.name());
            assert!(hook.bytes_read < raw.bytes_read, "{}", driver.name());
        }
        // Every CLI cuts the 190 KB raw output itself and says so (Claude Code,
        // OpenCode and Gemini CLI name the file they saved it to, Codex the
        // characters it cut): the record says how much the command printed.
        // (OpenCode's saved file and its cut vary from run to run.)
        assert_eq!(raw.agent_cuts, 1, "{raw:?}");
        assert!(raw.printed_bytes.unwrap() > 2 * raw.bytes_read, "{raw:?}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

// Kilo Code CLI 7.7.7 as a driver (`harness run --driver kilo --model
// scripted`): one task, raw and with Lens's plugin; its stream is OpenCode's.
#[test]
fn kilo_works_a_cell_through_the_scripted_model() {
    if !agents_ready::available(AgentCli::Kilo) {
        return;
    }
    let (tasks, root, tools) = cell_setup("lens-scripted-kilo");
    let cells: Vec<CellResult> = ["raw", "hook"]
        .iter()
        .map(|v| {
            let cell = Cell {
                task: &tasks[0],
                variant: v.to_string(),
                repeat: 1,
            };
            retention::run_cell(
                &cell,
                Driver::Kilo,
                Model::Scripted,
                Place::Dir,
                &root,
                &tools,
            )
            .unwrap()
        })
        .collect();
    for c in &cells {
        let what = format!("kilo {}: {c:?}", c.variant);
        assert!(c.excluded.is_none() && c.error.is_none(), "{what}");
        assert!(c.success, "{what}");
        assert!(c.tokens_total.unwrap() > 1000, "{what}");
        let agent = c.agent.as_ref().unwrap();
        assert_eq!(agent.cli, "kilo");
        assert_eq!(agent.version.as_deref(), Some("7.7.7"), "{what}");
        assert_eq!(c.commands[0], "python3 audit.py", "{what}");
        assert!(c.commands.iter().any(|x| x.contains("/fix")), "{what}");
    }
    let (raw, hook) = (&cells[0], &cells[1]);
    assert_eq!(raw.views, 0, "{raw:?}");
    assert!(hook.views >= 1, "{hook:?}");
    assert!(hook.bytes_read < raw.bytes_read, "{hook:?}");
    let _ = std::fs::remove_dir_all(&root);
}

// The preflight starts the agent as a cell does and, when it cannot start,
// refuses with the agent's own words: here Codex 0.169 given the `--full-auto`
// the old driver passed.
#[test]
fn the_preflight_refuses_an_agent_that_cannot_start_in_its_own_words() {
    if !available() {
        return;
    }
    assert_eq!(Driver::Codex.start_check(Model::Scripted, &[]), None);
    let why = Driver::Codex
        .start_check(Model::Scripted, &["--full-auto"])
        .expect("codex 0.169 rejects --full-auto");
    assert!(
        why.starts_with("the codex agent cannot start: ")
            && why.contains("unexpected argument '--full-auto'")
            && why.contains("no model request"),
        "{why}"
    );
}

// `harness plan --driver codex` where codex cannot start: the plan says why and
// starts nothing (no program, no key; or no pinned install behind the
// scripted model).
#[test]
fn a_plan_for_an_agent_that_is_missing_says_why_and_spends_nothing() {
    let empty = std::env::temp_dir().join(format!("lens-no-agents-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    for model in ["real", "scripted"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["plan", "--driver", "codex", "--tasks", "last-line-trap"])
            .args(["--variants", "raw", "--repeats", "1", "--isolation", "dir"])
            .args(["--model", model])
            .env("PATH", "/usr/bin:/bin")
            .env_remove("OPENAI_API_KEY")
            .env("LENS_AGENTS_BIN", &empty)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("preflight: NOT ready"), "{text}");
        assert!(!text.contains("starting codex once"), "{text}");
        assert!(
            text.contains("nothing was run and nothing was spent"),
            "{text}"
        );
        if model == "real" {
            assert!(
                text.contains("`codex` is not on PATH") && text.contains("OPENAI_API_KEY"),
                "{text}"
            );
        } else {
            assert!(text.contains("codex 0.169.0 is not installed at"), "{text}");
        }
    }
    std::fs::remove_dir_all(&empty).unwrap();
}

// `harness session run --driver claude --model scripted`: a paired session
// through the real Claude Code, the model scripted; the record says so and its
// tokens are the model server's (input only: the server reports no cache).
#[test]
fn a_paired_session_runs_through_claude_with_the_scripted_model() {
    if !available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("lens-sess-scripted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_file = dir.join("session.json");
    let text = harness_run(
        &[
            "session",
            "run",
            "--run",
            "--driver",
            "claude",
            "--model",
            "scripted",
            "--sessions",
            "python-test-fix",
            "--pairs",
            "1",
        ],
        &out_file,
    );
    assert!(
        text.contains("model scripted (scripted: the harness's model server"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    assert_eq!(v["model"], "scripted");
    assert_eq!(v["simulation"], false);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["success"], true, "{r}");
        assert_eq!(r["agent"]["model"], "scripted");
        assert!(r["tokens"]["input"].as_u64().unwrap() > 1000, "{r}");
        assert_eq!(r["tokens"]["cache_read"], 0);
        let lens = r["arm"] == "lens";
        assert_eq!(r["views"].as_u64().unwrap() > 0, lens, "{r}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// `harness run --resume` continues only a sweep measured as this one is: a
// results file of Claude Code 2.1.328 behind the scripted model resumes with
// the same install, and is refused, untouched, once the install says it is
// another version (a copy of the pinned program whose package names 2.1.327).
#[test]
fn resume_refuses_a_sweep_of_another_agent_cli_version() {
    if !agents_ready::available(AgentCli::Claude) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("lens-resume-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The other version: the same program, its package.json saying 2.1.327.
    let fake = dir.join("agents/node_modules");
    std::fs::create_dir_all(fake.join(".bin")).unwrap();
    std::fs::create_dir_all(fake.join(AgentCli::Claude.package())).unwrap();
    std::os::unix::fs::symlink(
        AgentCli::Claude.binary().canonicalize().unwrap(),
        fake.join(".bin/claude"),
    )
    .unwrap();
    std::fs::write(
        fake.join(AgentCli::Claude.package()).join("package.json"),
        r#"{"name": "@anthropic-ai/claude-code", "version": "2.1.327"}"#,
    )
    .unwrap();
    let out_file = dir.join("retention.json");
    let harness = |agents: Option<&Path>, resume: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_harness"));
        cmd.args(["run", "--run", "--driver", "claude", "--model", "scripted"])
            .args(["--tasks", "last-line-trap", "--variants", "raw"])
            .args(["--repeats", "1", "--isolation", "dir", "--out"])
            .arg(&out_file)
            .env("LENS_BIN", lens_bin::lens_binary());
        if resume {
            cmd.arg("--resume");
        }
        if let Some(a) = agents {
            cmd.env("LENS_AGENTS_BIN", a);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let (ok, text) = harness(None, false);
    assert!(ok, "{text}");
    let recorded = std::fs::read(&out_file).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&recorded).unwrap();
    assert_eq!(v["cells"].as_array().unwrap().len(), 1, "{v}");
    // The same install: the cell is kept, nothing runs again.
    let (ok, text) = harness(None, true);
    assert!(ok, "{text}");
    assert!(
        text.contains("resume: 1 of 1 cells already recorded"),
        "{text}"
    );
    // Another version: refused before anything runs, the file as it was.
    let recorded = std::fs::read(&out_file).unwrap();
    let (ok, text) = harness(Some(&fake.join(".bin")), true);
    assert!(!ok, "{text}");
    assert!(
        text.contains("another claude version (2.1.328 (pinned")
            && text.contains("2.1.327 (pinned"),
        "{text}"
    );
    assert!(!text.contains("already recorded"), "{text}");
    assert_eq!(std::fs::read(&out_file).unwrap(), recorded);
    std::fs::remove_dir_all(&dir).unwrap();
}

// `harness run --driver qwen|copilot --model scripted`: the retention cell
// through the real Qwen Code 0.24.4 and Copilot CLI 1.0.102, raw and with
// Lens installed as a user does (their after-tool hooks): every cell
// succeeds, the record names the CLI, and the hook cell reads Lens's view.
fn works_a_task_through_the_scripted_model(cli: AgentCli) {
    if !agents_ready::available(cli) {
        return;
    }
    let dir =
        std::env::temp_dir().join(format!("lens-{}-driver-{}", cli.name(), std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out_file = dir.join("retention.json");
    harness_run(
        &[
            "run",
            "--run",
            "--driver",
            cli.name(),
            "--model",
            "scripted",
            "--tasks",
            "last-line-trap",
            "--variants",
            "raw,hook",
            "--repeats",
            "1",
            "--isolation",
            "dir",
        ],
        &out_file,
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    assert_eq!(v["driver"], cli.name());
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let cell = |variant: &str| cells.iter().find(|c| c["variant"] == variant).unwrap();
    for c in cells {
        assert_eq!(c["success"], true, "{c}");
        assert_eq!(c["agent"]["cli"], cli.name());
        assert_eq!(c["agent"]["version"], cli.version());
        assert_eq!(c["commands"][0], "python3 audit.py", "{c}");
    }
    let (raw, hook) = (cell("raw"), cell("hook"));
    eprintln!(
        "{}: raw read {} B, hook read {} B",
        cli.name(),
        raw["bytes_read"],
        hook["bytes_read"]
    );
    assert_eq!(raw["views"], 0, "{raw}");
    assert!(hook["views"].as_u64().unwrap() >= 1, "{hook}");
    // The view holds the line the task needs: the model never reruns for it
    // (Copilot's own 500-character preview of the raw output does not).
    assert_eq!(hook["reruns"], 0, "{hook}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn qwen_works_a_task_through_the_scripted_model() {
    works_a_task_through_the_scripted_model(AgentCli::Qwen);
}

#[test]
fn copilot_works_a_task_through_the_scripted_model() {
    works_a_task_through_the_scripted_model(AgentCli::Copilot);
}
