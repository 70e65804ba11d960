//! The least and greatest finite `f64` of a slice, in AVX2 and AVX-512: the intrinsic
//! twins of `codec::scale_offset::finite_range::range_f64` (the finite range the planner
//! reads a whole archive for).
//!
//! Intrinsics rather than the portable loop built for each level: LLVM's vectorizer builds
//! that loop's two folds with shuffles between lanes (about 3.7 instructions an element at
//! AVX2), and it ran at 0.55 of a read-only pass over a 52 MB array. Here each vector takes
//! one load, two compares, two blends, one `vminpd` and one `vmaxpd`.

/// `(least, greatest)` finite value of the `f64` bits `codes`: NaNs and infinities
/// skipped, `(+Inf, -Inf)` when nothing is finite, and of `-0.0` and `+0.0` whichever the
/// folds keep (the caller's keys make them equal). `None` when the CPU has no AVX2 (nothing
/// read; see [`has_avx2`](super::has_avx2)).
pub(crate) fn f64_range(codes: &[u64]) -> Option<(f64, f64)> {
    #[cfg(target_arch = "x86_64")]
    {
        if super::has_avx512() {
            // SAFETY: the CPU has AVX-512 F (the `Isa::Avx512` level, checked just above).
            return Some(unsafe { kernels::range_avx512(codes) });
        }
        if super::has_avx2() {
            // SAFETY: the CPU has AVX2 (checked just above).
            return Some(unsafe { kernels::range_avx2(codes) });
        }
    }
    let _ = codes;
    None
}

/// The portable fold of one element into `(lo, hi)`, as the vectors fold each lane:
/// `-Inf` cannot lower `lo` nor `+Inf` raise `hi`, and a NaN compares below and above
/// nothing.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn fold((lo, hi): (f64, f64), v: f64) -> (f64, f64) {
    let a = if v == f64::NEG_INFINITY {
        f64::INFINITY
    } else {
        v
    };
    let b = if v == f64::INFINITY {
        f64::NEG_INFINITY
    } else {
        v
    };
    (if a < lo { a } else { lo }, if b > hi { b } else { hi })
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use super::fold;
    use std::arch::x86_64::*;

    /// The ends of the lanes of `lo` and `hi` (`N` lanes each), then of `rest`, by [`fold`].
    fn reduce<const N: usize>(lo: [f64; N], hi: [f64; N], rest: &[u64]) -> (f64, f64) {
        let ends = lo
            .into_iter()
            .zip(hi)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |r, (l, h)| {
                (fold(r, l).0, fold(r, h).1)
            });
        rest.iter().fold(ends, |r, &w| fold(r, f64::from_bits(w)))
    }

    /// # Safety
    /// The CPU must have AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn range_avx512(codes: &[u64]) -> (f64, f64) {
        let (inf, ninf) = (
            _mm512_set1_pd(f64::INFINITY),
            _mm512_set1_pd(f64::NEG_INFINITY),
        );
        // Four vectors a step, each its own pair of folds: `vminpd`'s latency is hidden.
        let (mut lo, mut hi) = ([inf; 4], [ninf; 4]);
        let (steps, rest) = codes.as_chunks::<32>();
        for step in steps {
            for (k, eight) in step.as_chunks::<8>().0.iter().enumerate() {
                // SAFETY: `eight` is 64 readable bytes; AVX-512 F is the caller's guarantee.
                let v = unsafe { _mm512_loadu_pd(eight.as_ptr().cast()) };
                // `-Inf` as `+Inf` for the least, `+Inf` as `-Inf` for the greatest. `vminpd`
                // and `vmaxpd` return their second operand, the fold so far, when the
                // first is NaN.
                let a = _mm512_mask_blend_pd(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(v, ninf), v, inf);
                let b = _mm512_mask_blend_pd(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(v, inf), v, ninf);
                lo[k] = _mm512_min_pd(a, lo[k]);
                hi[k] = _mm512_max_pd(b, hi[k]);
            }
        }
        let lanes = |v: [__m512d; 4]| -> [f64; 32] {
            // SAFETY: four 64-byte vectors are the 256 bytes of 32 `f64`.
            unsafe { std::mem::transmute(v) }
        };
        reduce(lanes(lo), lanes(hi), rest)
    }

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn range_avx2(codes: &[u64]) -> (f64, f64) {
        let (inf, ninf) = (
            _mm256_set1_pd(f64::INFINITY),
            _mm256_set1_pd(f64::NEG_INFINITY),
        );
        let sign = _mm256_set1_pd(-0.0);
        let (mut lo, mut hi) = ([inf; 4], [ninf; 4]);
        let (steps, rest) = codes.as_chunks::<16>();
        for step in steps {
            for (k, four) in step.as_chunks::<4>().0.iter().enumerate() {
                // SAFETY: `four` is 32 readable bytes; AVX2 is the caller's guarantee.
                let v = unsafe { _mm256_loadu_pd(four.as_ptr().cast()) };
                // As in `range_avx512`, an infinity's sign flipped by an `and` of the
                // compare's mask and an `xor` (`vblendvpd` takes 2-3 micro-ops on Intel).
                let flip = |m: __m256d| _mm256_xor_pd(v, _mm256_and_pd(m, sign));
                let a = flip(_mm256_cmp_pd::<_CMP_EQ_OQ>(v, ninf));
                let b = flip(_mm256_cmp_pd::<_CMP_EQ_OQ>(v, inf));
                lo[k] = _mm256_min_pd(a, lo[k]);
                hi[k] = _mm256_max_pd(b, hi[k]);
            }
        }
        let lanes = |v: [__m256d; 4]| -> [f64; 16] {
            // SAFETY: four 32-byte vectors are the 128 bytes of 16 `f64`.
            unsafe { std::mem::transmute(v) }
        };
        reduce(lanes(lo), lanes(hi), rest)
    }
}

#[cfg(test)]
mod tests {
    use super::{f64_range, fold};
    use crate::isa::{Isa, with_max_isa};

    /// Every level gives the portable fold's ends, bit for bit, on slices with NaNs (both
    /// signs, payloads), infinities, signed zeros and subnormals, of every length up to a
    /// few steps and from every start, on short slices dense with NaNs and infinities, and
    /// on slices with nothing finite.
    #[test]
    fn every_level_is_the_fold() {
        let specials = [
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::MIN_POSITIVE / 4.0,
            -f64::MAX,
            f64::MAX,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let codes: Vec<u64> = (0..300)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 5 == 0 {
                    specials[(x % specials.len() as u64) as usize].to_bits()
                } else {
                    (((x >> 11) as f64) * if x & 1 == 0 { 1e-3 } else { -7.5 }).to_bits()
                }
            })
            .collect();
        let nothing = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -f64::NAN].map(f64::to_bits);
        let nothing: Vec<u64> = nothing.iter().copied().cycle().take(70).collect();
        let want = |s: &[u64]| {
            s.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |r, &w| {
                fold(r, f64::from_bits(w))
            })
        };
        // Zeros compare equal: the ends are compared as values, and non-zero ends by bits.
        let same = |g: (f64, f64), w: (f64, f64)| {
            let eq = |g: f64, w: f64| {
                if w == 0.0 {
                    g == 0.0
                } else {
                    g.to_bits() == w.to_bits()
                }
            };
            eq(g.0, w.0) && eq(g.1, w.1)
        };
        for level in Isa::available() {
            for start in 0..9 {
                for end in (start..codes.len()).step_by(7).chain([codes.len()]) {
                    let s = &codes[start..end];
                    let got = with_max_isa(level, || f64_range(s));
                    match got {
                        Some(g) => assert!(same(g, want(s)), "{level:?} {start}..{end}: {g:?}"),
                        None => assert_eq!(level, Isa::Portable),
                    }
                }
            }
            // Dense specials: a NaN or an infinity after a lane's extreme must not lose it.
            let mut y = 0x2545_f491_4f6c_dd1du64;
            for _ in 0..400 {
                let mut next = || {
                    y ^= y << 13;
                    y ^= y >> 7;
                    y ^= y << 17;
                    y
                };
                let n = (next() % 140) as usize;
                let s: Vec<u64> = (0..n)
                    .map(|_| {
                        let r = next();
                        if r % 5 < 2 {
                            specials[(r >> 8) as usize % 5].to_bits()
                        } else {
                            ((r >> 40) as f64 - 8e6).to_bits()
                        }
                    })
                    .collect();
                if let Some(g) = with_max_isa(level, || f64_range(&s)) {
                    assert!(same(g, want(&s)), "{level:?} dense {n}: {g:?}");
                }
            }
            if let Some(g) = with_max_isa(level, || f64_range(&nothing)) {
                assert_eq!(g, (f64::INFINITY, f64::NEG_INFINITY), "{level:?}");
            }
        }
    }
}
