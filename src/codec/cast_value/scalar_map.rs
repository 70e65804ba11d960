//! `scalar_map`: the values a `cast_value` codec maps before any rounding or range check,
//! typed ([`MapEntries`], [`ScalarMap`]) over the untyped [`KeyMap`] the kernels match, and
//! the warnings for map entries that `clamp` or `wrap` can reach.

use serde_json::Value;

use super::{NAME, field};
use crate::codec::json_text;
use crate::convert::KeyMap;
use crate::dtype::Real;
use crate::error::MetadataError;
use crate::number::exact::Exact;
use crate::number::layout::Format;
use crate::number::{CastOptions, OutOfRange};

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

    pub(super) fn to_json(&self) -> Value {
        Value::Array(
            self.entries
                .iter()
                .map(|(k, v)| Value::Array(vec![k.fill_value_to_json(), v.fill_value_to_json()]))
                .collect(),
        )
    }

    pub(super) fn from_json(list: Option<&Value>) -> Result<Self, MetadataError> {
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

pub(super) type ParseScalar<'a> = &'a dyn Fn(&Value) -> Result<u64, crate::dtype::FillValueError>;

/// The `(key, value)` codes of one direction's list of pairs.
pub(super) fn map_pairs(
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
pub(super) fn map_warnings(
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
