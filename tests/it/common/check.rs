//! Comparing zquant's `cast`/`cast_slice` with the reference.
//!
//! Only the calls into zquant are generic over the (source, target) pair ([`Pair`]); the
//! comparison is plain code over raw codes, so that hundreds of pairs stay quick to compile.

use std::fmt::Write as _;

use zquant::__private::ElementFailure;
use zquant::{CastOptions, Real, Status};
use zquant::{cast, cast_slice};

use super::reference::{Analysis, Expected, Format, Target, Val, all_options, format};

/// Collected mismatches; [`Report::finish`] panics with the first ones.
#[derive(Default)]
pub struct Report {
    /// First messages.
    pub messages: Vec<String>,
    /// Total mismatches.
    pub failures: u64,
    /// Conversions compared.
    pub checked: u64,
}

const KEEP: usize = 40;

impl Report {
    /// Record a mismatch.
    pub fn fail(&mut self, msg: impl FnOnce() -> String) {
        self.failures += 1;
        if self.messages.len() < KEEP {
            self.messages.push(msg());
        }
    }

    /// Panic if anything failed.
    pub fn finish(&self, what: &str) {
        if self.failures == 0 {
            return;
        }
        let mut s = format!(
            "{what}: {} of {} conversions disagree with the reference; first ones:\n",
            self.failures, self.checked
        );
        for m in &self.messages {
            let _ = writeln!(s, "  {m}");
        }
        panic!("{s}");
    }
}

/// Describe a value for messages.
pub fn describe(v: &Val) -> String {
    match v {
        Val::Nan => "NaN".into(),
        Val::Inf { neg } => format!("{}Inf", if *neg { "-" } else { "+" }),
        Val::Num { neg, mag } => format!("{}{:?}", if *neg { "-" } else { "+" }, mag),
    }
}

/// The reference format of a zquant type, checked against its width.
pub fn format_of<T: Real>() -> Format {
    let f = format(T::NAME);
    assert_eq!(f.bits(), T::BITS, "{}: width", T::NAME);
    f
}

/// `cast` on codes: (value, status) per element.
pub type CastFn = fn(&[u64], CastOptions, &mut Vec<(u64, Status)>);
/// `cast_slice` on codes.
pub type SliceFn = fn(&[u64], CastOptions, &mut Vec<u64>) -> Result<(), ElementFailure>;

/// zquant's conversion for one (source, target) pair, over raw codes.
#[derive(Clone, Copy)]
pub struct Pair {
    /// Source name.
    pub src: &'static str,
    /// Target name.
    pub dst: &'static str,
    /// `cast` on each code: (result code, status).
    pub cast: CastFn,
    /// `cast_slice` on the codes: result codes and the slice result.
    pub slice: SliceFn,
}

/// The [`Pair`] of `S -> D`.
pub fn pair<S: Real, D: Real>() -> Pair {
    Pair {
        src: S::NAME,
        dst: D::NAME,
        cast: cast_codes::<S, D>,
        slice: slice_codes::<S, D>,
    }
}

fn cast_codes<S: Real, D: Real>(src: &[u64], opts: CastOptions, out: &mut Vec<(u64, Status)>) {
    out.clear();
    out.extend(src.iter().map(|c| {
        let (d, st) = cast::<S, D>(S::from_bits(*c), opts);
        (d.to_bits(), st)
    }));
}

fn slice_codes<S: Real, D: Real>(
    src: &[u64],
    opts: CastOptions,
    out: &mut Vec<u64>,
) -> Result<(), ElementFailure> {
    let s: Vec<S> = src.iter().map(|c| S::from_bits(*c)).collect();
    let mut d = vec![D::default(); s.len()];
    let r = cast_slice::<S, D>(&s, &mut d, opts);
    out.clear();
    out.extend(d.iter().map(|x| x.to_bits()));
    r
}

/// Check `p` on the source codes `src` under all 15 options against the reference: `cast`
/// element by element (code and status), and `cast_slice` on the whole slice (the same
/// codes, the first failing index and its status). When some elements fail, `cast_slice` is
/// also run on the elements that do not, which must succeed with the same codes.
pub fn check_codes(p: &Pair, src: &[u64], report: &mut Report) {
    let sf = format(p.src);
    let vals: Vec<Val> = src.iter().map(|c| sf.decode(*c)).collect();
    let t = Target::new(p.dst);
    check_decoded(p, src, &vals, &t, report);
}

/// [`check_codes`] with the source values already decoded and the target prepared.
pub fn check_decoded(p: &Pair, src: &[u64], vals: &[Val], t: &Target, report: &mut Report) {
    const CHUNK: usize = 1 << 16;
    let mut expected: Vec<Expected> = Vec::new();
    let mut got: Vec<(u64, Status)> = Vec::new();
    let mut slice_out: Vec<u64> = Vec::new();
    for (src, vals) in src.chunks(CHUNK).zip(vals.chunks(CHUNK)) {
        let analyses: Vec<Analysis> = vals.iter().map(|v| t.analyze(v)).collect();
        for opts in all_options() {
            expected.clear();
            expected.extend(analyses.iter().map(|a| t.resolve(a, opts)));
            let ctx = Ctx {
                p,
                src,
                vals,
                t,
                opts,
            };
            ctx.check(&expected, &mut got, &mut slice_out, report);
        }
    }
}

struct Ctx<'a> {
    p: &'a Pair,
    src: &'a [u64],
    vals: &'a [Val],
    t: &'a Target,
    opts: CastOptions,
}

fn show(e: &Expected) -> String {
    if e.status.is_error() {
        format!("{:?}", e.status)
    } else if e.nan {
        format!("NaN {:?}", e.status)
    } else {
        format!("{:#x} {:?}", e.code, e.status)
    }
}

impl Ctx<'_> {
    fn mismatch(&self, how: &str, i: usize, got: (u64, Status), e: &Expected) -> String {
        format!(
            "{how} {} {:#x} = {} -> {} {:?}/{:?}: got {:#x} {:?}, expected {}",
            self.p.src,
            self.src[i],
            describe(&self.vals[i]),
            self.p.dst,
            self.opts.rounding,
            self.opts.out_of_range,
            got.0,
            got.1,
            show(e),
        )
    }

    fn check(
        &self,
        expected: &[Expected],
        got: &mut Vec<(u64, Status)>,
        slice_out: &mut Vec<u64>,
        report: &mut Report,
    ) {
        let (p, t, opts) = (self.p, self.t, self.opts);
        // Element by element.
        (p.cast)(self.src, opts, got);
        let mut first_err: Option<(usize, Status)> = None;
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            report.checked += 1;
            if !e.accepts(&t.fmt, g.0, g.1) {
                report.fail(|| self.mismatch("cast", i, *g, e));
            }
            if e.status.is_error() && first_err.is_none() {
                first_err = Some((i, e.status));
            }
        }
        // The whole slice.
        let r = (p.slice)(self.src, opts, slice_out);
        match (r, first_err) {
            (Ok(()), None) => {
                for (i, (d, e)) in slice_out.iter().zip(expected).enumerate() {
                    if !e.accepts(&t.fmt, *d, e.status) {
                        report.fail(|| self.mismatch("cast_slice", i, (*d, e.status), e));
                    }
                }
            }
            (Err(ElementFailure { index, status }), Some((i, st)))
                if index == i && status == st =>
            {
                // The elements that convert must convert the same way through cast_slice.
                let (ok_src, ok_exp): (Vec<u64>, Vec<Expected>) = self
                    .src
                    .iter()
                    .zip(expected)
                    .filter(|(_, e)| !e.status.is_error())
                    .map(|(s, e)| (*s, *e))
                    .unzip();
                match (p.slice)(&ok_src, opts, slice_out) {
                    Ok(()) => {
                        for ((s, d), e) in ok_src.iter().zip(slice_out.iter()).zip(&ok_exp) {
                            if !e.accepts(&t.fmt, *d, e.status) {
                                report.fail(|| {
                                    format!(
                                        "cast_slice (error-free part) {} {s:#x} -> {} {opts:?}: got {d:#x}, expected {}",
                                        p.src,
                                        p.dst,
                                        show(e)
                                    )
                                });
                            }
                        }
                    }
                    Err(f) => report.fail(|| {
                        format!(
                            "cast_slice (error-free part) {} -> {} {opts:?}: unexpected {f:?}",
                            p.src, p.dst
                        )
                    }),
                }
            }
            (r, first) => report.fail(|| {
                format!(
                    "cast_slice {} -> {} {opts:?} on {} elements: got {r:?}, expected first failure {first:?}",
                    p.src,
                    p.dst,
                    self.src.len()
                )
            }),
        }
    }
}

/// `cast_slice` on long slices: the whole code table `src` repeated up to at least 2^18
/// elements (where zquant switches to a lookup table for 16-bit sources), under all 15
/// options: the first failing index and status, and the values of a repeated error-free
/// subset.
pub fn check_long_slice(p: &Pair, src: &[u64], vals: &[Val], t: &Target, report: &mut Report) {
    const LONG: usize = 1 << 18;
    let analyses: Vec<Analysis> = vals.iter().map(|v| t.analyze(v)).collect();
    let repeat = |codes: &[u64]| -> Vec<u64> {
        codes
            .iter()
            .copied()
            .cycle()
            .take(LONG.max(codes.len()))
            .collect()
    };
    let long = repeat(src);
    let mut out = Vec::new();
    for opts in all_options() {
        let expected: Vec<Expected> = analyses.iter().map(|a| t.resolve(a, opts)).collect();
        let first = expected
            .iter()
            .position(|e| e.status.is_error())
            .map(|i| (i, expected[i].status));
        report.checked += long.len() as u64;
        let r = (p.slice)(&long, opts, &mut out);
        match (r, first) {
            (Ok(()), None) => {
                for (i, d) in out.iter().enumerate() {
                    let e = &expected[i % src.len()];
                    if !e.accepts(&t.fmt, *d, e.status) {
                        report.fail(|| {
                            format!(
                                "long cast_slice {} {:#x} -> {} {opts:?}: got {d:#x}, expected {}",
                                p.src,
                                src[i % src.len()],
                                p.dst,
                                show(e)
                            )
                        });
                    }
                }
            }
            (Err(ElementFailure { index, status }), Some((i, st)))
                if index == i && status == st =>
            {
                let ok: Vec<usize> = (0..src.len())
                    .filter(|i| !expected[*i].status.is_error())
                    .collect();
                if ok.is_empty() {
                    continue;
                }
                let idx = repeat(&ok.iter().map(|i| *i as u64).collect::<Vec<_>>());
                let codes: Vec<u64> = idx.iter().map(|i| src[*i as usize]).collect();
                match (p.slice)(&codes, opts, &mut out) {
                    Ok(()) => {
                        for (i, d) in idx.iter().zip(&out) {
                            let e = &expected[*i as usize];
                            if !e.accepts(&t.fmt, *d, e.status) {
                                report.fail(|| {
                                    format!(
                                        "long cast_slice (error-free part) {} {:#x} -> {} {opts:?}: got {d:#x}, expected {}",
                                        p.src,
                                        src[*i as usize],
                                        p.dst,
                                        show(e)
                                    )
                                });
                            }
                        }
                    }
                    Err(f) => report.fail(|| {
                        format!(
                            "long cast_slice (error-free part) {} -> {} {opts:?}: unexpected {f:?}",
                            p.src, p.dst
                        )
                    }),
                }
            }
            (r, first) => report.fail(|| {
                format!(
                    "long cast_slice {} -> {} {opts:?} on {} elements: got {r:?}, expected first failure {first:?}",
                    p.src,
                    p.dst,
                    long.len()
                )
            }),
        }
    }
}
