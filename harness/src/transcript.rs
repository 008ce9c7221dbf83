//! Agent transcripts: what an agent CLI recorded of a session, read into one shape.
//!
//! Eight formats, told apart by their events:
//!
//! - Claude Code's print mode (`claude -p --output-format stream-json --verbose`):
//!   a `system` init (model, `claude_code_version`), `assistant` messages whose
//!   `tool_use` blocks are the calls, `user` messages whose `tool_result` blocks
//!   answer them by id, and a final `result` with the session's `usage`.
//! - Claude Code's session log (`~/.claude/projects/<dir>/<session>.jsonl`): the
//!   same messages with `sessionId` and `version` on every line and no `result`;
//!   an API response is split over several lines that repeat its `usage`, so
//!   tokens are summed once per message id.
//! - `codex exec --json`: `item.completed` items of type `command_execution` carry
//!   the command, its `aggregated_output` and exit code; `turn.completed` the
//!   usage, whose `input_tokens` include the cached ones.
//! - Codex's session log (`~/.codex/sessions/…/rollout-*.jsonl`): `function_call`
//!   items (`shell` with an argv array, or a command string) answered by
//!   `function_call_output` with the same `call_id`; `token_count` events carry
//!   the running usage; `session_meta` the CLI version, `turn_context` the model.
//!   Codex 0.169 calls its shell `exec_command` (`{"cmd": …}`) and answers in
//!   text: header lines (`Process exited with code N`, …), `Output:`, then what
//!   the model read; its `item_completed` event of the call keeps the command's
//!   own output (up to 64 KiB), which an after-tool hook's view replaced.
//! - cursor-agent's stream-json: `tool_call` events, `started` then `completed`,
//!   a `shellToolCall` holding the command and its stdout, stderr and exit code.
//! - Gemini CLI's `-o stream-json`: an `init` (model), `tool_use` events
//!   (`run_shell_command` with its `command`) answered by `tool_result` with the
//!   same `tool_id`, and a final `result` whose `stats` hold the session's tokens
//!   (`cached` among `input_tokens`).
//! - Gemini CLI's chat recording (`~/.gemini/tmp/<project>/chats/session-*.jsonl`):
//!   a header line (`sessionId`, `projectHash`), then one record per message,
//!   written again as it grows (the last version of an id counts): `gemini`
//!   records carry the model, that response's tokens and its `toolCalls`, each
//!   with the `functionResponse` the model read (`Output: …`, then `Exit Code:
//!   N`), which is the view where an after-tool hook answered; `$set` lines
//!   update the header. The recording holds the main model's responses only
//!   (not the router's), and names no CLI version.
//! - OpenCode's `run --format json`: one `step_start`/`step_finish` pair per
//!   model call (the finish holds that call's tokens), `tool_use` parts whose
//!   `state` holds the command, the output the model read and the exit code.
//!
//! Tokens keep their kinds apart (input, output, cache read, cache write); they are
//! never summed with equal weight here.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// The transcript formats.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `claude -p --output-format stream-json`.
    ClaudeStream,
    /// A Claude Code session log.
    ClaudeSession,
    /// `codex exec --json`.
    CodexExec,
    /// A Codex session log.
    CodexRollout,
    /// `cursor-agent -p --output-format stream-json`.
    CursorStream,
    /// `gemini -p … -o stream-json`.
    GeminiStream,
    /// A Gemini CLI chat recording.
    GeminiChat,
    /// `opencode run --format json`.
    OpencodeJson,
}

impl Format {
    /// The agent CLI that writes it.
    pub fn agent(self) -> &'static str {
        match self {
            Format::ClaudeStream | Format::ClaudeSession => "claude",
            Format::CodexExec | Format::CodexRollout => "codex",
            Format::CursorStream => "cursor",
            Format::GeminiStream | Format::GeminiChat => "gemini",
            Format::OpencodeJson => "opencode",
        }
    }
}

/// The agent as it described itself.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct Agent {
    /// The CLI (`claude`, `codex`, `cursor`).
    pub cli: String,
    /// Its version, when the transcript names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The model, when the transcript names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// One shell command the agent ran, with what came back to it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ShellCall {
    /// The command line, unwrapped from a `bash -lc '…'` the CLI put around it.
    pub command: String,
    /// The result text the agent was given.
    pub output: String,
    /// Its stdout and stderr apart, when the transcript keeps them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<(String, String)>,
    /// The exit code, when the transcript records one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// Bytes the command itself printed, where that is recorded apart from
    /// what the agent was given: a Codex rollout's own record of the call, or
    /// Lens's store for a view's handle (`harness transcripts --store`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<u64>,
}

impl ShellCall {
    /// True when what came back was a Lens view (it carries a marker).
    pub fn is_lens_view(&self) -> bool {
        self.output.contains("[lens: ")
    }
}

/// A session as its transcript recorded it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The format it was read as.
    pub format: Format,
    /// The agent.
    pub agent: Agent,
    /// Tokens, when the transcript reports them.
    pub tokens: Option<Tokens>,
    /// Model turns (API responses).
    pub turns: u64,
    /// Tool calls of every kind.
    pub tool_calls: u64,
    /// Bytes of every tool result the agent was given.
    pub tool_result_bytes: u64,
    /// The shell calls, in order, with their results.
    pub shell: Vec<ShellCall>,
}

impl Transcript {
    /// Records a shell call whose result comes later, under the CLI's `id` for it.
    fn open_call(&mut self, pending: &mut BTreeMap<String, usize>, id: &str, command: String) {
        pending.insert(id.to_string(), self.shell.len());
        self.shell.push(ShellCall {
            command,
            output: String::new(),
            streams: None,
            exit: None,
            printed: None,
        });
    }
}

impl Transcript {
    /// Bytes of the shell results.
    pub fn shell_bytes(&self) -> u64 {
        self.shell.iter().map(|c| c.output.len() as u64).sum()
    }
}

fn lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(Value::is_object)
}

/// The newest session `cli` persisted with HOME at `home`, where it keeps what
/// the model read: Codex's rollout (`.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`,
/// CODEX_HOME being `home/.codex`), Gemini CLI's chat recording
/// (`.gemini/tmp/<project>/chats/session-*.jsonl`). `None` for another CLI or
/// when there is none.
pub fn persisted(cli: &str, home: &std::path::Path) -> Option<std::path::PathBuf> {
    let (root, prefix, depth) = match cli {
        "codex" => (home.join(".codex/sessions"), "rollout-", 4),
        "gemini" => (home.join(".gemini/tmp"), "session-", 3),
        _ => return None,
    };
    fn walk(dir: &std::path::Path, depth: usize, prefix: &str, into: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if depth > 1 {
                walk(&p, depth - 1, prefix, into);
            } else if p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".jsonl"))
            {
                into.push(p);
            }
        }
    }
    let mut found = Vec::new();
    walk(&root, depth, prefix, &mut found);
    found
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
}

/// A session's print-mode stream with its shell calls as the CLI persisted
/// them: Codex's `exec --json` holds the command's own output and Gemini
/// CLI's stream-json an empty result where an after-tool hook answered with a
/// view, while the rollout and the chat recording hold what the model read.
/// Tokens, turns and the agent stay the stream's (the chat recording leaves
/// out the router's calls); the calls, their results and their bytes are the
/// persisted session's.
pub fn with_persisted(mut stream: Transcript, saved: &Transcript) -> Transcript {
    stream.shell = saved.shell.clone();
    stream.tool_calls = saved.tool_calls;
    stream.tool_result_bytes = saved.tool_result_bytes;
    if stream.agent.version.is_none() {
        stream.agent.version = saved.agent.version.clone();
    }
    stream
}

/// Which format `text` is, from its events; `None` when it is none of them.
pub fn detect(text: &str) -> Option<Format> {
    let mut claude_stream = false;
    for e in lines(text) {
        let t = e["type"].as_str().unwrap_or("");
        match t {
            "thread.started" | "turn.started" | "turn.completed" | "turn.failed"
            | "item.started" | "item.completed" => return Some(Format::CodexExec),
            "session_meta" | "response_item" | "event_msg" | "turn_context" => {
                return Some(Format::CodexRollout)
            }
            "tool_call" => return Some(Format::CursorStream),
            "init" | "tool_use" | "tool_result" | "message"
                if e.get("session_id").is_some()
                    || e.get("timestamp").is_some_and(Value::is_string) =>
            {
                return Some(Format::GeminiStream)
            }
            "step_start" | "step_finish" => return Some(Format::OpencodeJson),
            "tool_use" | "text" if e["part"].is_object() => return Some(Format::OpencodeJson),
            _ => {}
        }
        // Gemini CLI's chat recording: its header, or a model response.
        if e.get("projectHash").is_some() && e.get("sessionId").is_some()
            || t == "gemini" && e.get("id").is_some()
        {
            return Some(Format::GeminiChat);
        }
        if e.get("sessionId").is_some() && matches!(t, "user" | "assistant" | "system" | "summary")
        {
            return Some(Format::ClaudeSession);
        }
        if matches!(t, "system" | "assistant" | "user" | "result") {
            claude_stream = true;
        }
    }
    claude_stream.then_some(Format::ClaudeStream)
}

/// Reads a transcript of any of the formats.
pub fn parse(text: &str) -> Result<Transcript> {
    let Some(format) = detect(text) else {
        bail!("not a transcript this harness reads (Claude Code stream-json or session log, codex exec --json or session log, cursor-agent stream-json, gemini stream-json or chat recording, opencode run --format json)");
    };
    Ok(parse_as(text, format))
}

/// Reads a transcript known to be `format`.
pub fn parse_as(text: &str, format: Format) -> Transcript {
    let mut t = Transcript {
        format,
        agent: Agent {
            cli: format.agent().into(),
            ..Agent::default()
        },
        tokens: None,
        turns: 0,
        tool_calls: 0,
        tool_result_bytes: 0,
        shell: Vec::new(),
    };
    match format {
        Format::ClaudeStream | Format::ClaudeSession => claude(text, &mut t),
        Format::CodexExec => codex_exec(text, &mut t),
        Format::CodexRollout => codex_rollout(text, &mut t),
        Format::CursorStream => cursor(text, &mut t),
        Format::GeminiStream => gemini(text, &mut t),
        Format::GeminiChat => gemini_chat(text, &mut t),
        Format::OpencodeJson => opencode(text, &mut t),
    }
    t
}

/// The text of a Claude tool result's `content`: a string, or text blocks.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn claude(text: &str, t: &mut Transcript) {
    // Bash calls by id, in order, waiting for their results.
    let mut pending: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen_messages: BTreeSet<String> = BTreeSet::new();
    let mut summed = Tokens::default();
    let mut final_usage = None;
    for e in lines(text) {
        if t.agent.version.is_none() {
            t.agent.version = e["claude_code_version"]
                .as_str()
                .or(e["version"].as_str())
                .map(String::from);
        }
        match e["type"].as_str() {
            Some("system") if e["subtype"] == "init" => {
                t.agent.model = e["model"].as_str().map(String::from);
            }
            Some("assistant") => {
                let m = &e["message"];
                if t.agent.model.is_none() {
                    t.agent.model = m["model"].as_str().map(String::from);
                }
                // One API response may span several lines, each repeating its usage.
                let id = m["id"].as_str().unwrap_or("").to_string();
                if id.is_empty() || seen_messages.insert(id) {
                    t.turns += 1;
                    let u = &m["usage"];
                    let n = |k: &str| u[k].as_u64().unwrap_or(0);
                    summed.input += n("input_tokens");
                    summed.output += n("output_tokens");
                    summed.cache_read += n("cache_read_input_tokens");
                    summed.cache_write += n("cache_creation_input_tokens");
                }
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] != "tool_use" {
                        continue;
                    }
                    t.tool_calls += 1;
                    // Qwen Code's stream has this shape, its shell tool
                    // another name.
                    if b["name"] == "Bash" || b["name"] == "run_shell_command" {
                        if let (Some(id), Some(c)) =
                            (b["id"].as_str(), b["input"]["command"].as_str())
                        {
                            t.open_call(&mut pending, id, c.to_string());
                        }
                    }
                }
            }
            Some("user") => {
                let side = e.get("toolUseResult").or_else(|| e.get("tool_use_result"));
                for b in e["message"]["content"].as_array().into_iter().flatten() {
                    if b["type"] != "tool_result" {
                        continue;
                    }
                    let body = result_text(&b["content"]);
                    t.tool_result_bytes += body.len() as u64;
                    let Some(&i) = b["tool_use_id"].as_str().and_then(|id| pending.get(id)) else {
                        continue;
                    };
                    let call = &mut t.shell[i];
                    call.output = body;
                    if b["is_error"] == true {
                        call.exit = Some(1);
                    }
                    if let Some(s) = side {
                        if let (Some(o), Some(r)) = (s["stdout"].as_str(), s["stderr"].as_str()) {
                            call.streams = Some((o.to_string(), r.to_string()));
                        }
                    }
                }
            }
            Some("result") => {
                let u = &e["usage"];
                let n = |k: &str| u[k].as_u64().unwrap_or(0);
                final_usage = Some(Tokens {
                    input: n("input_tokens"),
                    output: n("output_tokens"),
                    cache_read: n("cache_read_input_tokens"),
                    cache_write: n("cache_creation_input_tokens"),
                });
                if let Some(turns) = e["num_turns"].as_u64() {
                    t.turns = turns;
                }
            }
            _ => {}
        }
    }
    // The final result's usage is the session's own total; a session log has none,
    // and its per-response usages are summed once each.
    t.tokens = final_usage.or((t.turns > 0).then_some(summed));
}

/// The command inside `bash -lc '…'` (or `sh -c`, `zsh -lc`), as the shell would
/// read it; any other command line as it is.
pub fn unwrap_shell(command: &str) -> String {
    let c = command.trim();
    for shell in ["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"] {
        for flag in ["-lc", "-c"] {
            let prefix = format!("{shell} {flag} ");
            if let Some(rest) = c.strip_prefix(&prefix) {
                return unquote(rest.trim());
            }
        }
    }
    c.to_string()
}

/// One shell word: `'…'` (with `'\''` inside) or `"…"` unquoted; anything else as is.
fn unquote(s: &str) -> String {
    if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        return s[1..s.len() - 1].replace("'\\''", "'");
    }
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        return s[1..s.len() - 1]
            .replace("\\\"", "\"")
            .replace("\\\\", "\\");
    }
    s.to_string()
}

/// A command given as an argv array (`["bash", "-lc", "ls"]`) as one line.
fn argv_line(argv: &[Value]) -> String {
    let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
    match words.as_slice() {
        [shell, flag, script]
            if matches!(*flag, "-lc" | "-c")
                && shell
                    .rsplit('/')
                    .next()
                    .is_some_and(|s| matches!(s, "bash" | "sh" | "zsh")) =>
        {
            script.to_string()
        }
        _ => words.join(" "),
    }
}

fn codex_exec(text: &str, t: &mut Transcript) {
    let mut tokens: Option<Tokens> = None;
    for e in lines(text) {
        match e["type"].as_str() {
            Some("item.completed") => {
                let item = &e["item"];
                let kind = item["type"].as_str().unwrap_or("");
                if matches!(
                    kind,
                    "command_execution" | "file_change" | "mcp_tool_call" | "web_search"
                ) {
                    t.tool_calls += 1;
                }
                if kind == "command_execution" {
                    let output = item["aggregated_output"].as_str().unwrap_or("").to_string();
                    t.tool_result_bytes += output.len() as u64;
                    t.shell.push(ShellCall {
                        command: unwrap_shell(item["command"].as_str().unwrap_or("")),
                        output,
                        streams: None,
                        exit: item["exit_code"].as_i64().map(|x| x as i32),
                        printed: None,
                    });
                }
            }
            Some("turn.completed") => {
                t.turns += 1;
                let u = &e["usage"];
                let n = |k: &str| u[k].as_u64().unwrap_or(0);
                let tk = tokens.get_or_insert_with(Tokens::default);
                let cached = n("cached_input_tokens");
                tk.input += n("input_tokens").saturating_sub(cached);
                tk.cache_read += cached;
                tk.output += n("output_tokens");
            }
            Some("turn.failed") => t.turns += 1,
            _ => {}
        }
    }
    t.tokens = tokens;
}

/// Codex's text answer to a shell call: header lines (`Chunk ID: …`, `Wall
/// time: …`, `Process exited with code N`, `Original token count: N`), then
/// `Output:` and the output. The output and the exit code; `None` when `text`
/// is not framed so.
fn codex_framed(text: &str) -> Option<(String, Option<i32>)> {
    let mut exit = None;
    let mut rest = text;
    loop {
        let (line, after) = rest.split_once('\n')?;
        if line == "Output:" {
            return Some((after.to_string(), exit));
        }
        if let Some(code) = line.strip_prefix("Process exited with code ") {
            exit = code.trim().parse().ok();
        } else if !["Chunk ID: ", "Wall time: ", "Original token count: "]
            .iter()
            .any(|h| line.starts_with(h))
        {
            return None;
        }
        rest = after;
    }
}

/// What Codex keeps of a command's output in its `item_completed` record: past
/// it, the record holds a part, and the bytes printed are not known.
const CODEX_KEPT_OUTPUT: usize = 64 << 10;

fn codex_rollout(text: &str, t: &mut Transcript) {
    let mut pending: BTreeMap<String, usize> = BTreeMap::new();
    let mut last_usage: Option<Value> = None;
    // The command's own output and exit code, by call id, from `item_completed`.
    let mut completed: BTreeMap<String, (usize, Option<i32>)> = BTreeMap::new();
    for e in lines(text) {
        let p = &e["payload"];
        match (e["type"].as_str(), p["type"].as_str()) {
            (Some("session_meta"), _) => {
                t.agent.version = p["cli_version"].as_str().map(String::from);
            }
            (Some("turn_context"), _) if t.agent.model.is_none() => {
                t.agent.model = p["model"].as_str().map(String::from);
            }
            (Some("event_msg"), Some("token_count")) if p["info"].is_object() => {
                t.turns += 1;
                last_usage = Some(p["info"]["total_token_usage"].clone());
            }
            (Some("event_msg"), Some("item_completed"))
                if p["item"]["type"] == "CommandExecution" =>
            {
                let item = &p["item"];
                if let (Some(id), Some(out)) =
                    (item["id"].as_str(), item["aggregated_output"].as_str())
                {
                    let exit = item["exit_code"].as_i64().map(|x| x as i32);
                    completed.insert(id.to_string(), (out.len(), exit));
                }
            }
            (
                Some("response_item"),
                Some("function_call" | "local_shell_call" | "custom_tool_call"),
            ) => {
                t.tool_calls += 1;
                let args: Value = p["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null);
                let command = match &args["command"] {
                    Value::Array(v) => Some(argv_line(v)),
                    Value::String(s) => Some(unwrap_shell(s)),
                    _ => args["cmd"]
                        .as_str()
                        .map(unwrap_shell)
                        .or_else(|| p["action"]["command"].as_array().map(|v| argv_line(v))),
                };
                if let (Some(command), Some(id)) = (command, p["call_id"].as_str()) {
                    t.open_call(&mut pending, id, command);
                }
            }
            (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                let raw = p["output"].as_str().unwrap_or("");
                // JSON with the output and its exit code (before 0.1xx), text
                // framed by header lines (0.169's exec_command); a refusal by
                // the sandbox is plain text.
                let (output, exit) = match serde_json::from_str::<Value>(raw) {
                    Ok(v) if v["output"].is_string() => (
                        v["output"].as_str().unwrap_or("").to_string(),
                        v["metadata"]["exit_code"].as_i64().map(|x| x as i32),
                    ),
                    _ => codex_framed(raw).unwrap_or_else(|| (raw.to_string(), None)),
                };
                t.tool_result_bytes += output.len() as u64;
                if let Some(&i) = p["call_id"].as_str().and_then(|id| pending.get(id)) {
                    t.shell[i].output = output;
                    t.shell[i].exit = exit;
                }
            }
            _ => {}
        }
    }
    for (id, (len, exit)) in completed {
        if let Some(&i) = pending.get(&id) {
            let call = &mut t.shell[i];
            if len < CODEX_KEPT_OUTPUT {
                call.printed = Some(len as u64);
            }
            call.exit = call.exit.or(exit);
        }
    }
    t.tokens = last_usage.map(|u| {
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        let cached = n("cached_input_tokens");
        Tokens {
            input: n("input_tokens").saturating_sub(cached),
            output: n("output_tokens"),
            cache_read: cached,
            cache_write: 0,
        }
    });
}

fn cursor(text: &str, t: &mut Transcript) {
    for e in lines(text) {
        match (e["type"].as_str(), e["subtype"].as_str()) {
            (Some("system"), Some("init")) => {
                t.agent.model = e["model"].as_str().map(String::from);
            }
            (Some("assistant"), _) => t.turns += 1,
            (Some("tool_call"), Some("started")) => t.tool_calls += 1,
            (Some("tool_call"), Some("completed")) => {
                let call = &e["tool_call"];
                let Some(shell) = call.get("shellToolCall") else {
                    continue;
                };
                let r = &shell["result"];
                let r = if r["success"].is_object() {
                    &r["success"]
                } else {
                    &r["failure"]
                };
                let (out, err) = (
                    r["stdout"].as_str().unwrap_or(""),
                    r["stderr"].as_str().unwrap_or(""),
                );
                let output = format!("{out}{err}");
                t.tool_result_bytes += output.len() as u64;
                t.shell.push(ShellCall {
                    command: shell["args"]["command"].as_str().unwrap_or("").to_string(),
                    output,
                    streams: Some((out.to_string(), err.to_string())),
                    exit: r["exitCode"].as_i64().map(|x| x as i32),
                    printed: None,
                });
            }
            (Some("result"), _) => {
                let u = &e["usage"];
                if u.is_object() {
                    let n = |a: &str, b: &str| u[a].as_u64().or_else(|| u[b].as_u64()).unwrap_or(0);
                    t.tokens = Some(Tokens {
                        input: n("inputTokens", "input_tokens"),
                        output: n("outputTokens", "output_tokens"),
                        cache_read: n("cacheReadTokens", "cache_read_input_tokens"),
                        cache_write: n("cacheWriteTokens", "cache_creation_input_tokens"),
                    });
                }
            }
            _ => {}
        }
    }
}

fn gemini(text: &str, t: &mut Transcript) {
    let mut pending: BTreeMap<String, usize> = BTreeMap::new();
    // A model response is the run of events between two tool results (or the
    // prompt): its calls, then its text.
    let mut in_response = false;
    for e in lines(text) {
        match e["type"].as_str() {
            Some("init") => t.agent.model = e["model"].as_str().map(String::from),
            Some("message") if e["role"] == "user" => in_response = false,
            Some("message") | Some("tool_use") if !in_response => {
                in_response = true;
                t.turns += 1;
            }
            _ => {}
        }
        match e["type"].as_str() {
            Some("tool_use") => {
                t.tool_calls += 1;
                if e["tool_name"] == "run_shell_command" {
                    if let (Some(id), Some(c)) =
                        (e["tool_id"].as_str(), e["parameters"]["command"].as_str())
                    {
                        t.open_call(&mut pending, id, c.to_string());
                    }
                }
            }
            Some("tool_result") => {
                in_response = false;
                let body = e["output"]
                    .as_str()
                    .or(e["error"]["message"].as_str())
                    .unwrap_or("")
                    .to_string();
                t.tool_result_bytes += body.len() as u64;
                if let Some(&i) = e["tool_id"].as_str().and_then(|id| pending.get(id)) {
                    t.shell[i].output = body;
                }
            }
            Some("result") => {
                let s = &e["stats"];
                if s.is_object() {
                    let n = |k: &str| s[k].as_u64().unwrap_or(0);
                    let cached = n("cached");
                    t.tokens = Some(Tokens {
                        input: n("input_tokens").saturating_sub(cached),
                        output: n("output_tokens"),
                        cache_read: cached,
                        cache_write: 0,
                    });
                }
            }
            _ => {}
        }
    }
}

fn gemini_chat(text: &str, t: &mut Transcript) {
    // A record is written again as it grows: the last version of each id, in
    // the order the ids first appeared.
    let mut order: Vec<String> = Vec::new();
    let mut records: BTreeMap<String, Value> = BTreeMap::new();
    // The results the model read, by call id, from the user records (for a
    // call whose model record was not written again with its result).
    let mut responses: BTreeMap<String, Value> = BTreeMap::new();
    for e in lines(text) {
        match (e["type"].as_str(), e["id"].as_str()) {
            (Some("gemini"), Some(id)) => {
                if !records.contains_key(id) {
                    order.push(id.to_string());
                }
                records.insert(id.to_string(), e.clone());
            }
            (Some("user"), _) => {
                for part in e["content"].as_array().into_iter().flatten() {
                    let r = &part["functionResponse"];
                    if let Some(id) = r["id"].as_str() {
                        responses.insert(id.to_string(), r["response"].clone());
                    }
                }
            }
            _ => {}
        }
    }
    let mut tokens: Option<Tokens> = None;
    for id in &order {
        let r = &records[id];
        t.turns += 1;
        if t.agent.model.is_none() {
            t.agent.model = r["model"].as_str().map(String::from);
        }
        let k = &r["tokens"];
        if k.is_object() {
            let n = |key: &str| k[key].as_u64().unwrap_or(0);
            let tk = tokens.get_or_insert_with(Tokens::default);
            tk.input += n("input").saturating_sub(n("cached"));
            tk.cache_read += n("cached");
            tk.output += n("output") + n("thoughts");
        }
        for call in r["toolCalls"].as_array().into_iter().flatten() {
            t.tool_calls += 1;
            let cid = call["id"].as_str().unwrap_or("");
            let response = call["result"]
                .as_array()
                .and_then(|parts| {
                    parts
                        .iter()
                        .find_map(|p| p["functionResponse"].get("response"))
                })
                .or_else(|| responses.get(cid))
                .cloned()
                .unwrap_or(Value::Null);
            let body = response["output"]
                .as_str()
                .or(response["error"].as_str())
                .unwrap_or("")
                .to_string();
            t.tool_result_bytes += body.len() as u64;
            if call["name"] != "run_shell_command" {
                continue;
            }
            let Some(command) = call["args"]["command"].as_str() else {
                continue;
            };
            // `Output: …` then `Exit Code: N` and the like, as the model read it
            // (the recording keeps no display to split it exactly by).
            let (output, exit) = lens_cli::agents::gemini::split_result(&body, None, None)
                .unwrap_or_else(|| (body.clone(), None));
            t.shell.push(ShellCall {
                command: command.to_string(),
                output,
                streams: None,
                exit,
                printed: None,
            });
        }
    }
    t.tokens = tokens;
}

fn opencode(text: &str, t: &mut Transcript) {
    let mut tokens: Option<Tokens> = None;
    for e in lines(text) {
        let p = &e["part"];
        match e["type"].as_str() {
            Some("step_finish") => {
                t.turns += 1;
                let k = &p["tokens"];
                let n = |v: &Value| v.as_u64().unwrap_or(0);
                let tk = tokens.get_or_insert_with(Tokens::default);
                tk.input += n(&k["input"]);
                tk.output += n(&k["output"]) + n(&k["reasoning"]);
                tk.cache_read += n(&k["cache"]["read"]);
                tk.cache_write += n(&k["cache"]["write"]);
            }
            Some("tool_use") => {
                t.tool_calls += 1;
                let st = &p["state"];
                let output = st["output"]
                    .as_str()
                    .or(st["error"].as_str())
                    .unwrap_or("")
                    .to_string();
                t.tool_result_bytes += output.len() as u64;
                if p["tool"] == "bash" {
                    t.shell.push(ShellCall {
                        command: st["input"]["command"].as_str().unwrap_or("").to_string(),
                        output,
                        streams: None,
                        exit: st["metadata"]["exit"].as_i64().map(|x| x as i32),
                        printed: None,
                    });
                }
            }
            _ => {}
        }
    }
    t.tokens = tokens;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_wrappers_come_off() {
        assert_eq!(unwrap_shell("bash -lc 'cat test.js'"), "cat test.js");
        assert_eq!(unwrap_shell("zsh -lc ls"), "ls");
        assert_eq!(unwrap_shell(r#"/bin/bash -lc "make gate""#), "make gate");
        assert_eq!(unwrap_shell("bash -lc 'echo '\\''hi'\\'''"), "echo 'hi'");
        assert_eq!(unwrap_shell("cargo test"), "cargo test");
        let argv: Vec<Value> = ["bash", "-lc", "rg \"TeamSheet\""]
            .iter()
            .map(|s| Value::from(*s))
            .collect();
        assert_eq!(argv_line(&argv), "rg \"TeamSheet\"");
    }

    #[test]
    fn a_qwen_code_stream_is_read_as_claude_codes() {
        // Qwen Code 0.24.4's `-o stream-json`, shortened.
        let text = r#"{"type":"assistant","message":{"id":"m1","model":"scripted","content":[{"type":"tool_use","id":"call_1","name":"run_shell_command","input":{"command":"git status"}}],"usage":{"input_tokens":9,"output_tokens":2}}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","is_error":false,"content":"Command: git status"}]}}
{"type":"result","subtype":"success","num_turns":2,"usage":{"input_tokens":20,"output_tokens":3}}
"#;
        let t = parse_as(text, Format::ClaudeStream);
        assert_eq!(t.shell.len(), 1);
        assert_eq!(t.shell[0].command, "git status");
        assert_eq!(t.shell[0].output, "Command: git status");
    }

    #[test]
    fn unknown_text_is_refused_with_the_formats_named() {
        let e = parse("hello\n{\"a\":1}\n").unwrap_err().to_string();
        assert!(e.contains("stream-json") && e.contains("codex"), "{e}");
    }
}
