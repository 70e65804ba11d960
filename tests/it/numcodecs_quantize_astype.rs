//! `numcodecs.quantize` and `numcodecs.astype` against numcodecs 0.17.1 under NumPy 2, bit
//! for bit: `tests/data/numcodecs_quantize_astype/vectors.json`, written by its
//! `generate.py` with numcodecs itself. Every case is run through a [`DynChain`] built from
//! the Zarr v3 codec object (and the big-endian ones through a Zarr v2 `.zarray`), encoding
//! and decoding, and compared byte for byte with numcodecs' scalar loops (the element by
//! element result; where NumPy's vector loop differs, which is NumPy's platform-defined
//! float -> uint32 cast of NaN and out-of-range values, the case says so and zquant gives the
//! scalar loop's value, which the test also checks is what the vector file records).

use std::path::Path;

use serde_json::{Value, json};
use zquant::zarr::ArrayMetadata;
use zquant::{DTypeId, DynArray, DynChain};

fn vectors() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/numcodecs_quantize_astype/vectors.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("vectors.json")
}

/// The data type of a NumPy type string (`"<f8"`, `"|u1"`, `">i2"`).
fn id(s: &str) -> DTypeId {
    let name = match &s[1..] {
        "f2" => "float16",
        "f4" => "float32",
        "f8" => "float64",
        "i1" => "int8",
        "i2" => "int16",
        "i4" => "int32",
        "i8" => "int64",
        "u1" => "uint8",
        "u2" => "uint16",
        "u4" => "uint32",
        "u8" => "uint64",
        "c8" => "complex64",
        "c16" => "complex128",
        other => panic!("unexpected type {other}"),
    };
    name.parse().unwrap()
}

fn hex(s: &Value) -> Vec<u8> {
    let s = s.as_str().expect("hex string");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn array(dtype: DTypeId, bytes: &[u8]) -> DynArray {
    DynArray::from_le_bytes(dtype, &[bytes.len() / dtype.size()], bytes).unwrap()
}

/// The first differing element, for the message.
fn first_diff(got: &[u8], want: &[u8], size: usize) -> String {
    let i = (0..got.len().min(want.len()))
        .find(|&i| got[i] != want[i])
        .map_or(0, |i| i / size);
    let at = |b: &[u8]| {
        b.get(i * size..(i + 1) * size).map(|e| {
            e.iter()
                .rev()
                .map(|x| format!("{x:02x}"))
                .collect::<String>()
        })
    };
    format!(
        "element {i}: numcodecs {:?}, zquant {:?}",
        at(want),
        at(got)
    )
}

/// Encode (or decode) one case's input and compare with numcodecs; returns the elements.
fn check(chain: &DynChain, case: &Value, dir: &str, from: DTypeId, to: DTypeId) -> usize {
    let v = &case[dir];
    let (input, want) = (hex(&v["input"]), hex(&v["output"]));
    assert_eq!(id(v["output_dtype"].as_str().unwrap()), to, "{case}");
    let a = array(from, &input);
    let out = if dir == "encode" {
        chain.encode(&a)
    } else {
        chain.decode(&a)
    }
    .unwrap_or_else(|e| panic!("{}: {dir}: {e}", case["configuration"]));
    let got = out.to_le_bytes();
    assert!(
        got == want,
        "{} {dir}: {}",
        case["configuration"],
        first_diff(&got, &want, to.size())
    );
    input.len() / from.size()
}

/// One case through a [`DynChain`] built from its Zarr v3 codec object, both ways: the
/// elements checked, and the directions where NumPy's vector loop differs.
fn run_case(case: &Value) -> (usize, usize) {
    let config = &case["configuration"];
    let (name, decoded, encoded) = match case["codec"].as_str().unwrap() {
        "quantize" => {
            let d = id(config["dtype"].as_str().unwrap());
            let e = config.get("astype").map_or(d, |a| id(a.as_str().unwrap()));
            ("numcodecs.quantize", d, e)
        }
        _ => (
            "numcodecs.astype",
            id(config["decode_dtype"].as_str().unwrap()),
            id(config["encode_dtype"].as_str().unwrap()),
        ),
    };
    let codec = json!({"name": name, "configuration": config});
    let fill = if decoded.name().starts_with("complex") {
        json!([0, 0])
    } else {
        json!(0)
    };
    let chain = DynChain::from_array_to_array_codecs(
        &json!(decoded.name()),
        &fill,
        std::slice::from_ref(&codec),
    )
    .unwrap_or_else(|e| panic!("{codec}: {e}"));
    assert_eq!(chain.to_metadata(), json!([codec]));
    // numcodecs' get_config is the configuration, with its `id` (and `astype` always).
    let mut get_config = case["get_config"].clone();
    let obj = get_config.as_object_mut().unwrap();
    obj.remove("id");
    for (k, val) in config.as_object().unwrap() {
        assert_eq!(obj.get(k), Some(val), "{case}");
    }
    let mut elements = check(&chain, case, "encode", decoded, encoded);
    if case.get("decode").is_some() {
        elements += check(&chain, case, "decode", encoded, decoded);
    }
    let mut vector_loop_differs = 0;
    for dir in ["encode", "decode"] {
        if case
            .get(dir)
            .is_some_and(|d| d.get("output_vector_loop").is_some())
        {
            // Only NumPy's float -> uint32 cast differs between its loops.
            let to = if dir == "encode" { encoded } else { decoded };
            assert_eq!(to, DTypeId::UInt32, "{case}");
            vector_loop_differs += 1;
        }
    }
    (elements, vector_loop_differs)
}

/// Every case of `key` in the vectors: (cases, elements, directions where NumPy's vector
/// loop differs).
fn run_cases(key: &str) -> (usize, usize, usize) {
    let v = vectors();
    assert_eq!(v["numcodecs"], "0.17.1");
    let (mut cases, mut elements, mut vector_loop_differs) = (0, 0, 0);
    for case in v[key].as_array().unwrap() {
        let (e, d) = run_case(case);
        elements += e;
        vector_loop_differs += d;
        cases += 1;
    }
    eprintln!(
        "numcodecs vectors ({key}): {cases} cases, {elements} elements bit for bit \
         ({vector_loop_differs} directions where NumPy's vector loop differs)"
    );
    (cases, elements, vector_loop_differs)
}

#[test]
fn numcodecs_vectors_bit_for_bit() {
    let (cases, _, vector_loop_differs) = run_cases("cases");
    assert!(cases >= 400 && vector_loop_differs == 4);
}

/// `numcodecs.astype` to and from `complex64` and `complex128`: NumPy keeps the real part
/// (the imaginary part is dropped) and casts into complex with a `+0.0` imaginary part.
#[test]
fn complex_vectors_bit_for_bit() {
    let (cases, _, vector_loop_differs) = run_cases("complex");
    // Each complex type against the 12 other types both ways and itself; the float ->
    // uint32 casts of the real part differ between NumPy's loops.
    assert_eq!((cases, vector_loop_differs), (2 * (12 * 2 + 1), 4));
}

/// Big-endian types in the filter configuration, as zarr-python writes a Zarr v2 array of
/// that byte order: the values are the native configuration's.
#[test]
fn big_endian_configurations_through_zarr_v2() {
    let v = vectors();
    let mut n = 0;
    for case in v["big_endian"].as_array().unwrap() {
        let filter = &case["get_config"];
        let decoded = filter
            .get("dtype")
            .or_else(|| filter.get("decode_dtype"))
            .and_then(Value::as_str)
            .unwrap();
        let zarray = json!({
            "zarr_format": 2, "shape": [1], "chunks": [1], "dtype": decoded,
            "compressor": null, "fill_value": 0, "order": "C", "filters": [filter],
        });
        let meta = ArrayMetadata::from_v2_json(&zarray).unwrap_or_else(|e| panic!("{zarray}: {e}"));
        let chain = meta.chain().unwrap();
        let input = hex(&case["input"]);
        let from = id(decoded);
        let to = id(case["output_dtype"].as_str().unwrap());
        let got = chain.encode(&array(from, &input)).unwrap().to_le_bytes();
        let want = hex(&case["output"]);
        assert!(
            got == want,
            "{filter}: {}",
            first_diff(&got, &want, to.size())
        );
        n += 1;
    }
    assert_eq!(n, 6);
}

/// NaN into and out of float16 keeps NumPy's bits (signaling stays signaling), as NumPy 2.5.5
/// gives them on x86-64 with both its loops: `0x7c01 -> f32 0x7f802000`, `-> f64
/// 0x7ff0040000000000`; `f32 0x7f800001 -> f16 0x7c01`; `f64 0x7ff4000000000000 -> f16
/// 0x7d00`; the same type copies the bits.
#[test]
fn float16_nans_keep_numpys_bits() {
    use zquant::{ArrayCodec, AsType};
    let h = half::f16::from_bits(0x7c01);
    let c = AsType::<half::f16, f32>::new().unwrap();
    assert_eq!(c.encode_one(h).to_bits(), 0x7f80_2000);
    assert_eq!(c.decode_one(f32::from_bits(0x7f80_0001)).to_bits(), 0x7c01);
    assert_eq!(c.decode_one(f32::from_bits(0xff80_2000)).to_bits(), 0xfc01);
    let d = AsType::<half::f16, f64>::new().unwrap();
    assert_eq!(d.encode_one(h).to_bits(), 0x7ff0_0400_0000_0000);
    assert_eq!(
        d.decode_one(f64::from_bits(0x7ff4_0000_0000_0000))
            .to_bits(),
        0x7d00
    );
    let same = AsType::<half::f16, half::f16>::new().unwrap();
    assert_eq!(same.encode_one(h).to_bits(), 0x7c01);
    let mut out = [0f32; 1];
    c.encode_slice(&[h], &mut out).unwrap();
    assert_eq!(out[0].to_bits(), 0x7f80_2000);
}
