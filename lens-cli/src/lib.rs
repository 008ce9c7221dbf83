//! The `lens` binary's logic: parse the arguments, run the child with one reader
//! thread per stream, store the full output, print the view, log the run.
//!
//! `main.rs` is a line over [`run`]. Everything that depends on the operating system
//! is in `platform`; the filtering itself is `lens_core`.

mod args;
mod interactive;
mod paths;
pub mod platform;
mod runlog;
mod stats;
mod store;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use lens_core::{view, Config, Handle, Level, Options, Request, Settings, Stream, DEFAULT_BUDGET};

use args::{Invocation, RunArgs, ShowArgs};

/// Runs `lens` with the arguments after the program name; returns the exit code.
pub fn run(args: Vec<OsString>) -> i32 {
    match args::parse(args) {
        Err(e) => {
            eprintln!("lens: {e}");
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
        Ok(Invocation::Stats { json }) => stats_cmd(json),
        Ok(Invocation::Show(s)) => show_cmd(s),
        Ok(Invocation::Run(r)) => run_cmd(r),
    }
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

    let mut child = match cmd
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return spawn_failure(&argv[0], &e),
    };
    platform::ignore_terminal_signals();
    // One reader per stream: a single reader deadlocks once the unread pipe fills.
    let out_pipe = child.stdout.take();
    let err_pipe = child.stderr.take();
    let out_reader = std::thread::spawn(move || read_all(out_pipe));
    let stderr = read_all(err_pipe);
    let stdout = out_reader.join().unwrap_or_default();
    let status = child.wait();
    platform::restore_terminal_signals();
    let (exit, signal) = match status {
        Ok(s) => (platform::exit_code(s), platform::signal_of(s)),
        Err(_) => (1, None),
    };
    let duration_ms = clock.elapsed().as_millis() as u64;

    let mut diagnostics = Vec::new();
    let config = load_config(&mut diagnostics);
    let settings = config
        .as_ref()
        .map(|c| c.settings(&argv))
        .unwrap_or_default();
    let level = r.level.or(settings.level).unwrap_or(Level::Two);
    let budget = r.budget.or(settings.budget).unwrap_or(DEFAULT_BUDGET);

    let req = Request {
        argv: &argv,
        stdout: &stdout,
        stderr: &stderr,
        exit,
    };
    let start_ns = started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed_time = start_ns.to_le_bytes();
    let seed_pid = std::process::id().to_le_bytes();
    let joined = argv.join("\0");
    let seed: [&[u8]; 5] = [joined.as_bytes(), &seed_time, &seed_pid, &stdout, &stderr];
    let provisional = Handle::derive(&seed, 0);
    let opts = options(level, budget, Some(provisional), &settings);
    let mut shown = guarded_view(&req, &opts, &mut diagnostics);
    let mut handle = None;
    let changed = shown.stdout[..] != stdout[..] || shown.stderr[..] != stderr[..];
    if changed {
        // The full output reaches the store before any of the view is printed.
        let meta = store::Meta {
            argv: argv.clone(),
            cwd: std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
            exit,
            signal,
            start_ms: now_ms(started),
            duration_ms,
            stdout_bytes: stdout.len() as u64,
            stderr_bytes: stderr.len() as u64,
            stdout_lines: store::count_lines(&stdout),
            stderr_lines: store::count_lines(&stderr),
        };
        match store::save(&paths::store(), &seed, &meta, &stdout, &stderr) {
            Ok(h) => {
                if h != provisional {
                    shown = guarded_view(
                        &req,
                        &options(level, budget, Some(h), &settings),
                        &mut diagnostics,
                    );
                }
                handle = Some(h);
            }
            Err(e) => {
                diagnostics.push(format!(
                    "lens: could not store the output in {} ({e}); it is shown unfiltered",
                    paths::store().display()
                ));
                shown = view(&req, &options(level, budget, None, &settings));
            }
        }
    }
    write_streams(&shown.stdout, &shown.stderr);
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
            bytes_in: Some((stdout.len() + stderr.len()) as u64),
            bytes_out: Some(shown.len() as u64),
            handle: handle.map(|h| h.to_string()),
        },
    );
    if handle.is_some() {
        let caps = config.map(|c| c.store).unwrap_or_default();
        store::maybe_prune(&paths::store(), &caps, SystemTime::now());
    }
    exit
}

/// The view, or the raw output if the filter fails: a bug in Lens must never cost
/// the user their command's output (invariant 6). The panic is reported after the
/// output, in one line.
fn guarded_view<'a>(
    req: &Request<'a>,
    opts: &Options,
    diagnostics: &mut Vec<String>,
) -> lens_core::View<'a> {
    guarded(req, diagnostics, || view(req, opts))
}

fn guarded<'a>(
    req: &Request<'a>,
    diagnostics: &mut Vec<String>,
    filter: impl FnOnce() -> lens_core::View<'a> + std::panic::UnwindSafe,
) -> lens_core::View<'a> {
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
        lens_core::View {
            stdout: std::borrow::Cow::Borrowed(req.stdout),
            stderr: std::borrow::Cow::Borrowed(req.stderr),
            elided: false,
        }
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

fn read_all(pipe: Option<impl Read>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(mut p) = pipe {
        let _ = p.read_to_end(&mut buf);
    }
    buf
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
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => {
            diagnostics.push(format!(
                "lens: cannot read config {} ({e}); using defaults",
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

fn show_cmd(s: ShowArgs) -> i32 {
    let stored = match store::load(&paths::store(), &s.handle) {
        Ok(st) => st,
        Err(e) => {
            eprintln!("lens show: {e}");
            return 1;
        }
    };
    if let Some((a, b)) = s.lines {
        if s.level != Level::Three {
            eprintln!(
                "lens show: --lines prints raw lines; drop --level, or drop --lines to see a level"
            );
            return 2;
        }
        let stream = s.stream.unwrap_or(Stream::Stdout);
        let bytes = match stream {
            Stream::Stdout => &stored.stdout,
            Stream::Stderr => &stored.stderr,
        };
        let total = store::count_lines(bytes);
        if u64::from(a) > total {
            eprintln!(
                "lens show: {} has {total} lines; --lines {a}-{b} starts past the end",
                stream.name()
            );
            return 1;
        }
        write_streams(line_range(bytes, a, b), b"");
        return 0;
    }
    let mut budget = s.budget.unwrap_or(DEFAULT_BUDGET);
    if s.budget.is_none() {
        let mut ignored = Vec::new();
        if let Some(c) = load_config(&mut ignored) {
            budget = c.settings(&stored.meta.argv).budget.unwrap_or(budget);
        }
    }
    let req = Request {
        argv: &stored.meta.argv,
        stdout: &stored.stdout,
        stderr: &stored.stderr,
        exit: stored.meta.exit,
    };
    let opts = Options::new(s.level, Handle::parse(&s.handle));
    let opts = Options { budget, ..opts };
    let v = view(&req, &opts);
    match s.stream {
        None => write_streams(&v.stdout, &v.stderr),
        Some(Stream::Stdout) => write_streams(&v.stdout, b""),
        Some(Stream::Stderr) => write_streams(&v.stderr, b""),
    }
    0
}

/// Raw lines `a..=b` (1-based) of a stream, with their newlines.
fn line_range(bytes: &[u8], a: u32, b: u32) -> &[u8] {
    let mut line = 1u32;
    let mut start = if a == 1 { Some(0) } else { None };
    for (i, &c) in bytes.iter().enumerate() {
        if c != b'\n' {
            continue;
        }
        if line == b {
            return &bytes[start.unwrap_or(i + 1)..=i];
        }
        line += 1;
        if line == a {
            start = Some(i + 1);
        }
    }
    start.map_or(&[][..], |s| &bytes[s.min(bytes.len())..])
}

fn stats_cmd(json: bool) -> i32 {
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
    let report = stats::report(&records, bad);
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
        let v = guarded(&req, &mut diags, || panic!("index out of bounds"));
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
    fn line_ranges_are_one_based_and_inclusive() {
        let b = b"a\nb\nc\nd";
        assert_eq!(line_range(b, 1, 1), b"a\n");
        assert_eq!(line_range(b, 2, 3), b"b\nc\n");
        assert_eq!(line_range(b, 3, 9), b"c\nd");
        assert_eq!(line_range(b, 4, 4), b"d");
        assert_eq!(line_range(b"a\nb\n", 2, 2), b"b\n");
    }
}
