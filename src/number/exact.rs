//! The exact value every conversion starts from.
//!
//! Every finite value of every supported real type is `±mant × 2^exp` with `mant < 2^64`:
//! a float's significand has at most 53 bits and an integer's magnitude at most 64. So one
//! small `Copy` struct carries any source value without loss, and one rounding routine per
//! target family (float, integer) serves every (source, target) pair.

/// What an [`Exact`] value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Zero; [`Exact::neg`] says whether it is -0.
    Zero,
    /// A finite non-zero value `mant × 2^exp` (plus [`Exact::sticky`]).
    Finite,
    /// ±Infinity.
    Inf,
    /// Not a number. The payload is not carried: the cast_value spec says
    /// "Payload preservation is not required".
    Nan,
}

/// An exact real value (or special), independent of any storage format.
///
/// For [`Class::Finite`] the magnitude is `mant × 2^exp`, and when `sticky` is set the true
/// magnitude is strictly between that and the next multiple of `2^exp` (used by the decimal
/// parser, whose values are not always dyadic). `sticky` is always `false` for values decoded
/// from a data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exact {
    /// Kind of value.
    pub class: Class,
    /// Sign. Meaningful for zeros, finite values and infinities.
    pub neg: bool,
    /// Magnitude significand; non-zero for [`Class::Finite`].
    pub mant: u64,
    /// Power-of-two exponent of the least significant bit of `mant`.
    pub exp: i32,
    /// The true magnitude is a little above `mant × 2^exp` (see the type docs).
    pub sticky: bool,
}

impl Exact {
    /// +0.
    pub const ZERO: Exact = Exact::zero(false);
    /// A (canonical) NaN.
    pub const NAN: Exact = Exact {
        class: Class::Nan,
        neg: false,
        mant: 0,
        exp: 0,
        sticky: false,
    };

    /// ±0.
    pub const fn zero(neg: bool) -> Exact {
        Exact {
            class: Class::Zero,
            neg,
            mant: 0,
            exp: 0,
            sticky: false,
        }
    }

    /// ±Infinity.
    pub const fn inf(neg: bool) -> Exact {
        Exact {
            class: Class::Inf,
            neg,
            mant: 0,
            exp: 0,
            sticky: false,
        }
    }

    /// `±mant × 2^exp`; a zero `mant` gives ±0.
    pub const fn finite(neg: bool, mant: u64, exp: i32) -> Exact {
        if mant == 0 {
            return Exact::zero(neg);
        }
        Exact {
            class: Class::Finite,
            neg,
            mant,
            exp,
            sticky: false,
        }
    }

    /// An integer, exactly.
    pub const fn from_i128(v: i128) -> Exact {
        // Callers only pass values of at most 64 bits of magnitude.
        Exact::finite(v < 0, v.unsigned_abs() as u64, 0)
    }

    /// Whether this is a NaN.
    pub const fn is_nan(&self) -> bool {
        matches!(self.class, Class::Nan)
    }

    /// The value as an `i128` when it is a finite integer (or zero), else `None`.
    pub fn to_i128(self) -> Option<i128> {
        match self.class {
            Class::Zero => Some(0),
            Class::Finite if !self.sticky => {
                let mag: u128 = if self.exp >= 0 {
                    if self.exp > 63 {
                        return None;
                    }
                    (self.mant as u128) << self.exp
                } else {
                    let sh = self.exp.unsigned_abs();
                    if sh >= 64 || self.mant & ((1u64 << sh) - 1) != 0 {
                        return None;
                    }
                    (self.mant >> sh) as u128
                };
                let v = mag as i128;
                Some(if self.neg { -v } else { v })
            }
            _ => None,
        }
    }
}
