//! The Lens filter: captured command output in, a smaller view out.
//!
//! A run's two streams become one [`Doc`]: lines that stages annotate with a class
//! and a fate but never rewrite or renumber. The stages run in order: `progress`
//! collapses redraws and `Compiling …` runs, `blocks` groups lines that belong
//! together, `classify` says which lines are failures, warnings and summaries,
//! configured patterns apply, `frames` drops a stack trace's runs of test-runner
//! and JDK frames, `dedupe` drops repeats, `context` force-keeps failures
//! with their neighbours, and `rank` fits the rest under the budget. Where every
//! line is distinct and real (fifty findings, a commit log, a listing), `cause` and
//! the classify shapes put a digest in place of the region: one marker, then a
//! compact form that still names every location, and `excerpt` drops the source a
//! finding quotes once there are more than a handful of causes. `render` then
//! prints the level asked for, and every run of dropped lines becomes one marker that
//! names the stream, the raw line range and the store handle.
//!
//! Levels are renderings of the one annotated `Doc`: 3 is the raw bytes, 2 the
//! ranked view, 1 the failures (or the head of the view when nothing failed), 0 a
//! count and one line.
//!
//! ```
//! use lens_core::{view, Handle, Level, Options, Request};
//!
//! let argv = vec!["cargo".to_string(), "build".to_string()];
//! let mut err = String::new();
//! for i in 0..40 {
//!     err.push_str(&format!("   Compiling dep{i} v0.1.0\n"));
//! }
//! err.push_str("error: could not compile `app` (bin \"app\") due to 1 previous error\n");
//! let req = Request { argv: &argv, stdout: b"", stderr: err.as_bytes(), exit: 101 };
//! let opts = Options::new(Level::Two, Some(Handle::parse("1a2b3c4d").unwrap()));
//! let v = view(&req, &opts);
//! assert_eq!(
//!     String::from_utf8_lossy(&v.stderr),
//!     "[lens: elided stderr 1-40 (40 lines: progress) handle=1a2b3c4d]\n\
//!      error: could not compile `app` (bin \"app\") due to 1 previous error\n"
//! );
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod check;
pub mod config;
pub mod digest;
pub mod doc;
pub mod filters;
pub mod handle;
pub mod history;
pub mod marker;
pub mod par;
pub mod render;
pub mod sample;
pub mod stages;
mod stream;
pub mod text;

use std::borrow::Cow;

use regex::Regex;

pub use config::{Config, Level, Settings, DEFAULT_BUDGET};
pub use doc::{Class, Doc, Fate, Line, Part, Reason, Stream};
pub use handle::Handle;
pub use marker::{CutShort, Header, Marker, Shown};

/// A finished run: what the child was, what it wrote, how it ended.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The command line as typed.
    pub argv: &'a [String],
    /// Everything the child wrote to stdout.
    pub stdout: &'a [u8],
    /// Everything the child wrote to stderr.
    pub stderr: &'a [u8],
    /// The child's exit code, 128 + signum for a signal death.
    pub exit: i32,
}

/// How to filter.
#[derive(Clone, Debug)]
pub struct Options {
    /// Level of detail.
    pub level: Level,
    /// Byte budget for level 2.
    pub budget: usize,
    /// Where the raw output is stored. `None` means it could not be stored, and then
    /// nothing is elided: a view must never lose what the store does not hold.
    pub handle: Option<Handle>,
    /// Lines matching these are always kept.
    pub keep: Vec<Regex>,
    /// Lines matching these are dropped (announced like any other elision).
    pub drop: Vec<Regex>,
    /// A user's filter for this command: the shape in place of the built-in
    /// family finders ([`filters`]).
    pub filter: Option<std::sync::Arc<filters::Filter>>,
}

impl Options {
    /// Options with the default budget and no patterns.
    pub fn new(level: Level, handle: Option<Handle>) -> Options {
        Options {
            level,
            budget: DEFAULT_BUDGET,
            handle,
            keep: Vec::new(),
            drop: Vec::new(),
            filter: None,
        }
    }
}

/// The bytes to print on each stream.
#[derive(Debug)]
pub struct View<'a> {
    /// What to write to stdout.
    pub stdout: Cow<'a, [u8]>,
    /// What to write to stderr.
    pub stderr: Cow<'a, [u8]>,
    /// True when any line was elided (and so a marker was printed).
    pub elided: bool,
}

impl View<'_> {
    /// Bytes of both streams together.
    pub fn len(&self) -> usize {
        self.stdout.len() + self.stderr.len()
    }

    /// True when both streams are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Runs every stage over the doc and narrows it to `opts.level`.
pub fn annotate(doc: &mut Doc, opts: &Options) {
    stages::progress::run(doc);
    stages::blocks::run(doc);
    match &opts.filter {
        // A user's filter is the command's shape: the built-in finders step aside,
        // the lines keep the classes every stage after this one reads.
        Some(f) => {
            stages::classify::classes(doc);
            f.apply(doc);
        }
        None => stages::classify::run(doc),
    }
    stages::patterns::run(doc, &opts.keep, &opts.drop);
    stages::frames::run(doc);
    stages::cause::run(doc);
    stages::excerpt::run(doc);
    stages::cause::apply(doc, opts.budget);
    stages::dedupe::run(doc);
    stages::context::run(doc, opts.budget);
    stages::rank::run(doc, opts.budget);
    // Before the level narrows the view, so levels 1 and 0 fold what level 2
    // folds and never show a line it hides. Only an output over the budget is
    // folded: one under it is shown as it was written. A user's filter decides
    // what its command shows: the lines it keeps stay as they are.
    let over = doc.lines.iter().map(|l| l.text.len() + 1).sum::<usize>() > opts.budget;
    if over && opts.filter.is_none() {
        stages::fold::run(doc);
    }
    match opts.level {
        Level::One => stages::level::one(doc),
        Level::Zero => stages::level::zero(doc),
        Level::Two | Level::Three => {}
    }
    stages::redraw::run(doc);
    let detail = match opts.level {
        Level::One => digest::Detail::Head,
        _ => digest::Detail::Full,
    };
    stages::budget::run(doc, opts.budget, detail, opts.level == Level::Two);
}

/// The view of a finished run.
///
/// Raw output comes back unchanged at level 3, when there is no handle, for a stream
/// that is not valid UTF-8, and whenever no view would be smaller than the raw.
pub fn view<'a>(req: &Request<'a>, opts: &Options) -> View<'a> {
    let (out, err, elided) = build_whole(req, opts, false);
    View {
        stdout: out.map_or(Cow::Borrowed(req.stdout), |s| Cow::Owned(s.into_bytes())),
        stderr: err.map_or(Cow::Borrowed(req.stderr), |s| Cow::Owned(s.into_bytes())),
        elided,
    }
}

/// The view of a finished run as the pipeline renders it, each stream's bytes,
/// even where it is no smaller than the raw output (which [`view`] would return
/// instead): what a user filter's tests and `lens verify` read. A stream that is
/// not UTF-8, level 3 and no handle are raw, as for [`view`].
pub fn rendered(req: &Request, opts: &Options) -> (Vec<u8>, Vec<u8>) {
    let (out, err, _) = build_whole(req, opts, true);
    (
        out.map_or_else(|| req.stdout.to_vec(), String::into_bytes),
        err.map_or_else(|| req.stderr.to_vec(), String::into_bytes),
    )
}

/// [`build`] on a finished run whose streams are read whole.
fn build_whole(
    req: &Request,
    opts: &Options,
    always: bool,
) -> (Option<String>, Option<String>, bool) {
    fn part(b: &[u8]) -> Input<'_> {
        Input {
            part: std::str::from_utf8(b).ok().map(Part::whole),
            raw_len: b.len() as u64,
        }
    }
    let (out, err) = (part(req.stdout), part(req.stderr));
    build(req.argv, out, err, req.exit, opts, always)
}

/// One stream for [`view_parts`]: what the pipeline can read of it (`None` when it
/// must be shown raw: not UTF-8), and its raw size in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The stream's text, whole or sampled.
    pub part: Option<Part<'a>>,
    /// Bytes the child wrote to it.
    pub raw_len: u64,
}

/// The view of a run whose streams may be samples ([`sample`]): for each stream,
/// the text to print, or `None` to print the raw stream as the child wrote it.
/// The rules are [`view`]'s.
pub fn view_parts(
    argv: &[String],
    stdout: Input,
    stderr: Input,
    exit: i32,
    opts: &Options,
) -> (Option<String>, Option<String>, bool) {
    build(argv, stdout, stderr, exit, opts, false)
}

/// The view of each stream (`None`: the raw stream). With `always`, the view is
/// kept even when it is no smaller than the raw output.
fn build(
    argv: &[String],
    out: Input,
    err: Input,
    exit: i32,
    opts: &Options,
    always: bool,
) -> (Option<String>, Option<String>, bool) {
    let handle = match (opts.level, opts.handle) {
        (Level::Three, _) | (_, None) => return (None, None, false),
        (_, Some(h)) => h.to_string(),
    };
    // Asked to show a source file, Lens shows it: the reader asked for its lines.
    if opts.level == Level::Two && shows_source(argv) {
        return (None, None, false);
    }
    // A stream that is not text passes through byte for byte; the other is filtered.
    let empty = Part::whole("");
    let mut doc = Doc::from_parts(
        argv,
        out.part.unwrap_or(empty),
        err.part.unwrap_or(empty),
        exit,
    );
    annotate(&mut doc, opts);
    let detail = match opts.level {
        Level::Zero => None,
        Level::One => Some(digest::Detail::Head),
        Level::Two | Level::Three => Some(digest::Detail::Full),
    };
    let mut v_out = out
        .part
        .and_then(|_| render::stream(&doc, Stream::Stdout, &handle, detail));
    let v_err = err
        .part
        .and_then(|_| render::stream(&doc, Stream::Stderr, &handle, detail));
    if opts.level == Level::Zero {
        let mut s = render::summary(&doc, &handle);
        s.push('\n');
        match (v_out.as_mut(), out.part) {
            (Some(o), _) => o.insert_str(0, &s),
            (None, Some(p)) if p.numbers.is_none() => {
                s.push_str(p.text);
                v_out = Some(s);
            }
            _ => {}
        }
    }
    let elided = doc.lines.iter().any(|l| !l.shown())
        || [Stream::Stdout, Stream::Stderr]
            .iter()
            .any(|&s| doc.total(s) as usize != doc.range(s).len());
    let size = |v: &Option<String>, raw: u64| v.as_ref().map_or(raw, |s| s.len() as u64);
    if !always && size(&v_out, out.raw_len) + size(&v_err, err.raw_len) >= out.raw_len + err.raw_len
    {
        // Markers can cost more than the few lines they stand for. A narrower level
        // then falls back to level 2's view (which shows a superset of its lines),
        // and level 2 to the raw output.
        if opts.level < Level::Two {
            return build(
                argv,
                out,
                err,
                exit,
                &Options {
                    level: Level::Two,
                    ..opts.clone()
                },
                always,
            );
        }
        return (None, None, false);
    }
    (v_out, v_err, elided)
}

/// Extensions of the files whose every line a reader means to read: source
/// code and the configuration next to it. A log is not one of them.
const SOURCE: &[&str] = &[
    "rs",
    "py",
    "pyi",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "go",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cxx",
    "java",
    "kt",
    "kts",
    "scala",
    "rb",
    "php",
    "swift",
    "m",
    "cs",
    "fs",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "lua",
    "pl",
    "r",
    "sh",
    "bash",
    "zsh",
    "sql",
    "toml",
    "yaml",
    "yml",
    "json",
    "ini",
    "cfg",
    "conf",
    "xml",
    "html",
    "css",
    "scss",
    "vue",
    "svelte",
    "md",
    "rst",
    "txt",
    "mk",
    "cmake",
    "gradle",
    "proto",
    "tf",
    "nix",
    "dockerfile",
    "lock",
];

/// True when `argv` prints source files and nothing else: `cat`, `head`, `tail`,
/// `bat` or `sed -n` of operands that each name a source file (or `Makefile`,
/// `Dockerfile`).
fn shows_source(argv: &[String]) -> bool {
    let Some(name) = argv.first().and_then(|a| a.rsplit('/').next()) else {
        return false;
    };
    let args = &argv[1..];
    let mut operands: Vec<&str> = Vec::new();
    match name {
        "cat" | "bat" | "head" | "tail" => {
            let mut it = args.iter();
            while let Some(a) = it.next() {
                if a == "-n" && name != "cat" || a == "-c" {
                    it.next();
                } else if !a.starts_with('-') {
                    operands.push(a);
                }
            }
        }
        "sed" => {
            // `sed -n 'A,Bp' file`: a range of lines printed as they are.
            if args.first().map(String::as_str) != Some("-n") || args.len() < 3 {
                return false;
            }
            let script = &args[1];
            let prints = script.ends_with('p')
                && script[..script.len() - 1]
                    .bytes()
                    .all(|c| c.is_ascii_digit() || c == b',' || c == b'$');
            if !prints {
                return false;
            }
            operands.extend(args[2..].iter().map(String::as_str));
        }
        _ => return false,
    }
    !operands.is_empty()
        && operands.iter().all(|o| {
            let file = o.rsplit('/').next().unwrap_or(o);
            let ext = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
            matches!(file, "Makefile" | "Dockerfile" | "Gemfile" | "Rakefile")
                || ext.is_some_and(|e| SOURCE.contains(&e.as_str()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_file_shown_by_cat_head_or_sed_is_shown_whole() {
        let src: String = (0..2000)
            .map(|i| format!("fn f{i}() {{ g({i}); }}\n"))
            .collect();
        for cmd in [
            "cat src/lib.rs",
            "head -n 3000 src/lib.rs",
            "sed -n 1,3000p src/lib.rs",
            "cat Makefile a.py",
        ] {
            let argv: Vec<String> = cmd.split(' ').map(str::to_string).collect();
            let req = Request {
                argv: &argv,
                stdout: src.as_bytes(),
                stderr: b"",
                exit: 0,
            };
            let v = view(&req, &Options::new(Level::Two, Handle::parse("0000abcd")));
            assert_eq!(&*v.stdout, src.as_bytes(), "{cmd}");
            assert!(!v.elided, "{cmd}");
        }
        // A log, or a command that is not a plain print, is filtered as ever.
        for cmd in [
            "cat server.log",
            "sed -e s/a/b/ src/lib.rs",
            "grep fn src/lib.rs",
            "cat",
        ] {
            let argv: Vec<String> = cmd.split(' ').map(str::to_string).collect();
            assert!(!shows_source(&argv), "{cmd}");
        }
    }

    fn run(out: &str, err: &str, exit: i32, level: Level) -> (String, String, bool) {
        let argv = vec!["x".to_string()];
        let req = Request {
            argv: &argv,
            stdout: out.as_bytes(),
            stderr: err.as_bytes(),
            exit,
        };
        let v = view(&req, &Options::new(level, Handle::parse("0000abcd")));
        (
            String::from_utf8(v.stdout.into_owned()).unwrap(),
            String::from_utf8(v.stderr.into_owned()).unwrap(),
            v.elided,
        )
    }

    #[test]
    fn level_three_and_no_handle_are_raw() {
        let out = "  Compiling a\n".repeat(50);
        assert_eq!(run(&out, "", 0, Level::Three).0, out);
        let argv = vec![];
        let req = Request {
            argv: &argv,
            stdout: out.as_bytes(),
            stderr: b"",
            exit: 0,
        };
        let v = view(&req, &Options::new(Level::Two, None));
        assert_eq!(&*v.stdout, out.as_bytes());
        assert!(!v.elided);
    }

    #[test]
    fn invalid_utf8_stream_passes_through_byte_for_byte() {
        let argv = vec![];
        let bad: Vec<u8> = b"\xff\xfe binary\n".repeat(100);
        let err = "  Compiling a\n".repeat(50);
        let req = Request {
            argv: &argv,
            stdout: &bad,
            stderr: err.as_bytes(),
            exit: 0,
        };
        let v = view(&req, &Options::new(Level::Two, Handle::parse("0000abcd")));
        assert_eq!(&*v.stdout, &bad[..]);
        assert!(v.stderr.len() < err.len());
    }

    #[test]
    fn level_zero_is_a_count_and_one_line() {
        let out: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let (o, e, elided) = run(&out, "", 0, Level::Zero);
        assert!(elided);
        assert!(e.is_empty());
        let lines: Vec<&str> = o.lines().collect();
        assert_eq!(
            lines[0],
            "[lens: summary exit=0 stdout=100 stderr=0 errors=0 warnings=0 handle=0000abcd]"
        );
        assert_eq!(
            lines[1],
            "[lens: elided stdout 1-99 (99 lines: level; all like \"line …\"; no error or warning) handle=0000abcd]"
        );
        assert_eq!(lines[2], "line 99");
    }

    #[test]
    fn only_an_output_over_the_budget_is_folded() {
        // `seq 1 100` is 292 bytes: shown as written, not as `{1..100}`.
        let small: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let (o, _, elided) = run(&small, "", 0, Level::Two);
        assert_eq!((o.as_str(), elided), (small.as_str(), false));
        // A make -k over 60 files, past the budget: its units fold.
        let big: String = (0..60)
            .map(|f| format!("cc -c src/codec_{f:02}.c -o build/codec_{f:02}.o\nsrc/codec_{f:02}.c:4:10: error: unknown type name 'size_t'\nmake: *** [Makefile:9: build/codec_{f:02}.o] Error 1\n"))
            .collect();
        let (o, _, _) = run(&big, "", 2, Level::Two);
        assert!(o.contains("(N = "), "{o}");
        assert!(o.len() < big.len() / 4, "{o}");
    }

    #[test]
    fn view_is_never_larger_than_raw() {
        let (o, _, elided) = run("one line\n", "", 0, Level::Zero);
        assert_eq!(o, "one line\n");
        assert!(!elided);
    }

    #[test]
    fn level_one_never_renders_empty() {
        let out: String = (0..300)
            .map(|i| format!("src/f{i}.rs:{}: match\n", (i * 37) % 101 + 1))
            .collect();
        let (o, _, _) = run(&out, "", 0, Level::One);
        assert!(o.starts_with("src/f0.rs:1: match\n"), "{o}");
        // The head, at most level 1's 20 lines; 300 lines of one shape leave
        // the budget's head and tail, the rest under one `all like` marker.
        let content = o.lines().filter(|l| !l.starts_with("[lens:")).count();
        assert!((1..=20).contains(&content), "{o}");
        assert!(o.contains("all like \"src/….rs:…: match\""), "{o}");
    }
}
