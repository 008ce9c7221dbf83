//! cursor-agent: `cursor-agent -p … --output-format stream-json` prints `system`,
//! `user`, `assistant`, `tool_call` (`started` then `completed`) and a final `result`
//! event. Tool calls are the `started` events. Token usage is read from the result's
//! `usage` object when the CLI reports one (camelCase or snake_case); a session
//! without it has unknown tokens, which the report shows rather than counts as zero.

use super::{json_lines, Outcome, Tokens};

/// Reads a session's stream.
pub fn parse(text: &str) -> Outcome {
    let mut out = Outcome::default();
    for event in json_lines(text) {
        match (event["type"].as_str(), event["subtype"].as_str()) {
            (Some("tool_call"), Some("started")) => {
                out.tool_calls += 1;
                if let Some(c) = event["tool_call"]["shellToolCall"]["args"]["command"].as_str() {
                    out.commands.push(c.to_string());
                }
            }
            (Some("assistant"), _) => out.turns += 1,
            (Some("result"), _) => {
                let u = &event["usage"];
                if u.is_object() {
                    let n = |a: &str, b: &str| u[a].as_u64().or_else(|| u[b].as_u64()).unwrap_or(0);
                    out.tokens = Some(Tokens {
                        input: n("inputTokens", "input_tokens"),
                        output: n("outputTokens", "output_tokens"),
                        cache_read: n("cacheReadTokens", "cache_read_input_tokens"),
                        cache_write: n("cacheWriteTokens", "cache_creation_input_tokens"),
                    });
                }
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
        let o = parse(include_str!(
            "../../tests/fixtures/agents/cursor-stream.jsonl"
        ));
        assert_eq!(o.tool_calls, 2);
        assert_eq!(o.turns, 2);
        assert_eq!(
            o.tokens,
            Some(Tokens {
                input: 20_418,
                output: 655,
                cache_read: 31_200,
                cache_write: 0
            })
        );
    }

    #[test]
    fn no_usage_means_unknown_tokens() {
        let o = parse(
            "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"duration_ms\":1}\n",
        );
        assert_eq!(o.tokens, None);
    }
}
