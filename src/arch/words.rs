//! Slices and arrays of any dtype seen as the storage words they are made of, byte buffers
//! read as words in place, and fresh zeroed buffers: the `unsafe` that is not about an
//! instruction set. Each `unsafe` block states the invariant that makes it sound; the
//! compile-time half of [`Plain`]'s contract (size and alignment) is checked by
//! `check_plain` in every function that relies on it.

use ndarray::{ArrayD, ArrayViewD, Axis, Dimension, IxDyn, ShapeBuilder};

use crate::number::storage::{Plain, Word, WordBuf};

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

/// Words seen as their native-endian bytes, without a copy: how the positional
/// popcount (`choose::bit_information::positional::Positional`) reads words of every width as one stream.
#[inline(always)]
pub(crate) fn bytes_of_words<W: crate::number::storage::Word>(words: &[W]) -> &[u8] {
    // SAFETY: `Word` is sealed and implemented for `u8`, `u16`, `u32` and `u64` only:
    // integers without padding, so their memory is `size_of::<W>()` initialized bytes each,
    // and `u8` has alignment 1. The lifetime is `words`'.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), std::mem::size_of_val(words)) }
}

/// Native-endian bytes seen as words of `W`, without a copy, when they start aligned for
/// `W` and hold a whole number of words (`None` otherwise): how the zarrs adapter runs
/// stages on zarrs' own chunk buffers.
#[cfg(any(feature = "zarrs", test))]
pub(crate) fn words_of_bytes<W: crate::number::storage::Word>(bytes: &[u8]) -> Option<&[W]> {
    // SAFETY: `Word` is sealed and implemented for `u8`, `u16`, `u32` and `u64` only:
    // integers without padding, for which every bit pattern is valid. `align_to` returns
    // the aligned middle part of the same memory, with `bytes`' lifetime; it is the whole
    // of `bytes` only when the head and tail are empty, which is checked.
    let (head, words, tail) = unsafe { bytes.align_to::<W>() };
    (head.is_empty() && tail.is_empty()).then_some(words)
}

/// [`words_of_bytes`], for writing.
#[cfg(any(feature = "zarrs", test))]
pub(crate) fn words_of_bytes_mut<W: crate::number::storage::Word>(
    bytes: &mut [u8],
) -> Option<&mut [W]> {
    // SAFETY: as in `words_of_bytes`; any words written leave valid bytes (every bit
    // pattern of bytes is valid), and the exclusive borrow of `bytes` moves into the view.
    let (head, words, tail) = unsafe { bytes.align_to_mut::<W>() };
    (head.is_empty() && tail.is_empty()).then_some(words)
}

/// The elements whose storage words are `v`, `T::WORDS` words each, moved without a copy;
/// `None` (dropping `v`) when `T`'s alignment is not its word's, which neither a built-in
/// type nor one the [`dtype`](macro@crate::dtype) macro declares has, or when `v` does not
/// hold whole elements.
///
/// Run-time code turns word buffers into typed arrays by [`array_from_words`], which
/// checks the same; this one is its tests' reference.
#[cfg(test)]
pub(crate) fn vec_from_words<T: Plain>(v: Vec<T::Word>) -> Option<Vec<T>> {
    const { check_plain::<T>() };
    if std::mem::align_of::<T>() != std::mem::align_of::<T::Word>() {
        return None;
    }
    let (ptr, len, cap) = whole_elements::<T::Word>(Word::into_buf(v), T::WORDS, None)?;
    // SAFETY: as in `array_from_words`, whose checks these are.
    Some(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, cap) })
}

/// The allocation of `words` (words of `W`) as `(pointer, elements, capacity in
/// elements)` of `k` words each (at least one), no longer owned by a `Vec` (the caller
/// rebuilds one of the element type); `None` (dropping `words`) when they are words of
/// another width, their length or capacity is not whole elements, or `shape` is given and
/// the elements are not exactly a C-order array of it ([`c_shape_holds`]). Compiled once
/// per word width: the element types' functions keep only the rebuilding of their `Vec`
/// and array.
fn whole_elements<W: Word>(
    words: WordBuf,
    k: usize,
    shape: Option<&[usize]>,
) -> Option<(*mut W, usize, usize)> {
    let v = W::from_buf(words).ok()?;
    let k = k.max(1);
    if v.len() % k != 0 || v.capacity() % k != 0 {
        return None;
    }
    if let Some(shape) = shape
        && !c_shape_holds(shape, v.len() / k)
    {
        return None;
    }
    let mut v = std::mem::ManuallyDrop::new(v);
    Some((v.as_mut_ptr(), v.len() / k, v.capacity() / k))
}

/// The C-order array of `shape` whose elements' storage words are `words`, moved without
/// a copy; `None` when they are words of another width than `T`'s, `T`'s alignment is not
/// its word's, or they do not hold exactly the shape's elements.
///
/// The shape is checked once, by [`c_shape_holds`], not by `ArrayD::from_shape_vec`'s
/// checks, which are compiled once per element type; and with the words' own checks in
/// [`whole_elements`], once per word width.
pub(crate) fn array_from_words<T: Plain>(shape: IxDyn, words: WordBuf) -> Option<ArrayD<T>> {
    const { check_plain::<T>() };
    if std::mem::align_of::<T>() != std::mem::align_of::<T::Word>() {
        return None;
    }
    let (ptr, len, cap) = whole_elements::<T::Word>(words, T::WORDS, Some(shape.slice()))?;
    // SAFETY: `whole_elements`' result: an allocation of the global allocator for `cap`
    // elements of `T::WORDS` words with the word's alignment, which is `T`'s (checked
    // above), so `cap` elements of `T` (`Plain`: `T` is `[Word; WORDS]` without padding)
    // have the same layout and `Vec` frees it as it was made; the first `len` elements are
    // initialized words, and every bit pattern of words is a valid `T` (`Plain`). The
    // allocation has one owner, the result.
    let v = unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, cap) };
    // SAFETY: `from_shape_vec_unchecked` with C strides needs the product of the non-zero
    // axis lengths within `isize::MAX` (checked by `whole_elements`; in bytes, `v`'s
    // allocation bounds it when it is not empty, and an empty array reaches no element),
    // and the elements the strides reach inside `v`: C strides over `shape` reach each of
    // the product-of-lengths elements once, which is `v.len()` (checked), or none when an
    // axis is empty (then `v` is empty, also checked).
    Some(unsafe { ArrayD::from_shape_vec_unchecked(shape, v) })
}

/// Whether `len` elements are exactly an array of `shape`, within the bound `ndarray` sets
/// on an array's shape (the product of its non-zero lengths at most `isize::MAX`).
fn c_shape_holds(shape: &[usize], len: usize) -> bool {
    let nonzero = shape
        .iter()
        .filter(|&&n| n != 0)
        .try_fold(1usize, |acc, &n| acc.checked_mul(n));
    match nonzero {
        Some(n) if n <= isize::MAX as usize => len == if shape.contains(&0) { 0 } else { n },
        _ => false,
    }
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
const HUGE_MIN: usize = 4 << 20;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `array_from_words` builds what `from_shape_vec` builds, and refuses what it refuses.
    #[test]
    fn array_from_words_checks_the_shape_as_ndarray_does() {
        let shapes: &[&[usize]] = &[
            &[],
            &[0],
            &[2, 3],
            &[3, 0, 2],
            &[0, usize::MAX],
            &[0, usize::MAX / 8],
            &[0, usize::MAX / 16],
            &[usize::MAX, 0, 2],
        ];
        for &shape in shapes {
            for len in [0, 1, 5, 6, 7] {
                let words: Vec<u64> = (0..len as u64).collect();
                let want = ArrayD::<f64>::from_shape_vec(
                    IxDyn(shape),
                    words.iter().map(|&w| f64::from_bits(w)).collect(),
                )
                .ok()
                .map(|a| a.mapv(f64::to_bits));
                let got = array_from_words::<f64>(IxDyn(shape), WordBuf::U64(words))
                    .map(|a| a.mapv(f64::to_bits));
                assert_eq!(got, want, "shape {shape:?}, {len} words");
            }
        }
        // Two words per element.
        let c = array_from_words::<crate::dtype::complex::Complex<f32>>(
            IxDyn(&[2]),
            WordBuf::U32(vec![0u32; 4]),
        );
        assert_eq!(c.map(|a| a.len()), Some(2));
        assert!(
            array_from_words::<crate::dtype::complex::Complex<f32>>(
                IxDyn(&[2]),
                WordBuf::U32(vec![0u32; 3])
            )
            .is_none()
        );
    }
}
