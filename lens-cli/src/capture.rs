//! Capture: the child's two streams, each read on its own thread as it arrives.
//!
//! A stream is held in memory while both streams together stay under
//! [`Limits::DEFAULT`]; that is the common case, and then the whole output goes
//! through the full pipeline. Past the limit, the stream that crossed it is written
//! to the store as it arrives and only a [`Sampler`]'s bounded sample of it stays in
//! memory, so a gigabyte of output costs what a few megabytes do. If the store
//! cannot take it (a full disk, a refused store), nothing of that run is elided:
//! the stream is printed as it arrives, after what the store already held.
//!
//! A stream the store takes whole up to its share of `[store] max_run_bytes`;
//! past that share what is stored is printed as it was written and the rest
//! passes through as it arrives, unfiltered and unstored (invariant 5: what
//! cannot be stored is not elided). The store keeps the stream's whole lines
//! before that point, and the run's notice says from which line it passed
//! through.
//!
//! The readers share each stream's state with the main thread, which can abandon
//! a reader that never reaches the end of its pipe (a grandchild that kept it open
//! after a signal) and still use everything read so far.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use lens_core::sample::{count_newlines, Sampler};
use lens_core::Stream;

use crate::platform;
use crate::store::RunDir;
pub use crate::store::Unstored;

/// How much output is held in memory, both streams together, before a stream
/// goes to the store as it arrives. The full pipeline annotates every line it
/// holds (about 70 bytes each) besides the bytes: these bound what it is given.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Bytes held.
    pub bytes: u64,
    /// Lines held.
    pub lines: u64,
}

impl Limits {
    /// 8 MiB and 128 Ki lines.
    pub const DEFAULT: Limits = Limits {
        bytes: 8 << 20,
        lines: 128 << 10,
    };
}

/// Where a stream's bytes went.
pub enum Body {
    /// All of it, in memory.
    Memory(Vec<u8>),
    /// Into the run's store file as it arrived; the sample is what is held.
    Stored {
        /// The store file, open for reading back.
        file: File,
        /// The sample of the stream.
        sampler: Box<Sampler>,
    },
    /// Past the stream's share of the store: printed whole as it arrived. The
    /// store file holds its lines before `from_line`.
    Passed {
        /// The store file, holding bytes `0..from_byte`.
        file: File,
        /// The first byte not stored.
        from_byte: u64,
        /// The first line not stored (1-based).
        from_line: u64,
    },
    /// The store could not take it: printed as it arrived.
    Printed,
}

/// One stream's capture.
pub struct Capture {
    /// Which stream.
    pub stream: Stream,
    /// Where its bytes are.
    pub body: Body,
    /// Bytes read.
    pub bytes: u64,
    /// Lines counted while held in memory (subtracted from the shared count when
    /// the stream goes to the store).
    held_lines: u64,
    /// The pipe reached its end.
    pub eof: bool,
    /// The main thread took the capture before the end: the reader stops.
    abandoned: bool,
    /// The main thread asked the reader to take what is there and stop.
    stop: bool,
    /// While the stream is held in memory, its store file, written as it
    /// arrives: if Lens is killed outright, what it read is there.
    pub journal: Option<File>,
    /// Bytes in the store file and the offset just past its last newline.
    stored: u64,
    stored_nl_end: u64,
    /// Newlines in the store file.
    stored_newlines: u64,
    /// Newlines in the stream since it left memory, and its last byte.
    all_newlines: u64,
    last_byte: u8,
    /// Nothing is printed as it arrives: the caller holds the output elsewhere
    /// (an agent's own result) and passes it on itself when it is not stored.
    quiet: bool,
}

/// What both readers share: the memory held, and the run's store directory once
/// a stream needs it.
pub struct Shared {
    limits: Limits,
    /// Bytes of each stream the store takes.
    cap: u64,
    held_bytes: AtomicU64,
    held_lines: AtomicU64,
    spill: Mutex<Spill>,
}

/// The run directory of a spilled run, made on first need.
pub struct Spill {
    root: PathBuf,
    seed: Vec<u8>,
    /// The run's directory, once made.
    pub run: Option<RunDir>,
    /// Why the store could not take the output, once it could not.
    pub failed: Option<String>,
    /// What the store's note of a run in progress says (see
    /// [`crate::store::register_running`]).
    pub note: Vec<u8>,
}

impl Shared {
    /// State for one run: `seed` names it, `root` is the store.
    /// The run's bound on the store, `max_run_bytes`, is shared evenly by its
    /// `streams` (two for a command, one for output an agent captured).
    pub fn new(
        limits: Limits,
        root: PathBuf,
        seed: Vec<u8>,
        max_run_bytes: u64,
        streams: u64,
    ) -> Arc<Shared> {
        Arc::new(Shared {
            cap: (max_run_bytes / streams.max(1)).max(1),
            limits,
            held_bytes: AtomicU64::new(0),
            held_lines: AtomicU64::new(0),
            spill: Mutex::new(Spill {
                root,
                seed,
                run: None,
                failed: None,
                note: Vec::new(),
            }),
        })
    }

    /// The spill state.
    pub fn spill(&self) -> MutexGuard<'_, Spill> {
        self.spill.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Spill {
    /// The run's directory, made now if it does not exist yet.
    pub fn run_dir(&mut self) -> io::Result<&RunDir> {
        if let Some(why) = &self.failed {
            return Err(io::Error::other(why.clone()));
        }
        if self.run.is_none() {
            match RunDir::create(&self.root, &[&self.seed]) {
                Ok(r) => {
                    crate::store::register_running(&self.root, &r.handle, &self.note);
                    self.run = Some(r);
                }
                Err(e) => {
                    self.fail(&e);
                    return Err(e);
                }
            }
        }
        Ok(self.run.as_ref().expect("just made"))
    }

    /// Records the first reason the store failed.
    pub fn fail(&mut self, e: &io::Error) {
        if self.failed.is_none() {
            let root = self.root.display();
            self.failed = Some(format!("could not store the output in {root} ({e})"));
        }
    }
}

impl Capture {
    /// An empty capture of `stream`.
    pub fn new(stream: Stream) -> Capture {
        Capture {
            stream,
            body: Body::Memory(Vec::new()),
            bytes: 0,
            held_lines: 0,
            eof: false,
            abandoned: false,
            stop: false,
            journal: None,
            stored: 0,
            stored_nl_end: 0,
            stored_newlines: 0,
            all_newlines: 0,
            last_byte: b'\n',
            quiet: false,
        }
    }

    /// An empty capture of `stream` that prints nothing as it arrives, even
    /// once the store cannot take it: see [`Capture::gave_up`].
    pub fn quiet(stream: Stream) -> Capture {
        Capture {
            quiet: true,
            ..Capture::new(stream)
        }
    }

    /// True when the stream will not be stored whole (the store failed, or it
    /// passed its share of the bound): a quiet capture can stop reading.
    pub fn gave_up(&self) -> bool {
        matches!(self.body, Body::Passed { .. } | Body::Printed)
    }

    /// Prints bytes of the stream as they arrive, unless quiet.
    fn emit(&self, bytes: &[u8]) {
        if !self.quiet {
            print_to(self.stream, bytes);
        }
    }

    /// Takes the next bytes of the stream.
    pub fn take(&mut self, chunk: &[u8], shared: &Shared) {
        let before = self.bytes;
        self.bytes += chunk.len() as u64;
        match &mut self.body {
            Body::Memory(buf) => {
                buf.extend_from_slice(chunk);
                if let Some(f) = &mut self.journal {
                    // A journal that fails is rewritten whole at the end.
                    let _ = f.write_all(chunk);
                }
                let lines = count_newlines(chunk);
                self.held_lines += lines;
                let n = chunk.len() as u64;
                let bytes = shared.held_bytes.fetch_add(n, Ordering::SeqCst) + n;
                let lines = shared.held_lines.fetch_add(lines, Ordering::SeqCst) + lines;
                if bytes > shared.limits.bytes || lines > shared.limits.lines {
                    self.spill(shared);
                }
            }
            Body::Stored { .. } => match self.store(chunk, shared) {
                Ok(()) => {}
                Err(e) => {
                    shared.spill().fail(&e);
                    self.print_stored(before);
                    self.emit(chunk);
                    self.body = Body::Printed;
                }
            },
            Body::Passed { .. } => {
                self.count(chunk);
                self.emit(chunk);
            }
            Body::Printed => self.emit(chunk),
        }
    }

    /// Counts a chunk's newlines and keeps its last byte: the stream's lines
    /// once it is no longer held whole.
    fn count(&mut self, chunk: &[u8]) -> u64 {
        self.counted(chunk, count_newlines(chunk))
    }

    /// [`Capture::count`] of a chunk whose newlines were counted already.
    fn counted(&mut self, chunk: &[u8], newlines: u64) -> u64 {
        self.all_newlines += newlines;
        if let Some(&b) = chunk.last() {
            self.last_byte = b;
        }
        newlines
    }

    /// Moves the stream from memory to the store; past this point it is written
    /// as it arrives. If the store cannot take it, it is printed instead.
    fn spill(&mut self, shared: &Shared) {
        let Body::Memory(buf) = std::mem::replace(&mut self.body, Body::Printed) else {
            return;
        };
        shared
            .held_bytes
            .fetch_sub(buf.len() as u64, Ordering::SeqCst);
        shared
            .held_lines
            .fetch_sub(self.held_lines, Ordering::SeqCst);
        self.held_lines = 0;
        let mut spill = shared.spill();
        let opened = match self.journal.take() {
            Some(f) => rewind(f),
            None => spill
                .run_dir()
                .and_then(|run| run.create_stream(self.stream.name())),
        };
        match opened {
            Ok(file) => {
                drop(spill);
                self.body = Body::Stored {
                    file,
                    sampler: Box::<Sampler>::default(),
                };
                if let Err(e) = self.store(&buf, shared) {
                    shared.spill().fail(&e);
                    self.body = Body::Printed;
                    self.emit(&buf);
                }
            }
            Err(e) => {
                spill.fail(&e);
                drop(spill);
                self.emit(&buf);
            }
        }
    }

    /// Writes the next bytes of a stored stream into its file, up to the
    /// stream's share of the store; past it, the stream passes through.
    fn store(&mut self, chunk: &[u8], shared: &Shared) -> io::Result<()> {
        let room = shared.cap.saturating_sub(self.stored);
        let n = chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let (head, after) = chunk.split_at(n);
        let Body::Stored { file, sampler } = &mut self.body else {
            return Ok(());
        };
        file.write_all(head)?;
        // The sampler counts the newlines as it reads the chunk: they are not
        // counted twice.
        let sampled = after.is_empty().then(|| {
            let before = sampler.newlines();
            sampler.push(chunk);
            sampler.newlines() - before
        });
        let newlines = match sampled {
            Some(newlines) => self.counted(chunk, newlines),
            None => {
                self.count(chunk);
                count_newlines(head)
            }
        };
        // Searched from the end only when there is a newline to find: a byte
        // at a time, it cost a gigabyte-long line a second.
        if newlines > 0 {
            if let Some(i) = head.iter().rposition(|&b| b == b'\n') {
                self.stored_nl_end = self.stored + i as u64 + 1;
            }
        }
        self.stored += head.len() as u64;
        self.stored_newlines += newlines;
        if !after.is_empty() {
            self.pass_through(after, shared);
        }
        Ok(())
    }

    /// The stream passed its share of the store: what the store took is
    /// printed as written, then `rest`, and from here on every byte as it
    /// arrives. The store keeps the whole lines before this point.
    fn pass_through(&mut self, rest: &[u8], shared: &Shared) {
        let Body::Stored { file, .. } = std::mem::replace(&mut self.body, Body::Printed) else {
            return;
        };
        let mut file = file;
        if !self.quiet && file.seek(SeekFrom::Start(0)).is_ok() {
            copy_to(Read::by_ref(&mut file).take(self.stored), self.stream);
        }
        self.emit(rest);
        // The line cut by the bound is not stored: the store holds whole lines.
        match file.set_len(self.stored_nl_end) {
            Ok(()) => {
                self.body = Body::Passed {
                    file,
                    from_byte: self.stored_nl_end,
                    from_line: self.stored_newlines + 1,
                }
            }
            // The store would hold more than it says: the run is not stored.
            Err(e) => shared.spill().fail(&e),
        }
    }

    /// What a stream that passed its share of the store did not store.
    pub fn unstored(&self) -> Option<Unstored> {
        let Body::Passed {
            from_byte,
            from_line,
            ..
        } = &self.body
        else {
            return None;
        };
        Some(Unstored {
            stream: self.stream.name().to_string(),
            from_byte: *from_byte,
            to_byte: self.bytes,
            from_line: *from_line,
            to_line: self.all_newlines + u64::from(self.last_byte != b'\n'),
        })
    }

    /// Starts writing a stream held in memory to the store as it arrives (a run
    /// that has gone on for a while): a kill Lens cannot catch then costs the
    /// view, not the output. A store that cannot take it changes nothing here.
    pub fn start_journal(&mut self, shared: &Shared) {
        let Body::Memory(buf) = &self.body else {
            return;
        };
        if self.journal.is_some() {
            return;
        }
        let mut spill = shared.spill();
        let Ok(run) = spill.run_dir() else {
            return;
        };
        let file = run
            .create_stream(self.stream.name())
            .and_then(|mut f| f.write_all(buf).map(|()| f));
        if let Ok(f) = file {
            self.journal = Some(f);
        }
    }

    /// Prints the first `len` bytes of the store file (what it took before it
    /// failed), so the stream printed from here on is whole.
    fn print_stored(&mut self, len: u64) {
        if self.quiet {
            return;
        }
        if let Body::Stored { file, .. } = &mut self.body {
            if file.seek(SeekFrom::Start(0)).is_ok() {
                copy_to(file.take(len), self.stream);
            }
        }
    }
}

/// Reads `pipe` to its end into `cap`, then calls `done` (not when abandoned).
/// Told to [`stop`], the reader takes what the pipe holds now (at most
/// [`DRAIN_MAX`] more), then closes its end and calls `done`: a process still
/// writing there gets SIGPIPE, as it would from a closed reader.
pub fn read_into(
    mut pipe: Box<dyn platform::Pipe>,
    cap: Arc<Mutex<Capture>>,
    shared: Arc<Shared>,
    done: impl FnOnce(Stream),
) {
    // The whole pipe at a time (see platform::enlarge_pipe): the child's writes
    // and these reads cycle through memory that stays in the core's cache.
    let mut buf = vec![0u8; platform::PIPE_BYTES];
    let stream = lock(&cap).stream;
    let mut drained = 0u64;
    loop {
        let stopping = lock(&cap).stop;
        if stopping && drained >= DRAIN_MAX {
            break;
        }
        if !pipe.readable(if stopping { 0 } else { 50 }) {
            let c = lock(&cap);
            if c.abandoned {
                return;
            }
            if c.stop {
                break;
            }
            continue;
        }
        let n = match pipe.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => 0,
        };
        let mut c = lock(&cap);
        if c.abandoned {
            return;
        }
        if n == 0 {
            c.eof = true;
            break;
        }
        if c.stop {
            drained += n as u64;
        }
        c.take(&buf[..n], &shared);
    }
    drop(pipe);
    done(stream);
}

/// Empties a store file for writing from its start.
pub fn rewind(mut f: File) -> io::Result<File> {
    f.set_len(0)?;
    f.seek(SeekFrom::Start(0))?;
    Ok(f)
}

/// Starts the journal of `cap` (see [`Capture::start_journal`]).
pub fn start_journal(cap: &Arc<Mutex<Capture>>, shared: &Shared) {
    lock(cap).start_journal(shared);
}

/// How much a stopped reader still takes from its pipe.
pub const DRAIN_MAX: u64 = 4 << 20;

/// Tells the reader of `cap` to take what its pipe holds and stop.
pub fn stop(cap: &Arc<Mutex<Capture>>) {
    lock(cap).stop = true;
}

/// Takes a capture from its reader, finished or not: a reader still running stops
/// at its next read, and what it had read stays.
pub fn take(cap: &Arc<Mutex<Capture>>) -> Capture {
    let mut c = lock(cap);
    c.abandoned = true;
    let stream = c.stream;
    std::mem::replace(&mut *c, Capture::new(stream))
}

fn lock(cap: &Arc<Mutex<Capture>>) -> MutexGuard<'_, Capture> {
    cap.lock().unwrap_or_else(|p| p.into_inner())
}

/// Bytes [`print_to`] has been handed in this process (what `lens show` logs
/// as fetched).
pub static PRINTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Per stream of Lens's own, bit 0 for stdout and 1 for stderr: its reader is
/// gone; bits 2 and 3: a signal came while it was not reading, or a write
/// failed. Either way Lens writes no more to it.
static STOPPED: AtomicU8 = AtomicU8::new(0);

fn std_of(stream: Stream) -> (platform::Std, u8) {
    match stream {
        Stream::Stdout => (platform::Std::Out, 0),
        Stream::Stderr => (platform::Std::Err, 1),
    }
}

/// True when the reader of Lens's own `stream` went away while Lens wrote to it.
pub fn reader_went(stream: Stream) -> bool {
    STOPPED.load(Ordering::SeqCst) & (1 << std_of(stream).1) != 0
}

/// Writes bytes to Lens's own stdout or stderr. A closed pipe is not Lens's
/// failure and a reader that stopped reading must not hold Lens past a signal,
/// so neither is an error: Lens writes no more to that stream (see
/// [`reader_went`]). Any other failure (a full disk) is kept for
/// [`exit_after_writes`], and Lens writes no more to that stream either.
/// Every byte Lens prints goes through here: `println!` would panic instead.
pub fn print_to(stream: Stream, bytes: &[u8]) {
    PRINTED.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    write_to(stream, bytes);
}

/// Prints one line of Lens's own output (`init`'s report) on stdout.
pub fn say_out(line: &str) {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    print_to(Stream::Stdout, text.as_bytes());
}

/// Prints one of Lens's own diagnostic lines on stderr.
pub fn say(line: &str) {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    write_to(Stream::Stderr, text.as_bytes());
}

fn write_to(stream: Stream, bytes: &[u8]) {
    let (s, bit) = std_of(stream);
    if STOPPED.load(Ordering::SeqCst) & (0b101 << bit) != 0 {
        return;
    }
    match platform::write_polled(s, bytes) {
        Ok(()) => {}
        Err(platform::WriteStop::Gone) => {
            STOPPED.fetch_or(1 << bit, Ordering::SeqCst);
        }
        Err(platform::WriteStop::Signal) => {
            STOPPED.fetch_or(4 << bit, Ordering::SeqCst);
        }
        Err(platform::WriteStop::Failed(errno)) => {
            STOPPED.fetch_or(4 << bit, Ordering::SeqCst);
            let _ = WRITE_FAILED.set((stream, io::Error::from_raw_os_error(errno).to_string()));
        }
    }
}

/// The first write to Lens's own stream that failed other than by a closed
/// reader: which stream, and why.
static WRITE_FAILED: OnceLock<(Stream, String)> = OnceLock::new();
/// The failure has been said.
static WRITE_FAILURE_SAID: AtomicBool = AtomicBool::new(false);

/// The exit code once Lens's own writes are counted: a write that failed (not
/// a closed reader) is said in one line, once, and makes a run that succeeded
/// exit 1, as the command would have raw; a failed run keeps its own code.
pub fn exit_after_writes(code: i32) -> i32 {
    let Some((stream, why)) = WRITE_FAILED.get() else {
        return code;
    };
    if !WRITE_FAILURE_SAID.swap(true, Ordering::SeqCst) {
        say(&format!(
            "lens: cannot write to {}: {why}; what was printed there is incomplete",
            stream.name()
        ));
    }
    if code == 0 {
        1
    } else {
        code
    }
}

/// Copies a reader to Lens's stdout or stderr in bounded pieces.
pub fn copy_to(mut from: impl Read, stream: Stream) {
    let mut buf = vec![0u8; 256 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => print_to(stream, &buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}
