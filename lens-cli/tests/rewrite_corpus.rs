//! `lens rewrite` never changes what the shell does: every command line of
//! `tests/data/agent-commands.txt` runs in `sh` in a fresh copy of a small
//! project, once as written and once as `lens rewrite` prints it (when it
//! rewrites it), and both must end with the same exit code and leave the same
//! files behind. The corpus holds the constructs rewrites have broken before
//! (pipes, heredocs, quoting, redirections, subshells, `cd dir && cmd`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn corpus() -> Vec<String> {
    let text = include_str!("data/agent-commands.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace('⏎', "\n"))
        .collect()
}

/// Git's clock and identity fixed, so commits made by a command are the same
/// bytes in both runs.
const GIT_ENV: [(&str, &str); 7] = [
    ("GIT_AUTHOR_NAME", "Lens Test"),
    ("GIT_AUTHOR_EMAIL", "test@lens.invalid"),
    ("GIT_COMMITTER_NAME", "Lens Test"),
    ("GIT_COMMITTER_EMAIL", "test@lens.invalid"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
];

struct Env {
    root: PathBuf,
    path: String,
}

impl Env {
    fn sh(&self, dir: &Path, script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("HOME", self.root.join("home"))
            .env("PATH", &self.path)
            .env("LENS_STORE", self.root.join("store"))
            .env("LENS_LOG_DIR", self.root.join("log"))
            .env("LENS_CONFIG", self.root.join("none.toml"))
            .envs(GIT_ENV)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The project every command runs in: two commits, a changed file, an untracked one.
fn template(env: &Env) -> PathBuf {
    let t = env.root.join("template");
    std::fs::create_dir_all(&t).unwrap();
    write(
        &t,
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    write(&t, "src/lib.rs", "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\npub struct Point {\n    pub x: i32,\n}\n");
    write(
        &t,
        "src/main.rs",
        "fn main() {\n    println!(\"{}\", demo::add(1, 2));\n}\n",
    );
    write(
        &t,
        "app.py",
        "def greet():\n    return 'hi'\n\nprint(greet())\n",
    );
    write(&t, "notes.md", "# Notes\nTODO: readme\nREADME first\n");
    write(
        &t,
        "Makefile",
        "all:\n\techo built > build.txt\n\ntest:\n\techo tested\n\nclean:\n\trm -f build.txt\n",
    );
    write(
        &t,
        "hello.c",
        "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n",
    );
    write(&t, "hello.rs", "fn main() { println!(\"hi\"); }\n");
    let setup = "git init -q -b main && git add -A && git commit -q -m 'initial' \
        && printf 'pub fn sub(a: u32, b: u32) -> u32 {\\n    a - b\\n}\\n' >> src/lib.rs \
        && git commit -q -am 'add sub' \
        && echo 'more notes' >> notes.md && echo draft > draft.txt";
    let ok = env.sh(&t, setup).status().unwrap();
    assert!(ok.success(), "the template project could not be made");
    t
}

/// Every file under `dir` and its bytes, but build output, git's stat cache and
/// tools' caches (which hold timestamps: they differ between two raw runs too).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            let cache = [
                "target",
                "__pycache__",
                ".ruff_cache",
                ".mypy_cache",
                ".pytest_cache",
            ];
            if cache.contains(&rel.as_str()) || rel == ".git/index" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// Runs `script` in a fresh copy of the template at `work`; returns its exit
/// code and the files it left.
fn run(
    env: &Env,
    template: &Path,
    work: &Path,
    script: &str,
) -> (Option<i32>, BTreeMap<String, Vec<u8>>) {
    let _ = std::fs::remove_dir_all(work);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(template)
        .arg(work)
        .status()
        .unwrap();
    assert!(ok.success());
    let mut child = env.sh(work, script).spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{script:?} ran past a minute");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (code, snapshot(work))
}

#[test]
fn rewritten_commands_do_what_the_originals_do() {
    let lens = PathBuf::from(env!("CARGO_BIN_EXE_lens"));
    let root = std::env::temp_dir().join(format!("lens-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("home")).unwrap();
    let path = format!(
        "{}:{}",
        lens.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = Env {
        root: root.clone(),
        path,
    };
    let template = template(&env);
    let work = root.join("work");
    let commands = corpus();
    assert!(
        commands.len() >= 200,
        "the corpus has {} commands",
        commands.len()
    );
    let (mut rewritten, mut differ) = (0, Vec::new());
    for cmd in &commands {
        let out = Command::new(&lens).args(["rewrite", cmd]).output().unwrap();
        let Some(new) = out
            .status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
        else {
            assert_eq!(out.status.code(), Some(1), "{cmd:?}");
            continue;
        };
        let new = new.strip_suffix('\n').unwrap_or(&new).to_string();
        assert_ne!(new, *cmd);
        rewritten += 1;
        let (raw_code, raw_files) = run(&env, &template, &work, cmd);
        let (lens_code, lens_files) = run(&env, &template, &work, &new);
        if raw_code != lens_code || raw_files != lens_files {
            let changed: Vec<&String> = raw_files
                .keys()
                .chain(lens_files.keys())
                .filter(|k| raw_files.get(*k) != lens_files.get(*k))
                .collect();
            differ.push(format!(
                "{cmd:?} -> {new:?}: exit {raw_code:?} vs {lens_code:?}, files differ: {changed:?}"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        differ.is_empty(),
        "{} of {rewritten} rewrites differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    assert!(rewritten >= 100, "only {rewritten} commands were rewritten");
    eprintln!(
        "{rewritten} of {} commands rewritten; each did what the original did",
        commands.len()
    );
}
