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

    pub const SIGHUP: c_int = 1;
    pub const SIGINT: c_int = 2;
    pub const SIGQUIT: c_int = 3;
    pub const SIGKILL: c_int = 9;
    pub const SIGTERM: c_int = 15;
    pub const SIG_DFL: usize = 0;

    // Layout assumption: a signal handler is pointer-sized, as `usize` is.
    const _: () =
        assert!(std::mem::size_of::<usize>() == std::mem::size_of::<extern "C" fn(c_int)>());

    extern "C" {
        pub fn signal(signum: c_int, handler: usize) -> usize;
        pub fn kill(pid: c_int, sig: c_int) -> c_int;
        pub fn geteuid() -> u32;
    }

    #[cfg(target_os = "linux")]
    extern "C" {
        pub fn prctl(option: c_int, arg2: std::ffi::c_ulong, ...) -> c_int;
    }

    #[cfg(target_os = "linux")]
    pub const PR_SET_PDEATHSIG: c_int = 1;

    #[cfg(target_os = "linux")]
    extern "C" {
        pub fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    }

    #[cfg(target_os = "linux")]
    pub const F_SETPIPE_SZ: c_int = 1031;
}

/// Asks for a larger pipe buffer (Linux), so a child writing a large output
/// wakes Lens's reader once per megabyte instead of once per 64 KiB. A refusal
/// (the system's per-user pipe limit) changes nothing but speed.
#[cfg(target_os = "linux")]
pub fn enlarge_pipe(pipe: &impl std::os::fd::AsRawFd) {
    // SAFETY: fcntl with F_SETPIPE_SZ takes an int and changes only the pipe's
    // capacity; the fd is open for the duration of the call (borrowed).
    unsafe {
        sig::fcntl(pipe.as_raw_fd(), sig::F_SETPIPE_SZ, 1 << 20);
    }
}

/// Pipe sizes are a Linux notion.
#[cfg(not(target_os = "linux"))]
pub fn enlarge_pipe<T>(_pipe: &T) {}

/// The signals Lens catches while a child runs: a terminal's Ctrl-C and Ctrl-\,
/// a hangup, and a polite kill (what `timeout` and most agents send).
#[cfg(unix)]
pub const CAUGHT: [i32; 4] = [sig::SIGHUP, sig::SIGINT, sig::SIGQUIT, sig::SIGTERM];

/// The first signal caught, 0 while none.
#[cfg(unix)]
static RECEIVED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// Where caught signals go: the child's process group (negative), the child
/// alone (positive), or nobody yet (0).
#[cfg(unix)]
static FORWARD_TO: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

#[cfg(unix)]
extern "C" fn on_signal(signum: std::ffi::c_int) {
    use std::sync::atomic::Ordering;
    // Only atomics and `kill` here: both are async-signal-safe.
    let _ = RECEIVED.compare_exchange(0, signum, Ordering::SeqCst, Ordering::SeqCst);
    let target = FORWARD_TO.load(Ordering::SeqCst);
    // A child that shares Lens's process group got a terminal's Ctrl-C or Ctrl-\
    // from the terminal itself; sending it again would make it a double press.
    let terminal = signum == sig::SIGINT || signum == sig::SIGQUIT;
    if target < 0 || (target > 0 && !terminal) {
        // SAFETY: `kill` is async-signal-safe and takes plain integers; the target
        // is the child Lens spawned (or its group), never 0 or -1.
        unsafe {
            sig::kill(target, signum);
        }
    }
}

/// Catches the signals in `CAUGHT` for the rest of the run: each is recorded
/// (see [`received_signal`]) and forwarded to the child once one is named by
/// [`forward_signals_to`]. Handlers are reset to the default in a child at exec,
/// so this may be called before spawning.
#[cfg(unix)]
pub fn catch_signals() {
    for s in CAUGHT {
        // SAFETY: the handler only touches atomics and calls `kill`, both
        // async-signal-safe; `signal` installs it with restartable system calls,
        // so blocked reads in the reader threads are not cut short.
        unsafe {
            sig::signal(s, on_signal as extern "C" fn(std::ffi::c_int) as usize);
        }
    }
}

/// Restores the default disposition of the caught signals.
#[cfg(unix)]
pub fn restore_signals() {
    for s in CAUGHT {
        // SAFETY: SIG_DFL restores the disposition the process started with.
        unsafe {
            sig::signal(s, sig::SIG_DFL);
        }
    }
}

/// Names the child that caught signals go to: its whole process group when it
/// leads one, else the child alone. A signal caught before this is forwarded now.
#[cfg(unix)]
pub fn forward_signals_to(pid: u32, own_group: bool) {
    use std::sync::atomic::Ordering;
    let Ok(pid) = i32::try_from(pid) else { return };
    if pid <= 0 {
        return;
    }
    FORWARD_TO.store(if own_group { -pid } else { pid }, Ordering::SeqCst);
    let early = RECEIVED.load(Ordering::SeqCst);
    if early != 0 {
        on_signal(early);
    }
}

/// The first signal caught, if any.
#[cfg(unix)]
pub fn received_signal() -> Option<i32> {
    match RECEIVED.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// A signal's short name, for the view's notice.
pub fn signal_name(signum: i32) -> String {
    match signum {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        3 => "SIGQUIT".into(),
        9 => "SIGKILL".into(),
        13 => "SIGPIPE".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Sends SIGKILL to a child's process group (or the child alone).
#[cfg(unix)]
pub fn kill_child(pid: u32, own_group: bool) {
    let Ok(pid) = i32::try_from(pid) else { return };
    if pid > 0 {
        // SAFETY: plain integers; the target is the child Lens spawned.
        unsafe {
            sig::kill(if own_group { -pid } else { pid }, sig::SIGKILL);
        }
    }
}

/// Makes the child lead its own process group, so a signal Lens forwards reaches
/// everything the child started, and (on Linux) asks the kernel to send it SIGTERM
/// if Lens dies without forwarding (killed outright).
#[cfg(unix)]
pub fn own_process_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the closure runs in the child between fork and exec and calls
        // only `prctl`, which is async-signal-safe; it allocates nothing.
        unsafe {
            cmd.pre_exec(|| {
                sig::prctl(sig::PR_SET_PDEATHSIG, sig::SIGTERM as std::ffi::c_ulong);
                Ok(())
            });
        }
    }
}

/// No signals to catch here.
#[cfg(not(unix))]
pub fn catch_signals() {}

/// No signals to restore here.
#[cfg(not(unix))]
pub fn restore_signals() {}

/// No signals to forward here.
#[cfg(not(unix))]
pub fn forward_signals_to(_pid: u32, _own_group: bool) {}

/// No signals here.
#[cfg(not(unix))]
pub fn received_signal() -> Option<i32> {
    None
}

/// Kills the child.
#[cfg(not(unix))]
pub fn kill_child(_pid: u32, _own_group: bool) {}

/// No process groups here.
#[cfg(not(unix))]
pub fn own_process_group(_cmd: &mut Command) {}

/// Why a directory cannot hold Lens's private files, if it cannot: it must be a
/// directory owned by this user that no one else can write to.
#[cfg(unix)]
pub fn unsafe_dir(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) => return Some(e.to_string()),
    };
    if !m.is_dir() {
        return Some("it is not a directory".into());
    }
    // SAFETY: geteuid takes nothing and cannot fail.
    let me = unsafe { sig::geteuid() };
    if m.uid() != me {
        return Some(format!("it belongs to user {}, not to you ({me})", m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return Some(format!(
            "others can write to it (mode {:o})",
            m.mode() & 0o777
        ));
    }
    None
}

/// Ownership is a Unix notion here.
#[cfg(not(unix))]
pub fn unsafe_dir(_dir: &Path) -> Option<String> {
    None
}

/// Creates `path` (which must not exist) for writing, readable only by this user,
/// never through a symlink.
#[cfg(unix)]
pub fn create_private_file(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(O_NOFOLLOW)
        .open(path)
}

/// Creates `path` (which must not exist) for writing.
#[cfg(not(unix))]
pub fn create_private_file(path: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
}

/// Opens `path` for appending, creating it readable only by this user; fails on
/// a symlink rather than writing where it points.
#[cfg(unix)]
pub fn open_private_append(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(O_NOFOLLOW)
        .open(path)
}

/// Opens `path` for appending, creating it.
#[cfg(not(unix))]
pub fn open_private_append(path: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
}

/// Opens `path` for reading, never through a symlink and never blocking on a
/// FIFO or a device (the caller checks it is a regular file).
#[cfg(unix)]
pub fn open_nofollow(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NOFOLLOW | O_NONBLOCK)
        .open(path)
}

/// Opens `path` for reading.
#[cfg(not(unix))]
pub fn open_nofollow(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// Opens `path` for reading (following a symlink, as dotfile managers use), never
/// blocking on a FIFO or a device: the caller checks it is a regular file.
#[cfg(unix)]
pub fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)
}

/// Opens `path` for reading.
#[cfg(not(unix))]
pub fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

// Open flags, per the kernel's headers: Linux numbers O_NOFOLLOW differently on
// Arm than on x86 and RISC-V; the BSDs and macOS share theirs.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "aarch64", target_arch = "arm")
))]
const O_NOFOLLOW: i32 = 0o100_000;
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(any(target_arch = "aarch64", target_arch = "arm"))
))]
const O_NOFOLLOW: i32 = 0o400_000;
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
const O_NOFOLLOW: i32 = 0x0100;
#[cfg(any(target_os = "linux", target_os = "android"))]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
const O_NONBLOCK: i32 = 0x0004;

/// Creates `dir` (and missing parents) readable only by this user. A directory
/// that already exists is left as it is: its owner chose its mode, and the caller
/// checks with [`unsafe_dir`] whether it will do.
#[cfg(unix)]
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
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
