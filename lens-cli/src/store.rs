//! The store: every run whose view elides anything is kept whole, one private
//! directory per handle, holding `stdout`, `stderr` and `meta.json`.
//!
//! The directory's creation is the collision check: `create_dir` fails if the handle
//! is taken, and the handle is derived again with another salt. Pruning (oldest first,
//! past an age or a total size) runs at most once an hour, after the view is printed.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use lens_core::config::StoreCaps;
use lens_core::Handle;
use serde::{Deserialize, Serialize};

use crate::platform;

/// What `meta.json` records about a run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The command line as typed.
    pub argv: Vec<String>,
    /// Working directory of the run.
    pub cwd: String,
    /// The exit code Lens returned: the child's, or 128 + signum.
    pub exit: i32,
    /// The signal that ended the child, if any.
    pub signal: Option<i32>,
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

/// A stored run read back.
pub struct Stored {
    /// Its metadata.
    pub meta: Meta,
    /// The raw stdout.
    pub stdout: Vec<u8>,
    /// The raw stderr.
    pub stderr: Vec<u8>,
}

/// Counts lines the way markers number them: a final line without a newline counts.
pub fn count_lines(b: &[u8]) -> u64 {
    let n = b.iter().filter(|&&c| c == b'\n').count() as u64;
    n + u64::from(!b.is_empty() && !b.ends_with(b"\n"))
}

/// Writes a run to the store under a fresh handle. `seed` identifies the run.
pub fn save(
    root: &Path,
    seed: &[&[u8]],
    meta: &Meta,
    stdout: &[u8],
    stderr: &[u8],
) -> io::Result<Handle> {
    platform::create_private_dir(root)?;
    for salt in 0..64 {
        let handle = Handle::derive(seed, salt);
        let dir = root.join(handle.to_string());
        match platform::create_new_private_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
        let written = write_all(&dir, meta, stdout, stderr);
        if let Err(e) = written {
            let _ = fs::remove_dir_all(&dir);
            return Err(e);
        }
        return Ok(handle);
    }
    Err(io::Error::other("no free handle after 64 tries"))
}

fn write_all(dir: &Path, meta: &Meta, stdout: &[u8], stderr: &[u8]) -> io::Result<()> {
    write_file(&dir.join("stdout"), stdout)?;
    write_file(&dir.join("stderr"), stderr)?;
    let json = serde_json::to_vec_pretty(meta).map_err(io::Error::other)?;
    // meta.json last: a run directory without it is incomplete and never read.
    write_file(&dir.join("meta.json"), &json)
}

fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    f.flush()
}

/// The directory of a handle given by a user, or an error naming the fix.
pub fn locate(root: &Path, handle: &str) -> Result<PathBuf, String> {
    let h = Handle::parse(handle).ok_or_else(|| {
        format!("{handle:?} is not a handle; a handle is 8 lowercase hex digits, as printed in a marker")
    })?;
    let dir = root.join(h.to_string());
    if dir.join("meta.json").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "no stored run {h} in {}; it may have been pruned, or LENS_STORE points elsewhere",
            root.display()
        ))
    }
}

/// Reads a stored run.
pub fn load(root: &Path, handle: &str) -> Result<Stored, String> {
    let dir = locate(root, handle)?;
    let read = |name: &str| {
        fs::read(dir.join(name))
            .map_err(|e| format!("cannot read {}: {e}", dir.join(name).display()))
    };
    let meta: Meta = serde_json::from_slice(&read("meta.json")?).map_err(|e| {
        format!(
            "{} is damaged ({e}); the run cannot be shown",
            dir.join("meta.json").display()
        )
    })?;
    Ok(Stored {
        meta,
        stdout: read("stdout")?,
        stderr: read("stderr")?,
    })
}

const PRUNE_STAMP: &str = ".pruned";
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Prunes when the last prune is more than an hour old. Errors are swallowed: the
/// store is a convenience of the run, never a reason for it to fail.
pub fn maybe_prune(root: &Path, caps: &StoreCaps, now: SystemTime) {
    let stamp = root.join(PRUNE_STAMP);
    let due = fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .map(|t| now.duration_since(t).unwrap_or_default() >= PRUNE_EVERY)
        .unwrap_or(true);
    if due {
        let _ = fs::write(&stamp, b"");
        prune(root, caps, now);
    }
}

/// Removes runs older than the age cap, then the oldest until under the size cap.
pub fn prune(root: &Path, caps: &StoreCaps, now: SystemTime) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let mut runs: Vec<(SystemTime, u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().and_then(Handle::parse).is_some())
        .filter_map(|e| {
            let path = e.path();
            let modified = fs::metadata(&path).and_then(|m| m.modified()).ok()?;
            let size: u64 = ["stdout", "stderr", "meta.json"]
                .iter()
                .filter_map(|f| fs::metadata(path.join(f)).ok())
                .map(|m| m.len())
                .sum();
            Some((modified, size, path))
        })
        .collect();
    runs.sort();
    let max_age = Duration::from_secs(caps.max_age_days.saturating_mul(86_400));
    let mut total: u64 = runs.iter().map(|r| r.1).sum();
    for (modified, size, path) in runs {
        let old = now.duration_since(modified).unwrap_or_default() > max_age;
        if (old || total > caps.max_bytes) && fs::remove_dir_all(&path).is_ok() {
            total = total.saturating_sub(size);
        }
    }
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
            signal: None,
            start_ms: 1,
            duration_ms: 2,
            stdout_bytes: 3,
            stderr_bytes: 0,
            stdout_lines: 1,
            stderr_lines: 0,
        }
    }

    #[test]
    fn round_trips_and_handles_collisions() {
        let root = tmp("rt");
        let a = save(&root, &[b"same"], &meta(), b"out", b"err\xff").unwrap();
        let b = save(&root, &[b"same"], &meta(), b"out2", b"").unwrap();
        assert_ne!(a, b);
        let s = load(&root, &a.to_string()).unwrap();
        assert_eq!(s.stdout, b"out");
        assert_eq!(s.stderr, b"err\xff");
        assert_eq!(s.meta, meta());
        assert_eq!(platform::mode(&root.join(a.to_string())), Some(0o700));
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

    #[test]
    fn prunes_oldest_first_past_the_size_cap() {
        let root = tmp("prune");
        let big = vec![b'x'; 1000];
        let first = save(&root, &[b"1"], &meta(), &big, b"").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let second = save(&root, &[b"2"], &meta(), &big, b"").unwrap();
        let caps = StoreCaps {
            max_bytes: 1500,
            max_age_days: 7,
        };
        prune(&root, &caps, SystemTime::now());
        assert!(load(&root, &first.to_string()).is_err());
        assert!(load(&root, &second.to_string()).is_ok());
        let caps = StoreCaps {
            max_bytes: u64::MAX,
            max_age_days: 0,
        };
        prune(&root, &caps, SystemTime::now() + Duration::from_secs(10));
        assert!(load(&root, &second.to_string()).is_err());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn counts_lines_like_markers_do() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
    }
}
