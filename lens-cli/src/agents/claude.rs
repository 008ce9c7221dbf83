//! Claude Code: a `PreToolUse` hook on the Bash tool (`lens hook claude`) and
//! the awareness block in `CLAUDE.md`.
//!
//! The hook reads the event on stdin and, when `lens rewrite` improves the
//! command, answers with `hookSpecificOutput.updatedInput`: the tool's input with
//! the command rewritten, every other field as it came, so the transcript shows
//! exactly what ran. It never grants a command more than Claude Code would have
//! granted the original: a command the user's `permissions.deny` rules match is
//! left alone (Claude Code refuses it as before); one their `allow` rules match
//! in every part (or any command in `bypassPermissions` mode) is answered
//! `allow`; any other is left to Claude Code's own permission prompt, which then
//! shows the rewritten command. Any error means no answer: the original runs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Change, Edit};
use crate::rewrite;

/// The command the hook runs.
pub const HOOK: &str = "lens hook claude";

/// The settings edit: a `PreToolUse` group matching `Bash`.
pub fn hook_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Hook {
            event: "PreToolUse",
            matcher: "Bash",
            command: HOOK,
            name: None,
        },
    }
}

/// The user's permission rules for Bash, from Claude Code's settings files.
#[derive(Debug, Default, Clone)]
pub struct Rules {
    /// `permissions.allow`.
    pub allow: Vec<String>,
    /// `permissions.ask`.
    pub ask: Vec<String>,
    /// `permissions.deny`.
    pub deny: Vec<String>,
}

impl Rules {
    /// The rules of the user's settings and the project's (both files).
    pub fn load(home: &Path, cwd: &Path) -> Rules {
        let mut r = Rules::default();
        for f in [
            home.join(".claude/settings.json"),
            cwd.join(".claude/settings.json"),
            cwd.join(".claude/settings.local.json"),
        ] {
            let Some(v) = std::fs::read(&f)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            else {
                continue;
            };
            for (key, into) in [
                ("allow", &mut r.allow),
                ("ask", &mut r.ask),
                ("deny", &mut r.deny),
            ] {
                if let Some(list) = v
                    .pointer(&format!("/permissions/{key}"))
                    .and_then(Value::as_array)
                {
                    into.extend(list.iter().filter_map(Value::as_str).map(String::from));
                }
            }
        }
        r
    }
}

/// True when a rule (`Bash`, `Bash(*)`, `Bash(git diff:*)`, `Bash(git diff *)`,
/// `Bash(npm test)`) covers one simple command.
pub fn rule_matches(rule: &str, command: &str) -> bool {
    let Some(rest) = rule.strip_prefix("Bash") else {
        return false;
    };
    if rest.is_empty() || rest == "(*)" {
        return true;
    }
    let Some(pattern) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
        return false;
    };
    let prefix = pattern
        .strip_suffix(":*")
        .or_else(|| pattern.strip_suffix(" *"))
        .or_else(|| pattern.strip_suffix('*'));
    match prefix {
        Some(p) => {
            let p = p.trim_end();
            command == p || command.starts_with(&format!("{p} "))
        }
        None => command == pattern,
    }
}

/// The hook's answer to one event on stdin, if it has one.
pub fn answer(input: &str, rules: &Rules) -> Option<String> {
    let event: Value = serde_json::from_str(input).ok()?;
    if event.get("tool_name")?.as_str()? != "Bash" {
        return None;
    }
    let tool_input = event.get("tool_input")?.as_object()?;
    let command = tool_input.get("command")?.as_str()?;
    let rewritten = rewrite::rewrite(command).ok()?;
    let parts = rewrite::simple_commands(command)?;
    let covered = |list: &[String], c: &str| list.iter().any(|r| rule_matches(r, c));
    if parts.iter().any(|c| covered(&rules.deny, c)) {
        return None;
    }
    let bypass = event.get("permission_mode").and_then(Value::as_str) == Some("bypassPermissions");
    let allowed = parts
        .iter()
        .all(|c| covered(&rules.allow, c) && !covered(&rules.ask, c));
    let mut updated = tool_input.clone();
    updated.insert("command".into(), Value::String(rewritten));
    let mut out = serde_json::json!({
        "hookEventName": "PreToolUse",
        "updatedInput": updated,
    });
    if bypass || allowed {
        out["permissionDecision"] = Value::String("allow".into());
        out["permissionDecisionReason"] = Value::String(
            "lens: the command your permission rules allow, with its output filtered".into(),
        );
    }
    Some(serde_json::json!({ "hookSpecificOutput": out }).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded PreToolUse event for `git status` (fields as Claude Code sends
    /// them; ids shortened).
    const GIT_STATUS: &str = r#"{"session_id":"5f1c0e2a","transcript_path":"/home/u/.claude/projects/-home-u-app/5f1c0e2a.jsonl","cwd":"/home/u/app","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"Show working tree status"},"tool_use_id":"toolu_01"}"#;

    fn rules(allow: &[&str], deny: &[&str]) -> Rules {
        Rules {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            ask: Vec::new(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_shaped_command_is_rewritten_keeping_the_other_fields() {
        let a: Value =
            serde_json::from_str(&answer(GIT_STATUS, &Rules::default()).unwrap()).unwrap();
        let h = &a["hookSpecificOutput"];
        assert_eq!(h["hookEventName"], "PreToolUse");
        assert_eq!(h["updatedInput"]["command"], "lens git status");
        assert_eq!(h["updatedInput"]["description"], "Show working tree status");
        // No rule allows it: Claude Code's own prompt decides.
        assert!(h.get("permissionDecision").is_none());
    }

    #[test]
    fn it_never_grants_more_than_the_rules_grant_the_original() {
        let allowed = answer(GIT_STATUS, &rules(&["Bash(git status:*)"], &[])).unwrap();
        assert!(
            allowed.contains(r#""permissionDecision":"allow""#),
            "{allowed}"
        );
        assert_eq!(
            answer(
                GIT_STATUS,
                &rules(&["Bash(git status:*)"], &["Bash(git:*)"])
            ),
            None
        );
        let compound = GIT_STATUS.replace("git status", "git status && cargo test");
        let partly = answer(&compound, &rules(&["Bash(git status:*)"], &[])).unwrap();
        assert!(!partly.contains("permissionDecision"), "{partly}");
    }

    #[test]
    fn anything_else_gets_no_answer() {
        for input in [
            GIT_STATUS.replace("git status", "echo hi"),
            GIT_STATUS.replace("\"Bash\"", "\"Edit\""),
            GIT_STATUS.replace("git status", "cargo test | tail -5"),
            "not json".to_string(),
            "{}".to_string(),
        ] {
            assert_eq!(answer(&input, &Rules::default()), None, "{input}");
        }
    }

    #[test]
    fn rules_match_as_claude_code_writes_them() {
        assert!(rule_matches("Bash", "anything"));
        assert!(rule_matches("Bash(git diff:*)", "git diff HEAD"));
        assert!(rule_matches("Bash(git diff *)", "git diff"));
        assert!(!rule_matches("Bash(git diff:*)", "git difftool"));
        assert!(rule_matches("Bash(npm test)", "npm test"));
        assert!(!rule_matches("Bash(npm test)", "npm test --watch"));
        assert!(!rule_matches("Read(./x)", "git status"));
    }
}
