//! The credential broker against a fake upstream on loopback: the substitution rule
//! (the real key replaces the placeholder in the one credential header, and only
//! there) and the refusal rules (another host, a proxy-style URL elsewhere, CONNECT,
//! no placeholder, a body without a length), each refused before the upstream is
//! contacted.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{upstream, Upstream};
use harness::broker::{placeholder_for, Broker, Config};

const KEY: &str = "sk-test-REAL-0123456789abcdef";

fn broker(up: &Upstream) -> Broker {
    Broker::start(Config {
        upstream: format!("http://127.0.0.1:{}", up.port),
        header: "x-api-key".into(),
        prefix: String::new(),
        key: KEY.into(),
        placeholder: placeholder_for(KEY),
    })
    .unwrap()
}

fn send(port: u16, raw: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(raw.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_real_key_replaces_the_placeholder_upstream_and_never_comes_back() {
    let up = upstream();
    let b = broker(&up);
    let ph = placeholder_for(KEY);
    let body =
        r#"{"model":"m","note":"the placeholder in a body stays as it is: PH"}"#.replace("PH", &ph);
    let resp = send(
        b.port,
        &format!(
            "POST /v1/messages?beta=true HTTP/1.1\r\nHost: 10.0.2.100\r\nx-api-key: {ph}\r\nanthropic-version: 2023-06-01\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(resp.starts_with("HTTP/1.1 200 OK"), "{resp}");
    let seen = up.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let got = &seen[0];
    assert!(
        got.starts_with("POST /v1/messages?beta=true HTTP/1.1\r\n"),
        "{got}"
    );
    assert!(got.contains(&format!("x-api-key: {KEY}\r\n")), "{got}");
    assert!(got.contains("anthropic-version: 2023-06-01"), "{got}");
    // Only the one header is substituted: the body reaches upstream unchanged.
    assert!(got.ends_with(&body), "{got}");
    // The upstream echoed the key; the guest sees the placeholder in its place.
    assert!(!resp.contains(KEY), "{resp}");
    assert!(resp.contains(&format!("x-api-key: {ph}")), "{resp}");
    let log = b.log();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].status, log[0].refused.clone()), (200, None));
}

#[test]
fn everything_else_is_refused_before_the_upstream_hears_of_it() {
    let up = upstream();
    let b = broker(&up);
    let ph = placeholder_for(KEY);
    let cases = [
        (
            format!("GET /v1/models HTTP/1.1\r\nHost: evil.example\r\nx-api-key: {ph}\r\n\r\n"),
            "403",
            "host evil.example",
        ),
        (
            format!("GET http://evil.example/steal HTTP/1.1\r\nHost: 10.0.2.100\r\nx-api-key: {ph}\r\n\r\n"),
            "403",
            "only 127.0.0.1 is reachable",
        ),
        (
            format!("CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example\r\nx-api-key: {ph}\r\n\r\n"),
            "405",
            "CONNECT",
        ),
        (
            "GET /v1/models HTTP/1.1\r\nHost: 10.0.2.100\r\n\r\n".to_string(),
            "403",
            "must carry the placeholder",
        ),
        (
            "GET /v1/models HTTP/1.1\r\nHost: 10.0.2.100\r\nx-api-key: sk-some-other-key-000000000000\r\n\r\n".to_string(),
            "403",
            "must carry the placeholder",
        ),
        (
            format!("GET /v1/models HTTP/1.1\r\nHost: 10.0.2.100\r\nx-api-key: {ph}\r\nx-api-key: {ph}\r\n\r\n"),
            "403",
            "must carry the placeholder",
        ),
        (
            format!("POST /v1/messages HTTP/1.1\r\nHost: 10.0.2.100\r\nx-api-key: {ph}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            "411",
            "Content-Length",
        ),
    ];
    for (req, status, why) in &cases {
        let resp = send(b.port, req);
        assert!(
            resp.starts_with(&format!("HTTP/1.1 {status} ")),
            "{req:?} -> {resp}"
        );
        assert!(resp.contains(why), "{req:?} -> {resp}");
        assert!(!resp.contains(KEY));
    }
    assert!(
        up.seen.lock().unwrap().is_empty(),
        "nothing reached upstream"
    );
    let log = b.log();
    assert_eq!(log.len(), cases.len());
    assert!(log.iter().all(|e| e.refused.is_some()));
    // The log holds no header values, so no key and no placeholder.
    let json = serde_json::to_string(&log).unwrap();
    assert!(!json.contains(KEY) && !json.contains(&ph), "{json}");
}

#[test]
fn absolute_urls_to_the_upstream_itself_are_forwarded() {
    let up = upstream();
    let b = broker(&up);
    let ph = placeholder_for(KEY);
    let resp = send(
        b.port,
        &format!(
            "GET http://127.0.0.1:{}/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: {ph}\r\n\r\n",
            up.port
        ),
    );
    assert!(resp.starts_with("HTTP/1.1 200 OK"), "{resp}");
    assert!(up.seen.lock().unwrap()[0].starts_with("GET /v1/models HTTP/1.1"));
}
