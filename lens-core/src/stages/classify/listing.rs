//! Listings: `ls -l`, `find`, and `grep -n`/`-rn`. Every line is a real, distinct
//! name, so nothing can go; what can is the repetition around them. ls -l becomes the
//! names (sizes kept, `*` for executables, `-> target` for links; names counting up,
//! as rotated logs do, one brace range with its sizes' span); find becomes one
//! line per directory; grep one line per file, with the text every match shares
//! printed once (all but what the pattern matched, which stays on every item).
//! Each name is printed exactly as the tool printed it.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::Found;
use crate::digest::{brace_range, factor, number_run_spans, Body, Digest, Entry, List};
use crate::doc::{Class, Doc, Stream};
use crate::stages::shorten::Nouns;

static LS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([-dlcbps])([-rwxsStT]{9})\S*\s+\d+\s+\S+\s+\S+\s+([\d,]+(?:\.\d+)?[KMGT]?)\s+\w+\s+\d+\s+[\d:]+\s+(.+)$")
        .expect("compiles")
});
/// `apt list`: `name/suite version arch [state]`.
static APT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?)/(\S+) (\S+) (\S+)(?: \[([^\]]+)\])?$").expect("compiles")
});
static GREP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([^\s:][^:]*?):(\d+):(.*)$").expect("compiles"));

/// Two or more spaces: what separates a table's columns.
static COLUMNS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" {2,}").expect("compiles"));
/// A ruler's runs of dashes, one per column.
static RULER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"-+").expect("compiles"));

/// Listings shorter than this stay as printed.
const MIN_LINES: usize = 8;

/// Adds a digest when the whole of `range` is one kind of listing.
pub fn find(doc: &Doc, out: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let texts: Vec<&str> = doc.lines[range.clone()]
        .iter()
        .filter(|l| l.class != Class::Blank)
        .map(|l| l.text.as_ref())
        .collect();
    if texts.len() < MIN_LINES {
        return;
    }
    let body = if let Some(b) = ls(&texts) {
        b
    } else if let Some(b) = ls_names(&texts, doc.argv) {
        b
    } else if let Some(b) = apt(&texts) {
        b
    } else if let Some(b) = grep(&texts, searched(doc.argv).as_ref()) {
        b
    } else if let Some(b) = table(&texts) {
        b
    } else if let Some(b) = paths(&texts) {
        b
    } else {
        return;
    };
    out.digests.push(Digest {
        stream,
        start: range.start,
        end: range.end,
        failure: false,
        body,
        needs: Vec::new(),
        room: None,
    });
}

/// `apt list --installed` (or `--upgradable`): what an agent reads it for is what
/// can be upgraded, so those lines stay (`name version -> new`), every one,
/// with the count of the rest, which the stored output holds. A listing with
/// nothing upgradable is left to the other shapes.
fn apt(texts: &[&str]) -> Option<Body> {
    let rows: Vec<&str> = texts
        .iter()
        .copied()
        .filter(|t| *t != "Listing..." && !t.starts_with("WARNING: apt does not have"))
        .collect();
    let parsed: Vec<regex::Captures> = rows.iter().filter_map(|t| APT.captures(t)).collect();
    if parsed.len() < MIN_LINES || parsed.len() * 10 < rows.len() * 9 {
        return None;
    }
    // A package's name is its entry's key, the versions its one item: cut,
    // the versions go before any name does.
    let entry = |name: &str, from: &str, to: &str| Entry {
        key: name.to_string(),
        items: vec![format!("{from} -> {to}")],
    };
    let mut upgradable = Vec::new();
    for c in &parsed {
        let state = c.get(5).map_or("", |m| m.as_str());
        if let Some(to) = state.split("upgradable to: ").nth(1) {
            upgradable.push(entry(&c[1], &c[3], to.trim()));
        } else if let Some(from) = state.strip_prefix("upgradable from: ") {
            upgradable.push(entry(&c[1], from.trim(), &c[3]));
        }
    }
    if upgradable.is_empty() {
        return None;
    }
    Some(Body::List(List {
        head: vec![format!(
            "{} packages listed, {} upgradable:",
            parsed.len(),
            upgradable.len()
        )],
        template: None,
        entries: upgradable,
        nouns: Nouns {
            item: ("package", "packages"),
            name: None,
            sep: "-",
        },
        within: false,
    }))
}

/// A table aligned in columns under a header (`pip list`, `kubectl get`, `docker
/// ps`): each row with its padding cut to two spaces between columns, the ruler
/// under the header (`------- -----`) left out. When a cell is empty (`docker
/// ps` without ports) the columns are joined by ` | ` instead, so which column a
/// value is in still reads. A value that spills into the next column leaves the
/// table as printed.
fn table(texts: &[&str]) -> Option<Body> {
    let ruler = |t: &str| t.contains('-') && t.chars().all(|c| c == '-' || c == ' ');
    let has_ruler = texts.len() > 1 && ruler(texts[1]);
    // Where each column starts: at each run of the ruler's dashes, else at each
    // header cell.
    let starts: Vec<usize> = if has_ruler {
        RULER.find_iter(texts[1]).map(|m| m.start()).collect()
    } else {
        std::iter::once(0)
            .chain(COLUMNS.find_iter(texts[0]).map(|m| m.end()))
            .collect()
    };
    if starts.len() < 2 || starts[0] != 0 {
        return None;
    }
    // A row's cells, each trimmed (empty past the row's end); `None` when a value
    // spills into the next column.
    let cells = |t: &str| -> Option<Vec<String>> {
        if !t.is_ascii() || t.starts_with(' ') {
            return None;
        }
        let b = t.as_bytes();
        let mut out = Vec::with_capacity(starts.len());
        for (k, &a) in starts.iter().enumerate() {
            if a >= t.len() {
                out.push(String::new());
                continue;
            }
            if k > 0 && b[a - 1] != b' ' {
                return None;
            }
            let z = starts.get(k + 1).copied().unwrap_or(t.len()).min(t.len());
            out.push(t[a..z].trim().to_string());
        }
        Some(out)
    };
    let header = cells(texts[0])?;
    let word = |f: &String| {
        f.starts_with(|c: char| c.is_ascii_alphabetic())
            && f.chars()
                .all(|c| c.is_ascii_alphanumeric() || " _-().%".contains(c))
    };
    if !header.iter().all(word) {
        return None;
    }
    let rows = &texts[1 + usize::from(has_ruler)..];
    if rows.len() < MIN_LINES {
        return None;
    }
    let rows: Vec<Vec<String>> = rows.iter().map(|r| cells(r)).collect::<Option<_>>()?;
    let sep = if rows.iter().flatten().any(String::is_empty) {
        " | "
    } else {
        "  "
    };
    // A row's first cell is its name (a package, a pod, a container): the
    // entry's key, the rest of the row its one item, so a cut shortens rows
    // before it leaves a name out.
    let entries = rows
        .iter()
        .map(|r| Entry {
            key: format!("{}{}", r[0], &sep[..sep.len() - 1]),
            items: vec![r[1..].join(sep)],
        })
        .collect();
    Some(Body::List(List {
        head: vec![header.join(sep)],
        template: None,
        entries,
        nouns: Nouns {
            item: ("row", "rows"),
            name: None,
            sep: "-",
        },
        within: false,
    }))
}

/// `-rw-r--r--`, `drwxr-xr-x`: the mode column `ls -l` starts every entry with.
fn looks_like_mode(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() > 10 && b"-dlcbps".contains(&b[0]) && b[1..10].iter().all(|c| b"rwxsStT-".contains(c))
}

/// `path:12:` at the start of a line, and not a clock (`2024-01-01 12:59:59`).
fn looks_like_grep(t: &str) -> bool {
    !super::log::starts_with_clock(t)
        && t.split_once(':').is_some_and(|(path, rest)| {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0
                && rest.as_bytes().get(digits) == Some(&b':')
                && !super::log::is_clock_location(path)
        })
}

/// `ls -l`, of one directory or several (each under its `dir:` header).
fn ls(texts: &[&str]) -> Option<Body> {
    let mut body = texts
        .iter()
        .skip_while(|t| t.starts_with("total ") || (t.ends_with(':') && !looks_like_mode(t)))
        .peekable();
    if !body.peek().is_some_and(|t| looks_like_mode(t)) {
        return None;
    }
    let mut entries = Vec::new();
    let mut section: Option<String> = texts
        .first()
        .filter(|t| t.ends_with(':') && !looks_like_mode(t))
        .map(|t| t.to_string());
    let (mut dirs, mut files, mut links) = (Vec::new(), Vec::new(), Vec::new());
    for t in body {
        if t.starts_with("total ") {
            continue;
        }
        if t.ends_with(':') && !looks_like_mode(t) {
            flush(&mut entries, &section, &mut dirs, &mut files, &mut links);
            section = Some(t.to_string());
            continue;
        }
        if !looks_like_mode(t) {
            return None;
        }
        let c = LS.captures(t)?;
        let name = c[4].to_string();
        match &c[1] {
            "d" => dirs.push(format!("{name}/")),
            "l" => links.push(name),
            _ => files.push(LsFile {
                name,
                exec: c[2].contains('x'),
                size: c[3].to_string(),
            }),
        }
    }
    flush(&mut entries, &section, &mut dirs, &mut files, &mut links);
    Some(names_list(entries))
}

/// A directory's names as a list that, cut, names each of them or counts it
/// under a group (`alpha-* (12 names)`), never a prefix and `… +N`.
fn names_list(entries: Vec<Entry>) -> Body {
    Body::List(List {
        head: Vec::new(),
        template: None,
        entries,
        nouns: Nouns {
            item: ("name", "names"),
            name: None,
            sep: "-_",
        },
        within: true,
    })
}

/// `ls` without `-l` (`ls`, `ls -R`, `ls -a`): a name per line, each
/// directory's under its `dir:` header. Only when `argv` ran `ls`: a list of
/// bare words is no shape of its own.
fn ls_names(texts: &[&str], argv: &[String]) -> Option<Body> {
    let name = argv.first()?.rsplit('/').next()?;
    if name != "ls" || texts.iter().any(|t| looks_like_mode(t)) {
        return None;
    }
    let header = |t: &str| t.ends_with(':') && texts.len() > 1;
    let mut entries: Vec<Entry> = Vec::new();
    let mut key = String::from("names:");
    let mut items: Vec<String> = Vec::new();
    for t in texts {
        if header(t) {
            if !items.is_empty() {
                entries.push(Entry {
                    key: std::mem::take(&mut key),
                    items: std::mem::take(&mut items),
                });
            }
            key = t.to_string();
            continue;
        }
        items.push(t.to_string());
    }
    if !items.is_empty() {
        entries.push(Entry { key, items });
    }
    (!entries.is_empty()).then(|| names_list(entries))
}

/// One file of an `ls -l` listing.
struct LsFile {
    name: String,
    exec: bool,
    /// As printed: `4096`, `1,234`, `4.0K`.
    size: String,
}

/// A size as `ls` prints it (`4096`, `1,234`, `4.0K`, `50M`), in bytes.
fn ls_bytes(size: &str) -> Option<f64> {
    let size = size.replace(',', "");
    let (number, unit) = match size.as_bytes().last()? {
        b'K' => (&size[..size.len() - 1], 1024f64),
        b'M' => (&size[..size.len() - 1], 1024f64.powi(2)),
        b'G' => (&size[..size.len() - 1], 1024f64.powi(3)),
        b'T' => (&size[..size.len() - 1], 1024f64.powi(4)),
        _ => (&size[..], 1.0),
    };
    number.parse::<f64>().ok().map(|n| n * unit)
}

/// A directory's files as digest items: `name(size)`, `name*(size)` for an
/// executable. Three or more names in a row that count up (a log rotated daily,
/// `api-2025-06-{15..30}.log.gz`, or frames `f_{001..150}.png`) are one brace range
/// that expands back to them, with the span of their sizes: `(4096-55331)`, or
/// `(12 each)`. A file of ten times the median size or more is never folded into
/// a run: it stays a name with its own size, the outlier a cut keeps
/// (`digest::unusual`), and the run around it is two.
fn file_items(files: &[LsFile]) -> Vec<String> {
    let bytes: Vec<Option<f64>> = files.iter().map(|f| ls_bytes(&f.size)).collect();
    let mut sorted: Vec<f64> = bytes.iter().flatten().copied().collect();
    sorted.sort_by(f64::total_cmp);
    let median = (sorted.len() >= 8).then(|| sorted[sorted.len() / 2].max(1.0));
    let outlier = |k: usize| median.is_some_and(|m| bytes[k].is_some_and(|b| b >= m * 10.0));
    let single = |f: &LsFile| {
        let star = if f.exec { "*" } else { "" };
        format!("{}{star}({})", f.name, f.size)
    };
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    let mut out = Vec::with_capacity(files.len());
    for span in number_run_spans(&names) {
        // A run goes on only while it holds no outlier and one kind of file.
        let mut k = span.start;
        while k < span.end {
            let mut j = k + 1;
            while j < span.end
                && !outlier(k)
                && !outlier(j)
                && files[j].exec == files[k].exec
                && bytes[j].is_some() == bytes[k].is_some()
            {
                j += 1;
            }
            if j - k < 3 {
                out.extend(files[k..j].iter().map(single));
            } else {
                let run = &files[k..j];
                let by_size = |a: &&LsFile, b: &&LsFile| {
                    ls_bytes(&a.size)
                        .unwrap_or(0.0)
                        .total_cmp(&ls_bytes(&b.size).unwrap_or(0.0))
                };
                let small = run.iter().min_by(by_size).expect("a run");
                let large = run.iter().max_by(by_size).expect("a run");
                let star = if run[0].exec { "*" } else { "" };
                let sizes = if small.size == large.size {
                    format!("{} each", small.size)
                } else {
                    format!("{}-{}", small.size, large.size)
                };
                out.push(format!(
                    "{}{star} ({sizes})",
                    brace_range(&run[0].name, &run[run.len() - 1].name)
                ));
            }
            k = j;
        }
    }
    out
}

/// One directory's entries, under its header when `ls` printed one.
fn flush(
    entries: &mut Vec<Entry>,
    section: &Option<String>,
    dirs: &mut Vec<String>,
    files: &mut Vec<LsFile>,
    links: &mut Vec<String>,
) {
    let key = |what: &str| match section {
        Some(dir) => format!("{dir} {what}"),
        None => what.to_string(),
    };
    let mut files = file_items(&std::mem::take(files));
    for (what, items) in [
        ("dirs:", dirs),
        ("files (bytes, * executable):", &mut files),
        ("links:", links),
    ] {
        if !items.is_empty() {
            entries.push(Entry {
                key: key(what),
                items: std::mem::take(items),
            });
        }
    }
}

/// The pattern a `grep`, `rg` or `git grep` command searched for, when its argv
/// gives it plainly (the first operand, or `-e PATTERN`), as a regex.
fn searched(argv: &[String]) -> Option<Regex> {
    let name = argv.first()?.rsplit('/').next()?;
    let args = match name {
        "grep" | "egrep" | "fgrep" | "rg" => &argv[1..],
        "git" if argv.get(1).map(String::as_str) == Some("grep") => &argv[2..],
        _ => return None,
    };
    let mut it = args.iter();
    let mut first = None;
    while let Some(a) = it.next() {
        if a == "-e" || a == "--regexp" {
            first = it.next().cloned();
            break;
        }
        if a == "--" {
            first = it.next().cloned();
            break;
        }
        if !a.starts_with('-') {
            first = Some(a.clone());
            break;
        }
    }
    let pattern = first?;
    let fixed = name == "fgrep" || args.iter().any(|a| a == "-F" || a == "--fixed-strings");
    if fixed {
        Regex::new(&regex::escape(&pattern)).ok()
    } else {
        Regex::new(&pattern).ok()
    }
}

/// `grep -n` output, one line per file. The text every match shares is printed
/// once, except the part `pattern` matched: that is what the search was for,
/// and it stays on every item.
fn grep(texts: &[&str], pattern: Option<&Regex>) -> Option<Body> {
    let mut order: Vec<String> = Vec::new();
    let mut by_file: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for t in texts {
        if !looks_like_grep(t) {
            return None;
        }
        let c = GREP.captures(t)?;
        let file = c[1].to_string();
        if !by_file.contains_key(&file) {
            order.push(file.clone());
        }
        by_file
            .entry(file)
            .or_default()
            .push((c[2].to_string(), c[3].to_string()));
    }
    let all: Vec<&str> = by_file
        .values()
        .flatten()
        .map(|(_, text)| text.trim())
        .collect();
    let (mut prefix, _, mut suffix) = factor(&all);
    if let Some(re) = pattern {
        // The shared text is cut back to leave the first match of every line.
        let spans: Option<Vec<(usize, usize)>> = all
            .iter()
            .map(|t| re.find(t).map(|m| (m.start(), t.len() - m.end())))
            .collect();
        if let Some(spans) = spans {
            let before = spans.iter().map(|s| s.0).min().unwrap_or(0);
            let after = spans.iter().map(|s| s.1).min().unwrap_or(0);
            let mut cut = before.min(prefix.len());
            while !prefix.is_char_boundary(cut) {
                cut -= 1;
            }
            prefix.truncate(cut);
            let mut keep = after.min(suffix.len());
            while !suffix.is_char_boundary(suffix.len() - keep) {
                keep -= 1;
            }
            suffix = suffix[suffix.len() - keep..].to_string();
        }
    }
    // Printing the shared text once pays only when it is longer than its marker.
    let template = (prefix.len() + suffix.len() >= 8).then(|| (prefix.clone(), suffix.clone()));
    let (pre, suf) = template
        .as_ref()
        .map_or((0, 0), |(p, s)| (p.len(), s.len()));
    let entries = order
        .into_iter()
        .map(|file| {
            let items = by_file[&file]
                .iter()
                .map(|(n, text)| {
                    let t = text.trim();
                    format!("{n}:{}", &t[pre..t.len() - suf])
                })
                .collect();
            Entry {
                key: format!("{file}:"),
                items,
            }
        })
        .collect();
    Some(Body::List(List {
        head: Vec::new(),
        template,
        entries,
        nouns: Nouns {
            item: ("file", "files"),
            name: Some(("match", "matches")),
            sep: "/",
        },
        within: false,
    }))
}

fn paths(texts: &[&str]) -> Option<Body> {
    let mut order: Vec<String> = Vec::new();
    let mut by_dir: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in texts {
        if t.contains(char::is_whitespace)
            || !t.contains('/') && texts.len() > 1 && !t.starts_with('.')
        {
            return None;
        }
        let (dir, name) = match t.trim_end_matches('/').rsplit_once('/') {
            Some((d, n)) => (format!("{d}/"), n.to_string()),
            None => ("./".to_string(), t.to_string()),
        };
        if !by_dir.contains_key(&dir) {
            order.push(dir.clone());
        }
        by_dir.entry(dir).or_default().push(name);
    }
    if by_dir.len() * 2 > texts.len() {
        return None;
    }
    let entries = order
        .into_iter()
        .map(|dir| Entry {
            items: by_dir[&dir].clone(),
            key: dir,
        })
        .collect();
    Some(Body::List(List {
        head: Vec::new(),
        template: None,
        entries,
        nouns: Nouns {
            item: ("dir", "dirs"),
            name: Some(("entry", "entries")),
            sep: "/",
        },
        within: false,
    }))
}

#[cfg(test)]
mod tests {
    use crate::stages::classify::testing;

    fn digest(text: &str) -> Vec<String> {
        testing::digest_lines(text)
    }

    #[test]
    fn ls_long() {
        let mut out = String::from("total 108\ndrwxr-xr-x  8 root root 4096 Jan  1  2026 .\ndrwxrwxrwt 10 root root 4096 Nov 30 07:48 ..\n");
        for (p, n) in [
            ("-rw-r--r--", "a.txt"),
            ("-rwxr-xr-x", "run.sh"),
            ("drwxr-xr-x", "src"),
            ("lrwxrwxrwx", "L -> a.txt"),
        ] {
            for i in 0..2 {
                out.push_str(&format!("{p}  1 root root   12 Jan  1  2026 {n}{i}\n"));
            }
        }
        let d = digest(&out);
        assert_eq!(d[0], "dirs: ./ ../ src0/ src1/");
        assert_eq!(
            d[1],
            "files (bytes, * executable): a.txt0(12) a.txt1(12) run.sh0*(12) run.sh1*(12)"
        );
        assert_eq!(d[2], "links: L -> a.txt0, L -> a.txt1");
    }

    /// `ls -la` of a log directory: `days` daily rotated logs per service from
    /// 2025-06-15, sizes varying, then `extra` lines as given.
    fn rotated_logs(days: u32, extra: &[&str]) -> String {
        let mut out = String::from("total 2456\ndrwxr-xr-x 2 root root 36864 Jan  1  2026 .\n");
        for service in ["api", "worker"] {
            for d in 0..days {
                let (m, day) = if d < 16 { (6, 15 + d) } else { (7, d - 15) };
                let size = 4096 + (d * 7919) % 50_000;
                out.push_str(&format!(
                    "-rw-r--r-- 1 root root {size} Jun 16  2025 {service}-2025-{m:02}-{day:02}.log.gz\n"
                ));
            }
        }
        for e in extra {
            out.push_str(e);
            out.push('\n');
        }
        out
    }

    #[test]
    fn ls_folds_names_that_count_up_into_ranges_with_their_sizes() {
        let out = rotated_logs(
            40,
            &[
                "-rw-r--r-- 1 root root 52428800 Dec 31  2025 core.worker.31337",
                "-rwxr-xr-x 1 root root 12 Jan  1  2026 run1.sh",
                "-rwxr-xr-x 1 root root 12 Jan  1  2026 run2.sh",
                "-rwxr-xr-x 1 root root 12 Jan  1  2026 run3.sh",
            ],
        );
        let d = digest(&out);
        assert_eq!(d[0], "dirs: ./");
        // A month is one range (the day is the name's last number), its sizes'
        // span beside it; the core dump keeps its own size.
        assert_eq!(
            d[1],
            "files (bytes, * executable): api-2025-06-{15..30}.log.gz (4096-51610), \
             api-2025-07-{01..24}.log.gz (4557-52071), \
             worker-2025-06-{15..30}.log.gz (4096-51610), \
             worker-2025-07-{01..24}.log.gz (4557-52071), \
             core.worker.31337(52428800), run{1..3}.sh* (12 each)"
        );
    }

    #[test]
    fn an_outlier_in_a_run_is_never_folded_into_it() {
        let mut out = rotated_logs(10, &[]);
        out = out.replacen(
            " 27853 Jun 16  2025 api-2025-06-18.log.gz",
            " 9999999999 Jun 16  2025 api-2025-06-18.log.gz",
            1,
        );
        let d = digest(&out);
        assert!(
            d[1].contains(
                "api-2025-06-{15..17}.log.gz (4096-19934), api-2025-06-18.log.gz(9999999999), \
                 api-2025-06-{19..24}.log.gz"
            ),
            "{d:?}"
        );
        // Two in a row are not a run; human sizes (`ls -lh`) span as printed.
        let out = "total 12\n-rw-r--r-- 1 root root 4.0K Jan  1  2026 a1.log\n-rw-r--r-- 1 root root 12K Jan  1  2026 a2.log\n-rw-r--r-- 1 root root 9.5K Jan  1  2026 a3.log\n-rw-r--r-- 1 root root 2.0K Jan  1  2026 b1\n-rw-r--r-- 1 root root 2.0K Jan  1  2026 b2\n-rw-r--r-- 1 root root 2.0K Jan  1  2026 c\n-rw-r--r-- 1 root root 2.0K Jan  1  2026 d\n-rw-r--r-- 1 root root 2.0K Jan  1  2026 e\n";
        assert_eq!(
            digest(out),
            ["files (bytes, * executable): a{1..3}.log (4.0K-12K), b1(2.0K), b2(2.0K), c(2.0K), d(2.0K), e(2.0K)"]
        );
    }

    #[test]
    fn ls_long_of_several_directories_keeps_each_under_its_header() {
        let out = "src:\ntotal 8\n-rw-r--r-- 1 root root 120 Jan  1  2026 a.rs\n-rw-r--r-- 1 root root 340 Jan  1  2026 b.rs\ndrwxr-xr-x 2 root root 4096 Jan  1  2026 util\n\ntests:\ntotal 4\n-rw-r--r-- 1 root root 99 Jan  1  2026 it.rs\n-rw-r--r-- 1 root root 12 Jan  1  2026 more.rs\n-rw-r--r-- 1 root root 13 Jan  1  2026 last.rs\n";
        assert_eq!(
            digest(out),
            [
                "src: dirs: util/",
                "src: files (bytes, * executable): a.rs(120) b.rs(340)",
                "tests: files (bytes, * executable): it.rs(99) more.rs(12) last.rs(13)",
            ]
        );
    }

    #[test]
    fn find_groups_by_directory() {
        let out = "./app/a.py\n./app/b.py\n./app/api/c.py\n./app/api/d.py\n./app/api/e.py\n./lib/f.py\n./lib/g.py\n./lib/h.py\n";
        assert_eq!(
            digest(out),
            vec![
                "./app/ a.py b.py",
                "./app/api/ c.py d.py e.py",
                "./lib/ f.py g.py h.py"
            ]
        );
    }

    /// `grep -rn "pub fn"` over three files of three functions each.
    fn nine_matches() -> String {
        let mut out = String::new();
        for (f, names) in [
            ("src/a.rs", ["load", "save", "list"]),
            ("src/b.rs", ["find", "drop", "keep"]),
            ("src/c.rs", ["one", "two", "six"]),
        ] {
            for (i, n) in names.iter().enumerate() {
                out.push_str(&format!(
                    "{f}:{}:pub fn {n}(db: &Db) -> u64 {{\n",
                    i * 10 + 1
                ));
            }
        }
        out
    }

    #[test]
    fn grep_groups_by_file_and_prints_shared_text_once() {
        let out = nine_matches();
        assert_eq!(
            digest(&out),
            vec![
                "each item below stands for: pub fn …(db: &Db) -> u64 {",
                "src/a.rs: 1:load 11:save 21:list",
                "src/b.rs: 1:find 11:drop 21:keep",
                "src/c.rs: 1:one 11:two 21:six",
            ]
        );
    }

    #[test]
    fn what_grep_searched_for_stays_on_every_item() {
        let out = nine_matches();
        let lines = testing::digest_lines_of(&["grep", "-rn", "pub fn", "src/"], &out);
        assert_eq!(lines[0], "each item below stands for: …(db: &Db) -> u64 {");
        assert_eq!(
            lines[1],
            "src/a.rs: 1:pub fn load, 11:pub fn save, 21:pub fn list"
        );
        // A regex pattern, and one matching at the end of the line.
        let lines = testing::digest_lines_of(&["rg", "-n", "fn \\w+"], &out);
        assert_eq!(
            lines[0],
            "each item below stands for: pub …(db: &Db) -> u64 {"
        );
        assert_eq!(lines[1], "src/a.rs: 1:fn load, 11:fn save, 21:fn list");
        let lines = testing::digest_lines_of(&["git", "grep", "-n", "-e", "u64 \\{"], &out);
        // (What is left shared, `pub fn `, is too short to print once.)
        assert_eq!(
            lines[0],
            "src/a.rs: 1:pub fn load(db: &Db) -> u64 {, 11:pub fn save(db: &Db) -> u64 {, 21:pub fn list(db: &Db) -> u64 {"
        );
        // A pattern that does not parse, or matches nowhere, changes nothing.
        let lines = testing::digest_lines_of(&["grep", "-n", "(("], &out);
        assert_eq!(lines[1], "src/a.rs: 1:load 11:save 21:list");
    }

    #[test]
    fn an_aligned_table_loses_its_padding_and_nothing_else() {
        let mut out = String::from(
            "Package                   Version\n------------------------- -----------\n",
        );
        for (n, v) in [
            ("annotated-types", "0.7.0"),
            ("attrs", "26.1.0"),
            ("black", "24.1.1"),
            ("click", "8.1.7"),
            ("idna", "3.6"),
            ("mypy", "1.13.0"),
            ("pip", "23.2.1"),
            ("ruff", "0.17.6"),
        ] {
            out.push_str(&format!("{n:<25} {v}\n"));
        }
        let lines = digest(&out);
        assert_eq!(lines[0], "Package  Version");
        assert_eq!(lines[1], "annotated-types  0.7.0");
        assert_eq!(lines.len(), 9);
        // kubectl's header, cells holding single spaces.
        let mut out =
            String::from("NAME                     READY   STATUS             RESTARTS      AGE\n");
        for i in 0..8 {
            out.push_str(&format!(
                "web-{i}                    1/1     Running            0             {i}d\n"
            ));
        }
        out.push_str("worker-0                 0/1     CrashLoopBackOff   5 (2m ago)    1d\n");
        let lines = digest(&out);
        assert_eq!(lines[0], "NAME  READY  STATUS  RESTARTS  AGE");
        assert_eq!(lines[9], "worker-0  0/1  CrashLoopBackOff  5 (2m ago)  1d");
        // An empty cell (docker ps without ports): columns joined by ` | `.
        let mut out = String::from("CONTAINER ID   IMAGE     STATUS    PORTS     NAMES\n");
        for i in 0..8 {
            out.push_str(&format!(
                "a1b2c3d4e5f{i}   nginx     Up 2h     80/tcp    web{i}\n"
            ));
        }
        out.push_str("a1b2c3d4e5f9   redis     Up 2h               cache\n");
        let lines = digest(&out);
        assert_eq!(lines[0], "CONTAINER ID | IMAGE | STATUS | PORTS | NAMES");
        assert_eq!(lines[9], "a1b2c3d4e5f9 | redis | Up 2h |  | cache");
        // A value spilling into the next column: as printed.
        out.push_str("a1b2c3d4e5fa   registry.example.com/x Up 2h   80/tcp    reg\n");
        assert!(digest(&out).is_empty());
    }

    #[test]
    fn prose_is_not_a_listing() {
        let out = "this is a sentence\n".repeat(10);
        assert!(digest(&out).is_empty());
    }
}
