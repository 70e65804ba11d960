//! The planner: the chain that stores a float array smallest while every element stays
//! within a stated error.
//!
//! One read of the data gives its [`PlanStats`] (mergeable, so chunk by chunk). From them
//! each candidate chain gets its parameters and a guarantee derived from the statistics
//! and the codecs' own arithmetic:
//!
//! - `numcodecs.bitround` with the fewest `keepbits` that meet the bound;
//! - `scale_offset` + `cast_value` into the narrowest unsigned code width (1 to 32 bits)
//!   that holds the codes, then `packbits` when the width is not 8, 16 or 32; the coarsest
//!   step that meets the bound (checked over every code for widths up to 16 bits), the
//!   offset snapped so that 0 decodes exactly; NaN and infinities (and a fill value that
//!   is one) kept through `scalar_map` codes above the data's;
//! - `cast_value` to a narrower float type (`bfloat16`, `float16`, the `float8` types);
//! - a float `scale_offset` (offset near the middle of the range, scale 1) then
//!   `numcodecs.bitround`;
//! - the lossless baseline.
//!
//! Each chain is weighed as it is and with the lossless rearrangements zarr-python has
//! built in, before the caller's compressor: `numcodecs.shuffle` (bytes grouped by
//! significance; for elements wider than a byte) and, on integer codes, `numcodecs.delta`
//! (differences of neighbours). zarrs has shuffle but not delta, so [`Readers`] can ask for
//! chains zarrs reads too.
//!
//! Finding the coarsest step costs a few operations a try. The exact check of every code
//! (which gains a few source ulps of the range over the a-priori bound) visits at most a
//! code for every 4096 elements of the data, so that planning costs about one read of the
//! data (the statistics) plus the sample's encoding and compression, whatever the number
//! of codes the bound implies.
//!
//! Each candidate is then run for real (the run-time chain, and `packbits`) on a bounded
//! sample of chunks the caller spreads over the array, first on the statistics' extreme
//! values: its sample bytes, measured by the caller's `size` (the compressor), rank it, and
//! the decoded sample is checked against the guarantee (a failure rules the candidate out;
//! none is expected). The result is a [`Plan`]: the winner's codecs as Zarr JSON and a
//! table of every candidate, with its readers.
//!
//! ```
//! use zquant::DTypeId;
//! use zquant::dtype::Words;
//! use zquant::plan::{PlanOptions, PlanStats, Target, plan};
//!
//! // Temperature-like data, float32.
//! let x: Vec<u32> = (0..4096)
//!     .map(|i| (280.0 + 20.0 * (i as f32 / 300.0).sin()).to_bits())
//!     .collect();
//! let stats = PlanStats::of_words(DTypeId::Float32, Words::U32(&x), &[64, 64], None)?;
//! let samples = [(Words::U32(&x), &[64usize, 64][..])];
//! // A stand-in compressor: the serialized length (a real caller compresses with zstd).
//! let mut size = |bytes: &[u8]| bytes.len();
//! let p = plan(
//!     DTypeId::Float32,
//!     &serde_json::json!("NaN"),
//!     &stats,
//!     &samples,
//!     Target::MaxAbsError(0.05),
//!     &PlanOptions::default(),
//!     &mut size,
//! )?;
//! assert!(p.bound() <= 0.05);
//! println!("{}", p.to_json());
//! # Ok::<(), zquant::choose::ChooseError>(())
//! ```

mod candidate;
mod rearrange;
mod specs;
mod stats;

use serde_json::{Value, json};

pub use stats::PlanStats;

use crate::choose::ChooseError;
use crate::dtype::DTypeId;
use crate::number::storage::Words;

/// What the stored values must keep.
///
/// ```
/// use zquant::plan::Target;
/// let t = Target::from_json(&serde_json::json!({"max_abs_error": 0.05}))?;
/// assert_eq!(t, Target::MaxAbsError(0.05));
/// assert_eq!(t.to_json(), serde_json::json!({"max_abs_error": 0.05}));
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// `|x' - x| <= e` for every finite element.
    MaxAbsError(f64),
    /// `|x' - x| <= r |x|` for every finite element (so zeros stay exactly zero).
    MaxRelError(f64),
    /// Keep this share of the real information (xbitinfo's `keepbits` rule, e.g. 0.99);
    /// planned as the absolute bound that `bitround` at those keepbits guarantees, so the
    /// other candidates compete at the same error.
    Information(f64),
}

impl Target {
    /// From `{"max_abs_error": e}`, `{"max_rel_error": r}` or `{"inflevel": l}`.
    ///
    /// # Errors
    /// [`ChooseError::Plan`] for another shape; [`ChooseError::Bound`] for a bound that is
    /// not positive and finite; [`ChooseError::Level`] for a level outside `[0, 1]`.
    pub fn from_json(v: &Value) -> Result<Target, ChooseError> {
        let obj = v.as_object().filter(|m| m.len() == 1).ok_or_else(|| {
            ChooseError::Plan(format!(
                "a target is one of {{\"max_abs_error\": e}}, {{\"max_rel_error\": r}}, \
                 {{\"inflevel\": l}}; got {v}"
            ))
        })?;
        let (k, x) = obj.iter().next().expect("one entry");
        let x = x
            .as_f64()
            .ok_or_else(|| ChooseError::Plan(format!("target {k}: a number, got {x}")))?;
        let t = match k.as_str() {
            "max_abs_error" => Target::MaxAbsError(x),
            "max_rel_error" => Target::MaxRelError(x),
            "inflevel" => Target::Information(x),
            other => {
                return Err(ChooseError::Plan(format!(
                    "unknown target {other:?}: max_abs_error, max_rel_error or inflevel"
                )));
            }
        };
        t.check()?;
        Ok(t)
    }

    /// The JSON form [`Target::from_json`] reads.
    pub fn to_json(&self) -> Value {
        match *self {
            Target::MaxAbsError(e) => json!({"max_abs_error": e}),
            Target::MaxRelError(r) => json!({"max_rel_error": r}),
            Target::Information(l) => json!({"inflevel": l}),
        }
    }

    /// A bound that is positive and finite, a level in `[0, 1]`.
    fn check(&self) -> Result<(), ChooseError> {
        match *self {
            Target::MaxAbsError(b) | Target::MaxRelError(b) if !(b > 0.0 && b.is_finite()) => {
                Err(ChooseError::Bound(b))
            }
            Target::Information(l) if !(0.0..=1.0).contains(&l) => Err(ChooseError::Level(l)),
            _ => Ok(()),
        }
    }

    fn describe(&self) -> String {
        match *self {
            Target::MaxAbsError(e) => format!("max_abs_error {e}"),
            Target::MaxRelError(r) => format!("max_rel_error {r}"),
            Target::Information(l) => format!("inflevel {l}"),
        }
    }
}

/// Which readers must open the winning chain.
///
/// ```
/// use zquant::plan::Readers;
/// // Rust's default: chains both zarr-python and zarrs (so zquant itself) open.
/// assert_eq!(Readers::default(), Readers::ZarrPythonAndZarrs);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Readers {
    /// Plain zarr-python (3.4) with its built-in codecs: `scale_offset`, `cast_value` to
    /// the types zarr-python has (not `bfloat16` or the `float8` types),
    /// `numcodecs.bitround`, `numcodecs.delta` and `numcodecs.shuffle`; not `packbits`, not
    /// `bitround` by its v3 name. Python's `zquant.choose.plan` asks for this by default,
    /// as zarr-python writes its stores.
    ZarrPython,
    /// zarrs, with `zquant::zarrs::register()`: every chain but those with
    /// `numcodecs.delta`, which zarrs does not have.
    Zarrs,
    /// Both plain zarr-python and zarrs (the default in Rust, and what
    /// `zquant::zarrs::quantize` always asks, as zarrs writes the store): every chain
    /// zquant's run-time chains can run too.
    #[default]
    ZarrPythonAndZarrs,
    /// Any chain zquant writes (zarrs with `zquant::zarrs::register()` reads all but
    /// `numcodecs.delta`, which zarr-python reads).
    Any,
}

/// The reader names of [`Candidate::readers`].
pub mod reader {
    /// zarr-python 3.4 with its built-in codecs.
    pub const ZARR_PYTHON: &str = "zarr-python";
    /// numcodecs' Zarr v3 codec wrappers (`numcodecs.zarr3`).
    pub const NUMCODECS: &str = "numcodecs";
    /// zarrs, with zquant's codecs registered (`zquant::zarrs::register()`).
    pub const ZARRS: &str = "zarrs";
    /// zquant itself (Rust and Python).
    pub const ZQUANT: &str = "zquant";
}

/// The planner's options.
///
/// ```
/// use zquant::plan::{PlanOptions, Readers};
/// let o = PlanOptions::from_json(&serde_json::json!({"headroom": 0.1, "readers": "any"}))?;
/// assert_eq!((o.headroom, o.readers), (0.1, Readers::Any));
/// # Ok::<(), zquant::choose::ChooseError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PlanOptions {
    /// The share of the finite range kept free below and above it (e.g. 0.1), for data
    /// still to come; integer codes are fitted over the widened range.
    pub headroom: f64,
    /// Which readers the winner must suit.
    pub readers: Readers,
    /// At most this many sample elements are encoded per candidate (whole samples, in
    /// the order given; at least one).
    pub sample_elements: usize,
    /// When no lossy chain meets the target, plan the lossless baseline instead of
    /// returning [`ChooseError::Unreachable`].
    pub lossless_fallback: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            headroom: 0.0,
            readers: Readers::ZarrPythonAndZarrs,
            sample_elements: 1 << 22,
            lossless_fallback: false,
        }
    }
}

impl Readers {
    /// Whether a chain that `readers` (names in [`reader`]) open suits this requirement,
    /// for an array of a type zarr-python has (`zarr_python_type`; else its preference is
    /// moot).
    ///
    /// ```
    /// use zquant::plan::{Readers, reader};
    /// assert!(Readers::ZarrPython.admits(&[reader::ZARR_PYTHON], true));
    /// assert!(!Readers::ZarrPythonAndZarrs.admits(&[reader::ZARR_PYTHON], true));
    /// ```
    pub fn admits(self, readers: &[&str], zarr_python_type: bool) -> bool {
        let zp = !zarr_python_type || readers.contains(&reader::ZARR_PYTHON);
        let zarrs = readers.contains(&reader::ZARRS);
        match self {
            Readers::ZarrPython => zp,
            Readers::Zarrs => zarrs,
            Readers::ZarrPythonAndZarrs => zp && zarrs,
            Readers::Any => true,
        }
    }
}

impl PlanOptions {
    /// From `{"headroom": h, "readers": "zarr-python" | "zarrs" | "zarr-python+zarrs" | "any",
    /// "sample_elements": n,
    /// "lossless_fallback": b}`, every key optional.
    ///
    /// # Errors
    /// [`ChooseError::Plan`] for an unknown key or a value of the wrong kind, a headroom
    /// that is negative or not finite.
    pub fn from_json(v: &Value) -> Result<PlanOptions, ChooseError> {
        let bad = |k: &str, x: &Value| ChooseError::Plan(format!("option {k}: invalid value {x}"));
        let mut o = PlanOptions::default();
        let Some(m) = v.as_object() else {
            return if v.is_null() {
                Ok(o)
            } else {
                Err(ChooseError::Plan(format!(
                    "options must be an object, got {v}"
                )))
            };
        };
        for (k, x) in m {
            match k.as_str() {
                "headroom" => {
                    o.headroom = x
                        .as_f64()
                        .filter(|h| *h >= 0.0 && h.is_finite())
                        .ok_or_else(|| bad(k, x))?;
                }
                "readers" => {
                    o.readers = match x.as_str() {
                        Some("zarr-python") => Readers::ZarrPython,
                        Some("zarrs") => Readers::Zarrs,
                        Some("zarr-python+zarrs") => Readers::ZarrPythonAndZarrs,
                        Some("any") => Readers::Any,
                        _ => return Err(bad(k, x)),
                    };
                }
                "sample_elements" => {
                    o.sample_elements = x.as_u64().ok_or_else(|| bad(k, x))? as usize;
                }
                "lossless_fallback" => {
                    o.lossless_fallback = x.as_bool().ok_or_else(|| bad(k, x))?
                }
                other => {
                    return Err(ChooseError::Plan(format!(
                        "unknown option {other:?}: headroom, readers, sample_elements, \
                         lossless_fallback"
                    )));
                }
            }
        }
        Ok(o)
    }
}

/// One row of the plan's table: a chain, its guarantee, what it stored on the sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// A short name (`"bitround k=12"`, `"scale_offset+cast_value uint12+packbits"`, …).
    pub name: String,
    /// The Zarr v3 array->array codec objects.
    pub filters: Vec<Value>,
    /// The array->bytes codec object (`packbits`), `None` for the default `bytes`.
    pub serializer: Option<Value>,
    /// The bytes->bytes codecs of the chain itself (`numcodecs.shuffle`), which go before
    /// the caller's compressors.
    pub bytes_codecs: Vec<Value>,
    /// The guaranteed bound on every finite element, in the target's unit (absolute, or
    /// relative for a relative target); `None` when no configuration was found.
    pub bound: Option<f64>,
    /// The sample's bytes as the caller's `size` measured them.
    pub sample_bytes: Option<u64>,
    /// The lossless baseline's sample bytes over these.
    pub ratio: Option<f64>,
    /// Who opens the chain (names in [`reader`]).
    pub readers: Vec<&'static str>,
    /// Why the candidate cannot be the plan, `None` when it can.
    pub ruled_out: Option<String>,
}

impl Candidate {
    /// The row as JSON (the keys of the fields).
    ///
    /// ```
    /// let c = zquant::plan::Candidate {
    ///     name: "lossless".into(), filters: vec![], serializer: None, bytes_codecs: vec![],
    ///     bound: Some(0.0), sample_bytes: Some(10), ratio: Some(1.0), readers: vec!["zquant"],
    ///     ruled_out: None,
    /// };
    /// assert_eq!(c.to_json()["name"], "lossless");
    /// ```
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "filters": self.filters,
            "serializer": self.serializer,
            "bytes_codecs": self.bytes_codecs,
            "bound": self.bound,
            "sample_bytes": self.sample_bytes,
            "ratio": self.ratio,
            "readers": self.readers,
            "ruled_out": self.ruled_out,
        })
    }

    /// The whole `codecs` list but the caller's compressors: the filters, the serializer
    /// (`bytes`, little-endian, when there is none to name), then the chain's own
    /// bytes->bytes codecs.
    ///
    /// ```
    /// let c = zquant::plan::Candidate {
    ///     name: "lossless +shuffle".into(), filters: vec![], serializer: None,
    ///     bytes_codecs: vec![serde_json::json!(
    ///         {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}})],
    ///     bound: Some(0.0), sample_bytes: None, ratio: None, readers: vec![], ruled_out: None,
    /// };
    /// assert_eq!(c.codecs()[0]["name"], "bytes");
    /// assert_eq!(c.codecs()[1]["name"], "numcodecs.shuffle");
    /// ```
    pub fn codecs(&self) -> Vec<Value> {
        let mut v = self.filters.clone();
        v.push(
            self.serializer
                .clone()
                .unwrap_or_else(|| json!({"name": "bytes", "configuration": {"endian": "little"}})),
        );
        v.extend(self.bytes_codecs.iter().cloned());
        v
    }
}

/// The planner's result: every candidate, and the winner.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The target planned for.
    pub target: Target,
    /// For an information target, the absolute bound it was planned as.
    pub abs_bound: Option<f64>,
    /// Every candidate, the baseline last.
    pub candidates: Vec<Candidate>,
    /// The index of the winner in `candidates`.
    pub winner: usize,
}

impl Plan {
    /// The winning candidate.
    ///
    /// ```
    /// # use zquant::{DTypeId, dtype::Words, plan::*};
    /// # let x: Vec<u64> = (0..256).map(|i| (i as f64 / 7.0).to_bits()).collect();
    /// # let stats = PlanStats::of_words(DTypeId::Float64, Words::U64(&x), &[256], None)?;
    /// # let samples = [(Words::U64(&x), &[256usize][..])];
    /// let p = plan(DTypeId::Float64, &serde_json::json!(0.0), &stats, &samples,
    ///     Target::MaxRelError(1e-3), &PlanOptions::default(), &mut |b: &[u8]| b.len())?;
    /// assert!(p.winner().ruled_out.is_none());
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    pub fn winner(&self) -> &Candidate {
        &self.candidates[self.winner]
    }

    /// The winner's guaranteed bound (the target's unit; absolute for an information
    /// target).
    ///
    /// ```
    /// # use zquant::{DTypeId, dtype::Words, plan::*};
    /// # let x: Vec<u64> = (0..256).map(|i| (i as f64 / 7.0).to_bits()).collect();
    /// # let stats = PlanStats::of_words(DTypeId::Float64, Words::U64(&x), &[256], None)?;
    /// # let samples = [(Words::U64(&x), &[256usize][..])];
    /// let p = plan(DTypeId::Float64, &serde_json::json!(0.0), &stats, &samples,
    ///     Target::MaxAbsError(0.01), &PlanOptions::default(), &mut |b: &[u8]| b.len())?;
    /// assert!(p.bound() <= 0.01);
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    pub fn bound(&self) -> f64 {
        self.winner().bound.unwrap_or(0.0)
    }

    /// `{"winner", "bound", "target", "candidates": [...]}` (each candidate as
    /// [`Candidate::to_json`]).
    ///
    /// ```
    /// # use zquant::{DTypeId, dtype::Words, plan::*};
    /// # let x: Vec<u64> = (0..256).map(|i| (i as f64 / 7.0).to_bits()).collect();
    /// # let stats = PlanStats::of_words(DTypeId::Float64, Words::U64(&x), &[256], None)?;
    /// # let samples = [(Words::U64(&x), &[256usize][..])];
    /// let p = plan(DTypeId::Float64, &serde_json::json!(0.0), &stats, &samples,
    ///     Target::MaxAbsError(0.01), &PlanOptions::default(), &mut |b: &[u8]| b.len())?;
    /// let j = p.to_json();
    /// assert_eq!(j["candidates"].as_array().unwrap().len(), p.candidates.len());
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    pub fn to_json(&self) -> Value {
        json!({
            "winner": self.winner,
            "bound": self.bound(),
            "target": self.target.to_json(),
            "abs_bound": self.abs_bound,
            "candidates": self.candidates.iter().map(Candidate::to_json).collect::<Vec<_>>(),
        })
    }

    /// The table as text, one candidate a line (the winner marked `*`).
    ///
    /// ```
    /// # use zquant::{DTypeId, dtype::Words, plan::*};
    /// # let x: Vec<u64> = (0..256).map(|i| (i as f64 / 7.0).to_bits()).collect();
    /// # let stats = PlanStats::of_words(DTypeId::Float64, Words::U64(&x), &[256], None)?;
    /// # let samples = [(Words::U64(&x), &[256usize][..])];
    /// let p = plan(DTypeId::Float64, &serde_json::json!(0.0), &stats, &samples,
    ///     Target::MaxAbsError(0.01), &PlanOptions::default(), &mut |b: &[u8]| b.len())?;
    /// assert!(p.table().contains('*'));
    /// # Ok::<(), zquant::choose::ChooseError>(())
    /// ```
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut s = format!(
            "  {:<44} {:>11} {:>12} {:>7}  readers / ruled out\n",
            "candidate", "bound", "sample bytes", "ratio"
        );
        for (i, c) in self.candidates.iter().enumerate() {
            let mark = if i == self.winner { '*' } else { ' ' };
            let opt = |x: Option<String>| x.unwrap_or_else(|| "-".into());
            let _ = writeln!(
                s,
                "{mark} {:<44} {:>11} {:>12} {:>7}  {}",
                c.name,
                opt(c.bound.map(|b| format!("{b:.3e}"))),
                opt(c.sample_bytes.map(|b| b.to_string())),
                opt(c.ratio.map(|r| format!("{r:.2}"))),
                match &c.ruled_out {
                    Some(why) => format!("ruled out: {why}"),
                    None => c.readers.join(", "),
                }
            );
        }
        s
    }
}

/// Plan the chain for an array of `id` with `fill_value` (Zarr JSON), from its
/// statistics over the whole array and a bounded sample of its chunks (`(words, shape)`,
/// native-endian words in C order), for `target`. `size` gives the stored size of one
/// serialized chunk (the bytes after the serializer, before compression; e.g. their zstd
/// length).
///
/// See the [module docs](self) for the candidates and an example.
///
/// # Errors
/// [`ChooseError::SourceNotFloat`] for an array type that is not a signed float type;
/// [`ChooseError::Bound`]/[`ChooseError::Level`] for an invalid target;
/// [`ChooseError::Plan`] for statistics of another type, a fill value the type cannot
/// hold, samples that are not of the type, or an information target without bit counts;
/// [`ChooseError::Unreachable`] (naming the smallest bound any candidate gives) when no
/// lossy chain meets the target and [`PlanOptions::lossless_fallback`] is off.
pub fn plan(
    id: DTypeId,
    fill_value: &Value,
    stats: &PlanStats,
    samples: &[(Words<'_>, &[usize])],
    target: Target,
    options: &PlanOptions,
    size: &mut dyn FnMut(&[u8]) -> usize,
) -> Result<Plan, ChooseError> {
    candidate::run(id, fill_value, stats, samples, target, options, size)
}
