//! `f32`/`f64` to 8- and 16-bit integers under any rounding mode (the directed ones:
//! towards zero, towards -Inf or +Inf, nearest with ties away from zero; and nearest-even),
//! clamped or wrapped, with an optional `scalar_map` `{NaN: v}`, in explicit AVX-512:
//! [`SmallIntCast`].
//!
//! The portable loops (`convert::fast::float_to_int`, which documents the arithmetic) take
//! the mode as loop invariants around one `floor` (`s · floor(s · x + h)`) and test each
//! rule with values OR-ed together. Zen 4 runs a 512-bit operation as two 256-bit halves,
//! so the operations per vector decide once the loop is vectorized: LLVM's AVX-512 build of
//! them took 15 operations per 8 `f64` (`f64 -> u8` towards zero under clamp with a map),
//! compute-bound at about 0.6 of a copy's bytes per second. Here the mode is the
//! conversion's own (`vcvttpd2dq`, or `vcvtpd2dq` with a static rounding mode), one
//! `vfixupimmpd` maps NaN to the map's value (or keeps it NaN) and ±Inf to NaN, the clamp
//! keeps a NaN (`vmaxpd` / `vminpd` with the value second), and every rejected element
//! converts to the integer indefinite `i32::MIN`, which one `vpminsd` per vector keeps:
//! 5 to 7 operations per vector.

use std::marker::PhantomData;

use crate::number::storage::Word;

/// A rounding mode of [`SmallIntCast`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SmallIntRounding {
    NearestEven,
    TowardsZero,
    TowardsNegative,
    TowardsPositive,
    NearestAway,
}

/// What [`SmallIntCast`] computes: the target's range (`lo`, `hi`, integers of at most 16
/// bits), the rule (clamp into the range, else wrap) and the value a NaN maps to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SmallIntPlan {
    pub(crate) mode: SmallIntRounding,
    /// Clamp (`true`) or wrap (`false`).
    pub(crate) clamp: bool,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    /// `scalar_map` `{NaN: v}`: `v`, an integer in `[lo, hi]`.
    pub(crate) nan_value: Option<f64>,
}

/// The loop invariants of a kernel.
#[derive(Clone, Copy, Debug)]
struct Consts {
    lo: f64,
    hi: f64,
    nan_value: f64,
    /// `vfixupimmpd`'s table (four bits per class of the value, class 0 the lowest).
    table: u64,
}

/// `vfixupimmpd`'s responses: the destination operand (the map's value), the value
/// itself, the default NaN.
const KEEP: u64 = 0;
const VALUE: u64 = 1;
const INDEFINITE: u64 = 3;

/// The table of `vfixupimmpd`: per class (QNaN, SNaN, zero, +1, -Inf, +Inf, negative,
/// positive) its response. ±Inf become NaN (never clamped, never wrapped: rejected), NaN
/// the map's value when there is a map, else stays NaN.
const fn fixup_table(map: bool) -> u64 {
    let nan = if map { KEEP } else { INDEFINITE };
    let classes = [nan, nan, VALUE, VALUE, INDEFINITE, INDEFINITE, VALUE, VALUE];
    let mut table = 0;
    let mut j = 0;
    while j < 8 {
        table |= classes[j] << (4 * j);
        j += 1;
    }
    table
}

/// One kernel: `len` words of `S` at `src` into `len` words of `D` at `dst`; `false` when
/// an element is rejected (the words written are then unspecified).
#[cfg(target_arch = "x86_64")]
type Kernel = unsafe fn(*const u8, *mut u8, usize, &Consts) -> bool;

/// `f32`/`f64` words (`S`) to `u8`/`u16` words (`D`) holding integers of the word's width
/// under a [`SmallIntPlan`], with AVX-512. It exists only when the level allows AVX-512
/// ([`SmallIntCast::new`]), so [`SmallIntCast::run`] is safe.
pub(crate) struct SmallIntCast<S, D> {
    #[cfg(target_arch = "x86_64")]
    kernel: Kernel,
    c: Consts,
    words: PhantomData<(S, D)>,
}

impl<S: Word, D: Word> SmallIntCast<S, D> {
    /// The kernel for `plan`, `None` unless the level allows AVX-512, `S` is 32 or 64 bits
    /// wide and `D` 8 or 16.
    #[inline]
    pub(crate) fn new(plan: SmallIntPlan) -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        {
            if !super::has_avx512() || !matches!(S::BITS, 32 | 64) || !matches!(D::BITS, 8 | 16) {
                return None;
            }
            let kernel = match (S::BITS == 64, D::BITS == 16) {
                (true, false) => pick::<true, false>(plan),
                (true, true) => pick::<true, true>(plan),
                (false, false) => pick::<false, false>(plan),
                (false, true) => pick::<false, true>(plan),
            };
            Some(SmallIntCast {
                kernel,
                c: Consts {
                    lo: if plan.clamp {
                        plan.lo
                    } else {
                        f64::NEG_INFINITY
                    },
                    hi: if plan.clamp { plan.hi } else { f64::INFINITY },
                    nan_value: plan.nan_value.unwrap_or(f64::NAN),
                    table: fixup_table(plan.nan_value.is_some()),
                },
                words: PhantomData,
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = plan;
            None
        }
    }

    /// `src` into `dst` (the shorter length): `true` when every element was accepted,
    /// `false` when one was not (NaN without a map, ±Inf, under wrap a value whose rounding
    /// is not in `(-2^31, 2^31)`), the words written then unspecified.
    #[inline]
    pub(crate) fn run(&self, src: &[S], dst: &mut [D]) -> bool {
        let len = src.len().min(dst.len());
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `self` exists only when the CPU has the AVX-512 features the kernels
            // require (`new` checked `has_avx512`), and `new` chose the kernel for the
            // widths of `S` and `D`: it reads `len` words of `S` from `src` and writes `len`
            // words of `D` to `dst`, both at least `len` long.
            unsafe { (self.kernel)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), len, &self.c) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (src, dst, len, self.c);
            false
        }
    }
}

/// The modes as the kernels' const parameter.
const TRUNC: u8 = 0;
const FLOOR: u8 = 1;
const CEIL: u8 = 2;
const AWAY: u8 = 3;
/// Nearest-away into a range without negative values, under clamp: a clamped value is at
/// least -0, so the half needs no sign (one operation fewer a vector).
const AWAY_UP: u8 = 4;
const EVEN: u8 = 5;

#[cfg(target_arch = "x86_64")]
fn pick<const SRC64: bool, const OUT16: bool>(plan: SmallIntPlan) -> Kernel {
    use SmallIntRounding::*;
    match plan.mode {
        NearestEven => kernel::<SRC64, OUT16, EVEN>,
        TowardsZero => kernel::<SRC64, OUT16, TRUNC>,
        TowardsNegative => kernel::<SRC64, OUT16, FLOOR>,
        TowardsPositive => kernel::<SRC64, OUT16, CEIL>,
        NearestAway if plan.clamp && plan.lo >= 0.0 => kernel::<SRC64, OUT16, AWAY_UP>,
        NearestAway => kernel::<SRC64, OUT16, AWAY>,
    }
}

/// The `f64` just below one half: `x + copysign(BELOW_HALF, x)` truncated is `x` rounded to
/// the nearest integer, ties away from zero, for every `f64` (see `arch::clamp_round_away_to_i32`).
const BELOW_HALF: f64 = 0.499_999_999_999_999_94;

/// See [`SmallIntCast`]: 8 elements a step, the last step masked.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VL; `src` must be readable for `len` words of 64
/// bits (`SRC64`) or 32, `dst` writable for `len` words of 16 bits (`OUT16`) or 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn kernel<const SRC64: bool, const OUT16: bool, const MODE: u8>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    c: &Consts,
) -> bool {
    use std::arch::x86_64::*;
    const STEP: usize = 8;
    let n = len / STEP * STEP;
    // SAFETY: the CPU has AVX-512 F, BW and VL (this function's contract). A step reads 8
    // words at `src` + `i` words and writes 8 at `dst` + `i` words (unaligned forms) with
    // `i + 8 <= n <= len`; the last step reads and writes only its `len - n` lanes (masked
    // loads and stores touch no other memory).
    unsafe {
        let nan = _mm512_set1_pd(c.nan_value);
        let table = _mm512_set1_epi64(c.table as i64);
        let lo = _mm512_set1_pd(c.lo);
        let hi = _mm512_set1_pd(c.hi);
        let half = _mm512_set1_epi64(BELOW_HALF.to_bits() as i64);
        let sign = _mm512_set1_epi64(i64::MIN);
        // The least code: `i32::MIN`, the conversion's result for NaN and values out of
        // `i32`'s range, exactly when an element is rejected (an accepted code is in
        // `[lo, hi]`, or under wrap in `(-2^31, 2^31)`).
        let mut least = _mm256_set1_epi32(i32::MAX);
        macro_rules! codes {
            ($x:expr) => {{
                // NaN -> the map's value (or NaN), ±Inf -> NaN, anything else itself.
                let r = _mm512_fixupimm_pd::<0>(nan, $x, table);
                // NaN second: `vmaxpd` / `vminpd` return the second operand when one is
                // NaN, so a NaN stays NaN. Under wrap the bounds are ±Inf, no clamp: two
                // operations a vector there instead of a kernel per rule (half the code).
                let r = _mm512_min_pd(hi, _mm512_max_pd(lo, r));
                let code = match MODE {
                    TRUNC => _mm512_cvttpd_epi32(r),
                    FLOOR => {
                        _mm512_cvt_roundpd_epi32::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(r)
                    }
                    CEIL => {
                        _mm512_cvt_roundpd_epi32::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(r)
                    }
                    EVEN => _mm512_cvt_roundpd_epi32::<
                        { _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC },
                    >(r),
                    AWAY_UP => _mm512_cvttpd_epi32(_mm512_add_pd(r, _mm512_castsi512_pd(half))),
                    _ => {
                        // `half | (r & sign)`: the half with `r`'s sign.
                        let h =
                            _mm512_ternarylogic_epi64::<0xf8>(half, _mm512_castpd_si512(r), sign);
                        _mm512_cvttpd_epi32(_mm512_add_pd(r, _mm512_castsi512_pd(h)))
                    }
                };
                least = _mm256_min_epi32(least, code);
                code
            }};
        }
        let mut i = 0;
        while i < n {
            let x = if SRC64 {
                _mm512_loadu_pd(src.cast::<f64>().add(i))
            } else {
                _mm512_cvtps_pd(_mm256_loadu_ps(src.cast::<f32>().add(i)))
            };
            let code = codes!(x);
            if OUT16 {
                _mm_storeu_si128(dst.cast::<u16>().add(i).cast(), _mm256_cvtepi32_epi16(code));
            } else {
                _mm_storel_epi64(dst.add(i).cast(), _mm256_cvtepi32_epi8(code));
            }
            i += STEP;
        }
        let rest = len - n;
        if rest > 0 {
            let k: __mmask8 = (1u8 << rest) - 1;
            let x = if SRC64 {
                _mm512_maskz_loadu_pd(k, src.cast::<f64>().add(n))
            } else {
                _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, src.cast::<f32>().add(n)))
            };
            // The masked-off lanes are zeros: codes of `[lo, hi]` or 0, never rejected.
            let code = codes!(x);
            if OUT16 {
                _mm256_mask_cvtepi32_storeu_epi16(dst.cast::<u16>().add(n).cast(), k, code);
            } else {
                _mm256_mask_cvtepi32_storeu_epi8(dst.add(n).cast(), k, code);
            }
        }
        _mm256_cmpeq_epi32_mask(least, _mm256_set1_epi32(i32::MIN)) == 0
    }
}
