//! One-byte small floats (float8, float6, float4) widened into `f32` in AVX2 and AVX-512:
//! the intrinsic twins of the portable `convert::fast::widen::widen`, which can stream
//! their output.

/// The per-call constants of [`widen_bytes_to_f32`] and of its portable twin
/// `convert::fast::widen::widen`, derived from the source layout by
/// `convert::fast::widen::widen_plan`.
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
/// as `convert::fast::widen::widen` does: `false` when a NaN was met (the block is then
/// redone by the reference path), or when the CPU has no AVX2 (nothing written; see
/// [`has_avx2`](super::has_avx2)). With `stream`, and `dst` starting on a 32-byte boundary
/// (64 with AVX-512), its whole vectors are stored by `vmovntps` (see
/// [`STREAM_MIN`](super::stream::STREAM_MIN)).
pub(crate) fn widen_bytes_to_f32(src: &[u8], dst: &mut [u32], p: WidenPlan, stream: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: the CPU has AVX-512 F and BW (the `Isa::Avx512` level, checked just
        // above); the streamed kernel's `dst` is 64-byte aligned (checked here).
        return unsafe {
            if stream && (dst.as_ptr() as usize).is_multiple_of(64) {
                kernels::avx512_bytes_to_f32::<true>(src, dst, p)
            } else {
                kernels::avx512_bytes_to_f32::<false>(src, dst, p)
            }
        };
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above); the streamed kernel's `dst` is
        // 32-byte aligned (checked here).
        return unsafe {
            if stream && (dst.as_ptr() as usize).is_multiple_of(32) {
                kernels::bytes_to_f32::<true>(src, dst, p)
            } else {
                kernels::bytes_to_f32::<false>(src, dst, p)
            }
        };
    }
    let _ = (src, dst, p, stream);
    false
}

#[cfg(target_arch = "x86_64")]
mod kernels {
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
        // SAFETY (the loads and stores below): each step reads 8 bytes of its chunk `x` and
        // writes its 8 `u32` `y`, the tail reads and writes local arrays of 8. Unaligned
        // loads and stores, except the streamed ones, each a chunk of 8 words from a 32-byte
        // aligned `dst` (the caller's guarantee), as `vmovntps` requires. AVX2 is the
        // caller's guarantee.
        let mag_mask = _mm256_set1_epi32(p.mag_mask as i32);
        let shift = _mm_cvtsi32_si128(p.shift as i32);
        let width = _mm_cvtsi32_si128(p.width as i32);
        let scale = _mm256_set1_ps(p.scale);
        let inf = _mm256_set1_epi32(p.inf as i32);
        let inf_bits = _mm256_set1_epi32(0x7f80_0000);
        let bias_nan = _mm256_set1_epi32(p.bias_nan as i32);
        let nan = std::cell::Cell::new(_mm256_setzero_si256());
        // The `f32` bits of 8 codes at `s`, as the portable `widen`: the magnitude moved
        // and scaled (one IEEE multiplication, as there), ±Inf set apart, the sign (the
        // bit above `width`) put back; NaN magnitudes folded into `nan`.
        let convert = |s: &[u8; LANES]| {
            // SAFETY: see above.
            let x = _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(s.as_ptr().cast()) });
            let mag = _mm256_and_si256(x, mag_mask);
            nan.set(_mm256_or_si256(nan.get(), _mm256_add_epi32(mag, bias_nan)));
            let moved = _mm256_castsi256_ps(_mm256_sll_epi32(mag, shift));
            let v = _mm256_castps_si256(_mm256_mul_ps(moved, scale));
            let v = _mm256_blendv_epi8(v, inf_bits, _mm256_cmpeq_epi32(mag, inf));
            let sign = _mm256_slli_epi32::<31>(_mm256_srl_epi32(x, width));
            _mm256_or_si256(v, sign)
        };
        let step = |x: &[u8; LANES], y: &mut [u32; LANES]| {
            let (v, d) = (convert(x), y.as_mut_ptr().cast::<__m256i>());
            // SAFETY: see above.
            unsafe {
                if STREAM {
                    _mm256_stream_si256(d, v);
                } else {
                    _mm256_storeu_si256(d, v);
                }
            }
            LANES
        };
        let tail = |x: &[u8], y: &mut [u32]| {
            if !x.is_empty() {
                let (mut s, mut d) = ([0u8; LANES], [0u32; LANES]);
                s[..x.len()].copy_from_slice(x);
                // SAFETY: see above.
                unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), convert(&s)) };
                y.copy_from_slice(&d[..x.len()]);
            }
            x.len()
        };
        super::super::stream::streamed::<u8, u32, LANES, 1, false>(src, dst, tail, step);
        _mm256_movemask_ps(_mm256_castsi256_ps(nan.get())) == 0
    }

    /// The AVX-512 twin of [`bytes_to_f32`]: 16 codes per vector, ±Inf by a compare mask,
    /// the sign moved to bit 31 by one shift and merged by one `vpternlogd`; streamed
    /// stores are whole 64-byte lines (`vmovntps` of a `zmm`), which the write-combining
    /// buffers send out without merging halves.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW; with `STREAM`, `dst` must be 64-byte aligned.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn avx512_bytes_to_f32<const STREAM: bool>(
        src: &[u8],
        dst: &mut [u32],
        p: super::WidenPlan,
    ) -> bool {
        const LANES: usize = 16;
        // SAFETY (the loads and stores below): each step reads 16 bytes of its chunk `x`
        // and writes its 16 `u32` `y`, the tail reads and writes local arrays of 16.
        // Unaligned loads and stores, except the streamed ones, each a chunk of 16 words
        // from a 64-byte aligned `dst` (the caller's guarantee), as `vmovntps` requires.
        // AVX-512 F and BW are the caller's guarantee.
        let mag_mask = _mm512_set1_epi32(p.mag_mask as i32);
        let shift = _mm_cvtsi32_si128(p.shift as i32);
        // The sign (the bit above `width`) moved to bit 31.
        let to_sign = _mm_cvtsi32_si128(31 - p.width as i32);
        let sign_bit = _mm512_set1_epi32(i32::MIN);
        let scale = _mm512_set1_ps(p.scale);
        let inf = _mm512_set1_epi32(p.inf as i32);
        let inf_bits = _mm512_set1_epi32(0x7f80_0000);
        let bias_nan = _mm512_set1_epi32(p.bias_nan as i32);
        let nan = std::cell::Cell::new(_mm512_setzero_si512());
        let convert = |s: &[u8; LANES]| {
            // SAFETY: see above.
            let x = _mm512_cvtepu8_epi32(unsafe { _mm_loadu_si128(s.as_ptr().cast()) });
            let mag = _mm512_and_si512(x, mag_mask);
            nan.set(_mm512_or_si512(nan.get(), _mm512_add_epi32(mag, bias_nan)));
            let moved = _mm512_castsi512_ps(_mm512_sll_epi32(mag, shift));
            let v = _mm512_castps_si512(_mm512_mul_ps(moved, scale));
            let v = _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(mag, inf), inf_bits);
            // v | (sign & bit 31)
            let sign = _mm512_sll_epi32(x, to_sign);
            _mm512_ternarylogic_epi32::<0xf8>(v, sign, sign_bit)
        };
        let step = |x: &[u8; LANES], y: &mut [u32; LANES]| {
            let (v, d) = (convert(x), y.as_mut_ptr());
            // SAFETY: see above.
            unsafe { super::super::stream::store_64::<STREAM>(d.cast(), v) };
            LANES
        };
        let tail = |x: &[u8], y: &mut [u32]| {
            if !x.is_empty() {
                let (mut s, mut d) = ([0u8; LANES], [0u32; LANES]);
                s[..x.len()].copy_from_slice(x);
                // SAFETY: see above.
                unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), convert(&s)) };
                y.copy_from_slice(&d[..x.len()]);
            }
            x.len()
        };
        super::super::stream::streamed::<u8, u32, LANES, 1, false>(src, dst, tail, step);
        // The lanes' sign bits (`vpmovd2m` would need AVX-512 DQ).
        _mm512_cmplt_epi32_mask(nan.get(), _mm512_setzero_si512()) == 0
    }
}
