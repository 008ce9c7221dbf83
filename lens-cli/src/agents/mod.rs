//! Wiring Lens into coding agents: `lens init`, and the after-tool hooks it
//! installs.
//!
//! Every agent runs the command its model asked for exactly as it would
//! without Lens, judged by the user's own permission rules; Lens never changes
//! a command (invariant 1). What `init` installs runs after the agent's shell
//! tool finished and replaces what the model reads with the view (see
//! [`crate::captured`]): a `PostToolUse` hook for Claude Code and Codex, an
//! `AfterTool` hook for Gemini CLI, a `tool.execute.after` plugin for
//! OpenCode and Kilo Code CLI, a `tool_result` extension for pi (Factory
//! Droid's after-tool hook cannot replace an output: it gets the awareness
//! block only), a `postToolUse` hook for Copilot CLI, a `PostToolUse` hook
//! for Qwen Code. It also adds an allow rule for `lens show` (never for `lens` as a
//! whole, which would allow every command), and a short awareness block in the
//! file the agent reads every session. Every edit is recorded in a manifest
//! under Lens's state directory with a backup of the file as it was, so
//! `--uninstall` puts back exactly what was there; a second `init` changes
//! nothing. JSON settings are edited in their text ([`jsonedit`]), so every
//! byte Lens does not add stays as the user wrote it; a settings file that
//! does not parse is left alone, and so is one with comments or a trailing
//! comma when its agent reads strict JSON ([`strict_reader`]).
//!
//! One file per agent: what it installs, how its event is read and answered.

mod agent;
pub mod awareness_only;
pub mod claude;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod gemini;
pub mod jsonedit;
pub mod kilo;
pub mod opencode;
pub mod pi;
pub mod qwen;
pub mod vibe;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::Event;
pub use agent::{Agent, Change, Edit, Place, Scope};
use jsonedit::strip_comments;

/// The awareness block: what every agent is told. Every line of it costs
/// tokens in every session, so it says only how to read a marker and how to
/// fetch what one hides.
pub const AWARENESS: &str = "\
<!-- lens:begin -->
## Lens: shortened command output
A long shell output may reach you as Lens's view of it: the lines that matter, and one marker for each run of lines left out, e.g. `[lens: elided stdout 120-480 (361 lines: budget) handle=1a2b3c4d]`. `digest=N` means the N lines after the marker summarise that run; `unlisted=K` means the summary names K fewer items than the run holds. What a marker says of its hidden lines is checked against every one of them: `all like \"checked ACC-… balance … ok\"` means each is that line but for its numbers (each `…` a word holding digits, or an id of six or more hex digits; one that ends a shape cut short, the rest of a long line), and `no error or warning` that none is one, and `75 errors, each in a digest` that each is an error a digest in the view shows or lists the place of (no other error hides there), and a digest line `same E0308 ×48 at: …` lists every place that reports the error shown above it (`each as the report above but for its numbers`: the code each one quotes too), and a digest line with a range (`build/codec_{01..15}.o`, or `{N}` and `(N = 01..15)`) stands for one such line per number, exactly; none of these needs fetching to confirm.
To see hidden lines, run `lens show 1a2b3c4d --lines 120-480` rather than the command again; `lens show 1a2b3c4d --grep REGEX` prints the lines that match, as grep does (`-n` numbers them, `-v` prints those that do not, `-i` ignores case); `lens show 1a2b3c4d` prints all of it, a long run one page at a time (its last line names the lines left). A command that fails is shown unshortened by some agents; a long build or test may be run as `lens <command>` to get the view, but where commands need approval `lens <command>` needs its own (a rule allowing the command does not cover it).
<!-- lens:end -->
";

const BEGIN: &str = "<!-- lens:begin -->";
const END: &str = "<!-- lens:end -->";

/// What `init` would change for `agent` at `scope`, or why it cannot.
pub fn edits(agent: Agent, scope: Scope, place: &Place) -> Result<Vec<Edit>, String> {
    let (h, p) = (&place.home, &place.project);
    let block = |path: PathBuf| Edit {
        path,
        change: Change::Block { preamble: "" },
    };
    let mut edits = match (agent, scope) {
        (Agent::Claude, Scope::Global) => claude::settings_edits(h.join(".claude/settings.json")),
        (Agent::Claude, Scope::Project) => {
            claude::settings_edits(p.join(".claude/settings.local.json"))
        }
        (Agent::Codex, Scope::Global) => vec![codex::hooks_edit(h.join(".codex/hooks.json"))],
        (Agent::Codex, Scope::Project) => vec![codex::hooks_edit(p.join(".codex/hooks.json"))],
        (Agent::Gemini, Scope::Global) => vec![gemini::hook_edit(h.join(".gemini/settings.json"))],
        (Agent::Gemini, Scope::Project) => {
            vec![gemini::hook_edit(p.join(".gemini/settings.json"))]
        }
        (Agent::Cursor, Scope::Global) => {
            return Err(
                "Cursor keeps its user rules in its settings, not in a file; use --project".into(),
            )
        }
        (Agent::Cursor, Scope::Project) => Vec::new(),
        (Agent::Opencode, Scope::Global) => opencode::edits(
            &opencode::OPENCODE,
            &h.join(".config/opencode"),
            h.join(".config/opencode/opencode.json"),
        ),
        (Agent::Opencode, Scope::Project) => opencode::edits(
            &opencode::OPENCODE,
            &p.join(".opencode"),
            p.join("opencode.json"),
        ),
        (Agent::Kilo, Scope::Global) => opencode::edits(
            &kilo::KILO,
            &h.join(".config/kilo"),
            h.join(".config/kilo/kilo.json"),
        ),
        (Agent::Kilo, Scope::Project) => {
            opencode::edits(&kilo::KILO, &p.join(".kilo"), p.join("kilo.json"))
        }
        (Agent::Auggie | Agent::Crush | Agent::Continue | Agent::Aider, _) => {
            return awareness_only::edits(agent, scope, h, p)
        }
        (Agent::Vibe, Scope::Global) => vec![vibe::hooks_edit(h.join(".vibe/hooks.toml"))],
        (Agent::Vibe, Scope::Project) => vec![vibe::hooks_edit(p.join(".vibe/hooks.toml"))],
        (Agent::Pi, Scope::Global) => vec![pi_edit(h.join(".pi/agent/extensions/lens.js"))],
        (Agent::Pi, Scope::Project) => vec![pi_edit(p.join(".pi/extensions/lens.js"))],
        (Agent::Droid, _) => Vec::new(),
        (Agent::Copilot, Scope::Global) => {
            vec![copilot::hooks_edit(h.join(".copilot/hooks/lens.json"))]
        }
        (Agent::Copilot, Scope::Project) => {
            vec![copilot::hooks_edit(p.join(".github/hooks/lens.json"))]
        }
        (Agent::Qwen, Scope::Global) => vec![qwen::hook_edit(h.join(".qwen/settings.json"))],
        (Agent::Qwen, Scope::Project) => vec![qwen::hook_edit(p.join(".qwen/settings.json"))],
    };
    edits.push(match (agent, scope) {
        (Agent::Claude, Scope::Global) => block(h.join(".claude/CLAUDE.md")),
        (Agent::Claude, Scope::Project) => block(p.join("CLAUDE.md")),
        (Agent::Codex, Scope::Global) => block(h.join(".codex/AGENTS.md")),
        (Agent::Gemini, Scope::Global) => block(h.join(".gemini/GEMINI.md")),
        (Agent::Gemini, Scope::Project) => block(p.join("GEMINI.md")),
        (Agent::Opencode, Scope::Global) => block(h.join(".config/opencode/AGENTS.md")),
        (Agent::Vibe, Scope::Global) => block(h.join(".vibe/AGENTS.md")),
        (Agent::Kilo, Scope::Global) => block(h.join(".config/kilo/AGENTS.md")),
        (Agent::Pi, Scope::Global) => block(h.join(".pi/agent/AGENTS.md")),
        (Agent::Droid, Scope::Global) => block(h.join(".factory/AGENTS.md")),
        (Agent::Copilot, Scope::Global) => block(h.join(".copilot/copilot-instructions.md")),
        (Agent::Copilot, Scope::Project) => block(p.join(".github/copilot-instructions.md")),
        (Agent::Qwen, Scope::Global) => block(h.join(".qwen/QWEN.md")),
        (Agent::Qwen, Scope::Project) => block(p.join("QWEN.md")),
        (Agent::Cursor, _) => Edit {
            path: p.join(".cursor/rules/lens.mdc"),
            change: Change::Block {
                preamble: "---\ndescription: Reading Lens's shortened command output\nalwaysApply: true\n---\n",
            },
        },
        (
            Agent::Codex | Agent::Opencode | Agent::Vibe | Agent::Kilo | Agent::Pi | Agent::Droid,
            Scope::Project,
        ) => block(p.join("AGENTS.md")),
        (Agent::Auggie | Agent::Crush | Agent::Continue | Agent::Aider, _) => {
            unreachable!("returned above")
        }
    });
    Ok(edits)
}

fn pi_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::File {
            contents: pi::EXTENSION,
        },
    }
}

/// What the user must know or do for the installed hook to work, one line
/// each.
pub fn needs(agent: Agent, scope: Scope, place: &Place) -> Vec<String> {
    match (agent, scope) {
        (Agent::Codex, Scope::Global) => vec![codex::BLOCKED.into(), codex::TRUST.into()],
        (Agent::Codex, Scope::Project) => vec![
            codex::BLOCKED.into(),
            codex::TRUST.into(),
            codex::project_trust(&place.project),
        ],
        (Agent::Gemini, Scope::Project) => vec![gemini::TRUST.into()],
        (Agent::Copilot, Scope::Project) => vec![copilot::TRUST.into()],
        (Agent::Qwen, _) => vec![qwen::STOPPED.into()],
        (Agent::Cursor, _) => vec![
            "Cursor has no after-tool hook Lens can use: only the awareness block is installed"
                .into(),
        ],
        (Agent::Vibe, Scope::Project) => vec![vibe::TRUST.into()],
        (Agent::Auggie | Agent::Crush | Agent::Continue | Agent::Aider, _) => {
            awareness_only::why_no_hook(agent)
                .map(String::from)
                .into_iter()
                .collect()
        }
        (Agent::Droid, _) => vec![droid::NO_HOOK.into()],
        _ => Vec::new(),
    }
}

/// What the installed hook cannot do for `agent`, in one line, if anything
/// the user should know when deciding.
pub fn limits(agent: Agent) -> Option<&'static str> {
    match agent {
        Agent::Claude => Some(claude::FAILURES),
        Agent::Qwen => Some(qwen::FAILURES),
        _ => None,
    }
}

/// What the agent made in `dir`, a directory `init` created, only because
/// Lens's files were there: the paths to remove with it, or none when `dir`
/// holds anything else.
pub fn made_by_agent(agent: Agent, dir: &Path) -> Vec<PathBuf> {
    match agent {
        Agent::Opencode => opencode::install_leftovers(&opencode::OPENCODE, dir),
        Agent::Kilo => opencode::install_leftovers(&kilo::KILO, dir),
        _ => Vec::new(),
    }
}

/// The file's text as `init` wrote it when the only change since is one the
/// agent makes to every such file by itself (OpenCode puts a `$schema` key at
/// the top of a config file that has none, Qwen Code a `$version` member at
/// the end of a settings file): that is no edit of the user's.
pub fn as_written(agent: Agent, text: &str) -> Option<String> {
    match agent {
        Agent::Opencode => opencode::without_schema(&opencode::OPENCODE, text),
        Agent::Kilo => opencode::without_schema(&kilo::KILO, text),
        Agent::Qwen => qwen::without_version(text),
        _ => None,
    }
}

/// The captured output in an agent's after-tool event, when it is one Lens
/// filters.
pub fn read_event(agent: Agent, event: &Event) -> Option<crate::captured::Captured> {
    let mut c = match agent {
        Agent::Claude => claude::read_event(event),
        Agent::Codex => codex::read_event(event),
        Agent::Gemini => gemini::read_event(event),
        Agent::Opencode | Agent::Kilo => opencode::read_event(event),
        Agent::Vibe => vibe::read_event(event),
        Agent::Pi => pi::read_event(event),
        Agent::Copilot => copilot::read_event(event),
        Agent::Qwen => qwen::read_event(event),
        Agent::Cursor
        | Agent::Droid
        | Agent::Auggie
        | Agent::Crush
        | Agent::Continue
        | Agent::Aider => None,
    }?;
    // A view bigger than what the agent shows uncut would be cut again.
    c.budget = Some(limit(agent));
    // So would a `lens show` the agent ran: it gets a page that fits.
    c.inline = Some(crate::captured::Inline {
        bytes: inline_limit(agent),
        lines: match agent {
            Agent::Gemini => Some(gemini::INLINE_LINES),
            _ => None,
        },
    });
    Some(c)
}

/// Bytes `agent`'s model would read of this event's result without Lens (its
/// own cut, preview or limit), from the event where it holds that and from
/// the pinned CLI's rules otherwise; `output_len` is the captured output's.
pub fn model_would_read(agent: Agent, event: &Event, output_len: u64) -> u64 {
    match agent {
        Agent::Claude => claude::model_would_read(event, output_len),
        Agent::Codex => codex::model_would_read(event, output_len),
        Agent::Gemini => gemini::model_would_read(event, output_len),
        Agent::Opencode | Agent::Kilo => opencode::model_would_read(event, output_len),
        Agent::Vibe => vibe::model_would_read(event, output_len),
        Agent::Pi => pi::model_would_read(event, output_len),
        Agent::Copilot => copilot::model_would_read(event, output_len),
        Agent::Qwen => qwen::model_would_read(event, output_len),
        Agent::Cursor
        | Agent::Droid
        | Agent::Auggie
        | Agent::Crush
        | Agent::Continue
        | Agent::Aider => output_len,
    }
}

/// The most a view may be for `agent`: under what it shows without cutting.
pub fn limit(agent: Agent) -> usize {
    lens_core::DEFAULT_BUDGET.min(inline_limit(agent))
}

/// What `agent` shows of a command's output without cutting it.
pub fn inline_limit(agent: Agent) -> usize {
    match agent {
        Agent::Claude => claude::INLINE_LIMIT,
        Agent::Codex => codex::INLINE_LIMIT,
        Agent::Gemini => gemini::INLINE_LIMIT,
        Agent::Opencode | Agent::Kilo => opencode::INLINE_LIMIT,
        Agent::Vibe => vibe::INLINE_LIMIT,
        Agent::Pi => pi::INLINE_LIMIT,
        Agent::Copilot => copilot::INLINE_LIMIT,
        Agent::Qwen => qwen::INLINE_LIMIT,
        Agent::Cursor
        | Agent::Droid
        | Agent::Auggie
        | Agent::Crush
        | Agent::Continue
        | Agent::Aider => 0,
    }
}

/// Why `agent` might not let the model read an answer to `event`, when it
/// might: the hook then answers nothing, filters nothing, and logs the word.
pub fn cannot_answer(agent: Agent, event: &Value) -> Option<&'static str> {
    match agent {
        Agent::Gemini => gemini::read_file_refused(event),
        _ => None,
    }
}

/// The answer that makes the model read `view`; `None` when the agent cannot
/// take it (the caller then answers nothing).
pub fn answer(agent: Agent, e: &Event, view: &crate::captured::Filtered) -> Option<Value> {
    // Where a big string was spooled, `value` holds `""`: an answer that
    // needs more than a view reads that string from the event itself.
    let event = &e.value;
    Some(match agent {
        Agent::Claude => claude::answer(event, view),
        Agent::Codex => codex::answer(event, view),
        Agent::Gemini => gemini::answer(event, view)?,
        Agent::Opencode | Agent::Kilo => opencode::answer(view),
        Agent::Vibe => vibe::answer(event, view)?,
        Agent::Pi => pi::answer(view),
        Agent::Copilot => copilot::answer(e, view)?,
        Agent::Qwen => qwen::answer(event, view)?,
        Agent::Cursor
        | Agent::Droid
        | Agent::Auggie
        | Agent::Crush
        | Agent::Continue
        | Agent::Aider => return None,
    })
}

/// What the hook prints when it has no view for the model: nothing, or for
/// Gemini CLI (which wants JSON on every path) an empty object.
pub fn no_answer(agent: Agent) -> &'static str {
    match agent {
        Agent::Gemini => "{}\n",
        _ => "",
    }
}

/// The file's new contents with the change applied; `None` when the change is
/// already there (so `init` is idempotent). `Err` for a file it will not touch.
pub fn apply(old: Option<&str>, change: &Change) -> Result<Option<String>, String> {
    match change {
        Change::Block { preamble } => {
            let old = old.unwrap_or("");
            if old.contains(BEGIN) {
                return Ok(None);
            }
            let mut new = if old.is_empty() {
                preamble.to_string()
            } else {
                old.to_string()
            };
            if !new.is_empty() && !new.ends_with('\n') {
                new.push('\n');
            }
            if !new.is_empty() && !new.ends_with("\n\n") && !new.ends_with("---\n") {
                new.push('\n');
            }
            new.push_str(AWARENESS);
            Ok(Some(new))
        }
        Change::Hook { .. } | Change::ListItem { .. } | Change::Member { .. } => {
            json_apply(old.unwrap_or(""), change)
        }
        Change::Placeholder { contents } => Ok(old.is_none().then(|| contents.to_string())),
        Change::Appended {
            text,
            toml_key,
            taken,
        } => append(old.unwrap_or(""), text, *toml_key, *taken),
        Change::File { contents } => match old {
            Some(t) if t == *contents => Ok(None),
            Some(_) => {
                Err("a file of that name is already there; remove it or install by hand".into())
            }
            None => Ok(Some(contents.to_string())),
        },
    }
}

/// The program that reads `agent`'s JSON settings as strict JSON (no comments,
/// no trailing commas), by the name its users know; `None` when it reads JSONC.
pub fn strict_reader(agent: Agent) -> Option<&'static str> {
    match agent {
        // Claude Code's settings parser and Codex's `serde_json` reading of
        // hooks.json both refuse the whole file; Gemini CLI, OpenCode and Qwen
        // Code strip comments first; Copilot's hooks file is Lens's own.
        Agent::Claude => Some("Claude Code"),
        Agent::Codex => Some("Codex"),
        Agent::Gemini
        | Agent::Cursor
        | Agent::Opencode
        | Agent::Auggie
        | Agent::Crush
        | Agent::Continue
        | Agent::Aider
        | Agent::Vibe
        | Agent::Kilo
        | Agent::Pi
        | Agent::Droid
        | Agent::Copilot
        | Agent::Qwen => None,
    }
}

/// What in `text` a strict JSON reader refuses though `init`'s JSONC parser
/// reads it ("comments", "a trailing comma", or both); `None` when a strict
/// reader takes it, or when it does not parse at all (which `apply` reports).
pub fn not_strict(text: &str) -> Option<&'static str> {
    if text.trim().is_empty()
        || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
        || jsonedit::parse(text).is_err()
    {
        return None;
    }
    let stripped = strip_comments(text);
    let comments = stripped != text;
    let commas = serde_json::from_str::<serde::de::IgnoredAny>(&stripped).is_err();
    Some(match (comments, commas) {
        (true, true) => "comments and a trailing comma",
        (true, false) => "comments",
        _ => "a trailing comma",
    })
}

/// The file's contents with only Lens's part of `change` taken out (for a file
/// edited since `init` wrote it); `None` when nothing of Lens's is in it.
pub fn remove(old: &str, change: &Change) -> Option<String> {
    match change {
        Change::Block { .. } => {
            let start = old.find(BEGIN)?;
            let end = old[start..].find(END)? + start + END.len();
            let end = if old[end..].starts_with('\n') {
                end + 1
            } else {
                end
            };
            // The blank line `init` put before the block goes with it.
            let start = if old[..start].ends_with("\n\n") {
                start - 1
            } else {
                start
            };
            Some(format!("{}{}", &old[..start], &old[end..]))
        }
        Change::Hook { .. } | Change::ListItem { .. } | Change::Member { .. } => {
            json_remove(old, change)
        }
        Change::Appended { text, .. } => {
            let start = old.find(text)?;
            let end = start + text.len();
            // The blank line `init` put before the text goes with it.
            let start = if start > 0 && old[..start].ends_with("\n\n") {
                start - 1
            } else {
                start
            };
            Some(format!("{}{}", &old[..start], &old[end..]))
        }
        Change::File { .. } => Some(String::new()),
        // Lens's only if untouched, which uninstall knows from the record.
        Change::Placeholder { .. } => None,
    }
}

/// `text` appended to `old` after a blank line; `None` when it is there. A
/// TOML file must parse before and after, with `toml_key` a list of tables;
/// a file with a line starting `taken` is left alone.
fn append(
    old: &str,
    text: &str,
    toml_key: Option<&str>,
    taken: Option<&str>,
) -> Result<Option<String>, String> {
    if old.contains(text) {
        return Ok(None);
    }
    if let Some(t) = taken {
        if old.lines().any(|l| l.starts_with(t)) {
            return Err(format!(
                "it has a `{t}` of its own, which a second one would replace; add Lens's by hand"
            ));
        }
    }
    let mut new = old.to_string();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    if !new.is_empty() && !new.ends_with("\n\n") {
        new.push('\n');
    }
    new.push_str(text);
    if let Some(key) = toml_key {
        let fix = "fix it or install by hand";
        old.parse::<toml::Table>().map_err(|e| {
            let why = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
            format!("it is not valid TOML ({why}); {fix}")
        })?;
        let ok = new
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get(key).cloned())
            .is_some_and(|v| {
                v.as_array()
                    .is_some_and(|a| a.iter().all(toml::Value::is_table))
            });
        if !ok {
            return Err(format!("its `{key}` is not a list of tables; {fix}"));
        }
    }
    Ok(Some(new))
}

/// Applies a JSON change in the file's text (see [`jsonedit`]): `None` when it
/// is there already.
fn json_apply(old: &str, change: &Change) -> Result<Option<String>, String> {
    let fix = "fix it or install by hand";
    let mut text = if old.trim().is_empty() {
        "{}\n".to_string()
    } else {
        old.to_string()
    };
    let root = jsonedit::parse(&text).map_err(|e| format!("it is not valid JSON ({e}); {fix}"))?;
    if !matches!(root.kind, jsonedit::Kind::Object(_)) {
        return Err(format!("it is not a JSON object; {fix}"));
    }
    let (keys, leaf): (Vec<&str>, Value) = match change {
        Change::Hook {
            event,
            matcher,
            command,
            extra,
        } => {
            let mut entry = serde_json::json!({ "type": "command", "command": command });
            if let Ok(Value::Object(more)) = serde_json::from_str::<Value>(extra) {
                entry.as_object_mut().expect("an object").extend(more);
            }
            (
                vec!["hooks", event],
                serde_json::json!({ "matcher": matcher, "hooks": [entry] }),
            )
        }
        Change::ListItem { keys, item } => (keys.to_vec(), Value::String(item.to_string())),
        Change::Member { keys, key, value } => {
            let mut k = keys.to_vec();
            k.push(key);
            (k, Value::String(value.to_string()))
        }
        _ => return Ok(None),
    };
    let list_leaf = !matches!(change, Change::Member { .. });
    // Walk down the path, creating what is missing from the bottom up.
    let mut node = root;
    for (depth, key) in keys.iter().enumerate() {
        let here = keys[..depth].join(".");
        let at = if here.is_empty() {
            "the top".to_string()
        } else {
            format!("\"{here}\"")
        };
        if !matches!(node.kind, jsonedit::Kind::Object(_)) {
            return Err(format!("{at} is not an object; {fix}"));
        }
        match node.get(key) {
            Some(child) => node = child.clone(),
            None => {
                // The rest of the path, built as one value.
                let mut value = if list_leaf {
                    Value::Array(vec![leaf.clone()])
                } else {
                    leaf.clone()
                };
                for k in keys[depth + 1..].iter().rev() {
                    value = serde_json::json!({ *k: value });
                }
                text = jsonedit::insert(&text, &node, Some(key), &value);
                return Ok(Some(text));
            }
        }
    }
    if !list_leaf {
        // The member is there: as Lens wants it, or the user's own choice.
        return Ok(None);
    }
    let Some(items) = node.elements() else {
        return Err(format!("its \"{}\" is not a list; {fix}", keys.join(".")));
    };
    if items.iter().any(|n| lens_owns(&text, n, change)) {
        return Ok(None);
    }
    Ok(Some(jsonedit::insert(&text, &node, None, &leaf)))
}

/// True when list element `n` is Lens's part of `change`: the item, or for a
/// hook, a group one of whose entries runs Lens's command.
fn lens_owns(text: &str, n: &jsonedit::Node, change: &Change) -> bool {
    let value: Option<Value> = serde_json::from_str(&strip_comments(&text[n.start..n.end])).ok();
    match (change, value) {
        (Change::ListItem { item, .. }, Some(Value::String(s))) => s == *item,
        (Change::Hook { command, .. }, Some(g)) => hook_entry(&g, command).is_some(),
        _ => false,
    }
}

/// Where, in a hook group, the entry running `command` is.
fn hook_entry(group: &Value, command: &str) -> Option<usize> {
    group
        .get("hooks")?
        .as_array()?
        .iter()
        .position(|h| h.get("command").and_then(Value::as_str) == Some(command))
}

/// Takes Lens's part of a JSON change out of the file's text, leaving every
/// other byte: a hook entry (its group too when the group holds nothing else,
/// so the user's own hooks in it stay), the list item, or the member when it
/// still holds Lens's value; then the containers that only it kept alive.
fn json_remove(old: &str, change: &Change) -> Option<String> {
    let mut text = old.to_string();
    let keys: Vec<&str> = match change {
        Change::Hook { event, .. } => vec!["hooks", event],
        Change::ListItem { keys, .. } => keys.to_vec(),
        Change::Member { keys, .. } => keys.to_vec(),
        _ => return None,
    };
    let mut changed = false;
    loop {
        let root = jsonedit::parse(&text).ok()?;
        let mut path = vec![root];
        for k in &keys {
            let Some(next) = path.last().expect("a node").get(k).cloned() else {
                break;
            };
            path.push(next);
        }
        if path.len() != keys.len() + 1 {
            break;
        }
        let container = path.last().expect("a node").clone();
        let step = match (change, &container.kind) {
            (Change::Member { key, value, .. }, jsonedit::Kind::Object(m)) => m
                .iter()
                .position(|(k, _, v)| {
                    let lens_value = serde_json::to_string(value).unwrap_or_default();
                    k == key && text[v.start..v.end] == lens_value
                })
                .map(|i| jsonedit::remove(&text, &container, i)),
            (Change::Hook { command, .. }, jsonedit::Kind::Array(items)) => {
                items.iter().enumerate().find_map(|(gi, g)| {
                    let group: Value =
                        serde_json::from_str(&strip_comments(&text[g.start..g.end])).ok()?;
                    let entry = hook_entry(&group, command)?;
                    let entries = g.get("hooks")?;
                    Some(if entries.elements()?.len() > 1 {
                        jsonedit::remove(&text, entries, entry)
                    } else {
                        jsonedit::remove(&text, &container, gi)
                    })
                })
            }
            (_, jsonedit::Kind::Array(items)) => items
                .iter()
                .position(|n| lens_owns(&text, n, change))
                .map(|i| jsonedit::remove(&text, &container, i)),
            _ => None,
        };
        match step {
            Some(t) => {
                text = t;
                changed = true;
            }
            None => break,
        }
    }
    if !changed {
        return None;
    }
    // Containers on the path left empty go too, innermost first.
    for depth in (1..=keys.len()).rev() {
        let root = jsonedit::parse(&text).ok()?;
        let mut path = vec![root];
        for k in &keys[..depth] {
            let Some(next) = path.last().expect("a node").get(k).cloned() else {
                break;
            };
            path.push(next);
        }
        if path.len() != depth + 1 {
            continue;
        }
        let node = &path[depth];
        let empty = match &node.kind {
            jsonedit::Kind::Object(m) => m.is_empty(),
            jsonedit::Kind::Array(a) => a.is_empty(),
            jsonedit::Kind::Scalar => false,
        };
        if !empty {
            break;
        }
        let parent = &path[depth - 1];
        let jsonedit::Kind::Object(members) = &parent.kind else {
            break;
        };
        let i = members.iter().position(|(k, _, _)| k == keys[depth - 1])?;
        text = jsonedit::remove(&text, parent, i);
    }
    Some(text)
}

/// One file `init` changed, as the manifest remembers it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Installed {
    /// Which agent.
    pub agent: Agent,
    /// Which scope.
    pub scope: Scope,
    /// The file.
    pub path: PathBuf,
    /// True when `init` created it.
    pub created: bool,
    /// Where its bytes from before are kept (when it existed).
    pub backup: Option<PathBuf>,
    /// FNV-1a of what `init` wrote, to tell whether it was edited since.
    pub written: String,
    /// Directories `init` created for the file, outermost first.
    #[serde(default)]
    pub created_dirs: Vec<PathBuf>,
    /// The file `init` wrote when `path` is a symlink: the link's target,
    /// where Lens's part is (the link itself is the user's and stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
}

/// The manifest: every file `init` changed and has not yet put back.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// The changed files.
    pub installed: Vec<Installed>,
}

impl Manifest {
    /// Reads the manifest in `dir` (empty when there is none).
    pub fn load(dir: &Path) -> Manifest {
        fs::read(dir.join("init.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Writes it back, whole or not at all (see [`crate::files::replace`]).
    pub fn save(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)?;
        let mut text = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        text.push(b'\n');
        crate::files::replace(&dir.join("init.json"), &text)
    }
}

/// A fingerprint of file contents (not for security: to notice an edit).
pub fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A line diff of two texts, for `--dry-run`: unchanged lines with two spaces,
/// removed with `-`, added with `+`.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Longest common subsequence, by table: settings and rule files are small.
    let mut t = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            t[i][j] = if a[i] == b[j] {
                t[i + 1][j + 1] + 1
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!("  {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || t[i][j + 1] >= t[i + 1][j]) {
            out.push_str(&format!("+ {}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", a[i]));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook() -> Change {
        claude::settings_edits(PathBuf::new()).remove(0).change
    }

    fn allow() -> Change {
        claude::settings_edits(PathBuf::new()).remove(1).change
    }

    #[test]
    fn a_block_is_added_once_and_removed_exactly() {
        let block = Change::Block { preamble: "" };
        for old in ["", "# Notes\n", "# Notes", "# Notes\n\n"] {
            let new = apply(Some(old), &block).unwrap().unwrap();
            assert!(new.ends_with(AWARENESS) && new.starts_with(old.trim_end()));
            assert_eq!(apply(Some(&new), &block).unwrap(), None);
            let back = remove(&new, &block).unwrap();
            assert!(!back.contains(BEGIN));
            assert_eq!(back.trim_end(), old.trim_end());
        }
    }

    #[test]
    fn only_after_tool_hooks_are_installed() {
        let place = Place {
            home: PathBuf::from("/h"),
            project: PathBuf::from("/p"),
        };
        for agent in Agent::ALL {
            for scope in [Scope::Global, Scope::Project] {
                for e in edits(agent, scope, &place).unwrap_or_default() {
                    if let Change::Hook { event, .. } = e.change {
                        assert!(
                            matches!(event, "PostToolUse" | "AfterTool"),
                            "{agent:?} {event}"
                        );
                    }
                    if let Change::File { contents } = e.change {
                        if agent == Agent::Copilot {
                            let v: Value = serde_json::from_str(contents).unwrap();
                            let hooks: Vec<&String> =
                                v["hooks"].as_object().unwrap().keys().collect();
                            assert_eq!(hooks, ["postToolUse"]);
                            continue;
                        }
                        assert!(
                            contents.contains("\"tool.execute.after\"")
                                || contents.contains("pi.on(\"tool_result\""),
                            "{agent:?}"
                        );
                        assert!(!contents.contains("tool.execute.before"));
                        assert!(!contents.contains("\"tool_call\""));
                        assert!(!contents.contains("@opencode-ai/plugin"));
                    }
                }
            }
        }
    }

    #[test]
    fn a_hook_joins_the_users_settings_keeping_every_byte() {
        let old = "{\n    \"model\": \"opus\",\n    \"big\": 12345678901234567890123,\n    \"hooks\": {\"PreToolUse\": []},\n    \"env\": {\"A\": \"1\"}\n}\n";
        let new = apply(Some(old), &hook()).unwrap().unwrap();
        assert!(new.contains("12345678901234567890123"), "{new}");
        let v: Value = serde_json::from_str(&new).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "big", "hooks", "env"]);
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Bash");
        assert_eq!(
            v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            "lens hook claude"
        );
        assert_eq!(v["hooks"]["PreToolUse"], serde_json::json!([]));
        assert_eq!(apply(Some(&new), &hook()).unwrap(), None);
        // Taken out again, the file is what it was, byte for byte.
        assert_eq!(remove(&new, &hook()).unwrap(), old);
        // With the allow rule too, in either order.
        let both = apply(Some(&new), &allow()).unwrap().unwrap();
        let v: Value = serde_json::from_str(&both).unwrap();
        assert_eq!(
            v["permissions"]["allow"],
            serde_json::json!(["Bash(lens show:*)"])
        );
        let back = remove(&remove(&both, &hook()).unwrap(), &allow()).unwrap();
        assert_eq!(back, old);
    }

    #[test]
    fn the_users_own_hooks_in_lens_s_group_stay() {
        let old = "{\n  \"permissions\": {\"allow\": [\"Bash(make:*)\"]}\n}\n";
        let new = apply(Some(old), &hook()).unwrap().unwrap();
        let new = apply(Some(&new), &allow()).unwrap().unwrap();
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(
            v["permissions"]["allow"],
            serde_json::json!(["Bash(make:*)", "Bash(lens show:*)"])
        );
        // The user adds a hook of their own to the group Lens made.
        let edited = new.replace(
            "\"command\": \"lens hook claude\"\n",
            "\"command\": \"lens hook claude\"\n          },\n          {\n            \"type\": \"command\",\n            \"command\": \"./audit.sh\"\n",
        );
        assert_ne!(edited, new);
        let v: Value = serde_json::from_str(&edited).unwrap();
        assert_eq!(
            v["hooks"]["PostToolUse"][0]["hooks"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let back = remove(&remove(&edited, &hook()).unwrap(), &allow()).unwrap();
        let v: Value = serde_json::from_str(&back).unwrap();
        assert_eq!(
            v["hooks"]["PostToolUse"],
            serde_json::json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}])
        );
        assert_eq!(
            v["permissions"]["allow"],
            serde_json::json!(["Bash(make:*)"])
        );
    }

    #[test]
    fn nothing_empty_is_left_behind() {
        let old = "{\"model\": \"opus\"}";
        let new = apply(Some(old), &hook()).unwrap().unwrap();
        assert_eq!(remove(&new, &hook()).unwrap(), old);
        let new = apply(Some(""), &hook()).unwrap().unwrap();
        assert_eq!(remove(&new, &hook()).unwrap().trim(), "{}");
        // A member Lens added goes; one the user set to something else stays.
        let member = opencode::allow_show_edit(PathBuf::new()).change;
        let t =
            "{\n  \"permission\": {\n    \"bash\": {\n      \"rm *\": \"deny\"\n    }\n  }\n}\n";
        let new = apply(Some(t), &member).unwrap().unwrap();
        assert!(new.contains("\"lens show *\": \"allow\""), "{new}");
        assert_eq!(remove(&new, &member).unwrap(), t);
        let theirs = t.replace("rm *", "lens show *");
        assert_eq!(apply(Some(&theirs), &member).unwrap(), None);
        assert_eq!(remove(&theirs, &member), None);
    }

    #[test]
    fn jsonc_settings_keep_their_comments() {
        let old = "{\n  // my model\n  \"model\": \"opus\", /* keep */\n}\n";
        let new = apply(Some(old), &gemini::hook_edit(PathBuf::new()).change)
            .unwrap()
            .unwrap();
        assert!(
            new.contains("// my model") && new.contains("/* keep */"),
            "{new}"
        );
        assert_eq!(
            remove(&new, &gemini::hook_edit(PathBuf::new()).change).unwrap(),
            old
        );
    }

    #[test]
    fn settings_that_do_not_parse_are_left_alone() {
        let e = apply(Some("{\"model\": "), &hook()).unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
        assert!(apply(Some("[1]"), &hook())
            .unwrap_err()
            .contains("not a JSON object"));
        assert!(apply(Some(r#"{"hooks": 3}"#), &hook()).is_err());
    }

    #[test]
    fn what_a_strict_reader_refuses_is_named() {
        assert_eq!(not_strict("{\"a\": \"https://x\"}\n"), None);
        assert_eq!(not_strict(""), None);
        // Not JSON at all: `apply` says so.
        assert_eq!(not_strict("{\"a\": "), None);
        assert_eq!(not_strict("{\n  // mine\n  \"a\": 1\n}"), Some("comments"));
        assert_eq!(not_strict("{\"a\": [1, 2,]}"), Some("a trailing comma"));
        assert_eq!(
            not_strict("{\"a\": 1, /* x */}"),
            Some("comments and a trailing comma")
        );
        assert_eq!(strict_reader(Agent::Gemini), None);
        assert_eq!(strict_reader(Agent::Claude), Some("Claude Code"));
    }

    #[test]
    fn appended_text_goes_in_once_and_comes_out_exactly() {
        let entry = vibe::hooks_edit(PathBuf::new()).change;
        for old in [
            "",
            "# mine\n",
            "[[hooks]]\nname = \"a\"\ntype = \"pre_tool\"\ncommand = \"x\"",
            "x = 1\n\n",
        ] {
            let new = apply(Some(old), &entry).unwrap().unwrap();
            assert!(new.ends_with(vibe::ENTRY) && new.starts_with(old), "{new}");
            assert_eq!(apply(Some(&new), &entry).unwrap(), None);
            let back = remove(&new, &entry).unwrap();
            assert_eq!(back.trim_end(), old.trim_end());
            // Exact wherever `init` did not reuse a blank line of the user's
            // (uninstall restores an unedited file from its backup anyway).
            if old.is_empty() || (old.ends_with('\n') && !old.ends_with("\n\n")) {
                assert_eq!(back, old);
            }
        }
        // A TOML file it cannot add a table to, or one that does not parse.
        for bad in ["hooks = 3\n", "hooks = [1]\n", "[hooks]\nx = 1\n", "a = \n"] {
            assert!(apply(Some(bad), &entry).is_err(), "{bad}");
        }
        // A YAML key the file has already.
        let read = Change::Appended {
            text: "read: ~/x.md\n",
            toml_key: None,
            taken: Some("read:"),
        };
        assert!(apply(Some("read: mine.md\n"), &read)
            .unwrap_err()
            .contains("`read:`"));
        let new = apply(Some("model: x\n"), &read).unwrap().unwrap();
        assert_eq!(new, "model: x\n\nread: ~/x.md\n");
        assert_eq!(remove(&new, &read).unwrap(), "model: x\n");
    }

    #[test]
    fn the_hooked_agents_are_the_ones_lens_hook_names() {
        let hooked = Agent::names(true);
        assert!(
            hooked.contains("vibe") && !hooked.contains("auggie") && !hooked.contains("cursor")
        );
        let place = Place {
            home: PathBuf::from("/h"),
            project: PathBuf::from("/p"),
        };
        for a in Agent::ALL {
            assert_eq!(Agent::parse(a.name()), Some(a));
            // An agent with no hook has its one line saying why.
            if !a.has_hook() {
                assert!(!needs(a, Scope::Global, &place).is_empty(), "{a:?}");
            }
        }
    }

    #[test]
    fn what_the_model_would_read_is_the_same_for_a_spooled_output() {
        let trailer = "\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)";
        let out: String = (0..40_000)
            .map(|i| format!("  line {i} caf\u{e9}\t\"x\"\n"))
            .collect::<String>()
            + "  \n";
        let events = [
            (
                Agent::Claude,
                serde_json::json!({"tool_response": {"stdout": out, "stderr": " warn "}}),
            ),
            (
                Agent::Claude,
                serde_json::json!({"tool_response": {"stdout": out, "stderr": "",
                    "persistedOutputPath": "/p/b1.txt", "persistedOutputSize": 9}}),
            ),
            (
                Agent::Opencode,
                serde_json::json!({"command": "make", "output": out}),
            ),
            (
                Agent::Gemini,
                serde_json::json!({"tool_response": {"llmContent": format!("Output: {out}")}}),
            ),
            (Agent::Codex, serde_json::json!({"tool_response": out})),
            (
                Agent::Kilo,
                serde_json::json!({"command": "make", "output": out, "outputPath": null}),
            ),
            (
                Agent::Vibe,
                serde_json::json!({"hook_event_name": "post_tool", "tool_status": "success",
                    "tool_name": "bash", "tool_input": {"command": "make"},
                    "tool_output": {"command": "make", "stdout": out, "stderr": "w\n",
                        "returncode": 2, "timed_out": false, "was_truncated": false}}),
            ),
            (
                Agent::Pi,
                serde_json::json!({"command": "make", "isError": true, "fullOutputPath": null,
                    "output": format!("{out}\n\nCommand exited with code 2")}),
            ),
            (
                Agent::Copilot,
                serde_json::json!({"toolName": "bash", "toolArgs": {"command": "make"},
                    "toolResult": {"resultType": "success",
                        "textResultForLlm": format!("{out}\n<shellId: 3 completed with exit code 2>")}}),
            ),
            (
                Agent::Qwen,
                serde_json::json!({"hook_event_name": "PostToolUse",
                    "tool_name": "run_shell_command", "tool_input": {"command": "make"},
                    "tool_response": {"llmContent": format!("Command: make\nDirectory: (root)\nOutput: {out}{trailer}"),
                        "returnDisplay": out}}),
            ),
            (
                Agent::Qwen,
                serde_json::json!({"hook_event_name": "PostToolUse",
                    "tool_name": "run_shell_command", "tool_input": {"command": "make"},
                    "tool_response": {"llmContent": format!("{}The full output has been saved to: /t/o\n{}Command: make\nDirectory: (root)\nOutput: {}{trailer}",
                            qwen::CUT, qwen::CUT_TEXT, &out[..500]),
                        "returnDisplay": format!("{out}\n{}/t/o", qwen::SAVED)}}),
            ),
        ];
        for (agent, v) in events {
            let text = v.to_string();
            let spooled =
                crate::event::read_spooling_in(text.as_bytes(), std::env::temp_dir).unwrap();
            assert_ne!(spooled.value, v, "{agent:?}: nothing was spooled");
            let held = Event::from(v);
            assert_eq!(
                model_would_read(agent, &spooled, 7),
                model_would_read(agent, &held, 7),
                "{agent:?}"
            );
            // The captured output is the same bytes, whichever way it was read.
            let (Some(a), Some(b)) = (read_event(agent, &spooled), read_event(agent, &held)) else {
                assert!(
                    matches!(agent, Agent::Claude | Agent::Gemini | Agent::Codex),
                    "{agent:?}: no output read"
                );
                continue;
            };
            assert!(
                a.output.to_vec().unwrap() == b.output.to_vec().unwrap(),
                "{agent:?}"
            );
            assert!(!a.output.is_empty(), "{agent:?}");
            assert_eq!(
                (a.exit, a.full, a.partial),
                (b.exit, b.full, b.partial),
                "{agent:?}"
            );
        }
    }

    #[test]
    fn diffs_mark_what_changes() {
        assert_eq!(diff("a\nb\n", "a\nx\nb\n"), "  a\n+ x\n  b\n");
        assert_eq!(diff("a\nb\n", "a\n"), "  a\n- b\n");
    }
}
