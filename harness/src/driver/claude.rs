//! Claude Code: `claude -p … --output-format stream-json --verbose` prints one JSON
//! event per line: `system` (init), `assistant` and `user` messages, and a final
//! `result` with `num_turns` and `usage` (`input_tokens`, `output_tokens`,
//! `cache_read_input_tokens`, `cache_creation_input_tokens`). Tool calls are the
//! `tool_use` blocks of assistant messages.

use super::{json_lines, Outcome, Tokens};

/// Reads a session's stream.
pub fn parse(text: &str) -> Outcome {
    let mut out = Outcome::default();
    for event in json_lines(text) {
        match event["type"].as_str() {
            Some("assistant") => {
                let blocks = event["message"]["content"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
                    out.tool_calls += 1;
                    if let Some(c) = b["input"]["command"].as_str() {
                        out.commands.push(c.to_string());
                    }
                }
            }
            Some("result") => {
                let u = &event["usage"];
                let n = |k: &str| u[k].as_u64().unwrap_or(0);
                out.tokens = Some(Tokens {
                    input: n("input_tokens"),
                    output: n("output_tokens"),
                    cache_read: n("cache_read_input_tokens"),
                    cache_write: n("cache_creation_input_tokens"),
                });
                out.turns = event["num_turns"].as_u64().unwrap_or(0);
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_recorded_session() {
        let text = include_str!("../../tests/fixtures/agents/claude-stream.jsonl");
        let o = parse(text);
        assert_eq!(o.tool_calls, 3);
        assert_eq!(o.turns, 4);
        assert_eq!(
            o.tokens,
            Some(Tokens {
                input: 31,
                output: 812,
                cache_read: 48_211,
                cache_write: 9_730
            })
        );
    }

    #[test]
    fn a_session_that_never_finished_has_no_tokens() {
        let o = parse("{\"type\":\"system\",\"subtype\":\"init\"}\n");
        assert_eq!(o.tokens, None);
    }
}
