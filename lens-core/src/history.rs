//! History digests: a commit log (`git log`, `--stat`, `-p`) cut to a room by
//! commit, never by prefix.
//!
//! Each commit is shown in one of four forms, and the room is shared so that
//! every commit gets the richer form before any gets the richest:
//!
//! - *whole*: its line (hash, subject, author with address, date), then every
//!   hunk as `git diff -U0` prints it;
//! - *compact*: the same, but a hunk of more than [`SMALL`] changed lines is one
//!   line, its `@@` numbers, its counts, the raw lines it spans and its first
//!   changed line;
//! - *short*: its line alone, the author by name only (the address once, in an
//!   `authors:` line before the commits), with its counts;
//! - *grouped*: its hash in a line that stands for a run of commits, with how
//!   many, their raw lines and their counts.
//!
//! Every commit starts short; if the short lines do not fit, the oldest commits
//! are grouped (one run, one raw range to fetch). Then commits become compact,
//! the most relevant first: a line edited in place (a value changed) before
//! anything else, then the smallest changes, then the newest. Only when every
//! commit is compact do large hunks show whole, in the same order. `@@` numbers
//! and raw line numbers are copied, never recomputed.

/// A hunk with at most this many changed lines is shown whole in the compact form.
pub const SMALL: usize = 6;

/// How much of a large hunk's first changed line the compact form quotes.
const FIRST_LINE: usize = 72;

/// A commit log, newest first as git prints it.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// Lines printed once before the commits (the one file every patch changes).
    pub prefix: Vec<String>,
    /// The commits in their printed order.
    pub commits: Vec<Commit>,
}

/// One commit.
#[derive(Clone, Debug, Default)]
pub struct Commit {
    /// Short hash.
    pub hash: String,
    /// The first line of the message.
    pub subject: String,
    /// As printed: `Name <address>`.
    pub author: String,
    /// `2026-02-03`.
    pub date: String,
    /// `--stat`'s closing line, or empty.
    pub stat: String,
    /// The files `--stat` lists.
    pub files: Vec<String>,
    /// Its raw lines, 1-based and inclusive.
    pub lines: (u32, u32),
    /// Its `-p` patch, in order.
    pub patch: Vec<Part>,
}

/// A piece of a commit's patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// A file's heading (`diff a.py`).
    File(String),
    /// A line printed as it is (a mode line, a rename, a binary notice).
    Note(String),
    /// A -U0 hunk: its `@@` line, its changed lines and the raw lines they span.
    Hunk {
        /// `@@ -a,b +c,d @@`.
        header: String,
        /// The `-` and `+` lines.
        lines: Vec<String>,
        /// Raw line numbers of the first and last changed line.
        at: (u32, u32),
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Form {
    Grouped,
    Short,
    Lean,
    Compact,
    Whole,
}

impl Commit {
    fn counts(&self) -> (usize, usize) {
        let mut c = (0, 0);
        for p in &self.patch {
            if let Part::Hunk { lines, .. } = p {
                for l in lines {
                    if l.starts_with('+') {
                        c.0 += 1;
                    } else {
                        c.1 += 1;
                    }
                }
            }
        }
        c
    }

    fn hunks(&self) -> usize {
        self.patch
            .iter()
            .filter(|p| matches!(p, Part::Hunk { .. }))
            .count()
    }

    fn large_hunks(&self) -> usize {
        self.patch
            .iter()
            .filter(|p| matches!(p, Part::Hunk { lines, .. } if lines.len() > SMALL))
            .count()
    }

    /// The author by name alone (`Ada Okafor`), or as printed: a reader asks
    /// who made a change by name, so the address is what goes first.
    fn name(&self) -> &str {
        match self.author.find(" <") {
            Some(i) if i > 0 => &self.author[..i],
            _ => &self.author,
        }
    }

    fn heading(&self, author: &str) -> String {
        let mut line = format!("{} {} ({author}, {}", self.hash, self.subject, self.date);
        if !self.stat.is_empty() {
            line.push_str("; ");
            line.push_str(&self.stat);
        }
        line.push(')');
        line
    }

    fn render(&self, form: Form) -> Vec<String> {
        let mut out = Vec::new();
        match form {
            Form::Grouped => {}
            Form::Short => {
                let mut line = self.heading(self.name());
                if !self.patch.is_empty() {
                    let (a, d) = self.counts();
                    line.push_str(&format!(" +{a} -{d}"));
                }
                out.push(line);
            }
            Form::Lean | Form::Compact | Form::Whole => {
                let author = if form == Form::Lean {
                    self.name()
                } else {
                    &self.author
                };
                let mut line = self.heading(author);
                if !self.files.is_empty() && form == Form::Lean {
                    line.push_str(": ");
                    line.push_str(&fold_files(&self.files));
                } else if !self.files.is_empty() {
                    let sep = if self.files.iter().any(|f| f.contains(' ')) {
                        ", "
                    } else {
                        " "
                    };
                    line.push_str(": ");
                    line.push_str(&self.files.join(sep));
                }
                out.push(line);
                for p in &self.patch {
                    match p {
                        Part::File(h) | Part::Note(h) => out.push(h.clone()),
                        Part::Hunk { header, lines, at } => {
                            if form == Form::Whole || lines.len() <= SMALL {
                                out.push(header.clone());
                                out.extend(lines.iter().cloned());
                            } else {
                                let adds = lines.iter().filter(|l| l.starts_with('+')).count();
                                out.push(format!(
                                    "{header} +{adds} -{} (lines {}-{}): {}",
                                    lines.len() - adds,
                                    at.0,
                                    at.1,
                                    clip(&lines[0])
                                ));
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// `--stat`'s files with each directory said once: `README.md; image/ init
/// pins.env; tools/ initrd.py` (a directory and each name in it, on one line).
fn fold_files(files: &[String]) -> String {
    let mut dirs: Vec<(&str, Vec<&str>)> = Vec::new();
    for f in files {
        let (dir, base) = match f.rfind('/') {
            Some(i) if !f.contains(' ') => (&f[..=i], &f[i + 1..]),
            _ => ("", f.as_str()),
        };
        match dirs.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, names)) => names.push(base),
            None => dirs.push((dir, vec![base])),
        }
    }
    dirs.iter()
        .map(|(d, names)| match d.is_empty() {
            true => names.join(" "),
            false => format!("{d} {}", names.join(" ")),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `text` cut to [`FIRST_LINE`] bytes at a character boundary, with `…` if cut.
fn clip(text: &str) -> String {
    if text.len() <= FIRST_LINE {
        return text.to_string();
    }
    let mut end = FIRST_LINE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Bytes (newlines counted) and lines.
fn size(lines: &[String]) -> (usize, usize) {
    (lines.iter().map(|l| l.len() + 1).sum(), lines.len())
}

/// One way of laying a log out: its lines, the names it leaves out, each
/// commit's form, and how many lines come before the first commit's.
struct Layout {
    out: Vec<String>,
    unlisted: usize,
    forms: Vec<Form>,
    head: usize,
}

impl History {
    /// Every commit whole.
    pub fn lines(&self) -> Vec<String> {
        self.lines_within(usize::MAX, usize::MAX).0
    }

    /// The log in at most `room` bytes and `max_lines` lines, and how many names
    /// (commits shown only by hash, hunks not shown whole) it leaves out.
    ///
    /// Where commits name their authors without the address, one line after the
    /// prefix gives each such author's address once (`authors: Ada Okafor
    /// <ada@example.com>; …`), so every commit's author stays whole in the view;
    /// the line is paid for from the room, and left out when it would take more
    /// than a quarter of it.
    pub fn lines_within(&self, room: usize, max_lines: usize) -> (Vec<String>, usize) {
        let plain = self.layout(room, max_lines);
        let Some(legend) = self.legend(&plain.forms) else {
            return (plain.out, plain.unlisted);
        };
        let cost = legend.len() + 1;
        if cost > room / 4 || max_lines < 2 {
            return (plain.out, plain.unlisted);
        }
        let mut laid = self.layout(room - cost, max_lines - 1);
        // With less room more commits may go short, naming authors the paid-for
        // line did not: a longer line than was paid for would break the room.
        match self.legend(&laid.forms) {
            Some(l) if l.len() < cost => laid.out.insert(laid.head, l),
            Some(_) => return (plain.out, plain.unlisted),
            None => {}
        }
        (laid.out, laid.unlisted)
    }

    /// `authors: Name <address>; …` for the authors of the commits `forms` shows
    /// by name alone, in the order they first appear; `None` when there are none.
    fn legend(&self, forms: &[Form]) -> Option<String> {
        let mut seen: Vec<&str> = Vec::new();
        for (c, &f) in self.commits.iter().zip(forms) {
            let by_name = matches!(f, Form::Short | Form::Lean);
            if by_name && c.name() != c.author && !seen.contains(&c.author.as_str()) {
                seen.push(&c.author);
            }
        }
        (!seen.is_empty()).then(|| format!("authors: {}", seen.join("; ")))
    }

    fn layout(&self, room: usize, max_lines: usize) -> Layout {
        let n = self.commits.len();
        let (mut bytes, mut lines) = size(&self.prefix);
        let prefix = bytes <= room && lines <= max_lines;
        if !prefix {
            (bytes, lines) = (0, 0);
        }
        let fits = |b: usize, l: usize| b <= room && l <= max_lines;
        let sizes: Vec<[(usize, usize); 5]> = self
            .commits
            .iter()
            .map(|c| {
                [
                    (0, 0),
                    size(&c.render(Form::Short)),
                    size(&c.render(Form::Lean)),
                    size(&c.render(Form::Compact)),
                    size(&c.render(Form::Whole)),
                ]
            })
            .collect();
        // The newest commits short, the oldest `k` grouped: the fewest that fit.
        let mut forms = vec![Form::Short; n];
        let short: usize = sizes.iter().map(|s| s[1].0).sum();
        let mut grouped = 0;
        let (mut b, mut l) = (bytes + short, lines + n);
        while grouped < n && !fits(b, l) {
            grouped += 1;
            let k = n - grouped;
            forms[k] = Form::Grouped;
            // One commit's line goes; the group's line grows by its hash.
            let now = size(&[self.group(k, n, usize::MAX).0]);
            let before = if grouped > 1 {
                size(&[self.group(k + 1, n, usize::MAX).0])
            } else {
                (0, 0)
            };
            b = b + now.0 - before.0 - sizes[k][1].0;
            l = l + now.1 - before.1 - sizes[k][1].1;
        }
        let mut out: Vec<String> = Vec::new();
        if prefix {
            out.extend(self.prefix.iter().cloned());
        }
        let head = out.len();
        if !fits(b, l) {
            // Even one line for every commit is too long: the hashes that fit.
            let (line, _) = self.group(0, n, room.saturating_sub(bytes + 1));
            if fits(bytes + line.len() + 1, lines + 1) {
                out.push(line);
            }
            return Layout {
                out,
                unlisted: n,
                forms: vec![Form::Grouped; n],
                head,
            };
        }
        (bytes, lines) = (b, l);
        // Then the most relevant commits compact, and, once all are, whole.
        let mut order: Vec<usize> = (0..n).filter(|&k| forms[k] != Form::Grouped).collect();
        order.sort_by_key(|&k| {
            let c = &self.commits[k];
            let in_place = c.patch.iter().any(
                |p| matches!(p, Part::Hunk { lines, .. } if lines.len() == 2 && lines[0].starts_with('-') && lines[1].starts_with('+')),
            );
            (!in_place, sizes[k][2].0.saturating_sub(sizes[k][1].0), k)
        });
        for (to, from) in [
            (Form::Lean, Form::Short),
            (Form::Compact, Form::Lean),
            (Form::Whole, Form::Compact),
        ] {
            // Each richer form only once every commit has the one before it
            // (grouped commits aside, but for whole patches).
            if forms
                .iter()
                .any(|&f| f < from && (f != Form::Grouped || to == Form::Whole))
            {
                break;
            }
            for &k in &order {
                if forms[k] != from {
                    continue;
                }
                let (nb, nl) = sizes[k][to as usize];
                let (ob, ol) = sizes[k][from as usize];
                let (tb, tl) = (bytes - ob + nb, lines - ol + nl);
                if fits(tb, tl) {
                    (bytes, lines) = (tb, tl);
                    forms[k] = to;
                }
            }
        }
        let mut unlisted = 0;
        let mut k = 0;
        while k < n {
            if forms[k] == Form::Grouped {
                let end = (k..n).find(|&j| forms[j] != Form::Grouped).unwrap_or(n);
                out.push(self.group(k, end, usize::MAX).0);
                unlisted += end - k;
                k = end;
                continue;
            }
            let c = &self.commits[k];
            unlisted += match forms[k] {
                Form::Short => c.hunks() + usize::from(!c.files.is_empty()),
                Form::Lean | Form::Compact => c.large_hunks(),
                _ => 0,
            };
            out.extend(c.render(forms[k]));
            k += 1;
        }
        Layout {
            out,
            unlisted,
            forms,
            head,
        }
    }

    /// The line standing for commits `from..to`: how many, their raw lines,
    /// their counts, then their hashes while `room` holds them; and how many
    /// hashes it names.
    fn group(&self, from: usize, to: usize, room: usize) -> (String, usize) {
        let cs = &self.commits[from..to];
        let (first, last) = (cs[0].lines.0, cs[cs.len() - 1].lines.1);
        let what = if cs.len() == 1 { "commit" } else { "commits" };
        let mut line = format!("… {} {what} (lines {first}-{last}", cs.len());
        if cs.iter().any(|c| !c.patch.is_empty()) {
            let (a, d) = cs
                .iter()
                .map(Commit::counts)
                .fold((0, 0), |s, c| (s.0 + c.0, s.1 + c.1));
            line.push_str(&format!("; +{a} -{d}"));
        }
        line.push_str("):");
        let mut named = 0;
        for (i, c) in cs.iter().enumerate() {
            let more = cs.len() - i - 1;
            let tail = if more > 0 {
                format!(" … +{more}").len()
            } else {
                0
            };
            if line.len() + 1 + c.hash.len() + tail > room {
                line.push_str(&format!(" … +{}", cs.len() - i));
                break;
            }
            line.push(' ');
            line.push_str(&c.hash);
            named += 1;
        }
        (line, named)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: usize) -> History {
        let commits = (0..n)
            .map(|c| Commit {
                hash: format!("{c:07x}"),
                subject: format!("Change number {c} of the settings module"),
                author: "Ada Okafor <ada@example.com>".into(),
                date: "2026-02-03".into(),
                lines: (c as u32 * 12 + 1, c as u32 * 12 + 12),
                patch: vec![Part::Hunk {
                    header: format!("@@ -{c},{} +{c},1 @@", c % 9),
                    lines: (0..c % 9)
                        .map(|i| format!("-old_{i}"))
                        .chain(["+new".to_string()])
                        .collect(),
                    at: (c as u32 * 12 + 6, c as u32 * 12 + 6 + (c % 9) as u32),
                }],
                ..Commit::default()
            })
            .collect();
        History {
            prefix: vec!["settings.py (every commit below)".into()],
            commits,
        }
    }

    #[test]
    fn every_room_is_kept_and_every_commit_is_named_while_its_hash_fits() {
        let h = log(40);
        let hashes: usize = h.commits.iter().map(|c| c.hash.len() + 1).sum();
        for room in (0..9000).step_by(37) {
            for max_lines in [20, usize::MAX] {
                let (out, unlisted) = h.lines_within(room, max_lines);
                let size: usize = out.iter().map(|l| l.len() + 1).sum();
                assert!(size <= room && out.len() <= max_lines, "{room}: {out:?}");
                let text = out.join("\n");
                if room >= hashes + 120 {
                    for c in &h.commits {
                        assert!(text.contains(&c.hash), "{room}: {} missing: {text}", c.hash);
                    }
                }
                let whole: usize = h.lines().iter().map(|l| l.len() + 1).sum();
                assert_eq!(
                    unlisted == 0,
                    whole <= room && max_lines == usize::MAX,
                    "{room}"
                );
            }
        }
    }

    #[test]
    fn under_pressure_a_commit_keeps_its_authors_name_and_the_address_is_said_once() {
        let h = log(40);
        // Room for short lines and one line more: each names its author, and
        // the address is given once, before the commits.
        let short: usize = h
            .commits
            .iter()
            .map(|c| c.render(Form::Short)[0].len() + 1)
            .sum();
        let legend = "authors: Ada Okafor <ada@example.com>";
        let room = short + h.prefix[0].len() + 1 + legend.len() + 1;
        let (out, _) = h.lines_within(room, usize::MAX);
        assert_eq!(out[..2], [h.prefix[0].as_str(), legend], "{out:?}");
        let commits: Vec<&String> = out.iter().filter(|l| l.contains("Change number")).collect();
        assert_eq!(commits.len(), 40, "{out:?}");
        for l in commits {
            assert!(l.contains("(Ada Okafor, 2026-02-03"), "{l}");
            assert!(!l.contains("ada@example.com"), "{l}");
        }
        // A byte less and the oldest commit is grouped: the line is paid for.
        let (out, _) = h.lines_within(room - 1, usize::MAX);
        assert_eq!(out[1], legend);
        assert!(out.iter().any(|l| l.starts_with("… 1 commit ")), "{out:?}");
        // Where it would take more than a quarter of the room, there is none.
        let (out, _) = h.lines_within(120, usize::MAX);
        assert!(!out.iter().any(|l| l.starts_with("authors:")), "{out:?}");
    }

    #[test]
    fn a_log_of_many_authors_keeps_every_room() {
        // Each commit its own author, hunks of every size: as the room shrinks,
        // commits go short one by one and the authors line would grow with them.
        let mut h = log(40);
        for (k, c) in h.commits.iter_mut().enumerate() {
            c.author = format!("Author Number{k} <author.number{k}@example.com>");
        }
        for room in (0..12_000).step_by(23) {
            for max_lines in [12, 60, usize::MAX] {
                let (out, _) = h.lines_within(room, max_lines);
                let size: usize = out.iter().map(|l| l.len() + 1).sum();
                assert!(size <= room && out.len() <= max_lines, "{room}: {out:?}");
            }
        }
    }

    #[test]
    fn the_authors_line_names_only_authors_shown_without_their_address() {
        let mut h = log(40);
        for (k, c) in h.commits.iter_mut().enumerate() {
            c.author = format!("Dev{} <dev{}@example.com>", k % 3, k % 3);
        }
        h.commits[39].author = "Old Timer <old@example.com>".into();
        // Every commit whole: every address is on its commit's line, no legend.
        assert!(!h.lines().iter().any(|l| l.starts_with("authors:")));
        // Short lines and the oldest grouped: the legend names the three shown.
        let short: usize = h.commits[..30]
            .iter()
            .map(|c| c.render(Form::Short)[0].len() + 1)
            .sum();
        let (out, _) = h.lines_within(short + 400, usize::MAX);
        let legend = out
            .iter()
            .find(|l| l.starts_with("authors:"))
            .expect("a legend");
        assert_eq!(
            legend,
            "authors: Dev0 <dev0@example.com>; Dev1 <dev1@example.com>; Dev2 <dev2@example.com>"
        );
    }

    #[test]
    fn a_large_hunk_is_its_counts_and_first_line_before_any_hunk_is_whole() {
        let h = log(40);
        let whole: usize = h.lines().iter().map(|l| l.len() + 1).sum();
        let (out, _) = h.lines_within(whole - 1, usize::MAX);
        // Every commit is there with its address.
        for c in &h.commits {
            assert!(out
                .iter()
                .any(|l| l.starts_with(&c.hash) && l.contains("<ada@example.com>")));
        }
        // One byte short: the oldest of the largest hunks (8 deletions and an
        // addition) is one line, its counts, raw lines and first changed line.
        let cut: Vec<&String> = out.iter().filter(|l| l.contains(" (lines ")).collect();
        assert_eq!(cut, ["@@ -35,8 +35,1 @@ +1 -8 (lines 426-434): -old_0"]);
    }
}
