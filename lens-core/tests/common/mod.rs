//! What the integration tests share: the handle they store under, and the walk
//! that checks a view against its raw stream line by line.
#![allow(dead_code)]

use lens_core::stages::ansi;
use lens_core::Marker;

/// The handle every test view is stored under.
pub const HANDLE: &str = "1a2b3c4d";

/// Lines as markers number them: split on '\n', a trailing newline ends the last.
pub fn raw_lines(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    s.strip_suffix('\n').unwrap_or(s).split('\n').collect()
}

/// Walks a view against its raw stream. Every view line is either the raw line it
/// claims to be (ANSI-stripped) at the next expected number, a marker that starts
/// exactly there, or one of the digest lines its marker announces. Returns the raw
/// line numbers shown.
pub fn check_stream(view: &str, raw: &str, stream: &str) -> Result<Vec<u32>, String> {
    let raws = raw_lines(raw);
    let mut next = 1u32;
    let mut shown = Vec::new();
    let mut digest_left = 0usize;
    for v in raw_lines(view) {
        if digest_left > 0 {
            // Lens's digest of the region its marker names: not an output line.
            digest_left -= 1;
            continue;
        }
        if v.starts_with("[lens: summary ") {
            continue;
        }
        if let Some(m) = Marker::parse(v) {
            digest_left = m.digest;
            if m.stream.name() != stream || m.handle != HANDLE {
                return Err(format!("marker for another stream or handle: {v}"));
            }
            if m.first != next {
                return Err(format!(
                    "marker starts at {} but line {next} is next: {v}",
                    m.first
                ));
            }
            next = m.last + 1;
            continue;
        }
        let Some(r) = raws.get(next as usize - 1) else {
            return Err(format!("view line past the end of the raw stream: {v:?}"));
        };
        // A line redrawn in place is shown as every drawing when one of them
        // reports trouble; otherwise it is a `redrawn` marker and a digest.
        let whole = ansi::strip(r.strip_suffix('\r').unwrap_or(r));
        if ansi::visible(r) != v && whole != v {
            return Err(format!(
                "line {next} renumbered or rewritten: view {v:?}, raw {r:?}"
            ));
        }
        shown.push(next);
        next += 1;
    }
    if next as usize != raws.len() + 1 {
        return Err(format!(
            "{} raw lines but the view accounts for {}",
            raws.len(),
            next - 1
        ));
    }
    Ok(shown)
}
