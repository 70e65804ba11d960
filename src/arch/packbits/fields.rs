//! AVX-512 packbits of wide fields: two- and four-byte words with fields of 4 bits or more
//! (encoding), and fields whose groups of four (two-byte words) or two (four-byte words)
//! codes lie within 64 bits (decoding, see [`unpacks`]: all but 31-bit fields, which
//! [`unpack_31`] takes). One
//! permute a step, with no gathers to OR together, where the general kernels in
//! `super::x86` take two or more (up to eight for narrow fields), each zero-masked.
//!
//! Encoding merges each pair of neighbouring codes into one lane of twice the word's width
//! (`P = c0 | c1 << b`, by two shifts and a select), so that a 64-byte vector holds 16 or 8
//! pairs of `2b` bits each. Pair `j` starts at bit `s_j = 2bj % 8` of stream byte
//! `st_j = 2bj / 8`; lane `j` gives the step's bytes `st_j..st_{j+1}`, which hold the last
//! `s_j` bits of pair `j - 1` (all of them in that pair, since `2b >= 8`) and then pair `j`
//! (`8 * (st_{j+1} - st_j) <= s_j + 2b`, within the lane). So lane `j` becomes
//! `V_j = P_j << s_j | P_{j-1} >> (2b - s_j)`: the pair before comes by a lane rotation
//! (`valignd`/`valignq`), moved to the top of its lane, and one funnel shift by `s_j`
//! (`vpshldvd`/`vpshldvq`) joins the two. One `vpermb` then moves each lane's bytes
//! together. Where `2b` is a multiple of 8 (12-bit codes in two-byte words: three bytes a
//! pair), `s_j` is 0 and `V_j = P_j`.
//!
//! Decoding takes, into each 64-bit lane, the eight stream bytes from the first byte of a
//! group of `G = 64 / L` codes (four two-byte or two four-byte codes, `vpermb`), then cuts
//! every output byte out of its lane at once (`vpmultishiftqb`: 8 bits from any bit offset
//! of the same lane), already at the field's place `f` in its word; a mask keeps the field.
//! A group starts at bit `s = G*b*k % 8` of its first byte, so this holds where `s + G*b`
//! is at most 64 for every group ([`unpacks`]).
//!
//! The steps, the counts returned and the results are those of the general kernels: whole
//! steps of 32 or 16 codes ending on byte boundaries, bit for bit the portable kernels'
//! results.

use std::arch::x86_64::*;

use super::{Fields, low};
use crate::arch::stream::stream_lines;

/// Whether [`pack`] takes fields `p` of words of `L` bits: `2b >= 8`, so that the bits of
/// a pair's first byte below it all belong to the pair before.
pub(super) fn packs(l: u32, p: Fields) -> bool {
    p.b >= 4 && p.f + p.b <= l
}

/// Whether [`unpack`] takes fields `p` of words of `L` bits: every group of `64 / L` codes
/// lies within the eight bytes from its first one, `G*b + s <= 64` for the largest offset
/// `s = 8 - gcd(G*b, 8)` a group can start at.
pub(super) fn unpacks(l: u32, p: Fields) -> bool {
    let g = 64 / l;
    let gb = g * p.b;
    let s = 8 - (gb & gb.wrapping_neg()).min(8);
    p.b >= 1 && p.f + p.b <= p.n && p.n <= l && gb + s <= 64
}

/// Load 64 bytes of a table.
#[inline]
#[target_feature(enable = "avx512f")]
fn table(t: &[u8; 64]) -> __m512i {
    // SAFETY: 64 bytes from an array of 64.
    unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
}

/// A shift count for `vpsrld`/`vpsllq` and their kin.
#[inline]
#[target_feature(enable = "sse2")]
fn count(c: u32) -> __m128i {
    _mm_cvtsi64_si128(i64::from(c))
}

/// The `step` stream bytes (at most 64) at byte `at` of `src`, in the low bytes of a
/// vector: a whole 64-byte load while one fits in `src` (the decode's permutation picks
/// only the step's bytes), else a masked load of the step alone; `None` when the step runs
/// past `src`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn step_bytes(src: &[u8], at: usize, step: usize) -> Option<__m512i> {
    if at + 64 <= src.len() {
        // SAFETY: bytes `at..at + 64` are in `src`.
        Some(unsafe { _mm512_loadu_si512(src.as_ptr().add(at).cast()) })
    } else if at + step <= src.len() {
        // SAFETY: the masked load reads bytes `at..at + step`, inside `src`, and does
        // not touch (or fault on) the others.
        Some(unsafe { _mm512_maskz_loadu_epi8(low(step as u32), src.as_ptr().add(at).cast()) })
    } else {
        None
    }
}

/// The decodes' stores: vector `g` of `decode` (until it is `None`, or `steps` of them) as
/// bytes `64g..64g + 64` of `out`, whole lines by `vmovntdq` with `STREAM`
/// ([`stream_lines`]). Returns the count of bytes written.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI (the caller's features: this is inlined into
/// it).
#[inline(always)]
unsafe fn store_steps<const STREAM: bool>(
    out: &mut [u8],
    steps: usize,
    mut decode: impl FnMut(usize) -> Option<__m512i>,
) -> usize {
    let steps = steps.min(out.len() / 64);
    if STREAM {
        // SAFETY: the caller's features; `out` holds `64 * steps` bytes.
        return 64 * unsafe { stream_lines(out, steps, decode) };
    }
    let mut g = 0;
    while g < steps {
        let Some(y) = decode(g) else {
            break;
        };
        // SAFETY: `g < steps`: bytes `64g..64g + 64` are in `out`; the caller's features.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(64 * g).cast(), y) };
        g += 1;
    }
    64 * g
}

/// A field's bits in `L`-bit lanes, for the decodes: which bits to keep, and the sign
/// extension of a signed field into the component's `n` bits.
#[derive(Clone, Copy)]
struct Field<const L: u32> {
    mask: __m512i,
    sign: __m512i,
    keep: __m512i,
}

impl<const L: u32> Field<L> {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(p: Fields) -> Self {
        Field {
            mask: splat::<L>(low(p.b) << p.f),
            sign: splat::<L>(1 << (p.f + p.b - 1)),
            keep: splat::<L>(low(p.n)),
        }
    }

    /// The field of each lane of `v` (already at bit `f`), sign-extended when `EXTEND`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn cut<const EXTEND: bool>(self, v: __m512i) -> __m512i {
        let y = _mm512_and_si512(v, self.mask);
        if !EXTEND {
            return y;
        }
        // `(y ^ s) - s` sets the bits above a field whose top bit is set.
        let t = _mm512_xor_si512(y, self.sign);
        let t = if L == 16 {
            _mm512_sub_epi16(t, self.sign)
        } else {
            _mm512_sub_epi32(t, self.sign)
        };
        _mm512_and_si512(t, self.keep)
    }
}

/// `x` in each `L`-bit lane of a vector.
#[inline]
#[target_feature(enable = "avx512f")]
fn splat<const L: u32>(x: u64) -> __m512i {
    match L {
        16 => _mm512_set1_epi16(x as u16 as i16),
        32 => _mm512_set1_epi32(x as u32 as i32),
        _ => _mm512_set1_epi64(x as i64),
    }
}

/// Pack words of `L` bits (as their little-endian bytes) into `out`: the count of codes
/// done, a multiple of `512 / L`.
///
/// # Safety
/// The CPU must have AVX-512 F, BW, VBMI and VBMI2; `L` is 16 or 32; [`packs`]`(L, p)`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
pub(super) unsafe fn pack<const L: u32>(src: &[u8], p: Fields, out: &mut [u8]) -> usize {
    // Whole pairs take three shifts and permutes a step with the shift by `f` (of zero or
    // not), which in-cache timings do not tell from two: one loop for both.
    match ((2 * p.b).is_multiple_of(8), p.f > 0) {
        (true, _) => pack_steps::<L, true, true>(src, p, out),
        (false, false) => pack_steps::<L, false, false>(src, p, out),
        (false, true) => pack_steps::<L, false, true>(src, p, out),
    }
}

/// [`pack`]'s loop; `WHOLE`: `2b` is a multiple of 8 (every pair starts on a byte);
/// `FIRST`: `p.f > 0` (without it, the low code needs no shift: vector shifts and
/// permutes share two of Zen 4's four vector pipes, and they bound this loop).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn pack_steps<const L: u32, const WHOLE: bool, const FIRST: bool>(
    src: &[u8],
    p: Fields,
    out: &mut [u8],
) -> usize {
    let b = p.b as usize;
    // Pairs a step and bytes a pair lane.
    let (pairs, lane) = ((256 / L) as usize, (L / 4) as usize);
    let step = pairs * 2 * b / 8;
    let (mut idx, mut shift) = ([0u8; 64], [0u64; 8]);
    for j in 0..pairs {
        let (st, next) = (2 * b * j / 8, 2 * b * (j + 1) / 8);
        for (m, i) in idx.iter_mut().enumerate().take(next).skip(st) {
            *i = (j * lane + m - st) as u8;
        }
        // Lane `j`'s shift, in its place among the 64-bit halves of the vector.
        let s = (2 * b * j % 8) as u64;
        let per = 8 / lane;
        shift[j / per] |= s << (64 / per * (j % per));
    }
    let idx = table(&idx);
    // SAFETY: 64 bytes from an array of 8 `u64`.
    let shift = unsafe { _mm512_loadu_si512(shift.as_ptr().cast()) };
    // The select of the low code's bits.
    let pick = if L == 16 {
        _mm512_set1_epi32(low(p.b) as u32 as i32)
    } else {
        _mm512_set1_epi64(low(p.b) as i64)
    };
    let (lo, hi, up) = (count(p.f), count(L + p.f - p.b), count(2 * (L - p.b)));
    let steps = src.len() / 64;
    // Steps that store a whole vector, then those whose bytes end the output (masked).
    let fits = |need: usize| {
        if out.len() < need {
            0
        } else {
            (out.len() - need) / step + 1
        }
    };
    let whole = steps.min(fits(64));
    let all = steps.min(fits(step));
    let merged = |g: usize| {
        // SAFETY: callers pass `g < steps`: bytes `64g..64g + 64` are in `src`.
        let x = unsafe { _mm512_loadu_si512(src.as_ptr().add(64 * g).cast()) };
        // `sel ? a : c` (truth table bit `4 sel + 2a + c`): the low code from the
        // shift by `f` (bits `0..b`: its field alone), the high one from the shift that
        // puts its field at bit `b`. Above `2b` are the high word's other bits, which
        // neither the funnel shift below nor the bytes taken from the lane reach.
        let pair = if L == 16 {
            let a = if FIRST { _mm512_srl_epi32(x, lo) } else { x };
            _mm512_ternarylogic_epi32::<0xca>(pick, a, _mm512_srl_epi32(x, hi))
        } else {
            let a = if FIRST { _mm512_srl_epi64(x, lo) } else { x };
            _mm512_ternarylogic_epi64::<0xca>(pick, a, _mm512_srl_epi64(x, hi))
        };
        let v = if WHOLE {
            pair
        } else if L == 16 {
            // Lane `j` gets `P_{j-1}` (lane 0 the top lane's pair, shifted out whole).
            let prev = _mm512_alignr_epi32::<15>(pair, pair);
            _mm512_shldv_epi32(pair, _mm512_sll_epi32(prev, up), shift)
        } else {
            let prev = _mm512_alignr_epi64::<7>(pair, pair);
            _mm512_shldv_epi64(pair, _mm512_sll_epi64(prev, up), shift)
        };
        _mm512_permutexvar_epi8(idx, v)
    };
    for g in 0..whole {
        let y = merged(g);
        // SAFETY: `g < whole`: bytes `g*step..g*step + 64` are in `out`; those past the
        // step's are written again by the next step or by the portable tail.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(g * step).cast(), y) };
    }
    for g in whole..all {
        let y = merged(g);
        // SAFETY: `g < all`: the masked store writes bytes `g*step..(g + 1)*step`, inside
        // `out`.
        unsafe {
            _mm512_mask_storeu_epi8(out.as_mut_ptr().add(g * step).cast(), low(step as u32), y)
        };
    }
    all * (512 / L) as usize
}

/// Unpack words of `L` bits (into their little-endian bytes `out`): the count of **bytes**
/// written, a multiple of 64.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI; `L` is 16 or 32; [`unpacks`]`(L, p)`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(super) unsafe fn unpack<const L: u32>(
    src: &[u8],
    p: Fields,
    out: &mut [u8],
    stream: bool,
) -> usize {
    match (p.extends(), stream) {
        (true, false) => unpack_steps::<L, true, false>(src, p, out),
        (false, false) => unpack_steps::<L, false, false>(src, p, out),
        (true, true) => unpack_steps::<L, true, true>(src, p, out),
        (false, true) => unpack_steps::<L, false, true>(src, p, out),
    }
}

/// [`unpack`]'s loop; `EXTEND`: `p.extends()`; `STREAM`: the whole lines of `out` by
/// `vmovntdq` ([`stream_lines`]).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn unpack_steps<const L: u32, const EXTEND: bool, const STREAM: bool>(
    src: &[u8],
    p: Fields,
    out: &mut [u8],
) -> usize {
    let (b, f) = (p.b as usize, p.f as usize);
    let (per, word) = ((64 / L) as usize, (L / 8) as usize);
    let step = 8 * per * b / 8;
    // Lane `k` holds stream bytes `st..st + 8` of its group (`st = per*b*k / 8`; those past
    // the step's end are never part of a field), and output byte `t` of its word `i` takes
    // the 8 bits from bit `s + i*b + 8t - f` of the lane (modulo 64: bits below the field,
    // of the code before it or of the lane's top, are cleared by the mask).
    let (mut idx, mut ctl) = ([0u8; 64], [0u8; 64]);
    for k in 0..8 {
        let (st, s) = (per * b * k / 8, per * b * k % 8);
        for t in 0..8 {
            idx[8 * k + t] = (st + t) as u8;
            let (i, t8) = (t / word, 8 * (t % word));
            ctl[8 * k + t] = ((64 + s + i * b + t8 - f) % 64) as u8;
        }
    }
    let (idx, ctl) = (table(&idx), table(&ctl));
    let field = Field::<L>::new(p);
    let steps = out.len() / 64;
    let decode = |g: usize| {
        let x = step_bytes(src, g * step, step)?;
        let v = _mm512_multishift_epi64_epi8(ctl, _mm512_permutexvar_epi8(idx, x));
        Some(field.cut::<EXTEND>(v))
    };
    // SAFETY: this function's features.
    unsafe { store_steps::<STREAM>(out, steps, decode) }
}

/// Whether [`unpack_31`] takes fields `p` of four-byte words: 31-bit fields, the one width
/// [`unpacks`] leaves (a pair of codes is 62 bits and can start at bit 6 of a byte).
pub(super) fn unpacks_31(p: Fields) -> bool {
    p.b == 31 && p.f + p.b <= p.n && p.n <= 32
}

/// Unpack 31-bit fields into four-byte words (their little-endian bytes `out`): the count
/// of **bytes** written, a multiple of 64.
///
/// Word `i` of a step is the 32 stream bits from bit `w = 31i - f` (field `i` at bit `f`
/// of them, the field before below it and the next one above, both cleared by the mask).
/// They lie within the five bytes that end with byte `e = (w + 32) / 8 + 1`: `vpermb`
/// puts bytes `e - 4..e` into the word's lane of one vector and byte `e - 5` at the top of
/// its lane in another, and one funnel shift (`vpshrdvd`) by `c = w + 64 - 8e`, 24 to 31,
/// takes the word out of the 64 bits the two lanes make. For `i = 0` and `f = 1`, byte
/// `e - 5` is before the step: its bits are all below the field, so any byte will do.
///
/// # Safety
/// The CPU must have AVX-512 F, BW, VBMI and VBMI2; [`unpacks_31`]`(p)`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
pub(super) unsafe fn unpack_31(src: &[u8], p: Fields, out: &mut [u8], stream: bool) -> usize {
    match (p.extends(), stream) {
        (true, false) => unpack_31_steps::<true, false>(src, p, out),
        (false, false) => unpack_31_steps::<false, false>(src, p, out),
        (true, true) => unpack_31_steps::<true, true>(src, p, out),
        (false, true) => unpack_31_steps::<false, true>(src, p, out),
    }
}

/// [`unpack_31`]'s loop; `EXTEND`: `p.extends()`; `STREAM` as in [`unpack_steps`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn unpack_31_steps<const EXTEND: bool, const STREAM: bool>(
    src: &[u8],
    p: Fields,
    out: &mut [u8],
) -> usize {
    // 16 codes of 31 bits a step: 62 bytes in, 64 out.
    let step = 62;
    let (mut hi, mut lo, mut shift) = ([0u8; 64], [0u8; 64], [0u32; 16]);
    for (i, c) in shift.iter_mut().enumerate() {
        let w = 31 * i as i64 - i64::from(p.f);
        let e = (w + 32).div_euclid(8) + 1;
        for t in 0..4 {
            hi[4 * i + t] = (e - 4 + t as i64) as u8;
        }
        lo[4 * i + 3] = (e - 5).max(0) as u8;
        *c = (w + 64 - 8 * e) as u32;
    }
    let (hi, lo) = (table(&hi), table(&lo));
    // SAFETY: 64 bytes from an array of 16 `u32`.
    let shift = unsafe { _mm512_loadu_si512(shift.as_ptr().cast()) };
    let field = Field::<32>::new(p);
    let steps = out.len() / 64;
    let decode = |g: usize| {
        let x = step_bytes(src, g * step, step)?;
        let v = _mm512_shrdv_epi32(
            _mm512_permutexvar_epi8(lo, x),
            _mm512_permutexvar_epi8(hi, x),
            shift,
        );
        Some(field.cut::<EXTEND>(v))
    };
    // SAFETY: this function's features.
    unsafe { store_steps::<STREAM>(out, steps, decode) }
}
