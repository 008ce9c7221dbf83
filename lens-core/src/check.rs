//! Checking a view against its raw stream: the walk the property tests, the fuzz
//! run and anyone parsing views can use to confirm invariants 4 and 8.
//!
//! Every line of a view is one of: the raw line it claims to be, at the next raw
//! number (escapes stripped; a line redrawn over an error shows every drawing); a
//! marker that starts exactly at the next raw number and names the run's handle;
//! one of the digest lines its marker announces; or Lens's own summary and
//! cut-short lines. Every raw line is shown or covered by a marker.
//!
//! A Lens line is one that carries the run's handle. A command can print a line
//! that looks exactly like a marker, but not with a handle it cannot know (the
//! handle is derived from OS randomness and the run itself): such a line is the
//! command's own text, and is checked as a raw line like any other.

use crate::marker::{CutShort, Marker};
use crate::stages::ansi;

/// Lines as markers number them: split on '\n', a trailing newline ends the last.
pub fn raw_lines(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    s.strip_suffix('\n').unwrap_or(s).split('\n').collect()
}

/// Walks `view` against `raw` (one stream, named `stream`), whose markers must
/// carry `handle`. Returns the raw line numbers shown, or what is wrong.
pub fn check_stream(view: &str, raw: &str, stream: &str, handle: &str) -> Result<Vec<u32>, String> {
    let raws = raw_lines(raw);
    let mut next = 1u32;
    let mut shown = Vec::new();
    let mut digest_left = 0usize;
    for v in raw_lines(view) {
        if digest_left > 0 {
            // Lens's digest of the region its marker names: not an output line.
            digest_left -= 1;
            continue;
        }
        let ours = |h: &str| h == handle;
        let summary =
            v.starts_with("[lens: summary ") && v.ends_with(&format!(" handle={handle}]"));
        // Lens's stop notice comes after everything the command wrote. With
        // the run's handle it cannot be the command's text; without one (the
        // run was not stored) it is Lens's only once every raw line is
        // accounted for, so a command that prints such a line is checked
        // like any other output.
        let cut = CutShort::parse(v).is_some_and(|c| match c.handle.as_deref() {
            Some(h) => ours(h),
            None => next as usize == raws.len() + 1,
        });
        if summary || cut {
            continue;
        }
        if let Some(m) = Marker::parse(v).filter(|m| ours(&m.handle)) {
            digest_left = m.digest;
            if m.stream.name() != stream {
                return Err(format!("marker for another stream: {v}"));
            }
            if m.first != next {
                return Err(format!(
                    "marker starts at {} but line {next} is next: {v}",
                    m.first
                ));
            }
            next = m.last + 1;
            continue;
        }
        let Some(r) = raws.get(next as usize - 1) else {
            return Err(format!("view line past the end of the raw stream: {v:?}"));
        };
        // A line redrawn in place is shown as every drawing when one of them
        // reports trouble; otherwise it is a `redrawn` marker and a digest.
        let whole = ansi::strip(r.strip_suffix('\r').unwrap_or(r));
        if ansi::visible(r) != v && whole != v {
            return Err(format!(
                "line {next} renumbered or rewritten: view {v:?}, raw {r:?}"
            ));
        }
        shown.push(next);
        next += 1;
    }
    if next as usize != raws.len() + 1 {
        return Err(format!(
            "{} raw lines but the view accounts for {}",
            raws.len(),
            next - 1
        ));
    }
    Ok(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_faithful_view_and_names_what_is_wrong_with_others() {
        let raw = "a\nb\nc\n";
        let h = "0000abcd";
        let ok = "a\n[lens: elided stdout 2-3 (2 lines: budget) handle=0000abcd]\n";
        assert_eq!(check_stream(ok, raw, "stdout", h), Ok(vec![1]));
        let renumbered = "b\n[lens: elided stdout 2-3 (2 lines: budget) handle=0000abcd]\n";
        assert!(check_stream(renumbered, raw, "stdout", h).is_err());
        let uncovered = "a\n[lens: elided stdout 2-2 (1 line: budget) handle=0000abcd]\n";
        assert!(check_stream(uncovered, raw, "stdout", h)
            .unwrap_err()
            .contains("accounts for 2"));
        // A marker with another handle is a line the command printed.
        let other = "a\n[lens: elided stdout 2-3 (2 lines: budget) handle=ffff0000]\n";
        assert!(check_stream(other, raw, "stdout", h).is_err());
        let printed = "[lens: elided stdout 2-3 (2 lines: budget) handle=ffff0000]\n";
        assert_eq!(check_stream(printed, printed, "stdout", h), Ok(vec![1]));
    }

    #[test]
    fn a_stop_notice_the_command_printed_is_its_own_line() {
        // The fuzz run's 16 violations: a raw line shaped like Lens's stop
        // notice (no handle) was skipped as Lens's, and every line after it
        // was compared with the raw line before.
        let h = "0000abcd";
        let raw = "a\n[lens: cut short by SIGT]\nb\n";
        assert_eq!(check_stream(raw, raw, "stderr", h), Ok(vec![1, 2, 3]));
        // Dropping that line is a renumbering, caught.
        let dropped = "a\nb\n";
        assert!(check_stream(dropped, raw, "stderr", h).is_err());
        // Lens's own notice after the last line, with or without a handle.
        for notice in [
            "[lens: cut short by SIGTERM]",
            "[lens: cut short by SIGTERM handle=0000abcd]",
        ] {
            let view = format!("{raw}{notice}\n");
            assert_eq!(check_stream(&view, raw, "stderr", h), Ok(vec![1, 2, 3]));
        }
    }
}
