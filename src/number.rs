//! The number model: what every conversion is made of, below any element type.
//!
//! - [`layout`]: bit layouts of integer and float formats ([`Format`](layout::Format)), the
//!   run-time description every kernel takes;
//! - [`exact`]: the exact value every conversion starts from;
//! - [`round`]: the five rounding modes and the one bit-dropping routine;
//! - [`float`], [`int`]: decoding a code to its exact value, and rounding an exact value
//!   into a format (the reference path, compiled once for every format);
//! - [`storage`]: the machine words a code lives in, and the `Plain` contract that lets a
//!   slice of elements be seen as words;
//! - the options of one conversion ([`CastOptions`]) and what happened to an element
//!   ([`Status`]).
//!
//! Nothing here knows about element types: [`mod@crate::dtype`] builds on it.

pub mod exact;
pub mod float;
pub mod int;
pub mod layout;
pub mod round;
// The storage traits are `unsafe` to implement, and implemented here for the words.
#[allow(unsafe_code)]
pub mod storage;
#[cfg(test)]
pub(crate) mod xorshift;

use serde::{Deserialize, Serialize};

pub use round::Rounding;

/// What to do with a rounded value outside the target's range (`out_of_range`).
///
/// ```
/// use zquant::{CastOptions, OutOfRange, Real, Rounding};
/// let cast = |rule| i8::from_exact(130.0f32.to_exact(), CastOptions::new(Rounding::NearestEven, rule));
/// assert!(cast(OutOfRange::Error).1.is_error());
/// assert_eq!(cast(OutOfRange::Clamp).0, 127);
/// assert_eq!(cast(OutOfRange::Wrap).0, -126);
/// ```
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
///
/// ```
/// use zquant::{CastOptions, OutOfRange, Real, Rounding, Status};
/// let clamp = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
/// assert_eq!(u8::from_exact(300.7f64.to_exact(), clamp), (255, Status::Clamped));
/// let wrap = CastOptions::new(Rounding::TowardsZero, OutOfRange::Wrap);
/// assert_eq!(u8::from_exact(300.7f64.to_exact(), wrap).0, 44);
/// // The default is nearest-even, and out-of-range is an error.
/// assert!(u8::from_exact(300.7f64.to_exact(), CastOptions::default()).1.is_error());
/// ```
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
