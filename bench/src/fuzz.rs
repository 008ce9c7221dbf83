//! The fuzz target: the whole pipeline, argv and bytes in, view out, checked
//! against the invariants the library alone can break.
//!
//! It runs on stable Rust with nothing beyond the approved crates: a seeded
//! generator mutates real recorded outputs (the compare cases' recordings) and
//! lines built to hit the pipeline's edges (escapes, carriage returns, bytes that
//! are not UTF-8, very long lines, markers a child could print), and every input
//! goes through [`target`], which panics on nothing and returns what it found
//! wrong. The checker: every shown line is the raw line at its number, every gap
//! is covered by a marker naming the run's handle, the view is never larger than
//! the raw output, and a stream that is not UTF-8 passes through byte for byte.
//! The same input is also read the way a large output is, through a sampler with
//! small caps, and its view checked against the whole raw stream.

use lens_core::check::check_stream;
use lens_core::sample::{Caps, Sampler};
use lens_core::{view, view_parts, Handle, Input, Level, Options, Part, Request};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The handle every fuzzed view is rendered under.
pub const HANDLE: &str = "5eed0123";

/// One fuzzed run.
#[derive(Clone, Debug)]
pub struct Case {
    /// The command line.
    pub argv: Vec<String>,
    /// What it wrote to stdout.
    pub stdout: Vec<u8>,
    /// What it wrote to stderr.
    pub stderr: Vec<u8>,
    /// How it ended.
    pub exit: i32,
    /// The level asked for.
    pub level: Level,
    /// The budget.
    pub budget: usize,
    /// Where the sampled reading cuts the stream into pushes.
    pub cuts: Vec<usize>,
}

const ARGVS: &[&str] = &[
    "cargo build",
    "cargo test",
    "cargo clippy",
    "git log --stat",
    "git diff",
    "git status",
    "pytest -q",
    "grep -rn fn src/",
    "ls -la",
    "npm install",
    "make",
    "tool",
];

const LINES: &[&str] = &[
    "error[E0308]: mismatched types",
    "  --> src/main.rs:4:5",
    "   |",
    "4 |     let x: u32 = \"a\";",
    "warning: unused variable: `x`",
    "   Compiling serde v1.0.200",
    "test result: FAILED. 3 passed; 1 failed",
    "FAILED tests/test_a.py::test_x - assert 1 == 2",
    "E       assert 1 == 2",
    "Traceback (most recent call last):",
    "  File \"a.py\", line 3, in f",
    "ValueError: bad",
    "src/a.c:3:5: error: expected ';'",
    "diff --git a/x.rs b/x.rs",
    "@@ -1,2 +1,2 @@",
    "+added line",
    "-removed line",
    "commit 0123456789abcdef0123456789abcdef01234567",
    "src/lib.rs:12:pub fn f() {}",
    "10%\r50%\r100% done",
    "error: disk full\rOK",
    "\u{1b}[1;31merror\u{1b}[0m: coloured",
    "[lens: elided stdout 1-3 (3 lines: budget) handle=00000000]",
    "[lens: cut short by SIGTERM handle=0badf00d]",
    "[lens: summary exit=0 stdout=1 stderr=0 errors=0 warnings=0 handle=00000000]",
    "",
    "    ",
    "é ü ✗ ×",
    "crlf\r",
];

/// A fresh input from the seeded generator: a base (a recording, or lines from
/// the edge list), then a few mutations.
pub fn generate(rng: &mut StdRng, corpus: &[Vec<u8>]) -> Case {
    let mut streams = [Vec::new(), Vec::new()];
    for s in &mut streams {
        *s = match rng.gen_range(0..4) {
            0 => Vec::new(),
            1 if !corpus.is_empty() => corpus.choose(rng).cloned().unwrap_or_default(),
            _ => {
                let n = rng.gen_range(1..400);
                let mut v = Vec::new();
                for _ in 0..n {
                    if rng.gen_bool(0.3) {
                        let k: u32 = rng.gen_range(0..2000);
                        v.extend_from_slice(
                            format!("record {k} checksum {:x} ok", k * 7919).as_bytes(),
                        );
                    } else {
                        v.extend_from_slice(LINES.choose(rng).expect("lines").as_bytes());
                    }
                    v.push(b'\n');
                }
                v
            }
        };
        for _ in 0..rng.gen_range(0..4) {
            mutate(rng, s, corpus);
        }
    }
    let [stdout, stderr] = streams;
    let len = stdout.len().max(1);
    let mut cuts: Vec<usize> = (0..rng.gen_range(0..6))
        .map(|_| rng.gen_range(0..len))
        .collect();
    cuts.sort_unstable();
    Case {
        argv: ARGVS
            .choose(rng)
            .expect("argvs")
            .split(' ')
            .map(String::from)
            .collect(),
        stdout,
        stderr,
        exit: *[0, 1, 2, 101, 130, 143].choose(rng).expect("exits"),
        level: Level::from_digit(rng.gen_range(0..4)).expect("level"),
        budget: *[64, 512, 1024, 4096, 16384].choose(rng).expect("budgets"),
        cuts,
    }
}

fn mutate(rng: &mut StdRng, s: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    let at = if s.is_empty() {
        0
    } else {
        rng.gen_range(0..=s.len())
    };
    match rng.gen_range(0..6) {
        // A byte changed, to anything.
        0 if !s.is_empty() => {
            let i = rng.gen_range(0..s.len());
            s[i] = rng.gen();
        }
        // Bytes the pipeline treats specially.
        1 => {
            let b: &[u8] = [
                &b"\n"[..],
                b"\r",
                b"\x1b[",
                b"\xff",
                b"\xc3",
                b"\t",
                b":",
                b"\n\n\n",
            ]
            .choose(rng)
            .expect("bytes");
            s.splice(at..at, b.iter().copied());
        }
        // A region repeated.
        2 if !s.is_empty() => {
            let from = rng.gen_range(0..s.len());
            let to = (from + rng.gen_range(1..200)).min(s.len());
            let piece = s[from..to].repeat(rng.gen_range(1..20));
            s.splice(at..at, piece);
        }
        // Cut short.
        3 => s.truncate(at),
        // A piece of another recording.
        4 if !corpus.is_empty() => {
            let other = corpus.choose(rng).expect("corpus");
            if !other.is_empty() {
                let from = rng.gen_range(0..other.len());
                let to = (from + rng.gen_range(1..2000)).min(other.len());
                s.splice(at..at, other[from..to].iter().copied());
            }
        }
        // A very long line.
        _ => {
            let long = vec![b'x'; rng.gen_range(100..20_000)];
            s.splice(at..at, long);
        }
    }
}

/// Runs one case through the pipeline and checks it; `Err` names the broken
/// invariant.
pub fn target(c: &Case) -> Result<(), String> {
    let req = Request {
        argv: &c.argv,
        stdout: &c.stdout,
        stderr: &c.stderr,
        exit: c.exit,
    };
    let mut opts = Options::new(c.level, Handle::parse(HANDLE));
    opts.budget = c.budget;
    let v = view(&req, &opts);
    if v.len() > c.stdout.len() + c.stderr.len() {
        return Err(format!(
            "view of {} bytes is larger than the raw {}",
            v.len(),
            c.stdout.len() + c.stderr.len()
        ));
    }
    for (name, raw, shown) in [
        ("stdout", &c.stdout, &v.stdout),
        ("stderr", &c.stderr, &v.stderr),
    ] {
        if shown[..] == raw[..] {
            continue;
        }
        let Ok(raw) = std::str::from_utf8(raw) else {
            return Err(format!("{name} is not UTF-8 and was changed"));
        };
        let shown =
            std::str::from_utf8(shown).map_err(|_| format!("{name}'s view is not UTF-8"))?;
        check_stream(shown, raw, name, HANDLE).map_err(|e| format!("{name}: {e}"))?;
    }
    sampled(c, &opts)
}

/// The stdout stream read as a large output is: sampled, then viewed.
fn sampled(c: &Case, opts: &Options) -> Result<(), String> {
    let caps = Caps {
        head_lines: 5,
        head_bytes: 300,
        tail_lines: 5,
        tail_bytes: 300,
        error_bytes: 400,
        warning_bytes: 200,
        summary_bytes: 100,
        flagged_lines: 12,
        line_bytes: 160,
        context: 3,
    };
    let mut s = Sampler::new(caps);
    let mut at = 0;
    for &cut in &c.cuts {
        let cut = cut.clamp(at, c.stdout.len());
        s.push(&c.stdout[at..cut]);
        at = cut;
    }
    s.push(&c.stdout[at..]);
    let sample = s.finish();
    if sample.bytes != c.stdout.len() as u64 {
        return Err(format!(
            "the sampler counted {} bytes of {}",
            sample.bytes,
            c.stdout.len()
        ));
    }
    let Ok(raw) = std::str::from_utf8(&c.stdout) else {
        return if sample.readable {
            Err("a stream that is not UTF-8 was sampled as readable".into())
        } else {
            Ok(())
        };
    };
    let out = Input {
        part: sample.part(),
        raw_len: c.stdout.len() as u64,
    };
    let none = Input {
        part: Some(Part::whole("")),
        raw_len: 0,
    };
    let (shown, _, _) = view_parts(&c.argv, out, none, c.exit, opts);
    if let Some(text) = shown {
        check_stream(&text, raw, "stdout", HANDLE).map_err(|e| format!("sampled stdout: {e}"))?;
    }
    Ok(())
}

/// What a fuzz run found.
#[derive(Debug, Default, serde::Serialize)]
pub struct Outcome {
    /// Inputs run.
    pub executions: u64,
    /// Inputs on which the pipeline panicked.
    pub panics: u64,
    /// Inputs on which a check failed.
    pub violations: u64,
    /// The first few failures: the input's index and what was wrong.
    pub failures: Vec<String>,
}

/// The generator for input `i` of a run seeded with `seed`: each input has its
/// own, so any one can be rerun alone and a run can be split across threads
/// without changing what is run.
pub fn input_rng(seed: u64, i: u64) -> StdRng {
    // splitmix64 of the pair: neighbouring indices get unrelated streams.
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i)
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    StdRng::seed_from_u64(z ^ (z >> 31))
}

/// What input `i` found: `None` when every check passed. A panic is caught.
pub fn check_one(seed: u64, i: u64, corpus: &[Vec<u8>]) -> Option<Found> {
    let case = generate(&mut input_rng(seed, i), corpus);
    match std::panic::catch_unwind(|| target(&case)) {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(Found::Violation(format!("input {i}: {e}"))),
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Some(Found::Panic(format!("input {i}: panic: {what}")))
        }
    }
}

/// A failed input: a broken invariant or a panic, with the input's index.
#[derive(Debug)]
pub enum Found {
    /// A check failed.
    Violation(String),
    /// The pipeline panicked.
    Panic(String),
}

/// Runs inputs `0..n` from `seed` on `jobs` threads (input `i` on thread
/// `i % jobs`); a panic is caught and counted. The outcome does not depend on
/// `jobs`: the failures listed are the first ten by index.
pub fn run(seed: u64, n: u64, corpus: &[Vec<u8>], jobs: u64) -> Outcome {
    let jobs = jobs.max(1);
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let found: Vec<(u64, Found)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|t| {
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    let mut i = t;
                    while i < n {
                        if let Some(f) = check_one(seed, i, corpus) {
                            mine.push((i, f));
                        }
                        i += jobs;
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    std::panic::set_hook(quiet);
    let mut found = found;
    found.sort_by_key(|(i, _)| *i);
    let mut outcome = Outcome {
        executions: n,
        ..Outcome::default()
    };
    for (_, f) in found {
        let text = match f {
            Found::Violation(t) => {
                outcome.violations += 1;
                t
            }
            Found::Panic(t) => {
                outcome.panics += 1;
                t
            }
        };
        if outcome.failures.len() < 10 {
            outcome.failures.push(text);
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checker_catches_a_view_that_breaks_an_invariant() {
        // A renumbered line is caught: the target's checks are live.
        let raw = "a\nb\nc\n";
        let bad = format!("b\n[lens: elided stdout 2-3 (2 lines: budget) handle={HANDLE}]\n");
        assert!(check_stream(&bad, raw, "stdout", HANDLE).is_err());
    }

    #[test]
    fn a_short_run_finds_nothing_wrong() {
        let o = run(7, 300, &[b"error: x\n  --> a.rs:1:1\n".to_vec()], 2);
        assert_eq!(o.executions, 300);
        assert_eq!((o.panics, o.violations), (0, 0), "{:?}", o.failures);
    }

    #[test]
    fn an_input_is_the_same_whatever_the_threads_or_order() {
        let corpus = [b"error: x\n".to_vec()];
        let a = generate(&mut input_rng(3, 41), &corpus);
        let b = generate(&mut input_rng(3, 41), &corpus);
        let c = generate(&mut input_rng(3, 42), &corpus);
        assert_eq!(
            (&a.stdout, &a.stderr, &a.argv),
            (&b.stdout, &b.stderr, &b.argv)
        );
        assert_ne!(
            (&a.stdout, &a.stderr, a.budget, &a.cuts),
            (&c.stdout, &c.stderr, c.budget, &c.cuts)
        );
    }
}
