//! `zquant::choose`: bit information against exact counting done here, keepbits against
//! xbitinfo's rules written out here, and every scale/offset fit run through the real codec
//! chain on adversarial values.

use ndarray::{Array2, Array3, ArrayD, Axis, IxDyn, ShapeBuilder};
use serde_json::json;
use zquant::ArrayCodecExt;
use zquant::choose::{
    BitInformation, ChooseError, FiniteRange, FitOptions, InformationOptions, best_scale_offset,
    fit_scale_offset, keepbits_for_relative_error,
};
use zquant::{BitRound, DTypeId, DynArray, DynChain};

use crate::common::Rng;

// ---------------------------------------------------------------------------------------
// The reference: signed exponent, pair counts and mutual information, written plainly.

/// BitInformation.jl's signed exponent for float32, from the value's parts.
fn signed_exponent_f32(x: f32) -> u32 {
    let bits = x.to_bits();
    let biased = ((bits >> 23) & 0xff) as i32;
    let e = biased - 127;
    let field = if e < 0 { 0x80 | (-e) as u32 } else { e as u32 };
    (bits & 0x807f_ffff) | (field << 23)
}

/// Mutual information per bit (sign first) of float32 pairs, as the paper's formula.
fn reference_information(pairs: &[(u32, u32)]) -> Vec<f64> {
    let wide: Vec<(u64, u64)> = pairs.iter().map(|&(a, b)| (a.into(), b.into())).collect();
    reference_information_bits(&wide, 32)
}

/// The unmasked neighbour pairs along `axis`, in signed-exponent form.
fn pairs_along(a: &ArrayD<f32>, axis: usize, masked: impl Fn(f32) -> bool) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for lane in a.lanes(Axis(axis)) {
        for w in lane.to_vec().windows(2) {
            if !masked(w[0]) && !masked(w[1]) {
                out.push((signed_exponent_f32(w[0]), signed_exponent_f32(w[1])));
            }
        }
    }
    out
}

fn raw(axis: Option<usize>) -> InformationOptions {
    InformationOptions {
        axis,
        set_zero_insignificant: false,
        ..Default::default()
    }
}

fn assert_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-12, "bit {i}: {g} vs {w}");
    }
}

/// A smooth field plus noise of amplitude `noise`.
fn field(rows: usize, cols: usize, noise: f64, seed: u64) -> Array2<f32> {
    let mut rng = Rng::new(seed);
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        let r = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        (280.0 + 20.0 * (i as f64 / 13.0).sin() * (j as f64 / 29.0).cos() + noise * r) as f32
    })
}

#[test]
fn information_matches_exact_counting_on_every_axis_and_layout() {
    let mut rng = Rng::new(7);
    // Random codes (Inf, NaN and subnormals included) and a smooth field, 3-D.
    let random = Array3::from_shape_fn((5, 7, 9), |_| f32::from_bits(rng.next_u64() as u32));
    let smooth = Array3::from_shape_fn((5, 7, 9), |(i, j, k)| {
        (i as f32 * 0.3).sin() + (j as f32 * 0.2).cos() * 1e-3 + k as f32 * 0.01
    });
    for a in [random.into_dyn(), smooth.into_dyn()] {
        let f_order = {
            let mut f = ArrayD::<f32>::zeros(IxDyn(a.shape()).f());
            f.assign(&a);
            f
        };
        for axis in 0..3 {
            let want = reference_information(&pairs_along(&a, axis, |_| false));
            let mut opts = raw(Some(axis));
            opts.mask_nan = false;
            for view in [
                a.view(),
                f_order.view(),
                a.view().reversed_axes().reversed_axes(),
            ] {
                let got = BitInformation::of(&view, &opts).unwrap();
                assert_close(got.per_bit(), &want);
            }
            // A transposed (non-contiguous in either order) view along the matching axis.
            let t = a.view().permuted_axes(vec![2, 0, 1]);
            let t_axis = [1, 2, 0][axis];
            let got = BitInformation::of(
                &t,
                &InformationOptions {
                    axis: Some(t_axis),
                    ..opts
                },
            )
            .unwrap();
            assert_close(got.per_bit(), &want);
        }
    }
}

/// The signed exponent of a float code with `e` exponent and `m` mantissa bits, from its
/// parts (sign and mantissa kept, the exponent field holding `|E - bias|` and the sign of
/// `E - bias` in its first bit).
fn signed_exponent_bits(bits: u64, e: u32, m: u32, bias: i64) -> u64 {
    let field = ((bits >> m) & ((1 << e) - 1)) as i64 - bias;
    let signed = if field < 0 {
        (1 << (e - 1)) | field.unsigned_abs()
    } else {
        field as u64
    };
    (bits & !(((1u64 << e) - 1) << m)) | (signed << m)
}

/// Mutual information per bit (most significant first) of pairs of `width`-bit codes, as
/// the paper's formula.
fn reference_information_bits(pairs: &[(u64, u64)], width: u32) -> Vec<f64> {
    let n = pairs.len() as f64;
    (0..width)
        .rev()
        .map(|bit| {
            let mut c = [[0u64; 2]; 2];
            for &(a, b) in pairs {
                c[((a >> bit) & 1) as usize][((b >> bit) & 1) as usize] += 1;
            }
            let mut m = 0.0;
            for j in 0..2 {
                for k in 0..2 {
                    let p = c[j][k] as f64 / n;
                    let pj = (c[j][0] + c[j][1]) as f64 / n;
                    let pk = (c[0][k] + c[1][k]) as f64 / n;
                    if p > 0.0 {
                        m += p * (p / (pj * pk)).log2();
                    }
                }
            }
            m
        })
        .collect()
}

/// Bit information of random codes of `T` in arrays long enough for several of the
/// counting kernel's tiles, along both axes, and of all-ones codes (every byte counter
/// at its most), against exact counting of the prepared pairs.
fn check_width<T: zquant::Real>(code: impl Fn(u64) -> T, prep: impl Fn(u64) -> u64, seed: u64) {
    let mut rng = Rng::new(seed);
    let long = Array2::from_shape_fn((3, 9001), |_| code(rng.next_u64()));
    let ones = Array2::from_shape_fn((2, 5000), |_| code(u64::MAX));
    for a in [long.view(), long.t(), ones.view()] {
        for axis in 0..2 {
            let pairs: Vec<(u64, u64)> = a
                .lanes(Axis(axis))
                .into_iter()
                .flat_map(|lane| {
                    let v: Vec<u64> = lane.iter().map(|x| prep(x.to_bits())).collect();
                    v.windows(2).map(|w| (w[0], w[1])).collect::<Vec<_>>()
                })
                .collect();
            let want = reference_information_bits(&pairs, T::BITS);
            let mut opts = raw(Some(axis));
            opts.mask_nan = false;
            let got = BitInformation::of(&a, &opts).unwrap();
            assert_close(got.per_bit(), &want);
        }
    }
}

#[test]
fn information_matches_exact_counting_for_every_word_width() {
    use zquant::dtype::{Float8E4M3, Real};
    check_width(f64::from_bits, |b| signed_exponent_bits(b, 11, 52, 1023), 1);
    check_width(
        |b| f32::from_bits(b as u32),
        |b| signed_exponent_bits(b, 8, 23, 127),
        2,
    );
    check_width(
        |b| half::f16::from_bits(b as u16),
        |b| signed_exponent_bits(b, 5, 10, 15),
        3,
    );
    check_width(
        Float8E4M3::from_bits,
        |b| signed_exponent_bits(b, 4, 3, 7),
        4,
    );
    // Integers are counted as they are.
    check_width(|b| b as i16, |b| b & 0xffff, 5);
}

#[test]
fn nan_and_fill_value_are_masked_pairwise() {
    let mut a = field(12, 40, 0.5, 3).into_dyn();
    for (i, x) in a.iter_mut().enumerate() {
        if i % 7 == 0 {
            *x = f32::NAN;
        } else if i % 11 == 0 {
            *x = -9999.0;
        } else if i % 13 == 0 {
            *x = f32::from_bits(0xffc0_1234); // a NaN with sign and payload
        }
    }
    let fill = -9999.0f32;
    let masked = |x: f32| x.is_nan() || x.to_bits() == fill.to_bits();
    let want_pairs = pairs_along(&a, 1, masked);
    let opts = InformationOptions {
        masked_bits: Some(u64::from(fill.to_bits())),
        ..raw(None)
    };
    let got = BitInformation::of(&a, &opts).unwrap();
    assert_eq!(got.pairs(), want_pairs.len() as u64);
    assert_close(got.per_bit(), &reference_information(&want_pairs));
}

#[test]
fn significance_test_zeroes_what_a_fair_coin_explains() {
    let a = field(64, 256, 0.0, 1);
    let raw_info = BitInformation::of(&a, &raw(None)).unwrap();
    let sig = BitInformation::of(&a, &InformationOptions::default()).unwrap();
    let free = zquant::choose::free_entropy(raw_info.pairs(), 0.99);
    assert_eq!(sig.free_entropy(), Some(free));
    for (r, s) in raw_info.per_bit().iter().zip(sig.per_bit()) {
        assert_eq!(*s, if *r <= free { 0.0 } else { *r });
    }
    // Few pairs: p is capped at 1, the free entropy is 1 and everything is insignificant.
    assert_eq!(zquant::choose::free_entropy(1, 0.99), 1.0);
}

#[test]
fn noise_has_no_real_information_in_the_mantissa_and_a_smooth_field_has_it_high() {
    // Uniform noise in [1, 2): exponent constant, mantissa bits independent.
    let mut rng = Rng::new(11);
    let noise = Array2::from_shape_fn((200, 500), |_| {
        f32::from_bits(0x3f80_0000 | (rng.next_u64() as u32 & 0x007f_ffff))
    });
    let info = BitInformation::of(&noise, &InformationOptions::default()).unwrap();
    assert!(
        info.per_bit().iter().all(|&m| m == 0.0),
        "{:?}",
        info.per_bit()
    );
    // A smooth field: real information in the first mantissa bits, none in the last.
    let smooth = field(200, 500, 1e-3, 5);
    let info = BitInformation::of(&smooth, &InformationOptions::default()).unwrap();
    let m = info.per_bit();
    // 260..300 K: exponent and the first two mantissa bits are constant, the next carry it.
    assert!(m[..11].iter().all(|&x| x == 0.0), "{m:?}");
    assert!(m[11..15].iter().all(|&x| x > 0.1), "{m:?}");
    assert!(m[26..].iter().all(|&x| x == 0.0), "{m:?}");
    let k = info.keepbits(0.99).unwrap();
    assert!((5..=16).contains(&k), "keepbits {k}");
}

/// xbitinfo's `get_keepbits`, written from its documentation and source (no clamp).
fn xbitinfo_keepbits(info: &[f64], level: f64, non_mantissa: i64, mantissa: i64) -> i64 {
    if level == 1.0 {
        return mantissa;
    }
    let tail = info[info.len() - 4..].iter().cloned().fold(0.0, f64::max);
    let kept: Vec<f64> = info
        .iter()
        .map(|&m| if m > 1.5 * tail { m } else { 0.0 })
        .collect();
    let total: f64 = kept.iter().sum();
    let mut c = 0.0;
    for (i, m) in kept.iter().enumerate() {
        c += m;
        if c / total > level {
            return i as i64 + 1 - non_mantissa;
        }
    }
    1 - non_mantissa
}

#[test]
fn keepbits_follow_xbitinfo_and_grow_with_the_level() {
    let levels = [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0];
    for (noise, seed) in [(0.0, 1), (1e-3, 2), (0.1, 3), (3.0, 4)] {
        let a = field(90, 180, noise, seed);
        for opts in [InformationOptions::default(), raw(None), raw(Some(0))] {
            let info = BitInformation::of(&a, &opts).unwrap();
            let mut last = 0;
            for level in levels {
                let want = xbitinfo_keepbits(info.per_bit(), level, 9, 23);
                assert_eq!(info.keepbits_unclamped(level).unwrap(), want);
                let k = info.keepbits(level).unwrap();
                assert_eq!(k as i64, want.clamp(1, 23));
                assert!(k >= last, "level {level}: {k} < {last}");
                last = k;
            }
        }
    }
    let info = BitInformation::of(&field(4, 4, 0.0, 1), &raw(None)).unwrap();
    assert_eq!(info.keepbits(1.5), Err(ChooseError::Level(1.5)));
    let ints = Array2::from_shape_fn((4, 4), |(i, j)| (i * j) as i32);
    let info = BitInformation::of(&ints, &raw(None)).unwrap();
    assert_eq!(info.per_bit().len(), 32);
    assert!(matches!(info.keepbits(0.9), Err(ChooseError::NotAFloat(_))));
}

#[test]
fn information_errors_are_typed() {
    let a = Array2::<f32>::zeros((3, 1));
    assert_eq!(
        BitInformation::of(&a, &InformationOptions::default()),
        Err(ChooseError::NoPairs { axis: 1 })
    );
    assert_eq!(
        BitInformation::of(&a, &raw(Some(2))),
        Err(ChooseError::Axis { axis: 2, ndim: 2 })
    );
    let nan = Array2::from_elem((3, 3), f32::NAN);
    assert!(BitInformation::of(&nan, &InformationOptions::default()).is_err());
    let c = InformationOptions {
        confidence: 1.0,
        ..Default::default()
    };
    assert_eq!(
        BitInformation::of(&Array2::<f32>::zeros((3, 3)), &c),
        Err(ChooseError::Confidence(1.0))
    );
}

// ---------------------------------------------------------------------------------------
// keepbits for a relative error, checked with the real bitround codec.

#[test]
fn keepbits_for_relative_error_holds_under_bitround() {
    let mut rng = Rng::new(19);
    for bound in [
        0.4, 0.1, 1e-2, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-9, 1e-12, 1e-16, 1e-20,
    ] {
        for id in [
            DTypeId::Float16,
            DTypeId::BFloat16,
            DTypeId::Float32,
            DTypeId::Float64,
        ] {
            let k = keepbits_for_relative_error(id.kind(), bound).unwrap();
            let m = match id.kind() {
                zquant::Kind::Float(l) => l.mantissa_bits,
                _ => unreachable!(),
            };
            assert!((1..=m).contains(&k));
            // Fewest: one bit less has a larger worst case than the bound.
            if k < m && k > 1 {
                assert!((-(k as f64)).exp2() > bound);
            }
            if k < m {
                assert!((-(k as f64 + 1.0)).exp2() <= bound);
            }
            // Normal values of every binade, ties included, through the codec.
            let x: Vec<f64> = (0..2000)
                .map(|i| {
                    let e = (i % 24) as f64 - 12.0;
                    let frac = if i % 3 == 0 {
                        1.0 + (0.5 + (i % 64) as f64) * (-(k as f64)).exp2() // ties
                    } else {
                        1.0 + (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
                    };
                    frac.min(1.99) * e.exp2() * if i % 2 == 0 { 1.0 } else { -1.0 }
                })
                .collect();
            let worst = match id {
                DTypeId::Float32 => {
                    max_rel_error(&x.iter().map(|&v| v as f32).collect::<Vec<_>>(), k)
                }
                DTypeId::Float64 => max_rel_error(&x, k),
                DTypeId::Float16 => max_rel_error(
                    &x.iter()
                        .map(|&v| half::f16::from_f64(v))
                        .collect::<Vec<_>>(),
                    k,
                ),
                _ => max_rel_error(
                    &x.iter()
                        .map(|&v| half::bf16::from_f64(v))
                        .collect::<Vec<_>>(),
                    k,
                ),
            };
            assert!(
                worst <= bound.max(0.0) || k == m,
                "{id:?} bound {bound}: k {k} gives {worst}"
            );
            assert!(worst <= (-(k as f64 + 1.0)).exp2(), "{id:?} k {k}: {worst}");
        }
    }
    assert!(keepbits_for_relative_error(DTypeId::Float8E4M3.kind(), 0.1).is_err());
    assert!(keepbits_for_relative_error(DTypeId::Int16.kind(), 0.1).is_err());
    assert_eq!(
        keepbits_for_relative_error(DTypeId::Float32.kind(), -1.0),
        Err(ChooseError::Bound(-1.0))
    );
}

fn max_rel_error<T: zquant::Real>(x: &[T], k: u32) -> f64 {
    let codec = BitRound::<T>::new(u64::from(k)).unwrap();
    let a = ndarray::Array1::from(x.to_vec());
    let r = codec.encode(&a).unwrap();
    a.iter()
        .zip(r.iter())
        .map(|(a, b)| {
            let (a, b) = (a.to_exact().to_f64(), b.to_exact().to_f64());
            if a == 0.0 { 0.0 } else { ((b - a) / a).abs() }
        })
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------
// scale/offset: every fit run through the real chain on adversarial values.

/// Values of the source type (as f64) to push through the chain: the ends, their
/// neighbours, points on and around code ties, and random points.
fn adversarial(
    id: DTypeId,
    c: &zquant::choose::ScaleOffsetChoice,
    range: FiniteRange,
    rng: &mut Rng,
) -> Vec<f64> {
    let round = |v: f64| -> f64 {
        match id {
            DTypeId::Float32 => v as f32 as f64,
            DTypeId::Float16 => half::f16::from_f64(v).to_f64(),
            DTypeId::BFloat16 => half::bf16::from_f64(v).to_f64(),
            _ => v,
        }
    };
    let mut out = vec![range.min, range.max];
    let (lo, hi) = c.codes;
    let codes = [lo, lo + 1, (lo + hi) / 2, hi - 1, hi];
    for q in codes {
        for d in [-0.5, 0.5, 0.25, -0.25, 0.0] {
            out.push(c.offset + (q as f64 + d) / c.scale);
        }
    }
    for _ in 0..2000 {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        out.push(range.min + u * (range.max - range.min));
        let q = lo + (rng.next_u64() % ((hi - lo) as u64 + 1).max(1)) as i128;
        out.push(c.offset + (q as f64 + 0.5) / c.scale);
    }
    // Into the type, then into the range; plus the neighbours of every value.
    let mut vals: Vec<f64> = out
        .into_iter()
        .map(round)
        .filter(|v| *v >= range.min && *v <= range.max)
        .collect();
    let n = vals.len();
    for i in 0..n {
        for dir in [f64::INFINITY, f64::NEG_INFINITY] {
            let v = next_in(id, vals[i], dir);
            if v >= range.min && v <= range.max {
                vals.push(v);
            }
        }
    }
    vals
}

/// The neighbour of `v` in the source type towards `dir` (by its sign-magnitude code;
/// `f64::next_up` is newer than the MSRV).
fn next_in(id: DTypeId, v: f64, dir: f64) -> f64 {
    let up = dir > v;
    // `bits` is the code of a finite value, `sign` its sign bit.
    let step = |bits: u64, sign: u64| -> u64 {
        if bits & !sign == 0 {
            if up { 1 } else { sign | 1 }
        } else if (bits & sign == 0) == up {
            bits + 1
        } else {
            bits - 1
        }
    };
    match id {
        DTypeId::Float64 => f64::from_bits(step(v.to_bits(), 1 << 63)),
        DTypeId::Float32 => f64::from(f32::from_bits(
            step(u64::from((v as f32).to_bits()), 1 << 31) as u32,
        )),
        DTypeId::Float16 => {
            half::f16::from_bits(step(u64::from(half::f16::from_f64(v).to_bits()), 1 << 15) as u16)
                .to_f64()
        }
        _ => v,
    }
}

fn dyn_array(id: DTypeId, v: &[f64]) -> DynArray {
    let shape = IxDyn(&[v.len()]);
    match id {
        DTypeId::Float32 => DynArray::Float32(
            ArrayD::from_shape_vec(shape, v.iter().map(|&x| x as f32).collect()).unwrap(),
        ),
        DTypeId::Float16 => DynArray::Float16(
            ArrayD::from_shape_vec(shape, v.iter().map(|&x| half::f16::from_f64(x)).collect())
                .unwrap(),
        ),
        _ => DynArray::Float64(ArrayD::from_shape_vec(shape, v.to_vec()).unwrap()),
    }
}

fn as_f64(a: &DynArray) -> Vec<f64> {
    match a {
        DynArray::Float32(x) => x.iter().map(|&v| f64::from(v)).collect(),
        DynArray::Float16(x) => x.iter().map(|v| v.to_f64()).collect(),
        DynArray::Float64(x) => x.iter().copied().collect(),
        other => panic!("unexpected {:?}", other.dtype()),
    }
}

/// The integer codes of an encoded array.
fn codes(a: &DynArray) -> Vec<i128> {
    let id = a.dtype();
    let Some(zquant::dtype::Format::Int(l)) = id.format() else {
        panic!("not an integer array: {id:?}");
    };
    a.to_le_bytes()
        .chunks(id.size())
        .map(|c| {
            let raw = c
                .iter()
                .enumerate()
                .fold(0u64, |r, (i, &x)| r | (u64::from(x) << (8 * i)));
            zquant::__private::int_value(&l, raw)
        })
        .collect()
}

/// Fit, then run the chain the fit describes on adversarial values of the range.
fn check_fit(
    source: DTypeId,
    target: DTypeId,
    range: FiniteRange,
    sentinel: bool,
    rng: &mut Rng,
) -> f64 {
    let opts = FitOptions {
        nan_sentinel: sentinel,
        ..Default::default()
    };
    let c = best_scale_offset(source, target, range, opts)
        .unwrap_or_else(|e| panic!("{source:?} {target:?} {range:?}: {e}"));
    assert!(c.scale > 0.0);
    let codecs = c.codecs();
    let fill = if sentinel {
        json!("NaN")
    } else {
        c.offset_json()
    };
    let chain = DynChain::from_array_to_array_codecs(
        &json!(source.name()),
        &fill,
        codecs.as_array().unwrap(),
    )
    .unwrap_or_else(|e| panic!("{codecs}: {e}"));
    let mut x = adversarial(source, &c, range, rng);
    if sentinel {
        x.push(f64::NAN);
    }
    let enc = chain
        .encode(&dyn_array(source, &x))
        .unwrap_or_else(|e| panic!("{codecs} on {range:?}: {e}"));
    let q = codes(&enc);
    let dec = as_f64(&chain.decode(&enc).unwrap());
    let mut worst = 0.0f64;
    for ((x, q), y) in x.iter().zip(&q).zip(&dec) {
        if x.is_nan() {
            assert_eq!(Some(*q), c.nan_code);
            assert!(y.is_nan());
            continue;
        }
        assert!(
            *q >= c.codes.0 && *q <= c.codes.1,
            "{x} -> {q} outside {:?} ({codecs})",
            c.codes
        );
        assert_ne!(Some(*q), c.nan_code);
        let err = (y - x).abs();
        assert!(
            err <= c.max_abs_error,
            "{source:?}->{target:?} {x} -> {q} -> {y}: {err} > {} ({codecs})",
            c.max_abs_error
        );
        worst = worst.max(err);
    }
    // The bound is close to what the data reach: within a few percent plus the quantum.
    worst
}

#[test]
fn scale_offset_fits_hold_when_the_codec_runs() {
    let mut rng = Rng::new(23);
    let ranges = [
        (0.0, 1.0),
        (-1.0, 1.0),
        (250.0, 310.0),
        (-1e-3, 2e-3),
        (1000.0, 1000.5),
        (-3.0e38, 3.0e38),
        (1e-30, 1e-29),
        (5.0, 5.0),
        (-7.25, -7.25),
        (0.0, 65504.0),
        (-60000.0, 65000.0),
        (1.0, 1.0009765625),
    ];
    let targets = [
        DTypeId::Int8,
        DTypeId::UInt8,
        DTypeId::Int16,
        DTypeId::UInt16,
        DTypeId::Int32,
        DTypeId::UInt32,
        DTypeId::Int4,
        DTypeId::UInt2,
        DTypeId::Int64,
    ];
    for source in [DTypeId::Float64, DTypeId::Float32, DTypeId::Float16] {
        for &(min, max) in &ranges {
            let range = FiniteRange { min, max };
            if best_scale_offset(source, DTypeId::Int16, range, FitOptions::default())
                .is_err_and(|e| matches!(e, ChooseError::Range(..)))
            {
                continue; // not values of this type (f16 and 3e38, 1e-30, …)
            }
            for target in targets {
                for sentinel in [false, true] {
                    check_fit(source, target, range, sentinel, &mut rng);
                }
            }
        }
    }
}

#[test]
fn the_bound_is_tight_and_the_range_is_used() {
    let mut rng = Rng::new(29);
    let range = FiniteRange {
        min: -40.0,
        max: 50.0,
    };
    for target in [DTypeId::UInt8, DTypeId::Int16] {
        let c = best_scale_offset(DTypeId::Float64, target, range, FitOptions::default()).unwrap();
        let quantum = 90.0 / (target_span(target) as f64) / 2.0;
        assert!(
            c.max_abs_error < quantum * 1.001,
            "{} vs {quantum}",
            c.max_abs_error
        );
        let t = target.format().unwrap();
        let zquant::dtype::Format::Int(l) = t else {
            unreachable!()
        };
        assert!(
            c.codes.0 <= l.min() + 1 && c.codes.1 >= l.max() - 1,
            "{:?}",
            c.codes
        );
        let worst = check_fit(DTypeId::Float64, target, range, false, &mut rng);
        assert!(
            worst > 0.9 * c.max_abs_error,
            "{worst} vs {}",
            c.max_abs_error
        );
    }
}

fn target_span(t: DTypeId) -> u64 {
    match t {
        DTypeId::UInt8 => 255,
        DTypeId::Int16 => 65535,
        _ => unreachable!(),
    }
}

#[test]
fn fit_meets_the_bound_or_says_why() {
    let range = FiniteRange {
        min: -40.0,
        max: 50.0,
    };
    let o = FitOptions::default();
    let best = best_scale_offset(DTypeId::Float32, DTypeId::Int16, range, o).unwrap();
    // The reverse: exactly the best bound is accepted, anything smaller is not.
    let fit = fit_scale_offset(
        DTypeId::Float32,
        DTypeId::Int16,
        range,
        best.max_abs_error,
        o,
    )
    .unwrap();
    assert_eq!(fit, best);
    let e = fit_scale_offset(
        DTypeId::Float32,
        DTypeId::Int16,
        range,
        best.max_abs_error * 0.99,
        o,
    )
    .unwrap_err();
    assert!(matches!(
        e,
        ChooseError::BoundNotMet {
            target: "int16",
            ..
        }
    ));
    let msg = e.to_string();
    assert!(
        msg.contains("int16") && msg.contains("wider integer type"),
        "{msg}"
    );
    // Typed errors for the other misuses.
    assert_eq!(
        fit_scale_offset(DTypeId::Int32, DTypeId::Int16, range, 1.0, o),
        Err(ChooseError::SourceNotFloat("int32"))
    );
    assert_eq!(
        fit_scale_offset(DTypeId::Float32, DTypeId::Float16, range, 1.0, o),
        Err(ChooseError::TargetNotInteger("float16"))
    );
    assert_eq!(
        fit_scale_offset(DTypeId::Float32, DTypeId::Int16, range, 0.0, o),
        Err(ChooseError::Bound(0.0))
    );
    // 0.1 is not a float32 value.
    assert!(matches!(
        best_scale_offset(
            DTypeId::Float32,
            DTypeId::Int16,
            FiniteRange { min: 0.1, max: 1.0 },
            o
        ),
        Err(ChooseError::Range(..))
    ));
    assert!(matches!(
        best_scale_offset(
            DTypeId::Float64,
            DTypeId::Int16,
            FiniteRange { min: 2.0, max: 1.0 },
            o
        ),
        Err(ChooseError::Range(..))
    ));
    // One code left after the sentinel in a 1-bit-wide... uint2 keeps 3 codes: still fits.
    assert!(
        best_scale_offset(
            DTypeId::Float64,
            DTypeId::UInt2,
            range,
            FitOptions {
                nan_sentinel: true,
                ..Default::default()
            }
        )
        .is_ok()
    );
}

#[test]
fn finite_range_skips_nan_and_infinities() {
    let a = ndarray::arr2(&[[f64::NAN, 2.0], [f64::NEG_INFINITY, -3.5]]);
    assert_eq!(
        FiniteRange::of(&a),
        Some(FiniteRange {
            min: -3.5,
            max: 2.0
        })
    );
    assert_eq!(FiniteRange::of(&ndarray::arr1(&[f32::NAN])), None);
}

/// Mergeable counts: chunks split across the other axes merge to the whole array's counts;
/// chunks split along the axis lose exactly the pairs across their edges, which the
/// two-slice slabs at the edges give back. `of_words` counts as `of` does, and the parts
/// round-trip.
#[test]
fn bit_counts_merge_to_the_whole_array() {
    use ndarray::{Array3, Axis, concatenate, s};
    use zquant::choose::{BitCounts, BitInformation, InformationOptions};

    let field = Array3::from_shape_fn((6, 50, 70), |(k, i, j)| {
        let v = 280.0 + 20.0 * ((i as f32) * 0.11 + k as f32).sin() * ((j as f32) * 0.07).cos();
        if (i * 70 + j) % 97 == 0 { f32::NAN } else { v }
    });
    for axis in 0..3 {
        let opts = InformationOptions {
            axis: Some(axis),
            ..InformationOptions::default()
        };
        let whole = BitCounts::of(&field, &opts).expect("counts");
        // Split along another axis: nothing lost.
        let other = (axis + 1) % 3;
        let cut = field.len_of(Axis(other)) / 3;
        let (a, b) = field.view().split_at(Axis(other), cut);
        let mut merged = BitCounts::of(&a, &opts).expect("counts");
        merged
            .merge(&BitCounts::of(&b, &opts).expect("counts"))
            .expect("merge");
        assert_eq!(merged, whole, "axis {axis}");
        // Split along the axis: the pairs across the edge are missing, and the slab of the
        // two slices at the edge is exactly them.
        let cut = field.len_of(Axis(axis)) / 2;
        let (a, b) = field.view().split_at(Axis(axis), cut);
        let mut merged = BitCounts::of(&a, &opts).expect("counts");
        merged
            .merge(&BitCounts::of(&b, &opts).expect("counts"))
            .expect("merge");
        let edge = field.len_of(Axis(other)) * field.len_of(Axis((axis + 2) % 3));
        assert!(merged.pairs() < whole.pairs() && merged.pairs() + edge as u64 >= whole.pairs());
        let slab = concatenate(
            Axis(axis),
            &[
                field.slice_axis(Axis(axis), (cut - 1..cut).into()),
                field.slice_axis(Axis(axis), (cut..cut + 1).into()),
            ],
        )
        .expect("slab");
        merged
            .merge(&BitCounts::of(&slab, &opts).expect("counts"))
            .expect("merge");
        assert_eq!(merged, whole, "axis {axis}");
        assert_eq!(
            merged.information(&opts).expect("info"),
            BitInformation::of(&field, &opts).expect("info")
        );
        // Words in C order count the same; the parts round-trip.
        let bits: Vec<u32> = field.iter().map(|x| x.to_bits()).collect();
        let words = BitCounts::of_words(
            zquant::DTypeId::Float32,
            zquant::dtype::Words::U32(&bits),
            field.shape(),
            &opts,
        )
        .expect("counts");
        assert_eq!(words, whole);
        let (pairs, parts) = whole.parts();
        let back = BitCounts::from_parts(whole.format(), axis, pairs, parts).expect("parts");
        assert_eq!(back, whole);
        let mut bad = parts;
        bad[2][3] = bad[0][3] + 1;
        assert!(BitCounts::from_parts(whole.format(), axis, pairs, bad).is_err());
    }
    // Other formats or axes do not merge; wrong word counts are errors.
    let opts = InformationOptions::default();
    let mut f = BitCounts::of(&field.slice(s![0, .., ..]), &opts).expect("counts");
    let g = BitCounts::of(&field.mapv(f64::from), &opts).expect("counts");
    assert!(f.merge(&g).is_err());
    assert!(
        BitCounts::of_words(
            zquant::DTypeId::Float32,
            zquant::dtype::Words::U32(&[0; 5]),
            &[2, 3],
            &opts
        )
        .is_err()
    );
}

/// `FiniteRange::of_words` gives `FiniteRange::of`'s range, for floats and integers.
#[test]
fn finite_range_of_words_matches_of() {
    use zquant::choose::FiniteRange;
    use zquant::dtype::Words;
    let f = ndarray::arr1(&[3.0f64, f64::NAN, -0.0, -7.25, f64::INFINITY, 1e300]);
    let bits: Vec<u64> = f.iter().map(|x| x.to_bits()).collect();
    let r = FiniteRange::of_words(zquant::DTypeId::Float64, Words::U64(&bits)).expect("range");
    assert_eq!(r, FiniteRange::of(&f));
    let i = ndarray::arr1(&[5i16, -300, 12, i16::MAX]);
    let bits: Vec<u16> = i.iter().map(|&x| x as u16).collect();
    let r = FiniteRange::of_words(zquant::DTypeId::Int16, Words::U16(&bits)).expect("range");
    assert_eq!(r, FiniteRange::of(&i));
    assert_eq!(
        r,
        Some(FiniteRange {
            min: -300.0,
            max: 32767.0
        })
    );
    let none = FiniteRange::of_words(zquant::DTypeId::Float32, Words::U32(&[0x7fc0_0000]));
    assert_eq!(none, Ok(None));
    assert!(FiniteRange::of_words(zquant::DTypeId::Float32, Words::U64(&[0])).is_err());
}

// ---------------------------------------------------------------------------------------
// The exact scale/offset check, and the smallest scale.

/// The chain a fit describes.
fn chain_of(source: DTypeId, c: &zquant::choose::ScaleOffsetChoice) -> DynChain {
    let codecs = c.codecs();
    DynChain::from_array_to_array_codecs(
        &json!(source.name()),
        &c.offset_json(),
        codecs.as_array().unwrap(),
    )
    .unwrap_or_else(|e| panic!("{codecs}: {e}"))
}

/// The sign-magnitude key of a value of `source` (`±` its magnitude bits), and back.
fn key_of(source: DTypeId, v: f64) -> i64 {
    let (bits, sign) = match source {
        DTypeId::Float32 => (u64::from((v as f32).to_bits()), 1u64 << 31),
        DTypeId::Float16 => (u64::from(half::f16::from_f64(v).to_bits()), 1 << 15),
        _ => (v.to_bits(), 1 << 63),
    };
    let m = (bits & !sign) as i64;
    if bits & sign != 0 { -m } else { m }
}

fn value_of(source: DTypeId, k: i64) -> f64 {
    let (sign, m) = (k < 0, k.unsigned_abs());
    match source {
        DTypeId::Float32 => f64::from(f32::from_bits(m as u32 | (u32::from(sign) << 31))),
        DTypeId::Float16 => half::f16::from_bits(m as u16 | (u16::from(sign) << 15)).to_f64(),
        _ => f64::from_bits(m | (u64::from(sign) << 63)),
    }
}

/// Every cell edge of the real codec over the range: for each code `q` but the last, the
/// largest source value that encodes to at most `q` and the next one, found by bisection
/// over the source type's values (all codes at once, one encode per round); and the
/// range's ends.
fn cell_edges(
    source: DTypeId,
    c: &zquant::choose::ScaleOffsetChoice,
    range: FiniteRange,
) -> Vec<f64> {
    let chain = chain_of(source, c);
    let qs: Vec<i128> = (c.codes.0..c.codes.1).collect();
    let (kmin, kmax) = (key_of(source, range.min), key_of(source, range.max));
    // Invariant: enc(lo) <= q < enc(hi), with hi = kmax + 1 standing for "beyond".
    let mut lo = vec![kmin; qs.len()];
    let mut hi = vec![kmax + 1; qs.len()];
    loop {
        let mids: Vec<i64> = lo
            .iter()
            .zip(&hi)
            .map(|(&l, &h)| ((i128::from(l) + i128::from(h)) / 2) as i64)
            .collect();
        if lo
            .iter()
            .zip(&hi)
            .all(|(&l, &h)| i128::from(h) - i128::from(l) <= 1)
        {
            break;
        }
        let x: Vec<f64> = mids.iter().map(|&k| value_of(source, k)).collect();
        let enc = codes(&chain.encode(&dyn_array(source, &x)).expect("encodes"));
        for (i, (&m, &e)) in mids.iter().zip(&enc).enumerate() {
            if i128::from(hi[i]) - i128::from(lo[i]) > 1 {
                if e <= qs[i] { lo[i] = m } else { hi[i] = m }
            }
        }
    }
    let mut xs = vec![range.min, range.max];
    for (&l, &h) in lo.iter().zip(&hi) {
        xs.push(value_of(source, l));
        if h <= kmax {
            xs.push(value_of(source, h));
        }
    }
    xs
}

/// The largest error of the real codec chain of `c` over `x`, checking every code stays in
/// `c.codes`.
fn codec_error(source: DTypeId, c: &zquant::choose::ScaleOffsetChoice, x: &[f64]) -> f64 {
    let (codecs, chain) = (c.codecs(), chain_of(source, c));
    let enc = chain
        .encode(&dyn_array(source, x))
        .unwrap_or_else(|e| panic!("{codecs}: {e}"));
    let q = codes(&enc);
    assert!(
        q.iter().all(|q| (c.codes.0..=c.codes.1).contains(q)),
        "{codecs}"
    );
    let dec = as_f64(&chain.decode(&enc).unwrap());
    x.iter()
        .zip(&dec)
        .map(|(x, y)| (y - x).abs())
        .fold(0.0, f64::max)
}

/// For targets of at most 16 bits the guarantee is exact: the real codec, run over every
/// code's decoded value, the midpoints between neighbours and their neighbouring source
/// values, never errs by more, and reaches it.
#[test]
fn exact_bound_is_what_the_codec_does() {
    use zquant::choose::{Guarantee, ScaleChoice};
    let mut rng = Rng::new(71);
    let ranges = [
        (250.0, 310.0),
        (-40.0, 50.0),
        (0.0, 1.0),
        (-1e-3, 2e-3),
        (1000.0, 1000.5),
        (-7.0, -6.0),
        (-65000.0, 65000.0),
    ];
    for source in [DTypeId::Float16, DTypeId::Float32, DTypeId::Float64] {
        for target in [
            DTypeId::Int8,
            DTypeId::UInt8,
            DTypeId::Int16,
            DTypeId::UInt16,
        ] {
            for &(lo, hi) in &ranges {
                let r = |v: f64| match source {
                    DTypeId::Float32 => v as f32 as f64,
                    DTypeId::Float16 => half::f16::from_f64(v).to_f64(),
                    _ => v,
                };
                let range = FiniteRange {
                    min: r(lo),
                    max: r(hi),
                };
                if !range.min.is_finite() || !range.max.is_finite() || range.min >= range.max {
                    continue;
                }
                let Ok(best) = best_scale_offset(source, target, range, FitOptions::default())
                else {
                    continue;
                };
                assert_eq!(best.guarantee, Guarantee::Exact);
                // The largest scale, and the smallest meeting a looser bound.
                let loose = best.max_abs_error.max(1e-300) * (2.0 + (rng.next_u64() % 50) as f64);
                let smallest = FitOptions {
                    scale: ScaleChoice::Smallest,
                    ..Default::default()
                };
                let small =
                    fit_scale_offset(source, target, range, loose, smallest).expect("looser fits");
                assert!(small.max_abs_error <= loose);
                assert!(small.code_count() <= best.code_count());
                for c in [&best, &small] {
                    let err = codec_error(source, c, &cell_edges(source, c, range));
                    let tag = format!("{source:?}->{target:?} {range:?} {:?}", c.codecs());
                    assert!(
                        err <= c.max_abs_error,
                        "{tag}: codec error {err} > {}",
                        c.max_abs_error
                    );
                    // Reached, up to the one f64 ulp the bound is rounded up by.
                    assert!(
                        err >= c.max_abs_error * (1.0 - 1e-15),
                        "{tag}: the bound {} is not reached ({err})",
                        c.max_abs_error
                    );
                }
            }
        }
    }
}

/// The smallest scale uses about `span / (2 · bound)` codes, meets the bound on adversarial
/// values, and a wide target (the a-priori guarantee) gets it too.
#[test]
fn smallest_scale_uses_few_codes() {
    use zquant::choose::{Guarantee, ScaleChoice};
    let mut rng = Rng::new(5);
    let smallest = FitOptions {
        scale: ScaleChoice::Smallest,
        ..Default::default()
    };
    for (source, target, range, bound) in [
        (
            DTypeId::Float32,
            DTypeId::Int16,
            FiniteRange {
                min: 250.0,
                max: 310.0,
            },
            0.01,
        ),
        (
            DTypeId::Float64,
            DTypeId::UInt16,
            FiniteRange {
                min: -1.0,
                max: 1.0,
            },
            1e-3,
        ),
        (
            DTypeId::Float64,
            DTypeId::Int32,
            FiniteRange {
                min: -40.0,
                max: 50.0,
            },
            1e-4,
        ),
        (
            DTypeId::Float32,
            DTypeId::Int32,
            FiniteRange { min: 0.0, max: 1e4 },
            0.05,
        ),
    ] {
        let c = fit_scale_offset(source, target, range, bound, smallest).expect("fits");
        let ideal = (range.max - range.min) / (2.0 * bound);
        assert!(c.max_abs_error <= bound, "{c:?}");
        assert!(
            (c.code_count() as f64) < ideal * 1.1 + 3.0,
            "{} codes for about {ideal}",
            c.code_count()
        );
        let wide = target.size() > 2;
        assert_eq!(
            c.guarantee,
            if wide {
                Guarantee::APriori
            } else {
                Guarantee::Exact
            }
        );
        let x = adversarial(source, &c, range, &mut rng);
        let err = codec_error(source, &c, &x);
        assert!(err <= c.max_abs_error, "{err} > {}", c.max_abs_error);
        // The largest scale uses (nearly) all codes.
        let best =
            fit_scale_offset(source, target, range, bound, FitOptions::default()).expect("fits");
        assert!(best.code_count() > c.code_count());
    }
}

/// The JSON form of bit counts round-trips for every width, and bad JSON is a typed error.
#[test]
fn bit_counts_json_round_trips_and_checks() {
    use zquant::choose::{BitCounts, InformationOptions};
    let opts = InformationOptions::default();
    let f = |i: usize, j: usize| (i as f64 * 0.3).sin() * 40.0 + j as f64 * 0.01;
    let a64 = Array2::from_shape_fn((20, 30), |(i, j)| f(i, j));
    let counts = [
        BitCounts::of(&a64, &opts).unwrap(),
        BitCounts::of(&a64.mapv(|x| x as f32), &opts).unwrap(),
        BitCounts::of(&a64.mapv(half::f16::from_f64), &opts).unwrap(),
        BitCounts::of(&a64.mapv(|x| x as i16), &opts).unwrap(),
        BitCounts::of(&a64.mapv(|x| x as u8), &opts).unwrap(),
    ];
    for c in &counts {
        let text = serde_json::to_string(c).unwrap();
        let back: BitCounts = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, c, "{text}");
    }
    let mut j = serde_json::to_value(&counts[1]).unwrap();
    j["a"].as_array_mut().unwrap().pop();
    assert!(serde_json::from_value::<BitCounts>(j).is_err());
    let mut j = serde_json::to_value(&counts[1]).unwrap();
    j["data_type"] = json!("float33");
    assert!(serde_json::from_value::<BitCounts>(j).is_err());
    let mut j = serde_json::to_value(&counts[1]).unwrap();
    j["both"][3] = json!(u64::MAX);
    let e = serde_json::from_value::<BitCounts>(j)
        .unwrap_err()
        .to_string();
    assert!(e.contains("inconsistent"), "{e}");
}

/// Precipitation-like ranges that start at 0: zero must decode as exactly 0 (dry cells stay
/// `== 0` and `>= 0`), with the largest and the smallest scale alike.
#[test]
fn a_fit_decodes_zero_exactly() {
    use zquant::choose::ScaleChoice;
    for source in [DTypeId::Float32, DTypeId::Float64] {
        for (min, max, bound) in [(0.0, 50.0, 0.1), (0.0, 61.75, 0.05), (-3.25, 12.875, 0.01)] {
            for target in [DTypeId::UInt16, DTypeId::Int16, DTypeId::UInt32] {
                for scale in [ScaleChoice::Smallest, ScaleChoice::Largest] {
                    let opts = FitOptions {
                        scale,
                        ..Default::default()
                    };
                    let range = FiniteRange { min, max };
                    let c = fit_scale_offset(source, target, range, bound, opts).unwrap();
                    let codecs = c.codecs();
                    let chain = DynChain::from_array_to_array_codecs(
                        &json!(source.name()),
                        &json!(0.0),
                        codecs.as_array().unwrap(),
                    )
                    .unwrap();
                    let x = [0.0, -0.0, min, max];
                    let dec = as_f64(
                        &chain
                            .decode(&chain.encode(&dyn_array(source, &x)).unwrap())
                            .unwrap(),
                    );
                    assert!(
                        dec[0] == 0.0 && dec[1] == 0.0,
                        "{source:?}->{target:?} {scale:?} over [{min}, {max}]: 0 decodes as {:?} ({codecs})",
                        &dec[..2]
                    );
                    if min >= 0.0 {
                        assert!(dec.iter().all(|&y| y >= 0.0), "{dec:?} ({codecs})");
                    }
                }
            }
        }
    }
}
