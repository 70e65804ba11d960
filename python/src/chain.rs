//! `RustChain`: zquant's run-time chain ([`DynChain`]) over NumPy word buffers
//! (`zquant.Chain` runs it), and the configuration check of the Python codec classes.

use pyo3::prelude::*;
use serde_json::Value;
use zquant::DynChain;
use zquant::dtype::{Words, WordsMut};

use crate::error::{err, metadata_err, parse};
use crate::gather::run_rows;
use crate::words::{InRows, InWords, OutWords};

/// A chain of zquant codecs bound to a data type and fill value (`zquant.DynChain`).
/// Immutable, so it is shared between threads without a lock.
#[pyclass(frozen, module = "zquant._zquant")]
pub(crate) struct RustChain {
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
        let chain =
            DynChain::from_array_to_array_codecs(&dt, &fill, &codecs).map_err(metadata_err)?;
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

/// Check a codec's configuration where it does not depend on the data type (the rules of
/// `zquant::check_configuration`): what the Python classes refuse at construction.
#[pyfunction]
pub(crate) fn check_configuration(name: &str, configuration: &str) -> PyResult<()> {
    let config = parse("configuration", configuration)?;
    zquant::check_configuration(name, Some(&config)).map_err(err)
}
