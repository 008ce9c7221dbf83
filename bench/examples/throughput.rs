//! Level-2 throughput on a log built from the recordings, for profiling
//! (`perf record`, `valgrind --tool=callgrind`): `throughput [MB] [runs]`, by
//! default 10 MB, best of 3.
fn main() {
    let mut args = std::env::args().skip(1);
    let mb: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let big = bench::inputs::large_log(mb << 20).expect("recordings");
    let mut f = bench::stages::runner("pipeline", &big, 1);
    for _ in 0..runs {
        let t = std::time::Instant::now();
        f();
        eprintln!(
            "{:.1} MB/s",
            big.len() as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64()
        );
    }
}
