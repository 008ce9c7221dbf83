//! pi (`@mariozechner/pi-coding-agent`): an extension whose `tool_result`
//! handler hands the bash tool's finished result to `lens hook pi` and, when
//! Lens answers with a view, returns it as the result's content, which is what
//! the model reads; and the awareness block in `AGENTS.md`.
//!
//! What pi 0.73.1 does, read from its bundle (`core/tools/bash.js`,
//! `core/agent-session.js`, `pi-agent-core`'s `agent-loop.js`,
//! `core/extensions/loader.js`): every tool call's result, a failed one too,
//! passes through `afterToolCall`, which runs each extension's `tool_result`
//! handlers; content a handler returns replaces the result's (its `isError`
//! stays unless the handler sets one). The bash tool keeps the last 2,000
//! lines or 50 KiB of an output, saves the whole to a temp file named in
//! `details.fullOutputPath`, and ends the text with a `[Showing lines …
//! Full output: PATH]` line. A command that exits non-zero becomes an error
//! whose text is that output, a blank line and `Command exited with code N`
//! (its `details` are then empty: the path is only in the text); a timeout or
//! an abort ends with its own line instead, and is left alone here. pi has no
//! permission rules of its own: what runs is decided before the call
//! (by `tool_call` handlers of the user's extensions), never by this one.
//! Extensions load from `~/.pi/agent/extensions/*.{ts,js}` and a project's
//! `.pi/extensions/`; it reads `AGENTS.md` from `~/.pi/agent` and from the
//! project's directories.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::captured::{Captured, Filtered};
use crate::event::Event;

/// What pi's bash tool shows without cutting (`DEFAULT_MAX_BYTES`; it cuts at
/// `DEFAULT_MAX_LINES`, 2,000 lines, too).
pub const INLINE_LIMIT: usize = 50 * 1024;

/// The extension file `init` writes and owns.
pub const EXTENSION: &str = r#"// Installed by `lens init --agent pi`; `lens init --uninstall` removes it.
// After pi's bash tool ran, Lens may answer with a shorter view of its
// output, which the model then reads; the full output stays retrievable with
// `lens show`. Any error, or no answer, keeps pi's own result.
import { spawnSync } from "node:child_process";

export default function (pi) {
  pi.on("tool_result", async (event, ctx) => {
    try {
      if (event?.toolName !== "bash") return;
      const parts = Array.isArray(event.content) ? event.content : [];
      if (parts.length !== 1 || parts[0]?.type !== "text") return;
      const full = event.details?.fullOutputPath;
      const r = spawnSync("lens", ["hook", "pi"], {
        input: JSON.stringify({
          command: event.input?.command ?? "",
          output: parts[0].text,
          isError: event.isError === true,
          fullOutputPath: typeof full === "string" ? full : null,
          cwd: typeof ctx?.cwd === "string" ? ctx.cwd : process.cwd(),
        }),
        encoding: "utf8",
        timeout: 10000,
        maxBuffer: 1 << 24,
      });
      if (r.status !== 0 || !r.stdout) return;
      const answer = JSON.parse(r.stdout);
      if (typeof answer.output === "string") {
        return { content: [{ type: "text", text: answer.output }] };
      }
    } catch {}
  });
}
"#;

/// The line pi ends a failed command's text with.
const EXITED: &str = "Command exited with code ";

/// What opens the line naming the full output at the end of a cut output.
const SHOWING: &str = "\n\n[Showing ";
const FULL: &str = "Full output: ";

/// The event the extension sends; `None` for a result that is not a
/// command's output (a timeout, an abort, a tool error).
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    let line = event.get("command")?.as_str()?;
    let whole = e.text("/output")?;
    // pi's last lines (the exit status, the full output's name) are in a
    // spooled text's tail: the sketch reads them, and the output is the text
    // less them.
    let (text, _, _) = whole.sketch();
    let failed = event.get("isError").and_then(Value::as_bool)?;
    let (output, exit) = if failed {
        split_status(&text)?
    } else {
        (&*text, 0)
    };
    let full = event
        .get("fullOutputPath")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .or_else(|| named_full(output));
    let dropped = (text.len() - output.len()) as u64;
    Some(Captured::of_event(
        line.to_string(),
        whole.piece_to(whole.len() - dropped).into(),
        full,
        Some(exit),
        event,
    ))
}

/// A failed command's text as its output and exit code.
fn split_status(text: &str) -> Option<(&str, i32)> {
    let at = text.rfind(EXITED)?;
    let code = text[at + EXITED.len()..].parse().ok()?;
    let before = &text[..at];
    Some((before.strip_suffix("\n\n").unwrap_or(before), code))
}

/// The full output's file named in the line pi ends a cut output with.
fn named_full(output: &str) -> Option<PathBuf> {
    let notice = &output[output.rfind(SHOWING)?..];
    let last = notice.strip_suffix(']')?;
    let path = &last[last.rfind(FULL)? + FULL.len()..];
    (!path.is_empty() && !path.contains('\n')).then(|| PathBuf::from(path))
}

/// The content the extension returns: the view, and for a failed command the
/// line pi ends its text with, so the model still reads the exit code.
pub fn answer(view: &Filtered) -> Value {
    let text = match view.exit {
        Some(code) if code != 0 => {
            format!("{}\n\n{EXITED}{code}", view.text.trim_end_matches('\n'))
        }
        _ => view.text.clone(),
    };
    json!({ "output": text })
}

/// Bytes pi's model reads of this result without Lens: the event's text,
/// which pi cut before the event.
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    e.text("/output").map_or(output_len, |t| t.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(text: &str, failed: bool, full: Option<&str>) -> Value {
        json!({"command": "make", "output": text, "isError": failed, "fullOutputPath": full, "cwd": "/p"})
    }

    #[test]
    fn a_failed_command_gives_its_output_and_exit_code() {
        let c =
            read_event(&event("a\nb\n\n\nCommand exited with code 3", true, None).into()).unwrap();
        assert_eq!(c.output.to_vec().unwrap(), b"a\nb\n");
        assert_eq!(c.exit, Some(3));
        assert_eq!(c.full, None);
        let c = read_event(&event("a\nb\n", false, None).into()).unwrap();
        assert_eq!(
            (c.output.to_vec().unwrap().as_slice(), c.exit),
            (&b"a\nb\n"[..], Some(0))
        );
        // A timeout or an abort is not a command's output.
        assert!(
            read_event(&event("a\n\nCommand timed out after 5 seconds", true, None).into())
                .is_none()
        );
        assert!(read_event(&json!({"command": "x", "output": "y"}).into()).is_none());
    }

    #[test]
    fn the_full_output_is_found_where_pi_names_it() {
        let cut =
            "9\n10\n\n[Showing lines 9-10 of 10 (50.0KB limit). Full output: /tmp/pi-bash-1a.log]";
        let c = read_event(&event(cut, false, Some("/tmp/pi-bash-1a.log")).into()).unwrap();
        assert_eq!(c.full, Some(PathBuf::from("/tmp/pi-bash-1a.log")));
        // A failure's details are empty: the path comes from the text.
        let failed = format!("{cut}\n\nCommand exited with code 2");
        let c = read_event(&event(&failed, true, None).into()).unwrap();
        assert_eq!(c.full, Some(PathBuf::from("/tmp/pi-bash-1a.log")));
        assert_eq!(c.exit, Some(2));
        assert_eq!(named_full("no notice]"), None);
    }

    #[test]
    fn the_answer_keeps_the_exit_code_line() {
        let view = |exit| Filtered {
            text: "view\n".into(),
            handle: lens_core::Handle::parse("1a2b3c4d").unwrap(),
            raw_bytes: 9,
            argv: Vec::new(),
            level: lens_core::Level::Two,
            exit,
        };
        assert_eq!(answer(&view(Some(0)))["output"], "view\n");
        assert_eq!(
            answer(&view(Some(3)))["output"],
            "view\n\nCommand exited with code 3"
        );
        let text = "x".repeat(10);
        assert_eq!(model_would_read(&event(&text, false, None).into(), 99), 10);
    }
}
