//! Lens inside the real agent CLIs, as a user installs it: `lens init --agent X`
//! into a temp HOME, then the CLI runs a scripted session against the project's
//! model server, once without Lens and once with it. The contract: every
//! permission decision is the same in both arms (the same commands run, the
//! same ones are refused with the same words), and what the model reads
//! differs only where Lens answered with a view, whose handle `lens show`
//! opens to the command's full output. Skipped with one line when the CLIs are
//! not installed (`make agents`), unless LENS_REQUIRE_AGENTS=1.

mod agents_ready;
mod arm_root;
mod lens_bin;

use std::path::Path;
use std::process::Command;

use agents_ready::available;
use arm_root::Root;
use harness::agent_cli::{AgentCli, RunOutcome, RunSpec};
use harness::model_server::{Action, Script, ToolResult, Turn};
use regex::Regex;

/// The commands every session runs, in order. The `touch` lines leave a file
/// behind when they run; the rules of each session decide which may.
const DENIED: &str = "touch denied-a";
const ALLOWED: &str = "touch allowed-b";
const UNRULED: &str = "touch unruled-c";
/// A git status of 220 changed files: what Lens has a digest for.
const BIG: &str = "git status";
/// The same through a compound line and a pipe.
const PIPED: &str = "cd . && git status 2>&1 | tail -n 400";
/// Exit 3 after the big output.
const FAILING: &str = "git status; exit 3";
/// About 400 KB of lines.
const HUGE: &str = "seq 1 70000";
/// A small output: raw in both arms.
const SMALL: &str = "ls";

/// One arm's world: HOME, the project (a git repository with 220 changed
/// files), and Lens's store, log and config.
struct Arm {
    world: Root,
    lens: bool,
}

impl Arm {
    fn new(cli: AgentCli, case: &str, lens: bool) -> Arm {
        let name = format!(
            "lens-real-{}-{case}-{}",
            cli.name(),
            if lens { "lens" } else { "raw" }
        );
        let root = Root::new(&name, 220, |i| format!("handler_{i:03}.rs"));
        Arm { world: root, lens }
    }

    /// Installs Lens for `cli` in this arm's HOME, as a user would.
    fn install(&self, cli: AgentCli) {
        if !self.lens {
            return;
        }
        self.lens(&["init", "--agent", cli.name(), "--global"]);
    }

    fn run(
        &self,
        cli: AgentCli,
        commands: &[&str],
        args: &[&str],
        env: &[(&str, &str)],
    ) -> RunOutcome {
        let script = Script::commands(commands.iter().map(|c| c.to_string()).collect(), "Done.");
        self.run_script(cli, script, args, env)
    }

    fn run_script(
        &self,
        cli: AgentCli,
        script: Script,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> RunOutcome {
        let mut spec = RunSpec::new("Run the commands.", script, &self.home(), &self.project())
            .args(args.iter().copied());
        for (k, v) in env {
            spec = spec.env(k, v);
        }
        for (k, v) in self.lens_env() {
            spec = spec.env(&k, &v);
        }
        spec.extra_path = Some(lens_bin::lens_binary().parent().unwrap().to_path_buf());
        spec.time_limit = std::time::Duration::from_secs(240);
        let out = cli.run(&spec).unwrap();
        eprintln!(
            "{} ({}) run: {:.1} s, exit {}, {} requests",
            cli.name(),
            if self.lens { "with lens" } else { "raw" },
            out.wall.as_secs_f64(),
            out.exit,
            out.requests.len()
        );
        out
    }

    /// Runs `commands` and returns the run and what the model read of them:
    /// one result for each command, or the test fails saying what happened.
    fn read(
        &self,
        cli: AgentCli,
        commands: &[&str],
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (RunOutcome, Vec<ToolResult>) {
        let out = self.run(cli, commands, args, env);
        let read = out.tool_results();
        assert_eq!(read.len(), commands.len(), "{}", out.describe());
        (out, read)
    }

    /// What `lens ARGS` printed on stdout in this arm.
    fn lens_says(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.lens(args).stdout).into_owned()
    }

    /// The files the `touch` commands left.
    fn touched(&self) -> Vec<&'static str> {
        [DENIED, ALLOWED, UNRULED]
            .into_iter()
            .filter(|c| self.project().join(&c[6..]).exists())
            .collect()
    }
}

impl std::ops::Deref for Arm {
    type Target = Root;

    fn deref(&self) -> &Root {
        &self.world
    }
}

/// What the model read for each call, with the arm's own paths and Codex's
/// per-run header fields made alike, so two arms compare.
fn received(arm: &Arm, out: &RunOutcome, n: usize) -> Vec<String> {
    let r = out.tool_results();
    assert_eq!(r.len(), n, "{}", out.describe());
    let root = arm.root.display().to_string();
    r.iter()
        .map(|t| {
            // OpenCode lists the rules that applied in a refusal, and Lens's
            // allow rule for `lens show` is one of them: the decision is the same.
            let mut text = t.text.replace(&root, "<root>").replace(
                r#",{"permission":"bash","pattern":"lens show *","action":"allow"}"#,
                "",
            );
            // Codex: "Chunk ID: 9fce29\nWall time: 0.0000 seconds\n"; Gemini:
            // "Process Group PGID: 17060"; Claude's persisted-output file names.
            // Copilot CLI and Qwen Code name the file a cut output went to.
            for (from, to) in [
                ("Chunk ID: ", '\n'),
                ("Wall time: ", '\n'),
                ("PGID: ", '\n'),
                ("tool-results/", '.'),
                ("Saved to: ", '\n'),
                ("saved to: ", '\n'),
            ] {
                let mut at = 0;
                while let Some(i) = text[at..].find(from) {
                    let start = at + i + from.len();
                    let end = text[start..].find(to).map_or(text.len(), |e| start + e);
                    text.replace_range(start..end, "*");
                    at = start + 1;
                }
            }
            text
        })
        .collect()
}

/// The handle in a Lens view, if the text is one.
fn handle(text: &str) -> Option<String> {
    let at = text.find("[lens: ")?;
    let h = text[at..].find("handle=")? + at + 7;
    Some(text[h..h + 8].to_string())
}

/// The session in both arms; asserts the contract and returns what each arm's
/// model read, raw first.
fn both(
    cli: AgentCli,
    case: &str,
    commands: &[&str],
    setup: impl Fn(&Arm),
    args: &[&str],
    env: &[(&str, &str)],
) -> (Vec<String>, Vec<String>, Arm) {
    let mut got = Vec::new();
    let mut arms = Vec::new();
    for lens in [false, true] {
        let arm = Arm::new(cli, case, lens);
        setup(&arm);
        arm.install(cli);
        let out = arm.run(cli, commands, args, env);
        got.push((received(&arm, &out, commands.len()), arm.touched()));
        arms.push(arm);
    }
    let (with, without) = (got.pop().unwrap(), got.pop().unwrap());
    assert_eq!(
        with.1,
        without.1,
        "{}: the commands that ran differ with Lens",
        cli.name()
    );
    let with_arm = arms.pop().unwrap();
    // A command the agent refused never reached Lens's hook.
    let log =
        std::fs::read_to_string(with_arm.root.join("lens/log/runs.jsonl")).unwrap_or_default();
    for c in [DENIED, ALLOWED, UNRULED] {
        if commands.contains(&c) && !with.1.contains(&c) {
            assert!(
                !log.contains(&format!("\"command\":\"{c}\"")),
                "{}: the refused {c:?} reached the hook:\n{log}",
                cli.name()
            );
        }
    }
    // Every command that ran reached it.
    for c in &with.1 {
        assert!(
            log.contains(&format!("\"command\":\"{c}\"")),
            "{}: {c:?} ran and never reached the hook:\n{log}",
            cli.name()
        );
    }
    for (i, (w, r)) in with.0.iter().zip(&without.0).enumerate() {
        match handle(w) {
            // A view: smaller than what the raw arm read, and its handle opens
            // the command's whole output.
            Some(h) if handle(r).is_none() => {
                assert!(
                    w.len() < r.len(),
                    "{}: call {i} ({}): the view is not smaller:\n{w}",
                    cli.name(),
                    commands[i]
                );
                let shown = with_arm.lens(&["show", &h]);
                assert!(!shown.stdout.is_empty());
            }
            // Qwen Code 0.24.4 now and then reads a finished command's output
            // as `(empty)`, with or without a hook (its pseudo-terminal read);
            // that call says nothing about Lens, so it is not compared.
            _ if cli == AgentCli::Qwen
                && (w.contains("\nOutput: (empty)\n") || r.contains("\nOutput: (empty)\n")) =>
            {
                eprintln!(
                    "qwen: call {i} ({}) read (empty) in one arm; not compared",
                    commands[i]
                );
            }
            // Otherwise the model read exactly what it reads without Lens:
            // the same output, or the same refusal.
            _ => assert_eq!(
                w,
                r,
                "{}: call {i} ({}) differs with Lens",
                cli.name(),
                commands[i]
            ),
        }
    }
    (without.0, with.0, with_arm)
}

/// The full `git status` of an arm's project, as `lens show` must give it back.
fn git_status(arm: &Arm) -> String {
    let out = Command::new("git")
        .arg("status")
        .current_dir(arm.project())
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn report(cli: AgentCli, commands: &[&str], raw: &[String], lens: &[String]) {
    for (i, c) in commands.iter().enumerate() {
        let verdict = match (handle(&lens[i]), raw[i] == lens[i]) {
            (Some(_), _) => "view",
            (None, true) => "same",
            (None, false) => "DIFFERENT",
        };
        eprintln!(
            "{}: {c:<40} raw {:>7} B   with lens {:>7} B   {verdict}",
            cli.name(),
            raw[i].len(),
            lens[i].len()
        );
    }
}

/// What one session must show: the calls whose result is the CLI's refusal
/// (with a word of it) and the calls the model reads as a Lens view.
struct Expect<'a> {
    refused: &'a [(usize, &'a str)],
    views: &'a [usize],
}

/// Runs the session in both arms (see [`both`]), prints what each call cost,
/// and checks the refusals and views; `None` when the CLI is not installed.
#[allow(clippy::too_many_arguments)]
fn check(
    cli: AgentCli,
    case: &str,
    commands: &[&str],
    setup: impl Fn(&Arm),
    args: &[&str],
    env: &[(&str, &str)],
    expect: Expect,
) -> Option<(Vec<String>, Arm)> {
    if !available(cli) {
        return None;
    }
    let (raw, lens, arm) = both(cli, case, commands, setup, args, env);
    report(cli, commands, &raw, &lens);
    for &(i, word) in expect.refused {
        assert!(
            raw[i].contains(word),
            "{}: call {i} ({}): {}",
            cli.name(),
            commands[i],
            raw[i]
        );
    }
    for &i in expect.views {
        assert!(
            handle(&lens[i]).is_some(),
            "{}: {}: {}",
            cli.name(),
            commands[i],
            lens[i]
        );
    }
    Some((lens, arm))
}

// Claude Code 2.1.328, default mode (as root): a deny rule in the user's
// settings and one from --disallowedTools, an allow rule from --allowedTools,
// a write no rule covers (refused in print mode), and read-only commands
// (allowed without a rule). Lens adds `Bash(lens show:*)` to the allow list,
// which must change nothing else.
#[test]
fn claude_default_mode_decides_the_same_with_lens() {
    let commands = [DENIED, ALLOWED, UNRULED, SMALL, BIG, "touch deny-flag-d"];
    let Some((lens, arm)) = check(
        AgentCli::Claude,
        "default",
        &commands,
        |a| {
            a.write(
                "home/.claude/settings.json",
                "{\n  \"permissions\": {\"deny\": [\"Bash(touch denied-a)\"]}\n}\n",
            )
        },
        &[
            "--allowedTools",
            "Bash(touch allowed-b)",
            "--disallowedTools",
            "Bash(touch deny-flag-d)",
        ],
        &[],
        Expect {
            refused: &[(0, "denied"), (2, "approval"), (5, "denied")],
            views: &[4],
        },
    ) else {
        return;
    };
    let h = handle(&lens[4]).unwrap();
    assert_eq!(
        String::from_utf8(arm.lens(&["show", &h]).stdout)
            .unwrap()
            .trim_end(),
        git_status(&arm).trim_end()
    );
}

// Bypass mode (IS_SANDBOX=1 as root): every command runs but the deny rules
// from --settings and the project's settings; a failing command (which
// Claude's failure event cannot replace), a pipe and a 400 KB output.
#[test]
fn claude_bypass_mode_decides_the_same_with_lens() {
    let commands = [DENIED, ALLOWED, UNRULED, BIG, PIPED, FAILING, HUGE];
    let Some((lens, _arm)) = check(
        AgentCli::Claude,
        "bypass",
        &commands,
        |a| {
            a.write(
                "settings-extra.json",
                "{\"permissions\": {\"deny\": [\"Bash(touch denied-a)\"]}}",
            );
            a.write(
                "project/.claude/settings.json",
                "{\"permissions\": {\"deny\": [\"Bash(touch unruled-c)\"]}}",
            );
        },
        &[
            "--dangerously-skip-permissions",
            "--settings",
            "../settings-extra.json",
        ],
        &[("IS_SANDBOX", "1")],
        Expect {
            refused: &[(0, "denied"), (2, "denied")],
            views: &[3, 4, 6],
        },
    ) else {
        return;
    };
    // The failing command reaches the model as Claude Code cut it, in both.
    assert!(handle(&lens[5]).is_none() && lens[5].starts_with("Exit code 3"));
}

// Codex CLI 0.169.0: an exec-policy rule forbids one command, the workspace
// sandbox without approvals runs the rest; the hook is trusted for the run.
#[test]
fn codex_decides_the_same_with_lens() {
    let commands = [DENIED, ALLOWED, SMALL, BIG, PIPED, FAILING, HUGE];
    let Some((lens, _arm)) = check(
        AgentCli::Codex,
        "policy",
        &commands,
        |a| {
            a.write("home/.codex/rules/default.rules", "prefix_rule(pattern=[\"touch\", \"denied-a\"], decision=\"forbidden\", justification=\"not here\")\n")
        },
        &[
            "-s",
            "workspace-write",
            "-c",
            "approval_policy=\"never\"",
            "--dangerously-bypass-hook-trust",
        ],
        &[],
        Expect {
            refused: &[(0, "Rejected")],
            views: &[3, 4, 5],
        },
    ) else {
        return;
    };
    assert!(
        lens[5].starts_with("Process exited with code 3"),
        "{}",
        lens[5]
    );
}

// Gemini CLI 0.61.0 in yolo mode: a user policy denies one command (it beats
// yolo); the rest run.
#[test]
fn gemini_decides_the_same_with_lens() {
    let commands = [DENIED, ALLOWED, SMALL, BIG, PIPED, FAILING, HUGE];
    let Some((lens, _arm)) = check(
        AgentCli::Gemini,
        "policy",
        &commands,
        |a| {
            a.write(
            "home/.gemini/policies/deny.toml",
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch denied-a\"\ndecision = \"deny\"\npriority = 500\n",
        )
        },
        &["--approval-mode", "yolo"],
        &[],
        Expect {
            refused: &[(0, "denied")],
            views: &[3, 4, 5, 6],
        },
    ) else {
        return;
    };
    assert!(lens[5].contains("Exit Code: 3"), "{}", lens[5]);
}

// OpenCode 1.18.33: a deny pattern in the user's opencode.json; Lens adds
// `"lens show *": "allow"` beside it.
#[test]
fn opencode_decides_the_same_with_lens() {
    let commands = [DENIED, ALLOWED, SMALL, BIG, PIPED, FAILING, HUGE];
    check(
        AgentCli::Opencode,
        "deny",
        &commands,
        |a| {
            a.write(
            "home/.config/opencode/opencode.json",
            "{\n  \"permission\": {\n    \"bash\": {\n      \"touch denied-a\": \"deny\"\n    }\n  }\n}\n",
        )
        },
        &[],
        &[],
        Expect {
            refused: &[(0, "prevents")],
            views: &[3, 4, 5, 6],
        },
    );
}

// Where Codex and Gemini CLI keep what the model read of a hooked call (their
// print-mode streams do not): the rollout under CODEX_HOME/sessions, the chat
// recording under ~/.gemini/tmp/<project>/chats. `harness transcripts` reads
// each, finds the hook's view as the model server received it, and counts
// what `git status` printed: from the rollout's record of the call (Codex),
// from the store for the view's handle (Gemini CLI).
#[test]
fn hooked_codex_and_gemini_persist_the_view_the_model_read() {
    use harness::transcript::{parse, persisted};
    for (cli, args) in [
        (
            AgentCli::Codex,
            &[
                "-s",
                "workspace-write",
                "-c",
                "approval_policy=\"never\"",
                "--dangerously-bypass-hook-trust",
            ][..],
        ),
        (AgentCli::Gemini, &["--approval-mode", "yolo"][..]),
    ] {
        if !available(cli) {
            continue;
        }
        let arm = Arm::new(cli, "persisted", true);
        arm.install(cli);
        let out = arm.run(cli, &[BIG, SMALL], args, &[]);
        let read = out.tool_results();
        assert_eq!(read.len(), 2, "{}", out.describe());
        assert!(handle(&read[0].text).is_some(), "{}", read[0].text);
        let file = persisted(cli.name(), &arm.home())
            .unwrap_or_else(|| panic!("{}: no persisted session", cli.name()));
        let mut t = parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let cmds: Vec<&str> = t.shell.iter().map(|c| c.command.as_str()).collect();
        assert_eq!(cmds, [BIG, SMALL], "{}", file.display());
        // The view, as the model server received it (inside the CLI's frame).
        assert!(t.shell[0].is_lens_view(), "{}", t.shell[0].output);
        assert!(
            read[0].text.contains(t.shell[0].output.trim_end()),
            "{}: {:?} is not in {:?}",
            cli.name(),
            t.shell[0].output,
            read[0].text
        );
        assert!(!t.shell[1].is_lens_view());
        if cli == AgentCli::Gemini {
            let store = arm.root.join("lens/store");
            assert_eq!(harness::replay::printed_from_store(&mut t, &store), 1);
        }
        let r = harness::replay::replay(&t.shell[0], cli.name());
        assert_eq!(r.fate, harness::replay::Fate::AlreadyLens);
        // Gemini CLI hands its hook the output without its last newline, and
        // the store keeps what the hook was handed.
        let printed = match cli {
            AgentCli::Gemini => git_status(&arm).trim_end_matches('\n').len(),
            _ => git_status(&arm).len(),
        };
        assert_eq!(r.raw_bytes, printed as u64, "{}", cli.name());
        assert!(r.view_bytes * 10 < r.raw_bytes, "{r:?}");
    }
}

/// 1,000 lines of 55 bytes (under the 64 KiB Codex keeps of an output whole):
/// a view hides most of them, and 300 of them (16.5 KB) are more than Codex
/// hands the model of a result uncut (10 KB) and less than Claude Code, Gemini
/// CLI and OpenCode do.
const STEPS: &str = "seq -f 'build step %05g: compiling module with flags -O2 -Wall' 1 1000";

/// Line `n` of [`STEPS`].
fn step(n: u64) -> String {
    format!("build step {n:05}: compiling module with flags -O2 -Wall")
}

/// The handle and a range of 300 lines the view's first long elided region
/// hides, as a model reading the marker picks it.
fn hidden_range(view: &str) -> Option<(String, u64, u64)> {
    let marker =
        Regex::new(r"\[lens: elided stdout (\d+)-(\d+) \([^\n]*handle=([0-9a-f]{8})(?: digest=\d+)?(?: unlisted=\d+)?\]").unwrap();
    let found = marker.captures_iter(view).find_map(|c| {
        let (a, b): (u64, u64) = (c[1].parse().ok()?, c[2].parse().ok()?);
        (b >= a + 400).then(|| (c[3].to_string(), a + 50, a + 349))
    });
    found
}

/// What Qwen Code 0.24.4 needs after a command for the model to read all it
/// printed: in a one-shot session its shell tool resolves on the child's
/// `exit` event and drops what the pipe still holds (its `childProcessFallback`
/// drains only when it streams), so a 55 KB output came back as 659 of its
/// 1,000 lines on a loaded machine, with or without a hook. A pause after the
/// last write lets it read everything first.
const QWEN_DRAIN: &str = "; sleep 0.5";

/// The model: runs [`STEPS`], then `lens show H --lines A-B` of a range the
/// marker in what came back hides, then stops. Each command ends with `tail`
/// (see [`QWEN_DRAIN`]); the hook leaves `lens show …; sleep 0.5` alone as it
/// does any line that runs Lens.
fn fetching_model(tail: &'static str) -> Script {
    Script::custom(move |turn: &Turn| {
        let text = |t: &str| Action::Text { text: t.into() };
        match turn.calls_made {
            0 => Action::Shell {
                command: format!("{STEPS}{tail}"),
            },
            1 => match turn
                .tool_results
                .first()
                .and_then(|r| hidden_range(&r.text))
            {
                Some((h, a, b)) => Action::Shell {
                    command: format!("lens show {h} --lines {a}-{b}{tail}"),
                },
                None => text("No Lens view came back."),
            },
            _ => text("Done."),
        }
    })
}

/// The handles of the runs in a store.
fn stored_runs(store: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(store)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.len() == 8 && n.bytes().all(|b| b.is_ascii_hexdigit()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// What a `lens show H --lines A-B` the model ran came back as: the raw lines
/// A-B, or (where the agent shows less than that uncut) lines A-L then the
/// page marker naming H and lines L+1-B; never another handle, a digest or an
/// elision. Returns L.
fn fetched(cli: AgentCli, text: &str, h: &str, (a, b): (u64, u64)) -> u64 {
    let name = cli.name();
    for c in Regex::new(r"handle=([0-9a-f]{8})")
        .unwrap()
        .captures_iter(text)
    {
        assert_eq!(&c[1], h, "{name}: another handle in the fetch:\n{text}");
    }
    assert!(
        !text.contains("[lens: elided")
            && !text.contains("[lens: view")
            && !text.contains("digest="),
        "{name}: the fetch was filtered again:\n{text}"
    );
    let lines = |to: u64| (a..=to).map(step).collect::<Vec<_>>().join("\n");
    if text.contains(&lines(b)) {
        assert!(
            !text.contains(&step(b + 1)),
            "{name}: more than asked:\n{text}"
        );
        return b;
    }
    let page = Regex::new(
        r"\[lens: shown stdout (\d+)-(\d+) of \d+ \(lines (\d+)-(\d+) not shown\) handle=([0-9a-f]{8})\]",
    )
    .unwrap();
    let c = page
        .captures(text)
        .unwrap_or_else(|| panic!("{name}: neither lines {a}-{b} nor a page of them:\n{text}"));
    let n = |i: usize| c[i].parse::<u64>().unwrap();
    let last = n(2);
    assert_eq!((n(1), n(3), n(4)), (a, last + 1, b), "{name}: {}", &c[0]);
    assert!(last >= a + 9, "{name}: a page of {} lines", last + 1 - a);
    assert!(
        text.contains(&format!("{}\n{}", lines(last), &c[0])),
        "{name}: the page is not lines {a}-{last} then its marker:\n{text}"
    );
    last
}

/// One session: a big output reaches the model as Lens's view, the model
/// fetches 300 lines the view hid with `lens show`, and receives exactly those
/// lines (or a page of them under the same handle); the store gains no run.
fn model_fetches_hidden_lines(cli: AgentCli, args: &[&str], env: &[(&str, &str)]) {
    if !available(cli) {
        return;
    }
    let arm = Arm::new(cli, "fetch", true);
    arm.install(cli);
    // Where the user installed Lens, as their login shell finds it (Codex runs
    // the model's commands through `bash -lc`, and /etc/profile sets PATH anew).
    let bin = lens_bin::lens_binary()
        .parent()
        .unwrap()
        .display()
        .to_string();
    arm.write("home/.profile", &format!("export PATH=\"{bin}:$PATH\"\n"));
    let tail = if cli == AgentCli::Qwen {
        QWEN_DRAIN
    } else {
        ""
    };
    let out = arm.run_script(cli, fetching_model(tail), args, env);
    let r = out.tool_results();
    assert_eq!(r.len(), 2, "{}: {}", cli.name(), out.describe());
    let view = &r[0].text;
    assert!(
        view.contains("[lens: view of 1000 lines"),
        "{}: the first result is not a view:\n{view}",
        cli.name()
    );
    let (h, a, b) = hidden_range(view).unwrap();
    let last = fetched(cli, &r[1].text, &h, (a, b));
    eprintln!(
        "{}: view {} B; lens show {h} --lines {a}-{b}: {} B, lines {a}-{last}",
        cli.name(),
        view.len(),
        r[1].text.len()
    );
    assert_eq!(
        stored_runs(&arm.root.join("lens/store")),
        [h],
        "{}: the fetch stored a run",
        cli.name()
    );
}

#[test]
fn claude_model_fetches_hidden_lines_with_lens_show() {
    // Default mode: the allow rule `lens init` adds lets `lens show` run.
    model_fetches_hidden_lines(AgentCli::Claude, &["--allowedTools", "Bash(seq:*)"], &[]);
}

#[test]
fn codex_model_fetches_hidden_lines_with_lens_show() {
    model_fetches_hidden_lines(
        AgentCli::Codex,
        &[
            "-s",
            "workspace-write",
            "-c",
            "approval_policy=\"never\"",
            "--dangerously-bypass-hook-trust",
        ],
        &[],
    );
}

#[test]
fn gemini_model_fetches_hidden_lines_with_lens_show() {
    model_fetches_hidden_lines(AgentCli::Gemini, &["--approval-mode", "yolo"], &[]);
}

#[test]
fn opencode_model_fetches_hidden_lines_with_lens_show() {
    model_fetches_hidden_lines(AgentCli::Opencode, &[], &[]);
}

// Gemini CLI 0.61.0 appends `Exit Code: 1` and `Process Group PGID: N` to a
// failing command's output; the output's own last line, which begins `Error:`
// here, is the output's, and reaches the model and the store (issue #30.4).
#[test]
fn gemini_keeps_an_error_on_the_last_line() {
    let cli = AgentCli::Gemini;
    if !available(cli) {
        return;
    }
    let failing = "seq 1 3000; echo 'Error: INSTALLATION FAILED: x'; exit 1";
    let arm = Arm::new(cli, "error-line", true);
    arm.install(cli);
    let out = arm.run(cli, &[failing], &["--approval-mode", "yolo"], &[]);
    let r = out.tool_results();
    assert_eq!(r.len(), 1, "{}", out.describe());
    let view = &r[0].text;
    let h = handle(view).unwrap_or_else(|| panic!("not a view:\n{view}"));
    assert!(
        view.contains("3000\nError: INSTALLATION FAILED: x\nExit Code: 1"),
        "{view}"
    );
    let shown = String::from_utf8(arm.lens(&["show", &h]).stdout).unwrap();
    assert!(
        shown.ends_with("3000\nError: INSTALLATION FAILED: x\n")
            || shown.ends_with("3000\nError: INSTALLATION FAILED: x"),
        "{}",
        &shown[shown.len().saturating_sub(200)..]
    );
}

// Gemini CLI 0.61.0 where the user took `read_file` away (a project's
// `tools.exclude`) or denies it (a `--policy` file): the answer's `read_file`
// call would come back `Tool "read_file" not found`, so the hook answers
// nothing and the model reads Gemini's own output, as without Lens; the log
// says why (issue #30.3).
#[test]
fn gemini_without_read_file_keeps_its_own_output() {
    const DENY: &str = "[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 900\n";
    let cases: [(&str, &str, &str, &[&str], &str); 2] = [
        (
            "exclude",
            "project/.gemini/settings.json",
            "{\"tools\": {\"exclude\": [\"read_file\"]}}\n",
            &["--approval-mode", "yolo"],
            "gemini-read-file-excluded",
        ),
        (
            "policy-flag",
            "deny-read.toml",
            DENY,
            &["--approval-mode", "yolo", "--policy", "../deny-read.toml"],
            "gemini-read-file-policy",
        ),
    ];
    for (case, rel, text, args, why) in cases {
        let Some((lens, arm)) = check(
            AgentCli::Gemini,
            case,
            &[BIG],
            |a| a.write(rel, text),
            args,
            &[],
            Expect {
                refused: &[],
                views: &[],
            },
        ) else {
            return;
        };
        assert!(
            lens[0].contains("src/handler_219.rs") && !lens[0].contains("not found"),
            "{case}: {}",
            lens[0]
        );
        let log = std::fs::read_to_string(arm.root.join("lens/log/runs.jsonl")).unwrap();
        assert!(log.contains(why), "{case}: {log}");
    }
}

/// A build that prints 3,000 lines and fails on its last one.
const MAKEFILE: &str = "all:\n\t@seq -f 'compiling unit %g of the build' 1 3000\n\t@echo 'error: unit 3000: undefined reference to main' >&2\n\t@false\n";

// Claude Code 2.1.328 runs no `PostToolUse` hook for a failing command, so the
// awareness block's way to a view of a failing build is `lens make`. What that
// costs in default mode (print mode refuses what would need approval): `lens`
// is no wrapper Claude Code looks through, so a rule for `make` does not cover
// `lens make`; only a rule naming `lens make` itself does, and then the model
// reads the view with the error in place of Claude's cut without it.
#[test]
fn claude_runs_lens_make_only_where_a_rule_names_it() {
    let cli = AgentCli::Claude;
    if !available(cli) {
        return;
    }
    let mut got = Vec::new();
    for (case, rules) in [
        ("no-rule", &[][..]),
        ("make-rule", &["Bash(make:*)"][..]),
        ("lens-make-rule", &["Bash(make:*)", "Bash(lens make:*)"][..]),
    ] {
        let arm = Arm::new(cli, case, true);
        arm.write("project/Makefile", MAKEFILE);
        arm.install(cli);
        let args: Vec<&str> = rules.iter().flat_map(|r| ["--allowedTools", r]).collect();
        let out = arm.run(cli, &["make", "lens make"], &args, &[]);
        let r = out.tool_results();
        assert_eq!(r.len(), 2, "{case}: {}", out.describe());
        for (c, t) in ["make", "lens make"].iter().zip(&r) {
            eprintln!(
                "claude, {case}: {c}: {} B: {:?} … {:?}",
                t.text.len(),
                &t.text[..t.text.len().min(90)],
                &t.text[t.text.len().saturating_sub(90)..]
            );
        }
        got.push((r[0].text.clone(), r[1].text.clone()));
    }
    let refused = |t: &str| t.contains("approval") && !t.contains("compiling unit");
    let error = "error: unit 3000: undefined reference to main";
    // No rule: neither runs.
    assert!(refused(&got[0].0) && refused(&got[0].1), "{got:?}");
    // A rule for make: make runs, and its failure reaches the model cut,
    // without the error; lens make is still refused.
    assert!(got[1].0.starts_with("Exit code 2") && !got[1].0.contains(error));
    assert!(refused(&got[1].1), "{}", got[1].1);
    // A rule for lens make: the model reads the view, with the error.
    let view = &got[2].1;
    assert!(
        view.contains("[lens: elided stdout") && view.contains(error),
        "{view}"
    );
    assert!(view.len() < got[2].0.len(), "{view}");
}

/// Every file and directory under `dir` (but `.git`), by relative path, with
/// its bytes (a directory's are empty).
fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

// OpenCode 1.18.33 waits, at the start of a session with any plugin, for an
// npm install of `@opencode-ai/plugin` into each config directory that has no
// `node_modules` or no lock file naming it; offline that is npm's whole retry
// time (75 s against 5 s raw when it was measured). `lens init` leaves the
// plugin's directory as that install finishes it, so OpenCode starts none: no
// npm lock is ever taken, no package lands in `node_modules`, and the plugin
// still answers with a view. (The registry is pointed at a closed port so a
// regression fails fast rather than downloading.)
#[test]
fn opencode_with_lens_starts_no_npm_install() {
    let cli = AgentCli::Opencode;
    if !available(cli) {
        return;
    }
    let registry = [("npm_config_registry", "http://127.0.0.1:9/")];
    let raw = Arm::new(cli, "npm", false);
    let raw_out = raw.run(cli, &[BIG], &[], &registry);
    let arm = Arm::new(cli, "npm", true);
    arm.install(cli);
    let out = arm.run(cli, &[BIG], &[], &registry);
    eprintln!(
        "opencode start to finish, offline: raw {:.1} s, with lens {:.1} s",
        raw_out.wall.as_secs_f64(),
        out.wall.as_secs_f64()
    );
    let read = out.tool_results();
    assert_eq!(read.len(), 1, "{}", out.describe());
    assert!(handle(&read[0].text).is_some(), "{}", read[0].text);
    let home = arm.home();
    let locks = home.join(".local/state/opencode/locks");
    assert!(
        !locks.exists(),
        "OpenCode started an npm install: {:?}",
        tree(&locks)
    );
    let dir = home.join(".config/opencode");
    let modules: Vec<String> = tree(&dir.join("node_modules")).into_keys().collect();
    assert_eq!(modules, [".lens"]);
    assert!(!dir.join("package.json").exists());
    let log = tree(&home.join(".local/share/opencode/log"));
    assert!(
        !log.values()
            .any(|b| String::from_utf8_lossy(b).contains("dependency install")),
        "OpenCode logged an install"
    );
}

// Lens installed for the user and the project, one session, then uninstalled:
// the user's config directory and the project are as they were before `lens
// init`, byte for byte, though OpenCode gave both config files a `$schema` and
// ran with Lens's plugin in both config directories.
#[test]
fn opencode_uninstall_after_a_session_leaves_no_trace() {
    let cli = AgentCli::Opencode;
    if !available(cli) {
        return;
    }
    let arm = Arm::new(cli, "uninstall", true);
    arm.write(
        "home/.config/opencode/opencode.json",
        "{\n  \"permission\": {\"bash\": {\"touch denied-a\": \"deny\"}}\n}\n",
    );
    let config = arm.home().join(".config");
    let before = (tree(&config), tree(&arm.project()));
    arm.lens(&["init", "--agent", "opencode", "--global"]);
    arm.lens(&["init", "--agent", "opencode", "--project"]);
    let out = arm.run(
        cli,
        &[BIG],
        &[],
        &[("npm_config_registry", "http://127.0.0.1:9/")],
    );
    assert_eq!(out.tool_results().len(), 1, "{}", out.describe());
    let opened =
        std::fs::read_to_string(arm.home().join(".config/opencode/opencode.json")).unwrap();
    assert!(
        opened.contains("$schema"),
        "OpenCode left it as it was: {opened}"
    );
    for scope in ["--global", "--project"] {
        let said = arm.lens(&["init", "--agent", "opencode", scope, "--uninstall"]);
        let said = String::from_utf8_lossy(&said.stdout).into_owned();
        assert!(!said.contains("edited since"), "{said}");
    }
    assert_eq!((tree(&config), tree(&arm.project())), before);
}

/// Codex's arguments for a run whose hooks run untrusted by a person.
const CODEX_ARGS: [&str; 5] = [
    "-s",
    "workspace-write",
    "-c",
    "approval_policy=\"never\"",
    "--dangerously-bypass-hook-trust",
];

// Codex CLI 0.169.0: the one hook answer that replaces what the model reads
// of a shell call, `decision: block`, is logged on the user's terminal as an
// error holding the view, as `lens init` warns; `suppressOutput`, which would
// keep it quiet, is refused, and the model then reads Codex's own output.
#[test]
fn codex_shows_a_shortened_call_as_blocked_as_init_says() {
    let cli = AgentCli::Codex;
    if !available(cli) {
        return;
    }
    let arm = Arm::new(cli, "blocked", true);
    let said = arm.lens_says(&["init", "--agent", "codex", "--global"]);
    assert!(
        said.contains("'PostToolUse Blocked' and logs the view at ERROR level"),
        "{said}"
    );
    let (out, read) = arm.read(cli, &[BIG], &CODEX_ARGS, &[]);
    let h = handle(&read[0].text).unwrap_or_else(|| panic!("{}", read[0].text));
    // The terminal: an ERROR line from Codex's tool router, the view in it.
    let error = out
        .stderr
        .lines()
        .position(|l| l.contains("ERROR codex_core::tools::router"))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    let logged: Vec<&str> = out.stderr.lines().skip(error).take(4).collect();
    assert!(
        logged.iter().any(|l| l.contains(&format!("handle={h}"))),
        "{logged:?}"
    );

    // The same answer with `suppressOutput`: the hook counts as failed.
    let quiet = Arm::new(cli, "suppress", true);
    let hook = quiet.root.join("quiet-hook.sh");
    quiet.write(
        "quiet-hook.sh",
        "#!/bin/sh\ncat >/dev/null\necho '{\"decision\":\"block\",\"reason\":\"LENS-VIEW\",\"suppressOutput\":true}'\n",
    );
    Command::new("chmod").arg("+x").arg(&hook).status().unwrap();
    quiet.write(
        "home/.codex/hooks.json",
        &format!(
            "{{\"hooks\":{{\"PostToolUse\":[{{\"matcher\":\"Bash\",\"hooks\":[{{\"type\":\"command\",\"command\":\"{}\"}}]}}]}}}}",
            hook.display()
        ),
    );
    let (_, read) = quiet.read(cli, &[BIG], &CODEX_ARGS, &[]);
    assert!(!read[0].text.contains("LENS-VIEW"), "{}", read[0].text);
    assert!(
        read[0].text.contains("Process exited with code 0"),
        "{}",
        read[0].text
    );
}

// A `--project` install: Codex 0.169.0 skips the project's `.codex/hooks.json`
// until the project is trusted in ~/.codex/config.toml; with the line `lens
// init` prints added there, the hook runs and the model reads the view.
#[test]
fn codex_runs_a_project_hook_once_the_project_is_trusted_as_init_says() {
    let cli = AgentCli::Codex;
    if !available(cli) {
        return;
    }
    let arm = Arm::new(cli, "trust", true);
    let said = arm.lens_says(&["init", "--agent", "codex", "--project"]);
    let line = said
        .lines()
        .find(|l| l.contains("only in a trusted project"))
        .unwrap_or_else(|| panic!("{said}"));
    let toml = line
        .split_once("add `")
        .and_then(|(_, r)| r.split_once("` to ~/.codex/config.toml"))
        .map(|(t, _)| t.to_string())
        .unwrap_or_else(|| panic!("{line}"));
    let (untrusted, read) = arm.read(cli, &[BIG], &CODEX_ARGS, &[]);
    assert!(handle(&read[0].text).is_none(), "{}", read[0].text);
    assert!(
        untrusted
            .stderr
            .contains("Untrusted project-local configuration is disabled"),
        "{}",
        untrusted.stderr
    );
    // `[projects."<root>"] trust_level = "trusted"`, as TOML wants it.
    arm.write(
        "home/.codex/config.toml",
        &format!("{}\n", toml.replacen("] ", "]\n", 1)),
    );
    let (_, read) = arm.read(cli, &[BIG], &CODEX_ARGS, &[]);
    assert!(handle(&read[0].text).is_some(), "{}", read[0].text);
}

/// About 100 KB of lines, then exit 1: a long failure.
const FAILING_100K: &str = "seq 1 19000; exit 1";

// Kilo Code CLI 7.7.7 (an OpenCode fork, OpenCode's plugin): a deny pattern in
// the user's kilo.json; `--auto` allows what no rule denies. Lens adds
// `"lens show *": "allow"` beside the user's rule.
const KILO_ARGS: [&str; 1] = ["--auto"];
#[test]
fn kilo_decides_the_same_with_lens() {
    let commands = [
        DENIED,
        ALLOWED,
        SMALL,
        BIG,
        PIPED,
        FAILING,
        HUGE,
        FAILING_100K,
    ];
    check(
        AgentCli::Kilo,
        "deny",
        &commands,
        |a| {
            a.write(
                "home/.config/kilo/kilo.json",
                "{\n  \"permission\": {\n    \"bash\": {\n      \"touch denied-a\": \"deny\"\n    }\n  }\n}\n",
            )
        },
        &KILO_ARGS,
        &[("npm_config_registry", "http://127.0.0.1:9/")],
        Expect {
            refused: &[(0, "prevents")],
            views: &[3, 4, 5, 6, 7],
        },
    );
}

// pi 0.73.1 has no permission rules: a command is refused by a `tool_call`
// handler of the user's own extension, which Lens's extension (a
// `tool_result` handler) never changes. A failure's view keeps pi's
// "Command exited with code N" line.
#[test]
fn pi_decides_the_same_with_lens() {
    let commands = [
        DENIED,
        ALLOWED,
        SMALL,
        BIG,
        PIPED,
        FAILING,
        HUGE,
        FAILING_100K,
    ];
    let Some((lens, _arm)) = check(
        AgentCli::Pi,
        "deny",
        &commands,
        |a| {
            a.write(
                "home/.pi/agent/extensions/deny.js",
                "export default function (pi) {\n  pi.on(\"tool_call\", async (e) => {\n    if (e.toolName === \"bash\" && e.input?.command === \"touch denied-a\") return { block: true, reason: \"denied by the user's rule\" };\n  });\n}\n",
            )
        },
        &[],
        &[],
        Expect {
            refused: &[(0, "denied by the user's rule")],
            views: &[3, 4, 5, 6, 7],
        },
    ) else {
        return;
    };
    assert!(
        lens[5].ends_with("Command exited with code 3"),
        "{}",
        lens[5]
    );
    assert!(
        lens[7].ends_with("Command exited with code 1"),
        "{}",
        lens[7]
    );
}

#[test]
fn kilo_model_fetches_hidden_lines_with_lens_show() {
    model_fetches_hidden_lines(
        AgentCli::Kilo,
        &KILO_ARGS,
        &[("npm_config_registry", "http://127.0.0.1:9/")],
    );
}

#[test]
fn pi_model_fetches_hidden_lines_with_lens_show() {
    model_fetches_hidden_lines(AgentCli::Pi, &[], &[]);
}

// Lens installed for the user and the project, one session, then uninstalled:
// the user's config directory and the project are as the same session left
// them without Lens, byte for byte.
#[test]
fn kilo_and_pi_uninstall_after_a_session_leaves_no_trace() {
    for (cli, config, args, env) in [
        (
            AgentCli::Kilo,
            ".config/kilo",
            &KILO_ARGS[..],
            &[("npm_config_registry", "http://127.0.0.1:9/")][..],
        ),
        (AgentCli::Pi, ".pi", &[][..], &[][..]),
    ] {
        if !available(cli) {
            continue;
        }
        let arm = Arm::new(cli, "uninstall", true);
        if cli == AgentCli::Kilo {
            arm.write(
                "home/.config/kilo/kilo.json",
                "{\n  \"permission\": {\"bash\": {\"touch denied-a\": \"deny\"}}\n}\n",
            );
        }
        arm.write("project/AGENTS.md", "# Notes\n");
        // What the session leaves without Lens is the agent's own.
        let raw = arm.run(cli, &[SMALL], args, env);
        assert_eq!(raw.tool_results().len(), 1, "{}", raw.describe());
        let config = arm.home().join(config);
        let mut before = (tree(&config), tree(&arm.project()));
        before.0.remove("agent/models.json");
        for scope in ["--global", "--project"] {
            let said = arm.lens(&["init", "--agent", cli.name(), scope]);
            assert!(said.status.success(), "{said:?}");
        }
        let out = arm.run(cli, &[BIG], args, env);
        let read = out.tool_results();
        assert_eq!(read.len(), 1, "{}", out.describe());
        assert!(handle(&read[0].text).is_some(), "{}", read[0].text);
        for scope in ["--global", "--project"] {
            let said = arm.lens(&["init", "--agent", cli.name(), scope, "--uninstall"]);
            let said = String::from_utf8_lossy(&said.stdout).into_owned();
            assert!(!said.contains("edited since"), "{said}");
        }
        // pi's provider file is the runner's, written anew for every run's
        // server (neither the user's nor Lens's).
        let trees = || {
            let mut t = tree(&config);
            t.remove("agent/models.json");
            (t, tree(&arm.project()))
        };
        assert_eq!(trees(), before, "{}", cli.name());
    }
}

/// About 106 KB of lines, then exit 3: the failure the README's table counts.
const FAIL_100K: &str = "seq 1 20000; exit 3";

/// Copilot CLI's arguments for a session: every tool allowed but one
/// command, which a deny rule refuses.
const COPILOT_ARGS: [&str; 3] = ["--allow-all-tools", "--deny-tool", "shell(touch denied-a)"];

// Copilot CLI 1.0.102: a deny rule refuses one command, every other runs; a
// failing command is a success result to its postToolUse hook, so the failures
// reach the model as views too.
#[test]
fn copilot_decides_the_same_with_lens() {
    let commands = [DENIED, ALLOWED, SMALL, BIG, PIPED, FAILING, HUGE, FAIL_100K];
    let Some((lens, _arm)) = check(
        AgentCli::Copilot,
        "deny",
        &commands,
        |_| {},
        &COPILOT_ARGS,
        &[],
        Expect {
            refused: &[(0, "denied")],
            views: &[3, 4, 5, 6, 7],
        },
    ) else {
        return;
    };
    assert!(
        lens[7].ends_with("completed with exit code 3>"),
        "{}",
        lens[7]
    );
}

/// Qwen Code's user settings with a deny rule for one command.
const QWEN_DENY: &str = "{\n  \"permissions\": {\"deny\": [\"Bash(touch denied-a)\"]}\n}\n";

/// [`SMALL`] for Qwen Code 0.24.4, which now and then hands the model
/// `Output: (empty)` for a command that exits within a millisecond or two
/// (measured without any hook: 1 `ls` in 12, none with the pause).
const QWEN_SMALL: &str = "ls && sleep 0.2";

// Qwen Code 0.24.4 in yolo mode: a deny rule in the user's settings refuses
// one command, every other runs. A command that exits non-zero fires
// PostToolUseFailure, which cannot replace anything: it reaches the model as
// Qwen Code cut it, in both arms.
#[test]
fn qwen_decides_the_same_with_lens() {
    let commands = [
        DENIED, ALLOWED, QWEN_SMALL, BIG, PIPED, FAILING, HUGE, FAIL_100K,
    ];
    let Some((lens, _arm)) = check(
        AgentCli::Qwen,
        "deny",
        &commands,
        |a| a.write("home/.qwen/settings.json", QWEN_DENY),
        &["--approval-mode", "yolo"],
        &[],
        Expect {
            refused: &[(0, "denied")],
            views: &[3, 4, 6],
        },
    ) else {
        return;
    };
    // A failure is Qwen's own result, never a view. Qwen 0.24.4 now and then
    // reports a command's output as `(empty)` whatever the hook does (seen
    // with and without Lens): that form passes too, as long as Lens left it.
    for i in [5, 7] {
        assert!(handle(&lens[i]).is_none(), "{}", lens[i]);
        assert!(
            lens[i].contains("Exit Code: 3") || lens[i].contains("Output: (empty)"),
            "{}",
            lens[i]
        );
    }
}

#[test]
fn copilot_model_fetches_hidden_lines_with_lens_show() {
    model_fetches_hidden_lines(AgentCli::Copilot, &["--allow-all-tools"], &[]);
}

#[test]
fn qwen_model_fetches_hidden_lines_with_lens_show() {
    model_fetches_hidden_lines(AgentCli::Qwen, &["--approval-mode", "yolo"], &[]);
}

/// Installs Lens for `cli` globally and in the project, runs one session,
/// uninstalls both, and returns what the session's model read.
fn install_run_uninstall(arm: &Arm, cli: AgentCli, args: &[&str]) -> Vec<String> {
    for scope in ["--global", "--project"] {
        let said = arm.lens(&["init", "--agent", cli.name(), scope]);
        assert!(
            said.status.success(),
            "{}",
            String::from_utf8_lossy(&said.stderr)
        );
    }
    let out = arm.run(cli, &[BIG], args, &[]);
    let read: Vec<String> = out.tool_results().into_iter().map(|r| r.text).collect();
    assert_eq!(read.len(), 1, "{}", out.describe());
    for scope in ["--global", "--project"] {
        let said = arm.lens(&["init", "--agent", cli.name(), scope, "--uninstall"]);
        let said = String::from_utf8_lossy(&said.stdout).into_owned();
        assert!(!said.contains("edited since"), "{said}");
    }
    read
}

// Copilot CLI with Lens installed for the user and the repository (trusted
// for the run), one session, then uninstalled: the project is as it was, and
// nothing of Lens's is left in ~/.copilot (the CLI's own session files stay).
#[test]
fn copilot_uninstall_after_a_session_leaves_no_trace() {
    let cli = AgentCli::Copilot;
    if !available(cli) {
        return;
    }
    let arm = Arm::new(cli, "uninstall", true);
    let before = tree(&arm.project());
    let args = ["--allow-all-tools", "--trust-folder"];
    let read = install_run_uninstall(&arm, cli, &args);
    assert!(handle(&read[0]).is_some(), "{}", read[0]);
    assert_eq!(tree(&arm.project()), before);
    let home = arm.home().join(".copilot");
    for gone in ["hooks", "copilot-instructions.md"] {
        assert!(!home.join(gone).exists(), "{gone} is left");
    }
}

// Qwen Code with Lens installed for the user and the project, one session,
// then uninstalled: the user's settings are as they were byte for byte, and
// the project and ~/.qwen hold nothing of Lens's.
#[test]
fn qwen_uninstall_after_a_session_leaves_no_trace() {
    let cli = AgentCli::Qwen;
    if !available(cli) {
        return;
    }
    let arm = Arm::new(cli, "uninstall", true);
    // The runner's own keys are there already, so it leaves the file alone.
    let settings = "{\n  \"general\": {\"disableAutoUpdate\": true, \"disableUpdateNag\": true},\n  \"privacy\": {\"usageStatisticsEnabled\": false},\n  \"telemetry\": {\"enabled\": false},\n  \"permissions\": {\"deny\": [\"Bash(touch denied-a)\"]}\n}\n";
    arm.write("home/.qwen/settings.json", settings);
    let before = tree(&arm.project());
    let read = install_run_uninstall(&arm, cli, &["--approval-mode", "yolo"]);
    assert!(handle(&read[0]).is_some(), "{}", read[0]);
    let after: Vec<String> = tree(&arm.project()).into_keys().collect();
    let want: Vec<String> = before.keys().cloned().collect();
    assert_eq!(after, want);
    assert_eq!(
        std::fs::read_to_string(arm.home().join(".qwen/settings.json")).unwrap(),
        settings
    );
    assert!(!arm.home().join(".qwen/QWEN.md").exists());
}

// The awareness block `lens init` writes reaches the model: Copilot CLI reads
// ~/.copilot/copilot-instructions.md, Qwen Code ~/.qwen/QWEN.md, into the
// first request.
#[test]
fn copilot_and_qwen_read_the_awareness_block() {
    for (cli, args) in [
        (AgentCli::Copilot, &["--allow-all-tools"][..]),
        (AgentCli::Qwen, &["--approval-mode", "yolo"][..]),
    ] {
        if !available(cli) {
            continue;
        }
        let arm = Arm::new(cli, "awareness", true);
        arm.install(cli);
        let out = arm.run(cli, &[SMALL], args, &[]);
        let turns = out.turns();
        assert!(!turns.is_empty(), "{}", out.describe());
        assert!(
            turns[0].body.contains("Lens: shortened command output"),
            "{}: the block is not in the first request",
            cli.name()
        );
    }
}

// A `--project` install alone: Qwen Code runs the project's hook as it is;
// Copilot CLI runs a repository's hooks only in a trusted folder, as `lens
// init` says (here trusted by --trust-folder).
#[test]
fn copilot_and_qwen_run_a_project_hook_as_init_says() {
    for (cli, args, trusted) in [
        (AgentCli::Qwen, &["--approval-mode", "yolo"][..], &[][..]),
        (
            AgentCli::Copilot,
            &["--allow-all-tools"][..],
            &["--trust-folder"][..],
        ),
    ] {
        if !available(cli) {
            continue;
        }
        let arm = Arm::new(cli, "project", true);
        let said = arm.lens(&["init", "--agent", cli.name(), "--project"]);
        let said = String::from_utf8_lossy(&said.stdout).into_owned();
        assert_eq!(
            said.contains("only in a trusted folder"),
            !trusted.is_empty(),
            "{said}"
        );
        if !trusted.is_empty() {
            let out = arm.run(cli, &[BIG], args, &[]);
            let read = out.tool_results();
            assert_eq!(read.len(), 1, "{}", out.describe());
            assert!(handle(&read[0].text).is_none(), "{}", read[0].text);
        }
        let args: Vec<&str> = args.iter().chain(trusted).copied().collect();
        let out = arm.run(cli, &[BIG], &args, &[]);
        let read = out.tool_results();
        assert_eq!(read.len(), 1, "{}", out.describe());
        assert!(
            handle(&read[0].text).is_some(),
            "{}: {}",
            cli.name(),
            read[0].text
        );
    }
}

/// About 63 MB of lines: under the 64 MiB Claude Code 2.1.328 copies into its
/// persisted-output file, far over the 30,000 characters it shows inline.
const SIXTY_THREE_MB: &str =
    "seq -f 'build step %08.0f: compiling module with flags -O2 -Wall' 1 1070000";

// Claude Code 2.1.328 persists an output past 30,000 characters to a file
// (`tool-results/<id>.txt`, up to 64 MiB) and hands the PostToolUse hook only
// the first 30,000 characters with `persistedOutputPath` and
// `persistedOutputSize` (read in its bundle: the Bash tool's result and the
// copy that caps at 67,108,864 bytes). Lens reads the whole file, stores it,
// and the model reads Lens's view in place of Claude's 2 KB preview; the view's
// handle opens every byte of the 63 MB (issue #30, item 7).
#[test]
fn claude_hands_a_63_mb_output_to_lens_whole() {
    let cli = AgentCli::Claude;
    if !available(cli) {
        return;
    }
    let arm = Arm::new(cli, "63mb", true);
    arm.install(cli);
    let out = arm.run(
        cli,
        &[SIXTY_THREE_MB],
        &["--allowedTools", "Bash(seq:*)"],
        // The debug build on a shared machine: Lens's own time limit is not
        // what this measures.
        &[("LENS_HOOK_TIMEOUT_MS", "300000")],
    );
    let r = out.tool_results();
    assert_eq!(r.len(), 1, "{}", out.describe());
    let view = &r[0].text;
    eprintln!("claude, 63 MB: the model read {} B:\n{view}", view.len());
    assert!(
        view.starts_with("[lens: view of 1070000 lines") && view.len() < 30_000,
        "the model did not read Lens's view:\n{}",
        &view[..view.len().min(3000)]
    );
    // The view runs from the first line to the last, shown or named by a marker.
    assert!(
        view.contains("build step 00000001")
            && (view.contains("build step 01070000") || view.contains("-1070000 (")),
        "{view}"
    );
    let h = handle(view).unwrap();
    assert_eq!(
        stored_runs(&arm.root.join("lens/store")),
        std::slice::from_ref(&h)
    );
    // The stored run is the command's output, byte for byte.
    let cksum = |script: &str| {
        let mut cmd = Command::new("sh");
        for (k, v) in arm.lens_env() {
            cmd.env(k, v);
        }
        let o = cmd
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    lens_bin::lens_binary().parent().unwrap().display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .args(["-c", script])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let want = cksum(&format!("{SIXTY_THREE_MB} | cksum"));
    assert!(want.contains(" 63130000"), "{want}");
    assert_eq!(cksum(&format!("lens show {h} | cksum")), want);
    // The hook's log says what it took in: the whole output, not the preview.
    let log = std::fs::read_to_string(arm.root.join("lens/log/runs.jsonl")).unwrap();
    assert!(log.contains("\"bytes_in\":63130000"), "{log}");
}
