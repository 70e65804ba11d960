//! packbits' portable kernels: storage words to packed bits and back, a word at a time
//! (eight codes a step where the width allows; see the codec's header). Where the CPU has
//! AVX-512 (or AVX2, for the widths its twins cover), the arch layer's twins
//! (`crate::arch::packbits`) take the bulk of the array and these kernels the rest.
//!
//! With AVX2 or AVX-512 the twins take every layout of one-, two- and four-byte words, and
//! leave these kernels only the codes before an output's first line (decoding) and after
//! the last whole vector step: fewer than 64. So these loops are compiled once, for the
//! baseline, where they do the bulk; only eight-byte words, which no twin takes, get an
//! AVX2 build of theirs (`arch::vectorized`).

use super::Plan;
use crate::arch;
use crate::number::storage::{Word, Words, WordsMut};

impl Plan {
    /// The layout the arch layer's twins take.
    fn fields(self) -> arch::packbits::Fields {
        arch::packbits::Fields {
            f: self.f,
            b: self.b,
            n: self.n,
            signed: self.signed,
        }
    }
}

/// The low `b` bits (`b` in `1..=64`).
#[inline(always)]
fn low(b: u32) -> u64 {
    u64::MAX >> (64 - b)
}

/// `x` in each byte.
#[inline(always)]
const fn rep8(x: u64) -> u64 {
    x * 0x0101_0101_0101_0101
}

/// Eight one-byte codes (each below `2^b`, `b <= 8`) in the low `8b` bits, code `j` at bit
/// `j*b`.
#[inline(always)]
fn gather8(x: u64, b: u32) -> u64 {
    const M16: u64 = 0x00ff_00ff_00ff_00ff;
    const M32: u64 = 0x0000_ffff_0000_ffff;
    let x = (x & M16) | (((x >> 8) & M16) << b);
    let x = (x & M32) | (((x >> 16) & M32) << (2 * b));
    (x & 0xffff_ffff) | ((x >> 32) << (4 * b))
}

/// The inverse of [`gather8`]: `8b` bits to eight bytes, code `j` in byte `j`.
#[inline(always)]
fn scatter8(x: u64, b: u32) -> u64 {
    let (m1, m2, m4) = (low(b), low(2 * b), low(4 * b));
    let x = (x & m4) | (((x >> (4 * b)) & m4) << 32);
    let r2 = m2 | (m2 << 32);
    let x = (x & r2) | (((x >> (2 * b)) & r2) << 16);
    let r1 = m1 * 0x0001_0001_0001_0001;
    (x & r1) | (((x >> b) & r1) << 8)
}

#[inline(always)]
fn load8(s: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&s[..8]);
    u64::from_le_bytes(a)
}

/// Pack the components `src` into `out` (exactly `ceil(len * b / 8)` bytes).
pub(super) fn pack<W: Word>(src: &[W], p: Plan, out: &mut [u8]) {
    if p.f == 0 && p.b == p.n && p.b == W::BITS {
        // Whole words: the `bytes` codec's little-endian bytes.
        let size = (W::BITS / 8) as usize;
        for (o, w) in out.chunks_exact_mut(size).zip(src) {
            o.copy_from_slice(&w.to_u64().to_le_bytes()[..size]);
        }
        return;
    }
    let fields = p.fields();
    let done = match W::words(src) {
        Words::U8(s) => {
            // The arch twins take the bulk, then eight codes at a time, then the accumulator.
            let d = arch::packbits::pack_u8(s, fields, out);
            let (s, o) = (&s[d..], &mut out[d * p.b as usize / 8..]);
            d + pack_bytes(s, p.f, p.b, o)
        }
        Words::U16(s) => arch::packbits::pack_u16(s, fields, out),
        Words::U32(s) => arch::packbits::pack_u32(s, fields, out),
        Words::U64(_) => 0,
    };
    let (src, out) = (&src[done..], &mut out[done * p.b as usize / 8..]);
    let more = if const { W::BITS == 64 } && p.b <= 16 {
        arch::vectorized(
            #[inline(always)]
            || pack_groups(src, p, out),
        )
    } else if W::BITS > 8 && p.b <= 16 {
        pack_groups(src, p, out)
    } else {
        0
    };
    pack_tail(&src[more..], p, &mut out[more * p.b as usize / 8..]);
}

/// [`pack`] of one-byte components, eight at a time: the count done (a multiple of 8).
#[inline(always)]
fn pack_bytes(src: &[u8], f: u32, b: u32, out: &mut [u8]) -> usize {
    let mask = rep8(low(b));
    if f == 0 && b == 4 {
        // 16 nibbles into one u64.
        for (o, i) in out.chunks_exact_mut(8).zip(src.chunks_exact(16)) {
            let lo = gather8(load8(i) & mask, 4);
            let hi = gather8(load8(&i[8..]) & mask, 4);
            o.copy_from_slice(&(lo | hi << 32).to_le_bytes());
        }
        return src.len().min(out.len() * 2) / 16 * 16;
    }
    if f == 0 && b == 2 {
        // 32 two-bit codes into one u64.
        for (o, i) in out.chunks_exact_mut(8).zip(src.chunks_exact(32)) {
            let mut y = 0;
            for q in 0..4 {
                y |= gather8(load8(&i[8 * q..]) & mask, 2) << (16 * q);
            }
            o.copy_from_slice(&y.to_le_bytes());
        }
        return src.len().min(out.len() * 4) / 32 * 32;
    }
    // Any other width: eight codes to `b` bytes, stored as one u64 whose upper bytes the
    // next store overwrites (so the last stores stay 8 bytes inside `out`).
    let step = b as usize;
    let mut g = 0;
    while (g + 1) * 8 <= src.len() && g * step + 8 <= out.len() {
        let y = gather8((load8(&src[g * 8..]) >> f) & mask, b);
        out[g * step..g * step + 8].copy_from_slice(&y.to_le_bytes());
        g += 1;
    }
    g * 8
}

/// [`pack`] of fields of `b <= 16` bits, eight codes (`b` bytes) a step without a branch:
/// codes 0-3 and 4-7 each fill a `u64` (`4b <= 64` bits), joined in a `u128` stored whole
/// (its bytes past `b` are zero, and the next step's store overwrites them). The count done.
#[inline(always)]
fn pack_groups<W: Word>(src: &[W], p: Plan, out: &mut [u8]) -> usize {
    let (b, mask) = (p.b, low(p.b));
    let step = b as usize;
    let mut g = 0;
    for codes in src.chunks_exact(8) {
        let Some(o) = out.get_mut(g * step..g * step + 16) else {
            break;
        };
        let c = |j: usize| (codes[j].to_u64() >> p.f) & mask;
        let lo = c(0) | c(1) << b | c(2) << (2 * b) | c(3) << (3 * b);
        let hi = c(4) | c(5) << b | c(6) << (2 * b) | c(7) << (3 * b);
        let y = u128::from(lo) | u128::from(hi) << (4 * b);
        o.copy_from_slice(&y.to_le_bytes());
        g += 1;
    }
    8 * g
}

/// [`pack`] through a `u64` bit accumulator: whole words out, any width.
fn pack_tail<W: Word>(src: &[W], p: Plan, out: &mut [u8]) {
    let mask = low(p.b);
    let (mut acc, mut fill, mut pos) = (0u64, 0u32, 0usize);
    for w in src {
        let c = (w.to_u64() >> p.f) & mask;
        acc |= c << fill;
        fill += p.b;
        if fill >= 64 {
            if let Some(o) = out.get_mut(pos..pos + 8) {
                o.copy_from_slice(&acc.to_le_bytes());
            }
            pos += 8;
            fill -= 64;
            // The bits of `c` that did not fit (`c >> 64` is none).
            acc = c.checked_shr(p.b - fill).unwrap_or(0);
        }
    }
    let rest = fill.div_ceil(8) as usize;
    if let Some(o) = out.get_mut(pos..pos + rest) {
        o.copy_from_slice(&acc.to_le_bytes()[..rest]);
    }
}

/// Unpack `out.len()` components from `src` (at least `ceil(len * b / 8)` bytes).
pub(super) fn unpack<W: Word>(src: &[u8], p: Plan, out: &mut [W]) {
    if p.f == 0 && p.b == p.n && p.b == W::BITS {
        let size = (W::BITS / 8) as usize;
        for (w, i) in out.iter_mut().zip(src.chunks_exact(size)) {
            *w = W::from_u64(crate::number::storage::read_le_bits(i, size));
        }
        return;
    }
    // The twins store whole vectors at the output's pace: started on a 64-byte line, none
    // of their stores straddles two lines (which slowed the uint2 and uint4 decodes by 5 to
    // 10 % on Zen 4). The codes before the line are few (under 64 bytes of words): the
    // portable kernels do them, which set up no tables.
    let head = line_head(out, p.b).min(out.len());
    let (first, rest) = out.split_at_mut(head);
    unpack_run(src, p, first, false);
    unpack_run(&src[head * p.b as usize / 8..], p, rest, true);
}

/// The codes from `out`'s start to the next 64-byte boundary, when that boundary is at a whole
/// word and a whole byte of the stream (`head * b` a multiple of 8); else 0.
fn line_head<W>(out: &[W], b: u32) -> usize {
    let gap = (out.as_ptr() as usize).wrapping_neg() % 64;
    let size = size_of::<W>();
    let head = gap / size;
    if gap.is_multiple_of(size) && (head * b as usize).is_multiple_of(8) {
        head
    } else {
        0
    }
}

/// [`unpack`] of fields narrower than their words: the twins (when `twins`), then the
/// portable kernels.
fn unpack_run<W: Word>(src: &[u8], p: Plan, out: &mut [W], twins: bool) {
    let fields = p.fields();
    let done = match W::words_mut(out) {
        WordsMut::U8(o) => {
            let d = if twins {
                arch::packbits::unpack_u8(src, fields, o)
            } else {
                0
            };
            let (s, o) = (&src[(d * p.b as usize / 8).min(src.len())..], &mut o[d..]);
            d + unpack_bytes(s, p, o)
        }
        WordsMut::U16(o) if twins => arch::packbits::unpack_u16(src, fields, o),
        WordsMut::U32(o) if twins => arch::packbits::unpack_u32(src, fields, o),
        _ => 0,
    };
    let (src, out) = (
        &src[(done * p.b as usize / 8).min(src.len())..],
        &mut out[done..],
    );
    let done = if const { W::BITS == 64 } && p.b <= 56 {
        arch::vectorized(
            #[inline(always)]
            || unpack_groups(src, p, out),
        )
    } else if W::BITS > 8 && p.b <= 56 {
        unpack_groups(src, p, out)
    } else {
        0
    };
    unpack_tail(
        &src[(done * p.b as usize / 8).min(src.len())..],
        p,
        &mut out[done..],
    );
}

/// Sign-extend each byte's code from bit `top` (a code of `top + 1` bits) to `n` bits.
#[inline(always)]
fn extend_bytes(x: u64, top: u32, n: u32) -> u64 {
    let sign = (x >> top) & rep8(1);
    // Bits `top + 1 .. n` of each byte; `sign` is 0 or 1 per byte, so no carry crosses.
    let high = low(n) & !low(top + 1);
    x | (sign * high)
}

/// [`unpack`] of one-byte components, eight at a time: the count done (a multiple of 8).
#[inline(always)]
fn unpack_bytes(src: &[u8], p: Plan, out: &mut [u8]) -> usize {
    let top = p.f + p.b - 1;
    let extend = p.signed && top + 1 < p.n;
    if p.f == 0 && p.b == 4 && !extend {
        for (o, i) in out.chunks_exact_mut(16).zip(src.chunks_exact(8)) {
            let x = load8(i);
            o[..8].copy_from_slice(&scatter8(x & 0xffff_ffff, 4).to_le_bytes());
            o[8..].copy_from_slice(&scatter8(x >> 32, 4).to_le_bytes());
        }
        return out.len().min(src.len() * 2) / 16 * 16;
    }
    if p.f == 0 && p.b == 2 && !extend {
        for (o, i) in out.chunks_exact_mut(32).zip(src.chunks_exact(8)) {
            let x = load8(i);
            for q in 0..4 {
                let y = scatter8((x >> (16 * q)) & 0xffff, 2);
                o[8 * q..8 * q + 8].copy_from_slice(&y.to_le_bytes());
            }
        }
        return out.len().min(src.len() * 4) / 32 * 32;
    }
    let step = p.b as usize;
    let keep = low(8 * p.b);
    let mut g = 0;
    while (g + 1) * 8 <= out.len() && g * step + 8 <= src.len() {
        let mut y = scatter8(load8(&src[g * step..]) & keep, p.b) << p.f;
        if extend {
            y = extend_bytes(y, top, p.n);
        }
        out[g * 8..g * 8 + 8].copy_from_slice(&y.to_le_bytes());
        g += 1;
    }
    g * 8
}

/// [`unpack`] of fields of `b <= 56` bits, eight codes (`b` bytes) a step: code `j` is read
/// from the `u64` at its first byte (`j*b / 8` into the step), which holds all of it, with
/// one bounds check a step. The count done.
#[inline(always)]
fn unpack_groups<W: Word>(src: &[u8], p: Plan, out: &mut [W]) -> usize {
    let b = p.b as usize;
    let at: [usize; 8] = std::array::from_fn(|j| j * b / 8);
    let sh: [u32; 8] = std::array::from_fn(|j| (j * b % 8) as u32);
    let mask = low(p.b);
    let top = p.f + p.b - 1;
    let (up, keep, signed) = (63 - top, low(p.n), p.signed);
    let mut g = 0;
    for o in out.chunks_exact_mut(8) {
        let Some(s) = src.get(g * b..g * b + at[7] + 8) else {
            break;
        };
        for j in 0..8 {
            let v = ((load8(&s[at[j]..]) >> sh[j]) & mask) << p.f;
            // Shifting the code's top bit to bit 63 and back sign-extends it.
            let v = if signed {
                (((v << up) as i64) >> up) as u64 & keep
            } else {
                v
            };
            o[j] = W::from_u64(v);
        }
        g += 1;
    }
    8 * g
}

/// The little-endian `u64` at byte `i` of `s`, zero past its end.
#[inline(always)]
fn load_at(s: &[u8], i: usize) -> u64 {
    match s.get(i..i + 8) {
        Some(w) => load8(w),
        None => crate::number::storage::read_le_bits(s.get(i..).unwrap_or(&[]), 8),
    }
}

/// [`unpack`] of any width: each component read from the `u64` at its first byte (and the
/// byte after it when the code crosses it).
fn unpack_tail<W: Word>(src: &[u8], p: Plan, out: &mut [W]) {
    let mask = low(p.b);
    let top = p.f + p.b - 1;
    // Shifting the code's top bit to bit 63 and back sign-extends it to 64 bits; the `N`
    // bits of the component are then kept.
    let up = 63 - top;
    let keep = low(p.n);
    let wide = p.b > 56;
    for (i, w) in out.iter_mut().enumerate() {
        let bit = i * p.b as usize;
        let (byte, sh) = (bit / 8, (bit % 8) as u32);
        let mut c = load_at(src, byte) >> sh;
        if wide && sh > 0 {
            let next = src.get(byte + 8).copied().unwrap_or(0) as u64;
            c |= next << (64 - sh);
        }
        let v = (c & mask) << p.f;
        let v = if p.signed {
            (((v << up) as i64) >> up) as u64 & keep
        } else {
            v
        };
        *w = W::from_u64(v);
    }
}
