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
    use std::ffi::{c_int, c_short, c_void};

    pub const SIGHUP: c_int = 1;
    pub const SIGINT: c_int = 2;
    pub const SIGQUIT: c_int = 3;
    pub const SIGPIPE: c_int = 13;
    pub const SIGTERM: c_int = 15;
    pub const SIG_DFL: usize = 0;
    pub const SIG_IGN: usize = 1;
    pub const F_GETFD: c_int = 1;
    pub const F_SETFD: c_int = 2;
    pub const FD_CLOEXEC: c_int = 1;

    pub const POLLIN: c_short = 0x1;
    pub const POLLOUT: c_short = 0x4;
    pub const POLLERR: c_short = 0x8;
    pub const POLLHUP: c_short = 0x10;
    pub const POLLNVAL: c_short = 0x20;

    #[repr(C)]
    pub struct PollFd {
        pub fd: c_int,
        pub events: c_short,
        pub revents: c_short,
    }

    #[cfg(target_os = "linux")]
    pub type NFds = std::ffi::c_ulong;
    #[cfg(not(target_os = "linux"))]
    pub type NFds = std::ffi::c_uint;

    // Layout assumption: a signal handler is pointer-sized, as `usize` is.
    const _: () =
        assert!(std::mem::size_of::<usize>() == std::mem::size_of::<extern "C" fn(c_int)>());

    extern "C" {
        pub fn signal(signum: c_int, handler: usize) -> usize;
        pub fn kill(pid: c_int, sig: c_int) -> c_int;
        pub fn geteuid() -> u32;
        pub fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
        pub fn poll(fds: *mut PollFd, nfds: NFds, timeout: c_int) -> c_int;
        pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        pub fn close(fd: c_int) -> c_int;
        pub fn pipe(fds: *mut c_int) -> c_int;
    }

    #[cfg(target_os = "linux")]
    extern "C" {
        pub fn prctl(option: c_int, arg2: std::ffi::c_ulong, ...) -> c_int;
        pub fn sigaction(signum: c_int, act: *const SigAction, old: *mut SigAction) -> c_int;
    }

    /// `struct sigaction` as glibc and musl lay it out on Linux.
    #[cfg(target_os = "linux")]
    #[repr(C)]
    pub struct SigAction {
        pub handler: usize,
        pub mask: [u64; 16],
        pub flags: c_int,
        pub restorer: usize,
    }

    /// The head of `siginfo_t`, the same on every Linux architecture Rust runs on.
    #[cfg(target_os = "linux")]
    #[repr(C)]
    pub struct SigInfo {
        pub signo: c_int,
        pub errno: c_int,
        pub code: c_int,
    }

    #[cfg(target_os = "linux")]
    pub const SA_SIGINFO: c_int = 4;
    #[cfg(target_os = "linux")]
    pub const SA_RESTART: c_int = 0x1000_0000;
    /// `si_code` of a signal the kernel sent itself: a terminal's Ctrl-C or Ctrl-\.
    #[cfg(target_os = "linux")]
    pub const SI_KERNEL: c_int = 0x80;

    #[cfg(target_os = "linux")]
    pub const PR_SET_PDEATHSIG: c_int = 1;

    #[cfg(target_os = "linux")]
    pub const F_SETPIPE_SZ: c_int = 1031;

    pub fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }
    pub const EINTR: i32 = 4;
    pub const EAGAIN: i32 = 11;
}

/// Sets a child's pipe to [`PIPE_BYTES`] (Linux): twice the default, so a
/// child writing a large output and Lens's reader hand it over half as often,
/// yet small enough that what the child writes is still in the cache when Lens
/// reads it (a 1 MiB pipe made every read miss it). A refusal (the system's
/// per-user pipe limit) changes nothing but speed.
#[cfg(target_os = "linux")]
pub fn enlarge_pipe(pipe: &impl std::os::fd::AsRawFd) {
    // SAFETY: fcntl with F_SETPIPE_SZ takes an int and changes only the pipe's
    // capacity; the fd is open for the duration of the call (borrowed).
    unsafe {
        sig::fcntl(
            pipe.as_raw_fd(),
            sig::F_SETPIPE_SZ,
            PIPE_BYTES as std::ffi::c_int,
        );
    }
}

/// The capacity Lens asks for a child's pipe, and what its reader takes at a
/// time.
pub const PIPE_BYTES: usize = 128 << 10;

/// Pipe sizes are a Linux notion.
#[cfg(not(target_os = "linux"))]
pub fn enlarge_pipe<T>(_pipe: &T) {}

// What the caller handed Lens, recorded before Rust's runtime changes it: the
// runtime opens /dev/null on a closed standard descriptor and ignores SIGPIPE,
// and a child must get what the caller gave (a closed stdin stays closed, an
// ignored SIGPIPE stays ignored). Bits 0-2: descriptor 0-2 was closed; bit 3:
// SIGPIPE was ignored.
#[cfg(unix)]
static STARTUP: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

#[cfg(target_os = "linux")]
extern "C" fn record_startup() {
    use std::sync::atomic::Ordering;
    let mut bits = 0u8;
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor's flags; -1 means it is closed.
        if unsafe { sig::fcntl(fd, sig::F_GETFD) } == -1 {
            bits |= 1 << fd;
        }
    }
    // SAFETY: reads the disposition by setting one and putting the old back, before
    // any thread exists (the loader runs this before main).
    let old = unsafe { sig::signal(sig::SIGPIPE, sig::SIG_IGN) };
    // SAFETY: restores the disposition just read.
    unsafe {
        sig::signal(sig::SIGPIPE, old);
    }
    if old == sig::SIG_IGN {
        bits |= 1 << 3;
    }
    STARTUP.store(bits, Ordering::SeqCst);
}

// The loader calls this before main, so before Rust's runtime touches the
// descriptors or SIGPIPE.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static RECORD_STARTUP: extern "C" fn() = record_startup;

/// True when the caller started Lens with this standard descriptor (0, 1, 2) closed.
#[cfg(unix)]
pub fn closed_at_start(fd: i32) -> bool {
    (0..3).contains(&fd) && STARTUP.load(std::sync::atomic::Ordering::SeqCst) & (1 << fd) != 0
}

/// Descriptors are a Unix notion.
#[cfg(not(unix))]
pub fn closed_at_start(_fd: i32) -> bool {
    false
}

/// The signals Lens catches while a child runs: a terminal's Ctrl-C and Ctrl-\,
/// a hangup, and a polite kill (what `timeout` and most agents send).
#[cfg(unix)]
pub const CAUGHT: [i32; 4] = [sig::SIGHUP, sig::SIGINT, sig::SIGQUIT, sig::SIGTERM];

/// The first signal caught, 0 while none.
#[cfg(unix)]
static RECEIVED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// The child caught signals go to, 0 while there is none yet.
#[cfg(unix)]
static FORWARD_TO: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// A signal caught before there was a child to forward it to, not from a terminal.
#[cfg(unix)]
static PENDING: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// Bit per signal number: the caller ignored it, so Lens leaves it ignored.
#[cfg(unix)]
static IGNORED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Records a caught signal and forwards it to the child, unless a terminal sent it:
/// the child shares Lens's process group and got that one from the terminal
/// itself, so sending it again would make it a double press.
#[cfg(unix)]
fn on_signal(signum: i32, from_terminal: bool) {
    use std::sync::atomic::Ordering;
    // Only atomics and `kill` here: both are async-signal-safe.
    let _ = RECEIVED.compare_exchange(0, signum, Ordering::SeqCst, Ordering::SeqCst);
    if from_terminal {
        return;
    }
    let target = FORWARD_TO.load(Ordering::SeqCst);
    if target > 0 {
        // SAFETY: `kill` is async-signal-safe and takes plain integers; the target
        // is the child Lens spawned, never 0 or -1.
        unsafe {
            sig::kill(target, signum);
        }
    } else {
        PENDING.store(signum, Ordering::SeqCst);
    }
}

#[cfg(target_os = "linux")]
extern "C" fn on_siginfo(
    signum: std::ffi::c_int,
    info: *const sig::SigInfo,
    _: *mut std::ffi::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler; only its
    // first three ints are read.
    let code = if info.is_null() {
        0
    } else {
        unsafe { (*info).code }
    };
    on_signal(signum, code == sig::SI_KERNEL);
}

#[cfg(all(unix, not(target_os = "linux")))]
extern "C" fn on_plain(signum: std::ffi::c_int) {
    // Without siginfo, Ctrl-C and Ctrl-\ are taken to come from the terminal.
    on_signal(signum, signum == sig::SIGINT || signum == sig::SIGQUIT);
}

/// Installs Lens's handler for `s`; returns the disposition it replaced.
#[cfg(target_os = "linux")]
fn install(s: i32) -> usize {
    let act = sig::SigAction {
        handler: on_siginfo
            as extern "C" fn(std::ffi::c_int, *const sig::SigInfo, *mut std::ffi::c_void)
            as usize,
        mask: [0; 16],
        flags: sig::SA_SIGINFO | sig::SA_RESTART,
        restorer: 0,
    };
    let mut old = sig::SigAction {
        handler: 0,
        mask: [0; 16],
        flags: 0,
        restorer: 0,
    };
    // SAFETY: both structs are laid out as the C library's `struct sigaction`; the
    // handler only touches atomics and calls `kill`, both async-signal-safe, and
    // SA_RESTART keeps the reader threads' blocking reads from being cut short.
    unsafe {
        sig::sigaction(s, &act, &mut old);
    }
    old.handler
}

/// Installs Lens's handler for `s`; returns the disposition it replaced.
#[cfg(all(unix, not(target_os = "linux")))]
fn install(s: i32) -> usize {
    // SAFETY: the handler only touches atomics and calls `kill`, both
    // async-signal-safe; `signal` installs it with restartable system calls.
    unsafe { sig::signal(s, on_plain as extern "C" fn(std::ffi::c_int) as usize) }
}

/// Catches the signals in `CAUGHT` for the rest of the run: each is recorded
/// (see [`received_signal`]) and forwarded to the child once one is named by
/// [`forward_signals_to`]. A signal the caller ignored stays ignored, for Lens and
/// for the child (`nohup lens …`, `trap '' INT`): it is neither caught nor
/// forwarded. Handlers are reset to the default in a child at exec, so this may be
/// called before spawning.
#[cfg(unix)]
pub fn catch_signals() {
    use std::sync::atomic::Ordering;
    for s in CAUGHT {
        if install(s) == sig::SIG_IGN {
            // SAFETY: SIG_IGN puts back the disposition the caller gave.
            unsafe {
                sig::signal(s, sig::SIG_IGN);
            }
            IGNORED.fetch_or(1 << s, Ordering::SeqCst);
        }
    }
}

/// True when the caller ignored signal `s` (see [`catch_signals`]).
#[cfg(unix)]
pub fn caller_ignores(s: i32) -> bool {
    IGNORED.load(std::sync::atomic::Ordering::SeqCst) & (1 << s) != 0
}

/// Restores the default disposition of the caught signals (not of the ignored).
#[cfg(unix)]
pub fn restore_signals() {
    for s in CAUGHT {
        if caller_ignores(s) {
            continue;
        }
        // SAFETY: SIG_DFL restores the disposition the process started with.
        unsafe {
            sig::signal(s, sig::SIG_DFL);
        }
    }
}

/// Names the child that caught signals go to. A signal caught before this is
/// forwarded now.
#[cfg(unix)]
pub fn forward_signals_to(pid: u32) {
    use std::sync::atomic::Ordering;
    let Ok(pid) = i32::try_from(pid) else { return };
    if pid <= 0 {
        return;
    }
    FORWARD_TO.store(pid, Ordering::SeqCst);
    let early = PENDING.swap(0, Ordering::SeqCst);
    if early != 0 {
        on_signal(early, false);
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

/// Sets up the child as the caller set up Lens: it stays in Lens's process
/// group (so a kill aimed at the group, as `timeout` and a terminal send, reaches
/// everything it starts, and it is in the terminal's foreground group when Lens
/// is), a descriptor the caller closed is closed for it too, and an ignored
/// SIGPIPE stays ignored. On Linux the kernel sends it SIGTERM if Lens dies
/// without forwarding (killed outright).
#[cfg(unix)]
pub fn inherit_callers_setup(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let bits = STARTUP.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // `prctl`, `close` and `signal`, which are async-signal-safe; it allocates
    // nothing.
    unsafe {
        cmd.pre_exec(move || {
            #[cfg(target_os = "linux")]
            sig::prctl(sig::PR_SET_PDEATHSIG, sig::SIGTERM as std::ffi::c_ulong);
            for fd in 0..3 {
                if bits & (1 << fd) != 0 {
                    sig::close(fd);
                }
            }
            if bits & (1 << 3) != 0 {
                sig::signal(sig::SIGPIPE, sig::SIG_IGN);
            }
            Ok(())
        });
    }
}

/// Lens's own standard output or error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Std {
    /// Descriptor 1.
    Out,
    /// Descriptor 2.
    Err,
}

impl Std {
    #[cfg(unix)]
    fn fd(self) -> i32 {
        match self {
            Std::Out => 1,
            Std::Err => 2,
        }
    }
}

/// Polls one descriptor; the returned events, or 0 when it timed out.
#[cfg(unix)]
fn poll_one(fd: i32, events: std::ffi::c_short, timeout_ms: i32) -> std::ffi::c_short {
    let mut p = sig::PollFd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the duration of the call.
    let n = unsafe { sig::poll(&mut p, 1, timeout_ms) };
    if n <= 0 {
        0
    } else {
        p.revents
    }
}

/// True when the reader of Lens's `s` is gone: the read end of its pipe or socket
/// is closed, or the terminal hung up. A file or an open pipe is never gone.
#[cfg(unix)]
pub fn reader_gone(s: Std) -> bool {
    poll_one(s.fd(), 0, 0) & (sig::POLLERR | sig::POLLHUP) != 0
}

/// Readers are always there here.
#[cfg(not(unix))]
pub fn reader_gone(_s: Std) -> bool {
    false
}

/// Why a write to Lens's own stream stopped before the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStop {
    /// Its reader is gone (a closed pipe).
    Gone,
    /// A signal came while the reader was not reading.
    Signal,
    /// Another error: its OS error number (`ENOSPC` for a full disk).
    Failed(i32),
}

/// Writes all of `bytes` to Lens's `s`, waiting for the reader in short polls, so
/// that neither a reader that stops reading (a FIFO nobody reads) nor one that is
/// gone holds Lens: a caught signal or a closed pipe ends the write.
#[cfg(unix)]
pub fn write_polled(s: Std, mut bytes: &[u8]) -> Result<(), WriteStop> {
    // A pipe takes PIPE_BUF bytes without blocking once poll says it is writable.
    let chunk = if is_pipe(s) { 4096 } else { 1 << 20 };
    while !bytes.is_empty() {
        let ev = poll_one(s.fd(), sig::POLLOUT, 50);
        if ev & (sig::POLLERR | sig::POLLHUP) != 0 {
            return Err(WriteStop::Gone);
        }
        if ev & sig::POLLNVAL != 0 {
            return Err(WriteStop::Failed(9)); // EBADF
        }
        if ev & sig::POLLOUT == 0 {
            if received_signal().is_some() {
                return Err(WriteStop::Signal);
            }
            continue;
        }
        let n = bytes.len().min(chunk);
        // SAFETY: writes from a live slice of at least `n` bytes.
        let w = unsafe { sig::write(s.fd(), bytes.as_ptr().cast(), n) };
        if w < 0 {
            match sig::errno() {
                sig::EINTR | sig::EAGAIN => continue,
                32 => return Err(WriteStop::Gone), // EPIPE
                e => return Err(WriteStop::Failed(e)),
            }
        }
        bytes = &bytes[w as usize..];
    }
    Ok(())
}

/// Writes all of `bytes` to Lens's `s`.
#[cfg(not(unix))]
pub fn write_polled(s: Std, bytes: &[u8]) -> Result<(), WriteStop> {
    use std::io::Write;
    let r = match s {
        Std::Out => std::io::stdout().lock().write_all(bytes),
        Std::Err => std::io::stderr().lock().write_all(bytes),
    };
    r.map_err(|e| WriteStop::Failed(e.raw_os_error().unwrap_or(0)))
}

/// True when Lens's `s` is a pipe or a socket (not a file or a terminal).
#[cfg(unix)]
pub fn is_pipe(s: Std) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std_metadata(s).is_some_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
}

/// Not known here: Lens treats its streams as files.
#[cfg(not(unix))]
pub fn is_pipe(_s: Std) -> bool {
    false
}

#[cfg(unix)]
fn std_metadata(s: Std) -> Option<std::fs::Metadata> {
    use std::os::fd::AsFd;
    let owned = match s {
        Std::Out => std::io::stdout().as_fd().try_clone_to_owned(),
        Std::Err => std::io::stderr().as_fd().try_clone_to_owned(),
    };
    std::fs::File::from(owned.ok()?).metadata().ok()
}

/// True when the caller gave Lens one open file as both stdout and stderr
/// (`cmd 2>&1`, a terminal, one log file): then the child's two streams are
/// captured through one pipe, in the order it wrote them.
#[cfg(unix)]
pub fn stdout_is_stderr() -> bool {
    use std::os::unix::fs::MetadataExt;
    if closed_at_start(1) || closed_at_start(2) {
        return false;
    }
    use std::io::IsTerminal;
    use std::os::unix::fs::FileTypeExt;
    match (std_metadata(Std::Out), std_metadata(Std::Err)) {
        (Some(a), Some(b)) => {
            let t = a.file_type();
            // A device other than a terminal (/dev/null) shows nothing to merge.
            let shown =
                t.is_fifo() || t.is_socket() || t.is_file() || std::io::stdout().is_terminal();
            shown && a.dev() == b.dev() && a.ino() == b.ino()
        }
        _ => false,
    }
}

/// Without descriptors to compare, the streams are taken to be apart.
#[cfg(not(unix))]
pub fn stdout_is_stderr() -> bool {
    false
}

/// A new pipe: its read end, and its write end for a child's stdout and stderr.
#[cfg(unix)]
pub fn pipe() -> io::Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: `pipe` fills two ints on success.
    if unsafe { sig::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    for fd in fds {
        // SAFETY: the descriptors were just made; close-on-exec keeps Lens's
        // copies out of the child (std dup2s the ones it hands over).
        unsafe {
            sig::fcntl(fd, sig::F_SETFD, sig::FD_CLOEXEC);
        }
    }
    // SAFETY: each descriptor is open, and owned by nothing else.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    })
}

/// No pipes to make here: the streams stay apart.
#[cfg(not(unix))]
pub fn pipe() -> io::Result<(std::fs::File, std::fs::File)> {
    Err(io::Error::other("no pipes here"))
}

/// The read end of a pipe from the child, waited on in short polls so a reader
/// can be told to stop.
pub trait Pipe: io::Read + Send {
    /// True when a read would not block (data, or the end), within `timeout_ms`.
    fn readable(&self, timeout_ms: i32) -> bool;
}

#[cfg(unix)]
impl<T: io::Read + Send + std::os::fd::AsRawFd> Pipe for T {
    fn readable(&self, timeout_ms: i32) -> bool {
        poll_one(self.as_raw_fd(), sig::POLLIN, timeout_ms) != 0
    }
}

#[cfg(not(unix))]
impl<T: io::Read + Send> Pipe for T {
    fn readable(&self, _timeout_ms: i32) -> bool {
        true
    }
}

/// True while process `pid` exists.
#[cfg(unix)]
pub fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let exists = pid > 0 && (unsafe { sig::kill(pid, 0) } == 0 || sig::errno() == 1);
    // A zombie nobody reaped yet (its parent was killed with it) has ended.
    #[cfg(target_os = "linux")]
    if exists {
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            return !state.starts_with('Z') && !state.starts_with('X');
        }
    }
    exists
}

/// Taken to be alive: nothing here can tell.
#[cfg(not(unix))]
pub fn alive(_pid: u32) -> bool {
    true
}

/// No signals to catch here.
#[cfg(not(unix))]
pub fn catch_signals() {}

/// Nothing is ignored here.
#[cfg(not(unix))]
pub fn caller_ignores(_s: i32) -> bool {
    false
}

/// No signals to restore here.
#[cfg(not(unix))]
pub fn restore_signals() {}

/// No signals to forward here.
#[cfg(not(unix))]
pub fn forward_signals_to(_pid: u32) {}

/// No signals here.
#[cfg(not(unix))]
pub fn received_signal() -> Option<i32> {
    None
}

/// No caller setup to carry over here.
#[cfg(not(unix))]
pub fn inherit_callers_setup(_cmd: &mut Command) {}

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

/// Takes an exclusive lock on `file` if no other open of it holds one:
/// `Ok(true)` when taken, `Ok(false)` when another holds it. The kernel lets
/// go of it when the file is closed or its process dies, so a holder that
/// crashed never leaves it taken.
#[cfg(unix)]
pub fn try_lock(file: &std::fs::File) -> io::Result<bool> {
    use std::ffi::c_int;
    use std::os::fd::AsRawFd;
    extern "C" {
        fn flock(fd: c_int, operation: c_int) -> c_int;
    }
    const LOCK_EX: c_int = 2;
    const LOCK_NB: c_int = 4;
    loop {
        // SAFETY: `file` owns the descriptor for the whole call; flock only
        // reads the descriptor and the two flags.
        if unsafe { flock(file.as_raw_fd(), LOCK_EX | LOCK_NB) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => return Ok(false),
            io::ErrorKind::Interrupted => continue,
            _ => return Err(e),
        }
    }
}

/// No advisory locks here: taken at once, so nothing serializes two holders.
#[cfg(not(unix))]
pub fn try_lock(_file: &std::fs::File) -> io::Result<bool> {
    Ok(true)
}

/// Gives `path` the owner and group `like` has, when they differ, so a file
/// replaced by a new one (under sudo) stays its owner's. Best effort: a
/// process that may not change owners leaves the new file as it made it.
#[cfg(unix)]
pub fn keep_owner(like: &std::fs::Metadata, path: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(now) = std::fs::metadata(path) else {
        return;
    };
    if (now.uid(), now.gid()) != (like.uid(), like.gid()) {
        let _ = std::os::unix::fs::chown(path, Some(like.uid()), Some(like.gid()));
    }
}

/// Owners are not compared here.
#[cfg(not(unix))]
pub fn keep_owner(_like: &std::fs::Metadata, _path: &Path) {}

/// The command lines of this process's ancestors, its parent first, at most
/// `depth` of them (init is not one). `None` where the system does not say:
/// only Linux's /proc is read.
#[cfg(target_os = "linux")]
pub fn ancestor_command_lines(depth: usize) -> Option<Vec<Vec<String>>> {
    let mut pid = std::os::unix::process::parent_id();
    let mut lines = Vec::new();
    while pid > 1 && lines.len() < depth {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let raw = raw.strip_suffix(&[0]).unwrap_or(&raw);
        lines.push(
            raw.split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect(),
        );
        // `pid (comm) state ppid …`, where comm may hold spaces and parentheses.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        pid = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
    }
    Some(lines)
}

/// The command lines of this process's ancestors: not known here.
#[cfg(not(target_os = "linux"))]
pub fn ancestor_command_lines(_depth: usize) -> Option<Vec<Vec<String>>> {
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

    #[cfg(unix)]
    #[test]
    fn a_new_file_takes_the_owner_of_the_one_it_replaces() {
        use std::os::unix::fs::MetadataExt;
        let base = std::env::temp_dir().join(format!("lens-owner-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let (old, new) = (base.join("old"), base.join("new"));
        std::fs::write(&old, "").unwrap();
        std::fs::write(&new, "").unwrap();
        // Only a process that may give files away can set up the case.
        if std::os::unix::fs::chown(&old, Some(4242), Some(4343)).is_ok() {
            keep_owner(&std::fs::metadata(&old).unwrap(), &new);
            let m = std::fs::metadata(&new).unwrap();
            assert_eq!((m.uid(), m.gid()), (4242, 4343));
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_is_held_once_and_let_go_on_close() {
        let path = std::env::temp_dir().join(format!("lens-lock-{}", std::process::id()));
        let open = || {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap()
        };
        let (first, second) = (open(), open());
        assert!(try_lock(&first).unwrap());
        assert!(!try_lock(&second).unwrap());
        drop(first);
        assert!(try_lock(&second).unwrap());
        drop(second);
        std::fs::remove_file(&path).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_parents_command_line_is_read() {
        let lines = ancestor_command_lines(2).unwrap();
        assert!(!lines.is_empty() && lines.len() <= 2);
        // The test runner's parent is cargo or a shell: some program ran it.
        assert!(!lines[0].is_empty() && !lines[0][0].is_empty(), "{lines:?}");
    }
}
