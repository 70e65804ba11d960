//! Zarr v3 metadata: data types (with their configuration) and codec objects.
//!
//! Parsing is strict: unknown names, unknown keys and mistyped values are errors that name
//! the codec and the field. Serialization writes what parses back to the same configuration.

use serde_json::{Map, Value};

use crate::dtype::{DTypeId, Kind};
use crate::error::{MetadataError, choices};

/// `Serialize`/`Deserialize` through the type's Zarr JSON form: `$to(&self) -> Value` and
/// `$from(&Value) -> Result<Self, impl Display>`, so that serde writes exactly the shape Zarr
/// metadata has, and reads it with the same checks as the JSON constructors.
macro_rules! serde_as_json {
    ($t:ty, $to:expr, $from:expr) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let to: fn(&$t) -> serde_json::Value = $to;
                serde::Serialize::serialize(&to(self), s)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                let from = $from;
                from(&v).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use serde_as_json;

serde_as_json!(DataType, DataType::to_json, DataType::from_json);
serde_as_json!(CodecObject, CodecObject::to_json, CodecObject::from_json);

/// The time unit of `numpy.datetime64`/`numpy.timedelta64`.
pub const TIME_UNITS: &[&str] = &[
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic",
];

/// The configuration of `numpy.datetime64`/`numpy.timedelta64`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeConfig {
    /// One of [`TIME_UNITS`].
    pub unit: String,
    /// In `[1, 2^31 - 1]`.
    pub scale_factor: u32,
}

/// A data type as written in metadata: its identity plus, for time types, its configuration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataType {
    /// Which type.
    pub id: DTypeId,
    /// Unit and scale factor (time types only).
    pub time: Option<TimeConfig>,
}

fn dt_err(msg: impl Into<String>) -> MetadataError {
    MetadataError::DataType(msg.into())
}

impl DataType {
    /// A data type without configuration.
    pub fn new(id: DTypeId) -> Self {
        DataType { id, time: None }
    }

    /// Parse Zarr v3 data type metadata: a name string, or `{"name": …, "configuration": …}`.
    ///
    /// ```
    /// use serde_json::json;
    /// use zquant::{DTypeId, DataType};
    /// assert_eq!(DataType::from_json(&json!("bfloat16"))?.id, DTypeId::BFloat16);
    /// let t = DataType::from_json(&json!({"name": "numpy.datetime64",
    ///     "configuration": {"unit": "s", "scale_factor": 1}}))?;
    /// assert_eq!(t.time.as_ref().map(|c| c.unit.as_str()), Some("s"));
    /// assert!(DataType::from_json(&json!("float128")).is_err());
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// Unknown names, a missing or invalid time configuration, unknown keys.
    pub fn from_json(v: &Value) -> Result<Self, MetadataError> {
        let (name, config) = match v {
            Value::String(s) => (s.as_str(), None),
            Value::Object(m) => {
                if let Some(k) = m.keys().find(|k| *k != "name" && *k != "configuration") {
                    return Err(dt_err(format!("unknown key {k:?} in {v}")));
                }
                let Some(Value::String(s)) = m.get("name") else {
                    return Err(dt_err(format!("missing or non-string `name` in {v}")));
                };
                (s.as_str(), m.get("configuration"))
            }
            _ => return Err(dt_err(format!("unknown data type {v}"))),
        };
        let id: DTypeId = name
            .parse()
            .map_err(|e: crate::dtype::id::UnknownDType| dt_err(e.to_string()))?;
        let is_time = matches!(id.kind(), Kind::DateTime | Kind::TimeDelta);
        let time = match (is_time, config) {
            (false, None) => None,
            (false, Some(Value::Object(m))) if m.is_empty() => None,
            (false, Some(c)) => {
                return Err(dt_err(format!("{name} takes no configuration, got {c}")));
            }
            (true, None) => {
                return Err(dt_err(format!(
                    "{name} requires a configuration with unit and scale_factor"
                )));
            }
            (true, Some(c)) => Some(parse_time(name, c)?),
        };
        Ok(DataType { id, time })
    }

    /// Zarr v3 metadata: the name, or an object for time types.
    pub fn to_json(&self) -> Value {
        match &self.time {
            None => Value::from(self.id.name()),
            Some(t) => {
                let mut c = Map::new();
                c.insert("unit".into(), Value::from(t.unit.clone()));
                c.insert("scale_factor".into(), Value::from(t.scale_factor));
                let mut m = Map::new();
                m.insert("name".into(), Value::from(self.id.name()));
                m.insert("configuration".into(), Value::Object(c));
                Value::Object(m)
            }
        }
    }
}

fn parse_time(name: &str, c: &Value) -> Result<TimeConfig, MetadataError> {
    let Value::Object(m) = c else {
        return Err(dt_err(format!("{name}: configuration must be an object")));
    };
    if let Some(k) = m.keys().find(|k| *k != "unit" && *k != "scale_factor") {
        return Err(dt_err(format!("{name}: unknown configuration key {k:?}")));
    }
    let unit = match m.get("unit") {
        Some(Value::String(u)) if TIME_UNITS.contains(&u.as_str()) => u.clone(),
        other => return Err(dt_err(format!("{name}: invalid unit {other:?}"))),
    };
    let sf = m.get("scale_factor");
    let scale_factor = match sf.and_then(Value::as_u64) {
        Some(s)
            if (1..=i32::MAX as u64).contains(&s)
                && !sf.is_some_and(|v| v.to_string().contains(['.', 'e', 'E'])) =>
        {
            s as u32
        }
        _ => {
            return Err(dt_err(format!(
                "{name}: scale_factor must be an integer in [1, 2^31-1], got {sf:?}"
            )));
        }
    };
    Ok(TimeConfig { unit, scale_factor })
}

/// A codec object from a `codecs` list: its name and raw configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct CodecObject {
    /// The codec name.
    pub name: String,
    /// The `configuration` member, if present.
    pub configuration: Option<Value>,
}

impl CodecObject {
    /// The codec object: `{"name": …, "configuration": …}` (no `configuration` when absent).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::from(self.name.clone()));
        if let Some(c) = &self.configuration {
            m.insert("configuration".into(), c.clone());
        }
        Value::Object(m)
    }

    /// Parse `{"name": …, "configuration": …}` (a bare string is a codec without
    /// configuration, as Zarr allows).
    ///
    /// ```
    /// use zquant::CodecObject;
    /// let c = CodecObject::from_json(&serde_json::json!({"name": "bitround",
    ///     "configuration": {"keepbits": 5}, "must_understand": true}))?;
    /// assert_eq!(c.name, "bitround");
    /// assert_eq!(c.to_json(), serde_json::json!({"name": "bitround", "configuration": {"keepbits": 5}}));
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// Anything else, or unknown members.
    pub fn from_json(v: &Value) -> Result<Self, MetadataError> {
        match v {
            Value::String(s) => Ok(CodecObject {
                name: s.clone(),
                configuration: None,
            }),
            Value::Object(m) => {
                const MEMBERS: &[&str] = &["name", "configuration", "must_understand"];
                if let Some(k) = m.keys().find(|k| !MEMBERS.contains(&k.as_str())) {
                    return Err(MetadataError::CodecObject(format!(
                        "{v}: unknown member {k:?}: {}",
                        choices(k, MEMBERS)
                    )));
                }
                let Some(Value::String(name)) = m.get("name") else {
                    return Err(MetadataError::CodecObject(format!(
                        "`name` must be a string: {v}"
                    )));
                };
                // The core spec defines `must_understand` as a boolean.
                if let Some(mu) = m.get("must_understand")
                    && !mu.is_boolean()
                {
                    return Err(MetadataError::CodecObject(format!(
                        "codec {name:?}: `must_understand` must be true or false, got {mu}"
                    )));
                }
                Ok(CodecObject {
                    name: name.clone(),
                    configuration: m.get("configuration").cloned(),
                })
            }
            _ => Err(MetadataError::CodecObject(format!(
                "expected {{\"name\": …, \"configuration\": …}} or a name, got {v}"
            ))),
        }
    }
}
