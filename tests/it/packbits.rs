//! `packbits` (`zquant::zarr::PackBits`, and `ChunkCodec` with it) against a bit-by-bit
//! reference written from the spec text (shared/specs/codecs/packbits/README.md).

use proptest::prelude::*;
use serde_json::{Value, json};
use zquant::dtype::{WordBuf, Words, WordsMut};
use zquant::isa::{Isa, with_max_isa};
use zquant::zarr::{ArrayMetadata, ChunkCodec, PackBits, PackBitsError, ZarrError};
use zquant::{DTypeId, DynArray, Kind, MetadataError};

const PADDINGS: [&str; 3] = ["none", "first_byte", "last_byte"];

/// `N` (bits per component) and whether decoding sign-extends, from the spec's rules.
fn layout(id: DTypeId) -> (u32, bool) {
    match id.kind() {
        Kind::Int(l) => (l.bits, l.signed),
        Kind::Float(l) | Kind::Complex(l) => (l.bits(), false),
        Kind::DateTime | Kind::TimeDelta => (64, true),
    }
}

fn bit(x: u64, i: u32) -> u64 {
    (x >> i) & 1
}

/// The spec, step by step: "each component is first encoded as an N-bit value … the b bits
/// from first_bit to last_bit are then extracted"; "element i corresponds to bits
/// [i * k, (i+1) * k)"; "padded with 0 bits"; "Encoded byte i corresponds to bits
/// [i * 8, (i+1) * 8)"; the padding byte before or after.
fn reference_encode(id: DTypeId, padding: &str, first: u32, last: u32, comps: &[u64]) -> Vec<u8> {
    let (n, _) = layout(id);
    let mut bits: Vec<u64> = Vec::new();
    for &c in comps {
        let c = if n == 64 { c } else { c & ((1 << n) - 1) };
        for i in first..=last {
            bits.push(bit(c, i));
        }
    }
    let padding_bits = (8 - bits.len() % 8) % 8;
    bits.extend(std::iter::repeat_n(0, padding_bits));
    let mut bytes: Vec<u8> = bits
        .chunks(8)
        .map(|b| b.iter().enumerate().map(|(i, &x)| (x << i) as u8).sum())
        .collect();
    match padding {
        "first_byte" => bytes.insert(0, padding_bits as u8),
        "last_byte" => bytes.push(padding_bits as u8),
        _ => {}
    }
    bytes
}

/// "the b encoded bits are first shifted to first_bit … sign-extended (for signed integer
/// data types), or zero-extended (all other data types) up to N bits". `data` is the packed
/// bits without the padding byte.
fn reference_decode(id: DTypeId, first: u32, last: u32, data: &[u8], m: usize) -> Vec<u64> {
    let (n, signed) = layout(id);
    let b = last - first + 1;
    let get = |i: usize| ((data[i / 8] >> (i % 8)) & 1) as u64;
    (0..m)
        .map(|c| {
            let mut v = 0u64;
            for j in 0..b {
                v |= get(c * b as usize + j as usize) << (first + j);
            }
            if signed && bit(v, last) == 1 {
                for j in last + 1..n {
                    v |= 1 << j;
                }
            }
            v
        })
        .collect()
}

fn buf(bits: u32, v: &[u64]) -> WordBuf {
    match bits {
        8 => WordBuf::U8(v.iter().map(|&x| x as u8).collect()),
        16 => WordBuf::U16(v.iter().map(|&x| x as u16).collect()),
        32 => WordBuf::U32(v.iter().map(|&x| x as u32).collect()),
        _ => WordBuf::U64(v.to_vec()),
    }
}

fn to_u64(w: &WordBuf) -> Vec<u64> {
    match w {
        WordBuf::U8(v) => v.iter().map(|&x| x as u64).collect(),
        WordBuf::U16(v) => v.iter().map(|&x| x as u64).collect(),
        WordBuf::U32(v) => v.iter().map(|&x| x as u64).collect(),
        WordBuf::U64(v) => v.clone(),
    }
}

fn config(padding: &str, first: Option<u32>, last: Option<u32>) -> Value {
    json!({"padding_encoding": padding, "first_bit": first, "last_bit": last})
}

/// Encode `comps` (component codes) both ways, compare; decode both ways, compare; and
/// check the round trip gives the codes' bits back (extended as the spec says).
fn check(id: DTypeId, padding: &str, first: Option<u32>, last: Option<u32>, comps: &[u64]) {
    let (n, signed) = layout(id);
    let (f, l) = (first.unwrap_or(0), last.unwrap_or(n - 1));
    let codec = PackBits::new(id, Some(&config(padding, first, last))).unwrap();
    let words = buf(id.word_bits(), comps);
    let bytes = codec.encode(words.as_words()).unwrap();
    let want = reference_encode(id, padding, f, l, comps);
    let what = format!("{id} {padding} bits {f}..={l}, {} components", comps.len());
    assert_eq!(bytes, want, "encode {what}");
    let elements = comps.len() / id.words_per_element();
    assert_eq!(codec.encoded_len(elements).unwrap(), bytes.len(), "{what}");
    let decoded = to_u64(&codec.decode(&bytes, elements).unwrap());
    let data = match padding {
        "first_byte" => &bytes[1..],
        "last_byte" => &bytes[..bytes.len() - 1],
        _ => &bytes[..],
    };
    assert_eq!(
        decoded,
        reference_decode(id, f, l, data, comps.len()),
        "decode {what}"
    );
    // The round trip keeps bits first..=last and extends the top one.
    for (i, (&c, &d)) in comps.iter().zip(&decoded).enumerate() {
        let kept = (c >> f) & (u64::MAX >> (64 - (l - f + 1)));
        let mut v = kept << f;
        if signed && bit(v, l) == 1 && l + 1 < n {
            v |= (u64::MAX >> (64 - n)) & !(u64::MAX >> (63 - l));
        }
        assert_eq!(d, v, "round trip {what}, component {i} ({c:#x})");
    }
}

/// Copy `v` into a fresh buffer `off` elements in, so that the slice starts `off` elements
/// past the allocation's (aligned) start.
fn shifted<T: Copy + Default>(v: &[T], off: usize) -> Vec<T> {
    let mut b = vec![T::default(); off];
    b.extend_from_slice(v);
    b
}

/// [`check`] through `encode_into`/`decode_into`, on words and bytes that start `off`
/// elements (or bytes) into their buffers, at the instruction-set `level` in force.
fn check_unaligned(
    id: DTypeId,
    padding: &str,
    first: Option<u32>,
    last: Option<u32>,
    comps: &[u64],
    off: usize,
    level: Isa,
) {
    let (n, _) = layout(id);
    let (f, l) = (first.unwrap_or(0), last.unwrap_or(n - 1));
    let codec = PackBits::new(id, Some(&config(padding, first, last))).unwrap();
    let elements = comps.len() / id.words_per_element();
    let want = reference_encode(id, padding, f, l, comps);
    let what = format!(
        "{id} {padding} bits {f}..={l}, {} components, offset {off}, {level:?}",
        comps.len()
    );
    let mut bytes = shifted(&vec![0xa5u8; want.len()], off);
    let decoded = match buf(id.word_bits(), comps) {
        WordBuf::U8(v) => {
            let w = shifted(&v, off);
            codec
                .encode_into(Words::U8(&w[off..]), &mut bytes[off..])
                .unwrap();
            let mut out = shifted(&vec![0x5au8; v.len()], off);
            codec
                .decode_into(&bytes[off..], WordsMut::U8(&mut out[off..]))
                .unwrap();
            out[off..].iter().map(|&x| x as u64).collect::<Vec<_>>()
        }
        WordBuf::U16(v) => {
            let w = shifted(&v, off);
            codec
                .encode_into(Words::U16(&w[off..]), &mut bytes[off..])
                .unwrap();
            let mut out = shifted(&vec![0x5a5au16; v.len()], off);
            codec
                .decode_into(&bytes[off..], WordsMut::U16(&mut out[off..]))
                .unwrap();
            out[off..].iter().map(|&x| x as u64).collect()
        }
        WordBuf::U32(v) => {
            let w = shifted(&v, off);
            codec
                .encode_into(Words::U32(&w[off..]), &mut bytes[off..])
                .unwrap();
            let mut out = shifted(&vec![0x5a5a_5a5au32; v.len()], off);
            codec
                .decode_into(&bytes[off..], WordsMut::U32(&mut out[off..]))
                .unwrap();
            out[off..].iter().map(|&x| x as u64).collect()
        }
        WordBuf::U64(v) => {
            let w = shifted(&v, off);
            codec
                .encode_into(Words::U64(&w[off..]), &mut bytes[off..])
                .unwrap();
            let mut out = shifted(&vec![u64::MAX; v.len()], off);
            codec
                .decode_into(&bytes[off..], WordsMut::U64(&mut out[off..]))
                .unwrap();
            out[off..].to_vec()
        }
    };
    assert_eq!(bytes[off..], want[..], "encode_into {what}");
    let data = match padding {
        "first_byte" => &want[1..],
        "last_byte" => &want[..want.len() - 1],
        _ => &want[..],
    };
    assert_eq!(
        decoded,
        reference_decode(id, f, l, data, comps.len()),
        "decode_into {what}"
    );
    let _ = elements;
}

/// Lengths around the vector steps (64 one-byte, 32 two-byte and 16 four-byte codes, a
/// stream of up to 64 bytes per step) and one long enough for many steps.
const LENGTHS: [usize; 12] = [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129];

/// Every data type, every field width its components allow (and several first bits), each
/// padding encoding, lengths that are not multiples of any vector step, unaligned starts:
/// every instruction-set level gives the reference's bytes and words.
#[test]
fn every_width_at_every_isa_level() {
    let mut checks = 0usize;
    for level in Isa::available() {
        with_max_isa(level, || {
            for &id in DTypeId::ALL {
                let (n, _) = layout(id);
                let per = id.words_per_element();
                let word = id.word_bits();
                let wmask = if word == 64 {
                    u64::MAX
                } else {
                    (1u64 << word) - 1
                };
                let mut x = 0x2545_f491_4f6c_dd1du64 ^ n as u64;
                let pool: Vec<u64> = (0..(1100 * per))
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x & wmask
                    })
                    .collect();
                for b in 1..=n.min(32) {
                    let mut firsts = vec![0, n - b, (n - b) / 2];
                    firsts.dedup();
                    for f in firsts {
                        let (first, last) = (Some(f), Some(f + b - 1));
                        for (i, padding) in PADDINGS.into_iter().enumerate() {
                            let lengths = LENGTHS.into_iter().chain([1000 + b as usize + i]);
                            for len in lengths {
                                let comps = &pool[..len * per];
                                let off = (len + b as usize) % 4;
                                check_unaligned(id, padding, first, last, comps, off, level);
                                checks += 1;
                            }
                        }
                    }
                }
            }
        });
    }
    assert!(checks > 1000, "{checks} checks");
}

/// `decode_into` an output slice that starts `off` words past a 64-byte boundary, in a
/// buffer whose other words stay as they were: the words decoded and the canaries around.
fn decode_at<T: Copy + Into<u64>>(
    codec: &PackBits,
    bytes: &[u8],
    len: usize,
    off: usize,
    canary: T,
    wrap: fn(&mut [T]) -> WordsMut<'_>,
) -> Vec<u64> {
    let size = size_of::<T>();
    let mut store = vec![canary; len + 3 * 64 / size];
    let start = store.as_ptr().align_offset(64) + off;
    codec
        .decode_into(bytes, wrap(&mut store[start..start + len]))
        .unwrap();
    let around = store[..start].iter().chain(&store[start + len..]);
    assert!(
        around.map(|&x| x.into()).all(|x| x == canary.into()),
        "a canary was written"
    );
    store[start..start + len]
        .iter()
        .map(|&x| x.into())
        .collect()
}

/// Decoding starts its vector stores on a cache line by decoding the words before it
/// first: an output slice at every word of a 64-byte line, at every level, for fields that
/// start on a whole byte of the stream there (`off * b` a multiple of 8) and those that do
/// not, with and without sign extension and a first bit.
#[test]
fn decode_into_every_start_within_a_cache_line() {
    let cases: [(DTypeId, u32, u32); 16] = [
        (DTypeId::UInt8, 0, 0),
        (DTypeId::UInt2, 0, 1),
        (DTypeId::UInt4, 0, 3),
        (DTypeId::Int4, 0, 3),
        (DTypeId::Float4E2M1Fn, 0, 3),
        (DTypeId::Float6E2M3Fn, 0, 5),
        (DTypeId::UInt8, 0, 2),
        (DTypeId::UInt8, 2, 6),
        (DTypeId::Int8, 1, 4),
        (DTypeId::UInt8, 0, 7),
        (DTypeId::Int8, 0, 6),
        (DTypeId::UInt16, 0, 11),
        (DTypeId::Int16, 2, 9),
        (DTypeId::UInt16, 3, 3),
        (DTypeId::UInt32, 0, 11),
        (DTypeId::Int32, 3, 19),
    ];
    let mut checks = 0usize;
    for level in Isa::available() {
        with_max_isa(level, || {
            for (id, f, l) in cases {
                let word = id.word_bits();
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(f + 64 * l);
                let len = 4 * 512 / word as usize + 37;
                let comps: Vec<u64> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x & ((1u64 << word) - 1)
                    })
                    .collect();
                let codec = PackBits::new(id, Some(&config("none", Some(f), Some(l)))).unwrap();
                let bytes = reference_encode(id, "none", f, l, &comps);
                let want = reference_decode(id, f, l, &bytes, len);
                for off in 0..512 / word as usize {
                    let got = match word {
                        8 => decode_at(&codec, &bytes, len, off, 0xa5u8, |w| WordsMut::U8(w)),
                        16 => decode_at(&codec, &bytes, len, off, 0xa5a5u16, |w| WordsMut::U16(w)),
                        _ => decode_at(&codec, &bytes, len, off, 0xa5a5_a5a5u32, |w| {
                            WordsMut::U32(w)
                        }),
                    };
                    assert_eq!(
                        got, want,
                        "{id} bits {f}..={l}, {off} words past a line, {level:?}"
                    );
                    checks += 1;
                }
            }
        });
    }
    assert!(checks >= 16 * 16, "{checks} checks");
}

fn small_types() -> Vec<DTypeId> {
    DTypeId::ALL
        .iter()
        .copied()
        .filter(|&id| layout(id).0 <= 8)
        .collect()
}

#[test]
fn every_code_of_every_small_type_at_every_tail() {
    for id in small_types() {
        let (n, _) = layout(id);
        let codes = 1u64 << n;
        let per = id.words_per_element();
        // Every code (complex: every code in both components, every pair for sub-byte
        // components), then every length 0..=70 from several offsets into the list.
        let all: Vec<u64> = if per == 2 && n < 8 {
            (0..codes * codes)
                .flat_map(|p| [p % codes, p / codes])
                .collect()
        } else if per == 2 {
            (0..codes).flat_map(|c| [c, codes - 1 - c]).collect()
        } else {
            (0..codes).collect()
        };
        for padding in PADDINGS {
            check(id, padding, None, None, &all);
            for len in 0..=70usize {
                for start in [0usize, 3, 17] {
                    let comps: Vec<u64> = (0..len * per)
                        .map(|i| all[(start * per + i) % all.len()])
                        .collect();
                    check(id, padding, None, None, &comps);
                }
            }
        }
    }
}

#[test]
fn every_bit_range_of_small_types() {
    for id in small_types() {
        let (n, _) = layout(id);
        let per = id.words_per_element();
        let all: Vec<u64> = (0..1u64 << n).collect();
        for f in 0..n {
            for l in f..n {
                for padding in PADDINGS {
                    for len in [0usize, 1, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 70] {
                        let comps: Vec<u64> = (0..len * per)
                            .map(|i| all[(i * 37 + len) % all.len()])
                            .collect();
                        check(id, padding, Some(f), Some(l), &comps);
                    }
                    check(id, padding, Some(f), Some(l), &all[..all.len() / per * per]);
                }
            }
        }
    }
}

#[test]
fn every_bit_range_of_uint16_and_int16() {
    // Values: every 16-bit code hit by a stride (all sign and top-bit patterns of every
    // range), and short arrays for the tails.
    let values: Vec<u64> = (0..1031u64).map(|i| (i * 0x9e37) & 0xffff).collect();
    for id in [DTypeId::UInt16, DTypeId::Int16] {
        for f in 0..16 {
            for l in f..16 {
                for padding in PADDINGS {
                    check(id, padding, Some(f), Some(l), &values);
                    for len in 0..=9 {
                        check(id, padding, Some(f), Some(l), &values[100..100 + len]);
                    }
                }
            }
        }
    }
}

/// Every bit range of the two- and four-byte integers at every instruction-set level, from
/// unaligned starts, each padding encoding in turn, over lengths of several vector steps
/// with a tail inside one: the wide-field kernels (codes merged in pairs to encode, cut by
/// multishift to decode) and the general ones they leave some widths to, against the
/// reference.
#[test]
fn every_bit_range_of_wide_words_at_every_isa_level() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let pool: Vec<u64> = (0..420)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    let mut checks = 0usize;
    for level in Isa::available() {
        with_max_isa(level, || {
            for id in [
                DTypeId::UInt16,
                DTypeId::Int16,
                DTypeId::UInt32,
                DTypeId::Int32,
            ] {
                let (n, _) = layout(id);
                let comps: Vec<u64> = pool.iter().map(|&v| v & (u64::MAX >> (64 - n))).collect();
                for f in 0..n {
                    for l in f..n {
                        let padding = PADDINGS[(f + l) as usize % 3];
                        let len = 97 + ((7 * f + 13 * l) % 300) as usize;
                        let off = ((f + l) % 4) as usize;
                        check_unaligned(id, padding, Some(f), Some(l), &comps[..len], off, level);
                        checks += 1;
                    }
                }
            }
        });
    }
    assert!(checks >= 2 * (136 + 528), "{checks} checks");
}

#[test]
fn int16_sign_extension_by_hand() {
    // -1, -2048, 2047 and -3 as 12-bit codes (bits 0..=11).
    let codec = PackBits::new(DTypeId::Int16, Some(&json!({"last_bit": 11}))).unwrap();
    let words = [0xffffu16, 0xf800, 0x07ff, 0xfffd];
    let bytes = codec.encode(Words::U16(&words)).unwrap();
    assert_eq!(bytes, [0xff, 0x0f, 0x80, 0xff, 0xd7, 0xff]);
    assert_eq!(
        codec.decode(&bytes, 4).unwrap(),
        WordBuf::U16(words.to_vec())
    );
    // Bits 4..=7: -1 << 4 comes back as 0xfff0 (sign-extended to 16 bits).
    let codec = PackBits::new(
        DTypeId::Int16,
        Some(&json!({"first_bit": 4, "last_bit": 7})),
    )
    .unwrap();
    let bytes = codec.encode(Words::U16(&[0xfff0, 0x0070])).unwrap();
    assert_eq!(bytes, [0x7f]);
    assert_eq!(
        codec.decode(&bytes, 2).unwrap(),
        WordBuf::U16(vec![0xfff0, 0x0070])
    );
    // uint16 zero-extends.
    let codec = PackBits::new(
        DTypeId::UInt16,
        Some(&json!({"first_bit": 4, "last_bit": 7})),
    )
    .unwrap();
    assert_eq!(
        codec.decode(&[0x7f], 2).unwrap(),
        WordBuf::U16(vec![0xf0, 0x70])
    );
}

#[test]
fn int4_and_float4_pack_two_per_byte() {
    let codec = PackBits::new(DTypeId::Int4, None).unwrap();
    // -1, 2, -8 (codes 0xf, 0x2, 0x8), upper bits ignored on encode.
    let bytes = codec.encode(Words::U8(&[0xff, 0x02, 0x08])).unwrap();
    assert_eq!(bytes, [0x2f, 0x08]);
    assert_eq!(
        codec.decode(&bytes, 3).unwrap(),
        WordBuf::U8(vec![0x0f, 0x02, 0x08])
    );
    let codec = PackBits::new(
        DTypeId::Float4E2M1Fn,
        Some(&json!({"padding_encoding": "last_byte"})),
    )
    .unwrap();
    assert_eq!(
        codec.encode(Words::U8(&[1, 2, 3])).unwrap(),
        [0x21, 0x03, 4]
    );
    let codec = PackBits::new(
        DTypeId::ComplexFloat6E2M3Fn,
        Some(&json!({"padding_encoding": "first_byte"})),
    )
    .unwrap();
    assert_eq!(codec.bits_per_element(), 12);
    assert_eq!(
        codec.encode(Words::U8(&[0x3f, 0x01])).unwrap(),
        [4, 0x7f, 0x00]
    );
}

fn comps_strategy() -> impl Strategy<Value = (DTypeId, Option<u32>, Option<u32>, usize, Vec<u64>)> {
    (
        0..DTypeId::ALL.len(),
        any::<u32>(),
        any::<u32>(),
        any::<bool>(),
        0usize..300,
    )
        .prop_flat_map(|(t, a, c, given, len)| {
            let id = DTypeId::ALL[t];
            let (n, _) = layout(id);
            let (f, l) = if given {
                let (x, y) = (a % n, c % n);
                (Some(x.min(y)), Some(x.max(y)))
            } else {
                (None, None)
            };
            let per = id.words_per_element();
            let word = id.word_bits();
            let mask = if word == 64 {
                u64::MAX
            } else {
                (1u64 << word) - 1
            };
            (
                Just(id),
                Just(f),
                Just(l),
                0usize..3,
                proptest::collection::vec(any::<u64>().prop_map(move |x| x & mask), len * per),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The kernels give the reference's bytes and words on any type (32/64-bit and complex
    /// included), range and length; upper bits of sub-byte words are ignored.
    #[test]
    fn kernels_match_the_reference((id, f, l, p, comps) in comps_strategy(), off in 0usize..4) {
        for level in Isa::available() {
            with_max_isa(level, || {
                check(id, PADDINGS[p], f, l, &comps);
                check_unaligned(id, PADDINGS[p], f, l, &comps, off, level);
            });
        }
    }

    /// Decoding arbitrary bytes of the right length gives the reference's words.
    #[test]
    fn decode_of_any_bytes_matches_the_reference(
        t in 0..DTypeId::ALL.len(), a in any::<u32>(), c in any::<u32>(),
        elements in 0usize..200, seed in any::<u64>()
    ) {
        let id = DTypeId::ALL[t];
        let (n, _) = layout(id);
        let (f, l) = ((a % n).min(c % n), (a % n).max(c % n));
        let codec = PackBits::new(id, Some(&config("none", Some(f), Some(l)))).unwrap();
        let len = codec.encoded_len(elements).unwrap();
        let mut x = seed | 1;
        let bytes: Vec<u8> = (0..len).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect();
        let m = elements * id.words_per_element();
        for level in Isa::available() {
            prop_assert_eq!(
                to_u64(&with_max_isa(level, || codec.decode(&bytes, elements)).unwrap()),
                reference_decode(id, f, l, &bytes, m),
                "{:?}", level
            );
        }
    }
}

fn field_of(e: MetadataError) -> (&'static str, &'static str, String) {
    match e {
        MetadataError::Field {
            codec,
            field,
            reason,
        } => (codec, field, reason),
        other => panic!("expected a Field error, got {other:?}"),
    }
}

#[test]
fn configuration_errors_name_the_field_and_the_fix() {
    let bad = |id: DTypeId, c: Value| field_of(PackBits::new(id, Some(&c)).unwrap_err());
    let (codec, field, reason) = bad(DTypeId::UInt16, json!({"first_bit": 5, "last_bit": 4}));
    assert_eq!((codec, field), ("packbits", "last_bit"));
    assert!(reason.contains("less than first_bit 5"), "{reason}");
    let (_, field, reason) = bad(DTypeId::UInt8, json!({"last_bit": 8}));
    assert_eq!(field, "last_bit");
    assert!(reason.contains("beyond the 8 bits of uint8"), "{reason}");
    let (_, field, reason) = bad(DTypeId::Int4, json!({"first_bit": 4}));
    assert_eq!(field, "first_bit");
    assert!(reason.contains("beyond the 4 bits of int4"), "{reason}");
    let (_, field, reason) = bad(DTypeId::UInt8, json!({"start_bit": 1}));
    assert_eq!(field, "configuration");
    assert!(reason.contains("unknown key \"start_bit\"") && reason.contains("first_bit"));
    let (_, field, reason) = bad(DTypeId::UInt8, json!({"padding_encoding": "start_byte"}));
    assert_eq!(field, "padding_encoding");
    assert!(reason.contains("\"first_byte\""), "{reason}");
    let (_, _, reason) = bad(DTypeId::UInt8, json!({"padding_encoding": "last-byte"}));
    assert!(reason.contains("did you mean \"last_byte\""), "{reason}");
    assert!(
        reason.contains("unknown padding encoding \"last-byte\""),
        "{reason}"
    );
    let (_, field, _) = bad(DTypeId::UInt8, json!({"first_bit": -1}));
    assert_eq!(field, "first_bit");
    let (_, field, _) = bad(DTypeId::UInt8, json!({"last_bit": 2.0}));
    assert_eq!(field, "last_bit");
    let (_, field, _) = bad(DTypeId::UInt8, json!([1]));
    assert_eq!(field, "configuration");
    // null bit indices are the defaults.
    let c = PackBits::new(
        DTypeId::Int8,
        Some(&json!({"first_bit": null, "last_bit": null})),
    )
    .unwrap();
    assert_eq!((c.first_bit(), c.last_bit()), (0, 7));
}

#[test]
fn data_errors_are_typed() {
    let codec = PackBits::new(
        DTypeId::UInt4,
        Some(&json!({"padding_encoding": "first_byte"})),
    )
    .unwrap();
    // 3 uint4 elements: 2 bytes + the padding byte (4 padding bits).
    assert_eq!(codec.encoded_len(3).unwrap(), 3);
    let e = codec.decode(&[4, 0x21], 3).unwrap_err();
    assert!(
        matches!(
            e,
            PackBitsError::ByteCount {
                expected: 3,
                found: 2,
                elements: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("expected 3 bytes"), "{e}");
    let e = codec.decode(&[0, 0x21, 0x03], 3).unwrap_err();
    assert!(
        matches!(
            e,
            PackBitsError::PaddingByte {
                index: 0,
                expected: 4,
                found: 0,
                ..
            }
        ),
        "{e:?}"
    );
    let e = codec.encode(Words::U16(&[1, 2])).unwrap_err();
    assert!(matches!(e, PackBitsError::Words { .. }), "{e:?}");
    let complex = PackBits::new(DTypeId::ComplexFloat4E2M1Fn, None).unwrap();
    assert!(matches!(
        complex.encode(Words::U8(&[1, 2, 3])),
        Err(PackBitsError::Words { .. })
    ));
    assert!(matches!(
        complex.encoded_len(usize::MAX),
        Err(PackBitsError::TooLarge { .. })
    ));
}

#[test]
fn configuration_is_written_back() {
    let c = PackBits::new(DTypeId::UInt16, Some(&json!({"last_bit": 11}))).unwrap();
    assert_eq!(
        c.to_metadata(),
        json!({"name": "packbits", "configuration": {"padding_encoding": "none", "last_bit": 11}})
    );
}

fn meta(
    dtype: &str,
    fill: Value,
    shape: [u64; 2],
    chunks: [u64; 2],
    codecs: Value,
) -> ArrayMetadata {
    ArrayMetadata::from_json(&json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs,
    }))
    .unwrap()
}

#[test]
fn chunk_codec_reads_and_writes_packbits_chunks() {
    // float64 -> scale_offset -> cast_value uint16 -> packbits bits 0..=11; 3x5 array in
    // 2x4 chunks, so edge chunks padded with the encoded fill value (NaN -> 4095).
    let m = meta(
        "float64",
        json!("NaN"),
        [3, 5],
        [2, 4],
        json!([
            {"name": "scale_offset", "configuration": {"scale": 10}},
            {"name": "cast_value", "configuration": {"data_type": "uint16", "out_of_range": "clamp",
                "scalar_map": {"encode": [["NaN", 4095]], "decode": [[4095, "NaN"]]}}},
            {"name": "packbits", "configuration": {"padding_encoding": "last_byte", "last_bit": 11}},
        ]),
    );
    let chunks = ChunkCodec::new(&m).unwrap();
    assert_eq!(chunks.packbits().map(|p| p.bits_per_element()), Some(12));
    let region = DynArray::from_le_bytes(DTypeId::Float64, &[1, 1], &1.5f64.to_le_bytes()).unwrap();
    let bytes = chunks.encode_chunk(&[1, 1], &region).unwrap();
    // 8 codes of 12 bits (15, then seven 4095) = 12 bytes, then the padding byte 0.
    let want = reference_encode(
        DTypeId::UInt16,
        "last_byte",
        0,
        11,
        &[15, 4095, 4095, 4095, 4095, 4095, 4095, 4095],
    );
    assert_eq!(bytes, want);
    assert!(
        chunks
            .decode_chunk(&[1, 1], &bytes)
            .unwrap()
            .same_as(&region)
    );
    // Full chunk, both ways.
    let full: Vec<u8> = (0..8)
        .flat_map(|i| (i as f64 * 0.5).to_le_bytes())
        .collect();
    let full = DynArray::from_le_bytes(DTypeId::Float64, &[2, 4], &full).unwrap();
    let bytes = chunks.encode_chunk(&[0, 0], &full).unwrap();
    assert_eq!(bytes.len(), 13);
    assert!(chunks.decode_chunk(&[0, 0], &bytes).unwrap().same_as(&full));
    // A wrong byte count or padding byte is a chunk error naming the chunk and the fix.
    let e = chunks.decode_chunk(&[0, 0], &bytes[..12]).unwrap_err();
    assert!(
        matches!(&e, ZarrError::Chunk { chunk, reason } if chunk == &[0, 0] && reason.contains("expected 13 bytes")),
        "{e}"
    );
    let mut bad = bytes.clone();
    bad[12] = 4;
    assert!(
        chunks
            .decode_chunk(&[0, 0], &bad)
            .unwrap_err()
            .to_string()
            .contains("padding")
    );
}

#[test]
fn chunk_codec_packs_int4_edges() {
    let m = meta(
        "int4",
        json!(-3),
        [3, 3],
        [2, 2],
        json!([{"name": "packbits"}]),
    );
    let chunks = ChunkCodec::new(&m).unwrap();
    let region = DynArray::from_le_bytes(DTypeId::Int4, &[1, 2], &[0x07, 0x08]).unwrap();
    // The region's row, then a row of fill (-3 = 0xd).
    let bytes = chunks.encode_chunk(&[1, 0], &region).unwrap();
    assert_eq!(bytes, [0x87, 0xdd]);
    assert!(
        chunks
            .decode_chunk(&[1, 0], &bytes)
            .unwrap()
            .same_as(&region)
    );
    // A bad configuration is a metadata error.
    let m = meta(
        "int4",
        json!(0),
        [3, 3],
        [2, 2],
        json!([{"name": "packbits", "configuration": {"last_bit": 4}}]),
    );
    assert!(matches!(
        ChunkCodec::new(&m),
        Err(ZarrError::Metadata(MetadataError::Field {
            codec: "packbits",
            field: "last_bit",
            ..
        }))
    ));
}

#[test]
fn arrays_both_ways() {
    let codec = PackBits::new(DTypeId::UInt2, None).unwrap();
    let a = DynArray::from_le_bytes(DTypeId::UInt2, &[2, 3], &[0, 1, 2, 3, 2, 1]).unwrap();
    let bytes = codec.encode_array(&a).unwrap();
    assert_eq!(bytes, [0b11_10_01_00, 0b01_10]);
    assert!(codec.decode_array(&bytes, &[2, 3]).unwrap().same_as(&a));
    let other = DynArray::from_le_bytes(DTypeId::UInt8, &[1], &[0]).unwrap();
    assert!(codec.encode_array(&other).is_err());
}

/// A large decode of four-byte words (an output of 16 MiB or more, which the AVX-512
/// kernels store by whole streamed lines, each put together from two vectors) gives the
/// reference's words at every level, starting at a line, at a whole byte of the stream
/// within a line, and where neither holds, for fields of 25 bits with a first bit and sign
/// extension, 23 bits, and 31 bits (a kernel of its own).
#[test]
fn large_decodes_of_wide_words_at_every_isa_level() {
    let cases: [(DTypeId, u32, u32); 3] = [
        (DTypeId::Int32, 3, 27),
        (DTypeId::UInt32, 0, 22),
        (DTypeId::Int32, 0, 30),
    ];
    let len = (16 << 20) / 4 + 77;
    for (id, f, l) in cases {
        let mut x = 0x2545_f491_4f6c_dd1du64 ^ u64::from(l);
        let comps: Vec<u64> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x & 0xffff_ffff
            })
            .collect();
        let codec = PackBits::new(id, Some(&config("none", Some(f), Some(l)))).unwrap();
        let bytes = reference_encode(id, "none", f, l, &comps);
        let want = reference_decode(id, f, l, &bytes, len);
        for level in Isa::available() {
            for off in [0, 3, 8] {
                let got = with_max_isa(level, || {
                    decode_at(&codec, &bytes, len, off, 0xa5a5_a5a5u32, |w| {
                        WordsMut::U32(w)
                    })
                });
                let bad = got.iter().zip(&want).position(|(g, w)| g != w);
                assert!(
                    bad.is_none(),
                    "{id} bits {f}..={l}, {off} words past a line, {level:?}: first wrong word {bad:?}"
                );
            }
        }
    }
}
