//! Kernels of `choose`'s statistics: bit-sliced pair counting (the bit information of
//! `choose::BitCounts`) and the finite range of float codes (`choose::FiniteRange`).
//!
//! **Bit slices.** 64 consecutive elements of `W::BITS` bits are turned into `W::BITS`
//! words of 64 bits, a bit-matrix transpose: *plane* `p` holds bit `p` of element `i` in
//! its bit `i` ([`transpose_groups`]). The pairs of neighbours `(j, j + inner)` of 64
//! consecutive `j` are then a group's planes and the planes starting `inner` elements later,
//! which are two neighbouring groups' planes funnel-shifted by `inner % 64`. Each bit
//! position's joint counts are three popcounts per 64 pairs ([`count_plane_pairs`]): the
//! pairs whose first element has the bit, whose second has it, and whose two have it, over
//! the valid pairs (both elements unmasked, inside one block). The AVX2 twin of the
//! transpose is `arch::bit_slice` (byte gathers, then `vpmovmskb` per bit); the portable one
//! here ([`transpose_fallback`]) is its reference and the fallback.

use num_traits::PrimInt;

use crate::number::storage::Word;

/// A storage word that can be bit-sliced: the four widths, each with its AVX2 twin.
pub(crate) trait SliceWord: Word + Copy {
    /// [`transpose_groups`] by the AVX2 twin: `false` when the CPU has no AVX2 (nothing
    /// written).
    fn transpose_avx2(
        codes: &[Self],
        masks: &[Self],
        planes: &mut [u64],
        mplanes: &mut [u64],
    ) -> bool;
}

macro_rules! slice_word {
    ($($w:ty => $f:ident),*) => {$(
        impl SliceWord for $w {
            #[inline]
            fn transpose_avx2(
                codes: &[Self],
                masks: &[Self],
                planes: &mut [u64],
                mplanes: &mut [u64],
            ) -> bool {
                crate::arch::$f(codes, masks, planes, mplanes)
            }
        }
    )*};
}
slice_word!(u8 => bit_slice_u8, u16 => bit_slice_u16, u32 => bit_slice_u32, u64 => bit_slice_u64);

/// Transpose `codes` (a whole number of groups of 64 words, `W::BITS` planes each into
/// `planes`) and their masks (words all ones or 0; one plane per group into `mplanes`,
/// bit `i` set when element `i` is unmasked), by the AVX2 twin when the CPU has it.
pub(crate) fn transpose_groups<W: SliceWord>(
    codes: &[W],
    masks: &[W],
    planes: &mut [u64],
    mplanes: &mut [u64],
) {
    debug_assert!(codes.len() % 64 == 0 && masks.len() == codes.len());
    let groups = codes.len() / 64;
    let bits = W::BITS as usize;
    let (planes, mplanes) = (&mut planes[..groups * bits], &mut mplanes[..groups]);
    if W::transpose_avx2(codes, masks, planes, mplanes) {
        return;
    }
    transpose_fallback(codes, masks, planes, mplanes);
}

/// The portable [`transpose_groups`]: the reference of the AVX2 twin, and the fallback.
/// Each group is a 64 × 64 bit-matrix transpose by word operations (six rounds of swapping
/// the off-diagonal blocks, Hacker's Delight 7-3), of which the first `W::BITS` rows are
/// kept.
pub(crate) fn transpose_fallback<W: Word>(
    codes: &[W],
    masks: &[W],
    planes: &mut [u64],
    mplanes: &mut [u64],
) {
    let bits = W::BITS as usize;
    let groups = codes.chunks_exact(64).zip(masks.chunks_exact(64));
    for ((g, (c, m)), out) in groups.enumerate().zip(planes.chunks_exact_mut(bits)) {
        let mut a = [0u64; 64];
        for (x, &w) in a.iter_mut().zip(c) {
            *x = w.to_u64();
        }
        transpose64(&mut a);
        out.copy_from_slice(&a[..bits]);
        mplanes[g] = m
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &w)| acc | ((w.to_u64() & 1) << i));
    }
}

/// Transpose the 64 × 64 bit matrix whose row `i` is `a[i]` (bit `j` its column `j`): bit
/// `j` of `a[i]` becomes bit `i` of `a[j]`.
#[inline(always)]
pub(crate) fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_ffff_ffff;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            // Swap the high `j` columns of row `k` with the low `j` columns of row `k + j`.
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k + j] ^= t;
            a[k] ^= t << j;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

/// Joint counts of bit pairs, per bit position `p` (0 the least significant).
#[derive(Debug)]
pub(crate) struct PlaneCounts<'a> {
    /// Pairs whose first element has bit `p`.
    pub(crate) a: &'a mut [u64; 64],
    /// Pairs whose second element has bit `p`.
    pub(crate) b: &'a mut [u64; 64],
    /// Pairs whose two elements have bit `p`.
    pub(crate) both: &'a mut [u64; 64],
}

/// Add to `counts` the bit pairs of `valid.len()` groups of 64 pairs: pair `i` of group `k`
/// is bit `i` of `first`'s group `k` and bit `i + shift` of `second`'s groups `k`, `k + 1`
/// read as one 128-bit word (`second` holds one group more than `valid`, `shift < 64`),
/// counted when bit `i` of `valid[k]` is set. `BITS` planes per group. Returns the number
/// of valid pairs.
#[inline(always)]
pub(crate) fn count_plane_pairs<const BITS: usize>(
    first: &[u64],
    second: &[u64],
    shift: u32,
    valid: &[u64],
    counts: &mut PlaneCounts<'_>,
) -> u64 {
    debug_assert!(shift < 64 && BITS <= 64);
    let totals = [&mut *counts.a, &mut *counts.b, &mut *counts.both];
    if let Some(pairs) =
        crate::arch::count_plane_pairs_avx2(BITS, first, second, shift, valid, totals)
    {
        return pairs;
    }
    count_plane_pairs_fallback::<BITS>(first, second, shift, valid, counts)
}

/// The portable [`count_plane_pairs`]: the reference of the AVX2 twin, and the fallback.
#[inline(always)]
pub(crate) fn count_plane_pairs_fallback<const BITS: usize>(
    first: &[u64],
    second: &[u64],
    shift: u32,
    valid: &[u64],
    counts: &mut PlaneCounts<'_>,
) -> u64 {
    let groups = valid.len();
    let (first, second) = (&first[..groups * BITS], &second[..(groups + 1) * BITS]);
    let mut pairs = 0u64;
    // Per-bit accumulators in registers for a whole run, added to the totals once.
    let (mut a, mut b, mut both) = ([0u64; BITS], [0u64; BITS], [0u64; BITS]);
    for (k, &v) in valid.iter().enumerate() {
        pairs += u64::from(v.count_ones());
        let f = &first[k * BITS..][..BITS];
        let s0 = &second[k * BITS..][..BITS];
        let s1 = &second[(k + 1) * BITS..][..BITS];
        for p in 0..BITS {
            // `(s1 << (64 - shift))`, written so that a zero shift takes nothing from `s1`.
            let y = (s0[p] >> shift) | ((s1[p] << (63 - shift)) << 1);
            let (x, y) = (f[p] & v, y & v);
            a[p] += u64::from(x.count_ones());
            b[p] += u64::from(y.count_ones());
            both[p] += u64::from((x & y).count_ones());
        }
    }
    for p in 0..BITS {
        counts.a[p] += a[p];
        counts.b[p] += b[p];
        counts.both[p] += both[p];
    }
    pairs
}

/// The valid-pair word of `n <= 64` consecutive pairs of a stream cut into blocks of
/// `period` elements in which the first `pairs_per_block` pair forward: bit `i` set when
/// `pos + i`, taken modulo `period`, is below `pairs_per_block` (`pos < period` is the
/// first pair's position in its block) and `i < n`.
#[inline]
pub(crate) fn block_pattern(pos: usize, n: usize, period: usize, pairs_per_block: usize) -> u64 {
    debug_assert!(pos < period && n <= 64);
    if pos + n <= pairs_per_block {
        return ones(n);
    }
    let (mut word, mut pos, mut i) = (0u64, pos, 0usize);
    while i < n {
        let run = if pos < pairs_per_block {
            let run = (pairs_per_block - pos).min(n - i);
            word |= ones(run) << i;
            run
        } else {
            (period - pos).min(n - i)
        };
        i += run;
        pos += run;
        if pos == period {
            pos = 0;
        }
    }
    word
}

/// The low `n` bits set (`n <= 64`).
#[inline(always)]
fn ones(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// The finite extremes of a run of float codes, as sign-magnitude keys (`-magnitude` for a
/// negative code, ±0 both 0): `(min, max)` over the codes whose magnitude
/// (`code & mag_mask`) is at most `max_mag`, `None` when there is none. Such a magnitude
/// test is the finite test of every signed float layout whose NaNs and infinities have
/// the largest magnitudes (IEEE, all-ones NaN, no NaN) — not of the `fnuz` types, whose NaN
/// is the negative zero. Keys of up to 32-bit codes are `i32` (eight lanes of AVX2), of
/// 64-bit codes `i64`; both are returned as `i64`.
#[inline(always)]
pub(crate) fn finite_key_range<W: Word>(
    codes: &[W],
    sign: u64,
    mag_mask: u64,
    max_mag: u64,
) -> Option<(i64, i64)> {
    if W::BITS <= 32 {
        key_range_32(codes, sign as u32, mag_mask as u32, max_mag as u32)
    } else if (sign, mag_mask, max_mag) == (1 << 63, !(1 << 63), f64::MAX.to_bits()) {
        // IEEE binary64: the values themselves order as the keys do (AVX2 has `vminpd`,
        // not a 64-bit integer minimum).
        range_f64(codes)
    } else {
        key_range_64(codes, sign, mag_mask, max_mag)
    }
}

/// [`finite_key_range`] of IEEE binary64 codes, by the values (`±0` are equal there as
/// their keys are; NaN and ±Inf skipped by the magnitude test).
#[inline(always)]
fn range_f64<W: Word>(codes: &[W]) -> Option<(i64, i64)> {
    const LANES: usize = 8;
    let max_mag = f64::MAX.to_bits();
    let vals = |w: W| -> (f64, f64) {
        let b = w.to_u64();
        let finite = b & !(1 << 63) <= max_mag;
        let v = f64::from_bits(b);
        (
            if finite { v } else { f64::INFINITY },
            if finite { v } else { f64::NEG_INFINITY },
        )
    };
    let (mut lo, mut hi) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
    let mut chunks = codes.chunks_exact(LANES);
    for c in &mut chunks {
        for l in 0..LANES {
            let (a, b) = vals(c[l]);
            // Plain comparisons (no NaN can be here): one `vminpd`/`vmaxpd` each.
            lo[l] = if a < lo[l] { a } else { lo[l] };
            hi[l] = if b > hi[l] { b } else { hi[l] };
        }
    }
    for &w in chunks.remainder() {
        let (a, b) = vals(w);
        lo[0] = if a < lo[0] { a } else { lo[0] };
        hi[0] = if b > hi[0] { b } else { hi[0] };
    }
    let lo = lo
        .into_iter()
        .fold(f64::INFINITY, |m, x| if x < m { x } else { m });
    let hi = hi
        .into_iter()
        .fold(f64::NEG_INFINITY, |m, x| if x > m { x } else { m });
    let key = |v: f64| {
        let b = v.to_bits();
        let m = (b & !(1 << 63)) as i64;
        if b >> 63 == 1 { -m } else { m }
    };
    (lo <= hi).then(|| (key(lo), key(hi)))
}

macro_rules! key_range {
    ($name:ident, $u:ty, $i:ty) => {
        #[inline(always)]
        fn $name<W: Word>(codes: &[W], sign: $u, mag_mask: $u, max_mag: $u) -> Option<(i64, i64)> {
            const LANES: usize = 32 / std::mem::size_of::<$u>() * 2;
            // Branch-free: the key, or the neutral element of each fold when not finite.
            let keys = |w: W| -> ($i, $i) {
                let b = w.to_u64() as $u;
                let mag = b & mag_mask;
                let neg = <$i>::from(b & sign != 0);
                let k = (mag as $i ^ -neg) + neg;
                let finite = mag <= max_mag;
                (
                    if finite { k } else { <$i>::MAX },
                    if finite { k } else { <$i>::MIN },
                )
            };
            let (mut lo, mut hi) = ([<$i>::MAX; LANES], [<$i>::MIN; LANES]);
            let mut chunks = codes.chunks_exact(LANES);
            for c in &mut chunks {
                for l in 0..LANES {
                    let (a, b) = keys(c[l]);
                    lo[l] = lo[l].min(a);
                    hi[l] = hi[l].max(b);
                }
            }
            for &w in chunks.remainder() {
                let (a, b) = keys(w);
                lo[0] = lo[0].min(a);
                hi[0] = hi[0].max(b);
            }
            let lo = lo.into_iter().min().unwrap_or(<$i>::MAX);
            let hi = hi.into_iter().max().unwrap_or(<$i>::MIN);
            (lo <= hi).then_some((i64::from(lo), i64::from(hi)))
        }
    };
}
key_range!(key_range_32, u32, i32);
key_range!(key_range_64, u64, i64);

// ---------------------------------------------------------------------------------------
// Positional popcounts by carry-save adders.

/// One 256-bit vector as four 64-bit lanes: one AVX2 register once compiled inside
/// `arch::vectorized`, which the element-wise loops below become.
type Vector = [u64; 4];

/// Bytes per chunk of 16 vectors: the granularity of [`Positional::add`].
pub(crate) const CHUNK_BYTES: usize = 16 * 32;

/// Element-wise `f(a, b)` on two vectors.
#[inline(always)]
fn zip(a: Vector, b: Vector, f: impl Fn(u64, u64) -> u64) -> Vector {
    let mut r = a;
    for (r, b) in r.iter_mut().zip(b) {
        *r = f(*r, b);
    }
    r
}

/// A carry-save adder on every bit of three vectors: `(carry, sum)`, the two bits of
/// `a + b + c` in each bit position (five word operations).
#[inline(always)]
fn csa(a: Vector, b: Vector, c: Vector) -> (Vector, Vector) {
    let u = zip(a, b, |x, y| x ^ y);
    let carry = zip(zip(a, b, |x, y| x & y), zip(u, c, |x, y| x & y), |x, y| {
        x | y
    });
    (carry, zip(u, c, |x, y| x ^ y))
}

/// Per-position counts of a stream of bytes read as 64-bit words, every bit position of
/// every lane an independent counter (a *positional popcount*, Harley–Seal style). Chunks
/// of 16 vectors go through a tree of 15 carry-save adders into four bit planes (`ones`,
/// `twos`, `fours`, `eights`: the counts modulo 16, bit-sliced) and one vector of carries
/// of weight 16 per chunk, which is added into byte counters (`(sixteens >> j) & 0x01…`,
/// one per shift `j < 8`, each byte counting bit `8k + j` of its lane) and those into
/// `totals` every 255 chunks, before a byte can overflow. So a word costs about six
/// word operations, whatever its width.
///
/// **Any element width, one kernel.** Elements of `B` bits (8, 16, 32 or 64) tile a
/// 64-bit word, bit `p` of each at a position `k · B + p` of the word whatever the byte
/// order, so their counts are the word positions' counts folded modulo `B`
/// ([`Positional::totals`]). The tree is therefore compiled once (with its AVX2 twin),
/// not once per width: it is the largest code of `choose`, and its copies were most of
/// the library's build time.
#[derive(Clone, Debug)]
pub(crate) struct Positional {
    planes: [Vector; 4],
    bytes: [Vector; 8],
    /// Chunks added into `bytes` since they were last emptied (< 255).
    pending: u32,
    /// Counts already moved out of the planes, per bit position of a 64-bit word.
    totals: [u64; 64],
}

impl Positional {
    /// No words counted.
    pub(crate) fn new() -> Self {
        Positional {
            planes: [[0; 4]; 4],
            bytes: [[0; 4]; 8],
            pending: 0,
            totals: [0; 64],
        }
    }

    /// Add one chunk of 16 vectors to the planes, and their carries out of the planes to
    /// the byte counters.
    #[inline(always)]
    fn chunk(&mut self, d: &[Vector; 16]) {
        let [mut ones, mut twos, mut fours, mut eights] = self.planes;
        let mut eights_ab = [[0; 4]; 2];
        for (h, e) in eights_ab.iter_mut().enumerate() {
            let d = &d[8 * h..8 * h + 8];
            let (twos_a, o) = csa(ones, d[0], d[1]);
            let (twos_b, o) = csa(o, d[2], d[3]);
            let (fours_a, t) = csa(twos, twos_a, twos_b);
            let (twos_a, o) = csa(o, d[4], d[5]);
            let (twos_b, o) = csa(o, d[6], d[7]);
            let (fours_b, t) = csa(t, twos_a, twos_b);
            let (eights_x, f) = csa(fours, fours_a, fours_b);
            (ones, twos, fours, *e) = (o, t, f, eights_x);
        }
        let (sixteens, e) = csa(eights, eights_ab[0], eights_ab[1]);
        eights = e;
        self.planes = [ones, twos, fours, eights];
        const LOW: u64 = 0x0101_0101_0101_0101;
        for (j, b) in self.bytes.iter_mut().enumerate() {
            *b = zip(*b, sixteens, |acc, s| acc + ((s >> j) & LOW));
        }
        self.pending += 1;
        if self.pending == 255 {
            self.empty_bytes();
        }
    }

    /// Move the byte counters (weight 16) into `totals`.
    fn empty_bytes(&mut self) {
        for (j, b) in self.bytes.iter_mut().enumerate() {
            for lane in b.iter_mut() {
                for k in 0..8 {
                    self.totals[8 * k + j] += 16 * ((*lane >> (8 * k)) & 0xff);
                }
                *lane = 0;
            }
        }
        self.pending = 0;
    }

    /// Count `bytes` (a whole number of [`CHUNK_BYTES`]) as native-endian 64-bit words.
    /// Never inlined: one copy of the tree (and one of its AVX2 twin) for every caller.
    #[inline(never)]
    pub(crate) fn add(&mut self, bytes: &[u8]) {
        debug_assert!(bytes.len() % CHUNK_BYTES == 0);
        crate::arch::vectorized(
            #[inline(always)]
            || {
                for c in bytes.chunks_exact(CHUNK_BYTES) {
                    self.chunk(&vectors(c));
                }
            },
        )
    }

    /// Count into `a` the bytes of `first`, and into `both` the bytes `first[i] &
    /// second[i]` (two equal lengths, a whole number of [`CHUNK_BYTES`]): the pairs' first
    /// elements and their common bits, in one pass. Never inlined, as [`Positional::add`].
    #[inline(never)]
    pub(crate) fn add_pairs(a: &mut Self, both: &mut Self, first: &[u8], second: &[u8]) {
        debug_assert!(first.len() == second.len() && first.len() % CHUNK_BYTES == 0);
        crate::arch::vectorized(
            #[inline(always)]
            || {
                let pairs = first
                    .chunks_exact(CHUNK_BYTES)
                    .zip(second.chunks_exact(CHUNK_BYTES));
                for (f, s) in pairs {
                    let (f, s) = (vectors(f), vectors(s));
                    a.chunk(&f);
                    let mut z = f;
                    for (z, s) in z.iter_mut().zip(s) {
                        *z = zip(*z, s, |x, y| x & y);
                    }
                    both.chunk(&z);
                }
            },
        )
    }

    /// The count of each bit position `p < bits` (index `p`, 0 the least significant) of
    /// the `bits`-bit elements (8, 16, 32 or 64) whose bytes were added.
    pub(crate) fn totals(mut self, bits: u32) -> [u64; 64] {
        self.empty_bytes();
        for (weight, plane) in [1u64, 2, 4, 8].into_iter().zip(self.planes) {
            for lane in plane {
                for p in 0..64 {
                    self.totals[p] += weight * ((lane >> p) & 1);
                }
            }
        }
        let bits = bits as usize;
        let mut folded = [0u64; 64];
        for (q, t) in self.totals.into_iter().enumerate() {
            folded[q % bits] += t;
        }
        folded
    }
}

/// One chunk of [`CHUNK_BYTES`] as 16 vectors of native-endian words.
#[inline(always)]
fn vectors(c: &[u8]) -> [Vector; 16] {
    let mut d = [[0u64; 4]; 16];
    for (w, b) in d.as_flattened_mut().iter_mut().zip(c.chunks_exact(8)) {
        *w = u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }
    d
}

/// A [`Positional`] fed words of `W` in runs of any length: they are gathered into a
/// chunk buffer, counted when it is full, and the last partial chunk is counted with zeros
/// (which count nothing) by [`Collector::totals`]. For the counts' corrections, whose runs
/// are short or few.
#[derive(Clone, Debug)]
pub(crate) struct Collector<W> {
    acc: Positional,
    /// One chunk of words.
    buf: Vec<W>,
    fill: usize,
}

impl<W: Word + PrimInt> Collector<W> {
    /// Words per chunk.
    pub(crate) const CHUNK: usize = CHUNK_BYTES / std::mem::size_of::<W>();

    /// No words collected.
    pub(crate) fn new() -> Self {
        Collector {
            acc: Positional::new(),
            buf: vec![W::zero(); Self::CHUNK],
            fill: 0,
        }
    }

    /// Count the words `word(0) .. word(len - 1)`.
    #[inline(always)]
    pub(crate) fn push_with(&mut self, len: usize, word: impl Fn(usize) -> W) {
        let mut i = 0;
        while i < len {
            let take = (Self::CHUNK - self.fill).min(len - i);
            let buf = &mut self.buf[self.fill..self.fill + take];
            for (q, o) in buf.iter_mut().enumerate() {
                *o = word(i + q);
            }
            (self.fill, i) = (self.fill + take, i + take);
            if self.fill == Self::CHUNK {
                self.acc.add(crate::arch::bytes_of_words(&self.buf));
                self.fill = 0;
            }
        }
    }

    /// Count the words of `words`.
    #[inline(always)]
    pub(crate) fn push(&mut self, words: &[W]) {
        self.push_with(words.len(), |i| words[i]);
    }

    /// The count of each bit position over every word pushed (as [`Positional::totals`]).
    pub(crate) fn totals(mut self) -> [u64; 64] {
        self.buf[self.fill..].fill(W::zero());
        self.acc.add(crate::arch::bytes_of_words(&self.buf));
        self.acc.totals(W::BITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::bytes_of_words;

    fn rng(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn naive<W: Word>(codes: &[W], masks: &[W]) -> (Vec<u64>, Vec<u64>) {
        let bits = W::BITS as usize;
        let mut planes = vec![0u64; codes.len() / 64 * bits];
        let mut mp = vec![0u64; codes.len() / 64];
        for (i, (&c, &m)) in codes.iter().zip(masks).enumerate() {
            let (g, b) = (i / 64, i % 64);
            for p in 0..bits {
                planes[g * bits + p] |= ((c.to_u64() >> p) & 1) << b;
            }
            mp[g] |= (m.to_u64() & 1) << b;
        }
        (planes, mp)
    }

    fn check<W: SliceWord>(seed: u64) {
        let mut r = rng(seed);
        for groups in [1usize, 2, 3, 7] {
            let codes: Vec<W> = (0..64 * groups).map(|_| W::from_u64(r())).collect();
            let masks: Vec<W> = (0..64 * groups)
                .map(|_| W::from_u64(if r() % 5 == 0 { 0 } else { u64::MAX }))
                .collect();
            let want = naive(&codes, &masks);
            let bits = W::BITS as usize;
            let (mut p, mut m) = (vec![0; groups * bits], vec![0; groups]);
            transpose_fallback(&codes, &masks, &mut p, &mut m);
            assert_eq!((&p, &m), (&want.0, &want.1), "fallback {bits}");
            let (mut p, mut m) = (vec![0; groups * bits], vec![0; groups]);
            if W::transpose_avx2(&codes, &masks, &mut p, &mut m) {
                assert_eq!((&p, &m), (&want.0, &want.1), "avx2 {bits}");
            }
        }
    }

    #[test]
    fn transposes_match_the_definition() {
        for seed in 1..20 {
            check::<u8>(seed);
            check::<u16>(seed);
            check::<u32>(seed);
            check::<u64>(seed);
        }
    }

    #[test]
    fn pair_counts_avx2_match_the_fallback() {
        fn check<const BITS: usize>(r: &mut impl FnMut() -> u64) {
            for groups in [0usize, 1, 5, 31, 32, 70] {
                let first: Vec<u64> = (0..groups * BITS).map(|_| r()).collect();
                let second: Vec<u64> = (0..(groups + 1) * BITS).map(|_| r()).collect();
                let valid: Vec<u64> = (0..groups).map(|_| r() | r()).collect();
                for shift in [0u32, 1, 17, 63] {
                    let (mut a, mut b, mut c) = ([0u64; 64], [0u64; 64], [0u64; 64]);
                    let mut want = PlaneCounts {
                        a: &mut a,
                        b: &mut b,
                        both: &mut c,
                    };
                    let n = count_plane_pairs_fallback::<BITS>(
                        &first, &second, shift, &valid, &mut want,
                    );
                    let (mut x, mut y, mut z) = ([0u64; 64], [0u64; 64], [0u64; 64]);
                    let got = crate::arch::count_plane_pairs_avx2(
                        BITS,
                        &first,
                        &second,
                        shift,
                        &valid,
                        [&mut x, &mut y, &mut z],
                    );
                    if let Some(m) = got {
                        assert_eq!((m, x, y, z), (n, a, b, c), "{BITS} {groups} {shift}");
                    }
                }
            }
        }
        let mut r = rng(7);
        check::<8>(&mut r);
        check::<16>(&mut r);
        check::<32>(&mut r);
        check::<64>(&mut r);
    }

    /// `Positional` and `Collector` against a per-bit loop, for every width: lengths that
    /// end a chunk anywhere and pass the byte counters' emptying (255 chunks), words of
    /// all ones (the largest counts) and random ones, pairs' common bits.
    #[test]
    fn positional_counts_match_a_bit_loop() {
        fn naive<W: Word>(words: impl Iterator<Item = W>) -> [u64; 64] {
            let mut t = [0u64; 64];
            for w in words {
                for (p, t) in t.iter_mut().enumerate().take(W::BITS as usize) {
                    *t += (w.to_u64() >> p) & 1;
                }
            }
            t
        }
        fn check<W: Word + PrimInt>(r: &mut impl FnMut() -> u64) {
            let chunk = Collector::<W>::CHUNK;
            for len in [0, 1, chunk - 1, chunk, 3 * chunk + 5, 256 * chunk + 17] {
                for ones in [false, true] {
                    let mut word = || W::from_u64(if ones { u64::MAX } else { r() });
                    let f: Vec<W> = (0..len).map(|_| word()).collect();
                    let s: Vec<W> = (0..len).map(|_| word()).collect();
                    let whole = len - len % chunk;
                    let (mut a, mut z) = (Positional::new(), Positional::new());
                    let (fb, sb) = (bytes_of_words(&f[..whole]), bytes_of_words(&s[..whole]));
                    Positional::add_pairs(&mut a, &mut z, fb, sb);
                    let mut one = Positional::new();
                    one.add(fb);
                    let want_a = naive(f[..whole].iter().copied());
                    let want_z = naive(f[..whole].iter().zip(&s).map(|(&x, &y)| x & y));
                    assert_eq!(a.totals(W::BITS), want_a, "{} {len}", W::BITS);
                    assert_eq!(z.totals(W::BITS), want_z, "{} {len}", W::BITS);
                    assert_eq!(one.totals(W::BITS), want_a, "{} {len}", W::BITS);
                    // A collector fed in uneven runs.
                    let mut c = Collector::<W>::new();
                    let mut i = 0;
                    for run in (1..).map(|k: usize| (k * 37) % 101) {
                        if i >= len {
                            break;
                        }
                        let e = (i + run).min(len);
                        if run % 2 == 0 {
                            c.push(&f[i..e]);
                        } else {
                            c.push_with(e - i, |q| f[i + q]);
                        }
                        i = e;
                    }
                    assert_eq!(c.totals(), naive(f.iter().copied()), "{} {len}", W::BITS);
                }
            }
        }
        let mut r = rng(11);
        check::<u8>(&mut r);
        check::<u16>(&mut r);
        check::<u32>(&mut r);
        check::<u64>(&mut r);
    }

    #[test]
    fn block_pattern_marks_the_pairs_inside_blocks() {
        for (period, ppb) in [(1, 0), (3, 2), (5, 3), (64, 63), (100, 40), (1000, 999)] {
            for start in [0usize, 1, 63, 64, 99, 130, 1000] {
                for n in [0usize, 1, 10, 63, 64] {
                    let want = (0..n).fold(0u64, |w, i| {
                        w | (u64::from((start + i) % period < ppb) << i)
                    });
                    let pos = start % period;
                    assert_eq!(
                        block_pattern(pos, n, period, ppb),
                        want,
                        "{period} {ppb} {start} {n}"
                    );
                }
            }
        }
    }

    #[test]
    fn finite_key_range_skips_non_finite_codes() {
        let l = crate::number::layout::FLOAT32;
        let mut xs = vec![
            3.0f32,
            f32::NAN,
            -1.5,
            f32::INFINITY,
            -0.0,
            7.25,
            -f32::NAN,
            2.0,
        ];
        xs.extend((0..40).map(|i| i as f32 * 0.1 - 1.0));
        let codes: Vec<u32> = xs.iter().map(|x| x.to_bits()).collect();
        let (lo, hi) = finite_key_range(
            &codes,
            l.sign_bit(),
            l.magnitude_mask(),
            l.max_finite_bits(),
        )
        .expect("finite");
        assert_eq!(lo, -((-1.5f32).to_bits() as i64 & 0x7fff_ffff));
        assert_eq!(hi, 7.25f32.to_bits() as i64);
        let none = [f32::NAN.to_bits(), f32::INFINITY.to_bits()];
        assert_eq!(
            finite_key_range(&none, l.sign_bit(), l.magnitude_mask(), l.max_finite_bits()),
            None
        );
    }
}
