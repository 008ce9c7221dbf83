//! Render: turns an annotated `Doc` into the bytes of each stream's view.
//!
//! Render decides nothing about what to keep. It prints shown lines as the view text,
//! and every run of dropped lines as exactly one marker.

use crate::doc::{Class, Doc, Fate, Stream};
use crate::marker::{tally, Marker, PREFIX};

/// The view of one stream; `None` when nothing in it changed, so the caller can emit
/// the child's bytes as they were.
pub fn stream(doc: &Doc, stream: Stream, handle: &str) -> Option<String> {
    let range = doc.range(stream);
    let lines = &doc.lines[range];
    let untouched = lines
        .iter()
        .all(|l| l.shown() && l.text.len() == l.raw.len());
    if untouched {
        return None;
    }
    let mut out = String::with_capacity(1024);
    let mut i = 0;
    while i < lines.len() {
        if lines[i].shown() {
            out.push_str(&lines[i].text);
            out.push('\n');
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && !lines[i].shown() {
            i += 1;
        }
        let reasons = lines[start..i].iter().filter_map(|l| match l.fate {
            Fate::Drop(r) => Some(r),
            _ => None,
        });
        let m = Marker {
            stream,
            first: lines[start].no,
            last: lines[i - 1].no,
            reasons: tally(reasons),
            handle: handle.to_string(),
        };
        out.push_str(&m.render());
        out.push('\n');
    }
    Some(out)
}

/// The count line level 0 leads with.
///
/// ```text
/// [lens: summary exit=3 stdout=5000 stderr=1 errors=1 warnings=0 handle=1a2b3c4d]
/// ```
pub fn summary(doc: &Doc, handle: &str) -> String {
    let count = |c: Class| doc.lines.iter().filter(|l| l.class == c).count();
    format!(
        "{PREFIX}summary exit={} stdout={} stderr={} errors={} warnings={} handle={handle}]",
        doc.exit,
        doc.range(Stream::Stdout).len(),
        doc.range(Stream::Stderr).len(),
        count(Class::Error),
        count(Class::Warning),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Reason;

    #[test]
    fn one_marker_per_run() {
        let argv = vec![];
        let mut doc = Doc::new(&argv, "a\nb\nc\nd\ne\n", "", 0);
        doc.lines[1].fate = Fate::Drop(Reason::Progress);
        doc.lines[2].fate = Fate::Drop(Reason::Repeat);
        doc.lines[4].fate = Fate::Drop(Reason::Budget);
        let v = stream(&doc, Stream::Stdout, "0000abcd").unwrap();
        assert_eq!(
            v,
            "a\n[lens: elided stdout 2-3 (2 lines: progress 1, repeat 1) handle=0000abcd]\nd\n\
             [lens: elided stdout 5-5 (1 line: budget 1) handle=0000abcd]\n"
        );
    }

    #[test]
    fn untouched_stream_is_none() {
        let argv = vec![];
        let doc = Doc::new(&argv, "a\n", "\x1b[31mred\x1b[0m\n", 0);
        assert!(stream(&doc, Stream::Stdout, "00000000").is_none());
        assert_eq!(
            stream(&doc, Stream::Stderr, "00000000").as_deref(),
            Some("red\n")
        );
    }

    #[test]
    fn summary_counts() {
        let argv = vec![];
        let doc = Doc::new(&argv, "a\nb\n", "c\n", 3);
        assert_eq!(
            summary(&doc, "0000abcd"),
            "[lens: summary exit=3 stdout=2 stderr=1 errors=0 warnings=0 handle=0000abcd]"
        );
    }
}
