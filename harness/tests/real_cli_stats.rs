//! `lens stats` against what the scripted model really received (issue 30
//! item 2): the same four commands in each real agent CLI, once without Lens
//! and once with it, and the per-agent numbers of `lens stats --json` in the
//! Lens arm compared with the bytes the model server read in tool results:
//! "would read" with the raw arm's, "read" and "fetched" with the Lens arm's,
//! each within 5%. Skipped with one line when the CLIs are not installed
//! (`make agents`), unless LENS_REQUIRE_AGENTS=1.

mod agents_ready;
mod arm_root;
mod lens_bin;

use agents_ready::available;
use arm_root::Root;
use harness::agent_cli::{AgentCli, RunOutcome, RunSpec};
use harness::model_server::Script;

/// A git status of 40 changed files.
const STATUS: &str = "git status";
/// About 400 KB of lines, exit 0.
const SUCCESS: &str = "seq 1 70000";
/// About 100 KB of lines, then the error on the last line, exit 1 (a script:
/// Claude Code asks approval for a compound line with `exit`).
const FAILURE: &str = "sh fail.sh";
const FAIL_SH: &str =
    "seq 1 18000\necho 'error: build failed: undefined symbol main' >&2\nexit 1\n";

/// One arm: HOME, a git project, and Lens's store, log and config.
struct Arm {
    world: Root,
}

impl Arm {
    fn new(cli: AgentCli, lens: bool) -> Arm {
        let name = format!(
            "lens-stats-{}-{}",
            cli.name(),
            if lens { "lens" } else { "raw" }
        );
        let root = Root::new(&name, 40, |i| format!("mod_{i:02}.rs"));
        std::fs::write(root.project().join("fail.sh"), FAIL_SH).unwrap();
        Arm { world: root }
    }

    fn install(&self, cli: AgentCli) {
        self.lens(&["init", "--agent", cli.name(), "--global"]);
        if cli == AgentCli::Opencode {
            // As a finished install of OpenCode's plugin package leaves it:
            // else OpenCode waits for npm with no network (about 70 s).
            self.write("home/.config/opencode/node_modules/.keep", "");
            self.write(
                "home/.config/opencode/package-lock.json",
                r#"{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}}}"#,
            );
        }
    }

    fn run(&self, cli: AgentCli, commands: &[String]) -> RunOutcome {
        let script = Script::commands(commands.to_vec(), "Done.");
        let bin = lens_bin::lens_binary().parent().unwrap().to_path_buf();
        // Codex runs commands in a login shell, which sets PATH anew: the
        // profile puts Lens back on it, as a user's install would.
        self.write(
            "home/.bash_profile",
            &format!("export PATH={}:$PATH\n", bin.display()),
        );
        // Codex: a sandbox that runs the commands without asking, and the
        // hook trusted for the run; Gemini CLI: every call allowed.
        let args: &[&str] = match cli {
            AgentCli::Codex => &[
                "-s",
                "workspace-write",
                "-c",
                "approval_policy=\"never\"",
                "--dangerously-bypass-hook-trust",
            ],
            AgentCli::Gemini => &["--approval-mode", "yolo"],
            // Claude Code: the script allowed, as a user's rule would.
            AgentCli::Claude => &["--allowedTools", "Bash(sh fail.sh)"],
            _ => &[],
        };
        let mut spec = RunSpec::new("Run the commands.", script, &self.home(), &self.project())
            .args(args.iter().copied());
        for (k, v) in self.lens_env() {
            spec = spec.env(&k, &v);
        }
        spec.extra_path = Some(bin);
        spec.time_limit = std::time::Duration::from_secs(240);
        cli.run(&spec).unwrap()
    }
}

impl std::ops::Deref for Arm {
    type Target = Root;

    fn deref(&self) -> &Root {
        &self.world
    }
}

/// The handle a `lens <cmd>` view names.
fn handle(text: &str) -> String {
    let h = text.find("handle=").expect(text) + 7;
    text[h..h + 8].to_string()
}

/// True when `a` is within 5% of `b`.
fn near(a: u64, b: u64) -> bool {
    a.abs_diff(b) * 20 <= b.max(1)
}

/// The scenario in one CLI: the four commands raw and with Lens, the
/// per-call table printed, and `lens stats --json`'s numbers for the agent
/// checked against the model server's.
fn session(cli: AgentCli) {
    if !available(cli) {
        return;
    }
    let mut received = Vec::new();
    let mut lens_arm = None;
    for lens in [false, true] {
        let arm = Arm::new(cli, lens);
        // A stored run to fetch a 300-line range of, made before the session
        // (the scripted model must know its handle); both arms run the same
        // `lens show`, the raw one without the hook.
        let stored = arm.lens(&["seq", "1", "70000"]);
        let h = handle(&String::from_utf8_lossy(&stored.stdout));
        let commands = vec![
            STATUS.to_string(),
            SUCCESS.to_string(),
            FAILURE.to_string(),
            format!("lens show {h} --lines 1000-1299"),
        ];
        if lens {
            arm.install(cli);
        }
        let out = arm.run(cli, &commands);
        let results = out.tool_results();
        assert_eq!(results.len(), 4, "{}", out.describe());
        received.push((commands, results));
        if lens {
            lens_arm = Some(arm);
        }
    }
    let arm = lens_arm.unwrap();
    let (commands, with) = received.pop().unwrap();
    let (_, raw) = received.pop().unwrap();
    let names = [
        "git status",
        "400 KB success",
        "100 KB failure",
        "lens show 300 lines",
    ];
    let error = "error: build failed";
    for i in 0..4 {
        eprintln!(
            "{}: {:<20} raw {:>7} B -> with lens {:>7} B{}",
            cli.name(),
            names[i],
            raw[i].text.len(),
            with[i].text.len(),
            if i == 2 {
                let t = &raw[i].text;
                format!(
                    "  (error line read: raw {}, with lens {}; raw ends {:?})",
                    t.contains(error),
                    with[i].text.contains(error),
                    &t[t.len().saturating_sub(100)..]
                )
            } else {
                String::new()
            }
        );
    }
    eprintln!(
        "{}: the raw arm's lens show read: {:?}",
        cli.name(),
        &raw[3].text[..raw[3].text.len().min(120)]
    );
    let log = std::fs::read_to_string(arm.root.join("lens/log/runs.jsonl")).unwrap();
    let hooked = |c: &str| {
        log.lines().any(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .is_ok_and(|v| v.pointer("/hook/command").and_then(|c| c.as_str()) == Some(c))
        })
    };
    // Claude Code 2.1.328 runs no PostToolUse for a failing command: its
    // output reaches the model raw in both arms, and Lens never sees it.
    if cli == AgentCli::Claude {
        assert!(!hooked(FAILURE), "{log}");
        assert_eq!(raw[2].text, with[2].text);
    }
    let seen: Vec<usize> = (0..3).filter(|&i| hooked(&commands[i])).collect();
    assert!(seen.len() >= 2, "{}: {log}", cli.name());
    assert!(hooked(&commands[3]), "{}: {log}", cli.name());
    let sum = |r: &[harness::model_server::ToolResult]| -> u64 {
        seen.iter().map(|&i| r[i].text.len() as u64).sum()
    };
    eprintln!("{}", String::from_utf8_lossy(&arm.lens(&["stats"]).stdout));
    let stats: serde_json::Value =
        serde_json::from_slice(&arm.lens(&["stats", "--json"]).stdout).unwrap();
    let a = &stats["agents"][cli.name()];
    let num = |k: &str| a[k].as_u64().unwrap_or_else(|| panic!("{k}: {stats}"));
    let (would, read, fetched) = (
        num("would_read_bytes"),
        num("read_bytes"),
        num("fetched_bytes"),
    );
    eprintln!(
        "{}: stats would read {would} B (server raw {}), read {read} B (server lens {}), fetched {fetched} B (server {})",
        cli.name(),
        sum(&raw),
        sum(&with),
        with[3].text.len()
    );
    assert_eq!(num("fetches"), 1, "{a}");
    assert!(near(would, sum(&raw)), "{}: would read: {a}", cli.name());
    assert!(near(read, sum(&with)), "{}: read: {a}", cli.name());
    assert!(
        near(fetched, with[3].text.len() as u64),
        "{}: fetched: {a}",
        cli.name()
    );
}

#[test]
fn claude_stats_match_what_the_model_received() {
    session(AgentCli::Claude);
}

#[test]
fn codex_stats_match_what_the_model_received() {
    session(AgentCli::Codex);
}

#[test]
fn gemini_stats_match_what_the_model_received() {
    session(AgentCli::Gemini);
}

#[test]
fn opencode_stats_match_what_the_model_received() {
    session(AgentCli::Opencode);
}
