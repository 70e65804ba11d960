//! The single dispatch point from run-time data types ([`DTypeId`]) to the monomorphized
//! kernels. No other module turns a `DTypeId` into a Rust type.
//!
//! Each `bind_*` function matches the data type(s) once, when a chain is built, and returns
//! a boxed stage holding the typed codec; encoding then calls straight into the typed slice
//! kernels. `cast_value` is a two-level match (source, then target), so the 26 × 26 pairs are
//! generated from the type table, not listed by hand. `numcodecs.fixedscaleoffset` is a
//! two-level match over the eleven types NumPy has (`with_numpy!`).

use crate::codec::cast_value::CastValueConfig;
use crate::codec::fixed_scale_offset::{self, FixedScaleOffsetConfig, NumpyNumber};
use crate::codec::{BitRound, CastValue, FixedScaleOffset, ScaleOffset, bitround};
use crate::dtype::DTypeId;
use crate::error::MetadataError;
use crate::metadata::DataType;
use crate::pipeline::dynamic::{Bound, DynStage};

/// Expand `$yes` for integer and float kinds, `$no` for the others.
macro_rules! if_real {
    (int, $yes:expr, $no:expr) => {
        $yes
    };
    (float, $yes:expr, $no:expr) => {
        $yes
    };
    (complex, $yes:expr, $no:expr) => {
        $no
    };
    (time, $yes:expr, $no:expr) => {
        $no
    };
}

/// `match $id` over the real types, binding the Rust type to `$T` in `$body`; `$fallback`
/// for the others.
macro_rules! match_real_arms {
    (($id:expr, $T:ident, $body:expr, $fallback:expr) $($kind:ident $v:ident = $t:ty,)*) => {
        match $id {
            $(DTypeId::$v => if_real!($kind, {
                #[allow(dead_code)]
                type $T = $t;
                $body
            }, $fallback),)*
        }
    };
}

macro_rules! with_real {
    ($id:expr, $T:ident => $body:expr, else $fallback:expr) => {
        $crate::__zquant_dtype_table!(match_real_arms($id, $T, $body, $fallback))
    };
}

/// `match $id` over every type, binding the Rust type to `$T` in `$body`.
macro_rules! match_all_arms {
    (($id:expr, $T:ident, $body:expr) $($kind:ident $v:ident = $t:ty,)*) => {
        match $id {
            $(DTypeId::$v => {
                #[allow(dead_code)]
                type $T = $t;
                $body
            })*
        }
    };
}

macro_rules! with_any {
    ($id:expr, $T:ident => $body:expr) => {
        $crate::__zquant_dtype_table!(match_all_arms($id, $T, $body))
    };
}
/// `match $id` over the types NumPy has (`int8`…`uint64`, `float16`/`32`/`64`), binding
/// the Rust type to `$T` in `$body`; `$fallback` for the others.
macro_rules! with_numpy {
    ($id:expr, $T:ident => $body:expr, else $fallback:expr) => {
        with_numpy!(@arms $id, $T, $body, $fallback;
            Int8 = i8, Int16 = i16, Int32 = i32, Int64 = i64,
            UInt8 = u8, UInt16 = u16, UInt32 = u32, UInt64 = u64,
            Float16 = $crate::__private::half::f16, Float32 = f32, Float64 = f64)
    };
    (@arms $id:expr, $T:ident, $body:expr, $fallback:expr; $($v:ident = $t:ty),*) => {
        match $id {
            $(DTypeId::$v => {
                #[allow(dead_code)]
                type $T = $t;
                $body
            })*
            _ => $fallback,
        }
    };
}

// Callers of `with_any!` import these names too: the table macro invokes them by name.
pub(crate) use {match_all_arms, with_any};

fn unsupported(codec: &'static str, dt: &DataType, reason: &'static str) -> MetadataError {
    MetadataError::UnsupportedDataType {
        codec,
        dtype: dt.id.name().into(),
        reason,
    }
}

/// Whether `cast_value` accepts this (source or target) data type.
pub fn can_cast(id: DTypeId) -> bool {
    id.is_real()
}

/// Bind `scale_offset` to the array data type `dt`.
///
/// # Errors
/// Unsupported data type or invalid configuration.
pub fn bind_scale_offset(
    dt: &DataType,
    config: Option<&serde_json::Value>,
) -> Result<Box<dyn DynStage>, MetadataError> {
    with_real!(dt.id, T => {
        let c = ScaleOffset::<T>::from_configuration(config)?;
        Ok(Box::new(Bound::new(c, dt.clone(), dt.clone())) as Box<dyn DynStage>)
    }, else Err(unsupported(
        crate::codec::scale_offset::NAME,
        dt,
        "scale_offset is only defined for integer and floating-point types",
    )))
}

/// Bind `bitround` (or its alias) to the array data type `dt`.
///
/// # Errors
/// Unsupported data type or invalid configuration.
pub fn bind_bitround(
    dt: &DataType,
    config: Option<&serde_json::Value>,
    alias: bool,
) -> Result<Box<dyn DynStage>, MetadataError> {
    // Configuration errors are reported before data type errors.
    bitround::parse_keepbits(config)?;
    with_any!(dt.id, T => {
        let c = BitRound::<T>::from_configuration(config, alias)?;
        Ok(Box::new(Bound::new(c, dt.clone(), dt.clone())) as Box<dyn DynStage>)
    })
}

/// Bind `cast_value` from the array data type `dt` to the configured target.
///
/// # Errors
/// Unsupported source or target, or invalid configuration.
pub fn bind_cast_value(
    dt: &DataType,
    config: &CastValueConfig,
) -> Result<Box<dyn DynStage>, MetadataError> {
    let name = crate::codec::cast_value::NAME;
    if !can_cast(config.data_type.id) {
        return Err(unsupported(
            name,
            &config.data_type,
            "cast_value only targets integer and floating-point types",
        ));
    }
    with_real!(dt.id, S => select_cast_target::<S>(dt, config),
        else Err(unsupported(name, dt, "cast_value only reads integer and floating-point types")))
}

fn select_cast_target<S>(
    dt: &DataType,
    config: &CastValueConfig,
) -> Result<Box<dyn DynStage>, MetadataError>
where
    S: crate::dtype::Real + crate::pipeline::dynamic::Element,
{
    let target = config.data_type.clone();
    with_real!(config.data_type.id, D => {
        let c = CastValue::<S, D>::from_config(config)?;
        Ok(Box::new(Bound::new(c, dt.clone(), target)) as Box<dyn DynStage>)
    }, else Err(unsupported(crate::codec::cast_value::NAME, &config.data_type, "not a real type")))
}

/// Bind `numcodecs.fixedscaleoffset` to the array data type `dt` and the configured
/// `astype`.
///
/// # Errors
/// Invalid configuration; a `dtype` or `astype` that NumPy does not have
/// ([`MetadataError::UnsupportedDataType`]); a `dtype` other than `dt`.
pub fn bind_fixed_scale_offset(
    dt: &DataType,
    config: Option<&serde_json::Value>,
) -> Result<Box<dyn DynStage>, MetadataError> {
    let name = fixed_scale_offset::NAME;
    // Configuration errors are reported before data type errors.
    let cfg = FixedScaleOffsetConfig::from_json(config)?;
    let reason = "numcodecs.fixedscaleoffset supports the NumPy types int8..uint64, float16/32/64";
    if !fixed_scale_offset::numpy_supports(dt.id) {
        return Err(unsupported(name, dt, reason));
    }
    let target = DataType::new(cfg.astype_id());
    if !fixed_scale_offset::numpy_supports(target.id) {
        return Err(unsupported(name, &target, reason));
    }
    with_numpy!(dt.id, S => select_fso_target::<S>(dt, &target, &cfg),
        else Err(unsupported(name, dt, reason)))
}

fn select_fso_target<S>(
    dt: &DataType,
    target: &DataType,
    cfg: &FixedScaleOffsetConfig,
) -> Result<Box<dyn DynStage>, MetadataError>
where
    S: NumpyNumber + crate::pipeline::dynamic::Element,
{
    with_numpy!(target.id, D => {
        let c = FixedScaleOffset::<S, D>::from_config(cfg)?;
        Ok(Box::new(Bound::new(c, dt.clone(), target.clone())) as Box<dyn DynStage>)
    }, else Err(unsupported(fixed_scale_offset::NAME, target, "not a NumPy type")))
}
