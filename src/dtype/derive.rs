//! The generic bodies behind the impls that the [`dtype`](macro@crate::dtype) macro writes.
//!
//! The macro only turns a layout description into constants and one-line methods; every
//! rule lives here, once, generic over the layout, and is inlined into each monomorphized
//! impl (the layout is a constant there, so the branches on it fold away).

use super::ArithFault;
use super::layout::{FloatLayout, Format, IntLayout};
use crate::number::float::{decode_float, round_to_float};
use crate::number::int::int_value;
use crate::number::round::shift_round;
use crate::number::{OutOfRange, Rounding, Status};

/// The four arithmetic operations `scale_offset` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    /// `a - b`
    Sub,
    /// `a + b`
    Add,
    /// `a * b`
    Mul,
    /// `a / b`
    Div,
}

/// Checked integer arithmetic on codes of layout `l`: the exact result must fit.
#[inline]
pub fn int_arith(l: &IntLayout, a: u64, b: u64, op: ArithOp) -> Result<u64, ArithFault> {
    let (x, y) = (int_value(l, a), int_value(l, b));
    let r = match op {
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Add => x.checked_add(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::Div => {
            if y == 0 {
                return Err(ArithFault::DivisionByZero);
            }
            if x % y != 0 {
                return Err(ArithFault::InexactDivision);
            }
            Some(x / y)
        }
    }
    .ok_or(ArithFault::Overflow)?;
    if r < l.min() || r > l.max() {
        return Err(ArithFault::Overflow);
    }
    Ok((r as u64) & l.mask())
}

/// Float arithmetic in the type's own semantics, correctly rounded (nearest-even) once.
///
/// The operation is carried out in `f64` and the result rounded to `T` by the conversion
/// core. For every type of at most 32 bits this is the correctly rounded result: `f64` has
/// at least `2p + 2` bits for their precision `p`, so rounding twice is innocuous for
/// `+ - × ÷` (Figueroa, "When is double rounding innocuous?", 1995), and `f64` neither
/// overflows nor underflows on their values. For `f64` itself it is the hardware operation.
///
/// IEEE semantics apply to the result (catalogue `float-overflow-inf`): an overflow gives
/// ±Inf where the type has infinities, and is an error otherwise; a NaN result is an error
/// in a type without NaN.
#[inline]
pub fn float_arith(l: &FloatLayout, a: u64, b: u64, op: ArithOp) -> Result<u64, ArithFault> {
    let (x, y) = (decode_float(l, a).to_f64(), decode_float(l, b).to_f64());
    let r = match op {
        ArithOp::Sub => x - y,
        ArithOp::Add => x + y,
        ArithOp::Mul => x * y,
        ArithOp::Div => x / y,
    };
    let exact = f64_to_exact(r);
    let oor = if l.inf {
        OutOfRange::Clamp
    } else {
        OutOfRange::Error
    };
    let (v, st) = round_to_float(l, exact, Rounding::NearestEven, oor);
    match st {
        Status::NanUnrepresentable => Err(ArithFault::NotANumber),
        Status::OutOfRange | Status::InfUnrepresentable => Err(ArithFault::Overflow),
        _ => Ok(v),
    }
}

/// Checked arithmetic on two codes of format `f`: [`int_arith`] or [`float_arith`].
#[inline]
pub fn arith(f: Format, a: u64, b: u64, op: ArithOp) -> Result<u64, ArithFault> {
    match f {
        Format::Int(l) => int_arith(&l, a, b, op),
        Format::Float(l) => float_arith(&l, a, b, op),
    }
}

/// The exact value of an `f64`.
#[inline(always)]
pub fn f64_to_exact(x: f64) -> crate::number::exact::Exact {
    decode_float(&super::layout::FLOAT64, x.to_bits())
}

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
pub fn bitround_word<W: crate::dtype::Word>(l: &FloatLayout, w: W, keepbits: u32) -> W {
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
pub fn int_bitround(l: &IntLayout, bits: u64, keepbits: u32) -> u64 {
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

/// Conformance equality of two float codes: equal bits, or both NaN.
#[inline(always)]
pub fn float_same(l: &FloatLayout, a: u64, b: u64) -> bool {
    a == b || (decode_float(l, a).is_nan() && decode_float(l, b).is_nan())
}
