//! Every code of every small float type decodes to the value its data-type README defines,
//! and to the value the conformance vectors (`cast_value.json`) pair it with.
//!
//! The reference decoder is `formula` (written from the READMEs, sharing nothing with
//! zquant); the facts each README states outright are also asserted literally.

use std::path::PathBuf;

use crate::formula::{self, Fmt, SMALL, same_f64};
use serde_json::Value;
use zquant::Real;
use zquant::dtype::*;

/// zquant's decoded value of `code` in `T`.
fn zq<T: Real>(code: u64) -> f64 {
    T::from_bits(code).to_exact().to_f64()
}

/// zquant's decoded value of `code` in the small float type named `name`.
fn zq_by_name(name: &str, code: u64) -> f64 {
    match name {
        "float4_e2m1fn" => zq::<Float4E2M1Fn>(code),
        "float6_e2m3fn" => zq::<Float6E2M3Fn>(code),
        "float6_e3m2fn" => zq::<Float6E3M2Fn>(code),
        "float8_e3m4" => zq::<Float8E3M4>(code),
        "float8_e4m3" => zq::<Float8E4M3>(code),
        "float8_e4m3b11fnuz" => zq::<Float8E4M3B11Fnuz>(code),
        "float8_e4m3fnuz" => zq::<Float8E4M3Fnuz>(code),
        "float8_e5m2" => zq::<Float8E5M2>(code),
        "float8_e5m2fnuz" => zq::<Float8E5M2Fnuz>(code),
        "float8_e8m0fnu" => zq::<Float8E8M0Fnu>(code),
        other => panic!("not a small float type: {other}"),
    }
}

fn is_small_float(name: &str) -> bool {
    SMALL.iter().any(|f| f.name == name)
}

/// zquant's element read of one byte (upper bits of sub-byte types must be ignored).
fn zq_read_byte<T: Real>(byte: u8) -> f64 {
    T::read_le(&[byte]).to_exact().to_f64()
}

fn check_type<T: Real>(f: Fmt) {
    assert_eq!(T::NAME, f.name);
    assert_eq!(T::BITS, f.bits(), "{}", f.name);
    assert_eq!(T::SIZE, 1, "{}: one byte per element", f.name);
    for code in 0..f.codes() {
        let want = f.value(code);
        let got = zq::<T>(code);
        assert!(
            same_f64(got, want),
            "{} code {code:#04x}: zquant {got:?}, README formula {want:?}",
            f.name
        );
    }
    // Sub-byte types: "the upper bits are ignored" on read, and written as zero.
    for byte in 0..=255u8 {
        let low = byte as u64 & (f.codes() - 1);
        let got = zq_read_byte::<T>(byte);
        assert!(same_f64(got, f.value(low)), "{} byte {byte:#04x}", f.name);
        let mut out = [0xaau8];
        T::read_le(&[byte]).write_le(&mut out);
        assert_eq!(out[0] as u64, low, "{} write of byte {byte:#04x}", f.name);
    }
}

#[test]
fn every_code_matches_the_readme_formula() {
    check_type::<Float4E2M1Fn>(formula::FLOAT4_E2M1FN);
    check_type::<Float6E2M3Fn>(formula::FLOAT6_E2M3FN);
    check_type::<Float6E3M2Fn>(formula::FLOAT6_E3M2FN);
    check_type::<Float8E3M4>(formula::FLOAT8_E3M4);
    check_type::<Float8E4M3>(formula::FLOAT8_E4M3);
    check_type::<Float8E4M3B11Fnuz>(formula::FLOAT8_E4M3B11FNUZ);
    check_type::<Float8E4M3Fnuz>(formula::FLOAT8_E4M3FNUZ);
    check_type::<Float8E5M2>(formula::FLOAT8_E5M2);
    check_type::<Float8E5M2Fnuz>(formula::FLOAT8_E5M2FNUZ);
    check_type::<Float8E8M0Fnu>(formula::FLOAT8_E8M0FNU);
}

/// All codes of `T` that decode to NaN, ±Inf, and the largest finite value.
fn census<T: Real>(codes: u64) -> (Vec<u64>, Vec<u64>, f64) {
    let mut nans = vec![];
    let mut infs = vec![];
    let mut max = f64::NEG_INFINITY;
    for c in 0..codes {
        let v = zq::<T>(c);
        if v.is_nan() {
            nans.push(c);
        } else if v.is_infinite() {
            infs.push(c);
        } else {
            max = max.max(v);
        }
    }
    (nans, infs, max)
}

/// The README facts, literally.
#[test]
fn readme_facts() {
    // float4_e2m1fn: "Extended range: no infinity, no NaN"; max 6.0 (OCP MX E2M1).
    let (nans, infs, max) = census::<Float4E2M1Fn>(16);
    assert!(nans.is_empty() && infs.is_empty());
    assert_eq!(max, 6.0);
    assert_eq!(zq::<Float4E2M1Fn>(0x7), 6.0);
    assert_eq!(zq::<Float4E2M1Fn>(0x1), 0.5, "smallest subnormal");
    assert_eq!(zq::<Float4E2M1Fn>(0x8).to_bits(), (-0.0f64).to_bits());
    assert_eq!(zq::<Float4E2M1Fn>(0xf), -6.0);

    // float6_e2m3fn: no Inf, no NaN, max 7.5.
    let (nans, infs, max) = census::<Float6E2M3Fn>(64);
    assert!(nans.is_empty() && infs.is_empty());
    assert_eq!(max, 7.5);
    assert_eq!(zq::<Float6E2M3Fn>(0x1f), 7.5);
    assert_eq!(zq::<Float6E2M3Fn>(0x01), 0.125);
    assert_eq!(zq::<Float6E2M3Fn>(0x20).to_bits(), (-0.0f64).to_bits());

    // float6_e3m2fn: no Inf, no NaN, max 28.
    let (nans, infs, max) = census::<Float6E3M2Fn>(64);
    assert!(nans.is_empty() && infs.is_empty());
    assert_eq!(max, 28.0);
    assert_eq!(zq::<Float6E3M2Fn>(0x1f), 28.0);
    assert_eq!(zq::<Float6E3M2Fn>(0x01), 0.0625);

    // float8_e3m4: IEEE, `"NaN"` is 0x78; Inf 0x70; max 15.5.
    let (nans, infs, max) = census::<Float8E3M4>(256);
    assert!(nans.contains(&0x78));
    assert_eq!(
        nans.len(),
        2 * 15,
        "all-ones exponent, non-zero mantissa, both signs"
    );
    assert_eq!(infs, vec![0x70, 0xf0]);
    assert_eq!(zq::<Float8E3M4>(0x70), f64::INFINITY);
    assert_eq!(zq::<Float8E3M4>(0xf0), f64::NEG_INFINITY);
    assert_eq!(max, 15.5);
    assert_eq!(zq::<Float8E3M4>(0x6f), 15.5);
    assert_eq!(zq::<Float8E3M4>(0x01), 2f64.powi(-6));

    // float8_e4m3: IEEE, `"NaN"` is 0x7c; +Inf 0x78; so max is 240 (not OCP's 448).
    let (nans, infs, max) = census::<Float8E4M3>(256);
    assert!(nans.contains(&0x7c));
    assert_eq!(nans.len(), 2 * 7);
    assert_eq!(infs, vec![0x78, 0xf8]);
    assert_eq!(max, 240.0);
    assert_eq!(zq::<Float8E4M3>(0x77), 240.0);
    assert_eq!(zq::<Float8E4M3>(0x38), 1.0);
    assert_eq!(zq::<Float8E4M3>(0x01), 2f64.powi(-9));
    assert_eq!(zq::<Float8E4M3>(0x80).to_bits(), (-0.0f64).to_bits());

    // float8_e4m3b11fnuz: bias 11, "NaN represented by 0b1000'0000", no Inf, no -0.
    let (nans, infs, max) = census::<Float8E4M3B11Fnuz>(256);
    assert_eq!(nans, vec![0x80]);
    assert!(infs.is_empty());
    assert_eq!(max, 30.0);
    assert_eq!(zq::<Float8E4M3B11Fnuz>(0x7f), 30.0);
    assert_eq!(zq::<Float8E4M3B11Fnuz>(0x58), 1.0);
    assert_eq!(zq::<Float8E4M3B11Fnuz>(0x01), 2f64.powi(-13));

    // float8_e4m3fnuz: bias 8, NaN 0x80, no Inf, no -0, max 240.
    let (nans, infs, max) = census::<Float8E4M3Fnuz>(256);
    assert_eq!(nans, vec![0x80]);
    assert!(infs.is_empty());
    assert_eq!(max, 240.0);
    assert_eq!(zq::<Float8E4M3Fnuz>(0x7f), 240.0);
    assert_eq!(zq::<Float8E4M3Fnuz>(0x40), 1.0);
    assert_eq!(zq::<Float8E4M3Fnuz>(0x01), 2f64.powi(-10));

    // float8_e5m2: IEEE, `"NaN"` is 0x7e; Inf 0x7c; max 57344.
    let (nans, infs, max) = census::<Float8E5M2>(256);
    assert!(nans.contains(&0x7e));
    assert_eq!(nans.len(), 2 * 3);
    assert_eq!(infs, vec![0x7c, 0xfc]);
    assert_eq!(max, 57344.0);
    assert_eq!(zq::<Float8E5M2>(0x7b), 57344.0);
    assert_eq!(zq::<Float8E5M2>(0x3c), 1.0);
    assert_eq!(zq::<Float8E5M2>(0x01), 2f64.powi(-16));

    // float8_e5m2fnuz: bias 16, NaN 0x80, no Inf, max 57344.
    let (nans, infs, max) = census::<Float8E5M2Fnuz>(256);
    assert_eq!(nans, vec![0x80]);
    assert!(infs.is_empty());
    assert_eq!(max, 57344.0);
    assert_eq!(zq::<Float8E5M2Fnuz>(0x7f), 57344.0);
    assert_eq!(zq::<Float8E5M2Fnuz>(0x40), 1.0);
    assert_eq!(zq::<Float8E5M2Fnuz>(0x01), 2f64.powi(-17));

    // float8_e8m0fnu: unsigned, 2^(e-127), "No zero, no infinity, NaN represented by
    // 0b1111'1111": 0x7f = 1.0, 0x00 = 2^-127, 0xfe = 2^127.
    let (nans, infs, max) = census::<Float8E8M0Fnu>(256);
    assert_eq!(nans, vec![0xff]);
    assert!(infs.is_empty());
    assert_eq!(max, 2f64.powi(127));
    assert_eq!(zq::<Float8E8M0Fnu>(0x7f), 1.0);
    assert_eq!(zq::<Float8E8M0Fnu>(0x80), 2.0);
    assert_eq!(zq::<Float8E8M0Fnu>(0x00), 2f64.powi(-127));
    assert_eq!(zq::<Float8E8M0Fnu>(0xfe), 2f64.powi(127));
    assert!(
        (0..255).all(|c| zq::<Float8E8M0Fnu>(c) > 0.0),
        "no zero, no negatives"
    );

    // The fnuz types have no -0 at all; the fn/IEEE ones have exactly one.
    for f in SMALL {
        let neg_zeros = (0..f.codes())
            .filter(|&c| {
                let v = zq_by_name(f.name, c);
                v == 0.0 && v.is_sign_negative()
            })
            .count();
        let want = match f.specials {
            formula::Specials::Fnuz | formula::Specials::E8M0 => 0,
            _ => 1,
        };
        assert_eq!(neg_zeros, want, "{}: -0 codes", f.name);
    }
}

fn conformance_path() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/conformance/cast_value.json"
    ))
}

/// A `values` entry as an `f64` (-0.0 keeps its sign).
fn json_value(v: &Value) -> f64 {
    match v {
        Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            other => panic!("unexpected string value {other:?}"),
        },
        Value::Number(n) => n
            .to_string()
            .parse::<f64>()
            .unwrap_or_else(|e| panic!("value {n}: {e}")),
        other => panic!("unexpected value {other}"),
    }
}

fn hex_bytes(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length: {s}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Every (byte, value) pair the conformance vectors state for a small float type.
#[test]
fn every_code_matches_the_conformance_vectors() {
    let path = conformance_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the conformance vectors at {} ({e}); they are in the repository, \
             tests/data/conformance/",
            path.display()
        )
    });
    let doc: Value = serde_json::from_str(&text).expect("cast_value.json is JSON");
    let cases = doc["cases"].as_array().expect("a `cases` array");
    let mut pairs = std::collections::BTreeMap::<&str, usize>::new();
    let mut distinct = std::collections::BTreeSet::<(String, u8)>::new();
    for case in cases {
        let id = case["id"].as_str().unwrap_or("?");
        let mut arrays: Vec<(&str, &Value)> = vec![];
        for key in ["input", "encoded", "decoded"] {
            if let Some(a) = case.get(key).filter(|a| !a.is_null()) {
                arrays.push((key, a));
            }
        }
        if let Some(Value::Array(inter)) = case.get("intermediate") {
            arrays.extend(inter.iter().map(|a| ("intermediate", a)));
        }
        for (key, a) in arrays {
            let Some(dt) = a["data_type"].as_str() else {
                continue;
            };
            if !is_small_float(dt) {
                continue;
            }
            let bytes = hex_bytes(a["hex"].as_str().expect("hex"));
            let values = a["values"].as_array().expect("values");
            assert_eq!(
                bytes.len(),
                values.len(),
                "{id} {key}: one byte per element"
            );
            for (b, v) in bytes.iter().zip(values) {
                let want = json_value(v);
                let got = zq_by_name(dt, *b as u64);
                assert!(
                    same_f64(got, want),
                    "{id} {key}: {dt} byte {b:#04x} is {want:?} in the vectors, zquant decodes {got:?}"
                );
                let name = SMALL.iter().find(|f| f.name == dt).unwrap().name;
                *pairs.entry(name).or_default() += 1;
                distinct.insert((dt.to_string(), *b));
            }
        }
    }
    for f in SMALL {
        assert!(
            pairs.get(f.name).copied().unwrap_or(0) > 0,
            "no vector pairs for {}",
            f.name
        );
    }
    // The vectors cover a good part of each code space; report how much.
    for f in SMALL {
        let n = distinct.iter().filter(|(d, _)| d == f.name).count();
        eprintln!("{}: {} pairs, {n} distinct codes", f.name, pairs[f.name]);
    }
}
