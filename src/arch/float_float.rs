//! `f32 -> f64` and `f32`/`f64` to themselves in AVX-512, NaNs canonicalized: the
//! intrinsic twins of the portable loops of `convert::fast::float_float`, which can stream
//! their output (`vmovntpd`/`vmovntps` of whole 64-byte lines).
//!
//! Intrinsics rather than the portable loop built for AVX-512: portable code cannot emit a
//! streamed store, and a large `f32 -> f64` decode (the read side of the common lossy
//! store, float64 data kept as float32) writes twice what it reads, so that storing through
//! the cache (each output line read from memory first) costs a third more traffic.

/// `f32` bits (`src`) widened to `f64` bits (`dst`, the shorter length), every NaN as
/// `f64`'s canonical quiet NaN `0x7ff8_0000_0000_0000`, every other value exactly (as
/// `convert::fast::float_float::widen_f32`). `false` when the CPU has no AVX-512 (nothing
/// written; see [`has_avx512`](super::has_avx512)). With `stream`, and `dst` starting on a
/// 64-byte boundary, its whole vectors are stored by `vmovntpd` (the caller issues the
/// `sfence`, [`stream_fence`](super::stream_fence), after its last block).
pub(crate) fn f32_to_f64(src: &[u32], dst: &mut [u64], stream: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VL (the `Isa::Avx512` level, checked just
        // above); the streamed kernel's `dst` is 64-byte aligned (checked here).
        return unsafe {
            if stream && (dst.as_ptr() as usize).is_multiple_of(64) {
                kernels::f32_to_f64::<true>(src, dst)
            } else {
                kernels::f32_to_f64::<false>(src, dst)
            }
        };
    }
    let _ = (src, dst, stream);
    false
}

/// `f32` bits copied, every NaN as `f32`'s canonical quiet NaN `0x7fc0_0000` (as
/// `convert::fast::float_float::same_f32`); otherwise as [`f32_to_f64`].
pub(crate) fn same_f32(src: &[u32], dst: &mut [u32], stream: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: as in `f32_to_f64`.
        return unsafe {
            if stream && (dst.as_ptr() as usize).is_multiple_of(64) {
                kernels::same_f32::<true>(src, dst)
            } else {
                kernels::same_f32::<false>(src, dst)
            }
        };
    }
    let _ = (src, dst, stream);
    false
}

/// `f64` bits copied, every NaN as `f64`'s canonical quiet NaN (as
/// `convert::fast::float_float::same_f64`); otherwise as [`f32_to_f64`].
pub(crate) fn same_f64(src: &[u64], dst: &mut [u64], stream: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: as in `f32_to_f64`.
        return unsafe {
            if stream && (dst.as_ptr() as usize).is_multiple_of(64) {
                kernels::same_f64::<true>(src, dst)
            } else {
                kernels::same_f64::<false>(src, dst)
            }
        };
    }
    let _ = (src, dst, stream);
    false
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    /// `vector(src + i, mask)` (a 64-byte result from `LANES` source elements, the lanes
    /// outside `mask` not read) stored at `dst + i` for each whole vector, streamed with
    /// `STREAM`, and the tail's lanes by one masked store: the step and the tail of
    /// [`streamed`](super::super::stream::streamed) (whose caller, `by_blocks_streamed`,
    /// stores the head and issues the fence). Every lane is an output word, so a masked-off
    /// lane of the tail is neither read nor written.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VL; with `STREAM`, `dst` must be 64-byte
    /// aligned; `vector` must read at most the lanes of `mask` from its pointer, and
    /// `LANES * size_of::<D>()` must be 64.
    #[inline(always)]
    unsafe fn each<S, D, const LANES: usize, const STREAM: bool>(
        src: &[S],
        dst: &mut [D],
        vector: impl Fn(*const S, __mmask16) -> __m512i,
        store_tail: impl Fn(*mut D, __mmask16, __m512i),
    ) -> bool {
        let all = ((1u32 << LANES) - 1) as __mmask16;
        let step = |x: &[S; LANES], y: &mut [D; LANES]| {
            let (v, d) = (vector(x.as_ptr(), all), y.as_mut_ptr());
            // SAFETY: `y` is `LANES` words, 64 bytes (the caller's guarantee); a streamed
            // one is a 64-byte chunk from a 64-byte aligned `dst` (the caller's guarantee),
            // as `vmovntdq` requires. AVX-512 F is the caller's guarantee.
            unsafe { super::super::stream::store_64::<STREAM>(d.cast(), v) };
            LANES
        };
        // The tail reads and writes only its `len < LANES` lanes (masked load in `vector`,
        // masked store), which lie in `x` and `y`.
        let tail = |x: &[S], y: &mut [D]| {
            if !x.is_empty() {
                let mask = ((1u32 << x.len()) - 1) as __mmask16;
                store_tail(y.as_mut_ptr(), mask, vector(x.as_ptr(), mask));
            }
            x.len()
        };
        super::super::stream::streamed::<S, D, LANES, 1, false>(src, dst, tail, step);
        true
    }

    /// # Safety
    /// The CPU must have AVX-512 F, BW and VL; with `STREAM`, `dst` must be 64-byte
    /// aligned.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn f32_to_f64<const STREAM: bool>(src: &[u32], dst: &mut [u64]) -> bool {
        let nan = _mm512_castsi512_pd(_mm512_set1_epi64(0x7ff8_0000_0000_0000));
        // `vcvtps2pd` is exact for every finite and infinite value (subnormals become
        // normal `f64`s); a NaN keeps its sign and payload, quieted, so it is replaced.
        let vector = |p: *const u32, m: __mmask16| {
            // SAFETY: `p` holds the lanes of `m` (`each`'s guarantee); a masked load does
            // not touch the others. AVX-512 F and VL are this function's.
            let x = unsafe { _mm256_maskz_loadu_ps(m as __mmask8, p.cast()) };
            let y = _mm512_cvtps_pd(x);
            let unordered = _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(y, y);
            _mm512_castpd_si512(_mm512_mask_mov_pd(y, unordered, nan))
        };
        let tail = |d: *mut u64, m: __mmask16, v: __m512i| {
            // SAFETY: `d` holds the lanes of `m` (`each`'s guarantee).
            unsafe { _mm512_mask_storeu_epi64(d.cast(), m as __mmask8, v) }
        };
        // SAFETY: the caller's guarantee; 8 `u64` lanes are 64 bytes.
        unsafe { each::<u32, u64, 8, STREAM>(src, dst, vector, tail) }
    }

    /// # Safety
    /// As [`f32_to_f64`].
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn same_f32<const STREAM: bool>(src: &[u32], dst: &mut [u32]) -> bool {
        let nan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc0_0000));
        // Loads, compares and masked moves never change bits (a signalling NaN is not
        // quieted by them): only the NaN lanes are replaced.
        let vector = |p: *const u32, m: __mmask16| {
            // SAFETY: as in `f32_to_f64`.
            let x = unsafe { _mm512_maskz_loadu_ps(m, p.cast()) };
            let unordered = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
            _mm512_castps_si512(_mm512_mask_mov_ps(x, unordered, nan))
        };
        let tail = |d: *mut u32, m: __mmask16, v: __m512i| {
            // SAFETY: as in `f32_to_f64`.
            unsafe { _mm512_mask_storeu_epi32(d.cast(), m, v) }
        };
        // SAFETY: the caller's guarantee; 16 `u32` lanes are 64 bytes.
        unsafe { each::<u32, u32, 16, STREAM>(src, dst, vector, tail) }
    }

    /// # Safety
    /// As [`f32_to_f64`].
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn same_f64<const STREAM: bool>(src: &[u64], dst: &mut [u64]) -> bool {
        let nan = _mm512_castsi512_pd(_mm512_set1_epi64(0x7ff8_0000_0000_0000));
        let vector = |p: *const u64, m: __mmask16| {
            // SAFETY: as in `f32_to_f64`.
            let x = unsafe { _mm512_maskz_loadu_pd(m as __mmask8, p.cast()) };
            let unordered = _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(x, x);
            _mm512_castpd_si512(_mm512_mask_mov_pd(x, unordered, nan))
        };
        let tail = |d: *mut u64, m: __mmask16, v: __m512i| {
            // SAFETY: as in `f32_to_f64`.
            unsafe { _mm512_mask_storeu_epi64(d.cast(), m as __mmask8, v) }
        };
        // SAFETY: the caller's guarantee; 8 `u64` lanes are 64 bytes.
        unsafe { each::<u64, u64, 8, STREAM>(src, dst, vector, tail) }
    }
}
