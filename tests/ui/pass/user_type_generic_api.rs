// A user's dtypes work with zquant's generic API, exactly like the built-in ones.
use zquant::{CastOptions, OutOfRange, Rounding, Status, cast, cast_slice};
use zquant::dtype::Float8E4M3;
use zquant::{DType, Kind, Real};

#[zquant::dtype(
    name = "float8_e4m3fn",
    float(exponent = 4, mantissa = 3, bias = 7, nan = "all_ones")
)]
pub struct Fp8(pub u8);

#[zquant::dtype(name = "uint12", int(bits = 12, unsigned))]
pub struct UInt12(pub u16);

/// f64 -> T -> f64 through the slice API.
fn through<T: Real>(xs: &[f64]) -> Vec<f64> {
    let mut mid = vec![T::default(); xs.len()];
    cast_slice(xs, &mut mid, CastOptions::default()).unwrap();
    let mut back = vec![0f64; xs.len()];
    cast_slice(&mid, &mut back, CastOptions::default()).unwrap();
    back
}

/// Anything generic over `DType` accepts them too.
fn fill<T: DType>(json: &str) -> T {
    T::fill_value_from_json(&serde_json::from_str(json).unwrap()).unwrap()
}

fn main() {
    assert_eq!(through::<Fp8>(&[1.0, -448.0, 0.1]), vec![1.0, -448.0, 0.1015625]);
    assert_eq!(through::<UInt12>(&[0.0, 4095.0, 2.5]), vec![0.0, 4095.0, 2.0]);
    assert!(matches!(Fp8::KIND, Kind::Float(l) if l.bits() == 8));
    assert!(matches!(UInt12::KIND, Kind::Int(l) if l.bits == 12 && !l.signed));

    // Between user types and built-in ones.
    let (_, st): (Float8E4M3, _) = cast(Fp8(0x7e), CastOptions::default());
    assert_eq!(st, Status::OutOfRange, "448 is beyond float8_e4m3's 240");
    let (x, _): (Float8E4M3, _) = cast(Fp8(0x77), CastOptions::default());
    assert_eq!(x, Float8E4M3(0x77));
    let clamp = CastOptions::new(Rounding::TowardsZero, OutOfRange::Clamp);
    let (x, st): (UInt12, _) = cast(Fp8(0x7e), clamp);
    assert_eq!((x, st), (UInt12(448), Status::Exact));

    assert_eq!(fill::<Fp8>("\"NaN\""), Fp8(0x7f));
    assert_eq!(fill::<UInt12>("4095"), UInt12(4095));
    assert!(UInt12::fill_value_from_json(&serde_json::json!(4096)).is_err());
    assert_eq!(Fp8(0x7e).fill_value_to_json(), serde_json::json!(448.0));
    assert_eq!(Fp8::NAME, "float8_e4m3fn");
}
