//! The `lens` binary's logic. This file only dispatches: each subcommand has its
//! module (`run` for `lens <cmd>`, `show`, `hook`, `stats`, `init`, `filters`
//! for `verify` and `trust`), and the process control they share is in
//! `capture` and `platform`.
//!
//! `main.rs` is a line over [`run`]. Everything that depends on the operating system
//! is in `platform`; the filtering itself is `lens_core`.

pub mod agents;
mod args;
mod capture;
pub mod captured;
pub mod cmdline;
mod config;
pub mod event;
mod files;
mod filters;
mod hook;
mod init;
mod interactive;
mod paths;
pub mod platform;
mod run;
mod runlog;
mod show;
mod stats;
mod store;
mod view;

pub use args::flags_in;
pub use stats::{command_key, tokens as estimated_tokens};

pub(crate) use runlog::now_ms;

use std::ffi::OsString;

use args::Invocation;
use lens_core::Stream;

/// Runs `lens` with the arguments after the program name; returns the exit code.
pub fn run(args: Vec<OsString>) -> i32 {
    no_panic_messages();
    let code = match args::parse(args) {
        Err(e) => {
            // A subcommand's error already names it (`lens show: …`).
            if e.starts_with("lens ") {
                capture::say(&e);
            } else {
                capture::say(&format!("lens: {e}"));
            }
            2
        }
        Ok(Invocation::Help(text)) => print_help(text),
        Ok(Invocation::Version) => own_output(|| {
            let v = format!("lens {}\n", env!("CARGO_PKG_VERSION"));
            capture::print_to(Stream::Stdout, v.as_bytes());
            0
        }),
        Ok(Invocation::Stats { json, since_ms }) => own_output(|| stats::cmd(json, since_ms)),
        Ok(Invocation::Init(a)) => own_output(|| {
            let cwd = std::env::current_dir().unwrap_or_default();
            let place = agents::Place {
                home: paths::home(),
                project: init::project_root(&cwd),
            };
            init::run(&a, &place, &paths::log_dir())
        }),
        Ok(Invocation::Hook(agent)) => hook::cmd(agent),
        Ok(Invocation::As(a)) => captured::as_cmd(a),
        Ok(Invocation::Verify(files)) => own_output(|| filters::verify_cmd(&files)),
        Ok(Invocation::Trust) => own_output(filters::trust_cmd),
        Ok(Invocation::Show(s)) => show::cmd(s),
        Ok(Invocation::Run(r)) => run::cmd(r),
    };
    capture::exit_after_writes(code)
}

/// Prints a help text (the harness binaries' too) on stdout as Lens prints its
/// own output: a reader that closed early ends it quietly (exit 141), another
/// write error is one line (exit 1). Returns the exit code.
pub fn print_help(text: &str) -> i32 {
    let code = own_output(|| {
        capture::print_to(Stream::Stdout, format!("{text}\n").as_bytes());
        0
    });
    capture::exit_after_writes(code)
}

/// Runs a subcommand whose output is Lens's own: a reader that closed before
/// the end ends it as SIGPIPE ends a command (exit 141), quietly.
fn own_output(cmd: impl FnOnce() -> i32) -> i32 {
    let code = cmd();
    if code == 0 && capture::reader_went(Stream::Stdout) {
        128 + 13
    } else {
        code
    }
}

/// A panic never shows Rust's message to the user. A `println!` that met a
/// closed reader ends Lens as SIGPIPE would (141, quietly); one that met any
/// other write error says it in one line and exits 1; any other panic is one
/// line asking for a report (with `RUST_BACKTRACE` set, Rust's own report).
fn no_panic_messages() {
    let rusts_own = std::panic::take_hook();
    let report = std::env::var_os("RUST_BACKTRACE").is_some();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if let Some(why) = what.strip_prefix("failed printing to ") {
            if why.contains("Broken pipe") {
                std::process::exit(128 + 13);
            }
            capture::say(&format!("lens: cannot write to {why}"));
            std::process::exit(1);
        }
        if report {
            return rusts_own(info);
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        capture::say(&format!(
            "lens: internal error ({what}{at}); please report it"
        ));
    }));
}
