//! What the numbers mean: a paired permutation test and a bootstrap interval.
//!
//! Sessions are few, skewed and now and then carry a 2x outlier, which is where a
//! t-test does worst, so the harness uses a paired permutation test on the
//! differences (the statistic is their mean; two-sided, the p-value is twice the
//! smaller one-sided tail, capped at 1, as scipy computes it) and a percentile
//! bootstrap interval for the median paired ratio. Up to 20 pairs the test is exact,
//! by enumerating all 2^n sign flips; above, it is Monte Carlo with a seed.
//!
//! The floor: with n pairs the smallest two-sided p-value is 2/2^n, so five pairs can
//! never come out below 0.0625, however large the effect.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Largest n for which the test enumerates every sign flip.
pub const EXACT_MAX: usize = 20;

/// Monte Carlo resamples above `EXACT_MAX`.
pub const RESAMPLES: usize = 100_000;

/// Bootstrap resamples every report uses (and the test checks at this count).
pub const BOOTSTRAP_RESAMPLES: usize = 20_000;

/// The smallest two-sided p-value n pairs can produce.
pub fn p_floor(n: usize) -> f64 {
    (2.0 / 2f64.powi(n as i32)).min(1.0)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Two-sided p-value of a paired permutation test on `differences` (statistic:
/// their mean). Exact up to `EXACT_MAX` pairs, seeded Monte Carlo above.
pub fn permutation_p(differences: &[f64], seed: u64) -> f64 {
    let n = differences.len();
    if n == 0 {
        return 1.0;
    }
    let observed = mean(differences);
    // Ties within floating-point noise count as ties, as scipy counts them.
    let gamma = (observed * f64::EPSILON * 100.0).abs();
    let (mut less, mut greater, total);
    if n <= EXACT_MAX {
        (less, greater) = (0u64, 0u64);
        let flips = 1u64 << n;
        for mask in 0..flips {
            let s: f64 = differences
                .iter()
                .enumerate()
                .map(|(i, d)| if mask >> i & 1 == 1 { -d } else { *d })
                .sum::<f64>()
                / n as f64;
            less += u64::from(s <= observed + gamma);
            greater += u64::from(s >= observed - gamma);
        }
        total = flips as f64;
        let p = 2.0 * (less.min(greater) as f64 / total);
        return p.min(1.0);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    (less, greater) = (0, 0);
    for _ in 0..RESAMPLES {
        let s: f64 = differences
            .iter()
            .map(|d| if rng.gen::<bool>() { -d } else { *d })
            .sum::<f64>()
            / n as f64;
        less += u64::from(s <= observed + gamma);
        greater += u64::from(s >= observed - gamma);
    }
    // The observed assignment counts once, as in scipy's randomized test.
    total = RESAMPLES as f64 + 1.0;
    (2.0 * ((less.min(greater) + 1) as f64 / total)).min(1.0)
}

/// The median of `v` (mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The `q` quantile (0..=1) of sorted values, linearly interpolated (numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// A seeded percentile bootstrap interval for the median of `values` at
/// `confidence` (e.g. 0.95), over `resamples` resamples.
pub fn bootstrap_median(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut medians = Vec::with_capacity(resamples);
    let mut sample = vec![0.0; n];
    for _ in 0..resamples {
        for s in sample.iter_mut() {
            *s = values[rng.gen_range(0..n)];
        }
        medians.push(median(&sample));
    }
    medians.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence) / 2.0;
    (quantile(&medians, alpha), quantile(&medians, 1.0 - alpha))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn vectors() -> Value {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/stats-vectors.json"
        );
        let local = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/stats-vectors.json"
        );
        let text = std::fs::read_to_string(path)
            .or_else(|_| std::fs::read_to_string(local))
            .expect("stats vectors");
        serde_json::from_str(&text).unwrap()
    }

    fn floats(v: &Value) -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    }

    #[test]
    fn exact_p_values_match_scipy() {
        let v = vectors();
        for case in v["permutation"].as_array().unwrap() {
            let d = floats(&case["differences"]);
            let want = case["exact_p"].as_f64().unwrap();
            let got = permutation_p(&d, 1);
            assert!(
                (got - want).abs() <= 1e-12,
                "{}: {got} against scipy's {want}",
                case["name"]
            );
        }
    }

    #[test]
    fn bootstrap_bounds_match_scipy_within_one_neighbour_at_the_reports_resample_count() {
        let v = vectors();
        for case in v["bootstrap"].as_array().unwrap() {
            let values = floats(&case["values"]);
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let (lo, hi) = bootstrap_median(
                &values,
                case["confidence"].as_f64().unwrap(),
                BOOTSTRAP_RESAMPLES,
                7,
            );
            for (got, want) in [
                (lo, case["low"].as_f64().unwrap()),
                (hi, case["high"].as_f64().unwrap()),
            ] {
                let i = sorted
                    .iter()
                    .position(|x| (x - want).abs() < 1e-9)
                    .expect("reference bound is a data value");
                // The bound lies between the reference's neighbours in the data
                // (a percentile interpolates between two order statistics).
                let lo_n = sorted[i.saturating_sub(1)];
                let hi_n = sorted[(i + 1).min(sorted.len() - 1)];
                assert!(
                    lo_n - 1e-9 <= got && got <= hi_n + 1e-9,
                    "{}: bound {got}, scipy {want}, neighbours {lo_n}..{hi_n}",
                    case["name"]
                );
            }
        }
    }

    #[test]
    fn the_floor_is_two_over_two_to_the_n() {
        assert_eq!(p_floor(5), 0.0625);
        assert_eq!(p_floor(8), 0.0078125);
        let all_up: Vec<f64> = (1..=5).map(f64::from).collect();
        assert_eq!(permutation_p(&all_up, 1), p_floor(5));
    }

    #[test]
    fn monte_carlo_is_seeded_and_close_to_exact() {
        let d: Vec<f64> = (0..24)
            .map(|i| {
                if i % 5 == 0 {
                    -1.0
                } else {
                    1.0 + i as f64 / 10.0
                }
            })
            .collect();
        let a = permutation_p(&d, 42);
        assert_eq!(a, permutation_p(&d, 42));
        assert!(a < 0.01, "{a}");
        let null: Vec<f64> = (0..22)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert!(permutation_p(&null, 3) > 0.5);
    }
}
