//! Go's toolchain: `go build`, `go vet` and `go test`'s build failures print
//! `path.go:line:col: message` under a `# package` header, with no severity word;
//! golangci-lint appends its linter (`(errcheck)`). A message longer than a line
//! continues on tab-indented lines (`\thave (int)` / `\twant (string)`).
//!
//! A `# package` header belongs to the report under it, so a package's reports
//! and its header go together into a cause digest; the package stays named by
//! its directory in every location.

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::doc::{Doc, Finding, Severity};

static REPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:vet: )?(\S+?\.go:\d+:\d+): (.+?)(?: \(([a-z][a-z0-9-]*)\))?$")
        .expect("compiles")
});

/// Adds every Go report in `range` to `out.findings`.
pub fn find(doc: &Doc, out: &mut Found, range: std::ops::Range<usize>) {
    let mut i = range.start;
    while i < range.end {
        let line = &doc.lines[i];
        // Cheap test first: a `.go:` before any space.
        let text = line.text.strip_prefix("vet: ").unwrap_or(&line.text);
        let plausible = line.colon && text.split(' ').next().is_some_and(|w| w.contains(".go:"));
        let Some(c) = plausible.then(|| REPORT.captures(&line.text)).flatten() else {
            i += 1;
            continue;
        };
        let mut end = i + 1;
        while end < range.end && doc.lines[end].text.starts_with('\t') {
            end += 1;
        }
        let message = c[2].trim_end();
        // gcc's form (`x.go:1:2: error: …`, from cgo) is gcc's finder's.
        if message.starts_with("error:") || message.starts_with("warning:") {
            i += 1;
            continue;
        }
        // The package header right above, if any, opens this report.
        let start = if i > range.start && doc.lines[i - 1].text.starts_with("# ") {
            i - 1
        } else {
            i
        };
        out.findings.push(Finding {
            start,
            end,
            head: i,
            severity: Severity::Error,
            rule: c.get(3).map_or("", |m| m.as_str()).to_string(),
            message: message.to_string(),
            location: c[1].to_string(),
        });
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use crate::stages::classify::testing;

    #[test]
    fn build_vet_and_lint_reports() {
        let f = testing::findings(
            "# example.com/ledger/payouts
payouts/sum.go:12:20: cannot use r.Amount (variable of type string) as int64 value in argument to money.Add
payouts/sum.go:40:9: cannot use v (variable of type int) as string value in return statement
vet: invoices/report.go:19:9: fmt.Sprintf format %d has arg r.ID of wrong type string
main.go:7:2: Error return value of `f.Close` is not checked (errcheck)
store/db.go:30:14: impossible type assertion: r.(T)
\thave Read(p []byte) (int, error)
\twant Read() int
ok  \texample.com/ledger/money\t0.004s
",
            "",
        );
        assert_eq!(f.len(), 5, "{f:#?}");
        assert_eq!(f[0].location, "payouts/sum.go:12:20");
        assert_eq!((f[0].start, f[0].head), (0, 1));
        assert_eq!(f[1].start, 2);
        assert!(f[0].message.starts_with("cannot use r.Amount"));
        assert_eq!(f[2].location, "invoices/report.go:19:9");
        assert_eq!(f[3].rule, "errcheck");
        assert_eq!(
            f[3].message,
            "Error return value of `f.Close` is not checked"
        );
        // The have/want lines belong to their report.
        assert_eq!((f[4].start, f[4].end), (5, 8));
    }

    #[test]
    fn prose_with_a_go_file_is_not_a_report() {
        let f = testing::findings(
            "see main.go for details\nwrote main.go:3 lines\nmain.go: 3:4: spaced\n",
            "",
        );
        assert!(f.is_empty(), "{f:?}");
    }
}
