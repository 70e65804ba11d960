//! Arrays of registered declared types, and the typed <-> [`DynArray`] conversions that work
//! for every type, built-in or declared, through storage words.

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;

use super::dynamic::DynArray;
use crate::dispatch::match_all_arms;
use crate::dtype::custom::CustomDType;
use crate::dtype::id::Scalar;
use crate::dtype::{DType, DTypeId, RegisterError, WordBuf, Words, WordsMut, register_dtype};
use crate::error::{CodecError, MetadataError};

/// An array of a declared type registered with [`crate::register_dtype`], held as its
/// storage words in C order.
///
/// Made by [`DynArray::from_array`] (or by a run-time chain whose output is that type); read
/// back with [`DynArray::to_array`].
#[derive(Clone, Debug, PartialEq)]
pub struct CustomArray {
    dtype: CustomDType,
    shape: Vec<usize>,
    words: WordBuf,
}

impl CustomArray {
    /// The element type.
    pub fn dtype(&self) -> CustomDType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements' storage words, C order.
    pub fn words(&self) -> Words<'_> {
        self.words.as_words()
    }

    pub(crate) fn words_mut(&mut self) -> WordsMut<'_> {
        self.words.as_words_mut()
    }

    fn len(&self) -> usize {
        self.shape.iter().product()
    }

    fn scalar(&self, i: usize) -> Scalar {
        let k = self.dtype.words_per_element();
        let w = self.words.as_words();
        let mut x = [0u64; 2];
        for (j, o) in x.iter_mut().enumerate().take(k) {
            *o = w.get(i * k + j).unwrap_or(0);
        }
        x
    }

    /// `shape` filled with the element whose words are `x`.
    pub(crate) fn filled(dtype: CustomDType, shape: &[usize], x: Scalar) -> Self {
        let k = dtype.words_per_element();
        let n: usize = shape.iter().product();
        let mut words = WordBuf::zeroed(dtype.word_bits(), n * k);
        if x == [0, 0] {
            return CustomArray {
                dtype,
                shape: shape.to_vec(),
                words,
            };
        }
        let mut w = words.as_words_mut();
        for i in 0..n {
            for (j, &o) in x.iter().enumerate().take(k) {
                w.set(i * k + j, o);
            }
        }
        CustomArray {
            dtype,
            shape: shape.to_vec(),
            words,
        }
    }

    /// The elements as scalars (storage words), in an array of the same shape.
    pub(crate) fn scalars(&self) -> ArrayD<Scalar> {
        let v: Vec<Scalar> = (0..self.len()).map(|i| self.scalar(i)).collect();
        ArrayD::from_shape_vec(IxDyn(&self.shape), v)
            .unwrap_or_else(|_| ArrayD::default(IxDyn(&[0])))
    }

    /// An array of `dtype` holding `a`'s elements, in C order.
    pub(crate) fn from_scalars(dtype: CustomDType, a: ArrayD<Scalar>) -> Self {
        let mut out = CustomArray::filled(dtype, a.shape(), [0, 0]);
        let k = dtype.words_per_element();
        let mut w = out.words.as_words_mut();
        for (i, x) in a.iter().enumerate() {
            for (j, &o) in x.iter().enumerate().take(k) {
                w.set(i * k + j, o);
            }
        }
        out
    }

    pub(crate) fn from_le_bytes(
        dtype: CustomDType,
        shape: &[usize],
        bytes: &[u8],
    ) -> Result<Self, CodecError> {
        let n = element_count(shape)?;
        let size = dtype.size();
        if n.checked_mul(size) != Some(bytes.len()) {
            return Err(CodecError::Array(format!(
                "{} bytes do not hold {n} elements of {} ({size} bytes each)",
                bytes.len(),
                dtype.name(),
            )));
        }
        let mut a = CustomArray::filled(dtype, shape, [0, 0]);
        let k = dtype.words_per_element();
        let mut w = a.words.as_words_mut();
        for (i, b) in bytes.chunks_exact(size.max(1)).enumerate() {
            let x = dtype.read_le(b);
            for (j, &o) in x.iter().enumerate().take(k) {
                w.set(i * k + j, o);
            }
        }
        Ok(a)
    }

    pub(crate) fn to_le_bytes(&self) -> Vec<u8> {
        let size = self.dtype.size();
        let mut out = vec![0u8; self.len() * size];
        for (i, chunk) in out.chunks_exact_mut(size.max(1)).enumerate() {
            self.dtype.write_le(self.scalar(i), chunk);
        }
        out
    }

    pub(crate) fn first_scalar(&self) -> Option<Scalar> {
        (self.len() > 0).then(|| self.scalar(0))
    }

    pub(crate) fn first_to_json(&self) -> Option<Value> {
        self.first_scalar().map(|x| self.dtype.value_to_json(x))
    }

    pub(crate) fn same_as(&self, other: &CustomArray) -> bool {
        self.dtype == other.dtype
            && self.shape == other.shape
            && (0..self.len()).all(|i| self.dtype.same_as(self.scalar(i), other.scalar(i)))
    }
}

fn element_count(shape: &[usize]) -> Result<usize, CodecError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| CodecError::Array(format!("shape {shape:?} overflows")))
}

/// Whether `T` is the built-in type `id`.
pub(crate) fn is_builtin<T: 'static>(id: DTypeId) -> bool {
    use std::any::TypeId;
    crate::dispatch::with_any!(id, B => TypeId::of::<B>() == TypeId::of::<T>(), custom _c => false)
}

/// Whether `T`'s elements are what an array of type `id` holds.
fn holds<T: DType>(id: DTypeId) -> bool {
    match id {
        DTypeId::Custom(c) => c.is::<T>(),
        b => is_builtin::<T>(b),
    }
}

impl DynArray {
    /// Wrap a typed array of any type: a built-in one (moved, not copied) or one declared with
    /// [`dtype`](macro@crate::dtype), which is registered on the way
    /// ([`crate::register_dtype`]) and copied into storage words.
    ///
    /// # Errors
    /// A declared type whose name is taken ([`RegisterError`]).
    ///
    /// # Example
    /// ```
    /// use ndarray::array;
    /// use zquant::{DTypeId, DynArray};
    ///
    /// let a = DynArray::from_array(array![[1.5f32, 2.0], [3.0, 4.0]].into_dyn())?;
    /// assert_eq!(a.dtype(), DTypeId::Float32);
    /// assert_eq!(a.shape(), &[2, 2]);
    /// # Ok::<(), zquant::dtype::RegisterError>(())
    /// ```
    pub fn from_array<T: DType>(a: ArrayD<T>) -> Result<DynArray, RegisterError> {
        let id = register_dtype::<T>()?;
        let c = match id {
            DTypeId::Custom(c) => c,
            builtin => {
                return Ok(crate::dispatch::with_any!(builtin, B => {
                    let any: Box<dyn std::any::Any> = Box::new(a);
                    match any.downcast::<ArrayD<B>>() {
                        Ok(b) => <B as super::Element>::into_dyn(*b),
                        // `register_dtype` returned `builtin` for `T`, so `T` is `B`.
                        Err(_) => DynArray::from_scalar(builtin, &[0], [0, 0]),
                    }
                }, custom _c => DynArray::from_scalar(builtin, &[0], [0, 0])));
            }
        };
        let shape = a.shape().to_vec();
        let standard = a.as_standard_layout();
        let mut out = CustomArray::filled(c, &shape, [0, 0]);
        if let Some(s) = standard.as_slice() {
            out.words
                .as_words_mut()
                .copy_from(crate::convert::words_of(s));
        }
        Ok(DynArray::Custom(out))
    }

    /// A one-dimensional array of built-in elements.
    ///
    /// ```
    /// let a = zquant::DynArray::from_vec(vec![1u8, 2, 3]);
    /// assert_eq!(a.shape(), &[3]);
    /// assert_eq!(a.to_vec::<u8>(), Some(vec![1, 2, 3]));
    /// ```
    pub fn from_vec<T: super::Element>(v: Vec<T>) -> DynArray {
        T::into_dyn(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).unwrap_or_default())
    }

    /// The elements in C order, when the array holds `T` (built-in or declared); `None`
    /// for another type.
    pub fn to_vec<T: DType>(&self) -> Option<Vec<T>> {
        if !holds::<T>(self.dtype()) {
            return None;
        }
        let standard = self.to_standard_layout();
        let words = standard.words()?;
        let k = self.dtype().words_per_element().max(1);
        let mut v = vec![T::default(); words.len() / k];
        crate::convert::words_of_mut(&mut v).copy_from(words);
        Some(v)
    }

    /// A copy as a typed array, when the array holds `T` (built-in or declared); `None` for
    /// another type.
    ///
    /// ```
    /// #[zquant::dtype(name = "uint12_example", int(bits = 12, unsigned))]
    /// pub struct UInt12(u16);
    ///
    /// let a = ndarray::ArrayD::from_elem(ndarray::IxDyn(&[2, 3]), UInt12(4095));
    /// let d = zquant::DynArray::from_array(a.clone())?;
    /// assert_eq!(d.dtype().name(), "uint12_example");
    /// assert_eq!(d.to_array::<UInt12>(), Some(a));
    /// # Ok::<(), zquant::dtype::RegisterError>(())
    /// ```
    pub fn to_array<T: DType>(&self) -> Option<ArrayD<T>> {
        ArrayD::from_shape_vec(IxDyn(self.shape()), self.to_vec()?).ok()
    }

    pub(crate) fn custom_fill_value(c: CustomDType, v: &Value) -> Result<DynArray, MetadataError> {
        c.value_from_json(v)
            .map(|x| DynArray::Custom(CustomArray::filled(c, &[], x)))
            .map_err(MetadataError::FillValue)
    }
}
