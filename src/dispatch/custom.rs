//! Arrays of registered declared types, and the typed <-> [`DynArray`] conversions that work
//! for every type, built-in or declared, through storage words.

use super::dynamic::DynArray;
use crate::dispatch::match_all_arms;
use crate::dtype::custom::CustomDType;
use crate::dtype::{DType, DTypeId, RegisterError, register_dtype};
use crate::number::storage::{WordBuf, Words, WordsMut};
use ndarray::{ArrayD, IxDyn};

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

    /// The array of `dtype` and `shape` whose words (C order) are `words`; the caller has
    /// checked their width and count.
    pub(crate) fn from_parts(dtype: CustomDType, shape: &[usize], words: WordBuf) -> Self {
        CustomArray {
            dtype,
            shape: shape.to_vec(),
            words,
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
