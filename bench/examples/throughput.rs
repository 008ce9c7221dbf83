//! Level-2 throughput on a log built from the recordings, for profiling
//! (`perf record`, `valgrind --tool=callgrind`): `throughput [MB] [runs] [--stages]`,
//! by default 10 MB, best of 3; `--stages` adds each stage's best time alone,
//! `--stage NAME` runs only that stage (to profile it), `--threads N` caps the
//! threads per-line work may use (default: one per core).
use std::time::Instant;

use bench::growth::min_time;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stages = args.iter().any(|a| a == "--stages");
    let only = args
        .iter()
        .position(|a| a == "--stage")
        .and_then(|i| args.get(i + 1));
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1)?.parse().ok());
    lens_core::par::set_threads(threads.unwrap_or(0));
    let mut nums = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || args[i - 1] != "--threads")
        .filter_map(|(_, a)| a.parse::<usize>().ok());
    let mb = nums.next().unwrap_or(10);
    let runs = nums.next().unwrap_or(3).max(1);
    let big = bench::inputs::large_log(mb << 20).expect("recordings");
    let mb_len = big.len() as f64 / (1 << 20) as f64;
    if let Some(stage) = only {
        let d = min_time(runs, bench::stages::runner(stage, &big, 1));
        eprintln!("{stage:<9} {:>8.1} ms", d.as_secs_f64() * 1e3);
        return;
    }
    let mut f = bench::stages::runner("pipeline", &big, 1);
    for _ in 0..runs {
        let t = Instant::now();
        f();
        eprintln!("{:.1} MB/s", mb_len / t.elapsed().as_secs_f64());
    }
    if stages {
        for stage in bench::stages::NAMES {
            let d = min_time(runs, bench::stages::runner(stage, &big, 1));
            eprintln!("{stage:<9} {:>8.1} ms", d.as_secs_f64() * 1e3);
        }
    }
}
