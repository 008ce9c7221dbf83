//! What the integration tests share: the handle they store under, and the walk
//! that checks a view against its raw stream line by line (`lens_core::check`).
#![allow(dead_code)]

#[allow(unused_imports)]
pub use lens_core::check::raw_lines;

/// The handle every test view is stored under.
pub const HANDLE: &str = "1a2b3c4d";

/// Walks a view against its raw stream; see `lens_core::check::check_stream`.
pub fn check_stream(view: &str, raw: &str, stream: &str) -> Result<Vec<u32>, String> {
    lens_core::check::check_stream(view, raw, stream, HANDLE)
}
