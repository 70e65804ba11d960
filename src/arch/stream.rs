//! Streamed (non-temporal) stores for large outputs: when a kernel streams
//! ([`streams_from`]: a large output that does not fit in the cache with its input), the parallel calls' output ranges ([`Region`]), and the kernels that
//! store from registers by `vmovntdq`/`vmovntps` (the one-byte table lookup,
//! `int32 -> float32`, numcodecs.quantize's `float32 -> float32`, and with AVX-512
//! `f64 -> int32` and `f64 -> f32` nearest-even). float16 -> `f32`
//! (`super::F16c`) and the widening of one-byte floats (`super::widen_bytes_to_f32`)
//! stream through [`streams_from`] too. [`through_l1`] streams the output of any elementwise
//! kernel, computed block by block into an L1 buffer (bitround's float copy, scale_offset's
//! `f32`/`f64` encode).

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
}

/// Whether a kernel writing `dst` streams it out: `dst` holds at least [`STREAM_MIN`]
/// bytes, or it lies within the large output of a parallel call (a chunk of it).
/// Intermediate buffers never lie there: they are other allocations, while the output is
/// exclusively borrowed by the parallel call.
pub(crate) fn streams<W>(dst: &[W]) -> bool {
    let bytes = std::mem::size_of_val(dst);
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
pub(crate) fn lookup_bytes<W: crate::number::storage::Word>(
    table: &[W; 256],
    codes: &[u8],
    out: &mut [W],
) {
    #[cfg(target_arch = "x86_64")]
    if streams_from(codes, out) && super::has_avx2() {
        use crate::number::storage::Word;
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
/// is an output to stream ([`streams`]) and the CPU has AVX2: plain stores up to `dst`'s
/// first 32-byte boundary, then the kernel computes each block of [`BLOCK_BYTES`] into a
/// buffer that stays in L1 and `vmovntdq` copies it to `dst` (the block's last partial
/// vector by plain stores), then `sfence`. The kernel is the same, so are its results.
///
/// For kernels that store through the cache and write as many bytes as they read, or
/// more: with plain stores every output line is first read from memory.
#[inline]
pub(crate) fn through_l1<S, W: crate::number::storage::Word>(
    src: &[S],
    dst: &mut [W],
    mut kernel: impl FnMut(&[S], &mut [W]),
) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    #[cfg(target_arch = "x86_64")]
    if streams_from(src, dst) && super::has_avx2() {
        blocks(src, dst, &mut kernel);
        return;
    }
    kernel(src, dst);
}

/// The streamed path of [`through_l1`] (equal lengths), once per word width and source
/// type: the kernel is called through `dyn`, once per block.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn blocks<S, W: crate::number::storage::Word>(
    src: &[S],
    dst: &mut [W],
    kernel: &mut dyn FnMut(&[S], &mut [W]),
) {
    let size = std::mem::size_of::<W>();
    let head = dst.as_ptr().align_offset(32).min(dst.len());
    let (s0, src) = src.split_at(head);
    let (d0, dst) = dst.split_at_mut(head);
    kernel(s0, d0);
    let mut buf = Block([0; BLOCK_BYTES / 8]);
    let per = BLOCK_BYTES / size;
    // SAFETY: `W` is `u8`, `u16`, `u32` or `u64` (`Word` is sealed): every bit pattern is
    // valid, its alignment (at most 8) divides the buffer's, and `per` of them fill
    // exactly its `BLOCK_BYTES`; the buffer is not otherwise used while `words` lives.
    let words: &mut [W] =
        unsafe { std::slice::from_raw_parts_mut(buf.0.as_mut_ptr().cast::<W>(), per) };
    for (s, d) in src.chunks(per).zip(dst.chunks_mut(per)) {
        let b = &mut words[..d.len()];
        kernel(s, b);
        let whole = std::mem::size_of_val(d) / 32 * 32 / size;
        // SAFETY: AVX2 (the caller checked it). `b` starts at the 64-byte aligned buffer;
        // `d` at `dst`'s first 32-byte boundary plus a multiple of `BLOCK_BYTES` (32-byte
        // aligned); both hold `whole * size` bytes, a multiple of 32.
        unsafe {
            kernels::copy_streamed(b.as_ptr().cast(), d.as_mut_ptr().cast(), whole * size / 32)
        };
        d[whole..].copy_from_slice(&b[whole..]);
    }
    stream_fence();
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    /// The part of `out` before its first 32-byte boundary, the whole `lanes`-word vectors
    /// after it, and the tail: `(head, body)` with `head <= body <= n`.
    fn split<W>(out: &[W], n: usize, lanes: usize) -> (usize, usize) {
        let head = out.as_ptr().align_offset(32).min(n);
        (head, head + (n - head) / lanes * lanes)
    }

    /// `out[i] = t[codes[i]]` over `range`, by plain stores.
    fn plain<W: Copy>(t: &[W; 256], codes: &[u8], out: &mut [W], range: std::ops::Range<usize>) {
        for (d, &c) in out[range.clone()].iter_mut().zip(&codes[range]) {
            *d = t[usize::from(c)];
        }
    }

    // SAFETY (both lookups): each `vmovntdq` stores 32 bytes at word `head + lanes * k`,
    // with `head + lanes * (k + 1) <= body <= n <= out.len()`: within `out`. `out + head`
    // is 32-byte aligned (`align_offset`) and each store a multiple of 32 bytes further, as
    // `vmovntdq` requires. The `sfence` orders the streamed stores before later ones. AVX2
    // (with AVX and SSE) is the caller's guarantee.

    /// `out[i] = t[codes[i]]`, 4 words per streamed vector (see `lookup_bytes`).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lookup_u64(t: &[u64; 256], codes: &[u8], out: &mut [u64]) {
        let n = codes.len().min(out.len());
        let (head, body) = split(out, n, 4);
        plain(t, codes, out, 0..head);
        let at = |c: u8| t[usize::from(c)] as i64;
        // SAFETY: see above.
        unsafe {
            for (k, c) in codes[head..body].chunks_exact(4).enumerate() {
                let v = _mm256_setr_epi64x(at(c[0]), at(c[1]), at(c[2]), at(c[3]));
                _mm256_stream_si256(out.as_mut_ptr().add(head + 4 * k).cast(), v);
            }
            _mm_sfence();
        }
        plain(t, codes, out, body..n);
    }

    /// `out[i] = t[codes[i]]`, 8 words per streamed vector (see `lookup_bytes`).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lookup_u32(t: &[u32; 256], codes: &[u8], out: &mut [u32]) {
        let n = codes.len().min(out.len());
        let (head, body) = split(out, n, 8);
        plain(t, codes, out, 0..head);
        let at = |c: u8| t[usize::from(c)] as i32;
        // SAFETY: see above.
        unsafe {
            for (k, c) in codes[head..body].chunks_exact(8).enumerate() {
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
                _mm256_stream_si256(out.as_mut_ptr().add(head + 8 * k).cast(), v);
            }
            _mm_sfence();
        }
        plain(t, codes, out, body..n);
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

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quantize_f32(scale: f32, inv: f32, src: &[u32], dst: &mut [u32]) {
        let n = src.len().min(dst.len());
        let one = |x: u32| ((f32::from_bits(x) * scale).round_ties_even() * inv).to_bits();
        let (head, body) = split(dst, n, 8);
        for i in 0..head {
            dst[i] = one(src[i]);
        }
        let (s, v) = (_mm256_set1_ps(scale), _mm256_set1_ps(inv));
        const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
        // SAFETY (`step`): `y` is one of the 8-word vectors of `dst[head..body]`, which
        // start at the 32-byte boundary `head` (`align_offset`), so it is 32-byte aligned,
        // as `vmovntps` requires; the load and the store touch only `x` and `y`. The
        // `sfence` orders the streamed stores before later ones.
        let step = |x: &[u32; 8], y: &mut [u32; 8]| unsafe {
            let r =
                _mm256_round_ps::<NEAREST>(_mm256_mul_ps(_mm256_loadu_ps(x.as_ptr().cast()), s));
            _mm256_stream_ps(y.as_mut_ptr().cast(), _mm256_mul_ps(r, v));
        };
        let (x, y) = (
            src[head..body].as_chunks::<8>().0,
            dst[head..body].as_chunks_mut::<8>().0,
        );
        // Four vectors a step, as the vectorized loop is unrolled: the loop's own
        // instructions are then a fifth of the whole.
        let (mut xs, mut ys) = (x.chunks_exact(4), y.chunks_exact_mut(4));
        for (x, y) in (&mut xs).zip(&mut ys) {
            for k in 0..4 {
                step(&x[k], &mut y[k]);
            }
        }
        for (x, y) in xs.remainder().iter().zip(ys.into_remainder()) {
            step(x, y);
        }
        _mm_sfence();
        for i in body..n {
            dst[i] = one(src[i]);
        }
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
        let n = src.len().min(dst.len());
        let (head, body) = split(dst, n, 16);
        let scalar = |dst: &mut [u32], range: std::ops::Range<usize>| {
            for i in range {
                match one(src[i]) {
                    Some(y) => dst[i] = y,
                    None => return Some(i),
                }
            }
            None
        };
        if let Some(i) = scalar(dst, 0..head) {
            return i;
        }
        let x = src[head..body].as_chunks::<16>().0;
        let y = dst[head..body].as_chunks_mut::<16>().0;
        for (k, (x, y)) in x.iter().zip(y).enumerate() {
            let x = x.as_chunks::<8>().0;
            let ((a, stop_a), (b, stop_b)) = (eight(&x[0]), eight(&x[1]));
            if stop_a | stop_b != 0 {
                // The first vector is done unless it stops too.
                let done = if stop_a != 0 {
                    0
                } else {
                    // SAFETY: as below.
                    unsafe { _mm256_stream_si256(y.as_mut_ptr().cast(), a) };
                    8
                };
                // SAFETY: SSE.
                unsafe { _mm_sfence() };
                return head + 16 * k + done;
            }
            // SAFETY: `y` is one of the 16-word chunks of `dst[head..body]`, which start at
            // the 32-byte boundary `head` (`align_offset`): two 32-byte vectors, each
            // 32-byte aligned, as `vmovntdq` requires.
            unsafe {
                _mm256_stream_si256(y.as_mut_ptr().cast(), a);
                _mm256_stream_si256(y.as_mut_ptr().add(8).cast(), b);
            }
        }
        // SAFETY: SSE. Orders the streamed stores before any later store, as plain ones
        // are.
        unsafe { _mm_sfence() };
        scalar(dst, body..n).unwrap_or(n)
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

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn i32_to_f32(src: &[u32], dst: &mut [u32]) {
        let n = src.len().min(dst.len());
        let one = |x: u32| (x as i32 as f32).to_bits();
        // Plain stores up to `dst`'s first 32-byte boundary (all of them, should
        // `align_offset` not tell), then whole vectors, then the tail.
        let (head, body) = split(dst, n, 8);
        for i in 0..head {
            dst[i] = one(src[i]);
        }
        // SAFETY: each load reads 8 `u32` at `i`, each store writes 8 at `i`, with
        // `head <= i` and `i + 8 <= body <= n`: within both slices. `dst + head` is 32-byte
        // aligned (`align_offset`) and `i - head` is a multiple of 8 words, so every
        // `vmovntps` address is 32-byte aligned, as it requires. The `sfence` orders the
        // streamed stores before any later store, as plain ones are. AVX2 (which includes
        // AVX and SSE) is guaranteed by the caller.
        unsafe {
            let mut i = head;
            while i < body {
                let x = _mm256_loadu_si256(src.as_ptr().add(i).cast());
                _mm256_stream_ps(dst.as_mut_ptr().add(i).cast(), _mm256_cvtepi32_ps(x));
                i += 8;
            }
            _mm_sfence();
        }
        for i in body..n {
            dst[i] = one(src[i]);
        }
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
    use crate::number::storage::Word;

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
}
