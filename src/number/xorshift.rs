//! Marsaglia's xorshift generators: the unit tests' reproducible source of varied words.
//!
//! Tests need many varied inputs that are the same on every run and every machine, not
//! random ones; two shift triples cover them. Compiled for tests only.

/// xorshift64 with the shifts (13, 7, 17): each call gives the next state, never 0 for a
/// nonzero seed.
pub(crate) fn xorshift64(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// xorshift32 with the shifts (13, 17, 5): each call gives the next state, never 0 for a
/// nonzero seed.
pub(crate) fn xorshift32(mut x: u32) -> impl FnMut() -> u32 {
    move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    }
}

/// A 32-bit word as a fraction of `u32::MAX`, in `[0, 1]`.
pub(crate) fn unit(x: u32) -> f64 {
    f64::from(x) / f64::from(u32::MAX)
}
