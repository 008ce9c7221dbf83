//! Gemini CLI: an `AfterTool` hook on `run_shell_command` (`lens hook gemini`)
//! and the awareness block in `GEMINI.md`.
//!
//! The hook runs after Gemini CLI ran the command as its policy engine allowed
//! it (a denied command never reaches it), so every permission decision is
//! Gemini CLI's own. Its input holds the whole output (stderr merged) framed as
//! the model reads it: `Output: …`, then `Exit Code: N` when it is not 0. No
//! answer field replaces a tool's result in place; `tailToolCallRequest` makes
//! Gemini CLI run another tool under the same call and hand the model that
//! tool's result instead: the hook writes the view, framed the same way, into
//! the project's temp directory (`read_file` reads nothing outside it and the
//! workspace) and asks for `read_file` of it. That call is judged by the
//! policy engine like any other, so where a user or admin policy names
//! `read_file` the hook does not answer. Gemini CLI wants JSON on every path:
//! no answer is `{}`. (Measured against Gemini CLI 0.61.0.)

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered};

/// The command the hook runs.
pub const HOOK: &str = "lens hook gemini";

/// What Gemini CLI hands the model of a tool's output without cutting it.
pub const INLINE_LIMIT: usize = 40_000;

/// Lines `read_file` gives the model of a file before it cuts the rest
/// (`DEFAULT_MAX_LINES_TEXT_FILE` in Gemini CLI 0.61.0), less the exit code
/// line the answer may end with.
pub const INLINE_LINES: u64 = 2000 - 1;

/// What the user must do for a project install: Gemini CLI reads a project's
/// hooks only in a trusted folder.
pub const TRUST: &str = "Gemini CLI runs a project's hooks only in a trusted folder: trust it when gemini asks, or install with --global";

/// The settings edit: an `AfterTool` group matching `run_shell_command`.
pub fn hook_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Hook {
            event: "AfterTool",
            matcher: "run_shell_command",
            command: HOOK,
            extra: r#"{"name": "lens"}"#,
        },
    }
}

/// The text Gemini CLI gives the model for a shell call: `Output: …` then
/// optional `Exit Code: N`, `Error:`, `Signal:`, `Background PIDs:` and
/// `Process Group PGID:` lines. Returns the output and the exit code.
pub fn split_result(text: &str) -> Option<(String, Option<i32>)> {
    let text = text
        .trim()
        .strip_prefix("<untrusted_context>")
        .and_then(|t| t.strip_suffix("</untrusted_context>"))
        .unwrap_or(text)
        .trim_start_matches('\n');
    let body = text.strip_prefix("Output: ")?;
    let mut exit = None;
    let mut end = body.len();
    // The trailer lines, from the end up.
    let mut rest = body;
    while let Some(nl) = rest.trim_end_matches('\n').rfind('\n') {
        let last = rest[nl + 1..].trim_end();
        let known = [
            "Exit Code: ",
            "Error: ",
            "Signal: ",
            "Background PIDs: ",
            "Process Group PGID: ",
        ];
        match known.iter().find(|k| last.starts_with(*k)) {
            Some(k) => {
                if *k == "Exit Code: " {
                    exit = last[k.len()..].trim().parse().ok();
                }
                end = nl;
                rest = &rest[..nl];
            }
            None => break,
        }
    }
    let output = &body[..end];
    let output = if output == "(empty)" { "" } else { output };
    Some((output.to_string(), exit))
}

/// The captured output in an `AfterTool` event, when it is one Lens filters.
pub fn read_event(event: &Value) -> Option<Captured> {
    if event.get("hook_event_name")?.as_str()? != "AfterTool"
        || event.get("tool_name")?.as_str()? != "run_shell_command"
    {
        return None;
    }
    let line = event.pointer("/tool_input/command")?.as_str()?;
    let r = event.get("tool_response")?;
    let text = ["llmContent", "output", "returnDisplay"]
        .iter()
        .find_map(|k| r.get(*k).and_then(Value::as_str))
        .or_else(|| r.as_str())?;
    let (output, exit) = split_result(text)?;
    Some(Captured {
        line: line.to_string(),
        output: output.into_bytes(),
        full: None,
        exit,
        cwd: event.get("cwd").and_then(Value::as_str).map(String::from),
        level: None,
        budget: None,
        partial: false,
        inline: None,
    })
}

/// The answer: `read_file` of the view, written into the project's temp
/// directory (the one above the transcript's); `None` when it cannot be, or a
/// policy might refuse the read.
pub fn answer(event: &Value, view: &Filtered) -> Option<Value> {
    let transcript = event.get("transcript_path")?.as_str()?;
    let temp = std::path::Path::new(transcript).parent()?.parent()?;
    if policies_name_read_file(&crate::paths::home()) {
        return None;
    }
    let dir = temp.join("lens");
    std::fs::create_dir_all(&dir).ok()?;
    let file = dir.join(format!("{}.txt", view.handle));
    let exit = match view.exit {
        Some(c) if c != 0 => format!("\nExit Code: {c}"),
        _ => String::new(),
    };
    std::fs::write(
        &file,
        format!("Output: {}{exit}\n", view.text.trim_end_matches('\n')),
    )
    .ok()?;
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "AfterTool",
            "tailToolCallRequest": {
                "name": "read_file",
                "args": { "file_path": file.display().to_string() }
            }
        }
    }))
}

/// True when a user or admin policy file mentions `read_file`: the tail call
/// could then be refused, and the model would lose the output.
fn policies_name_read_file(home: &std::path::Path) -> bool {
    [
        home.join(".gemini/policies"),
        PathBuf::from("/etc/gemini-cli/policies"),
    ]
    .iter()
    .filter_map(|d| std::fs::read_dir(d).ok())
    .flatten()
    .flatten()
    .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("read_file")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_text_splits_into_output_and_exit_code() {
        assert_eq!(
            split_result("<untrusted_context>\nOutput: 1\n2\nProcess Group PGID: 17060\n</untrusted_context>"),
            Some(("1\n2".into(), None))
        );
        assert_eq!(
            split_result("<untrusted_context>\nOutput: (empty)\nExit Code: 1\nProcess Group PGID: 17097\n</untrusted_context>"),
            Some((String::new(), Some(1)))
        );
        assert_eq!(
            split_result("Output: a\nExit Code: 2"),
            Some(("a".into(), Some(2)))
        );
        assert_eq!(split_result("something else"), None);
    }
}
