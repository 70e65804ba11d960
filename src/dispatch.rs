//! Run-time dispatch: codec objects bound to data types, and the `DTypeId -> Rust type`
//! matches over the type table.
//!
//! A codec is bound once per stage, when a chain is built ([`bind_codec`], from the codec
//! registry's entries), to its one non-generic stage
//! type (`CastValueStage`, `ScaleOffsetStage`, `BitRoundStage`,
//! `FixedScaleOffsetStage`, in `crate::codec`), which picks its kernels from the data types' layouts. No
//! (source, target) pair of types is instantiated: the stages work on storage words.
//! The `with_any!`/`with_real!` matches below are only used to view a [`DynArray`]'s
//! elements as words and to build arrays.
//!

mod custom;
mod dynamic;
pub(crate) mod words;

pub use custom::CustomArray;
pub use dynamic::{DynArray, DynChain, Element, bind_codec};
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
