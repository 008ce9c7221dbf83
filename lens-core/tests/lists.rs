//! Cut lists keep every name reachable: for every shape that cuts a list (grep's
//! files, find's paths, git status's files, the packages apt can upgrade, a
//! table's rows), every item of the raw
//! output is named in the view, or falls under a group line that prints its
//! directory or prefix with the count of what it stands for. A prefix of the
//! list is never the view.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{check_stream, HANDLE};
use lens_core::{view, Handle, Level, Options, Request};
use proptest::prelude::*;

/// The level-2 view of stdout `out` of `argv` in `budget` bytes, checked line by
/// line against the raw output.
fn view_of(argv: &[&str], out: &str, budget: usize) -> String {
    view_at(argv, out, budget, Level::Two)
}

/// The view at `level` of stdout `out` of `argv` in `budget` bytes, checked
/// line by line against the raw output.
fn view_at(argv: &[&str], out: &str, budget: usize, level: Level) -> String {
    let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
    let req = Request {
        argv: &argv,
        stdout: out.as_bytes(),
        stderr: b"",
        exit: 0,
    };
    let mut opts = Options::new(level, Handle::parse(HANDLE));
    opts.budget = budget;
    let v = view(&req, &opts);
    let text = String::from_utf8(v.stdout.into_owned()).expect("utf-8");
    check_stream(&text, out, "stdout").expect("the view accounts for every raw line");
    text
}

/// The names a brace expression stands for, as bash expands it: `a{b,c}d`,
/// `f_{001..003}.rs`, nested.
fn expand(word: &str) -> Vec<String> {
    let Some(open) = word.find('{') else {
        return vec![word.to_string()];
    };
    let mut depth = 0;
    let mut close = None;
    let mut commas = Vec::new();
    for (i, c) in word[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(open + i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![word.to_string()];
    };
    let (pre, post) = (&word[..open], &word[close + 1..]);
    let inner = &word[open + 1..close];
    let alternatives: Vec<String> = if commas.is_empty() {
        let Some((a, b)) = inner.split_once("..") else {
            return vec![word.to_string()];
        };
        let (Ok(x), Ok(y)) = (a.parse::<u64>(), b.parse::<u64>()) else {
            return vec![word.to_string()];
        };
        let width = if a.starts_with('0') { a.len() } else { 0 };
        (x..=y).map(|n| format!("{n:0width$}")).collect()
    } else {
        let mut bounds = vec![open];
        bounds.extend(&commas);
        bounds.push(close);
        bounds
            .windows(2)
            .map(|w| word[w[0] + 1..w[1]].to_string())
            .collect()
    };
    alternatives
        .iter()
        .flat_map(|alt| expand(&format!("{pre}{alt}{post}")))
        .collect()
}

/// What a view's digest says of a list: the names it prints (every word,
/// brace-expanded, with a line's leading directory joined to the words after
/// it), and its group lines (`services/ledger/ (12 files, 40 matches)`,
/// `python3-* (3 packages)`, `./app/ a.py … +3`): prefix and the count of items.
struct Said {
    named: BTreeSet<String>,
    groups: Vec<(String, usize)>,
    unlisted: usize,
}

fn said(view: &str) -> Said {
    let mut named = BTreeSet::new();
    let mut groups = Vec::new();
    let mut unlisted = 0;
    for line in view.lines() {
        if let Some(k) = line.find(" unlisted=") {
            unlisted = line[k + 10..]
                .trim_end_matches(']')
                .parse()
                .expect("a count");
            continue;
        }
        let words: Vec<&str> = line
            .split(' ')
            .map(|w| w.trim_end_matches(','))
            .filter(|w| !w.is_empty())
            .collect();
        let Some(first) = words.first() else { continue };
        for w in &words {
            for name in expand(w.trim_end_matches(':')) {
                named.insert(name);
            }
        }
        if first.ends_with('/') {
            for w in &words[1..] {
                named.insert(format!("{first}{w}"));
            }
        }
        let count = words
            .get(1)
            .and_then(|w| w.strip_prefix('('))
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(n) = count {
            if first.ends_with(['/', '*']) {
                groups.push((first.trim_end_matches('*').to_string(), n));
            }
        }
        if let Some(k) = words.iter().position(|w| *w == "…") {
            if first.ends_with('/') {
                let n = words[k + 1].trim_start_matches('+').parse().unwrap_or(0);
                groups.push((first.to_string(), n));
            }
        }
    }
    Said {
        named,
        groups,
        unlisted,
    }
}

/// Every item is named, or under a group line naming its prefix; with
/// `exact`, each group's count is that of the items under it no other line
/// names or groups deeper. An item left unnamed is counted in `unlisted=`.
fn check_reachable(items: &[String], view: &str, exact: bool) -> Result<(), TestCaseError> {
    let s = said(view);
    let mut under: BTreeMap<&str, usize> = BTreeMap::new();
    let mut grouped = 0;
    for item in items {
        if s.named.contains(item) {
            continue;
        }
        let group = s
            .groups
            .iter()
            .filter(|(p, _)| item.starts_with(p.as_str()))
            .max_by_key(|(p, _)| p.len());
        // A directory named in a fold (`./src/{a,b}/ (2 dirs, 9 entries)`)
        // stands for what is under it, counted on its line.
        let in_named_dir = s
            .named
            .iter()
            .any(|n| n.ends_with('/') && item.starts_with(n.as_str()));
        let Some((prefix, _)) = group else {
            if in_named_dir && !exact {
                grouped += 1;
                continue;
            }
            return Err(TestCaseError::fail(format!(
                "{item} is neither named nor under a group:\n{view}"
            )));
        };
        *under.entry(prefix.as_str()).or_default() += 1;
        grouped += 1;
    }
    if exact {
        for (prefix, n) in &s.groups {
            let got = under.get(prefix.as_str()).copied().unwrap_or(0);
            prop_assert_eq!(
                got,
                *n,
                "group {} counts {} of {}:\n{}",
                prefix,
                n,
                got,
                view
            );
        }
    }
    if grouped > 0 {
        prop_assert!(
            s.unlisted > 0,
            "{grouped} items unnamed, unlisted=0:\n{view}"
        );
    }
    Ok(())
}

const DIRS: [&str; 8] = [
    "services", "ledger", "billing", "api", "web", "core", "util", "handlers",
];

/// A path of 1 to 4 directories from a few shared names, and a file name.
fn path() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(0usize..DIRS.len(), 0..4),
        "[a-z]{1,8}",
        prop::option::of(0u32..300),
        prop::sample::select(vec![".rs", ".py", ".go"]),
    )
        .prop_map(|(dirs, stem, n, ext)| {
            let mut p = String::from("src/");
            for d in dirs {
                p.push_str(DIRS[d]);
                p.push('/');
            }
            p.push_str(&stem);
            if let Some(n) = n {
                p.push_str(&format!("_{n:03}"));
            }
            p.push_str(ext);
            p
        })
}

/// A package name: `libfoo3`, `python3-yaml`, `node-types-x`.
fn package() -> impl Strategy<Value = String> {
    (
        "[a-z]{2,7}[0-9]?",
        prop::collection::vec("[a-z0-9]{1,6}", 0..3),
    )
        .prop_map(|(head, rest)| {
            std::iter::once(head)
                .chain(rest)
                .collect::<Vec<_>>()
                .join("-")
        })
}

fn distinct(v: Vec<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    v.into_iter().filter(|x| seen.insert(x.clone())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// grep: every file is named, or under a directory printed with its count.
    #[test]
    fn every_file_a_grep_matched_is_reachable(
        files in prop::collection::vec((path(), 1usize..4), 10..250),
        budget in 512usize..4096,
    ) {
        let mut seen = BTreeSet::new();
        let files: Vec<(String, usize)> =
            files.into_iter().filter(|(p, _)| seen.insert(p.clone())).collect();
        let mut out = String::new();
        for (p, n) in &files {
            for k in 0..*n {
                out.push_str(&format!("{p}:{}:pub fn handle_{k}(req: Request) -> Response {{\n", k * 9 + 3));
            }
        }
        let v = view_of(&["grep", "-rn", "pub fn", "src/"], &out, budget);
        let names: Vec<String> = files.into_iter().map(|f| f.0).collect();
        check_reachable(&names, &v, true)?;
    }

    /// apt: every upgradable package is named, or under a prefix printed with
    /// its count.
    #[test]
    fn every_upgradable_package_is_reachable(
        names in prop::collection::vec((package(), any::<bool>()), 10..300),
        budget in 512usize..4096,
    ) {
        let mut seen = BTreeSet::new();
        let mut names: Vec<(String, bool)> =
            names.into_iter().filter(|(n, _)| seen.insert(n.clone())).collect();
        names.sort();
        names[0].1 = true;
        let mut out = String::from("Listing...\n");
        for (n, up) in &names {
            out.push_str(&format!("{n}/stable,now 1.2.3-1 amd64 [installed"));
            out.push_str(if *up { ",upgradable to: 1.2.4-1]\n" } else { "]\n" });
        }
        let v = view_of(&["apt", "list", "--installed"], &out, budget);
        let upgradable: Vec<String> =
            names.into_iter().filter(|n| n.1).map(|n| n.0).collect();
        check_reachable(&upgradable, &v, true)?;
        // `unlisted=` counts the packages the digest does not name; one that
        // is named without its versions is not one of them.
        let s = said(&v);
        let unnamed = upgradable.iter().filter(|n| !s.named.contains(*n)).count();
        prop_assert_eq!(s.unlisted, unnamed, "unlisted= is not the packages left unnamed:\n{}", v);
    }

    /// pip list: every package is named, or under a prefix printed with its
    /// count.
    #[test]
    fn every_package_pip_listed_is_reachable(
        names in prop::collection::vec(package(), 10..300),
        budget in 512usize..4096,
    ) {
        let mut names = distinct(names);
        names.sort();
        let width = names.iter().map(String::len).max().unwrap_or(0).max(7) + 1;
        let mut out = format!("{:<width$}Version\n{} -------\n", "Package", "-".repeat(width - 1));
        for (i, n) in names.iter().enumerate() {
            out.push_str(&format!("{n:<width$}{}.{}.0\n", i % 7, i % 13));
        }
        let v = view_of(&["pip", "list"], &out, budget);
        check_reachable(&names, &v, true)?;
    }

    /// git status: every file of every section is named, or under a directory
    /// printed with its count.
    #[test]
    fn every_file_git_status_lists_is_reachable(
        changed in prop::collection::vec(path(), 1..150),
        untracked in prop::collection::vec(path(), 1..250),
        budget in 512usize..4096,
    ) {
        let changed = distinct(changed);
        // Each section under a top directory of its own, so a group's count is
        // of one section's files.
        let untracked: Vec<String> =
            distinct(untracked).into_iter().map(|p| p.replacen("src/", "build/", 1)).collect();
        let mut out = String::from("On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\n");
        for p in &changed {
            out.push_str(&format!("\tmodified:   {p}\n"));
        }
        out.push_str("\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n");
        for p in &untracked {
            out.push_str(&format!("\t{p}\n"));
        }
        out.push_str("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
        let v = view_of(&["git", "status"], &out, budget);
        let all: Vec<String> = changed.into_iter().chain(untracked).collect();
        check_reachable(&all, &v, true)?;
    }

    /// find: every path is named, or under a directory the view prints. (find
    /// walks a directory at a time: its files come together.)
    #[test]
    fn every_path_find_printed_is_reachable(
        dirs in prop::collection::vec((path(), prop::collection::vec("[a-z]{1,8}\\.[a-z]{1,3}", 2..12)), 2..40),
        budget in 512usize..4096,
    ) {
        let paths: Vec<String> = dirs
            .into_iter()
            .flat_map(|(dir, files)| {
                let dir = dir.replace('.', "_");
                files.into_iter().map(move |f| format!("./{dir}/{f}"))
            })
            .collect();
        let paths = distinct(paths);
        let out: String = paths.iter().map(|p| format!("{p}\n")).collect();
        let v = view_of(&["find", "."], &out, budget);
        check_reachable(&paths, &v, false)?;
    }
}

/// The monorepo grep of issue 29: 334 matches in 323 files, the one the task
/// was about far past the first fifty. The view named 46 files and left the
/// rest, that one among them, to `unlisted=277`.
#[test]
fn a_monorepo_grep_names_the_service_past_the_first_fifty_files() {
    let mut out = String::new();
    for pkg in [
        "auth",
        "billing",
        "catalog",
        "gateway",
        "inventory",
        "search",
    ] {
        for i in 0..50 {
            out.push_str(&format!(
                "packages/{pkg}/src/handlers/handler_{i:03}.ts:12:  const client = createClient(config.{pkg});\n"
            ));
        }
    }
    for i in 0..22 {
        out.push_str(&format!(
            "services/ledger/src/entry_{i:02}.ts:8:  const client = createClient(config.ledger);\n"
        ));
    }
    out.push_str("services/ledger/src/reconcile.ts:41:  const client = createClient(config.ledger, { retries: 0 });\n");
    for k in 0..11 {
        out.push_str(&format!(
            "services/ledger/src/reconcile.ts:{}:  client.retry({k});\n",
            50 + k
        ));
    }
    let v = view_of(&["grep", "-rn", "createClient", "."], &out, 4096);
    assert!(
        said(&v).named.contains("services/ledger/src/reconcile.ts"),
        "the file is not named:\n{v}"
    );
    assert!(
        v.contains("packages/auth/src/handlers/handler_{000..049}.ts"),
        "{v}"
    );
}

/// `apt list --installed` with 132 upgradable packages: the view kept the
/// first 83 in order and dropped the rest, `openssl` among them.
#[test]
fn apt_names_every_upgradable_package_even_late_in_the_alphabet() {
    let mut out = String::from("Listing...\n");
    let mut names: Vec<String> = (0..125)
        .map(|i| format!("libgnome-desktop-component{i:03}"))
        .collect();
    names.extend(
        [
            "openssl",
            "openssh-client",
            "python3-yaml",
            "tzdata",
            "vim",
            "xz-utils",
            "zlib1g",
        ]
        .map(String::from),
    );
    for n in &names {
        out.push_str(&format!(
            "{n}/jammy-updates,now 3.0.2-0ubuntu1.10 amd64 [installed,upgradable to: 3.0.2-0ubuntu1.15]\n"
        ));
    }
    let v = view_of(&["apt", "list", "--installed"], &out, 4096);
    for n in ["openssl", "openssh-client", "tzdata", "zlib1g"] {
        assert!(v.contains(n), "{n} dropped:\n{v}");
    }
}

/// An upgradable package's line gives up the version it comes from before the
/// one it goes to: when every line whole does not fit, each still says where
/// its package goes.
#[test]
fn apt_keeps_each_new_version_before_it_drops_the_old() {
    let mut out = String::from("Listing...\n");
    let names: Vec<String> = (0..90).map(|i| format!("libpkg{i:03}-bin")).collect();
    for (i, n) in names.iter().enumerate() {
        out.push_str(&format!(
            "{n}/stable-security,now 1.2.{i}-4+deb12u5 amd64 [installed,upgradable to: 1.2.{i}-4+deb12u6]\n"
        ));
    }
    let v = view_of(&["apt", "list", "--installed"], &out, 4096);
    for (i, n) in names.iter().enumerate() {
        let line = v
            .lines()
            .find(|l| l.starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("{n} not on a line of its own:\n{v}"));
        assert!(
            line.contains(&format!("1.2.{i}-4+deb12u6")),
            "{n} lost its new version: {line}\n{v}"
        );
    }
}

/// Level 1 showed a digest's first twenty lines and `… 281 more digest
/// lines`: a 300-file grep named nineteen files. It fits the same list by the
/// ladder into the bytes those lines take instead, so every file is named or
/// under a group with its count.
#[test]
fn level_one_fits_a_300_item_digest_instead_of_cutting_it() {
    let dirs = [
        "services/billing",
        "services/ledger",
        "services/web/api",
        "tools",
        "lib/core",
        "lib/util",
        "docs",
    ];
    let kinds = ["alpha", "beta", "gamma", "delta"];
    let mut out = String::new();
    let mut files = Vec::new();
    for i in 0..300 {
        let f = format!("{}/mod_{}{i}.py", dirs[i * 7 % dirs.len()], kinds[i % 4]);
        out.push_str(&format!("{f}:{}:    # TODO handle retry {i}\n", i * 3 + 1));
        files.push(f);
    }
    let v = view_at(&["grep", "-rn", "TODO", "."], &out, 4096, Level::One);
    assert!(!v.contains("more digest lines"), "{v}");
    check_reachable(&files, &v, true).expect("every file reachable");
    let two = view_of(&["grep", "-rn", "TODO", "."], &out, 4096);
    assert!(v.len() < two.len() / 2, "level 1 is not smaller:\n{v}");
    // And 300 upgradable packages.
    let mut out = String::from("Listing...\n");
    let names: Vec<String> = (0..300)
        .map(|i| {
            format!(
                "{}-{}{i}",
                ["lib", "python3", "node", "golang"][i % 4],
                kinds[i % 3]
            )
        })
        .collect();
    for n in &names {
        out.push_str(&format!(
            "{n}/stable,now 1.2.3-1 amd64 [installed,upgradable to: 1.2.4-1]\n"
        ));
    }
    let v = view_at(&["apt", "list", "--installed"], &out, 4096, Level::One);
    assert!(!v.contains("more digest lines"), "{v}");
    check_reachable(&names, &v, true).expect("every package reachable");
}

/// 400 files of mixed names in one directory, and a subdirectory: names
/// that count up, names sharing a word, and names alone.
fn mixed_dir() -> Vec<String> {
    let words = [
        "alpha", "bravo", "config", "daemon", "engine", "filter", "gateway", "handler", "index",
        "journal", "kernel", "ledger", "mailer", "notify", "orders", "parser", "queue",
    ];
    let mut names = BTreeSet::new();
    let mut k = 0usize;
    while names.len() < 400 {
        let w = words[k % words.len()];
        let v = words[(k * 7 + 3) % words.len()];
        names.insert(match k % 5 {
            0 => format!("{w}_{:03}.json", k % 41),
            1 => format!("{w}-{v}.py"),
            2 => format!("test_{w}_{v}.py"),
            3 => format!("{}{}.md", ["README", "NOTES", "Makefile"][k % 3], k % 97),
            _ => format!("{v}{w}.{}", ["cfg", "txt"][k % 2]),
        });
        k += 1;
    }
    names.into_iter().collect()
}

/// What an `ls` view names: every word, less a size `(1234)`, a run's sizes
/// and a `*`, brace-expanded; and its groups, `alpha-* (12 files)`.
fn ls_said(view: &str) -> (BTreeSet<String>, Vec<(String, usize)>) {
    let mut named = BTreeSet::new();
    let mut groups = Vec::new();
    for line in view.lines().filter(|l| !l.starts_with("[lens: ")) {
        let words: Vec<&str> = line
            .split(' ')
            .map(|w| w.trim_end_matches(','))
            .filter(|w| !w.is_empty())
            .collect();
        for (i, w) in words.iter().enumerate() {
            let w = match w.rfind('(') {
                Some(k) if k > 0 => &w[..k],
                _ => w,
            };
            let w = w.trim_end_matches(['*', ':']);
            for n in expand(w) {
                named.insert(n);
            }
            let count = words
                .get(i + 1)
                .and_then(|c| c.strip_prefix('('))
                .and_then(|c| c.parse().ok());
            if let (Some(n), true) = (count, w.len() < words[i].len() || words[i].ends_with('*')) {
                groups.push((words[i].trim_end_matches('*').to_string(), n));
            }
        }
    }
    (named, groups)
}

/// `ls -la` and `ls -R` of a directory of 400 files: the view said a prefix
/// of the names and `… +217`. Every file is named now, or falls under a
/// group that prints its prefix and counts it.
#[test]
fn ls_names_every_file_of_a_large_directory_or_groups_it() {
    let names = mixed_dir();
    let mut la = String::from("total 1640\ndrwxr-xr-x 3 ada ada 12288 Feb  3 10:00 .\ndrwxr-xr-x 9 ada ada  4096 Feb  3 10:00 ..\ndrwxr-xr-x 2 ada ada  4096 Feb  3 10:00 sub\n");
    for (i, n) in names.iter().enumerate() {
        la.push_str(&format!(
            "-rw-r--r-- 1 ada ada {:>5} Feb  3 10:00 {n}\n",
            (i * 7919) % 5000 + 10
        ));
    }
    let mut r = String::from(".:\n");
    for n in names.iter().chain(["sub".to_string()].iter()) {
        r.push_str(&format!("{n}\n"));
    }
    r.push_str("\n./sub:\n");
    let subs: Vec<String> = (0..20).map(|i| format!("part{i}.dat")).collect();
    for n in &subs {
        r.push_str(&format!("{n}\n"));
    }
    for (argv, out, want) in [
        (&["ls", "-la"][..], &la, names.clone()),
        (
            &["ls", "-R"][..],
            &r,
            names.iter().chain(&subs).cloned().collect(),
        ),
    ] {
        let v = view_of(argv, out, 4096);
        assert!(!v.contains("… +"), "a prefix and a count:\n{v}");
        let (named, groups) = ls_said(&v);
        for n in &want {
            let under = groups.iter().any(|(p, _)| n.starts_with(p.as_str()));
            assert!(named.contains(n) || under, "{n} unreachable:\n{v}");
        }
        let grouped: usize = groups.iter().map(|g| g.1).sum();
        let unnamed = want.iter().filter(|n| !named.contains(*n)).count();
        assert!(
            grouped >= unnamed,
            "{grouped} grouped, {unnamed} unnamed:\n{v}"
        );
    }
}
