//! ANSI stripping and carriage-return resolution, for the view only.
//!
//! The store keeps the child's bytes; the view shows what a terminal would have left
//! on the line: escape sequences removed, and for a line redrawn with `\r`, its last
//! drawing.

use std::borrow::Cow;

/// The text a reader should see for one raw line (without its newline).
pub fn visible(raw: &str) -> Cow<'_, str> {
    let line = raw.strip_suffix('\r').unwrap_or(raw);
    let has_esc = line.as_bytes().contains(&0x1b);
    let has_cr = line.as_bytes().contains(&b'\r');
    if !has_esc && !has_cr && line.len() == raw.len() {
        return Cow::Borrowed(raw);
    }
    let line = if has_cr { last_drawing(line) } else { line };
    if has_esc {
        Cow::Owned(strip(line))
    } else {
        Cow::Borrowed(line)
    }
}

/// True when the raw line was redrawn in place with carriage returns.
pub fn redrawn(raw: &str) -> bool {
    raw.strip_suffix('\r')
        .unwrap_or(raw)
        .as_bytes()
        .contains(&b'\r')
}

fn last_drawing(line: &str) -> &str {
    line.rsplit('\r')
        .find(|seg| !strip(seg).trim().is_empty())
        .unwrap_or("")
}

/// Removes CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ESC \`) and two-byte escapes.
pub fn strip(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut plain_from = 0;
    while i < b.len() {
        if b[i] != 0x1b {
            i += 1;
            continue;
        }
        out.push_str(&s[plain_from..i]);
        i += 1;
        match b.get(i) {
            Some(b'[') => {
                i += 1;
                while i < b.len() && !(0x40..=0x7e).contains(&b[i]) {
                    i += 1;
                }
                i += 1;
            }
            Some(b']') => {
                i += 1;
                while i < b.len() {
                    if b[i] == 0x07 {
                        i += 1;
                        break;
                    }
                    if b[i] == 0x1b && b.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            // Charset designations carry one more byte: `ESC ( B`.
            Some(b'(' | b')' | b'*' | b'+') => i += 2,
            Some(_) => i += 1,
            None => {}
        }
        i = i.min(b.len());
        // Never split a UTF-8 sequence: an escape's bytes are ASCII, so skip forward
        // to the next char boundary if a malformed escape ran into text.
        while i < b.len() && !s.is_char_boundary(i) {
            i += 1;
        }
        plain_from = i;
    }
    out.push_str(&s[plain_from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(visible("hello"), Cow::Borrowed("hello")));
    }

    #[test]
    fn strips_colour_and_osc() {
        assert_eq!(visible("\x1b[1m\x1b[31merror\x1b[0m: boom"), "error: boom");
        assert_eq!(visible("\x1b]8;;http://x\x07link\x1b]8;;\x07"), "link");
        assert_eq!(visible("a\x1b(Bb"), "ab");
    }

    #[test]
    fn resolves_redraws_to_the_last_drawing() {
        assert_eq!(visible("10%\r50%\r100% done"), "100% done");
        assert_eq!(visible("crlf line\r"), "crlf line");
        assert_eq!(visible("done\r\x1b[K\r"), "done");
        assert!(redrawn("a\rb"));
        assert!(!redrawn("a\r"));
    }

    #[test]
    fn truncated_escape_does_not_panic() {
        assert_eq!(strip("x\x1b["), "x");
        assert_eq!(strip("x\x1b"), "x");
        assert_eq!(strip("\x1b[é"), "");
    }
}
