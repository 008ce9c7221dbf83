//! The scripted model behind a real agent CLI (`--model scripted`): the model
//! server ([`crate::model_server`]) plays a deterministic agent, and the CLI runs
//! its tool calls as it would a model's. It does what the scripted driver does
//! ([`super::scripted`]), but through the CLI's own shell tool, so what it reads
//! is what the CLI hands a model (its own cuts, a hook's view):
//!
//! 1. run the command the task prompt names (read from the request: the text
//!    where the task's prompt template puts `{command}`, found after whatever
//!    the CLI put before the prompt, an awareness block with its own
//!    `` `…` `` spans included);
//! 2. when what came back lacks what the task needs, recover, in this order:
//!    each Lens marker with a handle, `lens show H --lines A-B` (through
//!    `grep -E` when the range is longer than [`SHOW_LINES`]); the file where the
//!    CLI saved an output it cut (`… saved to: PATH`), through `grep -E`; the
//!    command again, through `grep -E`;
//! 3. apply the task's known fix (`TASK_INFO=… <task>/fix`), and run the command
//!    again where that confirms anything.
//!
//! The model is stateless (see [`crate::model_server::script`]): each answer is
//! worked out again from the tool results the request carries, so a retried
//! request gets the same answer.

use std::path::PathBuf;

use regex::Regex;

use crate::model_server::{Action, Script, Turn};
use crate::tasks::Task;

/// The longest `lens show` range fetched whole; longer ones are searched.
pub const SHOW_LINES: u64 = 300;

/// The scripted agent for `task`.
pub fn script(task: &Task) -> Script {
    let agent = Agent::for_task(task);
    Script::custom(move |turn| agent.decide(turn))
}

/// The scripted agent for a session of `task`: it works through the numbered
/// `` `…` `` commands the prompt lists (`commands` when the request has none),
/// and after the first run of the task's command recovers what the task needs
/// and applies the fix, as [`script`] does.
pub fn session_script(task: &Task, commands: Vec<String>) -> Script {
    let agent = Agent::for_task(task);
    Script::custom(move |turn| agent.decide_session(turn, &commands))
}

/// The numbered commands a session prompt lists: lines `N. `…``.
pub fn listed(prompt: &str) -> Vec<String> {
    let re = Regex::new(r"(?m)^\d+\. `([^`\n]+)`\s*$").expect("list regex");
    re.captures_iter(prompt).map(|c| c[1].to_string()).collect()
}

struct Agent {
    needs: Regex,
    fix: PathBuf,
    confirm: bool,
    fallback: String,
    template: String,
}

/// `s` as one single-quoted shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The command a request's prompt names where `template` (a task prompt with
/// `{command}`) puts it: between the last occurrence of the template's text
/// before `{command}` (up to 40 bytes of it) and the text after it (up to 20).
pub fn command_in(prompt: &str, template: &str) -> Option<String> {
    let (pre, post) = template.split_once("{command}")?;
    let pre = &pre[floor_char(pre, pre.len().saturating_sub(40))..];
    let post = &post[..floor_char(post, post.len().min(20))];
    let start = prompt.rfind(pre)? + pre.len();
    let len = if post.is_empty() {
        prompt.len() - start
    } else {
        prompt[start..].find(post)?
    };
    let c = prompt[start..start + len].trim();
    (!c.is_empty()).then(|| c.to_string())
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Every `(handle, first line, last line)` a Lens marker in `text` names.
pub fn markers(text: &str) -> Vec<(String, u64, u64)> {
    let re = Regex::new(r"\[lens: elided \w+ (\d+)-(\d+) [^\]\n]*handle=([0-9a-f]{8})[^\]\n]*\]")
        .expect("marker regex");
    re.captures_iter(text)
        .filter_map(|c| Some((c[3].to_string(), c[1].parse().ok()?, c[2].parse().ok()?)))
        .collect()
}

/// The file an agent CLI saved a cut output to, when its text names one
/// (Claude Code and OpenCode: "Full output saved to: PATH"; Gemini CLI: "For
/// full output see: PATH").
pub fn saved_path(text: &str) -> Option<String> {
    let i = ["saved to: ", "full output see: "]
        .iter()
        .find_map(|k| text.find(k).map(|i| i + k.len()))?;
    let p: String = text[i..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    p.starts_with('/').then_some(p)
}

impl Agent {
    fn for_task(task: &Task) -> Agent {
        Agent {
            needs: task.needs.clone(),
            fix: task.dir.join("fix"),
            confirm: task.confirm,
            fallback: task.command.clone(),
            template: task.prompt.clone(),
        }
    }

    fn fix_line(&self, info: &str) -> String {
        format!(
            "TASK_INFO={} {}",
            quote(info),
            quote(&self.fix.display().to_string())
        )
    }

    /// A session's next action, replayed from its tool results.
    fn decide_session(&self, turn: &Turn, fallback: &[String]) -> Action {
        let mut lines = listed(&turn.prompt);
        if lines.is_empty() {
            lines = fallback.to_vec();
        }
        let mut seen = turn.tool_results.iter().map(|r| r.text.as_str());
        macro_rules! step {
            ($cmd:expr) => {
                match seen.next() {
                    None => return Action::Shell { command: $cmd },
                    Some(r) => r,
                }
            };
        }
        let mut fixed = false;
        for line in &lines {
            let r = step!(line.clone());
            if fixed || !line.ends_with(&self.fallback) {
                continue;
            }
            let mut found = self.find(r);
            for recovery in self.recoveries(r) {
                if found.is_some() {
                    break;
                }
                found = self.find(step!(recovery));
            }
            if let Some(info) = found {
                step!(self.fix_line(&info));
                fixed = true;
            }
        }
        Action::Text {
            text: if fixed {
                "Done."
            } else {
                "I could not find what the task needs."
            }
            .into(),
        }
    }

    fn find(&self, text: &str) -> Option<String> {
        self.needs.captures(text).map(|c| {
            c.get(1)
                .unwrap_or_else(|| c.get(0).expect("match"))
                .as_str()
                .to_string()
        })
    }

    /// The recoveries to try, in order, for a command whose result was `first`
    /// (the last one runs the task's command again, with no filter in front).
    fn recoveries(&self, first: &str) -> Vec<String> {
        let grep = format!("grep -E {}", quote(self.needs.as_str()));
        let mut r: Vec<String> = markers(first)
            .into_iter()
            .map(|(h, a, b)| {
                let show = format!("lens show {h} --lines {a}-{b}");
                if b.saturating_sub(a) + 1 > SHOW_LINES {
                    format!("{show} | {grep}")
                } else {
                    show
                }
            })
            .collect();
        if let Some(p) = saved_path(first) {
            r.push(format!("{grep} {}", quote(&p)));
        }
        r.push(format!("{} 2>&1 | {grep}", self.fallback));
        r
    }

    /// The next action, replaying the session from its tool results.
    fn decide(&self, turn: &Turn) -> Action {
        let results: Vec<&str> = turn.tool_results.iter().map(|r| r.text.as_str()).collect();
        let command =
            command_in(&turn.prompt, &self.template).unwrap_or_else(|| self.fallback.clone());
        let mut seen = results.iter();
        // Each step either is the next call (no result for it yet) or has its result.
        macro_rules! step {
            ($cmd:expr) => {
                match seen.next() {
                    None => return Action::Shell { command: $cmd },
                    Some(r) => *r,
                }
            };
        }
        let first = step!(command.clone());
        let mut found = self.find(first);
        for recovery in self.recoveries(first) {
            if found.is_some() {
                break;
            }
            found = self.find(step!(recovery));
        }
        let Some(info) = found else {
            return Action::Text {
                text: "I could not find what the task needs in the output.".into(),
            };
        };
        step!(self.fix_line(&info));
        if self.confirm {
            step!(command.clone());
        }
        Action::Text {
            text: format!("Done: {info}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_server::ToolResult;

    fn agent(confirm: bool) -> Agent {
        Agent {
            needs: Regex::new(r"token: ([0-9a-f]{4})").unwrap(),
            fix: PathBuf::from("/t/fix"),
            confirm,
            fallback: "sh ./m.sh".into(),
            template: "Run `{command}` here.".into(),
        }
    }

    fn turn(results: &[&str]) -> Turn {
        let mut t = Turn {
            prompt: "Run `sh ./m.sh` here.".into(),
            calls_made: results.len(),
            tool_results: results
                .iter()
                .enumerate()
                .map(|(i, r)| ToolResult {
                    id: i.to_string(),
                    text: r.to_string(),
                    is_error: false,
                })
                .collect(),
            ..Turn::default()
        };
        t.set_tools(vec![("Bash".into(), serde_json::json!({}))]);
        t
    }

    fn shell(c: &str) -> Action {
        Action::Shell { command: c.into() }
    }

    #[test]
    fn runs_the_prompts_command_then_applies_the_fix_and_confirms() {
        let a = agent(true);
        assert_eq!(a.decide(&turn(&[])), shell("sh ./m.sh"));
        assert_eq!(
            a.decide(&turn(&["x\ntoken: beef\n"])),
            shell("TASK_INFO='beef' '/t/fix'")
        );
        assert_eq!(a.decide(&turn(&["token: beef", ""])), shell("sh ./m.sh"));
        assert!(matches!(
            a.decide(&turn(&["token: beef", "", "ok"])),
            Action::Text { .. }
        ));
    }

    #[test]
    fn follows_markers_then_saved_files_then_reruns() {
        let a = agent(false);
        let view = "a\n[lens: elided stdout 2-9 (8 lines: grouped) handle=0a1b2c3d digest=3]\nb\n\
                    [lens: elided stdout 11-900 (890 lines: level) handle=0a1b2c3d]\n";
        assert_eq!(
            a.decide(&turn(&[view])),
            shell("lens show 0a1b2c3d --lines 2-9")
        );
        assert_eq!(
            a.decide(&turn(&[view, "nothing"])),
            shell("lens show 0a1b2c3d --lines 11-900 | grep -E 'token: ([0-9a-f]{4})'")
        );
        assert_eq!(
            a.decide(&turn(&[view, "nothing", "nope"])),
            shell("sh ./m.sh 2>&1 | grep -E 'token: ([0-9a-f]{4})'")
        );
        assert_eq!(
            a.decide(&turn(&[view, "nothing", "token: abcd"])),
            shell("TASK_INFO='abcd' '/t/fix'")
        );
        let cut = "Output too large (190KB). Full output saved to: /h/.claude/r/t1.txt\n\nPreview";
        assert_eq!(
            a.decide(&turn(&[cut])),
            shell("grep -E 'token: ([0-9a-f]{4})' '/h/.claude/r/t1.txt'")
        );
        // Nothing found anywhere: the agent says so and stops.
        assert!(matches!(
            a.decide(&turn(&["no", "no"])),
            Action::Text { text } if text.contains("could not find")
        ));
    }

    #[test]
    fn a_session_works_through_the_listed_commands_and_fixes_after_the_tasks() {
        let a = agent(false);
        let mut t = turn(&[]);
        t.prompt = "Work through these:\n1. `lens ls`\n2. `lens sh ./m.sh`\n3. `lens ls`\nThen: Run `lens sh ./m.sh` here.".into();
        let with = |results: &[&str]| {
            let mut x = turn(results);
            x.prompt = t.prompt.clone();
            a.decide_session(&x, &[])
        };
        assert_eq!(with(&[]), shell("lens ls"));
        assert_eq!(with(&["a b"]), shell("lens sh ./m.sh"));
        assert_eq!(
            with(&["a b", "token: beef"]),
            shell("TASK_INFO='beef' '/t/fix'")
        );
        assert_eq!(with(&["a b", "token: beef", ""]), shell("lens ls"));
        assert_eq!(
            with(&["a b", "token: beef", "", "a b"]),
            Action::Text {
                text: "Done.".into()
            }
        );
        // A view without it: the marker's lines first.
        let view = "[lens: elided stdout 1-9 (9 lines: budget) handle=0a1b2c3d]";
        assert_eq!(
            with(&["a b", view]),
            shell("lens show 0a1b2c3d --lines 1-9")
        );
    }

    #[test]
    fn the_command_is_where_the_template_puts_it() {
        let t = "Run `{command}` to see why.";
        assert_eq!(
            command_in("Run `lens --level 2 make -k` to see why.", t).as_deref(),
            Some("lens --level 2 make -k")
        );
        // An awareness block before the prompt, with spans of its own.
        let p = "Lens: `[lens: elided stdout 1-9 handle=x]` means run `lens show`.\n\nRun `make -k` to see why.";
        assert_eq!(command_in(p, t).as_deref(), Some("make -k"));
        assert_eq!(command_in("no command", t), None);
        assert_eq!(saved_path("saved to: rel/x"), None);
        assert_eq!(
            saved_path("Output too large. Showing first 8,000 and last 32,000 characters. For full output see: /h/.gemini/t/o.txt\n<untrusted_context>").as_deref(),
            Some("/h/.gemini/t/o.txt")
        );
    }
}
