//! The two Python exceptions, and zquant's errors turned into them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::Value;
use zquant::DTypeId;

pyo3::create_exception!(
    _zquant,
    CodecError,
    PyValueError,
    "A codec, metadata or input error from zquant; the message names the codec, rule, element \
     index and value, and the fix."
);

pyo3::create_exception!(
    _zquant,
    FillValueError,
    CodecError,
    "The array's fill value is invalid for its data type or cannot be carried through a codec \
     (the codecs' configuration itself is valid)."
);

/// Any zquant error as `CodecError`, with zquant's message.
pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    CodecError::new_err(e.to_string())
}

/// A metadata error as `FillValueError` when it is the array's fill value's, else
/// `CodecError`: zarr's sharding codec checks inner codecs with the data type's default
/// fill value, and the Python layer tolerates exactly that error there.
pub(crate) fn metadata_err(e: zquant::MetadataError) -> PyErr {
    match e {
        zquant::MetadataError::FillValue(_) | zquant::MetadataError::FillValueTransform { .. } => {
            FillValueError::new_err(e.to_string())
        }
        other => err(other),
    }
}

/// A JSON argument's text parsed; `what` names the argument in the error.
pub(crate) fn parse(what: &str, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| err(format!("{what} is not valid JSON: {e}")))
}

/// A data type by its Zarr name.
pub(crate) fn dtype_id(name: &str) -> PyResult<DTypeId> {
    name.parse::<DTypeId>().map_err(err)
}
