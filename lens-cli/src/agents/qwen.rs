//! Qwen Code: a `PostToolUse` hook on `run_shell_command` (`lens hook qwen`)
//! in its settings, and the awareness block in `QWEN.md`.
//!
//! Qwen Code forked Gemini CLI but took Claude Code's hook protocol: the
//! settings group (`hooks.PostToolUse`, a `matcher`, command entries), the
//! snake_case event (`hook_event_name`, `tool_input.command`, `cwd`,
//! `tool_response`). The hook runs after Qwen Code ran the command as its
//! approval mode and rules allowed it, so every permission decision is its
//! own. `tool_response.llmContent` is the text the model would read: `Command:
//! …`, `Directory: …`, `Output: …`, then `Error:`, `Exit Code:`, `Signal:` and
//! `Process Group PGID:` lines; past 30,000 characters the shell tool has
//! already cut it to a 4,000-character preview and saved the whole text to a
//! file it names. `tool_response.returnDisplay` is the output itself, whole,
//! with a last line naming that file when there is one.
//!
//! Qwen Code 0.24.4 reads only three things from a `PostToolUse` answer
//! (`firePostToolUseHook`): `additionalContext`, `artifacts`, and `continue:
//! false`, which makes the call's result an error whose message is the
//! answer's `stopReason`, and lets the session go on. That message is what
//! the model then reads in place of the output, so the hook answers the view,
//! framed as Qwen Code frames a result, that way; Qwen Code shows the call as
//! stopped by a hook and lists it among `permission_denials` in its JSON
//! result, though the command ran ([`STOPPED`]). A command that exits non-zero
//! fires `PostToolUseFailure` instead, whose answer can only add context: a
//! failing command reaches the model as Qwen Code cut it ([`FAILURES`]).
//! (Read in Qwen Code 0.24.4's bundle, `chunks/chunk-DPEB6S2R.js`, and
//! measured against it.)

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered, Output};
use crate::event::{Event, Text};

/// The command the hook runs.
pub const HOOK: &str = "lens hook qwen";

/// What Qwen Code's shell tool hands the model uncut
/// (`DEFAULT_SHELL_OUTPUT_THRESHOLD`, 30,000 characters of the framed
/// text), less room for the frame.
pub const INLINE_LIMIT: usize = 29_000;

/// What `init` tells the user: the hook never sees a failing command.
pub const FAILURES: &str = "Qwen Code 0.24.4 hands a command that exits non-zero to PostToolUseFailure, whose answer cannot replace the output: failing builds and tests reach the model as Qwen Code cut them, unless run as `lens <command>`";

/// What `init` tells the user about how a view is answered.
pub const STOPPED: &str = "Qwen Code 0.24.4 lets a hook replace a result only by stopping the call (continue: false): a shortened call is shown as stopped by a hook and counted among permission_denials in its JSON output, though the command ran";

/// The settings edit: a `PostToolUse` group matching `run_shell_command`.
pub fn hook_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Hook {
            event: "PostToolUse",
            matcher: "run_shell_command",
            command: HOOK,
            extra: "",
        },
    }
}

/// The shell tool's notice for a result it cut and saved.
pub(super) const CUT: &str = "Tool output was too large and has been truncated.\n";
/// Where in that notice the framed text starts.
pub(super) const CUT_TEXT: &str = "\nTruncated part of the output:\n";
/// Where the shell tool's preview of a cut result leaves out the middle.
const CUT_MARK: &str = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n";
/// The last line `returnDisplay` gets when the output was saved.
pub(super) const SAVED: &str = "Output too long and was saved to: ";

/// A framed result split where its output goes: the lines before `Output: `,
/// the output as the frame holds it, and the trailer from `\nError: ` on.
fn split_frame(frame: &str) -> Option<(&str, &str, &str)> {
    let start = if frame.starts_with("Output: ") {
        0
    } else {
        frame.find("\nOutput: ")? + 1
    };
    let body = start + "Output: ".len();
    let end = frame.rfind("\nError: ").filter(|&e| e >= body)?;
    Some((&frame[..start], &frame[body..end], &frame[end..]))
}

/// The framed text inside `llmContent`: itself, or the part a cut result
/// shows after its notice.
fn frame(llm: &str) -> Option<&str> {
    if llm.starts_with(CUT) {
        let at = llm.find(CUT_TEXT)? + CUT_TEXT.len();
        return Some(&llm[at..]);
    }
    Some(llm)
}

/// The exit code in a frame's trailer (`Exit Code: N`), when it names one.
fn exit_code(trailer: &str) -> Option<i32> {
    trailer
        .lines()
        .find_map(|l| l.strip_prefix("Exit Code: "))
        .and_then(|v| v.parse().ok())
}

/// The command's output in an event: `returnDisplay` when it is the output
/// (less the saved-file line), checked against the frame; otherwise the
/// frame's own, when the frame is whole.
fn output_of(llm: &str, display: Option<Text>) -> Option<Output> {
    let (_, framed, _) = split_frame(frame(llm)?)?;
    let cut = llm.starts_with(CUT);
    if let Some(whole) = display {
        // `returnDisplay` is the whole output and may be spooled: its
        // saved-file line is in the sketch's tail, its start in the head.
        let (sketch, _, _) = whole.sketch();
        let d = match sketch.rfind(SAVED) {
            Some(at) if cut && (at == 0 || sketch[..at].ends_with('\n')) => {
                sketch[..at].strip_suffix('\n').unwrap_or(&sketch[..at])
            }
            _ => &sketch[..],
        };
        let dropped = (sketch.len() - d.len()) as u64;
        // The frame holds the whole output, or the start of it when cut.
        let agrees = if cut {
            let head = framed.split(CUT_MARK).next().unwrap_or("");
            head.get(..head.len().min(200))
                .is_some_and(|h| d.starts_with(h.trim_end_matches('.')))
        } else {
            // Read back only when as long as the frame's, which is held.
            whole.len() == framed.len() as u64 && whole.whole().is_some_and(|w| w == framed)
        };
        if agrees {
            return Some(whole.piece_to(whole.len() - dropped).into());
        }
    }
    if cut {
        return None;
    }
    let framed = if framed == "(empty)" { "" } else { framed };
    Some(framed.as_bytes().to_vec().into())
}

/// The captured output in a `PostToolUse` event, when it is one Lens filters.
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    let line = e.post_tool_use("run_shell_command")?;
    // Qwen Code cuts `llmContent` to 30,000 characters before the event, so
    // it is read whole: the frame is matched over all of it.
    let llm = e.text("/tool_response/llmContent")?.whole()?;
    let display = e.text("/tool_response/returnDisplay");
    let output = output_of(&llm, display)?;
    let (_, _, trailer) = split_frame(frame(&llm)?)?;
    Some(Captured {
        line: line.to_string(),
        output,
        full: None,
        exit: exit_code(trailer),
        cwd: event.get("cwd").and_then(Value::as_str).map(String::from),
        level: None,
        budget: None,
        partial: false,
        inline: None,
    })
}

/// The answer: the call stopped, with the view framed as Qwen Code frames a
/// result as the message the model reads.
pub fn answer(event: &Value, view: &Filtered) -> Option<Value> {
    let llm = event.pointer("/tool_response/llmContent")?.as_str()?;
    let (head, _, trailer) = split_frame(frame(llm)?)?;
    Some(json!({
        "continue": false,
        "stopReason": format!("{head}Output: {}{trailer}", view.text.trim_end_matches('\n')),
    }))
}

/// The text before Qwen Code added its settings-format `$version` member
/// (it puts one in every settings file without one when it starts), when
/// that is the change.
pub fn without_version(text: &str) -> Option<String> {
    let root = super::jsonedit::parse(text).ok()?;
    let super::jsonedit::Kind::Object(members) = &root.kind else {
        return None;
    };
    let at = members.iter().position(|(k, _, _)| k == "$version")?;
    Some(super::jsonedit::remove(text, &root, at))
}

/// Bytes Qwen Code's model reads of this result without Lens: the
/// `llmContent` the event holds, already cut by the shell tool.
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    e.text("/tool_response/llmContent")
        .map_or(output_len, |t| t.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(llm: &str, display: &str) -> Value {
        json!({
            "session_id": "s",
            "transcript_path": "/h/.qwen/projects/p/chats/s.jsonl",
            "cwd": "/p",
            "hook_event_name": "PostToolUse",
            "permission_mode": "yolo",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "git status", "description": "x"},
            "tool_response": {"llmContent": llm, "returnDisplay": display},
            "tool_use_id": "t",
        })
    }

    const TRAILER: &str =
        "\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)";

    #[test]
    fn a_whole_result_splits_into_its_output_and_exit_code() {
        let llm = format!("Command: git status\nDirectory: (root)\nOutput: a\nb{TRAILER}");
        let c = read_event(&event(&llm, "a\nb").into()).unwrap();
        assert_eq!(c.line, "git status");
        assert_eq!(c.output.to_vec().unwrap(), b"a\nb");
        assert_eq!(c.exit, Some(0));
        assert_eq!(c.cwd.as_deref(), Some("/p"));
        // Debug mode shows the frame itself: the frame's output is taken.
        assert_eq!(
            read_event(&event(&llm, &llm).into())
                .unwrap()
                .output
                .to_vec()
                .unwrap(),
            b"a\nb"
        );
        // An output line that looks like the trailer stays the output's.
        let out = "x\nError: (none)\ny";
        let llm = format!("Command: c\nDirectory: (root)\nOutput: {out}{TRAILER}");
        assert_eq!(
            read_event(&event(&llm, out).into())
                .unwrap()
                .output
                .to_vec()
                .unwrap(),
            out.as_bytes()
        );
        let llm = format!("Command: true\nDirectory: (root)\nOutput: (empty){TRAILER}");
        assert!(read_event(&event(&llm, "").into())
            .unwrap()
            .output
            .is_empty());
    }

    #[test]
    fn a_cut_result_is_read_whole_from_the_display() {
        let file = "/h/.qwen/tmp/abc/run_shell_command_1.output";
        let llm = format!("{CUT}The full output has been saved to: {file}\nTo read the complete output, use the read_file tool.\n{CUT_TEXT}Command: seq 1 70000\nDirectory: (root)\nOutput: 1\n2\n3\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n69999\n70000{TRAILER}");
        let whole: String = (1..=70000).map(|n| format!("{n}\n")).collect();
        let whole = whole.trim_end();
        let display = format!("{whole}\n{SAVED}{file}");
        let c = read_event(&event(&llm, &display).into()).unwrap();
        assert_eq!(c.output.to_vec().unwrap(), whole.as_bytes());
        assert_eq!(
            model_would_read(&event(&llm, &display).into(), 9),
            llm.len() as u64
        );
        // Without the display the whole output is not in the event.
        assert!(read_event(&event(&llm, "").into()).is_none());
    }

    #[test]
    fn what_is_not_a_finished_shell_command_is_left_alone() {
        let llm = format!("Command: c\nDirectory: (root)\nOutput: a{TRAILER}");
        let mut e = event(&llm, "a");
        e["hook_event_name"] = json!("PostToolUseFailure");
        assert!(read_event(&e.clone().into()).is_none());
        let mut e = event(&llm, "a");
        e["tool_name"] = json!("read_file");
        assert!(read_event(&e.clone().into()).is_none());
        let e = event(
            "Command was cancelled by user before it could complete.",
            "",
        );
        assert!(read_event(&e.clone().into()).is_none());
    }

    #[test]
    fn the_version_qwen_adds_to_its_settings_is_recognised() {
        let written = "{\n  \"telemetry\": {\"enabled\": false},\n  \"hooks\": {\n    \"PostToolUse\": []\n  }\n}\n";
        let opened = "{\n  \"telemetry\": {\"enabled\": false},\n  \"hooks\": {\n    \"PostToolUse\": []\n  },\n  \"$version\": 4\n}\n";
        assert_eq!(without_version(opened).as_deref(), Some(written));
        assert_eq!(without_version(written), None);
    }

    #[test]
    fn the_answer_stops_the_call_with_the_view_in_qwens_frame() {
        let llm = format!("Command: git status\nDirectory: (root)\nOutput: a\nb{TRAILER}");
        let v = Filtered::sample(Some(0));
        let a = answer(&event(&llm, "a\nb"), &v).unwrap();
        assert_eq!(a["continue"], json!(false));
        assert_eq!(
            a["stopReason"],
            json!(format!(
                "Command: git status\nDirectory: (root)\nOutput: view{TRAILER}"
            ))
        );
    }
}
