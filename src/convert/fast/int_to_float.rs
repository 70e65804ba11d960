//! Integer to `f32`/`f64`, nearest-even: Rust's `as`, which rounds once, in `i32` lanes
//! where the values fit; and integer to the narrower float formats (float16, bfloat16, …),
//! every mode, through exact `f64` words and the `f64` narrowing kernels, except float16
//! and bfloat16 nearest-even where the hardware converts in registers (F16C for 16- and
//! 32-bit integers to float16, AVX-512 DQ for 64-bit ones to both).

use super::int_to_int::{value_i32, value_i64};
use crate::convert::blocks::by_blocks;
use crate::number::layout::{BFLOAT16, FLOAT16, FloatLayout, IntLayout};
use crate::number::storage::{Word, Words};
use crate::number::{OutOfRange, Rounding};

/// Integer to `f32`/`f64` (by target word width), nearest-even: Rust's integer-to-float
/// `as` rounds once, to nearest-even. One loop per case (not a `match` per element, which
/// keeps the loop scalar), and an `i32` source where the values fit one: x86 converts `i32`
/// lanes (`vcvtdq2ps`/`vcvtdq2pd`) but not `i64` ones. `false` (nothing done) for 8-bit
/// sources, which are declined.
#[inline(always)]
pub(super) fn int_to_hw_float<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    sl: IntLayout,
) -> bool {
    macro_rules! each {
        (|$b:ident| $e:expr) => {
            crate::arch::vectorized(
                #[inline(always)]
                // `move`: the invariants are copied into the closure, not read through
                // references that LLVM cannot tell from `dst` (which keeps a loop scalar).
                move || {
                    for (s, d) in src.iter().zip(dst.iter_mut()) {
                        let $b = s.to_u64();
                        *d = DW::from_u64($e);
                    }
                },
            )
        };
    }
    let to_f64 = DW::BITS == 64;
    let signed = sl.signed;
    // Sources fill their words (`select`), so the width tests are on `SW::BITS`, constants:
    // each source word compiles only the loops it can reach (no `uint64` loop for 32-bit
    // words, no `i32` one for 64-bit words). 8-bit sources are declined: the `Caster`
    // converts every one by its 256-entry table.
    if const { SW::BITS == 8 } {
        return false;
    }
    if const { SW::BITS <= 16 } || (const { SW::BITS == 32 } && signed) {
        if to_f64 {
            each!(|b| (value_i32(b as u32, 32 - SW::BITS.min(32), signed) as f64).to_bits());
        } else {
            each!(|b| u64::from(
                (value_i32(b as u32, 32 - SW::BITS.min(32), signed) as f32).to_bits()
            ));
        }
    } else if const { SW::BITS == 64 } && !signed {
        if to_f64 {
            each!(|b| (b as f64).to_bits());
        } else {
            each!(|b| u64::from((b as f32).to_bits()));
        }
    } else if to_f64 {
        each!(|b| (value_i64(b, 64 - SW::BITS, signed) as f64).to_bits());
    } else {
        each!(|b| u64::from((value_i64(b, 64 - SW::BITS, signed) as f32).to_bits()));
    }
    true
}

/// Elements per step of [`int_to_narrow`]: the `f64` words of a step (8 KiB) stay in the
/// L1 cache between the conversion that writes them and the narrowing that reads them.
const STEP: usize = 1024;

/// Integer (16 to 64 bits) to a float format narrower than `f32` (float16, bfloat16, the
/// float8 formats) or to `f32` in a directed mode, any rounding mode and rule: each step
/// converted to `f64` words on the stack ([`ints_to_f64`]) and narrowed from there by the
/// `f64` kernels (`float_narrow::narrow`, the very instance `f64 -> l` runs). The `f64`
/// holds the integer exactly, or (beyond `2^53`) a number that every rounding mode rounds
/// to `l` as it rounds the integer (see [`sticky_f64`]), so the one rounding into `l` is
/// the reference's, and the overflow test (after rounding) is the same too. Returns how
/// many elements are done, a prefix (as `narrow`: up to a block it declines).
#[inline(always)]
pub(super) fn int_to_narrow<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    sl: IntLayout,
    mode: Rounding,
    oor: OutOfRange,
    l: FloatLayout,
) -> usize {
    // 16- and 32-bit integers to float16, nearest-even: in registers by F16C, no `f64`.
    if const { DW::BITS == 16 && (SW::BITS == 16 || SW::BITS == 32) }
        && mode == Rounding::NearestEven
        && l == FLOAT16
        && let Some(hw) = crate::arch::F16c::detect()
    {
        return to_f16_by_f32(hw, src, dst, sl.signed, oor == OutOfRange::Clamp);
    }
    // 64-bit integers to float16 and bfloat16, nearest-even, at the AVX-512 level: in
    // registers too, through `f64` stand-ins rounded to odd (AVX-512 DQ's conversions).
    if const { DW::BITS == 16 && SW::BITS == 64 }
        && mode == Rounding::NearestEven
        && crate::arch::has_avx512()
        && let (Some(s), Some(d)) = (u64::of(SW::words(src)), u16::of_mut(DW::words_mut(dst)))
    {
        if l == BFLOAT16 && crate::arch::has_avx512_bf16() {
            // Never declined (see `arch::int64_to_bf16`); by blocks for their order.
            return by_blocks(
                s,
                d,
                #[inline(always)]
                |s, d| {
                    if sl.signed {
                        crate::arch::int64_to_bf16::<true>(s, d)
                    } else {
                        crate::arch::int64_to_bf16::<false>(s, d)
                    }
                },
            );
        } else if l == FLOAT16
            && let Some(hw) = crate::arch::F16c::detect()
        {
            let limit = crate::convert::narrow::nearest_even_limit(
                FLOAT16,
                false,
                oor == OutOfRange::Clamp,
            ) as u32;
            return by_blocks(
                s,
                d,
                #[inline(always)]
                |s, d| {
                    let done = if sl.signed {
                        hw.f16_from_int64::<true>(s, d, limit)
                    } else {
                        hw.f16_from_int64::<false>(s, d, limit)
                    };
                    done == Some(true)
                },
            );
        }
    }
    let mut buf = [0u64; STEP];
    // Every value of `l` is below `2^(2^exponent_bits - bias)`, and from there every value
    // overflows in every mode: with that at most `2^30`, 64-bit sources are clamped to
    // `±(2^31 - 1)`, which overflows in every mode as the values beyond do (and so rounds,
    // clamps or fails as they do), and are then converted as `i32` lanes.
    let small = (1i64 << l.exponent_bits.min(62)) - i64::from(l.bias) <= 30;
    let mut done = 0;
    for (s, d) in src.chunks(STEP).zip(dst.chunks_mut(STEP)) {
        let b = &mut buf[..s.len().min(d.len())];
        ints_to_f64(s, b, sl, small);
        let k = super::float_narrow::narrow(b, d, mode, oor, l);
        done += k;
        if k < b.len() {
            break;
        }
    }
    done
}

/// 16- and 32-bit integers to float16, nearest-even, block by block, by
/// [`F16c::f16_from_int`](crate::arch::F16c::f16_from_int): each integer converted to
/// `f32` and that to float16, in registers, which is the one correctly rounded conversion
/// (the proof is there); a block holding a value the nearest-even kernels leave to the
/// reference path (an overflow under the error rule: `|x| >= 65520`) is declined, as
/// `f32 -> float16` declines it. Returns how many elements are done, a prefix.
#[inline(always)]
fn to_f16_by_f32<SW: Word, DW: Word>(
    hw: crate::arch::F16c,
    src: &[SW],
    dst: &mut [DW],
    signed: bool,
    clamp: bool,
) -> usize {
    let limit = crate::convert::narrow::nearest_even_limit(FLOAT16, false, clamp) as u32;
    by_blocks(
        src,
        dst,
        #[inline(always)]
        |s, d| match (SW::words(s), u16::of_mut(DW::words_mut(d))) {
            (Words::U32(s), Some(d)) if signed => hw.f16_from_int::<u32, true>(s, d, limit),
            (Words::U32(s), Some(d)) => hw.f16_from_int::<u32, false>(s, d, limit),
            (Words::U16(s), Some(d)) if signed => hw.f16_from_int::<u16, true>(s, d, limit),
            (Words::U16(s), Some(d)) => hw.f16_from_int::<u16, false>(s, d, limit),
            _ => false,
        },
    )
}

/// The `f64` bits of each integer of `src` (sign-extended from `sl`, which fills the
/// words), or beyond `2^53` of its [`sticky_f64`] stand-in, into `dst` (same length).
/// With `small` (see [`int_to_narrow`]), 64-bit values are first clamped to
/// `±(2^31 - 1)`. Not generic over the target: one instance per source width and level.
#[inline(never)]
fn ints_to_f64<SW: Word>(src: &[SW], dst: &mut [u64], sl: IntLayout, small: bool) {
    crate::arch::vectorized_wide_or(
        (src, dst),
        #[inline(always)]
        move |(s, d)| ints_to_f64_in(s, d, sl.signed, small),
        move |(s, d)| ints_to_f64_in(s, d, sl.signed, small),
    );
}

#[inline(always)]
fn ints_to_f64_in<SW: Word>(src: &[SW], dst: &mut [u64], signed: bool, small: bool) {
    const I32_MAX: i64 = i32::MAX as i64;
    macro_rules! each {
        (|$b:ident| $e:expr) => {
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let $b = s.to_u64();
                *d = $e;
            }
        };
    }
    if const { SW::BITS <= 16 } || (const { SW::BITS == 32 } && signed) {
        // `i32` lanes (`vcvtdq2pd`), exact.
        each!(|b| (value_i32(b as u32, 32 - SW::BITS.min(32), signed) as f64).to_bits());
    } else if const { SW::BITS == 32 } {
        each!(|b| (b as u32 as f64).to_bits());
    } else if small && signed {
        // `i32` lanes again (`vcvtdq2pd`; x86 has no `i64` one before AVX-512 DQ).
        each!(|b| ((b as i64).clamp(-I32_MAX, I32_MAX) as i32 as f64).to_bits());
    } else if small {
        each!(|b| (b.min(I32_MAX as u64) as i32 as f64).to_bits());
    } else if signed {
        each!(|b| {
            let x = b as i64;
            let m = sticky_f64(x.unsigned_abs());
            (if x < 0 { -m } else { m }).to_bits()
        });
    } else {
        each!(|b| sticky_f64(b).to_bits());
    }
}

/// A magnitude `m` as an `f64`: exact below `2^53`; from there, `m` with its bits 0-10
/// OR-ed into bit 11, which leaves 53 significant bits (11 to 63), exact too. That stand-in
/// rounds to every format of at most 41 significant bits (`f32` and narrower) as `m` does,
/// in every mode: with `m`'s top bit at `t >= 53`, such a format keeps bits `t - 40` and
/// above, its rounding bit is at `t - 41 >= 12`, untouched, and below it the stand-in has a
/// nonzero bit exactly when `m` has one (bit 11 or lower). Which is all a rounding reads:
/// the kept bits, the rounding bit, and whether anything below is nonzero (round to odd at
/// bit 11, in effect). The rounded values being the same, so is the range test, which is
/// on the rounded value.
#[inline(always)]
fn sticky_f64(m: u64) -> f64 {
    let collapsed = (m & !0x7ff) | (u64::from(m & 0x7ff != 0) << 11);
    exact_f64(if m >> 53 != 0 { collapsed } else { m })
}

/// `m` as an `f64` when it has at most 53 significant bits (so the result is exact): its
/// two 32-bit halves placed in the mantissas of `2^84` and `2^52`, those subtracted (both
/// exact), and the halves added (exact, as the sum `m` is an `f64`). Bit operations and
/// two `f64` subtractions and an addition, which every level vectorizes; `m as f64` is a
/// scalar call per lane on x86 without AVX-512 DQ (`i64 -> bfloat16` took 1.9-2.3 ns an
/// element with it, in cache).
#[inline(always)]
fn exact_f64(m: u64) -> f64 {
    const HI: u64 = 0x4530_0000_0000_0000; // 2^84
    const LO: u64 = 0x4330_0000_0000_0000; // 2^52
    let hi = f64::from_bits(HI | (m >> 32)) - f64::from_bits(HI);
    let lo = f64::from_bits(LO | (m & 0xffff_ffff)) - f64::from_bits(LO);
    hi + lo
}

#[cfg(test)]
mod tests {
    //! [`int_to_narrow`] through `cast_slice` (so through `select` and `run`) at every level
    //! against the reference path: every 16-bit integer, and 32/64-bit integers around
    //! every rounding boundary of the targets (ties, and one either side), the ends of
    //! their ranges and of the types, in every mode and rule, from unaligned starts.
    use crate::dtype::{Float8E4M3, Float8E5M2, Real};
    use crate::number::xorshift::xorshift64;
    use crate::number::{OutOfRange, Rounding};

    const MODES: [Rounding; 5] = Rounding::ALL;

    /// `src` (and its slices from unaligned starts, into unaligned outputs, of odd
    /// lengths) cast to `D` at every level against the reference, in `modes`.
    fn every_level<S: Real, D: Real>(src: &[S], modes: &[Rounding]) {
        let n = src.len();
        let cuts = [(0, 0, n), (1, 3, n - 1), (5, 1, n - 40), (3, 0, 37)];
        let rules = [OutOfRange::Error, OutOfRange::Clamp];
        crate::convert::fast::check::every_level::<S, D>(src, &cuts, modes, &rules);
    }

    /// Magnitudes at each bit position `t` around the rounding boundaries of formats of
    /// `p` significant bits (the rounding bit at `t - p`): a tie, one either side of it,
    /// the bit just below it alone, kept bits only, random low bits; and the given ends.
    fn boundaries(bits: u32, ends: &[u64]) -> Vec<u64> {
        let mut next = xorshift64(0x2545_f491_4f6c_dd1d ^ u64::from(bits));
        let mut out = ends.to_vec();
        for t in 0..bits {
            for p in [2u32, 4, 8, 11, 24] {
                let top = 1u64 << t;
                let mask = top | (top - 1);
                let kept = (next() & mask) | top;
                let Some(r) = t.checked_sub(p) else {
                    out.push(kept);
                    continue;
                };
                let kept = kept & !((1u64 << (r + 1)) - 1);
                let tie = 1u64 << r;
                for low in [
                    0,
                    tie,
                    tie - 1,
                    tie + 1,
                    1,
                    next() & (tie - 1),
                    tie | (next() & (tie - 1)),
                ] {
                    out.push((kept | low) & mask);
                }
            }
        }
        out
    }

    /// The magnitudes as values of both signs, each kind in runs (a block of only
    /// in-range values for the fast kernels, and of out-of-range ones), interleaved.
    fn signed(m: &[u64]) -> Vec<i64> {
        m.iter()
            .flat_map(|&v| [v as i64, (v as i64).wrapping_neg()])
            .collect()
    }

    fn ends() -> Vec<u64> {
        let mut e = vec![0, 1, 2, 3, 65504, 65505, 65519, 65520, 65521, 65535, 65536];
        for b in [24u32, 31, 32, 53, 63, 64] {
            let p = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
            e.extend([p - 2, p - 1, p, p.wrapping_add(1), p.wrapping_add(2)]);
        }
        // float8 E4M3 and E5M2 largest finite values and the midpoints past them.
        e.extend([448, 464, 480, 57344, 61440]);
        e
    }

    #[test]
    fn sixteen_bit_integers_all() {
        let i: Vec<i16> = (i16::MIN..=i16::MAX).collect();
        let u: Vec<u16> = (0..=u16::MAX).collect();
        every_level::<i16, half::f16>(&i, &MODES);
        every_level::<u16, half::f16>(&u, &MODES);
        every_level::<i16, half::bf16>(&i, &MODES);
        every_level::<u16, half::bf16>(&u, &MODES);
        every_level::<i16, Float8E4M3>(&i, &[Rounding::NearestEven]);
        every_level::<u16, Float8E5M2>(&u, &[Rounding::TowardsZero]);
    }

    #[test]
    fn wide_integers_around_the_boundaries() {
        let m32 = boundaries(32, &ends());
        let m64 = boundaries(64, &ends());
        // In-range runs for the fast kernels: the magnitudes below float16's range first.
        let small32: Vec<u64> = m32.iter().copied().filter(|&v| v < 65504).collect();
        let small64: Vec<u64> = m64.iter().copied().filter(|&v| v < 65504).collect();
        for ms in [&small32, &m32] {
            let i32s: Vec<i32> = signed(ms).iter().map(|&v| v as i32).collect();
            let u32s: Vec<u32> = ms.iter().map(|&v| v as u32).collect();
            every_level::<i32, half::f16>(&i32s, &MODES);
            every_level::<u32, half::f16>(&u32s, &MODES);
            every_level::<i32, half::bf16>(&i32s, &MODES);
            every_level::<u32, half::bf16>(&u32s, &MODES);
            every_level::<i32, Float8E4M3>(&i32s, &[Rounding::NearestEven]);
            every_level::<u32, f32>(&u32s, &[Rounding::TowardsNegative]);
        }
        for ms in [&small64, &m64] {
            let i64s = signed(ms);
            every_level::<i64, half::f16>(&i64s, &MODES);
            every_level::<u64, half::f16>(ms, &MODES);
            every_level::<i64, half::bf16>(&i64s, &MODES);
            every_level::<u64, half::bf16>(ms, &MODES);
            every_level::<i64, f32>(&i64s, &[Rounding::TowardsZero, Rounding::NearestAway]);
            every_level::<u64, Float8E5M2>(ms, &[Rounding::NearestEven]);
        }
    }

    /// Random integers of every magnitude (a random word shifted right by a random amount,
    /// either sign), the 64-bit ones near `2^53` (`±k`, `k < 64`) and the ends of the
    /// types, and the 32- and 16-bit ones below float16's overflow (so that the error
    /// rule's blocks are taken by the fast kernels, not only declined), to float16 and
    /// bfloat16.
    #[test]
    fn random_integers_of_every_magnitude() {
        let mut next = xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut m: Vec<u64> = (0..3000).map(|_| next() >> (next() % 64)).collect();
        for k in 0..64 {
            m.extend([(1u64 << 53) + k, (1u64 << 53) - k, (1u64 << 54) + k]);
        }
        m.extend([i64::MAX as u64, 1u64 << 63, u64::MAX, u64::MAX - 1]);
        let i64s: Vec<i64> = m
            .iter()
            .map(|&v| {
                if next() & 1 == 0 {
                    v as i64
                } else {
                    (v as i64).wrapping_neg()
                }
            })
            .chain([i64::MIN, i64::MAX, i64::MIN + 1])
            .collect();
        let nearest = [Rounding::NearestEven];
        every_level::<i64, half::bf16>(&i64s, &MODES);
        every_level::<u64, half::bf16>(&m, &MODES);
        every_level::<i64, half::f16>(&i64s, &nearest);
        every_level::<u64, half::f16>(&m, &nearest);
        let below: Vec<i64> = i64s.iter().map(|&v| v % 65520).collect();
        every_level::<i64, half::f16>(&below, &nearest);
        let i32s: Vec<i32> = i64s.iter().map(|&v| v as i32).collect();
        let u32s: Vec<u32> = m.iter().map(|&v| v as u32).collect();
        every_level::<i32, half::f16>(&i32s, &nearest);
        every_level::<u32, half::f16>(&u32s, &nearest);
        let i32_below: Vec<i32> = i32s.iter().map(|&v| v % 65520).collect();
        let u32_below: Vec<u32> = u32s.iter().map(|&v| v % 65520).collect();
        every_level::<i32, half::f16>(&i32_below, &nearest);
        every_level::<u32, half::f16>(&u32_below, &nearest);
        // Every tie of float16 from 2048 up (spacing 2 and more), and one either side,
        // up to the overflow threshold 65520 and past it.
        let ties: Vec<i32> = (11..16)
            .flat_map(|e| {
                let half_ulp = 1i32 << (e - 11);
                (0..1024).flat_map(move |k| {
                    let t = (1i32 << e) + (2 * k + 1) * half_ulp;
                    [t - 1, t, t + 1, -t]
                })
            })
            .chain([
                65504,
                65519,
                65520,
                65521,
                -65520,
                65536,
                1 << 24,
                (1 << 24) + 1,
            ])
            .collect();
        every_level::<i32, half::f16>(&ties, &nearest);
        let u_ties: Vec<u32> = ties.iter().map(|&v| v.unsigned_abs()).collect();
        every_level::<u32, half::f16>(&u_ties, &nearest);
    }

    /// Values beyond `2^53` whose `f64` conversion alone would round twice: a bfloat16 tie
    /// plus one (`f64` drops the one and leaves the tie, which goes to even, down), and
    /// the like below a tie.
    #[test]
    fn sixty_four_bit_double_rounding() {
        let mut v = Vec::new();
        for t in 54..64u32 {
            for p in [8u32, 11, 24] {
                let tie = 1u64 << (t - p);
                let base = 1u64 << t;
                v.extend([
                    base + tie + 1,
                    base + tie - 1,
                    base + 3 * tie + 1,
                    base + 3 * tie - 1,
                ]);
            }
        }
        let i: Vec<i64> = signed(&v);
        every_level::<u64, half::bf16>(&v, &MODES);
        every_level::<i64, half::bf16>(&i, &MODES);
        every_level::<u64, f32>(&v, &MODES[1..]);
        every_level::<i64, f32>(&i, &MODES[1..]);
    }
}
