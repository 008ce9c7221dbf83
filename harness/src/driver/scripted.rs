//! The scripted agent: deterministic, for tests and for machines without
//! credentials. It does what agents were observed to do with a view: run the task's
//! command through the variant and read what comes back; when the view lacks what
//! the task needs, recover (fetch the raw output with `lens show` when a marker
//! offers a handle, otherwise run the command again without a filter); apply the
//! task's known fix; run the command again to confirm (where a rerun confirms
//! anything: a trap prints a fresh answer each run).
//!
//! Its cost model is stated, not measured: a token per four bytes it read, 250
//! tokens per tool call (the call and its framing), and the prompt. Every result it
//! produces is labelled a simulation.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Result;

use super::{Outcome, Tokens};
use crate::tasks::Task;

/// Tokens charged per tool call, for the call and its framing.
pub const PER_CALL: u64 = 250;

fn sh(line: &str, dir: &Path, path: &OsStr, env: &[(&str, &str)]) -> Result<Vec<u8>> {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output()?;
    Ok([out.stdout, out.stderr].concat())
}

/// The handle named by the first marker in a view.
fn handle(view: &str) -> Option<&str> {
    let i = view.find("[lens: ")?;
    let rest = &view[i..];
    let h = rest.find("handle=")?;
    rest.get(h + 7..h + 15)
}

/// What the task needs, from `view` or, when the view left it out, from a
/// recovery: `lens show` of the handle its marker names, else the task's command
/// again without a filter. Each recovery call goes through `read`; once found,
/// the task's known fix is applied, also through `read`. The information, if
/// found.
fn find_or_recover(
    task: &Task,
    view: &[u8],
    dir: &Path,
    path: &OsStr,
    read: &mut dyn FnMut(&[u8], &str),
) -> Result<Option<String>> {
    let mut info = task.find(&String::from_utf8_lossy(view));
    if info.is_none() {
        let recovery = match handle(&String::from_utf8_lossy(view)) {
            Some(h) => format!("lens show {h}"),
            None => task.command.clone(),
        };
        let raw = sh(&recovery, dir, path, &[])?;
        read(&raw, &recovery);
        info = task.find(&String::from_utf8_lossy(&raw));
    }
    if let Some(found) = &info {
        let fix = task.dir.join("fix").display().to_string();
        let out = sh(&fix, dir, path, &[("TASK_INFO", found)])?;
        read(&out, &fix);
    }
    Ok(info)
}

/// Runs the scripted session for `task` with the variant's `command` in `dir`.
pub fn act(task: &Task, command: &str, dir: &Path, path: &OsStr) -> Result<Outcome> {
    let mut o = Outcome::default();
    let mut read = |bytes: &[u8], line: &str| {
        o.tool_calls += 1;
        o.bytes_read += bytes.len() as u64;
        o.commands.push(line.to_string());
    };
    let view = sh(command, dir, path, &[])?;
    read(&view, command);
    let found = find_or_recover(task, &view, dir, path, &mut read)?;
    if found.is_some() && task.confirm {
        let confirm = sh(command, dir, path, &[])?;
        read(&confirm, command);
    }
    o.turns = o.tool_calls + 1;
    let prompt = task.prompt.len() as u64 / 4;
    o.tokens = Some(Tokens {
        input: prompt + o.bytes_read / 4 + PER_CALL * o.tool_calls,
        output: 50 * o.turns,
        cache_read: 0,
        cache_write: 0,
    });
    Ok(o)
}

/// Tokens of framing each session turn sends as new input.
pub const SESSION_FRAMING: u64 = 250;
/// Output tokens each session turn writes.
pub const SESSION_OUTPUT: u64 = 50;

/// The session cost model, as the results state it.
pub fn session_cost_model() -> String {
    format!(
        "scripted agent: every turn re-reads the context so far from the prompt cache (cache_read), \
         adds its tool result to it (cache_write = result bytes/4), sends {SESSION_FRAMING} new input \
         tokens of framing and writes {SESSION_OUTPUT} output tokens; the prompt is written to the cache once"
    )
}

/// Runs a scripted session: each of `commands` in order, through `lens` when
/// `through_lens`; after the first run of the task's command, what the task needs
/// is looked for in what came back and, when a view left it out, recovered (a
/// `lens show` of the handle the marker names, else the command again without a
/// filter); the known fix is applied once it is found. Tokens follow
/// [`session_cost_model`]: a tool result is paid for again on every later turn,
/// as a real session pays for it.
pub fn act_session(
    task: &Task,
    prompt: &str,
    commands: &[String],
    through_lens: bool,
    dir: &Path,
    path: &OsStr,
) -> Result<Outcome> {
    let mut o = Outcome::default();
    let mut results: Vec<u64> = Vec::new();
    let mut read = |bytes: &[u8], line: &str| {
        o.tool_calls += 1;
        o.bytes_read += bytes.len() as u64;
        if String::from_utf8_lossy(bytes).contains("[lens: ") {
            o.views += 1;
        }
        o.commands.push(line.to_string());
        results.push(bytes.len() as u64);
    };
    let mut fixed = false;
    for c in commands {
        let line = if through_lens {
            format!("lens {c}")
        } else {
            c.clone()
        };
        let view = sh(&line, dir, path, &[])?;
        read(&view, &line);
        if !fixed && c == &task.command {
            fixed = find_or_recover(task, &view, dir, path, &mut read)?.is_some();
        }
    }
    o.turns = o.tool_calls + 1;
    let prompt_tokens = prompt.len() as u64 / 4;
    let mut t = Tokens {
        input: 0,
        output: 0,
        cache_read: 0,
        cache_write: prompt_tokens,
    };
    let mut context = prompt_tokens;
    for r in &results {
        t.cache_read += context;
        t.input += SESSION_FRAMING;
        t.output += SESSION_OUTPUT;
        let added = r.div_ceil(4);
        t.cache_write += added;
        context += added + SESSION_FRAMING + SESSION_OUTPUT;
    }
    // The final turn reads everything once more and answers.
    t.cache_read += context;
    t.output += SESSION_OUTPUT;
    o.tokens = Some(t);
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_handle_in_a_marker() {
        let v = "x\n[lens: elided stdout 1-9 (9 lines: budget) handle=0a1b2c3d]\n";
        assert_eq!(handle(v), Some("0a1b2c3d"));
        assert_eq!(handle("no marker"), None);
    }
}
