//! [`FiniteRange`]: the smallest and largest finite values of an array, the range the
//! `scale_offset` fit ([`super::fit`]) maps into a target's codes.

use ndarray::{ArrayBase, Data, Dimension};

use super::finite_range::finite_key_range;
use crate::convert::exact_of;
use crate::dtype::{DTypeId, Real};
use crate::error::ChooseError;
use crate::number::exact::Class;
use crate::number::layout::{FloatLayout, Format, NanEncoding};
use crate::number::storage::{Word, Words};

/// The smallest and largest finite values of an array (NaN and ±Inf skipped).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FiniteRange {
    /// The smallest finite value.
    pub min: f64,
    /// The largest finite value.
    pub max: f64,
}

impl FiniteRange {
    /// The finite range of `data`'s elements (exact: every element value of a type of at
    /// most 64 bits is an `f64`), `None` when no element is finite.
    ///
    /// ```
    /// use zquant::choose::FiniteRange;
    /// let a = ndarray::arr1(&[3.0f32, f32::NAN, -1.5, f32::INFINITY]);
    /// assert_eq!(FiniteRange::of(&a), Some(FiniteRange { min: -1.5, max: 3.0 }));
    /// ```
    pub fn of<T, S, D>(data: &ArrayBase<S, D>) -> Option<FiniteRange>
    where
        T: Real,
        S: Data<Elem = T>,
        D: Dimension,
    {
        if let Format::Float(l) = T::FORMAT
            && l.signed
        {
            if let Some(s) = data.as_slice_memory_order()
                && let Some(r) = float_range_words(&l, crate::convert::words_of(s))
            {
                return r;
            }
            return match data.as_slice_memory_order() {
                Some(s) => float_range(&l, s.iter().copied()),
                None => float_range(&l, data.iter().copied()),
            };
        }
        let mut range: Option<FiniteRange> = None;
        for x in data.iter() {
            let e = x.to_exact();
            if matches!(e.class, Class::Finite | Class::Zero) {
                let v = e.to_f64();
                range = Some(match range {
                    None => FiniteRange { min: v, max: v },
                    Some(r) => FiniteRange {
                        min: r.min.min(v),
                        max: r.max.max(v),
                    },
                });
            }
        }
        range
    }
}

impl FiniteRange {
    /// The range of both pieces: the statistics of an array larger than memory, merged
    /// chunk by chunk.
    ///
    /// ```
    /// use zquant::choose::FiniteRange;
    /// let a = FiniteRange { min: -1.5, max: 3.0 };
    /// let b = FiniteRange { min: 0.0, max: 7.25 };
    /// assert_eq!(a.merge(b), FiniteRange { min: -1.5, max: 7.25 });
    /// ```
    #[must_use]
    pub fn merge(self, other: FiniteRange) -> FiniteRange {
        FiniteRange {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// [`FiniteRange::of`] over the native-endian storage words of elements of the real
    /// type `id` (one word each, any order): for callers that hold the elements as words,
    /// such as the Python binding over a NumPy buffer. `None` when no element is finite.
    ///
    /// ```
    /// use zquant::{DTypeId, choose::FiniteRange, dtype::Words};
    /// let bits = [3.0f32, f32::NAN, -1.5, f32::NEG_INFINITY].map(f32::to_bits);
    /// let r = FiniteRange::of_words(DTypeId::Float32, Words::U32(&bits))?;
    /// assert_eq!(r, Some(FiniteRange { min: -1.5, max: 3.0 }));
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    ///
    /// # Errors
    /// [`ChooseError::Words`] for a type that is not real, or words of another width.
    pub fn of_words(id: DTypeId, words: Words<'_>) -> Result<Option<FiniteRange>, ChooseError> {
        let format = id.format().ok_or_else(|| {
            ChooseError::Words(format!("{id} is not a real (integer or float) data type"))
        })?;
        if words.bits() != id.word_bits() {
            return Err(ChooseError::Words(format!(
                "words of {} bits are not elements of {id} ({}-bit words)",
                words.bits(),
                id.word_bits()
            )));
        }
        if let Format::Float(l) = format
            && l.signed
            && let Some(r) = float_range_words(&l, words)
        {
            return Ok(r);
        }
        fn each<W: Word>(w: &[W], f: impl FnMut(u64)) {
            w.iter().map(|x| x.to_u64()).for_each(f);
        }
        let mask = format.mask();
        // The smallest and largest element by an order-preserving integer key of its code,
        // with the code, decoded once at the end.
        let (mut lo, mut hi) = ((i128::MAX, 0u64), (i128::MIN, 0u64));
        let mut visit = |code: u64| {
            let b = code & mask;
            let key = match format {
                Format::Float(l) => {
                    let mag = b & l.magnitude_mask();
                    if mag > l.max_finite_bits() || l.is_nan_bits(b) {
                        return;
                    }
                    if b & l.sign_bit() != 0 {
                        -i128::from(mag)
                    } else {
                        i128::from(mag)
                    }
                }
                Format::Int(l) if l.signed && l.bits < 64 && b >> (l.bits - 1) & 1 == 1 => {
                    i128::from(b) - (1i128 << l.bits)
                }
                Format::Int(l) if l.signed => i128::from(b as i64),
                Format::Int(_) => i128::from(b),
            };
            if key < lo.0 {
                lo = (key, b);
            }
            if key > hi.0 {
                hi = (key, b);
            }
        };
        match words {
            Words::U8(w) => each(w, &mut visit),
            Words::U16(w) => each(w, &mut visit),
            Words::U32(w) => each(w, &mut visit),
            Words::U64(w) => each(w, &mut visit),
        }
        let value = |b: u64| exact_of(format, b).to_f64();
        Ok((lo.0 <= hi.0).then(|| FiniteRange {
            min: value(lo.1),
            max: value(hi.1),
        }))
    }
}

/// The range of a signed float type's codes by the vectorized key fold
/// (`finite_range::finite_key_range`), for the layouts whose non-finite codes have
/// the largest magnitudes (`None`, "not this way", for the `fnuz` types): finite codes
/// ordered as sign-magnitude integers, ±0 equal and the first zero met standing for them
/// (as [`float_range`] does).
fn float_range_words(l: &FloatLayout, words: Words<'_>) -> Option<Option<FiniteRange>> {
    if l.nan == NanEncoding::NegativeZero {
        return None;
    }
    let (sign, mag, max) = (l.sign_bit(), l.magnitude_mask(), l.max_finite_bits());
    #[inline(always)]
    fn keys<W: Word>(w: &[W], sign: u64, mag: u64, max: u64) -> Option<(i64, i64)> {
        crate::arch::vectorized(
            #[inline(always)]
            || finite_key_range(w, sign, mag, max),
        )
    }
    fn first_zero<W: Word>(w: &[W], mag: u64) -> Option<u64> {
        w.iter().map(|x| x.to_u64()).find(|&b| b & mag == 0)
    }
    let range = match words {
        Words::U8(w) => keys(w, sign, mag, max),
        Words::U16(w) => keys(w, sign, mag, max),
        Words::U32(w) => keys(w, sign, mag, max),
        Words::U64(w) => keys(w, sign, mag, max),
    };
    let Some((lo, hi)) = range else {
        return Some(None);
    };
    // Only a zero end needs the first zero's sign (a scan that stops there).
    let zero = if lo == 0 || hi == 0 {
        match words {
            Words::U8(w) => first_zero(w, mag),
            Words::U16(w) => first_zero(w, mag),
            Words::U32(w) => first_zero(w, mag),
            Words::U64(w) => first_zero(w, mag),
        }
    } else {
        None
    };
    let format = Format::Float(*l);
    let code = |k: i64| match k {
        0 => zero.unwrap_or(0) & format.mask(),
        k if k < 0 => sign | k.unsigned_abs(),
        k => k as u64,
    };
    let value = |k: i64| exact_of(format, code(k)).to_f64();
    Some(Some(FiniteRange {
        min: value(lo),
        max: value(hi),
    }))
}

/// The range of a signed float type's elements by their codes: finite codes ordered as
/// sign-magnitude integers (±0 are equal), decoded once at the end.
fn float_range<T: Real>(l: &FloatLayout, xs: impl Iterator<Item = T>) -> Option<FiniteRange> {
    let (sign, mags, max_mag) = (l.sign_bit(), l.magnitude_mask(), l.max_finite_bits());
    let (mut lo, mut hi) = ((i64::MAX, 0u64), (i64::MIN, 0u64));
    for x in xs {
        let b = x.to_bits();
        let mag = b & mags;
        if mag > max_mag || l.is_nan_bits(b) {
            continue;
        }
        let key = if b & sign != 0 {
            -(mag as i64)
        } else {
            mag as i64
        };
        if key < lo.0 {
            lo = (key, b);
        }
        if key > hi.0 {
            hi = (key, b);
        }
    }
    let value = |b: u64| T::from_bits(b).to_exact().to_f64();
    (lo.0 <= hi.0).then(|| FiniteRange {
        min: value(lo.1),
        max: value(hi.1),
    })
}
