//! Rounding boundaries and random values from wide sources, against the exact reference in
//! `tests/it/common/reference.rs`.
//!
//! Sources: `float64` and `float32` into every narrower float type and every integer type;
//! `int64`/`uint64`/`int32`/`uint32` into every type. For each target the inputs are the
//! source values nearest to every rounding boundary of the target (each representable value
//! and each midpoint between neighbours, exactly when the source can hold it, and one and two
//! source ulps around; the grid point past the largest finite value and the midpoint before
//! it; the region of the smallest subnormal), the sources' own specials, then random values:
//! a quarter random bit patterns, the rest uniform between two random neighbours of the
//! target. Every input is checked under all 5 rounding modes and 3 out-of-range rules,
//! through `cast` and `cast_slice`.
//!
//! Random samples per target: `ZQUANT_SAMPLES` (default 4000 in the default tests). The full
//! run, at least 10^6 random samples per (source, target) pair, is the ignored tests:
//!
//! ```sh
//! ZQUANT_SAMPLES=1000000 cargo test --release --test it convert_boundaries -- --ignored
//! ```
//!
//! (the ignored tests default to 1000000 when `ZQUANT_SAMPLES` is unset; `ZQUANT_SEED`
//! changes the random seed.)

use crate::common::check::{Pair, Report, check_codes, format_of, pair};
use crate::common::reference::{Format, Mag, Target, Val, format};
use crate::common::types::{Visit, for_each_real};
use crate::common::{Rng, samples, seed};
use half::{bf16, f16};
use zquant::dtype::{Float8E4M3, Float8E8M0Fnu};
use zquant::{CastOptions, OutOfRange, Real, Rounding, Status};
use zquant::{cast, cast_slice};

const DEFAULT_SAMPLES: usize = 4000;
const FULL_SAMPLES: usize = 1_000_000;

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------

/// The non-negative target codes whose boundaries are checked: all of them for formats of at
/// most 16 bits; for wider ones the low and high ends and every binade edge.
fn target_codes(t: &Format) -> Vec<u64> {
    let max = t.max_code();
    match *t {
        _ if t.bits() <= 16 => (0..=max).collect(),
        Format::Float(f) => {
            let mut v: Vec<u64> = (0..=2048).chain(max - 2048..=max).collect();
            for ef in 0..(1u64 << f.exp) - 1 {
                let base = ef << f.man;
                v.extend(base.saturating_sub(3)..=(base + 3).min(max));
            }
            v
        }
        Format::Int { .. } => {
            let mut v: Vec<u64> = (0..=300).collect();
            for j in 1..t.bits() {
                let p = 1u64 << j;
                v.extend(p.saturating_sub(3)..=(p + 3).min(max));
            }
            v.extend(max - 3..=max);
            v
        }
    }
}

/// The boundary magnitudes of target `t`: representable values, midpoints, and the
/// extended-grid points around the finite range.
fn boundary_points(t: &Target) -> Vec<Mag> {
    let f = &t.fmt;
    let max = f.max_code();
    let mut pts = Vec::new();
    for c in target_codes(f) {
        let lo = t.pos_value(c);
        let hi = if c == max {
            t.beyond()
        } else {
            t.pos_value(c + 1)
        };
        pts.push(lo);
        pts.push(lo.add(&hi).half());
    }
    let beyond = t.beyond();
    pts.push(beyond);
    pts.push(beyond.add(&beyond.half()));
    pts.push(beyond.add(&beyond));
    if let Format::Int { bits, signed } = *f {
        // Past the negative end: |min| + 1/2, |min| + 1.
        if signed {
            let m = Mag::int(1u128 << (bits - 1));
            pts.push(m.add(&Mag::new(1, -1)));
            pts.push(m.add(&Mag::int(1)));
        }
        pts.push(Mag::new(1, -1));
        pts.push(Mag::new(1, -2));
    } else {
        // Around the smallest positive value: a quarter, a half and 3/4 of it.
        let min = if t.pos_value(0).is_zero() {
            t.pos_value(1)
        } else {
            t.pos_value(0)
        };
        pts.push(min.half().half());
        pts.push(min.half());
        pts.push(min.half().add(&min.half().half()));
    }
    pts
}

/// The source codes nearest to `p` (and to `-p`): the largest source value `<= p`, the one
/// below it and the two above it.
fn neighbours(s: &Target, p: &Mag, out: &mut Vec<u64>) {
    let f = &s.fmt;
    let max = f.max_code();
    let c = s.floor_code(p).unwrap_or(0);
    let lo = c.saturating_sub(1);
    let hi = c.saturating_add(2).min(max);
    for k in lo..=hi {
        out.push(k);
        if let Some(n) = f.negate(k) {
            out.push(n);
        }
    }
    if let Format::Int { signed: true, .. } = f {
        out.push(f.min_code());
    }
}

/// The source's own specials: zeros, infinities, NaNs, extremes.
fn source_specials(s: &Format, out: &mut Vec<u64>) {
    let max = s.max_code();
    out.extend([0, 1, 2, max, max - 1]);
    out.extend([0, 1, 2, max, max - 1].iter().filter_map(|c| s.negate(*c)));
    out.push(s.min_code());
    if let Format::Float(f) = s {
        let sign = s.sign_bit();
        let inf = s.inf_code().unwrap();
        let quiet = 1u64 << (f.man - 1);
        for c in [inf, inf | 1, inf | quiet, inf | quiet | 1, s.mask() >> 1] {
            out.push(c);
            out.push(c | sign);
        }
    }
}

/// Every boundary input for target `t` from source `s`.
fn boundary_inputs(s: &Target, t: &Target) -> Vec<u64> {
    let mut out = Vec::new();
    for p in boundary_points(t) {
        neighbours(s, &p, &mut out);
    }
    source_specials(&s.fmt, &mut out);
    out.sort_unstable();
    out.dedup();
    out
}

/// `n` random inputs for target `t` from source `s`.
fn random_inputs(s: &Target, t: &Target, n: usize, rng: &mut Rng) -> Vec<u64> {
    let (sf, tf) = (&s.fmt, &t.fmt);
    let (smax, tmax) = (sf.max_code(), tf.max_code());
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let r = rng.next_u64();
        if r.is_multiple_of(4) {
            // Any bit pattern.
            out.push(rng.next_u64() & sf.mask());
            continue;
        }
        // Between two neighbours of the target: uniform over the source codes there.
        let (lo, hi) = match *tf {
            Format::Float(_) => {
                let c = match r % 64 {
                    // Now and then the ends of the range.
                    1 => rng.range(0, 16.min(tmax)),
                    2 => rng.range(tmax.saturating_sub(16), tmax),
                    _ => rng.range(0, tmax),
                };
                let lo = t.pos_value(c);
                let hi = if c == tmax {
                    t.beyond().add(&t.beyond())
                } else {
                    t.pos_value(c + 1)
                };
                (lo, hi)
            }
            Format::Int { bits, .. } => {
                let k = if r.is_multiple_of(2) {
                    rng.range(0, tmax.saturating_add(2))
                } else {
                    let j = rng.range(0, bits as u64 + 1) as u32;
                    rng.next_u64() >> (64 - j.clamp(1, 64))
                };
                let k = Mag::int(k as u128);
                (k, k.add(&Mag::int(1)))
            }
        };
        let a = s.floor_code(&lo).unwrap_or(0);
        let b = s.floor_code(&hi).unwrap_or(0).min(smax);
        let c = rng.range(a.min(b), b);
        let c = if rng.coin() {
            sf.negate(c).unwrap_or(c)
        } else {
            c
        };
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Drivers
// ---------------------------------------------------------------------------------------

/// The pair `S -> D` for a wide source `S` named `src`.
fn wide_pair<D: Real>(src: &str) -> Pair {
    match src {
        "float64" => pair::<f64, D>(),
        "float32" => pair::<f32, D>(),
        "int64" => pair::<i64, D>(),
        "uint64" => pair::<u64, D>(),
        "int32" => pair::<i32, D>(),
        "uint32" => pair::<u32, D>(),
        _ => unreachable!("{src}"),
    }
}

struct Run {
    src: &'static str,
    boundaries: bool,
    random: usize,
    rng: Rng,
    report: Report,
    pairs: usize,
}

impl Visit for Run {
    fn visit<D: Real>(&mut self) {
        let tf = format_of::<D>();
        let sf = format(self.src);
        // Float sources: narrower float targets and every integer target.
        if sf.is_float() && tf.is_float() && tf.bits() >= sf.bits() {
            return;
        }
        let s = Target::new(self.src);
        let t = Target::new(D::NAME);
        let p = wide_pair::<D>(self.src);
        self.pairs += 1;
        if self.boundaries {
            let codes = boundary_inputs(&s, &t);
            check_codes(&p, &codes, &mut self.report);
        }
        // In chunks, to bound memory for 10^6 samples.
        let mut left = self.random;
        while left > 0 {
            let n = left.min(1 << 16);
            let codes = random_inputs(&s, &t, n, &mut self.rng);
            check_codes(&p, &codes, &mut self.report);
            left -= n;
        }
    }
}

fn run(src: &'static str, boundaries: bool, random: usize) {
    let mut r = Run {
        src,
        boundaries,
        random,
        rng: Rng::new(seed() ^ src.len() as u64 ^ (src.as_bytes()[0] as u64) << 8),
        report: Report::default(),
        pairs: 0,
    };
    for_each_real(&mut r);
    assert!(r.pairs >= 12, "{src}: only {} targets", r.pairs);
    r.report.finish(&format!(
        "{src} -> narrower types ({} random samples per target)",
        random
    ));
}

#[test]
fn float64_boundaries_and_samples() {
    run("float64", true, samples(DEFAULT_SAMPLES));
}

#[test]
fn float32_boundaries_and_samples() {
    run("float32", true, samples(DEFAULT_SAMPLES));
}

#[test]
fn int64_uint64_boundaries_and_samples() {
    run("int64", true, samples(DEFAULT_SAMPLES));
    run("uint64", true, samples(DEFAULT_SAMPLES));
}

#[test]
fn int32_uint32_boundaries_and_samples() {
    run("int32", true, samples(DEFAULT_SAMPLES));
    run("uint32", true, samples(DEFAULT_SAMPLES));
}

#[test]
#[ignore = "long: ZQUANT_SAMPLES=1000000 cargo test --release --test it convert_boundaries -- --ignored"]
fn float64_full_random() {
    run("float64", false, samples(FULL_SAMPLES));
}

#[test]
#[ignore = "long: ZQUANT_SAMPLES=1000000 cargo test --release --test it convert_boundaries -- --ignored"]
fn float32_full_random() {
    run("float32", false, samples(FULL_SAMPLES));
}

#[test]
#[ignore = "long: ZQUANT_SAMPLES=1000000 cargo test --release --test it convert_boundaries -- --ignored"]
fn int64_uint64_full_random() {
    run("int64", false, samples(FULL_SAMPLES));
    run("uint64", false, samples(FULL_SAMPLES));
}

// ---------------------------------------------------------------------------------------
// Named cases
// ---------------------------------------------------------------------------------------

const NE: CastOptions = CastOptions::new(Rounding::NearestEven, OutOfRange::Error);

/// `1 + 2^-a + 2^-40` as an f64, built from its bits.
fn one_plus(a: u32) -> f64 {
    f64::from_bits(0x3ff0_0000_0000_0000 | (1u64 << (52 - a)) | (1u64 << (52 - 40)))
}

/// The reference's nearest-even result of an `f64` into the type named `to` (inexact).
fn reference_ne(x: f64, to: &str) -> u64 {
    let v = format("float64").decode(x.to_bits());
    let e = Target::new(to).expect(&v, NE);
    assert_eq!(e.status, Status::Inexact);
    e.code
}

/// float16: `1 + 2^-11 + 2^-40` is just above the midpoint between 1 and `1 + 2^-10`, so it
/// rounds up to 0x3c01. Through float32 it first becomes the midpoint `1 + 2^-11`, which
/// then rounds to even, 0x3c00.
#[test]
fn double_rounding_float16() {
    let x = one_plus(11);
    assert_eq!(reference_ne(x, "float16"), 0x3c01);
    let (d, st) = cast::<f64, f16>(x, NE);
    assert_eq!((d.to_bits(), st), (0x3c01, Status::Inexact));
    // Twice: f64 -> f32 -> f16 (each step correctly rounded) is wrong.
    let (mid, _) = cast::<f64, f32>(x, NE);
    assert_eq!(mid.to_bits(), 0x3f80_1000); // exactly 1 + 2^-11
    let (twice, _) = cast::<f32, f16>(mid, NE);
    assert_eq!(twice.to_bits(), 0x3c00);
    // The common library path does the same.
    assert_eq!(f16::from_f32(x as f32).to_bits(), 0x3c00);
}

/// bfloat16: `1 + 2^-8 + 2^-40` -> 0x3f81; through float32 (`1 + 2^-8`, a tie) -> 0x3f80.
#[test]
fn double_rounding_bfloat16() {
    let x = one_plus(8);
    assert_eq!(reference_ne(x, "bfloat16"), 0x3f81);
    let (d, st) = cast::<f64, bf16>(x, NE);
    assert_eq!((d.to_bits(), st), (0x3f81, Status::Inexact));
    let (mid, _) = cast::<f64, f32>(x, NE);
    assert_eq!(mid.to_bits(), 0x3f80_8000);
    let (twice, _) = cast::<f32, bf16>(mid, NE);
    assert_eq!(twice.to_bits(), 0x3f80);
    assert_eq!(bf16::from_f32(x as f32).to_bits(), 0x3f80);
}

/// float8_e4m3: `1 + 2^-4 + 2^-40` -> 1.125 (0x39); through float32 or float16 (`1 +
/// 2^-4`, a tie) -> 1.0 (0x38).
#[test]
fn double_rounding_float8_e4m3() {
    let x = one_plus(4);
    assert_eq!(reference_ne(x, "float8_e4m3"), 0x39);
    let (d, st) = cast::<f64, Float8E4M3>(x, NE);
    assert_eq!((d.0, st), (0x39, Status::Inexact));
    let (mid, _) = cast::<f64, f32>(x, NE);
    let (twice, _) = cast::<f32, Float8E4M3>(mid, NE);
    assert_eq!(twice.0, 0x38);
    let (mid16, _) = cast::<f64, f16>(x, NE);
    assert_eq!(mid16.to_bits(), 0x3c40);
    let (twice16, _) = cast::<f16, Float8E4M3>(mid16, NE);
    assert_eq!(twice16.0, 0x38);
    // Ties away from zero too: `1 + 2^-4 - 2^-40` is just below the midpoint, so it rounds
    // down to 1.0; through float32 it becomes the midpoint and then rounds away, to 1.125.
    let na = CastOptions::new(Rounding::NearestAway, OutOfRange::Error);
    let y = f64::from_bits(0x3ff0_0000_0000_0000 | ((1u64 << 48) - (1u64 << 12)));
    let (d, _) = cast::<f64, Float8E4M3>(y, na);
    assert_eq!(d.0, 0x38);
    let (mid, _) = cast::<f64, f32>(y, na);
    assert_eq!(mid.to_bits(), 0x3f88_0000); // rounded up to the tie 1 + 2^-4
    let (twice, _) = cast::<f32, Float8E4M3>(mid, na);
    assert_eq!(twice.0, 0x39);
}

/// One expectation, checked against both the reference and zquant.
fn expect_both<S: Real, D: Real>(x: S, opts: CastOptions, want: Option<u64>, status: Status) {
    let v = format_of::<S>().decode(x.to_bits());
    let t = Target::new(D::NAME);
    let e = t.expect(&v, opts);
    assert_eq!(
        e.status,
        status,
        "reference: {} {v:?} -> {} {opts:?}",
        S::NAME,
        D::NAME
    );
    if let Some(w) = want {
        assert!(
            e.accepts(&t.fmt, w, status),
            "reference: {v:?} -> {} {opts:?}: {e:?}",
            D::NAME
        );
    }
    let (d, st) = cast::<S, D>(x, opts);
    assert_eq!(
        st,
        status,
        "zquant: {} {v:?} -> {} {opts:?}",
        S::NAME,
        D::NAME
    );
    if let Some(w) = want {
        assert!(
            e.accepts(&t.fmt, d.to_bits(), st) && (e.nan || d.to_bits() == w),
            "zquant: {v:?} -> {} {opts:?}: got {:#x}, want {w:#x}",
            D::NAME,
            d.to_bits()
        );
    }
}

/// The rules of the brief and the conformance catalogue, one example each.
#[test]
fn spec_examples() {
    use OutOfRange::{Clamp, Error, Wrap};
    use Rounding::*;
    use Status::{Clamped, Exact, Inexact, InfUnrepresentable, NanUnrepresentable, Wrapped};
    let o = CastOptions::new;
    // Rounding first, then the range check.
    expect_both::<f64, Float8E4M3>(245.0, o(NearestEven, Error), Some(0x77), Inexact);
    expect_both::<f64, f16>(65519.0, o(NearestEven, Error), Some(0x7bff), Inexact);
    expect_both::<f64, f16>(65520.0, o(NearestEven, Error), None, Status::OutOfRange);
    expect_both::<f64, f16>(65520.0, o(NearestEven, Clamp), Some(0x7c00), Clamped);
    expect_both::<f64, f16>(65520.0, o(TowardsZero, Error), Some(0x7bff), Inexact);
    expect_both::<f64, f16>(-65520.0, o(NearestEven, Clamp), Some(0xfc00), Clamped);
    // Clamp gives Inf for targets with Inf even under towards-zero.
    expect_both::<f64, f16>(1e10, o(TowardsZero, Clamp), Some(0x7c00), Clamped);
    expect_both::<f64, f32>(1e300, o(NearestEven, Error), None, Status::OutOfRange);
    expect_both::<f64, f32>(1e300, o(NearestEven, Wrap), None, Status::OutOfRange);
    // Without Inf: the largest finite value.
    expect_both::<f64, Float8E8M0Fnu>(1e300, o(NearestEven, Clamp), Some(0xfe), Clamped);
    // 64-bit integers round once.
    expect_both::<u64, f32>(u64::MAX, o(TowardsZero, Error), Some(0x5f7f_ffff), Inexact);
    expect_both::<u64, f32>(u64::MAX, o(NearestEven, Error), Some(0x5f80_0000), Inexact);
    // e8m0: ties to the larger power of two, no zero, no sign.
    expect_both::<f64, Float8E8M0Fnu>(3.0, o(NearestEven, Error), Some(0x81), Inexact);
    expect_both::<f64, Float8E8M0Fnu>(0.0, o(NearestEven, Error), None, Status::OutOfRange);
    expect_both::<f64, Float8E8M0Fnu>(0.0, o(NearestEven, Clamp), Some(0x00), Clamped);
    expect_both::<f64, Float8E8M0Fnu>(-1.0, o(NearestEven, Clamp), Some(0x00), Clamped);
    expect_both::<f64, Float8E8M0Fnu>(-1.0, o(NearestEven, Wrap), None, Status::OutOfRange);
    let p128 = f64::from_bits((1023 - 128) << 52);
    expect_both::<f64, Float8E8M0Fnu>(p128, o(TowardsPositive, Error), None, Status::OutOfRange);
    expect_both::<f64, Float8E8M0Fnu>(1.5 * p128, o(NearestEven, Error), Some(0x00), Inexact);
    expect_both::<f64, Float8E8M0Fnu>(1.25 * p128, o(NearestEven, Error), None, Status::OutOfRange);
    expect_both::<f64, Float8E8M0Fnu>(1.25 * p128, o(TowardsPositive, Error), Some(0), Inexact);
    expect_both::<f64, Float8E8M0Fnu>(f64::NAN, o(NearestEven, Error), Some(0xff), Exact);
    expect_both::<f64, Float8E8M0Fnu>(
        f64::INFINITY,
        o(NearestEven, Clamp),
        None,
        InfUnrepresentable,
    );
    // Integers: the spec's int8/int16 examples, wrapping after rounding.
    expect_both::<f64, i8>(128.0, o(NearestEven, Error), None, Status::OutOfRange);
    expect_both::<f64, i8>(128.0, o(NearestEven, Clamp), Some(0x7f), Clamped);
    expect_both::<f64, i8>(128.0, o(NearestEven, Wrap), Some(0x80), Wrapped);
    expect_both::<i64, i16>(32768, o(NearestEven, Wrap), Some(0x8000), Wrapped);
    expect_both::<i64, i16>(32769, o(NearestEven, Wrap), Some(0x8001), Wrapped);
    expect_both::<i64, i16>(-32769, o(NearestEven, Wrap), Some(0x7fff), Wrapped);
    expect_both::<f64, u8>(-1.5, o(TowardsZero, Wrap), Some(0xff), Wrapped);
    expect_both::<f64, u8>(-0.5, o(TowardsZero, Error), Some(0), Inexact);
    expect_both::<f64, u8>(-0.5, o(NearestAway, Error), None, Status::OutOfRange);
    expect_both::<f64, u8>(-0.5, o(NearestAway, Clamp), Some(0), Clamped);
    expect_both::<f64, u8>(2.5, o(NearestEven, Error), Some(2), Inexact);
    expect_both::<f64, u8>(2.5, o(NearestAway, Error), Some(3), Inexact);
    expect_both::<f64, i64>(1e300, o(NearestEven, Wrap), Some(0), Wrapped);
    // Specials.
    expect_both::<f64, i8>(f64::NAN, o(NearestEven, Clamp), None, NanUnrepresentable);
    expect_both::<f64, i8>(
        f64::INFINITY,
        o(NearestEven, Wrap),
        None,
        InfUnrepresentable,
    );
    expect_both::<f64, zquant::dtype::Float8E4M3Fnuz>(
        f64::INFINITY,
        o(NearestEven, Clamp),
        None,
        InfUnrepresentable,
    );
    expect_both::<f64, zquant::dtype::Float8E4M3Fnuz>(
        f64::NAN,
        o(NearestEven, Clamp),
        Some(0x80),
        Exact,
    );
    expect_both::<f64, zquant::dtype::Float4E2M1Fn>(
        f64::NAN,
        o(NearestEven, Clamp),
        None,
        NanUnrepresentable,
    );
    expect_both::<f64, zquant::dtype::Float8E4M3Fnuz>(
        -0.0,
        o(NearestEven, Error),
        Some(0x00),
        Exact,
    );
    expect_both::<f64, Float8E4M3>(-0.0, o(NearestEven, Error), Some(0x80), Exact);
    expect_both::<f64, i8>(-0.0, o(NearestEven, Error), Some(0), Exact);
    expect_both::<f64, Float8E4M3>(-1e-30, o(NearestEven, Error), Some(0x80), Inexact);
    expect_both::<f64, zquant::dtype::Float8E4M3Fnuz>(
        -1e-30,
        o(NearestEven, Error),
        Some(0),
        Inexact,
    );
    expect_both::<f64, f16>(
        f64::NEG_INFINITY,
        o(NearestEven, Error),
        Some(0xfc00),
        Exact,
    );
}

/// `cast_slice` reports the first failing element, and converts the rest.
#[test]
fn cast_slice_first_failure() {
    let src = [1.0f64, 2.5, 300.0, f64::NAN, -7.0, 1e9];
    let mut dst = [0u8; 6];
    let e = cast_slice(&src, &mut dst, NE).unwrap_err();
    assert_eq!((e.index, e.status), (2, Status::OutOfRange));
    let mut dst = [0u8; 6];
    let clamp = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
    let e = cast_slice(&src, &mut dst, clamp).unwrap_err();
    assert_eq!((e.index, e.status), (3, Status::NanUnrepresentable));
    assert_eq!(&dst[..3], &[1, 2, 255]);
    let ok = [1.0f64, 2.5, 300.0];
    assert!(cast_slice(&ok, &mut dst[..3], clamp).is_ok());
    // A tiny value the reference computes through the subnormal range, to keep `Val` used.
    let v = format("float64").decode(5e-324f64.to_bits());
    assert_eq!(
        v,
        Val::Num {
            neg: false,
            mag: Mag::pow2(-1074)
        }
    );
}
