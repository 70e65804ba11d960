//! Every fast path of `cast_slice` is bit-identical to the reference path
//! (`cast_slice_reference`), and fails on the same first index with the same status, for
//! every pair of real types, every rounding mode and every out-of-range rule, on random bit
//! patterns mixed with values near integers, ties, specials and range limits.

use zquant::__private::cast_slice_reference;
use zquant::Real;
use zquant::dtype::*;
use zquant::{CastOptions, OutOfRange, Rounding, Status, cast_slice};

use crate::common::XorShift as Rng;

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
        9.223_372_036_854_776e18,
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
        // Neighbours of ties: `0.5 - 2^-54` rounds to 0 in every nearest mode (a kernel
        // adding one half, not the `f64` below it, gives 1 for nearest-away).
        0.499_999_999_999_999_94,
        -0.499_999_999_999_999_94,
        2.500_000_000_000_000_4,
        2.499_999_999_999_999_6,
        -2.500_000_000_000_000_4,
    ];
    (0..n)
        .map(|i| {
            let r = rng.next();
            if clean {
                // In-range values for every common target: fast paths take the block.
                let v = ((r % 20001) as f64 - 10000.0) / 100.0;
                return zquant::cast::<f64, S>(v.abs().min(100.0), CastOptions::default()).0;
            }
            match i % 4 {
                0 => S::from_bits(r),
                1 => {
                    let v = specials[(r % specials.len() as u64) as usize];
                    zquant::cast::<f64, S>(
                        v,
                        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
                    )
                    .0
                }
                _ => {
                    let v = ((r % 2_000_001) as f64 - 1_000_000.0) / 8.0;
                    zquant::cast::<f64, S>(
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

/// `check_pair::<$s, D>` for every built-in real type `D` (the `int` and `float` rows of
/// zquant's data-type table, in table order).
macro_rules! for_targets {
    (($rng:ident, $s:ty) $($kind:ident $variant:ident = $d:ty,)*) => {
        $( for_targets!(@row $rng, $s, $kind $d); )*
    };
    (@row $rng:ident, $s:ty, int $d:ty) => {
        check_pair::<$s, $d>(&mut $rng);
    };
    (@row $rng:ident, $s:ty, float $d:ty) => {
        check_pair::<$s, $d>(&mut $rng);
    };
    (@row $rng:ident, $s:ty, complex $d:ty) => {};
    (@row $rng:ident, $s:ty, time $d:ty) => {};
}

macro_rules! all_pairs {
    ($rng:ident; $($s:ty),*) => {
        $(
            zquant::__zquant_dtype_table!(for_targets($rng, $s));
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

/// The bit-arithmetic narrowing of `f32`/`f64` into smaller float formats, on the inputs
/// where rounding is decided: every code of the target, the midpoint between it and the next
/// code, and the source values one ulp either side of both, with both signs, under every
/// rounding mode. The inputs the fast path hands to the reference path (overflow, specials
/// without a code, negative zero in `fnuz`) are filtered out first, so that every block runs
/// the fast kernel; the unfiltered list is checked as well.
fn check_narrowing<S: Real, D: Real>(codes: impl Iterator<Item = u64>) {
    let zquant::dtype::Kind::Float(l) = D::KIND else {
        unreachable!("float targets only")
    };
    let exact = CastOptions::default();
    let mut inputs: Vec<S> = Vec::new();
    for c in codes {
        let v: f64 = zquant::cast::<D, f64>(D::from_bits(c), exact).0;
        let w: f64 = zquant::cast::<D, f64>(D::from_bits(c + 1), exact).0;
        let mut points = vec![v];
        if v.is_finite() && w.is_finite() && w > v {
            points.push(v + (w - v) / 2.0);
        }
        for p in points {
            if !p.is_finite() {
                continue;
            }
            let (x, st) = zquant::cast::<f64, S>(p, exact);
            assert_eq!(st, Status::Exact, "{p} is exact in {}", S::NAME);
            let bits = x.to_bits();
            for b in [bits.wrapping_sub(1), bits, bits + 1] {
                let y = S::from_bits(b);
                inputs.push(y);
                inputs.push(S::from_bits(b | (1 << (S::BITS - 1))));
            }
        }
    }
    for rounding in Rounding::ALL {
        for oor in [OutOfRange::Error, OutOfRange::Clamp] {
            let opts = CastOptions::new(rounding, oor);
            let n = inputs.len();
            let mut reference = vec![D::default(); n];
            let mut fast = vec![D::default(); n];
            assert_eq!(
                cast_slice(&inputs, &mut fast, opts),
                cast_slice_reference(&inputs, &mut reference, opts),
                "{} -> {} {opts:?}",
                S::NAME,
                D::NAME
            );
            // Per element, keep what the fast kernel accepts.
            let mut kept = Vec::new();
            let mut expected = Vec::new();
            for x in &inputs {
                let (y, st) = zquant::cast::<S, D>(*x, opts);
                let mag = y.to_bits() & l.magnitude_mask();
                let negative = y.to_bits() & l.sign_bit() != 0 || x.to_bits() >> (S::BITS - 1) != 0;
                let finite_in = zquant::cast::<S, f64>(*x, exact).0.is_finite();
                if st.is_error()
                    || !finite_in
                    || mag > l.max_finite_bits()
                    || (negative && mag == 0 && !l.has_negative_zero())
                {
                    continue;
                }
                kept.push(*x);
                expected.push(y);
            }
            assert!(
                kept.len() * 2 > n,
                "{} -> {}: most inputs are ordinary",
                S::NAME,
                D::NAME
            );
            let mut got = vec![D::default(); kept.len()];
            assert_eq!(cast_slice(&kept, &mut got, opts), Ok(()));
            for i in 0..kept.len() {
                assert!(
                    got[i].to_bits() == expected[i].to_bits(),
                    "{} {:#x} -> {} {opts:?}: fast {:#x}, reference {:#x}",
                    S::NAME,
                    kept[i].to_bits(),
                    D::NAME,
                    got[i].to_bits(),
                    expected[i].to_bits()
                );
            }
        }
    }
}

fn narrow_codes<D: Real>() -> impl Iterator<Item = u64> {
    let zquant::dtype::Kind::Float(l) = D::KIND else {
        unreachable!("float targets only")
    };
    // Non-negative magnitudes (the sign is added by `check_narrowing`).
    0..=l.magnitude_mask()
}

#[test]
fn narrowing_is_exact_at_every_rounding_boundary() {
    macro_rules! targets {
        ($s:ty; $($d:ty),*) => {
            $( check_narrowing::<$s, $d>(narrow_codes::<$d>()); )*
        };
    }
    targets!(f32; half::f16, half::bf16, Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4,
        Float8E4M3, Float8E4M3B11Fnuz, Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz);
    targets!(f64; half::f16, half::bf16, Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4,
        Float8E4M3, Float8E4M3B11Fnuz, Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz);
    // f64 -> f32 (the kernel serves the rounding modes other than nearest-even): every
    // 2^13-th finite code of f32.
    check_narrowing::<f64, f32>((0..(1u64 << 31) - (1 << 23)).step_by(1 << 13));
}

/// `scale_offset`'s decode of 8- and 16-bit integers (`x / scale + offset`, the division
/// exact), whose kernel checks the quotient in 16-bit lanes: on blocks of 64 consecutive
/// codes (most of them not divisible) and of 64 consecutive multiples of the scale (all
/// divisible, some sums out of range), every code of the type, for scales and offsets at
/// the ends of the range. A block's result equals the exact reference, or its error is the
/// reference's first failing element — a kernel accepting a failing element would show.
fn check_small_int_decode<T: Real>(signed: bool) {
    use crate::codecs::{int_of, int_range, ref_int_decode};
    use zquant::{ArrayCodec, ScaleOffset};
    let bits = T::BITS;
    let range = int_range(bits, signed);
    let (lo, hi) = range;
    let scales = [
        1i128, 2, 3, 7, 12, 64, 100, 127, 255, 256, 1000, 32767, 40000, 65535, -1, -2, -3, -7, -96,
        -128, -32767, -32768,
    ];
    let offsets = [0i128, 1, -1, 100, -3000, lo, hi, lo + 1, hi - 1];
    let all: Vec<i128> = (lo..=hi).collect();
    for &s in scales.iter().filter(|&&s| s >= lo && s <= hi && s != 0) {
        let multiples: Vec<i128> = all.iter().copied().filter(|x| x % s == 0).collect();
        for &o in offsets.iter().filter(|&&o| o >= lo && o <= hi) {
            let code = |v: i128| T::from_bits(v as u64 & ((1u128 << bits) - 1) as u64);
            let c = ScaleOffset::<T>::new(code(o), code(s)).unwrap();
            for values in [&all, &multiples] {
                for block in values.chunks(64) {
                    let xs: Vec<T> = block.iter().map(|&v| code(v)).collect();
                    let want: Vec<Option<i128>> = block
                        .iter()
                        .map(|&x| ref_int_decode(x, o, s, range))
                        .collect();
                    let mut out = vec![T::default(); xs.len()];
                    let got = c.decode_slice(&xs, &mut out);
                    let what = format!("{} {block:?} / {s} + {o}", T::NAME);
                    match want.iter().position(Option::is_none) {
                        None => {
                            assert!(got.is_ok(), "{what}");
                            for (g, w) in out.iter().zip(&want) {
                                assert_eq!(Some(int_of(g.to_bits(), bits, signed)), *w, "{what}");
                            }
                        }
                        Some(i) => assert_eq!(got.map_err(|e| e.index), Err(i), "{what}"),
                    }
                }
            }
        }
    }
}

#[test]
fn small_int_scale_offset_decode_matches_reference() {
    check_small_int_decode::<i16>(true);
    check_small_int_decode::<u16>(false);
    check_small_int_decode::<i8>(true);
    check_small_int_decode::<u8>(false);
}

/// `f64` into the small float formats, where a conversion through `f32` would round twice:
/// every midpoint between neighbouring codes of the target (and every code), moved by a
/// random number of `f64` ulps below `f32`'s last bit, both ways, and the `f64` values
/// outside `f32`'s range or below its subnormals. In blocks of 1024 (the kernel's), under
/// every rounding mode and range rule: the fast result (and first failure) equals the
/// reference's. (A kernel through `f32` rounded to odd was tried against it: exact for
/// float16 and the float8/6/4 formats, not for bfloat16 — `2^130` towards zero — and not
/// faster; see docs/performance.md.)
#[test]
fn f64_narrowing_near_double_rounding_points_matches_reference() {
    fn check<D: Real>(rng: &mut Rng) {
        let zquant::dtype::Kind::Float(l) = D::KIND else {
            unreachable!("float targets only")
        };
        let exact = CastOptions::default();
        let value = |c: u64| zquant::cast::<D, f64>(D::from_bits(c), exact).0;
        let mut xs: Vec<f64> = Vec::new();
        for c in 0..l.magnitude_mask() {
            let (v, w) = (value(c), value(c + 1));
            if !v.is_finite() || !w.is_finite() || w <= v {
                continue;
            }
            for p in [v, v + (w - v) / 2.0] {
                for _ in 0..2 {
                    // 1 .. 2^29 ulps of f64: below f32's last bit for a normal f32.
                    let k = 1 + rng.next() % ((1 << 29) - 1);
                    for b in [p.to_bits().wrapping_sub(k), p.to_bits() + k] {
                        let x = f64::from_bits(b);
                        xs.extend([x, -x]);
                    }
                }
            }
        }
        let extremes = [
            1e-300,
            1e-45,
            1.0e-40,
            f64::from(f32::MAX) * (1.0 + 1e-12),
            f64::from(f32::MAX) * (1.0 - 1e-12),
            1e39,
            1e300,
            f64::MIN_POSITIVE,
            0.0,
            f64::INFINITY,
            f64::NAN,
        ];
        xs.extend(extremes.iter().flat_map(|&x| [x, -x]));
        for rounding in Rounding::ALL {
            for oor in [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap] {
                let opts = CastOptions::new(rounding, oor);
                for block in xs.chunks(1024) {
                    let mut fast = vec![D::default(); block.len()];
                    let mut reference = vec![D::default(); block.len()];
                    let got = cast_slice(block, &mut fast, opts);
                    let want = cast_slice_reference(block, &mut reference, opts);
                    assert_eq!(got, want, "f64 -> {} {opts:?}", D::NAME);
                    if want.is_ok() {
                        for (i, (g, w)) in fast.iter().zip(&reference).enumerate() {
                            assert_eq!(
                                g.to_bits(),
                                w.to_bits(),
                                "f64 {:e} -> {} {opts:?}",
                                block[i],
                                D::NAME
                            );
                        }
                    }
                }
            }
        }
    }
    let mut rng = Rng(0x0dd);
    check::<half::f16>(&mut rng);
    check::<half::bf16>(&mut rng);
    check::<Float8E4M3>(&mut rng);
    check::<Float8E5M2>(&mut rng);
    check::<Float8E4M3Fnuz>(&mut rng);
    check::<Float6E3M2Fn>(&mut rng);
    check::<Float4E2M1Fn>(&mut rng);
}

/// float16 from `f32` and `f64` by the hardware conversion (F16C, where the CPU has it) and
/// its rounding to odd through `f32`: random bit patterns (every exponent, NaN payloads,
/// ±Inf, subnormals of both), values in float16's range with random low bits, and values
/// one `f64` ulp from float16's ties, at every slice length around the kernel's 8 lanes and
/// 1024-element blocks and at an unaligned start, against the reference, under nearest-even
/// with each range rule.
#[test]
fn float16_from_f32_and_f64_matches_reference() {
    fn check<S: Real>(xs: &[S]) {
        for oor in [OutOfRange::Error, OutOfRange::Clamp] {
            let opts = CastOptions::new(Rounding::NearestEven, oor);
            for len in [0, 1, 7, 8, 9, 15, 17, 1023, 1024, 1025, 2049, xs.len() - 1] {
                let src = &xs[1..=len];
                let mut fast = vec![half::f16::ZERO; len];
                let mut reference = vec![half::f16::ZERO; len];
                let got = cast_slice(src, &mut fast, opts);
                assert_eq!(got, cast_slice_reference(src, &mut reference, opts));
                if got.is_ok() {
                    for (i, (g, w)) in fast.iter().zip(&reference).enumerate() {
                        assert_eq!(
                            g.to_bits(),
                            w.to_bits(),
                            "{} {:#x} -> float16 {oor:?}",
                            S::NAME,
                            src[i].to_bits()
                        );
                    }
                }
            }
        }
    }
    let mut rng = Rng(0xf16c);
    let n = 1 << 16;
    // Random bits, then finite values within float16's range only (so that whole blocks
    // pass the hardware kernel), then values near ties.
    let bits32: Vec<f32> = (0..n).map(|_| f32::from_bits(rng.next() as u32)).collect();
    let in_range32: Vec<f32> = (0..n)
        .map(|_| {
            let e = rng.next() % 60; // 2^-45 .. 2^15
            let x = f32::from_bits((rng.next() as u32) & 0x007f_ffff | ((82 + e as u32) << 23));
            if rng.next() & 1 == 0 { x } else { -x }
        })
        .collect();
    check(&bits32);
    check(&in_range32);
    let bits64: Vec<f64> = (0..n).map(|_| f64::from_bits(rng.next())).collect();
    let in_range64: Vec<f64> = (0..n)
        .map(|_| {
            let e = rng.next() % 200; // 2^-184 .. 2^15
            let m = rng.next() & ((1 << 52) - 1);
            let x = f64::from_bits(m | ((839 + e) << 52));
            if rng.next() & 1 == 0 { x } else { -x }
        })
        .collect();
    let near_ties: Vec<f64> = (0..n)
        .map(|_| {
            // A float16 midpoint (11 significant bits and a half), moved by 0 or ±1 ulp.
            let code = rng.next() % 0x7bff;
            let lo = f64::from(half::f16::from_bits(code as u16));
            let hi = f64::from(half::f16::from_bits(code as u16 + 1));
            let mid = (lo + hi) / 2.0;
            let b = mid.to_bits();
            let x = f64::from_bits(match rng.next() % 3 {
                0 => b,
                1 => b + 1,
                _ => b - 1,
            });
            if rng.next() & 1 == 0 { x } else { -x }
        })
        .collect();
    check(&bits64);
    check(&in_range64);
    check(&near_ties);
    // The overflow threshold (65520, the midpoint above the largest finite 65504, which
    // ties to Inf) and its neighbours, in blocks of ordinary values.
    let edge = |x: f64| {
        let mut v: Vec<f64> = (0..3000).map(|i| f64::from(i) * 0.37 - 500.0).collect();
        for k in [0, 700, 1500, 2999] {
            v[k] = x;
        }
        v
    };
    let t = 65520.0f64;
    for x in [
        t,
        f64::from_bits(t.to_bits() - 1),
        f64::from_bits(t.to_bits() + 1),
        65504.0,
    ] {
        for x in [x, -x] {
            check(&edge(x));
            #[allow(clippy::cast_possible_truncation)]
            let v32: Vec<f32> = edge(x).iter().map(|&v| v as f32).collect();
            check(&v32);
            check(
                &edge(x)
                    .iter()
                    .map(|&v| f64::from(v as f32))
                    .collect::<Vec<_>>(),
            );
        }
    }
    let t32 = 65520.0f32;
    for x in [
        f32::from_bits(t32.to_bits() - 1),
        f32::from_bits(t32.to_bits() + 1),
    ] {
        #[allow(clippy::cast_possible_truncation)]
        let v32: Vec<f32> = edge(x.into()).iter().map(|&v| v as f32).collect();
        check(&v32);
    }
}

/// `numcodecs.fixedscaleoffset`'s encode of `f64` into integers narrower than 64 bits
/// against the rule written out here: `rint((x - offset) * scale)` in `f64`, then x86's
/// `cvttsd2si` into 32 bits ("integer indefinite" `-2^31` for NaN, ±Inf and values outside
/// `[-2^31, 2^31)`), then the target's low bits — on values around every limit (the
/// target's and `i32`'s), specials and random bits.
#[test]
fn fixedscaleoffset_encode_matches_the_x86_cast() {
    use zquant::ArrayCodec;
    use zquant::{FixedScaleOffset, NumpyNumber, PyNumber};
    fn expected(m: f64) -> u32 {
        if m.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&m) {
            0x8000_0000
        } else {
            m as i32 as u32
        }
    }
    fn check<T: Real + NumpyNumber>(xs: &[f64], offset: f64, scale: f64, low: impl Fn(u32) -> T) {
        let c = FixedScaleOffset::<f64, T>::new(PyNumber::Float(offset), PyNumber::Float(scale))
            .expect("codec");
        let mut got = vec![T::default(); xs.len()];
        c.encode_slice(xs, &mut got).expect("encode never fails");
        for (x, g) in xs.iter().zip(&got) {
            let want = low(expected(((x - offset) * scale).round_ties_even()));
            assert!(
                g.to_bits() == want.to_bits(),
                "{x:e} -> {}: {:#x}, want {:#x}",
                T::NAME,
                g.to_bits(),
                want.to_bits()
            );
        }
    }
    let mut rng = Rng(0xf50);
    let mut xs: Vec<f64> = Vec::new();
    for limit in [
        0.0,
        127.0,
        128.0,
        255.0,
        256.0,
        32767.0,
        65536.0,
        2_147_483_647.0,
        2_147_483_648.0,
    ] {
        for d in [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0] {
            xs.extend([limit + d, -(limit + d)]);
        }
    }
    xs.extend([
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        -1e300,
        4e9,
        -4e9,
        0.0,
        -0.0,
    ]);
    xs.extend((0..4096).map(|_| f64::from_bits(rng.next())));
    xs.extend((0..4096).map(|_| (rng.next() as i64 as f64) / 2f64.powi((rng.next() % 40) as i32)));
    for (offset, scale) in [(0.0, 1.0), (0.5, 1.0), (-3.25, 10.0), (1e9, 0.5)] {
        check::<u8>(&xs, offset, scale, |v| v as u8);
        check::<i8>(&xs, offset, scale, |v| v as i8);
        check::<u16>(&xs, offset, scale, |v| v as u16);
        check::<i16>(&xs, offset, scale, |v| v as i16);
        check::<i32>(&xs, offset, scale, |v| v as i32);
    }
}

/// float16 to `f32` and `f64` (by F16C where the CPU has it): every code, in order and in
/// a shuffled order (so that NaNs are spread over many blocks), at every tail length around
/// the 8 lanes, against the reference.
#[test]
fn float16_widening_matches_reference_for_every_code() {
    fn check<D: Real>(xs: &[half::f16]) {
        let opts = CastOptions::default();
        for len in [xs.len(), 1, 7, 9, 1023, 1025] {
            let src = &xs[xs.len() - len..];
            let mut fast = vec![D::default(); len];
            let mut reference = vec![D::default(); len];
            assert_eq!(
                cast_slice(src, &mut fast, opts),
                cast_slice_reference(src, &mut reference, opts)
            );
            for (i, (g, w)) in fast.iter().zip(&reference).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "float16 {:#x}", src[i].to_bits());
            }
        }
    }
    let mut all: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).collect();
    check::<f32>(&all);
    check::<f64>(&all);
    let mut rng = Rng(0x16f);
    for i in (1..all.len()).rev() {
        all.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    check::<f32>(&all);
    check::<f64>(&all);
    // Without NaNs every block goes through the fast kernel.
    all.retain(|h| !h.is_nan());
    check::<f32>(&all);
}

/// `int32 -> float32` with an output of 16 MiB or more is streamed out (non-temporal
/// stores, `zquant::arch`): the same bits as the reference path, at every output offset.
#[test]
fn large_int32_to_float32_matches_reference() {
    let mut rng = Rng(0x1327);
    let n = (16 << 20) / 4 + 77;
    let mut src: Vec<i32> = (0..n).map(|_| rng.next() as i32).collect();
    src[..4].copy_from_slice(&[i32::MIN, i32::MAX, (1 << 24) + 1, -(1 << 25) - 3]);
    let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Error);
    let mut reference = vec![0f32; n];
    cast_slice_reference(&src, &mut reference, opts).expect("every int32 is a float32");
    let mut out = vec![0f32; n];
    for start in [0, 1, 5] {
        let dst = &mut out[start..];
        cast_slice(&src[start..], dst, opts).expect("every int32 is a float32");
        let mut pairs = dst.iter().zip(&reference[start..]);
        assert!(
            pairs.all(|(a, b)| a.to_bits() == b.to_bits()),
            "start {start}"
        );
    }
}

/// float16 -> `f32` with an output of 16 MiB or more, and more than 24 MiB with its input,
/// is streamed out from its first 32-byte boundary on: the same bits as the reference path, at every output offset, with NaN
/// blocks (redone by the reference path) among streamed ones.
#[test]
fn large_float16_widening_matches_reference() {
    let codes: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).collect();
    let opts = CastOptions::default();
    let mut table = vec![0f32; codes.len()];
    cast_slice_reference(&codes, &mut table, opts).expect("every float16 is an f32");
    let mut rng = Rng(0x5f16);
    let n = (24 << 20) / 4 + 45;
    // Mostly non-NaN codes, one NaN in about 2,000 elements: about half the 1024-element
    // blocks are streamed, the others redone by the reference path.
    let src: Vec<half::f16> = (0..n)
        .map(|_| {
            let r = rng.next();
            let h = half::f16::from_bits(r as u16);
            if h.is_nan() && !r.is_multiple_of(64) {
                half::f16::from_bits(r as u16 & 0x3fff)
            } else {
                h
            }
        })
        .collect();
    let mut out = vec![0f32; n];
    for start in [0, 1, 3, 6] {
        let dst = &mut out[start..];
        cast_slice(&src[start..], dst, opts).expect("every float16 is an f32");
        for (i, (g, s)) in dst.iter().zip(&src[start..]).enumerate() {
            let w = table[usize::from(s.to_bits())];
            assert_eq!(g.to_bits(), w.to_bits(), "start {start}, element {i}");
        }
    }
}

/// `numcodecs.fixedscaleoffset` decode from one byte per element, from 4096 elements on,
/// runs by a 256-entry table of decoded codes (streamed out when the output holds 16 MiB or more and
/// more than 24 MiB with its input):
/// every element as decoded alone, for float and integer `dtype`s.
#[test]
fn fixedscaleoffset_byte_decode_matches_one_by_one() {
    use zquant::{FixedScaleOffset, NumpyNumber, PyNumber};
    fn check<S: NumpyNumber, D: NumpyNumber + Copy>(codes: &[D], offset: f64, scale: f64) {
        let c = FixedScaleOffset::<S, D>::new(PyNumber::Float(offset), PyNumber::Float(scale))
            .expect("valid");
        let mut out = vec![S::default(); codes.len()];
        zquant::ArrayCodec::decode_slice(&c, codes, &mut out).expect("decodes");
        for (i, (o, &y)) in out.iter().zip(codes).enumerate() {
            assert_eq!(o.to_bits(), c.decode_one(y).to_bits(), "element {i}");
        }
    }
    let mut rng = Rng(0xf50);
    for n in [4096 + 3, (24 << 20) / 8 + 5] {
        let u: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        let i: Vec<i8> = u.iter().map(|&b| b as i8).collect();
        check::<f64, u8>(&u, 1000.0, 10.0);
        check::<f64, i8>(&i, -3.5, 0.3);
        check::<f32, u8>(&u, 2.0, 7.0);
        check::<i32, u8>(&u, 100.0, 3.0);
        check::<i16, i8>(&i, -7.0, 0.5);
    }
}

/// Positions of rare elements around the two-stream windows of the fast paths' block loop
/// (windows of 256 KiB of the wider side, each run as its two halves in steps of 1 KiB):
/// each alone, and in pairs where the later one sits in a first half (met after the
/// earlier one, which sits in a second half, when the halves alternate).
fn window_positions(wide: usize, n: usize) -> Vec<Vec<usize>> {
    let (window, step) = ((256 << 10) / wide, 1024 / wide);
    let half = window / 2;
    let singles = [
        0,
        5,
        half - 1,
        half,
        half + 3,
        window - 1,
        window + 7 * step + 2,
        window + half + 2 * step,
        2 * window + half - step,
        n - 1,
    ];
    let mut sets: Vec<Vec<usize>> = singles.iter().map(|&p| vec![p]).collect();
    sets.push(vec![half + 3, 9 * step]);
    sets.push(vec![window + half, window + 2 * step + 1]);
    sets.push(vec![half - 1, half + step, window + 1]);
    sets
}

/// Casts long enough for the two-stream block loop: the same result as the reference
/// path (the same first failing element, or the same bits) wherever the elements the fast
/// paths decline (NaN, ±Inf, out of range) sit relative to the windows, streams and steps.
#[test]
fn two_stream_blocks_match_reference() {
    fn check<S: Real, D: Real>(rare: &[f64]) {
        let wide = size_of::<S>().max(size_of::<D>());
        let n = 3 * (256 << 10) / wide + 999;
        let mut rng = Rng(0x2_5742);
        let clean = sources::<S>(&mut rng, n, true);
        let of = |v: f64| {
            zquant::cast::<f64, S>(
                v,
                CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
            )
            .0
        };
        for (k, set) in window_positions(wide, n).into_iter().enumerate() {
            let mut src = clean.clone();
            for (j, &p) in set.iter().enumerate() {
                src[p] = of(rare[(k + j) % rare.len()]);
            }
            for oor in [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap] {
                let opts = CastOptions::new(Rounding::NearestEven, oor);
                let mut fast = vec![D::default(); n];
                let mut reference = vec![D::default(); n];
                let a = cast_slice(&src, &mut fast, opts);
                let b = cast_slice_reference(&src, &mut reference, opts);
                let what = format!("{} -> {} {oor:?}, rare at {set:?}", S::NAME, D::NAME);
                assert_eq!(a, b, "{what}");
                if b.is_ok() {
                    let same = fast.iter().zip(&reference);
                    assert!(
                        same.into_iter().all(|(f, r)| f.to_bits() == r.to_bits()),
                        "{what}"
                    );
                }
            }
        }
    }
    let rare = [f64::NAN, 1e300, -7.5, f64::INFINITY, 70000.0];
    check::<f64, u8>(&rare);
    check::<f64, i32>(&rare);
    check::<f64, f32>(&rare);
    check::<f64, half::f16>(&rare);
    check::<f32, u8>(&rare);
    check::<f32, half::bf16>(&rare);
    check::<f32, half::f16>(&rare);
    check::<i16, u8>(&[-300.0, 1000.0, 256.0]);
    check::<half::f16, f32>(&[f64::NAN, f64::INFINITY]);
}
