//! OpenAI Chat Completions, as OpenCode speaks it (through its bundled
//! `@ai-sdk/openai-compatible` provider): `POST /v1/chat/completions` (or
//! `/chat/completions`), streamed as server-sent events ending in
//! `data: [DONE]` when `"stream": true`.
//!
//! The model's calls are the `tool_calls` of assistant messages, the results
//! `role: "tool"` messages by `tool_call_id`. A result's text is its `content`
//! when that is a string; when it is a list of parts, their texts joined with
//! `\n`. The prompt is the first user message's text. A usage chunk is sent when
//! the request asks for one (`stream_options.include_usage`).

use serde_json::{json, Value};

use super::answer::{declared, text_of, Answer, Handled, Said};
use super::script::{Script, ToolResult, Turn};
use super::wire::{Request, Response};

/// Answers the paths this dialect serves; `None` for any other.
pub fn handle(req: &Request, path: &str, script: &Script) -> Option<Handled> {
    match (req.method.as_str(), path) {
        ("POST", "/v1/chat/completions" | "/chat/completions") => Some(chat(req, script)),
        _ => None,
    }
}

/// Reads a Chat Completions request into a turn.
pub fn read_turn(body: &Value) -> Turn {
    let mut turn = Turn::default();
    turn.set_tools(declared(
        &body["tools"],
        "/function/name",
        "/function/parameters",
    ));
    let empty = Vec::new();
    let messages = body["messages"].as_array().unwrap_or(&empty);
    if let Some(first) = messages.iter().find(|m| m["role"] == "user") {
        turn.prompt = text_of(&first["content"]);
    }
    for m in messages {
        match m["role"].as_str() {
            Some("assistant") => {
                turn.calls_made += m["tool_calls"].as_array().map_or(0, Vec::len);
            }
            Some("tool") => turn.tool_results.push(ToolResult {
                id: m["tool_call_id"].as_str().unwrap_or("").to_string(),
                text: text_of(&m["content"]),
                is_error: false,
            }),
            _ => {}
        }
    }
    turn
}

fn chat(req: &Request, script: &Script) -> Handled {
    let a = Answer::read(req, script, read_turn);
    let n = a.n();
    let (call, text, finish) = match &a.said {
        Said::Call { name, args } => (
            Some(
                json!({"id": format!("call_scripted_{n}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}}),
            ),
            None,
            "tool_calls",
        ),
        Said::Text(text) => (None, Some(text.clone()), "stop"),
    };
    let (usage, model) = (&a.usage, &a.model);
    let usage_json = json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    });
    let id = format!("chatcmpl-scripted-{n}");
    let response = if a.stream {
        let chunk = |choices: Value| json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": choices});
        let mut delta = json!({"role": "assistant"});
        match (&call, &text) {
            (Some(c), _) => {
                let mut c = c.clone();
                c["index"] = json!(0);
                delta["content"] = Value::Null;
                delta["tool_calls"] = json!([c]);
            }
            (None, Some(t)) => delta["content"] = json!(t),
            (None, None) => {}
        }
        let mut events = vec![
            (
                None,
                chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}])).to_string(),
            ),
            (
                None,
                chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}])).to_string(),
            ),
        ];
        if a.body["stream_options"]["include_usage"] == true {
            let mut u = chunk(json!([]));
            u["usage"] = usage_json;
            events.push((None, u.to_string()));
        }
        events.push((None, "[DONE]".to_string()));
        Response::sse(events)
    } else {
        let mut message = json!({"role": "assistant", "content": text});
        if let Some(c) = call {
            message["tool_calls"] = json!([c]);
        }
        Response::json(
            200,
            json!({"id": id, "object": "chat.completion", "created": 0, "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage_json}),
        )
    };
    a.handled(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_server::{tokens_for, Body};

    #[test]
    fn calls_and_results_are_read_from_the_messages() {
        let body = json!({
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"properties": {"command": {"type": "string"}}}}}],
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": [{"type": "text", "text": "task"}]},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "hi\n"},
            ]
        });
        let t = read_turn(&body);
        assert_eq!(t.prompt, "task");
        assert_eq!(t.shell_tool.as_deref(), Some("bash"));
        assert_eq!(t.calls_made, 1);
        assert_eq!(
            t.tool_results,
            vec![ToolResult {
                id: "c1".into(),
                text: "hi\n".into(),
                is_error: false
            }]
        );
    }

    #[test]
    fn a_streamed_call_ends_with_usage_when_asked_and_done() {
        let body = json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"properties": {"command": {"type": "string"}}}}}],
            "messages": [{"role": "user", "content": "go"}]});
        let raw = serde_json::to_vec(&body).unwrap();
        let req = Request {
            method: "POST".into(),
            target: "/v1/chat/completions".into(),
            headers: vec![],
            body: raw.clone(),
        };
        let h = handle(&req, req.path(), &Script::commands(vec!["ls".into()], "d")).unwrap();
        let Body::Sse(events) = h.response.body else {
            panic!("not streamed")
        };
        let data: Vec<&str> = events.iter().map(|(_, d)| d.as_str()).collect();
        assert_eq!(data.last(), Some(&"[DONE]"));
        let first: Value = serde_json::from_str(data[0]).unwrap();
        let call = &first["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(call["function"]["arguments"], r#"{"command":"ls"}"#);
        let usage: Value = serde_json::from_str(data[2]).unwrap();
        assert_eq!(usage["usage"]["prompt_tokens"], tokens_for(raw.len()));
    }
}
