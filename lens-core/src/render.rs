//! Render: turns an annotated `Doc` into the bytes of each stream's view.
//!
//! Render decides nothing about what to keep. It prints shown lines as the view text,
//! and every run of dropped lines as exactly one marker.

use crate::digest::{Body, Detail};
use crate::doc::{Class, Doc, Fate, Reason, Stream};
use crate::marker::{tally_weighted, Marker, PREFIX};

/// The view of one stream; `None` when nothing in it changed, so the caller can emit
/// the child's bytes as they were. Digests are printed after their region's marker
/// at `detail`, or not at all when `detail` is `None` (level 0).
pub fn stream(doc: &Doc, stream: Stream, handle: &str, detail: Option<Detail>) -> Option<String> {
    let range = doc.range(stream);
    let base = range.start;
    let lines = &doc.lines[range];
    let total = doc.total(stream);
    let mut digests = doc.digests.iter().filter(|d| d.stream == stream).peekable();
    let untouched = total as usize == lines.len()
        && lines
            .iter()
            .all(|l| l.shown() && l.text.len() == l.raw.len());
    if untouched {
        return None;
    }
    // Raw lines before held line `i` that the doc does not hold (a sampled
    // stream's gap): announced with the run they fall in.
    let gap_before = |i: usize| -> u32 {
        let prev = if i == 0 { 0 } else { lines[i - 1].no };
        let next = lines.get(i).map_or(total + 1, |l| l.no);
        next.saturating_sub(prev + 1)
    };
    let mut out = String::with_capacity(1024);
    let mut i = 0;
    while i <= lines.len() {
        if i < lines.len() && lines[i].shown() && gap_before(i) == 0 {
            out.push_str(&lines[i].text);
            out.push('\n');
            i += 1;
            continue;
        }
        // A run: the gap before line `i`, then dropped lines and the gaps between
        // them, up to the next shown line (or the stream's end).
        let start = i;
        let first = if i == 0 { 1 } else { lines[i - 1].no + 1 };
        let mut weighted: Vec<(Reason, u32)> = Vec::new();
        let gap = gap_before(i);
        if gap > 0 {
            weighted.push((Reason::Bulk, gap));
        }
        while i < lines.len() && !lines[i].shown() {
            if let Fate::Drop(r) = lines[i].fate {
                weighted.push((r, 1));
            }
            i += 1;
            let gap = gap_before(i);
            if gap > 0 {
                weighted.push((Reason::Bulk, gap));
            }
        }
        let last = if i < lines.len() {
            lines[i].no - 1
        } else {
            total
        };
        if weighted.is_empty() {
            // The stream's end with nothing elided after its last line.
            break;
        }
        let mut digest = Vec::new();
        let mut unlisted = 0;
        while let Some(d) = digests.peek() {
            if d.start >= base + i {
                break;
            }
            if d.start >= base + start {
                match (detail, &d.body) {
                    (Some(detail), _) => {
                        let (lines, left_out) =
                            d.lines_within(doc, detail, d.room.unwrap_or(usize::MAX));
                        digest.extend(lines);
                        unlisted += left_out;
                    }
                    // A redraw's last drawing stands for its line at every level.
                    (None, Body::Redrawn(t)) => digest.push(t.clone()),
                    (None, _) => {}
                }
            }
            digests.next();
        }
        let m = Marker {
            stream,
            first,
            last,
            reasons: tally_weighted(weighted.into_iter()),
            handle: handle.to_string(),
            digest: digest.len(),
            unlisted,
        };
        out.push_str(&m.render());
        out.push('\n');
        for l in digest {
            out.push_str(&l);
            out.push('\n');
        }
        // The run ended at a shown line (or at the stream's end).
        match lines.get(i) {
            Some(l) => {
                out.push_str(&l.text);
                out.push('\n');
                i += 1;
            }
            None => break,
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
        doc.total(Stream::Stdout),
        doc.total(Stream::Stderr),
        count(Class::Error),
        count(Class::Warning),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use crate::digest::Digest;
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
            room: None,
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
