//! `lens show <handle>`: a stored run, byte for byte, by lines, or re-rendered at a
//! level.

use std::io::{self, Read};

use lens_core::{Handle, Level, Options, Stream, DEFAULT_BUDGET};

use crate::args::ShowArgs;
use crate::capture;
use crate::config::load_config;
use crate::{paths, store};

pub(crate) fn cmd(s: ShowArgs) -> i32 {
    let stored = match store::load(&paths::store(), &s.handle) {
        Ok(st) => st,
        Err(e) => {
            crate::capture::say(&format!("lens show: {e}"));
            return 1;
        }
    };
    let code = show_stored(&s, &stored);
    // What the agent fetched back counts against what its views saved.
    crate::runlog::append(
        &paths::log_dir(),
        &crate::runlog::Record::fetch(
            crate::now_ms(std::time::SystemTime::now()),
            vec!["lens".into(), "show".into(), s.handle.clone()],
            s.handle.clone(),
            capture::PRINTED.load(std::sync::atomic::Ordering::Relaxed),
        ),
    );
    // A damaged meta.json is said after the output, which is intact.
    if let Some(w) = &stored.meta_warning {
        crate::capture::say(&format!("lens show: {w}"));
    }
    code
}

fn show_stored(s: &ShowArgs, stored: &store::Stored) -> i32 {
    let open = |stream: Stream| stored.open(stream.name());
    if let Some(max) = s.max_bytes {
        if s.grep.is_some() || s.level != Level::Three {
            crate::capture::say("lens show: --max-bytes pages raw lines; drop --grep and --level");
            return 2;
        }
        let (stream, other) = pick_stream(s.stream, stored);
        if let Some(o) = other {
            crate::capture::say(&format!(
                "lens show: --max-bytes pages one stream, {}; {} has lines too: add --stream {}",
                stream.name(),
                o.name(),
                o.name()
            ));
        }
        let (a, b) = s.lines.map_or((1, u64::MAX), |(a, b)| (a.into(), b.into()));
        return match page(stored, &s.handle, stream, (a, b), (max, None)) {
            Ok(p) => {
                capture::print_to(Stream::Stdout, &p.text);
                0
            }
            Err(e) => {
                crate::capture::say(&format!("lens show: {e}"));
                1
            }
        };
    }
    if let Some(pattern) = &s.grep {
        if s.lines.is_some() || s.level != Level::Three {
            crate::capture::say("lens show: --grep prints raw lines; drop --lines and --level");
            return 2;
        }
        let re = match regex::bytes::RegexBuilder::new(pattern)
            .case_insensitive(s.ignore_case)
            .build()
        {
            Ok(re) => re,
            Err(e) => {
                let first = e.to_string();
                let first = first.lines().last().unwrap_or("").trim();
                crate::capture::say(&format!("lens show: --grep {pattern:?} is not a regular expression ({first}); check its syntax"));
                return 2;
            }
        };
        let streams: Vec<Stream> = match s.stream {
            Some(st) => vec![st],
            None => vec![Stream::Stdout, Stream::Stderr],
        };
        // Each line says its stream only where both streams have lines, as
        // grep names the file only when it searches several.
        let has_lines = |st: Stream| {
            open(st)
                .ok()
                .and_then(|f| f.metadata().ok())
                .is_some_and(|m| m.len() > 0)
        };
        let named = streams.len() > 1 && streams.iter().all(|&st| has_lines(st));
        let mut g = Grep::new(&re, s.context, s.budget.unwrap_or(DEFAULT_BUDGET), named);
        g.invert = s.invert;
        g.number = s.line_number;
        for st in streams {
            match open(st) {
                Ok(f) => g.stream(f, st),
                Err(e) => {
                    crate::capture::say(&format!("lens show: {e}"));
                    return 1;
                }
            }
        }
        // The count and the budget's marker go to stderr, as grep's own
        // messages do: what `| sort | uniq -c` or `| wc -l` reads is the
        // matching lines alone (an agent's shell shows both).
        let handle = &s.handle;
        capture::print_to(Stream::Stderr, g.summary(handle, pattern).as_bytes());
        return i32::from(g.matches == 0);
    }
    if let Some((a, b)) = s.lines {
        if s.level != Level::Three {
            crate::capture::say(
                "lens show: --lines prints raw lines; drop --level, or drop --lines to see a level",
            );
            return 2;
        }
        let (stream, _) = pick_stream(s.stream, stored);
        let gap = stored
            .meta
            .unstored
            .iter()
            .find(|u| u.stream == stream.name());
        // Lines past a gap the run's bound left are stored that many lines
        // earlier in the file; the gap itself is said, not shown.
        let (a, b) = (u64::from(a), u64::from(b));
        let mut pieces = vec![(a, b, 0u64)];
        if let Some(g) = gap {
            let missing = g.to_line + 1 - g.from_line;
            pieces = Vec::new();
            if a < g.from_line {
                pieces.push((a, b.min(g.from_line - 1), 0));
            }
            if b >= g.from_line && a <= g.to_line {
                crate::capture::say(&format!(
                    "lens show: {} lines {}-{} were not stored (the run passed [store] max_run_bytes)",
                    stream.name(),
                    a.max(g.from_line),
                    b.min(g.to_line)
                ));
            }
            if b > g.to_line {
                pieces.push((a.max(g.to_line + 1), b, missing));
            }
        }
        let mut total = 0;
        for (from, to, shift) in pieces {
            let file = match open(stream) {
                Ok(f) => f,
                Err(e) => {
                    crate::capture::say(&format!("lens show: {e}"));
                    return 1;
                }
            };
            total = copy_lines(file, from - shift, to - shift);
        }
        if pieces_empty_total(gap, &mut total, &open, stream) {
            return 1;
        }
        let total = total + gap.map_or(0, |g| g.to_line + 1 - g.from_line);
        if a > total {
            crate::capture::say(&format!(
                "lens show: {} has {total} lines; --lines {a}-{b} starts past the end",
                stream.name()
            ));
            return 1;
        }
        return 0;
    }
    let streams: Vec<Stream> = match s.stream {
        Some(st) => vec![st],
        None => vec![Stream::Stdout, Stream::Stderr],
    };
    // One stream asked for goes to stdout, so it can be piped; both go where the
    // command wrote them.
    let to = |st: Stream| {
        if s.stream.is_some() {
            Stream::Stdout
        } else {
            st
        }
    };
    if s.level == Level::Three {
        for st in &streams {
            match open(*st) {
                Ok(f) => capture::copy_to(f, to(*st)),
                Err(e) => {
                    crate::capture::say(&format!("lens show: {e}"));
                    return 1;
                }
            }
        }
        for u in &stored.meta.unstored {
            if streams.iter().any(|st| st.name() == u.stream) {
                crate::capture::say(&format!(
                    "lens show: {} lines {}-{} (bytes {}-{}) were not stored (the run passed [store] max_run_bytes): the store holds lines 1-{} of it; the rest passed through to the reader unstored",
                    u.stream, u.from_line, u.to_line, u.from_byte, u.to_byte, u.from_line.saturating_sub(1)
                ));
            }
        }
        return 0;
    }
    let mut budget = s.budget.unwrap_or(DEFAULT_BUDGET);
    let mut ignored = Vec::new();
    if s.budget.is_none() {
        if let Some(c) = load_config(&mut ignored) {
            budget = c.settings(&stored.meta.argv).budget.unwrap_or(budget);
        }
    }
    // The filter the run would be given now, picked as the run picks it (from
    // the directory it ran in): a level of a filtered command is the filtered
    // view at that level, not the built-in one. What the run said of a file it
    // could not use is not said again here.
    let filter = crate::filters::pick(
        &stored.meta.argv,
        std::path::Path::new(&stored.meta.cwd),
        &mut ignored,
    );
    let mut read = Vec::new();
    for st in [Stream::Stdout, Stream::Stderr] {
        match open(st).and_then(|f| Reread::of(f, st)) {
            Ok(r) => read.push(r),
            Err(e) => {
                crate::capture::say(&format!("lens show: {e}"));
                return 1;
            }
        }
    }
    let opts = Options {
        budget,
        filter,
        ..Options::new(s.level, Handle::parse(&s.handle))
    };
    let (v_out, v_err, _) = lens_core::view_parts(
        &stored.meta.argv,
        read[0].input(),
        read[1].input(),
        stored.meta.exit,
        &opts,
    );
    for (v, r) in [(v_out, &read[0]), (v_err, &read[1])] {
        if !streams.contains(&r.stream) {
            continue;
        }
        match v {
            Some(text) => capture::print_to(to(r.stream), text.as_bytes()),
            None => match open(r.stream) {
                Ok(f) => capture::copy_to(f, to(r.stream)),
                Err(e) => crate::capture::say(&format!("lens show: {e}")),
            },
        }
    }
    0
}

/// The stream raw lines are read from: the one asked for, else stdout unless
/// only stderr has lines; and the other stream, when none was asked for and it
/// has lines too (it is then not in what is printed).
pub(crate) fn pick_stream(
    asked: Option<Stream>,
    stored: &store::Stored,
) -> (Stream, Option<Stream>) {
    let empty = |st: Stream| {
        stored
            .open(st.name())
            .map_or(true, |f| f.metadata().map_or(true, |m| m.len() == 0))
    };
    match asked {
        Some(st) => (st, None),
        None if empty(Stream::Stdout) && !empty(Stream::Stderr) => (Stream::Stderr, None),
        None if !empty(Stream::Stderr) => (Stream::Stdout, Some(Stream::Stderr)),
        None => (Stream::Stdout, None),
    }
}

/// Raw lines of a stored stream, at most a given size.
pub(crate) struct Page {
    /// The lines, then the marker when some were left.
    pub text: Vec<u8>,
    /// The marker naming the lines left, when the range did not all fit.
    pub shown: Option<lens_core::Shown>,
}

/// Raw lines `a..=b` of `stream` (`b` past the end means to the end), cut by
/// whole lines so that they and the marker that ends them fit in `max` bytes
/// (and, when given, in that many lines, the marker one of them);
/// the marker names the same handle and the first line not printed, so the
/// next page is one `--lines` away. The first line is printed even when it
/// alone is bigger. Used by `lens show --max-bytes` and by the after-tool
/// hook for a `lens show` whose output the agent would cut: one page, either
/// way. A stream with lines the store did not keep, or a run still going, is
/// not paged (its line numbers are not the file's).
pub(crate) fn page(
    stored: &store::Stored,
    handle: &str,
    stream: Stream,
    (a, b): (u64, u64),
    (max, max_lines): (usize, Option<u64>),
) -> Result<Page, String> {
    use std::io::BufRead;
    if stored.in_progress
        || stored
            .meta
            .unstored
            .iter()
            .any(|u| u.stream == stream.name())
    {
        return Err(format!(
            "{} of {handle} is not whole in the store; use --lines without --max-bytes",
            stream.name()
        ));
    }
    let f = stored.open(stream.name())?;
    let mut r = io::BufReader::with_capacity(1 << 16, f);
    // Room for the marker at its longest: every number as wide as a 20-digit one.
    let room = lens_core::Shown {
        stream,
        first: u64::MAX / 2,
        last: u64::MAX / 2,
        rest: u64::MAX,
        total: u64::MAX,
        handle: handle.to_string(),
    }
    .render()
    .len()
        + 1;
    let mut text = Vec::new();
    let (mut n, mut last, mut full) = (0u64, 0u64, false);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("cannot read the stored {}: {e}", stream.name())),
        }
        n += 1;
        if n < a || n > b || full {
            continue;
        }
        let lines_full = max_lines.is_some_and(|m| n - a + 2 > m);
        if last > 0 && (text.len() + line.len() + room > max || lines_full) {
            full = true;
            continue;
        }
        text.extend_from_slice(&line);
        last = n;
    }
    if n == 0 && (a, b) == (1, u64::MAX) {
        return Ok(Page { text, shown: None });
    }
    if a > n {
        return Err(format!(
            "{} has {n} lines; --lines {a}-{b} starts past the end",
            stream.name()
        ));
    }
    let rest = b.min(n);
    let shown = (last < rest).then(|| lens_core::Shown {
        stream,
        first: a,
        last,
        rest,
        total: n,
        handle: handle.to_string(),
    });
    if let Some(m) = &shown {
        if !text.ends_with(b"\n") {
            text.push(b'\n');
        }
        text.extend_from_slice(m.render().as_bytes());
        text.push(b'\n');
    }
    Ok(Page { text, shown })
}

/// `--grep`: the matching raw lines of the stored streams, as grep prints them
/// (`-n`: `N:line`, context `N-line`; groups apart by `--` when there is context), until the
/// budget; past it, matches are counted, and a marker says where the first
/// one not printed is.
struct Grep<'a> {
    re: &'a regex::bytes::Regex,
    context: u32,
    budget: usize,
    /// Prefix each line with its stream (both streams searched).
    named: bool,
    /// Lines that do not match are the hits (`-v`).
    invert: bool,
    /// Each line starts with its number, `N:` (context `N-`), as `grep -n`.
    number: bool,
    printed: usize,
    /// Matching lines, printed or not.
    matches: u64,
    /// Per stream: matches.
    per: Vec<(Stream, u64)>,
    /// Matches past the budget, and the first of them.
    unprinted: u64,
    first_unprinted: Option<(Stream, u64)>,
}

impl<'a> Grep<'a> {
    fn new(re: &'a regex::bytes::Regex, context: u32, budget: usize, named: bool) -> Grep<'a> {
        Grep {
            re,
            context,
            budget,
            named,
            invert: false,
            number: false,
            printed: 0,
            matches: 0,
            per: Vec::new(),
            unprinted: 0,
            first_unprinted: None,
        }
    }

    fn stream(&mut self, f: std::fs::File, st: Stream) {
        use std::io::BufRead;
        let ctx = self.context as usize;
        let mut r = io::BufReader::with_capacity(1 << 16, f);
        let mut before: std::collections::VecDeque<(u64, Vec<u8>)> = Default::default();
        let mut line = Vec::new();
        let (mut n, mut after, mut last_printed, mut count) = (0u64, 0usize, 0u64, 0u64);
        loop {
            line.clear();
            // A line is read whole only up to 1 MiB; its match is on that part.
            let got = Read::by_ref(&mut r)
                .take(1 << 20)
                .read_until(b'\n', &mut line);
            match got {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if !line.ends_with(b"\n") && line.len() >= 1 << 20 {
                let mut rest = Vec::new();
                let _ = r.read_until(b'\n', &mut rest);
            }
            n += 1;
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            // The pattern meets the line as a view shows it (colour codes and
            // redrawn drawings resolved); the raw line is what is printed.
            let hit = match std::str::from_utf8(text) {
                Ok(t) if t.contains(['\x1b', '\r']) => self
                    .re
                    .is_match(lens_core::stages::ansi::visible(t).as_bytes()),
                _ => self.re.is_match(text),
            } != self.invert;
            if hit {
                count += 1;
                self.matches += 1;
            }
            let over = self.first_unprinted.is_some();
            if hit && !over {
                let mut out = Vec::new();
                // Groups apart, as grep marks them, only where there is context:
                // bare matches are one per line, ready for `| sort | uniq -c`.
                if ctx > 0
                    && last_printed > 0
                    && before.front().map_or(n, |b| b.0) > last_printed + 1
                {
                    out.extend_from_slice(b"--\n");
                }
                for (k, l) in &before {
                    out.extend(self.numbered(st, *k, '-', l));
                }
                out.extend(self.numbered(st, n, ':', text));
                if self.printed + out.len() > self.budget && self.printed > 0 {
                    self.first_unprinted = Some((st, n));
                    self.unprinted += 1;
                } else {
                    self.printed += out.len();
                    capture::print_to(Stream::Stdout, &out);
                    last_printed = n;
                    after = ctx;
                }
                before.clear();
                continue;
            }
            if hit {
                self.unprinted += 1;
                continue;
            }
            if after > 0 && !over {
                let out = self.numbered(st, n, '-', text);
                self.printed += out.len();
                capture::print_to(Stream::Stdout, &out);
                last_printed = n;
                after -= 1;
                continue;
            }
            if ctx > 0 {
                before.push_back((n, text.to_vec()));
                if before.len() > ctx {
                    before.pop_front();
                }
            }
        }
        self.per.push((st, count));
    }

    fn numbered(&self, st: Stream, n: u64, sep: char, text: &[u8]) -> Vec<u8> {
        let mut v = Vec::with_capacity(text.len() + 16);
        if self.named {
            v.extend_from_slice(st.name().as_bytes());
            v.push(if self.number { b':' } else { sep as u8 });
        }
        if self.number {
            v.extend_from_slice(format!("{n}{sep}").as_bytes());
        }
        v.extend_from_slice(text);
        v.push(b'\n');
        v
    }

    /// The count, and the marker for what the budget left out.
    fn summary(&self, handle: &str, pattern: &str) -> String {
        let per: Vec<String> = self
            .per
            .iter()
            .map(|(st, c)| format!("{} in {}", c, st.name()))
            .collect();
        let mut s = format!(
            "[lens: {} {}matching line{} ({})]\n",
            self.matches,
            if self.invert { "non-" } else { "" },
            if self.matches == 1 { "" } else { "s" },
            per.join(", ")
        );
        if let Some((st, n)) = self.first_unprinted {
            s.push_str(&format!(
                "[lens: {} more matching lines past the budget, the first at {} line {n}; lens show {handle} --grep '{pattern}'{} --stream {} --budget 16k shows more]\n",
                self.unprinted,
                st.name(),
                if self.invert { " -v" } else { "" },
                st.name()
            ));
        }
        s
    }
}

/// A stored stream read back for a view: whole when it is small enough to hold,
/// else sampled as it was when it ran.
struct Reread {
    stream: Stream,
    bytes: u64,
    whole: Vec<u8>,
    sample: Option<lens_core::sample::Sample>,
}

impl Reread {
    fn of(mut f: std::fs::File, stream: Stream) -> Result<Reread, String> {
        let fail = |e: io::Error| format!("cannot read the stored {}: {e}", stream.name());
        let bytes = f.metadata().map_err(fail)?.len();
        let limits = capture::Limits::DEFAULT;
        let mut buf = vec![0u8; 256 << 10];
        let mut whole = Vec::new();
        let mut lines = 0;
        let mut sampler: Option<lens_core::sample::Sampler> = None;
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(e)),
            };
            let chunk = &buf[..n];
            if let Some(s) = sampler.as_mut() {
                s.push(chunk);
                continue;
            }
            whole.extend_from_slice(chunk);
            lines += lens_core::sample::count_newlines(chunk);
            if whole.len() as u64 > limits.bytes || lines > limits.lines {
                let mut s = lens_core::sample::Sampler::default();
                s.push(&whole);
                whole = Vec::new();
                sampler = Some(s);
            }
        }
        Ok(Reread {
            stream,
            bytes,
            whole,
            sample: sampler.map(lens_core::sample::Sampler::finish),
        })
    }

    fn input(&self) -> lens_core::Input<'_> {
        let part = match &self.sample {
            Some(s) => s.part(),
            None => std::str::from_utf8(&self.whole)
                .ok()
                .map(lens_core::Part::whole),
        };
        lens_core::Input {
            part,
            raw_len: self.bytes,
        }
    }
}

/// When no piece was read (the range lies in the gap), counts the stored
/// stream's lines; true when it cannot be opened.
fn pieces_empty_total(
    gap: Option<&crate::capture::Unstored>,
    total: &mut u64,
    open: &dyn Fn(Stream) -> Result<std::fs::File, String>,
    stream: Stream,
) -> bool {
    if *total > 0 || gap.is_none() {
        return false;
    }
    match open(stream) {
        Ok(f) => {
            *total = copy_lines(f, u64::MAX, u64::MAX);
            false
        }
        Err(e) => {
            crate::capture::say(&format!("lens show: {e}"));
            true
        }
    }
}

/// Copies raw lines `a..=b` (1-based) of a stored stream to stdout, in bounded
/// pieces; returns how many lines the stream has.
fn copy_lines(mut f: impl Read, a: u64, b: u64) -> u64 {
    let mut buf = vec![0u8; 256 << 10];
    let mut line = 1u64;
    let mut partial = false;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        let mut start = 0;
        for (i, &c) in chunk.iter().enumerate() {
            if c != b'\n' {
                continue;
            }
            if (a..=b).contains(&line) {
                capture::print_to(Stream::Stdout, &chunk[start..=i]);
            }
            line += 1;
            start = i + 1;
        }
        partial = start < chunk.len();
        if partial && (a..=b).contains(&line) {
            capture::print_to(Stream::Stdout, &chunk[start..]);
        }
    }
    // A last line without a newline counts.
    line - 1 + u64::from(partial)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grep(text: &[u8], pattern: &str, context: u32, budget: usize) -> Grep<'static> {
        let re: &'static regex::bytes::Regex =
            Box::leak(Box::new(regex::bytes::Regex::new(pattern).unwrap()));
        let dir = std::env::temp_dir().join(format!("lens-grep-{}-{pattern}", std::process::id()));
        std::fs::write(&dir, text).unwrap();
        let mut g = Grep::new(re, context, budget, false);
        // Numbered, as `-n` prints: the budget below counts `N:line N` lines.
        g.number = true;
        g.stream(std::fs::File::open(&dir).unwrap(), Stream::Stdout);
        std::fs::remove_file(&dir).unwrap();
        g
    }

    #[test]
    fn grep_counts_every_match_and_stops_printing_at_the_budget() {
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let g = grep(text.as_bytes(), "7$", 0, 40);
        assert_eq!(g.matches, 100);
        assert!(g.printed <= 40);
        assert_eq!(g.first_unprinted, Some((Stream::Stdout, 37)));
        assert_eq!(g.unprinted, 97);
        let s = g.summary("0123abcd", "7$");
        assert!(s.contains("100 matching lines (100 in stdout)"), "{s}");
        assert!(
            s.contains("97 more matching lines past the budget, the first at stdout line 37"),
            "{s}"
        );
    }

    #[test]
    fn grep_matches_the_line_as_shown_and_counts_coloured_lines() {
        let text = "  \x1b[32m✓\x1b[0m lint 4s\n  ✗ test 3.1\nplain\n";
        let g = grep(text.as_bytes(), "^  [✓✗-] ", 0, 4096);
        assert_eq!(g.matches, 2);
    }

    #[test]
    fn line_ranges_count_every_line_wherever_the_reads_end() {
        assert_eq!(copy_lines(&b"a\nb\nc\nd"[..], 9, 9), 4);
        assert_eq!(copy_lines(&b"a\nb\n"[..], 9, 9), 2);
        assert_eq!(copy_lines(&b""[..], 9, 9), 0);
    }
}
