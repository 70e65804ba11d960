//! One chunk as bytes: an array region encoded through the array->array chain and the
//! `bytes` codec, and back.
//!
//! Edge chunks: the region is encoded, then padded with the *encoded* fill value to the
//! full chunk shape (the padding is never run through a codec, so it cannot fail); on
//! decode the chunk is cropped to the region before the chain runs.

use ndarray::{ArrayD, ArrayViewD, IxDyn, Slice};
use serde_json::Value;

use super::ZarrError;
use super::metadata::{ArrayMetadata, MemoryOrder};
use crate::dispatch::{CustomArray, DynArray, DynChain, Element, match_all_arms, with_any};
use crate::dtype::DTypeId;
use crate::dtype::id::{Scalar, element_of};
use crate::error::CodecError;
use crate::metadata::CodecObject;

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
/// array->bytes codec is `bytes` and that have no bytes->bytes codec (see the
/// [module docs](crate::zarr) for an example).
#[derive(Debug)]
pub struct ChunkCodec {
    shape: Vec<u64>,
    chunk_shape: Vec<usize>,
    chain: DynChain,
    endian: Endian,
    order: MemoryOrder,
}

fn parse_endian(bytes: &Value, size: usize) -> Result<Endian, ZarrError> {
    let obj = CodecObject::from_json(bytes)?;
    if obj.name != "bytes" {
        return Err(ZarrError::Unsupported(format!(
            "array->bytes codec {:?}: zquant writes and reads `bytes` chunks only (the \
             `zarrs` feature brings sharding and the other array->bytes codecs)",
            obj.name
        )));
    }
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
        let endian = parse_endian(
            &meta.codecs.array_to_bytes,
            chain.encoded_data_type().id.size(),
        )?;
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
            endian,
            order: meta.order,
        })
    }

    /// The array->array chain.
    pub fn chain(&self) -> &DynChain {
        &self.chain
    }

    /// The byte order of the chunks.
    pub fn endian(&self) -> Endian {
        self.endian
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
        let padded = with_any!(id, T => pad::<T>(&encoded, &self.chunk_shape, fill),
            custom _c => pad_custom(&encoded, &self.chunk_shape, fill));
        let mut bytes = with_any!(id, T => ordered_bytes::<T>(&padded, self.order),
            custom _c => ordered_custom(&padded, self.order));
        if self.endian == Endian::Big {
            swap_words(&mut bytes, id);
        }
        Ok(bytes)
    }

    /// Decode a chunk's bytes to the array region it covers (cropped at the array's edge).
    ///
    /// # Errors
    /// A byte count that does not match the chunk shape; an element the chain cannot
    /// decode, reported at its array coordinates ([`ZarrError::Element`]).
    pub fn decode_chunk(&self, chunk: &[u64], bytes: &[u8]) -> Result<DynArray, ZarrError> {
        let (origin, shape) = self.region(chunk)?;
        let id = self.chain.encoded_data_type().id;
        let mut stored: Vec<usize> = self.chunk_shape.clone();
        if self.order == MemoryOrder::F {
            stored.reverse();
        }
        let mut owned;
        let mut bytes = bytes;
        if self.endian == Endian::Big {
            owned = bytes.to_vec();
            swap_words(&mut owned, id);
            bytes = &owned;
        }
        let full = DynArray::from_le_bytes(id, &stored, bytes).map_err(|e| ZarrError::Chunk {
            chunk: chunk.to_vec(),
            reason: e.to_string(),
        })?;
        let cropped = with_any!(id, T => crop::<T>(&full, &shape, self.order),
            custom _c => crop_custom(&full, &shape, self.order));
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

fn pad<T: Element>(a: &DynArray, chunk: &[usize], fill: Scalar) -> DynArray {
    match T::from_dyn(a) {
        Some(x) => T::into_dyn(pad_elems(x.view(), chunk, element_of::<T>(fill))),
        None => a.clone(),
    }
}

/// `a` in the top corner of an array of shape `chunk` filled with `fill`.
fn pad_elems<E: Clone>(a: ArrayViewD<'_, E>, chunk: &[usize], fill: E) -> ArrayD<E> {
    if a.shape() == chunk {
        return a.to_owned();
    }
    let mut full = ArrayD::from_elem(IxDyn(chunk), fill);
    let shape = a.shape().to_vec();
    full.slice_each_axis_mut(|ax| Slice::from(0..shape[ax.axis.index()]))
        .assign(&a);
    full
}

/// The top corner of shape `shape` of a chunk read in `order` (C-order result).
fn crop<T: Element>(full: &DynArray, shape: &[usize], order: MemoryOrder) -> DynArray {
    match T::from_dyn(full) {
        Some(a) => T::into_dyn(crop_elems(a.view(), shape, order)),
        None => full.clone(),
    }
}

fn crop_elems<E: Clone>(a: ArrayViewD<'_, E>, shape: &[usize], order: MemoryOrder) -> ArrayD<E> {
    let view = match order {
        MemoryOrder::C => a,
        MemoryOrder::F => a.reversed_axes(),
    };
    let part = view.slice_each_axis(|ax| Slice::from(0..shape[ax.axis.index()]));
    part.as_standard_layout().into_owned()
}

/// Little-endian element bytes in the chunk's memory order.
fn ordered_bytes<T: Element>(a: &DynArray, order: MemoryOrder) -> Vec<u8> {
    match T::from_dyn(a) {
        Some(x) => ordered_elems(x.view(), order, T::SIZE, |x, b| x.write_le(b)),
        None => a.to_le_bytes(),
    }
}

fn ordered_elems<E: Copy>(
    a: ArrayViewD<'_, E>,
    order: MemoryOrder,
    size: usize,
    write: impl Fn(E, &mut [u8]),
) -> Vec<u8> {
    let view = match order {
        MemoryOrder::C => a,
        MemoryOrder::F => a.reversed_axes(),
    };
    let mut out = vec![0u8; view.len() * size];
    for (x, b) in view.iter().zip(out.chunks_exact_mut(size.max(1))) {
        write(*x, b);
    }
    out
}

/// The three chunk-layout steps for a declared (registered) type, on its elements' words.
fn pad_custom(a: &DynArray, chunk: &[usize], fill: Scalar) -> DynArray {
    match a {
        DynArray::Custom(c) => DynArray::Custom(CustomArray::from_scalars(
            c.dtype(),
            pad_elems(c.scalars().view(), chunk, fill),
        )),
        other => other.clone(),
    }
}

fn crop_custom(a: &DynArray, shape: &[usize], order: MemoryOrder) -> DynArray {
    match a {
        DynArray::Custom(c) => DynArray::Custom(CustomArray::from_scalars(
            c.dtype(),
            crop_elems(c.scalars().view(), shape, order),
        )),
        other => other.clone(),
    }
}

fn ordered_custom(a: &DynArray, order: MemoryOrder) -> Vec<u8> {
    match a {
        DynArray::Custom(c) => {
            let t = c.dtype();
            ordered_elems(c.scalars().view(), order, t.size(), |x, b| t.write_le(x, b))
        }
        other => other.to_le_bytes(),
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
