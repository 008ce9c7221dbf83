//! Where Lens keeps things: `LENS_STORE`, `LENS_LOG_DIR` and `LENS_CONFIG` when set,
//! else the XDG directories, else the usual places under `$HOME`.

use std::env;
use std::path::{Path, PathBuf};

fn xdg(var: &str, fallback: &str) -> PathBuf {
    match env::var_os(var).filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(env::var_os("HOME").unwrap_or_else(|| "/tmp".into())).join(fallback),
    }
}

/// A directory named in the environment, made absolute against the working
/// directory: a handle printed in one directory must open from any other.
fn from_env(var: &str) -> Option<PathBuf> {
    let p = env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)?;
    if p.is_absolute() {
        return Some(p);
    }
    Some(env::current_dir().map_or(p.clone(), |d| d.join(&p)))
}

/// The home directory (`$HOME`), where agents keep their settings.
pub fn home() -> PathBuf {
    PathBuf::from(env::var_os("HOME").unwrap_or_else(|| "/".into()))
}

/// The store: one directory per run. A relative `LENS_STORE` stays relative:
/// the store refuses to take runs there (see [`crate::store::open_root`]), since
/// a handle it printed would open only from the directory it was printed in.
pub fn store() -> PathBuf {
    env::var_os("LENS_STORE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| xdg("XDG_CACHE_HOME", ".cache").join("lens/store"))
}

/// The directory holding `runs.jsonl`.
pub fn log_dir() -> PathBuf {
    from_env("LENS_LOG_DIR").unwrap_or_else(|| xdg("XDG_STATE_HOME", ".local/state").join("lens"))
}

/// The configuration file.
pub fn config() -> PathBuf {
    from_env("LENS_CONFIG")
        .unwrap_or_else(|| xdg("XDG_CONFIG_HOME", ".config").join("lens/config.toml"))
}

/// The project root for `--project`: the git root above `cwd`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}
