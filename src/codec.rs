//! The codecs. Each has two faces over one implementation:
//!
//! - typed: an [`ArrayCodec`] from one element type to another (`CastValue<f64, u8>`), for
//!   chains checked by the compiler;
//! - untyped: a [`DynStage`] bound to run-time [`DataType`]s, built from metadata.
//!
//! Both hold the same non-generic core (`CastCore`, `ScaleOffsetCore`, …) whose kernels
//! were chosen once, at construction, from the data types' layouts, and which works on
//! slices of storage words ([`Words`]). A typed codec views its slices as words; nothing is
//! monomorphized per dtype pair.
//!
//! A kernel never builds a `Result` per element: it writes every output, remembers the
//! first failing index, and only then builds one [`ElementError`].

pub(crate) mod astype;
pub(crate) mod bitround;
pub(crate) mod cast_value;
pub(crate) mod chain;
pub(crate) mod fixed_scale_offset;
pub(crate) mod numcodecs_filter;
pub(crate) mod packbits;
pub(crate) mod quantize;
pub(crate) mod registry;
pub(crate) mod scale_offset;

pub use astype::AsType;
pub use bitround::BitRound;
pub use cast_value::{CastValue, ScalarMap};
pub use chain::Chain;
pub use fixed_scale_offset::FixedScaleOffset;
pub use quantize::Quantize;
pub use scale_offset::ScaleOffset;

pub use registry::CODEC_NAMES;

use serde_json::Value;

use crate::dtype::id::ElementWords;
use crate::dtype::{DType, DTypeId};
use crate::error::{CodecError, ElementError, MetadataError, Rule};
use crate::metadata::DataType;
use crate::number::storage::{Words, WordsMut};

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

/// Build the error for the failing element `src[f.index]` of a codec writing `W`.
pub fn element_error<T: DType, W: DType>(
    codec: &'static str,
    direction: Direction,
    src: &[T],
    f: SliceFailure,
) -> ElementError {
    element_error_at(codec, direction, f.rule, f.index, src.get(f.index).copied())
        .writing_type::<W>()
}

/// Build the error for a failing element `value` at flat index `index`.
pub fn element_error_at<T: DType>(
    codec: &'static str,
    direction: Direction,
    rule: Rule,
    index: usize,
    value: Option<T>,
) -> ElementError {
    // "NaN", "Infinity", "0x…": the text itself, not a quoted JSON string.
    let value = value.map_or_else(String::new, |v| json_text(v.fill_value_to_json()));
    ElementError::new(codec, direction.name(), rule, index, value)
}

/// What a stage offers the fused loop of a chain ([`Chain`], [`DynChain`](crate::DynChain))
/// in one direction, so that two neighbouring stages can run as one kernel. An internal
/// detail of the crate's codecs, public only because the codec traits return it: other
/// implementations keep the default, [`Fusion::None`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Fusion<'a> {
    /// Nothing to fuse.
    None,
    /// `scale_offset`'s encode on `float32`/`float64`: `(x - offset) * scale` in the type.
    Affine(crate::convert::Affine),
    /// A `cast_value` direction.
    Cast(&'a crate::convert::Caster),
}

/// An array->array codec from `In` elements to `Out` elements.
///
/// Implementors provide the slice kernels; arrays, chains and fill values are handled on top
/// of them by [`Chain`] and the run-time [`DynChain`](crate::DynChain).
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
    /// The first element that cannot be encoded; `dst` is then partly written. Slices of
    /// different lengths are an error too ([`Rule::LengthMismatch`]), with nothing written.
    fn encode_slice(&self, src: &[Self::In], dst: &mut [Self::Out]) -> Result<(), ElementError>;

    /// Decode `src` into `dst` (same length).
    ///
    /// # Errors
    /// The first element that cannot be decoded; `dst` is then partly written. Slices of
    /// different lengths are an error too ([`Rule::LengthMismatch`]), with nothing written.
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

    /// What this codec offers a chain's fused loop in `dir` (see [`Fusion`]); `None` by
    /// default.
    #[doc(hidden)]
    fn fusion(&self, dir: Direction) -> Fusion<'_> {
        let _ = dir;
        Fusion::None
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

/// The error for slices of different lengths, or `Ok` when they match.
///
/// # Errors
/// [`Rule::LengthMismatch`] at the shorter length.
pub(crate) fn same_length(
    codec: &'static str,
    direction: Direction,
    src: usize,
    dst: usize,
) -> Result<(), ElementError> {
    if src == dst {
        return Ok(());
    }
    Err(ElementError::new(
        codec,
        direction.name(),
        Rule::LengthMismatch,
        src.min(dst),
        format!("input of {src} elements, output of {dst}"),
    ))
}

/// A codec bound to run-time data types: what a chain built from metadata runs.
///
/// Data passes as storage words ([`Words`]); an element of a complex type is two words.
/// One implementation per codec, whatever the data types (`CastValueStage`,
/// `ScaleOffsetStage`, `BitRoundStage`, `FixedScaleOffsetStage`, `QuantizeStage`,
/// `AsTypeStage`).
pub trait DynStage: Send + Sync + std::fmt::Debug {
    /// Codec name.
    fn name(&self) -> &'static str;
    /// Decoded data type.
    fn input(&self) -> &DataType;
    /// Encoded data type.
    fn output(&self) -> &DataType;
    /// What in the configuration is valid but likely unintended (see
    /// [`CastValue::warnings`]); empty by default.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Encode `src` (words of the input type) into `dst` (words of the output type, for
    /// the same number of elements).
    ///
    /// # Errors
    /// Buffers of the wrong width or length, or the first element that cannot be encoded
    /// (index within `src`).
    fn encode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError>;
    /// Decode `src` (words of the output type) into `dst` (words of the input type).
    ///
    /// # Errors
    /// Buffers of the wrong width or length, or the first element that cannot be decoded
    /// (index within `src`).
    fn decode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError>;
    /// Run in `dir` over `data` in place, for a stage whose input and output types are the
    /// same: `None` when the stage has no in-place form (the caller then runs
    /// [`DynStage::encode_words`]/[`DynStage::decode_words`] into another buffer).
    /// `bitround` has one: rounding in place to encode, nothing to decode.
    fn in_place(&self, _dir: Direction, _data: WordsMut<'_>) -> Option<Result<(), CodecError>> {
        None
    }
    /// Whether [`DynStage::in_place`] has a form (input and output types the same): lets a
    /// caller ask before it prepares a buffer to run in.
    fn has_in_place(&self) -> bool {
        false
    }
    /// Whether decoding returns its input unchanged (`bitround`: "the decoded value is the
    /// encoded value"), so that a caller may hand the encoded buffer back as it is.
    fn decode_is_identity(&self) -> bool {
        false
    }
    /// Carry a fill value (one element of the input type) forward, as the element
    /// transformation does ("Implementations MUST transform the fill value as it propagates
    /// through the codec chain").
    ///
    /// # Errors
    /// The fill value cannot be encoded (or, for cast_value, does not survive the round trip).
    fn encode_fill_value(&self, fill: ElementWords) -> Result<ElementWords, MetadataError> {
        let (i, o) = (self.input().id, self.output().id);
        let mut src = ScalarBuf::new(i);
        src.set(fill);
        let mut dst = ScalarBuf::new(o);
        self.encode_words(src.words(), dst.words_mut())
            .map_err(|e| MetadataError::FillValueTransform {
                codec: self.name(),
                reason: match e {
                    CodecError::Element(e) => format!("{} (value {})", e.rule, e.value),
                    other => other.to_string(),
                },
            })?;
        Ok(dst.get())
    }
    /// The codec's metadata object.
    fn to_metadata(&self) -> Value;
    /// What this stage offers a chain's fused loop in `dir` (see [`Fusion`]); `None` by
    /// default.
    #[doc(hidden)]
    fn fusion(&self, dir: Direction) -> Fusion<'_> {
        let _ = dir;
        Fusion::None
    }
}

/// One element of a run-time data type held in its storage words: a [`ElementWords`] (a fill
/// value) laid out as the one-element slice `encode_words` takes, so that the fill value
/// goes through the same code as the data.
pub(crate) struct ScalarBuf {
    buf: crate::number::storage::WordBuf,
}

impl ScalarBuf {
    pub(crate) fn new(id: DTypeId) -> Self {
        ScalarBuf {
            buf: crate::number::storage::WordBuf::zeroed(id.word_bits(), id.words_per_element()),
        }
    }
    pub(crate) fn set(&mut self, x: ElementWords) {
        let mut w = self.buf.as_words_mut();
        for (i, v) in x.iter().enumerate().take(w.len()) {
            w.set(i, *v);
        }
    }
    pub(crate) fn get(&self) -> ElementWords {
        let w = self.buf.as_words();
        [w.get(0).unwrap_or(0), w.get(1).unwrap_or(0)]
    }
    pub(crate) fn words(&self) -> Words<'_> {
        self.buf.as_words()
    }
    pub(crate) fn words_mut(&mut self) -> WordsMut<'_> {
        self.buf.as_words_mut()
    }
}

/// The error for the failing element `f.index` of `src`, words of the run-time type `id`, in
/// a codec writing `target`.
pub(crate) fn element_error_words(
    codec: &'static str,
    direction: Direction,
    (id, target): (DTypeId, DTypeId),
    src: Words<'_>,
    f: SliceFailure,
) -> ElementError {
    let k = id.words_per_element();
    let x = [
        src.get(f.index * k).unwrap_or(0),
        if k > 1 {
            src.get(f.index * k + 1).unwrap_or(0)
        } else {
            0
        },
    ];
    ElementError::new(
        codec,
        direction.name(),
        f.rule,
        f.index,
        json_text(id.value_to_json(x)),
    )
    .writing(target)
}

/// A fill-value JSON as error text: "NaN", "Infinity", "0x…" without JSON string quotes.
pub(crate) fn json_text(v: Value) -> String {
    match v {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Check that a stage got words of the widths and element counts it expects.
pub(crate) fn check_words(
    input: &DataType,
    output: &DataType,
    src: &Words<'_>,
    dst: &WordsMut<'_>,
) -> Result<(), CodecError> {
    let (i, o) = (input.id, output.id);
    let n = src.len() / i.words_per_element();
    if src.bits() != i.word_bits()
        || dst.bits() != o.word_bits()
        || !src.len().is_multiple_of(i.words_per_element())
        || dst.len() != n * o.words_per_element()
    {
        return Err(CodecError::Array(format!(
            "stage reads {i} and writes {o}: given {} words of {} bits and {} words of {} bits",
            src.len(),
            src.bits(),
            dst.len(),
            dst.bits()
        )));
    }
    Ok(())
}
