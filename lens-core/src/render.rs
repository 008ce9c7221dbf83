//! Render: turns an annotated `Doc` into the bytes of each stream's view.
//!
//! Render decides nothing about what to keep. It prints shown lines as the view text,
//! and every run of dropped lines as exactly one marker.

use crate::digest::Detail;
use crate::doc::{Class, Doc, Fate, Stream};
use crate::marker::{tally, Marker, PREFIX};

/// The view of one stream; `None` when nothing in it changed, so the caller can emit
/// the child's bytes as they were. Digests are printed after their region's marker
/// at `detail`, or not at all when `detail` is `None` (level 0).
pub fn stream(doc: &Doc, stream: Stream, handle: &str, detail: Option<Detail>) -> Option<String> {
    let range = doc.range(stream);
    let base = range.start;
    let lines = &doc.lines[range];
    let mut digests = doc.digests.iter().filter(|d| d.stream == stream).peekable();
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
        let mut digest = Vec::new();
        while let Some(d) = digests.peek() {
            if d.start >= base + i {
                break;
            }
            if d.start >= base + start {
                if let Some(detail) = detail {
                    digest.extend(d.lines(doc, detail));
                }
            }
            digests.next();
        }
        let m = Marker {
            stream,
            first: lines[start].no,
            last: lines[i - 1].no,
            reasons: tally(reasons),
            handle: handle.to_string(),
            digest: digest.len(),
        };
        out.push_str(&m.render());
        out.push('\n');
        for l in digest {
            out.push_str(&l);
            out.push('\n');
        }
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
        let v = stream(&doc, Stream::Stdout, "0000abcd", Some(Detail::Full)).unwrap();
        assert_eq!(
            v,
            "a\n[lens: elided stdout 2-3 (2 lines: progress 1, repeat 1) handle=0000abcd]\nd\n\
             [lens: elided stdout 5-5 (1 line: budget) handle=0000abcd]\n"
        );
    }

    #[test]
    fn untouched_stream_is_none() {
        let argv = vec![];
        let doc = Doc::new(&argv, "a\n", "\x1b[31mred\x1b[0m\n", 0);
        assert!(stream(&doc, Stream::Stdout, "00000000", None).is_none());
        assert_eq!(
            stream(&doc, Stream::Stderr, "00000000", None).as_deref(),
            Some("red\n")
        );
    }

    #[test]
    fn digests_follow_their_marker() {
        use crate::digest::{Body, Digest};
        let argv = vec![];
        let mut doc = Doc::new(&argv, "keep\nx\ny\n", "", 0);
        doc.lines[1].fate = Fate::Drop(Reason::Grouped);
        doc.lines[2].fate = Fate::Drop(Reason::Grouped);
        doc.digests.push(Digest {
            stream: Stream::Stdout,
            start: 1,
            end: 3,
            failure: false,
            body: Body::Lines(vec!["x and y".into()]),
            needs: Vec::new(),
        });
        let v = stream(&doc, Stream::Stdout, "0000abcd", Some(Detail::Full)).unwrap();
        assert_eq!(v, "keep\n[lens: elided stdout 2-3 (2 lines: grouped) handle=0000abcd digest=1]\nx and y\n");
        let v0 = stream(&doc, Stream::Stdout, "0000abcd", None).unwrap();
        assert_eq!(
            v0,
            "keep\n[lens: elided stdout 2-3 (2 lines: grouped) handle=0000abcd]\n"
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
