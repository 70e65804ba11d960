//! Integer to integer: a range check, a clamp or the low bits (wrap), in 32-bit lanes
//! when the source fits `i32`, with the out-of-range rule and the source's signedness as
//! const parameters.

use super::{OOR_CLAMP, OOR_ERROR, OOR_WRAP, Src};
use crate::convert::blocks::by_blocks;
use crate::number::layout::IntLayout;
use crate::number::storage::Word;
use crate::number::{CastOptions, OutOfRange};

/// The integer loop `$kernel` run block by block with the out-of-range rule `$oor` as a
/// const parameter: a range check (its comparisons and reduction) or a clamp is then only
/// compiled where it is asked for, and a wrap into a narrower word is the truncation LLVM
/// does in narrow lanes.
macro_rules! by_oor {
    ($oor:ident, $src:ident, $dst:ident, $kernel:ident, $signed:literal, $lo:ident, $hi:ident) => {
        match $oor {
            OutOfRange::Error => by_blocks(
                $src,
                $dst,
                #[inline(always)]
                |s, d| $kernel::<SW, DW, $signed, OOR_ERROR>(s, d, $lo, $hi),
            ),
            OutOfRange::Clamp => by_blocks(
                $src,
                $dst,
                #[inline(always)]
                |s, d| $kernel::<SW, DW, $signed, OOR_CLAMP>(s, d, $lo, $hi),
            ),
            OutOfRange::Wrap => by_blocks(
                $src,
                $dst,
                #[inline(always)]
                |s, d| $kernel::<SW, DW, $signed, OOR_WRAP>(s, d, $lo, $hi),
            ),
        }
    };
}

/// Integer to integer. When the source fits `i32` the loop runs in 32-bit lanes (8 per
/// AVX2 vector instead of 4); the out-of-range rule is a select, not a branch. The source's
/// signedness is a const parameter (it picks the shift that extends a code to its value).
///
/// 8-bit sources are declined (`0`): the [`Caster`](crate::convert::Caster) converts every
/// 8-bit source by its 256-entry table, so no loop is compiled for them.
#[inline(always)]
pub(super) fn int_to_int<SW: Src, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    sl: IntLayout,
    dl: IntLayout,
) -> usize {
    let oor = opts.out_of_range;
    // `select` picks this kernel only for sources that fill their words (`sl.bits` is
    // `SW::BITS`): the tests on `SW::BITS` are constants, so each source word compiles only
    // the loops its signedness can reach (the 32-bit lanes for 16-bit words and `int32`,
    // the 64-bit ones for `uint32`, `int64` and `uint64`).
    if const { SW::BITS == 8 } {
        0
    } else if const { SW::BITS < 32 } || (const { SW::BITS == 32 } && sl.signed) {
        // Every source value is an i32, so clamping to the target's range cut to i32 is
        // the same clamp, and the low bits (wrap) of an i32 are those of the value.
        let lo = dl.min().max(i32::MIN as i128) as i32;
        let hi = dl.max().min(i32::MAX as i128) as i32;
        let portable = move |(src, dst)| int_portable::<SW, DW>(src, dst, oor, sl, dl);
        if const { SW::BITS == 32 } || sl.signed {
            crate::arch::vectorized_or(
                (src, dst),
                #[inline(always)]
                move |(src, dst)| by_oor!(oor, src, dst, int_to_int_32, true, lo, hi),
                portable,
            )
        } else {
            crate::arch::vectorized_or(
                (src, dst),
                #[inline(always)]
                move |(src, dst)| by_oor!(oor, src, dst, int_to_int_32, false, lo, hi),
                portable,
            )
        }
    } else {
        // A source in 8 or 16 bits always fits i32: only 32- and 64-bit words have this path.
        SW::int_to_int_wide(src, dst, opts, sl, dl)
    }
}

/// [`int_to_int`] for sources beyond `i32` (`uint32`, `int64`, `uint64`), in 64-bit lanes,
/// built for AVX-512 too: its 64-bit compares into mask registers, `vpminsq`/`vpmaxsq` and
/// the narrowing `vpmovq*` stores are what these loops are made of (AVX2 has no 64-bit
/// `min` and narrows 64-bit lanes by shuffles).
#[inline(always)]
pub(super) fn int_to_int_wide<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    opts: CastOptions,
    sl: IntLayout,
    dl: IntLayout,
) -> usize {
    let oor = opts.out_of_range;
    let (lo, hi) = key_bounds::<SW>(sl, dl);
    let portable = move |(src, dst)| int_portable::<SW, DW>(src, dst, oor, sl, dl);
    // Only `uint32`, `int64` and `uint64` sources come here ([`int_to_int`]): the
    // signedness is a const parameter of the vector loops; any other layout takes the
    // baseline loop, which accepts all.
    if const { SW::BITS == 64 } {
        if sl.signed {
            crate::arch::vectorized_wide_or(
                (src, dst),
                #[inline(always)]
                move |(src, dst)| by_oor!(oor, src, dst, int_to_int_64, true, lo, hi),
                portable,
            )
        } else {
            crate::arch::vectorized_wide_or(
                (src, dst),
                #[inline(always)]
                move |(src, dst)| by_oor!(oor, src, dst, int_to_int_64, false, lo, hi),
                portable,
            )
        }
    } else if !sl.signed {
        crate::arch::vectorized_wide_or(
            (src, dst),
            #[inline(always)]
            move |(src, dst)| by_oor!(oor, src, dst, int_to_int_64, false, lo, hi),
            portable,
        )
    } else {
        portable((src, dst))
    }
}

/// The sign bit for `uint64` sources (`SW` of 64 bits, `signed` false), else 0: a value
/// `v` xor this, as `i64`, is its *key*, ordered as the values are (`uint64` values above
/// `i64::MAX` included), so that one signed compare and one signed clamp serve every
/// source.
#[inline(always)]
const fn key_flip<SW: Word>(signed: bool) -> u64 {
    if SW::BITS == 64 && !signed {
        1 << 63
    } else {
        0
    }
}

/// The target's range cut to the source's (every source value is in it exactly when it is
/// in the target's), as keys (see [`key_flip`]).
fn key_bounds<SW: Word>(sl: IntLayout, dl: IntLayout) -> (i64, i64) {
    let flip = key_flip::<SW>(sl.signed);
    let (smin, smax) = if flip != 0 {
        (0, i128::from(u64::MAX))
    } else {
        (i128::from(i64::MIN), i128::from(i64::MAX))
    };
    let key = |x: i128| ((x as u64) ^ flip) as i64;
    (key(dl.min().max(smin)), key(dl.max().min(smax)))
}

/// [`int_to_int`]'s and [`int_to_int_wide`]'s baseline (SSE2) twin on x86-64: one loop
/// per width pair, the out-of-range rule and the source's signedness tested per element
/// instead of six loops per width pair, in 64-bit lanes (SSE2 has neither 64-bit compares
/// nor a 32-bit `min`, so the vector loops gain little there). Accepts what they accept.
#[inline(never)]
fn int_portable<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    oor: OutOfRange,
    sl: IntLayout,
    dl: IntLayout,
) -> usize {
    // Values are compared as keys ([`key_flip`]): `uint64` ones above `i64::MAX` too.
    let flip = key_flip::<SW>(sl.signed);
    let (lo, hi) = key_bounds::<SW>(sl, dl);
    let sh = 64 - SW::BITS.min(64);
    by_blocks(src, dst, |src, dst| {
        for (s, d) in src.iter().zip(dst.iter_mut()) {
            let v = value_i64(s.to_u64(), sh, sl.signed) as u64;
            let k = (v ^ flip) as i64;
            let out = match oor {
                OutOfRange::Clamp => (k.clamp(lo, hi) as u64) ^ flip,
                OutOfRange::Wrap => v,
                OutOfRange::Error if lo <= k && k <= hi => v,
                OutOfRange::Error => return false,
            };
            // Targets fill their words: the truncation is the wrap.
            *d = DW::from_u64(out);
        }
        true
    })
}

#[inline(always)]
fn int_to_int_32<SW: Word, DW: Word, const SIGNED: bool, const OOR: u8>(
    src: &[SW],
    dst: &mut [DW],
    lo: i32,
    hi: i32,
) -> bool {
    // Sources and targets fill their words (see `select`): the shift that extends a code to
    // its value, and the truncation to the target word, are constants here.
    let sh = 32 - SW::BITS.min(32);
    let mut bad = false;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let v = value_i32(s.to_u64() as u32, sh, SIGNED);
        let in_range = (v >= lo) & (v <= hi);
        let out = if const { OOR == OOR_CLAMP } {
            v.clamp(lo, hi)
        } else {
            v
        };
        *d = DW::from_u64(out as i64 as u64);
        bad |= !in_range & (OOR == OOR_ERROR);
    }
    !bad
}

/// The 64-bit lanes' loop; `lo` and `hi` are keys ([`key_bounds`]).
#[inline(always)]
fn int_to_int_64<SW: Word, DW: Word, const SIGNED: bool, const OOR: u8>(
    src: &[SW],
    dst: &mut [DW],
    lo: i64,
    hi: i64,
) -> bool {
    // Sources and targets fill their words (see `select`): the shift that extends a code to
    // its value, the key's flip and the truncation to the target word are constants here.
    let sh = 64 - SW::BITS.min(64);
    let flip = const { key_flip::<SW>(SIGNED) };
    // A `uint64` source's lower bound is its own (0, the key `i64::MIN`): made a constant,
    // so that its compare and clamp fold away.
    let lo = if flip != 0 { i64::MIN } else { lo };
    let mut bad = false;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let v = value_i64(s.to_u64(), sh, SIGNED) as u64;
        let k = (v ^ flip) as i64;
        let in_range = (k >= lo) & (k <= hi);
        let out = if const { OOR == OOR_CLAMP } {
            (k.clamp(lo, hi) as u64) ^ flip
        } else {
            v
        };
        *d = DW::from_u64(out);
        bad |= !in_range & (OOR == OOR_ERROR);
    }
    !bad
}

/// The value of an integer code of `32 - sh` bits held in the low bits of `w` (bits above
/// it ignored), sign-extended when `signed`.
#[inline(always)]
pub(super) fn value_i32(w: u32, sh: u32, signed: bool) -> i32 {
    let up = w << sh;
    if signed {
        (up as i32) >> sh
    } else {
        (up >> sh) as i32
    }
}

/// [`value_i32`] in 64 bits (an unsigned 64-bit value above `i64::MAX` wraps: callers
/// compare `uint64` values as keys, see [`key_flip`]).
#[inline(always)]
pub(super) fn value_i64(w: u64, sh: u32, signed: bool) -> i64 {
    let up = w << sh;
    if signed {
        (up as i64) >> sh
    } else {
        (up >> sh) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::level::{Isa, with_max_isa};
    use crate::convert::reference_words;
    use crate::number::Rounding;
    use crate::number::layout::Format;
    use crate::number::xorshift::xorshift64;

    /// Every level's kernel (the baseline twin included) against the reference path, from
    /// every source width and signedness into every target width, each rule, on odd lengths
    /// from unaligned starts: mostly small values with some anywhere; values in the
    /// target's range only, its bounds included (every rule must do all of them); and each
    /// edge (every integer type's bounds and their neighbours, 2^63 and its neighbours,
    /// `u64::MAX`) alone in a short block of those (done exactly when the reference does it).
    fn check<SW: Src, DW: Word>() {
        let mut next = xorshift64(0x2545_f491_4f6c_dd1d);
        let mixed: Vec<SW> = (0..1301)
            .map(|i| {
                let x = next();
                // Mostly small values (in every target's range), some anywhere.
                SW::from_u64(if i % 5 == 0 { x } else { x % 100 })
            })
            .collect();
        let word_mask = u64::MAX >> (64 - SW::BITS);
        let mut edges: Vec<i128> = vec![0, 1, -1, 1 << 63, (1 << 63) - 1, (1 << 64) - 1];
        for bits in [8, 16, 32, 64] {
            for signed in [false, true] {
                let l = IntLayout { bits, signed };
                edges.extend([l.min(), l.max(), l.min() - 1, l.max() + 1]);
            }
        }
        for isa in Isa::available() {
            for signed in [false, true] {
                for dsigned in [false, true] {
                    let (sl, dl) = (
                        IntLayout {
                            bits: SW::BITS,
                            signed,
                        },
                        IntLayout {
                            bits: DW::BITS,
                            signed: dsigned,
                        },
                    );
                    // Values in both ranges, the bounds among them.
                    let (lo, hi) = (sl.min().max(dl.min()), sl.max().min(dl.max()));
                    let mut next = xorshift64(0x9e37_79b9_7f4a_7c15);
                    let in_range = |n: usize, next: &mut dyn FnMut() -> u64| -> Vec<SW> {
                        (0..n)
                            .map(|i| {
                                let v = match i % 11 {
                                    0 => lo,
                                    1 => hi,
                                    2 => lo + (next() % 7) as i128,
                                    3 => hi - (next() % 7) as i128,
                                    _ => lo + (next() as i128 % (hi - lo + 1)),
                                };
                                SW::from_u64(v as u64 & word_mask)
                            })
                            .collect()
                    };
                    let mut cases = vec![(false, mixed.clone()), (true, in_range(1301, &mut next))];
                    for &e in &edges {
                        let mut block = in_range(38, &mut next);
                        block[20] = SW::from_u64(e as u64 & word_mask);
                        cases.push((true, block));
                    }
                    for (exact, words) in &cases {
                        let src = &words[1..];
                        for oor in [OutOfRange::Clamp, OutOfRange::Wrap, OutOfRange::Error] {
                            let opts = CastOptions::new(Rounding::NearestEven, oor);
                            let mut got = vec![DW::from_u64(0); src.len()];
                            let done =
                                with_max_isa(isa, || int_to_int(src, &mut got, opts, sl, dl));
                            let mut want = vec![DW::from_u64(0); src.len()];
                            let all = reference_words(
                                src,
                                &mut want,
                                Format::Int(sl),
                                Format::Int(dl),
                                opts,
                                None,
                            );
                            let ok = reference_words(
                                &src[..done],
                                &mut want[..done],
                                Format::Int(sl),
                                Format::Int(dl),
                                opts,
                                None,
                            );
                            let ctx = format!("{isa:?} {sl:?} -> {dl:?} {oor:?}");
                            assert!(ok.is_ok(), "{ctx}: accepted a failing element");
                            assert!(got[..done] == want[..done], "{ctx}");
                            if oor != OutOfRange::Error || (*exact && all.is_ok()) {
                                assert_eq!(done, src.len(), "{ctx}");
                            }
                            if *exact && all.is_err() {
                                assert_eq!(done, 0, "{ctx}: one block, failing");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_level_matches_the_reference() {
        macro_rules! targets {
            ($($s:ty),*) => {$(
                check::<$s, u8>();
                check::<$s, u16>();
                check::<$s, u32>();
                check::<$s, u64>();
            )*};
        }
        // 8-bit sources go by the `Caster`'s table: the kernel declines them.
        let mut out = [0u8; 3];
        let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Wrap);
        let l8 = IntLayout {
            bits: 8,
            signed: true,
        };
        assert_eq!(int_to_int(&[1u8, 2, 3], &mut out, opts, l8, l8), 0);
        targets!(u16, u32, u64);
    }
}
