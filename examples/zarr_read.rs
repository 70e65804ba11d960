//! Read a whole Zarr array (v3 or v2) with zarrs and zquant's codecs.
//!
//! ```text
//! cargo run --release --features zarrs --example zarr_read -- <array-dir> <out.bin>
//! ```
//!
//! Opens the array whose root is the filesystem directory `<array-dir>`, reads it whole,
//! writes the decoded elements in C order as little-endian bytes to `<out.bin>`, and prints
//! one line `shape=[37,53] data_type=float64` (the Zarr v3 data type name). On failure it
//! prints the error and exits with status 1.

use std::sync::Arc;

use zarrs::array::ArrayBytes;
use zarrs::filesystem::FilesystemStore;
use zarrs::plugin::{ExtensionName, ZarrVersion};

fn run(dir: &str, out: &str) -> Result<String, Box<dyn std::error::Error>> {
    let store = Arc::new(FilesystemStore::new(dir)?);
    let array = zquant::zarrs::open_array(store, "/")?;
    let bytes: ArrayBytes = array.retrieve_array_subset(&array.subset_all())?;
    // zquant::zarrs only builds on little-endian targets: native bytes are little-endian.
    std::fs::write(out, bytes.into_fixed()?)?;
    let shape: Vec<String> = array.shape().iter().map(u64::to_string).collect();
    let name = array
        .data_type()
        .name(ZarrVersion::V3)
        .ok_or("the array's data type has no Zarr v3 name")?;
    Ok(format!("shape=[{}] data_type={name}", shape.join(",")))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, out] = args.as_slice() else {
        eprintln!("usage: zarr_read <array-dir> <out.bin>");
        std::process::exit(2);
    };
    match run(dir, out) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("zarr_read: {dir}: {e}");
            std::process::exit(1);
        }
    }
}
