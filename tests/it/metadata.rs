//! Codec metadata: `to_metadata()` parses back to the same codec, and invalid metadata gives
//! the right [`MetadataError`] variant, naming the codec and the field; element errors name
//! the codec, direction, rule, index and value.

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn, arr1};
use serde_json::{Value, json};
use zquant::Element;
use zquant::MapEntries;
use zquant::dtype::{
    Complex, DateTime64, FillValueError, Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4,
    Float8E4M3, Float8E4M3B11Fnuz, Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz, Float8E8M0Fnu, Int2,
    Int4, TimeDelta64, UInt2, UInt4,
};
use zquant::{
    ArrayCodec, ArrayCodecExt, BitRound, CastOptions, CastValue, DType, DynChain, MetadataError,
    OutOfRange, Real, Rounding, ScalarMap, ScaleOffset,
};
use zquant::{CodecError, ElementError, Rule};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

use crate::common::XorShift as Rng;

/// Every code of a type of at most 16 bits, else `n` random codes plus a few edges.
fn codes<T: Real>(rng: &mut Rng, n: usize) -> Vec<T> {
    if T::BITS <= 16 {
        return (0..1u64 << T::BITS).map(T::from_bits).collect();
    }
    let mask = if T::BITS == 64 {
        u64::MAX
    } else {
        (1 << T::BITS) - 1
    };
    let mut v: Vec<T> = (0..n).map(|_| T::from_bits(rng.next() & mask)).collect();
    v.extend([0, 1, mask, mask >> 1, (mask >> 1) + 1].map(T::from_bits));
    v
}

fn build(dt: &Value, fill: &Value, codecs: &[Value]) -> Result<DynChain, MetadataError> {
    DynChain::from_array_to_array_codecs(dt, fill, codecs)
}

fn list(md: Value) -> Vec<Value> {
    match md {
        Value::Array(v) => v,
        other => vec![other],
    }
}

fn arr<T: DType>(v: Vec<T>) -> ArrayD<T> {
    ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).unwrap()
}

/// Compare a typed result with a run-time one.
fn same_result<T: Element>(
    typed: Result<ArrayD<T>, CodecError>,
    dynamic: Result<zquant::DynArray, CodecError>,
    what: &str,
) {
    match (typed, dynamic) {
        (Ok(t), Ok(d)) => assert!(T::into_dyn(t).same_as(&d), "{what}: results differ"),
        (Err(t), Err(d)) => assert_eq!(t, d, "{what}"),
        (t, d) => panic!("{what}: typed {t:?}, dynamic {d:?}"),
    }
}

/// `codec.to_metadata()` builds a [`DynChain`] with the same metadata, the same encoded fill
/// value and the same encode and decode results on `input` and `encoded`; and the chain's
/// own metadata parses back again to the same.
fn check_roundtrip<C>(codec: &C, fill: C::In, input: Vec<C::In>, encoded: Vec<C::Out>)
where
    C: ArrayCodec,
    C::In: Element,
    C::Out: Element,
{
    let md = list(codec.to_metadata());
    let what = format!("{}", Value::Array(md.clone()));
    let fill_json = fill.fill_value_to_json();
    let chain = build(&json!(C::In::NAME), &fill_json, &md)
        .unwrap_or_else(|e| panic!("{what} fill {fill_json}: {e}"));
    assert_eq!(chain.to_metadata(), Value::Array(md.clone()), "{what}");
    let again = build(
        &chain.data_type().to_json(),
        &fill_json,
        &list(chain.to_metadata()),
    )
    .unwrap();
    assert_eq!(again.to_metadata(), chain.to_metadata(), "{what}");
    assert_eq!(chain.encoded_data_type().id, C::Out::ID, "{what}");

    let typed_fill = codec.encode_fill_value(fill).unwrap();
    assert!(
        C::Out::into_dyn(ArrayD::from_elem(IxDyn(&[]), typed_fill))
            .same_as(chain.encoded_fill_value()),
        "{what}: encoded fill"
    );

    let input = arr(input);
    same_result(
        codec.encode(&input),
        chain.encode(&C::In::into_dyn(input.clone())),
        &what,
    );
    let encoded = arr(encoded);
    same_result(
        codec.decode(&encoded),
        chain.decode(&C::Out::into_dyn(encoded.clone())),
        &what,
    );
}

// ---------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------

fn scale_offset_roundtrip<T: Real + Element>(seed: u64) {
    let mut rng = Rng(seed);
    let all = codes::<T>(&mut rng, 3000);
    let mut checked = 0;
    for _ in 0..40 {
        let o = all[(rng.next() % all.len() as u64) as usize];
        let s = all[(rng.next() % all.len() as u64) as usize];
        let Ok(c) = ScaleOffset::<T>::new(o, s) else {
            continue;
        };
        // Any fill value that survives the codec.
        let Some(fill) = all
            .iter()
            .copied()
            .find(|&f| c.encode_fill_value(f).is_ok())
        else {
            continue;
        };
        check_roundtrip(&c, fill, all.clone(), all.clone());
        checked += 1;
    }
    assert!(checked >= 10, "{}: only {checked} codecs checked", T::NAME);
    // No configuration at all, and only one of the two scalars.
    let one = ScaleOffset::<T>::from_configuration(None).unwrap();
    assert_eq!(one.to_metadata(), json!({"name": "scale_offset"}));
    // Scalars are written back in the type's canonical fill-value encoding (a float type
    // writes `1.0` where the input wrote `1`): the keys written stay exactly those given, the
    // configuration parses back to the same codec, and the metadata is then a fixed point.
    for cfg in [json!({"offset": 1}), json!({"scale": 1}), json!({})] {
        let c = ScaleOffset::<T>::from_configuration(Some(&cfg)).unwrap();
        let md = c.to_metadata();
        assert_eq!(md["name"], json!("scale_offset"), "{}", T::NAME);
        let written = md.get("configuration");
        let keys = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(keys(written), keys(Some(&cfg)), "{}", T::NAME);
        let back = ScaleOffset::<T>::from_configuration(written).unwrap();
        assert_eq!(
            (back.offset().to_bits(), back.scale().to_bits()),
            (c.offset().to_bits(), c.scale().to_bits()),
            "{}",
            T::NAME
        );
        assert_eq!(back.to_metadata(), md, "{}", T::NAME);
    }
}

fn bitround_roundtrip<T: DType + Element>(max_keepbits: u64, input: Vec<T>, fill: T) {
    for k in 1..=max_keepbits {
        let c = BitRound::<T>::new(k).unwrap();
        assert_eq!(
            c.to_metadata(),
            json!({"name": "bitround", "configuration": {"keepbits": k}})
        );
        check_roundtrip(&c, fill, input.clone(), input.clone());
        let alias = BitRound::<T>::from_configuration(Some(&json!({"keepbits": k})), true).unwrap();
        assert_eq!(alias.to_metadata()["name"], json!("numcodecs.bitround"));
        check_roundtrip(&alias, fill, input.clone(), input.clone());
    }
}

fn cast_roundtrip<S: Real + Element, D: Real + Element>(seed: u64) {
    let mut rng = Rng(seed);
    let src = codes::<S>(&mut rng, 2000);
    let dst = codes::<D>(&mut rng, 2000);
    let pick_s = |r: &mut Rng| src[(r.next() % src.len() as u64) as usize];
    let pick_d = |r: &mut Rng| dst[(r.next() % dst.len() as u64) as usize];
    let int_target = matches!(D::KIND, zquant::Kind::Int(_));
    let mut checked = 0;
    for (i, rounding) in Rounding::ALL.into_iter().enumerate() {
        for oor in [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap] {
            if oor == OutOfRange::Wrap && !int_target {
                assert!(
                    CastValue::<S, D>::new(CastOptions::new(rounding, oor), ScalarMap::default())
                        .is_err()
                );
                continue;
            }
            let map = if i % 2 == 0 {
                ScalarMap::default()
            } else {
                let enc: Vec<(S, D)> = (0..3)
                    .map(|_| (pick_s(&mut rng), pick_d(&mut rng)))
                    .collect();
                let dec: Vec<(D, S)> = (0..2)
                    .map(|_| (pick_d(&mut rng), pick_s(&mut rng)))
                    .collect();
                ScalarMap {
                    encode: MapEntries::new(enc),
                    decode: MapEntries::new(dec),
                    present: true,
                }
            };
            let c = CastValue::<S, D>::new(CastOptions::new(rounding, oor), map).unwrap();
            let Some(fill) = src
                .iter()
                .copied()
                .find(|&f| c.encode_fill_value(f).is_ok())
            else {
                continue;
            };
            check_roundtrip(&c, fill, src.clone(), dst.clone());
            checked += 1;
        }
    }
    assert!(checked >= 8, "{} -> {}: {checked}", S::NAME, D::NAME);
}

macro_rules! each_real {
    ($f:ident) => {
        $f::<i8>(1);
        $f::<i16>(2);
        $f::<i32>(3);
        $f::<i64>(4);
        $f::<u8>(5);
        $f::<u16>(6);
        $f::<u32>(7);
        $f::<u64>(8);
        $f::<Int2>(9);
        $f::<Int4>(10);
        $f::<UInt2>(11);
        $f::<UInt4>(12);
        $f::<Float4E2M1Fn>(13);
        $f::<Float6E2M3Fn>(14);
        $f::<Float6E3M2Fn>(15);
        $f::<Float8E3M4>(16);
        $f::<Float8E4M3>(17);
        $f::<Float8E4M3B11Fnuz>(18);
        $f::<Float8E4M3Fnuz>(19);
        $f::<Float8E5M2>(20);
        $f::<Float8E5M2Fnuz>(21);
        $f::<Float8E8M0Fnu>(22);
        $f::<bf16>(23);
        $f::<f16>(24);
        $f::<f32>(25);
        $f::<f64>(26);
    };
}

#[test]
fn scale_offset_metadata_roundtrip() {
    each_real!(scale_offset_roundtrip);
}

#[test]
fn bitround_metadata_roundtrip() {
    let mut rng = Rng(99);
    bitround_roundtrip::<f16>(10, codes(&mut rng, 0), f16::from_f32(1.0));
    bitround_roundtrip::<bf16>(7, codes(&mut rng, 0), bf16::NAN);
    bitround_roundtrip::<f32>(23, codes(&mut rng, 500), 0.1);
    bitround_roundtrip::<f64>(52, codes(&mut rng, 500), -0.0);
    bitround_roundtrip::<i8>(10, codes(&mut rng, 0), -3);
    bitround_roundtrip::<u64>(70, codes(&mut rng, 300), 12345);
    bitround_roundtrip::<i32>(33, codes(&mut rng, 300), i32::MIN);
    let cplx: Vec<Complex<f32>> = (0..300)
        .map(|_| Complex {
            re: f32::from_bits(rng.next() as u32),
            im: f32::from_bits((rng.next() >> 32) as u32),
        })
        .collect();
    bitround_roundtrip::<Complex<f32>>(
        23,
        cplx,
        Complex {
            re: 1.5,
            im: f32::NAN,
        },
    );
    // Time types take their unit from the array metadata, which a typed codec does not
    // know, so they go through `from_metadata` directly.
    let times: Vec<DateTime64> = (0..300)
        .map(|_| DateTime64(rng.next() as i64))
        .chain([DateTime64(i64::MIN), DateTime64(i64::MAX), DateTime64(-1)])
        .collect();
    let deltas: Vec<TimeDelta64> = times.iter().map(|t| TimeDelta64(t.0)).collect();
    for k in [1u64, 7, 63, 64, 65] {
        for name in ["numpy.datetime64", "numpy.timedelta64"] {
            let dt = json!({"name": name, "configuration": {"unit": "ms", "scale_factor": 10}});
            let md = vec![json!({"name": "bitround", "configuration": {"keepbits": k}})];
            let chain = build(&dt, &json!("NaT"), &md).unwrap();
            assert_eq!(chain.data_type().to_json(), dt);
            assert_eq!(chain.to_metadata(), Value::Array(md.clone()));
            if name == "numpy.timedelta64" {
                let c = BitRound::<TimeDelta64>::new(k).unwrap();
                let input = arr(deltas.clone());
                same_result(
                    c.encode(&input),
                    chain.encode(&TimeDelta64::into_dyn(input.clone())),
                    name,
                );
            } else {
                let c = BitRound::<DateTime64>::new(k).unwrap();
                let input = arr(times.clone());
                same_result(
                    c.encode(&input),
                    chain.encode(&DateTime64::into_dyn(input.clone())),
                    name,
                );
            }
        }
    }
}

#[test]
fn cast_value_metadata_roundtrip() {
    macro_rules! targets {
        ($s:ty, $seed:expr) => {
            cast_roundtrip::<$s, u8>($seed);
            cast_roundtrip::<$s, i8>($seed + 1);
            cast_roundtrip::<$s, UInt2>($seed + 2);
            cast_roundtrip::<$s, i64>($seed + 3);
            cast_roundtrip::<$s, Float8E4M3Fnuz>($seed + 4);
            cast_roundtrip::<$s, Float8E8M0Fnu>($seed + 5);
            cast_roundtrip::<$s, Float4E2M1Fn>($seed + 6);
            cast_roundtrip::<$s, bf16>($seed + 7);
            cast_roundtrip::<$s, f32>($seed + 8);
        };
    }
    targets!(f64, 100);
    targets!(f16, 200);
    targets!(i16, 300);
    targets!(u8, 400);
    targets!(Float8E4M3, 500);
    targets!(Int4, 600);
}

/// Absent `rounding` stays absent; an explicit default stays explicit; `scalar_map` keys
/// stay as written (an empty map, a map with only `decode`).
#[test]
fn cast_value_metadata_as_written() {
    for cfg in [
        json!({"data_type": "uint8"}),
        json!({"data_type": "uint8", "rounding": "nearest-even"}),
        json!({"data_type": "uint8", "rounding": "towards-zero", "out_of_range": "wrap"}),
        json!({"data_type": "uint8", "out_of_range": "clamp", "scalar_map": {}}),
        json!({"data_type": "uint8", "scalar_map": {"decode": [[0, "NaN"]]}}),
        json!({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}),
    ] {
        let md = vec![json!({"name": "cast_value", "configuration": cfg})];
        let chain =
            build(&json!("float64"), &json!(1.0), &md).unwrap_or_else(|e| panic!("{cfg}: {e}"));
        assert_eq!(chain.to_metadata(), Value::Array(md));
    }
    // A repeated key is dropped: the first occurrence is the mapping.
    let md = vec![
        json!({"name": "cast_value", "configuration": {"data_type": "uint8",
        "scalar_map": {"encode": [[1.0, 5], [1.0, 6], ["NaN", 0], ["0x7ff8000000000001", 1]]}}}),
    ];
    // (The fill value is 2.0: 1.0 encodes to 5, which decodes to 5.0, so 1.0 would fail the
    // fill-value round trip.)
    let chain = build(&json!("float64"), &json!(2.0), &md).unwrap();
    assert_eq!(
        chain.to_metadata()[0]["configuration"]["scalar_map"]["encode"],
        json!([[1.0, 5], ["NaN", 0]])
    );
}

/// A chain's metadata is its stages' metadata, flattened, and parses back.
#[test]
fn chain_metadata_roundtrip() {
    let chain = ScaleOffset::<f64>::new(-10.0, 0.1)
        .unwrap()
        .then(
            CastValue::<f64, u8>::new(
                CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
                ScalarMap {
                    encode: MapEntries::new([(f64::NAN, 0u8)]),
                    decode: MapEntries::new([(0u8, f64::NAN)]),
                    present: true,
                },
            )
            .unwrap(),
        )
        .then(BitRound::<u8>::new(5).unwrap());
    let md = chain.to_metadata();
    assert_eq!(
        md,
        json!([
            {"name": "scale_offset", "configuration": {"offset": -10.0, "scale": 0.1}},
            {"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even",
                "out_of_range": "clamp", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}},
            {"name": "bitround", "configuration": {"keepbits": 5}},
        ])
    );
    let input: Vec<f64> = (-20..2600)
        .map(|i| i as f64 * 0.97)
        .chain([f64::NAN, 1e300])
        .collect();
    let encoded: Vec<u8> = (0..=255).collect();
    check_roundtrip(&chain, f64::NAN, input, encoded);
}

// ---------------------------------------------------------------------------------------
// Metadata errors
// ---------------------------------------------------------------------------------------

fn err(dt: Value, fill: Value, codecs: Value) -> MetadataError {
    match build(&dt, &fill, codecs.as_array().unwrap()) {
        Ok(c) => panic!("accepted {dt} {fill} {codecs}: {c:?}"),
        Err(e) => e,
    }
}

/// `MetadataError::Field` for `codec`/`field`, and its message names both.
#[track_caller]
fn assert_field(e: &MetadataError, codec: &str, field: &str) {
    match e {
        MetadataError::Field {
            codec: c, field: f, ..
        } => {
            assert_eq!((*c, *f), (codec, field), "{e}");
        }
        other => panic!("expected Field {{{codec}, {field}}}, got {other:?}"),
    }
    let s = e.to_string();
    assert!(s.contains(codec) && s.contains(field), "{s}");
}

#[track_caller]
fn assert_scalar(e: &MetadataError, codec: &str, field: &str) {
    match e {
        MetadataError::Scalar {
            codec: c, field: f, ..
        } => {
            assert_eq!((*c, *f), (codec, field), "{e}");
        }
        other => panic!("expected Scalar {{{codec}, {field}}}, got {other:?}"),
    }
    let s = e.to_string();
    assert!(s.contains(codec) && s.contains(field), "{s}");
}

#[track_caller]
fn assert_unsupported(e: &MetadataError, codec: &str, dtype: &str) {
    match e {
        MetadataError::UnsupportedDataType {
            codec: c, dtype: d, ..
        } => {
            assert_eq!((*c, d.as_str()), (codec, dtype), "{e}");
        }
        other => panic!("expected UnsupportedDataType {{{codec}, {dtype}}}, got {other:?}"),
    }
    let s = e.to_string();
    assert!(s.contains(codec) && s.contains(dtype), "{s}");
}

fn so(cfg: Value) -> Value {
    json!([{"name": "scale_offset", "configuration": cfg}])
}
fn cv(cfg: Value) -> Value {
    json!([{"name": "cast_value", "configuration": cfg}])
}
fn br(cfg: Value) -> Value {
    json!([{"name": "bitround", "configuration": cfg}])
}

#[test]
fn unknown_codecs() {
    for name in [
        "gzip",
        "bytes",
        "Scale_Offset",
        "",
        "numcodecs.scale_offset",
    ] {
        let e = err(json!("float32"), json!(0), json!([{"name": name}]));
        assert_eq!(e, MetadataError::UnknownCodec(name.into()));
        assert!(e.to_string().contains(&format!("{name:?}")), "{e}");
        let e = err(json!("float32"), json!(0), json!([name]));
        assert_eq!(e, MetadataError::UnknownCodec(name.into()));
    }
    // Malformed codec objects.
    for c in [
        json!({"name": "scale_offset", "config": {}}),
        json!({"configuration": {}}),
        json!({"name": 5}),
        json!(5),
        json!(null),
        json!([]),
    ] {
        let e = err(json!("float32"), json!(0), json!([c]));
        assert!(matches!(e, MetadataError::CodecObject(_)), "{c}: {e:?}");
    }
    // `must_understand` is a permitted member, and the core spec defines it as a boolean.
    for mu in [json!(true), json!(false)] {
        build(
            &json!("float32"),
            &json!(0),
            &[json!({"name": "scale_offset", "must_understand": mu})],
        )
        .unwrap();
    }
    for mu in [
        json!("banana"),
        json!(null),
        json!(0),
        json!(1),
        json!([true]),
    ] {
        let c = json!({"name": "scale_offset", "must_understand": mu});
        let e = err(json!("float32"), json!(0), json!([c]));
        assert!(e.to_string().contains("must_understand"), "{mu}: {e:?}");
    }
}

#[test]
fn unknown_keys() {
    let e = err(
        json!("float32"),
        json!(0),
        so(json!({"offset": 1, "foo": 2})),
    );
    assert_field(&e, "scale_offset", "configuration");
    assert!(e.to_string().contains("foo"));
    let e = err(
        json!("float32"),
        json!(0),
        cv(json!({"data_type": "uint8", "foo": 2})),
    );
    assert_field(&e, "cast_value", "configuration");
    assert!(e.to_string().contains("foo"));
    let e = err(
        json!("float32"),
        json!(0),
        br(json!({"keepbits": 3, "foo": 2})),
    );
    assert_field(&e, "bitround", "configuration");
    assert!(e.to_string().contains("foo"));
    let e = err(
        json!("float32"),
        json!(0),
        cv(json!({"data_type": "uint8", "scalar_map": {"both": []}})),
    );
    assert_field(&e, "cast_value", "scalar_map");
    assert!(e.to_string().contains("both"));
}

#[test]
fn mistyped_keys() {
    for k in [
        json!("3"),
        json!(3.0),
        json!(-1),
        json!(1.5),
        json!(null),
        json!(true),
        json!([3]),
        json!({}),
    ] {
        let e = err(json!("float32"), json!(0), br(json!({"keepbits": k})));
        assert_field(&e, "bitround", "keepbits");
        let e = err(
            json!("int32"),
            json!(0),
            json!([{"name": "numcodecs.bitround", "configuration": {"keepbits": k}}]),
        );
        assert_field(&e, "bitround", "keepbits");
    }
    assert_field(
        &err(json!("float32"), json!(0), br(json!({}))),
        "bitround",
        "keepbits",
    );
    assert_field(
        &err(json!("float32"), json!(0), json!([{"name": "bitround"}])),
        "bitround",
        "configuration",
    );
    assert_field(
        &err(json!("float32"), json!(0), br(json!([3]))),
        "bitround",
        "configuration",
    );

    for r in [json!(5), json!("up"), json!("nearest_even"), json!(null)] {
        let e = err(
            json!("float32"),
            json!(0),
            cv(json!({"data_type": "uint8", "rounding": r})),
        );
        assert_field(&e, "cast_value", "rounding");
    }
    for o in [json!(null), json!("saturate"), json!("Clamp"), json!(1)] {
        let e = err(
            json!("float32"),
            json!(0),
            cv(json!({"data_type": "uint8", "out_of_range": o})),
        );
        assert_field(&e, "cast_value", "out_of_range");
    }
    for d in [json!(5), json!(null), json!(["uint8"])] {
        let e = err(json!("float32"), json!(0), cv(json!({"data_type": d})));
        assert_field(&e, "cast_value", "data_type");
    }
    assert_field(
        &err(json!("float32"), json!(0), cv(json!({}))),
        "cast_value",
        "data_type",
    );
    assert_field(
        &err(json!("float32"), json!(0), json!([{"name": "cast_value"}])),
        "cast_value",
        "configuration",
    );
    assert_field(
        &err(json!("float32"), json!(0), json!(["cast_value"])),
        "cast_value",
        "configuration",
    );
    for sm in [
        json!([]),
        json!({"encode": {}}),
        json!({"encode": [[1, 2, 3]]}),
        json!({"decode": [1]}),
        json!(null),
    ] {
        let e = err(
            json!("float32"),
            json!(0),
            cv(json!({"data_type": "uint8", "scalar_map": sm})),
        );
        assert_field(&e, "cast_value", "scalar_map");
    }
    // Entries that are not valid scalars of their type.
    for entry in [
        json!(["abc", 0]),
        json!([1.0, 256]),
        json!([1.0, -1]),
        json!([1.0, 0.5]),
        json!(["nan", 0]),
    ] {
        let e = err(
            json!("float32"),
            json!(0),
            cv(json!({"data_type": "uint8", "scalar_map": {"encode": [entry]}})),
        );
        assert_scalar(&e, "cast_value", "scalar_map");
    }

    for (field, v, dt) in [
        ("scale", json!("abc"), "float32"),
        ("scale", json!(true), "float32"),
        ("scale", json!(null), "float32"),
        ("scale", json!("+Infinity"), "float32"),
        ("scale", json!("0x7fc"), "float32"),
        ("offset", json!(1.5), "int8"),
        ("offset", json!(1e3), "int16"),
        ("offset", json!(-1), "uint8"),
        ("scale", json!(300), "uint8"),
        ("scale", json!("NaN"), "float4_e2m1fn"),
        ("offset", json!([1, 2]), "float64"),
    ] {
        let e = err(json!(dt), json!(0), so(json!({ field: v })));
        assert_scalar(&e, "scale_offset", field);
    }
    let e = err(json!("float32"), json!(0), so(json!([1, 2])));
    assert_field(&e, "scale_offset", "configuration");
}

#[test]
fn bad_data_types() {
    for dt in [
        json!("float128"),
        json!("Float32"),
        json!(""),
        json!(5),
        json!(null),
        json!({"name": "float32", "x": 1}),
    ] {
        let e = err(dt.clone(), json!(0), json!([]));
        assert!(matches!(e, MetadataError::DataType(_)), "{dt}: {e:?}");
        assert!(e.to_string().starts_with("data type"), "{e}");
    }
    let e = err(json!("float128"), json!(0), json!([]));
    assert!(e.to_string().contains("float128"), "{e}");
    // Time types need their configuration; others take none.
    for dt in [
        json!("numpy.datetime64"),
        json!({"name": "numpy.datetime64", "configuration": {"unit": "fortnight", "scale_factor": 1}}),
        json!({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 0}}),
        json!({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1.0}}),
        json!({"name": "float32", "configuration": {"unit": "s"}}),
    ] {
        let e = err(dt.clone(), json!(0), json!([]));
        assert!(matches!(e, MetadataError::DataType(_)), "{dt}: {e:?}");
    }
    // cast_value's target.
    let e = err(
        json!("float32"),
        json!(0),
        cv(json!({"data_type": "float128"})),
    );
    assert_field(&e, "cast_value", "data_type");
    assert!(e.to_string().contains("float128"), "{e}");
}

#[test]
fn bad_fill_values() {
    for (dt, fill) in [
        ("float32", json!("abc")),
        ("float32", json!("nan")),
        ("float32", json!("+Infinity")),
        ("float32", json!(true)),
        ("float32", json!(null)),
        ("float32", json!("0x7fc")),
        ("float32", json!([1, 2])),
        ("uint8", json!(256)),
        ("uint8", json!(-1)),
        ("int8", json!(1.5)),
        ("int8", json!("NaN")),
        ("float8_e4m3fnuz", json!("Infinity")),
        ("float4_e2m1fn", json!("NaN")),
        ("float4_e2m1fn", json!(1e10)),
        ("complex64", json!(1.0)),
    ] {
        let e = err(json!(dt), fill.clone(), json!([]));
        assert!(
            matches!(e, MetadataError::FillValue(_)),
            "{dt} {fill}: {e:?}"
        );
        let s = e.to_string();
        assert!(s.contains("fill_value") && s.contains(dt), "{s}");
    }
    assert!(matches!(
        err(json!("uint8"), json!(256), json!([])),
        MetadataError::FillValue(FillValueError::NotRepresentable { .. })
    ));
    assert!(matches!(
        err(json!("float32"), json!("0x7fc"), json!([])),
        MetadataError::FillValue(FillValueError::BadHex { .. })
    ));
    assert!(matches!(
        err(json!("float32"), json!("abc"), json!([])),
        MetadataError::FillValue(FillValueError::Invalid { .. })
    ));
}

#[test]
fn fill_value_transform_errors() {
    // Does not survive the cast_value round trip: 0.5 -> 0 -> 0.0.
    let e = err(
        json!("float64"),
        json!(0.5),
        cv(json!({"data_type": "uint8"})),
    );
    assert!(
        matches!(
            e,
            MetadataError::FillValueTransform {
                codec: "cast_value",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("cast_value") && e.to_string().contains("fill value"),
        "{e}"
    );
    // Out of range without a rule; clamped but then not equal.
    for cfg in [
        json!({"data_type": "uint8"}),
        json!({"data_type": "uint8", "out_of_range": "clamp"}),
    ] {
        let e = err(json!("float64"), json!(300), cv(cfg));
        assert!(
            matches!(
                e,
                MetadataError::FillValueTransform {
                    codec: "cast_value",
                    ..
                }
            ),
            "{e:?}"
        );
    }
    // NaN needs a map both ways.
    let e = err(
        json!("float64"),
        json!("NaN"),
        cv(json!({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]]}})),
    );
    assert!(
        matches!(
            e,
            MetadataError::FillValueTransform {
                codec: "cast_value",
                ..
            }
        ),
        "{e:?}"
    );
    // scale_offset carries the fill value with the element arithmetic: 127 - (-1) overflows.
    let e = err(json!("int8"), json!(127), so(json!({"offset": -1})));
    assert!(
        matches!(
            e,
            MetadataError::FillValueTransform {
                codec: "scale_offset",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("scale_offset"), "{e}");
    // A later stage sees the transformed fill value: 10 -> (10 - 5) * 50 = 250 fits uint8,
    // 11 -> 300 does not.
    build(
        &json!("float64"),
        &json!(10),
        &[
            json!({"name": "scale_offset", "configuration": {"offset": 5, "scale": 50}}),
            json!({"name": "cast_value", "configuration": {"data_type": "uint8"}}),
        ],
    )
    .unwrap();
    let e = err(
        json!("float64"),
        json!(11),
        json!([{"name": "scale_offset", "configuration": {"offset": 5, "scale": 50}}, {"name": "cast_value", "configuration": {"data_type": "uint8"}}]),
    );
    assert!(
        matches!(
            e,
            MetadataError::FillValueTransform {
                codec: "cast_value",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn wrap_into_float() {
    for dt in [
        "float32",
        "float16",
        "bfloat16",
        "float8_e4m3",
        "float8_e8m0fnu",
        "float4_e2m1fn",
    ] {
        let e = err(
            json!("int32"),
            json!(0),
            cv(json!({"data_type": dt, "out_of_range": "wrap"})),
        );
        assert_field(&e, "cast_value", "out_of_range");
        assert!(
            e.to_string().contains("wrap") && e.to_string().contains(dt),
            "{e}"
        );
    }
    let e = CastValue::<i32, f32>::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Wrap),
        ScalarMap::default(),
    )
    .unwrap_err();
    assert_field(&e, "cast_value", "out_of_range");
}

#[test]
fn unsupported_data_types() {
    for dt in [
        "complex64",
        "complex128",
        "complex_float16",
        "complex_float8_e4m3",
    ] {
        let e = err(
            json!(dt),
            json!([0, 0]),
            cv(json!({"data_type": "float32"})),
        );
        assert_unsupported(&e, "cast_value", dt);
        let e = err(json!(dt), json!([0, 0]), so(json!({"scale": 2})));
        assert_unsupported(&e, "scale_offset", dt);
        let e = err(json!("float32"), json!(0), cv(json!({"data_type": dt})));
        assert_unsupported(&e, "cast_value", dt);
    }
    let time =
        json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}});
    let e = err(time.clone(), json!(0), so(json!({"scale": 2})));
    assert_unsupported(&e, "scale_offset", "numpy.datetime64");
    let e = err(time.clone(), json!(0), cv(json!({"data_type": "int64"})));
    assert_unsupported(&e, "cast_value", "numpy.datetime64");
    let e = err(json!("int64"), json!(0), cv(json!({"data_type": time})));
    assert_unsupported(&e, "cast_value", "numpy.datetime64");
    for dt in [
        "float8_e4m3",
        "float4_e2m1fn",
        "float8_e8m0fnu",
        "int4",
        "uint2",
        "complex_float8_e5m2",
    ] {
        let fill = if dt.starts_with("complex") {
            json!([0, 0])
        } else {
            json!(0)
        };
        let fill = if dt == "float8_e8m0fnu" {
            json!(1)
        } else {
            fill
        };
        let e = err(json!(dt), fill, br(json!({"keepbits": 1})));
        assert_unsupported(&e, "bitround", dt);
    }
}

#[test]
fn zero_scale() {
    for (dt, scale) in [
        ("int8", json!(0)),
        ("uint64", json!(0)),
        ("int2", json!(0)),
        ("float64", json!(0)),
        ("float64", json!(-0.0)),
        ("float16", json!("0x8000")),
        ("float16", json!(1e-10)),
        ("float32", json!(1e-50)),
        ("float8_e4m3", json!(0.0001)),
        ("float4_e2m1fn", json!(0.1)),
    ] {
        let e = err(json!(dt), json!(0), so(json!({"scale": scale})));
        assert_field(&e, "scale_offset", "scale");
    }
    assert_field(
        &ScaleOffset::<f32>::new(1.0, -0.0).unwrap_err(),
        "scale_offset",
        "scale",
    );
}

#[test]
fn keepbits_out_of_range() {
    for (dt, max) in [
        ("float16", 10),
        ("bfloat16", 7),
        ("float32", 23),
        ("float64", 52),
        ("complex_float16", 10),
        ("complex_bfloat16", 7),
        ("complex64", 23),
        ("complex128", 52),
        ("complex_float32", 23),
        ("complex_float64", 52),
    ] {
        let fill = if dt.starts_with("complex") {
            json!([0, 0])
        } else {
            json!(0)
        };
        for k in [json!(0), json!(max + 1), json!(64), json!(u64::MAX)] {
            let e = err(json!(dt), fill.clone(), br(json!({"keepbits": k})));
            assert_field(&e, "bitround", "keepbits");
        }
        build(
            &json!(dt),
            &fill,
            br(json!({"keepbits": max})).as_array().unwrap(),
        )
        .unwrap();
        build(
            &json!(dt),
            &fill,
            br(json!({"keepbits": 1})).as_array().unwrap(),
        )
        .unwrap();
    }
    // Integers: zero is invalid, anything from 1 up is fine ("nothing to round" above the
    // width).
    for dt in ["int8", "uint64", "int64"] {
        assert_field(
            &err(json!(dt), json!(0), br(json!({"keepbits": 0}))),
            "bitround",
            "keepbits",
        );
        for k in [json!(1), json!(64), json!(65), json!(u64::MAX)] {
            build(
                &json!(dt),
                &json!(0),
                br(json!({"keepbits": k})).as_array().unwrap(),
            )
            .unwrap();
        }
    }
    assert_field(
        &BitRound::<f32>::new(24).unwrap_err(),
        "bitround",
        "keepbits",
    );
    assert_field(&BitRound::<i8>::new(0).unwrap_err(), "bitround", "keepbits");
}

// ---------------------------------------------------------------------------------------
// Element errors
// ---------------------------------------------------------------------------------------

fn element_err(r: Result<zquant::DynArray, CodecError>) -> ElementError {
    match r {
        Err(CodecError::Element(e)) => e,
        other => panic!("expected an element error, got {other:?}"),
    }
}

#[track_caller]
fn assert_element(
    e: &ElementError,
    codec: &str,
    direction: &str,
    rule: Rule,
    index: usize,
    value: &str,
) {
    assert_eq!(
        (e.codec, e.direction, e.rule, e.index, e.value.as_str()),
        (codec, direction, rule, index, value)
    );
    let s = e.to_string();
    for part in [codec, direction, &format!("value {value}")] {
        assert!(s.contains(part), "{s:?} lacks {part:?}");
    }
    let (flat, nd) = (
        format!("element {index}"),
        format!("(C-order index {index})"),
    );
    assert!(
        s.contains(&flat) || s.contains(&nd),
        "{s:?} lacks the index {index}"
    );
    let phrase = match rule {
        Rule::OutOfRange => "value out of range of".to_string(),
        Rule::NanUnrepresentable => "NaN is not representable in".to_string(),
        Rule::InfUnrepresentable => "infinity is not representable in".to_string(),
        Rule::NotRepresentable => "is not representable in".to_string(),
        other => other.to_string(),
    };
    assert!(s.contains(&phrase), "{s}");
}

fn dyn_arr<T: Element>(v: &[T]) -> zquant::DynArray {
    T::into_dyn(arr(v.to_vec()))
}

#[test]
fn element_errors_name_codec_rule_index_value() {
    // The brief's example: float64 [1.0, 300.0] -> uint8 without out_of_range.
    let chain = build(
        &json!("float64"),
        &json!(0),
        cv(json!({"data_type": "uint8"})).as_array().unwrap(),
    )
    .unwrap();
    let e = element_err(chain.encode(&dyn_arr(&[1.0f64, 300.0])));
    assert_element(&e, "cast_value", "encode", Rule::OutOfRange, 1, "300.0");
    let typed = CastValue::<f64, u8>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    let CodecError::Element(t) = typed.encode(&arr1(&[1.0f64, 300.0])).unwrap_err() else {
        panic!()
    };
    assert_eq!(t, e);
    // Rounding comes first: 255.4 rounds to 255 and fits; 255.5 rounds to 256.
    let e = element_err(chain.encode(&dyn_arr(&[255.4f64, 255.5])));
    assert_element(&e, "cast_value", "encode", Rule::OutOfRange, 1, "255.5");
    let e = element_err(chain.encode(&dyn_arr(&[0.0f64, -0.0, f64::NAN])));
    assert_element(
        &e,
        "cast_value",
        "encode",
        Rule::NanUnrepresentable,
        2,
        "NaN",
    );
    let e = element_err(chain.encode(&dyn_arr(&[f64::NEG_INFINITY])));
    assert_element(
        &e,
        "cast_value",
        "encode",
        Rule::InfUnrepresentable,
        0,
        "-Infinity",
    );

    // Decoding int8 <- uint8.
    let chain = build(
        &json!("int8"),
        &json!(0),
        cv(json!({"data_type": "uint8"})).as_array().unwrap(),
    )
    .unwrap();
    let e = element_err(chain.decode(&dyn_arr(&[1u8, 2, 200, 255])));
    assert_element(&e, "cast_value", "decode", Rule::OutOfRange, 2, "200");

    // Infinity into a type without it, even with clamp.
    let chain = build(
        &json!("float32"),
        &json!(0),
        cv(json!({"data_type": "float8_e4m3fnuz", "out_of_range": "clamp"}))
            .as_array()
            .unwrap(),
    )
    .unwrap();
    let e = element_err(chain.encode(&dyn_arr(&[1e30f32, f32::INFINITY])));
    assert_element(
        &e,
        "cast_value",
        "encode",
        Rule::InfUnrepresentable,
        1,
        "Infinity",
    );

    // scale_offset: an intermediate overflow, and an inexact division.
    let chain = build(
        &json!("int8"),
        &json!(0),
        so(json!({"offset": -1, "scale": -1})).as_array().unwrap(),
    )
    .unwrap();
    let e = element_err(chain.encode(&dyn_arr(&[0i8, 126, 127])));
    assert_element(
        &e,
        "scale_offset",
        "encode",
        Rule::NotRepresentable,
        2,
        "127",
    );
    let chain = build(
        &json!("int8"),
        &json!(0),
        so(json!({"scale": 2})).as_array().unwrap(),
    )
    .unwrap();
    let e = element_err(chain.decode(&dyn_arr(&[2i8, 4, 3])));
    assert_element(&e, "scale_offset", "decode", Rule::InexactDivision, 2, "3");
    // Types without infinity fail on overflow.
    let chain = build(
        &json!("float8_e4m3fnuz"),
        &json!(0),
        so(json!({"scale": 4})).as_array().unwrap(),
    )
    .unwrap();
    let e = element_err(chain.encode(&dyn_arr(&[Float8E4M3Fnuz(0x38), Float8E4M3Fnuz(0x7f)])));
    assert_element(
        &e,
        "scale_offset",
        "encode",
        Rule::NotRepresentable,
        1,
        "240.0",
    );

    // In a 2-d array the index is the C-order flat index, whatever the memory order.
    let chain = build(
        &json!("float64"),
        &json!(0),
        cv(json!({"data_type": "uint8"})).as_array().unwrap(),
    )
    .unwrap();
    use ndarray::ShapeBuilder;
    let f = ArrayD::from_shape_vec(IxDyn(&[2, 3]).f(), vec![0.0f64, 1.0, 2.0, 3.0, 400.0, 5.0])
        .unwrap();
    // C order: [[0, 2, 400], [1, 3, 5]]
    let e = element_err(chain.encode(&f64::into_dyn(f.clone())));
    assert_element(&e, "cast_value", "encode", Rule::OutOfRange, 2, "400.0");
    let CodecError::Element(t) = typed.encode(&f).unwrap_err() else {
        panic!()
    };
    assert_eq!(t, e);
}

/// zquant leaves serde_json's number model alone (no `arbitrary_precision` unless the build
/// asks for it): a downstream crate's JSON numbers behave as serde_json's defaults say.
#[cfg(not(feature = "exact-json"))]
#[test]
fn serde_json_numbers_keep_their_default_model() {
    let v: Value = serde_json::from_str("0.30000000000000000001").unwrap();
    assert!(v.is_f64());
    assert_eq!(v.to_string(), "0.3");
    // Without the decimal text, a number is its double: a text just above a float16 tie
    // is the tie in f64, which rounds to even.
    let x =
        half::f16::fill_value_from_json(&serde_json::from_str("1.00048828125000000001").unwrap());
    assert_eq!(x, Ok(half::f16::ONE));
    // A 17-digit double reads exactly (serde_json's `float_roundtrip`).
    let t = f64::fill_value_from_json(&serde_json::from_str("5.9604644775390625e-08").unwrap());
    assert_eq!(t, Ok(2f64.powi(-24)));
}

/// With `exact-json` (serde_json's `arbitrary_precision`), numbers are rounded once from
/// their decimal text.
#[cfg(feature = "exact-json")]
#[test]
fn exact_json_rounds_once_from_the_decimal_text() {
    let x =
        half::f16::fill_value_from_json(&serde_json::from_str("1.00048828125000000001").unwrap());
    assert_eq!(x, Ok(half::f16::from_bits(0x3c01))); // 1 + 2^-10
}

/// The registry's names are what the crate runs and what its errors offer: each is known
/// to the configuration check, and an unknown name's message lists every one of them. No
/// literal list here, so that a new codec needs only its registry line.
#[test]
fn codec_names_are_the_codecs_the_crate_runs() {
    for name in zquant::CODEC_NAMES {
        let known = zquant::config::check_configuration(name, None);
        assert!(
            !matches!(known, Err(MetadataError::UnknownCodec(_))),
            "{name}: {known:?}"
        );
    }
    let unknown = zquant::config::check_configuration("no_such_codec", None).unwrap_err();
    assert_eq!(unknown, MetadataError::UnknownCodec("no_such_codec".into()));
    let message = unknown.to_string();
    for name in zquant::CODEC_NAMES {
        assert!(
            message.contains(&format!("{name:?}")),
            "{name} not in {message}"
        );
    }
}
