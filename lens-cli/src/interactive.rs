//! Which commands pass through untouched, by exec: the ones that talk to a person.
//!
//! Filtering a command that prompts hangs the user's terminal behind a pipe, so a
//! doubtful case passes through. The rules read the subcommand and its flags, not the
//! program alone: `git add -p` prompts per hunk, `git log -p` is output; bare `python`
//! is a session, `python script.py` a batch job. One table, in one place.
//!
//! Commands that run until stopped pass through too: dev servers, watch and
//! follow modes. Lens shows a view when a command ends, so under the filter they
//! would show nothing for as long as they run (`npm run dev` would never print its
//! URL). `cargo run` and `go run` are not among them: what they print is mostly
//! the build (errors an agent needs ranked), and a server run that way is the
//! exception; run one as `lens --level 3 cargo run` or without Lens.

/// When a rule applies.
#[derive(Debug, Clone, Copy)]
enum When {
    /// Always interactive.
    Always,
    /// When any of these flags is present.
    AnyFlag(&'static [&'static str]),
    /// When none of these flags is present.
    NoFlag(&'static [&'static str]),
    /// When the command has no operand and none of these flags (a bare REPL).
    Bare(&'static [&'static str]),
    /// When stdin is a terminal and none of these flags is present: it prompts then.
    PromptsOnTty(&'static [&'static str]),
    /// When the first operand is one of these (`npm run dev`).
    Operand(&'static [&'static str]),
    /// When there is no operand, or the first is one of these (`vite`, `vite dev`).
    BareOr(&'static [&'static str]),
}

/// One row: program, optional subcommand, condition.
struct Rule(&'static str, Option<&'static str>, When);

const REPL_BATCH_FLAGS: &[&str] = &[
    "-c",
    "-m",
    "-e",
    "--eval",
    "-p",
    "--print",
    "-r",
    "--version",
    "-V",
    "--help",
    "-h",
];

#[rustfmt::skip]
const RULES: &[Rule] = &[
    Rule("git", Some("add"), When::AnyFlag(&["-p", "--patch", "-i", "--interactive", "-e", "--edit"])),
    Rule("git", Some("rebase"), When::AnyFlag(&["-i", "--interactive"])),
    Rule("git", Some("commit"), When::NoFlag(&["-m", "--message", "-F", "--file", "-C", "--reuse-message", "--no-edit", "--fixup", "--dry-run"])),
    Rule("git", Some("checkout"), When::AnyFlag(&["-p", "--patch"])),
    Rule("git", Some("restore"), When::AnyFlag(&["-p", "--patch"])),
    Rule("git", Some("reset"), When::AnyFlag(&["-p", "--patch"])),
    Rule("git", Some("stash"), When::AnyFlag(&["-p", "--patch"])),
    Rule("git", Some("clean"), When::AnyFlag(&["-i", "--interactive"])),
    Rule("git", Some("mergetool"), When::Always),
    Rule("git", Some("difftool"), When::Always),
    Rule("python", None, When::Bare(REPL_BATCH_FLAGS)),
    Rule("python3", None, When::Bare(REPL_BATCH_FLAGS)),
    Rule("node", None, When::Bare(REPL_BATCH_FLAGS)),
    Rule("irb", None, When::Always),
    Rule("ghci", None, When::Always),
    Rule("lua", None, When::Bare(REPL_BATCH_FLAGS)),
    Rule("bash", None, When::Bare(&["-c", "--version"])),
    Rule("sh", None, When::Bare(&["-c"])),
    Rule("zsh", None, When::Bare(&["-c", "--version"])),
    Rule("psql", None, When::NoFlag(&["-c", "--command", "-f", "--file", "-l", "--list", "--version", "-V"])),
    Rule("mysql", None, When::NoFlag(&["-e", "--execute", "--version", "-V"])),
    Rule("sqlite3", None, When::Bare(&["-version", "--version"])),
    Rule("vi", None, When::Always),
    Rule("vim", None, When::Always),
    Rule("nvim", None, When::Always),
    Rule("nano", None, When::Always),
    Rule("emacs", None, When::Always),
    Rule("micro", None, When::Always),
    Rule("hx", None, When::Always),
    Rule("less", None, When::Always),
    Rule("more", None, When::Always),
    Rule("most", None, When::Always),
    Rule("man", None, When::Always),
    Rule("ssh", None, When::Always),
    Rule("mosh", None, When::Always),
    Rule("telnet", None, When::Always),
    Rule("top", None, When::Always),
    Rule("htop", None, When::Always),
    Rule("btop", None, When::Always),
    Rule("watch", None, When::Always),
    Rule("tmux", None, When::Always),
    Rule("screen", None, When::Always),
    Rule("fzf", None, When::Always),
    Rule("sudo", None, When::PromptsOnTty(&["-n", "--non-interactive"])),
    Rule("su", None, When::Always),
    Rule("passwd", None, When::Always),
    Rule("npm", Some("init"), When::PromptsOnTty(&["-y", "--yes"])),
    Rule("cargo", Some("login"), When::PromptsOnTty(&[])),
    Rule("gh", Some("auth"), When::PromptsOnTty(&["--with-token"])),
    Rule("docker", Some("login"), When::PromptsOnTty(&["--password-stdin"])),
    Rule("apt", Some("install"), When::PromptsOnTty(&["-y", "--yes", "--assume-yes"])),
    Rule("apt-get", Some("install"), When::PromptsOnTty(&["-y", "--yes", "--assume-yes"])),
    Rule("rm", None, When::PromptsOnTty(&["-f", "--force"])),
    // Dev servers, watch and follow modes: they run until stopped.
    Rule("npm", Some("run"), When::Operand(DEV_SCRIPTS)),
    Rule("npm", Some("run-script"), When::Operand(DEV_SCRIPTS)),
    Rule("npm", Some("start"), When::Always),
    Rule("pnpm", Some("run"), When::Operand(DEV_SCRIPTS)),
    Rule("pnpm", Some("start"), When::Always),
    Rule("pnpm", Some("dev"), When::Always),
    Rule("pnpm", Some("serve"), When::Always),
    Rule("yarn", Some("run"), When::Operand(DEV_SCRIPTS)),
    Rule("yarn", Some("start"), When::Always),
    Rule("yarn", Some("dev"), When::Always),
    Rule("yarn", Some("serve"), When::Always),
    Rule("bun", Some("run"), When::Operand(DEV_SCRIPTS)),
    Rule("bun", Some("dev"), When::Always),
    Rule("bun", Some("start"), When::Always),
    Rule("vite", None, When::BareOr(&["dev", "serve", "preview"])),
    Rule("next", Some("dev"), When::Always),
    Rule("next", Some("start"), When::Always),
    Rule("nuxt", Some("dev"), When::Always),
    Rule("nuxi", Some("dev"), When::Always),
    Rule("astro", Some("dev"), When::Always),
    Rule("ng", Some("serve"), When::Always),
    Rule("webpack", Some("serve"), When::Always),
    Rule("webpack", None, When::AnyFlag(&["--watch", "-w"])),
    Rule("webpack-dev-server", None, When::Always),
    Rule("tsc", None, When::AnyFlag(&["--watch", "-w"])),
    Rule("jest", None, When::AnyFlag(&["--watch", "--watchAll"])),
    Rule("vitest", Some("watch"), When::Always),
    Rule("vitest", Some("dev"), When::Always),
    Rule("nodemon", None, When::Always),
    Rule("cargo", Some("watch"), When::Always),
    Rule("kubectl", Some("logs"), When::AnyFlag(&["-f", "--follow"])),
    Rule("kubectl", Some("port-forward"), When::Always),
    Rule("kubectl", None, When::AnyFlag(&["-w", "--watch", "--watch-only"])),
    Rule("tail", None, When::AnyFlag(&["-f", "-F", "--follow"])),
    Rule("journalctl", None, When::AnyFlag(&["-f", "--follow"])),
    Rule("dmesg", None, When::AnyFlag(&["-w", "--follow"])),
    Rule("docker", Some("logs"), When::AnyFlag(&["-f", "--follow"])),
    Rule("docker", Some("attach"), When::Always),
    Rule("docker-compose", Some("up"), When::NoFlag(&["-d", "--detach"])),
    Rule("docker-compose", Some("logs"), When::AnyFlag(&["-f", "--follow"])),
    Rule("flask", Some("run"), When::Always),
    Rule("uvicorn", None, When::Always),
    Rule("gunicorn", None, When::Always),
    Rule("rails", Some("server"), When::Always),
    Rule("rails", Some("s"), When::Always),
    Rule("hugo", Some("server"), When::Always),
    Rule("jekyll", Some("serve"), When::Always),
    Rule("mkdocs", Some("serve"), When::Always),
    Rule("ping", None, When::NoFlag(&["-c", "--count", "-w", "--deadline"])),
];

/// npm scripts that start a server or a watcher.
const DEV_SCRIPTS: &[&str] = &["dev", "start", "serve", "watch", "preview", "develop"];

/// True when `argv` should pass through by exec instead of being filtered.
pub fn is_interactive(argv: &[String], stdin_is_tty: bool) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    let program = first.rsplit('/').next().unwrap_or(first);
    let args = &argv[1..];
    for Rule(prog, sub, when) in RULES {
        if *prog != program {
            continue;
        }
        let rest = match sub {
            None => args,
            Some(s) => match subcommand(program, args) {
                Some((i, found)) if found == *s => &args[i + 1..],
                _ => continue,
            },
        };
        let applies = match when {
            When::Always => true,
            When::AnyFlag(flags) => has_any(rest, flags),
            When::NoFlag(flags) => !has_any(rest, flags),
            When::Bare(flags) => !has_any(rest, flags) && !rest.iter().any(|a| !a.starts_with('-')),
            When::PromptsOnTty(flags) => stdin_is_tty && !has_any(rest, flags),
            When::Operand(names) => first_operand(rest).is_some_and(|o| names.contains(&o)),
            When::BareOr(names) => first_operand(rest).is_none_or(|o| names.contains(&o)),
        };
        if applies {
            return true;
        }
    }
    false
}

/// The first argument that is not a flag, before any `--`.
fn first_operand(args: &[String]) -> Option<&str> {
    args.iter()
        .take_while(|a| a.as_str() != "--")
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
}

/// The subcommand and its index, skipping git's global options (`git -C dir add -p`).
fn subcommand<'a>(program: &str, args: &'a [String]) -> Option<(usize, &'a str)> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            return Some((i, a));
        }
        // Global options of git that take a separate value.
        if program == "git"
            && matches!(a, "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace")
        {
            i += 1;
        }
        i += 1;
    }
    None
}

/// True when any of `flags` is present: exactly, as `--flag=value`, or inside a
/// cluster of short flags (`-am` holds `-m`).
fn has_any(args: &[String], flags: &[&str]) -> bool {
    args.iter().take_while(|a| a.as_str() != "--").any(|a| {
        flags.iter().any(|f| {
            if a == f {
                return true;
            }
            if f.starts_with("--") {
                return a.strip_prefix(f).is_some_and(|r| r.starts_with('='));
            }
            if f.len() == 2 && a.starts_with('-') && !a.starts_with("--") && a.len() > 2 {
                // -am / -mMessage: a short flag inside a cluster.
                let letter = f.as_bytes()[1];
                return a.as_bytes()[1..].contains(&letter)
                    && a.as_bytes()[1].is_ascii_alphabetic();
            }
            false
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(cmd: &str, tty: bool) -> bool {
        let argv: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        is_interactive(&argv, tty)
    }

    #[test]
    fn git_reads_the_subcommand() {
        assert!(i("git add -p", false));
        assert!(i("git -C repo add --patch", false));
        assert!(i("git rebase -i HEAD~3", false));
        assert!(i("git commit", false));
        assert!(i("git commit -v", false));
        assert!(!i("git commit -m x", false));
        assert!(!i("git commit -am x", false));
        assert!(!i("git commit --message=x", false));
        assert!(!i("git log -p", false));
        assert!(!i("git add .", false));
        assert!(!i("git rebase main", false));
    }

    #[test]
    fn bare_repls_but_not_scripts() {
        for c in [
            "python",
            "python3",
            "node",
            "irb",
            "psql",
            "python3 -q",
            "sh",
        ] {
            assert!(i(c, false), "{c}");
        }
        for c in [
            "python script.py",
            "python3 -m pytest",
            "node -e 1",
            "psql -c select",
            "sh -c true",
            "bash build.sh",
        ] {
            assert!(!i(c, false), "{c}");
        }
    }

    #[test]
    fn editors_pagers_remote_and_monitors() {
        for c in [
            "vim a.rs",
            "less log",
            "ssh host",
            "top",
            "htop",
            "watch ls",
            "/usr/bin/nano x",
        ] {
            assert!(i(c, false), "{c}");
        }
    }

    #[test]
    fn servers_watchers_and_followers_pass_through() {
        for c in [
            "npm run dev",
            "npm run start",
            "npm run serve",
            "npm run-script dev",
            "npm start",
            "pnpm dev",
            "pnpm run dev",
            "pnpm start",
            "yarn dev",
            "yarn start",
            "yarn run serve",
            "bun dev",
            "vite",
            "vite dev",
            "vite --open",
            "vite preview",
            "next dev",
            "next start",
            "nuxt dev",
            "astro dev",
            "ng serve",
            "webpack serve",
            "webpack --watch",
            "webpack-dev-server",
            "tsc --watch",
            "tsc -w",
            "tsc -p . --watch",
            "jest --watch",
            "vitest watch",
            "nodemon app.js",
            "cargo watch -x test",
            "kubectl get pods -w",
            "kubectl get pods --watch",
            "kubectl logs -f pod/x",
            "kubectl port-forward svc/x 8080:80",
            "tail -f log",
            "tail -F log",
            "tail -n 5 -f log",
            "tail --follow=name log",
            "journalctl -f",
            "dmesg -w",
            "docker logs -f c",
            "docker logs --follow c",
            "docker attach c",
            "docker-compose up",
            "docker-compose logs -f",
            "flask run",
            "uvicorn app:app",
            "gunicorn app:app",
            "rails server",
            "rails s",
            "hugo server",
            "jekyll serve",
            "mkdocs serve",
            "ping host",
            "watch ls",
        ] {
            assert!(i(c, false), "{c}");
        }
        for c in [
            "npm run build",
            "npm run test",
            "npm test",
            "npm install",
            "pnpm build",
            "yarn build",
            "yarn run lint",
            "vite build",
            "next build",
            "tsc",
            "tsc -p .",
            "jest",
            "webpack",
            "kubectl get pods",
            "kubectl logs pod/x",
            "kubectl apply -f x.yaml",
            "tail -n 5 log",
            "docker logs c",
            "docker-compose up -d",
            "docker-compose logs",
            "journalctl -u x",
            "ping -c 3 host",
            "cargo run",
            "cargo build",
            "rails test",
        ] {
            assert!(!i(c, false), "{c}");
        }
    }

    #[test]
    fn prompts_only_matter_on_a_terminal() {
        assert!(i("npm init", true));
        assert!(!i("npm init", false));
        assert!(!i("npm init -y", true));
        assert!(i("apt-get install x", true));
        assert!(!i("apt-get install -y x", true));
        assert!(!i("cargo build", true));
    }
}
