//! [`ChooseError`]: why `zquant::choose` (and the planner) could not choose parameters.
//! Here, in the error layer, because the choices live where their codec does (the
//! `scale_offset` fit is in `codec/scale_offset/`) and `choose` sits above the codecs.

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
