//! Gemini CLI: a `BeforeTool` hook on `run_shell_command` (`lens hook gemini`)
//! and the awareness block in `GEMINI.md`.
//!
//! The hook answers with `hookSpecificOutput.tool_input`, which Gemini CLI merges
//! over the model's arguments: the command rewritten into `lens <command>`. It
//! sets no decision, so Gemini CLI's own confirmation applies to the rewritten
//! command as it would have to the original. Any error means an empty answer
//! (`{}`): the original runs.

use std::path::PathBuf;

use serde_json::Value;

use super::{Change, Edit};
use crate::rewrite;

/// The command the hook runs.
pub const HOOK: &str = "lens hook gemini";

/// The settings edit: a `BeforeTool` group matching `run_shell_command`.
pub fn hook_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Hook {
            event: "BeforeTool",
            matcher: "run_shell_command",
            command: HOOK,
            name: Some("lens"),
        },
    }
}

/// The hook's answer to one event: the rewrite, or `{}` (Gemini CLI wants JSON
/// on every path).
pub fn answer(input: &str) -> String {
    let rewritten = (|| {
        let event: Value = serde_json::from_str(input).ok()?;
        if event.get("tool_name")?.as_str()? != "run_shell_command" {
            return None;
        }
        let command = event.pointer("/tool_input/command")?.as_str()?;
        rewrite::rewrite(command).ok()
    })();
    match rewritten {
        Some(c) => serde_json::json!({ "hookSpecificOutput": { "tool_input": { "command": c } } })
            .to_string(),
        None => "{}".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVENT: &str = r#"{"session_id":"s1","transcript_path":"/tmp/t.json","cwd":"/home/u/app","hook_event_name":"BeforeTool","timestamp":"2026-11-30T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"cargo build","description":"Build"}}"#;

    #[test]
    fn rewrites_a_shaped_shell_command_and_answers_empty_otherwise() {
        let a: Value = serde_json::from_str(&answer(EVENT)).unwrap();
        assert_eq!(
            a["hookSpecificOutput"]["tool_input"]["command"],
            "lens cargo build"
        );
        assert!(a.get("decision").is_none());
        assert_eq!(
            answer(&EVENT.replace("cargo build", "cargo build > log")),
            "{}"
        );
        assert_eq!(
            answer(&EVENT.replace("run_shell_command", "read_file")),
            "{}"
        );
        assert_eq!(answer("garbage"), "{}");
    }
}
