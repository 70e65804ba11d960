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
use crate::codec::{ArrayCodec, bitround, cast_value, scale_offset};
use crate::dispatch::{self, match_all_arms};
use crate::dtype::{DType, DTypeId};
use crate::error::{CodecError, MetadataError};
use crate::metadata::{CodecObject, DataType};
use crate::pipeline::ArrayCodecExt;

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
    /// Encode an array of [`DynStage::input`] type.
    ///
    /// # Errors
    /// Wrong input type, or an element that cannot be encoded.
    fn encode(&self, a: &DynArray) -> Result<DynArray, CodecError>;
    /// Decode an array of [`DynStage::output`] type.
    ///
    /// # Errors
    /// Wrong input type, or an element that cannot be decoded.
    fn decode(&self, a: &DynArray) -> Result<DynArray, CodecError>;
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
    fn encode(&self, a: &DynArray) -> Result<DynArray, CodecError> {
        let x = C::In::from_dyn(a).ok_or_else(|| wrong_type(C::In::ID, a.dtype()))?;
        self.codec.encode(x).map(C::Out::into_dyn)
    }
    fn decode(&self, a: &DynArray) -> Result<DynArray, CodecError> {
        let x = C::Out::from_dyn(a).ok_or_else(|| wrong_type(C::Out::ID, a.dtype()))?;
        self.codec.decode(x).map(C::In::into_dyn)
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

    /// Encode through every stage.
    ///
    /// # Errors
    /// Wrong input type, or the first element a stage cannot encode.
    pub fn encode(&self, input: &DynArray) -> Result<DynArray, CodecError> {
        if input.dtype() != self.data_type.id {
            return Err(wrong_type(self.data_type.id, input.dtype()));
        }
        let mut cur = input.clone();
        for s in &self.stages {
            cur = s.encode(&cur)?;
        }
        Ok(cur)
    }

    /// Decode through every stage, in reverse.
    ///
    /// # Errors
    /// Wrong input type, or the first element a stage cannot decode.
    pub fn decode(&self, encoded: &DynArray) -> Result<DynArray, CodecError> {
        let want = self.encoded_data_type().id;
        if encoded.dtype() != want {
            return Err(wrong_type(want, encoded.dtype()));
        }
        let mut cur = encoded.clone();
        for s in self.stages.iter().rev() {
            cur = s.decode(&cur)?;
        }
        Ok(cur)
    }

    /// The `codecs` list.
    pub fn to_metadata(&self) -> Value {
        Value::Array(self.stages.iter().map(|s| s.to_metadata()).collect())
    }
}
