//! `scale_offset`'s element kernels: the loops the codec's core (`ScaleOffsetCore`, which
//! holds the parameters, the checks and the choice of kernel per call) runs over storage
//! words. The hardware `f32`/`f64` maps, the small-integer kernel for integers of
//! at most 16 bits (in `i32` or 16-bit lanes, with its modular inverse and factor range),
//! and the element-by-element loops over the type's own checked arithmetic, which record
//! the first failure instead of building a `Result` per element. The AVX2 and AVX-512
//! builds of them are made by `arch/` (the only `unsafe` layer).

use crate::number::layout::IntLayout;
use crate::number::storage::Word;

/// Chunk length of the in-place small-integer kernel.
pub(crate) const SMALL_INT_CHUNK: usize = 1024;

/// `scale_offset` on integers of at most 16 bits, in `i32` or 16-bit lanes, where nothing can
/// overflow the arithmetic used (`|x|, |offset|, |scale| < 2^16`):
///
/// - encode: `d = x - offset` in `i32`. The product `d * scale` is in the type's range
///   exactly when `d` is in `[dlo, dhi]` (the range divided by the scale, computed once), so
///   the check is on `d`, and the product is then exact in `i32` (`|d * scale| < 2^16`).
/// - decode: `q = x / scale` by multiplication with the scale's inverse modulo 2^16
///   (after shifting out its factors of two), accepted when `q * scale == x` and `q` is in
///   the range of quotients (see the loop). Then `q + offset`.
///
/// Each intermediate is range-checked as the type's own arithmetic requires. The encode is
/// in `i32` lanes (`vpmulld`) for 8-bit types and in 16-bit lanes (`vpmullw`, the check
/// moved onto `x`) for 16-bit ones, the decode in 16-bit lanes (`vpmullw`): 8 or 16 lanes
/// with AVX2, 16 or 32 with AVX-512, whose compares into mask registers also shorten the
/// checks (see [`small_int_at_level`]). `encode` picks the direction.
/// Returns whether every element succeeded (otherwise `dst` holds garbage).
///
/// The caller gives an integer layout of 8 or 16 bits that fills the word `W` (so that
/// extending a code to its value is a constant shift), with the offset and scale as `i32`
/// (`codec::scale_offset`'s `small_int`).
#[inline(always)]
fn small_int_map<W: Word>(
    src: &[W],
    dst: &mut [W],
    l: IntLayout,
    o: i32,
    s: i32,
    encode: bool,
) -> bool {
    if l.signed {
        small_int_map_in::<W, true>(src, dst, l, o, s, encode)
    } else {
        small_int_map_in::<W, false>(src, dst, l, o, s, encode)
    }
}

#[inline(always)]
fn small_int_map_in<W: Word, const SIGNED: bool>(
    src: &[W],
    dst: &mut [W],
    l: IntLayout,
    o: i32,
    s: i32,
    encode: bool,
) -> bool {
    // The code fills the word (see `small_int`), so the range is a constant too.
    debug_assert!(l.bits == W::BITS && l.signed == SIGNED);
    let bits = W::BITS.min(16);
    let (lo, hi) = if SIGNED {
        (-(1i32 << (bits - 1)), (1i32 << (bits - 1)) - 1)
    } else {
        (0, (1i32 << bits) - 1)
    };
    // `lo <= x <= hi` as one unsigned comparison.
    let in_range = |x: i32| (x.wrapping_sub(lo) as u32) <= (hi - lo) as u32;
    // The code fills the word (see `small_int`): a constant shift extends it.
    let sh = 32 - W::BITS.min(32);
    let value = |w: W| {
        let up = (w.to_u64() as u32) << sh;
        if SIGNED {
            (up as i32) >> sh
        } else {
            (up >> sh) as i32
        }
    };
    let mut ok = true;
    if encode {
        let (dlo, dhi) = factor_range(lo, hi, s);
        if dlo > dhi {
            return src.is_empty() || dst.is_empty();
        }
        if W::BITS == 16 {
            // 16-bit words in 16-bit lanes (16 per AVX2 vector, 32 per AVX-512 one; no
            // widening to `i32` and packing back): `d = x - o` is in `[dlo, dhi]` exactly when `x` is in
            // `[dlo + o, dhi + o]`, intersected with the type's range `x` is always in;
            // and the stored word is the low 16 bits of `(x - o) * s`, which are those of
            // `x * s - o * s`.
            let (xlo, xhi) = ((dlo + o).max(lo), (dhi + o).min(hi));
            if xlo > xhi {
                return src.is_empty() || dst.is_empty();
            }
            // `xlo <= x <= xhi` as one unsigned 16-bit comparison: `x - xlo` wraps to at
            // least `2^16 + lo - xlo > xhi - xlo` for `x < xlo` (`xhi <= hi < lo + 2^16`).
            let (xlo16, xspan16) = (xlo as u16, (xhi - xlo) as u16);
            let (s16, c16) = (s as u16, o.wrapping_mul(s).wrapping_neg() as u16);
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                let v = x.to_u64() as u16;
                ok &= v.wrapping_sub(xlo16) <= xspan16;
                *y = W::from_u64(u64::from(v.wrapping_mul(s16).wrapping_add(c16)));
            }
            return ok;
        }
        let span = (dhi - dlo) as u32;
        for (x, y) in src.iter().zip(dst.iter_mut()) {
            let d = value(*x).wrapping_sub(o);
            ok &= (d.wrapping_sub(dlo) as u32) <= span;
            *y = W::from_u64(u64::from(d.wrapping_mul(s) as u32));
        }
    } else {
        if s == 0 {
            return src.is_empty() || dst.is_empty();
        }
        // The quotient by multiplication, in 16-bit lanes (16 or 32 per vector; no
        // conversion to `f32` and back). `s = ±2^t * d` with `d` odd, which has an
        // inverse `inv` modulo 2^16. For `v` a multiple of `s`, `q = (v >> t) * ±inv`
        // modulo 2^16 is `v / s` exactly. For any `v`, `q` is accepted only when
        // (1) `q * s == v` modulo 2^16 and (2) `q` is in `[qlo, qhi]`, the integers
        // whose product with `s` is in the type's range (`factor_range`): then `q * s`
        // and `v` are both in that range, which spans less than 2^16, and congruent,
        // so equal — `v / s` is exact and is `q`. A multiple of `s` passes both,
        // except `min / -1`, whose quotient is out of the range (2).
        let t = s.unsigned_abs().trailing_zeros();
        let inv = inverse_mod_2_16((s.unsigned_abs() >> t) as u16);
        let c = if s < 0 { inv.wrapping_neg() } else { inv };
        let (qlo, qhi) = factor_range(lo, hi, s);
        let (qlo16, qspan) = (qlo as u16, (qhi - qlo) as u16);
        let (o16, s16) = (o as u16, s as u16);
        for (x, y) in src.iter().zip(dst.iter_mut()) {
            let v = value(*x) as u16;
            let shifted = if SIGNED {
                ((v as i16) >> t) as u16
            } else {
                v >> t
            };
            let q = shifted.wrapping_mul(c);
            let exact = q.wrapping_mul(s16) == v && q.wrapping_sub(qlo16) <= qspan;
            // `q + o` in range: for 16-bit types, no signed (unsigned) overflow, i.e.
            // the wrapping sum equals the saturating one; 8-bit types (in 16-bit
            // lanes, where the sum cannot overflow) compare with their bounds.
            let (r, fits) = if SIGNED {
                let (q, o) = (q as i16, o16 as i16);
                let r = q.wrapping_add(o);
                let fits = if W::BITS < 16 {
                    in_range(i32::from(r))
                } else {
                    r == q.saturating_add(o)
                };
                (r as u16, fits)
            } else {
                let r = q.wrapping_add(o16);
                let fits = if W::BITS < 16 {
                    in_range(i32::from(r))
                } else {
                    r == q.saturating_add(o16)
                };
                (r, fits)
            };
            ok &= exact & fits;
            *y = W::from_u64(u64::from(r));
        }
    }
    ok
}

/// [`small_int_map`] at the highest instruction-set level allowed (AVX-512, AVX2 or the
/// baseline), for the copy and the in-place paths alike: one closure per storage word, so
/// each level's build of the kernel exists once per word width (not per dtype, nor per
/// caller), and never inlined, so that its portable build exists once too. Called once per
/// slice (or per chunk of [`SMALL_INT_CHUNK`] elements in place), so the call costs nothing
/// per element.
#[inline(never)]
pub(crate) fn small_int_at_level<W: Word>(
    src: &[W],
    dst: &mut [W],
    l: IntLayout,
    o: i32,
    s: i32,
    encode: bool,
) -> bool {
    crate::arch::vectorized_wide(
        #[inline(always)]
        || small_int_map(src, dst, l, o, s, encode),
    )
}

/// The inverse of an odd `d` modulo 2^16: Newton's iteration `x <- x * (2 - d * x)`
/// doubles the number of correct low bits, and `x = d` is right in 3 (`d * d = 1` modulo 8
/// for every odd `d`): 3, 6, 12, 24 bits.
fn inverse_mod_2_16(d: u16) -> u16 {
    let mut x = d;
    for _ in 0..3 {
        x = x.wrapping_mul(2u16.wrapping_sub(d.wrapping_mul(x)));
    }
    debug_assert_eq!(d.wrapping_mul(x), 1);
    x
}

/// The `d` in `[lo, hi]` whose product `d * s` is also in `[lo, hi]`, as an interval (empty
/// when `lo > hi`). Exact integer division, rounded inwards.
fn factor_range(lo: i32, hi: i32, s: i32) -> (i32, i32) {
    let (lo, hi, s) = (i64::from(lo), i64::from(hi), i64::from(s));
    let floor_div = |a: i64, b: i64| {
        let q = a / b;
        if a % b != 0 && ((a < 0) != (b < 0)) {
            q - 1
        } else {
            q
        }
    };
    let ceil_div = |a: i64, b: i64| -floor_div(-a, b);
    let (a, b) = match s.cmp(&0) {
        std::cmp::Ordering::Equal => (lo, hi),
        std::cmp::Ordering::Greater => (ceil_div(lo, s), floor_div(hi, s)),
        std::cmp::Ordering::Less => (ceil_div(hi, s), floor_div(lo, s)),
    };
    // Both bounds are within [lo, hi] after the intersection, so they fit `i32`.
    (a.max(lo) as i32, b.min(hi) as i32)
}

/// `f32` and `f64`: the hardware operations *are* the type's own arithmetic (IEEE 754,
/// each operation correctly rounded once, overflow to ±Inf as the catalogue's
/// `float-overflow-inf` asks), so no element can fail. Only a NaN result differs from what
/// the hardware leaves: the generic path canonicalizes it, and so do these kernels.
pub(crate) trait HardwareFloat:
    Copy
    + PartialEq
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Add<Output = Self>
{
    const CANONICAL_NAN: Self;
    fn from_code(bits: u64) -> Self;
    fn code(self) -> u64;
}

impl HardwareFloat for f64 {
    const CANONICAL_NAN: Self = f64::from_bits(0x7ff8_0000_0000_0000);
    #[inline(always)]
    fn from_code(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    #[inline(always)]
    fn code(self) -> u64 {
        self.to_bits()
    }
}

impl HardwareFloat for f32 {
    const CANONICAL_NAN: Self = f32::from_bits(0x7fc0_0000);
    #[inline(always)]
    fn from_code(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
    #[inline(always)]
    fn code(self) -> u64 {
        u64::from(self.to_bits())
    }
}

/// `dst[i] = f(src[i])` in the hardware float `F`, NaN results canonicalized.
#[inline(always)]
pub(crate) fn hardware_map<W: Word, F: HardwareFloat>(
    src: &[W],
    dst: &mut [W],
    f: impl Fn(F) -> F,
) {
    for (x, y) in src.iter().zip(dst.iter_mut()) {
        let v = f(F::from_code(x.to_u64()));
        #[allow(clippy::eq_op)] // `v != v` is the NaN test, without a trait for `is_nan`.
        let v = if v != v { F::CANONICAL_NAN } else { v };
        *y = W::from_u64(v.code());
    }
}

/// In-place form of [`hardware_map`].
#[inline(always)]
pub(crate) fn hardware_map_in_place<W: Word, F: HardwareFloat>(data: &mut [W], f: impl Fn(F) -> F) {
    for y in data.iter_mut() {
        let v = f(F::from_code(y.to_u64()));
        #[allow(clippy::eq_op)]
        let v = if v != v { F::CANONICAL_NAN } else { v };
        *y = W::from_u64(v.code());
    }
}

/// The in-place small-integer kernel, chunk by chunk from a copy: `None` when every
/// element succeeded; otherwise the chunk with a failing element, restored (the chunks
/// before it are done, it and the rest untouched), for the caller's element-by-element
/// loop, which stops at that element.
#[inline(always)]
pub(crate) fn small_int_in_place<W: Word>(
    data: &mut [W],
    l: IntLayout,
    o: i32,
    s: i32,
    encode: bool,
) -> Option<std::ops::Range<usize>> {
    let mut tmp = [W::default(); SMALL_INT_CHUNK];
    for (k, chunk) in data.chunks_mut(SMALL_INT_CHUNK).enumerate() {
        let t = &mut tmp[..chunk.len()];
        t.copy_from_slice(chunk);
        if !small_int_at_level(t, chunk, l, o, s, encode) {
            chunk.copy_from_slice(t);
            let start = k * SMALL_INT_CHUNK;
            return Some(start..start + chunk.len());
        }
    }
    None
}

/// `dst[i] = one(src[i])` element by element (the type's own checked arithmetic): every
/// element is written (a failing one keeps its input), and the first failure is returned
/// with its index.
#[inline(always)]
pub(crate) fn checked_map<W: Word, E>(
    src: &[W],
    dst: &mut [W],
    one: impl Fn(u64) -> Result<u64, E>,
) -> Option<(usize, E)> {
    let mut first: Option<(usize, E)> = None;
    for (i, (s, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
        match one(s.to_u64()) {
            Ok(v) => *d = W::from_u64(v),
            Err(e) => {
                *d = *s;
                if first.is_none() {
                    first = Some((i, e));
                }
            }
        }
    }
    first
}

/// In-place form of [`checked_map`], stopping at the first failure (the elements before it
/// are done, it and the rest not): its index in `data` and its error.
#[inline(always)]
pub(crate) fn checked_map_in_place<W: Word, E>(
    data: &mut [W],
    one: impl Fn(u64) -> Result<u64, E>,
) -> Result<(), (usize, E)> {
    for (i, x) in data.iter_mut().enumerate() {
        match one(x.to_u64()) {
            Ok(v) => *x = W::from_u64(v),
            Err(e) => return Err((i, e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 16-bit encode (16-bit lanes, its check moved onto `x`) against the `i32`
    /// formula of the narrower types: `d = x - o` in `[dlo, dhi]`, the word the low 16
    /// bits of `d * s`. Every code of `int16` and `uint16`, scales and offsets at the ends
    /// of the range, in blocks of an odd length from an unaligned start (each block's
    /// success is whether all of its elements pass), at every instruction-set level.
    #[test]
    fn small_int_16_bit_encode_equals_i32_formula_at_every_level() {
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, || {
                for signed in [true, false] {
                    check_encode_16(signed);
                }
            });
        }
    }

    fn check_encode_16(signed: bool) {
        let l = IntLayout { bits: 16, signed };
        let (lo, hi) = (l.min() as i32, l.max() as i32);
        let value = |w: u16| {
            if signed {
                i32::from(w as i16)
            } else {
                i32::from(w)
            }
        };
        let words: Vec<u16> = (0..=u16::MAX).chain(0..7).collect();
        let scales = [
            0, 1, 2, 3, 7, 100, 127, 255, 256, 1000, 32767, 40000, 65535, -1, -2, -100, -32768,
        ];
        let offsets = [0, 1, -1, 100, -3000, lo, hi, lo + 1, hi - 1];
        for &s in scales.iter().filter(|&&s| (lo..=hi).contains(&s)) {
            let (dlo, dhi) = factor_range(lo, hi, s);
            for &o in offsets.iter().filter(|&&o| (lo..=hi).contains(&o)) {
                for block in words[1..].chunks(997) {
                    let mut out = vec![0u16; block.len()];
                    let ok = small_int_at_level(block, &mut out, l, o, s, true);
                    let mut want_ok = true;
                    for (&x, &y) in block.iter().zip(&out) {
                        let d = value(x) - o;
                        let pass = (dlo..=dhi).contains(&d);
                        want_ok &= pass;
                        if pass {
                            assert_eq!(y, d.wrapping_mul(s) as u16, "{l:?} {x} * {s} - {o}");
                        }
                    }
                    assert_eq!(ok, want_ok, "{l:?} scale {s} offset {o}: {block:?}");
                }
            }
        }
    }
}
