//! The counters against the reference, and the word preparation against its definition.
//! The reference counter is the implementation before bit slicing: a byte-lane counter of
//! tiles of pairs, kept here only to test the counters against.

use crate::number::xorshift::xorshift64;
use num_traits::{PrimInt, WrappingAdd, WrappingSub};

use super::positional::{POS_SHARED_SPAN, count_positional};
use super::prepare::{Prepare, prepare_run};
use super::sliced::{SHARED_SPAN, SliceWord, count_sliced};
use super::statistics::PairCounts;
use super::{InformationOptions, signed_exponent};
use crate::number::storage::Word;

/// Words per row of a tile, and rows per tile: a tile's byte counters count at most
/// `ROWS` < 256 words each, so they cannot overflow.
const LANES: usize = 32;
const ROWS: usize = 128;
const TILE: usize = LANES * ROWS;

/// The reference count (the implementation before bit slicing), kept to test the
/// bit-sliced one against: count the pairs `(j, j + inner)` of every block of
/// `n × inner` words, tile by tile. Each element of a tile's span is prepared once ([`Prepare`]: the counted word and
/// its mask), the pairs' three words (`a`, `b`, `a & b`, masked pairs zeroed) are written
/// to tile buffers, and each buffer is counted by [`count_tile`]. When `inner` exceeds a
/// tile, the two halves of the pairs are prepared apart. Compiled once per word width,
/// without an AVX2 twin.
fn count_blocks_reference<W>(words: &[W], n: usize, inner: usize, prep: Prepare<W>) -> PairCounts
where
    W: Word + PrimInt + WrappingAdd + WrappingSub,
{
    // Not inside `arch::vectorized`: the reference's speed matters to no caller, its
    // build time to every build.
    let mut counts = PairCounts::new();
    if inner == 0 {
        return counts;
    }
    // Prepared words and masks of a tile's span (`TILE + inner` elements, or two
    // runs of `TILE`), and the three counted streams.
    let span = 2 * TILE.max(inner.min(TILE));
    let (mut code, mut mask) = (vec![W::zero(); span], vec![W::zero(); span]);
    // Up to 96 KiB: on the heap, not the stack.
    #[allow(clippy::useless_vec)]
    let mut streams = vec![W::zero(); 3 * TILE];
    let (ta, rest) = streams.split_at_mut(TILE);
    let (tb, tab) = rest.split_at_mut(TILE);
    let pairs = (n - 1) * inner;
    for block in words.chunks_exact(n * inner) {
        let mut t = 0;
        while t < pairs {
            let len = TILE.min(pairs - t);
            // Where the second element of pair `i` is in the prepared span.
            let off = if inner <= TILE {
                prepare_run(&prep, &block[t..t + len + inner], &mut code, &mut mask);
                inner
            } else {
                prepare_run(&prep, &block[t..t + len], &mut code, &mut mask);
                let (c, m) = (&mut code[TILE..], &mut mask[TILE..]);
                prepare_run(&prep, &block[t + inner..t + inner + len], c, m);
                TILE
            };
            counts.pairs += pair_words(&code, &mask, off, len, ta, tb, tab);
            // A last, partial row counts zeros after the pairs.
            let rows = len.next_multiple_of(LANES);
            for t in [&mut *ta, &mut *tb, &mut *tab] {
                t[len..rows].fill(W::zero());
            }
            count_tile(&ta[..rows], &mut counts.a);
            count_tile(&tb[..rows], &mut counts.b);
            count_tile(&tab[..rows], &mut counts.both);
            t += len;
        }
    }
    counts
}

/// The first `len` pairs `(i, i + off)` of the prepared span as the three counted words,
/// zero for a pair with a masked element; returns the number of unmasked pairs.
#[inline(always)]
fn pair_words<W>(
    code: &[W],
    mask: &[W],
    off: usize,
    len: usize,
    ta: &mut [W],
    tb: &mut [W],
    tab: &mut [W],
) -> u64
where
    W: Word + PrimInt,
{
    let (first, second) = (&code[..len], &code[off..off + len]);
    let (m1, m2) = (&mask[..len], &mask[off..off + len]);
    let mut valid = 0u64;
    // Runs of 255 pairs: a count in `W` lanes cannot overflow within one.
    for start in (0..len).step_by(255) {
        let end = (start + 255).min(len);
        let mut run = W::zero();
        for i in start..end {
            let m = m1[i] & m2[i];
            let (x, y) = (first[i] & m, second[i] & m);
            (ta[i], tb[i], tab[i]) = (x, y, x & y);
            run = run + (m & W::one());
        }
        valid += run.to_u64();
    }
    valid
}

/// Add to `totals[p]` how many of `words` (whole rows of [`LANES`], at most [`ROWS`] rows)
/// have bit `p`: for each shift `j < 8`, one byte counter per byte of each lane counts bit
/// `8k + j` (`(w >> j) & 0x0101…`), the lanes in registers, added up after the tile.
#[inline(always)]
fn count_tile<W>(words: &[W], totals: &mut [u64; 64])
where
    W: Word + PrimInt + WrappingAdd,
{
    let ones = W::from_u64(0x0101_0101_0101_0101);
    let bytes = (W::BITS / 8) as usize;
    for j in 0..8 {
        let mut acc = [W::zero(); LANES];
        let rows = words
            .chunks_exact(LANES)
            .filter_map(|r| <&[W; LANES]>::try_from(r).ok());
        for row in rows {
            for l in 0..LANES {
                // At most `ROWS` < 256 ones per byte: no carry between bytes.
                acc[l] = acc[l] + ((row[l] >> j) & ones);
            }
        }
        for s in acc {
            let v = s.to_u64();
            for k in 0..bytes {
                totals[8 * k + j] += (v >> (8 * k)) & 0xff;
            }
        }
    }
}

/// `Prepare` against `signed_exponent` and `FloatLayout::is_nan_bits`, the plain
/// definitions it folds into one formula: every code of every 8- and 16-bit float
/// type (all four NaN encodings), sampled codes of f32 and f64, and integers.
#[test]
fn prepare_is_the_signed_exponent_and_the_nan_mask() {
    use crate::dtype::{DTypeId, Kind};
    fn check<W: Word + PrimInt + WrappingAdd + WrappingSub>(id: DTypeId, codes: &[u64]) {
        let opts = InformationOptions::default();
        let p = Prepare::<W>::new(id.format().expect("real"), &opts);
        for &c in codes {
            let (word, mask) = p.apply(W::from_u64(c));
            let (want, nan) = match id.kind() {
                Kind::Float(l) if l.signed => (signed_exponent(&l, c), l.is_nan_bits(c)),
                _ => (c, false),
            };
            assert_eq!(word.to_u64(), want, "{id} {c:#x}");
            assert_eq!(mask == W::zero(), nan, "{id} {c:#x}");
            if p.in_place {
                let fast = p.apply_as::<true, true, true>(W::from_u64(c));
                assert!(fast == (word, mask), "in place {id} {c:#x}");
            }
        }
    }
    let mut next = xorshift64(0x9e37_79b9_7f4a_7c15);
    let mut sample = |bits: u32| -> Vec<u64> {
        (0..4096)
            .map(|_| {
                let x = next();
                x >> (64 - bits)
            })
            .collect()
    };
    for &id in DTypeId::ALL {
        if !id.is_real() {
            continue;
        }
        let bits = id.format().expect("real").bits();
        match id.word_bits() {
            8 => check::<u8>(id, &(0..1u64 << bits).collect::<Vec<_>>()),
            16 => check::<u16>(id, &(0..1u64 << bits).collect::<Vec<_>>()),
            32 => check::<u32>(id, &sample(32)),
            _ => check::<u64>(id, &sample(64)),
        }
    }
    // Specials of the wide IEEE types: zeros, subnormals, Inf and NaN payloads.
    let f32_specials = [
        0,
        1,
        0x007f_ffff,
        0x0080_0000,
        0x7f80_0000,
        0x7f80_0001,
        0xffc0_0000,
    ];
    check::<u32>(DTypeId::Float32, &f32_specials);
    let f64_specials = [0, 1, 0x7ff0_0000_0000_0000, 0x7ff0_0000_0000_0001, u64::MAX];
    check::<u64>(DTypeId::Float64, &f64_specials);
}

/// The bit-sliced and the positional counters, at every instruction-set level, against
/// the reference on random codes
/// of every real type (NaN, ±Inf, subnormals and zeros mixed in by raw bits, densely or
/// in a few places so that clean and masked tiles alternate), with and without a
/// masked code, over blocks of every shape class: `inner` of 1, below and above 64, not
/// a multiple of 64, beyond `SHARED_SPAN` and `POS_SHARED_SPAN`; blocks shorter and
/// longer than a tile; tiles and chunks whose ends fall anywhere.
#[test]
fn sliced_counts_equal_the_reference() {
    use crate::dtype::DTypeId;
    fn check<W: SliceWord + PrimInt + WrappingAdd + WrappingSub>(
        id: DTypeId,
        next: &mut impl FnMut() -> u64,
    ) {
        let format = id.format().expect("real");
        let shapes: &[(usize, usize, usize)] = &[
            (1, 2, 1),
            (3, 5, 1),
            (2, 100, 1),
            (1, 4097, 1),
            (1, 9000, 1),
            (7, 3, 2),
            (3, 10, 63),
            (2, 7, 64),
            (2, 5, 65),
            (1, 40, 129),
            (2, 3, 1800),
            (1, 3, 5000),
            (1, 2, SHARED_SPAN + 70),
            (5, 1, 7),
            // Blocks whose ends fall on a group's end.
            (3, 64, 1),
            (2, 128, 1),
            (4, 2, 32),
            (3, 65, 64),
            // The positional counter: blocks of at least `POS_MIN_PERIOD`, across and
            // within tiles; tiles of `4 · inner`; second elements prepared apart.
            (3, 513, 1),
            (9, 600, 1),
            (2, 4096, 1),
            (1, 12_000, 1),
            (4, 2, 300),
            (2, 3, 700),
            (1, 40, 700),
            (1, 4, 3600),
            (2, 3, 4095),
            (1, 3, POS_SHARED_SPAN),
            (2, 2, POS_SHARED_SPAN + 5),
            (1, 3, POS_SHARED_SPAN + 4099),
            // The fused AVX-512 counter (32- and 64-bit words): several of its tiles, block
            // ends inside them, `inner` below, at and past a vector's lanes, a multiple of
            // them or not, and tails left to the counter above.
            (3, 6000, 1),
            (1, 3000, 7),
            (1, 1100, 16),
            (2, 700, 37),
            (2, 16, 520),
            (1, 20, 1800),
            // Rings past 8 KiB (`q + 2` slots), blocks that end inside tiles.
            (4, 20, 1100),
            (4, 17, 2100),
        ];
        for &(blocks, n, inner) in shapes {
            for dense in [true, false] {
                let len = blocks * n * inner;
                let words: Vec<W> = (0..len)
                    .map(|i| {
                        let x = next();
                        // Specials often, or at a few places: exponent all ones or all
                        // zeros.
                        let kind = if dense {
                            x % 8
                        } else {
                            2 + u64::from(i % 5003 == 7)
                        };
                        let v = match kind {
                            0 => x | (u64::MAX >> 1 & !((1u64 << 52) - 1)),
                            1 => x & ((1u64 << 20) - 1),
                            3 => u64::MAX,
                            _ => x >> 7,
                        };
                        W::from_u64(v)
                    })
                    .collect();
                let masked = words.get(3).map(|&w| Word::to_u64(w));
                for masked_bits in [None, masked] {
                    for mask_nan in [true, false] {
                        let opts = InformationOptions {
                            mask_nan,
                            masked_bits,
                            ..Default::default()
                        };
                        let prep = Prepare::<W>::new(format, &opts);
                        let want = count_blocks_reference(&words, n, inner, prep);
                        let what = format!("{id} {blocks}x{n}x{inner} dense {dense} {opts:?}");
                        for level in crate::isa::Isa::available() {
                            crate::isa::with_max_isa(level, || {
                                let got = count_positional::<W>(&words, n, inner, prep);
                                assert_eq!(got, want, "positional {level:?} {what}");
                                if dense || len < 20_000 {
                                    let got = count_sliced(&words, n, inner, prep);
                                    assert_eq!(got, want, "sliced {level:?} {what}");
                                }
                            });
                        }
                    }
                }
            }
        }
    }
    let mut next = xorshift64(0x2545_f491_4f6c_dd1d);
    for &id in DTypeId::ALL {
        if !id.is_real() {
            continue;
        }
        match id.word_bits() {
            8 => check::<u8>(id, &mut next),
            16 => check::<u16>(id, &mut next),
            32 => check::<u32>(id, &mut next),
            _ => check::<u64>(id, &mut next),
        }
    }
}

#[test]
fn signed_exponent_matches_the_docstring() {
    let l = crate::number::layout::FLOAT32;
    // 10f0: "0 10000010 0100…" -> "0 00000011 0100…"
    assert_eq!(signed_exponent(&l, 10f32.to_bits() as u64), 0x01a0_0000);
    // xbitinfo's doctest: 0.03125 -> 0b0_10000101_000…
    assert_eq!(
        signed_exponent(&l, 0.03125f32.to_bits() as u64),
        0x4280_0000
    );
}

/// The band counter of far neighbours (`arch::pos_popcount_prepared_band_avx512`: long
/// rows, 32 pair rows at a time, column by column) against the
/// reference at every level, f32 and f64: rows a whole number of vectors or not (the last
/// column's overlapping lanes), one band or several with rows left after them, bands
/// across blocks' ends, starts off a vector's alignment, and a NaN or a masked code at a
/// band's edges (its first, last and following rows), in the last column's counted and
/// overlapped lanes, and in the last rows; NaN masked or not, and int32 words.
#[test]
fn band_counts_equal_the_reference() {
    use crate::dtype::DTypeId;
    fn check<W: SliceWord + PrimInt + WrappingAdd + WrappingSub>(
        id: DTypeId,
        next: &mut impl FnMut() -> u64,
    ) {
        let format = id.format().expect("real");
        let lanes = 512 / W::BITS as usize;
        let (nan, code) = if W::BITS == 32 {
            (0x7fc0_1234u64, 0x4049_0fdbu64)
        } else {
            (0x7ff8_0000_0000_1234, 0x4009_21fb_5444_2d18)
        };
        // (blocks, n, inner): rows a whole number of vectors, with a remainder, past
        // 16 KiB, of 8 KiB (a power of two: left to the ring); 33 rows (one band, no rows
        // after it), 70 (two, and rows after), bands across blocks of 23 and of 17 rows.
        let shapes: &[(usize, usize, usize)] = &[
            (1, 70, 1040),
            (1, 70, 2048),
            (1, 33, 2053),
            (3, 23, 2100),
            (4, 17, 1100),
            (2, 40, 4100),
            // Past `POS_SHARED_SPAN`: the rows after the band counted apart.
            (1, 35, POS_SHARED_SPAN + 9),
        ];
        for &(blocks, n, inner) in shapes {
            let rows = blocks * n;
            let len = rows * inner;
            let r = inner % lanes;
            // Words of ordinary floats (exponents near the bias) and a few zeros, none masked
            // but the planted ones.
            let base: Vec<W> = (0..len + 3)
                .map(|_| {
                    let x = next();
                    let v = if W::BITS == 32 {
                        (x & 0x807f_ffff) | (u64::from(0x7c + (x >> 40) as u8 % 8) << 23)
                    } else {
                        (x & 0x800f_ffff_ffff_ffff) | ((0x3fc + (x >> 20) % 8) << 52)
                    };
                    W::from_u64(if x.is_multiple_of(997) { 0 } else { v })
                })
                .collect();
            let cols = [
                0,
                1,
                lanes,
                inner - 1,
                inner - r,
                inner - r - 1,
                inner - lanes,
            ];
            let edges = [0, 1, 31, 32, 33, 64, rows - 2, rows - 1];
            let mut plants: Vec<Vec<(usize, u64)>> = vec![vec![]];
            for (k, &row) in edges.iter().enumerate() {
                for (m, &col) in cols.iter().enumerate() {
                    if row < rows && (k + m) % 2 == 0 {
                        let put = if m % 2 == 0 { nan } else { code };
                        plants.push(vec![(row * inner + col, put)]);
                    }
                }
            }
            for (p, plant) in plants.iter().enumerate() {
                let off = p % 3;
                let mut words = base[off..off + len].to_vec();
                for &(at, v) in plant {
                    words[at] = W::from_u64(v);
                }
                // Unaligned starts: the words at 0, 1 or 2 words past a vector's start.
                let mut store = vec![W::zero(); off];
                store.extend_from_slice(&words);
                let words = &store[off..];
                // The default options (their own kernel), a masked code, NaN not masked
                // (the two with the kernel of run-time switches).
                for (mask_nan, masked_bits) in [(true, None), (true, Some(code)), (false, None)] {
                    let opts = InformationOptions {
                        mask_nan,
                        masked_bits,
                        ..Default::default()
                    };
                    let prep = Prepare::<W>::new(format, &opts);
                    let want = count_blocks_reference(words, n, inner, prep);
                    for level in crate::isa::Isa::available() {
                        crate::isa::with_max_isa(level, || {
                            let got = count_positional::<W>(words, n, inner, prep);
                            assert_eq!(
                                got, want,
                                "{level:?} {id} {blocks}x{n}x{inner} {plant:x?} {opts:?}"
                            );
                        });
                    }
                }
            }
        }
    }
    let mut next = xorshift64(0x9e37_79b9_7f4a_7c15);
    check::<u32>(DTypeId::Float32, &mut next);
    check::<u64>(DTypeId::Float64, &mut next);
    check::<u32>(DTypeId::Int32, &mut next);
}

/// The fused AVX-512 preparation (the signed exponent as the field minus the bias, or its
/// complement below the bias) against the reference on every exponent of float32 and
/// float64, both signs, with mantissas zero, one, all ones and random, through each of its
/// loops: neighbours under a vector apart, the ring, and bands of rows; NaN masked or not,
/// and a masked code whose exponent is below the bias (which the preparation must zero).
#[test]
fn fused_preparation_on_every_exponent() {
    use crate::dtype::DTypeId;
    fn check<W: SliceWord + PrimInt + WrappingAdd + WrappingSub>(
        id: DTypeId,
        next: &mut impl FnMut() -> u64,
    ) {
        let format = id.format().expect("real");
        let (ebits, mbits) = if W::BITS == 32 { (8, 23) } else { (11, 52) };
        let mmask = (1u64 << mbits) - 1;
        let mut codes = Vec::new();
        for e in 0..1u64 << ebits {
            for s in [0, 1u64 << (W::BITS - 1)] {
                for m in [0, 1, mmask, next() & mmask] {
                    codes.push(s | (e << mbits) | m);
                }
            }
        }
        // (n, inner): neighbours one and five words apart, a ring of a few vectors, a band;
        // each past the fused kernel's tile.
        for (n, inner) in [(20_001, 1), (4001, 5), (300, 37), (40, 1100)] {
            let len = n * inner;
            // The codes in a shuffled order, repeated up to the length, one word off a
            // vector's alignment.
            let mut words: Vec<W> = vec![W::zero()];
            words.extend((0..len).map(|i| {
                let k = (i * 7919 + (next() as usize % 3)) % codes.len();
                W::from_u64(codes[k])
            }));
            let words = &words[1..];
            let below = W::from_u64(codes[(1 << ebits) - 9]);
            for (mask_nan, masked_bits) in [(true, None), (false, None), (true, Some(below))] {
                let opts = InformationOptions {
                    mask_nan,
                    masked_bits: masked_bits.map(Word::to_u64),
                    ..Default::default()
                };
                let prep = Prepare::<W>::new(format, &opts);
                let want = count_blocks_reference(words, n, inner, prep);
                for level in crate::isa::Isa::available() {
                    crate::isa::with_max_isa(level, || {
                        let got = count_positional::<W>(words, n, inner, prep);
                        assert_eq!(got, want, "{level:?} {id} {n}x{inner} {opts:?}");
                    });
                }
            }
        }
    }
    let mut next = xorshift64(0x3c6e_f372_fe94_f82b);
    check::<u32>(DTypeId::Float32, &mut next);
    check::<u64>(DTypeId::Float64, &mut next);
}
