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

use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::Value;
use zquant::choose::{self, BitCounts, FitOptions, InformationOptions};
use zquant::dtype::{Words, WordsMut};
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
#[derive(FromPyObject)]
enum InWords<'py> {
    U8(PyReadonlyArray1<'py, u8>),
    U16(PyReadonlyArray1<'py, u16>),
    U32(PyReadonlyArray1<'py, u32>),
    U64(PyReadonlyArray1<'py, u64>),
}

/// A writable buffer of storage words.
#[derive(FromPyObject)]
enum OutWords<'py> {
    U8(PyReadwriteArray1<'py, u8>),
    U16(PyReadwriteArray1<'py, u16>),
    U32(PyReadwriteArray1<'py, u32>),
    U64(PyReadwriteArray1<'py, u64>),
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
        src: InWords<'_>,
        shape: Vec<usize>,
        mut out: OutWords<'_>,
    ) -> PyResult<()> {
        let (src, dst) = (src.words()?, out.words()?);
        let chain = &self.chain;
        py.detach(|| chain.encode_words(src, &shape, dst))
            .map_err(err)
    }

    /// Decode the words of `shape`'s encoded elements into `out`'s words, without the GIL.
    fn decode_into(
        &self,
        py: Python<'_>,
        src: InWords<'_>,
        shape: Vec<usize>,
        mut out: OutWords<'_>,
    ) -> PyResult<()> {
        let (src, dst) = (src.words()?, out.words()?);
        let chain = &self.chain;
        py.detach(|| chain.decode_words(src, &shape, dst))
            .map_err(err)
    }
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
    words: InWords<'_>,
    shape: Vec<usize>,
    axis: usize,
    mask_nan: bool,
    masked_bits: Option<u64>,
) -> PyResult<(u64, Bound<'py, PyArray2<u64>>)> {
    let id = dtype_id(data_type)?;
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
    words: InWords<'_>,
) -> PyResult<Option<(f64, f64)>> {
    let id = dtype_id(data_type)?;
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
    m.add_function(wrap_pyfunction!(bit_counts, m)?)?;
    m.add_function(wrap_pyfunction!(bit_information, m)?)?;
    m.add_function(wrap_pyfunction!(keepbits, m)?)?;
    m.add_function(wrap_pyfunction!(finite_range, m)?)?;
    m.add_function(wrap_pyfunction!(fit_scale_offset, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_info, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_names, m)?)?;
    Ok(())
}
