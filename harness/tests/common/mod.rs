//! A fake upstream HTTP server on loopback, shared by the broker tests and the
//! microVM smoke test.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A fake upstream: records each request it receives and answers with the request
/// echoed back as the body (so a leaked key would show in the response).
pub struct Upstream {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<String>>>,
}

pub fn upstream() -> Upstream {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let mut conn = conn.unwrap();
            conn.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            // Read the head, then as much body as Content-Length says.
            loop {
                let n = conn.read(&mut buf).unwrap_or(0);
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    if req.len() >= end + 4 + len {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let text = String::from_utf8_lossy(&req).to_string();
            s.lock().unwrap().push(text.clone());
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{text}",
                text.len()
            );
            let _ = conn.write_all(resp.as_bytes());
        }
    });
    Upstream { port, seen }
}
