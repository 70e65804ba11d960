//! Bit layouts: the description from which every per-dtype routine is derived.
//!
//! A float format is fully described by its exponent and mantissa widths, its bias, and three
//! choices that the Zarr data-type specs spell out per type: whether it has ±Infinity, how
//! NaN is encoded (IEEE's all-ones exponent, a single all-ones code as in OCP `fn` formats,
//! the `fnuz` "negative zero is NaN" code, or none), and whether it is signed. Subnormals are
//! present in every signed format here; `float8_e8m0fnu` is the one format without them (its
//! exponent field 0 is the normal value 2^-127 and it has no zero).

/// How a float format encodes NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanEncoding {
    /// No NaN at all (e.g. `float4_e2m1fn`).
    None,
    /// IEEE 754: all-ones exponent with a non-zero mantissa. Canonical NaN: sign 0, mantissa
    /// MSB set, other mantissa bits 0 (the core spec's `"NaN"`).
    Ieee,
    /// A single code (per sign) with every exponent and mantissa bit set, as in OCP
    /// `float8_e4m3fn` (0x7f/0xff) and `float8_e8m0fnu` (0xff).
    AllOnes,
    /// The `fnuz` convention: the "negative zero" code `0b1000…0` is the only NaN.
    NegativeZero,
}

/// Description of a binary floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatLayout {
    /// Exponent field width.
    pub exponent_bits: u32,
    /// Stored mantissa (fraction) width; 0 for `float8_e8m0fnu`.
    pub mantissa_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Whether there is a sign bit (`false` only for `float8_e8m0fnu`).
    pub signed: bool,
    /// Whether exponent field 0 holds zero and subnormals. When `false` the field value 0 is
    /// an ordinary normal exponent and the format has no zero.
    pub subnormals: bool,
    /// Whether the all-ones exponent with a zero mantissa is ±Infinity.
    pub inf: bool,
    /// NaN encoding.
    pub nan: NanEncoding,
}

impl FloatLayout {
    /// Total width in bits.
    pub const fn bits(&self) -> u32 {
        self.signed as u32 + self.exponent_bits + self.mantissa_bits
    }

    /// Mask of the magnitude (exponent and mantissa) bits.
    pub const fn magnitude_mask(&self) -> u64 {
        (1u64 << (self.exponent_bits + self.mantissa_bits)) - 1
    }

    /// The sign bit (0 for unsigned formats).
    pub const fn sign_bit(&self) -> u64 {
        if self.signed {
            1u64 << (self.exponent_bits + self.mantissa_bits)
        } else {
            0
        }
    }

    /// Magnitude bits of the largest finite value. Codes above it (at the top of the
    /// magnitude range) are Infinity or NaN.
    pub const fn max_finite_bits(&self) -> u64 {
        let all = self.magnitude_mask();
        if self.inf || matches!(self.nan, NanEncoding::Ieee) {
            all - (1u64 << self.mantissa_bits)
        } else if matches!(self.nan, NanEncoding::AllOnes) {
            all - 1
        } else {
            all
        }
    }

    /// Whether the format has -0 (signed and not `fnuz`).
    pub const fn has_negative_zero(&self) -> bool {
        self.signed && self.subnormals && !matches!(self.nan, NanEncoding::NegativeZero)
    }

    /// Whether the format has a NaN.
    pub const fn has_nan(&self) -> bool {
        !matches!(self.nan, NanEncoding::None)
    }

    /// The canonical NaN code, as documented in each data-type spec.
    pub const fn nan_bits(&self) -> Option<u64> {
        match self.nan {
            NanEncoding::None => None,
            NanEncoding::Ieee => Some(
                (((1u64 << self.exponent_bits) - 1) << self.mantissa_bits)
                    | (1u64 << self.mantissa_bits >> 1),
            ),
            NanEncoding::AllOnes => Some(self.magnitude_mask()),
            NanEncoding::NegativeZero => Some(self.sign_bit()),
        }
    }

    /// Whether `bits` (sign included) is a NaN code.
    pub const fn is_nan_bits(&self, bits: u64) -> bool {
        let mag = bits & self.magnitude_mask();
        match self.nan {
            NanEncoding::None => false,
            NanEncoding::Ieee => mag > ((1u64 << self.exponent_bits) - 1) << self.mantissa_bits,
            NanEncoding::AllOnes => mag == self.magnitude_mask(),
            NanEncoding::NegativeZero => {
                (bits & (self.sign_bit() | self.magnitude_mask())) == self.sign_bit()
            }
        }
    }

    /// The +Infinity code.
    pub const fn inf_bits(&self) -> Option<u64> {
        if self.inf {
            Some(((1u64 << self.exponent_bits) - 1) << self.mantissa_bits)
        } else {
            None
        }
    }

    /// Unbiased exponent of the smallest normal value.
    pub const fn min_normal_exponent(&self) -> i32 {
        if self.subnormals {
            1 - self.bias
        } else {
            -self.bias
        }
    }

    /// Check that the description is one this crate can round into. Returns the problem.
    pub const fn validate(&self) -> Result<(), &'static str> {
        if self.exponent_bits < 1 || self.exponent_bits > 11 {
            return Err("exponent_bits must be in 1..=11");
        }
        if self.mantissa_bits > 52 {
            return Err("mantissa_bits must be at most 52");
        }
        if self.bits() > 64 {
            return Err("a float format must fit in 64 bits");
        }
        if self.inf && !matches!(self.nan, NanEncoding::Ieee) {
            return Err("a format with infinities must use IEEE NaN encoding");
        }
        if matches!(self.nan, NanEncoding::Ieee) && self.mantissa_bits == 0 {
            return Err("IEEE NaN encoding needs at least one mantissa bit");
        }
        if matches!(self.nan, NanEncoding::NegativeZero) && !self.signed {
            return Err("the fnuz NaN encoding needs a sign bit");
        }
        if !self.subnormals && (self.signed || self.mantissa_bits != 0) {
            return Err(
                "formats without subnormals are supported only as unsigned exponent-only formats (like e8m0)",
            );
        }
        Ok(())
    }
}

/// Description of a two's complement or unsigned integer format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntLayout {
    /// Width in bits (1 to 64).
    pub bits: u32,
    /// Two's complement signed, or unsigned.
    pub signed: bool,
}

impl IntLayout {
    /// Smallest value.
    pub const fn min(&self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    /// Largest value.
    pub const fn max(&self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }

    /// Mask of the value bits.
    pub const fn mask(&self) -> u64 {
        if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    /// Check that the description is usable. Returns the problem.
    pub const fn validate(&self) -> Result<(), &'static str> {
        if self.bits < 1 || self.bits > 64 {
            return Err("integer bits must be in 1..=64");
        }
        if self.signed && self.bits < 2 {
            return Err("a signed integer needs at least 2 bits");
        }
        Ok(())
    }
}

const fn ieee(exponent_bits: u32, mantissa_bits: u32) -> FloatLayout {
    FloatLayout {
        exponent_bits,
        mantissa_bits,
        bias: (1 << (exponent_bits - 1)) - 1,
        signed: true,
        subnormals: true,
        inf: true,
        nan: NanEncoding::Ieee,
    }
}

/// IEEE 754 binary64.
pub const FLOAT64: FloatLayout = ieee(11, 52);
/// IEEE 754 binary32.
pub const FLOAT32: FloatLayout = ieee(8, 23);
/// IEEE 754 binary16.
pub const FLOAT16: FloatLayout = ieee(5, 10);
/// bfloat16: the upper half of binary32.
pub const BFLOAT16: FloatLayout = ieee(8, 7);

/// The layout of a real (integer or float) element type: what the kernels and the
/// reference conversion take as a run-time parameter instead of a type parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// An integer format.
    Int(IntLayout),
    /// A float format.
    Float(FloatLayout),
}

impl Format {
    /// Meaningful bits of a code.
    pub const fn bits(&self) -> u32 {
        match self {
            Format::Int(l) => l.bits,
            Format::Float(l) => l.bits(),
        }
    }

    /// Mask of the meaningful bits.
    pub const fn mask(&self) -> u64 {
        let b = self.bits();
        if b >= 64 { u64::MAX } else { (1u64 << b) - 1 }
    }

    /// Whether this is exactly IEEE binary32 or binary64 (`Some(true)` for binary64).
    pub const fn hardware_float(&self) -> Option<bool> {
        match self {
            Format::Float(l) if is_ieee(l, &FLOAT64) => Some(true),
            Format::Float(l) if is_ieee(l, &FLOAT32) => Some(false),
            _ => None,
        }
    }
}

/// Field-by-field equality, usable in `const` context.
const fn is_ieee(l: &FloatLayout, ieee: &FloatLayout) -> bool {
    l.exponent_bits == ieee.exponent_bits
        && l.mantissa_bits == ieee.mantissa_bits
        && l.bias == ieee.bias
        && l.signed == ieee.signed
        && l.subnormals == ieee.subnormals
        && l.inf == ieee.inf
        && matches!(l.nan, NanEncoding::Ieee)
}
