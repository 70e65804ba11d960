//! `numcodecs.quantize`'s encoding loop, one per (`dtype`, `astype`) pair of float types
//! (3 × 3), with the scale and its reciprocal as loop invariants. Decoding is a cast
//! ([`astype::kernel`](crate::codec::astype::kernel)).

use crate::codec::astype::kernel::{cast_one, map_words};
use crate::codec::fixed_scale_offset::NumpyNumber;
use crate::dtype::DTypeId;
use crate::number::storage::{Words, WordsMut};

/// `match` a float data type, binding its Rust type to `$T` in `$body`; nothing for others.
macro_rules! with_float {
    ($id:expr, $T:ident => $body:expr) => {
        match $id {
            DTypeId::Float16 => {
                type $T = half::f16;
                $body
            }
            DTypeId::Float32 => {
                type $T = f32;
                $body
            }
            DTypeId::Float64 => {
                type $T = f64;
                $body
            }
            _ => {}
        }
    };
}

/// `1 / scale` when multiplying by it is dividing by `scale` in the float type whose
/// largest power of two is `2^max_exp2`: for a power of two whose reciprocal is one too,
/// `r * (1 / scale)` and `r / scale` are the same real number, so the same once rounded
/// (subnormal and overflowing results included); `scale` `0` and `±inf` give NaN for
/// every `r` either way (`0 · inf`, `0 / 0`, `inf · 0`, `inf / inf`) or keep `r`'s NaN.
/// `None` when the reciprocal overflows (a subnormal `scale`).
fn reciprocal(scale: f64, max_exp2: i32) -> Option<f64> {
    let inv = 1.0 / scale;
    let exact = scale == 0.0 || scale.is_infinite() || inv <= 2f64.powi(max_exp2);
    exact.then_some(inv)
}

/// `D(S(rint(S(scale * x))) / scale)` computed in `f64`: NumPy 2's `np.around(scale * arr)
/// / scale` on an array of the float type `S` (the Python float `scale` becomes an `S`,
/// NEP 50), then the cast to `D`. `scale` is a power of two already rounded to `S`, so the
/// product of two `S` values and the quotient by it (the product by `inv`, exact in
/// `f64`) are exact in float64 and rounded once to `S`, as NumPy rounds each operation
/// (float16 computes in float32 and rounds back: the same values).
#[inline(never)]
fn quantize_through_f64<S: NumpyNumber, D: NumpyNumber>(
    scale: f64,
    inv: f64,
    src: Words<'_>,
    dst: WordsMut<'_>,
) {
    map_words::<S, D>(
        src,
        dst,
        #[inline(always)]
        move |x| {
            // rint of a value of S is a value of S.
            let r = S::round_f64(x.to_f64() * scale).round_ties_even();
            cast_one::<S, D>(S::from_f64(r * inv))
        },
    );
}

/// The same in `f32` itself (`vmulps`, `vroundps`, `vmulps`: eight elements a register):
/// each `f32` operation is the exact result rounded once, as above.
#[inline(never)]
fn quantize_f32<D: NumpyNumber>(scale: f32, inv: f32, src: Words<'_>, dst: WordsMut<'_>) {
    map_words::<f32, D>(
        src,
        dst,
        #[inline(always)]
        move |x| cast_one::<f32, D>((x * scale).round_ties_even() * inv),
    );
}

/// Quantize `src` (words of the float type `source`) into `dst` (words of the float type
/// `target`) over the shorter length, `scale` being numcodecs' scale rounded to `source`.
pub(crate) fn quantize_words(
    source: DTypeId,
    target: DTypeId,
    scale: f64,
    src: Words<'_>,
    mut dst: WordsMut<'_>,
) {
    let n = src.len().min(dst.len());
    let (src, mut dst) = (src.sub(0, n), dst.sub(0, n));
    // The reciprocal of a power of two in float32's or float64's range is exact in f64.
    let inv = 1.0 / scale;
    match (source, reciprocal(scale, 127)) {
        // `scale` and `inv` are values of f32: the casts are exact.
        (DTypeId::Float32, Some(inv)) => {
            let (scale, inv) = (scale as f32, inv as f32);
            if let (Words::U32(s), WordsMut::U32(d)) = (src, &mut dst)
                && target == DTypeId::Float32
                && crate::arch::quantize_f32_streamed(scale, inv, s, d)
            {
                // A large output, written by streamed stores without reading it first.
                return;
            }
            with_float!(target, D => quantize_f32::<D>(scale, inv, src, dst));
        }
        _ => with_float!(source, S => with_float!(target, D =>
            quantize_through_f64::<S, D>(scale, inv, src, dst))),
    }
}
