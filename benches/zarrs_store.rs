//! zquant's codecs inside zarrs against zarrs' own, on the same chunks in the same run
//! (issue 22): a 4096 x 4096 `float64` array in 256 x 256 chunks, written and read whole
//! through zarrs on a filesystem store, uncompressed and with zstd:
//! - `numcodecs.fixedscaleoffset` (f8 -> i2): zquant's and zarrs' built-in one;
//! - `numcodecs.bitround` (keepbits 10): zquant's and zarrs' built-in one (its `bitround`
//!   feature, which `zarrs-bitround` turns on);
//! - `scale_offset` + `cast_value` f8 -> u16 with NaN -> 0: zquant's (zarrs has neither).
//!
//! ```sh
//! cargo bench --features zarrs-bitround --bench zarrs_store            # 7 rounds
//! cargo bench --features zarrs-bitround --bench zarrs_store -- 3       # rounds
//! ```
//!
//! Each round runs every (case, compression, implementation) once, in turn, so that the
//! two implementations of a case alternate. Prints the minimum and median over the rounds
//! of write and read speed, in GB/s of decoded elements (128 MiB), and checks that both
//! implementations read the same values. The store is under `target/bench-zarrs`, which
//! also receives `source.bin` (the elements, little-endian, C order) for
//! `benches/zarrs_store.py`, zarr-python 3.4.2 on the same data and chunks.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use zarrs::array::{Array, ArrayBytes, ArrayMetadata, ArrayMetadataV3};
use zarrs::filesystem::FilesystemStore;

const SIDE: u64 = 4096;
const CHUNK: u64 = 256;

/// A smooth field (two waves) with a little noise, in [-160, 160]; no NaN, so that
/// `numcodecs.fixedscaleoffset` (which has no NaN rule) takes every element.
fn field() -> Vec<f64> {
    let mut state = 0x5eed_u64;
    let n = (SIDE * SIDE) as usize;
    (0..n)
        .map(|k| {
            let (i, j) = ((k as u64 / SIDE) as f64, (k as u64 % SIDE) as f64);
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let noise = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            150.0 * (i * 0.0123).sin() * (j * 0.0071).cos() + noise
        })
        .collect()
}

fn metadata(a2a: &[Value], zstd: bool) -> ArrayMetadataV3 {
    let mut codecs = a2a.to_vec();
    codecs.push(json!({"name": "bytes", "configuration": {"endian": "little"}}));
    if zstd {
        codecs.push(json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}}));
    }
    serde_json::from_value(json!({
        "zarr_format": 3, "node_type": "array", "shape": [SIDE, SIDE], "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [CHUNK, CHUNK]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0.0, "codecs": codecs,
    }))
    .expect("valid metadata")
}

struct Case {
    name: String,
    array: Array<FilesystemStore>,
    write: Vec<f64>,
    read: Vec<f64>,
}

fn gbps(seconds: f64) -> f64 {
    (SIDE * SIDE * 8) as f64 / seconds / 1e9
}

fn min_median(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

/// The codec step alone, without store or compressor: each array's array->array codecs on
/// one chunk's elements (the first 256 x 256 block), encode then decode, through zarrs'
/// codec chain (`CodecChain::encode`/`decode` with the `bytes` codec), implementations
/// alternating, 41 times each; GB/s of decoded elements, best and median.
fn codec_step(runs: &[Case], bytes: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
    use zarrs::array::{ArrayBytesRaw, ArrayToBytesCodecTraits, CodecOptions};
    let side = CHUNK as usize;
    let chunk: Vec<u8> = (0..side)
        .flat_map(|i| {
            let start = i * SIDE as usize * 8;
            bytes[start..start + side * 8].to_vec()
        })
        .collect();
    let shape = [std::num::NonZeroU64::new(CHUNK).ok_or("zero chunk")?; 2];
    let options = CodecOptions::default();
    let mut times = vec![(Vec::new(), Vec::new()); runs.len()];
    for round in 0..41 {
        // Every other round in reverse, so that neither implementation always runs just
        // after the other (the allocator's state, the caches).
        let mut order: Vec<_> = runs.iter().zip(times.iter_mut()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for (c, (enc, dec)) in order {
            if c.name.contains(" zstd ") {
                continue;
            }
            let codecs = c.array.codecs();
            let (dt, fill) = (c.array.data_type(), c.array.fill_value());
            let t = Instant::now();
            let raw: ArrayBytesRaw = codecs.encode(
                ArrayBytes::new_flen(chunk.as_slice()),
                &shape,
                dt,
                fill,
                &options,
            )?;
            enc.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let back = codecs.decode(raw, &shape, dt, fill, &options)?;
            dec.push(t.elapsed().as_secs_f64());
            std::hint::black_box(back);
        }
    }
    let size = (side * side * 8) as f64;
    println!("\ncodec step: one {CHUNK} x {CHUNK} chunk, no store, no compressor, 41 runs");
    println!(
        "| case | codecs | encode (best) | encode (median) | decode (best) | decode (median) |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (c, (enc, dec)) in runs.iter().zip(&times) {
        if enc.is_empty() {
            continue;
        }
        let ((emin, emed), (dmin, dmed)) = (min_median(enc), min_median(dec));
        let mut parts = c.name.split(' ');
        let case = parts.next().unwrap_or_default();
        let who = parts.nth(1).unwrap_or_default();
        println!(
            "| {case} | {who} | {:.2} | {:.2} | {:.2} | {:.2} |",
            size / emin / 1e9,
            size / emed / 1e9,
            size / dmin / 1e9,
            size / dmed / 1e9
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(7);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-zarrs");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root)?;
    let data = field();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(root.join("source.bin"), &bytes)?;

    let fso = json!({"name": "numcodecs.fixedscaleoffset", "configuration": {
        "offset": 0.5, "scale": 100, "dtype": "<f8", "astype": "<i2"}});
    let bitround = json!({"name": "numcodecs.bitround", "configuration": {"keepbits": 10}});
    let so_cast = [
        json!({"name": "scale_offset", "configuration": {"offset": -200, "scale": 100}}),
        json!({"name": "cast_value", "configuration": {"data_type": "uint16",
            "rounding": "nearest-even", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}),
    ];
    let cases: [(&str, Vec<Value>, bool); 3] = [
        ("fixedscaleoffset", vec![fso], true),
        ("bitround", vec![bitround], true),
        ("scale_offset+cast_value", so_cast.to_vec(), false),
    ];
    // Arrays keep the codec objects they were created with: zquant's while registered, then
    // zarrs' own once zquant's plugin is unregistered.
    let mut runs = Vec::new();
    let reg = zquant::zarrs::register();
    for implementation in ["zquant", "zarrs"] {
        if implementation == "zarrs" {
            zarrs::array::codec::api::unregister_codec_v3(&reg.v3);
        }
        for (name, a2a, zarrs_has_it) in &cases {
            if implementation == "zarrs" && !zarrs_has_it {
                continue;
            }
            for zstd in [false, true] {
                let label = format!(
                    "{name} {} {implementation}",
                    if zstd { "zstd" } else { "none" }
                );
                let dir = root.join(label.replace([' ', '+'], "_"));
                let store = Arc::new(FilesystemStore::new(&dir)?);
                let meta = ArrayMetadata::V3(metadata(a2a, zstd));
                let array = Array::new_with_metadata(store, "/", meta)?;
                runs.push(Case {
                    name: label,
                    array,
                    write: vec![],
                    read: vec![],
                });
            }
        }
    }
    // Alternate: per round, per case, zquant then zarrs.
    runs.sort_by_key(|c| {
        let mut parts = c.name.rsplitn(2, ' ');
        let who = parts.next().unwrap_or_default().to_string();
        (
            parts.next().unwrap_or_default().to_string(),
            who != "zquant",
        )
    });
    let subset = runs[0].array.subset_all();
    let mut reads: Vec<Vec<u8>> = vec![Vec::new(); runs.len()];
    for _ in 0..rounds {
        for (c, last) in runs.iter_mut().zip(reads.iter_mut()) {
            let t = Instant::now();
            c.array
                .store_array_subset(&subset, ArrayBytes::new_flen(bytes.as_slice()))?;
            c.write.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let back: ArrayBytes = c.array.retrieve_array_subset(&subset)?;
            c.read.push(t.elapsed().as_secs_f64());
            *last = back.into_fixed()?.into_owned();
        }
    }
    println!(
        "{SIDE} x {SIDE} float64, {CHUNK} x {CHUNK} chunks, filesystem store, {rounds} rounds \
         (GB/s of decoded elements, min time and median time)"
    );
    println!(
        "| case | compressor | codecs | write (best) | write (median) | read (best) | read (median) |"
    );
    println!("|---|---|---|---:|---:|---:|---:|");
    for c in &runs {
        let (wmin, wmed) = min_median(&c.write);
        let (rmin, rmed) = min_median(&c.read);
        let mut parts = c.name.split(' ');
        let (case, comp, who) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        println!(
            "| {case} | {comp} | {who} | {:.2} | {:.2} | {:.2} | {:.2} |",
            gbps(wmin),
            gbps(wmed),
            gbps(rmin),
            gbps(rmed)
        );
    }
    codec_step(&runs, &bytes)?;
    // zquant's and zarrs' reads of the same case and compression.
    for (i, c) in runs.iter().enumerate() {
        if let Some(stem) = c.name.strip_suffix(" zarrs") {
            let z = runs
                .iter()
                .position(|o| o.name == format!("{stem} zquant"))
                .ok_or("no zquant run")?;
            let same = reads[z] == reads[i];
            let differ = reads[z]
                .chunks_exact(8)
                .zip(reads[i].chunks_exact(8))
                .filter(|(a, b)| a != b)
                .count();
            println!("{stem}: zquant and zarrs read the same values: {same} ({differ} differ)");
        }
    }
    Ok(())
}
