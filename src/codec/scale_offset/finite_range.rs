//! The finite extremes of a run of float codes: the kernel of [`super::range::FiniteRange`].

use crate::number::storage::Word;

/// The finite extremes of a run of float codes, as sign-magnitude keys (`-magnitude` for a
/// negative code, ±0 both 0): `(min, max)` over the codes whose magnitude
/// (`code & mag_mask`) is at most `max_mag`, `None` when there is none. Such a magnitude
/// test is the finite test of every signed float layout whose NaNs and infinities have
/// the largest magnitudes (IEEE, all-ones NaN, no NaN) — not of the `fnuz` types, whose NaN
/// is the negative zero. Keys of up to 32-bit codes are `i32` (eight lanes of AVX2), of
/// 64-bit codes `i64`; both are returned as `i64`.
#[inline(always)]
pub(crate) fn finite_key_range<W: Word>(
    codes: &[W],
    sign: u64,
    mag_mask: u64,
    max_mag: u64,
) -> Option<(i64, i64)> {
    // A constant test: each word width compiles only its own loops.
    if const { W::BITS <= 32 } {
        key_range_32(codes, sign as u32, mag_mask as u32, max_mag as u32)
    } else if (sign, mag_mask, max_mag) == (1 << 63, !(1 << 63), f64::MAX.to_bits()) {
        // IEEE binary64: the values themselves order as the keys do (AVX2 has `vminpd`,
        // not a 64-bit integer minimum).
        range_f64(codes)
    } else {
        key_range_64(codes, sign, mag_mask, max_mag)
    }
}

/// [`finite_key_range`] of IEEE binary64 codes, by the values (`±0` are equal there as
/// their keys are; NaN and ±Inf skipped by the magnitude test).
#[inline(always)]
fn range_f64<W: Word>(codes: &[W]) -> Option<(i64, i64)> {
    let key = |v: f64| {
        let b = v.to_bits();
        let m = (b & !(1 << 63)) as i64;
        if b >> 63 == 1 { -m } else { m }
    };
    // AVX2 and AVX-512 by intrinsics (`arch::f64_range`): LLVM builds the loop below with
    // shuffles between lanes.
    if let Some(c) = u64::of(W::words(codes))
        && let Some((lo, hi)) = crate::arch::f64_range(c)
    {
        return (lo <= hi).then(|| (key(lo), key(hi)));
    }
    const LANES: usize = 8;
    let max_mag = f64::MAX.to_bits();
    let vals = |w: W| -> (f64, f64) {
        let b = w.to_u64();
        let finite = b & !(1 << 63) <= max_mag;
        let v = f64::from_bits(b);
        (
            if finite { v } else { f64::INFINITY },
            if finite { v } else { f64::NEG_INFINITY },
        )
    };
    let (mut lo, mut hi) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
    let mut chunks = codes.chunks_exact(LANES);
    for c in &mut chunks {
        for l in 0..LANES {
            let (a, b) = vals(c[l]);
            // Plain comparisons (no NaN can be here): one `vminpd`/`vmaxpd` each.
            lo[l] = if a < lo[l] { a } else { lo[l] };
            hi[l] = if b > hi[l] { b } else { hi[l] };
        }
    }
    for &w in chunks.remainder() {
        let (a, b) = vals(w);
        lo[0] = if a < lo[0] { a } else { lo[0] };
        hi[0] = if b > hi[0] { b } else { hi[0] };
    }
    let lo = lo
        .into_iter()
        .fold(f64::INFINITY, |m, x| if x < m { x } else { m });
    let hi = hi
        .into_iter()
        .fold(f64::NEG_INFINITY, |m, x| if x > m { x } else { m });
    (lo <= hi).then(|| (key(lo), key(hi)))
}

macro_rules! key_range {
    ($name:ident, $u:ty, $i:ty) => {
        #[inline(always)]
        fn $name<W: Word>(codes: &[W], sign: $u, mag_mask: $u, max_mag: $u) -> Option<(i64, i64)> {
            const LANES: usize = 32 / std::mem::size_of::<$u>() * 2;
            // Branch-free: the key, or the neutral element of each fold when not finite.
            let keys = |w: W| -> ($i, $i) {
                let b = w.to_u64() as $u;
                let mag = b & mag_mask;
                let neg = <$i>::from(b & sign != 0);
                let k = (mag as $i ^ -neg) + neg;
                let finite = mag <= max_mag;
                (
                    if finite { k } else { <$i>::MAX },
                    if finite { k } else { <$i>::MIN },
                )
            };
            let (mut lo, mut hi) = ([<$i>::MAX; LANES], [<$i>::MIN; LANES]);
            let mut chunks = codes.chunks_exact(LANES);
            for c in &mut chunks {
                for l in 0..LANES {
                    let (a, b) = keys(c[l]);
                    lo[l] = lo[l].min(a);
                    hi[l] = hi[l].max(b);
                }
            }
            for &w in chunks.remainder() {
                let (a, b) = keys(w);
                lo[0] = lo[0].min(a);
                hi[0] = hi[0].max(b);
            }
            let lo = lo.into_iter().min().unwrap_or(<$i>::MAX);
            let hi = hi.into_iter().max().unwrap_or(<$i>::MIN);
            (lo <= hi).then_some((i64::from(lo), i64::from(hi)))
        }
    };
}
key_range!(key_range_32, u32, i32);
key_range!(key_range_64, u64, i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_key_range_skips_non_finite_codes() {
        let l = crate::number::layout::FLOAT32;
        let mut xs = vec![
            3.0f32,
            f32::NAN,
            -1.5,
            f32::INFINITY,
            -0.0,
            7.25,
            -f32::NAN,
            2.0,
        ];
        xs.extend((0..40).map(|i| i as f32 * 0.1 - 1.0));
        let codes: Vec<u32> = xs.iter().map(|x| x.to_bits()).collect();
        let (lo, hi) = finite_key_range(
            &codes,
            l.sign_bit(),
            l.magnitude_mask(),
            l.max_finite_bits(),
        )
        .expect("finite");
        assert_eq!(lo, -((-1.5f32).to_bits() as i64 & 0x7fff_ffff));
        assert_eq!(hi, 7.25f32.to_bits() as i64);
        let none = [f32::NAN.to_bits(), f32::INFINITY.to_bits()];
        assert_eq!(
            finite_key_range(&none, l.sign_bit(), l.magnitude_mask(), l.max_finite_bits()),
            None
        );
    }
}
