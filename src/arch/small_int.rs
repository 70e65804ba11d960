//! `f32`/`f64` to 8- and 16-bit integers under any rounding mode (the directed ones:
//! towards zero, towards -Inf or +Inf, nearest with ties away from zero; and nearest-even),
//! clamped, wrapped or checked, with an optional `scalar_map` `{NaN: v}`, in explicit AVX-512:
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
use crate::number::{OutOfRange, Rounding};

/// What [`SmallIntCast`] computes: the target's range (`lo`, `hi`, integers of at most 16
/// bits), the rule (clamp into the range, wrap, or decline a block with a value out of
/// it) and the value a NaN maps to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SmallIntPlan {
    pub(crate) mode: Rounding,
    pub(crate) rule: OutOfRange,
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
    /// `f64` words (`true`) or `f32` ones: a run-time flag, not a constant parameter (one
    /// kernel per target width and mode instead of two). The test is outside the loop:
    /// LLVM unswitches the loop on it, so each loop loads one way.
    src64: bool,
    /// The check rule: the codes' greatest is kept too, and a block is accepted when its
    /// codes lie in `[ilo, ihi]` (a run-time flag, unswitched as `src64` is).
    check: bool,
    ilo: i32,
    ihi: i32,
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
            let kernel = if D::BITS == 16 {
                pick::<true>(plan)
            } else {
                pick::<false>(plan)
            };
            let clamp = plan.rule == OutOfRange::Clamp;
            Some(SmallIntCast {
                kernel,
                c: Consts {
                    lo: if clamp { plan.lo } else { f64::NEG_INFINITY },
                    hi: if clamp { plan.hi } else { f64::INFINITY },
                    nan_value: plan.nan_value.unwrap_or(f64::NAN),
                    table: fixup_table(plan.nan_value.is_some()),
                    src64: S::BITS == 64,
                    check: plan.rule == OutOfRange::Error,
                    ilo: plan.lo as i32,
                    ihi: plan.hi as i32,
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
    /// is not in `(-2^31, 2^31)`, under check one whose rounding is not in `[lo, hi]`), the
    /// words written then unspecified.
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
fn pick<const OUT16: bool>(plan: SmallIntPlan) -> Kernel {
    use Rounding::*;
    match plan.mode {
        NearestEven => kernel::<OUT16, EVEN>,
        TowardsZero => kernel::<OUT16, TRUNC>,
        TowardsNegative => kernel::<OUT16, FLOOR>,
        TowardsPositive => kernel::<OUT16, CEIL>,
        NearestAway if plan.rule == OutOfRange::Clamp && plan.lo >= 0.0 => kernel::<OUT16, AWAY_UP>,
        NearestAway => kernel::<OUT16, AWAY>,
    }
}

/// The `f64` just below one half: `x + copysign(BELOW_HALF, x)` truncated is `x` rounded to
/// the nearest integer, ties away from zero, for every `f64` (see `arch::clamp_round_away_to_i32`).
const BELOW_HALF: f64 = 0.499_999_999_999_999_94;

/// See [`SmallIntCast`]: 8 elements a step, the last step masked.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VL; `src` must be readable for `len` words of 64
/// bits (`c.src64`) or 32, `dst` writable for `len` words of 16 bits (`OUT16`) or 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn kernel<const OUT16: bool, const MODE: u8>(
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
        let (src64, check) = (c.src64, c.check);
        let nan = _mm512_set1_pd(c.nan_value);
        let table = _mm512_set1_epi64(c.table as i64);
        let lo = _mm512_set1_pd(c.lo);
        let hi = _mm512_set1_pd(c.hi);
        let half = _mm512_set1_epi64(BELOW_HALF.to_bits() as i64);
        let sign = _mm512_set1_epi64(i64::MIN);
        // The least code: `i32::MIN`, the conversion's result for NaN and values out of
        // `i32`'s range, exactly when an element is rejected under clamp and wrap (an
        // accepted code is in `[lo, hi]`, or under wrap in `(-2^31, 2^31)`); under check,
        // with the greatest, whether every code is in `[ilo, ihi]`.
        let mut least = _mm256_set1_epi32(i32::MAX);
        let mut most = _mm256_set1_epi32(i32::MIN);
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
                if check {
                    most = _mm256_max_epi32(most, code);
                }
                code
            }};
        }
        let mut i = 0;
        while i < n {
            let x = if src64 {
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
            let x = if src64 {
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
        if check {
            _mm256_cmplt_epi32_mask(least, _mm256_set1_epi32(c.ilo)) == 0
                && _mm256_cmpgt_epi32_mask(most, _mm256_set1_epi32(c.ihi)) == 0
        } else {
            _mm256_cmpeq_epi32_mask(least, _mm256_set1_epi32(i32::MIN)) == 0
        }
    }
}

/// What [`HalfIntCast`] computes: float16 or bfloat16 codes to integers of the target
/// word's width (`lo`, `hi` its range, signed or not), one rounding mode and rule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HalfIntPlan {
    pub(crate) mode: Rounding,
    /// Clamp into the range (a 32-bit target declines a block that needs it, as under
    /// the other rules), wrap to the low bits (a value beyond `i32` is declined), or
    /// decline an out-of-range value (`Error`).
    pub(crate) rule: OutOfRange,
    /// bfloat16 (`true`) or float16 codes.
    pub(crate) bfloat16: bool,
    pub(crate) lo: i64,
    pub(crate) hi: i64,
    /// The integer a NaN is written as (a `scalar_map` whose only key is NaN, its value
    /// in `lo..=hi`); `None`: a NaN is declined.
    pub(crate) nan: Option<i64>,
}

/// The loop invariants of a [`HalfIntCast`] kernel: the clamp's bounds, the test of the
/// codes (`code - bias`, as unsigned, at most `limit` for every accepted element), and the
/// code of a NaN lane.
#[derive(Clone, Copy, Debug)]
struct HalfConsts {
    lo: f32,
    hi: f32,
    bias: i32,
    limit: u32,
    /// The 32-bit lane written for a NaN: the plan's value, or else the conversion's own
    /// indefinite (which the codes' test then declines, as without this lane).
    nan: i32,
    /// bfloat16 (`true`) or float16 codes.
    bf16: bool,
}

/// One [`HalfIntCast`] kernel: `len` 16-bit codes at `src` into `len` words at `dst`,
/// streamed stores when the flag is set; `false` when an element is rejected.
#[cfg(target_arch = "x86_64")]
type HalfKernel = unsafe fn(*const u16, *mut u8, usize, &HalfConsts, bool) -> bool;

/// float16/bfloat16 codes in `u16` words to `u8`/`u16`/`u32` words (`D`) holding integers
/// of the word's width, with AVX-512, in registers: 16 codes a step widened to `f32`
/// exactly (`vcvtph2ps`, or a shift for bfloat16), converted by the conversion's own
/// rounding (`vcvtps2dq` with a static rounding mode, `vcvttps2dq`, or the unsigned forms
/// for `u32`), narrowed by `vpmovdw`/`vpmovdb`. Where the `buffer` path of
/// `convert::fast::widen` widened a block into an L1 buffer and ran the `f32` kernels over
/// it (2.1-2.8 instructions an element), this is one pass (0.4-0.6).
///
/// Every element a kernel accepts converts to its integer indefinite only when rejected
/// (NaN, ±Inf, a value beyond `i32`, or `u32`'s range for `u32`): `i32::MIN` for the
/// signed conversion, `u32::MAX` for the unsigned one, which no `f32` converts to. The
/// codes' test is one subtraction and one unsigned maximum a vector: under the check rule
/// `code - lo <= hi - lo` is the range, under the others `code - (i32::MIN + 1) <=
/// u32::MAX - 1` rejects only the indefinite. `i32` takes that kernel under every rule (a
/// value it would clamp converts to the indefinite: declined, and the caller's path
/// decides), and so do `u32` under the check rule and wrap into 8, 16 and 32 bits with the
/// signed conversion (the narrowing, or `u32`'s bits, keep the low bits). Clamp into 8,
/// 16 bits and `u32` has its own kernel: `vfixupimmps` makes ±Inf NaN, `vmaxps`/`vminps`
/// keep a NaN (the value second), and one `vpminsd` a vector keeps the least code (into
/// `u32` the signed conversion too: a value from 2^31 on is declined).
///
/// Under a `scalar_map` whose only key is NaN ([`HalfIntPlan::nan`]) a NaN lane is
/// written as the map's value: one compare into a mask and one masked move a step, which
/// every kernel runs (without a map the lane is the indefinite the conversion gives a NaN
/// anyway), so that one kernel per target, mode and rule serves both (0.12 instructions an
/// element more: `f16 -> i16` under clamp 0.73 -> 0.85).
///
/// It exists only when the level allows AVX-512 ([`HalfIntCast::new`]), so
/// [`HalfIntCast::run`] is safe.
pub(crate) struct HalfIntCast<D> {
    #[cfg(target_arch = "x86_64")]
    kernel: HalfKernel,
    c: HalfConsts,
    words: PhantomData<D>,
}

impl<D: Word> HalfIntCast<D> {
    /// The kernel for `plan`, `None` unless the level allows AVX-512 and `D` is 8, 16 or
    /// 32 bits wide, with `plan`'s range that of the word's width.
    #[inline]
    pub(crate) fn new(plan: HalfIntPlan) -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        {
            let signed = plan.lo < 0;
            let bits = D::BITS;
            let (lo, hi) = if signed {
                (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
            } else {
                (0, (1i64 << bits) - 1)
            };
            if !super::has_avx512()
                || !matches!(bits, 8 | 16 | 32)
                || (plan.lo, plan.hi) != (lo, hi)
            {
                return None;
            }
            // Clamp into `u32` is the clamp kernel's too (`[0, 2^32]` in `f32`, the signed
            // conversion: a value from 2^31 on is declined), and wrap into `u32` the signed
            // conversion's low bits, as into 8 and 16 bits.
            let clamp = plan.rule == OutOfRange::Clamp && (bits < 32 || !signed);
            let wrap_u32 = plan.rule == OutOfRange::Wrap && bits == 32 && !signed;
            let kernel = if clamp {
                match bits {
                    8 => pick_clamp::<OUT8>(plan.mode),
                    16 => pick_clamp::<OUT16>(plan.mode),
                    _ => pick_clamp::<OUT_I32>(plan.mode),
                }
            } else {
                match (bits, signed || wrap_u32) {
                    (8, _) => pick_check::<OUT8>(plan.mode),
                    (16, _) => pick_check::<OUT16>(plan.mode),
                    (_, true) => pick_check::<OUT_I32>(plan.mode),
                    (_, false) => pick_check::<OUT_U32>(plan.mode),
                }
            };
            // The codes' test (see the type's doc): the range under the check rule into 8
            // or 16 bits, else only the indefinite (`u32::MAX` itself for `u32`, whose
            // conversion never gives it otherwise).
            let (bias, limit) = if plan.rule == OutOfRange::Error && bits < 32 {
                (lo as i32, (hi - lo) as u32)
            } else if signed || bits < 32 || wrap_u32 {
                // The signed conversion (8 and 16 bits, and `u32` under wrap, take its low
                // bits).
                (i32::MIN + 1, u32::MAX - 1)
            } else {
                (0, u32::MAX - 1)
            };
            // The indefinite of the conversion the kernel runs: the unsigned one's for the
            // check kernel into `u32`, else the signed one's.
            let unsigned = !clamp && bits == 32 && !signed && !wrap_u32;
            let indefinite = if unsigned { -1 } else { i32::MIN };
            // A value of the target as its 32-bit lane: `u32`'s from 2^31 on as its bits.
            let nan = plan.nan.map_or(indefinite, |v| v as i32);
            Some(HalfIntCast {
                kernel,
                c: HalfConsts {
                    lo: lo as f32,
                    hi: hi as f32,
                    bias,
                    limit,
                    nan,
                    bf16: plan.bfloat16,
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
    /// `false` when one was not (the words written then unspecified). With `stream` and a
    /// 16- or 32-bit `dst` that starts on a 64-byte boundary, the whole steps are stored
    /// by non-temporal stores (the caller fences).
    #[inline]
    pub(crate) fn run(&self, src: &[u16], dst: &mut [D], stream: bool) -> bool {
        let len = src.len().min(dst.len());
        #[cfg(target_arch = "x86_64")]
        {
            let stream = stream && (dst.as_ptr() as usize).is_multiple_of(64);
            // SAFETY: `self` exists only when the CPU has the AVX-512 features the kernels
            // require (`new` checked `has_avx512`, whose level includes the AVX2 level's
            // F16C), and `new` chose the kernel for the width of `D`: it reads `len` words
            // from `src` and writes `len` words of `D` to `dst`, both at least `len` long;
            // it streams only with `dst` 64-byte aligned (checked here).
            unsafe { (self.kernel)(src.as_ptr(), dst.as_mut_ptr().cast(), len, &self.c, stream) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (src, dst, len, stream, self.c);
            false
        }
    }
}

/// The targets of the check kernel as its const parameter: 8- or 16-bit words (the
/// signed conversion's low bits), `i32`, `u32`.
const OUT8: u8 = 0;
const OUT16: u8 = 1;
const OUT_I32: u8 = 2;
const OUT_U32: u8 = 3;

#[cfg(target_arch = "x86_64")]
fn pick_clamp<const OUT: u8>(mode: Rounding) -> HalfKernel {
    use Rounding::*;
    match mode {
        NearestEven => clamp_kernel::<OUT, EVEN>,
        TowardsZero => clamp_kernel::<OUT, TRUNC>,
        TowardsNegative => clamp_kernel::<OUT, FLOOR>,
        TowardsPositive => clamp_kernel::<OUT, CEIL>,
        NearestAway => clamp_kernel::<OUT, AWAY>,
    }
}

#[cfg(target_arch = "x86_64")]
fn pick_check<const OUT: u8>(mode: Rounding) -> HalfKernel {
    use Rounding::*;
    match mode {
        NearestEven => check_kernel::<OUT, EVEN>,
        TowardsZero => check_kernel::<OUT, TRUNC>,
        TowardsNegative => check_kernel::<OUT, FLOOR>,
        TowardsPositive => check_kernel::<OUT, CEIL>,
        NearestAway => check_kernel::<OUT, AWAY>,
    }
}

/// The `f32` just below one half: `x + copysign(HALF_BELOW_F32, x)` truncated is `x`
/// rounded to the nearest integer, ties away from zero, for every `f32` (the sum rounds to
/// `x + 0.5` exactly where that is a tie, and below it otherwise).
const HALF_BELOW_F32: f32 = 0.499_999_97;

/// Steps whose loads a kernel issues before the stores of the steps before them, when it
/// writes 16-bit words that start a little after its 16-bit input (see [`ahead`]).
const AHEAD: usize = 8;

/// Whether a kernel writing 16-bit words from 16-bit codes loads [`AHEAD`] steps ahead:
/// when the output starts a little after the input modulo 4 KiB (by at most the bytes of
/// `AHEAD` steps), the load of a step shares the low address bits with the store of a
/// step just before it, and on an Intel Xeon (Sapphire Rapids, a VM) with both on huge
/// pages the loads waited on those stores: `f16 -> i16` over 4M elements (the output
/// 8 MiB + 16 bytes after the input) took 8-13 ms instead of 0.7-0.9, 16 bytes apart;
/// 2.5 ms 64 bytes apart, 1.3 ms 144 apart, unaffected from 272 bytes on. A load issued
/// before those stores (in program order) does not wait on them. Running the steps
/// backwards avoided it too, but ran 20-40 % slower. The 8- and 32-bit outputs move at
/// another rate than the input, so such a pairing lasts a few steps at most.
#[inline(always)]
fn ahead(src: *const u16, dst: *mut u8) -> bool {
    let d = (dst as usize).wrapping_sub(src as usize) % 4096;
    d != 0 && d <= AHEAD * 32
}

/// The whole steps of a kernel: `$body` with `$raw` (16 codes) and `$d` (where their
/// output goes) for `$steps` steps of `$src` and `$dst` (`$out` bytes an output word);
/// with `$ahead`, in groups of [`AHEAD`] steps whose loads come before the stores of the
/// group before (see [`ahead`]). `$bf16` is the kernel's run-time widening flag
/// ([`widen16`]): the group loop is written once per value of it, the flag a constant in
/// each, since LLVM did not take the test out of that loop (`f16 -> i16` under clamp took
/// 1.28 instructions an element instead of 0.73); the plain loop, small, it does unswitch.
macro_rules! steps {
    ($src:expr, $dst:expr, $steps:expr, $out:expr, $ahead:expr, $bf16:ident, |$raw:ident, $d:ident| $body:block) => {{
        const STEP: usize = 16;
        let (mut s, mut d, mut k, out): (*const u16, *mut u8, usize, usize) =
            ($src, $dst, $steps, $out);
        if $ahead && k >= AHEAD {
            let groups = k / AHEAD;
            if $bf16 {
                let $bf16 = true;
                groups!(s, d, groups, out, |$raw, $d| $body);
            } else {
                let $bf16 = false;
                groups!(s, d, groups, out, |$raw, $d| $body);
            }
            k -= groups * AHEAD;
        }
        for _ in 0..k {
            let $raw = _mm256_loadu_si256(s.cast());
            let $d = d;
            $body
            s = s.add(STEP);
            d = d.add(STEP * out);
        }
    }};
}

/// The groups of [`steps!`]: `$groups` groups of [`AHEAD`] steps from `$s` and `$d`
/// (advanced past them), each group's loads before the stores of the group before.
macro_rules! groups {
    ($s:ident, $d:ident, $groups:expr, $out:expr, |$raw:ident, $dd:ident| $body:block) => {{
        const STEP: usize = 16;
        let groups = $groups;
        let mut cur = [_mm256_setzero_si256(); AHEAD];
        for (j, c) in cur.iter_mut().enumerate() {
            *c = _mm256_loadu_si256($s.add(j * STEP).cast());
        }
        for g in 0..groups {
            // The last group loads itself again instead of reading past its end.
            let at = if g + 1 < groups {
                $s.add(AHEAD * STEP)
            } else {
                $s
            };
            let mut next = [_mm256_setzero_si256(); AHEAD];
            for (j, c) in next.iter_mut().enumerate() {
                *c = _mm256_loadu_si256(at.add(j * STEP).cast());
            }
            for (j, &$raw) in cur.iter().enumerate() {
                let $dd = $d.add(j * STEP * $out);
                $body
            }
            cur = next;
            $s = $s.add(AHEAD * STEP);
            $d = $d.add(AHEAD * STEP * $out);
        }
    }};
}

/// 16 codes (a step, or the masked last one) as `f32`s, exactly: bfloat16 codes when
/// `bf16`, float16 ones otherwise. A run-time flag rather than a constant parameter: the
/// kernels test it outside their loops (see [`steps!`]), so each loop widens one way, and
/// there is one kernel per target, mode and rule instead of two.
///
/// # Safety
/// AVX-512 F (and F16C's instruction in its 512-bit form, part of F).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn widen16(h: std::arch::x86_64::__m256i, bf16: bool) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    // SAFETY: AVX-512 F, this function's contract.
    unsafe {
        if bf16 {
            // bfloat16 is the top half of an `f32`.
            _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h)))
        } else {
            _mm512_cvtph_ps(h)
        }
    }
}

/// `f32`s to `i32`s (`u32`s when `unsigned`, a constant of the caller) in mode `MODE`; the indefinite where the
/// rounded value is out of range or NaN.
///
/// # Safety
/// AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn convert<const MODE: u8>(
    r: std::arch::x86_64::__m512,
    unsigned: bool,
) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    const NEG: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    const POS: i32 = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
    const NEAR: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    // SAFETY: AVX-512 F, this function's contract.
    unsafe {
        let r = if MODE == AWAY {
            // `half | (r & sign)`: the half with `r`'s sign.
            let h = _mm512_ternarylogic_epi32::<0xf8>(
                _mm512_castps_si512(_mm512_set1_ps(HALF_BELOW_F32)),
                _mm512_castps_si512(r),
                _mm512_set1_epi32(i32::MIN),
            );
            _mm512_add_ps(r, _mm512_castsi512_ps(h))
        } else {
            r
        };
        match (MODE, unsigned) {
            (TRUNC | AWAY, false) => _mm512_cvttps_epi32(r),
            (TRUNC | AWAY, true) => _mm512_cvttps_epu32(r),
            (FLOOR, false) => _mm512_cvt_roundps_epi32::<NEG>(r),
            (FLOOR, true) => _mm512_cvt_roundps_epu32::<NEG>(r),
            (CEIL, false) => _mm512_cvt_roundps_epi32::<POS>(r),
            (CEIL, true) => _mm512_cvt_roundps_epu32::<POS>(r),
            (_, false) => _mm512_cvt_roundps_epi32::<NEAR>(r),
            (_, true) => _mm512_cvt_roundps_epu32::<NEAR>(r),
        }
    }
}

/// A step's 16 codes into 8-, 16- or 32-bit words at `d` (the low bits), streamed with
/// `stream` where the output is 16 or 32 bits wide.
///
/// # Safety
/// AVX-512 F, BW and VL; `d` writable for 16 words of `OUT`, 32-byte (16 bits) or 64-byte
/// (32 bits) aligned when `stream` is set.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store<const OUT: u8>(d: *mut u8, code: std::arch::x86_64::__m512i, stream: bool) {
    use std::arch::x86_64::*;
    // SAFETY: this function's contract.
    unsafe {
        match OUT {
            OUT8 => _mm_storeu_si128(d.cast(), _mm512_cvtepi32_epi8(code)),
            OUT16 if stream => _mm256_stream_si256(d.cast(), _mm512_cvtepi32_epi16(code)),
            OUT16 => _mm256_storeu_si256(d.cast(), _mm512_cvtepi32_epi16(code)),
            _ if stream => _mm512_stream_si512(d.cast(), code),
            _ => _mm512_storeu_si512(d.cast(), code),
        }
    }
}

/// The lanes of `k` of a step's codes into 8-, 16- or 32-bit words at `d`.
///
/// # Safety
/// AVX-512 F, BW and VL; `d` writable for the words of the lanes of `k`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store_last<const OUT: u8>(
    d: *mut u8,
    k: std::arch::x86_64::__mmask16,
    code: std::arch::x86_64::__m512i,
) {
    use std::arch::x86_64::*;
    // SAFETY: this function's contract (masked stores touch no other memory).
    unsafe {
        match OUT {
            OUT8 => _mm512_mask_cvtepi32_storeu_epi8(d.cast(), k, code),
            OUT16 => _mm512_mask_cvtepi32_storeu_epi16(d.cast(), k, code),
            _ => _mm512_mask_storeu_epi32(d.cast(), k, code),
        }
    }
}

/// A kernel's whole steps ([`steps!`]) and its last, masked one, with `$codes!` turning a
/// vector of 16 widened values into their codes (the kernel's rule): the loop that
/// [`clamp_kernel`] and [`check_kernel`] share, whose `$src`, `$dst`, `$len` (words), `$n`
/// (words in whole steps of their `STEP`), `$out` (bytes an output word), `$bf16` and `$stream` are
/// theirs. The masked-off lanes of the last step are zeros, whose code every rule takes.
macro_rules! steps_and_last {
    ($codes:ident, $src:ident, $dst:ident, $len:ident, $n:ident, $out:ident, $bf16:ident,
     $stream:ident, $OUT:ident) => {{
        steps!(
            $src,
            $dst,
            $n / STEP,
            $out,
            const { $OUT == OUT16 } && ahead($src, $dst),
            $bf16,
            |raw, d| {
                let code = $codes!(widen16(raw, $bf16));
                store::<$OUT>(d, code, $stream);
            }
        );
        let rest = $len - $n;
        if rest > 0 {
            let k: __mmask16 = ((1u32 << rest) - 1) as u16;
            let code = $codes!(widen16(
                _mm256_maskz_loadu_epi16(k, $src.add($n).cast()),
                $bf16
            ));
            store_last::<$OUT>($dst.add($n * $out), k, code);
        }
    }};
}

/// Clamp into 8, 16 or 32 bits (`OUT`; 32 for `u32`): see [`HalfIntCast`]; 16 codes a
/// step, the last step masked.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VL; `src` must be readable for `len` words,
/// `dst` writable for `len` words of 8, 16 or 32 bits (`OUT`), and 64-byte aligned when
/// `stream` is set.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn clamp_kernel<const OUT: u8, const MODE: u8>(
    src: *const u16,
    dst: *mut u8,
    len: usize,
    c: &HalfConsts,
    stream: bool,
) -> bool {
    use std::arch::x86_64::*;
    const STEP: usize = 16;
    let n = len / STEP * STEP;
    let out = match OUT {
        OUT8 => 1,
        OUT16 => 2,
        _ => 4,
    };
    // SAFETY: the CPU has AVX-512 F, BW and VL (this function's contract). The `n / STEP`
    // steps read 16 words at `src` + `i` words and write 16 at `dst` + `i` words
    // (unaligned forms) for `i` = 0, 16, .., n - 16, `i + 16 <= n <= len` (the groups'
    // loads of the next group too, and the last group's of itself); the last step reads
    // and writes only its `len - n` lanes (masked loads and stores touch no other memory).
    unsafe {
        let bf16 = c.bf16;
        let table = _mm512_set1_epi32(fixup_table(false) as i32);
        let lo = _mm512_set1_ps(c.lo);
        let hi = _mm512_set1_ps(c.hi);
        let nan = _mm512_set1_epi32(c.nan);
        let mut least = _mm512_set1_epi32(i32::MAX);
        macro_rules! codes {
            ($x:expr) => {{
                // ±Inf and NaN -> NaN, anything else itself.
                let x = $x;
                // The table has no response that keeps the first operand: `x` there costs
                // no register to zero.
                let r = _mm512_fixupimm_ps::<0>(x, x, table);
                // NaN second: `vmaxps` / `vminps` return the second operand when one is
                // NaN, so a NaN stays NaN and converts to the indefinite.
                let r = _mm512_min_ps(hi, _mm512_max_ps(lo, r));
                // A NaN of the input (not ±Inf) as its lane (see `HalfConsts::nan`).
                let code = _mm512_mask_mov_epi32(
                    convert::<MODE>(r, false),
                    _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x),
                    nan,
                );
                least = _mm512_min_epi32(least, code);
                code
            }};
        }
        // A zero of the last step's masked-off lanes is in `[lo, hi]`: never rejected.
        steps_and_last!(codes, src, dst, len, n, out, bf16, stream, OUT);
        _mm512_cmpeq_epi32_mask(least, _mm512_set1_epi32(i32::MIN)) == 0
    }
}

/// Check or wrap into 8 or 16 bits, any rule into 32 (`OUT`): see [`HalfIntCast`]; 16
/// codes a step, the last step masked.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VL; `src` must be readable for `len` words,
/// `dst` writable for `len` words of 8, 16 or 32 bits (`OUT`), and 64-byte aligned when
/// `stream` is set.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn check_kernel<const OUT: u8, const MODE: u8>(
    src: *const u16,
    dst: *mut u8,
    len: usize,
    c: &HalfConsts,
    stream: bool,
) -> bool {
    use std::arch::x86_64::*;
    const STEP: usize = 16;
    let n = len / STEP * STEP;
    let out = match OUT {
        OUT8 => 1,
        OUT16 => 2,
        _ => 4,
    };
    // SAFETY: as in `clamp_kernel`; the streamed stores (`stream`, a 16- or 32-bit
    // output) go to `dst` + a multiple of 16 words, 32- or 64-byte aligned as those
    // stores require since `dst` is 64-byte aligned (this function's contract).
    unsafe {
        let bf16 = c.bf16;
        let bias = _mm512_set1_epi32(c.bias);
        let nan = _mm512_set1_epi32(c.nan);
        let mut most = _mm512_setzero_si512();
        macro_rules! codes {
            ($x:expr) => {{
                let x = $x;
                // A NaN as its lane (see `HalfConsts::nan`).
                let code = _mm512_mask_mov_epi32(
                    convert::<MODE>(x, OUT == OUT_U32),
                    _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x),
                    nan,
                );
                // `u32`'s bias is 0: no subtraction.
                let biased = if OUT == OUT_U32 {
                    code
                } else {
                    _mm512_sub_epi32(code, bias)
                };
                most = _mm512_max_epu32(most, biased);
                code
            }};
        }
        // A zero of the last step's masked-off lanes has code 0, in every range.
        steps_and_last!(codes, src, dst, len, n, out, bf16, stream, OUT);
        _mm512_cmpgt_epu32_mask(most, _mm512_set1_epi32(c.limit as i32)) == 0
    }
}
