//! Gemini CLI: an `AfterTool` hook on `run_shell_command` (`lens hook gemini`)
//! and the awareness block in `GEMINI.md`.
//!
//! The hook runs after Gemini CLI ran the command as its policy engine allowed
//! it (a denied command never reaches it), so every permission decision is
//! Gemini CLI's own. Its input holds the whole output (stderr merged) framed as
//! the model reads it: `Output: …`, then trailer lines such as `Exit Code: N`
//! (see [`split_result`]), and without a terminal the output alone too. No
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

/// Whether a trailer line's value has the form Gemini CLI writes.
type Valid = fn(&str) -> bool;

/// The lines Gemini CLI 0.61.0 appends to `Output: …` (the shell tool's
/// `execute`, bundle/chunk-5FZXKDXH.js), each on its own line, only when it
/// applies, and in this order: `Error: <spawn error>`, `Exit Code: N` (not 0),
/// `Signal: S`, `Background PIDs: a, b`, `Process Group PGID: N`. `Error:` is
/// not here: its message is free text, so it is told apart from the output's
/// own last line only by what else the event says (see [`split_result`]).
const TRAILER: [(&str, Valid); 4] = [
    ("Process Group PGID: ", digits),
    ("Background PIDs: ", |v| v.split(", ").all(digits)),
    ("Signal: ", |v| {
        digits(v)
            || (v.len() > 3
                && v.starts_with("SIG")
                && v[3..].bytes().all(|b| b.is_ascii_alphanumeric()))
    }),
    ("Exit Code: ", |v| {
        digits(v.strip_prefix('-').unwrap_or(v)) && v.parse::<i64>().is_ok_and(|c| c != 0)
    }),
];

fn digits(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

/// `text` without the trailer lines Gemini CLI may have appended to it, from
/// the last up, each at most once and only in its strict form; and the exit
/// code among them.
fn strip_trailer(text: &str) -> (&str, Option<i32>) {
    let (mut rest, mut exit) = (text, None);
    for (label, valid) in TRAILER {
        let Some(nl) = rest.rfind('\n') else { break };
        let Some(value) = rest[nl + 1..].strip_prefix(label) else {
            continue;
        };
        if valid(value) {
            if label == "Exit Code: " {
                exit = value.parse().ok();
            }
            rest = &rest[..nl];
        }
    }
    (rest, exit)
}

/// The output and exit code in the text Gemini CLI gives the model for a shell
/// call (`llmContent`: `Output: …` and its trailer, wrapped in
/// `<untrusted_context>`). `display` is the event's `returnDisplay` when it is
/// a string (the output itself, as Gemini CLI had it before framing) and
/// `error` the message of the event's `error`: with `display` the text splits
/// exactly where the output ends; without it an `Error:` line is Gemini's only
/// when it is `error`'s message, else it stays in the output.
pub fn split_result(
    text: &str,
    display: Option<&str>,
    error: Option<&str>,
) -> Option<(String, Option<i32>)> {
    let text = text
        .trim()
        .strip_prefix("<untrusted_context>")
        .and_then(|t| t.strip_suffix("</untrusted_context>"))
        .map_or(text, |t| t.trim_matches('\n'));
    let body = text.strip_prefix("Output: ")?;
    // Gemini CLI escapes this one closing tag in what it wraps.
    let escape = |s: &str| s.replace("</untrusted_context>", "&lt;/untrusted_context&gt;");
    if let Some(display) = display.filter(|d| !d.is_empty()) {
        if let Some(after) = body.strip_prefix(&*escape(display)) {
            let (gemini, exit) = strip_trailer(after);
            if gemini.is_empty() || gemini.starts_with("\nError: ") {
                return Some((display.to_string(), exit));
            }
        }
    }
    let (mut output, exit) = strip_trailer(body);
    if let Some(e) = error {
        if let Some(o) = output.strip_suffix(&*format!("\nError: {}", escape(e))) {
            output = o;
        }
    }
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
    // `returnDisplay` is the output as a string only when Gemini CLI ran the
    // command without a terminal; with one it is the screen's cells.
    let display = r.get("returnDisplay").and_then(Value::as_str);
    let error = r.pointer("/error/message").and_then(Value::as_str);
    let (output, exit) = split_result(text, display, error)?;
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
            split_result("<untrusted_context>\nOutput: 1\n2\nProcess Group PGID: 17060\n</untrusted_context>", None, None),
            Some(("1\n2".into(), None))
        );
        assert_eq!(
            split_result("<untrusted_context>\nOutput: (empty)\nExit Code: 1\nProcess Group PGID: 17097\n</untrusted_context>", None, None),
            Some((String::new(), Some(1)))
        );
        assert_eq!(
            split_result("Output: a\nExit Code: 2", None, None),
            Some(("a".into(), Some(2)))
        );
        assert_eq!(
            split_result("Output: a\nExit Code: -2\nSignal: 9\nBackground PIDs: 31, 32\nProcess Group PGID: 30", None, None),
            Some(("a".into(), Some(-2)))
        );
        assert_eq!(
            split_result("Output: a\nSignal: SIGTERM", None, None),
            Some(("a".into(), None))
        );
        assert_eq!(split_result("something else", None, None), None);
    }

    #[test]
    fn the_outputs_own_last_lines_are_not_taken_for_the_trailer() {
        let wrap = |t: &str| format!("<untrusted_context>\n{t}\n</untrusted_context>");
        // The case of issue #30.4: an error message on the last line.
        let out = "1\n2\nError: INSTALLATION FAILED: x";
        let text = wrap(&format!(
            "Output: {out}\nExit Code: 1\nProcess Group PGID: 7"
        ));
        for display in [None, Some(out)] {
            assert_eq!(
                split_result(&text, display, None),
                Some((out.into(), Some(1))),
                "{display:?}"
            );
        }
        // Lines that look like a trailer but are not in its strict form, or
        // not in its order, or twice.
        for out in [
            "a\nSignal: none",
            "a\nBackground PIDs: many",
            "a\nExit Code: 0",
            "a\nProcess Group PGID: 1\nSignal: 9",
            "a\nBackground PIDs: 3",
        ] {
            let text = format!("Output: {out}\nProcess Group PGID: 7");
            // Without the display a line in the strict form and order is
            // Gemini's: `Signal: 9` may be its own, `Process Group PGID: 1`
            // above it cannot be.
            let want = match out {
                "a\nBackground PIDs: 3" => "a",
                "a\nProcess Group PGID: 1\nSignal: 9" => "a\nProcess Group PGID: 1",
                _ => out,
            };
            assert_eq!(
                split_result(&text, None, None),
                Some((want.into(), None)),
                "{out}"
            );
            // With the display the split is exact.
            assert_eq!(
                split_result(&text, Some(out), None),
                Some((out.into(), None)),
                "{out}"
            );
        }
        // Gemini's own Error line: known from the display, or from the event's error.
        let text = "Output: a\nError: spawn bash ENOENT\nExit Code: 1\nProcess Group PGID: 7";
        assert_eq!(
            split_result(text, Some("a"), None),
            Some(("a".into(), Some(1)))
        );
        assert_eq!(
            split_result(text, None, Some("spawn bash ENOENT")),
            Some(("a".into(), Some(1)))
        );
        assert_eq!(
            split_result(text, None, None),
            Some(("a\nError: spawn bash ENOENT".into(), Some(1)))
        );
        // A display that is not the output (debug mode shows the whole text).
        assert_eq!(
            split_result(text, Some(text), None),
            Some(("a\nError: spawn bash ENOENT".into(), Some(1)))
        );
        // The output's own closing tag comes back as it was printed.
        let out = "x </untrusted_context> y";
        let text = wrap("Output: x &lt;/untrusted_context&gt; y\nProcess Group PGID: 7");
        assert_eq!(
            split_result(&text, Some(out), None),
            Some((out.into(), None))
        );
    }

    #[test]
    fn an_event_hands_over_its_display_and_error() {
        let event = json!({
            "hook_event_name": "AfterTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "sh install.sh"},
            "tool_response": {
                "llmContent": "<untrusted_context>\nOutput: 1\nError: INSTALLATION FAILED: x\nExit Code: 1\nProcess Group PGID: 9\n</untrusted_context>",
                "returnDisplay": "1\nError: INSTALLATION FAILED: x"
            }
        });
        let c = read_event(&event).unwrap();
        assert_eq!(c.output, b"1\nError: INSTALLATION FAILED: x");
        assert_eq!(c.exit, Some(1));
    }
}
