//! What a view keeps: bytes, the needle, and the distinct names of the raw output.

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Distinct names in the raw output, in first-seen order.
pub fn names(raw: &str, pattern: &Regex) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    pattern
        .captures_iter(raw)
        .filter_map(|c| c.get(1).map(|m| m.as_str().to_string()))
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

/// True when the view holds `name` as printed, or, for a path, recoverably: its
/// directory (with the slash) and its last part as a word on one line, as a listing
/// grouped by directory prints it (`./app/billing/ invoice.py tax.py`), or inside
/// a numbered range in the shell's brace form that expands to it
/// (`frame_{001..150}.snap` holds `frame_007.snap`). The same test for every tool.
pub fn name_kept(view: &str, name: &str) -> bool {
    if in_line(view, name) {
        return true;
    }
    // Ranges: each line holding one is tried with the range expanded to the one
    // number the name could be.
    for line in view.lines().filter(|l| l.contains("..")) {
        for c in RANGE.captures_iter(line) {
            let (whole, pre, a, b, suf) = (&c[0], &c[1], &c[2], &c[3], &c[4]);
            let (Ok(lo), Ok(hi)) = (a.parse::<u64>(), b.parse::<u64>()) else {
                continue;
            };
            let width = if a.starts_with('0') && a.len() > 1 {
                a.len()
            } else {
                0
            };
            // The number in the name sits where the range does: after `pre`.
            let mut from = 0;
            while let Some(k) = name[from..].find(pre).map(|k| k + from) {
                let rest = &name[k + pre.len()..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                from = k + 1;
                if digits == 0 || !rest[digits..].starts_with(suf) {
                    continue;
                }
                let Ok(n) = rest[..digits].parse::<u64>() else {
                    continue;
                };
                let text = format!("{pre}{n:0width$}{suf}");
                if n >= lo && n <= hi && rest[..digits].len() == format!("{n:0width$}").len() {
                    let expanded = line.replacen(whole, &text, 1);
                    if in_line(&expanded, name) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// `pre{a..b}suf`, a word of the shell's brace form.
static RANGE: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
    Regex::new(r"([^\s{},]*)\{(\d+)\.\.(\d+)\}([^\s{},]*)").expect("compiles")
});

fn in_line(view: &str, name: &str) -> bool {
    if view.contains(name) {
        return true;
    }
    let Some((dir, base)) = name.trim_end_matches('/').rsplit_once('/') else {
        return false;
    };
    let dir = format!("{dir}/");
    view.lines().any(|l| {
        l.contains(&dir)
            && l.split_whitespace()
                .any(|t| t.trim_end_matches([',', ';']).trim_end_matches('/') == base)
    })
}

/// How many of `names` the view still holds.
pub fn names_kept(view: &str, names: &[String]) -> usize {
    names.iter().filter(|n| name_kept(view, n)).count()
}

/// The line a command was run for: a regex matching its information on one line,
/// or a name (a path) that must be recoverable from the view.
#[derive(Debug, Clone)]
pub enum Needle {
    /// Matched against the view's text.
    Pattern(Regex),
    /// Checked like a name.
    Name(String),
}

impl Needle {
    /// True when the view holds the needle.
    pub fn kept(&self, view: &str) -> bool {
        match self {
            Needle::Pattern(r) => r.is_match(view),
            Needle::Name(n) => name_kept(view, n),
        }
    }

    /// The raw line that holds it, for the floor.
    pub fn line<'a>(&self, raw: &'a str) -> Option<&'a str> {
        raw.lines().find(|l| self.kept(l))
    }

    /// As declared, for messages.
    pub fn describe(&self) -> String {
        match self {
            Needle::Pattern(r) => format!("/{}/", r.as_str()),
            Needle::Name(n) => format!("name {n:?}"),
        }
    }
}

/// One arm's measurement.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Measure {
    /// Bytes of stdout and stderr together.
    pub bytes: usize,
    /// Share of the raw bytes removed, in percent (negative when larger).
    pub removed_pct: f64,
    /// Whether the needle is in the view.
    pub needle: bool,
    /// Distinct raw names the view still holds.
    pub names_kept: usize,
    /// Distinct names in the raw output.
    pub names_total: usize,
    /// The arm's exit code.
    pub exit: i32,
    /// Whether it equals the raw command's.
    pub exit_equal: bool,
}

/// Measures a view against the raw output.
pub fn measure(
    view: &[u8],
    exit: i32,
    raw_bytes: usize,
    raw_exit: i32,
    needle: &Needle,
    names: &[String],
) -> Measure {
    let text = String::from_utf8_lossy(view);
    let removed = if raw_bytes == 0 {
        0.0
    } else {
        100.0 * (raw_bytes as f64 - view.len() as f64) / raw_bytes as f64
    };
    Measure {
        bytes: view.len(),
        removed_pct: (removed * 10.0).round() / 10.0,
        needle: needle.kept(&text),
        names_kept: names_kept(&text, names),
        names_total: names.len(),
        exit,
        exit_equal: exit == raw_exit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_names_in_order() {
        let re = Regex::new(r"(?m)^(\S+\.py):\d+").unwrap();
        let raw = "a.py:1: x\nb.py:2: y\na.py:9: z\n  c.py:1 indented\n";
        assert_eq!(names(raw, &re), vec!["a.py", "b.py"]);
    }

    #[test]
    fn kept_names_and_needle() {
        let n = vec!["a.py".to_string(), "b.py".to_string(), "c.py".to_string()];
        assert_eq!(names_kept("F401 (3): a.py:1, c.py:4", &n), 2);
        let needle = Needle::Pattern(Regex::new(r"F401").unwrap());
        assert!(needle.kept("x F401 y"));
        assert!(!needle.kept("x F40 y"));
        let path = Needle::Name("app/payments/refund.py".into());
        assert!(path.kept("./app/payments/ card.py refund.py\n"));
        assert!(!path.kept("./app/payments/ card.py\n./app/billing/ refund.py\n"));
    }

    #[test]
    fn a_name_inside_a_numbered_range_is_kept() {
        let view = "untracked: Cargo.lock, tests/frame_case_{001..150}.snap.new, notes/\n./src/ m{7..9}.rs x.rs\n";
        for name in [
            "tests/frame_case_001.snap.new",
            "tests/frame_case_077.snap.new",
            "tests/frame_case_150.snap.new",
            "src/m8.rs",
            "src/x.rs",
        ] {
            assert!(name_kept(view, name), "{name}");
        }
        // Out of the range, another width, another suffix or directory: not kept.
        for name in [
            "tests/frame_case_151.snap.new",
            "tests/frame_case_77.snap.new",
            "tests/frame_case_007.snap",
            "other/frame_case_007.snap.new",
            "src/m10.rs",
            "src/m08.rs",
        ] {
            assert!(!name_kept(view, name), "{name}");
        }
    }

    #[test]
    fn grouped_paths_are_recoverable() {
        let n = vec![
            "app/util/money.py".to_string(),
            "app/util/dates.py".to_string(),
            "lib/x.py".to_string(),
        ];
        assert_eq!(
            names_kept(
                "./app/util/ __init__.py money.py, dates.py\nlib/ y.py\n",
                &n
            ),
            2
        );
        assert!(name_kept(
            "-rw-r--r-- 1 a b 3 Jan 1 2026 README.md",
            "README.md"
        ));
    }

    #[test]
    fn measures_against_raw() {
        let needle = Needle::Pattern(Regex::new("boom").unwrap());
        let m = measure(
            b"error: boom\n",
            3,
            1000,
            3,
            &needle,
            &["boom".into(), "x".into()],
        );
        assert_eq!(m.bytes, 12);
        assert_eq!(m.removed_pct, 98.8);
        assert!(m.needle && m.exit_equal);
        assert_eq!((m.names_kept, m.names_total), (1, 2));
        let bigger = measure(&[b'x'; 1100], 0, 1000, 3, &needle, &[]);
        assert_eq!(bigger.removed_pct, -10.0);
        assert!(!bigger.exit_equal);
    }
}
