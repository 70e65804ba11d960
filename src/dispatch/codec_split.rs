//! [`CodecSplit`]: a `codecs` list in its three parts (array->array, array->bytes,
//! bytes->bytes), and the chain built from a whole list ([`DynChain::from_all_codecs`]).

use serde_json::Value;

use super::chain::DynChain;
use crate::codec::CODEC_NAMES;
use crate::error::MetadataError;
use crate::metadata::CodecObject;

/// Array->bytes codec names of the Zarr v3 core spec, zarr-extensions and numcodecs: the
/// first of them in a `codecs` list ends the array->array part.
pub const ARRAY_TO_BYTES: [&str; 9] = [
    "bytes",
    "sharding_indexed",
    "vlen-utf8",
    "vlen-bytes",
    "packbits",
    "zfp",
    "pcodec",
    "numcodecs.pcodec",
    "numcodecs.zfpy",
];

/// A `codecs` list in its three parts (Zarr v3 core spec, "Codecs": "array -> array"
/// codecs, then exactly one "array -> bytes" codec, then "bytes -> bytes" codecs).
#[derive(Clone, Debug, PartialEq)]
pub struct CodecSplit {
    /// zquant's array->array codecs, in encoding order.
    pub array_to_array: Vec<Value>,
    /// The array->bytes codec (`{"name": "bytes", ...}`, `sharding_indexed`, ...).
    pub array_to_bytes: Value,
    /// The bytes->bytes codecs (compressors, checksums), in encoding order.
    pub bytes_to_bytes: Vec<Value>,
}

fn split_err(reason: String) -> MetadataError {
    MetadataError::Field {
        codec: "codecs",
        field: "codecs",
        reason,
    }
}

impl CodecSplit {
    /// Split a full `codecs` list: zquant's array->array codecs up to the first array->bytes
    /// codec, that codec, and whatever follows it (never an "unknown codec": zquant does not
    /// run those parts itself).
    ///
    /// # Errors
    /// A malformed codec object; a codec before the array->bytes codec that is not one of
    /// zquant's; no array->bytes codec; one of zquant's codecs after it.
    pub fn from_codecs(codecs: &[Value]) -> Result<Self, MetadataError> {
        let mut array_to_array = Vec::new();
        let mut rest = codecs.iter().enumerate();
        let array_to_bytes = loop {
            let Some((i, c)) = rest.next() else {
                return Err(split_err(
                    "no array->bytes codec: add {\"name\": \"bytes\", \"configuration\": \
                     {\"endian\": \"little\"}} after the array->array codecs"
                        .into(),
                ));
            };
            let obj = CodecObject::from_json(c)?;
            if CODEC_NAMES.contains(&obj.name.as_str()) {
                array_to_array.push(c.clone());
            } else if ARRAY_TO_BYTES.contains(&obj.name.as_str()) {
                break c.clone();
            } else {
                return Err(split_err(format!(
                    "codec {i} ({:?}) is neither an array->array codec zquant runs \
                     ({CODEC_NAMES:?}) nor an array->bytes codec ({ARRAY_TO_BYTES:?})",
                    obj.name
                )));
            }
        };
        let mut bytes_to_bytes = Vec::new();
        for (i, c) in rest {
            let obj = CodecObject::from_json(c)?;
            if CODEC_NAMES.contains(&obj.name.as_str()) {
                return Err(split_err(format!(
                    "codec {i} ({:?}) is an array->array codec after the array->bytes codec; \
                     move it before {array_to_bytes}",
                    obj.name
                )));
            }
            bytes_to_bytes.push(c.clone());
        }
        Ok(CodecSplit {
            array_to_array,
            array_to_bytes,
            bytes_to_bytes,
        })
    }

    /// The full `codecs` list again.
    pub fn to_codecs(&self) -> Vec<Value> {
        let mut v = self.array_to_array.clone();
        v.push(self.array_to_bytes.clone());
        v.extend(self.bytes_to_bytes.iter().cloned());
        v
    }
}

impl DynChain {
    /// Build the chain of the array->array codecs of a full `codecs` list (array->bytes and
    /// bytes->bytes codecs included, as in `zarr.json`), and return the split list.
    ///
    /// ```
    /// use serde_json::json;
    /// let codecs = [
    ///     json!({"name": "bitround", "configuration": {"keepbits": 3}}),
    ///     json!({"name": "bytes", "configuration": {"endian": "big"}}),
    ///     json!({"name": "gzip", "configuration": {"level": 5}}),
    /// ];
    /// let (chain, split) = zquant::DynChain::from_all_codecs(&json!("float32"), &json!(0), &codecs)?;
    /// assert_eq!(chain.stages().len(), 1);
    /// assert_eq!(split.bytes_to_bytes.len(), 1);
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// As [`CodecSplit::from_codecs`] and [`DynChain::from_array_to_array_codecs`].
    pub fn from_all_codecs(
        data_type: &Value,
        fill_value: &Value,
        codecs: &[Value],
    ) -> Result<(Self, CodecSplit), MetadataError> {
        let split = CodecSplit::from_codecs(codecs)?;
        let chain =
            DynChain::from_array_to_array_codecs(data_type, fill_value, &split.array_to_array)?;
        Ok((chain, split))
    }

    /// The old name of [`DynChain::from_all_codecs`].
    ///
    /// # Errors
    /// As [`DynChain::from_all_codecs`].
    #[deprecated(since = "0.3.0", note = "renamed from_all_codecs")]
    #[doc(hidden)]
    pub fn from_codecs(
        data_type: &Value,
        fill_value: &Value,
        codecs: &[Value],
    ) -> Result<(Self, CodecSplit), MetadataError> {
        Self::from_all_codecs(data_type, fill_value, codecs)
    }
}
