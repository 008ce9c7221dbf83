//! Argument parsing, by hand. Flags before the command are Lens's; everything from
//! the command name on belongs to the child, so `lens mytool --level 3` passes
//! `--level 3` to mytool.
//!
//! Each subcommand's help text sits next to its parser and is the list of flags
//! that parser accepts: a flag the text does not name is refused, and a unit
//! test drives the parser with every flag the text names.

use std::ffi::OsString;

use lens_core::config::{budget_value, level_value};
use lens_core::{Level, Stream};

use crate::agents::{Agent, Scope};

/// What the user asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// Run a command and show its view.
    Run(RunArgs),
    /// Print a stored run.
    Show(ShowArgs),
    /// Summarise the run log.
    Stats {
        /// Print JSON instead of a table.
        json: bool,
        /// Only runs at or after this time (milliseconds since the epoch).
        since_ms: Option<u64>,
    },
    /// Wire Lens into coding agents.
    Init(InitArgs),
    /// Answer an agent's after-tool hook event on stdin.
    Hook(Agent),
    /// Filter output already captured (stdin) as a command line's own.
    As(AsArgs),
    /// Run the inline tests and invariant checks of filter files.
    Verify(Vec<String>),
    /// Trust this project's filter file as it is now.
    Trust,
    /// Print this help text (Lens's, or one subcommand's) on stdout.
    Help(&'static str),
    /// Print the version.
    Version,
}

/// `lens [--level N] [--budget B] <cmd> [args…]`.
#[derive(Debug, PartialEq, Eq)]
pub struct RunArgs {
    /// Level from the command line, if given.
    pub level: Option<Level>,
    /// Budget from the command line, if given.
    pub budget: Option<usize>,
    /// The child's argv.
    pub argv: Vec<OsString>,
}

/// `lens --as '<command line>' [--exit N] [--level N] [--budget B] < output`.
#[derive(Debug, PartialEq, Eq)]
pub struct AsArgs {
    /// The shell command line that printed the output.
    pub line: String,
    /// Its exit code, when known.
    pub exit: Option<i32>,
    /// Level from the command line, if given.
    pub level: Option<Level>,
    /// Budget from the command line, if given.
    pub budget: Option<usize>,
    /// A draft filter file to use instead of the installed ones, untrusted.
    pub filters: Option<String>,
}

/// `lens show <handle> [--level N] [--stream S] [--lines A-B] [--budget B]`.
#[derive(Debug, PartialEq, Eq)]
pub struct ShowArgs {
    /// The handle, as typed (validated by the store).
    pub handle: String,
    /// Level to render at; 3 (raw) by default.
    pub level: Level,
    /// One stream only.
    pub stream: Option<Stream>,
    /// A 1-based inclusive line range.
    pub lines: Option<(u32, u32)>,
    /// Budget for levels below 3 (and for `--grep`).
    pub budget: Option<usize>,
    /// Print the raw lines matching this regular expression, numbered.
    pub grep: Option<String>,
    /// Lines of context around each match (`--grep` only).
    pub context: u32,
    /// `--grep` prints the lines that do not match (`-v`, as grep's).
    pub invert: bool,
    /// `--grep` matches letters in either case (`-i`).
    pub ignore_case: bool,
    /// `--grep` numbers each line (`-n`).
    pub line_number: bool,
    /// Print at most this many bytes of raw lines, cut by whole lines, ending
    /// with a marker naming the lines left (see [`crate::show::page`]).
    pub max_bytes: Option<usize>,
}

/// `lens init [--agent A]... [--global|--project] [--dry-run] [--uninstall]`.
#[derive(Debug, PartialEq, Eq)]
pub struct InitArgs {
    /// The agents named; empty means: detect, and only report.
    pub agents: Vec<Agent>,
    /// Where to write.
    pub scope: Scope,
    /// Print the changes without making them.
    pub dry_run: bool,
    /// Take Lens out again.
    pub uninstall: bool,
}

/// `lens --help`: running a command, `--as`, then each subcommand's usage lines
/// taken from its own help text, so a synopsis is written once.
fn usage() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let mut text = String::from(RUN_USAGE);
        for help in [
            SHOW_HELP,
            STATS_HELP,
            INIT_HELP,
            HOOK_HELP,
            VERIFY_HELP,
            TRUST_HELP,
        ] {
            for line in help.lines().take_while(|l| !l.is_empty()) {
                text.push_str(&line.replacen("usage:", "      ", 1));
                text.push('\n');
            }
        }
        text.push_str(USAGE_TAIL);
        text
    })
}

const RUN_USAGE: &str = "\
usage: lens [--level 0|1|2|3] [--budget SIZE] [--] <command> [args...]

Runs <command>, stores its full output, and prints a smaller view. Every run of
lines the view leaves out is one marker naming the stream, the raw lines and the
stored run:

  [lens: elided stdout 120-480 (361 lines: budget) handle=1a2b3c4d]

To see those lines, fetch them instead of running the command again:

  lens show 1a2b3c4d --lines 120-480      (add --stream stderr for stderr)

  -l, --level N      0 counts and one line, 1 failures (or the head), 2 ranked
                     view under the budget (default), 3 raw
  -b, --budget SIZE  view budget for level 2, in bytes; k and m suffixes (default 4k)

The exit code is the command's; stdout's view goes to stdout, stderr's to stderr.

       lens --as '<command line>' [--exit N] [--level N] [--budget SIZE] < saved.log
                 filter output already captured (a saved or CI log) as that command's
       lens --as '<command line>' --filters FILE [--exit N] < saved.log
                 the view a draft filter file gives it, without trusting or installing it
";

const USAGE_TAIL: &str = "       lens -h|--help, lens -V|--version

Each subcommand answers --help (or -h): lens show --help. Flags after the
command name are the command's. Use `--` to run a command named show, stats,
init, hook, verify or trust. Environment: LENS_STORE, LENS_LOG_DIR, LENS_CONFIG
(your filters are filters.toml beside it; see lens verify --help).";

/// Parses Lens's own arguments. The error is one line naming the problem and the fix.
pub fn parse(args: Vec<OsString>) -> Result<Invocation, String> {
    let mut it = args.into_iter().peekable();
    let mut level = None;
    let mut budget = None;
    let first = it.peek().and_then(|a| a.to_str()).map(str::to_owned);
    match first.as_deref() {
        Some("show") => {
            it.next();
            return parse_show(it.map(lossy).collect());
        }
        Some("stats") => {
            it.next();
            return parse_stats(it.map(lossy).collect());
        }
        Some("init") => {
            it.next();
            return parse_init(it.map(lossy).collect());
        }
        Some("hook") => {
            it.next();
            let rest: Vec<String> = it.map(lossy).collect();
            for a in &rest {
                known("hook", a, HOOK_HELP)?;
                if is_help(a) {
                    return Ok(Invocation::Help(HOOK_HELP));
                }
            }
            return match rest.as_slice() {
                [a] => match Agent::parse(a) {
                    Some(agent) if !agent.has_hook() => Err(format!(
                        "lens hook: {a} has no after-tool hook that can replace an output; `lens init --agent {a}` installs only the awareness block"
                    )),
                    Some(agent) => Ok(Invocation::Hook(agent)),
                    None => Err(format!(
                        "lens hook: unknown agent {a:?}; name one of {}",
                        Agent::names(true)
                    )),
                },
                _ => Err(format!(
                    "lens hook: name the agent: lens hook claude (or {})",
                    Agent::names(true)
                )),
            };
        }
        Some("verify") => {
            it.next();
            let rest: Vec<String> = it.map(lossy).collect();
            for a in &rest {
                known("verify", a, VERIFY_HELP)?;
                if is_help(a) {
                    return Ok(Invocation::Help(VERIFY_HELP));
                }
            }
            return Ok(Invocation::Verify(rest));
        }
        Some("trust") => {
            it.next();
            let rest: Vec<String> = it.map(lossy).collect();
            for a in &rest {
                known("trust", a, TRUST_HELP)?;
                if is_help(a) {
                    return Ok(Invocation::Help(TRUST_HELP));
                }
            }
            if let Some(a) = rest.first() {
                return Err(format!(
                    "lens trust: unexpected argument {a:?}; it trusts this project's .lens/filters.toml and takes no file"
                ));
            }
            return Ok(Invocation::Trust);
        }
        _ => {}
    }
    let mut as_line = None;
    let mut filters = None;
    let mut exit = None;
    while let Some(a) = it.peek() {
        let Some(s) = a.to_str() else { break };
        if !s.starts_with('-') || s == "-" {
            break;
        }
        let s = s.to_owned();
        it.next();
        let (flag, inline) = split_flag(&s);
        match flag.as_str() {
            "--" => break,
            "-h" | "--help" => return Ok(Invocation::Help(usage())),
            "-V" | "--version" => return Ok(Invocation::Version),
            "--level" | "-l" => {
                let v = value(&flag, inline, &mut it)?;
                level = Some(parse_level(&v)?);
            }
            "--budget" | "-b" => {
                let v = value(&flag, inline, &mut it)?;
                budget = Some(parse_budget(&v)?);
            }
            "--as" => as_line = Some(value(&flag, inline, &mut it)?),
            "--filters" => filters = Some(value(&flag, inline, &mut it)?),
            "--exit" => {
                let v = value(&flag, inline, &mut it)?;
                exit = Some(v.parse::<i32>().map_err(|_| {
                    format!("--exit {v:?} is not an exit code; give a number: --exit 1")
                })?);
            }
            _ => {
                return Err(format!(
                    "unknown option {s:?} before the command; Lens's options are --level, --budget, --as, --exit and --filters (put the command's own flags after its name, or use -- first)"
                ))
            }
        }
    }
    let argv: Vec<OsString> = it.collect();
    if let Some(line) = as_line {
        if !argv.is_empty() {
            return Err("--as filters output given on stdin and runs nothing; drop the command after it, or drop --as to run it".into());
        }
        if line.trim().is_empty() {
            return Err(
                "--as needs the command line that printed the output: lens --as 'cargo test' < log"
                    .into(),
            );
        }
        return Ok(Invocation::As(AsArgs {
            line,
            exit,
            level,
            budget,
            filters,
        }));
    }
    if filters.is_some() {
        return Err("--filters goes with --as (a draft filter file tried on a saved output: lens --as 'CMD' --filters FILE < saved.log); installed filters apply to every run".into());
    }
    if exit.is_some() {
        return Err("--exit goes with --as (the exit code of the output given on stdin); a command run by lens has its own".into());
    }
    if argv.is_empty() {
        return Err(
            "no command given; usage: lens [--level N] [--budget SIZE] <command> [args...]".into(),
        );
    }
    Ok(Invocation::Run(RunArgs {
        level,
        budget,
        argv,
    }))
}

fn lossy(a: OsString) -> String {
    a.to_string_lossy().into_owned()
}

fn value(
    flag: &str,
    inline: Option<String>,
    it: &mut impl Iterator<Item = OsString>,
) -> Result<String, String> {
    inline
        .or_else(|| it.next().map(lossy))
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn parse_level(v: &str) -> Result<Level, String> {
    level_value(v).ok_or_else(|| format!("--level {v:?} is not a level; use 0, 1, 2 or 3"))
}

fn parse_budget(v: &str) -> Result<usize, String> {
    budget_value(v).ok_or_else(|| {
        format!("--budget {v:?} is not a size; use bytes with an optional k or m suffix, e.g. 4k")
    })
}

/// `lens show --help`. The flags named here are the ones [`parse_show`] accepts.
pub const SHOW_HELP: &str = "\
usage: lens show <handle> [--lines A-B] [--stream stdout|stderr] [--level N] [--budget SIZE]
       lens show <handle> [--lines A-B] [--stream S] --max-bytes SIZE
       lens show <handle> --grep REGEX [-n] [-v] [-i] [--context N] [--stream S] [--budget SIZE]

Prints a stored run, raw unless --level says otherwise. The handle and the line
numbers are the ones a [lens: elided ...] marker names.

  --lines A-B        only lines A to B (1-based, inclusive)
  --stream S         only stdout or only stderr
  -l, --level N      render at level 0, 1 or 2 instead of raw (3)
  -b, --budget SIZE  budget for levels below 3 and for --grep; k and m suffixes
  --max-bytes SIZE   at most SIZE of raw lines, cut by whole lines, then a marker
                     naming the lines left
  --grep REGEX       only the raw lines matching REGEX, as grep prints them; the
                     count on stderr
  -n, --line-number  with --grep, each line's number first (N:), as lens show --lines takes it
  -v, --invert-match with --grep, the raw lines NOT matching REGEX
  -i, --ignore-case  with --grep, letters match in either case
  -E, --extended-regexp  accepted: REGEX is an extended regular expression already
  -C, --context N    lines of context around each --grep match
  -h, --help         print this help";

/// One of grep's flags that `lens show` takes after `--grep`, as its letter.
fn grep_flag(a: &str) -> Option<char> {
    match a {
        "-v" | "--invert-match" => Some('v'),
        "-i" | "--ignore-case" => Some('i'),
        "-E" | "--extended-regexp" => Some('E'),
        "-n" | "--line-number" => Some('n'),
        _ => None,
    }
}

fn parse_show(args: Vec<String>) -> Result<Invocation, String> {
    let mut it = args.into_iter();
    let mut handle = None;
    let mut show = ShowArgs {
        handle: String::new(),
        level: Level::Three,
        stream: None,
        lines: None,
        budget: None,
        grep: None,
        context: 0,
        invert: false,
        ignore_case: false,
        line_number: false,
        max_bytes: None,
    };
    while let Some(a) = it.next() {
        let (flag, inline) = split_flag(&a);
        known("show", &flag, SHOW_HELP)?;
        let mut val = || {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("lens show: {flag} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Invocation::Help(SHOW_HELP)),
            "--level" | "-l" => show.level = parse_level(&val()?)?,
            "--budget" | "-b" => show.budget = Some(parse_budget(&val()?)?),
            "--grep" => {
                // grep's own flags typed after --grep, as grep is typed:
                // `--grep -v REGEX`, `--grep -i REGEX`, `--grep -E REGEX`.
                let mut v = val()?;
                while let Some(f) = grep_flag(&v) {
                    match f {
                        'v' => show.invert = true,
                        'i' => show.ignore_case = true,
                        'n' => show.line_number = true,
                        _ => {}
                    }
                    v = it.next().ok_or_else(|| {
                        format!("lens show: --grep {v} needs a regular expression after it")
                    })?;
                }
                show.grep = Some(v);
            }
            "-v" | "--invert-match" => show.invert = true,
            "-i" | "--ignore-case" => show.ignore_case = true,
            "-n" | "--line-number" => show.line_number = true,
            // The patterns are extended regular expressions already.
            "-E" | "--extended-regexp" => {}
            "--max-bytes" => show.max_bytes = Some(parse_budget(&val()?)?),
            "--context" | "-C" => {
                let v = val()?;
                show.context = v.parse().map_err(|_| {
                    format!("lens show: --context {v:?} is not a line count; use a number, e.g. 2")
                })?;
            }
            "--stream" => {
                let v = val()?;
                show.stream = Some(Stream::parse(&v).ok_or_else(|| {
                    format!("lens show: --stream {v:?} is not a stream; use stdout or stderr")
                })?);
            }
            "--lines" => {
                let v = val()?;
                show.lines = Some(parse_range(&v).ok_or_else(|| {
                    format!("lens show: --lines {v:?} is not a range; use A-B with 1 <= A <= B, as a marker prints it")
                })?);
            }
            // Documented but not handled: the unit test catches it.
            f if f.starts_with('-') => return Err(format!("lens show: unknown option {f:?}")),
            _ if handle.is_none() => handle = Some(a),
            _ => {
                return Err(format!(
                    "lens show: unexpected argument {a:?}; give one handle"
                ))
            }
        }
    }
    show.handle = handle.ok_or("lens show: no handle given; usage: lens show <handle> [--level N] [--stream S] [--lines A-B]")?;
    Ok(Invocation::Show(show))
}

/// `lens stats --help`. The flags named here are the ones [`parse_stats`] accepts.
pub const STATS_HELP: &str = "\
usage: lens stats [--json] [--since 7d|12h|30m|2026-11-01]

Summarises the run log: what each command printed and what its view kept.

  --json          print JSON instead of a table
  --since WHEN    only runs since then: a span back from now (7d, 12h, 30m) or
                  a date (UTC midnight)
  -h, --help      print this help";

fn parse_stats(args: Vec<String>) -> Result<Invocation, String> {
    let mut json = false;
    let mut since_ms = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let (flag, inline) = split_flag(&a);
        known("stats", &flag, STATS_HELP)?;
        match flag.as_str() {
            "-h" | "--help" => return Ok(Invocation::Help(STATS_HELP)),
            "--json" => json = true,
            "--since" => {
                let v = inline
                    .or_else(|| it.next())
                    .ok_or("lens stats: --since needs a value, e.g. 7d or 2026-11-01")?;
                since_ms = Some(parse_since(&v, now_ms()).ok_or_else(|| {
                    format!("lens stats: --since {v:?} is not a time; use 7d, 12h or 2026-11-01")
                })?);
            }
            _ => {
                return Err(format!(
                    "lens stats: unknown argument {a:?}; the flags are --json and --since"
                ))
            }
        }
    }
    Ok(Invocation::Stats { json, since_ms })
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `7d`, `12h`, `30m` before `now_ms`, or a date `YYYY-MM-DD` (UTC midnight).
pub fn parse_since(v: &str, now_ms: u64) -> Option<u64> {
    let unit = |u: char| match u {
        'd' => Some(86_400_000u64),
        'h' => Some(3_600_000),
        'm' => Some(60_000),
        _ => None,
    };
    if let Some(u) = v.chars().last().and_then(unit) {
        let n: u64 = v[..v.len() - 1].parse().ok()?;
        return Some(now_ms.saturating_sub(n.saturating_mul(u)));
    }
    let mut parts = v.splitn(3, '-');
    let (y, m, d): (i64, i64, i64) = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return None;
    }
    // Days from the civil date (proleptic Gregorian).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days as u64) * 86_400_000)
}

/// `lens init --help`. The flags named here are the ones [`parse_init`] accepts.
pub const INIT_HELP: &str = "\
usage: lens init [--agent claude|codex|gemini|cursor|opencode|vibe|kilo|pi|copilot|qwen|droid|auggie|crush|continue|aider]...
                 [--global|--project] [--dry-run] [--uninstall]

Wires Lens into coding agents' after-tool hooks. With no --agent it detects the
agents installed and only reports.

  --agent A      this agent (repeat it, or give a comma-separated list)
  --global       in the user's configuration (the default)
  --project      in this project's configuration
  --dry-run      print the changes without making them
  --uninstall    take Lens out again
  -h, --help     print this help";

fn parse_init(args: Vec<String>) -> Result<Invocation, String> {
    let mut init = InitArgs {
        agents: Vec::new(),
        scope: Scope::Global,
        dry_run: false,
        uninstall: false,
    };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let (flag, inline) = split_flag(&a);
        known("init", &flag, INIT_HELP)?;
        match flag.as_str() {
            "-h" | "--help" => return Ok(Invocation::Help(INIT_HELP)),
            "--agent" => {
                let v = inline
                    .or_else(|| it.next())
                    .ok_or_else(|| format!("lens init: --agent needs a name: {}", Agent::names(false)))?;
                for name in v.split(',') {
                    let agent = Agent::parse(name).ok_or_else(|| {
                        format!("lens init: unknown agent {name:?}; use one of {}", Agent::names(false))
                    })?;
                    if !init.agents.contains(&agent) {
                        init.agents.push(agent);
                    }
                }
            }
            "--global" => init.scope = Scope::Global,
            "--project" => init.scope = Scope::Project,
            "--dry-run" => init.dry_run = true,
            "--uninstall" => init.uninstall = true,
            _ => {
                return Err(format!(
                    "lens init: unknown argument {a:?}; the flags are --agent, --global, --project, --dry-run and --uninstall"
                ))
            }
        }
    }
    Ok(Invocation::Init(init))
}

/// `lens hook --help`. The hook takes no flags but this one.
pub const HOOK_HELP: &str = "\
usage: lens hook claude|codex|gemini|opencode|vibe|kilo|pi|copilot|qwen

Answers an agent's after-tool event given on stdin: the event's output, filtered
as the command's own. `lens init` installs it; you rarely run it by hand.

  -h, --help     print this help";

/// `lens verify --help`. The flags named here are the ones its parser accepts.
pub const VERIFY_HELP: &str = "\
usage: lens verify [FILE...]

Runs every [[filter.test]] of each filter in the files (by default your
filters.toml beside the config and this project's .lens/filters.toml, trusted
or not), and checks each filter's invariants on generated outputs: every
elided run has a marker, no error line is dropped, the exit code is kept.
Prints one line per test, then `N passed, M failed`; exits 1 on a failure.

  -h, --help     print this help";

/// `lens trust --help`. The trust command takes no flags but this one.
pub const TRUST_HELP: &str = "\
usage: lens trust

Trusts this project's filter file (.lens/filters.toml at the git root) as it
is now: its SHA-256 is recorded in trusted-filters beside your config, outside
the repository. Until then, and after any change to it, its filters are
ignored and each run says so in one line. Check it first: lens verify.

  -h, --help     print this help";

fn is_help(word: &str) -> bool {
    word == "-h" || word == "--help"
}

/// The flags a help text documents: those in its synopsis (the `usage:` line,
/// lines that start with the program's name or a `[`) and those that open an
/// option line (`  -l, --level N   what it does`). Flags a description merely
/// mentions in passing are not the subcommand's.
pub fn flags_in(help: &str) -> Vec<&str> {
    let prog = help.split_whitespace().nth(1).unwrap_or("lens");
    let mut flags: Vec<&str> = help
        .lines()
        .map(str::trim_start)
        .filter_map(|l| {
            if l.starts_with("usage:") || l.starts_with('[') || l.starts_with(&format!("{prog} ")) {
                Some(l)
            } else if l.starts_with('-') {
                l.split("  ").next()
            } else {
                None
            }
        })
        .flat_map(|l| l.split(|c: char| c.is_whitespace() || "[]|,.;:()=`'".contains(c)))
        .filter(|w| {
            let name = w.trim_start_matches('-');
            w.len() - name.len() <= 2
                && w.starts_with('-')
                && name.starts_with(|c: char| c.is_ascii_alphabetic())
        })
        .collect();
    flags.sort_unstable();
    flags.dedup();
    flags
}

/// A subcommand accepts exactly the flags its help text names, so the two
/// cannot drift apart; anything else is one line pointing at that help.
fn known(cmd: &str, word: &str, help: &str) -> Result<(), String> {
    let flags = flags_in(help);
    if !word.starts_with('-') || flags.contains(&word) {
        return Ok(());
    }
    Err(format!(
        "lens {cmd}: unknown option {word:?}; the flags are {} (see lens {cmd} --help)",
        flags.join(", ")
    ))
}

fn parse_range(v: &str) -> Option<(u32, u32)> {
    let (a, b) = v.split_once('-').unwrap_or((v, v));
    let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
    (a >= 1 && b >= a).then_some((a, b))
}

/// `--flag=value` as the flag and its inline value; any other word as itself.
fn split_flag(word: &str) -> (String, Option<String>) {
    match word.split_once('=') {
        Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
        _ => (word.to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Invocation, String> {
        parse(args.iter().map(OsString::from).collect())
    }

    fn run(args: &[&str]) -> RunArgs {
        match p(args).unwrap() {
            Invocation::Run(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn as_filters_stdin_and_runs_nothing() {
        assert_eq!(
            p(&["--as", "cargo test 2>&1 | tail -50", "--exit", "101"]).unwrap(),
            Invocation::As(AsArgs {
                line: "cargo test 2>&1 | tail -50".into(),
                exit: Some(101),
                level: None,
                budget: None,
                filters: None,
            })
        );
        assert!(matches!(
            p(&["--level=1", "--as=git log"]).unwrap(),
            Invocation::As(AsArgs {
                level: Some(Level::One),
                exit: None,
                ..
            })
        ));
        assert!(p(&["--as", "x", "ls"])
            .unwrap_err()
            .contains("runs nothing"));
        assert!(p(&["--as", " "]).unwrap_err().contains("command line"));
        assert!(p(&["--exit", "1", "ls"])
            .unwrap_err()
            .contains("goes with --as"));
        assert!(p(&["--as", "x", "--exit", "one"])
            .unwrap_err()
            .contains("not an exit code"));
        assert!(matches!(
            p(&["--as", "terraform plan", "--filters", "draft.toml"]).unwrap(),
            Invocation::As(AsArgs { filters: Some(f), .. }) if f == "draft.toml"
        ));
        assert!(p(&["--filters", "draft.toml", "ls"])
            .unwrap_err()
            .contains("goes with --as"));
    }

    #[test]
    fn verify_takes_files_and_trust_takes_nothing() {
        assert_eq!(
            p(&["verify", "a.toml", "b.toml"]).unwrap(),
            Invocation::Verify(vec!["a.toml".into(), "b.toml".into()])
        );
        assert_eq!(p(&["verify"]).unwrap(), Invocation::Verify(vec![]));
        assert_eq!(p(&["trust"]).unwrap(), Invocation::Trust);
        assert!(p(&["trust", "x.toml"])
            .unwrap_err()
            .contains("takes no file"));
        assert_eq!(run(&["--", "verify"]).argv[0], "verify");
    }

    #[test]
    fn subcommands_for_agents_and_stats() {
        match p(&["init", "--agent", "claude,codex", "--project", "--dry-run"]).unwrap() {
            Invocation::Init(i) => {
                assert_eq!(i.agents, [Agent::Claude, Agent::Codex]);
                assert_eq!(i.scope, Scope::Project);
                assert!(i.dry_run && !i.uninstall);
            }
            other => panic!("{other:?}"),
        }
        assert!(p(&["init", "--agent", "emacs"])
            .unwrap_err()
            .contains("unknown agent"));
        assert_eq!(
            p(&["hook", "claude"]).unwrap(),
            Invocation::Hook(Agent::Claude)
        );
        assert_eq!(
            p(&["hook", "opencode"]).unwrap(),
            Invocation::Hook(Agent::Opencode)
        );
        assert!(p(&["hook", "cursor"])
            .unwrap_err()
            .contains("cursor has no after-tool hook"));
        assert!(p(&["hook", "emacs"]).unwrap_err().contains("unknown agent"));
        // `rewrite` is no subcommand: Lens never rewrites a command.
        assert_eq!(run(&["rewrite", "x"]).argv[0], "rewrite");
        assert!(matches!(
            p(&["stats", "--since", "7d"]).unwrap(),
            Invocation::Stats {
                since_ms: Some(_),
                ..
            }
        ));
        assert!(p(&["stats", "--since", "yesterday"]).is_err());
        // `--` runs a program of that name.
        assert_eq!(run(&["--", "init"]).argv[0], "init");
    }

    /// Every subcommand with its help text and the words that make a valid call.
    const SUBCOMMANDS: [(&str, &str, &[&str]); 6] = [
        ("show", SHOW_HELP, &["1a2b3c4d"]),
        ("stats", STATS_HELP, &[]),
        ("init", INIT_HELP, &[]),
        ("hook", HOOK_HELP, &["claude"]),
        ("verify", VERIFY_HELP, &["a.toml"]),
        ("trust", TRUST_HELP, &[]),
    ];

    #[test]
    fn every_documented_flag_is_parsed_and_no_other() {
        for (cmd, help, valid) in SUBCOMMANDS {
            let flags = flags_in(help);
            assert!(flags.contains(&"--help") && flags.contains(&"-h"), "{cmd}");
            for flag in flags {
                // With a value and without: whichever the flag takes, the
                // parser must know it (a value may still be refused as bad).
                for tail in [&[flag][..], &[flag, "1"][..]] {
                    let args: Vec<&str> = [&[cmd][..], valid, tail].concat();
                    if let Err(e) = p(&args) {
                        let refused = [
                            format!("unknown option {flag:?}"),
                            format!("unknown argument {flag:?}"),
                        ];
                        assert!(!refused.iter().any(|r| e.contains(r)), "{args:?}: {e}");
                    }
                }
            }
            let e = p(&[cmd, "--frobnicate"]).unwrap_err();
            assert!(
                e.contains("unknown option") && e.contains(&format!("lens {cmd} --help")),
                "{e}"
            );
        }
        assert_eq!(flags_in(SHOW_HELP).len(), 20);
    }

    #[test]
    fn help_wherever_it_stands_among_a_subcommands_flags() {
        for (cmd, help, valid) in SUBCOMMANDS {
            for h in ["--help", "-h"] {
                assert_eq!(p(&[cmd, h]).unwrap(), Invocation::Help(help), "{cmd} {h}");
                let after: Vec<&str> = [&[cmd][..], valid, &[h]].concat();
                assert_eq!(p(&after).unwrap(), Invocation::Help(help), "{after:?}");
            }
        }
        assert_eq!(
            p(&["show", "abc", "--lines", "1-2", "-h"]).unwrap(),
            Invocation::Help(SHOW_HELP)
        );
        assert_eq!(p(&["-h"]).unwrap(), Invocation::Help(usage()));
        // Lens's own flags, before the command name, are all in `lens --help`.
        for f in [
            "-l",
            "--level",
            "-b",
            "--budget",
            "--as",
            "--exit",
            "--filters",
            "-h",
            "--help",
            "-V",
            "--version",
        ] {
            assert!(flags_in(usage()).contains(&f), "{f}");
        }
        // From the command name on, `--help` is the child's.
        assert_eq!(run(&["mytool", "--help"]).argv[1], "--help");
        assert_eq!(run(&["--", "show", "--help"]).argv, ["show", "--help"]);
    }

    #[test]
    fn since_reads_spans_and_dates() {
        assert_eq!(
            parse_since("1d", 200_000_000),
            Some(200_000_000 - 86_400_000)
        );
        assert_eq!(parse_since("1970-01-02", 0), Some(86_400_000));
        assert_eq!(parse_since("2026-11-01", 0), Some(1_793_491_200_000));
        assert_eq!(parse_since("2026-13-01", 0), None);
    }

    #[test]
    fn flags_before_the_command_are_lenss() {
        let r = run(&["--level", "1", "--budget=2k", "cargo", "build"]);
        assert_eq!(r.level, Some(Level::One));
        assert_eq!(r.budget, Some(2048));
        assert_eq!(r.argv, vec![OsString::from("cargo"), "build".into()]);
    }

    #[test]
    fn flags_after_the_command_are_the_childs() {
        let r = run(&["mytool", "--level", "3"]);
        assert_eq!(r.level, None);
        assert_eq!(r.argv.len(), 3);
        let r = run(&["--", "show", "x"]);
        assert_eq!(r.argv[0], "show");
    }

    #[test]
    fn errors_are_one_line() {
        for (args, needle) in [
            (&["--frobnicate", "ls"][..], "unknown option"),
            (&["--level", "7", "ls"][..], "use 0, 1, 2 or 3"),
            (&["--budget", "lots", "ls"][..], "not a size"),
            (&["--level"][..], "needs a value"),
            (&[][..], "no command given"),
            (&["show"][..], "no handle"),
            (&["show", "abc", "--lines", "5-2"][..], "not a range"),
            (&["stats", "--csv"][..], "--json"),
        ] {
            let e = p(args).unwrap_err();
            assert!(e.contains(needle), "{args:?}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn show_and_stats() {
        let s = match p(&[
            "show", "1a2b3c4d", "--stream", "stderr", "--lines", "3-9", "--level", "2",
        ])
        .unwrap()
        {
            Invocation::Show(s) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(s.handle, "1a2b3c4d");
        assert_eq!(s.stream, Some(Stream::Stderr));
        assert_eq!(s.lines, Some((3, 9)));
        assert_eq!(s.level, Level::Two);
        assert_eq!(
            p(&["stats", "--json"]).unwrap(),
            Invocation::Stats {
                json: true,
                since_ms: None
            }
        );
        assert_eq!(p(&["--help"]).unwrap(), Invocation::Help(usage()));
        assert_eq!(p(&["-V"]).unwrap(), Invocation::Version);
    }
}
