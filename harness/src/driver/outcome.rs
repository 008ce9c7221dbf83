//! What one agent session amounted to, whoever acted: read from a real CLI's
//! transcript or from the scripted model's record of the run. A leaf under the
//! drivers, so the transcript readers and the scripted agent can name it
//! without reaching back into the driver dispatch.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::scripted_model;
use crate::agent_cli::{AgentCli, RunOutcome};
use crate::transcript::{Agent, Tokens, Transcript};

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
    /// Bytes the shell commands printed, where the agent CLI cut a result and
    /// says (or saved) how big it was; the other results count as received.
    /// `None` when it cannot be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed_bytes: Option<u64>,
    /// Results the agent CLI itself cut before the model read them.
    #[serde(default)]
    pub agent_cuts: u64,
    /// Whether the model was the scripted one behind a real CLI.
    #[serde(default)]
    pub scripted_model: bool,
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
            ..Outcome::default()
        }
    }

    /// What a run against the scripted model amounted to, from the model
    /// server's record: its token counts, its turns, the shell calls it made and
    /// the tool results the CLI sent it (exactly what the model read).
    pub fn from_run(run: &RunOutcome, cli: AgentCli) -> Outcome {
        let turns = run.turns();
        let mut tokens = Tokens::default();
        // Call k is the one made in the request carrying k results; a retried
        // request makes the same call again.
        let mut calls = BTreeMap::new();
        for e in &turns {
            tokens.input += e.usage.input_tokens;
            tokens.output += e.usage.output_tokens;
            if let Some(crate::model_server::Action::Shell { command }) = &e.action {
                calls.insert(e.tool_results.len(), command.clone());
            }
        }
        let results = run.tool_results();
        let (printed, cuts) = printed_bytes(&results);
        Outcome {
            tokens: Some(tokens),
            tool_calls: calls.len() as u64,
            turns: turns.len() as u64,
            bytes_read: results.iter().map(|r| r.text.len() as u64).sum(),
            exit: run.exit,
            commands: calls.into_values().collect(),
            views: results.iter().filter(|r| is_view(&r.text)).count() as u64,
            agent: Some(Agent {
                cli: cli.name().into(),
                version: cli.installed_version(),
                model: Some("scripted".into()),
            }),
            stderr: run.stderr[run.stderr.len().saturating_sub(STDERR_TAIL)..].to_string(),
            printed_bytes: printed,
            agent_cuts: cuts,
            scripted_model: true,
        }
    }
}

/// True when a tool result is a Lens view: it carries a marker with a handle.
pub fn is_view(text: &str) -> bool {
    text.lines()
        .any(|l| l.contains("[lens: ") && l.contains(" handle="))
}

/// The bytes the commands printed, over `results`: a result the CLI cut counts
/// as the size of the file it saved the whole output to, or the size it says
/// the output had ("Output too large (189.9KB)"); any other as itself. Also the
/// number of results cut. `None` when a cut result's size cannot be told.
pub fn printed_bytes(results: &[crate::model_server::ToolResult]) -> (Option<u64>, u64) {
    let mut total = Some(0u64);
    let mut cuts = 0;
    for r in results {
        let t = &r.text;
        let saved = scripted_model::saved_path(t)
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len());
        // Codex cuts the middle out ("…3893 chars truncated…", or for a big
        // output the tokens it cut, when the size cannot be told); Claude Code
        // a failing command's ("... [3909 characters truncated] ...").
        let inline = inline_cut(t);
        let codex_tokens = t.contains("Warning: truncated output (original token count:");
        let n = if let Some(b) = saved.or(stated_size(t)) {
            cuts += 1;
            Some(b)
        } else if let Some(c) = inline {
            cuts += 1;
            c.map(|c| t.len() as u64 + c)
        } else if codex_tokens {
            cuts += 1;
            None
        } else {
            Some(t.len() as u64)
        };
        total = total.zip(n).map(|(a, b)| a + b);
    }
    (total, cuts)
}

/// The characters an agent CLI says it cut from the middle of an output:
/// `None` when it says nothing of the kind, `Some(None)` when it counts the cut
/// in tokens (its size in bytes cannot be told).
fn inline_cut(text: &str) -> Option<Option<u64>> {
    static CUT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = CUT.get_or_init(|| {
        regex::Regex::new(r"…(\d+) (chars|tokens) truncated…|\[(\d+) characters truncated\]")
            .expect("cut regex")
    });
    let mut total = Some(0u64);
    let mut any = false;
    for c in re.captures_iter(text) {
        any = true;
        let n: Option<u64> = match (c.get(1), c.get(2), c.get(3)) {
            (Some(n), Some(unit), _) if unit.as_str() == "chars" => n.as_str().parse().ok(),
            (_, _, Some(n)) => n.as_str().parse().ok(),
            _ => None,
        };
        total = total.zip(n).map(|(a, b)| a + b);
    }
    any.then_some(total)
}

/// The size Claude Code states for an output it cut: "Output too large (189.9KB)".
fn stated_size(text: &str) -> Option<u64> {
    let i = text.find("Output too large (")? + "Output too large (".len();
    let rest = &text[i..];
    let end = rest.find(')')?;
    let s = &rest[..end];
    let (num, mult) = if let Some(n) = s.strip_suffix("MB") {
        (n, 1024.0 * 1024.0)
    } else if let Some(n) = s.strip_suffix("KB") {
        (n, 1024.0)
    } else {
        (s.strip_suffix('B')?, 1.0)
    };
    num.trim().parse::<f64>().ok().map(|v| (v * mult) as u64)
}
