//! Drivers: who acts in a cell. Five real agent CLIs, each read from its own JSON
//! output (see [`crate::transcript`]) into tokens, tool calls, turns and the shell
//! results it was given, and a deterministic scripted agent for tests and for
//! machines without credentials (its results say they are simulated).
//!
//! A real CLI runs either against its provider's model (`--model real`, which
//! spends credits) or against the scripted model on 127.0.0.1
//! ([`scripted_model`], `--model scripted`: no credential, no network; its
//! tokens are the model server's own counts). Claude Code, Codex, Gemini CLI,
//! OpenCode and Qwen Code can run either way; Copilot CLI only against the
//! scripted model (its JSON stream has no reader here yet); cursor-agent only
//! against its own model.

mod outcome;
pub mod scripted;
pub mod scripted_model;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::agent_cli::{AgentCli, RunSpec};
use crate::shim::find_program;
use crate::tasks::Task;
use crate::transcript::{self, Format};

pub use crate::transcript::{Agent, Tokens};
pub use outcome::{is_view, printed_bytes, Outcome, STDERR_TAIL};

/// Which model a real driver talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// The provider's own model, through the CLI's credential.
    #[default]
    Real,
    /// The scripted model on 127.0.0.1 (no credential, no network).
    Scripted,
}

impl Model {
    /// Parses `real` or `scripted`.
    pub fn parse(s: &str) -> Result<Model> {
        match s {
            "real" => Ok(Model::Real),
            "scripted" => Ok(Model::Scripted),
            _ => bail!("unknown model {s:?}; use real or scripted"),
        }
    }
}

/// How one cell asks its driver to act.
#[derive(Clone, Debug)]
pub struct Act<'a> {
    /// The model behind the CLI.
    pub model: Model,
    /// Lens is installed as a user installs it (`lens init --agent … --global`
    /// into `home`), and the prompt names the plain command.
    pub hook: bool,
    /// The agent's HOME for a scripted-model run (created; settings go there).
    pub home: &'a Path,
    /// Set when the agent runs inside a microVM cell's guest.
    pub vm: Option<&'a InVm>,
}

/// What differs for an agent inside a microVM cell's guest.
#[derive(Clone, Debug, Default)]
pub struct InVm {
    /// The scripted model's server, on the host behind the broker (`None`
    /// with a real model, or starts one for the run in the guest).
    pub model_server: Option<crate::agent_cli::Remote>,
}

/// How an agent recovered what a view left out: shell commands that fetched a
/// stored run's lines (`lens show`), and runs of the task's command after its
/// first (with or without a filter in front).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovery {
    /// `lens show` calls.
    pub fetches: u64,
    /// Runs of the task's command after the first.
    pub reruns: u64,
}

/// Counts the fetches and reruns in `commands` of a session told to run
/// `task_command`.
pub fn recovery(commands: &[String], task_command: &str) -> Recovery {
    let mut r = Recovery::default();
    let mut runs = 0u64;
    for c in commands {
        if c.contains("lens show") {
            r.fetches += 1;
        } else if c.contains(task_command) {
            runs += 1;
        }
    }
    r.reruns = runs.saturating_sub(1);
    r
}

/// How a real agent's API traffic goes through the credential broker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BrokerRoute {
    /// The variable that sets the agent's API address.
    pub base_var: &'static str,
    /// Its value inside the guest (the broker's guest-side address).
    pub base: &'static str,
    /// The credential header the API reads.
    pub header: &'static str,
    /// What precedes the key in it.
    pub prefix: &'static str,
    /// The one upstream the broker forwards to (`LENS_BROKER_UPSTREAM` overrides).
    pub upstream: &'static str,
}

/// The agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    /// Deterministic, simulated.
    Scripted,
    /// Claude Code in print mode, stream-json output.
    Claude,
    /// cursor-agent in print mode, stream-json output.
    Cursor,
    /// codex exec with JSONL output.
    Codex,
    /// Gemini CLI in headless mode, stream-json output.
    Gemini,
    /// OpenCode's `run`, JSON events.
    Opencode,
    /// Kilo Code CLI's `run` (an OpenCode fork), OpenCode's JSON events.
    Kilo,
    /// Qwen Code headless, stream-json output (Claude Code's event shapes).
    Qwen,
    /// GitHub Copilot CLI in prompt mode, behind the scripted model only.
    Copilot,
}

impl Driver {
    /// Parses a driver name.
    pub fn parse(s: &str) -> Option<Driver> {
        match s {
            "scripted" => Some(Driver::Scripted),
            "claude" => Some(Driver::Claude),
            "cursor" => Some(Driver::Cursor),
            "codex" => Some(Driver::Codex),
            "gemini" => Some(Driver::Gemini),
            "opencode" => Some(Driver::Opencode),
            "kilo" => Some(Driver::Kilo),
            "qwen" => Some(Driver::Qwen),
            "copilot" => Some(Driver::Copilot),
            _ => None,
        }
    }

    /// The driver's name.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Scripted => "scripted",
            Driver::Claude => "claude",
            Driver::Cursor => "cursor",
            Driver::Codex => "codex",
            Driver::Gemini => "gemini",
            Driver::Opencode => "opencode",
            Driver::Kilo => "kilo",
            Driver::Qwen => "qwen",
            Driver::Copilot => "copilot",
        }
    }

    /// The agent CLI the scripted model can run behind (`--model scripted`).
    pub fn cli(self) -> Option<AgentCli> {
        match self {
            Driver::Claude => Some(AgentCli::Claude),
            Driver::Codex => Some(AgentCli::Codex),
            Driver::Gemini => Some(AgentCli::Gemini),
            Driver::Opencode => Some(AgentCli::Opencode),
            Driver::Kilo => Some(AgentCli::Kilo),
            Driver::Qwen => Some(AgentCli::Qwen),
            Driver::Copilot => Some(AgentCli::Copilot),
            Driver::Cursor | Driver::Scripted => None,
        }
    }

    /// True for the simulated agent.
    pub fn simulated(self) -> bool {
        self == Driver::Scripted
    }

    /// The transcript format the agent prints, for real drivers.
    pub fn format(self) -> Option<Format> {
        match self {
            Driver::Scripted => None,
            Driver::Claude => Some(Format::ClaudeStream),
            Driver::Cursor => Some(Format::CursorStream),
            Driver::Codex => Some(Format::CodexExec),
            Driver::Gemini => Some(Format::GeminiStream),
            Driver::Opencode | Driver::Kilo => Some(Format::OpencodeJson),
            // Qwen Code 0.24.4's stream-json events have Claude Code's shapes.
            Driver::Qwen => Some(Format::ClaudeStream),
            // No reader for Copilot CLI's `--output-format json` yet: it runs
            // behind the scripted model, whose server records what it read.
            Driver::Copilot => None,
        }
    }

    /// How the agent reaches its API from inside a microVM through the credential
    /// broker: (base-URL variable, its value in the guest, credential header,
    /// header prefix, upstream). `None` for the scripted agent and for an agent
    /// whose API address cannot be set (cursor-agent).
    pub fn broker_route(self) -> Option<BrokerRoute> {
        match self {
            Driver::Claude => Some(BrokerRoute {
                base_var: "ANTHROPIC_BASE_URL",
                base: "http://10.0.2.100",
                header: "x-api-key",
                prefix: "",
                upstream: "https://api.anthropic.com",
            }),
            Driver::Codex => Some(BrokerRoute {
                base_var: "OPENAI_BASE_URL",
                base: "http://10.0.2.100/v1",
                header: "authorization",
                prefix: "Bearer ",
                upstream: "https://api.openai.com",
            }),
            Driver::Cursor
            | Driver::Gemini
            | Driver::Opencode
            | Driver::Kilo
            | Driver::Qwen
            | Driver::Copilot
            | Driver::Scripted => None,
        }
    }

    /// The variable holding the agent's API key, for real drivers.
    pub fn key_var(self) -> Option<&'static str> {
        self.binary().map(|(_, k)| k).filter(|k| !k.is_empty())
    }

    /// The agent CLI's program name, for real drivers.
    pub fn binary_name(self) -> Option<&'static str> {
        self.binary().map(|(b, _)| b)
    }

    fn binary(self) -> Option<(&'static str, &'static str)> {
        match self {
            Driver::Scripted => None,
            Driver::Claude => Some(("claude", "ANTHROPIC_API_KEY")),
            Driver::Cursor => Some(("cursor-agent", "CURSOR_API_KEY")),
            Driver::Codex => Some(("codex", "OPENAI_API_KEY")),
            Driver::Gemini => Some(("gemini", "GEMINI_API_KEY")),
            // OpenCode reads the key of whichever provider its config names.
            Driver::Opencode => Some(("opencode", "")),
            Driver::Kilo => Some(("kilo", "")),
            // Qwen Code's OpenAI auth.
            Driver::Qwen => Some(("qwen", "OPENAI_API_KEY")),
            Driver::Copilot => Some(("copilot", "COPILOT_GITHUB_TOKEN")),
        }
    }

    /// The arguments that let the agent run the task's commands unattended, as
    /// the pinned CLI spells them, and the environment they need. Claude Code
    /// refuses `--dangerously-skip-permissions` as root unless `IS_SANDBOX=1`;
    /// Codex 0.169 has no `--full-auto` (the workspace sandbox with approvals
    /// off is the same thing) and skips hooks nobody trusted in the TUI.
    pub fn unattended(self, hook: bool, in_vm: bool) -> (Vec<String>, Vec<(String, String)>) {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let mut env = Vec::new();
        let args = match self {
            Driver::Claude => {
                if is_root() {
                    env.push(("IS_SANDBOX".to_string(), "1".to_string()));
                }
                s(&["--dangerously-skip-permissions"])
            }
            // In a microVM cell the guest is the sandbox: Codex's own
            // (bubblewrap) cannot make a user namespace there, because the
            // guest's init runs the job in a chroot, and every command it
            // tried would fail with bwrap's "No permissions to create a new
            // namespace".
            Driver::Codex if in_vm => {
                let mut a = s(&["--dangerously-bypass-approvals-and-sandbox"]);
                if hook {
                    a.push("--dangerously-bypass-hook-trust".into());
                }
                a
            }
            Driver::Codex => {
                let mut a = s(&["-s", "workspace-write", "-c", "approval_policy=\"never\""]);
                if hook {
                    a.push("--dangerously-bypass-hook-trust".into());
                }
                a
            }
            Driver::Gemini | Driver::Qwen => s(&["--approval-mode", "yolo"]),
            Driver::Cursor => s(&["--force"]),
            // Kilo's bash tool asks by default, which `run` refuses:
            // `--auto` allows what no rule denies.
            Driver::Kilo => s(&["--auto"]),
            // Paths outside the cell (the task's fix script) need their own flag.
            Driver::Copilot => s(&["--allow-all-tools", "--allow-all-paths"]),
            Driver::Opencode | Driver::Scripted => Vec::new(),
        };
        (args, env)
    }

    /// The whole command line of a real-model run on `prompt`.
    fn real_args(self, prompt: &str, hook: bool, in_vm: bool) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (unattended, _) = self.unattended(hook, in_vm);
        match self {
            Driver::Claude => [
                s(&["-p", prompt, "--output-format", "stream-json", "--verbose"]),
                unattended,
            ]
            .concat(),
            Driver::Cursor => [
                s(&["-p", prompt, "--output-format", "stream-json"]),
                unattended,
            ]
            .concat(),
            // A cell is no git repository; codex refuses one it does not trust.
            Driver::Codex => [
                s(&["exec", "--json", "--skip-git-repo-check"]),
                unattended,
                s(&[prompt]),
            ]
            .concat(),
            Driver::Gemini => [s(&["-p", prompt, "-o", "stream-json"]), unattended].concat(),
            Driver::Opencode => s(&["run", "--format", "json", prompt]),
            Driver::Kilo => [s(&["run", "--format", "json"]), unattended, s(&[prompt])].concat(),
            Driver::Qwen => [s(&["-o", "stream-json"]), unattended, s(&[prompt])].concat(),
            Driver::Copilot => [s(&["-p", prompt, "--output-format", "json"]), unattended].concat(),
            Driver::Scripted => Vec::new(),
        }
    }

    /// What is missing before anything can be spent: one line each, with the fix.
    /// With the scripted model a real CLI needs only its pinned install; with
    /// the real one, the program on PATH and its credential.
    pub fn preflight(self, model: Model) -> Vec<String> {
        let Some((bin, key)) = self.binary() else {
            return Vec::new();
        };
        let mut missing = Vec::new();
        if model == Model::Scripted {
            match self.cli() {
                None => missing.push(format!(
                    "the {} agent's model cannot be scripted (its API address cannot be set); use --model real",
                    self.name()
                )),
                Some(cli) if !cli.installed() => missing.push(format!(
                    "{} {} is not installed at {}; run `make agents` (or set LENS_AGENTS_BIN)",
                    cli.name(),
                    cli.version(),
                    cli.binary().display()
                )),
                Some(_) => {}
            }
            return missing;
        }
        if self.format().is_none() {
            missing.push(format!(
                "the {} agent runs here only behind the scripted model (its output has no reader yet); use --model scripted",
                self.name()
            ));
            return missing;
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        if find_program(bin, &path).is_none() {
            missing.push(format!(
                "driver binary `{bin}` is not on PATH; install the {} CLI",
                self.name()
            ));
        }
        if !key.is_empty() && std::env::var_os(key).is_none_or(|v| v.is_empty()) {
            missing.push(format!(
                "credential {key} is not set; export it (the run is the only step that spends it)"
            ));
        }
        missing
    }

    /// Starts the agent once, as a cell would (the same flags, the same
    /// environment), on a trivial prompt in an empty directory, and returns why
    /// it could not, in its own words; `None` when it answered. With the real
    /// model this is one short model call; with the scripted one it spends
    /// nothing. `extra` arguments go after the cell's (a test uses them).
    pub fn start_check(self, model: Model, extra: &[&str]) -> Option<String> {
        if self == Driver::Scripted {
            return None;
        }
        let scratch = tempfile_path("lens-preflight");
        let (dir, home) = (scratch.join("dir"), scratch.join("home"));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Some(format!("cannot make a directory to start it in: {e}"));
        }
        let prompt = "Reply with the word ok.";
        let (args, env) = self.unattended(false, false);
        let why = match (model, self.cli()) {
            (Model::Scripted, Some(cli)) => {
                let mut spec = RunSpec::new(
                    prompt,
                    crate::model_server::Script::commands(Vec::new(), "ok"),
                    &home,
                    &dir,
                )
                .args(args)
                .args(extra.iter().copied());
                for (k, v) in &env {
                    spec = spec.env(k, v);
                }
                spec.time_limit = Duration::from_secs(120);
                match cli.run(&spec) {
                    Err(e) => Some(format!("{e:#}")),
                    Ok(run) if run.exit == 0 && !run.turns().is_empty() => None,
                    Ok(run) => Some(own_words(
                        &run.stdout,
                        &run.stderr,
                        run.exit,
                        run.turns().is_empty(),
                    )),
                }
            }
            (Model::Scripted, None) => Some(format!(
                "the {} agent's model cannot be scripted",
                self.name()
            )),
            (Model::Real, _) => {
                let (bin, _) = self.binary().expect("a real driver");
                let mut cmd = Command::new(bin);
                cmd.args(self.real_args(prompt, false, false))
                    .args(extra)
                    .envs(env)
                    .current_dir(&dir)
                    .stdin(Stdio::null());
                match run_limited(cmd, Duration::from_secs(120)) {
                    Err(e) => Some(format!("cannot start `{bin}`: {e}")),
                    Ok(run) if run.exit == 0 => None,
                    Ok(run) => Some(own_words(
                        &String::from_utf8_lossy(&run.stdout),
                        &run.stderr_tail,
                        run.exit,
                        false,
                    )),
                }
            }
        };
        let _ = std::fs::remove_dir_all(&scratch);
        why.map(|w| format!("the {} agent cannot start: {w}", self.name()))
    }

    /// Runs the agent on `prompt` in `dir` with `path` first on PATH, against
    /// its real model.
    pub fn act(
        self,
        task: &Task,
        prompt: &str,
        command: &str,
        dir: &Path,
        path: &std::ffi::OsStr,
    ) -> Result<Outcome> {
        let home = dir.with_extension("home");
        let how = Act {
            model: Model::Real,
            hook: false,
            home: &home,
            vm: None,
        };
        self.act_with(&how, task, prompt, command, dir, path)
    }

    /// Runs the agent as `how` says: on `prompt` in `dir`, `path` first on PATH.
    pub fn act_with(
        self,
        how: &Act,
        task: &Task,
        prompt: &str,
        command: &str,
        dir: &Path,
        path: &std::ffi::OsStr,
    ) -> Result<Outcome> {
        if self == Driver::Scripted {
            if how.hook {
                bail!("the hook variant needs a real agent CLI (claude, codex, gemini, opencode, kilo, qwen or copilot): the scripted driver has no hooks to install");
            }
            return scripted::act(task, command, dir, path);
        }
        if how.hook {
            install_lens(self, how.home, path)?;
        }
        if how.model == Model::Scripted {
            return self.act_scripted_model(
                how,
                scripted_model::script(task),
                task,
                prompt,
                dir,
                path,
            );
        }
        let (bin, _) = self.binary().expect("a real driver");
        let Some(format) = self.format() else {
            bail!(
                "the {} agent runs here only behind the scripted model; use --model scripted",
                self.name()
            );
        };
        let mut cmd = Command::new(bin);
        cmd.args(self.real_args(prompt, how.hook, how.vm.is_some()));
        if how.hook {
            // The hooks were installed into the cell's HOME, not the user's.
            cmd.env("HOME", how.home)
                .env("CODEX_HOME", how.home.join(".codex"));
        }
        cmd.envs(self.unattended(how.hook, how.vm.is_some()).1)
            .current_dir(dir)
            .env("PATH", path)
            .stdin(Stdio::null());
        let run = run_limited(cmd, Duration::from_secs(task.time_limit_s))?;
        let text = String::from_utf8_lossy(&run.stdout);
        let mut t = transcript::parse_as(&text, format);
        if how.hook {
            // What the model read of a hooked call is in the session Codex or
            // Gemini CLI persisted under the cell's HOME, not in its stream.
            let saved = transcript::persisted(self.name(), how.home)
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|text| transcript::parse(&text).ok());
            if let Some(saved) = saved {
                t = transcript::with_persisted(t, &saved);
            }
        }
        let mut outcome = Outcome::from_transcript(&t);
        outcome.exit = run.exit;
        outcome.stderr = run.stderr_tail;
        Ok(outcome)
    }

    /// A paired session's run of the real CLI against the scripted model: it
    /// works through `commands` as the prompt lists them ([`scripted_model::session_script`]).
    pub fn act_scripted_session(
        self,
        how: &Act,
        task: &Task,
        commands: Vec<String>,
        prompt: &str,
        dir: &Path,
        path: &std::ffi::OsStr,
    ) -> Result<Outcome> {
        if how.hook {
            install_lens(self, how.home, path)?;
        }
        let script = scripted_model::session_script(task, commands);
        self.act_scripted_model(how, script, task, prompt, dir, path)
    }

    /// The real CLI against the scripted model ([`scripted_model`]).
    fn act_scripted_model(
        self,
        how: &Act,
        script: crate::model_server::Script,
        task: &Task,
        prompt: &str,
        dir: &Path,
        path: &std::ffi::OsStr,
    ) -> Result<Outcome> {
        let cli = self.cli().with_context(|| {
            format!(
                "the {} agent's model cannot be scripted; use --model real",
                self.name()
            )
        })?;
        let mut spec = RunSpec::new(prompt, script, how.home, dir);
        let (args, env) = self.unattended(how.hook, how.vm.is_some());
        spec = spec.args(args);
        // The cell's PATH (lens, rtk, the task's tools) after the CLIs' own.
        let mut full = std::ffi::OsString::from(AgentCli::bin_dir());
        full.push(":");
        full.push(path);
        spec = spec.env("PATH", &full.to_string_lossy());
        if self == Driver::Codex {
            // Codex runs commands in a login shell, whose /etc/profile resets
            // PATH; a user's own profile puts their tools back, as this does.
            let profile = how.home.join(".bash_profile");
            if !profile.exists() {
                std::fs::create_dir_all(how.home)?;
                std::fs::write(
                    &profile,
                    format!(
                        "export PATH='{}'\n",
                        full.to_string_lossy().replace('\'', "")
                    ),
                )?;
            }
        }
        for (k, v) in env {
            spec = spec.env(&k, &v);
        }
        for k in ["LENS_STORE", "LENS_LOG_DIR", "LENS_CONFIG"] {
            if let Ok(v) = std::env::var(k) {
                spec = spec.env(k, &v);
            }
        }
        spec.time_limit = Duration::from_secs(task.time_limit_s);
        spec.remote = how.vm.and_then(|v| v.model_server.clone());
        let run = cli.run(&spec)?;
        Ok(Outcome::from_run(&run, cli))
    }
}

/// Lens as a user installs it for `driver`'s agent: `lens init --agent X
/// --global` with HOME at `home` (the `lens` on `path`).
pub fn install_lens(driver: Driver, home: &Path, path: &std::ffi::OsStr) -> Result<()> {
    let lens = find_program("lens", &path.to_os_string())
        .context("no lens on the cell's PATH; run `make build`")?;
    std::fs::create_dir_all(home)?;
    let out = Command::new(&lens)
        .args(["init", "--agent", driver.name(), "--global"])
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", lens.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "lens init --agent {} failed: {}",
        driver.name(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    if driver == Driver::Opencode {
        // OpenCode installs its plugin package into a config directory holding a
        // plugin before it starts, and with no network waits about 70 s for npm
        // to fail; a finished install leaves what it checks first.
        let cfg = home.join(".config/opencode");
        std::fs::create_dir_all(cfg.join("node_modules"))?;
        let lock = cfg.join("package-lock.json");
        if !lock.exists() {
            std::fs::write(
                lock,
                format!(
                    r#"{{"packages":{{"":{{"dependencies":{{"@opencode-ai/plugin":"{}"}}}}}}}}"#,
                    AgentCli::Opencode.version()
                ),
            )?;
        }
    }
    Ok(())
}

/// True when this process runs as root.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Why an agent did not start, in its own words: the last lines it wrote to
/// stderr, else an error result on stdout, with its exit code.
fn own_words(stdout: &str, stderr: &str, exit: i32, no_request: bool) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Warning:"))
        .collect();
    // The error line when there is one (a usage text follows clap's), else the end.
    let mut words = match lines
        .iter()
        .find(|l| l.to_ascii_lowercase().starts_with("error") || l.contains("cannot be used"))
    {
        Some(l) => l.to_string(),
        None => lines[lines.len().saturating_sub(3)..].join(" / "),
    };
    if words.is_empty() {
        // Claude Code's stream-json result: {"is_error":true,…,"result":"Not logged in …"}.
        words = stdout
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["is_error"] == true || v["type"] == "error")
            .filter_map(|v| {
                v["result"]
                    .as_str()
                    .or(v["message"].as_str())
                    .or(v["error"]["message"].as_str())
                    .map(String::from)
            })
            .next()
            .unwrap_or_else(|| "(it wrote nothing)".into());
    }
    format!(
        "{words} (exit {exit}{})",
        if no_request { ", no model request" } else { "" }
    )
}

/// What [`run_limited`] brings back.
#[derive(Debug)]
pub struct Run {
    /// Everything the process wrote to stdout.
    pub stdout: Vec<u8>,
    /// The last [`STDERR_TAIL`] bytes of its stderr.
    pub stderr_tail: String,
    /// Its exit code; 124 when the limit ended it.
    pub exit: i32,
}

/// Runs a command to completion or the limit; 124 on timeout, like timeout(1).
pub fn run_limited(mut cmd: Command, limit: Duration) -> Result<Run> {
    let out_file = tempfile_path("driver-out");
    let err_file = tempfile_path("driver-err");
    cmd.stdout(std::fs::File::create(&out_file)?)
        .stderr(std::fs::File::create(&err_file)?);
    let mut child = cmd.spawn()?;
    let started = Instant::now();
    let exit = loop {
        if let Some(status) = child.try_wait()? {
            break crate::platform::exit_code(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break 124;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read(&out_file)?;
    let err = std::fs::read(&err_file).unwrap_or_default();
    let _ = std::fs::remove_file(&out_file);
    let _ = std::fs::remove_file(&err_file);
    let from = err.len().saturating_sub(STDERR_TAIL);
    Ok(Run {
        stdout,
        stderr_tail: String::from_utf8_lossy(&err[from..]).into_owned(),
        exit,
    })
}

fn tempfile_path(stem: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "{stem}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ))
}

/// Fails when a driver name is unknown, naming the choices.
pub fn parse_or_bail(s: &str) -> Result<Driver> {
    match Driver::parse(s) {
        Some(d) => Ok(d),
        None => {
            bail!("unknown driver {s:?}; use scripted, claude, codex, gemini, opencode, kilo, qwen, copilot or cursor")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_and_reruns_are_counted_from_the_commands() {
        let cmds: Vec<String> = [
            "lens python3 audit.py",
            "lens show 1a2b3c4d --lines 2-9",
            "python3 audit.py > out.txt",
            "grep ACC out.txt",
            "lens python3 audit.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = recovery(&cmds, "python3 audit.py");
        assert_eq!(
            r,
            Recovery {
                fetches: 1,
                reruns: 2
            }
        );
        assert_eq!(recovery(&[], "x"), Recovery::default());
    }

    #[test]
    fn the_unattended_flags_are_the_pinned_clis_own() {
        let (codex, _) = Driver::Codex.unattended(false, false);
        assert!(!codex.iter().any(|a| a == "--full-auto"), "{codex:?}");
        assert!(codex.windows(2).any(|w| w == ["-s", "workspace-write"]));
        assert!(codex.contains(&"approval_policy=\"never\"".to_string()));
        let (hooked, _) = Driver::Codex.unattended(true, false);
        assert!(hooked.contains(&"--dangerously-bypass-hook-trust".to_string()));
        // In a guest the microVM is the sandbox (bubblewrap cannot run there).
        let (guest, _) = Driver::Codex.unattended(true, true);
        assert!(!guest.iter().any(|a| a == "workspace-write"), "{guest:?}");
        assert!(guest.contains(&"--dangerously-bypass-approvals-and-sandbox".to_string()));
        assert!(guest.contains(&"--dangerously-bypass-hook-trust".to_string()));
        let (claude, env) = Driver::Claude.unattended(false, false);
        assert_eq!(claude, ["--dangerously-skip-permissions"]);
        assert_eq!(
            env.iter().any(|(k, v)| k == "IS_SANDBOX" && v == "1"),
            is_root()
        );
        let gemini = Driver::Gemini.real_args("p", false, false);
        assert_eq!(
            gemini,
            ["-p", "p", "-o", "stream-json", "--approval-mode", "yolo"]
        );
        assert_eq!(
            Driver::Opencode
                .real_args("p", false, false)
                .last()
                .unwrap(),
            "p"
        );
        let qwen = Driver::Qwen.real_args("p", false, false);
        assert_eq!(qwen, ["-o", "stream-json", "--approval-mode", "yolo", "p"]);
        // Copilot CLI has no stream reader: only the scripted model.
        assert!(Driver::Copilot.preflight(Model::Real)[0].contains("--model scripted"));
        for d in ["gemini", "opencode", "kilo", "qwen", "copilot"] {
            assert_eq!(Driver::parse(d).unwrap().name(), d);
        }
        assert_eq!(
            Driver::Kilo.real_args("p", false, false),
            ["run", "--format", "json", "--auto", "p"]
        );
    }

    #[test]
    fn an_agents_own_words_say_why_it_did_not_start() {
        let w = own_words(
            "",
            "Warning: Basic terminal\nerror: unexpected argument '--full-auto' found\n",
            2,
            true,
        );
        assert_eq!(
            w,
            "error: unexpected argument '--full-auto' found (exit 2, no model request)"
        );
        let claude =
            r#"{"type":"result","is_error":true,"result":"Not logged in · Please run /login"}"#;
        assert!(own_words(claude, "", 1, true).starts_with("Not logged in"));
    }

    #[test]
    fn the_size_of_a_cut_output_is_read_from_the_agents_words() {
        use crate::model_server::ToolResult;
        let r = |t: &str| ToolResult {
            id: "1".into(),
            text: t.into(),
            is_error: false,
        };
        let cut = "<persisted-output>\nOutput too large (189.9KB). Full output saved to: /nonexistent/x.txt\n\nPreview";
        let (printed, cuts) = printed_bytes(&[r("abc"), r(cut)]);
        assert_eq!(cuts, 1);
        assert_eq!(printed, Some(3 + (189.9f64 * 1024.0) as u64));
        assert_eq!(printed_bytes(&[r("abc")]), (Some(3), 0));
        let codex = "Warning: truncated output (original token count: 3474)\nTotal output lines: 3000\n\n1\n…3893 chars truncated…2001\n";
        assert_eq!(
            printed_bytes(&[r(codex)]),
            (Some(codex.len() as u64 + 3893), 1)
        );
        let big =
            "Warning: truncated output (original token count: 72224)\n…10031 tokens truncated…\n";
        assert_eq!(printed_bytes(&[r(big)]), (None, 1));
        let claude_fail = "Exit code 3\n1\n2\n\n... [3909 characters truncated] ...\n\n3000";
        assert_eq!(
            printed_bytes(&[r(claude_fail)]),
            (Some(claude_fail.len() as u64 + 3909), 1)
        );
        assert!(is_view(
            "x\n[lens: elided stdout 2-9 (8 lines: budget) handle=0a1b2c3d]\n"
        ));
        assert!(!is_view("[lens: said nothing]"));
    }

    #[test]
    fn time_limit_cuts_off_with_124() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo started; sleep 5"]);
        let run = run_limited(c, Duration::from_millis(200)).unwrap();
        assert_eq!(run.exit, 124);
        assert_eq!(run.stdout, b"started\n");
    }

    #[test]
    fn the_end_of_the_agents_stderr_is_kept() {
        let mut c = Command::new("sh");
        c.args([
            "-c",
            "i=0; while [ $i -lt 2000 ]; do echo \"noise $i\" >&2; i=$((i+1)); done; echo 'API Error: 529 overloaded' >&2; exit 1",
        ]);
        let run = run_limited(c, Duration::from_secs(20)).unwrap();
        assert_eq!(run.exit, 1);
        assert!(run.stderr_tail.ends_with("API Error: 529 overloaded\n"));
        assert!(run.stderr_tail.len() <= STDERR_TAIL);
        assert!(!run.stderr_tail.contains("noise 0\n"));
    }

    #[test]
    fn real_drivers_fail_the_preflight_without_binary_or_key() {
        let missing = Driver::Codex.preflight(Model::Real);
        // This machine has neither codex on PATH nor a key; both are named.
        assert!(missing.iter().any(|m| m.contains("codex")), "{missing:?}");
        assert!(
            missing.iter().any(|m| m.contains("OPENAI_API_KEY")),
            "{missing:?}"
        );
        assert!(Driver::Scripted.preflight(Model::Real).is_empty());
        // Behind the scripted model no key is needed; cursor's model cannot be
        // scripted.
        let cursor = Driver::Cursor.preflight(Model::Scripted);
        assert!(cursor[0].contains("cannot be scripted"), "{cursor:?}");
        assert!(Driver::Opencode.key_var().is_none());
    }
}
