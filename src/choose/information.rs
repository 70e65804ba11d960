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

use ndarray::{ArrayBase, Axis, Data, Dimension};
use num_traits::{PrimInt, WrappingAdd, WrappingSub};

use super::ChooseError;
use crate::convert::bit_counts::{
    PlaneCounts, SliceWord, block_pattern, count_plane_pairs, transpose_groups,
};
use crate::dtype::{DTypeId, Real};
use crate::number::layout::{FloatLayout, Format, NanEncoding};
use crate::number::storage::{Word, Words};

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
#[serde(try_from = "BitCountsJson", into = "BitCountsJson")]
pub struct BitCounts {
    format: Format,
    axis: usize,
    counts: PairCounts,
}

/// The JSON form of [`BitCounts`].
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BitCountsJson {
    data_type: String,
    axis: usize,
    pairs: u64,
    a: Vec<u64>,
    b: Vec<u64>,
    both: Vec<u64>,
}

impl From<BitCounts> for BitCountsJson {
    fn from(c: BitCounts) -> Self {
        let bits = c.format.bits() as usize;
        // Every built-in real type has a format of its own; a format no built-in type has
        // (none counted by `BitCounts::of` today) is named by its layout.
        let data_type = DTypeId::ALL
            .iter()
            .find(|id| id.format() == Some(c.format))
            .map_or_else(|| format!("{:?}", c.format), |id| id.name().to_string());
        let p = &c.counts;
        BitCountsJson {
            data_type,
            axis: c.axis,
            pairs: p.pairs,
            a: p.a[..bits].to_vec(),
            b: p.b[..bits].to_vec(),
            both: p.both[..bits].to_vec(),
        }
    }
}

impl TryFrom<BitCountsJson> for BitCounts {
    type Error = ChooseError;
    fn try_from(j: BitCountsJson) -> Result<Self, ChooseError> {
        let id: DTypeId = j
            .data_type
            .parse()
            .map_err(|e| ChooseError::Words(format!("bit counts: {e}")))?;
        let format = id.format().ok_or_else(|| {
            ChooseError::Words(format!("bit counts of {id}, which is not a real data type"))
        })?;
        let bits = format.bits() as usize;
        let mut parts = [[0u64; 64]; 3];
        for (out, v) in parts.iter_mut().zip([&j.a, &j.b, &j.both]) {
            if v.len() != bits {
                return Err(ChooseError::Words(format!(
                    "bit counts of {id} need {bits} counts per list, got {}",
                    v.len()
                )));
            }
            out[..bits].copy_from_slice(v);
        }
        BitCounts::from_parts(format, j.axis, j.pairs, parts)
    }
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
        Self::counted(data, opts, Engine::Positional)
    }

    /// [`BitCounts::of`] by the bit-sliced counter of the previous session (a bit-matrix
    /// transpose, then three popcounts per bit position and 64 pairs), kept to benchmark
    /// the positional counter against: the two give identical counts. Not part of the
    /// stable API.
    ///
    /// # Errors
    /// As [`BitCounts::of`].
    #[doc(hidden)]
    pub fn of_sliced<T, S, D>(
        data: &ArrayBase<S, D>,
        opts: &InformationOptions,
    ) -> Result<Self, ChooseError>
    where
        T: Real,
        S: Data<Elem = T>,
        D: Dimension,
    {
        Self::counted(data, opts, Engine::Sliced)
    }

    /// [`BitCounts::of`] by the implementation before bit slicing (a byte-lane counter per
    /// pair), kept as the reference the bit-sliced one is tested and benchmarked against:
    /// the two give identical counts. Not part of the stable API.
    ///
    /// # Errors
    /// As [`BitCounts::of`].
    #[doc(hidden)]
    pub fn of_reference<T, S, D>(
        data: &ArrayBase<S, D>,
        opts: &InformationOptions,
    ) -> Result<Self, ChooseError>
    where
        T: Real,
        S: Data<Elem = T>,
        D: Dimension,
    {
        Self::counted(data, opts, Engine::Reference)
    }

    /// The three counters' common entry: options checked, then `engine` over `data`.
    fn counted<T, S, D>(
        data: &ArrayBase<S, D>,
        opts: &InformationOptions,
        engine: Engine,
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
            counts: count_pairs(data, Axis(axis), opts, engine),
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
                Words::U8(w) => count_words(
                    Engine::Positional,
                    w,
                    len,
                    inner,
                    Prepare::new(format, opts),
                ),
                Words::U16(w) => count_words(
                    Engine::Positional,
                    w,
                    len,
                    inner,
                    Prepare::new(format, opts),
                ),
                Words::U32(w) => count_words(
                    Engine::Positional,
                    w,
                    len,
                    inner,
                    Prepare::new(format, opts),
                ),
                Words::U64(w) => count_words(
                    Engine::Positional,
                    w,
                    len,
                    inner,
                    Prepare::new(format, opts),
                ),
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

/// The word -> counted word function: the code (in the signed-exponent representation
/// for a signed float) and its mask, all ones or 0 for a masked element. Every case is one
/// branch-free formula of loop-invariant words (an integer type is a float without
/// exponent bits; each NaN encoding a range of masked codes), so that the tile loop
/// vectorizes in lanes of the data's own width `W`, compiled once per width.
#[derive(Clone, Copy)]
struct Prepare<W> {
    /// The code bits of a word.
    code: W,
    /// NaN: `(code & nan_mask) - nan_lo <= nan_span` (wrapping), when `nan_on` is all ones.
    nan_on: W,
    nan_mask: W,
    nan_lo: W,
    nan_span: W,
    /// The masked code, when `masked_on` is all ones.
    masked_on: W,
    masked: W,
    /// The exponent field (0 for integers), its shift, bias and the signed-exponent sign.
    emask: W,
    shift: usize,
    bias: W,
    esign: W,
}

impl<W: Word + PrimInt + WrappingAdd + WrappingSub> Prepare<W> {
    /// The function for elements of `format` (whose code fits `W`) under `opts`.
    fn new(format: Format, opts: &InformationOptions) -> Self {
        let w = W::from_u64;
        let ones = |b: bool| w(0u64.wrapping_sub(u64::from(b)));
        let code = format.mask();
        let mut p = Prepare {
            code: w(code),
            nan_on: W::zero(),
            nan_mask: W::zero(),
            nan_lo: W::zero(),
            nan_span: W::zero(),
            masked_on: ones(opts.masked_bits.is_some()),
            masked: w(opts.masked_bits.unwrap_or(0) & code),
            emask: W::zero(),
            shift: 0,
            bias: W::zero(),
            esign: W::zero(),
        };
        if let Format::Float(l) = format
            && l.signed
        {
            let m = l.mantissa_bits;
            let all_exp = ((1u64 << l.exponent_bits) - 1) << m;
            let mag = l.magnitude_mask();
            let (mask, lo, hi) = match l.nan {
                NanEncoding::Ieee => (mag, all_exp + 1, mag),
                NanEncoding::AllOnes => (mag, mag, mag),
                NanEncoding::NegativeZero => (mag | l.sign_bit(), l.sign_bit(), l.sign_bit()),
                NanEncoding::None => (0, 0, 0),
            };
            p.nan_on = ones(opts.mask_nan && l.has_nan());
            (p.nan_mask, p.nan_lo, p.nan_span) = (w(mask), w(lo), w(hi - lo));
            (p.emask, p.shift) = (w(all_exp), m as usize);
            // Two's complement in `W`: `e - bias` below wraps the same way for any bias.
            p.bias = w(i64::from(l.bias) as u64);
            p.esign = w(1u64 << (l.exponent_bits - 1 + m));
        }
        p
    }

    /// The counted word, and all ones (or 0 when the element is masked).
    #[inline(always)]
    fn apply(self, word: W) -> (W, W) {
        self.apply_as::<true, true>(word)
    }

    /// [`Prepare::apply`] with the NaN test (`NAN`) and the masked-code test (`MASKED`)
    /// left out when false: the same result when `nan_on` (`masked_on`) is 0.
    #[inline(always)]
    fn apply_as<const NAN: bool, const MASKED: bool>(self, word: W) -> (W, W) {
        let ones = |b: bool| W::zero().wrapping_sub(&W::from_u64(u64::from(b)));
        let bits = word & self.code;
        let mut hidden = W::zero();
        if NAN {
            let nan = (bits & self.nan_mask).wrapping_sub(&self.nan_lo) <= self.nan_span;
            hidden = hidden | (self.nan_on & ones(nan));
        }
        if MASKED {
            hidden = hidden | (self.masked_on & ones(bits == self.masked));
        }
        // `signed_exponent` in wrapping arithmetic: `d = e - bias` is negative exactly when
        // its top bit is set (both are far below the word's range); its magnitude is
        // `(d ^ neg) - neg`. An integer has an empty exponent field: `bits` unchanged.
        let e = (bits & self.emask) >> self.shift;
        let d = e.wrapping_sub(&self.bias);
        let neg = ones(d >> (W::BITS as usize - 1) == W::one());
        let magnitude = (d ^ neg).wrapping_sub(&neg);
        let field = (self.esign & neg) | ((magnitude << self.shift) & self.emask);
        ((bits & !self.emask) | (field & self.emask), !hidden)
    }
}

/// BitInformation.jl's `signed_exponent`: the exponent field `E` becomes `s | m`, `s` (its
/// first bit) set when `E - bias < 0` and `m` (the other bits) `|E - bias|`; sign and
/// mantissa are unchanged. Zero and subnormals get exponent `-bias`; Inf/NaN (`E` all ones,
/// `E - bias = 2^(k-1)` for IEEE) get `s` set and `m = 0`. Kept within the exponent field
/// for non-IEEE biases.
#[inline(always)]
pub fn signed_exponent(l: &FloatLayout, bits: u64) -> u64 {
    let m = l.mantissa_bits;
    let emask = ((1u64 << l.exponent_bits) - 1) << m;
    let sf = bits & !emask;
    let e = ((bits & emask) >> m) as i64 - i64::from(l.bias);
    let esign = if e < 0 {
        1u64 << (l.exponent_bits - 1 + m)
    } else {
        0
    };
    sf | ((esign | (e.unsigned_abs() << m)) & emask)
}

/// Joint bit counts over pairs `(a, b)` of neighbours: per bit position `p` (0 = least
/// significant), how often `a` has it, `b` has it, and both have it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PairCounts {
    pairs: u64,
    a: [u64; 64],
    b: [u64; 64],
    both: [u64; 64],
}

impl PairCounts {
    fn new() -> Self {
        PairCounts {
            pairs: 0,
            a: [0; 64],
            b: [0; 64],
            both: [0; 64],
        }
    }

    /// The mutual information of bit `p`, as BitInformation.jl sums it (columns outer).
    fn mutual_information(&self, p: usize) -> f64 {
        let n = self.pairs as f64;
        let (n11, n1x, nx1) = (self.both[p], self.a[p], self.b[p]);
        let counts = [[self.pairs + n11 - n1x - nx1, nx1 - n11], [n1x - n11, n11]];
        let pr = counts.map(|row| row.map(|c| c as f64 / n));
        let px = [pr[0][0] + pr[0][1], pr[1][0] + pr[1][1]];
        let py = [pr[0][0] + pr[1][0], pr[0][1] + pr[1][1]];
        let mut m = 0.0;
        for k in 0..2 {
            for j in 0..2 {
                let p = pr[j][k];
                if p > 0.0 {
                    m += p * (p / px[j] / py[k]).ln();
                }
            }
        }
        m / std::f64::consts::LN_2
    }
}

/// Count the bit pairs of neighbours along `axis`, in memory order. A C- or F-contiguous
/// array is seen as blocks of `n × inner` elements in which element `j` pairs with
/// `j + inner`: two contiguous slices per block. Another layout is first copied into C
/// order.
fn count_pairs<T, S, D>(
    data: &ArrayBase<S, D>,
    axis: Axis,
    opts: &InformationOptions,
    engine: Engine,
) -> PairCounts
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
        Words::U8(w) => count_words(engine, w, n, inner, Prepare::new(f, o)),
        Words::U16(w) => count_words(engine, w, n, inner, Prepare::new(f, o)),
        Words::U32(w) => count_words(engine, w, n, inner, Prepare::new(f, o)),
        Words::U64(w) => count_words(engine, w, n, inner, Prepare::new(f, o)),
    };
    match blocks {
        Some((flat, inner)) => by_width(flat, inner),
        None => {
            let c = data.as_standard_layout();
            by_width(c.as_slice().unwrap_or(&[]), shape[k + 1..].iter().product())
        }
    }
}

/// Which counter [`count_pairs`] runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Engine {
    /// Positional popcounts ([`count_positional`]).
    Positional,
    /// Bit-sliced ([`count_sliced`]).
    Sliced,
    /// The reference ([`count_blocks_reference`]).
    Reference,
}

/// The pairs `(j, j + inner)` of every block of `n × inner` words, by `engine`.
fn count_words<W>(
    engine: Engine,
    words: &[W],
    n: usize,
    inner: usize,
    prep: Prepare<W>,
) -> PairCounts
where
    W: SliceWord + PrimInt + WrappingAdd + WrappingSub,
{
    match engine {
        Engine::Positional => count_positional::<W>(words, n, inner, prep),
        Engine::Sliced => count_sliced(words, n, inner, prep),
        Engine::Reference => count_blocks_reference(words, n, inner, prep),
    }
}

/// Prepare and transpose the elements `from .. from + 64 * groups` of `words` (zero and
/// masked beyond its end) into `planes` and `mplanes`, through the buffers `code`, `mask`.
#[inline(always)]
fn load_groups<W>(
    prep: &Prepare<W>,
    words: &[W],
    from: usize,
    groups: usize,
    (code, mask): (&mut [W], &mut [W]),
    planes: &mut [u64],
    mplanes: &mut [u64],
) where
    W: SliceWord + PrimInt + WrappingAdd + WrappingSub,
{
    let bits = W::BITS as usize;
    // A few groups at a time, so that the prepared words stay in L1 for the transpose.
    let step = code.len().min(mask.len()) / 64;
    let mut g = 0;
    while g < groups {
        let n = step.min(groups - g);
        let (elems, start) = (64 * n, from + 64 * g);
        let have = words.len().saturating_sub(start).min(elems);
        // The words a tile ahead, a few lines per step: the loads of the next tile do not
        // wait on memory, and the prefetches do not queue up behind each other.
        let ahead = (start + PREFETCH_AHEAD).min(words.len());
        crate::arch::prefetch(&words[ahead..(ahead + elems).min(words.len())]);
        prepare_run(prep, &words[start.min(words.len())..][..have], code, mask);
        code[have..elems].fill(W::zero());
        mask[have..elems].fill(W::zero());
        let (p, m) = (&mut planes[g * bits..], &mut mplanes[g..]);
        transpose_groups(&code[..elems], &mask[..elems], p, m);
        g += n;
    }
}

/// How far ahead of the words being prepared the counter prefetches (elements).
const PREFETCH_AHEAD: usize = 2048;

/// Pairs per tile of the bit-sliced counter (a multiple of 64).
const SLICED_TILE: usize = 4096;
/// The largest `inner` for which a tile's second elements are read from the same planes
/// as its first ones (each element prepared and transposed once); beyond it, they are
/// prepared and transposed apart (twice per element).
const SHARED_SPAN: usize = 1 << 15;

/// The pair counts of [`count_blocks_reference`], bit-sliced (`convert::bit_counts`): the
/// words are seen as one stream in which `j` pairs with `j + inner` when `j` lies in the
/// first `(n - 1) · inner` of its block of `n · inner`. Each element is prepared
/// ([`Prepare`]) once, its groups of 64 transposed into planes once (for
/// `inner <= SHARED_SPAN`; the planes of the last `inner` elements of a tile are carried
/// to the next), and the pairs of 64 `j` counted by three popcounts per bit position.
fn count_sliced<W>(words: &[W], n: usize, inner: usize, prep: Prepare<W>) -> PairCounts
where
    W: SliceWord + PrimInt + WrappingAdd + WrappingSub,
{
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            let mut counts = PairCounts::new();
            let period = n * inner;
            if inner == 0 || n < 2 || words.len() < period {
                return counts;
            }
            let len = words.len() - words.len() % period;
            let words = &words[..len];
            let (ppb, npairs) = (period - inner, len - inner);
            let bits = W::BITS as usize;
            let shared = inner <= SHARED_SPAN;
            // Groups of planes held: a tile's, the `inner` after it, and two more for the
            // funnel shift (its group `k + 1`) and the alignment.
            let span_groups = SLICED_TILE / 64 + if shared { inner / 64 + 3 } else { 2 };
            // Prepared words of up to 4 groups (1 KiB of f32) at a time.
            let (mut code, mut mask) = ([W::zero(); 256], [W::zero(); 256]);
            let mut planes = vec![0u64; span_groups * bits];
            let mut mplanes = vec![0u64; span_groups];
            let (mut planes2, mut mplanes2) = if shared {
                (Vec::new(), Vec::new())
            } else {
                (vec![0u64; span_groups * bits], vec![0u64; span_groups])
            };
            let mut valid = vec![0u64; SLICED_TILE / 64];
            let (q, r) = (inner / 64, (inner % 64) as u32);
            let (mut base, mut done) = (0usize, 0usize); // global groups: planes[0], end
            let mut t = 0;
            while t < npairs {
                let tl = SLICED_TILE.min(npairs - t);
                let kg = tl.div_ceil(64);
                let g0 = t / 64;
                let second_shift = if shared {
                    // Drop the groups before this tile, then transpose up to the last
                    // group the second elements (and the funnel) reach.
                    let keep = done - g0;
                    planes.copy_within((g0 - base) * bits..(done - base) * bits, 0);
                    mplanes.copy_within(g0 - base..done - base, 0);
                    base = g0;
                    let end = g0 + kg + q + 2;
                    load_groups(
                        &prep,
                        words,
                        done * 64,
                        end - done,
                        (&mut code, &mut mask),
                        &mut planes[keep * bits..],
                        &mut mplanes[keep..],
                    );
                    done = end;
                    r
                } else {
                    let bufs = (&mut code[..], &mut mask[..]);
                    load_groups(&prep, words, t, kg + 1, bufs, &mut planes, &mut mplanes);
                    let bufs = (&mut code[..], &mut mask[..]);
                    let (p2, m2) = (&mut planes2[..], &mut mplanes2[..]);
                    load_groups(&prep, words, t + inner, kg + 1, bufs, p2, m2);
                    0
                };
                let (second, msecond) = if shared {
                    (&planes[q * bits..], &mplanes[q..])
                } else {
                    (&planes2[..], &mplanes2[..])
                };
                let mut pos = t % period;
                for (k, v) in valid[..kg].iter_mut().enumerate() {
                    let m2 = (msecond[k] >> second_shift)
                        | ((msecond[k + 1] << (63 - second_shift)) << 1);
                    let pairs = 64.min(tl - 64 * k);
                    *v = mplanes[k] & m2 & block_pattern(pos, pairs, period, ppb);
                    pos += 64;
                    if pos >= period {
                        pos %= period;
                    }
                }
                let mut c = PlaneCounts {
                    a: &mut counts.a,
                    b: &mut counts.b,
                    both: &mut counts.both,
                };
                let (f, v) = (&planes[..], &valid[..kg]);
                counts.pairs += match bits {
                    8 => count_plane_pairs::<8>(f, second, second_shift, v, &mut c),
                    16 => count_plane_pairs::<16>(f, second, second_shift, v, &mut c),
                    32 => count_plane_pairs::<32>(f, second, second_shift, v, &mut c),
                    _ => count_plane_pairs::<64>(f, second, second_shift, v, &mut c),
                };
                t += tl;
            }
            counts
        },
    )
}

/// Pairs per tile of the positional counter (at least; a multiple of every chunk).
const POS_TILE: usize = 4096;
/// The largest `inner` for which the positional counter reads a tile's second elements
/// from the buffer of its first ones (each element prepared once; tiles of `4 · inner`
/// pairs, the `inner` after a tile carried to the next); beyond it, the two are prepared
/// apart (twice per element).
const POS_SHARED_SPAN: usize = 1 << 13;
/// Below this block length (`n · inner` elements) the positional counter's per-block
/// corrections would cost more than its counting: the bit-sliced counter runs instead.
const POS_MIN_PERIOD: usize = 512;
/// Elements prepared per check of the mask flag.
const POS_RUN: usize = 256;

/// Prepare `src` into `dst` (the counted word `c & mask`: masked elements are 0). Returns
/// the end (an index into `src`) of the last run of [`POS_RUN`] elements that holds a
/// masked element, `None` when none is. Called once per tile, with its AVX2 twin.
fn prepare_codes<W>(prep: &Prepare<W>, src: &[W], dst: &mut [W]) -> Option<usize>
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    #[inline(always)]
    fn run<W, const NAN: bool, const MASKED: bool>(
        prep: Prepare<W>,
        src: &[W],
        dst: &mut [W],
    ) -> Option<usize>
    where
        W: Word + PrimInt + WrappingAdd + WrappingSub,
    {
        let mut last = None;
        for (k, (s, d)) in src.chunks(POS_RUN).zip(dst.chunks_mut(POS_RUN)).enumerate() {
            let mut hidden = W::zero();
            for (&x, o) in s.iter().zip(d.iter_mut()) {
                let (c, m) = prep.apply_as::<NAN, MASKED>(x);
                *o = c & m;
                hidden = hidden | !m;
            }
            if hidden != W::zero() {
                last = Some(k * POS_RUN + s.len());
            }
        }
        last
    }
    // The tests chosen once per run, not per element.
    let prep = *prep;
    crate::arch::vectorized(
        #[inline(always)]
        move || match (prep.nan_on != W::zero(), prep.masked_on != W::zero()) {
            (true, true) => run::<W, true, true>(prep, src, dst),
            (true, false) => run::<W, true, false>(prep, src, dst),
            (false, true) => run::<W, false, true>(prep, src, dst),
            (false, false) => run::<W, false, false>(prep, src, dst),
        },
    )
}

/// The masks of `src` into `dst` (all ones for an unmasked element).
#[inline(always)]
fn prepare_masks<W>(prep: &Prepare<W>, src: &[W], dst: &mut [W])
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    let prep = *prep;
    for (&x, o) in src.iter().zip(dst.iter_mut()) {
        *o = prep.apply(x).1;
    }
}

/// Call `f(start, end, inside)` for the runs of pairs `t + start .. t + end` (cutting
/// `t .. t + len`) that lie inside one block (`inside`: the first `ppb` positions of each
/// `period`) or cross a block's end (the other `period - ppb`).
#[inline(always)]
fn for_each_run(
    t: usize,
    len: usize,
    period: usize,
    ppb: usize,
    mut f: impl FnMut(usize, usize, bool),
) {
    let (mut pos, mut i) = (t % period, 0);
    while i < len {
        let inside = pos < ppb;
        let run = if inside { ppb - pos } else { period - pos }.min(len - i);
        f(i, i + run, inside);
        (i, pos) = (i + run, pos + run);
        if pos == period {
            pos = 0;
        }
    }
}

/// The pair counts of [`count_blocks_reference`], by positional popcounts
/// (`convert::bit_counts::Positional`), without a transpose.
///
/// The words are one stream in which `j` pairs with `j + inner` for `j < npairs`, a pair
/// *inside* a block when `j` lies in the first `ppb = (n - 1) · inner` of its block of
/// `period = n · inner`; `c'` is the prepared word, 0 when masked, and `v` the mask. Per
/// bit position, over the valid pairs `V` (inside, both unmasked):
///
/// ```text
/// a    = Σ_V c'_j           = A - Σ_S c'_j - Σ_I c'_j & !v_(j+inner)
/// b    = Σ_V c'_(j+inner)   = A - head + tail - Σ_S c'_(j+inner) - Σ_I c'_(j+inner) & !v_j
/// both = Σ_V c'_j & c'_(j+inner) = Z - Σ_S c'_j & c'_(j+inner)
/// ```
///
/// with `A = Σ_(j < npairs) c'_j` and `Z = Σ_(j < npairs) c'_j & c'_(j+inner)` (the two
/// streams every element goes through), `head`/`tail` the first/last `inner` elements,
/// `S` the pairs across a block's end (`inner` per block) and `I` the inside pairs, the
/// last sums taken only in tiles that hold a masked element. So a clean element costs its
/// preparation and two positional popcounts.
fn count_positional<W>(words: &[W], n: usize, inner: usize, prep: Prepare<W>) -> PairCounts
where
    W: SliceWord + PrimInt + WrappingAdd + WrappingSub,
{
    use crate::arch::bytes_of_words as bytes;
    use crate::convert::bit_counts::{Collector, Positional};
    let Some(period) = n.checked_mul(inner) else {
        return PairCounts::new();
    };
    if inner == 0 || n < 2 || words.len() < period {
        return PairCounts::new();
    }
    if period < POS_MIN_PERIOD {
        return count_sliced(words, n, inner, prep);
    }
    // Not inside `arch::vectorized`: its two kernels are (`prepare_codes`,
    // `Positional::add_pairs`), each compiled once per width; the rest is bookkeeping.
    let len = words.len() - words.len() % period;
    let words = &words[..len];
    let (ppb, npairs) = (period - inner, len - inner);
    let chunk = Collector::<W>::CHUNK;
    let shared = inner <= POS_SHARED_SPAN;
    let tile = if shared {
        (4 * inner).max(POS_TILE).next_multiple_of(chunk)
    } else {
        POS_TILE
    };
    // Shared: elements `t .. ready` at `code[.. ready - t]`; apart: the first
    // elements in `code[.. tile]`, the second in `code[tile ..]`.
    let size = if shared { tile + inner } else { 2 * tile };
    let mut code = vec![W::zero(); size];
    let mut mask: Vec<W> = Vec::new();
    let (mut sum_a, mut sum_z) = (Positional::new(), Positional::new());
    let [
        mut cross_a,
        mut cross_b,
        mut cross_z,
        mut lost_a,
        mut lost_b,
    ] = std::array::from_fn(|_| Collector::<W>::new());
    let (mut crossing, mut lost) = (0u64, 0u64);
    let (mut t, mut ready, mut dirty_end) = (0usize, 0usize, 0usize);
    while t < npairs {
        let tl = tile.min(npairs - t);
        let dirty = if shared {
            let need = t + tl + inner;
            let last = prepare_codes(&prep, &words[ready..need], &mut code[ready - t..]);
            if let Some(e) = last {
                dirty_end = ready + e;
            }
            ready = need;
            dirty_end > t
        } else {
            let (c1, c2) = code.split_at_mut(tile);
            let d1 = prepare_codes(&prep, &words[t..t + tl], c1);
            let d2 = prepare_codes(&prep, &words[t + inner..t + inner + tl], c2);
            d1.is_some() || d2.is_some()
        };
        let off = if shared { inner } else { tile };
        let (first, second) = (&code[..tl], &code[off..off + tl]);
        // The two streams: whole chunks, then the last partial one padded with
        // zeros.
        let whole = tl - tl % chunk;
        let (f, s) = (bytes(&first[..whole]), bytes(&second[..whole]));
        Positional::add_pairs(&mut sum_a, &mut sum_z, f, s);
        if whole < tl {
            let (mut f, mut s) = (vec![W::zero(); chunk], vec![W::zero(); chunk]);
            f[..tl - whole].copy_from_slice(&first[whole..]);
            s[..tl - whole].copy_from_slice(&second[whole..]);
            Positional::add_pairs(&mut sum_a, &mut sum_z, bytes(&f), bytes(&s));
        }
        for_each_run(t, tl, period, ppb, |s, e, inside| {
            if !inside {
                let (f, g) = (&first[s..e], &second[s..e]);
                cross_a.push(f);
                cross_b.push(g);
                cross_z.push_with(e - s, |i| f[i] & g[i]);
                crossing += (e - s) as u64;
            }
        });
        if dirty {
            // The masks of the tile's first and second elements, again.
            if mask.is_empty() {
                mask = vec![W::zero(); size];
            }
            if shared {
                prepare_masks(&prep, &words[t..t + tl + inner], &mut mask);
            } else {
                let (m1, m2) = mask.split_at_mut(tile);
                prepare_masks(&prep, &words[t..t + tl], m1);
                prepare_masks(&prep, &words[t + inner..t + inner + tl], m2);
            }
            let (v1, v2) = (&mask[..tl], &mask[off..off + tl]);
            for_each_run(t, tl, period, ppb, |s, e, inside| {
                if inside {
                    let (f, g, v, w) = (&first[s..], &second[s..], &v1[s..], &v2[s..]);
                    lost_a.push_with(e - s, |i| f[i] & !w[i]);
                    lost_b.push_with(e - s, |i| g[i] & !v[i]);
                    lost += v[..e - s]
                        .iter()
                        .zip(&w[..e - s])
                        .map(|(&x, &y)| u64::from((x & y) == W::zero()))
                        .sum::<u64>();
                }
            });
        }
        if shared {
            code.copy_within(tl..ready - t, 0);
        }
        t += tl;
    }
    // The first and the last `inner` elements.
    let [mut head, mut tail] = std::array::from_fn(|_| Collector::<W>::new());
    for (acc, from) in [(&mut head, 0), (&mut tail, npairs)] {
        for piece in words[from..from + inner].chunks(code.len()) {
            prepare_codes(&prep, piece, &mut code);
            acc.push(&code[..piece.len()]);
        }
    }
    let (a, z) = (sum_a.totals(W::BITS), sum_z.totals(W::BITS));
    let [ca, cb, cz, la, lb, h, tail] =
        [cross_a, cross_b, cross_z, lost_a, lost_b, head, tail].map(Collector::totals);
    let mut counts = PairCounts::new();
    counts.pairs = npairs as u64 - crossing - lost;
    for p in 0..W::BITS as usize {
        counts.a[p] = a[p] - ca[p] - la[p];
        counts.b[p] = a[p] + tail[p] - h[p] - cb[p] - lb[p];
        counts.both[p] = z[p] - cz[p];
    }
    counts
}

/// Words per row of a tile, and rows per tile: a tile's byte counters count at most
/// `ROWS` < 256 words each, so they cannot overflow.
const LANES: usize = 32;
const ROWS: usize = 128;
const TILE: usize = LANES * ROWS;

/// The reference count (the implementation before bit slicing), kept to test the
/// bit-sliced one against: count the pairs `(j, j + inner)` of every block of
/// `n × inner` words, tile by tile. Each element of a tile's span is prepared once ([`Prepare`]: the counted word and
/// its mask), the pairs' three words (`a`, `b`, `a & b`, masked pairs zeroed) are written
/// to tile buffers, and each buffer is counted by [`count_tile`]. When `inner` exceeds a
/// tile, the two halves of the pairs are prepared apart. Compiled once per word width,
/// without an AVX2 twin.
fn count_blocks_reference<W>(words: &[W], n: usize, inner: usize, prep: Prepare<W>) -> PairCounts
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    // Not inside `arch::vectorized`: the reference's speed matters to no caller, its
    // build time to every build.
    let mut counts = PairCounts::new();
    if inner == 0 {
        return counts;
    }
    // Prepared words and masks of a tile's span (`TILE + inner` elements, or two
    // runs of `TILE`), and the three counted streams.
    let span = 2 * TILE.max(inner.min(TILE));
    let (mut code, mut mask) = (vec![W::zero(); span], vec![W::zero(); span]);
    // Up to 96 KiB: on the heap, not the stack.
    #[allow(clippy::useless_vec)]
    let mut streams = vec![W::zero(); 3 * TILE];
    let (ta, rest) = streams.split_at_mut(TILE);
    let (tb, tab) = rest.split_at_mut(TILE);
    let pairs = (n - 1) * inner;
    for block in words.chunks_exact(n * inner) {
        let mut t = 0;
        while t < pairs {
            let len = TILE.min(pairs - t);
            // Where the second element of pair `i` is in the prepared span.
            let off = if inner <= TILE {
                prepare_run(&prep, &block[t..t + len + inner], &mut code, &mut mask);
                inner
            } else {
                prepare_run(&prep, &block[t..t + len], &mut code, &mut mask);
                let (c, m) = (&mut code[TILE..], &mut mask[TILE..]);
                prepare_run(&prep, &block[t + inner..t + inner + len], c, m);
                TILE
            };
            counts.pairs += pair_words(&code, &mask, off, len, ta, tb, tab);
            // A last, partial row counts zeros after the pairs.
            let rows = len.next_multiple_of(LANES);
            for t in [&mut *ta, &mut *tb, &mut *tab] {
                t[len..rows].fill(W::zero());
            }
            count_tile(&ta[..rows], &mut counts.a);
            count_tile(&tb[..rows], &mut counts.b);
            count_tile(&tab[..rows], &mut counts.both);
            t += len;
        }
    }
    counts
}

/// The counted word and mask of each of `src` into `code` and `mask`.
#[inline(always)]
fn prepare_run<W>(prep: &Prepare<W>, src: &[W], code: &mut [W], mask: &mut [W])
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    let prep = *prep;
    for ((&x, c), m) in src.iter().zip(code.iter_mut()).zip(mask.iter_mut()) {
        (*c, *m) = prep.apply(x);
    }
}

/// The first `len` pairs `(i, i + off)` of the prepared span as the three counted words,
/// zero for a pair with a masked element; returns the number of unmasked pairs.
#[inline(always)]
fn pair_words<W>(
    code: &[W],
    mask: &[W],
    off: usize,
    len: usize,
    ta: &mut [W],
    tb: &mut [W],
    tab: &mut [W],
) -> u64
where
    W: Word + PrimInt,
{
    let (first, second) = (&code[..len], &code[off..off + len]);
    let (m1, m2) = (&mask[..len], &mask[off..off + len]);
    let mut valid = 0u64;
    // Runs of 255 pairs: a count in `W` lanes cannot overflow within one.
    for start in (0..len).step_by(255) {
        let end = (start + 255).min(len);
        let mut run = W::zero();
        for i in start..end {
            let m = m1[i] & m2[i];
            let (x, y) = (first[i] & m, second[i] & m);
            (ta[i], tb[i], tab[i]) = (x, y, x & y);
            run = run + (m & W::one());
        }
        valid += run.to_u64();
    }
    valid
}

/// Add to `totals[p]` how many of `words` (whole rows of [`LANES`], at most [`ROWS`] rows)
/// have bit `p`: for each shift `j < 8`, one byte counter per byte of each lane counts bit
/// `8k + j` (`(w >> j) & 0x0101…`), the lanes in registers, added up after the tile.
#[inline(always)]
fn count_tile<W>(words: &[W], totals: &mut [u64; 64])
where
    W: Word + PrimInt + WrappingAdd,
{
    let ones = W::from_u64(0x0101_0101_0101_0101);
    let bytes = (W::BITS / 8) as usize;
    for j in 0..8 {
        let mut acc = [W::zero(); LANES];
        let rows = words
            .chunks_exact(LANES)
            .filter_map(|r| <&[W; LANES]>::try_from(r).ok());
        for row in rows {
            for l in 0..LANES {
                // At most `ROWS` < 256 ones per byte: no carry between bytes.
                acc[l] = acc[l] + ((row[l] >> j) & ones);
            }
        }
        for s in acc {
            let v = s.to_u64();
            for k in 0..bytes {
                totals[8 * k + j] += (v >> (8 * k)) & 0xff;
            }
        }
    }
}

/// BitInformation.jl's `binom_free_entropy(n, c)`: `1 - H(p)` with
/// `p = min(1, 0.5 + z / (2√n))`, `z` the standard normal quantile of `1 - (1 - c) / 2`.
pub fn free_entropy(n: u64, confidence: f64) -> f64 {
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let p = (0.5 + z / (2.0 * (n as f64).sqrt())).min(1.0);
    let h = |x: f64| if x > 0.0 { -x * x.log2() } else { 0.0 };
    1.0 - (h(p) + h(1.0 - p))
}

/// The standard normal quantile of `p` in (0.5, 1), by bisection on [`normal_cdf`].
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `Φ(x) = (1 + erf(x / √2)) / 2` for `x >= 0`, with
/// `erf(y) = 2/√π e^(-y²) Σ_n (2y²)^n y / (1·3·…·(2n+1))`, a series of positive terms
/// (no cancellation), accurate to a few ulps of `erf` over the range used.
fn normal_cdf(x: f64) -> f64 {
    let y = x / std::f64::consts::SQRT_2;
    let (mut term, mut sum) = (y, y);
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * y * y / (2.0 * n + 1.0);
        sum += term;
    }
    let erf = 2.0 / std::f64::consts::PI.sqrt() * (-y * y).exp() * sum;
    0.5 * (1.0 + erf.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_and_free_entropy_match_bitinformation_jl_docs() {
        // quantile(Normal(), 0.995) = 2.5758293035489004
        assert!((normal_quantile(0.995) - 2.575_829_303_548_900_4).abs() < 1e-12);
        // binom_confidence(1000, 0.95) = 0.5309897516152281 (its docstring)
        let z = normal_quantile(0.975);
        let p = 0.5 + z / (2.0 * 1000f64.sqrt());
        assert!((p - 0.530_989_751_615_228_1).abs() < 1e-12);
    }

    /// `Prepare` against `signed_exponent` and `FloatLayout::is_nan_bits`, the plain
    /// definitions it folds into one formula: every code of every 8- and 16-bit float
    /// type (all four NaN encodings), sampled codes of f32 and f64, and integers.
    #[test]
    fn prepare_is_the_signed_exponent_and_the_nan_mask() {
        use crate::dtype::{DTypeId, Kind};
        fn check<W: Word + PrimInt + WrappingAdd + WrappingSub>(id: DTypeId, codes: &[u64]) {
            let opts = InformationOptions::default();
            let p = Prepare::<W>::new(id.format().expect("real"), &opts);
            for &c in codes {
                let (word, mask) = p.apply(W::from_u64(c));
                let (want, nan) = match id.kind() {
                    Kind::Float(l) if l.signed => (signed_exponent(&l, c), l.is_nan_bits(c)),
                    _ => (c, false),
                };
                assert_eq!(word.to_u64(), want, "{id} {c:#x}");
                assert_eq!(mask == W::zero(), nan, "{id} {c:#x}");
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut sample = |bits: u32| -> Vec<u64> {
            (0..4096)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x >> (64 - bits)
                })
                .collect()
        };
        for &id in DTypeId::ALL {
            if !id.is_real() {
                continue;
            }
            let bits = id.format().expect("real").bits();
            match id.word_bits() {
                8 => check::<u8>(id, &(0..1u64 << bits).collect::<Vec<_>>()),
                16 => check::<u16>(id, &(0..1u64 << bits).collect::<Vec<_>>()),
                32 => check::<u32>(id, &sample(32)),
                _ => check::<u64>(id, &sample(64)),
            }
        }
        // Specials of the wide IEEE types: zeros, subnormals, Inf and NaN payloads.
        let f32_specials = [
            0,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x7f80_0000,
            0x7f80_0001,
            0xffc0_0000,
        ];
        check::<u32>(DTypeId::Float32, &f32_specials);
        let f64_specials = [0, 1, 0x7ff0_0000_0000_0000, 0x7ff0_0000_0000_0001, u64::MAX];
        check::<u64>(DTypeId::Float64, &f64_specials);
    }

    /// The bit-sliced and the positional counters against the reference on random codes
    /// of every real type (NaN, ±Inf, subnormals and zeros mixed in by raw bits, densely or
    /// in a few places so that clean and masked tiles alternate), with and without a
    /// masked code, over blocks of every shape class: `inner` of 1, below and above 64, not
    /// a multiple of 64, beyond `SHARED_SPAN` and `POS_SHARED_SPAN`; blocks shorter and
    /// longer than a tile; tiles and chunks whose ends fall anywhere.
    #[test]
    fn sliced_counts_equal_the_reference() {
        use crate::dtype::DTypeId;
        fn check<W: SliceWord + PrimInt + WrappingAdd + WrappingSub>(
            id: DTypeId,
            next: &mut impl FnMut() -> u64,
        ) {
            let format = id.format().expect("real");
            let shapes: &[(usize, usize, usize)] = &[
                (1, 2, 1),
                (3, 5, 1),
                (2, 100, 1),
                (1, 4097, 1),
                (1, 9000, 1),
                (7, 3, 2),
                (3, 10, 63),
                (2, 7, 64),
                (2, 5, 65),
                (1, 40, 129),
                (2, 3, 1800),
                (1, 3, 5000),
                (1, 2, SHARED_SPAN + 70),
                (5, 1, 7),
                // Blocks whose ends fall on a group's end.
                (3, 64, 1),
                (2, 128, 1),
                (4, 2, 32),
                (3, 65, 64),
                // The positional counter: blocks of at least `POS_MIN_PERIOD`, across and
                // within tiles; tiles of `4 · inner`; second elements prepared apart.
                (3, 513, 1),
                (9, 600, 1),
                (2, 4096, 1),
                (1, 12_000, 1),
                (4, 2, 300),
                (2, 3, 700),
                (1, 40, 700),
                (1, 4, 3600),
                (2, 3, 4095),
                (1, 3, POS_SHARED_SPAN),
                (2, 2, POS_SHARED_SPAN + 5),
                (1, 3, POS_SHARED_SPAN + 4099),
            ];
            for &(blocks, n, inner) in shapes {
                for dense in [true, false] {
                    let len = blocks * n * inner;
                    let words: Vec<W> = (0..len)
                        .map(|i| {
                            let x = next();
                            // Specials often, or at a few places: exponent all ones or all
                            // zeros.
                            let kind = if dense {
                                x % 8
                            } else {
                                2 + u64::from(i % 5003 == 7)
                            };
                            let v = match kind {
                                0 => x | (u64::MAX >> 1 & !((1u64 << 52) - 1)),
                                1 => x & ((1u64 << 20) - 1),
                                3 => u64::MAX,
                                _ => x >> 7,
                            };
                            W::from_u64(v)
                        })
                        .collect();
                    let masked = words.get(3).map(|&w| Word::to_u64(w));
                    for masked_bits in [None, masked] {
                        for mask_nan in [true, false] {
                            let opts = InformationOptions {
                                mask_nan,
                                masked_bits,
                                ..Default::default()
                            };
                            let prep = Prepare::<W>::new(format, &opts);
                            let want = count_blocks_reference(&words, n, inner, prep);
                            let what = format!("{id} {blocks}x{n}x{inner} dense {dense} {opts:?}");
                            let got = count_positional::<W>(&words, n, inner, prep);
                            assert_eq!(got, want, "positional {what}");
                            if dense || len < 20_000 {
                                let got = count_sliced(&words, n, inner, prep);
                                assert_eq!(got, want, "sliced {what}");
                            }
                        }
                    }
                }
            }
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for &id in DTypeId::ALL {
            if !id.is_real() {
                continue;
            }
            match id.word_bits() {
                8 => check::<u8>(id, &mut next),
                16 => check::<u16>(id, &mut next),
                32 => check::<u32>(id, &mut next),
                _ => check::<u64>(id, &mut next),
            }
        }
    }

    #[test]
    fn signed_exponent_matches_the_docstring() {
        let l = crate::number::layout::FLOAT32;
        // 10f0: "0 10000010 0100…" -> "0 00000011 0100…"
        assert_eq!(signed_exponent(&l, 10f32.to_bits() as u64), 0x01a0_0000);
        // xbitinfo's doctest: 0.03125 -> 0b0_10000101_000…
        assert_eq!(
            signed_exponent(&l, 0.03125f32.to_bits() as u64),
            0x4280_0000
        );
    }
}
