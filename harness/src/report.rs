//! The compare record (`results/compare.json`) and the markdown rendered from it.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::compare::CaseResult;
use crate::env::Machine;

/// Everything one compare run measured, and how.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct CompareResults {
    /// The command that produced this file.
    pub command: String,
    /// The git revision of the checkout.
    pub git_revision: String,
    /// When, in UTC.
    pub date: String,
    /// `replay`, `record` or `live`.
    pub mode: String,
    /// Where.
    pub machine: Machine,
    /// Every tool's version, as it prints it (recorded versions say so).
    pub tools: BTreeMap<String, String>,
    /// Per case.
    pub cases: Vec<CaseResult>,
    /// The microVM every case ran in (accelerator, image), when `--isolation vm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<crate::isolation::VmRecord>,
}

/// The arms in table order, with their column titles.
const COLUMNS: [(&str, &str); 4] = [
    ("lens-2", "Lens level 2"),
    ("lens-1", "Lens level 1"),
    ("lens-0", "Lens level 0"),
    ("rtk", "rtk"),
];

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn cell(case: &CaseResult, arm: &str) -> String {
    let Some(a) = case.arms.iter().find(|a| a.name == arm) else {
        return "n/a".into();
    };
    let Some(m) = &a.measure else {
        return "not claimed".into();
    };
    let mut s = format!(
        "{} ({:.0}%) {} {}/{}",
        thousands(m.bytes),
        m.removed_pct,
        if m.needle { "✓" } else { "✗ needle" },
        m.names_kept,
        m.names_total
    );
    if !m.exit_equal {
        let _ = write!(s, " exit {}≠{}", m.exit, case.raw_exit);
    }
    if a.source == "recorded" {
        s.push_str(" †");
    }
    s
}

/// Totals of one arm over the cases it claims.
#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    /// Cases the arm claims.
    pub claimed: usize,
    /// Raw bytes over those cases.
    pub raw_bytes: usize,
    /// View bytes over those cases.
    pub bytes: usize,
    /// Cases whose needle the view kept.
    pub needles: usize,
    /// Names kept, summed.
    pub names_kept: usize,
    /// Names in the raw output, summed.
    pub names_total: usize,
    /// Cases whose exit code matched raw's.
    pub exits: usize,
}

/// Sums an arm over cases.
pub fn summarize<'a>(cases: impl Iterator<Item = &'a CaseResult>, arm: &str) -> Summary {
    let mut s = Summary::default();
    for c in cases {
        let Some(m) = c
            .arms
            .iter()
            .find(|a| a.name == arm)
            .and_then(|a| a.measure.as_ref())
        else {
            continue;
        };
        s.claimed += 1;
        s.raw_bytes += c.raw_bytes;
        s.bytes += m.bytes;
        s.needles += usize::from(m.needle);
        s.names_kept += m.names_kept;
        s.names_total += m.names_total;
        s.exits += usize::from(m.exit_equal);
    }
    s
}

/// One table (overlap or lens-only) as markdown.
pub fn table(r: &CompareResults, which: &str) -> String {
    let cases: Vec<&CaseResult> = r.cases.iter().filter(|c| c.table == which).collect();
    let mut s = String::new();
    if cases.is_empty() {
        return s;
    }
    s.push_str("| case | raw bytes |");
    for (_, title) in COLUMNS {
        let _ = write!(s, " {title} |");
    }
    s.push_str("\n|---|---:|---|---|---|---|\n");
    for c in &cases {
        let _ = write!(s, "| {} | {} |", c.name, thousands(c.raw_bytes));
        for (arm, _) in COLUMNS {
            let _ = write!(s, " {} |", cell(c, arm));
        }
        s.push('\n');
    }
    s.push_str("| **total** | |");
    for (arm, _) in COLUMNS {
        let t = summarize(cases.iter().copied(), arm);
        if t.claimed == 0 {
            s.push_str(" not claimed |");
            continue;
        }
        let removed = 100.0 * (t.raw_bytes as f64 - t.bytes as f64) / t.raw_bytes.max(1) as f64;
        let _ = write!(
            s,
            " {} of {} ({:.0}%), needle {}/{}, names {}/{}, exit {}/{} |",
            thousands(t.bytes),
            thousands(t.raw_bytes),
            removed,
            t.needles,
            t.claimed,
            t.names_kept,
            t.names_total,
            t.exits,
            t.claimed
        );
    }
    s.push('\n');
    s
}

/// Lens level 2 against rtk on the cases both claim: how many rows each wins.
pub fn head_to_head(r: &CompareResults) -> Option<String> {
    let mut both = 0;
    let mut lens_smaller = 0;
    let (mut lens_total, mut rtk_total) = (0usize, 0usize);
    for c in r.cases.iter().filter(|c| c.table == "overlap") {
        let get = |n: &str| {
            c.arms
                .iter()
                .find(|a| a.name == n)
                .and_then(|a| a.measure.as_ref())
        };
        if let (Some(l), Some(t)) = (get("lens-2"), get("rtk")) {
            both += 1;
            lens_smaller += usize::from(l.bytes < t.bytes);
            lens_total += l.bytes;
            rtk_total += t.bytes;
        }
    }
    (both > 0).then(|| {
        format!(
            "Lens level 2 is smaller than rtk on {lens_smaller} of {both} overlap cases; over the set it prints {} bytes to rtk's {} ({:.2}x).",
            thousands(lens_total),
            thousands(rtk_total),
            lens_total as f64 / rtk_total.max(1) as f64
        )
    })
}

/// The full markdown report: both tables, the head-to-head line and the legend.
pub fn markdown(r: &CompareResults) -> String {
    let mut s = String::new();
    if let Some(vm) = &r.vm {
        let tool = |k: &str| vm.image.tools.get(k).map_or("?", String::as_str);
        let _ = writeln!(
            s,
            "Every case ran live inside one microVM ({}) booted from the image built {} (lens at {}, {}; {}): both tools read the same builds.\n",
            if vm.timings_emulated { "TCG software emulation" } else { "KVM" },
            vm.image.built_at,
            &tool("lens (source revision)")[..tool("lens (source revision)").len().min(12)],
            tool("rtk --version"),
            tool("rustc --version"),
        );
    }
    let _ = writeln!(s, "Overlap set (commands both tools claim):\n");
    s.push_str(&table(r, "overlap"));
    if let Some(h) = head_to_head(r) {
        let _ = writeln!(s, "\n{h}");
    }
    let lens_only = table(r, "lens-only");
    if !lens_only.is_empty() {
        let _ = writeln!(s, "\nCommands only Lens claims (coverage, not quality):\n");
        s.push_str(&lens_only);
    }
    let _ = writeln!(
        s,
        "\nEach cell: bytes (share removed) needle kept, distinct names kept of the raw output's. `exit a≠b`: exit code differs from raw."
    );
    if r.cases
        .iter()
        .any(|c| c.arms.iter().any(|a| a.source == "recorded"))
    {
        let _ = writeln!(
            s,
            "† rtk is not installed here: its view recorded with the same inputs."
        );
    }
    let _ = writeln!(
        s,
        "Mode {}, revision {}, {}.",
        r.mode,
        short(&r.git_revision),
        r.date
    );
    s
}

fn short(rev: &str) -> &str {
    rev.get(..12).unwrap_or(rev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Arm;
    use crate::measure::Measure;

    fn m(bytes: usize, needle: bool, kept: usize) -> Option<Measure> {
        Some(Measure {
            bytes,
            removed_pct: 100.0 - bytes as f64 / 10.0,
            needle,
            names_kept: kept,
            names_total: 4,
            exit: 1,
            exit_equal: true,
        })
    }

    fn arm(name: &str, measure: Option<Measure>, source: &str) -> Arm {
        Arm {
            name: name.into(),
            argv: vec![],
            source: source.into(),
            measure,
        }
    }

    fn results() -> CompareResults {
        CompareResults {
            vm: None,
            command: "compare".into(),
            git_revision: "0123456789abcdef".into(),
            date: "2026-11-30T00:00:00Z".into(),
            mode: "replay".into(),
            machine: crate::env::machine(),
            tools: BTreeMap::new(),
            cases: vec![
                CaseResult {
                    name: "a".into(),
                    description: String::new(),
                    table: "overlap".into(),
                    raw_bytes: 1000,
                    raw_exit: 1,
                    names_total: 4,
                    floor_bytes: 10,
                    arms: vec![
                        arm("raw", m(1000, true, 4), "run"),
                        arm("lens-2", m(100, true, 4), "run"),
                        arm("lens-1", m(50, true, 2), "run"),
                        arm("lens-0", m(20, false, 0), "run"),
                        arm("rtk", m(200, true, 1), "recorded"),
                    ],
                    versions: BTreeMap::new(),
                },
                CaseResult {
                    name: "b".into(),
                    description: String::new(),
                    table: "lens-only".into(),
                    raw_bytes: 1000,
                    raw_exit: 1,
                    names_total: 4,
                    floor_bytes: 10,
                    arms: vec![
                        arm("raw", m(1000, true, 4), "run"),
                        arm("lens-2", m(300, true, 4), "run"),
                        arm("rtk", None, "not-claimed"),
                    ],
                    versions: BTreeMap::new(),
                },
            ],
        }
    }

    #[test]
    fn cells_and_totals() {
        let r = results();
        let t = table(&r, "overlap");
        assert!(t.contains("| a | 1,000 | 100 (90%) ✓ 4/4 | 50 (95%) ✓ 2/4 | 20 (98%) ✗ needle 0/4 | 200 (80%) ✓ 1/4 † |"), "{t}");
        assert!(
            t.contains("100 of 1,000 (90%), needle 1/1, names 4/4, exit 1/1"),
            "{t}"
        );
        let lo = table(&r, "lens-only");
        assert!(
            lo.contains("| b | 1,000 | 300 (70%) ✓ 4/4 | n/a | n/a | not claimed |"),
            "{lo}"
        );
    }

    #[test]
    fn head_to_head_counts_wins() {
        assert_eq!(
            head_to_head(&results()).unwrap(),
            "Lens level 2 is smaller than rtk on 1 of 1 overlap cases; over the set it prints 100 bytes to rtk's 200 (0.50x)."
        );
        assert!(markdown(&results()).contains("† rtk is not installed here"));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
