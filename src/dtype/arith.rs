//! Arithmetic on codes of a run-time layout: the checked arithmetic (`int_arith`,
//! `float_arith`, `arith`) behind `Real`'s methods and `scale_offset`, the exact value of an
//! `f64`, and the conformance equality of float codes (`float_same`).
//!
//! These are the generic bodies behind the impls that the [`dtype`](macro@crate::dtype)
//! macro writes (through `__private`): the macro only turns a layout description into
//! constants and one-line methods; every rule lives here, once, generic over the layout, and
//! is inlined into each monomorphized impl (the layout is a constant there, so the branches
//! on it fold away). The loops over elements are each codec's kernels (`bitround`'s word kernel in
//! `codec/bitround/kernels.rs`) and the cast engine's (`convert/`).

use super::ArithFault;
use crate::number::float::{decode_float, round_to_float};
use crate::number::int::int_value;
use crate::number::layout::{FloatLayout, Format, IntLayout};
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
    decode_float(&crate::number::layout::FLOAT64, x.to_bits())
}

/// Conformance equality of two float codes: equal bits, or both NaN.
#[inline(always)]
pub fn float_same(l: &FloatLayout, a: u64, b: u64) -> bool {
    a == b || (decode_float(l, a).is_nan() && decode_float(l, b).is_nan())
}
