//! The marker: one line standing for each run of elided lines.
//!
//! ```text
//! [lens: elided stdout 2-4999 (4998 lines: progress 4997, repeat 1) handle=1a2b3c4d]
//! [lens: elided stderr 2-2251 (2250 lines: grouped) handle=1a2b3c4d digest=14]
//! [lens: elided stdout 31-4995 (4965 lines: budget; all like "checked ACC-… balance … ok"; no error or warning) handle=1a2b3c4d]
//! ```
//!
//! It names the stream, the raw line range (1-based, inclusive, as `lens show
//! --lines` counts), how many lines and why (a single reason without its count,
//! which is the line count), and the handle the full output is stored under. With
//! `digest=N`, the N lines after the marker are Lens's digest of the elided region
//! (every location and name in it copied from the raw output), not output lines;
//! with `unlisted=K`, the digest was cut to fit the budget and leaves K names out.
//! A region the budget or the level left out says what it held, so a reader can
//! trust the gap without fetching it: `all like "…"`, the shape every one of
//! its non-blank lines has (words holding digits, and hex ids, shown as `…`), or `most like
//! "…"` when only half or more have it, and how many of its lines were
//! errors and warnings (`no error or warning`, `3 errors`, `1 error, 2 warnings`).
//! It never tells the reader to run anything: agents read an instruction as an
//! order, and fetching the whole raw output is the one thing the view exists to
//! spare them.

use std::sync::LazyLock;

use regex::Regex;

use crate::doc::{Reason, Stream};

/// Prefix every Lens line starts with, so a reader can tell Lens from the child.
pub const PREFIX: &str = "[lens: ";

/// One elided run, as rendered or parsed back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Stream the lines came from.
    pub stream: Stream,
    /// First elided raw line, 1-based.
    pub first: u32,
    /// Last elided raw line, inclusive.
    pub last: u32,
    /// Count of lines per reason, in reason order.
    pub reasons: Vec<(String, u32)>,
    /// The store handle, eight lowercase hex digits.
    pub handle: String,
    /// Lines of digest that follow the marker.
    pub digest: usize,
    /// Names (locations, entries, lines) the digest leaves out to fit the budget;
    /// they are in the raw region.
    pub unlisted: usize,
    /// The shape most of the region's lines share, when they mostly share one.
    pub like: Option<Like>,
    /// Errors and warnings among the region's lines, when the marker says.
    pub trouble: Option<(u32, u32)>,
    /// Every error and warning counted in `trouble` stands in a digest the view
    /// prints (a report of a cause it shows, a folded line): `…, each in a digest`.
    pub digested: bool,
}

/// The shape a region's non-blank lines share: `all like "…"` when every one
/// has it, so a reader can tell nothing else hides there; `most like "…"` when
/// at least half do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Like {
    /// Every non-blank line of the region has the shape.
    pub all: bool,
    /// The shape: a line with its words that hold digits (and its hex ids)
    /// shown as `…`.
    pub shape: String,
}

impl Marker {
    /// Number of lines the marker stands for.
    pub fn lines(&self) -> u32 {
        self.last - self.first + 1
    }

    /// Renders the marker line, without a newline.
    pub fn render(&self) -> String {
        let n = self.lines();
        let mut s = format!(
            "{PREFIX}elided {} {}-{} ({} line{}",
            self.stream.name(),
            self.first,
            self.last,
            n,
            if n == 1 { "" } else { "s" }
        );
        let single = self.reasons.len() == 1;
        for (i, (word, count)) in self.reasons.iter().enumerate() {
            s.push_str(if i == 0 { ": " } else { ", " });
            s.push_str(word);
            if !single {
                s.push(' ');
                s.push_str(&count.to_string());
            }
        }
        if let Some(like) = &self.like {
            s.push_str(if like.all {
                "; all like \""
            } else {
                "; most like \""
            });
            s.push_str(&like.shape);
            s.push('"');
        }
        if let Some((errors, warnings)) = self.trouble {
            s.push_str("; ");
            s.push_str(&trouble_words(errors, warnings));
            if self.digested {
                s.push_str(", each in a digest");
            }
        }
        s.push_str(") handle=");
        s.push_str(&self.handle);
        if self.digest > 0 {
            s.push_str(" digest=");
            s.push_str(&self.digest.to_string());
        }
        if self.unlisted > 0 {
            s.push_str(" unlisted=");
            s.push_str(&self.unlisted.to_string());
        }
        s.push(']');
        s
    }

    /// Parses a marker line; `None` for anything else.
    pub fn parse(line: &str) -> Option<Marker> {
        let c = MARKER.captures(line)?;
        let count: u32 = c[4].parse().ok()?;
        let reasons = c
            .get(5)
            .map(|m| {
                m.as_str()
                    .split(", ")
                    .filter_map(|p| match p.split_once(' ') {
                        Some((w, n)) => Some((w.to_string(), n.parse().ok()?)),
                        None => Some((p.to_string(), count)),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let m = Marker {
            stream: Stream::parse(&c[1])?,
            first: c[2].parse().ok()?,
            last: c[3].parse().ok()?,
            reasons,
            handle: c["handle"].to_string(),
            digest: c
                .name("digest")
                .map_or(Some(0), |d| d.as_str().parse().ok())?,
            unlisted: c
                .name("unlisted")
                .map_or(Some(0), |d| d.as_str().parse().ok())?,
            like: c.name("like").map(|l| Like {
                all: &c["likeq"] == "all",
                shape: l.as_str().to_string(),
            }),
            trouble: match c.name("trouble").map(|t| t.as_str()) {
                None => None,
                Some(t) => Some(parse_trouble(t)?),
            },
            digested: c.name("digested").is_some(),
        };
        (m.first >= 1 && m.last >= m.first && count == m.lines()).then_some(m)
    }
}

/// `no error or warning`, `1 error`, `2 warnings`, `1 error, 2 warnings`.
pub fn trouble_words(errors: u32, warnings: u32) -> String {
    let n = |k: u32, word: &str| format!("{k} {word}{}", if k == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "no error or warning".into(),
        (e, 0) => n(e, "error"),
        (0, w) => n(w, "warning"),
        (e, w) => format!("{}, {}", n(e, "error"), n(w, "warning")),
    }
}

fn parse_trouble(t: &str) -> Option<(u32, u32)> {
    if t == "no error or warning" {
        return Some((0, 0));
    }
    let (mut e, mut w) = (0, 0);
    for part in t.split(", ") {
        let (k, word) = part.split_once(' ')?;
        let k: u32 = k.parse().ok()?;
        match word.trim_end_matches('s') {
            "error" => e = k,
            "warning" => w = k,
            _ => return None,
        }
    }
    Some((e, w))
}

/// Counts reasons for a run of dropped lines, in a stable order.
pub fn tally(reasons: impl Iterator<Item = Reason>) -> Vec<(String, u32)> {
    tally_weighted(reasons.map(|r| (r, 1)))
}

/// Counts reasons given with a number of lines each (a sampled stream's gap is
/// many lines of one reason), in a stable order.
pub fn tally_weighted(reasons: impl Iterator<Item = (Reason, u32)>) -> Vec<(String, u32)> {
    let mut counts: Vec<(Reason, u32)> = Vec::new();
    for (r, k) in reasons {
        match counts.iter_mut().find(|(x, _)| *x == r) {
            Some((_, n)) => *n += k,
            None => counts.push((r, k)),
        }
    }
    counts.sort_by_key(|(r, _)| *r);
    counts
        .into_iter()
        .map(|(r, n)| (r.word().to_string(), n))
        .collect()
}

/// The line a view ends with when Lens was stopped by a signal before the command
/// finished: the output above is what the command wrote until then.
///
/// ```text
/// [lens: cut short by SIGTERM handle=1a2b3c4d]
/// ```
///
/// The handle is absent when the run could not be stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutShort {
    /// The signal's name (`SIGTERM`, `SIGINT`, `SIGHUP`, `SIGQUIT`, or `signal N`).
    pub signal: String,
    /// The store handle, if the run was stored.
    pub handle: Option<String>,
}

impl CutShort {
    /// Renders the notice line, without a newline.
    pub fn render(&self) -> String {
        match &self.handle {
            Some(h) => format!("{PREFIX}cut short by {} handle={h}]", self.signal),
            None => format!("{PREFIX}cut short by {}]", self.signal),
        }
    }

    /// Parses a notice line; `None` for anything else.
    pub fn parse(line: &str) -> Option<CutShort> {
        let c = CUT.captures(line)?;
        Some(CutShort {
            signal: c[1].to_string(),
            handle: c.get(2).map(|h| h.as_str().to_string()),
        })
    }
}

/// The line a page of `lens show` ends with when the lines asked for did not
/// all fit: the same handle, and the lines still to ask for.
///
/// ```text
/// [lens: shown stdout 1-212 of 300 (lines 213-300 not shown) handle=1a2b3c4d]
/// ```
///
/// `first`-`last` are the raw lines printed above it, `rest` the last line of
/// the range asked for (the lines `last+1`-`rest` were not printed), `total`
/// the stream's line count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The stream the lines are from.
    pub stream: Stream,
    /// First raw line printed, 1-based.
    pub first: u64,
    /// Last raw line printed, inclusive.
    pub last: u64,
    /// Last line of the range asked for; `last+1`..=`rest` were not printed.
    pub rest: u64,
    /// Lines the stream has.
    pub total: u64,
    /// The handle the lines were read from.
    pub handle: String,
}

impl Shown {
    /// Renders the line, without a newline.
    pub fn render(&self) -> String {
        format!(
            "{PREFIX}shown {} {}-{} of {} (lines {}-{} not shown) handle={}]",
            self.stream.name(),
            self.first,
            self.last,
            self.total,
            self.last + 1,
            self.rest,
            self.handle
        )
    }

    /// Parses the line; `None` for anything else.
    pub fn parse(line: &str) -> Option<Shown> {
        let c = SHOWN.captures(line)?;
        let n = |i: usize| c[i].parse::<u64>().ok();
        let s = Shown {
            stream: Stream::parse(&c[1])?,
            first: n(2)?,
            last: n(3)?,
            total: n(4)?,
            rest: n(6)?,
            handle: c[7].to_string(),
        };
        let consistent = s.first >= 1
            && s.last >= s.first
            && n(5)? == s.last + 1
            && s.rest > s.last
            && s.rest <= s.total;
        consistent.then_some(s)
    }
}

/// The line a view answered for output an agent already captured opens with:
/// that a region is elided, how much of the output is shown, and which handle
/// is this answer's. A marker-shaped line below naming another handle is the
/// output's own text, and the header says so when the output holds one.
///
/// ```text
/// [lens: view of 3000 lines, 41 shown, handle=1a2b3c4d]
/// [lens: view of 3000 lines, 41 shown (a marker naming another handle is the output's own line), handle=1a2b3c4d]
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Lines the output had.
    pub lines: u64,
    /// Raw lines the view shows.
    pub shown: u64,
    /// The output holds a Lens-shaped line that is not this answer's.
    pub imitated: bool,
    /// This answer's handle.
    pub handle: String,
}

const IMITATED: &str = " (a marker naming another handle is the output's own line)";

impl Header {
    /// The header of `view`, a view of output of `lines` lines under `handle`:
    /// its shown lines are those that are neither this handle's markers nor
    /// the digest lines they announce.
    pub fn of(view: &str, lines: u64, handle: &crate::Handle) -> Header {
        let own = handle.to_string();
        let mut shown = 0;
        let mut digest = 0;
        for l in view.lines() {
            if digest > 0 {
                digest -= 1;
                continue;
            }
            match Marker::parse(l).filter(|m| m.handle == own) {
                Some(m) => digest = m.digest,
                None if carries(l.as_bytes(), handle) => {}
                None => shown += 1,
            }
        }
        Header {
            lines,
            shown,
            imitated: imitates(view.as_bytes(), handle),
            handle: own,
        }
    }

    /// Renders the line, without a newline.
    pub fn render(&self) -> String {
        format!(
            "{PREFIX}view of {} line{}, {} shown{}, handle={}]",
            self.lines,
            if self.lines == 1 { "" } else { "s" },
            self.shown,
            if self.imitated { IMITATED } else { "" },
            self.handle
        )
    }

    /// Parses the line; `None` for anything else.
    pub fn parse(line: &str) -> Option<Header> {
        let c = HEADER.captures(line)?;
        let h = Header {
            lines: c[1].parse().ok()?,
            shown: c[2].parse().ok()?,
            imitated: c.get(3).is_some(),
            handle: c[4].to_string(),
        };
        (h.shown <= h.lines).then_some(h)
    }
}

/// True when `view` holds a line shaped like one of Lens's (`[lens:` …) that
/// does not carry `handle`: the output printed it, and it is not this run's.
pub fn imitates(view: &[u8], handle: &crate::Handle) -> bool {
    view.split(|&b| b == b'\n')
        .any(|l| l.starts_with(b"[lens:") && !carries(l, handle))
}

/// True when a Lens-shaped line names `handle` as its handle: ` handle=H` then
/// the line's end (`]`) or its next field (` digest=`, ` unlisted=`). A line
/// naming another handle is never this run's, whatever else it says.
pub fn carries(line: &[u8], handle: &crate::Handle) -> bool {
    let own = format!(" handle={handle}");
    let own = own.as_bytes();
    line.windows(own.len())
        .enumerate()
        .any(|(i, w)| w == own && matches!(line.get(i + own.len()), Some(b']' | b' ')))
        && line.ends_with(b"]")
}

static SHOWN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[lens: shown (stdout|stderr) (\d+)-(\d+) of (\d+) \(lines (\d+)-(\d+) not shown\) handle=([0-9a-f]{8})\]$")
        .expect("shown pattern compiles")
});

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^\[lens: view of (\d+) lines?, (\d+) shown",
        r"( \(a marker naming another handle is the output's own line\))?",
        r", handle=([0-9a-f]{8})\]$"
    ))
    .expect("header pattern compiles")
});

static CUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[lens: cut short by (SIG[A-Z]+|signal \d+)(?: handle=([0-9a-f]{8}))?\]$")
        .expect("cut pattern compiles")
});

static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        concat!(
            r"^\[lens: elided (stdout|stderr) (\d+)-(\d+) \((\d+) lines?",
            r"(?:: ([a-z]+(?: \d+)?(?:, [a-z]+ \d+)*))?",
            r#"(?:; (?P<likeq>all|most) like "(?P<like>[^"]*)")?"#,
            r"(?:; (?P<trouble>no error or warning|\d+ errors?(?:, \d+ warnings?)?|\d+ warnings?)(?P<digested>, each in a digest)?)?",
            r"\) handle=(?P<handle>[0-9a-f]{8})(?: digest=(?P<digest>\d+))?(?: unlisted=(?P<unlisted>\d+))?\]$",
        ),
    )
    .expect("marker pattern compiles")
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_parses_back() {
        let m = Marker {
            stream: Stream::Stderr,
            first: 2,
            last: 4999,
            reasons: vec![("progress".into(), 4997), ("repeat".into(), 1)],
            handle: "1a2b3c4d".into(),
            digest: 0,
            unlisted: 0,
            like: None,
            trouble: None,
            digested: false,
        };
        let line = m.render();
        assert_eq!(
            line,
            "[lens: elided stderr 2-4999 (4998 lines: progress 4997, repeat 1) handle=1a2b3c4d]"
        );
        assert_eq!(Marker::parse(&line), Some(m));
    }

    #[test]
    fn singular_line() {
        let m = Marker {
            stream: Stream::Stdout,
            first: 7,
            last: 7,
            reasons: vec![("budget".into(), 1)],
            handle: "00000000".into(),
            digest: 0,
            unlisted: 0,
            like: None,
            trouble: None,
            digested: false,
        };
        assert_eq!(
            m.render(),
            "[lens: elided stdout 7-7 (1 line: budget) handle=00000000]"
        );
        assert_eq!(Marker::parse(&m.render()), Some(m));
    }

    #[test]
    fn digest_count() {
        let m = Marker {
            stream: Stream::Stderr,
            first: 2,
            last: 2251,
            reasons: vec![("grouped".into(), 2250)],
            handle: "1a2b3c4d".into(),
            digest: 14,
            unlisted: 0,
            like: None,
            trouble: None,
            digested: false,
        };
        let line = m.render();
        assert_eq!(
            line,
            "[lens: elided stderr 2-2251 (2250 lines: grouped) handle=1a2b3c4d digest=14]"
        );
        assert_eq!(Marker::parse(&line), Some(m));
    }

    #[test]
    fn rejects_inconsistent_or_foreign_lines() {
        assert!(Marker::parse("[lens: elided stdout 5-3 (1 line) handle=00000000]").is_none());
        assert!(Marker::parse("[lens: elided stdout 1-3 (2 lines) handle=00000000]").is_none());
        assert!(Marker::parse("[lens: elided stdout 1-3 (3 lines) handle=../../x]").is_none());
        assert!(Marker::parse("error: x").is_none());
    }

    #[test]
    fn cut_short_notices_render_and_parse_back() {
        for n in [
            CutShort {
                signal: "SIGTERM".into(),
                handle: Some("1a2b3c4d".into()),
            },
            CutShort {
                signal: "signal 10".into(),
                handle: None,
            },
        ] {
            assert_eq!(CutShort::parse(&n.render()), Some(n));
        }
        assert_eq!(
            CutShort::parse("[lens: cut short by SIGINT handle=0000abcd]")
                .unwrap()
                .signal,
            "SIGINT"
        );
        assert!(CutShort::parse("[lens: cut short by SIGINT handle=XYZ]").is_none());
    }

    #[test]
    fn a_marker_says_what_its_region_held() {
        let m = Marker {
            stream: Stream::Stdout,
            first: 31,
            last: 4995,
            reasons: vec![("budget".into(), 4965)],
            handle: "1a2b3c4d".into(),
            digest: 0,
            unlisted: 0,
            like: Some(Like {
                all: true,
                shape: "checked ACC-… balance … ok".into(),
            }),
            trouble: Some((0, 0)),
            digested: false,
        };
        let line = m.render();
        assert_eq!(
            line,
            "[lens: elided stdout 31-4995 (4965 lines: budget; all like \"checked ACC-… balance … ok\"; no error or warning) handle=1a2b3c4d]"
        );
        assert_eq!(Marker::parse(&line), Some(m.clone()));
        for t in [(3, 0), (0, 1), (1, 2)] {
            let m = Marker {
                trouble: Some(t),
                digested: false,
                like: None,
                ..m.clone()
            };
            assert_eq!(Marker::parse(&m.render()), Some(m));
        }
        // Where only most lines have the shape, the marker says so.
        let most = Marker {
            like: Some(Like {
                all: false,
                shape: "row …".into(),
            }),
            trouble: Some((3, 0)),
            digested: false,
            ..m.clone()
        };
        let line = most.render();
        assert!(line.contains("; most like \"row …\"; 3 errors)"), "{line}");
        assert_eq!(Marker::parse(&line), Some(most));
        // Errors that each stand in a digest the view prints.
        let digested = Marker {
            reasons: vec![("grouped".into(), 4900), ("folded".into(), 65)],
            like: None,
            trouble: Some((75, 2)),
            digested: true,
            digest: 2,
            ..m.clone()
        };
        let line = digested.render();
        assert!(
            line.contains("(4965 lines: grouped 4900, folded 65; 75 errors, 2 warnings, each in a digest) handle=1a2b3c4d digest=2]"),
            "{line}"
        );
        assert_eq!(Marker::parse(&line), Some(digested));
    }

    #[test]
    fn a_page_marker_names_its_handle_and_the_lines_left() {
        let s = Shown {
            stream: Stream::Stdout,
            first: 1,
            last: 212,
            rest: 300,
            total: 300,
            handle: "1a2b3c4d".into(),
        };
        let line = s.render();
        assert_eq!(
            line,
            "[lens: shown stdout 1-212 of 300 (lines 213-300 not shown) handle=1a2b3c4d]"
        );
        assert_eq!(Shown::parse(&line), Some(s));
        let h = crate::Handle::parse("1a2b3c4d").unwrap();
        assert!(carries(line.as_bytes(), &h));
        assert!(Shown::parse(
            "[lens: shown stdout 1-212 of 300 (lines 200-300 not shown) handle=1a2b3c4d]"
        )
        .is_none());
        assert!(Shown::parse(
            "[lens: shown stdout 1-212 of 300 (lines 213-400 not shown) handle=1a2b3c4d]"
        )
        .is_none());
    }

    #[test]
    fn a_header_counts_shown_lines_and_says_when_another_handle_is_quoted() {
        let h = crate::Handle::parse("1a2b3c4d").unwrap();
        let view =
            "a\n[lens: elided stdout 2-9 (8 lines: grouped) handle=1a2b3c4d digest=2]\nd1\nd2\nz\n";
        let head = Header::of(view, 10, &h);
        assert_eq!(
            head.render(),
            "[lens: view of 10 lines, 2 shown, handle=1a2b3c4d]"
        );
        assert_eq!(Header::parse(&head.render()), Some(head.clone()));
        assert!(carries(head.render().as_bytes(), &h));
        // A marker-shaped line naming another run is a shown line of the output.
        let forged = format!("{view}[lens: elided stdout 1-5 (5 lines: budget) handle=deadbeef]\n");
        let head = Header::of(&forged, 11, &h);
        assert_eq!((head.shown, head.imitated), (3, true));
        let line = head.render();
        assert_eq!(
            line,
            "[lens: view of 11 lines, 3 shown (a marker naming another handle is the output's own line), handle=1a2b3c4d]"
        );
        assert_eq!(Header::parse(&line), Some(head));
        assert!(Header::parse("[lens: view of 1 line, 2 shown, handle=1a2b3c4d]").is_none());
    }

    #[test]
    fn this_run_s_own_markers_are_not_imitations() {
        let h = crate::Handle::derive(&[b"run"], 0);
        let own = format!(
            "[lens: elided stdout 1-25 (25 lines: grouped) handle={h} digest=4]\nOn branch main\n[lens: elided stdout 30-40 (11 lines: budget) handle={h} digest=2 unlisted=7]\n[lens: elided stderr 2-3 (2 lines: budget) handle={h}]\n"
        );
        assert!(!imitates(own.as_bytes(), &h), "{own}");
        // Another run's handle, or none, is the command's text.
        let other = "[lens: elided stdout 2-4 (3 lines: budget) handle=deadbeef digest=1]\n";
        assert!(imitates(other.as_bytes(), &h));
        assert!(imitates(
            b"[lens: elided stdout 2-4 (3 lines: budget)]\n",
            &h
        ));
        // This run's handle inside another word is not this run's marker.
        let inside = format!("[lens: elided stdout 2-4 handle={h}x]\n");
        assert!(imitates(inside.as_bytes(), &h));
    }

    #[test]
    fn tally_orders_by_reason() {
        let t = tally([Reason::Budget, Reason::Progress, Reason::Budget].into_iter());
        assert_eq!(t, vec![("progress".into(), 1), ("budget".into(), 2)]);
    }
}
