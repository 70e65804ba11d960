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
mod finite_range;
mod keepbits;
mod scale_offset;

pub use bit_information::{
    BitCounts, BitInformation, InformationOptions, free_entropy, signed_exponent,
};
pub(crate) use keepbits::binade;
pub use keepbits::{keepbits_for_absolute_error, keepbits_for_relative_error};
pub(crate) use scale_offset::fit_in_codes;
pub use scale_offset::{
    FiniteRange, FitOptions, Guarantee, ScaleChoice, ScaleOffsetChoice, best_scale_offset,
    fit_scale_offset,
};

/// Why parameters could not be chosen.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChooseError {
    /// The axis is not one of the array's.
    #[error("bit information: axis {axis} is out of range for an array of {ndim} dimensions")]
    Axis {
        /// The axis asked for.
        axis: usize,
        /// The array's number of dimensions.
        ndim: usize,
    },
    /// The confidence level is not in (0, 1).
    #[error("bit information: confidence must be in (0, 1), got {0}")]
    Confidence(f64),
    /// No two neighbours along the axis are both unmasked.
    #[error(
        "bit information: no pair of adjacent unmasked elements along axis {axis} (the axis needs at least 2 elements, not NaN or the masked value)"
    )]
    NoPairs {
        /// The axis.
        axis: usize,
    },
    /// Words that do not hold the array described, a type that is not real, or bit
    /// counts no data can give.
    #[error("bit information: {0}")]
    Words(String),
    /// Bit counts that cannot be merged.
    #[error("bit counts: cannot merge {0}")]
    Merge(String),
    /// An information level outside [0, 1].
    #[error("keepbits: the information level must be in [0, 1] (e.g. 0.99), got {0}")]
    Level(f64),
    /// keepbits asked of a type it does not apply to.
    #[error("keepbits: {0}")]
    NotAFloat(&'static str),
    /// An error bound that is not positive and finite.
    #[error("the error bound must be positive and finite, got {0}")]
    Bound(f64),
    /// The `scale_offset` source is not a signed float type.
    #[error("scale_offset fit: source data type {0} is not a signed float type")]
    SourceNotFloat(&'static str),
    /// The `cast_value` target is not an integer type.
    #[error("scale_offset fit: target data type {0} is not an integer type")]
    TargetNotInteger(&'static str),
    /// The range is empty, or its ends are not finite values of the source type.
    #[error("scale_offset fit: range [{0}, {1}] must have min <= max, both finite values of {2}")]
    Range(f64, f64, &'static str),
    /// No positive scale of the source type maps the range into the target's codes.
    #[error("scale_offset fit: no positive scale maps the range into the codes of {0}")]
    NoFit(&'static str),
    /// No lossy chain meets the target on this data.
    #[error(
        "plan: no lossy chain meets {requested} on this data; the smallest bound any candidate gives is {smallest} ({candidate}): ask for a bound at least that large, or allow the lossless fallback"
    )]
    Unreachable {
        /// The target asked for, as written (`max_abs_error 1e-9`).
        requested: String,
        /// The smallest bound any lossy candidate guarantees (in the target's unit).
        smallest: f64,
        /// The candidate that gives it.
        candidate: String,
    },
    /// A planning input that is not valid: a target, options or statistics.
    #[error("plan: {0}")]
    Plan(String),
    /// The target has too few codes for the bound.
    #[error(
        "scale_offset fit: max_abs_error {requested} cannot be met in {target} over [{min}, {max}]: the best this target guarantees is {best}; use a wider integer type or a larger bound"
    )]
    BoundNotMet {
        /// The bound asked for.
        requested: f64,
        /// The smallest bound the target guarantees.
        best: f64,
        /// The target data type.
        target: &'static str,
        /// The range's smallest value.
        min: f64,
        /// The range's largest value.
        max: f64,
    },
}
