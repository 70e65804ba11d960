//! `cast_value`: convert each element's numerical value to another data type.
//!
//! Specification: zarr-extensions `codecs/cast_value/README.md`.
//!
//! ```json
//! {"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even",
//!  "out_of_range": "clamp", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}
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

use super::{ArrayCodec, Direction, Rule, SliceFailure, element_error};
use crate::convert::ElementFailure;
use crate::convert::table::CodeTable;
use crate::convert::{CastOptions, Class, Exact, OutOfRange, Rounding, Status};
use crate::dtype::{Kind, Real};
use crate::error::{ElementError, MetadataError};
use crate::metadata::DataType;

/// The Zarr name.
pub const NAME: &str = "cast_value";

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

impl CastValueConfig {
    /// Parse a `configuration` object.
    ///
    /// # Errors
    /// A missing or non-object configuration, unknown keys, an unknown data type, an unknown
    /// rounding or out_of_range value (`null` included).
    pub fn from_json(config: Option<&Value>) -> Result<Self, MetadataError> {
        let Some(Value::Object(map)) = config else {
            return Err(field(
                "configuration",
                "cast_value requires a configuration object",
            ));
        };
        for k in map.keys() {
            if !matches!(
                k.as_str(),
                "data_type" | "rounding" | "out_of_range" | "scalar_map"
            ) {
                return Err(field("configuration", format!("unknown key {k:?}")));
            }
        }
        let data_type = match map.get("data_type") {
            None => return Err(field("data_type", "missing")),
            Some(v) => DataType::from_json(v).map_err(|e| field("data_type", e.to_string()))?,
        };
        let rounding = match map.get("rounding") {
            None => Rounding::NearestEven,
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|_| field("rounding", format!("unknown rounding mode {v}")))?,
        };
        let out_of_range = match map.get("out_of_range") {
            None => OutOfRange::Error,
            Some(Value::String(s)) if s == "clamp" => OutOfRange::Clamp,
            Some(Value::String(s)) if s == "wrap" => OutOfRange::Wrap,
            Some(v) => {
                return Err(field(
                    "out_of_range",
                    format!("must be \"clamp\" or \"wrap\", got {v}"),
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
                    return Err(field("scalar_map", format!("unknown key {k:?}")));
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
#[derive(Clone, Debug, PartialEq)]
pub struct MapEntries<K: Real, V: Real> {
    entries: Vec<(K, V)>,
    /// Keys as canonical exact values, for matching.
    keys: Vec<Exact>,
    /// The same keys as the codes of `K` that have their value (both zeros for a zero key),
    /// so that a slice is scanned for keys on its bits.
    codes: Vec<(u64, V)>,
    /// The value of a NaN key: every NaN code matches it.
    nan: Option<V>,
}

impl<K: Real, V: Real> Default for MapEntries<K, V> {
    fn default() -> Self {
        MapEntries {
            entries: Vec::new(),
            keys: Vec::new(),
            codes: Vec::new(),
            nan: None,
        }
    }
}

/// The canonical form of a value for scalar_map matching: every NaN alike, ±0 alike, finite
/// values with the significand's trailing zeros removed.
fn canonical(x: Exact) -> Exact {
    match x.class {
        Class::Nan => Exact::NAN,
        Class::Zero => Exact::ZERO,
        Class::Inf => x,
        Class::Finite => {
            let tz = x.mant.trailing_zeros();
            Exact::finite(x.neg, x.mant >> tz, x.exp + tz as i32)
        }
    }
}

impl<K: Real, V: Real> MapEntries<K, V> {
    /// Entries in order; later duplicates of a key are ignored ("readers MUST use the first
    /// occurrence").
    pub fn new(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let mut m = MapEntries::default();
        for (k, v) in pairs {
            let c = canonical(k.to_exact());
            if !m.keys.contains(&c) {
                m.keys.push(c);
                m.entries.push((k, v));
                if c.class == Class::Nan {
                    m.nan = Some(v);
                    continue;
                }
                let signs: &[bool] = if c.class == Class::Zero {
                    &[false, true]
                } else {
                    &[c.neg]
                };
                for &neg in signs {
                    let x = Exact { neg, ..c };
                    let (code, st) = K::from_exact(x, CastOptions::default());
                    if st == Status::Exact && canonical(code.to_exact()) == c {
                        let bits = code.to_bits();
                        if !m.codes.iter().any(|(b, _)| *b == bits) {
                            m.codes.push((bits, v));
                        }
                    }
                }
            }
        }
        m
    }

    /// The mapped value of the element with code `bits`, if its value is a key (the same
    /// answer as [`Self::lookup`], from the bits).
    #[inline(always)]
    fn lookup_bits(&self, bits: u64) -> Option<V> {
        if let Some(v) = self.nan {
            if is_nan_code::<K>(bits) {
                return Some(v);
            }
        }
        self.codes.iter().find(|(b, _)| *b == bits).map(|(_, v)| *v)
    }

    /// Whether the element with code `bits` is a key.
    #[inline(always)]
    fn is_key_bits(&self, bits: u64) -> bool {
        (self.nan.is_some() && is_nan_code::<K>(bits)) | self.codes.iter().any(|(b, _)| *b == bits)
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The mapped value of `x`, if its value is a key.
    #[inline(always)]
    pub fn lookup(&self, x: Exact) -> Option<V> {
        if self.keys.is_empty() {
            return None;
        }
        let c = canonical(x);
        self.keys
            .iter()
            .position(|k| *k == c)
            .map(|i| self.entries[i].1)
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
        let Some(Value::Array(entries)) = list else {
            return Ok(MapEntries::default());
        };
        let mut pairs = Vec::with_capacity(entries.len());
        for e in entries {
            let Value::Array(p) = e else {
                return Err(field("scalar_map", "every entry must be a length-2 array"));
            };
            let [k, v] = p.as_slice() else {
                return Err(field("scalar_map", "every entry must be a length-2 array"));
            };
            let k = K::fill_value_from_json(k).map_err(|source| MetadataError::Scalar {
                codec: NAME,
                field: "scalar_map",
                source,
            })?;
            let v = V::fill_value_from_json(v).map_err(|source| MetadataError::Scalar {
                codec: NAME,
                field: "scalar_map",
                source,
            })?;
            pairs.push((k, v));
        }
        Ok(MapEntries::new(pairs))
    }
}

/// Both directions of a `scalar_map`.
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

/// `cast_value` from `S` to `D`.
#[derive(Clone, Debug, PartialEq)]
pub struct CastValue<S: Real, D: Real> {
    opts: CastOptions,
    rounding_explicit: bool,
    map: ScalarMap<S, D>,
    /// Every code of an at-most-8-bit input converted once (scalar map included), so that a
    /// fused chain's blocks are pure lookups.
    encode_table: Option<CodeTable<D>>,
    /// The same for an at-most-8-bit encoded type, when decoding.
    decode_table: Option<CodeTable<S>>,
}

fn status_rule(st: Status) -> Option<Rule> {
    match st {
        Status::OutOfRange => Some(Rule::OutOfRange),
        Status::NanUnrepresentable => Some(Rule::NanUnrepresentable),
        Status::InfUnrepresentable => Some(Rule::InfUnrepresentable),
        _ => None,
    }
}

/// Whether `bits` is a NaN code of `K`.
#[inline(always)]
fn is_nan_code<K: Real>(bits: u64) -> bool {
    match K::KIND {
        Kind::Float(l) => l.is_nan_bits(bits),
        _ => false,
    }
}

/// Elements per block of the mapped kernel.
const MAP_BLOCK: usize = 256;

/// `cast_slice` with a non-empty map, for inputs without a table. A block without a key
/// (found on the bits) is a plain cast; a block with keys is cast with each key replaced by
/// code 0, then the keys' values are written over. Only when that cast fails (the error may
/// be the stand-in's) is the block redone by the element-wise mapped path, which also finds
/// the first failing element.
#[inline(always)]
fn cast_mapped<A: Real, B: Real>(
    src: &[A],
    dst: &mut [B],
    opts: CastOptions,
    map: &MapEntries<A, B>,
) -> Result<(), ElementFailure> {
    let mut tmp = [A::default(); MAP_BLOCK];
    for (k, (s, d)) in src
        .chunks(MAP_BLOCK)
        .zip(dst.chunks_mut(MAP_BLOCK))
        .enumerate()
    {
        let shift = |mut f: ElementFailure| {
            f.index += k * MAP_BLOCK;
            f
        };
        let hit = s
            .iter()
            .fold(false, |h, x| h | map.is_key_bits(x.to_bits()));
        if !hit {
            crate::convert::cast_slice(s, d, opts).map_err(shift)?;
            continue;
        }
        let t = &mut tmp[..s.len()];
        for (x, y) in s.iter().zip(t.iter_mut()) {
            *y = if map.is_key_bits(x.to_bits()) {
                A::default()
            } else {
                *x
            };
        }
        if crate::convert::cast_slice(t, d, opts).is_ok() {
            for (x, y) in s.iter().zip(d.iter_mut()) {
                if let Some(v) = map.lookup_bits(x.to_bits()) {
                    *y = v;
                }
            }
        } else {
            crate::convert::cast_slice_mapped(s, d, opts, &|x| map.lookup(x)).map_err(shift)?;
        }
    }
    Ok(())
}

/// One direction's kernel: map, else round and range-check — the conversion core's slice
/// path (fast paths included), with the map applied first.
#[inline(always)]
fn cast_kernel<A: Real, B: Real>(
    src: &[A],
    dst: &mut [B],
    opts: CastOptions,
    map: &MapEntries<A, B>,
    table: Option<&CodeTable<B>>,
) -> Result<(), SliceFailure> {
    let result = if let Some(t) = table {
        t.apply(src, dst)
    } else if map.is_empty() {
        crate::convert::cast_slice(src, dst, opts)
    } else {
        cast_mapped(src, dst, opts, map)
    };
    result.map_err(|f| SliceFailure {
        index: f.index,
        rule: status_rule(f.status).unwrap_or(Rule::OutOfRange),
    })
}

/// Numerical equality for the fill round trip: NaN equals NaN, -0 equals +0.
fn same_number(a: Exact, b: Exact) -> bool {
    canonical(a) == canonical(b)
}

impl<S: Real, D: Real> CastValue<S, D> {
    /// A codec with the given options and scalar map.
    ///
    /// # Errors
    /// `wrap` into a float target.
    pub fn new(opts: CastOptions, map: ScalarMap<S, D>) -> Result<Self, MetadataError> {
        if opts.out_of_range == OutOfRange::Wrap && !matches!(D::KIND, Kind::Int(_)) {
            return Err(field(
                "out_of_range",
                format!("wrap requires an integral target, not {}", D::NAME),
            ));
        }
        let encode_table = (S::BITS <= 8)
            .then(|| CodeTable::build::<S>(opts, &|x| map.encode.lookup(x)))
            .flatten();
        let decode_table = (D::BITS <= 8)
            .then(|| CodeTable::build::<D>(opts, &|x| map.decode.lookup(x)))
            .flatten();
        Ok(CastValue {
            opts,
            rounding_explicit: true,
            map,
            encode_table,
            decode_table,
        })
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
}

impl<S: Real, D: Real> ArrayCodec for CastValue<S, D> {
    type In = S;
    type Out = D;

    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_slice(&self, src: &[S], dst: &mut [D]) -> Result<(), ElementError> {
        cast_kernel(
            src,
            dst,
            self.opts,
            &self.map.encode,
            self.encode_table.as_ref(),
        )
        .map_err(|f| element_error(NAME, Direction::Encode, src, f))
    }

    fn decode_slice(&self, src: &[D], dst: &mut [S]) -> Result<(), ElementError> {
        cast_kernel(
            src,
            dst,
            self.opts,
            &self.map.decode,
            self.decode_table.as_ref(),
        )
        .map_err(|f| element_error(NAME, Direction::Decode, src, f))
    }

    fn encode_fill_value(&self, fill: S) -> Result<D, MetadataError> {
        let mut enc = [D::default()];
        self.encode_slice(&[fill], &mut enc)
            .map_err(|e| MetadataError::FillValueTransform {
                codec: NAME,
                reason: format!("encode: {} (value {})", e.rule, e.value),
            })?;
        let mut dec = [S::default()];
        self.decode_slice(&enc, &mut dec)
            .map_err(|e| MetadataError::FillValueTransform {
                codec: NAME,
                reason: format!(
                    "does not survive the round trip: decode: {} (value {})",
                    e.rule, e.value
                ),
            })?;
        if !same_number(fill.to_exact(), dec[0].to_exact()) {
            return Err(MetadataError::FillValueTransform {
                codec: NAME,
                reason: format!(
                    "{} does not survive the round trip (encodes to {}, decodes to {})",
                    fill.fill_value_to_json(),
                    enc[0].fill_value_to_json(),
                    dec[0].fill_value_to_json()
                ),
            });
        }
        Ok(enc[0])
    }

    fn to_metadata(&self) -> Value {
        let mut config = Map::new();
        config.insert("data_type".into(), Value::from(D::NAME));
        if self.rounding_explicit || self.opts.rounding != Rounding::NearestEven {
            config.insert("rounding".into(), Value::from(self.opts.rounding.name()));
        }
        match self.opts.out_of_range {
            OutOfRange::Error => {}
            OutOfRange::Clamp => {
                config.insert("out_of_range".into(), Value::from("clamp"));
            }
            OutOfRange::Wrap => {
                config.insert("out_of_range".into(), Value::from("wrap"));
            }
        }
        if self.map.present {
            let mut sm = Map::new();
            if !self.map.encode.is_empty() {
                sm.insert("encode".into(), self.map.encode.to_json());
            }
            if !self.map.decode.is_empty() {
                sm.insert("decode".into(), self.map.decode.to_json());
            }
            config.insert("scalar_map".into(), Value::Object(sm));
        }
        let mut obj = Map::new();
        obj.insert("name".into(), Value::from(NAME));
        obj.insert("configuration".into(), Value::Object(config));
        Value::Object(obj)
    }
}
