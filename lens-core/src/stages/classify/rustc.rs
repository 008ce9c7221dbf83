//! rustc and cargo: `error[E0308]: mismatched types` / `warning: unneeded `return``
//! with a ` --> path:line:col` location and an indented excerpt, one diagnostic per
//! blank-line-separated block. Clippy names its lint only in a `= help:` link (and
//! once in a `#[warn(clippy::…)]` note), so the rule is read from there.

use std::sync::LazyLock;

use regex::Regex;

use crate::doc::{Class, Doc, Finding, Severity};

static HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(error|warning)(?:\[([A-Za-z]\d{4}|[\w:-]+)\])?: (.+)$").expect("compiles")
});
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--> (\S+:\d+:\d+)$").expect("compiles"));
static CLIPPY_LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"rust-clippy/[^#\s]*#([a-z0-9_]+)").expect("compiles"));
static LINT_NOTE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"#\[(?:warn|deny)\(([\w:]+)\)\]").expect("compiles"));

/// Messages that sum a run up rather than report a fault.
fn is_summary(message: &str) -> bool {
    message.starts_with("could not compile")
        || message.starts_with("aborting due to")
        || message.contains("generated ") && message.contains(" warning")
        || message.starts_with("build failed")
        || message.starts_with("test failed")
}

/// Adds every rustc diagnostic in `range` to `doc.findings`.
pub fn find(doc: &mut Doc, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        let t = &doc.lines[i].text;
        let c = if t.starts_with("error") || t.starts_with("warning") {
            HEAD.captures(t)
        } else {
            None
        };
        let Some(c) = c else {
            i += 1;
            continue;
        };
        let message = c[3].to_string();
        if is_summary(&message) {
            i += 1;
            continue;
        }
        let severity = if &c[1] == "error" {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut rule = c.get(2).map_or(String::new(), |m| m.as_str().to_string());
        let head = i;
        let mut location = String::new();
        let mut end = i + 1;
        while end < range.end && doc.lines[end].class != Class::Blank {
            let t = &doc.lines[end].text;
            if (t.starts_with("error") || t.starts_with("warning")) && HEAD.is_match(t) {
                break;
            }
            if location.is_empty() && t.contains("--> ") {
                if let Some(l) = LOCATION.captures(t) {
                    location = l[1].to_string();
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
            doc.findings.push(Finding {
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
    fn build_errors_with_notes_are_one_finding_each() {
        let f = findings(BUILD);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].rule.as_str(), f[0].message.as_str()),
            ("E0308", "mismatched types")
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
