use zquant::dtype::*;
use zquant::{CastOptions, Exact, OutOfRange, Rounding, Status, cast};
use zquant::{DType, Real};

#[test]
fn smoke() {
    let ne = CastOptions::default();
    let (x, s): (Float8E4M3, _) = cast(245.0f64, ne);
    assert_eq!((x.0, s), (0x77, Status::Inexact));
    let (x, s): (half::f16, _) = cast(65519.0f64, ne);
    assert_eq!((x.to_bits(), s), (0x7bff, Status::Inexact));
    let (_, s): (half::f16, _) = cast(65520.0f64, ne);
    assert_eq!(s, Status::OutOfRange);
    let (x, _): (f32, _) = cast(
        u64::MAX,
        CastOptions::new(Rounding::TowardsZero, OutOfRange::Error),
    );
    assert_eq!(x as f64, 18446744073709551616.0 - 1099511627776.0);
    // double rounding witness: 1 + 2^-11 + 2^-40 -> f16 is 1 + 2^-10
    let v = 1.0f64 + 2f64.powi(-11) + 2f64.powi(-40);
    let (x, _): (half::f16, _) = cast(v, ne);
    assert_eq!(x.to_bits(), 0x3c01);
    assert_eq!(Float8E8M0Fnu(0x7f).to_exact().to_f64(), 1.0);
    assert_eq!(Float8E4M3Fnuz(0x80).to_exact(), Exact::NAN);
    let (x, s): (Float8E8M0Fnu, _) = cast(3.0f64, ne);
    assert_eq!((x.0, s), (0x81, Status::Inexact));
    assert_eq!(Float4E2M1Fn(0x7).to_exact().to_f64(), 6.0);
    assert_eq!(Int4(0x0e).to_exact().to_f64(), -2.0);
    let (x, s): (i8, _) = cast(
        128.0f64,
        CastOptions::new(Rounding::NearestEven, OutOfRange::Wrap),
    );
    assert_eq!((x, s), (-128, Status::Wrapped));
    let (x, _): (i16, _) = cast(
        -32769i64,
        CastOptions::new(Rounding::NearestEven, OutOfRange::Wrap),
    );
    assert_eq!(x, 32767);
    assert_eq!(
        f32::fill_value_from_json(&serde_json::json!("0x7fc00000"))
            .unwrap()
            .to_bits(),
        0x7fc00000
    );
    assert!(f32::fill_value_from_json(&serde_json::json!("0x7fc")).is_err());
    assert!(Float4E2M1Fn::fill_value_from_json(&serde_json::json!("NaN")).is_err());
    assert!(u8::fill_value_from_json(&serde_json::json!(256)).is_err());
    assert!(i32::fill_value_from_json(&serde_json::json!(1.5)).is_err());
    assert_eq!(
        half::f16::fill_value_from_json(&serde_json::json!(0.1))
            .unwrap()
            .to_bits(),
        half::f16::from_f64(0.1).to_bits()
    );
    assert_eq!(f64::fill_value_to_json(-0.0), serde_json::json!(-0.0));
}

/// `bitround` on single values of a few types.
#[test]
fn bitround_values() {
    use zquant::{ArrayCodec, BitRound};
    fn round<T: DType>(x: T, keepbits: u64) -> T {
        let mut out = [T::default()];
        let codec = BitRound::<T>::new(keepbits).expect("valid keepbits");
        codec
            .encode_slice(&[x], &mut out)
            .expect("bitround never fails");
        out[0]
    }
    assert_eq!(round(255u8, 3), 224);
    assert_eq!(round(127i8, 3), 112);
    assert_eq!(round(-3i8, 1), -4);
    assert_eq!(round(0.1f32, 3).to_bits(), 0x3dd00000);
}
