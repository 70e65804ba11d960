//! Choose codec parameters from the data: `keepbits` for `bitround` by the data's real
//! information or by a relative-error bound, and `scale`/`offset` for `scale_offset` +
//! `cast_value` by an absolute-error bound.
//!
//! - [`BitInformation::of`] computes the bitwise real information content (Klöwer et al.
//!   2021, "Compressing atmospheric data into its real information content", Nature
//!   Computational Science), following BitInformation.jl's definitions: signed-exponent
//!   floats, mutual information of each bit with the neighbour's along an axis, insignificant
//!   information zeroed by a binomial test. [`BitInformation::keepbits`] then follows
//!   xbitinfo's `get_keepbits`.
//! - [`keepbits_for_relative_error`] gives the fewest bits with `2^-(k+1) <= bound`.
//! - [`fit_scale_offset`] / [`best_scale_offset`] give `offset` and `scale` as values of the
//!   source type, checked with the codecs' own arithmetic, with a guaranteed error bound.
//!
//! ```
//! use zquant::choose::{BitInformation, FiniteRange, FitOptions, InformationOptions, fit_scale_offset};
//! use zquant::DTypeId;
//!
//! let field = ndarray::Array::from_shape_fn((90, 180), |(i, j)| {
//!     273.15 + 30.0 * ((i as f64) / 90.0 * 3.14).sin() + ((j as f64) / 20.0).cos()
//! });
//! let keepbits = BitInformation::of(&field, &InformationOptions::default())?.keepbits(0.99)?;
//! assert!(keepbits < 52);
//!
//! let range = FiniteRange::of(&field).unwrap();
//! let fit = fit_scale_offset(DTypeId::Float64, DTypeId::Int16, range, 0.005, FitOptions::default())?;
//! assert!(fit.max_abs_error <= 0.005);
//! println!("{}", fit.codecs());   // [{"name":"scale_offset",…},{"name":"cast_value",…}]
//! # Ok::<(), zquant::choose::ChooseError>(())
//! ```

mod bit_information;
mod keepbits;

pub use crate::error::ChooseError;

pub(crate) use crate::codec::scale_offset::fit::fit_in_codes;
pub use crate::codec::scale_offset::fit::{
    FitOptions, Guarantee, ScaleChoice, ScaleOffsetChoice, best_scale_offset, fit_scale_offset,
};
pub use crate::codec::scale_offset::range::FiniteRange;
pub use bit_information::{
    BitCounts, BitInformation, InformationOptions, free_entropy, signed_exponent,
};
pub(crate) use keepbits::binade;
pub use keepbits::{keepbits_for_absolute_error, keepbits_for_relative_error};
