//! The growth gate: time at 1×, 4× and 16× an input, compare 16× with 1×.

use std::time::{Duration, Instant};

/// Largest 16×/1× time ratio a linear stage may show (16 plus room for noise).
pub const LIMIT: f64 = 20.0;

/// Minimum wall time of `f` over `repeats` runs.
pub fn min_time(repeats: usize, mut f: impl FnMut()) -> Duration {
    (0..repeats.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// One measured growth.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Growth {
    /// Minimum time at 1×, 4×, 16×, in nanoseconds.
    pub nanos: [u128; 3],
    /// 16× over 1×.
    pub ratio: f64,
}

impl Growth {
    /// True when the growth is within the limit.
    pub fn passes(&self) -> bool {
        self.ratio <= LIMIT
    }
}

/// Times `f(scale)` at scales 1, 4 and 16. Each sample runs `f` enough times to
/// last about a millisecond at 1× (and 1/4, 1/16 as many times at 4×, 16×, so every
/// sample does the same work in bytes); a scale keeps the minimum per-call time over
/// at least `repeats` samples, or as many as fit in `budget`.
pub fn measure(repeats: usize, budget: Duration, mut f: impl FnMut(usize)) -> Growth {
    // Calibrate: calls of f(1) per ~1 ms sample, a multiple of 16.
    let one = min_time(3, || f(1)).as_nanos().max(1);
    let calls = ((1_000_000 / one) as usize).clamp(1, 4096).div_ceil(16) * 16;
    // The three sizes are sampled in turn (1x, 4x, 16x, 1x, ...), so a machine
    // that slows down or speeds up for a while does so for all three alike.
    let mut best = [u128::MAX; 3];
    let started = Instant::now();
    let mut rounds = 0;
    while rounds < repeats || (started.elapsed() < budget * 3 && rounds < 200) {
        for (k, scale) in [1usize, 4, 16].into_iter().enumerate() {
            let per_sample = (calls / scale).max(1);
            let t = min_time(1, || {
                for _ in 0..per_sample {
                    f(scale);
                }
            });
            best[k] = best[k].min(t.as_nanos() / per_sample as u128);
        }
        rounds += 1;
    }
    let nanos = best.map(|b| b.max(1));
    Growth {
        nanos,
        ratio: nanos[2] as f64 / nanos[0] as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gate must catch a quadratic stage: 16× the input is 256× the work.
    #[test]
    fn a_quadratic_function_fails_the_gate() {
        let g = measure(5, Duration::from_millis(20), |scale| {
            let n = 300 * scale;
            let v: Vec<u64> = (0..n as u64).collect();
            let mut acc = 0u64;
            for a in &v {
                for b in &v {
                    acc = acc.wrapping_add(a ^ b);
                }
            }
            std::hint::black_box(acc);
        });
        assert!(!g.passes(), "quadratic work passed the gate: {g:?}");
    }

    /// And let a function whose work does not grow through.
    #[test]
    fn constant_work_passes_the_gate() {
        let g = measure(5, Duration::from_millis(20), |_| {
            let v: Vec<u64> = (0..20_000).collect();
            std::hint::black_box(v.iter().sum::<u64>());
        });
        assert!(g.passes(), "constant work failed the gate: {g:?}");
    }
}
