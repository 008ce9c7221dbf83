//! git: `git log`/`git show` in the default format (one line per commit, with
//! `--stat`'s totals and files, or followed by its `-p` patch as -U0 hunks), the long
//! `git status` (one line per section), and `git diff` (hunks narrowed to the changed
//! lines, each with the exact `@@` numbers `git diff -U0` would print).

use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::digest::{Body, Digest, Entry, List};
use crate::doc::{Class, Doc, Stream};
use crate::history::{Commit, History, Part};
use crate::stages::shorten::Nouns;

static COMMIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^commit ([0-9a-f]{40})(?: \(.*\))?$").expect("compiles"));
static HUNK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$").expect("compiles")
});

/// Adds digests for any git log, status or diff output in `range`.
pub fn find(doc: &Doc, found: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    if range.is_empty() {
        return;
    }
    let first = doc.lines[range.start].text.to_string();
    if first.starts_with("commit ") && COMMIT.is_match(&first) {
        log(doc, found, stream, range);
    } else if first.starts_with("On branch ") || first.starts_with("HEAD detached ") {
        status(doc, found, stream, range);
    } else if first.starts_with("diff --git ") {
        diff(doc, found, stream, range);
    }
}

/// `Tue Feb 3 05:00:00 2026 +0000` as `2026-02-03`.
fn short_date(date: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let p: Vec<&str> = date.split_whitespace().collect();
    match (
        p.get(1).and_then(|m| MONTHS.iter().position(|x| x == m)),
        p.get(2),
        p.get(4),
    ) {
        (Some(m), Some(d), Some(y)) => format!("{y}-{:02}-{:0>2}", m + 1, d),
        _ => date.trim().to_string(),
    }
}

fn is_commit(t: &str) -> bool {
    t.starts_with("commit ") && COMMIT.is_match(t)
}

/// `--stat`'s last line: ` 4 files changed, 73 insertions(+), 9 deletions(-)`.
fn is_stat_summary(t: &str) -> bool {
    let t = t.trim_start();
    t.split_once(' ').is_some_and(|(n, rest)| {
        n.bytes().all(|b| b.is_ascii_digit())
            && (rest.starts_with("file changed") || rest.starts_with("files changed"))
    })
}

/// One `--stat` file line: ` src/a.rs | 4 ++--` (or `Bin 0 -> 12 bytes`): the path.
fn stat_file(t: &str) -> Option<&str> {
    let (path, rest) = t.strip_prefix(' ')?.split_once(" | ")?;
    let rest = rest.trim_start();
    (rest.starts_with(|c: char| c.is_ascii_digit()) || rest.starts_with("Bin"))
        .then(|| path.trim())
        .filter(|p| !p.is_empty())
}

/// One entry per commit: hash, subject, author with address, date; with
/// `--stat`, the totals and every file it lists; with `-p`, its patch as -U0
/// hunks (every file and changed line, with exact numbers). `history` cuts it
/// by commit.
fn log(doc: &Doc, found: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let mut commits: Vec<Commit> = Vec::new();
    let mut i = range.start;
    let mut end = range.start;
    while i < range.end {
        let Some(c) = COMMIT.captures(&doc.lines[i].text) else {
            break;
        };
        let mut commit = Commit {
            hash: c[1][..7].to_string(),
            ..Commit::default()
        };
        let first = doc.lines[i].no;
        // Where a -p patch starts.
        let mut patch_from: Option<usize> = None;
        i += 1;
        while i < range.end && !is_commit(&doc.lines[i].text) {
            let t = &doc.lines[i].text;
            if patch_from.is_some() {
                // Inside a -p patch: everything up to the next commit is the patch.
            } else if let Some(a) = t.strip_prefix("Author: ") {
                commit.author = a.trim().to_string();
            } else if let Some(d) = t.strip_prefix("Date: ") {
                commit.date = short_date(d);
            } else if commit.subject.is_empty() && t.starts_with("    ") && !t.trim().is_empty() {
                commit.subject = t.trim().to_string();
            } else if t.starts_with("diff --git ") {
                patch_from = Some(i);
            } else if is_stat_summary(t) {
                commit.stat = t.trim().to_string();
            } else if let Some(f) = stat_file(t).filter(|_| !t.starts_with("    ")) {
                commit.files.push(f.to_string());
            } else if !t.starts_with(' ') && !t.trim().is_empty() && !t.starts_with("Merge: ") {
                // Not a commit's line any more: stop the digest here.
                break;
            }
            i += 1;
        }
        end = i;
        commit.lines = (first, doc.lines[i - 1].no);
        if let Some(from) = patch_from {
            commit.patch = diff_parts(doc, from..i);
        }
        commits.push(commit);
        if i < range.end && !is_commit(&doc.lines[i].text) {
            break;
        }
    }
    if commits.len() < 2 && commits.iter().all(|c| c.patch.is_empty()) {
        return;
    }
    // A file's heading is printed once when every commit changes that one file
    // alone (`git log -p -- path`).
    let files = |c: &Commit| -> Vec<String> {
        c.patch
            .iter()
            .filter_map(|p| match p {
                Part::File(f) => Some(f.clone()),
                _ => None,
            })
            .collect()
    };
    let one_file = commits
        .iter()
        .filter(|c| !c.patch.is_empty())
        .map(|c| {
            let f = files(c);
            (f.len() == 1).then(|| f[0].clone())
        })
        .reduce(|a, b| if a == b { a } else { None })
        .flatten();
    let mut prefix = Vec::new();
    if let Some(file) = &one_file {
        prefix.push(format!("{file} (every commit below)"));
        for c in &mut commits {
            c.patch.retain(|p| !matches!(p, Part::File(_)));
        }
    }
    found.digests.push(Digest {
        body: Body::History(History { prefix, commits }),
        ..Digest::of_lines(stream, range.start, end, Vec::new())
    });
}

fn status(doc: &Doc, found: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    // One entry per section, its files as items (cut between two of them to fit
    // the budget); the other lines as entries of their own.
    let line = |t: String| Entry {
        key: t,
        items: Vec::new(),
    };
    let mut out = vec![line(doc.lines[range.start].text.to_string())];
    let mut section = String::new();
    let mut items: Vec<String> = Vec::new();
    let flush = |out: &mut Vec<Entry>, section: &str, items: &mut Vec<String>| {
        if !items.is_empty() {
            out.push(Entry {
                key: format!("{section}:"),
                items: std::mem::take(items),
            });
        }
    };
    for i in range.start + 1..range.end {
        let t = doc.lines[i].text.to_string();
        if let Some(entry) = t.strip_prefix('\t') {
            // `\tmodified:   path`, or a bare `\tpath` in the untracked section.
            let (what, path) = match entry.split_once(":   ") {
                Some((w, p)) if !w.contains('/') => (w, p),
                _ => ("", entry),
            };
            let short = match what {
                "modified" | "both modified" => "M ",
                "new file" | "both added" | "added by us" | "added by them" => "A ",
                "deleted" | "both deleted" | "deleted by us" | "deleted by them" => "D ",
                "renamed" => "R ",
                "copied" => "C ",
                "typechange" => "T ",
                _ => "",
            };
            items.push(format!("{short}{}", path.trim()));
        } else if let Some(name) = t.strip_suffix(':').filter(|_| !t.starts_with(' ')) {
            flush(&mut out, &section, &mut items);
            section = match name {
                "Changes to be committed" => "staged".into(),
                "Changes not staged for commit" => "not staged".into(),
                "Untracked files" => "untracked".into(),
                "Unmerged paths" => "unmerged".into(),
                other => other.to_lowercase(),
            };
        } else if t.trim_start().starts_with("(use \"git") || t.trim().is_empty() {
            continue;
        } else {
            flush(&mut out, &section, &mut items);
            out.push(line(t));
        }
    }
    flush(&mut out, &section, &mut items);
    // Cut, a section's files fold and group by directory: none is left out
    // for a count alone.
    found.digests.push(Digest {
        body: Body::List(List {
            head: Vec::new(),
            template: None,
            entries: out,
            nouns: Nouns {
                item: ("file", "files"),
                name: None,
                sep: "/",
            },
            within: true,
        }),
        ..Digest::of_lines(stream, range.start, range.end, Vec::new())
    });
}

fn diff(doc: &Doc, found: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let mut sections = diff_sections(doc, range.clone());
    fold_repeated_changes(&mut sections);
    found.digests.push(Digest {
        body: Body::Sections(sections),
        ..Digest::of_lines(stream, range.start, range.end, Vec::new())
    });
}

/// A patch as sections: one per file, its heading, then its changes as -U0 hunks.
fn diff_sections(doc: &Doc, range: std::ops::Range<usize>) -> Vec<(String, Vec<String>)> {
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    let mut out = Vec::new();
    for p in diff_parts(doc, range) {
        match p {
            Part::File(h) => {
                close_section(&mut sections, &mut out);
                sections.push((h, Vec::new()));
            }
            Part::Note(l) => out.push(l),
            Part::Hunk { header, lines, .. } => {
                out.push(header);
                out.extend(lines);
            }
        }
    }
    close_section(&mut sections, &mut out);
    sections
}

/// A patch as parts: each file's heading, its notes as printed, and its changes
/// as -U0 hunks with the raw lines they span.
fn diff_parts(doc: &Doc, range: std::ops::Range<usize>) -> Vec<Part> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0u32, 0u32);
    // The pending run of changed lines: where it starts in old and new, its
    // lines, and the raw lines it spans.
    let mut run: Vec<String> = Vec::new();
    let (mut run_old, mut run_new, mut dels, mut adds) = (0u32, 0u32, 0u32, 0u32);
    let mut at = (0u32, 0u32);
    let flush = |out: &mut Vec<Part>,
                 run: &mut Vec<String>,
                 (o, n, d, a): (u32, u32, u32, u32),
                 at: (u32, u32)| {
        if run.is_empty() {
            return;
        }
        // As `git diff -U0` numbers an empty side: the line before it, which is
        // 0 for a file that is new or deleted (`@@ -0,0 +1,3 @@`).
        let o = if d == 0 { o.saturating_sub(1) } else { o };
        let n = if a == 0 { n.saturating_sub(1) } else { n };
        out.push(Part::Hunk {
            header: format!("@@ -{o},{d} +{n},{a} @@"),
            lines: std::mem::take(run),
            at,
        });
    };
    for i in range.clone() {
        let t = doc.lines[i].text.to_string();
        let pending = (run_old, run_new, dels, adds);
        if let Some(rest) = t.strip_prefix("diff --git ") {
            flush(&mut out, &mut run, pending, at);
            let mut parts = rest.split(' ');
            let (a, b) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let (a, b) = (
                a.strip_prefix("a/").unwrap_or(a),
                b.strip_prefix("b/").unwrap_or(b),
            );
            out.push(Part::File(if a == b {
                format!("diff {a}")
            } else {
                format!("diff {a} -> {b}")
            }));
            continue;
        }
        if let Some(c) = HUNK.captures(&t) {
            flush(&mut out, &mut run, pending, at);
            old = c[1].parse().unwrap_or(0);
            new = c[3].parse().unwrap_or(0);
            continue;
        }
        if t.starts_with("--- ") || t.starts_with("+++ ") || t.starts_with("index ") {
            continue;
        }
        match t.as_bytes().first() {
            Some(b'+') | Some(b'-') => {
                if run.is_empty() {
                    (run_old, run_new, dels, adds) = (old, new, 0, 0);
                    at.0 = doc.lines[i].no;
                }
                at.1 = doc.lines[i].no;
                if t.starts_with('+') {
                    adds += 1;
                    new += 1;
                } else {
                    dels += 1;
                    old += 1;
                }
                run.push(t);
            }
            Some(b' ') | None => {
                flush(&mut out, &mut run, pending, at);
                old += 1;
                new += 1;
            }
            // `\ No newline at end of file`, mode lines, binary notices: as printed.
            _ => {
                flush(&mut out, &mut run, pending, at);
                if doc.lines[i].class != Class::Blank {
                    out.push(Part::Note(t));
                }
            }
        }
    }
    flush(&mut out, &mut run, (run_old, run_new, dels, adds), at);
    out
}

/// A refactor applied alike in many files prints the same hunks again and again;
/// each repeat is written once. A file whose every hunk, numbers included, is
/// an earlier file's becomes its heading alone, `diff b.py (the same 4 hunks as
/// a.py)`; a hunk whose changed lines an earlier file shows keeps its own `@@`
/// numbers and names the hunk that shows them: `@@ -4,0 +5,3 @@ (as in a.py)`
/// when its numbers are the same, else `@@ -9,0 +10,3 @@ (the lines of a.py
/// @@ -4,0 +5,3 @@)`. A reference names only lines printed as they are, and is
/// made only where it is shorter than what it stands for.
fn fold_repeated_changes(sections: &mut [(String, Vec<String>)]) {
    use std::collections::HashMap;
    // A file's whole list of lines, and a hunk's changed lines, with the first
    // file that showed them in full.
    let mut files: HashMap<Vec<String>, String> = HashMap::new();
    let mut changes: HashMap<Vec<String>, (String, String)> = HashMap::new();
    for (heading, lines) in sections.iter_mut() {
        // A renamed file is named by its new path.
        let Some(name) = heading
            .strip_prefix("diff ")
            .map(|h| h.rsplit(" -> ").next().unwrap_or(h).to_string())
        else {
            continue;
        };
        if lines.is_empty() {
            continue;
        }
        let pieces = crate::digest::hunk_spans(lines);
        if let Some(first) = files.get(lines.as_slice()) {
            if pieces.iter().all(|&(a, _)| lines[a].starts_with("@@ ")) {
                let n = pieces.len();
                let what = if n == 1 { "hunk" } else { "hunks" };
                let note = format!(" (the same {n} {what} as {first})");
                if note.len() < lines.iter().map(|l| l.len() + 1).sum() {
                    heading.push_str(&note);
                    lines.clear();
                    continue;
                }
            }
        }
        let mut out = Vec::with_capacity(lines.len());
        for (a, b) in pieces {
            let (header, body) = (&lines[a], &lines[a + 1..b]);
            let hunk = header.starts_with("@@ ") && !body.is_empty();
            let note = match changes.get(body) {
                Some((file, _)) if !hunk || *file == name => None,
                Some((file, at)) if at == header => Some(format!(" (as in {file})")),
                Some((file, at)) => Some(format!(" (the lines of {file} {at})")),
                None => None,
            };
            match note {
                Some(note) if note.len() < body.iter().map(|l| l.len() + 1).sum() => {
                    out.push(format!("{header}{note}"));
                }
                _ => {
                    if hunk {
                        changes
                            .entry(body.to_vec())
                            .or_insert_with(|| (name.clone(), header.clone()));
                    }
                    out.extend_from_slice(&lines[a..b]);
                }
            }
        }
        if out == *lines {
            files.entry(out).or_insert(name);
        } else {
            *lines = out;
        }
    }
}

/// Moves the lines gathered so far under the last heading (or, before the first
/// heading, under an empty one that prints nothing of its own).
fn close_section(sections: &mut Vec<(String, Vec<String>)>, out: &mut Vec<String>) {
    if out.is_empty() {
        return;
    }
    match sections.last_mut() {
        Some((_, lines)) => lines.append(out),
        None => sections.push((String::new(), std::mem::take(out))),
    }
}

#[cfg(test)]
mod tests {
    use crate::stages::classify::testing;

    #[test]
    fn a_new_file_numbers_its_empty_side_zero() {
        let out = "diff --git a/n.rs b/n.rs\nnew file mode 100644\n--- /dev/null\n+++ b/n.rs\n@@ -0,0 +1,2 @@\n+fn a() {}\n+fn b() {}\n";
        let lines = testing::digest_lines(out);
        assert!(lines.contains(&"@@ -0,0 +1,2 @@".to_string()), "{lines:?}");
    }

    fn digest(text: &str) -> Vec<String> {
        testing::digest_lines(text)
    }

    #[test]
    fn log_is_one_line_per_commit() {
        let out = "commit 74dcffac74158184a0bd70db2deb7ab8a14f622c\nAuthor: Ada Okafor <ada@example.com>\nDate:   Tue Feb 3 05:00:00 2026 +0000\n\n    Release 0.14.0\n\ncommit 4f550afdaed6df8b2f5806b4f7a361f775529b82 (tag: v1)\nMerge: 1 2\nAuthor: Chen Wei <chen@example.com>\nDate:   Mon Feb 2 04:00:00 2026 +0000\n\n    Document the release process\n\n    With a body.\n";
        assert_eq!(
            digest(out),
            vec![
                "74dcffa Release 0.14.0 (Ada Okafor <ada@example.com>, 2026-02-03)",
                "4f550af Document the release process (Chen Wei <chen@example.com>, 2026-02-02)"
            ]
        );
    }

    #[test]
    fn log_with_stat_or_patch_keeps_every_commit() {
        let stat = "commit 74dcffac74158184a0bd70db2deb7ab8a14f622c\nAuthor: Ada Okafor <ada@example.com>\nDate:   Tue Feb 3 05:00:00 2026 +0000\n\n    Release 0.14.0\n\n README.md | 4 ++--\n src/a.rs  | 1 +\n 2 files changed, 3 insertions(+), 2 deletions(-)\n\ncommit 4f550afdaed6df8b2f5806b4f7a361f775529b82\nAuthor: Chen Wei <chen@example.com>\nDate:   Mon Feb 2 04:00:00 2026 +0000\n\n    Document the release process\n\n docs/release.md | 9 +++++++++\n 1 file changed, 9 insertions(+)\n";
        assert_eq!(
            digest(stat),
            [
                "74dcffa Release 0.14.0 (Ada Okafor <ada@example.com>, 2026-02-03; 2 files changed, 3 insertions(+), 2 deletions(-)): README.md src/a.rs",
                "4f550af Document the release process (Chen Wei <chen@example.com>, 2026-02-02; 1 file changed, 9 insertions(+)): docs/release.md",
            ]
        );
        let patch = "commit 74dcffac74158184a0bd70db2deb7ab8a14f622c\nAuthor: Ada Okafor <ada@example.com>\nDate:   Tue Feb 3 05:00:00 2026 +0000\n\n    Release 0.14.0\n\ndiff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -0,0 +1 @@\n+c\n\ncommit 4f550afdaed6df8b2f5806b4f7a361f775529b82\nAuthor: Chen Wei <chen@example.com>\nDate:   Mon Feb 2 04:00:00 2026 +0000\n\n    Document the release process\n";
        // The patch follows its commit: every file and changed line, numbered.
        assert_eq!(
            digest(patch),
            [
                "74dcffa Release 0.14.0 (Ada Okafor <ada@example.com>, 2026-02-03)",
                "diff x",
                "@@ -1,1 +1,1 @@",
                "-a",
                "+b",
                "diff y",
                "@@ -0,0 +1,1 @@",
                "+c",
                "4f550af Document the release process (Chen Wei <chen@example.com>, 2026-02-02)",
            ]
        );
    }

    #[test]
    fn a_recorded_forty_commit_log_p_keeps_every_author_and_the_value_change() {
        // `git log -p -- billing/payouts.py`, recorded for the compare table.
        let raw = include_str!("../../../../cases/git-log-p/recording/000.stdout");
        let argv: Vec<String> = ["git", "log", "-p", "--", "billing/payouts.py"]
            .map(String::from)
            .to_vec();
        let req = crate::Request {
            argv: &argv,
            stdout: raw.as_bytes(),
            stderr: b"",
            exit: 0,
        };
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("0a1b2c3d"));
        let v = crate::view(&req, &opts);
        let text = String::from_utf8_lossy(&v.stdout);
        assert!(text.len() <= opts.budget, "{text}");
        let lines: Vec<&str> = raw.lines().collect();
        for (k, l) in lines.iter().enumerate() {
            let Some(hash) = l.strip_prefix("commit ") else {
                continue;
            };
            let author = lines[k + 1].strip_prefix("Author: ").expect("an author");
            let name = author.split_once(" <").expect("an address").0;
            let subject = lines[k + 4].trim();
            let line = text
                .lines()
                .find(|v| v.starts_with(&hash[..7]))
                .unwrap_or_else(|| panic!("{hash} missing: {text}"));
            assert!(line.contains(&format!("({name}")), "{line}");
            assert!(line.contains(subject), "{line}");
            // The address: on the commit's line, or once in the authors line.
            assert!(
                line.contains(author)
                    || text
                        .lines()
                        .any(|v| v.starts_with("authors: ") && v.contains(author)),
                "{author}: {text}"
            );
        }
        // The commit the task asked about: its subject does not say so, its hunk does.
        assert!(
            text.contains("\n-PAYOUT_RETRY_LIMIT = 3\n+PAYOUT_RETRY_LIMIT = 5\n"),
            "{text}"
        );
    }

    #[test]
    fn status_lists_a_run_of_numbered_files_as_one_range() {
        let mut out = String::from("On branch main\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n\tNOTES.md\n");
        for i in 1..=150 {
            out.push_str(&format!("\ttests/frame_case_{i:03}.snap.new\n"));
        }
        out.push_str(
            "\nnothing added to commit but untracked files present (use \"git add\" to track)\n",
        );
        let argv = vec!["git".to_string(), "status".to_string()];
        let req = crate::Request {
            argv: &argv,
            stdout: out.as_bytes(),
            stderr: b"",
            exit: 0,
        };
        let v = crate::view(
            &req,
            &crate::Options::new(crate::Level::Two, crate::Handle::parse("0a1b2c3d")),
        );
        let text = String::from_utf8_lossy(&v.stdout);
        assert!(
            text.contains("untracked: NOTES.md tests/frame_case_{001..150}.snap.new\n"),
            "{text}"
        );
        assert!(text.len() < 300, "{text}");
    }

    #[test]
    fn status_is_one_line_per_section() {
        let out = "On branch main\nChanges to be committed:\n  (use \"git restore --staged <file>...\" to unstage)\n\tmodified:   a.py\n\trenamed:    b.py -> c.py\n\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n\tnotes/\n\tscratch.py\n\n";
        assert_eq!(
            digest(out),
            vec![
                "On branch main",
                "staged: M a.py, R b.py -> c.py",
                "untracked: notes/ scratch.py"
            ]
        );
    }

    #[test]
    fn diff_writes_a_change_repeated_across_files_once() {
        let file = |name: &str, at: u32, hunks: &[&str]| {
            let mut t = format!(
                "diff --git a/{name} b/{name}\nindex 1..2 100644\n--- a/{name}\n+++ b/{name}\n"
            );
            for (k, h) in hunks.iter().enumerate() {
                let o = at + 10 * k as u32;
                t.push_str(&format!("@@ -{o},0 +{o},2 @@\n{h}"));
            }
            t
        };
        let log = "+import logging\n+log = logging.getLogger(__name__)\n";
        let retry =
            "+            log.warning(\"retrying %s\", item.id)\n+            time.sleep(1)\n";
        let out = [
            file("a.py", 4, &[log, retry]),
            file("b.py", 4, &[log, retry]),
            file("c.py", 4, &[log]),
            file("d.py", 7, &[retry]),
            file("e.py", 4, &["+x = 1\n+y = 2\n"]),
            "diff --git a/f.py b/g.py\nsimilarity index 90%\nrename from f.py\nrename to g.py\n@@ -3,0 +4,2 @@\n+renamed_from_the_old_module = 1\n+moved_with_it = 2\n@@ -9,0 +11,2 @@\n+import logging\n+log = logging.getLogger(__name__)\n".to_string(),
            file("h.py", 4, &["+x = 1\n+y = 2\n"]),
            file("i.py", 4, &["+renamed_from_the_old_module = 1\n+moved_with_it = 2\n"]),
            file("j.py", 50, &["+x = 1\n+y = 2\n"]),
        ]
        .concat();
        assert_eq!(
            digest(&out),
            vec![
                "diff a.py",
                "@@ -3,0 +4,2 @@",
                "+import logging",
                "+log = logging.getLogger(__name__)",
                "@@ -13,0 +14,2 @@",
                "+            log.warning(\"retrying %s\", item.id)",
                "+            time.sleep(1)",
                "diff b.py (the same 2 hunks as a.py)",
                "diff c.py",
                "@@ -3,0 +4,2 @@ (as in a.py)",
                "diff d.py",
                "@@ -6,0 +7,2 @@ (the lines of a.py @@ -13,0 +14,2 @@)",
                "diff e.py",
                "@@ -3,0 +4,2 @@",
                "+x = 1",
                "+y = 2",
                "diff f.py -> g.py",
                "similarity index 90%",
                "rename from f.py",
                "rename to g.py",
                "@@ -2,0 +4,2 @@",
                "+renamed_from_the_old_module = 1",
                "+moved_with_it = 2",
                "@@ -8,0 +11,2 @@ (the lines of a.py @@ -3,0 +4,2 @@)",
                "diff h.py (the same 1 hunk as e.py)",
                // A renamed file is named by its new path.
                "diff i.py",
                "@@ -3,0 +4,2 @@ (the lines of g.py @@ -2,0 +4,2 @@)",
                // Where the note would cost more than the lines, they are shown.
                "diff j.py",
                "@@ -49,0 +50,2 @@",
                "+x = 1",
                "+y = 2",
            ]
        );
    }

    #[test]
    fn diff_keeps_changed_lines_with_exact_numbers() {
        let out = "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -10,7 +10,8 @@ def f():\n     a\n     b\n-    c\n+    C\n+    D\n     e\n     f\n     g\n";
        assert_eq!(
            digest(out),
            vec![
                "diff x.py",
                "@@ -12,1 +12,2 @@",
                "-    c",
                "+    C",
                "+    D"
            ]
        );
        let pure_add = "diff --git a/y b/y\n@@ -1,2 +1,3 @@\n a\n+b\n c\n";
        assert_eq!(digest(pure_add), vec!["diff y", "@@ -1,0 +2,1 @@", "+b"]);
    }
}
