//! `f32` to the 8-bit float formats, nearest-even, in explicit AVX2 and AVX-512.

// Written with intrinsics because LLVM compiles the portable version
// (`convert::narrow::from_f32::rebias`, which documents the arithmetic and runs without
// AVX2) with three permutes per 32 elements and its constants reloaded from the stack in
// the loop. Here the sign goes through the 16-bit packs, and one `vpermd` restores the order.

/// How far ahead of its loads a kernel's loop asks for the source (`prefetcht0`, one per
/// 64-byte line it reads, addresses computed by `wrapping_add` and never dereferenced: a
/// prefetch past the slice's end neither faults nor reads). The loop does about 60
/// operations per 256 bytes read, too many for the out-of-order window to keep enough
/// lines in flight from memory by itself: on an Intel Xeon (a VM, the input evicted by a
/// 16 MiB copy between runs) `f32 -> float8_e4m3` over 4M elements took 1.23-1.42 ms
/// without and 0.96-1.02 ms with it at AVX-512 (2.6-2.8 and 1.5-2.1 ms at AVX2), minima
/// of alternated runs; 2 and 4 KiB ahead were no better. In the cache it costs one
/// load-port operation per line.
const PREFETCH_AHEAD: usize = 1024;

/// The per-call constants of [`f32_to_byte_float`]: `f32` bit patterns and a shift count,
/// derived from the target layout by `convert::narrow::from_f32::Plan`, which holds them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByteFloatPlan {
    /// The largest magnitude converted (the value of the clamped code).
    pub(crate) clamp_source: u32,
    /// The target's smallest normal value.
    pub(crate) min_normal: u32,
    /// Added to an exponent field: `C = 2^(E + shift)`.
    pub(crate) to_magic: u32,
    /// Subtracted from the 16-bit codes: `(151 - m - bias) << m` (below 2^15).
    pub(crate) code_offset: u32,
    /// Difference in mantissa bits.
    pub(crate) shift: u32,
    /// The target's sign bit (at most `0x80`).
    pub(crate) sign_bit: u32,
    /// The AVX-512 kernel's lookups, indexed by the exponent field `E` of the magnitude
    /// raised to `min_normal` (`E` from `min_normal`'s to `clamp_source`'s) modulo
    /// `table_lanes`: `magic[E]` is `C`'s bits (`(E << 23) + to_magic`) and `offset[E]` is
    /// `C - (C >> shift) + code_offset`, what the code is below the sum's bits.
    pub(crate) magic: [u32; 32],
    /// See `magic`.
    pub(crate) offset: [u32; 32],
    /// 16 when the exponents fit one `vpermd` table, 32 when two (`vpermt2d`), 0 when they
    /// need more (the AVX2 kernel then runs at the AVX-512 level too).
    pub(crate) table_lanes: u32,
}

impl ByteFloatPlan {
    /// The plan of these constants (see the fields), its tables included.
    pub(crate) const fn new(
        clamp_source: u32,
        min_normal: u32,
        to_magic: u32,
        code_offset: u32,
        shift: u32,
        sign_bit: u32,
    ) -> ByteFloatPlan {
        let low = min_normal >> 23;
        let high = clamp_source >> 23;
        let span = high.saturating_sub(low) + 1;
        let table_lanes = if span <= 16 {
            16
        } else if span <= 32 {
            32
        } else {
            0
        };
        let mut magic = [0u32; 32];
        let mut offset = [0u32; 32];
        if table_lanes != 0 {
            let mut e = low;
            while e <= high {
                let c = (e << 23).wrapping_add(to_magic);
                let j = (e % table_lanes) as usize;
                magic[j] = c;
                offset[j] = c.wrapping_sub(c >> shift).wrapping_add(code_offset);
                e += 1;
            }
        }
        ByteFloatPlan {
            clamp_source,
            min_normal,
            to_magic,
            code_offset,
            shift,
            sign_bit,
            magic,
            offset,
            table_lanes,
        }
    }
}

/// `src` (`f32` bits) converted into 8-bit codes in `dst` (the shorter length) by the
/// nearest-even kernel `convert::narrow::from_f32::rebias` (without `NEG_ZERO`, a zero code
/// has no sign: `fnuz`), when the CPU has AVX2 (AVX-512 at that level): the largest
/// magnitude converted. `None` without AVX2 (nothing written): the caller converts.
#[inline(always)]
pub(crate) fn f32_to_byte_float<const NEG_ZERO: bool>(
    src: &[u32],
    dst: &mut [u8],
    plan: &ByteFloatPlan,
) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        if super::has_avx512() && plan.table_lanes != 0 {
            // SAFETY: `avx512_f32_to_byte_float` requires AVX-512 F and BW, which the
            // `Isa::Avx512` level includes and `has_avx512` checked.
            return Some(unsafe {
                if plan.table_lanes == 16 {
                    avx512_f32_to_byte_float::<NEG_ZERO, false>(src, dst, plan)
                } else {
                    avx512_f32_to_byte_float::<NEG_ZERO, true>(src, dst, plan)
                }
            });
        }
        if super::has_avx2() {
            // SAFETY: `avx2_f32_to_byte_float` requires only AVX2, which `has_avx2` checked.
            return Some(unsafe { avx2_f32_to_byte_float::<NEG_ZERO>(src, dst, plan) });
        }
    }
    let _ = (src, dst, plan);
    None
}

/// See [`f32_to_byte_float`].
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
// Not inlined: inlined into the AVX2 twin of its caller (`fast::float_narrow::narrow`, once
// that twin was small enough), its loop took 0.34 instruction per element more there
// (`f32 -> float8_e4m3`), and one copy serves every caller.
#[inline(never)]
unsafe fn avx2_f32_to_byte_float<const NEG_ZERO: bool>(
    src: &[u32],
    dst: &mut [u8],
    p: &ByteFloatPlan,
) -> u32 {
    use std::arch::x86_64::*;
    const STEP: usize = 32;
    let len = src.len().min(dst.len());
    let n = len / STEP * STEP;
    // SAFETY: the CPU has AVX2 (this function's contract). A step reads 32 `u32` from its
    // source pointer and writes 32 bytes at its target pointer (unaligned forms): in the
    // loop `src[i..i + 32]` and `dst[i..i + 32]` with `i + 32 <= n <= len`, both slices
    // at least `len` long; for the rest, two local arrays of 32. A `prefetcht0` (SSE) is
    // a hint that neither faults nor reads, whatever its address.
    unsafe {
        let mag_mask = _mm256_set1_epi32(0x7fff_ffff);
        let exp_mask = _mm256_set1_epi32(0x7f80_0000);
        let clamp_source = _mm256_set1_epi32(p.clamp_source as i32);
        let min_normal = _mm256_set1_epi32(p.min_normal as i32);
        let to_magic = _mm256_set1_epi32(p.to_magic as i32);
        let code_offset = _mm256_set1_epi16(p.code_offset as i16);
        let shift = _mm_cvtsi32_si128(p.shift as i32);
        let sign_bit = _mm256_set1_epi16(p.sign_bit as i16);
        // After the in-lane packs, 4-byte group `i` holds elements `4 * order[i]..`.
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let zero = _mm256_setzero_si256();
        let mut largest = zero;
        // The code of 8 elements plus `code_offset` (no sign; below 2^15), their magnitudes
        // folded into `largest`.
        macro_rules! code {
            ($b:expr) => {{
                let mag = _mm256_and_si256($b, mag_mask);
                largest = _mm256_max_epu32(largest, mag);
                let clamped = _mm256_min_epu32(mag, clamp_source);
                let e = _mm256_max_epu32(_mm256_and_si256(clamped, exp_mask), min_normal);
                let c = _mm256_castsi256_ps(_mm256_add_epi32(e, to_magic));
                let sum = _mm256_add_ps(_mm256_castsi256_ps(clamped), c);
                let k = _mm256_sub_epi32(_mm256_castps_si256(sum), _mm256_castps_si256(c));
                _mm256_add_epi32(k, _mm256_srl_epi32(_mm256_castps_si256(c), shift))
            }};
        }
        // Codes and signs of 16 elements in 16-bit lanes: the sign of `b` survives the
        // signed saturation of `vpackssdw`.
        macro_rules! half {
            ($b0:expr, $b1:expr) => {{
                let codes = _mm256_packus_epi32(code!($b0), code!($b1));
                let codes = _mm256_sub_epi16(codes, code_offset);
                let signs = _mm256_srai_epi16(_mm256_packs_epi32($b0, $b1), 15);
                let mut signs = _mm256_and_si256(signs, sign_bit);
                if !NEG_ZERO {
                    signs = _mm256_andnot_si256(_mm256_cmpeq_epi16(codes, zero), signs);
                }
                _mm256_or_si256(codes, signs)
            }};
        }
        // 32 elements from `s` into 32 bytes at `d`.
        macro_rules! step {
            ($s:expr, $d:expr) => {{
                let s = $s.cast::<__m256i>();
                let b0 = _mm256_loadu_si256(s);
                let b1 = _mm256_loadu_si256(s.add(1));
                let b2 = _mm256_loadu_si256(s.add(2));
                let b3 = _mm256_loadu_si256(s.add(3));
                let bytes = _mm256_packus_epi16(half!(b0, b1), half!(b2, b3));
                let bytes = _mm256_permutevar8x32_epi32(bytes, order);
                _mm256_storeu_si256($d.cast::<__m256i>(), bytes);
            }};
        }
        for i in (0..n).step_by(STEP) {
            // The step's two lines `PREFETCH_AHEAD` bytes on (see there).
            let ahead = src
                .as_ptr()
                .add(i)
                .cast::<i8>()
                .wrapping_add(PREFETCH_AHEAD);
            _mm_prefetch::<_MM_HINT_T0>(ahead);
            _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(64));
            step!(src.as_ptr().add(i), dst.as_mut_ptr().add(i));
        }
        // The last partial step through zero-padded buffers (zeros convert to zeros).
        let rest = len - n;
        if rest > 0 {
            let mut s = [0u32; STEP];
            let mut d = [0u8; STEP];
            s[..rest].copy_from_slice(&src[n..len]);
            step!(s.as_ptr(), d.as_mut_ptr());
            dst[n..len].copy_from_slice(&d[..rest]);
        }
        let m = _mm_max_epu32(
            _mm256_castsi256_si128(largest),
            _mm256_extracti128_si256::<1>(largest),
        );
        let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0b01_00_11_10>(m));
        let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0b10_11_00_01>(m));
        _mm_cvtsi128_si32(m) as u32
    }
}

/// See [`f32_to_byte_float`]: the same arithmetic on 16 lanes, 64 elements per step. The
/// codes of four vectors (at most the clamped code, below the sign bit: the magnitude is
/// clamped first) are narrowed by the unsigned packs, which saturate nothing there, and the
/// signs apart by the signed packs of the sources (which keep each sign); one `vpsrlw` moves
/// the sign onto the target's sign bit, one `vpternlogd` masks and merges it, and one
/// `vpermd` restores the order. Zen 4 runs a 512-bit operation as two 256-bit halves, so
/// operations per element decide here: narrowing each vector by `vpmovusdb` with its own
/// sign took 15 operations per 16 elements and 7 more per 64 to narrow (21 GB/s on a
/// cached input), this 9 per 16 and 9 per 64. The per-exponent constants (`C` and what the
/// code is below the sum's bits) are looked up (`vpermd`, or `vpermt2d` over two tables for
/// exponents spanning up to 32 fields) rather than computed: 2 operations for 4.
///
/// # Safety
/// The CPU must support AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
// Not inlined, as `avx2_f32_to_byte_float`.
#[inline(never)]
unsafe fn avx512_f32_to_byte_float<const NEG_ZERO: bool, const TWO_TABLES: bool>(
    src: &[u32],
    dst: &mut [u8],
    p: &ByteFloatPlan,
) -> u32 {
    use std::arch::x86_64::*;
    const STEP: usize = 64;
    let len = src.len().min(dst.len());
    let n = len / STEP * STEP;
    // SAFETY: the CPU has AVX-512 F and BW (this function's contract). A step reads 64
    // `u32` from its source pointer and writes 64 bytes at its target pointer (unaligned
    // forms): in the loop `src[i..i + 64]` and `dst[i..i + 64]` with `i + 64 <= n <= len`,
    // both slices at least `len` long; for the rest, two local arrays of 64. A
    // `prefetcht0` (SSE) is a hint that neither faults nor reads, whatever its address.
    unsafe {
        let mag_mask = _mm512_set1_epi32(0x7fff_ffff);
        let clamp_source = _mm512_set1_epi32(p.clamp_source as i32);
        let min_normal = _mm512_set1_epi32(p.min_normal as i32);
        let magic_lo = _mm512_loadu_si512(p.magic.as_ptr().cast());
        let magic_hi = _mm512_loadu_si512(p.magic.as_ptr().add(16).cast());
        let offset_lo = _mm512_loadu_si512(p.offset.as_ptr().cast());
        let offset_hi = _mm512_loadu_si512(p.offset.as_ptr().add(16).cast());
        // The sign bit of a byte moved down onto the target's (a power of two <= 0x80).
        let sign_shift = _mm_cvtsi32_si128(p.sign_bit.leading_zeros() as i32 - 24);
        let sign_bit = _mm512_set1_epi8(p.sign_bit as i8);
        // After the in-lane packs, dword `4 * i + j` holds the bytes of elements
        // `16 * j + 4 * i..`: output dword `k` is dword `4 * (k % 4) + k / 4`.
        let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        let zero = _mm512_setzero_si512();
        let mut largest = zero;
        // The codes (no sign) of the 16 elements in `b`, their magnitudes folded into
        // `largest`.
        macro_rules! code {
            ($b:expr) => {{
                let mag = _mm512_and_si512($b, mag_mask);
                largest = _mm512_max_epu32(largest, mag);
                let clamped = _mm512_min_epu32(mag, clamp_source);
                // The exponent field `E` (`vpermd` reads its low 4 bits, `vpermt2d` 5).
                let e = _mm512_srli_epi32::<23>(_mm512_max_epu32(clamped, min_normal));
                let (c, offset) = if TWO_TABLES {
                    (
                        _mm512_permutex2var_epi32(magic_lo, e, magic_hi),
                        _mm512_permutex2var_epi32(offset_lo, e, offset_hi),
                    )
                } else {
                    (
                        _mm512_permutexvar_epi32(e, magic_lo),
                        _mm512_permutexvar_epi32(e, offset_lo),
                    )
                };
                let sum = _mm512_add_ps(_mm512_castsi512_ps(clamped), _mm512_castsi512_ps(c));
                _mm512_sub_epi32(_mm512_castps_si512(sum), offset)
            }};
        }
        // 64 elements from `s` into 64 bytes at `d`.
        macro_rules! step {
            ($s:expr, $d:expr) => {{
                let s = $s.cast::<__m512i>();
                let b0 = _mm512_loadu_si512(s);
                let b1 = _mm512_loadu_si512(s.add(1));
                let b2 = _mm512_loadu_si512(s.add(2));
                let b3 = _mm512_loadu_si512(s.add(3));
                let codes = _mm512_packus_epi16(
                    _mm512_packus_epi32(code!(b0), code!(b1)),
                    _mm512_packus_epi32(code!(b2), code!(b3)),
                );
                let signs =
                    _mm512_packs_epi16(_mm512_packs_epi32(b0, b1), _mm512_packs_epi32(b2, b3));
                let signs = _mm512_srl_epi16(signs, sign_shift);
                // codes | (signs & sign_bit)
                let signed = _mm512_ternarylogic_epi32::<0xf8>(codes, signs, sign_bit);
                let bytes = if NEG_ZERO {
                    signed
                } else {
                    // A zero code keeps no sign.
                    _mm512_mask_blend_epi8(_mm512_test_epi8_mask(codes, codes), codes, signed)
                };
                let bytes = _mm512_permutexvar_epi32(order, bytes);
                _mm512_storeu_si512($d.cast::<__m512i>(), bytes);
            }};
        }
        for i in (0..n).step_by(STEP) {
            // The step's four lines `PREFETCH_AHEAD` bytes on (see there).
            let ahead = src
                .as_ptr()
                .add(i)
                .cast::<i8>()
                .wrapping_add(PREFETCH_AHEAD);
            _mm_prefetch::<_MM_HINT_T0>(ahead);
            _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(64));
            _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(128));
            _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(192));
            step!(src.as_ptr().add(i), dst.as_mut_ptr().add(i));
        }
        // The last partial step through zero-padded buffers (zeros convert to zeros).
        let rest = len - n;
        if rest > 0 {
            let mut s = [0u32; STEP];
            let mut d = [0u8; STEP];
            s[..rest].copy_from_slice(&src[n..len]);
            step!(s.as_ptr(), d.as_mut_ptr());
            dst[n..len].copy_from_slice(&d[..rest]);
        }
        _mm512_reduce_max_epu32(largest)
    }
}
