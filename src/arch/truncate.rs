//! `f32`/`f64` to the low 8, 16 or 32 bits of x86's truncating conversion to `i32`, in
//! AVX-512 and AVX2: NumPy's cast of a float array into `int8` … `int32` on x86-64 (`cvttsd2si`
//! into 32 bits, then the low bits), the loop `codec::astype` runs for those pairs.
//!
//! `vcvttpd2dq`/`vcvttps2dq` give x86's "integer indefinite" `i32::MIN` for NaN, ±Inf and
//! every value whose truncation is outside `i32` by themselves, and `vpmovdw`/`vpmovdb`
//! keep the low bits: three instructions per vector (AVX2, which has no narrowing store,
//! masks and packs: `vpand`, `vpackusdw`, `vpermq`). Portable Rust cannot ask for that
//! conversion (`as` saturates, `to_int_unchecked` is undefined out of range), so the
//! portable loop truncates, tests the range and blends (`arch::i32_or_indefinite`) before
//! the conversion: four more instructions per vector, which made that loop, not the
//! memory, its limit.

use crate::number::storage::{Words, WordsMut};

/// `dst[i]` = the low bits of x86's truncating conversion of `src[i]` to `i32` (`i32::MIN`
/// for NaN, ±Inf and truncations outside `i32`), over the shorter length: `src` the words
/// of `f32` (32-bit words) or `f64` (64-bit words), `dst` 8-, 16- or 32-bit words. Done
/// when the level allows AVX-512 or AVX2; `false` (nothing written) otherwise, or for other words,
/// for the caller's portable loop, whose results these are bit for bit.
#[inline(never)]
pub(crate) fn float_to_i32_low_bits(src: Words<'_>, dst: WordsMut<'_>) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! each {
            ($m:ident) => {
                match (src, dst) {
                    (Words::U64(s), WordsMut::U8(d)) => $m::f64_to_u8(s, d),
                    (Words::U64(s), WordsMut::U16(d)) => $m::f64_to_u16(s, d),
                    (Words::U64(s), WordsMut::U32(d)) => $m::f64_to_u32(s, d),
                    (Words::U32(s), WordsMut::U8(d)) => $m::f32_to_u8(s, d),
                    (Words::U32(s), WordsMut::U16(d)) => $m::f32_to_u16(s, d),
                    (Words::U32(s), WordsMut::U32(d)) => $m::f32_to_u32(s, d),
                    _ => return false,
                }
            };
        }
        if super::has_avx512() {
            // SAFETY: these kernels require AVX-512 F, BW and VL, which the `Isa::Avx512`
            // level includes and the CPU has (`has_avx512` checked it).
            unsafe { each!(avx512) };
            return true;
        }
        if super::has_avx2() {
            // SAFETY: these kernels require AVX2, which the CPU has (`has_avx2` checked it).
            unsafe { each!(avx2) };
            return true;
        }
    }
    let _ = (src, dst);
    false
}

/// One kernel: `$load` converts the 16 source words at `$p` into `i32` lanes, `$store`
/// writes the low bits of those lanes, `$v`, to `$q`.
#[cfg(target_arch = "x86_64")]
macro_rules! kernel {
    ($features:literal, $name:ident, $s:ty, $d:ty, |$p:ident| $load:expr, |$q:ident, $v:ident| $store:expr) => {
        /// # Safety
        /// The CPU must have the module's instruction set (its `target_feature`s).
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $name(src: &[$s], dst: &mut [$d]) {
            const LANES: usize = 16;
            let n = src.len().min(dst.len());
            let whole = n - n % LANES;
            // SAFETY: each step reads 16 words at `src + i` and writes 16 at `dst + i`,
            // with `i + 16 <= whole <= n`, or from and to local arrays of 16 (the tail): in
            // bounds; unaligned loads and stores. The instruction set is the caller's
            // guarantee.
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

/// The AVX-512 kernels: 16 lanes in one `zmm`, narrowed by `vpmovdw`/`vpmovdb`.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

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

    kernel!(
        "avx512f,avx512bw,avx512vl",
        f64_to_u8,
        u64,
        u8,
        |p| cvtt_f64!(p),
        |q, v| { _mm_storeu_si128(q.cast(), _mm512_cvtepi32_epi8(v)) }
    );
    kernel!(
        "avx512f,avx512bw,avx512vl",
        f64_to_u16,
        u64,
        u16,
        |p| cvtt_f64!(p),
        |q, v| { _mm256_storeu_si256(q.cast(), _mm512_cvtepi32_epi16(v)) }
    );
    kernel!(
        "avx512f,avx512bw,avx512vl",
        f64_to_u32,
        u64,
        u32,
        |p| cvtt_f64!(p),
        |q, v| { _mm512_storeu_si512(q.cast(), v) }
    );
    kernel!(
        "avx512f,avx512bw,avx512vl",
        f32_to_u8,
        u32,
        u8,
        |p| cvtt_f32!(p),
        |q, v| { _mm_storeu_si128(q.cast(), _mm512_cvtepi32_epi8(v)) }
    );
    kernel!(
        "avx512f,avx512bw,avx512vl",
        f32_to_u16,
        u32,
        u16,
        |p| cvtt_f32!(p),
        |q, v| { _mm256_storeu_si256(q.cast(), _mm512_cvtepi32_epi16(v)) }
    );
    kernel!(
        "avx512f,avx512bw,avx512vl",
        f32_to_u32,
        u32,
        u32,
        |p| cvtt_f32!(p),
        |q, v| { _mm512_storeu_si512(q.cast(), v) }
    );
}

/// The AVX2 kernels: 16 lanes in two `ymm`, narrowed by masking each lane to the target's
/// bits and packing with unsigned saturation (which the masked values never reach), then
/// putting the 128-bit halves back in order.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// 16 `f64` at `p` truncated to `i32` (indefinite out of range), in two vectors.
    macro_rules! cvtt_f64 {
        ($p:expr) => {{
            let c = |k: usize| _mm256_cvttpd_epi32(_mm256_loadu_pd($p.add(4 * k).cast()));
            (
                _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(c(0)), c(1)),
                _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(c(2)), c(3)),
            )
        }};
    }

    /// 16 `f32` at `p` truncated to `i32` (indefinite out of range), in two vectors.
    macro_rules! cvtt_f32 {
        ($p:expr) => {
            (
                _mm256_cvttps_epi32(_mm256_loadu_ps($p.cast())),
                _mm256_cvttps_epi32(_mm256_loadu_ps($p.add(8).cast())),
            )
        };
    }

    /// The low 16 bits of the 16 lanes of `(a, b)`, in order.
    macro_rules! low16 {
        ($v:expr) => {{
            let (a, b) = $v;
            let m = _mm256_set1_epi32(0xffff);
            let packed = _mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
            _mm256_permute4x64_epi64::<0b11_01_10_00>(packed)
        }};
    }

    /// The low 8 bits of the 16 lanes of `(a, b)`, in order.
    macro_rules! low8 {
        ($v:expr) => {{
            let (a, b) = $v;
            let m = _mm256_set1_epi32(0xff);
            let packed = _mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
            let words = _mm256_permute4x64_epi64::<0b11_01_10_00>(packed);
            _mm_packus_epi16(
                _mm256_castsi256_si128(words),
                _mm256_extracti128_si256::<1>(words),
            )
        }};
    }

    kernel!("avx2", f64_to_u8, u64, u8, |p| cvtt_f64!(p), |q, v| {
        _mm_storeu_si128(q.cast(), low8!(v))
    });
    kernel!("avx2", f64_to_u16, u64, u16, |p| cvtt_f64!(p), |q, v| {
        _mm256_storeu_si256(q.cast(), low16!(v))
    });
    kernel!("avx2", f64_to_u32, u64, u32, |p| cvtt_f64!(p), |q, v| {
        _mm256_storeu_si256(q.cast(), v.0);
        _mm256_storeu_si256(q.add(8).cast(), v.1)
    });
    kernel!("avx2", f32_to_u8, u32, u8, |p| cvtt_f32!(p), |q, v| {
        _mm_storeu_si128(q.cast(), low8!(v))
    });
    kernel!("avx2", f32_to_u16, u32, u16, |p| cvtt_f32!(p), |q, v| {
        _mm256_storeu_si256(q.cast(), low16!(v))
    });
    kernel!("avx2", f32_to_u32, u32, u32, |p| cvtt_f32!(p), |q, v| {
        _mm256_storeu_si256(q.cast(), v.0);
        _mm256_storeu_si256(q.add(8).cast(), v.1)
    });
}
