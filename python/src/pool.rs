//! The buffer pool: the output arrays of `zquant.Chain`, reused.
//!
//! A fresh multi-megabyte buffer is `mmap`ed by the allocator and costs a page fault per 4
//! KiB page on first write, which for a 2 MiB chunk costs more (about 1 ms on a VM) than
//! encoding it; a pooled buffer's pages are already mapped. [`empty`] hands out a NumPy
//! `uint8` array whose memory is a `Vec<Line>` owned by a [`PooledBuffer`], the array's base
//! object; when Python drops the last array or view of it, the `Vec` goes back to the pool
//! (or to the allocator when the pool is full).
//!
//! # Safety
//!
//! This module holds the extension's two `unsafe` blocks. zquant's API is not why they
//! exist (it writes into any `&mut [W]`, pooled or not); NumPy and the allocator are:
//!
//! - [`empty`] makes a NumPy array view a `Vec`'s memory with `PooledBuffer` as its base
//!   object (`borrow_from_array`), since the `numpy` crate's safe constructors (`from_vec`,
//!   `from_owned_array`) give the memory back to the allocator, not to a pool. Sound
//!   because of the invariant: **a `PooledBuffer`'s `Vec` is never resized, moved out or
//!   touched by Rust from its creation until its `Drop`**, and `Drop` runs only when the
//!   last array viewing it is gone (NumPy holds a reference to its base). The `Mutex` only
//!   lets `Drop` take the `Vec` out of a frozen class; nothing else locks it. Memory comes
//!   from the pool only when no `PooledBuffer` owns it, so no two arrays alias.
//! - [`zeroed_lines`] takes zeroed memory from `alloc_zeroed` (calloc: the kernel's zero
//!   pages, nothing written here) and makes it a `Vec<Line>`. Sound because the layout is
//!   `Layout::array::<Line>(n)` with a nonzero size, which is what a `Vec<Line>` of
//!   capacity `n` frees with, and all-zero bytes are a valid `Line`. The safe alternatives
//!   cost or break something: `vec![Line(..); n]` writes every byte (std allocates zeroed
//!   memory for primitive zeros, not for a user type), and `Vec::with_capacity` leaves the
//!   bytes uninitialized, which a `&mut [u8]` must never be.

use std::sync::Mutex;

use numpy::PyArray1;
use numpy::ndarray::ArrayView1;
use pyo3::prelude::*;

use crate::error::err;

/// 64 bytes, 64-byte aligned: the unit of the pooled buffers (any element type, SIMD lines).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Buffers of at least this many bytes are pooled; smaller ones come from `malloc`, whose
/// own free lists serve them without page faults.
const POOL_MIN_BYTES: usize = 1 << 16;

/// Released output buffers, kept for the next output of the same size.
struct Pool {
    /// The most bytes held.
    limit: usize,
    /// The bytes held (the sum of `free`'s lengths times 64).
    held: usize,
    /// The buffers held, each owned by no `PooledBuffer`.
    free: Vec<Vec<Line>>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    limit: 64 << 20,
    held: 0,
    free: Vec::new(),
});

/// The pool, locked; a panic while it was locked left it consistent (every update is one
/// push or pop with its `held` change), so a poisoned lock is taken as is.
fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The owner of a pooled buffer: the base object of the NumPy array viewing it. When the
/// last array or view of it is gone, Python drops it and the buffer goes back to the pool
/// (or to the allocator when the pool is full).
#[pyclass(frozen, module = "zquant._zquant")]
pub(crate) struct PooledBuffer {
    lines: Mutex<Vec<Line>>,
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        let lines = std::mem::take(self.lines.get_mut().unwrap_or_else(|e| e.into_inner()));
        let bytes = lines.len() * 64;
        if bytes < POOL_MIN_BYTES {
            return;
        }
        // The oldest buffers give way to this one, so that a pool full of one size still
        // serves a workload that moved on to another; they are freed after the lock.
        let mut evicted = Vec::new();
        {
            let mut p = pool();
            if bytes <= p.limit {
                while p.held + bytes > p.limit && !p.free.is_empty() {
                    let old = p.free.remove(0);
                    p.held -= old.len() * 64;
                    evicted.push(old);
                }
                p.held += bytes;
                p.free.push(lines);
            }
        }
        drop(evicted);
    }
}

/// `n` zeroed lines from `alloc_zeroed` (calloc: a large block's pages come zeroed from
/// the kernel on first touch, not written here), or `None` when that fails.
fn zeroed_lines(n: usize) -> Option<Vec<Line>> {
    let layout = std::alloc::Layout::array::<Line>(n).ok()?;
    if layout.size() == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the layout has a nonzero size; all-zero bytes are a valid `Line`; the
    // pointer comes from the global allocator with exactly this layout, which is the one
    // `Vec<Line>` with capacity `n` frees with.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<Line>();
        if ptr.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(ptr, n, n))
    }
}

/// An uninitialized-looking (`np.empty`) one-dimensional `uint8` array of `nbytes`,
/// 64-byte aligned, whose memory comes from and returns to zquant's buffer pool.
#[pyfunction]
pub(crate) fn empty(py: Python<'_>, nbytes: usize) -> PyResult<Bound<'_, PyArray1<u8>>> {
    let n = nbytes.div_ceil(64).max(1);
    let reused = if nbytes >= POOL_MIN_BYTES {
        let mut p = pool();
        let found = p.free.iter().position(|v| v.len() == n);
        found.map(|i| {
            let v = p.free.swap_remove(i);
            p.held -= v.len() * 64;
            v
        })
    } else {
        None
    };
    let mut lines = match reused {
        Some(v) => v,
        None => zeroed_lines(n).ok_or_else(|| err(format!("cannot allocate {nbytes} bytes")))?,
    };
    let ptr = lines.as_mut_ptr().cast::<u8>();
    let owner = Bound::new(
        py,
        PooledBuffer {
            lines: Mutex::new(lines),
        },
    )?;
    // SAFETY: the module's invariant: the memory is the `Vec` inside `owner`, which is
    // never resized or touched by Rust again until `owner` is dropped (moving the `Vec`
    // into `owner` moved its header, not its heap memory), and `owner` becomes the array's
    // base object, so it outlives the array and every view of it. `nbytes <= n * 64`, and
    // the bytes are initialized (zeroed, or written by an earlier use).
    unsafe {
        let view = ArrayView1::from_shape_ptr(nbytes, ptr);
        Ok(PyArray1::borrow_from_array(&view, owner.into_any()))
    }
}

/// Set the buffer pool's limit in bytes (0 turns it off and frees what it holds); returns
/// the previous limit.
#[pyfunction]
pub(crate) fn set_buffer_pool(limit: usize) -> usize {
    let mut p = pool();
    let before = p.limit;
    p.limit = limit;
    while p.held > limit {
        match p.free.pop() {
            Some(v) => p.held -= v.len() * 64,
            None => break,
        }
    }
    before
}

/// `(limit, bytes held, buffers held)` of the buffer pool.
#[pyfunction]
pub(crate) fn buffer_pool() -> (usize, usize, usize) {
    let p = pool();
    (p.limit, p.held, p.free.len())
}
