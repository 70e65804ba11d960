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
//! A few kernels are written with intrinsics, each with its portable twin as the reference
//! and the fallback:
//! - float16 from and to `f32` (F16C's `vcvtps2ph`/`vcvtph2ps`, which portable code cannot
//!   reach), and from `f64` through it: [`F16c`];
//! - `f32` to the 8-bit float formats ([`f32_to_byte_float`]), where LLVM's build of the
//!   portable kernel shuffles more than it needs.
//!
//! [`clamp_to_i32`], [`clamp_round_even_to_i32`] and [`i32_or_indefinite`] are safe
//! functions for portable kernels: `f64 -> i32` conversions that LLVM compiles to one packed
//! instruction, made sound by the clamp or select inside them.
//!
//! It also holds the crate's other `unsafe`: [`words`] and [`words_mut`], which let a
//! kernel see a slice of any dtype as the storage words it is made of, and [`zeroed_vec`],
//! the fresh output buffers of the run-time API.

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, ShapeBuilder};

use crate::number::storage::Plain;

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
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: `avx2` requires only the AVX2 instruction set (and what it implies),
            // which the CPU has: checked just above.
            return unsafe { avx2(f) };
        }
    }
    f()
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

/// `src` seen as its storage words (`WORDS` per element).
///
/// This is how every kernel reads a dtype's slice: `&[Float8E4M3]`, `&[i8]` and `&[u8]` are
/// all `&[u8]` to it, so kernels are compiled once per storage width, not once per dtype.
#[inline(always)]
pub(crate) fn words<T: Plain>(src: &[T]) -> &[T::Word] {
    const { check_plain::<T>() };
    // SAFETY: `Plain`'s contract: `T` is laid out as `[T::Word; T::WORDS]` with no padding
    // and an alignment at least that of `T::Word` (also checked at compile time above), so
    // `src.len() * WORDS` words fit exactly in the same memory, properly aligned, and every
    // `T` is a valid sequence of words. The lifetime is `src`'s.
    unsafe { std::slice::from_raw_parts(src.as_ptr().cast(), src.len() * T::WORDS) }
}

/// `dst` seen as its storage words (`WORDS` per element), for writing.
#[inline(always)]
pub(crate) fn words_mut<T: Plain>(dst: &mut [T]) -> &mut [T::Word] {
    const { check_plain::<T>() };
    // SAFETY: as in `words`; in addition `Plain` guarantees that every bit pattern of the
    // words is a valid `T`, so any words written through the view leave valid elements, and
    // the exclusive borrow of `dst` is moved into the view.
    unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast(), dst.len() * T::WORDS) }
}

/// The elements whose storage words are `v`, `T::WORDS` words each, moved without a copy;
/// `None` (dropping `v`) when `T`'s alignment is not its word's, which neither a built-in
/// type nor one the [`dtype`](macro@crate::dtype) macro declares has, or when `v` does not
/// hold whole elements.
///
/// This is how run-time code turns word buffers into typed arrays: no element-wise work.
pub(crate) fn vec_from_words<T: Plain>(v: Vec<T::Word>) -> Option<Vec<T>> {
    const { check_plain::<T>() };
    let k = T::WORDS.max(1);
    let same_align = std::mem::align_of::<T>() == std::mem::align_of::<T::Word>();
    if !same_align || v.len() % k != 0 || v.capacity() % k != 0 {
        return None;
    }
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
    // SAFETY: the allocation was made by the global allocator for `cap` words with the
    // word's alignment, which is `T`'s (checked above); `cap / k` elements of `T` are
    // exactly `cap` words (`Plain`: `T` is `[Word; WORDS]` without padding, and
    // `cap % k == 0`), so `Vec` frees it with the same layout. The first `len / k`
    // elements are initialized words, and every bit pattern of words is a valid `T`
    // (`Plain`). `v` is not dropped (`ManuallyDrop`), so the allocation has one owner.
    Some(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len / k, cap / k) })
}

/// The elements of `a`, in any layout, seen as their storage words: a view with the same
/// axes plus a last one of length `T::WORDS` (an element's words), so that code over it is
/// compiled once per word width. Gathering a strided array into C order goes through it.
pub(crate) fn words_view<T: Plain>(a: &ArrayD<T>) -> ArrayViewD<'_, T::Word> {
    const { check_plain::<T>() };
    // SAFETY: `a`'s shape and strides describe its own live, initialized elements from
    // `a.as_ptr()` (an owned array's elements do not overlap), borrowed for the result's
    // lifetime; `Plain` makes `T` exactly `WORDS` words, aligned at least as a word.
    unsafe { strided_words(a.shape(), a.strides(), a.as_ptr().cast(), T::WORDS) }
}

/// The word view of elements of `k` words at `ptr` (index 0), with `shape` and `strides`
/// in elements: compiled once per word width.
///
/// # Safety
/// Every element index within `shape` must reach, at `ptr + Σ index·stride` elements, `k`
/// initialized words within one live allocation that outlives `'a` and is not written
/// during it, aligned as `W`, with no two indices reaching the same element.
unsafe fn strided_words<'a, W>(
    shape: &[usize],
    strides: &[isize],
    ptr: *const W,
    k: usize,
) -> ArrayViewD<'a, W> {
    // `from_shape_ptr` takes non-negative strides from the lowest address: start at the
    // element with the lowest address, and flip the axes that run backwards afterwards.
    let mut low = 0isize;
    let mut flipped = Vec::new();
    for (ax, (&n, &s)) in shape.iter().zip(strides).enumerate() {
        if s < 0 && n > 0 {
            low += (n as isize - 1) * s * k as isize;
            flipped.push(ax);
        }
    }
    let empty = shape.contains(&0);
    let words_shape: Vec<usize> = shape.iter().copied().chain([k]).collect();
    let words_strides: Vec<usize> = strides
        .iter()
        .map(|&s| s.unsigned_abs() * k)
        .chain([1])
        .collect();
    // SAFETY (caller's contract): the lowest-address element is at `low` words from `ptr`,
    // within the allocation (not moved for an empty array). From there, non-negative
    // strides scaled by `k` words and a last axis of stride 1 and length `k` reach exactly
    // the words of the same elements, each once.
    let mut w = unsafe {
        let start = if empty { ptr } else { ptr.offset(low) };
        ArrayViewD::from_shape_ptr(IxDyn(&words_shape).strides(IxDyn(&words_strides)), start)
    };
    for ax in flipped {
        w.invert_axis(Axis(ax));
    }
    w
}

/// `n` elements whose storage words are all zero, in fresh memory that is not written here.
///
/// The allocation is `calloc`'s (`alloc_zeroed`): a large one is fresh pages mapped by the
/// kernel, which are only zeroed when first touched, so the caller's kernel writing the
/// output is the first (and only) pass over it — no fill pass as `vec![x; n]` makes for a
/// type that is not a primitive. On Linux a buffer of at least [`HUGE_MIN`] bytes is also
/// advised to be backed by transparent huge pages (`MADV_HUGEPAGE`, what NumPy does for
/// its arrays): its first touch then faults once per 2 MiB instead of once per 4 KiB,
/// which is most of the cost of writing a fresh output. `None` when `n` elements do not fit
/// in memory's address range.
pub(crate) fn zeroed_vec<T: Plain>(n: usize) -> Option<Vec<T>> {
    const { check_plain::<T>() };
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    if layout.size() == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the layout has a non-zero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    advise_huge_pages(ptr, layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `[T; n]`
    // (size and alignment of `T`, as `Vec<T>` allocates), its `n` elements are
    // initialized: all-zero words, and `Plain` makes every bit pattern of the words a
    // valid `T`. Capacity and length are `n`, so `Vec` frees it with the same layout.
    Some(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), n, n) })
}

/// Buffers from this size on are advised to use huge pages (NumPy's threshold: 4 MiB).
pub(crate) const HUGE_MIN: usize = 4 << 20;

/// Ask the kernel to back the pages of `[ptr, ptr + bytes)` by transparent huge pages. A
/// hint: an error (no THP support, an old kernel) leaves the memory as it was.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    const PAGE: usize = 4096;
    if bytes < HUGE_MIN {
        return;
    }
    // `madvise` wants a page-aligned start: the pages wholly inside the allocation.
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + bytes) / PAGE * PAGE;
    if end <= start {
        return;
    }
    // SAFETY: the range lies within one live allocation of ours; `MADV_HUGEPAGE` changes
    // neither its contents nor its mapping's validity, only how the kernel backs it.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: *mut u8, _: usize) {}

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

/// The address range of a parallel call's output, when it holds at least [`STREAM_MIN`]
/// bytes: its chunks are each far smaller, but together they fill as much memory as one
/// large call, so kernels writing a chunk of it stream it out too (see [`streams`]).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "rayon"), allow(dead_code))] // used by `parallel`; unit-tested always
pub(crate) struct Region(usize, usize);

#[cfg_attr(not(feature = "rayon"), allow(dead_code))]
impl Region {
    /// The range of `out` if it is large enough to stream, else an empty one.
    pub(crate) fn of<W>(out: &[W]) -> Region {
        let (start, bytes) = (out.as_ptr() as usize, std::mem::size_of_val(out));
        if bytes < STREAM_MIN {
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
pub(crate) fn lookup_bytes<W: crate::dtype::Word>(table: &[W; 256], codes: &[u8], out: &mut [W]) {
    #[cfg(target_arch = "x86_64")]
    if streams(out) && std::is_x86_feature_detected!("avx2") {
        use crate::dtype::Word;
        let n = codes.len().min(out.len());
        let (codes, words) = (&codes[..n], W::words(&table[..]));
        if let (Some(t), Some(o)) = (u64::of(words), u64::of_mut(W::words_mut(&mut out[..n]))) {
            if let Ok(t) = <&[u64; 256]>::try_from(t) {
                // SAFETY: the CPU has AVX2 (checked above).
                unsafe { stream::lookup_u64(t, codes, o) };
                return;
            }
        }
        if let (Some(t), Some(o)) = (u32::of(words), u32::of_mut(W::words_mut(&mut out[..n]))) {
            if let Ok(t) = <&[u32; 256]>::try_from(t) {
                // SAFETY: as above.
                unsafe { stream::lookup_u32(t, codes, o) };
                return;
            }
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
    if streams(dst) && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { stream::i32_to_f32(src, dst) };
        return true;
    }
    let _ = (src, dst);
    false
}

#[cfg(target_arch = "x86_64")]
mod stream {
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

    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn i32_to_f32(src: &[u32], dst: &mut [u32]) {
        let n = src.len().min(dst.len());
        let one = |x: u32| (x as i32 as f32).to_bits();
        // Plain stores up to `dst`'s first 32-byte boundary (all of them, should
        // `align_offset` not tell), then whole vectors, then the tail.
        let head = dst.as_ptr().align_offset(32).min(n);
        let body = head + (n - head) / 8 * 8;
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

/// Whether this CPU has AVX2 (always `false` off x86-64).
#[inline]
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The per-call constants of [`widen_bytes_to_f32`] and of its portable twin
/// `convert::fast::widen`, derived from the source layout by `convert::fast::widen_plan`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WidenPlan {
    /// The magnitude bits of a code.
    pub(crate) mag_mask: u32,
    /// Moves the magnitude bits to `f32`'s places.
    pub(crate) shift: u32,
    /// `2^(127 - bias)`: the moved bits times it are the value.
    pub(crate) scale: f32,
    /// The magnitude of ±Inf (`u32::MAX` when the layout has none).
    pub(crate) inf: u32,
    /// `2^31 - m`, where `m` is the smallest NaN magnitude.
    pub(crate) bias_nan: u32,
    /// Bits below the sign bit.
    pub(crate) width: u32,
}

/// One-byte small-float codes (`src`) widened into `f32` bits (`dst`, the shorter length)
/// as `convert::fast::widen` does: `false` when a NaN was met (the block is then redone
/// by the reference path), or when the CPU has no AVX2 (nothing written; see
/// [`has_avx2`]). With `stream`, and `dst` starting on a 32-byte boundary, its whole
/// vectors are stored by `vmovntps` (see [`STREAM_MIN`]).
pub(crate) fn widen_bytes_to_f32(src: &[u8], dst: &mut [u32], p: WidenPlan, stream: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above); the streamed kernel's `dst` is
        // 32-byte aligned (checked here).
        return unsafe {
            if stream && dst.as_ptr() as usize % 32 == 0 {
                widen::bytes_to_f32::<true>(src, dst, p)
            } else {
                widen::bytes_to_f32::<false>(src, dst, p)
            }
        };
    }
    let _ = (src, dst, p, stream);
    false
}

#[cfg(target_arch = "x86_64")]
mod widen {
    use std::arch::x86_64::*;

    /// With `STREAM`, `dst` must start on a 32-byte boundary: its whole vectors are then
    /// stored by `vmovntps` (the tail by plain stores).
    ///
    /// # Safety
    /// The CPU must have AVX2; with `STREAM`, `dst` must be 32-byte aligned.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn bytes_to_f32<const STREAM: bool>(
        src: &[u8],
        dst: &mut [u32],
        p: super::WidenPlan,
    ) -> bool {
        const LANES: usize = 8;
        let n = src.len().min(dst.len());
        let whole = n - n % LANES;
        // SAFETY: each step reads 8 bytes at `src + i` and writes 8 `u32` at `dst + i`,
        // with `i + 8 <= whole <= n`, or from and to local arrays of 8 (the tail): in
        // bounds. Unaligned loads and stores, except the streamed ones at `dst + 4i`, `i` a
        // multiple of 8 from a 32-byte aligned `dst` (the caller's guarantee), as
        // `vmovntps` requires. AVX2 is the caller's guarantee.
        unsafe {
            let mag_mask = _mm256_set1_epi32(p.mag_mask as i32);
            let shift = _mm_cvtsi32_si128(p.shift as i32);
            let width = _mm_cvtsi32_si128(p.width as i32);
            let scale = _mm256_set1_ps(p.scale);
            let inf = _mm256_set1_epi32(p.inf as i32);
            let inf_bits = _mm256_set1_epi32(0x7f80_0000);
            let bias_nan = _mm256_set1_epi32(p.bias_nan as i32);
            let mut nan = _mm256_setzero_si256();
            // The `f32` bits of 8 codes at `s`, as the portable `widen`: the magnitude moved
            // and scaled (one IEEE multiplication, as there), ±Inf set apart, the sign
            // (the bit above `width`) put back; NaN magnitudes folded into `nan`.
            macro_rules! convert {
                ($s:expr) => {{
                    let x = _mm256_cvtepu8_epi32(_mm_loadl_epi64($s.cast()));
                    let mag = _mm256_and_si256(x, mag_mask);
                    nan = _mm256_or_si256(nan, _mm256_add_epi32(mag, bias_nan));
                    let moved = _mm256_castsi256_ps(_mm256_sll_epi32(mag, shift));
                    let v = _mm256_castps_si256(_mm256_mul_ps(moved, scale));
                    let v = _mm256_blendv_epi8(v, inf_bits, _mm256_cmpeq_epi32(mag, inf));
                    let sign = _mm256_slli_epi32::<31>(_mm256_srl_epi32(x, width));
                    _mm256_or_si256(v, sign)
                }};
            }
            let mut i = 0;
            while i < whole {
                let v = convert!(src.as_ptr().add(i));
                let d = dst.as_mut_ptr().add(i).cast::<__m256i>();
                if STREAM {
                    _mm256_stream_si256(d, v);
                } else {
                    _mm256_storeu_si256(d, v);
                }
                i += LANES;
            }
            if whole < n {
                let (mut s, mut d) = ([0u8; LANES], [0u32; LANES]);
                s[..n - whole].copy_from_slice(&src[whole..n]);
                _mm256_storeu_si256(d.as_mut_ptr().cast(), convert!(s.as_ptr()));
                dst[whole..n].copy_from_slice(&d[..n - whole]);
            }
            _mm256_movemask_ps(_mm256_castsi256_ps(nan)) == 0
        }
    }
}

/// An F16C kernel of `mod f16c` on x86-64; `false` (block not done) elsewhere, where no
/// [`F16c`] is ever made.
macro_rules! f16c_call {
    ($kernel:ident $(::<$g:tt>)? ($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: an `F16c` exists only when the CPU has F16C and AVX2 (`detect`); a
            // kernel's further conditions are checked at its call.
            unsafe { f16c::$kernel $(::<$g>)? ($($arg),*) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = ($($arg),*);
            false
        }
    }};
}

/// Proof that this CPU has F16C (`vcvtps2ph`, the hardware `f32 -> float16` conversion)
/// and AVX2: only [`F16c::detect`] makes one, after checking both.
///
/// The float16 kernels below convert by `vcvtps2ph` rounding to nearest-even, which is the
/// correctly rounded conversion the spec asks for on every value they accept. Like every
/// fast path they only *detect* the rare elements (see `convert::fast`): a block with
/// one is reported as not done and redone by the portable kernels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct F16c(());

impl F16c {
    /// The proof, when the CPU has F16C and AVX2.
    #[inline]
    pub(crate) fn detect() -> Option<F16c> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("f16c") && std::is_x86_feature_detected!("avx2") {
                return Some(F16c(()));
            }
        }
        None
    }

    /// The float16 codes of the `f32` values whose bits are `src`, nearest-even, into `dst`
    /// (the shorter length). Returns `false` when some element's magnitude bits (the bits
    /// without the sign) are at least `limit`: the block must then be redone elsewhere
    /// (`limit` at most `0x8000_0000`).
    pub(crate) fn f16_from_f32(self, src: &[u32], dst: &mut [u16], limit: u32) -> bool {
        f16c_call!(from_f32(src, dst, limit))
    }

    /// The float16 codes of the `f64` values whose bits are `src`, nearest-even, into `dst`
    /// (the shorter length); `false` as for [`F16c::f16_from_f32`], with `limit` on the
    /// magnitude bits of the `f32` each value is first rounded to (below).
    ///
    /// Each value is first rounded to odd at `f32` precision (truncated to 24 significant
    /// bits, the last one set if any bit was dropped), which `vcvtpd2ps` then converts
    /// exactly, and `vcvtps2ph` rounds that to float16. Rounding to odd with at least two
    /// more bits than the final format (24 against 11) makes the two roundings one: a
    /// value strictly between two float16 neighbours stays strictly between them, and
    /// a tie stays a tie, since float16's points and midpoints are all on the `f32` grid
    /// (float16's range lies within `f32`'s normal range). Values below `f32`'s normal range
    /// (`< 2^-126`) are below half float16's smallest subnormal (`2^-25`): they reach
    /// `vcvtps2ph` as a signed zero or an `f32` subnormal, and become a zero of their sign,
    /// as they should. The rare test is on that `f32`, eight lanes at once: rounding to odd
    /// is monotonic and keeps every `f32` with an even last bit (float16's overflow
    /// thresholds are such), so `|x|` reaches a threshold exactly when its `f32` does;
    /// values above `f32`'s range become ±Inf there, and are declined with the infinities.
    pub(crate) fn f16_from_f64(self, src: &[u64], dst: &mut [u16], limit: u32) -> bool {
        f16c_call!(from_f64(src, dst, limit))
    }

    /// The `f32` bits of the float16 values whose codes are `src`, into `dst` (the shorter
    /// length), by `vcvtph2ps`: exact for every code. Returns `false` when a NaN is among
    /// them (the hardware keeps its payload; the caller's rule canonicalizes it).
    pub(crate) fn f32_from_f16(self, src: &[u16], dst: &mut [u32]) -> bool {
        f16c_call!(to_f32::<false>(src, dst))
    }

    /// [`f32_from_f16`](Self::f32_from_f16), the whole vectors stored by `vmovntps` (see
    /// [`STREAM_MIN`]) when `dst` starts on a 32-byte boundary, as that store requires;
    /// plain stores otherwise. The caller issues [`stream_fence`] after its last block.
    pub(crate) fn f32_from_f16_streamed(self, src: &[u16], dst: &mut [u32]) -> bool {
        if dst.as_ptr() as usize % 32 != 0 {
            return self.f32_from_f16(src, dst);
        }
        // `dst` is 32-byte aligned, as the streamed kernel requires (checked just above).
        f16c_call!(to_f32::<true>(src, dst))
    }
}

/// The F16C kernels: eight elements per step, the tail through a zero-padded copy (a zero
/// is never rare: its magnitude 0 is below any `limit`).
#[cfg(target_arch = "x86_64")]
mod f16c {
    use std::arch::x86_64::*;

    /// `$step!(source pointer, target pointer)` over the first `$n` elements, `LANES` at a
    /// time: the whole groups in place, the tail through zero-padded copies. Expanded inside
    /// an `unsafe` block of a kernel, whose `$step` reads and writes `LANES` elements.
    macro_rules! steps {
        ($src:ident, $dst:ident, $n:ident, $step:ident) => {{
            let whole = $n - $n % LANES;
            let mut i = 0;
            while i < whole {
                $step!($src.as_ptr().add(i), $dst.as_mut_ptr().add(i));
                i += LANES;
            }
            if whole < $n {
                // Arrays of the slices' own word types (an element gives the type; `n > 0`
                // here), the source one zeroed.
                let mut s = [$src[0]; LANES];
                let mut d = [$dst[0]; LANES];
                s.fill(Default::default());
                s[..$n - whole].copy_from_slice(&$src[whole..$n]);
                $step!(s.as_ptr(), d.as_mut_ptr());
                $dst[whole..$n].copy_from_slice(&d[..$n - whole]);
            }
        }};
    }

    /// Elements per step. The rare test: `mag >= limit` is the top bit of
    /// `mag + (TOP - limit)` (both below `TOP`, the sign bit), OR-ed over the block (an add
    /// and an or per vector) and read once at the end.
    const LANES: usize = 8;

    /// # Safety
    /// The CPU must have AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn from_f32(src: &[u32], dst: &mut [u16], limit: u32) -> bool {
        let n = src.len().min(dst.len());
        // SAFETY: every load reads 8 `u32` at `i < n - 7` (or from the padded copy), every
        // store writes 8 `u16` at such an `i` (or to the padded copy): in bounds. Unaligned
        // loads and stores are used throughout. The intrinsics need AVX2 and F16C, which the
        // caller guarantees.
        unsafe {
            let bias = _mm256_set1_epi32((0x8000_0000u32 - limit) as i32);
            let mut rare = _mm256_setzero_si256();
            // A macro, not a closure: the intrinsics must be expanded inside this function,
            // which has the target features.
            macro_rules! step {
                ($s:expr, $d:expr) => {{
                    let x = _mm256_loadu_si256($s.cast());
                    let mag = _mm256_and_si256(x, _mm256_set1_epi32(i32::MAX));
                    rare = _mm256_or_si256(rare, _mm256_add_epi32(mag, bias));
                    let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_castsi256_ps(x));
                    _mm_storeu_si128($d.cast(), h);
                }};
            }
            steps!(src, dst, n, step);
            _mm256_movemask_ps(_mm256_castsi256_ps(rare)) == 0
        }
    }

    /// # Safety
    /// The CPU must have AVX2 and F16C.
    /// With `STREAM`, `dst` must start on a 32-byte boundary: its whole vectors are then
    /// stored by `vmovntps` (the tail by plain stores).
    ///
    /// # Safety
    /// The CPU must have AVX2 and F16C; with `STREAM`, `dst` must be 32-byte aligned.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn to_f32<const STREAM: bool>(src: &[u16], dst: &mut [u32]) -> bool {
        let n = src.len().min(dst.len());
        // SAFETY: every load reads 8 `u16` at `i < n - 7` (or from the padded copy), every
        // store writes 8 `u32` at such an `i` (or to the padded copy): in bounds, unaligned
        // except the streamed ones, at `dst + 4i` with `i` a multiple of 8 from a 32-byte
        // aligned `dst` (the caller's guarantee), so 32-byte aligned as `vmovntps` requires.
        unsafe {
            // A NaN's magnitude is above Inf's, 0x7c00: a signed 16-bit compare suffices.
            let inf = _mm_set1_epi16(0x7c00);
            let mut nan = _mm_setzero_si128();
            macro_rules! convert {
                ($s:expr) => {{
                    let h = _mm_loadu_si128($s.cast());
                    let mag = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
                    nan = _mm_or_si128(nan, _mm_cmpgt_epi16(mag, inf));
                    _mm256_cvtph_ps(h)
                }};
            }
            macro_rules! step {
                ($s:expr, $d:expr) => {{
                    _mm256_storeu_ps($d.cast(), convert!($s));
                }};
            }
            if STREAM {
                let whole = n - n % LANES;
                let mut i = 0;
                while i < whole {
                    let v = convert!(src.as_ptr().add(i));
                    _mm256_stream_ps(dst.as_mut_ptr().add(i).cast(), v);
                    i += LANES;
                }
                let (s, d, m) = (&src[whole..n], &mut dst[whole..n], n - whole);
                steps!(s, d, m, step);
            } else {
                steps!(src, dst, n, step);
            }
            _mm_testz_si128(nan, nan) == 1
        }
    }

    /// # Safety
    /// The CPU must have AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn from_f64(src: &[u64], dst: &mut [u16], limit: u32) -> bool {
        // The bits below `f32`'s last kept one: 52 - 23.
        const DROPPED: i64 = (1 << 29) - 1;
        let n = src.len().min(dst.len());
        // SAFETY: as in `from_f32`, with 8 `u64` per load pair.
        unsafe {
            let bias = _mm256_set1_epi32((0x8000_0000u32 - limit) as i32);
            let mut rare = _mm256_setzero_si256();
            // Four values rounded to odd at `f32` precision, as exact `f32`s.
            macro_rules! odd {
                ($s:expr) => {{
                    let x = _mm256_loadu_si256($s.cast());
                    let low = _mm256_and_si256(x, _mm256_set1_epi64x(DROPPED));
                    // `low + DROPPED` reaches bit 29 exactly when `low != 0`.
                    let sticky = _mm256_and_si256(
                        _mm256_add_epi64(low, _mm256_set1_epi64x(DROPPED)),
                        _mm256_set1_epi64x(DROPPED + 1),
                    );
                    let t = _mm256_or_si256(_mm256_xor_si256(x, low), sticky);
                    _mm256_cvtpd_ps(_mm256_castsi256_pd(t))
                }};
            }
            macro_rules! step {
                ($s:expr, $d:expr) => {{
                    let lo = odd!($s);
                    let hi = odd!($s.add(4));
                    let f = _mm256_set_m128(hi, lo);
                    let mag = _mm256_and_si256(_mm256_castps_si256(f), _mm256_set1_epi32(i32::MAX));
                    rare = _mm256_or_si256(rare, _mm256_add_epi32(mag, bias));
                    let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
                    _mm_storeu_si128($d.cast(), h);
                }};
            }
            steps!(src, dst, n, step);
            _mm256_movemask_ps(_mm256_castsi256_ps(rare)) == 0
        }
    }
}

/// The compile-time half of `Plain`'s contract: size and alignment.
const fn check_plain<T: Plain>() {
    assert!(std::mem::size_of::<T>() == T::WORDS * std::mem::size_of::<T::Word>());
    assert!(std::mem::align_of::<T>() >= std::mem::align_of::<T::Word>());
}

// ---- f32 -> 8-bit float formats, nearest-even, in explicit AVX2 (issue 10, third pass) ----
//
// Written with intrinsics because LLVM compiles the portable version
// (`convert::narrow::from_f32::rebias`, which documents the arithmetic and runs without
// AVX2) with three permutes per 32 elements and its constants reloaded from the stack in
// the loop. Here the sign goes through the 16-bit packs, and one `vpermd` restores the order.

/// The per-call constants of [`f32_to_byte_float`]: `f32` bit patterns and a shift count,
/// derived from the target layout by `convert::narrow::from_f32::Plan`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByteFloatPlan {
    /// The largest magnitude converted (the value of the clamped code).
    pub(crate) clamp_source: u32,
    /// The target's smallest normal value.
    pub(crate) min_normal: u32,
    /// Added to an exponent field: `C = 2^(E + shift)`.
    pub(crate) to_magic: u32,
    /// Subtracted from the 16-bit codes: `(151 - m - bias) << m`.
    pub(crate) code_offset: u16,
    /// Difference in mantissa bits.
    pub(crate) shift: u32,
    /// The target's sign bit (at most `0x80`).
    pub(crate) sign_bit: u16,
}

/// `src` (`f32` bits) converted into 8-bit codes in `dst` (the shorter length) by the
/// nearest-even kernel `convert::narrow::from_f32::rebias` (without `NEG_ZERO`, a zero code
/// has no sign: `fnuz`), when the CPU has AVX2: the largest magnitude converted. `None`
/// without AVX2 (nothing written): the caller converts.
#[inline(always)]
pub(crate) fn f32_to_byte_float<const NEG_ZERO: bool>(
    src: &[u32],
    dst: &mut [u8],
    plan: ByteFloatPlan,
) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: `avx2_f32_to_byte_float` requires only AVX2, checked just above.
            return Some(unsafe { avx2_f32_to_byte_float::<NEG_ZERO>(src, dst, plan) });
        }
    }
    let _ = (src, dst, plan);
    None
}

/// See [`f32_to_byte_float`].
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn avx2_f32_to_byte_float<const NEG_ZERO: bool>(
    src: &[u32],
    dst: &mut [u8],
    p: ByteFloatPlan,
) -> u32 {
    use std::arch::x86_64::*;
    const STEP: usize = 32;
    let len = src.len().min(dst.len());
    let n = len / STEP * STEP;
    // SAFETY: the CPU has AVX2 (this function's contract). A step reads 32 `u32` from its
    // source pointer and writes 32 bytes at its target pointer (unaligned forms): in the
    // loop `src[i..i + 32]` and `dst[i..i + 32]` with `i + 32 <= n <= len`, both slices
    // at least `len` long; for the rest, two local arrays of 32.
    unsafe {
        let mag_mask = _mm256_set1_epi32(0x7fff_ffff);
        let exp_mask = _mm256_set1_epi32(0x7f80_0000);
        let clamp_source = _mm256_set1_epi32(p.clamp_source as i32);
        let min_normal = _mm256_set1_epi32(p.min_normal as i32);
        let to_magic = _mm256_set1_epi32(p.to_magic as i32);
        let code_offset = _mm256_set1_epi16(p.code_offset as i16);
        let shift = _mm_cvtsi32_si128(p.shift as i32);
        let sign_bit = _mm256_set1_epi16(p.sign_bit as i16);
        // After the in-lane packs, 4-byte group `i` holds elements `4 * order[i]..`.
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let zero = _mm256_setzero_si256();
        let mut largest = zero;
        // The code of 8 elements plus `code_offset` (no sign; below 2^15), their magnitudes
        // folded into `largest`.
        macro_rules! code {
            ($b:expr) => {{
                let mag = _mm256_and_si256($b, mag_mask);
                largest = _mm256_max_epu32(largest, mag);
                let clamped = _mm256_min_epu32(mag, clamp_source);
                let e = _mm256_max_epu32(_mm256_and_si256(clamped, exp_mask), min_normal);
                let c = _mm256_castsi256_ps(_mm256_add_epi32(e, to_magic));
                let sum = _mm256_add_ps(_mm256_castsi256_ps(clamped), c);
                let k = _mm256_sub_epi32(_mm256_castps_si256(sum), _mm256_castps_si256(c));
                _mm256_add_epi32(k, _mm256_srl_epi32(_mm256_castps_si256(c), shift))
            }};
        }
        // Codes and signs of 16 elements in 16-bit lanes: the sign of `b` survives the
        // signed saturation of `vpackssdw`.
        macro_rules! half {
            ($b0:expr, $b1:expr) => {{
                let codes = _mm256_packus_epi32(code!($b0), code!($b1));
                let codes = _mm256_sub_epi16(codes, code_offset);
                let signs = _mm256_srai_epi16(_mm256_packs_epi32($b0, $b1), 15);
                let mut signs = _mm256_and_si256(signs, sign_bit);
                if !NEG_ZERO {
                    signs = _mm256_andnot_si256(_mm256_cmpeq_epi16(codes, zero), signs);
                }
                _mm256_or_si256(codes, signs)
            }};
        }
        // 32 elements from `s` into 32 bytes at `d`.
        macro_rules! step {
            ($s:expr, $d:expr) => {{
                let s = $s.cast::<__m256i>();
                let b0 = _mm256_loadu_si256(s);
                let b1 = _mm256_loadu_si256(s.add(1));
                let b2 = _mm256_loadu_si256(s.add(2));
                let b3 = _mm256_loadu_si256(s.add(3));
                let bytes = _mm256_packus_epi16(half!(b0, b1), half!(b2, b3));
                let bytes = _mm256_permutevar8x32_epi32(bytes, order);
                _mm256_storeu_si256($d.cast::<__m256i>(), bytes);
            }};
        }
        for i in (0..n).step_by(STEP) {
            step!(src.as_ptr().add(i), dst.as_mut_ptr().add(i));
        }
        // The last partial step through zero-padded buffers (zeros convert to zeros).
        let rest = len - n;
        if rest > 0 {
            let mut s = [0u32; STEP];
            let mut d = [0u8; STEP];
            s[..rest].copy_from_slice(&src[n..len]);
            step!(s.as_ptr(), d.as_mut_ptr());
            dst[n..len].copy_from_slice(&d[..rest]);
        }
        let m = _mm_max_epu32(
            _mm256_castsi256_si128(largest),
            _mm256_extracti128_si256::<1>(largest),
        );
        let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0b01_00_11_10>(m));
        let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0b10_11_00_01>(m));
        _mm_cvtsi128_si32(m) as u32
    }
}

// ---- end of the f32 -> 8-bit float block ----

#[cfg(test)]
mod tests {
    //! The `unsafe` above, on the cases that reach each branch; run under Miri too
    //! (`cargo +nightly miri test --lib arch::`; the F16C kernels are tested against the
    //! reference in `tests/it/fast_paths.rs`).
    use ndarray::{ArrayD, Axis, IxDyn};

    use crate::dtype::Complex;

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

    /// Above `STREAM_MIN` bytes of output the lookup streams (`movnti`): every word, the
    /// last ones included, must be what a plain lookup writes.
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn streamed_lookup_equals_plain_lookup() {
        fn check<W: crate::dtype::Word>(bytes: usize) {
            let n = bytes / std::mem::size_of::<W>() + 13;
            let codes: Vec<u8> = (0..n).map(|i| (i * 131 + i / 7) as u8).collect();
            let table: [W; 256] = std::array::from_fn(|i| {
                W::from_u64((i as u64 + 1).wrapping_mul(0x0101_0103_0507_0b0d))
            });
            let mut all = vec![W::default(); n];
            // The output's offset from a 32-byte boundary moves with `start` (every head
            // length of plain stores), and the length with it (every tail length).
            for start in 0..9 {
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
        check::<u64>(super::STREAM_MIN);
        check::<u32>(super::STREAM_MIN);
        check::<u16>(1 << 12);
    }

    /// The streamed `i32 -> f32` kernel rounds as `as` does, at every offset of the
    /// output from a 32-byte boundary (the head, the vectors, the tail).
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs; Miri has no non-temporal stores")]
    fn streamed_i32_to_f32_equals_as() {
        let n = super::STREAM_MIN / 4 + 21;
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
        use super::{Region, STREAM_MIN, streams};
        let out = vec![0u64; STREAM_MIN / 8];
        let other = vec![0u64; 1024];
        let chunk = &out[4096..8192];
        assert!(streams(&out[..]) && !streams(chunk) && !streams(&other[..]));
        Region::of(&out[..]).streaming(|| {
            assert!(streams(chunk) && streams(&out[out.len() - 1..]));
            assert!(!streams(&other[..]));
        });
        assert!(!streams(chunk));
        // A small output marks nothing.
        Region::of(&other[..]).streaming(|| assert!(!streams(&other[..8])));
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
