//! [`DynChain`]: a chain of array->array codecs built at run time from Zarr metadata, over
//! [`DynArray`]s, and [`bind_codec`], one codec object bound to its stage.
//!
//! [`DynChain::from_array_to_array_codecs`] takes an array's `data_type`, `fill_value` and
//! its array->array codec objects exactly as in `zarr.json`;
//! [`DynChain::from_all_codecs`] (`codec_split.rs`) takes the whole `codecs` list. Both
//! validate everything up front (a codec name, key, data type or fill value that is wrong
//! is a [`MetadataError`] naming the codec and the field), bind each codec once to its
//! stage through the codec registry, and carry the fill value through the chain. Data flows
//! through the stages as storage words ([`Words`]), block by block.

use serde_json::Value;

use super::array::DynArray;
use super::run::{locate, run_fused, run_fused_words, run_words, wrong_type};
use crate::codec::json_text;
use crate::codec::{Direction, DynStage};
use crate::dtype::DType;
use crate::error::{CodecError, MetadataError};
use crate::metadata::{CodecObject, DataType};
use crate::number::storage::{Words, WordsMut};

/// A chain of array->array codecs built from metadata.
///
/// Built once from an array's `data_type`, `fill_value` and `codecs` (every field checked
/// up front), then run on [`DynArray`]s of that data type; the output is a [`DynArray`] of
/// the encoded type. [`DynChain::warnings`] reports valid but likely unintended metadata.
///
/// ```
/// use serde_json::json;
/// use zquant::{DTypeId, DynArray, DynChain};
///
/// let zarr_json = json!({
///     "data_type": "float64",
///     "fill_value": "NaN",
///     "codecs": [
///         {"name": "scale_offset", "configuration": {"offset": 10.0, "scale": 100.0}},
///         {"name": "cast_value", "configuration": {"data_type": "int16",
///             "scalar_map": {"encode": [["NaN", -32768]], "decode": [[-32768, "NaN"]]}}}
///     ]
/// });
/// let codecs = zarr_json["codecs"].as_array().unwrap();
/// let chain = DynChain::from_array_to_array_codecs(&zarr_json["data_type"], &zarr_json["fill_value"], codecs)?;
/// assert_eq!(chain.encoded_data_type().id, DTypeId::Int16);
/// assert_eq!(chain.encoded_fill_value().first_to_json(), Some(json!(-32768)));
///
/// let input = DynArray::from_vec(vec![10.5, 9.99, f64::NAN]);
/// let encoded = chain.encode(&input)?;
/// assert_eq!(encoded.to_vec::<i16>(), Some(vec![50, -1, -32768]));
/// let decoded = chain.decode(&encoded)?.to_vec::<f64>().unwrap();
/// assert_eq!(decoded[..2], [10.5, 9.99]);
/// assert!(decoded[2].is_nan());
/// // What the chain writes back is what it read.
/// assert_eq!(&chain.to_metadata(), &zarr_json["codecs"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DynChain {
    data_type: DataType,
    fill_value: DynArray,
    stages: Vec<Box<dyn DynStage>>,
    /// Fill value after each stage (the last is the encoded fill value).
    fills: Vec<DynArray>,
}

impl std::fmt::Debug for DynChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynChain")
            .field("data_type", &self.data_type)
            .field("codecs", &self.to_metadata())
            .finish()
    }
}

/// Bind one codec object to the data type it receives.
///
/// # Errors
/// Unknown codec, invalid configuration, unsupported data type.
pub fn bind_codec(obj: &CodecObject, input: &DataType) -> Result<Box<dyn DynStage>, MetadataError> {
    crate::codec::registry::bind(obj, input)
}

impl DynChain {
    /// Build a chain from an array's `data_type`, `fill_value` and its array->array codecs
    /// only (for the whole `codecs` list of `zarr.json`, see
    /// [`DynChain::from_all_codecs`]).
    ///
    /// # Errors
    /// Any invalid metadata, including a fill value that cannot be carried through the chain.
    pub fn from_array_to_array_codecs(
        data_type: &Value,
        fill_value: &Value,
        codecs: &[Value],
    ) -> Result<Self, MetadataError> {
        let dt = DataType::from_json(data_type)?;
        let fill = DynArray::fill_value(dt.id, fill_value)?;
        let mut stages: Vec<Box<dyn DynStage>> = Vec::with_capacity(codecs.len());
        let mut current = dt.clone();
        for c in codecs {
            let obj = CodecObject::from_json(c)?;
            let stage = bind_codec(&obj, &current)?;
            current = stage.output().clone();
            stages.push(stage);
        }
        let mut fills = Vec::with_capacity(stages.len());
        let mut f = fill.first_scalar().unwrap_or_default();
        for s in &stages {
            f = s.encode_fill_value(f)?;
            fills.push(DynArray::scalar(s.output().id, f));
        }
        Ok(DynChain {
            data_type: dt,
            fill_value: fill,
            stages,
            fills,
        })
    }

    /// The old name of [`DynChain::from_array_to_array_codecs`].
    ///
    /// # Errors
    /// As [`DynChain::from_array_to_array_codecs`].
    #[deprecated(since = "0.3.0", note = "renamed from_array_to_array_codecs")]
    #[doc(hidden)]
    pub fn from_metadata(
        data_type: &Value,
        fill_value: &Value,
        codecs: &[Value],
    ) -> Result<Self, MetadataError> {
        Self::from_array_to_array_codecs(data_type, fill_value, codecs)
    }

    /// The decoded (array) data type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The data type after the last codec.
    pub fn encoded_data_type(&self) -> &DataType {
        self.stages.last().map_or(&self.data_type, |s| s.output())
    }

    /// The array's fill value (0-d).
    pub fn fill_value(&self) -> &DynArray {
        &self.fill_value
    }

    /// The fill value after the last codec (0-d).
    pub fn encoded_fill_value(&self) -> &DynArray {
        self.fills.last().unwrap_or(&self.fill_value)
    }

    /// What in the chain's metadata is valid but likely unintended, one message per finding:
    /// for example a `cast_value` whose `clamp` writes a code that its `scalar_map` decodes
    /// as NaN, so that out-of-range values would read back as NaN. zquant reads and writes
    /// such chains as the spec says; check this list when you write metadata.
    ///
    /// ```
    /// use serde_json::json;
    /// let chain = zquant::DynChain::from_array_to_array_codecs(&json!("float32"), &json!(0.0), &[json!({
    ///     "name": "cast_value",
    ///     "configuration": {"data_type": "int16", "out_of_range": "clamp",
    ///         "scalar_map": {"encode": [["NaN", -32768]], "decode": [[-32768, "NaN"]]}}})])?;
    /// assert_eq!(chain.warnings().len(), 1);
    /// # Ok::<(), zquant::MetadataError>(())
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        self.stages.iter().flat_map(|s| s.warnings()).collect()
    }

    /// The stages, in encoding order.
    pub fn stages(&self) -> &[Box<dyn DynStage>] {
        &self.stages
    }

    /// Encode through every stage, fused: the input is processed in blocks of
    /// [`BLOCK`](crate::runtime::BLOCK) elements, each going through every stage while in
    /// cache. The output is in C order.
    ///
    /// # Errors
    /// Wrong input type, or the first element (C-order flat index) a stage cannot encode.
    pub fn encode(&self, input: &DynArray) -> Result<DynArray, CodecError> {
        if input.dtype() != self.data_type.id {
            return Err(wrong_type(self.data_type.id, input.dtype()));
        }
        let mut out = DynArray::zeroed(self.encoded_data_type().id, input.shape())?;
        fresh(&mut out).unstreamed(|| self.encode_into(input, &mut out))?;
        Ok(out)
    }

    /// [`DynChain::encode`] into `out`, an array the caller owns: of the encoded data type,
    /// the input's shape, in standard layout. Reusing one output across calls saves the
    /// allocation and, above all, the first touch of its fresh pages, which for a large
    /// array costs more than the encoding itself.
    ///
    /// # Errors
    /// Wrong input type, an `out` of another type, shape or layout, or the first element
    /// (C-order flat index) a stage cannot encode; `out` is then partly written.
    pub fn encode_into(&self, input: &DynArray, out: &mut DynArray) -> Result<(), CodecError> {
        if input.dtype() != self.data_type.id {
            return Err(wrong_type(self.data_type.id, input.dtype()));
        }
        let kinds = self.in_order(Direction::Encode);
        run_fused(input, &kinds, out).map_err(|e| locate(e, input))
    }

    /// [`DynChain::encode`] straight from a typed `ndarray` array or view of the chain's
    /// data type (built-in or registered declared type), without making a [`DynArray`] of
    /// it first: a C-contiguous input is read in place, any other layout is gathered in C
    /// order once (as the typed API does).
    ///
    /// ```
    /// use serde_json::json;
    /// let chain = zquant::DynChain::from_array_to_array_codecs(&json!("float64"), &json!(0.0), &[json!(
    ///     {"name": "cast_value", "configuration": {"data_type": "int8", "out_of_range": "clamp"}}
    /// )])?;
    /// let a = ndarray::array![[1.4, 300.0], [-2.5, 7.0]];
    /// let out = chain.encode_array(&a.t())?; // a strided view, not copied by the caller
    /// assert_eq!(out.to_vec::<i8>(), Some(vec![1, -2, 127, 7]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// An element type other than the chain's data type, or the first element (C-order
    /// flat index, with its N-d position) a stage cannot encode.
    pub fn encode_array<T, S, D>(
        &self,
        input: &ndarray::ArrayBase<S, D>,
    ) -> Result<DynArray, CodecError>
    where
        T: DType,
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        let found =
            crate::dtype::register_dtype::<T>().map_err(|e| CodecError::Array(e.to_string()))?;
        if found != self.data_type.id {
            return Err(wrong_type(self.data_type.id, found));
        }
        let standard = input.as_standard_layout();
        let slice = standard
            .as_slice()
            .ok_or_else(|| CodecError::Array("array is not in standard layout".into()))?;
        let mut out = DynArray::zeroed(self.encoded_data_type().id, input.shape())?;
        let kinds = self.in_order(Direction::Encode);
        let src = (crate::convert::words_of(slice), found, input.shape());
        let fresh = fresh(&mut out);
        fresh
            .unstreamed(|| run_fused_words(src, &kinds, &mut out))
            .map_err(|e| {
                e.located(input.shape(), |i| {
                    slice.get(i).map(|x| json_text(x.fill_value_to_json()))
                })
            })?;
        Ok(out)
    }

    /// Decode through every stage in reverse, fused like [`DynChain::encode`].
    ///
    /// # Errors
    /// Wrong input type, or the first element (C-order flat index) a stage cannot decode.
    pub fn decode(&self, encoded: &DynArray) -> Result<DynArray, CodecError> {
        let want = self.encoded_data_type().id;
        if encoded.dtype() != want {
            return Err(wrong_type(want, encoded.dtype()));
        }
        let mut out = DynArray::zeroed(self.data_type.id, encoded.shape())?;
        fresh(&mut out).unstreamed(|| self.decode_into(encoded, &mut out))?;
        Ok(out)
    }

    /// [`DynChain::decode`] into `out`, an array the caller owns: of the decoded data type,
    /// the input's shape, in standard layout (see [`DynChain::encode_into`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use zquant::{DynArray, DynChain};
    ///
    /// let chain = DynChain::from_array_to_array_codecs(
    ///     &json!("float64"),
    ///     &json!(0.0),
    ///     &[json!({"name": "scale_offset", "configuration": {"offset": 1, "scale": 2}})],
    /// )?;
    /// let encoded = chain.encode(&DynArray::Float64(ndarray::arr1(&[1.0, 2.5]).into_dyn()))?;
    /// // One output buffer, reused for every chunk of the same shape.
    /// let mut out = DynArray::Float64(ndarray::ArrayD::zeros(ndarray::IxDyn(&[2])));
    /// chain.decode_into(&encoded, &mut out)?;
    /// assert_eq!(out, DynArray::Float64(ndarray::arr1(&[1.0, 2.5]).into_dyn()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Wrong input type, an `out` of another type, shape or layout, or the first element
    /// (C-order flat index) a stage cannot decode; `out` is then partly written.
    pub fn decode_into(&self, encoded: &DynArray, out: &mut DynArray) -> Result<(), CodecError> {
        let want = self.encoded_data_type().id;
        if encoded.dtype() != want {
            return Err(wrong_type(want, encoded.dtype()));
        }
        let kinds = self.in_order(Direction::Decode);
        run_fused(encoded, &kinds, out).map_err(|e| locate(e, encoded))
    }

    /// Whether [`DynChain::in_place`] can run (a one-stage chain whose stage has an
    /// in-place form), so that a caller copies a borrowed buffer for it only then.
    #[cfg(feature = "zarrs")]
    pub(crate) fn has_in_place(&self) -> bool {
        matches!(self.stages.as_slice(), [stage] if stage.has_in_place())
    }

    /// Run a one-stage chain in `dir` over `data` in place, when its stage has an in-place
    /// form ([`DynStage::in_place`]): `None` otherwise.
    #[cfg(feature = "zarrs")]
    pub(crate) fn in_place(
        &self,
        dir: Direction,
        data: WordsMut<'_>,
    ) -> Option<Result<(), CodecError>> {
        match self.stages.as_slice() {
            [stage] if stage.input().id == stage.output().id => stage.in_place(dir, data),
            _ => None,
        }
    }

    /// Whether [`DynChain::decode`] returns its input's elements unchanged (every stage's
    /// decode is the identity, as `bitround`'s).
    #[cfg(feature = "zarrs")]
    pub(crate) fn decode_is_identity(&self) -> bool {
        self.stages.iter().all(|s| s.decode_is_identity())
    }

    /// [`DynChain::encode_into`] over storage words: `input` holds the elements of `shape`
    /// (of the chain's data type) in C order, `out` receives the encoded elements, both as
    /// native-endian words (`words_per_element` words each, of the type's `word_bits`).
    /// This is the entry point for callers that own both buffers, such as the Python
    /// binding, which borrows a NumPy array's memory and writes into one it allocated: no
    /// [`DynArray`] is built and nothing is copied.
    ///
    /// ```
    /// use serde_json::json;
    /// use zquant::dtype::{Words, WordsMut};
    ///
    /// let chain = zquant::DynChain::from_array_to_array_codecs(&json!("float32"), &json!(0.0), &[json!(
    ///     {"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp"}}
    /// )])?;
    /// let input: Vec<u32> = [1.4f32, 300.0, -2.5, 7.5].map(f32::to_bits).to_vec();
    /// let mut out = [0u8; 4];
    /// chain.encode_words(Words::U32(&input), &[2, 2], WordsMut::U8(&mut out))?;
    /// assert_eq!(out, [1, 255, 0, 8]);
    /// // A buffer that does not hold the shape's elements is an error, not a panic.
    /// assert!(chain.encode_words(Words::U32(&input), &[5], WordsMut::U8(&mut out)).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Words of another width or count than `shape`'s elements of the chain's data type
    /// (input) or encoded data type (output), or the first element (C-order flat index,
    /// with its N-d position) a stage cannot encode; `out` is then partly written.
    pub fn encode_words(
        &self,
        input: Words<'_>,
        shape: &[usize],
        out: WordsMut<'_>,
    ) -> Result<(), CodecError> {
        let kinds = self.in_order(Direction::Encode);
        let (from, to) = (self.data_type.id, self.encoded_data_type().id);
        run_words((input, from, shape), &kinds, (out, to))
    }

    /// [`DynChain::decode_into`] over storage words, as [`DynChain::encode_words`]:
    /// `encoded` holds elements of the encoded data type, `out` receives the decoded ones.
    ///
    /// # Errors
    /// As [`DynChain::encode_words`], for decoding.
    pub fn decode_words(
        &self,
        encoded: Words<'_>,
        shape: &[usize],
        out: WordsMut<'_>,
    ) -> Result<(), CodecError> {
        let kinds = self.in_order(Direction::Decode);
        let (from, to) = (self.encoded_data_type().id, self.data_type.id);
        run_words((encoded, from, shape), &kinds, (out, to))
    }

    /// The stages in the order `dir` runs them (encode: first to last; decode: last to
    /// first), each with its direction.
    fn in_order(&self, dir: Direction) -> Vec<(&dyn DynStage, Direction)> {
        let mut stages: Vec<_> = self.stages.iter().map(|s| (s.as_ref(), dir)).collect();
        if dir == Direction::Decode {
            stages.reverse();
        }
        stages
    }

    /// The `codecs` list.
    pub fn to_metadata(&self) -> Value {
        Value::Array(self.stages.iter().map(|s| s.to_metadata()).collect())
    }
}

/// The memory of a fresh output (`DynArray::zeroed`), which its kernels write by plain
/// stores (see `arch::Fresh`).
fn fresh(out: &mut DynArray) -> crate::arch::Fresh {
    match out.words_mut() {
        Some(w) => crate::arch::Fresh::of(&w),
        None => crate::arch::Fresh::of(&crate::number::storage::WordsMut::U8(&mut [])),
    }
}
