//! The codecs zquant implements, by their metadata names: what the Python package maps to
//! its classes (`zquant.use()`, the `zarr.codecs` entry points) is checked against this
//! list, so a codec added to zquant's registry and missing in Python fails a test.

use pyo3::prelude::*;

/// The kind of an array->array codec (a filter: an array in, an array out).
const ARRAY_TO_ARRAY: &str = "array_to_array";
/// The kind of an array->bytes codec (an array in, the chunk's bytes out).
const ARRAY_TO_BYTES: &str = "array_to_bytes";

/// Every codec name zquant runs, with its kind (`"array_to_array"` or `"array_to_bytes"`):
/// the registry's names (`zquant::CODEC_NAMES`: each codec's Zarr v3 name, then its
/// aliases; numcodecs' filters as `numcodecs.<id>`), then `packbits`.
#[pyfunction]
pub(crate) fn codec_names() -> Vec<(&'static str, &'static str)> {
    let packbits = zquant::zarr::packbits::NAME;
    let extra = (!zquant::CODEC_NAMES.contains(&packbits)).then_some(packbits);
    zquant::CODEC_NAMES
        .iter()
        .copied()
        .chain(extra)
        .map(|name| {
            let kind = if zquant::zarr::ARRAY_TO_BYTES.contains(&name) {
                ARRAY_TO_BYTES
            } else {
                ARRAY_TO_ARRAY
            };
            (name, kind)
        })
        .collect()
}
