//! Peak memory of a fused chain: `scale_offset -> cast_value(uint8)` over a 1 GiB `f64`
//! array, for `/usr/bin/time -v` (its "Maximum resident set size").
//!
//! ```sh
//! cargo build --release --example chain_memory
//! /usr/bin/time -v target/release/examples/chain_memory typed   # Chain::encode_slice
//! /usr/bin/time -v target/release/examples/chain_memory array   # ArrayCodecExt::encode
//! /usr/bin/time -v target/release/examples/chain_memory dyn     # DynChain::encode
//! /usr/bin/time -v target/release/examples/chain_memory decode  # DynChain::decode
//! ```
//!
//! The input is filled in place (no second copy). A fused chain should need the input, the
//! output and its block-sized intermediates (a few hundred KiB): 1 GiB + 128 MiB + a few
//! MiB. A chain that materialised the intermediate `f64` array would need another 1 GiB.
//! The program prints the sizes it allocated so that the RSS can be read against them.

use std::process::ExitCode;

use ndarray::{Array1, ArrayD, IxDyn};
use zquant::{ArrayCodec, ArrayCodecExt, DynArray, DynChain};

const ELEMENTS: usize = 1 << 27; // 128 Mi f64 = 1 GiB

const METADATA: &str = r#"[
    {"name": "scale_offset", "configuration": {"offset": 250, "scale": 4}},
    {"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even"}}
]"#;

/// A smooth ramp in `[250, 313]`, written in place.
fn fill(x: &mut [f64]) {
    let n = x.len() as f64;
    for (i, v) in x.iter_mut().enumerate() {
        *v = 250.0 + 63.0 * (i as f64 / n);
    }
}

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "typed".into());
    let codecs: Vec<serde_json::Value> = match serde_json::from_str(METADATA) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("metadata: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (data_type, fill_value) = (serde_json::json!("float64"), serde_json::json!(250.0));
    let dyn_chain = match DynChain::from_array_to_array_codecs(&data_type, &fill_value, &codecs) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("chain: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mib = |bytes: usize| bytes as f64 / (1 << 20) as f64;
    let (input_bytes, output_bytes) = match mode.as_str() {
        "decode" => (ELEMENTS, ELEMENTS * 8),
        _ => (ELEMENTS * 8, ELEMENTS),
    };
    println!(
        "{mode}: {ELEMENTS} elements, input {:.0} MiB, output {:.0} MiB, sum {:.0} MiB",
        mib(input_bytes),
        mib(output_bytes),
        mib(input_bytes + output_bytes)
    );
    let result = match mode.as_str() {
        "typed" | "array" => {
            let chain = zquant::Chain::new(
                zquant::ScaleOffset::<f64>::new(250.0, 4.0).expect("valid"),
                zquant::CastValue::<f64, u8>::new(
                    zquant::CastOptions::new(
                        zquant::Rounding::NearestEven,
                        zquant::OutOfRange::Error,
                    ),
                    zquant::ScalarMap::default(),
                )
                .expect("valid"),
            );
            let mut x = vec![0.0f64; ELEMENTS];
            fill(&mut x);
            if mode == "typed" {
                let mut y = vec![0u8; ELEMENTS];
                chain
                    .encode_slice(&x, &mut y)
                    .map(|()| y.iter().map(|&b| u64::from(b)).sum::<u64>())
                    .map_err(|e| e.to_string())
            } else {
                let a = Array1::from_vec(x);
                chain
                    .encode(&a)
                    .map(|y| y.iter().map(|&b| u64::from(b)).sum::<u64>())
                    .map_err(|e| e.to_string())
            }
        }
        "dyn" => {
            let mut x = vec![0.0f64; ELEMENTS];
            fill(&mut x);
            let a = ArrayD::from_shape_vec(IxDyn(&[ELEMENTS]), x).expect("1-d");
            dyn_chain
                .encode(&DynArray::Float64(a))
                .map(|y| y.shape().iter().product::<usize>() as u64)
                .map_err(|e| e.to_string())
        }
        "decode" => {
            let y: Vec<u8> = (0..ELEMENTS).map(|i| (i % 252) as u8).collect();
            let a = ArrayD::from_shape_vec(IxDyn(&[ELEMENTS]), y).expect("1-d");
            dyn_chain
                .decode(&DynArray::UInt8(a))
                .map(|x| x.shape().iter().product::<usize>() as u64)
                .map_err(|e| e.to_string())
        }
        other => Err(format!(
            "unknown mode {other:?} (typed, array, dyn, decode)"
        )),
    };
    match result {
        Ok(check) => {
            println!("done (checksum {check})");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
