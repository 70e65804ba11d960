//! Arrays opened, created and stored with zquant's codecs checked before any chunk is
//! read or written, and `zarr.json` written in its full object form.

use serde_json::Value;
use zarrs::array::{
    Array, ArrayMetadataV3, CodecError as ZarrsCodecError, DataType as ZarrsDataType,
};
use zarrs::metadata::v3::MetadataV3;
use zarrs::storage::{ReadableStorageTraits, StoreKey, WritableStorageTraits};

use super::*;

/// Why [`open_array`], [`create_array`] or [`prepare_array`] failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The store could not be read.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// zarrs rejected the array.
    #[error(transparent)]
    Create(#[from] ArrayCreateError),
    /// The v2 metadata could not be read or converted.
    #[error(transparent)]
    Metadata(#[from] ZarrError),
    /// Neither `zarr.json` nor `.zarray` is at the path, or one is not valid JSON.
    #[error("{0}")]
    NotFound(String),
    /// One of zquant's codecs rejects the fill value it receives (see [`check_fill_values`]).
    #[error("the array's codecs reject its fill value: {0}")]
    FillValue(#[from] ZarrsCodecError),
    /// Metadata given to [`create_array`] that is not Zarr v3 array metadata.
    #[error("{0}")]
    Invalid(String),
}

pub(super) fn key(path: &str, name: &str) -> Result<StoreKey, OpenError> {
    let prefix = path.trim_matches('/');
    let k = if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    };
    StoreKey::new(k).map_err(|e| OpenError::NotFound(e.to_string()))
}

/// Open the array at `path` of `storage` with zquant's codecs registered: a v3 array
/// (`zarr.json`) as zarrs opens it, a v2 array (`.zarray`) through zquant's v2 -> v3
/// conversion (exact filter numbers, `bitround` filters, `"order": "F"` as a `transpose`
/// codec, the `v2` chunk key encoding).
///
/// # Errors
/// No array metadata at `path`, invalid metadata, a codec or data type zarrs or zquant
/// does not have, a storage error.
pub fn open_array<S: ?Sized + ReadableStorageTraits + 'static>(
    storage: Arc<S>,
    path: &str,
) -> Result<Array<S>, OpenError> {
    register();
    if storage.get(&key(path, "zarr.json")?)?.is_some() {
        let array = Array::open(storage, path)?;
        check_fill_values(&array)?;
        return Ok(array);
    }
    let Some(zarray) = storage.get(&key(path, ".zarray")?)? else {
        return Err(OpenError::NotFound(format!(
            "no zarr.json or .zarray at {path:?}: not a Zarr array"
        )));
    };
    let v2: Value = serde_json::from_slice(&zarray)
        .map_err(|e| OpenError::NotFound(format!(".zarray is not JSON: {e}")))?;
    let v3 = ArrayMetadata::from_v2_json(&v2)?.to_v3_json();
    let meta: ArrayMetadataV3 = serde_json::from_value(v3)
        .map_err(|e| OpenError::NotFound(format!("converted v2 metadata: {e}")))?;
    let array = Array::new_with_metadata(storage, path, zarrs::array::ArrayMetadata::V3(meta))?;
    check_fill_values(&array)?;
    Ok(array)
}

/// Check that each of zquant's codecs in `array`'s codec chain, sharding's inner chains
/// included, accepts the fill value it receives (cast_value's round-trip rule). zarrs itself
/// checks nothing when it opens an array, and reads a missing chunk as the fill value
/// without running a codec, so without this check an array with no chunk stored would read
/// with a fill value its codecs reject. [`open_array`] calls it.
///
/// # Errors
/// The first codec that rejects its fill value, with the reason.
pub fn check_fill_values<S: ?Sized>(array: &Array<S>) -> Result<(), ZarrsCodecError> {
    let zarrs::array::ArrayMetadata::V3(meta) = array.metadata() else {
        return Ok(()); // zquant opens v2 arrays as v3 (`open_array`)
    };
    check_chain(&meta.codecs, array.data_type(), array.fill_value())
}

fn check_chain(
    codecs: &[MetadataV3],
    data_type: &ZarrsDataType,
    fill_value: &FillValue,
) -> Result<(), ZarrsCodecError> {
    let chain = zarrs::array::CodecChain::from_metadata(codecs).map_err(other)?;
    let (mut dt, mut fill) = (data_type.clone(), fill_value.clone());
    for (i, codec) in chain.array_to_array_codecs().iter().enumerate() {
        if let Some(zq) = codec.as_any().downcast_ref::<ZquantCodec>() {
            zq.chain(&dt, &fill).map_err(|e| {
                other(format!(
                    "{e} (the fill value as array->array codec {i} of its chain receives it, \
                     after the codecs before it; fix: a fill value that every codec carries \
                     and cast_value's round trip keeps)"
                ))
            })?;
        }
        fill = codec.encoded_fill_value(&dt, &fill)?;
        dt = codec.encoded_data_type(&dt)?;
    }
    // The array->bytes codec follows the array->array ones; sharding has a chain inside.
    let Some(inner) = codecs
        .get(chain.array_to_array_codecs().len())
        .filter(|m| m.name() == "sharding_indexed")
        .and_then(|m| m.configuration())
        .and_then(|c| c.get("codecs"))
    else {
        return Ok(());
    };
    let inner: Vec<MetadataV3> = serde_json::from_value(inner.clone()).map_err(other)?;
    check_chain(&inner, &dt, &fill)
}

/// Zarr v3 array metadata as zquant writes it to `zarr.json`: every extension point in its
/// object form, `{"name": …, "configuration": {…}}`, which every Zarr v3 reader opens.
///
/// zarrs keeps an extension point parsed without a `configuration` as a bare name and
/// writes it back so (`"chunk_key_encoding": "default"`, a codec `"crc32c"`); the Zarr v3
/// spec allows the short form since 3.1, but zarr-python 3.4 rejects it for the chunk key
/// encoding (`TypeError: Expected dict, got <class 'str'>`). Here the chunk grid, the chunk
/// key encoding (with its `separator` written out: `"/"` for `default`, `"."` for `v2`),
/// every codec (sharding's inner and index codecs too, each with a `configuration`, `{}`
/// when it has none: zarr-python's numcodecs wrappers require the key) and every storage
/// transformer are objects, and `bytes` states its `endian`. Data type names stay strings, the core spec's form for the built-in types.
///
/// ```
/// use zarrs::array::ArrayMetadataV3;
/// let meta: ArrayMetadataV3 = serde_json::from_str(r#"{
///     "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
///     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
///     "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
///     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"]}"#)?;
/// // zarrs' own serialization shortens both:
/// let zarrs_json = serde_json::to_value(&meta)?;
/// assert_eq!(zarrs_json["chunk_key_encoding"], "default");
/// let json = zquant::zarrs::metadata_json(&meta)?;
/// assert_eq!(
///     json["chunk_key_encoding"],
///     serde_json::json!({"name": "default", "configuration": {"separator": "/"}})
/// );
/// assert_eq!(json["codecs"][1], serde_json::json!({"name": "crc32c", "configuration": {}}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Metadata serde_json cannot serialize (not for metadata zarrs accepted).
pub fn metadata_json(metadata: &ArrayMetadataV3) -> Result<Value, serde_json::Error> {
    let mut v = serde_json::to_value(metadata)?;
    full_form(&mut v);
    Ok(v)
}

/// [`metadata_json`]'s object forms, in place, on `zarr.json`'s JSON.
fn full_form(v: &mut Value) {
    if let Some(m) = v.as_object_mut() {
        for key in ["chunk_grid", "chunk_key_encoding"] {
            if let Some(point) = m.get_mut(key) {
                object_form(point);
            }
        }
        if let Some(Value::Object(cke)) = m.get_mut("chunk_key_encoding") {
            let separator = match cke.get("name").and_then(Value::as_str) {
                Some("default") => Some("/"),
                Some("v2") => Some("."),
                _ => None,
            };
            if let (Some(sep), None) = (separator, cke.get("configuration")) {
                cke.insert(
                    "configuration".into(),
                    serde_json::json!({"separator": sep}),
                );
            }
        }
        for key in ["codecs", "storage_transformers"] {
            if let Some(Value::Array(list)) = m.get_mut(key) {
                list.iter_mut().for_each(codec_object_form);
            }
        }
    }
}

/// A bare extension name as `{"name": name}`.
fn object_form(v: &mut Value) {
    if let Value::String(name) = v {
        let name = std::mem::take(name);
        *v = serde_json::json!({ "name": name });
    }
}

/// A codec in object form with a `configuration` (`{}` when it has none), with the codecs
/// inside it (sharding's) in object form too, and
/// `bytes` with its `endian` (zarr-python 3.4 requires it for multi-byte types; zarrs
/// writes native order, which is little-endian where `zquant::zarrs` builds).
fn codec_object_form(v: &mut Value) {
    object_form(v);
    // zarr-python's numcodecs wrappers (`numcodecs.adler32`, …) require the key, even empty.
    if let Some(m) = v.as_object_mut() {
        m.entry("configuration")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if v.get("name").and_then(Value::as_str) == Some("bytes")
        && let Some(m) = v.as_object_mut()
    {
        let config = m
            .entry("configuration")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(c) = config.as_object_mut() {
            c.entry("endian").or_insert_with(|| Value::from("little"));
        }
    }
    if let Some(Value::Object(config)) = v.get_mut("configuration") {
        for key in ["codecs", "index_codecs"] {
            if let Some(Value::Array(list)) = config.get_mut(key) {
                list.iter_mut().for_each(codec_object_form);
            }
        }
    }
}

/// Write `array`'s metadata to its store as zquant writes metadata: `zarr.json` in the
/// object form of [`metadata_json`] (without the `_zarrs` attribute zarrs'
/// `Array::store_metadata` adds). A v2 array's `.zarray` is written by zarrs (v2 metadata
/// has no extension points to shorten).
///
/// # Errors
/// A storage error.
pub fn store_metadata<S: ?Sized + WritableStorageTraits + 'static>(
    array: &Array<S>,
) -> Result<(), StorageError> {
    match array.metadata() {
        zarrs::array::ArrayMetadata::V3(meta) => {
            let key = key(array.path().as_str(), "zarr.json")
                .map_err(|e| StorageError::Other(e.to_string()))?;
            let json = metadata_json(meta)
                .and_then(|v| serde_json::to_vec_pretty(&v))
                .map_err(|e| StorageError::InvalidMetadata(key.clone(), e.to_string()))?;
            array.storage().set(&key, json.into())
        }
        zarrs::array::ArrayMetadata::V2(_) => array.store_metadata_opt(
            &zarrs::array::ArrayMetadataOptions::default().with_include_zarrs_metadata(false),
        ),
    }
}

/// A new array at `path` of `storage` from its Zarr v3 metadata (`zarr.json`'s content),
/// in [`metadata_json`]'s object forms (so a `bytes` codec without `endian` is
/// little-endian), checked as [`open_array`] checks an array (zarrs accepts it, and each of zquant's codecs
/// accepts the fill value it receives, sharding's inner chains included), then its
/// `zarr.json` written with [`store_metadata`]. Nothing is written when a check fails.
///
/// To write the metadata last instead (so that a store whose chunks are not all written
/// has no `zarr.json`), use [`prepare_array`], write the chunks, then [`store_metadata`].
///
/// ```
/// use std::sync::Arc;
/// use zarrs::storage::store::MemoryStore;
/// use zarrs::storage::{ReadableStorageTraits, StoreKey};
///
/// let store = Arc::new(MemoryStore::new());
/// let meta = serde_json::json!({
///     "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
///     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
///     "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
///     "codecs": [
///         {"name": "cast_value", "configuration": {"data_type": "uint8"}},
///         {"name": "bytes"}]});
/// // NaN has no uint8 code: refused, and no zarr.json is written.
/// let err = zquant::zarrs::create_array(store.clone(), "/", meta).unwrap_err();
/// assert!(err.to_string().contains("fill value"), "{err}");
/// assert!(store.get(&StoreKey::new("zarr.json")?)?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Metadata zarrs rejects, a fill value one of zquant's codecs rejects, a storage error.
pub fn create_array<S: ?Sized + WritableStorageTraits + 'static>(
    storage: Arc<S>,
    path: &str,
    metadata: Value,
) -> Result<Array<S>, OpenError> {
    let array = prepare_array(storage, path, metadata)?;
    store_metadata(&array)?;
    Ok(array)
}

/// [`create_array`] without writing the metadata: the array checked, for chunks to be
/// written before its `zarr.json` ([`store_metadata`]).
///
/// # Errors
/// Metadata zarrs rejects, a fill value one of zquant's codecs rejects.
pub fn prepare_array<S: ?Sized + 'static>(
    storage: Arc<S>,
    path: &str,
    metadata: Value,
) -> Result<Array<S>, OpenError> {
    register();
    let mut metadata = metadata;
    full_form(&mut metadata);
    let meta: ArrayMetadataV3 = serde_json::from_value(metadata)
        .map_err(|e| OpenError::Invalid(format!("Zarr v3 array metadata: {e}")))?;
    let array = Array::new_with_metadata(storage, path, zarrs::array::ArrayMetadata::V3(meta))?;
    check_fill_values(&array)?;
    Ok(array)
}

/// The zquant data type of a zarrs data type.
///
/// ```
/// use zarrs::array::DataType;
/// use zquant::DTypeId;
/// let dt: DataType = zarrs::array::data_type::float32();
/// assert_eq!(zquant::zarrs::dtype_id(&dt)?, DTypeId::Float32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A data type with no Zarr v3 name, or one zquant does not know.
pub fn dtype_id(data_type: &ZarrsDataType) -> Result<DTypeId, ZarrsCodecError> {
    Ok(DataType::from_json(&data_type_json(data_type)?)
        .map_err(other)?
        .id)
}

/// Codec metadata as zarrs takes it (`ArrayMetadataV3::codecs`, `CodecChain::from_metadata`):
/// a JSON list of codec objects, such as
/// [`ScaleOffsetChoice::codecs`](crate::choose::ScaleOffsetChoice::codecs), or one codec
/// object.
///
/// ```
/// use zquant::choose::{FiniteRange, FitOptions, fit_scale_offset};
/// use zquant::DTypeId;
/// let range = FiniteRange { min: 250.0, max: 310.0 };
/// let fit = fit_scale_offset(DTypeId::Float64, DTypeId::UInt16, range, 0.01, FitOptions::default())?;
/// let codecs = zquant::zarrs::codec_metadata(&fit.codecs())?;
/// assert_eq!(codecs[0].name(), "scale_offset");
/// assert_eq!(codecs[1].name(), "cast_value");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// JSON that is not a codec object or a list of them.
pub fn codec_metadata(codecs: &Value) -> Result<Vec<MetadataV3>, serde_json::Error> {
    match codecs {
        Value::Array(_) => serde_json::from_value(codecs.clone()),
        _ => Ok(vec![serde_json::from_value(codecs.clone())?]),
    }
}
