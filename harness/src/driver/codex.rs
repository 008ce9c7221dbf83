//! Codex: `codex exec --json` prints JSONL: `thread.started`, `turn.started`,
//! `item.started`/`item.updated`/`item.completed` (items of type
//! `command_execution`, `file_change`, `agent_message`, …) and `turn.completed`
//! with `usage` (`input_tokens`, `cached_input_tokens`, `output_tokens`), or
//! `turn.failed`. Tool calls are completed command and file-change items; usage is
//! summed over turns (cached input is part of input_tokens, so it is split out).

use super::{json_lines, Outcome, Tokens};

/// Reads a session's stream.
pub fn parse(text: &str) -> Outcome {
    let mut out = Outcome::default();
    let mut tokens: Option<Tokens> = None;
    for event in json_lines(text) {
        match event["type"].as_str() {
            Some("item.completed") => {
                let kind = event["item"]["type"].as_str().unwrap_or("");
                if matches!(
                    kind,
                    "command_execution" | "file_change" | "mcp_tool_call" | "web_search"
                ) {
                    out.tool_calls += 1;
                }
                if let Some(c) = event["item"]["command"].as_str() {
                    out.commands.push(c.to_string());
                }
            }
            Some("turn.completed") => {
                out.turns += 1;
                let u = &event["usage"];
                let n = |k: &str| u[k].as_u64().unwrap_or(0);
                let t = tokens.get_or_insert_with(Tokens::default);
                let cached = n("cached_input_tokens");
                t.input += n("input_tokens").saturating_sub(cached);
                t.cache_read += cached;
                t.output += n("output_tokens");
            }
            Some("turn.failed") => out.turns += 1,
            _ => {}
        }
    }
    out.tokens = tokens;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_recorded_session() {
        let o = parse(include_str!("../../tests/fixtures/agents/codex-exec.jsonl"));
        assert_eq!(o.tool_calls, 3);
        assert_eq!(o.turns, 1);
        assert_eq!(
            o.tokens,
            Some(Tokens {
                input: 6_112,
                output: 1_204,
                cache_read: 24_576,
                cache_write: 0
            })
        );
    }
}
