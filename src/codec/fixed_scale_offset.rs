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
//! ```json
//! {"name": "numcodecs.fixedscaleoffset",
//!  "configuration": {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}}
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
//!    NumPy's loops compile to on x86-64 (see [`float_to_int_x86`]): truncate towards zero,
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
//! So, with `W` the working type: encoding is `astype(rint(W(W(x - offset) * scale)))`,
//! where `W` is the float `dtype`, or for an integer `dtype` either the type itself (both
//! scalars Python `int`s: wrapping, no rounding), or float64 after a wrapping subtraction
//! (`int` offset, `float` scale), or float64 throughout (`float` offset). Decoding is
//! `dtype(V(V(y / scale) + offset))` with `V` the float `astype`, or float64 for an integer
//! `astype`. Nothing fails on values (NumPy only warns), so the kernels never fail; the
//! fill value is encoded like any element (catalogue `fso-fill`; zarr-python keeps it
//! unchanged).

use serde_json::{Map, Value};

use super::ArrayCodec;
use crate::dtype::{DTypeId, Real};
use crate::error::{ElementError, MetadataError};

/// The Zarr v3 name.
pub const NAME: &str = "numcodecs.fixedscaleoffset";

fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field,
        reason: reason.into(),
    }
}

// ---------------------------------------------------------------------------------------
// NumPy's numeric rules
// ---------------------------------------------------------------------------------------

/// `cvttsd2si` with a 32-bit destination: truncate towards zero; NaN and values whose
/// truncation is outside `[-2^31, 2^31 - 1]` give the "integer indefinite" `-2^31`.
#[inline(always)]
pub fn cvtt_i32(x: f64) -> i32 {
    // `x > -2^31 - 1` keeps everything that truncates to -2^31; NaN fails both tests.
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// `cvttsd2si` with a 64-bit destination: truncate towards zero; NaN and values outside
/// `[-2^63, 2^63)` give `-2^63`.
#[inline(always)]
pub fn cvtt_i64(x: f64) -> i64 {
    // -2^63 is a double; the next double below it truncates out of range.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// GCC's x86-64 `(uint64_t)double`: `x < 2^63` (or NaN, the comparison being unordered)
/// takes `cvtt_i64(x)`'s bits; otherwise `cvtt_i64(x - 2^63)` with bit 63 flipped.
#[inline(always)]
pub fn cvtt_u64(x: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if x >= TWO63 {
        (cvtt_i64(x - TWO63) as u64) ^ (1 << 63)
    } else {
        cvtt_i64(x) as u64
    }
}

/// NumPy's float->int cast (`arr.astype(int type)`) on x86-64, for a float value `x` and
/// an integer type of `bits` bits: the result's two's complement bits (the low `bits` of
/// the returned word). `float16`/`float32` values are exact in `f64`, and the C cast of a
/// `float` behaves like that of the `double` with the same value.
///
/// NumPy's cast loops are plain C casts, which GCC compiles to `cvttss2si`/`cvttsd2si`:
/// 32-bit for `int8`/`int16`/`uint8`/`uint16`/`int32` (the narrow ones then keep the low
/// bits), 64-bit for `uint32` (low 32 bits kept) and `int64`, and [`cvtt_u64`] for
/// `uint64`. Out-of-range values and NaN therefore give the patterns of the "integer
/// indefinite" value `0x80…0` rather than saturating.
#[inline(always)]
pub fn float_to_int_x86(x: f64, bits: u32, signed: bool) -> u64 {
    match (bits, signed) {
        (64, false) => cvtt_u64(x),
        (64, true) | (32, false) => cvtt_i64(x) as u64,
        _ => cvtt_i32(x) as i64 as u64,
    }
}

/// The correctly rounded (nearest-even) `f64 -> float16` conversion, as NumPy's
/// `npy_double_to_half`. Rounds to odd into `f32` (24 bits >= 11 + 2, so the second
/// rounding is innocuous), then rounds that to `float16`. (`half::f16::from_f64` goes
/// through a nearest `f32` on F16C hardware, which double-rounds.)
#[inline(always)]
pub fn f64_to_f16(x: f64) -> half::f16 {
    let t = x as f32;
    if f64::from(t) == x || x.is_nan() {
        return half::f16::from_f32(t);
    }
    // Inexact: truncate towards zero (one ulp back when nearest went away from zero; an
    // infinity becomes the largest finite value), then set the sticky bit.
    let mut bits = t.to_bits();
    if f64::from(t).abs() > x.abs() {
        bits -= 1;
    }
    half::f16::from_f32(f32::from_bits(bits | 1))
}

/// The element types NumPy has, with the casts and arithmetic numcodecs relies on.
pub trait NumpyNumber: Real {
    /// Whether this is `float16`/`float32`/`float64`.
    const IS_FLOAT: bool;
    /// The cast to float64: exact for floats, nearest-even for 64-bit integers.
    fn to_f64(self) -> f64;
    /// The cast from a float value `x` (already a value of the source float type): nearest
    /// even for floats (±Inf on overflow), the x86-64 rule of [`float_to_int_x86`] for
    /// integers.
    fn from_f64(x: f64) -> Self;
    /// The value of an integer (floats: their value truncated; not used).
    fn to_i128(self) -> i128;
    /// The cast from an integer value `v`: the low bits for integers (so that wrapping
    /// arithmetic done in `i128` lands on the type's own wrapping result), nearest-even for
    /// floats.
    fn from_i128(v: i128) -> Self;
    /// `x` rounded to this float type, as `f64` (integers: unused, identity).
    #[inline(always)]
    fn round_f64(x: f64) -> f64 {
        Self::from_f64(x).to_f64()
    }
}

macro_rules! numpy_int {
    ($($t:ty => $signed:expr),* $(,)?) => {$(
        impl NumpyNumber for $t {
            const IS_FLOAT: bool = false;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                float_to_int_x86(x, <$t>::BITS, $signed) as $t
            }
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn from_i128(v: i128) -> Self {
                v as $t
            }
            #[inline(always)]
            fn round_f64(x: f64) -> f64 {
                x
            }
        }
    )*};
}

numpy_int!(
    i8 => true,
    i16 => true,
    i32 => true,
    i64 => true,
    u8 => false,
    u16 => false,
    u32 => false,
    u64 => false,
);

impl NumpyNumber for half::f16 {
    const IS_FLOAT: bool = true;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        half::f16::to_f64(self)
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        f64_to_f16(x)
    }
    #[inline(always)]
    fn to_i128(self) -> i128 {
        half::f16::to_f64(self) as i128
    }
    #[inline(always)]
    fn from_i128(v: i128) -> Self {
        // Exact in f64 below 2^53; anything larger is beyond float16 either way.
        f64_to_f16(v as f64)
    }
}

impl NumpyNumber for f32 {
    const IS_FLOAT: bool = true;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn from_i128(v: i128) -> Self {
        v as f32
    }
}

impl NumpyNumber for f64 {
    const IS_FLOAT: bool = true;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn to_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn from_i128(v: i128) -> Self {
        v as f64
    }
    #[inline(always)]
    fn round_f64(x: f64) -> f64 {
        x
    }
}

/// Whether NumPy has this data type (and so numcodecs can use it as `dtype`/`astype`).
pub fn numpy_supports(id: DTypeId) -> bool {
    use DTypeId::*;
    matches!(
        id,
        Int8 | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float16
            | Float32
            | Float64
    )
}

// ---------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------

/// A JSON number as Python's `json` module reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PyNumber {
    /// No fraction and no exponent: a Python `int`.
    Int(i128),
    /// A Python `float` (the nearest double to the decimal text).
    Float(f64),
}

impl PyNumber {
    /// Read a JSON number (its decimal text is kept by `serde_json`'s
    /// `arbitrary_precision`).
    ///
    /// # Errors
    /// Not a number; an integer beyond `i128`.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        let Value::Number(n) = v else {
            return Err(format!("must be a JSON number, got {v}"));
        };
        let text = n.to_string();
        if text.contains(['.', 'e', 'E']) {
            text.parse::<f64>()
                .map(PyNumber::Float)
                .map_err(|e| format!("invalid number {text}: {e}"))
        } else {
            text.parse::<i128>()
                .map(PyNumber::Int)
                .map_err(|_| format!("integer {text} is too large"))
        }
    }

    /// The nearest double (Python's `float(int)`).
    pub fn to_f64(self) -> f64 {
        match self {
            PyNumber::Int(i) => i as f64,
            PyNumber::Float(f) => f,
        }
    }

    /// The JSON number, written so that it reads back as the same Python number.
    pub fn to_json(self) -> Value {
        match self {
            PyNumber::Int(i) => match (i64::try_from(i), u64::try_from(i)) {
                (Ok(v), _) => Value::from(v),
                (_, Ok(v)) => Value::from(v),
                _ => serde_json::from_str(&i.to_string()).unwrap_or(Value::Null),
            },
            // `{:?}` always writes a `.` or an exponent, so the text stays a float. An
            // infinity (read from a text like `1e400`, as Python does) is written back as one.
            PyNumber::Float(f) => {
                let text = match f {
                    f64::INFINITY => "1e999".to_string(),
                    f64::NEG_INFINITY => "-1e999".to_string(),
                    _ => format!("{f:?}"),
                };
                serde_json::from_str(&text).unwrap_or(Value::Null)
            }
        }
    }
}

/// A `dtype`/`astype` value: the data type and the text it was written as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumpyDType {
    /// The data type.
    pub id: DTypeId,
    /// As written in the configuration.
    pub text: String,
}

/// Parse a Zarr v2 data type string (`"<f8"`, `"|u1"`, …) or a Zarr v3 data type name.
///
/// # Errors
/// An unknown or big-endian multi-byte data type.
pub fn parse_dtype(s: &str) -> Result<DTypeId, String> {
    if let Ok(id) = s.parse::<DTypeId>() {
        return Ok(id);
    }
    let (order, code) = match s.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (Some(c), &s[1..]),
        _ => (None, s),
    };
    use DTypeId::*;
    let id = match code {
        "i1" => Int8,
        "i2" => Int16,
        "i4" => Int32,
        "i8" => Int64,
        "u1" => UInt8,
        "u2" => UInt16,
        "u4" => UInt32,
        "u8" => UInt64,
        "f2" => Float16,
        "f4" => Float32,
        "f8" => Float64,
        "c8" => Complex64,
        "c16" => Complex128,
        _ => return Err(format!("unknown data type {s:?}")),
    };
    if order == Some('>') && id.size() > 1 {
        return Err(format!(
            "big-endian data type {s:?} is not supported (Zarr v3 arrays hold native values)"
        ));
    }
    Ok(id)
}

impl NumpyDType {
    fn from_json(name: &'static str, v: &Value) -> Result<Self, MetadataError> {
        let Value::String(s) = v else {
            return Err(field(name, format!("must be a data type string, got {v}")));
        };
        let id = parse_dtype(s).map_err(|e| field(name, e))?;
        Ok(NumpyDType {
            id,
            text: s.clone(),
        })
    }

    /// The Zarr v2 string of a NumPy type (`"<f8"`, `"|u1"`).
    pub fn v2(id: DTypeId) -> Self {
        let kind = match id.kind() {
            crate::dtype::Kind::Float(_) => 'f',
            crate::dtype::Kind::Int(l) if l.signed => 'i',
            _ => 'u',
        };
        let order = if id.size() == 1 { '|' } else { '<' };
        NumpyDType {
            id,
            text: format!("{order}{kind}{}", id.size()),
        }
    }
}

/// The untyped `configuration` of a `numcodecs.fixedscaleoffset` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedScaleOffsetConfig {
    /// Subtracted before scaling.
    pub offset: PyNumber,
    /// Multiplied after subtracting.
    pub scale: PyNumber,
    /// The decoded data type.
    pub dtype: NumpyDType,
    /// The encoded data type, if written (`dtype` otherwise).
    pub astype: Option<NumpyDType>,
}

impl FixedScaleOffsetConfig {
    /// Parse a `configuration` object.
    ///
    /// # Errors
    /// A missing or non-object configuration, unknown keys, a missing `offset`/`scale`/
    /// `dtype`, a non-number scalar, an unknown data type string.
    pub fn from_json(config: Option<&Value>) -> Result<Self, MetadataError> {
        let Some(Value::Object(map)) = config else {
            return Err(field(
                "configuration",
                "numcodecs.fixedscaleoffset requires a configuration object",
            ));
        };
        if let Some(k) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "offset" | "scale" | "dtype" | "astype"))
        {
            return Err(field("configuration", format!("unknown key {k:?}")));
        }
        let number = |name: &'static str| match map.get(name) {
            None => Err(field(name, "missing")),
            Some(v) => PyNumber::from_json(v).map_err(|e| field(name, e)),
        };
        let offset = number("offset")?;
        let scale = number("scale")?;
        let dtype = match map.get("dtype") {
            None => return Err(field("dtype", "missing")),
            Some(v) => NumpyDType::from_json("dtype", v)?,
        };
        let astype = map
            .get("astype")
            .map(|v| NumpyDType::from_json("astype", v))
            .transpose()?;
        Ok(FixedScaleOffsetConfig {
            offset,
            scale,
            dtype,
            astype,
        })
    }

    /// The encoded data type.
    pub fn astype_id(&self) -> DTypeId {
        self.astype.as_ref().map_or(self.dtype.id, |a| a.id)
    }
}

// ---------------------------------------------------------------------------------------
// The codec
// ---------------------------------------------------------------------------------------

/// How encoding computes, decided once from the types and the Python scalar kinds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum EncodePath {
    /// Float `dtype`: everything in that type; `offset`/`scale` rounded to it.
    Float { offset: f64, scale: f64 },
    /// Integer `dtype`, `int` offset and scale: wrapping arithmetic in the type.
    Int { offset: i128, scale: i128 },
    /// Integer `dtype`, `int` offset, `float` scale: wrapping subtraction, then float64.
    IntThenF64 { offset: i128, scale: f64 },
    /// Integer `dtype`, `float` offset: float64 throughout.
    F64 { offset: f64, scale: f64 },
}

/// How decoding computes: in `V`, the float `astype`, or float64 for an integer `astype`
/// (`offset`/`scale` rounded to `V`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct DecodeParams {
    offset: f64,
    scale: f64,
}

/// `numcodecs.fixedscaleoffset` from `S` (`dtype`) to `D` (`astype`).
#[derive(Clone, Debug, PartialEq)]
pub struct FixedScaleOffset<S: NumpyNumber, D: NumpyNumber> {
    config: FixedScaleOffsetConfig,
    encode: EncodePath,
    decode: DecodeParams,
    _t: std::marker::PhantomData<fn(S) -> D>,
}

fn check_int_fits<S: NumpyNumber>(name: &'static str, v: i128) -> Result<i128, MetadataError> {
    if S::from_i128(v).to_i128() == v {
        Ok(v)
    } else {
        Err(field(
            name,
            format!(
                "Python integer {v} out of bounds for {} (NumPy raises OverflowError)",
                S::NAME
            ),
        ))
    }
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
        let encode = if S::IS_FLOAT {
            EncodePath::Float {
                offset: S::round_f64(config.offset.to_f64()),
                scale: S::round_f64(config.scale.to_f64()),
            }
        } else {
            match (config.offset, config.scale) {
                (PyNumber::Int(o), PyNumber::Int(s)) => EncodePath::Int {
                    offset: check_int_fits::<S>("offset", o)?,
                    scale: check_int_fits::<S>("scale", s)?,
                },
                (PyNumber::Int(o), PyNumber::Float(s)) => EncodePath::IntThenF64 {
                    offset: check_int_fits::<S>("offset", o)?,
                    scale: s,
                },
                (PyNumber::Float(o), s) => EncodePath::F64 {
                    offset: o,
                    scale: s.to_f64(),
                },
            }
        };
        let decode = DecodeParams {
            offset: D::round_f64(config.offset.to_f64()),
            scale: D::round_f64(config.scale.to_f64()),
        };
        Ok(FixedScaleOffset {
            config: config.clone(),
            encode,
            decode,
            _t: std::marker::PhantomData,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &FixedScaleOffsetConfig {
        &self.config
    }

    /// Encode one element.
    #[inline(always)]
    pub fn encode_one(&self, x: S) -> D {
        match self.encode {
            EncodePath::Float { offset, scale } => float_encode::<S, D>(x, offset, scale),
            EncodePath::Int { offset, scale } => int_encode::<S, D>(x, offset, scale),
            EncodePath::IntThenF64 { offset, scale } => {
                int_then_f64_encode::<S, D>(x, offset, scale)
            }
            EncodePath::F64 { offset, scale } => f64_encode::<S, D>(x, offset, scale),
        }
    }

    /// Decode one element.
    #[inline(always)]
    pub fn decode_one(&self, y: D) -> S {
        decode::<S, D>(y, self.decode.offset, self.decode.scale)
    }
}

#[inline(always)]
fn float_encode<S: NumpyNumber, D: NumpyNumber>(x: S, offset: f64, scale: f64) -> D {
    let d = S::round_f64(x.to_f64() - offset);
    let m = S::round_f64(d * scale);
    // rint of a value of S is a value of S.
    D::from_f64(m.round_ties_even())
}

#[inline(always)]
fn int_encode<S: NumpyNumber, D: NumpyNumber>(x: S, offset: i128, scale: i128) -> D {
    let d = S::from_i128(x.to_i128().wrapping_sub(offset));
    let m = S::from_i128(d.to_i128().wrapping_mul(scale));
    D::from_i128(m.to_i128())
}

#[inline(always)]
fn int_then_f64_encode<S: NumpyNumber, D: NumpyNumber>(x: S, offset: i128, scale: f64) -> D {
    let d = S::from_i128(x.to_i128().wrapping_sub(offset));
    D::from_f64((d.to_f64() * scale).round_ties_even())
}

#[inline(always)]
fn f64_encode<S: NumpyNumber, D: NumpyNumber>(x: S, offset: f64, scale: f64) -> D {
    D::from_f64(((x.to_f64() - offset) * scale).round_ties_even())
}

#[inline(always)]
fn decode<S: NumpyNumber, D: NumpyNumber>(y: D, offset: f64, scale: f64) -> S {
    // For an integer D, `round_f64` is the identity: float64 arithmetic.
    let q = D::round_f64(y.to_f64() / scale);
    S::from_f64(D::round_f64(q + offset))
}

/// Apply `f` to every element; nothing can fail.
#[inline(always)]
fn map_all<A: Copy, B>(src: &[A], dst: &mut [B], f: impl Fn(A) -> B) {
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = f(*s);
    }
}

impl<S: NumpyNumber, D: NumpyNumber> ArrayCodec for FixedScaleOffset<S, D> {
    type In = S;
    type Out = D;

    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_slice(&self, src: &[S], dst: &mut [D]) -> Result<(), ElementError> {
        // One loop per path, so that the match is not in the loop; compiled with AVX2 where
        // the CPU has it (`round_ties_even` is a library call without SSE4.1).
        let encode = self.encode;
        crate::arch::vectorized(
            #[inline(always)]
            || match encode {
                EncodePath::Float { offset, scale } => {
                    map_all(src, dst, |x| float_encode::<S, D>(x, offset, scale));
                }
                EncodePath::Int { offset, scale } => {
                    map_all(src, dst, |x| int_encode::<S, D>(x, offset, scale));
                }
                EncodePath::IntThenF64 { offset, scale } => {
                    map_all(src, dst, |x| int_then_f64_encode::<S, D>(x, offset, scale));
                }
                EncodePath::F64 { offset, scale } => {
                    map_all(src, dst, |x| f64_encode::<S, D>(x, offset, scale));
                }
            },
        );
        Ok(())
    }

    fn decode_slice(&self, src: &[D], dst: &mut [S]) -> Result<(), ElementError> {
        let DecodeParams { offset, scale } = self.decode;
        crate::arch::vectorized(
            #[inline(always)]
            || map_all(src, dst, |y| decode::<S, D>(y, offset, scale)),
        );
        Ok(())
    }

    fn to_metadata(&self) -> Value {
        let c = &self.config;
        let mut config = Map::new();
        config.insert("offset".into(), c.offset.to_json());
        config.insert("scale".into(), c.scale.to_json());
        config.insert("dtype".into(), Value::from(c.dtype.text.clone()));
        if let Some(a) = &c.astype {
            config.insert("astype".into(), Value::from(a.text.clone()));
        }
        let mut obj = Map::new();
        obj.insert("name".into(), Value::from(NAME));
        obj.insert("configuration".into(), Value::Object(config));
        Value::Object(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{CastOptions, OutOfRange, Rounding};
    use half::f16;

    fn reference_f16(x: f64) -> f16 {
        <f16 as Real>::from_exact(
            <f64 as Real>::to_exact(x),
            CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        )
        .0
    }

    #[test]
    fn f64_to_f16_is_correctly_rounded() {
        // Ties and near-ties around float16 rounding points, where a nearest f32 would
        // double-round.
        let tie = 1.0 + 2f64.powi(-11); // halfway between 1 and 1 + 2^-10
        for x in [
            tie,
            tie + 2f64.powi(-40),
            tie - 2f64.powi(-40),
            -tie - 2f64.powi(-40),
            65504.0,
            65519.99,
            65520.0,
            1e300,
            -1e300,
            2f64.powi(-25),
            2f64.powi(-25) + 2f64.powi(-60),
            -2f64.powi(-25),
            5.960464477539063e-8,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(
                f64_to_f16(x).to_bits(),
                reference_f16(x).to_bits(),
                "x = {x:e}"
            );
        }
        assert!(f64_to_f16(f64::NAN).is_nan());
        // A deterministic sweep of bit patterns.
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Exponents near float16's range, arbitrary mantissas.
            let exp = 1023 - 30 + (s >> 52) % 50;
            let x = f64::from_bits((s & 0x800f_ffff_ffff_ffff) | (exp << 52));
            assert_eq!(
                f64_to_f16(x).to_bits(),
                reference_f16(x).to_bits(),
                "x = {x:e}"
            );
        }
    }

    #[test]
    fn x86_float_to_int() {
        assert_eq!(u8::from_f64(265.0), 9);
        assert_eq!(u8::from_f64(-1.0), 255);
        assert_eq!(u8::from_f64(f64::NAN), 0);
        assert_eq!(i8::from_f64(-129.0), 127);
        assert_eq!(i16::from_f64(32776.0), -32760);
        assert_eq!(i16::from_f64(1e10), 0);
        assert_eq!(i32::from_f64(2147483657.0), i32::MIN);
        assert_eq!(i32::from_f64(-2147483648.9), i32::MIN);
        assert_eq!(i32::from_f64(-2147483649.0), i32::MIN);
        assert_eq!(i32::from_f64(2147483647.9), i32::MAX);
        assert_eq!(i32::from_f64(f64::NAN), i32::MIN);
        assert_eq!(u32::from_f64(4294967301.0), 5);
        assert_eq!(u32::from_f64(-1.0), u32::MAX);
        assert_eq!(u32::from_f64(1e20), 0);
        assert_eq!(i64::from_f64(1e19), i64::MIN);
        assert_eq!(i64::from_f64(f64::NEG_INFINITY), i64::MIN);
        assert_eq!(u64::from_f64(1.5e19), 15_000_000_000_000_000_000);
        assert_eq!(u64::from_f64(2f64.powi(64)), 0);
        assert_eq!(u64::from_f64(f64::INFINITY), 0);
        assert_eq!(u64::from_f64(f64::NAN), 1 << 63);
        assert_eq!(u64::from_f64(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(u64::from_f64(-1.0), u64::MAX);
        assert_eq!(u64::from_f64(-0.9), 0);
    }

    #[test]
    fn python_numbers() {
        let n = |s: &str| PyNumber::from_json(&serde_json::from_str(s).unwrap()).unwrap();
        assert_eq!(n("10"), PyNumber::Int(10));
        assert_eq!(n("-0"), PyNumber::Int(0));
        assert_eq!(n("10.0"), PyNumber::Float(10.0));
        assert_eq!(n("1e3"), PyNumber::Float(1000.0));
        assert_eq!(n("0.1"), PyNumber::Float(0.1));
        for p in [
            PyNumber::Int(-5),
            PyNumber::Int(u64::MAX as i128),
            PyNumber::Float(10.0),
            PyNumber::Float(0.1),
            PyNumber::Float(-0.0),
            PyNumber::Float(1e300),
            PyNumber::Float(f64::INFINITY),
            PyNumber::Float(f64::NEG_INFINITY),
        ] {
            let back = PyNumber::from_json(&p.to_json()).unwrap();
            assert!(
                back == p && back.to_f64().to_bits() == p.to_f64().to_bits(),
                "{p:?}"
            );
        }
    }

    #[test]
    fn metadata_rules() {
        use crate::error::MetadataError;
        use crate::pipeline::DynChain;
        use serde_json::json;
        let build = |dt: &str, config: Value| {
            DynChain::from_metadata(
                &json!(dt),
                &json!(0),
                &[json!({"name": NAME, "configuration": config})],
            )
        };
        let field_of = |r: Result<DynChain, MetadataError>| match r {
            Err(MetadataError::Field { field, .. }) => field,
            other => panic!("expected a field error, got {other:?}"),
        };
        let ok = build(
            "float32",
            json!({"offset": 1e3, "scale": 0.5, "dtype": "<f4", "astype": "uint8"}),
        )
        .unwrap();
        assert_eq!(ok.encoded_data_type().id, DTypeId::UInt8);
        assert_eq!(
            ok.to_metadata(),
            json!([{"name": NAME, "configuration":
                {"offset": 1e3, "scale": 0.5, "dtype": "<f4", "astype": "uint8"}}])
        );
        // astype defaults to dtype.
        let same = build("int16", json!({"offset": 1, "scale": 2, "dtype": "<i2"})).unwrap();
        assert_eq!(same.encoded_data_type().id, DTypeId::Int16);
        let cfg = |extra: Value| {
            let mut c = json!({"offset": 0, "scale": 1, "dtype": "<f8"});
            for (k, v) in extra.as_object().unwrap() {
                if v.is_null() {
                    c.as_object_mut().unwrap().remove(k);
                } else {
                    c[k] = v.clone();
                }
            }
            c
        };
        assert_eq!(
            field_of(build("float64", cfg(json!({"id": "x"})))),
            "configuration"
        );
        assert_eq!(
            field_of(build("float64", cfg(json!({"dtype": "<f4"})))),
            "dtype"
        );
        assert_eq!(
            field_of(build("float64", cfg(json!({"dtype": ">f8"})))),
            "dtype"
        );
        assert_eq!(
            field_of(build("float64", cfg(json!({"dtype": "<x8"})))),
            "dtype"
        );
        assert_eq!(
            field_of(build("float64", cfg(json!({"dtype": null})))),
            "dtype"
        );
        assert_eq!(
            field_of(build("float64", cfg(json!({"offset": null})))),
            "offset"
        );
        assert_eq!(
            field_of(build("float64", cfg(json!({"scale": "2"})))),
            "scale"
        );
        assert_eq!(
            field_of(build("float64", cfg(json!({"astype": 3})))),
            "astype"
        );
        assert_eq!(
            field_of(build(
                "uint8",
                json!({"offset": 256, "scale": 1, "dtype": "|u1"})
            )),
            "offset"
        );
        assert!(build("uint8", json!({"offset": 1, "scale": 1, "dtype": ">u1"})).is_ok());
        for (dt, astype) in [
            ("bfloat16", "bfloat16"),
            ("float64", "int4"),
            ("float64", "<c8"),
        ] {
            let r = build(
                dt,
                json!({"offset": 0, "scale": 1, "dtype": dt, "astype": astype}),
            );
            assert!(
                matches!(r, Err(MetadataError::UnsupportedDataType { .. })),
                "{dt} -> {astype}: {r:?}"
            );
        }
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
