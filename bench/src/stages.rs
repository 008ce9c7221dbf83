//! Each stage, run on a document the stages before it prepared.

use lens_core::{annotate, render, stages, view, Doc, Handle, Level, Options, Request, Stream};

use crate::inputs::Input;

/// The stages in pipeline order, and the whole pipeline last.
pub const NAMES: [&str; 9] = [
    "progress", "blocks", "classify", "cause", "dedupe", "context", "rank", "render", "pipeline",
];

/// Options the benchmarks filter with: level 2, the default budget times `scale`.
///
/// The growth gate scales the budget with the input, so 1×, 4× and 16× run the same
/// code path (a view that fits its budget returns early; one that does not ranks):
/// what it compares is how the work grows, not a change of regime.
pub fn options(scale: usize) -> Options {
    let mut o = Options::new(Level::Two, Handle::parse("1a2b3c4d"));
    o.budget *= scale;
    o
}

fn prepare_until<'a>(doc: &mut Doc<'a>, stage: &str, opts: &Options) {
    for s in NAMES {
        if s == stage {
            return;
        }
        run_stage(doc, s, opts);
    }
}

fn run_stage(doc: &mut Doc, stage: &str, opts: &Options) {
    match stage {
        "progress" => stages::progress::run(doc),
        "blocks" => stages::blocks::run(doc),
        "classify" => stages::classify::run(doc),
        "cause" => {
            stages::cause::run(doc);
            stages::excerpt::run(doc);
            stages::cause::apply(doc, opts.budget);
        }
        "dedupe" => stages::dedupe::run(doc),
        "context" => stages::context::run(doc, opts.budget),
        "rank" => stages::rank::run(doc, opts.budget),
        "render" => {
            let d = Some(lens_core::digest::Detail::Full);
            std::hint::black_box(render::stream(doc, Stream::Stdout, "1a2b3c4d", d));
            std::hint::black_box(render::stream(doc, Stream::Stderr, "1a2b3c4d", d));
        }
        _ => {}
    }
}

/// A closure that runs `stage` once on `input` (preparation excluded for single
/// stages: the prepared document is cloned per run, which is linear too).
pub fn runner<'a>(stage: &'a str, input: &'a Input, scale: usize) -> Box<dyn FnMut() + 'a> {
    let opts = options(scale);
    if stage == "pipeline" {
        return Box::new(move || {
            let req = Request {
                argv: &input.argv,
                stdout: &input.stdout,
                stderr: &input.stderr,
                exit: input.exit,
            };
            std::hint::black_box(view(&req, &opts));
        });
    }
    let out = std::str::from_utf8(&input.stdout).unwrap_or("");
    let err = std::str::from_utf8(&input.stderr).unwrap_or("");
    let mut prepared = Doc::new(&input.argv, out, err, input.exit);
    prepare_until(&mut prepared, stage, &opts);
    // Reset by clone_from, which reuses the buffers: a fresh allocation per run
    // would measure the allocator's page faults, not the stage.
    let mut doc = prepared.clone();
    Box::new(move || {
        doc.lines.clone_from(&prepared.lines);
        doc.blocks.clone_from(&prepared.blocks);
        doc.findings.clone_from(&prepared.findings);
        doc.digests.clone_from(&prepared.digests);
        run_stage(&mut doc, stage, &opts);
        std::hint::black_box(&doc);
    })
}

/// Runs the whole annotation (no render), for callers that want the `Doc`.
pub fn annotated<'a>(input: &'a Input) -> Doc<'a> {
    let out = std::str::from_utf8(&input.stdout).unwrap_or("");
    let err = std::str::from_utf8(&input.stderr).unwrap_or("");
    let mut doc = Doc::new(&input.argv, out, err, input.exit);
    annotate(&mut doc, &options(1));
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_runs_on_every_input() {
        for input in crate::inputs::standard().unwrap() {
            for stage in NAMES {
                let mut f = runner(stage, &input, 1);
                f();
            }
            assert!(!annotated(&input).lines.is_empty(), "{}", input.name);
        }
    }
}
