//! Writing a file whole or not at all, for `init`'s edits and its record: a
//! leaf, so the agent files and `init` both use it without naming each other.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::platform;

/// Replaces `path` with `bytes` whole or not at all: a temp file beside it,
/// then a rename over it, so a reader (or a second `lens init`) never sees
/// half a file. The file keeps its permission bits and its owner.
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (tmp, mut f) = temp_beside(path)?;
    let done = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| match fs::metadata(path) {
            Ok(m) => {
                platform::keep_owner(&m, &tmp);
                fs::set_permissions(&tmp, m.permissions())
            }
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
pub(crate) fn temp_beside(path: &Path) -> io::Result<(PathBuf, fs::File)> {
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
