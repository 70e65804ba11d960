//! `f32`/`f64` to integer formats: hardware rounding to an integral `f64` (exact), then a
//! range check, one loop per rounding mode and out-of-range rule; and the fused
//! `scale_offset -> cast_value` encode ([`Affine`]), which is the same loop on another value.

use super::{OOR_CLAMP, OOR_ERROR, OOR_WRAP};
use crate::arch::{SmallIntCast, SmallIntPlan};
use crate::convert::blocks::by_blocks;
use crate::convert::narrow::{NEAREST_AWAY, NEAREST_EVEN};
use crate::number::layout::IntLayout;
use crate::number::storage::Word;
use crate::number::{CastOptions, OutOfRange, Rounding};

/// The value of a float word: `f64` for 64-bit words, `f32` (widened exactly) otherwise.
#[inline(always)]
pub(super) fn as_f64<SW: Word>(w: SW) -> f64 {
    if SW::BITS == 64 {
        f64::from_bits(w.to_u64())
    } else {
        f32::from_bits(w.to_u64() as u32) as f64
    }
}

/// Round to an integral value under `MODE`, one of the two modes with loops of their own
/// (`NEAREST_EVEN`, `NEAREST_AWAY`), in hardware; the others go by [`Directed`].
#[inline(always)]
fn round_integral<const MODE: u8>(x: f64) -> f64 {
    if MODE == NEAREST_EVEN {
        x.round_ties_even()
    } else {
        x.round()
    }
}

/// 2^63, exactly.
const TWO_63: f64 = (1u64 << 63) as f64;
/// 2^64, exactly.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;
/// 2^32 and 2^-32, exactly.
const TWO_32: f64 = 4_294_967_296.0;
const TWO_M32: f64 = 1.0 / TWO_32;

/// `f32`/`f64` to a 64-bit integer format (narrower ones: [`float_to_narrow_int`]), every
/// rounding mode and rule: one loop per rule for nearest-even (the rounding a constant) and
/// one per rule for the other modes ([`Directed`]'s loop invariants), built for AVX2 and
/// AVX-512 (`arch::vectorized_wide_or`), and [`f2i64_portable`] below AVX2.
///
/// The bounds are exact `f64`s: the target's lowest value (`-2^63` or 0) and its highest
/// plus one (2^63 or 2^64), powers of two, so that `r < 2^63` is an exact range test where
/// `r <= i64::MAX as f64` (2^63, rounded up) is not. A clamp above the range is the select
/// `r >= 2^63`, not a `min` with `max` (which no `f64` is).
#[inline(always)]
pub(super) fn float_to_int<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    l: IntLayout,
) -> usize {
    if l.bits != 64 {
        return 0;
    }
    let oor = opts.out_of_range;
    let b = Wide64::new(l);
    let portable = move |(src, dst)| f2i64_portable::<SW, DW>(src, dst, opts, b);
    // The loops of `by_oor_f2i64`, one closure per twin (an attribute on a closure in a
    // `let` is not stable Rust).
    macro_rules! rounded_by {
        ($mode:ident, $round:expr) => {
            #[inline(always)]
            move |(src, dst): (&[SW], &mut [DW])| {
                by_blocks(
                    src,
                    dst,
                    #[inline(always)]
                    |s, d| by_oor_f2i64::<SW, DW, $mode>(s, d, oor, b, $round),
                )
            }
        };
    }
    match Directed::new(opts.rounding) {
        None => crate::arch::vectorized_wide_or(
            (src, dst),
            rounded_by!(NEAREST_EVEN, Directed::AWAY),
            portable,
        ),
        Some(round) => {
            crate::arch::vectorized_wide_or((src, dst), rounded_by!(GENERAL, round), portable)
        }
    }
}

/// The loop invariants of [`f2i64`]: a 64-bit target's range as exact `f64` bounds.
#[derive(Clone, Copy)]
struct Wide64 {
    /// The lowest value, `-2^63` or 0.
    lo: f64,
    /// The highest value plus one, 2^63 or 2^64.
    end: f64,
    /// The highest value's code, `i64::MAX` or `u64::MAX` (the clamp of `r >= end`).
    max_code: u64,
}

impl Wide64 {
    fn new(l: IntLayout) -> Self {
        Wide64 {
            lo: if l.signed { -TWO_63 } else { 0.0 },
            end: if l.signed { TWO_63 } else { TWO_64 },
            max_code: if l.signed { i64::MAX as u64 } else { u64::MAX },
        }
    }
}

/// [`f2i64`] with the out-of-range rule made a constant.
#[inline(always)]
fn by_oor_f2i64<SW: Word, DW: Word, const MODE: u8>(
    src: &[SW],
    dst: &mut [DW],
    oor: OutOfRange,
    b: Wide64,
    round: Directed,
) -> bool {
    match oor {
        OutOfRange::Clamp => f2i64::<SW, DW, MODE, OOR_CLAMP>(src, dst, b, round),
        OutOfRange::Wrap => f2i64::<SW, DW, MODE, OOR_WRAP>(src, dst, b, round),
        OutOfRange::Error => f2i64::<SW, DW, MODE, OOR_ERROR>(src, dst, b, round),
    }
}

/// `f32`/`f64` to a 64-bit integer format under the rule `OOR`: round (`MODE`), test, and
/// the code by [`low_bits_64`]. What a block keeps:
/// - error: `lo <= r < end` (NaN fails both compares);
/// - clamp: every finite `r` (±Inf and NaN are never clamped, catalogue `inf-clamp`):
///   `max(r, lo)` converted, or `max_code` where `r >= end`;
/// - wrap: `-2^63 <= r < 2^64`, whose low 64 bits are the code for either target (values
///   below `-2^63` are left to the reference path: rare, and beyond the conversion).
#[inline(always)]
fn f2i64<SW: Word, DW: Word, const MODE: u8, const OOR: u8>(
    src: &[SW],
    dst: &mut [DW],
    b: Wide64,
    round: Directed,
) -> bool {
    let Wide64 { lo, end, max_code } = b;
    let mut bad = false;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let r = round.round::<MODE>(as_f64(*s));
        let (v, ok) = if const { OOR == OOR_CLAMP } {
            // `vmaxpd` (a NaN gives `lo`: rejected anyway); `r >= end` is replaced below.
            #[allow(clippy::eq_op)] // `r - r` is the finiteness test.
            let finite = r - r == 0.0;
            (if r > lo { r } else { lo }, finite)
        } else if const { OOR == OOR_WRAP } {
            // Two compares and an `and`, as the other rules' tests (no `&&`).
            #[allow(clippy::manual_range_contains)]
            let ok = (r >= -TWO_63) & (r < TWO_64);
            (r, ok)
        } else {
            (r, (r >= lo) & (r < end))
        };
        let code = low_bits_64(v);
        let code = if const { OOR == OOR_CLAMP } && r >= end {
            max_code
        } else {
            code
        };
        *d = DW::from_u64(code);
        bad |= !ok;
    }
    !bad
}

/// The low 64 bits of the two's complement of an integral `v` in `[-2^63, 2^64)` (any
/// other `v` gives some value), in `f64` arithmetic that vectorizes with AVX2, which has no
/// 64-bit conversion: `v = h · 2^32 + l` with `h = floor(v · 2^-32)` in `[-2^31, 2^32)`
/// and `l` in `[0, 2^32)`, every step exact (a power-of-two scaling, an integer part, and
/// a difference that is an integer below 2^32, so representable); the low 32 bits of `h`
/// and of `l` are those of `h + 1.5 · 2^52` and `l + 1.5 · 2^52` (see [`MAGIC`]).
#[inline(always)]
fn low_bits_64(v: f64) -> u64 {
    let h = (v * TWO_M32).floor();
    let l = v - h * TWO_32;
    let hb = (h + MAGIC).to_bits() as u32;
    let lb = (l + MAGIC).to_bits() as u32;
    (u64::from(hb) << 32) | u64::from(lb)
}

/// [`float_to_int`]'s baseline (SSE2) twin on x86-64: one loop per width pair, the
/// rounding mode and the rule as loop invariants (the rounding is a library call per
/// element there, whatever the loop). Accepts what [`f2i64`] accepts and gives the same
/// codes.
#[inline(never)]
fn f2i64_portable<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    b: Wide64,
) -> usize {
    let Wide64 { lo, end, max_code } = b;
    let round = Directed::new(opts.rounding);
    let oor = opts.out_of_range;
    by_blocks(
        src,
        dst,
        #[inline(always)]
        |src, dst| {
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let x = as_f64(*s);
                let r = match round {
                    None => x.round_ties_even(),
                    Some(round) => round.round::<GENERAL>(x),
                };
                let v = match oor {
                    OutOfRange::Clamp if r.is_finite() => r.max(lo),
                    OutOfRange::Wrap if (-TWO_63..TWO_64).contains(&r) => r,
                    OutOfRange::Error if (lo..end).contains(&r) => r,
                    _ => return false,
                };
                *d = DW::from_u64(if oor == OutOfRange::Clamp && v >= end {
                    max_code
                } else if v >= TWO_63 {
                    v as u64
                } else {
                    v as i64 as u64
                });
            }
            true
        },
    )
}

/// `f32`/`f64` (or `scale_offset`'s result on them: `value`) to an integer format of at
/// most 32 bits, every rounding mode, with NaN mapped to `nan_code` when `NAN_MAP`.
///
/// Nearest-even, the default, has a loop of its own per out-of-range rule at each level,
/// the rounding a constant (with a `match` on the mode per element LLVM keeps the loop
/// scalar). With `WIDE` (the fused `scale_offset -> cast_value` loop only, so that the
/// plain casts are not compiled a third time: at the AVX-512 level a plain nearest-even
/// cast without a map runs this build on the identity affine step, `Src::float_to_int`)
/// it is also built for AVX-512
/// (`arch::vectorized_wide_or`), where LLVM converts 8 `f64` per instruction and narrows
/// by `vpmovdb`: the fused `f64 -> u8` chain on a cached input (128Ki elements) ran at
/// 40.5 GB/s against 33.1 with AVX2 (minima of 301 runs, three alternations, load 7).
/// Nearest-away under clamp without a map (`clamp_round_away_to_i32`) keeps its own AVX2
/// loop too. Every other mode (with a map or fused, under any rule) goes by
/// [`f2i_general`], which takes the mode and the map as loop invariants: one build per rule
/// instead of one per mode, rule and map, for about twice the instructions per element of a
/// constant mode's loop with AVX2 (`f64 -> u8` towards-zero under clamp, with a map or
/// without: 5.17 against nearest-even's 2.55). At the AVX-512 level a plain cast into an 8-
/// or 16-bit target, in every mode and under every rule, goes by
/// `arch::SmallIntCast` first (the mode in the conversion instruction instead of loop
/// invariants around a `floor`): that loop took 15 operations per vector of 8 `f64`
/// (`f64 -> u8` towards-zero under clamp with a map), and Zen 4 runs its 512-bit
/// operations as two halves, so it was compute-bound at 0.54-0.65 of the roofline.
/// Nearest-even without a map ran the fused chain's loop (`Src::float_to_int`) until it
/// was measured slower at memory speed than this kernel on the Xeon: `f64 -> u8`, 4M
/// elements, medians of five alternated rounds, 2.18 -> 1.87 ms checked, 2.00 -> 1.77
/// clamped, 2.12 -> 1.71 wrapped.
#[inline(always)]
pub(super) fn float_to_narrow_int<SW: Word, DW: Word, const NAN_MAP: bool, const WIDE: bool>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    l: IntLayout,
    value: impl Fn(SW) -> f64 + Copy,
    nan_code: u64,
) -> usize {
    if l.bits > 32 {
        return 0;
    }
    let oor = opts.out_of_range;
    // The value a NaN maps to: the map's (an integer of the target, never NaN), or NaN
    // without a map, which the loops then decline like any NaN.
    let nan_value = if NAN_MAP {
        crate::number::int::int_value(&l, nan_code) as f64
    } else {
        f64::NAN
    };
    // A plain cast (`!WIDE`: `value` is the word's own, `as_f64`) into a target as wide as
    // its word (8 or 16 bits), any rule: at the AVX-512 level the explicit kernel
    // (`arch::SmallIntCast`: the mode is the conversion's own, not loop invariants around a
    // `floor`), block by block; a block it rejects (NaN without a map, ±Inf, a wrapped value
    // beyond 2^31, under check a value out of range) goes by the loops below, which decide.
    if !WIDE && l.bits == DW::BITS {
        let cast = SmallIntCast::<SW, DW>::new(SmallIntPlan {
            mode: opts.rounding,
            rule: oor,
            lo: l.min() as f64,
            hi: l.max() as f64,
            nan_value: NAN_MAP.then_some(nan_value),
        });
        if let Some(cast) = cast {
            return by_blocks(
                src,
                dst,
                #[inline(always)]
                |s, d| {
                    cast.run(s, d)
                        || narrow_int_loops::<SW, DW, NAN_MAP, WIDE>(
                            s, d, opts, l, value, nan_value,
                        ) == s.len()
                },
            );
        }
    }
    narrow_int_loops::<SW, DW, NAN_MAP, WIDE>(src, dst, opts, l, value, nan_value)
}

/// [`float_to_narrow_int`]'s loops, chosen by the rounding mode and the rule. Not inlined:
/// called twice there (on the blocks `arch::SmallIntCast` rejects, and without it).
#[inline(never)]
fn narrow_int_loops<SW: Word, DW: Word, const NAN_MAP: bool, const WIDE: bool>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    l: IntLayout,
    value: impl Fn(SW) -> f64 + Copy,
    nan_value: f64,
) -> usize {
    let oor = opts.out_of_range;
    match opts.rounding {
        Rounding::NearestEven => {
            // The loops of `by_oor_f2i`, one closure per twin (an attribute on a closure
            // in a `let` is not stable Rust).
            macro_rules! even {
                () => {
                    #[inline(always)]
                    move |(src, dst): (&[SW], &mut [DW])| {
                        by_blocks(
                            src,
                            dst,
                            #[inline(always)]
                            |s, d| {
                                by_oor_f2i::<SW, DW, NEAREST_EVEN, NAN_MAP>(
                                    s,
                                    d,
                                    oor,
                                    l,
                                    Directed::AWAY,
                                    value,
                                    nan_value,
                                )
                            },
                        )
                    }
                };
            }
            let baseline = move |(src, dst)| {
                f2i_baseline::<SW, DW, NAN_MAP>(src, dst, oor, l, value, nan_value)
            };
            // `const`: the other twin is not compiled.
            if const { WIDE } {
                crate::arch::vectorized_wide_or((src, dst), even!(), baseline)
            } else {
                crate::arch::vectorized_or((src, dst), even!(), baseline)
            }
        }
        Rounding::NearestAway if !NAN_MAP && !WIDE && oor == OutOfRange::Clamp => {
            crate::arch::vectorized_or(
                (src, dst),
                #[inline(always)]
                move |(src, dst): (&[SW], &mut [DW])| {
                    let b = F2i::new(l, Directed::AWAY, nan_value);
                    by_blocks(
                        src,
                        dst,
                        #[inline(always)]
                        |s, d| {
                            f2i_narrow::<SW, DW, NEAREST_AWAY, OOR_CLAMP, NAN_MAP>(s, d, b, value)
                        },
                    )
                },
                move |(src, dst)| {
                    f2i_portable::<SW, DW, NAN_MAP>(src, dst, opts, l, value, nan_value)
                },
            )
        }
        // The fused chain's value is its affine step (a map is only ever a plain cast's).
        _ if const { WIDE } => f2i_general::<SW, DW>(src, dst, opts, l, value, nan_value),
        _ => {
            // A plain cast's value is the affine step `(x - 0) * 1`: the same loops as the
            // fused chain's (one build per width pair instead of two, for two more
            // instructions per vector in these modes), with a map or without.
            let identity = affine::<SW>(Affine::identity::<SW>());
            f2i_general::<SW, DW>(src, dst, opts, l, identity, nan_value)
        }
    }
}

/// [`float_to_narrow_int`]'s nearest-even baseline (SSE2) twin on x86-64, one per width
/// pair and `value`. Under clamp the constant-parameter loop, whose rounding and conversion
/// are one `cvtpd2dq` (a quarter of [`f2i_portable`]'s instructions per element); under
/// wrap and error [`f2i_portable`], as SSE2 has no rounding instruction and the constant
/// loop calls `rint` per element (28.4 against 25.6 instructions per element, `f64 -> u8`).
#[inline(never)]
fn f2i_baseline<SW: Word, DW: Word, const NAN_MAP: bool>(
    src: &[SW],
    dst: &mut [DW],
    oor: OutOfRange,
    l: IntLayout,
    value: impl Fn(SW) -> f64 + Copy,
    nan_value: f64,
) -> usize {
    if oor != OutOfRange::Clamp {
        let opts = CastOptions::new(Rounding::NearestEven, oor);
        return f2i_portable::<SW, DW, NAN_MAP>(src, dst, opts, l, value, nan_value);
    }
    let b = F2i::new(l, Directed::AWAY, nan_value);
    by_blocks(
        src,
        dst,
        #[inline(always)]
        |s, d| f2i_narrow::<SW, DW, NEAREST_EVEN, OOR_CLAMP, NAN_MAP>(s, d, b, value),
    )
}

/// [`float_to_narrow_int`] for the rounding modes and rules without a loop of their own
/// (every mode but nearest-even): with AVX2 and again with AVX-512, one loop per
/// out-of-range rule whose rounding is [`Directed`] (the mode as loop invariants around one
/// rounding instruction), else [`f2i_portable`]. The AVX-512 build (about 26 KB in all)
/// takes `f64 -> u8` towards-zero under clamp from 2.1-2.2 to 1.7-1.8 ms for 4M elements
/// (minima, alternated): compute-bound at AVX2, it ran at 0.66-0.85 of a copy. Plain casts
/// into 8- and 16-bit targets under clamp and wrap run it only on the blocks
/// `arch::SmallIntCast` rejects (see [`float_to_narrow_int`]); 32-bit and sub-byte
/// targets, the error rule and the fused chain all of theirs. A `scalar_map` `{NaN: v}`
/// is a loop invariant too, `nan_value`: `v`,
/// or NaN without a map (a NaN then stays a NaN, and its block is declined). So a map costs
/// no loops of its own (three more per width pair, about 18 KB): a compare and a select per
/// vector, in the loops without a map as well (`f64 -> u8` towards-zero under clamp, map
/// `{NaN: 0}`: 5.17 instructions per element, against 31.1 in the baseline loop).
#[inline(never)]
fn f2i_general<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    l: IntLayout,
    value: impl Fn(SW) -> f64 + Copy,
    nan_value: f64,
) -> usize {
    // A map's value is an integer of the target, never NaN.
    let map = !nan_value.is_nan();
    let portable = move |(src, dst)| {
        if map {
            // A map is only ever a plain cast's, whose value is the source's own: the
            // nearest-even baseline's loop (`f2i_baseline`), without the identity step.
            f2i_portable::<SW, DW, true>(src, dst, opts, l, as_f64::<SW>, nan_value)
        } else {
            f2i_portable::<SW, DW, false>(src, dst, opts, l, value, nan_value)
        }
    };
    // Nearest-even has loops of its own: never `None` here.
    let Some(round) = Directed::new(opts.rounding) else {
        return portable((src, dst));
    };
    let oor = opts.out_of_range;
    crate::arch::vectorized_wide_or(
        (src, dst),
        #[inline(always)]
        move |(src, dst): (&[SW], &mut [DW])| {
            by_blocks(
                src,
                dst,
                #[inline(always)]
                |s, d| by_oor_f2i::<SW, DW, GENERAL, true>(s, d, oor, l, round, value, nan_value),
            )
        },
        portable,
    )
}

/// [`float_to_narrow_int`]'s baseline (SSE2) loop on x86-64 for every mode but
/// nearest-even (and for every mode with a map): one loop per width pair and `value`, the
/// rounding mode and the out-of-range rule as loop invariants. It accepts a subset of what
/// [`f2i_narrow`] accepts (values below 2^51 in magnitude) and gives the same codes; a block
/// with anything else is declined, as there.
///
/// SSE2 has no rounding instruction: `round_ties_even`, `floor` and the like are library
/// calls there, one per element. So the loop rounds by [`RoundBy`]: one nearest-even
/// rounding by the `MAGIC` addition, and the other modes from it by a compare, all of it
/// arithmetic on loop invariants (no branch per element, no call).
#[inline(never)]
fn f2i_portable<SW: Word, DW: Word, const NAN_MAP: bool>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    l: IntLayout,
    value: impl Fn(SW) -> f64 + Copy,
    nan_value: f64,
) -> usize {
    let (lo, max, mask) = (l.min() as f64, l.max() as f64, l.mask());
    let by = RoundBy::new(opts.rounding);
    let oor = opts.out_of_range;
    let (clamp, wrap, check) = (
        oor == OutOfRange::Clamp,
        oor == OutOfRange::Wrap,
        oor == OutOfRange::Error,
    );
    by_blocks(
        src,
        dst,
        #[inline(always)]
        |src, dst| {
            let mut bad = false;
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let r = by.round(value(*s));
                let r = if NAN_MAP && r.is_nan() { nan_value } else { r };
                // ±Inf and NaN are never clamped (catalogue `inf-clamp`): the block is
                // redone. `|r| >= 2^51` whenever the input was (see `RoundBy::round`), so
                // the wrap rule declines every value the rounding was not exact for. Each
                // rule is a mask (`&` and `|` of loop invariants, never a branch) so that
                // the loop stays one vector loop.
                let a = r.abs();
                let ok = (clamp & (a < f64::INFINITY))
                    | (wrap & (a < TWO_51))
                    | (check & (lo <= r) & (r <= max));
                // A clamp as compares that x86's `maxpd` / `minpd` are (a NaN gives some
                // bound: its block is declined anyway).
                let c = if r > lo { r } else { lo };
                let c = if c < max { c } else { max };
                let v = if clamp { c } else { r };
                // A kept `v` is integral and below 2^51 in magnitude: the low bits of
                // `v + MAGIC` are its two's complement (see `MAGIC`), without the
                // saturating `as` conversion, which SSE2 does one element at a time.
                *d = DW::from_u64((v + MAGIC).to_bits() & mask);
                bad |= !ok;
            }
            !bad
        },
    )
}

/// A rounding mode as loop invariants, for [`f2i_portable`]: `x` rounds to
/// `s · (n + adjust)` with `s` the sign of `x` or a constant, `y = s · x`, `n` the integer
/// nearest `y` (ties to even) and `adjust` one compare:
///
/// | mode | `s` | `adjust` |
/// |---|---|---|
/// | nearest-even | 1 | 0 |
/// | towards negative (`floor`) | 1 | `-1` if `n > y` |
/// | towards positive (`-floor(-x)`) | -1 | `-1` if `n > y` |
/// | towards zero (`floor` of `\|x\|`) | sign of `x` | `-1` if `n > y` |
/// | nearest-away | sign of `x` | `+1` if `y - n = 0.5` (a tie `n` rounded down to even) |
#[derive(Clone, Copy)]
struct RoundBy {
    /// The sign bit when `s` is the sign of `x` (`dir` is then 1), else 0.
    sign_of_x: u64,
    dir: f64,
    /// 1.0 for the modes that round `y` down, else 0.0.
    down: f64,
    /// 1.0 for nearest-away, else 0.0.
    away: f64,
}

impl RoundBy {
    fn new(mode: Rounding) -> Self {
        let (by_sign, dir, down, away) = match mode {
            Rounding::NearestEven => (false, 1.0, 0.0, 0.0),
            Rounding::TowardsNegative => (false, 1.0, 1.0, 0.0),
            Rounding::TowardsPositive => (false, -1.0, 1.0, 0.0),
            Rounding::TowardsZero => (true, 1.0, 1.0, 0.0),
            Rounding::NearestAway => (true, 1.0, 0.0, 1.0),
        };
        RoundBy {
            sign_of_x: if by_sign { 1 << 63 } else { 0 },
            dir,
            down,
            away,
        }
    }

    /// `x` rounded, exactly when `|x| < 2^51`. `±Inf` and NaN stay what they are; any other
    /// `x` of magnitude at least 2^51 gives some value of magnitude at least 2^51 and of
    /// `x`'s sign (`y + MAGIC` rounds monotonically, and the bounds it is compared with
    /// are representable), which the caller declines, or clamps to the same bound below
    /// 2^32 as the exact value.
    #[inline(always)]
    fn round(self, x: f64) -> f64 {
        // `copysign(dir, x)` when `by_sign` (`dir` is 1 then), else `dir`: sign bits,
        // so that nothing here is a branch.
        let s = f64::from_bits(self.dir.to_bits() ^ (x.to_bits() & self.sign_of_x));
        let y = s * x;
        // For `|y| <= 2^51`, `y + MAGIC` lies in `[2^52, 2^53]`, where the spacing is 1:
        // the addition rounds `y` to the nearest integer, ties to even, and the
        // subtraction is exact.
        let n = (y + MAGIC) - MAGIC;
        let down = if n > y { self.down } else { 0.0 };
        let up = if y - n == 0.5 { self.away } else { 0.0 };
        s * (n - down + up)
    }
}

/// `MODE` of [`f2i_narrow`] whose rounding is the loop invariant [`Directed`].
const GENERAL: u8 = u8::MAX;

/// A rounding mode other than nearest-even as loop invariants, for the AVX2 loops of
/// [`f2i_general`]: `x` rounds to `s · floor(s · x + h)` with `s` the sign of `x` or a
/// constant, and `h` zero or the largest `f64` below one half:
///
/// | mode | `s` | `h` |
/// |---|---|---|
/// | towards negative (`floor`) | 1 | 0 |
/// | towards positive (`-floor(-x)`) | -1 | 0 |
/// | towards zero (`floor` of `\|x\|`) | sign of `x` | 0 |
/// | nearest-away (`floor(\|x\| + 1/2)`) | sign of `x` | `1/2 - 2^-54` |
///
/// `s ·` is a sign flip (an `xor`), `floor` one `vroundpd`: six instructions per vector,
/// all of them on loop invariants but the data. Exact for every `x`: with `h = 0` it is
/// `floor` itself; with `y = |x|`, `y + h` rounds to at least `floor(y) + 1` exactly when
/// `y - floor(y) >= 1/2` (the exact sum is then within `2^-54` below it, and a sum below
/// 1 ties to 1), and stays below it otherwise (the exact sum is then at least one ulp of
/// `y` below it, and no `f64` lies between), also where `h` rounds away in the sum
/// (`y >= 2^52`: `y` is integral and the sum rounds to it). Signed zeros, ±Inf and NaN
/// come out as the mode gives them, up to the sign of a zero result, which no integer
/// target keeps.
#[derive(Clone, Copy)]
struct Directed {
    /// The sign bit when `s` is the sign of `x`, else 0.
    sign_of_x: u64,
    /// The sign bit when `s` is -1, else 0.
    flip: u64,
    /// `h`: `1/2 - 2^-54` for nearest-away, else 0.
    half: f64,
}

impl Directed {
    /// Nearest-away (also the value the loops of a constant mode are given, unused there).
    const AWAY: Directed = Directed {
        sign_of_x: 1 << 63,
        flip: 0,
        half: 0.499_999_999_999_999_94,
    };

    /// `mode` as loop invariants; `None` for nearest-even, which this rounding cannot do.
    fn new(mode: Rounding) -> Option<Self> {
        let (by_sign, negate, away) = match mode {
            Rounding::NearestEven => return None,
            Rounding::TowardsNegative => (false, false, false),
            Rounding::TowardsPositive => (false, true, false),
            Rounding::TowardsZero => (true, false, false),
            Rounding::NearestAway => (true, false, true),
        };
        Some(Directed {
            sign_of_x: if by_sign { 1 << 63 } else { 0 },
            flip: if negate { 1 << 63 } else { 0 },
            half: if away { Directed::AWAY.half } else { 0.0 },
        })
    }

    /// `x` rounded to an integral value under `MODE`: this rounding for `GENERAL`, the
    /// mode's own instruction for the others.
    #[inline(always)]
    fn round<const MODE: u8>(self, x: f64) -> f64 {
        if MODE != GENERAL {
            return round_integral::<MODE>(x);
        }
        // `s ·` as the sign bits it flips, so that nothing here is a branch.
        let s = (x.to_bits() & self.sign_of_x) ^ self.flip;
        let y = f64::from_bits(x.to_bits() ^ s);
        f64::from_bits((y + self.half).floor().to_bits() ^ s)
    }
}

/// 2^51, exactly.
const TWO_51: f64 = (1u64 << 51) as f64;

/// `scale_offset`'s encode on `f32`/`f64`: `(x - offset) * scale`, each operation rounded
/// in the source type (the hardware's own arithmetic), `offset` and `scale` as codes.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Affine {
    pub(crate) offset: u64,
    pub(crate) scale: u64,
}

impl Affine {
    /// `(x - 0) * 1`, which is `x` for every `x` (signed zeros and ±Inf too; a NaN stays a
    /// NaN), in words of `SW`: the value of a plain cast as an affine step, so that plain
    /// casts share the fused chain's general loops ([`float_to_narrow_int`]).
    pub(super) fn identity<SW: Word>() -> Affine {
        if SW::BITS == 64 {
            Affine {
                offset: 0.0f64.to_bits(),
                scale: 1.0f64.to_bits(),
            }
        } else {
            Affine {
                offset: u64::from(0.0f32.to_bits()),
                scale: u64::from(1.0f32.to_bits()),
            }
        }
    }
}

/// [`Affine`] on `f32`/`f64` words (`SW`), as the number a fused cast rounds:
/// `scale_offset -> cast_value` in one loop (`Src::affine_to_int`). On `f64` words in `f64`
/// arithmetic, on `f32` words in `f32` arithmetic (then widened, exactly). The affine step
/// cannot fail on `f32`/`f64`; a NaN it produces is declined by the cast like any NaN, and
/// the caller redoes that block stage by stage.
#[inline(always)]
pub(super) fn affine<SW: Word>(a: Affine) -> impl Fn(SW) -> f64 + Copy {
    let (o, k) = (f64::from_bits(a.offset), f64::from_bits(a.scale));
    let (o32, k32) = (
        f32::from_bits(a.offset as u32),
        f32::from_bits(a.scale as u32),
    );
    #[inline(always)]
    move |w: SW| {
        if SW::BITS == 64 {
            (f64::from_bits(w.to_u64()) - o) * k
        } else {
            f64::from((f32::from_bits(w.to_u64() as u32) - o32) * k32)
        }
    }
}

/// `1.5 * 2^52`: for an integral `r` with `|r| < 2^51`, the low 32 bits of
/// `(r + MAGIC).to_bits()` are `r as i32`'s (two's complement).
const MAGIC: f64 = 6_755_399_441_055_744.0;

/// [`f2i_narrow`] with the out-of-range rule made a constant.
#[inline(always)]
fn by_oor_f2i<SW: Word, DW: Word, const MODE: u8, const NAN_MAP: bool>(
    src: &[SW],
    dst: &mut [DW],
    oor: OutOfRange,
    l: IntLayout,
    round: Directed,
    value: impl Fn(SW) -> f64 + Copy,
    nan_value: f64,
) -> bool {
    let b = F2i::new(l, round, nan_value);
    match oor {
        OutOfRange::Clamp => f2i_narrow::<SW, DW, MODE, OOR_CLAMP, NAN_MAP>(src, dst, b, value),
        OutOfRange::Wrap => f2i_narrow::<SW, DW, MODE, OOR_WRAP, NAN_MAP>(src, dst, b, value),
        OutOfRange::Error => f2i_narrow::<SW, DW, MODE, OOR_ERROR, NAN_MAP>(src, dst, b, value),
    }
}

/// The loop invariants of [`f2i_narrow`].
#[derive(Clone, Copy)]
struct F2i {
    /// The rounding of `MODE` `GENERAL` (unused by the other modes).
    round: Directed,
    /// The target's range, as `f64` (exact: at most 32 bits).
    lo: f64,
    max: f64,
    /// The same range as `i32`, for targets narrower than 32 bits (whose range it is).
    narrow: (i32, i32),
    /// The target's code bits.
    mask: u32,
    /// The value a NaN maps to (`scalar_map` `{NaN: value}`, a value of the target), when
    /// `NAN_MAP`.
    nan_value: f64,
}

impl F2i {
    #[inline(always)]
    fn new(l: IntLayout, round: Directed, nan_value: f64) -> Self {
        F2i {
            round,
            lo: l.min() as f64,
            max: l.max() as f64,
            narrow: (
                l.min().clamp(i32::MIN.into(), i32::MAX.into()) as i32,
                l.max().clamp(i32::MIN.into(), i32::MAX.into()) as i32,
            ),
            mask: l.mask() as u32,
            nan_value,
        }
    }
}

/// `f32`/`f64` to an integer format of at most 32 bits, with the out-of-range rule `OOR`
/// constant (a clamp, a check, or neither is then all the loop holds). `value` gives the
/// number to round from a source word: the float itself, or `scale_offset`'s
/// `(x - offset) * scale` computed in the source type when the two stages are fused.
///
/// Every value a block keeps (in range, clamped into it, or wrapped from `|r| < 2^51`) is
/// an integral `f64` below 2^51 in magnitude, whose two's complement low bits are those of
/// `r + 1.5 * 2^52` (exact: the sum keeps every integer bit of `r` in the significand).
/// That is one `vaddpd` instead of a saturating conversion (`vcvttpd2dq` and its fix-ups),
/// and the truncation to the target word is then on integers. Other values are only
/// detected: the block is declined.
///
/// With `NAN_MAP`, a NaN is the key of a `scalar_map` whose only entry it is: it becomes
/// the map's value in the same loop (a compare and a select), instead of a scan for keys
/// and a patch after the cast.
#[inline(always)]
fn f2i_narrow<SW: Word, DW: Word, const MODE: u8, const OOR: u8, const NAN_MAP: bool>(
    src: &[SW],
    dst: &mut [DW],
    b: F2i,
    value: impl Fn(SW) -> f64,
) -> bool {
    let F2i {
        round,
        lo,
        max,
        narrow: (lo_i, max_i),
        mask,
        nan_value,
    } = b;
    // Targets narrower than 32 bits under clamp or error (`packed`): the code is the clamped
    // value converted by `vcvttpd2dq` (`arch::clamp_to_i32`), four per register, instead of
    // the low bits of `v + 1.5 * 2^52` narrowed from 64-bit lanes. The bounds are then made
    // from the same `i32`s, so that the clamp below and the conversion's are one.
    // Under clamp into such a target, nearest-even needs no rounding step of its own
    // (`fold_even`): clamping to integer bounds commutes with rounding to an integer, and
    // the conversion rounds (`vcvtpd2dq`, which LLVM makes of `round_ties_even` and the
    // conversion). The finiteness test is the same on the unrounded value.
    // (`const` blocks: a condition that is a constant after monomorphization lets codegen
    // skip the other branch, which keeps the IR of the copies small.)
    let packed = const { DW::BITS < 32 && OOR != OOR_WRAP };
    let fold_even = const { DW::BITS < 32 && OOR == OOR_CLAMP && MODE == NEAREST_EVEN };
    // Likewise nearest-away, by `arch::clamp_round_away_to_i32`: a half-less-one-ulp added
    // to the clamped value, truncated by the conversion (no `round` expansion per vector).
    let fold_away = const { DW::BITS < 32 && OOR == OOR_CLAMP && MODE == NEAREST_AWAY };
    let (lo, max) = if packed {
        (f64::from(lo_i), f64::from(max_i))
    } else {
        (lo, max)
    };
    // The test of each rule is a value OR-ed into an integer that is zero
    // exactly when every element of the block is accepted: no compare masks to narrow
    // and accumulate (two to three instructions per vector fewer).
    // - clamp: `r - r`, +0 for a finite `r`, NaN for ±Inf and NaN;
    // - wrap: the exponent field of `r + 1.5 * 2^52` xor that of `2^52`: zero exactly for
    //   `-2^51 <= r < 2^51` (the sum is then in `[2^52, 2^53)`), for which the low bits of
    //   the sum are `r`'s two's complement ones; NaN and ±Inf have another exponent;
    // - error: `min(max(r, lo), max) - r`, +0 in range, nonzero (or NaN) outside.
    // With a map, a NaN has become the map's value before these tests: it is accepted.
    let mut rejected = 0u64;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let x = value(*s);
        let r = if fold_even || fold_away {
            x
        } else {
            round.round::<MODE>(x)
        };
        // NaN after rounding is NaN before it, and nothing else. The key's value is in
        // range: from here on it is converted (and accepted) like any value, on the `f64`
        // lanes, so the select needs no mask narrowed to the code's width.
        let r = if NAN_MAP && r.is_nan() { nan_value } else { r };
        // `vmaxpd`/`vminpd` (a NaN gives `lo` or `max`: it is not accepted either way).
        let clamped = {
            let v = if r > lo { r } else { lo };
            if v < max { v } else { max }
        };
        let (v, reject) = if const { OOR == OOR_CLAMP } {
            // ±Inf and NaN are never clamped (catalogue `inf-clamp`): the block is redone.
            #[allow(clippy::eq_op)] // `r - r` is the finiteness test.
            let zero_if_finite = r - r;
            (clamped, zero_if_finite.to_bits())
        } else if const { OOR == OOR_WRAP } {
            (r, ((r + MAGIC).to_bits() >> 52) ^ MAGIC_EXPONENT)
        } else {
            // `clamped - r`, not `r - clamped`: `r = -0` clamped to `lo = +0` gives +0.
            (r, (clamped - r).to_bits())
        };
        // Packed codes are masked after the loop, and only for targets narrower than the
        // word (a negative `int4` in `u8`): the `vpand` per vector is then not in the loop
        // of every other target, whose truncation to the word is the code.
        let code = if fold_even {
            crate::arch::clamp_round_even_to_i32(r, lo_i, max_i) as u32
        } else if fold_away {
            crate::arch::clamp_round_away_to_i32(r, lo_i, max_i) as u32
        } else if packed {
            crate::arch::clamp_to_i32(r, lo_i, max_i) as u32
        } else {
            (v + MAGIC).to_bits() as u32 & mask
        };
        *d = DW::from_u64(u64::from(code));
        rejected |= reject;
    }
    if packed && u64::from(mask) != u64::MAX >> (64 - DW::BITS) {
        mask_codes(dst, mask);
    }
    rejected == 0
}

/// `dst &= mask`, word by word: the codes of a target narrower than its word (`int4` in
/// `u8`), for [`f2i_narrow`]. Not inlined: rare, and one copy per word width.
#[inline(never)]
fn mask_codes<DW: Word>(dst: &mut [DW], mask: u32) {
    for d in dst.iter_mut() {
        *d = DW::from_u64(d.to_u64() & u64::from(mask));
    }
}

/// The sign and exponent field of [`MAGIC`] (and of every `f64` in `[2^52, 2^53)`).
const MAGIC_EXPONENT: u64 = MAGIC.to_bits() >> 52;

#[cfg(test)]
mod tests {
    use super::super::{Affine, Src};
    use crate::number::layout::IntLayout;
    use crate::number::{CastOptions, OutOfRange, Rounding};

    /// The fused `scale_offset -> cast_value` loop (AVX-512, AVX2 and portable builds) does
    /// the same elements and writes the same words at every level as the portable build:
    /// `f64` and `f32` words into `uint8`, `int16` and `uint32`, every rounding mode and
    /// out-of-range rule, on ties, values out of range, ±Inf and NaN (declined blocks), odd
    /// lengths and unaligned starts.
    #[test]
    fn fused_affine_cast_is_the_same_at_every_level() {
        let mut x = 0x9e37_79b9_u32;
        let mut values: Vec<f64> = (0..3000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let r = f64::from(x) / f64::from(u32::MAX);
                match i % 5 {
                    // Ties after the affine step: (x - 100) * 4 = k + 1/2.
                    0 => (r * 120.0).round() / 4.0 + 100.125,
                    _ => r * 30.0 + 100.0,
                }
            })
            .collect();
        let clean = values.clone();
        values.extend([f64::NAN, 1e12, -1e12, f64::INFINITY, 0.0]);
        values.extend(&clean[..1500]);
        let w64: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        let w32: Vec<u32> = values.iter().map(|&v| (v as f32).to_bits()).collect();
        let a64 = Affine {
            offset: 100.0f64.to_bits(),
            scale: 4.0f64.to_bits(),
        };
        let a32 = Affine {
            offset: u64::from(100.0f32.to_bits()),
            scale: u64::from(4.0f32.to_bits()),
        };
        fn run<SW: Src, DW: super::super::Dst>(
            src: &[SW],
            o: CastOptions,
            l: IntLayout,
            a: Affine,
        ) -> (usize, Vec<DW>) {
            let mut out = vec![DW::from_u64(0); src.len()];
            let done = SW::affine_to_int(src, &mut out, o, l, a);
            out.truncate(done);
            (done, out)
        }
        fn check<DW: super::super::Dst>(
            w64: &[u64],
            w32: &[u32],
            a64: Affine,
            a32: Affine,
            l: IntLayout,
        ) {
            for rounding in Rounding::ALL {
                for oor in [OutOfRange::Clamp, OutOfRange::Wrap, OutOfRange::Error] {
                    let o = CastOptions::new(rounding, oor);
                    for (start, len) in [(0, w64.len()), (1, 2999), (3, 77), (0, 1)] {
                        let (s64, s32) = (&w64[start..start + len], &w32[start..start + len]);
                        let both = || {
                            (
                                run::<u64, DW>(s64, o, l, a64),
                                run::<u32, DW>(s32, o, l, a32),
                            )
                        };
                        let want = crate::isa::with_max_isa(crate::isa::Isa::Portable, both);
                        if start == 1 {
                            // In range and finite: the kernel does all of it.
                            assert_eq!((want.0.0, want.1.0), (len, len), "{o:?} {l:?}");
                        }
                        for level in crate::isa::Isa::available() {
                            let got = crate::isa::with_max_isa(level, both);
                            assert!(got == want, "{level:?} {o:?} {l:?} start {start} len {len}");
                        }
                    }
                }
            }
        }
        check::<u8>(
            &w64,
            &w32,
            a64,
            a32,
            IntLayout {
                bits: 8,
                signed: false,
            },
        );
        check::<u16>(
            &w64,
            &w32,
            a64,
            a32,
            IntLayout {
                bits: 16,
                signed: true,
            },
        );
        check::<u32>(
            &w64,
            &w32,
            a64,
            a32,
            IntLayout {
                bits: 32,
                signed: false,
            },
        );
    }
}

#[cfg(test)]
mod every_level_tests {
    use super::*;
    use crate::arch::level::{Isa, with_max_isa};
    use crate::convert::reference_words;
    use crate::number::layout::Format;

    /// Values out of every target's range, and at the edges of the baseline twin's exact
    /// rounding (2^51) and of `f64`'s integers (2^52, 2^53), just below a half; and NaN
    /// (alone in a block of clean values, the case a `scalar_map` `{NaN: v}` keeps).
    const EDGES: [f64; 39] = [
        // The 8- and 16-bit targets' ends and just past them (a check kernel's bounds).
        127.5,
        128.0,
        -128.5,
        -129.0,
        255.5,
        256.0,
        -1.0,
        32767.5,
        32768.0,
        -32769.0,
        65535.5,
        65536.0,
        // The 64-bit targets' ends and their `f64` neighbours (and below 2^53: ties).
        9_223_372_036_854_774_784.0,
        9_223_372_036_854_775_808.0,
        18_446_744_073_709_549_568.0,
        18_446_744_073_709_551_616.0,
        -9_223_372_036_854_775_808.0,
        -9_223_372_036_854_777_856.0,
        4_503_599_627_370_495.5,
        -4_503_599_627_370_494.5,
        -0.5,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        -1e12,
        5e9,
        70000.5,
        2_251_799_813_685_247.5,
        -2_251_799_813_685_248.0,
        2_251_799_813_685_249.0,
        -2_251_799_813_685_250.0,
        4_503_599_627_370_495.5,
        -4_503_599_627_370_497.0,
        9_007_199_254_740_994.0,
        0.499_999_999_999_999_94,
        -0.499_999_999_999_999_94,
        -2.5,
        f64::NEG_INFINITY,
        1e300,
    ];

    /// `f32`/`f64` words: in-range values (halves, negatives, zeros) only when `clean`,
    /// else also NaN, ±Inf and values out of every target's range.
    fn sources<SW: Word>(n: usize, clean: bool) -> Vec<SW> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = match (i % 7, clean) {
                    (0, _) => (i as f64) / 2.0 - 40.0,
                    (1, _) => -0.0,
                    (2, false) => f64::NAN,
                    (3, false) => EDGES[(i / 7) % EDGES.len()],
                    _ => ((x >> 11) % 2000) as f64 / 8.0 - 120.0,
                };
                if SW::BITS == 64 {
                    SW::from_u64(v.to_bits())
                } else {
                    SW::from_u64(u64::from((v as f32).to_bits()))
                }
            })
            .collect()
    }

    /// Every level's kernel (the baseline twin included) against the reference path: the
    /// elements it reports done are the reference's, for every rounding mode and rule,
    /// without and with a `scalar_map` whose only key is NaN.
    fn check<SW: super::super::Src, DW: super::super::Dst>(layouts: &[IntLayout]) {
        let sf = if SW::BITS == 64 {
            <f64 as crate::dtype::Real>::FORMAT
        } else {
            <f32 as crate::dtype::Real>::FORMAT
        };
        let modes = [
            Rounding::NearestEven,
            Rounding::TowardsZero,
            Rounding::TowardsPositive,
            Rounding::TowardsNegative,
            Rounding::NearestAway,
        ];
        let rules = [OutOfRange::Clamp, OutOfRange::Wrap, OutOfRange::Error];
        // Every mode and rule, without and with a `scalar_map` `{NaN: -3 or 3}`.
        let combinations = || {
            modes.into_iter().flat_map(move |m| {
                rules
                    .into_iter()
                    .flat_map(move |o| [(m, o, false), (m, o, true)])
            })
        };
        let nan_word = if SW::BITS == 64 {
            f64::NAN.to_bits()
        } else {
            u64::from(f32::NAN.to_bits())
        };
        for isa in Isa::available() {
            for &l in layouts {
                let nan_code = if l.signed {
                    (-3i64 as u64) & l.mask()
                } else {
                    3
                };
                let map = crate::convert::KeyMap::new(sf, [(nan_word, nan_code)]);
                // Odd lengths, unaligned starts: the clean values; the clean values with
                // NaN, ±Inf and the edges mixed in (every block of which is declined by
                // some rule); and each edge alone in a short block of clean values, so
                // that the rules that keep it are tested on it. `(clean, NaN the only other
                // value)`: with a map, a kernel does all of the latter under clamp and wrap.
                let word = |e: f64| {
                    if SW::BITS == 64 {
                        SW::from_u64(e.to_bits())
                    } else {
                        SW::from_u64(u64::from((e as f32).to_bits()))
                    }
                };
                let mut nans = sources::<SW>(1201, true);
                nans.iter_mut().step_by(7).for_each(|w| *w = word(f64::NAN));
                let mut cases = vec![
                    ((true, false), sources::<SW>(1201, true)),
                    ((false, false), sources::<SW>(1201, false)),
                    ((false, true), nans),
                ];
                for e in EDGES {
                    let mut src = sources::<SW>(38, true);
                    src[20] = word(e);
                    cases.push(((false, e.is_nan()), src));
                }
                for ((clean, nan_only), src) in &cases {
                    let (clean, nan_only, src) = (*clean, *nan_only, &src[1..]);
                    for (mode, oor, nan_map) in combinations() {
                        let opts = CastOptions::new(mode, oor);
                        let mut got = vec![DW::from_u64(0); src.len()];
                        // Through the entry points the conversions call (`Src`), which
                        // choose the loop: at the AVX-512 level nearest-even without a map
                        // into 32 bits is the fused chain's loop on the identity affine
                        // step, into 8 or 16 `arch::SmallIntCast`.
                        let done = with_max_isa(isa, || {
                            if nan_map && l.bits <= 32 {
                                SW::float_to_int_nan(src, &mut got, opts, l, nan_code)
                            } else {
                                // No map for 64-bit targets: the map's value is not used.
                                SW::float_to_int(src, &mut got, opts, l)
                            }
                        });
                        let mut want = vec![DW::from_u64(0); done];
                        let ok = reference_words(
                            &src[..done],
                            &mut want,
                            sf,
                            Format::Int(l),
                            opts,
                            (nan_map && l.bits <= 32).then_some(&map),
                        );
                        let ctx =
                            format!("{isa:?} {l:?} {mode:?} {oor:?} map {nan_map} clean {clean}");
                        assert!(ok.is_ok(), "{ctx}: accepted a failing element");
                        assert!(got[..done] == want[..], "{ctx}");
                        if l.bits == 64 {
                            // Done exactly when the rule keeps every value (no block is
                            // declined without a reason; values beyond 2^52 are integral,
                            // which rounding keeps).
                            let xs = || src.iter().map(|w| as_f64(*w));
                            let all = match oor {
                                OutOfRange::Error => reference_words(
                                    src,
                                    &mut vec![DW::from_u64(0); src.len()],
                                    sf,
                                    Format::Int(l),
                                    opts,
                                    None,
                                )
                                .is_ok(),
                                OutOfRange::Clamp => xs().all(f64::is_finite),
                                OutOfRange::Wrap => xs().all(|x| (-TWO_63..TWO_64).contains(&x)),
                            };
                            assert_eq!(done == src.len(), all, "{ctx}: done {done}");
                        }
                        let mapped = nan_only && nan_map && l.bits <= 32;
                        if (clean || mapped) && oor != OutOfRange::Error {
                            assert_eq!(done, src.len(), "{ctx} NaN only {nan_only}");
                        }
                    }
                }
            }
        }
    }

    /// [`Directed`]'s rounding is the standard library's `floor`, `ceil`, `trunc` and
    /// `round` (half away from zero) on every value within a few ulps of a half and of an
    /// integer at every binade from 2^-3 to 2^54, and on the specials.
    #[test]
    fn directed_rounding_is_the_modes_own() {
        type Reference = fn(f64) -> f64;
        let modes: [(Rounding, Reference); 4] = [
            (Rounding::TowardsNegative, f64::floor),
            (Rounding::TowardsPositive, f64::ceil),
            (Rounding::TowardsZero, f64::trunc),
            (Rounding::NearestAway, f64::round),
        ];
        let mut xs = vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
        ];
        for e in -3..=54 {
            let base = 2f64.powi(e);
            for k in [1.0, 1.5, 2.5, 3.0, 5.5, 7.0, 1.25, 1.75, 1.125] {
                let c = base * k;
                let half = c.floor() + 0.5;
                for centre in [c, half, c.floor(), half + 1.0] {
                    if centre == 0.0 {
                        continue;
                    }
                    let mut x = centre;
                    for _ in 0..4 {
                        x = f64::from_bits(x.to_bits() - 1);
                    }
                    for _ in 0..9 {
                        xs.extend([x, -x]);
                        x = f64::from_bits(x.to_bits() + 1);
                    }
                }
            }
        }
        for (mode, want) in modes {
            let d = Directed::new(mode).expect("a directed mode");
            for &x in &xs {
                let got = d.round::<GENERAL>(x);
                assert!(got == want(x), "{mode:?} {x:e}: {got:e}, not {:e}", want(x));
            }
            assert!(d.round::<GENERAL>(f64::NAN).is_nan(), "{mode:?} NaN");
        }
    }

    #[test]
    fn every_level_matches_the_reference() {
        let int = |bits, signed| IntLayout { bits, signed };
        for sw in [32, 64] {
            let u8s = [int(8, false), int(8, true), int(4, true)];
            let u16s = [int(16, false), int(16, true)];
            let u32s = [int(32, false), int(32, true)];
            // 64-bit targets go by `float_to_int`.
            let u64s = [int(64, false), int(64, true)];
            if sw == 32 {
                check::<u32, u8>(&u8s);
                check::<u32, u16>(&u16s);
                check::<u32, u32>(&u32s);
                check::<u32, u64>(&u64s);
            } else {
                check::<u64, u8>(&u8s);
                check::<u64, u16>(&u16s);
                check::<u64, u32>(&u32s);
                check::<u64, u64>(&u64s);
            }
        }
    }
}
