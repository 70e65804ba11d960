//! Fast paths for [`cast_slice`](super::cast_slice), bit-identical to the reference path
//! ([`cast_slice_reference`](super::cast_slice_reference)).
//!
//! Each fast path runs a branch-free loop that LLVM vectorizes and only *detects* the rare
//! elements (NaN, out of range, anything the hardware does not round as the spec says); when
//! one is seen, the whole slice is redone by the reference path, which also finds the first
//! failing index. So a fast path never has to reproduce an error, a clamp at a tricky
//! boundary or a wrap of a huge value — it only has to be right on what it accepts.
//!
//! - Sources of at most 8 bits (and 16-bit sources on long slices): every code is converted
//!   once by the reference path into a table, then the slice is a table lookup. Correct by
//!   construction for every target, mode and out-of-range rule.
//! - `f32`/`f64` to any integer type, every rounding mode: hardware rounding to an integral
//!   `f64` (exact: rounding to an integer never needs more precision than the source has),
//!   then a range check.
//! - Integer to integer: a range check (and the wrap is the low bits).
//! - `f64 -> f32`, and integers to `f32`/`f64`, nearest-even: the hardware conversion, which
//!   is correctly rounded; NaNs are canonicalized and overflow is detected.
//! - `f32`/`f64` to any narrower signed float format (float16, bfloat16, float8/6/4, and
//!   `f64 -> f32` in the other rounding modes), every rounding mode: integer arithmetic on
//!   the bits ([`super::narrow`]).

use super::int::int_value_i64 as int_value;
use super::{CastOptions, ElementFailure, Exact, OutOfRange, Rounding};
use crate::dtype::layout::{FLOAT32, FLOAT64, IntLayout};
use crate::dtype::{Kind, Real};

/// Outcome of a fast path: `None` when none applies.
pub(crate) type Fast = Option<Result<(), ElementFailure>>;

const fn float_layout_is(k: Kind, l: crate::dtype::FloatLayout) -> bool {
    match k {
        Kind::Float(x) => {
            x.exponent_bits == l.exponent_bits
                && x.mantissa_bits == l.mantissa_bits
                && x.bias == l.bias
                && x.signed == l.signed
                && x.subnormals == l.subnormals
                && x.inf == l.inf
                && matches!(x.nan, crate::dtype::NanEncoding::Ieee)
        }
        _ => false,
    }
}

const fn int_layout(k: Kind) -> Option<IntLayout> {
    match k {
        Kind::Int(l) => Some(l),
        _ => None,
    }
}

/// The table path, when the source is narrow enough for the slice's length: exact for every
/// element, `scalar_map` included.
#[inline]
pub(crate) fn try_table<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    map: &impl Fn(Exact) -> Option<D>,
) -> Fast {
    let n = src.len().min(dst.len());
    if S::BITS <= 8 && n >= 256 {
        return Some(by_table(&src[..n], &mut dst[..n], opts, map));
    }
    if S::BITS <= 16 && n >= 1 << 18 {
        return Some(by_table(&src[..n], &mut dst[..n], opts, map));
    }
    None
}

/// The layouts of `S` and `D` as constants of each monomorphized kernel.
///
/// Read them *inside* the closure given to [`crate::arch::vectorized`]: a value computed
/// outside reaches the AVX2 function through the closure's environment, at run time, and
/// every shift, select and range on it then stays in the loop as a register operand.
struct Pair<S, D>(std::marker::PhantomData<(S, D)>);

impl<S: Real, D: Real> Pair<S, D> {
    const S_F64: bool = float_layout_is(S::KIND, FLOAT64);
    const S_INT: IntLayout = int_layout_or_u8(S::KIND);
    const D_INT: IntLayout = int_layout_or_u8(D::KIND);
    const D_FLOAT: crate::dtype::FloatLayout = match D::KIND {
        Kind::Float(l) => l,
        _ => FLOAT32,
    };
}

/// The integer layout of `k` (`uint8` for a kind that is not an integer; only read where
/// `k` is known to be one).
const fn int_layout_or_u8(k: Kind) -> IntLayout {
    match k {
        Kind::Int(l) => l,
        _ => IntLayout {
            bits: 8,
            signed: false,
        },
    }
}

/// Try every elementwise fast path that applies to `S -> D` under `opts` (no scalar map).
#[inline]
pub(crate) fn try_cast<S: Real, D: Real>(src: &[S], dst: &mut [D], opts: CastOptions) -> Fast {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    let s_f64 = float_layout_is(S::KIND, FLOAT64);
    let s_f32 = float_layout_is(S::KIND, FLOAT32);
    if s_f64 || s_f32 {
        if int_layout(D::KIND).is_some() {
            return crate::arch::vectorized(
                #[inline(always)]
                || float_to_int(src, dst, opts, Pair::<S, D>::D_INT, Pair::<S, D>::S_F64),
            );
        }
        if opts.rounding == Rounding::NearestEven && s_f64 && float_layout_is(D::KIND, FLOAT32) {
            return crate::arch::vectorized(
                #[inline(always)]
                || f64_to_f32(src, dst, opts),
            );
        }
        if let Kind::Float(l) = D::KIND {
            if super::narrow::applies(l, s_f64) {
                let rare = crate::arch::vectorized(
                    #[inline(always)]
                    || {
                        let (l, s_f64) = (Pair::<S, D>::D_FLOAT, Pair::<S, D>::S_F64);
                        super::narrow::cast(src, dst, opts.rounding, opts.out_of_range, l, s_f64)
                    },
                );
                return if rare { None } else { Some(Ok(())) };
            }
        }
        if (s_f64 && float_layout_is(D::KIND, FLOAT64))
            || (s_f32 && float_layout_is(D::KIND, FLOAT32))
        {
            // Same format: only NaN payloads change (canonicalized) — leave it to the
            // reference path, which is exact and rare in practice.
            return None;
        }
    }
    if int_layout(S::KIND).is_some() {
        if int_layout(D::KIND).is_some() {
            return crate::arch::vectorized(
                #[inline(always)]
                || int_to_int(src, dst, opts, Pair::<S, D>::S_INT, Pair::<S, D>::D_INT),
            );
        }
        if opts.rounding == Rounding::NearestEven
            && (float_layout_is(D::KIND, FLOAT32) || float_layout_is(D::KIND, FLOAT64))
        {
            return crate::arch::vectorized(
                #[inline(always)]
                || int_to_hw_float(src, dst, Pair::<S, D>::S_INT),
            );
        }
    }
    None
}

/// Build the table of every code of `S` (scalar map first), then look up.
fn by_table<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    map: &impl Fn(Exact) -> Option<D>,
) -> Result<(), ElementFailure> {
    match super::table::CodeTable::build::<S>(opts, map) {
        Some(t) => t.apply(src, dst),
        None => super::reference_mapped(src, dst, opts, map),
    }
}

#[inline(always)]
fn as_f64<S: Real>(x: S, is_f64: bool) -> f64 {
    if is_f64 {
        f64::from_bits(x.to_bits())
    } else {
        f32::from_bits(x.to_bits() as u32) as f64
    }
}

/// Round to an integral value under `MODE` (a [`Rounding`] as `u8`), in hardware.
#[inline(always)]
fn round_integral<const MODE: u8>(x: f64) -> f64 {
    match MODE {
        NEAREST_EVEN => x.round_ties_even(),
        TOWARDS_ZERO => x.trunc(),
        TOWARDS_POSITIVE => x.ceil(),
        TOWARDS_NEGATIVE => x.floor(),
        _ => x.round(),
    }
}

const NEAREST_EVEN: u8 = 0;
const TOWARDS_ZERO: u8 = 1;
const TOWARDS_POSITIVE: u8 = 2;
const TOWARDS_NEGATIVE: u8 = 3;
const NEAREST_AWAY: u8 = 4;

/// 2^63, exactly.
const TWO_63: f64 = (1u64 << 63) as f64;
/// 2^31, exactly.
const TWO_31: f64 = (1u64 << 31) as f64;

/// `f32`/`f64` to an integer type. The rounding mode is made a constant here, outside the
/// loop: with a `match` on it per element LLVM keeps the loop scalar.
#[inline(always)]
fn float_to_int<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    l: IntLayout,
    s_f64: bool,
) -> Fast {
    match opts.rounding {
        Rounding::NearestEven => float_to_int_in::<S, D, NEAREST_EVEN>(src, dst, opts, l, s_f64),
        Rounding::TowardsZero => float_to_int_in::<S, D, TOWARDS_ZERO>(src, dst, opts, l, s_f64),
        Rounding::TowardsPositive => {
            float_to_int_in::<S, D, TOWARDS_POSITIVE>(src, dst, opts, l, s_f64)
        }
        Rounding::TowardsNegative => {
            float_to_int_in::<S, D, TOWARDS_NEGATIVE>(src, dst, opts, l, s_f64)
        }
        Rounding::NearestAway => float_to_int_in::<S, D, NEAREST_AWAY>(src, dst, opts, l, s_f64),
    }
}

#[inline(always)]
fn float_to_int_in<S: Real, D: Real, const MODE: u8>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    l: IntLayout,
    s_f64: bool,
) -> Fast {
    // Bounds as f64: exact for every width (2^63 and 2^64 are powers of two; `max + 1` is
    // used as an exclusive bound so that no rounding of `max` itself is involved).
    if opts.out_of_range == OutOfRange::Clamp && l.bits == 64 {
        // `max` of a 64-bit type is not an f64: clamping is left to the reference path.
        return None;
    }
    let lo = l.min() as f64;
    let hi_excl = (l.max() + 1) as f64;
    let max = l.max() as f64;
    let oor = opts.out_of_range;
    let (clamp, wrap) = (oor == OutOfRange::Clamp, oor == OutOfRange::Wrap);
    let mut bad = false;
    // Wrap is only done here for |r| < 2^63 (so that `r as i64` is exact), or 2^31.
    // Every value the block keeps (in range, clamped into it, or wrapped from below 2^31
    // into a target of at most 32 bits, whose low bits an i32 holds) is an i32.
    let fits_i32 = if wrap {
        l.bits <= 32
    } else {
        l.min() >= i32::MIN as i128 && l.max() <= i32::MAX as i128
    };
    let wrap_limit = if fits_i32 { TWO_31 } else { TWO_63 };
    // The out-of-range rule only selects between values computed for every element, so
    // the loop has no branch on it. `as` saturates (and maps NaN to 0), so `v` never causes
    // UB and in-range values convert exactly; out-of-range values of a block are redone
    // anyway. A target within i32 converts through i32 in a loop of its own, which x86
    // vectorizes (`vcvttpd2dq`); it cannot vectorize the 64-bit conversions, and a loop
    // that has both (even behind a loop-invariant select) stays scalar.
    macro_rules! each {
        (|$v:ident| $bits:expr) => {
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let r = round_integral::<MODE>(as_f64(*s, s_f64));
                let in_range = (r >= lo) & (r < hi_excl);
                // ±Inf and NaN are never clamped (catalogue `inf-clamp`): reference path.
                let ok = if clamp {
                    r.is_finite()
                } else if wrap {
                    r.abs() < wrap_limit
                } else {
                    in_range
                };
                let $v = if clamp { r.max(lo).min(max) } else { r };
                *d = D::from_bits($bits);
                bad |= !ok;
            }
        };
    }
    if fits_i32 {
        each!(|v| v as i32 as i64 as u64);
    } else {
        // For unsigned 64-bit targets values >= 2^63 go through u64.
        each!(|v| if v >= TWO_63 {
            v as u64
        } else {
            v as i64 as u64
        });
    }
    if bad { None } else { Some(Ok(())) }
}

#[inline(always)]
fn f64_to_f32<S: Real, D: Real>(src: &[S], dst: &mut [D], opts: CastOptions) -> Fast {
    let mut bad = false;
    let canonical_nan = f32::from_bits(0x7fc0_0000);
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let x = f64::from_bits(s.to_bits());
        let y = x as f32;
        let y = if x.is_nan() { canonical_nan } else { y };
        // Overflow after rounding: finite in, infinite out.
        bad |= y.is_infinite() && x.is_finite();
        *d = D::from_bits(y.to_bits() as u64);
    }
    if bad && opts.out_of_range != OutOfRange::Clamp {
        return None;
    }
    // Under clamp an overflow goes to ±Inf, which is what the hardware produced.
    Some(Ok(()))
}

/// Integer to integer. When both sides fit `i32` the loop runs in 32-bit lanes (8 per
/// AVX2 vector instead of 4); the out-of-range rule is a select, not a branch.
#[inline(always)]
fn int_to_int<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    sl: IntLayout,
    dl: IntLayout,
) -> Fast {
    if !sl.signed && sl.bits == 64 {
        return None; // u64 values above i64::MAX: leave to the reference path.
    }
    let clamp = opts.out_of_range == OutOfRange::Clamp;
    let check = opts.out_of_range == OutOfRange::Error;
    let mut bad = false;
    if sl.bits < 32 || (sl.signed && sl.bits == 32) {
        // Every source value is an i32, so clamping to the target's range cut to i32 is
        // the same clamp, and the low bits (wrap) of an i32 are those of the value.
        let lo = dl.min().max(i32::MIN as i128) as i32;
        let hi = dl.max().min(i32::MAX as i128) as i32;
        for (s, d) in src.iter().zip(dst.iter_mut()) {
            let v = int_value_i32(sl, s.to_bits());
            let in_range = (v >= lo) & (v <= hi);
            let out = if clamp { v.clamp(lo, hi) } else { v };
            *d = D::from_bits(out as i64 as u64);
            bad |= !in_range & check;
        }
    } else {
        let lo = dl.min().max(i64::MIN as i128) as i64;
        let hi = dl.max().min(i64::MAX as i128) as i64;
        for (s, d) in src.iter().zip(dst.iter_mut()) {
            let v = int_value(sl, s.to_bits());
            let in_range = (v >= lo) & (v <= hi);
            let out = if clamp { v.clamp(lo, hi) } else { v };
            *d = D::from_bits(out as u64);
            bad |= !in_range & check;
        }
    }
    if bad { None } else { Some(Ok(())) }
}

/// The value of a code of at most 32 bits (`i32` range: not `uint32`) as an `i32`.
#[inline(always)]
fn int_value_i32(l: IntLayout, bits: u64) -> i32 {
    if l.signed {
        let sh = 32 - l.bits;
        ((bits as u32) << sh) as i32 >> sh
    } else {
        bits as i32
    }
}

/// Integer to `f32`/`f64`, nearest-even: Rust's integer-to-float `as` rounds once, to
/// nearest-even. One loop per case (not a `match` per element, which keeps the loop
/// scalar), and an `i32` source where the values fit one: x86 converts `i32` lanes
/// (`vcvtdq2ps`/`vcvtdq2pd`) but not `i64` ones.
#[inline(always)]
fn int_to_hw_float<S: Real, D: Real>(src: &[S], dst: &mut [D], sl: IntLayout) -> Fast {
    macro_rules! each {
        (|$b:ident| $e:expr) => {
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let $b = s.to_bits();
                *d = D::from_bits($e);
            }
        };
    }
    let to_f64 = float_layout_is(D::KIND, FLOAT64);
    let fits_i32 = sl.bits < 32 || (sl.signed && sl.bits == 32);
    match (to_f64, fits_i32, !sl.signed && sl.bits == 64) {
        (true, true, _) => each!(|b| (int_value_i32(sl, b) as f64).to_bits()),
        (false, true, _) => each!(|b| u64::from((int_value_i32(sl, b) as f32).to_bits())),
        (true, false, true) => each!(|b| (b as f64).to_bits()),
        (false, false, true) => each!(|b| u64::from((b as f32).to_bits())),
        (true, false, false) => each!(|b| (int_value(sl, b) as f64).to_bits()),
        (false, false, false) => each!(|b| u64::from((int_value(sl, b) as f32).to_bits())),
    }
    Some(Ok(()))
}
