//! `f32` to bfloat16, nearest-even, with AVX-512 BF16's `vcvtne2ps2bf16`: 32 elements per
//! instruction, where the portable kernel (`convert::narrow::from_f32::truncate`) rounds
//! with integer arithmetic; and `f64` to bfloat16 through `f32` rounded to odd
//! ([`f64_to_bf16`]).
//!
//! The instruction rounds a normal `f32` to nearest-even exactly as the integer rounding
//! does (Intel's pseudo-code adds `0x7fff + lsb` to the bits and keeps the top half), and
//! so does it for zeros, ±Inf and overflow to Inf. It differs in two cases:
//! - a NaN becomes a quiet NaN (bit 6 set, payload's top bits kept) — the caller hands
//!   every block with a NaN to the general kernel anyway (its magnitude is above the
//!   limit), so only the largest magnitude matters, which is computed on the source;
//! - a subnormal input is taken as zero (denormals-are-zero, whatever MXCSR says), where
//!   bfloat16 has the same subnormals as `f32` and cast_value rounds them. The kernel
//!   tracks the smallest nonzero magnitude and reports a block with a subnormal as not
//!   done; the caller then converts it by the portable kernel.

/// `src` (`f32` bits) converted into bfloat16 codes in `dst` (the shorter length), rounded
/// to nearest-even, when the CPU has AVX-512 BF16 and the level allows AVX-512: the largest
/// magnitude (bits without the sign) of `src`. `None` without BF16 (nothing written) or
/// when `src` holds a subnormal (`dst` partly written): the caller converts.
#[inline(always)]
pub(crate) fn f32_to_bf16(src: &[u32], dst: &mut [u16]) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        if super::has_avx512_bf16() {
            // SAFETY: `avx512_f32_to_bf16` requires AVX-512 F, BW and BF16, which
            // `has_avx512_bf16` checked.
            return unsafe { avx512_f32_to_bf16(src, dst) };
        }
    }
    let _ = (src, dst);
    None
}

/// See [`f32_to_bf16`].
///
/// # Safety
/// The CPU must support AVX-512 F, BW and BF16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
#[inline]
unsafe fn avx512_f32_to_bf16(src: &[u32], dst: &mut [u16]) -> Option<u32> {
    use std::arch::x86_64::*;
    const STEP: usize = 32;
    let len = src.len().min(dst.len());
    let n = len / STEP * STEP;
    // SAFETY: the CPU has AVX-512 F, BW and BF16 (this function's contract). A step reads
    // 32 `u32` from its source pointer and writes 32 `u16` at its target pointer
    // (unaligned forms): in the loop `src[i..i + 32]` and `dst[i..i + 32]` with
    // `i + 32 <= n <= len`, both slices at least `len` long; for the rest, two local
    // arrays of 32. The transmute is between two 64-byte vector types, every bit pattern
    // valid in both.
    unsafe {
        let mag_mask = _mm512_set1_epi32(0x7fff_ffff);
        let one = _mm512_set1_epi32(1);
        let mut largest = _mm512_setzero_si512();
        // The smallest `magnitude - 1` (wrapping): below `0x7f_ffff` exactly when a
        // magnitude is a subnormal's (zero wraps to the largest value).
        let mut smallest_m1 = _mm512_set1_epi32(-1);
        macro_rules! step {
            ($s:expr, $d:expr) => {{
                let s = $s.cast::<__m512i>();
                let lo = _mm512_loadu_si512(s);
                let hi = _mm512_loadu_si512(s.add(1));
                let m_lo = _mm512_and_si512(lo, mag_mask);
                let m_hi = _mm512_and_si512(hi, mag_mask);
                largest = _mm512_max_epu32(largest, _mm512_max_epu32(m_lo, m_hi));
                let low =
                    _mm512_min_epu32(_mm512_sub_epi32(m_lo, one), _mm512_sub_epi32(m_hi, one));
                smallest_m1 = _mm512_min_epu32(smallest_m1, low);
                // The second operand fills the lower 16 words.
                let codes = _mm512_cvtne2ps_pbh(_mm512_castsi512_ps(hi), _mm512_castsi512_ps(lo));
                let codes = std::mem::transmute::<__m512bh, __m512i>(codes);
                _mm512_storeu_si512($d.cast::<__m512i>(), codes);
            }};
        }
        for i in (0..n).step_by(STEP) {
            step!(src.as_ptr().add(i), dst.as_mut_ptr().add(i));
        }
        // The last partial step through zero-padded buffers (zeros convert to zeros).
        let rest = len - n;
        if rest > 0 {
            let mut s = [0u32; STEP];
            let mut d = [0u16; STEP];
            s[..rest].copy_from_slice(&src[n..len]);
            step!(s.as_ptr(), d.as_mut_ptr());
            dst[n..len].copy_from_slice(&d[..rest]);
        }
        if (_mm512_reduce_min_epu32(smallest_m1) as u32) < 0x007f_ffff {
            return None;
        }
        Some(_mm512_reduce_max_epu32(largest) as u32)
    }
}

/// `src` (`f64` bits) converted into bfloat16 codes in `dst` (the shorter length), rounded
/// to nearest-even, when the CPU has AVX-512 BF16 and the level allows AVX-512: `true` when
/// done, `false` when some element's `f32` stand-in (below) has a magnitude of at least
/// `limit` (the caller's rare elements: NaN, ±Inf, overflow) or is an `f32` subnormal
/// (`dst` partly written), or without BF16 (nothing written).
///
/// Each value is first rounded to odd at `f32` precision (as `arch::F16c::f16_from_f64`
/// does: truncated to 24 significant bits, the last one set when a dropped bit was), which
/// `vcvtpd2ps` converts exactly where the result is a normal `f32`; `vcvtne2ps2bf16` then
/// rounds that to nearest-even, and with 24 bits against bfloat16's 8 (at least two more)
/// the two roundings are one (a value strictly between two bfloat16 neighbours stays
/// strictly between them, a tie stays a tie, as both are on the `f32` grid). A value whose
/// stand-in is an `f32` subnormal is declined: `vcvtpd2ps` would round it a second time,
/// and `vcvtne2ps2bf16` takes subnormals as zero. One that `vcvtpd2ps` rounds to a zero is
/// below `2^-149`, less than half bfloat16's smallest subnormal (`2^-133`): a zero of its
/// sign, as the instruction gives; one that it rounds up to `f32`'s smallest normal is
/// within `2^-150` of it, which is also the bfloat16 result. The `limit` test on the
/// stand-in is the test on the value: rounding to odd is monotonic and keeps every `f32`
/// with an even last bit (bfloat16's overflow thresholds are such).
#[inline(always)]
pub(crate) fn f64_to_bf16(src: &[u64], dst: &mut [u16], limit: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if super::has_avx512_bf16() {
            // SAFETY: `avx512_f64_to_bf16` requires AVX-512 F, BW, VL, DQ and BF16, which
            // `has_avx512_bf16` checked (the AVX-512 level includes VL and DQ).
            return unsafe { avx512_f64_to_bf16(src, dst, limit) };
        }
    }
    let _ = (src, dst, limit);
    false
}

/// See [`f64_to_bf16`]: sixteen values a step rounded to odd at `f32` precision
/// (`arch::f16c`'s loop, shared with its `f64 -> float16` kernel), then `vcvtneps2bf16`;
/// the largest magnitude and the smallest `magnitude - 1` kept (`vpmaxud`, `vpminud`) and
/// compared once at the end (the tail's masked-off zeros are neither large nor subnormal).
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and BF16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")]
unsafe fn avx512_f64_to_bf16(src: &[u64], dst: &mut [u16], limit: u32) -> bool {
    use std::arch::x86_64::*;
    // SAFETY: the features are the caller's guarantee, and all `narrow` uses. The transmute
    // is between two 32-byte vector types, every bit pattern valid in both.
    unsafe {
        let mag_mask = _mm512_set1_epi32(i32::MAX);
        let one = _mm512_set1_epi32(1);
        let mut largest = _mm512_setzero_si512();
        // The smallest `magnitude - 1` (wrapping): below `0x7f_ffff` exactly when a
        // magnitude is a subnormal's (zero wraps to the largest value).
        let mut smallest_m1 = _mm512_set1_epi32(-1);
        super::f16c::kernels::f64_steps_to_odd_f32(
            src,
            dst,
            |x| (x, None),
            |f| {
                let mag = _mm512_and_si512(_mm512_castps_si512(f), mag_mask);
                largest = _mm512_max_epu32(largest, mag);
                smallest_m1 = _mm512_min_epu32(smallest_m1, _mm512_sub_epi32(mag, one));
                std::mem::transmute::<__m256bh, __m256i>(_mm512_cvtneps_pbh(f))
            },
        );
        (_mm512_reduce_min_epu32(smallest_m1) as u32) >= 0x007f_ffff
            && (_mm512_reduce_max_epu32(largest) as u32) < limit
    }
}

/// The 64-bit integers `src` (`int64` with `SIGNED`, else `uint64`) into bfloat16 codes in
/// `dst` (the shorter length), nearest-even, when the CPU has AVX-512 BF16 and the level
/// allows AVX-512 (`false` otherwise: nothing written). Every such integer has a bfloat16
/// code (`2^64` is far below its largest finite value, and no integer but 0, which gives
/// +0, is near its subnormals): nothing is declined.
///
/// In registers: AVX-512 DQ's conversions make each integer an `f64` truncated to 53 bits
/// and the bits dropped (`arch::f16c`'s `int64_to_f64_dropped`, exact below `2^53`), the
/// `f64 -> bfloat16` loop rounds that to odd at `f32` precision, the dropped bits in its
/// sticky bit, and `vcvtneps2bf16` to nearest-even: one rounding of the integer, as
/// [`f64_to_bf16`] explains (the `f32`s are normal, at least 1 in magnitude, or zero).
#[inline(always)]
pub(crate) fn int64_to_bf16<const SIGNED: bool>(src: &[u64], dst: &mut [u16]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if super::has_avx512_bf16() {
            // SAFETY: `avx512_int64_to_bf16` requires AVX-512 F, BW, VL, DQ and BF16, which
            // `has_avx512_bf16` checked (the AVX-512 level includes VL and DQ).
            unsafe { avx512_int64_to_bf16::<SIGNED>(src, dst) };
            return true;
        }
    }
    let _ = (src, dst);
    false
}

/// See [`int64_to_bf16`].
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL, DQ and BF16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")]
unsafe fn avx512_int64_to_bf16<const SIGNED: bool>(src: &[u64], dst: &mut [u16]) {
    use std::arch::x86_64::*;
    // SAFETY: the features are the caller's guarantee, and all `value` and `narrow` use.
    // The transmute is between two 32-byte vector types, every bit pattern valid in both.
    unsafe {
        super::f16c::kernels::f64_steps_to_odd_f32(
            src,
            dst,
            |x| super::f16c::kernels::int64_to_f64_dropped::<SIGNED>(x),
            |f| std::mem::transmute::<__m256bh, __m256i>(_mm512_cvtneps_pbh(f)),
        );
    }
}
