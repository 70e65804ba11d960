//! One chunk as bytes: an array region encoded through the array->array chain and the
//! `bytes` or `packbits` codec, and back.
//!
//! Edge chunks: the region is encoded, then padded with the *encoded* fill value to the
//! full chunk shape (the padding is never run through a codec, so it cannot fail); on
//! decode the chunk is cropped to the region before the chain runs.

use ndarray::{ArrayD, ArrayViewD, IxDyn, Slice};
use serde_json::Value;

use super::ZarrError;
use super::metadata::{ArrayMetadata, MemoryOrder};
use super::packbits::PackBits;
use crate::dispatch::{DynArray, DynChain, words_from_le, words_to_le};
use crate::dtype::DTypeId;
use crate::dtype::id::ElementWords;
use crate::error::CodecError;
use crate::metadata::CodecObject;
use crate::number::storage::{Word, WordBuf, Words};

/// The byte order of the `bytes` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    /// `"endian": "little"`.
    Little,
    /// `"endian": "big"`: each storage word (each component of a complex number) is
    /// byte-swapped.
    Big,
}

/// Encodes array regions to chunk bytes and decodes them back, for arrays whose
/// array->bytes codec is `bytes` or `packbits` and that have no bytes->bytes codec (see the
/// [module docs](crate::zarr) for an example).
#[derive(Debug)]
pub struct ChunkCodec {
    shape: Vec<u64>,
    chunk_shape: Vec<usize>,
    chain: DynChain,
    to_bytes: ToBytes,
    order: MemoryOrder,
}

/// The array->bytes codec.
#[derive(Debug)]
enum ToBytes {
    Bytes(Endian),
    PackBits(PackBits),
}

fn parse_to_bytes(codec: &Value, id: DTypeId) -> Result<ToBytes, ZarrError> {
    let obj = CodecObject::from_json(codec)?;
    match obj.name.as_str() {
        "bytes" => parse_endian(&obj, id.size()).map(ToBytes::Bytes),
        super::packbits::NAME => Ok(ToBytes::PackBits(PackBits::new(
            id,
            obj.configuration.as_ref(),
        )?)),
        _ => Err(ZarrError::Unsupported(format!(
            "array->bytes codec {:?}: zquant writes and reads `bytes` and `packbits` chunks \
             only (the `zarrs` feature brings sharding and the other array->bytes codecs)",
            obj.name
        ))),
    }
}

fn parse_endian(obj: &CodecObject, size: usize) -> Result<Endian, ZarrError> {
    let endian = obj.configuration.as_ref().and_then(|c| c.get("endian"));
    match endian.map(|e| e.as_str()) {
        Some(Some("little")) => Ok(Endian::Little),
        Some(Some("big")) => Ok(Endian::Big),
        None if size <= 1 => Ok(Endian::Little),
        other => Err(ZarrError::Metadata(crate::MetadataError::Field {
            codec: "bytes",
            field: "endian",
            reason: format!(
                "must be \"little\" or \"big\" (required for types of more than one byte), got {other:?}"
            ),
        })),
    }
}

impl ChunkCodec {
    /// The chunk codec of an array.
    ///
    /// # Errors
    /// An array->bytes codec other than `bytes`, or bytes->bytes codecs (compress or
    /// decompress the chunk bytes yourself and clear `meta.codecs.bytes_to_bytes`, or use the
    /// `zarrs` feature); invalid array->array codecs.
    pub fn new(meta: &ArrayMetadata) -> Result<Self, ZarrError> {
        if !meta.codecs.bytes_to_bytes.is_empty() {
            return Err(ZarrError::Unsupported(format!(
                "bytes->bytes codecs {:?}: zquant's chunk bytes are those before them (apply \
                 them yourself and clear `codecs.bytes_to_bytes`, or use the `zarrs` feature)",
                meta.codecs.bytes_to_bytes
            )));
        }
        let chain = meta.chain()?;
        let to_bytes = parse_to_bytes(&meta.codecs.array_to_bytes, chain.encoded_data_type().id)?;
        let chunk_shape = meta
            .chunk_shape
            .iter()
            .map(|&c| usize::try_from(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| super::metadata::field_err("chunk_grid", "chunk_shape overflows usize"))?;
        Ok(ChunkCodec {
            shape: meta.shape.clone(),
            chunk_shape,
            chain,
            to_bytes,
            order: meta.order,
        })
    }

    /// Where a region of `shape` goes in a chunk of elements of `id`.
    fn layout<'a>(&'a self, id: DTypeId, shape: &'a [usize]) -> Layout<'a> {
        Layout {
            k: id.words_per_element().max(1),
            chunk: &self.chunk_shape,
            region: shape,
            order: self.order,
        }
    }

    /// The array->array chain.
    pub fn chain(&self) -> &DynChain {
        &self.chain
    }

    /// The byte order of the chunks (`packbits` chunks are little-endian).
    pub fn endian(&self) -> Endian {
        match self.to_bytes {
            ToBytes::Bytes(e) => e,
            ToBytes::PackBits(_) => Endian::Little,
        }
    }

    /// The `packbits` codec, when it is the array->bytes codec.
    pub fn packbits(&self) -> Option<&PackBits> {
        match &self.to_bytes {
            ToBytes::PackBits(p) => Some(p),
            ToBytes::Bytes(_) => None,
        }
    }

    /// The origin (array coordinates) and shape of the part of the array a chunk covers:
    /// the chunk shape, cropped at the array's edge.
    ///
    /// # Errors
    /// Chunk coordinates outside the chunk grid.
    pub fn region(&self, chunk: &[u64]) -> Result<(Vec<u64>, Vec<usize>), ZarrError> {
        let err = |reason: String| ZarrError::Chunk {
            chunk: chunk.to_vec(),
            reason,
        };
        if chunk.len() != self.shape.len() {
            return Err(err(format!("expected {} coordinates", self.shape.len())));
        }
        let mut origin = Vec::with_capacity(chunk.len());
        let mut shape = Vec::with_capacity(chunk.len());
        for ((&i, &n), &c) in chunk.iter().zip(&self.shape).zip(&self.chunk_shape) {
            let start = i.checked_mul(c as u64).filter(|&s| s < n.max(1));
            let Some(start) = start else {
                return Err(err(format!(
                    "outside the chunk grid of array shape {:?}",
                    self.shape
                )));
            };
            origin.push(start);
            // `n - start <= usize::MAX` here since it is at most the chunk size.
            shape.push(((n - start).min(c as u64)) as usize);
        }
        Ok((origin, shape))
    }

    /// Encode the array region covered by `chunk` (shape: [`ChunkCodec::region`]) to the
    /// chunk's bytes: the chain, the edge padding with the encoded fill value, the memory
    /// order and the byte order.
    ///
    /// # Errors
    /// A region of the wrong shape or data type; an element the chain cannot encode,
    /// reported at its array coordinates ([`ZarrError::Element`]).
    pub fn encode_chunk(&self, chunk: &[u64], region: &DynArray) -> Result<Vec<u8>, ZarrError> {
        let (origin, shape) = self.region(chunk)?;
        if region.shape() != shape.as_slice() {
            return Err(ZarrError::Chunk {
                chunk: chunk.to_vec(),
                reason: format!("region of shape {:?}, expected {shape:?}", region.shape()),
            });
        }
        let encoded = self
            .chain
            .encode(region)
            .map_err(|e| at_coords(e, &origin, &shape, chunk))?;
        let fill = self
            .chain
            .encoded_fill_value()
            .first_scalar()
            .unwrap_or_default();
        let id = encoded.dtype();
        let standard = encoded.to_standard_layout();
        let words = standard.words().ok_or_else(|| ZarrError::Chunk {
            chunk: chunk.to_vec(),
            reason: "the chain's output is not in standard layout".into(),
        })?;
        let layout = self.layout(id, &shape);
        let laid = match words {
            Words::U8(w) => layout.pad(w, fill).map(WordBuf::U8),
            Words::U16(w) => layout.pad(w, fill).map(WordBuf::U16),
            Words::U32(w) => layout.pad(w, fill).map(WordBuf::U32),
            Words::U64(w) => layout.pad(w, fill).map(WordBuf::U64),
        }
        .ok_or_else(|| ZarrError::Chunk {
            chunk: chunk.to_vec(),
            reason: format!("region of {} words for shape {shape:?}", words.len()),
        })?;
        match &self.to_bytes {
            ToBytes::PackBits(p) => p.encode(laid.as_words()).map_err(|e| ZarrError::Chunk {
                chunk: chunk.to_vec(),
                reason: e.to_string(),
            }),
            ToBytes::Bytes(endian) => {
                let mut bytes = words_to_le(id, laid.as_words());
                if *endian == Endian::Big {
                    swap_words(&mut bytes, id);
                }
                Ok(bytes)
            }
        }
    }

    /// Decode a chunk's bytes to the array region it covers (cropped at the array's edge).
    ///
    /// # Errors
    /// A byte count that does not match the chunk shape; an element the chain cannot
    /// decode, reported at its array coordinates ([`ZarrError::Element`]).
    pub fn decode_chunk(&self, chunk: &[u64], bytes: &[u8]) -> Result<DynArray, ZarrError> {
        let (origin, shape) = self.region(chunk)?;
        let id = self.chain.encoded_data_type().id;
        let chunk_err = |reason: String| ZarrError::Chunk {
            chunk: chunk.to_vec(),
            reason,
        };
        let n = crate::pipeline::element_count(&self.chunk_shape).ok();
        let words = match &self.to_bytes {
            ToBytes::PackBits(p) => {
                let n = n.ok_or_else(|| chunk_err("the chunk shape overflows".into()))?;
                p.decode(bytes, n)
                    .map_err(|e| chunk_err(format!("chunk shape {:?}: {e}", self.chunk_shape)))?
            }
            ToBytes::Bytes(endian) => {
                let size = id.size();
                if n.and_then(|n| n.checked_mul(size)) != Some(bytes.len()) {
                    return Err(chunk_err(format!(
                        "{} bytes do not hold a chunk of shape {:?} of {id} ({size} bytes each)",
                        bytes.len(),
                        self.chunk_shape
                    )));
                }
                if *endian == Endian::Big {
                    let mut owned = bytes.to_vec();
                    swap_words(&mut owned, id);
                    words_from_le(id, &owned)
                } else {
                    words_from_le(id, bytes)
                }
            }
        };
        let layout = self.layout(id, &shape);
        let cropped = match words {
            WordBuf::U8(w) => layout.crop(w).map(WordBuf::U8),
            WordBuf::U16(w) => layout.crop(w).map(WordBuf::U16),
            WordBuf::U32(w) => layout.crop(w).map(WordBuf::U32),
            WordBuf::U64(w) => layout.crop(w).map(WordBuf::U64),
        }
        .ok_or_else(|| chunk_err("chunk words do not match its shape".into()))?;
        let cropped =
            DynArray::from_words(id, &shape, cropped).map_err(|e| chunk_err(e.to_string()))?;
        self.chain
            .decode(&cropped)
            .map_err(|e| at_coords(e, &origin, &shape, chunk))
    }
}

/// An element error's flat index in the region, as array coordinates.
fn at_coords(e: CodecError, origin: &[u64], shape: &[usize], chunk: &[u64]) -> ZarrError {
    match e {
        CodecError::Element(error) => {
            let mut rest = error.index;
            let mut coords = vec![0u64; shape.len()];
            for (d, &n) in shape.iter().enumerate().rev() {
                let n = n.max(1);
                coords[d] = origin[d] + (rest % n) as u64;
                rest /= n;
            }
            ZarrError::Element {
                coords,
                error: Box::new(error),
            }
        }
        CodecError::Metadata(m) => ZarrError::Metadata(m),
        CodecError::Array(reason) => ZarrError::Chunk {
            chunk: chunk.to_vec(),
            reason,
        },
    }
}

/// Where a region's elements go in its chunk: the chunk layout steps, on storage words
/// (`k` per element), once per word width rather than once per data type.
struct Layout<'a> {
    k: usize,
    chunk: &'a [usize],
    region: &'a [usize],
    order: MemoryOrder,
}

impl Layout<'_> {
    /// A shape with the element's words as a last axis.
    fn with_words(&self, shape: impl IntoIterator<Item = usize>) -> IxDyn {
        IxDyn(&shape.into_iter().chain([self.k]).collect::<Vec<_>>())
    }

    /// The axes that turn the chunk's stored (memory-order) axes into its logical ones, or
    /// back: F order stores the element axes reversed. The words of an element stay last.
    fn to_logical(&self) -> Vec<usize> {
        let nd = self.chunk.len();
        match self.order {
            MemoryOrder::C => (0..=nd).collect(),
            MemoryOrder::F => (0..nd).rev().chain([nd]).collect(),
        }
    }

    fn stored_shape(&self) -> IxDyn {
        match self.order {
            MemoryOrder::C => self.with_words(self.chunk.iter().copied()),
            MemoryOrder::F => self.with_words(self.chunk.iter().rev().copied()),
        }
    }

    /// The chunk's words in memory order: the region's words (C order) in its top corner,
    /// the rest `fill`'s words. `None` when `region` does not hold the region's words.
    fn pad<W: Word>(&self, region: &[W], fill: ElementWords) -> Option<Vec<W>> {
        if self.region == self.chunk && self.order == MemoryOrder::C {
            return Some(region.to_vec());
        }
        let fill: Vec<W> = fill.iter().take(self.k).map(|&o| W::from_u64(o)).collect();
        let n: usize = self.chunk.iter().product();
        let words: Vec<W> = fill.iter().copied().cycle().take(n * self.k).collect();
        let mut full =
            ArrayD::from_shape_vec(self.with_words(self.chunk.iter().copied()), words).ok()?;
        let part =
            ArrayViewD::from_shape(self.with_words(self.region.iter().copied()), region).ok()?;
        full.slice_each_axis_mut(|ax| match self.region.get(ax.axis.index()) {
            Some(&len) => Slice::from(0..len),
            None => Slice::from(..),
        })
        .assign(&part);
        Some(
            full.permuted_axes(self.to_logical())
                .iter()
                .copied()
                .collect(),
        )
    }

    /// The region's words (C order), cut from the chunk's words in memory order. `None`
    /// when `stored` does not hold the chunk's words.
    fn crop<W: Word>(&self, stored: Vec<W>) -> Option<Vec<W>> {
        if self.region == self.chunk && self.order == MemoryOrder::C {
            return Some(stored);
        }
        let view = ArrayViewD::from_shape(self.stored_shape(), &stored).ok()?;
        let logical = view.permuted_axes(self.to_logical());
        let region = logical
            .slice_each_axis(|ax| match self.region.get(ax.axis.index()) {
                Some(&len) => Slice::from(0..len),
                None => Slice::from(..),
            })
            .iter()
            .copied()
            .collect();
        Some(region)
    }
}

/// Reverse the bytes of every storage word (both components of a complex number).
fn swap_words(bytes: &mut [u8], id: DTypeId) {
    let word = (id.size() / id.words_per_element().max(1)).max(1);
    if word > 1 {
        for w in bytes.chunks_exact_mut(word) {
            w.reverse();
        }
    }
}
