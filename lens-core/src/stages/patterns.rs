//! Configured patterns: `keep` forces a line into the view, `drop` removes it (and
//! the marker still says so).

use regex::Regex;

use crate::doc::{Doc, Fate, Reason};

/// Applies a command's configured keep and drop patterns.
pub fn run(doc: &mut Doc, keep: &[Regex], drop: &[Regex]) {
    if keep.is_empty() && drop.is_empty() {
        return;
    }
    for l in doc.lines.iter_mut() {
        if keep.iter().any(|r| r.is_match(&l.text)) {
            l.fate = Fate::Force;
        } else if drop.iter().any(|r| r.is_match(&l.text)) {
            l.drop_for(Reason::Pattern);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_beats_drop() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "Running a\nRunning b keep\nother\n", "", 0);
        let keep = [Regex::new("keep").unwrap()];
        let drop = [Regex::new("^Running").unwrap()];
        run(&mut doc, &keep, &drop);
        assert_eq!(doc.lines[0].fate, Fate::Drop(Reason::Pattern));
        assert_eq!(doc.lines[1].fate, Fate::Force);
        assert_eq!(doc.lines[2].fate, Fate::Keep);
    }
}
