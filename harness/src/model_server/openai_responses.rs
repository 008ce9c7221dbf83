//! OpenAI Responses, as Codex CLI speaks it: `POST /v1/responses` (or
//! `/responses`), streamed as server-sent events when `"stream": true`.
//!
//! Codex sends the whole conversation in `input` every time (`store: false`): the
//! model's calls are `function_call` items (also `custom_tool_call` and
//! `local_shell_call`), the results `function_call_output` items by `call_id`. A
//! result's text is its `output` when that is a string; when it is a list of
//! content items, their texts joined with `\n`. The prompt is the text of the
//! user messages before the first call, joined with `\n`.

use serde_json::{json, Value};

use super::answer::{declared, text_of, Answer, Handled, Said};
use super::script::{Script, ToolResult, Turn};
use super::wire::{Request, Response};

/// Answers the paths this dialect serves; `None` for any other.
pub fn handle(req: &Request, path: &str, script: &Script) -> Option<Handled> {
    match (req.method.as_str(), path) {
        ("POST", "/v1/responses" | "/responses") => Some(responses(req, script)),
        _ => None,
    }
}

/// Reads a Responses request into a turn.
pub fn read_turn(body: &Value) -> Turn {
    let mut turn = Turn::default();
    turn.set_tools(declared(&body["tools"], "/name", "/parameters"));
    let items = match &body["input"] {
        Value::Array(items) => items.clone(),
        Value::String(s) => vec![json!({"type": "message", "role": "user", "content": s})],
        _ => Vec::new(),
    };
    let mut prompt = Vec::new();
    for item in &items {
        match item["type"].as_str() {
            Some("function_call" | "custom_tool_call" | "local_shell_call") => turn.calls_made += 1,
            Some(
                "function_call_output" | "custom_tool_call_output" | "local_shell_call_output",
            ) => turn.tool_results.push(ToolResult {
                id: item["call_id"].as_str().unwrap_or("").to_string(),
                text: text_of(&item["output"]),
                is_error: false,
            }),
            // A message item may come without a type.
            Some("message") | None if item["role"] == "user" && turn.calls_made == 0 => {
                prompt.push(text_of(&item["content"]))
            }
            _ => {}
        }
    }
    turn.prompt = prompt.join("\n");
    turn
}

fn responses(req: &Request, script: &Script) -> Handled {
    let a = Answer::read(req, script, read_turn);
    let n = a.n();
    let item = match &a.said {
        Said::Call { name, args } => {
            json!({"type": "function_call", "id": format!("fc_scripted_{n}"), "call_id": format!("call_scripted_{n}"), "name": name, "arguments": args.to_string(), "status": "completed"})
        }
        Said::Text(text) => {
            json!({"type": "message", "id": format!("msg_scripted_{n}"), "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]})
        }
    };
    let (usage, model) = (&a.usage, &a.model);
    let usage_json = json!({
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    });
    let id = format!("resp_scripted_{n}");
    let done = json!({"id": id, "object": "response", "status": "completed", "model": model, "output": [item], "usage": usage_json});
    let response = if a.stream {
        let ev = |name: &str, mut data: Value| {
            data["type"] = json!(name);
            (Some(name.to_string()), data.to_string())
        };
        Response::sse(vec![
            ev(
                "response.created",
                json!({"response": {"id": id, "object": "response", "status": "in_progress", "model": model, "output": []}}),
            ),
            ev(
                "response.output_item.added",
                json!({"output_index": 0, "item": item}),
            ),
            ev(
                "response.output_item.done",
                json!({"output_index": 0, "item": item}),
            ),
            ev("response.completed", json!({"response": done})),
        ])
    } else {
        Response::json(200, done)
    };
    a.handled(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_server::{tokens_for, Body};

    #[test]
    fn calls_results_and_the_prompt_are_read_from_the_input_items() {
        let body = json!({
            "tools": [{"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {"type": "string"}}}}],
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "env"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "task"}]},
                {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"},
                {"type": "function_call_output", "call_id": "c1", "output": "Process exited with code 0\nOutput:\nhi\n"},
            ]
        });
        let t = read_turn(&body);
        assert_eq!(t.prompt, "env\ntask");
        assert_eq!(t.shell_tool.as_deref(), Some("exec_command"));
        assert_eq!(t.calls_made, 1);
        assert_eq!(t.tool_results.len(), 1);
        assert_eq!(t.tool_results[0].id, "c1");
        assert_eq!(
            t.tool_results[0].text,
            "Process exited with code 0\nOutput:\nhi\n"
        );
    }

    #[test]
    fn a_streamed_call_puts_the_command_in_cmd_and_ends_with_completed() {
        let body = json!({"model": "m", "stream": true, "tools": [{"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {"type": "string"}}}}], "input": "go"});
        let raw = serde_json::to_vec(&body).unwrap();
        let req = Request {
            method: "POST".into(),
            target: "/v1/responses".into(),
            headers: vec![],
            body: raw.clone(),
        };
        let h = handle(
            &req,
            "/v1/responses",
            &Script::commands(vec!["seq 3".into()], "d"),
        )
        .unwrap();
        let Body::Sse(events) = h.response.body else {
            panic!("not streamed")
        };
        let (name, last) = events.last().unwrap();
        assert_eq!(name.as_deref(), Some("response.completed"));
        let last: Value = serde_json::from_str(last).unwrap();
        let item = &last["response"]["output"][0];
        assert_eq!(item["arguments"], r#"{"cmd":"seq 3"}"#);
        assert_eq!(
            last["response"]["usage"]["input_tokens"],
            tokens_for(raw.len())
        );
    }
}
