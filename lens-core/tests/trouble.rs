//! A marker never says a region holds no error or warning when it holds one
//! (issue 29, item 2; invariant 4: an elision is announced truthfully). For every
//! shape Lens reads (cargo, pytest, go test, git log, grep, ls, make, an unknown
//! command, a log file), outputs of that shape's ordinary lines with error and
//! warning lines of every common form at random places are viewed at levels 0 to
//! 2 under small budgets, and each marker's trouble count is checked against the
//! raw region it names: the lines the lexicon calls errors or warnings, and the
//! lines any classifier does (a line's class, a finder's report).

mod common;

use common::HANDLE;
use lens_core::marker::Marker;
use std::collections::HashSet;

use lens_core::{annotate, view, Class, Doc, Handle, Level, Options, Request, Stream};
use proptest::prelude::*;

/// Every error form of issue 29 and the common log formats; `{n}` is a number
/// that makes each occurrence its own line.
const ERRORS: &[&str] = &[
    "FATAL ERROR: out of memory in worker {n}",
    "ERROR worker crashed at {n}",
    "E AndroidRuntime: FATAL EXCEPTION: main {n}",
    "01-01 12:00:00.{n}  1234  1234 E AndroidRuntime: FATAL EXCEPTION: main",
    "E/AndroidRuntime( {n}): FATAL EXCEPTION: main",
    "panic: runtime error: index out of range [{n}] with length 3",
    "CRITICAL disk almost full on /var/{n}",
    "CRIT pool {n} exhausted",
    "ld: symbol(s) not found for architecture arm64 ({n})",
    "Uncaught TypeError: Cannot read properties of undefined (reading 'x{n}')",
    "Exception in thread \"worker-{n}\" java.lang.NullPointerException",
    "fatal error: all goroutines are asleep - deadlock! {n}",
    "error: linking with `cc` failed: exit status: {n}",
    "error[E0308]: mismatched types in case {n}",
    "src/main.c:{n}:5: error: expected ';' before '}' token",
    "Traceback (most recent call last): {n}",
    "npm ERR! code E{n}",
    "FAILED tests/test_a.py::test_{n} - assert 1 == 2",
    "thread 'main' panicked at src/main.rs:{n}:5:",
    "[ERROR] could not bind 0.0.0.0:{n}",
    "[error] upstream {n} timed out",
    "2024-01-01 12:00:00 ERROR db{n}: connection refused",
    "level=error msg=\"connection {n} refused\"",
    "{\"level\":\"error\",\"msg\":\"connection {n} refused\"}",
    "{\"severity\":\"ERROR\",\"message\":\"boom {n}\"}",
    "Segmentation fault (core dumped) {n}",
    "make: *** [Makefile:{n}: all] Error 1",
];

const WARNINGS: &[&str] = &[
    "warning: unused variable: `x{n}`",
    "src/a.c:{n}:2: warning: implicit declaration",
    "WARN config key {n} deprecated",
    "WARNING: the cache {n} is stale",
    "2024-01-01 12:00:00 WARNING disk at {n}%",
    "level=warn msg=slow{n}",
    "W/ActivityManager( {n}): Slow operation",
    "npm WARN deprecated left-pad@1.0.{n}",
];

/// A shape: the command line and its ordinary lines (numbered by `n`).
struct Shape {
    argv: &'static str,
    normal: fn(usize) -> String,
}

const SHAPES: &[Shape] = &[
    Shape {
        argv: "cargo test",
        normal: |n| match n % 3 {
            0 => format!("   Compiling dep{n} v0.1.{n}"),
            _ => format!("test m{}::case_{n} ... ok", n % 7),
        },
    },
    Shape {
        argv: "pytest -v",
        normal: |n| format!("tests/test_m{}.py::test_case_{n} PASSED", n % 5),
    },
    Shape {
        argv: "go test -v ./...",
        normal: |n| match n % 2 {
            0 => format!("=== RUN   TestCase{n}"),
            _ => format!("--- PASS: TestCase{} (0.00s)", n - 1),
        },
    },
    Shape {
        argv: "git log",
        normal: |n| match n % 5 {
            0 => format!("commit {:040x}", n * 7919),
            1 => "Author: A U Thor <a@example.com>".to_string(),
            2 => format!("Date:   Mon Jan {} 12:00:00 2024 +0000", n % 28 + 1),
            3 => String::new(),
            _ => format!("    change {n} to the ledger"),
        },
    },
    Shape {
        argv: "grep -rn load src",
        normal: |n| {
            format!(
                "src/m{}.rs:{}:pub fn load_{n}(db: &Db) -> u64 {{",
                n % 6,
                n + 1
            )
        },
    },
    Shape {
        argv: "ls",
        normal: |n| format!("file_{n:04}.txt"),
    },
    Shape {
        argv: "make",
        normal: |n| format!("cc -Wall -Werror -c -o obj/m{n}.o src/m{n}.c"),
    },
    Shape {
        argv: "deploy --all",
        normal: |n| format!("processed job {n} ok in {} ms", n % 97),
    },
    Shape {
        // Ids of hex digits, some without a digit (`ACC-CEEABDBD`), and now and
        // then a word in their place: a marker may say `all like` over the
        // first, never over the second.
        argv: "python3 audit.py",
        normal: |n| {
            let id = format!("{:08X}", (n as u32).wrapping_mul(2_654_435_761));
            let id = match n % 101 {
                50 => "PENDING".to_string(),
                k if k % 13 == 5 => id
                    .chars()
                    .map(|c| match c.to_digit(10) {
                        Some(d) => char::from(b'A' + (d % 6) as u8),
                        None => c,
                    })
                    .collect(),
                _ => id,
            };
            format!("checked ACC-{id} balance {}.{:02} ok", n % 900, n % 100)
        },
    },
    Shape {
        argv: "tail -n 3000 /var/log/app.log",
        normal: |n| {
            format!(
                "2024-01-01 12:{:02}:{:02} INFO request {n} ok",
                n / 60 % 60,
                n % 60
            )
        },
    },
];

/// An output: `len` ordinary lines of `shape`, with the trouble lines `picks`
/// (form, place) put in; and the raw numbers of the lines put in, each with
/// whether it is an error.
fn output(shape: &Shape, len: usize, picks: &[(usize, usize)]) -> (String, Vec<(u32, bool)>) {
    let mut lines: Vec<(String, Option<bool>)> =
        (0..len).map(|n| ((shape.normal)(n), None)).collect();
    let forms: Vec<(&str, bool)> = ERRORS
        .iter()
        .map(|f| (*f, true))
        .chain(WARNINGS.iter().map(|f| (*f, false)))
        .collect();
    for (k, &(form, at)) in picks.iter().enumerate() {
        let (form, error) = forms[form % forms.len()];
        let line = form.replace("{n}", &(100 + k).to_string());
        lines.insert(at % (lines.len() + 1), (line, Some(error)));
    }
    let put: Vec<(u32, bool)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, (_, e))| e.map(|e| (i as u32 + 1, e)))
        .collect();
    let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    (text.join("\n") + "\n", put)
}

/// In the region `first..=last` of `stream`: the error and warning lines put in,
/// and every line that was put in or that a classifier calls an error or a
/// warning (its class, or a finder's report).
fn trouble_in(
    doc: &Doc,
    stream: Stream,
    put: &[(u32, bool)],
    first: u32,
    last: u32,
) -> (u32, u32, u32) {
    let heads: HashSet<usize> = doc.findings.iter().map(|f| f.head).collect();
    let put_at: HashSet<u32> = put.iter().map(|p| p.0).collect();
    let inside = |no: u32| first <= no && no <= last;
    let e = put.iter().filter(|p| p.1 && inside(p.0)).count() as u32;
    let w = put.iter().filter(|p| !p.1 && inside(p.0)).count() as u32;
    let any = doc
        .range(stream)
        .filter(|&i| {
            let l = &doc.lines[i];
            inside(l.no)
                && (put_at.contains(&l.no)
                    || matches!(l.class, Class::Error | Class::Warning)
                    || heads.contains(&i))
        })
        .count() as u32;
    (e, w, any)
}

/// Checks every described marker of the view of `text` on `stream`.
fn check(
    argv: &[String],
    (text, put): &(String, Vec<(u32, bool)>),
    stream: Stream,
    level: Level,
    budget: usize,
) -> Result<(), TestCaseError> {
    let (out, err) = match stream {
        Stream::Stdout => (text.as_str(), ""),
        Stream::Stderr => ("", text.as_str()),
    };
    let req = Request {
        argv,
        stdout: out.as_bytes(),
        stderr: err.as_bytes(),
        exit: 1,
    };
    let mut opts = Options::new(level, Handle::parse(HANDLE));
    opts.budget = budget;
    let v = view(&req, &opts);
    let shown = match stream {
        Stream::Stdout => &v.stdout,
        Stream::Stderr => &v.stderr,
    };
    let shown = std::str::from_utf8(shown).unwrap();
    let mut doc = Doc::new(argv, out, err, 1);
    annotate(&mut doc, &opts);
    for line in shown.lines() {
        let Some(m) = Marker::parse(line) else {
            prop_assert!(
                !line.starts_with("[lens: elided"),
                "unparsed marker: {line}"
            );
            continue;
        };
        if let Some(like) = m.like.as_ref().filter(|l| l.all) {
            all_like(&doc, stream, &m, &like.shape)?;
        }
        let Some((errors, warnings)) = m.trouble else {
            continue;
        };
        let (e, w, any) = trouble_in(&doc, stream, put, m.first, m.last);
        if any > 0 {
            prop_assert!(
                errors + warnings > 0,
                "{line} holds {any} error or warning lines"
            );
        }
        // Exactly those lines: the ordinary lines hold none (`-Werror` in a
        // compile line is not an error), so the count is not inflated either.
        prop_assert_eq!(errors + warnings, any, "{}", line);
        prop_assert!(errors >= e && warnings + errors >= e + w, "{}", line);
        if m.digested {
            in_a_digest(&doc, stream, put, &m, shown)?;
        }
        if let Some(like) = &m.like {
            prop_assert!(like.shape.chars().any(char::is_alphanumeric), "{}", line);
        }
    }
    Ok(())
}

/// A word that varies: one holding a digit, or six or more hex digits in one
/// case.
const VARIES: &str = r"(?:\w*[0-9]\w*|[0-9a-f]{6,}|[0-9A-F]{6,})";

/// `all like "<shape>"` holds: every non-blank line of the marker's region,
/// trimmed and with `"` as `'`, is the shape with each `…` one word that varies
/// (or several joined by `.-:/,`), and a last `…` anything (the shape may be
/// cut short). Checked here apart from how Lens masks a line.
fn all_like(doc: &Doc, stream: Stream, m: &Marker, shape: &str) -> Result<(), TestCaseError> {
    let mut pattern = String::from("^");
    let n = shape.chars().count();
    for (k, c) in shape.chars().enumerate() {
        match c {
            '…' if k + 1 == n => pattern.push_str(".*"),
            '…' => pattern.push_str(&format!("{VARIES}(?:[.\\-:/,]{VARIES})*")),
            c => pattern.push_str(&regex::escape(&c.to_string())),
        }
    }
    pattern.push('$');
    let re = regex::Regex::new(&pattern).unwrap();
    for i in doc.range(stream) {
        let l = &doc.lines[i];
        if l.no < m.first || l.no > m.last || l.class == Class::Blank {
            continue;
        }
        let text = l.text.trim().replace('"', "'");
        prop_assert!(
            re.is_match(&text),
            "line {} {text:?} is not like {shape:?}",
            l.no
        );
    }
    Ok(())
}

/// The values one brace word stands for: `a{1..3}b`, `a{x,y}b`, `a{N}b` with
/// `n` the `(N = 01..15)` of its line; a word without braces stands for itself.
fn expand(word: &str, n: Option<(&str, &str)>) -> Vec<String> {
    let (Some(open), Some(close)) = (word.find('{'), word.find('}')) else {
        return vec![word.to_string()];
    };
    let (pre, inner, post) = (&word[..open], &word[open + 1..close], &word[close + 1..]);
    let range = match (inner, n) {
        ("N", Some(r)) => Some(r),
        _ => inner.split_once(".."),
    };
    let alts: Vec<String> = match range {
        Some((a, b)) => match (a.parse::<u32>(), b.parse::<u32>()) {
            (Ok(x), Ok(y)) => (x..=y).map(|k| format!("{k:0w$}", w = a.len())).collect(),
            _ => return vec![word.to_string()],
        },
        None => inner.split(',').map(String::from).collect(),
    };
    alts.iter()
        .flat_map(|a| expand(&format!("{pre}{a}{post}"), n))
        .collect()
}

static RANGE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"\{(?:\d+\.\.\d+|N)\}").unwrap());

static QUOTED: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r#"‘[^’]*’|`[^`]*`|'[^']*'|"[^"]*""#).unwrap());

/// What a view's lines stand for: each line, each line with one range once
/// per value (`{N}` … `(N = 01..15)` too), and each word of every line so
/// expanded (the places a `same … at:` line lists).
fn stands_for(view: &str) -> (HashSet<String>, HashSet<String>) {
    let (mut lines, mut words) = (HashSet::new(), HashSet::new());
    for line in view.lines() {
        let (body, n) = match line.rsplit_once("  (N = ") {
            Some((body, r)) => (body, r.trim_end_matches(')').split_once("..")),
            None => (line, None),
        };
        lines.insert(line.to_string());
        // One range in the line (a fold's): the line once per value.
        let ranges: Vec<regex::Match> = RANGE.find_iter(body).collect();
        if let [r] = ranges[..] {
            let (a, b) = match (r.as_str(), n) {
                ("{N}", Some(n)) => n,
                (w, _) => w[1..w.len() - 1].split_once("..").unwrap_or(("", "")),
            };
            if let (Ok(x), Ok(y)) = (a.parse::<u32>(), b.parse::<u32>()) {
                for k in x..=y {
                    let v = format!("{k:0w$}", w = a.len());
                    lines.insert(body.replace(r.as_str(), &v));
                }
            }
        }
        for w in body.split([' ', ',', '(', ')']) {
            words.extend(expand(w, n));
        }
    }
    (lines, words)
}

/// A marker that says its region's errors are each in a digest: every error
/// or warning line of the region is a line the view prints or stands for, or a
/// report whose place the view lists and whose message it prints.
fn in_a_digest(
    doc: &Doc,
    stream: Stream,
    put: &[(u32, bool)],
    m: &Marker,
    view: &str,
) -> Result<(), TestCaseError> {
    let (lines, words) = stands_for(view);
    let put_at: HashSet<u32> = put.iter().map(|p| p.0).collect();
    for i in doc.range(stream) {
        let l = &doc.lines[i];
        let report = doc.findings.iter().find(|f| f.head == i);
        let trouble = put_at.contains(&l.no)
            || matches!(l.class, Class::Error | Class::Warning)
            || report.is_some();
        if !(m.first <= l.no && l.no <= m.last && trouble) || lines.contains(l.text.as_ref()) {
            continue;
        }
        let listed = report.is_some_and(|f| {
            let place = f.location.as_str();
            let no_col = place.rsplit_once(':').map_or(place, |(p, _)| p);
            // The message printed (a cause's first report), or its values on
            // the line that lists the place (`error ×3: a.c:4:3 ‘x’, …`).
            let values: Vec<&str> = QUOTED.find_iter(&f.message).map(|q| q.as_str()).collect();
            (words.contains(place) || words.contains(no_col))
                && (view.contains(f.message.as_str())
                    || view.lines().any(|v| {
                        v.contains(place)
                            && !values.is_empty()
                            && values.iter().all(|q| v.contains(q))
                    }))
        });
        prop_assert!(
            listed,
            "{} says each error is in a digest, but line {} is in none: {}\n{view}",
            m.render(),
            l.no,
            l.text
        );
    }
    Ok(())
}

/// `make -k` over `files` files, each reporting every cause in `causes` (an
/// index into `CAUSES`) with its excerpt, then make's line; `odd` puts an
/// error of its own (`ERRORS`, or a report of a value no other file has)
/// before file `at`'s make line.
fn cascade(files: usize, causes: &[usize], odd: &[(usize, usize)]) -> (String, Vec<(u32, bool)>) {
    const CAUSES: &[&str] = &[
        "error: unknown type name ‘size_t’",
        "error: implicit declaration of function ‘memcpy’",
        "warning: unused variable ‘tmp’ [-Wunused-variable]",
    ];
    let mut lines: Vec<(String, Option<bool>)> = Vec::new();
    for f in 0..files {
        lines.push((
            format!("cc -O1 -Wall -c src/m{f:02}.c -o build/m{f:02}.o"),
            None,
        ));
        for (k, &c) in causes.iter().enumerate() {
            let cause = CAUSES[c % CAUSES.len()];
            lines.push((
                format!("src/m{f:02}.c:{}:10: {cause}", 4 + k),
                Some(!cause.starts_with("warning")),
            ));
            lines.push((format!("    {} |     size_t y = 0;", 4 + k), None));
            lines.push(("      |          ^~~~~~".to_string(), None));
        }
        for &(form, at) in odd {
            if at % files == f {
                let line = if form % 2 == 0 {
                    ERRORS[form % ERRORS.len()].replace("{n}", &(100 + f).to_string())
                } else {
                    format!(
                        "src/m{f:02}.c:{}:3: error: ‘odd{form}’ undeclared",
                        40 + form
                    )
                };
                lines.push((line, Some(true)));
            }
        }
        lines.push((
            format!("make: *** [Makefile:9: build/m{f:02}.o] Error 1"),
            Some(true),
        ));
    }
    let put = lines
        .iter()
        .enumerate()
        .filter_map(|(i, (_, e))| e.map(|e| (i as u32 + 1, e)))
        .collect();
    let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    (text.join("\n") + "\n", put)
}

fn level() -> impl Strategy<Value = Level> {
    prop_oneof![Just(Level::Zero), Just(Level::One), Just(Level::Two)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn a_marker_never_says_no_error_over_an_error(
        shape in 0..SHAPES.len(),
        len in 40usize..400,
        picks in prop::collection::vec((0usize..64, 0usize..400), 1..24),
        level in level(),
        budget in 256usize..2048,
        on_stderr in any::<bool>(),
    ) {
        let sh = &SHAPES[shape];
        let argv: Vec<String> = sh.argv.split_whitespace().map(String::from).collect();
        let text = output(sh, len, &picks);
        let stream = if on_stderr { Stream::Stderr } else { Stream::Stdout };
        check(&argv, &text, stream, level, budget)?;
    }
}

/// Each form, eight times among three hundred ordinary lines of each shape
/// (issue 29's case, smaller), at one level each in turn.
#[test]
fn every_form_in_every_shape_is_counted() {
    let forms: Vec<&str> = ERRORS.iter().chain(WARNINGS).copied().collect();
    let levels = [Level::Zero, Level::One, Level::Two];
    for (s, sh) in SHAPES.iter().enumerate() {
        let argv: Vec<String> = sh.argv.split_whitespace().map(String::from).collect();
        for (f, form) in forms.iter().enumerate() {
            let picks: Vec<(usize, usize)> = (0..8).map(|k| (f, k * 37 + 13)).collect();
            let out = output(sh, 300, &picks);
            let level = levels[(s + f) % levels.len()];
            check(&argv, &out, Stream::Stdout, level, 1024)
                .unwrap_or_else(|e| panic!("{} / {form} / {level:?}: {e}", sh.argv));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A cascade's markers say its errors are each in a digest only where the
    /// view stands for every one of them, odd errors among them or not.
    #[test]
    fn a_marker_says_each_error_is_in_a_digest_only_where_each_is(
        files in 2usize..24,
        causes in prop::collection::vec(0usize..3, 1..3),
        odd in prop::collection::vec((0usize..40, 0usize..24), 0..4),
        level in level(),
        budget in 512usize..8192,
        on_stderr in any::<bool>(),
    ) {
        let argv: Vec<String> = ["make", "-k"].map(String::from).to_vec();
        let text = cascade(files, &causes, &odd);
        let stream = if on_stderr { Stream::Stderr } else { Stream::Stdout };
        check(&argv, &text, stream, level, budget)?;
    }
}

/// The cascade of tasks/cascading-errors' shape, at the default budget: its
/// markers say so, and the claim is checked line by line.
#[test]
fn a_cascade_s_markers_say_its_errors_are_each_in_a_digest() {
    let argv: Vec<String> = ["make", "-k"].map(String::from).to_vec();
    let text = cascade(16, &[0, 0], &[]);
    check(&argv, &text, Stream::Stdout, Level::Two, 4096).unwrap();
    let req = Request {
        argv: &argv,
        stdout: text.0.as_bytes(),
        stderr: b"",
        exit: 2,
    };
    let v = view(&req, &Options::new(Level::Two, Handle::parse(HANDLE)));
    let shown = String::from_utf8(v.stdout.to_vec()).unwrap();
    assert!(
        shown
            .lines()
            .filter_map(Marker::parse)
            .any(|m| m.digested && m.trouble.is_some_and(|(e, _)| e > 16)),
        "{shown}"
    );
}
