//! The run-time identity of a built-in data type.
//!
//! [`DTypeId`] is what JSON metadata names; the single table below ties each variant to its
//! Rust type, and [`crate::dispatch`] is the only place that turns one into the other.

use std::fmt;
use std::str::FromStr;

use super::custom::CustomDType;

/// Lists every built-in data type as `Variant = Rust type`, with its kind tag
/// (`int`, `float`, `complex`, `time`), by calling `$m!` with the list (after the optional
/// parenthesised arguments).
#[macro_export]
#[doc(hidden)]
macro_rules! __zquant_dtype_table {
    ($m:ident) => {
        $crate::__zquant_dtype_table!($m ());
    };
    ($m:ident ($($args:tt)*)) => {
        $m! {
            ($($args)*)
            int Int2 = $crate::dtype::Int2,
            int Int4 = $crate::dtype::Int4,
            int Int8 = i8,
            int Int16 = i16,
            int Int32 = i32,
            int Int64 = i64,
            int UInt2 = $crate::dtype::UInt2,
            int UInt4 = $crate::dtype::UInt4,
            int UInt8 = u8,
            int UInt16 = u16,
            int UInt32 = u32,
            int UInt64 = u64,
            float Float4E2M1Fn = $crate::dtype::Float4E2M1Fn,
            float Float6E2M3Fn = $crate::dtype::Float6E2M3Fn,
            float Float6E3M2Fn = $crate::dtype::Float6E3M2Fn,
            float Float8E3M4 = $crate::dtype::Float8E3M4,
            float Float8E4M3 = $crate::dtype::Float8E4M3,
            float Float8E4M3B11Fnuz = $crate::dtype::Float8E4M3B11Fnuz,
            float Float8E4M3Fnuz = $crate::dtype::Float8E4M3Fnuz,
            float Float8E5M2 = $crate::dtype::Float8E5M2,
            float Float8E5M2Fnuz = $crate::dtype::Float8E5M2Fnuz,
            float Float8E8M0Fnu = $crate::dtype::Float8E8M0Fnu,
            float BFloat16 = $crate::__private::half::bf16,
            float Float16 = $crate::__private::half::f16,
            float Float32 = f32,
            float Float64 = f64,
            complex Complex64 = $crate::dtype::Complex<f32>,
            complex Complex128 = $crate::dtype::Complex<f64>,
            complex ComplexFloat16 = $crate::dtype::Complex<$crate::__private::half::f16>,
            complex ComplexBFloat16 = $crate::dtype::Complex<$crate::__private::half::bf16>,
            complex ComplexFloat32 = $crate::dtype::ComplexFloat32,
            complex ComplexFloat64 = $crate::dtype::ComplexFloat64,
            complex ComplexFloat4E2M1Fn = $crate::dtype::Complex<$crate::dtype::Float4E2M1Fn>,
            complex ComplexFloat6E2M3Fn = $crate::dtype::Complex<$crate::dtype::Float6E2M3Fn>,
            complex ComplexFloat6E3M2Fn = $crate::dtype::Complex<$crate::dtype::Float6E3M2Fn>,
            complex ComplexFloat8E3M4 = $crate::dtype::Complex<$crate::dtype::Float8E3M4>,
            complex ComplexFloat8E4M3 = $crate::dtype::Complex<$crate::dtype::Float8E4M3>,
            complex ComplexFloat8E4M3B11Fnuz = $crate::dtype::Complex<$crate::dtype::Float8E4M3B11Fnuz>,
            complex ComplexFloat8E4M3Fnuz = $crate::dtype::Complex<$crate::dtype::Float8E4M3Fnuz>,
            complex ComplexFloat8E5M2 = $crate::dtype::Complex<$crate::dtype::Float8E5M2>,
            complex ComplexFloat8E5M2Fnuz = $crate::dtype::Complex<$crate::dtype::Float8E5M2Fnuz>,
            complex ComplexFloat8E8M0Fnu = $crate::dtype::Complex<$crate::dtype::Float8E8M0Fnu>,
            time DateTime64 = $crate::dtype::DateTime64,
            time TimeDelta64 = $crate::dtype::TimeDelta64,
        }
    };
}

macro_rules! define_id {
    (() $($kind:ident $v:ident = $t:ty,)*) => {
        /// A data type, by identity: a built-in type, or one declared with
        /// [`dtype`](macro@crate::dtype) and registered with [`crate::register_dtype`].
        ///
        /// ```
        /// use zquant::DTypeId;
        /// let id: DTypeId = "float8_e5m2".parse()?;
        /// assert_eq!((id.size(), id.word_bits(), id.is_real()), (1, 8, true));
        /// assert_eq!(DTypeId::Complex64.words_per_element(), 2);
        /// assert_eq!(id.value_to_json(id.value_from_json(&serde_json::json!(-0.0))?), serde_json::json!(-0.0));
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DTypeId {
            $(
                #[doc = concat!("`", stringify!($t), "`")]
                $v,
            )*
            /// A registered declared type.
            Custom(CustomDType),
        }

        impl DTypeId {
            /// Every built-in data type (registered types: [`crate::dtype::registered_dtypes`]).
            pub const ALL: &'static [DTypeId] = &[$(DTypeId::$v),*];

            /// The Zarr name (`"float8_e4m3"`, `"numpy.datetime64"`, …).
            pub fn name(self) -> &'static str {
                match self {
                    $(DTypeId::$v => <$t as $crate::dtype::DType>::NAME,)*
                    DTypeId::Custom(c) => c.name(),
                }
            }

            /// The kind and layout.
            pub fn kind(self) -> $crate::dtype::Kind {
                match self {
                    $(DTypeId::$v => <$t as $crate::dtype::DType>::KIND,)*
                    DTypeId::Custom(c) => c.kind(),
                }
            }

            /// Bytes per element.
            pub fn size(self) -> usize {
                match self {
                    $(DTypeId::$v => <$t as $crate::dtype::DType>::SIZE,)*
                    DTypeId::Custom(c) => c.size(),
                }
            }

            /// Width of the storage words an element is made of (8, 16, 32 or 64).
            pub fn word_bits(self) -> u32 {
                match self {
                    $(DTypeId::$v => <<$t as $crate::number::storage::Plain>::Word as $crate::number::storage::Word>::BITS,)*
                    DTypeId::Custom(c) => c.word_bits(),
                }
            }

            /// Storage words per element (2 for complex types, 1 otherwise).
            pub fn words_per_element(self) -> usize {
                match self {
                    $(DTypeId::$v => <$t as $crate::number::storage::Plain>::WORDS,)*
                    DTypeId::Custom(c) => c.words_per_element(),
                }
            }

            /// Whether this is the built-in type whose Rust type is `T`.
            pub(crate) fn is_builtin_type<T: 'static>(self) -> bool {
                match self {
                    $(DTypeId::$v => std::any::TypeId::of::<$t>() == std::any::TypeId::of::<T>(),)*
                    DTypeId::Custom(_) => false,
                }
            }

            /// Parse a Zarr fill-value encoding of this type into an element's storage words.
            ///
            /// # Errors
            /// Not a valid encoding for the type.
            pub fn value_from_json(self, v: &serde_json::Value) -> Result<ElementWords, $crate::dtype::FillValueError> {
                match self {
                    $(DTypeId::$v => <$t as $crate::dtype::DType>::fill_value_from_json(v).map(scalar_of),)*
                    DTypeId::Custom(c) => c.value_from_json(v),
                }
            }

            /// The Zarr fill-value encoding of an element given by its storage words.
            pub fn value_to_json(self, x: ElementWords) -> serde_json::Value {
                match self {
                    $(DTypeId::$v => $crate::dtype::DType::fill_value_to_json(element_of::<$t>(x)),)*
                    DTypeId::Custom(c) => c.value_to_json(x),
                }
            }
        }
    };
}
__zquant_dtype_table!(define_id);

/// One element of any built-in type as its storage words, zero-extended (complex types use
/// both, real then imaginary component; the others only the first).
pub type ElementWords = [u64; 2];

fn scalar_of<T: crate::dtype::DType>(x: T) -> ElementWords {
    words_to_element(crate::arch::words(std::slice::from_ref(&x)))
}

/// An element's words, zero-extended: compiled once per word width, not per type (out
/// of line: it runs once per fill value).
#[inline(never)]
fn words_to_element<W: crate::number::storage::Word>(words: &[W]) -> ElementWords {
    let mut out = [0u64; 2];
    for (o, w) in out.iter_mut().zip(words) {
        *o = w.to_u64();
    }
    out
}

/// The element whose storage words are `x` (words beyond the type's own are ignored).
pub(crate) fn element_of<T: crate::dtype::DType>(x: ElementWords) -> T {
    let mut e = T::default();
    element_to_words(x, crate::arch::words_mut(std::slice::from_mut(&mut e)));
    e
}

/// `x`'s words into an element's words: compiled once per word width, not per type (out
/// of line: it runs once per fill value).
#[inline(never)]
fn element_to_words<W: crate::number::storage::Word>(x: ElementWords, words: &mut [W]) {
    for (w, o) in words.iter_mut().zip(x) {
        *w = W::from_u64(o);
    }
}

/// The storage words of one element.
pub(crate) fn scalar<T: crate::dtype::DType>(x: T) -> ElementWords {
    scalar_of(x)
}

impl DTypeId {
    /// Whether values of this type are real numbers (integers or floats).
    pub fn is_real(self) -> bool {
        self.kind().is_real()
    }

    /// The format of a real type (`None` for complex and time types).
    pub fn format(self) -> Option<crate::number::layout::Format> {
        self.kind().format()
    }
}

impl fmt::Display for DTypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown data type name.
///
/// ```
/// let e = "float128".parse::<zquant::DTypeId>().unwrap_err();
/// assert!(e.to_string().starts_with("unknown data type \"float128\""));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown data type {0:?}: not a Zarr data type zquant implements, nor a type declared with \
     #[zquant::dtype] in a crate this program links (or registered with \
     zquant::register_dtype::<T>())"
)]
pub struct UnknownDType(pub String);

impl FromStr for DTypeId {
    type Err = UnknownDType;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DTypeId::ALL
            .iter()
            .copied()
            .find(|d| d.name() == s)
            .or_else(|| super::custom::lookup(s).map(DTypeId::Custom))
            .ok_or_else(|| UnknownDType(s.to_string()))
    }
}
