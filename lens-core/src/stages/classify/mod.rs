//! Classification: what each line is, which lines are findings, and which regions a
//! tool family's shape can digest.
//!
//! `generic` knows the shapes most tools share (`error:` prefixes, tracebacks, test
//! summaries). Each other file knows one family, recognised by its lines rather than
//! by the command's name, so `lens sh -c 'cargo build && pytest'` is read as well as
//! `lens cargo build`: rustc/cargo/clippy, gcc/clang/mypy, tsc, eslint, ruff, test
//! runners, Python tracebacks, git, listings (ls, find, grep) and package installs.

mod cargo_test;
mod eslint;
mod gcc;
mod generic;
mod git;
mod install;
mod listing;
mod pytest;
mod python;
mod ruff;
mod rustc;
mod testrun;
mod tsc;

use crate::doc::{Doc, Stream};

pub use generic::{class_of, is_error, is_summary};

/// Sets every line's class, collects findings and proposes digests.
pub fn run(doc: &mut Doc) {
    generic::run(doc);
    python::run(doc);
    install::run(doc);
    for stream in [Stream::Stdout, Stream::Stderr] {
        let range = doc.range(stream);
        rustc::find(doc, range.clone());
        gcc::find(doc, range.clone());
        tsc::find(doc, range.clone());
        ruff::find(doc, range.clone());
        eslint::find(doc, range.clone());
        pytest::find(doc, stream, range.clone());
        cargo_test::find(doc, stream, range.clone());
        testrun::find(doc, stream, range.clone());
        git::find(doc, stream, range.clone());
        listing::find(doc, stream, range);
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
        let argv = vec![];
        let mut doc = Doc::new(&argv, stdout, "", 0);
        super::run(&mut doc);
        doc.digests
            .iter()
            .flat_map(|d| d.lines(&doc, Detail::Full))
            .collect()
    }
}
