//! rustc and cargo: `error[E0308]: mismatched types` / `warning: unneeded `return``
//! with a ` --> path:line:col` location and an indented excerpt, one diagnostic per
//! blank-line-separated block. Clippy names its lint only in a `= help:` link (and
//! once in a `#[warn(clippy::…)]` note), so the rule is read from there.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::doc::{Class, Doc, Finding, Severity};

static CLIPPY_LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"rust-clippy/[^#\s]*#([a-z0-9_]+)").expect("compiles"));
static LINT_NOTE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"#\[(?:warn|deny)\(([\w:]+)\)\]").expect("compiles"));

/// A diagnostic's head line, `error[E0308]: message` or `warning: message`.
struct Head<'t> {
    error: bool,
    /// The code or lint in brackets, if any.
    rule: Option<&'t str>,
    message: &'t str,
}

/// Reads a head line by hand: it is tried on every line that starts with `error`
/// or `warning`, and a regex with captures cost more than the rest of the family.
fn parse_head(t: &str) -> Option<Head<'_>> {
    let (error, rest) = if let Some(r) = t.strip_prefix("error") {
        (true, r)
    } else {
        (false, t.strip_prefix("warning")?)
    };
    let (rule, rest) = match rest.strip_prefix('[') {
        Some(r) => {
            let (rule, after) = r.split_once(']')?;
            let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | ':' | '-');
            if rule.is_empty() || !rule.chars().all(word) {
                return None;
            }
            (Some(rule), after)
        }
        None => (None, rest),
    };
    let message = rest.strip_prefix(": ")?;
    (!message.is_empty()).then_some(Head {
        error,
        rule,
        message,
    })
}

/// The `path:line:col` of a ` --> path:line:col` line.
fn parse_location(t: &str) -> Option<&str> {
    let loc = t.trim_start().strip_prefix("--> ")?;
    let (rest, col) = loc.rsplit_once(':')?;
    let (path, line) = rest.rsplit_once(':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = !path.is_empty() && !path.contains(char::is_whitespace) && digits(line) && digits(col);
    ok.then_some(loc)
}

/// Messages that sum a run up rather than report a fault.
fn is_summary(message: &str) -> bool {
    message.starts_with("could not compile")
        || message.starts_with("aborting due to")
        || message.contains("generated ") && message.contains(" warning")
        || message.starts_with("build failed")
        || message.starts_with("test failed")
}

/// The primary label of an excerpt's caret line, `   |     ^^^ expected `u32`,
/// found `String``: the text after the carets (secondary `---` marks may come
/// first on the line).
fn primary_label(t: &str) -> Option<&str> {
    let rest = t.trim_start().strip_prefix('|')?;
    let caret = rest.find('^')?;
    if !rest[..caret].chars().all(|c| matches!(c, ' ' | '-' | '_')) {
        return None;
    }
    let label = rest[caret..]
        .trim_start_matches('^')
        .strip_prefix(' ')?
        .trim();
    (!label.is_empty() && !label.chars().all(|c| matches!(c, '-' | ' '))).then_some(label)
}

/// Adds every rustc diagnostic in `range` to `out.findings`. A finding's message
/// carries its primary label (`mismatched types: expected `u32`, found `String``),
/// so reports of one error code whose labels name different values keep those
/// values when they are grouped into one cause.
pub fn find(doc: &Doc, out: &mut Found, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        let Some(h) = parse_head(&doc.lines[i].text) else {
            i += 1;
            continue;
        };
        if is_summary(h.message) {
            i += 1;
            continue;
        }
        let mut message = h.message.to_string();
        let mut labelled = false;
        let severity = if h.error {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut rule = h.rule.unwrap_or_default().to_string();
        let head = i;
        let mut location = String::new();
        let mut end = i + 1;
        while end < range.end && doc.lines[end].class != Class::Blank {
            let t = &doc.lines[end].text;
            if parse_head(t).is_some() {
                break;
            }
            if location.is_empty() {
                if let Some(l) = parse_location(t) {
                    location = l.to_string();
                }
            }
            // The primary label is the main excerpt's, not a note's.
            let sub = t.trim_start();
            if sub.starts_with("note:") || sub.starts_with("help:") || sub.starts_with("= ") {
                labelled = true;
            }
            if !labelled {
                if let Some(label) = primary_label(t) {
                    message = format!("{message}: {label}");
                    labelled = true;
                }
            }
            if rule.is_empty() && t.contains('#') {
                if let Some(l) = CLIPPY_LINK.captures(t) {
                    rule = format!("clippy::{}", &l[1]);
                } else if let Some(l) = LINT_NOTE.captures(t) {
                    rule = l[1].to_string();
                }
            }
            end += 1;
        }
        if !location.is_empty() {
            out.findings.push(Finding {
                start: head,
                end,
                head,
                severity,
                rule,
                message,
                location,
            });
        }
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify::testing;

    const BUILD: &str = "   Compiling orders v0.1.0 (/tmp/orders)
error[E0308]: mismatched types
  --> src/audit.rs:7:11
   |
 7 |     units(item.quantity) * weight
   |     ----- ^^^^^^^^^^^^^ expected `u32`, found `String`
   |
note: function defined here
  --> src/lib.rs:19:8
   |
19 | pub fn units(q: u32) -> u64 {
   |        ^^^^^ ------

error[E0308]: mismatched types
  --> src/audit.rs:12:11
   |
12 |     units(item.quantity) * weight
   |           ^^^^^^^^^^^^^ expected `u32`, found `String`

error: could not compile `orders` (lib) due to 2 previous errors
";

    const CLIPPY: &str = "warning: unneeded `return` statement
 --> src/circle.rs:5:5
  |
5 |     return y + 1.0;
  |     ^^^^^^^^^^^^^^
  |
  = help: for further information visit https://rust-lang.github.io/rust-clippy/rust-1.95.0/index.html#needless_return
  = note: `#[warn(clippy::needless_return)]` on by default

warning: length comparison to zero
  --> src/grid.rs:92:8
   |
92 |     if v.len() == 0 {
   |        ^^^^^^^^^^^^ help: using `is_empty` is clearer and more explicit: `v.is_empty()`
   |
   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#len_zero
";

    fn findings(text: &str) -> Vec<Finding> {
        testing::findings("", text)
    }

    #[test]
    fn reads_heads_and_locations_by_hand() {
        let h = parse_head("error[E0308]: mismatched types").unwrap();
        assert!(h.error);
        assert_eq!((h.rule, h.message), (Some("E0308"), "mismatched types"));
        let h = parse_head("warning[clippy::needless_return]: x").unwrap();
        assert_eq!((h.error, h.rule), (false, Some("clippy::needless_return")));
        assert_eq!(parse_head("warning: unused").unwrap().rule, None);
        for no in [
            "error: ",
            "error[]: x",
            "error[a b]: x",
            "errors: 3",
            "warning:x",
            "error[E0308] x",
        ] {
            assert!(parse_head(no).is_none(), "{no}");
        }
        assert_eq!(parse_location("  --> src/a.rs:7:11"), Some("src/a.rs:7:11"));
        assert_eq!(parse_location("--> C:/x y.rs:1:2"), None);
        for no in [
            "  --> src/a.rs:7",
            "  --> :1:2",
            "  -> a.rs:1:2",
            "  --> a.rs:1:2 x",
        ] {
            assert_eq!(parse_location(no), None, "{no}");
        }
    }

    #[test]
    fn build_errors_with_notes_are_one_finding_each() {
        let f = findings(BUILD);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].rule.as_str(), f[0].message.as_str()),
            ("E0308", "mismatched types: expected `u32`, found `String`")
        );
        assert_eq!(f[0].location, "src/audit.rs:7:11");
        assert_eq!((f[0].start, f[0].end), (1, 12));
        assert_eq!(f[1].location, "src/audit.rs:12:11");
        assert_eq!(f[1].severity, Severity::Error);
    }

    #[test]
    fn clippy_rule_comes_from_the_help_link() {
        let f = findings(CLIPPY);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].rule, "clippy::needless_return");
        assert_eq!(f[1].rule, "clippy::len_zero");
        assert_eq!(f[1].location, "src/grid.rs:92:8");
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn summaries_are_not_findings() {
        assert!(findings(
            "warning: `x` (lib) generated 3 warnings\nerror: could not compile `x`\n"
        )
        .is_empty());
    }
}
