//! Each codec's semantics checked with exact arithmetic written here, independently of the
//! conformance vectors and of the crate's own conversion core.

use half::{bf16, f16};
use ndarray::arr1;
use zquant::MapEntries;
use zquant::dtype::{
    Complex, DateTime64, Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4, Float8E4M3,
    Float8E4M3B11Fnuz, Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz, Float8E8M0Fnu, Int2, Int4,
    TimeDelta64, UInt2, UInt4,
};
use zquant::{
    ArrayCodec, ArrayCodecExt, BitRound, CastOptions, CastValue, DType, MetadataError, OutOfRange,
    Real, Rounding, ScalarMap, ScaleOffset,
};
use zquant::{ElementError, Rule};

use crate::common::XorShift as Rng;

fn enc1<C: ArrayCodec>(c: &C, x: C::In) -> Result<C::Out, ElementError> {
    let mut o = [C::Out::default()];
    c.encode_slice(&[x], &mut o).map(|()| o[0])
}

fn dec1<C: ArrayCodec>(c: &C, y: C::Out) -> Result<C::In, ElementError> {
    let mut o = [C::In::default()];
    c.decode_slice(&[y], &mut o).map(|()| o[0])
}

// =======================================================================================
// scale_offset on integers: every intermediate checked, exact division
// =======================================================================================

/// Signed value of a code of an integer type of `bits` bits.
pub(crate) fn int_of(code: u64, bits: u32, signed: bool) -> i128 {
    let code = code & ((1u128 << bits) - 1) as u64;
    if signed && code >> (bits - 1) & 1 == 1 {
        code as i128 - (1i128 << bits)
    } else {
        code as i128
    }
}

pub(crate) fn int_range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// `(x - o) * s`, every step in range; `None` when a step is not representable.
pub(crate) fn ref_int_encode(x: i128, o: i128, s: i128, (lo, hi): (i128, i128)) -> Option<i128> {
    let fits = |v: i128| (lo..=hi).contains(&v).then_some(v);
    fits(fits(x - o)?.checked_mul(s)?)
}

/// `x / s + o`, the division exact, every step in range.
pub(crate) fn ref_int_decode(x: i128, o: i128, s: i128, (lo, hi): (i128, i128)) -> Option<i128> {
    let fits = |v: i128| (lo..=hi).contains(&v).then_some(v);
    if x % s != 0 {
        return None;
    }
    fits(fits(x / s)? + o)
}

/// Every x and offset, with every scale (types of at most 4 bits) or the scales that
/// matter most (8 bits: small ones, and the ends of the range).
fn exhaustive_int_scale_offset<T: Real>(signed: bool) {
    let bits = T::BITS;
    let range = int_range(bits, signed);
    let n = 1u64 << bits;
    let xs: Vec<T> = (0..n).map(T::from_bits).collect();
    let scales: Vec<u64> = if bits <= 4 {
        (0..n).collect()
    } else {
        let mask = n - 1;
        [
            0i64, 1, 2, 3, 4, 5, 7, 16, 63, 64, 100, 127, 128, -1, -2, -3, -64, -127, -128, 255,
        ]
        .iter()
        .map(|&v| v as u64 & mask)
        .collect()
    };
    for o in 0..n {
        for &s in &scales {
            let (ov, sv) = (int_of(o, bits, signed), int_of(s, bits, signed));
            let c = ScaleOffset::<T>::new(T::from_bits(o), T::from_bits(s));
            if sv == 0 {
                assert!(c.is_err());
                continue;
            }
            let c = c.unwrap();
            for &x in &xs {
                let xv = int_of(x.to_bits(), bits, signed);
                let got = enc1(&c, x).map(|y| int_of(y.to_bits(), bits, signed));
                match (ref_int_encode(xv, ov, sv, range), got) {
                    (Some(w), Ok(g)) => assert_eq!(w, g, "{} ({xv} - {ov}) * {sv}", T::NAME),
                    (None, Err(e)) => assert_eq!(e.rule, Rule::NotRepresentable),
                    (w, g) => panic!("{} ({xv} - {ov}) * {sv}: want {w:?}, got {g:?}", T::NAME),
                }
                let got = dec1(&c, x).map(|y| int_of(y.to_bits(), bits, signed));
                match (ref_int_decode(xv, ov, sv, range), got) {
                    (Some(w), Ok(g)) => assert_eq!(w, g, "{} {xv} / {sv} + {ov}", T::NAME),
                    (None, Err(e)) => {
                        let rule = if xv % sv != 0 {
                            Rule::InexactDivision
                        } else {
                            Rule::NotRepresentable
                        };
                        assert_eq!(e.rule, rule, "{} {xv} / {sv} + {ov}", T::NAME);
                    }
                    (w, g) => panic!("{} {xv} / {sv} + {ov}: want {w:?}, got {g:?}", T::NAME),
                }
            }
        }
    }
}

#[test]
fn scale_offset_integers_exhaustive() {
    exhaustive_int_scale_offset::<i8>(true);
    exhaustive_int_scale_offset::<u8>(false);
    exhaustive_int_scale_offset::<Int4>(true);
    exhaustive_int_scale_offset::<UInt4>(false);
    exhaustive_int_scale_offset::<Int2>(true);
    exhaustive_int_scale_offset::<UInt2>(false);
}

/// Every code of a 16-bit type in one slice (the vectorized kernel, not one element at a
/// time), for offsets and scales at the ends of the range: the output equals the exact
/// reference on every element, or the error names the first element the reference rejects.
/// In place too, where the kernel works in chunks and a failure in a later chunk must still
/// report its index in the whole slice.
fn whole_slice_int_scale_offset<T: Real>(signed: bool) {
    let bits = T::BITS;
    let range = int_range(bits, signed);
    let xs: Vec<T> = (0..1u64 << bits).map(T::from_bits).collect();
    let pairs: [(i64, i64); 9] = [
        (0, 1),
        (0, -1),
        (1, 2),
        (-3, 3),
        (100, -7),
        (32767, 1),
        (-32768, -1),
        (0, 255),
        (-1, 32767),
    ];
    for (o, s) in pairs {
        let (o, s) = (o as u64 & 0xffff, s as u64 & 0xffff);
        let (ov, sv) = (int_of(o, bits, signed), int_of(s, bits, signed));
        let c = ScaleOffset::<T>::new(T::from_bits(o), T::from_bits(s)).unwrap();
        for decode in [false, true] {
            let want: Vec<Option<i128>> = xs
                .iter()
                .map(|x| {
                    let xv = int_of(x.to_bits(), bits, signed);
                    if decode {
                        ref_int_decode(xv, ov, sv, range)
                    } else {
                        ref_int_encode(xv, ov, sv, range)
                    }
                })
                .collect();
            let first_bad = want.iter().position(Option::is_none);
            let mut out = vec![T::default(); xs.len()];
            let got = if decode {
                c.decode_slice(&xs, &mut out)
            } else {
                c.encode_slice(&xs, &mut out)
            };
            let mut in_place = xs.clone();
            let got_in_place = if decode {
                c.decode_slice_in_place(&mut in_place)
            } else {
                c.encode_slice_in_place(&mut in_place)
            };
            let what = format!("{} o={ov} s={sv} decode={decode}", T::NAME);
            match first_bad {
                None => {
                    got.unwrap();
                    got_in_place.unwrap();
                    for (i, w) in want.iter().enumerate() {
                        let w = w.unwrap();
                        assert_eq!(int_of(out[i].to_bits(), bits, signed), w, "{what} at {i}");
                        assert_eq!(int_of(in_place[i].to_bits(), bits, signed), w, "{what}");
                    }
                }
                Some(i) => {
                    assert_eq!(got.unwrap_err().index, i, "{what}");
                    assert_eq!(got_in_place.unwrap_err().index, i, "{what} in place");
                    // In place: everything before the failing element is already done,
                    // the rest untouched.
                    for (j, w) in want[..i].iter().enumerate() {
                        let g = int_of(in_place[j].to_bits(), bits, signed);
                        assert_eq!(Some(g), *w, "{what} in place at {j}");
                    }
                    assert_eq!(in_place[i..], xs[i..], "{what} in place, after {i}");
                }
            }
        }
    }
}

#[test]
fn scale_offset_16_bit_whole_slices() {
    whole_slice_int_scale_offset::<i16>(true);
    whole_slice_int_scale_offset::<u16>(false);
}

fn sampled_int_scale_offset<T: Real>(signed: bool, seed: u64) {
    let bits = T::BITS;
    let range = int_range(bits, signed);
    let mut rng = Rng(seed);
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    // Random codes, small values and values near the ends of the range.
    let mut pick = move || {
        let r = rng.next();
        let v = match r % 4 {
            0 => r >> 2,
            1 => (r >> 8) % 16,
            2 => ((r >> 8) % 16).wrapping_neg(),
            _ => (mask >> u32::from(signed)).wrapping_sub((r >> 8) % 4),
        };
        v & mask
    };
    for _ in 0..20_000 {
        let (x, o, s) = (pick(), pick(), pick());
        let (xv, ov, sv) = (
            int_of(x, bits, signed),
            int_of(o, bits, signed),
            int_of(s, bits, signed),
        );
        if sv == 0 {
            continue;
        }
        let c = ScaleOffset::<T>::new(T::from_bits(o), T::from_bits(s)).unwrap();
        let got = enc1(&c, T::from_bits(x))
            .ok()
            .map(|y| int_of(y.to_bits(), bits, signed));
        assert_eq!(
            got,
            ref_int_encode(xv, ov, sv, range),
            "{} ({xv} - {ov}) * {sv}",
            T::NAME
        );
        let got = dec1(&c, T::from_bits(x))
            .ok()
            .map(|y| int_of(y.to_bits(), bits, signed));
        assert_eq!(
            got,
            ref_int_decode(xv, ov, sv, range),
            "{} {xv} / {sv} + {ov}",
            T::NAME
        );
    }
}

#[test]
fn scale_offset_integers_sampled() {
    sampled_int_scale_offset::<i16>(true, 1);
    sampled_int_scale_offset::<u16>(false, 2);
    sampled_int_scale_offset::<i32>(true, 3);
    sampled_int_scale_offset::<u32>(false, 4);
    sampled_int_scale_offset::<i64>(true, 5);
    sampled_int_scale_offset::<u64>(false, 6);
}

#[test]
fn scale_offset_integer_intermediates() {
    // 127 - (-1) = 128 does not fit int8, although 128 * -1 = -128 would.
    let c = ScaleOffset::<i8>::new(-1, -1).unwrap();
    let e = enc1(&c, 127).unwrap_err();
    assert_eq!((e.rule, e.value.as_str()), (Rule::NotRepresentable, "127"));
    assert_eq!(enc1(&c, 126), Ok(-127));
    // Decoding: -128 / -1 = 128 does not fit, although 128 + (-1) = 127 would.
    assert_eq!(dec1(&c, -128).unwrap_err().rule, Rule::NotRepresentable);
    // Exact division only.
    let c = ScaleOffset::<i8>::new(0, 3).unwrap();
    assert_eq!(dec1(&c, 7).unwrap_err().rule, Rule::InexactDivision);
    assert_eq!(dec1(&c, -6), Ok(-2));
    // uint8: 5 - 10 is negative even though (5 - 10) * ... could never come back.
    let c = ScaleOffset::<u8>::new(10, 1).unwrap();
    assert_eq!(enc1(&c, 5).unwrap_err().rule, Rule::NotRepresentable);
    // int64 edges.
    let c = ScaleOffset::<i64>::new(0, 2).unwrap();
    assert!(enc1(&c, (1 << 62) + 1).is_err());
    assert_eq!(enc1(&c, (1 << 62) - 1), Ok(i64::MAX - 1));
    let c = ScaleOffset::<i64>::new(i64::MIN / 2, 1).unwrap();
    assert!(enc1(&c, i64::MAX).is_err());
    let c = ScaleOffset::<i64>::new(1, 1).unwrap();
    assert!(dec1(&c, i64::MAX).is_err());
    let c = ScaleOffset::<u64>::new(0, u64::MAX).unwrap();
    assert_eq!(enc1(&c, 1), Ok(u64::MAX));
    assert!(enc1(&c, 2).is_err());
    assert_eq!(dec1(&c, u64::MAX), Ok(1));
    // Fill values follow the element rules.
    let c = ScaleOffset::<i8>::new(-1, 1).unwrap();
    assert!(matches!(
        c.encode_fill_value(127),
        Err(MetadataError::FillValueTransform {
            codec: "scale_offset",
            ..
        })
    ));
    assert_eq!(c.encode_fill_value(126), Ok(127));
}

// =======================================================================================
// scale_offset on floats: one rounding per operation, overflow to ±Inf or an error
// =======================================================================================

/// An IEEE-like binary format (all-ones exponent for Inf/NaN): exponent and mantissa bits,
/// bias.
#[derive(Clone, Copy, Debug)]
struct Fmt {
    ebits: u32,
    mbits: u32,
    bias: i32,
}

const F16: Fmt = Fmt {
    ebits: 5,
    mbits: 10,
    bias: 15,
};
const E4M3: Fmt = Fmt {
    ebits: 4,
    mbits: 3,
    bias: 7,
};
const E5M2: Fmt = Fmt {
    ebits: 5,
    mbits: 2,
    bias: 15,
};
const E3M4: Fmt = Fmt {
    ebits: 3,
    mbits: 4,
    bias: 3,
};

/// A value of the format as an exact rational: sign, `num / den × 2^-shift`; or infinity.
#[derive(Clone, Copy, Debug)]
enum Val {
    Fin { neg: bool, units: u128 },
    Inf { neg: bool },
}

impl Fmt {
    /// The exponent of the smallest subnormal: every finite value is `k × 2^umin`.
    fn umin(self) -> i32 {
        1 - self.bias - self.mbits as i32
    }
    fn sign_bit(self) -> u64 {
        1 << (self.ebits + self.mbits)
    }
    fn decode(self, bits: u64) -> Option<Val> {
        let neg = bits & self.sign_bit() != 0;
        let e = (bits >> self.mbits) & ((1 << self.ebits) - 1);
        let m = bits & ((1 << self.mbits) - 1);
        if e == (1 << self.ebits) - 1 {
            return (m == 0).then_some(Val::Inf { neg });
        }
        let units = if e == 0 {
            m as u128
        } else {
            ((m | 1 << self.mbits) as u128) << (e - 1)
        };
        Some(Val::Fin { neg, units })
    }
    fn inf(self, neg: bool) -> u64 {
        (((1 << self.ebits) - 1) << self.mbits) | if neg { self.sign_bit() } else { 0 }
    }
    /// Round `num / den × 2^-shift` (signed by `neg`) once, to nearest-even; overflow to
    /// ±Inf (IEEE: the rounded value with an unbounded exponent exceeds the largest finite).
    fn round(self, neg: bool, num: u128, den: u128, shift: i32) -> u64 {
        let sign = if neg { self.sign_bit() } else { 0 };
        if num == 0 {
            return sign;
        }
        let bl = |v: u128| 128 - v.leading_zeros() as i32;
        // floor(log2(num / den))
        let d = bl(num) - bl(den);
        let ge = if d >= 0 {
            num >= den << d
        } else {
            num << -d >= den
        };
        let e = if ge { d } else { d - 1 } - shift;
        let u = (e - self.mbits as i32).max(self.umin());
        // q = num / den × 2^(-shift - u)
        let t = -shift - u;
        let (n, dd) = if t >= 0 {
            assert!(num.leading_zeros() as i32 > t);
            (num << t, den)
        } else {
            assert!(den.leading_zeros() as i32 > -t);
            (num, den << -t)
        };
        let (mut q, r) = (n / dd, n % dd);
        if 2 * r > dd || (2 * r == dd && q & 1 == 1) {
            q += 1;
        }
        let mut u = u;
        if q == 1 << (self.mbits + 1) {
            q >>= 1;
            u += 1;
        }
        if q < 1 << self.mbits {
            // Subnormal (or zero after rounding).
            assert_eq!(u, self.umin());
            return sign | q as u64;
        }
        let biased = (u - self.umin() + 1) as u64;
        if biased >= (1 << self.ebits) - 1 {
            return self.inf(neg);
        }
        sign | biased << self.mbits | (q as u64 - (1 << self.mbits))
    }
    /// `a + b` (a `b` with its sign flipped gives `a - b`), rounded once.
    fn add(self, a: Val, b: Val) -> u64 {
        match (a, b) {
            (Val::Inf { neg }, _) | (_, Val::Inf { neg }) => self.inf(neg),
            (Val::Fin { neg: na, units: ua }, Val::Fin { neg: nb, units: ub }) => {
                let (sa, sb) = (
                    if na { -(ua as i128) } else { ua as i128 },
                    if nb { -(ub as i128) } else { ub as i128 },
                );
                let s = sa + sb;
                // An exact zero sum is +0, unless both operands are -0.
                let neg = if s == 0 { na && nb } else { s < 0 };
                self.round(neg, s.unsigned_abs(), 1, -self.umin())
            }
        }
    }
    fn mul(self, a: Val, b: Val) -> u64 {
        match (a, b) {
            (Val::Inf { neg: na }, Val::Fin { neg: nb, .. })
            | (Val::Fin { neg: na, .. }, Val::Inf { neg: nb })
            | (Val::Inf { neg: na }, Val::Inf { neg: nb }) => self.inf(na != nb),
            (Val::Fin { neg: na, units: ua }, Val::Fin { neg: nb, units: ub }) => {
                self.round(na != nb, ua * ub, 1, -2 * self.umin())
            }
        }
    }
    fn div(self, a: Val, b: Val) -> u64 {
        match (a, b) {
            (Val::Inf { neg: na }, Val::Fin { neg: nb, .. }) => self.inf(na != nb),
            (Val::Fin { neg: na, units: ua }, Val::Fin { neg: nb, units: ub }) => {
                self.round(na != nb, ua, ub, 0)
            }
            _ => unreachable!("only finite scales are sampled"),
        }
    }
}

fn neg(v: Val) -> Val {
    match v {
        Val::Fin { neg, units } => Val::Fin { neg: !neg, units },
        Val::Inf { neg } => Val::Inf { neg: !neg },
    }
}

/// Every finite `x` against sampled `(offset, scale)` pairs, both directions, bit for bit.
fn exact_float_scale_offset<T: Real>(fmt: Fmt, pairs: &[(u64, u64)]) {
    let finite: Vec<T> = (0..1u64 << T::BITS)
        .filter(|&b| fmt.decode(b).is_some_and(|v| matches!(v, Val::Fin { .. })))
        .map(T::from_bits)
        .collect();
    let mut enc = vec![T::default(); finite.len()];
    let mut dec = vec![T::default(); finite.len()];
    for &(o, s) in pairs {
        let (Some(ov), Some(sv @ Val::Fin { units, .. })) = (fmt.decode(o), fmt.decode(s)) else {
            panic!("sample pair ({o:#x}, {s:#x}) must be finite")
        };
        if units == 0 {
            continue;
        }
        let c = ScaleOffset::<T>::new(T::from_bits(o), T::from_bits(s)).unwrap();
        c.encode_slice(&finite, &mut enc).unwrap();
        c.decode_slice(&finite, &mut dec).unwrap();
        for ((x, e), d) in finite.iter().zip(&enc).zip(&dec) {
            let xv = fmt.decode(x.to_bits()).unwrap();
            let diff = fmt.add(xv, neg(ov));
            let want = fmt.mul(fmt.decode(diff).unwrap(), sv);
            assert_eq!(
                e.to_bits(),
                want,
                "{}: ({:#x} - {o:#x}) * {s:#x}: intermediate {diff:#x}",
                T::NAME,
                x.to_bits()
            );
            let quot = fmt.div(xv, sv);
            let want = fmt.add(fmt.decode(quot).unwrap(), ov);
            assert_eq!(
                d.to_bits(),
                want,
                "{}: {:#x} / {s:#x} + {o:#x}: intermediate {quot:#x}",
                T::NAME,
                x.to_bits()
            );
        }
    }
}

#[test]
fn scale_offset_float16_exact_rational() {
    let mut rng = Rng(7);
    let mut pairs: Vec<(u64, u64)> = vec![
        (0x0000, 0x3c00), // identity
        (0x8000, 0x3c00), // -0 offset
        (0x4900, 0x2e66), // offset 10, scale 0.1
        (0xc900, 0x2e66), // offset -10, scale 0.1
        (0x0000, 0x3555), // scale 1/3 (rounded)
        (0x0000, 0x4200), // scale 3
        (0x0000, 0x0001), // scale = smallest subnormal
        (0x0000, 0x7bff), // scale = max
        (0x7bff, 0x3c00), // offset = max
        (0xfbff, 0xbc00), // offset = -max, scale -1
        (0x0001, 0x3800), // offset = smallest subnormal, scale 0.5
        (0x03ff, 0x4000), // largest subnormal, scale 2
        (0x5640, 0x1c00), // offset 100, scale 2^-8
    ];
    while pairs.len() < 40 {
        let (o, s) = (rng.next() & 0xffff, rng.next() & 0xffff);
        if f16::from_bits(o as u16).is_finite() && f16::from_bits(s as u16).is_finite() {
            pairs.push((o, s));
        }
    }
    exact_float_scale_offset::<f16>(F16, &pairs);
}

#[test]
fn scale_offset_float8_exact_rational() {
    let all: Vec<(u64, u64)> = (0..256u64)
        .flat_map(|o| (0..256u64).map(move |s| (o, s)))
        .collect();
    for (fmt, n) in [(E4M3, 0), (E5M2, 1), (E3M4, 2)] {
        let pairs: Vec<(u64, u64)> = all
            .iter()
            .copied()
            .step_by(3)
            .filter(|&(o, s)| {
                matches!(fmt.decode(o), Some(Val::Fin { .. }))
                    && matches!(fmt.decode(s), Some(Val::Fin { units, .. }) if units != 0)
            })
            .collect();
        match n {
            0 => exact_float_scale_offset::<Float8E4M3>(fmt, &pairs),
            1 => exact_float_scale_offset::<Float8E5M2>(fmt, &pairs),
            _ => exact_float_scale_offset::<Float8E3M4>(fmt, &pairs),
        }
    }
}

#[test]
fn scale_offset_float_overflow() {
    // Types with infinities: ±Inf, in the final product or in an intermediate.
    let c = ScaleOffset::<f32>::new(0.0, 10.0).unwrap();
    assert_eq!(
        c.encode(&arr1(&[3e38f32, -3e38])).unwrap(),
        arr1(&[f32::INFINITY, f32::NEG_INFINITY])
    );
    let c = ScaleOffset::<f64>::new(-1e308, 1e-300).unwrap();
    assert_eq!(enc1(&c, 1e308).unwrap(), f64::INFINITY); // intermediate 2e308
    let c = ScaleOffset::<f16>::new(f16::from_f32(-60000.0), f16::from_f32(1e-3)).unwrap();
    assert_eq!(enc1(&c, f16::from_f32(60000.0)).unwrap(), f16::INFINITY);
    let c = ScaleOffset::<bf16>::new(bf16::ZERO, bf16::from_f32(10.0)).unwrap();
    assert_eq!(enc1(&c, bf16::from_f32(-3e38)).unwrap(), bf16::NEG_INFINITY);
    assert_eq!(
        dec1(
            &ScaleOffset::<f16>::new(f16::ZERO, f16::from_f32(0.5)).unwrap(),
            f16::from_f32(60000.0)
        )
        .unwrap(),
        f16::INFINITY
    );
    let c = ScaleOffset::<Float8E4M3>::new(Float8E4M3(0), Float8E4M3(0x40)).unwrap(); // scale 2
    assert_eq!(enc1(&c, Float8E4M3(0x77)).unwrap(), Float8E4M3(0x78)); // 240 * 2 = +Inf
    assert_eq!(enc1(&c, Float8E4M3(0xf7)).unwrap(), Float8E4M3(0xf8));
    // Just below the overflow threshold rounds to max: 65504 + 15 (< 65520).
    let c = ScaleOffset::<f16>::new(f16::from_f32(-15.0), f16::ONE).unwrap();
    assert_eq!(enc1(&c, f16::MAX).unwrap(), f16::MAX);
    let c = ScaleOffset::<f16>::new(f16::from_f32(-16.0), f16::ONE).unwrap();
    assert_eq!(enc1(&c, f16::MAX).unwrap(), f16::INFINITY);

    // Types without infinities: an error.
    fn fails<T: Real>(offset: T, scale: T, x: T, decode: bool) {
        let c = ScaleOffset::<T>::new(offset, scale).unwrap();
        let r = if decode { dec1(&c, x) } else { enc1(&c, x) };
        let e = r.unwrap_err();
        assert_eq!(
            (e.codec, e.rule),
            ("scale_offset", Rule::NotRepresentable),
            "{}",
            T::NAME
        );
        assert_eq!(e.direction, if decode { "decode" } else { "encode" });
    }
    fails(
        Float8E4M3Fnuz(0),
        Float8E4M3Fnuz(0x48),
        Float8E4M3Fnuz(0x7f),
        false,
    ); // 240 * 2
    fails(
        Float8E4M3Fnuz(0),
        Float8E4M3Fnuz(0x38),
        Float8E4M3Fnuz(0x7f),
        true,
    ); // 240 / 0.5
    fails(
        Float8E4M3Fnuz(0xe0),
        Float8E4M3Fnuz(0x40),
        Float8E4M3Fnuz(0x7f),
        false,
    ); // 240 - (-16)
    fails(
        Float8E4M3B11Fnuz(0),
        Float8E4M3B11Fnuz(0x60),
        Float8E4M3B11Fnuz(0x7f),
        false,
    ); // 30 * 2
    fails(
        Float8E5M2Fnuz(0),
        Float8E5M2Fnuz(0x44),
        Float8E5M2Fnuz(0x7f),
        false,
    ); // 57344 * 2
    fails(Float4E2M1Fn(0), Float4E2M1Fn(0x4), Float4E2M1Fn(0x7), false); // 6 * 2
    fails(
        Float6E2M3Fn(0),
        Float6E2M3Fn(0x10),
        Float6E2M3Fn(0x1f),
        false,
    ); // 7.5 * 2
    fails(
        Float6E3M2Fn(0),
        Float6E3M2Fn(0x10),
        Float6E3M2Fn(0x1f),
        false,
    ); // 28 * 2
    fails(
        Float8E8M0Fnu(0x00),
        Float8E8M0Fnu(0x80),
        Float8E8M0Fnu(0xfe),
        false,
    ); // 2^127 * 2
    fails(
        Float8E8M0Fnu(0x00),
        Float8E8M0Fnu(0x7e),
        Float8E8M0Fnu(0xfe),
        true,
    ); // 2^127 / 0.5
    fails(
        Float8E8M0Fnu(0x7f),
        Float8E8M0Fnu(0x7f),
        Float8E8M0Fnu(0x7f),
        false,
    ); // 1 - 1 = 0: no zero
    // The rounding comes first: 240 + 4 rounds to 240 in e4m3fnuz; 240 + 8 ties to 256.
    let c = ScaleOffset::<Float8E4M3Fnuz>::new(Float8E4M3Fnuz(0xd0), Float8E4M3Fnuz(0x40)).unwrap(); // offset -4, scale 1
    assert_eq!(
        enc1(&c, Float8E4M3Fnuz(0x7f)).unwrap(),
        Float8E4M3Fnuz(0x7f)
    );
    let c = ScaleOffset::<Float8E4M3Fnuz>::new(Float8E4M3Fnuz(0xd8), Float8E4M3Fnuz(0x40)).unwrap(); // offset -8
    assert!(enc1(&c, Float8E4M3Fnuz(0x7f)).is_err());
}

#[test]
fn scale_offset_float_specials() {
    // NaN in, NaN out.
    let c = ScaleOffset::<f32>::new(1.0, 2.0).unwrap();
    assert!(enc1(&c, f32::NAN).unwrap().is_nan());
    assert!(dec1(&c, f32::NAN).unwrap().is_nan());
    let c = ScaleOffset::<Float8E4M3Fnuz>::new(Float8E4M3Fnuz(0x40), Float8E4M3Fnuz(0x40)).unwrap();
    assert_eq!(
        enc1(&c, Float8E4M3Fnuz(0x80)).unwrap(),
        Float8E4M3Fnuz(0x80)
    );
    // A missing offset is +0: decoding -0.0 gives (-0.0 / s) + 0 = +0.0.
    let c = ScaleOffset::<f64>::from_configuration(Some(&serde_json::json!({"scale": 2}))).unwrap();
    assert_eq!(dec1(&c, -0.0).unwrap().to_bits(), 0);
    // Encoding keeps it: (-0.0 - (+0)) * 2 = -0.0.
    assert_eq!(enc1(&c, -0.0).unwrap().to_bits(), (-0.0f64).to_bits());
}

/// `float8_e8m0fnu` has no zero: a missing offset is still the exact identity `x - 0 = x`,
/// not the nearest value 2^-127.
#[test]
fn scale_offset_missing_offset_without_zero() {
    let all: Vec<Float8E8M0Fnu> = (0..=255u8).map(Float8E8M0Fnu).collect();
    let c = ScaleOffset::<Float8E8M0Fnu>::from_configuration(None).unwrap();
    let mut out = all.clone();
    c.encode_slice(&all, &mut out).unwrap();
    assert_eq!(out, all);
    c.decode_slice(&all, &mut out).unwrap();
    assert_eq!(out, all);
    let cfg = serde_json::json!({"scale": 2});
    let c = ScaleOffset::<Float8E8M0Fnu>::from_configuration(Some(&cfg)).unwrap();
    // 2^-127 * 2 = 2^-126; 2^-126 * 2 = 2^-125.
    assert_eq!(enc1(&c, Float8E8M0Fnu(0x00)).unwrap(), Float8E8M0Fnu(0x01));
    assert_eq!(enc1(&c, Float8E8M0Fnu(0x01)).unwrap(), Float8E8M0Fnu(0x02));
    assert_eq!(dec1(&c, Float8E8M0Fnu(0x01)).unwrap(), Float8E8M0Fnu(0x00));
    assert!(enc1(&c, Float8E8M0Fnu(0xfe)).is_err()); // 2^127 * 2
    assert_eq!(
        c.to_metadata(),
        serde_json::json!({"name": "scale_offset", "configuration": {"scale": 2.0}})
    );
    // An explicit offset is subtracted: 2^-127 - 2^-127 = 0 is not a value.
    let cfg = serde_json::json!({"offset": "0x00", "scale": 2});
    let c = ScaleOffset::<Float8E8M0Fnu>::from_configuration(Some(&cfg)).unwrap();
    assert!(enc1(&c, Float8E8M0Fnu(0x00)).is_err());
}

// =======================================================================================
// cast_value: scalar_map order
// =======================================================================================

fn cast<S: Real, D: Real>(
    opts: CastOptions,
    enc: Vec<(S, D)>,
    dec: Vec<(D, S)>,
) -> CastValue<S, D> {
    CastValue::new(
        opts,
        ScalarMap {
            encode: MapEntries::new(enc),
            decode: MapEntries::new(dec),
            present: true,
        },
    )
    .unwrap()
}

#[test]
fn scalar_map_before_rounding_and_range() {
    let c = cast::<f64, u8>(
        CastOptions::default(),
        vec![(0.5, 7), (300.0, 255), (f64::NAN, 0)],
        vec![],
    );
    // 0.5 would round to 0; 300 would be out of range; NaN has no uint8 value.
    assert_eq!(
        c.encode(&arr1(&[0.5, 0.4, 1.5, 300.0, f64::NAN, 2.5]))
            .unwrap(),
        arr1(&[7u8, 0, 2, 255, 0, 2])
    );
    assert_eq!(enc1(&c, 301.0).unwrap_err().rule, Rule::OutOfRange);
    // Keys match exact values, not the rounded ones.
    let c = cast::<f64, f16>(CastOptions::default(), vec![(0.1, f16::ZERO)], vec![]);
    assert_eq!(enc1(&c, 0.1).unwrap(), f16::ZERO);
    assert_eq!(enc1(&c, 0.1 + 1e-12).unwrap(), f16::from_f64(0.1));
    // A mapped value is used as is, even where the cast would fail.
    let c = cast::<f32, Float8E4M3Fnuz>(
        CastOptions::default(),
        vec![(f32::INFINITY, Float8E4M3Fnuz(0x7f))],
        vec![(Float8E4M3Fnuz(0x80), f32::NEG_INFINITY)],
    );
    assert_eq!(enc1(&c, f32::INFINITY).unwrap(), Float8E4M3Fnuz(0x7f));
    assert_eq!(
        enc1(&c, f32::NEG_INFINITY).unwrap_err().rule,
        Rule::InfUnrepresentable
    );
    assert_eq!(dec1(&c, Float8E4M3Fnuz(0x80)).unwrap(), f32::NEG_INFINITY);
}

#[test]
fn scalar_map_first_occurrence_wins() {
    let c = cast::<f64, u8>(
        CastOptions::default(),
        vec![(1.0, 5), (1.0, 6), (2.0, 8)],
        vec![(5, 10.0), (5, 11.0)],
    );
    assert_eq!(c.encode(&arr1(&[1.0, 2.0])).unwrap(), arr1(&[5, 8]));
    assert_eq!(dec1(&c, 5).unwrap(), 10.0);
    // Two NaN keys with different payloads are the same key.
    let c = cast::<f64, u8>(
        CastOptions::default(),
        vec![(f64::from_bits(0x7ff8_0000_0000_0001), 1), (f64::NAN, 2)],
        vec![],
    );
    assert_eq!(enc1(&c, f64::NAN).unwrap(), 1);
    // 0 and -0 are the same key.
    let c = cast::<f64, u8>(CastOptions::default(), vec![(-0.0, 3), (0.0, 4)], vec![]);
    assert_eq!(enc1(&c, 0.0).unwrap(), 3);
}

#[test]
fn scalar_map_nan_key_matches_every_nan() {
    let c = cast::<f16, u8>(CastOptions::default(), vec![(f16::NAN, 9)], vec![]);
    let nans: Vec<f16> = (0..=u16::MAX)
        .map(f16::from_bits)
        .filter(|x| x.is_nan())
        .collect();
    assert_eq!(nans.len(), 2046);
    for x in &nans {
        assert_eq!(enc1(&c, *x).unwrap(), 9, "{:#x}", x.to_bits());
    }
    let mut rng = Rng(3);
    let c = cast::<f32, u8>(
        CastOptions::default(),
        vec![(f32::from_bits(0xffc0_0001), 9)],
        vec![],
    );
    for _ in 0..10_000 {
        let payload = (rng.next() as u32 & 0x007f_ffff).max(1);
        let sign = (rng.next() as u32 & 1) << 31;
        let x = f32::from_bits(sign | 0x7f80_0000 | payload);
        assert_eq!(enc1(&c, x).unwrap(), 9);
    }
    // A NaN key matches NaN only; a float -> float cast propagates unmapped NaNs.
    let c = cast::<f32, f16>(CastOptions::default(), vec![(f32::NAN, f16::ONE)], vec![]);
    assert_eq!(enc1(&c, f32::from_bits(0xff80_0001)).unwrap(), f16::ONE);
    assert_eq!(enc1(&c, f32::INFINITY).unwrap(), f16::INFINITY);
}

#[test]
fn scalar_map_zero_key_matches_negative_zero() {
    let c = cast::<f64, u8>(CastOptions::default(), vec![(0.0, 9)], vec![]);
    assert_eq!(
        c.encode(&arr1(&[0.0, -0.0, 1.0])).unwrap(),
        arr1(&[9, 9, 1])
    );
    let c = cast::<f32, Float8E4M3>(
        CastOptions::default(),
        vec![(-0.0, Float8E4M3(0x38))],
        vec![],
    );
    assert_eq!(enc1(&c, 0.0).unwrap(), Float8E4M3(0x38));
    // Without a map, -0.0 keeps its sign into a type with -0.
    let plain =
        CastValue::<f32, Float8E4M3>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    assert_eq!(enc1(&plain, -0.0).unwrap(), Float8E4M3(0x80));
}

#[test]
fn scalar_map_is_not_transitive() {
    let c = cast::<f64, f64>(
        CastOptions::default(),
        vec![(1.0, 2.0), (2.0, 3.0)],
        vec![(3.0, 2.0), (2.0, 1.0)],
    );
    assert_eq!(
        c.encode(&arr1(&[1.0, 2.0, 3.0])).unwrap(),
        arr1(&[2.0, 3.0, 3.0])
    );
    assert_eq!(
        c.decode(&arr1(&[3.0, 2.0, 1.0])).unwrap(),
        arr1(&[2.0, 1.0, 1.0])
    );
    // A value mapped to a key of the same map is not looked up again.
    let c = cast::<f64, u8>(CastOptions::default(), vec![(1.0, 2), (2.0, 3)], vec![]);
    assert_eq!(c.encode(&arr1(&[1.0, 2.0])).unwrap(), arr1(&[2, 3]));
}

#[test]
fn cast_value_fill_round_trip() {
    let fill_err = |r: Result<u8, MetadataError>| {
        assert!(
            matches!(
                r,
                Err(MetadataError::FillValueTransform {
                    codec: "cast_value",
                    ..
                })
            ),
            "{r:?}"
        )
    };
    let plain = CastValue::<f64, u8>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    fill_err(plain.encode_fill_value(0.5));
    fill_err(plain.encode_fill_value(300.0));
    fill_err(plain.encode_fill_value(f64::NAN));
    assert_eq!(plain.encode_fill_value(-0.0), Ok(0));
    assert_eq!(plain.encode_fill_value(255.0), Ok(255));
    let clamp = CastValue::<f64, u8>::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        ScalarMap::default(),
    )
    .unwrap();
    fill_err(clamp.encode_fill_value(300.0));
    let wrap = CastValue::<f64, u8>::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Wrap),
        ScalarMap::default(),
    )
    .unwrap();
    fill_err(wrap.encode_fill_value(256.0));
    // NaN survives with a map both ways, not with one.
    let both = cast::<f64, u8>(
        CastOptions::default(),
        vec![(f64::NAN, 0)],
        vec![(0, f64::NAN)],
    );
    assert_eq!(both.encode_fill_value(f64::NAN), Ok(0));
    fill_err(
        cast::<f64, u8>(CastOptions::default(), vec![(f64::NAN, 0)], vec![])
            .encode_fill_value(f64::NAN),
    );
    // Into a narrower float: 0.1 is not a float16 value; 0.5 is.
    let narrow = CastValue::<f64, f16>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    assert!(narrow.encode_fill_value(0.1).is_err());
    assert_eq!(narrow.encode_fill_value(0.5), Ok(f16::from_f32(0.5)));
    assert!(narrow.encode_fill_value(f64::NAN).unwrap().is_nan());
    // -0.0 into fnuz (no -0) comes back as +0.0: numerically equal.
    let fnuz = CastValue::<f32, Float8E4M3Fnuz>::new(CastOptions::default(), ScalarMap::default())
        .unwrap();
    assert_eq!(fnuz.encode_fill_value(-0.0), Ok(Float8E4M3Fnuz(0)));
    // A chain carries the fill value through each stage (the README example).
    let chain = ScaleOffset::<f64>::new(-10.0, 0.1).unwrap().then(both);
    assert_eq!(chain.encode_fill_value(f64::NAN), Ok(0));
    assert_eq!(chain.encode_fill_value(2540.0), Ok(255));
    assert!(chain.encode_fill_value(2545.0).is_err());
}

// =======================================================================================
// bitround on integers: the magnitude, from its most significant set bit
// =======================================================================================

/// Round `|v|` to `k` significant bits, ties to even; if that leaves the sign's range,
/// keep the truncated magnitude. The sign never changes.
fn ref_int_bitround(v: i128, (lo, hi): (i128, i128), k: u32) -> i128 {
    if v == 0 {
        return 0;
    }
    let mag = v.unsigned_abs();
    let width = 128 - mag.leading_zeros();
    if width <= k {
        return v;
    }
    let unit = 1u128 << (width - k);
    let below = mag % unit;
    let down = mag - below;
    let up = below > unit / 2 || (below == unit / 2 && (down / unit) % 2 == 1);
    let limit = if v < 0 { lo.unsigned_abs() } else { hi as u128 };
    let r = if up && down + unit <= limit {
        down + unit
    } else {
        down
    };
    if v < 0 { -(r as i128) } else { r as i128 }
}

fn int_bitround_exhaustive<T: Real>(signed: bool) {
    let bits = T::BITS;
    let range = int_range(bits, signed);
    let xs: Vec<T> = (0..1u64 << bits).map(T::from_bits).collect();
    let mut out = xs.clone();
    for k in 1..=bits + 2 {
        BitRound::<T>::new(u64::from(k))
            .unwrap()
            .encode_slice(&xs, &mut out)
            .unwrap();
        for (x, y) in xs.iter().zip(&out) {
            let v = int_of(x.to_bits(), bits, signed);
            assert_eq!(
                int_of(y.to_bits(), bits, signed),
                ref_int_bitround(v, range, k),
                "{} {v} keepbits {k}",
                T::NAME
            );
        }
    }
}

#[test]
fn bitround_integers() {
    let b = |k: u64| BitRound::<i8>::new(k).unwrap();
    assert_eq!(enc1(&b(3), 127), Ok(112));
    assert_eq!(enc1(&b(1), -3), Ok(-4));
    assert_eq!(enc1(&b(1), 3), Ok(4));
    assert_eq!(enc1(&b(1), -1), Ok(-1));
    assert_eq!(enc1(&b(1), -128), Ok(-128));
    assert_eq!(enc1(&b(2), 127), Ok(96)); // 128 does not fit: truncate
    assert_eq!(enc1(&b(2), -127), Ok(-128));
    assert_eq!(enc1(&BitRound::<u8>::new(3).unwrap(), 255), Ok(224));
    assert_eq!(enc1(&BitRound::<u8>::new(3).unwrap(), 208), Ok(192));
    for k in 1..=70 {
        assert_eq!(
            enc1(&BitRound::<i64>::new(k).unwrap(), i64::MIN),
            Ok(i64::MIN)
        );
        let nat = enc1(
            &BitRound::<DateTime64>::new(k).unwrap(),
            DateTime64(i64::MIN),
        )
        .unwrap();
        assert_eq!(nat, DateTime64(i64::MIN));
        let nat = enc1(
            &BitRound::<TimeDelta64>::new(k).unwrap(),
            TimeDelta64(i64::MIN),
        )
        .unwrap();
        assert_eq!(nat, TimeDelta64(i64::MIN));
    }
    assert_eq!(
        enc1(&BitRound::<u64>::new(1).unwrap(), u64::MAX),
        Ok(1 << 63)
    );
    assert_eq!(
        enc1(&BitRound::<i64>::new(1).unwrap(), i64::MAX),
        Ok(1 << 62)
    );
    assert_eq!(
        enc1(&BitRound::<DateTime64>::new(2).unwrap(), DateTime64(7)).unwrap(),
        DateTime64(8)
    );
    // Decoding is the identity.
    assert_eq!(dec1(&b(1), 3), Ok(3));

    int_bitround_exhaustive::<i8>(true);
    int_bitround_exhaustive::<u8>(false);
    int_bitround_exhaustive::<i16>(true);
    int_bitround_exhaustive::<u16>(false);

    let mut rng = Rng(11);
    for _ in 0..20_000 {
        let (x, k) = (rng.next(), (rng.next() % 66 + 1) as u32);
        let v = x as i64;
        let got = enc1(&BitRound::<i64>::new(u64::from(k)).unwrap(), v).unwrap();
        assert_eq!(
            i128::from(got),
            ref_int_bitround(i128::from(v), int_range(64, true), k),
            "{v} {k}"
        );
        let got = enc1(&BitRound::<u64>::new(u64::from(k)).unwrap(), x).unwrap();
        assert_eq!(
            i128::from(got),
            ref_int_bitround(i128::from(x), int_range(64, false), k),
            "{x} {k}"
        );
        let v = x as i32;
        let got = enc1(&BitRound::<i32>::new(u64::from(k)).unwrap(), v).unwrap();
        assert_eq!(
            i128::from(got),
            ref_int_bitround(i128::from(v), int_range(32, true), k),
            "{v} {k}"
        );
    }
}

// =======================================================================================
// bitround on floats: numcodecs' formula, NaN untouched
// =======================================================================================

/// numcodecs' `bitround` on the code viewed as a signed integer of the same width (numpy
/// arithmetic wraps), with the one documented difference: a NaN is returned as it is.
fn numcodecs_bitround(code: u64, width: u32, mbits: u32, ebits: u32, keepbits: u32) -> u64 {
    let exp_mask = ((1u64 << ebits) - 1) << mbits;
    let man_mask = (1u64 << mbits) - 1;
    if code & exp_mask == exp_mask && code & man_mask != 0 {
        return code;
    }
    if keepbits == mbits {
        return code;
    }
    let maskbits = mbits - keepbits;
    // Sign-extend to i64 to mimic the signed view, then wrap back to the width.
    let shift = 64 - width;
    let b = ((code << shift) as i64) >> shift;
    let all_set: i64 = -1;
    let mask = (all_set >> maskbits) << maskbits;
    let half_quantum1 = (1i64 << (maskbits - 1)) - 1;
    let b = b.wrapping_add(((b >> maskbits) & 1) + half_quantum1) & mask;
    (b as u64) & (u64::MAX >> shift)
}

#[test]
fn bitround_float16_and_bfloat16_exhaustive() {
    let f: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let mut out = f.clone();
    for k in 1..=10u32 {
        BitRound::<f16>::new(u64::from(k))
            .unwrap()
            .encode_slice(&f, &mut out)
            .unwrap();
        for (x, y) in f.iter().zip(&out) {
            let want = numcodecs_bitround(u64::from(x.to_bits()), 16, 10, 5, k);
            assert_eq!(
                u64::from(y.to_bits()),
                want,
                "float16 {:#06x} keepbits {k}",
                x.to_bits()
            );
        }
    }
    let b: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    let mut out = b.clone();
    for k in 1..=7u32 {
        BitRound::<bf16>::new(u64::from(k))
            .unwrap()
            .encode_slice(&b, &mut out)
            .unwrap();
        for (x, y) in b.iter().zip(&out) {
            let want = numcodecs_bitround(u64::from(x.to_bits()), 16, 7, 8, k);
            assert_eq!(
                u64::from(y.to_bits()),
                want,
                "bfloat16 {:#06x} keepbits {k}",
                x.to_bits()
            );
        }
    }
    // The carry can reach the exponent: max becomes Inf.
    assert_eq!(
        enc1(&BitRound::<f16>::new(1).unwrap(), f16::MAX).unwrap(),
        f16::INFINITY
    );
    assert_eq!(
        enc1(&BitRound::<f16>::new(10).unwrap(), f16::MAX).unwrap(),
        f16::MAX
    );
}

#[test]
fn bitround_float32_float64_sampled() {
    let mut rng = Rng(5);
    for _ in 0..50_000 {
        let r = rng.next();
        let k = (r % 23 + 1) as u32;
        let x = (r >> 32) as u32;
        let got = enc1(
            &BitRound::<f32>::new(u64::from(k)).unwrap(),
            f32::from_bits(x),
        )
        .unwrap();
        assert_eq!(
            u64::from(got.to_bits()),
            numcodecs_bitround(u64::from(x), 32, 23, 8, k),
            "{x:#x} {k}"
        );
        let x = rng.next();
        let k = (r % 52 + 1) as u32;
        let got = enc1(
            &BitRound::<f64>::new(u64::from(k)).unwrap(),
            f64::from_bits(x),
        )
        .unwrap();
        assert_eq!(
            got.to_bits(),
            numcodecs_bitround(x, 64, 52, 11, k),
            "{x:#x} {k}"
        );
    }
    // The README example: 0.1f32 with keepbits 3.
    assert_eq!(
        enc1(&BitRound::<f32>::new(3).unwrap(), 0.1)
            .unwrap()
            .to_bits(),
        0x3dd0_0000
    );
}

#[test]
fn bitround_leaves_nan_untouched() {
    let mut rng = Rng(17);
    for _ in 0..5000 {
        let payload = (rng.next() & 0x007f_ffff).max(1) as u32;
        let sign = (rng.next() as u32 & 1) << 31;
        let x = sign | 0x7f80_0000 | payload;
        for k in 1..=23 {
            let y = enc1(&BitRound::<f32>::new(k).unwrap(), f32::from_bits(x)).unwrap();
            assert_eq!(y.to_bits(), x, "{x:#x} keepbits {k}");
        }
        let payload = (rng.next() & 0x000f_ffff_ffff_ffff).max(1);
        let x = (rng.next() & 1 << 63) | 0x7ff0_0000_0000_0000 | payload;
        for k in [1, 2, 10, 30, 51, 52] {
            let y = enc1(&BitRound::<f64>::new(k).unwrap(), f64::from_bits(x)).unwrap();
            assert_eq!(y.to_bits(), x, "{x:#x} keepbits {k}");
        }
    }
    // Per component for complex numbers: the NaN stays, the other component rounds.
    let c = BitRound::<Complex<f32>>::new(3).unwrap();
    let y = enc1(&c, Complex::new(f32::from_bits(0x7f80_0001), 0.1)).unwrap();
    assert_eq!((y.re.to_bits(), y.im.to_bits()), (0x7f80_0001, 0x3dd0_0000));
    let y = enc1(&c, Complex::new(0.1, f32::from_bits(0xffff_ffff))).unwrap();
    assert_eq!((y.re.to_bits(), y.im.to_bits()), (0x3dd0_0000, 0xffff_ffff));
}

/// A quick check that `same_as`-style NaN equality is not hiding a changed payload above:
/// bit equality is asserted, and `DType::same_as` agrees on distinct NaNs.
#[test]
fn nan_payloads_are_distinct_codes() {
    assert!(f32::from_bits(0x7f80_0001).same_as(f32::NAN));
    assert_ne!(f32::from_bits(0x7f80_0001).to_bits(), f32::NAN.to_bits());
}
