//! One chunk as bytes: an array region encoded through the array->array chain and the
//! `bytes` or `packbits` codec, and back.
//!
//! Edge chunks: the region is encoded, then padded with the *encoded* fill value to the
//! full chunk shape (the padding is never run through a codec, so it cannot fail); on
//! decode the chunk is cropped to the region before the chain runs.

use serde_json::Value;

use super::ZarrError;
use super::metadata::{ArrayMetadata, MemoryOrder};
use super::packbits::PackBits;
use crate::dispatch::{DynArray, DynChain, words_from_le, words_to_le};
use crate::dtype::DTypeId;
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
            unit: id.words_per_element().max(1) * (id.word_bits() / 8) as usize,
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
        let id = encoded.dtype();
        let standard = encoded.to_standard_layout();
        let words = standard.words().ok_or_else(|| ZarrError::Chunk {
            chunk: chunk.to_vec(),
            reason: "the chain's output is not in standard layout".into(),
        })?;
        let layout = self.layout(id, &shape);
        // An edge chunk, or one stored in F order, is laid out on its little-endian bytes:
        // an element is `unit` opaque bytes there, whatever its type.
        let pad = |bytes: Vec<u8>| -> Result<Vec<u8>, ZarrError> {
            if layout.is_whole() {
                return Ok(bytes);
            }
            let fill = self.chain.encoded_fill_value().to_le_bytes();
            layout.pad(&bytes, &fill).ok_or_else(|| ZarrError::Chunk {
                chunk: chunk.to_vec(),
                reason: format!("region of {} words for shape {shape:?}", words.len()),
            })
        };
        match &self.to_bytes {
            ToBytes::PackBits(p) => {
                let padded;
                let laid = if layout.is_whole() {
                    words
                } else {
                    padded = words_from_le(id, &pad(words_to_le(id, words))?);
                    padded.as_words()
                };
                p.encode(laid).map_err(|e| ZarrError::Chunk {
                    chunk: chunk.to_vec(),
                    reason: e.to_string(),
                })
            }
            ToBytes::Bytes(endian) => {
                let mut bytes = pad(words_to_le(id, words))?;
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
        let layout = self.layout(id, &shape);
        let crop_err = || chunk_err("chunk words do not match its shape".into());
        let cropped = match &self.to_bytes {
            ToBytes::PackBits(p) => {
                let n = n.ok_or_else(|| chunk_err("the chunk shape overflows".into()))?;
                let words = p
                    .decode(bytes, n)
                    .map_err(|e| chunk_err(format!("chunk shape {:?}: {e}", self.chunk_shape)))?;
                if layout.is_whole() {
                    words
                } else {
                    let bytes = words_to_le(id, words.as_words());
                    words_from_le(id, &layout.crop(&bytes).ok_or_else(crop_err)?)
                }
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
                // Whole elements move in the crop, so the bytes of each word can be
                // swapped after it, on fewer of them.
                let mut cropped = if layout.is_whole() {
                    bytes.to_vec()
                } else {
                    layout.crop(bytes).ok_or_else(crop_err)?
                };
                if *endian == Endian::Big {
                    swap_words(&mut cropped, id);
                }
                words_from_le(id, &cropped)
            }
        };
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

/// Where a region's elements go in its chunk: the chunk layout steps, on little-endian
/// element bytes (`unit` per element), so that they are compiled once, not once per type
/// or word width.
struct Layout<'a> {
    unit: usize,
    chunk: &'a [usize],
    region: &'a [usize],
    order: MemoryOrder,
}

impl Layout<'_> {
    /// Whether the region is the whole chunk, stored as it is held (C order): nothing to
    /// lay out.
    fn is_whole(&self) -> bool {
        self.region == self.chunk && self.order == MemoryOrder::C
    }

    /// For each row of the region along one axis (its last, consecutive in the region's C
    /// order, or with `along_first` its first, consecutive in an F-order chunk),
    /// `f(region_index, chunk_index, len, region_step, chunk_step)`, in elements: the row's
    /// element `j` sits at `region_index + j * region_step` in the region and at
    /// `chunk_index + j * chunk_step` in the chunk's memory order. `false` (and no call)
    /// when the region does not fit in the chunk or the counts overflow.
    fn runs(
        &self,
        along_first: bool,
        f: &mut dyn FnMut(usize, usize, usize, usize, usize),
    ) -> bool {
        let nd = self.chunk.len();
        if self.region.len() != nd || self.region.iter().zip(self.chunk).any(|(r, c)| r > c) {
            return false;
        }
        // The chunk's stride of each logical axis, in elements: F order stores the axes
        // reversed. The region is held in C order.
        let strides = |shape: &[usize], order: MemoryOrder| -> Option<Vec<usize>> {
            let mut strides = vec![0usize; nd];
            let mut acc = 1usize;
            let axes: Vec<usize> = match order {
                MemoryOrder::C => (0..nd).rev().collect(),
                MemoryOrder::F => (0..nd).collect(),
            };
            for d in axes {
                strides[d] = acc;
                acc = acc.checked_mul(shape[d])?;
            }
            Some(strides)
        };
        let (Some(to_strides), Some(from_strides)) = (
            strides(self.chunk, self.order),
            strides(self.region, MemoryOrder::C),
        ) else {
            return false;
        };
        let Some(last) = nd.checked_sub(1) else {
            f(0, 0, 1, 1, 1);
            return true;
        };
        if self.region.contains(&0) {
            return true;
        }
        let axis = if along_first { 0 } else { last };
        // The other axes, the one an odometer moves fastest first: the chunk's order for a
        // row along the first axis, the region's for one along the last.
        let outer: Vec<usize> = if along_first {
            (1..nd).collect()
        } else {
            (0..last).rev().collect()
        };
        let (len, from_step, to_step) = (self.region[axis], from_strides[axis], to_strides[axis]);
        let mut index = vec![0usize; nd];
        let (mut from, mut to) = (0usize, 0usize);
        'rows: loop {
            f(from, to, len, from_step, to_step);
            for &d in &outer {
                index[d] += 1;
                from += from_strides[d];
                to += to_strides[d];
                if index[d] < self.region[d] {
                    continue 'rows;
                }
                from -= index[d] * from_strides[d];
                to -= index[d] * to_strides[d];
                index[d] = 0;
            }
            return true;
        }
    }

    /// The number of elements in `shape`, times `unit` bytes.
    fn bytes_of(&self, shape: &[usize]) -> Option<usize> {
        shape
            .iter()
            .try_fold(self.unit, |acc, &n| acc.checked_mul(n))
    }

    /// The chunk's bytes in memory order: the region's bytes (C order) in its top corner,
    /// the rest `fill` (one element's bytes). `None` when `region` does not hold the
    /// region's bytes or `fill` is not one element.
    fn pad(&self, region: &[u8], fill: &[u8]) -> Option<Vec<u8>> {
        let unit = self.unit;
        if region.len() != self.bytes_of(self.region)? || fill.len() != unit {
            return None;
        }
        let mut out = fill.repeat(self.bytes_of(self.chunk)? / unit.max(1));
        // In F order, rows along the first axis, which are consecutive in the chunk: strided
        // reads and whole lines written. Rows along the last axis would store every
        // element a chunk plane apart (for a 1024x1024 float64 chunk, every store of a row
        // in one cache set: 40 % slower).
        let along_first = self.order == MemoryOrder::F;
        self.runs(along_first, &mut |from, to, len, from_step, to_step| {
            if along_first {
                let row = &mut out[to * unit..(to + len) * unit];
                gather(unit, from_step, &region[from * unit..], row);
            } else {
                // C order: the row is consecutive in the chunk too (`to_step` is 1).
                debug_assert_eq!(to_step, 1);
                out[to * unit..(to + len) * unit]
                    .copy_from_slice(&region[from * unit..(from + len) * unit]);
            }
        })
        .then_some(out)
    }

    /// The region's bytes (C order), cut from the chunk's bytes in memory order. `None`
    /// when `stored` does not hold the chunk's bytes.
    fn crop(&self, stored: &[u8]) -> Option<Vec<u8>> {
        let unit = self.unit;
        if stored.len() != self.bytes_of(self.chunk)? {
            return None;
        }
        let mut out = vec![0u8; self.bytes_of(self.region)?];
        self.runs(false, &mut |from, to, len, _, to_step| {
            let row = &mut out[from * unit..(from + len) * unit];
            gather(unit, to_step, &stored[to * unit..], row);
        })
        .then_some(out)
    }
}

/// Every `step`-th `unit`-byte element of `chunk` from its first into `row` (`chunk` holds
/// at least that many): a strided row copied into a consecutive one. One copy when `step`
/// is 1; else element by element, in a loop built per common element width, so that each
/// element is one load and one store, without a call per element.
fn gather(unit: usize, step: usize, chunk: &[u8], row: &mut [u8]) {
    if step == 1 || unit == 0 {
        row.copy_from_slice(&chunk[..row.len()]);
        return;
    }
    fn each<const U: usize>(chunk: &[u8], row: &mut [u8], stride: usize) {
        // Whole pieces of `stride >= U` bytes: the compiler drops the bounds check per
        // element. The row's last element may be in the partial piece after them.
        if stride < U {
            return;
        }
        let (mut pieces, mut elements) = (chunk.chunks_exact(stride), row.chunks_exact_mut(U));
        for (s, d) in (&mut pieces).zip(&mut elements) {
            d.copy_from_slice(&s[..U]);
        }
        if let Some(d) = elements.next() {
            d.copy_from_slice(&pieces.remainder()[..U]);
        }
    }
    let stride = step * unit;
    match unit {
        1 => each::<1>(chunk, row, stride),
        2 => each::<2>(chunk, row, stride),
        4 => each::<4>(chunk, row, stride),
        8 => each::<8>(chunk, row, stride),
        16 => each::<16>(chunk, row, stride),
        _ => {
            for (s, d) in chunk.chunks(stride).zip(row.chunks_exact_mut(unit)) {
                d.copy_from_slice(&s[..unit]);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunk's bytes built element by element from the definition: the element at
    /// logical index `i` of the chunk sits at `i`'s C- or F-order rank, and is the region's
    /// element at `i` when `i` is inside the region, else `fill`.
    fn reference_pad(l: &Layout<'_>, region: &[u8], fill: &[u8]) -> Vec<u8> {
        let n: usize = l.chunk.iter().product();
        let mut out = vec![0u8; n * l.unit];
        for flat in 0..n {
            // `flat` is the C-order rank of logical index `i`.
            let mut i = vec![0; l.chunk.len()];
            let mut rest = flat;
            for d in (0..l.chunk.len()).rev() {
                i[d] = rest % l.chunk[d];
                rest /= l.chunk[d];
            }
            let rank = |shape: &[usize], f_order: bool| {
                let axes: Vec<usize> = if f_order {
                    (0..shape.len()).rev().collect()
                } else {
                    (0..shape.len()).collect()
                };
                axes.iter().fold(0, |acc, &d| acc * shape[d] + i[d])
            };
            let at = rank(l.chunk, l.order == MemoryOrder::F);
            let src = if i.iter().zip(l.region).all(|(a, b)| a < b) {
                &region[rank(l.region, false) * l.unit..][..l.unit]
            } else {
                fill
            };
            out[at * l.unit..][..l.unit].copy_from_slice(src);
        }
        out
    }

    #[test]
    fn pad_and_crop_match_the_definition_in_any_rank() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[], &[]),
            (&[5], &[3]),
            (&[5], &[5]),
            (&[2, 3], &[1, 3]),
            (&[3, 4, 5], &[2, 4, 3]),
            (&[3, 4, 5], &[3, 4, 5]),
            (&[2, 1, 3, 2], &[1, 1, 2, 2]),
            (&[3, 2], &[0, 2]),
        ];
        for &(chunk, region) in cases {
            for unit in [1, 2, 3, 4, 8, 16] {
                for order in [MemoryOrder::C, MemoryOrder::F] {
                    let l = Layout {
                        unit,
                        chunk,
                        region,
                        order,
                    };
                    let len = region.iter().product::<usize>() * unit;
                    let bytes: Vec<u8> = (0..len).map(|b| (b * 7 + 1) as u8).collect();
                    let fill: Vec<u8> = (0..unit).map(|b| 0xf0 | b as u8).collect();
                    let at = format!("chunk {chunk:?} region {region:?} unit {unit} {order:?}");
                    let padded = l.pad(&bytes, &fill).expect(&at);
                    assert_eq!(padded, reference_pad(&l, &bytes, &fill), "{at}");
                    assert_eq!(l.crop(&padded).as_deref(), Some(&bytes[..]), "{at}");
                    if len > 0 {
                        assert_eq!(l.pad(&bytes[1..], &fill), None, "{at}");
                    }
                    assert_eq!(l.crop(&padded[1..]), None, "{at}");
                }
            }
        }
        let too_big = Layout {
            unit: 1,
            chunk: &[2, 2],
            region: &[3, 1],
            order: MemoryOrder::C,
        };
        assert_eq!(too_big.pad(&[0; 3], &[9]), None);
    }
}
