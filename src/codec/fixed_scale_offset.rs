//! The `numcodecs.fixedscaleoffset` array->array codec: numcodecs' `FixedScaleOffset`,
//! reproduced byte for byte (NumPy 2 semantics on x86-64).
//!
//! ### Specification
//! - zarr-extensions `codecs/scale_offset/README.md`, section "Legacy
//!   `numcodecs.fixedscaleoffset` codec":
//!   <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset#legacy-numcodecsfixedscaleoffset-codec>
//! - zarr-extensions `codecs/numcodecs.fixedscaleoffset/README.md` (draft) and its
//!   `schema.json`: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/numcodecs.fixedscaleoffset>
//! - The operational definition: `numcodecs.FixedScaleOffset` (numcodecs 0.17.1),
//!   <https://numcodecs.readthedocs.io/en/stable/filter/fixedscaleoffset.html>.
//!
//! ### Codec `name` aliases
//! - Zarr v3: `numcodecs.fixedscaleoffset`; the Zarr v2 `id` is `fixedscaleoffset`.
//! - It is **not** an alias of the `[scale_offset, cast_value]` sequence the spec suggests
//!   as its replacement: numcodecs rounds to an integer even when `astype` is a float type,
//!   decodes in float64 (or in the encoded float type) before casting to `dtype`, and takes
//!   NumPy's platform-dependent float->int cast for out-of-range values. This module
//!   implements numcodecs, not the conversion.
//!
//! ### Codec `configuration` example
//! ```
//! use serde_json::json;
//! use zquant::{ArrayCodec, FixedScaleOffset};
//! // {"name": "numcodecs.fixedscaleoffset",
//! //  "configuration": {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}}
//! let config = json!({"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"});
//! let codec = FixedScaleOffset::<f64, u8>::from_configuration(Some(&config))?;
//! assert_eq!(codec.encode_one(1012.34), 123);
//! assert_eq!(codec.to_metadata()["name"], "numcodecs.fixedscaleoffset");
//! # Ok::<(), zquant::MetadataError>(())
//! ```
//!
//! `offset` and `scale` are JSON numbers (required); `dtype` and `astype` are Zarr v2 data
//! type strings (`"<f8"`, `"|u1"`, `"<i2"`, …; `<`, `|`, `=` or no byte-order prefix,
//! `>` only for one-byte types) or the plain Zarr v3 names (`"float32"`, `"uint8"`, …).
//! `dtype` is required and must be the data type the codec receives; `astype` defaults to
//! `dtype`. Unknown keys are errors. Both must be types NumPy has: `int8`…`int64`,
//! `uint8`…`uint64`, `float16`, `float32`, `float64`.
//!
//! ### Algorithm (the spec's pseudocode)
//! ```text
//! Encoding                                   Decoding
//! arr = I - offset                           arr = cast(I, dtype)   # (see below)
//! arr = arr * scale                          arr = arr / scale
//! arr = round(arr) # round to nearest int    O = arr + offset
//! O = cast(arr, astype) # NumPy casting
//! ```
//! numcodecs evaluates exactly `astype(around((x - offset) * scale))` and
//! `dtype((y / scale) + offset)` with NumPy 2, where `offset` and `scale` are the Python
//! numbers `json.loads` gives: a JSON number without `.`, `e` or `E` is a Python `int`,
//! otherwise a `float`. (The decoding cast to `dtype` comes last, not first.) The rules this
//! module implements:
//!
//! 1. **Promotion (NEP 50).** Python scalars are "weak". A float array keeps its type: the
//!    scalar is first converted to it (a Python `int` via the nearest float64, then to the
//!    array type, nearest-even), and every operation is rounded once to that type (NumPy
//!    computes `float16` in `float32` and rounds back, which is the same correctly rounded
//!    result). An integer array with a Python `int` stays in its own type and **wraps**
//!    (`uint16` `0 - 64` is `65472`); the `int` must fit the type, else NumPy raises
//!    `OverflowError`, which is reported here as a metadata error on `offset`/`scale`. An
//!    integer array with a Python `float` gives float64 (the integers converted
//!    nearest-even). Decoding divides: an integer encoded array gives float64 (true
//!    division), a float encoded array stays in its type.
//! 2. **Rounding.** `np.around` with 0 decimals is `rint`: half to even, in the working
//!    float type; it is the identity on integer arrays.
//! 3. **Casts.** int->int truncates to the low bits (two's complement); int->float and
//!    float->float round to nearest-even (overflow gives ±Inf). float->int is the C cast
//!    NumPy's loops compile to on x86-64 (see
//!    [`float_to_int_x86`](numpy_number::float_to_int_x86)): truncate towards zero,
//!    and an out-of-range or NaN value gives the "integer indefinite" pattern of
//!    `cvttsd2si`:
//!    - `int8`, `int16`, `uint8`, `uint16`: 32-bit conversion (NaN or out of
//!      `[-2^31, 2^31)` gives `-2^31`), then the low 8/16 bits (`265.0 -> uint8 9`,
//!      `-1.0 -> uint8 255`);
//!    - `int32`: 32-bit conversion (`2147483657.0 -> -2147483648`);
//!    - `uint32`: 64-bit conversion, then the low 32 bits;
//!    - `int64`: 64-bit conversion (NaN or out of `[-2^63, 2^63)` gives `-2^63`);
//!    - `uint64`: below `2^63` (or NaN) the 64-bit conversion's bits; from `2^63` up,
//!      the conversion of `x - 2^63` with the top bit flipped (so `2^64` and above give
//!      `0`, NaN and `-Inf` give `2^63`, `-1.0` gives `2^64 - 1`).
//!
//! **What exactly is matched, for NaN and out-of-range values.** Rule 3 is NumPy's
//! *scalar* cast loop, the C cast above, which NumPy runs on arrays of fewer than 4
//! elements and on machines without AVX-512. On AVX-512 hosts NumPy casts arrays of 4 or
//! more elements with SIMD loops whose results for NaN and out-of-range values can differ
//! (seen for float64 -> uint32), so for those values "bit-exact with numcodecs" holds
//! against the scalar loop only. Every in-range,
//! non-NaN value is the same either way: the casts only differ where NumPy itself warns.
//!
//! So, with `W` the working type: encoding is `astype(rint(W(W(x - offset) * scale)))`,
//! where `W` is the float `dtype`, or for an integer `dtype` either the type itself (both
//! scalars Python `int`s: wrapping, no rounding), or float64 after a wrapping subtraction
//! (`int` offset, `float` scale), or float64 throughout (`float` offset). Decoding is
//! `dtype(V(V(y / scale) + offset))` with `V` the float `astype`, or float64 for an integer
//! `astype`. Nothing fails on values (NumPy only warns), so the kernels never fail; the
//! fill value is encoded like any element (catalogue `fso-fill`; zarr-python keeps it
//! unchanged).

mod config;
mod kernels;
pub(crate) mod numpy;
pub(crate) mod numpy_number;

pub use config::{FixedScaleOffsetConfig, NumpyDType, PyNumber, parse_dtype};
pub use numpy::numpy_supports;

pub use numpy_number::NumpyNumber;

use serde_json::{Map, Value};

use super::{ArrayCodec, DynStage, check_words};
use crate::convert::{words_of, words_of_mut};
use crate::dtype::DTypeId;
use crate::error::{CodecError, ElementError, MetadataError};
use crate::metadata::DataType;
use crate::number::storage::{Word, Words, WordsMut};
use kernels::{
    DecodeParams, EncodePath, Mid, decode_target, encode_source, fused_float, fuses, to_target,
};
use numpy::with_numpy;

/// The Zarr v3 name.
pub const NAME: &str = "numcodecs.fixedscaleoffset";

/// This codec in the registry.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[],
    v2: Some(super::registry::V2Filter {
        // numcodecs' `FixedScaleOffset` filter.
        id: "fixedscaleoffset",
        v3_name: NAME,
        type_keys: &["dtype", "astype"],
    }),
    check: |_, config| FixedScaleOffsetConfig::from_configuration(config).map(drop),
    bind: |_, dt, config| Ok(Box::new(FixedScaleOffsetStage::new(dt, config)?)),
};

fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field,
        reason: reason.into(),
    }
}

fn unsupported(id: DTypeId) -> MetadataError {
    MetadataError::UnsupportedDataType {
        codec: NAME,
        dtype: id.name().into(),
        reason: "numcodecs.fixedscaleoffset supports the NumPy types int8..uint64, float16/32/64",
    }
}

/// The Python `int` `v` must fit the integer type `id` (NumPy raises `OverflowError`).
fn check_int_fits(name: &'static str, id: DTypeId, v: i128) -> Result<i128, MetadataError> {
    match id.kind() {
        crate::dtype::Kind::Int(l) if v < l.min() || v > l.max() => Err(field(
            name,
            format!(
                "Python integer {v} out of bounds for {} (NumPy raises OverflowError)",
                id.name()
            ),
        )),
        _ => Ok(v),
    }
}

/// `x` rounded to the NumPy type `id` (the identity for integer types and float64).
fn round_to(id: DTypeId, x: f64) -> f64 {
    with_numpy!(id, T => <T as NumpyNumber>::round_f64(x), else x)
}

/// Elements per block: encoding and decoding run in two passes over a block, the first
/// depending only on the source type (into float64 values, or integer values for the
/// wrapping path), the second only on the target type. So the kernels are compiled once
/// per NumPy type, 2 × 11, not once per (`dtype`, `astype`) pair. The exceptions are the
/// common cases, which run in one pass: encoding a float32/float64 array into an integer
/// type cast to through 32 bits (`kernels::fuses`, 2 × 3 fused kernels, one per word width)
/// and decoding into float64.
const BLOCK: usize = 512;

/// `numcodecs.fixedscaleoffset` between two NumPy types, untyped: what the typed
/// [`FixedScaleOffset`] and the run-time [`FixedScaleOffsetStage`] both run. Nothing fails
/// on values (NumPy only warns).
#[derive(Clone, Debug, PartialEq)]
pub struct FixedScaleOffsetCore {
    source: DTypeId,
    target: DTypeId,
    encode: EncodePath,
    decode: DecodeParams,
}

impl FixedScaleOffsetCore {
    /// From a parsed configuration: `dtype -> astype`.
    ///
    /// # Errors
    /// A `dtype` or `astype` NumPy does not have; for an integer `dtype`, a Python `int`
    /// offset (or, with an `int` offset, `int` scale) outside its range, which NumPy
    /// refuses.
    pub fn new(config: &FixedScaleOffsetConfig) -> Result<Self, MetadataError> {
        let (source, target) = (config.dtype.id, config.astype_id());
        for id in [source, target] {
            if !numpy_supports(id) {
                return Err(unsupported(id));
            }
        }
        let source_float = matches!(source.kind(), crate::dtype::Kind::Float(_));
        let encode = if source_float {
            EncodePath::Float {
                offset: round_to(source, config.offset.to_f64()),
                scale: round_to(source, config.scale.to_f64()),
            }
        } else {
            match (config.offset, config.scale) {
                (PyNumber::Int(o), PyNumber::Int(s)) => EncodePath::Int {
                    offset: check_int_fits("offset", source, o)?,
                    scale: check_int_fits("scale", source, s)?,
                },
                (PyNumber::Int(o), PyNumber::Float(s)) => EncodePath::IntThenF64 {
                    offset: check_int_fits("offset", source, o)?,
                    scale: s,
                },
                (PyNumber::Float(o), s) => EncodePath::F64 {
                    offset: o,
                    scale: s.to_f64(),
                },
            }
        };
        let decode = DecodeParams {
            offset: round_to(target, config.offset.to_f64()),
            scale: round_to(target, config.scale.to_f64()),
        };
        Ok(FixedScaleOffsetCore {
            source,
            target,
            encode,
            decode,
        })
    }

    /// Encode `src` (words of `dtype`) into `dst` (words of `astype`), the shorter length.
    /// Words of other widths than the types' convert nothing.
    pub fn encode(&self, src: Words<'_>, mut dst: WordsMut<'_>) {
        let n = src.len().min(dst.len());
        let mid_kind = match (self.encode, self.source.kind()) {
            (EncodePath::Int { .. }, crate::dtype::Kind::Int(l)) => Mid::Int {
                unsigned: !l.signed,
            },
            _ => Mid::Float,
        };
        if let EncodePath::Float { offset, scale } = self.encode {
            // The common case, a float64 or float32 array into an integer type cast to
            // through 32 bits: one pass, fused per source type and target word width
            // (2 × 3 kernels). The other targets take the two passes below.
            let (s, d) = (src.sub(0, n), dst.sub(0, n));
            with_numpy!(self.target, T => if const { fuses::<T>() } {
                match self.source {
                    DTypeId::Float64 => return fused_float::<f64, T>(offset, scale, s, d),
                    DTypeId::Float32 => return fused_float::<f32, T>(offset, scale, s, d),
                    _ => {}
                }
            }, else {});
        }
        let mut mid = [0u64; BLOCK];
        let mut start = 0;
        while start < n {
            let end = (start + BLOCK).min(n);
            let m = &mut mid[..end - start];
            let s = src.sub(start, end);
            with_numpy!(self.source, T => encode_source::<T>(self.encode, s, m), else {});
            let d = dst.sub(start, end);
            with_numpy!(self.target, T => to_target::<T>(mid_kind, m, d), else {});
            start = end;
        }
    }

    /// Decode `src` (words of `astype`) into `dst` (words of `dtype`), the shorter length.
    pub fn decode(&self, src: Words<'_>, mut dst: WordsMut<'_>) {
        let n = src.len().min(dst.len());
        if let (Words::U8(codes), true) = (src, n >= super::chain::BYTE_TABLE_MIN) {
            // One byte per element: the 256 codes decoded once, then a lookup per element
            // (`convert::lookup`, which streams a large output). Decoding never fails
            // and is elementwise, so the table gives what decoding each element would.
            // The table's own decode (256 codes) must take the direct path below.
            const { assert!(super::chain::BYTE_TABLE_MIN > 256) };
            let all: [u8; 256] = std::array::from_fn(|i| i as u8);
            macro_rules! lookup {
                ($out:ident, $w:ty) => {{
                    let mut table = [<$w>::default(); 256];
                    self.decode(Words::U8(&all), Word::words_mut(&mut table[..]));
                    crate::convert::lookup::byte_lookup(&table, 1, &codes[..n], &mut $out[..n]);
                }};
            }
            match dst {
                WordsMut::U8(out) => lookup!(out, u8),
                WordsMut::U16(out) => lookup!(out, u16),
                WordsMut::U32(out) => lookup!(out, u32),
                WordsMut::U64(out) => lookup!(out, u64),
            }
            return;
        }
        if let (DTypeId::Float64, WordsMut::U64(out)) = (self.source, &mut dst) {
            // The first pass's float64 values are the output: one pass.
            let p = self.decode;
            let s = src.sub(0, n);
            with_numpy!(self.target, T => decode_target::<T>(p, s, &mut out[..n]), else {});
            return;
        }
        let mut mid = [0u64; BLOCK];
        let mut start = 0;
        while start < n {
            let end = (start + BLOCK).min(n);
            let m = &mut mid[..end - start];
            let s = src.sub(start, end);
            with_numpy!(self.target, T => decode_target::<T>(self.decode, s, m), else {});
            let d = dst.sub(start, end);
            with_numpy!(self.source, T => to_target::<T>(Mid::Float, m, d), else {});
            start = end;
        }
    }
}

/// `numcodecs.fixedscaleoffset` from `S` (`dtype`) to `D` (`astype`), bit for bit as
/// numcodecs computes it with NumPy: `round((x - offset) * scale)` in `S`'s arithmetic (half
/// to even), then NumPy's cast to `D` (which wraps out-of-range integers, as NumPy does).
///
/// ```
/// use zquant::{ArrayCodecExt, FixedScaleOffset, PyNumber};
///
/// let codec = FixedScaleOffset::<f64, u8>::new(PyNumber::Int(1000), PyNumber::Int(10))?;
/// let encoded = codec.encode(&ndarray::array![1000.25, 1000.35, 1012.0])?;
/// assert_eq!(encoded, ndarray::array![2u8, 4, 120]);
/// assert_eq!(codec.decode(&encoded)?, ndarray::array![1000.2, 1000.4, 1012.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FixedScaleOffset<S: NumpyNumber, D: NumpyNumber> {
    config: FixedScaleOffsetConfig,
    core: FixedScaleOffsetCore,
    _t: std::marker::PhantomData<fn(S) -> D>,
}

impl<S: NumpyNumber, D: NumpyNumber> FixedScaleOffset<S, D> {
    /// A codec with the given Python scalars (`dtype`/`astype` written as Zarr v2 strings).
    ///
    /// # Errors
    /// See [`FixedScaleOffset::from_config`].
    pub fn new(offset: PyNumber, scale: PyNumber) -> Result<Self, MetadataError> {
        let ids = |name: &str| name.parse::<DTypeId>().ok();
        let (Some(s), Some(d)) = (ids(S::NAME), ids(D::NAME)) else {
            return Err(field("dtype", "not a built-in data type"));
        };
        Self::from_config(&FixedScaleOffsetConfig {
            offset,
            scale,
            dtype: NumpyDType::v2(s),
            astype: (s != d).then(|| NumpyDType::v2(d)),
        })
    }

    /// Parse and bind the codec object's `configuration` member (see
    /// [`FixedScaleOffsetConfig::from_configuration`] and [`Self::from_config`]).
    ///
    /// ```
    /// use zquant::FixedScaleOffset;
    /// let codec = FixedScaleOffset::<f64, u8>::from_configuration(Some(&serde_json::json!(
    ///     {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}
    /// )))?;
    /// assert_eq!(zquant::ArrayCodec::to_metadata(&codec)["configuration"]["astype"], "|u1");
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// See [`FixedScaleOffsetConfig::from_configuration`] and [`Self::from_config`].
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        Self::from_config(&FixedScaleOffsetConfig::from_configuration(config)?)
    }

    /// Bind a parsed configuration to the types `S -> D`.
    ///
    /// # Errors
    /// `dtype` is not `S` or `astype` not `D`; for an integer `S`, a Python `int` offset
    /// (or, with an `int` offset, `int` scale) outside `S`'s range, which NumPy refuses.
    pub fn from_config(config: &FixedScaleOffsetConfig) -> Result<Self, MetadataError> {
        if config.dtype.id.name() != S::NAME {
            return Err(field(
                "dtype",
                format!(
                    "{:?} is {}, but the array data type is {}",
                    config.dtype.text,
                    config.dtype.id.name(),
                    S::NAME
                ),
            ));
        }
        if config.astype_id().name() != D::NAME {
            return Err(field(
                "astype",
                format!(
                    "configured {}, but the codec is typed for {}",
                    config.astype_id().name(),
                    D::NAME
                ),
            ));
        }
        Ok(FixedScaleOffset {
            config: config.clone(),
            core: FixedScaleOffsetCore::new(config)?,
            _t: std::marker::PhantomData,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &FixedScaleOffsetConfig {
        &self.config
    }

    /// Encode one element.
    pub fn encode_one(&self, x: S) -> D {
        let mut out = [D::default()];
        self.core
            .encode(words_of(std::slice::from_ref(&x)), words_of_mut(&mut out));
        out[0]
    }

    /// Decode one element.
    pub fn decode_one(&self, y: D) -> S {
        let mut out = [S::default()];
        self.core
            .decode(words_of(std::slice::from_ref(&y)), words_of_mut(&mut out));
        out[0]
    }
}

fn metadata(c: &FixedScaleOffsetConfig) -> Value {
    let mut obj = Map::new();
    obj.insert("name".into(), Value::from(NAME));
    obj.insert("configuration".into(), c.to_configuration());
    Value::Object(obj)
}

impl<S: NumpyNumber, D: NumpyNumber> ArrayCodec for FixedScaleOffset<S, D> {
    type In = S;
    type Out = D;

    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_slice(&self, src: &[S], dst: &mut [D]) -> Result<(), ElementError> {
        super::same_length(NAME, super::Direction::Encode, src.len(), dst.len())?;
        self.core.encode(words_of(src), words_of_mut(dst));
        Ok(())
    }

    fn decode_slice(&self, src: &[D], dst: &mut [S]) -> Result<(), ElementError> {
        super::same_length(NAME, super::Direction::Decode, src.len(), dst.len())?;
        self.core.decode(words_of(src), words_of_mut(dst));
        Ok(())
    }

    fn to_metadata(&self) -> Value {
        metadata(&self.config)
    }
}

/// `numcodecs.fixedscaleoffset` bound to run-time data types: one type for every
/// (`dtype`, `astype`) pair.
#[derive(Debug)]
pub struct FixedScaleOffsetStage {
    config: FixedScaleOffsetConfig,
    core: FixedScaleOffsetCore,
    input: DataType,
    output: DataType,
}

impl FixedScaleOffsetStage {
    /// Bind a `configuration` to the array data type `dt`.
    ///
    /// # Errors
    /// Invalid configuration; a `dtype` or `astype` that NumPy does not have
    /// ([`MetadataError::UnsupportedDataType`]); a `dtype` other than `dt`.
    pub fn new(dt: &DataType, config: Option<&Value>) -> Result<Self, MetadataError> {
        // Configuration errors are reported before data type errors.
        let cfg = FixedScaleOffsetConfig::from_configuration(config)?;
        if !numpy_supports(dt.id) {
            return Err(unsupported(dt.id));
        }
        let target = cfg.astype_id();
        if !numpy_supports(target) {
            return Err(unsupported(target));
        }
        if cfg.dtype.id != dt.id {
            return Err(field(
                "dtype",
                format!(
                    "{:?} is {}, but the array data type is {}",
                    cfg.dtype.text,
                    cfg.dtype.id.name(),
                    dt.id.name()
                ),
            ));
        }
        Ok(FixedScaleOffsetStage {
            core: FixedScaleOffsetCore::new(&cfg)?,
            config: cfg,
            input: dt.clone(),
            output: DataType::new(target),
        })
    }
}

impl DynStage for FixedScaleOffsetStage {
    fn name(&self) -> &'static str {
        NAME
    }
    fn input(&self) -> &DataType {
        &self.input
    }
    fn output(&self) -> &DataType {
        &self.output
    }
    fn encode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.input, &self.output, &src, &dst)?;
        self.core.encode(src, dst);
        Ok(())
    }
    fn decode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.output, &self.input, &src, &dst)?;
        self.core.decode(src, dst);
        Ok(())
    }
    fn to_metadata(&self) -> Value {
        metadata(&self.config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::xorshift::{unit, xorshift32};

    /// Encoding a float64 or float32 array writes, at every instruction-set level and into
    /// each of the eleven types, NumPy's `astype(rint(S(S(x - offset) * scale)))` per
    /// element, whether the one fused pass or the two passes run it: on values in and out
    /// of each target's range, ties, ±Inf and NaN, odd lengths and block edges.
    #[test]
    fn float_encoding_into_every_type_at_every_level() {
        let mut next = xorshift32(0x2545_f491);
        let mut values: Vec<f64> = (0..1500)
            .map(|i| {
                let r = unit(next());
                match i % 5 {
                    0 => (r * 600.0 - 300.0).round() / 10.0 + 1000.05,
                    1 => r * 1e12 - 5e11,
                    2 => r * 4e18,
                    _ => r * 40.0 + 990.0,
                }
            })
            .collect();
        values.extend([f64::NAN, f64::INFINITY, -f64::INFINITY, 0.0, -0.0, 1e300]);
        fn check<S: NumpyNumber, T: NumpyNumber>(values: &[f64]) {
            let (offset, scale) = (PyNumber::Float(1000.5), PyNumber::Int(10));
            let src: Vec<S> = values.iter().map(|&v| S::from_f64(v)).collect();
            let want: Vec<u64> = src
                .iter()
                .map(|&x| {
                    let (o, k) = (S::round_f64(1000.5), S::round_f64(10.0));
                    let d = S::round_f64(x.to_f64() - o);
                    T::from_f64(S::round_f64(d * k).round_ties_even()).to_bits()
                })
                .collect();
            let c = FixedScaleOffset::<S, T>::new(offset, scale).unwrap();
            for level in crate::isa::Isa::available() {
                for (start, len) in [(0, src.len()), (3, 1027), (1, 7), (0, 512)] {
                    let mut out = vec![T::default(); len];
                    crate::isa::with_max_isa(level, || {
                        c.encode_slice(&src[start..start + len], &mut out).unwrap()
                    });
                    let got: Vec<u64> = out.iter().map(|y| y.to_bits()).collect();
                    let ctx = format!(
                        "{} -> {} {level:?} {start} {len}",
                        std::any::type_name::<S>(),
                        std::any::type_name::<T>()
                    );
                    assert!(got[..] == want[start..start + len], "{ctx}");
                }
            }
        }
        fn each<S: NumpyNumber>(values: &[f64]) {
            check::<S, i8>(values);
            check::<S, i16>(values);
            check::<S, i32>(values);
            check::<S, i64>(values);
            check::<S, u8>(values);
            check::<S, u16>(values);
            check::<S, u32>(values);
            check::<S, u64>(values);
            check::<S, half::f16>(values);
            check::<S, f32>(values);
            check::<S, f64>(values);
        }
        each::<f64>(&values);
        each::<f32>(&values);
    }

    #[test]
    fn encode_rules() {
        let c = |o, s| FixedScaleOffset::<f64, u8>::new(o, s).unwrap();
        let fso = c(PyNumber::Int(1000), PyNumber::Int(10));
        assert_eq!(fso.encode_one(1000.25), 2); // 2.5 -> 2 (half to even)
        assert_eq!(fso.encode_one(1000.35), 4); // 3.5 -> 4
        // Integer dtype with int scalars wraps in the dtype.
        let u = FixedScaleOffset::<u16, u8>::new(PyNumber::Int(64), PyNumber::Int(1)).unwrap();
        assert_eq!(u.encode_one(0), 192);
        assert!(FixedScaleOffset::<u16, u8>::new(PyNumber::Int(-1), PyNumber::Int(1)).is_err());
        assert!(FixedScaleOffset::<i8, i8>::new(PyNumber::Int(0), PyNumber::Int(200)).is_err());
        // ... but a float offset computes in float64, so the scale may be any int.
        assert!(FixedScaleOffset::<i8, i8>::new(PyNumber::Float(0.0), PyNumber::Int(200)).is_ok());
        // Float astype still rounds.
        let f = FixedScaleOffset::<f64, f32>::new(PyNumber::Int(0), PyNumber::Float(0.1)).unwrap();
        assert_eq!(f.encode_one(2698.3), 270.0);
    }
}
