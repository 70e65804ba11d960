//! NumPy's cast between two of its numeric types (`arr.astype(t)`, casting `"unsafe"`), one
//! loop per (source, target) pair: what `numcodecs.astype` runs both ways and
//! `numcodecs.quantize` decodes with.

use crate::codec::fixed_scale_offset::NumpyNumber;
use crate::codec::fixed_scale_offset::numpy::with_numpy;
use crate::dtype::DTypeId;
use crate::number::storage::{Word, Words, WordsMut};

/// NumPy's cast of one element on x86-64: float sources through their exact float64 value
/// (nearest-even into floats, the `cvttsd2si` rule of
/// [`float_to_int_x86`](crate::codec::fixed_scale_offset::numpy_number::float_to_int_x86) into integers); integer
/// sources through their exact value (the low bits into integers, nearest-even into floats:
/// LLVM folds the widening to `i128` away, so `i64 -> f32` is one correctly rounded
/// conversion, not two roundings).
///
/// A NaN into or out of float16 takes NumPy's bit formulas (`npy_floatbits_to_halfbits`
/// and its kin): the sign and the significand's top bits, shifted, never quieted (a
/// signaling NaN stays signaling; a payload that shifts out to zero becomes `1`), where the
/// hardware conversion through float64 would quiet it.
#[inline(always)]
pub(crate) fn cast_one<S: NumpyNumber, D: NumpyNumber>(x: S) -> D {
    if S::IS_FLOAT {
        let v = x.to_f64();
        let half = size_of::<S>() == 2 || size_of::<D>() == 2;
        if D::IS_FLOAT && half && v.is_nan() {
            return D::from_bits(numpy_nan_bits(size_of::<S>(), size_of::<D>(), x.to_bits()));
        }
        D::from_f64(v)
    } else {
        D::from_i128(x.to_i128())
    }
}

/// NumPy's NaN between float types of `from` and `to` bytes (2, 4 or 8): the sign, the
/// exponent all ones, the significand shifted (at least `1` when narrowed).
#[inline(always)]
fn numpy_nan_bits(from: usize, to: usize, bits: u64) -> u64 {
    let mantissa = |bytes: usize| match bytes {
        2 => 10,
        4 => 23,
        _ => 52,
    };
    let (fb, fm, tb, tm) = (8 * from, mantissa(from), 8 * to, mantissa(to));
    let sign = (bits >> (fb - 1)) & 1;
    let sig = bits & ((1u64 << fm) - 1);
    let sig = if tm >= fm {
        sig << (tm - fm)
    } else {
        (sig >> (fm - tm)).max(1)
    };
    (sign << (tb - 1)) | ((1u64 << (tb - 1)) - (1u64 << tm)) | sig
}

/// `dst[i] = cast(src[i])` over the shorter length; words of other widths than `S`'s and
/// `D`'s convert nothing.
#[inline(never)]
fn cast_loop<S: NumpyNumber, D: NumpyNumber>(src: Words<'_>, dst: WordsMut<'_>) {
    let (Some(src), Some(dst)) = (<S::Word as Word>::of(src), <D::Word as Word>::of_mut(dst))
    else {
        return;
    };
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                let v: D = cast_one::<S, D>(S::from_bits(x.to_u64()));
                *y = <D::Word as Word>::from_u64(v.to_bits());
            }
        },
    );
}

/// `dst = src`, the words of `S`.
fn copy<S: NumpyNumber>(src: Words<'_>, dst: WordsMut<'_>) {
    if let (Some(src), Some(dst)) = (<S::Word as Word>::of(src), <S::Word as Word>::of_mut(dst)) {
        dst.copy_from_slice(src);
    }
}

/// NumPy's cast from `source` to `target` (both NumPy types) over `src` into `dst`, the
/// kernel chosen once per call: one loop per pair, 11 × 11.
pub(crate) fn cast_words(source: DTypeId, target: DTypeId, src: Words<'_>, mut dst: WordsMut<'_>) {
    let n = src.len().min(dst.len());
    let (src, dst) = (src.sub(0, n), dst.sub(0, n));
    if source == target {
        // NumPy's cast to the same type copies the bits: a signaling NaN stays signaling
        // (a round trip through float64 would quiet it).
        with_numpy!(source, S => copy::<S>(src, dst), else {});
        return;
    }
    with_numpy!(source, S => with_numpy!(target, D => cast_loop::<S, D>(src, dst), else {}), else {});
}
