//! Widening a small float that `f32` holds exactly (float16, bfloat16, float8; see
//! [`widens`]) to `f32`/`f64`: exact, so one kernel serves every rounding mode and range
//! rule. The `u8`/`u16` source words have no other kernel, so their [`Src`] impl is here,
//! with the choice between F16C, the AVX2 byte twin and the portable loop.

use super::{Dst, Src};
use crate::convert::blocks::by_blocks;
use crate::number::layout::FloatLayout;
use crate::number::storage::{Word, Words};

/// Whether [`widen`] is exact for sources of layout `l`: IEEE-like (signed, subnormals,
/// ±Inf, IEEE NaNs), every value of it an `f32` (its exponent range and precision within
/// `f32`'s, subnormals included), and not `f32`/`f64` themselves.
pub(super) fn widens(l: FloatLayout) -> bool {
    use crate::number::layout::NanEncoding;
    let max_exp = (1i32 << l.exponent_bits) - 1 - l.bias;
    let min_exp = 1 - l.bias - l.mantissa_bits as i32;
    // IEEE (±Inf, NaNs on the all-ones exponent), or OCP's `fn` formats (no Inf, NaN only
    // the all-ones code: `float8_e4m3fn`).
    let specials = match l.nan {
        NanEncoding::Ieee => l.inf,
        NanEncoding::AllOnes => !l.inf,
        _ => false,
    };
    l.signed
        && l.subnormals
        && specials
        && l.mantissa_bits >= 1
        && l.exponent_bits <= 8
        && l.mantissa_bits <= 23
        && l.bits() <= 16
        && l.bias <= 127
        && max_exp <= 127
        && min_exp >= -149
}

/// The source methods of 8- and 16-bit words: widening a small float.
macro_rules! small_src {
    ($($t:ty),*) => {$(
        impl Src for $t {
            fn widen<DW: Dst>(src: &[Self], dst: &mut [DW], l: FloatLayout) -> usize {
                if DW::BITS < 32 {
                    return 0;
                }
                // float16 to `f32` by F16C (`vcvtph2ps`) where the CPU has it.
                let hw = if l == crate::number::layout::FLOAT16 {
                    crate::arch::F16c::detect()
                } else {
                    None
                };
                if let (Some(hw), Words::U16(s), Some(d)) =
                    (hw, Self::words(src), u32::of_mut(DW::words_mut(dst)))
                {
                    return by_blocks_streamed(s, d, |s, d, stream| {
                        if stream {
                            hw.f32_from_f16_streamed(s, d)
                        } else {
                            hw.f32_from_f16(s, d)
                        }
                    });
                }
                let p = widen_plan(l);
                // One-byte sources into `f32`: the intrinsic twin, which can stream.
                if let (true, Words::U8(s), Some(d)) =
                    (crate::arch::has_avx2(), Self::words(src), u32::of_mut(DW::words_mut(dst)))
                {
                    return by_blocks_streamed(s, d, |s, d, stream| {
                        crate::arch::widen_bytes_to_f32(s, d, p, stream)
                    });
                }
                crate::arch::vectorized(
                    #[inline(always)]
                    move || by_blocks(src, dst, #[inline(always)] |s, d| widen(s, d, p)),
                )
            }
        }
    )*};
}
small_src!(u8, u16);

/// The constants of [`widen`] for a layout `l`: its magnitude bits moved to `f32`'s places
/// are the value times `2^(B - 127)` (subnormals included, which land on `f32`
/// subnormals), so one multiplication by `2^(127 - B)` gives the value.
fn widen_plan(l: FloatLayout) -> crate::arch::WidenPlan {
    let mag_mask = l.magnitude_mask() as u32;
    let exp_all = (((1u32 << l.exponent_bits) - 1) << l.mantissa_bits) & mag_mask;
    // IEEE: `exp_all` is ±Inf and above it NaN; `fn`: no Inf, only `mag_mask` is NaN.
    let (inf, nan_from) = if l.inf {
        (exp_all, exp_all + 1)
    } else {
        (u32::MAX, mag_mask)
    };
    crate::arch::WidenPlan {
        mag_mask,
        shift: 23 - l.mantissa_bits,
        scale: f32::from_bits(((254 - l.bias) as u32) << 23),
        inf,
        // `mag >= nan_from` as the top bit of `mag + (2^31 - nan_from)` (both below 2^16),
        // OR-ed over the block: an add and an or per vector, no compare mask to narrow.
        bias_nan: (1 << 31) - nan_from,
        width: l.exponent_bits + l.mantissa_bits,
    }
}

/// A 16-bit IEEE-like float (see [`widens`]) to `f32`/`f64` words, exactly (see
/// [`widen_plan`]); ±Inf are set apart, and a NaN is declined (the reference path
/// canonicalizes it). In 32-bit lanes, 8 elements per AVX2 vector, instead of a
/// 65536-entry table. `arch::widen_bytes_to_f32` is its intrinsic twin for one-byte
/// sources into `f32`.
#[inline(always)]
fn widen<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], p: crate::arch::WidenPlan) -> bool {
    let crate::arch::WidenPlan {
        mag_mask,
        shift,
        scale,
        inf,
        bias_nan,
        width,
    } = p;
    let mut nan = 0u32;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let h = s.to_u64() as u32;
        let mag = h & mag_mask;
        let v = (f32::from_bits(mag << shift) * scale).to_bits();
        let v = if mag == inf { 0x7f80_0000 } else { v };
        let v = v | (((h >> width) & 1) << 31);
        *d = DW::from_u64(if DW::BITS == 64 {
            f64::from(f32::from_bits(v)).to_bits()
        } else {
            u64::from(v)
        });
        nan |= mag + bias_nan;
    }
    nan & (1 << 31) == 0
}

/// `kernel(src, dst, stream)` block by block (see [`by_blocks`]). An output to stream
/// (`arch::streams_from`) goes by plain stores up to its first 64-byte boundary, then with
/// `stream` set (every block of `by_blocks` but the last starts a multiple of 64 elements
/// further, so they stay aligned), then the fence.
#[inline(always)]
pub(super) fn by_blocks_streamed<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    mut kernel: impl FnMut(&[SW], &mut [DW], bool) -> bool,
) -> usize {
    if !crate::arch::streams_from(src, dst) {
        return by_blocks(
            src,
            dst,
            #[inline(always)]
            |s, d| kernel(s, d, false),
        );
    }
    let n = src.len().min(dst.len());
    // 64: the AVX-512 kernels stream whole cache lines (AVX2's 32-byte vectors need 32).
    let head = dst.as_ptr().align_offset(64).min(n);
    let done = by_blocks(
        &src[..head],
        &mut dst[..head],
        #[inline(always)]
        |s, d| kernel(s, d, false),
    );
    if done < head {
        return done;
    }
    let rest = by_blocks(
        &src[head..n],
        &mut dst[head..n],
        #[inline(always)]
        |s, d| kernel(s, d, true),
    );
    crate::arch::stream_fence();
    head + rest
}

#[cfg(test)]
mod tests {
    use crate::dtype::DTypeId;
    use crate::number::layout::Format;

    /// `arch::widen_bytes_to_f32` (AVX2, plain and streamed stores) writes what the
    /// portable `widen` writes, and declines the same blocks, for every code of every
    /// one-byte float type it serves, at every tail length.
    #[test]
    fn byte_widening_twin_equals_portable() {
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, byte_widening);
        }
    }

    fn byte_widening() {
        if !crate::arch::has_avx2() {
            return;
        }
        let layouts: Vec<_> = DTypeId::ALL
            .iter()
            .filter_map(|id| match id.format() {
                Some(Format::Float(l)) if l.bits() <= 8 && super::widens(l) => Some(l),
                _ => None,
            })
            .collect();
        assert!(layouts.len() >= 3, "the float8 types at least: {layouts:?}");
        let codes: Vec<u8> = (0..=255).chain(0..=255).collect();
        let mut buf = vec![0u32; 256 + 32];
        // A 64-byte aligned output, so that the streamed form is taken, and an unaligned one.
        let aligned = buf.as_ptr().align_offset(64).min(16);
        for l in layouts {
            let p = super::widen_plan(l);
            for (stream, start) in [(false, aligned), (true, aligned), (true, aligned + 3)] {
                for (len, from) in [
                    (256, 0),
                    (256, 5),
                    (255, 0),
                    (249, 1),
                    (17, 250),
                    (8, 0),
                    (7, 3),
                    (1, 0),
                ] {
                    let src = &codes[256 - len + from..][..len];
                    let out = &mut buf[start..start + len];
                    let ok = crate::arch::widen_bytes_to_f32(src, out, p, stream);
                    let mut want = vec![0u32; len];
                    let want_ok = super::widen(src, &mut want, p);
                    assert_eq!(ok, want_ok, "{l:?} len {len}");
                    assert_eq!(out, &want[..], "{l:?} len {len} stream {stream}");
                }
            }
        }
    }
}
