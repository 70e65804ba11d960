//! Every data type the Zarr specs name, each declared once with the [`dtype`](macro@crate::dtype)
//! macro users get, in its built-in form: the same expansion, less the link-time record of
//! declared types (the type table lists these).
//!
//! Layouts are copied from `data-types/*/README.md` of zarr-extensions; the doc comment of each
//! type quotes the lines that define it.

use crate::dtype::Complex;
use zquant_macros::builtin_dtype as dtype;

#[dtype(name = "int8", int(bits = 8, signed))]
impl DType for i8 {}
#[dtype(name = "int16", int(bits = 16, signed))]
impl DType for i16 {}
#[dtype(name = "int32", int(bits = 32, signed))]
impl DType for i32 {}
#[dtype(name = "int64", int(bits = 64, signed))]
impl DType for i64 {}
#[dtype(name = "uint8", int(bits = 8, unsigned))]
impl DType for u8 {}
#[dtype(name = "uint16", int(bits = 16, unsigned))]
impl DType for u16 {}
#[dtype(name = "uint32", int(bits = 32, unsigned))]
impl DType for u32 {}
#[dtype(name = "uint64", int(bits = 64, unsigned))]
impl DType for u64 {}

/// `int2`: "a signed integer in the range `[-2, 1]`", one per byte in the low 2 bits.
#[dtype(name = "int2", int(bits = 2, signed))]
pub struct Int2(pub u8);
/// `int4`: "a signed integer in the range `[-8, 7]`", one per byte in the low 4 bits
/// ("the upper `IIII` bits are ignored"; zquant writes them as zero).
#[dtype(name = "int4", int(bits = 4, signed))]
pub struct Int4(pub u8);
/// `uint2`: an unsigned integer in `[0, 3]`, one per byte in the low 2 bits.
#[dtype(name = "uint2", int(bits = 2, unsigned))]
pub struct UInt2(pub u8);
/// `uint4`: an unsigned integer in `[0, 15]`, one per byte in the low 4 bits.
#[dtype(name = "uint4", int(bits = 4, unsigned))]
pub struct UInt4(pub u8);

#[dtype(name = "float16", float(exponent = 5, mantissa = 10, inf))]
impl DType for half::f16 {}
#[dtype(name = "bfloat16", float(exponent = 8, mantissa = 7, inf))]
impl DType for half::bf16 {}
#[dtype(name = "float32", float(exponent = 8, mantissa = 23, inf))]
impl DType for f32 {}
#[dtype(name = "float64", float(exponent = 11, mantissa = 52, inf))]
impl DType for f64 {}

/// `float4_e2m1fn`: "1 sign bit, 2 exponent bits, with bias of 1, 1 mantissa bit. Extended
/// range: no infinity, no NaN. Subnormal numbers when biased exponent is 0." Max 6.0.
#[dtype(
    name = "float4_e2m1fn",
    float(exponent = 2, mantissa = 1, bias = 1, nan = "none")
)]
pub struct Float4E2M1Fn(pub u8);
/// `float6_e2m3fn`: 1 sign bit, 2 exponent bits (bias 1), 3 mantissa bits; no infinity, no
/// NaN. Max 7.5.
#[dtype(
    name = "float6_e2m3fn",
    float(exponent = 2, mantissa = 3, bias = 1, nan = "none")
)]
pub struct Float6E2M3Fn(pub u8);
/// `float6_e3m2fn`: 1 sign bit, 3 exponent bits (bias 3), 2 mantissa bits; no infinity, no
/// NaN. Max 28.
#[dtype(
    name = "float6_e3m2fn",
    float(exponent = 3, mantissa = 2, bias = 3, nan = "none")
)]
pub struct Float6E3M2Fn(pub u8);
/// `float8_e3m4`: 1 sign bit, 3 exponent bits (bias 3), 4 mantissa bits, "IEEE 754-compliant,
/// with NaN and +/-inf". `"NaN"` is `0x78`. Max 15.5.
#[dtype(name = "float8_e3m4", float(exponent = 3, mantissa = 4, bias = 3, inf))]
pub struct Float8E3M4(pub u8);
/// `float8_e4m3`: 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits, "IEEE
/// 754-compliant, with NaN and +/-inf". `"NaN"` is `0x7c`; +Inf is `0x78`, so the largest
/// finite value is 240 (not OCP E4M3FN's 448).
#[dtype(name = "float8_e4m3", float(exponent = 4, mantissa = 3, bias = 7, inf))]
pub struct Float8E4M3(pub u8);
/// `float8_e4m3b11fnuz`: 4 exponent bits with bias 11, 3 mantissa bits, "no infinity, NaN
/// represented by `0b1000'0000`", no negative zero.
#[dtype(
    name = "float8_e4m3b11fnuz",
    float(exponent = 4, mantissa = 3, bias = 11, nan = "negative_zero")
)]
pub struct Float8E4M3B11Fnuz(pub u8);
/// `float8_e4m3fnuz`: 4 exponent bits with bias 8, 3 mantissa bits; no infinity, NaN is
/// `0x80`, no negative zero. Max 240.
#[dtype(
    name = "float8_e4m3fnuz",
    float(exponent = 4, mantissa = 3, bias = 8, nan = "negative_zero")
)]
pub struct Float8E4M3Fnuz(pub u8);
/// `float8_e5m2`: 5 exponent bits (bias 15), 2 mantissa bits, IEEE 754 with NaN and ±Inf.
/// `"NaN"` is `0x7e`. Max 57344.
#[dtype(
    name = "float8_e5m2",
    float(exponent = 5, mantissa = 2, bias = 15, inf)
)]
pub struct Float8E5M2(pub u8);
/// `float8_e5m2fnuz`: 5 exponent bits with bias 16, 2 mantissa bits; no infinity, NaN is
/// `0x80`, no negative zero. Max 57344.
#[dtype(
    name = "float8_e5m2fnuz",
    float(exponent = 5, mantissa = 2, bias = 16, nan = "negative_zero")
)]
pub struct Float8E5M2Fnuz(pub u8);
/// `float8_e8m0fnu`: "No sign bit (unsigned). 8 exponent bits, with bias of 127. No mantissa
/// bits. No zero, no infinity, NaN represented by `0b1111'1111`. No subnormal numbers."
/// Values are 2^-127 (`0x00`) to 2^127 (`0xfe`).
#[dtype(
    name = "float8_e8m0fnu",
    float(
        exponent = 8,
        mantissa = 0,
        bias = 127,
        nan = "all_ones",
        unsigned,
        no_subnormals
    )
)]
pub struct Float8E8M0Fnu(pub u8);

#[dtype(name = "complex64", complex(f32))]
impl DType for Complex<f32> {}
#[dtype(name = "complex128", complex(f64))]
impl DType for Complex<f64> {}

/// `complex_float16`: two float16 components.
#[dtype(name = "complex_float16", complex(half::f16))]
impl DType for Complex<half::f16> {}
/// `complex_bfloat16`: two bfloat16 components.
#[dtype(name = "complex_bfloat16", complex(half::bf16))]
impl DType for Complex<half::bf16> {}
/// `complex_float32`: the storage of `complex64` under its extension name.
#[dtype(name = "complex_float32", complex(f32))]
pub struct ComplexFloat32(pub Complex<f32>);
/// `complex_float64`: the storage of `complex128` under its extension name.
#[dtype(name = "complex_float64", complex(f64))]
pub struct ComplexFloat64(pub Complex<f64>);

#[dtype(name = "complex_float4_e2m1fn", complex(Float4E2M1Fn))]
impl DType for Complex<Float4E2M1Fn> {}
#[dtype(name = "complex_float6_e2m3fn", complex(Float6E2M3Fn))]
impl DType for Complex<Float6E2M3Fn> {}
#[dtype(name = "complex_float6_e3m2fn", complex(Float6E3M2Fn))]
impl DType for Complex<Float6E3M2Fn> {}
#[dtype(name = "complex_float8_e3m4", complex(Float8E3M4))]
impl DType for Complex<Float8E3M4> {}
#[dtype(name = "complex_float8_e4m3", complex(Float8E4M3))]
impl DType for Complex<Float8E4M3> {}
#[dtype(name = "complex_float8_e4m3b11fnuz", complex(Float8E4M3B11Fnuz))]
impl DType for Complex<Float8E4M3B11Fnuz> {}
#[dtype(name = "complex_float8_e4m3fnuz", complex(Float8E4M3Fnuz))]
impl DType for Complex<Float8E4M3Fnuz> {}
#[dtype(name = "complex_float8_e5m2", complex(Float8E5M2))]
impl DType for Complex<Float8E5M2> {}
#[dtype(name = "complex_float8_e5m2fnuz", complex(Float8E5M2Fnuz))]
impl DType for Complex<Float8E5M2Fnuz> {}
#[dtype(name = "complex_float8_e8m0fnu", complex(Float8E8M0Fnu))]
impl DType for Complex<Float8E8M0Fnu> {}

/// `numpy.datetime64`: an int64 count of `scale_factor × unit` since the Unix epoch;
/// `i64::MIN` is NaT. The unit and scale factor live in the array metadata
/// ([`crate::metadata::DataType`]), not in the element type.
#[dtype(name = "numpy.datetime64", datetime)]
pub struct DateTime64(pub i64);
/// `numpy.timedelta64`: an int64 count of `scale_factor × unit`; `i64::MIN` is NaT.
#[dtype(name = "numpy.timedelta64", timedelta)]
pub struct TimeDelta64(pub i64);
