//! ruff: the full format (`F401 [*] `os` imported but unused`, then ` --> path:l:c`
//! and an excerpt with a `help:` line, blank-line separated) and the concise one
//! (`path:l:c: F401 [*] message`).

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::doc::{Class, Doc, Finding, Severity};

static FULL_HEAD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Z]{1,5}\d{1,4}) (.+)$").expect("compiles"));
static FULL_LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--> (\S+:\d+:\d+)$").expect("compiles"));
static CONCISE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?:\d+:\d+): ([A-Z]{1,5}\d{1,4}) (.+)$").expect("compiles"));

/// Adds every ruff finding in `range` to `out.findings`.
pub fn find(doc: &Doc, out: &mut Found, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        let text = &doc.lines[i].text;
        // `path:12:3: ` before the pattern is tried.
        let concise = doc.lines[i].colon
            && !text.starts_with([' ', '\t'])
            && text
                .split_once(':')
                .is_some_and(|(_, r)| r.starts_with(|c: char| c.is_ascii_digit()));
        if let Some(c) = if concise {
            CONCISE.captures(text)
        } else {
            None
        } {
            out.findings.push(Finding {
                start: i,
                end: i + 1,
                head: i,
                severity: Severity::Error,
                rule: c[2].to_string(),
                message: c[3].to_string(),
                location: c[1].to_string(),
            });
            i += 1;
            continue;
        }
        let located = i + 1 < range.end
            && text.starts_with(|c: char| c.is_ascii_uppercase())
            && doc.lines[i + 1].colon
            && doc.lines[i + 1].text.contains("--> ")
            && FULL_LOCATION.is_match(&doc.lines[i + 1].text);
        // The head's pattern runs only under a located line (it was run on every
        // line before, a sixth of the whole pipeline's time).
        let Some(c) = (if located {
            FULL_HEAD.captures(text)
        } else {
            None
        }) else {
            i += 1;
            continue;
        };
        let location = FULL_LOCATION
            .captures(&doc.lines[i + 1].text)
            .map_or(String::new(), |l| l[1].to_string());
        let mut end = i + 2;
        while end < range.end && doc.lines[end].class != Class::Blank {
            end += 1;
        }
        out.findings.push(Finding {
            start: i,
            end,
            head: i,
            severity: Severity::Error,
            rule: c[1].to_string(),
            message: c[2].to_string(),
            location,
        });
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify::testing;

    fn findings(text: &str) -> Vec<Finding> {
        testing::findings(text, "")
    }

    #[test]
    fn full_format() {
        let f = findings(
            "F401 [*] `os` imported but unused
 --> svc/api/customer.py:3:8
  |
3 | import os
  |        ^^
  |
help: Remove unused import: `os`

F841 Local variable `retry_count` is assigned to but never used
  --> svc/payments/customer.py:14:5
   |
14 |     retry_count = 0
   |     ^^^^^^^^^^^
   |
help: Remove assignment to unused variable `retry_count`

Found 2 errors.
",
        );
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].rule.as_str(), f[0].message.as_str()),
            ("F401", "[*] `os` imported but unused")
        );
        assert_eq!(f[0].location, "svc/api/customer.py:3:8");
        assert_eq!((f[0].start, f[0].end), (0, 7));
        assert_eq!(f[1].location, "svc/payments/customer.py:14:5");
    }

    #[test]
    fn concise_format() {
        let f = findings("svc/a.py:3:8: F401 [*] `os` imported but unused\nsvc/b.py:9:1: E711 Comparison to `None`\nFound 2 errors.\n");
        assert_eq!(f.len(), 2);
        assert_eq!(f[1].rule, "E711");
        assert_eq!(f[1].location, "svc/b.py:9:1");
    }
}
