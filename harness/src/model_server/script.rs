//! The deterministic model: what it is told (a [`Turn`], read from a request by
//! its dialect) and what it answers (an [`Action`]).
//!
//! The model is stateless: every request carries the whole conversation, so the
//! step is the number of tool calls the model already made in it. A retried
//! request gets the same answer, and side requests a CLI makes (titles, quota
//! checks: requests without a shell tool) do not move the script on.
//!
//! The list form ([`Script::commands`]) calls the shell tool with the next command
//! and, when the list is exhausted, answers a final text. [`Script::custom`] is the
//! hook for richer agents (one that reads the task prompt, follows markers with
//! `lens show`, reruns): any function from the turn to an action.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The shell tool's names across the CLIs, in the order they are looked for among
/// a request's tools: Claude Code's `Bash`, Codex's `shell`, `shell_command` or
/// `exec_command`, Gemini CLI's `run_shell_command`, OpenCode's `bash`.
pub const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "shell",
    "shell_command",
    "exec_command",
    "run_shell_command",
    "bash",
];

/// One tool result a request carries.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The id of the tool call it answers (Gemini: the call's id if the CLI sent
    /// one back, else the function's name).
    pub id: String,
    /// The exact text the model reads for it (see each dialect for how a result
    /// made of several parts is joined).
    pub text: String,
    /// Whether the CLI flagged it as an error.
    #[serde(default)]
    pub is_error: bool,
}

/// What the model is told in one request.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// The first user message's text (the task prompt, with whatever the CLI put
    /// around it).
    pub prompt: String,
    /// The names of the tools the request declares.
    pub tools: Vec<String>,
    /// The shell tool, when one of [`SHELL_TOOLS`] is declared.
    pub shell_tool: Option<String>,
    /// The shell tool's parameter schema (JSON Schema), `Null` without one.
    pub shell_schema: Value,
    /// Tool calls the model made earlier in the conversation.
    pub calls_made: usize,
    /// Every tool result in the conversation, in order.
    pub tool_results: Vec<ToolResult>,
}

impl Turn {
    /// Picks the shell tool out of `(name, schema)` pairs.
    pub fn set_tools(&mut self, tools: Vec<(String, Value)>) {
        self.tools = tools.iter().map(|(n, _)| n.clone()).collect();
        if let Some((name, schema)) = SHELL_TOOLS
            .iter()
            .find_map(|want| tools.iter().find(|(n, _)| n == want))
        {
            self.shell_tool = Some(name.clone());
            self.shell_schema = schema.clone();
        }
    }
}

/// What the model answers.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "lowercase", tag = "type")]
pub enum Action {
    /// Call the shell tool with this command line.
    Shell {
        /// The command line.
        command: String,
    },
    /// Answer this text and end the turn.
    Text {
        /// The text.
        text: String,
    },
}

type Decide = dyn Fn(&Turn) -> Action + Send + Sync;

/// A deterministic model.
#[derive(Clone)]
pub struct Script {
    decide: Arc<Decide>,
}

/// The script file `harness model-server --script` reads.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    /// Shell commands, one per step.
    commands: Vec<String>,
    /// The text answered once they are done.
    #[serde(rename = "final", default = "default_final")]
    final_text: String,
}

fn default_final() -> String {
    "Done.".into()
}

impl Script {
    /// Runs `commands` through the shell tool one per request, then answers
    /// `final_text`. A request without a shell tool is answered `final_text`.
    pub fn commands(commands: Vec<String>, final_text: &str) -> Script {
        let final_text = final_text.to_string();
        Script::custom(move |turn| match commands.get(turn.calls_made) {
            Some(c) if turn.shell_tool.is_some() => Action::Shell { command: c.clone() },
            _ => Action::Text {
                text: final_text.clone(),
            },
        })
    }

    /// A model that answers with `decide`.
    pub fn custom(decide: impl Fn(&Turn) -> Action + Send + Sync + 'static) -> Script {
        Script {
            decide: Arc::new(decide),
        }
    }

    /// Reads a TOML script: `commands = ["…", …]` and optionally `final = "…"`.
    pub fn load(path: &Path) -> Result<Script> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the script {}", path.display()))?;
        let f: ScriptFile = toml::from_str(&text).with_context(|| {
            format!(
                "{} is not a script; write commands = [\"…\"] and optionally final = \"…\"",
                path.display()
            )
        })?;
        Ok(Script::commands(f.commands, &f.final_text))
    }

    /// The model's answer to `turn`. A shell call for a turn without a shell tool
    /// becomes a text saying so.
    pub fn answer(&self, turn: &Turn) -> Action {
        match (self.decide)(turn) {
            Action::Shell { command } if turn.shell_tool.is_none() => Action::Text {
                text: format!(
                    "The scripted model wanted to run `{command}` but the request declares no shell tool (it has: {}).",
                    turn.tools.join(", ")
                ),
            },
            a => a,
        }
    }
}

/// The shell tool's arguments for `command`, built from its schema: the command
/// goes in `command` or `cmd` (as `["bash", "-lc", command]` where the schema
/// wants an array), and a `description` property, when there is one, says which
/// step this is.
pub fn shell_arguments(schema: &Value, command: &str, step: usize) -> Value {
    let props = schema.get("properties").cloned().unwrap_or(Value::Null);
    let mut args = serde_json::Map::new();
    let key = ["command", "cmd"]
        .into_iter()
        .find(|k| props.get(*k).is_some())
        .unwrap_or("command");
    let is_array = props
        .get(key)
        .and_then(|p| p.get("type"))
        .is_some_and(|t| t == "array" || t == "ARRAY");
    let value = if is_array {
        json!(["bash", "-lc", command])
    } else {
        json!(command)
    };
    args.insert(key.into(), value);
    if props.get("description").is_some() {
        args.insert(
            "description".into(),
            json!(format!("scripted step {}", step + 1)),
        );
    }
    Value::Object(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(calls: usize, shell: bool) -> Turn {
        let mut t = Turn {
            calls_made: calls,
            ..Turn::default()
        };
        let tools = if shell {
            vec![("Read".into(), Value::Null), ("Bash".into(), json!({}))]
        } else {
            vec![("Read".into(), Value::Null)]
        };
        t.set_tools(tools);
        t
    }

    #[test]
    fn the_list_form_runs_each_command_then_answers_the_final_text() {
        let s = Script::commands(vec!["ls".into(), "pwd".into()], "fin");
        let shell = |c: &str| Action::Shell { command: c.into() };
        assert_eq!(s.answer(&turn(0, true)), shell("ls"));
        assert_eq!(s.answer(&turn(1, true)), shell("pwd"));
        assert_eq!(
            s.answer(&turn(2, true)),
            Action::Text { text: "fin".into() }
        );
        // Side requests without the shell tool do not consume a step.
        assert_eq!(
            s.answer(&turn(0, false)),
            Action::Text { text: "fin".into() }
        );
    }

    #[test]
    fn the_shell_tool_is_found_by_name_in_preference_order() {
        let mut t = Turn::default();
        t.set_tools(vec![
            ("bash".into(), json!({"a": 1})),
            ("exec_command".into(), json!({"b": 2})),
        ]);
        assert_eq!(t.shell_tool.as_deref(), Some("exec_command"));
        assert_eq!(t.shell_schema, json!({"b": 2}));
        assert_eq!(t.tools, ["bash", "exec_command"]);
    }

    #[test]
    fn arguments_follow_the_schema() {
        let claude = json!({"properties": {"command": {"type": "string"}, "description": {"type": "string"}}});
        assert_eq!(
            shell_arguments(&claude, "ls", 0),
            json!({"command": "ls", "description": "scripted step 1"})
        );
        let argv = json!({"properties": {"command": {"type": "array"}}});
        assert_eq!(
            shell_arguments(&argv, "ls", 3),
            json!({"command": ["bash", "-lc", "ls"]})
        );
        let exec = json!({"properties": {"cmd": {"type": "string"}}});
        assert_eq!(shell_arguments(&exec, "ls", 0), json!({"cmd": "ls"}));
    }

    #[test]
    fn a_script_file_loads_and_a_bad_one_says_what_to_write() {
        let dir = std::env::temp_dir().join(format!("lens-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.toml");
        std::fs::write(&good, "commands = [\"echo hi\"]\nfinal = \"bye\"\n").unwrap();
        let s = Script::load(&good).unwrap();
        assert_eq!(
            s.answer(&turn(0, true)),
            Action::Shell {
                command: "echo hi".into()
            }
        );
        assert_eq!(
            s.answer(&turn(1, true)),
            Action::Text { text: "bye".into() }
        );
        let bad = dir.join("bad.toml");
        std::fs::write(&bad, "steps = 3\n").unwrap();
        let e = format!("{:#}", Script::load(&bad).err().unwrap());
        assert!(e.contains("commands = ["), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
