//! The README is the front door and docs/ holds the rest, so three things are
//! kept true here: the README stays short enough to read in one sitting; every
//! relative link in the repository's Markdown (the README, docs/, the other
//! READMEs) leads to a file that exists and, with a `#anchor`, to a heading of
//! that file; and every generated section (the tables, the README's headline
//! numbers) is what its file in results/ renders today, as
//! `tools/readme_table.py --check` finds it, in the page that is meant to hold it.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

const README_MAX_LINES: usize = 250;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Every Markdown file of the repository, build outputs and installed packages left out.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !["out", "target", ".git", "node_modules"].contains(&name.as_str()) {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The lines that are prose, not code: fenced and indented code blocks left out
/// (an indented line after a list item is the item's continuation, not code).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut in_list = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let item = line.starts_with("- ")
            || line
                .split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if line.trim().is_empty() {
            continue;
        }
        if item {
            in_list = true;
        } else if !line.starts_with(' ') {
            in_list = false;
        }
        if (line.starts_with("    ") || line.starts_with('\t')) && !in_list {
            continue;
        }
        out.push((i + 1, line));
    }
    out
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, and every
/// character that is not a letter, digit, hyphen or underscore dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors a Markdown text's headings make (a repeated one gets `-1`, `-2`, …).
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, line) in prose_lines(text) {
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let base = slug(rest.trim_start_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        out.push(anchor);
    }
    out
}

/// The `](target)` links of a text's prose, inline code spans left out, with
/// their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        // Drop inline code: a span's brackets are the output's, not links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((n, target.to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// `dir/../x` to `x` without touching the file system (the target may not exist).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Every relative link of `file` (whose text is `text`) that leads nowhere: a
/// missing file, or an anchor no heading of the target makes. External links
/// (a scheme, `mailto:`) are not followed.
fn broken_links(file: &Path, text: &str) -> (usize, Vec<String>) {
    let mut broken = Vec::new();
    let mut checked = 0;
    for (line, target) in links(text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        checked += 1;
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let dest = if path.is_empty() {
            file.to_path_buf()
        } else {
            normalise(&file.parent().unwrap().join(path))
        };
        let root = repo();
        let shown = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
        let here = format!("{}:{line}: `{target}`", shown(file));
        if !dest.exists() {
            broken.push(format!("{here}: no file {}", shown(&dest)));
            continue;
        }
        if let Some(anchor) = anchor {
            let dest_text = if path.is_empty() {
                text.to_string()
            } else {
                std::fs::read_to_string(&dest).unwrap_or_default()
            };
            if !anchors(&dest_text).iter().any(|a| a == anchor) {
                broken.push(format!(
                    "{here}: no heading of {} makes #{anchor}",
                    dest.display()
                ));
            }
        }
    }
    (checked, broken)
}

#[test]
fn the_readme_is_a_front_door() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move the detail to a page of docs/ and link it"
    );
    // The two commands for a fresh machine open it (.ci/run runs the second).
    let first: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("    "))
        .take(2)
        .collect();
    assert!(
        first[0].trim_start().starts_with("make compare"),
        "{first:?}"
    );
    assert!(first[1].trim_start().starts_with("make test"), "{first:?}");
}

#[test]
fn every_relative_link_in_the_markdown_resolves() {
    let root = repo();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    files.sort();
    for must in [
        "README.md",
        "docs/benchmarks.md",
        "docs/design.md",
        "cases/README.md",
    ] {
        assert!(files.contains(&root.join(must)), "{must} not found");
    }
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let (n, b) = broken_links(file, &text);
        checked += n;
        broken.extend(b);
    }
    assert!(checked >= 30, "only {checked} relative links found");
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_missing_heading() {
    let root = repo();
    let file = root.join("README.md");
    let text = "# Top\n\nSee [views](docs/views.md#levels), [here](#top), \
                [gone](docs/gone.md), [bad](docs/views.md#no-such-heading),\n\
                [web](https://example.com/x.md) and `[lens: x](not/a/link)`.\n\n    [code](nor/this)\n";
    let (checked, broken) = broken_links(&file, text);
    assert_eq!(checked, 4, "{broken:?}");
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("docs/gone.md"), "{broken:?}");
    assert!(broken[1].contains("#no-such-heading"), "{broken:?}");
    assert_eq!(
        slug("Compare: Lens against raw output and rtk"),
        "compare-lens-against-raw-output-and-rtk"
    );
    assert_eq!(
        slug("Permissions stay the agent's"),
        "permissions-stay-the-agents"
    );
    assert_eq!(
        slug("Saved and CI logs: lens --as"),
        "saved-and-ci-logs-lens---as"
    );
    assert_eq!(anchors("# A\n## A\n    # code\n"), ["a", "a-1"]);
}

/// Where each generated section lives: the README keeps only the headline numbers.
const BLOCKS: &[(&str, &str)] = &[
    ("headline", "README.md"),
    ("compare", "docs/benchmarks.md"),
    ("retention", "docs/benchmarks.md"),
    ("session", "docs/benchmarks.md"),
    ("transcripts", "docs/benchmarks.md"),
    ("retention-vm", "docs/benchmarks.md"),
    ("compare-vm", "docs/benchmarks.md"),
    ("performance", "docs/benchmarks.md"),
    ("reliability", "docs/reliability.md"),
];

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// `tools/readme_table.py --check` over `pages`, from the repository root.
fn check_generated(pages: &[PathBuf]) -> std::process::Output {
    let store = std::env::temp_dir().join(format!("lens-docs-store-{}", std::process::id()));
    let out = Command::new("python3")
        .arg("tools/readme_table.py")
        .arg("--check")
        .arg("--compare")
        .arg(env!("CARGO_BIN_EXE_compare"))
        .arg("--harness")
        .arg(env!("CARGO_BIN_EXE_harness"))
        .args(pages)
        .current_dir(repo())
        .env("LENS_STORE", &store)
        .output()
        .expect("python3 runs tools/readme_table.py; install python3");
    let _ = std::fs::remove_dir_all(&store);
    out
}

#[test]
fn every_generated_section_is_what_its_results_file_renders() {
    for (name, page) in BLOCKS {
        let text = std::fs::read_to_string(repo().join(page)).unwrap();
        assert!(
            text.contains(&format!("<!-- {name}:begin -->"))
                && text.contains(&format!("<!-- {name}:end -->")),
            "the {name} section belongs in {page}"
        );
    }
    let out = check_generated(&pages());
    assert!(
        out.status.success(),
        "a generated section is out of date with results/ (make readme-table rewrites it):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_stale_generated_section_is_named() {
    let tmp = std::env::temp_dir().join(format!("lens-docs-stale-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut copies = Vec::new();
    for page in pages() {
        let mut text = std::fs::read_to_string(&page).unwrap();
        if page.ends_with("docs/benchmarks.md") {
            // One number of the compare table, changed by hand.
            let i = text
                .find("| cargo-build | ")
                .expect("the compare table has a cargo-build row");
            text.insert(i + "| cargo-build | ".len(), '9');
        }
        let copy = tmp.join(page.file_name().unwrap());
        std::fs::write(&copy, text).unwrap();
        copies.push(copy);
    }
    let out = check_generated(&copies);
    let _ = std::fs::remove_dir_all(&tmp);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("benchmarks.md: the compare block differs"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
}
