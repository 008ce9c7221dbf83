//! The credential broker: a small HTTP forwarder on the host's loopback that a
//! microVM guest reaches through its one `guestfwd` rule (as `10.0.2.100:80`). The
//! guest is given a placeholder key of the real key's length; the broker puts the
//! real key in place of the placeholder, in the one credential header, only on
//! requests to the one upstream it is bound to, and refuses everything else:
//! another host, a proxy-style absolute URL elsewhere, `CONNECT`, a request without
//! the placeholder, a body without a length. The real key never enters the guest:
//! not its disk, its environment or its logs; if an upstream echoes it back, the
//! response carries the placeholder instead (same length, so framing holds).
//!
//! The upstream leg goes through curl(1), so `https://` upstreams work without a
//! TLS crate in the harness; the headers, key included, reach curl through a 0600
//! file that is removed when the request ends, never its argv. The broker logs
//! method, path, status and sizes, never headers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The address the guest reaches the broker at.
pub const GUEST_HOST: &str = "10.0.2.100";

/// What the broker forwards to and how.
#[derive(Clone, Debug)]
pub struct Config {
    /// The one upstream, e.g. `https://api.anthropic.com` (no trailing slash).
    pub upstream: String,
    /// The credential header, lower-case (`x-api-key`, `authorization`).
    pub header: String,
    /// What precedes the key in that header (`Bearer ` or nothing).
    pub prefix: String,
    /// The real key (host only).
    pub key: String,
    /// The placeholder the guest holds.
    pub placeholder: String,
}

/// A placeholder of `key`'s length that shares none of it.
pub fn placeholder_for(key: &str) -> String {
    let stem = "lens-placeholder-";
    let n = key.len();
    let mut p: String = stem.chars().chain(std::iter::repeat('0')).take(n).collect();
    // Never equal to the key, even for a key that happens to look like this.
    if p == key && n > 0 {
        p.replace_range(n - 1.., "1");
    }
    p
}

/// One request, as logged.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Entry {
    /// Method.
    pub method: String,
    /// Path.
    pub path: String,
    /// Status the guest got (the broker's own for refusals).
    pub status: u16,
    /// Why it was refused, when it was.
    pub refused: Option<String>,
    /// Response bytes sent to the guest.
    pub bytes: u64,
}

/// A running broker.
pub struct Broker {
    /// The loopback port it listens on.
    pub port: u16,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<Entry>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Broker {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    pub fn start(config: Config) -> Result<Broker> {
        if config.key.len() < 8 || config.placeholder.len() != config.key.len() {
            bail!("the broker needs a key of at least 8 bytes and a placeholder of its length");
        }
        if config.key.contains(char::is_whitespace) || config.key.contains(':') {
            bail!("the key has whitespace or a colon; it cannot go in an HTTP header as is");
        }
        let listener =
            TcpListener::bind("127.0.0.1:0").context("cannot bind the broker on loopback")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let config = Arc::new(config);
        let (s, l) = (stop.clone(), log.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (c, l) = (config.clone(), l.clone());
                        std::thread::spawn(move || {
                            let entry = serve(&conn, &c);
                            if let Ok(mut log) = l.lock() {
                                log.push(entry);
                            }
                            // Closed after logging: a client that has its answer
                            // finds the request in the log.
                            let _ = conn.shutdown(Shutdown::Both);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Ok(Broker {
            port,
            stop,
            log,
            thread: Some(thread),
        })
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<Entry> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn refuse(mut conn: &TcpStream, method: &str, path: &str, status: u16, why: &str) -> Entry {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        411 => "Length Required",
        _ => "Bad Gateway",
    };
    let body = format!("lens broker: {why}\n");
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = conn.write_all(msg.as_bytes());
    Entry {
        method: method.into(),
        path: path.into(),
        status,
        refused: Some(why.into()),
        bytes: msg.len() as u64,
    }
}

fn serve(conn: &TcpStream, c: &Config) -> Entry {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let req = match read_request(conn) {
        Ok(r) => r,
        Err(e) => return refuse(conn, "?", "?", e.0, &e.1),
    };
    let (m, p) = (req.method.clone(), req.path.clone());
    if let Err((status, why)) = check(&req, c) {
        return refuse(conn, &m, &p, status, &why);
    }
    match forward(conn, &req, c) {
        Ok((status, bytes)) => Entry {
            method: m,
            path: p,
            status,
            refused: None,
            bytes,
        },
        Err(e) => refuse(conn, &m, &p, 502, &format!("upstream failed: {e}")),
    }
}

fn read_request(conn: &TcpStream) -> std::result::Result<Request, (u16, String)> {
    let bad = |why: &str| (400, why.to_string());
    let mut r = BufReader::new(conn);
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = r
            .by_ref()
            .take(8192)
            .read_until(b'\n', &mut line)
            .map_err(|_| bad("could not read the request"))?;
        if n == 0 || head.len() > 64 * 1024 {
            return Err(bad("incomplete or oversized request head"));
        }
        let done = line == b"\r\n" || line == b"\n";
        head.push(line);
        if done {
            break;
        }
    }
    let text: Vec<String> = head
        .iter()
        .map(|l| String::from_utf8_lossy(l).trim_end().to_string())
        .collect();
    let mut first = text[0].split(' ');
    let (Some(method), Some(target), Some(version)) = (first.next(), first.next(), first.next())
    else {
        return Err(bad("malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad("only HTTP/1.x"));
    }
    let mut headers = Vec::new();
    for l in &text[1..] {
        if l.is_empty() {
            continue;
        }
        let Some((k, v)) = l.split_once(':') else {
            return Err(bad("malformed header"));
        };
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |k: &str| headers.iter().find(|(h, _)| h == k).map(|(_, v)| v.clone());
    if get("transfer-encoding").is_some() {
        return Err((411, "request bodies need a Content-Length".into()));
    }
    let len: usize = match get("content-length") {
        Some(v) => v.parse().map_err(|_| bad("bad Content-Length"))?,
        None => 0,
    };
    if len > 64 << 20 {
        return Err(bad("request body over 64 MiB"));
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body)
        .map_err(|_| bad("request body shorter than its Content-Length"))?;
    Ok(Request {
        method: method.into(),
        path: target.into(),
        headers,
        body,
    })
}

fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or("");
    authority.rsplit('@').next().unwrap_or(authority)
}

fn strip_port(h: &str) -> &str {
    h.split(':').next().unwrap_or(h)
}

/// The refusal rules; `Ok` means forward.
fn check(req: &Request, c: &Config) -> std::result::Result<(), (u16, String)> {
    let upstream_host = strip_port(host_of(&c.upstream)).to_ascii_lowercase();
    if req.method.eq_ignore_ascii_case("CONNECT") {
        return Err((405, "CONNECT is not forwarded".into()));
    }
    if !req.path.starts_with('/') {
        let target = strip_port(host_of(&req.path)).to_ascii_lowercase();
        if target != upstream_host {
            return Err((403, format!("only {upstream_host} is reachable")));
        }
    }
    let host = req
        .headers
        .iter()
        .find(|(k, _)| k == "host")
        .map(|(_, v)| strip_port(v).to_ascii_lowercase());
    match host {
        Some(h) if h == GUEST_HOST || h == upstream_host => {}
        Some(h) => return Err((403, format!("host {h} is not the broker's upstream"))),
        None => return Err((400, "no Host header".into())),
    }
    let want = format!("{}{}", c.prefix, c.placeholder);
    let cred: Vec<&String> = req
        .headers
        .iter()
        .filter(|(k, _)| *k == c.header)
        .map(|(_, v)| v)
        .collect();
    if cred.len() != 1 || cred[0] != &want {
        return Err((
            403,
            format!("the {} header must carry the placeholder key", c.header),
        ));
    }
    Ok(())
}

fn scratch_file() -> Result<(PathBuf, std::fs::File)> {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("lens-broker-{}", std::process::id()));
    crate::platform::private_dir(&dir)?;
    let path = dir.join(format!("h{}", N.fetch_add(1, Ordering::SeqCst)));
    let f = crate::platform::private_file(&path)?;
    Ok((path, f))
}

/// Sends the request upstream through curl and streams the raw response back,
/// the key replaced by the placeholder. Returns the status and bytes sent.
fn forward(conn: &TcpStream, req: &Request, c: &Config) -> Result<(u16, u64)> {
    let path = if req.path.starts_with('/') {
        req.path.clone()
    } else {
        // Absolute form to the upstream itself: keep its path.
        let rest = req.path.split_once("://").map_or(&req.path[..], |(_, r)| r);
        rest.find('/').map_or("/".into(), |i| rest[i..].to_string())
    };
    let (hfile, mut f) = scratch_file()?;
    let skip = [
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "expect",
        "te",
        "upgrade",
    ];
    for (k, v) in &req.headers {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let v = if *k == c.header {
            format!("{}{}", c.prefix, c.key)
        } else {
            v.clone()
        };
        writeln!(f, "{k}: {v}")?;
    }
    writeln!(f, "Expect:")?;
    drop(f);
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--http1.1", "--raw", "-i", "-N", "-X", &req.method]);
    cmd.arg("-H").arg(format!("@{}", hfile.display()));
    if !req.body.is_empty() || matches!(req.method.as_str(), "POST" | "PUT" | "PATCH") {
        cmd.args(["--data-binary", "@-"]);
    }
    cmd.arg(format!("{}{}", c.upstream, path));
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("curl did not start");
    let result = (|| -> Result<(u16, u64)> {
        let child = child.as_mut().map_err(|e| anyhow::anyhow!("{e:#}"))?;
        let mut stdin = child.stdin.take().context("curl stdin")?;
        let body = req.body.clone();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&body);
        });
        let mut stdout = child.stdout.take().context("curl stdout")?;
        let mut out = conn.try_clone()?;
        let mut red = Redactor::new(c.key.as_bytes(), c.placeholder.as_bytes());
        let mut buf = [0u8; 16 * 1024];
        let mut sent = 0u64;
        let mut first = Vec::new();
        loop {
            let n = stdout.read(&mut buf)?;
            if n == 0 {
                break;
            }
            if first.len() < 32 {
                first.extend_from_slice(&buf[..n.min(32)]);
            }
            let chunk = red.push(&buf[..n]);
            out.write_all(&chunk)?;
            sent += chunk.len() as u64;
        }
        let rest = red.finish();
        out.write_all(&rest)?;
        sent += rest.len() as u64;
        let _ = feeder.join();
        let status = child.wait()?;
        if sent == 0 {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            bail!("{} ({status})", err.trim());
        }
        let line = String::from_utf8_lossy(&first);
        let code = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok((code, sent))
    })();
    let _ = std::fs::remove_file(&hfile);
    result
}

/// Replaces every occurrence of `from` with `to` (same length) in a stream cut at
/// arbitrary points, holding back at most `from.len() - 1` bytes.
struct Redactor {
    from: Vec<u8>,
    to: Vec<u8>,
    held: Vec<u8>,
}

impl Redactor {
    fn new(from: &[u8], to: &[u8]) -> Redactor {
        assert_eq!(from.len(), to.len());
        Redactor {
            from: from.to_vec(),
            to: to.to_vec(),
            held: Vec::new(),
        }
    }

    fn replace_all(&self, buf: &mut [u8]) {
        let n = self.from.len();
        let mut i = 0;
        while i + n <= buf.len() {
            if buf[i..i + n] == self.from[..] {
                buf[i..i + n].copy_from_slice(&self.to);
                i += n;
            } else {
                i += 1;
            }
        }
    }

    fn push(&mut self, data: &[u8]) -> Vec<u8> {
        self.held.extend_from_slice(data);
        let mut buf = std::mem::take(&mut self.held);
        self.replace_all(&mut buf);
        let keep = (self.from.len() - 1).min(buf.len());
        self.held = buf.split_off(buf.len() - keep);
        buf
    }

    fn finish(&mut self) -> Vec<u8> {
        let mut buf = std::mem::take(&mut self.held);
        self.replace_all(&mut buf);
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redactor_catches_a_key_split_anywhere() {
        let key = b"sk-REALKEY-0123";
        let ph = b"lens-placeholdr";
        let text = b"a sk-REALKEY-0123 b sk-REALKEY-0123c".to_vec();
        for cut in 0..text.len() {
            let mut r = Redactor::new(key, ph);
            let mut out = r.push(&text[..cut]);
            out.extend(r.push(&text[cut..]));
            out.extend(r.finish());
            assert_eq!(
                out,
                b"a lens-placeholdr b lens-placeholdrc".to_vec(),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn placeholders_match_the_key_length_and_not_the_key() {
        let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz";
        let p = placeholder_for(key);
        assert_eq!(p.len(), key.len());
        assert!(p.starts_with("lens-placeholder-"));
        assert!(!p.contains("abcdef"));
    }
}
