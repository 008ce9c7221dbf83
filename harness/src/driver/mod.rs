//! Drivers: who acts in a cell. Three real agent CLIs, each turned from its own JSON
//! output into tokens, tool calls and turns, and a deterministic scripted agent for
//! tests and for machines without credentials (its results say they are simulated).

pub mod claude;
pub mod codex;
pub mod cursor;
pub mod scripted;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::shim::find_program;
use crate::tasks::Task;

/// Tokens an agent spent, as its CLI reports them.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens not read from a cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
}

impl Tokens {
    /// Everything the session was charged for, in tokens.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// What one agent session amounted to.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Tokens, when the CLI reports them.
    pub tokens: Option<Tokens>,
    /// Tool calls the agent made.
    pub tool_calls: u64,
    /// Model turns.
    pub turns: u64,
    /// Bytes the agent read from the command it was told to run (and its recoveries).
    pub bytes_read: u64,
    /// The agent process's exit code (124 when the time limit cut it off).
    pub exit: i32,
    /// The shell commands the agent ran, in order, as it wrote them.
    #[serde(default)]
    pub commands: Vec<String>,
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
}

impl Driver {
    /// Parses a driver name.
    pub fn parse(s: &str) -> Option<Driver> {
        match s {
            "scripted" => Some(Driver::Scripted),
            "claude" => Some(Driver::Claude),
            "cursor" => Some(Driver::Cursor),
            "codex" => Some(Driver::Codex),
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
        }
    }

    /// True for the simulated agent.
    pub fn simulated(self) -> bool {
        self == Driver::Scripted
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
            Driver::Cursor | Driver::Scripted => None,
        }
    }

    /// The variable holding the agent's API key, for real drivers.
    pub fn key_var(self) -> Option<&'static str> {
        self.binary().map(|(_, k)| k)
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
        }
    }

    /// What is missing before anything can be spent: one line each, with the fix.
    pub fn preflight(self) -> Vec<String> {
        let Some((bin, key)) = self.binary() else {
            return Vec::new();
        };
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut missing = Vec::new();
        if find_program(bin, &path).is_none() {
            missing.push(format!(
                "driver binary `{bin}` is not on PATH; install the {} CLI",
                self.name()
            ));
        }
        if std::env::var_os(key).is_none_or(|v| v.is_empty()) {
            missing.push(format!(
                "credential {key} is not set; export it (the run is the only step that spends it)"
            ));
        }
        missing
    }

    /// Runs the agent on `prompt` in `dir` with `path` first on PATH.
    pub fn act(
        self,
        task: &Task,
        prompt: &str,
        command: &str,
        dir: &Path,
        path: &std::ffi::OsStr,
    ) -> Result<Outcome> {
        if self == Driver::Scripted {
            return scripted::act(task, command, dir, path);
        }
        let (bin, _) = self.binary().expect("a real driver");
        let mut cmd = Command::new(bin);
        match self {
            Driver::Claude => cmd.args([
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ]),
            Driver::Cursor => cmd.args(["-p", prompt, "--output-format", "stream-json", "--force"]),
            Driver::Codex => cmd.args(["exec", "--json", "--full-auto", prompt]),
            Driver::Scripted => unreachable!(),
        };
        cmd.current_dir(dir).env("PATH", path).stdin(Stdio::null());
        let (stdout, exit) = run_limited(cmd, Duration::from_secs(task.time_limit_s))?;
        let text = String::from_utf8_lossy(&stdout);
        let mut outcome = match self {
            Driver::Claude => claude::parse(&text),
            Driver::Cursor => cursor::parse(&text),
            Driver::Codex => codex::parse(&text),
            Driver::Scripted => unreachable!(),
        };
        outcome.exit = exit;
        Ok(outcome)
    }
}

/// Runs a command to completion or the limit; 124 on timeout, like timeout(1).
pub fn run_limited(mut cmd: Command, limit: Duration) -> Result<(Vec<u8>, i32)> {
    let out_file = tempfile_path("driver-out");
    cmd.stdout(std::fs::File::create(&out_file)?)
        .stderr(Stdio::null());
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
    let out = std::fs::read(&out_file)?;
    let _ = std::fs::remove_file(&out_file);
    Ok((out, exit))
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

/// Parses a line-delimited JSON stream, skipping lines that are not JSON.
pub fn json_lines(text: &str) -> impl Iterator<Item = serde_json::Value> + '_ {
    text.lines()
        .filter_map(|l| serde_json::from_str(l.trim()).ok())
}

/// Fails when a driver name is unknown, naming the choices.
pub fn parse_or_bail(s: &str) -> Result<Driver> {
    match Driver::parse(s) {
        Some(d) => Ok(d),
        None => bail!("unknown driver {s:?}; use scripted, claude, cursor or codex"),
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
    fn time_limit_cuts_off_with_124() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo started; sleep 5"]);
        let (out, exit) = run_limited(c, Duration::from_millis(200)).unwrap();
        assert_eq!(exit, 124);
        assert_eq!(out, b"started\n");
    }

    #[test]
    fn real_drivers_fail_the_preflight_without_binary_or_key() {
        let missing = Driver::Codex.preflight();
        // This machine has neither codex nor a key; both are named.
        assert!(missing.iter().any(|m| m.contains("codex")), "{missing:?}");
        assert!(Driver::Scripted.preflight().is_empty());
    }
}
