//! Claude Code: a `PostToolUse` hook on the Bash tool (`lens hook claude`), an
//! allow rule for `lens show`, and the awareness block in `CLAUDE.md`.
//!
//! The hook runs after Claude Code ran the command as the user's permission
//! rules allowed it (a denied command never reaches it), so every permission
//! decision is Claude Code's own. Its input holds the command, the output
//! (stderr merged into `stdout`; past 30,000 characters only the first 30,000,
//! with `persistedOutputPath` naming the file that holds it, up to 64 MiB,
//! and `persistedOutputSize` its whole size) and no exit
//! code: `PostToolUse` fires only for a command that succeeded (or whose exit
//! Claude Code read as an answer, as grep's 1). The answer replaces what the
//! model reads with `hookSpecificOutput.updatedToolOutput`, which must have the
//! Bash tool's output shape (a plain string is dropped silently) and stay under
//! the 30,000 characters Claude Code shows inline (a longer one is persisted
//! again). A failing command fires only `PostToolUseFailure`, which cannot
//! replace anything: that output reaches the model as Claude Code cut it.
//! (Measured against Claude Code 2.1.328, and read in its binary: the Bash
//! tool throws on a failing exit, the failure event's input has only `error`,
//! `Exit code N` and the output's first ~10,000 characters, and its answer
//! only `additionalContext`. `init` says so: [`FAILURES`].)

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered, Output};
use crate::event::{Event, Piece};

/// The command the hook runs.
pub const HOOK: &str = "lens hook claude";

/// What Claude Code shows inline of a command's output; the view stays under it.
pub const INLINE_LIMIT: usize = 30_000;

/// What `init` tells the user: the hook never sees a failing command.
pub const FAILURES: &str = "Claude Code 2.1.328 runs after-tool hooks only for commands that succeed: failing builds and tests reach the model unfiltered, unless run as `lens <command>` (which needs its own allow rule, e.g. Bash(lens make:*))";

/// The rule that lets the agent fetch what a marker hides without a prompt.
pub const ALLOW_SHOW: &str = "Bash(lens show:*)";

/// The settings edits: the `PostToolUse` group matching `Bash`, and the allow
/// rule for `lens show`.
pub fn settings_edits(path: PathBuf) -> Vec<Edit> {
    vec![
        Edit {
            path: path.clone(),
            change: Change::Hook {
                event: "PostToolUse",
                matcher: "Bash",
                command: HOOK,
                extra: "",
            },
        },
        Edit {
            path,
            change: Change::ListItem {
                keys: &["permissions", "allow"],
                item: ALLOW_SHOW,
            },
        },
    ]
}

/// The captured output in a `PostToolUse` event, when it is one Lens filters.
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    let line = e.post_tool_use("Bash")?;
    let r = event.get("tool_response")?;
    // An interrupted run, an image, or a command sent to the background: the
    // result is not a finished command's text.
    let flag = |k: &str| r.get(k).and_then(Value::as_bool).unwrap_or(false);
    if flag("interrupted") || flag("isImage") || r.get("backgroundTaskId").is_some() {
        return None;
    }
    let mut output = Output::from(e.text("/tool_response/stdout")?.piece());
    if let Some(err) = e.text("/tool_response/stderr") {
        if !err.is_empty() {
            output.push(Piece::Held(b"\n".to_vec()));
            output.push(err.piece());
        }
    }
    let full = r
        .get("persistedOutputPath")
        .and_then(Value::as_str)
        .map(PathBuf::from);
    // Claude Code copies at most 64 MiB of an output into that file, and
    // names the whole output's size: a file shorter than that holds a part.
    let size = r.get("persistedOutputSize").and_then(Value::as_u64);
    let partial = match (&full, size) {
        (Some(p), Some(n)) => std::fs::metadata(p).is_ok_and(|m| m.len() < n),
        _ => false,
    };
    Some(Captured {
        line: line.to_string(),
        output,
        full,
        exit: None,
        cwd: event.get("cwd").and_then(Value::as_str).map(String::from),
        level: None,
        budget: None,
        partial,
        inline: None,
    })
}

/// The answer that makes the model read the view.
pub fn answer(_event: &Value, view: &Filtered) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": {
                "stdout": view.text.trim_end_matches('\n'),
                "stderr": "",
                "interrupted": false,
                "isImage": false,
            }
        }
    })
}

/// What Claude Code 2.1.328's Bash tool hands the model of an output it
/// persisted: a preview of the first 2,000 characters (cut back to the last
/// line break when one falls past the half), inside a `<persisted-output>`
/// block naming the file and the size (`mapToolResultToToolResultBlockParam`
/// and the preview helper in its bundle).
const PREVIEW_CHARS: usize = 2000;

/// Bytes Claude Code's model reads of this result without Lens: the event's
/// own text when it was inline (it IS what the model reads, trimmed as Claude
/// Code trims it), the preview block when the output was persisted;
/// `output_len` when the event holds neither.
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    let Some(r) = e.value.get("tool_response") else {
        return output_len;
    };
    let Some(stdout) = e.text("/tool_response/stdout") else {
        return output_len;
    };
    // A spooled string's middle is left out of its sketch: trimming only
    // touches its ends, and the bytes left out are counted back.
    let (stdout, middle, _) = stdout.sketch();
    let body = stdout
        .trim_start_matches(['\n', ' ', '\t', '\r'])
        .trim_end();
    let err_len = e.text("/tool_response/stderr").map_or(0, |t| {
        let (err, middle, _) = t.sketch();
        let err = err.trim();
        if err.is_empty() {
            0
        } else {
            err.len() as u64 + middle + 1
        }
    });
    let Some(path) = r.get("persistedOutputPath").and_then(Value::as_str) else {
        return body.len() as u64 + middle + err_len;
    };
    let size = r
        .get("persistedOutputSize")
        .and_then(Value::as_u64)
        .unwrap_or(output_len);
    let (preview, more) = preview(body);
    let block = format!(
        "<persisted-output>\nOutput too large ({}). Full output saved to: {path}\nPreview (first 2KB):\n{preview}{}</persisted-output>",
        claude_size(size),
        if more { "\n...\n" } else { "" }
    );
    block.len() as u64 + err_len
}

/// The preview: the first [`PREVIEW_CHARS`] characters, ending at the last
/// line break in them when that is past the half; and whether text is left.
fn preview(text: &str) -> (&str, bool) {
    let Some((cut, _)) = text.char_indices().nth(PREVIEW_CHARS) else {
        return (text, false);
    };
    let head = &text[..cut];
    let end = match head.rfind('\n') {
        Some(nl) if head[..nl].chars().count() > PREVIEW_CHARS / 2 => nl,
        _ => cut,
    };
    (&text[..end], true)
}

/// A size as Claude Code writes it (`399.3KB`).
fn claude_size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1 << 20 => format!("{:.1}KB", b as f64 / 1024.0),
        b => format!("{:.1}MB", b as f64 / (1u64 << 20) as f64),
    }
}

#[cfg(test)]
mod would_read_tests {
    use super::*;

    #[test]
    fn an_inline_result_is_read_as_the_event_holds_it() {
        let e = json!({"tool_response": {"stdout": "\nabc\n\n", "stderr": "warn\n"}});
        // "abc", then the stderr on a line of its own.
        assert_eq!(model_would_read(&e.into(), 999), 3 + 1 + 4);
        assert_eq!(model_would_read(&json!({}).into(), 999), 999);
    }

    #[test]
    fn a_persisted_result_is_read_as_its_two_kb_preview() {
        let line = "x".repeat(99) + "\n";
        let stdout = line.repeat(300);
        let path = "/h/.claude/projects/p/tool-results/b1.txt";
        let e = json!({"tool_response": {"stdout": stdout, "stderr": "",
            "persistedOutputPath": path, "persistedOutputSize": 408_894}});
        let n = model_would_read(&e.into(), 408_894);
        // 19 whole lines of the first 2,000 characters, and the block around them.
        let preview = 19 * 100 - 1;
        assert!(n > preview as u64 && n < preview as u64 + 300, "{n}");
        assert!(n < 3000, "{n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(response: Value) -> Value {
        json!({
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "cwd": "/p",
            "tool_input": {"command": "git status", "description": "x"},
            "tool_response": response,
        })
    }

    #[test]
    fn a_finished_commands_output_is_read_with_the_full_file() {
        let c = read_event(
            &event(json!({
                "stdout": "a\nb", "stderr": "", "interrupted": false, "isImage": false,
                "persistedOutputPath": "/h/.claude/x.txt"
            }))
            .into(),
        )
        .unwrap();
        assert_eq!(c.line, "git status");
        assert_eq!(c.output.to_vec().unwrap(), b"a\nb");
        assert_eq!(c.full, Some(PathBuf::from("/h/.claude/x.txt")));
        assert_eq!(c.exit, None);
        assert_eq!(c.cwd.as_deref(), Some("/p"));
    }

    #[test]
    fn a_persisted_file_shorter_than_the_output_holds_a_part() {
        // Past 64 MiB Claude Code's file holds the first 64 MiB only.
        let dir = std::env::temp_dir().join(format!("lens-claude-part-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("b1.txt");
        std::fs::write(&file, "0123456789").unwrap();
        let read = |size: u64| {
            read_event(
                &event(json!({
                    "stdout": "0123", "stderr": "", "interrupted": false, "isImage": false,
                    "persistedOutputPath": file.display().to_string(),
                    "persistedOutputSize": size,
                }))
                .into(),
            )
            .unwrap()
        };
        assert!(!read(10).partial);
        let c = read(70_000_000);
        assert!(c.partial);
        assert_eq!(
            crate::captured::filter(&c, &mut Vec::new()).err(),
            Some(crate::captured::Raw::Partial)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_is_not_a_finished_command_is_left_alone() {
        for r in [
            json!({"stdout": "a", "stderr": "", "interrupted": true, "isImage": false}),
            json!({"stdout": "a", "stderr": "", "interrupted": false, "isImage": true}),
            json!({"stdout": "", "stderr": "", "interrupted": false, "backgroundTaskId": "b1"}),
            json!({"stderr": ""}),
        ] {
            assert!(read_event(&event(r.clone()).into()).is_none(), "{r}");
        }
        let mut e = event(json!({"stdout": "a", "stderr": ""}));
        e["hook_event_name"] = json!("PostToolUseFailure");
        assert!(read_event(&e.clone().into()).is_none());
        e["hook_event_name"] = json!("PostToolUse");
        e["tool_name"] = json!("Read");
        assert!(read_event(&e.clone().into()).is_none());
    }

    #[test]
    fn the_answer_has_the_bash_output_shape() {
        let v = Filtered::sample(None);
        let a = answer(&Value::Null, &v);
        assert_eq!(
            a["hookSpecificOutput"]["updatedToolOutput"],
            json!({"stdout": "view", "stderr": "", "interrupted": false, "isImage": false})
        );
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    }
}
