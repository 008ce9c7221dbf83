//! The real agent CLIs against the scripted model server: what the model
//! receives for a command's output, and what the CLIs' own permission rules do,
//! without Lens. Skipped with one line when the CLIs are not installed (`make
//! agents`), unless LENS_REQUIRE_AGENTS=1.

use std::path::{Path, PathBuf};

mod agents_ready;

use agents_ready::available;
use harness::agent_cli::{AgentCli, RunOutcome, RunSpec};
use harness::model_server::{Script, ToolResult};
use lens_cli::agents::gemini::group_thousands;

/// A temp HOME and project directory, removed on drop.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let root =
            std::env::temp_dir().join(format!("lens-real-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("project")).unwrap();
        Scratch { root }
    }
    fn home(&self) -> PathBuf {
        self.root.join("home")
    }
    fn project(&self) -> PathBuf {
        self.root.join("project")
    }
    fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn script(commands: &[&str]) -> Script {
    Script::commands(commands.iter().map(|c| c.to_string()).collect(), "Done.")
}

fn run(cli: AgentCli, spec: RunSpec) -> RunOutcome {
    let out = cli.run(&spec).unwrap();
    eprintln!(
        "{} run: {:.1} s, exit {}, {} requests",
        cli.name(),
        out.wall.as_secs_f64(),
        out.exit,
        out.requests.len()
    );
    out
}

fn spec(s: &Scratch, commands: &[&str]) -> RunSpec {
    RunSpec::new(
        "Run the commands.",
        script(commands),
        &s.home(),
        &s.project(),
    )
}

/// What every CLI is handed in its outputs scenario: a small output, a big
/// one, a failing one and a bigger one.
const OUTPUTS: [&str; 4] = [
    "printf 'alpha\\nbeta\\n'",
    "seq 1 5000",
    "printf 'out\\n'; printf 'err\\n' >&2; exit 3",
    "seq 1 20000",
];

/// An outputs scenario: `cli` runs `commands` (with `args`) in a fresh
/// scratch named `name`, and the session ends 0 with a result for each
/// command. Returns the scratch (kept until the caller is done), the run and
/// its results.
fn outputs(
    cli: AgentCli,
    name: &str,
    commands: &[&str],
    args: &[&str],
) -> (Scratch, RunOutcome, Vec<ToolResult>) {
    let s = Scratch::new(name);
    let out = run(cli, spec(&s, commands).args(args.iter().copied()));
    assert_eq!(out.exit, 0, "{}", out.describe());
    let r = out.tool_results();
    assert_eq!(r.len(), commands.len(), "{}", out.describe());
    (s, out, r)
}

/// `1\n2\n…\nn\n`, what `seq 1 n` prints.
fn seq(n: u32) -> String {
    (1..=n).map(|i| format!("{i}\n")).collect()
}

impl Scratch {
    /// A scratch holding the scripts of a permission session: each `NAME.sh`
    /// leaves `NAME.ran` behind and prints "NAME ran". The rules name
    /// `denied.sh`, `allowed.sh` (and for Codex `asked.sh`); `unruled.sh` has
    /// no rule.
    fn with_scripts(name: &str) -> Scratch {
        let s = Scratch::new(name);
        for name in ["denied", "asked", "allowed", "unruled"] {
            s.write(
                &format!("project/{name}.sh"),
                &format!("#!/bin/sh\necho ran > {name}.ran\necho {name} ran\n"),
            );
            std::process::Command::new("chmod")
                .arg("+x")
                .arg(s.project().join(format!("{name}.sh")))
                .status()
                .unwrap();
        }
        s
    }
}

/// Whether `NAME.sh` ran.
fn ran(s: &Scratch, name: &str) -> bool {
    s.project().join(format!("{name}.ran")).exists()
}

const DENIED_ALLOWED_UNRULED: [&str; 3] = ["./denied.sh", "./allowed.sh", "./unruled.sh"];

// Claude Code: stdout and stderr merged, leading blank lines and trailing
// whitespace trimmed; exit != 0 prefixes "Exit code N" and, over 10,000
// characters, keeps 5,000 from each end; a successful output over 30,000 is
// saved to a file and the model gets a 2 KB preview and the path.

#[test]
fn claude_hands_the_model_small_failing_and_big_outputs() {
    let cli = AgentCli::Claude;
    if !available(cli) {
        return;
    }
    let mut commands = OUTPUTS.to_vec();
    commands.insert(3, "seq 1 3000; echo oops >&2; exit 3");
    let (s, out, r) = outputs(
        cli,
        "claude-outputs",
        &commands,
        &["--allowedTools", "Bash"],
    );
    assert_eq!(r[0].text, "alpha\nbeta");
    assert!(!r[0].is_error);
    assert_eq!(r[1].text, seq(5000).trim_end());
    assert_eq!(r[2].text, "Exit code 3\nout\nerr");
    assert!(r[2].is_error);
    let full = format!("Exit code 3\n{}oops", seq(3000));
    let cut = full.len() - 10_000;
    assert_eq!(
        r[3].text,
        format!(
            "{}\n\n... [{cut} characters truncated] ...\n\n{}",
            &full[..5000],
            &full[full.len() - 5000..]
        )
    );
    assert!(r[3].is_error);
    // Over 30,000 bytes: a preview and the path of the whole output.
    let big = seq(20000);
    let text = &r[4].text;
    let head = "<persisted-output>\nOutput too large (106.3KB). Full output saved to: ";
    assert!(text.starts_with(head), "{text}");
    let (path, rest) = text[head.len()..].split_once('\n').unwrap();
    assert!(
        Path::new(path).starts_with(s.home().join(".claude/projects")),
        "{path}"
    );
    assert_eq!(
        std::fs::read_to_string(path).unwrap().trim_end(),
        big.trim_end()
    );
    let preview = rest
        .strip_prefix("\nPreview (first 2KB):\n")
        .and_then(|p| p.strip_suffix("\n...\n</persisted-output>"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        big.starts_with(preview) && preview.len() <= 2048,
        "{preview}"
    );
    // The CLI's own count of input tokens is the server's.
    let served: u64 = out.turns().iter().map(|t| t.usage.input_tokens).sum();
    assert!(
        out.stdout.contains(&format!("\"input_tokens\":{served},")),
        "server counted {served}: {}",
        out.describe()
    );
}

#[test]
fn claude_rules_from_every_source_decide_which_commands_run() {
    let cli = AgentCli::Claude;
    if !available(cli) {
        return;
    }
    let rules =
        r#"{"permissions":{"allow":["Bash(./allowed.sh:*)"],"deny":["Bash(./denied.sh:*)"]}}"#;
    // (source, whether its allow rule applies); the deny rule always does. A
    // project's .claude/settings.json allows only once the project is trusted.
    for (source, allow_applies) in [
        ("user", true),
        ("flags", true),
        ("project-untrusted", false),
        ("project-trusted", true),
    ] {
        let s = Scratch::with_scripts(&format!("claude-rules-{source}"));
        let mut spec = spec(&s, &DENIED_ALLOWED_UNRULED);
        match source {
            "user" => s.write("home/.claude/settings.json", rules),
            "flags" => {
                spec = spec.args([
                    "--allowedTools",
                    "Bash(./allowed.sh:*)",
                    "--disallowedTools",
                    "Bash(./denied.sh:*)",
                ])
            }
            _ => {
                s.write("project/.claude/settings.json", rules);
                if source == "project-trusted" {
                    let trust = serde_json::json!({"projects": {s.project().to_str().unwrap(): {"hasTrustDialogAccepted": true}}});
                    s.write("home/.claude.json", &trust.to_string());
                }
            }
        }
        let out = run(cli, spec);
        let r = out.tool_results();
        assert_eq!(r.len(), 3, "{source}: {}", out.describe());
        assert!(!ran(&s, "denied"), "{source}: the denied command ran");
        assert_eq!(
            r[0].text, "Permission to use Bash with command ./denied.sh has been denied.",
            "{source}"
        );
        assert!(r[0].is_error, "{source}");
        assert_eq!(ran(&s, "allowed"), allow_applies, "{source}: {:?}", r[1]);
        let asks = "This command requires approval";
        let allowed_text = if allow_applies { "allowed ran" } else { asks };
        assert_eq!(r[1].text, allowed_text, "{source}");
        assert!(!ran(&s, "unruled"), "{source}: the unruled command ran");
        assert_eq!(r[2].text, asks, "{source}");
        assert!(r[2].is_error, "{source}");
    }
}

// Codex CLI: every result opens with a header (chunk id, wall time, "Process
// exited with code N", the original token count, "Output:"); stdout and stderr
// merged in the order their bytes arrive (not always the order written); over its budget (10,000 tokens by default) the output keeps its head
// and tail around an inline "…N chars truncated…", after a warning line and the
// total line count.

/// The exit code and the output of a Codex result, its header checked.
fn codex_result(text: &str) -> (i32, String) {
    let mut lines = text.splitn(6, '\n');
    let mut next = || {
        lines
            .next()
            .unwrap_or_else(|| panic!("short result: {text:?}"))
    };
    let chunk = next();
    assert!(chunk.starts_with("Chunk ID: "), "{text:?}");
    assert!(next().starts_with("Wall time: "), "{text:?}");
    let exit = next()
        .strip_prefix("Process exited with code ")
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(next().starts_with("Original token count: "), "{text:?}");
    assert_eq!(next(), "Output:", "{text:?}");
    (exit, next().to_string())
}

/// Checks a cut Codex output against the whole one: the warning, the line count,
/// then a head and a tail of `full` around the marker naming what is missing.
fn assert_codex_cut(body: &str, full: &str) {
    let lines = full.lines().count();
    let (warning, rest) = body.split_once('\n').unwrap();
    assert!(
        warning.starts_with("Warning: truncated output (original token count: "),
        "{warning}"
    );
    let rest = rest
        .strip_prefix(&format!("Total output lines: {lines}\n\n"))
        .unwrap_or_else(|| panic!("{}", &body[..200]));
    let (head, after) = rest.split_once('…').unwrap();
    let (marker, tail) = after.split_once('…').unwrap();
    let cut: usize = marker
        .strip_suffix(" chars truncated")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{marker}"));
    assert!(full.starts_with(head) && full.ends_with(tail), "{marker}");
    assert_eq!(head.len() + cut + tail.len(), full.len());
}

#[test]
fn codex_hands_the_model_small_failing_and_big_outputs() {
    let cli = AgentCli::Codex;
    if !available(cli) {
        return;
    }
    let (_s, out, r) = outputs(
        cli,
        "codex-outputs",
        &OUTPUTS,
        &["--dangerously-bypass-approvals-and-sandbox"],
    );
    assert_eq!(codex_result(&r[0].text), (0, "alpha\nbeta\n".to_string()));
    let (exit, body) = codex_result(&r[1].text);
    assert_eq!(exit, 0);
    assert_codex_cut(&body, &seq(5000));
    // The two streams are read apart and joined in the order they arrive.
    let (exit, body) = codex_result(&r[2].text);
    assert_eq!(exit, 3);
    assert!(body == "out\nerr\n" || body == "err\nout\n", "{body:?}");
    let (exit, body) = codex_result(&r[3].text);
    assert_eq!(exit, 0);
    assert_codex_cut(&body, &seq(20000));
    assert!(r.iter().all(|r| !r.is_error));
    let served: u64 = out.turns().iter().map(|t| t.usage.input_tokens).sum();
    assert!(
        out.stdout.contains(&format!("\"input_tokens\":{served},")),
        "server counted {served}: {}",
        out.describe()
    );
}

#[test]
fn codex_rules_decide_which_commands_run_in_the_sandbox_and_without_it() {
    let cli = AgentCli::Codex;
    if !available(cli) {
        return;
    }
    let rejected = |why: &str| {
        let why = why.replace('"', "\\\"");
        format!("exec_command failed: CreateProcess {{ message: \"Rejected(\\\"{why}\\\")\" }}")
    };
    // `codex exec`'s default is a read-only sandbox with approvals off: an
    // allow rule runs a command outside the sandbox, an unruled one runs inside
    // it and cannot write. With the sandbox bypassed the rules still apply.
    for bypass in [false, true] {
        let s = Scratch::with_scripts(&format!("codex-rules-{bypass}"));
        s.write(
            "home/.codex/rules/default.rules",
            "prefix_rule(pattern=[\"./denied.sh\"], decision=\"forbidden\", justification=\"not here\")\n\
             prefix_rule(pattern=[\"./asked.sh\"], decision=\"prompt\")\n\
             prefix_rule(pattern=[\"./allowed.sh\"], decision=\"allow\")\n",
        );
        let mut spec = spec(
            &s,
            &["./denied.sh", "./asked.sh", "./allowed.sh", "./unruled.sh"],
        );
        if bypass {
            spec = spec.args(["--dangerously-bypass-approvals-and-sandbox"]);
        }
        let out = run(cli, spec);
        let r = out.tool_results();
        assert_eq!(r.len(), 4, "bypass {bypass}: {}", out.describe());
        assert!(!ran(&s, "denied") && !ran(&s, "asked"), "bypass {bypass}");
        assert_eq!(
            r[0].text,
            rejected("`/bin/bash -lc ./denied.sh` rejected: not here")
        );
        assert_eq!(
            r[1].text,
            rejected("approval required by policy, but AskForApproval is set to Never")
        );
        assert!(ran(&s, "allowed"), "bypass {bypass}");
        assert_eq!(codex_result(&r[2].text), (0, "allowed ran\n".to_string()));
        let (exit, body) = codex_result(&r[3].text);
        assert_eq!(ran(&s, "unruled"), bypass, "{body}");
        assert_eq!(exit, 0);
        if bypass {
            assert_eq!(body, "unruled ran\n");
        } else {
            assert!(
                body.contains("cannot create unruled.ran: Read-only file system"),
                "{body}"
            );
        }
    }
}

// Gemini CLI: the output (stdout and stderr merged, the trailing newline
// trimmed) inside "<untrusted_context>\nOutput: …" with "Exit Code: N" when it is
// not 0 and the process group; over 40,000 characters the whole of that text
// keeps its first 8,000 and last 32,000 around "... [N characters omitted] ...",
// after a line naming the file holding all of it.

const GEMINI_OPEN: &str = "<untrusted_context>\nOutput: ";
const GEMINI_CLOSE: &str = "\n</untrusted_context>";

/// The output and the exit code (when not 0) of a Gemini shell result.
fn gemini_result(text: &str) -> (String, Option<i32>) {
    let inner = text
        .strip_prefix(GEMINI_OPEN)
        .and_then(|t| t.strip_suffix(GEMINI_CLOSE))
        .unwrap_or_else(|| panic!("{text:?}"));
    let (rest, pgid) = inner.rsplit_once("\nProcess Group PGID: ").unwrap();
    assert!(pgid.parse::<u32>().is_ok(), "{text:?}");
    match rest.rsplit_once("\nExit Code: ") {
        Some((out, code)) => (out.to_string(), Some(code.parse().unwrap())),
        None => (rest.to_string(), None),
    }
}

/// Gemini CLI's arguments for a run that approves every call.
const GEMINI_YOLO: [&str; 2] = ["--approval-mode", "yolo"];

#[test]
fn gemini_hands_the_model_small_failing_and_big_outputs() {
    let cli = AgentCli::Gemini;
    if !available(cli) {
        return;
    }
    let (s, out, r) = outputs(cli, "gemini-outputs", &OUTPUTS, &GEMINI_YOLO);
    assert_eq!(gemini_result(&r[0].text), ("alpha\nbeta".to_string(), None));
    assert_eq!(
        gemini_result(&r[1].text),
        (seq(5000).trim_end().to_string(), None)
    );
    assert_eq!(gemini_result(&r[2].text), ("out\nerr".to_string(), Some(3)));
    assert!(r.iter().all(|r| !r.is_error));
    // Over 40,000 characters.
    let text = &r[3].text;
    let head =
        "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: ";
    let (path, cut) = text
        .strip_prefix(head)
        .and_then(|t| t.split_once('\n'))
        .unwrap_or_else(|| panic!("{}", &text[..300]));
    assert!(
        Path::new(path).starts_with(s.home().join(".gemini/tmp")),
        "{path}"
    );
    let pgid = cut.rsplit_once("PGID: ").unwrap().1;
    let whole = format!(
        "{GEMINI_OPEN}{}\nProcess Group PGID: {pgid}",
        seq(20000).trim_end()
    );
    let whole = format!("{}{GEMINI_CLOSE}", whole.trim_end_matches(GEMINI_CLOSE));
    let omitted = whole.len() - 40_000;
    assert_eq!(
        cut,
        format!(
            "{}\n\n... [{} characters omitted] ...\n\n{}",
            &whole[..8000],
            group_thousands(omitted),
            &whole[whole.len() - 32_000..]
        )
    );
    assert!(std::fs::read_to_string(path)
        .unwrap()
        .contains(seq(20000).trim_end()));
    // Gemini CLI's token count (the router's question included) is the server's.
    let served: u64 = out.requests.iter().map(|t| t.usage.input_tokens).sum();
    assert!(
        out.stdout.contains(&format!("\"input_tokens\":{served},")),
        "server counted {served}: {}",
        out.describe()
    );
}

#[test]
fn gemini_rules_decide_which_commands_run_and_whether_the_shell_is_offered() {
    let cli = AgentCli::Gemini;
    if !available(cli) {
        return;
    }
    // Headless default mode denies the shell outright: the tool is not even
    // declared to the model. An allowed command prefix declares it and lets
    // only that command run; a deny policy (user tier, above the narrowing
    // deny) refuses with its own message.
    for ruled in [false, true] {
        let s = Scratch::with_scripts(&format!("gemini-rules-{ruled}"));
        if ruled {
            s.write(
                "home/.gemini/settings.json",
                r#"{"tools": {"allowed": ["run_shell_command(./allowed.sh)"]}}"#,
            );
            s.write(
                "home/.gemini/policies/deny.toml",
                "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"./denied.sh\"\ndecision = \"deny\"\npriority = 999\ndenyMessage = \"not here\"\n",
            );
        }
        let out = run(cli, spec(&s, &DENIED_ALLOWED_UNRULED));
        let turns = out.turns();
        assert!(
            turns.iter().all(|t| t.shell_tool.is_some() == ruled),
            "{}",
            out.describe()
        );
        assert!(!ran(&s, "denied") && !ran(&s, "unruled"));
        assert_eq!(ran(&s, "allowed"), ruled, "{}", out.describe());
        if ruled {
            let r = out.tool_results();
            assert_eq!(r.len(), 3, "{}", out.describe());
            assert_eq!(r[0].text, "Tool execution denied by policy. not here");
            assert_eq!(gemini_result(&r[1].text), ("allowed ran".to_string(), None));
            assert_eq!(r[2].text, "Tool execution denied by policy.");
            assert!(r[0].is_error && !r[1].is_error && r[2].is_error);
        }
    }
}

// OpenCode: the output as the shell gave it (stdout and stderr merged, nothing
// trimmed, no exit code); over 2,000 lines (or 50 KB) the model gets the end of
// it, after a line naming the file holding all of it.

/// Checks a cut OpenCode output: the notice, the saved file (all of `full`),
/// then the last 2,000 pieces of `full` split at newlines.
fn assert_opencode_cut(text: &str, full: &str, home: &Path) {
    let rest = text
        .strip_prefix("...output truncated...\n\nFull output saved to: ")
        .unwrap_or_else(|| panic!("{}", &text[..200]));
    let (path, tail) = rest.split_once("\n\n").unwrap();
    assert!(
        Path::new(path).starts_with(home.join(".local/share/opencode/tool-output")),
        "{path}"
    );
    assert_eq!(std::fs::read_to_string(path).unwrap(), full);
    let pieces: Vec<&str> = full.split('\n').collect();
    assert_eq!(tail, pieces[pieces.len() - 2000..].join("\n"));
}

#[test]
fn opencode_hands_the_model_small_failing_and_big_outputs() {
    let cli = AgentCli::Opencode;
    if !available(cli) {
        return;
    }
    let (s, out, r) = outputs(cli, "opencode-outputs", &OUTPUTS, &[]);
    assert_eq!(r[0].text, "alpha\nbeta\n");
    assert_opencode_cut(&r[1].text, &seq(5000), &s.home());
    // Exit 3 is not mentioned at all.
    assert!(
        r[2].text == "out\nerr\n" || r[2].text == "err\nout\n",
        "{:?}",
        r[2].text
    );
    assert_opencode_cut(&r[3].text, &seq(20000), &s.home());
    // Every step's token count in OpenCode's events is the server's.
    for t in out.turns().iter().filter(|t| t.shell_tool.is_some()) {
        let counted = format!(
            "\"input\":{},\"output\":{},",
            t.usage.input_tokens, t.usage.output_tokens
        );
        assert!(
            out.stdout.contains(&counted),
            "{counted}: {}",
            out.describe()
        );
    }
}

#[test]
fn opencode_rules_from_the_global_and_the_project_config_decide_which_commands_run() {
    let cli = AgentCli::Opencode;
    if !available(cli) {
        return;
    }
    // A deny refuses the call with the rules quoted and the session goes on; a
    // call that needs asking is rejected by `opencode run` and the session ends
    // there, without the model being told.
    let rules = r#"{"permission": {"bash": {"*": "ask", "./allowed.sh*": "allow", "./denied.sh*": "deny"}}}"#;
    for source in [
        "home/.config/opencode/opencode.json",
        "project/opencode.json",
    ] {
        let s = Scratch::with_scripts(&format!("opencode-rules-{}", source.len()));
        s.write(source, rules);
        let out = run(cli, spec(&s, &DENIED_ALLOWED_UNRULED));
        let r = out.tool_results();
        assert_eq!(r.len(), 2, "{source}: {}", out.describe());
        assert!(!ran(&s, "denied"), "{source}: the denied command ran");
        assert!(
            r[0].text.starts_with("The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules ["),
            "{source}: {}",
            r[0].text
        );
        assert!(
            r[0].text
                .contains(r#"{"permission":"bash","pattern":"./denied.sh*","action":"deny"}"#),
            "{source}: {}",
            r[0].text
        );
        assert!(ran(&s, "allowed"), "{source}");
        assert_eq!(r[1].text, "allowed ran\n", "{source}");
        assert!(!ran(&s, "unruled"), "{source}");
        assert!(
            out.stderr
                .contains("permission requested: bash (./unruled.sh); auto-rejecting"),
            "{source}: {}",
            out.describe()
        );
        assert!(out
            .stdout
            .contains("The user rejected permission to use this specific tool call."));
        // The session ended at the rejection: no request carried its result.
        assert_eq!(
            out.turns()
                .iter()
                .filter(|t| t.shell_tool.is_some())
                .count(),
            3,
            "{source}: {}",
            out.describe()
        );
    }
}
