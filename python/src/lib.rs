//! `zquant._zquant`: the thin PyO3 layer of the `zquant` Python package.
//!
//! Everything here converts and forwards: JSON metadata crosses as text (parsed by
//! `serde_json` into what [`zquant::DynChain::from_metadata`] takes), element buffers cross
//! as one-dimensional, C-contiguous NumPy arrays of storage words (`uint8`, `uint16`,
//! `uint32`, `uint64`, native byte order), borrowed, never copied, and written in place into
//! an output the Python side allocated once. The Python side (`zquant/__init__.py`) turns any
//! array into such a word view (a copy only for strided or byte-swapped input) and gives
//! the shape separately. The GIL is released (`Python::detach`) while Rust runs. Every
//! zquant error becomes `zquant.CodecError` (a `ValueError`) with zquant's message.

use std::sync::Mutex;

use numpy::ndarray::{ArrayView1, ArrayViewD, Axis};
use numpy::{
    PyArray1, PyArray2, PyArrayDescrMethods, PyReadonlyArray1, PyReadonlyArrayDyn,
    PyReadwriteArray1, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::Value;
use zquant::choose::{self, BitCounts, FitOptions, InformationOptions};
use zquant::dtype::{Words, WordsMut};
use zquant::plan as planner;
use zquant::zarr::PackBits;
use zquant::{DTypeId, DynChain};

pyo3::create_exception!(
    _zquant,
    CodecError,
    PyValueError,
    "A codec, metadata or input error from zquant; the message names the codec, rule, element \
     index and value, and the fix."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    CodecError::new_err(e.to_string())
}

fn parse(what: &str, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| err(format!("{what} is not valid JSON: {e}")))
}

fn dtype_id(name: &str) -> PyResult<DTypeId> {
    name.parse::<DTypeId>().map_err(err)
}

/// A read-only buffer of storage words.
enum InWords<'py> {
    U8(PyReadonlyArray1<'py, u8>),
    U16(PyReadonlyArray1<'py, u16>),
    U32(PyReadonlyArray1<'py, u32>),
    U64(PyReadonlyArray1<'py, u64>),
}

/// A writable buffer of storage words.
enum OutWords<'py> {
    U8(PyReadwriteArray1<'py, u8>),
    U16(PyReadwriteArray1<'py, u16>),
    U32(PyReadwriteArray1<'py, u32>),
    U64(PyReadwriteArray1<'py, u64>),
}

/// A read-only N-d array of storage words whose last axis is contiguous (a chunk of a
/// larger array, as zarr passes it to a codec when writing).
enum InRows<'py> {
    U8(PyReadonlyArrayDyn<'py, u8>),
    U16(PyReadonlyArrayDyn<'py, u16>),
    U32(PyReadonlyArrayDyn<'py, u32>),
    U64(PyReadonlyArrayDyn<'py, u64>),
}

/// Words gathered per call of the chain from a strided input: 128 KiB of `u64`, in L2.
const GATHER_WORDS: usize = 1 << 14;

/// Run `run` over the rows (last-axis lanes, each contiguous) of `src` in C order, writing
/// consecutive output words: short rows are gathered into a cache-sized block first, long
/// ones run in place. `elements` is the element count of `src`; both buffers hold a whole
/// number of words per element.
fn run_rows<T: Copy + Default>(
    src: ArrayViewD<'_, T>,
    elements: usize,
    mut out: WordsMut<'_>,
    wrap: fn(&[T]) -> Words<'_>,
    run: &(dyn Fn(Words<'_>, usize, WordsMut<'_>) -> Result<(), zquant::CodecError> + Sync),
) -> Result<(), String> {
    let ndim = src.ndim();
    if ndim == 0 || src.is_empty() {
        return Err("not a strided N-d input".into());
    }
    let words = src.len();
    if elements == 0 || words % elements != 0 || out.len() % elements != 0 {
        return Err("the buffers do not hold whole elements".into());
    }
    let (k_in, k_out) = (words / elements, out.len() / elements);
    let mut scratch: Vec<T> = Vec::with_capacity(GATHER_WORDS);
    let mut at = 0usize; // output words written
    let flush = |block: &[T], out: &mut WordsMut<'_>, at: &mut usize| {
        let n = block.len() / k_in;
        let end = *at + n * k_out;
        run(wrap(block), n, out.sub(*at, end)).map_err(|e| e.to_string())?;
        *at = end;
        Ok::<(), String>(())
    };
    for row in src.lanes(Axis(ndim - 1)) {
        let row = row.to_slice().ok_or("a row is not contiguous")?;
        if row.len() % k_in != 0 {
            return Err("a row does not hold whole elements".into());
        }
        if row.len() >= GATHER_WORDS / 2 {
            if !scratch.is_empty() {
                flush(&scratch, &mut out, &mut at)?;
                scratch.clear();
            }
            flush(row, &mut out, &mut at)?;
            continue;
        }
        if scratch.len() + row.len() > GATHER_WORDS {
            flush(&scratch, &mut out, &mut at)?;
            scratch.clear();
        }
        scratch.extend_from_slice(row);
    }
    if !scratch.is_empty() {
        flush(&scratch, &mut out, &mut at)?;
    }
    if at != out.len() {
        return Err("the output does not match the input".into());
    }
    Ok(())
}

/// The byte width of an array of unsigned storage words, checked before extracting the
/// typed array: trying each width in turn (a derived `FromPyObject`) builds and drops an
/// error per miss, which costs more than encoding a small chunk.
fn word_width(ob: &Bound<'_, PyAny>) -> PyResult<usize> {
    let arr = ob
        .cast::<PyUntypedArray>()
        .map_err(|_| err("expected a NumPy array of storage words (uint8/16/32/64)"))?;
    let dt = arr.dtype();
    if dt.kind() != b'u' || !matches!(dt.itemsize(), 1 | 2 | 4 | 8) {
        return Err(err(format!(
            "expected storage words (uint8/16/32/64), got an array of {}",
            dt.str()?
        )));
    }
    Ok(dt.itemsize())
}

impl<'py> InWords<'py> {
    fn new(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(match word_width(ob)? {
            1 => InWords::U8(ob.extract()?),
            2 => InWords::U16(ob.extract()?),
            4 => InWords::U32(ob.extract()?),
            _ => InWords::U64(ob.extract()?),
        })
    }
}

impl<'py> OutWords<'py> {
    fn new(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(match word_width(ob)? {
            1 => OutWords::U8(ob.extract()?),
            2 => OutWords::U16(ob.extract()?),
            4 => OutWords::U32(ob.extract()?),
            _ => OutWords::U64(ob.extract()?),
        })
    }
}

impl<'py> InRows<'py> {
    fn new(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(match word_width(ob)? {
            1 => InRows::U8(ob.extract()?),
            2 => InRows::U16(ob.extract()?),
            4 => InRows::U32(ob.extract()?),
            _ => InRows::U64(ob.extract()?),
        })
    }
}

const NOT_CONTIGUOUS: &str = "the word buffer must be one-dimensional and contiguous";

impl InWords<'_> {
    fn words(&self) -> PyResult<Words<'_>> {
        let e = |_| err(NOT_CONTIGUOUS);
        Ok(match self {
            InWords::U8(a) => Words::U8(a.as_slice().map_err(e)?),
            InWords::U16(a) => Words::U16(a.as_slice().map_err(e)?),
            InWords::U32(a) => Words::U32(a.as_slice().map_err(e)?),
            InWords::U64(a) => Words::U64(a.as_slice().map_err(e)?),
        })
    }
}

impl OutWords<'_> {
    fn words(&mut self) -> PyResult<WordsMut<'_>> {
        let e = |_| err(NOT_CONTIGUOUS);
        Ok(match self {
            OutWords::U8(a) => WordsMut::U8(a.as_slice_mut().map_err(e)?),
            OutWords::U16(a) => WordsMut::U16(a.as_slice_mut().map_err(e)?),
            OutWords::U32(a) => WordsMut::U32(a.as_slice_mut().map_err(e)?),
            OutWords::U64(a) => WordsMut::U64(a.as_slice_mut().map_err(e)?),
        })
    }
}

/// A chain of zquant codecs bound to a data type and fill value (`zquant.DynChain`).
/// Immutable, so it is shared between threads without a lock.
#[pyclass(frozen, module = "zquant._zquant")]
struct RustChain {
    chain: DynChain,
}

#[pymethods]
impl RustChain {
    /// Build from the JSON texts of a `data_type`, a `fill_value` and a `codecs` list.
    #[new]
    fn new(data_type: &str, fill_value: &str, codecs: &str) -> PyResult<Self> {
        let dt = parse("data_type", data_type)?;
        let fill = parse("fill_value", fill_value)?;
        let codecs = match parse("codecs", codecs)? {
            Value::Array(v) => v,
            other => return Err(err(format!("codecs must be a JSON list, got {other}"))),
        };
        let chain = DynChain::from_metadata(&dt, &fill, &codecs).map_err(err)?;
        Ok(RustChain { chain })
    }

    /// The decoded data type's JSON text.
    #[getter]
    fn data_type(&self) -> String {
        self.chain.data_type().to_json().to_string()
    }

    /// The encoded data type's JSON text.
    #[getter]
    fn encoded_data_type(&self) -> String {
        self.chain.encoded_data_type().to_json().to_string()
    }

    /// The encoded fill value's JSON text.
    #[getter]
    fn encoded_fill_value(&self) -> String {
        self.chain
            .encoded_fill_value()
            .first_to_json()
            .unwrap_or(Value::Null)
            .to_string()
    }

    /// The encoded fill value's storage words (zero-extended; complex types use two).
    #[getter]
    fn encoded_fill_words(&self) -> Vec<u64> {
        let fill = self.chain.encoded_fill_value();
        let k = fill.dtype().words_per_element().max(1);
        fill.first_scalar()
            .map(|x| x[..k.min(2)].to_vec())
            .unwrap_or_default()
    }

    /// The `codecs` list's JSON text, as zquant writes it.
    #[getter]
    fn codecs(&self) -> String {
        self.chain.to_metadata().to_string()
    }

    /// Valid but likely unintended metadata, one message per finding.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.chain.warnings()
    }

    /// Encode the words of `shape`'s elements into `out`'s words, without the GIL.
    fn encode_into(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        shape: Vec<usize>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (src, mut out) = (InWords::new(src)?, OutWords::new(out)?);
        let (src, dst) = (src.words()?, out.words()?);
        let chain = &self.chain;
        py.detach(|| chain.encode_words(src, &shape, dst))
            .map_err(err)
    }

    /// Encode or decode a strided input (an N-d word view whose rows are contiguous) of
    /// `elements` elements into `out`'s contiguous words, in C order, without the GIL and
    /// without a copy of the input (rows are gathered a cache-sized block at a time). Any
    /// error raises `CodecError` without a position: the caller reruns the contiguous
    /// path for the located message.
    fn run_strided_into(
        &self,
        py: Python<'_>,
        encode: bool,
        src: &Bound<'_, PyAny>,
        elements: usize,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (src, mut out) = (InRows::new(src)?, OutWords::new(out)?);
        let dst = out.words()?;
        let chain = &self.chain;
        let run = move |w: Words<'_>, n: usize, o: WordsMut<'_>| {
            if encode {
                chain.encode_words(w, &[n], o)
            } else {
                chain.decode_words(w, &[n], o)
            }
        };
        let result = match &src {
            InRows::U8(a) => {
                let v = a.as_array();
                py.detach(|| run_rows(v, elements, dst, |x| Words::U8(x), &run))
            }
            InRows::U16(a) => {
                let v = a.as_array();
                py.detach(|| run_rows(v, elements, dst, |x| Words::U16(x), &run))
            }
            InRows::U32(a) => {
                let v = a.as_array();
                py.detach(|| run_rows(v, elements, dst, |x| Words::U32(x), &run))
            }
            InRows::U64(a) => {
                let v = a.as_array();
                py.detach(|| run_rows(v, elements, dst, |x| Words::U64(x), &run))
            }
        };
        result.map_err(err)
    }

    /// Decode the words of `shape`'s encoded elements into `out`'s words, without the GIL.
    fn decode_into(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        shape: Vec<usize>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (src, mut out) = (InWords::new(src)?, OutWords::new(out)?);
        let (src, dst) = (src.words()?, out.words()?);
        let chain = &self.chain;
        py.detach(|| chain.decode_words(src, &shape, dst))
            .map_err(err)
    }
}

/// Check the JSON text of a `packbits` `configuration` without a data type: the Rust core's
/// one parser (`zquant::zarr::packbits::parse_configuration`), so that `zquant.zarr.PackBits`
/// states no rule of its own.
#[pyfunction]
fn check_packbits_configuration(configuration: &str) -> PyResult<()> {
    let config = parse("configuration", configuration)?;
    zquant::zarr::packbits::parse_configuration(Some(&config)).map_err(err)?;
    Ok(())
}

/// The `packbits` codec bound to a data type (`zquant.zarr.PackBits` runs it). Immutable.
#[pyclass(frozen, module = "zquant._zquant")]
struct RustPackBits {
    codec: PackBits,
}

#[pymethods]
impl RustPackBits {
    /// Build from a data type name and the JSON text of the codec's `configuration`
    /// (`"null"` for none).
    #[new]
    fn new(data_type: &str, configuration: &str) -> PyResult<Self> {
        let config = parse("configuration", configuration)?;
        let config = (!config.is_null()).then_some(config);
        let codec = PackBits::new(dtype_id(data_type)?, config.as_ref()).map_err(err)?;
        Ok(RustPackBits { codec })
    }

    /// Bits per element (`k`).
    #[getter]
    fn bits_per_element(&self) -> u32 {
        self.codec.bits_per_element()
    }

    /// The configuration's JSON text, as zquant writes it.
    #[getter]
    fn configuration(&self) -> String {
        self.codec.configuration().to_string()
    }

    /// The encoded byte count of `elements` elements.
    fn encoded_len(&self, elements: usize) -> PyResult<usize> {
        self.codec.encoded_len(elements).map_err(err)
    }

    /// Pack the storage words `src` (contiguous, borrowed) into the `uint8` array `out`
    /// (exactly `encoded_len` bytes), without the GIL.
    fn encode_into(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let src = InWords::new(src)?;
        let mut out = OutWords::new(out)?;
        let (src, dst) = (src.words()?, out.words()?);
        let WordsMut::U8(dst) = dst else {
            return Err(err("packbits: the output must be a uint8 array"));
        };
        let codec = &self.codec;
        py.detach(|| codec.encode_into(src, dst)).map_err(err)
    }

    /// Unpack the `uint8` array `src` into the storage words `out` (its length: the
    /// elements' words), without the GIL.
    fn decode_into(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let src = InWords::new(src)?;
        let mut out = OutWords::new(out)?;
        let (src, dst) = (src.words()?, out.words()?);
        let Words::U8(src) = src else {
            return Err(err("packbits: the packed bytes must be a uint8 array"));
        };
        let codec = &self.codec;
        py.detach(|| codec.decode_into(src, dst)).map_err(err)
    }
}

/// 64 bytes, 64-byte aligned: the unit of the pooled buffers (any element type, SIMD lines).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Buffers of at least this many bytes are pooled; smaller ones come from `malloc`, whose
/// own free lists serve them without page faults.
const POOL_MIN_BYTES: usize = 1 << 16;

/// Released output buffers, kept for the next output of the same size. A fresh
/// multi-megabyte buffer is `mmap`ed by the allocator and costs a page fault per 4 KiB
/// page on first write, which for a 2 MiB chunk costs more (about 1 ms on a VM) than
/// encoding it; a pooled buffer's pages are already mapped.
struct Pool {
    limit: usize,
    held: usize,
    free: Vec<Vec<Line>>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    limit: 64 << 20,
    held: 0,
    free: Vec::new(),
});

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The owner of a pooled buffer: the base object of the NumPy array viewing it. When the
/// last array or view of it is gone, Python drops it and the buffer goes back to the pool
/// (or to the allocator when the pool is full).
#[pyclass(frozen, module = "zquant._zquant")]
struct PooledBuffer {
    lines: Mutex<Vec<Line>>,
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        let lines = std::mem::take(self.lines.get_mut().unwrap_or_else(|e| e.into_inner()));
        let bytes = lines.len() * 64;
        if bytes < POOL_MIN_BYTES {
            return;
        }
        let mut p = pool();
        if p.held + bytes <= p.limit {
            p.held += bytes;
            p.free.push(lines);
        }
    }
}

/// `n` zeroed lines from `alloc_zeroed` (calloc: a large block's pages come zeroed from
/// the kernel on first touch, not written here), or `None` when that fails.
fn zeroed_lines(n: usize) -> Option<Vec<Line>> {
    let layout = std::alloc::Layout::array::<Line>(n).ok()?;
    if layout.size() == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the layout has a nonzero size; all-zero bytes are a valid `Line`; the
    // pointer comes from the global allocator with exactly this layout, which is the one
    // `Vec<Line>` with capacity `n` frees with.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<Line>();
        if ptr.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(ptr, n, n))
    }
}

/// An uninitialized-looking (`np.empty`) one-dimensional `uint8` array of `nbytes`,
/// 64-byte aligned, whose memory comes from and returns to zquant's buffer pool.
#[pyfunction]
fn empty(py: Python<'_>, nbytes: usize) -> PyResult<Bound<'_, PyArray1<u8>>> {
    let n = nbytes.div_ceil(64).max(1);
    let reused = if nbytes >= POOL_MIN_BYTES {
        let mut p = pool();
        let found = p.free.iter().position(|v| v.len() == n);
        found.map(|i| {
            let v = p.free.swap_remove(i);
            p.held -= v.len() * 64;
            v
        })
    } else {
        None
    };
    let mut lines = match reused {
        Some(v) => v,
        None => zeroed_lines(n).ok_or_else(|| err(format!("cannot allocate {nbytes} bytes")))?,
    };
    let ptr = lines.as_mut_ptr().cast::<u8>();
    let owner = Bound::new(
        py,
        PooledBuffer {
            lines: Mutex::new(lines),
        },
    )?;
    // SAFETY: the memory is the `Vec` inside `owner`, which is never resized or touched
    // by Rust again until `owner` is dropped, and `owner` becomes the array's base object,
    // so it outlives the array and every view of it. `nbytes <= n * 64`.
    unsafe {
        let view = ArrayView1::from_shape_ptr(nbytes, ptr);
        Ok(PyArray1::borrow_from_array(&view, owner.into_any()))
    }
}

/// Set the buffer pool's limit in bytes (0 turns it off and frees what it holds); returns
/// the previous limit.
#[pyfunction]
fn set_buffer_pool(limit: usize) -> usize {
    let mut p = pool();
    let before = p.limit;
    p.limit = limit;
    while p.held > limit {
        match p.free.pop() {
            Some(v) => p.held -= v.len() * 64,
            None => break,
        }
    }
    before
}

/// `(limit, bytes held, buffers held)` of the buffer pool.
#[pyfunction]
fn buffer_pool() -> (usize, usize, usize) {
    let p = pool();
    (p.limit, p.held, p.free.len())
}

fn info_options(
    axis: usize,
    confidence: f64,
    mask_nan: bool,
    masked_bits: Option<u64>,
) -> InformationOptions {
    InformationOptions {
        axis: Some(axis),
        confidence,
        set_zero_insignificant: true,
        mask_nan,
        masked_bits,
    }
}

/// The mergeable bit-pair counts of the words of an array of `data_type` and `shape` (C
/// order) along `axis`: `(pairs, counts)`, counts a 3 x 64 `uint64` array (`a`, `b`,
/// `both` per bit, least significant first).
#[pyfunction]
#[pyo3(signature = (data_type, words, shape, axis, mask_nan=true, masked_bits=None))]
fn bit_counts<'py>(
    py: Python<'py>,
    data_type: &str,
    words: &Bound<'_, PyAny>,
    shape: Vec<usize>,
    axis: usize,
    mask_nan: bool,
    masked_bits: Option<u64>,
) -> PyResult<(u64, Bound<'py, PyArray2<u64>>)> {
    let id = dtype_id(data_type)?;
    let words = InWords::new(words)?;
    let w = words.words()?;
    let opts = info_options(axis, 0.5, mask_nan, masked_bits);
    let counts = py
        .detach(|| BitCounts::of_words(id, w, &shape, &opts))
        .map_err(err)?;
    let (pairs, parts) = counts.parts();
    let rows: Vec<Vec<u64>> = parts.iter().map(|r| r.to_vec()).collect();
    let arr = PyArray2::from_vec2(py, &rows).map_err(err)?;
    Ok((pairs, arr))
}

fn counts_from(
    data_type: &str,
    axis: usize,
    pairs: u64,
    counts: PyReadonlyArray1<'_, u64>,
) -> PyResult<BitCounts> {
    let id = dtype_id(data_type)?;
    let format = id
        .format()
        .ok_or_else(|| err(format!("{id} is not a real (integer or float) data type")))?;
    let flat = counts.as_slice().map_err(|_| err(NOT_CONTIGUOUS))?;
    if flat.len() != 3 * 64 {
        return Err(err(format!(
            "bit counts must be 3 x 64 values, got {}",
            flat.len()
        )));
    }
    let mut parts = [[0u64; 64]; 3];
    for (row, chunk) in parts.iter_mut().zip(flat.chunks_exact(64)) {
        row.copy_from_slice(chunk);
    }
    BitCounts::from_parts(format, axis, pairs, parts).map_err(err)
}

/// The information per bit (most significant first) of merged counts (`counts` flattened,
/// 192 values).
#[pyfunction]
fn bit_information<'py>(
    py: Python<'py>,
    data_type: &str,
    axis: usize,
    pairs: u64,
    counts: PyReadonlyArray1<'_, u64>,
    confidence: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let counts = counts_from(data_type, axis, pairs, counts)?;
    let info = counts
        .information(&info_options(axis, confidence, true, None))
        .map_err(err)?;
    Ok(PyArray1::from_slice(py, info.per_bit()))
}

/// xbitinfo's keepbits for `level` of the information of merged counts, clamped to what
/// `bitround` accepts.
#[pyfunction]
fn keepbits(
    data_type: &str,
    axis: usize,
    pairs: u64,
    counts: PyReadonlyArray1<'_, u64>,
    confidence: f64,
    level: f64,
) -> PyResult<u32> {
    let counts = counts_from(data_type, axis, pairs, counts)?;
    let info = counts
        .information(&info_options(axis, confidence, true, None))
        .map_err(err)?;
    info.keepbits(level).map_err(err)
}

/// The smallest and largest finite values of the words of a real type, or `None`.
#[pyfunction]
fn finite_range(
    py: Python<'_>,
    data_type: &str,
    words: &Bound<'_, PyAny>,
) -> PyResult<Option<(f64, f64)>> {
    let id = dtype_id(data_type)?;
    let words = InWords::new(words)?;
    let w = words.words()?;
    let r = py
        .detach(|| choose::FiniteRange::of_words(id, w))
        .map_err(err)?;
    Ok(r.map(|r| (r.min, r.max)))
}

/// `scale_offset` + `cast_value` for `[lo, hi]` of `source` stored as `target` within
/// `max_abs_error`: `(codecs JSON text, guaranteed max_abs_error)`.
#[pyfunction]
fn fit_scale_offset(
    source: &str,
    target: &str,
    lo: f64,
    hi: f64,
    max_abs_error: f64,
    nan_sentinel: bool,
) -> PyResult<(String, f64)> {
    let (s, t) = (dtype_id(source)?, dtype_id(target)?);
    let range = choose::FiniteRange { min: lo, max: hi };
    let fit = choose::fit_scale_offset(
        s,
        t,
        range,
        max_abs_error,
        FitOptions {
            nan_sentinel,
            ..Default::default()
        },
    )
    .map_err(err)?;
    Ok((fit.codecs().to_string(), fit.max_abs_error))
}

/// The planner's statistics of one chunk of a float array (`words` of `data_type`, `shape`
/// in C order) as JSON text; `information`: also count bit pairs along `axis`.
#[pyfunction]
#[pyo3(signature = (data_type, words, shape, axis, information=false))]
fn plan_stats(
    py: Python<'_>,
    data_type: &str,
    words: &Bound<'_, PyAny>,
    shape: Vec<usize>,
    axis: usize,
    information: bool,
) -> PyResult<String> {
    let id = dtype_id(data_type)?;
    let words = InWords::new(words)?;
    let w = words.words()?;
    let axis = information.then_some(axis);
    let stats = py
        .detach(|| planner::PlanStats::of_words(id, w, &shape, axis))
        .map_err(err)?;
    Ok(stats.to_json().to_string())
}

/// Two pieces' planner statistics (JSON text) merged.
#[pyfunction]
fn plan_stats_merge(a: &str, b: &str) -> PyResult<String> {
    let mut x = planner::PlanStats::from_json(&parse("statistics", a)?).map_err(err)?;
    let y = planner::PlanStats::from_json(&parse("statistics", b)?).map_err(err)?;
    x.merge(&y).map_err(err)?;
    Ok(x.to_json().to_string())
}

/// A Python fill value as Zarr JSON: numbers as numbers, NaN and infinities by name, a
/// string as given (the data type's own encodings, such as `"0x7fc00000"`).
fn fill_json(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        return Ok(Value::from(0));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(Value::String(s));
    }
    if let Ok(b) = v.extract::<bool>() {
        return Ok(Value::from(u8::from(b)));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(Value::from(i));
    }
    let x: f64 = v
        .extract()
        .map_err(|_| err(format!("fill value {v} is not a number or a string")))?;
    Ok(if x.is_nan() {
        Value::from("NaN")
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Value::from(x)
    })
}

/// Plan the chain for an array of `data_type` (see `zquant::plan::plan`): `stats` from
/// `plan_stats`/`plan_stats_merge`, `samples` a few chunks as `(words, shape)`, `target` and
/// `options` JSON text, `size` the compressed size of a serialized chunk's bytes. Returns
/// the plan's JSON text.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn plan(
    data_type: &str,
    stats: &str,
    samples: Vec<(Bound<'_, PyAny>, Vec<usize>)>,
    fill_value: &Bound<'_, PyAny>,
    target: &str,
    options: &str,
    size: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let id = dtype_id(data_type)?;
    let stats = planner::PlanStats::from_json(&parse("statistics", stats)?).map_err(err)?;
    let target = planner::Target::from_json(&parse("target", target)?).map_err(err)?;
    let options = planner::PlanOptions::from_json(&parse("options", options)?).map_err(err)?;
    let fill = fill_json(fill_value)?;
    let held: Vec<(InWords<'_>, Vec<usize>)> = samples
        .iter()
        .map(|(w, shape)| Ok((InWords::new(w)?, shape.clone())))
        .collect::<PyResult<_>>()?;
    let words: Vec<(Words<'_>, &[usize])> = held
        .iter()
        .map(|(w, shape)| Ok((w.words()?, shape.as_slice())))
        .collect::<PyResult<_>>()?;
    let py = size.py();
    let mut failure: Option<PyErr> = None;
    let mut measure = |bytes: &[u8]| -> usize {
        if failure.is_some() {
            return 0;
        }
        match size
            .call1((pyo3::types::PyBytes::new(py, bytes),))
            .and_then(|r| r.extract::<usize>())
        {
            Ok(n) => n,
            Err(e) => {
                failure = Some(e);
                0
            }
        }
    };
    let result = planner::plan(id, &fill, &stats, &words, target, &options, &mut measure);
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(result.map_err(err)?.to_json().to_string())
}

/// Facts about a data type by its Zarr name: `(size in bytes, word bits, words per
/// element, is real)`.
#[pyfunction]
fn dtype_info(name: &str) -> PyResult<(usize, u32, usize, bool)> {
    let id = dtype_id(name)?;
    Ok((
        id.size(),
        id.word_bits(),
        id.words_per_element(),
        id.is_real(),
    ))
}

/// Every built-in data type's Zarr name.
#[pyfunction]
fn dtype_names() -> Vec<&'static str> {
    DTypeId::ALL.iter().map(|d| d.name()).collect()
}

#[pymodule]
fn _zquant(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CodecError", m.py().get_type::<CodecError>())?;
    m.add_class::<RustChain>()?;
    m.add_class::<PooledBuffer>()?;
    m.add_class::<RustPackBits>()?;
    m.add_function(wrap_pyfunction!(check_packbits_configuration, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(set_buffer_pool, m)?)?;
    m.add_function(wrap_pyfunction!(buffer_pool, m)?)?;
    m.add_function(wrap_pyfunction!(bit_counts, m)?)?;
    m.add_function(wrap_pyfunction!(bit_information, m)?)?;
    m.add_function(wrap_pyfunction!(keepbits, m)?)?;
    m.add_function(wrap_pyfunction!(finite_range, m)?)?;
    m.add_function(wrap_pyfunction!(fit_scale_offset, m)?)?;
    m.add_function(wrap_pyfunction!(plan_stats, m)?)?;
    m.add_function(wrap_pyfunction!(plan_stats_merge, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_info, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_names, m)?)?;
    Ok(())
}
