//! An independent, deliberately naive reading of the float data-type READMEs
//! (`data-types/*/README.md` of zarr-extensions and the core spec), used as the reference
//! that zquant's table-driven decoder is checked against. It shares no code with zquant.
//!
//! A format is "1 sign bit (or none), E exponent bits with bias B, M mantissa bits", plus
//! the README's special-value sentence, which is one of:
//!
//! - "IEEE 754-compliant, with NaN and +/-inf": the all-ones exponent is ±Inf (mantissa 0)
//!   or NaN (mantissa ≠ 0);
//! - "Extended range: no infinity, no NaN" (`fn`): every code is a number;
//! - "no infinity, NaN represented by `0b1000'0000`" (`fnuz`): that code is the only NaN
//!   and there is no -0;
//! - `float8_e8m0fnu`: "No sign bit (unsigned) […] No zero, no infinity, NaN represented by
//!   `0b1111'1111`. No subnormal numbers."
//!
//! "Subnormal numbers when biased exponent is 0" everywhere except e8m0.

#![allow(dead_code)]

/// The README's special-value rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    Ieee,
    Fn,
    Fnuz,
    E8M0,
}

/// One float format, as its README states it.
#[derive(Clone, Copy, Debug)]
pub struct Fmt {
    pub name: &'static str,
    pub exp_bits: u32,
    pub man_bits: u32,
    pub bias: i32,
    pub specials: Specials,
}

pub const FLOAT4_E2M1FN: Fmt = Fmt {
    name: "float4_e2m1fn",
    exp_bits: 2,
    man_bits: 1,
    bias: 1,
    specials: Specials::Fn,
};
pub const FLOAT6_E2M3FN: Fmt = Fmt {
    name: "float6_e2m3fn",
    exp_bits: 2,
    man_bits: 3,
    bias: 1,
    specials: Specials::Fn,
};
pub const FLOAT6_E3M2FN: Fmt = Fmt {
    name: "float6_e3m2fn",
    exp_bits: 3,
    man_bits: 2,
    bias: 3,
    specials: Specials::Fn,
};
pub const FLOAT8_E3M4: Fmt = Fmt {
    name: "float8_e3m4",
    exp_bits: 3,
    man_bits: 4,
    bias: 3,
    specials: Specials::Ieee,
};
pub const FLOAT8_E4M3: Fmt = Fmt {
    name: "float8_e4m3",
    exp_bits: 4,
    man_bits: 3,
    bias: 7,
    specials: Specials::Ieee,
};
pub const FLOAT8_E4M3B11FNUZ: Fmt = Fmt {
    name: "float8_e4m3b11fnuz",
    exp_bits: 4,
    man_bits: 3,
    bias: 11,
    specials: Specials::Fnuz,
};
pub const FLOAT8_E4M3FNUZ: Fmt = Fmt {
    name: "float8_e4m3fnuz",
    exp_bits: 4,
    man_bits: 3,
    bias: 8,
    specials: Specials::Fnuz,
};
pub const FLOAT8_E5M2: Fmt = Fmt {
    name: "float8_e5m2",
    exp_bits: 5,
    man_bits: 2,
    bias: 15,
    specials: Specials::Ieee,
};
pub const FLOAT8_E5M2FNUZ: Fmt = Fmt {
    name: "float8_e5m2fnuz",
    exp_bits: 5,
    man_bits: 2,
    bias: 16,
    specials: Specials::Fnuz,
};
pub const FLOAT8_E8M0FNU: Fmt = Fmt {
    name: "float8_e8m0fnu",
    exp_bits: 8,
    man_bits: 0,
    bias: 127,
    specials: Specials::E8M0,
};
pub const FLOAT16: Fmt = Fmt {
    name: "float16",
    exp_bits: 5,
    man_bits: 10,
    bias: 15,
    specials: Specials::Ieee,
};
pub const BFLOAT16: Fmt = Fmt {
    name: "bfloat16",
    exp_bits: 8,
    man_bits: 7,
    bias: 127,
    specials: Specials::Ieee,
};

/// The ten small float formats.
pub const SMALL: [Fmt; 10] = [
    FLOAT4_E2M1FN,
    FLOAT6_E2M3FN,
    FLOAT6_E3M2FN,
    FLOAT8_E3M4,
    FLOAT8_E4M3,
    FLOAT8_E4M3B11FNUZ,
    FLOAT8_E4M3FNUZ,
    FLOAT8_E5M2,
    FLOAT8_E5M2FNUZ,
    FLOAT8_E8M0FNU,
];

/// A decoded code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    Nan,
    Inf {
        neg: bool,
    },
    /// `(-1)^neg × sig × 2^exp`; `sig == 0` is a (signed) zero.
    Num {
        neg: bool,
        sig: u64,
        exp: i32,
    },
}

impl Fmt {
    pub fn signed(&self) -> bool {
        self.specials != Specials::E8M0
    }

    pub fn bits(&self) -> u32 {
        self.signed() as u32 + self.exp_bits + self.man_bits
    }

    pub fn codes(&self) -> u64 {
        1u64 << self.bits()
    }

    /// Decode a code by the README's words.
    pub fn decode(&self, code: u64) -> Val {
        assert!(code < self.codes());
        let m_mask = (1u64 << self.man_bits) - 1;
        let man = code & m_mask;
        let e = (code >> self.man_bits) & ((1u64 << self.exp_bits) - 1);
        let neg = self.signed() && (code >> (self.exp_bits + self.man_bits)) & 1 == 1;
        let e_all_ones = e == (1u64 << self.exp_bits) - 1;
        match self.specials {
            Specials::Ieee if e_all_ones => {
                return if man == 0 { Val::Inf { neg } } else { Val::Nan };
            }
            Specials::Fnuz if code == 1u64 << (self.bits() - 1) => return Val::Nan,
            Specials::E8M0 => {
                if code == 0xff {
                    return Val::Nan;
                }
                // 2^(e - 127), no subnormals, no zero.
                return Val::Num {
                    neg: false,
                    sig: 1,
                    exp: e as i32 - self.bias,
                };
            }
            _ => {}
        }
        if e == 0 {
            // Subnormal: 0.mmm × 2^(1 - bias).
            Val::Num {
                neg,
                sig: man,
                exp: 1 - self.bias - self.man_bits as i32,
            }
        } else {
            // Normal: 1.mmm × 2^(e - bias).
            Val::Num {
                neg,
                sig: (1 << self.man_bits) | man,
                exp: e as i32 - self.bias - self.man_bits as i32,
            }
        }
    }

    /// The value as an `f64` (exact: every value here fits).
    pub fn value(&self, code: u64) -> f64 {
        match self.decode(code) {
            Val::Nan => f64::NAN,
            Val::Inf { neg } => {
                if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Val::Num { neg, sig, exp } => {
                let mag = sig as f64 * 2f64.powi(exp);
                if neg { -mag } else { mag }
            }
        }
    }
}

/// `a` and `b` are the same value: equal bits, except that any NaN equals any NaN.
pub fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}
