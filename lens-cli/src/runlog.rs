//! The run log: one JSON record per run in `runs.jsonl`. Argv is logged, output never.
//!
//! A passthrough record omits exit, duration and byte counts: exec replaced the
//! process, so there is no outcome to report and a placeholder would be a fabricated
//! number in `lens stats`. Writing the log never fails the run.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::platform;

/// Milliseconds since the Unix epoch, as every record and stored run dates itself.
pub(crate) fn now_ms(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One line of `runs.jsonl`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Milliseconds since the Unix epoch when the run started.
    pub ts_ms: u64,
    /// The command line as typed.
    pub argv: Vec<String>,
    /// The level the view was rendered at.
    pub level: u8,
    /// True when the command was exec'd untouched.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub passthrough: bool,
    /// Exit code (absent for passthrough).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// Duration in milliseconds (absent for passthrough).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dur_ms: Option<u64>,
    /// Bytes the child wrote, both streams (absent for passthrough).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_in: Option<u64>,
    /// Bytes Lens printed, both streams (absent for passthrough).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_out: Option<u64>,
    /// Store handle, when the output was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// The signal that cut the run short, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<i32>,
    /// For a record an agent's hook wrote: the agent and the shell command it
    /// saw (argv is then empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<HookSeen>,
    /// True for a `lens show`: `bytes_out` is what it printed of run `handle`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fetch: bool,
    /// The git root (or working directory) the run was in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// A command's output an agent's after-tool hook saw.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct HookSeen {
    /// The agent (`claude`, `codex`, `gemini`, `opencode`).
    pub agent: String,
    /// The shell command line as the agent wrote it.
    pub command: String,
    /// True when the hook answered with a view, which the model then read in
    /// place of the output. Records from before after-tool hooks (which carry
    /// `rewritten` instead) read as not applied: whether a rewrite reached the
    /// model is what those records cannot tell.
    #[serde(default)]
    pub applied: bool,
    /// Why the output was left as the agent had it, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Bytes the agent's model would have read of this result without Lens
    /// (the agent's own cut, preview or limit, from its file in `agents/`).
    /// Absent in records from before it was logged: `lens stats` then falls
    /// back on `bytes_in`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub would_read: Option<u64>,
}

impl Record {
    /// The record of a run exec'd untouched: no exit, duration or byte counts.
    pub fn passthrough(ts_ms: u64, argv: Vec<String>, level: u8) -> Record {
        Record {
            ts_ms,
            argv,
            level,
            passthrough: true,
            exit: None,
            dur_ms: None,
            bytes_in: None,
            bytes_out: None,
            handle: None,
            cut_short: None,
            hook: None,
            fetch: false,
            project: None,
        }
    }

    /// The record of a `lens show` that printed `bytes` of run `handle`.
    pub fn fetch(ts_ms: u64, argv: Vec<String>, handle: String, bytes: u64) -> Record {
        Record {
            fetch: true,
            bytes_out: Some(bytes),
            handle: Some(handle),
            ..Record::passthrough(ts_ms, argv, 3)
        }
        .not_passthrough()
    }

    /// The record of a command's output an agent's hook saw.
    pub fn hook(ts_ms: u64, agent: &str, command: String, applied: bool) -> Record {
        Record {
            hook: Some(HookSeen {
                agent: agent.to_string(),
                command,
                applied,
                raw: None,
                would_read: None,
            }),
            level: 2,
            ..Record::passthrough(ts_ms, Vec::new(), 2)
        }
        .not_passthrough()
    }

    fn not_passthrough(mut self) -> Record {
        self.passthrough = false;
        self
    }
}

/// Appends a record; every error is swallowed (invariant 10).
pub fn append(dir: &Path, record: &Record) {
    let _ = try_append(dir, record);
}

fn try_append(dir: &Path, record: &Record) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let path = dir.join("runs.jsonl");
    // Rotated under a size cap: the log must not grow without end.
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() > ROTATE_AT) {
        let _ = std::fs::rename(&path, dir.join("runs.1.jsonl"));
    }
    // Created 0600 (argv can hold secrets), and never through a symlink.
    let mut f = platform::open_private_append(&path)?;
    // A record cut short by a full disk ends without a newline; the next record
    // must not be glued onto it, so it starts a line of its own.
    let len = f.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        f.seek(SeekFrom::Start(len - 1))?;
        f.read_exact(&mut last)?;
        if last[0] != b'\n' {
            line.insert(0, b'\n');
        }
    }
    // One write per record: appends are atomic per write, so concurrent runs do
    // not interleave, and a write that fails part way is not retried into a
    // second fragment.
    let n = f.write(&line)?;
    if n < line.len() {
        return Err(std::io::Error::other("the run log took part of the record"));
    }
    Ok(())
}

/// Past this size `runs.jsonl` becomes `runs.1.jsonl` (replacing the one
/// before) and a new log starts: the log never holds more than twice this.
pub const ROTATE_AT: u64 = 8 << 20;

/// Reads every record of `runs.1.jsonl` and `runs.jsonl`, oldest first; returns
/// them and the count of lines that did not parse.
#[cfg(test)]
pub fn read(dir: &Path) -> std::io::Result<(Vec<Record>, usize)> {
    let mut records = Vec::new();
    let bad = read_each(dir, |r| records.push(r))?;
    Ok((records, bad))
}

/// The longest line read as a record; a longer one is skipped as unreadable.
const LINE_MAX: usize = 8 << 20;

/// Gives every record of `runs.1.jsonl` and `runs.jsonl` to `f`, oldest first,
/// reading line by line whatever the files' size; returns the count of lines
/// that did not parse (damaged, not UTF-8, or over [`LINE_MAX`]), which are
/// skipped.
pub fn read_each(dir: &Path, mut f: impl FnMut(Record)) -> std::io::Result<usize> {
    use std::io::BufRead;
    let mut bad = 0;
    let mut found = false;
    for name in ["runs.1.jsonl", "runs.jsonl"] {
        let file = match platform::open_nofollow(&dir.join(name)) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        found = true;
        let mut r = std::io::BufReader::with_capacity(1 << 16, file);
        let mut line = Vec::new();
        let mut over = false;
        loop {
            let buf = match r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let end = buf.is_empty();
            let (piece, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], i + 1),
                None => (buf, buf.len()),
            };
            let complete = end || done > piece.len();
            if !over && line.len() + piece.len() <= LINE_MAX {
                line.extend_from_slice(piece);
            } else {
                over = true;
                line.clear();
            }
            r.consume(done);
            if !complete {
                continue;
            }
            if over {
                bad += 1;
            } else if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice(&line) {
                    Ok(rec) => f(rec),
                    Err(_) => bad += 1,
                }
            }
            line.clear();
            over = false;
            if end {
                break;
            }
        }
    }
    if !found {
        return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
    }
    Ok(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passthrough_records_omit_outcomes() {
        let r = Record::passthrough(1, vec!["vim".into()], 2);
        let s = serde_json::to_string(&r).unwrap();
        assert_eq!(
            s,
            r#"{"ts_ms":1,"argv":["vim"],"level":2,"passthrough":true}"#
        );
    }

    #[test]
    fn appends_and_reads_back_skipping_damage() {
        let dir = std::env::temp_dir().join(format!("lens-runlog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let r = Record {
            ts_ms: 1,
            argv: vec!["ls".into()],
            level: 2,
            passthrough: false,
            exit: Some(0),
            dur_ms: Some(3),
            bytes_in: Some(100),
            bytes_out: Some(40),
            handle: Some("0000abcd".into()),
            cut_short: None,
            hook: None,
            fetch: false,
            project: None,
        };
        append(&dir, &r);
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("runs.jsonl"))
            .unwrap()
            .write_all(b"{not json\n{\"ts_ms\":1,\"argv\":[\"cut by a full dis")
            .unwrap();
        append(&dir, &r);
        let (records, bad) = read(&dir).unwrap();
        // The half-written record is one bad line; the record after it is whole.
        assert_eq!(records, vec![r.clone(), r]);
        assert_eq!(bad, 2);
        assert_eq!(platform::mode(&dir.join("runs.jsonl")), Some(0o600));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_log_is_rotated_past_its_cap_and_both_parts_are_read() {
        let dir = std::env::temp_dir().join(format!("lens-runlog-rot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let big = Record::passthrough(1, vec!["x".repeat(1000)], 2);
        let line = serde_json::to_string(&big).unwrap() + "\n";
        let n = ROTATE_AT as usize / line.len() + 2;
        std::fs::write(dir.join("runs.jsonl"), line.repeat(n)).unwrap();
        append(&dir, &Record::passthrough(2, vec!["new".into()], 2));
        assert!(dir.join("runs.1.jsonl").exists());
        assert!(std::fs::metadata(dir.join("runs.jsonl")).unwrap().len() < 200);
        let (records, bad) = read(&dir).unwrap();
        assert_eq!(bad, 0);
        assert_eq!(records.last().unwrap().argv, ["new"]);
        assert_eq!(records.len(), n + 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_bytes_and_cut_characters_cost_their_line_only() {
        let dir = std::env::temp_dir().join(format!("lens-runlog-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let good = serde_json::to_string(&Record::passthrough(1, vec!["ok".into()], 2)).unwrap();
        let mut text = format!("{good}\n").into_bytes();
        text.extend_from_slice(b"{\"ts_ms\":1,\"argv\":[\"\xff\"]}\n");
        // A character cut in two, as a read stopped mid-way leaves it.
        text.extend_from_slice(
            "{\"ts_ms\":1,\"argv\":[\"é"
                .as_bytes()
                .split_last()
                .unwrap()
                .1,
        );
        text.push(b'\n');
        text.extend_from_slice(&vec![b'x'; LINE_MAX + 10]);
        text.push(b'\n');
        text.extend_from_slice(format!("{good}\n{good}").as_bytes());
        std::fs::write(dir.join("runs.jsonl"), &text).unwrap();
        let (records, bad) = read(&dir).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(bad, 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_log_is_not_written_through() {
        let dir = std::env::temp_dir().join(format!("lens-runlog-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("elsewhere");
        std::fs::write(&target, b"precious\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("runs.jsonl")).unwrap();
        append(&dir, &Record::passthrough(0, vec!["x".into()], 2));
        assert_eq!(std::fs::read(&target).unwrap(), b"precious\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_log_dir_is_swallowed() {
        let f = std::env::temp_dir().join(format!("lens-runlog-file-{}", std::process::id()));
        std::fs::write(&f, b"x").unwrap();
        append(&f.join("sub"), &Record::passthrough(0, vec![], 2));
        std::fs::remove_file(&f).unwrap();
    }
}
