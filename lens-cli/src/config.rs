//! The user's config file, read lazily and never trusted to be small or regular.

use std::io::{self, Read};

use lens_core::Config;

use crate::{paths, platform};

/// Reads the config file if there is one. A broken file is a one-line diagnostic,
/// printed after the child's output, and the run goes on with defaults.
pub(crate) fn load_config(diagnostics: &mut Vec<String>) -> Option<Config> {
    let path = paths::config();
    let text = match read_config(&path) {
        Ok(Some(t)) => t,
        Ok(None) => return None,
        Err(why) => {
            diagnostics.push(format!(
                "lens: config {} ignored: {why}; using defaults",
                path.display()
            ));
            return None;
        }
    };
    match Config::parse(&text) {
        Ok(c) => Some(c),
        Err(e) => {
            diagnostics.push(format!(
                "lens: config {} ignored: {e}; using defaults",
                path.display()
            ));
            None
        }
    }
}

/// The most config text Lens reads: a config is a few lines.
const CONFIG_MAX: u64 = 1 << 20;

/// The config's text, `None` when there is no config file. Only a regular file
/// under `CONFIG_MAX` is read: a device or a FIFO named as the config would
/// otherwise fill memory or hang the run.
pub(crate) fn read_config(path: &std::path::Path) -> Result<Option<String>, String> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it ({e})")),
        Ok(m) if !m.is_file() => return Err("it is not a regular file".into()),
        Ok(m) if m.len() > CONFIG_MAX => {
            return Err(format!(
                "it is {} bytes, over the 1 MiB a config may be",
                m.len()
            ))
        }
        Ok(_) => {}
    }
    // Checked again on the open file: the path may have changed in between.
    let f = platform::open_nonblocking(path).map_err(|e| format!("cannot read it ({e})"))?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err("it is not a regular file".into());
    }
    let mut bytes = Vec::new();
    f.take(CONFIG_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it ({e})"))?;
    if bytes.len() as u64 > CONFIG_MAX {
        return Err("it is over the 1 MiB a config may be".into());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "it is not UTF-8 text".into())
}
