//! Classification: what each line is, which lines are findings, and which regions a
//! tool family's shape can digest.
//!
//! `generic` knows the shapes most tools share (`error:` prefixes, tracebacks, test
//! summaries). Each other file knows one family, recognised by its lines rather than
//! by the command's name, so `lens sh -c 'cargo build && pytest'` is read as well as
//! `lens cargo build`: rustc/cargo/clippy, gcc/clang/mypy, tsc, eslint, ruff, Go, test
//! runners, Maven's Surefire results, Python tracebacks, git, listings (ls, find, grep, apt list), package
//! installs, and JSON arrays of objects.

mod cargo_test;
mod eslint;
mod found;
mod gcc;
mod generic;
mod git;
mod go;
mod install;
mod json;
mod listing;
pub(crate) mod log;
mod maven;
mod pytest;
mod python;
mod ruff;
mod rustc;
mod testrun;
mod tsc;

use crate::doc::{Class, Doc, Stream};
use crate::par;

pub use found::Found;
pub use generic::{class_of, is_error, is_summary, trouble};

#[cfg(test)]
pub(crate) use generic::forms as generic_forms;

type Finder = fn(&Doc, &mut Found, Stream, std::ops::Range<usize>);

/// The finders in the order their claims rank (an earlier finder's claim on a line
/// stands), in two halves of about equal cost on large outputs.
const FIRST: [Finder; 5] = [
    |d, o, _, r| rustc::find(d, o, r),
    |d, o, _, r| gcc::find(d, o, r),
    |d, o, _, r| tsc::find(d, o, r),
    |d, o, _, r| ruff::find(d, o, r),
    |d, o, _, r| go::find(d, o, r),
];
const SECOND: [Finder; 8] = [
    |d, o, _, r| eslint::find(d, o, r),
    pytest::find,
    cargo_test::find,
    testrun::find,
    maven::find,
    git::find,
    listing::find,
    json::find,
];

fn run_finders(doc: &Doc, finders: &[Finder]) -> Found {
    let mut out = Found::default();
    for stream in [Stream::Stdout, Stream::Stderr] {
        for f in finders {
            f(doc, &mut out, stream, doc.range(stream));
        }
    }
    out
}

/// Sets every line's class, collects findings and proposes digests.
pub fn run(doc: &mut Doc) {
    classes(doc);
    finders(doc);
}

/// Sets every line's class from its own text: the generic shapes, then a
/// Python traceback's chain lines and an install's chatter and result. A user's
/// filter runs this and not the finders (see [`crate::filters`]).
pub fn classes(doc: &mut Doc) {
    let classes = par::map(&doc.lines, |l| match l.class {
        Class::Blank => l.class,
        Class::Progress => install::class(l.class, &l.text),
        _ => install::class(python::class(class_of(&l.text), &l.text), &l.text),
    });
    for (line, class) in doc.lines.iter_mut().zip(classes) {
        line.class = class;
    }
}

/// The family finders: findings and proposed digests.
fn finders(doc: &mut Doc) {
    // The finders only read the lines, so the two halves can run side by side.
    let d: &Doc = doc;
    let (first, second) = par::join(
        d.lines.len(),
        || run_finders(d, &FIRST),
        || run_finders(d, &SECOND),
    );
    // Within a stream, FIRST's reports precede SECOND's, as if run one by one; the
    // sorts below are stable and streams never share a line.
    for found in [first, second] {
        doc.findings.extend(found.findings);
        doc.digests.extend(found.digests);
    }
    // One report per line: two families can claim the same line (a path-like
    // location, say); the earlier, longer claim stands.
    doc.findings
        .sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut last_end = 0;
    doc.findings.retain(|f| {
        let keep = f.start >= last_end;
        if keep {
            last_end = f.end;
        }
        keep
    });
    doc.digests.sort_by_key(|d| d.start);
}

/// Helpers the family tests share: classify an output and return what was found.
#[cfg(test)]
pub(crate) mod testing {
    use crate::digest::Detail;
    use crate::doc::{Doc, Finding};

    /// The findings in `stdout` and `stderr` of a failed run.
    pub fn findings(stdout: &str, stderr: &str) -> Vec<Finding> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, stdout, stderr, 1);
        super::run(&mut doc);
        doc.findings
    }

    /// Every digest line proposed for `stdout`, in order.
    pub fn digest_lines(stdout: &str) -> Vec<String> {
        digest_lines_of(&[], stdout)
    }

    /// Every digest line proposed for `stdout` of the command `argv`, in order.
    pub fn digest_lines_of(argv: &[&str], stdout: &str) -> Vec<String> {
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        let mut doc = Doc::new(&argv, stdout, "", 0);
        super::run(&mut doc);
        doc.digests
            .iter()
            .flat_map(|d| d.lines(&doc, Detail::Full))
            .collect()
    }
}
