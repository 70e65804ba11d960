//! Chains built at run time from Zarr metadata, over dynamically typed arrays.
//!
//! [`DynChain::from_metadata`] takes an array's `data_type`, `fill_value` and its list of
//! array->array codec objects exactly as in `zarr.json`, validates everything up front (a
//! codec name, key, data type or fill value that is wrong is a [`MetadataError`] naming the
//! codec and the field), binds each codec once to its monomorphized kernels through
//! [`crate::dispatch`], and carries the fill value through the chain.

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;

use crate::codec::cast_value::CastValueConfig;
use crate::codec::{ArrayCodec, Direction, bitround, cast_value, fixed_scale_offset, scale_offset};
use crate::dispatch::{self, match_all_arms};
use crate::dtype::{DType, DTypeId};
use crate::error::{CodecError, MetadataError};
use crate::metadata::{CodecObject, DataType};
use crate::pipeline::BLOCK;

macro_rules! define_dyn_array {
    (() $($kind:ident $v:ident = $t:ty,)*) => {
        /// An array of any built-in data type.
        #[derive(Clone, Debug, PartialEq)]
        pub enum DynArray {
            $(
                #[doc = concat!("`", stringify!($t), "` elements")]
                $v(ArrayD<$t>),
            )*
        }

        impl DynArray {
            /// The element type.
            pub fn dtype(&self) -> DTypeId {
                match self {
                    $(DynArray::$v(_) => DTypeId::$v,)*
                }
            }

            /// The shape.
            pub fn shape(&self) -> &[usize] {
                match self {
                    $(DynArray::$v(a) => a.shape(),)*
                }
            }
        }

        /// A flat buffer of any built-in data type (a block of a fused run-time chain).
        #[derive(Clone, Debug, PartialEq)]
        pub enum DynVec {
            $(
                #[doc = concat!("`", stringify!($t), "` elements")]
                $v(Vec<$t>),
            )*
        }

        /// A borrowed flat slice of any built-in data type.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum DynSlice<'a> {
            $(
                #[doc = concat!("`", stringify!($t), "` elements")]
                $v(&'a [$t]),
            )*
        }

        impl DynVec {
            /// The element type.
            pub fn dtype(&self) -> DTypeId {
                match self {
                    $(DynVec::$v(_) => DTypeId::$v,)*
                }
            }

            /// Number of elements.
            pub fn len(&self) -> usize {
                match self {
                    $(DynVec::$v(v) => v.len(),)*
                }
            }

            /// Whether there are no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Borrow `[start, end)`.
            pub fn slice(&self, start: usize, end: usize) -> DynSlice<'_> {
                match self {
                    $(DynVec::$v(v) => DynSlice::$v(&v[start..end]),)*
                }
            }
        }

        impl DynSlice<'_> {
            /// Number of elements.
            pub fn len(&self) -> usize {
                match self {
                    $(DynSlice::$v(v) => v.len(),)*
                }
            }

            /// Whether there are no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The element type.
            pub fn dtype(&self) -> DTypeId {
                match self {
                    $(DynSlice::$v(_) => DTypeId::$v,)*
                }
            }

            /// Sub-slice `[start, end)`.
            pub fn sub(&self, start: usize, end: usize) -> Self {
                match self {
                    $(DynSlice::$v(v) => DynSlice::$v(&v[start..end]),)*
                }
            }
        }

        $(
            impl Element for $t {
                const ID: DTypeId = DTypeId::$v;
                fn into_dyn(a: ArrayD<Self>) -> DynArray {
                    DynArray::$v(a)
                }
                fn from_dyn(a: &DynArray) -> Option<&ArrayD<Self>> {
                    match a {
                        DynArray::$v(x) => Some(x),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn vec_mut(v: &mut DynVec) -> Option<&mut Vec<Self>> {
                    match v {
                        DynVec::$v(x) => Some(x),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn into_vec(v: DynVec) -> Option<Vec<Self>> {
                    match v {
                        DynVec::$v(x) => Some(x),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn slice_of(s: DynSlice<'_>) -> Option<&[Self]> {
                    match s {
                        DynSlice::$v(x) => Some(x),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn wrap_vec(v: Vec<Self>) -> DynVec {
                    DynVec::$v(v)
                }
                fn wrap_slice(s: &[Self]) -> DynSlice<'_> {
                    DynSlice::$v(s)
                }
            }
        )*
    };
}

/// A built-in element type that [`DynArray`] can hold.
pub trait Element: DType {
    /// Its run-time identity.
    const ID: DTypeId;
    /// Wrap an array.
    fn into_dyn(a: ArrayD<Self>) -> DynArray;
    /// Borrow the array if it holds this type.
    fn from_dyn(a: &DynArray) -> Option<&ArrayD<Self>>;
    /// Borrow the buffer if it holds this type.
    fn vec_mut(v: &mut DynVec) -> Option<&mut Vec<Self>>;
    /// Unwrap the buffer if it holds this type.
    fn into_vec(v: DynVec) -> Option<Vec<Self>>;
    /// Borrow the slice if it holds this type.
    fn slice_of(s: DynSlice<'_>) -> Option<&[Self]>;
    /// Wrap a buffer.
    fn wrap_vec(v: Vec<Self>) -> DynVec;
    /// Wrap a slice.
    fn wrap_slice(s: &[Self]) -> DynSlice<'_>;
}

crate::__zquant_dtype_table!(define_dyn_array);

fn from_bytes<T: Element>(shape: &[usize], bytes: &[u8]) -> Result<DynArray, CodecError> {
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| CodecError::Array(format!("shape {shape:?} overflows")))?;
    if n.checked_mul(T::SIZE) != Some(bytes.len()) {
        return Err(CodecError::Array(format!(
            "{} bytes do not hold {n} elements of {} ({} bytes each)",
            bytes.len(),
            T::NAME,
            T::SIZE
        )));
    }
    let v: Vec<T> = bytes.chunks_exact(T::SIZE).map(T::read_le).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v)
        .map(T::into_dyn)
        .map_err(|e| CodecError::Array(e.to_string()))
}

fn to_bytes<T: DType>(a: &ArrayD<T>) -> Vec<u8> {
    let mut out = vec![0u8; a.len() * T::SIZE];
    for (x, chunk) in a.iter().zip(out.chunks_exact_mut(T::SIZE)) {
        x.write_le(chunk);
    }
    out
}

fn same<T: DType>(a: &ArrayD<T>, b: &ArrayD<T>) -> bool {
    a.shape() == b.shape() && a.iter().zip(b.iter()).all(|(x, y)| x.same_as(*y))
}

impl DynArray {
    /// An array from little-endian element bytes in C order (the `bytes` codec's output with
    /// `"endian": "little"`).
    ///
    /// # Errors
    /// A byte count that does not match the shape.
    pub fn from_le_bytes(
        dtype: DTypeId,
        shape: &[usize],
        bytes: &[u8],
    ) -> Result<Self, CodecError> {
        dispatch::with_any!(dtype, T => from_bytes::<T>(shape, bytes))
    }

    /// The elements as little-endian bytes in C order.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let id = self.dtype();
        dispatch::with_any!(id, T => T::from_dyn(self).map(to_bytes::<T>).unwrap_or_default())
    }

    /// A 0-d array holding the fill value `v` of type `dtype`.
    ///
    /// # Errors
    /// An invalid fill-value encoding for the type.
    pub fn fill_value(dtype: DTypeId, v: &Value) -> Result<Self, MetadataError> {
        dispatch::with_any!(dtype, T => T::fill_value_from_json(v)
            .map(|x| T::into_dyn(ArrayD::from_elem(IxDyn(&[]), x)))
            .map_err(MetadataError::FillValue))
    }

    /// The first element in the Zarr fill-value JSON encoding (for 0-d fill arrays).
    pub fn first_to_json(&self) -> Option<Value> {
        let id = self.dtype();
        dispatch::with_any!(id, T => T::from_dyn(self)
            .and_then(|a| a.iter().next().copied())
            .map(DType::fill_value_to_json))
    }

    /// Conformance equality: same type and shape, every element bit-equal or both NaN.
    pub fn same_as(&self, other: &DynArray) -> bool {
        if self.dtype() != other.dtype() {
            return false;
        }
        let id = self.dtype();
        dispatch::with_any!(id, T => match (T::from_dyn(self), T::from_dyn(other)) {
            (Some(a), Some(b)) => same(a, b),
            _ => false,
        })
    }
}

/// A codec bound to run-time data types.
pub trait DynStage: Send + Sync {
    /// Codec name.
    fn name(&self) -> &'static str;
    /// Decoded data type.
    fn input(&self) -> &DataType;
    /// Encoded data type.
    fn output(&self) -> &DataType;
    /// A zeroed buffer of `n` elements of the encoded type.
    fn new_output(&self, n: usize) -> DynVec;
    /// A zeroed buffer of `n` elements of the decoded type.
    fn new_input(&self, n: usize) -> DynVec;
    /// Encode `src` (of the input type) into `dst[at..at + src.len()]` (of the output type).
    ///
    /// # Errors
    /// Wrong buffer types, or the first element that cannot be encoded (index within `src`).
    fn encode_block(
        &self,
        src: DynSlice<'_>,
        dst: &mut DynVec,
        at: usize,
    ) -> Result<(), CodecError>;
    /// Decode `src` (of the output type) into `dst[at..at + src.len()]` (of the input type).
    ///
    /// # Errors
    /// Wrong buffer types, or the first element that cannot be decoded (index within `src`).
    fn decode_block(
        &self,
        src: DynSlice<'_>,
        dst: &mut DynVec,
        at: usize,
    ) -> Result<(), CodecError>;
    /// Carry a 0-d fill value forward.
    ///
    /// # Errors
    /// The fill value cannot be encoded (or, for cast_value, does not survive the round trip).
    fn encode_fill_value(&self, fill: &DynArray) -> Result<DynArray, MetadataError>;
    /// The codec's metadata object.
    fn to_metadata(&self) -> Value;
}

/// A typed codec behind the [`DynStage`] interface.
pub struct Bound<C> {
    codec: C,
    input: DataType,
    output: DataType,
}

impl<C> Bound<C> {
    /// Wrap `codec`, which reads `input` and writes `output`.
    pub fn new(codec: C, input: DataType, output: DataType) -> Self {
        Bound {
            codec,
            input,
            output,
        }
    }
}

fn wrong_type(expected: DTypeId, found: DTypeId) -> CodecError {
    CodecError::Array(format!("expected an array of {expected}, got {found}"))
}

fn wrong_buffers(src: DTypeId, dst: DTypeId, found: (DTypeId, DTypeId)) -> CodecError {
    CodecError::Array(format!(
        "stage reads {src} and writes {dst}, given {} and {}",
        found.0, found.1
    ))
}

impl<C> DynStage for Bound<C>
where
    C: ArrayCodec,
    C::In: Element,
    C::Out: Element,
{
    fn name(&self) -> &'static str {
        self.codec.name()
    }
    fn input(&self) -> &DataType {
        &self.input
    }
    fn output(&self) -> &DataType {
        &self.output
    }
    fn new_output(&self, n: usize) -> DynVec {
        C::Out::wrap_vec(vec![C::Out::default(); n])
    }
    fn new_input(&self, n: usize) -> DynVec {
        C::In::wrap_vec(vec![C::In::default(); n])
    }
    fn encode_block(
        &self,
        src: DynSlice<'_>,
        dst: &mut DynVec,
        at: usize,
    ) -> Result<(), CodecError> {
        let found = (src.dtype(), dst.dtype());
        let (Some(s), Some(d)) = (C::In::slice_of(src), C::Out::vec_mut(dst)) else {
            return Err(wrong_buffers(C::In::ID, C::Out::ID, found));
        };
        let d = d
            .get_mut(at..at + s.len())
            .ok_or_else(|| CodecError::Array("output block out of bounds".into()))?;
        self.codec.encode_slice(s, d).map_err(CodecError::from)
    }
    fn decode_block(
        &self,
        src: DynSlice<'_>,
        dst: &mut DynVec,
        at: usize,
    ) -> Result<(), CodecError> {
        let found = (src.dtype(), dst.dtype());
        let (Some(s), Some(d)) = (C::Out::slice_of(src), C::In::vec_mut(dst)) else {
            return Err(wrong_buffers(C::Out::ID, C::In::ID, found));
        };
        let d = d
            .get_mut(at..at + s.len())
            .ok_or_else(|| CodecError::Array("output block out of bounds".into()))?;
        self.codec.decode_slice(s, d).map_err(CodecError::from)
    }
    fn encode_fill_value(&self, fill: &DynArray) -> Result<DynArray, MetadataError> {
        let x = C::In::from_dyn(fill)
            .and_then(|a| a.iter().next().copied())
            .ok_or_else(|| MetadataError::FillValueTransform {
                codec: self.codec.name(),
                reason: format!(
                    "fill value of type {} given to a stage reading {}",
                    fill.dtype(),
                    C::In::ID
                ),
            })?;
        let y = self.codec.encode_fill_value(x)?;
        Ok(C::Out::into_dyn(ArrayD::from_elem(IxDyn(&[]), y)))
    }
    fn to_metadata(&self) -> Value {
        self.codec.to_metadata()
    }
}

/// A chain of array->array codecs built from metadata.
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
    let config = obj.configuration.as_ref();
    match obj.name.as_str() {
        scale_offset::NAME => dispatch::bind_scale_offset(input, config),
        cast_value::NAME => {
            let cfg = CastValueConfig::from_json(config)?;
            dispatch::bind_cast_value(input, &cfg)
        }
        bitround::NAME => dispatch::bind_bitround(input, config, false),
        bitround::ALIAS => dispatch::bind_bitround(input, config, true),
        fixed_scale_offset::NAME => dispatch::bind_fixed_scale_offset(input, config),
        other => Err(MetadataError::UnknownCodec(other.to_string())),
    }
}

impl DynChain {
    /// Build a chain from an array's `data_type`, `fill_value` and array->array `codecs`.
    ///
    /// # Errors
    /// Any invalid metadata, including a fill value that cannot be carried through the chain.
    pub fn from_metadata(
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
        let mut f = fill.clone();
        for s in &stages {
            f = s.encode_fill_value(&f)?;
            fills.push(f.clone());
        }
        Ok(DynChain {
            data_type: dt,
            fill_value: fill,
            stages,
            fills,
        })
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

    /// The stages, in encoding order.
    pub fn stages(&self) -> &[Box<dyn DynStage>] {
        &self.stages
    }

    /// Encode through every stage, fused: the input is processed in blocks of
    /// [`BLOCK`](crate::pipeline::BLOCK) elements, each going through every stage while in
    /// cache. The output is in C order.
    ///
    /// # Errors
    /// Wrong input type, or the first element (C-order flat index) a stage cannot encode.
    pub fn encode(&self, input: &DynArray) -> Result<DynArray, CodecError> {
        if input.dtype() != self.data_type.id {
            return Err(wrong_type(self.data_type.id, input.dtype()));
        }
        let kinds: Vec<_> = self
            .stages
            .iter()
            .map(|s| (s.as_ref(), Direction::Encode))
            .collect();
        run_fused(input, &kinds, self.encoded_data_type().id)
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
        let kinds: Vec<_> = self
            .stages
            .iter()
            .rev()
            .map(|s| (s.as_ref(), Direction::Decode))
            .collect();
        run_fused(encoded, &kinds, self.data_type.id)
    }

    /// The `codecs` list.
    pub fn to_metadata(&self) -> Value {
        Value::Array(self.stages.iter().map(|s| s.to_metadata()).collect())
    }
}

/// The elements of `a` in C order: borrowed when it is in standard layout, else gathered.
fn c_order(a: &DynArray) -> (Option<DynVec>, Option<DynSlice<'_>>) {
    let id = a.dtype();
    dispatch::with_any!(id, T => match T::from_dyn(a) {
        Some(x) => match x.as_slice() {
            Some(s) => (None, Some(T::wrap_slice(s))),
            None => (Some(T::wrap_vec(x.iter().copied().collect())), None),
        },
        None => (None, None),
    })
}

fn vec_into_array(v: DynVec, shape: &[usize]) -> Result<DynArray, CodecError> {
    let id = v.dtype();
    dispatch::with_any!(id, T => {
        let data = T::into_vec(v).ok_or_else(|| CodecError::Array("buffer type mismatch".into()))?;
        ArrayD::from_shape_vec(IxDyn(shape), data)
            .map(T::into_dyn)
            .map_err(|e| CodecError::Array(e.to_string()))
    })
}

fn shift_index(e: CodecError, by: usize) -> CodecError {
    match e {
        CodecError::Element(mut el) => {
            el.index += by;
            CodecError::Element(el)
        }
        other => other,
    }
}

/// Run `stages` (each in its direction) over `input` block by block.
fn run_fused(
    input: &DynArray,
    stages: &[(&dyn DynStage, Direction)],
    out_type: DTypeId,
) -> Result<DynArray, CodecError> {
    let shape = input.shape().to_vec();
    let (owned, borrowed) = c_order(input);
    let src = match (&owned, borrowed) {
        (_, Some(s)) => s,
        (Some(v), None) => v.slice(0, v.len()),
        (None, None) => {
            return Err(CodecError::Array(
                "array variant does not match its type".into(),
            ));
        }
    };
    let n = src.len();
    if stages.is_empty() {
        return Ok(input.clone());
    }
    let make = |s: &dyn DynStage, d: Direction, len: usize| match d {
        Direction::Encode => s.new_output(len),
        Direction::Decode => s.new_input(len),
    };
    let last = stages.len() - 1;
    let block = BLOCK.min(n.max(1));
    // One block-sized buffer per intermediate, one full-size buffer for the result.
    let mut bufs: Vec<DynVec> = stages[..last]
        .iter()
        .map(|(s, d)| make(*s, *d, block))
        .collect();
    let (ls, ld) = stages[last];
    let mut out = make(ls, ld, n);
    if out.dtype() != out_type {
        return Err(CodecError::Array(format!(
            "chain ends in {} but should end in {out_type}",
            out.dtype()
        )));
    }
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK).min(n);
        // After a stage fails at element k of the block, only the elements before k go on:
        // a later stage may fail on one of them, which is then the first failing element.
        let mut len = end - start;
        let mut failure: Option<CodecError> = None;
        for (i, (stage, dir)) in stages.iter().enumerate() {
            if len == 0 {
                break;
            }
            let (prev, rest) = bufs.split_at_mut(i);
            let input_block = if i == 0 {
                src.sub(start, start + len)
            } else {
                prev[i - 1].slice(0, len)
            };
            let (dst, at) = if i == last {
                (&mut out, start)
            } else {
                (&mut rest[0], 0)
            };
            let run = |block: DynSlice<'_>, dst: &mut DynVec| match dir {
                Direction::Encode => stage.encode_block(block, dst, at),
                Direction::Decode => stage.decode_block(block, dst, at),
            };
            if let Err(e) = run(input_block, dst) {
                len = match &e {
                    CodecError::Element(el) => el.index,
                    _ => return Err(e),
                };
                failure = Some(shift_index(e, start));
                // The output is only partly written after a failure: redo the elements
                // before it (they succeed).
                run(input_block.sub(0, len), dst).map_err(|e| shift_index(e, start))?;
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        start = end;
    }
    vec_into_array(out, &shape)
}
