//! The fused `scale_offset -> cast_value` kernel (one loop for `(x - offset) * scale`,
//! rounding, range check and narrowing) gives exactly what the two stages give one after
//! the other: the same codes, or the same first failing element and rule, for every
//! rounding mode and out-of-range rule, through the typed `Chain` and through `DynChain`.

use serde_json::json;
use zquant::{ArrayCodec, CastValue, ScalarMap, ScaleOffset};
use zquant::{CastOptions, OutOfRange, Rounding};
use zquant::{DynArray, DynChain, Real};

use crate::common::XorShift as Rng;

/// `n` source values after `(x - 250) * 4`: mostly within `[-20, 300]` (ties, near-ties
/// and in-range integers of every narrow target), with rare specials in some blocks only:
/// NaN, ±Inf, values out of every range, and magnitudes between 2^31 and 2^53 (the wrap
/// limits of the kernels).
fn inputs(rng: &mut Rng, n: usize, rare: bool) -> Vec<f64> {
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        -1e300,
        250.0 + (2f64.powi(40) + 3.5) / 4.0,
        250.0 - (2f64.powi(50) + 0.5) / 4.0,
        250.0 + (2f64.powi(51) - 1.0) / 4.0,
        250.0 + 2f64.powi(51) / 4.0,
        250.0 + 2f64.powi(52) / 4.0,
        250.0 + 2147483647.5 / 4.0,
        250.0 + 4294967295.5 / 4.0,
        250.0 - 2147483648.5 / 4.0,
        250.0 + 65535.5 / 4.0,
        250.0 - 32768.5 / 4.0,
        250.0 + 1e10,
    ];
    (0..n)
        .map(|i| {
            let r = rng.next();
            // A rare element in about one block of kernel size in four.
            if rare && (i / 1024) % 4 == 1 && r.is_multiple_of(997) {
                return specials[(r >> 20) as usize % specials.len()];
            }
            // Quarter steps: after `* 4` every value is an integer, half of them ties after
            // a `* 0.5` elsewhere; plus some non-multiples.
            let q = (r % 1281) as f64 / 4.0 + 245.0;
            if r & 0x100_0000 != 0 {
                q
            } else {
                q + 1.0 / 3.0
            }
        })
        .collect()
}

fn same_as_stages<S: Real, D: Real>(src: &[S], opts: CastOptions) {
    let of = |v: f64| zquant::cast::<f64, S>(v, CastOptions::default()).0;
    let so = ScaleOffset::<S>::new(of(250.0), of(4.0)).expect("valid scale_offset");
    let cv = CastValue::<S, D>::new(opts, ScalarMap::default()).expect("valid cast_value");
    let n = src.len();
    let mut mid = vec![S::default(); n];
    let mut want = vec![D::default(); n];
    let stages = so
        .encode_slice(src, &mut mid)
        .and_then(|()| cv.encode_slice(&mid, &mut want));
    let chain = so.then(cv);
    let mut got = vec![D::default(); n];
    let fused = chain.encode_slice(src, &mut got);
    let what = format!("{} -> {} {opts:?}", S::NAME, D::NAME);
    match (&stages, &fused) {
        (Ok(()), Ok(())) => {
            let (w, g): (Vec<u64>, Vec<u64>) = (
                want.iter().map(|x| x.to_bits()).collect(),
                got.iter().map(|x| x.to_bits()).collect(),
            );
            assert!(w == g, "{what}: codes differ");
        }
        (Err(a), Err(b)) => {
            assert_eq!(
                (a.index, &a.rule),
                (b.index, &b.rule),
                "{what}: errors differ"
            );
        }
        _ => panic!("{what}: stage by stage {stages:?}, fused {fused:?}"),
    }
}

fn all_options(mut check: impl FnMut(CastOptions)) {
    for rounding in Rounding::ALL {
        for oor in [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap] {
            check(CastOptions::new(rounding, oor));
        }
    }
}

fn every_target<S: Real>(src: &[S]) {
    all_options(|o| {
        same_as_stages::<S, u8>(src, o);
        same_as_stages::<S, i8>(src, o);
        same_as_stages::<S, u16>(src, o);
        same_as_stages::<S, i16>(src, o);
        same_as_stages::<S, u32>(src, o);
        same_as_stages::<S, i32>(src, o);
        same_as_stages::<S, i64>(src, o);
    });
}

#[test]
fn fused_chain_matches_the_stages_one_after_the_other() {
    let mut rng = Rng(0x5eed_f00d);
    for rare in [false, true] {
        let x = inputs(&mut rng, 9000, rare);
        every_target::<f64>(&x);
        #[allow(clippy::cast_possible_truncation)]
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        every_target::<f32>(&x32);
    }
}

#[test]
fn fused_dyn_chain_matches_the_typed_stages() {
    let mut rng = Rng(0xdec0de);
    let x = inputs(&mut rng, 9000, true);
    for (name, rounding) in [
        ("nearest-even", Rounding::NearestEven),
        ("towards-zero", Rounding::TowardsZero),
    ] {
        for (oor_json, oor) in [
            (None, OutOfRange::Error),
            (Some("clamp"), OutOfRange::Clamp),
            (Some("wrap"), OutOfRange::Wrap),
        ] {
            let mut cast = json!({"data_type": "uint8", "rounding": name});
            if let Some(o) = oor_json {
                cast["out_of_range"] = json!(o);
            }
            let chain = DynChain::from_array_to_array_codecs(
                &json!("float64"),
                &json!(250.0),
                &[
                    json!({"name": "scale_offset", "configuration": {"offset": 250, "scale": 4}}),
                    json!({"name": "cast_value", "configuration": cast}),
                ],
            )
            .expect("valid chain");
            let input = DynArray::Float64(ndarray::arr1(&x).into_dyn());
            let got = chain.encode(&input);
            let so = ScaleOffset::<f64>::new(250.0, 4.0).expect("valid");
            let cv =
                CastValue::<f64, u8>::new(CastOptions::new(rounding, oor), ScalarMap::default())
                    .expect("valid");
            let mut mid = vec![0.0; x.len()];
            let mut want = vec![0u8; x.len()];
            let stages = so
                .encode_slice(&x, &mut mid)
                .and_then(|()| cv.encode_slice(&mid, &mut want));
            match (stages, got) {
                (Ok(()), Ok(DynArray::UInt8(a))) => {
                    assert_eq!(a.as_slice(), Some(&want[..]), "{name} {oor:?}");
                    let mut out =
                        DynArray::UInt8(ndarray::ArrayD::zeros(ndarray::IxDyn(&[x.len()])));
                    chain.encode_into(&input, &mut out).expect("same as encode");
                    assert_eq!(out, DynArray::UInt8(a), "{name} {oor:?}: encode_into");
                }
                (Err(a), Err(zquant::CodecError::Element(b))) => {
                    assert_eq!((a.index, a.rule), (b.index, b.rule), "{name} {oor:?}");
                }
                (s, g) => panic!("{name} {oor:?}: stage by stage {s:?}, fused {g:?}"),
            }
        }
    }
}

/// `cast_value` with `scalar_map {NaN: value}` (the one-pass kernel that maps NaN itself)
/// gives, element by element, `value` for a NaN and the reference cast for anything else,
/// with the same first failing element.
fn nan_map_matches_reference<S: Real, D: Real>(src: &[S], opts: CastOptions, value: f64) {
    use zquant::MapEntries;
    let seven = zquant::cast::<f64, D>(value, CastOptions::default()).0;
    let nan = zquant::cast::<f64, S>(f64::NAN, CastOptions::default()).0;
    let map = ScalarMap {
        encode: MapEntries::new([(nan, seven)]),
        decode: MapEntries::default(),
        present: true,
    };
    let cv = CastValue::<S, D>::new(opts, map).expect("valid cast_value");
    let mut got = vec![D::default(); src.len()];
    let res = cv.encode_slice(src, &mut got);
    let mut first = None;
    let mut want = vec![D::default(); src.len()];
    for (i, (x, w)) in src.iter().zip(want.iter_mut()).enumerate() {
        if x.to_exact().is_nan() {
            *w = seven;
            continue;
        }
        let mut one = [D::default()];
        match zquant::__private::cast_slice_reference(std::slice::from_ref(x), &mut one, opts) {
            Ok(()) => *w = one[0],
            Err(_) => {
                first.get_or_insert(i);
            }
        }
    }
    let what = format!("{} -> {} {opts:?}", S::NAME, D::NAME);
    match (first, res) {
        (None, Ok(())) => {
            let same = want
                .iter()
                .zip(&got)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{what}: codes differ");
        }
        (Some(i), Err(e)) => assert_eq!(i, e.index, "{what}: first failure"),
        (f, r) => panic!("{what}: reference fails at {f:?}, codec gives {r:?}"),
    }
}

#[test]
fn nan_only_scalar_map_matches_reference() {
    let mut rng = Rng(0x0a0a_0a0a);
    for rare in [false, true] {
        // Values around the targets' ranges, with NaNs in every block and rare specials.
        let x: Vec<f64> = inputs(&mut rng, 9000, rare)
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if i % 613 == 5 {
                    f64::NAN
                } else {
                    (v - 250.0) * 4.0
                }
            })
            .collect();
        #[allow(clippy::cast_possible_truncation)]
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        all_options(|o| {
            nan_map_matches_reference::<f64, u8>(&x, o, 7.0);
            nan_map_matches_reference::<f64, i16>(&x, o, 7.0);
            nan_map_matches_reference::<f64, i32>(&x, o, 7.0);
            nan_map_matches_reference::<f64, u32>(&x, o, 7.0);
            nan_map_matches_reference::<f32, u8>(&x32, o, 7.0);
            nan_map_matches_reference::<f32, i8>(&x32, o, 7.0);
            // Negative values: the kernel maps NaN to the value, then converts it.
            nan_map_matches_reference::<f64, i8>(&x, o, -3.0);
            nan_map_matches_reference::<f64, i16>(&x, o, -32768.0);
            nan_map_matches_reference::<f64, zquant::dtype::Int4>(&x, o, -8.0);
            nan_map_matches_reference::<f64, u8>(&x, o, 255.0);
        });
    }
}

/// The same for float16 and bfloat16 sources (the in-register kernel writes the NaN's
/// value at AVX-512; the `f32` NaN kernel on the widened blocks below it), at every level,
/// NaNs of both signs and with payloads among them.
#[test]
fn nan_only_scalar_map_from_half_floats_matches_reference() {
    use half::{bf16, f16};
    let mut rng = Rng(0x0b0b_0b0b);
    for rare in [false, true] {
        let x: Vec<f64> = inputs(&mut rng, 9000, rare)
            .iter()
            .map(|&v| (v - 250.0) * 4.0)
            .collect();
        let nans = [0x7e00u16, 0xfe00, 0x7c01, 0xffff];
        let bf16_nans = [0x7fc0u16, 0xffc0, 0x7f81, 0xffff];
        let h: Vec<f16> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| match i % 613 {
                5 => f16::from_bits(nans[i % 4]),
                _ => f16::from_f64(v),
            })
            .collect();
        let b: Vec<bf16> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| match i % 613 {
                5 => bf16::from_bits(bf16_nans[i % 4]),
                _ => bf16::from_f64(v),
            })
            .collect();
        for level in zquant::isa::Isa::available() {
            zquant::isa::with_max_isa(level, || {
                all_options(|o| {
                    nan_map_matches_reference::<f16, u8>(&h, o, 7.0);
                    nan_map_matches_reference::<f16, i16>(&h, o, -32768.0);
                    nan_map_matches_reference::<f16, i32>(&h, o, 7.0);
                    nan_map_matches_reference::<f16, u32>(&h, o, 4.0e9);
                    nan_map_matches_reference::<bf16, i8>(&b, o, -3.0);
                    nan_map_matches_reference::<bf16, u16>(&b, o, 65535.0);
                    nan_map_matches_reference::<bf16, i32>(&b, o, -2147483648.0);
                    nan_map_matches_reference::<bf16, i64>(&b, o, 7.0);
                });
            });
        }
    }
}

/// A decode from one byte per element (at least 4096 elements) runs by a 256-entry table
/// of the whole chain's results: the same values as stage by stage, and when a code fails,
/// the same first failing element.
#[test]
fn byte_table_decode_matches_the_stages() {
    let mut rng = Rng(0xb17e);
    let codes: Vec<u8> = (0..10_000).map(|_| (rng.next() >> 13) as u8).collect();
    // Typed: scale_offset(250, 4) then cast_value(uint8), decoded.
    let so = ScaleOffset::<f64>::new(250.0, 4.0).expect("valid");
    let cv = CastValue::<f64, u8>::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        ScalarMap::default(),
    )
    .expect("valid");
    let mut mid = vec![0.0; codes.len()];
    let mut want = vec![0.0; codes.len()];
    cv.decode_slice(&codes, &mut mid).expect("u8 decodes");
    so.decode_slice(&mid, &mut want).expect("f64 decodes");
    let chain = so.then(cv);
    let mut got = vec![0.0; codes.len()];
    chain.decode_slice(&codes, &mut got).expect("u8 decodes");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want));

    // Run-time: int8 <- cast_value(uint8): codes above 127 fail to decode.
    let chain = DynChain::from_array_to_array_codecs(
        &json!("int8"),
        &json!(0),
        &[json!({"name": "cast_value", "configuration": {"data_type": "uint8"}})],
    )
    .expect("valid chain");
    let small: Vec<u8> = codes.iter().map(|c| c & 0x7f).collect();
    let dec = chain
        .decode(&DynArray::UInt8(ndarray::arr1(&small).into_dyn()))
        .expect("in range");
    let want: Vec<i8> = small.iter().map(|&c| c as i8).collect();
    assert_eq!(dec, DynArray::Int8(ndarray::arr1(&want).into_dyn()));
    let mut bad = small.clone();
    bad[7777] = 200;
    bad[9000] = 255;
    match chain.decode(&DynArray::UInt8(ndarray::arr1(&bad).into_dyn())) {
        Err(zquant::CodecError::Element(e)) => assert_eq!(e.index, 7777),
        other => panic!("expected an element error at 7777, got {other:?}"),
    }
}

/// From 16 MiB of output on (and more than 24 MiB with the codes), the byte-table decode
/// writes with non-temporal stores: typed
/// and run-time, the values are those of the stages, to the last element.
#[test]
fn streamed_byte_table_decode_matches_the_stages() {
    let mut rng = Rng(0x5eed);
    let n = (24 << 20) / 8 + 99;
    let codes: Vec<u8> = (0..n).map(|_| (rng.next() >> 13) as u8).collect();
    let so = ScaleOffset::<f64>::new(250.0, 4.0).expect("valid");
    let cv = CastValue::<f64, u8>::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        ScalarMap::default(),
    )
    .expect("valid");
    let mut want = vec![0.0; n];
    for (c, w) in codes.chunks(1000).zip(want.chunks_mut(1000)) {
        let mut mid = vec![0.0; c.len()];
        cv.decode_slice(c, &mut mid).expect("u8 decodes");
        so.decode_slice(&mid, w).expect("f64 decodes");
    }
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mut got = vec![0.0; n];
    so.then(cv)
        .decode_slice(&codes, &mut got)
        .expect("u8 decodes");
    assert!(bits(&got) == bits(&want), "typed");

    let chain = DynChain::from_array_to_array_codecs(
        &json!("float64"),
        &json!(250.0),
        &[
            json!({"name": "scale_offset", "configuration": {"offset": 250.0, "scale": 4.0}}),
            json!({"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp"}}),
        ],
    )
    .expect("valid chain");
    let input = DynArray::UInt8(ndarray::Array1::from(codes).into_dyn());
    let mut out = DynArray::Float64(ndarray::Array1::zeros(n).into_dyn());
    chain.decode_into(&input, &mut out).expect("in range");
    let DynArray::Float64(out) = out else {
        panic!("float64 out");
    };
    let got = out.into_raw_vec_and_offset().0;
    assert!(bits(&got) == bits(&want), "run-time");
}

/// The stages one after the other, on pieces of 4096 elements (too short for the
/// two-stream block loop, so independent of it): the codes, or the first failing element's
/// index and rule.
fn stages_in_pieces<S: Real, D: Real>(
    src: &[S],
    opts: CastOptions,
) -> Result<Vec<u64>, (usize, String)> {
    let of = |v: f64| zquant::cast::<f64, S>(v, CastOptions::default()).0;
    let so = ScaleOffset::<S>::new(of(250.0), of(4.0)).expect("valid scale_offset");
    let cv = CastValue::<S, D>::new(opts, ScalarMap::default()).expect("valid cast_value");
    let mut codes = Vec::with_capacity(src.len());
    for (k, piece) in src.chunks(4096).enumerate() {
        let mut mid = vec![S::default(); piece.len()];
        let mut out = vec![D::default(); piece.len()];
        so.encode_slice(piece, &mut mid)
            .and_then(|()| cv.encode_slice(&mid, &mut out))
            .map_err(|e| (k * 4096 + e.index, format!("{:?}", e.rule)))?;
        codes.extend(out.iter().map(|x| x.to_bits()));
    }
    Ok(codes)
}

/// The fused kernel is offered the whole input at once, and runs long inputs as two
/// streams (the two halves of each 256 KiB window, alternately): the same codes or the
/// same first failing element as the stages run on short pieces, with rare elements in a
/// second half before others in the first, at window edges, and alone.
#[test]
fn fused_chain_over_two_stream_windows_matches_the_stages() {
    fn check<S: Real, D: Real>(x: &[S], what: &str) {
        let of = |v: f64| zquant::cast::<f64, S>(v, CastOptions::default()).0;
        all_options(|o| {
            let want = stages_in_pieces::<S, D>(x, o);
            let so = ScaleOffset::<S>::new(of(250.0), of(4.0)).expect("valid scale_offset");
            let cv = CastValue::<S, D>::new(o, ScalarMap::default()).expect("valid cast_value");
            let mut got = vec![D::default(); x.len()];
            let fused = so
                .then(cv)
                .encode_slice(x, &mut got)
                .map(|()| got.iter().map(|v| v.to_bits()).collect::<Vec<u64>>())
                .map_err(|e| (e.index, format!("{:?}", e.rule)));
            assert!(
                fused == want,
                "{} -> {} {o:?}, {what}: {:?} vs {:?}",
                S::NAME,
                D::NAME,
                fused.as_ref().err(),
                want.as_ref().err()
            );
        });
    }
    let n = 3 * 32768 + 77;
    let mut rng = Rng(0x7_57e4);
    let clean = inputs(&mut rng, n, false);
    let places: [&[usize]; 6] = [
        &[16384 + 5],
        &[16384 + 5, 2000],
        &[32767],
        &[32768 + 16384, 32768 + 300],
        &[n - 1],
        &[10, 16384 + 128, 65536 + 16000],
    ];
    let rare = [f64::NAN, 1e300, f64::NEG_INFINITY, 250.0 + 1e10];
    for (k, at) in places.iter().enumerate() {
        let mut x = clean.clone();
        for (j, &p) in at.iter().enumerate() {
            x[p] = rare[(k + j) % rare.len()];
        }
        let what = format!("rare at {at:?}");
        check::<f64, u8>(&x, &what);
        check::<f64, i16>(&x, &what);
        #[allow(clippy::cast_possible_truncation)]
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        check::<f32, i16>(&x32, &what);
    }
}

/// A one-stage `DynChain` runs its stage over the whole input at once (no intermediate to
/// bound), so a long input reaches the kernels' two-stream block loop: the same codes, or
/// the same first failing element, as the typed `cast_value` on short pieces, with a rare
/// element in a second half before another in the first.
#[test]
fn one_stage_dyn_chain_over_two_stream_windows_matches_the_typed_stage() {
    let n = 3 * 32768 + 77;
    let clean: Vec<f64> = (0..n).map(|i| (i % 251) as f64 + 0.25).collect();
    let places: [&[usize]; 4] = [&[], &[16384 + 5], &[16384 + 5, 2000], &[n - 1]];
    for at in places {
        let mut x = clean.clone();
        for &p in at {
            x[p] = f64::NAN;
        }
        let chain = DynChain::from_array_to_array_codecs(
            &json!("float64"),
            &json!(0.0),
            &[json!({"name": "cast_value", "configuration": {"data_type": "uint8"}})],
        )
        .expect("valid chain");
        let got = chain.encode(&DynArray::Float64(ndarray::arr1(&x).into_dyn()));
        let cv =
            CastValue::<f64, u8>::new(CastOptions::default(), ScalarMap::default()).expect("valid");
        let mut want = vec![0u8; n];
        let pieces = x.chunks(4096).zip(want.chunks_mut(4096)).enumerate();
        let typed = pieces
            .map(|(k, (s, d))| {
                cv.encode_slice(s, d)
                    .map_err(|e| (k * 4096 + e.index, e.rule))
            })
            .find(|r| r.is_err())
            .unwrap_or(Ok(()));
        match (typed, got) {
            (Ok(()), Ok(DynArray::UInt8(a))) => assert_eq!(a.as_slice(), Some(&want[..])),
            (Err(a), Err(zquant::CodecError::Element(b))) => {
                assert_eq!(a, (b.index, b.rule), "rare at {at:?}");
            }
            (t, g) => panic!("rare at {at:?}: typed {t:?}, one-stage chain {g:?}"),
        }
    }
}

/// The decodes from one byte per element that run by the table of the 256 codes (the typed
/// chain, the run-time chain into a caller's array, fixedscaleoffset) give, at every level,
/// the bits that decoding each element alone gives (one element: the stages, or
/// fixedscaleoffset's arithmetic): every code, lengths from the table's threshold on (odd
/// ones, and 24 MiB of output for the streamed lookup), unaligned starts, scales and
/// offsets that round, overflow to infinity or give `-0.0`, and NaN payloads decoded
/// through a scalar map.
#[test]
fn byte_table_decodes_match_each_element_at_every_level() {
    use zquant::isa::{Isa, with_max_isa};
    use zquant::{FixedScaleOffset, PyNumber};
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let longest = (24 << 20) / 8 + 6;
    let codes: Vec<u8> = (0..longest + 8).map(|i| (i * 37 + i / 256) as u8).collect();
    let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
    // (offset, scale): decoding is `code / scale + offset`.
    let pairs = [
        (250.0, 4.0),
        (-0.0, -4.0),
        (1e300, 1e-300),
        (0.1, 3.0),
        (-1.5, 1e-308),
    ];
    let map = ScalarMap::<f64, u8>::new(
        [],
        [
            (7, f64::from_bits(0x7ff0_0000_0000_0123)),
            (9, f64::from_bits(0xfff8_0000_0000_0456)),
        ],
    );
    // Lengths (and the starts of input and output, in elements) of the table's decodes.
    let cases = [
        (4096, 0, 0),
        (4097, 1, 3),
        (4099, 5, 1),
        (8191, 2, 7),
        (longest, 0, 0),
        (longest - 3, 3, 1),
    ];
    let check = |what: &str, want: &[u64], decode: &dyn Fn(&[u8], &mut [f64])| {
        for (len, from, to) in cases {
            if len > (1 << 14) && what.contains("scalar map") {
                continue; // the streamed lookup is the same for every table
            }
            for level in Isa::available() {
                let mut out = vec![f64::from_bits(0x7ff4_dead_0000_0000); to + len];
                with_max_isa(level, || decode(&codes[from..from + len], &mut out[to..]));
                let got = bits(&out[to..]);
                let first = (0..len).find(|&i| got[i] != want[from + i]);
                assert_eq!(
                    first, None,
                    "{what}: {level:?} len {len} starts {from}/{to}"
                );
            }
        }
    };
    for (offset, scale) in pairs {
        // One element at a time: below the table's threshold, so stage by stage.
        let each = |decode: &dyn Fn(&[u8], &mut [f64])| -> Vec<u64> {
            let mut one = [0.0];
            (0..256)
                .map(|c| {
                    decode(&[c as u8], &mut one);
                    one[0].to_bits()
                })
                .collect()
        };
        let of_codes =
            |table: &[u64]| -> Vec<u64> { codes.iter().map(|&c| table[usize::from(c)]).collect() };
        for map in [ScalarMap::default(), map.clone()] {
            let what = format!(
                "typed chain ({offset}, {scale}){}",
                if map.present { " scalar map" } else { "" }
            );
            let so = ScaleOffset::<f64>::new(offset, scale).expect("valid scale_offset");
            let cv = CastValue::<f64, u8>::new(opts, map).expect("valid cast_value");
            let chain = so.then(cv);
            let run = |c: &[u8], o: &mut [f64]| chain.decode_slice(c, o).expect("u8 decodes");
            let want = of_codes(&each(&run));
            check(&what, &want, &run);
        }

        let chain = DynChain::from_array_to_array_codecs(
            &json!("float64"),
            // The offset encodes to code 0, which decodes back to it.
            &json!(offset),
            &[
                json!({"name": "scale_offset", "configuration": {"offset": offset, "scale": scale}}),
                json!({"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp"}}),
            ],
        )
        .expect("valid chain");
        let run = |c: &[u8], o: &mut [f64]| {
            let input = DynArray::UInt8(ndarray::Array1::from(c.to_vec()).into_dyn());
            let mut out = DynArray::Float64(ndarray::Array1::zeros(c.len()).into_dyn());
            chain.decode_into(&input, &mut out).expect("u8 decodes");
            let DynArray::Float64(out) = out else {
                panic!("float64 out");
            };
            o[..c.len()].copy_from_slice(out.as_slice().expect("standard layout"));
        };
        let want = of_codes(&each(&run));
        check(&format!("run-time chain ({offset}, {scale})"), &want, &run);

        let fso = FixedScaleOffset::<f64, u8>::new(PyNumber::Float(offset), PyNumber::Float(scale))
            .expect("valid fixedscaleoffset");
        let run = |c: &[u8], o: &mut [f64]| fso.decode_slice(c, o).expect("u8 decodes");
        let want = of_codes(&each(&run));
        check(
            &format!("fixedscaleoffset ({offset}, {scale})"),
            &want,
            &run,
        );
    }
}
