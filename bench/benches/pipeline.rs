//! Criterion benchmarks: each stage and the whole pipeline on recorded real outputs,
//! and the level-2 pipeline on a 10 MB log built from them.

use bench::{inputs, stages};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn pipeline(c: &mut Criterion) {
    let inputs = inputs::standard().expect("recordings in cases/");
    for input in &inputs {
        let mut group = c.benchmark_group(&input.name);
        group.throughput(Throughput::Bytes(input.len() as u64));
        for stage in stages::NAMES {
            let mut f = stages::runner(stage, input, 1);
            group.bench_function(stage, |b| b.iter(&mut f));
        }
        group.finish();
    }
    let big = inputs::large_log(10 << 20).expect("recordings in cases/");
    let mut group = c.benchmark_group("log-10MB");
    group
        .sample_size(10)
        .throughput(Throughput::Bytes(big.len() as u64));
    let mut f = stages::runner("pipeline", &big, 1);
    group.bench_function("pipeline", |b| b.iter(&mut f));
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
