//! ESLint: the stylish format (a file's path alone on a line, then one indented
//! `line:col  severity  message  rule` line per problem) and the compact one
//! (`path: line 5, col 9, Error - message (rule)`).

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::doc::{Doc, Finding, Severity};

static FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(/?[^\s:]+\.(?:[cm]?[jt]sx?|vue|svelte|astro))$").expect("compiles")
});
static PROBLEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(\d+:\d+)\s+(error|warning)\s+(.+?)\s{2,}(@?[\w/-]+)$").expect("compiles")
});
static COMPACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+): line (\d+), col (\d+), (Error|Warning) - (.+) \((@?[\w/-]+)\)$")
        .expect("compiles")
});

/// Adds every ESLint problem in `range` to `out.findings`. A file's first problem
/// starts at the file's header line, so the header belongs to the region it names.
pub fn find(doc: &Doc, out: &mut Found, range: std::ops::Range<usize>) {
    let mut file: Option<(usize, String)> = None;
    for i in range {
        let text = &doc.lines[i].text;
        let colon = doc.lines[i].colon;
        let compact = colon
            && text
                .split_once(' ')
                .is_some_and(|(path, rest)| path.ends_with(':') && rest.starts_with("line "));
        if let Some(c) = if compact {
            COMPACT.captures(text)
        } else {
            None
        } {
            out.findings.push(Finding {
                start: i,
                end: i + 1,
                head: i,
                severity: if &c[4] == "Error" {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                rule: c[6].to_string(),
                message: c[5].to_string(),
                location: format!("{}:{}:{}", &c[1], &c[2], &c[3]),
            });
            continue;
        }
        let source = [
            ".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte",
            ".astro",
        ];
        // A file header holds no `:` and ends in one of these extensions.
        let header = !colon
            && matches!(text.as_bytes().last(), Some(b's' | b'x' | b'e' | b'o'))
            && source.iter().any(|e| text.ends_with(e));
        if let Some(c) = if header { FILE.captures(text) } else { None } {
            file = Some((i, c[1].to_string()));
            continue;
        }
        let Some((header, path)) = &file else {
            continue;
        };
        let problem = colon
            && text.starts_with(' ')
            && (text.contains("  error  ") || text.contains("  warning  "));
        let Some(c) = (if problem {
            PROBLEM.captures(text)
        } else {
            None
        }) else {
            if !text.trim().is_empty() {
                file = None;
            }
            continue;
        };
        let first_of_file = out.findings.last().is_none_or(|f| f.end <= *header);
        out.findings.push(Finding {
            start: if first_of_file { *header } else { i },
            end: i + 1,
            head: i,
            severity: if &c[2] == "error" {
                Severity::Error
            } else {
                Severity::Warning
            },
            rule: c[4].to_string(),
            message: c[3].to_string(),
            location: format!("{path}:{}", &c[1]),
        });
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
    fn stylish() {
        let f = findings(
            "
/tmp/p/src/cart/api.js
  5:9   error  'cartCache' is assigned a value but never used  no-unused-vars
  7:18  error  Expected '===' and instead saw '=='             eqeqeq

/tmp/p/src/cart/store.js
  15:3  warning  Unexpected console statement  no-console

✖ 3 problems (2 errors, 1 warning)
",
        );
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].location, "/tmp/p/src/cart/api.js:5:9");
        assert_eq!(f[0].rule, "no-unused-vars");
        assert_eq!(
            f[0].message,
            "'cartCache' is assigned a value but never used"
        );
        assert_eq!((f[0].start, f[0].end), (1, 3));
        assert_eq!((f[1].start, f[1].end), (3, 4));
        assert_eq!((f[2].start, f[2].severity), (5, Severity::Warning));
    }

    #[test]
    fn grouped_paths_say_which_directory_they_are_relative_to() {
        let mut out = String::new();
        for i in 0..12 {
            let dir = if i % 3 == 0 { "lib" } else { "src" };
            out.push_str(&format!("\n/tmp/project/app/{dir}/m{i}.js\n  7:18  error  Expected '===' and instead saw '=='  eqeqeq\n"));
        }
        out.push_str("\n✖ 12 problems (12 errors, 0 warnings)\n");
        let argv: Vec<String> = vec!["eslint".into(), ".".into()];
        let req = crate::Request {
            argv: &argv,
            stdout: out.as_bytes(),
            stderr: b"",
            exit: 1,
        };
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("0a1b2c3d"));
        let v = crate::view(&req, &opts);
        let text = String::from_utf8_lossy(&v.stdout);
        let group = text
            .lines()
            .find(|l| l.starts_with("same eqeqeq "))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            group,
            "same eqeqeq ×12 (paths from /tmp/project/; each at column 18) at: app/lib/m0.js:7, app/src/m1.js:7, app/src/m2.js:7, app/lib/m3.js:7, app/src/m4.js:7, app/src/m5.js:7, app/lib/m6.js:7, app/src/m7.js:7, app/src/m8.js:7, app/lib/m9.js:7, app/src/m10.js:7, app/src/m11.js:7"
        );
    }

    #[test]
    fn compact() {
        let f = findings("/p/a.js: line 5, col 9, Error - 'x' is defined but never used. (no-unused-vars)\n\n1 problem\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].location, "/p/a.js:5:9");
        assert_eq!(f[0].rule, "no-unused-vars");
    }
}
