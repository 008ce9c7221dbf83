//! The HTTP/1.1 side of the scripted model, shared by every dialect: a request
//! read whole (keep-alive, Content-Length or chunked bodies, `Expect:
//! 100-continue`), and a response written whole or as server-sent events. std::net
//! only. It knows nothing of models: the server hands each request to whatever
//! answers it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

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

impl Response {
    /// A 200 answer streamed as server-sent events: (event name, data) each.
    pub fn sse(events: Vec<(Option<String>, String)>) -> Response {
        Response {
            status: 200,
            body: Body::Sse(events),
        }
    }
}

/// How long a connection may sit idle between checks of the stop flag.
const POLL: Duration = Duration::from_millis(200);

/// Serves one connection until the peer closes it, asks to, or `stop` is set:
/// each request read whole, handed to `answer`, and its response written back.
pub fn serve_connection(conn: TcpStream, stop: &AtomicBool, answer: &dyn Fn(&Request) -> Response) {
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
        let response = answer(&req);
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
