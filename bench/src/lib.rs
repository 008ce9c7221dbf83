//! Lens's benchmarks.
//!
//! Inputs are recorded real outputs (the compare recordings in `cases/`), scaled by
//! concatenation. `growth` times a function at 1×, 4× and 16× its input (the minimum
//! over repeats, so a machine is compared with itself) and the gate fails when 16×
//! takes more than 20× as long as 1×: superlinear growth is a hang waiting for a
//! large enough command. `stages` runs each pipeline stage on a document prepared by
//! the stages before it. `benches/pipeline.rs` measures the same with criterion;
//! `lens-bench` gates, reports latency against a baseline, and measures whole-process
//! overhead against git and rtk.

pub mod big;
pub mod fuzz;
pub mod growth;
pub mod inputs;
pub mod stages;
