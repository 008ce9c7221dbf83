//! TypeScript's tsc: `path(line,col): error TS2345: message` (the default when not
//! on a terminal) and the `--pretty` form `path:line:col - error TS2345: message`
//! followed by a quoted excerpt.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::doc::{Class, Doc, Finding, Severity};

static PLAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?\(\d+,\d+\)): (error|warning) (TS\d+): (.+)$").expect("compiles")
});
/// `--pretty`'s related information: an indented location under a diagnostic.
static RELATED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^  \S+?:\d+:\d+$").expect("compiles"));
static PRETTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?:\d+:\d+) - (error|warning) (TS\d+): (.+)$").expect("compiles")
});

/// Adds every tsc diagnostic in `range` to `out.findings`.
pub fn find(doc: &Doc, out: &mut Found, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        let text = &doc.lines[i].text;
        // Both forms put the location first, with no space in it: the severity and
        // code follow the first space (`a.ts(3,7): error TS…`, `a.ts:3:7 - error TS…`).
        let head = doc.lines[i].colon
            && text.split_once(' ').is_some_and(|(_, rest)| {
                let rest = rest.strip_prefix("- ").unwrap_or(rest);
                rest.starts_with("error TS") || rest.starts_with("warning TS")
            });
        if !head {
            i += 1;
            continue;
        }
        let (c, pretty) = match (PLAIN.captures(text), PRETTY.captures(text)) {
            (Some(c), _) => (c, false),
            (None, Some(c)) => (c, true),
            _ => {
                i += 1;
                continue;
            }
        };
        let mut end = i + 1;
        if pretty {
            // A blank line, then the excerpt up to the next blank line.
            if end + 1 < range.end
                && doc.lines[end].class == Class::Blank
                && doc.lines[end + 1].class != Class::Blank
            {
                end += 1;
                while end < range.end && doc.lines[end].class != Class::Blank {
                    end += 1;
                }
            }
            // Related information (`  path:line:col`, its excerpt and message)
            // belongs to the diagnostic above it.
            while end + 1 < range.end
                && doc.lines[end].class == Class::Blank
                && RELATED.is_match(&doc.lines[end + 1].text)
            {
                end += 2;
                while end < range.end && doc.lines[end].class != Class::Blank {
                    end += 1;
                }
            }
        } else {
            // Continuation lines of a long message are indented.
            while end < range.end && doc.lines[end].text.starts_with("  ") {
                end += 1;
            }
        }
        out.findings.push(Finding {
            start: i,
            end,
            head: i,
            severity: if &c[2] == "error" {
                Severity::Error
            } else {
                Severity::Warning
            },
            rule: c[3].to_string(),
            message: c[4].to_string(),
            location: c[1].to_string(),
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
    fn plain_form() {
        let f = findings(
            "src/orders/total.ts(6,18): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.
src/orders/total.ts(8,9): error TS2322: Type 'string' is not assignable to type 'number'.
src/a.ts(1,1): error TS2322: Type '{ a: string; }' is not assignable to type 'B'.
  Object literal may only specify known properties.
",
        );
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].location, "src/orders/total.ts(6,18)");
        assert_eq!(f[0].rule, "TS2345");
        assert_eq!((f[2].start, f[2].end), (2, 4));
    }

    #[test]
    fn pretty_form() {
        let f = findings(
            "src/money.ts:3:3 - error TS2322: Type 'number' is not assignable to type 'string'.

3   amount: 1,
    ~~~~~~

src/b.ts:9:1 - error TS1005: ';' expected.

9 }
  ~


Found 2 errors in 2 files.
",
        );
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].location, "src/money.ts:3:3");
        assert_eq!((f[0].start, f[0].end), (0, 4));
        assert_eq!(f[1].rule, "TS1005");
    }

    #[test]
    fn related_information_belongs_to_its_diagnostic() {
        let f = findings(
            "src/a.ts:3:12 - error TS2322: Type 'string' is not assignable to type 'number'.

3   return { id: id };
             ~~

  src/a.ts:1:21
    1 interface A { id: number }
                    ~~
    The expected type comes from property 'id' which is declared here on type 'A'

src/a.ts:6:3 - error TS2339: Property 'x' does not exist on type 'A'.
",
        );
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].start, f[0].end), (0, 9));
        assert_eq!(f[1].start, 10);
    }
}
