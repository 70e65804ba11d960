//! Run-time dispatch: codec objects bound to data types, and the `DTypeId -> Rust type`
//! matches over the type table.
//!
//! A codec is bound once per stage, when a chain is built ([`bind_codec`], from the codec
//! registry's entries), to its one non-generic stage
//! type ([`CastValueStage`], [`ScaleOffsetStage`], [`BitRoundStage`],
//! [`FixedScaleOffsetStage`]), which picks its kernels from the data types' layouts. No
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

use crate::codec::cast_value::CastValueConfig;
use crate::codec::{
    BitRoundStage, CastValueStage, DynStage, FixedScaleOffsetStage, ScaleOffsetStage, bitround,
};
use crate::dtype::DTypeId;
use crate::error::MetadataError;
use crate::metadata::DataType;

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

/// Whether `cast_value` accepts this (source or target) data type.
pub fn can_cast(id: DTypeId) -> bool {
    id.is_real()
}

/// Bind `scale_offset` to the array data type `dt`.
///
/// # Errors
/// Unsupported data type or invalid configuration.
#[deprecated(note = "use `zquant::dispatch::bind_codec` or `ScaleOffsetStage::new`")]
pub fn bind_scale_offset(
    dt: &DataType,
    config: Option<&serde_json::Value>,
) -> Result<Box<dyn DynStage>, MetadataError> {
    Ok(Box::new(ScaleOffsetStage::new(dt, config)?))
}

/// Bind `bitround` (or its alias) to the array data type `dt`.
///
/// # Errors
/// Unsupported data type or invalid configuration.
#[deprecated(note = "use `zquant::dispatch::bind_codec` or `BitRoundStage::new`")]
pub fn bind_bitround(
    dt: &DataType,
    config: Option<&serde_json::Value>,
    alias: bool,
) -> Result<Box<dyn DynStage>, MetadataError> {
    // Configuration errors are reported before data type errors.
    bitround::parse_keepbits(config)?;
    Ok(Box::new(BitRoundStage::new(dt, config, alias)?))
}

/// Bind `cast_value` from the array data type `dt` to the configured target.
///
/// # Errors
/// Unsupported source or target, or invalid configuration.
#[deprecated(note = "use `zquant::dispatch::bind_codec` or `CastValueStage::new`")]
pub fn bind_cast_value(
    dt: &DataType,
    config: &CastValueConfig,
) -> Result<Box<dyn DynStage>, MetadataError> {
    Ok(Box::new(CastValueStage::new(dt, config)?))
}

/// Bind `numcodecs.fixedscaleoffset` to the array data type `dt` and the configured
/// `astype`.
///
/// # Errors
/// Invalid configuration; a `dtype` or `astype` that NumPy does not have
/// ([`MetadataError::UnsupportedDataType`]); a `dtype` other than `dt`.
#[deprecated(note = "use `zquant::dispatch::bind_codec` or `FixedScaleOffsetStage::new`")]
pub fn bind_fixed_scale_offset(
    dt: &DataType,
    config: Option<&serde_json::Value>,
) -> Result<Box<dyn DynStage>, MetadataError> {
    Ok(Box::new(FixedScaleOffsetStage::new(dt, config)?))
}
