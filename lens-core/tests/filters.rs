//! User filters cannot break the invariants: over generated filters (any mix of
//! drop, keep, summary, collapse, head, tail and per-exit rules) and generated
//! outputs, the view accounts for every raw line with exact markers (4, 8), shows
//! every line the classifier calls an error when the budget does not bind, and
//! `lens verify`'s own checks agree.

use lens_core::check::{check_stream, raw_lines};
use lens_core::filters::{check_invariants, FilterSet, TEST_HANDLE};
use lens_core::stages::classify;
use lens_core::{view, Class, Handle, Level, Options, Request};
use proptest::prelude::*;

const PATTERNS: &[&str] = &[
    "^DEBUG ",
    "^INFO",
    ".",
    "",
    "error",
    "^\\s+",
    "\\d+",
    "^ok$",
    "^(Downloading|Fetching) ",
    "x{3,}",
];

const LINES: &[&str] = &[
    "DEBUG cache hit",
    "INFO step 1",
    "INFO step 2",
    "error: boom",
    "ERROR: failed to fetch",
    "FAILED test_a",
    "Traceback (most recent call last):",
    "warning: deprecated",
    "ok",
    "",
    "   indented",
    "Fetching 1/9",
    "Fetching 2/9",
    "plain text",
    "[lens: elided stdout 1-2 (2 lines: budget) handle=deadbeef]",
    "total 12",
];

fn list(ix: &[usize]) -> String {
    let items: Vec<String> = ix
        .iter()
        .map(|&i| format!("'{}'", PATTERNS[i % PATTERNS.len()]))
        .collect();
    format!("[{}]", items.join(", "))
}

prop_compose! {
    fn filter_text()(
        drop in prop::collection::vec(0usize..64, 0..3),
        keep in prop::collection::vec(0usize..64, 0..2),
        summary in prop::collection::vec(0usize..64, 0..2),
        head in prop::option::of(0usize..6),
        tail in prop::option::of(0usize..6),
        collapse in any::<bool>(),
        when in prop::option::of((0i32..3, prop::collection::vec(0usize..64, 0..2), prop::option::of(0usize..4))),
    ) -> String {
        let mut t = format!(
            "[[filter]]\nname = \"gen\"\nmatch = '.'\ndrop = {}\nkeep = {}\nsummary = {}\ncollapse = {collapse}\n",
            list(&drop), list(&keep), list(&summary)
        );
        if let Some(h) = head { t.push_str(&format!("head = {h}\n")); }
        if let Some(h) = tail { t.push_str(&format!("tail = {h}\n")); }
        if let Some((code, drop, tail)) = when {
            t.push_str(&format!("[[filter.when]]\nexit = {code}\ndrop = {}\n", list(&drop)));
            if let Some(n) = tail { t.push_str(&format!("tail = {n}\n")); }
        }
        t
    }
}

fn output() -> impl Strategy<Value = String> {
    prop::collection::vec(0usize..LINES.len() + 1, 0..60).prop_map(|ix| {
        ix.iter()
            .map(|&i| match LINES.get(i) {
                Some(l) => format!("{l}\n"),
                None => format!("{}\n", "y".repeat(3000)),
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_filter_keeps_markers_exact_and_errors_shown(
        text in filter_text(),
        out in output(),
        err in output(),
        exit in 0i32..3,
        budget in prop::sample::select(vec![200usize, 4096, 1 << 30]),
    ) {
        let set = FilterSet::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let filter = set.filters[0].clone();
        let argv = vec!["gen".to_string()];
        let mut opts = Options::new(Level::Two, Handle::parse(TEST_HANDLE));
        opts.filter = Some(filter);
        opts.budget = budget;
        let req = Request { argv: &argv, stdout: out.as_bytes(), stderr: err.as_bytes(), exit };
        let v = view(&req, &opts);
        for (name, raw, shown) in [("stdout", &out, &v.stdout), ("stderr", &err, &v.stderr)] {
            let shown = String::from_utf8_lossy(shown);
            let kept = check_stream(&shown, raw, name, TEST_HANDLE)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            if budget < 1 << 30 {
                continue;
            }
            let lines = raw_lines(raw);
            for (i, l) in lines.iter().enumerate() {
                if classify::trouble(l) == Some(Class::Error) {
                    prop_assert!(
                        kept.iter().any(|&n| lines[n as usize - 1] == *l),
                        "{name} line {} ({l:?}) is an error the view does not show\n{text}\n{shown}",
                        i + 1
                    );
                }
            }
        }
    }

}

proptest! {
    // Each case runs the checks over several outputs of its own: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn verify_finds_no_violation_in_a_generated_filter(text in filter_text()) {
        let set = FilterSet::parse(&text).unwrap();
        prop_assert_eq!(check_invariants(&set.filters[0], 4), Ok(()));
    }
}
