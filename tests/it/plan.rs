//! `zquant::plan`: on generated fields of every float source type, every chain the planner
//! offers (not only the winner), run for real through the run-time chain and `packbits`,
//! keeps every element within its guarantee, NaN as NaN and zeros exactly zero; the
//! guarantee meets the target; an impossible target is the typed error.

use proptest::prelude::*;
use serde_json::{Value, json};
use zquant::choose::ChooseError;
use zquant::dtype::{WordBuf, Words};
use zquant::plan::{Plan, PlanOptions, PlanStats, Readers, Target, plan};
use zquant::zarr::PackBits;
use zquant::{DTypeId, DynChain};

/// `x` rounded into `id`, as words.
fn words_of(id: DTypeId, xs: &[f64]) -> WordBuf {
    match id {
        DTypeId::Float64 => WordBuf::U64(xs.iter().map(|x| x.to_bits()).collect()),
        DTypeId::Float32 => WordBuf::U32(xs.iter().map(|&x| (x as f32).to_bits()).collect()),
        DTypeId::Float16 => WordBuf::U16(
            xs.iter()
                .map(|&x| half::f16::from_f64(x).to_bits())
                .collect(),
        ),
        DTypeId::BFloat16 => WordBuf::U16(
            xs.iter()
                .map(|&x| half::bf16::from_f64(x).to_bits())
                .collect(),
        ),
        other => panic!("no test source {other:?}"),
    }
}

fn values_of(id: DTypeId, w: Words<'_>) -> Vec<f64> {
    match (id, w) {
        (DTypeId::Float64, Words::U64(w)) => w.iter().map(|&b| f64::from_bits(b)).collect(),
        (DTypeId::Float32, Words::U32(w)) => {
            w.iter().map(|&b| f64::from(f32::from_bits(b))).collect()
        }
        (DTypeId::Float16, Words::U16(w)) => w
            .iter()
            .map(|&b| half::f16::from_bits(b).to_f64())
            .collect(),
        (DTypeId::BFloat16, Words::U16(w)) => w
            .iter()
            .map(|&b| half::bf16::from_bits(b).to_f64())
            .collect(),
        _ => panic!("unexpected words"),
    }
}

/// Plan `xs` (of `id`, shape `[rows, cols]`), samples: the whole array in row blocks.
fn plan_of(
    id: DTypeId,
    xs: &[f64],
    cols: usize,
    fill: &Value,
    target: Target,
    opts: &PlanOptions,
) -> Result<(Plan, WordBuf), ChooseError> {
    let w = words_of(id, xs);
    let rows = xs.len() / cols;
    let stats = PlanStats::of_words(id, w.as_words(), &[rows, cols], Some(1))?;
    // Two pieces merged, as chunks would be.
    let half_rows = rows / 2;
    let (a, b) = (
        w.as_words().sub(0, half_rows * cols),
        w.as_words().sub(half_rows * cols, xs.len()),
    );
    let mut merged = PlanStats::of_words(id, a, &[half_rows, cols], Some(1))?;
    merged.merge(&PlanStats::of_words(
        id,
        b,
        &[rows - half_rows, cols],
        Some(1),
    )?)?;
    assert_eq!(merged.range, stats.range);
    assert_eq!(
        (merged.nan, merged.zeros, merged.elements),
        (stats.nan, stats.zeros, stats.elements)
    );
    let shape_a = [half_rows, cols];
    let shape_b = [rows - half_rows, cols];
    let samples = [(a, &shape_a[..]), (b, &shape_b[..])];
    let p = plan(
        id,
        fill,
        &merged,
        &samples,
        target,
        opts,
        &mut |bytes: &[u8]| bytes.len(),
    )?;
    Ok((p, w))
}

/// Every candidate that was measured, run again here through `DynChain` and `PackBits`.
fn verify(p: &Plan, id: DTypeId, w: &WordBuf, fill: &Value, target: Target) {
    let xs = values_of(id, w.as_words());
    let n = xs.len();
    let (limit, rel) = match target {
        Target::MaxAbsError(b) => (b, false),
        Target::MaxRelError(r) => (r, true),
        Target::Information(_) => (p.abs_bound.unwrap(), false),
    };
    assert!(p.winner().ruled_out.is_none(), "{}", p.table());
    assert!(p.bound() <= limit, "{}", p.table());
    for c in &p.candidates {
        if c.sample_bytes.is_none() {
            continue;
        }
        let bound = c.bound.unwrap();
        // `numcodecs.delta` (zarr-python's, on integer codes) is lossless and wraps: the
        // bound is the lossy filters' alone.
        let filters: Vec<Value> = c
            .filters
            .iter()
            .filter(|f| f["name"] != "numcodecs.delta")
            .cloned()
            .collect();
        let chain = DynChain::from_array_to_array_codecs(&json!(id.name()), fill, &filters)
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let to = chain.encoded_data_type().id;
        let mut enc = WordBuf::zeroed(to.word_bits(), n);
        chain
            .encode_words(w.as_words(), &[n], enc.as_words_mut())
            .unwrap();
        let enc = match &c.serializer {
            Some(s) => {
                let pb = PackBits::new(to, s.get("configuration")).unwrap();
                assert_eq!(s["name"], "packbits");
                pb.decode(&pb.encode(enc.as_words()).unwrap(), n).unwrap()
            }
            None => enc,
        };
        let mut dec = WordBuf::zeroed(id.word_bits(), n);
        chain
            .decode_words(enc.as_words(), &[n], dec.as_words_mut())
            .unwrap();
        let ys = values_of(id, dec.as_words());
        for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
            let what = || {
                format!(
                    "{} [{i}]: {x:e} -> {y:e} (bound {bound:e})\n{}",
                    c.name,
                    p.table()
                )
            };
            if x.is_nan() {
                assert!(y.is_nan(), "{}", what());
            } else if x == 0.0 || x.is_infinite() {
                assert!(y == x, "{}", what());
            } else {
                let allowed = if rel { bound * x.abs() } else { bound };
                assert!((y - x).abs() <= allowed, "{}", what());
            }
        }
    }
}

/// A field of `n` values: `kind` picks the shape of the data, `nan` a share of NaN.
fn field(kind: u8, scale: f64, offset: f64, nan: f64, seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed | 1;
    let mut u = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| {
            let t = i as f64;
            let v = match kind {
                // smooth + noise
                0 => offset + scale * ((t / 37.0).sin() + 0.1 * u()),
                // precipitation: many exact zeros, a skewed tail
                1 => {
                    let r = u();
                    if r < 0.6 {
                        0.0
                    } else {
                        scale * (-(1.0 - u()).ln()).powi(2)
                    }
                }
                // heavy tails
                2 => offset + scale * (std::f64::consts::PI * (u() - 0.5)).tan().clamp(-1e6, 1e6),
                // constant
                3 => offset,
                // subnormal-sized values
                4 => scale * 1e-300 * u(),
                // a huge range
                5 => (u() - 0.5) * 10f64.powi((u() * 30.0) as i32),
                // a tiny range far from zero
                _ => offset + scale * 1e-6 * u(),
            };
            if u() < nan { f64::NAN } else { v }
        })
        .collect()
}

fn source(i: u8) -> DTypeId {
    [
        DTypeId::Float32,
        DTypeId::Float64,
        DTypeId::Float16,
        DTypeId::BFloat16,
    ][i as usize % 4]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_offered_chain_keeps_its_guarantee(
        kind in 0u8..7,
        src in 0u8..4,
        scale_exp in -3i32..4,
        offset in prop_oneof![Just(0.0), Just(273.15), Just(-50.0), Just(1.0e4)],
        nan in prop_oneof![Just(0.0), Just(0.3)],
        bound_exp in -4i32..0,
        rel in any::<bool>(),
        any_reader in any::<bool>(),
        headroom in prop_oneof![Just(0.0), Just(0.1)],
        nan_fill in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let id = source(src);
        let xs = field(kind, 10f64.powi(scale_exp), offset, nan, seed, 32 * 48);
        let fill = if nan_fill { json!("NaN") } else { json!(0.0) };
        let target = if rel {
            Target::MaxRelError(10f64.powi(bound_exp))
        } else {
            let max = xs.iter().filter(|x| x.is_finite()).fold(0.0f64, |a, x| a.max(x.abs()));
            Target::MaxAbsError(10f64.powi(bound_exp) * max.max(1e-3))
        };
        let opts = PlanOptions {
            headroom,
            readers: if any_reader { Readers::Any } else { Readers::ZarrPython },
            lossless_fallback: false,
            ..PlanOptions::default()
        };
        match plan_of(id, &xs, 48, &fill, target, &opts) {
            Ok((p, w)) => verify(&p, id, &w, &fill, target),
            Err(ChooseError::Unreachable { smallest, .. }) => {
                let asked = match target { Target::MaxAbsError(b) | Target::MaxRelError(b) => b, _ => 0.0 };
                prop_assert!(smallest > asked || !any_reader, "smallest {smallest} <= {asked}");
            }
            Err(e) => prop_assert!(false, "{e}"),
        }
    }
}

#[test]
fn information_targets_plan_at_bitround_s_own_bound() {
    let xs = field(0, 10.0, 273.15, 0.1, 7, 64 * 64);
    let fill = json!("NaN");
    let target = Target::Information(0.99);
    let (p, w) = plan_of(
        DTypeId::Float32,
        &xs,
        64,
        &fill,
        target,
        &PlanOptions::default(),
    )
    .unwrap();
    assert!(p.abs_bound.unwrap() > 0.0);
    eprintln!("{}", p.table());
    verify(&p, DTypeId::Float32, &w, &fill, target);
}

/// Precipitation: zeros decode as exactly 0 through the integer chain, and it wins over
/// float32 there.
#[test]
fn precipitation_zeros_stay_zero() {
    let xs = field(1, 2.0, 0.0, 0.0, 11, 64 * 64);
    let fill = json!(0.0);
    let target = Target::MaxAbsError(0.1);
    let (p, w) = plan_of(
        DTypeId::Float32,
        &xs,
        64,
        &fill,
        target,
        &PlanOptions::default(),
    )
    .unwrap();
    verify(&p, DTypeId::Float32, &w, &fill, target);
    eprintln!("{}", p.table());
    let int = p
        .candidates
        .iter()
        .find(|c| c.name.starts_with("scale_offset+cast_value uint"))
        .unwrap();
    assert!(int.ruled_out.is_none(), "{}", p.table());
    // The whole budget: the step is close to twice the bound.
    assert!(int.bound.unwrap() > 0.09, "{}", p.table());
}

#[test]
fn impossible_targets_name_the_smallest_bound() {
    let xs = field(0, 10.0, 273.15, 0.0, 3, 32 * 32);
    let e = plan_of(
        DTypeId::Float32,
        &xs,
        32,
        &json!(0.0),
        Target::MaxAbsError(1e-12),
        &PlanOptions::default(),
    )
    .unwrap_err();
    match &e {
        ChooseError::Unreachable { smallest, .. } => assert!(*smallest > 1e-12 && *smallest < 1e-3),
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("smallest bound"), "{e}");
    // With the fallback, the lossless baseline.
    let opts = PlanOptions {
        lossless_fallback: true,
        ..PlanOptions::default()
    };
    let (p, _) = plan_of(
        DTypeId::Float32,
        &xs,
        32,
        &json!(0.0),
        Target::MaxAbsError(1e-12),
        &opts,
    )
    .unwrap();
    assert!(p.winner().name.starts_with("lossless"), "{}", p.table());
    assert_eq!(p.bound(), 0.0);
    // Invalid bounds are their own error.
    assert!(matches!(
        plan_of(
            DTypeId::Float32,
            &xs,
            32,
            &json!(0.0),
            Target::MaxAbsError(-1.0),
            &opts
        ),
        Err(ChooseError::Bound(_))
    ));
}

/// With headroom, values beyond the planned range (an archive that grows warmer) still
/// encode within the bound; without it, the integer chain refuses them with an error, never
/// silently.
#[test]
fn headroom_leaves_room_for_data_to_come() {
    let xs = field(0, 10.0, 280.0, 0.0, 5, 32 * 32);
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x as f32 as f64), b.max(x as f32 as f64))
        });
    let warmer = [hi + 0.09 * (hi - lo), lo - 0.09 * (hi - lo)];
    for (headroom, fits) in [(0.1, true), (0.0, false)] {
        let opts = PlanOptions {
            headroom,
            ..PlanOptions::default()
        };
        let (p, _) = plan_of(
            DTypeId::Float32,
            &xs,
            32,
            &json!("NaN"),
            Target::MaxAbsError(0.01),
            &opts,
        )
        .unwrap();
        let c = p
            .candidates
            .iter()
            .find(|c| c.name.ends_with("uint16"))
            .unwrap();
        let chain =
            DynChain::from_array_to_array_codecs(&json!("float32"), &json!("NaN"), &c.filters)
                .unwrap();
        let w = words_of(DTypeId::Float32, &warmer);
        let mut enc = WordBuf::zeroed(16, 2);
        let r = chain.encode_words(w.as_words(), &[2], enc.as_words_mut());
        assert_eq!(r.is_ok(), fits, "headroom {headroom}: {r:?}");
        if fits {
            let mut dec = WordBuf::zeroed(32, 2);
            chain
                .decode_words(enc.as_words(), &[2], dec.as_words_mut())
                .unwrap();
            let ys = values_of(DTypeId::Float32, dec.as_words());
            for (x, y) in values_of(DTypeId::Float32, w.as_words()).iter().zip(&ys) {
                assert!((x - y).abs() <= c.bound.unwrap(), "{x} -> {y}");
            }
        }
    }
}

/// Chains zarrs cannot read (`numcodecs.delta`) are ruled out by Rust's default readers,
/// weighed under zarr-python's; shuffled chains list their shuffle as a bytes codec.
#[test]
fn readers_rule_out_what_zarrs_cannot_read() {
    let xs = field(0, 10.0, 273.15, 0.0, 3, 64 * 64);
    let has_delta =
        |c: &zquant::plan::Candidate| c.filters.iter().any(|f| f["name"] == "numcodecs.delta");
    let plan_with = |readers| {
        let opts = PlanOptions {
            readers,
            ..PlanOptions::default()
        };
        plan_of(
            DTypeId::Float32,
            &xs,
            64,
            &json!("NaN"),
            Target::MaxAbsError(0.01),
            &opts,
        )
        .unwrap()
        .0
    };
    let rust = plan_with(Readers::default());
    assert!(rust.winner().readers.contains(&"zarrs"), "{}", rust.table());
    for c in rust.candidates.iter().filter(|c| has_delta(c)) {
        assert!(c.ruled_out.is_some(), "{}", rust.table());
        assert!(!c.readers.contains(&"zarrs"));
    }
    let python = plan_with(Readers::ZarrPython);
    assert!(
        python
            .candidates
            .iter()
            .any(|c| has_delta(c) && c.ruled_out.is_none()),
        "{}",
        python.table()
    );
    for c in python
        .candidates
        .iter()
        .filter(|c| !c.bytes_codecs.is_empty())
    {
        assert_eq!(c.bytes_codecs[0]["name"], "numcodecs.shuffle");
        assert_eq!(c.codecs().last(), c.bytes_codecs.last());
    }
}
