//! `lens init`, `lens hook` and `lens --as` end to end, for every agent, with
//! HOME and the project in a temp dir: the dry run prints the change and makes
//! none, the install makes it once and only after-tool hooks, the installed hook
//! answers a recorded after-tool event with a view whose handle `lens show`
//! opens, and `--uninstall` puts back every file byte for byte, the user's own
//! numbers, indentation and hooks included. (The real agent CLIs run these
//! hooks in harness/tests/real_cli.rs.)

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

    fn command(&self, args: &[&str]) -> Command {
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
        c
    }

    /// Starts `lens` without waiting for it (stdin closed).
    fn spawn(&self, args: &[&str]) -> std::process::Child {
        let mut c = self.command(args);
        c.stdin(Stdio::null());
        c.spawn().unwrap()
    }

    fn lens(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut child = self.command(args).spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            // A refused call (`lens hook droid`) may exit before it reads:
            // the write then meets a closed pipe, which is not the test's point.
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

    /// Every file under home and the project (not Lens's own state).
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for top in [self.home(), self.proj()] {
            let mut stack = vec![top];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = e.path();
                    if let Ok(to) = std::fs::read_link(&p) {
                        // A link is itself a file to keep: where it points.
                        let key = format!("{} ->", p.display());
                        out.insert(key, to.display().to_string().into_bytes());
                        continue;
                    }
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

/// A Claude Code PostToolUse event as Claude Code 2.1.328 sends it (ids
/// shortened); OUTPUT is the command's output, JSON-escaped.
const CLAUDE_EVENT: &str = r#"{"session_id":"5f1c0e2a","transcript_path":"/h/.claude/projects/app/5f1c0e2a.jsonl","cwd":"CWD","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"Show working tree status"},"tool_response":{"stdout":OUTPUT,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_use_id":"toolu_01","duration_ms":12}"#;

/// A `git status` with many changed files: what Lens has a digest for.
fn status_output(n: usize) -> String {
    let mut s = String::from("On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\n");
    for i in 0..n {
        s.push_str(&format!("\tmodified:   src/module_{i}/handler_{i}.rs\n"));
    }
    s.push_str("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
    s
}

fn claude_event(b: &Box_, output: &str) -> String {
    CLAUDE_EVENT
        .replace("CWD", &b.proj().display().to_string())
        .replace("OUTPUT", &serde_json::to_string(output).unwrap())
}

/// The handle a view's markers name.
fn handle_of(view: &str) -> String {
    let at = view.find("handle=").expect("a marker with a handle") + 7;
    view[at..at + 8].to_string()
}

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
fn claude_project_installs_the_after_tool_hook_and_takes_it_out() {
    let existing = [
        ("proj/CLAUDE.md", "# Project rules\n\nUse tabs.\n"),
        (
            "proj/.claude/settings.local.json",
            "{\n    \"model\": \"opus\",\n    \"seed\": 12345678901234567890123,\n    \"permissions\": {\"allow\": [\"Bash(make:*)\"], \"deny\": [\"Bash(rm:*)\"]},\n    \"hooks\": {\n        \"PostToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./audit.sh\"}]}\n        ]\n    },\n    \"env\": {\"A\": \"1\"}\n}\n",
        ),
    ];
    round_trip("claude", "--project", &existing);
    let b = Box_::new("claude-hook");
    for (rel, t) in existing {
        b.write(rel, t);
    }
    let out = b.lens(&["init", "--agent", "claude", "--project"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let raw = std::fs::read_to_string(b.proj().join(".claude/settings.local.json")).unwrap();
    assert!(
        raw.contains("12345678901234567890123") && raw.contains("\n    \"model\""),
        "{raw}"
    );
    let settings: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let keys: Vec<&String> = settings.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "seed", "permissions", "hooks", "env"]);
    assert!(settings["hooks"].get("PreToolUse").is_none(), "{raw}");
    let groups = settings["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[1]["hooks"][0]["command"], "lens hook claude");
    assert_eq!(
        settings["permissions"]["allow"],
        serde_json::json!(["Bash(make:*)", "Bash(lens show:*)"])
    );
    assert_eq!(
        settings["permissions"]["deny"],
        serde_json::json!(["Bash(rm:*)"])
    );
    // The hook answers a big output with a view the model reads instead.
    let output = status_output(220);
    let out = b.lens(&["hook", "claude"], Some(&claude_event(&b, &output)));
    assert_eq!(out.status.code(), Some(0));
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let o = &a["hookSpecificOutput"];
    assert_eq!(o["hookEventName"], "PostToolUse");
    let view = o["updatedToolOutput"]["stdout"].as_str().unwrap();
    assert_eq!(o["updatedToolOutput"]["stderr"], "");
    assert_eq!(o["updatedToolOutput"]["interrupted"], false);
    assert!(view.len() < output.len() / 2, "{view}");
    // Every name is still there (as a range or whole), and the handle opens the full output.
    let shown = b.lens(&["show", &handle_of(view)], None);
    assert_eq!(text(&shown.stdout), output);
    // A small output gets no answer: the agent keeps its own.
    let out = b.lens(
        &["hook", "claude"],
        Some(&claude_event(&b, "On branch main\nnothing to commit\n")),
    );
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));
    // What the agent asked to read stays as it is.
    let cat = claude_event(&b, &output).replace("\"git status\"", "\"cat notes.txt\"");
    assert_eq!(b.lens(&["hook", "claude"], Some(&cat)).stdout.len(), 0);
    // The stats count what reached the model, and the fetch against it.
    let stats = b.lens(&["stats", "--json"], None);
    let s: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(
        (
            s["hook_seen"].as_u64(),
            s["hook_applied"].as_u64(),
            s["fetches"].as_u64()
        ),
        (Some(3), Some(1), Some(1))
    );
    assert_eq!(s["fetched_bytes"].as_u64(), Some(output.len() as u64));
    assert!(
        s["net_saved_bytes"].as_i64().unwrap() < 0,
        "the full fetch cost more than the view saved"
    );
}

#[test]
fn the_hook_reads_the_full_output_claude_persisted() {
    let b = Box_::new("claude-persisted");
    let output = status_output(3000);
    let file = b.root.join("home/.claude/projects/p/s/tool-results/x.txt");
    b.write("home/.claude/projects/p/s/tool-results/x.txt", &output);
    let event = claude_event(&b, &output[..30_000]).replace(
        "\"noOutputExpected\":false",
        &format!(
            "\"noOutputExpected\":false,\"persistedOutputPath\":{:?},\"persistedOutputSize\":{}",
            file.display().to_string(),
            output.len()
        ),
    );
    let out = b.lens(&["hook", "claude"], Some(&event));
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let view = a["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .unwrap();
    assert!(view.len() < 30_000, "{}", view.len());
    assert_eq!(
        text(&b.lens(&["show", &handle_of(view)], None).stdout),
        output
    );
}

#[test]
fn a_hook_that_cannot_answer_leaves_the_agents_result() {
    let b = Box_::new("hook-doubt");
    for bad in [
        "{not json",
        "",
        "[]",
        r#"{"hook_event_name":"PostToolUse"}"#,
    ] {
        let out = b.lens(&["hook", "claude"], Some(bad));
        assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0), "{bad}");
        let out = b.lens(&["hook", "gemini"], Some(bad));
        assert_eq!(
            (out.status.code(), text(&out.stdout)),
            (Some(0), "{}\n".into()),
            "{bad}"
        );
    }
    // A store that cannot be written: no view (nothing may be elided that it
    // does not hold).
    let output = status_output(220);
    std::fs::write(
        b.root.join("state"),
        "a file where the store's parent should be",
    )
    .unwrap();
    let out = b.lens(&["hook", "claude"], Some(&claude_event(&b, &output)));
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));
    // Lens's own time limit: an event that never ends gets no answer, promptly.
    let mut c = Command::new(env!("CARGO_BIN_EXE_lens"));
    c.args(["hook", "claude"])
        .env("LENS_HOOK_TIMEOUT_MS", "200")
        .env("LENS_STORE", b.root.join("s2"))
        .env("LENS_LOG_DIR", b.root.join("l2"))
        .env("LENS_CONFIG", b.root.join("none.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));
}

#[test]
fn lens_as_filters_a_saved_log_like_the_commands_own_output() {
    let b = Box_::new("as");
    let output = status_output(220);
    let out = b.lens(
        &["--as", "cd repo && git status 2>&1 | tail -400"],
        Some(&output),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let view = text(&out.stdout);
    assert!(
        view.len() < output.len() / 2 && view.contains("[lens: "),
        "{view}"
    );
    assert_eq!(
        text(&b.lens(&["show", &handle_of(&view)], None).stdout),
        output
    );
    // Under the budget, or a file read: the log as it is.
    assert_eq!(
        text(&b.lens(&["--as", "git status"], Some("clean\n")).stdout),
        "clean\n"
    );
    assert_eq!(
        text(&b.lens(&["--as", "cat status.txt"], Some(&output)).stdout),
        output
    );
    assert_eq!(
        text(
            &b.lens(&["--level", "3", "--as", "git status"], Some(&output))
                .stdout
        ),
        output
    );
    // Bad input: one line, and nothing runs.
    let bad = b.lens(&["--as", "git status", "ls"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(text(&bad.stderr).lines().count(), 1);
}

#[test]
fn gemini_installs_an_after_tool_hook() {
    round_trip("gemini", "--project", &[("proj/GEMINI.md", "Be brief.\n")]);
    round_trip(
        "gemini",
        "--global",
        &[(
            "home/.gemini/settings.json",
            "{\n  // mine\n  \"theme\": \"dark\",\n}\n",
        )],
    );
    let b = Box_::new("gemini-hook");
    assert_eq!(
        b.lens(&["init", "--agent", "gemini", "--project"], None)
            .status
            .code(),
        Some(0)
    );
    let settings = std::fs::read_to_string(b.proj().join(".gemini/settings.json")).unwrap();
    assert!(settings.contains("\"AfterTool\"") && settings.contains("lens hook gemini"));
    assert!(!settings.contains("BeforeTool"));
}

#[test]
fn codex_cursor_and_opencode_get_what_they_read() {
    round_trip(
        "codex",
        "--project",
        &[("proj/AGENTS.md", "# Agents\nRun make test.\n")],
    );
    let b = round_trip("codex", "--global", &[]);
    // What the agent needs before the hook runs is said in one line.
    let out = text(
        &b.lens(&["init", "--agent", "codex", "--global"], None)
            .stdout,
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("codex: Codex runs a new hook only once you trust it")),
        "{out}"
    );
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.home().join(".codex/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "lens hook codex"
    );
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
fn strict_json_settings_with_comments_are_refused_and_jsonc_ones_edited() {
    for (agent, rel, who) in [
        ("claude", "proj/.claude/settings.local.json", "Claude Code"),
        ("codex", "proj/.codex/hooks.json", "Codex"),
    ] {
        for t in [
            "{\n  // my model\n  \"model\": \"opus\"\n}\n",
            "{\n  \"model\": \"opus\",\n}\n",
        ] {
            let b = Box_::new(&format!("strict-{agent}"));
            b.write(rel, t);
            let before = b.files();
            let out = b.lens(&["init", "--agent", agent, "--project"], None);
            assert_eq!(out.status.code(), Some(1));
            let e = text(&out.stderr);
            assert!(
                e.lines().count() == 1
                    && e.contains(rel.trim_start_matches("proj/"))
                    && e.contains(&format!("which {who} does not accept"))
                    && e.contains("fix the file and run lens init again"),
                "{e}"
            );
            assert_eq!(b.files(), before);
        }
    }
    // Gemini CLI reads comments and trailing commas: they stay, and go back as they were.
    round_trip(
        "gemini",
        "--project",
        &[(
            "proj/.gemini/settings.json",
            "{\n  // my model\n  \"model\": {\"name\": \"pro\"},\n}\n",
        )],
    );
}

#[test]
fn concurrent_installs_all_land_and_all_come_out() {
    for round in 0..10 {
        let b = Box_::new(&format!("concurrent{round}"));
        b.write(
            "home/.claude/settings.json",
            "{\n  \"model\": \"opus\"\n}\n",
        );
        b.write("home/.codex/AGENTS.md", "# Mine\n");
        let before = b.files();
        // Two of the same agent among them: the second finds it installed.
        let agents = ["claude", "codex", "gemini", "claude"];
        let run = |extra: Option<&str>| {
            let children: Vec<_> = agents
                .iter()
                .map(|a| {
                    let mut args = vec!["init", "--agent", a, "--global"];
                    args.extend(extra);
                    b.spawn(&args)
                })
                .collect();
            for (a, c) in agents.iter().zip(children) {
                let out = c.wait_with_output().unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "round {round}, {a}: {}",
                    text(&out.stderr)
                );
            }
        };
        run(None);
        let installed = b.files();
        for f in [
            ".claude/settings.json",
            ".claude/CLAUDE.md",
            ".codex/hooks.json",
            ".codex/AGENTS.md",
            ".gemini/settings.json",
            ".gemini/GEMINI.md",
        ] {
            let key = b.home().join(f).display().to_string();
            assert!(
                text(&installed[&key]).contains("lens"),
                "round {round}: {f} has no Lens part"
            );
        }
        run(Some("--uninstall"));
        assert_eq!(b.files(), before, "round {round}: not every file came back");
    }
}

#[test]
fn an_unwritable_state_directory_stops_init_before_any_change() {
    let b = Box_::new("nostate");
    b.write("proj/CLAUDE.md", "# Rules\n");
    b.write("blocker", "a file where a directory would be\n");
    let before = b.files();
    let out = b
        .command(&["init", "--agent", "claude", "--project"])
        .env("LENS_LOG_DIR", b.root.join("blocker/state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(e.lines().count() == 1 && e.contains("blocker/state"), "{e}");
    assert_eq!(b.files(), before, "init changed files it has no record of");
}

#[test]
fn an_unwritable_target_directory_stops_init_before_any_change() {
    let b = Box_::new("notarget");
    b.write("proj/CLAUDE.md", "# Rules\n");
    // `.claude` is a file, so the settings cannot be written under it.
    b.write("proj/.claude", "not a directory\n");
    let before = b.files();
    let out = b.lens(&["init", "--agent", "claude", "--project"], None);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(e.lines().count() == 1 && e.contains(".claude"), "{e}");
    assert_eq!(b.files(), before);
}

#[cfg(unix)]
#[test]
fn a_settings_file_that_is_a_symlink_is_edited_through_and_kept() {
    use std::os::unix::fs::symlink;
    // A dotfiles repository whose file is not there yet: the link dangles.
    let b = Box_::new("dangling");
    std::fs::create_dir_all(b.home().join("dotfiles")).unwrap();
    std::fs::create_dir_all(b.home().join(".claude")).unwrap();
    let link = b.home().join(".claude/settings.json");
    symlink("../dotfiles/claude.json", &link).unwrap();
    let before = b.files();
    let out = b.lens(&["init", "--agent", "claude", "--global"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let target = std::fs::read_to_string(b.home().join("dotfiles/claude.json")).unwrap();
    assert!(target.contains("lens hook claude"), "{target}");
    let un = b.lens(
        &["init", "--agent", "claude", "--global", "--uninstall"],
        None,
    );
    assert_eq!(un.status.code(), Some(0), "{}", text(&un.stderr));
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(b.files(), before, "the link or its target changed");

    // A link to a file that is there: the file changes, the link stays.
    let b = Box_::new("symlinked");
    b.write("home/dotfiles/claude.json", "{\n\t\"model\": \"opus\"\n}\n");
    std::fs::create_dir_all(b.home().join(".claude")).unwrap();
    let link = b.home().join(".claude/settings.json");
    symlink(b.home().join("dotfiles/claude.json"), &link).unwrap();
    let before = b.files();
    let out = b.lens(&["init", "--agent", "claude", "--global"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let target = std::fs::read_to_string(b.home().join("dotfiles/claude.json")).unwrap();
    assert!(target.contains("lens hook claude"), "{target}");
    let un = b.lens(
        &["init", "--agent", "claude", "--global", "--uninstall"],
        None,
    );
    assert_eq!(un.status.code(), Some(0), "{}", text(&un.stderr));
    assert_eq!(b.files(), before, "the link or its target changed");
}

/// The runs in the box's store.
fn stored_runs(b: &Box_) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(b.root.join("state/store"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("meta.json").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A Claude Code event for `line`, whose output is `output`, persisted to a
/// file past 30,000 characters as Claude Code does.
fn claude_event_for(b: &Box_, line: &str, output: &str) -> String {
    let mut event = claude_event(b, &output[..output.len().min(30_000)])
        .replace("\"git status\"", &serde_json::to_string(line).unwrap());
    if output.len() > 30_000 {
        let file = b.root.join("home/.claude/tool-results/show.txt");
        b.write("home/.claude/tool-results/show.txt", output);
        event = event.replace(
            "\"noOutputExpected\":false",
            &format!(
                "\"noOutputExpected\":false,\"persistedOutputPath\":{:?}",
                file.display().to_string()
            ),
        );
    }
    event
}

#[test]
fn the_hook_never_files_lens_show_under_a_new_handle() {
    let b = Box_::new("own");
    // A 400 KB run in the store, as a hook or `lens --as` left it.
    let output: String = (1..=3000)
        .map(|i| {
            format!(
                "{i:05} worker {} finished step {i} of the batch\n",
                "x".repeat(90)
            )
        })
        .collect();
    assert!(output.len() > 400_000);
    let view = text(&b.lens(&["--as", "./batch.sh"], Some(&output)).stdout);
    let h = handle_of(&view);
    let runs = stored_runs(&b);
    assert_eq!(runs, std::slice::from_ref(&h));
    // A range the agent shows whole: its own result stands.
    let five: String = output.lines().take(5).map(|l| format!("{l}\n")).collect();
    let line = format!("lens show {h} --lines 1-5");
    let out = b.lens(
        &["hook", "claude"],
        Some(&claude_event_for(&b, &line, &five)),
    );
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), String::new())
    );
    // The whole run, more than Claude Code shows: a page of the same handle.
    for line in [format!("lens show {h}"), format!("cd /p && lens show {h}")] {
        let out = b.lens(
            &["hook", "claude"],
            Some(&claude_event_for(&b, &line, &output)),
        );
        let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let page = a["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
            .as_str()
            .unwrap();
        assert!(page.len() <= 30_000, "{}", page.len());
        let (lines, last) = page.rsplit_once('\n').unwrap();
        let m = lens_core::Shown::parse(last).unwrap_or_else(|| panic!("{last}"));
        assert_eq!(
            (m.handle.as_str(), m.first, m.rest, m.total),
            (h.as_str(), 1, 3000, 3000)
        );
        assert_eq!(
            format!("{lines}\n"),
            output
                .lines()
                .take(m.last as usize)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
        // The same page, asked for by hand.
        let by_hand = b.lens(
            &["show", &h, "--max-bytes", &(30_000 - 256).to_string()],
            None,
        );
        assert_eq!(text(&by_hand.stdout).trim_end(), page);
        // The next page is the range the marker names.
        let next = b.lens(
            &["show", &h, "--lines", &format!("{}-{}", m.last + 1, m.rest)],
            None,
        );
        assert!(text(&next.stdout).starts_with(output.lines().nth(m.last as usize).unwrap()));
    }
    // Piped or filtered through `lens --as`: Lens's own, as the agent had it.
    let piped = format!("lens show {h} | head -3000");
    let out = b.lens(
        &["hook", "claude"],
        Some(&claude_event_for(&b, &piped, &output)),
    );
    assert_eq!(text(&out.stdout), "");
    let again = b.lens(&["--as", &format!("lens show {h}")], Some(&output));
    assert_eq!(text(&again.stdout), output);
    assert_eq!(stored_runs(&b), runs, "a new handle was stored");
}

#[test]
fn a_view_opens_with_its_own_handle_and_a_quoted_marker_is_the_outputs() {
    let b = Box_::new("header");
    let output = status_output(220);
    let first = text(&b.lens(&["--as", "git status"], Some(&output)).stdout);
    let h1 = handle_of(&first);
    let head = lens_core::Header::parse(first.lines().next().unwrap()).unwrap();
    assert_eq!(
        (head.handle.as_str(), head.lines, head.imitated),
        (h1.as_str(), 226, false)
    );
    // Another output quotes the first run's marker.
    let mut forged = format!("[lens: elided stdout 1-200 (200 lines: budget) handle={h1}]\n");
    forged.push_str(&"step ok\n".repeat(900));
    forged.push_str("error: the last step failed\n");
    let view = text(&b.lens(&["--as", "./ci.sh"], Some(&forged)).stdout);
    let head =
        lens_core::Header::parse(view.lines().next().unwrap()).unwrap_or_else(|| panic!("{view}"));
    assert_ne!(head.handle, h1);
    assert!(head.imitated && head.lines == 902, "{view}");
    assert_eq!(text(&b.lens(&["show", &head.handle], None).stdout), forged);
}

#[test]
fn output_under_the_budget_stands_as_the_agent_had_it() {
    let b = Box_::new("under");
    // `git status | head -50`: 1.5 KB, under the 4 KB budget.
    let output: String = status_output(60)
        .lines()
        .take(50)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(output.len() < 4096, "{}", output.len());
    let event = claude_event_for(&b, "git status | head -50", &output);
    let out = b.lens(&["hook", "claude"], Some(&event));
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), String::new())
    );
    assert_eq!(
        text(
            &b.lens(&["--as", "git status | head -50"], Some(&output))
                .stdout
        ),
        output
    );
    assert!(stored_runs(&b).is_empty());
}

#[test]
fn gemini_gets_a_page_that_read_file_shows_whole() {
    let b = Box_::new("gemini-page");
    // 3,500 short lines: over Gemini CLI's 40,000 bytes, and over the 2,000
    // lines its `read_file` gives the model.
    let output: String = (1..=3500).map(|i| format!("row {i:07}\n")).collect();
    assert!(output.len() > 40_000);
    let view = text(&b.lens(&["--as", "./rows.sh"], Some(&output)).stdout);
    let h = handle_of(&view);
    let runs = stored_runs(&b);
    let temp = b.root.join("home/.gemini/tmp/proj");
    let event = serde_json::json!({
        "hook_event_name": "AfterTool",
        "tool_name": "run_shell_command",
        "cwd": b.proj(),
        "transcript_path": temp.join("chats/session.json"),
        "tool_input": {"command": format!("lens show {h}")},
        "tool_response": {"llmContent": format!("Output: {output}")},
    });
    let out = b.lens(&["hook", "gemini"], Some(&event.to_string()));
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = a["hookSpecificOutput"]["tailToolCallRequest"]["args"]["file_path"]
        .as_str()
        .unwrap_or_else(|| panic!("{a}"));
    let page = std::fs::read_to_string(file).unwrap();
    assert!(page.lines().count() <= 2000, "{}", page.lines().count());
    let m = lens_core::Shown::parse(page.trim_end().lines().last().unwrap()).unwrap();
    assert_eq!((m.handle.as_str(), m.first, m.rest), (h.as_str(), 1, 3500));
    assert_eq!(stored_runs(&b), runs, "a new handle was stored");
}

#[test]
fn claude_init_says_failing_commands_reach_the_model_unfiltered() {
    let b = Box_::new("claude-failures");
    let out = b.lens(&["init", "--agent", "claude", "--global"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.contains("only for commands that succeed"))
        .map(String::from)
        .collect();
    assert_eq!(said.len(), 1, "{}", text(&out.stdout));
    assert!(
        said[0].starts_with("claude: Claude Code 2.1.328")
            && said[0].contains("failing builds and tests reach the model unfiltered"),
        "{}",
        said[0]
    );
    // Other agents say nothing of it.
    let out = b.lens(&["init", "--agent", "gemini", "--global"], None);
    assert!(!text(&out.stdout).contains("only for commands that succeed"));
}

// OpenCode 1.18.33 puts `"$schema"` at the top of every config file without
// one, and installs its plugin package into a config directory unless it finds
// `node_modules` and a lock file naming the package. `init` leaves the plugin's
// directory as that install would, and uninstall takes out everything either
// made: the project is as it was, byte for byte.
#[test]
fn opencode_leaves_nothing_behind_after_it_ran() {
    for (scope, dir, config) in [
        ("--project", "proj/.opencode", "proj/opencode.json"),
        (
            "--global",
            "home/.config/opencode",
            "home/.config/opencode/opencode.json",
        ),
    ] {
        let b = Box_::new(&format!("opencode-ran{scope}"));
        b.write("home/.config/opencode/AGENTS.md", "mine\n");
        let before = b.files();
        let out = b.lens(&["init", "--agent", "opencode", scope], None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let lock = std::fs::read_to_string(b.root.join(dir).join("package-lock.json")).unwrap();
        let lock: serde_json::Value = serde_json::from_str(&lock).unwrap();
        assert!(lock["packages"][""]["dependencies"]["@opencode-ai/plugin"].is_string());
        assert!(b.root.join(dir).join("node_modules").is_dir());
        assert_eq!(
            std::fs::read_to_string(b.root.join(dir).join(".gitignore")).unwrap(),
            "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"
        );
        // What OpenCode does to the config file at its start.
        let path = b.root.join(config);
        let written = std::fs::read_to_string(&path).unwrap();
        let opened = written.replacen(
            '{',
            "{\n  \"$schema\": \"https://opencode.ai/config.json\",",
            1,
        );
        std::fs::write(&path, opened).unwrap();
        let out = b.lens(&["init", "--agent", "opencode", scope, "--uninstall"], None);
        let said = text(&out.stdout);
        assert!(!said.contains("edited since init"), "{said}");
        assert_eq!(b.files(), before, "{scope}");
    }
    // Where OpenCode did install its package (a Lens from before left no lock
    // file) in a directory `init` made, that install goes too.
    let b = Box_::new("opencode-npm");
    let before = b.files();
    b.lens(&["init", "--agent", "opencode", "--project"], None);
    let dir = b.proj().join(".opencode");
    std::fs::remove_file(dir.join("package-lock.json")).unwrap();
    std::fs::create_dir_all(dir.join("node_modules/@opencode-ai/plugin")).unwrap();
    b.write(
        "proj/.opencode/node_modules/@opencode-ai/plugin/package.json",
        "{}",
    );
    b.write(
        "proj/.opencode/package.json",
        "{\n  \"dependencies\": {\n    \"@opencode-ai/plugin\": \"1.18.33\"\n  }\n}",
    );
    b.write(
        "proj/.opencode/package-lock.json",
        r#"{"packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}, "node_modules/@opencode-ai/plugin": {}}}"#,
    );
    b.lens(
        &["init", "--agent", "opencode", "--project", "--uninstall"],
        None,
    );
    assert_eq!(b.files(), before);
    assert!(!dir.exists());
    // A file OpenCode's install already made is the user's: left as it is.
    let b = Box_::new("opencode-installed");
    b.write("proj/.opencode/package-lock.json", "{}\n");
    let before = b.files();
    b.lens(&["init", "--agent", "opencode", "--project"], None);
    assert_eq!(
        std::fs::read_to_string(b.proj().join(".opencode/package-lock.json")).unwrap(),
        "{}\n"
    );
    b.lens(
        &["init", "--agent", "opencode", "--project", "--uninstall"],
        None,
    );
    assert_eq!(b.files(), before);
}

// Codex 0.169.0 reports every call Lens shortened as blocked, and skips a
// project's hooks unless the project is trusted: `init` says both.
#[test]
fn codex_init_says_what_the_user_will_see_and_must_trust() {
    let b = Box_::new("codex-says");
    let out = text(
        &b.lens(&["init", "--agent", "codex", "--project"], None)
            .stdout,
    );
    let proj = b.proj().display().to_string();
    for needle in [
        "codex: Codex 0.169.0 shows each call Lens shortened as 'PostToolUse Blocked' and logs the view at ERROR level; the model reads the view".to_string(),
        "codex: Codex runs a new hook only once you trust it".to_string(),
        format!("[projects.\"{proj}\"] trust_level = \"trusted\"` to ~/.codex/config.toml"),
    ] {
        assert_eq!(out.lines().filter(|l| l.contains(&needle)).count(), 1, "{needle}\n{out}");
    }
    let out = text(
        &b.lens(&["init", "--agent", "codex", "--global"], None)
            .stdout,
    );
    assert!(
        out.contains("'PostToolUse Blocked'") && !out.contains("trust_level"),
        "{out}"
    );
}

#[test]
fn a_hook_applies_the_projects_filters_once_trusted() {
    let b = Box_::new("claude-filters");
    b.write(
        "proj/.lens/filters.toml",
        "[[filter]]\nname = \"acme\"\nmatch = '^acme-build\\b'\ndrop = ['^DEBUG ']\n",
    );
    let output: String = (1..=400)
        .map(|i| format!("DEBUG step {i} of the build\n"))
        .chain(["ERR boom\n".to_string()])
        .collect();
    let event = claude_event_for(&b, "acme-build --all", &output);
    let view_of = |out: &Output| -> String {
        let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        a["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    // Untrusted: the built-in view, whatever the file says.
    let before = view_of(&b.lens(&["hook", "claude"], Some(&event)));
    assert!(!before.contains("lines: filter)"), "{before}");
    assert_eq!(b.lens(&["trust"], None).status.code(), Some(0));
    let after = view_of(&b.lens(&["hook", "claude"], Some(&event)));
    assert!(
        after.contains("[lens: elided stdout 1-400 (400 lines: filter) handle=")
            && after.trim_end().ends_with("ERR boom"),
        "{after}"
    );
}

/// pi's extension event for a bash result (see lens-cli/src/agents/pi.rs).
fn pi_event(b: &Box_, line: &str, text: &str, failed: bool) -> String {
    serde_json::json!({
        "command": line, "output": text, "isError": failed,
        "fullOutputPath": null, "cwd": b.proj().display().to_string(),
    })
    .to_string()
}

#[test]
fn kilo_pi_and_droid_get_what_they_read() {
    for scope in ["--global", "--project"] {
        round_trip("kilo", scope, &[]);
        round_trip("droid", scope, &[]);
    }
    round_trip(
        "kilo",
        "--global",
        &[(
            "home/.config/kilo/kilo.json",
            "{\n  // mine\n  \"permission\": {\"bash\": {\"rm *\": \"deny\"}}\n}\n",
        )],
    );
    round_trip("pi", "--project", &[("proj/AGENTS.md", "# Notes\n")]);
    let b = round_trip("pi", "--global", &[]);

    // pi: the extension, the awareness block beside it, a view for a long
    // output and for a failing one, with pi's exit line kept.
    let out = b.lens(&["init", "--agent", "pi", "--global"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ext = std::fs::read_to_string(b.home().join(".pi/agent/extensions/lens.js")).unwrap();
    assert!(ext.contains(r#"pi.on("tool_result""#) && ext.contains(r#"["hook", "pi"]"#));
    assert!(
        std::fs::read_to_string(b.home().join(".pi/agent/AGENTS.md"))
            .unwrap()
            .contains("lens show")
    );
    let status = status_output(300);
    let ok = b.lens(
        &["hook", "pi"],
        Some(&pi_event(&b, "git status", &status, false)),
    );
    let answer: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    let view = answer["output"].as_str().unwrap();
    assert!(
        view.len() < status.len() && view.contains("[lens: "),
        "{view}"
    );
    let shown = b.lens(&["show", &handle_of(view)], None);
    assert_eq!(text(&shown.stdout), status);
    let failed = format!("{status}\n\nCommand exited with code 3");
    let bad = b.lens(
        &["hook", "pi"],
        Some(&pi_event(&b, "git status; exit 3", &failed, true)),
    );
    let answer: serde_json::Value = serde_json::from_slice(&bad.stdout).unwrap();
    let view = answer["output"].as_str().unwrap();
    assert!(
        view.contains("[lens: ") && view.ends_with("\n\nCommand exited with code 3"),
        "{view}"
    );
    // A small output stands as pi had it: no answer.
    let small = b.lens(&["hook", "pi"], Some(&pi_event(&b, "ls", "a\nb\n", false)));
    assert_eq!(text(&small.stdout), "");

    // Kilo: OpenCode's plugin, naming Kilo's hook, which reads OpenCode's event.
    let k = Box_::new("kilo-hook");
    let out = k.lens(&["init", "--agent", "kilo", "--global"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let plugin = std::fs::read_to_string(k.home().join(".config/kilo/plugin/lens.js")).unwrap();
    assert!(plugin.contains(r#"["hook", "kilo"]"#), "{plugin}");
    let lock = std::fs::read_to_string(k.home().join(".config/kilo/package-lock.json")).unwrap();
    assert!(lock.contains("\"@kilocode/plugin\""), "{lock}");
    let event = serde_json::json!({"command": "git status", "output": status, "exit": 0, "outputPath": null, "cwd": k.proj().display().to_string()});
    let ans = k.lens(&["hook", "kilo"], Some(&event.to_string()));
    let answer: serde_json::Value = serde_json::from_slice(&ans.stdout).unwrap();
    assert!(answer["output"].as_str().unwrap().contains("[lens: "));

    // Droid: the awareness block only, and one line saying why.
    let d = Box_::new("droid-says");
    let out = text(
        &d.lens(&["init", "--agent", "droid", "--global"], None)
            .stdout,
    );
    assert!(
        out.lines().any(|l| l.starts_with(
            "droid: Factory Droid's PostToolUse hook can add a message but cannot replace"
        )),
        "{out}"
    );
    assert!(d.home().join(".factory/AGENTS.md").is_file());
    let refused = d.lens(&["hook", "droid"], Some("{}"));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("droid has no after-tool hook that can replace an output"),
        "{}",
        text(&refused.stderr)
    );
}

// Copilot CLI 1.0.102: a hooks file of Lens's own in each scope, the
// awareness block in copilot-instructions.md; its postToolUse event (a failing
// command's too) is answered with `modifiedResult`, Copilot's last line kept.
#[test]
fn copilot_installs_a_post_tool_use_hook_and_answers_with_the_view() {
    round_trip(
        "copilot",
        "--project",
        &[("proj/.github/copilot-instructions.md", "Use pnpm.\n")],
    );
    round_trip(
        "copilot",
        "--global",
        &[("home/.copilot/settings.json", "{\"theme\": \"dim\"}\n")],
    );
    let b = Box_::new("copilot-hook");
    let said = text(
        &b.lens(&["init", "--agent", "copilot", "--project"], None)
            .stdout,
    );
    assert!(
        said.lines().any(|l| l.starts_with(
            "copilot: Copilot CLI runs a repository's hooks only in a trusted folder"
        )),
        "{said}"
    );
    let hooks: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(b.proj().join(".github/hooks/lens.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        hooks["hooks"]["postToolUse"][0]["bash"],
        "lens hook copilot"
    );
    let trailer = "\n<shellId: 4 completed with exit code 1>";
    let event = serde_json::json!({
        "sessionId": "s", "timestamp": 1, "cwd": b.proj(),
        "toolName": "bash",
        "toolArgs": {"command": "git status; exit 1", "description": "d"},
        "toolResult": {"resultType": "success",
            "textResultForLlm": format!("{}{trailer}", status_output(300).trim_end())},
    });
    let out = b.lens(&["hook", "copilot"], Some(&event.to_string()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = answer["modifiedResult"]["textResultForLlm"]
        .as_str()
        .unwrap();
    assert!(
        read.ends_with(trailer) && read.contains("[lens: "),
        "{read}"
    );
    assert!(read.len() < 4096 + trailer.len(), "{}", read.len());
    let shown = b.lens(&["show", &handle_of(read)], None);
    assert_eq!(
        text(&shown.stdout).trim_end(),
        status_output(300).trim_end()
    );
}

// Qwen Code 0.24.4: a PostToolUse group in its settings, the awareness block
// in QWEN.md; the answer stops the call with the view in Qwen's frame, which
// `init` says, with the failures the hook never sees.
#[test]
fn qwen_installs_a_post_tool_use_hook_and_answers_with_the_view() {
    round_trip("qwen", "--project", &[("proj/QWEN.md", "Be brief.\n")]);
    round_trip(
        "qwen",
        "--global",
        &[(
            "home/.qwen/settings.json",
            "{\n  // mine\n  \"model\": {\"name\": \"qwen3-coder\"}\n}\n",
        )],
    );
    let b = Box_::new("qwen-hook");
    let said = text(
        &b.lens(&["init", "--agent", "qwen", "--global"], None)
            .stdout,
    );
    for want in [
        "qwen: Qwen Code 0.24.4 lets a hook replace a result only by stopping the call",
        "qwen: Qwen Code 0.24.4 hands a command that exits non-zero to PostToolUseFailure",
    ] {
        assert!(said.lines().any(|l| l.starts_with(want)), "{said}");
    }
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(b.home().join(".qwen/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        settings["hooks"]["PostToolUse"][0],
        serde_json::json!({"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "lens hook qwen"}]})
    );
    let output = status_output(300);
    let output = output.trim_end();
    let trailer = "\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)";
    let event = serde_json::json!({
        "session_id": "s", "cwd": b.proj(), "hook_event_name": "PostToolUse",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "git status", "description": "d"},
        "tool_response": {
            "llmContent": format!("Command: git status\nDirectory: (root)\nOutput: {output}{trailer}"),
            "returnDisplay": output,
        },
    });
    let out = b.lens(&["hook", "qwen"], Some(&event.to_string()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["continue"], false);
    let read = answer["stopReason"].as_str().unwrap();
    assert!(
        read.starts_with("Command: git status\nDirectory: (root)\nOutput: ")
            && read.ends_with(trailer),
        "{read}"
    );
    let shown = b.lens(&["show", &handle_of(read)], None);
    assert_eq!(text(&shown.stdout).trim_end(), output);
}
