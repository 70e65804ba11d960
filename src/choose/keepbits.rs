//! `keepbits` for `bitround`: from real information (xbitinfo's `get_keepbits`), or from a
//! relative-error bound.

use super::{BitInformation, ChooseError};
use crate::codec::bitround;
use crate::dtype::Kind;
use crate::number::layout::FloatLayout;

impl BitInformation {
    /// The mantissa bits to keep for `level` (in `[0, 1]`) of the real information, as
    /// xbitinfo's `get_keepbits` computes it, then clamped to `1..=mantissa bits`, the
    /// range `bitround` accepts. See [`BitInformation::keepbits_unclamped`].
    ///
    /// ```
    /// use zquant::choose::{BitInformation, InformationOptions};
    /// let field = ndarray::Array::from_shape_fn((32, 512), |(i, j)| {
    ///     (i as f64 * 0.1).sin() + (j as f64 * 0.01).cos()
    /// });
    /// let info = BitInformation::of(&field, &InformationOptions::default())?;
    /// let k99 = info.keepbits(0.99)?;
    /// let k9999 = info.keepbits(0.9999)?;
    /// assert!(k99 <= k9999 && k9999 <= 52);
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    ///
    /// # Errors
    /// [`ChooseError::Level`] for a level outside `[0, 1]`; [`ChooseError::NotAFloat`] when
    /// the information is about an integer type.
    pub fn keepbits(&self, level: f64) -> Result<u32, ChooseError> {
        let l = self.float_layout()?;
        let k = self.keepbits_unclamped(level)?;
        Ok(k.clamp(1, l.mantissa_bits as i64) as u32)
    }

    /// xbitinfo's `get_keepbits` exactly, which may be 0 or negative (the level is reached
    /// within the sign and exponent bits, or the data has no real information):
    ///
    /// 1. information not above 1.5 times the largest of the last four bits' is dropped
    ///    (the trailing bits' residual, "rounding error from the last digit");
    /// 2. the cumulative sum of what is left, normalized by its total, is compared with
    ///    `level`: keepbits is the 1-based position of the first bit whose cumulative share
    ///    exceeds `level`, minus the sign and exponent bits;
    /// 3. `level == 1` keeps every mantissa bit.
    ///
    /// # Errors
    /// As [`BitInformation::keepbits`].
    pub fn keepbits_unclamped(&self, level: f64) -> Result<i64, ChooseError> {
        let l = self.float_layout()?;
        if !(0.0..=1.0).contains(&level) {
            return Err(ChooseError::Level(level));
        }
        let non_mantissa = i64::from(l.bits() - l.mantissa_bits);
        if level == 1.0 {
            return Ok(i64::from(l.mantissa_bits));
        }
        let info = self.per_bit();
        let tail = info[info.len().saturating_sub(4)..]
            .iter()
            .fold(0.0f64, |a, &b| a.max(b));
        let cleaned: Vec<f64> = info
            .iter()
            .map(|&m| if m > 1.5 * tail { m } else { 0.0 })
            .collect();
        let mut cumulative = Vec::with_capacity(cleaned.len());
        let mut sum = 0.0;
        for m in &cleaned {
            sum += m;
            cumulative.push(sum);
        }
        // `argmax` of an all-false comparison (also a zero total, whose shares are NaN) is
        // the first position.
        let first = cumulative
            .iter()
            .position(|&c| c / sum > level)
            .unwrap_or(0);
        Ok(first as i64 + 1 - non_mantissa)
    }
}

/// The fewest `keepbits` whose worst-case `bitround` error bound, `2^-(k+1)` of each value,
/// is at most `max_relative_error`, for a data type `bitround` supports as a float (or
/// complex, per component).
///
/// Rounding half to even to `k` mantissa bits moves a normal value `x` by at most half a
/// unit in its `k`-th bit: `|x̃ - x| <= 2^-(k+1) · 2^⌊log2|x|⌋ <= 2^-(k+1) |x|`. So `k` is the
/// smallest with `2^-(k+1) <= max_relative_error`, at least 1, and the mantissa width (where
/// `bitround` is the identity) when no smaller one suffices. Not covered: subnormals (fewer
/// significant bits, so the same absolute error is a larger relative one) and values within
/// half a unit of the largest finite value, which round to infinity.
///
/// ```
/// use zquant::choose::keepbits_for_relative_error;
/// use zquant::DTypeId;
/// // 2^-(k+1) <= 1e-3 first holds at k = 9 (2^-10 = 9.8e-4).
/// assert_eq!(keepbits_for_relative_error(DTypeId::Float32.kind(), 1e-3)?, 9);
/// assert_eq!(keepbits_for_relative_error(DTypeId::Float16.kind(), 1e-9)?, 10);
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
///
/// # Errors
/// [`ChooseError::Bound`] for a bound that is not positive and finite (or NaN);
/// [`ChooseError::NotAFloat`] for a kind `bitround` does not round as a float.
pub fn keepbits_for_relative_error(
    kind: Kind,
    max_relative_error: f64,
) -> Result<u32, ChooseError> {
    let l: FloatLayout = match kind {
        Kind::Float(l) | Kind::Complex(l) if bitround::supports(kind) => l,
        _ => {
            return Err(ChooseError::NotAFloat(
                "bitround rounds float16, bfloat16, float32, float64 and their complex types",
            ));
        }
    };
    if !(max_relative_error > 0.0 && max_relative_error.is_finite()) {
        return Err(ChooseError::Bound(max_relative_error));
    }
    Ok((1..l.mantissa_bits)
        .find(|&k| (-(k as i32 + 1) as f64).exp2() <= max_relative_error)
        .unwrap_or(l.mantissa_bits))
}

/// The fewest `keepbits` whose `bitround` error is at most `max_abs_error` for every value
/// of magnitude at most `max_abs` (the data's largest finite magnitude), for a data type
/// `bitround` rounds as a float.
///
/// Rounding half to even to `k` mantissa bits moves a value of the binade `2^e` by at most
/// `2^(e-k-1)`; every value up to `max_abs` lies in a binade at most `E = ⌊log2 max_abs⌋`
/// (subnormals in the smallest normal binade's spacing), so `k` is the smallest with
/// `2^(E-k-1) <= max_abs_error`, at least 1 and at most the mantissa width (the identity).
/// A value within half a unit of the largest finite value rounds up to infinity: a caller
/// runs the codec on `max_abs` to rule that out (the planner does).
///
/// ```
/// use zquant::choose::keepbits_for_absolute_error;
/// use zquant::DTypeId;
/// // 320 K is in the binade 2^8: 2^(8-k-1) <= 0.05 first at k = 12 (2^-5 = 0.03125).
/// assert_eq!(keepbits_for_absolute_error(DTypeId::Float32.kind(), 320.0, 0.05)?, 12);
/// // Below any rounding the mantissa stays whole.
/// assert_eq!(keepbits_for_absolute_error(DTypeId::Float32.kind(), 320.0, 1e-9)?, 23);
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
///
/// # Errors
/// [`ChooseError::Bound`] for a bound that is not positive and finite, or a `max_abs`
/// that is not finite; [`ChooseError::NotAFloat`] for a kind `bitround` does not round as
/// a float.
pub fn keepbits_for_absolute_error(
    kind: Kind,
    max_abs: f64,
    max_abs_error: f64,
) -> Result<u32, ChooseError> {
    let l: FloatLayout = match kind {
        Kind::Float(l) | Kind::Complex(l) if bitround::supports(kind) => l,
        _ => {
            return Err(ChooseError::NotAFloat(
                "bitround rounds float16, bfloat16, float32, float64 and their complex types",
            ));
        }
    };
    if !(max_abs_error > 0.0 && max_abs_error.is_finite()) {
        return Err(ChooseError::Bound(max_abs_error));
    }
    if !max_abs.is_finite() {
        return Err(ChooseError::Bound(max_abs));
    }
    let e = binade(&l, max_abs);
    Ok((1..l.mantissa_bits)
        .find(|&k| f64::from(e - k as i32 - 1).exp2() <= max_abs_error)
        .unwrap_or(l.mantissa_bits))
}

/// The exponent `e` of the binade `[2^e, 2^(e+1))` holding `|x|`, at least the layout's
/// smallest normal exponent (subnormals are spaced as that binade).
pub(crate) fn binade(l: &FloatLayout, x: f64) -> i32 {
    let x = x.abs();
    let e = if x > 0.0 && x.is_finite() {
        x.log2().floor() as i32
    } else {
        i32::MIN / 2
    };
    // `log2` of a value just below a power of two may round up to it.
    let e = if f64::from(e).exp2() > x { e - 1 } else { e };
    e.max(l.min_normal_exponent())
}
