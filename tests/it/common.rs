//! Test support shared by the conversion tests.
//!
//! - [`reference`]: an independent description of every built-in real format, written from
//!   the data-type READMEs, an exact decoder, and an exact rounding reference built on it.
//! - [`types`]: a visitor over the 26 built-in real types.
//! - [`check`]: compares `zquant::{cast, cast_slice}` with the reference.
#![allow(dead_code)]

pub mod check;
pub mod reference;
pub mod types;

/// A small seeded xorshift64* generator (deterministic, no dependency).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value; 0 is remapped).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + self.next_u64() % (span + 1)
    }

    /// A random boolean.
    pub fn coin(&mut self) -> bool {
        self.next_u64() >> 63 == 1
    }
}

/// Marsaglia's xorshift64 (13, 7, 17), for tests that want a fixed stream from a literal
/// seed: `XorShift(7).next()`. The seed must not be 0.
#[derive(Clone, Debug)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next state, which is also the output.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `ZQUANT_SAMPLES` if set, else `default`.
pub fn samples(default: usize) -> usize {
    match std::env::var("ZQUANT_SAMPLES") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("ZQUANT_SAMPLES must be a count, got {s:?}")),
        Err(_) => default,
    }
}

/// `ZQUANT_SEED` if set, else a fixed seed.
pub fn seed() -> u64 {
    match std::env::var("ZQUANT_SEED") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("ZQUANT_SEED must be an integer, got {s:?}")),
        Err(_) => 0x5eed_2024_c0de_0001,
    }
}
