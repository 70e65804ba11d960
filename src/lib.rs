//! # zquant
//!
//! Zarr v3's lossy array->array codecs — `scale_offset`, `cast_value`, `bitround`, and the
//! legacy `numcodecs.fixedscaleoffset`/`numcodecs.bitround` — over every data type the Zarr
//! specs name, right on every value.
//!
//! The foundation is [`dtype`](mod@dtype) (what each element type is, bit for bit, declared with the
//! [`dtype`](macro@dtype) attribute macro) and one correctly rounded conversion from any
//! real type to any other, under the five `cast_value` rounding modes ([`cast`],
//! [`cast_slice`]).
//!
//! | family | types |
//! |---|---|
//! | signed integers | `int2`, `int4`, `int8`, `int16`, `int32`, `int64` |
//! | unsigned integers | `uint2`, `uint4`, `uint8`, `uint16`, `uint32`, `uint64` |
//! | IEEE floats | `float16` (`half::f16`), `bfloat16` (`half::bf16`), `float32`, `float64` |
//! | small floats | `float4_e2m1fn`, `float6_e2m3fn`, `float6_e3m2fn`, `float8_e3m4`, `float8_e4m3`, `float8_e4m3b11fnuz`, `float8_e4m3fnuz`, `float8_e5m2`, `float8_e5m2fnuz`, `float8_e8m0fnu` |
//! | complex | `complex64`, `complex128`, `complex_float16/32/64`, `complex_bfloat16`, `complex_<small float>` |
//! | time | `numpy.datetime64`, `numpy.timedelta64` |
//!
//! # Quick start
//!
//! **Typed chains**, checked by the compiler: quantize float64 temperatures to `uint8` with
//! `scale_offset` then `cast_value`, and back. Every codec implements [`ArrayCodec`];
//! [`ArrayCodecExt`] gives it `encode`/`decode` on `ndarray` arrays of any layout, and
//! [`ArrayCodec::then`] chains codecs.
//!
//! ```
//! use ndarray::array;
//! use zquant::{ArrayCodec, ArrayCodecExt, CastOptions, CastValue, OutOfRange, Rounding,
//!              ScalarMap, ScaleOffset};
//!
//! // (x - 270) * 4, rounded to the nearest integer: 0.25 K steps from 270 K to 333.75 K;
//! // NaN (missing data) is stored as 255.
//! let chain = ScaleOffset::new(270.0f64, 4.0)?.then(CastValue::<f64, u8>::new(
//!     CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
//!     ScalarMap::nan_as(255),
//! )?);
//! let kelvin = array![[273.15, 280.4], [f64::NAN, 301.0]];
//! let stored = chain.encode(&kelvin)?;
//! assert_eq!(stored, array![[13u8, 42], [255, 124]]);
//! let back = chain.decode(&stored)?;
//! assert_eq!(back[[0, 0]], 273.25);
//! assert!(back[[1, 0]].is_nan());
//! // The `codecs` entries for zarr.json:
//! let codecs = chain.to_metadata();
//! assert_eq!(codecs[0]["name"], "scale_offset");
//! assert_eq!(codecs[1]["configuration"]["data_type"], "uint8");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Run-time chains**, built from the metadata of a `zarr.json` with [`DynChain`], over
//! arrays whose type is known only at run time ([`DynArray`]):
//!
//! ```
//! use serde_json::json;
//! use zquant::{DynArray, DynChain};
//!
//! let chain = DynChain::from_array_to_array_codecs(
//!     &json!("float32"),
//!     &json!("NaN"),
//!     &[json!({"name": "bitround", "configuration": {"keepbits": 3}})],
//! )?;
//! let out = chain.encode(&DynArray::from_vec(vec![1.3f32, 100.7]))?;
//! assert_eq!(out.to_vec::<f32>(), Some(vec![1.25, 104.0]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! More in the guide (`docs/guide.md` in the repository): choosing between the two APIs,
//! each codec's data types, declared data types ([`dtype`](macro@dtype),
//! [`register_dtype`]), and the spec readings zquant chose.
//!
//! # Constructors
//!
//! Every codec has `new(...)` from typed values, `from_configuration(Option<&Value>)` from
//! the `configuration` member of its codec object, and `to_metadata()` for the codec object;
//! codecs with a parsed configuration type (in [`config`]: [`config::CastValueConfig`],
//! [`config::FixedScaleOffsetConfig`], [`config::QuantizeConfig`], [`config::AsTypeConfig`])
//! also have `from_config(&config)`, and the configuration types implement serde's
//! `Serialize`/`Deserialize` in the Zarr JSON shape.
//!
//! # API
//!
//! Everything public is listed here; the modules that hold the implementation are private.
//!
//! **Typed codecs** (element types checked by the compiler): [`ScaleOffset`], [`CastValue`]
//! (with [`ScalarMap`]), [`BitRound`], [`FixedScaleOffset`], [`Quantize`], [`AsType`]; the
//! traits [`ArrayCodec`] (slices, [`ArrayCodec::then`]) and [`ArrayCodecExt`] (`ndarray`
//! arrays), [`Chain`]; the options [`CastOptions`], [`Rounding`], [`OutOfRange`] (the rule),
//! and [`Status`] (what happened to one element); the registry's names, [`CODEC_NAMES`].
//! Their configuration types are in [`config`].
//!
//! **Run-time chains** (data types known from metadata): [`DynChain`] over [`DynArray`]s; the
//! parts below them (one codec bound to a data type, the element types, the metadata values)
//! in [`runtime`].
//!
//! **Data types**: the traits [`DType`], [`Real`], the run-time [`DTypeId`]; the module
//! [`dtype`](mod@dtype) (every built-in type, [`Complex`](dtype::Complex), layouts, storage
//! words, the exact value [`dtype::Exact`], [`dtype::register_dtype`]); the attribute macro
//! [`dtype`](macro@dtype); the conversions [`cast`], [`cast_slice`].
//!
//! **Errors**: [`MetadataError`] (metadata and configuration), [`CodecError`] (running a
//! chain), [`ElementError`] with its [`Rule`] (one failing element), and, in their modules,
//! [`dtype::FillValueError`], [`dtype::RegisterError`], [`choose::ChooseError`],
//! [`zarr::ZarrError`].
//!
//! **Choosing parameters**: the module [`choose`] (keepbits from the data's information,
//! scale and offset from an error bound); [`plan`] (a whole chain for a target).
//!
//! **Zarr**: the module [`zarr`] (whole `zarr.json`/`.zarray` metadata, chunks as bytes);
//! with the feature `zarrs`, `zquant::zarrs` (the codecs as zarrs plugins); with the feature
//! `rayon`, `zquant::parallel` (chunks on a thread pool). Instruction-set levels: [`isa`].
#![warn(missing_docs)]
// docs.rs builds with `--cfg docsrs` (Cargo.toml's `[package.metadata.docs.rs]`): the items
// of the optional features show the feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]
// `unsafe` lives in `arch` (slices seen as words, AVX2/F16C twins) and in the storage
// traits' declarations and impls (`number::storage`, the impls the `dtype` macro writes):
// nowhere else.
#![deny(unsafe_code)]

// Lets the `dtype` macro's absolute `::zquant::…` paths resolve inside this crate too.
extern crate self as zquant;

#[allow(unsafe_code)]
mod arch;
pub mod choose;
pub(crate) mod codec;
// The conformance-vector harness, shared by `examples/conformance.rs` and the test: not an
// API (hidden from the docs).
#[doc(hidden)]
pub mod conformance;
pub(crate) mod convert;
pub(crate) mod dispatch;
pub mod dtype;
pub mod isa {
    //! Instruction-set levels: which arch twins the kernels run, and a cap for testing each.
    pub use crate::arch::level::{Isa, isa, with_max_isa};
}
pub(crate) mod error;
pub(crate) mod metadata;
pub(crate) mod number;
#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub mod parallel;
pub(crate) mod pipeline;
pub mod plan;
pub mod zarr;
#[cfg(feature = "zarrs")]
#[cfg_attr(docsrs, doc(cfg(feature = "zarrs")))]
pub mod zarrs;

// The public API. The modules above that are `pub(crate)` are the implementation; what a
// user names is re-exported here (the main concepts) or in `config` and `runtime` below,
// grouped as in the crate docs' "# API" section. Each item has one path in the docs.

// Typed codecs and their options.
pub use codec::{
    ArrayCodec, AsType, BitRound, CODEC_NAMES, CastValue, Chain, FixedScaleOffset, Quantize,
    ScalarMap, ScaleOffset,
};
pub use number::{CastOptions, OutOfRange, Rounding, Status};
pub use pipeline::ArrayCodecExt;

// Run-time chains.
pub use dispatch::{DynArray, DynChain};

// Data types and conversions.
pub use convert::{cast, cast_slice};
#[doc(inline)]
pub use dtype::{DType, DTypeId, Real};

// Errors.
pub use error::{CodecError, ElementError, MetadataError, Rule};

pub mod config {
    //! Each codec's configuration as a type (serde's `Serialize`/`Deserialize` in the Zarr
    //! JSON shape, `from_config` on the codec), and checking a configuration by name.
    //!
    //! The NumPy-emulation types belong to the numcodecs codecs (`numcodecs.fixedscaleoffset`,
    //! `numcodecs.quantize`, `numcodecs.astype`): [`PyNumber`] (a Python number as numcodecs
    //! reads it), [`NumpyDType`] (a NumPy dtype string), [`NumpyNumber`] (the element types
    //! NumPy has, with its casts).
    pub use crate::codec::astype::AsTypeConfig;
    pub use crate::codec::cast_value::{CastValueConfig, MapEntries};
    pub use crate::codec::fixed_scale_offset::{
        FixedScaleOffsetConfig, NumpyDType, NumpyNumber, PyNumber,
    };
    pub use crate::codec::quantize::QuantizeConfig;
    pub use crate::codec::registry::check_configuration;
}

pub mod runtime {
    //! The parts of the run-time API below [`DynChain`](crate::DynChain): one codec bound to
    //! a data type ([`bind_codec`] -> [`DynStage`]), the element types [`DynArray`](crate::DynArray)
    //! holds ([`Element`], [`CustomArray`]), one element as its storage words
    //! ([`ElementWords`]), the metadata values ([`DataType`], [`CodecObject`]), and the block
    //! size of the fused loop ([`BLOCK`]).
    pub use crate::codec::chain::BLOCK;
    pub use crate::codec::{Direction, DynStage};
    pub use crate::dispatch::{CustomArray, Element, bind_codec};
    pub use crate::dtype::id::ElementWords;
    pub use crate::metadata::{CodecObject, DataType, TIME_UNITS, TimeConfig};
}

// The paths before 0.3.0, kept for the programs that name them (CHANGELOG.md's migration
// table lists each new path). Hidden, so that the docs show each item once.
#[doc(hidden)]
pub use crate::{
    config::{
        AsTypeConfig, CastValueConfig, FixedScaleOffsetConfig, MapEntries, NumpyDType, NumpyNumber,
        PyNumber, QuantizeConfig, check_configuration,
    },
    dtype::{Class, Exact, Kind, register_dtype},
    pipeline::{from_le_bytes, to_le_bytes},
    runtime::{
        BLOCK, CodecObject, CustomArray, DataType, Direction, DynStage, Element, TIME_UNITS,
        TimeConfig, bind_codec,
    },
};
/// The old name of [`runtime::ElementWords`].
#[deprecated(since = "0.3.0", note = "renamed zquant::runtime::ElementWords")]
#[doc(hidden)]
pub type Scalar = runtime::ElementWords;

/// Generate [`DType`] (and [`Real`] for integers and floats) from a layout description.
///
/// On a tuple struct with one field, the storage (`u8`, `u16`, `u32`, `u64`), the struct is
/// kept and given `#[repr(transparent)]` and the usual derives; on an empty
/// `impl DType for T {}` block the impl is filled in for an existing type.
///
/// ```
/// #[zquant::dtype(name = "uint12", int(bits = 12, unsigned))]
/// pub struct UInt12(u16);
///
/// #[zquant::dtype(name = "float8_e4m3fn", float(exponent = 4, mantissa = 3, bias = 7, nan = "all_ones"))]
/// pub struct Float8E4M3Fn(u8);
///
/// use zquant::{DType, Real};
/// assert_eq!(Float8E4M3Fn::from_bits(0x7e).to_exact().to_f64(), 448.0);
/// assert_eq!(UInt12::NAME, "uint12");
/// ```
///
/// Keys: `name = "…"` (required); exactly one of
/// `int(bits = N, signed | unsigned)`,
/// `float(exponent = E, mantissa = M, bias = B, inf, nan = "ieee" | "all_ones" | "negative_zero" | "none", unsigned, no_subnormals)`,
/// `complex(T)` where `T` is a float dtype, `datetime`, `timedelta`.
///
/// The type is also known to run-time code by its name, with no call: metadata naming it
/// reads in any program that links it ([`dtype::registered_dtypes`]).
pub use zquant_macros::dtype;

#[doc(hidden)]
pub mod __private {
    //! What generated code names, and the internals the integration tests reach. Not a
    //! public API: no stability promise.
    pub use crate::dtype::arith::{ArithOp, float_arith, float_same, int_arith};
    pub use crate::dtype::complex::component_layout;
    pub use crate::dtype::custom::Declared;
    pub use crate::dtype::fill_value::{
        complex_from_json, datetime_from_json, datetime_to_json, float_from_json, float_to_json,
        int_from_json, int_to_json,
    };
    pub use crate::dtype::{ArithFault, Complex, DType, FillValueError, Kind, Real};
    pub use crate::number::exact::Exact;
    pub use crate::number::float::{decode_float, decode_table, round_to_float};
    pub use crate::number::int::{decode_int, round_to_int};
    pub use crate::number::layout::{FloatLayout, IntLayout, NanEncoding};
    pub use crate::number::storage::{ComplexOf, Plain, Storage, read_le_bits, write_le_bits};
    pub use crate::number::{CastOptions, Status};
    pub use half;
    pub use inventory;
    pub use serde_json::Value;

    // For the integration tests (`tests/it`), which check the fast kernels against the
    // reference path and the codecs' names against the registry.
    pub use crate::convert::{Caster, ElementFailure, KeyMap, cast_slice_reference};
    pub use crate::number::int::int_value;
}
