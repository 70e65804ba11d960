//! The `packbits` array->bytes codec: each element's components packed into `b` bits, the
//! bit sequence padded to whole bytes.
//!
//! ### Specification
//! - zarr-extensions `codecs/packbits/README.md` (verbatim in `shared/specs/codecs/packbits`;
//!   <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits>)
//!
//! ### Codec `name` Aliases (Zarr V3)
//! - `packbits`
//!
//! ### Codec `configuration` Example
//! ```
//! # let json = serde_json::json!(
//! {
//!     "padding_encoding": "first_byte",
//!     "first_bit": 0,
//!     "last_bit": 11
//! }
//! # );
//! let codec = zquant::zarr::PackBits::new(zquant::DTypeId::UInt16, Some(&json))?;
//! assert_eq!(codec.bits_per_element(), 12);
//! // Two 12-bit codes in three bytes, after the padding byte (0 bits of padding).
//! let bytes = codec.encode(zquant::dtype::Words::U16(&[0xabc, 0x123]))?;
//! assert_eq!(bytes, [0, 0xbc, 0x3a, 0x12]);
//! assert_eq!(codec.decode(&bytes, 2)?, zquant::dtype::WordBuf::U16(vec![0xabc, 0x123]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Each component (`N` bits: the data type's code width, 4 for `int4`, 16 for `uint16`; a
//! complex type's real and imaginary parts each) gives its bits `first_bit..=last_bit`, so
//! `b = last_bit - first_bit + 1` bits; element `i` holds bits `[i*k, (i+1)*k)` of the
//! sequence (`k = b` times the number of components) and byte `i` bits `[8i, 8i+8)`, the
//! least significant bit first. Decoding shifts the `b` bits back to `first_bit` and
//! sign-extends them to `N` bits for the signed integer types (`int2` … `int64`, and
//! `numpy.datetime64`/`numpy.timedelta64` as int64, as zarrs does), zero-extends them for
//! every other type. Every zquant data type is accepted: the spec's list, and also
//! `float16`, the `float8` family, their complex types, `complex64`/`complex128` and the
//! time types, which zarrs also packs (docs/spec-readings.md, "packbits").
//!
//! The kernels pack words, never single bits: one-byte types through shifts and masks on
//! eight elements at a time in a `u64` (16 nibbles of `uint4` into one `u64`), wider types
//! through a `u64` bit accumulator that writes whole words, and whole-word codes (`b == N`,
//! a multiple of 8) as the little-endian copy the `bytes` codec writes.

use serde_json::{Map, Value};

use crate::dtype::{DTypeId, Kind};
use crate::error::{MetadataError, unknown_key};
use crate::number::storage::{Word, WordBuf, Words, WordsMut};

/// The Zarr name.
pub const NAME: &str = "packbits";

/// The configuration keys (the README's names; schema.json's `start_bit`/`end_bit` are
/// not read, see docs/spec-readings.md).
const KEYS: [&str; 3] = ["padding_encoding", "first_bit", "last_bit"];

/// How the number of padding bits is stored (`padding_encoding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PaddingEncoding {
    /// `"none"` (the default): not stored.
    #[default]
    None,
    /// `"first_byte"`: one byte before the packed bits.
    FirstByte,
    /// `"last_byte"`: one byte after the packed bits.
    LastByte,
}

impl PaddingEncoding {
    /// The configuration value.
    pub fn name(self) -> &'static str {
        match self {
            PaddingEncoding::None => "none",
            PaddingEncoding::FirstByte => "first_byte",
            PaddingEncoding::LastByte => "last_byte",
        }
    }

    fn extra(self) -> usize {
        match self {
            PaddingEncoding::None => 0,
            _ => 1,
        }
    }
}

/// Packed bytes that do not match the codec's configuration, or words of the wrong type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PackBitsError {
    /// The byte count is not the one `elements` elements pack into.
    #[error(
        "packbits: {found} bytes do not hold {elements} elements of {dtype} at {bits} bits \
         each{padding}: expected {expected} bytes (check the chunk shape, data type and \
         first_bit/last_bit the bytes were written with)"
    )]
    ByteCount {
        /// The data type.
        dtype: DTypeId,
        /// Elements to decode.
        elements: usize,
        /// Bits per element (`k`).
        bits: u32,
        /// `", plus the padding byte"` when `padding_encoding` stores one.
        padding: &'static str,
        /// The expected byte count.
        expected: usize,
        /// The byte count received.
        found: usize,
    },
    /// The stored padding byte does not count the padding bits of `elements` elements.
    #[error(
        "packbits: padding_encoding {encoding:?}: byte {index} holds {found}, but {elements} \
         elements of {bits} bits leave {expected} padding bits (the bytes were written for \
         another element count, or with another padding_encoding)"
    )]
    PaddingByte {
        /// `"first_byte"` or `"last_byte"`.
        encoding: &'static str,
        /// The padding byte's index in the bytes.
        index: usize,
        /// Elements to decode.
        elements: usize,
        /// Bits per element (`k`).
        bits: u32,
        /// The padding bit count.
        expected: u8,
        /// The byte found.
        found: u8,
    },
    /// The words to encode are not those of whole elements of the codec's data type.
    #[error(
        "packbits: {found} words of {found_bits} bits are not elements of {dtype} ({per} \
         words of {bits} bits each)"
    )]
    Words {
        /// The data type.
        dtype: DTypeId,
        /// Words received.
        found: usize,
        /// Their width.
        found_bits: u32,
        /// Words per element.
        per: usize,
        /// The type's word width.
        bits: u32,
    },
    /// The packed size overflows `usize`.
    #[error("packbits: {elements} elements of {bits} bits overflow the address space")]
    TooLarge {
        /// Elements.
        elements: usize,
        /// Bits per element.
        bits: u32,
    },
}

/// The `packbits` codec bound to a data type: storage words to packed bytes and back.
///
/// Built from the codec's `configuration` ([`PackBits::new`]); [`ChunkCodec`] uses it when
/// an array's array->bytes codec is `packbits`.
///
/// [`ChunkCodec`]: crate::zarr::ChunkCodec
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackBits {
    dtype: DTypeId,
    padding: PaddingEncoding,
    /// As configured (written back by [`PackBits::configuration`]).
    first_given: Option<u32>,
    last_given: Option<u32>,
    plan: Plan,
}

/// What the kernels need: loop invariants only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    /// `first_bit`.
    f: u32,
    /// Bits per component, `1..=64`.
    b: u32,
    /// `N`, the component's code width.
    n: u32,
    /// Components per element (1 or 2).
    components: usize,
    /// Sign-extend on decode.
    signed: bool,
}

fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field,
        reason: reason.into(),
    }
}

/// The configuration's three values, unbound: what can be checked without the data type.
type Parsed = (PaddingEncoding, Option<u32>, Option<u32>);

fn parse_bit(v: &Value, name: &'static str) -> Result<Option<u32>, MetadataError> {
    match v {
        Value::Null => Ok(None),
        _ => match v.as_u64() {
            Some(x) if x < 64 => Ok(Some(x as u32)),
            Some(x) => Err(field(
                name,
                format!("{x} is not a bit of any data type's component (at most 63)"),
            )),
            None => Err(field(
                name,
                format!("must be a non-negative integer or null, got {v}"),
            )),
        },
    }
}

/// Check a `configuration` (absent, or an object) without a data type.
///
/// # Errors
/// Not an object; an unknown key; a `padding_encoding` other than `"none"`,
/// `"first_byte"`, `"last_byte"`; a bit index that is not a non-negative integer below 64
/// or `null`; `last_bit` less than `first_bit`.
pub fn parse_configuration(config: Option<&Value>) -> Result<Parsed, MetadataError> {
    let empty = Map::new();
    let m = match config {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(field(
                "configuration",
                format!("must be an object, got {other}"),
            ));
        }
    };
    for k in m.keys() {
        if !KEYS.contains(&k.as_str()) {
            let hint = match k.as_str() {
                "start_bit" | "end_bit" => {
                    " (schema.json's name: the README, zarrs and zquant write `first_bit` \
                     and `last_bit`)"
                }
                _ => "",
            };
            return Err(field("configuration", unknown_key(k, &KEYS) + hint));
        }
    }
    let padding = match m.get("padding_encoding") {
        None => PaddingEncoding::None,
        Some(Value::String(s)) => match s.as_str() {
            "none" => PaddingEncoding::None,
            "first_byte" => PaddingEncoding::FirstByte,
            "last_byte" => PaddingEncoding::LastByte,
            "start_byte" | "end_byte" => {
                return Err(field(
                    "padding_encoding",
                    format!(
                        "{s:?} is schema.json's name: the README, zarrs and zquant write \
                         \"first_byte\" and \"last_byte\""
                    ),
                ));
            }
            _ => {
                return Err(field(
                    "padding_encoding",
                    format!(
                        "unknown padding encoding {s:?}: {}",
                        crate::error::choices(s, &["none", "first_byte", "last_byte"])
                    ),
                ));
            }
        },
        Some(other) => {
            return Err(field(
                "padding_encoding",
                format!("must be \"none\", \"first_byte\" or \"last_byte\", got {other}"),
            ));
        }
    };
    let first = m
        .get("first_bit")
        .map_or(Ok(None), |v| parse_bit(v, "first_bit"))?;
    let last = m
        .get("last_bit")
        .map_or(Ok(None), |v| parse_bit(v, "last_bit"))?;
    if let (Some(f), Some(l)) = (first, last) {
        check_order(f, l)?;
    }
    Ok((padding, first, last))
}

/// The spec's one rule between the two bits: "It is invalid for `last_bit` to be less than
/// `first_bit`".
fn check_order(first: u32, last: u32) -> Result<(), MetadataError> {
    if last < first {
        return Err(field(
            "last_bit",
            format!(
                "{last} is less than first_bit {first} (\"It is invalid for last_bit to be \
                 less than first_bit\"): swap them"
            ),
        ));
    }
    Ok(())
}

/// A component's code width and signedness.
fn component(dtype: DTypeId) -> (u32, bool) {
    match dtype.kind() {
        Kind::Int(l) => (l.bits, l.signed),
        Kind::Float(l) | Kind::Complex(l) => (l.bits(), false),
        Kind::DateTime | Kind::TimeDelta => (64, true),
    }
}

impl PackBits {
    /// The codec for elements of `dtype`, from its `configuration` (absent or an object).
    ///
    /// # Errors
    /// As [`parse_configuration`]; `first_bit` or `last_bit` at or beyond the `N` bits of
    /// the data type's components.
    pub fn new(dtype: DTypeId, configuration: Option<&Value>) -> Result<Self, MetadataError> {
        let (padding, first_given, last_given) = parse_configuration(configuration)?;
        Self::from_parts(dtype, padding, first_given, last_given)
    }

    /// The codec from its configuration values (`None`: the defaults, `0` and `N - 1`).
    ///
    /// # Errors
    /// `last_bit < first_bit`; `first_bit` or `last_bit` at or beyond `N`.
    pub fn from_parts(
        dtype: DTypeId,
        padding: PaddingEncoding,
        first_bit: Option<u32>,
        last_bit: Option<u32>,
    ) -> Result<Self, MetadataError> {
        let (n, signed) = component(dtype);
        let beyond = |name: &'static str, x: u32| {
            field(
                name,
                format!(
                    "{x} is beyond the {n} bits of {dtype}'s components (bits 0 to {}): \
                     lower it",
                    n - 1
                ),
            )
        };
        let f = first_bit.unwrap_or(0);
        let l = last_bit.unwrap_or(n - 1);
        if l >= n {
            return Err(beyond("last_bit", l));
        }
        if f >= n {
            return Err(beyond("first_bit", f));
        }
        check_order(f, l)?;
        Ok(PackBits {
            dtype,
            padding,
            first_given: first_bit,
            last_given: last_bit,
            plan: Plan {
                f,
                b: l - f + 1,
                n,
                components: dtype.words_per_element().max(1),
                signed,
            },
        })
    }

    /// The data type.
    pub fn data_type(&self) -> DTypeId {
        self.dtype
    }

    /// `padding_encoding`.
    pub fn padding_encoding(&self) -> PaddingEncoding {
        self.padding
    }

    /// `first_bit` (the default resolved: 0).
    pub fn first_bit(&self) -> u32 {
        self.plan.f
    }

    /// `last_bit` (the default resolved: `N - 1`).
    pub fn last_bit(&self) -> u32 {
        self.plan.f + self.plan.b - 1
    }

    /// `k`: bits per element (`b` per component).
    pub fn bits_per_element(&self) -> u32 {
        self.plan.b * self.plan.components as u32
    }

    /// The configuration object, as given (bit indices only where they were given).
    pub fn configuration(&self) -> Value {
        let mut m = Map::new();
        m.insert("padding_encoding".into(), Value::from(self.padding.name()));
        if let Some(f) = self.first_given {
            m.insert("first_bit".into(), Value::from(f));
        }
        if let Some(l) = self.last_given {
            m.insert("last_bit".into(), Value::from(l));
        }
        Value::Object(m)
    }

    /// The codec object, `{"name": "packbits", "configuration": …}`.
    pub fn to_metadata(&self) -> Value {
        serde_json::json!({"name": NAME, "configuration": self.configuration()})
    }

    /// The packed bits of `elements` elements, and the padding bit count.
    fn packed(&self, elements: usize) -> Result<(usize, u8), PackBitsError> {
        let k = self.bits_per_element();
        let bits = elements
            .checked_mul(k as usize)
            .ok_or(PackBitsError::TooLarge { elements, bits: k })?;
        Ok((bits.div_ceil(8), ((8 - bits % 8) % 8) as u8))
    }

    /// The encoded byte count of `elements` elements (the padding byte included).
    ///
    /// # Errors
    /// A size beyond `usize`.
    pub fn encoded_len(&self, elements: usize) -> Result<usize, PackBitsError> {
        let (bytes, _) = self.packed(elements)?;
        bytes
            .checked_add(self.padding.extra())
            .ok_or(PackBitsError::TooLarge {
                elements,
                bits: self.bits_per_element(),
            })
    }

    /// Encode elements given as storage words in C order (`words_per_element` per element:
    /// a complex element's real then imaginary word). Bits of a word above the data type's
    /// code are ignored.
    ///
    /// # Errors
    /// Words of another width than the data type's, or not whole elements.
    pub fn encode(&self, words: Words<'_>) -> Result<Vec<u8>, PackBitsError> {
        let elements = self.elements_of(words)?;
        let mut out = vec![0u8; self.encoded_len(elements)?];
        self.encode_into(words, &mut out)?;
        Ok(out)
    }

    /// The element count of `words`.
    fn elements_of(&self, words: Words<'_>) -> Result<usize, PackBitsError> {
        let per = self.plan.components;
        if words.bits() != self.dtype.word_bits() || words.len() % per != 0 {
            return Err(PackBitsError::Words {
                dtype: self.dtype,
                found: words.len(),
                found_bits: words.bits(),
                per,
                bits: self.dtype.word_bits(),
            });
        }
        Ok(words.len() / per)
    }

    /// [`PackBits::encode`] into `out`, of exactly [`PackBits::encoded_len`] bytes (every
    /// byte is written).
    ///
    /// # Errors
    /// As [`PackBits::encode`]; an `out` of another length ([`PackBitsError::ByteCount`]).
    pub fn encode_into(&self, words: Words<'_>, out: &mut [u8]) -> Result<(), PackBitsError> {
        let elements = self.elements_of(words)?;
        let (data, pad) = self.packed(elements)?;
        self.check_len(elements, out.len())?;
        let (body, at) = match self.padding {
            PaddingEncoding::None => (&mut out[..], None),
            PaddingEncoding::FirstByte => (&mut out[1..], Some(0)),
            PaddingEncoding::LastByte => (&mut out[..data], Some(data)),
        };
        match words {
            Words::U8(w) => pack(w, self.plan, body),
            Words::U16(w) => pack(w, self.plan, body),
            Words::U32(w) => pack(w, self.plan, body),
            Words::U64(w) => pack(w, self.plan, body),
        }
        if let Some(i) = at {
            out[i] = pad;
        }
        Ok(())
    }

    fn check_len(&self, elements: usize, found: usize) -> Result<(), PackBitsError> {
        let expected = self.encoded_len(elements)?;
        if found == expected {
            return Ok(());
        }
        Err(PackBitsError::ByteCount {
            dtype: self.dtype,
            elements,
            bits: self.bits_per_element(),
            padding: if self.padding.extra() == 1 {
                ", plus the padding byte"
            } else {
                ""
            },
            expected,
            found,
        })
    }

    /// Decode `elements` elements from their packed bytes, to storage words in C order
    /// (the codes zero-extended to the word, signed types sign-extended to `N` bits).
    ///
    /// # Errors
    /// A byte count other than [`PackBits::encoded_len`]; a padding byte that does not
    /// count the padding bits.
    pub fn decode(&self, bytes: &[u8], elements: usize) -> Result<WordBuf, PackBitsError> {
        self.check_len(elements, bytes.len())?;
        // `elements * components` fits: `elements * k` bits did.
        let mut out = WordBuf::zeroed(self.dtype.word_bits(), elements * self.plan.components);
        self.decode_into(bytes, out.as_words_mut())?;
        Ok(out)
    }

    /// [`PackBits::decode`] into `out`: the words of `out.len() / words_per_element`
    /// elements (every word is written).
    ///
    /// # Errors
    /// As [`PackBits::decode`]; words of another width, or not whole elements.
    pub fn decode_into(&self, bytes: &[u8], out: WordsMut<'_>) -> Result<(), PackBitsError> {
        let elements = self.elements_of(out.as_words())?;
        let (data, pad) = self.packed(elements)?;
        self.check_len(elements, bytes.len())?;
        let (body, at) = match self.padding {
            PaddingEncoding::None => (bytes, None),
            PaddingEncoding::FirstByte => (&bytes[1..], Some(0)),
            PaddingEncoding::LastByte => (&bytes[..data], Some(data)),
        };
        if let Some(index) = at {
            if bytes[index] != pad {
                return Err(PackBitsError::PaddingByte {
                    encoding: self.padding.name(),
                    index,
                    elements,
                    bits: self.bits_per_element(),
                    expected: pad,
                    found: bytes[index],
                });
            }
        }
        match out {
            WordsMut::U8(w) => unpack(body, self.plan, w),
            WordsMut::U16(w) => unpack(body, self.plan, w),
            WordsMut::U32(w) => unpack(body, self.plan, w),
            WordsMut::U64(w) => unpack(body, self.plan, w),
        }
        Ok(())
    }

    /// Encode an array (any layout; C order is the packing order).
    ///
    /// # Errors
    /// An array of another data type.
    pub fn encode_array(&self, array: &crate::DynArray) -> Result<Vec<u8>, PackBitsError> {
        let standard = array.to_standard_layout();
        let wrong = |found: usize, found_bits: u32| PackBitsError::Words {
            dtype: self.dtype,
            found,
            found_bits,
            per: self.plan.components,
            bits: self.dtype.word_bits(),
        };
        match standard.words() {
            Some(w) if array.dtype() == self.dtype => self.encode(w),
            Some(w) => Err(wrong(w.len(), w.bits())),
            None => Err(wrong(0, 0)),
        }
    }

    /// Decode an array of `shape` from its packed bytes.
    ///
    /// # Errors
    /// As [`PackBits::decode`]; a shape whose element count overflows.
    pub fn decode_array(
        &self,
        bytes: &[u8],
        shape: &[usize],
    ) -> Result<crate::DynArray, crate::CodecError> {
        let n = crate::pipeline::element_count(shape)?;
        let words = self
            .decode(bytes, n)
            .map_err(|e| crate::CodecError::Array(e.to_string()))?;
        crate::DynArray::from_words(self.dtype, shape, words)
    }
}

/// The low `b` bits (`b` in `1..=64`).
#[inline(always)]
fn low(b: u32) -> u64 {
    u64::MAX >> (64 - b)
}

/// `x` in each byte.
#[inline(always)]
const fn rep8(x: u64) -> u64 {
    x * 0x0101_0101_0101_0101
}

/// Eight one-byte codes (each below `2^b`, `b <= 8`) in the low `8b` bits, code `j` at bit
/// `j*b`.
#[inline(always)]
fn gather8(x: u64, b: u32) -> u64 {
    const M16: u64 = 0x00ff_00ff_00ff_00ff;
    const M32: u64 = 0x0000_ffff_0000_ffff;
    let x = (x & M16) | (((x >> 8) & M16) << b);
    let x = (x & M32) | (((x >> 16) & M32) << (2 * b));
    (x & 0xffff_ffff) | ((x >> 32) << (4 * b))
}

/// The inverse of [`gather8`]: `8b` bits to eight bytes, code `j` in byte `j`.
#[inline(always)]
fn scatter8(x: u64, b: u32) -> u64 {
    let (m1, m2, m4) = (low(b), low(2 * b), low(4 * b));
    let x = (x & m4) | (((x >> (4 * b)) & m4) << 32);
    let r2 = m2 | (m2 << 32);
    let x = (x & r2) | (((x >> (2 * b)) & r2) << 16);
    let r1 = m1 * 0x0001_0001_0001_0001;
    (x & r1) | (((x >> b) & r1) << 8)
}

#[inline(always)]
fn load8(s: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&s[..8]);
    u64::from_le_bytes(a)
}

/// Pack the components `src` into `out` (exactly `ceil(len * b / 8)` bytes).
fn pack<W: Word>(src: &[W], p: Plan, out: &mut [u8]) {
    if p.f == 0 && p.b == p.n && p.b == W::BITS {
        // Whole words: the `bytes` codec's little-endian bytes.
        let size = (W::BITS / 8) as usize;
        for (o, w) in out.chunks_exact_mut(size).zip(src) {
            o.copy_from_slice(&w.to_u64().to_le_bytes()[..size]);
        }
        return;
    }
    let mut done = 0;
    if let Words::U8(s) = W::words(src) {
        // One-byte codes (`f + b <= N <= 8`): eight at a time.
        let o = &mut *out;
        done = crate::arch::vectorized(
            #[inline(always)]
            move || pack_bytes(s, p.f, p.b, o),
        );
    }
    pack_tail(&src[done..], p, &mut out[done * p.b as usize / 8..]);
}

/// [`pack`] of one-byte components, eight at a time: the count done (a multiple of 8).
#[inline(always)]
fn pack_bytes(src: &[u8], f: u32, b: u32, out: &mut [u8]) -> usize {
    let mask = rep8(low(b));
    if f == 0 && b == 4 {
        // 16 nibbles into one u64.
        for (o, i) in out.chunks_exact_mut(8).zip(src.chunks_exact(16)) {
            let lo = gather8(load8(i) & mask, 4);
            let hi = gather8(load8(&i[8..]) & mask, 4);
            o.copy_from_slice(&(lo | hi << 32).to_le_bytes());
        }
        return src.len().min(out.len() * 2) / 16 * 16;
    }
    if f == 0 && b == 2 {
        // 32 two-bit codes into one u64.
        for (o, i) in out.chunks_exact_mut(8).zip(src.chunks_exact(32)) {
            let mut y = 0;
            for q in 0..4 {
                y |= gather8(load8(&i[8 * q..]) & mask, 2) << (16 * q);
            }
            o.copy_from_slice(&y.to_le_bytes());
        }
        return src.len().min(out.len() * 4) / 32 * 32;
    }
    // Any other width: eight codes to `b` bytes, stored as one u64 whose upper bytes the
    // next store overwrites (so the last stores stay 8 bytes inside `out`).
    let step = b as usize;
    let mut g = 0;
    while (g + 1) * 8 <= src.len() && g * step + 8 <= out.len() {
        let y = gather8((load8(&src[g * 8..]) >> f) & mask, b);
        out[g * step..g * step + 8].copy_from_slice(&y.to_le_bytes());
        g += 1;
    }
    g * 8
}

/// [`pack`] through a `u64` bit accumulator: whole words out, any width.
fn pack_tail<W: Word>(src: &[W], p: Plan, out: &mut [u8]) {
    let mask = low(p.b);
    let (mut acc, mut fill, mut pos) = (0u64, 0u32, 0usize);
    for w in src {
        let c = (w.to_u64() >> p.f) & mask;
        acc |= c << fill;
        fill += p.b;
        if fill >= 64 {
            if let Some(o) = out.get_mut(pos..pos + 8) {
                o.copy_from_slice(&acc.to_le_bytes());
            }
            pos += 8;
            fill -= 64;
            // The bits of `c` that did not fit (`c >> 64` is none).
            acc = c.checked_shr(p.b - fill).unwrap_or(0);
        }
    }
    let rest = fill.div_ceil(8) as usize;
    if let Some(o) = out.get_mut(pos..pos + rest) {
        o.copy_from_slice(&acc.to_le_bytes()[..rest]);
    }
}

/// Unpack `out.len()` components from `src` (at least `ceil(len * b / 8)` bytes).
fn unpack<W: Word>(src: &[u8], p: Plan, out: &mut [W]) {
    if p.f == 0 && p.b == p.n && p.b == W::BITS {
        let size = (W::BITS / 8) as usize;
        for (w, i) in out.iter_mut().zip(src.chunks_exact(size)) {
            *w = W::from_u64(crate::number::storage::read_le_bits(i, size));
        }
        return;
    }
    let mut done = 0;
    if let WordsMut::U8(o) = W::words_mut(out) {
        done = crate::arch::vectorized(
            #[inline(always)]
            move || unpack_bytes(src, p, o),
        );
    }
    unpack_tail(
        &src[(done * p.b as usize / 8).min(src.len())..],
        p,
        &mut out[done..],
    );
}

/// Sign-extend each byte's code from bit `top` (a code of `top + 1` bits) to `n` bits.
#[inline(always)]
fn extend_bytes(x: u64, top: u32, n: u32) -> u64 {
    let sign = (x >> top) & rep8(1);
    // Bits `top + 1 .. n` of each byte; `sign` is 0 or 1 per byte, so no carry crosses.
    let high = low(n) & !low(top + 1);
    x | (sign * high)
}

/// [`unpack`] of one-byte components, eight at a time: the count done (a multiple of 8).
#[inline(always)]
fn unpack_bytes(src: &[u8], p: Plan, out: &mut [u8]) -> usize {
    let top = p.f + p.b - 1;
    let extend = p.signed && top + 1 < p.n;
    if p.f == 0 && p.b == 4 && !extend {
        for (o, i) in out.chunks_exact_mut(16).zip(src.chunks_exact(8)) {
            let x = load8(i);
            o[..8].copy_from_slice(&scatter8(x & 0xffff_ffff, 4).to_le_bytes());
            o[8..].copy_from_slice(&scatter8(x >> 32, 4).to_le_bytes());
        }
        return out.len().min(src.len() * 2) / 16 * 16;
    }
    if p.f == 0 && p.b == 2 && !extend {
        for (o, i) in out.chunks_exact_mut(32).zip(src.chunks_exact(8)) {
            let x = load8(i);
            for q in 0..4 {
                let y = scatter8((x >> (16 * q)) & 0xffff, 2);
                o[8 * q..8 * q + 8].copy_from_slice(&y.to_le_bytes());
            }
        }
        return out.len().min(src.len() * 4) / 32 * 32;
    }
    let step = p.b as usize;
    let keep = low(8 * p.b);
    let mut g = 0;
    while (g + 1) * 8 <= out.len() && g * step + 8 <= src.len() {
        let mut y = scatter8(load8(&src[g * step..]) & keep, p.b) << p.f;
        if extend {
            y = extend_bytes(y, top, p.n);
        }
        out[g * 8..g * 8 + 8].copy_from_slice(&y.to_le_bytes());
        g += 1;
    }
    g * 8
}

/// The little-endian `u64` at byte `i` of `s`, zero past its end.
#[inline(always)]
fn load_at(s: &[u8], i: usize) -> u64 {
    match s.get(i..i + 8) {
        Some(w) => load8(w),
        None => crate::number::storage::read_le_bits(s.get(i..).unwrap_or(&[]), 8),
    }
}

/// [`unpack`] of any width: each component read from the `u64` at its first byte (and the
/// byte after it when the code crosses it).
fn unpack_tail<W: Word>(src: &[u8], p: Plan, out: &mut [W]) {
    let mask = low(p.b);
    let top = p.f + p.b - 1;
    // Shifting the code's top bit to bit 63 and back sign-extends it to 64 bits; the `N`
    // bits of the component are then kept.
    let up = 63 - top;
    let keep = low(p.n);
    let wide = p.b > 56;
    for (i, w) in out.iter_mut().enumerate() {
        let bit = i * p.b as usize;
        let (byte, sh) = (bit / 8, (bit % 8) as u32);
        let mut c = load_at(src, byte) >> sh;
        if wide && sh > 0 {
            let next = src.get(byte + 8).copied().unwrap_or(0) as u64;
            c |= next << (64 - sh);
        }
        let v = (c & mask) << p.f;
        let v = if p.signed {
            (((v << up) as i64) >> up) as u64 & keep
        } else {
            v
        };
        *w = W::from_u64(v);
    }
}
