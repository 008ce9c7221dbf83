//! A user's filter as data: parsed from its TOML, compiled, and applied to a
//! [`Doc`] as a stage of the pipeline. What runs the whole pipeline on a filter
//! (its inline tests, a draft's preview, the invariant checks) is in [`super`],
//! above [`crate::annotate`], so this file stays below it.

use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::doc::{Class, Doc, Fate, Reason, Stream};
use crate::stages::classify;

/// The most a compiled pattern may take, in bytes (program and lazy DFA each):
/// far above what a line pattern needs, far below what would strain memory.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawFilter {
    name: String,
    #[serde(rename = "match")]
    matches: String,
    #[serde(default)]
    drop: Vec<String>,
    #[serde(default)]
    keep: Vec<String>,
    #[serde(default)]
    summary: Vec<String>,
    head: Option<usize>,
    tail: Option<usize>,
    collapse: Option<bool>,
    #[serde(default)]
    when: Vec<RawWhen>,
    #[serde(default)]
    test: Vec<RawTest>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawWhen {
    exit: RawExit,
    #[serde(default)]
    drop: Vec<String>,
    #[serde(default)]
    keep: Vec<String>,
    #[serde(default)]
    summary: Vec<String>,
    head: Option<usize>,
    tail: Option<usize>,
    collapse: Option<bool>,
}

#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum RawExit {
    One(i64),
    Many(Vec<i64>),
    Word(String),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawTest {
    name: String,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    input: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    exit: i32,
    #[serde(default)]
    expect_contains: Vec<String>,
    #[serde(default)]
    expect_missing: Vec<String>,
}

/// Which exit codes a `[[filter.when]]` applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Exits {
    Codes(Vec<i32>),
    Nonzero,
}

impl Exits {
    fn covers(&self, exit: i32) -> bool {
        match self {
            Exits::Codes(c) => c.contains(&exit),
            Exits::Nonzero => exit != 0,
        }
    }
}

/// One set of rules: the filter's own, or a `when` block's additions.
#[derive(Clone, Debug, Default)]
struct Rules {
    drop: Vec<Regex>,
    keep: Vec<Regex>,
    summary: Vec<Regex>,
    head: Option<usize>,
    tail: Option<usize>,
    collapse: Option<bool>,
}

impl Rules {
    /// These rules with `more` on top: its patterns added, its numbers in place.
    fn with(&self, more: &Rules) -> Rules {
        let cat = |a: &[Regex], b: &[Regex]| a.iter().chain(b).cloned().collect();
        Rules {
            drop: cat(&self.drop, &more.drop),
            keep: cat(&self.keep, &more.keep),
            summary: cat(&self.summary, &more.summary),
            head: more.head.or(self.head),
            tail: more.tail.or(self.tail),
            collapse: more.collapse.or(self.collapse),
        }
    }
}

/// One inline test of a filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Test {
    /// What the test is called in `lens verify`'s report.
    pub name: String,
    /// A command line the filter's `match` must cover, when given.
    pub command: Option<String>,
    /// The command's stdout.
    pub input: String,
    /// The command's stderr.
    pub stderr: String,
    /// Its exit code.
    pub exit: i32,
    /// Text the view must hold.
    pub expect_contains: Vec<String>,
    /// Text the view must not hold.
    pub expect_missing: Vec<String>,
}

/// A user's filter, parsed and compiled.
#[derive(Clone, Debug)]
pub struct Filter {
    /// Its name, unique in its file.
    pub name: String,
    pub(super) matcher: Regex,
    rules: Rules,
    when: Vec<(Exits, Rules)>,
    /// Its inline tests.
    pub tests: Vec<Test>,
}

/// The filters of one file, in file order.
#[derive(Clone, Debug, Default)]
pub struct FilterSet {
    /// The filters; the first whose `match` covers a command line is its shape.
    pub filters: Vec<Arc<Filter>>,
}

/// The command line a filter's `match` reads: the program's name without its
/// directory, then each argument, joined by spaces.
pub fn command_line(argv: &[String]) -> String {
    let mut words = argv.iter();
    let mut line = words
        .next()
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
        .unwrap_or_default();
    for w in words {
        line.push(' ');
        line.push_str(w);
    }
    line
}

impl FilterSet {
    /// Parses a filter file's text. The error is one line naming the filter (when
    /// the problem is inside one) and what is wrong with it.
    pub fn parse(text: &str) -> Result<FilterSet, String> {
        let table: toml::Table = toml::from_str(text).map_err(|e: toml::de::Error| {
            let at = e.span().map_or(String::new(), |s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!(" at line {line}")
            });
            format!("not valid TOML{at}: {}", one_line(e.message()))
        })?;
        for key in table.keys() {
            if key != "filter" {
                return Err(format!(
                    "unknown key {key:?} at the top level; a filter file holds only [[filter]] tables"
                ));
            }
        }
        let list = match table.get("filter") {
            None => return Ok(FilterSet::default()),
            Some(toml::Value::Array(a)) => a.clone(),
            Some(_) => return Err("`filter` must be [[filter]] tables".into()),
        };
        let mut filters: Vec<Arc<Filter>> = Vec::new();
        for (i, value) in list.into_iter().enumerate() {
            let label = value
                .get("name")
                .and_then(|n| n.as_str())
                .map_or_else(|| format!("#{}", i + 1), |n| format!("{n:?}"));
            let raw: RawFilter = value
                .try_into()
                .map_err(|e| format!("filter {label}: {}", one_line(e.message())))?;
            let f = Filter::compile(raw).map_err(|e| format!("filter {label}: {e}"))?;
            if filters.iter().any(|g| g.name == f.name) {
                return Err(format!(
                    "filter {label}: a second filter of that name; give each a name of its own"
                ));
            }
            filters.push(Arc::new(f));
        }
        Ok(FilterSet { filters })
    }

    /// The first filter whose `match` covers the command `argv`.
    pub fn pick(&self, argv: &[String]) -> Option<Arc<Filter>> {
        let line = command_line(argv);
        self.filters
            .iter()
            .find(|f| !line.is_empty() && f.covers(&line))
            .cloned()
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Compiles a pattern under the size limit; the error names the key and the pattern.
fn pattern(key: &str, p: &str) -> Result<Regex, String> {
    RegexBuilder::new(p)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let why = match e {
                regex::Error::CompiledTooBig(_) => format!(
                    "is too large once compiled (over {} KiB); make it simpler",
                    REGEX_SIZE_LIMIT >> 10
                ),
                e => format!("does not compile: {}", one_line(&e.to_string())),
            };
            format!("{key} pattern {p:?} {why}")
        })
}

fn patterns(key: &str, list: &[String]) -> Result<Vec<Regex>, String> {
    list.iter().map(|p| pattern(key, p)).collect()
}

impl Filter {
    fn compile(raw: RawFilter) -> Result<Filter, String> {
        if raw.name.trim().is_empty() {
            return Err("the name is empty; give it one, e.g. name = \"terraform-plan\"".into());
        }
        if raw.matches.is_empty() {
            return Err("match is empty; give a pattern for the command line, e.g. match = '^terraform plan\\b'".into());
        }
        let matcher = pattern("match", &raw.matches)?;
        let rules = Rules {
            drop: patterns("drop", &raw.drop)?,
            keep: patterns("keep", &raw.keep)?,
            summary: patterns("summary", &raw.summary)?,
            head: raw.head,
            tail: raw.tail,
            collapse: raw.collapse,
        };
        let mut when = Vec::new();
        for w in raw.when {
            let exits = match w.exit {
                RawExit::One(n) => Exits::Codes(vec![code(n)?]),
                RawExit::Many(v) => Exits::Codes(v.into_iter().map(code).collect::<Result<_, _>>()?),
                RawExit::Word(w) if w == "nonzero" => Exits::Nonzero,
                RawExit::Word(w) => {
                    return Err(format!(
                        "when.exit = {w:?} is not an exit code; give a code, a list of codes, or \"nonzero\""
                    ))
                }
            };
            let rules = Rules {
                drop: patterns("when.drop", &w.drop)?,
                keep: patterns("when.keep", &w.keep)?,
                summary: patterns("when.summary", &w.summary)?,
                head: w.head,
                tail: w.tail,
                collapse: w.collapse,
            };
            when.push((exits, rules));
        }
        let mut tests: Vec<Test> = Vec::new();
        for t in raw.test {
            if tests.iter().any(|u| u.name == t.name) {
                return Err(format!(
                    "two tests named {:?}; give each a name of its own",
                    t.name
                ));
            }
            if t.expect_contains.is_empty() && t.expect_missing.is_empty() {
                return Err(format!(
                    "test {:?} expects nothing; add expect_contains or expect_missing",
                    t.name
                ));
            }
            tests.push(Test {
                name: t.name,
                command: t.command,
                input: t.input,
                stderr: t.stderr,
                exit: t.exit,
                expect_contains: t.expect_contains,
                expect_missing: t.expect_missing,
            });
        }
        Ok(Filter {
            name: raw.name,
            matcher,
            rules,
            when,
            tests,
        })
    }

    /// True when the filter's `match` covers this command line.
    pub fn covers(&self, line: &str) -> bool {
        self.matcher.is_match(line)
    }

    /// The exit codes its `[[filter.when]]` rules name (`nonzero` names none).
    pub(super) fn named_exits(&self) -> impl Iterator<Item = i32> + '_ {
        self.when
            .iter()
            .flat_map(|(e, _)| match e {
                Exits::Codes(c) => c.as_slice(),
                Exits::Nonzero => &[],
            })
            .copied()
    }

    /// The rules for a run that exited with `exit`: the filter's own, with the
    /// first `when` block that covers the code on top.
    fn rules_for(&self, exit: i32) -> Rules {
        match self.when.iter().find(|(e, _)| e.covers(exit)) {
            Some((_, more)) => self.rules.with(more),
            None => self.rules.clone(),
        }
    }

    /// Annotates the doc with the filter's rules; a stage of [`crate::annotate`].
    /// Lines are only given a fate (and a summary line its class); a line the
    /// classifier calls an error is never dropped.
    pub fn apply(&self, doc: &mut Doc) {
        let rules = self.rules_for(doc.exit);
        for stream in [Stream::Stdout, Stream::Stderr] {
            let range = doc.range(stream);
            let lines = &mut doc.lines[range];
            for l in lines.iter_mut() {
                let text = l.text.as_ref();
                if rules.summary.iter().any(|r| r.is_match(text)) {
                    l.class = Class::Summary;
                    l.fate = Fate::Force;
                } else if rules.keep.iter().any(|r| r.is_match(text)) {
                    l.fate = Fate::Force;
                } else if rules.drop.iter().any(|r| r.is_match(text)) && !is_error(l) {
                    l.drop_for(Reason::Filter);
                }
            }
            if rules.collapse == Some(true) {
                collapse(lines);
            }
            if rules.head.is_some() || rules.tail.is_some() {
                head_tail(lines, rules.head, rules.tail);
            }
        }
    }
}

fn code(n: i64) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| format!("when.exit = {n} is not an exit code"))
}

pub(super) fn split(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// True when the classifier calls the line an error: such a line stays.
fn is_error(l: &crate::doc::Line) -> bool {
    l.class == Class::Error || classify::trouble(&l.text) == Some(Class::Error)
}

/// The line with every run of digits as one `0`: lines that differ only in
/// counts, sizes and times read as the same.
fn masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('0');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// In a run of three or more lines still shown that differ only in their
/// digits, the lines between the first and the last are repeats.
fn collapse(lines: &mut [crate::doc::Line]) {
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].shown() || lines[i].class == Class::Blank {
            i += 1;
            continue;
        }
        let key = masked(&lines[i].text);
        let mut j = i + 1;
        while j < lines.len() && lines[j].shown() && masked(&lines[j].text) == key {
            j += 1;
        }
        if j - i >= 3 {
            for l in &mut lines[i + 1..j - 1] {
                if !is_error(l) {
                    l.drop_for(Reason::Repeat);
                }
            }
        }
        i = j;
    }
}

/// Of the lines still shown and not blank, the first `head` and the last
/// `tail` stay; the others are dropped unless kept or errors.
fn head_tail(lines: &mut [crate::doc::Line], head: Option<usize>, tail: Option<usize>) {
    let shown: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].shown() && lines[i].class != Class::Blank)
        .collect();
    let n = shown.len();
    let (h, t) = match (head, tail) {
        (Some(h), Some(t)) => (h, t),
        (Some(h), None) => (h, 0),
        (None, Some(t)) => (0, t),
        (None, None) => return,
    };
    if h + t >= n {
        return;
    }
    let cut = &shown[h..n - t];
    let (from, to) = (cut[0], cut[cut.len() - 1]);
    for l in &mut lines[from..=to] {
        if !is_error(l) {
            l.drop_for(Reason::Filter);
        }
    }
}
