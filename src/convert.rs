//! The conversion core: any supported real value to any supported real type, rounded once.
//!
//! A source element is first decoded to an [`Exact`] value (a table lookup for types of 8
//! bits or fewer, bit arithmetic otherwise), then rounded into the target by
//! [`float::round_to_float`] or [`int::round_to_int`]. Both work on integer bits only: there
//! is no detour through a narrower hardware float, so `f64 -> float16`, `f64 -> bfloat16` and
//! `f64 -> float8_*` are correctly rounded (libraries that go `f64 -> f32 -> f16` round
//! twice: `1.0 + 2^-11 + 2^-40` rounds up to `1.0 + 2^-10` in float16, but through float32 it
//! first becomes the tie `1.0 + 2^-11` and then rounds to even, `1.0`).
//!
//! Everything is monomorphized per (source, target) pair: [`cast_slice`] is a plain generic
//! loop over slices that records the first failing element instead of building a `Result`
//! per element.

pub mod exact;
mod fast;
pub mod float;
pub mod int;
mod narrow;
pub mod round;
pub mod table;

pub use exact::{Class, Exact};
pub use round::Rounding;

use serde::{Deserialize, Serialize};

use crate::dtype::Real;

/// What to do with a rounded value outside the target's range (`out_of_range`).
///
/// The spec's absent key is [`OutOfRange::Error`]: "implementations MUST treat any
/// out-of-range value as an encoding or decoding failure".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutOfRange {
    /// Fail (the key is absent).
    #[default]
    Error,
    /// Clamp to the minimum or maximum (±Inf for float targets with infinities).
    Clamp,
    /// Two's complement wrap modulo 2^N; integer targets only.
    Wrap,
}

/// The rounding and out-of-range rules of one cast.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CastOptions {
    /// Rounding mode.
    pub rounding: Rounding,
    /// Out-of-range rule.
    pub out_of_range: OutOfRange,
}

impl CastOptions {
    /// Options with the given rounding and out-of-range rule.
    pub const fn new(rounding: Rounding, out_of_range: OutOfRange) -> Self {
        CastOptions {
            rounding,
            out_of_range,
        }
    }
}

/// What happened to one converted element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// The value is represented exactly (NaN to NaN counts as exact).
    Exact,
    /// The value was rounded.
    Inexact,
    /// Out of range after rounding, clamped.
    Clamped,
    /// Out of range after rounding, wrapped.
    Wrapped,
    /// Out of range after rounding, and the rule is to fail (or wrap into a float).
    OutOfRange,
    /// A NaN, and the target has no NaN.
    NanUnrepresentable,
    /// An infinity, and the target has no infinity of that sign.
    InfUnrepresentable,
}

impl Status {
    /// Whether the element failed to convert.
    #[inline(always)]
    pub const fn is_error(self) -> bool {
        matches!(
            self,
            Status::OutOfRange | Status::NanUnrepresentable | Status::InfUnrepresentable
        )
    }
}

/// Convert one element, returning the result and its [`Status`].
///
/// When the status is an error the returned value is unspecified (but valid).
#[inline(always)]
pub fn cast<S: Real, D: Real>(x: S, opts: CastOptions) -> (D, Status) {
    D::from_exact(x.to_exact(), opts)
}

/// The first element of a slice that could not be converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementFailure {
    /// Index in the slice.
    pub index: usize,
    /// Why it failed ([`Status::is_error`] is true).
    pub status: Status,
}

/// Elements per block of the fast paths: a block with a rare element is redone by the
/// reference path, so the slow path costs at most this many elements per rare one.
const FAST_BLOCK: usize = 1024;

/// Convert `src` into `dst` (same length) element by element.
///
/// Uses the vectorizable fast paths of [`fast`] where they apply and the reference path
/// ([`cast_slice_reference`]) elsewhere; the results are bit-identical.
///
/// # Errors
/// Returns the first element whose status is an error; `dst` is then partly written.
#[inline]
pub fn cast_slice<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
) -> Result<(), ElementFailure> {
    cast_blocks(src, dst, opts, None::<&fn(Exact) -> Option<D>>)
}

/// [`cast_slice`] with a `scalar_map` applied before everything else: `map` returns the
/// mapped value of an element's exact value, if any.
///
/// # Errors
/// Returns the first element whose status is an error; `dst` is then partly written.
#[inline]
pub fn cast_slice_mapped<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    map: &impl Fn(Exact) -> Option<D>,
) -> Result<(), ElementFailure> {
    cast_blocks(src, dst, opts, Some(map))
}

/// The table path, else block by block the fast paths, with the map (if any) applied after
/// a block's fast path and the reference path for a block the fast path declines.
#[inline(always)]
fn cast_blocks<S: Real, D: Real, M: Fn(Exact) -> Option<D>>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    map: Option<&M>,
) -> Result<(), ElementFailure> {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    let no_map = |_: Exact| None;
    if let Some(r) = match map {
        Some(m) => fast::try_table(src, dst, opts, m),
        None => fast::try_table(src, dst, opts, &no_map),
    } {
        return r;
    }
    let mut start = 0;
    while start < n {
        let end = (start + FAST_BLOCK).min(n);
        let (s, d) = (&src[start..end], &mut dst[start..end]);
        let shift = |mut f: ElementFailure| {
            f.index += start;
            f
        };
        match (fast::try_cast(s, d, opts), map) {
            (Some(Ok(())), None) => {}
            (Some(Ok(())), Some(m)) => {
                for (x, y) in s.iter().zip(d.iter_mut()) {
                    if let Some(v) = m(x.to_exact()) {
                        *y = v;
                    }
                }
            }
            (_, Some(m)) => reference_mapped(s, d, opts, m).map_err(shift)?,
            (_, None) => reference_mapped(s, d, opts, &no_map).map_err(shift)?,
        }
        start = end;
    }
    Ok(())
}

/// The reference path: one [`cast`] per element (after the scalar map), no fast path.
/// Every fast path is tested against it.
///
/// # Errors
/// Returns the first element whose status is an error; `dst` is then partly written.
pub fn cast_slice_reference<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
) -> Result<(), ElementFailure> {
    reference_mapped(src, dst, opts, &|_| None)
}

pub(crate) fn reference_mapped<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
    map: &impl Fn(Exact) -> Option<D>,
) -> Result<(), ElementFailure> {
    let mut first: Option<ElementFailure> = None;
    for (i, (s, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
        let x = s.to_exact();
        if let Some(v) = map(x) {
            *d = v;
            continue;
        }
        let (v, st) = D::from_exact(x, opts);
        *d = v;
        if st.is_error() && first.is_none() {
            first = Some(ElementFailure {
                index: i,
                status: st,
            });
        }
    }
    match first {
        None => Ok(()),
        Some(f) => Err(f),
    }
}
