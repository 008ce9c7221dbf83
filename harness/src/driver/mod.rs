//! Drivers: who acts in a cell. Three real agent CLIs, each read from its own JSON
//! output (see [`crate::transcript`]) into tokens, tool calls, turns and the shell
//! results it was given, and a deterministic scripted agent for tests and for
//! machines without credentials (its results say they are simulated).

pub mod scripted;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::shim::find_program;
use crate::tasks::Task;
use crate::transcript::{self, Format, Transcript};

pub use crate::transcript::Agent;

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
    /// Bytes of the shell results the agent was given (the command it was told to
    /// run, its recoveries, and anything else it ran).
    pub bytes_read: u64,
    /// The agent process's exit code (124 when the time limit cut it off).
    pub exit: i32,
    /// The shell commands the agent ran, in order, as it wrote them.
    #[serde(default)]
    pub commands: Vec<String>,
    /// Shell results that were Lens views (they carry a marker).
    #[serde(default)]
    pub views: u64,
    /// The agent CLI's version and model, as its transcript gives them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Agent>,
    /// The end of what the agent wrote to stderr (at most [`STDERR_TAIL`] bytes).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

/// How much of an agent's stderr a cell keeps: its end, where the error is.
pub const STDERR_TAIL: usize = 4096;

impl Outcome {
    /// What a transcript says of the session.
    pub fn from_transcript(t: &Transcript) -> Outcome {
        Outcome {
            tokens: t.tokens,
            tool_calls: t.tool_calls,
            turns: t.turns,
            bytes_read: t.shell_bytes(),
            exit: 0,
            commands: t.shell.iter().map(|c| c.command.clone()).collect(),
            views: t.shell.iter().filter(|c| c.is_lens_view()).count() as u64,
            agent: Some(t.agent.clone()),
            stderr: String::new(),
        }
    }
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

    /// The transcript format the agent prints, for real drivers.
    pub fn format(self) -> Option<Format> {
        match self {
            Driver::Scripted => None,
            Driver::Claude => Some(Format::ClaudeStream),
            Driver::Cursor => Some(Format::CursorStream),
            Driver::Codex => Some(Format::CodexExec),
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
        let run = run_limited(cmd, Duration::from_secs(task.time_limit_s))?;
        let text = String::from_utf8_lossy(&run.stdout);
        let format = self.format().expect("a real driver");
        let mut outcome = Outcome::from_transcript(&transcript::parse_as(&text, format));
        outcome.exit = run.exit;
        outcome.stderr = run.stderr_tail;
        Ok(outcome)
    }
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
        let missing = Driver::Codex.preflight();
        // This machine has neither codex nor a key; both are named.
        assert!(missing.iter().any(|m| m.contains("codex")), "{missing:?}");
        assert!(Driver::Scripted.preflight().is_empty());
    }
}
