//! Decoding a float code to an [`Exact`] value, and rounding an [`Exact`] value into a float
//! format, in pure integer arithmetic on the bits.
//!
//! Rounding is done once, from the exact value, with an unbounded exponent; only then is the
//! range checked. This is the order the cast_value spec requires:
//!
//! > If applicable, the rounding rule defined in the `rounding` field MUST be applied before
//! > the `out_of_range` transformation.
//!
//! so `245.0 -> float8_e4m3` (nearest-even) is `240` and in range, `65519.0 -> float16` is
//! `65504`, while `65520.0` rounds to `65536` and is out of range.

use super::exact::{Class, Exact};
use super::layout::{FloatLayout, NanEncoding};
use super::round::shift_round;
use super::{OutOfRange, Rounding, Status};

// In this module, not `exact.rs`: `exact` is below `float`, which rounds.
impl Exact {
    /// The value as `f64` (exact for every value decoded from a supported type).
    pub fn to_f64(self) -> f64 {
        let (bits, _) = round_to_float(
            &super::layout::FLOAT64,
            self,
            Rounding::NearestEven,
            OutOfRange::Clamp,
        );
        f64::from_bits(bits)
    }
}

/// Decode a code of format `l` (bits above the format's width are ignored).
#[inline]
pub const fn decode_float(l: &FloatLayout, bits: u64) -> Exact {
    let m_bits = l.mantissa_bits;
    let mag = bits & l.magnitude_mask();
    let neg = l.signed && bits & l.sign_bit() != 0;
    let exp_field = mag >> m_bits;
    let frac = mag & ((1u64 << m_bits) - 1);
    let exp_all_ones = exp_field == (1u64 << l.exponent_bits) - 1;
    match l.nan {
        NanEncoding::Ieee if exp_all_ones => {
            return if frac == 0 {
                Exact::inf(neg)
            } else {
                Exact::NAN
            };
        }
        NanEncoding::AllOnes if mag == l.magnitude_mask() => return Exact::NAN,
        NanEncoding::NegativeZero if neg && mag == 0 => return Exact::NAN,
        _ => {}
    }
    if l.subnormals {
        if exp_field == 0 {
            // Zero or subnormal: frac × 2^(emin - M).
            return Exact::finite(neg, frac, l.min_normal_exponent() - m_bits as i32);
        }
        let e = exp_field as i32 - l.bias - m_bits as i32;
        Exact::finite(neg, frac | (1u64 << m_bits), e)
    } else {
        let e = exp_field as i32 - l.bias - m_bits as i32;
        Exact::finite(neg, frac | (1u64 << m_bits), e)
    }
}

/// Build the decode table of a format of at most 8 bits (`N` = 2^bits).
pub const fn decode_table<const N: usize>(l: &FloatLayout) -> [Exact; N] {
    let mut t = [Exact::ZERO; N];
    let mut i = 0;
    while i < N {
        t[i] = decode_float(l, i as u64);
        i += 1;
    }
    t
}

/// Round `x` into format `l` under `mode`, then apply `oor` to a rounded value outside the
/// finite range. Returns the code and what happened.
///
/// Specials: NaN goes to the canonical NaN, or is [`Status::NanUnrepresentable`] in a format
/// without NaN; ±Inf goes to ±Inf, or is [`Status::InfUnrepresentable`] (the catalogue's
/// `inf-clamp`: even `clamp` does not map Inf to a finite value). -0 stays -0 where the
/// format has it and becomes +0 otherwise.
///
/// Out of range: [`OutOfRange::Clamp`] gives ±Inf in a format with infinities (the spec:
/// "values outside the finite range of the data type MUST be mapped to ±Infinity"), else the
/// largest finite value of that sign; for an unsigned format a negative value or zero, or a
/// value below the smallest one, clamps to the smallest value. [`OutOfRange::Wrap`] is not
/// defined for floats and reports [`Status::OutOfRange`].
#[inline]
pub fn round_to_float(l: &FloatLayout, x: Exact, mode: Rounding, oor: OutOfRange) -> (u64, Status) {
    let sign = if x.neg { l.sign_bit() } else { 0 };
    match x.class {
        Class::Nan => match l.nan_bits() {
            Some(b) => (b, Status::Exact),
            None => (0, Status::NanUnrepresentable),
        },
        Class::Inf => match l.inf_bits() {
            Some(b) if l.signed || !x.neg => (b | sign, Status::Exact),
            _ => (0, Status::InfUnrepresentable),
        },
        Class::Zero => {
            if !l.subnormals {
                out_of_range_low(oor)
            } else if l.has_negative_zero() {
                (sign, Status::Exact)
            } else {
                (0, Status::Exact)
            }
        }
        Class::Finite => {
            if x.neg && !l.signed {
                return out_of_range_low(oor);
            }
            round_finite(l, x, mode, oor, sign)
        }
    }
}

#[inline]
fn round_finite(
    l: &FloatLayout,
    x: Exact,
    mode: Rounding,
    oor: OutOfRange,
    sign: u64,
) -> (u64, Status) {
    let m_bits = l.mantissa_bits;
    let lz = x.mant.leading_zeros();
    let n = x.mant << lz;
    // Exponent of the value's most significant bit.
    let e_msb = x.exp as i64 + 63 - lz as i64;
    let emin = l.min_normal_exponent() as i64;
    // Bits of `n` below the target's quantum at this magnitude.
    let below_min = if l.subnormals && e_msb < emin {
        emin - e_msb
    } else {
        0
    };
    let shift = (63 - m_bits as i64 + below_min).min(200) as u32;
    let (q, inexact) = shift_round(n, shift, x.sticky, x.neg, mode);
    let status = if inexact {
        Status::Inexact
    } else {
        Status::Exact
    };
    let max = l.max_finite_bits();
    let mag = if below_min > 0 {
        // Subnormal range: the quantum is 2^(emin - M), so the code is the quotient itself,
        // and a carry to 2^M lands exactly on the smallest normal code.
        q
    } else {
        // `q` is in [2^M, 2^(M+1)]; adding it to the exponent field minus the implicit bit
        // lets a carry bump the exponent.
        let biased = e_msb + l.bias as i64;
        if !l.subnormals && biased < 0 {
            // e8m0: below 2^-bias. Rounding may still reach the smallest value.
            let need = -biased; // how many binades below the smallest
            if need == 1 && q == 1u64 << (m_bits + 1) {
                return (0, status);
            }
            return out_of_range_low(oor);
        }
        if biased > (max >> m_bits) as i64 + 1 {
            return out_of_range_high(l, oor, sign);
        }
        ((biased as u64) << m_bits) + q - (1u64 << m_bits)
    };
    if mag > max {
        return out_of_range_high(l, oor, sign);
    }
    if mag == 0 && !l.has_negative_zero() {
        return (0, status);
    }
    (sign | mag, status)
}

#[inline]
fn out_of_range_high(l: &FloatLayout, oor: OutOfRange, sign: u64) -> (u64, Status) {
    match oor {
        OutOfRange::Clamp => match l.inf_bits() {
            Some(inf) => (sign | inf, Status::Clamped),
            None => (sign | l.max_finite_bits(), Status::Clamped),
        },
        OutOfRange::Error | OutOfRange::Wrap => (0, Status::OutOfRange),
    }
}

/// Below the smallest value of a format without zero (or negative, for an unsigned format).
#[inline]
fn out_of_range_low(oor: OutOfRange) -> (u64, Status) {
    match oor {
        OutOfRange::Clamp => (0, Status::Clamped),
        OutOfRange::Error | OutOfRange::Wrap => (0, Status::OutOfRange),
    }
}
