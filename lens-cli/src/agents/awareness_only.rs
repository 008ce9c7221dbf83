//! The agents with no after-tool event that can replace what the model reads
//! of a shell command: Auggie, Crush, Continue and Aider. `init` installs only
//! the awareness block, where each reads instructions by itself, and says in
//! one line why there is no hook ([`why_no_hook`]). What each was read in is
//! in `docs/agents-findings.md`.

use std::path::Path;

use super::{Agent, Change, Edit, Scope};

/// Front matter that makes Auggie apply a rule file in every session
/// (`getRuleTypeFromContent` in Auggie 0.36.0's bundle reads `type`).
const AUGGIE_RULE: &str =
    "---\ntype: always_apply\ndescription: Reading Lens's shortened command output\n---\n";

/// Front matter that makes Continue apply a rule file in every session
/// (`loadMarkdownRulesWithMetadata` in Continue CLI 1.5.47).
const CONTINUE_RULE: &str =
    "---\nname: Lens\nalwaysApply: true\ndescription: Reading Lens's shortened command output\n---\n";

/// The file Aider is told to read in every chat, holding the block.
const AIDER_FILE: &str = ".aider-lens.md";

/// The line in `~/.aider.conf.yml` that makes Aider read it (`read` paths go
/// through `expanduser` in Aider 0.86.2's `main.py`).
const AIDER_READ: &str = "read: ~/.aider-lens.md\n";

/// Why `init` installs no hook for `agent`, in one line.
pub fn why_no_hook(agent: Agent) -> Option<&'static str> {
    Some(match agent {
        Agent::Auggie => "Auggie 0.36.0's PostToolUse hook can only append to a command's output, not replace it: only the awareness block is installed, so the model knows Lens's markers and `lens show`",
        Agent::Crush => "Crush has only a PreToolUse hook (read in its source as of 2026-08-21; the 0.96.1 binary could not be fetched here), which cannot replace a command's output: only the awareness block is installed",
        Agent::Continue => "Continue CLI 1.5.47 fires no hook after a tool runs: only the awareness block is installed, so the model knows Lens's markers and `lens show`",
        Agent::Aider => "Aider 0.86.2 has no hooks and no shell tool of the model's own (the user runs each command it suggests): only the awareness file is installed, read in every chat through ~/.aider.conf.yml",
        _ => return None,
    })
}

/// What `init` changes for an awareness-only agent at `scope`.
pub fn edits(agent: Agent, scope: Scope, home: &Path, project: &Path) -> Result<Vec<Edit>, String> {
    let block = |path: std::path::PathBuf, preamble: &'static str| Edit {
        path,
        change: Change::Block { preamble },
    };
    Ok(match (agent, scope) {
        (Agent::Auggie, Scope::Global) => {
            vec![block(home.join(".augment/rules/lens.md"), AUGGIE_RULE)]
        }
        (Agent::Auggie, Scope::Project) => {
            vec![block(project.join(".augment/rules/lens.md"), AUGGIE_RULE)]
        }
        (Agent::Crush, Scope::Global) => vec![block(home.join(".config/crush/CRUSH.md"), "")],
        (Agent::Crush, Scope::Project) => vec![block(project.join("CRUSH.md"), "")],
        (Agent::Continue, Scope::Global) => {
            vec![block(home.join(".continue/rules/lens.md"), CONTINUE_RULE)]
        }
        (Agent::Continue, Scope::Project) => {
            vec![block(project.join(".continue/rules/lens.md"), CONTINUE_RULE)]
        }
        (Agent::Aider, Scope::Global) => vec![
            block(home.join(AIDER_FILE), ""),
            Edit {
                path: home.join(".aider.conf.yml"),
                change: Change::Appended {
                    text: AIDER_READ,
                    toml_key: None,
                    taken: Some("read:"),
                },
            },
        ],
        (Agent::Aider, Scope::Project) => {
            return Err("Aider reads no instruction file by itself, and a project's `read:` path is taken from where aider starts; use --global".into())
        }
        _ => return Err(format!("{} has a hook; not an awareness-only agent", agent.name())),
    })
}
