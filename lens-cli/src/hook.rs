//! `lens hook <agent>`: the agent's hook event on stdin, the answer on stdout.

use std::io::{self, Read};
use std::time::SystemTime;

use crate::{agents, now_ms, paths, runlog};

/// `lens hook <agent>`: answers the event on stdin. Whatever goes wrong, the
/// agent gets no rewrite and its command runs as it was; the answer and the
/// command seen are logged for `lens stats`.
pub(crate) fn cmd(agent: agents::Agent) -> i32 {
    let mut input = String::new();
    let read = io::stdin().take(1 << 20).read_to_string(&mut input).is_ok();
    let event: Option<serde_json::Value> = serde_json::from_str(&input).ok();
    let command = event
        .as_ref()
        .and_then(|e| e.pointer("/tool_input/command"))
        .and_then(|c| c.as_str())
        .map(String::from);
    let answer = match (read, agent) {
        (false, agents::Agent::Gemini) => Some("{}".to_string()),
        (false, _) => None,
        (true, agents::Agent::Gemini) => Some(agents::gemini::answer(&input)),
        (true, _) => {
            let cwd = event
                .as_ref()
                .and_then(|e| e.get("cwd"))
                .and_then(|c| c.as_str())
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
            let rules = agents::claude::Rules::load(&paths::home(), &cwd);
            agents::claude::answer(&input, &rules)
        }
    };
    if let Some(a) = &answer {
        println!("{a}");
    }
    if let Some(command) = command {
        let rewritten = answer.as_deref().is_some_and(|a| a.contains("lens "));
        runlog::append(
            &paths::log_dir(),
            &runlog::Record::hook(now_ms(SystemTime::now()), agent.name(), command, rewritten),
        );
    }
    0
}
