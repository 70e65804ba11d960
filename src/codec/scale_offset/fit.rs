//! `scale_offset` + `cast_value` parameters for a float array stored as integers, with a
//! guaranteed absolute error.
//!
//! The chain is `scale_offset` (`t = (x - offset) * scale`, each operation rounded to
//! nearest-even in the source float type) then `cast_value` to the integer target
//! (nearest-even, out-of-range is an error); decoding is `(q / scale) + offset` in the
//! source type after `q` is cast back. Every step is monotone in `x`, so the codes of the
//! range's two ends bound every code, and they are computed here with the codecs' own
//! arithmetic (`dtype::arith::arith`, the conversion core): the fit is what the codec does.
//!
//! The error bound is an a-priori one (each rounding adds at most `u|r| + η`, `u` the unit
//! roundoff, `η` half the smallest subnormal) and holds for every value of the source type
//! in the range, not only for the values of the array at hand:
//!
//! ```text
//! |y - x| <= 1/(2s) + (u A + η) + (u D s + η + e4)/s + (u Q'/s + η) + (u (|o| + Q'/s + η) + η)
//! ```
//!
//! with `A = max |x - o|`, `D = A(1+u) + η`, `Q` the largest code magnitude, `Q' = Q(1+u)` and
//! `e4 = uQ` when `Q` exceeds `2^(p)` (the code does not convert back exactly), else 0.
//!
//! One file (about 900 lines with its tests): the bound above, the arithmetic it is checked
//! in, the exact check that refines it and the search over scales are one derivation, and
//! each step is read against the others.

use serde_json::{Value, json};

use super::range::FiniteRange;
use crate::codec::{cast_value, scale_offset};
use crate::convert::{exact_of, round_into};
use crate::dtype::DTypeId;
use crate::dtype::arith::{ArithOp, arith, f64_to_exact};
use crate::error::ChooseError;
use crate::number::exact::Exact;
use crate::number::layout::{FloatLayout, Format, IntLayout};
use crate::number::{CastOptions, Rounding};

/// Options of [`best_scale_offset`] and [`fit_scale_offset`].
///
/// ```
/// use zquant::choose::{FitOptions, ScaleChoice};
/// let thrifty = FitOptions { scale: ScaleChoice::Smallest, ..FitOptions::default() };
/// assert!(!thrifty.nan_sentinel);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FitOptions {
    /// Keep the target's largest code out of the data's range, for a `scalar_map` that
    /// stores NaN as that code (included in [`ScaleOffsetChoice::codecs`]).
    pub nan_sentinel: bool,
    /// Which scale [`fit_scale_offset`] takes among those that meet the bound.
    pub scale: ScaleChoice,
}

/// Which of the scales that meet the bound [`fit_scale_offset`] takes.
///
/// ```
/// use zquant::choose::ScaleChoice;
/// assert_eq!(ScaleChoice::default(), ScaleChoice::Largest);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScaleChoice {
    /// The largest: the target's codes used as fully as the range allows, the smallest
    /// error ([`best_scale_offset`]'s).
    #[default]
    Largest,
    /// The smallest that meets the bound: the fewest distinct codes, which a later
    /// compressor often prefers (within a few percent of `span / (2 · bound)` codes).
    Smallest,
}

/// How a [`ScaleOffsetChoice`]'s `max_abs_error` was established.
///
/// ```
/// use zquant::choose::{FiniteRange, FitOptions, Guarantee, best_scale_offset};
/// use zquant::DTypeId;
/// let r = FiniteRange { min: -1.0, max: 1.0 };
/// let c = best_scale_offset(DTypeId::Float32, DTypeId::Int8, r, FitOptions::default())?;
/// assert_eq!(c.guarantee, Guarantee::Exact);
/// let w = best_scale_offset(DTypeId::Float32, DTypeId::Int32, r, FitOptions::default())?;
/// assert_eq!(w.guarantee, Guarantee::APriori);
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guarantee {
    /// Checked over every code the range reaches (targets of at most 16 bits): each code's
    /// decoded value against the source values that encode to it, the cells' edges found
    /// by running the codec's encode in the source type's arithmetic. The bound is the
    /// largest such error (rounded up by at most one `f64` ulp): exactly what the codec
    /// does.
    Exact,
    /// The a-priori bound of the module docs (wider targets), conservative by about
    /// `5u · A`.
    APriori,
}

/// A `scale_offset` configuration for a source float type and an integer target, with the
/// error it guarantees.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleOffsetChoice {
    /// The array's data type (a float type).
    pub source: DTypeId,
    /// The integer type `cast_value` stores.
    pub target: DTypeId,
    /// `offset`, a value of the source type.
    pub offset: f64,
    /// `scale`, a positive value of the source type.
    pub scale: f64,
    /// The codes of the range's smallest and largest values: every value in the range
    /// encodes within them.
    pub codes: (i128, i128),
    /// The guaranteed bound on `|decode(encode(x)) - x|` for every value `x` of the source
    /// type in the range.
    pub max_abs_error: f64,
    /// The code that stands for NaN, with [`FitOptions::nan_sentinel`].
    pub nan_code: Option<i128>,
    /// How `max_abs_error` was established.
    pub guarantee: Guarantee,
    offset_code: u64,
    scale_code: u64,
}

impl ScaleOffsetChoice {
    /// The number of distinct codes the range can encode to, `codes.1 - codes.0 + 1` (the
    /// NaN code, if any, not included).
    ///
    /// ```
    /// use zquant::choose::{FiniteRange, FitOptions, ScaleChoice, fit_scale_offset};
    /// use zquant::DTypeId;
    /// let range = FiniteRange { min: 0.0, max: 10.0 };
    /// let smallest = FitOptions { scale: ScaleChoice::Smallest, ..Default::default() };
    /// let few = fit_scale_offset(DTypeId::Float32, DTypeId::Int16, range, 0.01, smallest)?;
    /// let many =
    ///     fit_scale_offset(DTypeId::Float32, DTypeId::Int16, range, 0.01, FitOptions::default())?;
    /// assert!(few.max_abs_error <= 0.01 && few.code_count() < 600); // about 10 / 0.02 = 500
    /// assert!(many.code_count() > 65_000);
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    pub fn code_count(&self) -> u128 {
        (self.codes.1 - self.codes.0 + 1).unsigned_abs()
    }

    /// `offset` as its JSON number (the source type's fill-value encoding).
    pub fn offset_json(&self) -> Value {
        self.source.value_to_json([self.offset_code, 0])
    }

    /// `scale` as its JSON number.
    pub fn scale_json(&self) -> Value {
        self.source.value_to_json([self.scale_code, 0])
    }

    /// The `codecs` entries: `scale_offset`, then `cast_value` to the target with
    /// nearest-even rounding (and the NaN `scalar_map` when a code is reserved).
    pub fn codecs(&self) -> Value {
        let mut cast = json!({"data_type": self.target.name(), "rounding": "nearest-even"});
        if let Some(c) = self.nan_code {
            let c = Value::from(c as i64);
            cast["scalar_map"] = json!({"encode": [["NaN", c]], "decode": [[c, "NaN"]]});
        }
        json!([
            {"name": scale_offset::NAME, "configuration": {"offset": self.offset_json(), "scale": self.scale_json()}},
            {"name": cast_value::NAME, "configuration": cast},
        ])
    }
}

/// The source float layout and target integer layout, or why they are not.
fn layouts(source: DTypeId, target: DTypeId) -> Result<(FloatLayout, IntLayout), ChooseError> {
    let src = match source.format() {
        Some(Format::Float(l)) if l.signed && l.subnormals => l,
        _ => return Err(ChooseError::SourceNotFloat(source.name())),
    };
    let dst = match target.format() {
        Some(Format::Int(l)) => l,
        _ => return Err(ChooseError::TargetNotInteger(target.name())),
    };
    Ok((src, dst))
}

/// The codec's arithmetic on one source layout.
///
/// `float32` and `float64` sources compute with the hardware's operations, which give the
/// same results as the generic path (IEEE's correctly rounded `+ - * /`, round to nearest
/// even) at a fraction of the cost: the exact check runs them a few times per code.
struct Arith {
    f: Format,
    l: FloatLayout,
    target: IntLayout,
    native: Native,
}

/// Which hardware type computes a source's arithmetic, if any.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Native {
    F32,
    F64,
    No,
}

impl Native {
    fn of(source: DTypeId) -> Native {
        match source {
            DTypeId::Float32 => Native::F32,
            DTypeId::Float64 => Native::F64,
            _ => Native::No,
        }
    }
}

impl Arith {
    fn code(&self, v: f64, rounding: Rounding) -> Option<u64> {
        match (self.native, rounding) {
            // `as` rounds to nearest even, and overflows to infinity, not a value.
            (Native::F32, Rounding::NearestEven) => {
                let x = v as f32;
                return (x.is_finite() || !v.is_finite()).then(|| u64::from(x.to_bits()));
            }
            (Native::F64, Rounding::NearestEven) => return Some(v.to_bits()),
            _ => {}
        }
        let opts = CastOptions {
            rounding,
            ..Default::default()
        };
        let (c, st) = round_into(self.f, f64_to_exact(v), opts);
        (!st.is_error()).then_some(c)
    }
    fn value(&self, c: u64) -> f64 {
        match self.native {
            Native::F32 => f64::from(f32::from_bits(c as u32)),
            Native::F64 => f64::from_bits(c),
            Native::No => exact_of(self.f, c).to_f64(),
        }
    }
    fn op(&self, a: u64, b: u64, op: ArithOp) -> Option<u64> {
        match self.native {
            Native::F32 => {
                let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
                let r = match op {
                    ArithOp::Sub => x - y,
                    ArithOp::Add => x + y,
                    ArithOp::Mul => x * y,
                    ArithOp::Div => x / y,
                };
                r.is_finite().then(|| u64::from(r.to_bits()))
            }
            Native::F64 => {
                let (x, y) = (f64::from_bits(a), f64::from_bits(b));
                let r = match op {
                    ArithOp::Sub => x - y,
                    ArithOp::Add => x + y,
                    ArithOp::Mul => x * y,
                    ArithOp::Div => x / y,
                };
                r.is_finite().then(|| r.to_bits())
            }
            Native::No => {
                let r = arith(self.f, a, b, op).ok()?;
                self.value(r).is_finite().then_some(r)
            }
        }
    }
    /// `cast_value(round((x - o) * s))`, `None` when the codec fails.
    fn encode(&self, x: u64, o: u64, s: u64) -> Option<i128> {
        let t = self.op(self.op(x, o, ArithOp::Sub)?, s, ArithOp::Mul)?;
        if self.native != Native::No {
            // A finite value rounded to an integer, then range-checked: `cast_value`'s
            // nearest-even with out-of-range an error.
            let q = self.value(t).round_ties_even();
            let (lo, hi) = (self.target.min(), self.target.max());
            return (q >= lo as f64 && q <= hi as f64).then_some(q as i128);
        }
        let (q, st) = round_into(
            Format::Int(self.target),
            exact_of(self.f, t),
            Default::default(),
        );
        (!st.is_error()).then(|| crate::number::int::int_value(&self.target, q))
    }
    /// `(cast_value(q) / s) + o`.
    fn decode(&self, q: i128, o: u64, s: u64) -> Option<f64> {
        let qc = match self.native {
            // `as` from an integer rounds to nearest even.
            Native::F32 => u64::from((q as f32).to_bits()),
            Native::F64 => (q as f64).to_bits(),
            Native::No => {
                let (qc, st) = round_into(self.f, Exact::from_i128(q), Default::default());
                if st.is_error() {
                    return None;
                }
                qc
            }
        };
        let y = self.op(self.op(qc, s, ArithOp::Div)?, o, ArithOp::Add)?;
        Some(self.value(y))
    }
}

/// The configuration that uses the target's codes as fully as the range allows (the
/// largest scale), and so has the smallest error bound this target can give.
///
/// ```
/// use zquant::choose::{FiniteRange, FitOptions, best_scale_offset};
/// use zquant::DTypeId;
/// let range = FiniteRange { min: 250.0, max: 310.0 };
/// let c = best_scale_offset(DTypeId::Float32, DTypeId::UInt8, range, FitOptions::default())?;
/// assert!(c.codes.0 >= 0 && c.codes.1 <= 255);
/// assert!(c.max_abs_error < 0.12);       // 60 / 255 / 2 = 0.1176...
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
///
/// # Errors
/// A source that is not a signed float type with subnormals, a target that is not an
/// integer type, a range that is empty or not made of finite values of the source type,
/// [`ChooseError::NoFit`] when no scale maps the range into the target's codes.
pub fn best_scale_offset(
    source: DTypeId,
    target: DTypeId,
    range: FiniteRange,
    opts: FitOptions,
) -> Result<ScaleOffsetChoice, ChooseError> {
    let fit = Fit::new(source, target, range, opts)?;
    if fit.min_c == fit.max_c {
        return fit.single();
    }
    // Shrink the ideal scale until the rounded offset and scale keep both ends in range:
    // by 2^-52 … 2^-1, then by halves (rounding the offset shifts the codes by up to
    // u|o|s, which only a smaller scale absorbs).
    let factors = std::iter::once(1.0)
        .chain((1..=52).rev().map(|k| 1.0 - (-(k as f64)).exp2()))
        .chain((2..=1100).map(|k| (-(k as f64)).exp2()));
    for f in factors {
        match fit.at_scale(fit.ideal * f, None) {
            Step::Fits(c) => return Ok(*c),
            Step::Next => {}
            Step::Stop => break,
        }
    }
    Err(ChooseError::NoFit(target.name()))
}

/// One try of [`Fit::at_scale`].
enum Step {
    Fits(Box<ScaleOffsetChoice>),
    Next,
    Stop,
}

/// The search's loop invariants: the codec's arithmetic, the range's codes, the target's
/// codes.
struct Fit {
    a: Arith,
    source: DTypeId,
    target: DTypeId,
    range: FiniteRange,
    min_c: u64,
    max_c: u64,
    lo: i128,
    hi: i128,
    opts: FitOptions,
    max_finite: f64,
    ideal: f64,
    mid: f64,
    center: f64,
    /// How many more codes the exact check may visit; `None`: no limit. With a limit, a
    /// configuration whose a-priori bound meets the one asked for is taken without the
    /// exact check, which then only refines scales the a-priori bound rules out.
    exact_budget: Option<std::cell::Cell<u64>>,
}

impl Fit {
    fn new(
        source: DTypeId,
        target: DTypeId,
        range: FiniteRange,
        opts: FitOptions,
    ) -> Result<Fit, ChooseError> {
        let (l, t) = layouts(source, target)?;
        let a = Arith {
            f: Format::Float(l),
            l,
            target: t,
            native: Native::of(source),
        };
        let in_type = |v: f64| {
            a.code(v, Rounding::NearestEven)
                .filter(|&c| v.is_finite() && a.value(c) == v)
        };
        let (Some(min_c), Some(max_c)) = (in_type(range.min), in_type(range.max)) else {
            return Err(ChooseError::Range(range.min, range.max, source.name()));
        };
        if range.min > range.max {
            return Err(ChooseError::Range(range.min, range.max, source.name()));
        }
        let lo = t.min();
        let hi = t.max() - i128::from(opts.nan_sentinel);
        if hi < lo {
            return Err(ChooseError::NoFit(target.name()));
        }
        let max_finite = a.value(l.max_finite_bits());
        // Only the codes the source type can reach before the cast (`float16` ends at
        // 65504, short of `uint32`'s).
        let (lo_f, hi_f) = ((lo as f64).max(-max_finite), (hi as f64).min(max_finite));
        Ok(Fit {
            source,
            target,
            range,
            min_c,
            max_c,
            lo,
            hi,
            opts,
            max_finite,
            ideal: (hi_f - lo_f) / (range.max - range.min),
            mid: range.min / 2.0 + range.max / 2.0,
            center: lo_f / 2.0 + hi_f / 2.0,
            a,
            exact_budget: None,
        })
    }

    /// The range of one value: offset to code 0 (or the nearest code of the range), scale 1.
    fn single(&self) -> Result<ScaleOffsetChoice, ChooseError> {
        let no_fit = || ChooseError::NoFit(self.target.name());
        let one = self.a.code(1.0, Rounding::NearestEven).ok_or_else(no_fit)?;
        let c = 0i128.clamp(self.lo, self.hi) as f64;
        let o = self
            .a
            .code(self.range.min - c, Rounding::NearestEven)
            .ok_or_else(no_fit)?;
        self.choice(o, one, None).ok_or_else(no_fit)
    }

    /// The configuration at scale `s_val` (rounded towards zero into the source type),
    /// centred: `Fits` when both ends encode within the target's codes (and, given
    /// `bound`, when its guarantee meets it).
    fn at_scale(&self, s_val: f64, bound: Option<f64>) -> Step {
        let a = &self.a;
        let Some(s) = a.code(s_val.min(self.max_finite), Rounding::TowardsZero) else {
            return Step::Next;
        };
        if a.value(s) <= 0.0 {
            return Step::Stop;
        }
        // Centred in the target's codes (the largest scale), or on the code nearest 0
        // that holds the range's codes (a smaller one: `x - offset` then stays small, and
        // exact in more cases); never so far from the range that `x - offset` overflows.
        let center = if bound.is_some() {
            let half = (self.range.max - self.range.min) * a.value(s) / 2.0 + 1.0;
            0f64.max(self.lo as f64 + half).min(self.hi as f64 - half)
        } else {
            self.center
        };
        let o_val = (self.mid - center / a.value(s))
            .min(self.range.min + self.max_finite)
            .max(self.range.max - self.max_finite);
        let Some(o) = a.code(o_val, Rounding::NearestEven) else {
            return Step::Next;
        };
        let meets = |c: &ScaleOffsetChoice| bound.is_none_or(|b| c.max_abs_error <= b);
        if let Some(c) = self
            .snapped(o, s)
            .filter_map(|o| self.choice(o, s, bound))
            .find(|c| meets(c))
        {
            return Step::Fits(Box::new(c));
        }
        // A range holding 0 must decode it exactly: no unsnapped offset then.
        if self.range.min <= 0.0 && self.range.max >= 0.0 {
            return Step::Next;
        }
        match self.choice(o, s, bound) {
            Some(c) if meets(&c) => Step::Fits(Box::new(c)),
            _ => Step::Next,
        }
    }

    /// Whether the exact check may visit the codes `qa..=qb` (and, with a budget, takes
    /// them from it).
    fn may_check_exactly(&self, qa: i128, qb: i128) -> bool {
        if self.a.target.bits > EXACT_MAX_BITS {
            return false;
        }
        let Some(budget) = &self.exact_budget else {
            return true;
        };
        let n = u64::try_from(qb - qa + 1).unwrap_or(u64::MAX);
        match budget.get().checked_sub(n) {
            Some(left) => {
                budget.set(left);
                true
            }
            None => false,
        }
    }

    /// The offset moved (by at most half a code) onto the grid of `0`: `o = -(q0 / s)` in
    /// the source type's arithmetic for the integer `q0` nearest `-o * s`, so that decoding
    /// `q0` gives `q0 / s + o = 0` exactly and `0` (and `-0`) encodes to `q0`. Without it,
    /// the zeros of a field (dry cells) decode as tiny nonzero values and the fill value
    /// `0` does not survive the chain. The candidates are the nearest `q0` and a few
    /// neighbours, each kept only when the codec's own arithmetic confirms both.
    fn snapped(&self, o: u64, s: u64) -> impl Iterator<Item = u64> + '_ {
        let a = &self.a;
        let p = a.l.mantissa_bits as i32 + 1;
        let near = (-a.value(o) * a.value(s)).round();
        let zero = a.code(0.0, Rounding::NearestEven);
        // `(0 - o) * s` must be `q0` itself, not only round to it: the fill value `0` has
        // to survive `cast_value` exactly. A neighbour of the nearest `q0` often does when
        // the nearest does not.
        [0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0]
            .into_iter()
            .filter_map(move |d| {
                // In steps of the source type's spacing at `q0`: beyond `2^p` only some
                // integers are values of it.
                let q0 = near
                    + d * (near.abs().log2().floor() - f64::from(p - 1))
                        .exp2()
                        .max(1.0);
                if !q0.is_finite() {
                    return None;
                }
                let zero = zero?;
                let v = a.value(a.op(a.code(q0, Rounding::NearestEven)?, s, ArithOp::Div)?);
                let snapped = a.code(-v, Rounding::NearestEven)?;
                let t = a.op(a.op(zero, snapped, ArithOp::Sub)?, s, ArithOp::Mul)?;
                let q = a.encode(zero, snapped, s)?;
                (a.value(t) == q0 && a.decode(q, snapped, s)? == 0.0).then_some(snapped)
            })
    }

    /// The configuration `(o, s)` with its guarantee, when both ends encode within the
    /// target's codes and decode to finite values.
    ///
    /// With an exact-check budget and a bound asked for (`enough`), an a-priori bound that
    /// meets it is taken as it is: the exact check only refines what it rules out.
    fn choice(&self, o: u64, s: u64, enough: Option<f64>) -> Option<ScaleOffsetChoice> {
        let (a, range) = (&self.a, self.range);
        let (qa, qb) = (a.encode(self.min_c, o, s)?, a.encode(self.max_c, o, s)?);
        if qa < self.lo || qb > self.hi {
            return None;
        }
        // Decoding is monotone too: both ends decode to finite values, so every code does.
        let ya = a.decode(qa, o, s)?;
        a.decode(qb, o, s)?;
        let a_priori = || error_bound(a, range, a.value(o), a.value(s), qa, qb);
        let enough = match enough {
            Some(e) if self.exact_budget.is_some() => Some(a_priori()).filter(|&b| b <= e),
            _ => None,
        };
        let (bound, guarantee) = if self.min_c == self.max_c {
            ((ya - range.min).abs(), Guarantee::Exact)
        } else if let Some(b) = enough {
            (b, Guarantee::APriori)
        } else if self.may_check_exactly(qa, qb) {
            match exact_bound(a, self.min_c, self.max_c, o, s) {
                Some(b) => (b, Guarantee::Exact),
                None => (a_priori(), Guarantee::APriori),
            }
        } else {
            (a_priori(), Guarantee::APriori)
        };
        Some(ScaleOffsetChoice {
            source: self.source,
            target: self.target,
            offset: a.value(o),
            scale: a.value(s),
            codes: (qa, qb),
            max_abs_error: bound,
            nan_code: self.opts.nan_sentinel.then_some(a.target.max()),
            guarantee,
            offset_code: o,
            scale_code: s,
        })
    }
}

/// Targets of at most this many bits get the exact check ([`Guarantee::Exact`]).
const EXACT_MAX_BITS: u32 = 16;

/// The exact error bound of `(o, s)` over the source values from `min_c` to `max_c`: the
/// values that encode to one code form an interval (encoding is monotone), whose ends are
/// found from the midpoint between neighbouring decoded values by a few steps of one ulp
/// (or, if the codec surprises, by bisection); the largest distance of an interval's end
/// to its code's decoded value is the bound. `None` when the codec fails somewhere.
fn exact_bound(a: &Arith, min_c: u64, max_c: u64, o: u64, s: u64) -> Option<f64> {
    let l = &a.l;
    let (sign, mags) = (l.sign_bit(), l.magnitude_mask());
    let key = |c: u64| -> i64 {
        let m = (c & mags) as i64;
        if c & sign != 0 { -m } else { m }
    };
    let code = |k: i64| -> u64 {
        if k < 0 {
            sign | k.unsigned_abs()
        } else {
            k as u64
        }
    };
    let enc = |k: i64| a.encode(code(k), o, s);
    let (kmin, kmax) = (key(min_c), key(max_c));
    let q_max = enc(kmax)?;
    // The largest key in `[from, kmax]` that encodes to at most `q` (`enc(from) <= q`).
    let last_of = |q: i128, from: i64, guess: i64| -> Option<i64> {
        const STEPS: u32 = 8;
        let mut k = guess.clamp(from, kmax);
        if enc(k)? <= q {
            for _ in 0..STEPS {
                if k == kmax || enc(k + 1)? > q {
                    return Some(k);
                }
                k += 1;
            }
            bisect(k, kmax + 1, |k| Some(enc(k)? <= q))
        } else {
            for _ in 0..STEPS {
                k -= 1;
                if enc(k)? <= q {
                    return Some(k);
                }
            }
            bisect(from, k, |k| Some(enc(k)? <= q))
        }
    };
    let (mut from, mut q) = (kmin, enc(kmin)?);
    let mut worst = 0.0f64;
    loop {
        let y = a.decode(q, o, s)?;
        let to = if q >= q_max {
            kmax
        } else {
            let next = a.decode(q + 1, o, s)?;
            let guess = a
                .code(y / 2.0 + next / 2.0, Rounding::NearestEven)
                .map_or(from, key);
            last_of(q, from, guess)?
        };
        let (xl, xh) = (a.value(code(from)), a.value(code(to)));
        worst = worst.max((y - xl).abs()).max((xh - y).abs());
        if to >= kmax {
            break;
        }
        from = to + 1;
        q = enc(from)?;
    }
    // One f64 ulp up: the differences above are rounded to nearest.
    Some(if worst > 0.0 {
        f64::from_bits(worst.to_bits() + 1)
    } else {
        0.0
    })
}

/// The largest `k` in `[lo, hi)` with `ok(k)`, given `ok(lo)` and that `ok` is true then
/// false along the keys.
fn bisect(mut lo: i64, mut hi: i64, ok: impl Fn(i64) -> Option<bool>) -> Option<i64> {
    // In `i128`: the keys of `f64` span nearly all of `i64`.
    while i128::from(hi) - i128::from(lo) > 1 {
        let mid = ((i128::from(lo) + i128::from(hi)) / 2) as i64;
        if ok(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// The a-priori bound of the module docs, computed in `f64` and widened by a relative
/// 2^-40 to cover that computation's own rounding.
fn error_bound(a: &Arith, range: FiniteRange, o: f64, s: f64, qa: i128, qb: i128) -> f64 {
    let l = &a.l;
    let p = l.mantissa_bits as i32 + 1;
    let u = (-(p as f64)).exp2();
    let eta = f64::from(l.min_normal_exponent() - p).exp2();
    let big_a = (range.min - o).abs().max((range.max - o).abs());
    let d = big_a * (1.0 + u) + eta;
    let q = (qa.unsigned_abs().max(qb.unsigned_abs())) as f64;
    let qf = q * (1.0 + u);
    let e4 = if q > f64::from(p).exp2() { u * q } else { 0.0 };
    let bound = 0.5 / s
        + (u * big_a + eta)
        + (u * d * s + eta + e4) / s
        + (u * qf / s + eta)
        + (u * (o.abs() + qf / s * (1.0 + u) + eta) + eta);
    bound * (1.0 + (-40f64).exp2())
}

/// The configuration of [`best_scale_offset`] if its guaranteed error is at most
/// `max_abs_error`.
///
/// ```
/// use zquant::choose::{FiniteRange, FitOptions, fit_scale_offset};
/// use zquant::DTypeId;
/// let range = FiniteRange { min: -40.0, max: 50.0 };
/// let c = fit_scale_offset(DTypeId::Float64, DTypeId::Int16, range, 0.01, FitOptions::default())?;
/// assert!(c.max_abs_error <= 0.01);
/// // 90 over 65536 codes cannot give 1e-4:
/// let e = fit_scale_offset(DTypeId::Float64, DTypeId::Int16, range, 1e-4, FitOptions::default());
/// assert!(e.unwrap_err().to_string().contains("int16"));
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
///
/// # Errors
/// Those of [`best_scale_offset`], and [`ChooseError::BoundNotMet`] (with the best bound the
/// target allows) when the target's codes are too few for `max_abs_error`.
pub fn fit_scale_offset(
    source: DTypeId,
    target: DTypeId,
    range: FiniteRange,
    max_abs_error: f64,
    opts: FitOptions,
) -> Result<ScaleOffsetChoice, ChooseError> {
    if !(max_abs_error > 0.0 && max_abs_error.is_finite()) {
        return Err(ChooseError::Bound(max_abs_error));
    }
    let best = best_scale_offset(source, target, range, opts)?;
    if best.max_abs_error > max_abs_error {
        return Err(ChooseError::BoundNotMet {
            requested: max_abs_error,
            best: best.max_abs_error,
            target: target.name(),
            min: range.min,
            max: range.max,
        });
    }
    if opts.scale == ScaleChoice::Largest || best.codes.0 == best.codes.1 {
        return Ok(best);
    }
    // The smallest scale: cells of width `1 / s` err by `1 / (2s)` and a little rounding,
    // so start at `1 / (2 · bound)` and grow until the guarantee holds (at worst, back to
    // the largest scale).
    let fit = Fit::new(source, target, range, opts)?;
    let start = 0.5 / max_abs_error;
    let factors = (0..=24)
        .map(|k| 1.0 + (-(52 - 2 * k) as f64).exp2())
        .chain((1..=40).map(|k| 1.0 + f64::from(k) / 20.0));
    for f in factors {
        let s = start * f;
        if s >= best.scale {
            break;
        }
        if let Step::Fits(c) = fit.at_scale(s, Some(max_abs_error)) {
            return Ok(*c);
        }
    }
    Ok(best)
}

/// The smallest-scale fit whose codes lie in `0..=hi` of an unsigned integer `target`
/// (`hi` at most the target's largest code; the codes above `hi` stay free for a
/// `scalar_map`), with its guarantee at most `max_abs_error`: the planner's integer
/// candidate, which picks the code width itself. The offset is snapped onto the grid of 0
/// as every fit's is. `Err` with the best bound of these codes when none meets it.
///
/// The exact check visits at most `exact_codes` codes in all (the caller sizes it by the
/// data, so that the planner's cost follows the data and not the number of codes the bound
/// implies); beyond it the a-priori bound decides, which costs a few operations a try and
/// is at most a few source ulps of the range looser.
pub(crate) fn fit_in_codes(
    source: DTypeId,
    target: DTypeId,
    range: FiniteRange,
    max_abs_error: f64,
    hi: i128,
    exact_codes: u64,
) -> Result<ScaleOffsetChoice, ChooseError> {
    if !(max_abs_error > 0.0 && max_abs_error.is_finite()) {
        return Err(ChooseError::Bound(max_abs_error));
    }
    let mut fit = Fit::new(source, target, range, FitOptions::default())?;
    fit.exact_budget = Some(std::cell::Cell::new(exact_codes));
    fit.lo = 0;
    fit.hi = hi.min(fit.hi);
    if fit.min_c == fit.max_c {
        return fit.single();
    }
    let lo_f = 0.0f64;
    let hi_f = (fit.hi as f64).min(fit.max_finite);
    let ideal = (hi_f - lo_f) / (range.max - range.min);
    let start = 0.5 / max_abs_error;
    if start <= ideal {
        // From the bound's own scale up: one cell of width `1 / s` errs by `1 / (2s)` and
        // a little rounding, so the first few tries above `start` meet it.
        let factors: Vec<f64> = (0..=24)
            .map(|k| 1.0 + (-(52 - 2 * k) as f64).exp2())
            .chain((1..=60).map(|k| 1.0 + f64::from(k) / 64.0))
            .take_while(|f| start * f <= ideal)
            .collect();
        // First by the a-priori bound alone (a few operations a try), then the exact
        // check, within its budget, bisects the smaller scales the a-priori bound ruled
        // out: the coarsest step whose every code meets the bound.
        let budget = fit.exact_budget.replace(std::cell::Cell::new(0));
        let mut found = None;
        for (i, f) in factors.iter().enumerate() {
            if let Step::Fits(c) = fit.at_scale(start * f, Some(max_abs_error)) {
                found = Some((i, c));
                break;
            }
        }
        fit.exact_budget = budget;
        if let Some((i_ap, c)) = found {
            // `factors[i_ap]` fits; those below `lo` are known not to.
            let (mut lo, mut hi, mut best) = (0, i_ap, c);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match fit.at_scale(start * factors[mid], Some(max_abs_error)) {
                    Step::Fits(c) => {
                        hi = mid;
                        best = c;
                    }
                    _ => lo = mid + 1,
                }
                if fit.exact_budget.as_ref().is_some_and(|b| b.get() == 0) {
                    break;
                }
            }
            return Ok(*best);
        }
    }
    // The best these codes give, for the error.
    let factors = std::iter::once(1.0)
        .chain((1..=52).rev().map(|k| 1.0 - (-(k as f64)).exp2()))
        .chain((2..=64).map(|k| (-(k as f64)).exp2()));
    let mut best = f64::INFINITY;
    for f in factors {
        match fit.at_scale(ideal * f, Some(f64::INFINITY)) {
            Step::Fits(c) => {
                best = c.max_abs_error;
                if c.max_abs_error <= max_abs_error {
                    return Ok(*c);
                }
                break;
            }
            Step::Next => {}
            Step::Stop => break,
        }
    }
    Err(ChooseError::BoundNotMet {
        requested: max_abs_error,
        best,
        target: target.name(),
        min: range.min,
        max: range.max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hardware arithmetic gives what the generic path gives, on values spread over
    /// every binade, both signs, the target's range edges and beyond.
    #[test]
    fn native_arithmetic_is_the_generic_arithmetic() {
        for (source, target) in [
            (DTypeId::Float32, DTypeId::UInt16),
            (DTypeId::Float32, DTypeId::Int8),
            (DTypeId::Float64, DTypeId::UInt32),
        ] {
            let (l, t) = layouts(source, target).unwrap();
            let arith = |native| Arith {
                f: Format::Float(l),
                l,
                target: t,
                native,
            };
            let (fast, slow) = (arith(Native::of(source)), arith(Native::No));
            let mut z = 0x9e37_79b9_7f4a_7c15u64;
            let mut next = || {
                z = z
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (z >> 11) as f64 / (1u64 << 53) as f64;
                let e = ((z >> 3) % 90) as i32 - 45;
                let v = (u - 0.5) * f64::from(e).exp2();
                if z & 7 == 0 { v.round() } else { v }
            };
            for _ in 0..20_000 {
                let (x, o, s) = (next(), next(), next().abs() + 1e-3);
                let c = |a: &Arith, v| a.code(v, Rounding::NearestEven);
                assert_eq!(c(&fast, x), c(&slow, x), "{source} code {x}");
                let (Some(xc), Some(oc), Some(sc)) = (c(&slow, x), c(&slow, o), c(&slow, s)) else {
                    continue;
                };
                for op in [ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div] {
                    assert_eq!(fast.op(xc, oc, op), slow.op(xc, oc, op), "{source} {x} {o}");
                }
                assert_eq!(
                    fast.encode(xc, oc, sc),
                    slow.encode(xc, oc, sc),
                    "{source} {x} {o} {s}"
                );
                let q = x.round().clamp(-1e30, 1e30) as i128;
                assert_eq!(
                    fast.decode(q, oc, sc),
                    slow.decode(q, oc, sc),
                    "{source} {q} {o} {s}"
                );
                assert_eq!(fast.value(xc), slow.value(xc));
            }
        }
    }
}
