//! The stages, in the order `annotate` runs them. Each only annotates the `Doc`.

pub mod ansi;
pub mod blocks;
pub mod budget;
pub mod cause;
pub mod classify;
pub mod context;
pub mod dedupe;
pub mod excerpt;
pub mod fold;
pub mod frames;
pub mod level;
pub mod patterns;
pub mod progress;
pub mod rank;
pub mod redraw;
/// Not a stage: the one way a digest's list gives up detail to fit its room.
pub mod shorten;
