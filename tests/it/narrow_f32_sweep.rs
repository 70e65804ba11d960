//! `f32` into every smaller float format served by the nearest-even `f32` kernels
//! (`convert::narrow::from_f32`), on every bit pattern where rounding or range is decided:
//! in every binade of `f32` (exponent field 0, the subnormals, to 255, Inf and NaN
//! payloads), every value of the bits the target keeps, with the dropped bits 0, 1, just
//! below half, half (the ties), just above, and all ones; both signs. Under `clamp` and
//! under the error rule, the fast path equals the exact reference path, element by element
//! and in its result (the first failing element).
//!
//! The elements the kernels hand to the general one (NaN, ±Inf, overflow without `clamp`)
//! are checked in the full list; the list without them (which every block of the kernels
//! finishes itself) is checked again, so that a kernel's own result is what is compared.

use zquant::__private::cast_slice_reference;
use zquant::Real;
use zquant::dtype::*;
use zquant::{CastOptions, OutOfRange, Rounding, cast, cast_slice};

/// The `f32` patterns around `D`'s rounding points (see the module comment).
fn patterns<D: Real>() -> Vec<f32> {
    let zquant::dtype::Kind::Float(l) = D::KIND else {
        unreachable!("float targets only")
    };
    let dropped = 23 - l.mantissa_bits;
    let half = 1u32 << (dropped - 1);
    let low_max = (1u32 << dropped) - 1;
    let lows = [0, 1, half - 1, half, half + 1, low_max];
    let mut out = Vec::new();
    for exponent in 0..=255u32 {
        for kept in 0..1u32 << l.mantissa_bits {
            for low in lows {
                let bits = (exponent << 23) | (kept << dropped) | low;
                out.push(f32::from_bits(bits));
                out.push(f32::from_bits(bits | 1 << 31));
            }
        }
    }
    out
}

fn check<D: Real>() {
    let all = patterns::<D>();
    for oor in [OutOfRange::Error, OutOfRange::Clamp] {
        let opts = CastOptions::new(Rounding::NearestEven, oor);
        let mut fast = vec![D::default(); all.len()];
        let mut reference = vec![D::default(); all.len()];
        let a = cast_slice(&all, &mut fast, opts);
        assert_eq!(
            a,
            cast_slice_reference(&all, &mut reference, opts),
            "f32 -> {} {oor:?}: result",
            D::NAME
        );
        if a.is_ok() {
            assert!(
                fast.iter()
                    .zip(&reference)
                    .all(|(x, y)| x.to_bits() == y.to_bits())
            );
        }
        // Finite inputs without an error: no block goes to the general kernel.
        let (kept, expected): (Vec<f32>, Vec<D>) = all
            .iter()
            .filter(|x| x.is_finite())
            .map(|&x| (x, cast::<f32, D>(x, opts)))
            .filter(|(_, (_, st))| !st.is_error())
            .map(|(x, (y, _))| (x, y))
            .unzip();
        assert!(
            kept.len() * 2 > all.len(),
            "f32 -> {}: most inputs kept",
            D::NAME
        );
        let mut got = vec![D::default(); kept.len()];
        assert_eq!(cast_slice(&kept, &mut got, opts), Ok(()));
        let first_difference = (0..kept.len()).find(|&i| got[i].to_bits() != expected[i].to_bits());
        if let Some(i) = first_difference {
            panic!(
                "f32 {:#010x} -> {} {oor:?}: fast {:#x}, reference {:#x}",
                kept[i].to_bits(),
                D::NAME,
                got[i].to_bits(),
                expected[i].to_bits()
            );
        }
    }
}

#[test]
fn f32_narrowing_matches_reference_at_every_rounding_and_range_point() {
    for level in zquant::isa::Isa::available() {
        zquant::isa::with_max_isa(level, every_format);
    }
}

fn every_format() {
    check::<half::f16>();
    check::<half::bf16>();
    check::<Float4E2M1Fn>();
    check::<Float6E2M3Fn>();
    check::<Float6E3M2Fn>();
    check::<Float8E3M4>();
    check::<Float8E4M3>();
    check::<Float8E4M3B11Fnuz>();
    check::<Float8E4M3Fnuz>();
    check::<Float8E5M2>();
    check::<Float8E5M2Fnuz>();
}

/// `f32 -> bfloat16` (and two float8 formats) through `cast_slice` at every instruction-set level the machine has
/// (AVX-512 BF16's `vcvtne2ps2bf16` and the AVX-512 byte kernel where present), against the reference path: random
/// bits in every binade, blocks with and without subnormals (which the AVX-512 kernel
/// leaves to the portable one), NaN and Inf in some blocks, lengths that are not a
/// multiple of the vector width, unaligned starts.
#[test]
fn f32_to_bfloat16_and_float8_match_reference_at_every_isa_level() {
    random_blocks::<half::bf16>();
    random_blocks::<Float8E5M2>();
    random_blocks::<Float8E4M3Fnuz>();
}

fn random_blocks<D: Real>() {
    use zquant::isa::{Isa, with_max_isa};
    let mut state = 0xbf16_bf16_bf16_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 16) as u32
    };
    let mut src = Vec::new();
    for block in 0..40u32 {
        for _ in 0..1000 {
            let mut bits = next();
            if block % 4 != 0 && bits & 0x7f80_0000 == 0 {
                bits |= 0x0080_0000; // no subnormal in three blocks of four
            }
            if block % 8 != 1 && bits & 0x7f80_0000 == 0x7f80_0000 {
                bits &= 0xff7f_ffff; // no NaN or Inf in seven blocks of eight
            }
            src.push(f32::from_bits(bits));
        }
    }
    for oor in [OutOfRange::Clamp, OutOfRange::Error] {
        let opts = CastOptions::new(Rounding::NearestEven, oor);
        for (start, len) in [(0, src.len()), (1, 4095), (3, 31), (5, 1025), (7, 20_003)] {
            let s = &src[start..start + len];
            let mut reference = vec![D::default(); len];
            let expected = cast_slice_reference(s, &mut reference, opts);
            for level in Isa::available() {
                let mut got = vec![D::default(); len + 1];
                let result = with_max_isa(level, || cast_slice(s, &mut got[1..], opts));
                assert_eq!(
                    result, expected,
                    "{level:?} {oor:?} start {start} len {len}"
                );
                if result.is_ok() {
                    let first = (0..len).find(|&i| got[i + 1].to_bits() != reference[i].to_bits());
                    assert_eq!(first, None, "{} {level:?} {oor:?} {start} {len}", D::NAME);
                }
            }
        }
    }
}
