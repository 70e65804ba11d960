//! [`CustomArray`]: an array of a registered declared type, the [`DynArray`] variant
//! for the types the built-in table does not list.

use crate::dtype::custom::CustomDType;
use crate::number::storage::{WordBuf, Words, WordsMut};

#[allow(unused_imports)]
use super::array::DynArray;

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
