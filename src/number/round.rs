//! Rounding modes and the one routine that drops low bits under them.

use serde::{Deserialize, Serialize};

/// The five `cast_value` rounding modes.
///
/// > `"nearest-even"`: Round to the nearest representable value, with ties rounded to the
/// > value whose least significant digit is even (IEEE 754 `roundTiesToEven`).
/// > `"nearest-away"`: Round to the nearest representable value, with ties going away from
/// > zero.
///
/// ```
/// use zquant::{CastOptions, DType, Real, Rounding};
/// let x = 2.5f64.to_exact();
/// let round = |r| i8::from_exact(x, CastOptions::new(r, Default::default())).0;
/// assert_eq!(Rounding::ALL.map(round), [2, 2, 3, 2, 3]);
/// assert_eq!(serde_json::to_value(Rounding::TowardsZero).unwrap(), "towards-zero");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// Ties to even (the default when `rounding` is absent).
    #[default]
    NearestEven,
    /// Truncate.
    TowardsZero,
    /// Ceiling.
    TowardsPositive,
    /// Floor.
    TowardsNegative,
    /// Ties away from zero.
    NearestAway,
}

impl Rounding {
    /// Every mode, in the spec's order.
    pub const ALL: [Rounding; 5] = [
        Rounding::NearestEven,
        Rounding::TowardsZero,
        Rounding::TowardsPositive,
        Rounding::TowardsNegative,
        Rounding::NearestAway,
    ];

    /// The Zarr metadata spelling.
    pub const fn name(self) -> &'static str {
        match self {
            Rounding::NearestEven => "nearest-even",
            Rounding::TowardsZero => "towards-zero",
            Rounding::TowardsPositive => "towards-positive",
            Rounding::TowardsNegative => "towards-negative",
            Rounding::NearestAway => "nearest-away",
        }
    }
}

/// Shift `n` right by `shift` bits and round the quotient under `mode`.
///
/// `sticky` says the true value has further non-zero bits below `n`; `neg` is the sign of the
/// value (directed modes depend on it). Returns `(rounded quotient, inexact)`; the quotient
/// can be `(n >> shift) + 1`, which may carry into a new bit.
#[inline]
pub(crate) const fn shift_round(
    n: u64,
    shift: u32,
    sticky: bool,
    neg: bool,
    mode: Rounding,
) -> (u64, bool) {
    let (q, half, rest) = if shift == 0 {
        (n, false, sticky)
    } else if shift < 64 {
        let rem = n << (64 - shift);
        (n >> shift, rem >> 63 != 0, (rem << 1) != 0 || sticky)
    } else if shift == 64 {
        (0, n >> 63 != 0, (n << 1) != 0 || sticky)
    } else {
        (0, false, n != 0 || sticky)
    };
    let inexact = half || rest;
    let up = match mode {
        Rounding::NearestEven => half && (rest || q & 1 == 1),
        Rounding::NearestAway => half,
        Rounding::TowardsZero => false,
        Rounding::TowardsPositive => !neg && inexact,
        Rounding::TowardsNegative => neg && inexact,
    };
    // `q + 1` only wraps when `shift == 0`, `q == u64::MAX` and `sticky` is set, which no
    // caller produces (sticky values come from the decimal parser and go to float targets,
    // whose shift is at least 11).
    (q.wrapping_add(up as u64), inexact)
}
