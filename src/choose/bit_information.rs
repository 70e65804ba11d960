//! Bitwise real information content (Klöwer et al. 2021), as BitInformation.jl computes it.
//!
//! For each bit position, the mutual information between that bit in an element and in its
//! neighbour along one axis, from the 2×2 joint counts of the bit pairs:
//!
//! ```text
//! M = Σ_jk p_jk log2(p_jk / (p_j· p_·k))      p_jk = n_jk / N, N = the unmasked pairs
//! ```
//!
//! Floats are first put in the *signed-exponent* representation (BitInformation.jl's
//! `signed_exponent`: the biased exponent `e` becomes the sign of `e - bias` in the first
//! exponent bit and `|e - bias|` in the others), so that a value's magnitude maps to
//! neighbouring exponent bits. Information not significantly different from that of a fair
//! coin is set to zero (BitInformation.jl's `set_zero_insignificant`): with
//! `p = 0.5 + z / (2√N)`, `z` the normal quantile of `1 - (1 - confidence) / 2`, every
//! `M <= 1 - H(p)` becomes 0, `H` the binary entropy.
//!
//! The module is laid out by concern: this file is the API (options, [`BitInformation`],
//! [`BitCounts`] and how an array is cut into pairs); `json` the counts' JSON form;
//! `prepare` the word preparation (signed exponent and masks); `positional` and `sliced`
//! the two pair counters (the arch twins in `arch::bit_slice`); `statistics` the mutual
//! information and the significance test.

mod json;
mod positional;
mod prepare;
mod sliced;
mod statistics;
#[cfg(test)]
mod tests;

use ndarray::{ArrayBase, Axis, Data, Dimension};

use super::ChooseError;
use crate::dtype::{DTypeId, Real};
use crate::number::layout::{FloatLayout, Format};
use crate::number::storage::Words;
use positional::count_positional;
use prepare::Prepare;
pub use prepare::signed_exponent;
use statistics::PairCounts;
pub use statistics::free_entropy;

/// How to compute [`BitInformation`]. `InformationOptions::default()` is BitInformation.jl's
/// and xbitinfo's default: the last axis, confidence 0.99, insignificant information set to
/// zero, NaN masked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InformationOptions {
    /// The axis along which neighbours are taken; `None` is the last axis.
    pub axis: Option<usize>,
    /// Confidence of the binomial test that zeroes insignificant information, in (0, 1).
    pub confidence: f64,
    /// Whether to apply that test (BitInformation.jl's `set_zero_insignificant`).
    pub set_zero_insignificant: bool,
    /// Whether NaN elements (any payload) are masked.
    pub mask_nan: bool,
    /// A code masked in addition (a fill value as raw bits, e.g. `x.to_bits()`); compared
    /// bit for bit, as BitInformation.jl's `masked_value` (`===`).
    pub masked_bits: Option<u64>,
}

impl Default for InformationOptions {
    fn default() -> Self {
        InformationOptions {
            axis: None,
            confidence: 0.99,
            set_zero_insignificant: true,
            mask_nan: true,
            masked_bits: None,
        }
    }
}

/// The real information of each bit position of an array's elements.
///
/// ```
/// use zquant::choose::{BitInformation, InformationOptions};
///
/// // A smooth field: neighbours share their high bits.
/// let field = ndarray::Array::from_shape_fn((64, 256), |(i, j)| {
///     280.0f32 + 10.0 * ((i as f32) / 9.0).sin() * ((j as f32) / 17.0).cos()
/// });
/// let info = BitInformation::of(&field, &InformationOptions::default())?;
/// assert_eq!(info.per_bit().len(), 32);        // sign bit first, last mantissa bit last
/// let keepbits = info.keepbits(0.99)?;          // what xbitinfo's get_keepbits returns
/// assert!((1..=23).contains(&keepbits));
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BitInformation {
    per_bit: Vec<f64>,
    pairs: u64,
    format: Format,
    free_entropy: Option<f64>,
}

impl BitInformation {
    /// The information of each bit of `data`'s elements with their neighbours along
    /// `opts.axis`, in one pass over the data in memory order (any layout).
    ///
    /// # Errors
    /// [`ChooseError::Axis`] for an axis the array does not have,
    /// [`ChooseError::Confidence`] for a confidence outside (0, 1), and
    /// [`ChooseError::NoPairs`] when no two adjacent elements are both unmasked.
    pub fn of<T, S, D>(
        data: &ArrayBase<S, D>,
        opts: &InformationOptions,
    ) -> Result<Self, ChooseError>
    where
        T: Real,
        S: Data<Elem = T>,
        D: Dimension,
    {
        BitCounts::of(data, opts)?.information(opts)
    }

    /// The information of counted (and perhaps merged) pairs: [`BitCounts::information`],
    /// named from this side.
    ///
    /// ```
    /// use zquant::choose::{BitCounts, BitInformation, InformationOptions};
    /// let a = ndarray::Array2::from_shape_fn((8, 64), |(i, j)| (i * 64 + j) as f32 * 0.01);
    /// let opts = InformationOptions::default();
    /// let counts = BitCounts::of(&a, &opts)?;
    /// assert_eq!(BitInformation::from_counts(&counts, &opts)?, BitInformation::of(&a, &opts)?);
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    ///
    /// # Errors
    /// As [`BitCounts::information`].
    pub fn from_counts(counts: &BitCounts, opts: &InformationOptions) -> Result<Self, ChooseError> {
        counts.information(opts)
    }

    /// The information (bits) of each bit position, most significant first: for a float
    /// the sign, the exponent bits, then the mantissa bits (xbitinfo's `±, e1, …, m1, …`).
    pub fn per_bit(&self) -> &[f64] {
        &self.per_bit
    }

    /// The number of adjacent unmasked pairs counted (`N`).
    pub fn pairs(&self) -> u64 {
        self.pairs
    }

    /// The element layout the information is about.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The threshold below which information was set to zero (`1 - H(p)`), when the
    /// significance test was applied.
    pub fn free_entropy(&self) -> Option<f64> {
        self.free_entropy
    }

    /// The float layout, or the error that keepbits needs one.
    pub(super) fn float_layout(&self) -> Result<FloatLayout, ChooseError> {
        match self.format {
            Format::Float(l) if l.signed => Ok(l),
            _ => Err(ChooseError::NotAFloat(
                "keepbits by information is defined for signed float types",
            )),
        }
    }
}

/// The resolved axis of an array of `ndim` dimensions, and the confidence, checked.
fn check_options(ndim: usize, opts: &InformationOptions) -> Result<usize, ChooseError> {
    let axis = match opts.axis {
        Some(a) if a < ndim => a,
        None if ndim > 0 => ndim - 1,
        a => {
            return Err(ChooseError::Axis {
                axis: a.unwrap_or(0),
                ndim,
            });
        }
    };
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        return Err(ChooseError::Confidence(opts.confidence));
    }
    Ok(axis)
}

/// The joint bit counts of neighbouring elements from which [`BitInformation`] is
/// computed, **mergeable**: the counts of the pieces of an array add up.
///
/// This is how a chunked array (a dask array, a Zarr store) gets its bit information
/// without ever being whole in one process: count each chunk, [`BitCounts::merge`] the
/// counts, then take [`BitCounts::information`] once.
///
/// **The edge effect.** A chunk's counts hold the pairs of neighbours inside it. The pairs
/// that cross a chunk edge *along the axis* are in neither chunk: merged chunk counts
/// equal the whole array's minus those pairs (chunk edges across other axes lose nothing).
/// To be exact, also count, for each edge along the axis, the two-element-thick slab made
/// of the last slice before the edge and the first slice after it: its pairs are exactly
/// the missing ones. (The Python package's `zquant.choose` does so for dask arrays.)
///
/// ```
/// use ndarray::{Array2, Axis, s};
/// use zquant::choose::{BitCounts, BitInformation, InformationOptions};
///
/// let field = Array2::from_shape_fn((40, 300), |(i, j)| {
///     (i as f32 * 0.3).sin() * 50.0 + (j as f32 * 0.05).cos()
/// });
/// let opts = InformationOptions::default(); // neighbours along the last axis
/// // Chunks of 10 rows: edges across axis 0, so nothing is lost.
/// let mut merged = BitCounts::of(&field.slice(s![..10, ..]), &opts)?;
/// for rows in [10..20, 20..40] {
///     merged.merge(&BitCounts::of(&field.slice(s![rows, ..]), &opts)?)?;
/// }
/// assert_eq!(merged, BitCounts::of(&field, &opts)?);
/// let info = merged.information(&opts)?;
/// assert_eq!(info, BitInformation::of(&field, &opts)?);
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
///
/// **JSON.** With serde, counts are the object
/// `{"data_type": "float32", "axis": 1, "pairs": N, "a": [...], "b": [...], "both": [...]}`:
/// the element type by its Zarr name, the axis, the pairs counted, and per bit position
/// (index 0 the least significant, as many as the type has bits) the pairs whose first
/// element has the bit (`a`), whose second has it (`b`), and whose two have it (`both`),
/// as JSON integers (exact up to `u64::MAX`). Reading it checks the counts as
/// [`BitCounts::from_parts`] does.
///
/// ```
/// use zquant::choose::{BitCounts, InformationOptions};
/// let a = ndarray::arr2(&[[1.0f32, 1.5, 1.75], [2.0, 2.5, 3.0]]);
/// let counts = BitCounts::of(&a, &InformationOptions::default())?;
/// let json = serde_json::to_value(&counts).expect("serializes");
/// assert_eq!(json["data_type"], "float32");
/// assert_eq!(json["pairs"], 4);
/// assert_eq!(json["a"].as_array().map(Vec::len), Some(32));
/// let back: BitCounts = serde_json::from_value(json).expect("reads back");
/// assert_eq!(back, counts);
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "json::BitCountsJson", into = "json::BitCountsJson")]
pub struct BitCounts {
    format: Format,
    axis: usize,
    counts: PairCounts,
}

impl BitCounts {
    /// The counts of `data`'s neighbours along `opts.axis` (masking as `opts` says), in
    /// one pass over the data in memory order (any layout).
    ///
    /// # Errors
    /// [`ChooseError::Axis`] for an axis the array does not have, and
    /// [`ChooseError::Confidence`] for a confidence outside (0, 1). An array without a
    /// pair is not an error here (its counts are zero), only in
    /// [`BitCounts::information`].
    pub fn of<T, S, D>(
        data: &ArrayBase<S, D>,
        opts: &InformationOptions,
    ) -> Result<Self, ChooseError>
    where
        T: Real,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let axis = check_options(data.ndim(), opts)?;
        Ok(BitCounts {
            format: T::FORMAT,
            axis,
            counts: count_pairs(data, Axis(axis), opts),
        })
    }

    /// [`BitCounts::of`] over the native-endian storage words of an array of real type
    /// `id` and `shape`, in C order (one word per element): for callers that hold the
    /// elements as words, such as the Python binding over a NumPy buffer.
    ///
    /// # Errors
    /// As [`BitCounts::of`]; [`ChooseError::Words`] for a type that is not real, or words of
    /// another width or count than `shape`'s elements of `id`.
    pub fn of_words(
        id: DTypeId,
        words: Words<'_>,
        shape: &[usize],
        opts: &InformationOptions,
    ) -> Result<Self, ChooseError> {
        let format = id.format().ok_or_else(|| {
            ChooseError::Words(format!("{id} is not a real (integer or float) data type"))
        })?;
        let n: Option<usize> = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if words.bits() != id.word_bits() || n != Some(words.len()) {
            return Err(ChooseError::Words(format!(
                "{} words of {} bits do not hold shape {shape:?} of {id} (one {}-bit word each)",
                words.len(),
                words.bits(),
                id.word_bits()
            )));
        }
        let axis = check_options(shape.len(), opts)?;
        let len = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let counts = if len < 2 || inner == 0 {
            PairCounts::new()
        } else {
            match words {
                Words::U8(w) => count_positional(w, len, inner, Prepare::new(format, opts)),
                Words::U16(w) => count_positional(w, len, inner, Prepare::new(format, opts)),
                Words::U32(w) => count_positional(w, len, inner, Prepare::new(format, opts)),
                Words::U64(w) => count_positional(w, len, inner, Prepare::new(format, opts)),
            }
        };
        Ok(BitCounts {
            format,
            axis,
            counts,
        })
    }

    /// Counts from their parts, as [`BitCounts::parts`] gives them (for counts sent between
    /// processes): for bit `p` (0 the least significant), `a[p]` pairs whose first element
    /// has the bit, `b[p]` whose second has it, `both[p]` whose two have it.
    ///
    /// # Errors
    /// [`ChooseError::Words`] for counts no data can give: a bit beyond the format's, or
    /// `both > min(a, b)`, or `a + b - both > pairs`.
    pub fn from_parts(
        format: Format,
        axis: usize,
        pairs: u64,
        [a, b, both]: [[u64; 64]; 3],
    ) -> Result<Self, ChooseError> {
        let bits = format.bits() as usize;
        for p in 0..64 {
            let valid = if p < bits {
                both[p] <= a[p].min(b[p])
                    && a[p].checked_add(b[p]).is_some_and(|s| s - both[p] <= pairs)
            } else {
                a[p] == 0 && b[p] == 0 && both[p] == 0
            };
            if !valid {
                return Err(ChooseError::Words(format!(
                    "inconsistent bit counts at bit {p}: a = {}, b = {}, both = {} of {pairs} \
                     pairs",
                    a[p], b[p], both[p]
                )));
            }
        }
        Ok(BitCounts {
            format,
            axis,
            counts: PairCounts { pairs, a, b, both },
        })
    }

    /// The parts: pairs counted, and per bit `[a, b, both]` (see [`BitCounts::from_parts`]).
    pub fn parts(&self) -> (u64, [[u64; 64]; 3]) {
        let c = &self.counts;
        (c.pairs, [c.a, c.b, c.both])
    }

    /// The element format counted.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The axis along which neighbours were paired.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The number of unmasked pairs counted.
    pub fn pairs(&self) -> u64 {
        self.counts.pairs
    }

    /// Add `other`'s counts (another piece of the same array) to these.
    ///
    /// # Errors
    /// [`ChooseError::Merge`] when the two count another format or along another axis, or
    /// the sums overflow `u64`.
    pub fn merge(&mut self, other: &BitCounts) -> Result<(), ChooseError> {
        if self.format != other.format || self.axis != other.axis {
            return Err(ChooseError::Merge(format!(
                "counts of {:?} along axis {} and of {:?} along axis {}",
                self.format, self.axis, other.format, other.axis
            )));
        }
        let overflow = || ChooseError::Merge("the counts overflow u64".into());
        let (c, o) = (&mut self.counts, &other.counts);
        let mut sum = c.clone();
        sum.pairs = c.pairs.checked_add(o.pairs).ok_or_else(overflow)?;
        for p in 0..64 {
            sum.a[p] = c.a[p].checked_add(o.a[p]).ok_or_else(overflow)?;
            sum.b[p] = c.b[p].checked_add(o.b[p]).ok_or_else(overflow)?;
            sum.both[p] = c.both[p].checked_add(o.both[p]).ok_or_else(overflow)?;
        }
        *c = sum;
        Ok(())
    }

    /// The bit information of the counted pairs, with `opts.confidence` and
    /// `opts.set_zero_insignificant` (the counting options were used by
    /// [`BitCounts::of`]).
    ///
    /// # Errors
    /// [`ChooseError::Confidence`] for a confidence outside (0, 1), and
    /// [`ChooseError::NoPairs`] when no pair was counted.
    pub fn information(&self, opts: &InformationOptions) -> Result<BitInformation, ChooseError> {
        if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
            return Err(ChooseError::Confidence(opts.confidence));
        }
        let counts = &self.counts;
        if counts.pairs == 0 {
            return Err(ChooseError::NoPairs { axis: self.axis });
        }
        let per_bit: Vec<f64> = (0..self.format.bits() as usize)
            .rev()
            .map(|p| counts.mutual_information(p))
            .collect();
        let mut info = BitInformation {
            per_bit,
            pairs: counts.pairs,
            format: self.format,
            free_entropy: None,
        };
        if opts.set_zero_insignificant {
            let free = free_entropy(counts.pairs, opts.confidence);
            for m in &mut info.per_bit {
                if *m <= free {
                    *m = 0.0;
                }
            }
            info.free_entropy = Some(free);
        }
        Ok(info)
    }
}

/// Count the bit pairs of neighbours along `axis`, in memory order. A C- or F-contiguous
/// array is seen as blocks of `n × inner` elements in which element `j` pairs with
/// `j + inner`: two contiguous slices per block. Another layout is first copied into C
/// order.
fn count_pairs<T, S, D>(data: &ArrayBase<S, D>, axis: Axis, opts: &InformationOptions) -> PairCounts
where
    T: Real,
    S: Data<Elem = T>,
    D: Dimension,
{
    let n = data.len_of(axis);
    if n < 2 {
        return PairCounts::new();
    }
    let shape = data.shape();
    let k = axis.index();
    let blocks = if let Some(flat) = data.as_slice() {
        Some((flat, shape[k + 1..].iter().product::<usize>()))
    } else if data.t().is_standard_layout() {
        // F order: the axes before `axis` vary faster.
        data.as_slice_memory_order()
            .map(|flat| (flat, shape[..k].iter().product::<usize>()))
    } else {
        None
    };
    let (f, o) = (T::FORMAT, opts);
    let by_width = |flat: &[T], inner: usize| match crate::convert::words_of(flat) {
        Words::U8(w) => count_positional(w, n, inner, Prepare::new(f, o)),
        Words::U16(w) => count_positional(w, n, inner, Prepare::new(f, o)),
        Words::U32(w) => count_positional(w, n, inner, Prepare::new(f, o)),
        Words::U64(w) => count_positional(w, n, inner, Prepare::new(f, o)),
    };
    match blocks {
        Some((flat, inner)) => by_width(flat, inner),
        None => {
            let c = data.as_standard_layout();
            by_width(c.as_slice().unwrap_or(&[]), shape[k + 1..].iter().product())
        }
    }
}
