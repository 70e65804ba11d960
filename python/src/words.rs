//! NumPy arrays of storage words, borrowed as zquant's [`Words`]/[`WordsMut`].
//!
//! Element buffers cross the boundary as arrays of unsigned storage words (`uint8`,
//! `uint16`, `uint32`, `uint64`, native byte order): the Python side views any array so
//! (`zquant._dtypes.words_of`) and passes the shape separately. The enums hold the borrow
//! (NumPy's borrow checker flag) for as long as Rust reads or writes the memory.

use numpy::{
    PyArrayDescrMethods, PyReadonlyArray1, PyReadonlyArrayDyn, PyReadwriteArray1, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use zquant::dtype::{Words, WordsMut};

use crate::error::err;

/// A read-only buffer of storage words.
pub(crate) enum InWords<'py> {
    U8(PyReadonlyArray1<'py, u8>),
    U16(PyReadonlyArray1<'py, u16>),
    U32(PyReadonlyArray1<'py, u32>),
    U64(PyReadonlyArray1<'py, u64>),
}

/// A writable buffer of storage words.
pub(crate) enum OutWords<'py> {
    U8(PyReadwriteArray1<'py, u8>),
    U16(PyReadwriteArray1<'py, u16>),
    U32(PyReadwriteArray1<'py, u32>),
    U64(PyReadwriteArray1<'py, u64>),
}

/// A read-only N-d array of storage words whose last axis is contiguous (a chunk of a
/// larger array, as zarr passes it to a codec when writing); [`crate::gather`] reads it.
pub(crate) enum InRows<'py> {
    U8(PyReadonlyArrayDyn<'py, u8>),
    U16(PyReadonlyArrayDyn<'py, u16>),
    U32(PyReadonlyArrayDyn<'py, u32>),
    U64(PyReadonlyArrayDyn<'py, u64>),
}

/// The error of a word array that is not one-dimensional and contiguous.
pub(crate) const NOT_CONTIGUOUS: &str = "the word buffer must be one-dimensional and contiguous";

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
    /// Borrow `ob`, an array of storage words, read-only.
    pub(crate) fn new(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(match word_width(ob)? {
            1 => InWords::U8(ob.extract()?),
            2 => InWords::U16(ob.extract()?),
            4 => InWords::U32(ob.extract()?),
            _ => InWords::U64(ob.extract()?),
        })
    }

    /// The words, if the array is one-dimensional and contiguous.
    pub(crate) fn words(&self) -> PyResult<Words<'_>> {
        let e = |_| err(NOT_CONTIGUOUS);
        Ok(match self {
            InWords::U8(a) => Words::U8(a.as_slice().map_err(e)?),
            InWords::U16(a) => Words::U16(a.as_slice().map_err(e)?),
            InWords::U32(a) => Words::U32(a.as_slice().map_err(e)?),
            InWords::U64(a) => Words::U64(a.as_slice().map_err(e)?),
        })
    }
}

impl<'py> OutWords<'py> {
    /// Borrow `ob`, an array of storage words, writable.
    pub(crate) fn new(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(match word_width(ob)? {
            1 => OutWords::U8(ob.extract()?),
            2 => OutWords::U16(ob.extract()?),
            4 => OutWords::U32(ob.extract()?),
            _ => OutWords::U64(ob.extract()?),
        })
    }

    /// The words, if the array is one-dimensional and contiguous.
    pub(crate) fn words(&mut self) -> PyResult<WordsMut<'_>> {
        let e = |_| err(NOT_CONTIGUOUS);
        Ok(match self {
            OutWords::U8(a) => WordsMut::U8(a.as_slice_mut().map_err(e)?),
            OutWords::U16(a) => WordsMut::U16(a.as_slice_mut().map_err(e)?),
            OutWords::U32(a) => WordsMut::U32(a.as_slice_mut().map_err(e)?),
            OutWords::U64(a) => WordsMut::U64(a.as_slice_mut().map_err(e)?),
        })
    }
}

impl<'py> InRows<'py> {
    /// Borrow `ob`, an N-d array of storage words, read-only.
    pub(crate) fn new(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(match word_width(ob)? {
            1 => InRows::U8(ob.extract()?),
            2 => InRows::U16(ob.extract()?),
            4 => InRows::U32(ob.extract()?),
            _ => InRows::U64(ob.extract()?),
        })
    }
}
