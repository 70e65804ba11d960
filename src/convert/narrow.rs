//! `f32`/`f64` into a narrower signed float format (float16, bfloat16, the float8/6/4
//! formats, `f64 -> f32`) by integer arithmetic on the bits, under every rounding mode.
//!
//! The source mantissa (with its implicit bit) is shifted right by the difference in
//! precision, plus the distance below the target's smallest normal exponent for results that
//! are subnormal in the target, and the shifted-out bits decide the increment. The target
//! code is then `(biased exponent - 1) << mantissa_bits` plus the rounded mantissa, so a
//! carry out of the mantissa moves into the exponent by itself. That is one rounding of the
//! exact value, never two: no intermediate format is involved.
//!
//! The cases that are errors are only *detected* here and left to the reference path (see
//! [`super::fast`]), which finds the first one: overflow after rounding without `clamp`, and
//! NaN or ±Inf into a format without them. The others follow the reference's rules
//! ([`super::float::round_to_float`]): NaN (any payload, any sign) gives the canonical NaN,
//! ±Inf gives ±Inf, overflow under `clamp` gives ±Inf or, without infinities, the largest
//! finite value of that sign, and a negative value rounding to zero in a format without -0
//! (`fnuz`) gives +0.
//!
//! The loop has no data-dependent branches (the rounding mode is a loop invariant: one
//! kernel per width pair for every mode, [`any_mode`]), so LLVM vectorizes it with variable
//! shifts.
//!
//! Nearest-even, the common mode, has faster kernels: float16 by the CPU's own conversion
//! where it has F16C (`arch::F16c`; from `f64` through `f32` rounded to odd), the other
//! formats from `f32` by one floating-point addition (`narrow/from_f32.rs`), bfloat16 from
//! `f64` by AVX-512 BF16 where the CPU has it (through `f32` rounded to odd), and from `f64`
//! by the uniform-shift kernel below.

use super::blocks::by_blocks;
use crate::arch::F16c;
use crate::number::layout::{BFLOAT16, FLOAT16, FloatLayout};
use crate::number::storage::{Word, Words};
use crate::number::{OutOfRange, Rounding};

/// A [`Rounding`] as a `u8` const parameter of the kernels (here and in `fast/`, which
/// uses this module: the codes live in the lower one).
pub(crate) const NEAREST_EVEN: u8 = 0;
pub(crate) const TOWARDS_ZERO: u8 = 1;
pub(crate) const TOWARDS_POSITIVE: u8 = 2;
pub(crate) const TOWARDS_NEGATIVE: u8 = 3;
pub(crate) const NEAREST_AWAY: u8 = 4;

mod from_f32;

/// Whether the kernel is exact for `source -> l`: a signed target with subnormals, fewer
/// mantissa bits, and a bias no larger than the source's (so that a source subnormal is a
/// target subnormal or, for bfloat16 from `f32`, lands on the same exponent field).
pub(crate) const fn applies(l: FloatLayout, source_f64: bool) -> bool {
    let (mantissa, exponent, bias) = if source_f64 {
        (52, 11, 1023)
    } else {
        (23, 8, 127)
    };
    l.signed
        && l.subnormals
        && l.mantissa_bits < mantissa
        && l.exponent_bits <= exponent
        && l.bias <= bias
        && l.bias >= 1
}

/// The constants of the `f32` nearest-even kernels for a layout and rule: made once per
/// call by [`plan`], outside the loop over blocks (LLVM does not hoist them out of it).
pub(crate) use from_f32::Plan;

/// [`Plan`] for `l` under `oor`.
#[inline(always)]
pub(crate) fn plan(l: FloatLayout, oor: OutOfRange) -> Plan {
    Plan::new(l, oor == OutOfRange::Clamp)
}

/// Nearest-even, the default, over `src` block by block (`by_blocks`; `plan` is
/// [`plan`]`(l, oor)`, made once per call): each block by the uniform kernel of its source
/// and layout where one applies (`from_f32` for `f32` sources, F16C for float16 where the
/// CPU has it, [`nearest_even_f64`] for `f64` sources), and a block that kernel cannot
/// finish (NaN, ±Inf, overflow without `clamp`) by the general one ([`general_block`],
/// shared with the other modes). Returns how many elements are done (those before the
/// first block with an element for the reference path). One call site of each uniform
/// kernel, so that each is compiled once per width pair.
#[inline(always)]
pub(crate) fn nearest_even<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    oor: OutOfRange,
    l: FloatLayout,
    plan: Plan,
) -> usize {
    let source_f64 = SW::BITS == 64;
    let clamp = oor == OutOfRange::Clamp;
    let f16c = f16c_for::<DW>(l);
    // `f64 -> bfloat16` by AVX-512 BF16 where the CPU has it (`arch::f64_to_bf16`).
    let bf16_hw = source_f64 && l == BFLOAT16 && DW::BITS == 16 && crate::arch::has_avx512_bf16();
    let uniform = nearest_even_applies(l, source_f64);
    let by_f32_plan = !source_f64 && uniform && f16c.is_none() && plan.valid;
    let neg_zero = l.has_negative_zero();
    if by_f32_plan {
        // A loop of its own (never compiled for `f64` sources): with the other kernels'
        // tests in the same closure, the `from_f32` kernels took up to 0.09 instruction
        // per element more.
        return by_blocks(
            src,
            dst,
            #[inline(always)]
            |s, d| {
                let finished = if l.has_negative_zero() {
                    from_f32::nearest_even::<SW, DW, true>(s, d, &plan)
                } else {
                    from_f32::nearest_even::<SW, DW, false>(s, d, &plan)
                };
                finished || general_block(s, d, l, clamp, NEAREST_EVEN)
            },
        );
    }
    by_blocks(
        src,
        dst,
        #[inline(always)]
        |s, d| {
            let finished = if let Some(hw) = f16c.filter(|_| uniform) {
                by_f16c(hw, s, d, clamp)
            } else if bf16_hw {
                by_bf16(s, d, clamp)
            } else if source_f64 && uniform {
                if neg_zero {
                    nearest_even_f64::<SW, DW, true>(s, d, l, clamp)
                } else {
                    nearest_even_f64::<SW, DW, false>(s, d, l, clamp)
                }
            } else {
                false
            };
            finished || general_block(s, d, l, clamp, NEAREST_EVEN)
        },
    )
}

/// The F16C kernels, when the target is float16 in 16-bit words and the CPU has F16C.
#[inline(always)]
fn f16c_for<DW: Word>(l: FloatLayout) -> Option<F16c> {
    if l == FLOAT16 && DW::BITS == 16 {
        F16c::detect()
    } else {
        None
    }
}

/// `src` (`f32` or `f64` bits) into float16 codes by F16C; `false` when the block has an
/// element the nearest-even kernels leave to the general one (see [`nearest_even_limit`]),
/// or the words are not `f32`/`f64` into 16 bits.
#[inline(always)]
fn by_f16c<SW: Word, DW: Word>(hw: F16c, src: &[SW], dst: &mut [DW], clamp: bool) -> bool {
    // On `f32` magnitudes for both sources: `f64` values are tested after their rounding
    // to `f32` (see `F16c::f16_from_f64`).
    let limit_f32 = nearest_even_limit(FLOAT16, false, clamp) as u32;
    match (SW::words(src), u16::of_mut(DW::words_mut(dst))) {
        (Words::U32(s), Some(d)) => hw.f16_from_f32(s, d, limit_f32),
        (Words::U64(s), Some(d)) => hw.f16_from_f64(s, d, limit_f32),
        _ => false,
    }
}

/// `src` (`f64` bits) into bfloat16 codes by AVX-512 BF16 (`arch::f64_to_bf16`); `false`
/// when the block has an element the nearest-even kernels leave to the general one (the
/// limit is on `f32` magnitudes, as for [`by_f16c`]), an `f32` subnormal, or the words
/// are not `f64` into 16 bits.
#[inline(always)]
fn by_bf16<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], clamp: bool) -> bool {
    let limit_f32 = nearest_even_limit(BFLOAT16, false, clamp) as u32;
    match (SW::words(src), u16::of_mut(DW::words_mut(dst))) {
        (Words::U64(s), Some(d)) => crate::arch::f64_to_bf16(s, d, limit_f32),
        _ => false,
    }
}

/// The smallest source magnitude (the bits without the sign) that the nearest-even
/// kernels leave to the general one: ±Inf and NaN (the source's Inf bits) under `clamp`;
/// otherwise also every value that overflows `l`.
///
/// Overflow after rounding is found on the source: rounding is monotonic, so the code
/// exceeds `l`'s largest finite one exactly from the midpoint between that code and the
/// next on (the tie rounds up when the largest code is odd, down to it when even).
pub(crate) const fn nearest_even_limit(l: FloatLayout, source_f64: bool, clamp: bool) -> u64 {
    let (mantissa, exponent) = if source_f64 { (52, 11) } else { (23, 8) };
    let source_bias = (1i64 << (exponent - 1)) - 1;
    let inf = ((1u64 << exponent) - 1) << mantissa;
    let shift = mantissa - l.mantissa_bits;
    let rebias = ((source_bias - l.bias as i64) as u64) << mantissa;
    let max_finite = l.max_finite_bits();
    let over = (max_finite << shift) + rebias + (1 << (shift - 1)) + (1 - (max_finite & 1));
    if clamp || over > inf { inf } else { over }
}

/// Whether the nearest-even kernel below is exact for `source -> l`: [`applies`], and the
/// magic constant `2^(emin - m + SM)` (see the kernel) is a normal source number.
const fn nearest_even_applies(l: FloatLayout, source_f64: bool) -> bool {
    let (mantissa, bias) = if source_f64 { (52, 1023) } else { (23, 127) };
    applies(l, source_f64) && (1 - l.bias) - l.mantissa_bits as i32 + mantissa + bias >= 1
}

/// The nearest-even conversion with the same shift for every element, which is what makes
/// it cheap (the general kernel above shifts each lane by its own amount):
///
/// - a result in the target's normal range: re-bias the exponent field (subtract
///   `source bias - target bias` from it), add `half - 1` plus the lowest kept bit, shift
///   right by the difference in mantissa bits. A carry out of the mantissa moves into the
///   exponent, as it should.
/// - a result in the target's subnormal range (`|x| < 2^emin`): the hardware does the
///   rounding. `M = 2^(emin - m + SM)` has a source ulp of exactly the target's subnormal
///   spacing `2^(emin - m)`, and `|x| + M < 2M`, so the IEEE sum `|x| + M`, rounded to
///   nearest-even by the FPU, is `M + k·2^(emin - m)` with `k` the correctly rounded
///   subnormal code (`k = 2^m`, the smallest normal, when it rounds up into the normal
///   range). `k` is the difference of the bit patterns. Rust never flushes subnormals and
///   uses nearest-even for `+`.
///
/// Overflow gives the clamped code under `clamp`, and a zero result in a format without -0
/// is +0; NaN, ±Inf and overflow without `clamp` make it return `false` (block not done).
macro_rules! nearest_even_kernel {
    ($name:ident, $uint:ty, $int:ty, $float:ty, $mantissa:expr, $exponent:expr) => {
        #[inline(always)]
        fn $name<SW: Word, DW: Word, const NEG_ZERO: bool>(
            src: &[SW],
            dst: &mut [DW],
            l: FloatLayout,
            clamp: bool,
        ) -> bool {
            const SM: u32 = $mantissa;
            const SIGN_SHIFT: u32 = SM + $exponent;
            const MAG_MASK: $uint = (1 << SIGN_SHIFT) - 1;
            const SOURCE_BIAS: $int = (1 << ($exponent - 1)) - 1;
            let target_m = l.mantissa_bits;
            let shift = SM - target_m;
            let emin = 1 - l.bias as $int;
            let min_normal = ((emin + SOURCE_BIAS) as $uint) << SM;
            let magic_bits = ((emin - target_m as $int + SM as $int + SOURCE_BIAS) as $uint) << SM;
            let magic = <$float>::from_bits(magic_bits);
            let rebias = ((SOURCE_BIAS - l.bias as $int) as $uint) << SM;
            let half_m1: $uint = (1 << (shift - 1)) - 1;
            let max_finite = l.max_finite_bits() as $uint;
            let clamped = l.inf_bits().unwrap_or(l.max_finite_bits()) as $uint;
            debug_assert!(clamped == max_finite || clamped == max_finite + 1);
            let sign_shift = l.exponent_bits + l.mantissa_bits;
            // `NEG_ZERO` (a const: the select folds away) keeps the sign of a zero result;
            // without it (`fnuz`: no -0) a zero result is +0.
            // One comparison per element, on the magnitude, finds every rare element (NaN,
            // ±Inf, overflow without `clamp`): no 64-bit `max` reduction, which AVX2 does not
            // have.
            let limit = nearest_even_limit(l, SM == 52, clamp) as $uint;
            // `mag >= limit` as the top bit of `mag + (TOP - limit)` (no overflow: `mag`
            // and `limit` are below `TOP`, the sign bit), OR-ed over the block: an add and
            // an or per vector, no comparison mask to narrow and accumulate.
            const TOP: $uint = 1 << SIGN_SHIFT;
            let bias_rare = TOP - limit;
            let mut rare: $uint = 0;
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let b = s.to_u64() as $uint;
                let mag = b & MAG_MASK;
                let sign = (b >> SIGN_SHIFT) << sign_shift;
                let sub = (<$float>::from_bits(mag) + magic)
                    .to_bits()
                    .wrapping_sub(magic_bits);
                let nb = mag.wrapping_sub(rebias);
                let normal = nb.wrapping_add(half_m1 + ((nb >> shift) & 1)) >> shift;
                // Signed: `mag` has no sign bit, and x86 compares signed lanes directly.
                let code = if (mag as $int) < (min_normal as $int) {
                    sub
                } else {
                    normal
                };
                rare |= mag + bias_rare;
                // The clamped code is the next one above the largest finite one (Inf) or
                // that one itself (no Inf), so `min` clamps every overflowing code. Both
                // are below the sign bit (`sub` and `normal` are shifted or small), so the
                // signed `min` is the same, and AVX2 has it for 64-bit lanes as a compare
                // and a blend (the unsigned one also flips both signs).
                let code = (code as $int).min(clamped as $int) as $uint;
                let sign = if !NEG_ZERO && code == 0 { 0 } else { sign };
                *d = DW::from_u64((sign | code) as u64);
            }
            rare & TOP == 0
        }
    };
}

nearest_even_kernel!(nearest_even_f64, u64, i64, f64, 52, 11);

macro_rules! kernel {
    ($inner:ident, $uint:ty, $int:ty, $mantissa:expr, $exponent:expr) => {
        /// The general kernel, the rounding mode `mode` a loop invariant; `true` when the
        /// block has an element for the reference path.
        #[inline(always)]
        fn $inner<SW: Word, DW: Word>(
            src: &[SW],
            dst: &mut [DW],
            l: FloatLayout,
            clamp: bool,
            mode: u8,
        ) -> bool {
            // Which increment rule applies, as masks (a select per rule, no branch for
            // LLVM to unswitch the loop on).
            let (even, away, positive, negative_) = (
                mode == NEAREST_EVEN,
                mode == NEAREST_AWAY,
                mode == TOWARDS_POSITIVE,
                mode == TOWARDS_NEGATIVE,
            );
            const SM: u32 = $mantissa;
            const EXP_MASK: $uint = (1 << $exponent) - 1;
            const FRAC_MASK: $uint = (1 << SM) - 1;
            const SOURCE_BIAS: $int = (1 << ($exponent - 1)) - 1;
            let target_m = l.mantissa_bits;
            let sign_shift = l.exponent_bits + l.mantissa_bits;
            let max_finite = l.max_finite_bits() as $uint;
            let bias_delta = l.bias as $int - SOURCE_BIAS;
            let nan_out = l.nan_bits().unwrap_or(0) as $uint;
            let nan_ok = l.has_nan();
            let inf_out = l.inf_bits().unwrap_or(0) as $uint;
            let inf_ok = l.inf;
            let neg_zero_ok = l.has_negative_zero();
            let clamped = l.inf_bits().unwrap_or(l.max_finite_bits()) as $uint;
            let mut rare = false;
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let b = s.to_u64() as $uint;
                let sign = b >> (SM + $exponent);
                let e = ((b >> SM) & EXP_MASK) as $int;
                let frac = b & FRAC_MASK;
                let m = frac | (((e != 0) as $uint) << SM);
                // Target biased exponent; at most 1 for source subnormals (see `applies`).
                let te = e.max(1) + bias_delta;
                let below = (1 - te).max(0) as u32;
                // At least 1 (the target has fewer mantissa bits); capped so that the shift
                // is defined: `m` < 2^(SM+1), so a cap above SM+1 changes nothing.
                let shift = (SM - target_m + below).min(SM + 2);
                let q = m >> shift;
                let rem = m & ((1 << shift) - 1);
                let half = 1 << (shift - 1);
                let negative = sign != 0;
                // Towards-zero never increments.
                let up = (even & ((rem > half) | ((rem == half) & (q & 1 == 1))))
                    | (away & (rem >= half))
                    | (positive & !negative & (rem != 0))
                    | (negative_ & negative & (rem != 0));
                let code = (((te.max(1) - 1) as $uint) << target_m) + q + up as $uint;
                let special = e as $uint == EXP_MASK;
                let nan = special & (frac != 0);
                let signed = sign << sign_shift;
                let overflow = !special & (code > max_finite);
                let zero_sign = if (code == 0) & !neg_zero_ok {
                    0
                } else {
                    signed
                };
                let out = if special {
                    if nan { nan_out } else { signed | inf_out }
                } else if overflow {
                    signed | clamped
                } else {
                    zero_sign | code
                };
                rare |= (special & if nan { !nan_ok } else { !inf_ok }) | (overflow & !clamp);
                *d = DW::from_u64(out as u64);
            }
            rare
        }
    };
}

kernel!(from_f32_in, u32, i32, 23, 8);
kernel!(from_f64_in, u64, i64, 52, 11);

/// One block by the general kernel, the rounding mode a loop invariant (`NEAREST_EVEN`
/// and the other codes above); `true` when it is done, `false` when it has an element for
/// the reference path. Compiled once per width pair and level, and called per block:
/// from the nearest-even kernels, for the blocks they decline (NaN, ±Inf, overflow
/// without `clamp`), and by [`any_mode`] for every block. With a loop per caller instead
/// (a constant nearest-even one inside each of its kernels' loops, and one for the
/// other modes), the kernel was compiled up to three times per width pair and level.
/// Out of line and cold: in the nearest-even kernels' block loop it is the rare branch,
/// whose call would otherwise cost the common blocks a few instructions each.
#[cold]
#[inline(never)]
fn general_block<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    l: FloatLayout,
    clamp: bool,
    mode: u8,
) -> bool {
    crate::arch::vectorized_shared_or(
        (src, dst),
        #[inline(always)]
        move |(s, d): (&[SW], &mut [DW])| general_in(s, d, l, clamp, mode),
        move |(s, d)| general_portable(s, d, l, clamp, mode),
    )
}

/// [`general_block`]'s baseline (SSE2) build on x86-64.
#[inline(never)]
fn general_portable<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    l: FloatLayout,
    clamp: bool,
    mode: u8,
) -> bool {
    general_in(src, dst, l, clamp, mode)
}

#[inline(always)]
fn general_in<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    l: FloatLayout,
    clamp: bool,
    mode: u8,
) -> bool {
    !if SW::BITS == 64 {
        from_f64_in::<SW, DW>(src, dst, l, clamp, mode)
    } else {
        from_f32_in::<SW, DW>(src, dst, l, clamp, mode)
    }
}

/// Every rounding mode by the general kernel, over `src` block by block: one loop per
/// width pair for every mode (the mode a loop invariant). Returns how many elements are
/// done, as `by_blocks`.
pub(crate) fn any_mode<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    mode: Rounding,
    oor: OutOfRange,
    l: FloatLayout,
) -> usize {
    let clamp = oor == OutOfRange::Clamp;
    let mode = match mode {
        Rounding::NearestEven => NEAREST_EVEN,
        Rounding::TowardsZero => TOWARDS_ZERO,
        Rounding::TowardsPositive => TOWARDS_POSITIVE,
        Rounding::TowardsNegative => TOWARDS_NEGATIVE,
        Rounding::NearestAway => NEAREST_AWAY,
    };
    by_blocks(src, dst, |s, d| general_block(s, d, l, clamp, mode))
}
