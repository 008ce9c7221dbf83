//! Gemini CLI: an `AfterTool` hook on `run_shell_command` (`lens hook gemini`)
//! and the awareness block in `GEMINI.md`.
//!
//! The hook runs after Gemini CLI ran the command as its policy engine allowed
//! it (a denied command never reaches it), so every permission decision is
//! Gemini CLI's own. Its input holds the whole output (stderr merged) framed as
//! the model reads it: `Output: …`, then trailer lines such as `Exit Code: N`
//! (see [`split_result`]), and without a terminal the output alone too. No
//! answer field replaces a tool's result in place; `tailToolCallRequest` makes
//! Gemini CLI run another tool under the same call and hand the model that
//! tool's result instead: the hook writes the view, framed the same way, into
//! the project's temp directory (`read_file` reads nothing outside it and the
//! workspace) and asks for `read_file` of it. That call is judged by the
//! policy engine like any other, so where a user or admin policy names
//! `read_file` the hook does not answer. Gemini CLI wants JSON on every path:
//! no answer is `{}`. (Measured against Gemini CLI 0.61.0.)

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered};
use crate::event::{Event, Text};

/// The command the hook runs.
pub const HOOK: &str = "lens hook gemini";

/// What Gemini CLI hands the model of a tool's output without cutting it.
pub const INLINE_LIMIT: usize = 40_000;

/// Lines `read_file` gives the model of a file before it cuts the rest
/// (`DEFAULT_MAX_LINES_TEXT_FILE` in Gemini CLI 0.61.0), less the exit code
/// line the answer may end with.
pub const INLINE_LINES: u64 = 2000 - 1;

/// What the user must do for a project install: Gemini CLI reads a project's
/// hooks only in a trusted folder.
pub const TRUST: &str = "Gemini CLI runs a project's hooks only in a trusted folder: trust it when gemini asks, or install with --global";

/// The settings edit: an `AfterTool` group matching `run_shell_command`.
pub fn hook_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Hook {
            event: "AfterTool",
            matcher: "run_shell_command",
            command: HOOK,
            extra: r#"{"name": "lens"}"#,
        },
    }
}

/// Whether a trailer line's value has the form Gemini CLI writes.
type Valid = fn(&str) -> bool;

/// The lines Gemini CLI 0.61.0 appends to `Output: …` (the shell tool's
/// `execute`, bundle/chunk-5FZXKDXH.js), each on its own line, only when it
/// applies, and in this order: `Error: <spawn error>`, `Exit Code: N` (not 0),
/// `Signal: S`, `Background PIDs: a, b`, `Process Group PGID: N`. `Error:` is
/// not here: its message is free text, so it is told apart from the output's
/// own last line only by what else the event says (see [`split_result`]).
const TRAILER: [(&str, Valid); 4] = [
    ("Process Group PGID: ", digits),
    ("Background PIDs: ", |v| v.split(", ").all(digits)),
    ("Signal: ", |v| {
        digits(v)
            || (v.len() > 3
                && v.starts_with("SIG")
                && v[3..].bytes().all(|b| b.is_ascii_alphanumeric()))
    }),
    ("Exit Code: ", |v| {
        digits(v.strip_prefix('-').unwrap_or(v)) && v.parse::<i64>().is_ok_and(|c| c != 0)
    }),
];

fn digits(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

/// `text` without the trailer lines Gemini CLI may have appended to it, from
/// the last up, each at most once and only in its strict form; and the exit
/// code among them.
fn strip_trailer(text: &str) -> (&str, Option<i32>) {
    let (mut rest, mut exit) = (text, None);
    for (label, valid) in TRAILER {
        let Some(nl) = rest.rfind('\n') else { break };
        let Some(value) = rest[nl + 1..].strip_prefix(label) else {
            continue;
        };
        if valid(value) {
            if label == "Exit Code: " {
                exit = value.parse().ok();
            }
            rest = &rest[..nl];
        }
    }
    (rest, exit)
}

/// The output and exit code in the text Gemini CLI gives the model for a shell
/// call (`llmContent`: `Output: …` and its trailer, wrapped in
/// `<untrusted_context>`). `display` is the event's `returnDisplay` when it is
/// a string (the output itself, as Gemini CLI had it before framing) and
/// `error` the message of the event's `error`: with `display` the text splits
/// exactly where the output ends; without it an `Error:` line is Gemini's only
/// when it is `error`'s message, else it stays in the output.
pub fn split_result(
    text: &str,
    display: Option<&str>,
    error: Option<&str>,
) -> Option<(String, Option<i32>)> {
    let text = text
        .trim()
        .strip_prefix("<untrusted_context>")
        .and_then(|t| t.strip_suffix("</untrusted_context>"))
        .map_or(text, |t| t.trim_matches('\n'));
    let body = text.strip_prefix("Output: ")?;
    // Gemini CLI escapes this one closing tag in what it wraps.
    let escape = |s: &str| s.replace("</untrusted_context>", "&lt;/untrusted_context&gt;");
    if let Some(display) = display.filter(|d| !d.is_empty()) {
        if let Some(after) = body.strip_prefix(&*escape(display)) {
            let (gemini, exit) = strip_trailer(after);
            if gemini.is_empty() || gemini.starts_with("\nError: ") {
                return Some((display.to_string(), exit));
            }
        }
    }
    let (mut output, exit) = strip_trailer(body);
    if let Some(e) = error {
        if let Some(o) = output.strip_suffix(&*format!("\nError: {}", escape(e))) {
            output = o;
        }
    }
    let output = if output == "(empty)" { "" } else { output };
    Some((output.to_string(), exit))
}

/// The captured output in an `AfterTool` event, when it is one Lens filters.
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    if event.get("hook_event_name")?.as_str()? != "AfterTool"
        || event.get("tool_name")?.as_str()? != "run_shell_command"
    {
        return None;
    }
    let line = event.pointer("/tool_input/command")?.as_str()?;
    let r = event.get("tool_response")?;
    // Gemini CLI cuts a long output itself; one spooled from the event all
    // the same is read back whole here.
    let text = result_text(e)?.whole()?;
    // `returnDisplay` is the output as a string only when Gemini CLI ran the
    // command without a terminal; with one it is the screen's cells.
    let display = match e.text("/tool_response/returnDisplay") {
        Some(t) => Some(t.whole()?),
        None => None,
    };
    let error = r.pointer("/error/message").and_then(Value::as_str);
    let (output, exit) = split_result(&text, display.as_deref(), error)?;
    Some(Captured {
        line: line.to_string(),
        output: output.into_bytes().into(),
        full: None,
        exit,
        cwd: event.get("cwd").and_then(Value::as_str).map(String::from),
        level: None,
        budget: None,
        partial: false,
        inline: None,
    })
}

/// The result's text: its `llmContent`, `output` or `returnDisplay`, or the
/// result itself when it is a string.
fn result_text(e: &Event) -> Option<Text<'_>> {
    ["llmContent", "output", "returnDisplay"]
        .iter()
        .find_map(|k| e.text(&format!("/tool_response/{k}")))
        .or_else(|| e.text("/tool_response"))
}

/// The answer: `read_file` of the view, written into the project's temp
/// directory (the one above the transcript's); `None` when it cannot be. The
/// caller has asked [`read_file_refused`] first.
pub fn answer(event: &Value, view: &Filtered) -> Option<Value> {
    let transcript = event.get("transcript_path")?.as_str()?;
    let temp = Path::new(transcript).parent()?.parent()?;
    let dir = temp.join("lens");
    std::fs::create_dir_all(&dir).ok()?;
    let file = dir.join(format!("{}.txt", view.handle));
    let exit = match view.exit {
        Some(c) if c != 0 => format!("\nExit Code: {c}"),
        _ => String::new(),
    };
    std::fs::write(
        &file,
        format!("Output: {}{exit}\n", view.text.trim_end_matches('\n')),
    )
    .ok()?;
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "AfterTool",
            "tailToolCallRequest": {
                "name": "read_file",
                "args": { "file_path": file.display().to_string() }
            }
        }
    }))
}

/// Why the `read_file` call the answer makes might be refused, if it might:
/// then the model would read `Tool "read_file" not found` (or a denial) in
/// place of the output, so the hook does not answer. `None` only when nothing
/// that Gemini CLI 0.61.0 reads can take `read_file` away or deny it.
///
/// Read from its bundle (`createPolicyEngineConfig`, `loadCliConfig`,
/// `_doLoadSettings`, `Config.getExcludeTools`): the settings files (system
/// at `$GEMINI_CLI_SYSTEM_SETTINGS_PATH` or /etc/gemini-cli/settings.json, its
/// `system-defaults.json` or `$GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, the user's
/// ~/.gemini/settings.json under `$GEMINI_CLI_HOME` or HOME, the project's
/// .gemini/settings.json) through `tools.exclude`, a `tools.core` allowlist,
/// `tools.confirmationRequired` (asking is refusing in a headless run), and
/// `policyPaths`/`adminPolicyPaths`; the policy files in the system and
/// user policy directories, those paths, the `--policy`/`--admin-policy`
/// flags of the running CLI (read from its command line), and each
/// extension's `policies`; and each extension's `excludeTools`. A project's
/// own .gemini/policies is not loaded by 0.61.0 (`disableWorkspacePolicies`).
pub fn read_file_refused(event: &Value) -> Option<&'static str> {
    let Some(ancestors) = crate::platform::ancestor_command_lines(8) else {
        return Some("gemini-flags-unknown");
    };
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = env("GEMINI_CLI_HOME").unwrap_or_else(crate::paths::home);
    let system = env("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
    let defaults = env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        .unwrap_or_else(|| system.with_file_name("system-defaults.json"));
    let cwd = event.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let sources = Sources {
        settings: [
            Some(system),
            Some(defaults),
            Some(home.join(".gemini/settings.json")),
        ]
        .into_iter()
        .chain([cwd.as_ref().map(|c| c.join(".gemini/settings.json"))])
        .flatten()
        .collect(),
        policy_dirs: vec![
            PathBuf::from("/etc/gemini-cli/policies"),
            home.join(".gemini/policies"),
        ],
        extensions: home.join(".gemini/extensions"),
        flags: ancestors,
        home,
        cwd: cwd.unwrap_or_default(),
    };
    sources.refusal()
}

/// Everything that decides whether Gemini CLI offers and allows `read_file`.
struct Sources {
    settings: Vec<PathBuf>,
    policy_dirs: Vec<PathBuf>,
    extensions: PathBuf,
    /// Command lines the running CLI's may be among.
    flags: Vec<Vec<String>>,
    home: PathBuf,
    /// Where relative paths in flags are resolved.
    cwd: PathBuf,
}

const READ_FILE: &str = "read_file";

impl Sources {
    fn refusal(&self) -> Option<&'static str> {
        let mut policies: Vec<PathBuf> = self.policy_dirs.clone();
        for args in &self.flags {
            policies.extend(policy_flags(args).into_iter().map(|p| self.resolve(&p)));
        }
        for path in &self.settings {
            let Ok(text) = std::fs::read_to_string(path) else {
                if path.exists() {
                    return Some("gemini-settings-unreadable");
                }
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(&super::jsonedit::strip_comments(&text))
            else {
                return Some("gemini-settings-unreadable");
            };
            let list = |p: &str| -> Vec<String> {
                v.pointer(p)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            // Gemini CLI matches an excluded tool by its name or class name.
            if list("/tools/exclude")
                .iter()
                .any(|t| t == READ_FILE || t == "ReadFileTool")
            {
                return Some("gemini-read-file-excluded");
            }
            if v.pointer("/tools/core").is_some()
                && !list("/tools/core")
                    .iter()
                    .any(|t| t == READ_FILE || t.starts_with("read_file("))
            {
                return Some("gemini-read-file-not-core");
            }
            if list("/tools/confirmationRequired")
                .iter()
                .any(|t| t == READ_FILE)
            {
                return Some("gemini-read-file-needs-approval");
            }
            for key in ["/policyPaths", "/adminPolicyPaths"] {
                policies.extend(list(key).iter().map(|p| self.resolve(p)));
            }
        }
        for ext in std::fs::read_dir(&self.extensions)
            .into_iter()
            .flatten()
            .flatten()
        {
            let manifest = ext.path().join("gemini-extension.json");
            if let Ok(text) = std::fs::read_to_string(&manifest) {
                let v: Value = serde_json::from_str(&super::jsonedit::strip_comments(&text))
                    .unwrap_or(Value::Null);
                let excluded = v.get("excludeTools").and_then(Value::as_array);
                if excluded.is_some_and(|a| a.iter().any(|t| t == READ_FILE || t == "ReadFileTool"))
                {
                    return Some("gemini-read-file-excluded");
                }
            }
            policies.push(ext.path().join("policies"));
        }
        policies
            .iter()
            .any(|p| policy_may_refuse(p))
            .then_some("gemini-read-file-policy")
    }

    /// A path as Gemini CLI resolves it: `~` is the home directory, and a
    /// relative one is from where the CLI runs.
    fn resolve(&self, p: &str) -> PathBuf {
        match p.strip_prefix('~') {
            Some("") => self.home.clone(),
            Some(rest) if rest.starts_with('/') => self.home.join(&rest[1..]),
            _ => self.cwd.join(p),
        }
    }
}

/// The values of `--policy` and `--admin-policy` in a command line, as Gemini
/// CLI's parser takes them: `--flag v` or `--flag=v`, repeated or
/// comma-separated, camel-case spelling too.
fn policy_flags(args: &[String]) -> Vec<String> {
    let names = ["--policy", "--admin-policy", "--adminPolicy"];
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = if names.contains(&a.as_str()) {
            it.next().cloned()
        } else {
            names.iter().find_map(|n| {
                a.strip_prefix(n)
                    .and_then(|v| v.strip_prefix('='))
                    .map(String::from)
            })
        };
        if let Some(v) = value {
            out.extend(
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
        }
    }
    out
}

/// True when a policy file (or any `.toml` file in a policy directory) holds a
/// rule or safety checker that could keep `read_file` from running: one for
/// `read_file` or for every tool (`*`, the only wildcard that is not for MCP
/// tools), not tied to an MCP server, whose decision is not `allow`. A file
/// Lens cannot read or parse counts as one that could.
fn policy_may_refuse(path: &Path) -> bool {
    let files: Vec<PathBuf> = match std::fs::read_dir(path) {
        Ok(d) => d
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect(),
        Err(_) if path.is_file() => vec![path.to_path_buf()],
        Err(_) => return path.exists(),
    };
    files.iter().any(|f| {
        let Ok(text) = std::fs::read_to_string(f) else {
            return true;
        };
        let Ok(v) = text.parse::<toml::Table>() else {
            return true;
        };
        let names_read_file = |r: &toml::Value| {
            let is = |n: &toml::Value| n.as_str().is_some_and(|n| n == READ_FILE || n == "*");
            r.get("mcpName").is_none()
                && match r.get("toolName") {
                    Some(toml::Value::Array(a)) => a.iter().any(is),
                    Some(n) => is(n),
                    None => true,
                }
        };
        let entries = |k: &str| {
            v.get(k)
                .and_then(toml::Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        entries("rule").iter().any(|r| {
            names_read_file(r) && r.get("decision").and_then(toml::Value::as_str) != Some("allow")
        }) || entries("safety_checker").iter().any(names_read_file)
    })
}

/// Gemini CLI 0.61.0 cuts a shell result longer than this many characters
/// (`DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD`, 4e4) to its first fifth and its
/// last four fifths around a notice (`formatTruncatedToolOutput`), saving the
/// whole to a file it names.
const TRUNCATE_THRESHOLD: usize = 40_000;

/// Bytes Gemini CLI's model reads of this result without Lens: the result
/// text the event holds (`Output: …` and its trailer), cut as Gemini CLI cuts
/// one over [`TRUNCATE_THRESHOLD`]; `output_len` when the event holds none.
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    if e.value.get("tool_response").is_none() {
        return output_len;
    }
    let Some(text) = result_text(e) else {
        return output_len;
    };
    let chars = text.chars() as usize;
    if chars <= TRUNCATE_THRESHOLD {
        return text.len();
    }
    let head = TRUNCATE_THRESHOLD / 5;
    let tail = TRUNCATE_THRESHOLD - head;
    let bytes = |s: &str| s.len();
    // A spooled text's sketch holds more than this head and tail.
    let (text, _, middle) = text.sketch();
    let kept = chars - middle as usize;
    let head_text: String = text.chars().take(head).collect();
    let tail_text: String = text.chars().skip(kept - tail).collect();
    // The saved file's path: the project's temp directory, `tool-outputs`,
    // the session and the call; sized as a typical one.
    let notice = format!(
        "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: {}\n\n\n... [{} characters omitted] ...\n\n",
        "x".repeat(110),
        group_thousands(chars - head - tail)
    );
    (bytes(&head_text) + bytes(&tail_text) + notice.len()) as u64
}

/// `n` with a comma every three digits, as `toLocaleString` writes it.
pub fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod would_read_tests {
    use super::*;

    #[test]
    fn a_result_under_the_threshold_is_read_whole_and_a_longer_one_cut() {
        let short = json!({"tool_response": {"llmContent": "Output: a\nb"}});
        assert_eq!(model_would_read(&short.into(), 3), 11);
        let long = format!("Output: {}", "y".repeat(400_000));
        let n = model_would_read(
            &json!({"tool_response": {"llmContent": long}}).into(),
            400_000,
        );
        assert!(n > 40_000 && n < 40_400, "{n}");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
        assert_eq!(group_thousands(999), "999");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_text_splits_into_output_and_exit_code() {
        assert_eq!(
            split_result("<untrusted_context>\nOutput: 1\n2\nProcess Group PGID: 17060\n</untrusted_context>", None, None),
            Some(("1\n2".into(), None))
        );
        assert_eq!(
            split_result("<untrusted_context>\nOutput: (empty)\nExit Code: 1\nProcess Group PGID: 17097\n</untrusted_context>", None, None),
            Some((String::new(), Some(1)))
        );
        assert_eq!(
            split_result("Output: a\nExit Code: 2", None, None),
            Some(("a".into(), Some(2)))
        );
        assert_eq!(
            split_result("Output: a\nExit Code: -2\nSignal: 9\nBackground PIDs: 31, 32\nProcess Group PGID: 30", None, None),
            Some(("a".into(), Some(-2)))
        );
        assert_eq!(
            split_result("Output: a\nSignal: SIGTERM", None, None),
            Some(("a".into(), None))
        );
        assert_eq!(split_result("something else", None, None), None);
    }

    #[test]
    fn the_outputs_own_last_lines_are_not_taken_for_the_trailer() {
        let wrap = |t: &str| format!("<untrusted_context>\n{t}\n</untrusted_context>");
        // The case of issue #30.4: an error message on the last line.
        let out = "1\n2\nError: INSTALLATION FAILED: x";
        let text = wrap(&format!(
            "Output: {out}\nExit Code: 1\nProcess Group PGID: 7"
        ));
        for display in [None, Some(out)] {
            assert_eq!(
                split_result(&text, display, None),
                Some((out.into(), Some(1))),
                "{display:?}"
            );
        }
        // Lines that look like a trailer but are not in its strict form, or
        // not in its order, or twice.
        for out in [
            "a\nSignal: none",
            "a\nBackground PIDs: many",
            "a\nExit Code: 0",
            "a\nProcess Group PGID: 1\nSignal: 9",
            "a\nBackground PIDs: 3",
        ] {
            let text = format!("Output: {out}\nProcess Group PGID: 7");
            // Without the display a line in the strict form and order is
            // Gemini's: `Signal: 9` may be its own, `Process Group PGID: 1`
            // above it cannot be.
            let want = match out {
                "a\nBackground PIDs: 3" => "a",
                "a\nProcess Group PGID: 1\nSignal: 9" => "a\nProcess Group PGID: 1",
                _ => out,
            };
            assert_eq!(
                split_result(&text, None, None),
                Some((want.into(), None)),
                "{out}"
            );
            // With the display the split is exact.
            assert_eq!(
                split_result(&text, Some(out), None),
                Some((out.into(), None)),
                "{out}"
            );
        }
        // Gemini's own Error line: known from the display, or from the event's error.
        let text = "Output: a\nError: spawn bash ENOENT\nExit Code: 1\nProcess Group PGID: 7";
        assert_eq!(
            split_result(text, Some("a"), None),
            Some(("a".into(), Some(1)))
        );
        assert_eq!(
            split_result(text, None, Some("spawn bash ENOENT")),
            Some(("a".into(), Some(1)))
        );
        assert_eq!(
            split_result(text, None, None),
            Some(("a\nError: spawn bash ENOENT".into(), Some(1)))
        );
        // A display that is not the output (debug mode shows the whole text).
        assert_eq!(
            split_result(text, Some(text), None),
            Some(("a\nError: spawn bash ENOENT".into(), Some(1)))
        );
        // The output's own closing tag comes back as it was printed.
        let out = "x </untrusted_context> y";
        let text = wrap("Output: x &lt;/untrusted_context&gt; y\nProcess Group PGID: 7");
        assert_eq!(
            split_result(&text, Some(out), None),
            Some((out.into(), None))
        );
    }

    #[test]
    fn an_event_hands_over_its_display_and_error() {
        let event = json!({
            "hook_event_name": "AfterTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "sh install.sh"},
            "tool_response": {
                "llmContent": "<untrusted_context>\nOutput: 1\nError: INSTALLATION FAILED: x\nExit Code: 1\nProcess Group PGID: 9\n</untrusted_context>",
                "returnDisplay": "1\nError: INSTALLATION FAILED: x"
            }
        });
        let c = read_event(&event.clone().into()).unwrap();
        assert_eq!(
            c.output.to_vec().unwrap(),
            b"1\nError: INSTALLATION FAILED: x"
        );
        assert_eq!(c.exit, Some(1));
    }

    /// A world with a home, a project and a system directory.
    struct World(PathBuf);

    impl World {
        fn new(name: &str) -> World {
            let root =
                std::env::temp_dir().join(format!("lens-gemini-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).unwrap();
            World(root)
        }

        fn write(&self, rel: &str, text: &str) -> PathBuf {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        }

        fn refusal(&self, flags: &[&str]) -> Option<&'static str> {
            let r = &self.0;
            Sources {
                settings: vec![
                    r.join("etc/settings.json"),
                    r.join("etc/system-defaults.json"),
                    r.join("home/.gemini/settings.json"),
                    r.join("proj/.gemini/settings.json"),
                ],
                policy_dirs: vec![r.join("etc/policies"), r.join("home/.gemini/policies")],
                extensions: r.join("home/.gemini/extensions"),
                flags: vec![
                    vec!["bash".into(), "-c".into(), "lens hook gemini".into()],
                    flags.iter().map(|f| f.to_string()).collect(),
                ],
                home: r.join("home"),
                cwd: r.join("proj"),
            }
            .refusal()
        }
    }

    impl Drop for World {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const DENY_READ: &str =
        "[[rule]]\ntoolName = \"read_file\"\ndecision = \"deny\"\npriority = 900\n";

    #[test]
    fn every_place_that_takes_read_file_away_is_seen() {
        let w = World::new("refuse");
        let gemini = [
            "node",
            "/usr/bin/gemini",
            "-p",
            "hi",
            "--approval-mode",
            "yolo",
        ];
        assert_eq!(w.refusal(&gemini), None);
        // What does not touch read_file changes nothing.
        w.write("home/.gemini/settings.json", "{\n  // mine\n  \"tools\": {\"exclude\": [\"web_fetch\"]},\n  \"model\": {\"name\": \"pro\"}\n}\n");
        w.write(
            "home/.gemini/policies/shell.toml",
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 500\n[[rule]]\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 1\n[[rule]]\ntoolName = \"*\"\nmcpName = \"srv\"\ndecision = \"deny\"\npriority = 2\n",
        );
        w.write("proj/.gemini/policies/deny.toml", DENY_READ);
        assert_eq!(w.refusal(&gemini), None);
        for (rel, text, why) in [
            ("proj/.gemini/settings.json", "{\"tools\": {\"exclude\": [\"read_file\"]}}", "gemini-read-file-excluded"),
            ("etc/settings.json", "{\"tools\": {\"exclude\": [\"ReadFileTool\"]}}", "gemini-read-file-excluded"),
            ("etc/system-defaults.json", "{\"tools\": {\"core\": [\"run_shell_command\"]}}", "gemini-read-file-not-core"),
            ("home/.gemini/settings.json", "{\"tools\": {\"confirmationRequired\": [\"read_file\"]}}", "gemini-read-file-needs-approval"),
            ("proj/.gemini/settings.json", "{\"tools\": ", "gemini-settings-unreadable"),
            ("home/.gemini/policies/read.toml", DENY_READ, "gemini-read-file-policy"),
            ("etc/policies/all.toml", "[[rule]]\ntoolName = \"*\"\ndecision = \"ask_user\"\npriority = 5\n", "gemini-read-file-policy"),
            ("etc/policies/bad.toml", "[[rule", "gemini-read-file-policy"),
            ("home/.gemini/policies/list.toml", "[[rule]]\ntoolName = [\"glob\", \"read_file\"]\ndecision = \"deny\"\npriority = 5\n", "gemini-read-file-policy"),
            ("home/.gemini/extensions/x/gemini-extension.json", "{\"name\": \"x\", \"excludeTools\": [\"read_file\"]}", "gemini-read-file-excluded"),
            ("home/.gemini/extensions/x/policies/p.toml", DENY_READ, "gemini-read-file-policy"),
        ] {
            let saved = std::fs::read(w.0.join(rel)).ok();
            let p = w.write(rel, text);
            assert_eq!(w.refusal(&gemini), Some(why), "{rel}: {text}");
            match saved {
                Some(b) => std::fs::write(&p, b).unwrap(),
                None => std::fs::remove_file(&p).unwrap(),
            }
            assert_eq!(w.refusal(&gemini), None, "{rel} put back");
        }
        // A core allowlist that names read_file lets it run.
        w.write(
            "etc/settings.json",
            "{\"tools\": {\"core\": [\"read_file\", \"run_shell_command(git)\"]}}",
        );
        assert_eq!(w.refusal(&gemini), None);
        // Policy paths from the settings and from the command line, files or
        // directories, relative to the project or the home directory.
        w.write("policies/mine.toml", DENY_READ);
        for flags in [
            &[&gemini[..], &["--policy", "../policies/mine.toml"]].concat(),
            &[&gemini[..], &["--policy=a.toml,../policies"]].concat(),
            &[&gemini[..], &["--admin-policy", "../policies"]].concat(),
        ] {
            assert_eq!(
                w.refusal(flags),
                Some("gemini-read-file-policy"),
                "{flags:?}"
            );
        }
        w.write(
            "home/.gemini/settings.json",
            "{\"policyPaths\": [\"~/../policies\"]}",
        );
        assert_eq!(w.refusal(&gemini), Some("gemini-read-file-policy"));
        w.write(
            "home/.gemini/settings.json",
            "{\"adminPolicyPaths\": [\"../policies/mine.toml\"]}",
        );
        assert_eq!(w.refusal(&gemini), Some("gemini-read-file-policy"));
        w.write(
            "home/.gemini/settings.json",
            "{\"policyPaths\": [\"../nowhere\"]}",
        );
        assert_eq!(w.refusal(&gemini), None);
    }

    #[test]
    fn policy_flags_are_read_as_gemini_reads_them() {
        let args: Vec<String> = [
            "gemini",
            "--policy",
            "a,b",
            "--policy=c",
            "--admin-policy",
            "d",
            "--adminPolicy=e",
            "--policy-x",
            "f",
            "-p",
            "--policy",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(policy_flags(&args), ["a", "b", "c", "d", "e"]);
    }
}
