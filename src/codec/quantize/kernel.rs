//! `numcodecs.quantize`'s encoding loop, one per (`dtype`, `astype`) pair of float types
//! (3 × 3), with the scale as a loop invariant. Decoding is a cast
//! ([`astype::kernel`](crate::codec::astype::kernel)).

use crate::codec::fixed_scale_offset::NumpyNumber;
use crate::dtype::DTypeId;
use crate::number::storage::{Word, Words, WordsMut};

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

/// `D(S(rint(S(scale * x))) / scale)`: NumPy 2's `np.around(scale * arr) / scale` on an
/// array of the float type `S` (the Python float `scale` becomes an `S`, NEP 50), then the
/// cast to `D`. `scale` is a power of two already rounded to `S`, so the product of two
/// `S` values and the quotient by it are exact in float64 and rounded once to `S`, as
/// NumPy rounds each operation (float16 computes in float32 and rounds back: the same
/// values).
#[inline(never)]
fn quantize_loop<S: NumpyNumber, D: NumpyNumber>(scale: f64, src: Words<'_>, dst: WordsMut<'_>) {
    let (Some(src), Some(dst)) = (<S::Word as Word>::of(src), <D::Word as Word>::of_mut(dst))
    else {
        return;
    };
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                let x = S::from_bits(x.to_u64()).to_f64();
                // rint of a value of S is a value of S.
                let r = S::round_f64(x * scale).round_ties_even();
                let q = S::round_f64(r / scale);
                *y = <D::Word as Word>::from_u64(D::from_f64(q).to_bits());
            }
        },
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
    let (src, dst) = (src.sub(0, n), dst.sub(0, n));
    with_float!(source, S => with_float!(target, D => quantize_loop::<S, D>(scale, src, dst)));
}
