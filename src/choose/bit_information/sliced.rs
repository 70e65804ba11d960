//! The bit-sliced pair counter, for short blocks (`n · inner` below the positional
//! counter's minimum, where its per-block corrections would cost more than its counting).
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

use num_traits::{PrimInt, WrappingAdd, WrappingSub};

use super::prepare::{Prepare, prepare_run};
use super::statistics::PairCounts;
use crate::number::storage::Word;

/// Prepare and transpose the elements `from .. from + 64 * groups` of `words` (zero and
/// masked beyond its end) into `planes` and `mplanes`, through the buffers `code`, `mask`.
#[inline(always)]
fn load_groups<W>(
    prep: &Prepare<W>,
    words: &[W],
    from: usize,
    groups: usize,
    (code, mask): (&mut [W], &mut [W]),
    planes: &mut [u64],
    mplanes: &mut [u64],
) where
    W: SliceWord + PrimInt + WrappingAdd + WrappingSub,
{
    let bits = W::BITS as usize;
    // A few groups at a time, so that the prepared words stay in L1 for the transpose.
    let step = code.len().min(mask.len()) / 64;
    let mut g = 0;
    while g < groups {
        let n = step.min(groups - g);
        let (elems, start) = (64 * n, from + 64 * g);
        let have = words.len().saturating_sub(start).min(elems);
        // The words a tile ahead, a few lines per step: the loads of the next tile do not
        // wait on memory, and the prefetches do not queue up behind each other.
        let ahead = (start + PREFETCH_AHEAD).min(words.len());
        crate::arch::prefetch(&words[ahead..(ahead + elems).min(words.len())]);
        prepare_run(prep, &words[start.min(words.len())..][..have], code, mask);
        code[have..elems].fill(W::zero());
        mask[have..elems].fill(W::zero());
        let (p, m) = (&mut planes[g * bits..], &mut mplanes[g..]);
        transpose_groups(&code[..elems], &mask[..elems], p, m);
        g += n;
    }
}

/// How far ahead of the words being prepared the counter prefetches (elements).
const PREFETCH_AHEAD: usize = 2048;

/// Pairs per tile of the bit-sliced counter (a multiple of 64).
const SLICED_TILE: usize = 4096;
/// The largest `inner` for which a tile's second elements are read from the same planes
/// as its first ones (each element prepared and transposed once); beyond it, they are
/// prepared and transposed apart (twice per element).
pub(super) const SHARED_SPAN: usize = 1 << 15;

/// The pair counts of the reference counter (`tests`), bit-sliced (see above): the
/// words are seen as one stream in which `j` pairs with `j + inner` when `j` lies in the
/// first `(n - 1) · inner` of its block of `n · inner`. Each element is prepared
/// ([`Prepare`]) once, its groups of 64 transposed into planes once (for
/// `inner <= SHARED_SPAN`; the planes of the last `inner` elements of a tile are carried
/// to the next), and the pairs of 64 `j` counted by three popcounts per bit position.
pub(super) fn count_sliced<W>(words: &[W], n: usize, inner: usize, prep: Prepare<W>) -> PairCounts
where
    W: SliceWord + PrimInt + WrappingAdd + WrappingSub,
{
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            let mut counts = PairCounts::new();
            let period = n * inner;
            if inner == 0 || n < 2 || words.len() < period {
                return counts;
            }
            let len = words.len() - words.len() % period;
            let words = &words[..len];
            let (ppb, npairs) = (period - inner, len - inner);
            let bits = W::BITS as usize;
            let shared = inner <= SHARED_SPAN;
            // Groups of planes held: a tile's, the `inner` after it, and two more for the
            // funnel shift (its group `k + 1`) and the alignment.
            let span_groups = SLICED_TILE / 64 + if shared { inner / 64 + 3 } else { 2 };
            // Prepared words of up to 4 groups (1 KiB of f32) at a time.
            let (mut code, mut mask) = ([W::zero(); 256], [W::zero(); 256]);
            let mut planes = vec![0u64; span_groups * bits];
            let mut mplanes = vec![0u64; span_groups];
            let (mut planes2, mut mplanes2) = if shared {
                (Vec::new(), Vec::new())
            } else {
                (vec![0u64; span_groups * bits], vec![0u64; span_groups])
            };
            let mut valid = vec![0u64; SLICED_TILE / 64];
            let (q, r) = (inner / 64, (inner % 64) as u32);
            let (mut base, mut done) = (0usize, 0usize); // global groups: planes[0], end
            let mut t = 0;
            while t < npairs {
                let tl = SLICED_TILE.min(npairs - t);
                let kg = tl.div_ceil(64);
                let g0 = t / 64;
                let second_shift = if shared {
                    // Drop the groups before this tile, then transpose up to the last
                    // group the second elements (and the funnel) reach.
                    let keep = done - g0;
                    planes.copy_within((g0 - base) * bits..(done - base) * bits, 0);
                    mplanes.copy_within(g0 - base..done - base, 0);
                    base = g0;
                    let end = g0 + kg + q + 2;
                    load_groups(
                        &prep,
                        words,
                        done * 64,
                        end - done,
                        (&mut code, &mut mask),
                        &mut planes[keep * bits..],
                        &mut mplanes[keep..],
                    );
                    done = end;
                    r
                } else {
                    let bufs = (&mut code[..], &mut mask[..]);
                    load_groups(&prep, words, t, kg + 1, bufs, &mut planes, &mut mplanes);
                    let bufs = (&mut code[..], &mut mask[..]);
                    let (p2, m2) = (&mut planes2[..], &mut mplanes2[..]);
                    load_groups(&prep, words, t + inner, kg + 1, bufs, p2, m2);
                    0
                };
                let (second, msecond) = if shared {
                    (&planes[q * bits..], &mplanes[q..])
                } else {
                    (&planes2[..], &mplanes2[..])
                };
                let mut pos = t % period;
                for (k, v) in valid[..kg].iter_mut().enumerate() {
                    let m2 = (msecond[k] >> second_shift)
                        | ((msecond[k + 1] << (63 - second_shift)) << 1);
                    let pairs = 64.min(tl - 64 * k);
                    *v = mplanes[k] & m2 & block_pattern(pos, pairs, period, ppb);
                    pos += 64;
                    if pos >= period {
                        pos %= period;
                    }
                }
                let mut c = PlaneCounts {
                    a: &mut counts.a,
                    b: &mut counts.b,
                    both: &mut counts.both,
                };
                let (f, v) = (&planes[..], &valid[..kg]);
                counts.pairs += match bits {
                    8 => count_plane_pairs::<8>(f, second, second_shift, v, &mut c),
                    16 => count_plane_pairs::<16>(f, second, second_shift, v, &mut c),
                    32 => count_plane_pairs::<32>(f, second, second_shift, v, &mut c),
                    _ => count_plane_pairs::<64>(f, second, second_shift, v, &mut c),
                };
                t += tl;
            }
            counts
        },
    )
}

/// A storage word that can be bit-sliced: the four widths, each with its AVX2 twin.
pub(super) trait SliceWord: Word + Copy {
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
pub(super) fn transpose_groups<W: SliceWord>(
    codes: &[W],
    masks: &[W],
    planes: &mut [u64],
    mplanes: &mut [u64],
) {
    debug_assert!(codes.len().is_multiple_of(64) && masks.len() == codes.len());
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
pub(super) fn transpose_fallback<W: Word>(
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
pub(super) fn transpose64(a: &mut [u64; 64]) {
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
pub(super) struct PlaneCounts<'a> {
    /// Pairs whose first element has bit `p`.
    pub(super) a: &'a mut [u64; 64],
    /// Pairs whose second element has bit `p`.
    pub(super) b: &'a mut [u64; 64],
    /// Pairs whose two elements have bit `p`.
    pub(super) both: &'a mut [u64; 64],
}

/// Add to `counts` the bit pairs of `valid.len()` groups of 64 pairs: pair `i` of group `k`
/// is bit `i` of `first`'s group `k` and bit `i + shift` of `second`'s groups `k`, `k + 1`
/// read as one 128-bit word (`second` holds one group more than `valid`, `shift < 64`),
/// counted when bit `i` of `valid[k]` is set. `BITS` planes per group. Returns the number
/// of valid pairs.
#[inline(always)]
pub(super) fn count_plane_pairs<const BITS: usize>(
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
/// Never inlined (one call per tile): one baseline copy per width, not one more inside
/// the AVX2 build of `count_sliced`, where the arch twin counts.
#[inline(never)]
pub(super) fn count_plane_pairs_fallback<const BITS: usize>(
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
pub(super) fn block_pattern(pos: usize, n: usize, period: usize, pairs_per_block: usize) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::xorshift::xorshift64;

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
        let mut r = xorshift64(seed);
        for groups in [1usize, 2, 3, 7] {
            let codes: Vec<W> = (0..64 * groups).map(|_| W::from_u64(r())).collect();
            let masks: Vec<W> = (0..64 * groups)
                .map(|_| W::from_u64(if r().is_multiple_of(5) { 0 } else { u64::MAX }))
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
        let mut r = xorshift64(7);
        check::<8>(&mut r);
        check::<16>(&mut r);
        check::<32>(&mut r);
        check::<64>(&mut r);
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
}
