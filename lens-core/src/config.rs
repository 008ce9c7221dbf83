//! Configuration: parsed from TOML text the caller has read (this crate does no I/O).
//!
//! ```toml
//! level = 2
//! budget = "4k"
//!
//! [store]
//! max_bytes = "256m"
//! max_age_days = 7
//! max_run_bytes = "256m"
//!
//! [[command]]
//! prefix = "cargo test"
//! level = 1
//! budget = "8k"
//! drop = ['^\s+Running ']
//! keep = ['^test result:']
//! ```

use regex::Regex;
use serde::Deserialize;

/// How much of the output to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// A count and one line.
    Zero,
    /// The failures, or the head of the view when nothing failed.
    One,
    /// The ranked view under the budget.
    Two,
    /// The raw output.
    Three,
}

impl Level {
    /// The level for a digit 0–3.
    pub fn from_digit(n: u8) -> Option<Level> {
        [Level::Zero, Level::One, Level::Two, Level::Three]
            .get(n as usize)
            .copied()
    }

    /// The level as its digit.
    pub fn digit(self) -> u8 {
        self as u8
    }
}

/// The view budget when nothing else is configured, in bytes.
pub const DEFAULT_BUDGET: usize = 4096;

/// A size in bytes: an integer, or a string with an optional `k`/`m`/`g` suffix.
#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
enum RawSize {
    Int(u64),
    Text(String),
}

#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    level: Option<u8>,
    budget: Option<RawSize>,
    #[serde(default)]
    store: RawStore,
    #[serde(default, rename = "command")]
    commands: Vec<RawRule>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
struct RawStore {
    max_bytes: Option<RawSize>,
    max_age_days: Option<u64>,
    max_run_bytes: Option<RawSize>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawRule {
    prefix: String,
    level: Option<u8>,
    budget: Option<RawSize>,
    #[serde(default)]
    drop: Vec<String>,
    #[serde(default)]
    keep: Vec<String>,
}

/// Caps on the store's size and age.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreCaps {
    /// Total bytes of stored output before the oldest runs are pruned.
    pub max_bytes: u64,
    /// Age in days after which a run is pruned.
    pub max_age_days: u64,
    /// The most one run stores, its streams together: past it, each stream keeps
    /// its head and its tail, and the bytes between are not stored.
    pub max_run_bytes: u64,
}

impl Default for StoreCaps {
    fn default() -> Self {
        StoreCaps {
            max_bytes: 256 << 20,
            max_age_days: 7,
            max_run_bytes: 256 << 20,
        }
    }
}

/// Per-command settings: matched on a prefix of the argv words.
#[derive(Clone, Debug)]
pub struct Rule {
    prefix: Vec<String>,
    level: Option<Level>,
    budget: Option<usize>,
    drop: Vec<Regex>,
    keep: Vec<Regex>,
}

/// A parsed, validated configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Default level.
    pub level: Option<Level>,
    /// Default budget in bytes.
    pub budget: Option<usize>,
    /// Store caps.
    pub store: StoreCaps,
    rules: Vec<Rule>,
}

/// What applies to one command: the level, the budget and the extra patterns.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Level from the command rule or the default, if any was configured.
    pub level: Option<Level>,
    /// Budget from the command rule or the default, if any was configured.
    pub budget: Option<usize>,
    /// Lines matching these are dropped (and announced).
    pub drop: Vec<Regex>,
    /// Lines matching these are always kept.
    pub keep: Vec<Regex>,
    /// The user's filter for the command, when one covers it (set by the caller,
    /// which reads the filter files).
    pub filter: Option<std::sync::Arc<crate::filters::Filter>>,
}

impl Config {
    /// Parses TOML text; the error is one line naming the problem.
    pub fn parse(text: &str) -> Result<Config, String> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            format!(
                "not valid TOML or not a Lens setting: {}",
                one_line(&e.to_string())
            )
        })?;
        let mut store = StoreCaps::default();
        if let Some(s) = raw.store.max_bytes {
            store.max_bytes = size(&s, "store.max_bytes")? as u64;
        }
        if let Some(d) = raw.store.max_age_days {
            store.max_age_days = d;
        }
        if let Some(s) = raw.store.max_run_bytes {
            store.max_run_bytes = size(&s, "store.max_run_bytes")? as u64;
        }
        let mut rules = Vec::new();
        for r in raw.commands {
            let prefix: Vec<String> = r.prefix.split_whitespace().map(String::from).collect();
            if prefix.is_empty() {
                return Err("[[command]] prefix is empty: give the command words it applies to, e.g. prefix = \"cargo test\"".into());
            }
            rules.push(Rule {
                level: r.level.map(|n| level(n, "command.level")).transpose()?,
                budget: r.budget.map(|b| budget(&b, "command.budget")).transpose()?,
                drop: patterns(&r.drop, &r.prefix)?,
                keep: patterns(&r.keep, &r.prefix)?,
                prefix,
            });
        }
        Ok(Config {
            level: raw.level.map(|n| level(n, "level")).transpose()?,
            budget: raw.budget.map(|b| budget(&b, "budget")).transpose()?,
            store,
            rules,
        })
    }

    /// The settings for one command line: the longest matching rule over the defaults.
    pub fn settings(&self, argv: &[String]) -> Settings {
        let program = |a: &str| a.rsplit('/').next().unwrap_or(a).to_string();
        let words: Vec<String> = argv
            .iter()
            .enumerate()
            .map(|(i, a)| if i == 0 { program(a) } else { a.clone() })
            .collect();
        let rule = self
            .rules
            .iter()
            .filter(|r| words.len() >= r.prefix.len() && words[..r.prefix.len()] == r.prefix[..])
            .max_by_key(|r| r.prefix.len());
        Settings {
            level: rule.and_then(|r| r.level).or(self.level),
            budget: rule.and_then(|r| r.budget).or(self.budget),
            drop: rule.map(|r| r.drop.clone()).unwrap_or_default(),
            keep: rule.map(|r| r.keep.clone()).unwrap_or_default(),
            filter: None,
        }
    }
}

fn level(n: u8, key: &str) -> Result<Level, String> {
    level_value(&n.to_string())
        .ok_or_else(|| format!("{key} = {n} is not a level: use 0, 1, 2 or 3"))
}

/// A view budget: the one reading of a budget, shared by `--budget` and the
/// config, so neither accepts what the other refuses. Zero is no budget at all.
pub fn budget_value(text: &str) -> Option<usize> {
    parse_size(text).filter(|&n| n > 0)
}

/// A level digit (`0` to `3`): the one reading shared by `--level` and the config.
pub fn level_value(text: &str) -> Option<Level> {
    text.parse::<u8>().ok().and_then(Level::from_digit)
}

fn budget(s: &RawSize, key: &str) -> Result<usize, String> {
    let text = match s {
        RawSize::Int(n) => n.to_string(),
        RawSize::Text(t) => t.clone(),
    };
    budget_value(&text).ok_or_else(|| {
        format!("{key} = {text:?} is not a budget: give a size above 0 in bytes with an optional k or m suffix, e.g. {key} = \"4k\"")
    })
}

fn size(s: &RawSize, key: &str) -> Result<usize, String> {
    match s {
        RawSize::Int(n) => Ok(*n as usize),
        RawSize::Text(t) => parse_size(t).ok_or_else(|| {
            format!("{key} = {t:?} is not a size: use bytes with an optional k, m or g suffix, e.g. \"4k\"")
        }),
    }
}

fn patterns(list: &[String], prefix: &str) -> Result<Vec<Regex>, String> {
    list.iter()
        .map(|p| {
            Regex::new(p).map_err(|e| {
                format!(
                    "pattern {p:?} for command {prefix:?} does not compile: {}",
                    one_line(&e.to_string())
                )
            })
        })
        .collect()
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses `4096`, `4k`, `4K`, `2m`, `1g` into bytes.
pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1usize << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    num.parse::<usize>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        for bad in ["", "k", "-1", "1.5k", "4kb", "x"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn longest_prefix_wins() {
        let c = Config::parse(
            r#"
level = 2
budget = "8k"
[[command]]
prefix = "cargo"
level = 1
[[command]]
prefix = "cargo test"
budget = 100
drop = ['^\s+Running']
"#,
        )
        .unwrap();
        let argv: Vec<String> = ["/usr/bin/cargo", "test", "-q"].map(String::from).to_vec();
        let s = c.settings(&argv);
        assert_eq!(s.budget, Some(100));
        assert_eq!(s.level, Some(Level::Two));
        assert_eq!(s.drop.len(), 1);
        let s = c.settings(&["cargo".to_string(), "build".to_string()]);
        assert_eq!(s.level, Some(Level::One));
        assert_eq!(s.budget, Some(8192));
    }

    #[test]
    fn errors_are_one_line_and_name_the_fix() {
        for (text, needle) in [
            ("level = 7", "use 0, 1, 2 or 3"),
            ("budget = \"lots\"", "not a budget"),
            ("budget = \"0\"", "give a size above 0"),
            ("budget = 0", "give a size above 0"),
            (
                "[[command]]\nprefix = \"x\"\nbudget = \"0k\"",
                "command.budget",
            ),
            ("colour = true", "unknown field"),
            (
                "[[command]]\nprefix = \"x\"\ndrop = ['(']",
                "does not compile",
            ),
            ("level = ", "not valid TOML"),
        ] {
            let e = Config::parse(text).unwrap_err();
            assert!(e.contains(needle), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn store_caps() {
        let c = Config::parse("[store]\nmax_bytes = \"1m\"\nmax_age_days = 2").unwrap();
        assert_eq!(
            c.store,
            StoreCaps {
                max_bytes: 1 << 20,
                max_age_days: 2,
                max_run_bytes: 256 << 20,
            }
        );
        let c = Config::parse("[store]\nmax_run_bytes = \"4m\"").unwrap();
        assert_eq!(c.store.max_run_bytes, 4 << 20);
    }
}
