//! packbits' AVX2 twins, for CPUs without AVX-512 (or capped below it): one-byte words with
//! fields of `b <= 8` bits, two- and four-byte words with fields of `b <= 16` bits, and
//! four-byte words with fields of 17 to 31 bits (whole 32-bit words are the `bytes` codec's
//! copy).
//!
//! AVX2 has no byte permute across the two 128-bit halves of a vector, no variable 16-bit
//! shift and no multishift, so each half is a stream of its own: a step of 32 one-byte codes
//! (`4b` bytes) or 16 wider codes (`2b` bytes) is two half-steps of `2b` or `b` bytes, which
//! end on byte boundaries and share one set of byte tables. Encoding stores the two halves
//! joined by `vpermd` where they are whole 32-bit lanes, else with one 16-byte store each
//! (bytes past the step are written again by the next store or by the portable tail, as in
//! the AVX-512 twins); decoding loads a step with one 32-byte load from `16 - half` bytes
//! before it (the low half's tables displaced to match), except at the stream's start, where
//! it loads each half alone. The counts done and the results are as the AVX-512 twins':
//! whole steps, bit for bit those of the portable kernels.
//!
//! - One-byte words, encoding: 1 bit by `vpmovmskb`; 2 and 4 bits by multiply-adds
//!   (`vpmaddubsw`, `vpmaddwd`) that leave one output byte per lane, narrowed by `vpackus`;
//!   other widths by the AVX-512 twin's merge within lanes (multiply-adds for 6 bits, three
//!   shift-and-select steps otherwise), then `vpshufb` packs each half's bytes together.
//! - One-byte words, decoding: 1, 2 and 4 bits by zero-extending each stream byte to a lane
//!   (`vpmovzx`) and shifted copies that put code `k` at bit `8k`; other widths by `vpshufb`
//!   gathering, for each code, the two stream bytes that hold it into a 16-bit lane (even
//!   codes in one vector, odd codes in another), and a multiply by `2^(8 - s + f)`
//!   (`vpmullw`, the variable 16-bit shift AVX2 lacks) that lifts the field at bit offset `s`
//!   to bit `8 + f`, in the lane's high byte.
//! - Wider words, encoding: four-byte words cut to their fields and narrowed to two-byte
//!   lanes first (`vpackusdw`, `vpermq`); the even and the odd codes each in 32-bit lanes,
//!   shifted to their bit offset in their first byte (`vpsllvd`); each output byte ORs the
//!   bytes of the codes that cover it, gathered by `vpshufb` from the two vectors (one
//!   gather each for `b >= 8`, up to four for narrower fields).
//! - Fields of 17 to 31 bits: a step is 8 codes, `b` bytes of stream, within one 32-byte
//!   vector; each code (at most five bytes once shifted to its bit offset) has a 64-bit
//!   lane, and `vpermq` swaps the halves of each vector so that `vpshufb` finds every code
//!   in both halves (see `pack_wide_fields`, `unpack_wide_fields`).
//! - Wider words, decoding: `vpshufb` gathers each code's first four stream bytes into a
//!   32-bit lane, even codes in one vector, odd in another, cut at the bit offset by
//!   `vpsrlvd` and `vpsllvd`, and the two halves of each 32-bit lane joined; four-byte words
//!   are widened (`vpmovzxwd`) before the shift to `f` and the sign extension.

use std::arch::x86_64::*;

use super::{Fields, low};

/// `x` in each byte.
const fn rep8(x: u64) -> u64 {
    x * 0x0101_0101_0101_0101
}

/// `x` in each 16-bit lane.
const fn rep16(x: u64) -> u64 {
    x * 0x0001_0001_0001_0001
}

/// `x` in each 32-bit half.
const fn rep32(x: u64) -> u64 {
    x | (x << 32)
}

/// The same 16 bytes in both halves of a vector.
#[inline]
#[target_feature(enable = "avx2")]
fn both_halves(t: &[u8; 16]) -> __m256i {
    // SAFETY: 16 bytes from an array of 16.
    let h = unsafe { _mm_loadu_si128(t.as_ptr().cast()) };
    _mm256_broadcastsi128_si256(h)
}

/// The same 32-bit lanes (four of them) in both halves of a vector.
#[inline]
#[target_feature(enable = "avx2")]
fn both_halves32(t: [u32; 4]) -> __m256i {
    let [a, b, c, d] = t.map(|x| x as i32);
    _mm256_setr_epi32(a, b, c, d, a, b, c, d)
}

/// A shift count for `vpsrlw`/`vpsrlq` and their kin.
#[inline]
#[target_feature(enable = "sse2")]
fn count(c: u32) -> __m128i {
    _mm_cvtsi64_si128(i64::from(c))
}

/// How many steps `g` (from 0) have `g * step + need <= len`: a loop's trip count, worked
/// out before it so that the loop tests one counter.
const fn fit(len: usize, need: usize, step: usize) -> usize {
    if len < need {
        0
    } else {
        (len - need) / step + 1
    }
}

/// The bits of `a` where `m` is set, of `b` elsewhere.
#[inline]
#[target_feature(enable = "avx2")]
fn select(m: __m256i, a: __m256i, b: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_and_si256(m, a), _mm256_andnot_si256(m, b))
}

/// Store the low `2b`-byte (or `b`-byte) half-step of `y` at `at` and the high one at
/// `at + half`, 16 bytes each.
///
/// # Safety
/// Bytes `at..at + half + 16` are in `out`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_halves(out: &mut [u8], at: usize, half: usize, y: __m256i) {
    // SAFETY: the caller's promise covers both 16-byte stores.
    unsafe {
        let p = out.as_mut_ptr().add(at);
        _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(y));
        _mm_storeu_si128(p.add(half).cast(), _mm256_extracti128_si256::<1>(y));
    }
}

/// Load the 16 bytes at `at` into the low half and those at `at + half` into the high one.
///
/// # Safety
/// Bytes `at..at + half + 16` are in `src`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_halves(src: &[u8], at: usize, half: usize) -> __m256i {
    // SAFETY: the caller's promise covers both 16-byte loads.
    unsafe {
        let p = src.as_ptr().add(at);
        let lo = _mm_loadu_si128(p.cast());
        let hi = _mm_loadu_si128(p.add(half).cast());
        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
    }
}

/// The `vpermd` that joins two half-steps of `half` bytes at the low end of a vector (the
/// high half's 32-bit lanes moved next to the low half's), when `half` is whole 32-bit lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn joiner(half: usize) -> Option<__m256i> {
    if !half.is_multiple_of(4) {
        return None;
    }
    let q = half / 4;
    let lane = |i: usize| (if i < q { i } else { 4 + i - q }) as i32;
    Some(_mm256_setr_epi32(
        lane(0),
        lane(1),
        lane(2),
        lane(3),
        lane(4),
        lane(5),
        lane(6),
        lane(7),
    ))
}

/// Store the two half-steps of `y` (`half` bytes each) at `at`: joined into one 32-byte
/// store where `join` is given and room is left, else one 16-byte store each.
///
/// # Safety
/// Bytes `at..at + half + 16` are in `out`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_step(out: &mut [u8], at: usize, half: usize, join: Option<__m256i>, y: __m256i) {
    match join {
        Some(j) if at + 32 <= out.len() => {
            // SAFETY: bytes `at..at + 32` are in `out` (just checked).
            unsafe {
                let y = _mm256_permutevar8x32_epi32(y, j);
                _mm256_storeu_si256(out.as_mut_ptr().add(at).cast(), y)
            }
        }
        // SAFETY: the caller's promise.
        _ => unsafe { store_halves(out, at, half, y) },
    }
}

/// A byte table for a step loaded whole from `at - (16 - half)` (see [`load_step`]): the
/// low half's indices moved up by `16 - half` (those that leave the half become 0x80,
/// zero), the high half's as given.
#[inline]
#[target_feature(enable = "avx2")]
fn displaced(t: &[u8; 16], half: usize) -> __m256i {
    let d = 16 - half;
    let mut both = [0x80u8; 32];
    for (i, &x) in t.iter().enumerate() {
        if usize::from(x) + d < 16 {
            both[i] = x + d as u8;
        }
        both[16 + i] = x;
    }
    // SAFETY: 32 bytes from an array of 32.
    unsafe { _mm256_loadu_si256(both.as_ptr().cast()) }
}

/// A step's two halves of `half <= 16` bytes, from `at` and `at + half`: with `WHOLE`, one
/// 32-byte load from `at - (16 - half)` (the tables are then the [`displaced`] ones), else
/// two 16-byte loads ([`load_halves`]).
///
/// # Safety
/// Bytes `at..at + half + 16` are in `src`; with `WHOLE`, `at >= 16 - half`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_step<const WHOLE: bool>(src: &[u8], at: usize, half: usize) -> __m256i {
    if WHOLE {
        // SAFETY: bytes `at - d..at - d + 32 = at + half + 16` are in `src`, `d = 16 - half
        // <= at` (the promise).
        unsafe { _mm256_loadu_si256(src.as_ptr().add(at - (16 - half)).cast()) }
    } else {
        // SAFETY: the caller's promise.
        unsafe { load_halves(src, at, half) }
    }
}

/// The loop invariants of [`merge`], as in the AVX-512 twin.
struct Merge {
    f: __m128i,
    mask: __m256i,
    m1: __m256i,
    m2: __m256i,
    m4: __m256i,
    c1: __m128i,
    c2: __m128i,
    c3: __m128i,
}

/// 32 one-byte codes merged within lanes: with `EVEN` (`b` in 2, 4, 6) each 32-bit lane
/// holds its four fields in its low `b/2` bytes (two multiply-adds whose products stay far
/// below saturation); otherwise each 64-bit lane holds its eight fields in its low `b`
/// bytes (three shift-and-select steps).
#[inline]
#[target_feature(enable = "avx2")]
fn merge<const EVEN: bool>(k: &Merge, x: __m256i) -> __m256i {
    let x = _mm256_and_si256(_mm256_srl_epi64(x, k.f), k.mask);
    if EVEN {
        _mm256_madd_epi16(_mm256_maddubs_epi16(x, k.m1), k.m2)
    } else {
        let x = select(k.m1, x, _mm256_srl_epi16(x, k.c1));
        let x = select(k.m2, x, _mm256_srl_epi32(x, k.c2));
        select(k.m4, x, _mm256_srl_epi64(x, k.c3))
    }
}

/// [`super::pack_u8`] with AVX2: the count done, a multiple of 32.
///
/// # Safety
/// The CPU must have AVX2; `p.f + p.b <= 8`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn pack_u8(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    match p.b {
        1 => return pack_u8_bits(src, p, out),
        2 => return pack_u8_narrow::<2>(src, p, out),
        4 => return pack_u8_narrow::<4>(src, p, out),
        _ => {}
    }
    if p.b.is_multiple_of(2) && p.b <= 6 {
        pack_u8_steps::<true>(src, p, out)
    } else {
        pack_u8_steps::<false>(src, p, out)
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn pack_u8_steps<const EVEN: bool>(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    let b = p.b as usize;
    let mask = _mm256_set1_epi64x(rep8(low(p.b)) as i64);
    let k = if EVEN {
        Merge {
            f: count(p.f),
            mask,
            m1: _mm256_set1_epi16((1 | (1 << (p.b + 8))) as i16),
            m2: _mm256_set1_epi32(1 | (1 << (2 * p.b + 16))),
            m4: _mm256_setzero_si256(),
            c1: count(0),
            c2: count(0),
            c3: count(0),
        }
    } else {
        Merge {
            f: count(p.f),
            mask,
            m1: _mm256_set1_epi64x(rep16(low(p.b)) as i64),
            m2: _mm256_set1_epi64x(rep32(low(2 * p.b)) as i64),
            m4: _mm256_set1_epi64x(low(4 * p.b) as i64),
            c1: count(8 - p.b),
            c2: count(16 - 2 * p.b),
            c3: count(32 - 4 * p.b),
        }
    };
    // A half's output byte `m` (of `2b`) is byte `m % per` of its lane `m / per` (`per`
    // bytes in each lane of `width` bytes); the rest of the 16 are zero (index 0x80).
    let (per, width) = if EVEN { (b / 2, 4) } else { (b, 8) };
    let mut idx = [0x80u8; 16];
    for (m, i) in idx.iter_mut().enumerate().take(2 * b) {
        *i = ((m / per) * width + m % per) as u8;
    }
    let idx = both_halves(&idx);
    let (half, step) = (2 * b, 4 * b);
    let join = joiner(half);
    let steps = fit(src.len(), 32, 32).min(fit(out.len(), half + 16, step));
    for g in 0..steps {
        // SAFETY: bytes `32g..32g + 32` are in `src` (`g < steps`).
        let x = unsafe { _mm256_loadu_si256(src.as_ptr().add(32 * g).cast()) };
        let y = _mm256_shuffle_epi8(merge::<EVEN>(&k, x), idx);
        // SAFETY: bytes `g*step..g*step + half + 16` are in `out` (`g < steps`).
        unsafe { store_step(out, g * step, half, join, y) };
    }
    32 * steps
}

/// [`pack_u8`] of one-bit fields: bit `f` of each byte to bit 7, then `vpmovmskb`.
#[inline]
#[target_feature(enable = "avx2")]
fn pack_u8_bits(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    // Bit 7 of each byte after the shift is bit `f` of the same byte (a left shift by
    // `7 - f <= 7` brings nothing from a lower byte up to bit 7).
    let up = count(7 - p.f);
    let steps = (src.len() / 32).min(out.len() / 4);
    for g in 0..steps {
        // SAFETY: bytes `32g..32g + 32` are in `src` (`g < steps`).
        let x = unsafe { _mm256_loadu_si256(src.as_ptr().add(32 * g).cast()) };
        let bits = _mm256_movemask_epi8(_mm256_sll_epi64(x, up)) as u32;
        out[4 * g..4 * g + 4].copy_from_slice(&bits.to_le_bytes());
    }
    32 * steps
}

/// [`pack_u8`] of 2- and 4-bit fields: the multiply-adds leave one output byte in each
/// 16-bit (`B = 4`) or 32-bit (`B = 2`) lane, which `vpackuswb` (and `vpackusdw`) narrow
/// without saturating (every value is below 256); `vpermq`/`vpermd` puts the halves back in
/// order. 64 (`B = 4`) or 128 (`B = 2`) codes a step, 32 bytes out.
#[inline]
#[target_feature(enable = "avx2")]
fn pack_u8_narrow<const B: u32>(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    let mask = _mm256_set1_epi64x(rep8(low(B)) as i64);
    let f = count(p.f);
    let m1 = _mm256_set1_epi16((1 | (1 << (B + 8))) as i16);
    let m2 = _mm256_set1_epi32(1 | (1 << (2 * B + 16)));
    let per = (32 * 8 / B) as usize;
    let field = |g: usize, i: usize| {
        // SAFETY: callers pass `(g + 1) * per <= src.len()` and `i < per / 32`.
        let x = unsafe { _mm256_loadu_si256(src.as_ptr().add(g * per + 32 * i).cast()) };
        _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srl_epi64(x, f), mask), m1)
    };
    let steps = (src.len() / per).min(out.len() / 32);
    for g in 0..steps {
        let y = if B == 4 {
            // Lane order after the pack: 0.lo, 1.lo, 0.hi, 1.hi (64-bit units).
            let y = _mm256_packus_epi16(field(g, 0), field(g, 1));
            _mm256_permute4x64_epi64::<0b11_01_10_00>(y)
        } else {
            let d = |i| _mm256_madd_epi16(field(g, i), m2);
            let w01 = _mm256_packus_epi32(d(0), d(1));
            let w23 = _mm256_packus_epi32(d(2), d(3));
            // 32-bit units: 0.lo, 1.lo, 2.lo, 3.lo, 0.hi, 1.hi, 2.hi, 3.hi.
            let y = _mm256_packus_epi16(w01, w23);
            _mm256_permutevar8x32_epi32(y, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
        };
        // SAFETY: bytes `32g..32g + 32` are in `out` (`g < steps`).
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * g).cast(), y) };
    }
    per * steps
}

/// [`unpack_u8`] of 1-, 2- and 4-bit fields: each stream byte zero-extended to a lane of
/// `8 * 8 / B` bits, then copies of it shifted so that code `k` lands at bit `8k` (the
/// inverse of the merge: shifts of `(8 - B) * 4`, `* 2` and `* 1`, as far as the lane
/// needs), and the mask keeps each byte's field. 32 codes a step, `4B` bytes in. `PLAIN`:
/// `f == 0` and no sign extension, so the loop has neither step.
#[inline]
#[target_feature(enable = "avx2")]
fn unpack_u8_spread<const B: u32, const PLAIN: bool>(
    src: &[u8],
    p: Fields,
    out: &mut [u8],
) -> usize {
    let mask = _mm256_set1_epi64x(rep8(low(B)) as i64);
    let top = p.f + p.b - 1;
    let sign = _mm256_set1_epi64x(rep8(1 << top) as i64);
    let keep = _mm256_set1_epi64x(rep8(low(p.n)) as i64);
    let (extend, f) = (p.extends(), count(p.f));
    let step = 4 * B as usize;
    let steps = (out.len() / 32).min(src.len() / step);
    for g in 0..steps {
        let at = g * step;
        let t = if B == 4 {
            // SAFETY: bytes `at..at + 16` are in `src` (`g < steps`).
            let x = unsafe { _mm_loadu_si128(src.as_ptr().add(at).cast()) };
            let w = _mm256_cvtepu8_epi16(x);
            _mm256_or_si256(w, _mm256_slli_epi16::<4>(w))
        } else if B == 2 {
            // SAFETY: bytes `at..at + 8` are in `src` (`g < steps`).
            let x = unsafe { _mm_loadl_epi64(src.as_ptr().add(at).cast()) };
            let w = _mm256_cvtepu8_epi32(x);
            let t = _mm256_or_si256(w, _mm256_slli_epi32::<12>(w));
            _mm256_or_si256(t, _mm256_slli_epi32::<6>(t))
        } else {
            let mut four = [0u8; 4];
            four.copy_from_slice(&src[at..at + 4]);
            let x = _mm_cvtsi32_si128(i32::from_le_bytes(four));
            let w = _mm256_cvtepu8_epi64(x);
            let t = _mm256_or_si256(w, _mm256_slli_epi64::<28>(w));
            let t = _mm256_or_si256(t, _mm256_slli_epi64::<14>(t));
            _mm256_or_si256(t, _mm256_slli_epi64::<7>(t))
        };
        let mut y = _mm256_and_si256(t, mask);
        if !PLAIN {
            // Fields of `f + b <= 8` bits: as in `unpack_u8`.
            y = _mm256_sll_epi16(y, f);
            if extend {
                let t = _mm256_xor_si256(y, sign);
                y = _mm256_and_si256(_mm256_sub_epi8(t, sign), keep);
            }
        }
        // SAFETY: bytes `32g..32g + 32` are in `out` (`g < steps`).
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * g).cast(), y) };
    }
    32 * steps
}

/// [`super::unpack_u8`] with AVX2: the count done, a multiple of 32.
///
/// # Safety
/// The CPU must have AVX2; `p.f + p.b <= p.n <= 8`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn unpack_u8(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    let plain = p.f == 0 && !p.extends();
    match (p.b, plain) {
        (1, false) => return unpack_u8_spread::<1, false>(src, p, out),
        (1, true) => return unpack_u8_spread::<1, true>(src, p, out),
        (2, false) => return unpack_u8_spread::<2, false>(src, p, out),
        (2, true) => return unpack_u8_spread::<2, true>(src, p, out),
        (4, false) => return unpack_u8_spread::<4, false>(src, p, out),
        (4, true) => return unpack_u8_spread::<4, true>(src, p, out),
        _ => {}
    }
    let b = p.b as usize;
    // Code `j` of a half starts at bit `s = j*b % 8` of byte `st = j*b / 8` (of `2b <= 16`):
    // its 16-bit window is bytes `st` and `st + 1` (a byte past the half is never part of a
    // field: index 0x80, zero), times `2^(8 - s + f)` (at most `2^15`) puts the field's bits
    // at bit `8 + f`, within the window (`f + b <= 8`); the mask clears the rest.
    let (mut even, mut odd) = ([0x80u8; 16], [0x80u8; 16]);
    let (mut me, mut mo) = ([0u16; 8], [0u16; 8]);
    for j in 0..16 {
        let (st, s) = (j * b / 8, j * b % 8);
        let (t, m) = if j % 2 == 0 {
            (&mut even, &mut me)
        } else {
            (&mut odd, &mut mo)
        };
        for k in 0..2 {
            if st + k < 16 {
                t[2 * (j / 2) + k] = (st + k) as u8;
            }
        }
        m[j / 2] = 1 << (8 - s + p.f as usize);
    }
    let half = 2 * b;
    let tables = [
        (both_halves(&even), both_halves(&odd)),
        (displaced(&even, half), displaced(&odd, half)),
    ];
    let words = |m: [u16; 8]| {
        let [a, b, c, d, e, f, g, h] = m.map(|x| x as i16);
        _mm256_setr_epi16(a, b, c, d, e, f, g, h, a, b, c, d, e, f, g, h)
    };
    let (me, mo) = (words(me), words(mo));
    let high = _mm256_set1_epi16(0xff00u16 as i16);
    let mask = _mm256_set1_epi64x(rep8(low(p.b) << p.f) as i64);
    let top = p.f + p.b - 1;
    let sign = _mm256_set1_epi64x(rep8(1 << top) as i64);
    let keep = _mm256_set1_epi64x(rep8(low(p.n)) as i64);
    let extend = p.extends();
    let step = 4 * b;
    let each = |x: __m256i, (even, odd): (__m256i, __m256i)| {
        let e = _mm256_mullo_epi16(_mm256_shuffle_epi8(x, even), me);
        let o = _mm256_mullo_epi16(_mm256_shuffle_epi8(x, odd), mo);
        let v = _mm256_or_si256(_mm256_srli_epi16::<8>(e), _mm256_and_si256(o, high));
        let mut y = _mm256_and_si256(v, mask);
        if extend {
            // `(y ^ s) - s` sets the bits above a field whose top bit is set.
            let t = _mm256_xor_si256(y, sign);
            y = _mm256_and_si256(_mm256_sub_epi8(t, sign), keep);
        }
        y
    };
    // The stream's first bytes by two loads a step, then by one from before the step.
    let steps = (out.len() / 32).min(fit(src.len(), half + 16, step));
    // The first `head` steps start within `16 - half` bytes of the stream's start.
    let head = steps.min((16 - half).div_ceil(step));
    for g in 0..head {
        // SAFETY: bytes `g*step..g*step + half + 16` are in `src` (`g < steps`).
        let x = unsafe { load_step::<false>(src, g * step, half) };
        let y = each(x, tables[0]);
        // SAFETY: bytes `32g..32g + 32` are in `out` (`g < steps`).
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * g).cast(), y) };
    }
    for g in head..steps {
        // SAFETY: as above, and `g*step >= 16 - half` (`g >= head`).
        let x = unsafe { load_step::<true>(src, g * step, half) };
        let y = each(x, tables[1]);
        // SAFETY: bytes `32g..32g + 32` are in `out` (`g < steps`).
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * g).cast(), y) };
    }
    32 * steps
}

/// The byte tables of the two-byte kernels: a half holds 8 codes, `b` bytes of stream;
/// code `j` starts at bit `s_j = j*b % 8` of byte `j*b / 8`. Even codes sit in one vector's
/// 32-bit lanes, odd codes in another's.
struct HalfTables {
    /// Per 32-bit lane `i`: the bit offsets of codes `2i` and `2i + 1`.
    shift: [[u32; 4]; 2],
    /// Encoding: for each of up to four slots, the `vpshufb` index of each output byte
    /// into the even and the odd vector (0x80 where the slot is unused).
    gather: [[[u8; 16]; 2]; 4],
    /// How many slots are used.
    slots: usize,
    /// Decoding: for each 32-bit lane, the stream bytes from the code's first one.
    spread: [[u8; 16]; 2],
}

impl HalfTables {
    fn new(b: u32) -> HalfTables {
        let b = b as usize;
        let mut t = HalfTables {
            shift: [[0; 4]; 2],
            gather: [[[0x80; 16]; 2]; 4],
            slots: 0,
            spread: [[0x80; 16]; 2],
        };
        let mut used = [[0usize; 16]; 2];
        for j in 0..8 {
            let (v, lane) = (j % 2, j / 2);
            let (st, s) = (j * b / 8, j * b % 8);
            t.shift[v][lane] = s as u32;
            for k in 0..4 {
                // Bytes past the half's `b` are never part of the field: zero.
                if st + k < b {
                    t.spread[v][4 * lane + k] = (st + k) as u8;
                }
            }
            // The shifted field is bits `s..s + b` of its lane (`s + b <= 23`): bytes
            // `0..=last` of the lane go to output bytes `st..=st + last`.
            for k in 0..=(s + b - 1) / 8 {
                let m = st + k;
                let slot = used[v][m];
                used[v][m] += 1;
                t.gather[slot][v][m] = (4 * lane + k) as u8;
                t.slots = t.slots.max(slot + 1);
            }
        }
        t
    }
}

/// [`super::pack_u16`] (`W = 2`) and [`super::pack_u32`] (`W = 4`, fields of `b <= 16`
/// bits) with AVX2 (`words`: the words' little-endian bytes): the count of codes done, a
/// multiple of 16. Four-byte words are cut to their fields and narrowed to two-byte lanes
/// (`vpackusdw`, which cannot saturate a value below `2^16`, then `vpermq`) first.
///
/// # Safety
/// The CPU must have AVX2; `W` is 2 or 4; `p.f + p.b <= 8 * W` and `p.b <= 16`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn pack_wide<const W: usize>(words: &[u8], p: Fields, out: &mut [u8]) -> usize {
    let t = HalfTables::new(p.b);
    let gather: [[__m256i; 2]; 4] = t.gather.map(|g| g.map(|h| both_halves(&h)));
    // The slot count as a constant, so that the tables stay in registers.
    match t.slots {
        1 => pack_wide_steps::<W, 1>(&t, &gather, words, p, out),
        2 => pack_wide_steps::<W, 2>(&t, &gather, words, p, out),
        _ => pack_wide_steps::<W, 4>(&t, &gather, words, p, out),
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn pack_wide_steps<const W: usize, const S: usize>(
    t: &HalfTables,
    gather: &[[__m256i; 2]; 4],
    src: &[u8],
    p: Fields,
    out: &mut [u8],
) -> usize {
    let (se, so) = (both_halves32(t.shift[0]), both_halves32(t.shift[1]));
    let mask = _mm256_set1_epi16(low(p.b) as u16 as i16);
    let mask32 = _mm256_set1_epi32(low(p.b) as u32 as i32);
    let low16 = _mm256_set1_epi32(0xffff);
    let f = count(p.f);
    let (half, step) = (p.b as usize, 2 * p.b as usize);
    let join = joiner(half);
    let size = 16 * W;
    let steps = fit(src.len(), size, size).min(fit(out.len(), half + 16, step));
    for g in 0..steps {
        let x = if W == 2 {
            // SAFETY: bytes `32g..32g + 32` are in `src` (`g < steps`).
            let x = unsafe { _mm256_loadu_si256(src.as_ptr().add(32 * g).cast()) };
            _mm256_and_si256(_mm256_srl_epi16(x, f), mask)
        } else {
            // SAFETY: bytes `64g..64g + 64` are in `src` (`g < steps`).
            let (a, b) = unsafe {
                let at = src.as_ptr().add(64 * g);
                (
                    _mm256_loadu_si256(at.cast()),
                    _mm256_loadu_si256(at.add(32).cast()),
                )
            };
            let a = _mm256_and_si256(_mm256_srl_epi32(a, f), mask32);
            let b = _mm256_and_si256(_mm256_srl_epi32(b, f), mask32);
            // 64-bit units after the pack: a.lo, b.lo, a.hi, b.hi.
            _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(a, b))
        };
        let e = _mm256_sllv_epi32(_mm256_and_si256(x, low16), se);
        let o = _mm256_sllv_epi32(_mm256_srli_epi32::<16>(x), so);
        let mut y = _mm256_or_si256(
            _mm256_shuffle_epi8(e, gather[0][0]),
            _mm256_shuffle_epi8(o, gather[0][1]),
        );
        for [ge, go] in &gather[1..S] {
            y = _mm256_or_si256(y, _mm256_shuffle_epi8(e, *ge));
            y = _mm256_or_si256(y, _mm256_shuffle_epi8(o, *go));
        }
        // SAFETY: bytes `g*step..g*step + half + 16` are in `out` (`g < steps`).
        unsafe { store_step(out, g * step, half, join, y) };
    }
    16 * steps
}

/// [`super::unpack_u16`] (`W = 2`) and [`super::unpack_u32`] (`W = 4`, fields of `b <= 16`
/// bits) with AVX2, into the words' little-endian bytes `out`: the count of **bytes**
/// written, a multiple of `16 * W`. Four-byte words are widened from two-byte lanes
/// (`vpmovzxwd`) before the shift to `f` and the sign extension.
///
/// # Safety
/// The CPU must have AVX2; `W` is 2 or 4; `p.f + p.b <= p.n <= 8 * W` and `p.b <= 16`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn unpack_wide<const W: usize>(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    let t = HalfTables::new(p.b);
    let half = p.b as usize;
    let tables = [
        (both_halves(&t.spread[0]), both_halves(&t.spread[1])),
        (displaced(&t.spread[0], half), displaced(&t.spread[1], half)),
    ];
    let se = both_halves32(t.shift[0]);
    // The odd code's field goes to bits 16.. of its lane.
    let so = both_halves32(t.shift[1].map(|s| 16 - s));
    let (mask_e, mask_o) = (
        _mm256_set1_epi32(low(p.b) as i32),
        _mm256_set1_epi32((low(p.b) << 16) as u32 as i32),
    );
    let top = p.f + p.b - 1;
    let (sign, keep) = if W == 2 {
        (
            _mm256_set1_epi16((1u32 << top) as u16 as i16),
            _mm256_set1_epi16(low(p.n) as u16 as i16),
        )
    } else {
        (
            _mm256_set1_epi32((1u64 << top) as u32 as i32),
            _mm256_set1_epi32(low(p.n) as u32 as i32),
        )
    };
    let (extend, f) = (p.extends(), count(p.f));
    let step = 2 * half;
    let size = 16 * W;
    // 16 codes, each in a two-byte lane, cut from the step in `x`.
    let cut = |x: __m256i, (spread_e, spread_o): (__m256i, __m256i)| {
        let e = _mm256_srlv_epi32(_mm256_shuffle_epi8(x, spread_e), se);
        let o = _mm256_sllv_epi32(_mm256_shuffle_epi8(x, spread_o), so);
        _mm256_or_si256(_mm256_and_si256(e, mask_e), _mm256_and_si256(o, mask_o))
    };
    // `(y ^ s) - s` sets the bits above a field whose top bit is set.
    let put = |g: usize, v: __m256i, out: &mut [u8]| {
        if W == 2 {
            let mut y = _mm256_sll_epi16(v, f);
            if extend {
                let t = _mm256_xor_si256(y, sign);
                y = _mm256_and_si256(_mm256_sub_epi16(t, sign), keep);
            }
            // SAFETY: callers pass `g < out.len() / 32`: bytes `32g..32g + 32` are in `out`.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * g).cast(), y) };
        } else {
            let halves = [_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v)];
            for (k, h) in halves.into_iter().enumerate() {
                let mut y = _mm256_sll_epi32(_mm256_cvtepu16_epi32(h), f);
                if extend {
                    let t = _mm256_xor_si256(y, sign);
                    y = _mm256_and_si256(_mm256_sub_epi32(t, sign), keep);
                }
                // SAFETY: callers pass `g < out.len() / 64`: bytes `64g + 32k..64g + 32k +
                // 32` are in `out`.
                unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(64 * g + 32 * k).cast(), y) };
            }
        }
    };
    // The stream's first bytes by two loads a step, then by one from before the step.
    let steps = (out.len() / size).min(fit(src.len(), half + 16, step));
    // The first `head` steps start within `16 - half` bytes of the stream's start.
    let head = steps.min((16 - half).div_ceil(step));
    for g in 0..head {
        // SAFETY: bytes `g*step..g*step + half + 16` are in `src` (`g < steps`).
        let x = unsafe { load_step::<false>(src, g * step, half) };
        put(g, cut(x, tables[0]), out);
    }
    for g in head..steps {
        // SAFETY: as above, and `g*step >= 16 - half` (`g >= head`).
        let x = unsafe { load_step::<true>(src, g * step, half) };
        put(g, cut(x, tables[1]), out);
    }
    size * steps
}

/// The byte tables of the four-byte kernels for fields of 17 to 31 bits: a step is 8 codes,
/// `b` bytes of stream, code `j` from bit `s_j = j*b % 8` of byte `j*b / 8`, five bytes at
/// most (`s_j + b <= 38`). Even codes sit in one vector's 64-bit lanes, odd codes in
/// another's, each also with its 128-bit halves swapped, so that every code is in each
/// half of one of the four.
struct WideFieldTables {
    /// Per 64-bit lane: the bit offsets of the even codes and of the odd ones.
    shift: [[u64; 4]; 2],
    /// Encoding: the `vpshufb` index of each output byte into the even vector, the even
    /// one swapped, the odd one and the odd one swapped (0x80: not from that vector).
    gather: [[u8; 32]; 4],
    /// Decoding: for codes 0-3 and 4-7 (one per 64-bit lane), the `vpshufb` index of each
    /// of the code's bytes into the step and into the step with its halves swapped.
    spread: [[[u8; 32]; 2]; 2],
}

impl WideFieldTables {
    fn new(b: u32) -> WideFieldTables {
        let b = b as usize;
        let mut t = WideFieldTables {
            shift: [[0; 4]; 2],
            gather: [[0x80; 32]; 4],
            spread: [[[0x80; 32]; 2]; 2],
        };
        for j in 0..8 {
            let (parity, lane) = (j % 2, j / 2);
            let (st, s) = (j * b / 8, j * b % 8);
            t.shift[parity][lane] = s as u64;
            // Output byte `st + k` (below `b <= 31`) is byte `k` of the shifted code, in
            // the half of the vector that holds the code there (lanes 0 and 1 are the low
            // half). Codes of one parity are at least 34 bits apart: no byte has two.
            for k in 0..=(s + b - 1) / 8 {
                let m = st + k;
                let swapped = usize::from(lane / 2 != m / 16);
                t.gather[2 * parity + swapped][m] = (8 * (lane % 2) + k) as u8;
                // Decoding: byte `k` of lane `j % 4` of the vector of codes `j / 4` is
                // stream byte `m`, in the step's half `m / 16`.
                let at = 8 * (j % 4) + k;
                let swapped = usize::from(at / 16 != m / 16);
                t.spread[j / 4][swapped][at] = (m % 16) as u8;
            }
        }
        t
    }
}

/// [`super::pack_u32`] for fields of 17 to 31 bits with AVX2 (`words`: the words'
/// little-endian bytes): the count of codes done, a multiple of 8. A step of 8 codes cuts
/// them to their fields, splits the even and the odd ones into 64-bit lanes shifted to
/// their bit offsets (`vpsllvq`), swaps each vector's halves (`vpermq`), and ORs four
/// `vpshufb` gathers into the step's `b` bytes, stored as 32 (the bytes past the step
/// are zero, written again by the next store or by the portable tail).
///
/// # Safety
/// The CPU must have AVX2; `17 <= p.b <= 31` and `p.f + p.b <= 32`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn pack_wide_fields(words: &[u8], p: Fields, out: &mut [u8]) -> usize {
    let t = WideFieldTables::new(p.b);
    let g = t.gather.map(|x| {
        // SAFETY: `x` is 32 bytes.
        unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
    });
    let lanes =
        |s: [u64; 4]| _mm256_setr_epi64x(s[0] as i64, s[1] as i64, s[2] as i64, s[3] as i64);
    let (se, so) = (lanes(t.shift[0]), lanes(t.shift[1]));
    let mask = _mm256_set1_epi32(low(p.b) as u32 as i32);
    let even = _mm256_set1_epi64x(0xffff_ffff);
    let f = count(p.f);
    let step = p.b as usize;
    let steps = fit(words.len(), 32, 32).min(fit(out.len(), 32, step));
    for i in 0..steps {
        // SAFETY: bytes `32i..32i + 32` are in `words` (`i < steps`).
        let x = unsafe { _mm256_loadu_si256(words.as_ptr().add(32 * i).cast()) };
        let x = _mm256_and_si256(_mm256_srl_epi32(x, f), mask);
        let e = _mm256_sllv_epi64(_mm256_and_si256(x, even), se);
        let o = _mm256_sllv_epi64(_mm256_srli_epi64::<32>(x), so);
        let (e2, o2) = (
            _mm256_permute4x64_epi64::<0b01_00_11_10>(e),
            _mm256_permute4x64_epi64::<0b01_00_11_10>(o),
        );
        let y = _mm256_or_si256(
            _mm256_or_si256(_mm256_shuffle_epi8(e, g[0]), _mm256_shuffle_epi8(e2, g[1])),
            _mm256_or_si256(_mm256_shuffle_epi8(o, g[2]), _mm256_shuffle_epi8(o2, g[3])),
        );
        // SAFETY: bytes `i*step..i*step + 32` are in `out` (`i < steps`).
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(i * step).cast(), y) };
    }
    8 * steps
}

/// [`super::unpack_u32`] for fields of 17 to 31 bits with AVX2, into the words'
/// little-endian bytes `out`: the count of **bytes** written, a multiple of 32. A step
/// loads its `b` bytes as 32 (and again with the halves swapped, `vpermq`), gathers each
/// code's bytes into a 64-bit lane (`vpshufb` from both, codes 0-3 in one vector and 4-7 in
/// another), cuts the fields at their bit offsets (`vpsrlvq`), and joins the two vectors'
/// low halves of the lanes (`vpsllq`, `vpermd`) before the shift to `f` and the sign
/// extension.
///
/// # Safety
/// The CPU must have AVX2; `17 <= p.b <= 31` and `p.f + p.b <= p.n <= 32`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn unpack_wide_fields(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    let t = WideFieldTables::new(p.b);
    let spread = t.spread.map(|v| {
        v.map(|x| {
            // SAFETY: `x` is 32 bytes.
            unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
        })
    });
    let lanes =
        |s: [u64; 4]| _mm256_setr_epi64x(s[0] as i64, s[1] as i64, s[2] as i64, s[3] as i64);
    let s = [
        lanes([t.shift[0][0], t.shift[1][0], t.shift[0][1], t.shift[1][1]]),
        lanes([t.shift[0][2], t.shift[1][2], t.shift[0][3], t.shift[1][3]]),
    ];
    let mask = _mm256_set1_epi64x(low(p.b) as i64);
    let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let top = p.f + p.b - 1;
    let sign = _mm256_set1_epi32((1u64 << top) as u32 as i32);
    let keep = _mm256_set1_epi32(low(p.n) as u32 as i32);
    let (extend, f) = (p.extends(), count(p.f));
    let step = p.b as usize;
    let steps = (out.len() / 32).min(fit(src.len(), 32, step));
    for i in 0..steps {
        // SAFETY: bytes `i*step..i*step + 32` are in `src` (`i < steps`).
        let x = unsafe { _mm256_loadu_si256(src.as_ptr().add(i * step).cast()) };
        let x2 = _mm256_permute4x64_epi64::<0b01_00_11_10>(x);
        let cut = |h: usize| {
            let v = _mm256_or_si256(
                _mm256_shuffle_epi8(x, spread[h][0]),
                _mm256_shuffle_epi8(x2, spread[h][1]),
            );
            _mm256_and_si256(_mm256_srlv_epi64(v, s[h]), mask)
        };
        // Lane `k` holds codes `k` and `k + 4`; `vpermd` puts them in order.
        let v = _mm256_or_si256(cut(0), _mm256_slli_epi64::<32>(cut(1)));
        let mut y = _mm256_sll_epi32(_mm256_permutevar8x32_epi32(v, order), f);
        if extend {
            // `(y ^ s) - s` sets the bits above a field whose top bit is set.
            let t = _mm256_xor_si256(y, sign);
            y = _mm256_and_si256(_mm256_sub_epi32(t, sign), keep);
        }
        // SAFETY: bytes `32i..32i + 32` are in `out` (`i < out.len() / 32`).
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * i).cast(), y) };
    }
    32 * steps
}
