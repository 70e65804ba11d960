//! Streamed (non-temporal) stores for large outputs: when a kernel streams
//! ([`streams_from`]: a large output that does not fit in the cache with its input), the
//! parallel calls' output ranges ([`Region`]), and the two shapes of a streamed output:
//! - from the registers, [`streamed`]: the plain kernel up to the output's first aligned
//!   boundary, the kernel's step storing whole vectors by `vmovnt*`, an `sfence`, the plain
//!   kernel on the tail. The one-byte table lookup, `int32 -> float32`, integers of up to
//!   32 bits into `float64`, numcodecs.quantize's
//!   `float32 -> float32` and with AVX-512 `f64 -> int32` and `f64 -> f32` nearest-even
//!   here, `f32 -> f64` and the same-type float casts (`super::float_float`) and the
//!   widening of one-byte floats (`super::widen`) pass their steps to it;
//! - through L1, [`through_l1`] and [`through_l1_words`]: any elementwise kernel computed
//!   block by block into an L1 buffer streamed out (bitround's float copy of 16- and 64-bit
//!   words, scale_offset's `f32`/`f64` encode, numcodecs.astype's other widenings).
//!   Bitround's copy of 32-bit floats streams from the registers ([`bitround_u32_streamed`]).

use crate::number::storage::{Word, Words, WordsMut};

/// Outputs from this many bytes on are written by [`lookup_bytes`] with non-temporal
/// stores. Below it the output may stay in the last-level cache for whoever reads it next
/// (this machine's L3 holds 32 MiB); above it, storing through the cache first reads every
/// output line from memory only to overwrite it, and that read is most of the traffic of a
/// lookup whose output is 4 or 8 times its input.
pub(crate) const STREAM_MIN: usize = 16 << 20;

thread_local! {
    /// The address range of a large output that a parallel call is writing chunk by chunk
    /// on this thread (empty when none): see [`Region`].
    static STREAM_REGION: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    /// The address range of a fresh output the run-time API has just allocated and is
    /// writing on this thread (empty when none): see [`Fresh`].
    static FRESH: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// Whether `bytes` bytes from address `start` lie in the fresh output marked on this thread
/// ([`Fresh`]): never streamed.
fn in_fresh(start: usize, bytes: usize) -> bool {
    let (lo, hi) = FRESH.with(std::cell::Cell::get);
    lo < hi && lo <= start && start + bytes <= hi
}

/// A fresh output's address range: memory just allocated (`arch::zeroed_vec`), whose pages
/// the kernel zeroes at their first touch, through the cache. Non-temporal stores to lines
/// that are cached must first evict them, so an output written right after its pages were
/// zeroed is faster by plain stores: on the Xeon, allocating 32 MiB (huge pages) and
/// writing it took 2.8-2.9 ms by plain stores and 9.1-9.3 ms by `vmovntdq` (a C loop, best
/// of 12), and numcodecs.fixedscaleoffset's allocating decode into float64 (4M elements)
/// 8.2 ms against 1.5 ms into a reused output. The run-time API's allocating calls run
/// their kernels inside [`Fresh::unstreamed`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fresh(usize, usize);

impl Fresh {
    /// The range of the words `w`.
    pub(crate) fn of(w: &WordsMut<'_>) -> Fresh {
        let start = address(w);
        Fresh(start, start + w.len() * w.bits() as usize / 8)
    }

    /// Run `f` with this range marked as fresh on this thread: no kernel streams into it.
    pub(crate) fn unstreamed<R>(self, f: impl FnOnce() -> R) -> R {
        let before = FRESH.with(|r| r.replace((self.0, self.1)));
        let result = f();
        FRESH.with(|r| r.set(before));
        result
    }
}

/// Whether a kernel writing `dst` streams it out: `dst` holds at least [`STREAM_MIN`]
/// bytes, or it lies within the large output of a parallel call (a chunk of it).
/// Intermediate buffers never lie there: they are other allocations, while the output is
/// exclusively borrowed by the parallel call.
pub(crate) fn streams<W>(dst: &[W]) -> bool {
    let bytes = std::mem::size_of_val(dst);
    if in_fresh(dst.as_ptr() as usize, bytes) {
        return false;
    }
    if bytes >= STREAM_MIN {
        return true;
    }
    let start = dst.as_ptr() as usize;
    let (lo, hi) = STREAM_REGION.with(std::cell::Cell::get);
    lo < hi && lo <= start && start + bytes <= hi
}

/// Input and output together up to this many bytes (three quarters of this machine's
/// 32 MiB L3) are left in the cache by [`streams_from`]: whoever reads the output next
/// finds it there, and a repeated call overwrites lines that are still cached instead of
/// fetching them. `float8_e4m3 -> f32` over 4M elements (4 MiB in, 16 MiB out) took
/// 0.55-0.58 ms by minima with plain stores against 0.60-0.63 streamed (three rounds
/// alternated), while numcodecs.quantize `f32 -> f32` (16 MiB in and out, 32 MiB in all)
/// took 0.63-0.71 ms streamed against 0.73-0.79 plain.
pub(crate) const CACHED_MAX: usize = 24 << 20;

/// The bytes of input and output that [`streams_from`] leaves in the cache on this CPU:
/// [`CACHED_MAX`] on AMD's, whose L3 the rule was measured on, and none elsewhere. On an
/// Intel Xeon (a VM reporting a 300 MiB shared L3) a 16 MiB output stored through the
/// cache was not found there by the next pass and cost its reads from memory:
/// `float8_e4m3 -> f32` over 4M elements (4 MiB in, 16 MiB out) took 2.5-3.1 ms by minima
/// with plain stores against 1.4-1.45 streamed, `f16 -> f32` 3.2-3.7 against 1.1-1.35
/// (three rounds alternated, a 16 MiB copy between runs, as in the harness).
fn cached_max() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| if super::is_amd() { CACHED_MAX } else { 0 })
}

/// [`streams`] for a kernel that reads `src` to write `dst`: a large output streams unless
/// input and output together fit in [`cached_max`] (which only a widening kernel's can,
/// since the output holds at least [`STREAM_MIN`] bytes); a chunk of a parallel call's
/// output streams as [`streams`] says.
pub(crate) fn streams_from<S, W>(src: &[S], dst: &[W]) -> bool {
    if in_fresh(dst.as_ptr() as usize, std::mem::size_of_val(dst)) {
        return false;
    }
    if std::mem::size_of_val(dst) >= STREAM_MIN {
        return beyond_cache(src, dst);
    }
    streams(dst)
}

/// Whether `dst` is a large output (at least [`STREAM_MIN`] bytes) that does not fit in
/// [`CACHED_MAX`] with `src`: the rule [`streams_from`] and [`Region::of`] share.
fn beyond_cache<S, W>(src: &[S], dst: &[W]) -> bool {
    let (src_bytes, dst_bytes) = (std::mem::size_of_val(src), std::mem::size_of_val(dst));
    dst_bytes >= STREAM_MIN && src_bytes.saturating_add(dst_bytes) > cached_max()
}

/// The address range of a parallel call's output, when it streams as one call would
/// ([`streams_from`]: at least [`STREAM_MIN`] bytes, beyond [`cached_max`] with the input):
/// its chunks are each far smaller, but together they fill as much memory as one
/// large call, so kernels writing a chunk of it stream it out too (see [`streams`]).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "rayon"), allow(dead_code))] // used by `parallel`; unit-tested always
pub(crate) struct Region(usize, usize);

#[cfg_attr(not(feature = "rayon"), allow(dead_code))]
impl Region {
    /// The range of `out`, written from `src`, if one call writing it would stream, else an
    /// empty one.
    pub(crate) fn of<S, W>(src: &[S], out: &[W]) -> Region {
        let (start, bytes) = (out.as_ptr() as usize, std::mem::size_of_val(out));
        if !beyond_cache(src, out) {
            return Region(0, 0);
        }
        Region(start, start + bytes)
    }

    /// Run `f` with this range marked as an output to stream on this thread.
    pub(crate) fn streaming<R>(self, f: impl FnOnce() -> R) -> R {
        if self.0 == self.1 {
            return f();
        }
        let before = STREAM_REGION.with(|r| r.replace((self.0, self.1)));
        let result = f();
        STREAM_REGION.with(|r| r.set(before));
        result
    }
}

/// `out[i] = table[codes[i]]` over the shorter of `codes` and `out`: the decode of a
/// one-byte source by its 256-entry table.
///
/// An output to stream ([`streams`]) in 4- or 8-byte words is written on x86-64
/// with AVX2 by `vmovntdq`, whole 32-byte vectors of looked-up words from the output's
/// first 32-byte boundary on, which go to memory through the write-combining buffers
/// without the output lines being read first; then `sfence`, so that the stores are
/// ordered before whatever the caller does next (as any other store would be). 8-byte
/// `movnti` stores were measured slower (a C loop, 4M elements: 2.2-3.3 ms against
/// 1.7-2.2).
#[inline]
pub(crate) fn lookup_bytes<W: Word>(table: &[W; 256], codes: &[u8], out: &mut [W]) {
    #[cfg(target_arch = "x86_64")]
    if streams_from(codes, out) && super::has_avx2() {
        let n = codes.len().min(out.len());
        let (codes, words) = (&codes[..n], W::words(&table[..]));
        if let (Some(t), Some(o)) = (u64::of(words), u64::of_mut(W::words_mut(&mut out[..n])))
            && let Ok(t) = <&[u64; 256]>::try_from(t)
        {
            // SAFETY: the CPU has AVX2 (checked above).
            unsafe { kernels::lookup_u64(t, codes, o) };
            return;
        }
        if let (Some(t), Some(o)) = (u32::of(words), u32::of_mut(W::words_mut(&mut out[..n])))
            && let Ok(t) = <&[u32; 256]>::try_from(t)
        {
            // SAFETY: as above.
            unsafe { kernels::lookup_u32(t, codes, o) };
            return;
        }
    }
    for (d, &c) in out.iter_mut().zip(codes) {
        *d = table[usize::from(c)];
    }
}

/// `dst[i]` = the `f32` bits of `src[i] as i32` (nearest-even, as `as` rounds), when `dst`
/// is an output to stream ([`streams`]) and the CPU has AVX2: converted by `vcvtdq2ps` and
/// stored by `vmovntps`, so that the output lines are not first read from memory (a third
/// of the traffic of a cast whose output is as wide as its input). `false` (nothing
/// written) otherwise, for the portable kernel.
///
/// Computing blocks into an L1 buffer and streaming that out instead was measured no faster
/// than plain stores (a C loop on this machine: 1.2-1.6 ms against 1.3-1.6 plain and
/// 0.9-1.1 streamed from registers, 4M elements): the stores must leave from the
/// conversion itself.
pub(crate) fn i32_to_f32_streamed(src: &[u32], dst: &mut [u32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if streams_from(src, dst) && super::has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { kernels::i32_to_f32(src, dst) };
        return true;
    }
    let _ = (src, dst);
    false
}

/// `dst[i]` = the `f64` bits of integer `src[i]` (sign- or zero-extended from its words,
/// at most 32 bits: every such value is exact in `f64`), when `dst` is an output to stream
/// ([`streams_from`]) and the CPU has AVX2: 8 elements a step widened to `i32` lanes
/// (`vpmovsx`/`vpmovzx`), converted by two `vcvtdq2pd` and stored by two `vmovntpd`, a
/// whole 64-byte line. `false` (nothing written) otherwise, or for 64-bit words.
///
/// For numcodecs.astype's widenings into `float64` (`int16 -> float64`: 8 MiB in, 32 MiB
/// out), which went block by block through L1 ([`through_l1_words`]): the stores leave
/// from the conversion, as [`i32_to_f32_streamed`]'s do.
pub(crate) fn ints_to_f64_streamed(src: Words<'_>, dst: &mut [u64], signed: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2()
        && streams_bytes(
            src.len() * src.bits() as usize / 8,
            &WordsMut::U64(&mut *dst),
        )
    {
        // SAFETY (each arm): the CPU has AVX2 (checked just above).
        match src {
            Words::U8(s) if signed => unsafe { kernels::ints_to_f64::<u8, true>(s, dst) },
            Words::U8(s) => unsafe { kernels::ints_to_f64::<u8, false>(s, dst) },
            Words::U16(s) if signed => unsafe { kernels::ints_to_f64::<u16, true>(s, dst) },
            Words::U16(s) => unsafe { kernels::ints_to_f64::<u16, false>(s, dst) },
            Words::U32(s) if signed => unsafe { kernels::ints_to_f64::<u32, true>(s, dst) },
            Words::U32(s) => unsafe { kernels::ints_to_f64::<u32, false>(s, dst) },
            Words::U64(_) => return false,
        }
        return true;
    }
    let _ = (src, dst, signed);
    false
}

/// The constants of [`bitround_u32_streamed`]: a 32-bit float layout's bit rounding.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BitRound32 {
    /// The mantissa bits dropped.
    pub(crate) shift: u32,
    /// `2^(shift - 1) - 1`: with the kept bits' lowest, half to even.
    pub(crate) half: u32,
    /// The bits kept: all but the low `shift`.
    pub(crate) keep: u32,
    /// The magnitude's bits, and the largest magnitude that is not a NaN (±Inf's).
    pub(crate) mag: u32,
    pub(crate) inf: u32,
}

impl BitRound32 {
    /// The constants of keeping `keepbits` mantissa bits of the 32-bit float layout `l`;
    /// `None` when there is nothing to round (`keepbits` at least the mantissa's width) or
    /// `l` is not 32 bits wide.
    pub(crate) fn new(l: &crate::number::layout::FloatLayout, keepbits: u32) -> Option<Self> {
        if l.bits() != 32 || keepbits >= l.mantissa_bits {
            return None;
        }
        let shift = l.mantissa_bits - keepbits;
        Some(BitRound32 {
            shift,
            half: (1 << (shift - 1)) - 1,
            keep: u32::MAX << shift,
            mag: l.magnitude_mask() as u32,
            inf: (((1u64 << l.exponent_bits) - 1) << l.mantissa_bits) as u32,
        })
    }
}

/// `dst[i]` = the word `src[i]` bit-rounded (numcodecs' bitround of a 32-bit float:
/// `(b + ((b >> shift) & 1) + half) & keep`, a NaN as it is; `codec::bitround` documents the
/// arithmetic), when `dst` is an output to stream ([`streams_from`]) and the CPU has AVX2:
/// 32 words a step, stored by `vmovntdq`. `false` (nothing written) otherwise.
///
/// A kernel that reads and writes as many bytes as a copy, so the stores leave from the
/// registers (as [`quantize_f32_streamed`]'s do): through L1 ([`through_l1`]) it ran at
/// 0.75-0.88 of a 16 MiB `memcpy`.
pub(crate) fn bitround_u32_streamed(c: BitRound32, src: &[u32], dst: &mut [u32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if streams_from(src, dst) && super::has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { kernels::bitround_u32(c, src, dst) };
        return true;
    }
    let _ = (c, src, dst);
    false
}

/// `dst[i] = rint(src[i] * scale) * inv` in `f32` (`rint` half to even), the `f32` words
/// of `src` and `dst`: numcodecs.quantize's encoding of float32 into float32
/// (`codec::quantize`), when `dst` is an output to stream ([`streams`]) and the CPU has
/// AVX2. The same operations as the vectorized loop (`vmulps`, `vroundps`, `vmulps`, each
/// rounded once), whose vectors are stored by `vmovntps`; `false` (nothing written)
/// otherwise, for that loop.
///
/// A kernel that reads and writes as many bytes as a copy: plain stores first read each
/// output line from memory, a third of its traffic. Streamed, it ran at 0.93-1.23 of a
/// 16 MiB `memcpy` by minima against 0.79-1.01 for plain stores (4M elements, alternated).
pub(crate) fn quantize_f32_streamed(scale: f32, inv: f32, src: &[u32], dst: &mut [u32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if streams_from(src, dst) && super::has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { kernels::quantize_f32(scale, inv, src, dst) };
        return true;
    }
    let _ = (scale, inv, src, dst);
    false
}

/// `dst[i]` = `src[i]` (`f64` words) rounded to the nearest integer, ties to even, as
/// an `i32` (`u32` words), when `dst` is an output to stream ([`streams_from`]) and the
/// CPU has AVX-512: converted 8 at a time by `vcvtpd2dq` with the rounding in the
/// instruction and stored by `vmovntdq`. Returns how many elements are done, a prefix:
/// it stops before the first vector (or, before and after the 32-byte aligned body,
/// element) with a lane the conversion gives as `0x8000_0000`, which is what NaN and
/// values beyond `i32` give, and `i32::MIN` itself: the caller decides those by its own
/// loops. `None` (nothing written) when it does not stream.
///
/// Computing blocks into an L1 buffer and streaming that out ([`through_l1`]) was slower
/// than plain stores for this cast (`cast_value` `f64 -> i32`, 4M elements: 1.43-1.47 ms
/// by minima against 1.23-1.25), as it was for `int32 -> float32`: the stores must leave
/// from the conversion itself.
pub(crate) fn f64_to_i32_streamed(src: &[u64], dst: &mut [u32]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if streams_from(src, dst) && super::has_avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VL (checked just above: `Isa::Avx512`).
        return Some(unsafe { kernels::f64_to_i32(src, dst) });
    }
    let _ = (src, dst);
    None
}

/// `dst[i]` = the `f32` bits of `src[i]` (`f64` words) rounded to nearest, ties to even,
/// when `dst` is an output to stream ([`streams_from`]) and the CPU has AVX-512: converted
/// 8 at a time by `vcvtpd2ps` and stored by `vmovntps`, as [`f64_to_i32_streamed`]. It
/// stops before the first vector (or element, outside the aligned body) with an infinite
/// or NaN result (an overflow, an infinite or a NaN input), which the caller's loop
/// decides (NaN is canonicalized, overflow is an error or clamped). `None` (nothing
/// written) when it does not stream.
pub(crate) fn f64_to_f32_streamed(src: &[u64], dst: &mut [u32]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if streams_from(src, dst) && super::has_avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VL (checked just above: `Isa::Avx512`).
        return Some(unsafe { kernels::f64_to_f32(src, dst) });
    }
    let _ = (src, dst);
    None
}

/// Bytes of the block [`through_l1`] computes before streaming it out: small enough that
/// the block and the kernel's input for it stay in the L1 cache (48 KiB on this machine),
/// large enough that the per-block call is a small share of the work.
const BLOCK_BYTES: usize = 8 << 10;

/// The block buffer of [`through_l1`], aligned for the aligned loads of the streamed copy.
#[repr(C, align(64))]
struct Block([u64; BLOCK_BYTES / 8]);

/// `kernel(src, dst)`, the kernel of an elementwise map (`dst[i]` a function of `src[i]`
/// only) over the shorter of the two lengths, written out by streamed stores when `dst`
/// is an output to stream ([`streams`]) and the CPU has AVX2: see [`through_l1_words`],
/// which this calls with the kernel behind `dyn`, so that the block loop is compiled once
/// for every word pair and kernel. The kernel is the same, so are its results.
///
/// For kernels that store through the cache and write as many bytes as they read, or
/// more: with plain stores every output line is first read from memory.
#[inline]
pub(crate) fn through_l1<S: Word, W: Word>(
    src: &[S],
    dst: &mut [W],
    mut kernel: impl FnMut(&[S], &mut [W]),
) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    #[cfg(target_arch = "x86_64")]
    if streams_from(src, dst) && super::has_avx2() {
        let words = |s: Words<'_>, d: WordsMut<'_>| {
            let len = d.len();
            if let (Some(s), Some(d)) = (S::of(s), W::of_mut(d)) {
                kernel(s, d);
            }
            len
        };
        blocks(S::words(src), W::words_mut(dst), &mut { words });
        return;
    }
    kernel(src, dst);
}

/// `kernel(src, dst)` over the shorter length, block by block through L1 and streamed
/// out, when `dst` is an output to stream ([`streams_from`]) and the CPU has AVX2: plain
/// stores up to `dst`'s first 32-byte boundary, then the kernel computes each block of
/// [`BLOCK_BYTES`] into a buffer that stays in L1 and `vmovntdq` copies it to `dst`, then
/// `sfence`, then the kernel on the last partial block by plain stores. `kernel` returns
/// how many of its elements it did (a prefix, as `convert::blocks::by_blocks` does), and
/// so does this; `None` (nothing written) when the output does not stream.
///
/// Not generic: the block loop is compiled once, and a caller pays only for its call and
/// the `dyn` kernel (numcodecs.astype's widening pairs). For cheap kernels whose output is
/// wider than their input: the avoided read of each output line is then most of the
/// traffic, which pays for the block copy (astype `int16 -> float64`, 32 MiB out: 4.2-5.6
/// -> 2.7-4.1 ms by minima; from the registers, [`ints_to_f64_streamed`], 2.5 -> 1.8).
/// Slower this way: narrowing casts (`f64 -> i32`,
/// `int32 -> float32`), whose outputs stream from the registers ([`streamed`]), and
/// `f32 -> u64` towards zero (2.7 instructions an element: 3.9-4.6 -> 4.8-5.2 ms).
pub(crate) fn through_l1_words(
    src: Words<'_>,
    dst: WordsMut<'_>,
    kernel: &mut dyn FnMut(Words<'_>, WordsMut<'_>) -> usize,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && streams_bytes(src.len() * src.bits() as usize / 8, &dst) {
        return Some(blocks(src, dst, kernel));
    }
    let _ = (src, dst, kernel);
    None
}

/// [`streams_from`] for word slices: `src_bytes` of input written to `dst`.
#[cfg(target_arch = "x86_64")]
fn streams_bytes(src_bytes: usize, dst: &WordsMut<'_>) -> bool {
    let bytes = dst.len() * dst.bits() as usize / 8;
    if in_fresh(address(dst), bytes) {
        return false;
    }
    if bytes >= STREAM_MIN {
        return src_bytes.saturating_add(bytes) > cached_max();
    }
    let start = address(dst);
    let (lo, hi) = STREAM_REGION.with(std::cell::Cell::get);
    lo < hi && lo <= start && start + bytes <= hi
}

/// The address of `w`'s first word.
fn address(w: &WordsMut<'_>) -> usize {
    match w {
        WordsMut::U8(s) => s.as_ptr() as usize,
        WordsMut::U16(s) => s.as_ptr() as usize,
        WordsMut::U32(s) => s.as_ptr() as usize,
        WordsMut::U64(s) => s.as_ptr() as usize,
    }
}

/// The first `n` words of `bits` width of `buf`.
#[cfg(target_arch = "x86_64")]
fn block_words(buf: &mut Block, bits: u32, n: usize) -> WordsMut<'_> {
    let p = buf.0.as_mut_ptr();
    // SAFETY: `u8`, `u16`, `u32` and `u64` take every bit pattern, their alignment (at most
    // 8) divides the buffer's, and `n` of them fit in its `BLOCK_BYTES` (the callers' `n`
    // is at most `BLOCK_BYTES / (bits / 8)`); the buffer is borrowed as long as the words.
    unsafe {
        match bits {
            8 => WordsMut::U8(std::slice::from_raw_parts_mut(p.cast(), n)),
            16 => WordsMut::U16(std::slice::from_raw_parts_mut(p.cast(), n)),
            32 => WordsMut::U32(std::slice::from_raw_parts_mut(p.cast(), n)),
            _ => WordsMut::U64(std::slice::from_raw_parts_mut(p, n)),
        }
    }
}

/// The streamed path of [`through_l1_words`] (and so of [`through_l1`]): once for all word
/// widths and kernels, the kernel called through `dyn`, once per block.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn blocks(
    src: Words<'_>,
    mut dst: WordsMut<'_>,
    kernel: &mut dyn FnMut(Words<'_>, WordsMut<'_>) -> usize,
) -> usize {
    let n = src.len().min(dst.len());
    let (bits, size) = (dst.bits(), dst.bits() as usize / 8);
    // Words up to the first 32-byte boundary (an address is a multiple of its word size).
    let head = (address(&dst).wrapping_neg() % 32 / size).min(n);
    let per = BLOCK_BYTES / size;
    let body = head + (n - head) / per * per;
    let done = kernel(src.sub(0, head), dst.sub(0, head));
    if done < head {
        return done;
    }
    let mut buf = Block([0; BLOCK_BYTES / 8]);
    for at in (head..body).step_by(per) {
        let mut b = block_words(&mut buf, bits, per);
        let done = kernel(src.sub(at, at + per), b.sub(0, per));
        if done < per {
            dst.sub(at, at + done).copy_from(b.as_words().sub(0, done));
            stream_fence();
            return at + done;
        }
        let to = address(&dst.sub(at, at + per)) as *mut u8;
        // SAFETY: AVX2 (the callers checked it). The buffer is 64-byte aligned and holds
        // `BLOCK_BYTES`; `to` is `dst`'s word `at`, `head` (its first 32-byte boundary)
        // plus a multiple of `BLOCK_BYTES` words, so 32-byte aligned, with `per` words
        // (`BLOCK_BYTES`) writable from it, taken from `dst` just above, which is not
        // otherwise used while the copy writes.
        unsafe { kernels::copy_streamed(buf.0.as_ptr().cast(), to, BLOCK_BYTES / 32) };
    }
    stream_fence();
    body + kernel(src.sub(body, n), dst.sub(body, n))
}

/// The one shape of a conversion whose output can be streamed: `plain` on the elements
/// before `dst`'s first `ALIGN`-byte boundary (none when `ALIGN` is 1), `step` on each
/// whole chunk of `L` elements from there, `plain` on the rest; with `FENCE`, an `sfence`
/// after the last step (or at a stop), which orders the streamed stores before any later
/// store, as plain ones are. A kernel gets a streamed output by passing a `step` that
/// stores its chunk by `vmovnt*`: each chunk of `dst` starts `ALIGN`-aligned when `L`
/// elements are a multiple of `ALIGN` bytes. `step` and `plain` return how many of their
/// elements they did, a prefix; this returns how many elements are done, stopping after
/// the first that did fewer than all (for the non-stopping kernels a constant, and the
/// test folds away).
///
/// `#[inline(always)]` and no target feature of its own: it is inlined into the caller's
/// `#[target_feature]` kernel, and its closures, which carry the caller's features, into
/// that (a helper with fewer features than its closures would keep them out of line).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn streamed<S, D, const L: usize, const ALIGN: usize, const FENCE: bool>(
    src: &[S],
    dst: &mut [D],
    mut plain: impl FnMut(&[S], &mut [D]) -> usize,
    mut step: impl FnMut(&[S; L], &mut [D; L]) -> usize,
) -> usize {
    let n = src.len().min(dst.len());
    let head = dst.as_ptr().align_offset(ALIGN).min(n);
    let body = head + (n - head) / L * L;
    let done = plain(&src[..head], &mut dst[..head]);
    if done < head {
        return done;
    }
    // An index stepped to `body`, as the kernels' own loops were written: LLVM then counts
    // the steps down (a chunk iterator's index took one more instruction a step).
    let mut i = head;
    while i < body {
        // SAFETY: `head <= i` and `i + L <= body <= n`, at most both lengths: `L` elements
        // of each slice from `i`, `dst`'s exclusively borrowed for the step.
        let (x, y) = unsafe {
            (
                &*src.as_ptr().add(i).cast::<[S; L]>(),
                &mut *dst.as_mut_ptr().add(i).cast::<[D; L]>(),
            )
        };
        let done = step(x, y);
        if done < L {
            if FENCE {
                stream_fence();
            }
            return i + done;
        }
        i += L;
    }
    if FENCE {
        stream_fence();
    }
    body + plain(&src[body..n], &mut dst[body..n])
}

/// The 64-byte vector `v` stored at `p`: by `vmovntdq` with `STREAM`, else by an unaligned
/// store (the step of a kernel built both ways, `super::widen`'s and `super::float_float`'s).
///
/// # Safety
/// The CPU must have AVX-512 F (the caller's features: this is inlined into it); `p` must
/// be writable for 64 bytes, and 64-byte aligned with `STREAM`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn store_64<const STREAM: bool>(p: *mut u8, v: std::arch::x86_64::__m512i) {
    use std::arch::x86_64::{_mm512_storeu_si512, _mm512_stream_si512};
    // SAFETY: the caller's guarantee.
    unsafe {
        if STREAM {
            _mm512_stream_si512(p.cast(), v);
        } else {
            _mm512_storeu_si512(p.cast(), v);
        }
    }
}

/// The vectors `next(0)`, `next(1)`, ... (until one is `None`, or `steps` of them) as
/// bytes `64g..64g + 64` of `out`, however `out` is aligned: each whole 64-byte line of
/// `out` by `vmovntdq`, the end of one vector and the start of the next put together by
/// `vpermt2b`; the bytes before the first line and after the last by masked plain stores;
/// then `sfence`. Returns how many vectors were stored. For the decodes whose steps write
/// whole vectors to outputs that start anywhere (a large allocation starts 16 bytes past
/// a page).
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI (the caller's features: this is inlined into
/// it); `out` holds at least `64 * steps` bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn stream_lines(
    out: &mut [u8],
    steps: usize,
    mut next: impl FnMut(usize) -> Option<std::arch::x86_64::__m512i>,
) -> usize {
    use std::arch::x86_64::*;
    let Some(first) = (if steps > 0 { next(0) } else { None }) else {
        return 0;
    };
    let p = out.as_mut_ptr();
    // Bytes before the first line: 0 to 63 (`align_offset` is at most 63 here).
    let head = p.align_offset(64) % 64;
    let low = (1u64 << head) - 1;
    let mut idx = [0u8; 64];
    for (i, x) in idx.iter_mut().enumerate() {
        // Byte `head + i` of the pair (previous, next): bit 6 picks the next vector.
        *x = (head + i) as u8;
    }
    // SAFETY: 64 bytes from an array of 64; the CPU features are the caller's; `head < 64`
    // bytes of `out`, which holds the `64 * steps` bytes of at least one vector.
    let idx = unsafe { _mm512_loadu_si512(idx.as_ptr().cast()) };
    unsafe { _mm512_mask_storeu_epi8(p.cast(), low, first) };
    let (mut prev, mut g) = (first, 1);
    while g < steps {
        let Some(y) = next(g) else {
            break;
        };
        // SAFETY: the caller's features (VBMI for `vpermt2b`); the line is bytes
        // `head + 64(g - 1) .. head + 64g`, within the `64 * steps` bytes of `out`
        // (`g < steps`), and starts on a 64-byte boundary (`p + head` is one).
        unsafe {
            let line = _mm512_permutex2var_epi8(prev, idx, y);
            _mm512_stream_si512(p.add(head + 64 * (g - 1)).cast(), line);
        }
        prev = y;
        g += 1;
    }
    // SAFETY: bytes `64(g - 1) + head .. 64g` of `out`, `g <= steps`; SSE for the fence.
    unsafe {
        _mm512_mask_storeu_epi8(p.add(64 * (g - 1)).cast(), !low, prev);
        _mm_sfence();
    }
    g
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use super::streamed;
    use crate::number::storage::Word;
    use std::arch::x86_64::*;

    /// `out[i] = t[codes[i]]` over the shorter length, by plain stores.
    fn plain<W: Copy>(t: &[W; 256], codes: &[u8], out: &mut [W]) -> usize {
        for (d, &c) in out.iter_mut().zip(codes) {
            *d = t[usize::from(c)];
        }
        codes.len()
    }

    /// `out[i] = t[codes[i]]`, 4 words per streamed vector (see `lookup_bytes`).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lookup_u64(t: &[u64; 256], codes: &[u8], out: &mut [u64]) {
        let at = |c: u8| t[usize::from(c)] as i64;
        let step = |c: &[u8; 4], y: &mut [u64; 4]| {
            let v = _mm256_setr_epi64x(at(c[0]), at(c[1]), at(c[2]), at(c[3]));
            // SAFETY: `y` is a 32-byte chunk of `out` on a 32-byte boundary (`streamed`),
            // as `vmovntdq` requires; AVX2 is the caller's guarantee.
            unsafe { _mm256_stream_si256(y.as_mut_ptr().cast(), v) };
            4
        };
        streamed::<_, _, 4, 32, true>(codes, out, |c, o| plain(t, c, o), step);
    }

    /// `out[i] = t[codes[i]]`, 8 words per streamed vector (see `lookup_bytes`).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lookup_u32(t: &[u32; 256], codes: &[u8], out: &mut [u32]) {
        let at = |c: u8| t[usize::from(c)] as i32;
        let step = |c: &[u8; 8], y: &mut [u32; 8]| {
            let (lo, hi) = (&c[..4], &c[4..]);
            let v = _mm256_setr_epi32(
                at(lo[0]),
                at(lo[1]),
                at(lo[2]),
                at(lo[3]),
                at(hi[0]),
                at(hi[1]),
                at(hi[2]),
                at(hi[3]),
            );
            // SAFETY: as in `lookup_u64`.
            unsafe { _mm256_stream_si256(y.as_mut_ptr().cast(), v) };
            8
        };
        streamed::<_, _, 8, 32, true>(codes, out, |c, o| plain(t, c, o), step);
    }

    /// `vectors` 32-byte vectors from `from` to `to` by `vmovdqa` loads and `vmovntdq`
    /// stores, four a step.
    ///
    /// # Safety
    /// The CPU must have AVX2; `from` and `to` are 32-byte aligned, `from` readable and
    /// `to` writable for `32 * vectors` bytes, not overlapping.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn copy_streamed(from: *const u8, to: *mut u8, vectors: usize) {
        // SAFETY: every access is a 32-byte vector at `32 * k`, `k < vectors`: within both
        // ranges, and aligned as `vmovdqa` and `vmovntdq` require (the caller's guarantee).
        // Pointers stepped to an end (not an index) keep the loop at one add per side.
        unsafe {
            let (mut from, mut to) = (from.cast::<__m256i>(), to.cast::<__m256i>());
            let end = to.add(vectors);
            let quads = to.add(vectors & !3);
            while to < quads {
                let (a, b) = (_mm256_load_si256(from), _mm256_load_si256(from.add(1)));
                let (c, d) = (
                    _mm256_load_si256(from.add(2)),
                    _mm256_load_si256(from.add(3)),
                );
                _mm256_stream_si256(to, a);
                _mm256_stream_si256(to.add(1), b);
                _mm256_stream_si256(to.add(2), c);
                _mm256_stream_si256(to.add(3), d);
                (from, to) = (from.add(4), to.add(4));
            }
            while to < end {
                _mm256_stream_si256(to, _mm256_load_si256(from));
                (from, to) = (from.add(1), to.add(1));
            }
        }
    }

    /// `one` on each element of `src` into `dst` (the shorter length), by plain stores.
    #[inline(always)]
    fn each<S: Copy, D>(src: &[S], dst: &mut [D], one: impl Fn(S) -> D) -> usize {
        for (x, y) in src.iter().zip(dst.iter_mut()) {
            *y = one(*x);
        }
        src.len()
    }

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quantize_f32(scale: f32, inv: f32, src: &[u32], dst: &mut [u32]) {
        let one = |x: u32| ((f32::from_bits(x) * scale).round_ties_even() * inv).to_bits();
        let (s, v) = (_mm256_set1_ps(scale), _mm256_set1_ps(inv));
        const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
        // Four vectors a step, as the vectorized loop is unrolled: the loop's own
        // instructions are then a fifth of the whole.
        let step = |x: &[u32; 32], y: &mut [u32; 32]| {
            for (x, y) in x.as_chunks::<8>().0.iter().zip(y.as_chunks_mut::<8>().0) {
                // SAFETY: `y` is one of the 8-word vectors of a chunk on a 32-byte
                // boundary (`streamed`), so 32-byte aligned, as `vmovntps` requires; the
                // load and the store touch only `x` and `y`. AVX2 is the caller's
                // guarantee.
                unsafe {
                    let r = _mm256_round_ps::<NEAREST>(_mm256_mul_ps(
                        _mm256_loadu_ps(x.as_ptr().cast()),
                        s,
                    ));
                    _mm256_stream_ps(y.as_mut_ptr().cast(), _mm256_mul_ps(r, v));
                }
            }
            32
        };
        streamed::<_, _, 32, 32, true>(src, dst, |s, d| each(s, d, one), step);
    }

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn bitround_u32(c: super::BitRound32, src: &[u32], dst: &mut [u32]) {
        let one = |b: u32| {
            let r = b.wrapping_add((b >> c.shift) & 1).wrapping_add(c.half) & c.keep;
            if b & c.mag > c.inf { b } else { r }
        };
        let count = _mm_cvtsi32_si128(c.shift as i32);
        let (half, keep) = (
            _mm256_set1_epi32(c.half as i32),
            _mm256_set1_epi32(c.keep as i32),
        );
        let (mag, inf) = (
            _mm256_set1_epi32(c.mag as i32),
            _mm256_set1_epi32(c.inf as i32),
        );
        let low = _mm256_set1_epi32(1);
        // Four vectors a step, as `quantize_f32`.
        let step = |x: &[u32; 32], y: &mut [u32; 32]| {
            for (x, y) in x.as_chunks::<8>().0.iter().zip(y.as_chunks_mut::<8>().0) {
                // SAFETY: `y` is one of the 8-word vectors of a chunk on a 32-byte
                // boundary (`streamed`), so 32-byte aligned, as `vmovntdq` requires; the
                // load and the store touch only `x` and `y`. AVX2 is the caller's
                // guarantee.
                unsafe {
                    let b = _mm256_loadu_si256(x.as_ptr().cast());
                    let odd = _mm256_and_si256(_mm256_srl_epi32(b, count), low);
                    let r =
                        _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(b, odd), half), keep);
                    // Magnitudes are below 2^31: a signed compare finds the NaNs.
                    let nan = _mm256_cmpgt_epi32(_mm256_and_si256(b, mag), inf);
                    _mm256_stream_si256(y.as_mut_ptr().cast(), _mm256_blendv_epi8(r, b, nan));
                }
            }
            32
        };
        streamed::<_, _, 32, 32, true>(src, dst, |s, d| each(s, d, one), step);
    }

    /// One element of [`f64_to_i32`] outside its vector body: `None` where a lane would
    /// stop the vectors (the conversion's `0x8000_0000`).
    fn f64_to_i32_one(x: u64) -> Option<u32> {
        let r = f64::from_bits(x).round_ties_even();
        // `r` is integral or NaN: in `i32`'s range but above `i32::MIN` exactly when
        // the vectors would store it.
        (r > i32::MIN as f64 && r <= i32::MAX as f64).then_some(r as i32 as u32)
    }

    /// One element of [`f64_to_f32`] outside its vector body: `None` for an infinite or
    /// NaN result.
    fn f64_to_f32_one(x: u64) -> Option<u32> {
        let y = f64::from_bits(x) as f32;
        y.is_finite().then_some(y.to_bits())
    }

    /// The loop of [`f64_to_i32`] and [`f64_to_f32`]: `one` on each element up to `dst`'s
    /// first 32-byte boundary, `eight` on each 8 words from there (the converted vector
    /// and the mask of its lanes to stop at) stored by `vmovntdq`, two vectors a step so
    /// that one branch tests both, and `one` on the rest; stops before the first vector
    /// (or element) with a lane to stop at. Returns how many elements are done.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VL.
    #[inline(always)]
    unsafe fn stream_8(
        src: &[u64],
        dst: &mut [u32],
        one: impl Fn(u64) -> Option<u32>,
        eight: impl Fn(&[u64; 8]) -> (__m256i, u8),
    ) -> usize {
        let scalar = |src: &[u64], dst: &mut [u32]| {
            for (i, (x, y)) in src.iter().zip(dst.iter_mut()).enumerate() {
                match one(*x) {
                    Some(v) => *y = v,
                    None => return i,
                }
            }
            src.len()
        };
        let step = |x: &[u64; 16], y: &mut [u32; 16]| {
            let x = x.as_chunks::<8>().0;
            let ((a, stop_a), (b, stop_b)) = (eight(&x[0]), eight(&x[1]));
            if stop_a | stop_b != 0 {
                // The first vector is done unless it stops too.
                if stop_a != 0 {
                    return 0;
                }
                // SAFETY: as below.
                unsafe { _mm256_stream_si256(y.as_mut_ptr().cast(), a) };
                return 8;
            }
            // SAFETY: `y` is a 16-word chunk of `dst` on a 32-byte boundary (`streamed`):
            // two 32-byte vectors, each 32-byte aligned, as `vmovntdq` requires.
            unsafe {
                _mm256_stream_si256(y.as_mut_ptr().cast(), a);
                _mm256_stream_si256(y.as_mut_ptr().add(8).cast(), b);
            }
            16
        };
        streamed::<_, _, 16, 32, true>(src, dst, scalar, step)
    }

    /// # Safety
    /// The CPU must have AVX-512 F, BW and VL.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn f64_to_i32(src: &[u64], dst: &mut [u32]) -> usize {
        const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
        let indefinite = _mm256_set1_epi32(i32::MIN);
        let eight = |x: &[u64; 8]| {
            // SAFETY: `x` is 64 readable bytes; AVX-512 F and VL are the caller's
            // guarantee.
            let v =
                unsafe { _mm512_cvt_roundpd_epi32::<NEAREST>(_mm512_loadu_pd(x.as_ptr().cast())) };
            (v, _mm256_cmpeq_epi32_mask(v, indefinite))
        };
        // SAFETY: the caller's guarantee.
        unsafe { stream_8(src, dst, f64_to_i32_one, eight) }
    }

    /// # Safety
    /// The CPU must have AVX-512 F, BW and VL.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn f64_to_f32(src: &[u64], dst: &mut [u32]) -> usize {
        const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
        let exponent = _mm256_set1_epi32(0x7f80_0000);
        let eight = |x: &[u64; 8]| {
            // SAFETY: `x` is 64 readable bytes; AVX-512 F and VL are the caller's
            // guarantee.
            let v = unsafe {
                _mm256_castps_si256(_mm512_cvt_roundpd_ps::<NEAREST>(_mm512_loadu_pd(
                    x.as_ptr().cast(),
                )))
            };
            // An all-ones exponent: infinite or NaN.
            (
                v,
                _mm256_cmpeq_epi32_mask(_mm256_and_si256(v, exponent), exponent),
            )
        };
        // SAFETY: the caller's guarantee.
        unsafe { stream_8(src, dst, f64_to_f32_one, eight) }
    }

    /// The words of an integer type of at most 32 bits, as [`ints_to_f64`] widens them.
    pub(super) trait IntWord: Word {
        /// 8 words from `p` in `i32` lanes, sign-extended with `SIGNED` (zero-extended
        /// otherwise; 32-bit words as they are).
        ///
        /// # Safety
        /// The CPU must have AVX2; `p` must be readable for 8 words.
        unsafe fn eight<const SIGNED: bool>(p: *const Self) -> __m256i;
    }

    impl IntWord for u8 {
        #[inline(always)]
        unsafe fn eight<const SIGNED: bool>(p: *const u8) -> __m256i {
            // SAFETY: 8 readable bytes (the caller's guarantee); AVX2 likewise.
            unsafe {
                let v = _mm_loadl_epi64(p.cast());
                if SIGNED {
                    _mm256_cvtepi8_epi32(v)
                } else {
                    _mm256_cvtepu8_epi32(v)
                }
            }
        }
    }

    impl IntWord for u16 {
        #[inline(always)]
        unsafe fn eight<const SIGNED: bool>(p: *const u16) -> __m256i {
            // SAFETY: 16 readable bytes (the caller's guarantee); AVX2 likewise.
            unsafe {
                let v = _mm_loadu_si128(p.cast());
                if SIGNED {
                    _mm256_cvtepi16_epi32(v)
                } else {
                    _mm256_cvtepu16_epi32(v)
                }
            }
        }
    }

    impl IntWord for u32 {
        #[inline(always)]
        unsafe fn eight<const SIGNED: bool>(p: *const u32) -> __m256i {
            // SAFETY: 32 readable bytes (the caller's guarantee); AVX2 likewise. An
            // unsigned word has its top bit flipped: `ints_to_f64` adds `2^31` back.
            unsafe {
                let v = _mm256_loadu_si256(p.cast());
                if SIGNED {
                    v
                } else {
                    _mm256_xor_si256(v, _mm256_set1_epi32(i32::MIN))
                }
            }
        }
    }

    /// The `f64` bits of each integer word (see `ints_to_f64_streamed`), 8 a step by
    /// `vmovntpd`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn ints_to_f64<W: IntWord, const SIGNED: bool>(src: &[W], dst: &mut [u64]) {
        let bits = W::BITS;
        let one = |x: W| {
            let v = x.to_u64();
            let v = if SIGNED {
                ((v << (64 - bits)) as i64 >> (64 - bits)) as f64
            } else {
                v as f64
            };
            v.to_bits()
        };
        // An unsigned 32-bit word went through `i32` lanes with its top bit flipped, so
        // `2^31` too little: added back, exactly (both terms and the sum fit 53 bits).
        let biased = W::BITS == 32 && !SIGNED;
        let bias = _mm256_set1_pd(2147483648.0);
        let f64s = |v: __m128i| {
            let d = _mm256_cvtepi32_pd(v);
            if biased { _mm256_add_pd(d, bias) } else { d }
        };
        let step = |x: &[W; 8], y: &mut [u64; 8]| {
            // SAFETY: `x` is 8 readable words; `y` is an 8-word chunk of `dst` on a
            // 32-byte boundary (`streamed`): two 32-byte vectors, each aligned as
            // `vmovntpd` requires. AVX2 is the caller's guarantee.
            unsafe {
                let v = W::eight::<SIGNED>(x.as_ptr());
                let (lo, hi) = (_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
                _mm256_stream_pd(y.as_mut_ptr().cast(), f64s(lo));
                _mm256_stream_pd(y.as_mut_ptr().add(4).cast(), f64s(hi));
            }
            8
        };
        streamed::<_, _, 8, 32, true>(src, dst, |s, d| each(s, d, one), step);
    }

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn i32_to_f32(src: &[u32], dst: &mut [u32]) {
        let one = |x: u32| (x as i32 as f32).to_bits();
        let step = |x: &[u32; 8], y: &mut [u32; 8]| {
            // SAFETY: `y` is an 8-word chunk of `dst` on a 32-byte boundary (`streamed`),
            // as `vmovntps` requires; the load reads `x`. AVX2 is the caller's guarantee.
            unsafe {
                let v = _mm256_cvtepi32_ps(_mm256_loadu_si256(x.as_ptr().cast()));
                _mm256_stream_ps(y.as_mut_ptr().cast(), v);
            }
            8
        };
        streamed::<_, _, 8, 32, true>(src, dst, |s, d| each(s, d, one), step);
    }
}

/// Order the non-temporal stores of a streamed kernel before any later store (`sfence`),
/// as plain stores are: called once after the last block.
#[inline]
pub(crate) fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE, which every x86-64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::{BLOCK_BYTES, CACHED_MAX, Region, STREAM_MIN, streams_from, through_l1};
    use crate::isa::{Isa, with_max_isa};
    use crate::number::storage::{Word, Words, WordsMut};

    /// A large output streams unless it fits in the cache with its input (on AMD's CPUs;
    /// elsewhere always, see `cached_max`); a small one only as a chunk of a parallel call's
    /// large output.
    #[test]
    fn large_outputs_stream_unless_they_fit_with_their_input() {
        let out = vec![0u32; STREAM_MIN / 4];
        let (quarter, half) = (vec![0u8; STREAM_MIN / 4], vec![0u16; STREAM_MIN / 4]);
        let streamed = super::cached_max() == 0;
        assert_eq!(super::cached_max() == CACHED_MAX, crate::arch::is_amd());
        assert_eq!(streams_from(&quarter, &out[..]), streamed, "20 MiB in all");
        assert_eq!(streams_from(&half, &out[..]), streamed, "24 MiB in all");
        assert!(streams_from(&out[..], &out[..]), "32 MiB in all: streamed");
        let big = vec![0u32; CACHED_MAX / 4];
        assert!(streams_from(&quarter, &big[..]), "30 MiB in all: streamed");
        assert!(!streams_from(&out[..], &out[..8]), "a small output");
        Region::of(&out[..], &out[..]).streaming(|| {
            assert!(
                streams_from(&quarter[..8], &out[..8]),
                "a chunk of a large output"
            );
        });
        // A parallel call's chunks stream only when the whole call would.
        Region::of(&quarter[..], &out[..]).streaming(|| {
            assert_eq!(
                streams_from(&quarter[..8], &out[..8]),
                streamed,
                "chunks of an output cached on AMD's CPUs"
            );
        });
    }

    /// A map whose every output word depends on its input word and on nothing else.
    fn mix<W: Word>(x: W) -> W {
        let v = x.to_u64().wrapping_mul(0x9e37_79b9_7f4a_7c15);
        W::from_u64(v ^ (v >> 29) ^ 0x5a5a)
    }

    /// `through_l1` with `mix` equals `mix` element by element, at every level, for every
    /// output offset from a 32-byte boundary and lengths around the block size, inside a
    /// large output's region (so that it streams), with the words around the output
    /// untouched.
    fn through_l1_is_the_kernel<W: Word>() {
        let per = BLOCK_BYTES / std::mem::size_of::<W>();
        let n = STREAM_MIN / std::mem::size_of::<W>() + 3 * per;
        let src: Vec<W> = (0..n as u64)
            .map(|i| W::from_u64(i * 0x1234_5677))
            .collect();
        let kernel = |s: &[W], d: &mut [W]| {
            for (x, y) in s.iter().zip(d) {
                *y = mix(*x);
            }
        };
        let lens = [
            0,
            1,
            3,
            7,
            31,
            per - 1,
            per,
            per + 1,
            2 * per + 5,
            3 * per - 3,
        ];
        let sentinel = W::from_u64(0xa5a5_a5a5_a5a5_a5a5);
        for level in Isa::available() {
            with_max_isa(level, || {
                let mut out = vec![sentinel; n];
                let region = Region::of(&out[..], &out[..]);
                for start in 0..32 / std::mem::size_of::<W>() + 1 {
                    for &len in &lens {
                        let at = 64 + start;
                        region.streaming(|| {
                            through_l1(&src[at..at + len], &mut out[at..], kernel);
                        });
                        let want = src[at..at + len].iter().map(|&x| mix(x));
                        assert!(
                            out[at..at + len].iter().copied().eq(want),
                            "{level:?} {start} {len}"
                        );
                        assert!(
                            out[..at]
                                .iter()
                                .chain(&out[at + len..])
                                .all(|&w| w == sentinel)
                        );
                        out[at..at + len].fill(sentinel);
                    }
                }
                // A whole output above `STREAM_MIN`, which streams by its size alone.
                let at = 5;
                through_l1(&src[at..], &mut out[at..], kernel);
                let want = src[at..].iter().map(|&x| mix(x));
                assert!(out[at..].iter().copied().eq(want), "{level:?} whole");
            });
        }
    }

    /// `streamed`'s shape with closures for a step and a plain kernel (no intrinsics):
    /// every element written once by the one that owns it, steps only on `ALIGN`-aligned
    /// chunks, the count of a stop in the head, a step or the tail, for every offset from a
    /// 64-byte boundary and lengths around the step.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn streamed_writes_each_element_once_and_stops_where_told() {
        let n = 300;
        let src: Vec<u32> = (0..n as u32).map(|i| i * 7 + 1).collect();
        let mut out = vec![0u64; n + 64];
        for start in 0..9 {
            for len in [0, 1, 7, 15, 16, 17, 31, 33, 64, 100, 255] {
                for stop in [None, Some(0), Some(3), Some(len / 2), Some(len.max(1) - 1)] {
                    let stop = stop.filter(|&s| s < len);
                    out.fill(0);
                    let base = out.as_ptr().align_offset(64) + start;
                    let dst = &mut out[base..base + len];
                    let origin = dst.as_ptr() as usize;
                    let at = |p: *const u64| (p as usize - origin) / 8;
                    let hit = |i: usize| stop == Some(i);
                    let plain = |x: &[u32], y: &mut [u64]| {
                        for (k, (a, b)) in x.iter().zip(y.iter_mut()).enumerate() {
                            if hit(at(b)) {
                                return k;
                            }
                            *b = u64::from(*a) << 1;
                        }
                        x.len()
                    };
                    let step = |x: &[u32; 8], y: &mut [u64; 8]| {
                        assert!((y.as_ptr() as usize).is_multiple_of(64), "an aligned chunk");
                        for (k, (a, b)) in x.iter().zip(y.iter_mut()).enumerate() {
                            if hit(at(b)) {
                                return k;
                            }
                            *b = u64::from(*a) << 1 | 1;
                        }
                        8
                    };
                    let done = super::streamed::<u32, u64, 8, 64, true>(&src, dst, plain, step);
                    assert_eq!(done, stop.unwrap_or(len), "{start} {len} {stop:?}");
                    let head = (8 - start % 8) % 8;
                    for (i, &w) in out[base..base + len].iter().enumerate() {
                        let stepped =
                            i >= head.min(len) && i < head + (len - head.min(len)) / 8 * 8;
                        let want = if i >= done {
                            0
                        } else {
                            u64::from(src[i]) << 1 | u64::from(stepped)
                        };
                        assert_eq!(w, want, "{start} {len} {stop:?} at {i}");
                    }
                }
            }
        }
    }

    /// A widening kernel that writes `mix` of each source word and declines (returns its
    /// count so far) at the global index `stop`, found from the source's address.
    fn widening_kernel<S: Word, W: Word>(
        src: &[S],
        stop: usize,
    ) -> impl FnMut(Words<'_>, WordsMut<'_>) -> usize + '_ {
        let origin = src.as_ptr() as usize;
        move |s, d| {
            let (s, d) = (S::of(s).unwrap(), W::of_mut(d).unwrap());
            let first = (s.as_ptr() as usize - origin) / std::mem::size_of::<S>();
            for (k, (x, y)) in s.iter().zip(d.iter_mut()).enumerate() {
                if first + k == stop {
                    return k;
                }
                *y = W::from_u64(mix(x.to_u64()));
            }
            s.len().min(d.len())
        }
    }

    /// `through_l1_words` with a widening kernel: the kernel's words up to its first
    /// decline, which it returns, and nothing else written, at every level, every output
    /// offset from a 32-byte boundary, lengths around the block inside a large output's
    /// region, and whole outputs at and around `STREAM_MIN` bytes (streamed exactly when
    /// `streams_from` says), with declines in the head, a block's first, middle and last
    /// word, and the tail.
    fn through_l1_words_is_the_kernel<S: Word, W: Word>() {
        let size = std::mem::size_of::<W>();
        let per = BLOCK_BYTES / size;
        let n = STREAM_MIN / size + 2 * per + 64;
        let src: Vec<S> = (0..n as u64)
            .map(|i| S::from_u64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7))
            .collect();
        let sentinel = W::from_u64(0xa5a5_a5a5_a5a5_a5a5);
        let mut out = vec![sentinel; n];
        let check = |out: &mut Vec<W>, at: usize, len: usize, stop: usize, ctx: &str| {
            let dst = &mut out[at..at + len];
            let streams = streams_from(&src[at..at + len], &dst[..]) && crate::arch::has_avx2();
            let mut kernel = widening_kernel::<S, W>(&src, stop);
            let r = super::through_l1_words(
                S::words(&src[at..at + len]),
                W::words_mut(dst),
                &mut kernel,
            );
            let done = (stop.max(at) - at).min(len);
            assert_eq!(r, streams.then_some(done), "{ctx}");
            if r.is_none() {
                return;
            }
            let want = src[at..at + done]
                .iter()
                .map(|x| W::from_u64(mix(x.to_u64())));
            assert!(out[at..at + done].iter().copied().eq(want), "{ctx}");
            assert!(
                out[..at]
                    .iter()
                    .chain(&out[at + done..])
                    .all(|&w| w == sentinel),
                "{ctx}: words beyond"
            );
            out[at..at + done].fill(sentinel);
        };
        for level in Isa::available() {
            with_max_isa(level, || {
                let region = Region::of(&out[..], &out[..]);
                for start in 0..32 / size + 1 {
                    let at = 64 + start;
                    for len in [0, 1, 3, 31, per - 1, per, per + 1, 2 * per + 5] {
                        for stop in [usize::MAX, at + 1, at + len / 2, at + len.max(1) - 1] {
                            let ctx = format!("{level:?} region {start} {len} {stop}");
                            region.streaming(|| check(&mut out, at, len, stop, &ctx));
                        }
                    }
                }
                // Whole outputs at the threshold: one word below it, at it, one above.
                let at = 3;
                for len in [
                    STREAM_MIN / size - 1,
                    STREAM_MIN / size,
                    STREAM_MIN / size + 1,
                ] {
                    let ctx = format!("{level:?} whole {len}");
                    check(&mut out, at, len, usize::MAX, &ctx);
                }
                // Declines in the head, the first block, a block's middle and last word, the
                // tail.
                let len = STREAM_MIN / size + per + 17;
                let head = (32 - (out[at..].as_ptr() as usize) % 32) / size;
                for stop in [
                    at + 1,
                    at + head,
                    at + head + per / 2,
                    at + head + 2 * per - 1,
                    at + len - 2,
                ] {
                    let ctx = format!("{level:?} whole, decline at {stop}");
                    check(&mut out, at, len, stop, &ctx);
                }
            });
        }
    }

    /// `bitround_u32_streamed` writes the codec's own bit rounding of each `f32`
    /// (`codec::bitround::kernels::bitround_word`) for every number of kept bits, NaNs and
    /// infinities and subnormals among the values, into an output marked to stream from
    /// every start within a line, the words around it untouched; nothing at the portable
    /// level.
    #[test]
    #[cfg_attr(miri, ignore = "Miri has no non-temporal stores")]
    fn bitround_u32_streamed_is_the_codecs_rounding() {
        use crate::number::layout::FLOAT32 as L;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut src: Vec<u32> = (0..700)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u32
            })
            .collect();
        let specials = [
            0x7fc0_0000,
            0xff80_0001,
            0x7f80_0000,
            0xff80_0000,
            0x0000_0001,
        ];
        for (i, w) in specials.into_iter().enumerate() {
            src[3 * i] = w;
            src[699 - i] = w;
        }
        let sentinel = 0x5a5a_5a5a;
        let mut out = vec![sentinel; 720];
        for k in 0..L.mantissa_bits {
            let c = super::BitRound32::new(&L, k).expect("keepbits below 23");
            assert_eq!(c.inf, 0x7f80_0000);
            let want: Vec<u32> = src
                .iter()
                .map(|&w| crate::codec::bitround::bitround_word(&L, w, k))
                .collect();
            for start in 0..8 {
                let len = 700 - 2 * start;
                let range = out.as_ptr_range();
                let mark = Region(range.start as usize, range.end as usize);
                let dst = &mut out[start..start + len];
                let wrote = mark.streaming(|| super::bitround_u32_streamed(c, &src[..len], dst));
                if !wrote {
                    assert!(!crate::arch::has_avx2(), "declined with AVX2");
                    return;
                }
                let ctx = format!("keepbits {k} start {start}");
                assert!(out[start..start + len] == want[..len], "{ctx}");
                let outside = out[..start].iter().chain(&out[start + len..]);
                assert!(outside.copied().all(|w| w == sentinel), "{ctx}: outside");
                out.fill(sentinel);
                let portable = with_max_isa(Isa::Portable, || {
                    mark.streaming(|| super::bitround_u32_streamed(c, &src[..len], &mut out[..len]))
                });
                assert!(
                    !portable && out.iter().all(|&w| w == sentinel),
                    "{ctx}: portable"
                );
            }
        }
    }

    /// `ints_to_f64_streamed` writes each integer's exact `f64` (8-, 16- and 32-bit words,
    /// signed and not, their extremes among them) into an output marked to stream, from
    /// every start within a 64-byte line, on lengths that leave a head and a tail, leaving
    /// the words around it untouched; at the portable level, and for an output that does
    /// not stream, it writes nothing and says so.
    #[test]
    #[cfg_attr(miri, ignore = "Miri has no non-temporal stores")]
    fn ints_to_f64_streamed_is_each_integers_exact_value() {
        fn check<W: Word>(signed: bool, words: &dyn Fn(&[W]) -> Words<'_>) {
            let bits = W::BITS;
            let exact = |w: u64| {
                let v = if signed {
                    ((w << (64 - bits)) as i64 >> (64 - bits)) as f64
                } else {
                    w as f64
                };
                v.to_bits()
            };
            let n = 1000;
            let mask = u64::MAX >> (64 - bits);
            let mut src: Vec<W> = (0..n as u64)
                .map(|i| W::from_u64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7 & mask))
                .collect();
            for (i, w) in [0, 1, mask, mask >> 1, (mask >> 1) + 1]
                .into_iter()
                .enumerate()
            {
                src[i] = W::from_u64(w);
                src[n - 1 - i] = W::from_u64(w);
            }
            let sentinel = 0x5a5a_5a5a_5a5a_5a5a;
            let mut out = vec![sentinel; n + 16];
            for start in 0..8 {
                for len in [n - 8, n - 13, 7] {
                    let ctx = format!("{bits} bits, signed {signed}, start {start}, len {len}");
                    let range = out.as_ptr_range();
                    let mark = Region(range.start as usize, range.end as usize);
                    let dst = &mut out[start..start + len];
                    let wrote = mark
                        .streaming(|| super::ints_to_f64_streamed(words(&src[..len]), dst, signed));
                    if !wrote {
                        assert!(!crate::arch::has_avx2(), "{ctx}: declined with AVX2");
                        return;
                    }
                    let want = src[..len].iter().map(|w| exact(w.to_u64()));
                    assert!(out[start..start + len].iter().copied().eq(want), "{ctx}");
                    assert!(
                        out[..start]
                            .iter()
                            .chain(&out[start + len..])
                            .all(|&w| w == sentinel),
                        "{ctx}: outside"
                    );
                    out.fill(sentinel);
                }
            }
            // Not streamed: nothing written.
            assert!(!super::ints_to_f64_streamed(
                words(&src),
                &mut out[..n],
                signed
            ));
            let mark = Region(out.as_ptr() as usize, out.as_ptr() as usize + 8 * n);
            let portable = with_max_isa(Isa::Portable, || {
                mark.streaming(|| super::ints_to_f64_streamed(words(&src), &mut out[..n], signed))
            });
            assert!(!portable && out.iter().all(|&w| w == sentinel));
        }
        for signed in [false, true] {
            check::<u8>(signed, &|s| Words::U8(s));
            check::<u16>(signed, &|s| Words::U16(s));
            check::<u32>(signed, &|s| Words::U32(s));
        }
    }

    /// A large output marked fresh does not stream, by any of the three tests, inside
    /// `Fresh::unstreamed`, while another large output does; the mark is gone afterwards.
    #[test]
    fn a_fresh_output_never_streams() {
        use super::{Fresh, streams};
        let mut out = vec![0u64; STREAM_MIN / 8 + 5];
        let other = vec![0u64; STREAM_MIN / 8 + 5];
        let src = vec![0u64; 16];
        let fresh = Fresh::of(&WordsMut::U64(&mut out));
        let all = |o: &mut [u64]| {
            #[cfg(target_arch = "x86_64")]
            let b = super::streams_bytes(128, &WordsMut::U64(o));
            #[cfg(not(target_arch = "x86_64"))]
            let b = true;
            (streams(o), streams_from(&src, o), b)
        };
        assert_eq!(all(&mut out), (true, true, true));
        fresh.unstreamed(|| {
            assert_eq!(all(&mut out), (false, false, false));
            assert_eq!(all(&mut out[4096..]), (false, false, false));
            assert!(streams(&other[..]) && streams_from(&src, &other[..]));
        });
        assert_eq!(all(&mut out), (true, true, true));
    }

    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn through_l1_words_is_the_kernel_at_every_widening() {
        through_l1_words_is_the_kernel::<u8, u16>();
        through_l1_words_is_the_kernel::<u16, u64>();
        through_l1_words_is_the_kernel::<u32, u64>();
        through_l1_words_is_the_kernel::<u8, u32>();
    }

    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn through_l1_is_the_kernel_at_every_width() {
        through_l1_is_the_kernel::<u16>();
        through_l1_is_the_kernel::<u32>();
        through_l1_is_the_kernel::<u64>();
    }

    /// The codecs that write a large output through [`through_l1`] (bitround's float copy,
    /// scale_offset's `f32`/`f64` maps) give the words they give on small slices, which
    /// never stream, at every level and from an unaligned start.
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn large_outputs_are_the_small_slices_results() {
        use crate::ArrayCodec;
        fn check<T: Copy, C: ArrayCodec<In = T, Out = T>>(
            codec: &C,
            src: &[T],
            encode: bool,
            bits: fn(T) -> u64,
        ) {
            let run = |s: &[T], d: &mut [T]| {
                if encode {
                    codec.encode_slice(s, d).unwrap();
                } else {
                    codec.decode_slice(s, d).unwrap();
                }
            };
            let mut want = src.to_vec();
            for (s, d) in src.chunks(1000).zip(want.chunks_mut(1000)) {
                run(s, d);
            }
            for level in Isa::available() {
                with_max_isa(level, || {
                    let mut out = src.to_vec();
                    run(&src[3..], &mut out[3..]);
                    let got = out[3..].iter().map(|&x| bits(x));
                    assert!(got.eq(want[3..].iter().map(|&x| bits(x))), "{level:?}");
                });
            }
        }
        let n32 = STREAM_MIN / 4 + 77;
        let f32s: Vec<f32> = (0..n32 as u32)
            .map(|i| f32::from_bits(i.wrapping_mul(0x9e37_79b1)))
            .collect();
        check(
            &crate::BitRound::<f32>::new(10).unwrap(),
            &f32s,
            true,
            |x| x.to_bits().into(),
        );
        let n64 = STREAM_MIN / 8 + 77;
        let f64s: Vec<f64> = (0..n64 as u64)
            .map(|i| (i as f64 - 1e6) * 0.37 + if i % 1001 == 0 { f64::NAN } else { 0.0 })
            .collect();
        let so = crate::ScaleOffset::<f64>::new(1.5, 3.0).unwrap();
        check(&so, &f64s, true, f64::to_bits);
        check(&so, &f64s, false, f64::to_bits);
    }

    /// `stream_lines` stores vector `g` at bytes `64g..64g + 64` of an output at every start
    /// within a line, for every count of steps up to a few, stopping where `next` stops,
    /// and writes nothing else.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn stream_lines_store_each_vector_in_place_at_every_start() {
        use std::arch::x86_64::{__m512i, _mm512_loadu_si512};
        /// # Safety
        /// The CPU has AVX-512 F, BW and VBMI.
        #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
        unsafe fn run(out: &mut [u8], steps: usize, stop: usize, vectors: &[[u8; 64]]) -> usize {
            let next = |g: usize| -> Option<__m512i> {
                // SAFETY: 64 bytes from an array of 64.
                (g < stop).then(|| unsafe { _mm512_loadu_si512(vectors[g].as_ptr().cast()) })
            };
            // SAFETY: the features above; `out` holds `64 * steps` bytes (the caller's).
            unsafe { super::stream_lines(out, steps, next) }
        }
        if !crate::arch::has_avx512() {
            return;
        }
        let vectors: Vec<[u8; 64]> = (0..6u8)
            .map(|g| std::array::from_fn(|i| g.wrapping_mul(64).wrapping_add(i as u8) ^ 0x5a))
            .collect();
        for start in 0..64 {
            for steps in 0..=5 {
                for stop in [0, 1, 2, steps, 6] {
                    let mut store = vec![0xeeu8; 64 * 8];
                    let at = store.as_ptr().align_offset(64) + start;
                    let out = &mut store[at..at + 64 * steps];
                    // SAFETY: the level allows AVX-512, whose set includes F, BW and VBMI.
                    let done = unsafe { run(out, steps, stop, &vectors) };
                    assert_eq!(done, steps.min(stop), "start {start}, steps {steps}");
                    let mut want = vec![0xeeu8; 64 * 8];
                    for (g, v) in vectors[..done].iter().enumerate() {
                        want[at + 64 * g..at + 64 * g + 64].copy_from_slice(v);
                    }
                    assert!(store == want, "start {start}, steps {steps}, stop {stop}");
                }
            }
        }
    }
}
