//! Decoding an integer code to an [`Exact`] value, and rounding an [`Exact`] value to an
//! integer format, then applying the out-of-range rule.
//!
//! > `"wrap"`: A value exceeding the representable range is mapped to the value in the
//! > representable range that is congruent to that input value modulo `2^N` where `N` is the
//! > size in bits of the output data type.
//!
//! Wrapping is applied to the value *after* rounding, so `-1.5 -> uint8` (towards-zero,
//! wrap) is `-1 mod 256 = 255`.

use super::exact::{Class, Exact};
use super::layout::IntLayout;
use super::round::shift_round;
use super::{OutOfRange, Rounding, Status};

/// Decode the low `l.bits` bits of `bits` (sign-extending for signed formats).
#[inline(always)]
pub const fn decode_int(l: &IntLayout, bits: u64) -> Exact {
    let raw = bits & l.mask();
    if l.signed {
        let shift = 64 - l.bits;
        let v = ((raw << shift) as i64) >> shift;
        Exact::finite(v < 0, v.unsigned_abs(), 0)
    } else {
        Exact::finite(false, raw, 0)
    }
}

/// The value of the low `l.bits` bits as an `i128`.
#[inline(always)]
pub const fn int_value(l: &IntLayout, bits: u64) -> i128 {
    let raw = bits & l.mask();
    if l.signed {
        let shift = 64 - l.bits;
        (((raw << shift) as i64) >> shift) as i128
    } else {
        raw as i128
    }
}

/// Round `x` to an integer under `mode`, then fit it into `l` under `oor`.
///
/// NaN and ±Inf are never representable in an integer and are reported as such whatever
/// `oor` says (catalogue `inf-clamp`). -0 becomes 0.
#[inline]
pub fn round_to_int(l: &IntLayout, x: Exact, mode: Rounding, oor: OutOfRange) -> (u64, Status) {
    match x.class {
        Class::Nan => (0, Status::NanUnrepresentable),
        Class::Inf => (0, Status::InfUnrepresentable),
        Class::Zero => (0, Status::Exact),
        Class::Finite => {
            // Magnitude after rounding: `low` holds its low 64 bits, `big` says it is >= 2^64.
            let (low, big, inexact) = if x.exp >= 0 {
                let e = x.exp as u32;
                let big = e >= 64 || x.mant.leading_zeros() < e;
                let low = if e >= 64 { 0 } else { x.mant << e };
                (low, big, x.sticky)
            } else {
                let (q, inexact) = shift_round(x.mant, x.exp.unsigned_abs(), x.sticky, x.neg, mode);
                // A carry out of `u64::MAX` is only possible with shift 0, excluded here.
                (q, false, inexact)
            };
            let status = if inexact {
                Status::Inexact
            } else {
                Status::Exact
            };
            let v: i128 = if x.neg { -(low as i128) } else { low as i128 };
            if !big && v >= l.min() && v <= l.max() {
                return ((v as u64) & l.mask(), status);
            }
            match oor {
                OutOfRange::Error => (0, Status::OutOfRange),
                OutOfRange::Clamp => {
                    let c = if x.neg { l.min() } else { l.max() };
                    ((c as u64) & l.mask(), Status::Clamped)
                }
                OutOfRange::Wrap => {
                    // Congruent modulo 2^N: only the low N bits of the two's complement of
                    // the (possibly huge) rounded value matter, and those are in `low`.
                    let w = if x.neg { low.wrapping_neg() } else { low };
                    (w & l.mask(), Status::Wrapped)
                }
            }
        }
    }
}
