//! Lens's measurement harness.
//!
//! `compare` measures what a filter's view keeps, with no model in the loop: for
//! every case in `cases/` it runs the command raw, through Lens at levels 2, 1 and 0,
//! and through rtk with rtk's own documented invocation, then counts bytes, checks
//! the needle (the line the command was run for) and counts the distinct names
//! (files, tests, commits) the view still holds. `case` loads and validates the
//! cases, `shim` records and replays every command the arms run so both filters read
//! identical bytes on any machine, `measure` does the counting, `compare` runs the
//! arms and `report` renders the markdown table and the JSON record.
//!
//! `harness` measures whether an agent still finishes: `tasks` loads the retention
//! tasks, `retention` plans and runs the cells and aggregates them (with `stats`),
//! `driver` runs an agent (three real CLIs and a scripted simulation), and
//! `transcript` reads what an agent CLI recorded of a session (its tokens, tool
//! calls and shell results) and `replay` puts its shell results through the
//! filter, for `harness transcripts`; `session` is the paired-session benchmark
//! (`harness session`). `isolation`
//! is where a cell runs: a fresh directory, or a microVM booted from the image
//! `make image` builds (`image` checks it against its manifest, `vm` boots it,
//! `jobdisk` carries work in and out); `broker` is the credential forwarder a
//! guest reaches its API through. `shard` writes a sweep's plan to a file, splits
//! it into shards another engine runs and merges their results; `save` decides
//! where results go (`out/`, or the committed `results/` on purpose).
//!
//! `model_server` plays the model for the real agent CLIs on 127.0.0.1 (a
//! scripted model, one file per API dialect, every request recorded), and
//! `agent_cli` runs those CLIs against it with an empty environment and a temp
//! HOME, for the real-client tests and the scripted-model drivers.
//!
//! The JSON is the record; the table is always rendered from it.

pub mod agent_cli;
pub mod broker;
pub mod case;
pub mod compare;
pub mod driver;
pub mod env;
pub mod isolation;
pub mod measure;
pub mod model_server;
pub mod platform;
pub mod replay;
pub mod report;
pub mod retention;
pub mod save;
pub mod session;
pub mod shard;
pub mod shim;
pub mod stats;
pub mod sweep;
pub mod tasks;
pub mod transcript;
