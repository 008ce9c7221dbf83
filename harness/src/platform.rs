//! The harness's operating-system specifics; every `#[cfg]` of the crate is here.

use std::path::Path;
use std::process::ExitStatus;

/// The exit code a shell reports: the code, or 128 + signum.
#[cfg(unix)]
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    }
}

/// The exit code.
#[cfg(not(unix))]
pub fn exit_code(status: ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

/// True when `p` has an execute bit.
#[cfg(unix)]
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// True for any file.
#[cfg(not(unix))]
pub fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Makes `link` point at `target`.
#[cfg(unix)]
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Copies `target` to `link` where there are no symlinks.
#[cfg(not(unix))]
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::copy(target, link).map(|_| ())
}

/// Creates `dir` (and parents) readable by this user only.
#[cfg(unix)]
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Creates `dir` (and parents).
#[cfg(not(unix))]
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Creates (truncating) a file readable by this user only.
#[cfg(unix)]
pub fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// Creates (truncating) a file.
#[cfg(not(unix))]
pub fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::create(path)
}

/// Makes the command the leader of a new process group, so [`kill_group`] can end
/// it with everything it started.
#[cfg(unix)]
pub fn new_process_group(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

/// Nothing to do without process groups.
#[cfg(not(unix))]
pub fn new_process_group(_cmd: &mut std::process::Command) {}

/// Sends SIGKILL to the process group `pgid` (by kill(1), so no `unsafe` here);
/// errors (the group is already gone) are ignored.
#[cfg(unix)]
pub fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Without process groups there is no group to end.
#[cfg(not(unix))]
pub fn kill_group(_pgid: u32) {}
