//! `bitround` (alias `numcodecs.bitround`): drop low mantissa bits, rounding half to even.
//!
//! Specification: zarr-extensions `codecs/bitround/README.md`.
//!
//! ```json
//! {"name": "bitround", "configuration": {"keepbits": 10}}
//! ```
//!
//! Floats use numcodecs' bit formula (an integer add on the code: the carry may reach the
//! exponent, so the largest finite value can become Inf), except that a NaN is left exactly
//! as it is. Integers round the *magnitude* from its most significant set bit and keep the
//! sign, taking the truncated value when rounding up would leave the type's range (catalogue
//! `int-bitround-signed`; it reproduces the spec's `sample_data` byte for byte). Complex
//! types round each component; `numpy.datetime64`/`numpy.timedelta64` round as int64 (NaT,
//! `i64::MIN`, stays NaT). Decoding is the identity. `keepbits` must be at least 1 (catalogue
//! `keepbits-zero`) and, for floats, at most the mantissa width (`keepbits-too-large`).

use serde_json::{Map, Value};

use super::ArrayCodec;
use crate::dtype::{DType, Kind};
use crate::error::{ElementError, MetadataError};

/// The Zarr name.
pub const NAME: &str = "bitround";
/// The deprecated alias.
pub const ALIAS: &str = "numcodecs.bitround";

/// The data types the spec lists for bitround: "float16, float32, float64, bfloat16,
/// complex_float16/32/64, complex_bfloat16, complex64, complex128, int8…int64, uint8…uint64,
/// numpy.timedelta64, numpy.datetime64".
pub fn supports(kind: Kind) -> bool {
    match kind {
        Kind::Int(l) => l.bits >= 8,
        Kind::Float(l) | Kind::Complex(l) => l.mantissa_bits >= 7 && l.signed && l.inf,
        Kind::DateTime | Kind::TimeDelta => true,
    }
}

/// `bitround` on element type `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRound<T: DType> {
    keepbits: u32,
    /// `keepbits` as configured (an integer's may exceed 64), for `to_metadata`.
    configured: u64,
    alias: bool,
    _t: std::marker::PhantomData<T>,
}

fn field(reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field: "keepbits",
        reason: reason.into(),
    }
}

/// Parse and check `keepbits` from a `configuration` object (data-type independent part).
///
/// # Errors
/// A missing or non-object configuration, unknown keys, a keepbits that is not an integer
/// of at least 1.
pub fn parse_keepbits(config: Option<&Value>) -> Result<u64, MetadataError> {
    let Some(Value::Object(map)) = config else {
        return Err(MetadataError::Field {
            codec: NAME,
            field: "configuration",
            reason: "bitround requires a configuration object with `keepbits`".into(),
        });
    };
    if let Some(k) = map.keys().find(|k| *k != "keepbits") {
        return Err(MetadataError::Field {
            codec: NAME,
            field: "configuration",
            reason: format!("unknown key {k:?}"),
        });
    }
    let v = map.get("keepbits").ok_or_else(|| field("missing"))?;
    match v.as_u64() {
        Some(k) if k >= 1 && !v.to_string().contains(['.', 'e', 'E']) => Ok(k),
        _ => Err(field(format!("must be an integer >= 1, got {v}"))),
    }
}

impl<T: DType> BitRound<T> {
    /// A codec keeping `keepbits` bits.
    ///
    /// # Errors
    /// `keepbits` of 0, above a float's mantissa width, or a data type bitround does not
    /// support.
    pub fn new(keepbits: u64) -> Result<Self, MetadataError> {
        if !supports(T::KIND) {
            return Err(MetadataError::UnsupportedDataType {
                codec: NAME,
                dtype: T::NAME.into(),
                reason: "bitround supports float16/32/64, bfloat16, their complex types, int8..uint64 and numpy datetime/timedelta",
            });
        }
        if keepbits == 0 {
            return Err(field("must be an integer >= 1, got 0"));
        }
        if let Kind::Float(l) | Kind::Complex(l) = T::KIND {
            if keepbits > l.mantissa_bits as u64 {
                return Err(field(format!(
                    "keepbits {keepbits} > mantissa bits {} of {}",
                    l.mantissa_bits,
                    T::NAME
                )));
            }
        }
        Ok(BitRound {
            keepbits: keepbits.min(64) as u32,
            configured: keepbits,
            alias: false,
            _t: std::marker::PhantomData,
        })
    }

    /// Parse a `configuration` object.
    ///
    /// # Errors
    /// See [`parse_keepbits`] and [`BitRound::new`].
    pub fn from_configuration(config: Option<&Value>, alias: bool) -> Result<Self, MetadataError> {
        let mut c = Self::new(parse_keepbits(config)?)?;
        c.alias = alias;
        Ok(c)
    }

    /// The number of bits kept.
    pub fn keepbits(&self) -> u32 {
        self.keepbits
    }

    /// Round in place.
    pub fn encode_in_place(&self, data: &mut [T]) {
        let k = self.keepbits;
        crate::arch::vectorized(
            #[inline(always)]
            || {
                for x in data {
                    *x = x.bitround(k);
                }
            },
        );
    }
}

impl<T: DType> ArrayCodec for BitRound<T> {
    type In = T;
    type Out = T;

    fn name(&self) -> &'static str {
        if self.alias { ALIAS } else { NAME }
    }

    fn encode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        let k = self.keepbits;
        crate::arch::vectorized(
            #[inline(always)]
            || {
                for (s, d) in src.iter().zip(dst.iter_mut()) {
                    *d = s.bitround(k);
                }
            },
        );
        Ok(())
    }

    fn decode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        let n = src.len().min(dst.len());
        dst[..n].copy_from_slice(&src[..n]);
        Ok(())
    }

    fn to_metadata(&self) -> Value {
        let mut config = Map::new();
        config.insert("keepbits".into(), Value::from(self.configured));
        let mut obj = Map::new();
        obj.insert("name".into(), Value::from(self.name()));
        obj.insert("configuration".into(), Value::Object(config));
        Value::Object(obj)
    }
}
