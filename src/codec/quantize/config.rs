//! The `configuration` of `numcodecs.quantize`: `digits`, and Zarr v2 data type strings.

use serde_json::Value;

use super::{NAME, field};
use crate::codec::fixed_scale_offset::NumpyDType;
use crate::codec::numcodecs_filter::config_object;
use crate::dtype::DTypeId;
use crate::error::MetadataError;

/// The untyped `configuration` of a `numcodecs.quantize` codec (numcodecs' `Quantize`).
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeConfig {
    /// Decimal digits to keep.
    pub digits: i32,
    /// The decoded data type.
    pub dtype: NumpyDType,
    /// The encoded data type, if written (`dtype` otherwise).
    pub astype: Option<NumpyDType>,
}

crate::metadata::serde_as_json!(
    QuantizeConfig,
    QuantizeConfig::to_configuration,
    |v: &Value| { QuantizeConfig::from_configuration(Some(v)) }
);

impl QuantizeConfig {
    /// The `digits` numcodecs can compute a scale for: from `-308` (`10.0 ** 308` is the
    /// largest power of ten a float64 holds) to `307` (for `308` the scale `2.0 ** 1024`
    /// overflows and numcodecs raises `OverflowError`).
    pub const DIGITS: std::ops::RangeInclusive<i32> = -308..=307;

    /// The `configuration` object, as numcodecs writes it (without its `id`).
    pub fn to_configuration(&self) -> Value {
        let mut config = serde_json::Map::new();
        config.insert("digits".into(), Value::from(self.digits));
        config.insert("dtype".into(), Value::from(self.dtype.text.clone()));
        if let Some(a) = &self.astype {
            config.insert("astype".into(), Value::from(a.text.clone()));
        }
        Value::Object(config)
    }

    /// Parse a `configuration` object.
    ///
    /// ```
    /// let c = zquant::QuantizeConfig::from_configuration(Some(&serde_json::json!(
    ///     {"digits": 2, "dtype": "<f8", "astype": "<f4"})))?;
    /// assert_eq!((c.digits, c.astype_id().name()), (2, "float32"));
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// A missing or non-object configuration, unknown keys, a missing or non-integer
    /// `digits` or one outside [`Self::DIGITS`], a missing `dtype`, a data type string that is not
    /// one or not a float type (each error names its key).
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let map = config_object(NAME, config, &["digits", "dtype", "astype"])?;
        let digits = match map.get("digits") {
            None => return Err(field("digits", "missing")),
            Some(v) => v
                .as_i64()
                .filter(|_| !v.to_string().contains(['.', 'e', 'E']))
                .ok_or_else(|| field("digits", format!("must be an integer, got {v}")))?,
        };
        let digits = i32::try_from(digits)
            .ok()
            .filter(|d| Self::DIGITS.contains(d))
            .ok_or_else(|| {
                field(
                    "digits",
                    format!(
                        "{digits} is outside {}..={}, where numcodecs computes the scale \
                         2^ceil(log2(10^digits))",
                        Self::DIGITS.start(),
                        Self::DIGITS.end()
                    ),
                )
            })?;
        let float = |key: &'static str, v: &Value| {
            let d = NumpyDType::parse(NAME, key, v)?;
            if matches!(d.id, DTypeId::Float16 | DTypeId::Float32 | DTypeId::Float64) {
                Ok(d)
            } else {
                Err(field(
                    key,
                    format!(
                        "{:?} is {}: numcodecs.quantize supports only floating point data \
                         types (float16, float32, float64)",
                        d.text,
                        d.id.name()
                    ),
                ))
            }
        };
        let dtype = match map.get("dtype") {
            None => return Err(field("dtype", "missing")),
            Some(v) => float("dtype", v)?,
        };
        let astype = map.get("astype").map(|v| float("astype", v)).transpose()?;
        Ok(QuantizeConfig {
            digits,
            dtype,
            astype,
        })
    }

    /// The encoded data type.
    pub fn astype_id(&self) -> DTypeId {
        self.astype.as_ref().map_or(self.dtype.id, |a| a.id)
    }

    /// numcodecs' scale, `2.0 ** bits` with `bits = ceil(log2(10.0 ** -exp))` and `exp` the
    /// (floored) `log10(10.0 ** -digits)`: the smallest power of two not below
    /// `10^digits`, as a float64.
    ///
    /// numcodecs computes it with `pow`, `log10` and `log2` in doubles; `bits` is
    /// `ceil(digits · log2(10))` for every `digits` in [`Self::DIGITS`] (checked against numcodecs
    /// over the whole range: `digits · log2(10)` is never within 0.002 of an integer there,
    /// far beyond the rounding errors).
    pub fn scale(&self) -> f64 {
        let bits = (f64::from(self.digits) * std::f64::consts::LOG2_10).ceil() as i32;
        // Exact: a normal or subnormal power of two (`bits` is within -1023..=1020).
        if bits >= -1022 {
            f64::from_bits(((bits + 1023) as u64) << 52)
        } else {
            f64::from_bits(1u64 << (bits + 1074))
        }
    }
}
