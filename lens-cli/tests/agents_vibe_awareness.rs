//! `lens init` and `lens hook` for Mistral Vibe (a `post_tool` hook in
//! `hooks.toml`) and for the agents with no after-tool event that can replace
//! a command's output (Auggie, Crush, Continue, Aider: the awareness block
//! only, and one line saying why), with HOME and the project in a temp dir.
//! The real Vibe runs the hook in harness/tests/real_cli_vibe.rs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

struct Tmp {
    root: PathBuf,
}

impl Tmp {
    fn new(name: &str) -> Tmp {
        let root = std::env::temp_dir().join(format!("lens-agents2-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("proj/.git")).unwrap();
        Tmp { root }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn proj(&self) -> PathBuf {
        self.root.join("proj")
    }

    fn lens(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lens"))
            .args(args)
            .current_dir(self.proj())
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("LENS_STORE", self.root.join("state/store"))
            .env("LENS_LOG_DIR", self.root.join("state/log"))
            .env("LENS_CONFIG", self.root.join("state/none.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            // A lens that refuses its arguments exits before reading: the
            // pipe may be closed, which is its answer, not the test's failure.
            let _ = input.write_all(s.as_bytes());
        }
        drop(input);
        child.wait_with_output().unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// Every file and directory under home and the project.
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for top in [self.home(), self.proj()] {
            let mut stack = vec![top];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = e.path();
                    let rel = p.strip_prefix(&self.root).unwrap().display().to_string();
                    if p.is_dir() {
                        out.insert(format!("{rel}/"), Vec::new());
                        stack.push(p);
                    } else {
                        out.insert(rel, std::fs::read(&p).unwrap());
                    }
                }
            }
        }
        out
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Dry run, install, install again, uninstall, for one agent and scope with
/// the files the user had; returns the box (installed again) and what the
/// install printed.
fn round_trip(agent: &str, scope: &str, existing: &[(&str, &str)]) -> (Tmp, String) {
    let b = Tmp::new(&format!("{agent}{scope}"));
    for (rel, t) in existing {
        b.write(rel, t);
    }
    let before = b.files();
    let dry = b.lens(&["init", "--agent", agent, scope, "--dry-run"], None);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    assert!(
        text(&dry.stdout).contains("+ <!-- lens:begin -->"),
        "{}",
        text(&dry.stdout)
    );
    assert_eq!(b.files(), before, "{agent}: the dry run changed files");
    let install = b.lens(&["init", "--agent", agent, scope], None);
    assert_eq!(install.status.code(), Some(0), "{}", text(&install.stderr));
    let installed = b.files();
    assert_ne!(installed, before);
    let again = b.lens(&["init", "--agent", agent, scope], None);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(b.files(), installed, "{agent}: a second init changed files");
    let un = b.lens(&["init", "--agent", agent, scope, "--uninstall"], None);
    assert_eq!(un.status.code(), Some(0), "{}", text(&un.stderr));
    assert_eq!(
        b.files(),
        before,
        "{agent} {scope}: uninstall did not restore every byte"
    );
    let install = b.lens(&["init", "--agent", agent, scope], None);
    assert_eq!(install.status.code(), Some(0));
    (b, text(&install.stdout))
}

/// A user's own hooks.toml, with a comment and a hook of theirs.
const USER_HOOKS: &str =
    "# my hooks\n[[hooks]]\nname = \"audit\"\ntype = \"pre_tool\"\ncommand = \"./audit.sh\"\n";

#[test]
fn vibe_installs_a_post_tool_hook_in_hooks_toml_and_takes_it_out() {
    let (b, said) = round_trip(
        "vibe",
        "--global",
        &[
            ("home/.vibe/hooks.toml", USER_HOOKS),
            ("home/.vibe/AGENTS.md", "Be brief.\n"),
        ],
    );
    assert!(said.contains("vibe: changed"), "{said}");
    let hooks: toml::Table = b.read("home/.vibe/hooks.toml").parse().unwrap();
    let list = hooks["hooks"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["name"].as_str(), Some("audit"));
    let lens = list[1].as_table().unwrap();
    assert_eq!(lens["type"].as_str(), Some("post_tool"));
    assert_eq!(lens["command"].as_str(), Some("lens hook vibe"));
    assert_eq!(lens["match"].as_str(), Some("bash"));
    assert!(b
        .read("home/.vibe/AGENTS.md")
        .starts_with("Be brief.\n\n<!-- lens:begin -->"));
    // The project: its hooks file and AGENTS.md, and the trust it needs.
    let (b, said) = round_trip("vibe", "--project", &[]);
    assert!(b
        .read("proj/.vibe/hooks.toml")
        .contains("command = \"lens hook vibe\""));
    assert!(b.read("proj/AGENTS.md").contains("<!-- lens:begin -->"));
    assert!(
        said.lines().any(|l| l.starts_with(
            "vibe: Vibe reads the project's .vibe/hooks.toml only once the folder is trusted"
        )),
        "{said}"
    );
}

#[test]
fn vibe_leaves_a_hooks_file_it_cannot_add_to_alone() {
    for bad in ["hooks = 3\n", "[[hooks]\nname = \n"] {
        let b = Tmp::new("vibe-bad");
        b.write("home/.vibe/hooks.toml", bad);
        let before = b.files();
        let out = b.lens(&["init", "--agent", "vibe", "--global"], None);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("hooks.toml") || err.contains("TOML") || err.contains("hooks"),
            "{err}"
        );
        assert_eq!(b.files(), before);
    }
}

/// A `git status` of N changed files.
fn status_output(n: usize) -> String {
    let mut s = String::from("On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\n");
    for i in 0..n {
        s.push_str(&format!("\tmodified:   src/module_{i}/handler_{i}.rs\n"));
    }
    s.push_str("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
    s
}

/// A `post_tool` event as Mistral Vibe 3.0.3 sends it (recorded, ids shortened).
fn vibe_event(b: &Tmp, line: &str, stdout: &str, stderr: &str, code: i32) -> String {
    serde_json::json!({
        "session_id": "6905b3c9", "transcript_path": b.home().join(".vibe/logs/session/unified/6905b3c9"),
        "cwd": b.proj(), "parent_session_id": null, "hook_event_name": "post_tool",
        "tool_name": "file_system.bash", "tool_call_id": "call_1",
        "tool_input": {"timeout": 120, "command": line}, "tool_status": "success",
        "tool_output": {"command": line, "returncode": code, "stderr": stderr, "stdout": stdout,
            "timed_out": false, "was_truncated": false},
        "tool_output_text": "…", "tool_error": null, "duration_ms": 0
    })
    .to_string()
}

#[test]
fn the_vibe_hook_answers_the_results_json_with_the_view_in_place_of_the_stream() {
    let b = Tmp::new("vibe-hook");
    let status = status_output(400);
    let out = b.lens(
        &["hook", "vibe"],
        Some(&vibe_event(&b, "git status", &status, "warning: x\n", 1)),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "deny");
    let read: serde_json::Value = serde_json::from_str(answer["reason"].as_str().unwrap()).unwrap();
    // The same JSON the model reads without Lens: the exit code and the other
    // stream where they were, the stream a view of itself.
    assert_eq!(read["returncode"], 1);
    assert_eq!(read["stderr"], "warning: x\n");
    assert_eq!(read["command"], "git status");
    let view = read["stdout"].as_str().unwrap();
    assert!(view.len() < status.len() / 4, "{view}");
    assert!(view.contains("[lens: "), "{view}");
    assert!(answer["reason"].as_str().unwrap().len() < 16_000);
    let at = view.find("handle=").unwrap() + 7;
    let shown = b.lens(&["show", &view[at..at + 8]], None);
    assert_eq!(text(&shown.stdout), status);
    // A small output, a pre_tool event and an output with two big streams:
    // no answer, the agent's result stands.
    let both = "x\n".repeat(4000);
    for event in [
        vibe_event(&b, "git status", "clean\n", "", 0),
        vibe_event(&b, "git status", &status, &both, 0).replace("\"post_tool\"", "\"pre_tool\""),
        vibe_event(&b, "git status", &status, &both, 0),
    ] {
        let out = b.lens(&["hook", "vibe"], Some(&event));
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    }
}

#[test]
fn agents_without_an_after_tool_event_get_the_awareness_block_and_one_line_why() {
    for (agent, scope, file, why) in [
        (
            "auggie",
            "--global",
            "home/.augment/rules/lens.md",
            "can only append",
        ),
        (
            "auggie",
            "--project",
            "proj/.augment/rules/lens.md",
            "can only append",
        ),
        (
            "crush",
            "--global",
            "home/.config/crush/CRUSH.md",
            "only a PreToolUse hook",
        ),
        (
            "crush",
            "--project",
            "proj/CRUSH.md",
            "only a PreToolUse hook",
        ),
        (
            "continue",
            "--global",
            "home/.continue/rules/lens.md",
            "fires no hook",
        ),
        (
            "continue",
            "--project",
            "proj/.continue/rules/lens.md",
            "fires no hook",
        ),
    ] {
        let (b, said) = round_trip(agent, scope, &[]);
        let block = b.read(file);
        assert!(block.contains("<!-- lens:begin -->"), "{agent}: {block}");
        let lines: Vec<&str> = said.lines().filter(|l| l.contains(why)).collect();
        assert_eq!(lines.len(), 1, "{agent}: {said}");
        assert!(
            lines[0].starts_with(&format!("{agent}: ")) && lines[0].contains("only the awareness"),
            "{said}"
        );
        // Nothing that runs Lens is installed for them.
        assert!(
            !b.files().values().any(|f| text(f).contains("lens hook")),
            "{agent}"
        );
    }
    // Rule files every session applies, in each agent's own words.
    let (b, _) = round_trip("auggie", "--project", &[]);
    assert!(b
        .read("proj/.augment/rules/lens.md")
        .starts_with("---\ntype: always_apply\n"));
    let (b, _) = round_trip("continue", "--global", &[]);
    assert!(b
        .read("home/.continue/rules/lens.md")
        .contains("\nalwaysApply: true\n"));
    let b = Tmp::new("hook-auggie");
    let out = b.lens(&["hook", "auggie"], Some("{}"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("auggie has no after-tool hook"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn aider_reads_the_awareness_file_through_its_config() {
    let (b, said) = round_trip(
        "aider",
        "--global",
        &[("home/.aider.conf.yml", "model: sonnet\nauto-commits: false")],
    );
    assert_eq!(
        b.read("home/.aider.conf.yml"),
        "model: sonnet\nauto-commits: false\n\nread: ~/.aider-lens.md\n"
    );
    assert!(b
        .read("home/.aider-lens.md")
        .starts_with("<!-- lens:begin -->"));
    assert!(said.contains("aider: Aider 0.86.2 has no hooks"), "{said}");
    round_trip("aider", "--global", &[]);
    // A `read:` of the user's own would be replaced by a second one: refused.
    let b = Tmp::new("aider-read");
    b.write("home/.aider.conf.yml", "read: CONVENTIONS.md\n");
    let before = b.files();
    let out = b.lens(&["init", "--agent", "aider", "--global"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("`read:` of its own"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(b.files(), before);
    let out = b.lens(&["init", "--agent", "aider", "--project"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("use --global"),
        "{}",
        text(&out.stderr)
    );
}
