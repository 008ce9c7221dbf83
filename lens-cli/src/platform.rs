//! Everything that depends on the operating system: exec, exit statuses, signal
//! dispositions and private directories. Every `unsafe` block and every `#[cfg]` in
//! the tree lives here, so a port is a matter of implementing this one file.

use std::io;
use std::path::Path;
use std::process::{Command, ExitStatus};

/// Replaces this process with `cmd` (same stdio, terminal and signal dispositions,
/// Lens gone). Returns only on failure.
#[cfg(unix)]
pub fn exec(cmd: &mut Command) -> io::Error {
    use std::os::unix::process::CommandExt;
    cmd.exec()
}

/// On platforms without exec, run the command with inherited stdio and exit with its
/// code: the nearest imitation.
#[cfg(not(unix))]
pub fn exec(cmd: &mut Command) -> io::Error {
    match cmd.status() {
        Ok(s) => std::process::exit(exit_code(s)),
        Err(e) => e,
    }
}

/// The exit code a shell would report: the child's code, or 128 + signum when a
/// signal ended it.
#[cfg(unix)]
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    }
}

/// The exit code a shell would report.
#[cfg(not(unix))]
pub fn exit_code(status: ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

/// The signal that ended the child, if one did.
#[cfg(unix)]
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// The signal that ended the child, if one did.
#[cfg(not(unix))]
pub fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}

#[cfg(unix)]
mod sig {
    use std::ffi::c_int;

    pub const SIGINT: c_int = 2;
    pub const SIGQUIT: c_int = 3;
    pub const SIG_DFL: usize = 0;
    pub const SIG_IGN: usize = 1;

    // Layout assumption: a signal handler is pointer-sized, as `usize` is.
    const _: () =
        assert!(std::mem::size_of::<usize>() == std::mem::size_of::<extern "C" fn(c_int)>());

    extern "C" {
        pub fn signal(signum: c_int, handler: usize) -> usize;
    }
}

/// While the child runs, a terminal's Ctrl-C or Ctrl-\ reaches the child (it is in
/// the same process group) and Lens ignores it, so the child's death is reported as
/// 128 + signum and what it wrote before dying is still stored and shown. Call after
/// the child is spawned, so the child does not inherit the ignored disposition.
#[cfg(unix)]
pub fn ignore_terminal_signals() {
    for s in [sig::SIGINT, sig::SIGQUIT] {
        // SAFETY: `signal` with SIG_IGN installs no Rust code as a handler; it only
        // changes this process's disposition for a terminal signal, which is sound at
        // any point, and no other code in this process relies on these signals.
        unsafe {
            sig::signal(s, sig::SIG_IGN);
        }
    }
}

/// Restores the default disposition of the terminal signals.
#[cfg(unix)]
pub fn restore_terminal_signals() {
    for s in [sig::SIGINT, sig::SIGQUIT] {
        // SAFETY: as above; SIG_DFL restores the disposition the process started with.
        unsafe {
            sig::signal(s, sig::SIG_DFL);
        }
    }
}

/// No terminal signals to ignore here.
#[cfg(not(unix))]
pub fn ignore_terminal_signals() {}

/// No terminal signals to restore here.
#[cfg(not(unix))]
pub fn restore_terminal_signals() {}

/// Creates `dir` (and parents) readable only by this user.
#[cfg(unix)]
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let mode = std::fs::metadata(dir)?.permissions().mode() & 0o777;
    if mode != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Creates `dir` (and parents).
#[cfg(not(unix))]
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Creates exactly `dir`, failing if it exists (the store's collision check), private.
#[cfg(unix)]
pub fn create_new_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

/// Creates exactly `dir`, failing if it exists.
#[cfg(not(unix))]
pub fn create_new_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir(dir)
}

/// The permission bits of a path, for tests and diagnostics.
#[cfg(unix)]
pub fn mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

/// Permission bits are a Unix notion.
#[cfg(not(unix))]
pub fn mode(_path: &Path) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_death_is_128_plus_signum() {
        let s = Command::new("sh")
            .args(["-c", "kill -TERM $$"])
            .status()
            .unwrap();
        assert_eq!(exit_code(s), 143);
        assert_eq!(signal_of(s), Some(15));
        let s = Command::new("sh").args(["-c", "exit 7"]).status().unwrap();
        assert_eq!(exit_code(s), 7);
    }

    #[test]
    fn private_dirs_are_0700() {
        let base = std::env::temp_dir().join(format!("lens-platform-{}", std::process::id()));
        let d = base.join("a/b");
        create_private_dir(&d).unwrap();
        assert_eq!(mode(&d), Some(0o700));
        let n = base.join("new");
        create_new_private_dir(&n).unwrap();
        assert!(create_new_private_dir(&n).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
