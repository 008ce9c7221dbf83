//! The filter call every path shares, guarded so a bug in Lens never costs the
//! user their command's output.

use lens_core::{view, Handle, Level, Options, Request, Settings};

/// The view, or the raw output if the filter fails: a bug in Lens must never cost
/// the user their command's output (invariant 6). The panic is reported after the
/// output, in one line.
pub(crate) fn guarded_view<'a>(
    req: &Request<'a>,
    opts: &Options,
    diagnostics: &mut Vec<String>,
) -> lens_core::View<'a> {
    let raw = lens_core::View {
        stdout: std::borrow::Cow::Borrowed(req.stdout),
        stderr: std::borrow::Cow::Borrowed(req.stderr),
        elided: false,
    };
    guarded(diagnostics, raw, || view(req, opts))
}

/// Runs `filter`, or returns `raw` (with a one-line diagnostic) if it panics.
pub(crate) fn guarded<T>(
    diagnostics: &mut Vec<String>,
    raw: T,
    filter: impl FnOnce() -> T + std::panic::UnwindSafe,
) -> T {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(filter);
    std::panic::set_hook(previous);
    result.unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        diagnostics.push(format!(
            "lens: the filter failed ({what}); the output is shown unfiltered; please report it"
        ));
        raw
    })
}

pub(crate) fn options(
    level: Level,
    budget: usize,
    handle: Option<Handle>,
    s: &Settings,
) -> Options {
    Options {
        level,
        budget,
        handle,
        keep: s.keep.clone(),
        drop: s.drop.clone(),
        filter: s.filter.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_panic_shows_the_raw_output() {
        let argv = vec!["x".to_string()];
        let req = Request {
            argv: &argv,
            stdout: b"out\n",
            stderr: b"err\n",
            exit: 3,
        };
        let mut diags = Vec::new();
        let raw = lens_core::View {
            stdout: std::borrow::Cow::Borrowed(req.stdout),
            stderr: std::borrow::Cow::Borrowed(req.stderr),
            elided: false,
        };
        let v = guarded(&mut diags, raw, || -> lens_core::View {
            panic!("index out of bounds")
        });
        assert_eq!(&v.stdout[..], b"out\n");
        assert_eq!(&v.stderr[..], b"err\n");
        assert!(!v.elided);
        assert_eq!(diags, vec!["lens: the filter failed (index out of bounds); the output is shown unfiltered; please report it"]);
        // And a filter that works is passed through.
        let mut diags = Vec::new();
        let opts = Options::new(Level::Three, Handle::parse("0000abcd"));
        let v = guarded_view(&req, &opts, &mut diags);
        assert_eq!(&v.stdout[..], b"out\n");
        assert!(diags.is_empty());
    }
}
