//! One packbits case, run once: for callgrind's instruction counts per element.
//!
//! ```text
//! cargo build --release --example packbits_count
//! valgrind --tool=callgrind target/release/examples/packbits_count uint4 encode 1000000
//! ```
//!
//! Cases: `uint4`, `int4`, `float4_e2m1fn`, `uint2`, `float6_e2m3fn`, `uint16:12` (bits
//! 0..=11 of uint16), each `encode` or `decode`, on `N` elements of pseudo-random codes.
//! Run it at two element counts and divide the difference in instructions by the
//! difference in elements: the setup cancels. `ZQUANT_MAX_ISA` picks the level.

use zquant::DTypeId;
use zquant::dtype::WordBuf;
use zquant::zarr::PackBits;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, dir, n] = &args[..] else {
        return Err("usage: packbits_count CASE encode|decode N".into());
    };
    let n: usize = n.parse()?;
    let (dtype, config, bits) = match case.as_str() {
        "uint4" => (DTypeId::UInt4, serde_json::json!({}), 4),
        "int4" => (DTypeId::Int4, serde_json::json!({}), 4),
        "float4_e2m1fn" => (DTypeId::Float4E2M1Fn, serde_json::json!({}), 4),
        "uint2" => (DTypeId::UInt2, serde_json::json!({}), 2),
        "float6_e2m3fn" => (DTypeId::Float6E2M3Fn, serde_json::json!({}), 6),
        "uint16:12" => (DTypeId::UInt16, serde_json::json!({"last_bit": 11}), 12),
        _ => return Err(format!("unknown case {case}").into()),
    };
    let codec = PackBits::new(dtype, Some(&config))?;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let codes: Vec<u64> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & ((1 << bits) - 1)
        })
        .collect();
    let mut words = match dtype.word_bits() {
        8 => WordBuf::U8(codes.iter().map(|&c| c as u8).collect()),
        _ => WordBuf::U16(codes.iter().map(|&c| c as u16).collect()),
    };
    let mut bytes = vec![0u8; codec.encoded_len(n)?];
    match dir.as_str() {
        "encode" => codec.encode_into(words.as_words(), &mut bytes)?,
        "decode" => codec.decode_into(&bytes, words.as_words_mut())?,
        _ => return Err("encode or decode".into()),
    }
    std::hint::black_box((&bytes, &words));
    Ok(())
}
