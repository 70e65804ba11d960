//! The run-time API: the array whose type is known at run time ([`DynArray`], `array.rs`;
//! [`CustomArray`] for declared types), the chain built from metadata ([`DynChain`],
//! `chain.rs`; from a whole `codecs` list, [`CodecSplit`], `codec_split.rs`), and the
//! `DTypeId -> Rust type` match over the type table (`with_any!`, below).
//!
//! A codec is bound once per stage, when a chain is built ([`bind_codec`], from the codec
//! registry's entries), to its one non-generic stage type (`ScaleOffsetStage`, …, in each
//! codec's directory), which picks its kernels from the data types' layouts. No (source,
//! target) pair of types is instantiated: the stages work on storage words. `with_any!` is
//! only used to view a [`DynArray`]'s elements as words and to build arrays, once per data
//! type, never per element.

mod array;
mod chain;
mod codec_split;
mod custom_array;
mod run;
pub(crate) mod words;

pub use array::{DynArray, Element};
pub use chain::{DynChain, bind_codec};
pub use codec_split::{ARRAY_TO_BYTES, CodecSplit};
pub use custom_array::CustomArray;
pub(crate) use words::{words_from_le, words_to_le};

/// `match $id` over every type, binding the Rust type to `$T` in `$body`.
/// `custom $c => $fallback` is the arm of a registered declared type.
macro_rules! match_all_arms {
    (($id:expr, $T:ident, $body:expr, $c:ident, $custom:expr) $($kind:ident $v:ident = $t:ty,)*) => {
        match $id {
            $(DTypeId::$v => {
                #[allow(dead_code)]
                type $T = $t;
                $body
            })*
            DTypeId::Custom($c) => $custom,
        }
    };
}

macro_rules! with_any {
    ($id:expr, $T:ident => $body:expr, custom $c:ident => $custom:expr) => {
        $crate::__zquant_dtype_table!(match_all_arms($id, $T, $body, $c, $custom))
    };
}
// Callers of `with_any!` import these names too: the table macro invokes them by name.
pub(crate) use {match_all_arms, with_any};
