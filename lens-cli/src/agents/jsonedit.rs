//! Edits to a user's JSON settings file made in its text, not through a parsed
//! value: every byte `init` does not mean to change stays as it was: numbers
//! as written (`12345678901234567890123` is not rounded to a float), the key
//! order, the indentation, comments (JSONC, as Gemini CLI and OpenCode read
//! them) and blank lines. The parser records where each value starts and ends;
//! an edit splices text in or out at those offsets, in the file's own indent.

use serde_json::Value;

/// A value's place in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset just past its last character.
    pub end: usize,
    /// What it is.
    pub kind: Kind,
}

/// A value's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `{…}`: each member's key (unquoted), where the key starts, its value.
    Object(Vec<(String, usize, Node)>),
    /// `[…]`.
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

impl Node {
    /// A member of an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(m) => m.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Parses JSON with `//` and `/* */` comments and trailing commas allowed.
pub fn parse(text: &str) -> Result<Node, String> {
    let mut p = Parser {
        b: text.as_bytes(),
        text,
        i: 0,
    };
    p.skip();
    let v = p.value(0)?;
    p.skip();
    if p.i != p.b.len() {
        return Err(format!("unexpected text at byte {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn skip(&mut self) {
        loop {
            while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
            if self.b[self.i..].starts_with(b"//") {
                while self.i < self.b.len() && self.b[self.i] != b'\n' {
                    self.i += 1;
                }
            } else if self.b[self.i..].starts_with(b"/*") {
                match self.text[self.i + 2..].find("*/") {
                    Some(e) => self.i += e + 4,
                    None => self.i = self.b.len(),
                }
            } else {
                return;
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > 128 {
            return Err("nested too deeply".into());
        }
        let start = self.i;
        let kind = match self.b.get(self.i) {
            None => return Err("it ends where a value should be".into()),
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                loop {
                    self.skip();
                    if self.b.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        break;
                    }
                    let key_at = self.i;
                    if self.b.get(self.i) != Some(&b'"') {
                        return Err(format!("a key should start at byte {key_at}"));
                    }
                    let key = self.string()?;
                    self.skip();
                    if self.b.get(self.i) != Some(&b':') {
                        return Err(format!("a ':' should follow the key at byte {key_at}"));
                    }
                    self.i += 1;
                    self.skip();
                    let v = self.value(depth + 1)?;
                    members.push((key, key_at, v));
                    self.skip();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        _ => return Err(format!("',' or '}}' expected at byte {}", self.i)),
                    }
                }
                Kind::Object(members)
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.skip();
                    if self.b.get(self.i) == Some(&b']') {
                        self.i += 1;
                        break;
                    }
                    items.push(self.value(depth + 1)?);
                    self.skip();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        _ => return Err(format!("',' or ']' expected at byte {}", self.i)),
                    }
                }
                Kind::Array(items)
            }
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                while self.i < self.b.len()
                    && (self.b[self.i].is_ascii_alphanumeric() || b"+-.".contains(&self.b[self.i]))
                {
                    self.i += 1;
                }
                let word = &self.text[start..self.i];
                let number = word
                    .strip_prefix('-')
                    .unwrap_or(word)
                    .starts_with(|c: char| c.is_ascii_digit());
                if !(number || matches!(word, "true" | "false" | "null")) {
                    return Err(format!("unexpected {word:?} at byte {start}"));
                }
                Kind::Scalar
            }
        };
        Ok(Node {
            start,
            end: self.i,
            kind,
        })
    }

    /// A string at `i`; returns its unescaped text.
    fn string(&mut self) -> Result<String, String> {
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_str::<String>(&self.text[start..self.i])
                        .map_err(|e| format!("a bad string at byte {start} ({e})"));
                }
                _ => self.i += 1,
            }
        }
        Err(format!("an unclosed string at byte {start}"))
    }
}

/// The file's indent unit: the leading whitespace of its first indented line
/// (two spaces when it has none).
fn indent_unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|w| !w.is_empty())
        .map_or_else(|| "  ".to_string(), str::to_string)
}

/// The leading whitespace of the line `at` is on.
fn line_indent(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start().len()]
}

/// `value` as JSON text in the file's style: pretty with its indent unit, each
/// line after the first indented by `base`.
fn render(value: &Value, unit: &str, base: &str) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    value.serialize(&mut ser).expect("a Value serializes");
    String::from_utf8(out)
        .expect("JSON is UTF-8")
        .replace('\n', &format!("\n{base}"))
}

/// Adds `item` to a container (`key` is `Some` for an object member): after its
/// last element, on a line of its own in the file's indent, or inline for a
/// container written on one line.
pub fn insert(text: &str, container: &Node, key: Option<&str>, item: &Value) -> String {
    let unit = indent_unit(text);
    let (close, last_end, inner_indent, close_indent) = {
        let close = container.end - 1;
        let last = match &container.kind {
            Kind::Object(m) => m.last().map(|(_, k, v)| (*k, v.end)),
            Kind::Array(a) => a.last().map(|v| (v.start, v.end)),
            Kind::Scalar => None,
        };
        let own = line_indent(text, container.start).to_string();
        match last {
            Some((first_char, end)) => (
                close,
                Some(end),
                line_indent(text, first_char).to_string(),
                own,
            ),
            None => (close, None, format!("{own}{unit}"), own),
        }
    };
    let member = match key {
        Some(k) => format!(
            "{}: {}",
            serde_json::to_string(k).expect("a key serializes"),
            render(item, &unit, &inner_indent)
        ),
        None => render(item, &unit, &inner_indent),
    };
    let one_line = !text[container.start..container.end].contains('\n');
    match last_end {
        Some(end) if one_line => {
            format!(
                "{}, {}{}",
                &text[..end],
                member.replace('\n', " "),
                &text[end..]
            )
        }
        Some(end) => {
            // After the last element (and a trailing comma, if the file has one).
            let rest = &text[end..close];
            let comma = rest.trim_start().starts_with(',');
            let at = if comma {
                end + rest.find(',').unwrap() + 1
            } else {
                end
            };
            format!(
                "{}{}\n{inner_indent}{member}{}{}",
                &text[..end],
                if comma { &text[end..at] } else { "," },
                if comma { "," } else { "" },
                &text[at..]
            )
        }
        None => format!(
            "{}\n{inner_indent}{member}\n{close_indent}{}",
            &text[..container.start + 1],
            &text[close..]
        ),
    }
}

/// Takes element `index` out of a container with the comma that went with it
/// and the whitespace before it, so what is left reads as if it was never
/// there; an emptied container becomes `{}` or `[]`.
pub fn remove(text: &str, container: &Node, index: usize) -> String {
    let spans: Vec<(usize, usize)> = match &container.kind {
        Kind::Object(m) => m.iter().map(|(_, k, v)| (*k, v.end)).collect(),
        Kind::Array(a) => a.iter().map(|v| (v.start, v.end)).collect(),
        Kind::Scalar => return text.to_string(),
    };
    let Some(&(start, end)) = spans.get(index) else {
        return text.to_string();
    };
    if spans.len() == 1 {
        let open = &text[container.start..container.start + 1];
        let close = &text[container.end - 1..container.end];
        return format!(
            "{}{open}{close}{}",
            &text[..container.start],
            &text[container.end..]
        );
    }
    if index > 0 {
        // From the end of the one before (its comma goes) to this one's end.
        let prev_end = spans[index - 1].1;
        format!("{}{}", &text[..prev_end], &text[end..])
    } else {
        // From this one's start to the next one's start.
        let next_start = spans[1].0;
        format!("{}{}", &text[..start], &text[next_start..])
    }
}

/// A value's text with JSONC comments taken out, for serde_json to read.
pub fn strip_comments(text: &str) -> String {
    if !text.contains("//") && !text.contains("/*") {
        return text.to_string();
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let (mut i, mut in_str) = (0, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
            out.push(c);
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        } else if b[i..].starts_with(b"/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |e| i + e + 4);
            continue;
        } else {
            out.push(c);
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spans_cover_each_value_and_comments_are_whitespace() {
        let t = "{\n  // mine\n  \"a\": 12345678901234567890123, /* x */ \"b\": [1, {\"c\": null},],\n}\n";
        let n = parse(t).unwrap();
        let a = n.get("a").unwrap();
        assert_eq!(&t[a.start..a.end], "12345678901234567890123");
        let b = n.get("b").unwrap();
        assert_eq!(b.elements().unwrap().len(), 2);
        assert!(parse("{\"a\": }").is_err());
        assert!(parse("{\"a\": 1} x").is_err());
        assert!(parse("{\"a\" 1}").is_err());
        assert!(parse("[nope]").is_err());
    }

    #[test]
    fn an_insert_keeps_every_other_byte_and_takes_the_files_indent() {
        let t = "{\n    \"n\": 12345678901234567890123,\n    \"hooks\": {}\n}\n";
        let root = parse(t).unwrap();
        let hooks = root.get("hooks").unwrap();
        let new = insert(t, hooks, Some("PostToolUse"), &json!([{"matcher": "Bash"}]));
        assert_eq!(
            new,
            "{\n    \"n\": 12345678901234567890123,\n    \"hooks\": {\n        \"PostToolUse\": [\n            {\n                \"matcher\": \"Bash\"\n            }\n        ]\n    }\n}\n"
        );
        // Into a list that has items, after the last; a tab-indented file stays tabs.
        let t = "{\n\t\"a\": [\n\t\t1\n\t]\n}";
        let root = parse(t).unwrap();
        let new = insert(t, root.get("a").unwrap(), None, &json!(2));
        assert_eq!(new, "{\n\t\"a\": [\n\t\t1,\n\t\t2\n\t]\n}");
        // A one-line container stays on one line.
        let t = r#"{"a": 1}"#;
        let new = insert(t, &parse(t).unwrap(), Some("b"), &json!({"c": [true]}));
        assert_eq!(
            serde_json::from_str::<Value>(&new).unwrap(),
            json!({"a": 1, "b": {"c": [true]}})
        );
        assert!(!new.contains('\n'));
        // A trailing comma (JSONC) is kept and the new item follows it.
        let t = "{\n  \"a\": 1,\n}";
        let new = insert(t, &parse(t).unwrap(), Some("b"), &json!(2));
        assert_eq!(new, "{\n  \"a\": 1,\n  \"b\": 2,\n}");
    }

    #[test]
    fn a_remove_undoes_an_insert_byte_for_byte() {
        for t in [
            "{\n  \"a\": [\n    1\n  ]\n}\n",
            "{\n  \"a\": []\n}\n",
            "{\"a\": [1, 2]}",
            "{\n    \"a\": [ 1 , 2 ]\n}",
        ] {
            let root = parse(t).unwrap();
            let a = root.get("a").unwrap();
            let new = insert(t, a, None, &json!({"k": "v"}));
            let root2 = parse(&new).unwrap();
            let a2 = root2.get("a").unwrap();
            let back = remove(&new, a2, a2.elements().unwrap().len() - 1);
            assert_eq!(back, t, "{new}");
        }
        // The first of several goes with the whitespace after it.
        let t = "[\n  1,\n  2\n]";
        assert_eq!(remove(t, &parse(t).unwrap(), 0), "[\n  2\n]");
        let t = "{\"x\": 1, \"y\": 2}";
        assert_eq!(remove(t, &parse(t).unwrap(), 1), "{\"x\": 1}");
    }
}
