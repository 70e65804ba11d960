//! The whole array metadata.

use serde_json::{Map, Value, json};

use super::ZarrError;
use crate::dispatch::{CodecSplit, DynArray, DynChain};
use crate::error::MetadataError;
use crate::metadata::DataType;

/// The array->array codecs zquant runs: [`crate::CODEC_NAMES`], the registry's list.
#[deprecated(since = "0.3.0", note = "use zquant::CODEC_NAMES, the same list")]
#[doc(hidden)]
pub const ZQUANT_CODECS: &[&str] = crate::codec::CODEC_NAMES;

/// How a chunk's elements are laid out in its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryOrder {
    /// Row-major (every v3 array; v2 `"order": "C"`).
    C,
    /// Column-major (v2 `"order": "F"`; v3 writes it as a `transpose` codec).
    F,
}

/// A whole Zarr array's metadata (v3 `zarr.json` or v2 `.zarray`), in v3 terms.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayMetadata {
    /// 3 or 2: the format the metadata was read from.
    pub zarr_format: u8,
    /// The array shape.
    pub shape: Vec<u64>,
    /// The regular chunk grid's chunk shape.
    pub chunk_shape: Vec<u64>,
    /// The array (decoded) data type.
    pub data_type: DataType,
    /// The fill value, in the Zarr v3 fill-value encoding of `data_type`.
    pub fill_value: Value,
    /// The chunk key encoding object (`{"name": "v2", ...}` for v2 arrays).
    pub chunk_key_encoding: Value,
    /// The codecs, split.
    pub codecs: CodecSplit,
    /// The chunks' memory order.
    pub order: MemoryOrder,
    /// `attributes` (v3) as read, `{}` if absent.
    pub attributes: Value,
    /// `dimension_names` (v3) as read.
    pub dimension_names: Option<Value>,
}

pub(super) fn field_err(field: &'static str, reason: impl Into<String>) -> ZarrError {
    ZarrError::Field {
        field,
        reason: reason.into(),
    }
}

pub(super) fn u64_list(v: Option<&Value>, field: &'static str) -> Result<Vec<u64>, ZarrError> {
    let Some(Value::Array(items)) = v else {
        return Err(field_err(field, "missing, or not a list of integers"));
    };
    items
        .iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| field_err(field, format!("{x} is not a non-negative integer")))
        })
        .collect()
}

impl ArrayMetadata {
    /// Read a v3 `zarr.json` or a v2 `.zarray` (chosen by its `zarr_format`).
    ///
    /// # Errors
    /// As [`ArrayMetadata::from_v3_json`] / [`ArrayMetadata::from_v2_json`].
    pub fn from_json(v: &Value) -> Result<Self, ZarrError> {
        match v.get("zarr_format").and_then(Value::as_u64) {
            Some(3) => Self::from_v3_json(v),
            Some(2) => Self::from_v2_json(v),
            other => Err(field_err(
                "zarr_format",
                format!("expected 2 or 3, got {other:?}"),
            )),
        }
    }

    /// Read a v3 `zarr.json` of an array.
    ///
    /// # Errors
    /// A missing or malformed field, a chunk grid other than `regular`, storage
    /// transformers, an invalid data type, fill value or codec list.
    pub fn from_v3_json(v: &Value) -> Result<Self, ZarrError> {
        let Value::Object(m) = v else {
            return Err(field_err("zarr.json", "not a JSON object"));
        };
        if m.get("zarr_format").and_then(Value::as_u64) != Some(3) {
            return Err(field_err("zarr_format", "expected 3"));
        }
        if m.get("node_type").and_then(Value::as_str) != Some("array") {
            return Err(field_err(
                "node_type",
                "expected \"array\" (this is not an array)",
            ));
        }
        let shape = u64_list(m.get("shape"), "shape")?;
        let grid = m.get("chunk_grid");
        if grid.and_then(|g| g.get("name")).and_then(Value::as_str) != Some("regular") {
            return Err(ZarrError::Unsupported(format!(
                "chunk_grid {grid:?}: only the \"regular\" grid is read"
            )));
        }
        let chunk_shape = u64_list(
            grid.and_then(|g| g.get("configuration"))
                .and_then(|c| c.get("chunk_shape")),
            "chunk_grid",
        )?;
        if chunk_shape.len() != shape.len() || chunk_shape.contains(&0) {
            return Err(field_err(
                "chunk_grid",
                format!(
                    "chunk_shape {chunk_shape:?} must have one positive size per dimension of shape {shape:?}"
                ),
            ));
        }
        if let Some(Value::Array(t)) = m.get("storage_transformers")
            && !t.is_empty()
        {
            return Err(ZarrError::Unsupported("storage_transformers".into()));
        }
        let data_type = DataType::from_json(
            m.get("data_type")
                .ok_or_else(|| field_err("data_type", "missing"))?,
        )?;
        let fill_value = m
            .get("fill_value")
            .cloned()
            .ok_or_else(|| field_err("fill_value", "missing"))?;
        DynArray::fill_value(data_type.id, &fill_value)?;
        let Some(Value::Array(codecs)) = m.get("codecs") else {
            return Err(field_err("codecs", "missing, or not a list"));
        };
        Ok(ArrayMetadata {
            zarr_format: 3,
            shape,
            chunk_shape,
            data_type,
            fill_value,
            chunk_key_encoding: m
                .get("chunk_key_encoding")
                .cloned()
                .unwrap_or_else(|| json!({"name": "default"})),
            codecs: CodecSplit::from_codecs(codecs)?,
            order: MemoryOrder::C,
            attributes: m.get("attributes").cloned().unwrap_or_else(|| json!({})),
            dimension_names: m.get("dimension_names").cloned(),
        })
    }

    /// The chain of the array->array codecs, with the array's data type and fill value.
    ///
    /// # Errors
    /// Invalid codec configurations, or a fill value a codec cannot carry.
    pub fn chain(&self) -> Result<DynChain, MetadataError> {
        DynChain::from_array_to_array_codecs(
            &self.data_type.to_json(),
            &self.fill_value,
            &self.codecs.array_to_array,
        )
    }

    /// The number of chunks along each dimension.
    pub fn chunk_grid_shape(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(&self.chunk_shape)
            .map(|(&n, &c)| n.div_ceil(c))
            .collect()
    }

    /// The metadata as a v3 `zarr.json` (for a v2 array: what zarr-python's or zarrs'
    /// v2 -> v3 conversion gives, an F order becoming a leading `transpose` codec, and the
    /// `v2` chunk key encoding, so that the chunks are found where the v2 array keeps them).
    pub fn to_v3_json(&self) -> Value {
        let mut codecs = Vec::new();
        if self.order == MemoryOrder::F {
            let order: Vec<usize> = (0..self.shape.len()).rev().collect();
            codecs.push(json!({"name": "transpose", "configuration": {"order": order}}));
        }
        codecs.extend(self.codecs.to_codecs());
        let mut m = Map::new();
        m.insert("zarr_format".into(), json!(3));
        m.insert("node_type".into(), json!("array"));
        m.insert("shape".into(), json!(self.shape));
        m.insert("data_type".into(), self.data_type.to_json());
        m.insert(
            "chunk_grid".into(),
            json!({"name": "regular", "configuration": {"chunk_shape": self.chunk_shape}}),
        );
        m.insert("chunk_key_encoding".into(), self.chunk_key_encoding.clone());
        m.insert("fill_value".into(), self.fill_value.clone());
        m.insert("codecs".into(), Value::Array(codecs));
        m.insert("attributes".into(), self.attributes.clone());
        if let Some(d) = &self.dimension_names {
            m.insert("dimension_names".into(), d.clone());
        }
        Value::Object(m)
    }
}
