//! The block loop of the fast paths: which block of a slice a kernel runs next.
//!
//! A kernel runs on blocks of at most [`FAST_BLOCK`] elements and may decline one (a rare
//! element it leaves to the reference path); [`by_blocks`] then reports how many elements
//! before that block are done. Long slices are not run front to back but as two streams:
//! windows of [`WINDOW_BYTES`], whose two halves take turns, [`STEP_BYTES`] at a time. One
//! core reads memory faster from two sequential streams than from one, because the
//! hardware prefetchers keep more lines in flight. On this project's machine a plain read
//! of 32 MB ran at 15-18 GB/s in one stream and 20-21 in two, and a cast `f64 -> u8`
//! 1.2-1.3x faster (docs/performance.md has the measurements).
//!
//! The order lives in [`Blocks`], which is not generic, so that each kernel is called from
//! one place in [`by_blocks`] and inlined there once.

/// Elements per block of the fast paths: a block with a rare element is redone by the
/// reference path, so the slow path costs at most this many elements per rare one.
pub(crate) const FAST_BLOCK: usize = 1024;

/// Bytes of the wider side (source or target) per step of one stream, at most
/// [`FAST_BLOCK`] elements. A step is one kernel call: the explicit AVX-512 kernels, which
/// cannot be inlined into the AVX2 loop here, pay their set-up per call: at 4 KiB rather
/// than 1 KiB (256 `f32`), `f32 -> float8` and `float8 -> f32` ran 4-8 % faster, the `f64`
/// kernels unchanged, in alternated runs.
const STEP_BYTES: usize = 4096;

/// Bytes of the wider side per window: its two halves are the two streams. A window
/// bounds what a declined block costs: when a block of the first half is declined, the
/// second half's blocks done so far are thrown away (at most half a window); when one of
/// the second half is, the first half is finished alone first, so nothing is lost.
const WINDOW_BYTES: usize = 256 * 1024;

/// Source bytes from which [`by_blocks`] prefetches, when the source is the wider side:
/// before each step, the next step of the same stream (`prefetcht0`, one per line, see
/// `arch::prefetch`). A kernel that mostly reads does a few operations per line, too few
/// for the out-of-order window alone to keep enough lines in flight on some memory
/// systems: on an Intel Xeon (a VM) `f64 -> u8` over 4M elements took 4.7-5.2 ms without
/// and 3.3-3.7 ms with it, about a read-only pass (alternated runs, minima). Where the
/// target is as wide or wider, the stores dominate and the prefetch only competes with
/// them (`f64 -> i64` ran 10-20 % slower with it); below this size the source is in the
/// second-level cache, where the hardware prefetchers keep up.
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// `kernel` over `src` and `dst` (the shorter length) block by block, in the order of
/// [`Blocks`], stopping at the first block it declines. Returns how many elements are done:
/// all, or those before the first declined block. Steps and half-windows are multiples of
/// 64 elements, so an output the kernel streams (32-byte aligned stores) stays aligned
/// from block to block.
#[inline(always)]
pub(crate) fn by_blocks<S, D>(
    src: &[S],
    dst: &mut [D],
    mut kernel: impl FnMut(&[S], &mut [D]) -> bool,
) -> usize {
    let n = src.len().min(dst.len());
    let mut blocks = Blocks::new(n, size_of::<S>().max(size_of::<D>()));
    let ahead = size_of::<S>() > size_of::<D>() && size_of_val(src) >= PREFETCH_MIN_BYTES;
    while let Some((start, end)) = blocks.next() {
        if ahead {
            // The next step of the same stream starts at `end` (see `Blocks::next`); the
            // lines past the source's end, if any, are only hinted.
            let bytes = (end - start) * size_of::<S>();
            crate::arch::prefetch_lines(
                src.as_ptr().cast::<i8>().wrapping_add(end * size_of::<S>()),
                bytes,
            );
        }
        if !kernel(&src[start..end], &mut dst[start..end]) && blocks.declined(start) {
            break;
        }
    }
    blocks.done
}

/// The order in which [`by_blocks`] runs the blocks of `n` elements.
#[derive(Clone, Copy, Debug)]
struct Blocks {
    n: usize,
    step: usize,
    half: usize,
    /// The current window's first element.
    base: usize,
    mode: Mode,
    /// Once [`Blocks::next`] returns `None`, or [`Blocks::declined`] `true`: how many
    /// elements are done.
    done: usize,
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Two streams over the window at `base`: turn `k` runs step `k / 2` of half `k % 2`.
    Paired { k: usize },
    /// A block of the second half was declined after `second` of its elements were done:
    /// the first half alone, from `next`, to its end.
    Finish { next: usize, second: usize },
    /// One stream, from `next` to `n` (the tail after the last whole window).
    InOrder { next: usize },
}

impl Blocks {
    /// The blocks of `n` elements of `wide` bytes (the wider of source and target).
    #[inline(always)]
    fn new(n: usize, wide: usize) -> Self {
        let wide = wide.clamp(1, 16);
        let (step, half) = ((STEP_BYTES / wide).min(FAST_BLOCK), WINDOW_BYTES / wide / 2);
        let mode = if n >= 2 * half {
            Mode::Paired { k: 0 }
        } else {
            Mode::InOrder { next: 0 }
        };
        Blocks {
            n,
            step,
            half,
            base: 0,
            mode,
            done: 0,
        }
    }

    /// The next block to run, `start..end`, or `None` to stop (then `done` is set).
    /// Inlined, as the other methods: in a call, the kernel's vector constants (every
    /// vector register is the caller's to save) would be reloaded once per block.
    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            match &mut self.mode {
                Mode::Paired { k } => {
                    if *k < 2 * (self.half / self.step) {
                        let start = self.base + (*k % 2) * self.half + (*k / 2) * self.step;
                        *k += 1;
                        return Some((start, start + self.step));
                    }
                    self.base += 2 * self.half;
                    self.mode = if self.n - self.base >= 2 * self.half {
                        Mode::Paired { k: 0 }
                    } else {
                        Mode::InOrder { next: self.base }
                    };
                }
                Mode::Finish { next, second } => {
                    let end = self.base + self.half;
                    if *next >= end {
                        self.done = end + *second;
                        return None;
                    }
                    let len = FAST_BLOCK.min(end - *next);
                    let start = *next;
                    *next += len;
                    return Some((start, start + len));
                }
                Mode::InOrder { next } => {
                    if *next >= self.n {
                        self.done = self.n;
                        return None;
                    }
                    let len = FAST_BLOCK.min(self.n - *next);
                    let start = *next;
                    *next += len;
                    return Some((start, start + len));
                }
            }
        }
    }

    /// The block at `start` was declined: `true` to stop (then `done` is set), `false` to
    /// go on (the first half of the window still to finish).
    #[inline(always)]
    fn declined(&mut self, start: usize) -> bool {
        match self.mode {
            Mode::Paired { .. } if start >= self.base + self.half => {
                // The first half ran this turn's step before the second half's.
                let second = start - self.base - self.half;
                self.mode = Mode::Finish {
                    next: self.base + second + self.step,
                    second,
                };
                false
            }
            _ => {
                self.done = start;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `by_blocks` over `n` elements of `T` into bytes (a source at least as wide as the
    /// target, which is prefetched from `PREFETCH_MIN_BYTES` on), declining the blocks that
    /// hold an index of `bad`: how many it says are done, and how often each element ran.
    fn run<T: Default + Clone>(n: usize, bad: &[usize]) -> (usize, Vec<u32>) {
        let src = vec![T::default(); n];
        let mut dst = vec![0u8; n];
        let mut ran = vec![0u32; n];
        let base = src.as_ptr() as usize;
        let done = by_blocks(&src, &mut dst, |s, _| {
            let start = (s.as_ptr() as usize - base) / size_of::<T>();
            if bad.iter().any(|&b| (start..start + s.len()).contains(&b)) {
                return false;
            }
            ran[start..start + s.len()].iter_mut().for_each(|r| *r += 1);
            true
        });
        (done, ran)
    }

    /// Every element runs once without a decline; with declines, the count done is the
    /// start of the first declined block in index order, and every element before it ran.
    fn check<T: Default + Clone>() {
        let half = WINDOW_BYTES / size_of::<T>() / 2;
        let step = (STEP_BYTES / size_of::<T>()).min(FAST_BLOCK);
        let prefetched = PREFETCH_MIN_BYTES / size_of::<T>() + 2 * half + 13;
        for n in [
            0,
            1,
            1000,
            2 * half - 1,
            2 * half,
            5 * half + 77,
            prefetched,
        ] {
            let (done, ran) = run::<T>(n, &[]);
            assert_eq!(done, n);
            assert!(ran.iter().all(|&r| r == 1), "n {n}");
            let spots = [
                0,
                5,
                half - 1,
                half,
                half + 3 * step,
                2 * half + 1,
                3 * half + 9,
            ];
            let mut sets: Vec<Vec<usize>> = spots.iter().map(|&b| vec![b]).collect();
            // A second-half decline met before a later first-half one, and the reverse.
            sets.push(vec![half + 1, 4 * step]);
            sets.push(vec![3 * step + 2, half + step]);
            sets.push(vec![2 * half + half + 2, 2 * half + 10 * step]);
            for bad in sets {
                let bad: Vec<usize> = bad.into_iter().filter(|&b| b < n).collect();
                let Some(&first) = bad.iter().min() else {
                    continue;
                };
                let (done, ran) = run::<T>(n, &bad);
                assert!(
                    done <= first && first - done < FAST_BLOCK,
                    "n {n} bad {bad:?}: {done}"
                );
                assert!(ran[..done].iter().all(|&r| r == 1), "n {n} bad {bad:?}");
            }
        }
    }

    #[test]
    fn blocks_run_each_element_once_and_stop_at_the_first_decline() {
        check::<u8>();
        check::<u16>();
        check::<u32>();
        check::<u64>();
    }
}
