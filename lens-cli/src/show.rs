//! `lens show <handle>`: a stored run, byte for byte, by lines, or re-rendered at a
//! level.

use std::io::{self, Read};

use lens_core::{Handle, Level, Options, Stream, DEFAULT_BUDGET};

use crate::args::ShowArgs;
use crate::capture;
use crate::config::load_config;
use crate::{paths, store};

pub(crate) fn cmd(s: ShowArgs) -> i32 {
    let stored = match store::load(&paths::store(), &s.handle) {
        Ok(st) => st,
        Err(e) => {
            eprintln!("lens show: {e}");
            return 1;
        }
    };
    let code = show_stored(&s, &stored);
    // What the agent fetched back counts against what its views saved.
    crate::runlog::append(
        &paths::log_dir(),
        &crate::runlog::Record::fetch(
            crate::now_ms(std::time::SystemTime::now()),
            vec!["lens".into(), "show".into(), s.handle.clone()],
            s.handle.clone(),
            capture::PRINTED.load(std::sync::atomic::Ordering::Relaxed),
        ),
    );
    // A damaged meta.json is said after the output, which is intact.
    if let Some(w) = &stored.meta_warning {
        eprintln!("lens show: {w}");
    }
    code
}

fn show_stored(s: &ShowArgs, stored: &store::Stored) -> i32 {
    let open = |stream: Stream| stored.open(stream.name());
    if let Some((a, b)) = s.lines {
        if s.level != Level::Three {
            eprintln!(
                "lens show: --lines prints raw lines; drop --level, or drop --lines to see a level"
            );
            return 2;
        }
        // The stream asked for, else stdout unless only stderr has lines.
        let stream = s.stream.unwrap_or_else(|| {
            let empty =
                |st: Stream| open(st).map_or(true, |f| f.metadata().map_or(true, |m| m.len() == 0));
            if empty(Stream::Stdout) && !empty(Stream::Stderr) {
                Stream::Stderr
            } else {
                Stream::Stdout
            }
        });
        let file = match open(stream) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("lens show: {e}");
                return 1;
            }
        };
        let total = copy_lines(file, a, b);
        if u64::from(a) > total {
            eprintln!(
                "lens show: {} has {total} lines; --lines {a}-{b} starts past the end",
                stream.name()
            );
            return 1;
        }
        return 0;
    }
    let streams: Vec<Stream> = match s.stream {
        Some(st) => vec![st],
        None => vec![Stream::Stdout, Stream::Stderr],
    };
    // One stream asked for goes to stdout, so it can be piped; both go where the
    // command wrote them.
    let to = |st: Stream| {
        if s.stream.is_some() {
            Stream::Stdout
        } else {
            st
        }
    };
    if s.level == Level::Three {
        for st in streams {
            match open(st) {
                Ok(f) => capture::copy_to(f, to(st)),
                Err(e) => {
                    eprintln!("lens show: {e}");
                    return 1;
                }
            }
        }
        return 0;
    }
    let mut budget = s.budget.unwrap_or(DEFAULT_BUDGET);
    if s.budget.is_none() {
        let mut ignored = Vec::new();
        if let Some(c) = load_config(&mut ignored) {
            budget = c.settings(&stored.meta.argv).budget.unwrap_or(budget);
        }
    }
    let mut read = Vec::new();
    for st in [Stream::Stdout, Stream::Stderr] {
        match open(st).and_then(|f| Reread::of(f, st)) {
            Ok(r) => read.push(r),
            Err(e) => {
                eprintln!("lens show: {e}");
                return 1;
            }
        }
    }
    let opts = Options {
        budget,
        ..Options::new(s.level, Handle::parse(&s.handle))
    };
    let (v_out, v_err, _) = lens_core::view_parts(
        &stored.meta.argv,
        read[0].input(),
        read[1].input(),
        stored.meta.exit,
        &opts,
    );
    for (v, r) in [(v_out, &read[0]), (v_err, &read[1])] {
        if !streams.contains(&r.stream) {
            continue;
        }
        match v {
            Some(text) => capture::print_to(to(r.stream), text.as_bytes()),
            None => match open(r.stream) {
                Ok(f) => capture::copy_to(f, to(r.stream)),
                Err(e) => eprintln!("lens show: {e}"),
            },
        }
    }
    0
}

/// A stored stream read back for a view: whole when it is small enough to hold,
/// else sampled as it was when it ran.
struct Reread {
    stream: Stream,
    bytes: u64,
    whole: Vec<u8>,
    sample: Option<lens_core::sample::Sample>,
}

impl Reread {
    fn of(mut f: std::fs::File, stream: Stream) -> Result<Reread, String> {
        let fail = |e: io::Error| format!("cannot read the stored {}: {e}", stream.name());
        let bytes = f.metadata().map_err(fail)?.len();
        let limits = capture::Limits::DEFAULT;
        let mut buf = vec![0u8; 256 << 10];
        let mut whole = Vec::new();
        let mut lines = 0;
        let mut sampler: Option<lens_core::sample::Sampler> = None;
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(e)),
            };
            let chunk = &buf[..n];
            if let Some(s) = sampler.as_mut() {
                s.push(chunk);
                continue;
            }
            whole.extend_from_slice(chunk);
            lines += lens_core::sample::count_newlines(chunk);
            if whole.len() as u64 > limits.bytes || lines > limits.lines {
                let mut s = lens_core::sample::Sampler::default();
                s.push(&whole);
                whole = Vec::new();
                sampler = Some(s);
            }
        }
        Ok(Reread {
            stream,
            bytes,
            whole,
            sample: sampler.map(lens_core::sample::Sampler::finish),
        })
    }

    fn input(&self) -> lens_core::Input<'_> {
        let part = match &self.sample {
            Some(s) => s.part(),
            None => std::str::from_utf8(&self.whole)
                .ok()
                .map(lens_core::Part::whole),
        };
        lens_core::Input {
            part,
            raw_len: self.bytes,
        }
    }
}

/// Copies raw lines `a..=b` (1-based) of a stored stream to stdout, in bounded
/// pieces; returns how many lines the stream has.
fn copy_lines(mut f: impl Read, a: u32, b: u32) -> u64 {
    let (a, b) = (u64::from(a), u64::from(b));
    let mut buf = vec![0u8; 256 << 10];
    let mut line = 1u64;
    let mut partial = false;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        let mut start = 0;
        for (i, &c) in chunk.iter().enumerate() {
            if c != b'\n' {
                continue;
            }
            if (a..=b).contains(&line) {
                capture::print_to(Stream::Stdout, &chunk[start..=i]);
            }
            line += 1;
            start = i + 1;
        }
        partial = start < chunk.len();
        if partial && (a..=b).contains(&line) {
            capture::print_to(Stream::Stdout, &chunk[start..]);
        }
    }
    // A last line without a newline counts.
    line - 1 + u64::from(partial)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_count_every_line_wherever_the_reads_end() {
        assert_eq!(copy_lines(&b"a\nb\nc\nd"[..], 9, 9), 4);
        assert_eq!(copy_lines(&b"a\nb\n"[..], 9, 9), 2);
        assert_eq!(copy_lines(&b""[..], 9, 9), 0);
    }
}
