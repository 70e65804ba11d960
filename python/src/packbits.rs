//! `RustPackBits`: zquant's `packbits` array->bytes codec over NumPy buffers
//! (`zquant.zarr.PackBits` runs it), and its configuration check.

use pyo3::prelude::*;
use zquant::dtype::{Words, WordsMut};
use zquant::zarr::PackBits;

use crate::error::{dtype_id, err, parse};
use crate::words::{InWords, OutWords};

/// Check the JSON text of a `packbits` `configuration` without a data type: the Rust core's
/// one parser (`zquant::zarr::packbits::parse_configuration`), so that `zquant.zarr.PackBits`
/// states no rule of its own.
#[pyfunction]
pub(crate) fn check_packbits_configuration(configuration: &str) -> PyResult<()> {
    let config = parse("configuration", configuration)?;
    zquant::zarr::packbits::parse_configuration(Some(&config)).map_err(err)?;
    Ok(())
}

/// The `packbits` codec bound to a data type (`zquant.zarr.PackBits` runs it). Immutable.
#[pyclass(frozen, module = "zquant._zquant")]
pub(crate) struct RustPackBits {
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
