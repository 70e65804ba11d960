//! A user-declared OCP FP8 E4M3FN type agrees with the `float8` crate's `F8E4M3`.
//!
//! Run with `cargo test --features float8 --test it float8_interop::`.
//!
//! What `float8` 0.7 does (read from its source, `convert_to_fp8`, a port of CUDA's
//! `__nv_cvt_double_to_fp8` with `__NV_SATFINITE`), and so what is compared here:
//!
//! - decoding (`to_f32`, `to_f64`, via `f16`): exact for every finite code; both NaN codes
//!   (`0x7f`, `0xff`) give a NaN. Checked on all 256 codes, bit for bit apart from the NaN
//!   payload (any NaN equals any NaN, the conformance rule).
//! - encoding (`from_f32`/`from_f64`) rounds to nearest, ties to even, for finite
//!   `|x| <= 464` (464 is the midpoint between 448 and the missing 480, and ties to 448).
//!   Checked on every exact value, every midpoint and its f32 neighbours, and random f32.
//! - beyond 464 and for ±Inf it **saturates** to ±448 instead of failing. zquant's default
//!   (`out_of_range` absent) is an error; with `clamp` zquant also gives ±448 for finite
//!   values, but ±Inf stays an error (the spec's reading `inf-clamp`).
//! - NaN keeps its sign (`-NaN -> 0xff`); zquant writes the canonical `0x7f`. Both are NaN.

use float8::F8E4M3;
use zquant::{CastOptions, OutOfRange, Rounding, Status, cast};
use zquant::{DType, Real};

/// OCP FP8 E4M3FN, declared as a user crate would.
#[zquant::dtype(
    name = "float8_e4m3fn",
    float(exponent = 4, mantissa = 3, bias = 7, nan = "all_ones")
)]
pub struct Fp8(pub u8);

const NE: CastOptions = CastOptions::new(Rounding::NearestEven, OutOfRange::Error);
const NE_CLAMP: CastOptions = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);

fn ours_to_f32(code: u8) -> f32 {
    let (v, st): (f32, _) = cast(Fp8(code), NE);
    assert_eq!(st, Status::Exact, "{code:#04x} -> f32 is exact");
    v
}

fn ours_to_f64(code: u8) -> f64 {
    let (v, st): (f64, _) = cast(Fp8(code), NE);
    assert_eq!(st, Status::Exact, "{code:#04x} -> f64 is exact");
    v
}

/// Same value: equal bits, or both NaN.
fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same_code(a: u8, b: u8) -> bool {
    a == b || (a & 0x7f == 0x7f && b & 0x7f == 0x7f)
}

#[test]
fn layout_is_ocp_e4m3fn() {
    assert_eq!(Fp8::NAME, "float8_e4m3fn");
    assert_eq!(Fp8::SIZE, 1);
    assert_eq!(Fp8::BITS, 8);
    assert_eq!(ours_to_f64(0x7e), 448.0, "max finite");
    assert_eq!(ours_to_f64(0x78), 256.0, "no Inf at the IEEE place");
    assert_eq!(ours_to_f64(0x01), 2f64.powi(-9), "smallest subnormal");
    assert_eq!(ours_to_f64(0x08), 2f64.powi(-6), "smallest normal");
    assert!(ours_to_f64(0x7f).is_nan() && ours_to_f64(0xff).is_nan());
    let nans = (0..=255u8).filter(|&c| ours_to_f64(c).is_nan()).count();
    assert_eq!(nans, 2, "NaN only at S.1111.111");
    assert!((0..=255u8).all(|c| !ours_to_f64(c).is_infinite()));
}

#[test]
fn decode_every_code_matches() {
    let mut nans = 0;
    for code in 0..=255u8 {
        let theirs = F8E4M3::from_bits(code);
        let (t32, t64) = (theirs.to_f32(), theirs.to_f64());
        let (o32, o64) = (ours_to_f32(code), ours_to_f64(code));
        assert!(
            same32(o32, t32),
            "{code:#04x}: zquant {o32:e}, float8 {t32:e}"
        );
        assert!(
            o64.to_bits() == t64.to_bits() || (o64.is_nan() && t64.is_nan()),
            "{code:#04x}: zquant {o64:e}, float8 {t64:e}"
        );
        assert_eq!(Fp8(code).to_exact().to_f64().to_bits(), o64.to_bits());
        assert_eq!(t32.is_nan(), theirs.is_nan());
        if o32.is_nan() {
            nans += 1;
        } else {
            // Not just NaN-equal: the very same bits, -0.0 included.
            assert_eq!(o32.to_bits(), t32.to_bits(), "{code:#04x}");
        }
    }
    assert_eq!(nans, 2);
}

/// Every finite value encodes back to its own code, in both libraries, exactly.
#[test]
fn encode_exact_values() {
    for code in (0..=255u8).filter(|c| c & 0x7f != 0x7f) {
        let v = F8E4M3::from_bits(code).to_f32();
        assert_eq!(F8E4M3::from_f32(v).to_bits(), code, "float8: {v:e}");
        let (x, st): (Fp8, _) = cast(v, NE);
        assert_eq!((x.0, st), (code, Status::Exact), "zquant: {v:e}");
        let (x, st): (Fp8, _) = cast(v as f64, NE);
        assert_eq!((x.0, st), (code, Status::Exact), "zquant: {v:e} as f64");
    }
}

/// Compare one f32 input in the range where `float8` rounds correctly.
fn agree_in_range(x: f32) {
    assert!(x.is_finite() && x.abs() <= 464.0);
    let theirs = F8E4M3::from_f32(x).to_bits();
    let (ours, st): (Fp8, _) = cast(x, NE);
    assert!(!st.is_error(), "{x:e}: {st:?}");
    assert_eq!(ours.0, theirs, "{x:e} ({:#010x})", x.to_bits());
    // f64 entry point of both sides too.
    assert_eq!(F8E4M3::from_f64(x as f64).to_bits(), theirs);
}

/// Outside the finite range: `float8` saturates; zquant fails by default and saturates
/// with `clamp`, except for ±Inf.
fn agree_out_of_range(x: f32) {
    let theirs = F8E4M3::from_f32(x).to_bits();
    let (_, st): (Fp8, _) = cast(x, NE);
    if x.is_infinite() {
        assert_eq!(st, Status::InfUnrepresentable, "{x:e}");
        let (_, st): (Fp8, _) = cast(x, NE_CLAMP);
        assert_eq!(
            st,
            Status::InfUnrepresentable,
            "{x:e}: clamp does not map Inf"
        );
        assert_eq!(
            theirs,
            if x > 0.0 { 0x7e } else { 0xfe },
            "float8 saturates Inf"
        );
    } else {
        assert_eq!(st, Status::OutOfRange, "{x:e}");
        let (ours, st): (Fp8, _) = cast(x, NE_CLAMP);
        assert_eq!(st, Status::Clamped, "{x:e}");
        assert_eq!(ours.0, theirs, "{x:e}: clamp == float8's saturation");
    }
}

fn f32_neighbours(x: f32, k: u32) -> Vec<f32> {
    let b = x.to_bits();
    (1..=k)
        .flat_map(|i| [f32::from_bits(b + i), f32::from_bits(b.wrapping_sub(i))])
        .filter(|y| y.is_finite() && y.to_bits() >> 31 == b >> 31)
        .collect()
}

/// Every midpoint between adjacent values (ties), and the f32 values just around it.
#[test]
fn encode_midpoints_and_their_neighbours() {
    let positive: Vec<f32> = (0..0x7fu8).map(|c| F8E4M3::from_bits(c).to_f32()).collect();
    let mut mids: Vec<f32> = positive.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    // Between 448 and the missing 480 (the top of the range).
    mids.push(464.0);
    for m in mids {
        for sign in [1.0f32, -1.0] {
            let m = sign * m;
            agree_in_range(m);
            let (_, st): (Fp8, _) = cast(m, NE);
            assert_eq!(st, Status::Inexact, "{m:e} is a tie");
            for y in f32_neighbours(m, 3) {
                if y.abs() <= 464.0 {
                    agree_in_range(y);
                } else {
                    agree_out_of_range(y);
                }
            }
        }
    }
    // The ties, literally: to the even code.
    let code = |x: f32| cast::<f32, Fp8>(x, NE).0.0;
    assert_eq!(code(1.0625), 0x38); // 1.0 (mantissa 000) vs 1.125 (001)
    assert_eq!(code(1.1875), 0x3a); // 1.125 (001) vs 1.25 (010)
    assert_eq!(code(464.0), 0x7e); // 448 (110) vs 480 (111, the NaN code)
    assert_eq!(code(2f32.powi(-10)), 0x00); // 0 vs the smallest subnormal
    assert_eq!(code(-3.0 * 2f32.powi(-10)), 0x82); // subnormals 1 vs 2
}

#[test]
fn encode_random_f32() {
    // splitmix64
    let mut s = 0x5eed_u64;
    let mut next = move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let (mut inside, mut outside) = (0, 0);
    for i in 0..2_000_000u32 {
        let r = next();
        let x = if i % 2 == 0 {
            // Any bit pattern.
            f32::from_bits(r as u32)
        } else {
            // Concentrated on float8's range: exponents 2^-12 .. 2^9.
            let e = (127 - 12 + (r >> 32) % 22) as u32;
            f32::from_bits(((r as u32) & 0x807f_ffff) | (e << 23))
        };
        if x.is_nan() {
            let (ours, st): (Fp8, _) = cast(x, NE);
            assert_eq!(st, Status::Exact, "NaN to a type with NaN");
            assert!(same_code(ours.0, F8E4M3::from_f32(x).to_bits()));
        } else if x.abs() <= 464.0 {
            agree_in_range(x);
            inside += 1;
        } else {
            agree_out_of_range(x);
            outside += 1;
        }
    }
    assert!(inside > 900_000 && outside > 100_000, "{inside} {outside}");
}

#[test]
fn specials() {
    // Infinities and the saturation threshold.
    for x in [
        f32::INFINITY,
        f32::NEG_INFINITY,
        464.00003,
        465.0,
        -1e30,
        f32::MAX,
    ] {
        agree_out_of_range(x);
    }
    // Zeros and underflow keep their sign in both.
    for (x, code) in [
        (0.0f32, 0x00u8),
        (-0.0, 0x80),
        (1e-30, 0x00),
        (-1e-30, 0x80),
    ] {
        assert_eq!(F8E4M3::from_f32(x).to_bits(), code);
        assert_eq!(cast::<f32, Fp8>(x, NE).0.0, code, "{x:e}");
    }
    // NaN: float8 keeps the sign, zquant writes the canonical 0x7f; both are NaN.
    assert_eq!(F8E4M3::from_f32(-f32::NAN).to_bits(), 0xff);
    assert_eq!(cast::<f32, Fp8>(-f32::NAN, NE), (Fp8(0x7f), Status::Exact));
    assert!(Fp8(0xff).same_as(Fp8(0x7f)));
}
