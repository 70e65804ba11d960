//! [`DynArray`]: an array whose element type is known at run time, what [`DynChain`]
//! (`chain.rs`) reads and writes, with every way to make one and read it back (typed
//! vectors and arrays, little-endian bytes, fill values, storage words), and [`Element`],
//! the built-in types it holds by variant.

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;

use super::custom_array::CustomArray;
use super::{match_all_arms, with_any, words};
use crate::dtype::id::ElementWords;
use crate::dtype::{DType, DTypeId, RegisterError, register_dtype};
use crate::error::{CodecError, MetadataError};
use crate::number::storage::{WordBuf, Words, WordsMut};

#[allow(unused_imports)]
use super::DynChain;

macro_rules! define_dyn_array {
    (() $($kind:ident $v:ident = $t:ty,)*) => {
        /// An array of any data type, known at run time: what [`DynChain`] reads and writes.
        ///
        /// ```
        /// use zquant::{DTypeId, DynArray};
        /// let a = DynArray::from_le_bytes(DTypeId::Int16, &[2, 2], &[1, 0, 2, 0, 3, 0, 0xff, 0xff])?;
        /// assert_eq!(a.shape(), &[2, 2]);
        /// assert_eq!(a.to_vec::<i16>(), Some(vec![1, 2, 3, -1]));
        /// assert_eq!(a.element_json(3), Some(serde_json::json!(-1)));
        /// assert_eq!(a.to_le_bytes()[6..], [0xff, 0xff]);
        /// # Ok::<(), zquant::CodecError>(())
        /// ```
        #[derive(Clone, Debug, PartialEq)]
        pub enum DynArray {
            $(
                #[doc = concat!("`", stringify!($t), "` elements")]
                $v(ArrayD<$t>),
            )*
            /// Elements of a registered declared type ([`crate::register_dtype`]).
            Custom(CustomArray),
        }

        impl DynArray {
            /// The element type.
            pub fn dtype(&self) -> DTypeId {
                match self {
                    $(DynArray::$v(_) => DTypeId::$v,)*
                    DynArray::Custom(a) => DTypeId::Custom(a.dtype()),
                }
            }

            /// The shape.
            pub fn shape(&self) -> &[usize] {
                match self {
                    $(DynArray::$v(a) => a.shape(),)*
                    DynArray::Custom(a) => a.shape(),
                }
            }

            /// The elements as storage words (in memory order), when the array is in
            /// standard (C) layout.
            pub fn words(&self) -> Option<Words<'_>> {
                match self {
                    $(DynArray::$v(a) => standard_words(a),)*
                    DynArray::Custom(a) => Some(a.words()),
                }
            }

            /// The elements as mutable storage words, when the array is in standard layout.
            pub fn words_mut(&mut self) -> Option<WordsMut<'_>> {
                match self {
                    $(DynArray::$v(a) => standard_words_mut(a),)*
                    DynArray::Custom(a) => Some(a.words_mut()),
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

impl DynArray {
    /// An array from little-endian element bytes in C order (the `bytes` codec's output with
    /// `"endian": "little"`).
    ///
    /// Sub-byte types (`int2`, `int4`, `uint2`, `uint4`, 4- and 6-bit floats) take one byte
    /// per element, and the bits above the type's width are ignored, as their data type
    /// specs say of the `bytes` codec: "Encoded as a 1-byte value, `0bIIIIXXXX` where the
    /// upper `IIII` bits are ignored. [...] The upper `IIII` bits are arbitrary". A fill
    /// value, by contrast, is a value, not a byte: `"0xf3"` for `int4` is rejected.
    ///
    /// # Errors
    /// A byte count that does not match the shape.
    pub fn from_le_bytes(
        dtype: DTypeId,
        shape: &[usize],
        bytes: &[u8],
    ) -> Result<Self, CodecError> {
        let n = crate::pipeline::element_count(shape)?;
        let size = dtype.size();
        if n.checked_mul(size) != Some(bytes.len()) {
            return Err(CodecError::Array(format!(
                "{} bytes do not hold {n} elements of {dtype} ({size} bytes each)",
                bytes.len(),
            )));
        }
        DynArray::from_words(dtype, shape, words::words_from_le(dtype, bytes))
    }

    /// The elements as little-endian bytes in C order.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let standard = self.to_standard_layout();
        standard
            .words()
            .map(|w| words::words_to_le(self.dtype(), w))
            .unwrap_or_default()
    }

    /// A 0-d array holding the fill value `v` of type `dtype`.
    ///
    /// # Errors
    /// An invalid fill-value encoding for the type.
    pub fn fill_value(dtype: DTypeId, v: &Value) -> Result<Self, MetadataError> {
        dtype
            .value_from_json(v)
            .map(|x| DynArray::scalar(dtype, x))
            .map_err(MetadataError::FillValue)
    }

    /// A 0-d array holding the element whose storage words are `x`.
    pub(crate) fn scalar(dtype: DTypeId, x: ElementWords) -> Self {
        match DynArray::from_scalar(dtype, &[], x) {
            Ok(a) => a,
            // One element of at most two words, from words of its own type: nothing in
            // `from_scalar` can fail but an allocation of 16 bytes, which aborts anyway.
            Err(e) => unreachable!("a 0-d array: {e}"),
        }
    }

    /// The first element in the Zarr fill-value JSON encoding (for 0-d fill arrays).
    pub fn first_to_json(&self) -> Option<Value> {
        self.first_scalar().map(|x| self.dtype().value_to_json(x))
    }

    /// An array of `shape` filled with the element whose storage words are `x` (see
    /// [`ElementWords`]).
    ///
    /// # Errors
    /// [`CodecError::Array`] when the shape's element count overflows `usize` or its
    /// elements do not fit in memory.
    ///
    /// # Example
    /// ```
    /// use zquant::{DTypeId, DynArray};
    ///
    /// let fill = DynArray::from_scalar(DTypeId::Float32, &[2, 3], [1.5f32.to_bits().into(), 0])?;
    /// assert_eq!(fill.shape(), &[2, 3]);
    /// assert!(DynArray::from_scalar(DTypeId::Float32, &[usize::MAX, 2], [0, 0]).is_err());
    /// # Ok::<(), zquant::CodecError>(())
    /// ```
    pub fn from_scalar(
        dtype: DTypeId,
        shape: &[usize],
        x: ElementWords,
    ) -> Result<Self, CodecError> {
        let n = crate::pipeline::element_count(shape)?;
        let words = words::filled(dtype, n, x).ok_or_else(|| {
            CodecError::Array(format!(
                "shape {shape:?}: {n} elements of {dtype} do not fit in memory; use a smaller \
                 shape"
            ))
        })?;
        DynArray::from_words(dtype, shape, words)
    }

    /// The element at C-order flat index `i` in the Zarr fill-value JSON encoding.
    pub fn element_json(&self, i: usize) -> Option<Value> {
        let standard = self.to_standard_layout();
        let id = self.dtype();
        words::scalar_at(standard.words()?, id.words_per_element(), i).map(|x| id.value_to_json(x))
    }

    /// An array of `shape` whose elements' words are all zero, in fresh memory that is not
    /// written (see `arch::zeroed_vec`): what the allocating [`DynChain`] calls return.
    pub(super) fn zeroed(dtype: DTypeId, shape: &[usize]) -> Result<Self, CodecError> {
        let too_big = || CodecError::Array(format!("shape {shape:?} does not fit in memory"));
        let n = crate::pipeline::element_count(shape).map_err(|_| too_big())?;
        let k = dtype.words_per_element().max(1);
        let words = n
            .checked_mul(k)
            .and_then(|len| words::fresh_zeroed(dtype.word_bits(), len))
            .ok_or_else(too_big)?;
        DynArray::from_words(dtype, shape, words)
    }

    /// The first element's storage words (`None` for an empty array).
    pub fn first_scalar(&self) -> Option<ElementWords> {
        let standard = self.to_standard_layout();
        words::scalar_at(standard.words()?, self.dtype().words_per_element(), 0)
    }

    /// The same elements in standard (C) layout: `self` when it already is, else a copy.
    pub fn to_standard_layout(&self) -> std::borrow::Cow<'_, DynArray> {
        if self.words().is_some() {
            return std::borrow::Cow::Borrowed(self);
        }
        // A strided built-in array (a declared type's are always in C order): its words in
        // logical order, gathered once per word width.
        let id = self.dtype();
        let gathered = with_any!(id, T => T::from_dyn(self)
            .map(|a| words::gather(crate::arch::words_view(a))),
            custom _c => None);
        match gathered.map(|w| DynArray::from_words(id, self.shape(), w)) {
            Some(Ok(a)) => std::borrow::Cow::Owned(a),
            _ => std::borrow::Cow::Borrowed(self),
        }
    }

    /// Conformance equality: same type and shape, every element bit-equal or both NaN.
    pub fn same_as(&self, other: &DynArray) -> bool {
        if self.dtype() != other.dtype() {
            return false;
        }
        let (a, b) = (self.to_standard_layout(), other.to_standard_layout());
        match (a.words(), b.words()) {
            (Some(x), Some(y)) => a.shape() == b.shape() && words::same_words(self.dtype(), x, y),
            _ => false,
        }
    }
}

/// Whether `T`'s elements are what an array of type `id` holds.
fn holds<T: DType>(id: DTypeId) -> bool {
    match id {
        DTypeId::Custom(c) => c.is::<T>(),
        b => b.is_builtin_type::<T>(),
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
                        Err(_) => unreachable!("`register_dtype` names `T`'s own type"),
                    }
                }, custom _c => unreachable!("`register_dtype` returned a built-in type")));
            }
        };
        // The words in C order, gathered in one pass from any layout.
        let words = super::words::gather(crate::arch::words_view(&a));
        Ok(DynArray::Custom(CustomArray::from_parts(
            c,
            a.shape(),
            words,
        )))
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
}

impl DynArray {
    /// The array of type `id` and `shape` whose elements' storage words, in C order, are
    /// `words`: moved, not copied, into the typed array.
    ///
    /// # Errors
    /// Words of another width, or not `words_per_element` for each element of `shape`.
    pub(crate) fn from_words(
        id: DTypeId,
        shape: &[usize],
        words: WordBuf,
    ) -> Result<DynArray, CodecError> {
        let n = crate::pipeline::element_count(shape)?;
        let k = id.words_per_element().max(1);
        let (len, bits) = (words.len(), words.as_words().bits());
        if bits != id.word_bits() || n.checked_mul(k) != Some(len) {
            return Err(CodecError::Array(format!(
                "{len} words of {bits} bits do not hold {n} elements of {id} ({k} words of {} \
                 bits each)",
                id.word_bits()
            )));
        }
        let built = with_any!(id, T => typed::<T>(IxDyn(shape), words),
            custom c => Some(DynArray::Custom(CustomArray::from_parts(c, shape, words))));
        built.ok_or_else(|| CodecError::Array(format!("words that are not {id} elements")))
    }
}

/// `a`'s words, when it is in standard layout. Out of line, so that [`DynArray::words`]
/// is one call per variant rather than 44 inline layout tests, and the instances of
/// types of one size and word width compile to one body (LLVM merges them).
#[inline(never)]
fn standard_words<T: Element>(a: &ArrayD<T>) -> Option<Words<'_>> {
    a.as_slice().map(crate::convert::words_of)
}

/// [`standard_words`], for writing.
#[inline(never)]
fn standard_words_mut<T: Element>(a: &mut ArrayD<T>) -> Option<WordsMut<'_>> {
    a.as_slice_mut().map(crate::convert::words_of_mut)
}

/// The typed array, kept small: it is compiled once per data type (the words' checks once
/// per width, in `arch::array_from_words`).
fn typed<T: Element>(shape: IxDyn, words: WordBuf) -> Option<DynArray> {
    crate::arch::array_from_words::<T>(shape, words).map(T::into_dyn)
}
