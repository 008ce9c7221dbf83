//! `lens init`: install, report or take out what each agent needs (see
//! `agents`). Every file is backed up before its first change; the manifest in
//! Lens's state directory remembers what was changed so `--uninstall` restores
//! the bytes that were there (or, for a file edited since, takes out only Lens's
//! part).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::agents::{self, Agent, Change, Edit, Installed, Manifest, Place, Scope};
use crate::args::InitArgs;

/// Runs `lens init`; returns the exit code. `state` holds the manifest and the
/// backups.
pub fn run(a: &InitArgs, place: &Place, state: &Path) -> i32 {
    if a.agents.is_empty() {
        return report(a.scope, place);
    }
    let mut failed = false;
    for &agent in &a.agents {
        let result = if a.uninstall {
            uninstall(agent, a.scope, place, state, a.dry_run)
        } else {
            install(agent, a.scope, place, state, a.dry_run)
        };
        if let Err(e) = result {
            eprintln!("lens init: {}: {e}", agent.name());
            failed = true;
        }
    }
    i32::from(failed)
}

/// With no `--agent`: which agents are here and what `init` would do for each.
fn report(scope: Scope, place: &Place) -> i32 {
    let present: Vec<Agent> = Agent::ALL
        .into_iter()
        .filter(|a| a.present(&place.home))
        .collect();
    if present.is_empty() {
        println!(
            "lens init: no coding agent found (looked for claude, codex, gemini, cursor and opencode on PATH and in your home directory); name one with --agent"
        );
        return 0;
    }
    for agent in present {
        match agents::edits(agent, scope, place) {
            Ok(edits) => {
                println!("{}: would change", agent.name());
                for e in edits {
                    println!("  {} ({})", e.path.display(), describe(&e.change));
                }
                println!(
                    "  run: lens init --agent {} --{} [--dry-run to see the diff]",
                    agent.name(),
                    scope_name(scope)
                );
            }
            Err(e) => println!("{}: {e}", agent.name()),
        }
    }
    0
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Global => "global",
        Scope::Project => "project",
    }
}

fn describe(c: &Change) -> String {
    match c {
        Change::Block { .. } => "the awareness block".into(),
        Change::Hook {
            event,
            matcher,
            command,
            ..
        } => {
            format!("a {event} hook on {matcher}: {command}")
        }
        Change::ListItem { keys, item } => format!("{item} in {}", keys.join(".")),
        Change::Member { keys, key, value } => {
            format!("\"{key}\": \"{value}\" in {}", keys.join("."))
        }
        Change::File { .. } => "the plugin".into(),
    }
}

fn read(path: &Path) -> Result<Option<String>, String> {
    match fs::read(path) {
        Ok(b) => String::from_utf8(b)
            .map(Some)
            .map_err(|_| format!("{} is not UTF-8 text; left alone", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn install(
    agent: Agent,
    scope: Scope,
    place: &Place,
    state: &Path,
    dry_run: bool,
) -> Result<(), String> {
    let edits = agents::edits(agent, scope, place)?;
    let mut manifest = Manifest::load(state);
    // Every file's new contents first: a file that will not take its change
    // stops the agent's install before anything is written.
    let mut planned: Vec<(Edit, Option<String>, String)> = Vec::new();
    let mut shares = Vec::new();
    for e in edits {
        // A file with several changes takes them one after the other.
        let earlier = planned.iter().position(|(p, _, _)| p.path == e.path);
        let old = match earlier {
            Some(i) => Some(planned[i].2.clone()),
            None => {
                let old = read(&e.path)?;
                strict_check(agent, &e, old.as_deref())?;
                old
            }
        };
        match agents::apply(old.as_deref(), &e.change) {
            Ok(Some(new)) => match earlier {
                Some(i) => planned[i].2 = new,
                None => planned.push((e, old, new)),
            },
            Ok(None) if earlier.is_some() => {}
            Ok(None) => {
                println!("{}: {} already has it", agent.name(), e.path.display());
                // Another agent's block in a file they share (AGENTS.md): this
                // agent needs it too, so taking the other out keeps it.
                let theirs = manifest
                    .installed
                    .iter()
                    .any(|r| r.path == e.path && (r.agent, r.scope) != (agent, scope));
                let ours = manifest
                    .installed
                    .iter()
                    .any(|r| r.path == e.path && (r.agent, r.scope) == (agent, scope));
                if theirs && !ours {
                    shares.push(Installed {
                        agent,
                        scope,
                        path: e.path.clone(),
                        created: false,
                        backup: None,
                        written: agents::fingerprint(old.as_deref().unwrap_or("")),
                        created_dirs: Vec::new(),
                    });
                }
            }
            Err(why) => return Err(format!("{} left alone: {why}", e.path.display())),
        }
    }
    if dry_run {
        for (e, old, new) in &planned {
            println!("--- {}", e.path.display());
            println!("+++ {}", e.path.display());
            print!("{}", agents::diff(old.as_deref().unwrap_or(""), new));
        }
        return Ok(());
    }
    manifest.installed.extend(shares);
    for (e, old, new) in planned {
        let backup = match &old {
            Some(text) => Some(backup(state, &e.path, text).map_err(|err| {
                format!(
                    "cannot back up {} ({err}); nothing changed in it",
                    e.path.display()
                )
            })?),
            None => None,
        };
        let created_dirs = missing_dirs(&e.path);
        write(&e.path, &new).map_err(|err| format!("cannot write {}: {err}", e.path.display()))?;
        manifest.installed.push(Installed {
            agent,
            scope,
            path: e.path.clone(),
            created: old.is_none(),
            backup,
            written: agents::fingerprint(&new),
            created_dirs,
        });
        println!("{}: changed {}", agent.name(), e.path.display());
    }
    if let Some(needs) = agents::needs(agent, scope) {
        println!("{}: {needs}", agent.name());
    }
    manifest.save(state).map_err(|e| {
        format!(
            "cannot save the record of what changed in {} ({e})",
            state.display()
        )
    })
}

/// Refuses a JSON settings file the agent reads strictly when it has what
/// only a JSONC reader takes: the agent would refuse the whole file, Lens's
/// hook with it, though `init` said it was installed.
fn strict_check(agent: Agent, e: &Edit, old: Option<&str>) -> Result<(), String> {
    let json = matches!(
        e.change,
        Change::Hook { .. } | Change::ListItem { .. } | Change::Member { .. }
    );
    let (Some(who), Some(text), true) = (agents::strict_reader(agent), old, json) else {
        return Ok(());
    };
    match agents::not_strict(text) {
        Some(what) => Err(format!(
            "{} has {what}, which {who} does not accept; fix the file and run lens init again",
            e.path.display()
        )),
        None => Ok(()),
    }
}

fn uninstall(
    agent: Agent,
    scope: Scope,
    place: &Place,
    state: &Path,
    dry_run: bool,
) -> Result<(), String> {
    let mut manifest = Manifest::load(state);
    let edits = agents::edits(agent, scope, place)?;
    let (mine, mut kept): (Vec<Installed>, Vec<Installed>) =
        std::mem::take(&mut manifest.installed)
            .into_iter()
            .partition(|r| r.agent == agent && r.scope == scope);
    let mut done_paths = Vec::new();
    let mut dirs = Vec::new();
    for rec in mine {
        let changes: Vec<Change> = edits
            .iter()
            .filter(|e| e.path == rec.path)
            .map(|e| e.change.clone())
            .collect();
        let current = read(&rec.path)?;
        // Another agent's record for the same file (AGENTS.md) keeps it.
        let other = kept.iter_mut().find(|o| o.path == rec.path);
        let shared = other.is_some();
        if let Some(o) = other {
            // The one left behind restores the file when it goes.
            if o.backup.is_none() && !o.created {
                o.backup = rec.backup.clone();
                o.created = rec.created;
                o.created_dirs = rec.created_dirs.clone();
            }
        }
        let untouched = current.as_deref().map(agents::fingerprint) == Some(rec.written.clone());
        let restored: Option<Option<String>> = if shared {
            None
        } else if untouched {
            // Put back exactly what was there.
            Some(match &rec.backup {
                Some(b) => {
                    Some(read(b)?.ok_or_else(|| format!("the backup {} is gone", b.display()))?)
                }
                None => None,
            })
        } else {
            // Edited since: take out only Lens's part.
            current.as_ref().and_then(|text| {
                let mut out: Option<String> = None;
                for c in &changes {
                    let from = out.as_deref().unwrap_or(text);
                    if let Some(t) = agents::remove(from, c) {
                        out = Some(t);
                    }
                }
                out.map(Some)
            })
        };
        done_paths.push(rec.path.clone());
        if dry_run {
            let new = restored.clone().flatten().unwrap_or_default();
            println!("--- {}", rec.path.display());
            println!("+++ {}", rec.path.display());
            print!("{}", agents::diff(current.as_deref().unwrap_or(""), &new));
            kept.push(rec);
            continue;
        }
        match restored {
            Some(Some(text)) => write(&rec.path, &text)
                .map_err(|e| format!("cannot write {}: {e}", rec.path.display()))?,
            Some(None) => {
                let _ = fs::remove_file(&rec.path);
                dirs.extend(rec.created_dirs.iter().cloned());
            }
            None => {}
        }
        if !untouched && !shared {
            println!(
                "{}: {} was edited since init; took out Lens's part only",
                agent.name(),
                rec.path.display()
            );
        } else {
            println!("{}: restored {}", agent.name(), rec.path.display());
        }
    }
    // Files Lens's part is in without a record (installed by hand, or the state
    // directory was cleared): take out Lens's part.
    for e in &edits {
        if done_paths.contains(&e.path) || dry_run {
            continue;
        }
        if let Ok(Some(text)) = read(&e.path) {
            let lens_owned = matches!(e.change, Change::File { contents } if text == contents);
            if lens_owned {
                let _ = fs::remove_file(&e.path);
                println!("{}: removed {}", agent.name(), e.path.display());
            } else if let Some(new) = agents::remove(&text, &e.change).filter(|n| *n != text) {
                if !matches!(e.change, Change::File { .. }) {
                    write(&e.path, &new)
                        .map_err(|err| format!("cannot write {}: {err}", e.path.display()))?;
                    println!(
                        "{}: took Lens's part out of {}",
                        agent.name(),
                        e.path.display()
                    );
                }
            }
        }
    }
    // The directories `init` made, once every file in them is gone: deepest first.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        let _ = fs::remove_dir(d);
    }
    manifest.installed = kept;
    if dry_run {
        return Ok(());
    }
    manifest
        .save(state)
        .map_err(|e| format!("cannot save the record in {} ({e})", state.display()))
}

/// Copies a file's text to the backups under `state`; returns where.
fn backup(state: &Path, path: &Path, text: &str) -> io::Result<PathBuf> {
    let dir = state.join("init-backups");
    fs::create_dir_all(&dir)?;
    let name = path.display().to_string().replace(['/', '\\', ':'], "_");
    for n in 0..1000 {
        let b = dir.join(format!("{n}{name}"));
        if !b.exists() {
            fs::write(&b, text)?;
            return Ok(b);
        }
    }
    Err(io::Error::other("no free backup name"))
}

/// The directories above `path` that do not exist yet, outermost first.
fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, text)
}

/// The project root for `--project`: the git root above `cwd`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}
