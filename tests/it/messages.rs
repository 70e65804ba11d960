//! The exact text of the errors and warnings a newcomer meets first: each names what failed,
//! where, and what to write instead.

use ndarray::{Array3, array};
use serde_json::{Value, json};
use zquant::CodecError;
use zquant::{
    ArrayCodecExt, CastOptions, CastValue, DynArray, DynChain, MetadataError, OutOfRange, Rounding,
    ScalarMap,
};

fn chain(dt: &str, codecs: Value) -> Result<DynChain, MetadataError> {
    DynChain::from_array_to_array_codecs(&json!(dt), &json!(0), codecs.as_array().unwrap())
}

fn encode_error(c: &DynChain, input: &DynArray) -> String {
    match c.encode(input) {
        Err(CodecError::Element(e)) => e.to_string(),
        other => panic!("expected an element error, got {other:?}"),
    }
}

/// The example: a 3-D array through scale_offset -> cast_value uint16, without an
/// out_of_range rule. The message names the target type and range, the N-d position, the
/// user's value as well as the stage's, and the fix.
#[test]
fn out_of_range_in_a_chain_over_a_3d_array() {
    let c = chain(
        "float64",
        json!([
            {"name": "scale_offset", "configuration": {"offset": 0, "scale": 10}},
            {"name": "cast_value", "configuration": {"data_type": "uint16"}}
        ]),
    )
    .unwrap();
    let mut a = Array3::<f64>::zeros((2, 10, 10));
    a[[0, 8, 2]] = 7268.5;
    let input = DynArray::from_array(a.into_dyn()).unwrap();
    assert_eq!(
        encode_error(&c, &input),
        "cast_value encode: value out of range of uint16 [0, 65535] (no out_of_range rule) \
         at element [0, 8, 2] (C-order index 82): value 72685.0 at this codec, 7268.5 in the \
         array; fix: choose a wider data_type (or refit scale and offset to the data), or add \
         \"out_of_range\": \"clamp\" (or \"wrap\") to cast_value's configuration, which \
         stores such values with an unbounded error (clamped to the range's ends, or wrapped)"
    );
}

#[test]
fn nan_into_an_integer_suggests_a_scalar_map() {
    let c = chain(
        "float32",
        json!([{"name": "cast_value", "configuration": {"data_type": "uint8"}}]),
    )
    .unwrap();
    let input = DynArray::from_vec(vec![1.0f32, f32::NAN]);
    assert_eq!(
        encode_error(&c, &input),
        "cast_value encode: NaN is not representable in uint8 at element 1: value NaN; fix: \
         map NaN to a value of uint8 with \"scalar_map\": {\"encode\": [[\"NaN\", v]], \
         \"decode\": [[v, \"NaN\"]]}, v a value the data never takes"
    );
}

#[test]
fn typed_codecs_report_the_same_way() {
    let codec: CastValue<f32, i8> =
        CastValue::new(CastOptions::default(), ScalarMap::default()).unwrap();
    let Err(CodecError::Element(e)) = codec.encode(&array![[1.0f32, -200.0]]) else {
        panic!("-200 fits no int8")
    };
    assert_eq!((&*e.position, e.value.as_str()), (&[0, 1][..], "-200.0"));
    assert_eq!(
        e.to_string(),
        "cast_value encode: value out of range of int8 [-128, 127] (no out_of_range rule) at \
         element [0, 1] (C-order index 1): value -200.0; fix: choose a wider data_type (or \
         refit scale and offset to the data), or add \"out_of_range\": \"clamp\" (or \"wrap\") \
         to cast_value's configuration, which stores such values with an unbounded error \
         (clamped to the range's ends, or wrapped)"
    );
}

#[test]
fn a_misspelled_rounding_mode_lists_the_five() {
    let e = chain(
        "float32",
        json!([{"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest_even"}}]),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cast_value: `rounding`: unknown rounding mode \"nearest_even\": expected one of \
         \"nearest-even\", \"towards-zero\", \"towards-positive\", \"towards-negative\", \
         \"nearest-away\"; did you mean \"nearest-even\"?"
    );
    let e = chain(
        "float32",
        json!([{"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clip"}}]),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cast_value: `out_of_range`: unknown rule \"clip\": expected one of \"clamp\", \"wrap\"; \
         did you mean \"clamp\"?"
    );
}

#[test]
fn unknown_members_and_codecs_are_named_as_such() {
    let object = json!({"name": "scale_offset", "config": {}});
    let e = chain("float32", json!([object.clone()])).unwrap_err();
    // The object as serde_json writes it: its key order depends on serde_json's
    // `preserve_order` feature, which the optional `zarrs` dependency turns on.
    assert_eq!(
        e.to_string(),
        format!(
            "codec object: {object}: unknown member \"config\": expected one of \"name\", \
             \"configuration\", \"must_understand\"; did you mean \"configuration\"?"
        )
    );
    let e = chain("float32", json!([{"name": "scale-offset"}])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown codec \"scale-offset\": expected one of \"scale_offset\", \"cast_value\", \
         \"bitround\", \"numcodecs.bitround\", \"numcodecs.fixedscaleoffset\", \
         \"numcodecs.quantize\", \"numcodecs.astype\"; did you mean \"scale_offset\"?"
    );
    let e = chain(
        "float32",
        json!([{"name": "scale_offset", "configuration": {"ofset": 1}}]),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "scale_offset: `configuration`: unknown key \"ofset\": expected one of \"offset\", \
         \"scale\"; did you mean \"offset\"?"
    );
}

/// Clamping onto a `scalar_map` decode key: valid metadata, so a warning, not an error.
#[test]
fn clamp_onto_a_scalar_map_key_is_a_warning() {
    let meta = json!([{"name": "cast_value", "configuration": {
        "data_type": "int16", "out_of_range": "clamp",
        "scalar_map": {"encode": [["NaN", -32768]], "decode": [[-32768, "NaN"]]}}}]);
    let c = chain("float32", meta).unwrap();
    assert_eq!(
        c.warnings(),
        [
            "cast_value: \"out_of_range\": \"clamp\" writes -32768 for every value below the \
          range of int16, and \"scalar_map\" decodes -32768 as NaN: such values will read back \
          as NaN; map NaN to a code clamping cannot produce (for an integer target, narrow the \
          data's range first), or drop \"clamp\" to have them rejected"
        ]
    );
    // What the warning is about, shown: -1e6 reads back as NaN.
    let back = c
        .decode(&c.encode(&DynArray::from_vec(vec![-1e6f32, 5.0])).unwrap())
        .unwrap();
    let back = back.to_vec::<f32>().unwrap();
    assert!(back[0].is_nan() && back[1] == 5.0);
    // The same in typed code; and no warning without the collision.
    let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
    let typed: CastValue<f32, i16> = CastValue::new(opts, ScalarMap::nan_as(i16::MIN)).unwrap();
    assert_eq!(typed.warnings(), c.warnings());
    let safe: CastValue<f32, i16> = CastValue::new(opts, ScalarMap::nan_as(0)).unwrap();
    assert!(safe.warnings().is_empty());
    let wrap = CastOptions::new(Rounding::NearestEven, OutOfRange::Wrap);
    let wrapped: CastValue<f32, u8> = CastValue::new(wrap, ScalarMap::nan_as(0)).unwrap();
    assert_eq!(wrapped.warnings().len(), 1);
    assert!(wrapped.warnings()[0].contains("\"wrap\" can write any uint8 code, including 0"));
}

#[test]
fn keepbits_zero_depends_on_the_name() {
    let zero = |name: &str, dt: &str| {
        chain(
            dt,
            json!([{"name": name, "configuration": {"keepbits": 0}}]),
        )
        .map(drop)
    };
    let e = zero("bitround", "float32").unwrap_err().to_string();
    assert!(e.contains("must be an integer >= 1, got 0"), "{e}");
    assert!(e.contains("numcodecs.bitround"), "{e}");
    zero("numcodecs.bitround", "float32").unwrap();
    zero("numcodecs.bitround", "float16").unwrap();
    let e = zero("numcodecs.bitround", "int16").unwrap_err().to_string();
    assert!(e.contains("must be at least 1 for int16"), "{e}");
    // Construction (the data type not yet known) and binding agree.
    let check = |name, k| zquant::check_configuration(name, Some(&json!({"keepbits": k})));
    assert!(check("bitround", 0).is_err());
    check("numcodecs.bitround", 0).unwrap();
    check("bitround", 1).unwrap();
}

#[test]
fn cast_value_targets_are_checked_before_the_source_is_known() {
    let check = |c: Value| zquant::check_configuration("cast_value", Some(&c));
    let e = check(json!({"data_type": "complex64"}))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cast_value only targets integer and floating-point types"),
        "{e}"
    );
    let e = check(json!({"data_type": "float32", "out_of_range": "wrap"})).unwrap_err();
    assert!(
        e.to_string().contains("wrap requires an integral target"),
        "{e}"
    );
    check(json!({"data_type": "uint8", "out_of_range": "wrap"})).unwrap();
}
