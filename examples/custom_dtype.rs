//! Define your own element types with `#[zquant::dtype(...)]` and use them with zquant's
//! typed conversion API, exactly like the built-in ones.
//!
//! Two types a user crate might need and the Zarr specs do not name:
//!
//! - `float8_e4m3fn`, the OCP 8-bit float E4M3FN (NVIDIA/AMD "FP8 E4M3"): bias 7, no
//!   infinities, NaN only at `S.1111.111`, so the largest finite value is 448. (Zarr's
//!   `float8_e4m3` is the IEEE-style variant: it has ±Inf at `0x78`/`0xf8` and stops at 240.)
//! - `uint12`, a 12-bit unsigned integer stored in a `u16` (e.g. raw camera data).
//!
//! Run with `cargo run --release --example custom_dtype`.

use zquant::dtype::Float8E4M3;
use zquant::{CastOptions, OutOfRange, Rounding, Status, cast, cast_slice};
use zquant::{DType, Kind, Real};

/// OCP FP8 E4M3FN: 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits, subnormals,
/// no infinity, NaN is `0x7f`/`0xff`. Range ±448.
#[zquant::dtype(
    name = "float8_e4m3fn",
    float(exponent = 4, mantissa = 3, bias = 7, nan = "all_ones")
)]
pub struct Float8E4M3Fn(pub u8);

/// A 12-bit unsigned integer in `[0, 4095]`, stored in the low bits of a `u16`.
#[zquant::dtype(name = "uint12", int(bits = 12, unsigned))]
pub struct UInt12(pub u16);

const MODES: [Rounding; 5] = Rounding::ALL;

/// One cell of a table: the code and its value, or why the cast failed.
fn cell<T: Real>((x, status): (T, Status)) -> String {
    if status.is_error() {
        return format!("{status:?}");
    }
    let v = x.to_exact().to_f64();
    let mark = match status {
        Status::Exact => "",
        Status::Inexact => "~",
        Status::Clamped => " clamped",
        Status::Wrapped => " wrapped",
        _ => "?",
    };
    let width = T::BITS.div_ceil(4) as usize;
    format!("{:#0w$x} = {v}{mark}", x.to_bits(), w = width + 2)
}

/// A table of `f64 -> T` under every rounding mode, one row per input.
fn rounding_table<T: Real>(inputs: &[f64], oor: OutOfRange) {
    print!("{:>12}", "f64 input");
    for m in MODES {
        print!(" | {:>22}", m.name());
    }
    println!();
    for &x in inputs {
        print!("{x:>12}");
        for m in MODES {
            print!(
                " | {:>22}",
                cell(cast::<f64, T>(x, CastOptions::new(m, oor)))
            );
        }
        println!();
    }
    println!();
}

/// A table of `f64 -> T` under each out-of-range rule (nearest-even).
fn range_table<T: Real>(inputs: &[f64]) {
    let rules = [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap];
    print!("{:>12}", "f64 input");
    for r in rules {
        print!(" | {:>24}", format!("{r:?}"));
    }
    println!();
    for &x in inputs {
        print!("{x:>12}");
        for r in rules {
            let opts = CastOptions::new(Rounding::NearestEven, r);
            print!(" | {:>24}", cell(cast::<f64, T>(x, opts)));
        }
        println!();
    }
    println!();
}

/// What the layout works out to, read back through the generic API.
fn describe<T: Real>() {
    let kind = match T::KIND {
        Kind::Int(l) => format!("int, {} bits, signed: {}", l.bits, l.signed),
        Kind::Float(l) => format!(
            "float, E{}M{} bias {}, inf: {}, NaN: {:?} (code {:?})",
            l.exponent_bits,
            l.mantissa_bits,
            l.bias,
            l.inf,
            l.nan,
            l.nan_bits().map(|b| format!("{b:#04x}"))
        ),
        other => format!("{other:?}"),
    };
    let codes = 1u64 << T::BITS;
    let values: Vec<f64> = (0..codes)
        .map(|c| T::from_bits(c).to_exact().to_f64())
        .filter(|v| v.is_finite())
        .collect();
    let max = values.iter().cloned().fold(f64::MIN, f64::max);
    let min_pos = values
        .iter()
        .cloned()
        .filter(|&v| v > 0.0)
        .fold(f64::MAX, f64::min);
    println!(
        "{:>14}: {} byte(s) per element, {} bits; {kind}",
        T::NAME,
        T::SIZE,
        T::BITS
    );
    println!(
        "{:>14}  largest finite {max}, smallest positive {min_pos}",
        ""
    );
}

fn json_row<T: DType>(text: &str) {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let out = match T::fill_value_from_json(&v) {
        Ok(x) => format!("{x:?}  -> back to JSON: {}", x.fill_value_to_json()),
        Err(e) => format!("error: {e}"),
    };
    println!("  {:>14} {text:>24}  ->  {out}", T::NAME);
}

fn main() {
    println!("== Layouts, as zquant derives them from the attribute ==");
    describe::<Float8E4M3Fn>();
    describe::<Float8E4M3>();
    describe::<UInt12>();
    println!();

    let ne = CastOptions::default(); // nearest-even, out-of-range is an error

    println!("== f64 -> float8_e4m3fn under the five rounding modes (~ = rounded) ==");
    rounding_table::<Float8E4M3Fn>(
        &[
            1.0,
            1.0625,
            1.1,
            -1.0625,
            -1.1,
            0.3,
            0.0009765625,
            -0.0001,
            448.0,
            460.0,
            464.0,
            f64::NAN,
        ],
        OutOfRange::Error,
    );

    println!("== out of range: float8_e4m3fn has no Inf, so clamp saturates at ±448 ==");
    range_table::<Float8E4M3Fn>(&[465.0, 1e6, -1e6, f64::INFINITY, f64::NAN]);
    println!("== the same inputs into zarr's float8_e4m3 (max 240, has ±Inf) ==");
    range_table::<Float8E4M3>(&[245.0, 248.0, 465.0, -1e6, f64::INFINITY]);

    println!("== float8_e4m3fn -> float32 (cast_slice), every kind of code ==");
    let codes = [
        0x00u8, 0x80, 0x01, 0x07, 0x08, 0x38, 0x39, 0x77, 0x7e, 0xfe, 0x7f, 0xff,
    ];
    let src: Vec<Float8E4M3Fn> = codes.iter().map(|&c| Float8E4M3Fn(c)).collect();
    let mut dst = vec![0f32; src.len()];
    cast_slice(&src, &mut dst, ne).expect("every float8_e4m3fn value is a float32");
    for (c, v) in codes.iter().zip(&dst) {
        println!("  {c:#04x} -> {v:e}  (float32 bits {:#010x})", v.to_bits());
    }
    println!();

    println!("== float8_e4m3fn <-> zarr's float8_e4m3: 448 does not fit below 240 ==");
    let src = [Float8E4M3Fn(0x38), Float8E4M3Fn(0x77), Float8E4M3Fn(0x7e)];
    let mut dst = [Float8E4M3::default(); 3];
    match cast_slice(&src, &mut dst, ne) {
        Ok(()) => println!("  ok: {dst:?}"),
        Err(e) => println!(
            "  error at element {} ({:?}): {:?} is out of range",
            e.index, e.status, src[e.index]
        ),
    }
    let clamp = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
    cast_slice(&src, &mut dst, clamp).unwrap();
    println!("  with clamp: {dst:?} (0x78 is +Inf: clamping into a type with Inf gives Inf)");
    println!();

    println!("== f64 -> uint12 under the five rounding modes ==");
    rounding_table::<UInt12>(
        &[2.5, 3.5, -0.4, 4094.5, 4095.4, 4095.5, 0.1],
        OutOfRange::Error,
    );
    println!("== out of range into uint12: error, clamp, wrap (mod 4096) ==");
    range_table::<UInt12>(&[4096.0, 5000.0, -1.0, -4097.0, f64::NAN]);

    println!("== uint12 -> float32 (cast_slice) ==");
    let src = [UInt12(0), UInt12(1), UInt12(2048), UInt12(4095)];
    let mut dst = [0f32; 4];
    cast_slice(&src, &mut dst, ne).unwrap();
    println!("  {src:?} -> {dst:?}");
    println!(
        "  uint12 {:?} is stored as the u16 {:#06x}; bits above 12 are ignored on read: {:?}",
        UInt12(4095),
        UInt12(4095).0,
        UInt12::read_le(&[0xff, 0xff])
    );
    println!();

    println!("== fill values (Zarr v3 JSON), parsed and written back ==");
    for t in [
        "448",
        "449",
        "464",
        "1e3",
        "-0.0",
        "\"NaN\"",
        "\"0xff\"",
        "\"Infinity\"",
        "\"0x7\"",
    ] {
        json_row::<Float8E4M3Fn>(t);
    }
    for t in ["4095", "4096", "-1", "12.5", "\"NaN\""] {
        json_row::<UInt12>(t);
    }
}
