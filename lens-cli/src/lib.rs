//! The `lens` binary's logic. This file only dispatches: each subcommand has its
//! module (`run` for `lens <cmd>`, `show`, `hook`, `stats`, `init`), and the
//! process control they share is in `capture` and `platform`.
//!
//! `main.rs` is a line over [`run`]. Everything that depends on the operating system
//! is in `platform`; the filtering itself is `lens_core`.

pub mod agents;
mod args;
mod capture;
pub mod captured;
pub mod cmdline;
mod config;
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

pub use stats::{command_key, tokens as estimated_tokens};

use std::ffi::OsString;
use std::time::{SystemTime, UNIX_EPOCH};

use args::Invocation;

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
        Ok(Invocation::Stats { json, since_ms }) => stats::cmd(json, since_ms),
        Ok(Invocation::Init(a)) => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let place = agents::Place {
                home: paths::home(),
                project: init::project_root(&cwd),
            };
            init::run(&a, &place, &paths::log_dir())
        }
        Ok(Invocation::Hook(agent)) => hook::cmd(agent),
        Ok(Invocation::As(a)) => captured::as_cmd(a),
        Ok(Invocation::Show(s)) => show::cmd(s),
        Ok(Invocation::Run(r)) => run::cmd(r),
    }
}

pub(crate) fn now_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
