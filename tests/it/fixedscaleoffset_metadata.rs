//! `numcodecs.fixedscaleoffset` metadata through the run-time API: which field each
//! invalid configuration is reported on, and `astype` defaulting to `dtype`.

use serde_json::{Value, json};
use zquant::{DTypeId, DynChain, MetadataError};

const NAME: &str = "numcodecs.fixedscaleoffset";

#[test]
fn metadata_rules() {
    let build = |dt: &str, config: Value| {
        DynChain::from_array_to_array_codecs(
            &json!(dt),
            &json!(0),
            &[json!({"name": NAME, "configuration": config})],
        )
    };
    let field_of = |r: Result<DynChain, MetadataError>| match r {
        Err(MetadataError::Field { field, .. }) => field,
        other => panic!("expected a field error, got {other:?}"),
    };
    let ok = build(
        "float32",
        json!({"offset": 1e3, "scale": 0.5, "dtype": "<f4", "astype": "uint8"}),
    )
    .unwrap();
    assert_eq!(ok.encoded_data_type().id, DTypeId::UInt8);
    assert_eq!(
        ok.to_metadata(),
        json!([{"name": NAME, "configuration":
            {"offset": 1e3, "scale": 0.5, "dtype": "<f4", "astype": "uint8"}}])
    );
    // astype defaults to dtype.
    let same = build("int16", json!({"offset": 1, "scale": 2, "dtype": "<i2"})).unwrap();
    assert_eq!(same.encoded_data_type().id, DTypeId::Int16);
    let cfg = |extra: Value| {
        let mut c = json!({"offset": 0, "scale": 1, "dtype": "<f8"});
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        c
    };
    assert_eq!(
        field_of(build("float64", cfg(json!({"id": "x"})))),
        "configuration"
    );
    assert_eq!(
        field_of(build("float64", cfg(json!({"dtype": "<f4"})))),
        "dtype"
    );
    assert_eq!(
        field_of(build("float64", cfg(json!({"dtype": ">f8"})))),
        "dtype"
    );
    assert_eq!(
        field_of(build("float64", cfg(json!({"dtype": "<x8"})))),
        "dtype"
    );
    assert_eq!(
        field_of(build("float64", cfg(json!({"dtype": null})))),
        "dtype"
    );
    assert_eq!(
        field_of(build("float64", cfg(json!({"offset": null})))),
        "offset"
    );
    assert_eq!(
        field_of(build("float64", cfg(json!({"scale": "2"})))),
        "scale"
    );
    assert_eq!(
        field_of(build("float64", cfg(json!({"astype": 3})))),
        "astype"
    );
    assert_eq!(
        field_of(build(
            "uint8",
            json!({"offset": 256, "scale": 1, "dtype": "|u1"})
        )),
        "offset"
    );
    assert!(build("uint8", json!({"offset": 1, "scale": 1, "dtype": ">u1"})).is_ok());
    for (dt, astype) in [
        ("bfloat16", "bfloat16"),
        ("float64", "int4"),
        ("float64", "<c8"),
    ] {
        let r = build(
            dt,
            json!({"offset": 0, "scale": 1, "dtype": dt, "astype": astype}),
        );
        assert!(
            matches!(r, Err(MetadataError::UnsupportedDataType { .. })),
            "{dt} -> {astype}: {r:?}"
        );
    }
}
