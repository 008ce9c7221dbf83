//! An agent's after-tool event, read from stdin as it arrives.
//!
//! An event can carry the command's whole output inline, tens of megabytes of
//! it in one JSON string. Read whole and parsed into owned strings, that cost
//! three copies of the output in memory. Here every string longer than
//! [`SPOOL_OVER`] is unescaped as it is read into a spool file (an unlinked
//! file beside the store, or in the temporary directory), with only its head,
//! its tail and its counts held; everything else becomes a `serde_json::Value`
//! as `serde_json` would have parsed it, with `""` where a spooled string was.
//! The output then goes from the spool to the store through the capture path
//! like any other stream, and memory does not grow with the event.
//!
//! The input is always read to its end, whatever it holds: the agent's writer
//! must never meet a closed pipe. Input that is not one JSON value (or holds
//! more than [`HELD_MAX`] outside spooled strings) gives no event.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

/// A string longer than this is spooled rather than held: output, which the
/// answer never needs once the captured output is taken from it.
pub const SPOOL_OVER: usize = 64 << 10;

/// The most an event may hold outside spooled strings.
const HELD_MAX: u64 = 64 << 20;

/// Nesting deeper than this is refused, as `serde_json` refuses it.
const DEPTH_MAX: usize = 128;

/// Bytes of a spooled string's start and end kept in memory: what agents read
/// to tell what their model would have read (a preview, a head and a tail).
const HEAD: usize = 64 << 10;
const TAIL: usize = 128 << 10;

/// An event: its small values parsed, its big strings spooled.
pub struct Event {
    /// The event with every spooled string replaced by `""`.
    pub value: Value,
    /// The spooled strings, by JSON pointer.
    spooled: Vec<(String, Spooled)>,
}

impl From<Value> for Event {
    fn from(value: Value) -> Event {
        Event {
            value,
            spooled: Vec::new(),
        }
    }
}

impl Event {
    /// The command line of a `PostToolUse` event for `tool`, the shape Claude
    /// Code, Codex and Qwen Code share; `None` for any other event.
    pub fn post_tool_use(&self, tool: &str) -> Option<&str> {
        let event = &self.value;
        if event.get("hook_event_name")?.as_str()? != "PostToolUse"
            || event.get("tool_name")?.as_str()? != tool
        {
            return None;
        }
        event.pointer("/tool_input/command")?.as_str()
    }

    /// The string at `pointer` (as [`Value::pointer`] names it), held or spooled.
    pub fn text(&self, pointer: &str) -> Option<Text<'_>> {
        if let Some((_, s)) = self.spooled.iter().find(|(p, _)| p == pointer) {
            return Some(Text::Spooled(s));
        }
        self.value.pointer(pointer)?.as_str().map(Text::Held)
    }
}

/// A string of an event.
#[derive(Clone, Copy, Debug)]
pub enum Text<'a> {
    /// Held in memory.
    Held(&'a str),
    /// In the spool file.
    Spooled(&'a Spooled),
}

impl<'a> Text<'a> {
    /// Bytes.
    pub fn len(self) -> u64 {
        match self {
            Text::Held(s) => s.len() as u64,
            Text::Spooled(s) => s.len,
        }
    }

    /// True when empty.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Characters.
    pub fn chars(self) -> u64 {
        match self {
            Text::Held(s) => s.chars().count() as u64,
            Text::Spooled(s) => s.chars,
        }
    }

    /// Pieces between `\n`s (one more than the newlines).
    pub fn lines(self) -> u64 {
        match self {
            Text::Held(s) => s.split('\n').count() as u64,
            Text::Spooled(s) => s.newlines + 1,
        }
    }

    /// The string with its middle left out when spooled (its first 64 KiB and
    /// last 128 KiB, whole characters), and the bytes and characters left out:
    /// enough for any reckoning of a preview, a head or a tail.
    pub fn sketch(self) -> (Cow<'a, str>, u64, u64) {
        match self {
            Text::Held(s) => (Cow::Borrowed(s), 0, 0),
            Text::Spooled(s) => {
                // A string under 192 KiB has a tail that begins inside its
                // head: only the tail's part past the head follows it (the
                // head ends on a character, so that part begins on one).
                let overlap = (s.head.len() + s.tail.len()).saturating_sub(s.len as usize);
                let tail = s.tail.get(overlap..).unwrap_or("");
                let kept = (s.head.len() + tail.len()) as u64;
                let kept_chars = (s.head.chars().count() + tail.chars().count()) as u64;
                (
                    Cow::Owned(format!("{}{tail}", s.head)),
                    s.len.saturating_sub(kept),
                    s.chars.saturating_sub(kept_chars),
                )
            }
        }
    }

    /// The whole string in memory (read back from the spool).
    pub fn whole(self) -> Option<Cow<'a, str>> {
        match self {
            Text::Held(s) => Some(Cow::Borrowed(s)),
            Text::Spooled(s) => {
                let mut b = Vec::with_capacity(s.len as usize);
                s.reader().read_to_end(&mut b).ok()?;
                String::from_utf8(b).ok().map(Cow::Owned)
            }
        }
    }

    /// Its bytes as a piece of captured output.
    pub fn piece(self) -> Piece {
        match self {
            Text::Held(s) => Piece::Held(s.as_bytes().to_vec()),
            Text::Spooled(s) => Piece::Spooled(s.clone()),
        }
    }

    /// Its first `len` bytes (all of it when shorter) as a piece of captured
    /// output: an agent that ends the output with a line of its own (an exit
    /// code, a file's name) hands over the output before that line.
    pub fn piece_to(self, len: u64) -> Piece {
        match self {
            Text::Held(s) => {
                let end = usize::try_from(len).unwrap_or(usize::MAX).min(s.len());
                Piece::Held(s.as_bytes()[..end].to_vec())
            }
            Text::Spooled(s) => {
                // A piece is only read and measured: its sketch and counts,
                // which now describe more than it holds, are never asked.
                let mut s = s.clone();
                s.len = s.len.min(len);
                Piece::Spooled(s)
            }
        }
    }
}

/// A string written to the spool file.
#[derive(Clone, Debug)]
pub struct Spooled {
    file: Arc<SpoolFile>,
    offset: u64,
    len: u64,
    chars: u64,
    newlines: u64,
    head: String,
    tail: String,
}

impl Spooled {
    /// Its bytes, read from the spool.
    pub fn reader(&self) -> impl Read {
        SpoolReader {
            file: self.file.file.try_clone(),
            offset: self.offset,
            left: self.len,
            placed: false,
        }
    }
}

/// Reads one spooled string; placed at its offset on the first read, so
/// readers of one file may follow each other on cloned handles.
struct SpoolReader {
    file: io::Result<File>,
    offset: u64,
    left: u64,
    placed: bool,
}

impl Read for SpoolReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let f = self
            .file
            .as_mut()
            .map_err(|e| io::Error::new(e.kind(), e.to_string()))?;
        if !self.placed {
            f.seek(SeekFrom::Start(self.offset))?;
            self.placed = true;
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = f.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the spool file ended early",
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// A piece of captured output.
#[derive(Clone, Debug)]
pub enum Piece {
    /// Bytes in memory.
    Held(Vec<u8>),
    /// A spooled string.
    Spooled(Spooled),
}

impl Piece {
    /// Bytes.
    pub fn len(&self) -> u64 {
        match self {
            Piece::Held(b) => b.len() as u64,
            Piece::Spooled(s) => s.len,
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its bytes.
    pub fn reader(&self) -> Box<dyn Read + '_> {
        match self {
            Piece::Held(b) => Box::new(&b[..]),
            Piece::Spooled(s) => Box::new(s.reader()),
        }
    }
}

/// The spool file; its name is removed as soon as it is open, else when the
/// last string in it is dropped.
#[derive(Debug)]
struct SpoolFile {
    file: File,
    path: Option<PathBuf>,
}

impl Drop for SpoolFile {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Beside the store, where the output is going anyway; a store Lens cannot
/// use leaves the temporary directory.
fn spool_dir() -> PathBuf {
    let store = crate::paths::store();
    match crate::store::open_root(&store) {
        Ok(()) => store,
        Err(_) => std::env::temp_dir(),
    }
}

fn open_spool(dir: &std::path::Path) -> io::Result<SpoolFile> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for n in 0..16u32 {
        let path = dir.join(format!(
            ".lens-spool-{}-{}",
            std::process::id(),
            nanos.wrapping_add(n)
        ));
        match crate::platform::create_private_file(&path) {
            Ok(file) => {
                let path = std::fs::remove_file(&path).err().map(|_| path);
                return Ok(SpoolFile { file, path });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no spool file")))
}

/// Reads `input` to its end; the event, when it is one JSON value.
pub fn read(input: impl Read) -> Option<Event> {
    read_spooling_in(input, spool_dir)
}

/// [`read`], spooling in the directory `dir` names when a string needs it.
pub fn read_spooling_in(input: impl Read, dir: fn() -> PathBuf) -> Option<Event> {
    let mut p = Parser {
        dir,
        input: Input {
            from: input,
            buf: vec![0; 256 << 10],
            pos: 0,
            end: 0,
            done: false,
        },
        spool: None,
        spooled: Vec::new(),
        held: 0,
        path: String::new(),
    };
    let parsed = p.document();
    // The rest is read and dropped, whatever happened.
    p.input.drain();
    let value = parsed.ok()?;
    Some(Event {
        value,
        spooled: p.spooled,
    })
}

/// Why the input is not an event (never shown: the hook then answers nothing).
#[derive(Debug)]
struct Bad;

type Res<T> = Result<T, Bad>;

struct Input<R> {
    from: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    done: bool,
}

impl<R: Read> Input<R> {
    /// Refills the buffer when it is used up; false at the end of the input.
    fn fill(&mut self) -> bool {
        if self.pos < self.end {
            return true;
        }
        while !self.done {
            match self.from.read(&mut self.buf) {
                Ok(0) => self.done = true,
                Ok(n) => {
                    self.pos = 0;
                    self.end = n;
                    return true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => self.done = true,
            }
        }
        false
    }

    fn peek(&mut self) -> Option<u8> {
        self.fill().then(|| self.buf[self.pos])
    }

    fn next(&mut self) -> Res<u8> {
        let b = self.peek().ok_or(Bad)?;
        self.pos += 1;
        Ok(b)
    }

    fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return;
            }
            self.pos += 1;
        }
    }

    fn expect(&mut self, word: &[u8]) -> Res<()> {
        for &w in word {
            if self.next()? != w {
                return Err(Bad);
            }
        }
        Ok(())
    }

    fn drain(&mut self) {
        self.pos = self.end;
        if !self.done {
            let _ = io::copy(&mut self.from, &mut io::sink());
            self.done = true;
        }
    }
}

struct Parser<R> {
    input: Input<R>,
    /// Where the spool file goes.
    dir: fn() -> PathBuf,
    spool: Option<Arc<SpoolFile>>,
    spooled: Vec<(String, Spooled)>,
    /// Bytes held outside spooled strings.
    held: u64,
    /// The JSON pointer of the value being read.
    path: String,
}

impl<R: Read> Parser<R> {
    fn document(&mut self) -> Res<Value> {
        let v = self.value(0)?;
        self.input.skip_ws();
        match self.input.peek() {
            None => Ok(v),
            Some(_) => Err(Bad),
        }
    }

    fn hold(&mut self, n: usize) -> Res<()> {
        self.held += n as u64;
        if self.held > HELD_MAX {
            return Err(Bad);
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Res<Value> {
        if depth > DEPTH_MAX {
            return Err(Bad);
        }
        self.input.skip_ws();
        match self.input.peek().ok_or(Bad)? {
            b'{' => {
                self.input.pos += 1;
                let mut map = Map::new();
                self.input.skip_ws();
                if self.input.peek() == Some(b'}') {
                    self.input.pos += 1;
                    return Ok(Value::Object(map));
                }
                loop {
                    self.input.skip_ws();
                    if self.input.next()? != b'"' {
                        return Err(Bad);
                    }
                    let key = self.key()?;
                    self.input.skip_ws();
                    if self.input.next()? != b':' {
                        return Err(Bad);
                    }
                    let len = self.path.len();
                    self.path.push('/');
                    self.path
                        .push_str(&key.replace('~', "~0").replace('/', "~1"));
                    let v = self.value(depth + 1)?;
                    self.path.truncate(len);
                    map.insert(key, v);
                    self.input.skip_ws();
                    match self.input.next()? {
                        b',' => {}
                        b'}' => return Ok(Value::Object(map)),
                        _ => return Err(Bad),
                    }
                }
            }
            b'[' => {
                self.input.pos += 1;
                let mut items = Vec::new();
                self.input.skip_ws();
                if self.input.peek() == Some(b']') {
                    self.input.pos += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    let len = self.path.len();
                    self.path.push_str(&format!("/{}", items.len()));
                    let v = self.value(depth + 1)?;
                    self.path.truncate(len);
                    items.push(v);
                    self.hold(8)?;
                    self.input.skip_ws();
                    match self.input.next()? {
                        b',' => {}
                        b']' => return Ok(Value::Array(items)),
                        _ => return Err(Bad),
                    }
                }
            }
            b'"' => {
                self.input.pos += 1;
                self.string()
            }
            b't' => self.input.expect(b"true").map(|()| Value::Bool(true)),
            b'f' => self.input.expect(b"false").map(|()| Value::Bool(false)),
            b'n' => self.input.expect(b"null").map(|()| Value::Null),
            b'-' | b'0'..=b'9' => {
                let mut text = String::new();
                while let Some(b) = self.input.peek() {
                    if !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                        break;
                    }
                    text.push(b as char);
                    self.input.pos += 1;
                    self.hold(1)?;
                }
                // `serde_json` decides what the number is, as it would have.
                match serde_json::from_str::<Value>(&text) {
                    Ok(n @ Value::Number(_)) => Ok(n),
                    _ => Err(Bad),
                }
            }
            _ => Err(Bad),
        }
    }

    /// An object's key: held whole, however long (up to what an event holds).
    fn key(&mut self) -> Res<String> {
        let mut sink = Sink::Held(Vec::new());
        self.scan(&mut sink, HELD_MAX as usize, false)?;
        let Sink::Held(b) = sink else {
            return Err(Bad);
        };
        self.hold(b.len())?;
        String::from_utf8(b).map_err(|_| Bad)
    }

    /// A string value: held when short, else spooled (`""` in the value).
    fn string(&mut self) -> Res<Value> {
        let mut sink = Sink::Held(Vec::new());
        self.scan(&mut sink, SPOOL_OVER, true)?;
        match sink {
            Sink::Held(b) => {
                self.hold(b.len())?;
                String::from_utf8(b).map(Value::String).map_err(|_| Bad)
            }
            Sink::Spool(w) => {
                let s = w.finish()?;
                self.spooled.push((self.path.clone(), s));
                Ok(Value::String(String::new()))
            }
        }
    }

    /// Unescapes a string's bytes (after its opening quote) into `sink` up to
    /// its closing quote, moving to the spool once past `over` bytes (refused
    /// there unless `spool`).
    fn scan(&mut self, sink: &mut Sink, over: usize, spool: bool) -> Res<()> {
        loop {
            if !self.input.fill() {
                return Err(Bad);
            }
            let rest = &self.input.buf[self.input.pos..self.input.end];
            let run = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(rest.len());
            sink.put(&rest[..run])?;
            self.input.pos += run;
            if let Sink::Held(b) = sink {
                if b.len() > over {
                    if !spool {
                        return Err(Bad);
                    }
                    let spool = match &self.spool {
                        Some(s) => Arc::clone(s),
                        None => {
                            let s = Arc::new(open_spool(&(self.dir)()).map_err(|_| Bad)?);
                            self.spool = Some(Arc::clone(&s));
                            s
                        }
                    };
                    let held = std::mem::take(b);
                    let mut w = SpoolWriter::new(spool)?;
                    w.put(&held)?;
                    *sink = Sink::Spool(Box::new(w));
                }
            }
            if run == rest.len() {
                continue;
            }
            match self.input.next()? {
                b'"' => return Ok(()),
                b'\\' => {
                    let c = match self.input.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode()?,
                        _ => return Err(Bad),
                    };
                    let mut utf8 = [0u8; 4];
                    sink.put(c.encode_utf8(&mut utf8).as_bytes())?;
                }
                // A raw control character: not JSON.
                _ => return Err(Bad),
            }
        }
    }

    /// The character of a `\u` escape (its four digits next), joining a
    /// surrogate pair; a lone surrogate is refused, as `serde_json` refuses it.
    fn unicode(&mut self) -> Res<char> {
        let first = self.hex4()?;
        if !(0xD800..0xE000).contains(&first) {
            return char::from_u32(first).ok_or(Bad);
        }
        if first >= 0xDC00 {
            return Err(Bad);
        }
        self.input.expect(b"\\u")?;
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return Err(Bad);
        }
        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)).ok_or(Bad)
    }

    fn hex4(&mut self) -> Res<u32> {
        let mut n = 0;
        for _ in 0..4 {
            let d = (self.input.next()? as char).to_digit(16).ok_or(Bad)?;
            n = n * 16 + d;
        }
        Ok(n)
    }
}

enum Sink {
    Held(Vec<u8>),
    Spool(Box<SpoolWriter>),
}

impl Sink {
    fn put(&mut self, b: &[u8]) -> Res<()> {
        match self {
            Sink::Held(v) => {
                v.extend_from_slice(b);
                Ok(())
            }
            Sink::Spool(w) => w.put(b),
        }
    }
}

/// Writes one string to the spool, counting its characters and newlines and
/// checking it is UTF-8 as it goes.
struct SpoolWriter {
    spool: Arc<SpoolFile>,
    out: BufWriter<File>,
    offset: u64,
    len: u64,
    chars: u64,
    newlines: u64,
    head: Vec<u8>,
    /// The start of a character cut by the end of the last bytes put.
    carry: Vec<u8>,
}

impl SpoolWriter {
    fn new(spool: Arc<SpoolFile>) -> Res<SpoolWriter> {
        let mut file = spool.file.try_clone().map_err(|_| Bad)?;
        let offset = file.seek(SeekFrom::End(0)).map_err(|_| Bad)?;
        Ok(SpoolWriter {
            spool,
            out: BufWriter::with_capacity(256 << 10, file),
            offset,
            len: 0,
            chars: 0,
            newlines: 0,
            head: Vec::new(),
            carry: Vec::new(),
        })
    }

    fn put(&mut self, b: &[u8]) -> Res<()> {
        if b.is_empty() {
            return Ok(());
        }
        self.utf8(b)?;
        if self.head.len() < HEAD {
            let n = (HEAD - self.head.len()).min(b.len());
            self.head.extend_from_slice(&b[..n]);
        }
        self.len += b.len() as u64;
        // A byte that does not continue a character starts one.
        self.chars += b.iter().filter(|&&x| (x as i8) >= -0x40).count() as u64;
        self.newlines += lens_core::sample::count_newlines(b);
        self.out.write_all(b).map_err(|_| Bad)
    }

    /// Checks that the bytes put so far are UTF-8, a character cut between
    /// two puts completed by the second.
    fn utf8(&mut self, mut b: &[u8]) -> Res<()> {
        if !self.carry.is_empty() {
            let width = match self.carry[0] {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let take = (width - self.carry.len()).min(b.len());
            self.carry.extend_from_slice(&b[..take]);
            b = &b[take..];
            if self.carry.len() < width {
                return Ok(());
            }
            std::str::from_utf8(&self.carry).map_err(|_| Bad)?;
            self.carry.clear();
        }
        match std::str::from_utf8(b) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() => {
                self.carry = b[e.valid_up_to()..].to_vec();
                Ok(())
            }
            Err(_) => Err(Bad),
        }
    }

    fn finish(self) -> Res<Spooled> {
        if !self.carry.is_empty() {
            return Err(Bad);
        }
        let mut file = self.out.into_inner().map_err(|_| Bad)?;
        let head = whole_chars(&self.head, false);
        let from = self.len.saturating_sub(TAIL as u64);
        let mut tail = Vec::new();
        file.seek(SeekFrom::Start(self.offset + from))
            .and_then(|_| file.take(self.len - from).read_to_end(&mut tail))
            .map_err(|_| Bad)?;
        let tail = whole_chars(&tail, true);
        // Under 192 KiB the tail begins inside the head; `sketch` joins them.
        Ok(Spooled {
            file: self.spool,
            offset: self.offset,
            len: self.len,
            chars: self.chars,
            newlines: self.newlines,
            head,
            tail,
        })
    }
}

/// The whole characters of `b`, a cut of valid UTF-8: its end trimmed to a
/// character boundary, or (`from_end`) its start.
fn whole_chars(b: &[u8], from_end: bool) -> String {
    let b = if from_end {
        let start = b
            .iter()
            .position(|&x| (x as i8) >= -0x40)
            .unwrap_or(b.len());
        &b[start..]
    } else {
        b
    };
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(e) => String::from_utf8_lossy(&b[..e.valid_up_to()]).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Option<Event> {
        // A reader that hands over a few bytes at a time cuts escapes,
        // characters and words at every place.
        struct Dribble<'a>(&'a [u8]);
        impl Read for Dribble<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(3);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        read_spooling_in(Dribble(text.as_bytes()), std::env::temp_dir)
    }

    fn parse_bytes(b: &[u8]) -> Option<Event> {
        read_spooling_in(b, std::env::temp_dir)
    }

    #[test]
    fn small_events_parse_as_serde_json_parses_them() {
        for text in [
            r#"{"a": [1, -2.5e3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"], "b": {}, "c": []}"#,
            r#"  {"k~/": {"deep": [[[]]]}, "dup": 1, "dup": 2}  "#,
            "\"caf\u{e9}\"",
            "12345678901234567890",
            "0",
        ] {
            let want: Value = serde_json::from_str(text).unwrap();
            let got = parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(got.value, want, "{text}");
            assert!(got.spooled.is_empty());
        }
        for bad in [
            "",
            "{",
            "{\"a\": 1,}",
            "[1 2]",
            "{\"a\" 1}",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"tab\there\"",
            "\"\\x\"",
            "01",
            "1 2",
            "tru",
            "\"unterminated",
        ] {
            assert!(serde_json::from_str::<Value>(bad).is_err(), "{bad}");
            assert!(parse(bad).is_none(), "{bad}");
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&deep).is_none());
        assert!(parse_bytes(&[b'"', 0xff, b'"']).is_none());
    }

    #[test]
    fn a_spooled_string_under_head_and_tail_together_sketches_whole() {
        // 100 KiB: spooled (past 64 KiB) yet under the 64 KiB head and the
        // 128 KiB tail together, so the two overlap.
        let line = "caf\u{e9} step ok\n";
        let big: String = line.repeat(100 * 1024 / line.len());
        let event = serde_json::json!({ "out": big });
        let e = parse(&event.to_string()).unwrap();
        let Some(t @ Text::Spooled(_)) = e.text("/out") else {
            panic!("not spooled");
        };
        let (sketch, bytes_out, chars_out) = t.sketch();
        assert_eq!((bytes_out, chars_out), (0, 0));
        assert_eq!(sketch, big);
    }

    #[test]
    fn a_long_string_is_spooled_unescaped_with_its_head_tail_and_counts() {
        let line = "caf\u{e9} \"q\" \\ tab\t\u{1} \u{1F600}\n";
        let big: String = line.repeat(40_000);
        let event = serde_json::json!({"r": {"stdout": big, "stderr": "e"}, "cmd": "make"});
        let e = parse(&event.to_string()).unwrap();
        assert_eq!(e.value["r"]["stdout"], "");
        assert_eq!(e.value["cmd"], "make");
        let Some(Text::Spooled(s)) = e.text("/r/stdout") else {
            panic!("not spooled");
        };
        let t = Text::Spooled(s);
        assert_eq!(t.len(), big.len() as u64);
        assert_eq!(t.chars(), big.chars().count() as u64);
        assert_eq!(t.lines(), big.split('\n').count() as u64);
        let mut back = Vec::new();
        s.reader().read_to_end(&mut back).unwrap();
        assert!(back == big.as_bytes());
        assert_eq!(t.whole().unwrap(), big);
        let (sketch, bytes_out, chars_out) = t.sketch();
        assert!(big.starts_with(&*s.head) && big.ends_with(&*s.tail));
        assert_eq!(sketch.len() as u64 + bytes_out, big.len() as u64);
        assert_eq!(
            sketch.chars().count() as u64 + chars_out,
            big.chars().count() as u64
        );
        assert!(matches!(e.text("/r/stderr"), Some(Text::Held("e"))));
        // The output before an agent's last line, spooled or held.
        let cut = big.len() as u64 - line.len() as u64;
        let mut first = Vec::new();
        t.piece_to(cut).reader().read_to_end(&mut first).unwrap();
        assert!(first == big.as_bytes()[..cut as usize]);
        assert_eq!(t.piece_to(u64::MAX).len(), big.len() as u64);
        let mut held = Vec::new();
        Text::Held("abc")
            .piece_to(2)
            .reader()
            .read_to_end(&mut held)
            .unwrap();
        assert_eq!(held, b"ab");
        // Invalid UTF-8 far into a long string still refuses the event.
        let mut raw = format!("{{\"a\": \"{}", "x".repeat(SPOOL_OVER * 3)).into_bytes();
        raw.extend_from_slice(&[0xe9, b'"', b'}']);
        assert!(parse_bytes(&raw).is_none());
    }
}
