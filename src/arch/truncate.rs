//! `f32`/`f64` to the low 8, 16 or 32 bits of x86's truncating conversion to `i32`, in
//! AVX-512: NumPy's cast of a float array into `int8` … `int32` on x86-64 (`cvttsd2si`
//! into 32 bits, then the low bits), the loop `codec::astype` runs for those pairs.
//!
//! `vcvttpd2dq`/`vcvttps2dq` give x86's "integer indefinite" `i32::MIN` for NaN, ±Inf and
//! every value whose truncation is outside `i32` by themselves, and `vpmovdw`/`vpmovdb`
//! keep the low bits: three instructions per vector. Portable Rust cannot ask for that
//! conversion (`as` saturates, `to_int_unchecked` is undefined out of range), so the
//! portable loop truncates, tests the range and blends (`arch::i32_or_indefinite`) before
//! the conversion: four more instructions per vector, which made that loop, not the
//! memory, its limit.

use crate::number::storage::{Words, WordsMut};

/// `dst[i]` = the low bits of x86's truncating conversion of `src[i]` to `i32` (`i32::MIN`
/// for NaN, ±Inf and truncations outside `i32`), over the shorter length: `src` the words
/// of `f32` (32-bit words) or `f64` (64-bit words), `dst` 8-, 16- or 32-bit words. Done
/// when the level allows AVX-512; `false` (nothing written) otherwise, or for other words,
/// for the caller's portable loop, whose results these are bit for bit.
#[inline(never)]
pub(crate) fn float_to_i32_low_bits(src: Words<'_>, dst: WordsMut<'_>) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: the kernels require AVX-512 F, BW and VL, which the `Isa::Avx512`
        // level includes and the CPU has (`has_avx512` checked it).
        unsafe {
            match (src, dst) {
                (Words::U64(s), WordsMut::U8(d)) => kernels::f64_to_u8(s, d),
                (Words::U64(s), WordsMut::U16(d)) => kernels::f64_to_u16(s, d),
                (Words::U64(s), WordsMut::U32(d)) => kernels::f64_to_u32(s, d),
                (Words::U32(s), WordsMut::U8(d)) => kernels::f32_to_u8(s, d),
                (Words::U32(s), WordsMut::U16(d)) => kernels::f32_to_u16(s, d),
                (Words::U32(s), WordsMut::U32(d)) => kernels::f32_to_u32(s, d),
                _ => return false,
            }
        }
        return true;
    }
    let _ = (src, dst);
    false
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    /// One kernel: `$load` converts the 16 source words at `$p` into 16 `i32` lanes,
    /// `$store` writes the low bits of the 16 lanes `$v` to `$q`.
    macro_rules! kernel {
        ($name:ident, $s:ty, $d:ty, |$p:ident| $load:expr, |$q:ident, $v:ident| $store:expr) => {
            /// # Safety
            /// The CPU must have AVX-512 F, BW and VL.
            #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
            pub(super) unsafe fn $name(src: &[$s], dst: &mut [$d]) {
                const LANES: usize = 16;
                let n = src.len().min(dst.len());
                let whole = n - n % LANES;
                // SAFETY: each step reads 16 words at `src + i` and writes 16 at
                // `dst + i`, with `i + 16 <= whole <= n`, or from and to local arrays of
                // 16 (the tail): in bounds; unaligned loads and stores. AVX-512 F, BW and
                // VL are the caller's guarantee.
                unsafe {
                    let mut i = 0;
                    while i < whole {
                        let $p = src.as_ptr().add(i);
                        let $q = dst.as_mut_ptr().add(i);
                        let $v = $load;
                        $store;
                        i += LANES;
                    }
                    if whole < n {
                        // Zeros past the end convert to zeros, which are not kept.
                        let (mut s, mut d) = ([<$s>::default(); LANES], [<$d>::default(); LANES]);
                        s[..n - whole].copy_from_slice(&src[whole..n]);
                        let $p = s.as_ptr();
                        let $q = d.as_mut_ptr();
                        let $v = $load;
                        $store;
                        dst[whole..n].copy_from_slice(&d[..n - whole]);
                    }
                }
            }
        };
    }

    /// 16 `f64` at `p` truncated to `i32` (indefinite out of range), in one vector (a
    /// macro, not a function, so that the intrinsics are compiled inside the kernels).
    macro_rules! cvtt_f64 {
        ($p:expr) => {{
            let lo = _mm512_cvttpd_epi32(_mm512_loadu_pd($p.cast()));
            let hi = _mm512_cvttpd_epi32(_mm512_loadu_pd($p.add(8).cast()));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
        }};
    }

    /// 16 `f32` at `p` truncated to `i32` (indefinite out of range).
    macro_rules! cvtt_f32 {
        ($p:expr) => {
            _mm512_cvttps_epi32(_mm512_loadu_ps($p.cast()))
        };
    }

    kernel!(f64_to_u8, u64, u8, |p| cvtt_f64!(p), |q, v| {
        _mm_storeu_si128(q.cast(), _mm512_cvtepi32_epi8(v))
    });
    kernel!(f64_to_u16, u64, u16, |p| cvtt_f64!(p), |q, v| {
        _mm256_storeu_si256(q.cast(), _mm512_cvtepi32_epi16(v))
    });
    kernel!(f64_to_u32, u64, u32, |p| cvtt_f64!(p), |q, v| {
        _mm512_storeu_si512(q.cast(), v)
    });
    kernel!(f32_to_u8, u32, u8, |p| cvtt_f32!(p), |q, v| {
        _mm_storeu_si128(q.cast(), _mm512_cvtepi32_epi8(v))
    });
    kernel!(f32_to_u16, u32, u16, |p| cvtt_f32!(p), |q, v| {
        _mm256_storeu_si256(q.cast(), _mm512_cvtepi32_epi16(v))
    });
    kernel!(f32_to_u32, u32, u32, |p| cvtt_f32!(p), |q, v| {
        _mm512_storeu_si512(q.cast(), v)
    });
}
