//! The agents Lens knows, and what wiring Lens into one is made of: where
//! (home, project), at which scope, and the edits of its files. Plain data under
//! the per-agent files and the dispatch alike, so `args` can name an agent
//! without depending on the code that installs or answers for it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
    /// Auggie (Augment Code's CLI): awareness only.
    Auggie,
    /// Crush: awareness only.
    Crush,
    /// Continue CLI (`cn`): awareness only.
    Continue,
    /// Aider: awareness only.
    Aider,
    /// Mistral Vibe.
    Vibe,
    /// Kilo Code CLI.
    Kilo,
    /// pi.
    Pi,
    /// Factory Droid.
    Droid,
    /// GitHub Copilot CLI.
    Copilot,
    /// Qwen Code.
    Qwen,
}

impl Agent {
    /// Every agent, in the order `init` reports them.
    pub const ALL: [Agent; 15] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Opencode,
        Agent::Auggie,
        Agent::Crush,
        Agent::Continue,
        Agent::Aider,
        Agent::Vibe,
        Agent::Kilo,
        Agent::Pi,
        Agent::Droid,
        Agent::Copilot,
        Agent::Qwen,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Opencode => "opencode",
            Agent::Auggie => "auggie",
            Agent::Crush => "crush",
            Agent::Continue => "continue",
            Agent::Aider => "aider",
            Agent::Vibe => "vibe",
            Agent::Kilo => "kilo",
            Agent::Pi => "pi",
            Agent::Droid => "droid",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
        }
    }

    /// The names of every agent (or of those with a hook), for a message.
    pub fn names(hooked_only: bool) -> String {
        let names: Vec<&str> = Agent::ALL
            .into_iter()
            .filter(|a| !hooked_only || a.has_hook())
            .map(Agent::name)
            .collect();
        names.join(", ")
    }

    /// Whether Lens has an after-tool hook for it (`lens hook NAME`).
    pub fn has_hook(self) -> bool {
        !matches!(
            self,
            Agent::Cursor
                | Agent::Droid
                | Agent::Auggie
                | Agent::Crush
                | Agent::Continue
                | Agent::Aider
        )
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
            Agent::Auggie => (&["auggie"], ".augment"),
            Agent::Crush => (&["crush"], ".config/crush"),
            Agent::Continue => (&["cn"], ".continue"),
            Agent::Aider => (&["aider"], ".aider"),
            Agent::Vibe => (&["vibe"], ".vibe"),
            Agent::Kilo => (&["kilo", "kilocode"], ".config/kilo"),
            Agent::Pi => (&["pi"], ".pi"),
            Agent::Droid => (&["droid"], ".factory"),
            Agent::Copilot => (&["copilot"], ".copilot"),
            Agent::Qwen => (&["qwen"], ".qwen"),
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
        /// The settings key under `hooks` (`PostToolUse`, `AfterTool`).
        event: &'static str,
        /// The tool the hook matches.
        matcher: &'static str,
        /// The command it runs.
        command: &'static str,
        /// Extra fields of the hook entry, as JSON (Gemini's `name`, a timeout).
        extra: &'static str,
    },
    /// A string in a JSON list at a key path (`permissions.allow` gets
    /// `Bash(lens show:*)`), the path created when it is missing.
    ListItem {
        /// The keys from the top object to the list.
        keys: &'static [&'static str],
        /// The string.
        item: &'static str,
    },
    /// A member of a JSON object at a key path (`permission.bash` gets
    /// `"lens show *": "allow"`), the path created when it is missing. A member
    /// of that name with another value is the user's and stays.
    Member {
        /// The keys from the top object to the object.
        keys: &'static [&'static str],
        /// The member's key.
        key: &'static str,
        /// Its value, a string.
        value: &'static str,
    },
    /// Text appended at the end of a config file that is not JSON (a TOML
    /// table, a YAML key), taken out again exactly.
    Appended {
        /// The text, whole lines.
        text: &'static str,
        /// For a TOML file: the key the text adds to (an array of tables); the
        /// file must parse before and after, and hold it as such a list.
        toml_key: Option<&'static str>,
        /// A line start that, found in the file, means it has its own such key
        /// already, which a second one would replace: the file is left alone.
        taken: Option<&'static str>,
    },
    /// A whole file `init` owns (a plugin).
    File {
        /// Its contents.
        contents: &'static str,
    },
    /// A file `init` writes only where there is none, standing for what the
    /// agent would otherwise make at its next start (OpenCode's finished
    /// install of its plugin package); one already there is left as it is.
    Placeholder {
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
