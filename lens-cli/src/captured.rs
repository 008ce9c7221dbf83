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
use lens_core::{Handle, Header, Level, Request, Stream, DEFAULT_BUDGET};

use crate::capture::{self, Capture};
use crate::cmdline;
use crate::config::load_config;
use crate::event::Piece;
use crate::run::{Finished, FinishedBody};
use crate::view::{guarded, guarded_view, options};
use crate::{now_ms, paths, store};

/// What the agent captured.
pub struct Captured {
    /// The shell command line as the agent wrote it.
    pub line: String,
    /// Stdout and stderr as the agent merged them.
    pub output: Output,
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

/// Captured output, in pieces: held in memory, or spooled from the event
/// (see [`crate::event`]) and read from there only as it is filtered.
#[derive(Clone, Debug, Default)]
pub struct Output(Vec<Piece>);

impl Output {
    /// Bytes.
    pub fn len(&self) -> u64 {
        self.0.iter().map(Piece::len).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a piece at the end.
    pub fn push(&mut self, piece: Piece) {
        self.0.push(piece);
    }

    /// The bytes, piece after piece.
    pub fn reader(&self) -> impl Read + '_ {
        struct Pieces<'a> {
            left: &'a [Piece],
            now: Option<Box<dyn Read + 'a>>,
        }
        impl Read for Pieces<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                loop {
                    if let Some(r) = &mut self.now {
                        let n = r.read(buf)?;
                        if n > 0 || buf.is_empty() {
                            return Ok(n);
                        }
                    }
                    let Some((first, rest)) = self.left.split_first() else {
                        return Ok(0);
                    };
                    self.now = Some(first.reader());
                    self.left = rest;
                }
            }
        }
        Pieces {
            left: &self.0,
            now: None,
        }
    }

    /// All of it in memory.
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut b = Vec::new();
        self.reader().read_to_end(&mut b)?;
        Ok(b)
    }
}

impl From<Piece> for Output {
    fn from(p: Piece) -> Output {
        Output(vec![p])
    }
}

impl From<Vec<u8>> for Output {
    fn from(b: Vec<u8>) -> Output {
        Output(vec![Piece::Held(b)])
    }
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

impl Captured {
    /// What an agent's event says of one shell call: its command line, the
    /// output it holds, where the agent saved the output whole, the exit code,
    /// and the working directory in the event's `cwd`; no level, budget or
    /// inline part of its own.
    pub(crate) fn of_event(
        line: String,
        output: Output,
        full: Option<PathBuf>,
        exit: Option<i32>,
        event: &serde_json::Value,
    ) -> Captured {
        Captured {
            line,
            output,
            full,
            exit,
            cwd: event.get("cwd").and_then(|c| c.as_str()).map(String::from),
            level: None,
            budget: None,
            partial: false,
            inline: None,
        }
    }
}

impl Filtered {
    /// A level-2 view `view\n` of a 9-byte output under handle `0000abcd`,
    /// with the exit code the agent said: what the agents' answer tests read.
    #[cfg(test)]
    pub(crate) fn sample(exit: Option<i32>) -> Filtered {
        Filtered {
            text: "view\n".into(),
            handle: Handle::parse("0000abcd").expect("a valid handle"),
            raw_bytes: 9,
            argv: vec![],
            level: Level::Two,
            exit,
        }
    }
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

/// Filters captured output: the view, or why the agent's own result stands.
/// Diagnostics (a broken config, a filter panic) are pushed, never printed.
///
/// A line that runs Lens is decided first: what Lens printed is never filtered
/// again. Then a view replaces the output only when the output is over the
/// budget and the view is smaller than it by more than the view's own lines
/// (its header and markers) cost; a view opens with its [`Header`].
///
/// The output (the part the agent handed over, or the full file it kept) is
/// read as `lens <cmd>` reads a child's stream ([`crate::capture`]): held in
/// memory while small, else written to the store as it is read with only a
/// sample held, so memory does not grow with the output.
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
    match &c.full {
        Some(p) => {
            let f = open_full(p).map_err(|_| Raw::NotStored)?;
            read_and_filter(c, argv, f, Quiet::Yes, None, diagnostics)
        }
        None => read_and_filter(c, argv, c.output.reader(), Quiet::Yes, None, diagnostics),
    }
}

/// Whether the raw output is printed (on stdout) when the answer is not a view.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quiet {
    /// The caller holds the raw output (an agent's own result): nothing printed.
    Yes,
    /// `lens --as`: the output exists only as it is read, so what is not shown
    /// as a view is printed raw here, as it was read.
    No,
}

/// Reads the output from `from` and filters it (see [`filter`]). With
/// [`Quiet::No`], every `Err` means the raw output was printed whole. A
/// `draft` filter file is used in place of the installed ones, untrusted.
fn read_and_filter(
    c: &Captured,
    argv: Vec<String>,
    mut from: impl Read,
    quiet: Quiet,
    draft: Option<&std::path::Path>,
    diagnostics: &mut Vec<String>,
) -> Result<Filtered, Raw> {
    let pass = |from: &mut dyn Read, why: Raw| {
        if quiet == Quiet::No {
            pass_through(from);
        }
        why
    };
    let config = load_config(diagnostics);
    let mut settings = config
        .as_ref()
        .map(|cfg| cfg.settings(&argv))
        .unwrap_or_default();
    settings.filter = match draft {
        Some(file) => crate::filters::pick_draft(file, &argv, &c.line, diagnostics),
        None => {
            // The project is where the command ran, when the agent says.
            let cwd = c
                .cwd
                .as_ref()
                .map(PathBuf::from)
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_default();
            crate::filters::pick(&argv, &cwd, diagnostics)
        }
    };
    let level = c.level.or(settings.level).unwrap_or(Level::Two);
    if level == Level::Three {
        return Err(pass(&mut from, Raw::LevelThree));
    }
    let budget = c.budget.or(settings.budget).unwrap_or(DEFAULT_BUDGET);
    let max_run_bytes = config
        .as_ref()
        .map(|cfg| cfg.store.clone())
        .unwrap_or_default()
        .max_run_bytes;
    let started = SystemTime::now();
    // Seeded as `lens <cmd>` seeds a run, with the line in place of the argv.
    let line = std::slice::from_ref(&c.line);
    let seed = crate::run::run_seed(line, started);
    let cwd = c.cwd.clone().unwrap_or_default();
    // One stream: agents hand stdout and stderr over merged.
    let shared = capture::Shared::new(
        capture::Limits::DEFAULT,
        paths::store(),
        seed.clone(),
        max_run_bytes,
        1,
    );
    shared.spill().note = serde_json::to_vec(&store::RunningNote {
        pid: std::process::id(),
        argv: line.to_vec(),
        cwd: cwd.clone(),
        start_ms: now_ms(started),
    })
    .unwrap_or_default();
    let mut cap = match quiet {
        Quiet::Yes => Capture::quiet(Stream::Stdout),
        Quiet::No => Capture::new(Stream::Stdout),
    };
    // Small enough to stay in the core's cache between the read that fills it,
    // the sampler's passes and the write to the store: 256 KiB cost a third
    // more time than this, most of it in copying out of memory twice.
    let mut buf = vec![0u8; 64 << 10];
    let mut unread = None;
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => cap.take(&buf[..n], &shared),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                unread = Some(e);
                break;
            }
        }
        // Quiet, what will not be stored whole is the agent's to show.
        if quiet == Quiet::Yes && cap.gave_up() {
            break;
        }
    }
    let unstored = cap.unstored();
    let out = Finished::from(cap);
    let mut spill = shared.spill();
    let (run_dir, failed) = (spill.run.take(), spill.failed.take());
    drop(spill);
    // Not shown as a view: printed raw (unless quiet or printed already as it
    // arrived), and the run directory, if one was made, goes.
    let raw = |why: Raw, run_dir: Option<store::RunDir>| {
        if quiet == Quiet::No {
            out.print_raw();
        }
        if let Some(d) = run_dir {
            d.remove();
        }
        why
    };
    if let Some(e) = unread {
        diagnostics.push(format!(
            "lens: cannot read the output ({e}); what was read is shown unfiltered"
        ));
        return Err(raw(Raw::NotStored, run_dir));
    }
    if let Some(why) = failed {
        diagnostics.push(format!("lens: {why}; the output is shown unfiltered"));
        return Err(raw(Raw::NotStored, run_dir));
    }
    if let Some(u) = unstored {
        if quiet == Quiet::No {
            diagnostics.push(format!(
                "lens: the output passed [store] max_run_bytes at line {} (byte {}); it is shown unfiltered",
                u.from_line, u.from_byte
            ));
        }
        return Err(raw(Raw::NotStored, run_dir));
    }
    let lines = out.lines(&[]);
    let exit = c.exit.unwrap_or(0);
    let meta = store::Meta {
        argv: argv.clone(),
        cwd,
        exit,
        signal: None,
        cut_short: None,
        start_ms: now_ms(started),
        duration_ms: 0,
        stdout_bytes: out.bytes,
        stderr_bytes: 0,
        stdout_lines: lines,
        stderr_lines: 0,
        ..store::Meta::default()
    };
    let view = |text: &str, handle: Handle| Filtered {
        text: format!("{}\n{text}", Header::of(text, lines, &handle).render()),
        handle,
        raw_bytes: out.bytes,
        argv: argv.clone(),
        level,
        exit: c.exit,
    };
    let opts = |h| options(level, budget, Some(h), &settings);
    let Some(run_dir) = run_dir else {
        // Held whole: the full pipeline, and the store only for a view.
        let FinishedBody::Memory(output, _) = &out.body else {
            return Err(raw(Raw::NotStored, None));
        };
        if std::str::from_utf8(output).is_err() {
            return Err(raw(Raw::NotText, None));
        }
        if output.len() <= budget {
            return Err(raw(Raw::UnderBudget, None));
        }
        let req = Request {
            argv: &argv,
            stdout: output,
            stderr: b"",
            exit,
        };
        let content: [&[u8]; 2] = [&seed, output];
        let provisional = Handle::derive(&content, 0);
        let first = guarded_view(&req, &opts(provisional), diagnostics);
        if !first.elided || !net_win(&first.stdout, output.len(), lines, &provisional) {
            return Err(raw(Raw::Unchanged, None));
        }
        // The full output reaches the store before the view is answered.
        let handle = store::save(&paths::store(), &content, &meta, output, b"").map_err(|e| {
            diagnostics.push(format!(
                "lens: could not store the output in {} ({e}); the agent keeps its own",
                paths::store().display()
            ));
            raw(Raw::NotStored, None)
        })?;
        let shown = if handle == provisional {
            first
        } else {
            guarded_view(&req, &opts(handle), diagnostics)
        };
        if !shown.elided || !net_win(&shown.stdout, output.len(), lines, &handle) {
            return Err(raw(Raw::Unchanged, None));
        }
        return Ok(view(&String::from_utf8_lossy(&shown.stdout), handle));
    };
    // Written to the store as it was read: the pipeline runs on the sample.
    let FinishedBody::Stored { sample, .. } = &out.body else {
        return Err(raw(Raw::NotStored, Some(run_dir)));
    };
    if !sample.readable {
        return Err(raw(Raw::NotText, Some(run_dir)));
    }
    if out.bytes <= budget as u64 {
        return Err(raw(Raw::UnderBudget, Some(run_dir)));
    }
    let handle = run_dir.handle;
    let empty = lens_core::Input {
        part: None,
        raw_len: 0,
    };
    let (shown, _, elided) = guarded(diagnostics, (None, None, false), || {
        lens_core::view_parts(&argv, out.input(), empty, exit, &opts(handle))
    });
    let shown = match shown {
        Some(v) if elided && net_win(v.as_bytes(), out.bytes as usize, lines, &handle) => v,
        _ => return Err(raw(Raw::Unchanged, Some(run_dir))),
    };
    let stored = out
        .finish_store(&run_dir)
        .and_then(|()| run_dir.write_meta(&meta));
    if let Err(e) = stored {
        diagnostics.push(format!(
            "lens: could not store the output in {} ({e}); the agent keeps its own",
            paths::store().display()
        ));
        return Err(raw(Raw::NotStored, Some(run_dir)));
    }
    Ok(view(&shown, handle))
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
        None => c.output.len(),
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
    let c = Captured {
        line: a.line,
        output: Output::default(),
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
    let stdin = io::stdin().lock();
    // Decided before the output is read: it is printed as it is read.
    let decided = if cmdline::runs_lens(&c.line) {
        Err(Raw::Lens)
    } else {
        classify(&c.line)
    };
    match decided {
        Err(_) => pass_through(stdin),
        Ok(argv) => {
            // On `Err` the output was printed raw as it was read.
            let draft = a.filters.as_deref().map(std::path::Path::new);
            if let Ok(v) = read_and_filter(&c, argv, stdin, Quiet::No, draft, &mut diagnostics) {
                crate::capture::print_to(Stream::Stdout, v.text.as_bytes());
            }
        }
    }
    for d in diagnostics {
        crate::capture::say(&d);
    }
    crate::capture::exit_after_writes(0)
}

/// Prints the output as it is, read whole first when it is small (as a
/// caller that writes all of it before it reads expects), else as it comes.
fn pass_through(from: impl Read) {
    let mut from = from;
    let mut head = Vec::new();
    let limit = capture::Limits::DEFAULT.bytes;
    if Read::by_ref(&mut from)
        .take(limit)
        .read_to_end(&mut head)
        .is_err()
    {
        return;
    }
    capture::print_to(Stream::Stdout, &head);
    if head.len() as u64 == limit {
        capture::copy_to(from, Stream::Stdout);
    }
}

/// The full-output file an agent named, when it is a regular file.
fn open_full(path: &std::path::Path) -> io::Result<File> {
    let f = File::open(path)?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(line: &str, output: String) -> Captured {
        Captured {
            line: line.into(),
            output: output.into_bytes().into(),
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
        c.output = vec![0xff; 9000].into();
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
