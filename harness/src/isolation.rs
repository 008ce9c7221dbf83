//! Where a cell runs. `dir`: a fresh temporary directory on this machine. `vm`: a
//! microVM booted from the image in `image/` (not built yet: its preflight says so,
//! and no cell runs).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// The isolation a sweep asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// A fresh temporary directory per cell.
    Dir,
    /// A microVM per cell.
    Vm,
}

impl Isolation {
    /// Parses `dir` or `vm`.
    pub fn parse(s: &str) -> Option<Isolation> {
        match s {
            "dir" => Some(Isolation::Dir),
            "vm" => Some(Isolation::Vm),
            _ => None,
        }
    }

    /// What is missing for this isolation, if anything, in one line with the fix.
    pub fn preflight(self, repo: &Path) -> Option<String> {
        match self {
            Isolation::Dir => None,
            Isolation::Vm => {
                let manifest = repo.join("image/manifest.json");
                (!manifest.is_file()).then(|| {
                    format!("no microVM image: {} does not exist; the image recipe (make image) is not built yet", manifest.display())
                })
            }
        }
    }

    /// A fresh working directory for one cell.
    pub fn cell_dir(self, root: &Path, name: &str) -> Result<PathBuf> {
        match self {
            Isolation::Dir => {
                let dir = root.join(name);
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir)?;
                Ok(dir)
            }
            Isolation::Vm => {
                bail!("--isolation vm needs the microVM image, which is not built yet")
            }
        }
    }
}
