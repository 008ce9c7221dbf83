//! What a shell command line runs, read without running it: which program's
//! output the line prints (so an agent's captured output can be given the view
//! that program's output gets) and whether the line reads a file the agent asked
//! to see (which is never shortened).
//!
//! The line is tokenized the way a POSIX shell reads it (quotes, backslashes,
//! operators, redirections, `NAME=value` prefixes). Anything this tokenizer does
//! not take apart exactly leaves the line unrecognised, and the output is then
//! classified by its content alone: heredocs, subshells and groups, command,
//! process and parameter substitution (`$(…)`, `${…}`), ANSI-C quoting
//! (`$'…'`), backticks, arithmetic, compound commands (`if`, `for`, `case`, …),
//! comments, functions and line continuations. Nothing here decides what runs:
//! Lens never changes a command (invariant 1). Pure: no I/O.

/// Programs (and, for those with subcommands, the subcommands) whose output
/// Lens has a shape for. `None` means any invocation.
pub const SHAPED: &[(&str, Option<&[&str]>)] = &[
    (
        "cargo",
        Some(&[
            "build", "check", "clippy", "test", "nextest", "run", "doc", "bench", "install",
            "update", "fetch",
        ]),
    ),
    ("rustc", None),
    (
        "git",
        Some(&[
            "status", "log", "diff", "show", "fetch", "pull", "push", "clone", "branch", "blame",
            "grep", "ls-files",
        ]),
    ),
    ("pytest", None),
    ("py.test", None),
    ("mypy", None),
    ("ruff", Some(&["check", "format"])),
    ("eslint", None),
    ("tsc", None),
    ("gcc", None),
    ("g++", None),
    ("cc", None),
    ("c++", None),
    ("clang", None),
    ("clang++", None),
    ("make", None),
    ("ls", None),
    ("find", None),
    ("grep", None),
    ("rg", None),
    ("tree", None),
    (
        "npm",
        Some(&["install", "ci", "test", "run", "audit", "ls", "outdated"]),
    ),
    ("pnpm", Some(&["install", "test", "run", "build"])),
    ("yarn", Some(&["install", "test", "run", "build"])),
    ("pip", Some(&["install", "list", "freeze"])),
    ("pip3", Some(&["install", "list", "freeze"])),
    ("go", Some(&["build", "test", "vet"])),
    ("golangci-lint", Some(&["run"])),
    ("jest", None),
    ("vitest", None),
    ("npx", Some(&["jest", "vitest", "tsc", "eslint"])),
    ("rspec", None),
    ("mvn", None),
    ("mvnw", None),
    ("docker", Some(&["ps", "images"])),
    ("kubectl", Some(&["get"])),
];

/// A shell token with its byte range in the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    /// A word, as written (quotes and escapes still in it), and its unquoted text.
    Word { start: usize, text: String },
    /// `&&`, `||`, `;`, newline, `|`, `|&` or `&`, and where it starts.
    Op(&'static str, usize),
    /// A redirection operator (`>`, `2>&1`, `<`, …) with its target, as written.
    Redirect {
        fd: Option<u32>,
        op: String,
        target: String,
    },
}

/// Why a command line is not taken apart.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A construct the tokenizer does not take apart (named).
    Unparsed(&'static str),
}

/// The simple commands of a line, as written (trimmed), in order; `None` when
/// the line holds a construct the tokenizer does not take apart.
pub fn simple_commands(line: &str) -> Option<Vec<String>> {
    let toks = tokenize(line).ok()?;
    let mut out = Vec::new();
    let mut from = 0;
    for t in &toks {
        if let Tok::Op(op, at) = t {
            out.push(line[from..*at].trim().to_string());
            from = at + op.len();
        }
    }
    out.push(line[from..].trim().to_string());
    out.retain(|c| !c.is_empty());
    Some(out)
}

/// The subcommand: the first word after the program that is not an option (for
/// git, after `-C dir` and `-c key=value`).
fn subcommand(argv: &[String]) -> Option<&str> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if argv[0] == "git" && matches!(a, "-C" | "-c" | "--git-dir" | "--work-tree") {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        return Some(a);
    }
    None
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

const KEYWORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "function", "select", "time", "coproc", "!", "{", "}", "[[", "]]",
];

/// Tokenizes like a POSIX shell reads a line, refusing what it does not take
/// apart.
fn tokenize(line: &str) -> Result<Vec<Tok>, Refusal> {
    let b = line.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut at_command_start = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' => {
                i += 1;
                continue;
            }
            b'\n' | b';' => {
                toks.push(Tok::Op(";", i));
                at_command_start = true;
                i += 1;
                continue;
            }
            b'#' => return Err(Refusal::Unparsed("a comment")),
            b'(' | b')' => return Err(Refusal::Unparsed("a subshell")),
            b'`' => return Err(Refusal::Unparsed("a backtick substitution")),
            b'&' | b'|' => {
                let two = b.get(i + 1).copied();
                let op = match (c, two) {
                    (b'&', Some(b'&')) => "&&",
                    (b'|', Some(b'|')) => "||",
                    (b'|', Some(b'&')) => "|&",
                    (b'&', Some(b'>')) => {
                        // `&>file`: both streams to a file.
                        let (tok, next) = redirect(line, i, None)?;
                        toks.push(tok);
                        i = next;
                        continue;
                    }
                    (b'&', _) => "&",
                    _ => "|",
                };
                toks.push(Tok::Op(op, i));
                i += op.len();
                at_command_start = true;
                continue;
            }
            b'<' | b'>' => {
                let (tok, next) = redirect(line, i, None)?;
                toks.push(tok);
                i = next;
                continue;
            }
            _ => {}
        }
        // A file descriptor number right before a redirection: `2>&1`.
        if c.is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if matches!(b.get(j), Some(b'<' | b'>')) {
                let fd = line[i..j].parse().ok();
                let (tok, next) = redirect(line, j, fd)?;
                toks.push(tok);
                i = next;
                continue;
            }
        }
        let (text, next) = word(line, i)?;
        if at_command_start && KEYWORDS.contains(&text.as_str()) {
            return Err(Refusal::Unparsed("a compound command"));
        }
        if at_command_start && !is_assignment(&text) {
            at_command_start = false;
        }
        toks.push(Tok::Word { start: i, text });
        i = next;
    }
    Ok(toks)
}

/// A redirection at `i` (after its fd number, if any) and its target word.
fn redirect(line: &str, i: usize, fd: Option<u32>) -> Result<(Tok, usize), Refusal> {
    let b = line.as_bytes();
    let mut j = i;
    let mut op = String::new();
    if b[j] == b'&' {
        op.push('&');
        j += 1;
    }
    let dir = b[j];
    op.push(dir as char);
    j += 1;
    match (dir, b.get(j)) {
        (b'<', Some(b'<')) => return Err(Refusal::Unparsed("a heredoc or here-string")),
        (b'<', Some(b'(')) | (b'>', Some(b'(')) => {
            return Err(Refusal::Unparsed("a process substitution"))
        }
        (b'>', Some(b'>')) | (b'>', Some(b'|')) | (b'<', Some(b'>')) => {
            op.push(b[j] as char);
            j += 1;
        }
        _ => {}
    }
    if b.get(j) == Some(&b'&') {
        op.push('&');
        j += 1;
    }
    while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
        j += 1;
    }
    if j >= b.len() || matches!(b[j], b';' | b'&' | b'|' | b'\n' | b'<' | b'>') {
        return Err(Refusal::Unparsed("a redirection without a target"));
    }
    let (target, next) = word(line, j)?;
    Ok((Tok::Redirect { fd, op, target }, next))
}

/// A word at `i`: its unquoted text and where it ends.
fn word(line: &str, i: usize) -> Result<(String, usize), Refusal> {
    let b = line.as_bytes();
    let mut text = String::new();
    let mut j = i;
    while j < b.len() {
        let c = b[j];
        match c {
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' => break,
            b'(' | b')' => return Err(Refusal::Unparsed("a subshell")),
            b'`' => return Err(Refusal::Unparsed("a backtick substitution")),
            b'\\' => {
                match line[j + 1..].chars().next() {
                    None => return Err(Refusal::Unparsed("a trailing backslash")),
                    Some('\n') => return Err(Refusal::Unparsed("a line continuation")),
                    Some(ch) => {
                        text.push(ch);
                        j += 1 + ch.len_utf8();
                    }
                }
                continue;
            }
            b'\'' => {
                let close = line[j + 1..]
                    .find('\'')
                    .ok_or(Refusal::Unparsed("an unclosed quote"))?;
                text.push_str(&line[j + 1..j + 1 + close]);
                j += close + 2;
                continue;
            }
            b'"' => {
                j += 1;
                loop {
                    match b.get(j) {
                        None => return Err(Refusal::Unparsed("an unclosed quote")),
                        Some(b'"') => {
                            j += 1;
                            break;
                        }
                        Some(b'`') => return Err(Refusal::Unparsed("a backtick substitution")),
                        Some(b'$') if b.get(j + 1) == Some(&b'(') => {
                            return Err(Refusal::Unparsed("a command substitution"))
                        }
                        Some(b'$') if b.get(j + 1) == Some(&b'{') => {
                            return Err(Refusal::Unparsed("a parameter expansion"))
                        }
                        Some(b'\\') if j + 1 < b.len() => {
                            let ch = line[j + 1..].chars().next().expect("a character");
                            if !matches!(ch, '"' | '\\' | '$' | '`' | '\n') {
                                text.push('\\');
                            }
                            text.push(ch);
                            j += 1 + ch.len_utf8();
                        }
                        Some(_) => {
                            let ch = line[j..].chars().next().expect("a character");
                            text.push(ch);
                            j += ch.len_utf8();
                        }
                    }
                }
                continue;
            }
            b'$' if matches!(b.get(j + 1), Some(b'(')) => {
                return Err(Refusal::Unparsed("a command substitution"))
            }
            // bash reads `$'…'` with its own escapes and `$"…"` as a translated
            // string; `${…}` may hold any operator (`${x:-a;b}`).
            b'$' if matches!(b.get(j + 1), Some(b'\'' | b'"')) => {
                return Err(Refusal::Unparsed("ANSI-C or locale quoting"))
            }
            b'$' if matches!(b.get(j + 1), Some(b'{')) => {
                return Err(Refusal::Unparsed("a parameter expansion"))
            }
            b'*' | b'?' | b'[' | b'{' | b'~' | b'$' => {
                // Expansions the shell does: the word is kept as written, which is
                // all the rewrite needs (it never re-quotes a word).
                text.push(c as char);
                j += 1;
            }
            _ => {
                let ch = line[j..].chars().next().expect("a character");
                text.push(ch);
                j += ch.len_utf8();
            }
        }
    }
    Ok((text, j))
}

/// The command whose output a line prints, as an argv (program name without
/// its directory, operands unquoted, wrappers such as `python -m`, `npx`,
/// `uv run`, `env`, `timeout` taken off), and whether the agent asked to read
/// a file with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Producer {
    /// The argv of the command that produced the output.
    pub argv: Vec<String>,
    /// True when the command prints a file (or part of one) the agent named:
    /// `cat f`, `head -50 f`, `sed -n 1,80p f`. Such output is what the agent
    /// asked to read, and is shown as it is.
    pub reads_file: bool,
}

/// Programs that print a file they are given, or part of it: what they print
/// is what the agent asked to read.
const READERS: &[&str] = &[
    "cat", "head", "tail", "sed", "awk", "gawk", "less", "more", "bat", "batcat", "nl", "tac",
    "od", "xxd", "hexdump", "jq", "yq", "view", "strings", "column", "fold", "cut",
];

/// True when some word of `line` names a program of [`READERS`]: for a line
/// that is not taken apart, whether it may print a file.
pub fn mentions_reader(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || "|&;()`$".contains(c))
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .any(|w| READERS.contains(&w))
}

/// True when some simple command of `line` runs Lens itself (`lens show …`,
/// `cd x && lens --budget 12k make`, `./out/lens show … | head`): what the
/// line printed is Lens's own output, a view or a stored run, and is never
/// filtered again. A line the tokenizer does not take apart counts when a word
/// in a command's position names `lens`: in doubt, Lens leaves it alone.
pub fn runs_lens(line: &str) -> bool {
    let Ok(toks) = tokenize(line) else {
        return lens_in_command_position(line);
    };
    toks.split(|t| matches!(t, Tok::Op(..)))
        .filter_map(words)
        .map(unwrap)
        .any(|argv| {
            let lens = |w: &String| w.rsplit('/').next() == Some("lens");
            // `xargs lens show`: xargs runs the first word that is not its option.
            lens(&argv[0]) || (argv[0] == "xargs" && argv[1..].iter().any(lens))
        })
}

/// For a line not taken apart: whether a word where a command starts (the
/// line's start, or after an operator, a bracket or a substitution's opening),
/// past assignments, keywords and wrappers, is `lens` or a path ending in it.
fn lens_in_command_position(line: &str) -> bool {
    const SKIP: &[&str] = &[
        "env", "time", "nice", "nohup", "command", "exec", "sudo", "timeout", "xargs", "stdbuf",
    ];
    let mut at_start = true;
    let mut word = String::new();
    let check = |word: &mut String, at_start: &mut bool| {
        if word.is_empty() {
            return false;
        }
        let w: String = word
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        word.clear();
        if !*at_start {
            return false;
        }
        let base = w.rsplit('/').next().unwrap_or(&w);
        if base == "lens" {
            return true;
        }
        let keeps = is_assignment(&w)
            || KEYWORDS.contains(&w.as_str())
            || SKIP.contains(&base)
            || w.starts_with('-')
            || w.parse::<f64>().is_ok();
        *at_start = keeps;
        false
    };
    for c in line.chars() {
        match c {
            ' ' | '\t' => {
                if check(&mut word, &mut at_start) {
                    return true;
                }
            }
            '\n' | ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' => {
                if check(&mut word, &mut at_start) {
                    return true;
                }
                at_start = true;
            }
            _ => word.push(c),
        }
    }
    check(&mut word, &mut at_start)
}

/// The words of a `lens show …` (from `show` on) when that is all the line
/// runs, after any `cd DIR &&` (and with at most `2>&1`): then what the line
/// printed is that command's output alone, and nothing else is mixed in.
pub fn lens_show_only(line: &str) -> Option<Vec<String>> {
    let toks = tokenize(line).ok()?;
    let mut commands: Vec<&[Tok]> = Vec::new();
    let mut from = 0;
    for (i, t) in toks.iter().enumerate() {
        if let Tok::Op(op, _) = t {
            if !matches!(*op, "&&" | ";") {
                return None;
            }
            commands.push(&toks[from..i]);
            from = i + 1;
        }
    }
    commands.push(&toks[from..]);
    commands.retain(|c| !c.is_empty());
    let (last, before) = commands.split_last()?;
    let cd_only = before.iter().all(|c| {
        words(c).is_some_and(|w| w[0] == "cd")
            && !c.iter().any(|t| matches!(t, Tok::Redirect { .. }))
    });
    let merged_only = last.iter().all(|t| match t {
        Tok::Redirect { fd, op, target } => *fd == Some(2) && op == ">&" && target == "1",
        _ => true,
    });
    if !cd_only || !merged_only {
        return None;
    }
    let argv = words(last)?;
    let base = argv[0].rsplit('/').next().unwrap_or(&argv[0]);
    (base == "lens" && argv.get(1).is_some_and(|w| w == "show")).then(|| argv[1..].to_vec())
}

/// Programs that, at the end of a pipeline with no file operand, only pass on
/// (a part of) what the stage before them printed: the shape is that stage's.
const PASS_ON: &[&str] = &["head", "tail", "tee", "cat", "less", "more"];

/// The program whose output `line` prints (the last command of the line; in a
/// pipeline, the last stage that is not merely passing its input on), or
/// `None` when the line is not taken apart exactly or runs nothing.
pub fn producer(line: &str) -> Option<Producer> {
    let toks = tokenize(line).ok()?;
    // The last list element: what follows the last `;`, `&&`, `||` or `&`.
    let from = toks
        .iter()
        .rposition(|t| matches!(t, Tok::Op(op, _) if !matches!(*op, "|" | "|&")))
        .map_or(0, |i| i + 1);
    let stages: Vec<&[Tok]> = toks[from..]
        .split(|t| matches!(t, Tok::Op(..)))
        .filter(|s| !s.is_empty())
        .collect();
    let last = stages.len().checked_sub(1)?;
    for (i, stage) in stages.iter().enumerate().rev() {
        let argv = unwrap(words(stage)?);
        let program = argv.first()?.as_str();
        let operands = argv[1..].iter().any(|a| !a.starts_with('-'));
        let file_in = stage
            .iter()
            .any(|t| matches!(t, Tok::Redirect { op, .. } if op == "<"));
        // tee's operands are where it writes a copy: it still prints its input.
        let passes_on = program == "tee" || (!file_in && !names_file(&argv));
        if i > 0 && PASS_ON.contains(&program) && passes_on {
            continue;
        }
        let reads_file = READERS.contains(&program) && (i == 0 || i == last) && {
            // A reader with a file operand, or fed a file (`< f`), prints the
            // file; one at the end of a pipe prints the stage before it.
            operands || file_in
        };
        return Some(Producer { argv, reads_file });
    }
    None
}

/// True when a pass-on program was given a file of its own (`tail -f log`,
/// `head -5 f`): it then prints that file, not the pipe.
fn names_file(argv: &[String]) -> bool {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        // `-n 5`, `-c 10`: an option with its value.
        if matches!(a, "-n" | "-c" | "--lines" | "--bytes" | "-a") {
            i += 2;
            continue;
        }
        if !a.starts_with('-') && !a.starts_with('+') && a.parse::<i64>().is_err() {
            return true;
        }
        i += 1;
    }
    false
}

/// The words of one simple command, unquoted, `NAME=value` prefixes dropped;
/// `None` when it has no program.
fn words(stage: &[Tok]) -> Option<Vec<String>> {
    let w: Vec<String> = stage
        .iter()
        .filter_map(|t| match t {
            Tok::Word { text, .. } => Some(text.clone()),
            _ => None,
        })
        .skip_while(|w| is_assignment(w))
        .collect();
    (!w.is_empty()).then_some(w)
}

/// Takes off the wrappers that run another program with its output unchanged
/// (`env`, `time`, `timeout 60`, `python -m`, `npx`, `uv run`, `poetry run`,
/// `pnpm exec`, `bundle exec`, …) and a program's directory.
fn unwrap(mut argv: Vec<String>) -> Vec<String> {
    loop {
        if let Some(base) = argv[0].rsplit('/').next().map(str::to_string) {
            argv[0] = base;
        }
        let rest = |skip: usize| -> Option<Vec<String>> {
            (argv.len() > skip).then(|| argv[skip..].to_vec())
        };
        let after_options = |from: usize, with_value: &[&str]| -> Option<Vec<String>> {
            let mut i = from;
            while i < argv.len() && argv[i].starts_with('-') {
                i += if with_value.contains(&argv[i].as_str()) {
                    2
                } else {
                    1
                };
            }
            rest(i)
        };
        let p = argv[0].as_str();
        let sub = argv.get(1).map(String::as_str);
        let next = match p {
            "env" => {
                let mut i = 1;
                while i < argv.len() && (argv[i].starts_with('-') || is_assignment(&argv[i])) {
                    let takes_value =
                        matches!(argv[i].as_str(), "-u" | "--unset" | "-C" | "--chdir");
                    i += if takes_value { 2 } else { 1 };
                }
                rest(i)
            }
            "time" | "nice" | "nohup" | "command" | "exec" | "stdbuf" | "sudo" => {
                after_options(1, &["-n", "-u", "-g"])
            }
            "timeout" => after_options(1, &["-s", "-k", "--signal", "--kill-after"])
                .and_then(|a| (a.len() > 1).then(|| a[1..].to_vec())),
            _ if is_python(p) && sub == Some("-m") => rest(2),
            "npx" | "bunx" | "pnpx" | "uvx" => after_options(1, &["-p", "--package"]),
            "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" if sub == Some("run") => {
                after_options(2, &["--with", "-p", "--python", "--env"])
            }
            "pnpm" | "bundle" | "yarn" if matches!(sub, Some("exec" | "dlx")) => rest(2),
            "bun" if sub == Some("x") => rest(2),
            _ => None,
        };
        match next {
            Some(n) if !n.is_empty() && n != argv => argv = n,
            _ => return argv,
        }
    }
}

fn is_python(p: &str) -> bool {
    p == "python"
        || p.strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// True when Lens has a shape for `argv`'s output: its program (and
/// subcommand) is in [`SHAPED`].
pub fn shaped(argv: &[String]) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    let Some((_, subs)) = SHAPED.iter().find(|(p, _)| p == program) else {
        return false;
    };
    match subs {
        None => true,
        Some(subs) => subcommand(argv).is_some_and(|s| subs.contains(&s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Option<Vec<String>> {
        producer(line).map(|p| p.argv)
    }

    fn v(words: &[&str]) -> Option<Vec<String>> {
        Some(words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn the_producer_is_the_last_command_that_is_not_passing_its_input_on() {
        assert_eq!(argv("git status"), v(&["git", "status"]));
        assert_eq!(
            argv("cd app && python3 -m pytest -q 2>&1 | tail -50"),
            v(&["pytest", "-q"])
        );
        assert_eq!(
            argv("RUST_LOG=1 /usr/bin/cargo build --message-format \"short\""),
            v(&["cargo", "build", "--message-format", "short"])
        );
        assert_eq!(
            argv("cargo fmt; cargo clippy || git diff"),
            v(&["git", "diff"])
        );
        assert_eq!(argv("cargo test | grep FAIL"), v(&["grep", "FAIL"]));
        assert_eq!(
            argv("git log --oneline | head -5"),
            v(&["git", "log", "--oneline"])
        );
        assert_eq!(argv("make 2>&1 | tee build.log"), v(&["make"]));
        assert_eq!(argv("npx --yes tsc --noEmit"), v(&["tsc", "--noEmit"]));
        assert_eq!(argv("uv run --with x pytest -x"), v(&["pytest", "-x"]));
        assert_eq!(argv("pnpm exec vitest run"), v(&["vitest", "run"]));
        assert_eq!(
            argv("timeout 60 go test ./..."),
            v(&["go", "test", "./..."])
        );
        assert_eq!(argv("env -u X A=1 time cargo test"), v(&["cargo", "test"]));
        assert_eq!(argv("PATH=/usr/bin:/bin cargo test"), v(&["cargo", "test"]));
        assert_eq!(argv("ls 1<&-"), v(&["ls"]));
        assert_eq!(argv(""), None);
    }

    #[test]
    fn a_file_the_agent_asked_to_read_is_recognised() {
        for line in [
            "cat src/main.rs",
            "head -100 log.txt",
            "tail -n 50 /var/log/app.log",
            "sed -n 1,80p src/lib.rs",
            "cd a && cat -n x.py",
            "cat src/main.rs | head -40",
            "head -c 300 < data.bin",
            "tail -f app.log | grep ERROR",
            "jq . package.json",
        ] {
            let p = producer(line).unwrap_or_else(|| panic!("{line}"));
            assert!(p.reads_file || line.contains("grep"), "{line}: {p:?}");
        }
        // `tail -f app.log | grep ERROR` prints grep's matches: a search.
        assert!(!producer("tail -f app.log | grep ERROR").unwrap().reads_file);
        for line in [
            "cargo test | tail -5",
            "git log | head",
            "make | cat",
            "ls | sort",
        ] {
            assert!(!producer(line).unwrap().reads_file, "{line}");
        }
    }

    #[test]
    fn what_the_tokenizer_does_not_take_apart_is_not_recognised() {
        for s in [
            "cat <<EOF\nhi\nEOF",
            "(cd x && cargo test)",
            "echo $(git status)",
            "echo `git status`",
            "diff <(git show a) <(git show b)",
            "for f in *.rs; do grep fn $f; done",
            "if true; then cargo build; fi",
            "git status # why",
            "cargo test \\\n --all",
            "grep 'unclosed",
            "{ cargo build; }",
            "f() { ls; }",
            "case x in y) ls;; esac",
            // bash runs this as `git status …; touch PWNED; rm -f a`.
            "git status $'\\'; touch PWNED; rm -f a'",
            "echo ${x:-a;b} && git log",
            "echo \"${x:-a;b}\"",
        ] {
            assert_eq!(producer(s), None, "{s:?}");
            assert!(simple_commands(s).is_none(), "{s:?}");
        }
    }

    #[test]
    fn shaped_commands_are_known_by_program_and_subcommand() {
        let s = |l: &str| shaped(&producer(l).unwrap().argv);
        assert!(s("git -C sub log -5"));
        assert!(s("./mvnw -B install"));
        assert!(s("python -m pytest"));
        assert!(!s("git commit -m x"));
        assert!(!s("echo hi"));
    }

    #[test]
    fn lines_that_run_lens_itself_are_known_wherever_lens_stands() {
        for (line, own) in [
            ("lens show 1a2b3c4d --lines 1-5", true),
            ("cd app && lens show 1a2b3c4d", true),
            ("lens show 1a2b3c4d | head -50", true),
            ("cargo fmt; lens --budget 12k make", true),
            ("LENS_STORE=/tmp/s lens show 1a2b3c4d", true),
            ("./out/lens show 1a2b3c4d --grep x", true),
            ("/usr/bin/lens stats", true),
            ("env A=1 lens --help", true),
            ("timeout 30 lens cargo test 2>&1 | tail -5", true),
            ("echo hi || lens show 1a2b3c4d", true),
            ("echo 1a2b3c4d | xargs -I{} lens show {} --lines 1-9", true),
            // Not taken apart: a word in a command's place still counts.
            ("(cd x && lens show 1a2b3c4d)", true),
            ("for h in a b; do lens show $h; done", true),
            ("echo $(lens show 1a2b3c4d | wc -l)", true),
            // `lens` as an operand, or part of another word, is not Lens.
            ("grep -r lens src", false),
            ("cat lens.toml", false),
            ("cargo run -p lens-cli", false),
            ("git log -- lens-cli/src/show.rs", false),
            ("echo 'lens show x'", false),
            ("(grep lens src)", false),
            ("make", false),
        ] {
            assert_eq!(runs_lens(line), own, "{line}");
        }
    }

    #[test]
    fn a_line_that_only_runs_lens_show_is_taken_apart() {
        let w = |l: &str| lens_show_only(l);
        assert_eq!(
            w("lens show 1a2b3c4d --lines 1-5"),
            v(&["show", "1a2b3c4d", "--lines", "1-5"])
        );
        assert_eq!(
            w("cd /p && ./out/lens show 1a2b3c4d --stream stderr 2>&1"),
            v(&["show", "1a2b3c4d", "--stream", "stderr"])
        );
        for l in [
            "lens show 1a2b3c4d | head",
            "lens show 1a2b3c4d > f",
            "lens show 1a2b3c4d; echo done",
            "echo a && lens show 1a2b3c4d",
            "lens stats",
            "lens --as make",
        ] {
            assert_eq!(w(l), None, "{l}");
        }
    }

    #[test]
    fn simple_commands_are_split_as_written() {
        assert_eq!(
            simple_commands("cd a && cargo test 2>&1 | tail -5; echo 'x;y'").unwrap(),
            ["cd a", "cargo test 2>&1", "tail -5", "echo 'x;y'"]
        );
        assert_eq!(simple_commands("echo $(date)"), None);
    }
}
