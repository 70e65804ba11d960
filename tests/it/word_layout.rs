//! The run-time array code that works on storage words, once per word width, against the
//! typed code and a byte-level reference, for every data type (built-in and declared):
//! `DynArray`'s bytes both ways, its equality, and the chunk layout steps of
//! `zquant::zarr::ChunkCodec` (edge padding, memory order, byte order, cropping).

use serde_json::json;
use zquant::zarr::{ArrayMetadata, ChunkCodec, MemoryOrder};
use zquant::{DType, DTypeId, DynArray, Kind};

use crate::common::{Rng, seed};

#[zquant::dtype(name = "uint12_word_layout_test", int(bits = 12, unsigned))]
pub struct UInt12(u16);

fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

/// The bits of each storage word that hold a code, from the data type specs: a sub-byte
/// type's upper bits are ignored on read and zero on write.
fn code_bits(id: DTypeId) -> u32 {
    match id.kind() {
        Kind::Int(l) => l.bits,
        Kind::Float(l) | Kind::Complex(l) => l.bits(),
        Kind::DateTime | Kind::TimeDelta => 64,
    }
}

/// `bytes` (whole elements of `id`) with each word's bits above the code cleared.
fn masked(id: DTypeId, bytes: &[u8]) -> Vec<u8> {
    let word = (id.word_bits() / 8) as usize;
    let bits = code_bits(id);
    let mut out = bytes.to_vec();
    if bits < 8 {
        for b in &mut out {
            *b &= (1u8 << bits) - 1;
        }
    } else if bits < 8 * word as u32 {
        for w in out.chunks_exact_mut(word) {
            let mut x = [0u8; 8];
            x[..word].copy_from_slice(w);
            let v = u64::from_le_bytes(x) & ((1u64 << bits) - 1);
            w.copy_from_slice(&v.to_le_bytes()[..word]);
        }
    }
    out
}

/// Bytes, `from_le_bytes`, `to_le_bytes` and `same_as` of the run-time array against the
/// typed `pipeline` functions and `DType::same_as`, on random codes (NaNs of every
/// payload included).
fn check_typed<T: DType>(id: DTypeId, rng: &mut Rng) {
    let shape = [3usize, 5];
    let n = 15;
    let bytes = random_bytes(rng, n * T::SIZE);
    let typed = zquant::from_le_bytes::<T>(&shape, &bytes).unwrap();
    let dynamic = DynArray::from_le_bytes(id, &shape, &bytes).unwrap();
    assert_eq!(dynamic.dtype(), id);
    assert_eq!(dynamic.shape(), shape);
    let want = zquant::to_le_bytes(&typed);
    assert_eq!(dynamic.to_le_bytes(), want, "{id}: bytes");
    assert_eq!(
        want,
        masked(id, &bytes),
        "{id}: the typed bytes are the masked input"
    );
    assert!(
        DynArray::from_array(typed.clone())
            .unwrap()
            .same_as(&dynamic),
        "{id}"
    );
    assert_eq!(
        dynamic.to_array::<T>().map(|a| zquant::to_le_bytes(&a)),
        Some(want)
    );

    // A non-standard layout (F order) reads in logical order.
    let transposed = typed.clone().reversed_axes();
    let f = DynArray::from_array(transposed.clone()).unwrap();
    assert_eq!(
        f.to_le_bytes(),
        zquant::to_le_bytes(&transposed),
        "{id}: F order"
    );
    assert!(
        f.same_as(&DynArray::from_array(transposed.as_standard_layout().into_owned()).unwrap())
    );

    // Axes that run backwards (negative strides) too.
    let mut flipped = typed.clone();
    flipped.invert_axis(ndarray::Axis(1));
    let mut flipped = flipped.reversed_axes();
    flipped.invert_axis(ndarray::Axis(1));
    let d = DynArray::from_array(flipped.clone()).unwrap();
    assert_eq!(
        d.to_le_bytes(),
        zquant::to_le_bytes(&flipped),
        "{id}: flipped"
    );

    // Equality element by element, against the typed rule.
    let other = random_bytes(rng, n * T::SIZE);
    for (i, (a, b)) in bytes
        .chunks_exact(T::SIZE)
        .zip(other.chunks_exact(T::SIZE))
        .enumerate()
    {
        // Half the pairs differ only in the bits a type ignores, or not at all.
        let b = if i % 2 == 0 { a } else { b };
        let (x, y) = (T::read_le(a), T::read_le(b));
        let (dx, dy) = (
            DynArray::from_le_bytes(id, &[1], a).unwrap(),
            DynArray::from_le_bytes(id, &[1], b).unwrap(),
        );
        assert_eq!(dx.same_as(&dy), x.same_as(y), "{id}: {a:?} vs {b:?}");
    }
}

#[test]
fn bytes_and_equality_match_the_typed_code_for_every_type() {
    let mut rng = Rng::new(seed());
    macro_rules! each {
        (() $($kind:ident $v:ident = $t:ty,)*) => {
            $(check_typed::<$t>(DTypeId::$v, &mut rng);)*
        };
    }
    zquant::__zquant_dtype_table!(each);
    let custom = zquant::register_dtype::<UInt12>().unwrap();
    check_typed::<UInt12>(custom, &mut rng);
}

/// The bytes of chunk `(ci, cj)` of a `[5, 7]` array in `[2, 3]` chunks, built byte by byte:
/// each position of the chunk in memory order is the array element there (masked) or
/// the fill value's bytes, and each storage word is reversed for big endian.
fn reference_chunk(
    id: DTypeId,
    array: &[u8],
    fill: &[u8],
    (ci, cj): (usize, usize),
    order: MemoryOrder,
    big: bool,
) -> Vec<u8> {
    let size = id.size();
    let mut out = Vec::new();
    for p in 0..6 {
        let (a, b) = match order {
            MemoryOrder::C => (p / 3, p % 3),
            MemoryOrder::F => (p % 2, p / 2),
        };
        let (i, j) = (ci * 2 + a, cj * 3 + b);
        if i < 5 && j < 7 {
            out.extend_from_slice(&array[(i * 7 + j) * size..][..size]);
        } else {
            out.extend_from_slice(fill);
        }
    }
    let word = (id.word_bits() / 8) as usize;
    if big {
        for w in out.chunks_exact_mut(word) {
            w.reverse();
        }
    }
    out
}

#[test]
fn chunk_layout_matches_a_byte_reference_for_every_type() {
    let mut rng = Rng::new(seed() ^ 0x1a7);
    let custom = zquant::register_dtype::<UInt12>().unwrap();
    let ids = DTypeId::ALL.iter().copied().chain([custom]);
    for id in ids {
        let size = id.size();
        // The fill value: the element whose words are all 1 (a valid code of every type).
        let fill_json = id.value_to_json([1, 1]);
        let fill = DynArray::fill_value(id, &fill_json).unwrap().to_le_bytes();
        let array = random_bytes(&mut rng, 35 * size);
        let masked_array = masked(id, &array);
        let endians: &[&str] = if size / id.words_per_element() > 1 {
            &["little", "big"]
        } else {
            &["little"]
        };
        for &endian in endians {
            for order in [MemoryOrder::C, MemoryOrder::F] {
                let data_type = match id.kind() {
                    Kind::DateTime | Kind::TimeDelta => json!({"name": id.name(),
                        "configuration": {"unit": "s", "scale_factor": 1}}),
                    _ => json!(id.name()),
                };
                let meta = json!({
                    "zarr_format": 3, "node_type": "array", "shape": [5, 7],
                    "data_type": data_type,
                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
                    "chunk_key_encoding": {"name": "default"}, "fill_value": fill_json,
                    "codecs": [{"name": "bytes", "configuration": {"endian": endian}}],
                });
                let mut meta = ArrayMetadata::from_json(&meta).unwrap();
                meta.order = order;
                let chunks = ChunkCodec::new(&meta).unwrap();
                for ci in 0..3usize {
                    for cj in 0..3usize {
                        let (origin, shape) = chunks.region(&[ci as u64, cj as u64]).unwrap();
                        let region_bytes: Vec<u8> = (0..shape[0])
                            .flat_map(|a| (0..shape[1]).map(move |b| (a, b)))
                            .flat_map(|(a, b)| {
                                let k = (origin[0] as usize + a) * 7 + origin[1] as usize + b;
                                array[k * size..(k + 1) * size].to_vec()
                            })
                            .collect();
                        let region = DynArray::from_le_bytes(id, &shape, &region_bytes).unwrap();
                        let chunk = [ci as u64, cj as u64];
                        let bytes = chunks.encode_chunk(&chunk, &region).unwrap();
                        let want = reference_chunk(
                            id,
                            &masked_array,
                            &fill,
                            (ci, cj),
                            order,
                            endian == "big",
                        );
                        let at = format!("{id} {endian} {order:?} chunk {ci},{cj}");
                        assert_eq!(bytes, want, "{at}");
                        let back = chunks.decode_chunk(&chunk, &bytes).unwrap();
                        assert_eq!(back.shape(), shape.as_slice(), "{at}");
                        assert_eq!(back.to_le_bytes(), masked(id, &region_bytes), "{at}");
                    }
                }
            }
        }
    }
}

/// `DynChain::encode_words`/`decode_words` (the caller-owned buffers the Python binding
/// uses) give the same words as `encode`/`decode`, locate a failing element as they do,
/// and reject buffers of the wrong width or length.
#[test]
fn chain_words_entry_points_match_the_array_calls() {
    use serde_json::json;
    use zquant::dtype::{Words, WordsMut};
    use zquant::{DynArray, DynChain};

    let chain = DynChain::from_array_to_array_codecs(
        &json!("float64"),
        &json!("NaN"),
        &[
            json!({"name": "scale_offset", "configuration": {"offset": 10.0, "scale": 100.0}}),
            json!({"name": "cast_value", "configuration": {"data_type": "int16",
                "scalar_map": {"encode": [["NaN", -32768]], "decode": [[-32768, "NaN"]]}}}),
        ],
    )
    .expect("valid chain");
    let values: Vec<f64> = (0..10_000)
        .map(|i| 10.0 + (i as f64 * 0.37).sin())
        .collect();
    let shape = [100, 100];
    let input = DynArray::from_le_bytes(
        zquant::DTypeId::Float64,
        &shape,
        &values
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<_>>(),
    )
    .expect("bytes");
    let want = chain.encode(&input).expect("encodes");
    let bits: Vec<u64> = values.iter().map(|x| x.to_bits()).collect();
    let mut out = vec![0u16; 10_000];
    chain
        .encode_words(Words::U64(&bits), &shape, WordsMut::U16(&mut out))
        .expect("encodes");
    assert_eq!(Some(Words::U16(&out)), want.words());

    let back = chain.decode(&want).expect("decodes");
    let mut dec = vec![0u64; 10_000];
    chain
        .decode_words(Words::U16(&out), &shape, WordsMut::U64(&mut dec))
        .expect("decodes");
    assert_eq!(Some(Words::U64(&dec)), back.words());

    // An element out of int16's range: the same located error as `encode`.
    let mut bad = values.clone();
    bad[250] = 1e9;
    let bad_bits: Vec<u64> = bad.iter().map(|x| x.to_bits()).collect();
    let e = chain
        .encode_words(Words::U64(&bad_bits), &shape, WordsMut::U16(&mut out))
        .expect_err("out of range");
    let bad_arr = DynArray::from_le_bytes(
        zquant::DTypeId::Float64,
        &shape,
        &bad.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
    )
    .expect("bytes");
    let e2 = chain.encode(&bad_arr).expect_err("out of range");
    assert_eq!(e.to_string(), e2.to_string());
    assert!(e.to_string().contains("[2, 50]"), "{e}");

    // Wrong widths and lengths are errors.
    assert!(
        chain
            .encode_words(Words::U32(&[0; 4]), &[4], WordsMut::U16(&mut out[..4]))
            .is_err()
    );
    assert!(
        chain
            .encode_words(Words::U64(&bits), &shape, WordsMut::U16(&mut out[..5]))
            .is_err()
    );
    assert!(
        chain
            .decode_words(Words::U16(&out), &[3, 3], WordsMut::U64(&mut dec))
            .is_err()
    );
}
