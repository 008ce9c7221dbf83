//! `lens <cmd>`: run the child with one reader thread per stream, store the full
//! output, print the view, log the run.

use std::io::{self, IsTerminal, Read, Seek, Write};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use lens_core::marker::imitates;
use lens_core::{view, Handle, Level, Options, Request, Stream, DEFAULT_BUDGET};

use crate::args::RunArgs;
use crate::capture::{self, Capture};
use crate::config::load_config;
use crate::view::{guarded, guarded_view, options};
use crate::{interactive, now_ms, paths, platform, runlog, store};

pub(crate) fn cmd(r: RunArgs) -> i32 {
    let argv: Vec<String> = r
        .argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let started = SystemTime::now();
    let clock = Instant::now();
    let mut cmd = Command::new(&r.argv[0]);
    cmd.args(&r.argv[1..]);

    if interactive::is_interactive(&argv, io::stdin().is_terminal()) {
        // The record is written first: exec leaves no process to write it after.
        runlog::append(
            &paths::log_dir(),
            &runlog::Record::passthrough(
                now_ms(started),
                argv.clone(),
                r.level.unwrap_or(Level::Three).digit(),
            ),
        );
        let err = platform::exec(&mut cmd);
        return spawn_failure(&argv[0], &err);
    }

    // The child runs as the caller set Lens up: in Lens's process group (a kill
    // aimed at the group, or a terminal's foreground, covers both), with the
    // descriptors and ignored signals the caller gave.
    platform::inherit_callers_setup(&mut cmd);
    platform::catch_signals();
    // The caller gave one file as stdout and stderr (`2>&1`): one pipe for both
    // keeps the order the child wrote them in.
    let merged = platform::stdout_is_stderr()
        .then(platform::pipe)
        .and_then(Result::ok)
        .and_then(|(r, w)| Some((r, w.try_clone().ok()?, w)));
    cmd.stdin(Stdio::inherit());
    let mut merged_reader = None;
    match merged {
        Some((r, w1, w2)) => {
            cmd.stdout(Stdio::from(w1)).stderr(Stdio::from(w2));
            merged_reader = Some(r);
        }
        None => {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
    }
    let spawned = cmd.spawn();
    // The command holds the parent's copies of the merged pipe's write end: they
    // must close here, or the pipe never ends.
    drop(cmd);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            platform::restore_signals();
            return spawn_failure(&argv[0], &e);
        }
    };
    let merged = merged_reader.is_some();
    let child_id = child.id();
    platform::forward_signals_to(child_id);
    if let Some(p) = &child.stdout {
        platform::enlarge_pipe(p);
    }
    if let Some(p) = &child.stderr {
        platform::enlarge_pipe(p);
    }
    if let Some(p) = &merged_reader {
        platform::enlarge_pipe(p);
    }

    // Read before the run: the store's bounds apply while it captures. Its
    // diagnostics wait until the child's output is shown.
    let mut diagnostics = Vec::new();
    let config = load_config(&mut diagnostics);
    let store_caps = config.as_ref().map(|c| c.store.clone()).unwrap_or_default();
    let mut settings = config
        .as_ref()
        .map(|c| c.settings(&argv))
        .unwrap_or_default();
    let cwd = std::env::current_dir().unwrap_or_default();
    settings.filter = crate::filters::pick(&argv, &cwd, &mut diagnostics);
    let level = r.level.or(settings.level).unwrap_or(Level::Two);
    let budget = r.budget.or(settings.budget).unwrap_or(DEFAULT_BUDGET);
    let seed = run_seed(&argv, started);
    let shared = capture::Shared::new(
        capture::Limits::DEFAULT,
        paths::store(),
        seed.clone(),
        store_caps.max_run_bytes,
        2,
    );
    shared.spill().note = serde_json::to_vec(&store::RunningNote {
        pid: std::process::id(),
        argv: argv.clone(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        start_ms: now_ms(started),
    })
    .unwrap_or_default();
    let caps = [Stream::Stdout, Stream::Stderr].map(|s| Arc::new(Mutex::new(Capture::new(s))));
    let (done_tx, done_rx) = mpsc::channel::<Event>();
    // One reader per stream: a single reader deadlocks once the unread pipe fills.
    let pipes: [Option<Box<dyn platform::Pipe>>; 2] = [
        match merged_reader {
            Some(r) => Some(Box::new(r) as Box<dyn platform::Pipe>),
            None => child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn platform::Pipe>),
        },
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn platform::Pipe>),
    ];
    let mut open = 0;
    for (pipe, cap) in pipes.into_iter().zip(&caps) {
        let Some(pipe) = pipe else { continue };
        open += 1;
        let (cap, shared, tx) = (Arc::clone(cap), Arc::clone(&shared), done_tx.clone());
        std::thread::spawn(move || {
            capture::read_into(pipe, cap, shared, |_| {
                let _ = tx.send(Event::Eof);
            })
        });
    }
    let waiter = done_tx.clone();
    std::thread::spawn(move || {
        let _ = waiter.send(Event::Exit(child.wait()));
    });
    drop(done_tx);

    // Until both pipes end and the child exits; after a signal, at most GRACE
    // more; after the child exits, at most AFTER_EXIT for a pipe a process it
    // started still holds.
    let mut status = None;
    let mut deadline: Option<Instant> = None;
    let mut settle: Option<Instant> = None;
    let mut stopped_at: Option<Instant> = None;
    let mut stdout_gone = false;
    let mut journaled = false;
    while open > 0 || status.is_none() {
        let now = Instant::now();
        if !journaled && status.is_none() && clock.elapsed() >= JOURNAL_AFTER {
            // A run that goes on is written to the store as it arrives.
            for c in &caps {
                capture::start_journal(c, &shared);
            }
            journaled = true;
        }
        if deadline.is_none() && platform::received_signal().is_some() {
            deadline = Some(now + GRACE);
        }
        if !stdout_gone && platform::reader_gone(platform::Std::Out) {
            // The reader of Lens's stdout is gone: the child's stdout pipe closes
            // too, and the child meets the closed pipe it would have met raw.
            stdout_gone = true;
            capture::stop(&caps[0]);
        }
        if status.is_some() && settle.is_none() {
            settle = Some(now + AFTER_EXIT);
        }
        if settle.is_some_and(|t| now >= t) && stopped_at.is_none() {
            for c in &caps {
                capture::stop(c);
            }
            stopped_at = Some(now);
        }
        // A stopped reader takes what its pipe holds without waiting for more
        // (at most DRAIN_MAX) and reports: it is waited for, since leaving it
        // on a machine too busy to run it at once would lose the end of the
        // output (invariant 5). STOP_WAIT only bounds a reader that never
        // reports.
        if stopped_at.is_some_and(|t| now >= t + STOP_WAIT) {
            break;
        }
        let wait = match deadline {
            Some(d) if d <= now => break,
            Some(d) => d - now,
            None => POLL,
        };
        match done_rx.recv_timeout(wait.min(POLL)) {
            Ok(Event::Eof) => open -= 1,
            Ok(Event::Exit(s)) => status = Some(s),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let duration_ms = clock.elapsed().as_millis() as u64;
    let cut = platform::received_signal();
    let (child_exit, signal) = match status {
        Some(Ok(s)) => (platform::exit_code(s), platform::signal_of(s)),
        Some(Err(_)) | None => (1, None),
    };
    // Cut short, Lens reports its own death: the exit status a shell would show.
    let exit = cut.map_or(child_exit, |s| 128 + s);
    let [out, err] = caps.map(|c| capture::take(&c));
    // A stream past its share of the store passed through whole from a line
    // on: said in a notice and in meta.json, and never counted as recoverable.
    let unstored: Vec<capture::Unstored> =
        [&out, &err].iter().filter_map(|c| c.unstored()).collect();
    // The child exited and a process it started still held a stream open: what
    // it wrote after the grace period was not captured.
    let lingered: Vec<Stream> = [&out, &err]
        .into_iter()
        .filter(|c| stopped_at.is_some() && !c.eof && !(stdout_gone && c.stream == Stream::Stdout))
        .map(|c| c.stream)
        .collect();
    // Kept in the store even when nothing is elided: the run did not end on its own.
    let cut_short = cut.or(stdout_gone.then_some(13));

    let meta = |out: &Finished, err: &Finished| store::Meta {
        argv: argv.clone(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        exit,
        signal,
        cut_short,
        merged,
        lingered: lingered.iter().map(|s| s.name().to_string()).collect(),
        unstored: unstored.clone(),
        start_ms: now_ms(started),
        duration_ms,
        stdout_bytes: out.bytes,
        stderr_bytes: err.bytes,
        stdout_lines: out.lines(&unstored),
        stderr_lines: err.lines(&unstored),
    };
    let run = Run {
        argv: &argv,
        exit,
        opts: options(level, budget, None, &settings),
        cut,
        keep: cut_short.is_some(),
        unstored: unstored.clone(),
        lingered: lingered.clone(),
    };
    let mut spill = shared.spill();
    let stored_run = spill.run.take();
    let failed = spill.failed.take();
    drop(spill);
    let (out, err) = (Finished::from(out), Finished::from(err));
    let (bytes_out, handle) = match (failed, stored_run) {
        (Some(why), run_dir) => {
            // The store failed: nothing is elided, and what was not printed as it
            // arrived is printed now.
            diagnostics.push(format!("lens: {why}; the output is shown unfiltered"));
            let shown = out.print_raw() + err.print_raw();
            if let Some(d) = run_dir {
                d.remove();
            }
            run.print_notices(None, false);
            (shown, None)
        }
        (None, Some(run_dir)) if out.held() && err.held() => run.show_held(
            &out,
            &err,
            (&seed, Some(run_dir)),
            &meta(&out, &err),
            &mut diagnostics,
        ),
        (None, Some(run_dir)) => {
            let h = run_dir.handle;
            let stored = out
                .finish_store(&run_dir)
                .and_then(|()| err.finish_store(&run_dir))
                .and_then(|()| run_dir.write_meta(&meta(&out, &err)));
            match stored {
                Ok(()) => (run.show_spilled(&out, &err, h, &mut diagnostics), Some(h)),
                Err(e) => {
                    diagnostics.push(format!(
                        "lens: could not store the output in {} ({e}); it is shown unfiltered",
                        paths::store().display()
                    ));
                    let shown = out.print_raw() + err.print_raw();
                    run_dir.remove();
                    run.print_notices(None, false);
                    (shown, None)
                }
            }
        }
        (None, None) => run.show_held(
            &out,
            &err,
            (&seed, None),
            &meta(&out, &err),
            &mut diagnostics,
        ),
    };
    // A signal that came while Lens wrote the view (to a reader that stopped
    // reading) ends it as it would have ended the command; a closed reader met
    // while writing the view ends it as a writer killed by SIGPIPE.
    let late = platform::received_signal().filter(|_| cut.is_none());
    let cut_short = cut_short.or(late);
    let final_exit = if let Some(s) = late {
        128 + s
    } else if cut.is_none() && !stdout_gone && capture::reader_went(Stream::Stdout) {
        128 + 13
    } else {
        exit
    };
    // Diagnostics only after the child's output has been written and flushed.
    for d in &diagnostics {
        capture::say(d);
    }
    // Output Lens could not write (a full disk) fails the run as it would
    // have failed the command.
    let final_exit = capture::exit_after_writes(final_exit);
    runlog::append(
        &paths::log_dir(),
        &runlog::Record {
            ts_ms: now_ms(started),
            argv: argv.clone(),
            level: level.digit(),
            passthrough: false,
            exit: Some(final_exit),
            dur_ms: Some(duration_ms),
            bytes_in: Some(out.bytes + err.bytes),
            bytes_out: Some(bytes_out),
            handle: handle.map(|h| h.to_string()),
            cut_short,
            hook: None,
            fetch: false,
            project: std::env::current_dir()
                .ok()
                .map(|d| paths::project_root(&d).display().to_string()),
        },
    );
    // A run an earlier Lens could not finish (killed outright) is logged now, as
    // cut short, and its stored output named.
    for (h, m) in store::recover_killed(&paths::store()) {
        runlog::append(
            &paths::log_dir(),
            &runlog::Record {
                ts_ms: m.start_ms,
                argv: m.argv.clone(),
                level: level.digit(),
                passthrough: false,
                exit: Some(m.exit),
                dur_ms: Some(m.duration_ms),
                bytes_in: Some(m.stdout_bytes + m.stderr_bytes),
                bytes_out: Some(0),
                handle: Some(h.to_string()),
                cut_short: m.cut_short,
                fetch: false,
                hook: None,
                project: Some(
                    paths::project_root(std::path::Path::new(&m.cwd))
                        .display()
                        .to_string(),
                ),
            },
        );
        capture::say(&format!(
            "lens: an earlier run of `{}` was killed before it could show its output; what it printed is stored: lens show {h}",
            m.argv.join(" ")
        ));
    }
    if let Some(h) = handle {
        store::maybe_prune(&paths::store(), &store_caps, SystemTime::now(), Some(&h));
    }
    final_exit
}

/// How long Lens waits, after a signal, for the child to end and its pipes to
/// close before it shows what it has.
const GRACE: std::time::Duration = std::time::Duration::from_millis(1500);
/// How long Lens waits, after the child exits, for pipes a process it started
/// may still hold (`sh -c 'daemon & echo started'`): the shell would not wait.
const AFTER_EXIT: std::time::Duration = std::time::Duration::from_millis(250);
/// The most a reader told to stop is waited for: it takes only what its pipe
/// already holds, so this is reached only by one that never gets to run.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// How long a run goes before its output is written to the store as it arrives.
const JOURNAL_AFTER: std::time::Duration = std::time::Duration::from_millis(250);
/// How often the main thread looks for a caught signal while it waits.
const POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// What the main thread waits for.
enum Event {
    Eof,
    Exit(io::Result<std::process::ExitStatus>),
}

/// The seed a run's handle is derived from: what ran, when, in which process,
/// and eight bytes of the OS's randomness, so no command can print a marker with
/// its own run's handle in advance.
pub(crate) fn run_seed(argv: &[String], started: SystemTime) -> Vec<u8> {
    use std::hash::{BuildHasher, Hasher};
    let mut seed = argv.join("\0").into_bytes();
    let ns = started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    seed.extend_from_slice(&ns.to_le_bytes());
    seed.extend_from_slice(&std::process::id().to_le_bytes());
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    seed.extend_from_slice(&random.to_le_bytes());
    seed
}

/// A stream once its writer is done with it (a child, or the output an agent
/// captured, read by [`crate::captured`]).
pub(crate) struct Finished {
    pub(crate) stream: Stream,
    pub(crate) bytes: u64,
    pub(crate) body: FinishedBody,
}

pub(crate) enum FinishedBody {
    /// Held whole, and maybe written to the store as it came (the journal).
    Memory(Vec<u8>, Option<std::fs::File>),
    Stored {
        file: std::fs::File,
        sample: lens_core::sample::Sample,
    },
    /// Printed as it arrived past its share of the store, which holds its head.
    Passed(std::fs::File),
    Printed,
}

impl From<Capture> for Finished {
    fn from(c: Capture) -> Finished {
        let body = match c.body {
            capture::Body::Memory(b) => FinishedBody::Memory(b, c.journal),
            capture::Body::Stored { file, sampler } => FinishedBody::Stored {
                file,
                sample: (*sampler).finish(),
            },
            capture::Body::Passed { file, .. } => FinishedBody::Passed(file),
            capture::Body::Printed => FinishedBody::Printed,
        };
        Finished {
            stream: c.stream,
            bytes: c.bytes,
            body,
        }
    }
}

impl Finished {
    /// True when the stream is whole in memory.
    pub(crate) fn held(&self) -> bool {
        matches!(self.body, FinishedBody::Memory(..))
    }

    pub(crate) fn lines(&self, unstored: &[capture::Unstored]) -> u64 {
        match &self.body {
            FinishedBody::Memory(b, _) => store::count_lines(b),
            FinishedBody::Stored { sample, .. } => sample.lines,
            FinishedBody::Passed(_) => unstored
                .iter()
                .find(|u| u.stream == self.stream.name())
                .map_or(0, |u| u.to_line),
            FinishedBody::Printed => 0,
        }
    }

    /// Writes a stream still in memory to the run's directory (a stored one is
    /// there already).
    pub(crate) fn finish_store(&self, run: &store::RunDir) -> io::Result<()> {
        match &self.body {
            FinishedBody::Memory(b, Some(f)) => capture::rewind(f.try_clone()?)?.write_all(b),
            FinishedBody::Memory(b, None) => run.create_stream(self.stream.name())?.write_all(b),
            FinishedBody::Stored { file, .. } | FinishedBody::Passed(file) => {
                file.sync_data().or(Ok(()))
            }
            FinishedBody::Printed => Err(io::Error::other("the stream was printed unstored")),
        }
    }

    /// What the pipeline reads of the stream.
    pub(crate) fn input(&self) -> lens_core::Input<'_> {
        let part = match &self.body {
            FinishedBody::Memory(b, _) => std::str::from_utf8(b).ok().map(lens_core::Part::whole),
            FinishedBody::Stored { sample, .. } => sample.part(),
            FinishedBody::Passed(_) | FinishedBody::Printed => None,
        };
        lens_core::Input {
            part,
            raw_len: self.bytes,
        }
    }

    /// Prints the stream as the child wrote it; returns the bytes printed now.
    pub(crate) fn print_raw(&self) -> u64 {
        match &self.body {
            FinishedBody::Memory(b, _) => {
                capture::print_to(self.stream, b);
                b.len() as u64
            }
            FinishedBody::Stored { file, .. } => {
                let mut f = file;
                if f.seek(io::SeekFrom::Start(0)).is_ok() {
                    capture::copy_to(f.take(self.bytes), self.stream);
                }
                self.bytes
            }
            FinishedBody::Passed(_) | FinishedBody::Printed => self.bytes,
        }
    }
}

/// The parts of a run every way of showing it needs.
struct Run<'a> {
    argv: &'a [String],
    exit: i32,
    opts: Options,
    /// The signal Lens caught, if one cut the run short.
    cut: Option<i32>,
    /// Stored even when the view elides nothing: the run did not end on its own.
    keep: bool,
    /// Streams a process the child started still held open when Lens stopped.
    lingered: Vec<Stream>,
    /// What the run's bound on the store left out.
    unstored: Vec<capture::Unstored>,
}

impl Run<'_> {
    /// Shows a run some of whose output went to the store as it arrived; returns
    /// the bytes printed.
    fn show_spilled(
        &self,
        out: &Finished,
        err: &Finished,
        handle: Handle,
        diagnostics: &mut Vec<String>,
    ) -> u64 {
        let opts = Options {
            handle: Some(handle),
            ..self.opts.clone()
        };
        let (v_out, v_err, _) = guarded(diagnostics, (None, None, false), || {
            lens_core::view_parts(self.argv, out.input(), err.input(), self.exit, &opts)
        });
        let imitated = [&v_out, &v_err].iter().any(|v| {
            v.as_deref()
                .is_some_and(|t| imitates(t.as_bytes(), &handle))
        });
        let mut shown = 0;
        for (v, f) in [(v_out, out), (v_err, err)] {
            shown += match v {
                Some(text) => {
                    capture::print_to(f.stream, text.as_bytes());
                    text.len() as u64
                }
                None => f.print_raw(),
            };
        }
        shown + self.print_notices(Some(handle), imitated)
    }

    /// Shows a run held whole in memory: the view, stored first when it elides
    /// anything (or the run was cut short); returns the bytes printed and the
    /// handle.
    fn show_held(
        &self,
        out: &Finished,
        err: &Finished,
        (seed, journal): (&[u8], Option<store::RunDir>),
        meta: &store::Meta,
        diagnostics: &mut Vec<String>,
    ) -> (u64, Option<Handle>) {
        let (FinishedBody::Memory(stdout, _), FinishedBody::Memory(stderr, _)) =
            (&out.body, &err.body)
        else {
            if let Some(j) = journal {
                j.remove();
            }
            return (out.print_raw() + err.print_raw(), None);
        };
        let req = Request {
            argv: self.argv,
            stdout,
            stderr,
            exit: self.exit,
        };
        let content: [&[u8]; 3] = [seed, stdout, stderr];
        let provisional = Handle::derive(&content, 0);
        let with = |h: Option<Handle>| Options {
            handle: h,
            ..self.opts.clone()
        };
        let mut shown = guarded_view(&req, &with(Some(provisional)), diagnostics);
        let changed = shown.stdout[..] != stdout[..] || shown.stderr[..] != stderr[..];
        // The command printed a line shaped like Lens's own: the run is stored
        // so the view can name its own handle, and a marker with another handle
        // is visibly the command's text.
        let imitated =
            imitates(&shown.stdout, &provisional) || imitates(&shown.stderr, &provisional);
        let mut handle = None;
        if changed || self.keep || imitated {
            // The full output reaches the store before any of the view is printed;
            // a run written there as it arrived is finished where it is.
            let saved = match journal {
                Some(j) => {
                    let done = out
                        .finish_store(&j)
                        .and_then(|()| err.finish_store(&j))
                        .and_then(|()| j.write_meta(meta));
                    match done {
                        Ok(()) => Ok(j.handle),
                        Err(e) => {
                            j.remove();
                            Err(e)
                        }
                    }
                }
                None => store::save(&paths::store(), &content, meta, stdout, stderr),
            };
            match saved {
                Ok(h) => {
                    if h != provisional {
                        shown = guarded_view(&req, &with(Some(h)), diagnostics);
                    }
                    handle = Some(h);
                }
                Err(e) => {
                    diagnostics.push(format!(
                        "lens: could not store the output in {} ({e}); it is shown unfiltered",
                        paths::store().display()
                    ));
                    shown = view(&req, &with(None));
                }
            }
        } else if let Some(j) = journal {
            j.remove();
        }
        write_streams(&shown.stdout, &shown.stderr);
        let cut = self.print_notices(handle, imitated);
        (shown.len() as u64 + cut, handle)
    }
}

impl Run<'_> {
    /// Ends the view with Lens's notices: the cut-short notice when a signal
    /// stopped the run, and one when a process the child started kept a stream
    /// open past its exit; returns the bytes printed.
    fn print_notices(&self, handle: Option<Handle>, imitated: bool) -> u64 {
        let mut text = String::new();
        if let (true, Some(h)) = (imitated, handle) {
            text.push_str(&format!(
                "[lens: this run's handle is {h}; a line shaped like a marker with another handle, or none, is the command's own output handle={h}]\n"
            ));
        }
        if !self.lingered.is_empty() {
            let names: Vec<&str> = self.lingered.iter().map(|s| s.name()).collect();
            text.push_str(&format!(
                "[lens: the command exited but a process it started kept {} open; what that process wrote later was not captured]\n",
                names.join(" and ")
            ));
        }
        // Without a handle nothing was stored: the notice would mislead.
        for u in self.unstored.iter().filter(|_| handle.is_some()) {
            let h = handle.map(|h| format!(" handle={h}")).unwrap_or_default();
            text.push_str(&format!(
                "[lens: {} from line {} (byte {}) on passed through whole and was not stored: the run passed [store] max_run_bytes; lines {}-{} are above as the command wrote them{h}]\n",
                u.stream, u.from_line, u.from_byte, u.from_line, u.to_line
            ));
        }
        if let Some(signum) = self.cut {
            let notice = lens_core::CutShort {
                signal: platform::signal_name(signum),
                handle: handle.map(|h| h.to_string()),
            };
            text.push_str(&notice.render());
            text.push('\n');
        }
        if text.is_empty() {
            return 0;
        }
        capture::print_to(Stream::Stderr, text.as_bytes());
        text.len() as u64
    }
}

pub(crate) fn write_streams(out: &[u8], err: &[u8]) {
    // A closed pipe (`lens git log | head`) is not Lens's failure (print_to
    // notes it for the exit code).
    capture::print_to(Stream::Stdout, out);
    capture::print_to(Stream::Stderr, err);
}

pub(crate) fn spawn_failure(program: &str, e: &io::Error) -> i32 {
    match e.kind() {
        io::ErrorKind::NotFound => {
            capture::say(&format!(
                "lens: command not found: {program}; check the name or your PATH"
            ));
            127
        }
        io::ErrorKind::PermissionDenied => {
            capture::say(&format!(
                "lens: cannot execute {program}: permission denied; check it is an executable file"
            ));
            126
        }
        _ => {
            capture::say(&format!("lens: cannot run {program}: {e}"));
            126
        }
    }
}
