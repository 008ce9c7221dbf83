//! Gemini, as Gemini CLI speaks it: `POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent?alt=sse` (server-sent events, one `data:` line per
//! chunk) and `:countTokens`.
//!
//! The conversation is `contents`: the model's calls are `functionCall` parts, the
//! results `functionResponse` parts, matched by the `id` the CLI gives each call
//! (the CLI makes the ids; the server sends none). A result's text is its
//! `response.output` when that is a string, else `response.error` (flagged as an
//! error), else the `response` object as JSON. The prompt is the text parts of the
//! first user content, joined with `\n`.
//!
//! A request that asks for JSON (`generationConfig.responseMimeType` of
//! `application/json` with a schema: Gemini CLI's model router and its other
//! side questions) is answered with the smallest value the schema accepts (the
//! first enum value, the minimum of a number, `"scripted"` for a string), not by
//! the script.

use serde_json::{json, Map, Value};

use super::answer::{Answer, Handled, Said, Usage};
use super::script::{Script, ToolResult, Turn};
use super::wire::{Request, Response};

/// Answers the paths this dialect serves; `None` for any other.
pub fn handle(req: &Request, path: &str, script: &Script) -> Option<Handled> {
    if req.method != "POST" {
        return None;
    }
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    let (model, method) = rest.rsplit_once(':')?;
    match method {
        "generateContent" => Some(generate(req, model, script, false)),
        "streamGenerateContent" => Some(generate(req, model, script, true)),
        "countTokens" => Some(Handled::count_tokens(
            req,
            "totalTokens",
            Some(model.to_string()),
        )),
        _ => None,
    }
}

/// Reads a Gemini request into a turn.
pub fn read_turn(body: &Value) -> Turn {
    let mut turn = Turn::default();
    let mut tools = Vec::new();
    for t in body["tools"].as_array().into_iter().flatten() {
        for d in t["functionDeclarations"].as_array().into_iter().flatten() {
            if let Some(name) = d["name"].as_str() {
                let schema = if d["parametersJsonSchema"].is_null() {
                    d["parameters"].clone()
                } else {
                    d["parametersJsonSchema"].clone()
                };
                tools.push((name.to_string(), schema));
            }
        }
    }
    turn.set_tools(tools);
    let empty = Vec::new();
    let contents = body["contents"].as_array().unwrap_or(&empty);
    if let Some(first) = contents.iter().find(|c| c["role"] == "user") {
        turn.prompt = first["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
    }
    for c in contents {
        for p in c["parts"].as_array().into_iter().flatten() {
            if !p["functionCall"].is_null() && c["role"] == "model" {
                turn.calls_made += 1;
            }
            let r = &p["functionResponse"];
            if r.is_null() {
                continue;
            }
            let id = r["id"].as_str().or(r["name"].as_str()).unwrap_or("");
            let resp = &r["response"];
            let (text, is_error) = match (resp["output"].as_str(), resp["error"].as_str()) {
                (Some(o), _) => (o.to_string(), false),
                (None, Some(e)) => (e.to_string(), true),
                (None, None) => (resp.to_string(), false),
            };
            turn.tool_results.push(ToolResult {
                id: id.to_string(),
                text,
                is_error,
            });
        }
    }
    turn
}

/// The smallest value `schema` accepts.
pub fn minimal_value(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let ty = schema["type"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase();
    match ty.as_str() {
        "string" => json!("scripted"),
        "integer" | "number" => schema["minimum"].as_f64().map_or(json!(1), |m| {
            if ty == "integer" {
                json!(m.ceil() as i64)
            } else {
                json!(m)
            }
        }),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => {
            let mut o = Map::new();
            for req in schema["required"].as_array().into_iter().flatten() {
                if let Some(k) = req.as_str() {
                    o.insert(k.to_string(), minimal_value(&schema["properties"][k]));
                }
            }
            Value::Object(o)
        }
    }
}

fn generate(req: &Request, model: &str, script: &Script, stream: bool) -> Handled {
    let body = req.json();
    let turn = read_turn(&body);
    let config = &body["generationConfig"];
    let schema = if config["responseJsonSchema"].is_null() {
        &config["responseSchema"]
    } else {
        &config["responseJsonSchema"]
    };
    if config["responseMimeType"] == "application/json" {
        let text = minimal_value(schema).to_string();
        let usage = Usage::of(req, text.len());
        return Handled {
            response: reply(model, json!({"text": text}), &usage, stream),
            kind: "side-json",
            model: Some(model.to_string()),
            stream,
            turn: Some(turn),
            action: None,
            usage,
        };
    }
    let a = Answer::new(req, body, turn, script, model.to_string(), stream);
    let part = match &a.said {
        Said::Call { name, args } => json!({"functionCall": {"name": name, "args": args}}),
        Said::Text(text) => json!({"text": text}),
    };
    let response = reply(model, part, &a.usage, stream);
    a.handled(response)
}

/// One candidate holding `part`, whole or as a single server-sent event.
fn reply(model: &str, part: Value, usage: &Usage, stream: bool) -> Response {
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
        },
        "modelVersion": model,
    });
    if stream {
        Response::sse(vec![(None, chunk.to_string())])
    } else {
        Response::json(200, chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_server::Body;

    #[test]
    fn calls_and_results_are_read_from_the_contents() {
        let body = json!({
            "tools": [{"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema": {"properties": {"command": {"type": "string"}}}}]}],
            "contents": [
                {"role": "user", "parts": [{"text": "ctx"}, {"text": "task"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}, "id": "r1"}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "id": "r1", "response": {"output": "Output: hi"}}}]},
                {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}, "id": "r2"}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "id": "r2", "response": {"error": "denied"}}}]},
            ]
        });
        let t = read_turn(&body);
        assert_eq!(t.prompt, "ctx\ntask");
        assert_eq!(t.calls_made, 2);
        assert_eq!(t.shell_tool.as_deref(), Some("run_shell_command"));
        assert_eq!(
            t.tool_results,
            vec![
                ToolResult {
                    id: "r1".into(),
                    text: "Output: hi".into(),
                    is_error: false
                },
                ToolResult {
                    id: "r2".into(),
                    text: "denied".into(),
                    is_error: true
                },
            ]
        );
    }

    #[test]
    fn a_json_question_gets_the_smallest_answer_its_schema_accepts() {
        let schema = json!({"type": "object", "required": ["why", "score", "who"], "properties": {
            "why": {"type": "string"},
            "score": {"type": "integer", "minimum": 1, "maximum": 100},
            "who": {"type": "string", "enum": ["user", "model"]},
        }});
        assert_eq!(
            minimal_value(&schema),
            json!({"why": "scripted", "score": 1, "who": "user"})
        );
    }

    #[test]
    fn the_model_and_method_come_from_the_path() {
        let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
        let req = Request {
            method: "POST".into(),
            target: "/v1beta/models/gemini-x:streamGenerateContent?alt=sse".into(),
            headers: vec![],
            body: serde_json::to_vec(&body).unwrap(),
        };
        let s = Script::commands(vec![], "done");
        let h = handle(&req, req.path(), &s).unwrap();
        assert_eq!(h.model.as_deref(), Some("gemini-x"));
        assert!(h.stream);
        let Body::Sse(events) = h.response.body else {
            panic!("not streamed")
        };
        assert!(events[0].1.contains(r#""text":"done""#), "{events:?}");
        assert!(handle(&req, "/v1beta/models/gemini-x:embedContent", &s).is_none());
    }
}
