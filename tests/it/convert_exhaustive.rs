//! Exhaustive check of the conversion core: every code of every built-in real type of at
//! most 16 bits, converted to each of the 26 built-in real types, under all 5 rounding modes
//! and all 3 out-of-range rules, against the exact reference in `tests/it/common/reference.rs`.
//!
//! Each source type is one test (20 tests; the four 16-bit sources carry almost all of the
//! ~100 million conversions). Conversions go through `cast` element by element (value and
//! status) and through `cast_slice` on the whole code table (values, first failing index and
//! its status; 8-bit tables take zquant's lookup-table path), and for 16-bit sources also on
//! the table repeated to 2^18 elements (zquant's 16-bit lookup-table path). The whole run is
//! the default `cargo test`; there is no reduced subset.

use crate::common::check::{Report, check_decoded, check_long_slice, format_of, pair};
use crate::common::reference::{FORMATS, Format, Mag, Nan, Target, Val, format};
use crate::common::types::{Visit, for_each_real, for_each_small};
use zquant::Real;
use zquant::dtype::{
    Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4, Float8E4M3, Float8E4M3B11Fnuz,
    Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz, Float8E8M0Fnu, Int2, Int4, UInt2, UInt4,
};

struct AllTargets {
    src_name: &'static str,
    src: Vec<u64>,
    vals: Vec<Val>,
    report: Report,
}

impl Visit for AllTargets {
    fn visit<D: Real>(&mut self) {
        format_of::<D>();
        let t = Target::new(D::NAME);
        let p = by_name::<D>(self.src_name);
        check_decoded(&p, &self.src, &self.vals, &t, &mut self.report);
        if self.src.len() == 1 << 16 {
            // 16-bit sources: also the long-slice path of cast_slice.
            check_long_slice(&p, &self.src, &self.vals, &t, &mut self.report);
        }
    }
}

/// The pair `S -> D` for the source named `src`: a dispatch over the 20 small sources, so
/// that only the 20 x 26 `cast` instantiations are generic.
fn by_name<D: Real>(src: &str) -> crate::common::check::Pair {
    struct Find<D> {
        name: String,
        found: Option<crate::common::check::Pair>,
        _d: std::marker::PhantomData<D>,
    }
    impl<D: Real> Visit for Find<D> {
        fn visit<S: Real>(&mut self) {
            if S::NAME == self.name {
                self.found = Some(pair::<S, D>());
            }
        }
    }
    let mut f = Find::<D> {
        name: src.to_string(),
        found: None,
        _d: std::marker::PhantomData,
    };
    for_each_small(&mut f);
    f.found.expect("a small source type")
}

fn exhaustive<S: Real>() {
    let sf = format_of::<S>();
    let src: Vec<u64> = (0..1u64 << S::BITS).collect();
    for c in &src {
        assert_eq!(
            S::from_bits(*c).to_bits(),
            *c,
            "{} code round trip",
            S::NAME
        );
    }
    let vals = src.iter().map(|c| sf.decode(*c)).collect();
    let mut v = AllTargets {
        src_name: S::NAME,
        src,
        vals,
        report: Report::default(),
    };
    for_each_real(&mut v);
    assert!(v.report.checked >= 26 * 15 * (1u64 << S::BITS));
    v.report.finish(&format!("{} -> every type", S::NAME));
}

macro_rules! exhaustive_tests {
    ($($name:ident: $t:ty,)*) => {
        $(
            #[test]
            fn $name() {
                exhaustive::<$t>();
            }
        )*
    };
}

exhaustive_tests! {
    from_int2: Int2,
    from_int4: Int4,
    from_int8: i8,
    from_int16: i16,
    from_uint2: UInt2,
    from_uint4: UInt4,
    from_uint8: u8,
    from_uint16: u16,
    from_float16: half::f16,
    from_bfloat16: half::bf16,
    from_float4_e2m1fn: Float4E2M1Fn,
    from_float6_e2m3fn: Float6E2M3Fn,
    from_float6_e3m2fn: Float6E3M2Fn,
    from_float8_e3m4: Float8E3M4,
    from_float8_e4m3: Float8E4M3,
    from_float8_e4m3b11fnuz: Float8E4M3B11Fnuz,
    from_float8_e4m3fnuz: Float8E4M3Fnuz,
    from_float8_e5m2: Float8E5M2,
    from_float8_e5m2fnuz: Float8E5M2Fnuz,
    from_float8_e8m0fnu: Float8E8M0Fnu,
}

/// The 20 sources above are exactly the built-in real types of at most 16 bits.
#[test]
fn sources_cover_every_small_type() {
    struct Names(Vec<&'static str>);
    impl Visit for Names {
        fn visit<T: Real>(&mut self) {
            self.0.push(T::NAME);
        }
    }
    let mut n = Names(Vec::new());
    for_each_small(&mut n);
    let mut expected: Vec<&str> = FORMATS
        .iter()
        .filter(|(_, f)| f.bits() <= 16)
        .map(|(n, _)| *n)
        .collect();
    n.0.sort();
    expected.sort();
    assert_eq!(n.0, expected);
    let mut all = Names(Vec::new());
    for_each_real(&mut all);
    assert_eq!(all.0.len(), 26);
}

/// Self-check of the reference table against facts stated in the data-type READMEs and the
/// conformance README (independent of zquant).
#[test]
fn reference_table_facts() {
    let val = |name: &str, code: u64| format(name).decode(code);
    let num = |neg: bool, m: u128, e: i32| Val::Num {
        neg,
        mag: Mag::new(m, e),
    };
    // Largest finite values.
    let max = |name: &str| {
        let f = format(name);
        f.pos_value(f.max_code())
    };
    assert_eq!(max("float4_e2m1fn"), Mag::int(6));
    assert_eq!(max("float6_e2m3fn"), Mag::new(15, -1)); // 7.5
    assert_eq!(max("float6_e3m2fn"), Mag::int(28));
    assert_eq!(max("float8_e3m4"), Mag::new(31, -1)); // 15.5
    assert_eq!(max("float8_e4m3"), Mag::int(240));
    assert_eq!(max("float8_e4m3fnuz"), Mag::int(240));
    assert_eq!(max("float8_e4m3b11fnuz"), Mag::int(30));
    assert_eq!(max("float8_e5m2"), Mag::int(57344));
    assert_eq!(max("float8_e5m2fnuz"), Mag::int(57344));
    assert_eq!(max("float8_e8m0fnu"), Mag::pow2(127));
    assert_eq!(max("float16"), Mag::int(65504));
    assert_eq!(max("bfloat16"), Mag::new(255, 120));
    assert_eq!(max("float32"), Mag::new((1 << 24) - 1, 104));
    assert_eq!(max("float64"), Mag::new((1 << 53) - 1, 971));
    assert_eq!(max("int2"), Mag::int(1));
    assert_eq!(max("uint64"), Mag::int(u64::MAX as u128));
    // Canonical NaNs listed in the conformance README.
    for (name, code) in [
        ("float16", 0x7e00),
        ("bfloat16", 0x7fc0),
        ("float32", 0x7fc0_0000),
        ("float64", 0x7ff8_0000_0000_0000),
        ("float8_e3m4", 0x78),
        ("float8_e4m3", 0x7c),
        ("float8_e5m2", 0x7e),
        ("float8_e4m3fnuz", 0x80),
        ("float8_e4m3b11fnuz", 0x80),
        ("float8_e5m2fnuz", 0x80),
        ("float8_e8m0fnu", 0xff),
    ] {
        assert_eq!(val(name, code), Val::Nan, "{name} {code:#x}");
    }
    // e4m3: +Inf is 0x78; e8m0: 0x7f is 1, 0x00 is 2^-127, 0xfe is 2^127.
    assert_eq!(val("float8_e4m3", 0x78), Val::Inf { neg: false });
    assert_eq!(val("float8_e4m3", 0xf8), Val::Inf { neg: true });
    assert_eq!(val("float8_e8m0fnu", 0x7f), num(false, 1, 0));
    assert_eq!(val("float8_e8m0fnu", 0x00), num(false, 1, -127));
    assert_eq!(val("float8_e8m0fnu", 0xfe), num(false, 1, 127));
    // Sub-byte integers: int4 -2 is 0x0e, int2 -1 is 0x03.
    assert_eq!(val("int4", 0x0e), num(true, 2, 0));
    assert_eq!(val("int2", 0x03), num(true, 1, 0));
    assert_eq!(val("int2", 0x02), num(true, 2, 0));
    // Smallest subnormals.
    assert_eq!(val("float16", 1), num(false, 1, -24));
    assert_eq!(val("float4_e2m1fn", 1), num(false, 1, -1));
    assert_eq!(val("float8_e4m3fnuz", 1), num(false, 1, -10));
    assert_eq!(val("float64", 1), num(false, 1, -1074));
    // -0 and its absence.
    assert_eq!(val("float8_e4m3", 0x80), num(true, 0, 0));
    assert!(format("float8_e4m3").has_neg_zero());
    assert!(!format("float8_e4m3fnuz").has_neg_zero());
    assert!(!format("float8_e8m0fnu").has_neg_zero());
    // No NaN codes at all in the fn types and integers.
    for name in ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "int8"] {
        let f = format(name);
        assert!(!f.has_nan());
        assert!((0..=f.mask()).all(|c| f.decode(c) != Val::Nan), "{name}");
    }
}

/// The reference's search assumes that codes `0..=max_code` have strictly increasing values
/// and that every other non-negative code is special; check it on every format of at most
/// 16 bits, and on sampled codes of the wider floats.
#[test]
fn reference_codes_are_ordered() {
    for (name, f) in FORMATS.iter() {
        let Format::Float(fl) = f else { continue };
        let top = if f.bits() <= 16 {
            f.max_code()
        } else {
            1 << 20
        };
        let mut prev: Option<Mag> = None;
        for c in 0..=top {
            let v = f.pos_value(c);
            if let Some(p) = prev {
                assert!(p < v, "{name}: code {c:#x} not above its predecessor");
            }
            prev = Some(v);
        }
        // Codes past max_code (positive side) are NaN or Inf.
        let mag_mask = (1u64 << (fl.exp + fl.man)) - 1;
        if f.bits() <= 16 {
            for c in f.max_code() + 1..=mag_mask {
                assert!(
                    matches!(f.decode(c), Val::Nan | Val::Inf { .. }),
                    "{name} {c:#x}"
                );
            }
        }
        // The beyond-max grid point is max + the top binade's spacing.
        let max = f.pos_value(f.max_code());
        assert!(f.beyond_max() > max);
        if fl.nan == Nan::Ieee {
            // For IEEE formats it is the next power of two.
            assert_eq!(f.beyond_max().m, 1, "{name}");
        }
    }
}
