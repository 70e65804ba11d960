//! The candidates' parameters and guarantees, from the statistics alone: `bitround`'s
//! keepbits, the integer codes' width, step and offset, the narrower floats, the offset
//! then `bitround`. Nothing here reads the data; `candidate` runs what this proposes.

use serde_json::{Value, json};

use super::{PlanStats, reader};
use crate::choose::{ChooseError, FiniteRange, binade, fit_in_codes, keepbits_for_absolute_error};
use crate::codec::{bitround, cast_value, scale_offset};
use crate::convert::{exact_of, round_into};
use crate::dtype::DTypeId;
use crate::dtype::arith::f64_to_exact;
use crate::number::layout::{FloatLayout, Format};
use crate::number::{CastOptions, Rounding};
use crate::zarr::PackBits;

/// `numcodecs.bitround`: the name plain zarr-python reads (through numcodecs), where the
/// v3 name `bitround` is not.
pub(super) const NUMCODECS_BITROUND: &str = bitround::ALIAS;

/// The narrower float types `cast_value` may store, widest first.
pub(super) const SMALL_FLOATS: [&str; 8] = [
    "float16",
    "bfloat16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
];

/// A candidate before it runs.
pub(super) struct Spec {
    pub(super) name: String,
    pub(super) filters: Vec<Value>,
    pub(super) packbits: Option<PackBits>,
    /// The guarantee, in the target's unit.
    pub(super) bound: Option<f64>,
    /// The smallest bound this family gives, for [`ChooseError::Unreachable`].
    pub(super) best: Option<f64>,
    pub(super) readers: Vec<&'static str>,
    pub(super) ruled_out: Option<String>,
    pub(super) lossy: bool,
}

impl Spec {
    pub(super) fn new(
        name: String,
        filters: Vec<Value>,
        bound: f64,
        readers: Vec<&'static str>,
    ) -> Spec {
        Spec {
            name,
            filters,
            packbits: None,
            bound: Some(bound),
            best: Some(bound),
            readers,
            ruled_out: None,
            lossy: true,
        }
    }

    pub(super) fn out(name: String, best: Option<f64>, why: String) -> Spec {
        Spec {
            name,
            filters: Vec::new(),
            packbits: None,
            bound: None,
            best,
            readers: Vec::new(),
            ruled_out: Some(why),
            lossy: true,
        }
    }
}

/// What every candidate reads: the source layout, the bound, the statistics.
pub(super) struct Ctx<'a> {
    pub(super) id: DTypeId,
    pub(super) l: FloatLayout,
    pub(super) stats: &'a PlanStats,
    /// The bound: absolute, or relative when `rel`.
    pub(super) bound: f64,
    pub(super) rel: bool,
    /// The fill value, as a value.
    pub(super) fill: f64,
    pub(super) headroom: f64,
}

impl Ctx<'_> {
    pub(super) fn nan(&self) -> bool {
        self.stats.nan > 0 || self.fill.is_nan()
    }
    pub(super) fn pos_inf(&self) -> bool {
        self.stats.pos_inf > 0 || self.fill == f64::INFINITY
    }
    pub(super) fn neg_inf(&self) -> bool {
        self.stats.neg_inf > 0 || self.fill == f64::NEG_INFINITY
    }
    /// The finite range with the fill value.
    pub(super) fn range(&self) -> Option<FiniteRange> {
        let fill = self.fill.is_finite().then_some(FiniteRange {
            min: self.fill,
            max: self.fill,
        });
        match (self.stats.range, fill) {
            (Some(a), Some(b)) => Some(a.merge(b)),
            (a, b) => a.or(b),
        }
    }
    pub(super) fn max_abs(&self) -> f64 {
        self.range().map_or(0.0, |r| r.min.abs().max(r.max.abs()))
    }
    /// `v` rounded into the source type by `rounding`, as an `f64`.
    pub(super) fn value_of(&self, v: f64, rounding: Rounding) -> f64 {
        let f = Format::Float(self.l);
        let (c, _) = round_into(
            f,
            f64_to_exact(v),
            CastOptions {
                rounding,
                ..Default::default()
            },
        );
        exact_of(f, c).to_f64()
    }
    pub(super) fn bits_of(&self, v: f64) -> u64 {
        round_into(
            Format::Float(self.l),
            f64_to_exact(v),
            CastOptions::default(),
        )
        .0
    }
    /// A bound in the target's unit from an absolute one (relative: over the smallest
    /// nonzero magnitude, one `f64` ulp up for the division's rounding).
    pub(super) fn in_unit(&self, abs: f64) -> f64 {
        if !self.rel {
            return abs;
        }
        match self.stats.min_nonzero_abs {
            Some(m) if abs > 0.0 => next_up(abs / m),
            _ => 0.0,
        }
    }
    /// Whether zarr-python has the source type (else the reader preference is moot).
    pub(super) fn zarr_python_type(&self) -> bool {
        matches!(
            self.id,
            DTypeId::Float16 | DTypeId::Float32 | DTypeId::Float64
        )
    }
    pub(super) fn readers(&self, zarr_python: bool, numcodecs: bool) -> Vec<&'static str> {
        let mut v = Vec::new();
        if zarr_python && self.zarr_python_type() {
            v.push(reader::ZARR_PYTHON);
        }
        if numcodecs && self.zarr_python_type() {
            v.push(reader::NUMCODECS);
        }
        v.extend([reader::ZARRS, reader::ZQUANT]);
        v
    }
}

pub(super) fn next_up(x: f64) -> f64 {
    if x.is_finite() && x >= 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        x
    }
}

pub(super) fn pow2(e: i32) -> f64 {
    f64::from(e).exp2()
}

pub(super) fn bitround_filter(k: u32) -> Value {
    json!({"name": NUMCODECS_BITROUND, "configuration": {"keepbits": k}})
}

/// `numcodecs.bitround` with the fewest keepbits that meet the bound.
pub(super) fn bitround_spec(c: &Ctx) -> Spec {
    let m = c.l.mantissa_bits;
    let emin = c.l.min_normal_exponent();
    let bound_at = |k: u32| -> f64 {
        if c.rel {
            match c.stats.min_nonzero_abs {
                Some(nz) if nz < pow2(emin) => {
                    pow2(-(k as i32) - 1).max(next_up(pow2(emin - k as i32 - 1) / nz))
                }
                Some(_) => pow2(-(k as i32) - 1),
                None => 0.0,
            }
        } else {
            pow2(binade(&c.l, c.max_abs()) - k as i32 - 1)
        }
    };
    let name = |k: u32| format!("{NUMCODECS_BITROUND} k={k}");
    // The largest magnitude must not round up past the largest finite value (to
    // infinity): more bits then.
    let max_finite = exact_of(Format::Float(c.l), c.l.max_finite_bits()).to_f64();
    let overflows = |k: u32| {
        let q = pow2(binade(&c.l, c.max_abs()) - k as i32);
        (c.max_abs() / q).round_ties_even() * q > max_finite
    };
    let k = if c.rel {
        (1..m).find(|&k| bound_at(k) <= c.bound)
    } else {
        keepbits_for_absolute_error(c.id.kind(), c.max_abs(), c.bound).ok()
    };
    let k = k.and_then(|k| (k..m).find(|&k| !overflows(k)));
    match k {
        Some(k) => Spec::new(
            name(k),
            vec![bitround_filter(k)],
            bound_at(k),
            c.readers(true, true),
        ),
        None => Spec::out(
            NUMCODECS_BITROUND.into(),
            Some(bound_at(m - 1)),
            format!(
                "keeps every mantissa bit for this bound (keepbits {} gives {:.3e})",
                m - 1,
                bound_at(m - 1)
            ),
        ),
    }
}

/// The unsigned type holding `w`-bit codes.
pub(super) fn code_type(w: u32) -> DTypeId {
    match w {
        0..=8 => DTypeId::UInt8,
        9..=16 => DTypeId::UInt16,
        _ => DTypeId::UInt32,
    }
}

/// `scale_offset` + `cast_value` to `w`-bit codes; `packed`: the codes packed to `w` bits.
pub(super) fn int_specs(c: &Ctx) -> Vec<Spec> {
    let name = |w: u32, packed: bool| {
        format!(
            "{}+{} uint{w}{}",
            scale_offset::NAME,
            cast_value::NAME,
            if packed { "+packbits" } else { "" }
        )
    };
    let reserved: Vec<(&str, bool)> = vec![
        ("NaN", c.nan()),
        ("Infinity", c.pos_inf()),
        ("-Infinity", c.neg_inf()),
    ];
    let reserved: Vec<&str> = reserved.into_iter().filter(|r| r.1).map(|r| r.0).collect();
    let n_res = reserved.len() as i128;
    let range = c.range().unwrap_or(FiniteRange { min: 0.0, max: 0.0 });
    let span = range.max - range.min;
    let range = if c.headroom > 0.0 && span > 0.0 {
        let max_finite = exact_of(Format::Float(c.l), c.l.max_finite_bits()).to_f64();
        // Clamped before rounding: a value beyond the type's range does not round to one.
        FiniteRange {
            min: c.value_of(
                (range.min - c.headroom * span).max(-max_finite),
                Rounding::TowardsNegative,
            ),
            max: c.value_of(
                (range.max + c.headroom * span).min(max_finite),
                Rounding::TowardsPositive,
            ),
        }
    } else {
        range
    };
    let abs = if c.rel {
        match c.stats.min_nonzero_abs {
            Some(nz) => c.bound * nz,
            None => 1.0,
        }
    } else {
        c.bound
    };
    // The code count the bound needs, about `span / (2 bound)`: the first width to try.
    let est = ((range.max - range.min) / (2.0 * abs)).ceil() + 1.0 + n_res as f64;
    let w0 = if est.is_finite() && est >= 1.0 {
        (est.log2().ceil() as u32).clamp(1, 32)
    } else {
        32
    };
    // The exact check costs some tens of nanoseconds a code (float32/float64 in hardware
    // arithmetic), a plain read a few nanoseconds an element: a code for every 16 elements
    // keeps it to a fraction of a read of the data.
    let exact_codes = c.stats.elements / 16;
    let mut last_err = None;
    for w in w0.saturating_sub(1).max(1)..=32 {
        let hi = (1i128 << w) - 1 - n_res;
        if hi < 0 {
            continue;
        }
        let target = code_type(w);
        let fit = match fit_in_codes(c.id, target, range, abs, hi, exact_codes) {
            Ok(fit) => fit,
            Err(e) => {
                last_err = Some(e);
                continue;
            }
        };
        let mut cast = json!({"data_type": target.name(), "rounding": "nearest-even"});
        if n_res > 0 {
            let codes: Vec<(Value, i128)> = reserved
                .iter()
                .enumerate()
                .map(|(i, r)| (Value::from(*r), (1i128 << w) - 1 - i as i128))
                .collect();
            cast["scalar_map"] = json!({
                "encode": codes.iter().map(|(k, q)| json!([k, *q as i64])).collect::<Vec<_>>(),
                "decode": codes.iter().map(|(k, q)| json!([*q as i64, k])).collect::<Vec<_>>(),
            });
        }
        let filters = vec![
            json!({"name": scale_offset::NAME, "configuration": {
                "offset": fit.offset_json(), "scale": fit.scale_json()}}),
            json!({"name": cast_value::NAME, "configuration": cast}),
        ];
        let bound = c.in_unit(fit.max_abs_error);
        let mut out = vec![Spec::new(
            name(target.word_bits().max(8), false),
            filters.clone(),
            bound,
            c.readers(true, false),
        )];
        if !matches!(w, 8 | 16 | 32) {
            let cfg = json!({"padding_encoding": "first_byte", "first_bit": 0, "last_bit": w - 1});
            match PackBits::new(target, Some(&cfg)) {
                Ok(pb) => {
                    let mut s = Spec::new(name(w, true), filters, bound, c.readers(false, false));
                    s.packbits = Some(pb);
                    out.push(s);
                }
                Err(e) => out.push(Spec::out(name(w, true), None, e.to_string())),
            }
        }
        return out;
    }
    let best = match &last_err {
        Some(ChooseError::BoundNotMet { best, .. }) => Some(c.in_unit(*best)),
        _ => None,
    };
    vec![Spec::out(
        format!("{}+{}", scale_offset::NAME, cast_value::NAME),
        best,
        match last_err {
            Some(e) => format!("no code width up to 32 bits: {e}"),
            None => "no code width up to 32 bits".into(),
        },
    )]
}

/// `cast_value` to each narrower float type.
pub(super) fn small_float_specs(c: &Ctx) -> Vec<Spec> {
    let mut out = Vec::new();
    for name in SMALL_FLOATS {
        let Ok(t) = name.parse::<DTypeId>() else {
            continue;
        };
        let Some(Format::Float(lt)) = t.format() else {
            continue;
        };
        if lt.bits() >= c.l.bits() || !lt.signed || !lt.subnormals {
            continue;
        }
        let label = format!("{} {name}", cast_value::NAME);
        if c.nan() && !lt.has_nan() {
            out.push(Spec::out(label, None, format!("{name} has no NaN")));
            continue;
        }
        if (c.pos_inf() || c.neg_inf()) && !lt.inf {
            out.push(Spec::out(label, None, format!("{name} has no infinity")));
            continue;
        }
        let max_finite = exact_of(Format::Float(lt), lt.max_finite_bits()).to_f64();
        let mt = lt.mantissa_bits as i32;
        let emin = lt.min_normal_exponent();
        if c.max_abs() > max_finite {
            out.push(Spec::out(
                label,
                None,
                format!(
                    "|x| up to {} exceeds {name}'s largest {max_finite}",
                    c.max_abs()
                ),
            ));
            continue;
        }
        let bound = if c.rel {
            match c.stats.min_nonzero_abs {
                Some(nz) if nz < pow2(emin) => pow2(-mt - 1)
                    .max(next_up(pow2(emin - mt - 1) / nz))
                    .min(1.0),
                Some(_) => pow2(-mt - 1),
                None => 0.0,
            }
        } else {
            pow2(binade(&lt, c.max_abs()) - mt - 1)
        };
        let readers = c.readers(t == DTypeId::Float16, false);
        out.push(Spec::new(
            label,
            vec![json!({"name": cast_value::NAME, "configuration": {
                "data_type": name, "rounding": "nearest-even"}})],
            bound,
            readers,
        ));
    }
    out
}

/// A float `scale_offset` (scale 1, the offset near the middle of the range with at most
/// `k` significant bits, so that `0 - offset` survives `bitround` and 0 decodes exactly)
/// then `numcodecs.bitround`: the residuals' binade, not the values', sets the error.
pub(super) fn offset_bitround_spec(c: &Ctx) -> Spec {
    let label = format!("{}+{NUMCODECS_BITROUND}", scale_offset::NAME);
    if c.rel {
        return Spec::out(
            label,
            None,
            "an offset turns relative precision into absolute: not for a relative bound".into(),
        );
    }
    let Some(range) = c.range() else {
        return Spec::out(label, None, "no finite values".into());
    };
    let m = c.l.mantissa_bits;
    let at = |k: u32| -> (f64, f64) {
        let mid = range.min / 2.0 + range.max / 2.0;
        let o = if mid == 0.0 {
            0.0
        } else {
            let g = pow2(binade(&c.l, mid) - k as i32 + 1);
            c.value_of((mid / g).round() * g, Rounding::NearestEven)
        };
        let a = (range.max - o).abs().max((range.min - o).abs());
        let ea = binade(&c.l, a);
        let (e1, e2) = (pow2(ea - m as i32 - 1), pow2(ea - k as i32 - 1));
        let y = c.max_abs() + pow2(ea - k as i32) + pow2(ea - m as i32);
        let e3 = pow2(binade(&c.l, y) - m as i32 - 1);
        (o, next_up(e1 + e2 + e3))
    };
    let Some(k) = (1..m).find(|&k| at(k).1 <= c.bound) else {
        return Spec::out(
            label,
            Some(at(m - 1).1),
            format!(
                "keeps every mantissa bit for this bound (gives {:.3e} at best)",
                at(m - 1).1
            ),
        );
    };
    let (o, bound) = at(k);
    let o_json = c.id.value_to_json([c.bits_of(o), 0]);
    Spec::new(
        format!("{label} k={k}"),
        vec![
            json!({"name": scale_offset::NAME, "configuration": {"offset": o_json, "scale": 1}}),
            bitround_filter(k),
        ],
        bound,
        c.readers(true, false),
    )
}
