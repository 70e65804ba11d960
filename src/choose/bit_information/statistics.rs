//! The statistics of counted pairs: each bit's mutual information from its 2×2 joint
//! counts, and BitInformation.jl's binomial significance threshold.

/// Joint bit counts over pairs `(a, b)` of neighbours: per bit position `p` (0 = least
/// significant), how often `a` has it, `b` has it, and both have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PairCounts {
    pub(super) pairs: u64,
    pub(super) a: [u64; 64],
    pub(super) b: [u64; 64],
    pub(super) both: [u64; 64],
}

impl PairCounts {
    pub(super) fn new() -> Self {
        PairCounts {
            pairs: 0,
            a: [0; 64],
            b: [0; 64],
            both: [0; 64],
        }
    }

    /// The mutual information of bit `p`, as BitInformation.jl sums it (columns outer).
    pub(super) fn mutual_information(&self, p: usize) -> f64 {
        let n = self.pairs as f64;
        let (n11, n1x, nx1) = (self.both[p], self.a[p], self.b[p]);
        let counts = [[self.pairs + n11 - n1x - nx1, nx1 - n11], [n1x - n11, n11]];
        let pr = counts.map(|row| row.map(|c| c as f64 / n));
        let px = [pr[0][0] + pr[0][1], pr[1][0] + pr[1][1]];
        let py = [pr[0][0] + pr[1][0], pr[0][1] + pr[1][1]];
        let mut m = 0.0;
        for k in 0..2 {
            for j in 0..2 {
                let p = pr[j][k];
                if p > 0.0 {
                    m += p * (p / px[j] / py[k]).ln();
                }
            }
        }
        m / std::f64::consts::LN_2
    }
}

/// BitInformation.jl's `binom_free_entropy(n, c)`: `1 - H(p)` with
/// `p = min(1, 0.5 + z / (2√n))`, `z` the standard normal quantile of `1 - (1 - c) / 2`.
pub fn free_entropy(n: u64, confidence: f64) -> f64 {
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let p = (0.5 + z / (2.0 * (n as f64).sqrt())).min(1.0);
    let h = |x: f64| if x > 0.0 { -x * x.log2() } else { 0.0 };
    1.0 - (h(p) + h(1.0 - p))
}

/// The standard normal quantile of `p` in (0.5, 1), by bisection on [`normal_cdf`].
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `Φ(x) = (1 + erf(x / √2)) / 2` for `x >= 0`, with
/// `erf(y) = 2/√π e^(-y²) Σ_n (2y²)^n y / (1·3·…·(2n+1))`, a series of positive terms
/// (no cancellation), accurate to a few ulps of `erf` over the range used.
fn normal_cdf(x: f64) -> f64 {
    let y = x / std::f64::consts::SQRT_2;
    let (mut term, mut sum) = (y, y);
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * y * y / (2.0 * n + 1.0);
        sum += term;
    }
    let erf = 2.0 / std::f64::consts::PI.sqrt() * (-y * y).exp() * sum;
    0.5 * (1.0 + erf.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_and_free_entropy_match_bitinformation_jl_docs() {
        // quantile(Normal(), 0.995) = 2.5758293035489004
        assert!((normal_quantile(0.995) - 2.575_829_303_548_900_4).abs() < 1e-12);
        // binom_confidence(1000, 0.95) = 0.5309897516152281 (its docstring)
        let z = normal_quantile(0.975);
        let p = 0.5 + z / (2.0 * 1000f64.sqrt());
        assert!((p - 0.530_989_751_615_228_1).abs() < 1e-12);
    }
}
