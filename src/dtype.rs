//! Element types: what each Zarr data type is, bit for bit.
//!
//! [`DType`] describes any element type a codec can see (integers, floats, complex numbers,
//! `numpy.datetime64`/`numpy.timedelta64`); [`Real`] adds what the value-converting codecs
//! (`cast_value`, `scale_offset`) need: an exact value, correctly rounded construction from
//! an exact value, and checked arithmetic in the type's own semantics.
//!
//! Neither trait is meant to be implemented by hand: the [`dtype`](macro@crate::dtype) attribute
//! macro writes both impls from a layout description, for zquant's built-in types as for a
//! user's own.

// Each `#[dtype]` declaration writes the `unsafe impl Plain` of its type.
pub(crate) mod arith;
#[allow(unsafe_code)]
pub(crate) mod builtin;
pub(crate) mod complex;
pub(crate) mod custom;
pub(crate) mod decimal;
pub(crate) mod fill_value;
pub(crate) mod id;

use std::fmt::Debug;

pub use builtin::*;
pub use complex::Complex;
pub use custom::{CustomDType, RegisterError, register_dtype, registered_dtypes};
pub use fill_value::FillValueError;
pub use id::{DTypeId, UnknownDType};
// The public path of `number`'s layouts and storage words (`number` is private); inside the
// crate they are named from `number`, their owner.
pub use crate::number::layout::{FloatLayout, Format, IntLayout, NanEncoding};
pub use crate::number::storage::{Plain, Storage, Word, WordBuf, Words, WordsMut};
// The exact value every conversion starts from ([`Real::to_exact`]).
pub use crate::number::exact::{Class, Exact};

/// `n` elements whose storage words are all zero, in fresh memory that nothing has written:
/// `calloc`'d and, on Linux, from 4 MiB on, advised to be backed by transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`, as NumPy does for its arrays). The first write to such a
/// buffer then faults once per 2 MiB instead of once per 4 KiB, and streaming over it
/// misses the TLB less. This is how the run-time API allocates its outputs; use it for
/// large buffers that a loop reuses (an output for
/// [`DynChain::decode_into`](crate::DynChain::decode_into), a typed codec's `dst`). `None`
/// when `n` elements do not fit in the address space.
///
/// ```
/// let mut out = zquant::dtype::zeroed_vec::<f64>(1 << 20).expect("fits");
/// assert!(out.iter().all(|&x| x == 0.0));
/// out[0] = 1.5;
/// ```
pub fn zeroed_vec<T: Plain>(n: usize) -> Option<Vec<T>> {
    crate::arch::zeroed_vec(n)
}

use crate::number::{CastOptions, Status};

/// The family of an element type, with its bit layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A two's complement (`signed`) or unsigned integer.
    Int(IntLayout),
    /// A binary floating-point number.
    Float(FloatLayout),
    /// A complex number: real then imaginary component, each of this float layout.
    Complex(FloatLayout),
    /// `numpy.datetime64`: an int64 count of units, `i64::MIN` is NaT.
    DateTime,
    /// `numpy.timedelta64`: an int64 count of units, `i64::MIN` is NaT.
    TimeDelta,
}

impl Kind {
    /// Whether the kind models a real number (what `cast_value` and `scale_offset` accept).
    pub const fn is_real(&self) -> bool {
        matches!(self, Kind::Int(_) | Kind::Float(_))
    }

    /// The format of a real kind.
    pub const fn format(&self) -> Option<Format> {
        match self {
            Kind::Int(l) => Some(Format::Int(*l)),
            Kind::Float(l) => Some(Format::Float(*l)),
            _ => None,
        }
    }
}

/// An element type of a Zarr array.
///
/// Implemented by the [`dtype`](macro@crate::dtype) attribute macro.
///
/// ```
/// use zquant::{DType, Kind};
/// use zquant::dtype::Float8E4M3;
/// assert_eq!(Float8E4M3::NAME, "float8_e4m3");
/// assert!(matches!(Float8E4M3::KIND, Kind::Float(_)));
/// let x = Float8E4M3::fill_value_from_json(&serde_json::json!(0.3))?;
/// assert_eq!(x.fill_value_to_json(), serde_json::json!(0.3125));
/// let mut b = [0u8];
/// x.write_le(&mut b);
/// assert_eq!(Float8E4M3::read_le(&b), x);
/// # Ok::<(), zquant::dtype::FillValueError>(())
/// ```
pub trait DType: Plain + Copy + Default + Debug + PartialEq + Send + Sync + 'static {
    /// The Zarr v3 data type name, e.g. `"float8_e4m3"`.
    const NAME: &'static str;
    /// Bytes per element in an array (sub-byte types take one byte each, value in the low
    /// bits, upper bits zero on write and ignored on read).
    const SIZE: usize;
    /// Family and bit layout.
    const KIND: Kind;

    /// Read one element from `SIZE` little-endian bytes (upper bits of sub-byte types ignored).
    fn read_le(bytes: &[u8]) -> Self;
    /// Write one element as `SIZE` little-endian bytes.
    fn write_le(self, out: &mut [u8]);
    /// Parse a Zarr v3 fill value (also the encoding of `scale`, `offset` and `scalar_map`
    /// entries).
    ///
    /// # Errors
    /// [`FillValueError`] when the JSON is not a valid encoding for this type.
    fn fill_value_from_json(v: &serde_json::Value) -> Result<Self, FillValueError>;
    /// Encode as a Zarr v3 fill value.
    fn fill_value_to_json(self) -> serde_json::Value;
    /// Whether the two elements are the same: equal bits, except that any NaN equals any
    /// NaN (per component for complex numbers). The conformance comparison rule.
    fn same_as(self, other: Self) -> bool;
}

/// Why checked arithmetic failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithFault {
    /// The result (or an intermediate) is outside the type's range, and the type cannot
    /// represent it (integers, or floats without infinities).
    Overflow,
    /// The result is NaN and the type has no NaN.
    NotANumber,
    /// An integer division with a remainder.
    InexactDivision,
    /// Division of an integer by zero.
    DivisionByZero,
}

/// A real-number element type: an integer or a float.
///
/// ```
/// use zquant::{CastOptions, Real};
/// use zquant::dtype::{ArithFault, Float4E2M1Fn};
/// // Values are exact; construction rounds once.
/// let (x, _) = Float4E2M1Fn::from_exact(2.6f64.to_exact(), CastOptions::default());
/// assert_eq!(x.to_exact().to_f64(), 3.0);
/// // Arithmetic in the type's own semantics: float4_e2m1fn has no infinity.
/// assert_eq!(x.checked_mul(x), Err(ArithFault::Overflow));
/// assert_eq!(Real::checked_add(100i8, 100), Err(ArithFault::Overflow));
/// ```
pub trait Real: DType {
    /// Meaningful bits per element.
    const BITS: u32;
    /// The layout, as the run-time value kernels take.
    const FORMAT: Format = match Self::KIND.format() {
        Some(f) => f,
        None => panic!("a Real type has an integer or float kind"),
    };

    /// The raw code in the low [`Self::BITS`] bits.
    fn to_bits(self) -> u64;
    /// From a raw code; bits above [`Self::BITS`] are ignored.
    fn from_bits(bits: u64) -> Self;
    /// The exact value.
    fn to_exact(self) -> Exact;
    /// The value rounded once from `x` under `opts`, with what happened.
    fn from_exact(x: Exact, opts: CastOptions) -> (Self, Status);

    /// `self - rhs` in the type's own semantics.
    ///
    /// Floats round once to nearest-even; an overflow gives ±Inf in a type with infinities
    /// and an error otherwise. Integers fail instead of wrapping.
    ///
    /// # Errors
    /// [`ArithFault`] when the result is not representable.
    fn checked_sub(self, rhs: Self) -> Result<Self, ArithFault>;
    /// `self + rhs`; see [`Real::checked_sub`].
    ///
    /// # Errors
    /// [`ArithFault`] when the result is not representable.
    fn checked_add(self, rhs: Self) -> Result<Self, ArithFault>;
    /// `self * rhs`; see [`Real::checked_sub`].
    ///
    /// # Errors
    /// [`ArithFault`] when the result is not representable.
    fn checked_mul(self, rhs: Self) -> Result<Self, ArithFault>;
    /// `self / rhs`; integers must divide exactly.
    ///
    /// # Errors
    /// [`ArithFault`] when the result is not representable.
    fn checked_div(self, rhs: Self) -> Result<Self, ArithFault>;
}
