//! gcc, clang and mypy: `path:line[:col]: error: message [rule]`, then (gcc, clang)
//! the quoted source with a gutter and a caret line, or (mypy) `note:` lines on the
//! same location. gcc's errors carry no rule; its warnings name the flag.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::doc::{Doc, Finding, Severity};

static HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?:\d+(?::\d+)?): (fatal error|error|warning): (.+?)(?: \[([-\w=:.]+)\])?$")
        .expect("compiles")
});
static NOTE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\S+?:\d+(?::\d+)?: note: ").expect("compiles"));

/// True for the lines under a gcc/clang diagnostic: `    4 |   code` and `      |   ^~`.
fn is_excerpt(t: &str) -> bool {
    let trimmed = t.trim_start();
    t.starts_with(' ')
        && (trimmed.starts_with('|')
            || trimmed.starts_with("+++ |")
            || trimmed
                .split_once(" |")
                .is_some_and(|(n, _)| n.trim().parse::<u32>().is_ok()))
}

/// `src/a.c: In function ‘f’:`, `a.cc: In member function …:`, `a.c: At top level:`,
/// and the include chain (`In file included from a.c:1:`, `                 from b.h:2,`).
fn is_scope(t: &str) -> bool {
    (t.ends_with(':') || t.ends_with(','))
        && (t.contains(": In function ")
            || t.contains(": In member function ")
            || t.contains(": In constructor ")
            || t.contains(": At top level")
            || t.starts_with("In file included from ")
            || t.trim_start().starts_with("from ") && t.starts_with("    "))
}

/// Adds every gcc/clang/mypy diagnostic in `range` to `out.findings`.
pub fn find(doc: &Doc, out: &mut Found, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        let t = &doc.lines[i].text;
        // The location holds no space, so the head's first space follows its `:`
        // and comes right before the severity: one search instead of three.
        let maybe = doc.lines[i].colon
            && !super::log::starts_with_clock(t)
            && t.split_once(' ').is_some_and(|(loc, rest)| {
                loc.ends_with(':')
                    && (rest.starts_with("error")
                        || rest.starts_with("warning")
                        || rest.starts_with("fatal error"))
            });
        let Some(c) = (if maybe { HEAD.captures(t) } else { None }) else {
            i += 1;
            continue;
        };
        let severity = if c[2].ends_with("error") {
            Severity::Error
        } else {
            Severity::Warning
        };
        let rule = c
            .get(4)
            .map_or_else(|| c[2].to_string(), |m| m.as_str().to_string());
        // gcc says which function first (`a.c: In function ‘f’:`): that line is
        // the diagnostic's context, so it goes and comes with it.
        let mut start = i;
        while start > range.start && is_scope(&doc.lines[start - 1].text) {
            start -= 1;
        }
        let finding = Finding {
            start,
            end: i + 1,
            head: i,
            severity,
            rule,
            message: c[3].trim_end().to_string(),
            location: c[1].to_string(),
        };
        let mut end = i + 1;
        while end < range.end
            && (is_excerpt(&doc.lines[end].text)
                || doc.lines[end].text.contains(": note: ") && NOTE.is_match(&doc.lines[end].text))
        {
            end += 1;
        }
        out.findings.push(Finding { end, ..finding });
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify::testing;

    fn findings(text: &str) -> Vec<Finding> {
        testing::findings("", text)
    }

    #[test]
    fn gcc_with_excerpts() {
        let f = findings(
            "src/codec_19.c: In function ‘codec_19_encode’:
src/codec_19.c:4:19: error: ‘const struct frame’ has no member named ‘stride’
    4 |     size_t row = f->stride;
      |                   ^~
src/codec_22.c:4:9: warning: unused variable ‘unused_total’ [-Wunused-variable]
    4 |     int unused_total = 0;
      |         ^~~~~~~~~~~~
make: *** [Makefile:8: build/codec_19.o] Error 1
",
        );
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].location.as_str(), f[0].rule.as_str()),
            ("src/codec_19.c:4:19", "error")
        );
        assert_eq!(
            (f[0].start, f[0].end),
            (0, 4),
            "the In function line goes with it"
        );
        assert_eq!(f[1].rule, "-Wunused-variable");
        assert_eq!(f[1].severity, Severity::Warning);
    }

    #[test]
    fn clang_and_mypy() {
        let f = findings(
            "main.c:3:5: error: use of undeclared identifier 'x'
    3 |     x = 1;
      |     ^
app/models.py:12: error: Incompatible return value type (got \"str\", expected \"int\")  [return-value]
app/models.py:12: note: Revealed type is \"builtins.str\"
app/api.py:40: error: Name \"requests\" is not defined  [name-defined]
Found 2 errors in 2 files (checked 14 source files)
",
        );
        assert_eq!(f.len(), 3);
        assert_eq!(f[1].rule, "return-value");
        assert_eq!(f[1].location, "app/models.py:12");
        assert_eq!(f[1].end, 5);
        assert_eq!(f[2].rule, "name-defined");
        assert_eq!(f[2].message, "Name \"requests\" is not defined");
    }
}
