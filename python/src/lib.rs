//! `zquant._zquant`: the PyO3 layer of the `zquant` Python package.
//!
//! Everything here converts and forwards: JSON metadata crosses as text (parsed by
//! `serde_json` into what [`zquant::DynChain::from_array_to_array_codecs`] takes); element buffers cross
//! as one-dimensional, C-contiguous NumPy arrays of storage words (module `words`),
//! borrowed, never copied, and written in place into an output the Python side allocated
//! once, from the buffer pool (`pool`). The Python side (`zquant/__init__.py`) turns any
//! array into such a word view (a copy only for strided or byte-swapped input; a chunk whose
//! rows are contiguous is read row by row, `gather`) and gives the shape separately. The GIL
//! is released (`Python::detach`) while Rust runs. Every zquant error becomes
//! `zquant.CodecError` (a `ValueError`) with zquant's message (`error`).
//!
//! One file per concern: `chain` and `packbits` run codecs, `choose` and `plan` measure
//! data, `dtype` and `registry` describe what zquant knows. This file is the module's
//! definition; `zquant/_zquant.pyi` is its typed surface, checked by stubtest.

mod chain;
mod choose;
mod dtype;
mod error;
mod gather;
mod packbits;
mod plan;
mod pool;
mod registry;
mod words;

use pyo3::prelude::*;

#[pymodule]
fn _zquant(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CodecError", py.get_type::<error::CodecError>())?;
    m.add("FillValueError", py.get_type::<error::FillValueError>())?;
    // Codecs.
    m.add_class::<chain::RustChain>()?;
    m.add_function(wrap_pyfunction!(chain::check_configuration, m)?)?;
    m.add_class::<packbits::RustPackBits>()?;
    m.add_function(wrap_pyfunction!(packbits::check_packbits_configuration, m)?)?;
    m.add_function(wrap_pyfunction!(registry::codec_names, m)?)?;
    // Output buffers.
    m.add_class::<pool::PooledBuffer>()?;
    m.add_function(wrap_pyfunction!(pool::empty, m)?)?;
    m.add_function(wrap_pyfunction!(pool::set_buffer_pool, m)?)?;
    m.add_function(wrap_pyfunction!(pool::buffer_pool, m)?)?;
    // Statistics: keepbits, ranges, fits, plans.
    m.add_function(wrap_pyfunction!(choose::bit_counts, m)?)?;
    m.add_function(wrap_pyfunction!(choose::bit_information, m)?)?;
    m.add_function(wrap_pyfunction!(choose::keepbits, m)?)?;
    m.add_function(wrap_pyfunction!(choose::finite_range, m)?)?;
    m.add_function(wrap_pyfunction!(choose::fit_scale_offset, m)?)?;
    m.add_function(wrap_pyfunction!(plan::plan_stats, m)?)?;
    m.add_function(wrap_pyfunction!(plan::plan_stats_merge, m)?)?;
    m.add_function(wrap_pyfunction!(plan::plan, m)?)?;
    // Data types.
    m.add_function(wrap_pyfunction!(dtype::dtype_info, m)?)?;
    m.add_function(wrap_pyfunction!(dtype::dtype_names, m)?)?;
    Ok(())
}
