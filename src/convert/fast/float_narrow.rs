//! Float narrowing: `f32`/`f64` to a narrower float format by integer arithmetic on the
//! bits (`convert::narrow`), and `f64 -> f32` nearest-even by the hardware conversion.

use crate::convert::blocks::by_blocks;
use crate::number::layout::FloatLayout;
use crate::number::storage::Word;
use crate::number::{OutOfRange, Rounding};

#[inline(always)]
pub(super) fn narrow<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    mode: Rounding,
    oor: OutOfRange,
    l: FloatLayout,
) -> usize {
    // The other modes share one general kernel per width pair and level, the mode a loop
    // invariant, called per block (its AVX2 build is its own function). So do targets in
    // 32-bit words: `f64 -> f32` nearest-even is `F64ToF32`, so only a user's float format
    // narrower than `f32` but stored in 32 bits comes here, rare enough not to be worth
    // the nearest-even kernels' two builds per source width.
    if mode != Rounding::NearestEven || const { DW::BITS == 32 } {
        return crate::convert::narrow::any_mode(src, dst, mode, oor, l);
    }
    // Nearest-even, the default, has its own kernels at each level.
    crate::arch::vectorized_or(
        (src, dst),
        #[inline(always)]
        move |(src, dst)| nearest_even(src, dst, oor, l),
        move |(src, dst)| nearest_even(src, dst, oor, l),
    )
}

/// Nearest-even's kernels (inlined into each twin).
#[inline(always)]
fn nearest_even<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    oor: OutOfRange,
    l: FloatLayout,
) -> usize {
    let plan = crate::convert::narrow::plan(l, oor);
    crate::convert::narrow::nearest_even(src, dst, oor, l, plan)
}

/// [`f64_to_f32`] by blocks, with an AVX-512 build beside the AVX2 one: 8 conversions per
/// `vcvtpd2ps` instead of 4 for one more small loop (the only instance is `f64` words into
/// `f32` words), as the cast reads 8 bytes an element and is bound by its instructions
/// whenever the reads are fast.
#[inline(always)]
pub(super) fn f64_to_f32_blocks<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    clamp: bool,
) -> usize {
    crate::arch::vectorized_wide_or(
        (src, dst),
        #[inline(always)]
        move |(src, dst): (&[SW], &mut [DW])| {
            by_blocks(
                src,
                dst,
                #[inline(always)]
                |s, d| f64_to_f32(s, d, clamp),
            )
        },
        move |(src, dst): (&[SW], &mut [DW])| by_blocks(src, dst, |s, d| f64_to_f32(s, d, clamp)),
    )
}

/// `f64 -> f32`, nearest-even, by the hardware conversion. NaN (tested on the `f32`
/// lanes, where it stays NaN) becomes the canonical NaN. Without `clamp`, a block with an
/// infinite result is declined: an overflow, or an infinite input (which the reference
/// path converts to ±Inf too). Telling the two apart would need a test on the `f64` lanes
/// per element, for a case rare in data.
#[inline(always)]
fn f64_to_f32<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], clamp: bool) -> bool {
    const INF: u32 = 0x7f80_0000;
    let mut infinite = 0u32;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let y = f64::from_bits(s.to_u64()) as f32;
        let bits = y.to_bits();
        infinite |= u32::from(bits & 0x7fff_ffff == INF);
        let bits = if y.is_nan() { 0x7fc0_0000 } else { bits };
        *d = DW::from_u64(u64::from(bits));
    }
    // Under clamp an overflow goes to ±Inf, which is what the hardware produced.
    infinite == 0 || clamp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::level::{Isa, with_max_isa};
    use crate::convert::reference_words;
    use crate::dtype::Real;
    use crate::number::layout::Format;
    use crate::number::xorshift::xorshift64;

    /// `f32`/`f64` words around every target's range: tiny, subnormal in the targets,
    /// ties, large, and (unless `clean`) NaN, ±Inf and values that overflow.
    fn sources<SW: Word>(n: usize, clean: bool) -> Vec<SW> {
        let mut next = xorshift64(0x853c_49e6_748f_ea9b);
        (0..n)
            .map(|i| {
                let x = next();
                let m = 1.0 + (x >> 12) as f64 / (1u64 << 52) as f64;
                let e = ((x >> 3) % 40) as i32 - 30;
                let sign = if x & 1 == 0 { 1.0 } else { -1.0 };
                let v = match (i % 11, clean) {
                    (0, false) => f64::NAN,
                    (1, false) => f64::NEG_INFINITY,
                    (2, false) => 1e39,
                    (3, _) => sign * (1.0 + (i % 4) as f64 / 8.0),
                    _ => sign * m * 2f64.powi(e),
                };
                if SW::BITS == 64 {
                    SW::from_u64(v.to_bits())
                } else {
                    SW::from_u64(u64::from((v as f32).to_bits()))
                }
            })
            .collect()
    }

    /// Every level's kernel (the baseline twin included) against the reference path.
    fn check<SW: Word, D: Real>() {
        let Format::Float(l) = D::FORMAT else {
            unreachable!()
        };
        check_layout::<SW, <D as crate::number::storage::Plain>::Word>(l);
    }

    /// [`check`] for the format `l` stored in `DW` words.
    fn check_layout<SW: Word, DW: Word>(l: FloatLayout) {
        let sf = if SW::BITS == 64 {
            f64::FORMAT
        } else {
            f32::FORMAT
        };
        let modes = [
            Rounding::NearestEven,
            Rounding::TowardsZero,
            Rounding::TowardsPositive,
            Rounding::TowardsNegative,
            Rounding::NearestAway,
        ];
        for isa in Isa::available() {
            for clean in [true, false] {
                let words = sources::<SW>(1501, clean);
                let src = &words[1..];
                for mode in modes {
                    for oor in [OutOfRange::Clamp, OutOfRange::Error] {
                        let mut got = vec![DW::from_u64(0); src.len()];
                        let done = with_max_isa(isa, || narrow(src, &mut got, mode, oor, l));
                        let mut want = vec![DW::from_u64(0); done];
                        let ok = reference_words(
                            &src[..done],
                            &mut want,
                            sf,
                            Format::Float(l),
                            crate::number::CastOptions::new(mode, oor),
                            None,
                        );
                        let ctx = format!("{isa:?} {l:?} {mode:?} {oor:?} {clean}");
                        assert!(ok.is_ok(), "{ctx}: accepted a failing element");
                        assert!(got[..done] == want[..], "{ctx}");
                        if clean && oor == OutOfRange::Clamp {
                            assert_eq!(done, src.len(), "{ctx}");
                        }
                    }
                }
            }
        }
    }

    /// `f64 -> f32` by its own kernel ([`f64_to_f32_blocks`], the cast's fast path for
    /// nearest-even) at every level, under clamp and error, against the reference path.
    #[test]
    fn f64_to_f32_every_level_matches_the_reference() {
        for isa in Isa::available() {
            for clean in [true, false] {
                let words = sources::<u64>(1501, clean);
                let src = &words[1..];
                for oor in [OutOfRange::Clamp, OutOfRange::Error] {
                    let clamp = oor == OutOfRange::Clamp;
                    let mut got = vec![0u32; src.len()];
                    let done = with_max_isa(isa, || f64_to_f32_blocks(src, &mut got, clamp));
                    let mut want = vec![0u32; done];
                    let ok = reference_words(
                        &src[..done],
                        &mut want,
                        f64::FORMAT,
                        f32::FORMAT,
                        crate::number::CastOptions::new(Rounding::NearestEven, oor),
                        None,
                    );
                    let ctx = format!("{isa:?} {oor:?} {clean}");
                    assert!(ok.is_ok(), "{ctx}: accepted a failing element");
                    assert!(got[..done] == want[..], "{ctx}");
                    if clean || clamp {
                        assert_eq!(done, src.len(), "{ctx}");
                    }
                }
            }
        }
    }

    /// `f64` values around every finite code of a 16-bit format (`value` gives a code's
    /// value), of both signs: the code, its neighbours one `f64` ulp away, the midpoint to
    /// the next code (a tie), one ulp either side of it, and either side of it by the `f32`
    /// precision's last bits (`2^28`, `2^29` `f64` ulps: where a rounding to `f32` first
    /// could make or break a tie).
    fn around_codes(value: impl Fn(u16) -> f64, max_code: u16) -> Vec<u64> {
        let mut out = Vec::new();
        for c in 0..max_code {
            let (v, next) = (value(c), value(c + 1));
            let mid = ((v + next) / 2.0).to_bits();
            let b = v.to_bits();
            for x in [
                b,
                b.wrapping_sub(1),
                b + 1,
                mid,
                mid - 1,
                mid + 1,
                mid - (1 << 28),
                mid + (1 << 28),
                mid - (1 << 29),
                mid + (1 << 29),
            ] {
                out.extend([x, x | 1 << 63]);
            }
        }
        out
    }

    /// `f64 -> l` at every level, every mode and rule, against the reference path on
    /// `src` (the done prefix: blocks with an overflow may be declined), from an unaligned
    /// start.
    fn f64_words_match<DW: Word>(src: &[u64], l: FloatLayout) {
        let src = &src[3..];
        let modes = [
            Rounding::NearestEven,
            Rounding::TowardsZero,
            Rounding::TowardsPositive,
            Rounding::TowardsNegative,
            Rounding::NearestAway,
        ];
        for isa in Isa::available() {
            for mode in modes {
                for oor in [OutOfRange::Clamp, OutOfRange::Error] {
                    let mut got = vec![DW::from_u64(0); src.len() + 1];
                    let done = with_max_isa(isa, || narrow(src, &mut got[1..], mode, oor, l));
                    let mut want = vec![DW::from_u64(0); done];
                    let ok = reference_words(
                        &src[..done],
                        &mut want,
                        f64::FORMAT,
                        Format::Float(l),
                        crate::number::CastOptions::new(mode, oor),
                        None,
                    );
                    let ctx = format!("{isa:?} {l:?} {mode:?} {oor:?}");
                    assert!(ok.is_ok(), "{ctx}: accepted a failing element");
                    let bad = (0..done).find(|&i| got[1 + i] != want[i]);
                    assert_eq!(bad, None, "{ctx}: {:x?}", bad.map(|i| src[i]));
                    if oor == OutOfRange::Clamp {
                        assert_eq!(done, src.len(), "{ctx}");
                    }
                }
            }
        }
    }

    /// `f64 -> float16` and `f64 -> bfloat16` around every finite code (the F16C kernels'
    /// rounding to odd, the AVX-512 one's included, and the uniform `f64` kernel), then
    /// subnormal `f32`s, zeros, NaNs with payloads and infinities at the end.
    #[test]
    fn f64_around_every_half_code_matches_the_reference() {
        let tail = [
            0,
            1,
            (-1e-300f64).to_bits(),
            (1e-40f64).to_bits(),
            (-3e-39f64).to_bits(),
            f64::NAN.to_bits(),
            0xfff0_0000_dead_beef,
            0x7ff0_0000_0000_0001,
            f64::INFINITY.to_bits(),
            f64::NEG_INFINITY.to_bits(),
        ];
        let mut f16 = around_codes(|c| half::f16::from_bits(c).to_f64(), 0x7bff);
        f16.extend(tail);
        f64_words_match::<u16>(&f16, crate::number::layout::FLOAT16);
        let mut bf16 = around_codes(|c| half::bf16::from_bits(c).to_f64(), 0x7f7f);
        bf16.extend(tail);
        let Format::Float(bl) = half::bf16::FORMAT else {
            unreachable!()
        };
        f64_words_match::<u16>(&bf16, bl);
    }

    #[test]
    fn every_level_matches_the_reference() {
        use crate::dtype::{Float8E4M3, Float8E5M2};
        check::<u32, half::f16>();
        check::<u32, half::bf16>();
        check::<u32, Float8E4M3>();
        check::<u32, Float8E5M2>();
        check::<u64, half::f16>();
        check::<u64, f32>();
        check::<u64, Float8E4M3>();
        // A format narrower than `f32` in 32-bit words (a user's dtype): by the general
        // kernel at every level, nearest-even too.
        let float24 = FloatLayout {
            exponent_bits: 8,
            mantissa_bits: 15,
            ..crate::number::layout::FLOAT32
        };
        check_layout::<u32, u32>(float24);
        check_layout::<u64, u32>(float24);
    }
}
