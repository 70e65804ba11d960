//! An exact, independent reference for `cast_value` conversions.
//!
//! Nothing here calls zquant's conversion code or converts between hardware floats. Each
//! built-in format is described from its data-type README (zarr-extensions `data-types/`)
//! in our own table ([`FORMATS`]); a code decodes to an exact dyadic rational ([`Mag`]:
//! `m × 2^e` with a `u128` significand); comparisons are exact (align exponents, compare
//! integers).
//!
//! Rounding a value `v` into a target goes by *neighbours*: a binary search over the target's
//! positive codes (whose values increase with the code; checked for every format of at most
//! 16 bits by a self-test) finds the largest representable `lo <= v` and the next value `hi`;
//! above the largest finite value the grid continues at the top binade's spacing (`hi = max +
//! 2^(e_max - M)`), so rounding happens first and the range check after it. The rounding mode
//! then picks `lo` or `hi` by an exact comparison of `v` with the midpoint `(lo + hi) / 2`;
//! a tie goes (nearest-even) to the neighbour that is an even multiple of `hi - lo`. Integers
//! use floor and floor + 1.
//!
//! The spec readings applied (conformance README, "Readings of the spec used here"):
//! - out of range with no rule (`Error`) fails even for float targets with infinities;
//!   `Clamp` gives ±Inf for targets with Inf (whatever the rounding mode), else ±max finite;
//!   `Wrap` is modulo 2^N for integers and an error for float targets;
//! - NaN -> canonical NaN where the target has NaN, else an error; ±Inf -> ±Inf where the
//!   target has Inf, else an error; both whatever the out-of-range rule (`inf-clamp`);
//! - -0 is kept where the target has -0, else +0;
//! - `float8_e8m0fnu` has no zero and no sign: 0, negatives and values that round below
//!   2^-127 are out of range, `Clamp` maps them to 2^-127 (code 0x00); ties go to the larger
//!   power of two (`e8m0-rounding`).

use std::cmp::Ordering;
use std::fmt;

use zquant::{CastOptions, OutOfRange, Rounding, Status};

// ---------------------------------------------------------------------------------------
// Exact dyadic magnitudes
// ---------------------------------------------------------------------------------------

/// A non-negative dyadic rational `m × 2^e`, kept normalized (`m` odd, or `m == 0` for zero)
/// so that structural equality is numerical equality.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mag {
    /// Significand.
    pub m: u128,
    /// Power-of-two exponent.
    pub e: i32,
}

impl Mag {
    /// Zero.
    pub const ZERO: Mag = Mag { m: 0, e: 0 };

    /// `m × 2^e`, normalized.
    pub fn new(m: u128, e: i32) -> Mag {
        if m == 0 {
            return Mag::ZERO;
        }
        let tz = m.trailing_zeros();
        Mag {
            m: m >> tz,
            e: e + tz as i32,
        }
    }

    /// `2^e`.
    pub fn pow2(e: i32) -> Mag {
        Mag { m: 1, e }
    }

    /// A non-negative integer.
    pub fn int(n: u128) -> Mag {
        Mag::new(n, 0)
    }

    /// Whether this is zero.
    pub fn is_zero(&self) -> bool {
        self.m == 0
    }

    /// Exponent of the most significant bit (undefined for zero).
    fn top(&self) -> i64 {
        self.e as i64 + 127 - self.m.leading_zeros() as i64
    }

    /// `self + o`, exactly (panics if the aligned sum needs more than 128 bits, which no
    /// caller produces: the operands are neighbours in one format).
    pub fn add(&self, o: &Mag) -> Mag {
        if self.is_zero() {
            return *o;
        }
        if o.is_zero() {
            return *self;
        }
        let e = self.e.min(o.e);
        let a = shl_exact(self.m, (self.e - e) as u32);
        let b = shl_exact(o.m, (o.e - e) as u32);
        Mag::new(a.checked_add(b).expect("reference: Mag::add overflow"), e)
    }

    /// `self - o` for `self >= o`, exactly.
    pub fn sub(&self, o: &Mag) -> Mag {
        assert!(*self >= *o, "reference: Mag::sub would be negative");
        if o.is_zero() {
            return *self;
        }
        let e = self.e.min(o.e);
        let a = shl_exact(self.m, (self.e - e) as u32);
        let b = shl_exact(o.m, (o.e - e) as u32);
        Mag::new(a - b, e)
    }

    /// `self / 2`.
    pub fn half(&self) -> Mag {
        if self.is_zero() {
            *self
        } else {
            Mag {
                m: self.m,
                e: self.e - 1,
            }
        }
    }

    /// Whether this is an integer.
    pub fn is_integer(&self) -> bool {
        self.is_zero() || self.e >= 0
    }

    /// `floor(self)` when it is below 2^127 (`None` otherwise).
    pub fn floor_small(&self) -> Option<u128> {
        if self.is_zero() {
            return Some(0);
        }
        if self.e >= 0 {
            if self.top() >= 127 {
                return None;
            }
            Some(self.m << self.e)
        } else if self.e <= -128 {
            Some(0)
        } else {
            Some(self.m >> (-self.e) as u32)
        }
    }

    /// `self mod 2^128` for an integer.
    pub fn low_u128(&self) -> u128 {
        assert!(self.is_integer());
        if self.is_zero() || self.e >= 128 {
            0
        } else {
            self.m.wrapping_shl(self.e as u32)
        }
    }

    /// An approximate `f64` for messages only (never used as a reference).
    pub fn approx(&self) -> f64 {
        (self.m as f64) * 2f64.powi(self.e)
    }
}

fn shl_exact(m: u128, s: u32) -> u128 {
    assert!(
        s < 128 && m.leading_zeros() > s,
        "reference: Mag alignment overflow"
    );
    m << s
}

impl Ord for Mag {
    fn cmp(&self, o: &Mag) -> Ordering {
        match (self.is_zero(), o.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => {
                let (ta, tb) = (self.top(), o.top());
                if ta != tb {
                    return ta.cmp(&tb);
                }
                // Same leading bit position: aligning to the smaller exponent moves the
                // larger-exponent significand up to at most bit 127.
                if self.e >= o.e {
                    (self.m << (self.e - o.e) as u32).cmp(&o.m)
                } else {
                    self.m.cmp(&(o.m << (o.e - self.e) as u32))
                }
            }
        }
    }
}

impl PartialOrd for Mag {
    fn partial_cmp(&self, o: &Mag) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Debug for Mag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            write!(f, "0")
        } else {
            write!(f, "{}*2^{} (~{:e})", self.m, self.e, self.approx())
        }
    }
}

/// An exact value: NaN, ±Inf or a signed number (zero included, with its sign).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Val {
    /// Not a number.
    Nan,
    /// ±Infinity.
    Inf {
        /// Negative infinity.
        neg: bool,
    },
    /// `±mag`.
    Num {
        /// The sign (meaningful for zero too).
        neg: bool,
        /// The magnitude.
        mag: Mag,
    },
}

// ---------------------------------------------------------------------------------------
// Our own table of formats
// ---------------------------------------------------------------------------------------

/// How a float format encodes NaN (from each README's wording).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nan {
    /// "no NaN".
    None,
    /// "IEEE 754-compliant, with NaN and +/-inf": all-ones exponent, non-zero fraction.
    Ieee,
    /// The single all-ones code ("NaN represented by `0b1111'1111`").
    AllOnes,
    /// "NaN represented by `0b1000'0000`" (the fnuz types: no -0).
    SignOnly,
}

/// A float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Float {
    /// Exponent field width.
    pub exp: u32,
    /// Fraction field width.
    pub man: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Has a sign bit.
    pub signed: bool,
    /// Exponent field 0 means zero/subnormals (false only for e8m0, where it is 2^-127).
    pub zero: bool,
    /// Has ±Infinity.
    pub inf: bool,
    /// NaN encoding.
    pub nan: Nan,
}

/// A built-in real format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Two's complement (`signed`) or unsigned integer of `bits` bits.
    Int {
        /// Width.
        bits: u32,
        /// Two's complement.
        signed: bool,
    },
    /// A float format.
    Float(Float),
}

const fn int(bits: u32, signed: bool) -> Format {
    Format::Int { bits, signed }
}

const fn ieee(exp: u32, man: u32, bias: i32) -> Format {
    Format::Float(Float {
        exp,
        man,
        bias,
        signed: true,
        zero: true,
        inf: true,
        nan: Nan::Ieee,
    })
}

const fn finite(exp: u32, man: u32, bias: i32, nan: Nan) -> Format {
    Format::Float(Float {
        exp,
        man,
        bias,
        signed: true,
        zero: true,
        inf: false,
        nan,
    })
}

/// Every built-in real format, by Zarr name, transcribed from the data-type READMEs.
pub const FORMATS: [(&str, Format); 26] = [
    ("int2", int(2, true)),
    ("int4", int(4, true)),
    ("int8", int(8, true)),
    ("int16", int(16, true)),
    ("int32", int(32, true)),
    ("int64", int(64, true)),
    ("uint2", int(2, false)),
    ("uint4", int(4, false)),
    ("uint8", int(8, false)),
    ("uint16", int(16, false)),
    ("uint32", int(32, false)),
    ("uint64", int(64, false)),
    // "1 sign bit, 5 exponent bits, 10 mantissa bits" etc. (IEEE 754)
    ("float16", ieee(5, 10, 15)),
    // "8 exponent bits, with bias of 127; 7 mantissa bits; IEEE 754-compliant"
    ("bfloat16", ieee(8, 7, 127)),
    ("float32", ieee(8, 23, 127)),
    ("float64", ieee(11, 52, 1023)),
    // "2 exponent bits, with bias of 1; 1 mantissa bit; no infinity, no NaN"
    ("float4_e2m1fn", finite(2, 1, 1, Nan::None)),
    // "2 exponent bits, with bias of 1; 3 mantissa bits; no infinity, no NaN"
    ("float6_e2m3fn", finite(2, 3, 1, Nan::None)),
    // "3 exponent bits, with bias of 3; 2 mantissa bits; no infinity, no NaN"
    ("float6_e3m2fn", finite(3, 2, 3, Nan::None)),
    // "3 exponent bits, with bias of 3; 4 mantissa bits; IEEE 754-compliant"
    ("float8_e3m4", ieee(3, 4, 3)),
    // "4 exponent bits, with bias of 7; 3 mantissa bits; IEEE 754-compliant"
    ("float8_e4m3", ieee(4, 3, 7)),
    // "4 exponent bits, with bias of 11; 3 mantissa bits; NaN represented by 0b1000'0000"
    ("float8_e4m3b11fnuz", finite(4, 3, 11, Nan::SignOnly)),
    // "4 exponent bits, with bias of 8; 3 mantissa bits; NaN represented by 0b1000'0000"
    ("float8_e4m3fnuz", finite(4, 3, 8, Nan::SignOnly)),
    // "5 exponent bits, with bias of 15; 2 mantissa bits; IEEE 754-compliant"
    ("float8_e5m2", ieee(5, 2, 15)),
    // "5 exponent bits, with bias of 16; 2 mantissa bits; NaN represented by 0b1000'0000"
    ("float8_e5m2fnuz", finite(5, 2, 16, Nan::SignOnly)),
    // "No sign bit; 8 exponent bits, with bias of 127; no mantissa bits; no zero, no
    // infinity, NaN represented by 0b1111'1111; no subnormal numbers"
    (
        "float8_e8m0fnu",
        Format::Float(Float {
            exp: 8,
            man: 0,
            bias: 127,
            signed: false,
            zero: false,
            inf: false,
            nan: Nan::AllOnes,
        }),
    ),
];

/// Our format for a Zarr data type name.
pub fn format(name: &str) -> Format {
    FORMATS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("reference: unknown format {name}"))
        .1
}

impl Format {
    /// Width in bits.
    pub fn bits(&self) -> u32 {
        match *self {
            Format::Int { bits, .. } => bits,
            Format::Float(f) => f.signed as u32 + f.exp + f.man,
        }
    }

    /// Mask of all code bits.
    pub fn mask(&self) -> u64 {
        let b = self.bits();
        if b == 64 { u64::MAX } else { (1u64 << b) - 1 }
    }

    /// Whether this is a float format.
    pub fn is_float(&self) -> bool {
        matches!(self, Format::Float(_))
    }

    /// Whether the format has a NaN.
    pub fn has_nan(&self) -> bool {
        matches!(self, Format::Float(f) if f.nan != Nan::None)
    }

    /// Whether the format has -0.
    pub fn has_neg_zero(&self) -> bool {
        matches!(self, Format::Float(f) if f.signed && f.zero && f.nan != Nan::SignOnly)
    }

    /// Decode a code (bits above the width are ignored).
    pub fn decode(&self, code: u64) -> Val {
        let code = code & self.mask();
        match *self {
            Format::Int { bits, signed } => {
                if signed && (code >> (bits - 1)) & 1 == 1 {
                    // Two's complement: the value is code - 2^bits.
                    let mag = (1u128 << bits) - code as u128;
                    Val::Num {
                        neg: true,
                        mag: Mag::int(mag),
                    }
                } else {
                    Val::Num {
                        neg: false,
                        mag: Mag::int(code as u128),
                    }
                }
            }
            Format::Float(f) => {
                let neg = f.signed && (code >> (f.exp + f.man)) & 1 == 1;
                let ef = (code >> f.man) & ((1u64 << f.exp) - 1);
                let fr = code & ((1u64 << f.man) - 1);
                let ef_ones = ef == (1u64 << f.exp) - 1;
                let fr_ones = fr == (1u64 << f.man) - 1;
                match f.nan {
                    Nan::Ieee if ef_ones => {
                        return if fr == 0 { Val::Inf { neg } } else { Val::Nan };
                    }
                    Nan::AllOnes if ef_ones && fr_ones => return Val::Nan,
                    Nan::SignOnly if neg && ef == 0 && fr == 0 => return Val::Nan,
                    _ => {}
                }
                let mag = if f.zero && ef == 0 {
                    // Subnormal: 0.fraction × 2^(1 - bias).
                    Mag::new(fr as u128, 1 - f.bias - f.man as i32)
                } else {
                    // Normal: 1.fraction × 2^(ef - bias).
                    Mag::new(
                        (1u128 << f.man) | fr as u128,
                        ef as i32 - f.bias - f.man as i32,
                    )
                };
                Val::Num { neg, mag }
            }
        }
    }

    /// The largest code whose value is a non-negative finite number. Codes `0..=max_code`
    /// have increasing values.
    pub fn max_code(&self) -> u64 {
        match *self {
            Format::Int { bits, signed } => {
                if signed {
                    (1u64 << (bits - 1)) - 1
                } else {
                    self.mask()
                }
            }
            Format::Float(f) => {
                let mag_mask = (1u64 << (f.exp + f.man)) - 1;
                match f.nan {
                    // Below the all-ones exponent.
                    Nan::Ieee => (((1u64 << f.exp) - 1) << f.man) - 1,
                    Nan::AllOnes => mag_mask - 1,
                    Nan::None | Nan::SignOnly => mag_mask,
                }
            }
        }
    }

    /// The value of a non-negative code `0..=max_code`.
    pub fn pos_value(&self, c: u64) -> Mag {
        match *self {
            Format::Int { .. } => Mag::int(c as u128),
            Format::Float(_) => match self.decode(c) {
                Val::Num { neg: false, mag } => mag,
                v => panic!("reference: code {c:#x} is not a non-negative number: {v:?}"),
            },
        }
    }

    /// The code of `-v` for a non-negative code `c` of value `v` (`None` when `-v` is not
    /// representable). `-0` is `+0` in formats without -0.
    pub fn negate(&self, c: u64) -> Option<u64> {
        match *self {
            Format::Int { signed, .. } => {
                if c == 0 {
                    Some(0)
                } else if signed {
                    Some(c.wrapping_neg() & self.mask())
                } else {
                    None
                }
            }
            Format::Float(f) => {
                if !f.signed {
                    return None;
                }
                if c == 0 && f.zero && !self.has_neg_zero() {
                    return Some(0);
                }
                Some(c | (1u64 << (f.exp + f.man)))
            }
        }
    }

    /// The code of the most negative finite value (integers) or of -max (floats).
    pub fn min_code(&self) -> u64 {
        match *self {
            Format::Int { bits, signed } => {
                if signed {
                    1u64 << (bits - 1)
                } else {
                    0
                }
            }
            Format::Float(_) => self.negate(self.max_code()).unwrap_or(0),
        }
    }

    /// Largest non-negative code whose value is `<= v` (`None` when `v` is below the
    /// smallest non-negative value, only possible without zero). Binary search.
    pub fn floor_code(&self, v: &Mag) -> Option<u64> {
        self.floor_code_by(v, |c| self.pos_value(c))
    }

    fn floor_code_by(&self, v: &Mag, value: impl Fn(u64) -> Mag) -> Option<u64> {
        if let Format::Int { .. } = self {
            // Integers: floor directly.
            let fl = v.floor_small().unwrap_or(u128::MAX);
            return Some(fl.min(self.max_code() as u128) as u64);
        }
        if *v < value(0) {
            return None;
        }
        let (mut lo, mut hi) = (0u64, self.max_code());
        // Invariant: value(lo) <= v; answer in lo..=hi.
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if value(mid) <= *v {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    }

    /// The code of an exact non-negative value, if representable.
    pub fn exact_code(&self, v: &Mag) -> Option<u64> {
        let c = self.floor_code(v)?;
        (self.pos_value(c) == *v).then_some(c)
    }

    /// The code of a signed exact value, if representable.
    pub fn code_of(&self, neg: bool, v: &Mag) -> Option<u64> {
        let c = self.exact_code(v)?;
        if neg { self.negate(c) } else { Some(c) }
    }

    /// The +Inf code, for formats with infinities.
    pub fn inf_code(&self) -> Option<u64> {
        match *self {
            Format::Float(f) if f.inf => Some(((1u64 << f.exp) - 1) << f.man),
            _ => None,
        }
    }

    /// Sign bit, 0 for unsigned formats and integers.
    pub fn sign_bit(&self) -> u64 {
        match *self {
            Format::Float(f) if f.signed => 1u64 << (f.exp + f.man),
            _ => 0,
        }
    }

    /// The grid point above the largest finite value, at the top binade's spacing.
    pub fn beyond_max(&self) -> Mag {
        let max = self.pos_value(self.max_code());
        match *self {
            Format::Int { .. } => max.add(&Mag::int(1)),
            Format::Float(f) => {
                let ef = (self.max_code() >> f.man) & ((1u64 << f.exp) - 1);
                max.add(&Mag::pow2(ef as i32 - f.bias - f.man as i32))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Expected results
// ---------------------------------------------------------------------------------------

/// What the reference expects of one conversion.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Expected {
    /// The status.
    pub status: Status,
    /// The code (meaningless when `status` is an error or `nan` is set).
    pub code: u64,
    /// The result is a NaN (any NaN code is accepted).
    pub nan: bool,
}

impl Expected {
    fn ok(status: Status, code: u64) -> Expected {
        Expected {
            status,
            code,
            nan: false,
        }
    }

    fn err(status: Status) -> Expected {
        Expected {
            status,
            code: 0,
            nan: false,
        }
    }

    /// Whether `(code, status)` from the library satisfies this expectation in format `t`.
    pub fn accepts(&self, t: &Format, code: u64, status: Status) -> bool {
        if status != self.status {
            return false;
        }
        if status.is_error() {
            return true;
        }
        if self.nan {
            return t.decode(code) == Val::Nan;
        }
        code & t.mask() == self.code
    }
}

/// Where one candidate result (a rounded value) lands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Landing {
    /// A representable value, this code (sign included).
    Code(u64),
    /// Below the smallest value of a format without zero, or negative in an unsigned float.
    FloatLow,
    /// Above the largest finite float.
    FloatHigh {
        /// Sign of the value.
        neg: bool,
    },
    /// An integer outside the target's range.
    IntOut {
        /// Sign of the value.
        neg: bool,
        /// Its low N bits in two's complement (the `wrap` result).
        wrapped: u64,
    },
}

/// The mode-independent analysis of one source value against one target.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Analysis {
    /// The same result under every option (NaN, ±Inf, zero into a format with zero).
    Fixed(Expected),
    /// The value is exactly representable in the unbounded grid (maybe out of range).
    Exact(Landing),
    /// Strictly between two grid neighbours.
    Between {
        /// Sign of the value.
        neg: bool,
        /// Where the smaller magnitude lands.
        lo: Landing,
        /// Where the larger magnitude lands.
        hi: Landing,
        /// `|v|` compared with the midpoint of the neighbours.
        vs_mid: Ordering,
        /// `lo` is an even multiple of `hi - lo` (ties-to-even picks it).
        lo_even: bool,
    },
}

/// A target format with precomputed tables.
pub struct Target {
    /// Zarr name.
    pub name: &'static str,
    /// The format.
    pub fmt: Format,
    /// Values of codes `0..=max_code` (formats of at most 16 bits).
    table: Option<Vec<Mag>>,
    max: Mag,
    beyond: Mag,
}

impl Target {
    /// The target for a Zarr name.
    pub fn new(name: &str) -> Target {
        let (name, fmt) = *FORMATS.iter().find(|(n, _)| *n == name).unwrap();
        let table = (fmt.is_float() && fmt.bits() <= 16)
            .then(|| (0..=fmt.max_code()).map(|c| fmt.pos_value(c)).collect());
        Target {
            name,
            fmt,
            table,
            max: fmt.pos_value(fmt.max_code()),
            beyond: fmt.beyond_max(),
        }
    }

    /// The value of a non-negative code.
    pub fn pos_value(&self, c: u64) -> Mag {
        match &self.table {
            Some(t) => t[c as usize],
            None => self.fmt.pos_value(c),
        }
    }

    /// Largest finite value.
    pub fn max(&self) -> Mag {
        self.max
    }

    /// The grid point after the largest finite value.
    pub fn beyond(&self) -> Mag {
        self.beyond
    }

    /// Largest non-negative code with value `<= v`.
    pub fn floor_code(&self, v: &Mag) -> Option<u64> {
        self.fmt.floor_code_by(v, |c| self.pos_value(c))
    }

    fn signed(&self, neg: bool, c: u64) -> Landing {
        if !neg {
            return Landing::Code(c);
        }
        match self.fmt.negate(c) {
            Some(code) => Landing::Code(code),
            None => match self.fmt {
                // Only a negative integer in an unsigned format: out of range.
                Format::Int { .. } => Landing::IntOut {
                    neg: true,
                    wrapped: c.wrapping_neg() & self.fmt.mask(),
                },
                Format::Float(_) => Landing::FloatLow,
            },
        }
    }

    /// Where the integer `±n` lands.
    fn int_landing(&self, neg: bool, n: &Mag) -> Landing {
        let Format::Int { bits, signed } = self.fmt else {
            unreachable!()
        };
        let limit = match (signed, neg) {
            (true, false) => Mag::int((1u128 << (bits - 1)) - 1),
            (true, true) => Mag::int(1u128 << (bits - 1)),
            (false, false) => Mag::int((1u128 << bits) - 1),
            (false, true) => Mag::ZERO,
        };
        let low = n.low_u128();
        let wrapped = (if neg { low.wrapping_neg() } else { low }) as u64 & self.fmt.mask();
        if *n <= limit {
            Landing::Code(wrapped)
        } else {
            Landing::IntOut { neg, wrapped }
        }
    }

    /// Analyse a source value.
    pub fn analyze(&self, v: &Val) -> Analysis {
        let fmt = &self.fmt;
        match *v {
            Val::Nan => Analysis::Fixed(if fmt.has_nan() {
                Expected {
                    status: Status::Exact,
                    code: 0,
                    nan: true,
                }
            } else {
                Expected::err(Status::NanUnrepresentable)
            }),
            Val::Inf { neg } => Analysis::Fixed(match fmt.inf_code() {
                Some(c) => Expected::ok(Status::Exact, c | if neg { fmt.sign_bit() } else { 0 }),
                None => Expected::err(Status::InfUnrepresentable),
            }),
            Val::Num { neg, mag } if mag.is_zero() => match *fmt {
                Format::Float(f) if !f.zero => Analysis::Exact(Landing::FloatLow),
                _ => {
                    let code = if neg && fmt.has_neg_zero() {
                        fmt.sign_bit()
                    } else {
                        0
                    };
                    Analysis::Fixed(Expected::ok(Status::Exact, code))
                }
            },
            Val::Num { neg, mag } => match *fmt {
                Format::Int { .. } => self.analyze_int(neg, &mag),
                Format::Float(f) => self.analyze_float(&f, neg, &mag),
            },
        }
    }

    fn analyze_int(&self, neg: bool, mag: &Mag) -> Analysis {
        if mag.is_integer() {
            return Analysis::Exact(self.int_landing(neg, mag));
        }
        let lo = mag.floor_small().expect("a non-integer is below 2^127");
        let hi = lo + 1;
        let mid = Mag::new(2 * lo + 1, -1);
        Analysis::Between {
            neg,
            lo: self.int_landing(neg, &Mag::int(lo)),
            hi: self.int_landing(neg, &Mag::int(hi)),
            vs_mid: mag.cmp(&mid),
            lo_even: lo.is_multiple_of(2),
        }
    }

    fn analyze_float(&self, f: &Float, neg: bool, mag: &Mag) -> Analysis {
        if neg && !f.signed {
            return Analysis::Exact(Landing::FloatLow);
        }
        let (lo_v, hi_v, lo, hi) = if *mag >= self.beyond {
            // At or past the first grid point above max: every mode lands above max.
            return Analysis::Exact(Landing::FloatHigh { neg });
        } else if *mag > self.max {
            (
                self.max,
                self.beyond,
                self.signed(neg, self.fmt.max_code()),
                Landing::FloatHigh { neg },
            )
        } else {
            match self.floor_code(mag) {
                None => {
                    // Below the smallest value of a format without zero (e8m0): the grid
                    // continues downwards with the binade below, 2^-128 for e8m0.
                    assert_eq!(f.man, 0, "reference: no-zero formats need man = 0");
                    let min = self.pos_value(0);
                    let below = min.half();
                    if *mag <= below {
                        return Analysis::Exact(Landing::FloatLow);
                    }
                    (below, min, Landing::FloatLow, self.signed(neg, 0))
                }
                Some(c) => {
                    let lo_v = self.pos_value(c);
                    if lo_v == *mag {
                        return Analysis::Exact(self.signed(neg, c));
                    }
                    (
                        lo_v,
                        self.pos_value(c + 1),
                        self.signed(neg, c),
                        self.signed(neg, c + 1),
                    )
                }
            }
        };
        debug_assert!(lo_v < *mag && *mag < hi_v);
        let d = hi_v.sub(&lo_v);
        assert!(
            d.m == 1,
            "reference: neighbours must differ by a power of two"
        );
        // lo = k × 2^d.e; k is even iff lo is a multiple of 2^(d.e + 1).
        let lo_even = lo_v.is_zero() || lo_v.e > d.e;
        assert!(lo_v.is_zero() || lo_v.e >= d.e);
        Analysis::Between {
            neg,
            lo,
            hi,
            vs_mid: mag.cmp(&lo_v.add(&hi_v).half()),
            lo_even,
        }
    }

    /// The expected result under `opts`.
    pub fn resolve(&self, a: &Analysis, opts: CastOptions) -> Expected {
        match *a {
            Analysis::Fixed(e) => e,
            Analysis::Exact(l) => self.land(l, Status::Exact, opts.out_of_range),
            Analysis::Between {
                neg,
                lo,
                hi,
                vs_mid,
                lo_even,
            } => {
                let up = match opts.rounding {
                    Rounding::NearestEven => {
                        vs_mid == Ordering::Greater || (vs_mid == Ordering::Equal && !lo_even)
                    }
                    Rounding::NearestAway => vs_mid != Ordering::Less,
                    Rounding::TowardsZero => false,
                    Rounding::TowardsPositive => !neg,
                    Rounding::TowardsNegative => neg,
                };
                self.land(if up { hi } else { lo }, Status::Inexact, opts.out_of_range)
            }
        }
    }

    fn land(&self, l: Landing, status: Status, oor: OutOfRange) -> Expected {
        match (l, oor) {
            (Landing::Code(c), _) => Expected::ok(status, c),
            (_, OutOfRange::Error) => Expected::err(Status::OutOfRange),
            (Landing::FloatLow | Landing::FloatHigh { .. }, OutOfRange::Wrap) => {
                Expected::err(Status::OutOfRange)
            }
            // Clamp below a format without zero: its smallest value.
            (Landing::FloatLow, OutOfRange::Clamp) => Expected::ok(Status::Clamped, 0),
            (Landing::FloatHigh { neg }, OutOfRange::Clamp) => {
                let sign = if neg { self.fmt.sign_bit() } else { 0 };
                let c = self.fmt.inf_code().unwrap_or(self.fmt.max_code());
                Expected::ok(Status::Clamped, c | sign)
            }
            (Landing::IntOut { neg, .. }, OutOfRange::Clamp) => Expected::ok(
                Status::Clamped,
                if neg {
                    self.fmt.min_code()
                } else {
                    self.fmt.max_code()
                },
            ),
            (Landing::IntOut { wrapped, .. }, OutOfRange::Wrap) => {
                Expected::ok(Status::Wrapped, wrapped)
            }
        }
    }

    /// The expected result of converting `v` under `opts` (analysis + resolution).
    pub fn expect(&self, v: &Val, opts: CastOptions) -> Expected {
        self.resolve(&self.analyze(v), opts)
    }
}

/// The three out-of-range rules.
pub const OUT_OF_RANGE: [OutOfRange; 3] = [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap];

/// All 15 option combinations.
pub fn all_options() -> impl Iterator<Item = CastOptions> {
    Rounding::ALL.into_iter().flat_map(|r| {
        OUT_OF_RANGE
            .into_iter()
            .map(move |o| CastOptions::new(r, o))
    })
}
