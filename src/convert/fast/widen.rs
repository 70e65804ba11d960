//! Widening a small float that `f32` holds exactly (float16, bfloat16, float8; see
//! [`widens`]) to `f32`/`f64`: exact, so one kernel serves every rounding mode and range
//! rule. The `u8`/`u16` source words have no other kernel, so their [`Src`] impl is here,
//! with the choice between F16C, the AVX2 byte twin and the portable loop.

use super::{Dst, Src};
use crate::convert::blocks::{FAST_BLOCK, by_blocks};
use crate::number::CastOptions;
use crate::number::layout::{BFLOAT16, FLOAT16, FloatLayout, IntLayout};
use crate::number::storage::{Word, Words};

/// Whether [`widen`] is exact for sources of layout `l`: IEEE-like (signed, subnormals,
/// ±Inf, IEEE NaNs), every value of it an `f32` (its exponent range and precision within
/// `f32`'s, subnormals included), and not `f32`/`f64` themselves.
pub(super) fn widens(l: FloatLayout) -> bool {
    use crate::number::layout::NanEncoding;
    // The largest finite exponent: the all-ones field is ±Inf and NaN in IEEE formats (so
    // bfloat16's largest, `2^127 (2 - 2^-7)`, is an `f32`), finite in the `fn` ones.
    let max_exp = (1i32 << l.exponent_bits) - 1 - l.bias - i32::from(l.inf);
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

/// The source methods of 8- and 16-bit words: widening a small float.
macro_rules! small_src {
    ($($t:ty),*) => {$(
        impl Src for $t {
            fn widen<DW: Dst>(src: &[Self], dst: &mut [DW], l: FloatLayout) -> usize {
                if DW::BITS < 32 {
                    return 0;
                }
                // float16 to `f32` by F16C (`vcvtph2ps`) where the CPU has it.
                let hw = if l == crate::number::layout::FLOAT16 {
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
            fn small_float_to_int<DW: Dst>(
                src: &[Self],
                dst: &mut [DW],
                opts: CastOptions,
                sl: FloatLayout,
                l: IntLayout,
                nan_code: Option<u64>,
            ) -> usize {
                // `select` routes only 16-bit sources here: no instance for bytes.
                if const { Self::BITS != 16 } {
                    return 0;
                }
                to_int_by_f32(src, dst, opts, sl, l, nan_code)
            }
        }
    )*};
}
small_src!(u8, u16);

/// A 16-bit float of layout `sl` (see [`widens`]) to the integer format `l`, any mode and
/// rule: each block widened to `f32` bits on the stack (exact: F16C's `vcvtph2ps` for
/// float16, a shift for bfloat16, [`widen`] for the others), then converted by the very
/// kernels `f32 -> l` runs (`Src::float_to_int` of `u32` words). The value being the same,
/// so are the rounding, the range test and what the kernels decline (NaN, ±Inf, out of
/// range under the error rule, ...: those blocks go to the reference path). No kernel of
/// its own per target: one widening per level, and a 4 KiB buffer in the L1 cache between
/// it and the conversion, where a 65536-entry table took a scalar load per element (and
/// its 128-512 KiB did not stay in the L1 cache). At AVX-512, float16 and bfloat16 into
/// 8-, 16- and 32-bit integers skip the buffer: `arch::HalfIntCast` widens and converts in
/// registers, and only the blocks it declines take the buffer. With `nan_code` (a
/// `scalar_map` whose only key is NaN; targets of at most 32 bits), both write every NaN as
/// that code: the in-register kernel by a masked move, the buffer by `f32`'s NaN kernel.
/// Returns how many elements are done, a prefix (up to the first declined block).
#[inline(always)]
fn to_int_by_f32<SW: Word, DW: Dst>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    sl: FloatLayout,
    l: IntLayout,
    nan_code: Option<u64>,
) -> usize {
    let mut buf = [0u32; FAST_BLOCK];
    let hw = if sl == FLOAT16 {
        crate::arch::F16c::detect()
    } else {
        None
    };
    let bf16 = sl == BFLOAT16;
    let p = widen_plan(sl);
    let mut block = |s: &[SW], d: &mut [DW]| {
        let b = &mut buf[..s.len().min(d.len())];
        let w = &mut *b;
        // Whether every element is widened; with `nan_kept`, a NaN among them is written
        // as an `f32` NaN too (F16C's widening reports it; bfloat16's is the NaN's own top
        // half), which a NaN-only map's kernel maps.
        let (widened, nan_kept) = match (hw, u16::of(SW::words(s))) {
            (Some(hw), Some(s16)) => (hw.f32_from_f16(s16, w), true),
            // bfloat16 is the top half of an `f32`, NaNs included (which the conversion
            // below declines).
            _ if bf16 => (
                crate::arch::vectorized(
                    #[inline(always)]
                    move || {
                        for (x, y) in s.iter().zip(w.iter_mut()) {
                            *y = (x.to_u64() as u32) << 16;
                        }
                        true
                    },
                ),
                true,
            ),
            _ => (
                crate::arch::vectorized(
                    #[inline(always)]
                    move || widen(s, w, p),
                ),
                false,
            ),
        };
        if !(widened || nan_kept && nan_code.is_some()) {
            return false;
        }
        // Under a NaN-only `scalar_map`, `f32`'s NaN kernel maps the NaNs.
        let done = match nan_code {
            Some(code) if const { DW::BITS <= 32 } => {
                <u32 as Src>::float_to_int_nan(b, d, opts, l, code)
            }
            Some(_) => 0,
            None => <u32 as Src>::float_to_int(b, d, opts, l),
        };
        done == b.len()
    };
    // float16/bfloat16 into 8-, 16- and 32-bit integers as wide as their word: at the
    // AVX-512 level one kernel widens and converts in registers (`arch::HalfIntCast`), and
    // a block it declines (NaN without a map, ±Inf, out of range, a value it would clamp
    // into 32 bits) goes by the buffer, which decides. A 16- or 32-bit output to stream
    // (`arch::streams_from`) is streamed.
    let nan = nan_code.map(|c| crate::number::int::int_value(&l, c) as i64);
    if let Some(cast) = half_int_cast::<DW>(opts, bf16, hw.is_some() || bf16, l, nan) {
        let mut run = |s: &[SW], d: &mut [DW], stream: bool| match u16::of(SW::words(s)) {
            Some(s16) => cast.run(s16, d, stream) || block(s, d),
            None => block(s, d),
        };
        return if DW::BITS >= 16 {
            by_blocks_streamed(src, dst, run)
        } else {
            by_blocks(src, dst, |s, d| run(s, d, false))
        };
    }
    by_blocks(src, dst, block)
}

/// The in-register kernel of a 16-bit float (bfloat16 when `bf16`, else float16, which
/// `hw` says the CPU widens) to `l` in `DW` words under `opts`, NaN written as `nan` when
/// given, if there is one.
#[inline(always)]
fn half_int_cast<DW: Word>(
    opts: CastOptions,
    bf16: bool,
    hw: bool,
    l: IntLayout,
    nan: Option<i64>,
) -> Option<crate::arch::HalfIntCast<DW>> {
    use crate::arch::{HalfIntCast, HalfIntPlan};
    if !hw || l.bits != DW::BITS || DW::BITS > 32 {
        return None;
    }
    HalfIntCast::new(HalfIntPlan {
        mode: opts.rounding,
        rule: opts.out_of_range,
        bfloat16: bf16,
        lo: l.min() as i64,
        hi: l.max() as i64,
        nan,
    })
}

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
/// (`arch::streams_from`) goes by plain stores up to its first 64-byte boundary, then with
/// `stream` set (every block of `by_blocks` but the last starts a multiple of 64 elements
/// further, so they stay aligned), then the fence.
#[inline(always)]
pub(super) fn by_blocks_streamed<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    mut kernel: impl FnMut(&[SW], &mut [DW], bool) -> bool,
) -> usize {
    let n = src.len().min(dst.len());
    // 64: the AVX-512 kernels stream whole cache lines (AVX2's 32-byte vectors need 32).
    // An output not to stream is all head: one block loop of plain stores serves both
    // cases (a third copy of `by_blocks` per instance otherwise).
    let head = if crate::arch::streams_from(src, dst) {
        dst.as_ptr().align_offset(64).min(n)
    } else {
        n
    };
    let done = by_blocks(
        &src[..head],
        &mut dst[..head],
        #[inline(always)]
        |s, d| kernel(s, d, false),
    );
    if done < head || head == n {
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

#[cfg(test)]
mod tests {
    use crate::convert::cast_slice_reference;
    use crate::dtype::{DTypeId, Real};
    use crate::number::layout::Format;
    use crate::number::{CastOptions, OutOfRange, Rounding};

    const MODES: [Rounding; 5] = Rounding::ALL;
    const RULES: [OutOfRange; 3] = [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap];

    /// `src` cast to `D` at every level (and from unaligned starts, into unaligned
    /// outputs, at odd lengths) against the reference path, in every mode and rule.
    fn every_level<S: Real, D: Real>(src: &[S]) {
        let n = src.len();
        let cuts = [(0, 0, n), (1, 3, n - 1), (5, 1, n.min(77) - 6)];
        crate::convert::fast::check::every_level::<S, D>(src, &cuts, &MODES, &RULES);
    }

    /// Every code of `S` (a 16-bit float) to every integer type: all of them in code
    /// order (NaNs, ±Inf and the out-of-range values among them), and the codes whose
    /// value `D` holds (so that whole blocks are fast, under the error rule too) with a
    /// code that fails planted near the end.
    fn all_codes<S: Real + Copy, D: Real>() {
        let codes: Vec<S> = (0..=u16::MAX).map(|c| S::from_bits(u64::from(c))).collect();
        every_level::<S, D>(&codes);
        let opts = CastOptions::new(Rounding::TowardsZero, OutOfRange::Error);
        let mut fits: Vec<S> = codes
            .iter()
            .copied()
            .filter(|c| cast_slice_reference(&[*c], &mut [D::default()], opts).is_ok())
            .collect();
        every_level::<S, D>(&fits);
        // An infinity, which fails under every rule: the error names it.
        let inf = codes.iter().copied().find(|c| {
            let v = c.to_bits() as u16;
            v == 0x7c00 || v == 0x7f80
        });
        let len = fits.len();
        fits[len - 30] = inf.unwrap_or(fits[0]);
        every_level::<S, D>(&fits);
    }

    #[test]
    fn float16_to_every_integer_matches_the_reference() {
        all_codes::<half::f16, i8>();
        all_codes::<half::f16, u8>();
        all_codes::<half::f16, i16>();
        all_codes::<half::f16, u16>();
        all_codes::<half::f16, i32>();
        all_codes::<half::f16, u32>();
        all_codes::<half::f16, i64>();
        all_codes::<half::f16, u64>();
    }

    #[test]
    fn bfloat16_to_every_integer_matches_the_reference() {
        all_codes::<half::bf16, i8>();
        all_codes::<half::bf16, u8>();
        all_codes::<half::bf16, i16>();
        all_codes::<half::bf16, u16>();
        all_codes::<half::bf16, i32>();
        all_codes::<half::bf16, u32>();
        all_codes::<half::bf16, i64>();
        all_codes::<half::bf16, u64>();
    }

    /// The plan of `arch::HalfIntCast` for `S -> D` under `opts` (`D` an integer type
    /// filling its word), as the route builds it.
    fn half_plan<S: Real, D: Real>(opts: CastOptions) -> crate::arch::HalfIntPlan {
        use crate::arch::HalfIntPlan;
        let Format::Int(l) = D::FORMAT else {
            panic!("{} is no integer", D::NAME);
        };
        HalfIntPlan {
            mode: opts.rounding,
            rule: opts.out_of_range,
            bfloat16: S::NAME == "bfloat16",
            lo: l.min() as i64,
            hi: l.max() as i64,
            nan: None,
        }
    }

    /// `arch::HalfIntCast` itself, every kernel (float16 and bfloat16 into 8-, 16- and
    /// 32-bit integers, every mode and rule) on every code: over runs of every code in
    /// code order of odd lengths, from unaligned starts into unaligned outputs, streamed
    /// or not, and with the output a little after the input modulo 4 KiB (the kernels'
    /// look-ahead), it accepts a run exactly when each of its codes is one it takes
    /// (see `accepts`), and then writes the reference path's bits. At every level: below
    /// AVX-512 there is no kernel.
    #[test]
    fn half_int_kernels_match_the_reference_on_every_code() {
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, || {
                half_int_kernels::<half::f16>(level);
                half_int_kernels::<half::bf16>(level);
            });
        }
    }

    /// Each kernel plain, and with NaN written as 7 (a `scalar_map` whose only key is NaN):
    /// then it takes every NaN too.
    fn half_int_kernels<S: Real + Copy>(level: crate::isa::Isa) {
        for nan in [None, Some(7)] {
            half_int_kernel::<S, i8>(level, nan);
            half_int_kernel::<S, u8>(level, nan);
            half_int_kernel::<S, i16>(level, nan);
            half_int_kernel::<S, u16>(level, nan);
            half_int_kernel::<S, i32>(level, nan);
            half_int_kernel::<S, u32>(level, nan);
        }
    }

    /// Whether `code` is a NaN of the 16-bit float `S`.
    fn is_nan<S: Real + Copy>(code: S) -> bool {
        let exp = if S::NAME == "bfloat16" {
            0x7f80
        } else {
            0x7c00
        };
        code.to_bits() as u32 & 0x7fff > exp
    }

    /// Whether the kernel of `S -> D` under `opts` takes `code` (else it declines its
    /// run): under clamp into 8 or 16 bits every finite value, into `u32` also those
    /// whose rounding is below 2^31; under the check rule into 8 or 16 bits or `u32`,
    /// those the reference converts; else (wrap, `i32`) those whose rounding is an `i32`
    /// other than `i32::MIN`.
    fn accepts<S: Real + Copy, D: Real>(code: S, opts: CastOptions) -> bool {
        let check = CastOptions::new(opts.rounding, OutOfRange::Error);
        let u32 = D::NAME == "uint32";
        let v = code.to_bits() as u32;
        let exp = if S::NAME == "bfloat16" {
            0x7f80
        } else {
            0x7c00
        };
        let finite = v & exp != exp;
        let mut w = [0i32];
        let in_i32 = cast_slice_reference(&[code], &mut w, check).is_ok() && w[0] != i32::MIN;
        match opts.out_of_range {
            OutOfRange::Clamp if size_of::<D>() < 4 => finite,
            // Negative: clamped to 0 before the conversion.
            OutOfRange::Clamp if u32 => finite && (in_i32 || v & 0x8000 != 0),
            OutOfRange::Error if size_of::<D>() < 4 || u32 => {
                cast_slice_reference(&[code], &mut [D::default()], check).is_ok()
            }
            _ => in_i32,
        }
    }

    fn half_int_kernel<S: Real + Copy, D: Real>(level: crate::isa::Isa, nan: Option<i64>) {
        let codes: Vec<u16> = (0..=u16::MAX).collect();
        let typed: Vec<S> = codes.iter().map(|&c| S::from_bits(u64::from(c))).collect();
        use crate::number::storage::Word;
        // Room for the outputs at any offset below 4 KiB (and 64-byte alignment) after the
        // input's address modulo 4 KiB.
        let mut out = Vec::new();
        out.resize(65536 + 3 * 4096, D::Word::from_u64(0));
        let size = size_of::<D>();
        for mode in MODES {
            for oor in RULES {
                let opts = CastOptions::new(mode, oor);
                let plan = crate::arch::HalfIntPlan {
                    nan,
                    ..half_plan::<S, D>(opts)
                };
                let Some(cast) = crate::arch::HalfIntCast::<D::Word>::new(plan) else {
                    assert!(level < crate::isa::Isa::Avx512 || !crate::arch::has_avx512());
                    continue;
                };
                let nan_of = |c: S| nan.filter(|_| is_nan(c));
                let take: Vec<bool> = typed
                    .iter()
                    .map(|&c| nan_of(c).is_some() || accepts::<S, D>(c, opts))
                    .collect();
                let mut want = vec![D::default(); typed.len()];
                // Each code alone: a failing one leaves its output unspecified; a NaN with a
                // value to write is that value.
                let ok: Vec<bool> = typed
                    .iter()
                    .zip(want.iter_mut())
                    .map(|(c, w)| match nan_of(*c) {
                        Some(v) => {
                            *w = D::from_bits(v as u64);
                            true
                        }
                        None => cast_slice_reference(
                            std::slice::from_ref(c),
                            std::slice::from_mut(w),
                            opts,
                        )
                        .is_ok(),
                    })
                    .collect();
                for (i, (&t, &o)) in take.iter().zip(&ok).enumerate() {
                    assert!(
                        !t || o,
                        "{} -> {} {opts:?}: takes {i:#x}, which fails",
                        S::NAME,
                        D::NAME
                    );
                }
                let want: Vec<u64> = want.iter().map(|w| w.to_bits()).collect();
                let base = out.as_ptr() as usize;
                // (run length, source start, output bytes after the input mod 4 KiB or,
                // with `None`, a 64-byte aligned output streamed)
                let shapes = [
                    (1000, 0, Some(16)),
                    (1000, 3, Some(2)),
                    (1024, 0, Some(256)),
                    (1024, 5, Some(258)),
                    (999, 0, Some(2048)),
                    (333, 1, Some(4094)),
                    (129, 0, Some(0)),
                    (17, 2, Some(100)),
                    (15, 0, Some(30)),
                    (1, 0, Some(6)),
                    (1024, 0, None),
                    (300, 7, None),
                ];
                for (len, from, place) in shapes {
                    let mut start = from;
                    while start + len <= codes.len() {
                        let src = &codes[start..start + len];
                        let s_addr = src.as_ptr() as usize;
                        let (at, stream) = match place {
                            Some(gap) => {
                                let target = (s_addr + gap) % 4096;
                                ((target + 4096 - base % 4096) % 4096 / size, false)
                            }
                            None => (out.as_ptr().align_offset(64), true),
                        };
                        let dst = &mut out[at..at + len];
                        if let (Some(gap), 2) = (place, size) {
                            let d = (dst.as_ptr() as usize).wrapping_sub(s_addr) % 4096;
                            assert_eq!(d, gap, "the output's place");
                        }
                        let accepted = cast.run(src, dst, stream);
                        let what = format!(
                            "{} -> {} {opts:?} nan {nan:?} {level:?} run {start}+{len} at {at} \
                             stream {stream}",
                            S::NAME,
                            D::NAME
                        );
                        let expect = take[start..start + len].iter().all(|&t| t);
                        assert_eq!(accepted, expect, "{what}");
                        if accepted {
                            let bad = dst
                                .iter()
                                .zip(&want[start..start + len])
                                .position(|(g, w)| g.to_u64() != *w);
                            assert_eq!(bad, None, "{what}: first differing element");
                        }
                        start += len;
                    }
                }
            }
        }
    }

    /// The route (`cast_slice`) at every level with the output a little after the input
    /// modulo 4 KiB (where the 16-bit kernels load ahead) and right after it, every mode
    /// and rule, on every code and on the codes the target holds.
    #[test]
    fn half_to_16_bits_with_close_outputs_matches_the_reference() {
        close_outputs::<half::f16, i16>();
        close_outputs::<half::f16, u16>();
        close_outputs::<half::bf16, i16>();
        close_outputs::<half::bf16, u16>();
    }

    fn close_outputs<S: Real + Copy, D: Real>() {
        let codes: Vec<S> = (0..=u16::MAX).map(|c| S::from_bits(u64::from(c))).collect();
        let fits: Vec<S> = codes
            .iter()
            .copied()
            .filter(|c| {
                let opts = CastOptions::new(Rounding::TowardsZero, OutOfRange::Error);
                cast_slice_reference(&[*c], &mut [D::default()], opts).is_ok()
            })
            .collect();
        let mut out = Vec::new();
        out.resize(65536 + 4096, D::default());
        for src in [&codes[..], &fits[..]] {
            for gap in [16usize, 64, 200, 256, 0] {
                let at = ((src.as_ptr() as usize + gap) % 4096 + 4096
                    - out.as_ptr() as usize % 4096)
                    % 4096
                    / 2;
                for mode in MODES {
                    for oor in RULES {
                        let opts = CastOptions::new(mode, oor);
                        let mut want = vec![D::default(); src.len()];
                        let expected = cast_slice_reference(src, &mut want, opts);
                        let upto = expected.as_ref().map_or_else(|e| e.index, |()| src.len());
                        for level in crate::isa::Isa::available() {
                            let got = &mut out[at..at + src.len()];
                            let r = crate::isa::with_max_isa(level, || {
                                crate::convert::cast_slice(src, got, opts)
                            });
                            let what =
                                format!("{} -> {} {level:?} {opts:?} gap {gap}", S::NAME, D::NAME);
                            assert_eq!(r, expected, "{what}");
                            let bad = (0..upto).find(|&i| got[i].to_bits() != want[i].to_bits());
                            assert_eq!(bad, None, "{what}: first differing element");
                        }
                    }
                }
            }
        }
    }

    /// `arch::widen_bytes_to_f32` (AVX2, plain and streamed stores) writes what the
    /// portable `widen` writes, and declines the same blocks, for every code of every
    /// one-byte float type it serves, at every tail length.
    #[test]
    fn byte_widening_twin_equals_portable() {
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, byte_widening);
        }
    }

    fn byte_widening() {
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
        let codes: Vec<u8> = (0..=255).chain(0..=255).collect();
        let mut buf = vec![0u32; 256 + 32];
        // A 64-byte aligned output, so that the streamed form is taken, and an unaligned one.
        let aligned = buf.as_ptr().align_offset(64).min(16);
        for l in layouts {
            let p = super::widen_plan(l);
            for (stream, start) in [(false, aligned), (true, aligned), (true, aligned + 3)] {
                for (len, from) in [
                    (256, 0),
                    (256, 5),
                    (255, 0),
                    (249, 1),
                    (17, 250),
                    (8, 0),
                    (7, 3),
                    (1, 0),
                ] {
                    let src = &codes[256 - len + from..][..len];
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
