//! JSON listings: a stream that is one JSON document holding an array of similar
//! objects (`gh pr list --json …`, `glab mr list -F json`, `pip list
//! --format=json`, `kubectl get -o json`'s `items`). Each element becomes one
//! compact row of its identifying and status fields (`number=42 state=OPEN
//! title="Fix login"`), in the array's order; every other field is in the stored
//! output the marker names. The fields are the first element's, chosen by name
//! (ids, names, titles, states, versions; kubectl's `metadata.name` and
//! `status.phase`), at most six, among those most elements hold as plain values.

use serde_json::Value;

use super::Found;
use crate::digest::Digest;
use crate::doc::{Doc, Stream};

/// Arrays shorter than this stay as printed.
const MIN_ELEMENTS: usize = 5;
/// Fields a row shows at most.
const MAX_FIELDS: usize = 6;

/// Field names that identify an element or say its state, best first.
const WANTED: &[&str] = &[
    "id",
    "iid",
    "number",
    "key",
    "name",
    "ifname",
    "title",
    "state",
    "status",
    "phase",
    "operstate",
    "conclusion",
    "version",
    "ref",
    "branch",
    "headRefName",
    "author",
    "kind",
    "type",
    "namespace",
];

/// Nested paths kubectl and similar APIs put them under.
const NESTED: &[&[&str]] = &[
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["status", "phase"],
    &["status", "state"],
    &["spec", "nodeName"],
];

/// Adds a digest when the whole of `range` is one JSON document with an array of
/// objects in it, or is a golangci-lint report (which may be the first line only,
/// as v2 prints its text summary after it).
pub fn find(doc: &Doc, out: &mut Found, stream: Stream, range: std::ops::Range<usize>) {
    let Some((value, end)) = document(doc, range.clone()) else {
        return;
    };
    if let Some(lines) = super::go::lint_report(&value) {
        out.digests
            .push(Digest::of_lines(stream, range.start, end, lines));
        return;
    }
    if end != range.end {
        return;
    }
    let Some((label, items)) = array_of_objects(&value) else {
        return;
    };
    if items.len() < MIN_ELEMENTS {
        return;
    }
    let fields = fields(items);
    if fields.is_empty() {
        return;
    }
    let names: Vec<String> = fields.iter().map(|f| f.join(".")).collect();
    let value_of = |item: &Value, path: &[&str]| get(item, path).and_then(scalar);
    // A field with one value in every element is said once, in the heading.
    let constant: Vec<bool> = fields
        .iter()
        .map(|path| {
            let first = value_of(&items[0], path);
            first.is_some() && items.iter().all(|i| value_of(i, path) == first)
        })
        .collect();
    let shown: Vec<&str> = names
        .iter()
        .zip(&constant)
        .filter(|(_, c)| !**c)
        .map(|(n, _)| n.as_str())
        .collect();
    let every: Vec<String> = fields
        .iter()
        .zip(&names)
        .zip(&constant)
        .filter(|(_, c)| **c)
        .filter_map(|((path, name), _)| Some(format!("{name}={}", value_of(&items[0], path)?)))
        .collect();
    let mut heading = format!(
        "{}{} objects; fields shown: {}",
        label,
        items.len(),
        shown.join(", ")
    );
    if !every.is_empty() {
        heading.push_str(&format!("; every one: {}", every.join(" ")));
    }
    heading.push_str(" (the rest in the stored output)");
    let mut lines = vec![heading];
    for item in items {
        let row: Vec<String> = fields
            .iter()
            .zip(&names)
            .zip(&constant)
            .filter(|(_, c)| !**c)
            .filter_map(|((path, name), _)| Some(format!("{name}={}", value_of(item, path)?)))
            .collect();
        lines.push(row.join(" "));
    }
    out.digests
        .push(Digest::of_lines(stream, range.start, range.end, lines));
}

/// The JSON document `range` holds, and the end of its lines: the whole range, or
/// else its first non-blank line alone.
fn document(doc: &Doc, range: std::ops::Range<usize>) -> Option<(Value, usize)> {
    // Cheap checks first: a document opens with `{` or with `[` and an object,
    // and closes with `}` or `]` (a log's `[INFO] …` lines open with `[` too).
    let lines = &doc.lines[range.clone()];
    let first = lines.iter().position(|l| !l.text.trim().is_empty())?;
    let last = lines.iter().rposition(|l| !l.text.trim().is_empty())?;
    let head = lines[first].text.trim_start();
    let opens = head.starts_with('{')
        || head
            .strip_prefix('[')
            .is_some_and(|r| r.trim_start().is_empty() || r.trim_start().starts_with('{'));
    if !opens {
        return None;
    }
    let closes = |i: usize| {
        let tail = lines[i].text.trim_end();
        tail.ends_with('}') || tail.ends_with(']')
    };
    if closes(last) {
        let mut text = String::new();
        for l in lines {
            text.push_str(l.raw);
            text.push('\n');
        }
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            return Some((v, range.end));
        }
    }
    if last > first && head.starts_with('{') && closes(first) {
        if let Ok(v) = serde_json::from_str::<Value>(lines[first].raw) {
            return Some((v, range.start + first + 1));
        }
    }
    None
}

/// The array of objects in a document: the document itself, or the one member of
/// a top-level object that is such an array (`items`, `data`, …), with its key.
fn array_of_objects(v: &Value) -> Option<(String, &Vec<Value>)> {
    let objects = |a: &Vec<Value>| !a.is_empty() && a.iter().all(Value::is_object);
    match v {
        Value::Array(a) if objects(a) => Some((String::new(), a)),
        Value::Object(m) => {
            let arrays: Vec<(&String, &Vec<Value>)> = m
                .iter()
                .filter_map(|(k, v)| v.as_array().filter(|a| objects(a)).map(|a| (k, a)))
                .collect();
            match arrays.as_slice() {
                [(k, a)] => Some((format!("{k}: "), *a)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

/// A plain value as a row prints it: numbers and booleans as they are, strings
/// bare when they hold no space or quote, JSON-quoted otherwise; an object with a
/// `login` or `name` (an author) as that.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() && !s.contains([' ', '"', '=', '\n']) => Some(s.clone()),
        Value::String(s) => Some(Value::String(s.clone()).to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Object(m) => m
            .get("login")
            .or_else(|| m.get("username"))
            .or_else(|| m.get("name"))
            .and_then(scalar),
        _ => None,
    }
}

/// The fields a row shows: wanted names (then nested paths) that most elements
/// hold as plain values, in the order of `WANTED`.
fn fields(items: &[Value]) -> Vec<Vec<&'static str>> {
    let held = |path: &[&str]| {
        items
            .iter()
            .filter(|i| get(i, path).and_then(scalar).is_some())
            .count()
            * 2
            > items.len()
    };
    let mut out: Vec<Vec<&'static str>> = Vec::new();
    for name in WANTED {
        if out.len() < MAX_FIELDS && held(&[name]) {
            out.push(vec![name]);
        }
    }
    for path in NESTED {
        if out.len() < MAX_FIELDS && held(path) {
            out.push(path.to_vec());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::stages::classify::testing;

    #[test]
    fn an_array_of_objects_is_one_row_each_with_its_ids_and_states() {
        let mut items = Vec::new();
        for i in 0..8 {
            items.push(format!(
                r#"{{"number":{n},"title":"Fix {what} {i}","state":"{s}","author":{{"login":"ada"}},"body":"long text","labels":[]}}"#,
                n = 100 + i,
                what = if i == 3 { r#"login \"edge\""# } else { "retry" },
                s = if i % 3 == 0 { "MERGED" } else { "OPEN" },
            ));
        }
        let text = format!("[{}]\n", items.join(","));
        let lines = testing::digest_lines(&text);
        assert_eq!(
            lines[0],
            "8 objects; fields shown: number, title, state; every one: author=ada (the rest in the stored output)"
        );
        assert_eq!(lines[1], r#"number=100 title="Fix retry 0" state=MERGED"#);
        assert_eq!(
            lines[4],
            r#"number=103 title="Fix login \"edge\" 3" state=MERGED"#
        );
        assert_eq!(lines.len(), 9);
    }

    #[test]
    fn kubectl_items_use_metadata_and_status() {
        let mut items = Vec::new();
        for i in 0..6 {
            items.push(format!(
                r#"{{"kind":"Pod","metadata":{{"name":"web-{i}","namespace":"shop"}},"status":{{"phase":"{p}"}}}}"#,
                p = if i == 4 { "CrashLoopBackOff" } else { "Running" }
            ));
        }
        let text = format!(
            "{{\n  \"apiVersion\": \"v1\",\n  \"items\": [{}],\n  \"kind\": \"List\"\n}}\n",
            items.join(",")
        );
        let lines = testing::digest_lines(&text);
        assert_eq!(
            lines[0],
            "items: 6 objects; fields shown: metadata.name, status.phase; every one: kind=Pod metadata.namespace=shop (the rest in the stored output)"
        );
        assert_eq!(
            lines[5],
            "metadata.name=web-4 status.phase=CrashLoopBackOff"
        );
    }

    #[test]
    fn short_arrays_and_other_json_stay_as_printed() {
        assert!(testing::digest_lines("[{\"id\":1},{\"id\":2}]\n").is_empty());
        assert!(testing::digest_lines("{\"a\": 1, \"b\": [1, 2, 3, 4, 5, 6]}\n").is_empty());
        assert!(testing::digest_lines("[1, 2, 3, 4, 5, 6]\n").is_empty());
    }
}
