//! Zarr v2 `.zarray` metadata read into [`ArrayMetadata`]: `dtype` with its byte order,
//! `filters`, `compressor`, `fill_value`, `order` and `dimension_separator` in v3 terms.
//!
//! The conversion keeps every number's JSON text: a v2 `fixedscaleoffset` filter's `scale`
//! and `offset` reach zquant's codec exactly as written (zarrs' own v2 conversion goes
//! through its `f32` configuration).

use serde_json::{Map, Value, json};

use super::ZarrError;
use super::metadata::{ArrayMetadata, MemoryOrder, field_err, u64_list};
use crate::codec::{fixed_scale_offset, registry};
use crate::dispatch::CodecSplit;
use crate::dispatch::DynArray;
use crate::dtype::DTypeId;
use crate::metadata::DataType;

/// A v2 type string (`"<f8"`, `">i2"`, `"|u1"`) without its byte order, and whether it is
/// big-endian.
fn split_byte_order(s: &str) -> (String, bool) {
    match s.chars().next() {
        Some('>') => (format!("<{}", &s[1..]), true),
        _ => (s.to_string(), false),
    }
}

fn v2_dtype(v: Option<&Value>) -> Result<(DataType, bool), ZarrError> {
    let Some(Value::String(s)) = v else {
        return Err(ZarrError::Unsupported(format!(
            "dtype {v:?}: only simple (non-structured) v2 data types are read"
        )));
    };
    let (native, big) = split_byte_order(s);
    let id = fixed_scale_offset::parse_dtype(&native).map_err(|e| field_err("dtype", e))?;
    Ok((DataType::new(id), big && id.size() > 1))
}

/// The codec's `id` and the other members of a v2 codec object.
fn v2_codec(v: &Value, field: &'static str) -> Result<(String, Map<String, Value>), ZarrError> {
    let Value::Object(m) = v else {
        return Err(field_err(field, format!("{v} is not a codec object")));
    };
    let Some(Value::String(id)) = m.get("id") else {
        return Err(field_err(field, format!("{v} has no string `id`")));
    };
    let mut rest = m.clone();
    rest.remove("id");
    Ok((id.clone(), rest))
}

fn v3_codec(name: &str, config: Map<String, Value>) -> Value {
    json!({"name": name, "configuration": config})
}

fn filter_to_v3(v: &Value) -> Result<Value, ZarrError> {
    let (id, mut config) = v2_codec(v, "filters")?;
    // zquant's codecs, from the registry; any other filter as its numcodecs name.
    let Some(filter) = registry::v2_filter(&id) else {
        return Ok(v3_codec(&format!("numcodecs.{id}"), config));
    };
    // The filter sees native values in v3 terms; the byte order is the `bytes` codec's
    // business.
    for key in filter.type_keys {
        if let Some(Value::String(s)) = config.get(*key) {
            let native = split_byte_order(s).0;
            config.insert((*key).into(), Value::from(native));
        }
    }
    Ok(v3_codec(filter.v3_name, config))
}

fn compressor_to_v3(v: &Value, typesize: usize) -> Result<Value, ZarrError> {
    let (id, config) = v2_codec(v, "compressor")?;
    let get = |k: &str| config.get(k).cloned().unwrap_or(Value::Null);
    Ok(match id.as_str() {
        "blosc" => {
            // numcodecs: 0 no shuffle, 1 byte shuffle, 2 bit shuffle, -1 automatic
            // (bit shuffle for 1-byte elements, byte shuffle otherwise).
            let shuffle = match get("shuffle").as_i64() {
                Some(0) => "noshuffle",
                Some(2) => "bitshuffle",
                Some(-1) if typesize == 1 => "bitshuffle",
                _ => "shuffle",
            };
            json!({"name": "blosc", "configuration": {
                "cname": get("cname"), "clevel": get("clevel"), "shuffle": shuffle,
                "typesize": typesize, "blocksize": config.get("blocksize").cloned().unwrap_or(json!(0)),
            }})
        }
        "zstd" => json!({"name": "zstd", "configuration": {
            "level": config.get("level").cloned().unwrap_or(json!(0)),
            "checksum": config.get("checksum").cloned().unwrap_or(json!(false)),
        }}),
        "gzip" => json!({"name": "gzip", "configuration": {
            "level": config.get("level").cloned().unwrap_or(json!(1)),
        }}),
        other => v3_codec(&format!("numcodecs.{other}"), config),
    })
}

fn fill_to_v3(v: Option<&Value>, id: DTypeId) -> Result<Value, ZarrError> {
    match v {
        // v2's null means "no fill value": zarr-python reads missing chunks as zeros.
        None | Some(Value::Null) => Ok(id.value_to_json([0, 0])),
        Some(x) => {
            DynArray::fill_value(id, x)?;
            Ok(x.clone())
        }
    }
}

impl ArrayMetadata {
    /// Read a v2 `.zarray`: `dtype` (simple types, either byte order), `filters`
    /// (`fixedscaleoffset` -> `numcodecs.fixedscaleoffset`, `bitround` ->
    /// `numcodecs.bitround`, any other `x` -> `numcodecs.x`), `compressor` (`blosc`, `zstd`,
    /// `gzip` -> their v3 codecs, any other `x` -> `numcodecs.x`), `fill_value` (`null` ->
    /// the type's zero), `order` and `dimension_separator`.
    ///
    /// ```
    /// let zarray = serde_json::json!({
    ///     "zarr_format": 2, "shape": [10, 3], "chunks": [4, 3], "dtype": ">f8",
    ///     "compressor": {"id": "zstd", "level": 3}, "fill_value": "NaN", "order": "F",
    ///     "filters": [{"id": "fixedscaleoffset", "scale": 100, "offset": 0.1,
    ///                  "dtype": ">f8", "astype": "<i2"}],
    /// });
    /// let meta = zquant::zarr::ArrayMetadata::from_v2_json(&zarray)?;
    /// assert_eq!(meta.codecs.array_to_bytes["configuration"]["endian"], "big");
    /// assert_eq!(meta.codecs.array_to_array[0]["name"], "numcodecs.fixedscaleoffset");
    /// assert_eq!(meta.chain()?.encoded_data_type().id.name(), "int16");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A missing or malformed field, a structured `dtype`, an invalid fill value or filter.
    pub fn from_v2_json(v: &Value) -> Result<Self, ZarrError> {
        let Value::Object(m) = v else {
            return Err(field_err(".zarray", "not a JSON object"));
        };
        if m.get("zarr_format").and_then(Value::as_u64) != Some(2) {
            return Err(field_err("zarr_format", "expected 2"));
        }
        let shape = u64_list(m.get("shape"), "shape")?;
        let chunk_shape = u64_list(m.get("chunks"), "chunks")?;
        if chunk_shape.len() != shape.len() || chunk_shape.contains(&0) {
            return Err(field_err(
                "chunks",
                format!("{chunk_shape:?} must have one positive size per dimension of {shape:?}"),
            ));
        }
        let (data_type, big) = v2_dtype(m.get("dtype"))?;
        let order = match m.get("order").and_then(Value::as_str) {
            None | Some("C") => MemoryOrder::C,
            Some("F") => MemoryOrder::F,
            Some(o) => {
                return Err(field_err(
                    "order",
                    format!("{o:?} is neither \"C\" nor \"F\""),
                ));
            }
        };
        let mut codecs = Vec::new();
        if let Some(Value::Array(filters)) = m.get("filters") {
            for f in filters {
                codecs.push(filter_to_v3(f)?);
            }
        }
        let endian = if big { "big" } else { "little" };
        codecs.push(json!({"name": "bytes", "configuration": {"endian": endian}}));
        match m.get("compressor") {
            None | Some(Value::Null) => {}
            Some(c) => codecs.push(compressor_to_v3(c, data_type.id.size())?),
        }
        let separator = m
            .get("dimension_separator")
            .and_then(Value::as_str)
            .unwrap_or(".");
        Ok(ArrayMetadata {
            zarr_format: 2,
            fill_value: fill_to_v3(m.get("fill_value"), data_type.id)?,
            shape,
            chunk_shape,
            data_type,
            chunk_key_encoding: json!({"name": "v2", "configuration": {"separator": separator}}),
            codecs: CodecSplit::from_codecs(&codecs)?,
            order,
            attributes: json!({}),
            dimension_names: None,
        })
    }
}
