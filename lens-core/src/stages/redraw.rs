//! Redraws: a line the child redrew in place with carriage returns is shown as its
//! last drawing, which is not the raw line; so it is announced like any other
//! elision. Its marker names it (`redrawn`) and the digest line after the marker
//! is the last drawing. A line redrawn over an error or a warning never gets here:
//! [`over_trouble`], run before any other stage, shows all of its drawings.

use std::borrow::Cow;

use crate::digest::{Body, Digest};
use crate::doc::{Class, Doc, Fate, Reason};
use crate::stages::{ansi, classify};

/// A line redrawn over an error or a warning shows every drawing: what a
/// terminal would have left hides the one thing the reader needs. The doc splits
/// lines without the classifier and keeps each redrawn line's last drawing; this
/// puts the drawings back on the lines where an earlier one is trouble. It runs
/// first, from `progress::run`, before anything reads a line's text or class.
pub fn over_trouble(doc: &mut Doc) {
    for l in &mut doc.lines {
        if !l.redrawn || !hides_trouble(l.raw) {
            continue;
        }
        let shown: Cow<str> = Cow::Owned(ansi::strip(l.raw.strip_suffix('\r').unwrap_or(l.raw)));
        l.colon = shown.contains(':');
        l.text = shown;
        l.class = Class::Plain;
        l.redrawn = false;
    }
}

/// True when a drawing of a redrawn line other than its last carries an error or
/// a warning.
fn hides_trouble(raw: &str) -> bool {
    let line = raw.strip_suffix('\r').unwrap_or(raw);
    let last = ansi::visible(line);
    line.split('\r').any(|seg| {
        let seg = ansi::strip(seg);
        seg != *last && matches!(classify::class_of(&seg), Class::Error | Class::Warning)
    })
}

/// Turns every shown redrawn line into a marker and its last drawing. Runs last,
/// once the level has decided what is shown.
pub fn run(doc: &mut Doc) {
    let mut added = false;
    for i in 0..doc.lines.len() {
        let l = &mut doc.lines[i];
        if !l.redrawn || !l.shown() {
            continue;
        }
        l.fate = Fate::Drop(Reason::Redrawn);
        let stream = l.stream;
        let text = l.text.to_string();
        doc.digests.push(Digest {
            stream,
            start: i,
            end: i + 1,
            failure: false,
            body: Body::Redrawn(text),
            needs: Vec::new(),
            room: None,
        });
        added = true;
    }
    if added {
        doc.digests.sort_by_key(|d| d.start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Detail;
    use crate::doc::Stream;
    use crate::render;

    #[test]
    fn a_shown_redraw_is_a_marker_and_its_last_drawing() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "start\n10%\r50%\r100% done\nend\n", "", 0);
        run(&mut doc);
        let v = render::stream(&doc, Stream::Stdout, "0000abcd", Some(Detail::Full)).unwrap();
        assert_eq!(
            v,
            "start\n[lens: elided stdout 2-2 (1 line: redrawn) handle=0000abcd digest=1]\n100% done\nend\n"
        );
        // Level 0 prints no digests, but a redraw's last drawing is its line.
        let v0 = render::stream(&doc, Stream::Stdout, "0000abcd", None).unwrap();
        assert!(v0.contains("digest=1]\n100% done\n"), "{v0}");
    }

    #[test]
    fn a_redraw_over_an_error_shows_every_drawing() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "error: disk full on /dev/sda1\rOK\n", "", 1);
        over_trouble(&mut doc);
        assert!(!doc.lines[0].redrawn);
        assert_eq!(doc.lines[0].text, "error: disk full on /dev/sda1\rOK");
        run(&mut doc);
        assert!(doc.lines[0].shown());
        // A progress redraw hides nothing a reader needs.
        let mut doc = Doc::new(&argv, "\u{1b}[1m10%\u{1b}[0m\r100%\n", "", 0);
        over_trouble(&mut doc);
        assert!(doc.lines[0].redrawn);
        assert_eq!(doc.lines[0].text, "100%");
    }
}
