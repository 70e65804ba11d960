//! Errors, one enum per layer: metadata (building a codec or chain) and data (encoding or
//! decoding elements).

use thiserror::Error;

mod choose;
pub use choose::ChooseError;

use crate::dtype::{DTypeId, FillValueError, Kind};

/// Why an element could not be encoded or decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// `cast_value`: the rounded value is outside the target range and `out_of_range` is
    /// absent ("implementations MUST treat any out-of-range value as an encoding or decoding
    /// failure").
    OutOfRange,
    /// `cast_value`: NaN into a type without NaN, not covered by `scalar_map`.
    NanUnrepresentable,
    /// `cast_value`: ±Infinity into a type without it, not covered by `scalar_map`.
    InfUnrepresentable,
    /// `scale_offset`: "If any intermediate or final value produced during encoding or
    /// decoding is not representable in that data type, implementations MUST treat this as an
    /// error."
    NotRepresentable,
    /// `scale_offset` decoding of an integer type: `in / scale` has a remainder.
    InexactDivision,
    /// `encode_slice`/`decode_slice` got an input and an output of different lengths; the
    /// error's `index` is the shorter length, its `value` says both. Nothing is written.
    LengthMismatch,
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rule::OutOfRange => "value out of range of the target data type (no out_of_range rule)",
            Rule::NanUnrepresentable => "NaN is not representable in the target data type",
            Rule::InfUnrepresentable => "infinity is not representable in the target data type",
            Rule::NotRepresentable => {
                "an intermediate or final value is not representable in the data type"
            }
            Rule::InexactDivision => "integer division by scale is not exact",
            Rule::LengthMismatch => {
                "input and output slices differ in length (give both the same length)"
            }
        })
    }
}

/// An element that a codec could not transform.
///
/// Its message names the codec, the rule, the data type the codec writes and its range, the
/// element's position in the array and its value (at the failing codec and, when a chain
/// changed it on the way, in the caller's array), and how to fix the metadata, e.g.
///
/// ```text
/// cast_value encode: value out of range of uint8 [0, 255] (no out_of_range rule) at element
/// [1, 0] (C-order index 2): value 300.0; fix: choose a wider data_type (or refit scale and
/// offset to the data), or add "out_of_range": "clamp" (or "wrap") to cast_value's
/// configuration, which stores such values with an unbounded error (clamped to the range's
/// ends, or wrapped)
/// ```
///
/// ```
/// use zquant::{ArrayCodecExt, CastOptions, CastValue, CodecError, ScalarMap};
///
/// let codec: CastValue<f32, u8> = CastValue::new(CastOptions::default(), ScalarMap::default())?;
/// let input = ndarray::array![[1.0f32, 2.0], [300.0, 4.0]];
/// let Err(CodecError::Element(e)) = codec.encode(&input) else { panic!("300 fits no u8") };
/// assert_eq!(*e.position, [1, 0]);
/// assert_eq!(e.value, "300.0");
/// assert!(e.to_string().contains("uint8 [0, 255]"));
/// assert!(e.to_string().contains(r#""out_of_range": "clamp""#));
/// # Ok::<(), zquant::MetadataError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct ElementError {
    /// Codec name (`"cast_value"`, …).
    pub codec: &'static str,
    /// `"encode"` or `"decode"`.
    pub direction: &'static str,
    /// The rule broken.
    pub rule: Rule,
    /// Flat index of the first failing element, in C (row-major) order of the array.
    pub index: usize,
    /// The element's index in each dimension of the array, when the call had an array's
    /// shape (array-level calls); empty for slice calls.
    pub position: Box<[usize]>,
    /// The element the failing codec received, in the Zarr fill-value JSON encoding, written
    /// without JSON string quotes: `300.0`, `-2`, `NaN`, `-Infinity`, `0x7e01`, `["NaN",1.0]`.
    pub value: String,
    /// The same element as the caller gave it, when an earlier codec of the chain changed it
    /// (`None` when it is [`Self::value`]).
    pub input: Option<Box<str>>,
    /// The data type the failing codec writes (its target when encoding, its source when
    /// decoding), when known.
    pub target: Option<DTypeId>,
}

impl ElementError {
    /// A failure at flat index `index` of an element whose JSON text is `value`.
    pub fn new(
        codec: &'static str,
        direction: &'static str,
        rule: Rule,
        index: usize,
        value: String,
    ) -> Self {
        ElementError {
            codec,
            direction,
            rule,
            index,
            position: Box::default(),
            value,
            input: None,
            target: None,
        }
    }

    /// The same error for a codec that writes `target`.
    pub fn writing(mut self, target: DTypeId) -> Self {
        self.target = Some(target);
        self
    }

    /// The same error for a codec that writes `T` (a declared `T` is registered).
    pub(crate) fn writing_type<T: crate::dtype::DType>(mut self) -> Self {
        self.target = crate::dtype::register_dtype::<T>().ok();
        self
    }

    /// The same error, located in an array of `shape` (C order).
    pub fn in_shape(mut self, shape: &[usize]) -> Self {
        let mut rest = self.index;
        let mut position = vec![0; shape.len()];
        for (p, &d) in position.iter_mut().zip(shape).rev() {
            if d > 0 {
                *p = rest % d;
                rest /= d;
            }
        }
        self.position = position.into();
        self
    }

    /// The same error, with the caller's element (kept only when it differs from
    /// [`Self::value`]).
    pub fn with_input(mut self, input: String) -> Self {
        self.input = (input != self.value).then(|| input.into_boxed_str());
        self
    }

    fn target_text(&self) -> String {
        let Some(t) = self.target else {
            return "the target data type".to_string();
        };
        match t.kind() {
            Kind::Int(l) => format!("{t} [{}, {}]", l.min(), l.max()),
            Kind::Float(l) => {
                let max = crate::number::float::decode_float(&l, l.max_finite_bits()).to_f64();
                format!("{t} [{}, {}]", -max, max)
            }
            _ => t.to_string(),
        }
    }

    fn target_name(&self) -> String {
        self.target
            .map_or_else(|| "the target data type".to_string(), |t| t.to_string())
    }

    fn hint(&self) -> Option<String> {
        let t = self.target_name();
        Some(match self.rule {
            // Clamping makes the error unbounded for exactly the values that need the fix:
            // the hint says so, for data that has outgrown a range chosen for a bound.
            Rule::OutOfRange => format!(
                "choose a wider data_type (or refit scale and offset to the data), or add \
                 \"out_of_range\": \"clamp\" (or \"wrap\") to {}'s configuration, which stores \
                 such values with an unbounded error (clamped to the range's ends, or wrapped)",
                self.codec
            ),
            Rule::NanUnrepresentable => format!(
                "map NaN to a value of {t} with \"scalar_map\": {{\"encode\": [[\"NaN\", v]], \
                 \"decode\": [[v, \"NaN\"]]}}, v a value the data never takes"
            ),
            Rule::InfUnrepresentable => format!(
                "map infinities to values of {t} with \"scalar_map\": {{\"encode\": \
                 [[\"Infinity\", v], [\"-Infinity\", w]]}}"
            ),
            Rule::NotRepresentable => format!(
                "choose offset and scale so that (value - offset) * scale, and its decoding, fit \
                 {t} for every value of the data"
            ),
            Rule::InexactDivision => {
                "the encoded value is not a multiple of scale: decode only what this codec \
                 encoded, with the same scale and offset"
                    .to_string()
            }
            Rule::LengthMismatch => return None,
        })
    }
}

impl std::fmt::Display for ElementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: ", self.codec, self.direction)?;
        match self.rule {
            Rule::OutOfRange => write!(
                f,
                "value out of range of {} (no out_of_range rule)",
                self.target_text()
            )?,
            Rule::NanUnrepresentable => {
                write!(f, "NaN is not representable in {}", self.target_name())?
            }
            Rule::InfUnrepresentable => {
                write!(f, "infinity is not representable in {}", self.target_name())?
            }
            Rule::NotRepresentable => write!(
                f,
                "an intermediate or final value is not representable in {}",
                self.target_text()
            )?,
            rule => write!(f, "{rule}")?,
        }
        if self.position.len() > 1 {
            write!(
                f,
                " at element {:?} (C-order index {})",
                self.position, self.index
            )?;
        } else {
            write!(f, " at element {}", self.index)?;
        }
        match &self.input {
            Some(input) => write!(
                f,
                ": value {} at this codec, {input} in the array",
                self.value
            )?,
            None => write!(f, ": value {}", self.value)?,
        }
        if let Some(h) = self.hint() {
            write!(f, "; fix: {h}")?;
        }
        Ok(())
    }
}

/// Invalid codec or chain metadata: detected before any data is touched.
///
/// Each message names the codec and the field, and lists the valid choices where there are
/// few:
///
/// ```
/// use serde_json::json;
/// let e = zquant::DynChain::from_array_to_array_codecs(&json!("float32"), &json!(0), &[json!(
///     {"name": "bitround", "configuration": {"keepbit": 3}}
/// )]).unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "bitround: `configuration`: unknown key \"keepbit\": expected one of \"keepbits\"; did you mean \"keepbits\"?"
/// );
/// assert!(matches!(e, zquant::MetadataError::Field { codec: "bitround", .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MetadataError {
    /// A codec name this crate does not implement.
    #[error(
        "unknown codec {0:?}: {choices}",
        choices = choices(.0, &codec_names())
    )]
    UnknownCodec(String),
    /// A `codecs` list entry that is not a codec object (`{"name": …, "configuration": …}`).
    #[error("codec object: {0}")]
    CodecObject(String),
    /// A codec object or field is malformed.
    #[error("{codec}: `{field}`: {reason}")]
    Field {
        /// Codec name.
        codec: &'static str,
        /// Offending field (`"configuration"` for the object itself).
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A scalar field (`scale`, `offset`, a `scalar_map` entry) has an invalid encoding.
    #[error("{codec}: `{field}`: {source}")]
    Scalar {
        /// Codec name.
        codec: &'static str,
        /// Offending field.
        field: &'static str,
        /// The encoding error.
        source: FillValueError,
    },
    /// The codec does not support the data type it receives.
    #[error("{codec}: data type {dtype} is not supported ({reason})")]
    UnsupportedDataType {
        /// Codec name.
        codec: &'static str,
        /// Data type name.
        dtype: String,
        /// Why.
        reason: &'static str,
    },
    /// A data type description is invalid.
    #[error("data type: {0}")]
    DataType(String),
    /// The array's fill value has an invalid encoding.
    #[error("fill_value: {0}")]
    FillValue(FillValueError),
    /// The fill value cannot be carried through a codec.
    #[error("{codec}: fill value: {reason}")]
    FillValueTransform {
        /// Codec name.
        codec: &'static str,
        /// What failed.
        reason: String,
    },
    /// Stages whose data types do not line up.
    #[error("chain: codec {index} ({codec}) expects {expected} but receives {found}")]
    ChainMismatch {
        /// Position in the chain.
        index: usize,
        /// Codec name.
        codec: &'static str,
        /// Expected input type.
        expected: String,
        /// Actual input type.
        found: String,
    },
}

impl CodecError {
    /// The same error, an element error located in an array of `shape`: its N-d position,
    /// and the caller's element there (`given(index)`, its JSON text).
    pub(crate) fn located(
        self,
        shape: &[usize],
        given: impl FnOnce(usize) -> Option<String>,
    ) -> Self {
        match self {
            CodecError::Element(el) if el.rule != Rule::LengthMismatch => {
                let given = given(el.index);
                let el = el.in_shape(shape);
                match given {
                    Some(g) => el.with_input(g).into(),
                    None => el.into(),
                }
            }
            other => other,
        }
    }
}

/// Any failure of an encode or decode call: an element, the metadata, or the arrays given.
///
/// ```
/// use zquant::{ArrayCodecExt, CodecError, ScaleOffset};
///
/// let codec = ScaleOffset::new(0i8, 2)?;
/// match codec.encode(&ndarray::array![1i8, 100]) {
///     Err(CodecError::Element(e)) => {
///         assert_eq!((e.index, e.value.as_str()), (1, "100"));
///         assert_eq!(e.rule, zquant::Rule::NotRepresentable);
///     }
///     other => panic!("100 * 2 does not fit int8: {other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CodecError {
    /// An element could not be transformed.
    #[error(transparent)]
    Element(#[from] ElementError),
    /// The metadata was invalid (run-time chains report it on first use too).
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// An input or output array has the wrong shape, size or type.
    #[error("array: {0}")]
    Array(String),
}

/// What to say of a word that is none of `valid`: the choices, and the nearest one when the
/// word looks like a misspelling of it (`nearest_even` -> `nearest-even`).
/// The codec names [`MetadataError::UnknownCodec`]'s message offers. The codec registry,
/// a layer above, owns them and hands them down (`inventory::submit!` beside its table),
/// so that this layer names no codec.
pub(crate) struct CodecNames(pub(crate) &'static [&'static str]);
inventory::collect!(CodecNames);

/// Every name the registry handed down, in its order.
fn codec_names() -> Vec<&'static str> {
    inventory::iter::<CodecNames>
        .into_iter()
        .flat_map(|c| c.0.iter().copied())
        .collect()
}

pub(crate) fn choices(word: &str, valid: &[&str]) -> String {
    let list = valid
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    match nearest(word, valid) {
        Some(n) => format!("expected one of {list}; did you mean {n:?}?"),
        None => format!("expected one of {list}"),
    }
}

/// The choice within a small edit distance of `word` (case, `_` and `-` ignored).
fn nearest<'a>(word: &str, valid: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .map(|c| {
                if c == '_' {
                    '-'
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect()
    };
    let w = norm(word);
    valid
        .iter()
        .map(|v| (edit_distance(&w, &norm(v)), *v))
        .filter(|&(d, v)| {
            let n = norm(v);
            // A close spelling, or a start of the name (`config` for `configuration`).
            d <= 2.max(v.len() / 4) || (w.len() >= 3 && n.starts_with(&w))
        })
        .min_by_key(|&(d, _)| d)
        .map(|(_, v)| v)
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The error text for an unknown key of a configuration object.
pub(crate) fn unknown_key(key: &str, valid: &[&str]) -> String {
    format!("unknown key {key:?}: {}", choices(key, valid))
}
