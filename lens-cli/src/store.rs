//! The store: every run whose view elides anything is kept whole, one private
//! directory per handle, holding `stdout`, `stderr` and `meta.json`.
//!
//! The directory's creation is the collision check: `create_dir` fails if the handle
//! is taken, and the handle is derived again with another salt. A large output is
//! written here as it arrives ([`RunDir::create_stream`]); a small one after the
//! child exits ([`save`]). Files are created exclusively and never through a
//! symlink, and a store directory that someone else owns or can write to is refused:
//! a store others can plant files in would let them choose what `lens show` prints.
//!
//! Pruning (oldest first, past an age or a total size) runs at most once an hour,
//! after the view is printed, and never removes the run just printed, a run in
//! progress (its Lens alive) or any run younger than an hour: a handle a reader
//! was just shown, or is about to be, must still open. A pruned
//! handle is remembered in `pruned.log`, so `lens show` can say it was pruned.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lens_core::config::StoreCaps;
use lens_core::Handle;
use serde::{Deserialize, Serialize};

use crate::platform;

/// What `meta.json` records about a run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct Meta {
    /// The command line as typed.
    pub argv: Vec<String>,
    /// Working directory of the run.
    pub cwd: String,
    /// The exit code Lens returned: the child's, or 128 + signum.
    pub exit: i32,
    /// The signal that ended the child, if any.
    pub signal: Option<i32>,
    /// The signal that cut Lens's run short, if one did: the output stops where
    /// the child was when it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<i32>,
    /// The caller merged stdout and stderr (`2>&1`): both are in `stdout`, in the
    /// order the command wrote them, and `stderr` is empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
    /// Streams a process the command started kept open after it exited: what was
    /// written to them after Lens stopped waiting is not here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lingered: Vec<String>,
    /// What the run's bound on the store (`[store] max_run_bytes`) left out of
    /// each stream: the stored file holds its lines before the gap, and the
    /// rest passed through to the reader.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unstored: Vec<Unstored>,
    /// Start time, milliseconds since the Unix epoch.
    pub start_ms: u64,
    /// Wall-clock duration in milliseconds.
    pub duration_ms: u64,
    /// Bytes the child wrote to stdout.
    pub stdout_bytes: u64,
    /// Bytes the child wrote to stderr.
    pub stderr_bytes: u64,
    /// Lines in stdout.
    pub stdout_lines: u64,
    /// Lines in stderr.
    pub stderr_lines: u64,
}

/// Counts lines the way markers number them: a final line without a newline counts.
pub fn count_lines(b: &[u8]) -> u64 {
    let n = lens_core::sample::count_newlines(b);
    n + u64::from(!b.is_empty() && !b.ends_with(b"\n"))
}

/// The file that marks a directory as a store Lens initialised: Lens prunes
/// only in a marked store, and only its own run directories there.
const MARK: &str = ".lens-store";

/// The store root, created and marked if missing; an error naming the fix when
/// it is not a directory this user alone can write to, or when it holds files
/// that are not a Lens store's.
pub fn open_root(root: &Path) -> io::Result<()> {
    if root.is_relative() {
        return Err(io::Error::other(format!(
            "LENS_STORE={} is a relative path, so a handle printed here would open only from this directory; set LENS_STORE to an absolute path",
            root.display()
        )));
    }
    platform::create_private_dir(root)?;
    if let Some(why) = platform::unsafe_dir(root) {
        return Err(io::Error::other(format!(
            "{} is refused as the store: {why}; point LENS_STORE at a directory of your own",
            root.display()
        )));
    }
    if fs::symlink_metadata(root.join(MARK)).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    // Unmarked: an empty directory, or a store made before stores were marked
    // (nothing in it but run directories and Lens's own files), is marked now;
    // anything else holds someone's data and is refused.
    if !only_lens_files(root) {
        return Err(io::Error::other(format!(
            "{} is refused as the store: it holds files that are not a Lens store's; point LENS_STORE at an empty or new directory",
            root.display()
        )));
    }
    match platform::create_private_file(&root.join(MARK)) {
        Ok(mut f) => f.write_all(b"A Lens store: lens prunes its run directories here.\n"),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// True when the store's directory is marked as one Lens initialised.
pub fn is_marked(root: &Path) -> bool {
    fs::symlink_metadata(root.join(MARK)).is_ok_and(|m| m.is_file())
}

/// True when every entry of `root` is one Lens makes in a store.
fn only_lens_files(root: &Path) -> bool {
    let Ok(entries) = fs::read_dir(root) else {
        return false;
    };
    entries.filter_map(Result::ok).all(|e| {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            return false;
        };
        match name {
            PRUNE_STAMP | PRUNED_LOG | RUNNING => true,
            n if n == format!("{PRUNED_LOG}.new") => true,
            n => Handle::parse(n).is_some() && is_run_dir(&e.path()),
        }
    })
}

/// True when `dir` is a directory holding nothing but a run's files.
fn is_run_dir(dir: &Path) -> bool {
    if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).all(|e| {
        matches!(
            e.file_name().to_str(),
            Some("stdout" | "stderr" | "meta.json")
        ) && e.file_type().is_ok_and(|t| t.is_file())
    })
}

/// A run's directory in the store, created empty.
#[derive(Debug)]
pub struct RunDir {
    /// The run's handle.
    pub handle: Handle,
    /// Its directory.
    pub dir: PathBuf,
}

impl RunDir {
    /// Creates a fresh run directory; `seed` identifies the run.
    pub fn create(root: &Path, seed: &[&[u8]]) -> io::Result<RunDir> {
        open_root(root)?;
        for salt in 0..64 {
            let handle = Handle::derive(seed, salt);
            let dir = root.join(handle.to_string());
            match platform::create_new_private_dir(&dir) {
                Ok(()) => return Ok(RunDir { handle, dir }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free handle after 64 tries"))
    }

    /// Creates one of the run's files (`stdout`, `stderr`) for writing.
    pub fn create_stream(&self, name: &str) -> io::Result<File> {
        platform::create_private_file(&self.dir.join(name))
    }

    /// Writes `meta.json`, last: a run without it is shown with what it holds.
    /// The run is no longer in progress.
    pub fn write_meta(&self, meta: &Meta) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(meta).map_err(io::Error::other)?;
        let mut f = platform::create_private_file(&self.dir.join("meta.json"))?;
        f.write_all(&json)?;
        f.flush()?;
        self.done();
        Ok(())
    }

    /// Removes the run: it could not be stored whole, or needs no storing.
    pub fn remove(self) {
        let _ = fs::remove_dir_all(&self.dir);
        self.done();
    }

    fn done(&self) {
        if let Some(root) = self.dir.parent() {
            let _ = fs::remove_file(root.join(RUNNING).join(self.handle.to_string()));
        }
    }
}

/// Writes a run held in memory to the store under a fresh handle.
pub fn save(
    root: &Path,
    seed: &[&[u8]],
    meta: &Meta,
    stdout: &[u8],
    stderr: &[u8],
) -> io::Result<Handle> {
    let run = RunDir::create(root, seed)?;
    let written = (|| {
        run.create_stream("stdout")?.write_all(stdout)?;
        run.create_stream("stderr")?.write_all(stderr)?;
        run.write_meta(meta)
    })();
    match written {
        Ok(()) => Ok(run.handle),
        Err(e) => {
            run.remove();
            Err(e)
        }
    }
}

/// The directory of a handle given by a user, or an error naming the fix.
pub fn locate(root: &Path, handle: &str) -> Result<PathBuf, String> {
    let h = Handle::parse(handle).ok_or_else(|| {
        format!("{handle:?} is not a handle; a handle is 8 lowercase hex digits, as printed in a marker")
    })?;
    let dir = root.join(h.to_string());
    let is_run = fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
    if is_run {
        return Ok(dir);
    }
    // A prune may be removing it now: pruned.log is written first.
    if let Some(when) = pruned_at(root, &h) {
        return Err(format!(
            "run {h} was pruned from {} at {when} to keep the store under its caps; raise [store] max_bytes or max_age_days in the config to keep runs longer",
            root.display()
        ));
    }
    Err(format!(
        "no stored run {h} in {}; check the handle, or whether LENS_STORE pointed elsewhere when it ran",
        root.display()
    ))
}

/// A stored run opened for reading: its metadata (defaults and a warning when
/// `meta.json` is missing or damaged) and its two streams.
pub struct Stored {
    /// Its metadata.
    pub meta: Meta,
    /// Why the metadata is a stand-in, when it is.
    pub meta_warning: Option<String>,
    /// The run's directory.
    pub dir: PathBuf,
    /// The run is still going (its Lens is alive): what is stored so far.
    pub in_progress: bool,
}

impl Stored {
    /// Opens one stream's file, never through a symlink. A run in progress
    /// may not have written one yet: it reads as empty.
    pub fn open(&self, name: &str) -> Result<File, String> {
        let path = self.dir.join(name);
        let f = match platform::open_nofollow(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && self.in_progress => {
                platform::open_nofollow(Path::new("/dev/null"))
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            }
            r => r.map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        };
        if self.in_progress && path.file_name() != Some("meta.json".as_ref()) {
            return Ok(f);
        }
        let regular = f.metadata().is_ok_and(|m| m.is_file());
        if !regular {
            return Err(format!("{} is not a regular file", path.display()));
        }
        Ok(f)
    }

    /// Reads one stream whole.
    #[cfg(test)]
    pub fn read(&self, name: &str) -> Result<Vec<u8>, String> {
        let mut f = self.open(name)?;
        let mut v = Vec::new();
        f.read_to_end(&mut v)
            .map_err(|e| format!("cannot read {}: {e}", self.dir.join(name).display()))?;
        Ok(v)
    }
}

/// Opens a stored run. The streams are the record; `meta.json` only describes
/// them, so a damaged one costs the description, not the output.
pub fn load(root: &Path, handle: &str) -> Result<Stored, String> {
    let dir = locate(root, handle)?;
    let path = dir.join("meta.json");
    let text = platform::open_nofollow(&path).and_then(|mut f| {
        let mut v = Vec::new();
        Read::by_ref(&mut f)
            .take(META_MAX + 1)
            .read_to_end(&mut v)?;
        if v.len() as u64 > META_MAX {
            return Err(io::Error::other("it is over the 64 MiB a meta.json may be"));
        }
        Ok(v)
    });
    let in_progress =
        matches!(&text, Err(e) if e.kind() == io::ErrorKind::NotFound) && running(root, handle);
    if in_progress {
        return Ok(Stored {
            meta: Meta::default(),
            meta_warning: Some(format!(
                "run {handle} is still in progress; this is what it has stored so far"
            )),
            dir,
            in_progress,
        });
    }
    let (meta, meta_warning) = match text.map(|t| serde_json::from_slice::<Meta>(&t)) {
        Ok(Ok(m)) => (m, None),
        Ok(Err(e)) => (
            Meta::default(),
            Some(format!(
                "{} is damaged ({e}); the streams are shown as stored",
                path.display()
            )),
        ),
        Err(e) => (
            Meta::default(),
            Some(format!(
                "cannot read {} ({e}); the streams are shown as stored",
                path.display()
            )),
        ),
    };
    Ok(Stored {
        meta,
        meta_warning,
        dir,
        in_progress: false,
    })
}

/// The most `meta.json` Lens reads: the argv it holds can be as long as the
/// system allows a command line to be.
const META_MAX: u64 = 64 << 20;

/// True when the run `handle` is noted as in progress by a Lens still alive.
fn running(root: &Path, handle: &str) -> bool {
    let mut text = Vec::new();
    let read = platform::open_nofollow(&root.join(RUNNING).join(handle))
        .and_then(|f| f.take(1 << 20).read_to_end(&mut text));
    read.is_ok()
        && serde_json::from_slice::<RunningNote>(&text).is_ok_and(|n| platform::alive(n.pid))
}

/// The directory of notes on runs in progress, one file per handle: a run Lens
/// could not finish (killed outright) is found there by the next run.
const RUNNING: &str = ".running";

/// What the note of a run in progress says.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct RunningNote {
    /// Lens's process id.
    pub pid: u32,
    /// The command line.
    pub argv: Vec<String>,
    /// Its working directory.
    pub cwd: String,
    /// When it started, milliseconds since the epoch.
    pub start_ms: u64,
}

/// Notes that the run `h` is in progress; errors are swallowed (the note only
/// serves the recovery of a run killed outright).
pub fn register_running(root: &Path, h: &Handle, note: &[u8]) {
    let dir = root.join(RUNNING);
    if platform::create_private_dir(&dir).is_err() {
        return;
    }
    if let Ok(mut f) = platform::create_private_file(&dir.join(h.to_string())) {
        let _ = f.write_all(note);
    }
}

/// Runs left in progress by a Lens that is gone (killed outright): each gets the
/// `meta.json` its run could not write, saying it was cut short by SIGKILL (the
/// one signal Lens cannot catch), and is returned so the caller logs it.
pub fn recover_killed(root: &Path) -> Vec<(Handle, Meta)> {
    let Ok(entries) = fs::read_dir(root.join(RUNNING)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.filter_map(Result::ok) {
        let Some(h) = e.file_name().to_str().and_then(Handle::parse) else {
            continue;
        };
        let mut text = Vec::new();
        let read =
            platform::open_nofollow(&e.path()).and_then(|f| f.take(1 << 20).read_to_end(&mut text));
        let note: RunningNote = read
            .ok()
            .and_then(|_| serde_json::from_slice(&text).ok())
            .unwrap_or_default();
        if note.pid == std::process::id() || (note.pid != 0 && platform::alive(note.pid)) {
            continue;
        }
        let dir = root.join(h.to_string());
        let _ = fs::remove_file(e.path());
        if !dir.is_dir() || fs::symlink_metadata(dir.join("meta.json")).is_ok() {
            continue;
        }
        let run = RunDir { handle: h, dir };
        let stream = |name: &str| -> (u64, u64, Option<SystemTime>) {
            let Ok(f) = platform::open_nofollow(&run.dir.join(name)) else {
                return (0, 0, None);
            };
            let m = f.metadata().ok();
            let (bytes, lines) = count_file(f);
            (bytes, lines, m.and_then(|m| m.modified().ok()))
        };
        let (ob, ol, ot) = stream("stdout");
        let (eb, el, et) = stream("stderr");
        let last = ot.max(et).map_or(note.start_ms, |t| {
            t.duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        });
        let meta = Meta {
            argv: note.argv,
            cwd: note.cwd,
            exit: 128 + 9,
            signal: None,
            cut_short: Some(9),
            start_ms: note.start_ms,
            duration_ms: last.saturating_sub(note.start_ms),
            stdout_bytes: ob,
            stderr_bytes: eb,
            stdout_lines: ol,
            stderr_lines: el,
            ..Meta::default()
        };
        for name in ["stdout", "stderr"] {
            if fs::symlink_metadata(run.dir.join(name)).is_err() {
                let _ = run.create_stream(name);
            }
        }
        if run.write_meta(&meta).is_ok() {
            found.push((h, meta));
        }
    }
    found
}

/// Bytes and lines (as markers count them) of a stored stream, read in pieces.
fn count_file(mut f: File) -> (u64, u64) {
    let mut buf = vec![0u8; 256 << 10];
    let (mut bytes, mut newlines, mut last) = (0u64, 0u64, b'\n');
    loop {
        match f.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                bytes += n as u64;
                newlines += lens_core::sample::count_newlines(&buf[..n]);
                last = buf[n - 1];
            }
        }
    }
    (bytes, newlines + u64::from(bytes > 0 && last != b'\n'))
}

const PRUNE_STAMP: &str = ".pruned";
const PRUNED_LOG: &str = "pruned.log";
const PRUNE_EVERY: Duration = Duration::from_secs(3600);
/// Runs younger than this are never pruned: their handles were just printed.
pub const GRACE: Duration = Duration::from_secs(3600);
/// `pruned.log` is cut to its newer half past this size.
const PRUNED_LOG_MAX: u64 = 256 << 10;

/// Prunes when the last prune is more than an hour old. Errors are swallowed: the
/// store is a convenience of the run, never a reason for it to fail. `current` is
/// the run just printed, which is never pruned.
pub fn maybe_prune(root: &Path, caps: &StoreCaps, now: SystemTime, current: Option<&Handle>) {
    if platform::unsafe_dir(root).is_some() || !is_marked(root) {
        return;
    }
    let stamp = root.join(PRUNE_STAMP);
    let due = fs::symlink_metadata(&stamp)
        .and_then(|m| m.modified())
        .map(|t| now.duration_since(t).unwrap_or_default() >= PRUNE_EVERY)
        .unwrap_or(true);
    if due && touch(&stamp, now).is_ok() {
        prune(root, caps, now, current);
    }
}

/// Sets the stamp's time, creating it; never writes through a symlink.
fn touch(stamp: &Path, now: SystemTime) -> io::Result<()> {
    let f = match platform::create_private_file(stamp) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let m = fs::symlink_metadata(stamp)?;
            if !m.is_file() {
                return Err(io::Error::other("the prune stamp is not a regular file"));
            }
            platform::open_private_append(stamp)?
        }
        Err(e) => return Err(e),
    };
    f.set_modified(now)
}

/// Removes runs older than the age cap, then the oldest until under the size cap,
/// sparing `current`, every run younger than [`GRACE`] and every run in progress.
pub fn prune(root: &Path, caps: &StoreCaps, now: SystemTime, current: Option<&Handle>) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let current = current.map(|h| h.to_string());
    let mut runs: Vec<(SystemTime, u64, String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            Handle::parse(&name)?;
            let m = fs::symlink_metadata(e.path()).ok()?;
            // Only a directory of Lens's own making: a run's files and nothing else.
            if !m.is_dir() || !is_run_dir(&e.path()) {
                return None;
            }
            let size: u64 = ["stdout", "stderr", "meta.json"]
                .iter()
                .filter_map(|f| fs::symlink_metadata(e.path().join(f)).ok())
                .map(|m| m.len())
                .sum();
            // A run still writing counts toward the total but is never taken:
            // its handle is about to be printed. Its Lens gone, it is not in
            // progress any more.
            let busy = running(root, &name);
            Some((m.modified().ok()?, size, name, busy))
        })
        .collect();
    runs.sort();
    let max_age = Duration::from_secs(caps.max_age_days.saturating_mul(86_400));
    let mut total: u64 = runs.iter().map(|r| r.1).sum();
    let mut pruned = Vec::new();
    for (modified, size, name, busy) in runs {
        let age = now.duration_since(modified).unwrap_or_default();
        let spared = busy || age < GRACE || current.as_deref() == Some(name.as_str());
        if spared || (age <= max_age && total <= caps.max_bytes) {
            continue;
        }
        total = total.saturating_sub(size);
        pruned.push(name);
    }
    if pruned.is_empty() {
        return;
    }
    // Remembered before they go: a `lens show` that finds a run gone while the
    // prune runs is told it was pruned, never that there is no such run.
    remember_pruned(root, &pruned, now);
    for name in &pruned {
        let _ = fs::remove_dir_all(root.join(name));
    }
}

fn remember_pruned(root: &Path, names: &[String], now: SystemTime) {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let path = root.join(PRUNED_LOG);
    let Ok(mut f) = platform::open_private_append(&path) else {
        return;
    };
    let text: String = names.iter().map(|n| format!("{n} {secs}\n")).collect();
    let _ = f.write_all(text.as_bytes());
    // Keep the newer half once the log outgrows its cap.
    let too_big = f.metadata().is_ok_and(|m| m.len() > PRUNED_LOG_MAX);
    if too_big {
        let mut all = Vec::new();
        if f.seek(SeekFrom::Start(0)).is_ok() && f.read_to_end(&mut all).is_ok() {
            let half = all.len() / 2;
            let cut = all[half..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(all.len(), |p| half + p + 1);
            let fresh = root.join(format!("{PRUNED_LOG}.new"));
            let _ = fs::remove_file(&fresh);
            if let Ok(mut n) = platform::create_private_file(&fresh) {
                if n.write_all(&all[cut..]).is_ok() {
                    let _ = fs::rename(&fresh, &path);
                }
            }
        }
    }
}

/// When `h` was pruned, if `pruned.log` says so (UTC, to the minute).
fn pruned_at(root: &Path, h: &Handle) -> Option<String> {
    let mut f = platform::open_nofollow(&root.join(PRUNED_LOG)).ok()?;
    let mut text = String::new();
    Read::by_ref(&mut f)
        .take(PRUNED_LOG_MAX * 2)
        .read_to_string(&mut text)
        .ok()?;
    let name = h.to_string();
    let secs: u64 = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(&name)?.strip_prefix(' ')?.parse().ok())?;
    Some(utc_minute(secs))
}

/// `YYYY-MM-DD HH:MM UTC` for seconds since the epoch (the civil-from-days
/// algorithm, proleptic Gregorian).
pub fn utc_minute(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// What a stream bounded by `[store] max_run_bytes` did not store: bytes
/// `from_byte..to_byte` of the stream, lines `from_line..=to_line`, all of it
/// passed through to the reader as written.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unstored {
    /// `stdout` or `stderr`.
    pub stream: String,
    /// The first byte not stored (0-based offset in the stream).
    pub from_byte: u64,
    /// The byte after the last not stored.
    pub to_byte: u64,
    /// The first line not stored (1-based).
    pub from_line: u64,
    /// The last line not stored.
    pub to_line: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lens-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn meta() -> Meta {
        Meta {
            argv: vec!["x".into()],
            cwd: "/".into(),
            exit: 3,
            start_ms: 1,
            duration_ms: 2,
            stdout_bytes: 3,
            stdout_lines: 1,
            ..Meta::default()
        }
    }

    fn read(root: &Path, h: &Handle, name: &str) -> Vec<u8> {
        load(root, &h.to_string()).unwrap().read(name).unwrap()
    }

    #[test]
    fn round_trips_and_handles_collisions() {
        let root = tmp("rt");
        let a = save(&root, &[b"same"], &meta(), b"out", b"err\xff").unwrap();
        let b = save(&root, &[b"same"], &meta(), b"out2", b"").unwrap();
        assert_ne!(a, b);
        assert_eq!(read(&root, &a, "stdout"), b"out");
        assert_eq!(read(&root, &a, "stderr"), b"err\xff");
        let s = load(&root, &a.to_string()).unwrap();
        assert_eq!(s.meta, meta());
        assert!(s.meta_warning.is_none());
        assert_eq!(platform::mode(&root.join(a.to_string())), Some(0o700));
        assert_eq!(
            platform::mode(&root.join(a.to_string()).join("stdout")),
            Some(0o600)
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn refuses_handles_that_are_not_eight_hex_digits() {
        let root = tmp("bad");
        for h in ["../etc", "ABCDEF12", "1234567", "/etc/passwd"] {
            let e = load(&root, h).err().unwrap();
            assert!(e.contains("not a handle"), "{e}");
        }
        let e = load(&root, "0badc0de").err().unwrap();
        assert!(e.contains("no stored run"), "{e}");
    }

    #[test]
    fn unwritable_store_is_an_error_not_a_panic() {
        let root = tmp("file");
        fs::write(&root, b"a file where the store should be").unwrap();
        assert!(save(&root, &[b"x"], &meta(), b"", b"").is_err());
        fs::remove_file(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_store_others_can_write_to_is_refused_and_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let root = tmp("shared");
        fs::create_dir_all(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
        let e = save(&root, &[b"x"], &meta(), b"a", b"").unwrap_err();
        assert!(e.to_string().contains("others can write to it"), "{e}");
        assert_eq!(platform::mode(&root), Some(0o777));
        assert_eq!(fs::read_dir(&root).unwrap().count(), 0);
        fs::remove_dir_all(&root).unwrap();
    }

    /// Sets a run's directory time, as if it had been written `ago` before now.
    fn age(root: &Path, h: &Handle, ago: Duration) {
        let t = SystemTime::now() - ago;
        let d = File::open(root.join(h.to_string())).unwrap();
        d.set_modified(t).unwrap();
    }

    #[test]
    fn prunes_oldest_first_past_the_size_cap_sparing_young_and_current_runs() {
        let root = tmp("prune");
        let big = vec![b'x'; 1000];
        let old = save(&root, &[b"1"], &meta(), &big, b"").unwrap();
        let older = save(&root, &[b"2"], &meta(), &big, b"").unwrap();
        let young = save(&root, &[b"3"], &meta(), &big, b"").unwrap();
        let current = save(&root, &[b"4"], &meta(), &big, b"").unwrap();
        age(&root, &older, Duration::from_secs(3 * 3600));
        age(&root, &old, Duration::from_secs(2 * 3600));
        age(&root, &current, Duration::from_secs(5 * 3600));
        let caps = StoreCaps {
            max_bytes: 2500,
            max_age_days: 7,
            ..StoreCaps::default()
        };
        prune(&root, &caps, SystemTime::now(), Some(&current));
        // The oldest that is neither young nor current goes first, until the
        // total fits; the young run and the current one stay even over the cap.
        assert!(load(&root, &older.to_string()).is_err());
        assert!(load(&root, &old.to_string()).is_err());
        assert!(load(&root, &young.to_string()).is_ok());
        assert!(load(&root, &current.to_string()).is_ok());
        let e = load(&root, &older.to_string()).err().unwrap();
        assert!(e.contains("was pruned"), "{e}");
        let caps = StoreCaps {
            max_bytes: u64::MAX,
            max_age_days: 0,
            ..StoreCaps::default()
        };
        prune(
            &root,
            &caps,
            SystemTime::now() + Duration::from_secs(7200),
            None,
        );
        assert!(load(&root, &young.to_string()).is_err());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_run_in_progress_is_never_pruned_and_one_whose_lens_died_is() {
        let root = tmp("busy");
        let big = vec![b'x'; 1000];
        let busy = save(&root, &[b"1"], &meta(), &big, b"").unwrap();
        let dead = save(&root, &[b"2"], &meta(), &big, b"").unwrap();
        let note = |pid: u32| {
            serde_json::to_vec(&RunningNote {
                pid,
                ..RunningNote::default()
            })
            .unwrap()
        };
        register_running(&root, &busy, &note(std::process::id()));
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        register_running(&root, &dead, &note(gone_pid));
        age(&root, &busy, Duration::from_secs(30 * 86_400));
        age(&root, &dead, Duration::from_secs(30 * 86_400));
        let caps = StoreCaps {
            max_bytes: 0,
            max_age_days: 1,
            ..StoreCaps::default()
        };
        prune(&root, &caps, SystemTime::now(), None);
        assert!(load(&root, &busy.to_string()).is_ok());
        let e = load(&root, &dead.to_string()).err().unwrap();
        assert!(e.contains("was pruned"), "{e}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_stamp_symlink_is_not_followed() {
        let root = tmp("stamp");
        save(&root, &[b"1"], &meta(), b"x", b"").unwrap();
        let target = tmp("stamp-target");
        fs::write(&target, b"precious").unwrap();
        std::os::unix::fs::symlink(&target, root.join(PRUNE_STAMP)).unwrap();
        let caps = StoreCaps {
            max_bytes: 0,
            max_age_days: 0,
            ..StoreCaps::default()
        };
        maybe_prune(&root, &caps, SystemTime::now(), None);
        assert_eq!(fs::read(&target).unwrap(), b"precious");
        fs::remove_dir_all(&root).unwrap();
        fs::remove_file(&target).unwrap();
    }

    #[test]
    fn a_damaged_meta_costs_the_description_not_the_output() {
        let root = tmp("meta");
        let h = save(&root, &[b"1"], &meta(), b"out\n", b"err\n").unwrap();
        let path = root.join(h.to_string()).join("meta.json");
        let json = fs::read(&path).unwrap();
        fs::write(&path, &json[..json.len() / 2]).unwrap();
        let s = load(&root, &h.to_string()).unwrap();
        assert!(s.meta_warning.as_deref().unwrap().contains("is damaged"));
        assert_eq!(s.read("stdout").unwrap(), b"out\n");
        fs::remove_file(&path).unwrap();
        let s = load(&root, &h.to_string()).unwrap();
        assert!(s.meta_warning.as_deref().unwrap().contains("cannot read"));
        assert_eq!(s.read("stderr").unwrap(), b"err\n");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_large_valid_meta_is_read_whole() {
        let root = tmp("bigmeta");
        let m = Meta {
            argv: vec!["x".repeat(1_200_000)],
            ..meta()
        };
        let h = save(&root, &[b"1"], &m, b"out\n", b"").unwrap();
        let s = load(&root, &h.to_string()).unwrap();
        assert!(s.meta_warning.is_none(), "{:?}", s.meta_warning);
        assert_eq!(s.meta, m);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_pruned_run_is_remembered_before_it_goes() {
        // A show racing the prune must read "was pruned": the log entry exists
        // before the directory is removed. Simulated by a directory that
        // cannot be removed: the entry is there all the same.
        let root = tmp("order");
        let h = save(&root, &[b"1"], &meta(), b"x", b"").unwrap();
        age(&root, &h, Duration::from_secs(3 * 3600));
        let caps = StoreCaps {
            max_bytes: 0,
            max_age_days: 0,
            ..StoreCaps::default()
        };
        prune(&root, &caps, SystemTime::now(), None);
        let e = load(&root, &h.to_string()).err().unwrap();
        assert!(e.contains("was pruned"), "{e}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn counts_lines_like_markers_do() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
    }

    #[test]
    fn utc_minutes() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minute(1_795_000_000), "2026-11-18 11:06 UTC");
    }
}
