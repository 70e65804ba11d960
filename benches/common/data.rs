//! Seeded synthetic data shared by `examples/throughput.rs` and the divan benches.
//!
//! Every input is derived from one "smooth field plus noise": a flattened 2-D grid of a few
//! low-frequency waves with bounded pseudo-random noise on top, normalised into `[0, 1]` and
//! then mapped onto the value range a case needs. It looks like gridded geoscience data (the
//! kind these codecs quantise) rather than uniform noise, and it is reproducible: the same
//! seed and length give the same values on every machine.

#![allow(dead_code)]

/// SplitMix64: tiny, seedable, good enough for benchmark data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Row length of the grid the field is laid out on.
const ROW: usize = 1024;
/// Sum of the wave amplitudes below.
const WAVES: f64 = 2.5;
/// Largest noise magnitude (Irwin-Hall of 4 uniforms, centred, times `NOISE`).
const NOISE: f64 = 0.05;

/// `n` values in `[0, 1]`: a smooth field plus noise, seeded.
pub fn unit_field(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let bound = WAVES + 2.0 * NOISE;
    (0..n)
        .map(|i| {
            let x = (i % ROW) as f64;
            let y = (i / ROW) as f64;
            let smooth =
                (x * 0.011).sin() + (y * 0.007 + 0.3).cos() + 0.5 * ((x + y) * 0.003).sin();
            let noise =
                (rng.next_f64() + rng.next_f64() + rng.next_f64() + rng.next_f64() - 2.0) * NOISE;
            ((smooth + noise) + bound) / (2.0 * bound)
        })
        .collect()
}

/// `unit` mapped linearly onto `[lo, hi]`.
pub fn scaled(unit: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    unit.iter().map(|t| lo + t * (hi - lo)).collect()
}

/// `unit` mapped onto `[lo, hi]`, as `f32`.
pub fn scaled_f32(unit: &[f64], lo: f64, hi: f64) -> Vec<f32> {
    unit.iter().map(|t| (lo + t * (hi - lo)) as f32).collect()
}

/// `unit` mapped onto `[lo, hi]` and rounded to the nearest integer, as `i64` (callers
/// narrow it; the range is theirs to keep in bounds).
pub fn scaled_int(unit: &[f64], lo: f64, hi: f64) -> Vec<i64> {
    unit.iter()
        .map(|t| (lo + t * (hi - lo)).round() as i64)
        .collect()
}

/// Replace every `every`-th element (from a seeded offset) with NaN: missing values.
pub fn with_nans(mut v: Vec<f64>, every: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let start = (rng.next_u64() % every as u64) as usize;
    for x in v.iter_mut().skip(start).step_by(every) {
        *x = f64::NAN;
    }
    v
}
