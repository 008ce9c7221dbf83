//! `lens init`: install, report or take out what each agent needs (see
//! `agents`). Every file is backed up before its first change; the manifest in
//! Lens's state directory remembers what was changed so `--uninstall` restores
//! the bytes that were there (or, for a file edited since, takes out only Lens's
//! part).
//!
//! Installs and uninstalls take a lock in the state directory, one at a time,
//! so two never write back each other's record; each file, the record
//! included, is replaced whole (a temp file renamed over it).

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::agents::{self, Agent, Change, Edit, Installed, Manifest, Place, Scope};
use crate::args::InitArgs;
use crate::platform;

/// Runs `lens init`; returns the exit code. `state` holds the manifest and the
/// backups.
pub fn run(a: &InitArgs, place: &Place, state: &Path) -> i32 {
    if a.agents.is_empty() {
        return report(a.scope, place);
    }
    let _held = if a.dry_run {
        None
    } else {
        match lock(state) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("lens init: {e}");
                return 1;
            }
        }
    };
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
        match OpenOptions::new().write(true).create_new(true).open(&b) {
            Ok(mut f) => {
                let wrote = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
                if wrote.is_err() {
                    let _ = fs::remove_file(&b);
                }
                return wrote.map(|()| b);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
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

/// Writes `text` to `path`, creating its directories.
fn write(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    replace(path, text.as_bytes())
}

/// Replaces `path` with `bytes` whole or not at all: a temp file beside it,
/// then a rename over it, so a reader (or a second `lens init`) never sees
/// half a file. The file keeps its permission bits.
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (tmp, mut f) = temp_beside(path)?;
    let done = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| match fs::metadata(path) {
            Ok(m) => fs::set_permissions(&tmp, m.permissions()),
            Err(_) => Ok(()),
        })
        .and_then(|()| fs::rename(&tmp, path));
    if done.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    done
}

/// A new file in `path`'s directory named for this process and a count, so
/// no other writer (another `lens init`, another thread) can have it.
fn temp_beside(path: &Path) -> io::Result<(PathBuf, fs::File)> {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new(""));
    let name = path
        .file_name()
        .map_or_else(|| "lens".into(), |n| n.to_string_lossy());
    loop {
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}-{n}.lens-tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            // A file left by a process of the same id long gone: the next count.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// How long `init` waits for another `init` to finish with the record.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// Takes the install lock in `state`: every install and uninstall reads the
/// record, changes files and writes the record back, so two at once would each
/// write back a record without the other's files. Held until the file drops;
/// a holder that died holds nothing (see [`platform::try_lock`]).
fn lock(state: &Path) -> Result<fs::File, String> {
    let path = state.join("init.lock");
    let file = fs::create_dir_all(state)
        .and_then(|()| {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
        })
        .map_err(|e| {
            format!(
                "cannot use the state directory {} ({e}); nothing changed; point LENS_LOG_DIR at a directory you can write",
                state.display()
            )
        })?;
    let start = Instant::now();
    loop {
        match platform::try_lock(&file) {
            Ok(true) => return Ok(file),
            Ok(false) if start.elapsed() < LOCK_WAIT => thread::sleep(Duration::from_millis(10)),
            Ok(false) => {
                return Err(format!(
                    "another lens init held {} for {}s; nothing changed; run it again once that one ends",
                    path.display(),
                    LOCK_WAIT.as_secs()
                ))
            }
            Err(e) => {
                return Err(format!(
                    "cannot lock {} ({e}); nothing changed",
                    path.display()
                ))
            }
        }
    }
}

/// The project root for `--project`: the git root above `cwd`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lens-init-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_leaves_no_temp_file() {
        let base = scratch("replace");
        let f = base.join("settings.json");
        fs::write(&f, "{}").unwrap();
        let mut p = fs::metadata(&f).unwrap().permissions();
        p.set_readonly(true);
        fs::set_permissions(&f, p).unwrap();
        let before = platform::mode(&f);
        replace(&f, b"{\"a\": 1}").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "{\"a\": 1}");
        assert_eq!(platform::mode(&f), before);
        assert!(fs::metadata(&f).unwrap().permissions().readonly());
        assert_eq!(names(&base), ["settings.json"]);
        fs::remove_dir_all(&base).unwrap();
    }
}
