//! The `configuration` of `cast_value`, untyped: parsed and checked once from JSON, and
//! written back as it was read, so that the typed codec and the run-time stage share one
//! reading and one writing of the metadata.

use serde_json::{Map, Value};

use super::{NAME, field};
use crate::error::{MetadataError, choices, unknown_key};
use crate::metadata::DataType;
use crate::number::{CastOptions, OutOfRange, Rounding};

/// The untyped `configuration` of a `cast_value` codec, as parsed from JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct CastValueConfig {
    /// Target data type.
    pub data_type: DataType,
    /// Rounding mode (`nearest-even` when absent).
    pub rounding: Rounding,
    /// Whether `rounding` was written (so that metadata round-trips as written).
    pub rounding_explicit: bool,
    /// Out-of-range rule ([`OutOfRange::Error`] when absent).
    pub out_of_range: OutOfRange,
    /// The raw `scalar_map` object, typed when the codec is bound to its data types.
    pub scalar_map: Option<Value>,
}

crate::metadata::serde_as_json!(
    CastValueConfig,
    CastValueConfig::to_configuration,
    |v: &Value| CastValueConfig::from_configuration(Some(v))
);

impl CastValueConfig {
    /// The `configuration` object: what [`Self::from_configuration`] reads back to `self`.
    ///
    /// ```
    /// use zquant::CastValueConfig;
    /// let json = serde_json::json!({"data_type": "uint8", "out_of_range": "clamp"});
    /// let config = CastValueConfig::from_configuration(Some(&json))?;
    /// assert_eq!(config.to_configuration(), json);
    /// // serde gives the same shape.
    /// assert_eq!(serde_json::to_value(&config).unwrap(), json);
    /// let back: CastValueConfig = serde_json::from_value(json).unwrap();
    /// assert_eq!(back, config);
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    pub fn to_configuration(&self) -> Value {
        let opts = CastOptions::new(self.rounding, self.out_of_range);
        let obj = metadata(
            self.data_type.id.name(),
            opts,
            self.rounding_explicit,
            self.scalar_map.clone(),
        );
        let mut config = obj.get("configuration").cloned().unwrap_or_default();
        // A target with a configuration (a time type) is written as its object.
        if let Value::Object(m) = &mut config {
            m.insert("data_type".into(), self.data_type.to_json());
        }
        config
    }

    /// The former name of [`CastValueConfig::from_configuration`] (zquant 0.1.0).
    ///
    /// # Errors
    /// As [`CastValueConfig::from_configuration`].
    #[deprecated(since = "0.2.0", note = "use `CastValueConfig::from_configuration`")]
    pub fn from_json(config: Option<&Value>) -> Result<Self, MetadataError> {
        Self::from_configuration(config)
    }

    /// Parse a `configuration` object.
    ///
    /// # Errors
    /// A missing or non-object configuration, unknown keys, an unknown data type, an unknown
    /// rounding or out_of_range value (`null` included).
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let Some(Value::Object(map)) = config else {
            return Err(field(
                "configuration",
                "cast_value requires a configuration object",
            ));
        };
        const KEYS: &[&str] = &["data_type", "rounding", "out_of_range", "scalar_map"];
        if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(field("configuration", unknown_key(k, KEYS)));
        }
        let data_type = match map.get("data_type") {
            None => return Err(field("data_type", "missing")),
            Some(v) => DataType::from_json(v).map_err(|e| field("data_type", e.to_string()))?,
        };
        let rounding = match map.get("rounding") {
            None => Rounding::NearestEven,
            Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
                let word = v.as_str().unwrap_or_default();
                let names = Rounding::ALL.map(Rounding::name);
                field(
                    "rounding",
                    format!("unknown rounding mode {v}: {}", choices(word, &names)),
                )
            })?,
        };
        let out_of_range = match map.get("out_of_range") {
            None => OutOfRange::Error,
            Some(Value::String(s)) if s == "clamp" => OutOfRange::Clamp,
            Some(Value::String(s)) if s == "wrap" => OutOfRange::Wrap,
            Some(v) => {
                let word = v.as_str().unwrap_or_default();
                return Err(field(
                    "out_of_range",
                    format!("unknown rule {v}: {}", choices(word, &["clamp", "wrap"])),
                ));
            }
        };
        let scalar_map = map.get("scalar_map").cloned();
        if let Some(sm) = &scalar_map {
            let Value::Object(m) = sm else {
                return Err(field(
                    "scalar_map",
                    "must be an object with `encode`/`decode` lists",
                ));
            };
            for (k, v) in m {
                if k != "encode" && k != "decode" {
                    return Err(field("scalar_map", unknown_key(k, &["encode", "decode"])));
                }
                let Value::Array(entries) = v else {
                    return Err(field(
                        "scalar_map",
                        format!("`{k}` must be an array of pairs"),
                    ));
                };
                if entries
                    .iter()
                    .any(|e| !matches!(e, Value::Array(p) if p.len() == 2))
                {
                    return Err(field("scalar_map", "every entry must be a length-2 array"));
                }
            }
        }
        Ok(CastValueConfig {
            data_type,
            rounding,
            rounding_explicit: map.contains_key("rounding"),
            out_of_range,
            scalar_map,
        })
    }
}

/// The `cast_value` metadata object.
pub(super) fn metadata(
    target: &str,
    opts: CastOptions,
    rounding_explicit: bool,
    scalar_map: Option<Value>,
) -> Value {
    let mut config = Map::new();
    config.insert("data_type".into(), Value::from(target));
    if rounding_explicit || opts.rounding != Rounding::NearestEven {
        config.insert("rounding".into(), Value::from(opts.rounding.name()));
    }
    match opts.out_of_range {
        OutOfRange::Error => {}
        OutOfRange::Clamp => {
            config.insert("out_of_range".into(), Value::from("clamp"));
        }
        OutOfRange::Wrap => {
            config.insert("out_of_range".into(), Value::from("wrap"));
        }
    }
    if let Some(sm) = scalar_map {
        config.insert("scalar_map".into(), sm);
    }
    let mut obj = Map::new();
    obj.insert("name".into(), Value::from(NAME));
    obj.insert("configuration".into(), Value::Object(config));
    Value::Object(obj)
}
