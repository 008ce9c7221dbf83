//! Every command the README and the pages of docs/ print is run here: each
//! `make` target they name (inline or in a code block) exists and its recipe
//! expands (`make -n`); each `lens` line of their code blocks runs in a sandbox
//! (the programs it calls are stand-ins that print a few lines) and is not
//! refused; the README's `compare --show` example prints what it says it prints.

mod lens_bin;

use lens_bin::lens_binary;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).unwrap()
}

/// The README and every page of docs/, one after another.
fn readme_and_docs() -> String {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let mut text = readme();
    for page in pages {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(page).unwrap());
    }
    text
}

/// Lines of the README's indented code blocks, comments cut.
fn code_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("    "))
        .map(|l| match l.find("  #") {
            Some(i) => l[..i].trim_end().to_string(),
            None => l.trim_end().to_string(),
        })
        .collect()
}

#[test]
fn every_make_target_the_readme_names_exists() {
    let text = readme_and_docs();
    let mut targets: Vec<String> = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("make ") {
        let after = &rest[i + 5..];
        let word: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let before = rest[..i].chars().last();
        if !word.is_empty()
            && matches!(before, Some('`' | ' ' | '\n'))
            && word.chars().next().unwrap().is_ascii_lowercase()
        {
            targets.push(word);
        }
        rest = after;
    }
    targets.sort();
    targets.dedup();
    // Words after "make " in prose that are not targets.
    targets.retain(|t| !["a", "the", "it", "them", "this", "every", "sure"].contains(&t.as_str()));
    assert!(targets.len() >= 10, "{targets:?}");
    for t in &targets {
        let out = Command::new("make")
            .args(["-n", t])
            .current_dir(repo())
            .env("CARGO_TARGET_DIR", repo().join("out/.cargo"))
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the README or docs/ names `make {t}`, which does not expand: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A sandbox: stand-in programs first on PATH, Lens's files in a temp dir.
struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let root = std::env::temp_dir().join(format!("lens-readme-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        for prog in ["cargo", "pytest", "make"] {
            let p = bin.join(prog);
            std::fs::write(
                &p,
                "#!/bin/sh\nfor i in $(seq 300); do echo \"   Compiling step$i v0.1.0\"; done\necho 'error: a stand-in failure' >&2\nexit 1\n",
            )
            .unwrap();
            Command::new("chmod").arg("+x").arg(&p).status().unwrap();
        }
        let ok = Command::new("sh")
            .args([
                "-c",
                "git init -q repo && cd repo && for i in $(seq 60); do echo $i > f$i; done && git add -A \
                 && git -c user.name=t -c user.email=t@t commit -q -m one",
            ])
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(ok.success());
        Sandbox { root }
    }

    fn lens(&self, args: &[String]) -> std::process::Output {
        let path = format!(
            "{}:{}",
            self.root.join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        Command::new(lens_binary())
            .args(args)
            .current_dir(self.root.join("repo"))
            .env("PATH", path)
            .env("HOME", self.root.join("home"))
            .env("LENS_STORE", self.root.join("store"))
            .env("LENS_LOG_DIR", self.root.join("log"))
            .env("LENS_CONFIG", self.root.join("none.toml"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Splits a README command line into words (single quotes group).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn every_lens_line_in_the_readme_runs() {
    let sb = Sandbox::new();
    // A stored run to stand for the README's example handles.
    let first = sb.lens(&["cargo".into(), "build".into()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&first.stderr)
    );
    let i = text
        .find("handle=")
        .expect("the stand-in cargo's view has a marker");
    let handle = text[i + 7..i + 15].to_string();
    let lines = code_lines(&readme_and_docs());
    let mut ran = 0;
    for line in lines.iter() {
        let line = line.strip_prefix("$ ").unwrap_or(line);
        // `lens --as … < saved.log` reads a file the docs only name: the
        // line's flags are what is checked, so it runs on an empty stdin.
        let line = line.split(" < ").next().unwrap_or(line);
        if !line.starts_with("lens ") {
            continue;
        }
        let mut args = words(line);
        args.remove(0);
        for a in &mut args {
            if a.len() == 8
                && a.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            {
                *a = handle.clone();
            }
        }
        let out = sb.lens(&args);
        let code = out.status.code();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            code != Some(2) && !stderr.contains("unknown option") && !stderr.contains("usage:"),
            "README line {line:?} was refused: {stderr}"
        );
        if args
            .first()
            .is_some_and(|a| a == "show" || a == "stats" || a == "init")
        {
            assert_eq!(code, Some(0), "README line {line:?}: {stderr}");
        }
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} lens lines found");
}

#[test]
fn the_readmes_git_status_view_is_what_compare_shows() {
    let work = std::env::temp_dir().join(format!("lens-readme-compare-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(["--cases", "git-status", "--show", "lens-2", "--no-rtk"])
        .arg("--lens")
        .arg(lens_binary())
        .arg("--work")
        .arg(&work)
        .arg("--out")
        .arg(work.join("compare.json"))
        .current_dir(repo())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    let readme = readme();
    let start = readme.find("    $ lens git status\n").unwrap() + "    $ lens git status\n".len();
    let end = readme[start..].find("    $ lens show").unwrap() + start;
    for line in readme[start..end].lines() {
        let line = line.strip_prefix("    ").unwrap();
        let want = match line.find("handle=") {
            Some(i) => &line[..i],
            None => line,
        };
        assert!(
            shown.contains(want),
            "the README shows {line:?}; compare printed:\n{shown}"
        );
    }
}

#[test]
fn harness_and_compare_explain_themselves() {
    for bin in [env!("CARGO_BIN_EXE_harness"), env!("CARGO_BIN_EXE_compare")] {
        let out = Command::new(bin).arg("--help").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{bin} --help");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("usage:") && help.contains("Examples:"),
            "{help}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}
