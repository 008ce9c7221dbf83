//! Cause: one cause is reported once.
//!
//! A wrong field type is reported at every use site: 150 diagnostics, one edit.
//! Findings are grouped by severity, rule and the shape of their message (its quoted
//! values taken out), and a region of consecutive findings becomes one digest: each
//! cause's first report verbatim, then every other location of that cause. Where
//! the messages differ in their values (which import is unused), each report keeps
//! its whole message on a line of its own, without the source it quotes; when that
//! does not fit the room the digest has, each location is listed with its values
//! alone. Nothing is lost (every location is listed, every value kept) and the raw
//! region stays one marker away.
//!
//! Runs after classify (which finds the findings) and before context, which would
//! otherwise force-keep every one of them. Grouped lines are dropped, and context
//! never rescues a dropped line.

use std::collections::HashMap;

use crate::digest::{slots, Body, Digest, FindingGroup};
use crate::doc::{Class, Doc, Fate, Reason, Severity};

/// Bytes a marker with a digest costs, about; a digest must save more than this.
const MARKER_COST: usize = 90;

/// Builds the findings digests. `apply` then drops the regions of every digest
/// (these and the shapes') that pays for itself.
pub fn run(doc: &mut Doc) {
    if doc.findings.len() < 2 {
        return;
    }
    // Group by cause, in order of first appearance.
    let mut index: HashMap<(Severity, String, String), usize> = HashMap::new();
    let mut groups: Vec<(FindingGroup, Vec<Vec<String>>)> = Vec::new();
    let mut group_of = Vec::with_capacity(doc.findings.len());
    // Each group's first report as `form` has it.
    let mut first_form: Vec<String> = Vec::new();
    for f in &doc.findings {
        let (shape, values) = slots(&f.message);
        let key = (f.severity, f.rule.clone(), shape);
        let g = *index.entry(key).or_insert_with(|| {
            let rule = if f.rule.is_empty() {
                format!("{:?}", f.severity).to_lowercase()
            } else {
                f.rule.clone()
            };
            groups.push((
                FindingGroup {
                    error: f.severity == Severity::Error,
                    rule,
                    example: (f.head..f.end).collect(),
                    at: Vec::new(),
                    said: Vec::new(),
                    alike: f.end > f.head + 1,
                },
                Vec::new(),
            ));
            first_form.push(form(doc, f));
            groups.len() - 1
        });
        if groups[g].0.alike && !groups[g].0.at.is_empty() {
            groups[g].0.alike = form(doc, f) == first_form[g];
        }
        // The example is the first report (in a cascade, the root cause); when a
        // later report carries a note or help the first lacks (gcc's 'did you
        // forget to include'), that line joins it.
        let lines = &doc.lines;
        let is_hint = |i: usize| {
            let t = lines[i].text.trim_start();
            lines[i].colon
                && (t.starts_with("help:") || t.starts_with("= help:") || t.contains(": note: "))
        };
        if !groups[g].0.example.iter().any(|&i| is_hint(i)) {
            if let Some(i) = (f.head + 1..f.end).find(|&i| is_hint(i)) {
                groups[g].0.example.push(i);
            }
        }
        groups[g].0.at.push((f.location.clone(), Vec::new()));
        // The group's head names the rule; a report repeats it only where the tool
        // prints it as part of the message's line (ruff's `F841 Local variable …`).
        let with_rule = format!("{} {}", f.rule, f.message);
        groups[g].0.said.push(
            if !f.rule.is_empty() && doc.lines[f.head].text.contains(with_rule.as_str()) {
                with_rule
            } else {
                f.message.clone()
            },
        );
        groups[g].1.push(values);
        group_of.push(g);
    }
    if groups.iter().all(|(g, _)| g.at.len() < 2) {
        return;
    }
    // Keep only the values that differ between a group's reports.
    for (g, values) in groups.iter_mut() {
        let first = values[0].clone();
        let differs: Vec<bool> = (0..first.len())
            .map(|k| values.iter().any(|v| v.get(k) != first.get(k)))
            .collect();
        for ((_, at_vals), v) in g.at.iter_mut().zip(values.iter()) {
            *at_vals = v
                .iter()
                .enumerate()
                .filter(|(k, _)| differs.get(*k).copied().unwrap_or(true))
                .map(|(_, x)| x.clone())
                .collect();
        }
    }
    // Regions: findings separated by nothing but blank lines. Each lists the causes
    // it shows first, and every cause its findings belong to.
    let mut regions: Vec<(usize, usize, Vec<usize>, Vec<usize>)> = Vec::new();
    let mut placed = vec![false; groups.len()];
    // The region each group was last listed in, plus one (0: none yet).
    let mut listed_in = vec![0usize; groups.len()];
    for (fi, f) in doc.findings.iter().enumerate() {
        let joins = regions.last().is_some_and(|(_, end, _, _)| {
            *end <= f.start
                && doc.lines[*end..f.start]
                    .iter()
                    .all(|l| l.class == Class::Blank)
                && doc.lines[*end.min(&f.start)].stream == doc.lines[f.start].stream
        });
        if !joins {
            regions.push((f.start, f.end, Vec::new(), Vec::new()));
        }
        let n = regions.len();
        let r = regions.last_mut().expect("a region");
        r.1 = f.end;
        let g = group_of[fi];
        if !placed[g] {
            placed[g] = true;
            r.2.push(g);
        }
        if listed_in[g] != n {
            listed_in[g] = n;
            r.3.push(g);
        }
    }
    let stream_of = |i: usize| doc.lines[i].stream;
    let mut digests = Vec::new();
    for (start, end, gs, all) in regions {
        let needs: Vec<usize> = all.iter().map(|&g| groups[g].0.example[0]).collect();
        let body: Vec<FindingGroup> = gs.iter().map(|&g| groups[g].0.clone()).collect();
        // A group's severity is its first report's (severity is part of its key).
        let failure = gs.iter().any(|&g| groups[g].0.error);
        digests.push(Digest {
            stream: stream_of(start),
            start,
            end,
            failure,
            body: Body::Findings(body),
            needs,
            room: None,
        });
    }
    doc.digests.extend(digests);
    doc.digests.sort_by_key(|d| d.start);
}

/// A report's lines with its location and every run of digits taken out: two
/// reports of the same form differ only in where they are and in their numbers
/// (line numbers in a gutter, a literal in the quoted code). A run of spaces
/// counts as one, since a gutter widens with its line numbers (` 6 |`, `106 |`,
/// and the bare `|` lines around them).
fn form(doc: &Doc, f: &crate::doc::Finding) -> String {
    let path = f.location.split([':', '(']).next().unwrap_or("");
    let mut out = String::new();
    for l in &doc.lines[f.start..f.end] {
        let mut t = l.text.replace(f.location.as_str(), "@");
        if !path.is_empty() {
            t = t.replace(path, "@");
        }
        let mut last = ' ';
        for c in t.trim().chars() {
            let c = if c.is_ascii_digit() {
                '#'
            } else if c.is_whitespace() {
                ' '
            } else {
                c
            };
            if !(c == last && (c == '#' || c == ' ')) {
                out.push(c);
            }
            last = c;
        }
        out.push('\n');
    }
    out
}

/// Drops the lines of every digest that is smaller than what it replaces; the rest
/// are discarded and their regions stay as printed.
///
/// Under the budget (the whole output is at most `budget` bytes) a digest is used
/// only when it drops nothing a reader uses: a diff's digest drops the context
/// that places a change, and a findings digest whose reports span more than one
/// line (an excerpt, a `help:` with its suggested code) drops those lines for
/// every report but the first; under the budget both read as the tool printed
/// them. Findings of one line each (tsc, mypy, ruff concise) still group.
pub fn apply(doc: &mut Doc, budget: usize) {
    let mut digests = std::mem::take(&mut doc.digests);
    let raw_total: usize = doc.lines.iter().map(|l| l.raw.len() + 1).sum();
    if raw_total <= budget {
        let findings = &doc.findings;
        digests.retain(|d| match &d.body {
            Body::Sections(_) => false,
            Body::History(h) => h.commits.iter().all(|c| c.patch.is_empty()),
            Body::Findings(_) => !findings
                .iter()
                .any(|f| f.start >= d.start && f.end <= d.end && f.end > f.head + 1),
            _ => true,
        });
    }
    // Sizes first: a cause's digest can pay for itself through the later regions
    // it lets go (a cascade reported file by file, between other lines).
    let sized: Vec<(Digest, Vec<usize>, isize)> = digests
        .into_iter()
        .map(|d| {
            let raw: usize = doc.lines[d.start..d.end]
                .iter()
                .map(|l| l.text.len() + 1)
                .sum();
            let digest: usize = d
                .lines(doc, crate::digest::Detail::Compact)
                .iter()
                .map(|l| l.len() + 1)
                .sum();
            let own: Vec<usize> = match &d.body {
                Body::Findings(gs) => gs.iter().map(|g| g.example[0]).collect(),
                _ => Vec::new(),
            };
            let saving = raw as isize - (digest + MARKER_COST) as isize;
            (d, own, saving)
        })
        .collect();
    // Which digest lists each cause, and what the later regions standing only for
    // one digest's causes would save (linear: a region counts toward the one
    // digest that lists all of its causes).
    let mut owner: HashMap<usize, usize> = HashMap::new();
    for (k, (_, own, _)) in sized.iter().enumerate() {
        for &g in own {
            owner.entry(g).or_insert(k);
        }
    }
    let mut bonus = vec![0isize; sized.len()];
    for (e, own, saving) in &sized {
        if !own.is_empty() || *saving <= 0 || e.needs.is_empty() {
            continue;
        }
        let owners: Vec<Option<&usize>> = e.needs.iter().map(|g| owner.get(g)).collect();
        if let Some(Some(&k)) = owners.first() {
            if owners.iter().all(|o| *o == Some(&k)) {
                bonus[k] += saving;
            }
        }
    }
    let mut kept = Vec::with_capacity(sized.len());
    let mut last_end = 0;
    // The causes whose every location a shown digest lists.
    let mut listed: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for (k, (d, own, saving)) in sized.into_iter().enumerate() {
        if d.start < last_end || d.start >= d.end {
            continue;
        }
        if !d
            .needs
            .iter()
            .all(|n| listed.contains(n) || own.contains(n))
        {
            // Its findings' locations are listed only by a digest that is not shown.
            continue;
        }
        if saving + bonus[k] <= 0 {
            continue;
        }
        for l in &mut doc.lines[d.start..d.end] {
            if l.fate != Fate::Force {
                l.fate = Fate::Drop(Reason::Grouped);
            }
        }
        last_end = d.end;
        listed.extend(own);
        kept.push(d);
    }
    doc.digests = kept;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Detail;
    use crate::stages::classify;

    fn cascade(n: usize) -> String {
        let mut s = String::from("   Compiling orders v0.1.0\n");
        for i in 0..n {
            s.push_str(&format!(
                "error[E0308]: mismatched types\n  --> src/m.rs:{}:11\n   |\n{} |     units(item.quantity)\n   |           ^^^^^^^^^^^^^ expected `u32`, found `String`\n\n",
                i * 5 + 3,
                i * 5 + 3
            ));
        }
        s.push_str(&format!(
            "error: could not compile `orders` (lib) due to {n} previous errors\n"
        ));
        s
    }

    #[test]
    fn one_cause_is_reported_once_with_every_location() {
        let text = cascade(40);
        let argv = vec![];
        let mut doc = Doc::new(&argv, "", &text, 101);
        classify::run(&mut doc);
        run(&mut doc);
        apply(&mut doc, 0);
        assert_eq!(doc.digests.len(), 1);
        let lines = doc.digests[0].lines(&doc, Detail::Full);
        assert_eq!(lines[0], "error[E0308]: mismatched types");
        assert_eq!(lines[1], "  --> src/m.rs:3:11");
        assert!(lines[4].ends_with("expected `u32`, found `String`"));
        let list = lines.last().unwrap();
        assert!(
            list.starts_with(
                "same E0308 ×40 (each at column 11; each as the report above but for its numbers) \
                 at: src/m.rs:3, src/m.rs:8, "
            ),
            "{list}"
        );
        assert!(list.ends_with("src/m.rs:198"), "{list}");
        // The compile line and the summary stay; the findings between are grouped.
        let n = doc.lines.len();
        assert!(doc.lines[0].shown());
        assert!(doc.lines[n - 1].shown());
        assert!(doc.lines[1..n - 2]
            .iter()
            .all(|l| l.fate == Fate::Drop(Reason::Grouped)));
    }

    /// The list line says the reports read as its example only when every one
    /// of them, the code it quotes included, does but for its numbers: one
    /// report quoting other code, or one without the note the rest carry, and
    /// the line no longer says it.
    #[test]
    fn a_cause_says_its_reports_read_alike_only_when_each_does() {
        let list = |text: &str| {
            let argv = vec![];
            let mut doc = Doc::new(&argv, "", text, 101);
            classify::run(&mut doc);
            run(&mut doc);
            apply(&mut doc, 0);
            doc.digests[0].lines(&doc, Detail::Full).pop().unwrap()
        };
        let alike = "each as the report above but for its numbers";
        let text = cascade(12);
        assert!(list(&text).contains(alike), "{}", list(&text));
        // Other code at the same column, in the seventh report only.
        let other = text.replacen(
            "33 |     units(item.quantity)",
            "33 |     units(item.qty_ord)",
            1,
        );
        assert_ne!(other, text);
        let l = list(&other);
        assert!(
            l.starts_with("same E0308 ×12 (each at column 11) at: "),
            "{l}"
        );
        // A note the first report lacks.
        let noted = text.replacen(
            "found `String`\n\n",
            "found `String`\n   = note: the field is declared in src/lib.rs\n\n",
            3,
        );
        let l = list(&noted);
        assert!(
            l.starts_with("same E0308 ×12 (each at column 11) at: "),
            "{l}"
        );
        // Reports of one line each say nothing more than `same`.
        let one_line: String = (0..12)
            .map(|i| format!("src/m{i}.ts({},7): error TS2322: Type 'string' is not assignable to type 'number'.\n", i + 3))
            .collect();
        let argv = vec!["tsc".to_string()];
        let mut doc = Doc::new(&argv, &one_line, "", 2);
        classify::run(&mut doc);
        run(&mut doc);
        apply(&mut doc, 0);
        let lines: Vec<String> = doc
            .digests
            .iter()
            .flat_map(|d| d.lines(&doc, Detail::Full))
            .collect();
        assert!(
            lines.iter().any(|l| l.starts_with("same TS2322 ×12")),
            "{lines:#?}"
        );
        assert!(lines.iter().all(|l| !l.contains(alike)), "{lines:#?}");
    }

    /// A header error repeated by every file that includes it, each file's report
    /// between make's own lines: one cause, across regions that cannot be joined.
    fn c_cascade(files: usize) -> String {
        let mut s = String::new();
        for i in 0..files {
            s.push_str(&format!(
                "In file included from src/c{i:02}.c:1:\ninclude/frame.h:6:5: error: unknown type name ‘size_t’\n    6 |     size_t width;\n      |     ^~~~~~\nsrc/c{i:02}.c: In function ‘c{i:02}’:\nsrc/c{i:02}.c:4:10: error: unknown type name ‘size_t’\n    4 |     for (size_t y = 0; y < 9; y++) {{\n      |          ^~~~~~\nsrc/c{i:02}.c:2:1: note: ‘size_t’ is defined in header ‘<stddef.h>’; did you forget to ‘#include <stddef.h>’?\n  +++ |+#include <stddef.h>\nmake: *** [Makefile:9: build/c{i:02}.o] Error 1\n"
            ));
        }
        s
    }

    #[test]
    fn a_cascade_across_regions_is_one_digest_that_pays_for_the_regions_it_frees() {
        let text = c_cascade(8);
        let argv = vec![];
        let mut doc = Doc::new(&argv, "", &text, 2);
        classify::run(&mut doc);
        run(&mut doc);
        apply(&mut doc, 0);
        // The first region alone is smaller raw than the digest listing all sixteen
        // reports; the seven regions it lets go pay for it.
        assert_eq!(doc.digests.len(), 8);
        let lines = doc.digests[0].lines(&doc, Detail::Full);
        // The example is the first report (the root cause), with the note a later
        // report carries.
        assert_eq!(
            lines[0],
            "include/frame.h:6:5: error: unknown type name ‘size_t’"
        );
        assert!(lines
            .iter()
            .any(|l| l.contains("did you forget to ‘#include <stddef.h>’")));
        let list = lines.last().unwrap();
        // One message everywhere: the line says so, and the files that share a
        // line fold into one brace range that expands back to each of them.
        assert_eq!(
            list,
            "same error ×16 at: include/frame.h:6:5 (×8), src/c{00..07}.c:4:10"
        );
        // make's lines between the regions stay.
        let shown: Vec<&str> = doc
            .lines
            .iter()
            .filter(|l| l.shown())
            .map(|l| l.text.as_ref())
            .collect();
        assert_eq!(shown.len(), 8, "{shown:#?}");
        assert!(shown.iter().all(|l| l.starts_with("make: *** ")));
    }

    /// The names one brace word stands for: `a{1..3}b`, `a{x,y}b`, one level.
    fn expand(word: &str) -> Vec<String> {
        let (Some(open), Some(close)) = (word.find('{'), word.find('}')) else {
            return vec![word.to_string()];
        };
        let (pre, inner, post) = (&word[..open], &word[open + 1..close], &word[close + 1..]);
        let alts: Vec<String> = match inner.split_once("..") {
            Some((a, b)) => {
                let (x, y): (u32, u32) = (a.parse().unwrap(), b.parse().unwrap());
                (x..=y).map(|n| format!("{n:0w$}", w = a.len())).collect()
            }
            None => inner.split(',').map(String::from).collect(),
        };
        alts.iter().map(|a| format!("{pre}{a}{post}")).collect()
    }

    #[test]
    fn a_make_k_cascade_names_every_failing_file_and_line_as_the_same_error() {
        // `make -k` of tasks/cascading-errors: sixteen files, each failing on
        // the header they include and on its own two uses of `size_t`. The view
        // listed the places without saying they held the one error shown, and
        // an agent opened src/codec_00.c to find out.
        let raw = include_str!("../../tests/fixtures/make-k-cascade.stdout");
        let argv: Vec<String> = ["make", "-k"].map(String::from).to_vec();
        let req = crate::Request {
            argv: &argv,
            stdout: raw.as_bytes(),
            stderr: b"",
            exit: 2,
        };
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("0a1b2c3d"));
        let v = crate::view(&req, &opts);
        let text = String::from_utf8_lossy(&v.stdout);
        let group = text
            .lines()
            .find(|l| l.starts_with("same error ×64 at: "))
            .unwrap_or_else(|| panic!("{text}"));
        let named: Vec<String> = group
            .split_once(" at: ")
            .unwrap()
            .1
            .split(", ")
            .flat_map(|w| expand(w.split(' ').next().unwrap()))
            .collect();
        for l in raw.lines() {
            if let Some((at, _)) = l.split_once(": error: ") {
                assert!(named.iter().any(|n| n == at), "{at} not named: {group}");
            }
        }
        assert!(
            group.contains("src/codec_{00..15}.c:4:10") && group.len() < 220,
            "{group}"
        );
    }

    #[test]
    fn a_region_goes_only_with_the_digest_that_lists_its_locations() {
        // Two reports of one cause, far apart and too small to pay for a digest:
        // neither region may go (the second's location would be listed nowhere).
        let text = "x.c:1:1: warning: unused variable ‘a’ [-Wunused-variable]\nmake: *** [Makefile:2: x.o] Error 1\ny.c:1:1: warning: unused variable ‘b’ [-Wunused-variable]\n";
        let argv = vec![];
        let mut doc = Doc::new(&argv, "", text, 2);
        classify::run(&mut doc);
        run(&mut doc);
        apply(&mut doc, 0);
        assert!(doc.digests.is_empty());
        assert!(doc
            .lines
            .iter()
            .all(|l| l.fate != Fate::Drop(Reason::Grouped)));
    }

    #[test]
    fn differing_values_are_listed_per_location() {
        let text = "a.py:3:8: F401 [*] `os` imported but unused\nb.py:3:8: F401 [*] `re` imported but unused\nc.py:9:1: F841 Local variable `x` is assigned to but never used\nd.py:3:8: F401 [*] `os` imported but unused\nFound 4 errors.\n";
        let argv = vec![];
        let mut doc = Doc::new(&argv, text, "", 1);
        classify::run(&mut doc);
        run(&mut doc);
        let lines = doc.digests[0].lines(&doc, Detail::Full);
        assert_eq!(
            lines,
            vec![
                "a.py:3:8: F401 [*] `os` imported but unused",
                "F401 ×3: a.py:3:8 `os`, b.py:3:8 `re`, d.py:3:8 `os`",
                "c.py:9:1: F841 Local variable `x` is assigned to but never used",
            ]
        );
    }

    #[test]
    fn one_error_code_with_different_labels_keeps_each_locations_values() {
        let mut text = String::new();
        for (i, (want, got)) in [
            ("u32", "String"),
            ("AccountId", "u64"),
            ("u32", "String"),
            ("AccountId", "u64"),
        ]
        .iter()
        .enumerate()
        {
            text.push_str(&format!(
                "error[E0308]: mismatched types\n  --> src/m{i}.rs:{l}:9\n   |\n{l} |     pay(x)\n   |         ^ expected `{want}`, found `{got}`\n\n",
                l = 10 + i
            ));
        }
        let argv = vec![];
        let mut doc = Doc::new(&argv, "", &text, 1);
        classify::run(&mut doc);
        run(&mut doc);
        let lines = doc.digests[0].lines(&doc, Detail::Full);
        let all = lines.join("\n");
        // Both messages survive, each with the locations that reported it.
        assert!(all.contains("expected `u32`, found `String`"), "{all}");
        assert!(
            all.contains("`AccountId`") && all.contains("`u64`"),
            "{all}"
        );
        // Each report keeps its whole message, one line each, under the head that
        // names its code (rustc prints none before the message).
        assert!(
            all.contains(
                "E0308 ×4:\n  src/m1.rs:11:9 mismatched types: expected `AccountId`, found `u64`"
            ),
            "{all}"
        );
        assert!(
            all.contains("src/m2.rs:12:9 mismatched types: expected `u32`, found `String`"),
            "{all}"
        );
        // Cut to less room, the digest lists each location with its values.
        let (cut, _) = doc.digests[0].lines_within(&doc, Detail::Full, 200);
        let cut = cut.join("\n");
        assert!(cut.contains("src/m1.rs:11:9 `AccountId` `u64`"), "{cut}");
        assert!(cut.len() <= 200, "{cut}");
    }

    #[test]
    fn a_report_repeats_its_rule_only_where_the_tool_prints_it_first() {
        let lines = |text: &str| {
            let argv = vec![];
            let mut doc = Doc::new(&argv, text, "", 1);
            classify::run(&mut doc);
            run(&mut doc);
            doc.digests[0].lines(&doc, Detail::Full)
        };
        let mypy: String = ["Invoice", "Refund", "Payout"]
            .iter()
            .map(|t| format!("billing/{t}.py:20: error: Incompatible return value type (got \"None\", expected \"{t}\")  [return-value]\n"))
            .collect();
        assert_eq!(
            lines(&mypy)[1..],
            [
                "return-value ×3:",
                "  billing/Refund.py:20 Incompatible return value type (got \"None\", expected \"Refund\")",
                "  billing/Payout.py:20 Incompatible return value type (got \"None\", expected \"Payout\")",
            ]
        );
        // ruff prints the code first, and the line reads as ruff's own.
        let ruff: String = ["refund", "report"]
            .iter()
            .map(|n| format!("F841 Local variable `{n}_total` is assigned to but never used\n  --> svc/api/{n}.py:12:5\n   |\n12 |     {n}_total = 0\n   |     ^^^^^^^^^^^^\n   |\nhelp: Remove assignment to unused variable `{n}_total`\n\n"))
            .collect();
        let got = lines(&ruff);
        assert_eq!(
            got.last().unwrap(),
            "  svc/api/report.py:12:5 F841 Local variable `report_total` is assigned to but never used",
            "{got:?}"
        );
    }

    #[test]
    fn two_unrelated_findings_are_left_alone() {
        let text = "a.c:1:1: error: one thing\nb.c:2:2: warning: another [-Wx]\n";
        let argv = vec![];
        let mut doc = Doc::new(&argv, text, "", 1);
        classify::run(&mut doc);
        run(&mut doc);
        apply(&mut doc, 0);
        assert!(doc.digests.is_empty());
        assert!(doc.lines.iter().all(|l| l.shown()));
    }

    /// A diff of `files` files, each one hunk with context around two changes.
    fn diff(files: usize) -> String {
        let mut d = String::new();
        for f in 0..files {
            d.push_str(&format!(
                "diff --git a/src/m{f}.rs b/src/m{f}.rs\nindex 1a2b3c4..5d6e7f8 100644\n--- a/src/m{f}.rs\n+++ b/src/m{f}.rs\n@@ -10,7 +10,7 @@ fn total_{f}() {{\n     let a = {f};\n     let b = a * {f};\n-    let c = a + b;\n+    let c = a - b;\n     let d = b + {f};\n     let e = d * 2;\n     let f = e - {f};\n"
            ));
        }
        d
    }

    #[test]
    fn a_diff_under_the_budget_keeps_its_context_and_a_larger_one_is_digested() {
        let argv: Vec<String> = vec!["git".into(), "diff".into()];
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("0a1b2c3d"));
        let small = diff(4);
        assert!(small.len() < crate::DEFAULT_BUDGET);
        let req = crate::Request {
            argv: &argv,
            stdout: small.as_bytes(),
            stderr: b"",
            exit: 0,
        };
        let v = crate::view(&req, &opts);
        assert!(!v.elided, "{}", String::from_utf8_lossy(&v.stdout));
        assert_eq!(&*v.stdout, small.as_bytes());
        let big = diff(60);
        assert!(big.len() > crate::DEFAULT_BUDGET);
        let req = crate::Request {
            argv: &argv,
            stdout: big.as_bytes(),
            stderr: b"",
            exit: 0,
        };
        let v = crate::view(&req, &opts);
        assert!(v.elided);
        let text = String::from_utf8_lossy(&v.stdout);
        assert!(text.contains("+    let c = a - b;"), "{text}");
        assert!(v.len() < big.len() / 2);
    }
}
