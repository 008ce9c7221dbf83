//! The document model: both captured streams as lines, each annotated by the stages.
//!
//! Stages never rewrite or renumber a line. They set its class, its block and its
//! fate; `render` is the only place that turns a `Doc` back into bytes.

use std::borrow::Cow;

use crate::digest::body::Digest;
use crate::stages::ansi;

pub use crate::stream::Stream;

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
    /// Stack frames in the JDK or a test runner, between frames that stay.
    Frames,
    /// Stands in a grouped summary line.
    Grouped,
    /// Dropped by a configured pattern.
    Pattern,
    /// Elided by a user's filter (its drop patterns, head or tail).
    Filter,
    /// Did not fit the budget.
    Budget,
    /// Part of an output too large to hold whole: the stream was sampled (head,
    /// tail, and the lines the classifier flags) and this region was not held.
    Bulk,
    /// Not part of the level asked for.
    Level,
    /// Redrawn in place: the digest after the marker is its last drawing.
    Redrawn,
    /// One of units that repeat but for numbers counting up: the digest shows
    /// each line of the unit once, with the ranges (see `stages::fold`).
    Folded,
}

impl Reason {
    /// The word a marker uses for this reason.
    pub fn word(self) -> &'static str {
        match self {
            Reason::Progress => "progress",
            Reason::Repeat => "repeat",
            Reason::Cause => "cause",
            Reason::Excerpt => "excerpt",
            Reason::Frames => "frames",
            Reason::Grouped => "grouped",
            Reason::Pattern => "pattern",
            Reason::Filter => "filter",
            Reason::Budget => "budget",
            Reason::Bulk => "bulk",
            Reason::Level => "level",
            Reason::Redrawn => "redrawn",
            Reason::Folded => "folded",
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
    /// The child redrew the line in place (a carriage return before its end).
    pub redrawn: bool,
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
    /// Raw lines per stream (stdout, stderr). Equal to the lines held unless the
    /// stream was sampled, when the held lines carry their raw numbers and the
    /// numbers between them are gaps the view announces.
    pub totals: [u32; 2],
}

/// One stream as the filter reads it: its text, and when the text holds only some
/// of the raw lines (a sample of an output too large to hold), the raw number of
/// each line it holds and how many lines the raw stream had.
#[derive(Clone, Copy, Debug)]
pub struct Part<'a> {
    /// The lines held, each ending in a newline except perhaps the last.
    pub text: &'a str,
    /// The raw line number of each held line, ascending; `None` when the text is
    /// the whole stream.
    pub numbers: Option<&'a [u32]>,
    /// Raw lines in the stream (used when `numbers` is set).
    pub total: u32,
}

impl<'a> Part<'a> {
    /// The whole stream.
    pub fn whole(text: &'a str) -> Part<'a> {
        Part {
            text,
            numbers: None,
            total: 0,
        }
    }
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
        Doc::from_parts(argv, Part::whole(stdout), Part::whole(stderr), exit)
    }

    /// A doc of two streams, either of which may be a sample. A sampled stream's
    /// lines carry their raw numbers; `numbers` must hold one ascending number per
    /// line of `text`, each at most `total` (the caller's promise, checked in debug).
    pub fn from_parts(
        argv: &'a [String],
        stdout: Part<'a>,
        stderr: Part<'a>,
        exit: i32,
    ) -> Doc<'a> {
        let mut lines =
            Vec::with_capacity(estimate_lines(stdout.text) + estimate_lines(stderr.text));
        let mut totals = [0u32; 2];
        let mut stderr_start = 0;
        for (k, (stream, part)) in [(Stream::Stdout, stdout), (Stream::Stderr, stderr)]
            .into_iter()
            .enumerate()
        {
            let from = lines.len();
            if stream == Stream::Stderr {
                stderr_start = from;
            }
            push_lines(&mut lines, stream, part.text);
            totals[k] = (lines.len() - from) as u32;
            if let Some(numbers) = part.numbers {
                debug_assert_eq!(numbers.len(), lines.len() - from);
                for (l, &no) in lines[from..].iter_mut().zip(numbers) {
                    l.no = no;
                }
                totals[k] = part.total.max(numbers.last().copied().unwrap_or(0));
            }
        }
        Doc {
            lines,
            blocks: Vec::new(),
            stderr_start,
            exit,
            argv,
            findings: Vec::new(),
            digests: Vec::new(),
            totals,
        }
    }

    /// Raw lines in one stream, held or not.
    pub fn total(&self, stream: Stream) -> u32 {
        match stream {
            Stream::Stdout => self.totals[0],
            Stream::Stderr => self.totals[1],
        }
    }

    /// True when the line at `i` does not follow the one before it in the raw
    /// stream: a sampled stream's gap lies between them.
    pub fn after_gap(&self, i: usize) -> bool {
        let l = &self.lines[i];
        match i.checked_sub(1).map(|p| &self.lines[p]) {
            Some(p) if p.stream == l.stream => l.no > p.no + 1,
            _ => l.no > 1,
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

/// What a byte tells the line splitter: it ends a line, it starts an escape or a
/// carriage return (the line needs `ansi::visible`), it is a `:`, it is ASCII ink
/// (not whitespace), or it is part of a non-ASCII character (which may be
/// whitespace: such lines are checked in full).
const NEWLINE: u8 = 1;
const REDRAW: u8 = 2;
const COLON: u8 = 4;
const INK: u8 = 8;
const WIDE: u8 = 16;

static BYTE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match i as u8 {
            b'\n' => NEWLINE,
            0x1b | b'\r' => REDRAW,
            b':' => COLON | INK,
            b'\t' | 0x0b | 0x0c | b' ' => 0,
            0x80..=0xff => WIDE,
            _ => INK,
        };
        i += 1;
    }
    t
};

/// Splits `text` into lines in one pass over its bytes, noting per line what
/// `Line` needs (a colon, whether it is blank, whether escapes or redraws must be
/// rendered first). Four searches per line cost more than the pass on large outputs.
fn push_lines<'a>(lines: &mut Vec<Line<'a>>, stream: Stream, text: &'a str) {
    if text.is_empty() {
        return;
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let bytes = body.as_bytes();
    let mut start = 0;
    let mut seen = 0u8;
    let mut no = 1u32;
    let mut push = |start: usize, end: usize, seen: u8, no: u32| {
        // Cut at a '\n' byte, which never falls inside a UTF-8 character.
        let raw = &body[start..end];
        let redraw = seen & REDRAW != 0;
        // A line redrawn over an error or a warning is told apart later, by the
        // classifier (`stages::redraw::over_trouble`): the doc knows no classes.
        let (text, colon, blank) = if redraw {
            let shown = ansi::visible(raw);
            let colon = shown.contains(':');
            let blank = shown.trim().is_empty();
            (shown, colon, blank)
        } else {
            let blank = seen & INK == 0 && (seen & WIDE == 0 || raw.trim().is_empty());
            (Cow::Borrowed(raw), seen & COLON != 0, blank)
        };
        lines.push(Line {
            stream,
            no,
            raw,
            text,
            block: 0,
            class: if blank { Class::Blank } else { Class::Plain },
            fate: Fate::Keep,
            score: 0,
            colon,
            redrawn: redraw && ansi::redrawn(raw),
        });
    };
    let mut i = 0;
    while i < bytes.len() {
        // Eight printable ASCII bytes at once (most of most outputs): no line ends
        // there, and only a colon or a non-space can change what is noted.
        if let Some(chunk) = bytes.get(i..i + 8) {
            let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
            if printable(w) {
                if any_zero(w ^ (ONES * u64::from(b':'))) {
                    seen |= COLON;
                }
                if w != ONES * u64::from(b' ') {
                    seen |= INK;
                }
                i += 8;
                continue;
            }
        }
        // Anything else, a byte at a time for these eight (or the last few).
        for j in i..(i + 8).min(bytes.len()) {
            let kind = BYTE[usize::from(bytes[j])];
            if kind & NEWLINE == 0 {
                seen |= kind;
                continue;
            }
            push(start, j, seen, no);
            no += 1;
            start = j + 1;
            seen = 0;
        }
        i += 8;
    }
    push(start, bytes.len(), seen, no);
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// True when a byte of `w` is zero.
fn any_zero(w: u64) -> bool {
    w.wrapping_sub(ONES) & !w & HIGH != 0
}

/// True when every byte of `w` is printable ASCII (0x20 to 0x7f): none below 0x20,
/// none with the high bit set.
fn printable(w: u64) -> bool {
    w.wrapping_sub(ONES * 0x20) & !w & HIGH == 0 && w & HIGH == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The splitter as first written: split, then search each line.
    fn reference(text: &str) -> Vec<(String, String, bool, (bool, bool))> {
        if text.is_empty() {
            return Vec::new();
        }
        let body = text.strip_suffix('\n').unwrap_or(text);
        body.split('\n')
            .map(|raw| {
                let shown = ansi::visible(raw);
                let (colon, blank) = (shown.contains(':'), shown.trim().is_empty());
                let blank_or_redrawn = (blank, ansi::redrawn(raw));
                (raw.to_string(), shown.into_owned(), colon, blank_or_redrawn)
            })
            .collect()
    }

    fn split(text: &str) -> Vec<(String, String, bool, (bool, bool))> {
        let mut lines = Vec::new();
        push_lines(&mut lines, Stream::Stdout, text);
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(l.no as usize, i + 1);
        }
        lines
            .iter()
            .map(|l| {
                let blank = l.class == Class::Blank;
                (
                    l.raw.to_string(),
                    l.text.to_string(),
                    l.colon,
                    (blank, l.redrawn),
                )
            })
            .collect()
    }

    #[test]
    fn one_pass_split_matches_the_searches() {
        for text in [
            "",
            "\n",
            "a",
            "a:b\n\n c \n",
            "crlf: x\r\nnext\r\n",
            "\u{1b}[31merror\u{1b}[0m: x\n",
            "\u{1b}[1m\u{1b}[0m\n",
            "50%\r75%\r100% done\n",
            "\u{a0}\u{3000}\n\u{b}\u{c}\t \n",
            "é: ü\n\u{a0}x\n",
            "no newline at end: ok",
            "                \n                 x\n",
            "abcdefgh:ijklmnopqrstuvwx\n",
            "\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}\n",
            "0123456\n89abcdef\n",
        ] {
            assert_eq!(split(text), reference(text), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn one_pass_split_matches_on_any_text(chars in proptest::collection::vec(
            // Mostly printable, so runs of eight take the word-at-a-time path.
            prop::sample::select(vec![
                'a', 'b', ':', ' ', ' ', 'x', '~', '\u{7f}', 'a', 'z', 'q', '.', '\t', '\r',
                '\n', '\n', '\u{1b}', '[', '0', 'm', ']', '\u{7}', '\u{a0}', '\u{b}', 'é',
                '\u{3000}',
            ]),
            0..160,
        )) {
            let text: String = chars.into_iter().collect();
            prop_assert_eq!(split(&text), reference(&text));
        }
    }

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
