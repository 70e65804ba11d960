//! Random metadata and random bytes through [`DynChain`]: always `Ok` or a typed `Err`,
//! never a panic.
//!
//! The metadata strategy mixes well-formed codec objects with small perturbations (missing,
//! extra or mistyped keys; NaN/Inf/hex/huge/fractional scalars; keepbits 0, negative,
//! fractional, 2^63, 2^64; nested arrays; `null`; booleans) and arbitrary JSON. Data types
//! are valid names, time types with random configurations, invalid names and arbitrary JSON;
//! fill values are plausible encodings or arbitrary JSON. Whenever a chain is built, it is
//! also checked that
//! - encoding the fill value gives the encoded fill value the chain carried forward;
//! - `to_metadata()` parses back to a chain with the same metadata and the same results;
//! - random input bytes (any shape, including 0-d, empty and zero-length axes) encode to
//!   `Ok` or an element error, and whatever encodes also decodes to `Ok` or an element
//!   error; random encoded bytes decode likewise;
//! - an array of the wrong type is a `CodecError::Array`.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use zquant::CodecError;
use zquant::TIME_UNITS;
use zquant::dtype::DTypeId;
use zquant::{DynArray, DynChain};

// ---------------------------------------------------------------------------------------
// JSON strategies
// ---------------------------------------------------------------------------------------

fn parse(s: &str) -> Option<Value> {
    serde_json::from_str(s).ok()
}

/// `s` as JSON, or, for an exponent serde_json refuses without `arbitrary_precision`
/// (`1e999999999`), the extreme double on the same side.
fn extreme(s: &str) -> Value {
    parse(s).unwrap_or_else(|| {
        if s.contains("e-") {
            json!(5e-324)
        } else {
            json!(1.7976931348623157e308)
        }
    })
}

/// JSON numbers (those serde_json refuses without `arbitrary_precision` are left out).
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-300i64..300).prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |x| x.is_finite().then(|| Value::from(x))),
        "-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,30})?([eE][+-]?[0-9]{1,7})?"
            .prop_filter_map("json", |s| parse(&s)),
        prop::sample::select(vec![
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "340282366920938463463374607431768211456",
            "1e400",
            "-1e400",
            "1e-400",
            "1e999999999",
            "1e-999999999",
            "0.0",
            "-0.0",
            "-0",
            "0.5",
            "2.5",
            "1.0",
            "3.0",
            "65504",
            "65520",
            "1e308",
            "4.9e-324",
            "1.7976931348623157e308",
            "0.1",
            "1E+2",
            "100000000000000000000000000000000000000000000000000.000000000000000000000001",
        ])
        .prop_filter_map("json", parse),
    ]
}

/// Strings that are (or look like) fill-value encodings.
fn special_string() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            "NaN",
            "Infinity",
            "-Infinity",
            "+Infinity",
            "nan",
            "inf",
            "NaT",
            "",
            "0x",
            "0x0",
            "0x00",
            "0x0000",
            "0x00000000",
            "0x7e00",
            "0x7c00",
            "0x8000",
            "0x7fc00000",
            "0xff800000",
            "0x7ff8000000000001",
            "0xfff0000000000000",
            "0xZZ",
            "-0x01",
            "abc",
        ])
        .prop_map(Value::from),
        "0x[0-9a-fA-F]{0,18}".prop_map(Value::from),
        "[ -~]{0,8}".prop_map(Value::from),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        special_string(),
    ]
}

const KEYS: &[&str] = &[
    "name",
    "configuration",
    "offset",
    "scale",
    "keepbits",
    "data_type",
    "rounding",
    "out_of_range",
    "scalar_map",
    "encode",
    "decode",
    "unit",
    "scale_factor",
    "must_understand",
    "x",
];

/// Arbitrary JSON, nested up to three levels.
fn any_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..4).prop_map(
                |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
        ]
    })
}

/// A scalar as in `offset`, `scale`, `scalar_map` entries and fill values.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => number(),
        3 => special_string(),
        1 => (number(), number()).prop_map(|(a, b)| json!([a, b])),
        1 => (special_string(), number()).prop_map(|(a, b)| json!([a, b])),
        1 => any_json(),
    ]
}

fn valid_dtype_name() -> impl Strategy<Value = Value> {
    prop::sample::select(DTypeId::ALL.to_vec()).prop_map(|d| match d {
        DTypeId::DateTime64 | DTypeId::TimeDelta64 => {
            json!({"name": d.name(), "configuration": {"unit": "s", "scale_factor": 1}})
        }
        _ => Value::from(d.name()),
    })
}

/// Valid names (mostly real types), time types with random configurations, invalid names,
/// arbitrary JSON.
fn data_type() -> impl Strategy<Value = Value> {
    let real: Vec<DTypeId> = DTypeId::ALL
        .iter()
        .copied()
        .filter(|d| d.is_real())
        .collect();
    let mut units: Vec<Value> = TIME_UNITS.iter().map(|u| Value::from(*u)).collect();
    units.extend([json!("fortnight"), json!(1), Value::Null]);
    prop_oneof![
        16 => prop::sample::select(real).prop_map(|d| Value::from(d.name())),
        3 => valid_dtype_name(),
        2 => (
            prop::sample::select(vec!["numpy.datetime64", "numpy.timedelta64", "float32"]),
            prop::sample::select(units),
            prop_oneof![4 => (1u64..100).prop_map(Value::from), 1 => number(), 1 => any_json()],
            prop::bool::weighted(0.2),
        )
            .prop_map(|(n, u, sf, extra)| {
                let mut c = Map::new();
                c.insert("unit".into(), u);
                c.insert("scale_factor".into(), sf);
                if extra {
                    c.insert("extra".into(), json!(1));
                }
                json!({"name": n, "configuration": c})
            }),
        1 => prop::sample::select(vec!["float128", "int3", "Float32", "", "complex256", "bool", "float8_e4m3fn"])
            .prop_map(Value::from),
        1 => any_json(),
    ]
}

/// Add, drop or replace keys of a configuration object now and then.
fn perturb(config: Map<String, Value>) -> impl Strategy<Value = Option<Value>> {
    let keys: Vec<String> = config.keys().cloned().collect();
    prop_oneof![
        40 => Just(Some(Value::Object(config.clone()))),
        1 => Just(None),
        1 => any_json().prop_map(Some),
        1 => (prop::sample::select(KEYS.to_vec()), any_json()).prop_map({
            let config = config.clone();
            move |(k, v)| {
                let mut c = config.clone();
                c.insert(k.to_string(), v);
                Some(Value::Object(c))
            }
        }),
        1 => (any::<prop::sample::Index>()).prop_map({
            let config = config.clone();
            move |i| {
                let mut c = config.clone();
                if !keys.is_empty() {
                    c.remove(&keys[i.index(keys.len())]);
                }
                Some(Value::Object(c))
            }
        }),
    ]
}

fn codec_object(
    name: impl Strategy<Value = Value>,
    config: impl Strategy<Value = Option<Value>>,
) -> impl Strategy<Value = Value> {
    (name, config).prop_map(|(name, config)| {
        let mut o = Map::new();
        o.insert("name".into(), name);
        if let Some(c) = config {
            o.insert("configuration".into(), c);
        }
        Value::Object(o)
    })
}

fn scale_offset_codec() -> impl Strategy<Value = Value> {
    (prop::option::of(scalar()), prop::option::of(scalar()))
        .prop_flat_map(|(offset, scale)| {
            let mut c = Map::new();
            if let Some(o) = offset {
                c.insert("offset".into(), o);
            }
            if let Some(s) = scale {
                c.insert("scale".into(), s);
            }
            perturb(c)
        })
        .prop_flat_map(|c| codec_object(Just(json!("scale_offset")), Just(c)))
}

fn keepbits() -> impl Strategy<Value = Value> {
    prop_oneof![
        16 => (1u64..=64).prop_map(Value::from),
        1 => prop::sample::select(vec![
            "0", "-1", "1.5", "3.0", "1e1", "9223372036854775808", "18446744073709551616",
            "9223372036854775807", "4294967297", "\"3\"", "null", "true", "[3]", "{}"
        ]).prop_map(|s| parse(s).unwrap()),
        1 => any_json(),
    ]
}

fn bitround_codec() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["bitround", "numcodecs.bitround"]),
        keepbits(),
    )
        .prop_flat_map(|(name, k)| {
            let mut c = Map::new();
            c.insert("keepbits".into(), k);
            codec_object(Just(Value::from(name)), perturb(c))
        })
}

fn pairs() -> impl Strategy<Value = Value> {
    prop_oneof![
        5 => prop::collection::vec((scalar(), scalar()).prop_map(|(a, b)| json!([a, b])), 0..4)
            .prop_map(Value::Array),
        1 => any_json(),
    ]
}

fn scalar_map() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (prop::option::of(pairs()), prop::option::of(pairs())).prop_map(|(e, d)| {
            let mut m = Map::new();
            if let Some(e) = e {
                m.insert("encode".into(), e);
            }
            if let Some(d) = d {
                m.insert("decode".into(), d);
            }
            Value::Object(m)
        }),
        1 => any_json(),
    ]
}

fn cast_value_codec() -> impl Strategy<Value = Value> {
    let rounding = prop_oneof![
        24 => prop::sample::select(vec![
            "nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"
        ]).prop_map(Value::from),
        1 => prop::sample::select(vec!["nearest_even", "up", ""]).prop_map(Value::from),
        1 => any_json(),
    ];
    let oor = prop_oneof![
        24 => prop::sample::select(vec!["clamp", "wrap"]).prop_map(Value::from),
        1 => prop::sample::select(vec!["saturate", "Clamp"]).prop_map(Value::from),
        1 => any_json(),
    ];
    (
        data_type(),
        prop::option::of(rounding),
        prop::option::of(oor),
        prop::option::weighted(0.4, scalar_map()),
    )
        .prop_flat_map(|(dt, r, o, sm)| {
            let mut c = Map::new();
            c.insert("data_type".into(), dt);
            if let Some(r) = r {
                c.insert("rounding".into(), r);
            }
            if let Some(o) = o {
                c.insert("out_of_range".into(), o);
            }
            if let Some(sm) = sm {
                c.insert("scalar_map".into(), sm);
            }
            codec_object(Just(json!("cast_value")), perturb(c))
        })
}

fn codec() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => scale_offset_codec(),
        10 => cast_value_codec(),
        8 => bitround_codec(),
        1 => prop::sample::select(vec!["scale_offset", "bitround", "cast_value", "gzip", "bytes", "", "unknown"])
            .prop_map(Value::from),
        1 => codec_object(
            prop::sample::select(vec!["gzip", "transpose", "Scale_Offset", "unknown"]).prop_map(Value::from),
            prop::option::of(any_json()),
        ),
        1 => any_json(),
    ]
}

fn fill_value() -> impl Strategy<Value = Value> {
    // Mostly 0 or 1, which every type but a few (float8_e8m0fnu has no 0) can carry through
    // any chain, so that enough generated chains get past metadata validation to encode.
    prop_oneof![
        6 => (0i64..2).prop_map(Value::from),
        2 => (-3i64..300).prop_map(Value::from),
        3 => scalar(),
    ]
}

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..4)
}

// ---------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------

/// `len` bytes cycled from `bytes` (a zero byte when `bytes` is empty).
fn bytes_of(bytes: &[u8], len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            if bytes.is_empty() {
                0
            } else {
                bytes[i % bytes.len()]
            }
        })
        .collect()
}

fn random_array(id: DTypeId, shape: &[usize], bytes: &[u8]) -> DynArray {
    let n: usize = shape.iter().product();
    DynArray::from_le_bytes(id, shape, &bytes_of(bytes, n * id.size())).expect("valid byte count")
}

fn is_element_error(r: &Result<DynArray, CodecError>) -> bool {
    matches!(r, Ok(_) | Err(CodecError::Element(_)))
}

fn same(a: &Result<DynArray, CodecError>, b: &Result<DynArray, CodecError>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x.same_as(y),
        (Err(x), Err(y)) => x == y,
        _ => false,
    }
}

fn exercise(
    dt: &Value,
    fill: &Value,
    codecs: &[Value],
    shape: &[usize],
    bytes: &[u8],
    counts: Option<&mut [usize; 3]>,
) -> Result<(), TestCaseError> {
    let chain = match DynChain::from_array_to_array_codecs(dt, fill, codecs) {
        Ok(c) => c,
        Err(e) => {
            // A typed error with a message.
            prop_assert!(!e.to_string().is_empty());
            if let Some(c) = counts {
                c[0] += 1;
            }
            return Ok(());
        }
    };

    // The fill value encodes to the encoded fill value.
    let f = chain.encode(chain.fill_value());
    match &f {
        Ok(x) => prop_assert!(
            x.same_as(chain.encoded_fill_value()),
            "fill {:?} encodes to {:?}, chain carried {:?}",
            chain.fill_value(),
            x,
            chain.encoded_fill_value()
        ),
        Err(e) => prop_assert!(
            false,
            "the fill value was accepted but does not encode: {e}"
        ),
    }
    let _ = chain.decode(chain.encoded_fill_value());

    // Metadata round trip.
    let md = chain.to_metadata();
    let list = md.as_array().expect("a codec list").clone();
    let again = DynChain::from_array_to_array_codecs(&chain.data_type().to_json(), fill, &list);
    let again = match again {
        Ok(a) => a,
        Err(e) => {
            prop_assert!(false, "to_metadata {md} does not parse back: {e}");
            unreachable!()
        }
    };
    prop_assert_eq!(&again.to_metadata(), &md);
    prop_assert_eq!(again.data_type(), chain.data_type());
    prop_assert_eq!(again.encoded_data_type(), chain.encoded_data_type());
    prop_assert!(
        again
            .encoded_fill_value()
            .same_as(chain.encoded_fill_value())
    );

    // Random data, both directions.
    let input = random_array(chain.data_type().id, shape, bytes);
    let enc = chain.encode(&input);
    prop_assert!(is_element_error(&enc), "{enc:?}");
    prop_assert!(same(&enc, &again.encode(&input)));
    if let Ok(e) = &enc {
        prop_assert_eq!(e.shape(), shape);
        prop_assert_eq!(e.dtype(), chain.encoded_data_type().id);
        let dec = chain.decode(e);
        prop_assert!(is_element_error(&dec), "{dec:?}");
        if let Ok(d) = &dec {
            prop_assert_eq!(d.shape(), shape);
            prop_assert_eq!(d.dtype(), chain.data_type().id);
        }
    }
    let encoded = random_array(chain.encoded_data_type().id, shape, bytes);
    let dec = chain.decode(&encoded);
    prop_assert!(is_element_error(&dec), "{dec:?}");
    prop_assert!(same(&dec, &again.decode(&encoded)));
    if let Some(c) = counts {
        c[if enc.is_ok() { 2 } else { 1 }] += 1;
    }

    // The wrong array type.
    let other = if chain.data_type().id == DTypeId::UInt8 {
        DTypeId::Int8
    } else {
        DTypeId::UInt8
    };
    let wrong = random_array(other, shape, bytes);
    prop_assert!(matches!(chain.encode(&wrong), Err(CodecError::Array(_))));
    if chain.encoded_data_type().id != other {
        prop_assert!(matches!(chain.decode(&wrong), Err(CodecError::Array(_))));
    }
    Ok(())
}

/// The fuzz target's case (`fuzz/run_case.rs`), run here on bounded generated inputs.
#[path = "../../fuzz/run_case.rs"]
mod run_case;

/// A fuzz input: the metadata JSON, a NUL byte, the array bytes.
fn fuzz_input(dt: &Value, fill: &Value, codecs: &[Value], bytes: &[u8]) -> Vec<u8> {
    let meta = json!({"data_type": dt, "fill_value": fill, "codecs": codecs});
    let mut v = meta.to_string().into_bytes();
    v.push(0);
    v.extend_from_slice(bytes);
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The fuzz target's properties and time budget, on generated metadata (the bounded
    /// version of `cargo fuzz run runtime`).
    #[test]
    fn fuzz_case_on_generated_inputs(
        dt in data_type(),
        fill in fill_value(),
        codecs in prop::collection::vec(codec(), 0..4),
        bytes in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let budget = std::time::Duration::from_secs(2);
        run_case::run_case_within(&fuzz_input(&dt, &fill, &codecs, &bytes), budget);
    }

    #[test]
    fn random_metadata_never_panics(
        dt in data_type(),
        fill in fill_value(),
        codecs in prop::collection::vec(codec(), 0..4),
        shape in shape(),
        bytes in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        exercise(&dt, &fill, &codecs, &shape, &bytes, None)?;
    }

    /// Codec objects from arbitrary JSON alone.
    #[test]
    fn arbitrary_json_never_panics(
        dt in prop_oneof![valid_dtype_name(), any_json()],
        fill in any_json(),
        codecs in prop::collection::vec(any_json(), 0..3),
        shape in shape(),
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        exercise(&dt, &fill, &codecs, &shape, &bytes, None)?;
    }
}

/// The strategy reaches encoding often enough to be useful (a guard on the generator, not
/// on the crate).
#[test]
fn generator_reaches_encoding() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strat = (
        data_type(),
        fill_value(),
        prop::collection::vec(codec(), 1..3),
        shape(),
        prop::collection::vec(any::<u8>(), 0..64),
    );
    let mut counts = [0usize; 3];
    for _ in 0..600 {
        let (dt, fill, codecs, shape, bytes) = strat.new_tree(&mut runner).unwrap().current();
        exercise(&dt, &fill, &codecs, &shape, &bytes, Some(&mut counts)).unwrap();
    }
    let [rejected, failed, encoded] = counts;
    assert!(
        encoded >= 50,
        "metadata rejected {rejected}, encode failed {failed}, encoded {encoded}"
    );
    assert!(
        rejected >= 60,
        "metadata rejected {rejected}, encode failed {failed}, encoded {encoded}"
    );
}

/// Specific inputs that once looked risky: huge exponents, huge keepbits, empty arrays.
#[test]
fn specific_inputs() {
    let cases: Vec<(Value, Value, Vec<Value>)> = vec![
        (
            json!("float64"),
            json!(0),
            vec![
                json!({"name": "scale_offset", "configuration": {"scale": extreme("1e999999999")}}),
            ],
        ),
        (
            json!("float64"),
            json!(0),
            vec![
                json!({"name": "scale_offset", "configuration": {"scale": extreme("1e-999999999")}}),
            ],
        ),
        (
            json!("float16"),
            json!(0),
            vec![
                json!({"name": "scale_offset", "configuration": {"offset": "NaN", "scale": "Infinity"}}),
            ],
        ),
        (
            json!("int64"),
            json!(0),
            vec![
                json!({"name": "bitround", "configuration": {"keepbits": parse("9223372036854775808").unwrap()}}),
            ],
        ),
        (
            json!("int64"),
            json!(0),
            vec![
                json!({"name": "bitround", "configuration": {"keepbits": parse("18446744073709551615").unwrap()}}),
            ],
        ),
        (
            json!("float32"),
            json!(0),
            vec![
                json!({"name": "bitround", "configuration": {"keepbits": parse("18446744073709551615").unwrap()}}),
            ],
        ),
        (
            json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}),
            json!("NaT"),
            vec![json!({"name": "bitround", "configuration": {"keepbits": 1}})],
        ),
        (
            json!("uint64"),
            json!(0),
            vec![
                json!({"name": "scale_offset", "configuration": {"offset": parse("18446744073709551615").unwrap(), "scale": parse("18446744073709551615").unwrap()}}),
            ],
        ),
        (
            json!("int64"),
            json!(0),
            vec![
                json!({"name": "scale_offset", "configuration": {"offset": parse("-9223372036854775808").unwrap(), "scale": -1}}),
            ],
        ),
        (
            json!("float8_e8m0fnu"),
            json!(1),
            vec![json!({"name": "scale_offset", "configuration": {"offset": 1}})],
        ),
        (
            json!("float64"),
            json!("NaN"),
            vec![
                json!({"name": "cast_value", "configuration": {"data_type": "float8_e8m0fnu", "out_of_range": "clamp", "scalar_map": {"encode": [["NaN", "NaN"]]}}}),
            ],
        ),
    ];
    for (dt, fill, codecs) in cases {
        for shape in [vec![], vec![0], vec![3, 0], vec![2, 3]] {
            exercise(
                &dt,
                &fill,
                &codecs,
                &shape,
                &[0x00, 0xff, 0x80, 0x7f, 0x01],
                None,
            )
            .unwrap_or_else(|e| panic!("{dt} {fill} {codecs:?}: {e}"));
        }
    }
}

/// Issue 14, finding 2: a `scalar_map` with many entries is built in time linear in its
/// size, and encoding looks each element up in constant time. At these sizes a quadratic
/// build (10^10 steps) or a scan of every key per element (2 * 10^10) would not finish
/// within the test suite's time; the linear code takes well under a second.
#[test]
fn large_scalar_maps_are_linear() {
    let n_keys = 100_000u32;
    // float64 keys 0.5, 1.5, … mapped to int32 -(i + 1); duplicates of the first keys at
    // the end are ignored (first occurrence wins).
    let mut encode: Vec<Value> = (0..n_keys)
        .map(|i| json!([f64::from(i) + 0.5, -(i64::from(i)) - 1]))
        .collect();
    encode.extend((0..1000u32).map(|i| json!([f64::from(i) + 0.5, 7])));
    let codec = json!({"name": "cast_value", "configuration": {
        "data_type": "int32", "rounding": "nearest-even",
        "scalar_map": {"encode": encode}}});
    let chain = DynChain::from_array_to_array_codecs(&json!("float64"), &json!(0), &[codec])
        .expect("a valid chain");
    // 1M elements, every 50th one a key (20k distinct keys hit), the rest integers.
    let n = 1_000_000usize;
    let input: Vec<f64> = (0..n)
        .map(|i| {
            if i % 50 == 0 {
                ((i / 50) % n_keys as usize) as f64 + 0.5
            } else {
                (i % 1000) as f64
            }
        })
        .collect();
    let arr = DynArray::Float64(
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[n]), input.clone()).unwrap(),
    );
    let DynArray::Int32(out) = chain.encode(&arr).expect("encodes") else {
        panic!("int32 output expected");
    };
    for (i, (x, y)) in input.iter().zip(out.iter()).enumerate() {
        let want = if i % 50 == 0 {
            -((x - 0.5) as i32) - 1
        } else {
            *x as i32
        };
        assert_eq!(*y, want, "element {i} ({x})");
    }
}

/// Issue 14, finding 3: a run-time chain's memory does not grow with its length (blocks
/// alternate between two sets of buffers). 50,000 stages over 5,000 elements used to
/// allocate one 4096-element buffer per stage (1.3 GB); the values must be those of one
/// stage, since `bitround` is idempotent.
#[test]
fn long_chains_run_in_bounded_memory() {
    let stages = 50_000;
    let codecs: Vec<Value> = (0..stages)
        .map(|_| json!({"name": "bitround", "configuration": {"keepbits": 7}}))
        .collect();
    let chain =
        DynChain::from_array_to_array_codecs(&json!("float32"), &json!(0), &codecs).expect("valid");
    let one = DynChain::from_array_to_array_codecs(&json!("float32"), &json!(0), &codecs[..1])
        .expect("valid");
    let n = 5_000;
    let input: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 1000.0).collect();
    let arr = DynArray::Float32(
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[n]), input).expect("1-d"),
    );
    let long = chain.encode(&arr).expect("encodes");
    assert!(long.same_as(&one.encode(&arr).expect("encodes")));
    assert!(chain.decode(&long).expect("decodes").same_as(&long));
}

/// Issue 14, finding 6, read against the data type specs: the `bytes` encoding of a
/// sub-byte type ignores the bits above its width ("the upper `IIII` bits are ignored ...
/// arbitrary"), so `from_le_bytes` accepts them and the elements are the low bits.
#[test]
fn sub_byte_types_ignore_the_upper_bits_of_their_byte() {
    let a = DynArray::from_le_bytes(DTypeId::Int4, &[3], &[0xf3, 0x0f, 0x87]).expect("valid");
    let b = DynArray::from_le_bytes(DTypeId::Int4, &[3], &[0x03, 0xff, 0x07]).expect("valid");
    assert!(a.same_as(&b));
    assert_eq!(a.to_le_bytes(), vec![0x03, 0x0f, 0x07]);
}

/// Issue 14, finding 4: `encode_slice`/`decode_slice` with an input and an output of
/// different lengths fail the same way for every codec and chain, and write nothing.
#[test]
fn mismatched_slice_lengths_are_an_error() {
    use zquant::Rule;
    use zquant::{ArrayCodec, BitRound, CastOptions, CastValue, ScalarMap, ScaleOffset};
    use zquant::{FixedScaleOffset, PyNumber};
    fn check<C: ArrayCodec>(c: &C)
    where
        C::In: From<u8>,
        C::Out: From<u8>,
    {
        let src_in = [C::In::from(1u8); 5];
        let src_out = [C::Out::from(1u8); 5];
        for (n_src, n_dst) in [(5, 4), (4, 5), (0, 5), (5, 0)] {
            let mut dst = [C::Out::from(9u8); 5];
            let e = c
                .encode_slice(&src_in[..n_src], &mut dst[..n_dst])
                .unwrap_err();
            assert_eq!((e.rule, e.index), (Rule::LengthMismatch, n_src.min(n_dst)));
            assert!(
                dst.iter().all(|x| *x == C::Out::from(9u8)),
                "{}: wrote",
                c.name()
            );
            let mut back = [C::In::from(9u8); 5];
            let e = c
                .decode_slice(&src_out[..n_src], &mut back[..n_dst])
                .unwrap_err();
            assert_eq!((e.rule, e.index), (Rule::LengthMismatch, n_src.min(n_dst)));
        }
    }
    let so = ScaleOffset::<f64>::new(1.0, 2.0).unwrap();
    let cv = CastValue::<f64, f32>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    let cv8 = CastValue::<u8, f64>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    check(&so);
    check(&cv);
    check(&cv8);
    check(&BitRound::<f32>::new(5).unwrap());
    check(&FixedScaleOffset::<f64, u8>::new(PyNumber::Int(0), PyNumber::Int(1)).unwrap());
    check(&so.then(cv));
}

/// A `Caster` given words of other widths than it was built for converts nothing and fails,
/// rather than reading `f64` words as `f32` codes.
#[test]
fn caster_refuses_words_of_other_widths() {
    use zquant::__private::{Caster, KeyMap};
    use zquant::CastOptions;
    use zquant::dtype::{Format, Words, WordsMut};
    use zquant::{DType, Kind};
    let (Kind::Float(f32l), Kind::Int(u8l)) = (<f32 as DType>::KIND, <u8 as DType>::KIND) else {
        unreachable!()
    };
    let c = Caster::new(
        Format::Float(f32l),
        32,
        Format::Int(u8l),
        8,
        CastOptions::default(),
        KeyMap::empty(Format::Float(f32l)),
    );
    let mut out = [7u8; 2];
    assert!(c.run(Words::U64(&[0, 0]), WordsMut::U8(&mut out)).is_err());
    assert_eq!(out, [7, 7]);
    assert!(
        c.run(Words::U32(&[0, 0x3f80_0000]), WordsMut::U8(&mut out))
            .is_ok()
    );
    assert_eq!(out, [0, 1]);
    assert_eq!(c.run_one(0x4000_0000), Ok(2));
}
