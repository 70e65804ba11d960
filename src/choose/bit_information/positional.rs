//! The positional pair counter: the prepared words go through positional popcounts
//! (carry-save adders, every bit position of a vector an independent counter), without a
//! transpose; the pairs that must not count are subtracted after.

use num_traits::{PrimInt, WrappingAdd, WrappingSub};

use super::prepare::{Prepare, prepare_codes, prepare_masks};
use super::sliced::{SliceWord, count_sliced};
use super::statistics::PairCounts;
use crate::arch::{BAND_ROWS, BandRow, PairRing, WIDE_CHUNK_BYTES};
use crate::number::storage::Word;

/// Pairs per tile of the positional counter (at least; a multiple of every chunk).
const POS_TILE: usize = 4096;
/// The largest `inner` for which the positional counter reads a tile's second elements
/// from the buffer of its first ones (each element prepared once; tiles of `4 · inner`
/// pairs, the `inner` after a tile carried to the next); beyond it, the two are prepared
/// apart (twice per element).
pub(super) const POS_SHARED_SPAN: usize = 1 << 13;
/// Pairs per call of the fused kernel (a multiple of its chunk of 32 vectors at every
/// width).
const FUSED_TILE: usize = 8192;
/// The shortest rows (`inner` elements, in bytes) counted by bands of rows column by column
/// (`arch::pos_popcount_prepared_band_avx512`) rather than in stream order with the
/// prepared words kept in a ring of a row's length, which then outgrows the first-level
/// cache beside the stream.
const BAND_MIN_ROW_BYTES: usize = 4 << 10;
/// The largest power of two dividing the row length (in bytes, up to 4 KiB) for which
/// bands run: a band's 32 rows a multiple of 512 bytes apart fall in few sets of the
/// first-level cache (at most eight ways each), and evict one another's lines between the
/// two columns that share a line.
const BAND_MAX_ROW_ALIGN: usize = 256;
/// The fewest elements per block along the axis for which the fused kernel runs: a
/// block's last `inner` pairs, which cross its end, are corrected one word at a time.
const FUSED_MIN_N: usize = 16;
/// Below this block length (`n · inner` elements) the positional counter's per-block
/// corrections would cost more than its counting: the bit-sliced counter runs instead.
const POS_MIN_PERIOD: usize = 512;

/// Call `f(start, end, inside)` for the runs of pairs `t + start .. t + end` (cutting
/// `t .. t + len`) that lie inside one block (`inside`: the first `ppb` positions of each
/// `period`) or cross a block's end (the other `period - ppb`).
#[inline(always)]
fn for_each_run(
    t: usize,
    len: usize,
    period: usize,
    ppb: usize,
    mut f: impl FnMut(usize, usize, bool),
) {
    let (mut pos, mut i) = (t % period, 0);
    while i < len {
        let inside = pos < ppb;
        let run = if inside { ppb - pos } else { period - pos }.min(len - i);
        f(i, i + run, inside);
        (i, pos) = (i + run, pos + run);
        if pos == period {
            pos = 0;
        }
    }
}

/// The pair counts of the reference counter (`tests`), by positional popcounts
/// ([`Positional`]), without a transpose.
///
/// The words are one stream in which `j` pairs with `j + inner` for `j < npairs`, a pair
/// *inside* a block when `j` lies in the first `ppb = (n - 1) · inner` of its block of
/// `period = n · inner`; `c'` is the prepared word, 0 when masked, and `v` the mask. Per
/// bit position, over the valid pairs `V` (inside, both unmasked):
///
/// ```text
/// a    = Σ_V c'_j           = A - Σ_S c'_j - Σ_I c'_j & !v_(j+inner)
/// b    = Σ_V c'_(j+inner)   = A - head + tail - Σ_S c'_(j+inner) - Σ_I c'_(j+inner) & !v_j
/// both = Σ_V c'_j & c'_(j+inner) = Z - Σ_S c'_j & c'_(j+inner)
/// ```
///
/// with `A = Σ_(j < npairs) c'_j` and `Z = Σ_(j < npairs) c'_j & c'_(j+inner)` (the two
/// streams every element goes through), `head`/`tail` the first/last `inner` elements,
/// `S` the pairs across a block's end (`inner` per block) and `I` the inside pairs, the
/// last sums taken only in tiles that hold a masked element. So a clean element costs its
/// preparation and two positional popcounts.
pub(super) fn count_positional<W>(
    words: &[W],
    n: usize,
    inner: usize,
    prep: Prepare<W>,
) -> PairCounts
where
    W: SliceWord + PrimInt + WrappingAdd + WrappingSub,
{
    use crate::arch::bytes_of_words as bytes;
    let Some(period) = n.checked_mul(inner) else {
        return PairCounts::new();
    };
    if inner == 0 || n < 2 || words.len() < period {
        return PairCounts::new();
    }
    if period < POS_MIN_PERIOD {
        return count_sliced(words, n, inner, prep);
    }
    // Not inside `arch::vectorized`: its two kernels are (`prepare_codes`,
    // `Positional::add_pairs`), each compiled once per width; the rest is bookkeeping.
    let len = words.len() - words.len() % period;
    let words = &words[..len];
    let (ppb, npairs) = (period - inner, len - inner);
    let chunk = Collector::<W>::CHUNK;
    let shared = inner <= POS_SHARED_SPAN;
    let tile = if shared {
        (4 * inner).max(POS_TILE).next_multiple_of(chunk)
    } else {
        POS_TILE
    };
    // Shared: elements `t .. ready` at `code[.. ready - t]`; apart: the first
    // elements in `code[.. tile]`, the second in `code[tile ..]`.
    let size = if shared { tile + inner } else { 2 * tile };
    let (mut sum_a, mut sum_z) = (Positional::new(), Positional::new());
    let [
        mut cross_a,
        mut cross_b,
        mut cross_z,
        mut lost_a,
        mut lost_b,
    ] = std::array::from_fn(|_| Collector::<W>::new());
    let (mut crossing, mut lost) = (0u64, 0u64);
    // At the AVX-512 level, the pairs up to `fused_end` (whole chunks of pair vectors whose
    // words, and the words that follow them up to the second elements' vector, lie
    // inside `words`; or, for far neighbours, whole bands of rows) are prepared and
    // counted in one pass, each word prepared once in registers; the rest as below.
    let lanes = 64 / std::mem::size_of::<W>();
    let pair_prep = prep
        .pair_prep()
        .filter(|_| n >= FUSED_MIN_N && crate::arch::has_avx512());
    let rows = len / inner;
    let row_bytes = inner * std::mem::size_of::<W>();
    let mut band = pair_prep
        .filter(|_| {
            row_bytes >= BAND_MIN_ROW_BYTES
                && 1 << row_bytes.trailing_zeros().min(12) <= BAND_MAX_ROW_ALIGN
                && rows > BAND_ROWS
        })
        .and_then(|p| BandRow::new(inner, p.bits).map(|row| (p, row)));
    let mut fused = pair_prep
        .filter(|_| band.is_none() && inner <= POS_SHARED_SPAN)
        .map(|p| (p, PairRing::new(inner, p.bits)));
    let fused_end = if band.is_some() {
        (rows - 1) / BAND_ROWS * BAND_ROWS * inner
    } else {
        fused.as_ref().map_or(0, |(_, ring)| {
            let pairs = npairs.min(len.saturating_sub(ring.lookahead() * lanes));
            pairs - pairs % FUSED_TILE
        })
    };
    let size = size.max(if fused_end > 0 { 2 * FUSED_TILE } else { 0 });
    let mut code = vec![W::zero(); size];
    let mut mask: Vec<W> = Vec::new();
    let counted = |x: W| {
        let (c, m) = prep.apply(x);
        c & m
    };
    // The pairs `t .. t + tl` counted by a fused kernel: those across a block's end taken
    // out, and in tiles before `dirty_end` (which may hold a masked word), the inside pairs
    // with a masked element.
    let mut settle = |t: usize, tl: usize, dirty_end: usize| {
        for_each_run(t, tl, period, ppb, |s, e, inside| {
            if !inside {
                let (f, g) = (&words[t + s..t + e], &words[t + s + inner..t + e + inner]);
                cross_a.push_with(e - s, |i| counted(f[i]));
                cross_b.push_with(e - s, |i| counted(g[i]));
                cross_z.push_with(e - s, |i| counted(f[i]) & counted(g[i]));
                crossing += (e - s) as u64;
            }
        });
        let mut u = t;
        while u < t + tl && u < dirty_end {
            // The codes and masks of the tile's first and second elements, apart.
            let ul = FUSED_TILE.min(t + tl - u);
            if mask.is_empty() {
                mask = vec![W::zero(); code.len()];
            }
            let (c1, c2) = code.split_at_mut(ul);
            prepare_codes(&prep, &words[u..u + ul], c1);
            prepare_codes(&prep, &words[u + inner..u + inner + ul], c2);
            let (m1, m2) = mask.split_at_mut(ul);
            prepare_masks(&prep, &words[u..u + ul], m1);
            prepare_masks(&prep, &words[u + inner..u + inner + ul], m2);
            let (first, second) = (&code[..ul], &code[ul..2 * ul]);
            let (v1, v2) = (&mask[..ul], &mask[ul..2 * ul]);
            lost += correct_masked(
                (&mut lost_a, &mut lost_b),
                u,
                ul,
                (period, ppb),
                (first, second),
                (v1, v2),
            );
            u += ul;
        }
    };
    let (mut t, mut ready, mut dirty_end) = (0usize, fused_end, 0usize);
    while t < fused_end {
        if let Some((pp, row)) = band.as_mut() {
            // A band of rows `t / inner ..`, the pairs `t .. t + tl`.
            let tl = BAND_ROWS * inner;
            let masked = Positional::add_prepared_band(
                (&mut sum_a, &mut sum_z),
                row,
                bytes(words),
                pp,
                t / inner,
            );
            if masked {
                // Its last row pairs with the next band's first.
                dirty_end = t + tl + inner;
            }
            settle(t, tl, dirty_end);
            t += tl;
            continue;
        }
        let Some((pp, ring)) = fused.as_mut() else {
            break;
        };
        let tl = FUSED_TILE;
        let chunks = tl / (32 * lanes);
        let masked = Positional::add_prepared_pairs(
            (&mut sum_a, &mut sum_z),
            ring,
            bytes(words),
            pp,
            t / lanes,
            chunks,
        );
        if masked {
            dirty_end = t + tl + ring.lookahead() * lanes;
        }
        settle(t, tl, dirty_end);
        t += tl;
    }
    while t < npairs {
        let tl = tile.min(npairs - t);
        let dirty = if shared {
            let need = t + tl + inner;
            let last = prepare_codes(&prep, &words[ready..need], &mut code[ready - t..]);
            if let Some(e) = last {
                dirty_end = ready + e;
            }
            ready = need;
            dirty_end > t
        } else {
            let (c1, c2) = code.split_at_mut(tile);
            let d1 = prepare_codes(&prep, &words[t..t + tl], c1);
            let d2 = prepare_codes(&prep, &words[t + inner..t + inner + tl], c2);
            d1.is_some() || d2.is_some()
        };
        let off = if shared { inner } else { tile };
        let (first, second) = (&code[..tl], &code[off..off + tl]);
        // The two streams: whole chunks, then the last partial one padded with
        // zeros.
        let whole = tl - tl % chunk;
        let (f, s) = (bytes(&first[..whole]), bytes(&second[..whole]));
        Positional::add_pairs(&mut sum_a, &mut sum_z, f, s);
        if whole < tl {
            let (mut f, mut s) = (vec![W::zero(); chunk], vec![W::zero(); chunk]);
            f[..tl - whole].copy_from_slice(&first[whole..]);
            s[..tl - whole].copy_from_slice(&second[whole..]);
            Positional::add_pairs(&mut sum_a, &mut sum_z, bytes(&f), bytes(&s));
        }
        for_each_run(t, tl, period, ppb, |s, e, inside| {
            if !inside {
                let (f, g) = (&first[s..e], &second[s..e]);
                cross_a.push(f);
                cross_b.push(g);
                cross_z.push_with(e - s, |i| f[i] & g[i]);
                crossing += (e - s) as u64;
            }
        });
        if dirty {
            // The masks of the tile's first and second elements, again.
            if mask.is_empty() {
                mask = vec![W::zero(); size];
            }
            if shared {
                prepare_masks(&prep, &words[t..t + tl + inner], &mut mask);
            } else {
                let (m1, m2) = mask.split_at_mut(tile);
                prepare_masks(&prep, &words[t..t + tl], m1);
                prepare_masks(&prep, &words[t + inner..t + inner + tl], m2);
            }
            let (v1, v2) = (&mask[..tl], &mask[off..off + tl]);
            lost += correct_masked(
                (&mut lost_a, &mut lost_b),
                t,
                tl,
                (period, ppb),
                (first, second),
                (v1, v2),
            );
        }
        if shared {
            code.copy_within(tl..ready - t, 0);
        }
        t += tl;
    }
    // The first and the last `inner` elements.
    let [mut head, mut tail] = std::array::from_fn(|_| Collector::<W>::new());
    for (acc, from) in [(&mut head, 0), (&mut tail, npairs)] {
        for piece in words[from..from + inner].chunks(code.len()) {
            prepare_codes(&prep, piece, &mut code);
            acc.push(&code[..piece.len()]);
        }
    }
    let (a, z) = (sum_a.totals(W::BITS), sum_z.totals(W::BITS));
    let [ca, cb, cz, la, lb, h, tail] =
        [cross_a, cross_b, cross_z, lost_a, lost_b, head, tail].map(Collector::totals);
    let mut counts = PairCounts::new();
    counts.pairs = npairs as u64 - crossing - lost;
    for p in 0..W::BITS as usize {
        counts.a[p] = a[p] - ca[p] - la[p];
        counts.b[p] = a[p] + tail[p] - h[p] - cb[p] - lb[p];
        counts.both[p] = z[p] - cz[p];
    }
    counts
}

/// The corrections of a tile of pairs `t .. t + tl` that holds a masked element, from the
/// tile's counted first and second words and their masks: into `lost_a` (`lost_b`) the
/// first (second) words of the inside pairs whose other element is masked; returns the
/// number of inside pairs with a masked element.
fn correct_masked<W: Word + PrimInt>(
    (lost_a, lost_b): (&mut Collector<W>, &mut Collector<W>),
    t: usize,
    tl: usize,
    (period, ppb): (usize, usize),
    (first, second): (&[W], &[W]),
    (v1, v2): (&[W], &[W]),
) -> u64 {
    let mut lost = 0;
    for_each_run(t, tl, period, ppb, |s, e, inside| {
        if inside {
            let (f, g, v, w) = (&first[s..], &second[s..], &v1[s..], &v2[s..]);
            lost_a.push_with(e - s, |i| f[i] & !w[i]);
            lost_b.push_with(e - s, |i| g[i] & !v[i]);
            lost += v[..e - s]
                .iter()
                .zip(&w[..e - s])
                .map(|(&x, &y)| u64::from((x & y) == W::zero()))
                .sum::<u64>();
        }
    });
    lost
}

// ---------------------------------------------------------------------------------------
// Positional popcounts by carry-save adders.

/// One vector as `L` 64-bit lanes: `[u64; 4]` is one AVX2 register once compiled inside
/// `arch::vectorized`, which the element-wise loops below become (`[u64; 8]`, one AVX-512
/// register, is the state `arch::pos_popcount_pairs_avx512` keeps).
type Vector<const L: usize> = [u64; L];

/// Bytes per chunk of 16 vectors of four lanes: the granularity of [`Positional::add`].
/// (At the AVX-512 level, pairs of chunks go through the counter of eight lanes.)
pub(super) const CHUNK_BYTES: usize = 16 * 32;

/// Element-wise `f(a, b)` on two vectors.
#[inline(always)]
fn zip<const L: usize>(a: Vector<L>, b: Vector<L>, f: impl Fn(u64, u64) -> u64) -> Vector<L> {
    let mut r = a;
    for (r, b) in r.iter_mut().zip(b) {
        *r = f(*r, b);
    }
    r
}

/// A carry-save adder on every bit of three vectors: `(carry, sum)`, the two bits of
/// `a + b + c` in each bit position: the majority and the parity.
#[inline(always)]
fn csa<const L: usize>(a: Vector<L>, b: Vector<L>, c: Vector<L>) -> (Vector<L>, Vector<L>) {
    let mut carry = a;
    let mut sum = a;
    for l in 0..L {
        let (x, y, z) = (a[l], b[l], c[l]);
        carry[l] = (x & y) | ((x ^ y) & z);
        sum[l] = x ^ y ^ z;
    }
    (carry, sum)
}

/// The carry-save state of `L` lanes: bit planes (`ones`, `twos`, `fours`, `eights`: the
/// counts modulo 16, bit-sliced; the AVX-512 kernel also `sixteens`) and byte counters of
/// the carries out of the planes (`(carry >> j) & 0x01…`, one per shift `j < 8`, each byte
/// counting bit `8k + j` of its lane), each carry of weight `weight` (16, or 32 when the
/// kernel keeps `sixteens`).
#[derive(Clone, Debug)]
struct Lanes<const L: usize> {
    planes: [Vector<L>; 5],
    bytes: [Vector<L>; 8],
    weight: u64,
    /// Chunks added into `bytes` since they were last emptied (< 255).
    pending: u32,
}

impl<const L: usize> Lanes<L> {
    fn new(weight: u64) -> Self {
        Lanes {
            planes: [[0; L]; 5],
            bytes: [[0; L]; 8],
            weight,
            pending: 0,
        }
    }

    /// Add one chunk of 16 vectors to the planes, and their carries out of the planes to
    /// the byte counters; `true` when the byte counters must be emptied now.
    #[inline(always)]
    fn chunk(&mut self, d: &[Vector<L>; 16]) -> bool {
        let [mut ones, mut twos, mut fours, mut eights, _] = self.planes;
        let mut eights_ab = [[0; L]; 2];
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
        self.planes[..4].copy_from_slice(&[ones, twos, fours, eights]);
        const LOW: u64 = 0x0101_0101_0101_0101;
        for (j, b) in self.bytes.iter_mut().enumerate() {
            *b = zip(*b, sixteens, |acc, s| acc + ((s >> j) & LOW));
        }
        self.pending += 1;
        self.pending == 255
    }

    /// Move the byte counters (of `weight`) into `totals`, per bit position of a 64-bit
    /// word.
    fn empty_bytes(&mut self, totals: &mut [u64; 64]) {
        for (j, b) in self.bytes.iter_mut().enumerate() {
            for lane in b.iter_mut() {
                for k in 0..8 {
                    totals[8 * k + j] += self.weight * ((*lane >> (8 * k)) & 0xff);
                }
                *lane = 0;
            }
        }
        self.pending = 0;
    }

    /// Move everything into `totals`: the byte counters and the planes.
    fn empty(&mut self, totals: &mut [u64; 64]) {
        self.empty_bytes(totals);
        for (weight, plane) in [1u64, 2, 4, 8, 16].into_iter().zip(&mut self.planes) {
            for lane in plane.iter_mut() {
                for (p, t) in totals.iter_mut().enumerate() {
                    *t += weight * ((*lane >> p) & 1);
                }
                *lane = 0;
            }
        }
    }
}

/// Per-position counts of a stream of bytes read as 64-bit words, every bit position of
/// every lane an independent counter (a *positional popcount*, Harley–Seal style). Chunks
/// of 16 vectors go through a tree of 15 carry-save adders into four bit planes and one
/// vector of carries of weight 16 per chunk, which is added into byte counters and those
/// into `totals` every 255 chunks, before a byte can overflow. So a word costs about six
/// word operations (three with AVX-512's `vpternlog`), whatever its width.
///
/// Which lane counts a word does not matter (the lanes are added up), so the AVX-512 level
/// counts pairs of chunks as one chunk of eight lanes (`arch::pos_popcount_pairs_avx512`,
/// of which `Lanes::chunk` is the reference), and the others four lanes.
///
/// **Any element width, one kernel.** Elements of `B` bits (8, 16, 32 or 64) tile a
/// 64-bit word, bit `p` of each at a position `k · B + p` of the word whatever the byte
/// order, so their counts are the word positions' counts folded modulo `B`
/// ([`Positional::totals`]). The tree is therefore compiled once per level, not once per
/// width: it is the largest code of `choose`, and its copies were most of the library's
/// build time.
#[derive(Clone, Debug)]
pub(super) struct Positional {
    narrow: Lanes<4>,
    wide: Lanes<8>,
    /// Counts already moved out of the lanes, per bit position of a 64-bit word.
    totals: [u64; 64],
}

impl Positional {
    /// No words counted.
    pub(super) fn new() -> Self {
        Positional {
            narrow: Lanes::new(16),
            wide: Lanes::new(32),
            totals: [0; 64],
        }
    }

    /// One chunk of `16 · L` words into the lanes of width `L`.
    #[inline(always)]
    fn chunk<const L: usize>(lanes: &mut Lanes<L>, totals: &mut [u64; 64], d: &[Vector<L>; 16]) {
        if lanes.chunk(d) {
            lanes.empty_bytes(totals);
        }
    }

    /// Count `bytes` (a whole number of [`CHUNK_BYTES`]) as native-endian 64-bit words.
    /// Never inlined: one copy of the tree per level for every caller.
    #[inline(never)]
    pub(super) fn add(&mut self, bytes: &[u8]) {
        debug_assert!(bytes.len().is_multiple_of(CHUNK_BYTES));
        let (narrow, totals) = (&mut self.narrow, &mut self.totals);
        crate::arch::vectorized(
            #[inline(always)]
            || {
                for c in bytes.chunks_exact(CHUNK_BYTES) {
                    Self::chunk(narrow, totals, &vectors::<4>(c));
                }
            },
        )
    }

    /// The chunks of `first` and `second` counted into `a` and `both`, `L` lanes.
    #[inline(always)]
    fn pairs<const L: usize>(
        (a, ta): (&mut Lanes<L>, &mut [u64; 64]),
        (both, tb): (&mut Lanes<L>, &mut [u64; 64]),
        first: &[u8],
        second: &[u8],
    ) {
        let bytes = 8 * 16 * L;
        for (f, s) in first.chunks_exact(bytes).zip(second.chunks_exact(bytes)) {
            let (f, s) = (vectors::<L>(f), vectors::<L>(s));
            Self::chunk(a, ta, &f);
            let mut z = f;
            for (z, s) in z.iter_mut().zip(s) {
                *z = zip(*z, s, |x, y| x & y);
            }
            Self::chunk(both, tb, &z);
        }
    }

    /// Count into `a` the bytes of `first`, and into `both` the bytes `first[i] &
    /// second[i]` (two equal lengths, a whole number of [`CHUNK_BYTES`]): the pairs' first
    /// elements and their common bits, in one pass. At the AVX-512 level, chunks of
    /// [`WIDE_CHUNK_BYTES`] go through `arch::pos_popcount_pairs_avx512` into the lanes of
    /// eight, in runs that end where a byte counter could overflow; the rest (and every
    /// chunk below AVX-512) through the portable tree of four lanes. Never inlined, as
    /// [`Positional::add`].
    #[inline(never)]
    pub(super) fn add_pairs(a: &mut Self, both: &mut Self, first: &[u8], second: &[u8]) {
        debug_assert!(first.len() == second.len() && first.len().is_multiple_of(CHUNK_BYTES));
        let mut done = 0;
        let wide = first.len() / WIDE_CHUNK_BYTES;
        while done < wide && crate::arch::has_avx512() {
            let room = 255 - a.wide.pending.max(both.wide.pending) as usize;
            let run = room.min(wide - done);
            let bytes = done * WIDE_CHUNK_BYTES..(done + run) * WIDE_CHUNK_BYTES;
            let added = crate::arch::pos_popcount_pairs_avx512(
                (&mut a.wide.planes, &mut a.wide.bytes),
                (&mut both.wide.planes, &mut both.wide.bytes),
                &first[bytes.clone()],
                &second[bytes],
            );
            if !added {
                break;
            }
            for s in [&mut *a, &mut *both] {
                s.wide.pending += run as u32;
                if s.wide.pending == 255 {
                    s.wide.empty_bytes(&mut s.totals);
                }
            }
            done += run;
        }
        let done = done * WIDE_CHUNK_BYTES;
        let (na, nb) = (
            (&mut a.narrow, &mut a.totals),
            (&mut both.narrow, &mut both.totals),
        );
        let (first, second) = (&first[done..], &second[done..]);
        crate::arch::vectorized(
            #[inline(always)]
            || Self::pairs::<4>(na, nb, first, second),
        )
    }

    /// Count the pairs of `chunks` chunks of 32 pair vectors from pair vector `k0` of the
    /// raw `words` (of `prep.bits` each), prepared on the way, into `a` (first words) and
    /// `both` (common bits), by `arch::pos_popcount_prepared_pairs_avx512`, in runs that end
    /// where a byte counter could overflow; `ring` carries the prepared words from one call
    /// to the next (the calls of one stream in order). Returns whether a word prepared was
    /// masked. Only at the AVX-512 level (the caller checks).
    pub(super) fn add_prepared_pairs(
        (a, both): (&mut Self, &mut Self),
        ring: &mut PairRing,
        words: &[u8],
        prep: &crate::arch::PairPrep,
        k0: usize,
        chunks: usize,
    ) -> bool {
        Self::add_in_runs((a, both), chunks, |wa, wb, done, run| {
            crate::arch::pos_popcount_prepared_pairs_avx512(
                wa,
                wb,
                ring,
                words,
                prep,
                k0 + 32 * done,
                run,
            )
        })
    }

    /// Call `kernel(a, both, done, run)` on runs of the `chunks` chunks (`done` of them
    /// before the run) that end where a byte counter of `a` or `both` could overflow,
    /// emptying the byte counters between runs; whether a run's words were masked, or-ed.
    /// `kernel` answers `None` only below the AVX-512 level, which the callers check first.
    fn add_in_runs(
        (a, both): (&mut Self, &mut Self),
        chunks: usize,
        mut kernel: impl FnMut(
            crate::arch::WideState<'_>,
            crate::arch::WideState<'_>,
            usize,
            usize,
        ) -> Option<bool>,
    ) -> bool {
        let (mut done, mut masked) = (0, false);
        while done < chunks {
            let room = 255 - a.wide.pending.max(both.wide.pending) as usize;
            let run = room.min(chunks - done);
            let Some(m) = kernel(
                (&mut a.wide.planes, &mut a.wide.bytes),
                (&mut both.wide.planes, &mut both.wide.bytes),
                done,
                run,
            ) else {
                // `count_positional` asked `has_avx512` on this thread before the first
                // call, and the level of a thread does not change inside a call.
                unreachable!("the fused kernels run at the AVX-512 level only");
            };
            masked |= m;
            for s in [&mut *a, &mut *both] {
                s.wide.pending += run as u32;
                if s.wide.pending == 255 {
                    s.wide.empty_bytes(&mut s.totals);
                }
            }
            done += run;
        }
        masked
    }

    /// Count the pairs of the band of rows from `r0` (`arch::BAND_ROWS` pair rows of
    /// `row`'s shape) of the raw `words`, prepared on the way, into `a` (first words) and
    /// `both` (common bits), by `arch::pos_popcount_prepared_band_avx512`, in runs of
    /// columns that end where a byte counter could overflow; `row` carries the band's last
    /// row to the next band. Returns whether a word prepared was masked. Only at the
    /// AVX-512 level (the caller checks).
    pub(super) fn add_prepared_band(
        (a, both): (&mut Self, &mut Self),
        row: &mut BandRow,
        words: &[u8],
        prep: &crate::arch::PairPrep,
        r0: usize,
    ) -> bool {
        let columns = row.columns();
        Self::add_in_runs((a, both), columns, |wa, wb, done, run| {
            crate::arch::pos_popcount_prepared_band_avx512(wa, wb, row, words, prep, r0, done, run)
        })
    }

    /// The count of each bit position `p < bits` (index `p`, 0 the least significant) of
    /// the `bits`-bit elements (8, 16, 32 or 64) whose bytes were added.
    pub(super) fn totals(mut self, bits: u32) -> [u64; 64] {
        self.narrow.empty(&mut self.totals);
        self.wide.empty(&mut self.totals);
        let bits = bits as usize;
        let mut folded = [0u64; 64];
        for (q, t) in self.totals.into_iter().enumerate() {
            folded[q % bits] += t;
        }
        folded
    }
}

/// One chunk of `16 · L` native-endian words from its bytes.
#[inline(always)]
fn vectors<const L: usize>(c: &[u8]) -> [Vector<L>; 16] {
    let mut d = [[0u64; L]; 16];
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
pub(super) struct Collector<W> {
    acc: Positional,
    /// One chunk of words.
    buf: Vec<W>,
    fill: usize,
}

impl<W: Word + PrimInt> Collector<W> {
    /// Words per chunk.
    pub(super) const CHUNK: usize = CHUNK_BYTES / std::mem::size_of::<W>();

    /// No words collected.
    pub(super) fn new() -> Self {
        Collector {
            acc: Positional::new(),
            buf: vec![W::zero(); Self::CHUNK],
            fill: 0,
        }
    }

    /// Count the words `word(0) .. word(len - 1)`.
    #[inline(always)]
    pub(super) fn push_with(&mut self, len: usize, word: impl Fn(usize) -> W) {
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
    pub(super) fn push(&mut self, words: &[W]) {
        self.push_with(words.len(), |i| words[i]);
    }

    /// The count of each bit position over every word pushed (as [`Positional::totals`]).
    pub(super) fn totals(mut self) -> [u64; 64] {
        self.buf[self.fill..].fill(W::zero());
        self.acc.add(crate::arch::bytes_of_words(&self.buf));
        self.acc.totals(W::BITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::bytes_of_words;
    use crate::number::xorshift::xorshift64;

    /// `Positional` and `Collector` against a per-bit loop, for every width and at every
    /// instruction-set level: lengths that
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
            // Lengths around the wide chunks (two narrow ones) and past 255 of them.
            let lens = [
                0,
                1,
                chunk - 1,
                chunk,
                2 * chunk,
                3 * chunk + 5,
                256 * chunk + 17,
            ];
            for len in lens.into_iter().chain([4 * chunk, 1100 * chunk + 3]) {
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
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, || {
                let mut r = xorshift64(11);
                check::<u8>(&mut r);
                check::<u16>(&mut r);
                check::<u32>(&mut r);
                check::<u64>(&mut r);
            });
        }
    }
}
