//! `scale_offset`: `out = (in - offset) * scale`, decoded as `out = (in / scale) + offset`.
//!
//! Specification: zarr-extensions `codecs/scale_offset/README.md`.
//!
//! ```json
//! {"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}
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

use super::{ArrayCodec, Direction, element_error, element_error_at, map_slice};
use crate::convert::Class;
use crate::convert::int::int_value_i64 as int_value;
use crate::dtype::layout::{FLOAT32, FLOAT64, FloatLayout};
use crate::dtype::{ArithFault, Kind, Real};
use crate::error::{ElementError, MetadataError, Rule};

/// The Zarr name.
pub const NAME: &str = "scale_offset";

/// `scale_offset` on element type `T`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleOffset<T: Real> {
    offset: T,
    scale: T,
    /// Whether `offset`/`scale` were given (so that metadata round-trips as written).
    explicit: (bool, bool),
    /// The offset is missing and `T` has no zero (`float8_e8m0fnu`): the additive identity
    /// is not a value of `T`, so the subtraction and addition are skipped (exactly `x - 0`).
    no_offset: bool,
}

fn fault_rule(f: ArithFault) -> Rule {
    match f {
        ArithFault::InexactDivision => Rule::InexactDivision,
        _ => Rule::NotRepresentable,
    }
}

impl<T: Real> ScaleOffset<T> {
    /// A codec with the given offset and scale.
    ///
    /// # Errors
    /// [`MetadataError::Field`] when `scale` is zero (or -0).
    pub fn new(offset: T, scale: T) -> Result<Self, MetadataError> {
        Self::build(offset, scale, (true, true))
    }

    fn build(offset: T, scale: T, explicit: (bool, bool)) -> Result<Self, MetadataError> {
        if matches!(scale.to_exact().class, Class::Zero) {
            return Err(MetadataError::Field {
                codec: NAME,
                field: "scale",
                reason: "scale must be non-zero".into(),
            });
        }
        let no_zero = T::from_exact(crate::convert::Exact::ZERO, Default::default())
            .1
            .is_error();
        Ok(ScaleOffset {
            offset,
            scale,
            explicit,
            no_offset: !explicit.0 && no_zero,
        })
    }

    /// Parse the `configuration` object (absent = `None`: identity).
    ///
    /// # Errors
    /// Unknown keys, scalars that are not valid encodings for `T`, a zero scale.
    pub fn from_configuration(config: Option<&Value>) -> Result<Self, MetadataError> {
        let zero = T::from_exact(crate::convert::Exact::ZERO, Default::default()).0;
        let one = T::from_exact(
            crate::convert::Exact::finite(false, 1, 0),
            Default::default(),
        )
        .0;
        let Some(config) = config else {
            return Self::build(zero, one, (false, false));
        };
        let Value::Object(map) = config else {
            return Err(MetadataError::Field {
                codec: NAME,
                field: "configuration",
                reason: format!("must be an object, got {config}"),
            });
        };
        if let Some(k) = map.keys().find(|k| *k != "offset" && *k != "scale") {
            return Err(MetadataError::Field {
                codec: NAME,
                field: "configuration",
                reason: format!("unknown key {k:?}"),
            });
        }
        let scalar = |field: &'static str, default: T| match map.get(field) {
            None => Ok((default, false)),
            Some(v) => T::fill_value_from_json(v)
                .map(|x| (x, true))
                .map_err(|source| MetadataError::Scalar {
                    codec: NAME,
                    field,
                    source,
                }),
        };
        let (offset, eo) = scalar("offset", zero)?;
        let (scale, es) = scalar("scale", one)?;
        Self::build(offset, scale, (eo, es))
    }

    /// The offset.
    pub fn offset(&self) -> T {
        self.offset
    }

    /// The scale.
    pub fn scale(&self) -> T {
        self.scale
    }

    #[inline(always)]
    fn encode_one(&self, x: T) -> (T, Option<Rule>) {
        let d = if self.no_offset {
            Ok(x)
        } else {
            x.checked_sub(self.offset)
        };
        match d.and_then(|d| d.checked_mul(self.scale)) {
            Ok(v) => (v, None),
            Err(f) => (x, Some(fault_rule(f))),
        }
    }

    #[inline(always)]
    fn decode_one(&self, x: T) -> (T, Option<Rule>) {
        match x.checked_div(self.scale).and_then(|d| {
            if self.no_offset {
                Ok(d)
            } else {
                d.checked_add(self.offset)
            }
        }) {
            Ok(v) => (v, None),
            Err(f) => (x, Some(fault_rule(f))),
        }
    }

    /// Encode in place.
    ///
    /// # Errors
    /// The first failing element (elements before it are already encoded).
    pub fn encode_in_place(&self, data: &mut [T]) -> Result<(), ElementError> {
        self.in_place(data, Direction::Encode)
    }

    /// Decode in place.
    ///
    /// # Errors
    /// The first failing element (elements before it are already decoded).
    pub fn decode_in_place(&self, data: &mut [T]) -> Result<(), ElementError> {
        self.in_place(data, Direction::Decode)
    }

    fn in_place(&self, data: &mut [T], dir: Direction) -> Result<(), ElementError> {
        if self.hardware_in_place(data, dir) {
            return Ok(());
        }
        if let Some((o, s)) = self.small_int() {
            // Chunk by chunk from a copy; a chunk with a failing element is restored and
            // redone by the generic loop, which stops at that element.
            let mut tmp = [T::default(); SMALL_INT_CHUNK];
            for (k, chunk) in data.chunks_mut(SMALL_INT_CHUNK).enumerate() {
                let t = &mut tmp[..chunk.len()];
                t.copy_from_slice(chunk);
                if !crate::arch::vectorized(
                    #[inline(always)]
                    || small_int_map(t, chunk, o, s, dir),
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
    fn generic_in_place(
        &self,
        data: &mut [T],
        dir: Direction,
        base: usize,
    ) -> Result<(), ElementError> {
        for (i, x) in data.iter_mut().enumerate() {
            let (v, bad) = match dir {
                Direction::Encode => self.encode_one(*x),
                Direction::Decode => self.decode_one(*x),
            };
            if let Some(rule) = bad {
                return Err(element_error_at(NAME, dir, rule, base + i, Some(*x)));
            }
            *x = v;
        }
        Ok(())
    }

    /// For an integer type of at most 16 bits: its offset and scale as `i64`.
    #[inline(always)]
    fn small_int(&self) -> Option<(i64, i64)> {
        match T::KIND {
            Kind::Int(l) if l.bits <= 16 && !self.no_offset => Some((
                int_value(l, self.offset.to_bits()),
                int_value(l, self.scale.to_bits()),
            )),
            _ => None,
        }
    }

    /// The slice form of the small-integer kernel, with the generic path for a slice that
    /// has a failing element (to find the first one).
    #[inline(always)]
    fn small_int_slice(&self, src: &[T], dst: &mut [T], dir: Direction) -> Option<bool> {
        let (o, s) = self.small_int()?;
        Some(crate::arch::vectorized(
            #[inline(always)]
            || small_int_map(src, dst, o, s, dir),
        ))
    }
}

/// Chunk length of the in-place small-integer kernel.
const SMALL_INT_CHUNK: usize = 1024;

/// `scale_offset` on integers of at most 16 bits, in `i32`/`f32` lanes, where nothing can
/// overflow the arithmetic used (`|x|, |offset|, |scale| < 2^16`):
///
/// - encode: `d = x - offset` in `i32`. The product `d * scale` is in the type's range
///   exactly when `d` is in `[dlo, dhi]` (the range divided by the scale, computed once), so
///   the check is on `d`, and the product is then exact in `i32` (`|d * scale| < 2^16`).
/// - decode: `q` = `x * (1 / scale)` in `f32`, rounded to the nearest integer. The product
///   is within a relative `2^-23` of `x / scale`, which is below 2^17 in magnitude, so it is
///   within `2^-6` of it: when the exact quotient is an integer, `q` is that integer.
///   `q * scale == x` (exact in `i32`: `|q| <= |x / scale| + 1`) then tells an integral
///   quotient from a non-integral one. Then `q + offset`.
///
/// Each intermediate is range-checked as the type's own arithmetic requires. All of it is
/// 8-lane AVX2 (`vpmulld`, `vcvtdq2ps`, `vmulps`). Returns whether every
/// element succeeded (otherwise `dst` holds garbage).
#[inline(always)]
fn small_int_map<T: Real>(src: &[T], dst: &mut [T], o: i64, s: i64, dir: Direction) -> bool {
    // The layout from `T` itself, a constant here (not a value captured by the closure
    // given to `vectorized`, which the AVX2 function would see at run time).
    let Kind::Int(l) = T::KIND else {
        return false;
    };
    let (lo, hi) = (l.min() as i32, l.max() as i32);
    // `lo <= x <= hi` as one unsigned comparison.
    let in_range = |x: i32| (x.wrapping_sub(lo) as u32) <= (hi - lo) as u32;
    let (o, s) = (o as i32, s as i32);
    let value = |bits: u64| {
        if l.signed {
            let sh = 32 - l.bits;
            ((bits as u32) << sh) as i32 >> sh
        } else {
            bits as i32
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
                let d = value(x.to_bits()).wrapping_sub(o);
                ok &= (d.wrapping_sub(dlo) as u32) <= span;
                *y = T::from_bits(d.wrapping_mul(s) as u32 as u64);
            }
        }
        Direction::Decode => {
            if s == 0 {
                return src.is_empty() || dst.is_empty();
            }
            let reciprocal = 1.0 / s as f32;
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                let v = value(x.to_bits());
                // Round to nearest by the magic constant 1.5 * 2^23 (valid below 2^22),
                // not `as i32`, whose saturation x86 does not vectorize for `f32`.
                let q = ((v as f32 * reciprocal + MAGIC).to_bits() as i32).wrapping_sub(MAGIC_BITS);
                let r = q.wrapping_add(o);
                ok &= (q.wrapping_mul(s) == v) & in_range(q) & in_range(r);
                *y = T::from_bits(r as u32 as u64);
            }
        }
    }
    ok
}

/// `1.5 * 2^23`: adding it to an `f32` of magnitude below 2^22 leaves that value rounded to
/// an integer in the low mantissa bits.
const MAGIC: f32 = 12_582_912.0;
const MAGIC_BITS: i32 = 0x4b40_0000;

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
    const LAYOUT: FloatLayout;
    const CANONICAL_NAN: Self;
    fn from_code(bits: u64) -> Self;
    fn code(self) -> u64;
}

impl HardwareFloat for f64 {
    const LAYOUT: FloatLayout = FLOAT64;
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
    const LAYOUT: FloatLayout = FLOAT32;
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
fn hardware_map<T: Real, F: HardwareFloat>(src: &[T], dst: &mut [T], f: impl Fn(F) -> F) {
    for (x, y) in src.iter().zip(dst.iter_mut()) {
        let v = f(F::from_code(x.to_bits()));
        #[allow(clippy::eq_op)] // `v != v` is the NaN test, without a trait for `is_nan`.
        let v = if v != v { F::CANONICAL_NAN } else { v };
        *y = T::from_bits(v.code());
    }
}

/// In-place form of [`hardware_map`].
#[inline(always)]
fn hardware_map_in_place<T: Real, F: HardwareFloat>(data: &mut [T], f: impl Fn(F) -> F) {
    for y in data.iter_mut() {
        let v = f(F::from_code(y.to_bits()));
        #[allow(clippy::eq_op)]
        let v = if v != v { F::CANONICAL_NAN } else { v };
        *y = T::from_bits(v.code());
    }
}

impl<T: Real> ScaleOffset<T> {
    /// Offset and scale as the hardware float `F`, when `T` is `F`.
    #[inline(always)]
    fn hardware_pair<F: HardwareFloat>(&self) -> Option<(F, F)> {
        (T::KIND == Kind::Float(F::LAYOUT)).then(|| {
            (
                F::from_code(self.offset.to_bits()),
                F::from_code(self.scale.to_bits()),
            )
        })
    }

    /// The `f32`/`f64` kernels; `false` when `T` is another type.
    #[inline(always)]
    fn hardware(&self, src: &[T], dst: &mut [T], dir: Direction) -> bool {
        macro_rules! run {
            ($f:ty) => {
                if let Some((o, s)) = self.hardware_pair::<$f>() {
                    crate::arch::vectorized(
                        #[inline(always)]
                        || match dir {
                            Direction::Encode => hardware_map::<T, $f>(src, dst, |x| (x - o) * s),
                            Direction::Decode => hardware_map::<T, $f>(src, dst, |x| x / s + o),
                        },
                    );
                    return true;
                }
            };
        }
        run!(f64);
        run!(f32);
        false
    }

    #[inline(always)]
    fn hardware_in_place(&self, data: &mut [T], dir: Direction) -> bool {
        macro_rules! run {
            ($f:ty) => {
                if let Some((o, s)) = self.hardware_pair::<$f>() {
                    crate::arch::vectorized(
                        #[inline(always)]
                        || match dir {
                            Direction::Encode => {
                                hardware_map_in_place::<T, $f>(data, |x| (x - o) * s)
                            }
                            Direction::Decode => {
                                hardware_map_in_place::<T, $f>(data, |x| x / s + o)
                            }
                        },
                    );
                    return true;
                }
            };
        }
        run!(f64);
        run!(f32);
        false
    }
}

impl<T: Real> ArrayCodec for ScaleOffset<T> {
    type In = T;
    type Out = T;

    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        if self.hardware(src, dst, Direction::Encode)
            || self.small_int_slice(src, dst, Direction::Encode) == Some(true)
        {
            return Ok(());
        }
        map_slice(src, dst, |x| self.encode_one(x))
            .map_err(|f| element_error(NAME, Direction::Encode, src, f))
    }

    fn decode_slice(&self, src: &[T], dst: &mut [T]) -> Result<(), ElementError> {
        if self.hardware(src, dst, Direction::Decode)
            || self.small_int_slice(src, dst, Direction::Decode) == Some(true)
        {
            return Ok(());
        }
        map_slice(src, dst, |x| self.decode_one(x))
            .map_err(|f| element_error(NAME, Direction::Decode, src, f))
    }

    fn to_metadata(&self) -> Value {
        let mut config = Map::new();
        if self.explicit.0 {
            config.insert("offset".into(), self.offset.fill_value_to_json());
        }
        if self.explicit.1 {
            config.insert("scale".into(), self.scale.fill_value_to_json());
        }
        let mut obj = Map::new();
        obj.insert("name".into(), Value::from(NAME));
        if !config.is_empty() {
            obj.insert("configuration".into(), Value::Object(config));
        }
        Value::Object(obj)
    }
}
