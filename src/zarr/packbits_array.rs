//! packbits on whole run-time arrays: the codec lives in `codec::packbits`, below the
//! run-time array, so its array face is here, beside the chunks that use it.

use crate::codec::packbits::{PackBits, PackBitsError};
use crate::dispatch::DynArray;
use crate::error::CodecError;

impl PackBits {
    /// Encode an array (any layout; C order is the packing order).
    ///
    /// ```
    /// let codec = zquant::zarr::PackBits::new(zquant::DTypeId::UInt4, None)?;
    /// let a = zquant::DynArray::from_le_bytes(zquant::DTypeId::UInt4, &[3], &[1, 2, 3])?;
    /// assert_eq!(codec.encode_array(&a)?, [0x21, 0x03]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// An array of another data type.
    pub fn encode_array(&self, array: &DynArray) -> Result<Vec<u8>, PackBitsError> {
        let standard = array.to_standard_layout();
        match standard.words() {
            Some(w) if array.dtype() == self.data_type() => self.encode(w),
            Some(w) => Err(self.words_error(w.len(), w.bits())),
            None => Err(self.words_error(0, 0)),
        }
    }

    /// Decode an array of `shape` from its packed bytes.
    ///
    /// ```
    /// let codec = zquant::zarr::PackBits::new(zquant::DTypeId::UInt4, None)?;
    /// let a = codec.decode_array(&[0x21, 0x03], &[3])?;
    /// assert_eq!(a.to_le_bytes(), [1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`PackBits::decode`]; a shape whose element count overflows.
    pub fn decode_array(&self, bytes: &[u8], shape: &[usize]) -> Result<DynArray, CodecError> {
        let n = crate::pipeline::element_count(shape)?;
        let words = self
            .decode(bytes, n)
            .map_err(|e| CodecError::Array(e.to_string()))?;
        DynArray::from_words(self.data_type(), shape, words)
    }
}
