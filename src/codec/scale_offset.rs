//! `scale_offset`: `out = (in - offset) * scale`, decoded as `out = (in / scale) + offset`.
//!
//! ### Specification
//! - zarr-extensions `codecs/scale_offset/README.md`:
//!   <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset>
//!
//! ### Codec `name` aliases
//! - None: `scale_offset` only (no Zarr v2 filter; numcodecs' `FixedScaleOffset` is
//!   [`numcodecs.fixedscaleoffset`](super::fixed_scale_offset), a different codec).
//!
//! ### Codec `configuration` example
//! ```
//! use serde_json::json;
//! use zquant::{ArrayCodec, ScaleOffset};
//! // {"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}
//! let codec = ScaleOffset::<f64>::from_configuration(Some(&json!({"offset": 5, "scale": 0.1})))?;
//! assert_eq!((codec.offset(), codec.scale()), (5.0, 0.1));
//! assert_eq!(codec.to_metadata()["name"], "scale_offset");
//! # Ok::<(), zquant::MetadataError>(())
//! ```
//!
//! > The encoding and decoding transformations MUST be performed using the arithmetic
//! > semantics of the input array's data type. If any intermediate or final value produced
//! > during encoding or decoding is not representable in that data type, implementations
//! > MUST treat this as an error.
//!
//! Integers: every intermediate is checked (`int8`: `127 - (-1) = 128` fails although
//! `128 * -1` would fit), and decoding needs `in / scale` to divide exactly. Floats: each
//! operation is rounded once to nearest-even in the type; an overflow gives ±Inf where the
//! type has infinities (catalogue `float-overflow-inf`) and fails otherwise, as does a NaN
//! result in a type without NaN. A missing `offset` is the additive identity 0, so decoding
//! `-0.0` gives `+0.0` (catalogue `negzero-identity`); in `float8_e8m0fnu`, which has no
//! zero, a missing offset leaves the value exactly as it is (`x - 0 = x`). `scale: 0` is a metadata error
//! (catalogue `scale-zero`).

mod finite_range;
pub(crate) mod fit;
mod kernels;
pub(crate) mod range;

use serde_json::{Map, Value};

use super::{
    ArrayCodec, Direction, DynStage, SliceFailure, check_words, element_error, element_error_at,
    element_error_words,
};
use crate::convert::{exact_of, round_into, words_of, words_of_mut};
use crate::dtype::arith::{ArithOp, arith};
use crate::dtype::{ArithFault, FillValueError, Real};
use crate::error::{CodecError, ElementError, MetadataError, Rule};
use crate::metadata::DataType;
use crate::number::exact::{Class, Exact};
use crate::number::layout::Format;
use crate::number::layout::IntLayout;
use crate::number::storage::{Word, Words, WordsMut};
use kernels::{
    HardwareFloat, checked_map, checked_map_in_place, hardware_map, hardware_map_in_place,
    small_int_at_level, small_int_in_place,
};

/// The Zarr name.
pub const NAME: &str = "scale_offset";

/// This codec in the registry.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[],
    v2: None,
    // `offset` and `scale` are parsed as values of the data type: nothing is checked
    // before it is known.
    check: |_, _| Ok(()),
    bind: |_, dt, config| Ok(Box::new(ScaleOffsetStage::new(dt, config)?)),
};

fn fault_rule(f: ArithFault) -> Rule {
    match f {
        ArithFault::InexactDivision => Rule::InexactDivision,
        _ => Rule::NotRepresentable,
    }
}

fn config_field(reason: String) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field: "configuration",
        reason,
    }
}

/// Parse a `configuration` object: `(offset, scale, (offset given, scale given))` as codes
/// of `format`, absent values being 0 and 1.
fn parse_config(
    config: Option<&Value>,
    format: Format,
    parse: &dyn Fn(&Value) -> Result<u64, FillValueError>,
) -> Result<(u64, u64, (bool, bool)), MetadataError> {
    let zero = round_into(format, Exact::ZERO, Default::default()).0;
    let one = round_into(format, Exact::finite(false, 1, 0), Default::default()).0;
    let Some(config) = config else {
        return Ok((zero, one, (false, false)));
    };
    let Value::Object(map) = config else {
        return Err(config_field(format!("must be an object, got {config}")));
    };
    const KEYS: &[&str] = &["offset", "scale"];
    if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(config_field(crate::error::unknown_key(k, KEYS)));
    }
    let scalar = |field: &'static str, default: u64| match map.get(field) {
        None => Ok((default, false)),
        Some(v) => parse(v)
            .map(|x| (x, true))
            .map_err(|source| MetadataError::Scalar {
                codec: NAME,
                field,
                source,
            }),
    };
    let (offset, eo) = scalar("offset", zero)?;
    let (scale, es) = scalar("scale", one)?;
    Ok((offset, scale, (eo, es)))
}

/// `scale_offset` on one format, untyped: what the typed [`ScaleOffset`] and the run-time
/// [`ScaleOffsetStage`] both run. Its kernel is picked per call from the format (a
/// loop-invariant choice): the hardware operations for `f32`/`f64`, a small-integer kernel
/// for integers of at most 16 bits, and the type's own checked arithmetic elsewhere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleOffsetCore {
    format: Format,
    offset: u64,
    scale: u64,
    /// The offset is missing and the type has no zero (`float8_e8m0fnu`): the additive
    /// identity is not a value of the type, so the subtraction and addition are skipped
    /// (exactly `x - 0`).
    no_offset: bool,
}

impl ScaleOffsetCore {
    /// `offset` and `scale` as codes of `format`; `offset_given` says whether the offset
    /// was configured (a missing one is the additive identity).
    ///
    /// # Errors
    /// [`MetadataError::Field`] when `scale` is zero (or -0).
    pub fn new(
        format: Format,
        offset: u64,
        scale: u64,
        offset_given: bool,
    ) -> Result<Self, MetadataError> {
        if exact_of(format, scale).class == Class::Zero {
            return Err(MetadataError::Field {
                codec: NAME,
                field: "scale",
                reason: "scale must be non-zero".into(),
            });
        }
        let no_zero = round_into(format, Exact::ZERO, Default::default())
            .1
            .is_error();
        Ok(ScaleOffsetCore {
            format,
            offset: offset & format.mask(),
            scale: scale & format.mask(),
            no_offset: !offset_given && no_zero,
        })
    }

    #[inline]
    fn encode_one(&self, x: u64) -> Result<u64, Rule> {
        let d = if self.no_offset {
            Ok(x)
        } else {
            arith(self.format, x, self.offset, ArithOp::Sub)
        };
        d.and_then(|d| arith(self.format, d, self.scale, ArithOp::Mul))
            .map_err(fault_rule)
    }

    #[inline]
    fn decode_one(&self, x: u64) -> Result<u64, Rule> {
        arith(self.format, x, self.scale, ArithOp::Div)
            .and_then(|d| {
                if self.no_offset {
                    Ok(d)
                } else {
                    arith(self.format, d, self.offset, ArithOp::Add)
                }
            })
            .map_err(fault_rule)
    }

    /// Encode `src` into `dst` (same width, the shorter length).
    ///
    /// # Errors
    /// The first failing element; words of different widths fail at element 0.
    pub fn encode(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), SliceFailure> {
        self.dispatch(src, dst, Direction::Encode)
    }

    /// Decode `src` into `dst` (same width, the shorter length).
    ///
    /// # Errors
    /// The first failing element; words of different widths fail at element 0.
    pub fn decode(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), SliceFailure> {
        self.dispatch(src, dst, Direction::Decode)
    }

    /// Encode in place.
    ///
    /// # Errors
    /// The first failing element (elements before it are encoded, it and the rest not).
    pub fn encode_in_place(&self, data: WordsMut<'_>) -> Result<(), SliceFailure> {
        self.dispatch_in_place(data, Direction::Encode)
    }

    /// Decode in place.
    ///
    /// # Errors
    /// The first failing element (elements before it are decoded, it and the rest not).
    pub fn decode_in_place(&self, data: WordsMut<'_>) -> Result<(), SliceFailure> {
        self.dispatch_in_place(data, Direction::Decode)
    }

    fn dispatch(
        &self,
        src: Words<'_>,
        dst: WordsMut<'_>,
        dir: Direction,
    ) -> Result<(), SliceFailure> {
        match (src, dst) {
            (Words::U8(s), WordsMut::U8(d)) => self.run(s, d, dir),
            (Words::U16(s), WordsMut::U16(d)) => self.run(s, d, dir),
            (Words::U32(s), WordsMut::U32(d)) => self.run(s, d, dir),
            (Words::U64(s), WordsMut::U64(d)) => self.run(s, d, dir),
            _ => Err(SliceFailure {
                index: 0,
                rule: Rule::NotRepresentable,
            }),
        }
    }

    fn dispatch_in_place(&self, data: WordsMut<'_>, dir: Direction) -> Result<(), SliceFailure> {
        match data {
            WordsMut::U8(d) => self.in_place(d, dir),
            WordsMut::U16(d) => self.in_place(d, dir),
            WordsMut::U32(d) => self.in_place(d, dir),
            WordsMut::U64(d) => self.in_place(d, dir),
        }
    }

    fn run<W: Word>(&self, src: &[W], dst: &mut [W], dir: Direction) -> Result<(), SliceFailure> {
        let n = src.len().min(dst.len());
        let (src, dst) = (&src[..n], &mut dst[..n]);
        if self.hardware(src, dst, dir) {
            return Ok(());
        }
        // The small-integer and float kernels exist for their words only: the width tests
        // are constants, so the other words do not compile them.
        if const { W::BITS <= 16 }
            && let Some((l, o, s)) = self.small_int::<W>()
            && small_int_at_level(src, dst, l, o, s, dir == Direction::Encode)
        {
            return Ok(());
        }
        let one = |x: u64| match dir {
            Direction::Encode => self.encode_one(x),
            Direction::Decode => self.decode_one(x),
        };
        checked_map(src, dst, one).map_or(Ok(()), |(index, rule)| Err(SliceFailure { index, rule }))
    }

    fn in_place<W: Word>(&self, data: &mut [W], dir: Direction) -> Result<(), SliceFailure> {
        if self.hardware_in_place(data, dir) {
            return Ok(());
        }
        if const { W::BITS <= 16 }
            && let Some((l, o, s)) = self.small_int::<W>()
        {
            // A chunk with a failing element comes back restored, and is redone by the
            // generic loop, which stops at that element.
            return match small_int_in_place(data, l, o, s, dir == Direction::Encode) {
                None => Ok(()),
                Some(chunk) => {
                    let base = chunk.start;
                    self.generic_in_place(&mut data[chunk], dir, base)
                }
            };
        }
        self.generic_in_place(data, dir, 0)
    }

    /// Element by element, stopping at the first failure (`base` is `data`'s index in the
    /// caller's slice).
    fn generic_in_place<W: Word>(
        &self,
        data: &mut [W],
        dir: Direction,
        base: usize,
    ) -> Result<(), SliceFailure> {
        let one = |x: u64| match dir {
            Direction::Encode => self.encode_one(x),
            Direction::Decode => self.decode_one(x),
        };
        checked_map_in_place(data, one).map_err(|(i, rule)| SliceFailure {
            index: base + i,
            rule,
        })
    }

    /// For an integer format of 8 or 16 bits filling its word: its layout, offset and scale
    /// as `i32`.
    #[inline(always)]
    fn small_int<W: Word>(&self) -> Option<(IntLayout, i32, i32)> {
        match self.format {
            // Codes that fill their word (`int8` … `uint16`), so that extending a code to
            // its value is a constant shift.
            Format::Int(l) if W::BITS <= 16 && l.bits == W::BITS && !self.no_offset => {
                let v = |b: u64| crate::number::int::int_value(&l, b) as i32;
                Some((l, v(self.offset), v(self.scale)))
            }
            _ => None,
        }
    }

    /// The fused form of this codec in `dir`: `Affine` for the encode of `f32`/`f64`.
    pub(crate) fn fusion(&self, dir: Direction) -> super::Fusion<'static> {
        match (dir, self.format.hardware_float()) {
            (Direction::Encode, Some(_)) if !self.no_offset => {
                super::Fusion::Affine(crate::convert::Affine {
                    offset: self.offset,
                    scale: self.scale,
                })
            }
            _ => super::Fusion::None,
        }
    }

    /// The `f32`/`f64` kernels; `false` when the format or width is another.
    #[inline(always)]
    fn hardware<W: Word>(&self, src: &[W], dst: &mut [W], dir: Direction) -> bool {
        macro_rules! run {
            ($f:ty) => {{
                let (o, s) = (<$f>::from_code(self.offset), <$f>::from_code(self.scale));
                match dir {
                    // A large output: block by block through L1, streamed out.
                    Direction::Encode => crate::arch::through_l1(src, dst, |src, dst| {
                        crate::arch::vectorized(
                            #[inline(always)]
                            move || hardware_map::<W, $f>(src, dst, |x| (x - o) * s),
                        )
                    }),
                    // Bound by the division's throughput, not by memory: streamed it
                    // measured no faster.
                    Direction::Decode => crate::arch::vectorized(
                        #[inline(always)]
                        move || hardware_map::<W, $f>(src, dst, |x| x / s + o),
                    ),
                }
                true
            }};
        }
        match self.format.hardware_float() {
            Some(true) if const { W::BITS == 64 } => run!(f64),
            Some(false) if const { W::BITS == 32 } => run!(f32),
            _ => false,
        }
    }

    #[inline(always)]
    fn hardware_in_place<W: Word>(&self, data: &mut [W], dir: Direction) -> bool {
        macro_rules! run {
            ($f:ty) => {{
                let (o, s) = (<$f>::from_code(self.offset), <$f>::from_code(self.scale));
                crate::arch::vectorized(
                    #[inline(always)]
                    move || match dir {
                        Direction::Encode => hardware_map_in_place::<W, $f>(data, |x| (x - o) * s),
                        Direction::Decode => hardware_map_in_place::<W, $f>(data, |x| x / s + o),
                    },
                );
                true
            }};
        }
        match self.format.hardware_float() {
            Some(true) if const { W::BITS == 64 } => run!(f64),
            Some(false) if const { W::BITS == 32 } => run!(f32),
            _ => false,
        }
    }
}

/// `scale_offset` on element type `T`: encodes `(x - offset) * scale` and decodes
/// `x / scale + offset`, in `T`'s own arithmetic (a value or intermediate `T` cannot
/// represent is an error, never a wrap).
///
/// ```
/// use zquant::{ArrayCodec, ArrayCodecExt, ScaleOffset};
///
/// let codec = ScaleOffset::new(1000i32, 10)?;
/// let encoded = codec.encode(&ndarray::array![1000, 1003, 998])?;
/// assert_eq!(encoded, ndarray::array![0, 30, -20]);
/// assert_eq!(codec.decode(&encoded)?, ndarray::array![1000, 1003, 998]);
/// assert_eq!(codec.to_metadata()["configuration"], serde_json::json!({"offset": 1000, "scale": 10}));
/// // Integer overflow is an error naming the element, not a silent wrap.
/// assert!(codec.encode(&ndarray::array![i32::MAX]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleOffset<T: Real> {
    offset: T,
    scale: T,
    /// Whether `offset`/`scale` were given (so that metadata round-trips as written).
    explicit: (bool, bool),
    core: ScaleOffsetCore,
}

impl<T: Real> ScaleOffset<T> {
    /// A codec with the given offset and scale.
    ///
    /// # Errors
    /// [`MetadataError::Field`] when `scale` is zero (or -0).
    pub fn new(offset: T, scale: T) -> Result<Self, MetadataError> {
        Self::build(offset.to_bits(), scale.to_bits(), (true, true))
    }

    fn build(offset: u64, scale: u64, explicit: (bool, bool)) -> Result<Self, MetadataError> {
        let core = ScaleOffsetCore::new(T::FORMAT, offset, scale, explicit.0)?;
        Ok(ScaleOffset {
            offset: T::from_bits(offset),
            scale: T::from_bits(scale),
            explicit,
            core,
        })
    }

    /// Parse the `configuration` object (absent = `None`: identity).
    ///
    /// ```
    /// use zquant::ScaleOffset;
    /// let c = ScaleOffset::<f32>::from_configuration(Some(&serde_json::json!({"offset": 0.5})))?;
    /// assert_eq!((c.offset(), c.scale()), (0.5, 1.0));
    /// // A scalar is an encoding of `T`, checked like a fill value.
    /// assert!(ScaleOffset::<u8>::from_configuration(Some(&serde_json::json!({"scale": -1}))).is_err());
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// Unknown keys, scalars that are not valid encodings for `T`, a zero scale.
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let parse = |v: &Value| T::fill_value_from_json(v).map(|x| x.to_bits());
        let (offset, scale, explicit) = parse_config(config, T::FORMAT, &parse)?;
        Self::build(offset, scale, explicit)
    }

    /// The offset.
    pub fn offset(&self) -> T {
        self.offset
    }

    /// The scale.
    pub fn scale(&self) -> T {
        self.scale
    }

    /// Encode a slice in place (for arrays, [`ArrayCodecExt::encode_in_place`]).
    ///
    /// ```
    /// let codec = zquant::ScaleOffset::new(10.0f32, 2.0)?;
    /// let mut data = [10.0f32, 12.5];
    /// codec.encode_slice_in_place(&mut data)?;
    /// assert_eq!(data, [0.0, 5.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// The first failing element (elements before it are already encoded).
    ///
    /// [`ArrayCodecExt::encode_in_place`]: crate::ArrayCodecExt::encode_in_place
    pub fn encode_slice_in_place(&self, data: &mut [T]) -> Result<(), ElementError> {
        self.core
            .encode_in_place(words_of_mut(data))
            .map_err(|f| in_place_error(Direction::Encode, data, f))
    }

    /// Decode a slice in place (for arrays, [`ArrayCodecExt::decode_in_place`]).
    ///
    /// # Errors
    /// The first failing element (elements before it are already decoded).
    ///
    /// [`ArrayCodecExt::decode_in_place`]: crate::ArrayCodecExt::decode_in_place
    pub fn decode_slice_in_place(&self, data: &mut [T]) -> Result<(), ElementError> {
        self.core
            .decode_in_place(words_of_mut(data))
            .map_err(|f| in_place_error(Direction::Decode, data, f))
    }
}

fn in_place_error<T: Real>(dir: Direction, data: &[T], f: SliceFailure) -> ElementError {
    element_error_at(NAME, dir, f.rule, f.index, data.get(f.index).copied()).writing_type::<T>()
}

/// The metadata object of a `scale_offset` with these scalars (JSON already encoded).
fn metadata(offset: Option<Value>, scale: Option<Value>) -> Value {
    let mut config = Map::new();
    if let Some(o) = offset {
        config.insert("offset".into(), o);
    }
    if let Some(s) = scale {
        config.insert("scale".into(), s);
    }
    let mut obj = Map::new();
    obj.insert("name".into(), Value::from(NAME));
    if !config.is_empty() {
        obj.insert("configuration".into(), Value::Object(config));
    }
    Value::Object(obj)
}

impl<T: Real> ArrayCodec for ScaleOffset<T> {
    type In = T;
    type Out = T;

    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        super::same_length(NAME, Direction::Encode, src.len(), dst.len())?;
        self.core
            .encode(words_of(src), words_of_mut(dst))
            .map_err(|f| element_error::<T, T>(NAME, Direction::Encode, src, f))
    }

    fn decode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        super::same_length(NAME, Direction::Decode, src.len(), dst.len())?;
        self.core
            .decode(words_of(src), words_of_mut(dst))
            .map_err(|f| element_error::<T, T>(NAME, Direction::Decode, src, f))
    }

    fn fusion(&self, dir: Direction) -> super::Fusion<'_> {
        self.core.fusion(dir)
    }

    fn to_metadata(&self) -> Value {
        metadata(
            self.explicit.0.then(|| self.offset.fill_value_to_json()),
            self.explicit.1.then(|| self.scale.fill_value_to_json()),
        )
    }
}

/// `scale_offset` bound to a run-time data type: one type for every data type.
#[derive(Debug)]
pub struct ScaleOffsetStage {
    core: ScaleOffsetCore,
    data_type: DataType,
    offset: u64,
    scale: u64,
    explicit: (bool, bool),
}

impl ScaleOffsetStage {
    /// Bind a `configuration` (absent = identity) to the array data type `dt`.
    ///
    /// # Errors
    /// A data type that is not real, unknown keys, scalars that are not valid encodings
    /// for the type, a zero scale.
    pub fn new(dt: &DataType, config: Option<&Value>) -> Result<Self, MetadataError> {
        let Some(format) = dt.id.format() else {
            return Err(MetadataError::UnsupportedDataType {
                codec: NAME,
                dtype: dt.id.name().into(),
                reason: "scale_offset is only defined for integer and floating-point types",
            });
        };
        let id = dt.id;
        let parse = move |v: &Value| id.value_from_json(v).map(|x| x[0]);
        let (offset, scale, explicit) = parse_config(config, format, &parse)?;
        Ok(ScaleOffsetStage {
            core: ScaleOffsetCore::new(format, offset, scale, explicit.0)?,
            data_type: dt.clone(),
            offset,
            scale,
            explicit,
        })
    }
}

impl DynStage for ScaleOffsetStage {
    fn name(&self) -> &'static str {
        NAME
    }
    fn input(&self) -> &DataType {
        &self.data_type
    }
    fn output(&self) -> &DataType {
        &self.data_type
    }
    fn encode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.data_type, &self.data_type, &src, &dst)?;
        let id = self.data_type.id;
        self.core
            .encode(src, dst)
            .map_err(|f| element_error_words(NAME, Direction::Encode, (id, id), src, f).into())
    }
    fn decode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.data_type, &self.data_type, &src, &dst)?;
        let id = self.data_type.id;
        self.core
            .decode(src, dst)
            .map_err(|f| element_error_words(NAME, Direction::Decode, (id, id), src, f).into())
    }
    fn to_metadata(&self) -> Value {
        let id = self.data_type.id;
        metadata(
            self.explicit.0.then(|| id.value_to_json([self.offset, 0])),
            self.explicit.1.then(|| id.value_to_json([self.scale, 0])),
        )
    }
    fn fusion(&self, dir: Direction) -> super::Fusion<'_> {
        self.core.fusion(dir)
    }
}
