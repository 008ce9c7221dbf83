//! The document model: both captured streams as lines, each annotated by the stages.
//!
//! Stages never rewrite or renumber a line. They set its class, its block and its
//! fate; `render` is the only place that turns a `Doc` back into bytes.

use std::borrow::Cow;

use crate::digest::Digest;
use crate::stages::ansi;

/// Which of the child's streams a line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// The child's standard output.
    Stdout,
    /// The child's standard error.
    Stderr,
}

impl Stream {
    /// The name used in markers and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    /// Parses `stdout` or `stderr`.
    pub fn parse(s: &str) -> Option<Stream> {
        match s {
            "stdout" => Some(Stream::Stdout),
            "stderr" => Some(Stream::Stderr),
            _ => None,
        }
    }
}

/// What a line is, as far as the stages could tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Nothing known.
    Plain,
    /// Empty or whitespace only.
    Blank,
    /// A progress report: redraws, spinners, `Compiling x`, `Downloading y`.
    Progress,
    /// A diagnostic or failure: the reason a command fails.
    Error,
    /// A warning.
    Warning,
    /// A line quoting source code under a diagnostic.
    Source,
    /// A line that sums the run up: `test result:`, `3 passed`, `Finished`.
    Summary,
}

/// Why a line is not in the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// A progress report, collapsed to a count.
    Progress,
    /// A repeat of a line or block already shown.
    Repeat,
    /// Another report of a cause already shown.
    Cause,
    /// Source quoted by a finding, which the file already holds.
    Excerpt,
    /// Stands in a grouped summary line.
    Grouped,
    /// Dropped by a configured pattern.
    Pattern,
    /// Did not fit the budget.
    Budget,
    /// Not part of the level asked for.
    Level,
}

impl Reason {
    /// The word a marker uses for this reason.
    pub fn word(self) -> &'static str {
        match self {
            Reason::Progress => "progress",
            Reason::Repeat => "repeat",
            Reason::Cause => "cause",
            Reason::Excerpt => "excerpt",
            Reason::Grouped => "grouped",
            Reason::Pattern => "pattern",
            Reason::Budget => "budget",
            Reason::Level => "level",
        }
    }
}

/// Whether a line is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Shown unless a later stage or the budget says otherwise.
    Keep,
    /// Shown whatever the budget says: a failure or its context.
    Force,
    /// Not shown, for a reason the marker reports.
    Drop(Reason),
}

/// One line of captured output.
#[derive(Clone, Debug)]
pub struct Line<'a> {
    /// Stream the line came from.
    pub stream: Stream,
    /// 1-based line number within its stream, as `lens show --lines` counts.
    pub no: u32,
    /// The bytes the child wrote, without the newline.
    pub raw: &'a str,
    /// What the view shows: ANSI stripped, carriage-return redraws resolved.
    pub text: Cow<'a, str>,
    /// Index into `Doc::blocks`.
    pub block: u32,
    /// What the line is.
    pub class: Class,
    /// Whether it is shown.
    pub fate: Fate,
    /// Ranking score; higher is kept first when the budget binds.
    pub score: i32,
    /// The shown text holds a `:`. Nearly every diagnostic format needs one, so
    /// the finders skip the lines without it before any substring test.
    pub colon: bool,
}

impl Line<'_> {
    /// True when the line is shown (kept or forced).
    pub fn shown(&self) -> bool {
        !matches!(self.fate, Fate::Drop(_))
    }

    /// Drops the line unless it is forced.
    pub fn drop_for(&mut self, reason: Reason) {
        if self.fate == Fate::Keep {
            self.fate = Fate::Drop(reason);
        }
    }
}

/// A run of lines that belong together: a diagnostic with its indented continuation,
/// a paragraph. Built in one pass; `has_continuation` is tracked while building.
#[derive(Clone, Debug)]
pub struct Block {
    /// Index of the first line in `Doc::lines`.
    pub start: usize,
    /// One past the last line.
    pub end: usize,
    /// True when a line after the head is indented (a continuation).
    pub has_continuation: bool,
}

impl Block {
    /// Number of lines in the block.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True for a block without lines (never built, kept for API symmetry).
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Both streams of one run, as annotated lines.
#[derive(Clone, Debug)]
pub struct Doc<'a> {
    /// stdout's lines, then stderr's.
    pub lines: Vec<Line<'a>>,
    /// Blocks, in line order; never crossing streams.
    pub blocks: Vec<Block>,
    /// Index of stderr's first line in `lines`.
    pub stderr_start: usize,
    /// The child's exit code (128 + signum for a signal death).
    pub exit: i32,
    /// The command line as typed.
    pub argv: &'a [String],
    /// Findings (diagnostics) the classify shapes recognised, in line order.
    pub findings: Vec<Finding>,
    /// Digests standing in for grouped regions, in line order.
    pub digests: Vec<Digest>,
}

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Fails the command.
    Error,
    /// Does not.
    Warning,
}

/// One diagnostic as a tool reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// First line index of the report (its message line, or a file header).
    pub start: usize,
    /// One past its last line.
    pub end: usize,
    /// The line index of its message.
    pub head: usize,
    /// Error or warning.
    pub severity: Severity,
    /// Rule or code as printed (`E0308`, `clippy::needless_return`, `F401`), or "".
    pub rule: String,
    /// The message as printed, without rule and location.
    pub message: String,
    /// Where, as printed: `path:line[:col]`.
    pub location: String,
}

impl<'a> Doc<'a> {
    /// Splits both streams into lines. Both must be valid UTF-8; the caller passes
    /// anything else through unfiltered.
    pub fn new(argv: &'a [String], stdout: &'a str, stderr: &'a str, exit: i32) -> Doc<'a> {
        let mut lines = Vec::with_capacity(estimate_lines(stdout) + estimate_lines(stderr));
        push_lines(&mut lines, Stream::Stdout, stdout);
        let stderr_start = lines.len();
        push_lines(&mut lines, Stream::Stderr, stderr);
        Doc {
            lines,
            blocks: Vec::new(),
            stderr_start,
            exit,
            argv,
            findings: Vec::new(),
            digests: Vec::new(),
        }
    }

    /// True when the command failed.
    pub fn failed(&self) -> bool {
        self.exit != 0
    }

    /// The index range of one stream's lines.
    pub fn range(&self, stream: Stream) -> std::ops::Range<usize> {
        match stream {
            Stream::Stdout => 0..self.stderr_start,
            Stream::Stderr => self.stderr_start..self.lines.len(),
        }
    }

    /// The program's name, without its directory.
    pub fn program(&self) -> &str {
        self.argv
            .first()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .unwrap_or("")
    }
}

fn estimate_lines(s: &str) -> usize {
    // A cheap guess that avoids most reallocations without counting every byte.
    s.len() / 40 + 1
}

fn push_lines<'a>(lines: &mut Vec<Line<'a>>, stream: Stream, text: &'a str) {
    if text.is_empty() {
        return;
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    for (i, raw) in body.split('\n').enumerate() {
        let shown = ansi::visible(raw);
        let colon = shown.contains(':');
        let class = if shown.trim().is_empty() {
            Class::Blank
        } else {
            Class::Plain
        };
        lines.push(Line {
            stream,
            no: i as u32 + 1,
            raw,
            text: shown,
            block: 0,
            class,
            fate: Fate::Keep,
            score: 0,
            colon,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_per_stream_from_one() {
        let argv = vec!["x".to_string()];
        let doc = Doc::new(&argv, "a\nb\n", "c", 1);
        let nos: Vec<_> = doc.lines.iter().map(|l| (l.stream, l.no)).collect();
        assert_eq!(
            nos,
            vec![
                (Stream::Stdout, 1),
                (Stream::Stdout, 2),
                (Stream::Stderr, 1)
            ]
        );
        assert_eq!(doc.range(Stream::Stderr), 2..3);
        assert!(doc.failed());
    }

    #[test]
    fn keeps_empty_lines_inside_a_stream() {
        let argv = vec![];
        let doc = Doc::new(&argv, "a\n\nb\n", "", 0);
        assert_eq!(doc.lines.len(), 3);
        assert_eq!(doc.lines[1].class, Class::Blank);
    }

    #[test]
    fn program_drops_the_directory() {
        let argv = vec!["/usr/bin/git".to_string(), "log".to_string()];
        let doc = Doc::new(&argv, "", "", 0);
        assert_eq!(doc.program(), "git");
    }

    #[test]
    fn forced_lines_are_not_dropped() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "a\n", "", 0);
        doc.lines[0].fate = Fate::Force;
        doc.lines[0].drop_for(Reason::Budget);
        assert!(doc.lines[0].shown());
    }
}
