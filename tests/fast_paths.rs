//! Every fast path of `cast_slice` is bit-identical to the reference path
//! (`cast_slice_reference`), and fails on the same first index with the same status, for
//! every pair of real types, every rounding mode and every out-of-range rule, on random bit
//! patterns mixed with values near integers, ties, specials and range limits.

use zquant::convert::{CastOptions, OutOfRange, Rounding, cast_slice, cast_slice_reference};
use zquant::dtype::*;
use zquant::{DType, Real};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Source codes: raw random bits, plus codes of values likely to hit rounding and range
/// boundaries of integer and float targets (converted with the reference path itself, so
/// they are valid codes of `S`).
fn sources<S: Real>(rng: &mut Rng, n: usize, clean: bool) -> Vec<S> {
    let specials = [
        0.0,
        -0.0,
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        127.5,
        128.0,
        255.5,
        256.0,
        -128.5,
        32767.5,
        65535.5,
        2147483647.5,
        4294967295.5,
        9.223372036854775807e18,
        1.8446744073709552e19,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        65504.0,
        65520.0,
        240.0,
        245.0,
        448.0,
        6.0,
        1e-8,
    ];
    (0..n)
        .map(|i| {
            let r = rng.next();
            if clean {
                // In-range values for every common target: fast paths take the block.
                let v = ((r % 20001) as f64 - 10000.0) / 100.0;
                return zquant::convert::cast::<f64, S>(v.abs().min(100.0), CastOptions::default())
                    .0;
            }
            match i % 4 {
                0 => S::from_bits(r),
                1 => {
                    let v = specials[(r % specials.len() as u64) as usize];
                    zquant::convert::cast::<f64, S>(
                        v,
                        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
                    )
                    .0
                }
                _ => {
                    let v = ((r % 2_000_001) as f64 - 1_000_000.0) / 8.0;
                    zquant::convert::cast::<f64, S>(
                        v,
                        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
                    )
                    .0
                }
            }
        })
        .collect()
}

fn check_pair<S: Real, D: Real>(rng: &mut Rng) {
    for clean in [false, true] {
        for &n in &[1usize, 7, 300, 2500] {
            let src = sources::<S>(rng, n, clean);
            for rounding in Rounding::ALL {
                for oor in [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap] {
                    let opts = CastOptions::new(rounding, oor);
                    let mut fast = vec![D::default(); n];
                    let mut reference = vec![D::default(); n];
                    let a = cast_slice(&src, &mut fast, opts);
                    let b = cast_slice_reference(&src, &mut reference, opts);
                    assert_eq!(
                        a,
                        b,
                        "{} -> {} {opts:?} n={n}: result differs",
                        S::NAME,
                        D::NAME
                    );
                    if b.is_ok() {
                        for i in 0..n {
                            assert!(
                                fast[i].to_bits() == reference[i].to_bits(),
                                "{} -> {} {opts:?}: element {i} ({:?}) fast {:#x} reference {:#x}",
                                S::NAME,
                                D::NAME,
                                src[i].to_exact(),
                                fast[i].to_bits(),
                                reference[i].to_bits()
                            );
                        }
                    }
                }
            }
        }
    }
}

macro_rules! for_targets {
    ($rng:ident, $s:ty; $($d:ty),*) => {
        $( check_pair::<$s, $d>(&mut $rng); )*
    };
}

macro_rules! all_pairs {
    ($rng:ident; $($s:ty),*) => {
        $(
            for_targets!($rng, $s; Int2, Int4, i8, i16, i32, i64, UInt2, UInt4, u8, u16, u32, u64,
                Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4, Float8E4M3,
                Float8E4M3B11Fnuz, Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz, Float8E8M0Fnu,
                half::bf16, half::f16, f32, f64);
        )*
    };
}

#[test]
fn fast_paths_match_reference_from_wide_sources() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    all_pairs!(rng; f64, f32, i64, u64, i32, u32);
}

#[test]
fn fast_paths_match_reference_from_narrow_sources() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    all_pairs!(rng; i16, u16, half::f16, half::bf16, i8, u8, Int4, UInt2, Float8E4M3, Float8E8M0Fnu, Float4E2M1Fn);
}

#[test]
fn sixteen_bit_table_path_matches_reference() {
    // Long enough for the 65536-entry table.
    let mut rng = Rng(7);
    let n = 1 << 18;
    let src: Vec<half::f16> = (0..n)
        .map(|_| half::f16::from_bits(rng.next() as u16))
        .collect();
    for oor in [OutOfRange::Error, OutOfRange::Clamp] {
        let opts = CastOptions::new(Rounding::TowardsNegative, oor);
        let mut a = vec![Float8E4M3::default(); n];
        let mut b = vec![Float8E4M3::default(); n];
        assert_eq!(
            cast_slice(&src, &mut a, opts),
            cast_slice_reference(&src, &mut b, opts)
        );
        if oor == OutOfRange::Clamp {
            assert_eq!(a, b);
        }
    }
}
