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

use ndarray::{ArrayBase, Axis, Data, Dimension, Slice, Zip};

use super::ChooseError;
use crate::dtype::{FloatLayout, Format, Real};

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
        let ndim = data.ndim();
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
        let counts = count_pairs(data, Axis(axis), T::BITS, prepare::<T>(opts));
        if counts.pairs == 0 {
            return Err(ChooseError::NoPairs { axis });
        }
        let per_bit: Vec<f64> = (0..T::BITS as usize)
            .rev()
            .map(|p| counts.mutual_information(p))
            .collect();
        let mut info = BitInformation {
            per_bit,
            pairs: counts.pairs,
            format: T::FORMAT,
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

/// The element -> counted word function: the code (in the signed-exponent representation
/// for a signed float) and 1, or 0 for a masked element. Branch-free, so that the counting
/// loop vectorizes.
fn prepare<T: Real>(opts: &InformationOptions) -> impl Fn(T) -> (u64, u64) + Copy {
    let float = match T::FORMAT {
        Format::Float(l) if l.signed => Some(l),
        _ => None,
    };
    let (mask_nan, masked) = (opts.mask_nan, opts.masked_bits);
    move |x: T| {
        let bits = x.to_bits();
        let nan = mask_nan && float.is_some_and(|l| l.is_nan_bits(bits));
        let hidden = nan | (masked == Some(bits));
        let word = match float {
            Some(l) => signed_exponent(&l, bits),
            None => bits,
        };
        (word, u64::from(!hidden))
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
struct PairCounts {
    pairs: u64,
    a: Vec<u64>,
    b: Vec<u64>,
    both: Vec<u64>,
}

impl PairCounts {
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

/// Count the bit pairs of neighbours along `axis`. A C- or F-contiguous array is seen as
/// blocks of `n × inner` elements in which element `j` pairs with `j + inner`: two
/// contiguous slices per block, counted by an AVX2-compiled kernel. Other layouts go
/// through one `Zip` over the two overlapping views (memory order, whatever the strides).
fn count_pairs<T, S, D>(
    data: &ArrayBase<S, D>,
    axis: Axis,
    width: u32,
    prep: impl Fn(T) -> (u64, u64) + Copy,
) -> PairCounts
where
    T: Real,
    S: Data<Elem = T>,
    D: Dimension,
{
    let w = width;
    // Pack the three words of a pair into as few 64-bit planes as they fit, so that one
    // plane update counts up to 64 bit positions.
    if 3 * w <= 64 {
        let planes = count_with::<T, S, D, 1>(data, axis, prep, move |a, b| {
            [a | (b << w) | ((a & b) << (2 * w))]
        });
        planes.split(w, |t, p| {
            (t[0][p], t[0][p + w as usize], t[0][p + 2 * w as usize])
        })
    } else if 2 * w <= 64 {
        let planes = count_with::<T, S, D, 2>(data, axis, prep, move |a, b| [a | (b << w), a & b]);
        planes.split(w, |t, p| (t[0][p], t[0][p + w as usize], t[1][p]))
    } else {
        let planes = count_with::<T, S, D, 3>(data, axis, prep, |a, b| [a, b, a & b]);
        planes.split(w, |t, p| (t[0][p], t[1][p], t[2][p]))
    }
}

/// Count every unmasked pair into `N` planes of packed words.
fn count_with<T, S, D, const N: usize>(
    data: &ArrayBase<S, D>,
    axis: Axis,
    prep: impl Fn(T) -> (u64, u64) + Copy,
    pack: impl Fn(u64, u64) -> [u64; N] + Copy,
) -> Planes<N>
where
    T: Real,
    S: Data<Elem = T>,
    D: Dimension,
{
    let n = data.len_of(axis);
    if n < 2 {
        return Planes::new();
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
    if let Some((flat, inner)) = blocks {
        return crate::arch::vectorized(
            #[inline(always)]
            move || {
                let mut planes = Planes::new();
                if inner > 0 {
                    for block in flat.chunks_exact(n * inner) {
                        let (a, b) = (&block[..(n - 1) * inner], &block[inner..]);
                        count_slices(&mut planes, a, b, prep, pack);
                    }
                }
                planes
            },
        );
    }
    let first = data.slice_axis(axis, Slice::from(..n - 1));
    let second = data.slice_axis(axis, Slice::from(1..));
    let mut planes = Planes::new();
    Zip::from(&first).and(&second).for_each(|&x, &y| {
        let ((a, va), (b, vb)) = (prep(x), prep(y));
        let m = 0u64.wrapping_sub(va & vb);
        planes.add(pack(a & m, b & m), va & vb);
    });
    planes
}

#[inline(always)]
fn count_slices<T: Real, const N: usize>(
    planes: &mut Planes<N>,
    a: &[T],
    b: &[T],
    prep: impl Fn(T) -> (u64, u64) + Copy,
    pack: impl Fn(u64, u64) -> [u64; N] + Copy,
) {
    // Chunks of 255 pairs: the byte lanes cannot overflow within one, so the inner loop
    // has no branch; masked pairs add zeros and are not counted.
    for (ca, cb) in a.chunks(255).zip(b.chunks(255)) {
        let mut valid = 0;
        for (&x, &y) in ca.iter().zip(cb) {
            let ((a, va), (b, vb)) = (prep(x), prep(y));
            let m = 0u64.wrapping_sub(va & vb);
            planes.add_unchecked(pack(a & m, b & m));
            valid += va & vb;
        }
        planes.flush();
        planes.count += valid;
    }
}

/// Per-bit-position counters of `N` streams of 64-bit words, eight positions per add:
/// `lanes[s][j]` holds, in its byte `k`, how many words of stream `s` had bit `8k + j`
/// since the last flush (at most 255, so a flush every 255 adds). `count` is the number of
/// unmasked pairs.
struct Planes<const N: usize> {
    lanes: [[u64; 8]; N],
    totals: [[u64; 64]; N],
    pending: u32,
    count: u64,
}

impl<const N: usize> Planes<N> {
    const BYTE_ONES: u64 = 0x0101_0101_0101_0101;

    fn new() -> Self {
        Planes {
            lanes: [[0; 8]; N],
            totals: [[0; 64]; N],
            pending: 0,
            count: 0,
        }
    }

    /// Add one pair's words, counting it when `valid` is 1; flushes every 255 adds.
    #[inline(always)]
    fn add(&mut self, words: [u64; N], valid: u64) {
        self.add_unchecked(words);
        self.count += valid;
        self.pending += 1;
        if self.pending == 255 {
            self.flush();
        }
    }

    /// Add one pair's words; the caller flushes within 255 adds.
    #[inline(always)]
    fn add_unchecked(&mut self, words: [u64; N]) {
        for (lanes, w) in self.lanes.iter_mut().zip(words) {
            for (j, lane) in lanes.iter_mut().enumerate() {
                *lane += (w >> j) & Self::BYTE_ONES;
            }
        }
    }

    #[inline(never)]
    fn flush(&mut self) {
        for (lanes, totals) in self.lanes.iter_mut().zip(self.totals.iter_mut()) {
            for (j, lane) in lanes.iter_mut().enumerate() {
                for k in 0..8 {
                    totals[8 * k + j] += (*lane >> (8 * k)) & 0xff;
                }
                *lane = 0;
            }
        }
        self.pending = 0;
    }

    /// The counts per bit position `p < width`: `(a, b, both)` read from the totals.
    fn split(
        mut self,
        width: u32,
        at: impl Fn(&[[u64; 64]; N], usize) -> (u64, u64, u64),
    ) -> PairCounts {
        self.flush();
        let mut c = PairCounts {
            pairs: self.count,
            a: vec![0; width as usize],
            b: vec![0; width as usize],
            both: vec![0; width as usize],
        };
        for p in 0..width as usize {
            (c.a[p], c.b[p], c.both[p]) = at(&self.totals, p);
        }
        c
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

    #[test]
    fn signed_exponent_matches_the_docstring() {
        let l = crate::dtype::layout::FLOAT32;
        // 10f0: "0 10000010 0100…" -> "0 00000011 0100…"
        assert_eq!(signed_exponent(&l, 10f32.to_bits() as u64), 0x01a0_0000);
        // xbitinfo's doctest: 0.03125 -> 0b0_10000101_000…
        assert_eq!(
            signed_exponent(&l, 0.03125f32.to_bits() as u64),
            0x4280_0000
        );
    }
}
