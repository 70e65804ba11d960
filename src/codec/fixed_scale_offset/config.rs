//! The `configuration` of `numcodecs.fixedscaleoffset`: Python numbers as `json.loads`
//! reads them, and Zarr v2 data type strings.

use serde_json::Value;

use super::field;
use super::numpy::from_v2_code;
use crate::dtype::DTypeId;
use crate::error::MetadataError;

/// A JSON number as Python's `json` module reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PyNumber {
    /// No fraction and no exponent: a Python `int`.
    Int(i128),
    /// A Python `float` (the nearest double to the decimal text).
    Float(f64),
}

impl PyNumber {
    /// Read a JSON number: a literal without `.` or exponent is a Python `int`, any other a
    /// `float`. Unless the build's `serde_json` keeps number text (`arbitrary_precision`,
    /// zquant's feature `exact-json`), an integer beyond `u64` and `-0` are held as doubles
    /// by serde_json and read as `float`s.
    ///
    /// # Errors
    /// Not a number; an integer beyond `i128`.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        let n = match v {
            Value::Number(n) => n,
            // What Python's `json` writes bare (`Infinity`, not JSON), as a string.
            Value::String(s) if s == "Infinity" => return Ok(PyNumber::Float(f64::INFINITY)),
            Value::String(s) if s == "-Infinity" => return Ok(PyNumber::Float(f64::NEG_INFINITY)),
            Value::String(s) if s == "NaN" => return Ok(PyNumber::Float(f64::NAN)),
            _ => return Err(format!("must be a JSON number, got {v}")),
        };
        let text = n.to_string();
        if text.contains(['.', 'e', 'E']) {
            text.parse::<f64>()
                .map(PyNumber::Float)
                .map_err(|e| format!("invalid number {text}: {e}"))
        } else {
            text.parse::<i128>()
                .map(PyNumber::Int)
                .map_err(|_| format!("integer {text} is too large"))
        }
    }

    /// The nearest double (Python's `float(int)`).
    pub fn to_f64(self) -> f64 {
        match self {
            PyNumber::Int(i) => i as f64,
            PyNumber::Float(f) => f,
        }
    }

    /// The JSON number, written so that it reads back as the same Python number.
    pub fn to_json(self) -> Value {
        match self {
            PyNumber::Int(i) => match (i64::try_from(i), u64::try_from(i)) {
                (Ok(v), _) => Value::from(v),
                (_, Ok(v)) => Value::from(v),
                _ => serde_json::from_str(&i.to_string()).unwrap_or(Value::Null),
            },
            // `{:?}` always writes a `.` or an exponent, so the text stays a float. An
            // infinity (read from a text like `1e400`, as Python does) or NaN has no JSON
            // number: it is written as the string `"Infinity"`/`"-Infinity"`/`"NaN"`, which
            // `from_json` reads back.
            PyNumber::Float(f) if !f.is_finite() => Value::from(if f.is_nan() {
                "NaN"
            } else if f > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            }),
            PyNumber::Float(f) => serde_json::from_str(&format!("{f:?}")).unwrap_or(Value::Null),
        }
    }
}

/// A `dtype`/`astype` value: the data type and the text it was written as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumpyDType {
    /// The data type.
    pub id: DTypeId,
    /// As written in the configuration.
    pub text: String,
}

/// Parse a Zarr v2 data type string (`"<f8"`, `"|u1"`, …) or a Zarr v3 data type name.
///
/// # Errors
/// An unknown or big-endian multi-byte data type.
pub fn parse_dtype(s: &str) -> Result<DTypeId, String> {
    if let Ok(id) = s.parse::<DTypeId>() {
        return Ok(id);
    }
    let (order, code) = match s.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (Some(c), &s[1..]),
        _ => (None, s),
    };
    let id = match code {
        "c8" => DTypeId::Complex64,
        "c16" => DTypeId::Complex128,
        _ => from_v2_code(code).ok_or_else(|| format!("unknown data type {s:?}"))?,
    };
    if order == Some('>') && id.size() > 1 {
        return Err(format!(
            "big-endian data type {s:?} is not supported (Zarr v3 arrays hold native values)"
        ));
    }
    Ok(id)
}

impl NumpyDType {
    fn from_json(name: &'static str, v: &Value) -> Result<Self, MetadataError> {
        Self::parse(super::NAME, name, v)
    }

    /// The member `key` of codec `codec`'s configuration: a data type string (see
    /// [`parse_dtype`]); the error names the codec and the key.
    pub(crate) fn parse(
        codec: &'static str,
        key: &'static str,
        v: &Value,
    ) -> Result<Self, MetadataError> {
        let err = |reason: String| MetadataError::Field {
            codec,
            field: key,
            reason,
        };
        let Value::String(s) = v else {
            return Err(err(format!("must be a data type string, got {v}")));
        };
        let id = parse_dtype(s).map_err(err)?;
        Ok(NumpyDType {
            id,
            text: s.clone(),
        })
    }

    /// The Zarr v2 string of a NumPy type (`"<f8"`, `"|u1"`).
    pub fn v2(id: DTypeId) -> Self {
        let kind = match id.kind() {
            crate::dtype::Kind::Float(_) => 'f',
            crate::dtype::Kind::Int(l) if l.signed => 'i',
            _ => 'u',
        };
        let order = if id.size() == 1 { '|' } else { '<' };
        NumpyDType {
            id,
            text: format!("{order}{kind}{}", id.size()),
        }
    }
}

/// The untyped `configuration` of a `numcodecs.fixedscaleoffset` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedScaleOffsetConfig {
    /// Subtracted before scaling.
    pub offset: PyNumber,
    /// Multiplied after subtracting.
    pub scale: PyNumber,
    /// The decoded data type.
    pub dtype: NumpyDType,
    /// The encoded data type, if written (`dtype` otherwise).
    pub astype: Option<NumpyDType>,
}

crate::metadata::serde_as_json!(
    FixedScaleOffsetConfig,
    FixedScaleOffsetConfig::to_configuration,
    |v: &Value| FixedScaleOffsetConfig::from_configuration(Some(v))
);

impl FixedScaleOffsetConfig {
    /// The `configuration` object, as numcodecs writes it.
    pub fn to_configuration(&self) -> Value {
        let mut config = serde_json::Map::new();
        config.insert("offset".into(), self.offset.to_json());
        config.insert("scale".into(), self.scale.to_json());
        config.insert("dtype".into(), Value::from(self.dtype.text.clone()));
        if let Some(a) = &self.astype {
            config.insert("astype".into(), Value::from(a.text.clone()));
        }
        Value::Object(config)
    }

    /// The former name of [`FixedScaleOffsetConfig::from_configuration`] (zquant 0.1.0).
    ///
    /// # Errors
    /// As [`FixedScaleOffsetConfig::from_configuration`].
    #[deprecated(
        since = "0.2.0",
        note = "use `FixedScaleOffsetConfig::from_configuration`"
    )]
    pub fn from_json(config: Option<&Value>) -> Result<Self, MetadataError> {
        Self::from_configuration(config)
    }

    /// Parse a `configuration` object.
    ///
    /// # Errors
    /// A missing or non-object configuration, unknown keys, a missing `offset`/`scale`/
    /// `dtype`, a non-number scalar, an unknown data type string.
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let Some(Value::Object(map)) = config else {
            return Err(field(
                "configuration",
                "numcodecs.fixedscaleoffset requires a configuration object",
            ));
        };
        const KEYS: &[&str] = &["offset", "scale", "dtype", "astype"];
        if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(field("configuration", crate::error::unknown_key(k, KEYS)));
        }
        let number = |name: &'static str| match map.get(name) {
            None => Err(field(name, "missing")),
            Some(v) => PyNumber::from_json(v).map_err(|e| field(name, e)),
        };
        let offset = number("offset")?;
        let scale = number("scale")?;
        let dtype = match map.get("dtype") {
            None => return Err(field("dtype", "missing")),
            Some(v) => NumpyDType::from_json("dtype", v)?,
        };
        let astype = map
            .get("astype")
            .map(|v| NumpyDType::from_json("astype", v))
            .transpose()?;
        Ok(FixedScaleOffsetConfig {
            offset,
            scale,
            dtype,
            astype,
        })
    }

    /// The encoded data type.
    pub fn astype_id(&self) -> DTypeId {
        self.astype.as_ref().map_or(self.dtype.id, |a| a.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_numbers() {
        let n = |s: &str| PyNumber::from_json(&serde_json::from_str(s).unwrap()).unwrap();
        assert_eq!(n("10"), PyNumber::Int(10));
        // serde_json holds `-0` as the double -0.0 unless it keeps the text
        // (`arbitrary_precision`); Python reads it as the int 0. Both encode alike.
        if cfg!(feature = "exact-json") {
            assert_eq!(n("-0"), PyNumber::Int(0));
        } else {
            assert_eq!(n("-0"), PyNumber::Float(-0.0));
        }
        assert_eq!(n("10.0"), PyNumber::Float(10.0));
        assert_eq!(n("1e3"), PyNumber::Float(1000.0));
        assert_eq!(n("0.1"), PyNumber::Float(0.1));
        for p in [
            PyNumber::Int(-5),
            PyNumber::Int(u64::MAX as i128),
            PyNumber::Float(10.0),
            PyNumber::Float(0.1),
            PyNumber::Float(-0.0),
            PyNumber::Float(1e300),
            PyNumber::Float(f64::INFINITY),
            PyNumber::Float(f64::NEG_INFINITY),
        ] {
            let back = PyNumber::from_json(&p.to_json()).unwrap();
            assert!(
                back == p && back.to_f64().to_bits() == p.to_f64().to_bits(),
                "{p:?}"
            );
        }
    }
}
