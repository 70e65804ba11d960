//! The codecs, typed: each is an [`ArrayCodec`] from one element type to another, with its
//! kernels monomorphized for that pair and run over slices.
//!
//! A codec's slice kernel never builds a `Result` per element: it writes every output,
//! remembers the first failing index, and only then builds one [`ElementError`].

pub mod bitround;
pub mod cast_value;
pub mod fixed_scale_offset;
pub mod scale_offset;

pub use bitround::BitRound;
pub use cast_value::{CastValue, ScalarMap};
pub use fixed_scale_offset::FixedScaleOffset;
pub use scale_offset::ScaleOffset;

use crate::dtype::DType;
use crate::error::{ElementError, MetadataError, Rule};
use crate::pipeline::Chain;

/// The first failing element of a slice kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceFailure {
    /// Index in the slice.
    pub index: usize,
    /// Rule broken.
    pub rule: Rule,
}

/// Direction of a transformation, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `In -> Out`.
    Encode,
    /// `Out -> In`.
    Decode,
}

impl Direction {
    /// `"encode"` or `"decode"`.
    pub const fn name(self) -> &'static str {
        match self {
            Direction::Encode => "encode",
            Direction::Decode => "decode",
        }
    }
}

/// Build the error for the failing element `src[f.index]`.
pub fn element_error<T: DType>(
    codec: &'static str,
    direction: Direction,
    src: &[T],
    f: SliceFailure,
) -> ElementError {
    element_error_at(codec, direction, f.rule, f.index, src.get(f.index).copied())
}

/// Build the error for a failing element `value` at flat index `index`.
pub fn element_error_at<T: DType>(
    codec: &'static str,
    direction: Direction,
    rule: Rule,
    index: usize,
    value: Option<T>,
) -> ElementError {
    ElementError {
        codec,
        direction: direction.name(),
        rule,
        index,
        value: value.map_or_else(String::new, |v| match v.fill_value_to_json() {
            // "NaN", "Infinity", "0x…": the text itself, not a quoted JSON string.
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        }),
    }
}

/// An array->array codec from `In` elements to `Out` elements.
///
/// Implementors provide the slice kernels; arrays, chains and fill values are handled on top
/// of them by [`Chain`](crate::pipeline::Chain) and the run-time pipeline.
pub trait ArrayCodec: Send + Sync {
    /// Decoded element type.
    type In: DType;
    /// Encoded element type.
    type Out: DType;

    /// The codec's Zarr name.
    fn name(&self) -> &'static str;

    /// Encode `src` into `dst` (same length).
    ///
    /// # Errors
    /// The first element that cannot be encoded; `dst` is then partly written.
    fn encode_slice(&self, src: &[Self::In], dst: &mut [Self::Out]) -> Result<(), ElementError>;

    /// Decode `src` into `dst` (same length).
    ///
    /// # Errors
    /// The first element that cannot be decoded; `dst` is then partly written.
    fn decode_slice(&self, src: &[Self::Out], dst: &mut [Self::In]) -> Result<(), ElementError>;

    /// The codec's metadata object, as it appears in `zarr.json`.
    fn to_metadata(&self) -> serde_json::Value;

    /// Encode the array's fill value: "Implementations MUST transform the fill value as it
    /// propagates through the codec chain, using the same semantics as the element
    /// transformation." `cast_value` also checks that it survives the round trip.
    ///
    /// # Errors
    /// [`MetadataError::FillValueTransform`] when the fill value cannot be carried.
    fn encode_fill_value(&self, fill: Self::In) -> Result<Self::Out, MetadataError> {
        let mut out = [Self::Out::default()];
        self.encode_slice(&[fill], &mut out)
            .map_err(|e| MetadataError::FillValueTransform {
                codec: self.name(),
                reason: format!("{} (value {})", e.rule, e.value),
            })?;
        Ok(out[0])
    }

    /// Compose: `self`, then `next`. `next` must take this codec's output type; a mismatch
    /// does not compile.
    fn then<C>(self, next: C) -> Chain<Self, C>
    where
        Self: Sized,
        C: ArrayCodec<In = Self::Out>,
    {
        Chain::new(self, next)
    }
}

/// Elementwise codec kernels share this loop shape: transform each element, remember the
/// first failure, report it once.
#[inline(always)]
pub(crate) fn map_slice<A: Copy, B>(
    src: &[A],
    dst: &mut [B],
    mut f: impl FnMut(A) -> (B, Option<Rule>),
) -> Result<(), SliceFailure> {
    let mut first: Option<SliceFailure> = None;
    for (i, (s, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
        let (v, bad) = f(*s);
        *d = v;
        if let Some(rule) = bad {
            if first.is_none() {
                first = Some(SliceFailure { index: i, rule });
            }
        }
    }
    match first {
        None => Ok(()),
        Some(f) => Err(f),
    }
}
