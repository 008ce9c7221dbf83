//! Views keep what is rare: the reproductions of the outputs where a view used to
//! lose the one line that mattered (a log's error under a timestamp, the unusual
//! match among routine ones, the outlier file of a listing, a commit of a `git log
//! -p`), and the property that a digest's cut drops what repeats first, for every
//! shape that cuts.

mod common;

use common::{check_stream, HANDLE};
use lens_core::{view, Handle, Level, Options, Request};
use proptest::prelude::*;

/// The view of stdout `out` of `cmd` (split on spaces) at `level`; the view is
/// checked against the raw output line by line.
fn view_of(cmd: &str, out: &str, exit: i32, level: Level) -> String {
    let argv: Vec<String> = cmd.split(' ').map(str::to_string).collect();
    let req = Request {
        argv: &argv,
        stdout: out.as_bytes(),
        stderr: b"",
        exit,
    };
    let v = view(&req, &Options::new(level, Handle::parse(HANDLE)));
    let text = String::from_utf8(v.stdout.into_owned()).expect("utf-8");
    if level == Level::Two {
        check_stream(&text, out, "stdout").expect("the view accounts for every raw line");
    }
    text
}

/// `before` info lines, the line `odd`, then `after` more, each from `info(n)`.
fn log(before: usize, odd: &str, after: usize, info: impl Fn(usize) -> String) -> String {
    let mut s = String::new();
    for n in 0..before {
        s.push_str(&info(n));
        s.push('\n');
    }
    s.push_str(odd);
    s.push('\n');
    for n in before..before + after {
        s.push_str(&info(n));
        s.push('\n');
    }
    s
}

fn iso_info(n: usize) -> String {
    format!(
        "2024-01-01 12:{:02}:{:02} info: request {n} ok",
        (n / 60) % 60,
        n % 60
    )
}

#[test]
fn a_timestamped_logs_error_is_kept_and_counted_at_every_level() {
    let error = "2024-01-01 12:59:59 error: connection refused";
    for (before, after) in [(2000, 2000), (100, 100)] {
        let out = log(before, error, after, iso_info);
        let two = view_of("cat log", &out, 0, Level::Two);
        assert!(
            two.contains(error),
            "level 2 of {}: {two}",
            before + after + 1
        );
        assert!(two.len() < out.len());
        let one = view_of("cat log", &out, 0, Level::One);
        assert!(one.contains(error), "level 1: {one}");
        let zero = view_of("cat log", &out, 0, Level::Zero);
        assert!(zero.contains(" errors=1 "), "level 0: {zero}");
        assert!(zero.contains(error), "level 0: {zero}");
    }
}

/// The routine line of a log, numbered.
type InfoLine = Box<dyn Fn(usize) -> String>;

#[test]
fn every_common_log_format_keeps_its_error() {
    let cases: Vec<(&str, InfoLine)> = vec![
        (
            "2024-01-01 12:59:59,123 ERROR billing.worker: charge failed",
            Box::new(|n| format!("2024-01-01 12:00:{:02},{n:03} INFO billing.worker: charged {n}", n % 60)),
        ),
        (
            "2024/01/01 12:59:59 panic: assignment to entry in nil map",
            Box::new(|n| format!("2024/01/01 12:00:{:02} handled request {n}", n % 60)),
        ),
        (
            "12:59:59 ERROR: disk full",
            Box::new(|n| format!("12:00:{:02} INFO: wrote block {n}", n % 60)),
        ),
        (
            "2024-01-01T12:59:59.120Z WARN pool exhausted",
            Box::new(|n| format!("2024-01-01T12:00:{:02}.{n:03}Z INFO served {n}", n % 60)),
        ),
        (
            "Jan  1 12:59:59 web1 app[4242]: error: upstream timed out",
            Box::new(|n| format!("Jan  1 12:00:{:02} web1 app[4242]: served /item/{n}", n % 60)),
        ),
        (
            "ts=2024-01-01T12:59:59Z level=error msg=\"dial tcp 10.0.0.9:5432: connection refused\"",
            Box::new(|n| format!("ts=2024-01-01T12:00:{:02}Z level=info msg=\"served\" id={n}", n % 60)),
        ),
        (
            "[2024-01-01 12:59:59] ERROR payment declined for order 77",
            Box::new(|n| format!("[2024-01-01 12:00:{:02}] INFO order {n} paid", n % 60)),
        ),
        (
            "[ERROR] could not bind 0.0.0.0:80",
            Box::new(|n| format!("[INFO] worker {n} ready")),
        ),
        (
            r#"{"ts":"2024-01-01T12:59:59Z","level":"error","msg":"refused"}"#,
            Box::new(|n| format!(r#"{{"ts":"2024-01-01T12:00:{:02}Z","level":"info","msg":"ok {n}"}}"#, n % 60)),
        ),
    ];
    for (odd, info) in cases {
        let out = log(600, odd, 600, info);
        let two = view_of("cat app.log", &out, 0, Level::Two);
        assert!(two.contains(odd), "{odd}: {two}");
        let zero = view_of("cat app.log", &out, 0, Level::Zero);
        let counted = zero.contains(" errors=1 ") || zero.contains(" warnings=1 ");
        assert!(counted, "{odd}: {zero}");
    }
}

/// `grep -rnE 'TODO|FIXME' .` over 30 files, ten routine TODOs each, one
/// `FIXME(security)` in the 23rd file's middle.
fn todos() -> String {
    let mut out = String::new();
    for f in 0..30 {
        for k in 0..10 {
            out.push_str(&format!(
                "./src/mod{f:02}/handler.rs:{}:    // TODO: tidy up case {k} of module {f}\n",
                k * 7 + 3
            ));
            if f == 22 && k == 5 {
                out.push_str(&format!(
                    "./src/mod{f:02}/handler.rs:60:    // FIXME(security): token is written to the log\n"
                ));
            }
        }
    }
    out
}

#[test]
fn grep_keeps_the_unusual_match_among_routine_ones() {
    let out = todos();
    let two = view_of("grep -rnE TODO|FIXME .", &out, 0, Level::Two);
    assert!(two.contains("FIXME(security)"), "{two}");
    assert!(two.contains(" unlisted="), "the digest was cut: {two}");
    // Every file is still named.
    for f in 0..30 {
        assert!(
            two.contains(&format!("./src/mod{f:02}/handler.rs:")),
            "{f}: {two}"
        );
    }
}

/// `ls -la` of 600 rotated logs of a few KB and one 48 MB core file.
fn big_ls() -> String {
    let mut out = String::from("total 51200\ndrwxr-xr-x  2 app app     4096 Mar 10 09:00 .\ndrwxr-xr-x 12 app app     4096 Mar  1 08:00 ..\n");
    for i in 0..600 {
        let name = format!("worker-{:03}.log", i);
        if i == 417 {
            out.push_str("-rw-------  1 app app 50331648 Mar  9 23:41 core.31337\n");
        }
        out.push_str(&format!(
            "-rw-r--r--  1 app app {:>8} Mar  9 23:{:02} {name}\n",
            2000 + (i * 37) % 900,
            i % 60
        ));
    }
    out
}

#[test]
fn a_large_listing_keeps_its_outlier() {
    let out = big_ls();
    let two = view_of("ls -la /var/log/app", &out, 0, Level::Two);
    assert!(two.contains("core.31337(50331648)"), "{two}");
    // The numbered logs are two ranges around it, each with its sizes' span:
    // every name is in the view, none had to go.
    assert!(
        two.contains(
            "worker-{000..416}.log (2000-2893), core.31337(50331648), worker-{417..599}.log (2006-2895)"
        ),
        "{two}"
    );
    assert!(!two.contains(" unlisted="), "{two}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// One line unlike the others among `n` that repeat one template is kept
    /// when the digest must be cut, wherever it is, for every shape that cuts.
    #[test]
    fn an_unusual_entry_among_repeated_ones_is_always_kept(
        n in 300usize..900,
        at in 0usize..1000,
        shape in 0usize..5,
    ) {
        let at = at % n;
        let (cmd, lines, odd): (&str, Vec<String>, &str) = match shape {
            0 => (
                "grep -rn TODO .",
                (0..n).map(|i| format!("./pkg/f{:02}.go:{}:// TODO: revisit branch {i}", i % 25, i + 1)).collect(),
                "./pkg/f07.go:9999:// SECURITY: key checked in TODO",
            ),
            1 => (
                "find . -name *.o",
                (0..n).map(|i| format!("./build/obj{}/unit_{i}_{}.o", i % 9, i * 7 % 13)).collect(),
                "./build/obj3/passwords.txt",
            ),
            2 => (
                "ls -l",
                (0..n).map(|i| format!("-rw-r--r-- 1 u u {:>5} Jan  1  2026 part_{i}_{}.bin", 1000 + i % 50, i % 7)).collect(),
                "-rw-r--r-- 1 u u  1010 Jan  1  2026 notes.txt",
            ),
            3 => (
                "git status",
                {
                    let mut v = vec!["On branch main".to_string(), "Changes not staged for commit:".to_string()];
                    v.extend((0..n).map(|i| format!("\tmodified:   snapshots/frame_{i}_{}.snap", i % 3)));
                    v
                },
                "\tdeleted:    src/auth/session.rs",
            ),
            _ => (
                "kubectl get pods",
                {
                    let mut v = vec!["NAME          READY   STATUS    RESTARTS   AGE".to_string()];
                    v.extend((0..n).map(|i| format!("web-{i:<9} 1/1     Running   0          {}d", i % 9 + 1)));
                    v
                },
                "db-0          0/1     Error     7          2d",
            ),
        };
        let mut lines = lines;
        let first_entry = usize::from(shape >= 3) + usize::from(shape == 3);
        lines.insert((at + first_entry).min(lines.len()), odd.to_string());
        let out: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let two = view_of(cmd, &out, 0, Level::Two);
        // The digest is smaller than the raw output: either it leaves names out
        // (`unlisted=`) or it folds them (`{a..b}`, a group with its count).
        prop_assert!(two.len() < out.len(), "not shortened: {}", two);
        let needle = match shape {
            0 => "SECURITY: key checked",
            1 => "passwords.txt",
            2 => "notes.txt",
            3 => "src/auth/session.rs",
            _ => "db-0",
        };
        prop_assert!(two.contains(needle), "{} lost: {}", needle, two);
    }
}

/// What a view must hold of a `git log -p` digest: every commit's short hash,
/// author's name, date and subject on one line, and every hunk it shows whole (the
/// `@@ -a,b +c,d @@` line followed by exactly its b + d changed lines) or as one
/// line with its counts and raw lines.
fn check_log_p(raw: &str, view: &str) {
    let lines: Vec<&str> = raw.lines().collect();
    let mut k = 0;
    while k < lines.len() {
        if let Some(hash) = lines[k].strip_prefix("commit ") {
            let author = lines[k + 1].strip_prefix("Author: ").expect("an author");
            let date = lines[k + 2].strip_prefix("Date:   ").expect("a date");
            let subject = lines[k + 4].trim();
            let year = date.split_whitespace().nth(4).expect("a year");
            let line = view
                .lines()
                .find(|l| l.starts_with(&hash[..7]))
                .unwrap_or_else(|| panic!("commit {hash} missing: {view}"));
            // Every commit says who wrote it by name (a short line drops the
            // address, never the name).
            let (name, _) = author.split_once(" <").expect("an address");
            assert!(line.contains(&format!("({name}")), "{line}");
            assert!(line.contains(subject), "{line}");
            assert!(line.contains(year), "{line}");
        }
        k += 1;
    }
    let shown: Vec<&str> = view.lines().collect();
    for (i, l) in shown.iter().enumerate() {
        let Some(spec) = l.strip_prefix("@@ -") else {
            assert!(
                !(l.starts_with(['+', '-'])
                    && (i == 0 || !shown[i - 1].starts_with(['+', '-', '@']))),
                "a changed line outside a hunk: {l}"
            );
            continue;
        };
        let count = |s: &str| -> usize { s.split(',').nth(1).unwrap_or("1").parse().unwrap() };
        let mut parts = spec.split(' ');
        let (old, new) = (
            parts.next().unwrap(),
            parts.next().unwrap().trim_start_matches('+'),
        );
        let want = count(old) + count(new);
        // A large hunk said in one line: its counts and the raw lines it spans.
        if let Some((_, said)) = spec.split_once(" @@ ") {
            let (adds, dels) = (count(new), count(old));
            assert!(said.starts_with(&format!("+{adds} -{dels} (lines ")), "{l}");
            continue;
        }
        let got = shown[i + 1..]
            .iter()
            .take_while(|l| l.starts_with(['+', '-']) && !l.starts_with("[lens:"))
            .count();
        assert_eq!(got, want, "hunk {l} shown in part: {view}");
    }
}

#[test]
fn git_log_p_of_this_repositorys_makefile_keeps_every_commit_and_whole_hunks() {
    let raw = include_str!("fixtures/git-log-p-makefile.stdout");
    let two = view_of("git log -p -- Makefile", raw, 0, Level::Two);
    assert!(two.len() < raw.len());
    check_log_p(raw, &two);
}

#[test]
fn git_log_p_of_one_files_forty_commits_keeps_every_commit_and_whole_hunks() {
    let dir = std::env::temp_dir().join(format!("lens-views-git-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let git = |args: &[&str]| git_in(&dir, args);
    git(&["init", "-q", "-b", "main"]);
    let mut body: Vec<String> = (0..60).map(|i| format!("value_{i} = {i}")).collect();
    for c in 0..40 {
        // Each commit changes two lines far apart and adds one.
        body[(c * 7) % 60] = format!("value_{} = {} # changed in {c}", (c * 7) % 60, c * 100);
        body[(c * 13 + 30) % 60] = format!("value_{} = {}", (c * 13 + 30) % 60, c);
        body.push(format!("added_{c} = true"));
        std::fs::write(dir.join("settings.py"), body.join("\n") + "\n").unwrap();
        git(&["add", "settings.py"]);
        let (name, mail) = [
            ("Ada Okafor", "ada@example.com"),
            ("Chen Wei", "chen@example.com"),
        ][c % 2];
        git(&[
            "-c",
            &format!("user.name={name}"),
            "-c",
            &format!("user.email={mail}"),
            "commit",
            "-q",
            "-m",
            &format!("Tune setting group {c}"),
        ]);
    }
    let raw = git(&["log", "-p", "--", "settings.py"]);
    std::fs::remove_dir_all(&dir).unwrap();
    let two = view_of("git log -p -- settings.py", &raw, 0, Level::Two);
    assert!(two.len() < raw.len());
    check_log_p(&raw, &two);
}

/// Runs git in `dir` with a fixed date and no user configuration.
fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        // A GIT_DIR inherited from the caller (git rebase -x sets it)
        // would point these commands at the developer's repository.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", "2026-02-03T05:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-02-03T05:00:00Z")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `git log -p` of 40 commits to one file, each written by `change(c, body)`.
fn forty_commit_log(
    tag: &str,
    subject: impl Fn(usize) -> String,
    change: impl Fn(usize, &mut Vec<String>),
) -> String {
    let dir = std::env::temp_dir().join(format!("lens-views-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    git_in(&dir, &["init", "-q", "-b", "main"]);
    let mut body: Vec<String> = (0..40).map(|i| format!("K{i} = {i}")).collect();
    for c in 0..40 {
        change(c, &mut body);
        std::fs::write(dir.join("conf.py"), body.join("\n") + "\n").unwrap();
        git_in(&dir, &["add", "conf.py"]);
        let (name, mail) = [("Al", "al@x.io"), ("Bo", "bo@x.io"), ("Cy", "cy@x.io")][c % 3];
        let (name, mail) = (format!("user.name={name}"), format!("user.email={mail}"));
        git_in(
            &dir,
            &["-c", &name, "-c", &mail, "commit", "-q", "-m", &subject(c)],
        );
    }
    let raw = git_in(&dir, &["log", "-p", "--", "conf.py"]);
    std::fs::remove_dir_all(&dir).unwrap();
    raw
}

#[test]
fn a_forty_commit_log_p_keeps_every_commits_change_and_address_when_they_fit() {
    // Commit 25 of 40 (the 15th printed, newest first) changes one value; commit
    // 10 rewrites 36 lines; every other commit changes one line.
    let raw = forty_commit_log(
        "compact",
        |c| format!("c{c}"),
        |c, body| match c {
            25 => body[7] = "K7 = 700".into(),
            10 => {
                for (i, l) in body.iter_mut().enumerate().take(38).skip(2) {
                    *l = format!("K{i} = {i} # v2");
                }
            }
            _ => body[c % 40] = format!("K{} = {}", c % 40, c + 100),
        },
    );
    let two = view_of("git log -p -- conf.py", &raw, 0, Level::Two);
    assert!(two.len() <= 4096, "{} bytes: {two}", two.len());
    check_log_p(&raw, &two);
    for (c, mail) in (0..40).map(|c| (c, ["al@x.io", "bo@x.io", "cy@x.io"][c % 3])) {
        let line = two
            .lines()
            .find(|l| l.split(' ').nth(1) == Some(&format!("c{c}")))
            .unwrap_or_else(|| panic!("c{c} missing: {two}"));
        assert!(line.contains(&format!("<{mail}>")), "{line}");
        assert!(line.contains("2026-02-03"), "{line}");
    }
    // The value change as -old/+new under its commit.
    assert!(
        two.contains(" c25 (") && two.contains("\n-K7 = 7 # v2\n+K7 = 700\n"),
        "{two}"
    );
    // The large hunk: its counts, raw lines and first changed line.
    let big = two
        .lines()
        .find(|l| l.starts_with("@@ -3,36 +3,36 @@ +36 -36 (lines "))
        .unwrap_or_else(|| panic!("no compact hunk: {two}"));
    assert!(big.ends_with("): -K2 = 102"), "{big}");
    assert!(!two.contains("+K20 = 20 # v2"), "{two}");
}

#[test]
fn a_log_p_too_long_for_its_commits_lines_groups_the_oldest_with_their_hashes() {
    let raw = forty_commit_log(
        "grouped",
        |c| format!("Commit {c} with a subject long enough that forty of them pass the budget"),
        |c, body| body[c % 40] = format!("K{} = {}", c % 40, c + 100),
    );
    let two = view_of("git log -p -- conf.py", &raw, 0, Level::Two);
    assert!(two.len() <= 4096, "{} bytes: {two}", two.len());
    let group = two
        .lines()
        .find(|l| l.starts_with("… ") && l.contains(" commits (lines "))
        .unwrap_or_else(|| panic!("no group: {two}"));
    // Every commit is named: by its line, or by its hash in the group.
    for l in raw.lines().filter_map(|l| l.strip_prefix("commit ")) {
        assert!(two.contains(&l[..7]), "{} missing: {two}", &l[..7]);
    }
    assert!(group.contains("; +"), "{group}");
    assert!(two.lines().next().unwrap().contains(" unlisted="), "{two}");
}

/// A rustc report of `E0308` at `file:line`, quoting a call; `variant` 0 is the
/// common form, the others differ from it in more than numbers: other code at the
/// same place, another label, a note the rest lack.
fn e0308(file: usize, line: usize, k: usize, variant: usize) -> String {
    let code = match variant {
        1 => format!("units(item.qty_ordered) * {k} + 1"),
        _ => format!("units(item.quantity) * {k} + 1"),
    };
    let found = if variant == 2 { "&str" } else { "String" };
    let note = if variant == 3 {
        "   = note: the field is declared in src/lib.rs\n"
    } else {
        ""
    };
    format!(
        "error[E0308]: mismatched types\n  --> src/m{file}.rs:{line}:11\n   |\n{line:>2} |     {code}\n   |     ----- ^^^^^^^^^^^^^ expected `u32`, found `{found}`\n{note}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A cascade's list line says its reports read as the example above but for
    /// their numbers only when every one of them does, and says it whenever
    /// they do and the line is shown.
    #[test]
    fn a_list_line_says_its_reports_read_alike_only_when_each_does(
        files in 1usize..6,
        n in 4usize..60,
        odd in prop::collection::vec((0usize..60, 1usize..4), 0..3),
        budget in 512usize..8192,
    ) {
        let mut out = String::from("   Compiling orders v0.1.0\n");
        let mut odd_in = false;
        for i in 0..n {
            let variant = odd.iter().find(|(at, _)| *at == i).map_or(0, |&(_, v)| v);
            odd_in |= variant != 0;
            out.push_str(&e0308(i % files, 4 * (i / files) + 6, i + 1, variant));
        }
        out.push_str(&format!("error: could not compile `orders` (lib) due to {n} previous errors\n"));
        let argv: Vec<String> = vec!["cargo".into(), "build".into()];
        let req = Request { argv: &argv, stdout: b"", stderr: out.as_bytes(), exit: 101 };
        let mut opts = Options::new(Level::Two, Handle::parse(HANDLE));
        opts.budget = budget;
        let v = view(&req, &opts);
        let text = String::from_utf8(v.stderr.into_owned()).expect("utf-8");
        check_stream(&text, &out, "stderr").map_err(TestCaseError::fail)?;
        let alike = "each as the report above but for its numbers";
        let said = text.contains(alike);
        prop_assert!(!(said && odd_in), "said alike over a report that is not:\n{text}");
        let listed = text.lines().any(|l| l.starts_with("same E0308 ×"));
        prop_assert!(odd_in || !listed || said, "alike reports not said to be:\n{text}");
    }
}
