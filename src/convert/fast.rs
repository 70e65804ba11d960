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
//!   source has), then a range check (`fast/float_to_int.rs`).
//! - Integer to integer: a range check (and the wrap is the low bits) (`fast/int_to_int.rs`).
//! - `f64 -> f32`, and integers to `f32`/`f64`, nearest-even: the hardware conversion,
//!   which is correctly rounded; NaNs are canonicalized and overflow is detected
//!   (`fast/float_narrow.rs`, `fast/int_to_float.rs`).
//! - `f32`/`f64` to any narrower signed float format (float16, bfloat16, float8/6/4, and
//!   `f64 -> f32` in the other rounding modes), every rounding mode: integer arithmetic on
//!   the bits ([`super::narrow`], called from `fast/float_narrow.rs`).
//! - A small float (float16, bfloat16, float8) to `f32`/`f64`: exact (`fast/widen.rs`);
//!   float16 and bfloat16 to integers: at AVX-512 in registers into 8-, 16- and 32-bit
//!   integers (`arch::HalfIntCast`), else widened to `f32` a block at a time, then the
//!   `f32 -> integer` kernels (`fast/widen.rs`).
//! - `f32 -> f64` and `f32`/`f64` to themselves: exact, NaNs canonicalized
//!   (`fast/float_float.rs`).
//! - Integers to the narrower float formats, every rounding mode: exact `f64` words, then
//!   the `f64` narrowing kernels (`fast/int_to_float.rs`); to float16 and bfloat16,
//!   nearest-even, in registers where the hardware converts (16/32-bit integers by F16C
//!   through `f32`, 64-bit ones by AVX-512 DQ through `f64` rounded to odd).
//!
//! This file holds what every family shares: the choice ([`select`]), the entry ([`run`])
//! and the per-width traits [`Src`]/[`Dst`] with the impls that route each width to its
//! family (the `u8`/`u16` sources, whose only kernel is widening, are in `fast/widen.rs`).

#[cfg(test)]
mod check;
mod float_float;
mod float_narrow;
mod float_to_int;
mod int_to_float;
mod int_to_int;
mod widen;

pub use float_to_int::Affine;

use crate::convert::blocks::FAST_BLOCK;
use crate::number::layout::IntLayout;
use crate::number::layout::{FloatLayout, Format};
use crate::number::storage::Word;
use crate::number::{CastOptions, OutOfRange, Rounding};
use float_float::float_float;
use float_narrow::{f64_to_f32_blocks, narrow};
use float_to_int::{affine, as_f64, float_to_int, float_to_narrow_int};
use int_to_float::{int_to_hw_float, int_to_narrow};
use int_to_int::{int_to_int, int_to_int_wide};
use widen::widens;

/// The fast path of one (source, target, options) triple, chosen once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fast {
    /// None applies: the reference path converts every element.
    None,
    /// `f32`/`f64` (by source word width) to an integer format.
    FloatToInt(IntLayout),
    /// `f64 -> f32`, nearest-even.
    F64ToF32,
    /// `f64 -> int32`, nearest-even (any rule: they agree on what the streamed kernel
    /// stores): streamed from the conversion where the output is too large for the cache,
    /// else as [`Fast::FloatToInt`].
    F64ToI32(IntLayout),
    /// `f32`/`f64` (by source word width) to a narrower signed float format.
    Narrow(FloatLayout),
    /// Integer to integer.
    IntToInt(IntLayout, IntLayout),
    /// Integer to `f32`/`f64` (by target word width), nearest-even.
    IntToFloat(IntLayout),
    /// A 16-bit IEEE-like float (float16, bfloat16) to `f32`/`f64` (by target word width):
    /// exact, so every rounding mode and range rule gives the same.
    Widen(FloatLayout),
    /// `f32 -> f64`, `f32 -> f32`, `f64 -> f64` (by word widths): exact, NaNs canonicalized,
    /// so every rounding mode and range rule gives the same.
    FloatFloat,
    /// Integer (16 to 64 bits) to a float format narrower than `f32` (or `f32` in a
    /// directed mode), stored in at most 32 bits: by `f64` words, every mode.
    IntToNarrow(IntLayout, FloatLayout),
    /// A 16-bit IEEE-like float (float16, bfloat16) to an integer format: widened to `f32`
    /// (exact) in registers at AVX-512 (8-, 16- and 32-bit integers), else a block at a
    /// time, then `f32`'s own float -> integer kernels.
    SmallFloatToInt(FloatLayout, IntLayout),
}

impl Fast {
    /// The integer layout of a float -> integer path ([`Fast::FloatToInt`] and
    /// [`Fast::F64ToI32`], which the fused and `scalar_map` kernels take alike).
    pub(crate) fn float_to_int(self) -> Option<IntLayout> {
        match self {
            Fast::FloatToInt(l) | Fast::F64ToI32(l) => Some(l),
            _ => None,
        }
    }

    /// The integer layout of a path that maps NaN to a code itself (a `scalar_map` whose
    /// only key is NaN): float -> integer from `f32`/`f64` and from 16-bit floats, into at
    /// most 32 bits.
    pub(crate) fn maps_nan(self) -> Option<IntLayout> {
        match self {
            Fast::FloatToInt(l) | Fast::F64ToI32(l) | Fast::SmallFloatToInt(_, l) => {
                Some(l).filter(|l| l.bits <= 32)
            }
            _ => None,
        }
    }
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
                // bfloat16 -> `f64` stays on its table: in cache 0.30 ns an element, the
                // widening kernel (AVX2, four `f64` a vector) 0.46.
                Some(true) if sl == crate::number::layout::BFLOAT16 => Fast::None,
                Some(d_f64) if dst_word == if d_f64 { 64 } else { 32 } => Fast::Widen(sl),
                _ => Fast::None,
            }
        }
        // Widened to `f32` first, exactly (see `widens`), so every mode and rule gives what
        // `f32 -> l` gives; into 64-bit words only the 64-bit formats, as `FloatToInt`.
        (Format::Float(sl), Format::Int(l))
            if src_word == 16 && widens(sl) && (dst_word != 64 || l.bits == 64) =>
        {
            Fast::SmallFloatToInt(sl, l)
        }
        (Format::Float(_), _) => {
            let Some(s_f64) = src.hardware_float() else {
                return Fast::None;
            };
            if src_word != if s_f64 { 64 } else { 32 } {
                return Fast::None;
            }
            match dst {
                // Into 64-bit words only the 64-bit formats (`float_to_int`).
                Format::Int(l) if dst_word == 64 && l.bits != 64 => Fast::None,
                Format::Int(l) if nearest && s_f64 && l.signed && l.bits == 32 => Fast::F64ToI32(l),
                Format::Int(l) => Fast::FloatToInt(l),
                Format::Float(l) => {
                    if nearest && s_f64 && dst.hardware_float() == Some(false) && dst_word == 32 {
                        Fast::F64ToF32
                    } else if super::narrow::applies(l, s_f64) && dst_word <= 32 {
                        Fast::Narrow(l)
                    } else if let Some(d_f64) = dst.hardware_float()
                        && dst_word == if d_f64 { 64 } else { 32 }
                        && (d_f64 || !s_f64)
                    {
                        // `f32 -> f64` and the same type: exact (NaNs canonicalized).
                        Fast::FloatFloat
                    } else {
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
            if dl.bits != dst_word {
                // Targets narrower than their word (`int4` from `int16`: rare) are left to
                // the reference path.
                Fast::None
            } else {
                Fast::IntToInt(sl, dl)
            }
        }
        (Format::Int(sl), Format::Float(dl)) => match dst.hardware_float() {
            Some(d_f64) if nearest && dst_word == if d_f64 { 64 } else { 32 } => {
                Fast::IntToFloat(sl)
            }
            // The narrower formats (float16, bfloat16, float8, …) from 16 to 64 bits (8-bit
            // sources go by their 256-entry table) in every mode, through `f64`: exact for
            // the values (and stand-ins) `int_to_narrow` makes when the format has at most
            // 41 significant bits, which `dst_word <= 32` ensures.
            _ if sl.bits >= 16 && dst_word <= 32 && super::narrow::applies(dl, true) => {
                Fast::IntToNarrow(sl, dl)
            }
            _ => Fast::None,
        },
    }
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
        Fast::F64ToI32(l) => {
            if let (Some(s), Some(d)) = (u64::of(SW::words(src)), u32::of_mut(DW::words_mut(dst))) {
                return f64_to_i32(s, d, opts, l);
            }
            SW::float_to_int(src, dst, opts, l)
        }
        Fast::F64ToF32 => {
            let clamp = opts.out_of_range == OutOfRange::Clamp;
            if let (Some(s), Some(d)) = (u64::of(SW::words(src)), u32::of_mut(DW::words_mut(dst))) {
                return f64_to_f32(s, d, clamp);
            }
            SW::f64_to_f32(src, dst, clamp)
        }
        Fast::Narrow(l) => SW::narrow(src, dst, opts.rounding, opts.out_of_range, l),
        Fast::IntToInt(sl, dl) => int_to_int(src, dst, opts, sl, dl),
        Fast::IntToFloat(sl) => DW::from_int(src, dst, sl),
        Fast::Widen(sl) => SW::widen(src, dst, sl),
        Fast::FloatFloat => float_float(SW::words(src), DW::words_mut(dst)),
        Fast::IntToNarrow(sl, dl) => {
            DW::from_int_narrow(src, dst, sl, opts.rounding, opts.out_of_range, dl)
        }
        Fast::SmallFloatToInt(sl, l) => SW::small_float_to_int(src, dst, opts, sl, l, None),
    }
}

/// `f64 -> i32` nearest-even: streamed where the output is to stream ([`streamed_or`]).
/// One function for every width pair's [`run`].
#[inline(never)]
fn f64_to_i32(src: &[u64], dst: &mut [u32], opts: CastOptions, l: IntLayout) -> usize {
    streamed_or(src, dst, crate::arch::f64_to_i32_streamed, |s, d| {
        u64::float_to_int(s, d, opts, l)
    })
}

/// `f64 -> f32` nearest-even: streamed where the output is to stream ([`streamed_or`]).
#[inline(never)]
fn f64_to_f32(src: &[u64], dst: &mut [u32], clamp: bool) -> usize {
    streamed_or(src, dst, crate::arch::f64_to_f32_streamed, |s, d| {
        u64::f64_to_f32(s, d, clamp)
    })
}

/// `stream` (a kernel that streams its output out, `None` when it does not: a small output
/// or no AVX-512) over `src` and `dst`, and where it stops (an element it leaves to the
/// loops), one block of [`FAST_BLOCK`] by `plain`, the fast path's own loops, before
/// streaming on; `plain` alone when `stream` does not stream. Returns how many elements
/// are done, a prefix, as [`run`]: up to the first block `plain` declines, which the
/// reference path redoes, naming the failing element.
#[inline(always)]
fn streamed_or(
    src: &[u64],
    dst: &mut [u32],
    stream: fn(&[u64], &mut [u32]) -> Option<usize>,
    plain: impl Fn(&[u64], &mut [u32]) -> usize,
) -> usize {
    let n = src.len().min(dst.len());
    let mut at = 0;
    while at < n {
        let Some(done) = stream(&src[at..n], &mut dst[at..n]) else {
            return at + plain(&src[at..n], &mut dst[at..n]);
        };
        at += done;
        if at == n {
            break;
        }
        let end = (at + FAST_BLOCK).min(n);
        let done = plain(&src[at..end], &mut dst[at..end]);
        at += done;
        if at < end {
            break;
        }
    }
    at
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
    /// A 16-bit float to an integer format; with `nan_code`, every NaN written as that
    /// code (a `scalar_map` whose only key is NaN), for targets of at most 32 bits.
    fn small_float_to_int<DW: Dst>(
        _: &[Self],
        _: &mut [DW],
        _: CastOptions,
        _: FloatLayout,
        _: IntLayout,
        _nan_code: Option<u64>,
    ) -> usize {
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
    /// An integer to a float format narrower than `f32` (or `f32` in a directed mode) in
    /// these words.
    fn from_int_narrow<SW: Word>(
        _: &[SW],
        _: &mut [Self],
        _: IntLayout,
        _: Rounding,
        _: OutOfRange,
        _: FloatLayout,
    ) -> usize {
        0
    }
    /// `f32`/`f64` (`SW`) to a 64-bit integer format in these words (`u64` only).
    fn from_float_wide<SW: Word>(_: &[SW], _: &mut [Self], _: CastOptions, _: IntLayout) -> usize {
        0
    }
    /// The number `value` gives for each `SW` word (an `f32`/`f64`, or `scale_offset`'s
    /// result on it) to an integer format of at most 32 bits in these words (`u8`, `u16`,
    /// `u32` only: see `float_to_int::f2i_narrow`); with `NAN_MAP`, NaN to `nan_code`.
    fn from_float_narrow<SW: Word, const NAN_MAP: bool, const WIDE: bool>(
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

/// The source methods of `f32`/`f64` words (and `int32`/`uint32`/`int64`).
macro_rules! float_src {
    ($t:ty, { $($extra:tt)* }) => {
        impl Src for $t {
            fn float_to_int<DW: Dst>(src: &[Self], dst: &mut [DW], opts: CastOptions, l: IntLayout) -> usize {
                // Into a target as wide as its 8- or 16-bit word: `arch::SmallIntCast`
                // (through `from_float_narrow`) instead, faster at memory speed (see
                // `float_to_int::float_to_narrow_int`).
                let small = l.bits == DW::BITS && DW::BITS <= 16;
                if l.bits <= 32 && opts.rounding == Rounding::NearestEven && crate::arch::has_avx512() && !small {
                    // The fused chain's nearest-even loops have an AVX-512 build, which
                    // the plain cast's do not (one build fewer per width pair): the plain
                    // cast is that loop on the identity affine step `(x - 0) * 1`, which
                    // is `x` for every `x`. No loop of its own, two more instructions a
                    // vector of 8, and half the AVX2 loop's instructions per element
                    // (`f64 -> u8` under clamp 2.54 -> 1.38, `f64 -> i32` checked
                    // 3.05 -> 1.75). A `scalar_map` has no such build (no fused chain
                    // has a map): it stays on its AVX2 loop.
                    return Self::affine_to_int(src, dst, opts, l, Affine::identity::<Self>());
                }
                if l.bits <= 32 {
                    DW::from_float_narrow::<Self, false, false>(src, dst, opts, l, as_f64::<Self>, 0)
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
                DW::from_float_narrow::<Self, true, false>(src, dst, opts, l, as_f64::<Self>, nan_code)
            }
            fn affine_to_int<DW: Dst>(
                src: &[Self],
                dst: &mut [DW],
                opts: CastOptions,
                l: IntLayout,
                a: Affine,
            ) -> usize {
                let value = affine::<Self>(a);
                // The fused chain's loop also has an AVX-512 build (see
                // `float_to_int::float_to_narrow_int`).
                DW::from_float_narrow::<Self, false, true>(src, dst, opts, l, value, 0)
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
float_src! { u32, {} }
float_src! { u64, {
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
            fn from_int_narrow<SW: Word>(
                src: &[SW],
                dst: &mut [Self],
                sl: IntLayout,
                mode: Rounding,
                oor: OutOfRange,
                l: FloatLayout,
            ) -> usize {
                int_to_narrow(src, dst, sl, mode, oor, l)
            }
            fn from_float_narrow<SW: Word, const NAN_MAP: bool, const WIDE: bool>(
                src: &[SW],
                dst: &mut [Self],
                opts: CastOptions,
                l: IntLayout,
                value: impl Fn(SW) -> f64 + Copy,
                nan_code: u64,
            ) -> usize {
                float_to_narrow_int::<SW, Self, NAN_MAP, WIDE>(src, dst, opts, l, value, nan_code)
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
        if let (true, Some(s)) = (sl.signed && sl.bits == 32, u32::of(SW::words(src)))
            && crate::arch::i32_to_f32_streamed(s, dst) {
                return s.len().min(dst.len());
            }
        if !int_to_hw_float(src, dst, sl) {
            return 0;
        }
        src.len().min(dst.len())
    }
} }

impl Dst for u64 {
    fn from_int<SW: Word>(src: &[SW], dst: &mut [Self], sl: IntLayout) -> usize {
        // An integer of at most 32 bits (filling its words) into float64, exact, with an
        // output too large for the cache: streamed out.
        if const { SW::BITS <= 32 }
            && sl.bits == SW::BITS
            && crate::arch::ints_to_f64_streamed(SW::words(src), dst, sl.signed)
        {
            return src.len().min(dst.len());
        }
        if !int_to_hw_float(src, dst, sl) {
            return 0;
        }
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

// An `OutOfRange` as a const parameter (an enum cannot be one on stable Rust), for the
// float -> integer and integer -> integer kernels alike.
const OOR_ERROR: u8 = 0;
const OOR_CLAMP: u8 = 1;
const OOR_WRAP: u8 = 2;

#[cfg(test)]
mod streamed_tests {
    //! The streamed `f64 -> i32` and `f64 -> f32` paths ([`streamed_or`]), which run only
    //! on outputs of at least `arch::STREAM_MIN` bytes (beyond the cache with their input):
    //! every level gives the words of small slices (which never stream), and an error names
    //! the element the reference path names, wherever it lies in the streamed blocks.
    use crate::arch::STREAM_MIN;
    use crate::cast_slice;
    use crate::convert::ElementFailure;
    use crate::isa::{Isa, with_max_isa};
    use crate::number::{CastOptions, OutOfRange, Rounding};

    /// Elements of a streamed `f64 -> 4-byte` cast: 16 MiB of output and a few blocks more.
    const N: usize = STREAM_MIN / 4 + 3 * 1024 + 77;

    /// `cast_slice` over `src[at..]` into `dst[at..]` at every level, each against the
    /// cast of 1000-element slices (which never stream): the same words, or the same
    /// error and the same words before it.
    fn same_as_small_slices<D: crate::dtype::Real + std::fmt::Debug>(
        src: &[f64],
        at: usize,
        opts: CastOptions,
        ctx: &str,
    ) -> Result<(), ElementFailure> {
        let (src, n) = (&src[at..], src.len() - at);
        let zero = D::from_bits(0);
        let mut want = vec![zero; n];
        let mut expected = Ok(());
        for (k, (s, d)) in src.chunks(1000).zip(want.chunks_mut(1000)).enumerate() {
            if let Err(mut e) = cast_slice(s, d, opts) {
                e.index += 1000 * k;
                expected = Err(e);
                break;
            }
        }
        let bits = |x: &D| x.to_bits();
        for level in Isa::available() {
            let mut got = vec![zero; n + at];
            let r = with_max_isa(level, || cast_slice(src, &mut got[at..], opts));
            assert_eq!(r, expected, "{ctx} {level:?}");
            let upto = expected.map_or_else(|e| e.index, |()| n);
            let (g, w) = (&got[at..at + upto], &want[..upto]);
            if let Some(i) = (0..upto).find(|&i| bits(&g[i]) != bits(&w[i])) {
                panic!("{ctx} {level:?} at {i}: {:?} != {:?}", g[i], w[i]);
            }
        }
        expected
    }

    /// In-range values: halves (ties both ways), negatives, -0.0, and every so often
    /// `i32::MIN` and values that round to it or to `i32::MAX`, at which the streamed
    /// kernel stops for the loops to decide.
    fn int_sources() -> Vec<f64> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..N)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match i % 4099 {
                    0 => i32::MIN as f64,
                    1 => -2_147_483_648.4,
                    2 => 2_147_483_647.4,
                    3 => -0.0,
                    _ => ((x >> 22) as i64 - (1 << 41)) as f64 / 2048.0,
                }
            })
            .collect()
    }

    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs")]
    fn f64_to_i32_streamed_is_the_small_slices() {
        let src = int_sources();
        for oor in [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap] {
            let opts = CastOptions::new(Rounding::NearestEven, oor);
            for at in [0, 3] {
                let ctx = format!("{oor:?} from {at}");
                assert!(same_as_small_slices::<i32>(&src, at, opts, &ctx).is_ok());
            }
        }
    }

    /// Integers of 8, 16 and 32 bits, signed and not, into float64 over an output that
    /// streams (`arch::ints_to_f64_streamed`): at every level, from an aligned and an
    /// unaligned start, the words of small slices (which never stream).
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs")]
    fn ints_to_f64_streamed_is_the_small_slices() {
        fn check<S: crate::dtype::Real + Copy>(from: impl Fn(u64) -> S, name: &str) {
            let n = STREAM_MIN / 8 + 3 * 1024 + 77;
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let src: Vec<S> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    from(x)
                })
                .collect();
            let opts = CastOptions::default();
            for at in [0, 3] {
                let mut want = vec![0f64; n - at];
                for (s, d) in src[at..].chunks(1000).zip(want.chunks_mut(1000)) {
                    cast_slice(s, d, opts).unwrap();
                }
                for level in Isa::available() {
                    let mut got = vec![0f64; n];
                    with_max_isa(level, || cast_slice(&src[at..], &mut got[at..], opts)).unwrap();
                    let same = got[at..]
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g.to_bits() == w.to_bits());
                    assert!(same, "{name} from {at} {level:?}");
                }
            }
        }
        check(|x| x as i8, "i8");
        check(|x| x as u8, "u8");
        check(|x| x as i16, "i16");
        check(|x| x as u16, "u16");
        check(|x| x as i32, "i32");
        check(|x| x as u32, "u32");
    }

    /// A failing element (out of range after rounding, or NaN) beyond the first blocks: in
    /// a streamed vector's first and last lane, right after a stop (in the block the loops
    /// then take), at that block's last element and the first after it, in the aligned
    /// body's tail; the error names it, from an aligned and an unaligned start.
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs")]
    fn f64_to_i32_streamed_errors_name_the_element() {
        let clean = int_sources();
        // `i32::MIN` (a stop) lies at multiples of 4099.
        let stop = 4 * 4099;
        let places = [
            5000,
            5000 + 7,
            stop + 1,
            stop + 1023,
            stop + 1024,
            stop + 1025,
            N - 5,
            N - 1,
        ];
        let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Error);
        for bad in [2_147_483_647.5, f64::NAN, -1e300] {
            for &p in &places {
                let mut src = clean.clone();
                src[p] = bad;
                for at in [0, 1] {
                    let ctx = format!("{bad} at {p} from {at}");
                    let e = same_as_small_slices::<i32>(&src, at, opts, &ctx).unwrap_err();
                    assert_eq!(e.index, p - at, "{ctx}");
                }
            }
        }
    }

    /// `f64 -> f32`: NaN (canonicalized, payloads dropped), ±Inf, overflows (clamped or an error), values
    /// that round to `f32::MAX` or to subnormals, among in-range values; and the error's
    /// element wherever it lies.
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs")]
    fn f64_to_f32_streamed_is_the_small_slices() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let specials = [
            f64::NAN,
            // NaNs with payloads, which the hardware keeps (the high ones).
            f64::from_bits(0xfff8_0000_dead_beef),
            f64::from_bits(0x7ff4_0000_0000_0001),
            f64::INFINITY,
            f64::NEG_INFINITY,
            3.5e38,
            f32::MAX as f64,
            1.2e-45,
            -7e-46,
            -0.0,
        ];
        let src: Vec<f64> = (0..N)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 3001 == 0 {
                    specials[(i / 3001) % specials.len()]
                } else {
                    f64::from_bits((x >> 2) | 0x3000_0000_0000_0000)
                        * if x & 1 == 0 { 1.0 } else { -1.0 }
                }
            })
            .collect();
        let clamp = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
        for at in [0, 3] {
            assert!(same_as_small_slices::<f32>(&src, at, clamp, "clamp").is_ok());
        }
        // Under the error rule the first overflow fails: planted beyond the first
        // blocks, before any special.
        let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Error);
        let mut clean = src.clone();
        clean.iter_mut().step_by(3001).for_each(|v| *v = 1.5);
        // NaN and ±Inf convert under the error rule too: a stop, not an error.
        for (k, v) in [f64::NAN, f64::INFINITY, 1e-300].into_iter().enumerate() {
            clean[4099 * (k + 1)] = v;
        }
        assert!(same_as_small_slices::<f32>(&clean, 1, opts, "error, clean").is_ok());
        for p in [5000, 5007, 4099 + 1, 4099 + 1024, 4099 + 1025, N - 1] {
            let mut src = clean.clone();
            src[p] = -1e39;
            let e = same_as_small_slices::<f32>(&src, 0, opts, "error").unwrap_err();
            assert_eq!(e.index, p, "overflow at {p}");
        }
    }
}
