//! The worked example of docs/zarr.md: open a store, read it, quantize it into a new store
//! (scale_offset + cast_value to uint16, zstd, sharding), read that back.
//!
//! ```text
//! cargo run --release --features zarrs --example zarr_quantize -- <array-dir> <out-dir>
//! ```
//!
//! `<array-dir>` is a float64 array (v3 or v2). Without arguments the example writes a
//! small float64 array to a temporary directory first and quantizes that.

use std::sync::Arc;

use serde_json::json;
use zarrs::array::{Array, ArrayBytes, ArrayMetadata, ArrayMetadataV3};
use zarrs::filesystem::FilesystemStore;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A 100 x 120 float64 array of temperatures, with a NaN hole, in `dir`.
fn make_input(dir: &std::path::Path) -> Result<()> {
    zquant::zarrs::register();
    let meta: ArrayMetadataV3 = serde_json::from_value(json!({
        "zarr_format": 3, "node_type": "array", "shape": [100, 120], "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [32, 32]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }))?;
    let array = Array::new_with_metadata(
        Arc::new(FilesystemStore::new(dir)?),
        "/",
        ArrayMetadata::V3(meta),
    )?;
    array.store_metadata()?;
    let values: Vec<f64> = (0..100 * 120)
        .map(|i| {
            if i % 997 == 0 {
                f64::NAN
            } else {
                15.0 + 10.0 * ((i as f64) * 0.001).sin()
            }
        })
        .collect();
    array.store_array_subset(&array.subset_all(), values)?;
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tmp = std::env::temp_dir().join(format!("zquant-quantize-{}", std::process::id()));
    let (input, output) = match args.as_slice() {
        [i, o] => (i.into(), o.into()),
        _ => {
            make_input(&tmp.join("in.zarr"))?;
            (tmp.join("in.zarr"), tmp.join("out.zarr"))
        }
    };

    // 1. Open the store (zquant's codecs registered) and read the whole array.
    let source = zquant::zarrs::open_array(Arc::new(FilesystemStore::new(&input)?), "/")?;
    let data: ArrayBytes = source.retrieve_array_subset(&source.subset_all())?;

    // 2. Quantize: the same shape, stored as uint16 hundredths of a degree above -50,
    //    NaN as 65535, zstd-compressed, 64 x 64 shards of 32 x 32 chunks.
    let meta: ArrayMetadataV3 = serde_json::from_value(json!({
        "zarr_format": 3, "node_type": "array", "shape": source.shape(), "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [64, 64]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
        "codecs": [
            {"name": "scale_offset", "configuration": {"offset": -50, "scale": 100}},
            {"name": "cast_value", "configuration": {
                "data_type": "uint16", "rounding": "nearest-even", "out_of_range": "clamp",
                "scalar_map": {"encode": [["NaN", 65535]], "decode": [[65535, "NaN"]]}}},
            {"name": "sharding_indexed", "configuration": {
                "chunk_shape": [32, 32],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 5, "checksum": false}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}]}},
        ],
    }))?;
    std::fs::create_dir_all(&output)?;
    let target = Array::new_with_metadata(
        Arc::new(FilesystemStore::new(&output)?),
        "/",
        ArrayMetadata::V3(meta),
    )?;
    target.store_metadata()?;
    target.store_array_subset(&target.subset_all(), data.clone())?;

    // 3. Read the quantized array back: within half a hundredth of a degree, NaN kept.
    let back: Vec<f64> = target.retrieve_array_subset(&target.subset_all())?;
    let orig: Vec<f64> = source.retrieve_array_subset(&source.subset_all())?;
    let worst = orig
        .iter()
        .zip(&back)
        .map(|(a, b)| {
            if a.is_nan() && b.is_nan() {
                0.0
            } else {
                (a - b).abs()
            }
        })
        .fold(0.0, f64::max);
    println!(
        "{} elements, largest error {worst:.4} (<= 0.005)",
        back.len()
    );
    if worst > 0.005 {
        return Err(format!("error {worst} above half a step").into());
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}
