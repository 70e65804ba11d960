//! (feature `zarrs`) zquant's codecs inside the [zarrs](https://docs.rs/zarrs/0.23) crate:
//! whole stores read and written with compressors, sharding, v2 arrays and any zarrs store.
//!
//! [`register`] adds one run-time codec plugin to zarrs' registries for the Zarr v3 names
//! `scale_offset`, `cast_value`, `bitround`, `numcodecs.bitround`,
//! `numcodecs.fixedscaleoffset`, `numcodecs.quantize` and `numcodecs.astype`, and one for
//! the Zarr v2 filter ids `fixedscaleoffset`, `bitround`, `quantize` and `astype`. zarrs consults its run-time registry before its compiled-in plugins
//! (`zarrs_codec::Codec::from_metadata`), so once registered, zquant's codecs are the ones
//! used for these names, also where zarrs has its own (`numcodecs.fixedscaleoffset`, whose
//! `scale`/`offset` zarrs keeps as `f32`, and `numcodecs.bitround` with zarrs' `bitround`
//! feature). To use zarrs' own again, unregister the handles
//! (`zarrs::array::codec::api::unregister_codec_v3(&register().v3)`).
//!
//! Each codec is a [`ZquantCodec`]: zarrs hands it a chunk's elements as native-endian
//! bytes with the chunk's data type and fill value, and it runs zquant's run-time stages
//! ([`DynChain`], built once per data type and fill value and kept). An element error names
//! the codec, the rule, the value and its flat C-order index in the chunk.
//!
//! zarrs finds `scale_offset`, `cast_value` and `bitround` without a [`register`] call
//! (zquant submits them to zarrs' link-time plugin list, as zarrs does its own codecs); the
//! names zarrs has codecs of its own for are zquant's after [`register`]:
//!
//! ```standalone_crate
//! use zarrs::array::Codec;
//! use zarrs::metadata::v3::MetadataV3;
//! // No zquant::zarrs::register() in this program.
//! let meta: MetadataV3 =
//!     serde_json::from_str(r#"{"name": "scale_offset", "configuration": {"scale": 10}}"#)?;
//! let Codec::ArrayToArray(codec) = Codec::from_metadata(&meta)? else { unreachable!() };
//! assert!(codec.as_any().is::<zquant::zarrs::ZquantCodec>());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`create_array`] creates an array (its fill value checked through the whole chain
//! before anything is written), [`store_metadata`] writes `zarr.json` in the object forms
//! every reader opens ([`metadata_json`]), and [`quantize`] takes a float array to a new,
//! smaller one within a bound in one call.
//!
//! [`open_array`] opens an array of a store: a v3 array as zarrs does; a v2 array through
//! [`ArrayMetadata::from_v2_json`](crate::zarr::ArrayMetadata::from_v2_json), which keeps
//! the filters' numbers as written and reads v2 `bitround` filters (zarrs' own v2
//! conversion only knows its compiled-in codecs).
//!
//! ```no_run
//! use std::sync::Arc;
//! use zarrs::array::{ArrayBytes, ArraySubset};
//! use zarrs::filesystem::FilesystemStore;
//!
//! let store = Arc::new(FilesystemStore::new("data/temperature.zarr")?);
//! let array = zquant::zarrs::open_array(store, "/")?; // registers zquant's codecs
//! let bytes: ArrayBytes = array.retrieve_array_subset(&array.subset_all())?;
//! let _elements = bytes.into_fixed()?; // native-endian elements in C order
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod quantize;
mod store;

pub use quantize::{QuantizeError, QuantizeOptions, QuantizeReport, Readers, Target, quantize};
use store::key;
pub use store::{
    OpenError, check_fill_values, codec_metadata, create_array, dtype_id, metadata_json,
    open_array, prepare_array, store_metadata,
};
/// The zarrs crate zquant is built against (use it, or the same version, for the
/// `Array`s and stores passed to this module).
pub use zarrs;

#[cfg(target_endian = "big")]
compile_error!("zquant::zarrs exchanges zarrs' native-endian bytes as little-endian bytes");

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value};
use zarrs::array::codec::api::{
    CodecRuntimePluginV2, CodecRuntimePluginV3, CodecRuntimeRegistryHandleV2,
    CodecRuntimeRegistryHandleV3, PartialDecoderCapability, PartialEncoderCapability,
    register_codec_v2, register_codec_v3,
};
use zarrs::array::{
    ArrayBytes, ArrayCodecTraits, ArrayCreateError, ArrayToArrayCodecTraits, Codec,
    CodecError as ZarrsCodecError, CodecMetadataOptions, CodecOptions, CodecTraits,
    DataType as ZarrsDataType, FillValue, RecommendedConcurrency,
};
use zarrs::metadata::Configuration;
use zarrs::metadata::v2::MetadataV2;
use zarrs::metadata::v3::MetadataV3;
use zarrs::plugin::{
    ExtensionAliases, ExtensionAliasesConfig, ExtensionName, PluginCreateError, ZarrVersion,
    ZarrVersion3,
};
use zarrs::storage::StorageError;

use crate::codec::CODEC_NAMES as ZQUANT_CODECS;
use crate::codec::registry;
use crate::codec::{Direction, bitround, fixed_scale_offset};
use crate::dispatch::words::{ne_words, ne_words_mut};
use crate::dispatch::{DynArray, DynChain, bind_codec};
use crate::dtype::DTypeId;
use crate::error::CodecError;
use crate::metadata::{CodecObject, DataType};
use crate::zarr::{ArrayMetadata, ZarrError};

/// The Zarr v2 filter ids zquant registers, and the v3 codec each is read as (from the
/// codec registry).
pub const V2_IDS: [(&str, &str); registry::V2_COUNT] = registry::V2_IDS;

/// The handles of zquant's plugins in zarrs' run-time codec registries.
pub struct Registration {
    /// The plugin for the v3 names in [`ZQUANT_CODECS`].
    pub v3: CodecRuntimeRegistryHandleV3,
    /// The plugin for the v2 filter ids in [`V2_IDS`].
    pub v2: CodecRuntimeRegistryHandleV2,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Registration { v3: ZQUANT_CODECS, v2: V2_IDS }")
    }
}

/// Register zquant's codecs with zarrs (once per process; later calls return the same
/// handles).
///
/// ```
/// use zarrs::array::Codec;
/// use zarrs::metadata::v3::MetadataV3;
///
/// zquant::zarrs::register();
/// let meta: MetadataV3 = serde_json::from_str(
///     r#"{"name": "numcodecs.fixedscaleoffset",
///         "configuration": {"scale": 10, "offset": 0.1, "dtype": "<f8", "astype": "<i2"}}"#,
/// )?;
/// let Codec::ArrayToArray(codec) = Codec::from_metadata(&meta)? else { unreachable!() };
/// assert!(codec.as_any().is::<zquant::zarrs::ZquantCodec>()); // not zarrs' own
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn register() -> &'static Registration {
    static REGISTRATION: OnceLock<Registration> = OnceLock::new();
    REGISTRATION.get_or_init(|| Registration {
        v3: register_codec_v3(CodecRuntimePluginV3::new(
            |name| ZQUANT_CODECS.contains(&name),
            create_v3,
        )),
        v2: register_codec_v2(CodecRuntimePluginV2::new(
            |id| V2_IDS.iter().any(|(v2, _)| *v2 == id),
            create_v2,
        )),
    })
}

/// zquant's codecs that zarrs has no codec of its own for, found by zarrs without a
/// [`register`] call: they are submitted to zarrs' link-time plugin list
/// (`inventory::submit!`, as zarrs registers its own codecs). The names zarrs also
/// compiles in (`numcodecs.fixedscaleoffset`; `numcodecs.bitround` with zarrs' `bitround`
/// feature) are not: which of two link-time plugins zarrs finds first is unspecified, so
/// zquant's take those names only through [`register`]'s run-time registry, which zarrs
/// consults first.
fn linked_name(name: &str) -> bool {
    ZQUANT_CODECS.contains(&name)
        && name != fixed_scale_offset::NAME
        && (cfg!(not(feature = "zarrs-bitround"))
            || (name != bitround::NAME && name != bitround::ALIAS))
}

/// The link-time plugin of [`linked_name`]'s codecs (zarrs asks a plugin type for its
/// names and its constructor).
struct Linked;

impl ExtensionAliases<ZarrVersion3> for Linked {
    fn aliases() -> std::sync::RwLockReadGuard<'static, ExtensionAliasesConfig> {
        linked_aliases().read().unwrap_or_else(|e| e.into_inner())
    }
    fn aliases_mut() -> std::sync::RwLockWriteGuard<'static, ExtensionAliasesConfig> {
        linked_aliases().write().unwrap_or_else(|e| e.into_inner())
    }
    fn matches_name(name: &str) -> bool {
        linked_name(name)
    }
}

/// Unused by [`Linked::matches_name`], which matches by [`linked_name`]; the trait needs it.
fn linked_aliases() -> &'static std::sync::RwLock<ExtensionAliasesConfig> {
    static ALIASES: OnceLock<std::sync::RwLock<ExtensionAliasesConfig>> = OnceLock::new();
    ALIASES.get_or_init(|| {
        std::sync::RwLock::new(ExtensionAliasesConfig::new("", Vec::new(), Vec::new()))
    })
}

impl zarrs::array::codec::api::CodecTraitsV3 for Linked {
    fn create(metadata: &MetadataV3) -> Result<Codec, PluginCreateError> {
        create_v3(metadata)
    }
}

inventory::submit! {
    zarrs::array::codec::api::CodecPluginV3::new::<Linked>()
}

fn plugin_err(e: impl std::fmt::Display) -> PluginCreateError {
    PluginCreateError::Other(e.to_string())
}

fn create_v3(meta: &MetadataV3) -> Result<Codec, PluginCreateError> {
    let name = ZQUANT_CODECS
        .iter()
        .find(|n| **n == meta.name())
        .ok_or_else(|| plugin_err(format!("{:?} is not a zquant codec", meta.name())))?;
    let config = meta
        .configuration()
        .map(|c| Value::Object(Map::from(c.clone())));
    Ok(Codec::ArrayToArray(Arc::new(ZquantCodec::new(
        name, config,
    )?)))
}

fn create_v2(meta: &MetadataV2) -> Result<Codec, PluginCreateError> {
    let filter = registry::v2_filter(meta.id())
        .ok_or_else(|| plugin_err(format!("{:?} is not a zquant filter", meta.id())))?;
    let name = &filter.v3_name;
    let mut config = Map::from(meta.configuration().clone());
    config.remove("id");
    // A v2 filter's data types carry a byte order; in v3 terms the values are native.
    for &key in filter.type_keys {
        if let Some(Value::String(s)) = config.get(key)
            && let Some(rest) = s.strip_prefix('>')
        {
            let native = format!("<{rest}");
            config.insert(key.into(), Value::from(native));
        }
    }
    Ok(Codec::ArrayToArray(Arc::new(ZquantCodec::new(
        name,
        Some(Value::Object(config)),
    )?)))
}

/// One of zquant's codecs as a zarrs array->array codec.
#[derive(Debug)]
pub struct ZquantCodec {
    name: &'static str,
    configuration: Option<Value>,
    /// Chains bound to (data type, fill value bytes) pairs, or why the pair does not bind
    /// (kept too: zarrs asks again for every chunk). Looked up by comparing the pair, so
    /// that a chunk costs no allocation before its elements are run.
    bound: Mutex<Vec<(ZarrsDataType, Vec<u8>, Bound)>>,
    /// Encoded data types by decoded data type (zarrs asks for every chunk).
    encoded_types: Mutex<Vec<(ZarrsDataType, ZarrsDataType)>>,
}

/// A chain bound to one (data type, fill value) pair, or the reason it could not be.
type Bound = Result<Arc<DynChain>, String>;

/// Chains kept per codec: an array has one data type and fill value per codec position.
const KEPT_CHAINS: usize = 8;

impl ZquantCodec {
    /// The codec `name` (one of [`ZQUANT_CODECS`]) with its `configuration`, which is checked
    /// now where it does not depend on the data type.
    ///
    /// # Errors
    /// An unknown name or an invalid configuration.
    pub fn new(
        name: &'static str,
        configuration: Option<Value>,
    ) -> Result<Self, PluginCreateError> {
        let (entry, _) = registry::find(name)
            .ok_or_else(|| plugin_err(format!("{name:?} is not a zquant codec")))?;
        (entry.check)(name, configuration.as_ref()).map_err(plugin_err)?;
        Ok(ZquantCodec {
            name,
            configuration,
            bound: Mutex::new(Vec::new()),
            encoded_types: Mutex::new(Vec::new()),
        })
    }

    /// The codec object, as in `zarr.json`.
    pub fn codec_object(&self) -> CodecObject {
        CodecObject {
            name: self.name.to_string(),
            configuration: self.configuration.clone(),
        }
    }

    fn codec_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::from(self.name));
        if let Some(c) = &self.configuration {
            m.insert("configuration".into(), c.clone());
        }
        Value::Object(m)
    }

    /// The chain of this one codec for a data type and fill value (built once, then kept),
    /// checked: a fill value the codec cannot carry (cast_value's round-trip rule) is an
    /// error. Every path that runs the codec on elements comes through here.
    fn chain(
        &self,
        data_type: &ZarrsDataType,
        fill_value: &FillValue,
    ) -> Result<Arc<DynChain>, ZarrsCodecError> {
        let fill = fill_value.as_ne_bytes();
        let mut bound = self.bound.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, b)) = bound
            .iter()
            .find(|(d, f, _)| d == data_type && f.as_slice() == fill)
        {
            return b.clone().map_err(other);
        }
        let b = bind(&data_type_json(data_type)?, fill_value, &self.codec_json());
        if bound.len() >= KEPT_CHAINS {
            drop(bound.remove(0));
        }
        bound.push((data_type.clone(), fill.to_vec(), b.clone()));
        b.map_err(other)
    }

    fn run<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        chain: &DynChain,
        encode: bool,
    ) -> Result<ArrayBytes<'a>, ZarrsCodecError> {
        let mut raw = bytes.into_fixed()?;
        let dims = shape
            .iter()
            .map(|d| usize::try_from(d.get()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| other(format!("chunk shape {shape:?} overflows")))?;
        let (input, output, dir) = if encode {
            (
                chain.data_type().id,
                chain.encoded_data_type().id,
                Direction::Encode,
            )
        } else {
            (
                chain.encoded_data_type().id,
                chain.data_type().id,
                Direction::Decode,
            )
        };
        let located = |e: CodecError| {
            // The chunk's own shape, so that an element error gives its position in the
            // chunk (zarrs does not tell an array->array codec where the chunk is).
            // zarrs runs each codec alone: after scale_offset, cast_value sees the scaled
            // value, and widening or clamping would not keep a bound the parameters were
            // fitted for.
            let fitted = match &e {
                CodecError::Element(el) if el.rule == crate::error::Rule::OutOfRange && encode => {
                    "; if the chain's scale_offset parameters were fitted to data \
                     (zquant::choose, zquant::plan), the element is outside the range they were \
                     fitted for (this is its value after scale_offset): refit over the data, or \
                     plan with headroom, which keeps the bound (clamping would not)"
                }
                _ => "",
            };
            other(format!(
                "{e} (position within a chunk of shape {dims:?}){fitted}"
            ))
        };
        // bitround works on zarrs' buffer itself: its decode hands the buffer back as it
        // is (borrowed or owned), its encode rounds in place (copying the buffer first only
        // if zarrs lent it).
        if !encode && chain.decode_is_identity() {
            return Ok(ArrayBytes::new_flen(raw));
        }
        if encode
            && chain.has_in_place()
            && ne_words(input, &raw).is_some()
            && let Some(words) = ne_words_mut(input, raw.to_mut())
            && let Some(done) = chain.in_place(dir, words)
        {
            done.map_err(located)?;
            return Ok(ArrayBytes::new_flen(raw));
        }
        // Otherwise zarrs' buffer is read in place and the output written in place, as
        // words, when both are aligned for their words (zarrs' buffers and a fresh `Vec`
        // are, in practice) and hold whole codes (not sub-byte types, whose unused bits
        // are masked); else one copy each way.
        let n: usize = dims.iter().product();
        let mut out = vec![0u8; n.saturating_mul(output.size())];
        if let Some(src) = ne_words(input, &raw)
            && let Some(dst) = ne_words_mut(output, &mut out)
        {
            if encode {
                chain.encode_words(src, &dims, dst)
            } else {
                chain.decode_words(src, &dims, dst)
            }
            .map_err(located)?;
            return Ok(ArrayBytes::new_flen(out));
        }
        drop(out);
        let array = DynArray::from_le_bytes(input, &dims, &raw).map_err(other)?;
        let out = if encode {
            chain.encode(&array)
        } else {
            chain.decode(&array)
        }
        .map_err(located)?;
        Ok(ArrayBytes::new_flen(out.to_le_bytes()))
    }
}

/// Bind one codec to a data type (as Zarr v3 JSON) and a fill value (native-endian bytes).
fn bind(dt: &Value, fill_value: &FillValue, codec: &Value) -> Bound {
    let id = DataType::from_json(dt).map_err(|e| e.to_string())?.id;
    let fill = DynArray::from_le_bytes(id, &[], fill_value.as_ne_bytes())
        .map_err(|e| e.to_string())?
        .first_to_json()
        .ok_or_else(|| "empty fill value".to_string())?;
    DynChain::from_array_to_array_codecs(dt, &fill, std::slice::from_ref(codec))
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

fn other(e: impl std::fmt::Display) -> ZarrsCodecError {
    ZarrsCodecError::Other(e.to_string())
}

/// A zarrs data type as Zarr v3 metadata JSON.
fn data_type_json(dt: &ZarrsDataType) -> Result<Value, ZarrsCodecError> {
    let name = dt
        .name(ZarrVersion::V3)
        .ok_or_else(|| other(format!("data type {dt} has no Zarr v3 name")))?;
    let config = dt.configuration(ZarrVersion::V3);
    if config.is_empty() {
        return Ok(Value::from(name.into_owned()));
    }
    let mut m = Map::new();
    m.insert("name".into(), Value::from(name.into_owned()));
    m.insert("configuration".into(), Value::Object(Map::from(config)));
    Ok(Value::Object(m))
}

/// Zarr v3 data type metadata JSON as a zarrs data type.
fn zarrs_data_type(v: &Value) -> Result<ZarrsDataType, ZarrsCodecError> {
    let meta: MetadataV3 = serde_json::from_value(v.clone()).map_err(other)?;
    ZarrsDataType::from_metadata(&meta).map_err(|e| other(format!("zarrs data type {v}: {e}")))
}

impl ExtensionName for ZquantCodec {
    fn name(&self, version: ZarrVersion) -> Option<Cow<'static, str>> {
        match version {
            ZarrVersion::V3 => Some(Cow::Borrowed(self.name)),
            ZarrVersion::V2 => V2_IDS
                .iter()
                .find(|(_, v3)| *v3 == self.name)
                .map(|(v2, _)| Cow::Borrowed(*v2)),
        }
    }
}

impl CodecTraits for ZquantCodec {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn configuration(
        &self,
        _version: ZarrVersion,
        _options: &CodecMetadataOptions,
    ) -> Option<Configuration> {
        match &self.configuration {
            Some(Value::Object(m)) => Some(Configuration::from(m.clone())),
            _ => Some(Configuration::default()),
        }
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        // Elementwise: zarrs' default array->array partial decoder decodes just the
        // elements asked for.
        PartialDecoderCapability {
            partial_read: true,
            partial_decode: true,
        }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability {
            partial_encode: false,
        }
    }
}

impl ArrayCodecTraits for ZquantCodec {
    fn recommended_concurrency(
        &self,
        _shape: &[NonZeroU64],
        _data_type: &ZarrsDataType,
    ) -> Result<RecommendedConcurrency, ZarrsCodecError> {
        // One chunk is one fused pass; zarrs parallelizes over chunks.
        Ok(RecommendedConcurrency::new_maximum(1))
    }
}

impl ArrayToArrayCodecTraits for ZquantCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn ArrayToArrayCodecTraits> {
        self
    }

    fn encoded_data_type(
        &self,
        decoded_data_type: &ZarrsDataType,
    ) -> Result<ZarrsDataType, ZarrsCodecError> {
        let mut known = self.encoded_types.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, e)) = known.iter().find(|(d, _)| d == decoded_data_type) {
            return Ok(e.clone());
        }
        let dt = DataType::from_json(&data_type_json(decoded_data_type)?).map_err(other)?;
        let stage = bind_codec(&self.codec_object(), &dt).map_err(other)?;
        let encoded = zarrs_data_type(&stage.output().to_json())?;
        if known.len() >= KEPT_CHAINS {
            drop(known.remove(0));
        }
        known.push((decoded_data_type.clone(), encoded.clone()));
        Ok(encoded)
    }

    /// The encoded fill value, for zarrs' chunk representations (sizes, concurrency, the
    /// next codec's input). Not a check: zarrs also asks with fill values that are not the
    /// array's (0.23's `CodecChain::recommended_concurrency` passes zero bytes, "the fill
    /// value doesn't affect concurrency computation"), and under `cast_value` with
    /// NaN -> 0 / 0 -> NaN the zero fill does not survive the round trip. A fill value the
    /// codec rejects gives the encoded type's zero here; it fails on every path that runs
    /// the codec (encode, decode, partial decode) and in [`open_array`]/[`check_fill_values`].
    fn encoded_fill_value(
        &self,
        decoded_data_type: &ZarrsDataType,
        decoded_fill_value: &FillValue,
    ) -> Result<FillValue, ZarrsCodecError> {
        match self.chain(decoded_data_type, decoded_fill_value) {
            Ok(chain) => Ok(FillValue::new(chain.encoded_fill_value().to_le_bytes())),
            Err(_) => {
                let encoded = self.encoded_data_type(decoded_data_type)?;
                let size = encoded.fixed_size().ok_or_else(|| {
                    other(format!(
                        "{}: encoded data type {encoded} has no fixed size",
                        self.name
                    ))
                })?;
                Ok(FillValue::new(vec![0; size]))
            }
        }
    }

    fn encode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &ZarrsDataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, ZarrsCodecError> {
        let chain = self.chain(data_type, fill_value)?;
        self.run(bytes, shape, &chain, true)
    }

    fn decode<'a>(
        &self,
        bytes: ArrayBytes<'a>,
        shape: &[NonZeroU64],
        data_type: &ZarrsDataType,
        fill_value: &FillValue,
        _options: &CodecOptions,
    ) -> Result<ArrayBytes<'a>, ZarrsCodecError> {
        // `data_type`/`fill_value` are the decoded ones (zarrs passes the codec's input).
        let chain = self.chain(data_type, fill_value)?;
        self.run(bytes, shape, &chain, false)
    }
}
