//! `bitround` (alias `numcodecs.bitround`): drop low mantissa bits, rounding half to even.
//!
//! ### Specification
//! - zarr-extensions `codecs/bitround/README.md`:
//!   <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/bitround>
//! - zarr-extensions `codecs/numcodecs.bitround/README.md` (the alias):
//!   <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/numcodecs.bitround>
//!
//! ### Codec `name` aliases
//! - Zarr v3: `bitround` and `numcodecs.bitround` (the same codec; `to_metadata` writes the
//!   name it was read by). Zarr v2: the numcodecs filter `{"id": "bitround"}`, read as
//!   `numcodecs.bitround`.
//!
//! ### Codec `configuration` example
//! ```
//! use serde_json::json;
//! use zquant::{ArrayCodec, BitRound};
//! // {"name": "bitround", "configuration": {"keepbits": 10}}
//! let codec = BitRound::<f32>::from_configuration(Some(&json!({"keepbits": 10})), false)?;
//! assert_eq!(codec.keepbits(), 10);
//! assert_eq!(codec.to_metadata()["name"], "bitround");
//! # Ok::<(), zquant::MetadataError>(())
//! ```
//!
//! Floats use numcodecs' bit formula (an integer add on the code: the carry may reach the
//! exponent, so the largest finite value can become Inf), except that a NaN is left exactly
//! as it is. Integers round the *magnitude* from its most significant set bit and keep the
//! sign, taking the truncated value when rounding up would leave the type's range (catalogue
//! `int-bitround-signed`; it reproduces the spec's `sample_data` byte for byte). Complex
//! types round each component; `numpy.datetime64`/`numpy.timedelta64` round as int64 (NaT,
//! `i64::MIN`, stays NaT). Decoding is the identity. For floats `keepbits` is at most the
//! mantissa width (`keepbits-too-large`). Its minimum depends on the name (catalogue
//! `keepbits-zero`): `bitround`'s README says "Must be at least 1"; `numcodecs.bitround` and
//! the v2 filter are defined by numcodecs, whose `BitRound` takes `keepbits >= 0` (a float
//! rounded to a power of two, the mantissa's 0 bits kept). Integers keep at least 1 bit
//! under either name (numcodecs' `BitRound` has no integers).

mod kernels;

use serde_json::{Map, Value};

use super::{ArrayCodec, Direction, DynStage, check_words};
use crate::convert::{words_of, words_of_mut};
use crate::dtype::{DType, Kind};
use crate::error::{CodecError, ElementError, MetadataError};
use crate::metadata::DataType;
use crate::number::layout::FloatLayout;
use crate::number::layout::IntLayout;
use crate::number::storage::{Word, Words, WordsMut};
use kernels::{float_copy_at_level, float_in_place_at_level, int_copy, int_in_place};

/// The Zarr name.
pub const NAME: &str = "bitround";
/// The deprecated alias.
pub const ALIAS: &str = "numcodecs.bitround";

/// This codec in the registry. Named by its alias, it writes the alias back.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[ALIAS],
    // numcodecs' `BitRound` filter: its v2 id is the v3 name, read as the numcodecs alias.
    v2: Some(super::registry::V2Filter {
        id: NAME,
        v3_name: ALIAS,
        type_keys: &[],
    }),
    check: |name, config| parse_keepbits(config, name).map(drop),
    bind: |name, dt, config| {
        // Configuration errors are reported before data type errors.
        parse_keepbits(config, name)?;
        Ok(Box::new(BitRoundStage::new(dt, config, name == ALIAS)?))
    },
};

/// The least `keepbits` under the name `name` (`keepbits-zero` in docs/spec-readings.md).
fn min_keepbits(name: &str) -> u64 {
    if name == ALIAS { 0 } else { 1 }
}

/// `keepbits: 0` under the name `bitround`.
fn keepbits_zero() -> MetadataError {
    field(
        "must be an integer >= 1, got 0 (bitround's README: \"Must be at least 1\"; \
         numcodecs' BitRound, the codec numcodecs.bitround, takes 0)",
    )
}

/// The data types the spec lists for bitround: "float16, float32, float64, bfloat16,
/// complex_float16/32/64, complex_bfloat16, complex64, complex128, int8…int64, uint8…uint64,
/// numpy.timedelta64, numpy.datetime64".
pub fn supports(kind: Kind) -> bool {
    match kind {
        Kind::Int(l) => l.bits >= 8,
        Kind::Float(l) | Kind::Complex(l) => l.mantissa_bits >= 7 && l.signed && l.inf,
        Kind::DateTime | Kind::TimeDelta => true,
    }
}

/// `bitround` on one element kind, untyped: what the typed [`BitRound`] and the run-time
/// [`BitRoundStage`] both run, over storage words (a complex element is two float words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRoundCore {
    target: Target,
    keepbits: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Float(FloatLayout),
    Int(IntLayout),
}

impl BitRoundCore {
    /// `keepbits` on elements of `kind` (`keepbits` 0 is for floats: the minimum a codec
    /// name allows is checked where the name is known).
    ///
    /// # Errors
    /// `keepbits` above a float's mantissa width, 0 for an integer, or a kind bitround does
    /// not support; `name` is the data type's, for the message.
    pub fn new(kind: Kind, keepbits: u64, name: &str) -> Result<Self, MetadataError> {
        if !supports(kind) {
            return Err(MetadataError::UnsupportedDataType {
                codec: NAME,
                dtype: name.into(),
                reason: "bitround supports float16/32/64, bfloat16, their complex types, int8..uint64 and numpy datetime/timedelta",
            });
        }
        let target = match kind {
            Kind::Float(l) | Kind::Complex(l) => {
                if keepbits > l.mantissa_bits as u64 {
                    return Err(field(format!(
                        "keepbits {keepbits} > mantissa bits {} of {name}",
                        l.mantissa_bits,
                    )));
                }
                Target::Float(l)
            }
            _ if keepbits == 0 => {
                return Err(field(format!(
                    "must be at least 1 for {name}: an integer keeps at least its most \
                     significant bit (0 is numcodecs.bitround's for floats only)"
                )));
            }
            Kind::Int(l) => Target::Int(l),
            Kind::DateTime | Kind::TimeDelta => Target::Int(IntLayout {
                bits: 64,
                signed: true,
            }),
        };
        Ok(BitRoundCore {
            target,
            keepbits: keepbits.min(64) as u32,
        })
    }

    /// Round `src` into `dst` (same width, the shorter length); different widths copy
    /// nothing.
    pub fn encode(&self, src: Words<'_>, dst: WordsMut<'_>) {
        match (src, dst) {
            (Words::U8(s), WordsMut::U8(d)) => self.run(s, d),
            (Words::U16(s), WordsMut::U16(d)) => self.run(s, d),
            (Words::U32(s), WordsMut::U32(d)) => self.run(s, d),
            (Words::U64(s), WordsMut::U64(d)) => self.run(s, d),
            _ => {}
        }
    }

    /// Round in place.
    pub fn encode_in_place(&self, data: WordsMut<'_>) {
        match data {
            WordsMut::U8(d) => self.run_in_place(d),
            WordsMut::U16(d) => self.run_in_place(d),
            WordsMut::U32(d) => self.run_in_place(d),
            WordsMut::U64(d) => self.run_in_place(d),
        }
    }

    fn run<W: Word>(&self, src: &[W], dst: &mut [W]) {
        let k = self.keepbits;
        match self.target {
            Target::Float(l) => {
                if k >= l.mantissa_bits {
                    let n = src.len().min(dst.len());
                    dst[..n].copy_from_slice(&src[..n]);
                    return;
                }
                // A large output of 32-bit words: streamed from the registers; other
                // widths block by block through L1, streamed out.
                if let (Some(c), Some(s), Some(d)) = (
                    crate::arch::BitRound32::new(&l, k),
                    u32::of(W::words(src)),
                    u32::of_mut(W::words_mut(dst)),
                ) && crate::arch::bitround_u32_streamed(c, s, d)
                {
                    return;
                }
                crate::arch::through_l1(src, dst, |s, d| float_copy_at_level(s, d, l, k));
            }
            Target::Int(l) => int_copy(src, dst, l, k),
        }
    }

    fn run_in_place<W: Word>(&self, data: &mut [W]) {
        let k = self.keepbits;
        match self.target {
            Target::Float(l) => {
                if k >= l.mantissa_bits {
                    return;
                }
                float_in_place_at_level(data, l, k);
            }
            Target::Int(l) => int_in_place(data, l, k),
        }
    }
}

/// `bitround` on element type `T`: keeps `keepbits` mantissa bits, rounding the rest half to
/// even, so that a compressor after it finds trailing zeros. Decoding is the identity.
///
/// ```
/// use zquant::{ArrayCodec, ArrayCodecExt, BitRound};
///
/// let codec = BitRound::<f64>::new(2)?;
/// assert_eq!(codec.encode(&ndarray::array![1.3, 1.4, -7.9])?, ndarray::array![1.25, 1.5, -8.0]);
/// assert_eq!(codec.to_metadata(), serde_json::json!({"name": "bitround", "configuration": {"keepbits": 2}}));
/// // keepbits beyond the type's mantissa is a metadata error.
/// assert!(BitRound::<f32>::new(24).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRound<T: DType> {
    core: BitRoundCore,
    /// `keepbits` as configured (an integer's may exceed 64), for `to_metadata`.
    configured: u64,
    alias: bool,
    _t: std::marker::PhantomData<T>,
}

fn field(reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field: "keepbits",
        reason: reason.into(),
    }
}

/// Parse and check `keepbits` from a `configuration` object (data-type independent part),
/// for the codec named `name` (`bitround` or `numcodecs.bitround`).
///
/// # Errors
/// A missing or non-object configuration, unknown keys, a keepbits that is not an integer
/// of at least 1 (`bitround`) or 0 (`numcodecs.bitround`).
pub fn parse_keepbits(config: Option<&Value>, name: &str) -> Result<u64, MetadataError> {
    let Some(Value::Object(map)) = config else {
        return Err(MetadataError::Field {
            codec: NAME,
            field: "configuration",
            reason: "bitround requires a configuration object with `keepbits`".into(),
        });
    };
    if let Some(k) = map.keys().find(|k| *k != "keepbits") {
        return Err(MetadataError::Field {
            codec: NAME,
            field: "configuration",
            reason: crate::error::unknown_key(k, &["keepbits"]),
        });
    }
    let v = map.get("keepbits").ok_or_else(|| field("missing"))?;
    let min = min_keepbits(name);
    match v.as_u64() {
        Some(k) if k >= min && !v.to_string().contains(['.', 'e', 'E']) => Ok(k),
        Some(0) => Err(keepbits_zero()),
        _ => Err(field(format!("must be an integer >= {min}, got {v}"))),
    }
}

impl<T: DType> BitRound<T> {
    /// A codec keeping `keepbits` bits, named `bitround`.
    ///
    /// # Errors
    /// `keepbits` of 0, above a float's mantissa width, or a data type bitround does not
    /// support.
    pub fn new(keepbits: u64) -> Result<Self, MetadataError> {
        Self::named(keepbits, false)
    }

    /// A codec keeping `keepbits` bits, named `numcodecs.bitround`, numcodecs' rule:
    /// `keepbits` 0 is allowed for floats (each value rounds to a power of two).
    ///
    /// ```
    /// use zquant::{ArrayCodecExt, BitRound};
    /// let codec = BitRound::<f32>::new_numcodecs(0)?;
    /// // 3 = 1.5 * 2^1 is a tie: to the even exponent, 2 (as numcodecs).
    /// assert_eq!(codec.encode(&ndarray::array![1.4f32, 1.6, -3.0])?, ndarray::array![1.0f32, 2.0, -2.0]);
    /// assert!(BitRound::<f32>::new(0).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`BitRound::new`], except that 0 is refused only for integers.
    pub fn new_numcodecs(keepbits: u64) -> Result<Self, MetadataError> {
        Self::named(keepbits, true)
    }

    fn named(keepbits: u64, alias: bool) -> Result<Self, MetadataError> {
        if keepbits == 0 && !alias {
            return Err(keepbits_zero());
        }
        Ok(BitRound {
            core: BitRoundCore::new(T::KIND, keepbits, T::NAME)?,
            configured: keepbits,
            alias,
            _t: std::marker::PhantomData,
        })
    }

    /// Parse a `configuration` object; `alias` selects the legacy name
    /// `numcodecs.bitround` for the metadata it writes.
    ///
    /// ```
    /// use zquant::{ArrayCodec, BitRound};
    /// let c = BitRound::<f64>::from_configuration(Some(&serde_json::json!({"keepbits": 12})), true)?;
    /// assert_eq!((c.keepbits(), c.to_metadata()["name"].as_str()), (12, Some("numcodecs.bitround")));
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// See the `keepbits` rules and [`BitRound::new`].
    pub fn from_configuration(config: Option<&Value>, alias: bool) -> Result<Self, MetadataError> {
        let name = if alias { ALIAS } else { NAME };
        Self::named(parse_keepbits(config, name)?, alias)
    }

    /// The number of bits kept.
    pub fn keepbits(&self) -> u32 {
        self.core.keepbits
    }

    /// Round a slice in place (for arrays, [`ArrayCodecExt::encode_in_place`]). Rounding
    /// never fails; the `Result` matches the other codecs' slice methods.
    ///
    /// ```
    /// let codec = zquant::BitRound::<f32>::new(2)?;
    /// let mut data = [1.3f32, -7.9];
    /// codec.encode_slice_in_place(&mut data)?;
    /// assert_eq!(data, [1.25, -8.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// None.
    ///
    /// [`ArrayCodecExt::encode_in_place`]: crate::ArrayCodecExt::encode_in_place
    pub fn encode_slice_in_place(&self, data: &mut [T]) -> Result<(), ElementError> {
        self.core.encode_in_place(words_of_mut(data));
        Ok(())
    }

    /// Decode a slice in place: `bitround` decodes as the identity, so nothing changes.
    ///
    /// # Errors
    /// None.
    pub fn decode_slice_in_place(&self, _data: &mut [T]) -> Result<(), ElementError> {
        Ok(())
    }
}

/// The metadata object.
fn metadata(name: &str, keepbits: u64) -> Value {
    let mut config = Map::new();
    config.insert("keepbits".into(), Value::from(keepbits));
    let mut obj = Map::new();
    obj.insert("name".into(), Value::from(name));
    obj.insert("configuration".into(), Value::Object(config));
    Value::Object(obj)
}

impl<T: DType> ArrayCodec for BitRound<T> {
    type In = T;
    type Out = T;

    fn name(&self) -> &'static str {
        if self.alias { ALIAS } else { NAME }
    }

    fn encode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        super::same_length(self.name(), super::Direction::Encode, src.len(), dst.len())?;
        self.core.encode(words_of(src), words_of_mut(dst));
        Ok(())
    }

    fn decode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        super::same_length(self.name(), super::Direction::Decode, src.len(), dst.len())?;
        let n = src.len().min(dst.len());
        dst[..n].copy_from_slice(&src[..n]);
        Ok(())
    }

    fn to_metadata(&self) -> Value {
        metadata(self.name(), self.configured)
    }
}

/// `bitround` bound to a run-time data type: one type for every data type.
#[derive(Debug)]
pub struct BitRoundStage {
    core: BitRoundCore,
    data_type: DataType,
    configured: u64,
    alias: bool,
}

impl BitRoundStage {
    /// Bind a `configuration` to the array data type `dt`; `alias` for the
    /// `numcodecs.bitround` name.
    ///
    /// # Errors
    /// See [`parse_keepbits`] and [`BitRound::new`].
    pub fn new(dt: &DataType, config: Option<&Value>, alias: bool) -> Result<Self, MetadataError> {
        let keepbits = parse_keepbits(config, if alias { ALIAS } else { NAME })?;
        Ok(BitRoundStage {
            core: BitRoundCore::new(dt.id.kind(), keepbits, dt.id.name())?,
            data_type: dt.clone(),
            configured: keepbits,
            alias,
        })
    }
}

impl DynStage for BitRoundStage {
    fn name(&self) -> &'static str {
        if self.alias { ALIAS } else { NAME }
    }
    fn input(&self) -> &DataType {
        &self.data_type
    }
    fn output(&self) -> &DataType {
        &self.data_type
    }
    fn encode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.data_type, &self.data_type, &src, &dst)?;
        self.core.encode(src, dst);
        Ok(())
    }
    fn decode_words(&self, src: Words<'_>, mut dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.data_type, &self.data_type, &src, &dst)?;
        dst.copy_from(src);
        Ok(())
    }
    fn in_place(&self, dir: Direction, data: WordsMut<'_>) -> Option<Result<(), CodecError>> {
        if data.bits() != self.data_type.id.word_bits() {
            return None;
        }
        if dir == Direction::Encode {
            self.core.encode_in_place(data);
        }
        // Decoding is the identity.
        Some(Ok(()))
    }
    fn has_in_place(&self) -> bool {
        true
    }
    fn decode_is_identity(&self) -> bool {
        true
    }
    fn to_metadata(&self) -> Value {
        metadata(self.name(), self.configured)
    }
}

/// The element rounding, the reference of `arch`'s streamed kernel in its tests.
#[cfg(test)]
pub(crate) use kernels::bitround_word;
