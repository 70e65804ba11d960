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
//! a multiple of 8) as the little-endian copy the `bytes` codec writes. Words of two bytes
//! or more also go eight codes a step where the width allows (no branch per code), and on
//! CPUs with AVX-512 the arch layer's twins take the bulk of every width (with AVX2 only,
//! of one-byte words and of fields up to 16 bits in wider words).
//!
//! The module holds the configuration (`configuration`), the codec (here) and its kernels
//! (`kernels`, whose AVX-512 and AVX2 twins are in the arch layer).

mod configuration;
mod kernels;

pub use configuration::{PaddingEncoding, parse_configuration};

use serde_json::{Map, Value};

use crate::dtype::{DTypeId, Kind};
use crate::error::MetadataError;
use crate::number::storage::{WordBuf, Words, WordsMut};
use configuration::{check_order, field};
use kernels::{pack, unpack};

/// The Zarr name.
pub const NAME: &str = "packbits";

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
        if words.bits() != self.dtype.word_bits()
            || !words.len().is_multiple_of(self.plan.components)
        {
            return Err(self.words_error(words.len(), words.bits()));
        }
        Ok(words.len() / self.plan.components)
    }

    /// The error for `found` words of `found_bits` bits, not elements of the data type.
    pub(crate) fn words_error(&self, found: usize, found_bits: u32) -> PackBitsError {
        PackBitsError::Words {
            dtype: self.dtype,
            found,
            found_bits,
            per: self.plan.components,
            bits: self.dtype.word_bits(),
        }
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
        if let Some(index) = at
            && bytes[index] != pad
        {
            return Err(PackBitsError::PaddingByte {
                encoding: self.padding.name(),
                index,
                elements,
                bits: self.bits_per_element(),
                expected: pad,
                found: bytes[index],
            });
        }
        match out {
            WordsMut::U8(w) => unpack(body, self.plan, w),
            WordsMut::U16(w) => unpack(body, self.plan, w),
            WordsMut::U32(w) => unpack(body, self.plan, w),
            WordsMut::U64(w) => unpack(body, self.plan, w),
        }
        Ok(())
    }
}
