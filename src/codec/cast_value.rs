//! `cast_value`: convert each element's numerical value to another data type.
//!
//! ### Specification
//! - zarr-extensions `codecs/cast_value/README.md`:
//!   <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value>
//!
//! ### Codec `name` aliases
//! - None: `cast_value` only (no Zarr v2 filter).
//!
//! ### Codec `configuration` example
//! ```
//! use serde_json::json;
//! use zquant::{CastValue, CastValueConfig, OutOfRange, Rounding};
//! let config = json!({"data_type": "uint8", "rounding": "nearest-even",
//!     "out_of_range": "clamp", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}});
//! let parsed = CastValueConfig::from_configuration(Some(&config))?;
//! assert_eq!((parsed.rounding, parsed.out_of_range), (Rounding::NearestEven, OutOfRange::Clamp));
//! let codec = CastValue::<f32, u8>::from_config(&parsed)?;
//! assert_eq!(codec.options().out_of_range, OutOfRange::Clamp);
//! # Ok::<(), zquant::MetadataError>(())
//! ```
//!
//! Per element, in the spec's order: the `scalar_map` (applied once, never transitively; the
//! first occurrence of a key wins; a `"NaN"` key matches every NaN and `0` matches `-0.0`),
//! then exact representation, then rounding, then `out_of_range`. Rounding comes before the
//! range check, so `245.0 -> float8_e4m3` is `240`. Without `out_of_range` a value outside
//! the target's finite range fails, even into a type with infinities. NaN and ±Inf into a type
//! without them fail even with `clamp` (catalogue `inf-clamp`). `wrap` is only valid for
//! integer targets. The fill value is cast by the same rules and must survive the round trip
//! numerically (catalogue `fill-roundtrip`), else the metadata is invalid.

mod config;
mod scalar_map;
mod stage;

pub use config::CastValueConfig;
pub use scalar_map::{MapEntries, ScalarMap};
pub use stage::CastValueStage;

use serde_json::{Map, Value};

use super::{ArrayCodec, Direction, Rule, SliceFailure, element_error, json_text};
use crate::convert::map::canonical;
use crate::convert::{Caster, ElementFailure, KeyMap, exact_of, words_of, words_of_mut};
use crate::dtype::Real;
use crate::error::{ElementError, MetadataError};
use crate::number::layout::Format;
use crate::number::storage::{Word, Words, WordsMut};
use crate::number::{CastOptions, OutOfRange, Status};
use config::metadata;
use scalar_map::map_warnings;

/// The Zarr name.
pub const NAME: &str = "cast_value";

/// This codec in the registry.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[],
    v2: None,
    // The target is in the configuration: a target that is not a real type, or `wrap` into
    // a float, is refused before the source type is known.
    check: |_, config| stage::check_target(&CastValueConfig::from_configuration(config)?),
    bind: |_, dt, config| {
        let cfg = CastValueConfig::from_configuration(config)?;
        Ok(Box::new(CastValueStage::new(dt, &cfg)?))
    },
};

fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field,
        reason: reason.into(),
    }
}

fn status_rule(st: Status) -> Rule {
    match st {
        Status::NanUnrepresentable => Rule::NanUnrepresentable,
        Status::InfUnrepresentable => Rule::InfUnrepresentable,
        _ => Rule::OutOfRange,
    }
}

fn slice_failure(f: ElementFailure) -> SliceFailure {
    SliceFailure {
        index: f.index,
        rule: status_rule(f.status),
    }
}

/// `cast_value` between two formats, untyped: one [`Caster`] per direction, kernels chosen
/// at construction. The typed [`CastValue`] and the run-time [`CastValueStage`] both run
/// one.
#[derive(Clone, Debug, PartialEq)]
pub struct CastCore {
    encode: Caster,
    decode: Caster,
}

/// `wrap` is for integral targets only.
fn check_wrap(rule: OutOfRange, dst: Format, target_name: &str) -> Result<(), MetadataError> {
    if rule == OutOfRange::Wrap && !matches!(dst, Format::Int(_)) {
        return Err(field(
            "out_of_range",
            format!("wrap requires an integral target, not {target_name}"),
        ));
    }
    Ok(())
}

impl CastCore {
    /// `src` (in words of `src_word` bits) to `dst` (in words of `dst_word` bits) under
    /// `opts`, with the scalar map's two directions.
    ///
    /// # Errors
    /// `wrap` into a float target.
    pub fn new(
        (src, src_word): (Format, u32),
        (dst, dst_word): (Format, u32),
        opts: CastOptions,
        encode_map: KeyMap,
        decode_map: KeyMap,
        target_name: &str,
    ) -> Result<Self, MetadataError> {
        check_wrap(opts.out_of_range, dst, target_name)?;
        Ok(CastCore {
            encode: Caster::new(src, src_word, dst, dst_word, opts, encode_map),
            decode: Caster::new(dst, dst_word, src, src_word, opts, decode_map),
        })
    }

    /// Encode `src` into `dst`.
    ///
    /// # Errors
    /// The first element that cannot be encoded.
    #[inline]
    pub fn encode(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), SliceFailure> {
        self.encode.run(src, dst).map_err(slice_failure)
    }

    /// The caster of `dir`, for a chain's fused loop.
    pub(crate) fn fusion(&self, dir: Direction) -> super::Fusion<'_> {
        super::Fusion::Cast(match dir {
            Direction::Encode => &self.encode,
            Direction::Decode => &self.decode,
        })
    }

    /// Decode `src` into `dst`.
    ///
    /// # Errors
    /// The first element that cannot be decoded.
    #[inline]
    pub fn decode(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), SliceFailure> {
        self.decode.run(src, dst).map_err(slice_failure)
    }

    /// Encode the fill value `x` and check that it survives the round trip numerically
    /// (catalogue `fill-roundtrip`); `show_in`/`show_out` print a code of the decoded and
    /// encoded type for the error.
    ///
    /// # Errors
    /// [`MetadataError::FillValueTransform`].
    pub fn encode_fill(
        &self,
        x: u64,
        show_in: &dyn Fn(u64) -> Value,
        show_out: &dyn Fn(u64) -> Value,
    ) -> Result<u64, MetadataError> {
        let transform = |reason: String| MetadataError::FillValueTransform {
            codec: NAME,
            reason,
        };
        let y = self.encode.run_one(x).map_err(|st| {
            transform(format!(
                "encode: {} (value {})",
                status_rule(st),
                json_text(show_in(x))
            ))
        })?;
        let back = self.decode.run_one(y).map_err(|st| {
            transform(format!(
                "does not survive the round trip: decode: {} (value {})",
                status_rule(st),
                json_text(show_out(y))
            ))
        })?;
        let (a, b) = (
            exact_of(self.encode.source(), x),
            exact_of(self.encode.source(), back),
        );
        if canonical(a) != canonical(b) {
            return Err(transform(format!(
                "{} does not survive the round trip (encodes to {}, decodes to {})",
                show_in(x),
                show_out(y),
                show_in(back)
            )));
        }
        Ok(y)
    }
}

/// `cast_value` from `S` to `D`: each value rounded once, exactly, under the configured
/// rounding mode, with out-of-range values an error, clamped or wrapped.
///
/// ```
/// use zquant::{ArrayCodec, ArrayCodecExt, CastOptions, CastValue, OutOfRange, Rounding, ScalarMap};
/// use half::f16;
///
/// let codec: CastValue<f32, f16> = CastValue::new(
///     CastOptions::new(Rounding::TowardsZero, OutOfRange::Clamp),
///     ScalarMap::default(),
/// )?;
/// // float16 has steps of 2^-10 above 1: truncation keeps 1.0.
/// let out = codec.encode(&ndarray::array![1.0007f32, -2.5])?;
/// assert_eq!(out, ndarray::array![f16::from_f32(1.0), f16::from_f32(-2.5)]);
/// assert_eq!(codec.to_metadata()["configuration"]["data_type"], "float16");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CastValue<S: Real, D: Real> {
    opts: CastOptions,
    rounding_explicit: bool,
    map: ScalarMap<S, D>,
    core: CastCore,
    warnings: Vec<String>,
}

impl<S: Real, D: Real> CastValue<S, D> {
    /// A codec with the given options and scalar map.
    ///
    /// # Errors
    /// `wrap` into a float target.
    pub fn new(opts: CastOptions, map: ScalarMap<S, D>) -> Result<Self, MetadataError> {
        let core = CastCore::new(
            (S::FORMAT, <S::Word as Word>::BITS),
            (D::FORMAT, <D::Word as Word>::BITS),
            opts,
            map.encode.raw().clone(),
            map.decode.raw().clone(),
            D::NAME,
        )?;
        let warnings = map_warnings(
            (S::FORMAT, D::FORMAT),
            opts.out_of_range,
            map.decode.raw(),
            D::NAME,
        );
        Ok(CastValue {
            opts,
            rounding_explicit: true,
            map,
            core,
            warnings,
        })
    }

    /// Parse and bind the codec object's `configuration` member (see
    /// [`CastValueConfig::from_configuration`] and [`Self::from_config`]).
    ///
    /// ```
    /// use zquant::CastValue;
    /// let codec = CastValue::<f32, u8>::from_configuration(Some(&serde_json::json!(
    ///     {"data_type": "uint8", "rounding": "towards-zero", "out_of_range": "clamp"}
    /// )))?;
    /// assert_eq!(codec.options().rounding, zquant::Rounding::TowardsZero);
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// See [`CastValueConfig::from_configuration`] and [`Self::from_config`].
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        Self::from_config(&CastValueConfig::from_configuration(config)?)
    }

    /// Bind a parsed configuration to the types `S -> D`.
    ///
    /// # Errors
    /// The configuration's `data_type` is not `D`, an invalid `scalar_map` entry, `wrap`
    /// into a float target.
    pub fn from_config(config: &CastValueConfig) -> Result<Self, MetadataError> {
        if config.data_type.id.name() != D::NAME {
            return Err(field(
                "data_type",
                format!(
                    "configured {} but the codec is typed for {}",
                    config.data_type.id.name(),
                    D::NAME
                ),
            ));
        }
        let map = match &config.scalar_map {
            None => ScalarMap::default(),
            Some(sm) => ScalarMap {
                encode: MapEntries::from_json(sm.get("encode"))?,
                decode: MapEntries::from_json(sm.get("decode"))?,
                present: true,
            },
        };
        let mut c = Self::new(CastOptions::new(config.rounding, config.out_of_range), map)?;
        c.rounding_explicit = config.rounding_explicit;
        Ok(c)
    }

    /// The rounding and out-of-range rules.
    pub fn options(&self) -> CastOptions {
        self.opts
    }

    /// The scalar map.
    pub fn scalar_map(&self) -> &ScalarMap<S, D> {
        &self.map
    }

    /// What in this configuration is valid but likely unintended: a `clamp` (or `wrap`) that
    /// can write a code the `scalar_map` decodes as something else, so that out-of-range
    /// values read back as, say, NaN. Empty for most codecs.
    ///
    /// ```
    /// use zquant::{CastOptions, CastValue, OutOfRange, Rounding, ScalarMap};
    ///
    /// let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
    /// let map = ScalarMap::nan_as(i16::MIN);
    /// let codec: CastValue<f32, i16> = CastValue::new(opts, map)?;
    /// assert!(codec.warnings()[0].contains("decodes -32768 as NaN"));
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

impl<S: Real, D: Real> ArrayCodec for CastValue<S, D> {
    type In = S;
    type Out = D;

    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_slice(&self, src: &[S], dst: &mut [D]) -> Result<(), ElementError> {
        super::same_length(NAME, Direction::Encode, src.len(), dst.len())?;
        self.core
            .encode(words_of(src), words_of_mut(dst))
            .map_err(|f| element_error::<S, D>(NAME, Direction::Encode, src, f))
    }

    fn decode_slice(&self, src: &[D], dst: &mut [S]) -> Result<(), ElementError> {
        super::same_length(NAME, Direction::Decode, src.len(), dst.len())?;
        self.core
            .decode(words_of(src), words_of_mut(dst))
            .map_err(|f| element_error::<D, S>(NAME, Direction::Decode, src, f))
    }

    fn fusion(&self, dir: Direction) -> super::Fusion<'_> {
        self.core.fusion(dir)
    }

    fn encode_fill_value(&self, fill: S) -> Result<D, MetadataError> {
        let show_in = |b: u64| S::from_bits(b).fill_value_to_json();
        let show_out = |b: u64| D::from_bits(b).fill_value_to_json();
        self.core
            .encode_fill(fill.to_bits(), &show_in, &show_out)
            .map(D::from_bits)
    }

    fn to_metadata(&self) -> Value {
        let sm = self.map.present.then(|| {
            let mut sm = Map::new();
            if !self.map.encode.is_empty() {
                sm.insert("encode".into(), self.map.encode.to_json());
            }
            if !self.map.decode.is_empty() {
                sm.insert("decode".into(), self.map.decode.to_json());
            }
            Value::Object(sm)
        });
        // Metadata names `D`: make a declared `D` readable by run-time chains too. A name
        // clash is reported where it matters, when the metadata is read.
        let _ = crate::dtype::register_dtype::<D>();
        metadata(D::NAME, self.opts, self.rounding_explicit, sm)
    }
}
