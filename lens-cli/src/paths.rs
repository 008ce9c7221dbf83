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
    git_root(cwd).unwrap_or_else(|| cwd.to_path_buf())
}

/// The git root at or above `cwd`: the nearest directory holding `.git`.
/// Like git, the search never climbs into a directory named in
/// `GIT_CEILING_DIRECTORIES` (colon-separated absolute paths), so a project
/// inside another's tree, or a temp dir under a checkout, is answered as git
/// itself would answer it.
pub fn git_root(cwd: &Path) -> Option<PathBuf> {
    let ceilings = std::env::var_os("GIT_CEILING_DIRECTORIES").unwrap_or_default();
    let ceilings: Vec<PathBuf> = std::env::split_paths(&ceilings)
        .filter(|c| c.is_absolute())
        .collect();
    git_root_below(cwd, &ceilings)
}

fn git_root_below(cwd: &Path, ceilings: &[PathBuf]) -> Option<PathBuf> {
    for d in cwd.ancestors() {
        if d.join(".git").exists() {
            return Some(d.to_path_buf());
        }
        match d.parent() {
            Some(up) if ceilings.iter().any(|c| c == up) => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_git_root_search_stops_below_a_ceiling_as_git_does() {
        let root = std::env::temp_dir().join(format!("lens-paths-{}", std::process::id()));
        let inner = root.join("outer/inner/deep");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::create_dir_all(root.join("outer/.git")).unwrap();
        assert_eq!(git_root_below(&inner, &[]), Some(root.join("outer")));
        // A ceiling at `outer` stops the climb before it is looked at ...
        assert_eq!(git_root_below(&inner, &[root.join("outer")]), None);
        // ... but a repository at or below the ceiling's child is found.
        std::fs::create_dir_all(root.join("outer/inner/.git")).unwrap();
        assert_eq!(
            git_root_below(&inner, &[root.join("outer")]),
            Some(root.join("outer/inner"))
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
