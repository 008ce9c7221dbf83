//! `lens hook <agent>`: an agent's after-tool event on stdin, the answer on
//! stdout. The command has run already, as the agent's own permission rules
//! allowed it; the answer only replaces what the model reads with the view.
//!
//! Whatever goes wrong (input that does not parse, an event Lens does not
//! filter, a store that fails, a filter that panics, Lens's own time limit)
//! the hook prints no answer (Gemini CLI: `{}`) and exits 0, and the agent
//! keeps its own result. Every event is logged for `lens stats` with whether a
//! view was answered.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use lens_core::Stream;

use crate::agents::{self, Agent};
use crate::capture::{exit_after_writes, print_to};
use crate::captured::{self, Captured};
use crate::{now_ms, paths, runlog};

/// Lens's own time limit: past it, the agent's own result stands.
const DEADLINE: Duration = Duration::from_secs(5);

pub(crate) fn cmd(agent: Agent) -> i32 {
    // The answer is printed whole under this lock, and the deadline takes it
    // before it ends the process: a half-printed answer is never left behind.
    let printing = Arc::new(Mutex::new(()));
    let guard = Arc::clone(&printing);
    std::thread::spawn(move || {
        std::thread::sleep(deadline());
        let _held = guard.lock();
        print_to(Stream::Stdout, agents::no_answer(agent).as_bytes());
        std::process::exit(exit_after_writes(0));
    });
    let started = SystemTime::now();
    // Read to its end, its big strings (the output) spooled as they arrive.
    let event = crate::event::read(io::stdin().lock());
    let captured = event.as_ref().and_then(|e| agents::read_event(agent, e));
    let would = match (&event, &captured) {
        (Some(e), Some(c)) => Some(agents::model_would_read(agent, e, c.output.len())),
        _ => None,
    };
    let mut diagnostics = Vec::new();
    // Where the agent might refuse what the answer asks of it, the model
    // would lose the output: its own result stands, and nothing is stored.
    let refused = event
        .as_ref()
        .filter(|_| captured.is_some())
        .and_then(|e| agents::cannot_answer(agent, &e.value));
    let outcome = captured.as_ref().map(|c| {
        let result = match refused {
            Some(why) => Err(captured::Raw::AgentRefuses(why)),
            None => captured::filter(c, &mut diagnostics),
        };
        (c, result)
    });
    let answer = match (&event, &outcome) {
        (Some(e), Some((_, Ok(view)))) => agents::answer(agent, e, view),
        _ => None,
    };
    {
        let _held = printing.lock();
        let text = answer
            .as_ref()
            .map(|a| format!("{a}\n"))
            .unwrap_or_else(|| agents::no_answer(agent).to_string());
        print_to(Stream::Stdout, text.as_bytes());
    }
    if let Some((c, result)) = &outcome {
        let would = would.unwrap_or(c.output.len());
        log(agent, c, result, answer.is_some(), would, started);
    }
    // A write that failed (a full disk) is said and fails the hook: the agent
    // then keeps its own result.
    exit_after_writes(0)
}

/// `LENS_HOOK_TIMEOUT_MS` overrides the deadline (tests make it hit).
fn deadline() -> Duration {
    std::env::var("LENS_HOOK_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(DEADLINE, Duration::from_millis)
}

fn log(
    agent: Agent,
    c: &Captured,
    result: &Result<captured::Filtered, captured::Raw>,
    answered: bool,
    would_read: u64,
    started: SystemTime,
) {
    let (raw_bytes, shown, handle, argv, level, why) = match result {
        Ok(v) => (
            v.raw_bytes,
            v.text.len() as u64,
            Some(v.handle.to_string()),
            v.argv.clone(),
            v.level.digit(),
            None,
        ),
        Err(why) => (
            c.output.len(),
            c.output.len(),
            None,
            Vec::new(),
            3,
            Some(why.name().to_string()),
        ),
    };
    let mut r = runlog::Record::hook(
        now_ms(started),
        agent.name(),
        c.line.clone(),
        answered && handle.is_some(),
    );
    r.argv = argv;
    r.level = level;
    r.exit = c.exit;
    r.bytes_in = Some(raw_bytes);
    // What the model read: the answer, else what the agent gave it.
    r.bytes_out = Some(if answered { shown } else { would_read });
    r.handle = handle;
    // A `lens show` the agent ran is a fetch: what the model read of it is
    // the page answered (or the agent's own cut), never the whole run.
    if let Some(words) = crate::cmdline::lens_show_only(&c.line) {
        r.fetch = true;
        r.handle = r.handle.or_else(|| {
            words
                .iter()
                .find(|w| lens_core::Handle::parse(w).is_some())
                .cloned()
        });
    }
    if let Some(h) = r.hook.as_mut() {
        h.raw = why;
        h.would_read = Some(would_read);
    }
    r.project = c.cwd.as_ref().map(|d| {
        crate::init::project_root(std::path::Path::new(d))
            .display()
            .to_string()
    });
    runlog::append(&paths::log_dir(), &r);
}
