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

/// How many of `names` the view still holds, as printed.
pub fn names_kept(view: &str, names: &[String]) -> usize {
    names.iter().filter(|n| view.contains(n.as_str())).count()
}

/// True when the view holds the needle.
pub fn needle_kept(view: &str, needle: &Regex) -> bool {
    needle.is_match(view)
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
    needle: &Regex,
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
        needle: needle_kept(&text, needle),
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
        let needle = Regex::new(r"F401").unwrap();
        assert!(needle_kept("x F401 y", &needle));
        assert!(!needle_kept("x F40 y", &needle));
    }

    #[test]
    fn measures_against_raw() {
        let needle = Regex::new("boom").unwrap();
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
