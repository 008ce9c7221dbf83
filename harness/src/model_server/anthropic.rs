//! Anthropic Messages, as Claude Code speaks it: `POST /v1/messages` (streamed
//! as server-sent events when the request says `"stream": true`, whole
//! otherwise) and `POST /v1/messages/count_tokens`.
//!
//! A tool result's text is its `content` when that is a string; when it is a
//! list of blocks, the text blocks' texts joined with `\n` (other blocks, such as
//! images, are left out).

use serde_json::{json, Value};

use super::answer::{declared, Answer, Handled, Said};
use super::script::{Script, ToolResult, Turn};
use super::wire::{Request, Response};

/// Answers the paths this dialect serves; `None` for any other.
pub fn handle(req: &Request, path: &str, script: &Script) -> Option<Handled> {
    match (req.method.as_str(), path) {
        ("POST", "/v1/messages") => Some(messages(req, script)),
        ("POST", "/v1/messages/count_tokens") => Some(Handled::count_tokens(
            req,
            "input_tokens",
            req.json()["model"].as_str().map(String::from),
        )),
        _ => None,
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Reads a Messages request into a turn.
pub fn read_turn(body: &Value) -> Turn {
    let mut turn = Turn::default();
    turn.set_tools(declared(&body["tools"], "/name", "/input_schema"));
    let empty = Vec::new();
    let messages = body["messages"].as_array().unwrap_or(&empty);
    if let Some(first) = messages.iter().find(|m| m["role"] == "user") {
        turn.prompt = text_of(&first["content"]);
    }
    for m in messages {
        let Some(blocks) = m["content"].as_array() else {
            continue;
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("tool_use") if m["role"] == "assistant" => turn.calls_made += 1,
                Some("tool_result") => turn.tool_results.push(ToolResult {
                    id: b["tool_use_id"].as_str().unwrap_or("").to_string(),
                    text: text_of(&b["content"]),
                    is_error: b["is_error"].as_bool().unwrap_or(false),
                }),
                _ => {}
            }
        }
    }
    turn
}

fn messages(req: &Request, script: &Script) -> Handled {
    let a = Answer::read(req, script, read_turn);
    let (block, stop_reason) = match &a.said {
        Said::Call { name, args } => (
            json!({"type": "tool_use", "id": format!("toolu_scripted_{}", a.n()), "name": name, "input": args}),
            "tool_use",
        ),
        Said::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
    };
    let (usage, model) = (&a.usage, &a.model);
    let usage_json = json!({
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    });
    let id = format!("msg_scripted_{}", a.n());
    let response = if a.stream {
        let mut events = Vec::new();
        let mut ev =
            |name: &str, data: Value| events.push((Some(name.to_string()), data.to_string()));
        let mut start_usage = usage_json.clone();
        start_usage["output_tokens"] = json!(0);
        ev(
            "message_start",
            json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
        );
        match &a.said {
            Said::Call { .. } => {
                let mut start = block.clone();
                let input = start["input"].take();
                start["input"] = json!({});
                ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": start}),
                );
                ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
                );
            }
            Said::Text(text) => {
                ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                );
                ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
                );
            }
        }
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        );
        ev(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": usage_json}),
        );
        ev("message_stop", json!({"type": "message_stop"}));
        Response::sse(events)
    } else {
        Response::json(
            200,
            json!({"id": id, "type": "message", "role": "assistant", "model": model, "content": [block], "stop_reason": stop_reason, "stop_sequence": null, "usage": usage_json}),
        )
    };
    a.handled(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_server::{tokens_for, Action, Body};

    #[test]
    fn tool_results_and_calls_are_read_from_the_conversation() {
        let body = json!({
            "tools": [{"name": "Bash", "input_schema": {"properties": {"command": {}}}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "ctx"}, {"type": "text", "text": "task"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "alpha\nbeta"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": [{"type": "text", "text": "Exit code 1"}]}]},
            ]
        });
        let t = read_turn(&body);
        assert_eq!(t.prompt, "ctx\ntask");
        assert_eq!(t.shell_tool.as_deref(), Some("Bash"));
        assert_eq!(t.calls_made, 2);
        assert_eq!(
            t.tool_results,
            vec![
                ToolResult {
                    id: "t1".into(),
                    text: "alpha\nbeta".into(),
                    is_error: false
                },
                ToolResult {
                    id: "t2".into(),
                    text: "Exit code 1".into(),
                    is_error: true
                },
            ]
        );
    }

    #[test]
    fn a_streamed_tool_call_carries_the_command_and_the_servers_usage() {
        let body = json!({"model": "m", "stream": true, "tools": [{"name": "Bash", "input_schema": {"properties": {"command": {}}}}], "messages": [{"role": "user", "content": "go"}]});
        let raw = serde_json::to_vec(&body).unwrap();
        let req = Request {
            method: "POST".into(),
            target: "/v1/messages".into(),
            headers: vec![],
            body: raw.clone(),
        };
        let h = handle(
            &req,
            "/v1/messages",
            &Script::commands(vec!["ls -la".into()], "done"),
        )
        .unwrap();
        let Body::Sse(events) = h.response.body else {
            panic!("not streamed")
        };
        let all: String = events.iter().map(|(_, d)| d.as_str()).collect();
        assert!(all.contains(r#"\"command\":\"ls -la\""#), "{all}");
        assert!(
            all.contains(&format!("\"input_tokens\":{}", tokens_for(raw.len()))),
            "{all}"
        );
        assert_eq!(events.last().unwrap().0.as_deref(), Some("message_stop"));
        assert_eq!(
            h.action,
            Some(Action::Shell {
                command: "ls -la".into()
            })
        );
    }
}
