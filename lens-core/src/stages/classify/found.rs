//! What a family finder hands back. Its own file, under the finders and the
//! dispatch alike, so a finder names it without reaching back into the dispatch.

use crate::digest::Digest;
use crate::doc::Finding;

/// What the family finders report: findings and proposed digests, merged into the
/// `Doc` once every finder has run.
#[derive(Default)]
pub struct Found {
    /// Findings, in the order each finder met them.
    pub findings: Vec<Finding>,
    /// Proposed digests.
    pub digests: Vec<Digest>,
}
