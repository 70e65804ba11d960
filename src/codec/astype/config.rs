//! The `configuration` of `numcodecs.astype`: two Zarr v2 data type strings.

use serde_json::Value;

use super::{NAME, field};
use crate::codec::fixed_scale_offset::NumpyDType;
use crate::codec::numcodecs_filter::config_object;
use crate::dtype::DTypeId;
use crate::error::MetadataError;

/// The untyped `configuration` of a `numcodecs.astype` codec (numcodecs' `AsType`).
#[derive(Clone, Debug, PartialEq)]
pub struct AsTypeConfig {
    /// The encoded data type.
    pub encode_dtype: NumpyDType,
    /// The decoded data type, if written: zarr-python's wrapper fills it in from the array
    /// before it writes metadata; missing, it is the array's data type.
    pub decode_dtype: Option<NumpyDType>,
}

crate::metadata::serde_as_json!(AsTypeConfig, AsTypeConfig::to_configuration, |v: &Value| {
    AsTypeConfig::from_configuration(Some(v))
});

impl AsTypeConfig {
    /// The `configuration` object, as numcodecs writes it (without its `id`).
    pub fn to_configuration(&self) -> Value {
        let mut config = serde_json::Map::new();
        config.insert(
            "encode_dtype".into(),
            Value::from(self.encode_dtype.text.clone()),
        );
        if let Some(d) = &self.decode_dtype {
            config.insert("decode_dtype".into(), Value::from(d.text.clone()));
        }
        Value::Object(config)
    }

    /// Parse a `configuration` object.
    ///
    /// ```
    /// let c = zquant::AsTypeConfig::from_configuration(Some(&serde_json::json!(
    ///     {"encode_dtype": "<f4", "decode_dtype": "<f8"})))?;
    /// assert_eq!(c.encode_dtype.id.name(), "float32");
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// A missing or non-object configuration, unknown keys, a missing `encode_dtype`, a
    /// data type string that is not one (each error names its key).
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let map = config_object(NAME, config, &["encode_dtype", "decode_dtype"])?;
        let encode_dtype = match map.get("encode_dtype") {
            None => return Err(field("encode_dtype", "missing")),
            Some(v) => NumpyDType::parse(NAME, "encode_dtype", v)?,
        };
        let decode_dtype = map
            .get("decode_dtype")
            .map(|v| NumpyDType::parse(NAME, "decode_dtype", v))
            .transpose()?;
        Ok(AsTypeConfig {
            encode_dtype,
            decode_dtype,
        })
    }

    /// The decoded data type: `decode_dtype`, or `array` when it is not written.
    pub fn decode_id(&self, array: DTypeId) -> DTypeId {
        self.decode_dtype.as_ref().map_or(array, |d| d.id)
    }
}
