//! The lens binary the end-to-end tests put in front of the harness: the one
//! cargo built beside the test, built first if it is missing or older than the
//! sources of lens-cli and lens-core (`cargo test -p harness` builds the
//! libraries, not the binary, so after a rebase a stale `lens` would answer
//! for code that is no longer there).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

/// The newest modification time of the files under `dir`.
fn newest(dir: &Path) -> Option<SystemTime> {
    let mut best = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        let t = if p.is_dir() {
            newest(&p)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok()
        };
        best = best.max(t);
    }
    best
}

pub fn lens_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let lens = exe.parent().unwrap().parent().unwrap().join("lens");
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let sources = ["lens-cli", "lens-core"]
                .iter()
                .filter_map(|c| newest(&root.join(c)))
                .max();
            let built = std::fs::metadata(&lens).and_then(|m| m.modified()).ok();
            if built.is_none() || sources > built {
                let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
                assert!(Command::new(cargo)
                    .args(["build", "-p", "lens-cli"])
                    .status()
                    .unwrap()
                    .success());
            }
            lens
        })
        .clone()
}
