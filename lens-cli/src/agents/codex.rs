//! Codex CLI: a `PostToolUse` hook on its shell tool (`lens hook codex`) in
//! `hooks.json`, and the awareness block in `AGENTS.md`.
//!
//! The hook runs after Codex ran the command as its sandbox, approval policy
//! and exec policy rules allowed it (a rejected command never reaches it), so
//! every permission decision is Codex's own. Its input holds the command and
//! the output as the model would read it (stderr merged, cut by Codex to about
//! 10 KB of head and tail), but no exit code: the rollout file named by
//! `transcript_path` already holds the call's `exit_code` and its output uncut
//! up to 64 KiB, and the hook reads both from there. The answer
//! `{"decision":"block","reason":…}` replaces the whole result the model reads,
//! including the `Process exited with code N` line Codex writes, so the view
//! carries that line itself. Codex runs a hook only once the user trusted it,
//! and a project's hooks only in a trusted project; `lens init` says how.
//! (Measured against Codex CLI 0.169.0.)
//!
//! That answer is the only one 0.169.0 has that changes what the model reads
//! of a shell call, and Codex reports it as a refusal: `hook: PostToolUse
//! Blocked` and an `ERROR codex_core::tools::router` line holding the view, on
//! the user's terminal. Its `post-tool-use.command.output` schema has nothing
//! else that replaces: `suppressOutput` is refused ("PostToolUse hook returned
//! unsupported suppressOutput", the hook counts as failed and the model reads
//! Codex's own output), `updatedMCPToolOutput` only for MCP tools, exit code 2
//! logs the same ERROR line, and `additionalContext` adds to the output
//! instead of replacing it. `lens init` says so where the user installs it.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered, Output};
use crate::event::Event;

/// The command the hook runs.
pub const HOOK: &str = "lens hook codex";

/// What Codex shows of a command's output without cutting it (it keeps the
/// head and tail of a longer one).
pub const INLINE_LIMIT: usize = 10_000;

/// What the user must do once: Codex skips a hook nobody trusted.
pub const TRUST: &str = "Codex runs a new hook only once you trust it: open `codex`, review the Lens hook under /hooks and trust it";

/// What the user sees of every call Lens shortened.
pub const BLOCKED: &str = "Codex 0.169.0 shows each call Lens shortened as 'PostToolUse Blocked' and logs the view at ERROR level; the model reads the view";

/// What a `--project` install needs besides the hook's trust: Codex 0.169.0
/// skips a project's `.codex/` (its hooks with it) unless the project is
/// trusted in the user's config (`[projects."<path>"] trust_level`).
pub fn project_trust(root: &std::path::Path) -> String {
    format!(
        "Codex loads {}/.codex/hooks.json only in a trusted project: add `[projects.\"{}\"] trust_level = \"trusted\"` to ~/.codex/config.toml (or run `codex exec --trust` there once)",
        root.display(),
        root.display()
    )
}

/// The hooks file edit: a `PostToolUse` group matching the shell tool.
pub fn hooks_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Hook {
            event: "PostToolUse",
            matcher: "Bash",
            command: HOOK,
            extra: "",
        },
    }
}

/// The captured output in a `PostToolUse` event, when it is one Lens filters.
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    let line = e.post_tool_use("Bash")?;
    let shown_text = e.text("/tool_response")?;
    // Only its start is compared, and a spooled one keeps its start.
    let (shown, _, _) = shown_text.sketch();
    let call = event.get("tool_use_id").and_then(Value::as_str);
    let rollout = event.get("transcript_path").and_then(Value::as_str);
    let done = match (call, rollout) {
        (Some(id), Some(path)) => completed(std::path::Path::new(path), id),
        _ => None,
    };
    // The rollout's output is the command's own (up to 64 KiB); the event's is
    // what the model would read, already cut.
    let (output, exit, partial) = match done {
        // A command that ran past Codex's first wait is reported in chunks: the
        // model has read the earlier ones already, and this event holds only
        // the last. Its output is then not the head of the command's.
        Some((out, exit)) if !same_start(&shown, &out) => (shown_text.piece().into(), exit, true),
        // Codex keeps 64 KiB of the output there: past that, neither it nor
        // the event holds the whole, and what the model reads stays Codex's.
        Some((out, exit)) if out.len() >= ROLLOUT_OUTPUT_CAP => (held(out), exit, true),
        Some((out, exit)) => (held(out), exit, false),
        None => (shown_text.piece().into(), None, false),
    };
    Some(Captured {
        line: line.to_string(),
        output,
        full: None,
        exit,
        cwd: event.get("cwd").and_then(Value::as_str).map(String::from),
        level: None,
        budget: None,
        partial,
        inline: None,
    })
}

fn held(s: String) -> Output {
    s.into_bytes().into()
}

/// True when what the model would read starts as the command's output does
/// (after the notice Codex puts before an output it cut).
fn same_start(shown: &str, output: &str) -> bool {
    let shown = match shown.strip_prefix("Warning: truncated output") {
        Some(rest) => rest.split_once("\n\n").map_or("", |(_, body)| body),
        None => shown,
    };
    // Up to where Codex cut the middle out (`…N chars truncated…`).
    let head = shown.find('…').map_or(shown, |i| &shown[..i]);
    let n = head.len().min(output.len()).min(200);
    shown.as_bytes()[..n] == output.as_bytes()[..n]
}

/// What Codex keeps of a command's output in the rollout.
const ROLLOUT_OUTPUT_CAP: usize = 64 << 10;

/// The most of a rollout file the hook reads: its newest lines hold the call.
const ROLLOUT_TAIL: u64 = 32 << 20;

/// The output and exit code of call `id` from the rollout file: the newest
/// `item_completed` line for a `CommandExecution` with that id.
fn completed(path: &std::path::Path, id: &str) -> Option<(String, Option<i32>)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(ROLLOUT_TAIL)))
        .ok()?;
    let mut text = Vec::new();
    f.take(ROLLOUT_TAIL).read_to_end(&mut text).ok()?;
    let text = String::from_utf8_lossy(&text);
    let needle = format!("\"id\":\"{id}\"");
    text.lines()
        .rev()
        .filter(|l| l.contains(&needle))
        .find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            let item = v.pointer("/payload/item")?;
            if item.get("id")?.as_str()? != id || item.get("type")?.as_str()? != "CommandExecution"
            {
                return None;
            }
            let out = item.get("aggregated_output")?.as_str()?.to_string();
            let exit = item
                .get("exit_code")
                .and_then(Value::as_i64)
                .map(|c| c as i32);
            Some((out, exit))
        })
}

/// The answer that makes the model read the view, with the exit line and the
/// `Output:` header Codex would have written.
pub fn answer(_event: &Value, view: &Filtered) -> Value {
    let head = view
        .exit
        .map_or(String::new(), |c| format!("Process exited with code {c}\n"));
    json!({ "decision": "block", "reason": format!("{head}Output:\n{}", view.text) })
}

/// Bytes Codex's model reads of this result without Lens: the event's
/// `tool_response` (it is Codex's own head-and-tail cut of the output) under
/// the header Codex CLI 0.169.0 opens every shell result with (`Chunk ID: …`,
/// `Wall time: … seconds`, `Process exited with code N`, `Original token
/// count: N`, `Output:`), sized here as a typical one; `output_len` with that
/// header when the event holds no text.
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    let shown = e.text("/tool_response").map_or(output_len, |s| s.len());
    let header = format!(
        "Chunk ID: 000000\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: {}\nOutput:\n",
        output_len.div_ceil(4)
    );
    shown + header.len() as u64
}

#[cfg(test)]
mod would_read_tests {
    use super::*;

    #[test]
    fn the_model_reads_codexs_cut_not_the_whole_output() {
        let cut = "head …400000 chars truncated… tail".to_string();
        let e = json!({"tool_response": cut});
        let n = model_would_read(&e.into(), 408_894);
        // The cut and its header, never the 400 KB the rollout holds.
        assert!(
            n > cut.len() as u64 + 80 && n < cut.len() as u64 + 120,
            "{n}"
        );
        assert!(model_would_read(&json!({}).into(), 50) > 50);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_and_the_uncut_output_come_from_the_rollout() {
        let dir = std::env::temp_dir().join(format!("lens-codex-rollout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rollout = dir.join("rollout.jsonl");
        let item = |id: &str, out: &str, code: i32| {
            json!({"type": "event_msg", "payload": {"type": "item_completed", "item": {
                "type": "CommandExecution", "id": id, "command": ["/bin/bash", "-lc", "x"],
                "status": "failed", "aggregated_output": out, "exit_code": code}}})
            .to_string()
        };
        std::fs::write(
            &rollout,
            format!(
                "{}\n{}\n{{\"type\":\"other\"}}\n",
                item("call_0", "zero", 0),
                item("call_1", "full output\n", 3)
            ),
        )
        .unwrap();
        let event = json!({
            "hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": "/p",
            "tool_input": {"command": "make"}, "tool_response": "Warning: truncated output (original token count: 9)\nTotal output lines: 1\n\nfull …3 chars truncated… output\n",
            "tool_use_id": "call_1", "transcript_path": rollout.display().to_string(),
        });
        let c = read_event(&event.clone().into()).unwrap();
        assert_eq!(
            (c.output.to_vec().unwrap().as_slice(), c.exit),
            (&b"full output\n"[..], Some(3))
        );
        assert!(!c.partial);
        // No rollout: the event's own text, exit unknown.
        let mut e = event.clone();
        e["transcript_path"] = json!(dir.join("none.jsonl").display().to_string());
        let c = read_event(&e.clone().into()).unwrap();
        assert!(
            c.output
                .to_vec()
                .unwrap()
                .starts_with(b"Warning: truncated output")
                && c.exit.is_none()
        );
        // The last chunk of a long-running command: the model read the rest already.
        let mut e = event.clone();
        e["tool_response"] = json!("tail end\n");
        assert!(read_event(&e.clone().into()).unwrap().partial);
        // Past what the rollout keeps: Codex holds a part, and so would Lens.
        std::fs::write(
            &rollout,
            format!("{}\n", item("call_1", &"x".repeat(ROLLOUT_OUTPUT_CAP), 0)),
        )
        .unwrap();
        let mut e = event.clone();
        e["tool_response"] = json!(format!("Warning: truncated output (original token count: 9)\nTotal output lines: 1\n\n{}…9 chars truncated…x\n", "x".repeat(300)));
        let c = read_event(&e.clone().into()).unwrap();
        assert!(c.partial);
        let mut diagnostics = Vec::new();
        assert_eq!(
            crate::captured::filter(&c, &mut diagnostics).err(),
            Some(crate::captured::Raw::Partial)
        );

        e["tool_name"] = json!("apply_patch");
        assert!(read_event(&e.clone().into()).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
