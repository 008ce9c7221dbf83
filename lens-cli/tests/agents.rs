//! `lens init`, `lens hook` and `lens rewrite` end to end, for every agent, with
//! HOME and the project in a temp dir: the dry run prints the change and makes
//! none, the install makes it once, the installed hook answers a recorded event,
//! and `--uninstall` puts back every file byte for byte.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

struct Box_ {
    root: PathBuf,
}

impl Box_ {
    fn new(name: &str) -> Box_ {
        let root = std::env::temp_dir().join(format!("lens-agents-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("proj/.git")).unwrap();
        std::fs::create_dir_all(root.join("proj/src")).unwrap();
        Box_ { root }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn proj(&self) -> PathBuf {
        self.root.join("proj")
    }

    fn lens(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lens"));
        c.args(args)
            .current_dir(self.proj().join("src"))
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("LENS_STORE", self.root.join("state/store"))
            .env("LENS_LOG_DIR", self.root.join("state/log"))
            .env("LENS_CONFIG", self.root.join("state/none.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).unwrap();
        }
        drop(input);
        child.wait_with_output().unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Every file under home and the project (not Lens's own state).
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for top in [self.home(), self.proj()] {
            let mut stack = vec![top];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        out.insert(format!("{}/", p.display()), Vec::new());
                        stack.push(p);
                    } else {
                        out.insert(p.display().to_string(), std::fs::read(&p).unwrap());
                    }
                }
            }
        }
        out
    }
}

impl Drop for Box_ {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A recorded Claude Code PreToolUse event for `git status` (ids shortened).
const CLAUDE_EVENT: &str = r#"{"session_id":"5f1c0e2a","transcript_path":"/home/u/.claude/projects/app/5f1c0e2a.jsonl","cwd":"CWD","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"Show working tree status"},"tool_use_id":"toolu_01"}"#;
/// A Gemini CLI BeforeTool event for `cargo build`.
const GEMINI_EVENT: &str = r#"{"session_id":"s1","transcript_path":"/tmp/t.json","cwd":"CWD","hook_event_name":"BeforeTool","timestamp":"2026-11-30T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"cargo build"}}"#;

/// Dry run, install, install again, hook, uninstall: for one agent and scope,
/// with the files the user already had.
fn round_trip(agent: &str, scope: &str, existing: &[(&str, &str)]) -> Box_ {
    let b = Box_::new(&format!("{agent}{scope}"));
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
    assert_eq!(b.files(), before, "the dry run changed files");
    let install = b.lens(&["init", "--agent", agent, scope], None);
    assert_eq!(install.status.code(), Some(0), "{}", text(&install.stderr));
    let installed = b.files();
    assert_ne!(installed, before);
    let again = b.lens(&["init", "--agent", agent, scope], None);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(b.files(), installed, "a second init changed files");
    assert!(text(&again.stdout).contains("already has it"));
    let un = b.lens(&["init", "--agent", agent, scope, "--uninstall"], None);
    assert_eq!(un.status.code(), Some(0), "{}", text(&un.stderr));
    assert_eq!(
        b.files(),
        before,
        "uninstall did not restore the files byte for byte"
    );
    b
}

#[test]
fn claude_project_installs_the_hook_and_the_block_and_takes_them_out() {
    let existing = [
        ("proj/CLAUDE.md", "# Project rules\n\nUse tabs.\n"),
        (
            "proj/.claude/settings.local.json",
            "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n",
        ),
    ];
    round_trip("claude", "--project", &existing);
    // Installed, the settings carry the hook and the recorded event is rewritten.
    let b = Box_::new("claude-hook");
    for (rel, t) in existing {
        b.write(rel, t);
    }
    assert_eq!(
        b.lens(&["init", "--agent", "claude", "--project"], None)
            .status
            .code(),
        Some(0)
    );
    let settings: serde_json::Value = serde_json::from_slice(
        &std::fs::read(b.proj().join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    let keys: Vec<&String> = settings.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "env", "hooks"]);
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "lens hook claude"
    );
    let event = CLAUDE_EVENT.replace("CWD", &b.proj().display().to_string());
    let out = b.lens(&["hook", "claude"], Some(&event));
    assert_eq!(out.status.code(), Some(0));
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        a["hookSpecificOutput"]["updatedInput"]["command"],
        "lens git status"
    );
    assert!(std::fs::read_to_string(b.proj().join("CLAUDE.md"))
        .unwrap()
        .contains("lens show 1a2b3c4d --lines 120-480"));
    // The hook's view of the command reaches `lens stats`.
    let stats = b.lens(&["stats", "--json"], None);
    let s: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(
        (s["hook_seen"].as_u64(), s["hook_rewritten"].as_u64()),
        (Some(1), Some(1))
    );
}

#[test]
fn claude_global_follows_the_users_permission_rules() {
    let existing = [(
        "home/.claude/settings.json",
        "{\"permissions\": {\"allow\": [\"Bash(git status:*)\"]}, \"theme\": \"dark\"}\n",
    )];
    round_trip("claude", "--global", &existing);
    let b = Box_::new("claude-global-hook");
    for (rel, t) in existing {
        b.write(rel, t);
    }
    assert_eq!(
        b.lens(&["init", "--agent", "claude"], None).status.code(),
        Some(0)
    );
    let event = CLAUDE_EVENT.replace("CWD", &b.proj().display().to_string());
    let out = text(&b.lens(&["hook", "claude"], Some(&event)).stdout);
    assert!(out.contains("\"permissionDecision\":\"allow\""), "{out}");
    // A command no rule allows is left to Claude Code's prompt.
    let other = event.replace("git status", "cargo test");
    let out = text(&b.lens(&["hook", "claude"], Some(&other)).stdout);
    assert!(
        out.contains("lens cargo test") && !out.contains("permissionDecision"),
        "{out}"
    );
    // Garbage in, nothing out, exit 0: the original runs.
    let bad = b.lens(&["hook", "claude"], Some("{not json"));
    assert_eq!((bad.status.code(), bad.stdout.len()), (Some(0), 0));
}

#[test]
fn gemini_installs_a_before_tool_hook() {
    round_trip("gemini", "--project", &[("proj/GEMINI.md", "Be brief.\n")]);
    round_trip("gemini", "--global", &[]);
    let b = Box_::new("gemini-hook");
    assert_eq!(
        b.lens(&["init", "--agent", "gemini", "--project"], None)
            .status
            .code(),
        Some(0)
    );
    let settings = std::fs::read_to_string(b.proj().join(".gemini/settings.json")).unwrap();
    assert!(settings.contains("\"BeforeTool\"") && settings.contains("lens hook gemini"));
    let out = text(&b.lens(&["hook", "gemini"], Some(GEMINI_EVENT)).stdout);
    assert!(out.contains("\"command\":\"lens cargo build\""), "{out}");
}

#[test]
fn codex_cursor_and_opencode_get_what_they_read() {
    round_trip(
        "codex",
        "--project",
        &[("proj/AGENTS.md", "# Agents\nRun make test.\n")],
    );
    round_trip("codex", "--global", &[]);
    round_trip("cursor", "--project", &[]);
    round_trip("opencode", "--project", &[]);
    round_trip(
        "opencode",
        "--global",
        &[("home/.config/opencode/AGENTS.md", "x\n")],
    );
    let b = Box_::new("cursor-global");
    let out = b.lens(&["init", "--agent", "cursor", "--global"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("use --project"));
}

#[test]
fn two_agents_sharing_agents_md_keep_it_until_the_last_goes() {
    let b = Box_::new("shared");
    b.write("proj/AGENTS.md", "# Agents\n");
    let before = b.files();
    for agent in ["codex", "opencode"] {
        assert_eq!(
            b.lens(&["init", "--agent", agent, "--project"], None)
                .status
                .code(),
            Some(0)
        );
    }
    assert_eq!(
        b.lens(
            &["init", "--agent", "codex", "--project", "--uninstall"],
            None
        )
        .status
        .code(),
        Some(0)
    );
    assert!(std::fs::read_to_string(b.proj().join("AGENTS.md"))
        .unwrap()
        .contains("lens:begin"));
    assert_eq!(
        b.lens(
            &["init", "--agent", "opencode", "--project", "--uninstall"],
            None
        )
        .status
        .code(),
        Some(0)
    );
    assert_eq!(b.files(), before);
}

#[test]
fn a_file_edited_since_keeps_the_users_edit_and_loses_only_lenss_part() {
    let b = Box_::new("edited");
    b.write("proj/CLAUDE.md", "# Rules\n");
    assert_eq!(
        b.lens(&["init", "--agent", "codex", "--project"], None)
            .status
            .code(),
        Some(0)
    );
    let path = b.proj().join("AGENTS.md");
    let mut t = std::fs::read_to_string(&path).unwrap();
    t.push_str("\nMy own note.\n");
    std::fs::write(&path, &t).unwrap();
    let out = b.lens(
        &["init", "--agent", "codex", "--project", "--uninstall"],
        None,
    );
    assert!(
        text(&out.stdout).contains("edited since init"),
        "{}",
        text(&out.stdout)
    );
    let left = std::fs::read_to_string(&path).unwrap();
    assert!(
        left.contains("My own note.") && !left.contains("lens:begin"),
        "{left}"
    );
}

#[test]
fn settings_that_do_not_parse_are_left_alone_with_one_line() {
    let b = Box_::new("broken");
    b.write("proj/.claude/settings.local.json", "{\"model\": ");
    let before = b.files();
    let out = b.lens(&["init", "--agent", "claude", "--project"], None);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(
        e.contains("not valid JSON") && e.lines().count() == 1,
        "{e}"
    );
    assert_eq!(b.files(), before);
}

#[test]
fn without_an_agent_init_reports_what_it_would_do() {
    let b = Box_::new("report");
    std::fs::create_dir_all(b.home().join(".claude")).unwrap();
    let before = b.files();
    let out = b.lens(&["init"], None);
    assert_eq!(out.status.code(), Some(0));
    let t = text(&out.stdout);
    assert!(
        t.contains("claude: would change") && t.contains("lens init --agent claude"),
        "{t}"
    );
    assert_eq!(b.files(), before);
}

#[test]
fn rewrite_prints_the_rewrite_or_exits_one() {
    let b = Box_::new("rewrite");
    let out = b.lens(&["rewrite", "cd app && cargo test 2>&1"], None);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "cd app && lens cargo test 2>&1\n".into())
    );
    let out = b.lens(&["rewrite", "cargo test | grep -c ok"], None);
    assert_eq!(out.status.code(), Some(0));
    let out = b.lens(&["rewrite", "echo hi"], None);
    assert_eq!((out.status.code(), out.stdout.len()), (Some(1), 0));
}
