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
        let n = src.len().min(dst.len());
        let whole = n - n % LANES;
        // SAFETY: each step reads 16 bytes at `src + i` and writes 16 `u32` at `dst + i`,
        // with `i + 16 <= whole <= n`, or from and to local arrays of 16 (the tail): in
        // bounds. Unaligned loads and stores, except the streamed ones at `dst + 4i`, `i` a
        // multiple of 16 from a 64-byte aligned `dst` (the caller's guarantee), as
        // `vmovntps` requires. AVX-512 F and BW are the caller's guarantee.
        unsafe {
            let mag_mask = _mm512_set1_epi32(p.mag_mask as i32);
            let shift = _mm_cvtsi32_si128(p.shift as i32);
            // The sign (the bit above `width`) moved to bit 31.
            let to_sign = _mm_cvtsi32_si128(31 - p.width as i32);
            let sign_bit = _mm512_set1_epi32(i32::MIN);
            let scale = _mm512_set1_ps(p.scale);
            let inf = _mm512_set1_epi32(p.inf as i32);
            let inf_bits = _mm512_set1_epi32(0x7f80_0000);
            let bias_nan = _mm512_set1_epi32(p.bias_nan as i32);
            let mut nan = _mm512_setzero_si512();
            macro_rules! convert {
                ($s:expr) => {{
                    let x = _mm512_cvtepu8_epi32(_mm_loadu_si128($s.cast()));
                    let mag = _mm512_and_si512(x, mag_mask);
                    nan = _mm512_or_si512(nan, _mm512_add_epi32(mag, bias_nan));
                    let moved = _mm512_castsi512_ps(_mm512_sll_epi32(mag, shift));
                    let v = _mm512_castps_si512(_mm512_mul_ps(moved, scale));
                    let v = _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(mag, inf), inf_bits);
                    // v | (sign & bit 31)
                    let sign = _mm512_sll_epi32(x, to_sign);
                    _mm512_ternarylogic_epi32::<0xf8>(v, sign, sign_bit)
                }};
            }
            let mut i = 0;
            while i < whole {
                let v = convert!(src.as_ptr().add(i));
                let d = dst.as_mut_ptr().add(i);
                if STREAM {
                    _mm512_stream_si512(d.cast(), v);
                } else {
                    _mm512_storeu_si512(d.cast(), v);
                }
                i += LANES;
            }
            if whole < n {
                let (mut s, mut d) = ([0u8; LANES], [0u32; LANES]);
                s[..n - whole].copy_from_slice(&src[whole..n]);
                _mm512_storeu_si512(d.as_mut_ptr().cast(), convert!(s.as_ptr()));
                dst[whole..n].copy_from_slice(&d[..n - whole]);
            }
            _mm512_movepi32_mask(nan) == 0
        }
    }
}
