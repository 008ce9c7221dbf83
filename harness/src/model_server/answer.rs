//! What a dialect makes of a request, in terms all four share: the server's own
//! token counts, the record of a side answer or a model call, and the script's
//! answer to a turn put as a shell call (tool name and arguments) or a text, the
//! form every dialect then writes in its own wire format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::script::{shell_arguments, Action, Script, Turn};
use super::wire::{Request, Response};

/// Token counts the server computed for one exchange (see the module doc).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// The request body's bytes / 4, rounded up.
    pub input_tokens: u64,
    /// The bytes the model wrote / 4, rounded up.
    pub output_tokens: u64,
}

/// The text of an OpenAI message content: a string, or the `text` of each
/// part joined by newlines (Chat Completions and Responses alike).
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The tools a request declares, as (name, parameter schema) pairs: each entry
/// of the `tools` array with a string at the JSON pointer `name`, its schema at
/// `schema` (`Null` when absent). Anthropic and OpenAI put them at different
/// places in each entry.
pub fn declared(tools: &Value, name: &str, schema: &str) -> Vec<(String, Value)> {
    tools
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| {
                    let n = t.pointer(name)?.as_str()?.to_string();
                    Some((n, t.pointer(schema).cloned().unwrap_or(Value::Null)))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The server's token count for `bytes` bytes.
pub fn tokens_for(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

impl Usage {
    /// The counts for answering `req` with `written` bytes of model output.
    pub fn of(req: &Request, written: usize) -> Usage {
        Usage {
            input_tokens: tokens_for(req.body.len()),
            output_tokens: tokens_for(written),
        }
    }
}

/// What a dialect's handler returns: the response and what to record of it.
pub struct Handled {
    /// The response.
    pub response: Response,
    /// The exchange's kind (`turn`, `count-tokens`, …).
    pub kind: &'static str,
    /// The model named in the request.
    pub model: Option<String>,
    /// Whether the answer streams.
    pub stream: bool,
    /// The turn as read from the request, for a model call.
    pub turn: Option<Turn>,
    /// The script's answer, for a model call.
    pub action: Option<Action>,
    /// The token counts reported.
    pub usage: Usage,
}

impl Handled {
    /// A side answer that is not a model call.
    pub fn side(kind: &'static str, response: Response) -> Handled {
        Handled {
            response,
            kind,
            model: None,
            stream: false,
            turn: None,
            action: None,
            usage: Usage::default(),
        }
    }

    /// A token count answer: `{key: n}` for the request's size, recorded as
    /// `count-tokens` with the model it named.
    pub fn count_tokens(req: &Request, key: &str, model: Option<String>) -> Handled {
        let n = tokens_for(req.body.len());
        let mut h = Handled::side(
            "count-tokens",
            Response::json(200, serde_json::json!({ key: n })),
        );
        h.model = model;
        h.usage.input_tokens = n;
        h
    }
}

/// What the model "wrote" for a turn, before a dialect puts it on the wire.
#[derive(Debug, Clone)]
pub enum Said {
    /// A call of the shell tool by the name the request declared it under.
    Call {
        /// The tool's name.
        name: String,
        /// Its arguments, shaped by the tool's schema.
        args: Value,
    },
    /// A final text.
    Text(String),
}

/// The script's answer to one model call.
pub struct Answer {
    /// The request body, as JSON.
    pub body: Value,
    /// The turn as the dialect read it.
    pub turn: Turn,
    /// The script's choice.
    pub action: Action,
    /// That choice as the model writes it.
    pub said: Said,
    /// The model named.
    pub model: String,
    /// Whether the answer streams.
    pub stream: bool,
    /// The server's counts: the request's bytes in, what was said out.
    pub usage: Usage,
}

impl Answer {
    /// Reads `req` with the dialect's `read_turn` and asks the script; the model
    /// and streaming come from the body's `model` and `stream` fields.
    pub fn read(req: &Request, script: &Script, read_turn: fn(&Value) -> Turn) -> Answer {
        let body = req.json();
        let turn = read_turn(&body);
        let model = body["model"].as_str().unwrap_or("scripted").to_string();
        let stream = body["stream"].as_bool().unwrap_or(false);
        Answer::new(req, body, turn, script, model, stream)
    }

    /// The script's answer to `turn`, read from `req` by the caller.
    pub fn new(
        req: &Request,
        body: Value,
        turn: Turn,
        script: &Script,
        model: String,
        stream: bool,
    ) -> Answer {
        let action = script.answer(&turn);
        let (said, written) = match &action {
            Action::Shell { command } => {
                let args = shell_arguments(&turn.shell_schema, command, turn.calls_made);
                let name = turn.shell_tool.clone().unwrap_or_default();
                let written = name.len() + args.to_string().len();
                (Said::Call { name, args }, written)
            }
            Action::Text { text } => (Said::Text(text.clone()), text.len()),
        };
        Answer {
            body,
            usage: Usage::of(req, written),
            turn,
            action,
            said,
            model,
            stream,
        }
    }

    /// This call's number in the conversation, from 1: the ids the dialects make.
    pub fn n(&self) -> usize {
        self.turn.calls_made + 1
    }

    /// The record of this model call, answered with `response`.
    pub fn handled(self, response: Response) -> Handled {
        Handled {
            response,
            kind: "turn",
            model: Some(self.model),
            stream: self.stream,
            turn: Some(self.turn),
            action: Some(self.action),
            usage: self.usage,
        }
    }
}

/// `{"error": {"type": "not_found", "message": …}}`, the shape all four dialects
/// accept as an error body.
pub fn error_json(message: &str) -> Value {
    serde_json::json!({"error": {"type": "not_found_error", "code": 404, "message": message}})
}
