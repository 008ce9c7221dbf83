//! Classification: which lines are failures, warnings, summaries or quoted source.
//!
//! `generic` knows the shapes most tools share (`error:` prefixes, `file:line: error`,
//! tracebacks, test summaries). Tool families with their own shapes get a file of
//! their own beside it.

mod generic;

use crate::doc::Doc;

pub use generic::{class_of, is_error, is_summary};

/// Sets every line's class.
pub fn run(doc: &mut Doc) {
    generic::run(doc);
}
