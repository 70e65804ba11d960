//! Word preparation: each storage word becomes the word whose bits are counted (a float's
//! signed-exponent form) and a mask (all ones, or 0 for a masked element), by one
//! branch-free formula of loop-invariant words.

use num_traits::{PrimInt, WrappingAdd, WrappingSub};

use super::InformationOptions;
use crate::number::layout::{FloatLayout, Format, NanEncoding};
use crate::number::storage::Word;

/// The word -> counted word function: the code (in the signed-exponent representation
/// for a signed float) and its mask, all ones or 0 for a masked element. Every case is one
/// branch-free formula of loop-invariant words (an integer type is a float without
/// exponent bits; each NaN encoding a range of masked codes), so that the tile loop
/// vectorizes in lanes of the data's own width `W`, compiled once per width.
#[derive(Clone, Copy)]
pub(super) struct Prepare<W> {
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
    /// The bias shifted into the exponent field (wrapping), and whether the in-place form
    /// of [`Prepare::apply_as`] holds (a bias in `0 .. 2^exponent_bits`, as every built-in
    /// type has): then `|e - bias| < 2^exponent_bits` fits the field without a mask, and
    /// `(e - bias) · 2^shift` keeps its sign in `W`.
    bias_field: W,
    pub(super) in_place: bool,
    /// Whether the NaN test is IEEE binary32's or binary64's in words of that width.
    ieee_nan: bool,
}

impl<W: Word + PrimInt + WrappingAdd + WrappingSub> Prepare<W> {
    /// The function for elements of `format` (whose code fits `W`) under `opts`.
    pub(super) fn new(format: Format, opts: &InformationOptions) -> Self {
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
            bias_field: W::zero(),
            in_place: true,
            ieee_nan: false,
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
            p.bias_field = w((i64::from(l.bias) as u64).wrapping_shl(m));
            p.in_place = (0..1i64 << l.exponent_bits).contains(&i64::from(l.bias));
            p.ieee_nan = l.nan == NanEncoding::Ieee
                && l.bits() == W::BITS
                && matches!((l.exponent_bits, l.mantissa_bits), (8, 23) | (11, 52));
        }
        p
    }

    /// The preparation as the fused AVX-512 kernel takes it
    /// (`arch::pos_popcount_prepared_pairs_avx512`), when it can: words of 32 or 64 bits
    /// whose code is the whole word, a NaN test (if any) that is IEEE binary32's or
    /// binary64's, and for a float the sign bit just above the exponent and IEEE's bias
    /// `2^(k-1) - 1` (its signed exponent is then `e - bias` or the field's complement,
    /// see `PairPrep`); an integer has no exponent field.
    pub(super) fn pair_prep(&self) -> Option<crate::arch::PairPrep> {
        let whole = self.code == !W::zero();
        let nan = self.nan_on != W::zero();
        let lowest = self.emask & (!self.emask).wrapping_add(&W::one());
        let top = self.emask.leading_zeros() == 1 || self.emask == W::zero();
        let ieee_bias = self.bias_field == self.esign.wrapping_sub(&lowest);
        let fits = matches!(W::BITS, 32 | 64)
            && whole
            && self.in_place
            && top
            && ieee_bias
            && (!nan || self.ieee_nan);
        fits.then(|| crate::arch::PairPrep {
            bits: W::BITS,
            emask: Word::to_u64(self.emask),
            bias_field: Word::to_u64(self.bias_field),
            esign: Word::to_u64(self.esign),
            nan,
            masked: (self.masked_on != W::zero()).then(|| Word::to_u64(self.masked)),
        })
    }

    /// The counted word, and all ones (or 0 when the element is masked).
    #[inline(always)]
    pub(super) fn apply(self, word: W) -> (W, W) {
        self.apply_as::<true, true, false>(word)
    }

    /// [`Prepare::apply`] with the NaN test (`NAN`) and the masked-code test (`MASKED`)
    /// left out when false: the same result when `nan_on` (`masked_on`) is 0; and with
    /// the signed exponent computed in place (`IN_PLACE`, when `in_place`: fewer
    /// operations, the same result).
    #[inline(always)]
    pub(super) fn apply_as<const NAN: bool, const MASKED: bool, const IN_PLACE: bool>(
        self,
        word: W,
    ) -> (W, W) {
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
        if IN_PLACE {
            // The field minus the shifted bias: `d · 2^shift`, negative exactly when `d`
            // is, its magnitude `|d| · 2^shift` inside the field (see `in_place`).
            let d = (bits & self.emask).wrapping_sub(&self.bias_field);
            let neg = ones(d >> (W::BITS as usize - 1) == W::one());
            let magnitude = (d ^ neg).wrapping_sub(&neg);
            return (
                (bits & !self.emask) | magnitude | (self.esign & neg),
                !hidden,
            );
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

/// Elements prepared per check of the mask flag.
pub(super) const POS_RUN: usize = 256;

/// Prepare `src` into `dst` (the counted word `c & mask`: masked elements are 0). Returns
/// the end (an index into `src`) of the last run of [`POS_RUN`] elements that holds a
/// masked element, `None` when none is. Called once per tile, with its AVX2 twin.
pub(super) fn prepare_codes<W>(prep: &Prepare<W>, src: &[W], dst: &mut [W]) -> Option<usize>
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    #[inline(always)]
    fn run<W, const NAN: bool, const MASKED: bool, const IN_PLACE: bool>(
        prep: Prepare<W>,
        src: &[W],
        dst: &mut [W],
    ) -> Option<usize>
    where
        W: Word + PrimInt + WrappingAdd + WrappingSub,
    {
        // Runs of equal lengths cut by one index (fewer loop invariants to keep than two
        // slices' chunk iterators).
        let n = src.len().min(dst.len());
        let (src, dst) = (&src[..n], &mut dst[..n]);
        let (mut last, mut k) = (None, 0);
        while k < n {
            let e = (k + POS_RUN).min(n);
            let mut hidden = W::zero();
            for (&x, o) in src[k..e].iter().zip(&mut dst[k..e]) {
                let (c, m) = prep.apply_as::<NAN, MASKED, IN_PLACE>(x);
                *o = c & m;
                hidden = hidden | !m;
            }
            if hidden != W::zero() {
                last = Some(e);
            }
            k = e;
        }
        last
    }
    // The tests chosen once per run, not per element: the two common cases (a float
    // with NaN masked, an integer or NaN not masked) without the masked-code test, the
    // others with both tests (a mask operation or two more per element). A bias outside
    // the exponent field's range (no built-in type has one) takes the baseline loop.
    let prep = *prep;
    if !prep.in_place {
        return run::<W, true, true, false>(prep, src, dst);
    }
    crate::arch::vectorized_wide(
        #[inline(always)]
        move || match (prep.nan_on != W::zero(), prep.masked_on != W::zero()) {
            (true, false) => run::<W, true, false, true>(prep, src, dst),
            (false, false) => run::<W, false, false, true>(prep, src, dst),
            _ => run::<W, true, true, true>(prep, src, dst),
        },
    )
}

/// The masks of `src` into `dst` (all ones for an unmasked element).
#[inline(always)]
pub(super) fn prepare_masks<W>(prep: &Prepare<W>, src: &[W], dst: &mut [W])
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    let prep = *prep;
    for (&x, o) in src.iter().zip(dst.iter_mut()) {
        *o = prep.apply(x).1;
    }
}

/// The counted word and mask of each of `src` into `code` and `mask`.
#[inline(always)]
pub(super) fn prepare_run<W>(prep: &Prepare<W>, src: &[W], code: &mut [W], mask: &mut [W])
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    let prep = *prep;
    for ((&x, c), m) in src.iter().zip(code.iter_mut()).zip(mask.iter_mut()) {
        (*c, *m) = prep.apply(x);
    }
}
