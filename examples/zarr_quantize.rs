//! Quantize a Zarr array into a new, smaller one within a stated bound, in one call
//! (`zquant::zarrs::quantize`).
//!
//! ```text
//! cargo run --release --features zarrs --example zarr_quantize -- \
//!     SRC DST (--max-abs-error E | --max-rel-error R | --inflevel L) [--headroom H]
//! ```
//!
//! - `SRC`: the directory of a float32 or float64 array, Zarr v3 (`zarr.json`) or v2
//!   (`.zarray`), any number of dimensions, as zarr-python or zarrs write it (NaN allowed).
//! - `DST`: the directory of the new Zarr v3 array; it must not hold an array yet.
//! - `--max-abs-error E`: every finite element within `E` of its value
//!   (`scale_offset` + `cast_value` to the narrowest of uint8/uint16/uint32 that meets it).
//! - `--max-rel-error R`: every finite element within `R·|x|` (`numcodecs.bitround`).
//! - `--inflevel L`: keep the fraction `L` (e.g. 0.99) of the data's real bit information
//!   along the last axis (`numcodecs.bitround`).
//! - `--headroom H`: with `--max-abs-error`, keep `H` times the data's span free below and
//!   above it, for later writes outside the data's range.
//!
//! DST has SRC's shape, chunk shape, data type, fill value, attributes and dimension
//! names, zstd-compressed chunks, and opens in plain zarr-python 3.4.2 (with cast-value for
//! `cast_value`). The statistics are gathered chunk by chunk (the array never has to fit in
//! memory); every chunk is read back and compared before DST's `zarr.json` is written, so
//! a failed run leaves no `zarr.json` at DST. Prints the chain, the guaranteed bound, the
//! measured errors and the sizes; exits 1 on failure, 2 on bad arguments.

use std::sync::Arc;

use zarrs::filesystem::FilesystemStore;
use zquant::zarrs::{QuantizeOptions, Target, open_array, quantize};

const USAGE: &str = "usage: zarr_quantize SRC DST (--max-abs-error E | --max-rel-error R | --inflevel L) [--headroom H]";

fn options(args: &[String]) -> Result<QuantizeOptions, String> {
    let mut target = None;
    let mut headroom = 0.0;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value: f64 = it
            .next()
            .ok_or(format!("{flag} needs a number"))?
            .parse()
            .map_err(|e| format!("{flag}: {e}"))?;
        let t = match flag.as_str() {
            "--max-abs-error" => Target::MaxAbsError(value),
            "--max-rel-error" => Target::MaxRelError(value),
            "--inflevel" => Target::Information(value),
            "--headroom" => {
                headroom = value;
                continue;
            }
            _ => return Err(format!("unknown argument {flag}")),
        };
        if target.replace(t).is_some() {
            return Err("give one of --max-abs-error, --max-rel-error, --inflevel".into());
        }
    }
    let mut o = QuantizeOptions::new(
        target.ok_or("give one of --max-abs-error, --max-rel-error, --inflevel")?,
    );
    o.plan.headroom = headroom;
    Ok(o)
}

fn run(src: &str, dst: &str, options: &QuantizeOptions) -> Result<(), Box<dyn std::error::Error>> {
    let source = open_array(Arc::new(FilesystemStore::new(src)?), "/")?;
    std::fs::create_dir_all(dst)?;
    let report = quantize(&source, Arc::new(FilesystemStore::new(dst)?), "/", options)?;
    println!("chain: {}", serde_json::Value::Array(report.chain.clone()));
    match report.bound {
        Some(b) => println!("guaranteed bound: {b}"),
        None => println!("guaranteed bound: none (information level)"),
    }
    println!(
        "measured: max abs error {}, max rel error {} over {} elements",
        report.max_abs_error, report.max_rel_error, report.elements
    );
    println!(
        "bytes: {} -> {} (ratio {:.2})",
        report.source_bytes, report.bytes, report.ratio
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(src), Some(dst)) = (args.first(), args.get(1)) else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let options = match options(&args[2..]) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("zarr_quantize: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(src, dst, &options) {
        eprintln!("zarr_quantize: {e}");
        std::process::exit(1);
    }
}
