//! Fast paths for [`Caster`](super::Caster), bit-identical to the reference path
//! ([`cast_slice_reference`](super::cast_slice_reference)).
//!
//! The kernels are generic over the storage words they read and write (`u8` … `u64`), never
//! over dtypes: the source and target layouts, the rounding mode and the out-of-range rule
//! are parameters, chosen once per [`Caster`](super::Caster) by [`select`]. The rounding
//! mode of the float -> integer and narrowing kernels is a const parameter, because it picks
//! the instruction (`vroundpd`'s immediate) or the rounding formula inside the loop; the
//! other parameters are loop invariants.
//!
//! Each kernel runs a branch-free loop that LLVM vectorizes and only *detects* the rare
//! elements (NaN, out of range, anything the hardware does not round as the spec says); when
//! one is seen, it returns `false` and the caller redoes the block by the reference path,
//! which also finds the first failing index. So a fast path never has to reproduce an error,
//! a clamp at a tricky boundary or a wrap of a huge value — it only has to be right on what
//! it accepts.
//!
//! - `f32`/`f64` to any integer format, every rounding mode: hardware rounding to an
//!   integral `f64` (exact: rounding to an integer never needs more precision than the
//!   source has), then a range check.
//! - Integer to integer: a range check (and the wrap is the low bits).
//! - `f64 -> f32`, and integers to `f32`/`f64`, nearest-even: the hardware conversion,
//!   which is correctly rounded; NaNs are canonicalized and overflow is detected.
//! - `f32`/`f64` to any narrower signed float format (float16, bfloat16, float8/6/4, and
//!   `f64 -> f32` in the other rounding modes), every rounding mode: integer arithmetic on
//!   the bits ([`super::narrow`]).

use super::blocks::by_blocks;
use super::narrow::{NEAREST_AWAY, NEAREST_EVEN, TOWARDS_NEGATIVE, TOWARDS_POSITIVE, TOWARDS_ZERO};
use super::{CastOptions, OutOfRange, Rounding};
use crate::dtype::layout::IntLayout;
use crate::dtype::{FloatLayout, Format, Word, Words};

/// The fast path of one (source, target, options) triple, chosen once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fast {
    /// None applies: the reference path converts every element.
    None,
    /// `f32`/`f64` (by source word width) to an integer format.
    FloatToInt(IntLayout),
    /// `f64 -> f32`, nearest-even.
    F64ToF32,
    /// `f32`/`f64` (by source word width) to a narrower signed float format.
    Narrow(FloatLayout),
    /// Integer to integer.
    IntToInt(IntLayout, IntLayout),
    /// Integer to `f32`/`f64` (by target word width), nearest-even.
    IntToFloat(IntLayout),
    /// A 16-bit IEEE-like float (float16, bfloat16) to `f32`/`f64` (by target word width):
    /// exact, so every rounding mode and range rule gives the same.
    Widen(FloatLayout),
}

/// The fast path for `src -> dst` under `opts`, where the formats are stored in words of
/// `src_word` and `dst_word` bits. Float fast paths need the hardware float's own width.
pub(crate) fn select(
    src: Format,
    src_word: u32,
    dst: Format,
    dst_word: u32,
    opts: CastOptions,
) -> Fast {
    let nearest = opts.rounding == Rounding::NearestEven;
    match (src, dst) {
        (Format::Float(sl), Format::Float(_)) if src_word <= 16 && widens(sl) => {
            match dst.hardware_float() {
                Some(d_f64) if dst_word == if d_f64 { 64 } else { 32 } => Fast::Widen(sl),
                _ => Fast::None,
            }
        }
        (Format::Float(_), _) => {
            let Some(s_f64) = src.hardware_float() else {
                return Fast::None;
            };
            if src_word != if s_f64 { 64 } else { 32 } {
                return Fast::None;
            }
            match dst {
                Format::Int(l) => {
                    if opts.out_of_range == OutOfRange::Clamp && l.bits == 64 {
                        // `max` of a 64-bit type is not an f64: clamping is left to the
                        // reference path.
                        Fast::None
                    } else {
                        Fast::FloatToInt(l)
                    }
                }
                Format::Float(l) => {
                    if nearest && s_f64 && dst.hardware_float() == Some(false) && dst_word == 32 {
                        Fast::F64ToF32
                    } else if super::narrow::applies(l, s_f64) && dst_word <= 32 {
                        Fast::Narrow(l)
                    } else {
                        // Same format: only NaN payloads change (canonicalized) — left to
                        // the reference path, which is exact and rare in practice.
                        Fast::None
                    }
                }
            }
        }
        // Integer sources fill their word (`int8` … `int64`; narrower ones go by table, and a
        // user's `uint12` in 16 bits takes the reference path), so the sign extension is a
        // constant shift of the word.
        (Format::Int(sl), _) if sl.bits != src_word => Fast::None,
        (Format::Int(sl), Format::Int(dl)) => {
            if (!sl.signed && sl.bits == 64) || dl.bits != dst_word {
                // u64 values above i64::MAX, and targets narrower than their word (`int4`
                // from `int16`: rare), are left to the reference path.
                Fast::None
            } else {
                Fast::IntToInt(sl, dl)
            }
        }
        (Format::Int(sl), Format::Float(_)) => match dst.hardware_float() {
            Some(d_f64) if nearest && dst_word == if d_f64 { 64 } else { 32 } => {
                Fast::IntToFloat(sl)
            }
            _ => Fast::None,
        },
    }
}

/// Whether [`widen`] is exact for sources of layout `l`: IEEE-like (signed, subnormals,
/// ±Inf, IEEE NaNs), every value of it an `f32` (its exponent range and precision within
/// `f32`'s, subnormals included), and not `f32`/`f64` themselves.
fn widens(l: FloatLayout) -> bool {
    use crate::dtype::NanEncoding;
    let max_exp = (1i32 << l.exponent_bits) - 1 - l.bias;
    let min_exp = 1 - l.bias - l.mantissa_bits as i32;
    // IEEE (±Inf, NaNs on the all-ones exponent), or OCP's `fn` formats (no Inf, NaN only
    // the all-ones code: `float8_e4m3fn`).
    let specials = match l.nan {
        NanEncoding::Ieee => l.inf,
        NanEncoding::AllOnes => !l.inf,
        _ => false,
    };
    l.signed
        && l.subnormals
        && specials
        && l.mantissa_bits >= 1
        && l.exponent_bits <= 8
        && l.mantissa_bits <= 23
        && l.bits() <= 16
        && l.bias <= 127
        && max_exp <= 127
        && min_exp >= -149
}

/// Run `fast` over `src` into `dst` (same length), block by block inside one call of the
/// kernel's twin (a call per block costs as much as a block of a narrow type). Returns how
/// many elements are done: all of them, or those before the first block that must be
/// redone by the reference path.
#[inline]
pub(crate) fn run<SW: Src, DW: Dst>(
    fast: Fast,
    opts: CastOptions,
    src: &[SW],
    dst: &mut [DW],
) -> usize {
    match fast {
        Fast::None => 0,
        Fast::FloatToInt(l) => SW::float_to_int(src, dst, opts, l),
        Fast::F64ToF32 => SW::f64_to_f32(src, dst, opts.out_of_range == OutOfRange::Clamp),
        Fast::Narrow(l) => SW::narrow(src, dst, opts.rounding, opts.out_of_range, l),
        Fast::IntToInt(sl, dl) => int_to_int(src, dst, opts, sl, dl),
        Fast::IntToFloat(sl) => DW::from_int(src, dst, sl),
        Fast::Widen(sl) => SW::widen(src, dst, sl),
    }
}

/// The kernels a storage width can be the source of. A kernel that does not apply to a
/// width (float -> integer from `u8` words, …) is the default method here, `0` (declined):
/// only the kernels of valid (source, target) widths are compiled, instead of every kernel
/// for all 16 pairs of widths.
pub(crate) trait Src: Word {
    /// `f32`/`f64` to an integer format.
    fn float_to_int<DW: Dst>(_: &[Self], _: &mut [DW], _: CastOptions, _: IntLayout) -> usize {
        0
    }
    /// `scale_offset`'s encode `(x - offset) * scale` in `f32`/`f64`, fused with a cast to
    /// an integer format of at most 32 bits.
    fn affine_to_int<DW: Dst>(
        _: &[Self],
        _: &mut [DW],
        _: CastOptions,
        _: IntLayout,
        _: Affine,
    ) -> usize {
        0
    }
    /// `f32`/`f64` to an integer format of at most 32 bits under a `scalar_map` whose only
    /// key is NaN, mapped to `nan_code`.
    fn float_to_int_nan<DW: Dst>(
        _: &[Self],
        _: &mut [DW],
        _: CastOptions,
        _: IntLayout,
        _nan_code: u64,
    ) -> usize {
        0
    }
    /// `f64 -> f32`, nearest-even.
    fn f64_to_f32<DW: Dst>(_: &[Self], _: &mut [DW], _clamp: bool) -> usize {
        0
    }
    /// A 16-bit float to `f32`/`f64`.
    fn widen<DW: Dst>(_: &[Self], _: &mut [DW], _: FloatLayout) -> usize {
        0
    }
    /// `f32`/`f64` to a narrower float format.
    fn narrow<DW: Dst>(
        _: &[Self],
        _: &mut [DW],
        _: Rounding,
        _: OutOfRange,
        _: FloatLayout,
    ) -> usize {
        0
    }
    /// Integer to integer from a source beyond `i32`.
    fn int_to_int_wide<DW: Word>(
        _: &[Self],
        _: &mut [DW],
        _: CastOptions,
        _: IntLayout,
        _: IntLayout,
    ) -> usize {
        0
    }
}

/// The kernels a storage width can be the target of (see [`Src`]).
pub(crate) trait Dst: Word {
    /// `f32`/`f64` (`SW`) to a narrower float format in these words.
    fn narrow_from<SW: Word>(
        _: &[SW],
        _: &mut [Self],
        _: Rounding,
        _: OutOfRange,
        _: FloatLayout,
    ) -> usize {
        0
    }
    /// `f64` to `f32` in these words.
    fn f32_from_f64<SW: Word>(_: &[SW], _: &mut [Self], _clamp: bool) -> usize {
        0
    }
    /// An integer to `f32`/`f64` in these words.
    fn from_int<SW: Word>(_: &[SW], _: &mut [Self], _: IntLayout) -> usize {
        0
    }
    /// `f32`/`f64` (`SW`) to a 64-bit integer format in these words (`u64` only).
    fn from_float_wide<SW: Word>(_: &[SW], _: &mut [Self], _: CastOptions, _: IntLayout) -> usize {
        0
    }
    /// The number `value` gives for each `SW` word (an `f32`/`f64`, or `scale_offset`'s
    /// result on it) to an integer format of at most 32 bits in these words (`u8`, `u16`,
    /// `u32` only: see [`f2i_narrow`]); with `NAN_MAP`, NaN to `nan_code`.
    fn from_float_narrow<SW: Word, const NAN_MAP: bool>(
        _: &[SW],
        _: &mut [Self],
        _: CastOptions,
        _: IntLayout,
        _value: impl Fn(SW) -> f64 + Copy,
        _nan_code: u64,
    ) -> usize {
        0
    }
}

/// The source methods of 8- and 16-bit words: widening a small float.
macro_rules! small_src {
    ($($t:ty),*) => {$(
        impl Src for $t {
            fn widen<DW: Dst>(src: &[Self], dst: &mut [DW], l: FloatLayout) -> usize {
                if DW::BITS < 32 {
                    return 0;
                }
                // float16 to `f32` by F16C (`vcvtph2ps`) where the CPU has it.
                let hw = if l == crate::dtype::layout::FLOAT16 {
                    crate::arch::F16c::detect()
                } else {
                    None
                };
                if let (Some(hw), Words::U16(s), Some(d)) =
                    (hw, Self::words(src), u32::of_mut(DW::words_mut(dst)))
                {
                    return by_blocks_streamed(s, d, |s, d, stream| {
                        if stream {
                            hw.f32_from_f16_streamed(s, d)
                        } else {
                            hw.f32_from_f16(s, d)
                        }
                    });
                }
                let p = widen_plan(l);
                // One-byte sources into `f32`: the intrinsic twin, which can stream.
                if let (true, Words::U8(s), Some(d)) =
                    (crate::arch::has_avx2(), Self::words(src), u32::of_mut(DW::words_mut(dst)))
                {
                    return by_blocks_streamed(s, d, |s, d, stream| {
                        crate::arch::widen_bytes_to_f32(s, d, p, stream)
                    });
                }
                crate::arch::vectorized(
                    #[inline(always)]
                    move || by_blocks(src, dst, #[inline(always)] |s, d| widen(s, d, p)),
                )
            }
        }
    )*};
}
small_src!(u8, u16);

/// The constants of [`widen`] for a layout `l`: its magnitude bits moved to `f32`'s places
/// are the value times `2^(B - 127)` (subnormals included, which land on `f32`
/// subnormals), so one multiplication by `2^(127 - B)` gives the value.
fn widen_plan(l: FloatLayout) -> crate::arch::WidenPlan {
    let mag_mask = l.magnitude_mask() as u32;
    let exp_all = (((1u32 << l.exponent_bits) - 1) << l.mantissa_bits) & mag_mask;
    // IEEE: `exp_all` is ±Inf and above it NaN; `fn`: no Inf, only `mag_mask` is NaN.
    let (inf, nan_from) = if l.inf {
        (exp_all, exp_all + 1)
    } else {
        (u32::MAX, mag_mask)
    };
    crate::arch::WidenPlan {
        mag_mask,
        shift: 23 - l.mantissa_bits,
        scale: f32::from_bits(((254 - l.bias) as u32) << 23),
        inf,
        // `mag >= nan_from` as the top bit of `mag + (2^31 - nan_from)` (both below 2^16),
        // OR-ed over the block: an add and an or per vector, no compare mask to narrow.
        bias_nan: (1 << 31) - nan_from,
        width: l.exponent_bits + l.mantissa_bits,
    }
}

/// A 16-bit IEEE-like float (see [`widens`]) to `f32`/`f64` words, exactly (see
/// [`widen_plan`]); ±Inf are set apart, and a NaN is declined (the reference path
/// canonicalizes it). In 32-bit lanes, 8 elements per AVX2 vector, instead of a
/// 65536-entry table. `arch::widen_bytes_to_f32` is its intrinsic twin for one-byte
/// sources into `f32`.
#[inline(always)]
fn widen<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], p: crate::arch::WidenPlan) -> bool {
    let crate::arch::WidenPlan {
        mag_mask,
        shift,
        scale,
        inf,
        bias_nan,
        width,
    } = p;
    let mut nan = 0u32;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let h = s.to_u64() as u32;
        let mag = h & mag_mask;
        let v = (f32::from_bits(mag << shift) * scale).to_bits();
        let v = if mag == inf { 0x7f80_0000 } else { v };
        let v = v | (((h >> width) & 1) << 31);
        *d = DW::from_u64(if DW::BITS == 64 {
            f64::from(f32::from_bits(v)).to_bits()
        } else {
            u64::from(v)
        });
        nan |= mag + bias_nan;
    }
    nan & (1 << 31) == 0
}

/// `kernel(src, dst, stream)` block by block (see [`by_blocks`]). An output to stream
/// (`arch::streams`) goes by plain stores up to its first 32-byte boundary, then with
/// `stream` set (every block of `by_blocks` but the last starts a multiple of 64 elements
/// further, so they stay aligned), then the fence.
#[inline(always)]
fn by_blocks_streamed<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    mut kernel: impl FnMut(&[SW], &mut [DW], bool) -> bool,
) -> usize {
    if !crate::arch::streams(dst) {
        return by_blocks(
            src,
            dst,
            #[inline(always)]
            |s, d| kernel(s, d, false),
        );
    }
    let n = src.len().min(dst.len());
    let head = dst.as_ptr().align_offset(32).min(n);
    let done = by_blocks(
        &src[..head],
        &mut dst[..head],
        #[inline(always)]
        |s, d| kernel(s, d, false),
    );
    if done < head {
        return done;
    }
    let rest = by_blocks(
        &src[head..n],
        &mut dst[head..n],
        #[inline(always)]
        |s, d| kernel(s, d, true),
    );
    crate::arch::stream_fence();
    head + rest
}

/// The source methods of `f32`/`f64` words (and `int32`/`uint32`/`int64`).
macro_rules! float_src {
    ($t:ty, $affine:expr, { $($extra:tt)* }) => {
        impl Src for $t {
            fn float_to_int<DW: Dst>(src: &[Self], dst: &mut [DW], opts: CastOptions, l: IntLayout) -> usize {
                if l.bits <= 32 {
                    DW::from_float_narrow::<Self, false>(src, dst, opts, l, as_f64::<Self>, 0)
                } else {
                    DW::from_float_wide(src, dst, opts, l)
                }
            }
            fn float_to_int_nan<DW: Dst>(
                src: &[Self],
                dst: &mut [DW],
                opts: CastOptions,
                l: IntLayout,
                nan_code: u64,
            ) -> usize {
                DW::from_float_narrow::<Self, true>(src, dst, opts, l, as_f64::<Self>, nan_code)
            }
            fn affine_to_int<DW: Dst>(
                src: &[Self],
                dst: &mut [DW],
                opts: CastOptions,
                l: IntLayout,
                a: Affine,
            ) -> usize {
                let value = $affine(a);
                DW::from_float_narrow::<Self, false>(src, dst, opts, l, value, 0)
            }
            fn narrow<DW: Dst>(
                src: &[Self],
                dst: &mut [DW],
                mode: Rounding,
                oor: OutOfRange,
                l: FloatLayout,
            ) -> usize {
                DW::narrow_from(src, dst, mode, oor, l)
            }
            fn int_to_int_wide<DW: Word>(
                src: &[Self],
                dst: &mut [DW],
                opts: CastOptions,
                sl: IntLayout,
                dl: IntLayout,
            ) -> usize {
                int_to_int_wide(src, dst, opts, sl, dl)
            }
            $($extra)*
        }
    };
}
float_src! { u32, affine_f32, {} }
float_src! { u64, affine_f64, {
    fn f64_to_f32<DW: Dst>(src: &[Self], dst: &mut [DW], clamp: bool) -> usize {
        DW::f32_from_f64(src, dst, clamp)
    }
} }

/// The target methods of narrow-float words (float16, float8, …, and `f32`).
macro_rules! narrow_dst {
    ($t:ty { $($extra:tt)* }) => {
        impl Dst for $t {
            fn narrow_from<SW: Word>(
                src: &[SW],
                dst: &mut [Self],
                mode: Rounding,
                oor: OutOfRange,
                l: FloatLayout,
            ) -> usize {
                narrow(src, dst, mode, oor, l)
            }
            fn from_float_narrow<SW: Word, const NAN_MAP: bool>(
                src: &[SW],
                dst: &mut [Self],
                opts: CastOptions,
                l: IntLayout,
                value: impl Fn(SW) -> f64 + Copy,
                nan_code: u64,
            ) -> usize {
                float_to_narrow_int::<SW, Self, NAN_MAP>(src, dst, opts, l, value, nan_code)
            }
            $($extra)*
        }
    };
}
narrow_dst! { u8 {} }
narrow_dst! { u16 {} }
narrow_dst! { u32 {
    fn f32_from_f64<SW: Word>(src: &[SW], dst: &mut [Self], clamp: bool) -> usize {
        f64_to_f32_blocks(src, dst, clamp)
    }
    fn from_int<SW: Word>(src: &[SW], dst: &mut [Self], sl: IntLayout) -> usize {
        // `int32 -> float32` with an output too large for the cache: streamed out.
        if let (true, Some(s)) = (sl.signed && sl.bits == 32, u32::of(SW::words(src))) {
            if crate::arch::i32_to_f32_streamed(s, dst) {
                return s.len().min(dst.len());
            }
        }
        int_to_hw_float(src, dst, sl);
        src.len().min(dst.len())
    }
} }

impl Dst for u64 {
    fn from_int<SW: Word>(src: &[SW], dst: &mut [Self], sl: IntLayout) -> usize {
        int_to_hw_float(src, dst, sl);
        src.len().min(dst.len())
    }
    fn from_float_wide<SW: Word>(
        src: &[SW],
        dst: &mut [Self],
        opts: CastOptions,
        l: IntLayout,
    ) -> usize {
        float_to_int(src, dst, opts, l)
    }
}

#[inline(always)]
fn narrow<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    mode: Rounding,
    oor: OutOfRange,
    l: FloatLayout,
) -> usize {
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            let plan = super::narrow::plan(l, oor);
            if let Some(done) = super::narrow::f32_nearest_even(src, dst, mode, oor, l, plan) {
                return done;
            }
            by_blocks(
                src,
                dst,
                #[inline(always)]
                |s, d| !super::narrow::cast(s, d, mode, oor, l, plan),
            )
        },
    )
}

#[inline(always)]
fn f64_to_f32_blocks<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], clamp: bool) -> usize {
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            by_blocks(
                src,
                dst,
                #[inline(always)]
                |s, d| f64_to_f32(s, d, clamp),
            )
        },
    )
}

/// The value of a float word: `f64` for 64-bit words, `f32` (widened exactly) otherwise.
#[inline(always)]
fn as_f64<SW: Word>(w: SW) -> f64 {
    if SW::BITS == 64 {
        f64::from_bits(w.to_u64())
    } else {
        f32::from_bits(w.to_u64() as u32) as f64
    }
}

/// Round to an integral value under `MODE` (a [`Rounding`] as `u8`), in hardware.
#[inline(always)]
fn round_integral<const MODE: u8>(x: f64) -> f64 {
    match MODE {
        NEAREST_EVEN => x.round_ties_even(),
        TOWARDS_ZERO => x.trunc(),
        TOWARDS_POSITIVE => x.ceil(),
        TOWARDS_NEGATIVE => x.floor(),
        _ => x.round(),
    }
}

/// 2^63, exactly.
const TWO_63: f64 = (1u64 << 63) as f64;
/// 2^31, exactly.
const TWO_31: f64 = (1u64 << 31) as f64;

/// `f32`/`f64` to an integer format of more than 32 bits (narrower ones:
/// [`float_to_narrow_int`]). The rounding mode is made a constant here, outside the loop:
/// with a `match` on it per element LLVM keeps the loop scalar.
#[inline(always)]
fn float_to_int<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    l: IntLayout,
) -> usize {
    let oor = opts.out_of_range;
    macro_rules! by_mode {
        ($($mode:ident => $m:ident),*) => {
            match opts.rounding {
                $(Rounding::$mode => crate::arch::vectorized(
                    #[inline(always)]
                    move || by_blocks(src, dst, #[inline(always)] |s, d| float_to_int_in::<SW, DW, $m>(s, d, oor, l)),
                ),)*
            }
        };
    }
    by_mode!(
        NearestEven => NEAREST_EVEN,
        TowardsZero => TOWARDS_ZERO,
        TowardsPositive => TOWARDS_POSITIVE,
        TowardsNegative => TOWARDS_NEGATIVE,
        NearestAway => NEAREST_AWAY
    )
}

#[inline(always)]
fn float_to_int_in<SW: Word, DW: Word, const MODE: u8>(
    src: &[SW],
    dst: &mut [DW],
    oor: OutOfRange,
    l: IntLayout,
) -> bool {
    // Bounds as f64: exact for every width (2^63 and 2^64 are powers of two; `max + 1` is
    // used as an exclusive bound so that no rounding of `max` itself is involved).
    let lo = l.min() as f64;
    let hi_excl = (l.max() + 1) as f64;
    let max = l.max() as f64;
    let mask = l.mask();
    let (clamp, wrap) = (oor == OutOfRange::Clamp, oor == OutOfRange::Wrap);
    let mut bad = false;
    // Wrap is only done here for |r| < 2^63 (so that `r as i64` is exact), or 2^31.
    // Every value the block keeps (in range, clamped into it, or wrapped from below 2^31
    // into a target of at most 32 bits, whose low bits an i32 holds) is an i32.
    let fits_i32 = if wrap {
        l.bits <= 32
    } else {
        l.min() >= i32::MIN as i128 && l.max() <= i32::MAX as i128
    };
    let wrap_limit = if fits_i32 { TWO_31 } else { TWO_63 };
    // The out-of-range rule only selects between values computed for every element, so
    // the loop has no branch on it. `as` saturates (and maps NaN to 0), so `v` never causes
    // UB and in-range values convert exactly; out-of-range values of a block are redone
    // anyway. A target within i32 converts through i32 in a loop of its own, which x86
    // vectorizes (`vcvttpd2dq`); it cannot vectorize the 64-bit conversions, and a loop
    // that has both (even behind a loop-invariant select) stays scalar.
    macro_rules! each {
        (|$v:ident| $bits:expr) => {
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                let r = round_integral::<MODE>(as_f64(*s));
                let in_range = (r >= lo) & (r < hi_excl);
                // ±Inf and NaN are never clamped (catalogue `inf-clamp`): reference path.
                let ok = if clamp {
                    r.is_finite()
                } else if wrap {
                    r.abs() < wrap_limit
                } else {
                    in_range
                };
                let $v = if clamp { r.max(lo).min(max) } else { r };
                *d = DW::from_u64(narrow_mask::<DW>($bits, mask));
                bad |= !ok;
            }
        };
    }
    if fits_i32 {
        each!(|v| v as i32 as i64 as u64);
    } else {
        // For unsigned 64-bit targets values >= 2^63 go through u64.
        each!(|v| if v >= TWO_63 {
            v as u64
        } else {
            v as i64 as u64
        });
    }
    !bad
}

/// `f32`/`f64` (or `scale_offset`'s result on them: `value`) to an integer format of at
/// most 32 bits, every rounding mode, with NaN mapped to `nan_code` when `NAN_MAP`. The
/// rounding mode is made a constant here, outside the loop: with a `match` on it per
/// element LLVM keeps the loop scalar.
#[inline(always)]
fn float_to_narrow_int<SW: Word, DW: Word, const NAN_MAP: bool>(
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
    let (oor, nan_code) = (opts.out_of_range, nan_code as u32);
    macro_rules! by_mode {
        ($($mode:ident => $m:ident),*) => {
            match opts.rounding {
                $(Rounding::$mode => crate::arch::vectorized(
                    #[inline(always)]
                    move || by_blocks(src, dst, #[inline(always)] |s, d| {
                        by_oor_f2i::<SW, DW, $m, NAN_MAP>(s, d, oor, l, value, nan_code)
                    }),
                ),)*
            }
        };
    }
    by_mode!(
        NearestEven => NEAREST_EVEN,
        TowardsZero => TOWARDS_ZERO,
        TowardsPositive => TOWARDS_POSITIVE,
        TowardsNegative => TOWARDS_NEGATIVE,
        NearestAway => NEAREST_AWAY
    )
}

/// `scale_offset`'s encode on `f32`/`f64`: `(x - offset) * scale`, each operation rounded
/// in the source type (the hardware's own arithmetic), `offset` and `scale` as codes.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Affine {
    pub(crate) offset: u64,
    pub(crate) scale: u64,
}

/// [`Affine`] on `f64` words, as the number a fused cast rounds: `scale_offset -> cast_value`
/// in one loop (`Src::affine_to_int`). The affine step cannot fail on `f32`/`f64`; a NaN it
/// produces is declined by the cast like any NaN, and the caller redoes that block stage
/// by stage.
#[inline(always)]
fn affine_f64(a: Affine) -> impl Fn(u64) -> f64 + Copy {
    let (o, k) = (f64::from_bits(a.offset), f64::from_bits(a.scale));
    #[inline(always)]
    move |w: u64| (f64::from_bits(w) - o) * k
}

/// [`affine_f64`] on `f32` words, in `f32` arithmetic (then widened, exactly).
#[inline(always)]
fn affine_f32(a: Affine) -> impl Fn(u32) -> f64 + Copy {
    let (o, k) = (
        f32::from_bits(a.offset as u32),
        f32::from_bits(a.scale as u32),
    );
    #[inline(always)]
    move |w: u32| f64::from((f32::from_bits(w) - o) * k)
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
    value: impl Fn(SW) -> f64 + Copy,
    nan_code: u32,
) -> bool {
    let b = F2i {
        lo: l.min() as f64,
        max: l.max() as f64,
        narrow: (
            l.min().clamp(i32::MIN.into(), i32::MAX.into()) as i32,
            l.max().clamp(i32::MIN.into(), i32::MAX.into()) as i32,
        ),
        mask: l.mask() as u32,
        nan_value: crate::number::int::int_value(&l, nan_code.into()) as f64,
    };
    match oor {
        OutOfRange::Clamp => f2i_narrow::<SW, DW, MODE, OOR_CLAMP, NAN_MAP>(src, dst, b, value),
        OutOfRange::Wrap => f2i_narrow::<SW, DW, MODE, OOR_WRAP, NAN_MAP>(src, dst, b, value),
        OutOfRange::Error => f2i_narrow::<SW, DW, MODE, OOR_ERROR, NAN_MAP>(src, dst, b, value),
    }
}

/// The loop invariants of [`f2i_narrow`].
#[derive(Clone, Copy)]
struct F2i {
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
    // Under clamp into such a target, nearest-even and towards-zero need no rounding step
    // of their own (`fold`): clamping to integer bounds commutes with rounding to an
    // integer, and the conversion rounds (`vcvtpd2dq`, which LLVM makes of
    // `round_ties_even` and the conversion, or `vcvttpd2dq`). The finiteness test is the
    // same on the unrounded value.
    // (`const` blocks: a condition that is a constant after monomorphization lets codegen
    // skip the other branch, which keeps the IR of the 270 copies small.)
    let packed = const { DW::BITS < 32 && OOR != OOR_WRAP };
    let fold = const {
        DW::BITS < 32 && OOR == OOR_CLAMP && (MODE == NEAREST_EVEN || MODE == TOWARDS_ZERO)
    };
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
        let r = if fold || fold_away {
            x
        } else {
            round_integral::<MODE>(x)
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

/// `f64 -> f32`, nearest-even, by the hardware conversion. NaN (tested on the `f32`
/// lanes, where it stays NaN) becomes the canonical NaN. Without `clamp`, a block with an
/// infinite result is declined: an overflow, or an infinite input (which the reference
/// path converts to ±Inf too). Telling the two apart would need a test on the `f64` lanes
/// per element, for a case rare in data.
#[inline(always)]
fn f64_to_f32<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], clamp: bool) -> bool {
    const INF: u32 = 0x7f80_0000;
    let mut infinite = 0u32;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let y = f64::from_bits(s.to_u64()) as f32;
        let bits = y.to_bits();
        infinite |= u32::from(bits & 0x7fff_ffff == INF);
        let bits = if y.is_nan() { 0x7fc0_0000 } else { bits };
        *d = DW::from_u64(u64::from(bits));
    }
    // Under clamp an overflow goes to ±Inf, which is what the hardware produced.
    infinite == 0 || clamp
}

/// The integer loop `$kernel` run block by block with the out-of-range rule `$oor` as a
/// const parameter: a range check (its comparisons and reduction) or a clamp is then only
/// compiled where it is asked for, and a wrap into a narrower word is the truncation LLVM
/// does in narrow lanes.
macro_rules! by_oor {
    ($oor:ident, $src:ident, $dst:ident, $kernel:ident, $signed:literal, $lo:ident, $hi:ident) => {
        match $oor {
            OutOfRange::Error => by_blocks(
                $src,
                $dst,
                #[inline(always)]
                |s, d| $kernel::<SW, DW, $signed, OOR_ERROR>(s, d, $lo, $hi),
            ),
            OutOfRange::Clamp => by_blocks(
                $src,
                $dst,
                #[inline(always)]
                |s, d| $kernel::<SW, DW, $signed, OOR_CLAMP>(s, d, $lo, $hi),
            ),
            OutOfRange::Wrap => by_blocks(
                $src,
                $dst,
                #[inline(always)]
                |s, d| $kernel::<SW, DW, $signed, OOR_WRAP>(s, d, $lo, $hi),
            ),
        }
    };
}

/// Integer to integer. When the source fits `i32` the loop runs in 32-bit lanes (8 per
/// AVX2 vector instead of 4); the out-of-range rule is a select, not a branch. The source's
/// signedness is a const parameter (it picks the shift that extends a code to its value).
#[inline(always)]
fn int_to_int<SW: Src, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    sl: IntLayout,
    dl: IntLayout,
) -> usize {
    let oor = opts.out_of_range;
    if sl.bits < 32 || (sl.signed && sl.bits == 32) {
        // Every source value is an i32, so clamping to the target's range cut to i32 is
        // the same clamp, and the low bits (wrap) of an i32 are those of the value.
        let lo = dl.min().max(i32::MIN as i128) as i32;
        let hi = dl.max().min(i32::MAX as i128) as i32;
        if sl.signed {
            crate::arch::vectorized(
                #[inline(always)]
                move || by_oor!(oor, src, dst, int_to_int_32, true, lo, hi),
            )
        } else {
            crate::arch::vectorized(
                #[inline(always)]
                move || by_oor!(oor, src, dst, int_to_int_32, false, lo, hi),
            )
        }
    } else {
        // A source in 8 or 16 bits always fits i32: only 32- and 64-bit words have this path.
        SW::int_to_int_wide(src, dst, opts, sl, dl)
    }
}

/// [`int_to_int`] for sources beyond `i32` (`uint32`, `int64`), in `i64` lanes.
#[inline(always)]
fn int_to_int_wide<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    sl: IntLayout,
    dl: IntLayout,
) -> usize {
    let oor = opts.out_of_range;
    let lo = dl.min().max(i64::MIN as i128) as i64;
    let hi = dl.max().min(i64::MAX as i128) as i64;
    if sl.signed {
        crate::arch::vectorized(
            #[inline(always)]
            move || by_oor!(oor, src, dst, int_to_int_64, true, lo, hi),
        )
    } else {
        crate::arch::vectorized(
            #[inline(always)]
            move || by_oor!(oor, src, dst, int_to_int_64, false, lo, hi),
        )
    }
}

/// `bits & mask`, computed in 32 bits when the word has at most 32 (so that a loop writing
/// `u8`/`u16`/`u32` words stays in 32-bit lanes instead of widening every value to 64).
#[inline(always)]
fn narrow_mask<DW: Word>(bits: u64, mask: u64) -> u64 {
    if DW::BITS <= 32 {
        u64::from(bits as u32 & mask as u32)
    } else {
        bits & mask
    }
}

const OOR_ERROR: u8 = 0;
const OOR_CLAMP: u8 = 1;
const OOR_WRAP: u8 = 2;

#[inline(always)]
fn int_to_int_32<SW: Word, DW: Word, const SIGNED: bool, const OOR: u8>(
    src: &[SW],
    dst: &mut [DW],
    lo: i32,
    hi: i32,
) -> bool {
    // Sources and targets fill their words (see `select`): the shift that extends a code to
    // its value, and the truncation to the target word, are constants here.
    let sh = 32 - SW::BITS.min(32);
    let mut bad = false;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let v = value_i32(s.to_u64() as u32, sh, SIGNED);
        let in_range = (v >= lo) & (v <= hi);
        let out = if const { OOR == OOR_CLAMP } {
            v.clamp(lo, hi)
        } else {
            v
        };
        *d = DW::from_u64(out as i64 as u64);
        bad |= !in_range & (OOR == OOR_ERROR);
    }
    !bad
}

#[inline(always)]
fn int_to_int_64<SW: Word, DW: Word, const SIGNED: bool, const OOR: u8>(
    src: &[SW],
    dst: &mut [DW],
    lo: i64,
    hi: i64,
) -> bool {
    // Sources and targets fill their words (see `select`): the shift that extends a code to
    // its value, and the truncation to the target word, are constants here.
    let sh = 64 - SW::BITS.min(64);
    let mut bad = false;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let v = value_i64(s.to_u64(), sh, SIGNED);
        let in_range = (v >= lo) & (v <= hi);
        let out = if const { OOR == OOR_CLAMP } {
            v.clamp(lo, hi)
        } else {
            v
        };
        *d = DW::from_u64(out as u64);
        bad |= !in_range & (OOR == OOR_ERROR);
    }
    !bad
}

/// The value of an integer code of `32 - sh` bits held in the low bits of `w` (bits above
/// it ignored), sign-extended when `signed`.
#[inline(always)]
fn value_i32(w: u32, sh: u32, signed: bool) -> i32 {
    let up = w << sh;
    if signed {
        (up as i32) >> sh
    } else {
        (up >> sh) as i32
    }
}

/// [`value_i32`] in 64 bits (an unsigned 64-bit value above `i64::MAX` wraps: callers
/// exclude `uint64` or handle it apart).
#[inline(always)]
fn value_i64(w: u64, sh: u32, signed: bool) -> i64 {
    let up = w << sh;
    if signed {
        (up as i64) >> sh
    } else {
        (up >> sh) as i64
    }
}

/// Integer to `f32`/`f64` (by target word width), nearest-even: Rust's integer-to-float
/// `as` rounds once, to nearest-even. One loop per case (not a `match` per element, which
/// keeps the loop scalar), and an `i32` source where the values fit one: x86 converts `i32`
/// lanes (`vcvtdq2ps`/`vcvtdq2pd`) but not `i64` ones.
#[inline(always)]
fn int_to_hw_float<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], sl: IntLayout) -> bool {
    macro_rules! each {
        (|$b:ident| $e:expr) => {
            crate::arch::vectorized(
                #[inline(always)]
                // `move`: the invariants are copied into the closure, not read through
                // references that LLVM cannot tell from `dst` (which keeps a loop scalar).
                move || {
                    for (s, d) in src.iter().zip(dst.iter_mut()) {
                        let $b = s.to_u64();
                        *d = DW::from_u64($e);
                    }
                },
            )
        };
    }
    let to_f64 = DW::BITS == 64;
    let fits_i32 = sl.bits < 32 || (sl.signed && sl.bits == 32);
    let signed = sl.signed;
    if SW::BITS <= 16 || fits_i32 {
        if to_f64 {
            each!(|b| (value_i32(b as u32, 32 - SW::BITS.min(32), signed) as f64).to_bits());
        } else {
            each!(|b| u64::from(
                (value_i32(b as u32, 32 - SW::BITS.min(32), signed) as f32).to_bits()
            ));
        }
    } else if !signed && sl.bits == 64 {
        if to_f64 {
            each!(|b| (b as f64).to_bits());
        } else {
            each!(|b| u64::from((b as f32).to_bits()));
        }
    } else if to_f64 {
        each!(|b| (value_i64(b, 64 - SW::BITS, signed) as f64).to_bits());
    } else {
        each!(|b| u64::from((value_i64(b, 64 - SW::BITS, signed) as f32).to_bits()));
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::dtype::{DTypeId, Format};

    /// `arch::widen_bytes_to_f32` (AVX2, plain and streamed stores) writes what the
    /// portable `widen` writes, and declines the same blocks, for every code of every
    /// one-byte float type it serves, at every tail length.
    #[test]
    fn byte_widening_twin_equals_portable() {
        if !crate::arch::has_avx2() {
            return;
        }
        let layouts: Vec<_> = DTypeId::ALL
            .iter()
            .filter_map(|id| match id.format() {
                Some(Format::Float(l)) if l.bits() <= 8 && super::widens(l) => Some(l),
                _ => None,
            })
            .collect();
        assert!(layouts.len() >= 3, "the float8 types at least: {layouts:?}");
        let codes: Vec<u8> = (0..=255).collect();
        let mut buf = vec![0u32; 256 + 8];
        // A 32-byte aligned output, so that the streamed form is taken.
        let start = buf.as_ptr().align_offset(32).min(8);
        for l in layouts {
            let p = super::widen_plan(l);
            for stream in [false, true] {
                for len in [256, 255, 249, 8, 7, 1] {
                    let src = &codes[256 - len..];
                    let out = &mut buf[start..start + len];
                    let ok = crate::arch::widen_bytes_to_f32(src, out, p, stream);
                    let mut want = vec![0u32; len];
                    let want_ok = super::widen(src, &mut want, p);
                    assert_eq!(ok, want_ok, "{l:?} len {len}");
                    assert_eq!(out, &want[..], "{l:?} len {len} stream {stream}");
                }
            }
        }
    }
}
