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

use serde_json::{Map, Value};

use super::{
    ArrayCodec, Direction, DynStage, SliceFailure, check_words, element_error, element_error_at,
    element_error_words,
};
use crate::convert::{Class, Exact, exact_of, round_into, words_of, words_of_mut};
use crate::dtype::derive::{ArithOp, arith};
use crate::dtype::layout::IntLayout;
use crate::dtype::{ArithFault, FillValueError, Format, Real, Word, Words, WordsMut};
use crate::error::{CodecError, ElementError, MetadataError, Rule};
use crate::metadata::DataType;

/// The Zarr name.
pub const NAME: &str = "scale_offset";

/// This codec in the registry.
pub(crate) const ENTRY: super::registry::CodecEntry = super::registry::CodecEntry {
    name: NAME,
    aliases: &[],
    v2: None,
    // `offset` and `scale` are parsed as values of the data type: nothing is checked
    // before it is known.
    check: |_| Ok(()),
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
        if let Some((l, o, s)) = self.small_int::<W>() {
            if crate::arch::vectorized(
                #[inline(always)]
                || small_int_map(src, dst, l, o, s, dir),
            ) {
                return Ok(());
            }
        }
        let one = |x: u64| match dir {
            Direction::Encode => self.encode_one(x),
            Direction::Decode => self.decode_one(x),
        };
        let mut first: Option<SliceFailure> = None;
        for (i, (s, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
            match one(s.to_u64()) {
                Ok(v) => *d = W::from_u64(v),
                Err(rule) => {
                    *d = *s;
                    if first.is_none() {
                        first = Some(SliceFailure { index: i, rule });
                    }
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn in_place<W: Word>(&self, data: &mut [W], dir: Direction) -> Result<(), SliceFailure> {
        if self.hardware_in_place(data, dir) {
            return Ok(());
        }
        if let Some((l, o, s)) = self.small_int::<W>() {
            // Chunk by chunk from a copy; a chunk with a failing element is restored and
            // redone by the generic loop, which stops at that element.
            let mut tmp = [W::default(); SMALL_INT_CHUNK];
            for (k, chunk) in data.chunks_mut(SMALL_INT_CHUNK).enumerate() {
                let t = &mut tmp[..chunk.len()];
                t.copy_from_slice(chunk);
                if !crate::arch::vectorized(
                    #[inline(always)]
                    || small_int_map(t, chunk, l, o, s, dir),
                ) {
                    chunk.copy_from_slice(t);
                    return self.generic_in_place(chunk, dir, k * SMALL_INT_CHUNK);
                }
            }
            return Ok(());
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
        for (i, x) in data.iter_mut().enumerate() {
            let r = match dir {
                Direction::Encode => self.encode_one(x.to_u64()),
                Direction::Decode => self.decode_one(x.to_u64()),
            };
            match r {
                Ok(v) => *x = W::from_u64(v),
                Err(rule) => {
                    return Err(SliceFailure {
                        index: base + i,
                        rule,
                    });
                }
            }
        }
        Ok(())
    }

    /// For an integer format of 8 or 16 bits filling its word: its layout, offset and scale
    /// as `i32`.
    #[inline(always)]
    fn small_int<W: Word>(&self) -> Option<(IntLayout, i32, i32)> {
        match self.format {
            // Codes that fill their word (`int8` … `uint16`), so that extending a code to
            // its value is a constant shift.
            Format::Int(l) if W::BITS <= 16 && l.bits == W::BITS && !self.no_offset => {
                let v = |b: u64| crate::convert::int::int_value(&l, b) as i32;
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
                crate::arch::vectorized(
                    #[inline(always)]
                    move || match dir {
                        Direction::Encode => hardware_map::<W, $f>(src, dst, |x| (x - o) * s),
                        Direction::Decode => hardware_map::<W, $f>(src, dst, |x| x / s + o),
                    },
                );
                true
            }};
        }
        match self.format.hardware_float() {
            Some(true) if W::BITS == 64 => run!(f64),
            Some(false) if W::BITS == 32 => run!(f32),
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
            Some(true) if W::BITS == 64 => run!(f64),
            Some(false) if W::BITS == 32 => run!(f32),
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

/// Chunk length of the in-place small-integer kernel.
const SMALL_INT_CHUNK: usize = 1024;

/// `scale_offset` on integers of at most 16 bits, in `i32` or 16-bit lanes, where nothing can
/// overflow the arithmetic used (`|x|, |offset|, |scale| < 2^16`):
///
/// - encode: `d = x - offset` in `i32`. The product `d * scale` is in the type's range
///   exactly when `d` is in `[dlo, dhi]` (the range divided by the scale, computed once), so
///   the check is on `d`, and the product is then exact in `i32` (`|d * scale| < 2^16`).
/// - decode: `q = x / scale` by multiplication with the scale's inverse modulo 2^16
///   (after shifting out its factors of two), accepted when `q * scale == x` and `q` is in
///   the range of quotients (see the loop). Then `q + offset`.
///
/// Each intermediate is range-checked as the type's own arithmetic requires. The encode is
/// 8-lane AVX2 (`vpmulld`), the decode 16-lane (`vpmullw`). Returns whether every
/// element succeeded (otherwise `dst` holds garbage).
#[inline(always)]
fn small_int_map<W: Word>(
    src: &[W],
    dst: &mut [W],
    l: IntLayout,
    o: i32,
    s: i32,
    dir: Direction,
) -> bool {
    if l.signed {
        small_int_map_in::<W, true>(src, dst, l, o, s, dir)
    } else {
        small_int_map_in::<W, false>(src, dst, l, o, s, dir)
    }
}

#[inline(always)]
fn small_int_map_in<W: Word, const SIGNED: bool>(
    src: &[W],
    dst: &mut [W],
    l: IntLayout,
    o: i32,
    s: i32,
    dir: Direction,
) -> bool {
    // The code fills the word (see `small_int`), so the range is a constant too.
    debug_assert!(l.bits == W::BITS && l.signed == SIGNED);
    let bits = W::BITS.min(16);
    let (lo, hi) = if SIGNED {
        (-(1i32 << (bits - 1)), (1i32 << (bits - 1)) - 1)
    } else {
        (0, (1i32 << bits) - 1)
    };
    // `lo <= x <= hi` as one unsigned comparison.
    let in_range = |x: i32| (x.wrapping_sub(lo) as u32) <= (hi - lo) as u32;
    // The code fills the word (see `small_int`): a constant shift extends it.
    let sh = 32 - W::BITS.min(32);
    let value = |w: W| {
        let up = (w.to_u64() as u32) << sh;
        if SIGNED {
            (up as i32) >> sh
        } else {
            (up >> sh) as i32
        }
    };
    let mut ok = true;
    match dir {
        Direction::Encode => {
            let (dlo, dhi) = factor_range(lo, hi, s);
            if dlo > dhi {
                return src.is_empty() || dst.is_empty();
            }
            let span = (dhi - dlo) as u32;
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                let d = value(*x).wrapping_sub(o);
                ok &= (d.wrapping_sub(dlo) as u32) <= span;
                *y = W::from_u64(u64::from(d.wrapping_mul(s) as u32));
            }
        }
        Direction::Decode => {
            if s == 0 {
                return src.is_empty() || dst.is_empty();
            }
            // The quotient by multiplication, in 16-bit lanes (16 per AVX2 vector; no
            // conversion to `f32` and back). `s = ±2^t * d` with `d` odd, which has an
            // inverse `inv` modulo 2^16. For `v` a multiple of `s`, `q = (v >> t) * ±inv`
            // modulo 2^16 is `v / s` exactly. For any `v`, `q` is accepted only when
            // (1) `q * s == v` modulo 2^16 and (2) `q` is in `[qlo, qhi]`, the integers
            // whose product with `s` is in the type's range (`factor_range`): then `q * s`
            // and `v` are both in that range, which spans less than 2^16, and congruent,
            // so equal — `v / s` is exact and is `q`. A multiple of `s` passes both,
            // except `min / -1`, whose quotient is out of the range (2).
            let t = s.unsigned_abs().trailing_zeros();
            let inv = inverse_mod_2_16((s.unsigned_abs() >> t) as u16);
            let c = if s < 0 { inv.wrapping_neg() } else { inv };
            let (qlo, qhi) = factor_range(lo, hi, s);
            let (qlo16, qspan) = (qlo as u16, (qhi - qlo) as u16);
            let (o16, s16) = (o as u16, s as u16);
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                let v = value(*x) as u16;
                let shifted = if SIGNED {
                    ((v as i16) >> t) as u16
                } else {
                    v >> t
                };
                let q = shifted.wrapping_mul(c);
                let exact = q.wrapping_mul(s16) == v && q.wrapping_sub(qlo16) <= qspan;
                // `q + o` in range: for 16-bit types, no signed (unsigned) overflow, i.e.
                // the wrapping sum equals the saturating one; 8-bit types (in 16-bit
                // lanes, where the sum cannot overflow) compare with their bounds.
                let (r, fits) = if SIGNED {
                    let (q, o) = (q as i16, o16 as i16);
                    let r = q.wrapping_add(o);
                    let fits = if W::BITS < 16 {
                        in_range(i32::from(r))
                    } else {
                        r == q.saturating_add(o)
                    };
                    (r as u16, fits)
                } else {
                    let r = q.wrapping_add(o16);
                    let fits = if W::BITS < 16 {
                        in_range(i32::from(r))
                    } else {
                        r == q.saturating_add(o16)
                    };
                    (r, fits)
                };
                ok &= exact & fits;
                *y = W::from_u64(u64::from(r));
            }
        }
    }
    ok
}

/// The inverse of an odd `d` modulo 2^16: Newton's iteration `x <- x * (2 - d * x)`
/// doubles the number of correct low bits, and `x = d` is right in 3 (`d * d = 1` modulo 8
/// for every odd `d`): 3, 6, 12, 24 bits.
fn inverse_mod_2_16(d: u16) -> u16 {
    let mut x = d;
    for _ in 0..3 {
        x = x.wrapping_mul(2u16.wrapping_sub(d.wrapping_mul(x)));
    }
    debug_assert_eq!(d.wrapping_mul(x), 1);
    x
}

/// The `d` in `[lo, hi]` whose product `d * s` is also in `[lo, hi]`, as an interval (empty
/// when `lo > hi`). Exact integer division, rounded inwards.
fn factor_range(lo: i32, hi: i32, s: i32) -> (i32, i32) {
    let (lo, hi, s) = (i64::from(lo), i64::from(hi), i64::from(s));
    let floor_div = |a: i64, b: i64| {
        let q = a / b;
        if a % b != 0 && ((a < 0) != (b < 0)) {
            q - 1
        } else {
            q
        }
    };
    let ceil_div = |a: i64, b: i64| -floor_div(-a, b);
    let (a, b) = match s.cmp(&0) {
        std::cmp::Ordering::Equal => (lo, hi),
        std::cmp::Ordering::Greater => (ceil_div(lo, s), floor_div(hi, s)),
        std::cmp::Ordering::Less => (ceil_div(hi, s), floor_div(lo, s)),
    };
    // Both bounds are within [lo, hi] after the intersection, so they fit `i32`.
    (a.max(lo) as i32, b.min(hi) as i32)
}

/// `f32` and `f64`: the hardware operations *are* the type's own arithmetic (IEEE 754,
/// each operation correctly rounded once, overflow to ±Inf as the catalogue's
/// `float-overflow-inf` asks), so no element can fail. Only a NaN result differs from what
/// the hardware leaves: the generic path canonicalizes it, and so do these kernels.
trait HardwareFloat:
    Copy
    + PartialEq
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Add<Output = Self>
{
    const CANONICAL_NAN: Self;
    fn from_code(bits: u64) -> Self;
    fn code(self) -> u64;
}

impl HardwareFloat for f64 {
    const CANONICAL_NAN: Self = f64::from_bits(0x7ff8_0000_0000_0000);
    #[inline(always)]
    fn from_code(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    #[inline(always)]
    fn code(self) -> u64 {
        self.to_bits()
    }
}

impl HardwareFloat for f32 {
    const CANONICAL_NAN: Self = f32::from_bits(0x7fc0_0000);
    #[inline(always)]
    fn from_code(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
    #[inline(always)]
    fn code(self) -> u64 {
        u64::from(self.to_bits())
    }
}

/// `dst[i] = f(src[i])` in the hardware float `F`, NaN results canonicalized.
#[inline(always)]
fn hardware_map<W: Word, F: HardwareFloat>(src: &[W], dst: &mut [W], f: impl Fn(F) -> F) {
    for (x, y) in src.iter().zip(dst.iter_mut()) {
        let v = f(F::from_code(x.to_u64()));
        #[allow(clippy::eq_op)] // `v != v` is the NaN test, without a trait for `is_nan`.
        let v = if v != v { F::CANONICAL_NAN } else { v };
        *y = W::from_u64(v.code());
    }
}

/// In-place form of [`hardware_map`].
#[inline(always)]
fn hardware_map_in_place<W: Word, F: HardwareFloat>(data: &mut [W], f: impl Fn(F) -> F) {
    for y in data.iter_mut() {
        let v = f(F::from_code(y.to_u64()));
        #[allow(clippy::eq_op)]
        let v = if v != v { F::CANONICAL_NAN } else { v };
        *y = W::from_u64(v.code());
    }
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
