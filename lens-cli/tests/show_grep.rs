//! `lens show <handle> --grep REGEX [--context N]`: search the stored output
//! for what a marker hides, by raw line number (issue 23).

mod common;

use common::{handle_in, Sandbox};

#[test]
fn grep_prints_raw_lines_as_grep_does_a_count_and_a_marker_past_the_budget() {
    let sb = Sandbox::new();
    let out = sb.run(&["sh", "-c", "seq 1 5000; echo 'error: boom' >&2"]);
    let h = handle_in(&out.stdout).unwrap();
    // Both streams have lines: each line names its stream, as grep names the
    // file when it searches several; -n numbers them as --lines counts.
    let g = sb.run(&["show", &h, "--grep", "^4999$|boom", "--context", "1"]);
    assert_eq!(g.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&g.stdout),
        "stdout-4998\nstdout:4999\nstdout-5000\nstderr:error: boom\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&g.stderr),
        "[lens: 2 matching lines (1 in stdout, 1 in stderr)]\n"
    );
    let g = sb.run(&["show", &h, "--grep", "^4999$|boom", "--context", "1", "-n"]);
    assert_eq!(
        String::from_utf8_lossy(&g.stdout),
        "stdout:4998-4998\nstdout:4999:4999\nstdout:5000-5000\nstderr:1:error: boom\n"
    );
    let one = sb.run(&["show", &h, "--grep", "-n", "^12$", "--stream", "stdout"]);
    assert_eq!(String::from_utf8_lossy(&one.stdout), "12:12\n");
    assert_eq!(
        String::from_utf8_lossy(&one.stderr),
        "[lens: 1 matching line (1 in stdout)]\n"
    );
    let many = sb.run(&["show", &h, "--grep", "7$", "--budget", "1k"]);
    let t = String::from_utf8_lossy(&many.stdout);
    assert!(t.len() <= 1024, "{}", t.len());
    let e = String::from_utf8_lossy(&many.stderr);
    assert!(e.contains("[lens: 500 matching lines"), "{e}");
    assert!(
        e.contains("more matching lines past the budget, the first at stdout line"),
        "{e}"
    );
    let none = sb.run(&["show", &h, "--grep", "nothing like this"]);
    assert_eq!(none.status.code(), Some(1));
    let bad = sb.run(&["show", &h, "--grep", "x("]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&bad.stderr).lines().count(), 1);
}

/// An agent piped `lens show H --grep '^(error|warning)' | sort | uniq -c`, as
/// it would `cargo build | grep …`, and got 48 numbered lines, not one count.
/// Here 300 reports, so the run is over the budget and gets a handle.
#[test]
fn grep_output_is_ready_for_a_pipeline() {
    let sb = Sandbox::new();
    let script = "for i in $(seq 1 300); do echo \"error[E0308]: mismatched types\"; echo \"  --> src/m.rs:$i:5\"; done";
    let out = sb.run(&["sh", "-c", script]);
    let h = handle_in(&out.stdout).unwrap();
    let piped = sb
        .lens()
        .args(["show", &h, "--grep", "^error", "--budget", "64k"])
        .output()
        .unwrap();
    let counted = std::process::Command::new("sh")
        .args(["-c", "sort | uniq -c"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(&piped.stdout)?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&counted.stdout).trim(),
        "300 error[E0308]: mismatched types"
    );
}

/// Runs each spelling of one `lens show` and checks it exits 0 printing
/// `stdout`; gives back each run for what else a test checks.
fn each_prints<'a>(
    sb: &Sandbox,
    spellings: &'a [Vec<&'a str>],
    stdout: &str,
) -> Vec<(&'a [&'a str], std::process::Output)> {
    spellings
        .iter()
        .map(|args| {
            let g = sb.run(args);
            assert_eq!(g.status.code(), Some(0), "{args:?}: {g:?}");
            assert_eq!(
                String::from_utf8_lossy(&g.stdout),
                stdout,
                "{args:?}: {g:?}"
            );
            (args.as_slice(), g)
        })
        .collect()
}

/// What an agent types to be sure a region of `ok` lines hides nothing else:
/// grep's own `-v`, after `--grep` or as a flag of its own.
#[test]
fn grep_v_prints_the_lines_that_do_not_match() {
    let sb = Sandbox::new();
    let script = "for i in $(seq 1 3000); do echo \"checked $i ok\"; done; echo 'reconciliation failed for 77'";
    let out = sb.run(&["sh", "-c", script]);
    let h = handle_in(&out.stdout).unwrap();
    let spellings = [
        vec!["show", &h, "--grep", "-v", " ok$"],
        vec!["show", &h, "--grep", " ok$", "-v"],
        vec!["show", &h, "--invert-match", "--grep", " ok$"],
    ];
    for (args, g) in each_prints(&sb, &spellings, "reconciliation failed for 77\n") {
        assert_eq!(
            String::from_utf8_lossy(&g.stderr),
            "[lens: 1 non-matching line (1 in stdout, 0 in stderr)]\n",
            "{args:?}"
        );
    }
    let none = sb.run(&["show", &h, "--grep", "-v", "."]);
    assert_eq!(none.status.code(), Some(1));
    let bare = sb.run(&["show", &h, "--grep", "-v"]);
    assert_eq!(bare.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&bare.stderr).lines().count(), 1);
}

/// grep's `-i` (in the helper runs an agent typed `--grep -i token` and got an
/// error), and bare matches one per line with no `--` between them: an agent
/// piped `lens show H --grep … | grep -v size_t`, and got a page of `--`.
#[test]
fn grep_i_ignores_case_and_bare_matches_have_no_separators() {
    let sb = Sandbox::new();
    let script = "for i in $(seq 1 3000); do echo \"step $i ok\"; [ $i = 1500 ] && echo 'Migration TOKEN: 7f3a'; done; echo 'error: late'";
    let out = sb.run(&["sh", "-c", script]);
    let h = handle_in(&out.stdout).unwrap();
    let spellings = [
        vec!["show", &h, "--grep", "-i", "token"],
        vec!["show", &h, "-i", "--grep", "token"],
        vec!["show", &h, "--grep", "token", "--ignore-case"],
        vec!["show", &h, "--grep", "-E", "-i", "token"],
    ];
    each_prints(&sb, &spellings, "Migration TOKEN: 7f3a\n");
    // Case matters without -i.
    assert_eq!(
        sb.run(&["show", &h, "--grep", "token"]).status.code(),
        Some(1)
    );
    // Two matches far apart: two lines, nothing between them.
    let g = sb.run(&["show", &h, "--grep", "-n", "TOKEN|error"]);
    assert_eq!(
        String::from_utf8_lossy(&g.stdout),
        "1501:Migration TOKEN: 7f3a\n3002:error: late\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&g.stderr),
        "[lens: 2 matching lines (2 in stdout, 0 in stderr)]\n"
    );
    // With context, groups are apart by `--`, as grep prints them.
    let g = sb.run(&["show", &h, "--grep", "-n", "TOKEN|error", "-C", "1"]);
    let text = String::from_utf8_lossy(&g.stdout);
    assert!(
        text.contains("1502-step 1501 ok\n--\n3001-step 3000 ok\n"),
        "{text}"
    );
}
