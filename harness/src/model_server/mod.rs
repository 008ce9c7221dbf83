//! A scripted model on 127.0.0.1: it plays the model for the real agent CLIs, with
//! no credential and no network, and records every request they send.
//!
//! `mod.rs` is the HTTP/1.1 server (std::net only: a thread per connection,
//! keep-alive, Content-Length and chunked request bodies, responses whole or as
//! server-sent events) and the record of what was received. One file per API
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

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod script;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use script::{Action, Script, ToolResult, Turn};

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
pub(crate) fn text_of(v: &Value) -> String {
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

/// The server's token count for `bytes` bytes.
pub fn tokens_for(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
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

/// A parsed HTTP request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method.
    pub method: String,
    /// The target as sent (path and query).
    pub target: String,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body, chunked encoding removed.
    pub body: Vec<u8>,
}

impl Request {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// The query string, empty without one.
    pub fn query(&self) -> &str {
        self.target.split_once('?').map_or("", |(_, q)| q)
    }

    /// A header's value, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, `Null` when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// A response body: whole, or a stream of server-sent events.
#[derive(Debug, Clone)]
pub enum Body {
    /// A JSON document.
    Json(Value),
    /// Server-sent events: (event name, data) each.
    Sse(Vec<(Option<String>, String)>),
}

/// What a dialect answers.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// The body.
    pub body: Body,
}

impl Response {
    /// A JSON answer with a status.
    pub fn json(status: u16, v: Value) -> Response {
        Response {
            status,
            body: Body::Json(v),
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
                std::thread::spawn(move || serve_connection(conn, &st, &sp));
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

/// How long a connection may sit idle between checks of the stop flag.
const POLL: Duration = Duration::from_millis(200);

fn serve_connection(conn: TcpStream, state: &Mutex<State>, stop: &AtomicBool) {
    let _ = conn.set_read_timeout(Some(POLL));
    let _ = conn.set_nodelay(true);
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    loop {
        let req = match read_request(&mut reader, &mut out, stop) {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => return,
        };
        let close = req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let response = handle(&req, state);
        if write_response(&mut out, &response, close).is_err() || close {
            return;
        }
    }
}

/// Reads one request; `None` when the peer closed or the server is stopping.
fn read_request(
    r: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
    stop: &AtomicBool,
) -> std::io::Result<Option<Request>> {
    let Some(line) = read_line(r, stop)? else {
        return Ok(None);
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    let (method, target) = (method.to_string(), target.to_string());
    let mut headers = Vec::new();
    loop {
        let Some(h) = read_line(r, stop)? else {
            return Ok(None);
        };
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    if get("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        out.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        loop {
            let Some(size_line) = read_line(r, stop)? else {
                return Ok(None);
            };
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| std::io::Error::other("bad chunk size"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while let Some(t) = read_line(r, stop)? {
                    if t.is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            read_exact(r, &mut body[start..], stop)?;
            read_line(r, stop)?;
        }
    } else if let Some(len) = get("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| std::io::Error::other("bad content-length"))?;
        body.resize(len, 0);
        read_exact(r, &mut body, stop)?;
    }
    Ok(Some(Request {
        method,
        target,
        headers,
        body,
    }))
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// One CRLF-terminated line without its terminator; `None` at end of stream or
/// when stopping.
fn read_line(r: &mut BufReader<TcpStream>, stop: &AtomicBool) -> std::io::Result<Option<String>> {
    let mut buf = Vec::new();
    loop {
        match r.read_until(b'\n', &mut buf) {
            Ok(0) => return Ok(None),
            Ok(_) if buf.ends_with(b"\n") => break,
            Ok(_) => {}
            Err(e) if is_timeout(&e) => {
                if stop.load(Ordering::SeqCst) {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e),
        }
    }
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

fn read_exact(
    r: &mut BufReader<TcpStream>,
    mut buf: &mut [u8],
    stop: &AtomicBool,
) -> std::io::Result<()> {
    while !buf.is_empty() {
        match r.read(buf) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => buf = &mut buf[n..],
            Err(e) if is_timeout(&e) => {
                if stop.load(Ordering::SeqCst) {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        415 => "Unsupported Media Type",
        _ => "Status",
    }
}

fn write_response(out: &mut TcpStream, resp: &Response, close: bool) -> std::io::Result<()> {
    let conn = if close { "close" } else { "keep-alive" };
    match &resp.body {
        Body::Json(v) => {
            let body = serde_json::to_vec(v).unwrap_or_default();
            let head = format!(
                "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: {conn}\r\n\r\n",
                resp.status,
                reason(resp.status),
                body.len()
            );
            out.write_all(head.as_bytes())?;
            out.write_all(&body)?;
        }
        Body::Sse(events) => {
            let head = format!(
                "HTTP/1.1 {} {}\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: {conn}\r\n\r\n",
                resp.status,
                reason(resp.status)
            );
            out.write_all(head.as_bytes())?;
            for (event, data) in events {
                let mut chunk = String::new();
                if let Some(e) = event {
                    chunk.push_str(&format!("event: {e}\n"));
                }
                for line in data.split('\n') {
                    chunk.push_str(&format!("data: {line}\n"));
                }
                chunk.push('\n');
                out.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
                out.write_all(chunk.as_bytes())?;
                out.write_all(b"\r\n")?;
            }
            out.write_all(b"0\r\n\r\n")?;
        }
    }
    out.flush()
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

/// `{"error": {"type": "not_found", "message": …}}`, the shape all four dialects
/// accept as an error body.
pub fn error_json(message: &str) -> Value {
    serde_json::json!({"error": {"type": "not_found_error", "code": 404, "message": message}})
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
