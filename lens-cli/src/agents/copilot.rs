//! GitHub Copilot CLI: a `postToolUse` hook (`lens hook copilot`) in a hooks
//! file Lens owns, and the awareness block in `copilot-instructions.md`.
//!
//! The hook runs after Copilot CLI ran the command as its permission rules
//! allowed it (a denied command never reaches it), so every permission
//! decision is Copilot's own. Its input (camelCase, no event name) holds
//! `toolName` (`bash`), `toolArgs.command`, `cwd` and `toolResult`: the
//! result text the model would read, `textResultForLlm`, which is the output
//! (stderr merged) and a last line `<shellId: N completed with exit code C>`.
//! A failing command is a `success` result too (its exit code is in that
//! line), so the hook sees failures as well as successes. Past about 20 KB
//! Copilot saves the whole output to a file and hands over only a notice
//! naming it (`Saved to: …`) and a 500-character preview. The answer
//! `modifiedResult` replaces what the model reads; the hook keeps Copilot's
//! last line under the view. (Measured against Copilot CLI 1.0.102; the
//! hook protocol is in its native runtime, `runtime.node`, and its SDK's
//! `PostToolUseHookOutput` type.)

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered, Output};
use crate::event::Event;

/// The command the hook runs.
pub const HOOK: &str = "lens hook copilot";

/// What Copilot CLI hands the model of a command's output without saving it
/// to a file (`large_output_threshold_bytes`, 20,480), less its last line.
pub const INLINE_LIMIT: usize = 20_000;

/// The hooks file `init` writes and owns (`~/.copilot/hooks/lens.json` or a
/// repository's `.github/hooks/lens.json`).
pub const HOOKS_FILE: &str = r#"{
  "version": 1,
  "hooks": {
    "postToolUse": [
      {
        "type": "command",
        "bash": "lens hook copilot"
      }
    ]
  }
}
"#;

/// What the user must do for a project install: Copilot CLI runs a
/// repository's hooks only in a folder the user trusted.
pub const TRUST: &str = "Copilot CLI runs a repository's hooks only in a trusted folder: trust it when copilot asks (or run it with --trust-folder), or install with --global";

/// The hooks file edit.
pub fn hooks_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::File {
            contents: HOOKS_FILE,
        },
    }
}

/// Copilot's last line of a finished command's result, and the exit code in
/// it: `\n<shellId: N completed with exit code C>`.
fn split_trailer(text: &str) -> Option<(&str, &str, i32)> {
    let body = text.strip_suffix('>')?;
    let at = body.rfind("\n<shellId: ")?;
    let line = &body[at + "\n<shellId: ".len()..];
    let (id, code) = line.split_once(" completed with exit code ")?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let code = code.parse().ok()?;
    Some((&text[..at], &text[at..], code))
}

/// The file a result too large to hand over was saved to, from Copilot's
/// notice: `Output too large to read at once (399.3 KB). Saved to: PATH`.
fn saved_to(text: &str) -> Option<PathBuf> {
    let first = text.lines().next()?;
    if !first.starts_with("Output too large to read at once (") {
        return None;
    }
    let path = first.split_once(". Saved to: ")?.1.trim_end();
    Some(PathBuf::from(path))
}

/// The captured output in a `postToolUse` event, when it is one Lens filters.
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    if event.get("toolName")?.as_str()? != "bash" {
        return None;
    }
    let line = event.pointer("/toolArgs/command")?.as_str()?;
    let r = event.get("toolResult")?;
    if r.get("resultType")?.as_str()? != "success" {
        return None;
    }
    let text = e.text("/toolResult/textResultForLlm")?;
    // The last line is in a spooled text's tail and the notice in its head:
    // the sketch reads both, and the output is the text less that last line.
    let (sketch, _, _) = text.sketch();
    // A command still running (sent to the background) has another last line.
    let (output, trailer, exit) = split_trailer(&sketch)?;
    let full = saved_to(output);
    Some(Captured::of_event(
        line.to_string(),
        if full.is_some() {
            Output::default()
        } else {
            text.piece_to(text.len() - trailer.len() as u64).into()
        },
        full,
        Some(exit),
        event,
    ))
}

/// The answer: the view in place of the result text, under Copilot's own
/// last line (so the model still reads the shell id and the exit code).
pub fn answer(e: &Event, view: &Filtered) -> Option<Value> {
    // The last line of a spooled text is in its sketch's tail.
    let (text, _, _) = e.text("/toolResult/textResultForLlm")?.sketch();
    let (_, trailer, _) = split_trailer(&text)?;
    Some(json!({
        "modifiedResult": {
            "resultType": "success",
            "textResultForLlm": format!("{}{trailer}", view.text.trim_end_matches('\n')),
        }
    }))
}

/// Bytes Copilot's model reads of this result without Lens: the result text
/// the event holds is exactly that (the notice and preview for a saved one).
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    e.text("/toolResult/textResultForLlm")
        .map_or(output_len, |t| t.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(text: &str) -> Value {
        json!({
            "sessionId": "s",
            "timestamp": 1,
            "cwd": "/p",
            "toolName": "bash",
            "toolArgs": {"command": "make", "description": "x"},
            "toolResult": {"resultType": "success", "textResultForLlm": text},
        })
    }

    #[test]
    fn the_output_and_exit_code_are_read_from_the_result_text() {
        let c = read_event(&event("a\nb\n<shellId: 3 completed with exit code 2>").into()).unwrap();
        assert_eq!(c.line, "make");
        assert_eq!(c.output.to_vec().unwrap(), b"a\nb");
        assert_eq!(c.exit, Some(2));
        assert_eq!(c.full, None);
        assert_eq!(c.cwd.as_deref(), Some("/p"));
        let c = read_event(&event("\n<shellId: 0 completed with exit code 0>").into()).unwrap();
        assert_eq!((c.output.len(), c.exit), (0, Some(0)));
    }

    #[test]
    fn a_saved_result_is_read_from_its_file() {
        let text = "Output too large to read at once (399.3 KB). Saved to: /tmp/1-copilot-tool-output-x.txt\nConsider using tools like grep.\n\nPreview (first 500 chars):\n1\n2\n\n<shellId: 1 completed with exit code 0>";
        let c = read_event(&event(text).into()).unwrap();
        assert_eq!(
            c.full,
            Some(PathBuf::from("/tmp/1-copilot-tool-output-x.txt"))
        );
        assert!(c.output.is_empty());
        assert_eq!(
            model_would_read(&event(text).into(), 408_894),
            text.len() as u64
        );
    }

    #[test]
    fn what_is_not_a_finished_shell_command_is_left_alone() {
        for text in [
            "a\n<shellId: 3 still running>",
            "a",
            "a\n<shellId: x completed with exit code 1>",
        ] {
            assert!(read_event(&event(text).into()).is_none(), "{text}");
        }
        let mut e = event("a\n<shellId: 3 completed with exit code 0>");
        e["toolResult"]["resultType"] = json!("failure");
        assert!(read_event(&e.clone().into()).is_none());
        e["toolResult"]["resultType"] = json!("success");
        e["toolName"] = json!("view");
        assert!(read_event(&e.clone().into()).is_none());
    }

    #[test]
    fn the_answer_keeps_copilots_last_line() {
        let v = Filtered::sample(Some(2));
        let e = event("a\n<shellId: 3 completed with exit code 2>");
        assert_eq!(
            answer(&e.into(), &v).unwrap(),
            json!({"modifiedResult": {"resultType": "success",
                "textResultForLlm": "view\n<shellId: 3 completed with exit code 2>"}})
        );
    }
}
