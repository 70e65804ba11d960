//! Errors, one enum per layer: metadata (building a codec or chain) and data (encoding or
//! decoding elements).

use thiserror::Error;

use crate::dtype::FillValueError;

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
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{codec} {direction}: {rule} at element {index} (value {value})")]
pub struct ElementError {
    /// Codec name (`"cast_value"`, …).
    pub codec: &'static str,
    /// `"encode"` or `"decode"`.
    pub direction: &'static str,
    /// The rule broken.
    pub rule: Rule,
    /// Flat index of the first failing element, in C (row-major) order of the array.
    pub index: usize,
    /// The failing input element in the Zarr fill-value JSON encoding, written without JSON
    /// string quotes: `300.0`, `-2`, `NaN`, `-Infinity`, `0x7e01`, `["NaN",1.0]`.
    pub value: String,
}

/// Invalid codec or chain metadata: detected before any data is touched.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MetadataError {
    /// A codec name this crate does not implement.
    #[error("unknown codec {0:?}")]
    UnknownCodec(String),
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

/// Any failure of an encode or decode call.
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
