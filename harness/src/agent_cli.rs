//! The real agent CLIs, run against the scripted model server
//! ([`crate::model_server`]) with no credential and no network.
//!
//! [`AgentCli::run`] starts one CLI in print (headless) mode with an empty
//! environment (`env -i`): HOME is the spec's own directory (so a test can put
//! settings files there first), PATH holds only the CLI's directory, node's, an
//! optional extra directory (where `lens` is) and `/usr/bin:/bin`, the model API
//! points at a server started for the run, the key is a placeholder, and
//! telemetry and update checks are off. The CLI runs in the spec's project
//! directory in a process group of its own, which is killed when the time limit
//! passes (and after it exits, for anything it left behind). Nothing reads or
//! writes the real home.
//!
//! The binaries come from `LENS_AGENTS_BIN` or `<repo>/out/agents/node_modules/.bin`
//! (`make agents` installs the pinned versions there from
//! `harness/agents/package.json`); Mistral Vibe, a PyPI package, from the venv
//! beside them, `out/agents/venv` (pinned in `harness/agents/vibe-requirements.txt`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::model_server::{Exchange, Script, Server, ToolResult};
use crate::platform;
use crate::shim::find_program;

/// The placeholder every CLI is given as its API key.
pub const PLACEHOLDER_KEY: &str = "lens-placeholder-key";

/// Gemini CLI's settings for a run: API-key auth, no update checks, no usage
/// statistics or telemetry.
const GEMINI_DEFAULTS: &str = r#"{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
"#;

/// Qwen Code's settings for a run: no usage statistics, telemetry or update
/// checks.
const QWEN_DEFAULTS: &str = r#"{
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
"#;

/// The agent CLIs the harness drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentCli {
    /// Claude Code (`@anthropic-ai/claude-code`).
    Claude,
    /// Codex CLI (`@openai/codex`).
    Codex,
    /// Gemini CLI (`@google/gemini-cli`).
    Gemini,
    /// OpenCode (`opencode-ai`).
    Opencode,
    /// Mistral Vibe (`mistral-vibe` on PyPI), in `out/agents/venv`.
    Vibe,
    /// Kilo Code CLI (`@kilocode/cli`), an OpenCode fork.
    Kilo,
    /// pi (`@mariozechner/pi-coding-agent`).
    Pi,
    /// GitHub Copilot CLI (`@github/copilot`).
    Copilot,
    /// Qwen Code (`@qwen-code/qwen-code`).
    Qwen,
}

/// One run of a CLI.
pub struct RunSpec {
    /// The prompt, given on the command line.
    pub prompt: String,
    /// The model's script.
    pub script: Script,
    /// HOME for the run (created if missing; settings files may be put there first).
    pub home: PathBuf,
    /// The working directory.
    pub project: PathBuf,
    /// A directory put on PATH before the system's (where `lens` is).
    pub extra_path: Option<PathBuf>,
    /// Arguments after the CLI's own (permission flags, `--settings`, …).
    pub args: Vec<String>,
    /// Environment added after the runner's (overrides it).
    pub env: Vec<(String, String)>,
    /// The run is killed after this long.
    pub time_limit: Duration,
    /// The model server runs elsewhere (on the host, reached through the
    /// credential broker, for a microVM cell): the CLI is pointed at it and
    /// no server is started for the run, so the outcome holds no requests
    /// (the server's owner has them) and `script` is not used.
    pub remote: Option<Remote>,
}

/// A model server the run does not own: its base URL (no `/v1`) and the key
/// the CLI presents to it (a placeholder the broker replaces).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// E.g. `http://10.0.2.100:80`.
    pub url: String,
    /// What the CLI sends as its API key.
    pub key: String,
}

impl RunSpec {
    /// A spec with no extra arguments, environment or PATH, and a one-minute limit.
    pub fn new(prompt: &str, script: Script, home: &Path, project: &Path) -> RunSpec {
        RunSpec {
            prompt: prompt.to_string(),
            script,
            home: home.to_path_buf(),
            project: project.to_path_buf(),
            extra_path: None,
            args: Vec::new(),
            env: Vec::new(),
            time_limit: Duration::from_secs(60),
            remote: None,
        }
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> RunSpec {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds a variable.
    pub fn env(mut self, key: &str, value: &str) -> RunSpec {
        self.env.push((key.to_string(), value.to_string()));
        self
    }
}

/// What a run came to.
#[derive(Debug)]
pub struct RunOutcome {
    /// The CLI's exit code (128 + signum for a signal; 124 when the limit cut it).
    pub exit: i32,
    /// Whether the time limit ended it.
    pub timed_out: bool,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr.
    pub stderr: String,
    /// Every request the model server received, in order.
    pub requests: Vec<Exchange>,
    /// Wall time from start to exit.
    pub wall: Duration,
}

impl RunOutcome {
    /// The model calls (requests the script answered), in order.
    pub fn turns(&self) -> Vec<&Exchange> {
        self.requests.iter().filter(|e| e.kind == "turn").collect()
    }

    /// The tool results of the conversation as the last model call carried them.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        self.turns()
            .iter()
            .rev()
            .find(|e| e.shell_tool.is_some())
            .map(|e| e.tool_results.clone())
            .unwrap_or_default()
    }

    /// One line for a failed assertion: exit, the requests, and the ends of the
    /// CLI's streams.
    pub fn describe(&self) -> String {
        let tail = |s: &str| s[s.len().saturating_sub(1500)..].to_string();
        let reqs: Vec<String> = self
            .requests
            .iter()
            .map(|e| format!("{} {} {}", e.method, e.target, e.status))
            .collect();
        format!(
            "exit {} (timed out: {}), requests {:?}\nstdout: {}\nstderr: {}",
            self.exit,
            self.timed_out,
            reqs,
            tail(&self.stdout),
            tail(&self.stderr)
        )
    }
}

impl AgentCli {
    /// The npm-installed ones, in the order the tests take them (Vibe, from
    /// PyPI, is not among them: `harness/agents/package.json` pins these).
    pub const ALL: [AgentCli; 8] = [
        AgentCli::Claude,
        AgentCli::Codex,
        AgentCli::Gemini,
        AgentCli::Opencode,
        AgentCli::Kilo,
        AgentCli::Pi,
        AgentCli::Copilot,
        AgentCli::Qwen,
    ];

    /// The CLI's short name.
    pub fn name(self) -> &'static str {
        match self {
            AgentCli::Claude => "claude",
            AgentCli::Codex => "codex",
            AgentCli::Gemini => "gemini",
            AgentCli::Opencode => "opencode",
            AgentCli::Vibe => "vibe",
            AgentCli::Kilo => "kilo",
            AgentCli::Pi => "pi",
            AgentCli::Copilot => "copilot",
            AgentCli::Qwen => "qwen",
        }
    }

    /// The program's name in `node_modules/.bin`.
    pub fn program(self) -> &'static str {
        self.name()
    }

    /// The npm package.
    pub fn package(self) -> &'static str {
        match self {
            AgentCli::Claude => "@anthropic-ai/claude-code",
            AgentCli::Codex => "@openai/codex",
            AgentCli::Gemini => "@google/gemini-cli",
            AgentCli::Opencode => "opencode-ai",
            AgentCli::Vibe => "mistral-vibe",
            AgentCli::Kilo => "@kilocode/cli",
            AgentCli::Pi => "@mariozechner/pi-coding-agent",
            AgentCli::Copilot => "@github/copilot",
            AgentCli::Qwen => "@qwen-code/qwen-code",
        }
    }

    /// The pinned version (as in `harness/agents/package.json`).
    pub fn version(self) -> &'static str {
        match self {
            AgentCli::Claude => "2.1.328",
            AgentCli::Codex => "0.169.0",
            AgentCli::Gemini => "0.61.0",
            AgentCli::Opencode => "1.18.33",
            AgentCli::Vibe => "3.0.3",
            AgentCli::Kilo => "7.7.7",
            AgentCli::Pi => "0.73.1",
            AgentCli::Copilot => "1.0.102",
            AgentCli::Qwen => "0.24.4",
        }
    }

    /// The header the CLI sends its API key in, and what comes before the key
    /// there (read from each pinned version's bundle: Claude Code's Messages
    /// client, Codex's `env_key` provider as configured here, the genai
    /// client in Gemini CLI, OpenCode's OpenAI-compatible provider, the
    /// OpenAI clients of Copilot CLI's and Qwen Code's providers).
    pub fn key_header(self) -> (&'static str, &'static str) {
        match self {
            AgentCli::Claude => ("x-api-key", ""),
            AgentCli::Codex
            | AgentCli::Opencode
            | AgentCli::Kilo
            | AgentCli::Pi
            | AgentCli::Vibe
            | AgentCli::Copilot
            | AgentCli::Qwen => ("authorization", "Bearer "),
            AgentCli::Gemini => ("x-goog-api-key", ""),
        }
    }

    /// Where the CLIs are: `LENS_AGENTS_BIN`, else `<repo>/out/agents/node_modules/.bin`.
    pub fn bin_dir() -> PathBuf {
        bin_dir_from(std::env::var_os("LENS_AGENTS_BIN"))
    }

    /// The CLI's program.
    pub fn binary(self) -> PathBuf {
        match self {
            AgentCli::Vibe => vibe_venv().join("bin").join(self.program()),
            _ => AgentCli::bin_dir().join(self.program()),
        }
    }

    /// Whether the program is there.
    pub fn installed(self) -> bool {
        platform::is_executable(&self.binary())
    }

    /// The version of the package installed beside the binaries
    /// (`node_modules/<package>/package.json`), `None` when it cannot be read.
    pub fn installed_version(self) -> Option<String> {
        if self == AgentCli::Vibe {
            return vibe_version(&vibe_venv());
        }
        let manifest = AgentCli::bin_dir()
            .parent()?
            .join(self.package())
            .join("package.json");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(manifest).ok()?).ok()?;
        v["version"].as_str().map(String::from)
    }

    /// Runs the CLI on `spec` against a model server started for the run.
    pub fn run(self, spec: &RunSpec) -> Result<RunOutcome> {
        if !self.installed() {
            bail!(
                "{} is not installed at {}; run `make agents` (or set LENS_AGENTS_BIN)",
                self.name(),
                self.binary().display()
            );
        }
        std::fs::create_dir_all(&spec.home)
            .with_context(|| format!("cannot create {}", spec.home.display()))?;
        let server = match &spec.remote {
            Some(_) => None,
            None => {
                Some(Server::start(spec.script.clone()).context("cannot start the model server")?)
            }
        };
        let (url, key) = match (&spec.remote, &server) {
            (Some(r), _) => (r.url.clone(), r.key.clone()),
            (None, Some(s)) => (s.url(), PLACEHOLDER_KEY.to_string()),
            (None, None) => unreachable!("a server is started when there is no remote"),
        };
        let mut cmd = Command::new(self.binary());
        cmd.env_clear()
            .env("HOME", &spec.home)
            .env("PATH", base_path(spec.extra_path.as_deref()))
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .env("TMPDIR", std::env::temp_dir());
        let scratch = scratch_dir()?;
        let trailing = self.configure(&mut cmd, spec, &url, &key, &scratch)?;
        cmd.args(&spec.args).args(trailing);
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        cmd.current_dir(&spec.project).stdin(Stdio::null());
        let (out_path, err_path) = (scratch.join("stdout"), scratch.join("stderr"));
        cmd.stdout(std::fs::File::create(&out_path)?)
            .stderr(std::fs::File::create(&err_path)?);
        platform::new_process_group(&mut cmd);
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", self.binary().display()))?;
        let pgid = child.id();
        let (exit, timed_out) = loop {
            if let Some(status) = child.try_wait()? {
                break (platform::exit_code(status), false);
            }
            if started.elapsed() > spec.time_limit {
                platform::kill_group(pgid);
                // The leader itself, should the group kill have failed.
                let _ = child.kill();
                let _ = child.wait();
                break (124, true);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let wall = started.elapsed();
        // Whatever the CLI left running in its group goes with it.
        platform::kill_group(pgid);
        let read =
            |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
        let (stdout, stderr) = (read(&out_path), read(&err_path));
        let _ = std::fs::remove_dir_all(&scratch);
        Ok(RunOutcome {
            exit,
            timed_out,
            stdout,
            stderr,
            requests: server.map(|s| s.requests()).unwrap_or_default(),
            wall,
        })
    }

    /// The CLI's own arguments and environment: print mode, the server, the
    /// placeholder key, telemetry and updates off. Returns the arguments that go
    /// after the spec's own (the prompt, for a CLI that wants it last).
    fn configure(
        self,
        cmd: &mut Command,
        spec: &RunSpec,
        url: &str,
        key: &str,
        scratch: &Path,
    ) -> Result<Vec<String>> {
        match self {
            AgentCli::Claude => {
                cmd.env("ANTHROPIC_BASE_URL", url)
                    .env("ANTHROPIC_API_KEY", key)
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("DISABLE_TELEMETRY", "1")
                    .env("DISABLE_ERROR_REPORTING", "1")
                    .args([
                        "-p",
                        &spec.prompt,
                        "--output-format",
                        "stream-json",
                        "--verbose",
                    ]);
            }
            AgentCli::Codex => {
                // The provider goes in -c overrides, so config.toml in the spec's
                // HOME stays the test's own.
                let codex_home = spec.home.join(".codex");
                std::fs::create_dir_all(&codex_home)
                    .with_context(|| format!("cannot create {}", codex_home.display()))?;
                // Codex's sandbox makes each writable root's `.git`, `.codex` and
                // `.agents` read-only by creating them, empty, where they are
                // missing: with /tmp a writable root that leaves /tmp/.git behind,
                // and every later program under /tmp (Claude Code deciding which
                // project it is in, `lens trust`) takes /tmp for a git checkout.
                // The run's temp dir is its own, and /tmp is not a root.
                let tmp = scratch.join("tmp");
                std::fs::create_dir_all(&tmp)
                    .with_context(|| format!("cannot create {}", tmp.display()))?;
                cmd.env("TMPDIR", &tmp)
                    .args(["-c", "sandbox_workspace_write.exclude_slash_tmp=true"]);
                // Lens's store and log, where the run names them, stay writable
                // in the sandbox (under /tmp they were by /tmp alone): without
                // them `lens …` cannot store, and so shows the raw output.
                let roots: Vec<String> = spec
                    .env
                    .iter()
                    .filter(|(k, _)| k == "LENS_STORE" || k == "LENS_LOG_DIR")
                    .map(|(_, v)| {
                        let _ = std::fs::create_dir_all(v);
                        format!("{v:?}")
                    })
                    .collect();
                if !roots.is_empty() {
                    cmd.args([
                        "-c".to_string(),
                        format!(
                            "sandbox_workspace_write.writable_roots=[{}]",
                            roots.join(",")
                        ),
                    ]);
                }
                // The key goes as a bearer token, from the variable env_key names.
                cmd.env("CODEX_HOME", codex_home)
                    .env("LENS_MODEL_KEY", key)
                    .args(["exec", "--json", "--skip-git-repo-check"])
                    .args(["-c", "model=\"scripted\""])
                    .args(["-c", "model_provider=\"scripted\""])
                    .args([
                        "-c".to_string(),
                        format!(
                            "model_providers.scripted={{name=\"scripted\", base_url=\"{url}/v1\", wire_api=\"responses\", env_key=\"LENS_MODEL_KEY\"}}"
                        ),
                    ])
                    .args(["-c", "analytics.enabled=false"]);
                return Ok(vec![spec.prompt.clone()]);
            }
            AgentCli::Gemini => {
                // API-key auth can only be chosen in a settings file (the base
                // URL alone selects "gateway", which headless mode refuses), and
                // a system-defaults file is skipped under /tmp (its parents are
                // world-writable); so the runner's keys go into the user
                // settings, where the test's file does not set them.
                add_missing_keys(&spec.home.join(".gemini/settings.json"), GEMINI_DEFAULTS)?;
                cmd.env("GEMINI_API_KEY", key)
                    .env("GOOGLE_GEMINI_BASE_URL", url)
                    // Trusted, so project settings apply; a test may set "false".
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                    // One node process instead of two (it relaunches itself for
                    // a bigger heap otherwise): a second less per run.
                    .env("GEMINI_CLI_NO_RELAUNCH", "1")
                    .args(["-p", &spec.prompt, "-o", "stream-json"]);
            }
            AgentCli::Vibe => {
                // The provider, the model and telemetry off come as VIBE_*
                // variables (Vibe 3.0.3's environment layer, read with
                // pydantic-settings), so ~/.vibe/config.toml stays the test's
                // own (its [tools.bash] rules apply).
                let provider = serde_json::json!([{
                    "name": "scripted",
                    "api_base": format!("{url}/v1"),
                    "api_key_env_var": "LENS_MODEL_KEY",
                    "backend": "generic",
                }]);
                let model = serde_json::json!([{
                    "name": "scripted", "provider": "scripted", "alias": "scripted",
                }]);
                cmd.env("LENS_MODEL_KEY", key)
                    .env("VIBE_PROVIDERS", provider.to_string())
                    .env("VIBE_MODELS", model.to_string())
                    .env("VIBE_ACTIVE_MODEL", "scripted")
                    .env("VIBE_ENABLE_TELEMETRY", "false")
                    .env("VIBE_ENABLE_UPDATE_CHECKS", "false")
                    .env("VIBE_ENABLE_AUTO_UPDATE", "false")
                    .args(["-p", &spec.prompt, "--output", "json"]);
            }
            AgentCli::Opencode => {
                // The provider comes in OPENCODE_CONFIG_CONTENT, the last layer,
                // so the test's config files in HOME and the project stay its
                // own (their permission rules apply).
                opencode_family(cmd, "OPENCODE", url, key, scratch)?;
                return Ok(vec![spec.prompt.clone()]);
            }
            AgentCli::Kilo => {
                // OpenCode's way, under Kilo 7.7.7's names (KILO_CONFIG_CONTENT
                // is its last config layer). Its bash tool asks by default,
                // which `run` refuses: a run that should run commands gives
                // `--auto` (allow what no rule denies) in the spec's arguments.
                opencode_family(cmd, "KILO", url, key, scratch)?;
                // Anything but "all" turns its telemetry off.
                cmd.env("KILO_TELEMETRY_LEVEL", "off")
                    // Its indexing of the project costs seconds and no test reads it.
                    .env("KILO_DISABLE_CODEBASE_INDEXING", "1");
                return Ok(vec![spec.prompt.clone()]);
            }
            AgentCli::Pi => {
                // pi 0.73.1 takes a provider only from ~/.pi/agent/models.json
                // (an OpenAI Chat Completions one here); the runner puts its
                // own there, for this run's server, beside the test's. No
                // session file, no network at start.
                let mut provider = serde_json::json!({"providers": {"scripted": {
                    "baseUrl": format!("{url}/v1"),
                    "apiKey": key,
                    "api": "openai-completions",
                    "models": [{
                        "id": "scripted", "name": "scripted", "reasoning": false,
                        "input": ["text"], "contextWindow": 128000, "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }],
                }}});
                let models = spec.home.join(".pi/agent/models.json");
                let mut all: serde_json::Value = match std::fs::read_to_string(&models) {
                    Ok(text) => serde_json::from_str(&text).with_context(|| {
                        format!(
                            "{} is not JSON; write a JSON object there",
                            models.display()
                        )
                    })?,
                    Err(_) => serde_json::json!({}),
                };
                all["providers"]["scripted"] = provider["providers"]["scripted"].take();
                std::fs::create_dir_all(models.parent().expect("a directory"))?;
                std::fs::write(&models, serde_json::to_string_pretty(&all)? + "\n")
                    .with_context(|| format!("cannot write {}", models.display()))?;
                cmd.env("PI_OFFLINE", "1").args([
                    "-p",
                    "--provider",
                    "scripted",
                    "--model",
                    "scripted",
                    "--no-session",
                ]);
                return Ok(vec![spec.prompt.clone()]);
            }
            AgentCli::Copilot => {
                // Copilot CLI 1.0.102's own provider (BYOK) speaks Chat
                // Completions to the base URL; offline mode skips GitHub
                // sign-in, telemetry and update checks. Its binary unpacks
                // its JavaScript (about 235 MB) into a cache at first start:
                // one cache beside the install serves every run.
                cmd.env("COPILOT_OFFLINE", "true")
                    .env("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1"))
                    .env("COPILOT_PROVIDER_API_KEY", key)
                    .env("COPILOT_MODEL", "scripted")
                    .env("COPILOT_PKG_CACHE_HOME", copilot_cache())
                    .args(["-p", &spec.prompt, "--output-format", "json"])
                    .arg("--no-auto-update");
            }
            AgentCli::Qwen => {
                // Qwen Code 0.24.4's OpenAI auth reads the base URL, key and
                // model from the environment; usage statistics and telemetry
                // go off in the user settings, where the test's file does not
                // set them.
                add_missing_keys(&spec.home.join(".qwen/settings.json"), QWEN_DEFAULTS)?;
                cmd.env("OPENAI_BASE_URL", format!("{url}/v1"))
                    .env("OPENAI_API_KEY", key)
                    .env("OPENAI_MODEL", "scripted")
                    .env("QWEN_CODE_NO_RELAUNCH", "1")
                    .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
                    .args(["--auth-type", "openai", "-o", "stream-json"]);
                return Ok(vec![spec.prompt.clone()]);
            }
        }
        Ok(Vec::new())
    }
}

/// Where Copilot CLI unpacks itself: beside the installed CLIs.
fn copilot_cache() -> PathBuf {
    AgentCli::bin_dir().join("../../copilot-cache")
}

fn bin_dir_from(var: Option<OsString>) -> PathBuf {
    match var {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../out/agents/node_modules/.bin"),
    }
}

/// Where Mistral Vibe is: the venv beside the npm CLIs' `node_modules`.
fn vibe_venv() -> PathBuf {
    let bin = AgentCli::bin_dir();
    bin.parent()
        .and_then(Path::parent)
        .map_or_else(|| bin.join("venv"), |agents| agents.join("venv"))
}

/// The mistral-vibe version a venv holds, from its `.dist-info` directory name.
fn vibe_version(venv: &Path) -> Option<String> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    for python in lib.flatten() {
        let Ok(packages) = std::fs::read_dir(python.path().join("site-packages")) else {
            continue;
        };
        for p in packages.flatten() {
            let name = p.file_name().to_string_lossy().into_owned();
            if let Some(v) = name
                .strip_prefix("mistral_vibe-")
                .and_then(|r| r.strip_suffix(".dist-info"))
            {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// PATH for a run: the CLIs' directory, the extra one, node's, `/usr/bin:/bin`.
fn base_path(extra: Option<&Path>) -> OsString {
    let mut dirs: Vec<PathBuf> = vec![AgentCli::bin_dir()];
    if let Some(e) = extra {
        dirs.push(e.to_path_buf());
    }
    let host_path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(node) = find_program("node", &host_path) {
        if let Some(d) = node.parent() {
            dirs.push(d.to_path_buf());
        }
    }
    dirs.push("/usr/bin".into());
    dirs.push("/bin".into());
    dirs.dedup();
    std::env::join_paths(dirs).unwrap_or_default()
}

/// Adds the keys of the JSON object `defaults` that the JSON file at `path` lacks
/// (at any depth), creating the file if it is missing; the file's own values
/// stay as they are.
fn add_missing_keys(path: &Path, defaults: &str) -> Result<()> {
    fn merge(into: &mut serde_json::Value, from: &serde_json::Value) {
        if let (Some(into), Some(from)) = (into.as_object_mut(), from.as_object()) {
            for (k, v) in from {
                match into.get_mut(k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        into.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    let mut current: serde_json::Value = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!("{} is not JSON; write a JSON object there", path.display())
        })?,
        Err(_) => serde_json::json!({}),
    };
    let defaults: serde_json::Value = serde_json::from_str(defaults)?;
    let before = current.clone();
    merge(&mut current, &defaults);
    // A file that has every key already stays byte for byte as it is (a
    // test compares it after uninstalling Lens).
    if current == before && path.exists() {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&current)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}

/// OpenCode's setup for a run, and its fork Kilo's under its own variable
/// prefix (`OPENCODE`, `KILO`): the scripted provider in the config content
/// variable, an empty model catalogue instead of the one compiled in (which
/// costs seconds of CPU to load at every start; the provider's one model is
/// described in the config), no catalogue fetch, no update, and `run` with
/// JSON events.
fn opencode_family(
    cmd: &mut Command,
    var: &str,
    url: &str,
    key: &str,
    scratch: &Path,
) -> Result<()> {
    let mut config = serde_json::json!({
        "autoupdate": false,
        "share": "disabled",
        "model": "scripted/scripted",
        "small_model": "scripted/scripted",
        "provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": format!("{url}/v1"), "apiKey": key},
            "models": {"scripted": {"name": "scripted", "tool_call": true}},
        }},
    });
    if var == "OPENCODE" {
        config["$schema"] = "https://opencode.ai/config.json".into();
    }
    let models = scratch.join(format!("{}-models.json", var.to_lowercase()));
    std::fs::write(&models, "{}\n")
        .with_context(|| format!("cannot write {}", models.display()))?;
    cmd.env(format!("{var}_CONFIG_CONTENT"), config.to_string())
        .env(format!("{var}_MODELS_PATH"), &models)
        .env(format!("{var}_DISABLE_MODELS_FETCH"), "1")
        .env(format!("{var}_DISABLE_AUTOUPDATE"), "1")
        .args(["run", "--format", "json"]);
    Ok(())
}

fn scratch_dir() -> Result<PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "lens-agent-run-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    platform::private_dir(&d)?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_holds_the_cli_dir_the_extra_dir_and_the_system_dirs_only() {
        let p = base_path(Some(Path::new("/opt/lens/bin")));
        let dirs: Vec<PathBuf> = std::env::split_paths(&p).collect();
        assert_eq!(dirs[0], AgentCli::bin_dir());
        assert_eq!(dirs[1], PathBuf::from("/opt/lens/bin"));
        assert_eq!(
            &dirs[dirs.len() - 2..],
            [PathBuf::from("/usr/bin"), PathBuf::from("/bin")]
        );
        assert!(dirs.len() <= 5, "{dirs:?}");
    }

    #[test]
    fn runner_settings_fill_only_what_the_file_lacks() {
        let dir = scratch_dir().unwrap();
        let f = dir.join("a/settings.json");
        add_missing_keys(&f, r#"{"x": {"y": 1, "z": 2}, "w": 3}"#).unwrap();
        let read = || {
            serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&f).unwrap())
                .unwrap()
        };
        assert_eq!(read(), serde_json::json!({"x": {"y": 1, "z": 2}, "w": 3}));
        std::fs::write(&f, r#"{"x": {"y": "mine"}, "v": [1]}"#).unwrap();
        add_missing_keys(&f, r#"{"x": {"y": 1, "z": 2}, "w": 3}"#).unwrap();
        assert_eq!(
            read(),
            serde_json::json!({"x": {"y": "mine", "z": 2}, "v": [1], "w": 3})
        );
        // A file lacking nothing is left as it was written.
        std::fs::write(&f, "{\"x\":{\"y\":0,\"z\":0},\"w\":0}").unwrap();
        add_missing_keys(&f, r#"{"x": {"y": 1, "z": 2}, "w": 3}"#).unwrap();
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "{\"x\":{\"y\":0,\"z\":0},\"w\":0}"
        );
        std::fs::write(&f, "not json").unwrap();
        let e = add_missing_keys(&f, "{}").unwrap_err().to_string();
        assert!(e.contains("is not JSON"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Pinned so `lens init` could be checked against their code: Factory
    /// Droid 0.225.2 (its npm wrapper 0.225.1 names platform packages of its
    /// own version the registry lacks, so the Linux one is pinned beside it).
    const NOT_DRIVEN: &[&str] = &["@factory/cli", "@factory/cli-linux-x64"];

    #[test]
    fn the_pinned_versions_are_the_ones_make_agents_installs() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/package.json");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
        for cli in AgentCli::ALL {
            assert_eq!(
                v["dependencies"][cli.package()].as_str(),
                Some(cli.version()),
                "{}",
                cli.name()
            );
        }
        // Every other pin is one whose bundle was read for `lens init` but
        // which no test drives yet.
        for name in v["dependencies"].as_object().unwrap().keys() {
            assert!(
                AgentCli::ALL.iter().any(|c| c.package() == name)
                    || NOT_DRIVEN.contains(&name.as_str()),
                "{name} is pinned but neither driven nor listed in NOT_DRIVEN"
            );
        }
    }

    #[test]
    fn vibe_is_pinned_in_its_requirements_and_found_in_the_venv() {
        let reqs = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/vibe-requirements.txt");
        let reqs = std::fs::read_to_string(reqs).unwrap();
        let pin = format!("{}=={}", AgentCli::Vibe.package(), AgentCli::Vibe.version());
        assert!(reqs.lines().any(|l| l == pin), "{pin}");
        assert!(
            AgentCli::Vibe
                .binary()
                .ends_with("out/agents/venv/bin/vibe")
                || std::env::var_os("LENS_AGENTS_BIN").is_some()
        );
        let venv = scratch_dir().unwrap();
        assert_eq!(vibe_version(&venv), None);
        let info = venv.join("lib/python3.12/site-packages/mistral_vibe-3.0.3.dist-info");
        std::fs::create_dir_all(&info).unwrap();
        std::fs::create_dir_all(venv.join("lib/python3.12/site-packages/vibe")).unwrap();
        assert_eq!(vibe_version(&venv).as_deref(), Some("3.0.3"));
        std::fs::remove_dir_all(&venv).unwrap();
    }

    #[test]
    fn the_binaries_come_from_the_variable_or_out_agents() {
        assert_eq!(bin_dir_from(Some("/x/bin".into())), PathBuf::from("/x/bin"));
        let default = bin_dir_from(None);
        assert!(
            default.ends_with("out/agents/node_modules/.bin"),
            "{default:?}"
        );
        assert_eq!(bin_dir_from(Some("".into())), default);
    }
}
