//! The `numcodecs.astype` array->array codec: numcodecs' `AsType`, NumPy's cast between two
//! numeric types, reproduced byte for byte (NumPy 2 on x86-64).
//!
//! ### Specification
//! - zarr-extensions' `numcodecs.*` codec definitions (draft, an open pull request), which
//!   name the configuration `encode_dtype` and `decode_dtype`.
//! - The operational definition: `numcodecs.AsType` (numcodecs 0.17.1),
//!   <https://numcodecs.readthedocs.io/en/stable/filter/astype.html>: encoding is
//!   `x.astype(encode_dtype)`, decoding `y.astype(decode_dtype)`, NumPy's `"unsafe"` casts.
//!
//! ### Codec `name` aliases
//! - Zarr v3: `numcodecs.astype` (zarr-python's `zarr.codecs.numcodecs.AsType`); the Zarr v2
//!   `id` is `astype`.
//!
//! ### Codec `configuration` example
//! ```
//! use serde_json::json;
//! use zquant::{ArrayCodec, AsType};
//! // {"name": "numcodecs.astype",
//! //  "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}}
//! let config = json!({"encode_dtype": "<f4", "decode_dtype": "<f8"});
//! let codec = AsType::<f64, f32>::from_configuration(Some(&config))?;
//! assert_eq!(codec.encode_one(0.1), 0.1f32);
//! assert_eq!(codec.to_metadata()["name"], "numcodecs.astype");
//! # Ok::<(), zquant::MetadataError>(())
//! ```
//!
//! `encode_dtype` is required; `decode_dtype` must be the data type the codec receives and
//! may be left out (zarr-python's wrapper writes it in from the array). Both are Zarr v2 data
//! type strings (`"<f8"`, `"|u1"`; `>` only for one-byte types, since a Zarr v2 filter's byte
//! order is dropped when the array is read: the values are native) or plain Zarr v3 names,
//! of the eleven NumPy types `int8`…`uint64`, `float16`, `float32`, `float64`, or of
//! `complex64` and `complex128` (the run-time stage; [`AsType`] is typed for the eleven).
//! NumPy's `bool` is not a data type of this crate: zquant's Python `AsType` runs NumPy's
//! own cast for it. Unknown keys
//! are errors.
//!
//! ### The casts (NumPy 2 on x86-64; what every pair of the eleven types does)
//! - int -> int: the low bits (two's complement): `300 -> uint8 44`, `-1 -> uint16 65535`.
//! - int -> float, float -> float: nearest-even; overflow gives ±Inf (`70000 -> float16
//!   inf`). A NaN keeps its sign and the top of its payload: quieted between float32 and
//!   float64 (the hardware conversion), never quieted into or out of float16 (NumPy's bit
//!   formulas: `float32 0x7f800001 -> float16 0x7c01`, `float16 0x7c01 -> float32
//!   0x7f802000`); a cast to the same type copies the bits.
//! - float -> int: truncation towards zero; NaN and out-of-range values give what the C cast
//!   NumPy's scalar loop compiles to gives on x86-64 (`cvttsd2si`'s "integer indefinite"
//!   pattern, see [`float_to_int_x86`](crate::codec::fixed_scale_offset::numpy_number::float_to_int_x86)): NaN ->
//!   `int8`/`uint8`/`int16`/`uint16` `0`, -> `int32` `-2^31`, -> `int64` `-2^63`, ->
//!   `uint32` `0`, -> `uint64` `2^63`; `265.0 -> uint8 9`; `1e10 -> uint32 1410065408`
//!   (the 64-bit conversion's low bits). NumPy's result here is platform-defined: on hosts
//!   with AVX-512, arrays of four or more elements take a vector loop whose `float ->
//!   uint32` gives `2^31` for NaN, negative and too-large values (`-3e9`, `1e10`, `-inf`)
//!   and `0` for some values above `2^32` (`4294967301.0`); zquant gives the scalar loop's
//!   value. Every other pair, and every in-range non-NaN value, is the same either way.
//!
//! - complex -> real: the real part, cast as a value of its float type (NumPy drops the
//!   imaginary part with a `ComplexWarning`); real -> complex: the cast value and `+0.0`;
//!   complex -> complex: each part cast as its float type.
//!
//! Nothing fails on values (NumPy only warns). The fill value is cast like any element.

mod config;
pub(crate) mod kernel;

pub use config::AsTypeConfig;

use serde_json::Value;

use super::fixed_scale_offset::{NumpyDType, numpy_supports};
use super::numcodecs_filter as filter;
use crate::codec::fixed_scale_offset::NumpyNumber;
use crate::dtype::DTypeId;
use crate::error::MetadataError;
use crate::metadata::DataType;
use crate::number::storage::{Words, WordsMut};

/// The Zarr v3 name.
pub const NAME: &str = "numcodecs.astype";

/// This codec in the registry.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[],
    v2: Some(super::registry::V2Filter {
        // numcodecs' `AsType` filter.
        id: "astype",
        v3_name: NAME,
        type_keys: &["encode_dtype", "decode_dtype"],
    }),
    check: |_, config| AsTypeConfig::from_configuration(config).map(drop),
    bind: |_, dt, config| Ok(Box::new(AsTypeStage::new(dt, config)?)),
};

fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    filter::field(NAME, field, reason)
}

/// `id` must be a NumPy numeric type; the error names the configuration key.
fn check_numpy(key: &'static str, id: DTypeId) -> Result<(), MetadataError> {
    if numpy_supports(id) || kernel::complex_part(id).is_some() {
        return Ok(());
    }
    Err(field(
        key,
        format!(
            "{} is not a type numcodecs.astype casts: use one of int8..int64, uint8..uint64, \
             float16, float32, float64, complex64, complex128",
            id.name()
        ),
    ))
}

/// `numcodecs.astype` between two NumPy types, untyped: what [`AsType`] and [`AsTypeStage`]
/// both run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsTypeCore {
    decoded: DTypeId,
    encoded: DTypeId,
}

impl AsTypeCore {
    /// `decoded -> encoded`.
    ///
    /// # Errors
    /// A type NumPy does not have (the error names `decode_dtype` or `encode_dtype`).
    pub fn new(decoded: DTypeId, encoded: DTypeId) -> Result<Self, MetadataError> {
        check_numpy("decode_dtype", decoded)?;
        check_numpy("encode_dtype", encoded)?;
        Ok(AsTypeCore { decoded, encoded })
    }

    /// Encode `src` (words of the decoded type) into `dst` (words of the encoded type), the
    /// shorter length.
    pub fn encode(&self, src: Words<'_>, dst: WordsMut<'_>) {
        kernel::cast_words(self.decoded, self.encoded, src, dst);
    }

    /// Decode `src` (words of the encoded type) into `dst` (words of the decoded type).
    pub fn decode(&self, src: Words<'_>, dst: WordsMut<'_>) {
        kernel::cast_words(self.encoded, self.decoded, src, dst);
    }
}

/// `numcodecs.astype` from `S` (`decode_dtype`) to `D` (`encode_dtype`): NumPy's cast, both
/// ways.
///
/// ```
/// use zquant::{ArrayCodecExt, AsType};
///
/// let codec = AsType::<f32, u8>::new()?;
/// let encoded = codec.encode(&ndarray::array![1.9f32, 265.0, -1.0])?;
/// assert_eq!(encoded, ndarray::array![1u8, 9, 255]); // truncated, then the low bits
/// assert_eq!(codec.decode(&encoded)?, ndarray::array![1.0f32, 9.0, 255.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AsType<S: NumpyNumber, D: NumpyNumber> {
    config: AsTypeConfig,
    core: AsTypeCore,
    _t: std::marker::PhantomData<fn(S) -> D>,
}

impl<S: NumpyNumber, D: NumpyNumber> AsType<S, D> {
    /// The codec, its types written as Zarr v2 strings (`"<f8"`, `"|u1"`).
    ///
    /// # Errors
    /// `S` or `D` is not a NumPy type.
    pub fn new() -> Result<Self, MetadataError> {
        let (s, d) = filter::type_ids::<S, D>(NAME, "decode_dtype")?;
        Self::from_config(&AsTypeConfig {
            encode_dtype: NumpyDType::v2(d),
            decode_dtype: Some(NumpyDType::v2(s)),
        })
    }

    /// Parse and bind the `configuration` member.
    ///
    /// # Errors
    /// See [`AsTypeConfig::from_configuration`] and [`Self::from_config`].
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        Self::from_config(&AsTypeConfig::from_configuration(config)?)
    }

    /// Bind a parsed configuration to the types `S -> D`.
    ///
    /// # Errors
    /// `decode_dtype` is not `S` or `encode_dtype` not `D`.
    pub fn from_config(config: &AsTypeConfig) -> Result<Self, MetadataError> {
        let (s, _) = filter::type_ids::<S, D>(NAME, "decode_dtype")?;
        let decoded = config.decode_id(s);
        filter::check_typed(
            NAME,
            [
                ("decode_dtype", decoded, S::NAME),
                ("encode_dtype", config.encode_dtype.id, D::NAME),
            ],
        )?;
        Ok(AsType {
            config: config.clone(),
            core: AsTypeCore::new(decoded, config.encode_dtype.id)?,
            _t: std::marker::PhantomData,
        })
    }
}

filter::forward_to_core!(AsType, AsTypeStage, AsTypeConfig);

/// `numcodecs.astype` bound to run-time data types.
#[derive(Debug)]
pub struct AsTypeStage {
    config: AsTypeConfig,
    core: AsTypeCore,
    input: DataType,
    output: DataType,
}

impl AsTypeStage {
    /// Bind a `configuration` to the array data type `dt`.
    ///
    /// # Errors
    /// Invalid configuration; a type NumPy does not have; a `decode_dtype` other than `dt`.
    pub fn new(dt: &DataType, config: Option<&Value>) -> Result<Self, MetadataError> {
        let cfg = AsTypeConfig::from_configuration(config)?;
        if let Some(d) = &cfg.decode_dtype {
            filter::check_array_type(NAME, "decode_dtype", &d.text, d.id, dt)?;
        }
        Ok(AsTypeStage {
            core: AsTypeCore::new(dt.id, cfg.encode_dtype.id)?,
            output: DataType::new(cfg.encode_dtype.id),
            config: cfg,
            input: dt.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts() {
        let c = AsType::<f64, u8>::new().unwrap();
        assert_eq!(c.encode_one(265.9), 9);
        assert_eq!(c.encode_one(f64::NAN), 0);
        let i = AsType::<i64, f32>::new().unwrap();
        // One rounding: through float64 the `+ 1` is lost and the tie goes to 2^62.
        let v = (1i64 << 62) + (1 << 38) + 1;
        assert_eq!(i.encode_one(v), 2f32.powi(62) + 2f32.powi(39));
        let u = AsType::<u64, i8>::new().unwrap();
        assert_eq!(u.encode_one(300), 44);
        assert_eq!(u.decode_one(-1), u64::MAX);
    }

    #[test]
    fn errors_name_the_key() {
        let e = AsTypeStage::new(
            &DataType::new(DTypeId::Float64),
            Some(&serde_json::json!({"encode_dtype": "bfloat16", "decode_dtype": "<f8"})),
        )
        .unwrap_err();
        assert!(e.to_string().contains("encode_dtype"), "{e}");
        let e = AsTypeConfig::from_configuration(Some(&serde_json::json!({"decode_dtype": "<f8"})))
            .unwrap_err();
        assert!(e.to_string().contains("encode_dtype"), "{e}");
    }
}
