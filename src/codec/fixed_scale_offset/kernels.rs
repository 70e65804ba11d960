//! `numcodecs.fixedscaleoffset`'s element kernels: the fused one-pass float loop
//! ([`fused_float`]) and the two passes of the general path, on the source type
//! ([`encode_source`], [`decode_target`]) and on the type written ([`to_target`]), each
//! generic over one or two [`NumpyNumber`]s, with the parameters they take ([`EncodePath`],
//! [`DecodeParams`], [`Mid`]). The codec's core (`FixedScaleOffsetCore`) holds the
//! configuration, decides the path once, picks the kernel per call (`with_numpy!`) and
//! runs the general path block by block.

use super::numpy_number::NumpyNumber;
use crate::convert::by_blocks;
use crate::number::storage::{Word, Words, WordsMut};

/// How encoding computes, decided once from the types and the Python scalar kinds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum EncodePath {
    /// Float `dtype`: everything in that type; `offset`/`scale` rounded to it.
    Float { offset: f64, scale: f64 },
    /// Integer `dtype`, `int` offset and scale: wrapping arithmetic in the type.
    Int { offset: i128, scale: i128 },
    /// Integer `dtype`, `int` offset, `float` scale: wrapping subtraction, then float64.
    IntThenF64 { offset: i128, scale: f64 },
    /// Integer `dtype`, `float` offset: float64 throughout.
    F64 { offset: f64, scale: f64 },
}

/// How decoding computes: in `V`, the float `astype`, or float64 for an integer `astype`
/// (`offset`/`scale` rounded to `V`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DecodeParams {
    pub(crate) offset: f64,
    pub(crate) scale: f64,
}

/// What the first pass left in the block: float64 bits, or the integer value's bits
/// (two's complement of the source width, zero-extended when the source is unsigned).
#[derive(Clone, Copy)]
pub(crate) enum Mid {
    Float,
    Int { unsigned: bool },
}

/// Whether encoding a float32/float64 array into `T` runs in one pass ([`fused_float`]):
/// for the integer types NumPy casts to through `cvttsd2si` with a 32-bit destination
/// (every integer type but `uint32` and the 64-bit ones), what `astype` is for. The other
/// types take the two passes, [`encode_source`] then [`to_target`], which write the same
/// words with loops compiled anyway.
pub(crate) const fn fuses<T: NumpyNumber>() -> bool {
    use crate::number::layout::Format;
    matches!(T::FORMAT, Format::Int(l) if l.bits < 32 || (l.bits == 32 && l.signed))
}

/// The float path in one pass, from the hardware float `S` to a type `T` that [`fuses`]:
/// `T(rint(S(S(x - offset) * scale)))`, the cast through `cvttsd2si` into 32 bits
/// (`arch::i32_or_indefinite`: `m` is integral), then the low bits, which the signed and
/// unsigned type of a width share: one loop for both.
#[inline(never)]
pub(crate) fn fused_float<S: NumpyNumber, T: NumpyNumber>(
    offset: f64,
    scale: f64,
    src: Words<'_>,
    dst: WordsMut<'_>,
) {
    let (Some(src), Some(dst)) = (<S::Word as Word>::of(src), <T::Word as Word>::of_mut(dst))
    else {
        return;
    };
    if const { fuses::<T>() } {
        fused_loop::<S, T::Word>(offset, scale, src, dst);
    }
}

/// The loop of [`fused_float`]: the low bits of `cvttsd2si(rint(S(S(x - offset) * scale)))`
/// into each target word, block by block as the casts run (two streams over long inputs:
/// `convert::by_blocks`; nothing is ever declined), with
/// AVX-512 or AVX2 where the CPU has it (`arch::vectorized_wide`: LLVM's AVX-512 build
/// rounds, clamps and converts 8 `f64` per instruction and narrows by `vpmovdb`).
#[inline(never)]
fn fused_loop<S: NumpyNumber, W: Word>(offset: f64, scale: f64, src: &[S::Word], dst: &mut [W]) {
    crate::arch::vectorized_wide(
        #[inline(always)]
        move || {
            by_blocks(
                src,
                dst,
                #[inline(always)]
                |src, dst| {
                    for (x, y) in src.iter().zip(dst.iter_mut()) {
                        let d = S::round_f64(S::from_bits(x.to_u64()).to_f64() - offset);
                        let m = S::round_f64(d * scale).round_ties_even();
                        *y = W::from_u64(u64::from(crate::arch::i32_or_indefinite(m) as u32));
                    }
                    true
                },
            )
        },
    );
}

/// First encoding pass, on the source type `T`: the value before the cast to `astype`.
#[inline(never)]
pub(crate) fn encode_source<T: NumpyNumber>(path: EncodePath, src: Words<'_>, mid: &mut [u64]) {
    let Some(src) = <T::Word as Word>::of(src) else {
        return;
    };
    let x = |w: &T::Word| T::from_bits(w.to_u64());
    // One loop per path, so that the match is not in the loop; compiled with AVX2 where
    // the CPU has it (`round_ties_even` is a library call without SSE4.1). The path is
    // moved into the closure: its scalars are then read once, not through a reference
    // LLVM cannot tell from `mid`. The float path is taken exactly for a float `T`
    // (`FixedScaleOffsetCore::new`): each `T` compiles only the loops of its own paths.
    crate::arch::vectorized(
        #[inline(always)]
        move || match path {
            EncodePath::Float { offset, scale } if const { T::IS_FLOAT } => {
                for (s, m) in src.iter().zip(mid.iter_mut()) {
                    let d = T::round_f64(x(s).to_f64() - offset);
                    // rint of a value of T is a value of T.
                    *m = T::round_f64(d * scale).round_ties_even().to_bits();
                }
            }
            EncodePath::Int { offset, scale } if const { !T::IS_FLOAT } => {
                for (s, m) in src.iter().zip(mid.iter_mut()) {
                    let d = T::from_i128(x(s).to_i128().wrapping_sub(offset));
                    *m = T::from_i128(d.to_i128().wrapping_mul(scale)).to_i128() as u64;
                }
            }
            EncodePath::IntThenF64 { offset, scale } if const { !T::IS_FLOAT } => {
                for (s, m) in src.iter().zip(mid.iter_mut()) {
                    let d = T::from_i128(x(s).to_i128().wrapping_sub(offset));
                    *m = (d.to_f64() * scale).round_ties_even().to_bits();
                }
            }
            EncodePath::F64 { offset, scale } if const { !T::IS_FLOAT } => {
                for (s, m) in src.iter().zip(mid.iter_mut()) {
                    *m = ((x(s).to_f64() - offset) * scale)
                        .round_ties_even()
                        .to_bits();
                }
            }
            _ => debug_assert!(false, "an encoding path of the other kind of type"),
        },
    );
}

/// First decoding pass, on the encoded type `T`: `V(V(y / scale) + offset)` in float64
/// bits, with `V` = `T` for a float `T`, float64 otherwise.
#[inline(never)]
pub(crate) fn decode_target<T: NumpyNumber>(p: DecodeParams, src: Words<'_>, mid: &mut [u64]) {
    let Some(src) = <T::Word as Word>::of(src) else {
        return;
    };
    let DecodeParams { offset, scale } = p;
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            for (s, m) in src.iter().zip(mid.iter_mut()) {
                // For an integer T, `round_f64` is the identity: float64 arithmetic.
                let q = T::round_f64(T::from_bits(s.to_u64()).to_f64() / scale);
                *m = T::round_f64(q + offset).to_bits();
            }
        },
    );
}

/// Second pass, on the type `T` written: NumPy's cast of the first pass's values.
#[inline(never)]
pub(crate) fn to_target<T: NumpyNumber>(mid: Mid, src: &[u64], dst: WordsMut<'_>) {
    if const { !T::IS_FLOAT } && matches!(mid, Mid::Int { .. }) {
        // An integer's cast to an integer type is its low bits, whatever either's
        // signedness: one loop per word width serves the eight integer types.
        low_bits::<T::Word>(src, dst);
        return;
    }
    let Some(dst) = <T::Word as Word>::of_mut(dst) else {
        return;
    };
    let w = |v: T| <T::Word as Word>::from_u64(v.to_bits());
    crate::arch::vectorized(
        #[inline(always)]
        move || match mid {
            Mid::Float => {
                for (m, d) in src.iter().zip(dst.iter_mut()) {
                    *d = w(T::from_f64(f64::from_bits(*m)));
                }
            }
            Mid::Int { unsigned: true } if const { T::IS_FLOAT } => {
                for (m, d) in src.iter().zip(dst.iter_mut()) {
                    *d = w(T::from_i128(*m as i128));
                }
            }
            Mid::Int { unsigned: false } if const { T::IS_FLOAT } => {
                for (m, d) in src.iter().zip(dst.iter_mut()) {
                    *d = w(T::from_i128(*m as i64 as i128));
                }
            }
            _ => debug_assert!(false, "an integer value into an integer type"),
        },
    );
}

/// [`to_target`] of integer values into an integer type of words `W`: the low bits.
#[inline(never)]
fn low_bits<W: Word>(src: &[u64], dst: WordsMut<'_>) {
    let Some(dst) = W::of_mut(dst) else {
        return;
    };
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            for (m, d) in src.iter().zip(dst.iter_mut()) {
                *d = W::from_u64(*m);
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::xorshift::{unit, xorshift32, xorshift64};

    /// The second pass of integer values writes, at every instruction-set level, NumPy's
    /// cast of the value (zero- or sign-extended from 64 bits) into each type: the low bits
    /// into the integer types (one loop per word width), nearest-even into the float ones;
    /// on edge values, odd lengths and unaligned starts.
    #[test]
    fn integer_values_into_every_type_at_every_level() {
        let mut next = xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut mids: Vec<u64> = (0..1001)
            .map(|i| {
                let x = next();
                if i % 3 == 0 { x % 70_000 } else { x }
            })
            .collect();
        mids.extend([
            0,
            1,
            127,
            128,
            255,
            256,
            65_535,
            65_536,
            u64::MAX,
            1 << 63,
            1 << 31,
        ]);
        fn check<T: NumpyNumber>(mids: &[u64]) {
            for unsigned in [false, true] {
                let value = |m: u64| {
                    if unsigned {
                        m as i128
                    } else {
                        m as i64 as i128
                    }
                };
                let want: Vec<T::Word> = mids
                    .iter()
                    .map(|&m| <T::Word as Word>::from_u64(T::from_i128(value(m)).to_bits()))
                    .collect();
                for level in crate::isa::Isa::available() {
                    for (start, len) in [(0, mids.len()), (1, 1000), (3, 77), (5, 8)] {
                        let mut out = vec![<T::Word as Word>::from_u64(0); len];
                        crate::isa::with_max_isa(level, || {
                            let dst = <T::Word as Word>::words_mut(&mut out);
                            to_target::<T>(Mid::Int { unsigned }, &mids[start..start + len], dst);
                        });
                        let ctx = format!(
                            "{} {level:?} {unsigned} {start}",
                            std::any::type_name::<T>()
                        );
                        assert!(out[..] == want[start..start + len], "{ctx}");
                    }
                }
            }
        }
        check::<i8>(&mids);
        check::<u8>(&mids);
        check::<i16>(&mids);
        check::<u16>(&mids);
        check::<i32>(&mids);
        check::<u32>(&mids);
        check::<i64>(&mids);
        check::<u64>(&mids);
        check::<half::f16>(&mids);
        check::<f32>(&mids);
        check::<f64>(&mids);
    }

    /// The fused float loop writes the same words at every instruction-set level (its
    /// AVX-512 and AVX2 builds against the portable one): `f64` and `f32` sources into
    /// `uint8`, `int16`, `uint16` and `int32`, on values
    /// in and out of range, ties, ±Inf and NaN, odd lengths and unaligned starts.
    #[test]
    fn fused_float_is_the_same_at_every_level() {
        let mut next = xorshift32(0x2545_f491);
        let mut values: Vec<f64> = (0..5000)
            .map(|i| {
                let r = unit(next());
                match i % 7 {
                    0 => (r * 600.0 - 300.0).round() + 0.5,
                    1 => r * 1e10 - 5e9,
                    _ => r * 40.0 + 990.0,
                }
            })
            .collect();
        values.extend([
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            0.0,
            -0.0,
            1e300,
            -1e300,
        ]);
        let words64: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        let words32: Vec<u32> = values.iter().map(|&v| (v as f32).to_bits()).collect();
        fn run<T: NumpyNumber, const F64: bool>(src64: &[u64], src32: &[u32]) -> Vec<T::Word> {
            let n = if F64 { src64.len() } else { src32.len() };
            let mut out = vec![<T::Word as Word>::from_u64(0); n];
            let src = if F64 {
                Words::U64(src64)
            } else {
                Words::U32(src32)
            };
            let dst = <T::Word as Word>::words_mut(&mut out);
            if F64 {
                fused_float::<f64, T>(1000.5, 10.0, src, dst);
            } else {
                fused_float::<f32, T>(1000.5, 10.0, src, dst);
            }
            out
        }
        fn check<T: NumpyNumber>(w64: &[u64], w32: &[u32]) {
            for (start, len) in [(0, w64.len()), (1, 1000), (3, 77), (5, 8), (0, 1)] {
                let (s64, s32) = (&w64[start..start + len], &w32[start..start + len]);
                let portable = crate::isa::with_max_isa(crate::isa::Isa::Portable, || {
                    (run::<T, true>(s64, s32), run::<T, false>(s64, s32))
                });
                for level in crate::isa::Isa::available() {
                    let got = crate::isa::with_max_isa(level, || {
                        (run::<T, true>(s64, s32), run::<T, false>(s64, s32))
                    });
                    assert!(got == portable, "{level:?} start {start} len {len}");
                }
            }
        }
        check::<u8>(&words64, &words32);
        check::<i16>(&words64, &words32);
        check::<u16>(&words64, &words32);
        check::<i32>(&words64, &words32);
    }
}
