//! The one architecture-specific layer: run a kernel compiled for a wider instruction set
//! when the CPU has it.
//!
//! The kernels are plain, portable Rust over slices. Compiled for the x86-64 baseline (SSE2)
//! several of them cannot vectorize: SSE2 has no rounding instruction (`round_ties_even`,
//! `floor`, … become calls) and no per-lane variable shift. [`vectorized`] runs the same
//! code inside a function compiled with AVX2 enabled, where LLVM has `vroundpd` and
//! `vpsrlvd`/`vpsrlvq`, when the CPU supports it; elsewhere it runs the portable build. The
//! results are identical: enabling target features never changes the value of an integer
//! or IEEE operation (Rust does not contract `a * b + c` into an FMA), only which
//! instructions compute it.
//!
//! A few kernels are written with intrinsics, one submodule each, with a portable twin or
//! a plain loop as the reference and the fallback:
//! - `f16c`: float16 from and to `f32` (F16C's `vcvtps2ph`/`vcvtph2ps`, which portable code
//!   cannot reach), and from `f64` through it: [`F16c`];
//! - `bf16`: `f32` to bfloat16 with AVX-512 BF16's `vcvtne2ps2bf16` ([`f32_to_bf16`]),
//!   subnormal blocks left to the portable kernel (the instruction takes them as zero);
//! - `byte_lookup`: the 256-entry lookup of one-byte codes into one- and two-byte words,
//!   and the first code a table flags, by `vpermi2b` ([`lookup_bytes_u8`],
//!   [`lookup_bytes_u16`], [`first_flagged`]);
//! - `byte_float`: `f32` to the 8-bit float formats ([`f32_to_byte_float`]), where LLVM's
//!   build of the portable kernel shuffles more than it needs;
//! - `f64_range`: the least and greatest finite `f64` ([`f64_range()`], AVX2 and AVX-512),
//!   the finite range the planner reads, whose two folds LLVM builds with shuffles;
//! - `pos_popcount`: the positional popcount of `choose`'s bit counting in AVX-512
//!   ([`pos_popcount_pairs_avx512`]: `vpternlogq` carry-save adders), and the same fused
//!   with the word preparation ([`pos_popcount_prepared_pairs_avx512`], and for far
//!   neighbours column by column over bands of rows, [`pos_popcount_prepared_band_avx512`]);
//! - `wide`: [`vectorized_wide`], [`vectorized`] with an AVX-512 twin, for the word
//!   preparation of `choose`'s bit counting, `scale_offset`'s 8- and 16-bit integer kernel
//!   and `bitround`'s float kernels (16-bit lanes, compares into mask registers);
//! - `bit_slice`: the bit-matrix transpose of `choose`'s bit counting
//!   ([`bit_slice_u32`] and its siblings), byte gathers and `vpmovmskb`;
//! - `packbits`: packbits' bit packing and unpacking with AVX-512 (`vpmultishiftqb`,
//!   `vpermb`/`vpermi2b`, `vpshrdv`) and with AVX2 (`packbits/avx2.rs`: `vpshufb` per
//!   128-bit half), beside the portable kernels of `codec::packbits`;
//! - `truncate`: `f32`/`f64` to the low bits of x86's truncating conversion to `i32`
//!   ([`float_to_i32_low_bits`], AVX-512 `vcvttpd2dq`/`vcvttps2dq` and `vpmovdw`/`vpmovdb`),
//!   NumPy's cast into `int8` … `int32` that `numcodecs.astype` runs;
//! - `widen`: one-byte small floats to `f32` ([`widen_bytes_to_f32`], AVX2 and AVX-512),
//!   which can stream;
//! - `float_float`: `f32 -> f64` and `f32`/`f64` to themselves, NaNs canonicalized, in
//!   AVX-512 ([`f32_to_f64`], [`same_f32`], [`same_f64`]), which can stream;
//! - `small_int`: `f32`/`f64` to 8- and 16-bit integers under the directed rounding modes
//!   in AVX-512 ([`SmallIntCast`]: the mode is the conversion's own, `vfixupimmpd` maps
//!   NaN and ±Inf), which the portable loops take as loop invariants around a `floor`;
//! - `stream`: non-temporal stores for outputs too large for the cache ([`streams_from`]), which
//!   portable code cannot emit: the one-byte table lookup ([`lookup_bytes`]),
//!   `int32 -> float32` ([`i32_to_f32_streamed`]), integers of up to 32 bits into
//!   `float64` ([`ints_to_f64_streamed`]), bitround's copy of `float32`
//!   ([`bitround_u32_streamed`]) and numcodecs.quantize's `float32 -> float32`
//!   ([`quantize_f32_streamed`]); any elementwise kernel's output block by block through L1
//!   ([`through_l1`]); never into a fresh output the run-time API has just allocated
//!   ([`Fresh`]).
//!
//! [`clamp_to_i32`], [`clamp_round_even_to_i32`], [`clamp_round_away_to_i32`],
//! [`i32_or_indefinite`] and [`truncate_or_indefinite`] are safe functions for portable
//! kernels: `f64 -> i32` conversions that LLVM compiles to one packed instruction, made
//! sound by the clamp or select inside them.
//!
//! Beside it, `words.rs` holds the crate's other `unsafe`: slices of any dtype seen as the
//! storage words they are made of ([`words()`], [`words_mut`]), byte buffers (zarrs' chunks)
//! read and written as words in place (`words_of_bytes`, `words_of_bytes_mut`, built with
//! the `zarrs` feature), and
//! the fresh output buffers of the run-time API ([`zeroed_vec`]).

mod bf16;
mod bit_slice;
mod byte_float;
mod byte_lookup;
mod f16c;
mod f64_range;
mod float_float;
pub(crate) mod level;
pub(crate) mod packbits;
mod pos_popcount;
mod small_int;
mod stream;
mod truncate;
mod wide;
mod widen;
mod words;

pub(crate) use bf16::{f32_to_bf16, f64_to_bf16, int64_to_bf16};
pub(crate) use bit_slice::{
    bit_slice_u8, bit_slice_u16, bit_slice_u32, bit_slice_u64, count_plane_pairs_avx2,
};
pub(crate) use byte_float::{ByteFloatPlan, f32_to_byte_float};
pub(crate) use byte_lookup::{first_flagged, lookup_bytes_u8, lookup_bytes_u16};
pub(crate) use f16c::F16c;
pub(crate) use f64_range::f64_range;
pub(crate) use float_float::{f32_to_f64, same_f32, same_f64};
pub(crate) use pos_popcount::{
    BAND_ROWS, BandRow, PairPrep, PairRing, WIDE_CHUNK_BYTES, WideState, pos_popcount_pairs_avx512,
    pos_popcount_prepared_band_avx512, pos_popcount_prepared_pairs_avx512,
};
pub(crate) use small_int::{HalfIntCast, HalfIntPlan, SmallIntCast, SmallIntPlan};
#[cfg(any(feature = "rayon", test))]
pub(crate) use stream::Region;
#[cfg(test)]
pub(crate) use stream::STREAM_MIN;
#[cfg(test)]
pub(crate) use stream::streams;
pub(crate) use stream::{
    BitRound32, Fresh, bitround_u32_streamed, f64_to_f32_streamed, f64_to_i32_streamed,
    i32_to_f32_streamed, ints_to_f64_streamed, lookup_bytes, quantize_f32_streamed, stream_fence,
    streams_from, through_l1, through_l1_words,
};
pub(crate) use truncate::{float_to_i32_low_bits, truncate_or_indefinite};
pub(crate) use wide::vectorized_wide;
pub(crate) use widen::{WidenPlan, widen_bytes_to_f32};
#[cfg(test)]
use words::vec_from_words;
pub(crate) use words::{
    array_from_words, bytes_of_words, words, words_mut, words_view, zeroed_vec,
};
#[cfg(any(feature = "zarrs", test))]
pub(crate) use words::{words_of_bytes, words_of_bytes_mut};

/// Run `f`, compiled with AVX2 when this CPU has it.
///
/// `f` must be a closure marked `#[inline(always)]` (`vectorized(#[inline(always)] || …)`)
/// calling `#[inline(always)]` kernels: code is compiled with AVX2 only once it is inlined
/// into [`avx2`], and LLVM declines to inline a large closure on its own — it then stays a
/// baseline (SSE2) function called from the AVX2 one, and the twin gains nothing.
#[inline(always)]
pub(crate) fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: `avx2` requires only the AVX2 instruction set (and what it implies),
            // which the CPU has: `has_avx2` checked it.
            return unsafe { avx2(f) };
        }
    }
    f()
}

/// [`vectorized`] with a separate baseline twin: `f(args)` compiled with AVX2 when this CPU
/// has it, else `portable(args)`; off x86-64 (no twin) `f(args)`. (`args`, the slices the
/// kernels borrow, is passed rather than captured: only one of the two takes it.)
///
/// For kernels monomorphized many times over for the vector build (a const parameter per
/// rounding mode, range rule, …): compiled for the x86-64 baseline those loops stay scalar
/// anyway (SSE2 has no rounding instruction), so one `portable` loop taking the same
/// parameters as loop invariants runs about as fast there, and is compiled once per width
/// pair instead of once per combination of parameters.
#[inline(always)]
pub(crate) fn vectorized_or<A, R>(
    args: A,
    f: impl FnOnce(A) -> R,
    portable: impl FnOnce(A) -> R,
) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: `avx2` requires only the AVX2 instruction set (and what it implies),
            // which the CPU has: `has_avx2` checked it.
            // `f` is inlined into this closure and the closure into `avx2` (see
            // `vectorized`: a baseline copy called from the AVX2 one would gain nothing).
            return unsafe {
                avx2(
                    #[inline(always)]
                    move || f(args),
                )
            };
        }
        portable(args)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = portable;
        f(args)
    }
}

/// [`vectorized_or`] with an AVX-512 level above AVX2 (as [`vectorized_wide`] is to
/// [`vectorized`]): `f(args)` compiled with AVX-512 when the level allows it, else with
/// AVX2, else `portable(args)`.
#[inline(always)]
pub(crate) fn vectorized_wide_or<A, R>(
    args: A,
    f: impl FnOnce(A) -> R,
    portable: impl FnOnce(A) -> R,
) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512() {
            // SAFETY: `avx512` requires the features of `Isa::Avx512`, which the CPU has:
            // `has_avx512` checked them (and the cap allows them). `f` is inlined into the
            // closure and the closure into `avx512` (see `vectorized`).
            return unsafe {
                wide::avx512(
                    #[inline(always)]
                    move || f(args),
                )
            };
        }
    }
    vectorized_or(args, f, portable)
}

/// [`vectorized_or`] for a kernel called from several places, inside other twins too (the
/// blocks a specialised loop declines, and every block of a general mode): `f(args)`
/// compiled with AVX2 in a function of its own that is never inlined, so that all callers
/// share one AVX2 copy of it per instance of `f`. `portable` should be a call of a
/// non-inlined function for the same reason (inlined, it would also be compiled into an
/// AVX2 caller, where it never runs).
#[inline(always)]
pub(crate) fn vectorized_shared_or<A, R>(
    args: A,
    f: impl FnOnce(A) -> R,
    portable: impl FnOnce(A) -> R,
) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: `avx2_shared` requires only the AVX2 instruction set (and what it
            // implies), which the CPU has: `has_avx2` checked it. `f` is inlined into the
            // closure and the closure into `avx2_shared` (see `vectorized`).
            return unsafe {
                avx2_shared(
                    #[inline(always)]
                    move || f(args),
                )
            };
        }
        portable(args)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = portable;
        f(args)
    }
}

/// Ask the CPU to bring `s` into the cache (one prefetch per 64-byte line): for kernels
/// that read a tile and then compute on it long enough for the next tile's loads to stall
/// (`choose`'s bit counting), and for the next step of a narrowing cast
/// (`convert::blocks::by_blocks`). A hint only; nothing is read or written.
#[inline(always)]
pub(crate) fn prefetch<T>(s: &[T]) {
    prefetch_lines(s.as_ptr().cast(), std::mem::size_of_val(s));
}

/// [`prefetch`] of the `bytes` bytes from `p`. Any address is allowed: nothing is read.
/// A plain loop, inlined: `by_blocks` calls it in the loop of each of its kernels, where a
/// call would have the kernel's vector constants saved and reloaded around it, and
/// `step_by` made more code.
#[inline(always)]
pub(crate) fn prefetch_lines(p: *const i8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut off = 0;
        while off < bytes {
            // SAFETY: `prefetcht0` needs only SSE, which every x86-64 CPU has; it is a hint
            // that neither faults nor changes memory, whatever the address.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(off),
                );
            }
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// `f()`, with AVX2 code generation for everything inlined into it.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// [`avx2`], never inlined: one copy shared by every caller (see [`vectorized_shared_or`]).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn avx2_shared<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `r` clamped into `[lo, hi]` (a NaN gives `lo`) and truncated to an integer: `vmaxpd`,
/// `vminpd` and `vcvttpd2dq`, which packs four results into one register, where Rust's
/// saturating `as` adds a NaN fix-up and a 64-bit lane per value needs two shuffles to
/// narrow. The clamp is what makes the unchecked conversion sound, so it is done here.
#[inline(always)]
pub(crate) fn clamp_to_i32(r: f64, lo: i32, hi: i32) -> i32 {
    clamp_round_to_i32::<false>(r, lo, hi)
}

/// `r` clamped into `[lo, hi]` (a NaN gives `lo`) and rounded to the nearest integer, ties
/// to even: LLVM makes one `vcvtpd2dq` of the rounding and the conversion. Clamping first
/// gives the same as rounding first, since the bounds are integers.
#[inline(always)]
pub(crate) fn clamp_round_even_to_i32(r: f64, lo: i32, hi: i32) -> i32 {
    clamp_round_to_i32::<true>(r, lo, hi)
}

/// `r` clamped into `[lo, hi]` (a NaN gives `lo`) and rounded to the nearest integer, ties
/// away from zero: the clamped value plus the `f64` just below one half, with `r`'s sign
/// (no sign to copy when `lo >= 0`), truncated by the conversion (`vcvttpd2dq`). That sum
/// truncated is `round` for every `f64` (LLVM's own lowering of `round`), and clamping first
/// gives the same as rounding first, since the bounds are integers.
#[inline(always)]
pub(crate) fn clamp_round_away_to_i32(r: f64, lo: i32, hi: i32) -> i32 {
    const BELOW_HALF: f64 = 0.499_999_999_999_999_94;
    let (lo_f, hi_f) = (f64::from(lo), f64::from(hi));
    let v = if r > lo_f { r } else { lo_f };
    let v = if v < hi_f { v } else { hi_f };
    let v = v + if lo >= 0 {
        BELOW_HALF
    } else {
        BELOW_HALF.copysign(v)
    };
    // SAFETY: `v` was in `[lo, hi]` (finite: a NaN `r` fails `r > lo` and gives `lo`) and
    // moved by less than one half away from zero, to at most `lo - 1/2` or `hi + 1/2`
    // after rounding: its truncation is in `[lo, hi]`, representable in `i32`.
    unsafe { v.to_int_unchecked::<i32>() }
}

#[inline(always)]
fn clamp_round_to_i32<const EVEN: bool>(r: f64, lo: i32, hi: i32) -> i32 {
    let (lo, hi) = (f64::from(lo), f64::from(hi));
    let v = if r > lo { r } else { lo };
    let v = if v < hi { v } else { hi };
    let v = if EVEN { v.round_ties_even() } else { v };
    // SAFETY: `v` is in `[lo, hi]`, two `i32` values: finite, not NaN (a NaN `r` fails
    // `r > lo` and gives `lo`), and rounding to an integer keeps it there (the bounds are
    // integers), so its truncation is representable in `i32`.
    unsafe { v.to_int_unchecked::<i32>() }
}

/// An integral `m` as `i32` when it is in `i32`'s range, else `i32::MIN` (NaN and ±Inf
/// included): the "integer indefinite" result of x86's `cvttsd2si`, which NumPy's casts
/// give. Out-of-range values are replaced by `i32::MIN` before the conversion (a compare
/// and a blend on the `f64` lanes), so that `vcvttpd2dq` packs the results with no mask to
/// narrow.
#[inline(always)]
pub(crate) fn i32_or_indefinite(m: f64) -> i32 {
    let (lo, hi) = (f64::from(i32::MIN), f64::from(i32::MAX));
    let clamped = if m > lo { m } else { lo };
    let clamped = if clamped < hi { clamped } else { hi };
    let v = if clamped == m { m } else { lo };
    // SAFETY: `v` is `lo` or an `m` equal to its clamp into `[lo, hi]` (a NaN is equal to
    // nothing): finite and within `i32`'s range, so its truncation is representable.
    unsafe { v.to_int_unchecked::<i32>() }
}

/// Whether the CPU is AMD's (`cpuid` leaf 0 names "AuthenticAMD"): the stores rule of
/// `stream::cached_max` differs by vendor. `false` off x86-64.
pub(crate) fn is_amd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // Leaf 0 (the vendor) exists on every x86-64 CPU.
        let r = std::arch::x86_64::__cpuid(0);
        let vendor = [
            r.ebx.to_le_bytes(),
            r.edx.to_le_bytes(),
            r.ecx.to_le_bytes(),
        ];
        vendor.concat() == *b"AuthenticAMD"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether kernels may use AVX2 now: the CPU has it and no cap rules it out (see
/// [`level`]; always `false` off x86-64).
#[inline]
pub(crate) fn has_avx2() -> bool {
    level::isa() >= level::Isa::Avx2
}

/// Whether kernels may use AVX-512 (the [`level::Isa::Avx512`] set) now.
#[inline]
pub(crate) fn has_avx512() -> bool {
    level::isa() >= level::Isa::Avx512
}

/// Whether kernels may use AVX-512 with BF16 (`vcvtne2ps2bf16`) now: the level allows
/// AVX-512 and the CPU also has BF16, which [`level::Isa::Avx512`] does not include.
#[inline]
pub(crate) fn has_avx512_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() && std::is_x86_feature_detected!("avx512bf16") {
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    //! The `unsafe` above, on the cases that reach each branch; run under Miri too
    //! (`cargo +nightly miri test --lib arch::`; the F16C kernels are tested against the
    //! reference in `tests/it/fast_paths.rs`).
    use ndarray::{ArrayD, Axis, IxDyn};

    use crate::dtype::Complex;

    #[test]
    fn words_of_bytes_only_whole_aligned_words() {
        let v: Vec<u64> = vec![0x0102_0304_0506_0708, u64::MAX];
        // SAFETY (test): the bytes of `v`, for reading only.
        let bytes: &[u8] = unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), 16) };
        assert_eq!(super::words_of_bytes::<u64>(bytes), Some(&v[..]));
        assert_eq!(
            super::words_of_bytes::<u16>(&bytes[2..6]).map(<[u16]>::len),
            Some(2)
        );
        assert_eq!(super::words_of_bytes::<u64>(&bytes[1..9]), None); // misaligned
        assert_eq!(super::words_of_bytes::<u64>(&bytes[..12]), None); // not whole words
        let mut out = [0u8; 16];
        let start = out.as_ptr().align_offset(4);
        if let Some(w) = super::words_of_bytes_mut::<u32>(&mut out[start..start + 8]) {
            w[1] = 0x0403_0201;
        }
        assert_eq!(out[start + 4..start + 8], 0x0403_0201u32.to_ne_bytes());
    }

    #[test]
    fn vec_from_words_moves_whole_elements() {
        let v: Vec<u32> = vec![1, 2, 3, 4];
        let c = super::vec_from_words::<Complex<f32>>(v).expect("same alignment");
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].im.to_bits(), 4);
        assert!(super::vec_from_words::<Complex<f32>>(vec![1u32, 2, 3]).is_none());
        let f = super::vec_from_words::<f64>(vec![0x3ff0_0000_0000_0000u64]).expect("f64");
        assert_eq!(f, [1.0]);
    }

    /// Above `STREAM_MIN` bytes of output, and `CACHED_MAX` with the codes, the lookup
    /// streams (`vmovntdq`): every word, the
    /// last ones included, must be what a plain lookup writes.
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn streamed_lookup_equals_plain_lookup() {
        fn check<W: crate::number::storage::Word>(bytes: usize) {
            let n = bytes / std::mem::size_of::<W>() + 13;
            let codes: Vec<u8> = (0..n).map(|i| (i * 131 + i / 7) as u8).collect();
            let table: [W; 256] = std::array::from_fn(|i| {
                W::from_u64((i as u64 + 1).wrapping_mul(0x0101_0103_0507_0b0d))
            });
            let mut all = vec![W::default(); n];
            // The output's offset from a 64-byte boundary moves with `start` (every head
            // length of plain stores), and the length with it (every tail length).
            for start in 0..17 {
                let out = &mut all[start..];
                super::lookup_bytes(&table, &codes[2 * start..], out);
                let want: Vec<W> = codes[2 * start..]
                    .iter()
                    .map(|&c| table[usize::from(c)])
                    .collect();
                assert!(
                    out[..want.len()] == want[..],
                    "{} bits, start {start}",
                    W::BITS
                );
            }
        }
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, || {
                check::<u64>(super::stream::CACHED_MAX);
                check::<u32>(super::stream::CACHED_MAX);
                check::<u16>(1 << 12);
            });
        }
    }

    /// The streamed `i32 -> f32` kernel rounds as `as` does, at every offset of the
    /// output from a 32-byte boundary (the head, the vectors, the tail).
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn streamed_i32_to_f32_equals_as() {
        let n = super::stream::STREAM_MIN / 4 + 21;
        let mut x = 0x9e37_79b9_u32;
        let mut src: Vec<u32> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x
            })
            .collect();
        let specials = [
            i32::MIN,
            i32::MAX,
            0,
            -1,
            (1 << 24) + 1,
            -(1 << 24) - 3,
            0x7fff_ffc0,
        ];
        for (i, v) in specials.iter().enumerate() {
            src[i] = *v as u32;
            src[n - 1 - i] = *v as u32;
        }
        let mut out = vec![0u32; n];
        for start in 0..8 {
            // The output's offset from a 32-byte boundary moves with `start`.
            let dst = &mut out[start..];
            if !super::i32_to_f32_streamed(&src[start..], dst) {
                return; // no AVX2: nothing to test
            }
            let want = src[start..].iter().map(|&b| (b as i32 as f32).to_bits());
            assert!(dst.iter().copied().eq(want), "start {start}");
        }
    }

    /// A chunk of a large output streams inside its `Region`, nothing else does, and the
    /// mark is gone afterwards.
    #[test]
    fn a_region_marks_only_its_own_chunks() {
        use super::stream::STREAM_MIN;
        use super::{Region, streams};
        let out = vec![0u64; STREAM_MIN / 8];
        let other = vec![0u64; 1024];
        let chunk = &out[4096..8192];
        assert!(streams(&out[..]) && !streams(chunk) && !streams(&other[..]));
        Region::of(&out[..], &out[..]).streaming(|| {
            assert!(streams(chunk) && streams(&out[out.len() - 1..]));
            assert!(!streams(&other[..]));
        });
        assert!(!streams(chunk));
        // A small output marks nothing.
        Region::of(&other[..], &other[..]).streaming(|| assert!(!streams(&other[..8])));
    }

    #[test]
    fn unchecked_conversions_clamp_first() {
        use super::{
            clamp_round_away_to_i32, clamp_round_even_to_i32, clamp_to_i32, i32_or_indefinite,
        };
        let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300];
        for x in specials {
            let want = if x > 0.0 { 255 } else { 0 };
            assert_eq!(clamp_to_i32(x, 0, 255), want, "{x}");
            assert_eq!(clamp_round_even_to_i32(x, 0, 255), want, "{x}");
            assert_eq!(clamp_round_away_to_i32(x, 0, 255), want, "{x}");
            assert_eq!(
                clamp_round_away_to_i32(x, -128, 127),
                if x > 0.0 { 127 } else { -128 }
            );
            assert_eq!(i32_or_indefinite(x), i32::MIN, "{x}");
        }
        for (x, trunc, even) in [
            (254.5, 254, 254),
            (255.5, 255, 255),
            (-0.5, 0, 0),
            (-0.0, 0, 0),
            (2.5, 2, 2),
            (3.5, 3, 4),
            (1.0e-300, 0, 0),
        ] {
            assert_eq!(clamp_to_i32(x, 0, 255), trunc, "{x}");
            assert_eq!(clamp_round_even_to_i32(x, 0, 255), even, "{x}");
        }
        // Ties, their neighbours, and values near the bounds, against `round` then clamp.
        let mut xs = vec![
            0.499_999_999_999_999_94,
            -0.499_999_999_999_999_94,
            0.5,
            -0.5,
        ];
        for k in [
            -2_147_483_649.0,
            -129.0,
            -128.0,
            -9.0,
            -1.0,
            0.0,
            1.0,
            7.0,
            254.0,
            255.0,
        ] {
            for t in [k, k + 0.5, k - 0.5, k + 0.25, f64::from(i32::MAX) - k] {
                // The neighbouring `f64`s (`f64::next_up` is newer than the MSRV): one step
                // of a nonzero value's code either way; zero's are the smallest subnormals.
                let tiny = f64::from_bits(1);
                let (up, down) = if t == 0.0 {
                    (tiny, -tiny)
                } else {
                    (
                        f64::from_bits(t.to_bits() + 1),
                        f64::from_bits(t.to_bits() - 1),
                    )
                };
                xs.extend([t, up, down]);
            }
        }
        for (lo, hi) in [
            (0, 255),
            (-128, 127),
            (-8, 7),
            (0, 65535),
            (i32::MIN, i32::MAX),
        ] {
            for &x in &xs {
                let want = x.round().clamp(f64::from(lo), f64::from(hi)) as i32;
                assert_eq!(
                    clamp_round_away_to_i32(x, lo, hi),
                    want,
                    "{x} in [{lo}, {hi}]"
                );
            }
        }
        assert_eq!(clamp_to_i32(-7.0, -8, 7), -7);
        assert_eq!(clamp_to_i32(i32::MIN.into(), i32::MIN, i32::MAX), i32::MIN);
        assert_eq!(
            clamp_to_i32(f64::from(i32::MAX) + 1.0, i32::MIN, i32::MAX),
            i32::MAX
        );
        for (m, want) in [
            (0.0, 0),
            (-1.0, -1),
            (2_147_483_647.0, i32::MAX),
            (2_147_483_648.0, i32::MIN),
            (-2_147_483_648.0, i32::MIN),
            (-2_147_483_649.0, i32::MIN),
        ] {
            assert_eq!(i32_or_indefinite(m), want, "{m}");
        }
    }

    #[test]
    fn words_view_reads_any_layout() {
        let n = 2 * 3 * 2;
        let a = ArrayD::from_shape_vec(
            IxDyn(&[2, 3, 2]),
            (0..n)
                .map(|i| Complex {
                    re: i as f32,
                    im: -(i as f32),
                })
                .collect(),
        )
        .expect("shape");
        let mut b = a.clone().reversed_axes();
        b.invert_axis(Axis(1));
        for x in [&a, &b] {
            let w = super::words_view(x);
            assert_eq!(w.shape(), [x.shape(), &[2]].concat());
            let words: Vec<u32> = w.iter().copied().collect();
            let want: Vec<u32> = x
                .iter()
                .flat_map(|z| [z.re.to_bits(), z.im.to_bits()])
                .collect();
            assert_eq!(words, want);
        }
        let empty = ArrayD::<u16>::zeros(IxDyn(&[0, 3]));
        assert_eq!(super::words_view(&empty).len(), 0);
    }
}
