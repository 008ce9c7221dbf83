//! `lens rewrite`: put `lens` in front of the commands in a shell command line
//! whose output Lens has a shape for, without changing what the shell does.
//!
//! The command line is tokenized the way a POSIX shell would read it (quotes,
//! backslashes, operators, redirections, `NAME=value` prefixes), and anything
//! this tokenizer does not fully understand leaves the whole line alone:
//! heredocs, subshells and groups, command and process substitution,
//! backticks, arithmetic, compound commands (`if`, `for`, `case`, …), comments,
//! functions, line continuations and anything under `lens` already. Of the
//! simple commands it does understand, one is rewritten only when all of these
//! hold:
//!
//! - its program and subcommand are in [`SHAPED`] and it is not interactive;
//! - its stdout reaches the agent: it is not piped into another program
//!   (`cargo test | grep FAIL` keeps cargo's raw bytes for grep; grep, the last
//!   stage, may run under Lens) and neither stdout nor stderr is redirected to a
//!   file (only `2>&1` and input redirections are allowed);
//! - it does not run in the background (`&`).
//!
//! The rewrite inserts `lens ` before the command's first word (after any
//! `NAME=value` prefixes) and changes no other byte, so the shell reads every
//! quote and operator exactly as before. Pure: no I/O.

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

/// Why a command line is left alone.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A construct the tokenizer does not take apart (named).
    Unparsed(&'static str),
    /// Nothing in it has a shape, or every candidate fails a rule.
    Nothing,
}

/// The rewritten command line, or why it is left alone.
pub fn rewrite(line: &str) -> Result<String, Refusal> {
    let mut out = line.to_string();
    for (at, _) in plan(line)?.into_iter().rev() {
        out.insert_str(at, "lens ");
    }
    Ok(out)
}

/// The argv of every simple command of `line` that [`rewrite`] puts `lens` in
/// front of, in order (program name without its directory, operands unquoted), or
/// why the line is left alone. What a replay of a recorded command runs through
/// the filter.
pub fn filtered_argvs(line: &str) -> Result<Vec<Vec<String>>, Refusal> {
    Ok(plan(line)?.into_iter().map(|(_, argv)| argv).collect())
}

/// Where `lens ` goes in `line`, with the argv it then filters.
fn plan(line: &str) -> Result<Vec<(usize, Vec<String>)>, Refusal> {
    let toks = tokenize(line)?;
    let mut inserts = Vec::new();
    // Split into simple commands at operators, remembering what follows each.
    let mut start = 0;
    while start < toks.len() {
        let end = toks[start..]
            .iter()
            .position(|t| matches!(t, Tok::Op(..)))
            .map_or(toks.len(), |p| start + p);
        let next = toks.get(end);
        let piped_out = matches!(next, Some(Tok::Op("|" | "|&", _)));
        let background = matches!(next, Some(Tok::Op("&", _)));
        if let Some(c) = candidate(&toks[start..end]) {
            if !piped_out && !background {
                inserts.push(c);
            }
        }
        start = end + 1;
    }
    if inserts.is_empty() {
        return Err(Refusal::Nothing);
    }
    Ok(inserts)
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

/// Where `lens ` goes in one simple command, if it is to be rewritten, and the
/// argv lens then runs.
fn candidate(cmd: &[Tok]) -> Option<(usize, Vec<String>)> {
    let mut words: Vec<(usize, &str)> = Vec::new();
    for t in cmd {
        match t {
            Tok::Word { start, text } => words.push((*start, text)),
            Tok::Redirect { fd, op, target } => {
                let output = op.starts_with('>') || op.starts_with("&>");
                let merge = *fd == Some(2) && op == ">&" && target == "1";
                if output && !merge {
                    return None;
                }
            }
            Tok::Op(..) => return None,
        }
    }
    // NAME=value prefixes stay in front.
    let first = words.iter().position(|(_, w)| !is_assignment(w))?;
    let (at, program) = words[first];
    if program.contains('/') && !program.starts_with('/') && !program.starts_with("./") {
        return None;
    }
    let program = program.rsplit('/').next().unwrap_or(program);
    if program == "lens" {
        return None;
    }
    let argv: Vec<String> = std::iter::once(program.to_string())
        .chain(words[first + 1..].iter().map(|(_, w)| w.to_string()))
        .collect();
    let (_, subs) = SHAPED.iter().find(|(p, _)| *p == program)?;
    if let Some(subs) = subs {
        let sub = subcommand(&argv)?;
        if !subs.contains(&sub) {
            return None;
        }
    }
    // A command that talks to a person stays as it is. The hook never runs on a
    // terminal's stdin, so prompting commands are judged as on a terminal.
    if crate::interactive::is_interactive(&argv, true) {
        return None;
    }
    Some((at, argv))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filtered_argvs_name_what_lens_would_run() {
        let v = |l: &str| filtered_argvs(l);
        assert_eq!(
            v("cd apps/app && pnpm test NavUser.test.tsx"),
            Ok(vec![vec![
                "pnpm".to_string(),
                "test".into(),
                "NavUser.test.tsx".into()
            ]])
        );
        assert_eq!(
            v(r#"RUST_LOG=1 /usr/bin/cargo build --message-format "short""#),
            Ok(vec![vec![
                "cargo".to_string(),
                "build".into(),
                "--message-format".into(),
                "short".into()
            ]])
        );
        // A piped stage is left alone, so its output reaches the pipe raw.
        assert_eq!(v("find . -name '*.ts' | head -50"), Err(Refusal::Nothing));
        assert_eq!(v("echo hi"), Err(Refusal::Nothing));
        assert!(matches!(v("ls $(pwd) `x`"), Err(Refusal::Unparsed(_))));
    }

    fn rw(s: &str) -> Option<String> {
        rewrite(s).ok()
    }

    #[test]
    fn simple_commands_with_a_shape_are_rewritten() {
        assert_eq!(rw("git status").as_deref(), Some("lens git status"));
        assert_eq!(
            rw("cargo test --workspace").as_deref(),
            Some("lens cargo test --workspace")
        );
        assert_eq!(
            rw("  pytest -x tests/").as_deref(),
            Some("  lens pytest -x tests/")
        );
        assert_eq!(
            rw("RUST_BACKTRACE=1 cargo test").as_deref(),
            Some("RUST_BACKTRACE=1 lens cargo test")
        );
        assert_eq!(
            rw("git -C sub log -5").as_deref(),
            Some("lens git -C sub log -5")
        );
        // The second round's families, and what of them stays alone.
        for (line, want) in [
            ("go vet ./...", Some("lens go vet ./...")),
            ("jest --verbose", Some("lens jest --verbose")),
            ("npx vitest run", Some("lens npx vitest run")),
            ("rspec spec/models", Some("lens rspec spec/models")),
            ("./mvnw -B install", Some("lens ./mvnw -B install")),
            ("docker ps -a", Some("lens docker ps -a")),
            (
                "kubectl get pods -n shop",
                Some("lens kubectl get pods -n shop"),
            ),
            (
                "golangci-lint run ./...",
                Some("lens golangci-lint run ./..."),
            ),
            ("docker run --rm alpine true", None),
            ("kubectl logs web-0", None),
            ("npx prettier --check .", None),
        ] {
            assert_eq!(rw(line).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn compound_lines_rewrite_each_command_that_qualifies() {
        assert_eq!(
            rw("cd app && cargo build 2>&1").as_deref(),
            Some("cd app && lens cargo build 2>&1")
        );
        assert_eq!(
            rw("cargo fmt; cargo clippy || git diff").as_deref(),
            Some("cargo fmt; lens cargo clippy || lens git diff")
        );
    }

    #[test]
    fn a_stage_whose_output_feeds_a_program_keeps_its_bytes() {
        assert_eq!(rw("cargo test | tail -5"), None);
        assert_eq!(rw("git log --oneline | head -5"), None);
        // The last stage's output reaches the agent: it is filtered, and the
        // stage before it still writes its raw bytes into the pipe.
        assert_eq!(
            rw("cargo test | grep FAIL").as_deref(),
            Some("cargo test | lens grep FAIL")
        );
        assert_eq!(
            rw("cat list | grep -n foo").as_deref(),
            Some("cat list | lens grep -n foo")
        );
    }

    #[test]
    fn output_to_a_file_or_the_background_is_left_alone() {
        assert_eq!(rw("cargo test > out.txt"), None);
        assert_eq!(rw("cargo test 2> err.txt"), None);
        assert_eq!(rw("cargo test &> all.txt"), None);
        assert_eq!(rw("cargo test >> log"), None);
        assert_eq!(rw("cargo build &"), None);
        assert_eq!(
            rw("cargo test 2>&1").as_deref(),
            Some("lens cargo test 2>&1")
        );
        assert_eq!(
            rw("grep -rn foo < list").as_deref(),
            Some("lens grep -rn foo < list")
        );
    }

    #[test]
    fn what_the_tokenizer_does_not_take_apart_is_left_alone() {
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
        ] {
            assert!(matches!(rewrite(s), Err(Refusal::Unparsed(_))), "{s:?}");
        }
    }

    #[test]
    fn quotes_escapes_and_expansions_are_kept_byte_for_byte() {
        assert_eq!(
            rw(r#"grep -rn "pub fn \"x\"" 'src dir/' *.rs"#).as_deref(),
            Some(r#"lens grep -rn "pub fn \"x\"" 'src dir/' *.rs"#)
        );
        assert_eq!(
            rw("git log --format='%h %s' -3").as_deref(),
            Some("lens git log --format='%h %s' -3")
        );
        assert_eq!(rw("ls $HOME ~/x").as_deref(), Some("lens ls $HOME ~/x"));
    }

    #[test]
    fn simple_commands_are_split_as_written() {
        assert_eq!(
            simple_commands("cd a && cargo test 2>&1 | tail -5; echo 'x;y'").unwrap(),
            ["cd a", "cargo test 2>&1", "tail -5", "echo 'x;y'"]
        );
        assert_eq!(simple_commands("echo $(date)"), None);
    }

    #[test]
    fn nothing_without_a_shape_interactive_or_under_lens_already() {
        for s in [
            "echo hi",
            "cargo fmt",
            "git commit",
            "git add -p",
            "lens git status",
            "vim x",
            "python",
            "git rebase -i HEAD~3",
            "npm start",
        ] {
            assert_eq!(rw(s), None, "{s}");
        }
        assert_eq!(
            rw("git commit -m 'x' && git log -1").as_deref(),
            Some("git commit -m 'x' && lens git log -1")
        );
    }
}
