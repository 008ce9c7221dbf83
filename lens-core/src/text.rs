//! Short texts compared with each other: runs of numbered names folded into the
//! shell's brace ranges, the prefix and suffix a set of texts shares, a message
//! split into its shape and its quoted values. Pure string work that digests and
//! the stages that shorten lists both need, kept below them.

/// Collapses every run of at least three names that differ only in a number
/// counting up by one (`frame_001.snap` … `frame_150.snap`) into one range in the
/// shell's brace form, `frame_{001..150}.snap`, which `bash` expands back to the
/// same names (zero padding included). The number is the name's last run of
/// digits; names around a run are kept as they are, in order.
pub fn number_runs(items: &[String]) -> Vec<String> {
    let names: Vec<&str> = items.iter().map(String::as_str).collect();
    number_run_spans(&names)
        .into_iter()
        .map(|r| {
            if r.len() == 1 {
                items[r.start].clone()
            } else {
                brace_range(&items[r.start], &items[r.end - 1])
            }
        })
        .collect()
}

/// The names in order as spans: each run [`number_runs`] would collapse (three or
/// more) as one span, every other name as a span of its own.
pub fn number_run_spans(names: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::with_capacity(names.len());
    let mut i = 0;
    while i < names.len() {
        let mut j = i + 1;
        while j < names.len() && follows(names[j - 1], names[j]) {
            j += 1;
        }
        if j - i >= 3 {
            out.push(i..j);
        } else {
            out.extend((i..j).map(|k| k..k + 1));
        }
        i = j;
    }
    out
}

/// The brace range from `first` to `last`, two names of one run.
pub fn brace_range(first: &str, last: &str) -> String {
    let (pre, a, suf) = numbered(first).expect("a numbered name");
    let (_, b, _) = numbered(last).expect("a numbered name");
    format!("{pre}{{{a}..{b}}}{suf}")
}

/// A name as prefix, the text of its last number (at most nine digits), suffix.
fn numbered(s: &str) -> Option<(&str, &str, &str)> {
    let end = s.rfind(|c: char| c.is_ascii_digit())? + 1;
    // After the last character that is not a digit, however many bytes it takes.
    let start = s[..end]
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(0, |(i, c)| i + c.len_utf8());
    (end - start <= 9).then(|| (&s[..start], &s[start..end], &s[end..]))
}

/// True when `b` is the name after `a` in a run: same prefix, suffix and width
/// (when padded), number one more.
fn follows(a: &str, b: &str) -> bool {
    let (Some((pa, na, sa)), Some((pb, nb, sb))) = (numbered(a), numbered(b)) else {
        return false;
    };
    let padded = na.starts_with('0') && na.len() > 1;
    let (x, y): (u64, u64) = match (na.parse(), nb.parse()) {
        (Ok(x), Ok(y)) => (x, y),
        _ => return false,
    };
    pa == pb
        && sa == sb
        && y == x + 1
        && (if padded {
            nb.len() == na.len()
        } else {
            !(nb.starts_with('0') && nb.len() > 1)
        })
        && !pa.contains(['{', '}'])
        && !sa.contains(['{', '}'])
}

/// Splits texts into a common prefix, each text's own middle, and a common suffix,
/// on character boundaries. With fewer than two texts nothing is common.
pub fn factor(texts: &[&str]) -> (String, Vec<String>, String) {
    if texts.len() < 2 {
        return (
            String::new(),
            texts.iter().map(|t| t.to_string()).collect(),
            String::new(),
        );
    }
    let first = texts[0];
    let mut pre = first.len();
    let mut suf = first.len();
    for t in &texts[1..] {
        pre = pre.min(common_prefix(first, t));
        suf = suf.min(common_suffix(first, t));
    }
    // Prefix and suffix must not overlap in the shortest text.
    let shortest = texts.iter().map(|t| t.len()).min().unwrap_or(0);
    if pre + suf > shortest {
        suf = shortest - pre;
    }
    while !first.is_char_boundary(first.len() - suf) {
        suf -= 1;
    }
    let prefix = first[..pre].to_string();
    let suffix = first[first.len() - suf..].to_string();
    let middles = texts
        .iter()
        .map(|t| t[pre..t.len() - suf].to_string())
        .collect();
    (prefix, middles, suffix)
}

/// The longest prefix every text shares, on a character boundary. Only the prefix:
/// a digest's location list needs no middles or suffix, and this allocates nothing.
pub fn shared_prefix<'a>(texts: &[&'a str]) -> &'a str {
    let Some((first, rest)) = texts.split_first() else {
        return "";
    };
    let mut pre = first.len();
    for t in rest {
        pre = common_prefix(&first[..pre], t);
        if pre == 0 {
            break;
        }
    }
    &first[..pre]
}

fn common_prefix(a: &str, b: &str) -> usize {
    // Bytes, then back to a character boundary: UTF-8 is prefix-free, so texts that
    // agree up to a boundary agree character by character.
    let mut n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(n) {
        n -= 1;
    }
    n
}

fn common_suffix(a: &str, b: &str) -> usize {
    let mut n = 0;
    for (x, y) in a.chars().rev().zip(b.chars().rev()) {
        if x != y {
            break;
        }
        n += x.len_utf8();
    }
    n
}

/// Splits a message into its shape and the quoted values in it: `` `os` imported
/// but unused `` becomes `` `…` imported but unused `` and `` [`os`] ``. An
/// unquoted word with a slash in it (a path, Go's `example.com/ledger/x.Invoice`)
/// is a value as well.
pub fn slots(message: &str) -> (String, Vec<String>) {
    let mut shape = String::with_capacity(message.len());
    let mut values = Vec::new();
    let mut prev: Option<char> = None;
    let mut i = 0;
    while let Some(c) = message[i..].chars().next() {
        let close = match c {
            '`' => Some('`'),
            // An apostrophe inside a word (`doesn't`) opens nothing.
            '\'' if !prev.is_some_and(char::is_alphanumeric) => Some('\''),
            '"' => Some('"'),
            '‘' => Some('’'),
            '“' => Some('”'),
            _ => None,
        };
        let after = i + c.len_utf8();
        // An unquoted word holding a slash is a path or a qualified name
        // (`example.com/ledger/invoices.Invoice`): a value too.
        let word_start = prev.is_none_or(char::is_whitespace);
        if close.is_none() && word_start {
            let len = message[i..]
                .find(char::is_whitespace)
                .unwrap_or(message.len() - i);
            let word = message[i..i + len].trim_end_matches([',', ';', ':', '.', ')']);
            if word.contains('/') && !word.starts_with('/') || word.matches('/').count() > 1 {
                values.push(word.to_string());
                shape.push('…');
                prev = word.chars().last();
                i += word.len();
                continue;
            }
        }
        if let Some((close, j)) = close.and_then(|q| Some((q, message[after..].find(q)?))) {
            let end = after + j + close.len_utf8();
            values.push(message[i..end].to_string());
            shape.push(c);
            shape.push('…');
            shape.push(close);
            prev = Some(close);
            i = end;
            continue;
        }
        shape.push(c);
        prev = Some(c);
        i = after;
    }
    (shape, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_after_a_character_of_several_bytes_is_read_whole() {
        // The fuzz run's panic: the byte after '✗' was taken for a boundary.
        assert_eq!(numbered("é ü ✗60 cents"), Some(("é ü ✗", "60", " cents")));
        assert_eq!(numbered("✗7"), Some(("✗", "7", "")));
        assert_eq!(numbered("42"), Some(("", "42", "")));
        assert!(follows("✗1", "✗2"));
    }
}
