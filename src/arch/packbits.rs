//! packbits' AVX-512 twins, and (in `avx2`) the AVX2 ones: codes of `b` bits packed into a
//! bit stream and back, a whole vector of codes per step, where the portable kernels
//! (`codec::packbits::kernels`) move one `u64` of them.
//!
//! A *field* is `b` bits starting at bit `f` of each `n`-bit component, in storage words of
//! 8, 16 or 32 bits; the stream holds field `i` at bits `[i*b, (i+1)*b)`, least significant
//! bit first. Every function takes the bulk of the slices, a whole number of vector steps,
//! and returns the count of codes it did: with AVX-512 (see [`has_avx512`]) a multiple of
//! 64, 32 or 16 codes (one-, two-, four-byte words; 32 when decoding one-byte words), with
//! AVX2 only a multiple of 32 one-byte or 16 wider codes (8 four-byte codes of 17 to 31
//! bits) where the `avx2` twins cover the width, else 0. A step ends on a byte boundary of
//! the stream (64 one-byte codes are `8b` bytes, 32 codes `4b` bytes, 16 codes `2b` bytes,
//! 8 codes `b` bytes), so the portable kernel goes on from
//! there. The results are those of the portable kernels, bit for bit: the same fields, the
//! same sign extension, nothing else written.
//!
//! - One-byte words: encoding merges neighbours within lanes, by two multiply-adds
//!   (`vpmaddubsw`, `vpmaddwd`) for 2, 4 and 6 bits, by three shift-and-select steps
//!   (`vpsrlw`/`vpsrld`/`vpsrlq` and `vpternlogq`) otherwise, then `vpermb` (or `vpermi2b`
//!   over two steps) packs the lanes' bytes together; decoding spreads
//!   each `u64`'s `b` bytes with `vpermb` and cuts the fields with `vpmultishiftqb`, in
//!   256-bit vectors (VL), whose stores outrun 512-bit ones on Zen 4.
//! - Two- and four-byte words (`fields`): encoding merges neighbouring codes in pairs and
//!   packs a step with one `vpermb`; decoding cuts every field out of 64-bit lanes by
//!   `vpmultishiftqb`, and 31-bit fields, which a pair of lanes' bytes cannot hold, by two
//!   `vpermb` and a funnel shift (`vpshrdvd`). Encoding fields of 1 to 3 bits, rare in
//!   wide words, takes the AVX2 twins at the AVX-512 level: they are as exact, and in
//!   cache they take 0.5-0.97x the time the general AVX-512 kernels took.
//!
//! [`has_avx512`]: super::has_avx512

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod fields;

/// The layout of the fields: `b` bits from bit `f` of `n`-bit components; `signed`: decoding
/// sign-extends the field to `n` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    /// First bit (`first_bit`).
    pub(crate) f: u32,
    /// Bits per field, `1..=` the word width.
    pub(crate) b: u32,
    /// Bits of the component, `f + b <= n <=` the word width.
    pub(crate) n: u32,
    /// Sign-extend on decode.
    pub(crate) signed: bool,
}

impl Fields {
    /// Whether decoding sign-extends (a signed type whose field stops below its top bit).
    fn extends(self) -> bool {
        self.signed && self.f + self.b < self.n
    }
}

/// The low `b` bits (`b` in `0..=64`).
fn low(b: u32) -> u64 {
    if b >= 64 { u64::MAX } else { (1u64 << b) - 1 }
}

/// Pack one-byte codes `src` into `out` (the stream from its first byte): the count done,
/// a multiple of 64.
pub(crate) fn pack_u8(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() && p.b <= 8 && p.f + p.b <= 8 {
        // SAFETY: the CPU has the AVX-512 level (checked just above), which includes F, BW,
        // VBMI and VBMI2.
        return unsafe { x86::pack_u8(src, p, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && p.b <= 8 && p.f + p.b <= 8 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::pack_u8(src, p, out) };
    }
    let _ = (src, p, out);
    0
}

/// Unpack one-byte codes from `src` (the stream from its first byte) into `out`: the count
/// done, a multiple of 32.
pub(crate) fn unpack_u8(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() && p.b <= 8 && p.f + p.b <= p.n && p.n <= 8 {
        // SAFETY: as in `pack_u8`.
        return unsafe { x86::unpack_u8(src, p, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && p.b <= 8 && p.f + p.b <= p.n && p.n <= 8 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::unpack_u8(src, p, out) };
    }
    let _ = (src, p, out);
    0
}

/// [`pack_u8`] for two-byte words: a multiple of 32 codes.
pub(crate) fn pack_u16(src: &[u16], p: Fields, out: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() && fields::packs(16, p) {
        // SAFETY: as in `pack_u8`, and `packs` holds.
        return unsafe { fields::pack::<16>(words_as_bytes(src), p, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && p.f + p.b <= 16 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::pack_wide::<2>(words_as_bytes(src), p, out) };
    }
    let _ = (src, p, out);
    0
}

/// [`pack_u8`] for four-byte words: a multiple of 16 codes (of 8 with AVX2 for fields of 17
/// to 31 bits).
pub(crate) fn pack_u32(src: &[u32], p: Fields, out: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() && fields::packs(32, p) {
        // SAFETY: as in `pack_u8`, and `packs` holds.
        return unsafe { fields::pack::<32>(words_as_bytes(src), p, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && p.b <= 16 && p.f + p.b <= 32 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::pack_wide::<4>(words_as_bytes(src), p, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && (17..32).contains(&p.b) && p.f + p.b <= 32 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::pack_wide_fields(words_as_bytes(src), p, out) };
    }
    let _ = (src, p, out);
    0
}

/// [`unpack_u8`] for two-byte words: a multiple of 32 codes.
pub(crate) fn unpack_u16(src: &[u8], p: Fields, out: &mut [u16]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() && fields::unpacks(16, p) {
        let stream = streams_out(src, out);
        // SAFETY: as in `pack_u8`, and `unpacks` holds.
        return unsafe { fields::unpack::<16>(src, p, words_as_bytes_mut(out), stream) } / 2;
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && p.f + p.b <= p.n && p.n <= 16 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::unpack_wide::<2>(src, p, words_as_bytes_mut(out)) } / 2;
    }
    let _ = (src, p, out);
    0
}

/// [`unpack_u8`] for four-byte words: a multiple of 16 codes (of 8 with AVX2 for fields of
/// 17 to 31 bits).
pub(crate) fn unpack_u32(src: &[u8], p: Fields, out: &mut [u32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() && fields::unpacks(32, p) {
        let stream = streams_out(src, out);
        // SAFETY: as in `pack_u8`, and `unpacks` holds.
        return unsafe { fields::unpack::<32>(src, p, words_as_bytes_mut(out), stream) } / 4;
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() && fields::unpacks_31(p) {
        let stream = streams_out(src, out);
        // SAFETY: as in `pack_u8`, and `unpacks_31` holds.
        return unsafe { fields::unpack_31(src, p, words_as_bytes_mut(out), stream) } / 4;
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && p.b <= 16 && p.f + p.b <= p.n && p.n <= 32 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::unpack_wide::<4>(src, p, words_as_bytes_mut(out)) } / 4;
    }
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() && (17..32).contains(&p.b) && p.f + p.b <= p.n && p.n <= 32 {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::unpack_wide_fields(src, p, words_as_bytes_mut(out)) } / 4;
    }
    let _ = (src, p, out);
    0
}

/// Whether the AVX-512 decodes of wider words store `out`'s lines by `vmovntdq`: a large
/// output ([`super::stream::streams_from`]). Stored through the cache, each line of it is
/// first read from memory only to be overwritten: on an Intel Xeon (a VM) the `int32`
/// decode of 25-bit fields over 4M elements took 1.07-1.10 ms by minima streamed against
/// 1.34-1.51 (alternated runs).
#[cfg(target_arch = "x86_64")]
fn streams_out<W>(src: &[u8], out: &[W]) -> bool {
    super::stream::streams_from(src, out)
}

/// Words as their native-endian bytes (x86-64 is little-endian: the stream's order).
#[cfg(target_arch = "x86_64")]
fn words_as_bytes<W: crate::number::storage::Word>(w: &[W]) -> &[u8] {
    super::bytes_of_words(w)
}

/// [`words_as_bytes`], for writing.
#[cfg(target_arch = "x86_64")]
fn words_as_bytes_mut<W: crate::number::storage::Word>(w: &mut [W]) -> &mut [u8] {
    let len = std::mem::size_of_val(w);
    // SAFETY: `Word` is sealed and implemented for `u8`, `u16`, `u32` and `u64` only:
    // integers without padding, for which every bit pattern is valid, so any bytes written
    // leave valid words; `u8` has alignment 1; the exclusive borrow moves into the view.
    unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<u8>(), len) }
}

// The AVX-512 intrinsics are stable from Rust 1.89, the crate's `rust-version`.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Fields, low};

    /// `x` in each byte.
    const fn rep8(x: u64) -> u64 {
        x * 0x0101_0101_0101_0101
    }

    /// `x` in each 16-bit half.
    const fn rep16(x: u64) -> u64 {
        x * 0x0001_0001_0001_0001
    }

    /// `x` in each 32-bit half.
    const fn rep32(x: u64) -> u64 {
        x | (x << 32)
    }

    /// The bits of `a` where `m` is set, of `b` elsewhere.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn select(m: __m512i, a: __m512i, b: __m512i) -> __m512i {
        // Truth table bit `4m + 2a + b` is the result: `m ? a : b` is 0b1100_1010.
        _mm512_ternarylogic_epi64::<0xca>(m, a, b)
    }

    /// A shift count for `vpsrlw`/`vpsrlq` and their kin.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn count(c: u32) -> __m128i {
        _mm_cvtsi64_si128(i64::from(c))
    }

    /// [`super::pack_u8`].
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VBMI; `p.f + p.b <= 8`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn pack_u8(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
        if p.b.is_multiple_of(2) && p.b <= 6 {
            pack_u8_steps::<true>(src, p, out)
        } else {
            pack_u8_steps::<false>(src, p, out)
        }
    }

    /// The loop invariants of [`merge`].
    struct Merge {
        f: __m128i,
        mask: __m512i,
        /// `EVEN`: the multipliers of `vpmaddubsw` (1 and `2^b`) and `vpmaddwd` (1 and
        /// `2^2b`); otherwise the masks of the three selects.
        m1: __m512i,
        m2: __m512i,
        m4: __m512i,
        c1: __m128i,
        c2: __m128i,
        c3: __m128i,
    }

    /// 64 one-byte codes merged within lanes: with `EVEN` (`b` in 2, 4, 6), each 32-bit lane
    /// holds its four fields in its low `4b` bits (`b/2` whole bytes), by two multiply-adds
    /// whose products stay far below their saturation; otherwise each 64-bit lane holds its
    /// eight fields in its low `8b` bits (`b` bytes), by three shift-and-select steps.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn merge<const EVEN: bool>(k: &Merge, x: __m512i) -> __m512i {
        let x = _mm512_and_si512(_mm512_srl_epi64(x, k.f), k.mask);
        if EVEN {
            _mm512_madd_epi16(_mm512_maddubs_epi16(x, k.m1), k.m2)
        } else {
            let x = select(k.m1, x, _mm512_srl_epi16(x, k.c1));
            let x = select(k.m2, x, _mm512_srl_epi32(x, k.c2));
            select(k.m4, x, _mm512_srl_epi64(x, k.c3))
        }
    }

    /// [`pack_u8`]'s loops: two steps at a time (into one store when both fit in 64 bytes),
    /// then one.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    fn pack_u8_steps<const EVEN: bool>(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
        let b = p.b as usize;
        let k = if EVEN {
            Merge {
                f: count(p.f),
                mask: _mm512_set1_epi64(rep8(low(p.b)) as i64),
                m1: _mm512_set1_epi16((1 | (1 << (p.b + 8))) as i16),
                m2: _mm512_set1_epi32(1 | (1 << (2 * p.b + 16))),
                m4: _mm512_setzero_si512(),
                c1: count(0),
                c2: count(0),
                c3: count(0),
            }
        } else {
            Merge {
                f: count(p.f),
                mask: _mm512_set1_epi64(rep8(low(p.b)) as i64),
                m1: _mm512_set1_epi64(rep16(low(p.b)) as i64),
                m2: _mm512_set1_epi64(rep32(low(2 * p.b)) as i64),
                m4: _mm512_set1_epi64(low(4 * p.b) as i64),
                c1: count(8 - p.b),
                c2: count(16 - 2 * p.b),
                c3: count(32 - 4 * p.b),
            }
        };
        // Output byte `m` is byte `m % per` of lane `m / per` (`per` bytes in each lane of
        // `width` bytes); `pair` also takes the next step's bytes from the second vector.
        let (per, width) = if EVEN { (b / 2, 4) } else { (b, 8) };
        let step = 8 * b;
        let (mut idx, mut pair) = ([0u8; 64], [0u8; 64]);
        for m in 0..step {
            idx[m] = ((m / per) * width + m % per) as u8;
            if m + step < 64 {
                pair[m] = idx[m];
                pair[m + step] = 64 + idx[m];
            }
        }
        let (idx, pair) = (table(&idx), table(&pair));
        let load = |g: usize| {
            // SAFETY: callers pass `g < src.len() / 64`: bytes `64g..64g + 64` are in `src`.
            unsafe { _mm512_loadu_si512(src.as_ptr().add(64 * g).cast()) }
        };
        let steps = src.len() / 64;
        let mut g = 0;
        if 2 * step <= 64 {
            while g + 2 <= steps && g * step + 64 <= out.len() {
                let (x0, x1) = (merge::<EVEN>(&k, load(g)), merge::<EVEN>(&k, load(g + 1)));
                let y = _mm512_permutex2var_epi8(x0, pair, x1);
                // SAFETY: bytes `g*step..g*step + 64` are in `out` (checked); those past the
                // two steps' are written again by the next step or by the portable tail.
                unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(g * step).cast(), y) };
                g += 2;
            }
        } else {
            while g + 2 <= steps && (g + 1) * step + 64 <= out.len() {
                let y0 = _mm512_permutexvar_epi8(idx, merge::<EVEN>(&k, load(g)));
                let y1 = _mm512_permutexvar_epi8(idx, merge::<EVEN>(&k, load(g + 1)));
                // SAFETY: bytes `g*step..(g + 1)*step + 64` are in `out` (checked); as above.
                unsafe {
                    _mm512_storeu_si512(out.as_mut_ptr().add(g * step).cast(), y0);
                    _mm512_storeu_si512(out.as_mut_ptr().add((g + 1) * step).cast(), y1);
                }
                g += 2;
            }
        }
        while g < steps && g * step + step <= out.len() {
            let y = _mm512_permutexvar_epi8(idx, merge::<EVEN>(&k, load(g)));
            let at = g * step;
            if at + 64 <= out.len() {
                // SAFETY: bytes `at..at + 64` are in `out`; as above.
                unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(at).cast(), y) };
            } else {
                // SAFETY: the masked store writes bytes `at..at + step`, inside `out`.
                unsafe {
                    _mm512_mask_storeu_epi8(out.as_mut_ptr().add(at).cast(), low(8 * p.b), y)
                };
            }
            g += 1;
        }
        64 * g
    }

    /// [`super::unpack_u8`], 32 codes a step: in 256-bit vectors, whose stores run faster
    /// than 512-bit ones on AMD's Zen 4 (a decode writes far more than it reads), with
    /// AVX-512's byte permute and multishift at that width (VL).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW, VL and VBMI; `p.f + p.b <= p.n <= 8`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    pub(super) unsafe fn unpack_u8(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
        // A step reads exactly its `4b` bytes: one plain load where that is a whole vector
        // register or its low 32 or 64 bits (1, 2, 4 and 8 bits), else a masked one.
        match (p.b, p.extends()) {
            (1, false) => unpack_u8_steps::<4, false>(src, p, out),
            (2, false) => unpack_u8_steps::<8, false>(src, p, out),
            (4, false) => unpack_u8_steps::<16, false>(src, p, out),
            (8, false) => unpack_u8_steps::<32, false>(src, p, out),
            (_, false) => unpack_u8_steps::<0, false>(src, p, out),
            (_, true) => unpack_u8_steps::<0, true>(src, p, out),
        }
    }

    /// [`unpack_u8`]'s loop: `LOAD` bytes a step by a plain load (4, 8, 16 or 32, equal to
    /// `4b`), or `0`: `4b` bytes by a masked load; `EXTEND`: `p.extends()`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    fn unpack_u8_steps<const LOAD: usize, const EXTEND: bool>(
        src: &[u8],
        p: Fields,
        out: &mut [u8],
    ) -> usize {
        let b = p.b as usize;
        let step = 4 * b;
        // Lane `j`'s byte `k` is stream byte `j*b + k` of the step (those past the step's
        // `4b` bytes are never part of a field: any byte of the step will do). Output byte
        // `k` of a lane takes the 8 bits from bit `k*b - f` of the lane (`vpmultishiftqb`
        // rotates within the lane): field `k` at bits `f..f + b`, below it bits of the
        // field before (or, for `k = 0`, of the lane's top), above it bits of the next,
        // all cleared by the mask.
        let (mut idx, mut ctl) = ([0u8; 32], [0u8; 32]);
        for j in 0..4 {
            for k in 0..8 {
                idx[8 * j + k] = (j * b + k).min(step - 1) as u8;
                ctl[8 * j + k] = ((64 + k * b - p.f as usize) % 64) as u8;
            }
        }
        // SAFETY: 32 bytes from arrays of 32.
        let (idx, ctl) = unsafe {
            (
                _mm256_loadu_si256(idx.as_ptr().cast()),
                _mm256_loadu_si256(ctl.as_ptr().cast()),
            )
        };
        let mask = _mm256_set1_epi64x(rep8(low(p.b) << p.f) as i64);
        let top = p.f + p.b - 1;
        let sign = _mm256_set1_epi64x(rep8(1 << top) as i64);
        let keep = _mm256_set1_epi64x(rep8(low(p.n)) as i64);
        let steps = (out.len() / 32).min(src.len() / step);
        for g in 0..steps {
            let at = src.as_ptr().wrapping_add(g * step);
            // SAFETY (each load): `g < steps`, so bytes `g*step..(g + 1)*step` are in
            // `src`; each load reads `LOAD = step` of them, the masked one the `step` bytes
            // its mask enables (and does not touch, nor fault on, the others).
            let x = unsafe {
                match LOAD {
                    4 => {
                        _mm256_zextsi128_si256(_mm_cvtsi32_si128(at.cast::<i32>().read_unaligned()))
                    }
                    8 => _mm256_zextsi128_si256(_mm_loadl_epi64(at.cast())),
                    16 => _mm256_zextsi128_si256(_mm_loadu_si128(at.cast())),
                    32 => _mm256_loadu_si256(at.cast()),
                    _ => _mm256_maskz_loadu_epi8(low(4 * p.b) as u32, at.cast()),
                }
            };
            let x = _mm256_multishift_epi64_epi8(ctl, _mm256_permutexvar_epi8(idx, x));
            let mut y = _mm256_and_si256(x, mask);
            if EXTEND {
                // `(y ^ s) - s` sets the bits above a field whose top bit is set.
                let t = _mm256_xor_si256(y, sign);
                y = _mm256_and_si256(_mm256_sub_epi8(t, sign), keep);
            }
            // SAFETY: `g < steps`: bytes `32g..32g + 32` are in `out`.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * g).cast(), y) };
        }
        32 * steps
    }

    /// Load 64 bytes of a table.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn table(t: &[u8; 64]) -> __m512i {
        // SAFETY: 64 bytes from an array of 64.
        unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
    }
}
