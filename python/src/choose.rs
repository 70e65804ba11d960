//! The choose functions: bit information (xbitinfo's keepbits) from mergeable bit-pair
//! counts, the finite range of a chunk, and the `scale_offset` + `cast_value` fit
//! (`zquant.choose` calls them per chunk and merges across chunks).

use numpy::{PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use zquant::choose::{self, BitCounts, FitOptions, InformationOptions};

use crate::error::{dtype_id, err};
use crate::words::{InWords, NOT_CONTIGUOUS};

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
pub(crate) fn bit_counts<'py>(
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
pub(crate) fn bit_information<'py>(
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
pub(crate) fn keepbits(
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
pub(crate) fn finite_range(
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
pub(crate) fn fit_scale_offset(
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
