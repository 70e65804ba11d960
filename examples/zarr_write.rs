//! Create a Zarr v3 array with zarrs and zquant's codecs, and write it whole.
//!
//! ```text
//! cargo run --release --features zarrs --example zarr_write -- <zarr.json> <in.bin> <array-dir>
//! ```
//!
//! (`<zarr.json>` may also be a v2 `.zarray`, written as a v2 array.)
//!
//! Creates the array at the filesystem directory `<array-dir>` from the given `zarr.json`
//! (shape, data_type, chunk_grid, chunk_key_encoding, fill_value, codecs: zquant's
//! array->array codecs, `bytes` with its endian, compressors such as zstd/gzip/blosc,
//! `sharding_indexed`), then writes the elements of `<in.bin>` (C order, little-endian, the
//! array's data type) to it. On failure it prints the error and exits with status 1.
//!
//! A `zarr.json` is created with `zquant::zarrs::create_array`: checked (the fill value
//! through the whole chain) before anything is written, and written with every extension
//! point in object form (`"chunk_key_encoding": {"name": "default", "configuration":
//! {"separator": "/"}}`, `{"name": "crc32c"}`), which zarr-python 3.4 reads whatever short
//! forms the given file uses. A `.zarray` is stored as given (v2 metadata has no short
//! forms), once zarrs and zquant have accepted it.

use std::sync::Arc;

use zarrs::array::ArrayBytes;
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::{StoreKey, WritableStorageTraits};

fn run(json: &str, input: &str, dir: &str) -> Result<(), Box<dyn std::error::Error>> {
    let text = std::fs::read(json)?;
    let value: serde_json::Value = serde_json::from_slice(&text)?;
    // A v2 `.zarray` is written through its v3 reading (zquant::zarr's conversion: exact
    // filters, `order` as `transpose`, the `v2` chunk key encoding), whose chunks are the
    // bytes v2 readers expect; the `.zarray` itself is stored as given.
    let v2 = value["zarr_format"] == 2;
    let v3 = if v2 {
        zquant::zarr::ArrayMetadata::from_v2_json(&value)?.to_v3_json()
    } else {
        value
    };
    std::fs::create_dir_all(dir)?;
    let store = Arc::new(FilesystemStore::new(dir)?);
    // Checked, not yet written: the sizes are compared first.
    let array = zquant::zarrs::prepare_array(store.clone(), "/", v3)?;
    let data = std::fs::read(input)?;
    let size = array
        .data_type()
        .fixed_size()
        .ok_or("variable-size data types are not written")?;
    let n: u64 = array.shape().iter().product();
    if data.len() as u64 != n * size as u64 {
        return Err(format!(
            "{input} has {} bytes; shape {:?} of {} takes {}",
            data.len(),
            array.shape(),
            array.data_type(),
            n * size as u64
        )
        .into());
    }
    if v2 {
        store.set(&StoreKey::new(".zarray")?, text.into())?;
    } else {
        zquant::zarrs::store_metadata(&array)?;
    }
    // zquant::zarrs only builds on little-endian targets: little-endian bytes are native.
    array.store_array_subset(&array.subset_all(), ArrayBytes::new_flen(data))?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [json, input, dir] = args.as_slice() else {
        eprintln!("usage: zarr_write <zarr.json> <in.bin> <array-dir>");
        std::process::exit(2);
    };
    if let Err(e) = run(json, input, dir) {
        eprintln!("zarr_write: {dir}: {e}");
        std::process::exit(1);
    }
}
