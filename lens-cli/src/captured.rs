//! Output an agent (or a user) already captured: one entry point for every
//! after-tool hook and for `lens --as`.
//!
//! The command ran as the agent ran it, judged by the agent's own permission
//! rules; Lens only changes what the model reads afterwards. The output is one
//! stream (agents hand stdout and stderr over merged), stored under a handle
//! like any `lens <cmd>` run, so `lens show` and its markers work the same, and
//! classified by the command [`cmdline::producer`] recognises in the line, else
//! by its content alone. The answer is the view only when the output is over
//! the budget, the view is smaller by more than its own header and markers
//! cost, and the full output is stored; in every other case (a line that runs
//! Lens itself, a file the agent asked to read, output under the budget, output
//! that is not UTF-8, a store that fails, a filter that panics) the answer is
//! raw, and the caller leaves the agent's own result alone. The one answer for
//! a line that runs Lens is a page of a `lens show` the agent would cut, from
//! the same stored run (see [`crate::show::page`]).

use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::time::SystemTime;

use lens_core::marker::carries;
use lens_core::{Handle, Header, Level, Request, DEFAULT_BUDGET};

use crate::cmdline;
use crate::config::load_config;
use crate::view::{guarded_view, options};
use crate::{now_ms, paths, store};

/// What the agent captured.
pub struct Captured {
    /// The shell command line as the agent wrote it.
    pub line: String,
    /// Stdout and stderr as the agent merged them.
    pub output: Vec<u8>,
    /// The full output, when the agent kept it in a file and `output` holds only
    /// a part of it (Claude Code's `persistedOutputPath`, OpenCode's
    /// `outputPath`). Read in place of `output` when it can be.
    pub full: Option<PathBuf>,
    /// The exit code, when the agent says it.
    pub exit: Option<i32>,
    /// The directory the command ran in, when known.
    pub cwd: Option<String>,
    /// Level asked for (`lens --as --level`); else the config's, else 2.
    pub level: Option<Level>,
    /// Budget asked for; else the config's, else the default. A hook passes the
    /// smaller of that and what its agent shows without cutting.
    pub budget: Option<usize>,
    /// The agent holds only a part of the output and keeps no path to the
    /// rest (Codex past its rollout's 64 KiB, or a later chunk of a long
    /// run): nothing whole can be stored, so the agent's result stands.
    pub partial: bool,
    /// What the agent shows without cutting (a hook sets it): a `lens show`
    /// longer than this is answered with a page of the same stored run.
    pub inline: Option<Inline>,
}

/// What an agent shows of a result without cutting it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inline {
    /// Bytes of output.
    pub bytes: usize,
    /// Lines of the answer Lens gives, where the agent cuts by lines too
    /// (Gemini CLI's `read_file`).
    pub lines: Option<u64>,
}

/// Why the agent's own result stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raw {
    /// The line prints a file the agent named: it asked to read it.
    ReadsFile,
    /// The view would be no smaller.
    Unchanged,
    /// The output is not UTF-8 text.
    NotText,
    /// Level 3 (raw) was asked for.
    LevelThree,
    /// The output could not be stored (or the full output read): nothing is
    /// elided that the store does not hold.
    NotStored,
    /// The agent handed over only a part of the output, with no way to the
    /// rest ([`Captured::partial`]).
    Partial,
    /// The line runs Lens itself: its output is a view or a stored run
    /// already, and filtering it again would hide it under a new handle.
    Lens,
    /// The output fits in the budget the view would have.
    UnderBudget,
    /// The agent might not let the model read the answer: the word says why
    /// (see [`crate::agents::cannot_answer`]).
    AgentRefuses(&'static str),
}

impl Raw {
    /// One word for the log.
    pub fn name(self) -> &'static str {
        match self {
            Raw::ReadsFile => "reads-file",
            Raw::Unchanged => "unchanged",
            Raw::NotText => "not-text",
            Raw::LevelThree => "level-3",
            Raw::NotStored => "not-stored",
            Raw::Partial => "agent-kept-a-part",
            Raw::Lens => "lens-own",
            Raw::UnderBudget => "under-budget",
            Raw::AgentRefuses(why) => why,
        }
    }
}

/// The view the model reads instead of the raw output.
#[derive(Debug)]
pub struct Filtered {
    /// The view's text.
    pub text: String,
    /// Where the full output is.
    pub handle: Handle,
    /// Bytes of the full output.
    pub raw_bytes: u64,
    /// The argv the output was classified by.
    pub argv: Vec<String>,
    /// The level rendered.
    pub level: Level,
    /// The exit code, when the agent said it.
    pub exit: Option<i32>,
}

/// The argv `line`'s output is classified by (empty when the line is not
/// taken apart: then by content alone), or why its output is shown as it is.
/// Pure: what `filter` decides before it reads the output, and what the
/// harness replays transcripts with.
pub fn classify(line: &str) -> Result<Vec<String>, Raw> {
    match cmdline::producer(line) {
        Some(p) if p.reads_file => Err(Raw::ReadsFile),
        Some(p) => Ok(p.argv),
        // Not taken apart: any word that names a file reader may be printing a
        // file the agent asked for, and that is shown as it is.
        None if cmdline::mentions_reader(line) => Err(Raw::ReadsFile),
        None => Ok(Vec::new()),
    }
}

/// Most output held in memory; a bigger full-output file is not read, and the
/// agent's own result stands.
const HOLD: u64 = 64 << 20;

/// Filters captured output: the view, or why the agent's own result stands.
/// Diagnostics (a broken config, a filter panic) are pushed, never printed.
///
/// A line that runs Lens is decided first: what Lens printed is never filtered
/// again. Then a view replaces the output only when the output is over the
/// budget and the view is smaller than it by more than the view's own lines
/// (its header and markers) cost; a view opens with its [`Header`].
pub fn filter(c: &Captured, diagnostics: &mut Vec<String>) -> Result<Filtered, Raw> {
    if cmdline::runs_lens(&c.line) {
        return own_page(c).ok_or(Raw::Lens);
    }
    if c.partial {
        return Err(Raw::Partial);
    }
    let argv = classify(&c.line)?;
    // Where the agent kept the whole output, the part it handed over is not
    // the output: a full file Lens cannot read leaves the agent's result alone.
    let full = match &c.full {
        Some(p) => Some(read_full(p).map_err(|_| Raw::NotStored)?),
        None => None,
    };
    let output: &[u8] = full.as_deref().unwrap_or(&c.output);
    if std::str::from_utf8(output).is_err() {
        return Err(Raw::NotText);
    }
    let config = load_config(diagnostics);
    let settings = config
        .as_ref()
        .map(|cfg| cfg.settings(&argv))
        .unwrap_or_default();
    let level = c.level.or(settings.level).unwrap_or(Level::Two);
    if level == Level::Three {
        return Err(Raw::LevelThree);
    }
    let budget = c.budget.or(settings.budget).unwrap_or(DEFAULT_BUDGET);
    if output.len() <= budget {
        return Err(Raw::UnderBudget);
    }
    let exit = c.exit.unwrap_or(0);
    let req = Request {
        argv: &argv,
        stdout: output,
        stderr: b"",
        exit,
    };
    let started = SystemTime::now();
    // Seeded as `lens <cmd>` seeds a run, with the line in place of the argv.
    let seed = crate::run::run_seed(std::slice::from_ref(&c.line), started);
    let content: [&[u8]; 2] = [&seed, output];
    let provisional = Handle::derive(&content, 0);
    let opts = |h| options(level, budget, Some(h), &settings);
    let first = guarded_view(&req, &opts(provisional), diagnostics);
    let lines = store::count_lines(output);
    if !first.elided || !net_win(&first.stdout, output.len(), lines, &provisional) {
        return Err(Raw::Unchanged);
    }
    let meta = store::Meta {
        argv: argv.clone(),
        cwd: c.cwd.clone().unwrap_or_default(),
        exit,
        signal: None,
        cut_short: None,
        start_ms: now_ms(started),
        duration_ms: 0,
        stdout_bytes: output.len() as u64,
        stderr_bytes: 0,
        stdout_lines: lines,
        stderr_lines: 0,
        ..store::Meta::default()
    };
    // The full output reaches the store before the view is answered.
    let handle = store::save(&paths::store(), &content, &meta, output, b"").map_err(|e| {
        diagnostics.push(format!(
            "lens: could not store the output in {} ({e}); the agent keeps its own",
            paths::store().display()
        ));
        Raw::NotStored
    })?;
    let shown = if handle == provisional {
        first
    } else {
        guarded_view(&req, &opts(handle), diagnostics)
    };
    if !shown.elided || !net_win(&shown.stdout, output.len(), lines, &handle) {
        return Err(Raw::Unchanged);
    }
    let view = String::from_utf8_lossy(&shown.stdout);
    let header = Header::of(&view, lines, &handle).render();
    Ok(Filtered {
        text: format!("{header}\n{view}"),
        handle,
        raw_bytes: output.len() as u64,
        argv,
        level,
        exit: c.exit,
    })
}

/// True when the view, with the header it opens with, is smaller than the
/// output by more than the Lens lines in it cost: else the reader pays for
/// markers to be spared less than they take.
fn net_win(view: &[u8], output: usize, lines: u64, handle: &Handle) -> bool {
    let text = String::from_utf8_lossy(view);
    let header = Header::of(&text, lines, handle).render().len() + 1;
    let own: usize = text
        .split_inclusive('\n')
        .filter(|l| carries(l.trim_end_matches('\n').as_bytes(), handle))
        .map(str::len)
        .sum();
    let answer = view.len() + header;
    answer < output && output - answer > own + header
}

/// Room kept under an agent's inline limit for what its answer adds around
/// the text (Codex's exit line, Gemini's `Output: `).
const ANSWER_ROOM: usize = 256;

/// The answer for a line that only runs `lens show H [--lines A-B] [--stream
/// S]` and printed more than the agent shows uncut: a page of H's lines from
/// the store that fits, ending with a marker naming H and the lines left; never
/// a new handle. `None` (the agent's own result stands) for any other line
/// that runs Lens, output the agent shows whole, a failed `lens show`, and
/// anything Lens cannot page.
fn own_page(c: &Captured) -> Option<Filtered> {
    let Inline { bytes, lines } = c.inline?;
    let inline = bytes.checked_sub(ANSWER_ROOM)?;
    let words = cmdline::lens_show_only(&c.line)?;
    if c.exit.is_some_and(|e| e != 0) {
        return None;
    }
    let held = match &c.full {
        Some(p) => std::fs::metadata(p).ok()?.len(),
        None => c.output.len() as u64,
    };
    if held <= inline as u64 {
        return None;
    }
    let argv: Vec<std::ffi::OsString> = words.iter().map(Into::into).collect();
    let crate::args::Invocation::Show(s) = crate::args::parse(argv).ok()? else {
        return None;
    };
    if s.grep.is_some() || s.level != Level::Three || s.max_bytes.is_some() {
        return None;
    }
    let handle = Handle::parse(&s.handle)?;
    let stored = store::load(&paths::store(), &s.handle).ok()?;
    let (stream, other) = crate::show::pick_stream(s.stream, &stored);
    if other.is_some() {
        return None;
    }
    let range = s.lines.map_or((1, u64::MAX), |(a, b)| (a.into(), b.into()));
    let page = crate::show::page(&stored, &s.handle, stream, range, (inline, lines)).ok()?;
    if page.shown.is_none() || page.text.len() > inline {
        return None;
    }
    let mut argv = vec!["lens".to_string()];
    argv.extend(words);
    Some(Filtered {
        text: String::from_utf8(page.text).ok()?,
        handle,
        raw_bytes: held,
        argv,
        level: Level::Three,
        exit: c.exit,
    })
}

/// `lens --as '<line>' [--exit N] < output`: the view of a saved log, as the
/// command's own output would get it; the log as it is when there is no smaller
/// view. Exits 0 (or 1 when stdin cannot be read).
pub(crate) fn as_cmd(a: crate::args::AsArgs) -> i32 {
    let mut output = Vec::new();
    if let Err(e) = io::stdin().lock().read_to_end(&mut output) {
        eprintln!("lens --as: cannot read the output on stdin ({e}); give it as: lens --as '<command line>' < saved.log");
        return 1;
    }
    let c = Captured {
        line: a.line,
        output,
        full: None,
        exit: a.exit,
        cwd: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        level: a.level,
        budget: a.budget,
        partial: false,
        inline: None,
    };
    let mut diagnostics = Vec::new();
    let text: &[u8] = match filter(&c, &mut diagnostics) {
        Ok(ref v) => {
            crate::capture::print_to(lens_core::Stream::Stdout, v.text.as_bytes());
            &[]
        }
        Err(_) => &c.output,
    };
    crate::capture::print_to(lens_core::Stream::Stdout, text);
    for d in diagnostics {
        eprintln!("{d}");
    }
    0
}

/// The full-output file an agent named, when it is a regular file Lens can hold.
fn read_full(path: &std::path::Path) -> io::Result<Vec<u8>> {
    let f = File::open(path)?;
    let m = f.metadata()?;
    if !m.is_file() || m.len() > HOLD {
        return Err(io::Error::other("not a regular file Lens holds"));
    }
    let mut v = Vec::with_capacity(m.len() as usize);
    f.take(HOLD).read_to_end(&mut v)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(line: &str, output: String) -> Captured {
        Captured {
            line: line.into(),
            output: output.into_bytes(),
            full: None,
            exit: Some(1),
            cwd: None,
            level: None,
            budget: None,
            partial: false,
            inline: None,
        }
    }

    fn big() -> String {
        (1..=3000).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn what_the_agent_asked_to_read_or_what_is_small_stays_raw() {
        let mut d = Vec::new();
        assert_eq!(
            filter(&captured("cat notes.txt", big()), &mut d).unwrap_err(),
            Raw::ReadsFile
        );
        assert_eq!(
            filter(&captured("sed -n 1,3000p notes.txt", big()), &mut d).unwrap_err(),
            Raw::ReadsFile
        );
        assert_eq!(
            filter(&captured("git status", "On branch main\n".into()), &mut d).unwrap_err(),
            Raw::UnderBudget
        );
        let mut c = captured("make", String::new());
        c.output = vec![0xff; 9000];
        assert_eq!(filter(&c, &mut d).unwrap_err(), Raw::NotText);
        let mut c = captured("make", big());
        c.level = Some(Level::Three);
        assert_eq!(filter(&c, &mut d).unwrap_err(), Raw::LevelThree);
    }

    #[test]
    fn what_lens_printed_is_never_filtered_again() {
        let mut d = Vec::new();
        for line in [
            "lens show 1a2b3c4d",
            "cd app && lens show 1a2b3c4d --lines 1-3000",
            "lens show 1a2b3c4d | head -3000",
            "./out/lens --budget 12k make",
            "(lens show 1a2b3c4d)",
        ] {
            let mut c = captured(line, big());
            c.exit = Some(0);
            assert_eq!(filter(&c, &mut d).unwrap_err(), Raw::Lens, "{line}");
        }
    }

    #[test]
    fn a_view_wins_only_by_more_than_its_own_lines_cost() {
        let h = Handle::parse("1a2b3c4d").unwrap();
        let marker = "[lens: elided stdout 2-9 (8 lines: budget) handle=1a2b3c4d]\n";
        let view = format!("a\n{marker}z\n");
        let header = Header::of(&view, 10, &h).render().len() + 1;
        let cost = view.len() + header + marker.len() + header;
        // Smaller by exactly what its Lens lines cost: the output stands.
        assert!(!net_win(view.as_bytes(), cost, 10, &h));
        assert!(net_win(view.as_bytes(), cost + 1, 10, &h));
        // A forged marker is the output's line, not the view's cost.
        let forged = format!("{view}[lens: elided stdout 1-5 (5 lines: budget) handle=deadbeef]\n");
        let header = Header::of(&forged, 11, &h).render().len() + 1;
        assert!(net_win(
            forged.as_bytes(),
            forged.len() + 2 * header + marker.len() + 1,
            11,
            &h
        ));
    }
}
