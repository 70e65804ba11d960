//! The eleven NumPy types, listed once in `numpy_types!`, and what is built on that list:
//! `with_numpy!` (a `match` on a data type that binds its Rust type, how the core picks a
//! kernel), `numpy_supports`, `from_v2_code`. Their numeric rules on x86-64 (the casts and
//! arithmetic numcodecs relies on, [`NumpyNumber`](super::NumpyNumber)) are
//! `numpy_number.rs`, beside this file.

use crate::dtype::DTypeId;

/// Calls `$m!` with every NumPy type as `Variant = Rust type, "v2 code"`, after the
/// parenthesised arguments: the one list of the eleven types.
macro_rules! numpy_types {
    ($m:ident ($($args:tt)*)) => {
        $m! {
            ($($args)*)
            Int8 = i8, "i1";
            Int16 = i16, "i2";
            Int32 = i32, "i4";
            Int64 = i64, "i8";
            UInt8 = u8, "u1";
            UInt16 = u16, "u2";
            UInt32 = u32, "u4";
            UInt64 = u64, "u8";
            Float16 = half::f16, "f2";
            Float32 = f32, "f4";
            Float64 = f64, "f8";
        }
    };
}
pub(crate) use numpy_types;

/// `match $id` over the NumPy types, binding the Rust type to `$T` in `$body`; `$fallback`
/// for the others.
macro_rules! with_numpy {
    ($id:expr, $T:ident => $body:expr, else $fallback:expr) => {{
        use $crate::codec::fixed_scale_offset::numpy::with_numpy_arms;
        $crate::codec::fixed_scale_offset::numpy::numpy_types!(with_numpy_arms(
            $id, $T, $body, $fallback
        ))
    }};
}
macro_rules! with_numpy_arms {
    (($id:expr, $T:ident, $body:expr, $fallback:expr) $($v:ident = $t:ty, $code:literal;)*) => {
        match $id {
            $($crate::dtype::DTypeId::$v => {
                #[allow(dead_code)]
                type $T = $t;
                $body
            })*
            _ => $fallback,
        }
    };
}
pub(crate) use {with_numpy, with_numpy_arms};

macro_rules! define_lists {
    (() $($v:ident = $t:ty, $code:literal;)*) => {
        /// Whether NumPy has this data type (and so numcodecs can use it as `dtype`/`astype`).
        pub fn numpy_supports(id: DTypeId) -> bool {
            matches!(id, $(DTypeId::$v)|*)
        }

        /// The data type of a Zarr v2 type code without its byte-order character (`"f8"`).
        pub(crate) fn from_v2_code(code: &str) -> Option<DTypeId> {
            match code {
                $($code => Some(DTypeId::$v),)*
                _ => None,
            }
        }
    };
}
numpy_types!(define_lists());
