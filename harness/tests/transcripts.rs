//! The transcript readers on real recorded output of each agent CLI (see
//! fixtures/transcripts/SOURCES.md for where each comes from), and the drivers'
//! outcomes read from them.

use harness::driver::{Outcome, Tokens};
use harness::transcript::{detect, parse, Format};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts")
            .join(name),
    )
    .unwrap()
}

#[test]
fn claude_print_mode_stream_with_a_bash_call() {
    let text = fixture("claude-stream-ls.jsonl");
    assert_eq!(detect(&text), Some(Format::ClaudeStream));
    let t = parse(&text).unwrap();
    assert_eq!(t.tool_calls, 1);
    assert_eq!(t.turns, 2, "num_turns of the result event");
    assert_eq!(t.shell.len(), 1);
    assert_eq!(t.shell[0].command, "ls -la");
    assert!(t.shell[0]
        .output
        .starts_with("total 1976\ndrwxrwxr-x  9 cyou"));
    assert_eq!(t.shell[0].output.len(), 105);
    assert_eq!(t.tool_result_bytes, 105);
    // The result event's usage is the session's; the kinds stay apart.
    assert_eq!(
        t.tokens,
        Some(Tokens {
            input: 18,
            output: 424,
            cache_read: 17_254,
            cache_write: 25_067,
        })
    );
    assert_eq!(t.agent.model.as_deref(), Some("claude-opus-4-5-20251101"));
    let o = Outcome::from_transcript(&t);
    assert_eq!((o.bytes_read, o.tool_calls, o.views), (105, 1, 0));
    assert_eq!(o.commands, ["ls -la"]);
}

#[test]
fn claude_print_mode_names_its_version_and_model() {
    let t = parse(&fixture("claude-stream-basic.jsonl")).unwrap();
    assert_eq!(t.agent.cli, "claude");
    assert_eq!(t.agent.version.as_deref(), Some("2.1.7"));
    assert_eq!(t.agent.model.as_deref(), Some("claude-opus-4-5-20251101"));
    assert_eq!((t.turns, t.tool_calls, t.shell.len()), (1, 0, 0));
    assert_eq!(t.tokens.unwrap().cache_write, 21_570);
    assert_eq!(t.tokens.unwrap().output, 25);
}

#[test]
fn claude_session_log_pairs_results_by_id_and_counts_each_response_once() {
    let text = fixture("claude-session-audit.jsonl");
    assert_eq!(detect(&text), Some(Format::ClaudeSession));
    let t = parse(&text).unwrap();
    assert_eq!(t.agent.version.as_deref(), Some("2.0.14"));
    assert_eq!(t.agent.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    // Three tool_use blocks (two Bash, one Read), all of one API response.
    assert_eq!(t.tool_calls, 3);
    assert_eq!(t.turns, 1);
    assert_eq!(
        t.tokens,
        Some(Tokens {
            input: 7,
            output: 26,
            cache_read: 14_660,
            cache_write: 526,
        })
    );
    // The results came back in another order than the calls went out.
    let cmds: Vec<&str> = t.shell.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        cmds,
        [
            "find . -maxdepth 3 -type f -name \"*.json\" -o -name \"*.md\" -o -name \"*.ts\" -o -name \"*.js\" | head -50",
            "ls -la"
        ]
    );
    assert!(t.shell[0].output.starts_with("./turbo.json\n./README.md\n"));
    assert!(t.shell[0]
        .output
        .ends_with("./apps/claudecodeui/postcss.config.js"));
    assert!(t.shell[1].output.starts_with("total 992\n"));
    assert!(t.shell[1].output.ends_with("turbo.json"));
    let (out, err) = t.shell[1].streams.clone().unwrap();
    assert_eq!(out, t.shell[1].output);
    assert!(err.is_empty());
    // Every result counts in the tool-result bytes; only Bash ones are shell.
    assert!(t.tool_result_bytes > t.shell_bytes());
}

#[test]
fn codex_exec_stream_unwraps_the_shell_and_splits_cached_input() {
    let text = fixture("codex-exec-cat.jsonl");
    assert_eq!(detect(&text), Some(Format::CodexExec));
    let t = parse(&text).unwrap();
    assert_eq!(t.shell.len(), 1);
    assert_eq!(t.shell[0].command, "cat test.js");
    assert_eq!(t.shell[0].output, "console.log('Hello World');\n");
    assert_eq!(t.shell[0].exit, Some(0));
    assert_eq!((t.tool_calls, t.turns), (1, 1));
    assert_eq!(
        t.tokens,
        Some(Tokens {
            input: 6087 - 5120,
            output: 204,
            cache_read: 5120,
            cache_write: 0,
        })
    );
    let ls = parse(&fixture("codex-exec-ls.jsonl")).unwrap();
    assert_eq!(ls.shell[0].command, "ls");
    assert!(ls.shell[0]
        .output
        .starts_with("/opt/homebrew/Library/Homebrew/cmd/shellenv.sh: line 18"));
}

#[test]
fn codex_session_log_reads_argv_calls_outputs_and_running_usage() {
    let text = fixture("codex-rollout-services.jsonl");
    assert_eq!(detect(&text), Some(Format::CodexRollout));
    let t = parse(&text).unwrap();
    assert_eq!(t.agent.version.as_deref(), Some("0.40.0"));
    assert_eq!(t.agent.model.as_deref(), Some("gpt-5-codex"));
    let cmds: Vec<&str> = t.shell.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        cmds,
        [
            "ls",
            "ls packages",
            "ls packages/services",
            "ls packages/services/src"
        ]
    );
    assert!(t.shell.iter().all(|c| c.exit == Some(0)));
    assert_eq!(t.shell[1].output.lines().count(), 16);
    // The last token_count is the running total.
    assert_eq!(
        t.tokens,
        Some(Tokens {
            input: 16_001 - 14_720,
            output: 264,
            cache_read: 14_720,
            cache_write: 0,
        })
    );
    assert_eq!(t.turns, 5);
    let team = parse(&fixture("codex-rollout-teamsheet.jsonl")).unwrap();
    assert_eq!(team.shell[0].command, "rg \"TeamSheet\"");
    assert_eq!(team.shell[0].output.lines().count(), 19);
    // A sandbox refusal is plain text, with no exit code recorded.
    assert!(team.shell[1].output.starts_with("failed in sandbox"));
    assert_eq!(team.shell[1].exit, None);
}

#[test]
fn cursor_stream_in_its_documented_format() {
    // No real cursor-agent recording with a redistributable licence was found;
    // this one is hand-written (see fixtures/agents/README.md).
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents/cursor-stream.jsonl"),
    )
    .unwrap();
    assert_eq!(detect(&text), Some(Format::CursorStream));
    let t = parse(&text).unwrap();
    assert_eq!(t.tool_calls, 2);
    assert_eq!(t.shell.len(), 1);
    assert_eq!(t.shell[0].command, "lens sh ./migrate.sh");
    assert_eq!(t.tokens.unwrap().input, 20_418);
}

#[test]
fn the_replay_report_over_the_committed_transcripts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "at least five real transcripts");
    let read: Vec<(String, harness::transcript::Transcript)> = files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, parse(&std::fs::read_to_string(p).unwrap()).unwrap())
        })
        .collect();
    let r = harness::replay::report(&read);
    assert_eq!(r.total.calls, 11);
    assert_eq!(
        r.total.raw_bytes,
        read.iter().map(|(_, t)| t.shell_bytes()).sum::<u64>()
    );
    assert!(r.total.view_bytes <= r.total.raw_bytes);
    // After the tool ran, the piped find is still find's output and is
    // filtered; the sed of a file (in a line Lens does not take apart) and the
    // cat are what the agent asked to read, and stay as they were.
    assert_eq!(r.families["find"].uncovered, 0);
    assert_eq!(r.families["find"].elided, 1);
    assert_eq!(r.families["sed"].uncovered, 1);
    assert_eq!(r.families["cat"].uncovered, 1);
    let md = harness::replay::markdown(&r);
    assert!(md.contains("| cat | reads-file | 1 | 28 |"), "{md}");
    // The binary prints the same tables, and refuses a file that is no transcript.
    let bad = std::env::temp_dir().join(format!("not-a-transcript-{}.txt", std::process::id()));
    std::fs::write(&bad, "hello\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("transcripts")
        .args(&files)
        .arg(&bad)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| all | 11 |"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("skipping") && stderr.contains("not a transcript"),
        "{stderr}"
    );
    let none = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["transcripts"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!none.status.success());
    std::fs::remove_file(&bad).unwrap();
}

fn agent_fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents")
            .join(name),
    )
    .unwrap()
}

#[test]
fn gemini_stream_json_recorded_through_the_scripted_model() {
    let text = agent_fixture("gemini-stream.jsonl");
    assert_eq!(detect(&text), Some(Format::GeminiStream));
    let t = parse(&text).unwrap();
    assert_eq!(t.agent.cli, "gemini");
    assert_eq!(t.agent.model.as_deref(), Some("auto"));
    assert_eq!((t.tool_calls, t.turns), (2, 3));
    assert_eq!(t.shell[0].command, "seq 1 3");
    assert_eq!(t.shell[0].output, "1\n2\n3");
    assert_eq!(t.shell[1].command, "echo hi; exit 2");
    let k = t.tokens.unwrap();
    assert_eq!((k.input, k.output, k.cache_read), (35_816, 54, 0));
}

#[test]
fn opencode_json_recorded_through_the_scripted_model() {
    let text = agent_fixture("opencode-run.jsonl");
    assert_eq!(detect(&text), Some(Format::OpencodeJson));
    let t = parse(&text).unwrap();
    assert_eq!(t.agent.cli, "opencode");
    assert_eq!((t.tool_calls, t.turns), (2, 3));
    assert_eq!(t.shell[0].output, "1\n2\n3\n");
    assert_eq!(t.shell[1].exit, Some(2));
    let k = t.tokens.unwrap();
    assert_eq!((k.input, k.output), (7678 + 7735 + 7794, 7 + 9 + 2));
}

// Lens installed with `lens init --agent X --global`, the model scripted: the
// transcript holds the view the hook delivered (Claude Code's stream-json,
// OpenCode's JSON events, Codex's rollout under CODEX_HOME/sessions, Gemini
// CLI's chat recording under ~/.gemini/tmp/<project>/chats; Codex's `exec
// --json` and Gemini CLI's stream-json record the command's own output, or
// nothing, not what the model read). `harness transcripts` counts what the
// command printed, not the view.
#[test]
fn hooked_transcripts_count_the_views_markers_as_raw_bytes() {
    for (file, format) in [
        ("claude-hooked.jsonl", Format::ClaudeStream),
        ("opencode-hooked.jsonl", Format::OpencodeJson),
        ("codex-rollout-hooked.jsonl", Format::CodexRollout),
        ("gemini-chat-hooked.jsonl", Format::GeminiChat),
    ] {
        let text = agent_fixture(file);
        assert_eq!(detect(&text), Some(format), "{file}");
        let t = parse(&text).unwrap();
        let status = &t.shell[0];
        assert_eq!(status.command, "git status");
        assert!(status.is_lens_view(), "{file}: {}", status.output);
        let r = harness::replay::replay(status, t.agent.cli.as_str());
        assert_eq!(r.fate, harness::replay::Fate::AlreadyLens);
        assert_eq!(r.view_bytes, status.output.len() as u64);
        // 226 lines of `git status`: far more than the view's ~200 bytes.
        assert!(r.raw_bytes > 10 * r.view_bytes, "{file}: {r:?}");
        let report = harness::replay::report(&[(file.to_string(), t.clone())]);
        assert!(report.total.saved_pct() > 50.0, "{file}");
    }
}

// The 220 changed files' `git status` printed 7,286 bytes, `seq 1 3000` 13,893.
const GIT_STATUS_BYTES: u64 = 7286;
const SEQ_3000_BYTES: u64 = 13_893;

// Codex CLI 0.169.0's rollout of a hooked session: the model read Lens's view
// (the hook's answer replaced the result), framed by Codex's header lines; the
// call's `item_completed` record kept what the command printed, which is what
// the report counts as raw, to the byte.
#[test]
fn a_hooked_codex_rollout_counts_the_bytes_the_command_printed() {
    let t = parse(&agent_fixture("codex-rollout-hooked.jsonl")).unwrap();
    assert_eq!(t.agent.version.as_deref(), Some("0.169.0"));
    assert_eq!(t.agent.model.as_deref(), Some("scripted"));
    let cmds: Vec<&str> = t.shell.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(cmds, ["git status", "seq 1 3000", "ls; exit 3"]);
    // The header lines are Codex's, not the output.
    assert!(t.shell[0]
        .output
        .starts_with("[lens: elided stdout 1-226 (226 lines: grouped) handle="));
    assert!(
        t.shell[1].output.starts_with("1\n2\n3\n"),
        "{}",
        t.shell[1].output
    );
    assert_eq!(t.shell[2].output, "src\n");
    let exits: Vec<Option<i32>> = t.shell.iter().map(|c| c.exit).collect();
    assert_eq!(exits, [Some(0), Some(0), Some(3)]);
    let printed: Vec<Option<u64>> = t.shell.iter().map(|c| c.printed).collect();
    assert_eq!(
        printed,
        [Some(GIT_STATUS_BYTES), Some(SEQ_3000_BYTES), Some(4)]
    );
    assert_eq!((t.tool_calls, t.turns), (3, 4));
    let r = harness::replay::report(&[("codex".to_string(), t.clone())]);
    let raw: Vec<u64> = r.files[0].calls.iter().map(|c| c.raw_bytes).collect();
    // The views count what was printed; the small failing `ls` reached the
    // model as it was.
    assert_eq!(raw, [GIT_STATUS_BYTES, SEQ_3000_BYTES, 4]);
    assert_eq!(
        r.files[0].calls[0].view_bytes,
        t.shell[0].output.len() as u64
    );
    assert!(r.total.view_bytes < 600, "{:?}", r.total);
}

// Gemini CLI 0.61.0's chat recording of a hooked session: each model response
// is written twice (then again with its tool calls and the results the model
// read), and counts once; the results are framed `Output: …` / `Exit Code: N`
// as the model read them. Nothing in the recording says what the command
// printed, so a view's raw bytes come from its markers' line counts, or, given
// the store, from what the store kept for its handle.
#[test]
fn a_hooked_gemini_chat_recording_counts_the_views_from_markers_or_the_store() {
    let t = parse(&agent_fixture("gemini-chat-hooked.jsonl")).unwrap();
    assert_eq!(t.agent.cli, "gemini");
    assert_eq!(t.agent.model.as_deref(), Some("gemini-3.8-flash"));
    assert_eq!((t.tool_calls, t.turns), (3, 4));
    let cmds: Vec<&str> = t.shell.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(cmds, ["git status", "seq 1 3000", "ls; exit 3"]);
    assert!(t.shell[0].output.starts_with("[lens: elided stdout 1-226"));
    assert!(t.shell[1].is_lens_view());
    assert_eq!(
        (t.shell[2].output.as_str(), t.shell[2].exit),
        ("src", Some(3))
    );
    assert!(t.shell.iter().all(|c| c.printed.is_none()));
    let k = t.tokens.unwrap();
    assert_eq!(
        (k.input, k.output),
        (14_051 + 14_198 + 14_373 + 14_490, 19 + 19 + 19 + 2)
    );
    // From the markers: within a third of what was printed.
    let r = harness::replay::report(&[("gemini".to_string(), t.clone())]);
    let est: Vec<u64> = r.files[0].calls.iter().map(|c| c.raw_bytes).collect();
    for (e, real) in est.iter().zip([GIT_STATUS_BYTES, SEQ_3000_BYTES]) {
        assert!(e * 3 > real * 2 && e * 2 < real * 3, "{est:?}");
    }
    // From the store: exact. `harness transcripts --store DIR` reads the
    // handle's meta.json.
    let store = std::env::temp_dir().join(format!("lens-transcripts-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&store);
    for (call, bytes) in t.shell.iter().zip([GIT_STATUS_BYTES, SEQ_3000_BYTES]) {
        let handle = harness::replay::view_handle(&call.output).unwrap();
        std::fs::create_dir_all(store.join(handle)).unwrap();
        std::fs::write(
            store.join(handle).join("meta.json"),
            format!(r#"{{"argv": ["sh"], "stdout_bytes": {bytes}, "stderr_bytes": 0}}"#),
        )
        .unwrap();
    }
    let mut stored = t.clone();
    assert_eq!(harness::replay::printed_from_store(&mut stored, &store), 2);
    let r = harness::replay::report(&[("gemini".to_string(), stored)]);
    let raw: Vec<u64> = r.files[0].calls.iter().map(|c| c.raw_bytes).collect();
    assert_eq!(raw, [GIT_STATUS_BYTES, SEQ_3000_BYTES, 3]);
    // The binary does the same with --store.
    let json = store.join("report.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("transcripts")
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/agents/gemini-chat-hooked.jsonl"),
        )
        .arg("--store")
        .arg(&store)
        .arg("--json")
        .arg(&json)
        .env_remove("LENS_STORE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        v["total"]["raw_bytes"].as_u64(),
        Some(GIT_STATUS_BYTES + SEQ_3000_BYTES + 3)
    );
    std::fs::remove_dir_all(&store).unwrap();
}

// Gemini CLI's stream-json of the same hooked session has an empty result
// for each call the hook answered; with its chat recording the calls are what
// the model read, and the tokens stay the stream's (which count the router's
// calls the recording leaves out). A real-model hook cell reads it so.
#[test]
fn a_hooked_gemini_stream_takes_its_calls_from_the_chat_recording() {
    use harness::transcript::with_persisted;
    let stream = parse(&agent_fixture("gemini-stream-hooked.jsonl")).unwrap();
    assert_eq!(stream.format, Format::GeminiStream);
    assert!(stream.shell[0].output.is_empty() && stream.shell[1].output.is_empty());
    let o = Outcome::from_transcript(&stream);
    assert_eq!(o.views, 0);
    let chat = parse(&agent_fixture("gemini-chat-hooked.jsonl")).unwrap();
    let t = with_persisted(stream.clone(), &chat);
    let o = Outcome::from_transcript(&t);
    assert_eq!(o.views, 2);
    assert_eq!(o.bytes_read, chat.shell_bytes());
    assert_eq!(o.commands, ["git status", "seq 1 3000", "ls; exit 3"]);
    assert_eq!(o.tokens, stream.tokens);
    assert_eq!(o.tokens.unwrap().input, 59_588);
    assert_eq!(o.turns, stream.turns);
}
