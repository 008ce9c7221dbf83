//! Level-2 throughput on the 10 MB log, for profiling (`perf record`).
fn main() {
    let big = bench::inputs::large_log(10 << 20).expect("recordings");
    let mut f = bench::stages::runner("pipeline", &big, 1);
    for _ in 0..3 {
        let t = std::time::Instant::now();
        f();
        eprintln!(
            "{:.1} MB/s",
            big.len() as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64()
        );
    }
}
