//! Helpers for tests that drive the real `lens` binary with its store, log and
//! config in a temp dir, never the user's.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A sandbox: temp dirs for LENS_STORE, LENS_LOG_DIR and LENS_CONFIG.
pub struct Sandbox {
    pub root: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("lens-it-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Sandbox { root }
    }

    pub fn store(&self) -> PathBuf {
        self.root.join("store")
    }

    pub fn log_dir(&self) -> PathBuf {
        self.root.join("log")
    }

    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// A `lens` command with the sandbox's environment.
    pub fn lens(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lens"));
        c.env("LENS_STORE", self.store())
            .env("LENS_LOG_DIR", self.log_dir())
            .env("LENS_CONFIG", self.config())
            // The sandbox may sit under a checkout (a TMPDIR inside one):
            // git's own ceiling keeps Lens from taking that for the project.
            .env("GIT_CEILING_DIRECTORIES", std::env::temp_dir())
            .current_dir(&self.root)
            .stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.lens().args(args).output().unwrap()
    }

    /// Bytes in the store's files, all directories down.
    pub fn store_bytes(&self) -> u64 {
        fn size(p: &Path) -> u64 {
            match std::fs::read_dir(p) {
                Ok(entries) => entries.flatten().map(|e| size(&e.path())).sum(),
                Err(_) => std::fs::metadata(p).map_or(0, |m| m.len()),
            }
        }
        size(&self.store())
    }

    pub fn runlog(&self) -> String {
        std::fs::read_to_string(self.log_dir().join("runs.jsonl")).unwrap_or_default()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The handle named by the first marker in `text`, if any.
pub fn handle_in(text: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(text);
    let i = s.find("handle=")?;
    Some(s[i + 7..i + 15].to_string())
}

pub fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
}
