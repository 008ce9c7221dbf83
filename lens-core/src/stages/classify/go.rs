//! Go's toolchain: `go build`, `go vet` and `go test`'s build failures print
//! `path.go:line:col: message` under a `# package` header, with no severity word;
//! golangci-lint appends its linter (`(errcheck)`). A message longer than a line
//! continues on tab-indented lines (`\thave (int)` / `\twant (string)`).
//!
//! A `# package` header belongs to the report under it, so a package's reports
//! and its header go together into a cause digest; the package stays named by
//! its directory in every location.
//!
//! golangci-lint's JSON report (`--out-format=json`, or v2's `--output.json.path
//! stdout`) holds the same reports as objects, each with the source lines it
//! quotes and byte offsets. Its digest is one line per issue in the form the
//! text output prints (`path.go:line:col: message (linter, severity)`), so every
//! location, message, linter and severity stays; the offsets, and past a handful
//! of issues the quoted source (which the file holds), are in the stored output.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::Found;
use crate::doc::{Doc, Finding, Severity};
use crate::stages::excerpt::HANDFUL;

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

/// The digest lines of a golangci-lint JSON report: a count, one line per issue,
/// then the report's own warnings and error. `None` when `v` is not such a report
/// or holds no issue (a short document reads as well as printed).
pub(super) fn lint_report(v: &Value) -> Option<Vec<String>> {
    let issues = v.get("Issues")?.as_array()?;
    if issues.is_empty() {
        return None;
    }
    let mut lines = vec![String::new()];
    let mut files = BTreeSet::new();
    for issue in issues {
        let pos = issue.get("Pos")?;
        let file = pos.get("Filename")?.as_str()?;
        let line = pos.get("Line")?.as_u64()?;
        let text = issue.get("Text")?.as_str()?;
        let mut said = vec![issue.get("FromLinter")?.as_str()?];
        if let Some(severity) = issue.get("Severity").and_then(Value::as_str) {
            if !severity.is_empty() {
                said.push(severity);
            }
        }
        if issue.get("Replacement").is_some_and(|r| !r.is_null()) {
            said.push("with a fix");
        }
        let mut at = format!("{file}:{line}");
        if let Some(col) = pos.get("Column").and_then(Value::as_u64).filter(|c| *c > 0) {
            at.push_str(&format!(":{col}"));
        }
        files.insert(file);
        lines.push(format!("{at}: {text} ({})", said.join(", ")));
        // A handful of issues keep the source they quote, as a handful of causes
        // keep their excerpts; past that the file holds it.
        if issues.len() <= HANDFUL {
            let quoted = issue.get("SourceLines").and_then(Value::as_array);
            lines.extend(
                quoted
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(String::from),
            );
        }
    }
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    lines[0] = format!(
        "{} in {}",
        plural(issues.len(), "issue"),
        plural(files.len(), "file")
    );
    let report = v.get("Report");
    for w in report
        .and_then(|r| r.get("Warnings"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = w.get("Text").and_then(Value::as_str).unwrap_or_default();
        match w
            .get("Tag")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            Some(tag) => lines.push(format!("warning ({tag}): {text}")),
            None => lines.push(format!("warning: {text}")),
        }
    }
    if let Some(e) = report
        .and_then(|r| r.get("Error"))
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        lines.push(format!("error: {e}"));
    }
    Some(lines)
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

    /// A golangci-lint JSON report as v1 prints it with `--out-format=json`.
    fn lint_json() -> String {
        let issue = |linter: &str, text: &str, sev: &str, file: &str, line: u32, col: u32| {
            format!(
                r#"    {{
      "FromLinter": "{linter}",
      "Text": "{text}",
      "Severity": "{sev}",
      "SourceLines": [
        "\tdefer f.Close()",
        "\treturn nil"
      ],
      "Replacement": null,
      "Pos": {{
        "Filename": "{file}",
        "Offset": 811,
        "Line": {line},
        "Column": {col}
      }},
      "ExpectNoLint": false,
      "ExpectedNoLintLinter": ""
    }}"#
            )
        };
        let issues = [
            issue(
                "errcheck",
                "Error return value of `f.Close` is not checked",
                "error",
                "store/file.go",
                31,
                13,
            ),
            issue(
                "errcheck",
                "Error return value of `w.Flush` is not checked",
                "error",
                "store/file.go",
                77,
                9,
            ),
            issue(
                "staticcheck",
                "SA4006: this value of `n` is never used",
                "warning",
                "api/handler.go",
                12,
                2,
            ),
            issue(
                "revive",
                "exported function Serve should have comment or be unexported",
                "",
                "api/serve.go",
                5,
                0,
            ),
        ];
        format!(
            "{{\n  \"Issues\": [\n{}\n  ],\n  \"Report\": {{\n    \"Warnings\": [\n      {{\"Tag\": \"runner\", \"Text\": \"Can't run linter goanalysis_metalinter: buildir: failed to load package\"}}\n    ],\n    \"Linters\": [{{\"Name\": \"errcheck\", \"Enabled\": true}}]\n  }}\n}}\n",
            issues.join(",\n")
        )
    }

    #[test]
    fn a_golangci_json_report_is_one_line_per_issue() {
        let lines = testing::digest_lines(&lint_json());
        assert_eq!(
            lines,
            vec![
                "4 issues in 3 files",
                "store/file.go:31:13: Error return value of `f.Close` is not checked (errcheck, error)",
                "store/file.go:77:9: Error return value of `w.Flush` is not checked (errcheck, error)",
                "api/handler.go:12:2: SA4006: this value of `n` is never used (staticcheck, warning)",
                "api/serve.go:5: exported function Serve should have comment or be unexported (revive)",
                "warning (runner): Can't run linter goanalysis_metalinter: buildir: failed to load package",
            ]
        );
    }

    #[test]
    fn a_golangci_v2_report_is_its_first_line_and_the_summary_stays() {
        let one_line: String = lint_json()
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("");
        let out = format!("{one_line}\n4 issues:\n* errcheck: 2\n* revive: 1\n* staticcheck: 1\n");
        let argv = vec![];
        let mut doc = crate::doc::Doc::new(&argv, &out, "", 1);
        super::super::run(&mut doc);
        assert_eq!(doc.digests.len(), 1);
        assert_eq!((doc.digests[0].start, doc.digests[0].end), (0, 1));
    }

    #[test]
    fn the_view_of_a_golangci_report_keeps_every_location_and_message() {
        let raw = lint_json();
        let argv: Vec<String> = ["golangci-lint", "run", "--out-format=json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let req = crate::Request {
            argv: &argv,
            stdout: raw.as_bytes(),
            stderr: b"",
            exit: 1,
        };
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("1a2b3c4d"));
        let v = crate::view(&req, &opts);
        let view = String::from_utf8_lossy(&v.stdout);
        assert!(view.len() * 2 < raw.len(), "{view}");
        assert!(view.starts_with("[lens: elided stdout 1-"), "{view}");
        for needle in [
            "store/file.go:31:13",
            "`w.Flush`",
            "api/serve.go:5:",
            "SA4006",
            "staticcheck, warning",
            "buildir",
        ] {
            assert!(view.contains(needle), "{needle} in {view}");
        }
    }

    #[test]
    fn a_handful_of_issues_keep_the_source_they_quote() {
        let one = r#"{"Issues":[{"FromLinter":"errcheck","Text":"Error return value of `f.Close` is not checked","Severity":"error","SourceLines":["\tdefer f.Close()"],"Pos":{"Filename":"store/file.go","Line":31,"Column":13,"Offset":0}}]}"#;
        assert_eq!(
            testing::digest_lines(&format!("{one}\n")),
            vec![
                "1 issue in 1 file",
                "store/file.go:31:13: Error return value of `f.Close` is not checked (errcheck, error)",
                "\tdefer f.Close()",
            ]
        );
    }

    #[test]
    fn json_that_is_not_a_golangci_report_is_not_read_as_one() {
        let no_pos = r#"{"Issues": [{"FromLinter": "x", "Text": "y"}]}"#;
        let empty = r#"{"Issues": []}"#;
        for text in [no_pos, empty] {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            assert!(super::lint_report(&v).is_none(), "{text}");
        }
    }
}
