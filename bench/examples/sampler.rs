//! Times the sampler alone on generated streams, fed in pipe-sized chunks:
//! `sampler [MB]` prints MB/s for short lines, numbers, 64-byte lines and a
//! warning-heavy build log.

use std::time::Instant;

use lens_core::sample::Sampler;

fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(256);
    let size = mb << 20;
    let inputs: [(&str, Vec<u8>); 4] = [
        ("yes", b"y\n".repeat(size / 2)),
        ("seq", {
            let mut v = Vec::with_capacity(size);
            let mut i = 1u64;
            while v.len() < size {
                v.extend_from_slice(i.to_string().as_bytes());
                v.push(b'\n');
                i += 1;
            }
            v
        }),
        ("64-byte lines", {
            let mut line = vec![b'x'; 63];
            line.push(b'\n');
            line.repeat(size / 64)
        }),
        ("cargo log", bench::inputs::cargo_log(size, 600).stderr),
    ];
    for (name, bytes) in inputs {
        let t = Instant::now();
        let mut s = Sampler::default();
        for chunk in bytes.chunks(128 << 10) {
            s.push(chunk);
        }
        let sample = s.finish();
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name:>14}: {:>7.0} MB/s ({} lines, {} held, {} KB held)",
            bytes.len() as f64 / secs / 1e6,
            sample.lines,
            sample.numbers.len(),
            sample.text.len() >> 10
        );
    }
}
