//! Facts about zquant's data types, by their Zarr names.

use pyo3::prelude::*;
use zquant::DTypeId;

use crate::error::dtype_id;

/// Facts about a data type by its Zarr name: `(size in bytes, word bits, words per
/// element, is real)`.
#[pyfunction]
pub(crate) fn dtype_info(name: &str) -> PyResult<(usize, u32, usize, bool)> {
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
pub(crate) fn dtype_names() -> Vec<&'static str> {
    DTypeId::ALL.iter().map(|d| d.name()).collect()
}
