//! Lens inside the real Mistral Vibe 3.0.3 (`make agents` puts it in
//! out/agents/venv), as a user installs it: `lens init --agent vibe` into a
//! temp HOME, then Vibe runs a scripted session in headless mode against the
//! project's model server (OpenAI Chat Completions on 127.0.0.1; no
//! credential, no network), once without Lens and once with it. Every
//! permission decision is the same in both arms, what the model reads differs
//! only where Lens answered with a view whose handle `lens show` opens, the
//! model can fetch what a view hides with `lens show`, and uninstall leaves
//! nothing behind. Skipped with one line when Vibe is not installed, unless
//! LENS_REQUIRE_AGENTS=1.

mod agents_ready;
mod arm_root;
mod lens_bin;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use agents_ready::available;
use arm_root::Root;
use harness::agent_cli::{AgentCli, RunOutcome, RunSpec};
use harness::model_server::{Action, Script, Turn};
use regex::Regex;

const CLI: AgentCli = AgentCli::Vibe;

/// Refused by the user's denylist.
const DENIED: &str = "touch denied-a";
/// Allowed by the user's allowlist.
const ALLOWED: &str = "touch allowed-b";
/// No rule: headless Vibe refuses what it would have asked about.
const UNRULED: &str = "touch unruled-c";
/// A git status of 220 changed files.
const BIG: &str = "git status";
/// Exit 3 after the big output.
const FAILING: &str = "git status; exit 3";
/// About 400 KB of lines.
const HUGE: &str = "seq 1 70000";
/// About 100 KB of lines, then exit 1.
const FAILING_HUGE: &str = "seq 1 20000; exit 1";
/// A small output.
const SMALL: &str = "ls";

/// The user's Vibe config: a denylist and an allowlist for the bash tool.
const RULES: &str = "[tools.bash]\ndenylist = [\"touch denied-a\"]\nallowlist = [\"touch allowed-b\", \"git status\", \"exit\", \"seq\", \"ls\"]\n";

struct Arm {
    world: Root,
    lens: bool,
}

impl std::ops::Deref for Arm {
    type Target = Root;

    fn deref(&self) -> &Root {
        &self.world
    }
}

impl Arm {
    fn new(case: &str, lens: bool) -> Arm {
        let name = format!("lens-vibe-{case}-{}", if lens { "lens" } else { "raw" });
        Arm {
            world: Root::new(&name, 220, |i| format!("handler_{i:03}.rs")),
            lens,
        }
    }

    fn run(&self, script: Script, args: &[&str]) -> RunOutcome {
        let mut spec = RunSpec::new("Run the commands.", script, &self.home(), &self.project())
            .args(args.iter().copied());
        for (k, v) in self.lens_env() {
            spec = spec.env(&k, &v);
        }
        spec.extra_path = Some(lens_bin::lens_binary().parent().unwrap().to_path_buf());
        spec.time_limit = std::time::Duration::from_secs(240);
        let out = CLI.run(&spec).unwrap();
        eprintln!(
            "vibe ({}) run: {:.1} s, exit {}, {} requests",
            if self.lens { "with lens" } else { "raw" },
            out.wall.as_secs_f64(),
            out.exit,
            out.requests.len()
        );
        out
    }

    fn touched(&self) -> Vec<&'static str> {
        [DENIED, ALLOWED, UNRULED]
            .into_iter()
            .filter(|c| self.project().join(&c[6..]).exists())
            .collect()
    }
}

fn commands(list: &[&str]) -> Script {
    Script::commands(list.iter().map(|c| c.to_string()).collect(), "Done.")
}

/// The handle in a Lens view, if the text holds one.
fn handle(text: &str) -> Option<String> {
    let at = text.find("[lens: ")?;
    let h = text[at..].find("handle=")? + at + 7;
    Some(text[h..h + 8].to_string())
}

/// What the model read for each call, with the arm's paths made alike.
fn received(arm: &Arm, out: &RunOutcome, n: usize) -> Vec<String> {
    let r = out.tool_results();
    assert_eq!(r.len(), n, "{}", out.describe());
    let root = arm.root.display().to_string();
    let session = Regex::new(r"unified/[0-9a-f-]+/").unwrap();
    r.iter()
        .map(|t| {
            session
                .replace_all(&t.text.replace(&root, "<root>"), "unified/*/")
                .into_owned()
        })
        .collect()
}

/// The full `git status` of an arm's project.
fn git_status(arm: &Arm) -> String {
    let out = Command::new("git")
        .arg("status")
        .current_dir(arm.project())
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

// Vibe 3.0.3 headless in its default mode: the user's denylist refuses one
// command, the allowlist lets one through, one no rule covers is refused
// (headless mode cannot ask), and the allowlisted big outputs run, a failing
// one among them. With Lens the same commands run and are refused in the same
// words; the big outputs reach the model as views inside Vibe's own result
// JSON, the exit code beside them, and `lens show` gives back the output.
#[test]
fn vibe_decides_the_same_with_lens() {
    if !available(CLI) {
        return;
    }
    let list = [
        DENIED,
        ALLOWED,
        UNRULED,
        SMALL,
        BIG,
        FAILING,
        HUGE,
        FAILING_HUGE,
    ];
    let mut got = Vec::new();
    let mut arms = Vec::new();
    for lens in [false, true] {
        let arm = Arm::new("decide", lens);
        arm.write("home/.vibe/config.toml", RULES);
        if lens {
            arm.lens(&["init", "--agent", "vibe", "--global"]);
        }
        let out = arm.run(commands(&list), &["--trust"]);
        got.push((received(&arm, &out, list.len()), arm.touched()));
        arms.push(arm);
    }
    let (with, raw) = (&got[1], &got[0]);
    let arm = &arms[1];
    assert_eq!(with.1, raw.1, "the commands that ran differ with Lens");
    assert_eq!(with.1, [ALLOWED]);
    assert!(raw.0[0].contains("denylist"), "{}", raw.0[0]);
    assert!(raw.0[2].contains("tool_denied"), "{}", raw.0[2]);
    let log = std::fs::read_to_string(arm.root.join("lens/log/runs.jsonl")).unwrap_or_default();
    for c in [DENIED, UNRULED] {
        assert!(
            !log.contains(&format!("\"command\":\"{c}\"")),
            "the refused {c:?} reached the hook:\n{log}"
        );
    }
    for (i, c) in list.iter().enumerate() {
        let (w, r) = (&with.0[i], &raw.0[i]);
        let verdict = if handle(w).is_some() { "view" } else { "same" };
        eprintln!(
            "vibe: {c:<22} raw {:>6} B   with lens {:>6} B   {verdict}",
            r.len(),
            w.len()
        );
        if [BIG, FAILING, HUGE, FAILING_HUGE].contains(c) {
            assert!(handle(w).is_some() && handle(r).is_none(), "{c}: {w}");
            assert!(w.len() < r.len(), "{c}: the view is not smaller:\n{w}");
            // Vibe's result JSON, the view in place of stdout.
            let v: serde_json::Value = serde_json::from_str(w).unwrap();
            assert_eq!(v["command"], *c);
            let code = match *c {
                FAILING => 3,
                FAILING_HUGE => 1,
                _ => 0,
            };
            assert_eq!(v["returncode"], code, "{w}");
            assert_eq!(v["stderr"], "");
            let shown = arm.lens(&["show", &handle(w).unwrap()]);
            if *c == HUGE || *c == FAILING_HUGE {
                let n = if *c == HUGE { 70_000 } else { 20_000 };
                assert_eq!(shown.stdout.iter().filter(|b| **b == b'\n').count(), n);
            } else {
                assert_eq!(String::from_utf8(shown.stdout).unwrap(), git_status(arm));
            }
        } else {
            assert_eq!(w, r, "{c} differs with Lens");
        }
    }
}

/// 1,000 numbered lines: a view hides most of them.
const STEPS: &str = "seq -f 'build step %05g: compiling module with flags -O2 -Wall' 1 1000";

fn step(n: u64) -> String {
    format!("build step {n:05}: compiling module with flags -O2 -Wall")
}

/// The model: runs [`STEPS`], then `lens show H --lines A-B` of 300 lines the
/// view's first long marker hides, then stops.
fn fetching_model() -> Script {
    Script::custom(|turn: &Turn| {
        let marker =
            Regex::new(r"\[lens: elided stdout (\d+)-(\d+) \(.*?handle=([0-9a-f]{8})(?: digest=\d+)?(?: unlisted=\d+)?\]").unwrap();
        match turn.calls_made {
            0 => Action::Shell {
                command: STEPS.into(),
            },
            1 => match turn
                .tool_results
                .first()
                .and_then(|r| marker.captures(&r.text))
            {
                Some(c) => {
                    let a: u64 = c[1].parse().unwrap();
                    Action::Shell {
                        command: format!("lens show {} --lines {}-{}", &c[3], a + 50, a + 349),
                    }
                }
                None => Action::Text {
                    text: "No Lens view came back.".into(),
                },
            },
            _ => Action::Text {
                text: "Done.".into(),
            },
        }
    })
}

// The model reads the view, fetches 300 hidden lines with `lens show` and
// reads exactly those lines, raw (a `lens show` is never filtered again).
#[test]
fn vibe_model_fetches_hidden_lines_with_lens_show() {
    if !available(CLI) {
        return;
    }
    let arm = Arm::new("fetch", true);
    arm.lens(&["init", "--agent", "vibe", "--global"]);
    let out = arm.run(fetching_model(), &["--trust", "--auto-approve"]);
    let r = out.tool_results();
    assert_eq!(r.len(), 2, "{}", out.describe());
    let view: serde_json::Value =
        serde_json::from_str(&r[0].text).unwrap_or_else(|e| panic!("{e}: {}", r[0].text));
    let view = view["stdout"].as_str().unwrap();
    assert!(view.contains("[lens: view of 1000 lines"), "{view}");
    let fetched: serde_json::Value = serde_json::from_str(&r[1].text)
        .unwrap_or_else(|e| panic!("{e}: {}", &r[1].text[..r[1].text.len().min(1500)]));
    let fetched = fetched["stdout"].as_str().unwrap();
    let cmd = out.turns()[1].action.clone();
    let Some(Action::Shell { command }) = cmd else {
        panic!("no lens show: {}", out.describe());
    };
    let range = Regex::new(r"--lines (\d+)-(\d+)").unwrap();
    let c = range.captures(&command).unwrap();
    let (a, b): (u64, u64) = (c[1].parse().unwrap(), c[2].parse().unwrap());
    let lines = |to: u64| -> String { (a..=to).map(|n| step(n) + "\n").collect() };
    assert!(!fetched.contains("[lens: elided") && !fetched.contains("[lens: view"));
    // Lines A-B, or (past what Vibe shows uncut) lines A-L and the marker
    // naming the rest under the same handle.
    if fetched != lines(b) {
        let page = Regex::new(
            r"\[lens: shown stdout (\d+)-(\d+) of \d+ \(lines (\d+)-(\d+) not shown\) handle=([0-9a-f]{8})\]",
        )
        .unwrap();
        let c = page
            .captures(fetched)
            .unwrap_or_else(|| panic!("{command}: neither the lines nor a page:\n{fetched}"));
        let n = |i: usize| c[i].parse::<u64>().unwrap();
        let last = n(2);
        assert_eq!((n(1), n(3), n(4)), (a, last + 1, b), "{}", &c[0]);
        assert!(last >= a + 9, "a page of {} lines", last + 1 - a);
        assert!(view.contains(&c[5]), "another handle: {}", &c[0]);
        assert!(
            fetched.starts_with(&format!("{}{}", lines(last), &c[0])),
            "{fetched}"
        );
    }
    eprintln!(
        "vibe: view {} B; {command}: {} B",
        r[0].text.len(),
        r[1].text.len()
    );
}

/// Every file under `dir`, with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// The files Vibe writes for itself in a session (its logs, its prompt
/// history, the folders it trusts, and config.toml, which it migrates and
/// fills with its default allowlist), which are not Lens's to keep or remove.
fn without_vibes_own(mut t: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    t.retain(|k, _| {
        !(k.starts_with(".vibe/logs")
            || k.starts_with(".vibe/vibehistory")
            || k.starts_with(".vibe/trusted_folders.toml")
            || k == ".vibe/config.toml")
    });
    t
}

// Installed for the user (beside a hooks.toml and AGENTS.md of the user's
// own) and for the project, one session in which the hooks ran, then
// uninstalled: HOME's .vibe and the project are as they were, byte for byte.
#[test]
fn vibe_uninstall_after_a_session_leaves_no_trace() {
    if !available(CLI) {
        return;
    }
    let arm = Arm::new("uninstall", true);
    arm.write("home/.vibe/config.toml", RULES);
    arm.write(
        "home/.vibe/hooks.toml",
        "# mine\n[[hooks]]\nname = \"audit\"\ntype = \"post_agent\"\ncommand = \"true\"\n",
    );
    arm.write("home/.vibe/AGENTS.md", "Answer briefly.\n");
    let before = (without_vibes_own(tree(&arm.home())), tree(&arm.project()));
    arm.lens(&["init", "--agent", "vibe", "--global"]);
    arm.lens(&["init", "--agent", "vibe", "--project"]);
    let out = arm.run(commands(&[BIG]), &["--trust"]);
    let r = out.tool_results();
    assert_eq!(r.len(), 1, "{}", out.describe());
    assert!(handle(&r[0].text).is_some(), "{}", r[0].text);
    for scope in ["--global", "--project"] {
        let said = arm.lens(&["init", "--agent", "vibe", scope, "--uninstall"]);
        let said = String::from_utf8_lossy(&said.stdout).into_owned();
        assert!(!said.contains("edited since"), "{said}");
    }
    let after = (without_vibes_own(tree(&arm.home())), tree(&arm.project()));
    assert_eq!(after, before);
    let config = std::fs::read_to_string(arm.home().join(".vibe/config.toml")).unwrap();
    assert!(!config.contains("lens"), "{config}");
}
