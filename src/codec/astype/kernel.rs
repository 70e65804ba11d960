//! NumPy's cast between two of its numeric types (`arr.astype(t)`, casting `"unsafe"`), one
//! loop per (source, target) pair: what `numcodecs.astype` runs both ways and
//! `numcodecs.quantize` decodes with.

use crate::codec::fixed_scale_offset::numpy::with_numpy;
use crate::convert::numpy::NumpyNumber;
use crate::dtype::DTypeId;
use crate::number::storage::{Word, Words, WordsMut};

/// NumPy's cast of one element on x86-64: float sources through their exact float64 value
/// (nearest-even into floats, the `cvttsd2si` rule of
/// [`float_to_int_x86`](crate::convert::numpy::float_to_int_x86) into integers); integer
/// sources through their exact value (the low bits into integers, nearest-even into floats:
/// LLVM folds the widening to `i128` away, so `i64 -> f32` is one correctly rounded
/// conversion, not two roundings).
#[inline(always)]
pub(crate) fn cast_one<S: NumpyNumber, D: NumpyNumber>(x: S) -> D {
    if S::IS_FLOAT {
        D::from_f64(x.to_f64())
    } else {
        D::from_i128(x.to_i128())
    }
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

/// NumPy's cast from `source` to `target` (both NumPy types) over `src` into `dst`, the
/// kernel chosen once per call: one loop per pair, 11 × 11.
pub(crate) fn cast_words(source: DTypeId, target: DTypeId, src: Words<'_>, mut dst: WordsMut<'_>) {
    let n = src.len().min(dst.len());
    let (src, dst) = (src.sub(0, n), dst.sub(0, n));
    with_numpy!(source, S => with_numpy!(target, D => cast_loop::<S, D>(src, dst), else {}), else {});
}
