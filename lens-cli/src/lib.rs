//! The `lens` binary's logic: parse the arguments, run the child with one reader
//! thread per stream, store the full output, print the view, log the run.
//!
//! `main.rs` is a line over [`run`]. Everything that depends on the operating system
//! is in `platform`; the filtering itself is `lens_core`.

pub mod agents;
mod args;
mod capture;
mod init;
mod interactive;
mod paths;
pub mod platform;
pub mod rewrite;
mod runlog;
mod stats;

pub use stats::{command_key, tokens as estimated_tokens};
mod store;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Seek, Write};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use lens_core::{view, Config, Handle, Level, Options, Request, Settings, Stream, DEFAULT_BUDGET};

use args::{Invocation, RunArgs, ShowArgs};
use capture::Capture;

/// Runs `lens` with the arguments after the program name; returns the exit code.
pub fn run(args: Vec<OsString>) -> i32 {
    match args::parse(args) {
        Err(e) => {
            // A subcommand's error already names it (`lens show: …`).
            if e.starts_with("lens ") {
                eprintln!("{e}");
            } else {
                eprintln!("lens: {e}");
            }
            2
        }
        Ok(Invocation::Help) => {
            println!("{}", args::USAGE);
            0
        }
        Ok(Invocation::Version) => {
            println!("lens {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Invocation::Stats { json, since_ms }) => stats_cmd(json, since_ms),
        Ok(Invocation::Init(a)) => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let place = agents::Place {
                home: paths::home(),
                project: init::project_root(&cwd),
            };
            init::run(&a, &place, &paths::log_dir())
        }
        Ok(Invocation::Hook(agent)) => hook_cmd(agent),
        Ok(Invocation::Rewrite(line)) => match rewrite::rewrite(&line) {
            Ok(r) => {
                println!("{r}");
                0
            }
            Err(_) => 1,
        },
        Ok(Invocation::Show(s)) => show_cmd(s),
        Ok(Invocation::Run(r)) => run_cmd(r),
    }
}

/// `lens hook <agent>`: answers the event on stdin. Whatever goes wrong, the
/// agent gets no rewrite and its command runs as it was; the answer and the
/// command seen are logged for `lens stats`.
fn hook_cmd(agent: agents::Agent) -> i32 {
    let mut input = String::new();
    let read = io::stdin().take(1 << 20).read_to_string(&mut input).is_ok();
    let event: Option<serde_json::Value> = serde_json::from_str(&input).ok();
    let command = event
        .as_ref()
        .and_then(|e| e.pointer("/tool_input/command"))
        .and_then(|c| c.as_str())
        .map(String::from);
    let answer = match (read, agent) {
        (false, agents::Agent::Gemini) => Some("{}".to_string()),
        (false, _) => None,
        (true, agents::Agent::Gemini) => Some(agents::gemini::answer(&input)),
        (true, _) => {
            let cwd = event
                .as_ref()
                .and_then(|e| e.get("cwd"))
                .and_then(|c| c.as_str())
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
            let rules = agents::claude::Rules::load(&paths::home(), &cwd);
            agents::claude::answer(&input, &rules)
        }
    };
    if let Some(a) = &answer {
        println!("{a}");
    }
    if let Some(command) = command {
        let rewritten = answer.as_deref().is_some_and(|a| a.contains("lens "));
        runlog::append(
            &paths::log_dir(),
            &runlog::Record::hook(now_ms(SystemTime::now()), agent.name(), command, rewritten),
        );
    }
    0
}

fn now_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn run_cmd(r: RunArgs) -> i32 {
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

    // A child whose stdin is not a terminal leads its own process group, so a
    // signal Lens forwards reaches everything it started. One reading a terminal
    // stays in the terminal's foreground group, where it may read.
    let own_group = !io::stdin().is_terminal();
    if own_group {
        platform::own_process_group(&mut cmd);
    }
    platform::catch_signals();
    let mut child = match cmd
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            platform::restore_signals();
            return spawn_failure(&argv[0], &e);
        }
    };
    let child_id = child.id();
    platform::forward_signals_to(child_id, own_group);
    if let Some(p) = &child.stdout {
        platform::enlarge_pipe(p);
    }
    if let Some(p) = &child.stderr {
        platform::enlarge_pipe(p);
    }

    let seed = run_seed(&argv, started);
    let shared = capture::Shared::new(capture::Limits::DEFAULT, paths::store(), seed.clone());
    let caps = [Stream::Stdout, Stream::Stderr].map(|s| Arc::new(Mutex::new(Capture::new(s))));
    let (done_tx, done_rx) = mpsc::channel::<Event>();
    // One reader per stream: a single reader deadlocks once the unread pipe fills.
    let pipes: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
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

    // Until both pipes end and the child exits; after a signal, at most GRACE more.
    let mut status = None;
    let mut deadline: Option<Instant> = None;
    while open > 0 || status.is_none() {
        if deadline.is_none() && platform::received_signal().is_some() {
            deadline = Some(Instant::now() + GRACE);
        }
        let wait = match deadline {
            Some(d) if d <= Instant::now() => break,
            Some(d) => d - Instant::now(),
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

    let mut diagnostics = Vec::new();
    let config = load_config(&mut diagnostics);
    let settings = config
        .as_ref()
        .map(|c| c.settings(&argv))
        .unwrap_or_default();
    let level = r.level.or(settings.level).unwrap_or(Level::Two);
    let budget = r.budget.or(settings.budget).unwrap_or(DEFAULT_BUDGET);
    let meta = |out: &Finished, err: &Finished| store::Meta {
        argv: argv.clone(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        exit,
        signal,
        cut_short: cut,
        start_ms: now_ms(started),
        duration_ms,
        stdout_bytes: out.bytes,
        stderr_bytes: err.bytes,
        stdout_lines: out.lines(),
        stderr_lines: err.lines(),
    };
    let run = Run {
        argv: &argv,
        exit,
        opts: options(level, budget, None, &settings),
        cut,
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
            print_cut(cut, None);
            (shown, None)
        }
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
                    print_cut(cut, None);
                    (shown, None)
                }
            }
        }
        (None, None) => run.show_held(&out, &err, &seed, &meta(&out, &err), &mut diagnostics),
    };
    // Diagnostics only after the child's output has been written and flushed.
    for d in &diagnostics {
        eprintln!("{d}");
    }
    runlog::append(
        &paths::log_dir(),
        &runlog::Record {
            ts_ms: now_ms(started),
            argv: argv.clone(),
            level: level.digit(),
            passthrough: false,
            exit: Some(exit),
            dur_ms: Some(duration_ms),
            bytes_in: Some(out.bytes + err.bytes),
            bytes_out: Some(bytes_out),
            handle: handle.map(|h| h.to_string()),
            cut_short: cut,
            hook: None,
            project: std::env::current_dir()
                .ok()
                .map(|d| init::project_root(&d).display().to_string()),
        },
    );
    if let Some(h) = handle {
        let caps = config.map(|c| c.store).unwrap_or_default();
        store::maybe_prune(&paths::store(), &caps, SystemTime::now(), Some(&h));
    }
    if cut.is_some() && status.is_none() {
        // The child outlived the grace period: it ignored the signal. Lens exits
        // now; the kernel's parent-death signal (Linux) or the child's next write
        // to a closed pipe ends it.
        let _ = child_id;
    }
    exit
}

/// How long Lens waits, after a signal, for the child to end and its pipes to
/// close before it shows what it has.
const GRACE: std::time::Duration = std::time::Duration::from_millis(1500);
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
fn run_seed(argv: &[String], started: SystemTime) -> Vec<u8> {
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

/// A stream once the child is done with it.
struct Finished {
    stream: Stream,
    bytes: u64,
    body: FinishedBody,
}

enum FinishedBody {
    Memory(Vec<u8>),
    Stored {
        file: std::fs::File,
        sample: lens_core::sample::Sample,
    },
    Printed,
}

impl From<Capture> for Finished {
    fn from(c: Capture) -> Finished {
        let body = match c.body {
            capture::Body::Memory(b) => FinishedBody::Memory(b),
            capture::Body::Stored { file, sampler } => FinishedBody::Stored {
                file,
                sample: (*sampler).finish(),
            },
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
    fn lines(&self) -> u64 {
        match &self.body {
            FinishedBody::Memory(b) => store::count_lines(b),
            FinishedBody::Stored { sample, .. } => sample.lines,
            FinishedBody::Printed => 0,
        }
    }

    /// Writes a stream still in memory to the run's directory (a stored one is
    /// there already).
    fn finish_store(&self, run: &store::RunDir) -> io::Result<()> {
        match &self.body {
            FinishedBody::Memory(b) => run.create_stream(self.stream.name())?.write_all(b),
            FinishedBody::Stored { file, .. } => file.sync_data().or(Ok(())),
            FinishedBody::Printed => Err(io::Error::other("the stream was printed unstored")),
        }
    }

    /// What the pipeline reads of the stream.
    fn input(&self) -> lens_core::Input<'_> {
        let part = match &self.body {
            FinishedBody::Memory(b) => std::str::from_utf8(b).ok().map(lens_core::Part::whole),
            FinishedBody::Stored { sample, .. } => sample.part(),
            FinishedBody::Printed => None,
        };
        lens_core::Input {
            part,
            raw_len: self.bytes,
        }
    }

    /// Prints the stream as the child wrote it; returns the bytes printed now.
    fn print_raw(&self) -> u64 {
        match &self.body {
            FinishedBody::Memory(b) => {
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
            FinishedBody::Printed => self.bytes,
        }
    }
}

/// The parts of a run every way of showing it needs.
struct Run<'a> {
    argv: &'a [String],
    exit: i32,
    opts: Options,
    cut: Option<i32>,
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
        shown + print_cut(self.cut, Some(handle))
    }

    /// Shows a run held whole in memory: the view, stored first when it elides
    /// anything (or the run was cut short); returns the bytes printed and the
    /// handle.
    fn show_held(
        &self,
        out: &Finished,
        err: &Finished,
        seed: &[u8],
        meta: &store::Meta,
        diagnostics: &mut Vec<String>,
    ) -> (u64, Option<Handle>) {
        let (FinishedBody::Memory(stdout), FinishedBody::Memory(stderr)) = (&out.body, &err.body)
        else {
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
        let mut handle = None;
        if changed || self.cut.is_some() {
            // The full output reaches the store before any of the view is printed.
            match store::save(&paths::store(), &content, meta, stdout, stderr) {
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
        }
        write_streams(&shown.stdout, &shown.stderr);
        let cut = print_cut(self.cut, handle);
        (shown.len() as u64 + cut, handle)
    }
}

/// Ends the view with the cut-short notice when a signal stopped the run;
/// returns the bytes printed.
fn print_cut(cut: Option<i32>, handle: Option<Handle>) -> u64 {
    let Some(signum) = cut else { return 0 };
    let notice = lens_core::CutShort {
        signal: platform::signal_name(signum),
        handle: handle.map(|h| h.to_string()),
    };
    let line = format!("{}\n", notice.render());
    capture::print_to(Stream::Stderr, line.as_bytes());
    line.len() as u64
}

/// The view, or the raw output if the filter fails: a bug in Lens must never cost
/// the user their command's output (invariant 6). The panic is reported after the
/// output, in one line.
fn guarded_view<'a>(
    req: &Request<'a>,
    opts: &Options,
    diagnostics: &mut Vec<String>,
) -> lens_core::View<'a> {
    let raw = lens_core::View {
        stdout: std::borrow::Cow::Borrowed(req.stdout),
        stderr: std::borrow::Cow::Borrowed(req.stderr),
        elided: false,
    };
    guarded(diagnostics, raw, || view(req, opts))
}

/// Runs `filter`, or returns `raw` (with a one-line diagnostic) if it panics.
fn guarded<T>(
    diagnostics: &mut Vec<String>,
    raw: T,
    filter: impl FnOnce() -> T + std::panic::UnwindSafe,
) -> T {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(filter);
    std::panic::set_hook(previous);
    result.unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        diagnostics.push(format!(
            "lens: the filter failed ({what}); the output is shown unfiltered; please report it"
        ));
        raw
    })
}

fn options(level: Level, budget: usize, handle: Option<Handle>, s: &Settings) -> Options {
    Options {
        level,
        budget,
        handle,
        keep: s.keep.clone(),
        drop: s.drop.clone(),
    }
}

fn write_streams(out: &[u8], err: &[u8]) {
    // A closed pipe (`lens git log | head`) is not Lens's failure: ignore write errors.
    let mut o = io::stdout().lock();
    let _ = o.write_all(out);
    let _ = o.flush();
    let mut e = io::stderr().lock();
    let _ = e.write_all(err);
    let _ = e.flush();
}

fn spawn_failure(program: &str, e: &io::Error) -> i32 {
    match e.kind() {
        io::ErrorKind::NotFound => {
            eprintln!("lens: command not found: {program}; check the name or your PATH");
            127
        }
        io::ErrorKind::PermissionDenied => {
            eprintln!(
                "lens: cannot execute {program}: permission denied; check it is an executable file"
            );
            126
        }
        _ => {
            eprintln!("lens: cannot run {program}: {e}");
            126
        }
    }
}

/// Reads the config file if there is one. A broken file is a one-line diagnostic,
/// printed after the child's output, and the run goes on with defaults.
fn load_config(diagnostics: &mut Vec<String>) -> Option<Config> {
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
            diagnostics.push(format!("lens: config {} ignored: {e}", path.display()));
            None
        }
    }
}

/// The most config text Lens reads: a config is a few lines.
const CONFIG_MAX: u64 = 1 << 20;

/// The config's text, `None` when there is no config file. Only a regular file
/// under `CONFIG_MAX` is read: a device or a FIFO named as the config would
/// otherwise fill memory or hang the run.
fn read_config(path: &std::path::Path) -> Result<Option<String>, String> {
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

fn show_cmd(s: ShowArgs) -> i32 {
    let stored = match store::load(&paths::store(), &s.handle) {
        Ok(st) => st,
        Err(e) => {
            eprintln!("lens show: {e}");
            return 1;
        }
    };
    let code = show_stored(&s, &stored);
    // A damaged meta.json is said after the output, which is intact.
    if let Some(w) = &stored.meta_warning {
        eprintln!("lens show: {w}");
    }
    code
}

fn show_stored(s: &ShowArgs, stored: &store::Stored) -> i32 {
    let open = |stream: Stream| stored.open(stream.name());
    if let Some((a, b)) = s.lines {
        if s.level != Level::Three {
            eprintln!(
                "lens show: --lines prints raw lines; drop --level, or drop --lines to see a level"
            );
            return 2;
        }
        // The stream asked for, else stdout unless only stderr has lines.
        let stream = s.stream.unwrap_or_else(|| {
            let empty =
                |st: Stream| open(st).map_or(true, |f| f.metadata().map_or(true, |m| m.len() == 0));
            if empty(Stream::Stdout) && !empty(Stream::Stderr) {
                Stream::Stderr
            } else {
                Stream::Stdout
            }
        });
        let file = match open(stream) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("lens show: {e}");
                return 1;
            }
        };
        let total = copy_lines(file, a, b);
        if u64::from(a) > total {
            eprintln!(
                "lens show: {} has {total} lines; --lines {a}-{b} starts past the end",
                stream.name()
            );
            return 1;
        }
        return 0;
    }
    let streams: Vec<Stream> = match s.stream {
        Some(st) => vec![st],
        None => vec![Stream::Stdout, Stream::Stderr],
    };
    // One stream asked for goes to stdout, so it can be piped; both go where the
    // command wrote them.
    let to = |st: Stream| {
        if s.stream.is_some() {
            Stream::Stdout
        } else {
            st
        }
    };
    if s.level == Level::Three {
        for st in streams {
            match open(st) {
                Ok(f) => capture::copy_to(f, to(st)),
                Err(e) => {
                    eprintln!("lens show: {e}");
                    return 1;
                }
            }
        }
        return 0;
    }
    let mut budget = s.budget.unwrap_or(DEFAULT_BUDGET);
    if s.budget.is_none() {
        let mut ignored = Vec::new();
        if let Some(c) = load_config(&mut ignored) {
            budget = c.settings(&stored.meta.argv).budget.unwrap_or(budget);
        }
    }
    let mut read = Vec::new();
    for st in [Stream::Stdout, Stream::Stderr] {
        match open(st).and_then(|f| Reread::of(f, st)) {
            Ok(r) => read.push(r),
            Err(e) => {
                eprintln!("lens show: {e}");
                return 1;
            }
        }
    }
    let opts = Options {
        budget,
        ..Options::new(s.level, Handle::parse(&s.handle))
    };
    let (v_out, v_err, _) = lens_core::view_parts(
        &stored.meta.argv,
        read[0].input(),
        read[1].input(),
        stored.meta.exit,
        &opts,
    );
    for (v, r) in [(v_out, &read[0]), (v_err, &read[1])] {
        if !streams.contains(&r.stream) {
            continue;
        }
        match v {
            Some(text) => capture::print_to(to(r.stream), text.as_bytes()),
            None => match open(r.stream) {
                Ok(f) => capture::copy_to(f, to(r.stream)),
                Err(e) => eprintln!("lens show: {e}"),
            },
        }
    }
    0
}

/// A stored stream read back for a view: whole when it is small enough to hold,
/// else sampled as it was when it ran.
struct Reread {
    stream: Stream,
    bytes: u64,
    whole: Vec<u8>,
    sample: Option<lens_core::sample::Sample>,
}

impl Reread {
    fn of(mut f: std::fs::File, stream: Stream) -> Result<Reread, String> {
        let fail = |e: io::Error| format!("cannot read the stored {}: {e}", stream.name());
        let bytes = f.metadata().map_err(fail)?.len();
        let limits = capture::Limits::DEFAULT;
        let mut buf = vec![0u8; 256 << 10];
        let mut whole = Vec::new();
        let mut lines = 0;
        let mut sampler: Option<lens_core::sample::Sampler> = None;
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(e)),
            };
            let chunk = &buf[..n];
            if let Some(s) = sampler.as_mut() {
                s.push(chunk);
                continue;
            }
            whole.extend_from_slice(chunk);
            lines += lens_core::sample::count_newlines(chunk);
            if whole.len() as u64 > limits.bytes || lines > limits.lines {
                let mut s = lens_core::sample::Sampler::default();
                s.push(&whole);
                whole = Vec::new();
                sampler = Some(s);
            }
        }
        Ok(Reread {
            stream,
            bytes,
            whole,
            sample: sampler.map(lens_core::sample::Sampler::finish),
        })
    }

    fn input(&self) -> lens_core::Input<'_> {
        let part = match &self.sample {
            Some(s) => s.part(),
            None => std::str::from_utf8(&self.whole)
                .ok()
                .map(lens_core::Part::whole),
        };
        lens_core::Input {
            part,
            raw_len: self.bytes,
        }
    }
}

/// Copies raw lines `a..=b` (1-based) of a stored stream to stdout, in bounded
/// pieces; returns how many lines the stream has.
fn copy_lines(mut f: impl Read, a: u32, b: u32) -> u64 {
    let (a, b) = (u64::from(a), u64::from(b));
    let mut buf = vec![0u8; 256 << 10];
    let mut line = 1u64;
    let mut partial = false;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        let mut start = 0;
        for (i, &c) in chunk.iter().enumerate() {
            if c != b'\n' {
                continue;
            }
            if (a..=b).contains(&line) {
                capture::print_to(Stream::Stdout, &chunk[start..=i]);
            }
            line += 1;
            start = i + 1;
        }
        partial = start < chunk.len();
        if partial && (a..=b).contains(&line) {
            capture::print_to(Stream::Stdout, &chunk[start..]);
        }
    }
    // A last line without a newline counts.
    line - 1 + u64::from(partial)
}

fn stats_cmd(json: bool, since_ms: Option<u64>) -> i32 {
    let dir = paths::log_dir();
    let (records, bad) = match runlog::read(&dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => (Vec::new(), 0),
        Err(e) => {
            eprintln!(
                "lens stats: cannot read {} ({e}); check LENS_LOG_DIR",
                dir.join("runs.jsonl").display()
            );
            return 1;
        }
    };
    let report = stats::report(&records, bad, since_ms);
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("lens stats: {e}");
                return 1;
            }
        }
    } else {
        print!("{}", stats::table(&report));
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_panic_shows_the_raw_output() {
        let argv = vec!["x".to_string()];
        let req = Request {
            argv: &argv,
            stdout: b"out\n",
            stderr: b"err\n",
            exit: 3,
        };
        let mut diags = Vec::new();
        let raw = lens_core::View {
            stdout: std::borrow::Cow::Borrowed(req.stdout),
            stderr: std::borrow::Cow::Borrowed(req.stderr),
            elided: false,
        };
        let v = guarded(&mut diags, raw, || -> lens_core::View {
            panic!("index out of bounds")
        });
        assert_eq!(&v.stdout[..], b"out\n");
        assert_eq!(&v.stderr[..], b"err\n");
        assert!(!v.elided);
        assert_eq!(diags, vec!["lens: the filter failed (index out of bounds); the output is shown unfiltered; please report it"]);
        // And a filter that works is passed through.
        let mut diags = Vec::new();
        let opts = Options::new(Level::Three, Handle::parse("0000abcd"));
        let v = guarded_view(&req, &opts, &mut diags);
        assert_eq!(&v.stdout[..], b"out\n");
        assert!(diags.is_empty());
    }

    #[test]
    fn line_ranges_count_every_line_wherever_the_reads_end() {
        assert_eq!(copy_lines(&b"a\nb\nc\nd"[..], 9, 9), 4);
        assert_eq!(copy_lines(&b"a\nb\n"[..], 9, 9), 2);
        assert_eq!(copy_lines(&b""[..], 9, 9), 0);
    }
}
