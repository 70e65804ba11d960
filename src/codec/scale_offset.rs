//! `scale_offset`: `out = (in - offset) * scale`, decoded as `out = (in / scale) + offset`.
//!
//! Specification: zarr-extensions `codecs/scale_offset/README.md`.
//!
//! ```json
//! {"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}
//! ```
//!
//! > The encoding and decoding transformations MUST be performed using the arithmetic
//! > semantics of the input array's data type. If any intermediate or final value produced
//! > during encoding or decoding is not representable in that data type, implementations
//! > MUST treat this as an error.
//!
//! Integers: every intermediate is checked (`int8`: `127 - (-1) = 128` fails although
//! `128 * -1` would fit), and decoding needs `in / scale` to divide exactly. Floats: each
//! operation is rounded once to nearest-even in the type; an overflow gives ±Inf where the
//! type has infinities (catalogue `float-overflow-inf`) and fails otherwise, as does a NaN
//! result in a type without NaN. A missing `offset` is the additive identity 0, so decoding
//! `-0.0` gives `+0.0` (catalogue `negzero-identity`); in `float8_e8m0fnu`, which has no
//! zero, a missing offset leaves the value exactly as it is (`x - 0 = x`). `scale: 0` is a metadata error
//! (catalogue `scale-zero`).

use serde_json::{Map, Value};

use super::{ArrayCodec, Direction, element_error, element_error_at, map_slice};
use crate::convert::Class;
use crate::dtype::{ArithFault, Real};
use crate::error::{ElementError, MetadataError, Rule};

/// The Zarr name.
pub const NAME: &str = "scale_offset";

/// `scale_offset` on element type `T`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleOffset<T: Real> {
    offset: T,
    scale: T,
    /// Whether `offset`/`scale` were given (so that metadata round-trips as written).
    explicit: (bool, bool),
    /// The offset is missing and `T` has no zero (`float8_e8m0fnu`): the additive identity
    /// is not a value of `T`, so the subtraction and addition are skipped (exactly `x - 0`).
    no_offset: bool,
}

fn fault_rule(f: ArithFault) -> Rule {
    match f {
        ArithFault::InexactDivision => Rule::InexactDivision,
        _ => Rule::NotRepresentable,
    }
}

impl<T: Real> ScaleOffset<T> {
    /// A codec with the given offset and scale.
    ///
    /// # Errors
    /// [`MetadataError::Field`] when `scale` is zero (or -0).
    pub fn new(offset: T, scale: T) -> Result<Self, MetadataError> {
        Self::build(offset, scale, (true, true))
    }

    fn build(offset: T, scale: T, explicit: (bool, bool)) -> Result<Self, MetadataError> {
        if matches!(scale.to_exact().class, Class::Zero) {
            return Err(MetadataError::Field {
                codec: NAME,
                field: "scale",
                reason: "scale must be non-zero".into(),
            });
        }
        let no_zero = T::from_exact(crate::convert::Exact::ZERO, Default::default())
            .1
            .is_error();
        Ok(ScaleOffset {
            offset,
            scale,
            explicit,
            no_offset: !explicit.0 && no_zero,
        })
    }

    /// Parse the `configuration` object (absent = `None`: identity).
    ///
    /// # Errors
    /// Unknown keys, scalars that are not valid encodings for `T`, a zero scale.
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let zero = T::from_exact(crate::convert::Exact::ZERO, Default::default()).0;
        let one = T::from_exact(
            crate::convert::Exact::finite(false, 1, 0),
            Default::default(),
        )
        .0;
        let Some(config) = config else {
            return Self::build(zero, one, (false, false));
        };
        let Value::Object(map) = config else {
            return Err(MetadataError::Field {
                codec: NAME,
                field: "configuration",
                reason: format!("must be an object, got {config}"),
            });
        };
        if let Some(k) = map.keys().find(|k| *k != "offset" && *k != "scale") {
            return Err(MetadataError::Field {
                codec: NAME,
                field: "configuration",
                reason: format!("unknown key {k:?}"),
            });
        }
        let scalar = |field: &'static str, default: T| match map.get(field) {
            None => Ok((default, false)),
            Some(v) => T::fill_value_from_json(v)
                .map(|x| (x, true))
                .map_err(|source| MetadataError::Scalar {
                    codec: NAME,
                    field,
                    source,
                }),
        };
        let (offset, eo) = scalar("offset", zero)?;
        let (scale, es) = scalar("scale", one)?;
        Self::build(offset, scale, (eo, es))
    }

    /// The offset.
    pub fn offset(&self) -> T {
        self.offset
    }

    /// The scale.
    pub fn scale(&self) -> T {
        self.scale
    }

    #[inline(always)]
    fn encode_one(&self, x: T) -> (T, Option<Rule>) {
        let d = if self.no_offset {
            Ok(x)
        } else {
            x.checked_sub(self.offset)
        };
        match d.and_then(|d| d.checked_mul(self.scale)) {
            Ok(v) => (v, None),
            Err(f) => (x, Some(fault_rule(f))),
        }
    }

    #[inline(always)]
    fn decode_one(&self, x: T) -> (T, Option<Rule>) {
        match x.checked_div(self.scale).and_then(|d| {
            if self.no_offset {
                Ok(d)
            } else {
                d.checked_add(self.offset)
            }
        }) {
            Ok(v) => (v, None),
            Err(f) => (x, Some(fault_rule(f))),
        }
    }

    /// Encode in place.
    ///
    /// # Errors
    /// The first failing element (elements before it are already encoded).
    pub fn encode_in_place(&self, data: &mut [T]) -> Result<(), ElementError> {
        self.in_place(data, Direction::Encode)
    }

    /// Decode in place.
    ///
    /// # Errors
    /// The first failing element (elements before it are already decoded).
    pub fn decode_in_place(&self, data: &mut [T]) -> Result<(), ElementError> {
        self.in_place(data, Direction::Decode)
    }

    fn in_place(&self, data: &mut [T], dir: Direction) -> Result<(), ElementError> {
        for (i, x) in data.iter_mut().enumerate() {
            let (v, bad) = match dir {
                Direction::Encode => self.encode_one(*x),
                Direction::Decode => self.decode_one(*x),
            };
            if let Some(rule) = bad {
                return Err(element_error_at(NAME, dir, rule, i, Some(*x)));
            }
            *x = v;
        }
        Ok(())
    }
}

impl<T: Real> ArrayCodec for ScaleOffset<T> {
    type In = T;
    type Out = T;

    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        map_slice(src, dst, |x| self.encode_one(x))
            .map_err(|f| element_error(NAME, Direction::Encode, src, f))
    }

    fn decode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        map_slice(src, dst, |x| self.decode_one(x))
            .map_err(|f| element_error(NAME, Direction::Decode, src, f))
    }

    fn to_metadata(&self) -> Value {
        let mut config = Map::new();
        if self.explicit.0 {
            config.insert("offset".into(), self.offset.fill_value_to_json());
        }
        if self.explicit.1 {
            config.insert("scale".into(), self.scale.fill_value_to_json());
        }
        let mut obj = Map::new();
        obj.insert("name".into(), Value::from(NAME));
        if !config.is_empty() {
            obj.insert("configuration".into(), Value::Object(config));
        }
        Value::Object(obj)
    }
}
