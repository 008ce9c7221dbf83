//! What a digest is, as data: the region it stands for and its typed body. Kept
//! apart from how a digest is formatted ([`super`]) so the document model can
//! hold digests without reaching up into the formatting and the stages it uses.

use crate::stream::Stream;

/// A digest standing for lines `start..end` of one stream.
#[derive(Clone, Debug)]
pub struct Digest {
    /// The stream of the region.
    pub stream: Stream,
    /// First line index (into `Doc::lines`) of the region.
    pub start: usize,
    /// One past the last.
    pub end: usize,
    /// True when the region reports a failure (shown at level 1).
    pub failure: bool,
    /// What it says.
    pub body: Body,
    /// The causes (by their first report's line) whose locations this region's
    /// lines stand for. A findings region can hold later reports of a cause listed
    /// in an earlier region's digest; it may go only if that digest is shown.
    pub needs: Vec<usize>,
    /// Bytes the digest may print, when the budget limits it (see
    /// `stages::budget`); `None` for all of it.
    pub room: Option<usize>,
}

/// The kinds of digest.
#[derive(Clone, Debug)]
pub enum Body {
    /// Findings grouped by cause.
    Findings(Vec<FindingGroup>),
    /// Items grouped under a key: a directory's files, a file's matches. When every
    /// item's text shares a prefix and a suffix, they are printed once, first.
    Listing {
        /// The shared prefix and suffix of every item, if any.
        template: Option<(String, String)>,
        /// One line each.
        entries: Vec<Entry>,
    },
    /// A list whose every name a reader must still reach when it is cut (a
    /// grep's files, a find's directories, the packages apt can upgrade): a
    /// listing under lines it always shows first. Cut, it keeps every key with
    /// as many of its items as fit, like a listing; when the keys alone do not
    /// fit, [`crate::stages::shorten`] shortens, folds and groups them with
    /// counts, and never drops one.
    List(List),
    /// Lines already in their final form (one commit per line, one test count).
    Lines(Vec<String>),
    /// The last drawing of a line the child redrew in place with carriage
    /// returns: what a terminal would have left on the line. Shown at every level.
    Redrawn(String),
    /// A heading per name (a file of a diff) and the lines under it. Cut to a
    /// budget, every heading stays before any line under one does.
    Sections(Vec<(String, Vec<String>)>),
    /// A commit log: cut by commit, every commit named (see `history`).
    History(crate::history::History),
}

/// The parts of [`Body::List`].
#[derive(Clone, Debug)]
pub struct List {
    /// Lines shown before the entries (a count of what was listed).
    pub head: Vec<String>,
    /// The shared prefix and suffix of every item, if any.
    pub template: Option<(String, String)>,
    /// One line each; the key, less a closing `:`, is the path or name a
    /// group is made of.
    pub entries: Vec<Entry>,
    /// What a group's count calls the entries and their items.
    pub nouns: Nouns,
    /// True when each entry's items are the list (the files of a `git status`
    /// section, each a path) rather than its entries: cut, each entry keeps
    /// its key and a share of the room for its items, which [`crate::stages::shorten::fit`]
    /// folds and groups; an item is never left out for a `… +N`.
    pub within: bool,
}

/// One group of a listing: `key` then its items on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The shared part: a directory with its slash, a file with its colon.
    pub key: String,
    /// Each item's own part.
    pub items: Vec<String>,
}

/// Findings that share one cause: same severity, rule and message shape.
#[derive(Clone, Debug)]
pub struct FindingGroup {
    /// True when the cause is an error (shown first in a level-1 digest).
    pub error: bool,
    /// The rule or code as printed (`E0308`, `F401`, `no-unused-vars`), or the
    /// severity word when the tool prints none.
    pub rule: String,
    /// Line indices of the first report, shown verbatim (its excerpt included only
    /// while the view holds a handful of causes).
    pub example: Vec<usize>,
    /// Every report's location as printed, with the quoted values that differ
    /// between reports (empty when the message is the same every time).
    pub at: Vec<(String, Vec<String>)>,
    /// Every report's message as printed, after its rule where the tool prints
    /// the rule first on the message's line (ruff's `F401 …`); the group's `rule`
    /// names it for the rest.
    pub said: Vec<String>,
    /// True when each report spans more than its message line (it quotes the
    /// source, or adds a note) and every one of them reads as the first but for
    /// its location and its numbers: the quoted code included, one report
    /// stands for all of them.
    pub alike: bool,
}

/// What a group's count calls its items and the names under them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nouns {
    /// An item, singular and plural (`file`, `files`).
    pub item: (&'static str, &'static str),
    /// The names under an item, when they are not the items themselves
    /// (`match`, `matches`).
    pub name: Option<(&'static str, &'static str)>,
    /// What splits a key into the parts a group is made of, any of these
    /// characters: `/` for paths, `-` for package names, `-_` for the names
    /// in one directory.
    pub sep: &'static str,
}
