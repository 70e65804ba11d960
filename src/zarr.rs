//! Whole Zarr arrays: a `zarr.json` (v3) or `.zarray` (v2) read as one value, and chunks
//! encoded to and decoded from their stored bytes.
//!
//! [`ArrayMetadata`] reads the whole array metadata and splits the `codecs` list into the
//! three parts the Zarr v3 core spec defines: the array->array codecs (zquant's, run by a
//! [`DynChain`](crate::DynChain)), the one array->bytes codec and the bytes->bytes codecs
//! after it. A v2 `.zarray` is read into the same value: its `filters` become v3 codec
//! objects (`fixedscaleoffset` -> `numcodecs.fixedscaleoffset`, `bitround` ->
//! `numcodecs.bitround`), its `dtype`'s byte order the `bytes` codec's `endian`, its
//! `compressor` a bytes->bytes codec and its `order` a memory order of the chunks.
//!
//! [`ChunkCodec`] turns an array region into the bytes of one chunk and back, when the
//! array->bytes codec is `bytes` or `packbits` ([`PackBits`]) and no bytes->bytes codec
//! follows: little- or big-endian,
//! C or F order, edge chunks padded with the encoded fill value and cropped on decode, and
//! element errors reported at their N-d coordinates in the array. Compressors, sharding
//! and stores are what the `zarrs` feature (`zquant::zarrs`, when enabled) brings.
//!
//! ```
//! use zquant::zarr::{ArrayMetadata, ChunkCodec};
//! use zquant::DynArray;
//!
//! let meta = ArrayMetadata::from_json(&serde_json::json!({
//!     "zarr_format": 3, "node_type": "array", "shape": [5], "data_type": "float64",
//!     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
//!     "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
//!     "codecs": [
//!         {"name": "scale_offset", "configuration": {"offset": 0, "scale": 10}},
//!         {"name": "cast_value", "configuration": {"data_type": "uint8",
//!             "rounding": "nearest-even", "out_of_range": "clamp",
//!             "scalar_map": {"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}}},
//!         {"name": "bytes"},
//!         {"name": "zstd", "configuration": {"level": 1}}
//!     ]
//! }))?;
//! assert_eq!(meta.codecs.bytes_to_bytes.len(), 1); // zstd: not an "unknown codec"
//! assert_eq!(meta.chain()?.encoded_data_type().id.name(), "uint8");
//!
//! // Without the compressor, zquant writes and reads the chunks itself.
//! let mut plain = meta.clone();
//! plain.codecs.bytes_to_bytes.clear();
//! let chunks = ChunkCodec::new(&plain)?;
//! let edge = DynArray::from_le_bytes(zquant::DTypeId::Float64, &[1], &2.5f64.to_le_bytes())?;
//! let bytes = chunks.encode_chunk(&[1], &edge)?; // the second chunk holds element 4 only
//! assert_eq!(bytes, [25, 255, 255, 255]); // padded with the encoded fill value (NaN -> 255)
//! assert!(chunks.decode_chunk(&[1], &bytes)?.same_as(&edge));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod chunk;
mod metadata;
mod packbits_array;
mod v2;

/// The `packbits` array->bytes codec (its module is `codec::packbits`; this path is kept).
pub mod packbits {
    pub use crate::codec::packbits::{
        NAME, PackBits, PackBitsError, PaddingEncoding, parse_configuration,
    };
}

pub use crate::dispatch::{ARRAY_TO_BYTES, CodecSplit};
pub use chunk::{ChunkCodec, Endian};
#[allow(deprecated)]
pub use metadata::ZQUANT_CODECS;
pub use metadata::{ArrayMetadata, MemoryOrder};
pub use packbits::{PackBits, PackBitsError, PaddingEncoding};
// Typed arrays as the bytes of a chunk (the run-time twin is `DynArray::to_le_bytes`).
pub use crate::pipeline::{from_le_bytes, to_le_bytes};

use crate::error::{ElementError, MetadataError};

/// Why a whole-array operation failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ZarrError {
    /// Invalid array or codec metadata.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// A field of the array metadata (not of a codec) is missing or invalid.
    #[error("array metadata: `{field}`: {reason}")]
    Field {
        /// The offending key of `zarr.json`/`.zarray`.
        field: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The array uses something this operation does not do (the reason says what to use).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An element of the array could not be encoded or decoded.
    #[error("{error} -> at array coordinates {coords:?}")]
    Element {
        /// The element's coordinates in the whole array.
        coords: Vec<u64>,
        /// The codec's error (its `index` and `position` are in the chunk's region).
        error: Box<ElementError>,
    },
    /// A chunk's bytes or region do not match the array's chunking.
    #[error("chunk {chunk:?}: {reason}")]
    Chunk {
        /// Chunk grid coordinates.
        chunk: Vec<u64>,
        /// What does not match.
        reason: String,
    },
}
