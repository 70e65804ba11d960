//! One call from a zarrs float array to a smaller one within a stated bound: statistics
//! merged chunk by chunk, a chain chosen from them, the new array written chunk by chunk
//! (on rayon's pool with the feature `rayon`), every chunk read back and compared, and the
//! metadata written last.

use std::sync::Arc;

use serde_json::{Value, json};
use zarrs::array::{Array, ArrayBytes};
use zarrs::storage::{ReadableStorageTraits, ReadableWritableStorageTraits};

use super::{dtype_id, prepare_array, store_metadata};
use crate::choose::{
    BitCounts, BitInformation, ChooseError, FiniteRange, FitOptions, InformationOptions,
    ScaleChoice, ScaleOffsetChoice, fit_scale_offset, keepbits_for_relative_error,
};
use crate::codec::bitround;
use crate::dispatch::DynArray;
use crate::dispatch::words::ne_words;
use crate::dtype::DTypeId;

/// What [`quantize`] keeps of the data.
///
/// ```
/// use zquant::zarrs::Target;
/// let t = Target::MaxAbsError(0.01);
/// assert_eq!(t, Target::MaxAbsError(0.01));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// Every finite element within this distance of its value: `|x' - x| <= e`.
    MaxAbsError(f64),
    /// Every finite element within this fraction of its magnitude: `|x' - x| <= r |x|`.
    MaxRelError(f64),
    /// This fraction of the data's real bit information kept (0.99 is xbitinfo's usual
    /// level), along the last axis.
    Information(f64),
}

/// Which readers the chain must open in.
///
/// ```
/// assert_eq!(zquant::zarrs::Readers::default(), zquant::zarrs::Readers::ZarrPython);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Readers {
    /// Chains zarr-python 3.4.2 opens with its built-in codecs and the `cast_value` of
    /// cast-value(-rs): `scale_offset`, `cast_value` to an integer type, `numcodecs.bitround`.
    #[default]
    ZarrPython,
    /// Any chain zquant writes (today the same chains: the choice is the planner's to widen).
    Any,
}

/// Options of [`quantize`].
///
/// ```
/// use zquant::zarrs::{QuantizeOptions, Target};
/// let o = QuantizeOptions::new(Target::MaxAbsError(0.01));
/// assert_eq!(o.headroom, 0.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeOptions {
    /// The bound or information level.
    pub target: Target,
    /// The readers the chain must open in.
    pub readers: Readers,
    /// The fraction of the data's finite span kept free below and above it, for later
    /// writes of values outside the data's range (absolute bounds only).
    pub headroom: f64,
    /// The bytes->bytes codecs after `bytes` (default: zstd level 5).
    pub compressors: Vec<Value>,
}

impl QuantizeOptions {
    /// The options for `target`: zarr-python's readers, no headroom, zstd.
    pub fn new(target: Target) -> Self {
        QuantizeOptions {
            target,
            readers: Readers::default(),
            headroom: 0.0,
            compressors: vec![
                json!({"name": "zstd", "configuration": {"level": 5, "checksum": false}}),
            ],
        }
    }
}

/// What [`quantize`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeReport {
    /// The array->array codecs chosen, as in `zarr.json`.
    pub chain: Vec<Value>,
    /// The bound the chain guarantees for every finite element in the range planned for
    /// (`None` for an information level).
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

/// Statistics of the source, merged chunk by chunk.
#[derive(Clone, Debug, Default)]
struct Stats {
    range: Option<FiniteRange>,
    nan: u64,
    inf: u64,
    counts: Option<BitCounts>,
}

impl Stats {
    fn merge(mut self, other: Stats) -> Result<Stats, ChooseError> {
        self.range = match (self.range, other.range) {
            (Some(a), Some(b)) => Some(FiniteRange {
                min: a.min.min(b.min),
                max: a.max.max(b.max),
            }),
            (a, b) => a.or(b),
        };
        self.nan += other.nan;
        self.inf += other.inf;
        self.counts = match (self.counts, other.counts) {
            (Some(mut a), Some(b)) => {
                a.merge(&b)?;
                Some(a)
            }
            (a, b) => a.or(b),
        };
        Ok(self)
    }
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

/// A chosen chain: the array->array codecs and the bound they guarantee.
struct Chosen {
    chain: Vec<Value>,
    bound: Option<f64>,
}

/// The seam where a planner chooses the chain from the merged statistics: today the
/// narrowest unsigned integer type whose `scale_offset` + `cast_value` fit meets an
/// absolute bound (the smallest scale that meets it: the fewest codes), `numcodecs.bitround`
/// for a relative bound or an information level.
fn choose(
    id: DTypeId,
    fill: f64,
    stats: &Stats,
    options: &QuantizeOptions,
) -> Result<Chosen, QuantizeError> {
    match options.target {
        Target::MaxAbsError(e) => {
            if stats.inf > 0 {
                return Err(QuantizeError::Source(format!(
                    "{} infinite elements: an absolute bound is met by scale_offset + \
                     cast_value to an integer type, which has no code for them; use \
                     --max-rel-error or --inflevel",
                    stats.inf
                )));
            }
            // The fill value is encoded too (zarrs pads edge chunks with it, and an
            // array's fill must survive cast_value's round trip): it joins the range.
            let mut range = stats.range.unwrap_or(FiniteRange { min: 0.0, max: 0.0 });
            if fill.is_finite() {
                range.min = range.min.min(fill);
                range.max = range.max.max(fill);
            }
            if !(options.headroom >= 0.0 && options.headroom.is_finite()) {
                return Err(QuantizeError::Source(format!(
                    "headroom must be a finite fraction >= 0, got {}",
                    options.headroom
                )));
            }
            let pad = (range.max - range.min) * options.headroom;
            range.min -= pad;
            range.max += pad;
            let fit = FitOptions {
                nan_sentinel: stats.nan > 0 || fill.is_nan(),
                scale: ScaleChoice::Smallest,
            };
            let mut last = None;
            for target in [DTypeId::UInt8, DTypeId::UInt16, DTypeId::UInt32] {
                match fit_scale_offset(id, target, range, e, fit) {
                    Ok(c) => {
                        let mut chain = match c.codecs() {
                            Value::Array(v) => v,
                            v => vec![v],
                        };
                        if fill.is_finite() && !map_fill(id, fill, &c, &mut chain) {
                            last = Some(ChooseError::NoFit(target.name()));
                            continue;
                        }
                        return Ok(Chosen {
                            chain,
                            bound: Some(c.max_abs_error),
                        });
                    }
                    Err(err) => last = Some(err),
                }
            }
            Err(last.map_or_else(
                || QuantizeError::Source("no integer type".into()),
                QuantizeError::Choose,
            ))
        }
        Target::MaxRelError(r) => {
            let keepbits = keepbits_for_relative_error(id.kind(), r)?;
            Ok(Chosen {
                chain: vec![bitround_codec(keepbits)],
                bound: Some(r),
            })
        }
        Target::Information(level) => {
            let counts = stats.counts.as_ref().ok_or_else(|| {
                QuantizeError::Source("no chunk to measure information on".into())
            })?;
            let info = BitInformation::from_counts(counts, &InformationOptions::default())?;
            let keepbits = info.keepbits(level)?.max(1);
            Ok(Chosen {
                chain: vec![bitround_codec(keepbits)],
                bound: None,
            })
        }
    }
}

/// Make a finite fill value survive `cast_value`'s round trip (the spec's rule for the
/// fill value each codec receives): `scale_offset` sends it to `(fill - offset) * scale`
/// in the source type's arithmetic, rarely an integer. When it is not, a code outside the
/// data's codes (and not the NaN code) stands for exactly that value, both ways, in
/// `cast_value`'s `scalar_map`: elements equal to the fill value take it too and decode to
/// within a rounding of the fill value. `false` when the target has no free code.
fn map_fill(id: DTypeId, fill: f64, c: &ScaleOffsetChoice, chain: &mut [Value]) -> bool {
    let scaled = match id {
        DTypeId::Float32 => f64::from((fill as f32 - c.offset as f32) * c.scale as f32),
        _ => (fill - c.offset) * c.scale,
    };
    let bits = c.target.size() as u32 * 8;
    let (lo, hi) = (0i128, (1i128 << bits) - 1);
    if scaled.fract() == 0.0 && (lo as f64..=hi as f64).contains(&scaled) {
        return true;
    }
    let taken = |k: i128| (c.codes.0..=c.codes.1).contains(&k) || c.nan_code == Some(k);
    let Some(code) = [c.codes.1 + 1, c.codes.1 + 2, c.codes.0 - 1]
        .into_iter()
        .find(|&k| (lo..=hi).contains(&k) && !taken(k))
    else {
        return false;
    };
    let Some(cast) = chain.get_mut(1).and_then(|c| c.get_mut("configuration")) else {
        return false;
    };
    let map = cast.as_object_mut().map(|m| {
        m.entry("scalar_map")
            .or_insert_with(|| json!({"encode": [], "decode": []}))
    });
    let Some(map) = map else { return false };
    let code = Value::from(code as i64);
    for (key, pair) in [
        ("encode", json!([scaled, code])),
        ("decode", json!([code, scaled])),
    ] {
        match map.get_mut(key).and_then(Value::as_array_mut) {
            Some(list) => list.push(pair),
            None => map[key] = json!([pair]),
        }
    }
    true
}

fn bitround_codec(keepbits: u32) -> Value {
    json!({"name": bitround::ALIAS, "configuration": {"keepbits": keepbits}})
}

/// Quantize the float32 or float64 array `source` (any dimensionality; a v2 or v3 array,
/// opened with [`open_array`](super::open_array)) into a new array at `path` of `dest`,
/// within `options.target`, and return what was done.
///
/// 1. **Plan**: one read of the source, chunk by chunk, merges the statistics the target
///    needs (finite range, NaN and infinity counts, bit counts along the last axis): the
///    array never has to fit in memory. The chain is chosen from them: for an absolute
///    bound `scale_offset` + `cast_value` to the narrowest of uint8/uint16/uint32 that meets
///    it (NaN as the type's largest code), for a relative bound or an information level
///    `numcodecs.bitround` — chains plain zarr-python 3.4.2 opens.
/// 2. **Write**: the new array has the source's shape, chunk shape, data type, fill value,
///    dimension names and attributes, and the codecs `[chain…, bytes, compressors…]`; it is
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
    let fill = values(id, source.fill_value().as_ne_bytes())
        .first()
        .copied()
        .unwrap_or(0.0);
    let chunks = all_chunks(source.chunk_grid_shape());
    let info = matches!(options.target, Target::Information(_));

    // 1. Statistics, chunk by chunk.
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
        let words =
            ne_words(id, &raw).ok_or_else(|| chunk_err(c)("chunk bytes not aligned".into()))?;
        let range = FiniteRange::of_words(id, words).map_err(|e| chunk_err(c)(e.to_string()))?;
        let (mut nan, mut inf) = (0, 0);
        for v in values(id, &raw) {
            nan += u64::from(v.is_nan());
            inf += u64::from(v.is_infinite());
        }
        let counts = if info {
            let shape: Vec<usize> = chunk_shape.iter().map(|&d| d as usize).collect();
            let opts = InformationOptions {
                masked_bits: fill.is_finite().then(|| match id {
                    DTypeId::Float32 => u64::from((fill as f32).to_bits()),
                    _ => fill.to_bits(),
                }),
                ..InformationOptions::default()
            };
            Some(BitCounts::of_words(id, words, &shape, &opts)?)
        } else {
            None
        };
        Ok(Stats {
            range,
            nan,
            inf,
            counts,
        })
    })?;
    let stats = per_chunk
        .into_iter()
        .try_fold(Stats::default(), Stats::merge)?;

    // 2. The chain, and the new array (checked, its metadata not written yet).
    let chosen = choose(id, fill, &stats, options)?;
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
    let mut codecs = chosen.chain.clone();
    codecs.push(json!({"name": "bytes", "configuration": {"endian": "little"}}));
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

    // 3. Write and verify, chunk by chunk; 4. the metadata last.
    let bound = chosen.bound;
    let measured = each_chunk(&chunks, |c| {
        let raw = read(c)?;
        target
            .store_chunk(c, ArrayBytes::new_flen(raw.clone()))
            .map_err(|e| {
                let origin = source.chunk_origin(c).unwrap_or_default();
                chunk_err(c)(format!(
                    "{e} (the chunk's origin is array index {origin:?})"
                ))
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
                    Target::MaxAbsError(_) => bound.is_none_or(|e| err <= e),
                    Target::MaxRelError(r) => err <= r * a.abs(),
                    Target::Information(_) => b.is_finite(),
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
        chain: chosen.chain,
        bound: chosen.bound,
        max_abs_error,
        max_rel_error,
        elements,
        source_bytes,
        bytes,
        ratio: source_bytes as f64 / bytes.max(1) as f64,
    })
}
