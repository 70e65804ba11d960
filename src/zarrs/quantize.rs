//! One call from a zarrs float array to a smaller one within a stated bound: statistics
//! merged chunk by chunk, a chain chosen from them by the planner (`crate::plan`), the new array written chunk by chunk
//! (on rayon's pool with the feature `rayon`), every chunk read back and compared, and the
//! metadata written last.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Value, json};
use zarrs::array::{Array, ArrayBytes, Codec, CodecOptions};
use zarrs::storage::{ReadableStorageTraits, ReadableWritableStorageTraits};

use super::{dtype_id, prepare_array, store_metadata};
use crate::choose::ChooseError;
use crate::dispatch::words::ne_words;
use crate::dispatch::{DynArray, DynChain};
use crate::dtype::{DTypeId, Words};
use crate::error::CodecError;
use crate::plan::{PlanOptions, PlanStats, plan};
pub use crate::plan::{Readers, Target};

/// Options of [`quantize`].
///
/// ```
/// use zquant::zarrs::{QuantizeOptions, Target};
/// let mut o = QuantizeOptions::new(Target::MaxAbsError(0.01));
/// o.plan.headroom = 0.1; // room for later values 10% of the span beyond the data's
/// assert_eq!(o.plan.readers, zquant::plan::Readers::ZarrPythonAndZarrs);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeOptions {
    /// The bound or information level.
    pub target: Target,
    /// The planner's options: readers (default: chains plain zarr-python 3.4.2 opens with
    /// its built-in codecs and cast-value; zarrs, which writes the store, is always
    /// required too), headroom, sample size.
    pub plan: PlanOptions,
    /// The bytes->bytes codecs after the serializer (default: zstd level 5); the planner
    /// compares candidates by their sample chunks' size through them.
    pub compressors: Vec<Value>,
}

impl QuantizeOptions {
    /// The options for `target`: the planner's defaults, zstd.
    pub fn new(target: Target) -> Self {
        QuantizeOptions {
            target,
            plan: PlanOptions::default(),
            compressors: vec![
                json!({"name": "zstd", "configuration": {"level": 5, "checksum": false}}),
            ],
        }
    }
}

/// What [`quantize`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeReport {
    /// The planner's name for the chain.
    pub name: String,
    /// The codecs chosen (filters, serializer and the chain's own bytes->bytes codecs such
    /// as `numcodecs.shuffle`, without the compressors), as in `zarr.json`.
    pub chain: Vec<Value>,
    /// The bound the chain guarantees for every finite element in the range planned for:
    /// absolute, relative for [`Target::MaxRelError`], the absolute bound an information
    /// level was planned as.
    pub bound: Option<f64>,
    /// The largest `|x' - x|` over the finite elements, measured on the written array.
    pub max_abs_error: f64,
    /// The largest `|x' - x| / |x|` over the finite nonzero elements, measured.
    pub max_rel_error: f64,
    /// The elements compared (every element of every chunk, edge chunks' padding included).
    pub elements: u64,
    /// The stored bytes of the source's chunks.
    pub source_bytes: u64,
    /// The stored bytes of the new array's chunks.
    pub bytes: u64,
    /// `source_bytes / bytes`.
    pub ratio: f64,
}

/// Why [`quantize`] failed.
#[derive(Debug, thiserror::Error)]
pub enum QuantizeError {
    /// The source cannot be quantized (its data type, its grid).
    #[error("zarrs quantize: {0}")]
    Source(String),
    /// No chain meets the target.
    #[error("zarrs quantize: {0}")]
    Choose(#[from] ChooseError),
    /// The destination already holds an array, or the new array could not be created.
    #[error("zarrs quantize: {0}")]
    Create(String),
    /// zarrs failed to read or write a chunk.
    #[error("zarrs quantize: chunk {chunk:?}: {message}")]
    Chunk {
        /// The chunk's grid indices.
        chunk: Vec<u64>,
        /// What failed.
        message: String,
    },
    /// A written element is not within the bound (the metadata is not written).
    #[error(
        "zarrs quantize: verification failed at array index {index:?}: {value} reads back as {back}, error above the bound {bound}"
    )]
    Verify {
        /// The element's array coordinates.
        index: Vec<u64>,
        /// The source value.
        value: f64,
        /// The value read back.
        back: f64,
        /// The bound.
        bound: f64,
    },
}

fn chunk_err(chunk: &[u64]) -> impl Fn(String) -> QuantizeError + '_ {
    move |message| QuantizeError::Chunk {
        chunk: chunk.to_vec(),
        message,
    }
}

/// A chunk's elements as words of `id`.
fn words_of<'a>(id: DTypeId, chunk: &[u64], raw: &'a [u8]) -> Result<Words<'a>, QuantizeError> {
    ne_words(id, raw).ok_or_else(|| chunk_err(chunk)("chunk bytes not aligned".into()))
}

/// A chunk's elements as `f64` (float32 and float64 chunks, native-endian bytes).
fn values(id: DTypeId, bytes: &[u8]) -> Vec<f64> {
    match id {
        DTypeId::Float32 => bytes
            .chunks_exact(4)
            .map(|b| f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])))
            .collect(),
        _ => bytes
            .chunks_exact(8)
            .map(|b| f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect(),
    }
}

/// Run `f` on every chunk (on rayon's pool with the feature `rayon`), in grid order.
fn each_chunk<T: Send, F>(chunks: &[Vec<u64>], f: F) -> Result<Vec<T>, QuantizeError>
where
    F: Fn(&[u64]) -> Result<T, QuantizeError> + Sync + Send,
{
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        chunks.par_iter().map(|c| f(c)).collect()
    }
    #[cfg(not(feature = "rayon"))]
    {
        chunks.iter().map(|c| f(c)).collect()
    }
}

/// The grid indices of every chunk, C order.
fn all_chunks(grid: &[u64]) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    if grid.contains(&0) {
        return out;
    }
    let mut idx = vec![0u64; grid.len()];
    loop {
        out.push(idx.clone());
        let mut d = grid.len();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < grid[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// The array coordinates of element `i` (C order) of the chunk at `origin` with `shape`.
fn coordinates(origin: &[u64], shape: &[u64], mut i: u64) -> Vec<u64> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = origin[d] + i % shape[d];
        i /= shape[d];
    }
    c
}

/// The stored size of one serialized chunk through `compressors` (what the planner
/// compares candidates by).
fn compressed_size(compressors: &[Value]) -> Result<impl Fn(&[u8]) -> usize, QuantizeError> {
    let codecs = compressors
        .iter()
        .map(|c| {
            let meta: zarrs::metadata::v3::MetadataV3 = serde_json::from_value(c.clone())
                .map_err(|e| QuantizeError::Create(format!("compressor {c}: {e}")))?;
            match Codec::from_metadata(&meta) {
                Ok(Codec::BytesToBytes(codec)) => Ok(codec),
                Ok(_) => Err(QuantizeError::Create(format!(
                    "compressor {c}: not a bytes->bytes codec"
                ))),
                Err(e) => Err(QuantizeError::Create(format!("compressor {c}: {e}"))),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(move |bytes: &[u8]| {
        let mut data: Cow<'_, [u8]> = Cow::Borrowed(bytes);
        for codec in &codecs {
            match codec.encode(data.clone(), &CodecOptions::default()) {
                Ok(out) => data = Cow::Owned(out.into_owned()),
                Err(_) => return bytes.len(),
            }
        }
        data.len()
    })
}

/// Quantize the float32 or float64 array `source` (any dimensionality; a v2 or v3 array,
/// opened with [`open_array`](super::open_array)) into a new array at `path` of `dest`,
/// within `options.target`, and return what was done.
///
/// 1. **Plan**: one read of the source, chunk by chunk, merges the planner's statistics
///    ([`PlanStats`]: finite range, NaN and infinity counts, bit counts along the last axis
///    for an information level): the array never has to fit in memory. The planner
///    ([`plan`](crate::plan::plan)) then encodes a few chunks spread over the array with
///    each candidate chain, measures them through `options.compressors`, and takes the
///    smallest that meets the target and suits `options.plan.readers` (by default chains
///    plain zarr-python 3.4.2 opens: `scale_offset` + `cast_value`, `numcodecs.bitround`).
/// 2. **Write**: the new array has the source's shape, chunk shape, data type, fill value,
///    dimension names and attributes, and the codecs `[chain…, compressors…]`; it is
///    checked as [`create_array`](super::create_array) checks, then each chunk is read from
///    the source and written.
/// 3. **Verify**: each chunk is read back from the new array and compared with the source's,
///    element by element (NaN must stay NaN, infinities equal).
/// 4. **Metadata last**: `zarr.json` is written only after every chunk is written and
///    verified ([`store_metadata`](super::store_metadata), object forms). A failure before
///    leaves chunk files but no `zarr.json`: no reader opens it as an array.
///
/// ```
/// use std::sync::Arc;
/// use zarrs::storage::store::MemoryStore;
/// use zquant::zarrs::{QuantizeOptions, Target, create_array, quantize};
///
/// let src = Arc::new(MemoryStore::new());
/// let meta = serde_json::json!({
///     "zarr_format": 3, "node_type": "array", "shape": [6, 10, 12], "data_type": "float64",
///     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 5, 12]}},
///     "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
///     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]});
/// let source = create_array(src, "/", meta)?;
/// let data: Vec<f64> = (0..720).map(|i| if i % 97 == 0 { f64::NAN } else { 280.0 + (i as f64 * 0.1).sin() }).collect();
/// source.store_array_subset(&source.subset_all(), data)?;
///
/// let dst = Arc::new(MemoryStore::new());
/// let report = quantize(&source, dst, "/", &QuantizeOptions::new(Target::MaxAbsError(0.01)))?;
/// assert!(report.max_abs_error <= 0.01 && report.bound.unwrap() <= 0.01);
/// assert_eq!(report.chain[1]["configuration"]["data_type"], "uint8");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A source that is not float32/float64 or has no regular grid, a target no chain meets
/// (the message says what the best is), an array already at the destination, storage and
/// codec errors (an element error names the chunk), a verification failure.
pub fn quantize<S, D>(
    source: &Array<S>,
    dest: Arc<D>,
    path: &str,
    options: &QuantizeOptions,
) -> Result<QuantizeReport, QuantizeError>
where
    S: ?Sized + ReadableStorageTraits + 'static,
    D: ?Sized + ReadableWritableStorageTraits + 'static,
{
    let id = dtype_id(source.data_type()).map_err(|e| QuantizeError::Source(e.to_string()))?;
    if !matches!(id, DTypeId::Float32 | DTypeId::Float64) {
        return Err(QuantizeError::Source(format!(
            "float32 and float64 arrays are quantized; this one is {}",
            id.name()
        )));
    }
    let ndim = source.dimensionality();
    let chunk_shape: Vec<u64> = source
        .chunk_shape(&vec![0; ndim])
        .map_err(|e| QuantizeError::Source(e.to_string()))?
        .iter()
        .map(|d| d.get())
        .collect();
    let fill_json = DynArray::from_le_bytes(id, &[], source.fill_value().as_ne_bytes())
        .ok()
        .and_then(|a| a.first_to_json())
        .ok_or_else(|| QuantizeError::Source("unreadable fill value".into()))?;
    let chunks = all_chunks(source.chunk_grid_shape());
    let axis = matches!(options.target, Target::Information(_)).then(|| ndim.saturating_sub(1));
    let shape: Vec<usize> = chunk_shape.iter().map(|&d| d as usize).collect();

    // 1. Statistics, chunk by chunk (each chunk read, reduced, dropped).
    let read = |c: &[u64]| -> Result<Vec<u8>, QuantizeError> {
        let bytes: ArrayBytes = source
            .retrieve_chunk(c)
            .map_err(|e| chunk_err(c)(e.to_string()))?;
        let fixed = bytes
            .into_fixed()
            .map_err(|e| chunk_err(c)(e.to_string()))?;
        Ok(fixed.into_owned())
    };
    let per_chunk = each_chunk(&chunks, |c| {
        let raw = read(c)?;
        let words = words_of(id, c, &raw)?;
        Ok(PlanStats::of_words(id, words, &shape, axis)?)
    })?;
    let mut stats = PlanStats::empty(id);
    for s in &per_chunk {
        stats.merge(s)?;
    }

    // 2. The plan, from those statistics and a few chunks spread over the array.
    let per_sample = shape.iter().product::<usize>().max(1);
    let n_samples = options
        .plan
        .sample_elements
        .div_ceil(per_sample)
        .clamp(1, chunks.len().max(1));
    let sample_raw = (0..n_samples.min(chunks.len()))
        .map(|i| read(&chunks[i * chunks.len() / n_samples]))
        .collect::<Result<Vec<_>, _>>()?;
    let samples = sample_raw
        .iter()
        .map(|raw| Ok((words_of(id, &[], raw)?, shape.as_slice())))
        .collect::<Result<Vec<_>, QuantizeError>>()?;
    let size = compressed_size(&options.compressors)?;
    // zarrs writes the store, so zarrs must have every codec of the chain too.
    let mut plan_options = options.plan.clone();
    plan_options.readers = match plan_options.readers {
        Readers::ZarrPython | Readers::ZarrPythonAndZarrs => Readers::ZarrPythonAndZarrs,
        Readers::Zarrs | Readers::Any => Readers::Zarrs,
    };
    let plan = plan(
        id,
        &fill_json,
        &stats,
        &samples,
        options.target,
        &plan_options,
        &mut |b: &[u8]| size(b),
    )?;
    drop(samples);
    drop(sample_raw);
    let winner = plan.winner();
    let chain = winner.codecs();
    // What every element is checked against: the target's unit (relative for a relative
    // bound), the planned absolute bound for an information level.
    let bound = match options.target {
        Target::Information(_) => plan.abs_bound,
        _ => winner.bound,
    };

    let filters = winner.filters.clone();

    // 3. The new array (checked, its metadata not written yet).
    if dest
        .get(&super::key(path, "zarr.json").map_err(|e| QuantizeError::Create(e.to_string()))?)
        .map_err(|e| QuantizeError::Create(e.to_string()))?
        .is_some()
        || dest
            .get(&super::key(path, ".zarray").map_err(|e| QuantizeError::Create(e.to_string()))?)
            .map_err(|e| QuantizeError::Create(e.to_string()))?
            .is_some()
    {
        return Err(QuantizeError::Create(format!(
            "an array is already at {path:?} of the destination; quantize writes a new one"
        )));
    }
    let mut codecs = chain.clone();
    codecs.extend(options.compressors.iter().cloned());
    let mut meta = json!({
        "zarr_format": 3, "node_type": "array", "shape": source.shape(),
        "data_type": id.name(),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk_shape}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_json,
        "codecs": codecs,
    });
    if !source.attributes().is_empty() {
        meta["attributes"] = Value::Object(source.attributes().clone());
    }
    if let Some(names) = source.dimension_names() {
        meta["dimension_names"] =
            serde_json::to_value(names).map_err(|e| QuantizeError::Create(e.to_string()))?;
    }
    let target = prepare_array(dest.clone(), path, meta)
        .map_err(|e| QuantizeError::Create(e.to_string()))?;

    // 4. Write and verify, chunk by chunk; 5. the metadata last.
    let measured = each_chunk(&chunks, |c| {
        let raw = read(c)?;
        target
            .store_chunk(c, ArrayBytes::new_flen(raw.clone()))
            .map_err(|e| {
                let at = Element {
                    source,
                    chunk: c,
                    id,
                    shape: &shape,
                    raw: &raw,
                };
                chunk_err(c)(at.locate(e.to_string(), &fill_json, &filters))
            })?;
        let back: ArrayBytes = target
            .retrieve_chunk(c)
            .map_err(|e| chunk_err(c)(e.to_string()))?;
        let back = back.into_fixed().map_err(|e| chunk_err(c)(e.to_string()))?;
        let (x, y) = (values(id, &raw), values(id, &back));
        let (mut abs, mut rel) = (0.0f64, 0.0f64);
        for (i, (&a, &b)) in x.iter().zip(&y).enumerate() {
            let ok = if a.is_finite() {
                let err = (b - a).abs();
                abs = abs.max(err);
                if a != 0.0 {
                    rel = rel.max(err / a.abs());
                }
                match options.target {
                    Target::MaxRelError(r) => err <= r * a.abs(),
                    _ => bound.is_none_or(|e| err <= e),
                }
            } else {
                (a.is_nan() && b.is_nan()) || a == b
            };
            if !ok {
                let origin = source
                    .chunk_origin(c)
                    .map_err(|e| chunk_err(c)(e.to_string()))?;
                return Err(QuantizeError::Verify {
                    index: coordinates(&origin, &chunk_shape, i as u64),
                    value: a,
                    back: b,
                    bound: bound.unwrap_or(f64::NAN),
                });
            }
        }
        let src_size = source
            .storage()
            .size_key(&source.chunk_key(c))
            .map_err(|e| chunk_err(c)(e.to_string()))?
            .unwrap_or(0);
        let dst_size = dest
            .size_key(&target.chunk_key(c))
            .map_err(|e| chunk_err(c)(e.to_string()))?
            .unwrap_or(0);
        Ok((abs, rel, x.len() as u64, src_size, dst_size))
    })?;
    store_metadata(&target).map_err(|e| QuantizeError::Create(e.to_string()))?;
    let (mut max_abs_error, mut max_rel_error, mut elements, mut source_bytes, mut bytes) =
        (0.0f64, 0.0f64, 0, 0, 0);
    for (a, r, n, s, d) in measured {
        max_abs_error = max_abs_error.max(a);
        max_rel_error = max_rel_error.max(r);
        elements += n;
        source_bytes += s;
        bytes += d;
    }
    Ok(QuantizeReport {
        name: winner.name.clone(),
        chain,
        bound,
        max_abs_error,
        max_rel_error,
        elements,
        source_bytes,
        bytes,
        ratio: source_bytes as f64 / bytes.max(1) as f64,
    })
}

/// A chunk being written, for [`Element::locate`].
struct Element<'a, S: ?Sized> {
    source: &'a Array<S>,
    chunk: &'a [u64],
    id: DTypeId,
    shape: &'a [usize],
    raw: &'a [u8],
}

impl<S: ?Sized> Element<'_, S> {
    /// A chunk's write error told in the user's terms: zarrs runs each codec on its own,
    /// so `cast_value` reports the value `scale_offset` made of the element, at its place
    /// in the chunk. The chunk is run again through the whole chain here, and the first
    /// failing element is named by its array coordinates and its value as the source holds
    /// it. The fix keeps the bound the chain was planned for (clamping would not).
    fn locate(&self, message: String, fill: &Value, filters: &[Value]) -> String {
        let origin = self.source.chunk_origin(self.chunk).unwrap_or_default();
        let dims: Vec<u64> = self.shape.iter().map(|&d| d as u64).collect();
        let failed = DynChain::from_array_to_array_codecs(&json!(self.id.name()), fill, filters)
            .ok()
            .and_then(|chain| {
                let input = DynArray::from_le_bytes(self.id, self.shape, self.raw).ok()?;
                match chain.encode(&input) {
                    Err(CodecError::Element(e)) => Some(e),
                    _ => None,
                }
            });
        let Some(e) = failed else {
            return format!("{message} (the chunk's origin is array index {origin:?})");
        };
        let value = values(self.id, self.raw)
            .get(e.index)
            .copied()
            .unwrap_or(f64::NAN);
        format!(
            "{}: the element at array index {:?}, value {value}, is outside the range the \
             chain's parameters were fitted for ({}); refit over the data, or plan with \
             headroom (QuantizeOptions::plan.headroom), which keeps the bound",
            e.codec,
            coordinates(&origin, &dims, e.index as u64),
            e.rule,
        )
    }
}
