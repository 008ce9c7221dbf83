//! What Lens would have shown: every shell call of a transcript put through the
//! filter, as the after-tool hook `lens init` installs would have.
//!
//! A call is replayed the way the hook filters an agent's captured output: the
//! command the line's output comes from (its last command; in a pipeline, the
//! last stage that does not merely pass its input on) classifies it, through
//! `lens-core` at level 2 with the default budget; a line Lens does not take
//! apart is classified by content. What the hook leaves as it is counts as
//! uncovered, with the reason: a file the agent asked to read, and, for Claude
//! Code, a command that failed (its after-tool event for a failure cannot
//! replace the output). Bytes are the result text the agent was given; tokens
//! are estimated as bytes / 4, the rule `lens stats` uses, and say nothing of a
//! tokenizer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use lens_cli::captured::classify;
use lens_cli::cmdline::simple_commands;
use lens_core::{Handle, Level, Options, Request};
use serde::Serialize;

use crate::transcript::{ShellCall, Transcript};

/// What became of one call.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Fate {
    /// Filtered; `elided` when the view left lines out.
    Filtered {
        /// True when the view announced an elision.
        elided: bool,
    },
    /// The agent already ran it through Lens: its result is a view already.
    AlreadyLens,
    /// Left as the agent had it, so it reached the model raw.
    Uncovered {
        /// Why.
        reason: String,
    },
}

/// One replayed call.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The command family (`cargo test`, `git log`, `ls`).
    pub family: String,
    /// The command line as the agent wrote it.
    pub command: String,
    /// Bytes of the result the agent was given.
    pub raw_bytes: u64,
    /// Bytes of the view Lens would have given instead (raw bytes when uncovered).
    pub view_bytes: u64,
    /// What happened.
    pub fate: Fate,
}

/// Programs whose first operand is a subcommand (`docker build`, `gh pr`), besides
/// those Lens's rewrite table lists with subcommands.
const SUBCOMMANDS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "bun",
    "bundle",
    "deno",
    "docker",
    "dotnet",
    "gh",
    "gradle",
    "helm",
    "kubectl",
    "mix",
    "mvn",
    "npx",
    "podman",
    "poetry",
    "rails",
    "swift",
    "systemctl",
    "terraform",
    "uv",
];

/// The family of an argv: the program, and its subcommand when it takes one.
pub fn family(argv: &[String]) -> String {
    let Some(first) = argv.first() else {
        return "(empty)".into();
    };
    let program = first.rsplit('/').next().unwrap_or(first);
    let has_subcommands = SUBCOMMANDS.contains(&program)
        || lens_cli::cmdline::SHAPED
            .iter()
            .any(|(p, subs)| *p == program && subs.is_some());
    if has_subcommands {
        lens_cli::command_key(argv)
    } else {
        program.to_string()
    }
}

/// The family of a command line: that of its first simple command.
fn family_of(line: &str) -> String {
    let first = simple_commands(line)
        .and_then(|c| c.into_iter().next())
        .unwrap_or_else(|| line.to_string());
    let words: Vec<String> = first
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
        .collect();
    family(&words)
}

/// Replays one call of a session of `agent` (its CLI name).
pub fn replay(call: &ShellCall, agent: &str) -> Replayed {
    let raw_bytes = call.output.len() as u64;
    let line = call.command.trim();
    let uncovered = |reason: &str| Replayed {
        family: family_of(line),
        command: call.command.clone(),
        raw_bytes,
        view_bytes: raw_bytes,
        fate: Fate::Uncovered {
            reason: reason.into(),
        },
    };
    if line.starts_with("lens ") || call.is_lens_view() {
        // A view (from `lens <cmd>` or a hook): the model read the view; the
        // command printed what the transcript or the store recorded of it,
        // else what the markers say was left out besides.
        return Replayed {
            family: family_of(line.trim_start_matches("lens ").trim_start()),
            command: call.command.clone(),
            raw_bytes: call
                .printed
                .or_else(|| raw_from_view(&call.output))
                .unwrap_or(raw_bytes),
            view_bytes: raw_bytes,
            fate: Fate::AlreadyLens,
        };
    }
    if agent == "claude" && call.exit.is_some_and(|c| c != 0) {
        return uncovered("failed: Claude Code's failure event cannot replace the output");
    }
    let argv = match classify(line) {
        Ok(a) => a,
        Err(why) => return uncovered(why.name()),
    };
    let argv = &argv;
    let (stdout, stderr) = match &call.streams {
        Some((o, e)) => (o.as_bytes(), e.as_bytes()),
        None => (call.output.as_bytes(), &b""[..]),
    };
    let req = Request {
        argv,
        stdout,
        stderr,
        exit: call.exit.unwrap_or(0),
    };
    let handle = Handle::parse("0a1b2c3d").expect("a valid handle");
    let v = lens_core::view(&req, &Options::new(Level::Two, Some(handle)));
    // The view replaces what the agent was given; never count it as larger than
    // the raw when nothing was elided (lens prints the raw then).
    let view_bytes = if v.elided { v.len() as u64 } else { raw_bytes };
    Replayed {
        family: if argv.is_empty() {
            family_of(line)
        } else {
            family(argv)
        },
        command: call.command.clone(),
        raw_bytes,
        view_bytes,
        fate: Fate::Filtered { elided: v.elided },
    }
}

/// The bytes the command printed, estimated from a Lens view (a line may carry
/// the agent's own prefix before a marker: Gemini's `Output: `): its shown lines,
/// plus the lines its markers say were elided at the shown lines' mean length.
/// `None` when `view` has no elision marker with a handle.
pub fn raw_from_view(view: &str) -> Option<u64> {
    static MARKER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let marker = MARKER.get_or_init(|| {
        regex::Regex::new(r"\[lens: elided \w+ (\d+)-(\d+) [^\]]*handle=[0-9a-f]{8}[^\]]*\]")
            .expect("marker regex")
    });
    let (mut shown_bytes, mut shown_lines, mut elided) = (0u64, 0u64, 0u64);
    let mut any = false;
    for l in view.lines() {
        if let Some(c) = marker.captures(l) {
            let (a, b): (u64, u64) = (c[1].parse().ok()?, c[2].parse().ok()?);
            elided += b.saturating_sub(a) + 1;
            any = true;
        } else if !l.contains("[lens: ") {
            shown_bytes += l.len() as u64 + 1;
            shown_lines += 1;
        }
    }
    if !any {
        return None;
    }
    let mean = if shown_lines == 0 {
        1
    } else {
        shown_bytes.div_ceil(shown_lines)
    };
    Some(shown_bytes + elided * mean)
}

/// The handle of the first marker in a Lens view.
pub fn view_handle(view: &str) -> Option<&str> {
    static HANDLE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = HANDLE.get_or_init(|| {
        regex::Regex::new(r"\[lens: [^\]]*handle=([0-9a-f]{8})").expect("handle regex")
    });
    re.captures(view).and_then(|c| c.get(1)).map(|m| m.as_str())
}

/// For every Lens view of `t` whose printed bytes the transcript does not
/// record, the bytes the store at `store` kept for its handle (the run's
/// `meta.json`: what the command wrote to stdout and stderr). Returns how many
/// calls it found there.
pub fn printed_from_store(t: &mut Transcript, store: &std::path::Path) -> usize {
    let mut found = 0;
    for call in t.shell.iter_mut().filter(|c| c.printed.is_none()) {
        let Some(handle) = view_handle(&call.output) else {
            continue;
        };
        let Ok(meta) = std::fs::read(store.join(handle).join("meta.json")) else {
            continue;
        };
        let Ok(meta) = serde_json::from_slice::<serde_json::Value>(&meta) else {
            continue;
        };
        if let (Some(out), Some(err)) =
            (meta["stdout_bytes"].as_u64(), meta["stderr_bytes"].as_u64())
        {
            call.printed = Some(out + err);
            found += 1;
        }
    }
    found
}

/// Totals for a family, a file or everything.
#[derive(Serialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// Shell calls.
    pub calls: u64,
    /// Calls whose view elided something.
    pub elided: u64,
    /// Calls the hook would leave as the agent had them.
    pub uncovered: u64,
    /// Bytes the agent was given.
    pub raw_bytes: u64,
    /// Bytes it would have been given through Lens.
    pub view_bytes: u64,
}

impl Totals {
    fn add(&mut self, r: &Replayed) {
        self.calls += 1;
        self.raw_bytes += r.raw_bytes;
        self.view_bytes += r.view_bytes;
        match r.fate {
            Fate::Filtered { elided: true } => self.elided += 1,
            Fate::Uncovered { .. } => self.uncovered += 1,
            _ => {}
        }
    }

    /// Percentage of the raw bytes the views left out.
    pub fn saved_pct(&self) -> f64 {
        if self.raw_bytes == 0 {
            0.0
        } else {
            100.0 * (self.raw_bytes - self.view_bytes.min(self.raw_bytes)) as f64
                / self.raw_bytes as f64
        }
    }
}

/// One transcript's part.
#[derive(Serialize, Debug, Clone)]
pub struct FileReport {
    /// The file.
    pub file: String,
    /// The format it was read as, and the agent it names.
    pub format: crate::transcript::Format,
    /// The agent.
    pub agent: crate::transcript::Agent,
    /// Tokens the transcript reports (when it does), kinds apart.
    pub tokens: Option<crate::driver::Tokens>,
    /// Its totals.
    pub totals: Totals,
    /// Every call.
    pub calls: Vec<Replayed>,
}

/// The whole report.
#[derive(Serialize, Debug, Clone)]
pub struct Report {
    /// Lens's version.
    pub lens_version: String,
    /// Per transcript.
    pub files: Vec<FileReport>,
    /// Per command family, over every file.
    pub families: BTreeMap<String, Totals>,
    /// Every file together.
    pub total: Totals,
}

/// Replays every transcript.
pub fn report(transcripts: &[(String, Transcript)]) -> Report {
    let mut files = Vec::new();
    let mut families: BTreeMap<String, Totals> = BTreeMap::new();
    let mut total = Totals::default();
    for (name, t) in transcripts {
        let calls: Vec<Replayed> = t.shell.iter().map(|c| replay(c, &t.agent.cli)).collect();
        let mut totals = Totals::default();
        for r in &calls {
            totals.add(r);
            total.add(r);
            families.entry(r.family.clone()).or_default().add(r);
        }
        files.push(FileReport {
            file: name.clone(),
            format: t.format,
            agent: t.agent.clone(),
            tokens: t.tokens,
            totals,
            calls,
        });
    }
    Report {
        lens_version: env!("CARGO_PKG_VERSION").into(),
        files,
        families,
        total,
    }
}

fn tokens(bytes: u64) -> u64 {
    lens_cli::estimated_tokens(bytes)
}

/// The report as markdown: per file, per family, and what no shape covers.
pub fn markdown(r: &Report) -> String {
    let mut out = String::new();
    out.push_str("| transcript | agent | shell calls | raw bytes | through Lens | saved |\n");
    out.push_str("|---|---|---:|---:|---:|---:|\n");
    for f in &r.files {
        let agent = [
            Some(f.agent.cli.clone()),
            f.agent.version.clone(),
            f.agent.model.clone(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.1}% |\n",
            f.file,
            agent,
            f.totals.calls,
            f.totals.raw_bytes,
            f.totals.view_bytes,
            f.totals.saved_pct()
        ));
    }
    out.push_str("\n| command family | calls | elided | uncovered | raw bytes | through Lens | saved | est. tokens raw → Lens |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---|\n");
    let mut fams: Vec<(&String, &Totals)> = r.families.iter().collect();
    fams.sort_by_key(|(k, t)| (std::cmp::Reverse(t.raw_bytes), (*k).clone()));
    for (k, t) in fams
        .iter()
        .chain(std::iter::once(&(&"all".to_string(), &r.total)))
    {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.1}% | {} → {} |\n",
            k,
            t.calls,
            t.elided,
            t.uncovered,
            t.raw_bytes,
            t.view_bytes,
            t.saved_pct(),
            tokens(t.raw_bytes),
            tokens(t.view_bytes)
        ));
    }
    // What no shape covers: by family and reason.
    let mut unc: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for f in &r.files {
        for c in &f.calls {
            if let Fate::Uncovered { reason } = &c.fate {
                let e = unc.entry((c.family.clone(), reason.clone())).or_default();
                e.0 += 1;
                e.1 += c.raw_bytes;
            }
        }
    }
    if unc.is_empty() {
        out.push_str("\nEvery shell call would have been filtered.\n");
    } else {
        out.push_str("\nCommands the hook would have left alone (they reached the agent raw):\n\n");
        out.push_str("| command | why | calls | raw bytes |\n|---|---|---:|---:|\n");
        let mut v: Vec<_> = unc.into_iter().collect();
        v.sort_by_key(|((k, _), (_, b))| (std::cmp::Reverse(*b), k.clone()));
        for ((k, why), (n, b)) in v {
            out.push_str(&format!("| {k} | {why} | {n} | {b} |\n"));
        }
    }
    out.push_str(
        "\nBytes are the tool results the agent was given; Lens views are replayed through lens-core at level 2 by the command each line's output comes from, as the after-tool hook would have filtered it. Tokens are estimated as bytes/4.\n",
    );
    out
}

/// `harness transcripts`: what Lens would have shown in these transcripts,
/// as a table (and JSON to `json_out`); output sizes from `store` where a
/// transcript names a Lens handle. A file that cannot be read is skipped, said
/// on stderr.
pub fn transcripts(
    files: &[String],
    json_out: Option<PathBuf>,
    store: Option<&Path>,
) -> Result<()> {
    let mut read = Vec::new();
    let mut skipped = 0;
    for f in files {
        let text = match std::fs::read(f) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                eprintln!("harness: skipping {f}: {e}");
                skipped += 1;
                continue;
            }
        };
        match crate::transcript::parse(&text) {
            Ok(mut t) => {
                if let Some(dir) = store {
                    printed_from_store(&mut t, dir);
                }
                read.push((f.clone(), t))
            }
            Err(e) => {
                eprintln!("harness: skipping {f}: {e}");
                skipped += 1;
            }
        }
    }
    if read.is_empty() {
        bail!(
            "none of the {} files is a transcript this harness reads",
            files.len()
        );
    }
    let r = report(&read);
    print!("{}", markdown(&r));
    if skipped > 0 {
        eprintln!(
            "harness: {skipped} of {} files skipped (above)",
            files.len()
        );
    }
    if let Some(out) = json_out {
        let mut json = serde_json::to_vec_pretty(&r)?;
        json.push(b'\n');
        std::fs::write(&out, json).with_context(|| format!("cannot write {}", out.display()))?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(command: &str, output: &str) -> ShellCall {
        ShellCall {
            command: command.into(),
            output: output.into(),
            streams: None,
            exit: None,
            printed: None,
        }
    }

    #[test]
    fn a_long_listing_is_filtered_through_a_pipe_too() {
        let mut big = String::new();
        for i in 0..3000 {
            big.push_str(&format!("src/module_{i}/file_{i}.rs\n"));
        }
        let r = replay(&call("find src -name '*.rs'", &big), "codex");
        assert_eq!(r.family, "find");
        assert_eq!(r.fate, Fate::Filtered { elided: true });
        assert!(r.view_bytes < r.raw_bytes / 4, "{r:?}");
        // After the tool ran, what came out of the pipe is still find's.
        let p = replay(&call("find src -name '*.rs' | tee list", &big), "codex");
        assert_eq!(p.fate, Fate::Filtered { elided: true });
        assert_eq!(p.family, "find");
    }

    #[test]
    fn files_read_and_claudes_failures_stay_as_the_agent_had_them() {
        let mut failed = call("cargo test", &"x\n".repeat(5000));
        failed.exit = Some(101);
        let c = replay(&failed, "claude");
        assert!(
            matches!(c.fate, Fate::Uncovered { ref reason } if reason.starts_with("failed")),
            "{c:?}"
        );
        assert_eq!(
            replay(&failed, "codex").fate,
            Fate::Filtered { elided: true }
        );
        let q = replay(&call("sed -n '1,200p' apps/x.tsx", "a\n"), "claude");
        assert_eq!(
            q.fate,
            Fate::Uncovered {
                reason: "reads-file".into()
            }
        );
    }

    #[test]
    fn a_view_a_hook_delivered_counts_the_lines_its_markers_left_out() {
        let view = "checked 1 ok\n[lens: elided stdout 2-4999 (4998 lines: budget) handle=0a1b2c3d]\nfailed 5000\n";
        let r = replay(&call("python3 audit.py", view), "claude");
        assert_eq!(r.fate, Fate::AlreadyLens);
        assert_eq!(r.view_bytes, view.len() as u64);
        // Two shown lines of 13 and 12 bytes: a mean of 13 for each elided one.
        assert_eq!(r.raw_bytes, 25 + 4998 * 13);
        assert_eq!(raw_from_view("no marker"), None);
        // A digest marker, behind Gemini's prefix.
        let g = "Output: [lens: elided stdout 1-226 (226 lines: grouped) handle=5178d212 digest=3]\nOn branch main\n";
        assert_eq!(raw_from_view(g), Some(15 + 226 * 15));
    }

    #[test]
    fn small_output_is_not_counted_larger_and_families_are_named() {
        let r = replay(&call("ls", "a\nb\n"), "claude");
        assert_eq!(r.fate, Fate::Filtered { elided: false });
        assert_eq!(r.view_bytes, r.raw_bytes);
        assert_eq!(
            replay(&call("rg \"TeamSheet\"", "x\n"), "claude").family,
            "rg"
        );
        assert_eq!(
            replay(&call("docker build .", "x\n"), "claude").family,
            "docker build"
        );
        assert_eq!(
            replay(&call("git -C repo log --oneline", "x\n"), "claude").family,
            "git"
        );
        let l = replay(
            &call(
                "lens cargo test",
                "[lens: elided stdout 1-9 (9 lines) handle=01234567]\n",
            ),
            "claude",
        );
        assert_eq!(
            (l.fate, l.family.as_str()),
            (Fate::AlreadyLens, "cargo test")
        );
        // A line Lens does not take apart is classified by content, unless a
        // word of it may be printing a file.
        let q = replay(&call("echo $(date) && ls", "a\n"), "claude");
        assert_eq!(q.fate, Fate::Filtered { elided: false });
        let s = replay(
            &call("sed -n '1,200p' apps/(protected)/x.tsx", "a\n"),
            "claude",
        );
        assert_eq!(
            s.fate,
            Fate::Uncovered {
                reason: "reads-file".into()
            }
        );
    }
}
