//! NumPy's numeric rules on x86-64, as numcodecs' `FixedScaleOffset` meets them: the
//! float -> integer casts (`cvttsd2si` and its "integer indefinite" value), the correctly
//! rounded `float64 -> float16`, and the casts and arithmetic numcodecs relies on for each
//! NumPy type ([`NumpyNumber`]). The codec's kernels (`kernels.rs`) are generic over them,
//! and so are those of `numcodecs.quantize` and `numcodecs.astype`, which emulate the same
//! NumPy; `numpy.rs` beside this file lists the eleven types.

use crate::dtype::Real;

/// `cvttsd2si` with a 32-bit destination: truncate towards zero; NaN and values whose
/// truncation is outside `[-2^31, 2^31 - 1]` give the "integer indefinite" `-2^31`.
#[inline(always)]
pub fn cvtt_i32(x: f64) -> i32 {
    // `x > -2^31 - 1` keeps everything that truncates to -2^31; NaN fails both tests.
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// `cvttsd2si` with a 64-bit destination: truncate towards zero; NaN and values outside
/// `[-2^63, 2^63)` give `-2^63`.
#[inline(always)]
pub fn cvtt_i64(x: f64) -> i64 {
    // -2^63 is a double; the next double below it truncates out of range.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// GCC's x86-64 `(uint64_t)double`: `x < 2^63` (or NaN, the comparison being unordered)
/// takes `cvtt_i64(x)`'s bits; otherwise `cvtt_i64(x - 2^63)` with bit 63 flipped.
#[inline(always)]
pub fn cvtt_u64(x: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if x >= TWO63 {
        (cvtt_i64(x - TWO63) as u64) ^ (1 << 63)
    } else {
        cvtt_i64(x) as u64
    }
}

/// NumPy's float->int cast (`arr.astype(int type)`) on x86-64, for a float value `x` and
/// an integer type of `bits` bits: the result's two's complement bits (the low `bits` of
/// the returned word). `float16`/`float32` values are exact in `f64`, and the C cast of a
/// `float` behaves like that of the `double` with the same value.
///
/// NumPy's cast loops are plain C casts, which GCC compiles to `cvttss2si`/`cvttsd2si`:
/// 32-bit for `int8`/`int16`/`uint8`/`uint16`/`int32` (the narrow ones then keep the low
/// bits), 64-bit for `uint32` (low 32 bits kept) and `int64`, and [`cvtt_u64`] for
/// `uint64`. Out-of-range values and NaN therefore give the patterns of the "integer
/// indefinite" value `0x80…0` rather than saturating.
#[inline(always)]
pub fn float_to_int_x86(x: f64, bits: u32, signed: bool) -> u64 {
    match (bits, signed) {
        (64, false) => cvtt_u64(x),
        (64, true) | (32, false) => cvtt_i64(x) as u64,
        _ => cvtt_i32(x) as i64 as u64,
    }
}

/// The correctly rounded (nearest-even) `f64 -> float16` conversion, as NumPy's
/// `npy_double_to_half`. Rounds to odd into `f32` (24 bits >= 11 + 2, so the second
/// rounding is innocuous), then rounds that to `float16`. (`half::f16::from_f64` goes
/// through a nearest `f32` on F16C hardware, which double-rounds.)
#[inline(always)]
pub fn f64_to_f16(x: f64) -> half::f16 {
    let t = x as f32;
    if f64::from(t) == x || x.is_nan() {
        return half::f16::from_f32(t);
    }
    // Inexact: truncate towards zero (one ulp back when nearest went away from zero; an
    // infinity becomes the largest finite value), then set the sticky bit.
    let mut bits = t.to_bits();
    if f64::from(t).abs() > x.abs() {
        bits -= 1;
    }
    half::f16::from_f32(f32::from_bits(bits | 1))
}

/// The element types NumPy has, with the casts and arithmetic numcodecs relies on.
pub trait NumpyNumber: Real {
    /// Whether this is `float16`/`float32`/`float64`.
    const IS_FLOAT: bool;
    /// The cast to float64: exact for floats, nearest-even for 64-bit integers.
    fn to_f64(self) -> f64;
    /// The cast from a float value `x` (already a value of the source float type): nearest
    /// even for floats (±Inf on overflow), the x86-64 rule of `float_to_int_x86` for
    /// integers.
    fn from_f64(x: f64) -> Self;
    /// The value of an integer (floats: their value truncated; not used).
    fn to_i128(self) -> i128;
    /// The cast from an integer value `v`: the low bits for integers (so that wrapping
    /// arithmetic done in `i128` lands on the type's own wrapping result), nearest-even for
    /// floats.
    fn from_i128(v: i128) -> Self;
    /// `x` rounded to this float type, as `f64` (integers: unused, identity).
    #[inline(always)]
    fn round_f64(x: f64) -> f64 {
        Self::from_f64(x).to_f64()
    }
}

macro_rules! numpy_int {
    ($($t:ty => $signed:expr),* $(,)?) => {$(
        impl NumpyNumber for $t {
            const IS_FLOAT: bool = false;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                float_to_int_x86(x, <$t>::BITS, $signed) as $t
            }
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn from_i128(v: i128) -> Self {
                v as $t
            }
            #[inline(always)]
            fn round_f64(x: f64) -> f64 {
                x
            }
        }
    )*};
}

numpy_int!(
    i8 => true,
    i16 => true,
    i32 => true,
    i64 => true,
    u8 => false,
    u16 => false,
    u32 => false,
    u64 => false,
);

impl NumpyNumber for half::f16 {
    const IS_FLOAT: bool = true;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        half::f16::to_f64(self)
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        f64_to_f16(x)
    }
    #[inline(always)]
    fn to_i128(self) -> i128 {
        half::f16::to_f64(self) as i128
    }
    #[inline(always)]
    fn from_i128(v: i128) -> Self {
        // Exact in f64 below 2^53; anything larger is beyond float16 either way.
        f64_to_f16(v as f64)
    }
}

impl NumpyNumber for f32 {
    const IS_FLOAT: bool = true;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn from_i128(v: i128) -> Self {
        v as f32
    }
}

impl NumpyNumber for f64 {
    const IS_FLOAT: bool = true;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn to_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn from_i128(v: i128) -> Self {
        v as f64
    }
    #[inline(always)]
    fn round_f64(x: f64) -> f64 {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::{CastOptions, OutOfRange, Rounding};
    use half::f16;

    fn reference_f16(x: f64) -> f16 {
        <f16 as Real>::from_exact(
            <f64 as Real>::to_exact(x),
            CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        )
        .0
    }

    #[test]
    fn f64_to_f16_is_correctly_rounded() {
        // Ties and near-ties around float16 rounding points, where a nearest f32 would
        // double-round.
        let tie = 1.0 + 2f64.powi(-11); // halfway between 1 and 1 + 2^-10
        for x in [
            tie,
            tie + 2f64.powi(-40),
            tie - 2f64.powi(-40),
            -tie - 2f64.powi(-40),
            65504.0,
            65519.99,
            65520.0,
            1e300,
            -1e300,
            2f64.powi(-25),
            2f64.powi(-25) + 2f64.powi(-60),
            -2f64.powi(-25),
            5.960464477539063e-8,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(
                f64_to_f16(x).to_bits(),
                reference_f16(x).to_bits(),
                "x = {x:e}"
            );
        }
        assert!(f64_to_f16(f64::NAN).is_nan());
        // A deterministic sweep of bit patterns.
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Exponents near float16's range, arbitrary mantissas.
            let exp = 1023 - 30 + (s >> 52) % 50;
            let x = f64::from_bits((s & 0x800f_ffff_ffff_ffff) | (exp << 52));
            assert_eq!(
                f64_to_f16(x).to_bits(),
                reference_f16(x).to_bits(),
                "x = {x:e}"
            );
        }
    }

    #[test]
    fn x86_float_to_int() {
        assert_eq!(u8::from_f64(265.0), 9);
        assert_eq!(u8::from_f64(-1.0), 255);
        assert_eq!(u8::from_f64(f64::NAN), 0);
        assert_eq!(i8::from_f64(-129.0), 127);
        assert_eq!(i16::from_f64(32776.0), -32760);
        assert_eq!(i16::from_f64(1e10), 0);
        assert_eq!(i32::from_f64(2147483657.0), i32::MIN);
        assert_eq!(i32::from_f64(-2147483648.9), i32::MIN);
        assert_eq!(i32::from_f64(-2147483649.0), i32::MIN);
        assert_eq!(i32::from_f64(2147483647.9), i32::MAX);
        assert_eq!(i32::from_f64(f64::NAN), i32::MIN);
        assert_eq!(u32::from_f64(4294967301.0), 5);
        assert_eq!(u32::from_f64(-1.0), u32::MAX);
        assert_eq!(u32::from_f64(1e20), 0);
        assert_eq!(i64::from_f64(1e19), i64::MIN);
        assert_eq!(i64::from_f64(f64::NEG_INFINITY), i64::MIN);
        assert_eq!(u64::from_f64(1.5e19), 15_000_000_000_000_000_000);
        assert_eq!(u64::from_f64(2f64.powi(64)), 0);
        assert_eq!(u64::from_f64(f64::INFINITY), 0);
        assert_eq!(u64::from_f64(f64::NAN), 1 << 63);
        assert_eq!(u64::from_f64(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(u64::from_f64(-1.0), u64::MAX);
        assert_eq!(u64::from_f64(-0.9), 0);
    }
}
