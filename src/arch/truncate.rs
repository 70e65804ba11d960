//! `f32`/`f64` to the low 8, 16 or 32 bits of x86's truncating conversion to `i32`:
//! NumPy's cast of a float array into `int8` … `int32` on x86-64 (`cvttsd2si` into 32
//! bits, then the low bits), which `codec::astype` runs for those pairs.
//!
//! In AVX-512 and AVX2 ([`float_to_i32_low_bits`]), `vcvttpd2dq`/`vcvttps2dq` give x86's
//! "integer indefinite" `i32::MIN` for NaN, ±Inf and every value whose truncation is
//! outside `i32` by themselves, and `vpmovdw`/`vpmovdb` keep the low bits (AVX2, which has
//! no narrowing store, masks and packs: `vpand`, `vpackusdw`, `vpermq`). Portable Rust
//! cannot ask for that conversion (`as` saturates, `to_int_unchecked` is undefined out of
//! range), so the portable form ([`truncate_or_indefinite`]) tests the range and blends
//! before converting: a compare and a blend more per vector, which LLVM's AVX2 build of
//! it (with a `vroundpd` as well, before the range test moved onto the value) spent, and
//! which made that loop, not the memory, its limit.

use crate::number::storage::{Words, WordsMut};

/// `v` truncated to `i32` when the truncation is in `i32`'s range, else `i32::MIN` (NaN and
/// ±Inf included): x86's `cvttsd2si` into 32 bits, for portable loops. The range test is
/// on `v` itself (`trunc(v)` is in range exactly when `v` is in `(-2^31 - 1, 2^31)`), so
/// no rounding instruction is needed: SSE2 has none, and the portable build called `trunc`
/// per element; out-of-range values are replaced by `i32::MIN` before the conversion
/// (a compare and a blend), which makes the unchecked conversion sound.
#[inline(always)]
pub(crate) fn truncate_or_indefinite(v: f64) -> i32 {
    let in_range = v > -2_147_483_649.0 && v < 2_147_483_648.0;
    let w = if in_range { v } else { -2_147_483_648.0 };
    // SAFETY: `w` is in `(-2^31 - 1, 2^31)` (a NaN fails both comparisons and gives
    // `-2^31`): finite, and its truncation is in `[-2^31, 2^31 - 1]`, representable.
    unsafe { w.to_int_unchecked::<i32>() }
}

/// `dst[i]` = the low bits of x86's truncating conversion of `src[i]` to `i32` (`i32::MIN`
/// for NaN, ±Inf and truncations outside `i32`), over the shorter length: `src` the words
/// of `f32` (32-bit words) or `f64` (64-bit words), `dst` 8-, 16- or 32-bit words. Done
/// when the level allows AVX-512 or AVX2; `false` (nothing written) otherwise, or for
/// other words, for the caller's portable loop ([`truncate_or_indefinite`] per element),
/// whose results these are bit for bit.
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
        // The level read once (as `has_avx512` and `has_avx2` would read it).
        let level = super::level::isa();
        if level >= super::level::Isa::Avx512 {
            // SAFETY: these kernels require AVX-512 F, BW and VL, which the `Isa::Avx512`
            // level includes and the CPU has (`isa` allows no level the CPU lacks).
            unsafe { each!(avx512) };
            return true;
        }
        if level >= super::level::Isa::Avx2 {
            // SAFETY: these kernels require AVX2, which the CPU has (as above).
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

#[cfg(test)]
mod tests {
    use crate::number::xorshift::xorshift64;

    /// `truncate_or_indefinite` against the truncation then the range test
    /// (`i32_or_indefinite(trunc(v))`): the bounds' neighbours, NaN, ±Inf, and any bits.
    #[test]
    fn truncate_or_indefinite_is_truncation_then_range() {
        let mut xs = vec![
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
        ];
        for b in [
            -2_147_483_649.0,
            -2_147_483_648.0,
            2_147_483_647.0,
            2_147_483_648.0,
            0.5,
        ] {
            for k in 0..4u64 {
                let x: f64 = b;
                xs.extend([
                    f64::from_bits(x.to_bits() + k),
                    f64::from_bits(x.to_bits().wrapping_sub(k)),
                    -f64::from_bits(x.to_bits() + k),
                ]);
            }
        }
        let mut next = xorshift64(0x2545_f491_4f6c_dd1d);
        for _ in 0..100_000 {
            let r = next();
            xs.push(f64::from_bits(r));
            // Exponents near 2^31, where the range test decides.
            xs.push(f64::from_bits(
                (r & 0x800f_ffff_ffff_ffff) | (0x41c0_0000_0000_0000 + (r >> 60 << 52)),
            ));
        }
        for x in xs {
            let want = super::super::i32_or_indefinite(x.trunc());
            assert_eq!(
                super::truncate_or_indefinite(x),
                want,
                "{x:e} ({:#x})",
                x.to_bits()
            );
        }
    }
}
