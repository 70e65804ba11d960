//! Declared data types at run time: registered by name, readable in metadata, held by
//! `DynArray`, and round-tripped through a run-time chain built from a typed chain's
//! `to_metadata()`.

use ndarray::{ArrayD, IxDyn};
use serde_json::json;
use zquant::CastValueConfig;
use zquant::DataType;
use zquant::dtype::{RegisterError, registered_dtypes};
use zquant::{
    ArrayCodec, ArrayCodecExt, CastOptions, CastValue, DTypeId, DynArray, DynChain, OutOfRange,
    Rounding, ScalarMap, register_dtype,
};

#[zquant::dtype(name = "test_uint12", int(bits = 12, unsigned))]
pub struct UInt12(u16);

#[zquant::dtype(
    name = "test_float8_e4m3fn",
    float(exponent = 4, mantissa = 3, bias = 7, nan = "all_ones")
)]
pub struct E4M3Fn(u8);

#[zquant::dtype(name = "test_complex_e4m3fn", complex(E4M3Fn))]
pub struct ComplexE4M3Fn(zquant::dtype::Complex<E4M3Fn>);

/// Only ever used through `to_metadata()`, never registered by hand.
#[zquant::dtype(name = "test_int10_unregistered", int(bits = 10, signed))]
pub struct Int10(u16);

/// Same name as `UInt12`, another Rust type.
#[zquant::dtype(name = "test_uint12", int(bits = 12, unsigned))]
pub struct Impostor(u16);

#[test]
fn registration_is_idempotent_and_names_resolve() {
    let id = register_dtype::<UInt12>().unwrap();
    assert_eq!(register_dtype::<UInt12>().unwrap(), id);
    assert!(matches!(id, DTypeId::Custom(c) if c.is::<UInt12>()));
    assert_eq!("test_uint12".parse::<DTypeId>().unwrap(), id);
    assert_eq!(id.name(), "test_uint12");
    assert_eq!(id.size(), 2);
    assert_eq!(id.word_bits(), 16);
    assert!(id.is_real());
    assert!(registered_dtypes().contains(&id));
    // A built-in type registers as itself.
    assert_eq!(register_dtype::<f32>().unwrap(), DTypeId::Float32);
    let dt = DataType::from_json(&json!("test_uint12")).unwrap();
    assert_eq!(dt.id, id);
    assert_eq!(dt.to_json(), json!("test_uint12"));
}

#[test]
fn a_taken_name_is_an_error_that_says_what_to_do() {
    register_dtype::<UInt12>().unwrap();
    let e: RegisterError = register_dtype::<Impostor>().unwrap_err();
    assert_eq!(e.name, "test_uint12");
    let text = e.to_string();
    assert!(text.contains("already taken by"), "{text}");
    assert!(text.contains("custom_dtype::UInt12"), "{text}");
    assert!(text.contains("another `name = \"…\"`"), "{text}");
    #[zquant::dtype(
        name = "float32",
        float(exponent = 8, mantissa = 23, bias = 127, inf, nan = "ieee")
    )]
    pub struct MyF32(u32);
    let e = register_dtype::<MyF32>().unwrap_err();
    assert_eq!(e.taken_by, "the built-in type float32");
}

/// Never registered by hand nor named by a typed codec here: known only because the
/// attribute declared it.
#[zquant::dtype(name = "test_uint7_self_registered", int(bits = 7, unsigned))]
pub struct UInt7(u8);

/// Two Rust types declaring one name: neither registers itself.
#[zquant::dtype(name = "test_twin", int(bits = 6, unsigned))]
pub struct TwinA(u8);
#[zquant::dtype(name = "test_twin", int(bits = 6, signed))]
pub struct TwinB(u8);

#[test]
fn declared_types_read_in_metadata_without_registration() {
    let id: DTypeId = "test_uint7_self_registered".parse().unwrap();
    assert!(matches!(id, DTypeId::Custom(c) if c.is::<UInt7>()));
    assert!(registered_dtypes().contains(&id));
    assert_eq!(register_dtype::<UInt7>().unwrap(), id);
    let codecs = [json!({"name": "cast_value", "configuration": {
        "data_type": "test_uint7_self_registered", "rounding": "nearest-even",
        "out_of_range": "clamp"}})];
    let chain =
        DynChain::from_array_to_array_codecs(&json!("float32"), &json!(0.0), &codecs).unwrap();
    let out = chain
        .encode(&DynArray::from_vec(vec![1.4f32, 200.0, -3.0]))
        .unwrap();
    assert_eq!(
        out.to_vec::<UInt7>(),
        Some(vec![UInt7(1), UInt7(127), UInt7(0)])
    );
}

#[test]
fn a_name_two_declared_types_share_waits_for_registration() {
    assert!("test_twin".parse::<DTypeId>().is_err());
    let a = register_dtype::<TwinA>().unwrap();
    assert_eq!("test_twin".parse::<DTypeId>().unwrap(), a);
    let e = register_dtype::<TwinB>().unwrap_err();
    assert!(e.to_string().contains("custom_dtype::TwinA"), "{e}");
}

#[test]
fn unknown_names_say_how_to_register() {
    let e = "test_never_declared".parse::<DTypeId>().unwrap_err();
    assert!(
        e.to_string().contains("zquant::register_dtype::<T>()"),
        "{e}"
    );
}

/// The case: a typed chain's metadata must read back as a run-time chain, which then
/// computes exactly what the typed chain computes.
#[test]
fn typed_metadata_reads_back_and_runs_the_same() {
    let typed: CastValue<f32, Int10> = CastValue::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        ScalarMap::default(),
    )
    .unwrap();
    let codecs = typed.to_metadata();
    assert_eq!(
        codecs["configuration"]["data_type"],
        json!("test_int10_unregistered")
    );
    let config = CastValueConfig::from_configuration(codecs.get("configuration")).unwrap();
    assert_eq!(config.data_type.id.name(), "test_int10_unregistered");
    let chain =
        DynChain::from_array_to_array_codecs(&json!("float32"), &json!(-0.0), &[codecs]).unwrap();
    assert_eq!(
        chain.encoded_data_type().id.name(),
        "test_int10_unregistered"
    );
    assert_eq!(chain.to_metadata(), json!([typed.to_metadata()]));

    let data: Vec<f32> = vec![0.5, 1.5, -2.5, 511.4, 600.0, -1e9, 1e30, -0.0, 3.7];
    let input = ArrayD::from_shape_vec(IxDyn(&[3, 3]), data).unwrap();
    let want = typed.encode(&input).unwrap();
    let got = chain
        .encode(&DynArray::from_array(input.clone()).unwrap())
        .unwrap();
    assert_eq!(got.shape(), &[3, 3]);
    assert_eq!(got.to_array::<Int10>(), Some(want.clone()));
    // Decoding the run-time output gives the typed decode.
    let back = chain.decode(&got).unwrap();
    assert_eq!(back.to_array::<f32>(), Some(typed.decode(&want).unwrap()));
    // The encoded fill value went through the chain too: -0.0 -> 0.
    assert_eq!(chain.encoded_fill_value().first_to_json(), Some(json!(0)));
}

#[test]
fn dyn_arrays_hold_declared_types_as_bytes_and_values() {
    let id = register_dtype::<E4M3Fn>().unwrap();
    let codes: Vec<E4M3Fn> = (0..=255u8).map(E4M3Fn).collect();
    let a = ArrayD::from_shape_vec(IxDyn(&[16, 16]), codes.clone()).unwrap();
    let d = DynArray::from_array(a.clone()).unwrap();
    assert_eq!(d.dtype(), id);
    let bytes = d.to_le_bytes();
    assert_eq!(bytes, (0..=255u8).collect::<Vec<_>>());
    let back = DynArray::from_le_bytes(id, &[16, 16], &bytes).unwrap();
    assert!(back.same_as(&d));
    assert_eq!(back.to_array::<E4M3Fn>(), Some(a));
    // A fill value of the declared type, and its JSON.
    let f = DynArray::fill_value(id, &json!(448.0)).unwrap();
    assert_eq!(f.first_to_json(), Some(json!(448.0)));
    assert_eq!(f.to_vec::<E4M3Fn>(), Some(vec![E4M3Fn(0x7e)]));
    assert!(DynArray::fill_value(id, &json!(1e6)).is_err());
    // The wrong type is `None`, not a reinterpretation.
    assert_eq!(d.to_vec::<u8>(), None);
    // Complex of a declared float: two words per element.
    let cid = register_dtype::<ComplexE4M3Fn>().unwrap();
    assert_eq!(cid.words_per_element(), 2);
    let c = DynArray::fill_value(cid, &json!([1.0, "NaN"])).unwrap();
    assert_eq!(c.first_to_json(), Some(json!([1.0, "NaN"])));
    assert_eq!(c.to_le_bytes(), vec![0x38, 0x7f]);
}

#[test]
fn run_time_chains_into_a_declared_float_match_the_typed_codec() {
    register_dtype::<E4M3Fn>().unwrap();
    let meta = json!({"name": "cast_value", "configuration": {
        "data_type": "test_float8_e4m3fn", "rounding": "nearest-even", "out_of_range": "clamp",
        "scalar_map": {"encode": [["Infinity", 448.0]]}}});
    let chain = DynChain::from_array_to_array_codecs(
        &json!("float64"),
        &json!(0.0),
        std::slice::from_ref(&meta),
    )
    .unwrap();
    let config = CastValueConfig::from_configuration(meta.get("configuration")).unwrap();
    let typed: CastValue<f64, E4M3Fn> = CastValue::from_config(&config).unwrap();
    let xs: Vec<f64> = (-600..600)
        .map(|i| i as f64 * 0.77)
        .chain([f64::NAN, f64::INFINITY])
        .collect();
    let input = ArrayD::from_shape_vec(IxDyn(&[xs.len()]), xs).unwrap();
    let want = typed.encode(&input).unwrap();
    let got = chain.encode(&DynArray::from_array(input).unwrap()).unwrap();
    let got = got.to_array::<E4M3Fn>().unwrap();
    assert!(
        got.iter()
            .zip(want.iter())
            .all(|(a, b)| zquant::DType::same_as(*a, *b))
    );
}

/// `DynChain::encode_array` takes a typed view of any layout, built-in or declared, and
/// equals `encode` of the same elements as a `DynArray`.
#[test]
fn run_time_chains_read_typed_views() {
    register_dtype::<UInt12>().unwrap();
    let cast = json!({"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp"}});
    let chain =
        DynChain::from_array_to_array_codecs(&json!("test_uint12"), &json!(0), &[cast]).unwrap();
    let a = ArrayD::from_shape_vec(IxDyn(&[2, 3]), (0..6u16).map(|i| UInt12(i * 100)).collect())
        .unwrap();
    let view = a.t();
    let got = chain.encode_array(&view).unwrap();
    let want = chain
        .encode(&DynArray::from_array(view.to_owned()).unwrap())
        .unwrap();
    assert!(got.same_as(&want));
    assert_eq!(got.to_vec::<u8>(), Some(vec![0, 255, 100, 255, 200, 255]));
    // Another element type is an error naming both.
    let e = chain.encode_array(&ndarray::array![1.0f32]).unwrap_err();
    assert!(e.to_string().contains("test_uint12"), "{e}");
}
