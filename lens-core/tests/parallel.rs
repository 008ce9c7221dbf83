//! Per-line work and the family finders run on several threads for large outputs
//! (`lens_core::par`). The split must never show: the view of a large mixed output
//! is byte for byte the same on one thread and on several.

use lens_core::{par, view, Handle, Level, Options, Request};

/// Every fixture, stdout and stderr alike, repeated past the size that splits.
fn large_output() -> (Vec<u8>, Vec<u8>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .collect();
    names.sort();
    let parts: Vec<Vec<u8>> = names
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    while lines(&out) < 3 * par::MIN_PER_THREAD {
        for (i, p) in parts.iter().enumerate() {
            // Every third part on stderr, so both streams are large.
            if i % 3 == 0 { &mut err } else { &mut out }.extend_from_slice(p);
        }
    }
    (out, err)
}

#[test]
fn the_view_does_not_depend_on_the_thread_count() {
    let (out, err) = large_output();
    let argv = vec!["sh".to_string(), "ci.sh".to_string()];
    let req = Request {
        argv: &argv,
        stdout: &out,
        stderr: &err,
        exit: 1,
    };
    let opts = Options::new(Level::Two, Handle::parse("1a2b3c4d"));
    par::set_threads(1);
    let one = view(&req, &opts);
    for n in [2, 3] {
        par::set_threads(n);
        let many = view(&req, &opts);
        assert!(one.stdout == many.stdout, "stdout differs on {n} threads");
        assert!(one.stderr == many.stderr, "stderr differs on {n} threads");
    }
    par::set_threads(0);
    assert!(one.stdout.len() < out.len() / 4, "the view filtered");
}
