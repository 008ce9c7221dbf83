//! Digests: the compact, lossless view a stage can put in place of a region whose
//! every line is distinct and real (fifty findings, a commit log, a file listing).
//!
//! A stage builds the typed body and drops the region's lines as `Grouped`; `render`
//! prints the region's marker with `digest=N` and then the N lines `Digest::lines`
//! formats. Every location and name in a digest is copied from the raw output as
//! printed, so `file:line` references stay exact, and the marker's handle and range
//! still fetch the raw region.

pub(crate) mod body;

use crate::doc::{Doc, Stream};
use crate::stages::shorten::{self, Item};

pub use crate::text::{brace_range, factor, number_run_spans, number_runs, shared_prefix, slots};
pub use body::{Body, Digest, Entry, FindingGroup, List, Nouns};

/// How a digest is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Everything (level 2).
    Full,
    /// Everything, but findings whose messages differ list each location with
    /// its values instead of a line per report: what `Full` falls back to when
    /// it does not fit, or is no smaller than the region it replaces.
    Compact,
    /// At most `HEAD` lines (level 1); a list, in the bytes its first
    /// `HEAD` lines would take.
    Head,
}

/// Lines a level-1 digest shows at most.
pub const HEAD: usize = 20;

impl List {
    /// The list in `room` when not even its keys fit: its head lines, then its
    /// entries as [`shorten::fit`] gives them, each at least its bare key and
    /// count or under a group that counts it.
    fn degraded(&self, room: usize) -> (Vec<String>, usize) {
        let mut out = Vec::new();
        let mut unlisted = 0;
        let mut left = room;
        for h in &self.head {
            if h.len() < left {
                left -= h.len() + 1;
                out.push(h.clone());
            } else {
                unlisted += 1;
            }
        }
        if self.within {
            let (lines, n) = self.each_entry_degraded(left);
            out.extend(lines);
            return (out, unlisted + n);
        }
        let items: Vec<Item> = self
            .entries
            .iter()
            .map(|e| {
                let key = e.key.trim_end_matches([':', '|']).trim_end().to_string();
                let n = e.items.len();
                let bare = match self.nouns.name {
                    Some(name) => format!("{key} ({})", shorten::counted(n, name)),
                    None => key.clone(),
                };
                let mut forms = vec![(listing_line(e).render(), 0)];
                // An upgrade (`old -> new`) gives up where it comes from
                // before it gives up where it goes. Its items are versions,
                // not names: a package named without them is not unlisted.
                let upgrade = is_upgrade(e);
                if upgrade {
                    let to: Vec<&str> = e
                        .items
                        .iter()
                        .filter_map(|i| i.rsplit(" -> ").next())
                        .collect();
                    forms.push((format!("{key} -> {}", to.join(", ")), 0));
                }
                forms.push((bare, if upgrade { 0 } else { n }));
                Item {
                    forms,
                    key,
                    names: n.max(1),
                }
            })
            .collect();
        let (lines, n) = shorten::fit(&items, left, self.nouns);
        out.extend(lines);
        (out, unlisted + n)
    }

    /// A `within` list in `room`: entries without items (a branch line) in
    /// order while they fit half of it, and each entry with items its key then, on lines of their own indented
    /// by two spaces, its items as [`shorten::fit`] gives them in its share of
    /// the room (the smallest entries whole, the rest an equal share).
    fn each_entry_degraded(&self, room: usize) -> (Vec<String>, usize) {
        // Lines of their own (a branch line, or what follows the status in a
        // region that holds more) in order while they fit in half the room;
        // the files get the rest.
        let mut plain = vec![false; self.entries.len()];
        let mut plain_left = room / 2;
        for (k, e) in self.entries.iter().enumerate() {
            if e.items.is_empty() && e.key.len() < plain_left {
                plain_left -= e.key.len() + 1;
                plain[k] = true;
            }
        }
        let mut left = room - (room / 2 - plain_left);
        let whole =
            |e: &Entry| e.key.len() + 1 + e.items.iter().map(|i| i.len() + 3).sum::<usize>();
        let mut order: Vec<usize> = (0..self.entries.len())
            .filter(|&k| !self.entries[k].items.is_empty())
            .collect();
        order.sort_by_key(|&k| whole(&self.entries[k]));
        let mut share = vec![0usize; self.entries.len()];
        let mut count = order.len();
        for k in order {
            let give = whole(&self.entries[k]).min(left / count.max(1));
            share[k] = give;
            left -= give;
            count -= 1;
        }
        let mut out = Vec::new();
        let mut unlisted = 0;
        for ((e, share), shown) in self.entries.iter().zip(share).zip(plain) {
            if e.items.is_empty() {
                if shown {
                    out.push(e.key.clone());
                } else {
                    unlisted += 1;
                }
                continue;
            }
            // A file's path, less the status letters before it (`M `, `UU `).
            let path = |i: &str| -> String {
                match i.split_once(' ') {
                    Some((code, p))
                        if code.len() <= 2 && code.chars().all(|c| c.is_ascii_uppercase()) =>
                    {
                        p.to_string()
                    }
                    _ => i.to_string(),
                }
            };
            // An `ls` name gives up its size before anything else
            // (`a.log(4096)`, a run's `a{1..3}.log (12-40)`), and groups by
            // the name alone.
            let sized = |i: &str| -> Option<String> {
                let (name, size) = i.strip_suffix(')')?.rsplit_once('(')?;
                let digit = size.starts_with(|c: char| c.is_ascii_digit());
                (digit && !name.is_empty()).then(|| name.trim_end().to_string())
            };
            // A size ten times the median or more is what a reader looks for
            // in a listing: it is never given up.
            let bytes =
                |i: &str| -> Option<u64> { i.strip_suffix(')')?.rsplit_once('(')?.1.parse().ok() };
            let mut sizes: Vec<u64> = e.items.iter().filter_map(|i| bytes(i)).collect();
            sizes.sort_unstable();
            let median = (sizes.len() >= 8).then(|| sizes[sizes.len() / 2].max(1));
            let outlier = |i: &str| median.is_some_and(|m| bytes(i).is_some_and(|b| b >= m * 10));
            let items: Vec<Item> = e
                .items
                .iter()
                .map(|i| {
                    let name = sized(i);
                    let key = name.as_deref().unwrap_or(i).trim_end_matches('*');
                    let mut forms = vec![(i.clone(), 0)];
                    forms.extend(name.clone().filter(|_| !outlier(i)).map(|b| (b, 0)));
                    Item {
                        forms,
                        key: path(key),
                        names: 1,
                    }
                })
                .collect();
            let room = share.saturating_sub(e.key.len() + 1);
            let mut fitted = shorten::fit(&items, room, self.nouns);
            // Each line costs two more bytes for its indent.
            let indents = 2 * fitted.0.len();
            if fitted.0.iter().map(|l| l.len() + 1).sum::<usize>() + indents > room {
                fitted = shorten::fit(&items, room.saturating_sub(indents), self.nouns);
            }
            out.push(e.key.clone());
            out.extend(fitted.0.into_iter().map(|l| format!("  {l}")));
            unlisted += fitted.1;
        }
        (out, unlisted)
    }
}

impl Digest {
    /// A digest of ready lines for lines `start..end` of `stream`, not a failure.
    pub fn of_lines(stream: Stream, start: usize, end: usize, lines: Vec<String>) -> Digest {
        Digest {
            stream,
            start,
            end,
            failure: false,
            body: Body::Lines(lines),
            needs: Vec::new(),
            room: None,
        }
    }

    /// The digest's lines for `doc`.
    pub fn lines(&self, doc: &Doc, detail: Detail) -> Vec<String> {
        self.lines_within(doc, detail, usize::MAX).0
    }

    /// The digest's lines in at most `room` bytes (newlines counted), and how many
    /// names (locations, entries, lines) it leaves out to fit. A list is cut
    /// between two of its items and ends in `…`; the names left out are still in
    /// the raw region the marker names.
    pub fn lines_within(&self, doc: &Doc, detail: Detail, room: usize) -> (Vec<String>, usize) {
        if let Body::History(h) = &self.body {
            let max_lines = if detail == Detail::Head {
                HEAD
            } else {
                usize::MAX
            };
            return h.lines_within(room, max_lines);
        }
        let mut pieces = self.pieces(doc, detail);
        let mut whole: usize = pieces.iter().map(|p| p.len() + 1).sum();
        if detail == Detail::Full && matches!(self.body, Body::Findings(_)) {
            let raw: usize = doc.lines[self.start..self.end]
                .iter()
                .map(|l| l.text.len() + 1)
                .sum();
            // Without the excerpts (`names_first` drops those first), it must fit.
            let essential: usize = pieces
                .iter()
                .filter(|p| !p.extra)
                .map(|p| p.len() + 1)
                .sum();
            if essential > room || whole >= raw {
                pieces = self.pieces(doc, Detail::Compact);
                whole = pieces.iter().map(|p| p.len() + 1).sum();
            }
        }
        let (mut out, unlisted) = if whole <= room {
            (pieces.iter().map(Piece::render).collect(), 0)
        } else if let Body::List(list @ List { within: true, .. }) = &self.body {
            list.degraded(room)
        } else if let Some(list) = upgrades(&self.body) {
            // Packages to upgrade: each keeps its name and where it goes
            // before any loses its versions (`names_first` would keep a
            // prefix of them whole and cut the rest to bare names).
            list.degraded(room)
        } else {
            names_first(&pieces, room)
                .or_else(|| headings_only(&pieces, room))
                .unwrap_or_else(|| match &self.body {
                    // A list is never cut to a prefix of itself.
                    Body::List(list) => list.degraded(room),
                    _ => in_order(&pieces, room),
                })
        };
        // A hunk is one piece, shown whole or not at all; its lines are lines.
        if out.iter().any(|l| l.contains('\n')) {
            out = out
                .iter()
                .flat_map(|l| l.split('\n').map(str::to_string))
                .collect();
        }
        if detail == Detail::Head && out.len() > HEAD {
            if let Body::List(_) = &self.body {
                // A list is fitted by the same ladder into the bytes its first
                // lines would take; a prefix of it is never the view.
                let head: usize = out[..HEAD].iter().map(|l| l.len() + 1).sum();
                return self.lines_within(doc, Detail::Full, head);
            }
            let more = out.len() - (HEAD - 1);
            out.truncate(HEAD - 1);
            out.push(format!(
                "… {more} more digest lines (the raw region is in the marker above)"
            ));
        }
        (out, unlisted)
    }

    fn pieces(&self, doc: &Doc, detail: Detail) -> Vec<Piece> {
        match &self.body {
            Body::Lines(l) => l.iter().map(|t| Piece::text(t.clone())).collect(),
            Body::Sections(sections) => sections
                .iter()
                .flat_map(|(head, lines)| {
                    let mut h = Piece::text(head.clone());
                    h.heading = true;
                    let h = (!head.is_empty()).then_some(h);
                    h.into_iter().chain(hunks(lines).map(Piece::text))
                })
                .collect(),
            Body::Redrawn(t) => vec![Piece::text(t.clone())],
            Body::History(h) => h.lines().into_iter().map(Piece::text).collect(),
            Body::Listing { template, entries } => {
                let mut l: Vec<Piece> = template
                    .iter()
                    .map(|(p, s)| Piece::text(format!("each item below stands for: {p}…{s}")))
                    .collect();
                l.extend(entries.iter().map(listing_line));
                l
            }
            Body::List(List {
                head,
                template,
                entries,
                ..
            }) => {
                let mut l: Vec<Piece> = head.iter().map(|h| Piece::text(h.clone())).collect();
                l.extend(
                    template
                        .iter()
                        .map(|(p, s)| Piece::text(format!("each item below stands for: {p}…{s}"))),
                );
                l.extend(entries.iter().map(listing_line));
                l
            }
            Body::Findings(groups) if detail == Detail::Head => {
                // The failures first: a partial view must not cut the error off.
                let mut sorted: Vec<FindingGroup> = groups.clone();
                sorted.sort_by_key(|g| !g.error);
                findings(doc, &sorted, detail)
            }
            Body::Findings(groups) => findings(doc, groups, detail),
        }
    }
}

/// A section's lines as the pieces a cut takes or leaves: each diff hunk (its
/// `@@` line and the changed lines under it) joined by newlines into one, so a
/// cut never leaves a lone `+`; every other line on its own.
fn hunks(lines: &[String]) -> impl Iterator<Item = String> + '_ {
    hunk_spans(lines)
        .into_iter()
        .map(|(a, b)| lines[a..b].join("\n"))
}

/// Where each of a section's pieces starts and ends: a hunk is its `@@` line and
/// the changed lines under it, every other line a piece of its own.
pub(crate) fn hunk_spans(lines: &[String]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i + 1;
        if lines[i].starts_with("@@ ") {
            while j < lines.len() && lines[j].starts_with(['+', '-']) {
                j += 1;
            }
        }
        spans.push((i, j));
        i = j;
    }
    spans
}

/// One digest line: a head, then a list of items (names) joined by `sep`.
struct Piece {
    head: String,
    items: Vec<String>,
    sep: &'static str,
    /// A section's heading: a name kept before any line under a heading is.
    heading: bool,
    /// Source a finding quotes (its excerpt): the first text to go when the
    /// digest is cut, after every location is placed. The reader has it: it is in
    /// the file, at the line the finding names.
    extra: bool,
}

/// A digest cut to `room` with its names first: every section heading, and
/// every list's head (its key or rule, then `…`), are kept before anything else;
/// then the other lines while each fits, the unusual ones first ([`unusual`]),
/// then the rest in order, or, under headings, by size ([`fill_sections`]);
/// then the lists' items, one round at a time (every
/// list's next item, then the next, …), the unusual items in rounds of their
/// own before any other, so what went is what repeats. A list keeps its items in
/// their order, each run of left-out items printed as one `… +N`. `None` when the
/// names alone do not fit.
fn names_first(pieces: &[Piece], room: usize) -> Option<(Vec<String>, usize)> {
    // A run of left-out items prints as `… +N`, N the items it stands for, so
    // a reader sees how much of the list is not shown; the room held for one is
    // that of a six-digit count.
    const MORE: usize = "… +999999".len();
    let reserved: usize = pieces
        .iter()
        .map(|p| match (p.heading, p.items.is_empty()) {
            (true, _) => p.len() + 1,
            (false, false) => p.head.len() + MORE + 1,
            (false, true) => 0,
        })
        .sum();
    let mut left = room.checked_sub(reserved)?;
    let (rare_line, rare_item) = unusual(pieces);
    let mut text = vec![false; pieces.len()];
    let is_line = |k: usize| {
        let p = &pieces[k];
        !p.heading && p.items.is_empty() && !p.extra
    };
    for (k, p) in pieces.iter().enumerate() {
        if is_line(k) && rare_line[k] && p.len() < left {
            left -= p.len() + 1;
            text[k] = true;
        }
    }
    if pieces.iter().any(|p| p.heading) {
        fill_sections(pieces, &is_line, &mut text, &mut left);
    } else {
        for (k, p) in pieces.iter().enumerate() {
            if is_line(k) && !text[k] && p.len() < left {
                left -= p.len() + 1;
                text[k] = true;
            }
        }
    }
    let mut unlisted = (0..pieces.len())
        .filter(|&k| {
            let p = &pieces[k];
            !p.heading && p.items.is_empty() && !p.extra && !text[k]
        })
        .count();
    // Items a round at a time; in each of the two passes (the unusual items,
    // then the rest) a list stops at its first item that does not fit.
    let mut taken: Vec<Vec<bool>> = pieces.iter().map(|p| vec![false; p.items.len()]).collect();
    for rare in [true, false] {
        let mut next = vec![0usize; pieces.len()];
        let mut open: Vec<usize> = (0..pieces.len())
            .filter(|&k| !pieces[k].items.is_empty())
            .collect();
        while !open.is_empty() {
            open.retain(|&k| {
                let p = &pieces[k];
                let t = &mut taken[k];
                let Some(n) = (next[k]..p.items.len()).find(|&n| !t[n] && rare_item[k][n] == rare)
                else {
                    return false;
                };
                // The item replaces the `…` standing for the run it is in; what is
                // left of that run on either side is a `…` of its own.
                let gap_before = n > 0 && !t[n - 1];
                let gap_after = n + 1 < p.items.len() && !t[n + 1];
                let tokens = usize::from(gap_before) + usize::from(gap_after);
                let cost = p.items[n].len() + tokens * (MORE + p.sep.len());
                let cost = cost.saturating_sub(MORE);
                if cost > left {
                    return false;
                }
                left -= cost;
                t[n] = true;
                next[k] = n + 1;
                true
            });
        }
    }
    // Then excerpts, in order, while each fits; one cut leaves the rest out (half
    // an excerpt reads as a different one).
    for (k, p) in pieces.iter().enumerate() {
        if p.extra {
            if p.len() >= left {
                break;
            }
            left -= p.len() + 1;
            text[k] = true;
        }
    }
    let mut out = Vec::new();
    for (k, p) in pieces.iter().enumerate() {
        if p.heading || (p.items.is_empty() && text[k]) {
            out.push(p.render());
        } else if !p.items.is_empty() {
            let mut tokens: Vec<String> = Vec::new();
            let mut run = 0;
            for (n, item) in p.items.iter().enumerate() {
                if taken[k][n] {
                    if run > 0 {
                        tokens.push(format!("… +{run}"));
                        run = 0;
                    }
                    tokens.push(item.clone());
                } else {
                    unlisted += 1;
                    run += 1;
                }
            }
            if run > 0 {
                tokens.push(format!("… +{run}"));
            }
            out.push(format!("{}{}", p.head, tokens.join(p.sep)));
        }
    }
    Some((out, unlisted))
}

/// The lines under a sectioned digest's headings (a commit's or a file's hunks),
/// placed in what `left` holds: first whole sections, the smallest first, so the
/// most commits or files show everything they changed; then, in what is still
/// left, single hunks of the sections too large to show whole, the smallest
/// first. A hunk is one piece: shown whole or not at all. Which stays is chosen
/// by size only; the digest prints them in their places.
fn fill_sections(
    pieces: &[Piece],
    is_line: &dyn Fn(usize) -> bool,
    text: &mut [bool],
    left: &mut usize,
) {
    let mut sections: Vec<Vec<usize>> = vec![Vec::new()];
    for (k, p) in pieces.iter().enumerate() {
        if p.heading {
            sections.push(Vec::new());
        } else if is_line(k) && !text[k] {
            sections.last_mut().expect("one section").push(k);
        }
    }
    let cost = |s: &[usize]| s.iter().map(|&k| pieces[k].len() + 1).sum::<usize>();
    sections.retain(|s| !s.is_empty());
    sections.sort_by_key(|s| cost(s));
    for s in &sections {
        let c = cost(s);
        if c <= *left {
            *left -= c;
            for &k in s {
                text[k] = true;
            }
        }
    }
    let mut rest: Vec<usize> = sections
        .concat()
        .into_iter()
        .filter(|&k| !text[k])
        .collect();
    rest.sort_by_key(|&k| pieces[k].len());
    for k in rest {
        if pieces[k].len() >= *left {
            break;
        }
        *left -= pieces[k].len() + 1;
        text[k] = true;
    }
}

/// Which of a digest's lines (those without items) and which of its lists'
/// items are unusual: their template (a line's shape, an item's first word, with
/// every word holding a digit masked) occurs once among many that repeat, or,
/// for a listing's `name(bytes)`, the size is ten times the median or more (a
/// range of names counts its smallest and largest size in the median). When
/// most entries are one of a kind, none is unusual by its template: there is no
/// routine to stand out from.
fn unusual(pieces: &[Piece]) -> (Vec<bool>, Vec<Vec<bool>>) {
    use std::collections::HashMap;
    let first_word = |item: &str| -> u64 {
        // A grep item's line number (`12:`) is where it is, not what it says.
        let t = item.trim_start_matches(|c: char| c.is_ascii_digit());
        let t = if t.len() < item.len() {
            t.strip_prefix(':').unwrap_or(item)
        } else {
            item
        };
        // Its first word that holds a letter: a comment's `//` or `#` says nothing.
        let word = t
            .split_whitespace()
            .find(|w| w.chars().any(char::is_alphabetic))
            .unwrap_or("");
        crate::stages::rank::shape(word)
    };
    let is_line = |p: &Piece| !p.heading && p.items.is_empty() && !p.extra;
    let line_shapes: Vec<Option<u64>> = pieces
        .iter()
        .map(|p| is_line(p).then(|| crate::stages::rank::shape(&p.head)))
        .collect();
    let item_shapes: Vec<Vec<u64>> = pieces
        .iter()
        .map(|p| p.items.iter().map(|i| first_word(i)).collect())
        .collect();
    let rare_of = |shapes: &mut dyn Iterator<Item = u64>| -> HashMap<u64, bool> {
        let mut count: HashMap<u64, usize> = HashMap::new();
        let mut total = 0;
        for s in shapes {
            *count.entry(s).or_default() += 1;
            total += 1;
        }
        let once = count.values().filter(|&&n| n == 1).count();
        let informative = total >= 4 && once * 4 <= total;
        count
            .into_iter()
            .map(|(s, n)| (s, informative && n == 1))
            .collect()
    };
    let lines = rare_of(&mut line_shapes.iter().flatten().copied());
    let items = rare_of(&mut item_shapes.iter().flatten().copied());
    let rare_line = line_shapes
        .iter()
        .map(|s| s.is_some_and(|s| lines[&s]))
        .collect();
    // Sizes as `ls` digests print them: `name(1234)`, `name*(1234)`; a run of
    // names, `name{1..9} (12-3400)` or `(12 each)`, counts its smallest and largest.
    let size =
        |item: &str| -> Option<u64> { item.strip_suffix(')')?.rsplit_once('(')?.1.parse().ok() };
    let run_sizes = |item: &str| -> Vec<u64> {
        let Some(span) = item.strip_suffix(')').and_then(|i| i.rsplit_once(" (")) else {
            return Vec::new();
        };
        let span = span.1.strip_suffix(" each").unwrap_or(span.1);
        span.split('-').map_while(|n| n.parse().ok()).collect()
    };
    let mut sizes: Vec<u64> = pieces
        .iter()
        .flat_map(|p| p.items.iter())
        .flat_map(|i| size(i).map_or_else(|| run_sizes(i), |z| vec![z]))
        .collect();
    sizes.sort_unstable();
    let median = (sizes.len() >= 8).then(|| sizes[sizes.len() / 2]);
    let rare_item = pieces
        .iter()
        .zip(&item_shapes)
        .map(|(p, shapes)| {
            p.items
                .iter()
                .zip(shapes)
                .map(|(i, s)| {
                    let outlier =
                        median.is_some_and(|m| size(i).is_some_and(|z| z >= m.max(1) * 10));
                    items[s] || outlier
                })
                .collect()
        })
        .collect();
    (rare_line, rare_item)
}

/// A sectioned digest whose headings alone do not fit `room` (a commit line per
/// commit of a long `git log -p`): the headings in order while they fit, the
/// lines under them left out. `None` without headings.
fn headings_only(pieces: &[Piece], room: usize) -> Option<(Vec<String>, usize)> {
    if !pieces.iter().any(|p| p.heading) {
        return None;
    }
    let mut out = Vec::new();
    let mut left = room;
    let mut unlisted = 0;
    for p in pieces {
        if p.heading && p.len() < left {
            left -= p.len() + 1;
            out.push(p.render());
        } else {
            unlisted += p.names();
        }
    }
    Some((out, unlisted))
}

/// A digest cut to `room` in order: lines while they fit, the first that does
/// not cut between two of its items, nothing after it.
fn in_order(pieces: &[Piece], room: usize) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut left = room;
    let mut unlisted = 0;
    let mut rest = pieces.iter();
    for p in rest.by_ref() {
        let cost = p.len() + 1;
        if cost <= left {
            left -= cost;
            out.push(p.render());
            continue;
        }
        let mut line = p.head.clone();
        let mut shown = 0;
        for (i, item) in p.items.iter().enumerate() {
            let sep = if i == 0 { "" } else { p.sep };
            if line.len() + sep.len() + item.len() + p.sep.len() + "…".len() + 1 > left {
                break;
            }
            line.push_str(sep);
            line.push_str(item);
            shown += 1;
        }
        if shown > 0 {
            line.push_str(p.sep);
            line.push('…');
            out.push(line);
            unlisted += p.items.len() - shown;
        } else {
            unlisted += p.names();
        }
        break;
    }
    unlisted += rest.map(Piece::names).sum::<usize>();
    (out, unlisted)
}

impl Piece {
    fn text(head: String) -> Piece {
        Piece {
            head,
            items: Vec::new(),
            sep: "",
            heading: false,
            extra: false,
        }
    }

    fn len(&self) -> usize {
        self.head.len()
            + self.items.iter().map(String::len).sum::<usize>()
            + self.sep.len() * self.items.len().saturating_sub(1)
    }

    /// Names the line gives: its items, or itself.
    fn names(&self) -> usize {
        self.items.len().max(1)
    }

    fn render(&self) -> String {
        let mut s = self.head.clone();
        s.push_str(&self.items.join(self.sep));
        s
    }
}

/// The list, when it is one of packages to upgrade.
fn upgrades(body: &Body) -> Option<&List> {
    match body {
        Body::List(list) if list.entries.iter().all(is_upgrade) => Some(list),
        _ => None,
    }
}

/// An entry whose every item is a change of version, `old -> new` (apt's
/// upgradable packages).
fn is_upgrade(e: &Entry) -> bool {
    !e.items.is_empty() && e.items.iter().all(|i| i.contains(" -> "))
}

fn listing_line(e: &Entry) -> Piece {
    let items = number_runs(&e.items);
    // Items are space-separated unless one holds a space itself; then commas,
    // unless one holds a comma too.
    let sep = if !items.iter().any(|i| i.contains(' ')) {
        " "
    } else if !items.iter().any(|i| i.contains(", ")) {
        ", "
    } else {
        " | "
    };
    let head = if items.is_empty() {
        e.key.clone()
    } else {
        format!("{} ", e.key)
    };
    Piece {
        head,
        items,
        sep,
        heading: false,
        extra: false,
    }
}

fn findings(doc: &Doc, groups: &[FindingGroup], detail: Detail) -> Vec<Piece> {
    let mut out = Vec::new();
    for g in groups {
        let example: Vec<String> = g
            .example
            .iter()
            .map(|&i| doc.lines[i].text.to_string())
            .collect();
        // A report printed under its file's header (ESLint's stylish) does not name
        // its path: say where it is.
        let first = &g.at[0].0;
        let path = first.split([':', '(']).next().unwrap_or(first);
        if !example.iter().any(|l| l.contains(path)) {
            out.push(Piece::text(format!("{first}:")));
        }
        // The lines through the one naming the location, and the help or note
        // saying what to do, are the report; the rest is the source it quotes.
        let placed = example.iter().position(|l| l.contains(path)).unwrap_or(0);
        out.extend(example.into_iter().enumerate().map(|(k, l)| {
            let t = l.trim_start();
            let hint = t.starts_with("help:") || t.starts_with("= help:") || t.contains("note: ");
            let mut p = Piece::text(l);
            p.extra = k > placed && !hint;
            p
        }));
        if g.at.len() < 2 {
            continue;
        }
        // A directory every location shares is printed once.
        let locs: Vec<&str> = g.at.iter().map(|(l, _)| l.as_str()).collect();
        // Cut one directory short of the common prefix, so every location keeps its
        // nearest directory and still reads as the path the tool printed.
        let common = shared_prefix(&locs);
        let cut = common
            .trim_end_matches(|c| c != '/')
            .trim_end_matches('/')
            .rfind('/')
            .map_or(0, |i| i + 1);
        let shared = if cut >= 10 { &first[..cut] } else { "" };
        let under = if shared.is_empty() {
            String::new()
        } else {
            // Said as what it is: the directory the paths below are relative to,
            // not a location of its own (`in /tmp/p/: app/src/…` read as a split path).
            format!(" (paths from {shared})")
        };
        // Messages that differ in their values (which name is unused, which type
        // was expected) are not one cause said again: each report keeps its whole
        // message, one line each as a linter's concise format prints it, without
        // the source excerpt. Only the first is shown with its excerpt, above. The
        // compact and short views list each location with its values instead.
        if detail == Detail::Full && g.at.iter().any(|(_, vals)| !vals.is_empty()) {
            out.push(Piece::text(format!("{} ×{}{under}:", g.rule, g.at.len())));
            for ((loc, _), said) in g.at.iter().zip(&g.said).skip(1) {
                out.push(Piece::text(format!("  {} {said}", &loc[shared.len()..])));
            }
            continue;
        }
        // A column every location shares (a use site repeated on the same line of
        // each file) is said once: `file:line` still names each place exactly.
        let column = shared_column(&locs);
        let strip = column.map_or(0, |c| c.len() + 1);
        let mut notes: Vec<String> = Vec::new();
        if !shared.is_empty() {
            notes.push(format!("paths from {shared}"));
        }
        if let Some(c) = column {
            notes.push(format!("each at column {c}"));
        }
        let under = parenthesised(&notes);
        // A location reported again (a header's error, once per file including
        // it) is listed once, with how many times.
        let mut list: Vec<(String, usize)> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for (loc, vals) in &g.at {
            let loc = &loc[shared.len()..loc.len() - strip];
            let item = if vals.is_empty() {
                loc.to_string()
            } else {
                format!("{loc} {}", vals.join(" "))
            };
            match index.get(&item) {
                Some(&k) => list[k].1 += 1,
                None => {
                    index.insert(item.clone(), list.len());
                    list.push((item, 1));
                }
            }
        }
        // One message at every location of a cascade (a header's error in each
        // file that includes it): the line says each place holds the report
        // printed just above it, so the reader need not fetch one to know,
        // and its places fold into brace ranges. (Quoting the message again
        // would repeat the example line above it.) A pair is left as it was.
        let said = &g.said[0];
        let same = g.at.len() >= SAME_MIN
            && g.at.iter().all(|(_, vals)| vals.is_empty())
            && g.said.iter().all(|s| s == said);
        let list: Vec<String> = if same {
            fold_locations(&list)
        } else {
            list.into_iter()
                .map(|(item, n)| {
                    if n > 1 {
                        format!("{item} (×{n})")
                    } else {
                        item
                    }
                })
                .collect()
        };
        let head = if same {
            // Reports that quote their source look alike only as far as the
            // example shows; when each one's quoted code is the example's but for
            // its numbers, the line says so, and the reader need not open the
            // files to see how the other places read.
            if g.alike {
                notes.push(ALIKE.to_string());
            }
            format!(
                "same {} ×{}{} at: ",
                g.rule,
                g.at.len(),
                parenthesised(&notes)
            )
        } else {
            format!("{} ×{}{under}: ", g.rule, g.at.len())
        };
        out.push(Piece {
            head,
            items: list,
            sep: ", ",
            heading: false,
            extra: false,
        });
    }
    out
}

/// The fewest reports of one message that its list line says it for.
const SAME_MIN: usize = 4;

/// What a list line says of reports that read as its example but for their
/// numbers.
pub const ALIKE: &str = "each as the report above but for its numbers";

/// ` (a; b)`, or nothing for no notes.
fn parenthesised(notes: &[String]) -> String {
    if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    }
}

/// Locations of one message, each with how many times it was reported, as
/// list items: the numbered files that share a line and column
/// (`src/codec_00.c:4:10`, `src/codec_01.c:4:10`, …) and a directory are one
/// brace range (`src/codec_{00..15}.c:4:10`) that expands back to each of
/// them; the rest as printed. Each item stands where its first location stood.
fn fold_locations(list: &[(String, usize)]) -> Vec<String> {
    // `path:line[:col]` split before its line: `src/a.c`, `:4:10`.
    let split = |loc: &str| -> Option<(usize, usize)> {
        let bare = loc.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
        let at = bare.len() + loc[bare.len()..].find(':')?;
        let file = &loc[..at];
        (loc.len() - at > 1 && !file.is_empty() && !file.contains(['{', '}', ',', ' ']))
            .then(|| (file.rfind('/').map_or(0, |i| i + 1), at))
    };
    let plain = |(loc, n): &(String, usize)| match n {
        1 => loc.clone(),
        n => format!("{loc} (×{n})"),
    };
    // Locations by directory, line and count, in order of first appearance.
    type Key<'a> = (&'a str, &'a str, usize);
    let mut groups: Vec<(Key, Vec<usize>)> = Vec::new();
    let mut group_of = vec![None; list.len()];
    for (k, (loc, n)) in list.iter().enumerate() {
        let Some((leaf, at)) = split(loc) else {
            continue;
        };
        let key = (&loc[..leaf], &loc[at..], *n);
        let g = match groups.iter().position(|g| g.0 == key) {
            Some(g) => g,
            None => {
                groups.push((key, Vec::new()));
                groups.len() - 1
            }
        };
        groups[g].1.push(k);
        group_of[k] = Some(g);
    }
    // Numbered runs only: a range is what a reader (and the compare table's
    // name check) expands back; a group without one stays as printed, in order.
    let folded: Vec<Option<Vec<String>>> = groups
        .iter()
        .map(|((dir, rest, n), members)| {
            let names: Vec<String> = members
                .iter()
                .map(|&k| list[k].0[dir.len()..list[k].0.len() - rest.len()].to_string())
                .collect();
            let runs = number_runs(&names);
            (runs.len() < names.len()).then(|| {
                runs.iter()
                    .map(|run| match (n, run.contains("..")) {
                        (1, _) => format!("{dir}{run}{rest}"),
                        (n, true) => format!("{dir}{run}{rest} (×{n} each)"),
                        (n, false) => format!("{dir}{run}{rest} (×{n})"),
                    })
                    .collect()
            })
        })
        .collect();
    let mut items = Vec::with_capacity(list.len());
    for (k, item) in list.iter().enumerate() {
        match group_of[k].and_then(|g| folded[g].as_ref().map(|f| (g, f))) {
            Some((g, runs)) => {
                if groups[g].1[0] == k {
                    items.extend(runs.iter().cloned());
                }
            }
            None => items.push(plain(item)),
        }
    }
    items
}

/// The column every `file:line:col` location shares, when saying it once (`each
/// at column 11`) is shorter than repeating it.
fn shared_column<'a>(locs: &[&'a str]) -> Option<&'a str> {
    let column = |loc: &'a str| -> Option<&'a str> {
        let (rest, col) = loc.rsplit_once(':')?;
        let (file, line) = rest.rsplit_once(':')?;
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        (!file.is_empty() && digits(line) && digits(col)).then_some(col)
    };
    let col = column(locs.first()?)?;
    let saved = locs.len() * (col.len() + 1);
    (locs.iter().all(|l| column(l) == Some(col)) && saved > " (each at column )".len() + col.len())
        .then_some(col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_and_paths_are_values() {
        assert_eq!(
            slots("`os` imported but unused"),
            (
                "`…` imported but unused".to_string(),
                vec!["`os`".to_string()]
            )
        );
        let (shape, values) = slots(
            "return copies lock value: example.com/ledger/invoices.Invoice contains sync.Mutex",
        );
        assert_eq!(shape, "return copies lock value: … contains sync.Mutex");
        assert_eq!(values, ["example.com/ledger/invoices.Invoice"]);
        let (shape, values) = slots("cannot open src/a.c: no such file, see /tmp/x/log.");
        assert_eq!(shape, "cannot open …: no such file, see ….");
        assert_eq!(values, ["src/a.c", "/tmp/x/log"]);
        // A lone slash, a division or a word that only starts one is prose.
        assert_eq!(slots("use / to split").1, Vec::<String>::new());
    }

    /// The lines of the one digest a failed build's `stderr` gets.
    fn build_digest(stderr: &str) -> Vec<String> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "", stderr, 101);
        crate::stages::classify::run(&mut doc);
        crate::stages::cause::run(&mut doc);
        crate::stages::cause::apply(&mut doc, 0);
        doc.digests[0].lines(&doc, Detail::Full)
    }

    #[test]
    fn a_column_every_location_shares_is_said_once() {
        let report = |file: &str, line: u32, col: u32| {
            format!("error[E0308]: mismatched types\n  --> src/{file}.rs:{line}:{col}\n   |\n{line} |     units(item.quantity)\n   |           ^^^^^^^^^^^^^ expected `u32`, found `String`\n\n")
        };
        let same: String = (0..12)
            .map(|i| report(["a", "b", "c"][i % 3], 5 * i as u32 + 7, 11))
            .collect();
        let lines = build_digest(&same);
        assert_eq!(
            lines.last().unwrap(),
            "same E0308 ×12 (each at column 11; each as the report above but for its numbers) \
             at: src/a.rs:7, src/b.rs:12, src/c.rs:17, src/a.rs:22, \
             src/b.rs:27, src/c.rs:32, src/a.rs:37, src/b.rs:42, src/c.rs:47, src/a.rs:52, \
             src/b.rs:57, src/c.rs:62"
        );
        // The first report keeps its column as printed.
        assert_eq!(lines[1], "  --> src/a.rs:7:11");
        // Columns that differ stay on each location.
        let mixed: String = (0..12)
            .map(|i| report("a", 5 * i as u32 + 7, 11 + (i == 4) as u32))
            .collect();
        let list = build_digest(&mixed).pop().unwrap();
        assert!(
            list.contains(
                " ×12 (each as the report above but for its numbers) at: src/a.rs:7:11, "
            ),
            "{list}"
        );
        assert!(list.contains("src/a.rs:27:12"), "{list}");
        // Two locations save less than the note costs.
        assert_eq!(shared_column(&["src/a.rs:7:11", "src/b.rs:7:11"]), None);
        assert_eq!(shared_column(&["a.ts(6,18)"; 20]), None);
    }

    #[test]
    fn numbered_runs_become_brace_ranges() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut items: Vec<String> = (1..=150)
            .map(|i| format!("tests/frame_case_{i:03}.snap.new"))
            .collect();
        items.insert(0, "Cargo.lock".into());
        items.push("notes/".into());
        assert_eq!(
            number_runs(&items),
            names(&[
                "Cargo.lock",
                "tests/frame_case_{001..150}.snap.new",
                "notes/"
            ])
        );
        // Two in a row stay; a gap, a change of width or of suffix ends a run.
        assert_eq!(
            number_runs(&names(&[
                "a1.rs", "a2.rs", "b7", "b8", "b9", "b11", "c098", "c099", "c0100", "d09", "d10",
                "d11"
            ])),
            names(&[
                "a1.rs",
                "a2.rs",
                "b{7..9}",
                "b11",
                "c098",
                "c099",
                "c0100",
                "d{09..11}"
            ])
        );
        assert_eq!(
            number_runs(&names(&["v1.txt", "v2.txt", "v3.md", "x", "y"])),
            names(&["v1.txt", "v2.txt", "v3.md", "x", "y"])
        );
    }

    proptest::proptest! {
        /// A digest cut to a room never prints more than the room, and says how
        /// many names it left out.
        #[test]
        fn a_cut_digest_fits_its_room_and_counts_what_it_left_out(
            entries in proptest::collection::vec(
                ("[a-z]{1,8}/[a-z]{1,6}\\.rs:", proptest::collection::vec("[0-9]{1,3}:[a-z_]{1,12}", 1..12)),
                1..12,
            ),
            lines in proptest::collection::vec("[a-z ]{1,30}", 0..6),
            room in 0usize..2000,
        ) {
            let argv = vec![];
            let doc = Doc::new(&argv, "", "", 0);
            let entries: Vec<Entry> = entries
                .into_iter()
                .map(|(key, items)| Entry { key, items })
                .collect();
            let names: usize = entries.iter().map(|e| e.items.len()).sum();
            let listing = Digest {
                body: Body::Listing { template: None, entries },
                ..Digest::of_lines(Stream::Stdout, 0, 0, Vec::new())
            };
            let plain = Digest::of_lines(Stream::Stdout, 0, 0, lines.clone());
            for (d, total) in [(listing, names), (plain, lines.len())] {
                let (out, unlisted) = d.lines_within(&doc, Detail::Full, room);
                let size: usize = out.iter().map(|l| l.len() + 1).sum();
                let whole: usize = d.lines(&doc, Detail::Full).iter().map(|l| l.len() + 1).sum();
                proptest::prop_assert!(size <= room, "{size} bytes in a room of {room}");
                if whole <= room {
                    proptest::prop_assert_eq!(unlisted, 0);
                } else {
                    proptest::prop_assert!(unlisted > 0 && unlisted <= total);
                }
            }
        }
    }

    proptest::proptest! {
        /// A cut digest keeps the one entry unlike the others (an item of a list,
        /// a line of its own) over those that repeat one template, whatever its
        /// place, whenever the room holds the names and it.
        #[test]
        fn a_cut_keeps_the_unusual_entry_over_the_repeated_ones(
            files in 2usize..30,
            per in 4usize..20,
            at in 0usize..600,
            slack in 0usize..3000,
        ) {
            let argv = vec![];
            let doc = Doc::new(&argv, "", "", 0);
            let odd = "977:FIXME(security): token logged";
            let mut entries: Vec<Entry> = (0..files)
                .map(|f| Entry {
                    key: format!("src/m{f}.rs:"),
                    items: (0..per).map(|k| format!("{}:TODO: tidy case {k}", k * 3 + 1)).collect(),
                })
                .collect();
            let (f, k) = ((at / per) % files, at % per);
            entries[f].items.insert(k, odd.to_string());
            let listing = Digest {
                body: Body::Listing { template: None, entries },
                ..Digest::of_lines(Stream::Stdout, 0, 0, Vec::new())
            };
            let whole: usize = listing.lines(&doc, Detail::Full).iter().map(|l| l.len() + 1).sum();
            let names: usize = (0..files).map(|f| format!("src/m{f}.rs: … +999999").len() + 1).sum();
            let room = (names + odd.len() + 16 + slack).min(whole - 1);
            let (out, unlisted) = listing.lines_within(&doc, Detail::Full, room);
            proptest::prop_assert!(unlisted > 0);
            proptest::prop_assert!(out.iter().any(|l| l.contains(odd)), "{:?}", out);
            // Lines of their own: one table row unlike the rest.
            let mut rows: Vec<String> = (0..files * per).map(|i| format!("web-{i}  1/1  Running  0  {}d", i % 9)).collect();
            rows.insert(at % rows.len(), "db-0  0/1  CrashLoopBackOff  7  2d".to_string());
            let table = Digest::of_lines(Stream::Stdout, 0, 0, rows);
            let (out, _) = table.lines_within(&doc, Detail::Full, 64 + slack / 4);
            proptest::prop_assert!(out.iter().any(|l| l.contains("CrashLoopBackOff")), "{:?}", out);
        }
    }

    #[test]
    fn a_cut_listing_of_ranges_keeps_the_file_far_larger_than_them() {
        // A log directory folded into daily ranges, then four crash dumps alike
        // but for the size of one: the ranges' sizes set the median.
        let argv = vec![];
        let doc = Doc::new(&argv, "", "", 0);
        let mut items: Vec<String> = (0..30)
            .map(|k| format!("svc{k}-2025-06-{{01..30}}.log.gz (4096-60000)"))
            .collect();
        items.extend(
            [
                "node1.dump(1320)",
                "node2.dump(2664)",
                "node3.dump(52428800)",
                "node4.dump(700)",
            ]
            .map(String::from),
        );
        let listing = Digest {
            body: Body::Listing {
                template: None,
                entries: vec![Entry {
                    key: "files (bytes, * executable):".into(),
                    items,
                }],
            },
            ..Digest::of_lines(Stream::Stdout, 0, 0, Vec::new())
        };
        let (out, unlisted) = listing.lines_within(&doc, Detail::Full, 200);
        assert!(unlisted > 0);
        assert!(out[0].contains("node3.dump(52428800)"), "{out:?}");
    }

    /// A `git log -p` digest: a heading per commit, under it its hunks, each of
    /// `sizes[c][h]` changed lines.
    fn log_p(sizes: &[Vec<usize>]) -> Digest {
        let sections = sizes
            .iter()
            .enumerate()
            .map(|(c, hunks)| {
                let mut lines = Vec::new();
                for (h, &n) in hunks.iter().enumerate() {
                    lines.push(format!("@@ -{c}{h},0 +{c}{h},{n} @@"));
                    lines.extend((0..n).map(|i| format!("+value_{c}_{h}_{i} = {}", i * 7)));
                }
                (
                    format!("{c:07x} Change {c} (Ada Okafor, 2026-01-0{})", c % 9 + 1),
                    lines,
                )
            })
            .collect();
        Digest {
            body: Body::Sections(sections),
            ..Digest::of_lines(Stream::Stdout, 0, 0, Vec::new())
        }
    }

    #[test]
    fn a_cut_log_p_shows_the_most_commits_whole_the_smallest_first() {
        let argv = vec![];
        let doc = Doc::new(&argv, "", "", 0);
        // The newest commit's change is large, the fourth's one line.
        let d = log_p(&[vec![6], vec![6], vec![5], vec![1], vec![2], vec![6]]);
        let headings: usize = d
            .lines(&doc, Detail::Full)
            .iter()
            .filter(|l| l.contains(" Change "))
            .map(|l| l.len() + 1)
            .sum();
        let (out, unlisted) = d.lines_within(&doc, Detail::Full, headings + 130);
        let text = out.join("\n");
        assert!(
            text.contains("@@ -30,0 +30,1 @@\n+value_3_0_0 = 0"),
            "{text}"
        );
        assert!(text.contains("@@ -40,0 +40,2 @@"), "{text}");
        assert!(
            !text.contains("@@ -00,"),
            "the newest, largest hunk went first: {text}"
        );
        // Every commit is still there, each hunk whole or absent.
        assert_eq!(out.iter().filter(|l| l.contains(" Change ")).count(), 6);
        assert_eq!(unlisted, 4);
    }

    proptest::proptest! {
        /// A cut `git log -p` digest fits its room, keeps every commit when the
        /// commits fit, and shows each hunk whole or not at all.
        #[test]
        fn a_cut_log_p_keeps_every_commit_and_only_whole_hunks(
            sizes in proptest::collection::vec(proptest::collection::vec(1usize..8, 0..4), 1..20),
            slack in 0usize..1500,
        ) {
            let argv = vec![];
            let doc = Doc::new(&argv, "", "", 0);
            let d = log_p(&sizes);
            let whole = d.lines(&doc, Detail::Full);
            let headings: usize = whole.iter().filter(|l| l.contains(" Change ")).map(|l| l.len() + 1).sum();
            let room = headings + slack;
            let (out, _) = d.lines_within(&doc, Detail::Full, room);
            let size: usize = out.iter().map(|l| l.len() + 1).sum();
            proptest::prop_assert!(size <= room, "{size} bytes in a room of {room}");
            proptest::prop_assert_eq!(out.iter().filter(|l| l.contains(" Change ")).count(), sizes.len());
            for (i, l) in out.iter().enumerate() {
                let Some(spec) = l.strip_prefix("@@ -") else { continue };
                let n: usize = spec.split(',').nth(2).and_then(|x| x.split(' ').next()).unwrap().parse().unwrap();
                let got = out[i + 1..].iter().take_while(|l| l.starts_with('+')).count();
                proptest::prop_assert_eq!(got, n, "hunk {} shown in part: {:?}", l, out);
            }
        }
    }

    /// `slots` as first written, over a vector of characters.
    fn slots_reference(message: &str) -> (String, Vec<String>) {
        let mut shape = String::new();
        let mut values = Vec::new();
        let chars: Vec<(usize, char)> = message.char_indices().collect();
        let mut i = 0;
        while i < chars.len() {
            let (pos, c) = chars[i];
            let close = match c {
                '`' => Some('`'),
                '\'' if i == 0 || !chars[i - 1].1.is_alphanumeric() => Some('\''),
                '"' => Some('"'),
                '‘' => Some('’'),
                '“' => Some('”'),
                _ => None,
            };
            if let Some(close) = close {
                if let Some(j) = (i + 1..chars.len()).find(|&j| chars[j].1 == close) {
                    let end = chars[j].0 + close.len_utf8();
                    values.push(message[pos..end].to_string());
                    shape.push(c);
                    shape.push('…');
                    shape.push(close);
                    i = j + 1;
                    continue;
                }
            }
            shape.push(c);
            i += 1;
        }
        (shape, values)
    }

    proptest::proptest! {
        #[test]
        fn slots_match_the_first_version(message in "[a `'\"‘’“”é1]{0,24}") {
            proptest::prop_assert_eq!(slots(&message), slots_reference(&message));
        }
    }

    #[test]
    fn factors_common_prefix_and_suffix() {
        let (p, m, s) = factor(&[
            "pub fn load_a(x: u8) {",
            "pub fn save_b(x: u8) {",
            "pub fn verify(x: u8) {",
        ]);
        assert_eq!(p, "pub fn ");
        assert_eq!(s, "(x: u8) {");
        assert_eq!(m, vec!["load_a", "save_b", "verify"]);
        assert_eq!(
            shared_prefix(&["src/a/x.rs:1", "src/a/y.rs:2", "src/b.rs:3"]),
            "src/"
        );
        assert_eq!(shared_prefix(&["é1", "é2"]), "é");
        assert_eq!(shared_prefix(&["only"]), "only");
        assert_eq!(shared_prefix(&[]), "");
        let (p, m, s) = factor(&["abc", "abc"]);
        assert_eq!((p.as_str(), s.as_str()), ("abc", ""));
        assert_eq!(m, vec!["", ""]);
        let (p, m, s) = factor(&["é1é", "é2é"]);
        assert_eq!((p.as_str(), m[1].as_str(), s.as_str()), ("é", "2", "é"));
    }

    #[test]
    fn slots_take_quoted_values_out() {
        assert_eq!(
            slots("`os` imported but unused"),
            (
                "`…` imported but unused".to_string(),
                vec!["`os`".to_string()]
            )
        );
        assert_eq!(
            slots("'cartCache' is assigned a value but never used"),
            (
                "'…' is assigned a value but never used".to_string(),
                vec!["'cartCache'".to_string()]
            )
        );
        assert_eq!(slots("doesn't matter").1, Vec::<String>::new());
        assert_eq!(slots("open ` never closed").1, Vec::<String>::new());
        assert_eq!(
            slots("‘const struct frame’ has no member named ‘stride’")
                .1
                .len(),
            2
        );
        assert_eq!(
            slots("mismatched types"),
            ("mismatched types".to_string(), vec![])
        );
    }

    #[test]
    fn head_detail_truncates_with_a_count() {
        let argv = vec![];
        let doc = Doc::new(&argv, "", "", 0);
        let d = Digest {
            stream: Stream::Stdout,
            start: 0,
            end: 0,
            failure: false,
            body: Body::Lines((0..30).map(|i| format!("c{i}")).collect()),
            needs: Vec::new(),
            room: None,
        };
        let l = d.lines(&doc, Detail::Head);
        assert_eq!(l.len(), HEAD);
        assert_eq!(
            l[HEAD - 1],
            "… 11 more digest lines (the raw region is in the marker above)"
        );
        assert_eq!(d.lines(&doc, Detail::Full).len(), 30);
    }

    #[test]
    fn listing_lines() {
        let e = Entry {
            key: "src/a.rs:".into(),
            items: vec!["6:load".into(), "9:save".into()],
        };
        assert_eq!(listing_line(&e).render(), "src/a.rs: 6:load 9:save");
        let e = Entry {
            key: "a:".into(),
            items: vec!["1:x y".into(), "2:z".into()],
        };
        assert_eq!(listing_line(&e).render(), "a: 1:x y, 2:z");
    }
}
