//! (feature `zarrs`) zquant's codecs registered with zarrs: they are the ones zarrs uses,
//! they give what zquant's own chains give, and zarrs' chunks match `zquant::zarr`'s.

use std::sync::Arc;

use serde_json::{Value, json};
use zarrs::array::{Array, ArrayBytes, ArrayMetadata as ZarrsMetadata, ArrayMetadataV3, Codec};
use zarrs::metadata::v2::MetadataV2;
use zarrs::metadata::v3::MetadataV3;
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{ReadableStorageTraits, StoreKey, WritableStorageTraits};
use zquant::CODEC_NAMES;
use zquant::zarr::{ArrayMetadata, ChunkCodec};
use zquant::zarrs::{V2_IDS, ZquantCodec, open_array, register};
use zquant::{DTypeId, DynArray, DynChain};

fn codec_json(name: &str) -> Value {
    match name {
        "scale_offset" => json!({"name": name, "configuration": {"offset": 1, "scale": 10}}),
        "cast_value" => {
            json!({"name": name, "configuration": {"data_type": "uint8", "out_of_range": "clamp"}})
        }
        "bitround" | "numcodecs.bitround" => {
            json!({"name": name, "configuration": {"keepbits": 3}})
        }
        "numcodecs.quantize" => {
            json!({"name": name, "configuration": {"digits": 2, "dtype": "<f8"}})
        }
        "numcodecs.astype" => {
            json!({"name": name, "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}})
        }
        _ => {
            json!({"name": name, "configuration": {"offset": 0.1, "scale": 10, "dtype": "<f8", "astype": "<i2"}})
        }
    }
}

#[test]
fn zquant_codecs_shadow_zarrs_own() {
    register();
    for name in CODEC_NAMES {
        let meta: MetadataV3 = serde_json::from_value(codec_json(name)).unwrap();
        let Codec::ArrayToArray(codec) = Codec::from_metadata(&meta).unwrap() else {
            panic!("{name}: not an array->array codec");
        };
        assert!(
            codec.as_any().is::<ZquantCodec>(),
            "{name}: zarrs' own codec"
        );
    }
    for (id, _) in V2_IDS {
        let meta: MetadataV2 = serde_json::from_value(match id {
            "bitround" => json!({"id": id, "keepbits": 3}),
            "quantize" => json!({"id": id, "digits": 2, "dtype": ">f8", "astype": ">f4"}),
            "astype" => json!({"id": id, "encode_dtype": ">i2", "decode_dtype": ">f8"}),
            _ => json!({"id": id, "offset": 0.1, "scale": 10, "dtype": ">f8", "astype": "<i2"}),
        })
        .unwrap();
        let Codec::ArrayToArray(codec) = Codec::from_metadata(&meta).unwrap() else {
            panic!("{id}: not an array->array codec");
        };
        assert!(codec.as_any().is::<ZquantCodec>(), "{id}: zarrs' own codec");
    }
    // Configuration errors surface when zarrs builds the codec.
    let bad: MetadataV3 =
        serde_json::from_value(json!({"name": "bitround", "configuration": {"keepbits": 0}}))
            .unwrap();
    assert!(Codec::from_metadata(&bad).is_err());
    // keepbits 0 is numcodecs' rule under numcodecs' names (`keepbits-zero`): the v3 alias
    // and the v2 filter build, and round floats to powers of two.
    let alias: MetadataV3 = serde_json::from_value(
        json!({"name": "numcodecs.bitround", "configuration": {"keepbits": 0}}),
    )
    .unwrap();
    assert!(Codec::from_metadata(&alias).is_ok());
    let v2: MetadataV2 = serde_json::from_value(json!({"id": "bitround", "keepbits": 0})).unwrap();
    assert!(Codec::from_metadata(&v2).is_ok());
    let meta = zarr_json(
        json!([{"name": "numcodecs.bitround", "configuration": {"keepbits": 0}}, bytes_le()]),
        json!(0.0),
        [1, 4],
        [1, 4],
    );
    let (_, bytes) = write_read(&meta, &[1.4, 1.6, -3.0, 0.3]);
    assert_eq!(bytes, le(&[1.0, 2.0, -2.0, 0.25]));
}

fn zarr_json(codecs: Value, fill: Value, shape: [u64; 2], chunks: [u64; 2]) -> Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs,
        "attributes": {},
    })
}

fn values(n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n)
        .map(|i| ((i * 37) % 101) as f64 * 0.37 - 15.0)
        .collect();
    v[3] = f64::NAN;
    v[5] = -0.0;
    v[7] = 5e-324;
    v[n - 1] = f64::NAN;
    v
}

fn le(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn chain_codecs() -> Value {
    json!([
        {"name": "scale_offset", "configuration": {"offset": -20, "scale": 100}},
        {"name": "cast_value", "configuration": {"data_type": "uint16", "rounding": "nearest-even",
            "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 65535]], "decode": [[65535, "NaN"]]}}},
    ])
}

fn with_tail(a2a: &Value, tail: &[Value]) -> Value {
    let mut v = a2a.as_array().unwrap().clone();
    v.extend(tail.iter().cloned());
    Value::Array(v)
}

fn write_read(meta: &Value, data: &[f64]) -> (Arc<MemoryStore>, Vec<u8>) {
    register();
    let store = Arc::new(MemoryStore::new());
    let m: ArrayMetadataV3 = serde_json::from_value(meta.clone()).unwrap();
    let array = Array::new_with_metadata(store.clone(), "/", ZarrsMetadata::V3(m)).unwrap();
    array.store_metadata().unwrap();
    array
        .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(le(data)))
        .unwrap();
    let back: ArrayBytes = array.retrieve_array_subset(&array.subset_all()).unwrap();
    (store, back.into_fixed().unwrap().into_owned())
}

/// What zquant's own chain gives for the whole array (elementwise, so chunking is moot).
fn zquant_round_trip(codecs: &Value, fill: &Value, shape: &[usize], data: &[f64]) -> Vec<u8> {
    let (chain, _) =
        DynChain::from_all_codecs(&json!("float64"), fill, codecs.as_array().unwrap()).unwrap();
    let input = DynArray::from_le_bytes(DTypeId::Float64, shape, &le(data)).unwrap();
    chain
        .decode(&chain.encode(&input).unwrap())
        .unwrap()
        .to_le_bytes()
}

#[test]
fn zarrs_with_compressors_and_sharding_equals_zquant() {
    let data = values(37 * 53);
    let sharding = json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 16],
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                   {"name": "zstd", "configuration": {"level": 3, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}});
    let tails = [
        vec![json!({"name": "bytes", "configuration": {"endian": "little"}})],
        vec![
            json!({"name": "bytes", "configuration": {"endian": "big"}}),
            json!({"name": "gzip", "configuration": {"level": 5}}),
        ],
        vec![
            json!({"name": "bytes", "configuration": {"endian": "little"}}),
            json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                 "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}),
        ],
        vec![sharding],
    ];
    let chunks = [[8, 16], [8, 16], [8, 16], [16, 32]];
    for (tail, chunk) in tails.iter().zip(chunks) {
        let codecs = with_tail(&chain_codecs(), tail);
        let meta = zarr_json(codecs.clone(), json!("NaN"), [37, 53], chunk);
        let (_, back) = write_read(&meta, &data);
        let want = zquant_round_trip(&codecs, &json!("NaN"), &[37, 53], &data);
        assert_eq!(back, want, "{tail:?}");
    }
}

#[test]
fn zarrs_chunks_equal_zquant_chunk_bytes() {
    let data = values(37 * 53);
    for endian in ["little", "big"] {
        let codecs = with_tail(
            &chain_codecs(),
            &[json!({"name": "bytes", "configuration": {"endian": endian}})],
        );
        let meta = zarr_json(codecs, json!(1.5), [37, 53], [8, 16]);
        let (store, _) = write_read(&meta, &data);
        let chunks = ChunkCodec::new(&ArrayMetadata::from_json(&meta).unwrap()).unwrap();
        let mut compared = 0;
        for ci in 0..5u64 {
            for cj in 0..4u64 {
                let (origin, shape) = chunks.region(&[ci, cj]).unwrap();
                let region: Vec<f64> = (0..shape[0])
                    .flat_map(|i| (0..shape[1]).map(move |j| (i, j)))
                    .map(|(i, j)| data[(origin[0] as usize + i) * 53 + origin[1] as usize + j])
                    .collect();
                let region =
                    DynArray::from_le_bytes(DTypeId::Float64, &shape, &le(&region)).unwrap();
                let key = StoreKey::new(format!("c/{ci}/{cj}")).unwrap();
                let stored = store.get(&key).unwrap().expect("chunk written");
                assert_eq!(
                    chunks.encode_chunk(&[ci, cj], &region).unwrap(),
                    stored.to_vec(),
                    "{endian} {ci},{cj}"
                );
                // Lossy: the decoded chunk is the chain's round trip of the region.
                let chain = chunks.chain();
                let want = chain.decode(&chain.encode(&region).unwrap()).unwrap();
                assert!(
                    chunks
                        .decode_chunk(&[ci, cj], &stored)
                        .unwrap()
                        .same_as(&want)
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 20);
    }
}

#[test]
fn metadata_written_by_zarrs_keeps_the_configuration() {
    let codecs = with_tail(
        &chain_codecs(),
        &[json!({"name": "bytes", "configuration": {"endian": "little"}})],
    );
    let meta = zarr_json(codecs.clone(), json!("NaN"), [4, 4], [2, 2]);
    let (store, _) = write_read(&meta, &values(16));
    let written: Value = serde_json::from_slice(
        &store
            .get(&StoreKey::new("zarr.json").unwrap())
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(written["codecs"][0], codecs[0]);
    assert_eq!(written["codecs"][1], codecs[1]);
}

#[test]
fn v2_arrays_open_with_exact_filters() {
    register();
    let store = Arc::new(MemoryStore::new());
    // A v2 array with a bitround filter (zarrs alone has none without its `bitround`
    // feature) and a fixedscaleoffset whose offset is not an f32.
    let zarray = json!({
        "zarr_format": 2, "shape": [3, 4], "chunks": [2, 4], "dtype": "<f8", "order": "F",
        "compressor": null, "fill_value": null, "dimension_separator": ".",
        "filters": [{"id": "fixedscaleoffset", "offset": 0.123456789012, "scale": 1000,
                     "dtype": "<f8", "astype": "<i4"},
                    {"id": "bitround", "keepbits": 20}],
    });
    store
        .set(
            &StoreKey::new(".zarray").unwrap(),
            serde_json::to_vec(&zarray).unwrap().into(),
        )
        .unwrap();
    let data: Vec<f64> = (0..12).map(|i| i as f64 * 1.25 + 0.123456789012).collect();
    // Chunks written by zquant::zarr (F order, as numcodecs would).
    let meta = ArrayMetadata::from_json(&zarray).unwrap();
    let chunks = ChunkCodec::new(&meta).unwrap();
    for ci in 0..2u64 {
        let (origin, shape) = chunks.region(&[ci, 0]).unwrap();
        let start = origin[0] as usize * 4;
        let region = DynArray::from_le_bytes(
            DTypeId::Float64,
            &shape,
            &le(&data[start..start + shape[0] * 4]),
        )
        .unwrap();
        let bytes = chunks.encode_chunk(&[ci, 0], &region).unwrap();
        store
            .set(&StoreKey::new(format!("{ci}.0")).unwrap(), bytes.into())
            .unwrap();
    }
    let array = open_array(store, "/").unwrap();
    let back: ArrayBytes = array.retrieve_array_subset(&array.subset_all()).unwrap();
    let back = back.into_fixed().unwrap();
    let want = zquant_round_trip(&json!(meta.codecs.to_codecs()), &json!(0.0), &[3, 4], &data);
    assert_eq!(back.as_ref(), want.as_slice());
    // offset 0.123456789012 as an f64 (not as f32): element 0 decodes to it exactly.
    assert_eq!(
        f64::from_le_bytes(back[..8].try_into().unwrap()),
        0.123456789012
    );
}

/// A v2 array with numcodecs' `quantize` and `astype` filters (zarrs has neither), in
/// big-endian, chunk bytes written by numcodecs' arithmetic as zquant reproduces it.
#[test]
fn v2_quantize_astype_open_through_zarrs() {
    register();
    let store = Arc::new(MemoryStore::new());
    let zarray = json!({
        "zarr_format": 2, "shape": [3, 4], "chunks": [2, 4], "dtype": ">f8", "order": "C",
        "compressor": null, "fill_value": 0.0, "dimension_separator": ".",
        "filters": [{"id": "quantize", "digits": 1, "dtype": ">f8", "astype": ">f8"},
                    {"id": "astype", "encode_dtype": ">f4", "decode_dtype": ">f8"}],
    });
    store
        .set(
            &StoreKey::new(".zarray").unwrap(),
            serde_json::to_vec(&zarray).unwrap().into(),
        )
        .unwrap();
    let data: Vec<f64> = (0..12).map(|i| i as f64 / 3.0 - 1.0).collect();
    let meta = ArrayMetadata::from_json(&zarray).unwrap();
    let chunks = ChunkCodec::new(&meta).unwrap();
    for ci in 0..2u64 {
        let (origin, shape) = chunks.region(&[ci, 0]).unwrap();
        let start = origin[0] as usize * 4;
        let region = DynArray::from_le_bytes(
            DTypeId::Float64,
            &shape,
            &le(&data[start..start + shape[0] * 4]),
        )
        .unwrap();
        let bytes = chunks.encode_chunk(&[ci, 0], &region).unwrap();
        // A whole 2 x 4 chunk (the edge one too) of float32 codes, 4 bytes each.
        assert_eq!(bytes.len(), 2 * 4 * 4);
        store
            .set(&StoreKey::new(format!("{ci}.0")).unwrap(), bytes.into())
            .unwrap();
    }
    let array = open_array(store, "/").unwrap();
    let back: ArrayBytes = array.retrieve_array_subset(&array.subset_all()).unwrap();
    let back = back.into_fixed().unwrap();
    let got: Vec<f64> = back
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    // digits 1: multiples of 1/16 (numcodecs: `around(16 x) / 16`).
    let want: Vec<f64> = data
        .iter()
        .map(|x| (x * 16.0).round_ties_even() / 16.0)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn element_errors_through_zarrs_give_the_position_in_the_chunk() {
    register();
    // 4x6 array in 2x3 chunks; 1000 at array [3, 4] is out of uint8's range (checked), at
    // [1, 1] of chunk [1, 1].
    let codecs = json!([
        {"name": "cast_value", "configuration": {"data_type": "uint8"}},
        {"name": "bytes", "configuration": {"endian": "little"}},
    ]);
    let meta: ArrayMetadataV3 =
        serde_json::from_value(zarr_json(codecs, json!(0), [4, 6], [2, 3])).unwrap();
    let store = Arc::new(MemoryStore::new());
    let array = Array::new_with_metadata(store, "/", ZarrsMetadata::V3(meta)).unwrap();
    let mut data = vec![1.0f64; 24];
    data[3 * 6 + 4] = 1000.0;
    let e = array
        .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(le(&data)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("value out of range of uint8"), "{e}");
    assert!(e.contains("at element [1, 1]"), "{e}");
    assert!(e.contains("position within a chunk of shape [2, 3]"), "{e}");
}

// --- Issue 22: fill values whose code is 0 -------------------------------------------------
//
// zarrs 0.23 computes chunk representations for `recommended_concurrency` with a dummy fill
// value of zero bytes (`CodecChain::recommended_concurrency`), not the array's. With
// `cast_value` NaN -> 0 / 0 -> NaN, 0.0 encodes to 0 and decodes to NaN, so a codec that
// checks its fill value there fails on every read and write, although the array's fill value
// (NaN) is valid.

/// `cast_value` float64 -> uint8, code 0 for NaN both ways (the spec's "Float64 to uint8
/// with NaN preservation" layout, with the missing-data code 0).
fn cast_nan_0() -> Value {
    json!({"name": "cast_value", "configuration": {"data_type": "uint8",
        "rounding": "nearest-even", "out_of_range": "clamp",
        "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}})
}

/// A `scale_offset` under which 0.0 leaves uint8's range ((0 - 200) * 4 = -800), so the dummy
/// fill value clamps to code 0 and decodes as NaN.
fn so_200() -> Value {
    json!({"name": "scale_offset", "configuration": {"offset": 200, "scale": 4}})
}

fn bytes_le() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

fn zstd() -> Value {
    json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}})
}

fn sharding(inner: Value) -> Value {
    json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 16], "codecs": inner,
        "index_codecs": [bytes_le(), {"name": "crc32c"}], "index_location": "end"}})
}

/// `values`, moved into [225, 262] (with its NaN, -0 and subnormal kept), so that
/// `scale_offset(200, 4)` maps them into uint8's range.
fn values_near_240(n: usize) -> Vec<f64> {
    values(n)
        .into_iter()
        .enumerate()
        .map(|(i, x)| if i == 3 || i == n - 1 { x } else { x + 240.0 })
        .collect()
}

fn nan_code_0_cases() -> Vec<(&'static str, Value, Value, [u64; 2])> {
    let so_cast = json!([so_200(), cast_nan_0()]);
    vec![
        (
            "cast_value",
            json!([cast_nan_0()]),
            json!([cast_nan_0(), bytes_le()]),
            [8, 16],
        ),
        (
            "so+cast",
            so_cast.clone(),
            json!([so_200(), cast_nan_0(), bytes_le()]),
            [8, 16],
        ),
        (
            "so+cast zstd",
            so_cast.clone(),
            json!([so_200(), cast_nan_0(), bytes_le(), zstd()]),
            [8, 16],
        ),
        (
            "outside sharding",
            so_cast.clone(),
            json!([
                so_200(),
                cast_nan_0(),
                sharding(json!([bytes_le(), zstd()]))
            ]),
            [16, 32],
        ),
        (
            "inside sharding",
            so_cast.clone(),
            json!([sharding(json!([so_200(), cast_nan_0(), bytes_le()]))]),
            [16, 32],
        ),
        (
            "split across sharding",
            so_cast,
            json!([
                so_200(),
                sharding(json!([cast_nan_0(), bytes_le(), zstd()]))
            ]),
            [16, 32],
        ),
    ]
}

#[test]
fn nan_code_0_stores_write_and_read() {
    for (name, a2a, codecs, chunks) in nan_code_0_cases() {
        let data = if name == "cast_value" {
            values(37 * 53).iter().map(|x| x + 20.0).collect()
        } else {
            values_near_240(37 * 53)
        };
        let meta = zarr_json(codecs, json!("NaN"), [37, 53], chunks);
        let (_, back) = write_read(&meta, &data);
        let want = zquant_round_trip(
            &with_tail(&a2a, &[bytes_le()]),
            &json!("NaN"),
            &[37, 53],
            &data,
        );
        assert_eq!(back, want, "{name}");
    }
}

#[test]
fn nan_code_0_stores_with_missing_chunks_and_partial_reads() {
    register();
    for (name, a2a, codecs, chunks) in nan_code_0_cases() {
        let data = values_near_240(37 * 53);
        let meta: ArrayMetadataV3 =
            serde_json::from_value(zarr_json(codecs, json!("NaN"), [37, 53], chunks)).unwrap();
        let store = Arc::new(MemoryStore::new());
        let array = Array::new_with_metadata(store, "/", ZarrsMetadata::V3(meta)).unwrap();
        // Rows 0..16 only: the chunks (and shards) below are missing, and within a shard of
        // 16 x 32, the inner chunks are all present or all missing by row band.
        let top = zarrs::array::ArraySubset::new_with_ranges(&[0..16, 0..53]);
        array
            .store_array_subset(&top, ArrayBytes::new_flen(le(&data[..16 * 53])))
            .unwrap();
        let mut expected_input = data.clone();
        expected_input[16 * 53..].fill(f64::NAN);
        let want = zquant_round_trip(
            &with_tail(&a2a, &[bytes_le()]),
            &json!("NaN"),
            &[37, 53],
            &expected_input,
        );
        let back: ArrayBytes = array.retrieve_array_subset(&array.subset_all()).unwrap();
        assert_eq!(
            back.into_fixed().unwrap().as_ref(),
            want.as_slice(),
            "{name}: whole"
        );
        // A subset across chunk (and shard) edges: zarrs' partial decoders.
        let sub = zarrs::array::ArraySubset::new_with_ranges(&[5..21, 13..40]);
        let part: ArrayBytes = array.retrieve_array_subset(&sub).unwrap();
        let want_part: Vec<u8> = (5..21)
            .flat_map(|i| (13..40).map(move |j| i * 53 + j))
            .flat_map(|k| want[k * 8..k * 8 + 8].to_vec())
            .collect();
        assert_eq!(
            part.into_fixed().unwrap().as_ref(),
            want_part.as_slice(),
            "{name}: subset"
        );
    }
}

#[test]
fn an_invalid_fill_value_still_fails_every_chunk() {
    register();
    // 0.5 encodes to code 0 (nearest-even), which decodes to 0.0: cast_value's round-trip
    // rule rejects it. Writing, and reading a chunk that is there, must say so.
    let codecs =
        json!([{"name": "cast_value", "configuration": {"data_type": "uint8"}}, bytes_le()]);
    let meta: ArrayMetadataV3 =
        serde_json::from_value(zarr_json(codecs, json!(0.5), [4, 6], [2, 3])).unwrap();
    let store = Arc::new(MemoryStore::new());
    let array = Array::new_with_metadata(store.clone(), "/", ZarrsMetadata::V3(meta)).unwrap();
    let e = array
        .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(le(&[1.0; 24])))
        .unwrap_err()
        .to_string();
    assert!(e.contains("fill value"), "{e}");
    store
        .set(&StoreKey::new("c/0/0").unwrap(), vec![1u8; 6].into())
        .unwrap();
    let e = array
        .retrieve_array_subset::<ArrayBytes>(&array.subset_all())
        .unwrap_err()
        .to_string();
    assert!(e.contains("fill value"), "{e}");
    let e = array
        .retrieve_array_subset::<ArrayBytes>(&zarrs::array::ArraySubset::new_with_ranges(&[
            0..1,
            0..1,
        ]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("fill value"), "{e}");
}

#[test]
fn open_array_checks_fill_values_even_where_no_chunk_is_stored() {
    register();
    // Without a chunk, zarrs reads the fill value without running a codec: open_array checks
    // every zquant codec against the fill value it receives, inside sharding too.
    let bad = json!({"name": "cast_value", "configuration": {"data_type": "uint8"}});
    for codecs in [
        json!([bad.clone(), bytes_le()]),
        json!([sharding(json!([bad.clone(), bytes_le()]))]),
        json!([so_200(), sharding(json!([cast_nan_0(), bytes_le()])),]),
    ] {
        let fill = if codecs[0]["name"] == "scale_offset" {
            json!(200.125)
        } else {
            json!(0.5)
        };
        let meta: ArrayMetadataV3 =
            serde_json::from_value(zarr_json(codecs.clone(), fill, [4, 6], [16, 32])).unwrap();
        let store = Arc::new(MemoryStore::new());
        let array = Array::new_with_metadata(store.clone(), "/", ZarrsMetadata::V3(meta)).unwrap();
        array.store_metadata().unwrap();
        let e = open_array(store, "/").unwrap_err().to_string();
        assert!(e.contains("fill value"), "{codecs}: {e}");
    }
    // A valid NaN fill with code 0 opens.
    let meta = zarr_json(
        json!([so_200(), cast_nan_0(), bytes_le()]),
        json!("NaN"),
        [4, 6],
        [2, 3],
    );
    let (store, _) = write_read(&meta, &values_near_240(24));
    assert!(open_array(store, "/").is_ok());
}

#[test]
fn sub_byte_targets_through_zarrs_bytes_and_packbits() {
    // int4/uint4 codes leave bits of their byte unused: the adapter copies (masking) instead
    // of running on zarrs' buffers in place. Both serializers, both directions.
    let data: Vec<f64> = values(37 * 53).iter().map(|x| x / 2.0).collect();
    for (target, serializer) in [
        (
            "uint4",
            json!({"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}),
        ),
        (
            "int4",
            json!({"name": "packbits", "configuration": {"padding_encoding": "none"}}),
        ),
        ("int4", bytes_le()),
    ] {
        let cast = json!({"name": "cast_value", "configuration": {"data_type": target,
            "rounding": "nearest-even", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]]}}});
        let codecs = json!([cast.clone(), serializer]);
        let meta = zarr_json(codecs, json!(0.0), [37, 53], [8, 16]);
        let (_, back) = write_read(&meta, &data);
        let want = zquant_round_trip(&json!([cast, bytes_le()]), &json!(0.0), &[37, 53], &data);
        assert_eq!(back, want, "{target}");
    }
}

#[test]
fn bitround_runs_on_zarrs_buffers_themselves() {
    use std::borrow::Cow;
    use std::num::NonZeroU64;
    use zarrs::array::{ArrayToArrayCodecTraits, CodecOptions, FillValue};
    let codec =
        ZquantCodec::new("bitround", Some(json!({"keepbits": 3}))).expect("valid configuration");
    let dt = zarrs::array::DataType::from_metadata(
        &serde_json::from_value::<MetadataV3>(json!("float64")).unwrap(),
    )
    .unwrap();
    let fill = FillValue::new(0f64.to_ne_bytes().to_vec());
    let shape = [NonZeroU64::new(4).unwrap()];
    let data = le(&[1.1, -2.7, f64::NAN, 5e-324]);
    // Decoding is the identity: the same bytes come back, not a copy.
    let back = codec
        .decode(
            ArrayBytes::new_flen(data.as_slice()),
            &shape,
            &dt,
            &fill,
            &CodecOptions::default(),
        )
        .unwrap()
        .into_fixed()
        .unwrap();
    assert!(matches!(&back, Cow::Borrowed(b) if b.as_ptr() == data.as_ptr()));
    // Encoding an owned buffer rounds it in place, to what zquant's chain gives.
    let owned = data.clone();
    let ptr = owned.as_ptr();
    let encoded = codec
        .encode(
            ArrayBytes::new_flen(owned),
            &shape,
            &dt,
            &fill,
            &CodecOptions::default(),
        )
        .unwrap()
        .into_fixed()
        .unwrap();
    assert_eq!(encoded.as_ptr(), ptr);
    let (chain, _) = DynChain::from_all_codecs(
        &json!("float64"),
        &json!(0.0),
        &[
            json!({"name": "bitround", "configuration": {"keepbits": 3}}),
            bytes_le(),
        ],
    )
    .unwrap();
    let want = chain
        .encode(&DynArray::from_le_bytes(DTypeId::Float64, &[4], &data).unwrap())
        .unwrap()
        .to_le_bytes();
    assert_eq!(encoded.as_ref(), want.as_slice());
}

/// zarrs' own `packbits` on the words' little-endian bytes, and its decode.
fn zarrs_packbits(dtype: &Value, config: &Value, words: &[u8], n: usize) -> (Vec<u8>, Vec<u8>) {
    use std::num::NonZeroU64;
    use zarrs::array::{CodecOptions, FillValue};
    let meta: MetadataV3 =
        serde_json::from_value(json!({"name": "packbits", "configuration": config})).unwrap();
    let Codec::ArrayToBytes(codec) = Codec::from_metadata(&meta).unwrap() else {
        panic!("packbits is not an array->bytes codec in zarrs");
    };
    let dt = zarrs::array::DataType::from_metadata(
        &serde_json::from_value::<MetadataV3>(dtype.clone()).unwrap(),
    )
    .unwrap();
    let size = words.len() / n;
    let fill = FillValue::new(vec![0u8; size]);
    let shape = [NonZeroU64::new(n as u64).unwrap()];
    let opts = CodecOptions::default();
    let encoded = codec
        .encode(
            ArrayBytes::new_flen(words.to_vec()),
            &shape,
            &dt,
            &fill,
            &opts,
        )
        .unwrap()
        .into_owned();
    let decoded = codec
        .decode(encoded.clone().into(), &shape, &dt, &fill, &opts)
        .unwrap()
        .into_fixed()
        .unwrap()
        .into_owned();
    (encoded, decoded)
}

fn words_le(w: &zquant::dtype::WordBuf) -> Vec<u8> {
    use zquant::dtype::WordBuf;
    match w {
        WordBuf::U8(v) => v.clone(),
        WordBuf::U16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        WordBuf::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        WordBuf::U64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

#[test]
fn packbits_bytes_identical_to_zarrs() {
    use zquant::Kind;
    use zquant::dtype::WordBuf;
    use zquant::zarr::PackBits;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut compared = 0;
    for &id in DTypeId::ALL {
        let (n_bits, signed) = match id.kind() {
            Kind::Int(l) => (l.bits, l.signed),
            Kind::Float(l) | Kind::Complex(l) => (l.bits(), false),
            Kind::DateTime | Kind::TimeDelta => (64, true),
        };
        let dtype = match id.kind() {
            Kind::DateTime | Kind::TimeDelta => {
                json!({"name": id.name(), "configuration": {"unit": "s", "scale_factor": 1}})
            }
            _ => json!(id.name()),
        };
        let mask = if n_bits == 64 {
            u64::MAX
        } else {
            (1 << n_bits) - 1
        };
        let mut ranges = vec![(None, None), (Some(0), Some(n_bits - 1))];
        for _ in 0..6 {
            let (a, b) = (
                (next() % n_bits as u64) as u32,
                (next() % n_bits as u64) as u32,
            );
            ranges.push((Some(a.min(b)), Some(a.max(b))));
        }
        for (first, last) in ranges {
            for padding in ["none", "first_byte", "last_byte"] {
                for n in [1usize, 3, 8, 17, 70] {
                    let config =
                        json!({"padding_encoding": padding, "first_bit": first, "last_bit": last});
                    let codec = PackBits::new(id, Some(&config)).unwrap();
                    let m = n * id.words_per_element();
                    let codes: Vec<u64> = (0..m).map(|_| next() & mask).collect();
                    let words = match id.word_bits() {
                        8 => WordBuf::U8(codes.iter().map(|&c| c as u8).collect()),
                        16 => WordBuf::U16(codes.iter().map(|&c| c as u16).collect()),
                        32 => WordBuf::U32(codes.iter().map(|&c| c as u32).collect()),
                        _ => WordBuf::U64(codes.clone()),
                    };
                    let ours = codec.encode(words.as_words()).unwrap();
                    let (theirs, their_decode) =
                        zarrs_packbits(&dtype, &config, &words_le(&words), n);
                    let what = format!("{id} {config} n={n}");
                    // zarrs' "bytes codec fast path" (whole-byte components, all bits
                    // kept) writes the `bytes` codec's output and drops the padding byte
                    // the spec prepends or appends in every case (docs/spec-readings.md,
                    // "packbits"): pinned here, and neither decode is compared.
                    let whole = n_bits % 8 == 0
                        && first.unwrap_or(0) == 0
                        && last.unwrap_or(n_bits - 1) == n_bits - 1;
                    if whole && padding != "none" {
                        let body = match padding {
                            "first_byte" => &ours[1..],
                            _ => &ours[..ours.len() - 1],
                        };
                        assert_eq!(body, theirs.as_slice(), "encode {what}");
                        assert_eq!(ours.len(), theirs.len() + 1, "{what}");
                        compared += 1;
                        continue;
                    }
                    assert_eq!(ours, theirs, "encode {what}");
                    compared += 1;
                    // Decoding: zarrs sign-extends only within the byte of the code's top
                    // bit (docs/spec-readings.md, "packbits"); elsewhere the words agree,
                    // once the bits above a sub-byte code are ignored.
                    let last = last.unwrap_or(n_bits - 1);
                    if !signed || n_bits <= 8 || last >= n_bits - 8 {
                        let back = words_le(&codec.decode(&ours, n).unwrap());
                        let byte_mask = if n_bits < 8 {
                            (1u8 << n_bits) - 1
                        } else {
                            0xff
                        };
                        let theirs: Vec<u8> = their_decode.iter().map(|b| b & byte_mask).collect();
                        assert_eq!(back, theirs, "decode {what}");
                    }
                }
            }
        }
    }
    assert!(compared > 1000);
    // The one difference, pinned: int16 bits 0..=7, 0xff: -1 here, 255 in zarrs.
    let config = json!({"last_bit": 7});
    let codec = PackBits::new(DTypeId::Int16, Some(&config)).unwrap();
    assert_eq!(
        codec.decode(&[0xff], 1).unwrap(),
        WordBuf::U16(vec![0xffff])
    );
    let (_, theirs) = zarrs_packbits(&json!("int16"), &config, &[0xff, 0xff], 1);
    assert_eq!(theirs, [0xff, 0x00]);
}

#[test]
fn packbits_chunks_match_zarrs_arrays() {
    // uint16 12-bit codes through zarrs (its packbits) and through zquant::zarr::ChunkCodec
    // (ours): the same chunk bytes in the store, both ways.
    let codecs = json!([
        {"name": "scale_offset", "configuration": {"offset": -20, "scale": 100}},
        {"name": "cast_value", "configuration": {"data_type": "uint16", "rounding": "nearest-even",
            "out_of_range": "clamp"}},
        {"name": "packbits", "configuration": {"padding_encoding": "last_byte", "last_bit": 11}},
    ]);
    let meta = zarr_json(codecs, json!(-20.0), [37, 53], [8, 16]);
    let data: Vec<f64> = values(37 * 53)
        .iter()
        .map(|v| {
            if v.is_nan() {
                0.0
            } else {
                v.clamp(-20.0, 20.0)
            }
        })
        .collect();
    let (store, _) = write_read(&meta, &data);
    let ours = ArrayMetadata::from_json(&meta).unwrap();
    let chunks = ChunkCodec::new(&ours).unwrap();
    let mut seen = 0;
    for i in 0..5u64 {
        for j in 0..4u64 {
            let key = StoreKey::new(format!("c/{i}/{j}")).unwrap();
            let Some(bytes) = store.get(&key).unwrap() else {
                continue;
            };
            let region = chunks.decode_chunk(&[i, j], &bytes[..]).unwrap();
            assert_eq!(
                chunks.encode_chunk(&[i, j], &region).unwrap(),
                bytes.to_vec(),
                "{key}"
            );
            seen += 1;
        }
    }
    assert!(seen > 10);
}

/// Short forms zarrs keeps as bare names, and `bytes` without `endian`: what zquant's own
/// metadata writer must not write back as given.
fn short_form_meta(shape: &[u64], chunks: &[u64], codecs: Value) -> Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": "default", "fill_value": "NaN", "codecs": codecs,
    })
}

fn so_u16() -> Vec<Value> {
    vec![
        json!({"name": "scale_offset", "configuration": {"offset": -50, "scale": 100}}),
        json!({"name": "cast_value", "configuration": {"data_type": "uint16",
            "rounding": "nearest-even",
            "scalar_map": {"encode": [["NaN", 65535]], "decode": [[65535, "NaN"]]}}}),
    ]
}

fn stored_json(store: &MemoryStore, key: &str) -> Option<Value> {
    store
        .get(&StoreKey::new(key).unwrap())
        .unwrap()
        .map(|b| serde_json::from_slice(&b).unwrap())
}

/// Every extension point of what `zquant::zarrs` writes is an object (zarr-python 3.4 reads
/// no bare name), with the chunk key encoding's separator and `bytes`' endian written out;
/// zarrs' own `store_metadata` writes the bare names back.
#[test]
fn create_array_writes_object_forms() {
    let mut codecs = so_u16();
    codecs.push(
        json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3],
        "codecs": ["bytes", {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": [{"name": "bytes"}, "crc32c"]}}),
    );
    let meta = short_form_meta(&[4, 6], &[4, 6], Value::Array(codecs));

    let zarrs_store = Arc::new(MemoryStore::new());
    let parsed: ArrayMetadataV3 = serde_json::from_value(meta.clone()).unwrap();
    register();
    Array::new_with_metadata(zarrs_store.clone(), "/", ZarrsMetadata::V3(parsed))
        .unwrap()
        .store_metadata()
        .unwrap();
    let zarrs_json = stored_json(&zarrs_store, "zarr.json").unwrap();
    assert_eq!(zarrs_json["chunk_key_encoding"], "default"); // what zarr-python rejects

    let store = Arc::new(MemoryStore::new());
    let array = zquant::zarrs::create_array(store.clone(), "/", meta).unwrap();
    let written = stored_json(&store, "zarr.json").unwrap();
    assert_eq!(
        written["chunk_key_encoding"],
        json!({"name": "default", "configuration": {"separator": "/"}})
    );
    let shard = &written["codecs"][2]["configuration"];
    assert_eq!(
        shard["codecs"][0],
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    );
    assert_eq!(
        shard["index_codecs"][1],
        json!({"name": "crc32c", "configuration": {}})
    );
    assert!(
        written
            .get("attributes")
            .is_none_or(|a| a.get("_zarrs").is_none())
    );
    // The chunk API on the created array, read back through open_array.
    let values: Vec<f64> = (0..24)
        .map(|i| if i == 5 { f64::NAN } else { i as f64 * 0.25 })
        .collect();
    array.store_chunk(&[0, 0], values.clone()).unwrap();
    let back: Vec<f64> = open_array(store, "/")
        .unwrap()
        .retrieve_chunk(&[0, 0])
        .unwrap();
    for (a, b) in values.iter().zip(&back) {
        assert!(
            (a.is_nan() && b.is_nan()) || (a - b).abs() <= 0.005,
            "{a} {b}"
        );
    }
}

/// A fill value the chain cannot encode is refused before anything is written, also when
/// the rejecting codec is inside sharding.
#[test]
fn create_array_refuses_an_unencodable_fill_value_before_writing() {
    for codecs in [
        json!([{"name": "cast_value", "configuration": {"data_type": "uint8"}}, "bytes"]),
        json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
            "codecs": [{"name": "cast_value", "configuration": {"data_type": "int16"}}, "bytes"],
            "index_codecs": ["bytes"]}}]),
    ] {
        let store = Arc::new(MemoryStore::new());
        let err =
            zquant::zarrs::create_array(store.clone(), "/", short_form_meta(&[4], &[4], codecs))
                .unwrap_err();
        assert!(err.to_string().contains("fill value"), "{err}");
        assert!(stored_json(&store, "zarr.json").is_none());
    }
}

#[test]
fn dtype_id_of_zarrs_data_types() {
    use zarrs::array::data_type;
    assert_eq!(
        zquant::zarrs::dtype_id(&data_type::float64()).unwrap(),
        DTypeId::Float64
    );
    assert_eq!(
        zquant::zarrs::dtype_id(&data_type::uint16()).unwrap(),
        DTypeId::UInt16
    );
    assert_eq!(
        zquant::zarrs::dtype_id(&data_type::bfloat16()).unwrap(),
        DTypeId::BFloat16
    );
}

fn source_array(
    shape: &[u64],
    chunks: &[u64],
    f32_type: bool,
    fill: Value,
) -> (Array<MemoryStore>, Vec<f64>) {
    let n: u64 = shape.iter().product();
    let values: Vec<f64> = (0..n)
        .map(|i| {
            if i % 37 == 3 {
                f64::NAN
            } else {
                270.0 + 30.0 * ((i as f64) * 0.013).sin()
            }
        })
        .collect();
    let mut meta = short_form_meta(shape, chunks, json!(["bytes"]));
    meta["fill_value"] = fill;
    if f32_type {
        meta["data_type"] = json!("float32");
    }
    let array = zquant::zarrs::create_array(Arc::new(MemoryStore::new()), "/", meta).unwrap();
    if f32_type {
        let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
        array.store_array_subset(&array.subset_all(), v).unwrap();
        (array, values.iter().map(|&x| f64::from(x as f32)).collect())
    } else {
        array
            .store_array_subset(&array.subset_all(), values.clone())
            .unwrap();
        (array, values)
    }
}

/// The one call: every target, float32 and float64, 1-D and 3-D, NaN and a zero fill
/// value; the written array reopens, every element is within the bound, the metadata is
/// in object form.
#[test]
fn quantize_meets_every_target() {
    use zquant::zarrs::{QuantizeOptions, Target, quantize};
    for (shape, chunks) in [
        (vec![1000u64], vec![128u64]),
        (vec![6, 10, 15], vec![4, 5, 8]),
    ] {
        for f32_type in [false, true] {
            for fill in [json!("NaN"), json!(0.0)] {
                let (source, values) = source_array(&shape, &chunks, f32_type, fill.clone());
                for target in [
                    Target::MaxAbsError(0.01),
                    // Near 300 a float32 step is 3e-5: 1e-5 is out of reach there.
                    Target::MaxAbsError(if f32_type { 1e-3 } else { 1e-5 }),
                    Target::MaxRelError(1e-3),
                    Target::Information(0.99),
                ] {
                    let what = format!("{shape:?} f32={f32_type} fill={fill} {target:?}");
                    let store = Arc::new(MemoryStore::new());
                    let report =
                        quantize(&source, store.clone(), "/", &QuantizeOptions::new(target))
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let reopened = open_array(store.clone(), "/").unwrap();
                    let back: Vec<f64> = if f32_type {
                        let b: Vec<f32> = reopened
                            .retrieve_array_subset(&reopened.subset_all())
                            .unwrap();
                        b.into_iter().map(f64::from).collect()
                    } else {
                        reopened
                            .retrieve_array_subset(&reopened.subset_all())
                            .unwrap()
                    };
                    let mut worst = 0.0f64;
                    for (a, b) in values.iter().zip(&back) {
                        if a.is_nan() {
                            assert!(b.is_nan(), "{what}: NaN read back as {b}");
                            continue;
                        }
                        worst = worst.max((a - b).abs());
                        match target {
                            Target::MaxAbsError(e) => {
                                assert!((a - b).abs() <= e, "{what}: {a} {b}")
                            }
                            Target::MaxRelError(r) => {
                                assert!((a - b).abs() <= r * a.abs(), "{what}: {a} {b}")
                            }
                            Target::Information(_) => {}
                        }
                    }
                    assert!(
                        worst <= report.max_abs_error,
                        "{what}: measured {worst} > reported"
                    );
                    if let Some(b) = report.bound {
                        assert!(
                            report.max_abs_error <= b || matches!(target, Target::MaxRelError(_)),
                            "{what}"
                        );
                    }
                    let meta = stored_json(&store, "zarr.json").unwrap();
                    assert_eq!(
                        meta["chunk_key_encoding"]["configuration"]["separator"], "/",
                        "{what}"
                    );
                    assert_eq!(meta["shape"], json!(shape), "{what}");
                    // An array is there now: a second call refuses to overwrite it.
                    assert!(quantize(&source, store, "/", &QuantizeOptions::new(target)).is_err());
                }
            }
        }
    }
}

/// A target no chain meets fails before anything is written.
#[test]
fn quantize_failure_writes_no_metadata() {
    use zquant::zarrs::{QuantizeOptions, Target, quantize};
    let (source, _) = source_array(&[100], &[10], false, json!("NaN"));
    let store = Arc::new(MemoryStore::new());
    let err = quantize(
        &source,
        store.clone(),
        "/",
        // Below half a float64 step at 280 (2.8e-14): no lossy chain meets it.
        &QuantizeOptions::new(Target::MaxAbsError(1e-20)),
    )
    .unwrap_err();
    assert!(err.to_string().contains("smallest"), "{err}");
    assert!(stored_json(&store, "zarr.json").is_none());
}

/// The stores tests/interop/rust_writes.py has plain zarr-python open: written through the
/// chunk API on `create_array` (short forms given, sharding, crc32c) and through
/// `quantize` (3-D), each with the values it must read (`expected.bin`, float64) and the
/// bound (`case.json`). Run by tests/interop/run.sh (`ZQUANT_INTEROP_DIR` names the
/// directory).
#[test]
#[ignore = "writes stores for tests/interop/run.sh"]
fn interop_written_stores() {
    use zarrs::filesystem::FilesystemStore;
    use zquant::zarrs::{QuantizeOptions, Target, quantize};
    let dir = std::path::PathBuf::from(std::env::var("ZQUANT_INTEROP_DIR").unwrap()).join("rust");
    let _ = std::fs::remove_dir_all(&dir);
    let case = |name: &str, shape: &[u64], values: &[f64], bound: f64| {
        let d = dir.join(name);
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(d.join("expected.bin"), bytes).unwrap();
        let meta = json!({"shape": shape, "bound": bound});
        std::fs::write(d.join("case.json"), meta.to_string()).unwrap();
    };

    // The chunk API on an array create_array made from short forms.
    let mut codecs = so_u16();
    codecs.push(
        json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 5],
        "codecs": ["bytes", {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": ["bytes", "crc32c"]}}),
    );
    let store_dir = dir.join("chunk_api").join("store");
    std::fs::create_dir_all(&store_dir).unwrap();
    let store = Arc::new(FilesystemStore::new(&store_dir).unwrap());
    let array = zquant::zarrs::create_array(
        store,
        "/",
        short_form_meta(&[8, 10], &[8, 10], Value::Array(codecs)),
    )
    .unwrap();
    let values: Vec<f64> = (0..80)
        .map(|i| {
            if i % 11 == 0 {
                f64::NAN
            } else {
                10.0 + i as f64 * 0.37
            }
        })
        .collect();
    array.store_chunk(&[0, 0], values.clone()).unwrap();
    case("chunk_api", &[8, 10], &values, 0.005);

    // The one call, 3-D.
    let (source, values) = source_array(&[6, 10, 15], &[4, 5, 8], false, json!(0.0));
    let store_dir = dir.join("quantize_3d").join("store");
    std::fs::create_dir_all(&store_dir).unwrap();
    let store = Arc::new(FilesystemStore::new(&store_dir).unwrap());
    quantize(
        &source,
        store,
        "/",
        &QuantizeOptions::new(Target::MaxAbsError(0.01)),
    )
    .unwrap();
    case("quantize_3d", &[6, 10, 15], &values, 0.01);
}

/// A value outside the range scale_offset's parameters were fitted for: the error through
/// zarrs says so and gives the fix that keeps the bound, not only clamping.
#[test]
fn out_of_fitted_range_error_names_refit_and_headroom() {
    let meta = short_form_meta(
        &[4],
        &[4],
        Value::Array({
            let mut c = so_u16();
            c.push(json!("bytes"));
            c
        }),
    );
    let array = zquant::zarrs::create_array(Arc::new(MemoryStore::new()), "/", meta).unwrap();
    // (700 + 50) * 100 = 75000 > 65535.
    let err = array
        .store_chunk(&[0], vec![1.0f64, 2.0, 700.0, 3.0])
        .unwrap_err()
        .to_string();
    assert!(err.contains("refit") && err.contains("headroom"), "{err}");
    assert!(err.contains("element 2"), "{err}");
}
