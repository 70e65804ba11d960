//! The Zarr v3 fill-value JSON encoding (`core/data-types/index.rst`, "Permitted fill
//! values"), for every built-in data type, checked against expectations computed here:
//!
//! - round trip: `to_json` then `from_json` gives back the same code, for every code of the
//!   types of 16 bits or fewer and for many random and hand-picked codes (NaN payloads, ±0,
//!   ±Inf, subnormals) of the wider ones; the JSON form itself is checked too (`"NaN"` only
//!   for the canonical NaN, `"0x…"` with `2 × itemsize` digits for any other NaN, numbers
//!   that parse to the code's value);
//! - rejection, with a typed [`FillValueError`], of what the spec (or the readings in
//!   `conformance/README.md`) does not allow;
//! - JSON numbers rounded nearest-even to the type **once**, from the decimal: for types of
//!   16 bits or fewer against an exact decimal oracle written here (every midpoint between
//!   adjacent values, written out as an exact decimal and nudged by `10^-k`), for `float32`
//!   and `float64` against Rust's own correctly rounded `str::parse`.

use std::cmp::Ordering;

use crate::formula::{self, Fmt, Specials, Val};
use half::{bf16, f16};
use serde_json::Value;
use zquant::dtype::*;
use zquant::{DType, Real};

// ---------------------------------------------------------------------------------------
// Small helpers: a PRNG, JSON text, errors.

/// splitmix64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// JSON text as a metadata reader would see it (numbers keep their decimal text).
fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("bad test JSON {text:?}: {e}"))
}

/// The fill value of `T` encoded by zquant, printed, and parsed back from the text.
fn through_text<T: DType>(x: T) -> (Value, T) {
    let j = x.fill_value_to_json();
    let text = j.to_string();
    let back = T::fill_value_from_json(&json(&text))
        .unwrap_or_else(|e| panic!("{}: {text} does not parse back: {e}", T::NAME));
    (j, back)
}

fn err<T: DType>(v: &Value) -> FillValueError {
    match T::fill_value_from_json(v) {
        Ok(x) => panic!("{}: {v} was accepted as {x:?}", T::NAME),
        Err(e) => e,
    }
}

fn assert_invalid<T: DType>(v: &Value) {
    match err::<T>(v) {
        FillValueError::Invalid { dtype, .. } => assert_eq!(dtype, T::NAME),
        e => panic!("{}: {v}: expected Invalid, got {e:?}", T::NAME),
    }
}

fn assert_not_representable<T: DType>(v: &Value) {
    match err::<T>(v) {
        FillValueError::NotRepresentable { dtype, .. } => assert_eq!(dtype, T::NAME),
        e => panic!("{}: {v}: expected NotRepresentable, got {e:?}", T::NAME),
    }
}

fn assert_bad_hex<T: DType>(v: &Value) {
    match err::<T>(v) {
        FillValueError::BadHex { dtype, digits, .. } => {
            assert_eq!(dtype, T::NAME);
            assert_eq!(digits, 2 * T::SIZE, "{}: digits", T::NAME);
        }
        e => panic!("{}: {v}: expected BadHex, got {e:?}", T::NAME),
    }
}

// ---------------------------------------------------------------------------------------
// Exact decimals.

/// An exact decimal: `±int.frac`, `int` without leading zeros (empty for 0), `frac`
/// without trailing zeros.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dec {
    neg: bool,
    int: String,
    frac: String,
}

impl Dec {
    fn new(neg: bool, int: &str, frac: &str) -> Dec {
        Dec {
            neg,
            int: int.trim_start_matches('0').to_string(),
            frac: frac.trim_end_matches('0').to_string(),
        }
    }

    /// `±sig × 2^exp`, exactly.
    fn from_dyadic(neg: bool, sig: u64, exp: i32) -> Dec {
        // Little-endian decimal digits.
        let mut d: Vec<u8> = sig.to_string().bytes().rev().map(|c| c - b'0').collect();
        let mul = |d: &mut Vec<u8>, k: u8| {
            let mut carry = 0u8;
            for x in d.iter_mut() {
                let v = *x * k + carry;
                *x = v % 10;
                carry = v / 10;
            }
            if carry > 0 {
                d.push(carry);
            }
        };
        let point = if exp >= 0 {
            (0..exp).for_each(|_| mul(&mut d, 2));
            0
        } else {
            // sig × 2^-k = sig × 5^k / 10^k
            (0..-exp).for_each(|_| mul(&mut d, 5));
            (-exp) as usize
        };
        while d.len() <= point {
            d.push(0);
        }
        let s: String = d.iter().rev().map(|&x| (x + b'0') as char).collect();
        let (i, f) = s.split_at(s.len() - point);
        Dec::new(neg, i, f)
    }

    /// `digits × 10^e10`.
    fn from_digits(neg: bool, digits: &str, e10: i64) -> Dec {
        if e10 >= 0 {
            Dec::new(neg, &format!("{digits}{}", "0".repeat(e10 as usize)), "")
        } else {
            let k = (-e10) as usize;
            let padded = format!(
                "{}{digits}",
                "0".repeat((k + 1).saturating_sub(digits.len()))
            );
            let (i, f) = padded.split_at(padded.len() - k);
            Dec::new(neg, i, f)
        }
    }

    fn is_zero(&self) -> bool {
        self.int.is_empty() && self.frac.is_empty()
    }

    fn abs(&self) -> Dec {
        Dec {
            neg: false,
            ..self.clone()
        }
    }

    fn negated(&self) -> Dec {
        Dec {
            neg: !self.neg,
            ..self.clone()
        }
    }

    fn cmp_mag(&self, o: &Dec) -> Ordering {
        self.int
            .len()
            .cmp(&o.int.len())
            .then_with(|| self.int.cmp(&o.int))
            .then_with(|| self.frac.cmp(&o.frac))
    }

    /// Magnitude plus (`up`) or minus one unit in the `k`-th fractional place
    /// (`k` at least the current number of fractional digits; minus needs a magnitude of at
    /// least that unit).
    fn nudge(&self, k: usize, up: bool) -> Dec {
        assert!(k >= self.frac.len());
        let mut d: Vec<u8> = format!(
            "{}{}{}",
            self.int,
            self.frac,
            "0".repeat(k - self.frac.len())
        )
        .bytes()
        .map(|c| c - b'0')
        .collect();
        d.insert(0, 0);
        let mut i = d.len() - 1;
        if up {
            loop {
                if d[i] == 9 {
                    d[i] = 0;
                    i -= 1;
                } else {
                    d[i] += 1;
                    break;
                }
            }
        } else {
            loop {
                if d[i] == 0 {
                    d[i] = 9;
                    i -= 1;
                } else {
                    d[i] -= 1;
                    break;
                }
            }
        }
        let s: String = d.iter().map(|&x| (x + b'0') as char).collect();
        let (i, f) = s.split_at(s.len() - k);
        Dec::new(self.neg, i, f)
    }

    /// All significant digits and the power of ten of the last one.
    fn digits(&self) -> (String, i64) {
        let all = format!("{}{}", self.int, self.frac);
        let t = all.trim_start_matches('0');
        if t.is_empty() {
            ("0".into(), 0)
        } else {
            let t = t.trim_end_matches('0');
            let trailing = all.len() - all.trim_end_matches('0').len();
            (t.to_string(), trailing as i64 - self.frac.len() as i64)
        }
    }

    /// A JSON number for this value, in one of several equivalent spellings.
    fn json_text(&self, style: u64) -> String {
        let sign = if self.neg { "-" } else { "" };
        let (d, e10) = self.digits();
        match style % 4 {
            // plain: 123.456, 0.5, 42
            0 => {
                let i = if self.int.is_empty() { "0" } else { &self.int };
                if self.frac.is_empty() {
                    format!("{sign}{i}")
                } else {
                    format!("{sign}{i}.{}", self.frac)
                }
            }
            // digits and an exponent: 123456e-3
            1 => format!("{sign}{d}e{e10}"),
            // scientific: 1.23456E+2
            2 => {
                let e = e10 + d.len() as i64 - 1;
                let (h, t) = d.split_at(1);
                let es = if e >= 0 {
                    format!("+{e}")
                } else {
                    e.to_string()
                };
                if t.is_empty() {
                    format!("{sign}{h}E{es}")
                } else {
                    format!("{sign}{h}.{t}E{es}")
                }
            }
            // padded: trailing zeros in the fraction, an explicit zero exponent
            _ => {
                let i = if self.int.is_empty() { "0" } else { &self.int };
                format!("{sign}{i}.{}000e0", self.frac)
            }
        }
    }
}

#[test]
fn dec_helpers() {
    let d = Dec::from_dyadic(false, 3, -2);
    assert_eq!((d.int.as_str(), d.frac.as_str()), ("", "75"));
    let d = Dec::from_dyadic(true, 5, 3);
    assert_eq!((d.neg, d.int.as_str(), d.frac.as_str()), (true, "40", ""));
    let d = Dec::from_dyadic(false, 2049, -11); // 1 + 2^-11
    assert_eq!(d.json_text(0), "1.00048828125");
    assert_eq!(d.nudge(13, true).json_text(0), "1.0004882812501");
    assert_eq!(d.nudge(13, false).json_text(0), "1.0004882812499");
    assert_eq!(
        Dec::new(false, "1", "").nudge(2, false).json_text(0),
        "0.99"
    );
    assert_eq!(d.json_text(1), "100048828125e-11");
    assert_eq!(d.json_text(2), "1.00048828125E+0");
    assert_eq!(Dec::from_digits(false, "15", -3).json_text(0), "0.015");
    assert_eq!(Dec::from_digits(false, "15", 2).json_text(2), "1.5E+3");
    assert!(Dec::new(false, "", "5").cmp_mag(&Dec::new(false, "", "49")) == Ordering::Greater);
    for style in 0..4 {
        for d in [
            Dec::from_dyadic(false, 2049, -11),
            Dec::from_dyadic(true, 7, 40),
            Dec::from_digits(false, "1", -30),
        ] {
            let t = d.json_text(style);
            let want: f64 = d.json_text(0).parse().unwrap();
            assert_eq!(t.parse::<f64>().unwrap(), want, "{t}");
            json(&t);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The exact nearest-even oracle for formats of 16 bits or fewer.

/// What a correctly rounded parse of a decimal must give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    Code(u64),
    /// Rounds beyond the largest finite value: ±Inf where the type has it, else an error.
    Overflow,
    /// No representable result (below `float8_e8m0fnu`'s smallest value, negative in an
    /// unsigned type).
    Error,
}

/// One grid point: its code (`None` for a sentinel outside the format), exact value, and
/// `sig × 2^exp` with `2^exp` the gap to the next point above.
struct Point {
    code: Option<u64>,
    value: Dec,
    sig: u64,
    exp: i32,
}

/// The non-negative finite values of a format, in order, with one sentinel above the
/// largest (and, for `float8_e8m0fnu`, one below the smallest).
struct Grid {
    fmt: Fmt,
    pts: Vec<Point>,
}

impl Grid {
    fn new(fmt: Fmt) -> Grid {
        let mut pts = vec![];
        let positive_codes = if fmt.signed() {
            fmt.codes() / 2
        } else {
            fmt.codes()
        };
        for code in 0..positive_codes {
            if let Val::Num {
                neg: false,
                sig,
                exp,
            } = fmt.decode(code)
            {
                pts.push(Point {
                    code: Some(code),
                    value: Dec::from_dyadic(false, sig, exp),
                    sig,
                    exp,
                });
            }
        }
        // Positive codes are monotonic in value.
        for w in pts.windows(2) {
            assert_eq!(w[0].value.cmp_mag(&w[1].value), Ordering::Less);
        }
        let last = pts.last().unwrap();
        let (sig, exp) = (last.sig + 1, last.exp);
        pts.push(Point {
            code: None,
            value: Dec::from_dyadic(false, sig, exp),
            sig,
            exp,
        });
        if fmt.specials == Specials::E8M0 {
            // 2^-128, the next power of two below 0x00 = 2^-127.
            pts.insert(
                0,
                Point {
                    code: None,
                    value: Dec::from_dyadic(false, 1, -128),
                    sig: 1,
                    exp: -128,
                },
            );
        }
        Grid { fmt, pts }
    }

    /// Index of the point `x` rounds to (nearest, ties to the even significand), or `None`
    /// when `x` is beyond every point.
    fn nearest(&self, x: &Dec) -> Option<usize> {
        let x = x.abs();
        let last = self.pts.len() - 1;
        if x.cmp_mag(&self.pts[last].value) == Ordering::Greater {
            return None;
        }
        if x.cmp_mag(&self.pts[0].value) == Ordering::Less {
            return Some(0); // only e8m0 has a point above 0 first: its sentinel
        }
        // Largest i with pts[i] <= x.
        let (mut lo, mut hi) = (0, last);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.pts[mid].value.cmp_mag(&x) != Ordering::Greater {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let p = &self.pts[lo];
        if p.value == x || lo == last {
            return Some(lo);
        }
        let midpoint = Dec::from_dyadic(false, 2 * p.sig + 1, p.exp - 1);
        Some(match x.cmp_mag(&midpoint) {
            Ordering::Less => lo,
            Ordering::Greater => lo + 1,
            Ordering::Equal if p.sig.is_multiple_of(2) => lo,
            Ordering::Equal => lo + 1,
        })
    }

    /// The code a correctly rounded parse of `x` must give.
    fn want(&self, x: &Dec) -> Want {
        let f = self.fmt;
        if !f.signed() && (x.neg || x.is_zero()) {
            return Want::Error;
        }
        let last = self.pts.len() - 1;
        let i = match self.nearest(x) {
            None => return Want::Overflow,
            Some(i) if i == last => return Want::Overflow,
            Some(i) => i,
        };
        let Some(code) = self.pts[i].code else {
            return Want::Error; // the e8m0 sentinel below the smallest value
        };
        if !x.neg {
            return Want::Code(code);
        }
        let sign = 1u64 << (f.bits() - 1);
        if code == 0 && f.specials == Specials::Fnuz {
            Want::Code(0) // no -0: the fnuz 0x80 is NaN
        } else {
            Want::Code(code | sign)
        }
    }

    /// Every midpoint and value, exactly and nudged, in both signs; for `sample` of the
    /// gaps (all of them when `None`).
    fn probes(&self, rng: &mut Rng, sample: Option<usize>) -> Vec<Dec> {
        let gaps = self.pts.len() - 1;
        let picks: Vec<usize> = match sample {
            None => (0..gaps).collect(),
            Some(n) => {
                // Both ends, then random gaps.
                let mut v: Vec<usize> = (0..40.min(gaps))
                    .chain(gaps.saturating_sub(40)..gaps)
                    .collect();
                v.extend((0..n).map(|_| rng.below(gaps as u64) as usize));
                v
            }
        };
        let mut out = vec![];
        for i in picks {
            let p = &self.pts[i];
            let mid = Dec::from_dyadic(false, 2 * p.sig + 1, p.exp - 1);
            let k = mid.frac.len();
            let mut here = vec![
                mid.clone(),
                mid.nudge(k + 1, true),
                mid.nudge(k + 1, false),
                mid.nudge(k + 1 + rng.below(30) as usize, true),
                mid.nudge(k + 1 + rng.below(30) as usize, false),
                p.value.clone(),
                p.value.nudge(k + 2, true),
            ];
            if !p.value.is_zero() {
                here.push(p.value.nudge(k + 2, false));
            }
            for d in here {
                out.push(d.negated());
                out.push(d);
            }
        }
        out
    }
}

/// Random decimals of 1 to 30 significant digits spread over `[lo, hi]` decimal orders.
fn random_decimals(rng: &mut Rng, n: usize, lo: i64, hi: i64) -> Vec<Dec> {
    (0..n)
        .map(|_| {
            let len = 1 + rng.below(30) as usize;
            let mut d = String::new();
            d.push((b'1' + rng.below(9) as u8) as char);
            for _ in 1..len {
                d.push((b'0' + rng.below(10) as u8) as char);
            }
            let m10 = lo + rng.below((hi - lo + 1) as u64) as i64;
            Dec::from_digits(rng.coin(), &d, m10 - len as i64)
        })
        .collect()
}

/// Check `T`'s number parsing against the exact oracle on `probes`.
fn check_grid<T: Real>(grid: &Grid, probes: &[Dec], rng: &mut Rng) {
    let f = grid.fmt;
    assert_eq!(T::NAME, f.name);
    let inf = match f.specials {
        Specials::Ieee => Some(((1u64 << f.exp_bits) - 1) << f.man_bits),
        _ => None,
    };
    for d in probes {
        let text = d.json_text(rng.below(4));
        let got = T::fill_value_from_json(&json(&text));
        let want = grid.want(d);
        match (want, inf) {
            (Want::Code(c), _) => {
                let got = got.unwrap_or_else(|e| panic!("{}: {text} rejected: {e}", f.name));
                assert_eq!(got.to_bits(), c, "{}: {text}", f.name);
            }
            (Want::Overflow, Some(inf)) => {
                let sign = if d.neg { 1u64 << (f.bits() - 1) } else { 0 };
                let got = got.unwrap_or_else(|e| panic!("{}: {text} rejected: {e}", f.name));
                assert_eq!(
                    got.to_bits(),
                    inf | sign,
                    "{}: {text} overflows to Inf",
                    f.name
                );
            }
            (Want::Overflow, None) | (Want::Error, _) => match got {
                Err(FillValueError::NotRepresentable { dtype, .. }) => assert_eq!(dtype, f.name),
                other => panic!("{}: {text}: want NotRepresentable, got {other:?}", f.name),
            },
        }
    }
}

fn grid_test<T: Real>(fmt: Fmt, sample: Option<usize>, seed: u64) {
    let mut rng = Rng(seed);
    let grid = Grid::new(fmt);
    let mut probes = grid.probes(&mut rng, sample);
    let min = grid.pts.iter().find(|p| !p.value.is_zero()).unwrap();
    let lo = (min.sig as f64 * 2f64.powi(min.exp)).log10().floor() as i64 - 2;
    let top = &grid.pts[grid.pts.len() - 1];
    let hi = (top.sig as f64 * 2f64.powi(top.exp)).log10().ceil() as i64 + 2;
    probes.extend(random_decimals(&mut rng, 3000, lo, hi));
    for z in ["0", "-0", "0.0", "-0.000e12"] {
        probes.push(Dec::new(z.starts_with('-'), "", ""));
    }
    check_grid::<T>(&grid, &probes, &mut rng);
}

#[test]
#[cfg_attr(
    not(feature = "exact-json"),
    ignore = "needs numbers' decimal text: --features exact-json (.ci/run runs it)"
)]
fn numbers_round_once_small_floats() {
    grid_test::<Float4E2M1Fn>(formula::FLOAT4_E2M1FN, None, 1);
    grid_test::<Float6E2M3Fn>(formula::FLOAT6_E2M3FN, None, 2);
    grid_test::<Float6E3M2Fn>(formula::FLOAT6_E3M2FN, None, 3);
    grid_test::<Float8E3M4>(formula::FLOAT8_E3M4, None, 4);
    grid_test::<Float8E4M3>(formula::FLOAT8_E4M3, None, 5);
    grid_test::<Float8E4M3B11Fnuz>(formula::FLOAT8_E4M3B11FNUZ, None, 6);
    grid_test::<Float8E4M3Fnuz>(formula::FLOAT8_E4M3FNUZ, None, 7);
    grid_test::<Float8E5M2>(formula::FLOAT8_E5M2, None, 8);
    grid_test::<Float8E5M2Fnuz>(formula::FLOAT8_E5M2FNUZ, None, 9);
    grid_test::<Float8E8M0Fnu>(formula::FLOAT8_E8M0FNU, None, 10);
}

#[test]
#[cfg_attr(
    not(feature = "exact-json"),
    ignore = "needs numbers' decimal text: --features exact-json (.ci/run runs it)"
)]
fn numbers_round_once_float16_bfloat16() {
    grid_test::<f16>(formula::FLOAT16, Some(3000), 11);
    grid_test::<bf16>(formula::BFLOAT16, Some(2000), 12);
}

/// The witnesses the spec's "rounded to the nearest representable value" is about: a
/// decimal just off a midpoint of the target whose nearest `f64` *is* that midpoint, so
/// that parsing to `f64` first and rounding again gives the other neighbour.
#[test]
#[cfg_attr(
    not(feature = "exact-json"),
    ignore = "needs numbers' decimal text: --features exact-json (.ci/run runs it)"
)]
fn numbers_are_not_rounded_through_f64() {
    // float16: (midpoint as sig × 2^exp, nudge up?, correct code).
    let cases16: [(u64, i32, bool, u16); 4] = [
        // 1 + 2^-11, between 1.0 (0x3c00, even) and 0x3c01: just above rounds up, while
        // the f64 detour ties to even, down.
        (2049, -11, true, 0x3c01),
        // 1 + 3·2^-11, between 0x3c01 (odd) and 0x3c02: just below rounds down, the detour
        // ties up.
        (2051, -11, false, 0x3c01),
        // 65520, between 65504 (0x7bff, odd) and 65536 (beyond the range): just below is
        // 65504, the detour ties up and overflows to Inf.
        (65520, 0, false, 0x7bff),
        // 2^-25, between 0 and the smallest subnormal 2^-24 (0x0001): just above rounds up,
        // the detour ties to 0.
        (1, -25, true, 0x0001),
    ];
    for (sig, exp, up, want) in cases16 {
        let mid = Dec::from_dyadic(false, sig, exp);
        let d = mid.nudge(mid.frac.len() + 25, up);
        let text = d.json_text(0);
        let as_f64: f64 = text.parse().unwrap();
        assert_eq!(
            as_f64,
            sig as f64 * 2f64.powi(exp),
            "{text}: its nearest f64 is the midpoint"
        );
        let got = f16::fill_value_from_json(&json(&text)).unwrap();
        assert_eq!(got.to_bits(), want, "{text}");
        let via_f64 = f16::from_f64(as_f64).to_bits();
        assert_ne!(
            via_f64, want,
            "{text}: the f64 detour must differ for a witness"
        );
    }

    // float32: 1 + 2^-24 between 1.0 (even) and 1 + 2^-23.
    let mid = Dec::from_dyadic(false, (1 << 24) + 1, -24);
    let text = mid.nudge(mid.frac.len() + 20, true).json_text(0);
    assert_eq!(text.parse::<f64>().unwrap(), 1.0 + 2f64.powi(-24));
    let want = 1.0f32 + 2f32.powi(-23);
    assert_eq!(text.parse::<f32>().unwrap(), want, "Rust's parse agrees");
    assert_eq!((text.parse::<f64>().unwrap() as f32), 1.0, "the f64 detour");
    assert_eq!(
        f32::fill_value_from_json(&json(&text)).unwrap(),
        want,
        "{text}"
    );

    // float8_e4m3: 1.0625 between 1.0 (0x38, even) and 1.125 (0x39).
    let mid = Dec::from_dyadic(false, 17, -4);
    let text = mid.nudge(30, true).json_text(0);
    assert_eq!(text.parse::<f64>().unwrap(), 1.0625);
    let got = Float8E4M3::fill_value_from_json(&json(&text)).unwrap();
    assert_eq!(got.to_bits(), 0x39, "{text}");
    let got = Float8E4M3::fill_value_from_json(&json("1.0625")).unwrap();
    assert_eq!(got.to_bits(), 0x38, "the exact tie goes to even");

    // bfloat16: 1 + 2^-8 between 1.0 (0x3f80, even) and 0x3f81.
    let mid = Dec::from_dyadic(false, 257, -8);
    let text = mid.nudge(40, true).json_text(2);
    assert_eq!(text.parse::<f64>().unwrap(), 1.0 + 2f64.powi(-8));
    let got = bf16::fill_value_from_json(&json(&text)).unwrap();
    assert_eq!(got.to_bits(), 0x3f81, "{text}");
}

/// `float32` and `float64` numbers against Rust's correctly rounded `str::parse`.
#[test]
#[cfg_attr(
    not(feature = "exact-json"),
    ignore = "needs numbers' decimal text: --features exact-json (.ci/run runs it)"
)]
fn numbers_round_once_float32_float64() {
    let mut rng = Rng(99);
    let mut texts: Vec<String> = vec![];
    // Midpoints of adjacent float32 codes, exactly and nudged.
    for _ in 0..3000 {
        let code = match rng.below(4) {
            0 => rng.below(1 << 23),                          // subnormal
            1 => (0xfe << 23) + rng.below((1 << 23) + 1) - 1, // top binade, incl. max
            _ => rng.below(0x7f80_0000),
        } as u32;
        let x = f32::from_bits(code);
        let (sig, exp) = if code >> 23 == 0 {
            ((code & 0x7f_ffff) as u64, -149)
        } else {
            (
                ((code & 0x7f_ffff) | 0x80_0000) as u64,
                (code >> 23) as i32 - 150,
            )
        };
        assert_eq!(sig as f64 * 2f64.powi(exp), x as f64);
        let mid = Dec::from_dyadic(rng.coin(), 2 * sig + 1, exp - 1);
        let k = mid.frac.len();
        for d in [
            mid.clone(),
            mid.nudge(k + 1 + rng.below(25) as usize, rng.coin()),
        ] {
            texts.push(d.json_text(rng.below(4)));
        }
    }
    texts.extend(
        random_decimals(&mut rng, 3000, -47, 41)
            .iter()
            .map(|d| d.json_text(rng.below(4))),
    );
    for t in &texts {
        let want: f32 = t.parse().unwrap();
        let got = f32::fill_value_from_json(&json(t)).unwrap();
        assert_eq!(got.to_bits(), want.to_bits(), "float32 {t}");
    }

    let mut texts: Vec<String> = vec![];
    for i in 0..600 {
        let code = match i % 6 {
            0 => rng.below(1 << 52),
            1 => (0x7fe << 52) + rng.below((1 << 52) + 1) - 1,
            _ => rng.below(0x7ff0_0000_0000_0000),
        };
        let (sig, exp) = if code >> 52 == 0 {
            (code & ((1 << 52) - 1), -1074)
        } else {
            (
                (code & ((1 << 52) - 1)) | (1 << 52),
                (code >> 52) as i32 - 1075,
            )
        };
        let mid = Dec::from_dyadic(rng.coin(), 2 * sig + 1, exp - 1);
        let k = mid.frac.len();
        for d in [
            mid.clone(),
            mid.nudge(k + 1 + rng.below(25) as usize, rng.coin()),
        ] {
            texts.push(d.json_text(rng.below(4)));
        }
    }
    texts.extend(
        random_decimals(&mut rng, 3000, -330, 312)
            .iter()
            .map(|d| d.json_text(rng.below(4))),
    );
    texts.extend(
        [
            "1e400",
            "-1e400",
            "1e-400",
            "-1e-400",
            "2.4703282292062328e-324",
            "2.4703282292062327e-324",
        ]
        .map(String::from),
    );
    for t in &texts {
        let want: f64 = t.parse().unwrap();
        let got = f64::fill_value_from_json(&json(t)).unwrap();
        assert_eq!(got.to_bits(), want.to_bits(), "float64 {t}");
    }
}

// ---------------------------------------------------------------------------------------
// Round trips.

/// What the fill-value encoding of one float code must look like.
enum FloatJson {
    Str(String),
    Num(f64),
}

/// The expected encoding of a float code of value `v` (decoded independently).
fn float_json_expect(code: u64, v: f64, canonical_nan: Option<u64>, size: usize) -> FloatJson {
    if v.is_nan() {
        if Some(code) == canonical_nan {
            FloatJson::Str("NaN".into())
        } else {
            FloatJson::Str(format!("0x{code:0w$x}", w = 2 * size))
        }
    } else if v == f64::INFINITY {
        FloatJson::Str("Infinity".into())
    } else if v == f64::NEG_INFINITY {
        FloatJson::Str("-Infinity".into())
    } else {
        FloatJson::Num(v)
    }
}

fn check_float_json(name: &str, code: u64, j: &Value, want: &FloatJson) {
    match (want, j) {
        (FloatJson::Str(s), Value::String(t)) => {
            assert_eq!(
                t.to_ascii_lowercase(),
                s.to_ascii_lowercase(),
                "{name} code {code:#x}"
            )
        }
        (FloatJson::Num(v), Value::Number(n)) => {
            let got: f64 = n.to_string().parse().unwrap();
            assert_eq!(got.to_bits(), v.to_bits(), "{name} code {code:#x}: {n}");
        }
        (FloatJson::Str(s), _) => panic!("{name} code {code:#x}: want {s:?}, got {j}"),
        (FloatJson::Num(v), _) => panic!("{name} code {code:#x}: want the number {v:?}, got {j}"),
    }
}

/// `value_of` is an independent decoder of `T`'s codes.
fn float_roundtrip<T: Real>(
    codes: impl IntoIterator<Item = u64>,
    value_of: impl Fn(u64) -> f64,
    canonical_nan: Option<u64>,
) -> usize {
    let mut n = 0;
    for code in codes {
        let x = T::from_bits(code);
        let (j, back) = through_text(x);
        check_float_json(
            T::NAME,
            code,
            &j,
            &float_json_expect(code, value_of(code), canonical_nan, T::SIZE),
        );
        assert_eq!(back.to_bits(), code, "{}: {j} round trip", T::NAME);
        n += 1;
    }
    n
}

fn int_roundtrip<T: Real>(codes: impl IntoIterator<Item = u64>, signed: bool) {
    let bits = T::BITS;
    for code in codes {
        let x = T::from_bits(code);
        let (j, back) = through_text(x);
        let want = if signed {
            // Sign-extend the code.
            let v = ((code << (64 - bits)) as i64) >> (64 - bits);
            v.to_string()
        } else {
            code.to_string()
        };
        assert_eq!(j.to_string(), want, "{} code {code:#x}", T::NAME);
        assert_eq!(back.to_bits(), code, "{}: {j}", T::NAME);
    }
}

/// Codes built from interesting fields: every sign, exponent field in
/// {0, 1, 2, random, max-1, max}, mantissa in {0, 1, MSB, MSB+1, all ones, random}.
fn interesting_codes(rng: &mut Rng, e_bits: u32, m_bits: u32) -> Vec<u64> {
    let e_max = (1u64 << e_bits) - 1;
    let m_all = (1u64 << m_bits) - 1;
    let msb = 1u64 << (m_bits - 1);
    let mut v = vec![];
    for sign in [0, 1] {
        for e in [0, 1, 2, 1 + rng.below(e_max - 2), e_max - 1, e_max] {
            for m in [0, 1, msb, msb | 1, m_all, rng.below(m_all + 1), m_all - 1] {
                v.push((sign << (e_bits + m_bits)) | (e << m_bits) | m);
            }
        }
    }
    let width = 1 + e_bits + m_bits;
    v.extend((0..20_000).map(|_| rng.next() >> (64 - width)));
    v
}

fn wide_int_codes(rng: &mut Rng, bits: u32) -> Vec<u64> {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let mut v: Vec<u64> = vec![
        0,
        1,
        2,
        mask,
        mask - 1,
        mask >> 1,
        (mask >> 1) + 1,
        (mask >> 1) - 1,
    ];
    v.extend((0..20_000).map(|_| (rng.next() >> rng.below(64)) & mask));
    v
}

#[test]
fn roundtrip_integers() {
    int_roundtrip::<Int2>(0..4, true);
    int_roundtrip::<Int4>(0..16, true);
    int_roundtrip::<UInt2>(0..4, false);
    int_roundtrip::<UInt4>(0..16, false);
    int_roundtrip::<i8>(0..256, true);
    int_roundtrip::<u8>(0..256, false);
    int_roundtrip::<i16>(0..65536, true);
    int_roundtrip::<u16>(0..65536, false);
    let mut rng = Rng(7);
    int_roundtrip::<i32>(wide_int_codes(&mut rng, 32), true);
    int_roundtrip::<u32>(wide_int_codes(&mut rng, 32), false);
    int_roundtrip::<i64>(wide_int_codes(&mut rng, 64), true);
    int_roundtrip::<u64>(wide_int_codes(&mut rng, 64), false);
    // The ends, literally.
    assert_eq!(
        i64::MIN.fill_value_to_json().to_string(),
        "-9223372036854775808"
    );
    assert_eq!(
        u64::MAX.fill_value_to_json().to_string(),
        "18446744073709551615"
    );
    assert_eq!(Int4(0x08).fill_value_to_json().to_string(), "-8");
    assert_eq!(Int2::fill_value_from_json(&json("-1")).unwrap().0, 0x03);
    assert_eq!(Int4::fill_value_from_json(&json("-2")).unwrap().0, 0x0e);
    assert_eq!(u8::fill_value_from_json(&json("-0")).unwrap(), 0);
}

fn small(fmt: Fmt) -> impl Fn(u64) -> f64 {
    move |c| fmt.value(c)
}

#[test]
fn roundtrip_small_floats_every_code() {
    use crate::formula::*;
    let n = float_roundtrip::<Float4E2M1Fn>(0..16, small(FLOAT4_E2M1FN), None)
        + float_roundtrip::<Float6E2M3Fn>(0..64, small(FLOAT6_E2M3FN), None)
        + float_roundtrip::<Float6E3M2Fn>(0..64, small(FLOAT6_E3M2FN), None)
        + float_roundtrip::<Float8E3M4>(0..256, small(FLOAT8_E3M4), Some(0x78))
        + float_roundtrip::<Float8E4M3>(0..256, small(FLOAT8_E4M3), Some(0x7c))
        + float_roundtrip::<Float8E4M3B11Fnuz>(0..256, small(FLOAT8_E4M3B11FNUZ), Some(0x80))
        + float_roundtrip::<Float8E4M3Fnuz>(0..256, small(FLOAT8_E4M3FNUZ), Some(0x80))
        + float_roundtrip::<Float8E5M2>(0..256, small(FLOAT8_E5M2), Some(0x7e))
        + float_roundtrip::<Float8E5M2Fnuz>(0..256, small(FLOAT8_E5M2FNUZ), Some(0x80))
        + float_roundtrip::<Float8E8M0Fnu>(0..256, small(FLOAT8_E8M0FNU), Some(0xff));
    assert_eq!(n, 16 + 64 + 64 + 7 * 256);
    // A few encodings, literally.
    assert_eq!(Float8E4M3(0x7c).fill_value_to_json(), json("\"NaN\""));
    assert_eq!(Float8E4M3(0x7d).fill_value_to_json(), json("\"0x7d\""));
    assert_eq!(Float8E4M3(0xfc).fill_value_to_json(), json("\"0xfc\""));
    assert_eq!(Float8E4M3(0xf8).fill_value_to_json(), json("\"-Infinity\""));
    assert_eq!(Float8E4M3Fnuz(0x80).fill_value_to_json(), json("\"NaN\""));
    assert_eq!(Float8E8M0Fnu(0xff).fill_value_to_json(), json("\"NaN\""));
    assert_eq!(Float8E8M0Fnu(0x7f).fill_value_to_json().as_f64(), Some(1.0));
    assert_eq!(Float4E2M1Fn(0x8).fill_value_to_json().to_string(), "-0.0");
    // README: `"NaN"` is `"0x78"`, `"0x7c"`, `"0x7e"`, `"0x80"`, `"0xFF"`.
    for (v, want) in [
        (
            Float8E3M4::fill_value_from_json(&json("\"NaN\""))
                .unwrap()
                .0,
            0x78,
        ),
        (
            Float8E4M3::fill_value_from_json(&json("\"NaN\""))
                .unwrap()
                .0,
            0x7c,
        ),
        (
            Float8E5M2::fill_value_from_json(&json("\"NaN\""))
                .unwrap()
                .0,
            0x7e,
        ),
        (
            Float8E4M3Fnuz::fill_value_from_json(&json("\"NaN\""))
                .unwrap()
                .0,
            0x80,
        ),
        (
            Float8E4M3B11Fnuz::fill_value_from_json(&json("\"NaN\""))
                .unwrap()
                .0,
            0x80,
        ),
        (
            Float8E5M2Fnuz::fill_value_from_json(&json("\"NaN\""))
                .unwrap()
                .0,
            0x80,
        ),
        (
            Float8E8M0Fnu::fill_value_from_json(&json("\"NaN\""))
                .unwrap()
                .0,
            0xff,
        ),
        (
            Float8E8M0Fnu::fill_value_from_json(&json("\"0xFF\""))
                .unwrap()
                .0,
            0xff,
        ),
        (
            Float6E3M2Fn::fill_value_from_json(&json("\"0x3f\""))
                .unwrap()
                .0,
            0x3f,
        ),
    ] {
        assert_eq!(v, want);
    }
}

#[test]
fn roundtrip_float16_bfloat16_every_code() {
    let n = float_roundtrip::<f16>(
        0..65536,
        |c| f16::from_bits(c as u16).to_f64(),
        Some(0x7e00),
    );
    assert_eq!(n, 65536);
    let n = float_roundtrip::<bf16>(
        0..65536,
        |c| bf16::from_bits(c as u16).to_f64(),
        Some(0x7fc0),
    );
    assert_eq!(n, 65536);
    assert_eq!(
        f16::from_bits(0x7e01).fill_value_to_json(),
        json("\"0x7e01\"")
    );
    assert_eq!(
        f16::from_bits(0xfe00).fill_value_to_json(),
        json("\"0xfe00\"")
    );
    assert_eq!(
        f16::from_bits(0x7c01).fill_value_to_json(),
        json("\"0x7c01\"")
    );
    assert_eq!(
        bf16::from_bits(0x7fc0).fill_value_to_json(),
        json("\"NaN\"")
    );
}

#[test]
fn roundtrip_float32_float64() {
    let mut rng = Rng(3);
    let codes = interesting_codes(&mut rng, 8, 23);
    float_roundtrip::<f32>(
        codes,
        |c| f32::from_bits(c as u32) as f64,
        Some(0x7fc0_0000),
    );
    let codes = interesting_codes(&mut rng, 11, 52);
    float_roundtrip::<f64>(codes, f64::from_bits, Some(0x7ff8_0000_0000_0000));
    // The core spec's example, and NaN payloads.
    assert_eq!(
        f32::fill_value_to_json(f32::from_bits(0x7fc0_0000)),
        json("\"NaN\"")
    );
    assert_eq!(
        f32::fill_value_to_json(f32::from_bits(0x7fc0_0001)),
        json("\"0x7fc00001\"")
    );
    assert_eq!(
        f32::fill_value_to_json(f32::from_bits(0xffc0_0000)),
        json("\"0xffc00000\"")
    );
    assert_eq!(
        f32::fill_value_to_json(f32::from_bits(0x7f80_0001)),
        json("\"0x7f800001\"")
    );
    assert_eq!(
        f64::fill_value_to_json(f64::from_bits(0x7ff0_0000_0000_0001)),
        json("\"0x7ff0000000000001\"")
    );
    assert_eq!(
        f32::fill_value_from_json(&json("\"0x7fc00000\""))
            .unwrap()
            .to_bits(),
        0x7fc0_0000
    );
    assert_eq!(
        f32::fill_value_from_json(&json("\"NaN\""))
            .unwrap()
            .to_bits(),
        0x7fc0_0000
    );
    assert_eq!(
        f64::fill_value_from_json(&json("\"NaN\""))
            .unwrap()
            .to_bits(),
        0x7ff8_0000_0000_0000
    );
    assert_eq!(
        f32::fill_value_from_json(&json("\"0xFFC00001\""))
            .unwrap()
            .to_bits(),
        0xffc0_0001
    );
    assert_eq!(
        f32::fill_value_from_json(&json("\"0x00000001\""))
            .unwrap()
            .to_bits(),
        1
    );
    assert_eq!(
        f32::fill_value_from_json(&json("\"-Infinity\"")).unwrap(),
        f32::NEG_INFINITY
    );
    assert_eq!(
        f64::fill_value_from_json(&json("-0.0")).unwrap().to_bits(),
        (-0.0f64).to_bits()
    );
    assert_eq!(
        f64::fill_value_from_json(&json("-0")).unwrap().to_bits(),
        (-0.0f64).to_bits()
    );
    assert_eq!(
        f32::fill_value_from_json(&json("1e39")).unwrap(),
        f32::INFINITY
    );
    assert_eq!(
        f16::fill_value_from_json(&json("65520")).unwrap(),
        f16::INFINITY
    );
    assert_eq!(
        f16::fill_value_from_json(&json("-65519.99")).unwrap(),
        -f16::MAX
    );
}

/// The float encoding of components, expected independently.
fn complex_roundtrip<T: Real, C: DType>(
    pairs: impl IntoIterator<Item = (u64, u64)>,
    wrap: impl Fn(Complex<T>) -> C,
    unwrap: impl Fn(C) -> Complex<T>,
    value_of: impl Fn(u64) -> f64,
    canonical_nan: Option<u64>,
) {
    for (re, im) in pairs {
        let z = wrap(Complex::new(T::from_bits(re), T::from_bits(im)));
        let (j, back) = through_text(z);
        let Value::Array(a) = &j else {
            panic!("{}: {j} is not an array", C::NAME)
        };
        assert_eq!(a.len(), 2, "{}: {j}", C::NAME);
        for (k, code) in [(0, re), (1, im)] {
            let want = float_json_expect(code, value_of(code), canonical_nan, T::SIZE);
            check_float_json(C::NAME, code, &a[k], &want);
        }
        let back = unwrap(back);
        assert_eq!(
            (back.re.to_bits(), back.im.to_bits()),
            (re, im),
            "{}: {j}",
            C::NAME
        );
    }
}

fn all_pairs(codes: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..codes).flat_map(move |re| (0..codes).map(move |im| (re, im)))
}

/// Pairs of [`interesting_codes`], each with a random partner.
fn random_pairs(rng: &mut Rng, e_bits: u32, m_bits: u32) -> Vec<(u64, u64)> {
    let codes = interesting_codes(rng, e_bits, m_bits);
    let n = codes.len() as u64;
    codes
        .iter()
        .map(|&c| (c, codes[rng.below(n) as usize]))
        .collect()
}

#[test]
fn roundtrip_complex() {
    use crate::formula::*;
    macro_rules! small_complex {
        ($t:ty, $fmt:expr, $nan:expr) => {
            complex_roundtrip::<$t, Complex<$t>>(
                all_pairs($fmt.codes()),
                |z| z,
                |z| z,
                small($fmt),
                $nan,
            )
        };
    }
    small_complex!(Float4E2M1Fn, FLOAT4_E2M1FN, None);
    small_complex!(Float6E2M3Fn, FLOAT6_E2M3FN, None);
    small_complex!(Float6E3M2Fn, FLOAT6_E3M2FN, None);
    small_complex!(Float8E3M4, FLOAT8_E3M4, Some(0x78));
    small_complex!(Float8E4M3, FLOAT8_E4M3, Some(0x7c));
    small_complex!(Float8E4M3B11Fnuz, FLOAT8_E4M3B11FNUZ, Some(0x80));
    small_complex!(Float8E4M3Fnuz, FLOAT8_E4M3FNUZ, Some(0x80));
    small_complex!(Float8E5M2, FLOAT8_E5M2, Some(0x7e));
    small_complex!(Float8E5M2Fnuz, FLOAT8_E5M2FNUZ, Some(0x80));
    small_complex!(Float8E8M0Fnu, FLOAT8_E8M0FNU, Some(0xff));

    let mut rng = Rng(5);
    let f16v = |c: u64| f16::from_bits(c as u16).to_f64();
    let bf16v = |c: u64| bf16::from_bits(c as u16).to_f64();
    let f32v = |c: u64| f32::from_bits(c as u32) as f64;
    let p = random_pairs(&mut rng, 5, 10);
    complex_roundtrip::<f16, Complex<f16>>(p, |z| z, |z| z, f16v, Some(0x7e00));
    let p = random_pairs(&mut rng, 8, 7);
    complex_roundtrip::<bf16, Complex<bf16>>(p, |z| z, |z| z, bf16v, Some(0x7fc0));
    let p = random_pairs(&mut rng, 8, 23);
    complex_roundtrip::<f32, Complex<f32>>(p.clone(), |z| z, |z| z, f32v, Some(0x7fc0_0000));
    complex_roundtrip::<f32, ComplexFloat32>(p, ComplexFloat32, |z| z.0, f32v, Some(0x7fc0_0000));
    let p = random_pairs(&mut rng, 11, 52);
    let nan64 = Some(0x7ff8_0000_0000_0000);
    complex_roundtrip::<f64, Complex<f64>>(p.clone(), |z| z, |z| z, f64::from_bits, nan64);
    complex_roundtrip::<f64, ComplexFloat64>(p, ComplexFloat64, |z| z.0, f64::from_bits, nan64);

    // The core spec's examples.
    let z = Complex::<f64>::fill_value_from_json(&json("[1, 2]")).unwrap();
    assert_eq!((z.re, z.im), (1.0, 2.0));
    let z = Complex::<f32>::fill_value_from_json(&json("[\"-Infinity\", \"NaN\"]")).unwrap();
    assert_eq!((z.re, z.im.to_bits()), (f32::NEG_INFINITY, 0x7fc0_0000));
    let z = Complex::<Float8E4M3Fnuz>::fill_value_from_json(&json("[\"0x80\", -0.0]")).unwrap();
    assert_eq!((z.re.0, z.im.0), (0x80, 0x00));
}

#[test]
fn roundtrip_datetime() {
    fn check<T: DType>(wrap: impl Fn(i64) -> T, unwrap: impl Fn(T) -> i64) {
        let mut rng = Rng(17);
        let mut xs = vec![0, 1, -1, i64::MAX, i64::MIN, i64::MIN + 1];
        xs.extend(
            (0..20_000)
                .map(|_| (rng.next() >> rng.below(64)) as i64 * if rng.coin() { -1 } else { 1 }),
        );
        for x in xs {
            let (j, back) = through_text(wrap(x));
            if x == i64::MIN {
                assert_eq!(j, json("\"NaT\""), "{}", T::NAME);
            } else {
                assert_eq!(j.to_string(), x.to_string(), "{}", T::NAME);
            }
            assert_eq!(unwrap(back), x, "{}: {j}", T::NAME);
        }
        // "NaT" and its integer spelling are the same value.
        assert_eq!(
            unwrap(T::fill_value_from_json(&json("\"NaT\"")).unwrap()),
            i64::MIN
        );
        assert_eq!(
            unwrap(T::fill_value_from_json(&json("-9223372036854775808")).unwrap()),
            i64::MIN
        );
        assert_eq!(
            T::fill_value_from_json(&json("-9223372036854775808")).unwrap(),
            T::fill_value_from_json(&json("\"NaT\"")).unwrap()
        );
        for bad in [
            "\"nat\"",
            "\"NaN\"",
            "1.5",
            "1e3",
            "true",
            "null",
            "9223372036854775808",
            "-9223372036854775809",
            "[1]",
            "\"0x0000000000000000\"",
        ] {
            assert_invalid::<T>(&json(bad));
        }
    }
    check(DateTime64, |x| x.0);
    check(TimeDelta64, |x| x.0);
}

// ---------------------------------------------------------------------------------------
// Rejections.

#[test]
#[cfg_attr(
    not(feature = "exact-json"),
    ignore = "needs numbers' decimal text: --features exact-json (.ci/run runs it)"
)]
fn rejections_named_in_the_spec_readings() {
    // No NaN, no Inf in the fn types.
    assert_not_representable::<Float4E2M1Fn>(&json("\"NaN\""));
    assert_not_representable::<Float4E2M1Fn>(&json("\"Infinity\""));
    assert_not_representable::<Float6E2M3Fn>(&json("\"-Infinity\""));
    assert_not_representable::<Float6E3M2Fn>(&json("\"NaN\""));
    // The fnuz types and e8m0 have no infinity.
    for inf in ["\"Infinity\"", "\"-Infinity\""] {
        assert_not_representable::<Float8E4M3Fnuz>(&json(inf));
        assert_not_representable::<Float8E4M3B11Fnuz>(&json(inf));
        assert_not_representable::<Float8E5M2Fnuz>(&json(inf));
        assert_not_representable::<Float8E8M0Fnu>(&json(inf));
    }
    // Integers: in range, no fraction or exponent part.
    assert_not_representable::<u8>(&json("256"));
    assert_not_representable::<u8>(&json("-1"));
    assert_not_representable::<i8>(&json("128"));
    assert_not_representable::<Int4>(&json("8"));
    assert_not_representable::<Int4>(&json("-9"));
    assert_not_representable::<UInt2>(&json("4"));
    assert_not_representable::<u64>(&json("18446744073709551616"));
    assert_not_representable::<i64>(&json("100000000000000000000000000000000000000000000"));
    assert_invalid::<i32>(&json("1.5"));
    assert_invalid::<i32>(&json("1.0"));
    assert_invalid::<i32>(&json("1e2"));
    assert_invalid::<u16>(&json("1E2"));
    assert_invalid::<u8>(&json("\"1\""));
    assert_invalid::<u8>(&json("\"0x01\""));
    assert_invalid::<Int2>(&json("\"NaN\""));
    // Hex: exactly 2 × itemsize digits, nothing beyond the type's bits.
    assert_bad_hex::<f32>(&json("\"0x7fc\""));
    assert_bad_hex::<f32>(&json("\"0x7fc0000\""));
    assert_bad_hex::<f32>(&json("\"0x07fc00000\""));
    assert_bad_hex::<f16>(&json("\"0x7fc00000\""));
    assert_bad_hex::<f64>(&json("\"0x7ff8\""));
    assert_bad_hex::<f32>(&json("\"0x7fcg0000\""));
    assert_bad_hex::<f32>(&json("\"0x\""));
    assert_bad_hex::<Float8E4M3>(&json("\"0x7\""));
    assert_bad_hex::<Float4E2M1Fn>(&json("\"0x10\""));
    assert_bad_hex::<Float6E2M3Fn>(&json("\"0x40\""));
    // Spellings the encoding does not have.
    for t in [
        "\"nan\"",
        "\"+Infinity\"",
        "\"infinity\"",
        "\"inf\"",
        "\"-NaN\"",
        "\"0X7FC00000\"",
        "\"1.5\"",
        "\"\"",
        "true",
        "false",
        "null",
        "{}",
    ] {
        assert_invalid::<f32>(&json(t));
        assert_invalid::<f16>(&json(t));
        assert_invalid::<Float8E4M3>(&json(t));
    }
    assert_invalid::<Float8E8M0Fnu>(&json("true"));
    // Arrays are for complex types only.
    for t in ["[1]", "[1, 2]", "[]", "[\"NaN\", 0]"] {
        assert_invalid::<f32>(&json(t));
        assert_invalid::<f64>(&json(t));
        assert_invalid::<Float8E5M2>(&json(t));
        assert_invalid::<i32>(&json(t));
        assert_invalid::<u8>(&json(t));
    }
    // Complex: exactly two components, each a valid float encoding.
    for t in [
        "[]",
        "[1]",
        "[1, 2, 3]",
        "1.0",
        "\"NaN\"",
        "{\"re\": 1, \"im\": 2}",
        "null",
        "[[1, 2]]",
    ] {
        assert_invalid::<Complex<f32>>(&json(t));
        assert_invalid::<Complex<f64>>(&json(t));
        assert_invalid::<ComplexFloat64>(&json(t));
        assert_invalid::<Complex<Float8E4M3>>(&json(t));
    }
    for t in [
        "[\"nan\", 0]",
        "[0, true]",
        "[0, null]",
        "[[1], 2]",
        "[0, \"0x7fc\"]",
    ] {
        assert!(
            Complex::<f32>::fill_value_from_json(&json(t)).is_err(),
            "{t}"
        );
    }
    assert!(Complex::<Float4E2M1Fn>::fill_value_from_json(&json("[0, \"NaN\"]")).is_err());
    assert!(Complex::<Float8E4M3Fnuz>::fill_value_from_json(&json("[\"Infinity\", 0]")).is_err());
    // Out of range numbers in types without Inf; negatives and zero in e8m0.
    assert_not_representable::<Float4E2M1Fn>(&json("7"));
    assert_not_representable::<Float4E2M1Fn>(&json("-1e10"));
    assert_not_representable::<Float8E4M3Fnuz>(&json("248"));
    assert_not_representable::<Float8E8M0Fnu>(&json("0"));
    assert_not_representable::<Float8E8M0Fnu>(&json("-0.0"));
    assert_not_representable::<Float8E8M0Fnu>(&json("-1"));
    assert_not_representable::<Float8E8M0Fnu>(&json("1e39"));
    assert_not_representable::<Float8E8M0Fnu>(&json("\"-Infinity\""));
}

/// The error messages name the type and the offending JSON.
#[test]
fn errors_display() {
    let e = err::<u8>(&json("256"));
    assert_eq!(e.to_string(), "uint8: 256 is not representable");
    let e = err::<f32>(&json("\"0x7fc\""));
    let s = e.to_string();
    assert!(
        s.contains("float32") && s.contains("0x7fc") && s.contains('8'),
        "{s}"
    );
    let e = err::<Float4E2M1Fn>(&json("\"NaN\""));
    assert!(e.to_string().starts_with("float4_e2m1fn:"), "{e}");
}

/// Issue 14, finding 1: a JSON number with a million digits is parsed in time linear in its
/// text (it took 134 s when every digit went into a big integer), and still rounded once:
/// only the first digits and whether any later digit is non-zero decide the rounding.
#[test]
#[cfg_attr(
    not(feature = "exact-json"),
    ignore = "needs numbers' decimal text: --features exact-json (.ci/run runs it)"
)]
fn million_digit_numbers_round_once_in_linear_time() {
    let zeros = "0".repeat(1_000_000);
    // 1 + 2^-53, the tie between 1 and 1 + 2^-52, written exactly.
    let tie = "1.00000000000000011102230246251565404236316680908203125";
    // The tie itself rounds to even (1.0); anything above it, however far down, rounds up.
    let exact_tie = json(&format!("{tie}{zeros}"));
    let above_tie = json(&format!("{tie}{zeros}1"));
    assert_eq!(f64::fill_value_from_json(&exact_tie).unwrap(), 1.0);
    assert_eq!(
        f64::fill_value_from_json(&above_tie).unwrap(),
        1.0 + f64::EPSILON
    );
    // A million-digit integer is out of range of every integer type, and Inf-free floats.
    let huge = json(&format!("1{zeros}"));
    assert!(i64::fill_value_from_json(&huge).is_err());
    assert_eq!(f32::fill_value_from_json(&huge).unwrap(), f32::INFINITY);
    // A million leading zeros after the point: the value underflows to zero.
    let tiny = json(&format!("0.{zeros}1"));
    assert_eq!(f64::fill_value_from_json(&tiny).unwrap().to_bits(), 0);
}
