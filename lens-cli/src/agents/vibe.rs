//! Mistral Vibe: a `post_tool` hook on its bash tool (`lens hook vibe`) in
//! `hooks.toml`, and the awareness block in `AGENTS.md`.
//!
//! Read in mistral-vibe 3.0.3 (the wheel's
//! `mistralai_vibe_local_harness/vibe/_foreign_hooks.py`) and measured against
//! it: the hook runs after Vibe ran the command as its own permission rules
//! allowed it (a denied command never reaches it). Its stdin holds the command
//! (`tool_input.command`), `tool_status` and `tool_output`, the bash tool's
//! result with stdout and stderr apart, `returncode`, `timed_out` and
//! `was_truncated`, whole (a 169 KB output arrives whole). A command that exits
//! non-zero is a `success` with its `returncode`, so failing builds and tests
//! reach the hook like any other. The model reads that result as compact JSON
//! (`{"command":…,"returncode":…,"stderr":…,"stdout":…,…}`), and past 16,000
//! characters Vibe saves it to a file and hands the model an excerpt of about
//! 8,000 characters instead. The one answer that replaces what the model reads
//! is `{"decision": "deny", "reason": TEXT}` (`_interpret_post_tool_stdout`):
//! the tool already ran, and TEXT becomes the whole result. Lens answers with
//! the same JSON the model would have read, the filtered stream's text replaced
//! by the view, so the model still reads the other stream and the exit code
//! where they always were.
//!
//! Stdout and stderr stay apart (invariant 3): the view is of one stream, the
//! bigger, and only when the other is small enough to pass as it is
//! ([`OTHER_MAX`]); with both big the agent's own result stands.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered};
use crate::event::{Event, Text};

/// The command the hook runs.
pub const HOOK: &str = "lens hook vibe";

/// The `hooks.toml` entry `init` appends.
pub const ENTRY: &str = "\
# Added by `lens init --agent vibe`; `lens init --agent vibe --uninstall` takes it out.
[[hooks]]
name = \"lens\"
type = \"post_tool\"
command = \"lens hook vibe\"
match = \"bash\"
";

/// What `init --project` tells the user: Vibe reads a project's `.vibe/`
/// only in a folder it trusts (`HarnessFilesManager.project_roots`).
pub const TRUST: &str = "Vibe reads the project's .vibe/hooks.toml only once the folder is trusted (answer its trust prompt, or run vibe --trust)";

/// What Vibe 3.0.3 hands the model of a tool result without saving it to a
/// file: 16,000 characters of its JSON, counted after the `post_tool` hook
/// answered (an answer past it is saved and cut like any result, measured).
pub const RESULT_LIMIT: usize = 16_000;

/// The most output a view or a `lens show` page may hold: the answer's JSON
/// escapes every line break and quote and adds the result's other fields, so
/// a quarter of [`RESULT_LIMIT`] is left for those.
pub const INLINE_LIMIT: usize = 12_000;

/// What the model reads of a result Vibe saved to a file: an excerpt of about
/// 8,000 characters and the notes around it that name the file (9,093 bytes
/// measured for `seq 1 30000`, 169 KB).
const PERSISTED_READ: u64 = 9_100;

/// The most the stream Lens does not filter may hold: it reaches the model
/// beside the view as it is.
pub const OTHER_MAX: usize = 2048;

/// The hooks file edit.
pub fn hooks_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Appended {
            text: ENTRY,
            toml_key: Some("hooks"),
            taken: None,
        },
    }
}

/// The bash tool's result in a finished `post_tool` event.
fn result(event: &Value) -> Option<&serde_json::Map<String, Value>> {
    if event.get("hook_event_name")?.as_str()? != "post_tool"
        || event.get("tool_status")?.as_str()? != "success"
    {
        return None;
    }
    let tool = event.get("tool_name")?.as_str()?;
    if tool != "file_system.bash" && tool != "bash" {
        return None;
    }
    event.get("tool_output")?.as_object()
}

/// Which stream Lens filters: the bigger (stdout on a tie).
fn pick(stdout: u64, stderr: u64) -> &'static str {
    if stderr > stdout {
        "stderr"
    } else {
        "stdout"
    }
}

/// The captured output in a `post_tool` event, when it is one Lens filters.
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    let r = result(event)?;
    let line = event.pointer("/tool_input/command")?.as_str()?;
    // A command cut off by its timeout: its output is not a finished run's.
    if r.get("timed_out").and_then(Value::as_bool).unwrap_or(false) {
        return None;
    }
    let stdout = e.text("/tool_output/stdout")?;
    let stderr = e.text("/tool_output/stderr").unwrap_or(Text::Held(""));
    let (output, other) = match pick(stdout.len(), stderr.len()) {
        "stderr" => (stderr, stdout),
        _ => (stdout, stderr),
    };
    if other.len() > OTHER_MAX as u64 {
        return None;
    }
    let exit = ["returncode", "exit_code"]
        .iter()
        .find_map(|k| r.get(*k).and_then(Value::as_i64))
        .and_then(|c| i32::try_from(c).ok());
    Some(Captured {
        line: line.to_string(),
        output: output.piece().into(),
        full: None,
        exit,
        cwd: event.get("cwd").and_then(Value::as_str).map(String::from),
        level: None,
        budget: None,
        // Vibe's own capture cap cut it: there is no whole output to store.
        partial: r
            .get("was_truncated")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        inline: None,
    })
}

/// The answer that makes the model read the view: the result's JSON with the
/// filtered stream's text replaced by it. The event's big strings may have
/// been emptied since [`read_event`] (see `hook.rs`), so the filtered stream
/// is the one as long as the view's raw output; else the one longer than
/// the other may be (a `lens show` answered with a page); else the emptied one.
pub fn answer(event: &Value, view: &Filtered) -> Option<Value> {
    let r = result(event)?;
    let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
    let (stdout, stderr) = (text("stdout"), text("stderr"));
    let raw = usize::try_from(view.raw_bytes).ok()?;
    let field = match (stdout.len(), stderr.len()) {
        (o, e) if o == raw && e == raw => pick(o as u64, e as u64),
        (o, _) if o == raw => "stdout",
        (_, e) if e == raw => "stderr",
        (o, _) if o > OTHER_MAX => "stdout",
        (_, e) if e > OTHER_MAX => "stderr",
        (0, _) => "stdout",
        _ => "stderr",
    };
    let mut shown = r.clone();
    shown.insert(field.to_string(), Value::String(view.text.clone()));
    let reason = Value::Object(shown).to_string();
    // Vibe would save a longer answer to a file and cut it again.
    if reason.chars().count() > RESULT_LIMIT {
        return None;
    }
    Some(json!({
        "decision": "deny",
        "reason": reason,
        "system_message": format!("Lens: a shorter view of the output; `lens show {}` prints all of it", view.handle),
    }))
}

/// Bytes Vibe's model reads of this result without Lens: the result's JSON,
/// or the excerpt of a result past [`RESULT_LIMIT`].
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    let Some(r) = result(&e.value) else {
        return output_len;
    };
    // A spooled string is over 64 KiB, so over 16,384 characters: the
    // result's JSON is past the limit without reading it back.
    let spooled = r.keys().any(|k| {
        let at = format!("/tool_output/{}", k.replace('~', "~0").replace('/', "~1"));
        matches!(e.text(&at), Some(Text::Spooled(_)))
    });
    if spooled {
        return PERSISTED_READ;
    }
    let n = Value::Object(r.clone()).to_string().chars().count();
    if n > RESULT_LIMIT {
        PERSISTED_READ
    } else {
        n as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(stdout: &str, stderr: &str, code: i64) -> Value {
        json!({
            "session_id": "s", "transcript_path": "/h/.vibe/logs/session/unified/s",
            "cwd": "/p", "parent_session_id": null,
            "hook_event_name": "post_tool", "tool_name": "file_system.bash",
            "tool_call_id": "c1", "tool_input": {"timeout": 120, "command": "git status"},
            "tool_status": "success",
            "tool_output": {"command": "git status", "returncode": code, "stderr": stderr,
                "stdout": stdout, "timed_out": false, "was_truncated": false},
            "tool_output_text": "…", "tool_error": null, "duration_ms": 0
        })
    }

    fn view(text: &str, raw_bytes: u64) -> Filtered {
        Filtered {
            text: text.into(),
            handle: lens_core::Handle::parse("0000abcd").unwrap(),
            raw_bytes,
            argv: vec![],
            level: lens_core::Level::Two,
            exit: None,
        }
    }

    #[test]
    fn the_bigger_stream_is_read_with_the_exit_code() {
        let c = read_event(&event("a\nb\nc\n", "warn\n", 3).into()).unwrap();
        assert_eq!(
            (c.line.as_str(), c.output.to_vec().unwrap().as_slice()),
            ("git status", &b"a\nb\nc\n"[..])
        );
        assert_eq!(
            (c.exit, c.cwd.as_deref(), c.partial),
            (Some(3), Some("/p"), false)
        );
        let c = read_event(&event("", "error: x\n", 101).into()).unwrap();
        assert_eq!(c.output.to_vec().unwrap(), b"error: x\n");
    }

    #[test]
    fn what_is_not_a_finished_bash_result_or_has_two_big_streams_is_left_alone() {
        let big = "x\n".repeat(OTHER_MAX);
        assert!(read_event(&event(&big, &big, 0).into()).is_none());
        for (k, v) in [
            ("hook_event_name", json!("pre_tool")),
            ("tool_status", json!("failure")),
            ("tool_name", json!("file_system.read_file")),
        ] {
            let mut e = event("a", "", 0);
            e[k] = v;
            assert!(read_event(&e.clone().into()).is_none(), "{k}");
        }
        let mut e = event("a", "", 0);
        e["tool_output"]["timed_out"] = json!(true);
        assert!(read_event(&e.clone().into()).is_none());
        e["tool_output"]["timed_out"] = json!(false);
        e["tool_output"]["was_truncated"] = json!(true);
        assert!(read_event(&e.clone().into()).unwrap().partial);
    }

    #[test]
    fn the_answer_is_the_results_json_with_the_stream_replaced() {
        let out = "line\n".repeat(2000);
        let e = event(&out, "warn\n", 1);
        let a = answer(&e, &view("VIEW\n", out.len() as u64)).unwrap();
        assert_eq!(a["decision"], "deny");
        let read: Value = serde_json::from_str(a["reason"].as_str().unwrap()).unwrap();
        assert_eq!(
            read,
            json!({"command": "git status", "returncode": 1, "stderr": "warn\n",
                "stdout": "VIEW\n", "timed_out": false, "was_truncated": false})
        );
        // The keys in the order the model reads them without Lens.
        assert!(a["reason"].as_str().unwrap().starts_with("{\"command\":"));
        // An answer Vibe would save and cut again is not given.
        let long = "\"\"\"\"\n".repeat(INLINE_LIMIT / 5);
        assert!(long.len() <= INLINE_LIMIT);
        assert!(answer(&e, &view(&long, out.len() as u64)).is_none());
        // The big stream emptied by the hook before it answers: still found.
        let mut shed = e.clone();
        shed["tool_output"]["stdout"] = json!("");
        let a = answer(&shed, &view("VIEW\n", out.len() as u64)).unwrap();
        assert!(a["reason"]
            .as_str()
            .unwrap()
            .contains("\"stderr\":\"warn\\n\""));
        assert!(a["reason"]
            .as_str()
            .unwrap()
            .contains("\"stdout\":\"VIEW\\n\""));
        // A view of stderr.
        let e = event("ok\n", &out, 101);
        let a = answer(&e, &view("VIEW\n", out.len() as u64)).unwrap();
        let read: Value = serde_json::from_str(a["reason"].as_str().unwrap()).unwrap();
        assert_eq!(
            (read["stdout"].as_str(), read["stderr"].as_str()),
            (Some("ok\n"), Some("VIEW\n"))
        );
    }

    #[test]
    fn the_model_would_read_the_json_or_vibes_excerpt() {
        let e = event("hello\n", "", 0);
        let json_len = e["tool_output"].to_string().len() as u64;
        assert_eq!(model_would_read(&e.clone().into(), 6), json_len);
        let e = event(&"1234567\n".repeat(30_000), "", 0);
        assert_eq!(model_would_read(&e.clone().into(), 240_000), PERSISTED_READ);
        assert_eq!(model_would_read(&json!({}).into(), 7), 7);
    }
}
