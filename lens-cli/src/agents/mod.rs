//! Wiring Lens into coding agents: `lens init` and the hooks it installs.
//!
//! For each agent, `init` writes what that agent reads: a hook that rewrites a
//! shell command into `lens <command>` where the agent has a hook that can
//! change a command (Claude Code, Gemini CLI, OpenCode), and for every agent a
//! short awareness block in the file it reads on every session (how to read a
//! marker and fetch the lines it hides). Every edit is recorded in a manifest
//! under Lens's state directory with a backup of the file as it was, so
//! `--uninstall` puts back exactly what was there; a second `init` changes
//! nothing. JSON settings are edited as JSON, the user's keys kept in their
//! order; a settings file that does not parse is left alone.
//!
//! One file per agent: what it installs and how its hook answers.

pub mod claude;
pub mod gemini;
pub mod opencode;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The agents `init` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Cursor.
    Cursor,
    /// OpenCode.
    Opencode,
}

impl Agent {
    /// Every agent, in the order `init` reports them.
    pub const ALL: [Agent; 5] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Opencode,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Opencode => "opencode",
        }
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == s)
    }

    /// True when the agent looks installed: its program on PATH or its
    /// directory in the home directory.
    pub fn present(self, home: &Path) -> bool {
        let (programs, dir): (&[&str], &str) = match self {
            Agent::Claude => (&["claude"], ".claude"),
            Agent::Codex => (&["codex"], ".codex"),
            Agent::Gemini => (&["gemini"], ".gemini"),
            Agent::Cursor => (&["cursor", "cursor-agent"], ".cursor"),
            Agent::Opencode => (&["opencode"], ".config/opencode"),
        };
        home.join(dir).is_dir() || programs.iter().any(|p| on_path(p))
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Where `init` writes: the user's own files, or the project's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The user's files under the home directory.
    Global,
    /// The project's files (the git root of the working directory).
    Project,
}

/// The directories an install is relative to.
#[derive(Clone, Debug)]
pub struct Place {
    /// The home directory.
    pub home: PathBuf,
    /// The project root.
    pub project: PathBuf,
}

/// One change `init` makes to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The awareness block, between markers, at the end of a text file.
    Block {
        /// Text the file starts with when `init` creates it (front matter).
        preamble: &'static str,
    },
    /// A hook entry in a JSON settings file: `hooks.<event>` gets a group with
    /// `matcher` running `command`.
    Hook {
        /// The settings key under `hooks` (`PreToolUse`, `BeforeTool`).
        event: &'static str,
        /// The tool the hook matches.
        matcher: &'static str,
        /// The command it runs.
        command: &'static str,
        /// Extra fields of the hook entry (Gemini's `name`).
        name: Option<&'static str>,
    },
    /// A whole file `init` owns (a plugin).
    File {
        /// Its contents.
        contents: &'static str,
    },
}

/// A change to a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The file.
    pub path: PathBuf,
    /// What changes in it.
    pub change: Change,
}

/// The awareness block: what every agent is told. Every line of it costs
/// tokens in every session, so it says only how to read a marker and how to
/// fetch what one hides.
pub const AWARENESS: &str = "\
<!-- lens:begin -->
## Lens: shortened command output
Some commands run as `lens <command>`: the output shown is a view, and every run of lines it leaves out is one marker, e.g. `[lens: elided stdout 120-480 (361 lines: budget) handle=1a2b3c4d]`.
To see those lines, run `lens show 1a2b3c4d --lines 120-480` (`--stream stderr` for stderr) rather than running the command again; `lens show 1a2b3c4d` prints all of it, and `lens --level 3 <command>` runs a command unfiltered.
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
    Ok(match (agent, scope) {
        (Agent::Claude, Scope::Global) => vec![
            claude::hook_edit(h.join(".claude/settings.json")),
            block(h.join(".claude/CLAUDE.md")),
        ],
        (Agent::Claude, Scope::Project) => vec![
            claude::hook_edit(p.join(".claude/settings.local.json")),
            block(p.join("CLAUDE.md")),
        ],
        (Agent::Codex, Scope::Global) => vec![block(h.join(".codex/AGENTS.md"))],
        (Agent::Codex, Scope::Project) => vec![block(p.join("AGENTS.md"))],
        (Agent::Gemini, Scope::Global) => vec![
            gemini::hook_edit(h.join(".gemini/settings.json")),
            block(h.join(".gemini/GEMINI.md")),
        ],
        (Agent::Gemini, Scope::Project) => vec![
            gemini::hook_edit(p.join(".gemini/settings.json")),
            block(p.join("GEMINI.md")),
        ],
        (Agent::Cursor, Scope::Global) => {
            return Err(
                "Cursor keeps its user rules in its settings, not in a file; use --project".into(),
            )
        }
        (Agent::Cursor, Scope::Project) => vec![Edit {
            path: p.join(".cursor/rules/lens.mdc"),
            change: Change::Block {
                preamble: "---\ndescription: Reading Lens's shortened command output\nalwaysApply: true\n---\n",
            },
        }],
        (Agent::Opencode, Scope::Global) => vec![
            opencode::plugin_edit(h.join(".config/opencode/plugin/lens.ts")),
            block(h.join(".config/opencode/AGENTS.md")),
        ],
        (Agent::Opencode, Scope::Project) => vec![
            opencode::plugin_edit(p.join(".opencode/plugin/lens.ts")),
            block(p.join("AGENTS.md")),
        ],
    })
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
        Change::Hook {
            event,
            matcher,
            command,
            name,
        } => {
            let mut root: Value = match old {
                None => Value::Object(Default::default()),
                Some(t) if t.trim().is_empty() => Value::Object(Default::default()),
                Some(t) => serde_json::from_str(t).map_err(|e| {
                    format!("it is not valid JSON ({e}); fix it or install by hand")
                })?,
            };
            let Some(obj) = root.as_object_mut() else {
                return Err("it is not a JSON object; fix it or install by hand".into());
            };
            let hooks = obj
                .entry("hooks")
                .or_insert_with(|| Value::Object(Default::default()));
            let Some(hooks) = hooks.as_object_mut() else {
                return Err("its \"hooks\" is not an object; fix it or install by hand".into());
            };
            let list = hooks
                .entry(event.to_string())
                .or_insert_with(|| Value::Array(Vec::new()));
            let Some(list) = list.as_array_mut() else {
                return Err(format!(
                    "its \"hooks.{event}\" is not a list; fix it or install by hand"
                ));
            };
            if list.iter().any(|g| group_runs(g, command)) {
                return Ok(None);
            }
            let mut entry = serde_json::json!({ "type": "command", "command": command });
            if let Some(n) = name {
                entry["name"] = Value::String(n.to_string());
            }
            list.push(serde_json::json!({ "matcher": matcher, "hooks": [entry] }));
            let mut text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())?;
            text.push('\n');
            Ok(Some(text))
        }
        Change::File { contents } => match old {
            Some(t) if t == *contents => Ok(None),
            Some(_) => {
                Err("a file of that name is already there; remove it or install by hand".into())
            }
            None => Ok(Some(contents.to_string())),
        },
    }
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
        Change::Hook { event, command, .. } => {
            let mut root: Value = serde_json::from_str(old).ok()?;
            let list = root.get_mut("hooks")?.get_mut(*event)?.as_array_mut()?;
            let before = list.len();
            list.retain(|g| !group_runs(g, command));
            if list.len() == before {
                return None;
            }
            let mut text = serde_json::to_string_pretty(&root).ok()?;
            text.push('\n');
            Some(text)
        }
        Change::File { .. } => Some(String::new()),
    }
}

fn group_runs(group: &Value, command: &str) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hs| {
            hs.iter()
                .any(|h| h.get("command").and_then(Value::as_str) == Some(command))
        })
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

    /// Writes it back.
    pub fn save(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)?;
        let mut text = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        text.push(b'\n');
        let tmp = dir.join("init.json.tmp");
        fs::write(&tmp, text)?;
        fs::rename(tmp, dir.join("init.json"))
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
        claude::hook_edit(PathBuf::new()).change
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
    fn a_hook_joins_the_users_settings_in_their_order() {
        let old = r#"{"model": "opus", "hooks": {"PostToolUse": []}, "env": {"A": "1"}}"#;
        let new = apply(Some(old), &hook()).unwrap().unwrap();
        let v: Value = serde_json::from_str(&new).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "hooks", "env"]);
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "lens hook claude"
        );
        assert_eq!(apply(Some(&new), &hook()).unwrap(), None);
        let back: Value = serde_json::from_str(&remove(&new, &hook()).unwrap()).unwrap();
        assert_eq!(back["hooks"]["PreToolUse"], serde_json::json!([]));
        assert_eq!(back["model"], "opus");
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
    fn diffs_mark_what_changes() {
        assert_eq!(diff("a\nb\n", "a\nx\nb\n"), "  a\n+ x\n  b\n");
        assert_eq!(diff("a\nb\n", "a\n"), "  a\n- b\n");
    }
}
