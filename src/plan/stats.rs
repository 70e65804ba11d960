//! `PlanStats`: what the planner needs to know of a whole float array, in one read,
//! mergeable across chunks and processes.

use serde_json::{Value, json};

use crate::choose::{BitCounts, ChooseError, FiniteRange, InformationOptions};
use crate::convert::exact_of;
use crate::dtype::DTypeId;
use crate::number::layout::Format;
use crate::number::storage::{Word, Words};

/// Statistics of a float array for [`plan`](crate::plan::plan): element counts by class,
/// the finite range, the smallest nonzero magnitude, and (for an information target) the
/// bit-pair counts along one axis. Computed per chunk ([`PlanStats::of_words`],
/// [`PlanStats::of`]) and merged ([`PlanStats::merge`]), so an array never has to be in
/// memory whole; [`PlanStats::to_json`] / [`PlanStats::from_json`] carry them between
/// processes.
///
/// ```
/// use zquant::DTypeId;
/// use zquant::dtype::Words;
/// use zquant::plan::PlanStats;
///
/// let a = [0.0f32, 2.5, f32::NAN, -1.0].map(f32::to_bits);
/// let b = [7.0f32, 0.25].map(f32::to_bits);
/// let mut s = PlanStats::of_words(DTypeId::Float32, Words::U32(&a), &[4], None)?;
/// s.merge(&PlanStats::of_words(DTypeId::Float32, Words::U32(&b), &[2], None)?)?;
/// assert_eq!((s.elements, s.nan, s.zeros), (6, 1, 1));
/// assert_eq!((s.range.unwrap().min, s.range.unwrap().max), (-1.0, 7.0));
/// assert_eq!(s.min_nonzero_abs, Some(0.25));
/// let back = PlanStats::from_json(&s.to_json())?;
/// assert_eq!(back, s);
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStats {
    /// The element type (a signed float type).
    pub dtype: DTypeId,
    /// Elements seen.
    pub elements: u64,
    /// NaN elements.
    pub nan: u64,
    /// `+inf` elements.
    pub pos_inf: u64,
    /// `-inf` elements.
    pub neg_inf: u64,
    /// Zeros (either sign).
    pub zeros: u64,
    /// The finite range, `None` when no element is finite.
    pub range: Option<FiniteRange>,
    /// The smallest nonzero finite magnitude, `None` when there is none.
    pub min_nonzero_abs: Option<f64>,
    /// Bit-pair counts along one axis, when asked for (an information target).
    pub counts: Option<BitCounts>,
}

impl PlanStats {
    /// No elements yet, of `dtype` (the identity of [`PlanStats::merge`]).
    ///
    /// ```
    /// let s = zquant::plan::PlanStats::empty(zquant::DTypeId::Float64);
    /// assert_eq!(s.elements, 0);
    /// ```
    pub fn empty(dtype: DTypeId) -> PlanStats {
        PlanStats {
            dtype,
            elements: 0,
            nan: 0,
            pos_inf: 0,
            neg_inf: 0,
            zeros: 0,
            range: None,
            min_nonzero_abs: None,
            counts: None,
        }
    }

    /// The largest finite magnitude (0 when no element is finite).
    ///
    /// ```
    /// use zquant::choose::FiniteRange;
    /// let mut s = zquant::plan::PlanStats::empty(zquant::DTypeId::Float64);
    /// s.range = Some(FiniteRange { min: -9.0, max: 3.0 });
    /// assert_eq!(s.max_abs(), 9.0);
    /// ```
    pub fn max_abs(&self) -> f64 {
        self.range.map_or(0.0, |r| r.min.abs().max(r.max.abs()))
    }

    /// The statistics of a chunk given as native-endian storage words of a signed float
    /// type `id`, `shape` in C order; `axis`: also count bit pairs along that axis (for an
    /// information target).
    ///
    /// ```
    /// use zquant::{DTypeId, dtype::Words, plan::PlanStats};
    /// let w: Vec<u64> = (0..64).map(|i| (i as f64 * 0.1).sin().to_bits()).collect();
    /// let s = PlanStats::of_words(DTypeId::Float64, Words::U64(&w), &[8, 8], Some(1))?;
    /// assert!(s.counts.is_some());
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    ///
    /// # Errors
    /// [`ChooseError::SourceNotFloat`] for a type that is not a signed float type;
    /// [`ChooseError::Words`] for words that do not hold `shape`; the errors of
    /// [`BitCounts::of_words`].
    pub fn of_words(
        id: DTypeId,
        words: Words<'_>,
        shape: &[usize],
        axis: Option<usize>,
    ) -> Result<PlanStats, ChooseError> {
        let l = match id.format() {
            Some(Format::Float(l)) if l.signed => l,
            _ => return Err(ChooseError::SourceNotFloat(id.name())),
        };
        let n: Option<usize> = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if words.bits() != id.word_bits() || n != Some(words.len()) {
            return Err(ChooseError::Words(format!(
                "{} words of {} bits do not hold shape {shape:?} of {id}",
                words.len(),
                words.bits()
            )));
        }
        let mut acc = Acc::default();
        let format = Format::Float(l);
        match (id, words) {
            (DTypeId::Float64, Words::U64(w)) => w.iter().for_each(|&b| acc.add(f64::from_bits(b))),
            (DTypeId::Float32, Words::U32(w)) => {
                w.iter()
                    .for_each(|&b| acc.add(f64::from(f32::from_bits(b))));
            }
            (DTypeId::Float16, Words::U16(w)) => {
                w.iter()
                    .for_each(|&b| acc.add(half::f16::from_bits(b).to_f64()));
            }
            (DTypeId::BFloat16, Words::U16(w)) => {
                w.iter()
                    .for_each(|&b| acc.add(half::bf16::from_bits(b).to_f64()));
            }
            (_, w) => each(w, |b| {
                let x = exact_of(format, b).to_f64();
                // NaN codes (any payload, fnuz's `-0`) are NaN as `f64` too.
                acc.add(x)
            }),
        }
        let counts = match axis {
            Some(axis) => Some(BitCounts::of_words(
                id,
                words,
                shape,
                &InformationOptions {
                    axis: Some(axis),
                    ..InformationOptions::default()
                },
            )?),
            None => None,
        };
        Ok(acc.finish(id, counts))
    }

    /// [`PlanStats::of_words`] of a typed array (any layout).
    ///
    /// ```
    /// let a = ndarray::arr2(&[[1.0f32, 0.0], [f32::NAN, -4.0]]);
    /// let s = zquant::plan::PlanStats::of(&a, None)?;
    /// assert_eq!((s.elements, s.nan, s.zeros, s.max_abs()), (4, 1, 1, 4.0));
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    ///
    /// # Errors
    /// As [`PlanStats::of_words`].
    pub fn of<T, S, D>(
        data: &ndarray::ArrayBase<S, D>,
        axis: Option<usize>,
    ) -> Result<PlanStats, ChooseError>
    where
        T: crate::dtype::Real,
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        let id =
            crate::dtype::register_dtype::<T>().map_err(|e| ChooseError::Words(e.to_string()))?;
        let standard = data.as_standard_layout();
        let slice = standard
            .as_slice()
            .ok_or_else(|| ChooseError::Words("array is not in standard layout".into()))?;
        PlanStats::of_words(id, crate::convert::words_of(slice), data.shape(), axis)
    }

    /// Add another piece's statistics (of the same type; bit counts along the same axis,
    /// or none on both sides).
    ///
    /// # Errors
    /// [`ChooseError::Merge`] for pieces of different types, or counts that do not merge.
    pub fn merge(&mut self, other: &PlanStats) -> Result<(), ChooseError> {
        if self.dtype != other.dtype {
            return Err(ChooseError::Merge(format!(
                "statistics of {} and of {}",
                self.dtype, other.dtype
            )));
        }
        self.counts = match (self.counts.take(), &other.counts) {
            (Some(mut a), Some(b)) => {
                a.merge(b)?;
                Some(a)
            }
            (None, None) => None,
            (a, b) => {
                if other.elements == 0 {
                    a
                } else if self.elements == 0 {
                    b.clone()
                } else {
                    return Err(ChooseError::Merge(
                        "statistics with bit counts and without: compute every piece with the \
                         same axis"
                            .into(),
                    ));
                }
            }
        };
        self.elements += other.elements;
        self.nan += other.nan;
        self.pos_inf += other.pos_inf;
        self.neg_inf += other.neg_inf;
        self.zeros += other.zeros;
        self.range = match (self.range, other.range) {
            (Some(a), Some(b)) => Some(a.merge(b)),
            (a, b) => a.or(b),
        };
        self.min_nonzero_abs = match (self.min_nonzero_abs, other.min_nonzero_abs) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Ok(())
    }

    /// The statistics as JSON (numbers as JSON numbers; the bit counts in
    /// [`BitCounts`]'s serde form).
    ///
    /// ```
    /// let s = zquant::plan::PlanStats::empty(zquant::DTypeId::Float32);
    /// assert_eq!(s.to_json()["dtype"], "float32");
    /// ```
    pub fn to_json(&self) -> Value {
        json!({
            "dtype": self.dtype.name(),
            "elements": self.elements,
            "nan": self.nan,
            "pos_inf": self.pos_inf,
            "neg_inf": self.neg_inf,
            "zeros": self.zeros,
            "min": self.range.map(|r| r.min),
            "max": self.range.map(|r| r.max),
            "min_nonzero_abs": self.min_nonzero_abs,
            "counts": self.counts.as_ref().map(|c| serde_json::to_value(c).unwrap_or(Value::Null)),
        })
    }

    /// The statistics back from [`PlanStats::to_json`].
    ///
    /// # Errors
    /// [`ChooseError::Plan`] for JSON of another shape.
    pub fn from_json(v: &Value) -> Result<PlanStats, ChooseError> {
        let bad = |what: &str| ChooseError::Plan(format!("statistics JSON: {what} in {v}"));
        let dtype: DTypeId = v["dtype"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no known \"dtype\""))?;
        let count = |k: &str| v[k].as_u64().ok_or_else(|| bad(k));
        let num = |k: &str| -> Result<Option<f64>, ChooseError> {
            match &v[k] {
                Value::Null => Ok(None),
                x => x.as_f64().map(Some).ok_or_else(|| bad(k)),
            }
        };
        let range = match (num("min")?, num("max")?) {
            (Some(min), Some(max)) if min <= max => Some(FiniteRange { min, max }),
            (None, None) => None,
            _ => return Err(bad("\"min\"/\"max\"")),
        };
        let counts = match &v["counts"] {
            Value::Null => None,
            c => Some(serde_json::from_value(c.clone()).map_err(|e| bad(&e.to_string()))?),
        };
        Ok(PlanStats {
            dtype,
            elements: count("elements")?,
            nan: count("nan")?,
            pos_inf: count("pos_inf")?,
            neg_inf: count("neg_inf")?,
            zeros: count("zeros")?,
            range,
            min_nonzero_abs: num("min_nonzero_abs")?,
            counts,
        })
    }
}

fn each<F: FnMut(u64)>(words: Words<'_>, mut f: F) {
    fn go<W: Word>(w: &[W], f: &mut impl FnMut(u64)) {
        w.iter().for_each(|x| f(x.to_u64()));
    }
    match words {
        Words::U8(w) => go(w, &mut f),
        Words::U16(w) => go(w, &mut f),
        Words::U32(w) => go(w, &mut f),
        Words::U64(w) => go(w, &mut f),
    }
}

/// The one pass: branch-light folds over `f64` values.
struct Acc {
    elements: u64,
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
    zeros: u64,
    min: f64,
    max: f64,
    min_nz: f64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            elements: 0,
            nan: 0,
            pos_inf: 0,
            neg_inf: 0,
            zeros: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            min_nz: f64::INFINITY,
        }
    }
}

impl Acc {
    #[inline(always)]
    fn add(&mut self, x: f64) {
        self.elements += 1;
        if x.is_finite() {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
            let a = x.abs();
            if a == 0.0 {
                self.zeros += 1;
            } else {
                self.min_nz = self.min_nz.min(a);
            }
        } else if x.is_nan() {
            self.nan += 1;
        } else if x > 0.0 {
            self.pos_inf += 1;
        } else {
            self.neg_inf += 1;
        }
    }

    fn finish(self, dtype: DTypeId, counts: Option<BitCounts>) -> PlanStats {
        PlanStats {
            dtype,
            elements: self.elements,
            nan: self.nan,
            pos_inf: self.pos_inf,
            neg_inf: self.neg_inf,
            zeros: self.zeros,
            range: (self.min <= self.max).then_some(FiniteRange {
                min: self.min,
                max: self.max,
            }),
            min_nonzero_abs: self.min_nz.is_finite().then_some(self.min_nz),
            counts,
        }
    }
}
