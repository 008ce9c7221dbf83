//! Property tests of the invariants the library alone can break: every elision is
//! announced (4), no line is renumbered (8), doubtful input passes through raw (6),
//! filtering is deterministic (7), and the level contracts.

mod common;

use common::{check_stream, raw_lines, HANDLE};
use lens_core::{view, Handle, Level, Options, Request};
use proptest::prelude::*;

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z]{1,12}( [a-z0-9_]{1,10}){0,6}",
        2 => (1u32..400).prop_map(|i| format!("   Compiling crate{i} v0.{i}.0")),
        1 => (1u32..400, 1u32..90).prop_map(|(f, l)| format!("src/m{f}.rs:{l}:5: error: mismatched types")),
        1 => Just("error[E0308]: mismatched types".to_string()),
        1 => Just("  --> src/lib.rs:14:9".to_string()),
        1 => Just("warning: unused variable: `x`".to_string()),
        1 => Just(String::new()),
        1 => Just("    ".to_string()),
        1 => Just("\x1b[1;31merror\x1b[0m: coloured".to_string()),
        1 => Just("10%\r50%\r100% done".to_string()),
        1 => Just("test result: FAILED. 3 passed; 1 failed".to_string()),
        1 => Just("same line again".to_string()),
        1 => Just("Traceback (most recent call last):".to_string()),
        1 => "  File \"[a-z]{3}\\.py\", line [0-9]{1,3}, in [a-z]{2,6}",
        1 => Just("crlf line\r".to_string()),
        1 => Just("error: disk full on /dev/sda1\rOK".to_string()),
        1 => (1u32..60).prop_map(|i| format!("src/dir{}/file{i}.rs", i % 4)),
        // The second round's shapes: go test -v and go build, a findings run whose
        // messages differ in a value, an aligned table, git status with numbered
        // files, grep matches.
        1 => (0u32..30).prop_map(|i| format!("=== RUN   TestCase{i:02}")),
        1 => (0u32..30, any::<bool>()).prop_map(|(i, ok)| format!("--- {}: TestCase{i:02} (0.00s)", if ok { "PASS" } else { "FAIL" })),
        1 => (1u32..200).prop_map(|l| format!("    case_test.go:{l}: got {l}, want {}", l + 1)),
        1 => prop_oneof![Just("PASS".to_string()), Just("FAIL".to_string()), (0u32..5).prop_map(|p| format!("ok  \texample.com/p{p}\t0.0{p}s"))],
        1 => (0u32..9, 1u32..60).prop_map(|(p, l)| format!("p{p}/sum.go:{l}:9: cannot use r.Amount (variable of type string) as int64 value")),
        1 => (0u32..40).prop_map(|i| format!("svc/m{}.py:3:8: F401 [*] `mod{i}` imported but unused", i % 7)),
        1 => Just("Package                   Version".to_string()),
        1 => Just("------------------------- -----------".to_string()),
        1 => (0u32..500).prop_map(|i| format!("{:<25} {}.{}.0", format!("pkg-{i}"), i % 9, i % 4)),
        1 => (0u32..200).prop_map(|i| format!("\tsnap/frame_{i:03}.snap.new")),
        1 => Just("Untracked files:".to_string()),
        1 => (0u32..300).prop_map(|i| format!("src/m{}.rs:{i}:pub fn load_{i}(db: &Db) -> u64 {{", i % 5)),
    ]
}

/// A whole region one shape reads: a padded table, a go test -v package, a git
/// status with numbered files, a grep run, go build's reports under a header.
fn block() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        (8usize..60).prop_map(|n| {
            let mut v = vec![
                "Package                   Version".to_string(),
                "------------------------- -----------".to_string(),
            ];
            // Some rows without a version: an empty last cell.
            v.extend((0..n).map(|i| match i % 7 {
                3 => format!("pkg-{i}"),
                _ => format!("{:<25} {}.{}", format!("pkg-{i}"), i % 9, i % 4),
            }));
            v
        }),
        (4usize..40, 0usize..40).prop_map(|(n, bad)| {
            let mut v = Vec::new();
            for i in 0..n {
                v.push(format!("=== RUN   TestCase{i:02}"));
                if i == bad {
                    v.push(format!("    case_test.go:{i}: got {i}, want {}", i + 1));
                    v.push(format!("--- FAIL: TestCase{i:02} (0.00s)"));
                } else {
                    v.push(format!("--- PASS: TestCase{i:02} (0.00s)"));
                }
            }
            let failed = bad < n;
            v.push(if failed { "FAIL" } else { "PASS" }.to_string());
            v.push(format!(
                "{}\texample.com/p\t0.01s",
                if failed { "FAIL" } else { "ok  " }
            ));
            v
        }),
        (1usize..300).prop_map(|n| {
            let mut v = vec![
                "On branch main".to_string(),
                "Untracked files:".to_string(),
                "  (use \"git add <file>...\" to include in what will be committed)".to_string(),
            ];
            v.extend((0..n).map(|i| format!("\tsnap/frame_{i:03}.snap.new")));
            v
        }),
        (8usize..200).prop_map(|n| (0..n)
            .map(|i| format!(
                "src/m{}.rs:{}:pub fn load_{i}(db: &Db) -> u64 {{",
                i % 5,
                i + 1
            ))
            .collect()),
        (2usize..30).prop_map(|n| {
            let mut v = vec!["# example.com/ledger/p".to_string()];
            v.extend((0..n).map(|i| {
                format!(
                    "p/sum.go:{}:9: cannot use r.F{} (variable of type string) as int64 value",
                    i + 1,
                    i % 3
                )
            }));
            v
        }),
    ]
}

fn stream() -> impl Strategy<Value = String> {
    let chunk = prop_oneof![
        8 => line().prop_map(|l| vec![l]),
        1 => block(),
    ];
    (prop::collection::vec(chunk, 0..120), any::<bool>()).prop_map(|(chunks, trailing)| {
        let lines: Vec<String> = chunks.into_iter().flatten().collect();
        let mut s = lines.join("\n");
        if trailing && !s.is_empty() {
            s.push('\n');
        }
        s
    })
}

fn level() -> impl Strategy<Value = Level> {
    prop_oneof![
        Just(Level::Zero),
        Just(Level::One),
        Just(Level::Two),
        Just(Level::Three)
    ]
}

fn run<'a>(
    argv: &'a [String],
    out: &'a str,
    err: &'a str,
    exit: i32,
    level: Level,
    budget: usize,
) -> lens_core::View<'a> {
    let req = Request {
        argv,
        stdout: out.as_bytes(),
        stderr: err.as_bytes(),
        exit,
    };
    let mut opts = Options::new(level, Handle::parse(HANDLE));
    opts.budget = budget;
    view(&req, &opts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Invariants 4 and 8: whatever is missing is covered by a marker that names its
    /// exact range, and every line shown is the raw line at its own number.
    #[test]
    fn elision_is_announced_and_lines_keep_their_numbers(
        out in stream(), err in stream(), exit in 0i32..256, level in level(), budget in 64usize..8192
    ) {
        let argv = vec!["tool".to_string()];
        let v = run(&argv, &out, &err, exit, level, budget);
        let vo = std::str::from_utf8(&v.stdout).unwrap();
        let ve = std::str::from_utf8(&v.stderr).unwrap();
        if !v.elided {
            prop_assert!(!vo.contains("[lens: elided") || out.contains("[lens: elided"));
        }
        if v.stdout[..] != *out.as_bytes() {
            check_stream(vo, &out, "stdout").map_err(TestCaseError::fail)?;
        }
        if v.stderr[..] != *err.as_bytes() {
            check_stream(ve, &err, "stderr").map_err(TestCaseError::fail)?;
        }
        prop_assert!(v.len() <= out.len() + err.len(), "view larger than raw");
    }

    /// Level 3 is the raw bytes; level 1 shows a subset of level 2 and is never empty.
    #[test]
    fn level_contracts(out in stream(), err in stream(), exit in 0i32..3, budget in 256usize..8192) {
        let argv = vec!["tool".to_string()];
        let raw = run(&argv, &out, &err, exit, Level::Three, budget);
        prop_assert_eq!(&raw.stdout[..], out.as_bytes());
        prop_assert_eq!(&raw.stderr[..], err.as_bytes());
        let two = run(&argv, &out, &err, exit, Level::Two, budget);
        let one = run(&argv, &out, &err, exit, Level::One, budget);
        let shown = |v: &lens_core::View, raw: &str, s: &str, bytes: &[u8]| {
            let text = std::str::from_utf8(bytes).unwrap();
            if bytes == raw.as_bytes() {
                (1..=raw_lines(raw).len() as u32).collect::<Vec<_>>()
            } else {
                let _ = v;
                check_stream(text, raw, s).unwrap()
            }
        };
        for (s, raw, b1, b2) in [("stdout", &out, &one.stdout, &two.stdout), ("stderr", &err, &one.stderr, &two.stderr)] {
            let l1 = shown(&one, raw, s, b1);
            let l2 = shown(&two, raw, s, b2);
            for n in &l1 {
                prop_assert!(l2.contains(n), "level 1 shows {s} line {n} that level 2 does not");
            }
        }
        let has_content = raw_lines(&out).iter().chain(raw_lines(&err).iter()).any(|l| !l.trim().is_empty());
        if has_content {
            prop_assert!(!one.is_empty(), "level 1 rendered an empty view");
        }
    }

    /// Invariant 6: a stream that is not UTF-8 passes through byte for byte.
    #[test]
    fn non_utf8_passes_through(mut bytes in prop::collection::vec(any::<u8>(), 1..4000), level in level()) {
        bytes.push(0xff);
        let argv = vec!["tool".to_string()];
        let req = Request { argv: &argv, stdout: &bytes, stderr: &bytes, exit: 1 };
        let v = view(&req, &Options::new(level, Handle::parse(HANDLE)));
        prop_assert_eq!(&v.stdout[..], &bytes[..]);
        prop_assert_eq!(&v.stderr[..], &bytes[..]);
    }

    /// The budget holds: level 2 prints at most the budget plus the lines forced
    /// in as failures and their context, each run of them with the marker after
    /// it (markers and digests included).
    #[test]
    fn level_two_is_at_most_the_budget_plus_the_forced_failure_lines(
        out in stream(), err in stream(), exit in 0i32..3, budget in 512usize..8192
    ) {
        let argv = vec!["tool".to_string()];
        let v = run(&argv, &out, &err, exit, Level::Two, budget);
        let mut opts = Options::new(Level::Two, Handle::parse(HANDLE));
        opts.budget = budget;
        let mut doc = lens_core::Doc::new(&argv, &out, &err, exit);
        lens_core::annotate(&mut doc, &opts);
        let is_forced = |i: usize| doc.lines[i].fate == lens_core::Fate::Force;
        let forced: usize = (0..doc.lines.len())
            .filter(|&i| is_forced(i))
            .map(|i| doc.lines[i].text.len() + 1)
            .sum();
        let runs = (0..doc.lines.len())
            .filter(|&i| is_forced(i) && (i + 1 == doc.lines.len() || !is_forced(i + 1)))
            .count();
        let forced = forced + runs * lens_core::stages::budget::MARKER_COST;
        prop_assert!(
            v.len() <= budget + forced || !v.elided,
            "{} bytes for a budget of {budget} with {forced} forced",
            v.len()
        );
    }

    /// A sampled stream's view keeps invariants 4 and 8 against the whole raw
    /// stream: every line it shows is the raw line at its number, and every line it
    /// does not hold or show is covered by a marker.
    #[test]
    fn a_sampled_view_announces_everything_it_leaves_out(
        out in stream(), cuts in prop::collection::vec(0usize..6000, 0..6), level in level()
    ) {
        use lens_core::sample::{Caps, Sampler};
        let caps = Caps {
            head_lines: 4,
            head_bytes: 200,
            tail_lines: 4,
            tail_bytes: 200,
            error_bytes: 300,
            warning_bytes: 200,
            summary_bytes: 100,
            flagged_lines: 20,
            line_bytes: 100,
            context: 2,
        };
        let mut s = Sampler::new(caps);
        let mut at = 0;
        let mut cuts = cuts;
        cuts.sort_unstable();
        for c in cuts {
            let c = c.clamp(at, out.len());
            s.push(&out.as_bytes()[at..c]);
            at = c;
        }
        s.push(&out.as_bytes()[at..]);
        let sample = s.finish();
        let argv = vec!["tool".to_string()];
        let input = lens_core::Input { part: sample.part(), raw_len: out.len() as u64 };
        let none = lens_core::Input { part: Some(lens_core::Part::whole("")), raw_len: 0 };
        let (vo, _, _) = lens_core::view_parts(&argv, input, none, 1, &Options::new(level, Handle::parse(HANDLE)));
        if let Some(vo) = vo {
            check_stream(&vo, &out, "stdout").map_err(TestCaseError::fail)?;
        }
    }

    /// Invariant 7: deterministic, no hidden state. Same input, same view.
    #[test]
    fn deterministic(out in stream(), err in stream(), level in level()) {
        let argv = vec!["tool".to_string()];
        let a = run(&argv, &out, &err, 1, level, 2048);
        let b = run(&argv, &out, &err, 1, level, 2048);
        prop_assert_eq!(a.stdout, b.stdout);
        prop_assert_eq!(a.stderr, b.stderr);
    }
}

/// Invariant 5's library half: without a handle, nothing is elided.
#[test]
fn no_handle_no_elision() {
    let argv = vec!["tool".to_string()];
    let out = "   Compiling x v1\n".repeat(500);
    for level in [Level::Zero, Level::One, Level::Two] {
        let req = Request {
            argv: &argv,
            stdout: out.as_bytes(),
            stderr: b"",
            exit: 0,
        };
        let v = view(&req, &Options::new(level, None));
        assert_eq!(&v.stdout[..], out.as_bytes());
        assert!(!v.elided);
    }
}

/// Invariant 7: the library cannot reach the network; nothing in it names a socket.
#[test]
fn no_network_in_the_filter() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut stack = vec![std::path::PathBuf::from(src)];
    let mut files = 0;
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files += 1;
                let text = std::fs::read_to_string(&path).unwrap();
                for banned in ["std::net", "TcpStream", "UdpSocket", "ToSocketAddrs"] {
                    assert!(!text.contains(banned), "{} uses {banned}", path.display());
                }
            }
        }
    }
    assert!(files > 5);
}

/// Linear parsing: one 40k-line unindented block must not be quadratic. Checked by
/// counting, not timing: the view of 40k lines and of 4x that must both complete
/// and elide, with the work bounded by the number of blocks built.
#[test]
fn forty_thousand_unindented_lines_form_one_block() {
    let out: String = (0..40_000)
        .map(|i| format!("row {i} value {}\n", i * 3))
        .collect();
    let argv = vec!["tool".to_string()];
    let mut doc = lens_core::Doc::new(&argv, &out, "", 0);
    lens_core::annotate(&mut doc, &Options::new(Level::Two, Handle::parse(HANDLE)));
    assert_eq!(doc.blocks.len(), 1);
    assert_eq!(doc.blocks[0].len(), 40_000);
}
