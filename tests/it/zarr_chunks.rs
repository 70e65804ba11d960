//! Whole metadata and chunks as bytes (`zquant::zarr`), in the default build.
//!
//! `interop_stores` (ignored unless asked for) reads the zarr-python stores that
//! `tests/interop/run.sh` writes, chunk by chunk, and checks every chunk's bytes both ways.

use serde_json::{Value, json};
use zquant::Rule;
use zquant::zarr::{ArrayMetadata, ChunkCodec, CodecSplit, Endian, MemoryOrder, ZarrError};
use zquant::{DTypeId, DynArray, DynChain, MetadataError};

fn v3(codecs: Value, fill: Value, shape: [u64; 2], chunks: [u64; 2]) -> Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs,
    })
}

fn u8_codecs(endian: &str) -> Value {
    json!([
        {"name": "scale_offset", "configuration": {"offset": 0, "scale": 2}},
        {"name": "cast_value", "configuration": {"data_type": "uint16", "rounding": "nearest-even",
            "scalar_map": {"encode": [["NaN", 65535]], "decode": [[65535, "NaN"]]}}},
        {"name": "bytes", "configuration": {"endian": endian}},
    ])
}

fn f64_array(shape: &[usize], values: &[f64]) -> DynArray {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    DynArray::from_le_bytes(DTypeId::Float64, shape, &bytes).unwrap()
}

#[test]
fn split_keeps_array_to_bytes_and_bytes_to_bytes() {
    let codecs = [
        json!({"name": "numcodecs.bitround", "configuration": {"keepbits": 4}}),
        json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
            "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes"}]}}),
        json!({"name": "zstd", "configuration": {"level": 1}}),
        json!({"name": "crc32c"}),
    ];
    let split = CodecSplit::from_codecs(&codecs).unwrap();
    assert_eq!(split.array_to_array.len(), 1);
    assert_eq!(split.array_to_bytes["name"], "sharding_indexed");
    assert_eq!(split.bytes_to_bytes.len(), 2);
    assert_eq!(split.to_codecs(), codecs);
    let (chain, _) = DynChain::from_all_codecs(&json!("float32"), &json!(0), &codecs).unwrap();
    assert_eq!(chain.stages().len(), 1);
}

#[test]
fn split_errors_name_the_codec() {
    let err = |codecs: Value| {
        CodecSplit::from_codecs(codecs.as_array().unwrap())
            .unwrap_err()
            .to_string()
    };
    let e = err(json!([{"name": "transpose", "configuration": {"order": [0]}}, {"name": "bytes"}]));
    assert!(e.contains("\"transpose\"") && e.contains("codec 0"), "{e}");
    let e = err(json!([{"name": "bitround", "configuration": {"keepbits": 3}}]));
    assert!(e.contains("no array->bytes codec"), "{e}");
    let e = err(json!([{"name": "bytes"}, {"name": "bitround", "configuration": {"keepbits": 3}}]));
    assert!(e.contains("after the array->bytes codec"), "{e}");
    // A bytes->bytes codec is never an "unknown codec".
    assert!(
        CodecSplit::from_codecs(&[json!({"name": "bytes"}), json!({"name": "anything.else"})])
            .is_ok()
    );
}

#[test]
fn v3_metadata_fields() {
    let meta =
        ArrayMetadata::from_json(&v3(u8_codecs("big"), json!("NaN"), [5, 7], [2, 3])).unwrap();
    assert_eq!(meta.zarr_format, 3);
    assert_eq!(meta.shape, [5, 7]);
    assert_eq!(meta.chunk_shape, [2, 3]);
    assert_eq!(meta.chunk_grid_shape(), [3, 3]);
    assert_eq!(meta.data_type.id, DTypeId::Float64);
    assert_eq!(meta.codecs.array_to_array.len(), 2);
    assert_eq!(meta.order, MemoryOrder::C);
    let chain = meta.chain().unwrap();
    assert_eq!(chain.encoded_data_type().id, DTypeId::UInt16);
    assert_eq!(
        chain.encoded_fill_value().first_to_json(),
        Some(json!(65535))
    );
    // Back to zarr.json and again.
    assert_eq!(ArrayMetadata::from_json(&meta.to_v3_json()).unwrap(), meta);
    let bad = v3(u8_codecs("little"), json!("NaN"), [5, 7], [2, 0]);
    assert!(matches!(
        ArrayMetadata::from_json(&bad),
        Err(ZarrError::Field {
            field: "chunk_grid",
            ..
        })
    ));
    let bad_fill = v3(u8_codecs("little"), json!("nan"), [5, 7], [2, 3]);
    assert!(matches!(
        ArrayMetadata::from_json(&bad_fill),
        Err(ZarrError::Metadata(MetadataError::FillValue(_)))
    ));
}

#[test]
fn v2_metadata_to_v3() {
    // Parsed from text: the offset keeps all its digits (serde_json's arbitrary_precision).
    let zarray: Value = serde_json::from_str(
        r#"{
        "zarr_format": 2, "shape": [10, 3], "chunks": [4, 3], "dtype": ">f8",
        "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
        "fill_value": null, "order": "F", "dimension_separator": "/",
        "filters": [{"id": "fixedscaleoffset", "scale": 1000, "offset": 0.1000000000000000055511151231257827,
                     "dtype": ">f8", "astype": ">i2"},
                    {"id": "bitround", "keepbits": 3}]
    }"#,
    )
    .unwrap();
    let meta = ArrayMetadata::from_json(&zarray).unwrap();
    assert_eq!(meta.zarr_format, 2);
    assert_eq!(meta.order, MemoryOrder::F);
    assert_eq!(meta.fill_value, json!(0.0));
    assert_eq!(
        meta.codecs.array_to_bytes,
        json!({"name": "bytes", "configuration": {"endian": "big"}})
    );
    let fso = &meta.codecs.array_to_array[0];
    assert_eq!(fso["name"], "numcodecs.fixedscaleoffset");
    assert_eq!(fso["configuration"]["dtype"], "<f8");
    // The offset keeps its value: that text is exactly the double nearest 0.1.
    assert_eq!(fso["configuration"]["offset"].as_f64(), Some(0.1));
    assert_eq!(meta.codecs.array_to_array[1]["name"], "numcodecs.bitround");
    assert_eq!(
        meta.codecs.bytes_to_bytes[0]["configuration"]["shuffle"],
        "shuffle"
    );
    assert_eq!(
        meta.codecs.bytes_to_bytes[0]["configuration"]["typesize"],
        8
    );
    assert_eq!(meta.chunk_key_encoding["configuration"]["separator"], "/");
    let v3 = meta.to_v3_json();
    assert_eq!(
        v3["codecs"][0],
        json!({"name": "transpose", "configuration": {"order": [1, 0]}})
    );
    assert!(matches!(
        ArrayMetadata::from_json(
            &json!({"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": [["a", "<f8"]]})
        ),
        Err(ZarrError::Unsupported(_))
    ));
}

#[test]
fn chunk_round_trip_with_edges_both_endians_and_orders() {
    // 5x7 array in 2x3 chunks: edge chunks of 1 row and of 1 column.
    let values: Vec<f64> = (0..35)
        .map(|i| {
            if i == 17 {
                f64::NAN
            } else {
                i as f64 * 0.5 + 3.0
            }
        })
        .collect();
    for endian in ["little", "big"] {
        for order in [MemoryOrder::C, MemoryOrder::F] {
            let mut meta =
                ArrayMetadata::from_json(&v3(u8_codecs(endian), json!("NaN"), [5, 7], [2, 3]))
                    .unwrap();
            meta.order = order;
            let chunks = ChunkCodec::new(&meta).unwrap();
            assert_eq!(
                chunks.endian(),
                if endian == "big" {
                    Endian::Big
                } else {
                    Endian::Little
                }
            );
            for ci in 0..3u64 {
                for cj in 0..3u64 {
                    let (origin, shape) = chunks.region(&[ci, cj]).unwrap();
                    let region: Vec<f64> = (0..shape[0])
                        .flat_map(|i| (0..shape[1]).map(move |j| (i, j)))
                        .map(|(i, j)| values[(origin[0] as usize + i) * 7 + origin[1] as usize + j])
                        .collect();
                    let region = f64_array(&shape, &region);
                    let bytes = chunks.encode_chunk(&[ci, cj], &region).unwrap();
                    assert_eq!(bytes.len(), 2 * 3 * 2, "full chunk of uint16");
                    // Padding is the encoded fill value 65535 (either byte order).
                    if shape != [2, 3] {
                        assert_eq!(&bytes[bytes.len() - 2..], [0xff, 0xff]);
                    }
                    // The element at the origin, encoded, in the chunk's byte order.
                    let x = values[(origin[0] * 7 + origin[1]) as usize];
                    let first = if x.is_nan() { 65535 } else { (x * 2.0) as u16 };
                    let want = if endian == "big" {
                        first.to_be_bytes()
                    } else {
                        first.to_le_bytes()
                    };
                    assert_eq!(bytes[..2], want);
                    let back = chunks.decode_chunk(&[ci, cj], &bytes).unwrap();
                    assert!(back.same_as(&region), "chunk {ci},{cj} {endian} {order:?}");
                }
            }
        }
    }
}

#[test]
fn chunk_errors_are_array_coordinates() {
    let codecs = json!([
        {"name": "cast_value", "configuration": {"data_type": "uint8"}},
        {"name": "bytes"},
    ]);
    let meta = ArrayMetadata::from_json(&v3(codecs, json!(0), [20, 30], [8, 16])).unwrap();
    let chunks = ChunkCodec::new(&meta).unwrap();
    // Chunk (1, 1) covers rows 8..16 and columns 16..30 (an edge chunk of 14 columns).
    let (origin, shape) = chunks.region(&[1, 1]).unwrap();
    assert_eq!(
        (origin.as_slice(), shape.as_slice()),
        ([8u64, 16].as_slice(), [8usize, 14].as_slice())
    );
    let mut region = vec![1.0; 8 * 14];
    region[14 + 1] = 300.0; // array coordinates [9, 17]
    let e = chunks
        .encode_chunk(&[1, 1], &f64_array(&shape, &region))
        .unwrap_err();
    let ZarrError::Element { coords, error } = &e else {
        panic!("{e}")
    };
    assert_eq!(coords, &[9, 17]);
    assert_eq!(error.rule, Rule::OutOfRange);
    assert!(e.to_string().contains("[9, 17]"), "{e}");
    // Decoding: a uint8 chunk never fails, but wrong sizes and coordinates do.
    assert!(matches!(
        chunks.decode_chunk(&[1, 1], &[0u8; 5]),
        Err(ZarrError::Chunk { .. })
    ));
    assert!(matches!(
        chunks.region(&[3, 0]),
        Err(ZarrError::Chunk { .. })
    ));
    assert!(matches!(
        chunks.encode_chunk(&[0, 0], &f64_array(&[1, 1], &[0.0])),
        Err(ZarrError::Chunk { .. })
    ));
}

#[test]
fn chunk_codec_leaves_compressors_and_sharding_to_zarrs() {
    let with = |extra: Value| {
        let mut codecs = u8_codecs("little");
        if extra["name"] == "sharding_indexed" {
            codecs.as_array_mut().unwrap()[2] = extra;
        } else {
            codecs.as_array_mut().unwrap().push(extra);
        }
        ArrayMetadata::from_json(&v3(codecs, json!(0), [4, 4], [2, 2])).unwrap()
    };
    let e = ChunkCodec::new(&with(
        json!({"name": "zstd", "configuration": {"level": 1}}),
    ))
    .unwrap_err();
    assert!(
        matches!(e, ZarrError::Unsupported(_)) && e.to_string().contains("zstd"),
        "{e}"
    );
    let sharding = json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [1, 1],
        "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes"}]}});
    let e = ChunkCodec::new(&with(sharding)).unwrap_err();
    assert!(e.to_string().contains("sharding_indexed"), "{e}");
}

// --- zarr-python stores (tests/interop/run.sh) ---------------------------------------

fn read_json(p: &std::path::Path) -> Option<Value> {
    std::fs::read(p)
        .ok()
        .map(|b| serde_json::from_slice(&b).unwrap())
}

/// NaN-aware equality of little-endian element bytes of one type.
fn same_elements(a: &[u8], b: &[u8], id: DTypeId) -> Option<usize> {
    let size = id.size();
    if a.len() != b.len() {
        return Some(usize::MAX);
    }
    let nan = |x: &[u8]| match size {
        8 => f64::from_le_bytes(x.try_into().unwrap()).is_nan(),
        4 if id == DTypeId::Float32 => f32::from_le_bytes(x.try_into().unwrap()).is_nan(),
        2 if id == DTypeId::Float16 => half::f16::from_le_bytes(x.try_into().unwrap()).is_nan(),
        _ => false,
    };
    a.chunks_exact(size)
        .zip(b.chunks_exact(size))
        .position(|(x, y)| {
            x != y && !(matches!(id.kind(), zquant::Kind::Float(_)) && nan(x) && nan(y))
        })
}

/// The store key of chunk `[ci, cj]` under a v3 `chunk_key_encoding` (`default`: `c/` and
/// `/` unless configured; `v2`: `.` unless configured, no prefix).
fn chunk_key(encoding: &Value, ci: u64, cj: u64) -> String {
    let name = encoding
        .as_str()
        .or_else(|| encoding["name"].as_str())
        .unwrap_or("default");
    let configured = encoding["configuration"]["separator"].as_str();
    match name {
        "v2" => format!("{ci}{0}{cj}", configured.unwrap_or(".")),
        _ => {
            let sep = configured.unwrap_or("/");
            format!("c{sep}{ci}{sep}{cj}")
        }
    }
}

/// Every chunk of every zarr-python store without compressor or sharding: zquant's decoded
/// chunks assemble zarr-python's read, and zquant's encoded regions are zarr-python's chunk
/// bytes. Run by tests/interop/run.sh (`ZQUANT_INTEROP_DIR` names the stores).
#[test]
#[ignore = "needs the zarr-python stores: tests/interop/run.sh"]
fn interop_stores() {
    let dir = std::env::var("ZQUANT_INTEROP_DIR").expect("ZQUANT_INTEROP_DIR");
    let mut checked = 0;
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    for case in cases {
        let store = case.join("store");
        let Some(meta_json) =
            read_json(&store.join("zarr.json")).or_else(|| read_json(&store.join(".zarray")))
        else {
            continue;
        };
        let meta = ArrayMetadata::from_json(&meta_json).unwrap();
        let Ok(chunks) = ChunkCodec::new(&meta) else {
            continue; // compressed or sharded: zarrs' business (check.py)
        };
        let id = meta.data_type.id;
        let size = id.size();
        let shape: Vec<usize> = meta.shape.iter().map(|&n| n as usize).collect();
        let source = std::fs::read(case.join("source.bin")).unwrap();
        let expected = std::fs::read(case.join("expected.bin")).unwrap();
        let mut got = vec![0u8; expected.len()];
        let grid = meta.chunk_grid_shape();
        for ci in 0..grid[0] {
            for cj in 0..grid[1] {
                let key = chunk_key(&meta.chunk_key_encoding, ci, cj);
                let (origin, rshape) = chunks.region(&[ci, cj]).unwrap();
                let rows = |buf: &[u8]| -> Vec<u8> {
                    (0..rshape[0])
                        .flat_map(|i| {
                            let start =
                                ((origin[0] as usize + i) * shape[1] + origin[1] as usize) * size;
                            buf[start..start + rshape[1] * size].to_vec()
                        })
                        .collect()
                };
                let region_source = DynArray::from_le_bytes(id, &rshape, &rows(&source)).unwrap();
                let decoded = match std::fs::read(store.join(&key)) {
                    Ok(stored) => {
                        let encoded = chunks.encode_chunk(&[ci, cj], &region_source).unwrap();
                        assert!(
                            encoded == stored,
                            "{}: chunk {key}: zquant's bytes differ from zarr-python's",
                            case.display()
                        );
                        chunks.decode_chunk(&[ci, cj], &stored).unwrap()
                    }
                    // Not written: every element is the fill value.
                    Err(_) => DynArray::fill_value(id, &meta.fill_value).unwrap(),
                };
                let bytes = decoded.to_le_bytes();
                for i in 0..rshape[0] {
                    let start = ((origin[0] as usize + i) * shape[1] + origin[1] as usize) * size;
                    let row = if decoded.shape().is_empty() {
                        bytes.repeat(rshape[1])
                    } else {
                        bytes[i * rshape[1] * size..(i + 1) * rshape[1] * size].to_vec()
                    };
                    got[start..start + row.len()].copy_from_slice(&row);
                }
            }
        }
        if let Some(i) = same_elements(&got, &expected, id) {
            panic!(
                "{}: element {i} differs from zarr-python's read",
                case.display()
            );
        }
        checked += 1;
    }
    println!("interop_stores: {checked} uncompressed stores checked chunk by chunk");
    assert!(checked >= 5, "only {checked} stores checked in {dir}");
}
