//! The `numcodecs.quantize` array->array codec: numcodecs' `Quantize`, rounding floats to a
//! number of decimal digits (to a multiple of a power of two), reproduced byte for byte
//! (NumPy 2 on x86-64).
//!
//! ### Specification
//! - zarr-extensions' `numcodecs.*` codec definitions (draft, an open pull request):
//!   `digits` (an integer, required), `dtype` (required), `astype` (optional).
//! - The operational definition: `numcodecs.Quantize` (numcodecs 0.17.1),
//!   <https://numcodecs.readthedocs.io/en/stable/filter/quantize.html>.
//!
//! ### Codec `name` aliases
//! - Zarr v3: `numcodecs.quantize` (zarr-python's `zarr.codecs.numcodecs.Quantize`); the
//!   Zarr v2 `id` is `quantize`.
//!
//! ### Codec `configuration` example
//! ```
//! use serde_json::json;
//! use zquant::{ArrayCodec, Quantize};
//! // {"name": "numcodecs.quantize", "configuration": {"digits": 1, "dtype": "<f8"}}
//! let codec = Quantize::<f64, f64>::from_configuration(Some(&json!({"digits": 1, "dtype": "<f8"})))?;
//! assert_eq!(codec.encode_one(1.0 / 3.0), 0.3125); // a multiple of 1/16
//! assert_eq!(codec.to_metadata()["name"], "numcodecs.quantize");
//! # Ok::<(), zquant::MetadataError>(())
//! ```
//!
//! `digits` is a JSON integer from `-308` to `307` ([`QuantizeConfig::DIGITS`]: the range
//! where numcodecs can compute its scale; the draft schema's minimum is `-1`, but numcodecs
//! writes any of these, and reading a store needs none of them). `dtype` (required, the data
//! type the codec receives) and `astype` (default `dtype`) are Zarr v2 data type strings
//! (`"<f8"`; a Zarr v2 filter's byte order is dropped when the array is read: the values are
//! native) or plain Zarr v3 names, of `float16`, `float32` or `float64`, as numcodecs
//! requires. Unknown keys are errors.
//!
//! ### Algorithm (numcodecs 0.17.1, NumPy 2)
//! ```text
//! Encoding                                         Decoding
//! bits  = ceil(log2(10.0 ** -exp)), exp the        O = cast(I, dtype)
//!         floored log10(10.0 ** -digits)
//! scale = 2.0 ** bits
//! O = cast(around(scale * I) / scale, astype)
//! ```
//! - `scale` is a Python float, so (NEP 50) it is first rounded to `dtype` (`2^17` is `inf`
//!   in float16, `2^-25` is `0`), and `scale * I`, `around` (`rint`: half to even) and the
//!   division are each done, and rounded, in `dtype`. NaN keeps its payload; `-0.0` and
//!   small negatives give `-0.0`; an infinite scale gives NaN for zeros and `±inf` for
//!   others, a zero scale NaN for everything.
//! - The casts are NumPy's float casts: nearest-even, ±Inf on overflow.
//!
//! Nothing fails on values. The fill value is encoded like any element (numcodecs encodes
//! whatever chunk it is given; zarr-python keeps the array's fill value as it is).

mod config;
mod kernel;

pub use config::QuantizeConfig;

use serde_json::Value;

use super::astype;
use super::fixed_scale_offset::NumpyDType;
use super::numcodecs_filter as filter;
use crate::codec::fixed_scale_offset::NumpyNumber;
use crate::dtype::DTypeId;
use crate::error::MetadataError;
use crate::metadata::DataType;
use crate::number::storage::{Words, WordsMut};

/// The Zarr v3 name.
pub const NAME: &str = "numcodecs.quantize";

/// This codec in the registry.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[],
    v2: Some(super::registry::V2Filter {
        // numcodecs' `Quantize` filter.
        id: "quantize",
        v3_name: NAME,
        type_keys: &["dtype", "astype"],
    }),
    check: |_, config| QuantizeConfig::from_configuration(config).map(drop),
    bind: |_, dt, config| Ok(Box::new(QuantizeStage::new(dt, config)?)),
};

fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    filter::field(NAME, field, reason)
}

/// `numcodecs.quantize` between two float types, untyped: what [`Quantize`] and
/// [`QuantizeStage`] both run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantizeCore {
    decoded: DTypeId,
    encoded: DTypeId,
    /// numcodecs' scale, rounded to `decoded`.
    scale: f64,
}

impl QuantizeCore {
    /// From a parsed configuration (whose types are float types).
    pub fn new(config: &QuantizeConfig) -> Self {
        let decoded = config.dtype.id;
        let scale = config.scale();
        let scale = match decoded {
            DTypeId::Float16 => <half::f16 as NumpyNumber>::round_f64(scale),
            DTypeId::Float32 => <f32 as NumpyNumber>::round_f64(scale),
            _ => scale,
        };
        QuantizeCore {
            decoded,
            encoded: config.astype_id(),
            scale,
        }
    }

    /// Encode `src` (words of `dtype`) into `dst` (words of `astype`), the shorter length.
    pub fn encode(&self, src: Words<'_>, dst: WordsMut<'_>) {
        kernel::quantize_words(self.decoded, self.encoded, self.scale, src, dst);
    }

    /// Decode `src` (words of `astype`) into `dst` (words of `dtype`): the cast.
    pub fn decode(&self, src: Words<'_>, dst: WordsMut<'_>) {
        astype::kernel::cast_words(self.encoded, self.decoded, src, dst);
    }
}

/// `numcodecs.quantize` from the float type `S` (`dtype`) to the float type `D` (`astype`).
///
/// ```
/// use zquant::{ArrayCodecExt, Quantize};
///
/// let codec = Quantize::<f64, f32>::new(2)?; // multiples of 2^-7
/// let encoded = codec.encode(&ndarray::array![0.111, -0.0, f64::INFINITY])?;
/// assert_eq!(encoded, ndarray::array![0.109375f32, -0.0, f32::INFINITY]);
/// assert_eq!(codec.decode(&encoded)?, ndarray::array![0.109375, 0.0, f64::INFINITY]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Quantize<S: NumpyNumber, D: NumpyNumber> {
    config: QuantizeConfig,
    core: QuantizeCore,
    _t: std::marker::PhantomData<fn(S) -> D>,
}

impl<S: NumpyNumber, D: NumpyNumber> Quantize<S, D> {
    /// The codec for `digits`, its types written as Zarr v2 strings (`"<f8"`).
    ///
    /// # Errors
    /// `digits` outside [`QuantizeConfig::DIGITS`]; `S` or `D` is not a float type.
    pub fn new(digits: i32) -> Result<Self, MetadataError> {
        let (s, d) = filter::type_ids::<S, D>(NAME, "dtype")?;
        let mut config = serde_json::json!({"digits": digits, "dtype": NumpyDType::v2(s).text});
        if s != d {
            config["astype"] = Value::from(NumpyDType::v2(d).text);
        }
        Self::from_configuration(Some(&config))
    }

    /// Parse and bind the `configuration` member.
    ///
    /// # Errors
    /// See [`QuantizeConfig::from_configuration`] and [`Self::from_config`].
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        Self::from_config(&QuantizeConfig::from_configuration(config)?)
    }

    /// Bind a parsed configuration to the types `S -> D`.
    ///
    /// # Errors
    /// `dtype` is not `S` or `astype` not `D`.
    pub fn from_config(config: &QuantizeConfig) -> Result<Self, MetadataError> {
        filter::check_typed(
            NAME,
            [
                ("dtype", config.dtype.id, S::NAME),
                ("astype", config.astype_id(), D::NAME),
            ],
        )?;
        Ok(Quantize {
            config: config.clone(),
            core: QuantizeCore::new(config),
            _t: std::marker::PhantomData,
        })
    }
}

filter::forward_to_core!(Quantize, QuantizeStage, QuantizeConfig);

/// `numcodecs.quantize` bound to run-time data types.
#[derive(Debug)]
pub struct QuantizeStage {
    config: QuantizeConfig,
    core: QuantizeCore,
    input: DataType,
    output: DataType,
}

impl QuantizeStage {
    /// Bind a `configuration` to the array data type `dt`.
    ///
    /// # Errors
    /// Invalid configuration; a `dtype` other than `dt`.
    pub fn new(dt: &DataType, config: Option<&Value>) -> Result<Self, MetadataError> {
        let cfg = QuantizeConfig::from_configuration(config)?;
        filter::check_array_type(NAME, "dtype", &cfg.dtype.text, cfg.dtype.id, dt)?;
        Ok(QuantizeStage {
            core: QuantizeCore::new(&cfg),
            output: DataType::new(cfg.astype_id()),
            config: cfg,
            input: dt.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bits` is the smallest `b` with `2^b >= 10^digits`, exactly, where integers hold it.
    #[test]
    fn scale_is_the_next_power_of_two() {
        for digits in -38..=38i32 {
            let cfg = QuantizeConfig::from_configuration(Some(
                &serde_json::json!({"digits": digits, "dtype": "<f8"}),
            ))
            .unwrap();
            let bits = cfg.scale().log2() as i32;
            let p = 10u128.pow(digits.unsigned_abs());
            let two = |b: i32| 1u128 << b.unsigned_abs();
            if digits >= 0 {
                assert!(
                    two(bits) >= p && (bits == 0 || two(bits - 1) < p),
                    "{digits}"
                );
            } else {
                // 2^bits >= 10^-k  <=>  2^-bits <= 10^k.
                assert!(two(-bits) <= p && two(-bits + 1) > p, "{digits}");
            }
        }
    }

    #[test]
    fn errors_name_the_key() {
        let cfg = |v| {
            QuantizeConfig::from_configuration(Some(&v))
                .unwrap_err()
                .to_string()
        };
        assert!(cfg(serde_json::json!({"dtype": "<f8"})).contains("`digits`"));
        assert!(cfg(serde_json::json!({"digits": 2.0, "dtype": "<f8"})).contains("`digits`"));
        assert!(cfg(serde_json::json!({"digits": 308, "dtype": "<f8"})).contains("`digits`"));
        assert!(cfg(serde_json::json!({"digits": 1, "dtype": "<i4"})).contains("`dtype`"));
        let e = cfg(serde_json::json!({"digits": 1, "dtype": "<f4", "astype": "|u1"}));
        assert!(e.contains("`astype`"), "{e}");
    }
}

#[cfg(test)]
mod kernel_tests {
    use super::*;
    use crate::convert::{words_of, words_of_mut};

    /// numcodecs' arithmetic as written, in `f64` with the division, each step rounded to
    /// `S`: the reference for the kernels, which multiply by the reciprocal and compute
    /// `float32` in `f32`.
    fn reference<S: NumpyNumber, D: NumpyNumber>(scale: f64, x: S) -> D {
        let r = S::round_f64(x.to_f64() * scale).round_ties_even();
        astype::kernel::cast_one::<S, D>(S::from_f64(r / scale))
    }

    fn inputs<S: NumpyNumber>() -> Vec<S> {
        let mut v: Vec<S> = [
            0.0, -0.0, 1.0, -1.5, 0.1, 1e-30, -1e-40, 3e38, 1e300, 65504.0, 6e-8, 2.5, -2.5,
        ]
        .iter()
        .map(|&x| S::from_f64(x))
        .collect();
        v.extend([f64::NAN, f64::INFINITY, -f64::INFINITY].map(S::from_f64));
        // A sweep of magnitudes, ties included.
        let mut x = 1.0e-45f64;
        while x < 1e300 {
            v.extend([S::from_f64(x), S::from_f64(-x * 1.5)]);
            x *= 3.7;
        }
        v
    }

    fn check<S: NumpyNumber, D: NumpyNumber>() {
        let xs = inputs::<S>();
        for digits in -320..=320 {
            let cfg = serde_json::json!({"digits": digits, "dtype": "<f8"});
            let Ok(mut cfg) = QuantizeConfig::from_configuration(Some(&cfg)) else {
                continue;
            };
            let s: DTypeId = S::NAME.parse().unwrap();
            let d: DTypeId = D::NAME.parse().unwrap();
            cfg.dtype = NumpyDType::v2(s);
            cfg.astype = Some(NumpyDType::v2(d));
            let core = QuantizeCore::new(&cfg);
            let encode = |level| {
                let mut out = vec![D::default(); xs.len()];
                crate::isa::with_max_isa(level, || {
                    core.encode(words_of(&xs), words_of_mut(&mut out))
                });
                out.iter().map(|y| y.to_bits()).collect::<Vec<_>>()
            };
            let portable = encode(crate::isa::Isa::Portable);
            for level in crate::isa::Isa::available() {
                let at = encode(level);
                assert!(at == portable, "{} -> {} at {level:?}", S::NAME, D::NAME);
            }
            let got: Vec<D> = portable.iter().map(|&b| D::from_bits(b)).collect();
            for (x, y) in xs.iter().zip(&got) {
                let want: D = reference::<S, D>(core.scale, *x);
                assert_eq!(
                    y.to_bits(),
                    want.to_bits(),
                    "{} -> {}, digits {digits}, x = {x:?}",
                    S::NAME,
                    D::NAME
                );
            }
        }
    }

    /// From 16 MiB of output on, `float32 -> float32` is written by streamed stores
    /// (`arch::quantize_f32_streamed`): at every level, from unaligned starts (every head
    /// and tail length of plain stores around the vectors), with NaN payloads (signalling
    /// and quiet, both signs), `-0.0`, subnormals, infinities and ties, at scales from
    /// `2^-10` to `2^127` and an infinite one, the words of the reference.
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn streamed_float32_encode_matches_the_reference() {
        // At least `STREAM_MIN` bytes of output at every length below.
        let n = crate::arch::STREAM_MIN / 4 + 100;
        let mut xs = inputs::<f32>();
        xs.extend(
            [
                0x7f80_0001u32,
                0x7fc1_2345,
                0xffc0_0001,
                0xff80_0abc,
                0x8000_0000,
                0x0000_0001,
                0x807f_ffff,
            ]
            .map(f32::from_bits),
        );
        // Ties of the scaled value (odd multiples of half a step) and their neighbours.
        xs.extend((0..64).map(|k| (2 * k + 1) as f32 / 2048.0 - 0.015625));
        xs.extend((0..64).map(|k| f32::from_bits(((2 * k + 1) as f32 / 16.0).to_bits() + 1)));
        let src: Vec<u32> = (0..n + 8)
            .map(|i| xs[(i * 7 + i / 3) % xs.len()].to_bits())
            .collect();
        let mut out = vec![0u32; n + 8];
        for digits in [-3, 0, 3, 12, 38, 39] {
            let cfg = serde_json::json!({"digits": digits, "dtype": "<f4"});
            let core = QuantizeCore::new(&QuantizeConfig::from_configuration(Some(&cfg)).unwrap());
            let want: Vec<u32> = src
                .iter()
                .map(|&x| reference::<f32, f32>(core.scale, f32::from_bits(x)).to_bits())
                .collect();
            for level in crate::isa::Isa::available() {
                // Every offset of the output from a 32-byte boundary, and lengths that
                // leave 0 to 3 vectors after the unrolled steps and 0 to 7 words after them.
                for to in 0..8 {
                    let from = 3 * to % 5;
                    let len = n - 13 * to - from;
                    let o = &mut out[to..to + len];
                    // No quantized value: a word left unwritten shows.
                    o.fill(0x7fc0_dead);
                    crate::isa::with_max_isa(level, || {
                        core.encode(Words::U32(&src[from..from + len]), WordsMut::U32(&mut *o))
                    });
                    let first = (0..len).find(|&i| o[i] != want[from + i]);
                    assert_eq!(first, None, "digits {digits} {level:?} {from}/{to}");
                }
            }
        }
    }

    /// Every digits numcodecs accepts, so every scale each float type rounds it to
    /// (subnormal, zero and infinite ones included), against the reference, the same
    /// words at every instruction-set level.
    #[test]
    fn kernels_match_the_reference_at_every_scale() {
        check::<f32, f32>();
        check::<f32, f64>();
        check::<f32, half::f16>();
        check::<f64, f32>();
        check::<f64, f64>();
        check::<f64, half::f16>();
        check::<half::f16, f32>();
        check::<half::f16, f64>();
        check::<half::f16, half::f16>();
    }
}
