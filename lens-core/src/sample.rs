//! Sampling: what a streaming pass keeps of an output too large to hold whole.
//!
//! The full pipeline holds every line of a run (the bytes and an annotation per
//! line), which is fine for the outputs commands usually print and is not for a
//! gigabyte of `yes`. Past the caller's in-memory limit, a stream is fed to a
//! [`Sampler`] as it arrives instead, and the sampler keeps, within fixed caps:
//! the first lines, the last lines, and every line the classifier flags (an
//! error, a warning, a summary) with the continuation lines after an error or a
//! warning (its location and help). It counts the rest. The result, a [`Sample`],
//! is a [`Part`] the ordinary pipeline reads: the held lines carry their raw line
//! numbers, and every run of lines not held becomes a marker (`bulk`), so the view
//! still names the raw range of everything it leaves out.
//!
//! The sampler runs on every byte of the output, so it looks at a line only when a
//! literal search finds one of the words the classifier needs (the same words the
//! classifier's own scan looks for); everything else is counted, not read.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::doc::{Class, Part};
use crate::stages::{ansi, blocks, classify};

/// What a sampler keeps at most, per stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Lines kept from the start.
    pub head_lines: usize,
    /// Bytes kept from the start.
    pub head_bytes: usize,
    /// Lines kept from the end.
    pub tail_lines: usize,
    /// Bytes kept from the end.
    pub tail_bytes: usize,
    /// Bytes of error lines (with their continuations) kept.
    pub error_bytes: usize,
    /// Bytes of warning lines (with their continuations) kept.
    pub warning_bytes: usize,
    /// Bytes of summary lines kept.
    pub summary_bytes: usize,
    /// Flagged lines kept, of every class together.
    pub flagged_lines: usize,
    /// A line longer than this is never held (it is counted, and elided whole).
    pub line_bytes: usize,
    /// Continuation lines kept after a flagged error or warning.
    pub context: usize,
}

impl Caps {
    /// The caps Lens uses: about 4 MiB and 40,000 lines per stream at most.
    pub const DEFAULT: Caps = Caps {
        head_lines: 2_000,
        head_bytes: 256 << 10,
        tail_lines: 2_000,
        tail_bytes: 256 << 10,
        error_bytes: 2 << 20,
        warning_bytes: 1 << 20,
        summary_bytes: 256 << 10,
        flagged_lines: 36_000,
        line_bytes: 64 << 10,
        context: 12,
    };
}

/// A line at least one of whose words the classifier needs to call it an error,
/// a warning or a summary (see `classify::generic`), a line starting with a
/// letter that can open one on its own, and a line with an escape or a carriage
/// return (its visible text can differ from its bytes). A line the classifier
/// would flag always holds one of these; the property test below checks it.
///
/// Three searches, not one: the regex crate's fastest literal search takes a few
/// dozen literals of two bytes or more, and one pattern of all forty ran at a
/// tenth of the speed of each of these.
static CANDIDATES: LazyLock<[Regex; 3]> = LazyLock::new(|| {
    let errors = [
        "rror",
        "RROR",
        "atal",
        "ATAL",
        "Traceback",
        "xception",
        "nterrupt",
        "Exit",
        "FAIL",
        "panicked",
        "npm ",
        "make",
        "Segmentation",
        "Aborted",
        "Killed",
        "✗",
        "✖",
        "×",
        "✘",
    ];
    let others = [
        "test result",
        "Finished",
        "Running",
        "Test",
        "Snapshots",
        "PASS",
        "Found",
        "problem",
        "compile",
        "Ran ",
        "OK",
        "passed",
        "failed",
        "arn",
        "ARN",
        "\nE",
        "\n=",
        "\n#",
        "\nok",
    ];
    let alternation = |words: &[&str]| {
        let escaped: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
        Regex::new(&escaped.join("|")).expect("candidate pattern compiles")
    };
    [
        alternation(&errors),
        alternation(&others),
        Regex::new("[\x1b\r]").expect("escape pattern compiles"),
    ]
});

/// The next candidate in one region, from three searches whose next match is kept
/// until the scan passes it.
struct Candidates<'r> {
    bytes: &'r [u8],
    /// Each search's next match (`usize::MAX`: none left), valid while at or
    /// after where the scan is; `None` before the first search.
    next: [Option<usize>; 3],
}

impl<'r> Candidates<'r> {
    fn new(bytes: &'r [u8]) -> Candidates<'r> {
        Candidates {
            bytes,
            next: [None; 3],
        }
    }

    /// Where the first candidate at or after `at` is, if any (for "\nE" and its
    /// kind, the newline before the line).
    fn at_or_after(&mut self, at: usize) -> Option<usize> {
        for (next, re) in self.next.iter_mut().zip(CANDIDATES.iter()) {
            if next.is_none_or(|n| n < at) {
                let found = re.find_at(self.bytes, at).map_or(usize::MAX, |m| m.start());
                *next = Some(found);
            }
        }
        let first = self.next.iter().flatten().copied().min()?;
        (first != usize::MAX).then_some(first)
    }
}

fn opens_candidate(line: &[u8]) -> bool {
    matches!(line.first(), Some(b'E' | b'=' | b'#')) || line.starts_with(b"ok")
}

/// What the tail holds in place of a line too long to hold.
const LONG_LINE: &[u8] = b"\xff\n";

/// Which cap a kept line counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Head,
    Error,
    Warning,
    Summary,
}

/// Feeds on a stream's bytes as they arrive and keeps a bounded sample of them.
#[derive(Debug)]
pub struct Sampler {
    caps: Caps,
    /// Complete lines seen.
    lines: u64,
    /// Bytes seen.
    bytes: u64,
    /// False once a complete line was not UTF-8: the stream then passes through.
    utf8: bool,
    /// The line still being written (no newline yet), up to `caps.line_bytes`.
    carry: Vec<u8>,
    /// The line being written is longer than `caps.line_bytes`.
    carry_long: bool,
    /// Held lines in order, each ending in a newline.
    kept: Vec<u8>,
    /// Raw number (1-based) of each held line.
    numbers: Vec<u64>,
    /// Bytes held per cap: head, errors, warnings, summaries.
    spent: [usize; 4],
    /// Flagged lines held.
    flagged: usize,
    /// Flagged lines not held because a cap was reached, per class: errors,
    /// warnings, summaries.
    missed: [u64; 3],
    head_done: bool,
    /// Continuation lines still to keep after a flagged line, and its cap.
    context: Option<(usize, Kind)>,
    /// The last bytes of complete lines seen, for the tail.
    tail: Vec<u8>,
    /// The tail buffer starts at the start of a line (not cut mid-line).
    tail_clean: bool,
    /// The end of a long line's last piece when it cut a character in two.
    long_utf8: Vec<u8>,
}

/// What a sampler kept of one stream.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// The held lines, each ending in a newline.
    pub text: String,
    /// The raw number of each held line.
    pub numbers: Vec<u32>,
    /// Lines in the raw stream.
    pub lines: u64,
    /// Bytes in the raw stream.
    pub bytes: u64,
    /// The stream was UTF-8 and its line numbers fit the markers: a view can be
    /// built from the sample. Otherwise the stream must be shown raw.
    pub readable: bool,
    /// Flagged lines (errors, warnings, summaries) the caps left out.
    pub missed: [u64; 3],
}

impl Sample {
    /// The sample as the pipeline reads it; `None` when the stream must be shown
    /// raw (not UTF-8, or more lines than a marker can number).
    pub fn part(&self) -> Option<Part<'_>> {
        self.readable.then(|| Part {
            text: &self.text,
            numbers: Some(&self.numbers),
            total: self.lines as u32,
        })
    }
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new(Caps::DEFAULT)
    }
}

impl Sampler {
    /// A sampler with the given caps.
    pub fn new(caps: Caps) -> Sampler {
        Sampler {
            caps,
            lines: 0,
            bytes: 0,
            utf8: true,
            carry: Vec::new(),
            carry_long: false,
            kept: Vec::new(),
            numbers: Vec::new(),
            spent: [0; 4],
            flagged: 0,
            missed: [0; 3],
            head_done: false,
            context: None,
            tail: Vec::new(),
            tail_clean: true,
            long_utf8: Vec::new(),
        }
    }

    /// Bytes seen so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Newlines seen so far (the lines completed), so a caller that needs the
    /// count need not count the bytes again.
    pub fn newlines(&self) -> u64 {
        self.lines
    }

    /// Takes the next bytes of the stream, cut anywhere.
    pub fn push(&mut self, mut chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        if !self.carry.is_empty() || self.carry_long {
            let Some(nl) = find_newline(chunk) else {
                self.extend_carry(chunk);
                return;
            };
            self.extend_carry(&chunk[..=nl]);
            let line = std::mem::take(&mut self.carry);
            if self.carry_long {
                self.carry_long = false;
                if !std::mem::take(&mut self.long_utf8).is_empty() {
                    // A character the line never finished.
                    self.utf8 = false;
                }
                self.skip_line();
            } else {
                self.region(&line);
            }
            self.carry = line;
            self.carry.clear();
            chunk = &chunk[nl + 1..];
        }
        match chunk.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                self.region(&chunk[..=last]);
                self.extend_carry(&chunk[last + 1..]);
            }
            None => self.extend_carry(chunk),
        }
    }

    fn extend_carry(&mut self, bytes: &[u8]) {
        if self.carry_long {
            self.check_long(bytes);
            return;
        }
        if self.carry.len() + bytes.len() > self.caps.line_bytes + 1 {
            self.carry_long = true;
            let held = std::mem::take(&mut self.carry);
            self.check_long(&held);
            self.check_long(bytes);
            return;
        }
        self.carry.extend_from_slice(bytes);
    }

    /// Checks a piece of a line too long to hold for UTF-8 as it passes: a
    /// character cut between two pieces waits in `long_utf8` for the rest.
    fn check_long(&mut self, bytes: &[u8]) {
        if !self.utf8 {
            return;
        }
        let joined;
        let piece = if self.long_utf8.is_empty() {
            bytes
        } else {
            let mut j = std::mem::take(&mut self.long_utf8);
            j.extend_from_slice(bytes);
            joined = j;
            &joined[..]
        };
        if let Err(e) = std::str::from_utf8(piece) {
            match e.error_len() {
                // Cut mid-character: the rest comes with the next piece.
                None if piece.len() - e.valid_up_to() < 4 => {
                    self.long_utf8 = piece[e.valid_up_to()..].to_vec();
                }
                _ => self.utf8 = false,
            }
        }
    }

    /// A line too long to hold: counted, and its bytes not kept for the tail.
    fn skip_line(&mut self) {
        self.lines += 1;
        self.context = None;
        // The tail counts it as one line it does not hold: a byte no UTF-8 line
        // holds stands in for it.
        self.keep_tail(LONG_LINE);
    }

    /// Complete lines (`bytes` ends in a newline).
    fn region(&mut self, bytes: &[u8]) {
        if self.utf8 && std::str::from_utf8(bytes).is_err() {
            // Not text: the stream will pass through raw, so holding lines is moot.
            self.utf8 = false;
            self.kept = Vec::new();
            self.numbers = Vec::new();
            self.tail = Vec::new();
        }
        if !self.utf8 {
            self.lines += count_newlines(bytes);
            return;
        }
        let mut at = 0;
        // The head, line by line.
        while !self.head_done && at < bytes.len() {
            let end = at + find_newline(&bytes[at..]).expect("a region ends in a newline");
            self.hold(&bytes[at..=end], Kind::Head);
            self.lines += 1;
            at = end + 1;
            if self.numbers.len() >= self.caps.head_lines || self.spent[0] >= self.caps.head_bytes {
                self.head_done = true;
            }
        }
        at = self.continue_context(bytes, at);
        // The rest: only lines a literal search points at are read.
        let mut found = Candidates::new(bytes);
        let mut counted = at;
        while at < bytes.len() {
            let start = if opens_candidate(&bytes[at..]) {
                at
            } else {
                let Some(m) = found.at_or_after(at) else {
                    break;
                };
                // "\nE" and its kind match at the newline before their line.
                let hit = m + usize::from(bytes[m] == b'\n');
                bytes[at..hit]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(at, |p| at + p + 1)
            };
            self.lines += count_newlines(&bytes[counted..start]);
            let end = start + find_newline(&bytes[start..]).expect("a region ends in a newline");
            self.consider(&bytes[start..=end]);
            self.lines += 1;
            at = self.continue_context(bytes, end + 1);
            counted = at;
        }
        self.lines += count_newlines(&bytes[counted..]);
        self.keep_tail(bytes);
    }

    /// Keeps the continuation lines of the last flagged line, from `at`; returns
    /// where the lines it did not take start.
    fn continue_context(&mut self, bytes: &[u8], mut at: usize) -> usize {
        while let Some((left, kind)) = self.context {
            if at >= bytes.len() {
                break;
            }
            let end = at + find_newline(&bytes[at..]).expect("a region ends in a newline");
            let line = &bytes[at..=end];
            let text = visible(line);
            if left == 0
                || !blocks::is_continuation(&text)
                || text.trim().is_empty()
                || !self.hold(line, kind)
            {
                self.context = None;
                break;
            }
            self.lines += 1;
            self.context = Some((left - 1, kind));
            at = end + 1;
        }
        at
    }

    /// A candidate line: held when the classifier flags it and its cap has room.
    fn consider(&mut self, line: &[u8]) {
        let text = visible(line);
        let (kind, slot) = match classify::class_of(&text) {
            Class::Error => (Kind::Error, 0),
            Class::Warning => (Kind::Warning, 1),
            Class::Summary => (Kind::Summary, 2),
            _ => return,
        };
        if !self.hold(line, kind) {
            self.missed[slot] += 1;
            return;
        }
        if kind != Kind::Summary {
            self.context = Some((self.caps.context, kind));
        }
    }

    /// Holds one line (with its newline) against `kind`'s cap; false when full.
    fn hold(&mut self, line: &[u8], kind: Kind) -> bool {
        let (slot, cap) = match kind {
            Kind::Head => (0, self.caps.head_bytes),
            Kind::Error => (1, self.caps.error_bytes),
            Kind::Warning => (2, self.caps.warning_bytes),
            Kind::Summary => (3, self.caps.summary_bytes),
        };
        let room = kind == Kind::Head || self.flagged < self.caps.flagged_lines;
        if line.len() > self.caps.line_bytes + 1 || self.spent[slot] + line.len() > cap || !room {
            return false;
        }
        if kind != Kind::Head {
            self.flagged += 1;
        }
        self.spent[slot] += line.len();
        self.kept.extend_from_slice(line);
        self.numbers.push(self.lines + 1);
        true
    }

    fn keep_tail(&mut self, bytes: &[u8]) {
        let cap = self.caps.tail_bytes;
        if bytes.len() >= cap {
            let from = bytes.len() - cap;
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[from..]);
            self.tail_clean = from == 0 || bytes[from - 1] == b'\n';
            return;
        }
        self.tail.extend_from_slice(bytes);
        // Cut back only once it holds four times the cap: each cut moves the
        // cap's worth of bytes, so most bytes are copied here once, not twice.
        if self.tail.len() > 4 * cap {
            let cut = self.tail.len() - cap;
            self.tail_clean = self.tail[cut - 1] == b'\n';
            self.tail.drain(..cut);
        }
    }

    /// The sample: held lines and the tail, in raw order.
    pub fn finish(mut self) -> Sample {
        // A last line without a newline is a line.
        let mut last_line: Option<Vec<u8>> = None;
        if self.carry_long {
            if !self.long_utf8.is_empty() {
                self.utf8 = false;
            }
            self.skip_line();
        } else if !self.carry.is_empty() {
            let line = std::mem::take(&mut self.carry);
            if self.utf8 && std::str::from_utf8(&line).is_err() {
                self.utf8 = false;
            }
            self.lines += 1;
            last_line = Some(line);
        }
        let lines = self.lines;
        let readable = self.utf8 && lines <= u64::from(u32::MAX);
        if !readable {
            return Sample {
                lines,
                bytes: self.bytes,
                readable,
                missed: self.missed,
                ..Sample::default()
            };
        }
        // The tail's lines, numbered back from the end. Its first line may be cut
        // (the buffer starts mid-line) unless it starts the stream.
        let tail_text = std::mem::take(&mut self.tail);
        let mut tail: Vec<&[u8]> = Vec::new();
        if !tail_text.is_empty() {
            let body = &tail_text[..tail_text.len() - 1];
            tail = body.split(|&b| b == b'\n').collect();
            if !self.tail_clean {
                tail.remove(0);
            }
        }
        let mut tail_lines: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut no = lines;
        if let Some(l) = last_line {
            tail_lines.push((no, l));
            no -= 1;
        }
        for l in tail.iter().rev() {
            if tail_lines.len() >= self.caps.tail_lines {
                break;
            }
            let mut line = l.to_vec();
            line.push(b'\n');
            tail_lines.push((no, line));
            no -= 1;
        }
        tail_lines.reverse();
        let tail_from = tail_lines.first().map_or(lines + 1, |t| t.0);
        // A flagged line the caps left out but the tail holds is not missed.
        for (n, line) in &tail_lines {
            if self.numbers.binary_search(n).is_ok() || line.len() > self.caps.line_bytes + 1 {
                continue;
            }
            let slot = match classify::class_of(&visible(line)) {
                Class::Error => 0,
                Class::Warning => 1,
                Class::Summary => 2,
                _ => continue,
            };
            self.missed[slot] = self.missed[slot].saturating_sub(1);
        }
        let mut text = Vec::with_capacity(
            self.kept.len() + tail_lines.iter().map(|t| t.1.len()).sum::<usize>(),
        );
        let mut numbers = Vec::with_capacity(self.numbers.len() + tail_lines.len());
        let mut at = 0;
        for &n in &self.numbers {
            let end = at + find_newline(&self.kept[at..]).expect("held lines end in a newline");
            if n < tail_from {
                text.extend_from_slice(&self.kept[at..=end]);
                numbers.push(n as u32);
            }
            at = end + 1;
        }
        for (n, line) in tail_lines {
            if line.len() > self.caps.line_bytes + 1 || line == LONG_LINE {
                continue;
            }
            text.extend_from_slice(&line);
            numbers.push(n as u32);
        }
        Sample {
            text: String::from_utf8(text).expect("every held region was checked as UTF-8"),
            numbers,
            lines,
            bytes: self.bytes,
            readable,
            missed: self.missed,
        }
    }
}

/// The visible text of a raw line (newline dropped), as the pipeline shows it.
fn visible(line: &[u8]) -> std::borrow::Cow<'_, str> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    match std::str::from_utf8(line) {
        Ok(s) => ansi::visible(s),
        Err(_) => std::borrow::Cow::Borrowed(""),
    }
}

/// The first newline in `b`, eight bytes at a time (see `count_newlines` for the
/// test): a line of a gigabyte is searched at memory speed.
fn find_newline(b: &[u8]) -> Option<usize> {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut words = b.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let x = u64::from_le_bytes(w.try_into().expect("eight bytes")) ^ NL;
        let zero = !(((x & LOW) + LOW) | x) & HIGH;
        if zero != 0 {
            return Some(at + zero.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == b'\n')
        .map(|p| at + p)
}

/// Newlines in `b`, eight bytes at a time: a byte of `x = w ^ "\n\n…"` is zero
/// exactly where `w` holds a newline, and `(x & 0x7f…) + 0x7f…` sets a byte's high
/// bit exactly when its low seven bits are not all zero, with no carry between
/// bytes; or-ing `x` back in covers a byte whose only set bit is the high one.
pub fn count_newlines(b: &[u8]) -> u64 {
    // One byte counter per lane, emptied before it can overflow: the compiler
    // turns the lane loop into vector compares and subtracts, which count a
    // gigabyte in a few tens of milliseconds where eight bytes at a time took
    // a few hundred (this count runs on every byte Lens stores).
    const LANES: usize = 32;
    let mut chunks = b.chunks_exact(LANES);
    let mut total = 0u64;
    loop {
        let mut acc = [0u8; LANES];
        let mut taken = 0;
        for c in chunks.by_ref().take(u8::MAX as usize) {
            let c: &[u8; LANES] = c.try_into().expect("a whole chunk");
            for (a, &byte) in acc.iter_mut().zip(c) {
                *a += u8::from(byte == b'\n');
            }
            taken += 1;
        }
        total += acc.iter().map(|&a| u64::from(a)).sum::<u64>();
        if taken < u8::MAX as usize {
            break;
        }
    }
    total + chunks.remainder().iter().filter(|&&c| c == b'\n').count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SMALL: Caps = Caps {
        head_lines: 3,
        head_bytes: 1 << 10,
        tail_lines: 2,
        tail_bytes: 1 << 10,
        error_bytes: 1 << 10,
        warning_bytes: 1 << 10,
        summary_bytes: 1 << 10,
        flagged_lines: 100,
        line_bytes: 200,
        context: 3,
    };

    fn sample(caps: Caps, text: &[u8], cuts: &[usize]) -> Sample {
        let mut s = Sampler::new(caps);
        let mut at = 0;
        for &c in cuts {
            let c = c.min(text.len()).max(at);
            s.push(&text[at..c]);
            at = c;
        }
        s.push(&text[at..]);
        s.finish()
    }

    fn held(s: &Sample) -> Vec<(u32, &str)> {
        s.numbers.iter().copied().zip(s.text.lines()).collect()
    }

    #[test]
    fn keeps_head_flagged_lines_with_their_continuation_and_tail() {
        let mut out = String::new();
        for i in 1..=100 {
            match i {
                40 => out.push_str("error[E0308]: mismatched types\n"),
                41 => out.push_str("  --> src/main.rs:4:5\n"),
                42 => out.push_str("   |\n"),
                43 => out.push_str("next unrelated line\n"),
                70 => out.push_str("warning: unused variable: `x`\n"),
                _ => out.push_str(&format!("line {i}\n")),
            }
        }
        let s = sample(SMALL, out.as_bytes(), &[]);
        assert!(s.readable);
        assert_eq!((s.lines, s.bytes), (100, out.len() as u64));
        assert_eq!(
            held(&s),
            [
                (1, "line 1"),
                (2, "line 2"),
                (3, "line 3"),
                (40, "error[E0308]: mismatched types"),
                (41, "  --> src/main.rs:4:5"),
                (42, "   |"),
                (70, "warning: unused variable: `x`"),
                (99, "line 99"),
                (100, "line 100"),
            ]
        );
    }

    #[test]
    fn a_last_line_without_newline_and_a_line_too_long_to_hold() {
        let long = "y".repeat(500);
        let out = format!("a\nb\nc\nd\n{long}\nerror: boom {long}\nerror: short\nend");
        let s = sample(SMALL, out.as_bytes(), &[1, 7, 9, 300, 700]);
        assert_eq!(s.lines, 8);
        assert_eq!(
            held(&s),
            [
                (1, "a"),
                (2, "b"),
                (3, "c"),
                (7, "error: short"),
                (8, "end")
            ]
        );
    }

    #[test]
    fn a_stream_that_is_not_utf8_is_not_readable() {
        let s = sample(SMALL, b"ok\n\xff\xfe\nmore\n", &[4]);
        assert!(!s.readable);
        assert!(s.part().is_none());
        assert_eq!(s.lines, 3);
        // A character cut between two pushes is still one character.
        let s = sample(SMALL, "é\nü\n".as_bytes(), &[1, 4]);
        assert!(s.readable);
    }

    #[test]
    fn caps_bound_what_is_held_and_count_what_is_missed() {
        let caps = Caps {
            error_bytes: 64,
            ..SMALL
        };
        let out = "error: a failure that repeats\n".repeat(50);
        let s = sample(caps, out.as_bytes(), &[]);
        // Three in the head, two that fit the error cap, two in the tail.
        assert_eq!(s.numbers, [1, 2, 3, 4, 5, 49, 50]);
        assert_eq!(s.missed, [43, 0, 0]);
    }

    #[test]
    fn newlines_are_counted_past_what_one_lane_counter_holds() {
        for (len, every) in [
            (8160, 1),
            (8161, 1),
            (100_003, 1),
            (100_003, 7),
            (31, 1),
            (0, 1),
        ] {
            let b: Vec<u8> = (0..len)
                .map(|i| if i % every == 0 { b'\n' } else { b'x' })
                .collect();
            let want = b.iter().filter(|&&c| c == b'\n').count() as u64;
            assert_eq!(count_newlines(&b), want, "{len} {every}");
        }
    }

    /// What `Caps::DEFAULT` holds at most, with a margin: the bound the CLI's
    /// memory ceiling is built on.
    #[test]
    fn default_caps_hold_a_few_megabytes() {
        let c = Caps::DEFAULT;
        let bytes = c.head_bytes + c.tail_bytes + c.error_bytes + c.warning_bytes + c.summary_bytes;
        assert!(bytes <= 4 << 20, "{bytes}");
        assert!(c.head_lines + c.tail_lines + c.flagged_lines <= 40_000);
    }

    fn line_strategy() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "plain text".to_string(),
            String::new(),
            "error: it broke".to_string(),
            "  --> src/a.rs:1:2".to_string(),
            "warning: careful".to_string(),
            "test result: ok. 1 passed".to_string(),
            "E   assert 1 == 2".to_string(),
            "ok".to_string(),
            "\u{1b}[31merror\u{1b}[0m: red".to_string(),
            "50%\r100%".to_string(),
            "x".repeat(300),
            "é ü".to_string(),
        ])
    }

    proptest! {
        #[test]
        fn newlines_are_counted_and_found_like_a_search(bytes in prop::collection::vec(
            prop::sample::select(vec![b'\n', 0x0a ^ 0x80, 0x8a, 0, 0xff, b'a', 0x0b, 0x09]),
            0..100,
        )) {
            let want = bytes.iter().filter(|&&c| c == b'\n').count() as u64;
            prop_assert_eq!(count_newlines(&bytes), want);
            prop_assert_eq!(find_newline(&bytes), bytes.iter().position(|&c| c == b'\n'));
        }

        /// After every push the sampler has seen as many newlines as the bytes
        /// pushed hold, lines too long to hold and bytes not UTF-8 included.
        #[test]
        fn the_sampler_counts_every_newline_pushed(
            lines in prop::collection::vec(line_strategy(), 0..60),
            cuts in prop::collection::vec(0usize..4000, 0..8),
            bad in any::<bool>(),
        ) {
            let mut text = lines.join("\n").into_bytes();
            if bad {
                text.insert(text.len() / 2, 0xff);
            }
            let mut cuts = cuts;
            cuts.sort_unstable();
            let mut s = Sampler::new(SMALL);
            let mut at = 0;
            for c in cuts.into_iter().chain([text.len()]) {
                let c = c.min(text.len()).max(at);
                s.push(&text[at..c]);
                at = c;
                prop_assert_eq!(s.newlines(), text[..at].iter().filter(|&&b| b == b'\n').count() as u64);
            }
        }

        /// Held lines are the raw lines at their numbers, in order; the counts are
        /// the raw counts; and where the stream was cut does not matter.
        #[test]
        fn held_lines_are_raw_lines_at_their_numbers(
            lines in prop::collection::vec(line_strategy(), 0..80),
            end_newline in any::<bool>(),
            cuts in prop::collection::vec(0usize..4000, 0..8),
        ) {
            let mut text = lines.join("\n");
            if end_newline && !text.is_empty() {
                text.push('\n');
            }
            let mut cuts = cuts;
            cuts.sort_unstable();
            let a = sample(SMALL, text.as_bytes(), &cuts);
            let b = sample(SMALL, text.as_bytes(), &[]);
            prop_assert_eq!(&a.text, &b.text);
            prop_assert_eq!(&a.numbers, &b.numbers);
            let raw: Vec<&str> = if text.is_empty() {
                Vec::new()
            } else {
                text.strip_suffix('\n').unwrap_or(&text).split('\n').collect()
            };
            prop_assert_eq!(a.lines, raw.len() as u64);
            prop_assert!(a.numbers.windows(2).all(|w| w[0] < w[1]));
            for (no, line) in held(&a) {
                prop_assert_eq!(raw[no as usize - 1], line);
            }
            // Every flagged line short enough to hold is held (the caps are ample).
            for (i, l) in raw.iter().enumerate() {
                let flagged = matches!(
                    classify::class_of(&ansi::visible(l)),
                    Class::Error | Class::Warning | Class::Summary
                );
                if flagged && l.len() <= SMALL.line_bytes {
                    prop_assert!(a.numbers.contains(&(i as u32 + 1)), "line {} {:?}", i + 1, l);
                }
            }
        }

        /// The literal search finds every line the classifier flags.
        #[test]
        fn the_candidate_search_misses_no_flagged_line(line in "\\PC{0,40}|(E|=|#|ok|error|warn|FAIL|Test|✗|rror|\\x1b\\[1m| |:|[a-z]){0,10}") {
            let flagged = matches!(
                classify::class_of(&ansi::visible(&line)),
                Class::Error | Class::Warning | Class::Summary
            );
            if flagged {
                let framed = format!("\n{line}\n");
                let found = CANDIDATES.iter().any(|r| r.is_match(framed.as_bytes()));
                prop_assert!(found || opens_candidate(line.as_bytes()));
            }
        }
    }
}
