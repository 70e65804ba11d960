//! One fuzz case of the run-time API, shared by the libFuzzer target
//! (`fuzz/fuzz_targets/runtime.rs`) and its bounded proptest twin in `cargo test`
//! (`tests/it/robustness.rs`).
//!
//! Input: JSON text `{"data_type": …, "fill_value": …, "codecs": […]}`, a NUL byte, then
//! the array's little-endian element bytes (at most 4096 elements are used). Every path
//! must return `Ok` or a typed error, never panic, and each call must finish within
//! [`BUDGET`]: a slow call on a small input is a finding too (the cost must be bounded by
//! the data, not by a number in the metadata).
//!
//! Checked properties:
//! - metadata: a chain that builds writes metadata (`to_metadata`) that builds again into
//!   the same chain (same metadata, data types and encoded fill value);
//! - the fill value encodes to the encoded fill value the chain carries;
//! - data: encode and decode return arrays of the right shape and data type, or an element
//!   error; both chains (original and re-read) give the same results.

use std::time::{Duration, Instant};

use serde_json::Value;
use zquant::CodecError;
use zquant::{DynArray, DynChain};

/// The time one call may take on a fuzz-sized input.
pub const BUDGET: Duration = Duration::from_millis(100);

/// At most this many elements are decoded from the bytes.
const MAX_ELEMENTS: usize = 4096;

/// `f()`, which must finish within `budget`.
fn timed<R>(budget: Duration, what: &str, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    let dt = t.elapsed();
    assert!(dt <= budget, "{what} took {dt:?} (budget {budget:?})");
    r
}

fn shape_and_kind(r: &Result<DynArray, CodecError>, chain_out: zquant::DTypeId, n: usize) {
    match r {
        Ok(a) => {
            assert_eq!(a.shape(), &[n][..], "output shape");
            assert_eq!(a.dtype(), chain_out, "output data type");
        }
        Err(CodecError::Element(e)) => assert!(e.index < n.max(1), "error index {e:?}"),
        Err(e) => panic!("not an element error: {e}"),
    }
}

fn same(a: &Result<DynArray, CodecError>, b: &Result<DynArray, CodecError>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x.same_as(y),
        (Err(x), Err(y)) => x == y,
        _ => false,
    }
}

/// Run one case (see the module docs) with the time budget [`BUDGET`].
#[allow(dead_code)] // The bounded twin in `cargo test` uses `run_case_within`.
pub fn run_case(data: &[u8]) {
    run_case_within(data, BUDGET);
}

/// Run one case with a time budget per call (`cargo test` gives a looser one: its tests
/// share the machine's cores, and a stall there is not a finding).
pub fn run_case_within(data: &[u8], budget: Duration) {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (json, bytes) = (&data[..split], data.get(split + 1..).unwrap_or(&[]));
    let Ok(meta) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let (Some(dt), Some(fill), Some(Value::Array(codecs))) = (
        meta.get("data_type"),
        meta.get("fill_value"),
        meta.get("codecs"),
    ) else {
        return;
    };
    let Ok(chain) = timed(budget, "from_metadata", || {
        DynChain::from_array_to_array_codecs(dt, fill, codecs)
    }) else {
        return;
    };

    // The fill value encodes to the encoded fill value.
    let f = timed(budget, "encode fill", || chain.encode(chain.fill_value()));
    match f {
        Ok(x) => assert!(x.same_as(chain.encoded_fill_value()), "fill value"),
        Err(e) => panic!("the fill value was accepted but does not encode: {e}"),
    }

    // Metadata round trip.
    let md = timed(budget, "to_metadata", || chain.to_metadata());
    let list = md.as_array().expect("a codec list").clone();
    let again = timed(budget, "from_metadata again", || {
        DynChain::from_array_to_array_codecs(&chain.data_type().to_json(), fill, &list)
    })
    .unwrap_or_else(|e| panic!("to_metadata {md} does not build again: {e}"));
    assert_eq!(again.to_metadata(), md);
    assert_eq!(again.data_type(), chain.data_type());
    assert_eq!(again.encoded_data_type(), chain.encoded_data_type());
    assert!(
        again
            .encoded_fill_value()
            .same_as(chain.encoded_fill_value())
    );

    // Data, both directions.
    let id = chain.data_type().id;
    let n = (bytes.len() / id.size()).min(MAX_ELEMENTS);
    let Ok(input) = DynArray::from_le_bytes(id, &[n], &bytes[..n * id.size()]) else {
        panic!("{n} elements of {id} do not read from their bytes");
    };
    let enc = timed(budget, "encode", || chain.encode(&input));
    shape_and_kind(&enc, chain.encoded_data_type().id, n);
    assert!(
        same(&enc, &again.encode(&input)),
        "the re-read chain encodes otherwise"
    );
    if let Ok(e) = &enc {
        let dec = timed(budget, "decode", || chain.decode(e));
        shape_and_kind(&dec, id, n);
    }
    // Decoding arbitrary encoded bytes, too.
    let out = chain.encoded_data_type().id;
    let m = (bytes.len() / out.size()).min(MAX_ELEMENTS);
    if let Ok(encoded) = DynArray::from_le_bytes(out, &[m], &bytes[..m * out.size()]) {
        let dec = timed(budget, "decode arbitrary", || chain.decode(&encoded));
        shape_and_kind(&dec, id, m);
    }
}
