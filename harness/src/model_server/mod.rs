//! A scripted model on 127.0.0.1: it plays the model for the real agent CLIs, with
//! no credential and no network, and records every request they send.
//!
//! `mod.rs` is the server (a thread per connection) and the record of what was
//! received; [`wire`] reads and writes HTTP/1.1 (keep-alive, Content-Length and
//! chunked request bodies, responses whole or as server-sent events), and
//! [`answer`] holds what every dialect shares: token counts, the record of an
//! answer, the script's answer to a turn. One file per API
//! dialect reads a request into a [`script::Turn`] (the prompt, the tools, the
//! tool results the model would read) and writes the [`script::Action`] the
//! script chose in that dialect's wire format: [`anthropic`] (Claude Code),
//! [`openai_responses`] (Codex), [`openai_chat`] (OpenCode), [`gemini`] (Gemini
//! CLI).
//! [`script`] is the deterministic model.
//!
//! Token counts are the server's own, so a CLI's accounting can be checked
//! against it: a request's input tokens are its body's bytes divided by four,
//! rounded up, and a response's output tokens are the bytes of what the model
//! "wrote" (the text, or the tool's name plus its JSON arguments) divided by four,
//! rounded up. The same numbers go out as the response's `usage`.
//!
//! A path no dialect knows is answered 404 with a JSON error and recorded (kind
//! `unknown`), so what a CLI asked for is never lost.

pub mod answer;
pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod script;
pub mod wire;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use answer::{error_json, text_of, tokens_for, Answer, Handled, Said, Usage};
pub use script::{Action, Script, ToolResult, Turn};
pub use wire::{Body, Request, Response};

/// The API dialects the server speaks.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// OpenAI Responses (`/v1/responses`).
    OpenaiResponses,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    OpenaiChat,
    /// Gemini (`/v1beta/models/{model}:streamGenerateContent`).
    Gemini,
}

/// One request and what the server made of it.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Exchange {
    /// Arrival order, from 0.
    pub seq: usize,
    /// The HTTP method.
    pub method: String,
    /// The request target (path and query).
    pub target: String,
    /// The request headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body (after chunked decoding), as text.
    pub body: String,
    /// The status the server answered.
    pub status: u16,
    /// What the request was: `turn` (a model call the script answered),
    /// `count-tokens`, `side-json` (a question the CLI asks for JSON, answered
    /// from its schema), or `unknown` (a path no dialect knows).
    pub kind: String,
    /// The dialect, when the path names one.
    pub dialect: Option<Dialect>,
    /// The model the request named.
    pub model: Option<String>,
    /// Whether the answer was streamed (server-sent events).
    pub stream: bool,
    /// The shell tool the request declared, by the name the CLI gave it.
    pub shell_tool: Option<String>,
    /// Every tool result the request carries, in conversation order.
    pub tool_results: Vec<ToolResult>,
    /// The first user message's text (the task prompt).
    pub prompt: String,
    /// What the model answered, for a turn.
    pub action: Option<Action>,
    /// The server's token counts, as reported in the response's usage.
    pub usage: Usage,
}

struct State {
    script: Script,
    exchanges: Vec<Exchange>,
    log: Option<std::fs::File>,
}

/// The running server. Dropping it stops it.
pub struct Server {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts a server on 127.0.0.1 at a free port, answering with `script`.
    pub fn start(script: Script) -> std::io::Result<Server> {
        Server::start_logged(script, None)
    }

    /// The same, appending every exchange to `log` as a JSON line.
    pub fn start_logged(script: Script, log: Option<&Path>) -> std::io::Result<Server> {
        let log = match log {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            ),
            None => None,
        };
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            script,
            exchanges: Vec::new(),
            log,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (st, sp) = (st.clone(), sp.clone());
                std::thread::spawn(move || {
                    wire::serve_connection(conn, &sp, &|req| handle(req, &st))
                });
            }
        });
        Ok(Server {
            addr,
            state,
            stop,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Everything received so far, in arrival order.
    pub fn requests(&self) -> Vec<Exchange> {
        self.state.lock().expect("server state").exchanges.clone()
    }

    /// The model calls the script answered (kind `turn`), in order.
    pub fn turns(&self) -> Vec<Exchange> {
        self.requests()
            .into_iter()
            .filter(|e| e.kind == "turn")
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// `harness model-server`: serves `script` until killed, logging every
/// exchange to `log`, the port written to `port_file` once it listens.
pub fn serve(
    script: &Path,
    log: &Path,
    port_file: Option<std::path::PathBuf>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let server = Server::start_logged(Script::load(script)?, Some(log))
        .with_context(|| format!("cannot start the model server logging to {}", log.display()))?;
    if let Some(p) = port_file {
        std::fs::write(&p, format!("{}\n", server.port()))
            .with_context(|| format!("cannot write the port to {}", p.display()))?;
    }
    eprintln!("harness: model server at {}", server.url());
    loop {
        std::thread::park();
    }
}

/// Routes a request to its dialect, records the exchange, and returns the answer.
fn handle(req: &Request, state: &Mutex<State>) -> Response {
    let path = req.path().to_string();
    let mut st = state.lock().expect("server state");
    let encoded = req
        .header("content-encoding")
        .is_some_and(|v| !v.eq_ignore_ascii_case("identity"));
    let (dialect, handled) = if encoded {
        (
            None,
            Handled::side(
                "unknown",
                Response::json(
                    415,
                    error_json("the scripted model server reads uncompressed bodies only"),
                ),
            ),
        )
    } else if let Some(h) = anthropic::handle(req, &path, &st.script) {
        (Some(Dialect::Anthropic), h)
    } else if let Some(h) = openai_responses::handle(req, &path, &st.script) {
        (Some(Dialect::OpenaiResponses), h)
    } else if let Some(h) = openai_chat::handle(req, &path, &st.script) {
        (Some(Dialect::OpenaiChat), h)
    } else if let Some(h) = gemini::handle(req, &path, &st.script) {
        (Some(Dialect::Gemini), h)
    } else {
        (
            None,
            Handled::side(
                "unknown",
                Response::json(
                    404,
                    error_json(&format!(
                        "the scripted model server does not serve {} {}",
                        req.method, req.target
                    )),
                ),
            ),
        )
    };
    let turn = handled.turn.unwrap_or_default();
    let ex = Exchange {
        seq: st.exchanges.len(),
        method: req.method.clone(),
        target: req.target.clone(),
        headers: req.headers.clone(),
        body: String::from_utf8_lossy(&req.body).into_owned(),
        status: handled.response.status,
        kind: handled.kind.to_string(),
        dialect,
        model: handled.model,
        stream: handled.stream,
        shell_tool: turn.shell_tool.clone(),
        tool_results: turn.tool_results,
        prompt: turn.prompt,
        action: handled.action,
        usage: handled.usage,
    };
    if let Some(f) = st.log.as_mut() {
        // Logging never fails the exchange.
        if let Ok(mut line) = serde_json::to_vec(&ex) {
            line.push(b'\n');
            let _ = f.write_all(&line);
        }
    }
    st.exchanges.push(ex);
    handled.response
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn send(port: u16, raw: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(raw).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn unknown_paths_get_a_json_404_and_are_recorded() {
        let srv = Server::start(Script::commands(vec![], "done")).unwrap();
        let out = send(
            srv.port(),
            b"GET /nowhere?x=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        );
        assert!(out.starts_with("HTTP/1.1 404 "), "{out}");
        assert!(out.contains("does not serve GET /nowhere?x=1"), "{out}");
        let reqs = srv.requests();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].kind, "unknown");
        assert_eq!(reqs[0].target, "/nowhere?x=1");
    }

    #[test]
    fn chunked_bodies_and_keep_alive_carry_several_requests_on_one_connection() {
        let srv = Server::start(Script::commands(vec![], "done")).unwrap();
        let body = br#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
        let (a, b) = body.split_at(20);
        let mut raw = Vec::new();
        raw.extend_from_slice(
            b"POST /v1/messages HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        for part in [a, b] {
            raw.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            raw.extend_from_slice(part);
            raw.extend_from_slice(b"\r\n");
        }
        raw.extend_from_slice(b"0\r\n\r\n");
        raw.extend_from_slice(
            format!(
                "POST /v1/messages/count_tokens HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        raw.extend_from_slice(body);
        let out = send(srv.port(), &raw);
        assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 2, "{out}");
        let reqs = srv.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].body.as_bytes(), body);
        assert_eq!(reqs[0].kind, "turn");
        assert_eq!(reqs[1].kind, "count-tokens");
        let want = tokens_for(body.len());
        assert_eq!(reqs[0].usage.input_tokens, want);
        assert!(out.contains(&format!("\"input_tokens\":{want}")), "{out}");
    }

    #[test]
    fn the_log_holds_one_json_line_per_request() {
        let dir = std::env::temp_dir().join(format!("lens-ms-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("log.jsonl");
        let _ = std::fs::remove_file(&log);
        {
            let srv = Server::start_logged(Script::commands(vec![], "done"), Some(&log)).unwrap();
            send(srv.port(), b"GET /a HTTP/1.1\r\nConnection: close\r\n\r\n");
            send(srv.port(), b"GET /b HTTP/1.1\r\nConnection: close\r\n\r\n");
        }
        let text = std::fs::read_to_string(&log).unwrap();
        let targets: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<Exchange>(l).unwrap().target)
            .collect();
        assert_eq!(targets, ["/a", "/b"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dropping_the_server_frees_its_port() {
        let srv = Server::start(Script::commands(vec![], "done")).unwrap();
        let port = srv.port();
        drop(srv);
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
