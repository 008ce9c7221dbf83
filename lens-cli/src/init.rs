//! `lens init`: install, report or take out what each agent needs (see
//! `agents`). Every file is backed up before its first change; the manifest in
//! Lens's state directory remembers what was changed so `--uninstall` restores
//! the bytes that were there (or, for a file edited since, takes out only Lens's
//! part).
//!
//! An install completes with its record or changes nothing: every file is read
//! and every place a write goes is tried before the first write, each file is
//! replaced whole (a temp file renamed over it), and a write that fails still
//! puts back the ones before it. Installs and uninstalls take a lock in the
//! state directory, one at a time, so two never write back each other's
//! record. A file that is a symlink is edited through: its target changes, the
//! link stays.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::agents::{self, Agent, Change, Edit, Installed, Manifest, Place, Scope};
use crate::args::InitArgs;
use crate::platform;

pub(crate) use crate::files::replace;
use crate::files::temp_beside;
pub use crate::paths::project_root;

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
                crate::capture::say(&format!("lens init: {e}"));
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
            crate::capture::say(&format!("lens init: {}: {e}", agent.name()));
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
        crate::capture::say_out(&format!("lens init: no coding agent found (looked for {} on PATH and in your home directory); name one with --agent", Agent::names(false)));
        return 0;
    }
    for agent in present {
        match agents::edits(agent, scope, place) {
            Ok(edits) => {
                crate::capture::say_out(&format!("{}: would change", agent.name()));
                for e in edits {
                    crate::capture::say_out(&format!(
                        "  {} ({})",
                        e.path.display(),
                        describe(&e.change)
                    ));
                }
                crate::capture::say_out(&format!(
                    "  run: lens init --agent {} --{} [--dry-run to see the diff]",
                    agent.name(),
                    scope_name(scope)
                ));
            }
            Err(e) => crate::capture::say_out(&format!("{}: {e}", agent.name())),
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
        Change::Appended { toml_key, .. } => match toml_key {
            Some(key) => format!("a [[{key}]] entry that runs Lens's hook"),
            None => "a line that makes it read the awareness file".into(),
        },
        Change::File { .. } => "the plugin".into(),
        Change::Placeholder { .. } => "as a finished install leaves it, if not there".into(),
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

/// One file an install changes: the edit, the file it writes (the target
/// when the edit's path is a symlink), what was there and what will be.
struct Planned {
    edit: Edit,
    file: PathBuf,
    old: Option<String>,
    new: String,
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
    let mut planned: Vec<Planned> = Vec::new();
    let mut shares = Vec::new();
    for e in edits {
        // A file with several changes takes them one after the other.
        let earlier = planned.iter().position(|p| p.edit.path == e.path);
        let file = resolve(&e.path);
        let old = match earlier {
            Some(i) => Some(planned[i].new.clone()),
            None => {
                let old = read(&file)?;
                strict_check(agent, &e, old.as_deref())?;
                old
            }
        };
        match agents::apply(old.as_deref(), &e.change) {
            Ok(Some(new)) => match earlier {
                Some(i) => planned[i].new = new,
                None => planned.push(Planned {
                    edit: e,
                    file,
                    old,
                    new,
                }),
            },
            Ok(None) if earlier.is_some() => {}
            // What the agent would make is there already: it is not Lens's.
            Ok(None) if matches!(e.change, Change::Placeholder { .. }) => {}
            Ok(None) => {
                crate::capture::say_out(&format!(
                    "{}: {} already has it",
                    agent.name(),
                    e.path.display()
                ));
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
                        target: None,
                    });
                }
            }
            Err(why) => return Err(format!("{} left alone: {why}", e.path.display())),
        }
    }
    if dry_run {
        for p in &planned {
            crate::capture::say_out(&format!("--- {}", p.edit.path.display()));
            crate::capture::say_out(&format!("+++ {}", p.edit.path.display()));
            crate::capture::print_to(
                lens_core::Stream::Stdout,
                agents::diff(p.old.as_deref().unwrap_or(""), &p.new).as_bytes(),
            );
        }
        return Ok(());
    }
    // Every place a write will go takes one, before the first: an install
    // that cannot finish with its record changes nothing.
    probe(state).map_err(|e| {
        format!(
            "cannot write the record in {} ({e}); nothing changed",
            state.display()
        )
    })?;
    for p in &planned {
        let dir = p.file.parent().unwrap_or(Path::new("."));
        probe(dir).map_err(|e| {
            format!(
                "cannot write {} ({e}); nothing changed",
                p.edit.path.display()
            )
        })?;
    }
    let (done, records) = commit(agent, scope, state, &planned)?;
    manifest.installed.extend(shares);
    manifest.installed.extend(records);
    if let Err(e) = manifest.save(state) {
        undo(&done);
        return Err(format!(
            "cannot save the record of what changed in {} ({e}); nothing changed",
            state.display()
        ));
    }
    for p in &planned {
        crate::capture::say_out(&format!(
            "{}: changed {}",
            agent.name(),
            p.edit.path.display()
        ));
    }
    for line in agents::needs(agent, scope, place) {
        crate::capture::say_out(&format!("{}: {line}", agent.name()));
    }
    if let Some(limits) = agents::limits(agent) {
        crate::capture::say_out(&format!("{}: {limits}", agent.name()));
    }
    Ok(())
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

/// A file written by [`commit`], with what undoes it.
struct Done {
    file: PathBuf,
    old: Option<String>,
    backup: Option<PathBuf>,
    created_dirs: Vec<PathBuf>,
}

/// Writes every planned file (its backup first) and returns what was done
/// with the records to keep. When one fails, the ones already written are
/// put back as they were, so the install changed nothing.
fn commit(
    agent: Agent,
    scope: Scope,
    state: &Path,
    planned: &[Planned],
) -> Result<(Vec<Done>, Vec<Installed>), String> {
    let mut done: Vec<Done> = Vec::new();
    let mut records = Vec::new();
    for p in planned {
        let backup = match &p.old {
            Some(text) => match backup(state, &p.edit.path, text) {
                Ok(b) => Some(b),
                Err(err) => {
                    undo(&done);
                    return Err(format!(
                        "cannot back up {} ({err}); nothing changed",
                        p.edit.path.display()
                    ));
                }
            },
            None => None,
        };
        let created_dirs = missing_dirs(&p.file);
        let this = Done {
            file: p.file.clone(),
            old: p.old.clone(),
            backup,
            created_dirs,
        };
        if let Err(err) = write(&p.file, &p.new) {
            // This file kept its bytes: only its backup and directories go.
            undo_extras(&this);
            undo(&done);
            return Err(format!(
                "cannot write {} ({err}); nothing changed",
                p.edit.path.display()
            ));
        }
        records.push(Installed {
            agent,
            scope,
            path: p.edit.path.clone(),
            created: p.old.is_none(),
            backup: this.backup.clone(),
            written: agents::fingerprint(&p.new),
            created_dirs: this.created_dirs.clone(),
            target: (p.file != p.edit.path).then(|| p.file.clone()),
        });
        done.push(this);
    }
    Ok((done, records))
}

/// Puts back every file in `done`, last first.
fn undo(done: &[Done]) {
    for d in done.iter().rev() {
        match &d.old {
            Some(text) => {
                let _ = write(&d.file, text);
            }
            None => {
                let _ = fs::remove_file(&d.file);
            }
        }
        undo_extras(d);
    }
}

/// Removes a written file's backup and the directories made for it.
fn undo_extras(d: &Done) {
    if let Some(b) = &d.backup {
        let _ = fs::remove_file(b);
    }
    for dir in d.created_dirs.iter().rev() {
        let _ = fs::remove_dir(dir);
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
        // Lens's part is in the link's target, where `init` wrote it.
        let file = rec.target.clone().unwrap_or_else(|| resolve(&rec.path));
        let current = read(&file)?;
        // Another agent's record for the same file (AGENTS.md) keeps it.
        let other = kept.iter_mut().find(|o| o.path == rec.path);
        let shared = other.is_some();
        if let Some(o) = other {
            // The one left behind restores the file when it goes.
            if o.backup.is_none() && !o.created {
                o.backup = rec.backup.clone();
                o.created = rec.created;
                o.created_dirs = rec.created_dirs.clone();
                o.target = rec.target.clone();
            }
        }
        // Changed only as the agent changes every such file: still as written.
        let untouched = current.as_deref().is_some_and(|t| {
            agents::fingerprint(t) == rec.written
                || agents::as_written(agent, t)
                    .is_some_and(|w| agents::fingerprint(&w) == rec.written)
        });
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
            crate::capture::say_out(&format!("--- {}", rec.path.display()));
            crate::capture::say_out(&format!("+++ {}", rec.path.display()));
            crate::capture::print_to(
                lens_core::Stream::Stdout,
                agents::diff(current.as_deref().unwrap_or(""), &new).as_bytes(),
            );
            kept.push(rec);
            continue;
        }
        match restored {
            Some(Some(text)) => write(&file, &text)
                .map_err(|e| format!("cannot write {}: {e}", rec.path.display()))?,
            Some(None) => {
                // A file Lens created through a link goes; the link stays.
                let _ = fs::remove_file(&file);
                dirs.extend(rec.created_dirs.iter().cloned());
            }
            None => {}
        }
        if !untouched && !shared {
            crate::capture::say_out(&format!(
                "{}: {} was edited since init; took out Lens's part only",
                agent.name(),
                rec.path.display()
            ));
        } else {
            crate::capture::say_out(&format!(
                "{}: restored {}",
                agent.name(),
                rec.path.display()
            ));
        }
    }
    // Files Lens's part is in without a record (installed by hand, or the state
    // directory was cleared): take out Lens's part.
    for e in &edits {
        if done_paths.contains(&e.path) || dry_run {
            continue;
        }
        let file = resolve(&e.path);
        if let Ok(Some(text)) = read(&file) {
            let lens_owned = matches!(e.change, Change::File { contents } if text == contents);
            if lens_owned {
                let _ = fs::remove_file(&file);
                crate::capture::say_out(&format!("{}: removed {}", agent.name(), e.path.display()));
            } else if let Some(new) = agents::remove(&text, &e.change).filter(|n| *n != text) {
                if !matches!(e.change, Change::File { .. }) {
                    write(&file, &new)
                        .map_err(|err| format!("cannot write {}: {err}", e.path.display()))?;
                    crate::capture::say_out(&format!(
                        "{}: took Lens's part out of {}",
                        agent.name(),
                        e.path.display()
                    ));
                }
            }
        }
    }
    // The directories `init` made, once every file in them is gone: deepest
    // first. What the agent made in one of them because Lens's files were
    // there (OpenCode's install of its plugin package) goes with it.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        if !dry_run {
            for made in agents::made_by_agent(agent, &d) {
                let _ = if made.is_dir() {
                    fs::remove_dir_all(&made)
                } else {
                    fs::remove_file(&made)
                };
                crate::capture::say_out(&format!("{}: removed {}", agent.name(), made.display()));
            }
        }
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

/// Where `path` leads once the symlinks it is are followed: the file `init`
/// reads and writes, so a link (into a dotfiles repository) is edited through
/// and stays a link. A link to a file not there yet leads to where it would be.
fn resolve(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    // As many hops as the kernel follows before it calls it a loop.
    for _ in 0..40 {
        match fs::read_link(&p) {
            Ok(to) => p = p.parent().unwrap_or(Path::new("")).join(to),
            Err(_) => break,
        }
    }
    p
}

/// Writes `text` to `path`, creating its directories.
fn write(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    replace(path, text.as_bytes())
}

/// Fails unless a file can be made in `dir`, or in the nearest directory above
/// it that exists (where `init` would make the rest).
fn probe(dir: &Path) -> io::Result<()> {
    let mut d = dir;
    while fs::symlink_metadata(d).is_err() {
        match d.parent() {
            Some(p) if !p.as_os_str().is_empty() => d = p,
            _ => break,
        }
    }
    let (tmp, f) = temp_beside(&d.join("probe"))?;
    drop(f);
    fs::remove_file(tmp)
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
    fn a_write_that_fails_puts_back_the_ones_before_it() {
        let base = scratch("rollback");
        let kept = base.join("kept.md");
        fs::write(&kept, "# Mine\n").unwrap();
        fs::write(base.join("blocker"), "").unwrap();
        let plan = |path: PathBuf, old: Option<&str>| Planned {
            edit: Edit {
                path: path.clone(),
                change: Change::Block { preamble: "" },
            },
            file: path,
            old: old.map(String::from),
            new: "lens\n".into(),
        };
        let planned = [
            plan(kept.clone(), Some("# Mine\n")),
            plan(base.join("new/dir/made.md"), None),
            // Under a regular file: this write fails after two succeeded.
            plan(base.join("blocker/x.json"), None),
        ];
        let state = base.join("state");
        let err = match commit(Agent::Claude, Scope::Project, &state, &planned) {
            Err(e) => e,
            Ok(_) => panic!("a write under a file succeeded"),
        };
        assert!(
            err.contains("blocker/x.json") && err.ends_with("nothing changed"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&kept).unwrap(), "# Mine\n");
        assert_eq!(names(&base), ["blocker", "kept.md", "state"]);
        assert!(names(&state.join("init-backups")).is_empty());
        fs::remove_dir_all(&base).unwrap();
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
