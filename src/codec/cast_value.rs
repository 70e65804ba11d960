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

use serde_json::{Map, Value};

use super::{
    ArrayCodec, Direction, DynStage, Rule, SliceFailure, check_words, element_error,
    element_error_words, json_text,
};
use crate::convert::map::canonical;
use crate::convert::{
    CastOptions, Caster, ElementFailure, Exact, KeyMap, OutOfRange, Rounding, Status, exact_of,
    words_of, words_of_mut,
};
use crate::dtype::id::Scalar;
use crate::dtype::{DTypeId, Format, Real, Word, Words, WordsMut};
use crate::error::{CodecError, ElementError, MetadataError, choices, unknown_key};
use crate::metadata::DataType;

/// The Zarr name.
pub const NAME: &str = "cast_value";

/// This codec in the registry.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[],
    v2: None,
    check: |config| CastValueConfig::from_configuration(config).map(drop),
    bind: |_, dt, config| {
        let cfg = CastValueConfig::from_configuration(config)?;
        Ok(Box::new(CastValueStage::new(dt, &cfg)?))
    },
};

/// The untyped `configuration` of a `cast_value` codec, as parsed from JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct CastValueConfig {
    /// Target data type.
    pub data_type: DataType,
    /// Rounding mode (`nearest-even` when absent).
    pub rounding: Rounding,
    /// Whether `rounding` was written (so that metadata round-trips as written).
    pub rounding_explicit: bool,
    /// Out-of-range rule ([`OutOfRange::Error`] when absent).
    pub out_of_range: OutOfRange,
    /// The raw `scalar_map` object, typed when the codec is bound to its data types.
    pub scalar_map: Option<Value>,
}

fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field,
        reason: reason.into(),
    }
}

crate::metadata::serde_as_json!(
    CastValueConfig,
    CastValueConfig::to_configuration,
    |v: &Value| CastValueConfig::from_configuration(Some(v))
);

impl CastValueConfig {
    /// The `configuration` object: what [`Self::from_configuration`] reads back to `self`.
    ///
    /// ```
    /// use zquant::CastValueConfig;
    /// let json = serde_json::json!({"data_type": "uint8", "out_of_range": "clamp"});
    /// let config = CastValueConfig::from_configuration(Some(&json))?;
    /// assert_eq!(config.to_configuration(), json);
    /// // serde gives the same shape.
    /// assert_eq!(serde_json::to_value(&config).unwrap(), json);
    /// let back: CastValueConfig = serde_json::from_value(json).unwrap();
    /// assert_eq!(back, config);
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    pub fn to_configuration(&self) -> Value {
        let opts = CastOptions::new(self.rounding, self.out_of_range);
        let obj = metadata(
            self.data_type.id.name(),
            opts,
            self.rounding_explicit,
            self.scalar_map.clone(),
        );
        let mut config = obj.get("configuration").cloned().unwrap_or_default();
        // A target with a configuration (a time type) is written as its object.
        if let Value::Object(m) = &mut config {
            m.insert("data_type".into(), self.data_type.to_json());
        }
        config
    }

    /// The former name of [`CastValueConfig::from_configuration`] (zquant 0.1.0).
    ///
    /// # Errors
    /// As [`CastValueConfig::from_configuration`].
    #[deprecated(since = "0.2.0", note = "use `CastValueConfig::from_configuration`")]
    pub fn from_json(config: Option<&Value>) -> Result<Self, MetadataError> {
        Self::from_configuration(config)
    }

    /// Parse a `configuration` object.
    ///
    /// # Errors
    /// A missing or non-object configuration, unknown keys, an unknown data type, an unknown
    /// rounding or out_of_range value (`null` included).
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let Some(Value::Object(map)) = config else {
            return Err(field(
                "configuration",
                "cast_value requires a configuration object",
            ));
        };
        const KEYS: &[&str] = &["data_type", "rounding", "out_of_range", "scalar_map"];
        if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(field("configuration", unknown_key(k, KEYS)));
        }
        let data_type = match map.get("data_type") {
            None => return Err(field("data_type", "missing")),
            Some(v) => DataType::from_json(v).map_err(|e| field("data_type", e.to_string()))?,
        };
        let rounding = match map.get("rounding") {
            None => Rounding::NearestEven,
            Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
                let word = v.as_str().unwrap_or_default();
                let names = Rounding::ALL.map(Rounding::name);
                field(
                    "rounding",
                    format!("unknown rounding mode {v}: {}", choices(word, &names)),
                )
            })?,
        };
        let out_of_range = match map.get("out_of_range") {
            None => OutOfRange::Error,
            Some(Value::String(s)) if s == "clamp" => OutOfRange::Clamp,
            Some(Value::String(s)) if s == "wrap" => OutOfRange::Wrap,
            Some(v) => {
                let word = v.as_str().unwrap_or_default();
                return Err(field(
                    "out_of_range",
                    format!("unknown rule {v}: {}", choices(word, &["clamp", "wrap"])),
                ));
            }
        };
        let scalar_map = map.get("scalar_map").cloned();
        if let Some(sm) = &scalar_map {
            let Value::Object(m) = sm else {
                return Err(field(
                    "scalar_map",
                    "must be an object with `encode`/`decode` lists",
                ));
            };
            for (k, v) in m {
                if k != "encode" && k != "decode" {
                    return Err(field("scalar_map", unknown_key(k, &["encode", "decode"])));
                }
                let Value::Array(entries) = v else {
                    return Err(field(
                        "scalar_map",
                        format!("`{k}` must be an array of pairs"),
                    ));
                };
                if entries
                    .iter()
                    .any(|e| !matches!(e, Value::Array(p) if p.len() == 2))
                {
                    return Err(field("scalar_map", "every entry must be a length-2 array"));
                }
            }
        }
        Ok(CastValueConfig {
            data_type,
            rounding,
            rounding_explicit: map.contains_key("rounding"),
            out_of_range,
            scalar_map,
        })
    }
}

/// One direction of a scalar map: keys matched by value, first occurrence wins.
///
/// ```
/// use zquant::MapEntries;
/// let m: MapEntries<f32, u8> = MapEntries::new([(f32::NAN, 0), (f32::NAN, 1), (-0.0, 2)]);
/// assert_eq!(m.entries().len(), 2); // the second NaN key is ignored
/// assert_eq!(m.lookup(zquant::Real::to_exact(0.0f32)), Some(2)); // 0.0 == -0.0 by value
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MapEntries<K: Real, V: Real> {
    entries: Vec<(K, V)>,
    raw: KeyMap,
}

impl<K: Real, V: Real> Default for MapEntries<K, V> {
    fn default() -> Self {
        MapEntries {
            entries: Vec::new(),
            raw: KeyMap::empty(K::FORMAT),
        }
    }
}

impl<K: Real, V: Real> MapEntries<K, V> {
    /// Entries in order; later duplicates of a key are ignored ("readers MUST use the first
    /// occurrence").
    pub fn new(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let all: Vec<(K, V)> = pairs.into_iter().collect();
        let raw = KeyMap::new(
            K::FORMAT,
            all.iter().map(|(k, v)| (k.to_bits(), v.to_bits())),
        );
        // Keep the typed entries the raw map kept (the first occurrence of each key).
        let mut entries = Vec::with_capacity(raw.entries().len());
        let mut kept = raw.entries().iter().peekable();
        for (k, v) in all {
            if kept.peek() == Some(&&(k.to_bits(), v.to_bits())) {
                entries.push((k, v));
                kept.next();
            }
        }
        MapEntries { entries, raw }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[(K, V)] {
        &self.entries
    }

    /// The mapped value of `x`, if its value is a key.
    #[inline]
    pub fn lookup(&self, x: Exact) -> Option<V> {
        self.raw.lookup(x).map(V::from_bits)
    }

    /// The untyped map.
    pub(crate) fn raw(&self) -> &KeyMap {
        &self.raw
    }

    fn to_json(&self) -> Value {
        Value::Array(
            self.entries
                .iter()
                .map(|(k, v)| Value::Array(vec![k.fill_value_to_json(), v.fill_value_to_json()]))
                .collect(),
        )
    }

    fn from_json(list: Option<&Value>) -> Result<Self, MetadataError> {
        let pairs = map_pairs(
            list,
            &|v| K::fill_value_from_json(v).map(|k| k.to_bits()),
            &|v| V::fill_value_from_json(v).map(|x| x.to_bits()),
        )?;
        Ok(MapEntries::new(
            pairs
                .into_iter()
                .map(|(k, v)| (K::from_bits(k), V::from_bits(v))),
        ))
    }
}

type ParseScalar<'a> = &'a dyn Fn(&Value) -> Result<u64, crate::dtype::FillValueError>;

/// The `(key, value)` codes of one direction's list of pairs.
fn map_pairs(
    list: Option<&Value>,
    key: ParseScalar<'_>,
    value: ParseScalar<'_>,
) -> Result<Vec<(u64, u64)>, MetadataError> {
    let Some(Value::Array(entries)) = list else {
        return Ok(Vec::new());
    };
    let scalar = |source| MetadataError::Scalar {
        codec: NAME,
        field: "scalar_map",
        source,
    };
    let mut pairs = Vec::with_capacity(entries.len());
    for e in entries {
        let Value::Array(p) = e else {
            return Err(field("scalar_map", "every entry must be a length-2 array"));
        };
        let [k, v] = p.as_slice() else {
            return Err(field("scalar_map", "every entry must be a length-2 array"));
        };
        pairs.push((key(k).map_err(scalar)?, value(v).map_err(scalar)?));
    }
    Ok(pairs)
}

/// Both directions of a `scalar_map`: values mapped before any rounding or range check.
///
/// ```
/// use zquant::{ArrayCodecExt, CastValue, ScalarMap};
/// let map = ScalarMap::nan_as(-1i8).encoding([(f64::INFINITY, 127), (f64::NEG_INFINITY, -127)]);
/// let codec = CastValue::<f64, i8>::new(Default::default(), map)?;
/// let out = codec.encode(&ndarray::array![f64::NAN, f64::INFINITY, 3.0])?;
/// assert_eq!(out, ndarray::array![-1, 127, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarMap<S: Real, D: Real> {
    /// Applied when encoding (`S -> D`).
    pub encode: MapEntries<S, D>,
    /// Applied when decoding (`D -> S`).
    pub decode: MapEntries<D, S>,
    /// Whether the `scalar_map` key was present (so that metadata round-trips as written).
    pub present: bool,
}

impl<S: Real, D: Real> Default for ScalarMap<S, D> {
    fn default() -> Self {
        ScalarMap {
            encode: MapEntries::default(),
            decode: MapEntries::default(),
            present: false,
        }
    }
}

impl<S: Real, D: Real> ScalarMap<S, D> {
    /// A map from the `encode` and `decode` pairs, in order (the first occurrence of a key
    /// wins, as the spec says readers must do).
    ///
    /// ```
    /// use zquant::ScalarMap;
    /// let map: ScalarMap<f32, u8> = ScalarMap::new([(f32::NAN, 0)], [(0, f32::NAN)]);
    /// assert_eq!(map.encode.entries().len(), 1);
    /// ```
    pub fn new(
        encode: impl IntoIterator<Item = (S, D)>,
        decode: impl IntoIterator<Item = (D, S)>,
    ) -> Self {
        ScalarMap {
            encode: MapEntries::new(encode),
            decode: MapEntries::new(decode),
            present: true,
        }
    }

    /// Encode NaN as `code` and decode `code` as NaN: the usual sentinel for missing data in
    /// an integer target. `S` must have a NaN (every IEEE float does): for a source type
    /// without one (an integer, or a float format without NaN such as `float4_e2m1fn`) the
    /// call does not build ("`ScalarMap::nan_as` needs a source type that has NaN"), since
    /// the map would have no key to hold.
    ///
    /// ```
    /// use zquant::{ArrayCodecExt, CastOptions, CastValue, ScalarMap};
    /// let codec: CastValue<f64, u8> = CastValue::new(CastOptions::default(), ScalarMap::nan_as(255))?;
    /// let encoded = codec.encode(&ndarray::array![1.0, f64::NAN])?;
    /// assert_eq!(encoded, ndarray::array![1, 255]);
    /// assert!(codec.decode(&encoded)?[1].is_nan());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn nan_as(code: D) -> Self {
        const {
            assert!(
                has_nan(S::FORMAT),
                "`ScalarMap::nan_as` needs a source type that has NaN"
            )
        };
        let nan = S::from_exact(crate::number::exact::Exact::NAN, CastOptions::default()).0;
        ScalarMap::new([(nan, code)], [(code, nan)])
    }

    /// The same map with `encode` pairs added after the existing ones (earlier keys win).
    pub fn encoding(mut self, pairs: impl IntoIterator<Item = (S, D)>) -> Self {
        let all: Vec<(S, D)> = self.encode.entries().iter().copied().chain(pairs).collect();
        self.encode = MapEntries::new(all);
        self.present = true;
        self
    }

    /// The same map with `decode` pairs added after the existing ones (earlier keys win).
    pub fn decoding(mut self, pairs: impl IntoIterator<Item = (D, S)>) -> Self {
        let all: Vec<(D, S)> = self.decode.entries().iter().copied().chain(pairs).collect();
        self.decode = MapEntries::new(all);
        self.present = true;
        self
    }
}

/// Whether a format has a NaN code.
const fn has_nan(f: Format) -> bool {
    match f {
        Format::Float(l) => l.has_nan(),
        Format::Int(_) => false,
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

/// A value of `format` whose code is `bits`, as text: `-32768`, `NaN`, `-Infinity`, `1.5`.
fn code_text(format: Format, bits: u64) -> String {
    match format {
        Format::Int(l) => crate::number::int::int_value(&l, bits).to_string(),
        Format::Float(l) => {
            let size = l.bits().div_ceil(8) as usize;
            json_text(crate::dtype::fill_value::float_to_json(&l, size, bits))
        }
    }
}

/// The codes the encoder can write that the decoder maps elsewhere: with `clamp`, a
/// `scalar_map` `decode` key at an end of the target's range (every value beyond that end
/// is written as that code, and reads back as the mapped value, e.g. NaN); with `wrap`,
/// any `decode` key (wrapping can land on any code). Valid metadata, but rarely what its
/// author meant: reported by the codecs' `warnings()`.
pub(crate) fn map_warnings(
    (src, dst): (Format, Format),
    out_of_range: OutOfRange,
    decode: &KeyMap,
    target: &str,
) -> Vec<String> {
    let ends: Vec<(u64, &str)> = match (out_of_range, dst) {
        (OutOfRange::Clamp, Format::Int(l)) => vec![
            ((l.min() as u64) & l.mask(), "below"),
            ((l.max() as u64) & l.mask(), "above"),
        ],
        (OutOfRange::Clamp, Format::Float(l)) if l.inf_bits().is_none() => vec![
            (l.max_finite_bits() | l.sign_bit(), "below"),
            (l.max_finite_bits(), "above"),
        ],
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for &(key, to) in decode.entries() {
        let (k, v) = (code_text(dst, key), code_text(src, to));
        if out_of_range == OutOfRange::Wrap {
            out.push(format!(
                "cast_value: \"out_of_range\": \"wrap\" can write any {target} code, \
                 including {k}, which \"scalar_map\" decodes as {v}: values that wrap onto {k} \
                 will read back as {v}"
            ));
        } else if let Some(&(_, side)) = ends.iter().find(|&&(end, _)| end == key) {
            out.push(format!(
                "cast_value: \"out_of_range\": \"clamp\" writes {k} for every value {side} \
                 the range of {target}, and \"scalar_map\" decodes {k} as {v}: such values will \
                 read back as {v}; map {v} to a code clamping cannot produce (for an integer \
                 target, narrow the data's range first), or drop \"clamp\" to have them \
                 rejected"
            ));
        }
    }
    out
}

/// `cast_value` between two formats, untyped: one [`Caster`] per direction, kernels chosen
/// at construction. The typed [`CastValue`] and the run-time [`CastValueStage`] both run
/// one.
#[derive(Clone, Debug, PartialEq)]
pub struct CastCore {
    encode: Caster,
    decode: Caster,
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
        if opts.out_of_range == OutOfRange::Wrap && !matches!(dst, Format::Int(_)) {
            return Err(field(
                "out_of_range",
                format!("wrap requires an integral target, not {target_name}"),
            ));
        }
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

/// The `cast_value` metadata object.
fn metadata(
    target: &str,
    opts: CastOptions,
    rounding_explicit: bool,
    scalar_map: Option<Value>,
) -> Value {
    let mut config = Map::new();
    config.insert("data_type".into(), Value::from(target));
    if rounding_explicit || opts.rounding != Rounding::NearestEven {
        config.insert("rounding".into(), Value::from(opts.rounding.name()));
    }
    match opts.out_of_range {
        OutOfRange::Error => {}
        OutOfRange::Clamp => {
            config.insert("out_of_range".into(), Value::from("clamp"));
        }
        OutOfRange::Wrap => {
            config.insert("out_of_range".into(), Value::from("wrap"));
        }
    }
    if let Some(sm) = scalar_map {
        config.insert("scalar_map".into(), sm);
    }
    let mut obj = Map::new();
    obj.insert("name".into(), Value::from(NAME));
    obj.insert("configuration".into(), Value::Object(config));
    Value::Object(obj)
}

/// `cast_value` bound to run-time data types: one type for every (source, target) pair.
#[derive(Debug)]
pub struct CastValueStage {
    core: CastCore,
    input: DataType,
    output: DataType,
    config: CastValueConfig,
    warnings: Vec<String>,
}

fn real_format(dt: &DataType, role: &'static str) -> Result<(Format, u32), MetadataError> {
    match dt.id.format() {
        Some(f) => Ok((f, dt.id.word_bits())),
        None => Err(MetadataError::UnsupportedDataType {
            codec: NAME,
            dtype: dt.id.name().into(),
            reason: if role == "target" {
                "cast_value only targets integer and floating-point types"
            } else {
                "cast_value only reads integer and floating-point types"
            },
        }),
    }
}

impl CastValueStage {
    /// Bind `config` to the array data type `input`.
    ///
    /// # Errors
    /// A source or target that is not a real type, an invalid `scalar_map` entry, `wrap`
    /// into a float target.
    pub fn new(input: &DataType, config: &CastValueConfig) -> Result<Self, MetadataError> {
        let output = config.data_type.clone();
        let dst = real_format(&output, "target")?;
        let src = real_format(input, "source")?;
        let parse = |id: DTypeId| move |v: &Value| id.value_from_json(v).map(|x| x[0]);
        let (i, o) = (input.id, output.id);
        let (enc, dec) = match &config.scalar_map {
            None => (Vec::new(), Vec::new()),
            Some(sm) => (
                map_pairs(sm.get("encode"), &parse(i), &parse(o))?,
                map_pairs(sm.get("decode"), &parse(o), &parse(i))?,
            ),
        };
        let opts = CastOptions::new(config.rounding, config.out_of_range);
        let decode = KeyMap::new(dst.0, dec);
        let warnings = map_warnings((src.0, dst.0), opts.out_of_range, &decode, o.name());
        let core = CastCore::new(src, dst, opts, KeyMap::new(src.0, enc), decode, o.name())?;
        Ok(CastValueStage {
            core,
            input: input.clone(),
            output,
            config: config.clone(),
            warnings,
        })
    }
}

fn pairs_json(m: &KeyMap, k: DTypeId, v: DTypeId) -> Value {
    Value::Array(
        m.entries()
            .iter()
            .map(|&(a, b)| Value::Array(vec![k.value_to_json([a, 0]), v.value_to_json([b, 0])]))
            .collect(),
    )
}

impl DynStage for CastValueStage {
    fn name(&self) -> &'static str {
        NAME
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn input(&self) -> &DataType {
        &self.input
    }
    fn output(&self) -> &DataType {
        &self.output
    }
    fn encode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.input, &self.output, &src, &dst)?;
        self.core.encode(src, dst).map_err(|f| {
            element_error_words(
                NAME,
                Direction::Encode,
                (self.input.id, self.output.id),
                src,
                f,
            )
            .into()
        })
    }
    fn decode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.output, &self.input, &src, &dst)?;
        self.core.decode(src, dst).map_err(|f| {
            element_error_words(
                NAME,
                Direction::Decode,
                (self.output.id, self.input.id),
                src,
                f,
            )
            .into()
        })
    }
    fn encode_fill_value(&self, fill: Scalar) -> Result<Scalar, MetadataError> {
        let (i, o) = (self.input.id, self.output.id);
        let show_in = |b: u64| i.value_to_json([b, 0]);
        let show_out = |b: u64| o.value_to_json([b, 0]);
        self.core
            .encode_fill(fill[0], &show_in, &show_out)
            .map(|y| [y, 0])
    }
    fn to_metadata(&self) -> Value {
        let (i, o) = (self.input.id, self.output.id);
        let sm = self.config.scalar_map.as_ref().map(|_| {
            let mut sm = Map::new();
            if !self.core.encode.map().is_empty() {
                sm.insert("encode".into(), pairs_json(self.core.encode.map(), i, o));
            }
            if !self.core.decode.map().is_empty() {
                sm.insert("decode".into(), pairs_json(self.core.decode.map(), o, i));
            }
            Value::Object(sm)
        });
        let opts = CastOptions::new(self.config.rounding, self.config.out_of_range);
        metadata(o.name(), opts, self.config.rounding_explicit, sm)
    }
    fn fusion(&self, dir: Direction) -> super::Fusion<'_> {
        self.core.fusion(dir)
    }
}
