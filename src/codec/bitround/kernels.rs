//! `bitround`'s element kernels: numcodecs' float formula on a storage word
//! ([`bitround_word`]), the integer rounding of the magnitude ([`int_bitround`]), and the
//! loops over slices of words that the codec's core (`BitRoundCore`, which holds the
//! parameters, the checks and the choice of kernel per call) runs.

use crate::number::Rounding;
use crate::number::int::int_value;
use crate::number::layout::{FloatLayout, IntLayout};
use crate::number::round::shift_round;
use crate::number::storage::Word;

/// numcodecs' `BitRound` on a float code held in a storage word of any width, except that a
/// NaN is returned unchanged:
///
/// ```text
/// maskbits = mantissa_bits - keepbits
/// b += ((b >> maskbits) & 1) + (1 << (maskbits - 1)) - 1   (wrapping, on the storage width)
/// b &= !0 << maskbits
/// ```
/// Round half to even on the mantissa; the carry may reach the exponent (max can become Inf).
/// For a format with IEEE NaNs (every format bitround supports) and
/// `keepbits < mantissa_bits`. It computes in
/// the word's own width, so that a slice of `f32` or `bfloat16` vectorizes in 32- or 16-bit
/// lanes; everything derived from the layout is a loop invariant.
#[inline(always)]
pub(crate) fn bitround_word<W: Word>(l: &FloatLayout, w: W, keepbits: u32) -> W {
    macro_rules! in_width {
        ($u:ty) => {{
            let maskbits = l.mantissa_bits - keepbits;
            let width_mask = (u64::MAX >> (64 - l.bits())) as $u;
            let mag_mask = l.magnitude_mask() as $u;
            let inf = (((1u64 << l.exponent_bits) - 1) << l.mantissa_bits) as $u;
            let half: $u = (1 << (maskbits - 1)) - 1;
            let bits = w.to_u64() as $u & width_mask;
            let b = bits.wrapping_add((bits >> maskbits) & 1).wrapping_add(half) & width_mask;
            let rounded = b & (width_mask << maskbits);
            // A NaN is left as it is; a select, not a branch.
            let out = if bits & mag_mask > inf { bits } else { rounded };
            W::from_u64(out as u64)
        }};
    }
    match W::BITS {
        8 | 16 => in_width!(u16),
        32 => in_width!(u32),
        _ => in_width!(u64),
    }
}

/// Integer bit-rounding on the magnitude (catalogue `int-bitround-signed`): keep `keepbits`
/// bits from the magnitude's most significant set bit, round half to even, and when the
/// rounded magnitude no longer fits the sign's range take the largest one that does (the
/// truncated value); the sign never changes. `INT_MIN` (and NaT) keeps its single bit.
#[inline]
pub(crate) fn int_bitround(l: &IntLayout, bits: u64, keepbits: u32) -> u64 {
    let v = int_value(l, bits);
    let mag = v.unsigned_abs() as u64;
    if mag == 0 {
        return bits & l.mask();
    }
    let width = 64 - mag.leading_zeros();
    if width <= keepbits {
        return bits & l.mask();
    }
    let drop = width - keepbits;
    let (q, _) = shift_round(mag, drop, false, false, Rounding::NearestEven);
    let limit: u128 = if v < 0 {
        l.min().unsigned_abs()
    } else {
        l.max() as u128
    };
    let mut r = (q as u128) << drop;
    if r > limit {
        r = ((mag >> drop) as u128) << drop;
    }
    let out = if v < 0 { -(r as i128) } else { r as i128 };
    (out as u64) & l.mask()
}

/// [`float_copy`] at the highest instruction-set level allowed: AVX-512 (twice the lanes of
/// AVX2, 32 for the 16-bit floats, and the NaN test a compare into a mask register), AVX2
/// or the baseline. Never inlined: each level's build exists once per word width, and the
/// portable loop keeps its registers (inlined into the codec's dispatch, it spilled the
/// source pointer: one more instruction per `f64`). Called once per slice.
#[inline(never)]
pub(crate) fn float_copy_at_level<W: Word>(src: &[W], dst: &mut [W], l: FloatLayout, k: u32) {
    crate::arch::vectorized_wide(
        #[inline(always)]
        || float_copy(src, dst, l, k),
    );
}

/// In-place form of [`float_copy_at_level`].
#[inline(never)]
pub(crate) fn float_in_place_at_level<W: Word>(data: &mut [W], l: FloatLayout, k: u32) {
    crate::arch::vectorized_wide(
        #[inline(always)]
        || float_in_place(data, l, k),
    );
}

/// The float kernel, its parameters passed by value (not read through a closure's captured
/// references, which LLVM cannot prove distinct from `dst`).
#[inline(always)]
fn float_copy<W: Word>(src: &[W], dst: &mut [W], l: FloatLayout, k: u32) {
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = bitround_word(&l, *s, k);
    }
}

/// In-place form of [`float_copy`].
#[inline(always)]
fn float_in_place<W: Word>(data: &mut [W], l: FloatLayout, k: u32) {
    for x in data.iter_mut() {
        *x = bitround_word(&l, *x, k);
    }
}

/// The integer kernel: [`int_bitround`] on each word of `src` into `dst`.
#[inline(always)]
pub(crate) fn int_copy<W: Word>(src: &[W], dst: &mut [W], l: IntLayout, k: u32) {
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = W::from_u64(int_bitround(&l, s.to_u64(), k));
    }
}

/// In-place form of [`int_copy`].
#[inline(always)]
pub(crate) fn int_in_place<W: Word>(data: &mut [W], l: IntLayout, k: u32) {
    for x in data.iter_mut() {
        *x = W::from_u64(int_bitround(&l, x.to_u64(), k));
    }
}
