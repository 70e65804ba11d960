//! Property tests of the conversion core (proptest):
//!
//! 1. `float64 -> T -> float64` is the identity, with status `Exact` both ways and under
//!    every option, for every value representable in `T` (codes drawn at random; for int64
//!    and uint64 the drawn value is first truncated to 53 significant bits so that float64
//!    holds it). The expected codes come from the reference decoder in `tests/it/common`.
//! 2. `cast_slice` equals `cast` element by element: the same codes where it succeeds, and
//!    the first element whose status is an error as its failure (index and status).
//!
//! Cases per type: 512, or `PROPTEST_CASES`.

use crate::common::check::format_of;
use crate::common::reference::{Format, Mag, Val, format};
use crate::common::types::{Visit, for_each_real};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use zquant::{CastOptions, OutOfRange, Real, Rounding, Status};
use zquant::{cast, cast_slice};

fn runner() -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(512);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

fn options() -> impl Strategy<Value = CastOptions> {
    (0..5usize, 0..3usize).prop_map(|(r, o)| {
        CastOptions::new(
            Rounding::ALL[r],
            [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap][o],
        )
    })
}

/// A code of `t` whose value float64 holds exactly: the code itself, or for 64-bit integers
/// the value truncated to 53 significant bits.
fn representable(t: &Format, code: u64) -> u64 {
    let code = code & t.mask();
    match t.decode(code) {
        Val::Num { neg, mag } if !mag.is_zero() => {
            let bits = 128 - mag.m.leading_zeros();
            if bits <= 53 {
                return code;
            }
            let k = bits - 53;
            let cut = Mag::new(mag.m >> k << k, mag.e);
            t.code_of(neg, &cut)
                .expect("truncation toward zero stays in range")
        }
        _ => code,
    }
}

/// The float64 code of a value (canonical NaN for NaN).
fn f64_code(v: &Val) -> u64 {
    let f = format("float64");
    match *v {
        Val::Nan => 0x7ff8_0000_0000_0000,
        Val::Inf { neg } => f.inf_code().unwrap() | if neg { f.sign_bit() } else { 0 },
        Val::Num { neg, mag } => f
            .code_of(neg, &mag)
            .unwrap_or_else(|| panic!("{v:?} is not a float64")),
    }
}

struct RoundTrip;

impl Visit for RoundTrip {
    fn visit<T: Real>(&mut self) {
        let tf = format_of::<T>();
        runner()
            .run(&(any::<u64>(), options()), |(raw, opts)| {
                let code = representable(&tf, raw);
                let v = tf.decode(code);
                let x = f64::from_bits(f64_code(&v));
                // float64 -> T: exact, the same code (any NaN for NaN).
                let (t, st) = cast::<f64, T>(x, opts);
                prop_assert_eq!(st, Status::Exact, "{} {:#x} {:?}", T::NAME, code, opts);
                if v == Val::Nan {
                    prop_assert_eq!(tf.decode(t.to_bits()), Val::Nan);
                } else {
                    prop_assert_eq!(t.to_bits(), code, "{} {:?}", T::NAME, opts);
                }
                // T -> float64: exact, the same float64 (any NaN for NaN).
                let (y, st) = cast::<T, f64>(t, opts);
                prop_assert_eq!(st, Status::Exact, "{} {:#x} back {:?}", T::NAME, code, opts);
                if v == Val::Nan {
                    prop_assert!(y.is_nan());
                } else {
                    prop_assert_eq!(y.to_bits(), x.to_bits(), "{} {:#x} back", T::NAME, code);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("float64 -> {} -> float64: {e}", T::NAME));
    }
}

#[test]
fn float64_round_trip_through_every_type() {
    for_each_real(&mut RoundTrip);
}

/// float64 inputs that hit every path: any bit pattern, specials, integers, small values.
fn f64_input() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => any::<u64>().prop_map(f64::from_bits),
        2 => prop::sample::select(vec![
            0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
            f64::MAX, f64::MIN, f64::MIN_POSITIVE, 5e-324, 0.5, -0.5, 1.5, 2.5,
        ]),
        3 => (-70000i64..70000).prop_map(|i| i as f64 / 4.0),
        2 => (-40i32..40, any::<u64>()).prop_map(|(e, m)| {
            f64::from_bits((((1023 + e) as u64) << 52) | (m >> 12)) * if m & 1 == 0 { 1.0 } else { -1.0 }
        }),
    ]
}

struct SliceEqualsCast;

impl Visit for SliceEqualsCast {
    fn visit<D: Real>(&mut self) {
        runner()
            .run(
                &(prop::collection::vec(f64_input(), 0..64), options()),
                |(src, opts)| {
                    let each: Vec<(D, Status)> =
                        src.iter().map(|x| cast::<f64, D>(*x, opts)).collect();
                    let first = each.iter().position(|(_, st)| st.is_error());
                    let mut dst = vec![D::default(); src.len()];
                    let r = cast_slice::<f64, D>(&src, &mut dst, opts);
                    match (r, first) {
                        (Ok(()), None) => {
                            for (i, (d, (e, _))) in dst.iter().zip(&each).enumerate() {
                                prop_assert!(d.same_as(*e), "{} element {}", D::NAME, i);
                            }
                        }
                        (Err(f), Some(i)) => {
                            prop_assert_eq!(f.index, i);
                            prop_assert_eq!(f.status, each[i].1);
                            // Elements before the failure are written.
                            for (j, (d, (e, _))) in dst[..i].iter().zip(&each).enumerate() {
                                prop_assert!(d.same_as(*e), "{} element {}", D::NAME, j);
                            }
                        }
                        (r, first) => {
                            prop_assert!(
                                false,
                                "{}: cast_slice {:?}, cast fails first at {:?}",
                                D::NAME,
                                r,
                                first
                            )
                        }
                    }
                    Ok(())
                },
            )
            .unwrap_or_else(|e| panic!("cast_slice float64 -> {}: {e}", D::NAME));
    }
}

#[test]
fn cast_slice_equals_elementwise_cast() {
    for_each_real(&mut SliceEqualsCast);
}

proptest! {
    /// The reference's exact comparison agrees with float64's ordering on finite values (a
    /// self-check of the reference, not of zquant).
    #[test]
    fn reference_order_matches_f64(a in any::<u64>(), b in any::<u64>()) {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        prop_assume!(x.is_finite() && y.is_finite());
        let f = format("float64");
        let (Val::Num { mag: ma, .. }, Val::Num { mag: mb, .. }) = (f.decode(a), f.decode(b)) else {
            unreachable!()
        };
        prop_assert_eq!(ma.cmp(&mb), x.abs().partial_cmp(&y.abs()).unwrap());
    }
}
