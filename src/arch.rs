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
//! It also holds the crate's other `unsafe`: [`words`] and [`words_mut`], which let a
//! kernel see a slice of any dtype as the storage words it is made of, and [`zeroed_vec`],
//! the fresh output buffers of the run-time API.

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

/// The elements whose storage words are `v`, `T::WORDS` words each, moved without a copy
/// when `T` has the alignment of its word (every built-in type and every type the
/// [`dtype`](macro@crate::dtype) macro declares), copied otherwise. Words beyond the last
/// whole element are dropped.
///
/// This is how run-time code turns word buffers into typed arrays: once per storage width
/// and element type, with no element-wise work.
pub(crate) fn vec_from_words<T: Plain>(v: Vec<T::Word>) -> Vec<T> {
    const { check_plain::<T>() };
    let k = T::WORDS.max(1);
    let same_align = std::mem::align_of::<T>() == std::mem::align_of::<T::Word>();
    if same_align && v.len() % k == 0 && v.capacity() % k == 0 {
        let mut v = std::mem::ManuallyDrop::new(v);
        let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
        // SAFETY: the allocation was made by the global allocator for `cap` words with the
        // word's alignment, which is `T`'s (checked above); `cap / k` elements of `T` are
        // exactly `cap` words (`Plain`: `T` is `[Word; WORDS]` without padding, and
        // `cap % k == 0`), so `Vec` frees it with the same layout. The first `len / k`
        // elements are initialized words, and every bit pattern of words is a valid `T`
        // (`Plain`). `v` is not dropped (`ManuallyDrop`), so the allocation has one owner.
        return unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len / k, cap / k) };
    }
    let n = v.len() / k;
    let mut out: Vec<T> = Vec::with_capacity(n);
    for e in v.chunks_exact(k) {
        let mut x = std::mem::MaybeUninit::<T>::uninit();
        // SAFETY: `x` has room for `k` words (`Plain`'s size) at an alignment at least the
        // word's; all `k` are written before `assume_init`, and every bit pattern of the
        // words is a valid `T` (`Plain`).
        unsafe {
            std::ptr::copy_nonoverlapping(e.as_ptr(), x.as_mut_ptr().cast::<T::Word>(), k);
            out.push(x.assume_init());
        }
    }
    out
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

/// The compile-time half of `Plain`'s contract: size and alignment.
const fn check_plain<T: Plain>() {
    assert!(std::mem::size_of::<T>() == T::WORDS * std::mem::size_of::<T::Word>());
    assert!(std::mem::align_of::<T>() >= std::mem::align_of::<T::Word>());
}
