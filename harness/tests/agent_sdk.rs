//! A program built on the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`)
//! gets Lens's view the two ways a user can register the hook, against the
//! scripted model on 127.0.0.1 with no credential: `lens init --agent claude`
//! (the SDK loads the user's Claude Code settings unless the program passes
//! `settingSources` without `"user"`), and a `PostToolUse` callback in the
//! program's own `hooks` option that pipes the event through `lens hook
//! claude` (which works whatever settings the program loads). The SDK starts
//! the pinned Claude Code 2.1.328 (`pathToClaudeCodeExecutable`), so the hook
//! protocol is the one the rest of the suite proves.
//!
//! `make agents` installs the SDK at the version harness/agents/sdk pins into
//! out/agents/sdk, without its optional platform package (its own Claude Code
//! binary, about 400 MB, which the test does not start). `LENS_AGENT_SDK`
//! names another package directory. Without it the test skips with one line,
//! and fails under LENS_REQUIRE_AGENTS=1, as every real-CLI test does.

mod agents_ready;
mod arm_root;
mod lens_bin;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use harness::agent_cli::{AgentCli, PLACEHOLDER_KEY};
use harness::model_server::{Script, Server};

/// The SDK program: `settings` leaves the settings sources as the SDK's
/// default, `callback` loads none and registers the hook in code, `raw`
/// loads none and registers nothing.
const PROGRAM: &str = r#"import { query } from "SDK/sdk.mjs";
import { spawnSync } from "node:child_process";

// Lens's hook as a callback: the event in, the answer (or nothing) out.
const lens = async (input) => {
  const r = spawnSync("lens", ["hook", "claude"], { input: JSON.stringify(input), encoding: "utf8" });
  return r.status === 0 && r.stdout.trim() ? JSON.parse(r.stdout) : {};
};

const mode = process.argv[2];
const options = {
  pathToClaudeCodeExecutable: process.env.CLAUDE_BIN,
  model: "scripted",
  allowedTools: ["Bash(git status)"],
};
if (mode !== "settings") options.settingSources = [];
if (mode === "callback") options.hooks = { PostToolUse: [{ matcher: "Bash", hooks: [lens] }] };
for await (const m of query({ prompt: "Run the commands.", options })) {
  if (m.type === "result") console.log(JSON.stringify({ subtype: m.subtype, result: m.result }));
}
"#;

/// The SDK package directory, when it is installed.
fn sdk_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LENS_AGENT_SDK").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => AgentCli::bin_dir().join("../../sdk/node_modules/@anthropic-ai/claude-agent-sdk"),
    };
    dir.join("sdk.mjs").is_file().then_some(dir)
}

/// What the model read of `git status`, run by the SDK program in `mode`.
fn session(root: &arm_root::Root, sdk: &Path, mode: &str) -> String {
    let server = Server::start(Script::commands(vec!["git status".into()], "Done.")).unwrap();
    let program = root.root.join(format!("{mode}.mjs"));
    root.write(
        &format!("{mode}.mjs"),
        &PROGRAM.replace("SDK", &sdk.display().to_string()),
    );
    let lens_dir = lens_bin::lens_binary().parent().unwrap().to_path_buf();
    let node = harness::shim::find_program("node", &std::env::var_os("PATH").unwrap())
        .expect("node on PATH");
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        lens_dir.display(),
        node.parent().unwrap().display()
    );
    let out = Command::new(&node)
        .arg(&program)
        .arg(mode)
        .env_clear()
        .env("HOME", root.home())
        .env("PATH", path)
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", std::env::temp_dir())
        .env("CLAUDE_BIN", AgentCli::Claude.binary())
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", PLACEHOLDER_KEY)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .envs(root.lens_env())
        .current_dir(root.project())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{mode}: {said}");
    assert!(said.contains("\"subtype\":\"success\""), "{mode}: {said}");
    let turns: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|e| e.kind == "turn" && !e.tool_results.is_empty())
        .collect();
    let last = turns
        .last()
        .unwrap_or_else(|| panic!("{mode}: no tool result reached the model: {said}"));
    assert_eq!(last.tool_results.len(), 1, "{mode}");
    last.tool_results[0].text.clone()
}

fn handle(text: &str) -> Option<String> {
    let at = text.find("handle=")? + "handle=".len();
    text.get(at..at + 8).map(String::from)
}

#[test]
fn an_agent_sdk_program_reads_lens_s_view_by_settings_or_by_callback() {
    let Some(sdk) = sdk_dir() else {
        agents_ready::skip("the Claude Agent SDK is not installed in out/agents/sdk; run `make agents` (or set LENS_AGENT_SDK to its package directory)");
        return;
    };
    if !agents_ready::available(AgentCli::Claude) {
        return;
    }
    let root = arm_root::Root::new("lens-agent-sdk", 220, |i| format!("handler_{i:03}.rs"));
    let raw = session(&root, &sdk, "raw");
    assert!(handle(&raw).is_none(), "{raw}");
    let callback = session(&root, &sdk, "callback");
    root.lens(&["init", "--agent", "claude", "--global"]);
    let settings = session(&root, &sdk, "settings");
    for (how, view) in [("callback", &callback), ("settings", &settings)] {
        eprintln!(
            "agent sdk, {how}: git status raw {} B, with lens {} B",
            raw.len(),
            view.len()
        );
        let h = handle(view).unwrap_or_else(|| panic!("{how}: not a view:\n{view}"));
        assert!(view.len() < raw.len(), "{how}: {view}");
        let shown = root.lens(&["show", &h]);
        assert!(
            String::from_utf8_lossy(&shown.stdout).contains("src/handler_219.rs"),
            "{how}"
        );
    }
}
