//! `f32 -> f64`, and `f32`/`f64` to themselves (a cast in a chain, a `scalar_map` on a
//! float array): exact, so one kernel serves every rounding mode and every range rule.
//!
//! What the reference path gives (`float::round_to_float` after `float::decode_float`):
//! every finite and infinite value exactly (-0 stays -0, `f32` subnormals become normal
//! `f64`s, nothing rounds, nothing is out of range, so neither the mode nor the rule is
//! ever consulted), and every NaN, whatever its sign, payload or signalling bit, as the
//! target's canonical quiet NaN (`0x7fc0_0000`, `0x7ff8_0000_0000_0000`; the spec does not
//! require payloads to be kept). The kernels do exactly that, NaNs included, so they never
//! decline a block: NaN-heavy data (masked ocean grids, fill values) stays on them.
//!
//! `f32 -> f64` is the decode of the most common lossy store (float64 data stored as
//! float32): with AVX-512 it is `arch::f32_to_f64` (`vcvtps2pd`, a compare and a masked
//! move per 8 elements), streamed where the output is large; elsewhere the portable loops
//! below, built for AVX2 by `arch::vectorized`, streamed through L1 (`arch::through_l1`)
//! where the output is large.

use super::widen::by_blocks_streamed;
use crate::number::storage::{Word, Words, WordsMut};

/// `f32`'s canonical quiet NaN: the reference path's NaN in `float32`.
const NAN32: u32 = 0x7fc0_0000;
/// `f64`'s canonical quiet NaN.
const NAN64: u64 = 0x7ff8_0000_0000_0000;

/// The cast of `src` into `dst` (the shorter length) by word widths: `u32 -> u64` is
/// `f32 -> f64`, `u32 -> u32` and `u64 -> u64` the same type ([`super::select`] chooses
/// [`super::Fast::FloatFloat`] for those three only). Returns how many elements are done:
/// all of them (the kernels decline nothing), or 0 for other widths.
#[inline(never)]
pub(super) fn float_float(src: Words<'_>, dst: WordsMut<'_>) -> usize {
    match (src, dst) {
        (Words::U32(s), WordsMut::U64(d)) => run(s, d, crate::arch::f32_to_f64, widen_f32),
        (Words::U32(s), WordsMut::U32(d)) => run(s, d, crate::arch::same_f32, same_f32),
        (Words::U64(s), WordsMut::U64(d)) => run(s, d, crate::arch::same_f64, same_f64),
        _ => 0,
    }
}

/// `twin` (the AVX-512 kernel, which can stream) block by block where the CPU has it
/// (two read streams, see `by_blocks`), else `portable` built for AVX2 (through L1 and
/// streamed out when the output is large). Returns the elements done: all. The kernels
/// are passed as function items, not pointers, so that `portable` is inlined into the
/// AVX2 build.
#[inline(always)]
fn run<S: Word, D: Word>(
    src: &[S],
    dst: &mut [D],
    twin: impl Fn(&[S], &mut [D], bool) -> bool,
    portable: impl Fn(&[S], &mut [D]) + Copy,
) -> usize {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    if crate::arch::has_avx512() {
        return by_blocks_streamed(src, dst, twin);
    }
    crate::arch::through_l1(src, dst, |s, d| {
        crate::arch::vectorized(
            #[inline(always)]
            || portable(s, d),
        )
    });
    n
}

/// `f32` bits to `f64` bits: the hardware conversion, exact for every finite and infinite
/// value, and NaN (which it keeps with its payload, quieted) as [`NAN64`].
#[inline(always)]
pub(super) fn widen_f32(src: &[u32], dst: &mut [u64]) {
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let x = f64::from(f32::from_bits(*s));
        *d = if x.is_nan() { NAN64 } else { x.to_bits() };
    }
}

/// `f32` bits copied, NaN (an all-ones exponent and a non-zero fraction) as [`NAN32`].
#[inline(always)]
pub(super) fn same_f32(src: &[u32], dst: &mut [u32]) {
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = if *s & 0x7fff_ffff > 0x7f80_0000 {
            NAN32
        } else {
            *s
        };
    }
}

/// `f64` bits copied, NaN as [`NAN64`].
#[inline(always)]
pub(super) fn same_f64(src: &[u64], dst: &mut [u64]) {
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = if *s & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000 {
            NAN64
        } else {
            *s
        };
    }
}

#[cfg(test)]
mod tests {
    use crate::cast_slice;
    use crate::convert::cast_slice_reference;
    use crate::isa::{Isa, with_max_isa};
    use crate::number::{CastOptions, OutOfRange, Rounding};

    /// `f32` codes the kernels must get right: NaNs of both signs, quiet and signalling,
    /// with payloads; ±0; subnormals; ±Inf; the range ends.
    const SPECIAL32: [u32; 18] = [
        0x7fc0_0000,
        0xffc0_0000,
        0x7fc0_0001,
        0xffff_ffff,
        0x7fff_ffff,
        0x7f80_0001,
        0xff80_0001,
        0x7fa0_0000,
        0x0000_0000,
        0x8000_0000,
        0x0000_0001,
        0x807f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x0080_0000,
        0x8080_0000,
    ];

    /// The same for `f64`.
    const SPECIAL64: [u64; 16] = [
        0x7ff8_0000_0000_0000,
        0xfff8_0000_0000_0000,
        0x7ff8_0000_dead_beef,
        0xffff_ffff_ffff_ffff,
        0x7ff0_0000_0000_0001,
        0xfff4_0000_0000_0000,
        0x0000_0000_0000_0000,
        0x8000_0000_0000_0000,
        0x0000_0000_0000_0001,
        0x800f_ffff_ffff_ffff,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7fef_ffff_ffff_ffff,
        0xffef_ffff_ffff_ffff,
        0x0010_0000_0000_0000,
        0x3ff0_0000_0000_0001,
    ];

    /// `n` codes: random bits (any class, NaN one in 256 or so), the specials every 7th.
    fn codes<W: Copy>(n: usize, special: &[W], random: impl Fn(u64) -> W) -> Vec<W> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 7 == 3 {
                    special[(i / 7) % special.len()]
                } else {
                    random(x)
                }
            })
            .collect()
    }

    fn f32_codes(n: usize) -> Vec<f32> {
        codes(n, &SPECIAL32, |x| x as u32)
            .into_iter()
            .map(f32::from_bits)
            .collect()
    }

    fn f64_codes(n: usize) -> Vec<f64> {
        codes(n, &SPECIAL64, |x| x)
            .into_iter()
            .map(f64::from_bits)
            .collect()
    }

    /// `cast_slice` of `src[from..from + len]` into an output at offset `to`, at every
    /// level, every mode and every rule, the same as the reference path, bit for bit.
    fn every_level<S: crate::dtype::Real, D: crate::dtype::Real>(src: &[S], lens: &[usize]) {
        let offsets = [(0, 0), (1, 0), (0, 3), (5, 1), (3, 7)];
        let cuts: Vec<_> = lens
            .iter()
            .flat_map(|&len| offsets.map(|(from, to)| (from, to, len)))
            .collect();
        let rules = [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap];
        crate::convert::fast::check::every_level::<S, D>(src, &cuts, &Rounding::ALL, &rules);
    }

    const LENS: [usize; 16] = [
        0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 513, 1025, 4099,
    ];

    #[test]
    fn every_level_matches_the_reference() {
        let (a, b) = (f32_codes(4200), f64_codes(4200));
        every_level::<f32, f64>(&a, &LENS);
        every_level::<f32, f32>(&a, &LENS);
        every_level::<f64, f64>(&b, &LENS);
    }

    /// Every code's class at once: NaN-only blocks (a masked grid) and blocks with one NaN
    /// at each lane of a vector, so that no lane of the NaN replacement goes unchecked.
    #[test]
    fn nan_in_every_lane() {
        let nans = [0x7fc0_0000u32, 0xff80_0001, 0x7f80_0002, 0xffc1_2345];
        let mut a: Vec<f32> = (0..2048).map(|i| f32::from_bits(nans[i % 4])).collect();
        a.extend((0..64 * 17).map(|i| {
            if i % 17 == i / 64 {
                f32::from_bits(nans[i % 4])
            } else {
                i as f32 - 300.5
            }
        }));
        let b: Vec<f64> = a
            .iter()
            .map(|x| {
                if x.is_nan() {
                    f64::from_bits(0xfff0_0000_0000_0001 ^ (x.to_bits() as u64) << 20)
                } else {
                    f64::from(*x) * 1e300
                }
            })
            .collect();
        let lens = [16, 17, 64, 2048, a.len() - 8];
        every_level::<f32, f64>(&a, &lens);
        every_level::<f32, f32>(&a, &lens);
        every_level::<f64, f64>(&b, &lens);
    }

    /// The AVX-512 twins write what the portable loops write, plain and streamed (into a
    /// 64-byte aligned output, and an unaligned one, which they store plainly), at every
    /// tail length.
    #[test]
    fn twins_equal_portable() {
        if !crate::arch::has_avx512() {
            return;
        }
        let a: Vec<u32> = f32_codes(300).iter().map(|x| x.to_bits()).collect();
        let b: Vec<u64> = f64_codes(300).iter().map(|x| x.to_bits()).collect();
        #[repr(C, align(64))]
        struct Out([u64; 320]);
        #[repr(C, align(64))]
        struct Out32([u32; 320]);
        let (mut out, mut out32) = (Out([0; 320]), Out32([0; 320]));
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 31, 64, 255, 256, 259] {
            for (stream, to) in [(false, 0), (true, 0), (true, 3), (false, 5)] {
                let mut want = vec![0u64; len];
                super::widen_f32(&a[..len], &mut want);
                let d = &mut out.0[to..to + len];
                assert!(crate::arch::f32_to_f64(&a[..len], d, stream));
                crate::arch::stream_fence();
                assert_eq!(d, &want[..], "f32 -> f64 len {len} stream {stream} at {to}");

                super::same_f64(&b[..len], &mut want);
                let d = &mut out.0[to..to + len];
                assert!(crate::arch::same_f64(&b[..len], d, stream));
                crate::arch::stream_fence();
                assert_eq!(d, &want[..], "f64 -> f64 len {len} stream {stream} at {to}");

                let mut want = vec![0u32; len];
                super::same_f32(&a[..len], &mut want);
                let d = &mut out32.0[to..to + len];
                assert!(crate::arch::same_f32(&a[..len], d, stream));
                crate::arch::stream_fence();
                assert_eq!(d, &want[..], "f32 -> f32 len {len} stream {stream} at {to}");
            }
        }
    }

    /// Outputs large enough to stream (`arch::streams_from`: at least 16 MiB, more than
    /// 24 MiB with the input), from an aligned and an unaligned start, at every level: the
    /// reference path's bits.
    #[test]
    #[cfg_attr(miri, ignore = "large outputs")]
    fn streamed_outputs_match_the_reference() {
        use crate::arch::STREAM_MIN;
        let opts = CastOptions::default();
        let n = STREAM_MIN / 8 + 4099;
        let a = f32_codes(n + 8);
        let b = f64_codes(n + 8);
        let big = f32_codes(STREAM_MIN / 4 + 4099);
        fn check<S: crate::dtype::Real, D: crate::dtype::Real>(src: &[S], opts: CastOptions) {
            let mut want = vec![D::from_bits(0); src.len()];
            cast_slice_reference(src, &mut want, opts).expect("exact");
            let mut got = vec![D::from_bits(0); src.len() + 3];
            for level in Isa::available() {
                for (from, to) in [(0, 0), (1, 3)] {
                    let out = &mut got[to..to + src.len() - from];
                    with_max_isa(level, || cast_slice(&src[from..], out, opts)).expect("exact");
                    let first =
                        (0..out.len()).find(|&i| out[i].to_bits() != want[from + i].to_bits());
                    assert_eq!(
                        first,
                        None,
                        "{} -> {} {level:?} {from}/{to}",
                        S::NAME,
                        D::NAME
                    );
                }
            }
        }
        check::<f32, f64>(&a, opts);
        check::<f64, f64>(&b, opts);
        check::<f32, f32>(&big, opts);
    }
}
