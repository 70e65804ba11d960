//! The Zarr v3 fill-value JSON encoding, both ways.
//!
//! The same encoding carries `scale_offset`'s `scale`/`offset` and `cast_value`'s
//! `scalar_map` entries. From the core spec (`data-types/index.rst`, "Permitted fill values"):
//!
//! > Integers: The value must be a JSON number with no fraction or exponent part that is
//! > within the representable range of the data type.
//!
//! > IEEE 754 floating point numbers: […] A JSON number, that will be rounded to the nearest
//! > representable value using the "round half to even" rule. […] `"Infinity"`,
//! > `"-Infinity"`, `"NaN"` […] `"0xYYYYYYYY"`, specifying the byte representation of the
//! > floating point number as an unsigned integer.
//!
//! Readings settled here (see docs/spec-readings.md): the hex form needs exactly
//! `2 × itemsize` digits (either case) and no bits above the type's width; `"nan"`,
//! `"+Infinity"`, booleans and `null` are invalid; a number beyond a float type's finite
//! range rounds to ±Infinity where the type has it and is an error otherwise; the small
//! float types take the float encoding (their READMEs say so), the sub-byte integers the
//! integer one.

use serde_json::Value;
use thiserror::Error;

use super::decimal::number_to_exact;
use super::{DType, Real};
use crate::number::exact::{Class, Exact};
use crate::number::int::int_value;
use crate::number::layout::{FloatLayout, IntLayout};
use crate::number::{OutOfRange, Rounding};

/// A JSON scalar that is not a valid fill-value encoding for a data type.
///
/// ```
/// use zquant::DType;
/// let e = u8::fill_value_from_json(&serde_json::json!(256)).unwrap_err();
/// assert!(matches!(e, zquant::dtype::FillValueError::NotRepresentable { dtype: "uint8", .. }));
/// assert!(half::f16::fill_value_from_json(&serde_json::json!("0x7e")).is_err()); // 2 hex digits, not 4
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum FillValueError {
    /// The JSON kind is wrong (a string where a number is needed, `true`, `null`, …).
    #[error("{dtype}: {found} is not a valid fill value ({expected})")]
    Invalid {
        /// Data type name.
        dtype: &'static str,
        /// What the encoding allows.
        expected: &'static str,
        /// The JSON given.
        found: String,
    },
    /// A number outside the type's range (or a non-integer for an integer type).
    #[error("{dtype}: {found} is not representable")]
    NotRepresentable {
        /// Data type name.
        dtype: &'static str,
        /// The JSON given.
        found: String,
    },
    /// A `"0x…"` string with the wrong number of digits or bits beyond the type.
    #[error("{dtype}: hex {found} must have exactly {digits} hex digits of a valid code")]
    BadHex {
        /// Data type name.
        dtype: &'static str,
        /// The JSON given.
        found: String,
        /// Required digit count (2 × itemsize).
        digits: usize,
    },
}

// The errors are built out of line: each is called from code compiled once per data type.
#[inline(never)]
fn invalid(dtype: &'static str, expected: &'static str, v: &Value) -> FillValueError {
    FillValueError::Invalid {
        dtype,
        expected,
        found: v.to_string(),
    }
}

#[inline(never)]
fn not_representable(dtype: &'static str, v: &Value) -> FillValueError {
    FillValueError::NotRepresentable {
        dtype,
        found: v.to_string(),
    }
}

/// Parse an integer fill value of layout `l`; returns the code.
///
/// # Errors
/// Anything but a JSON integer literal within range.
pub fn int_from_json(dtype: &'static str, l: &IntLayout, v: &Value) -> Result<u64, FillValueError> {
    const EXPECTED: &str = "a JSON integer with no fraction or exponent";
    let Value::Number(n) = v else {
        return Err(invalid(dtype, EXPECTED, v));
    };
    let mut text = n.to_string();
    // serde_json holds the literal `-0` as the double -0.0 unless it keeps number text.
    if text == "-0.0" && !super::decimal::numbers_keep_text() {
        text = "0".into();
    }
    if text.contains(['.', 'e', 'E']) {
        return Err(invalid(dtype, EXPECTED, v));
    }
    let x: i128 = text.parse().map_err(|_| not_representable(dtype, v))?;
    if x < l.min() || x > l.max() {
        return Err(not_representable(dtype, v));
    }
    Ok((x as u64) & l.mask())
}

/// Encode an integer code as JSON.
pub fn int_to_json(l: &IntLayout, bits: u64) -> Value {
    let x = int_value(l, bits);
    if l.signed {
        Value::from(x as i64)
    } else {
        Value::from(x as u64)
    }
}

/// Parse a hex string `"0x…"` of exactly `2 * size` digits into a code of at most `bits` bits.
fn parse_hex(
    dtype: &'static str,
    size: usize,
    bits: u32,
    s: &str,
    v: &Value,
) -> Result<u64, FillValueError> {
    let bad = || FillValueError::BadHex {
        dtype,
        found: v.to_string(),
        digits: 2 * size,
    };
    let digits = s.strip_prefix("0x").ok_or_else(bad)?;
    if digits.len() != 2 * size || size > 8 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let x = u64::from_str_radix(digits, 16).map_err(|_| bad())?;
    if bits < 64 && x >> bits != 0 {
        return Err(bad());
    }
    Ok(x)
}

/// Parse a float fill value for the real type `T` of layout `l`.
///
/// # Errors
/// See the module docs.
pub fn float_from_json<T: Real>(l: &FloatLayout, v: &Value) -> Result<T, FillValueError> {
    // Compiled once for all layouts: `T` only names the type and wraps the code.
    float_code_from_json(l, T::NAME, T::SIZE, T::BITS, v).map(T::from_bits)
}

/// [`float_from_json`]'s code, for a type named `dtype` of layout `l`, `size` bytes and
/// `bits` bits: a number is rounded to the layout (nearest-even; beyond the largest finite
/// value, to infinity in a layout with infinities, else an error).
fn float_code_from_json(
    l: &FloatLayout,
    dtype: &'static str,
    size: usize,
    bits: u32,
    v: &Value,
) -> Result<u64, FillValueError> {
    const EXPECTED: &str = "a JSON number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x…\"";
    let exact = match v {
        Value::String(s) => match s.as_str() {
            "NaN" => return l.nan_bits().ok_or_else(|| not_representable(dtype, v)),
            "Infinity" | "-Infinity" => {
                let inf = l.inf_bits().ok_or_else(|| not_representable(dtype, v))?;
                let sign = if s.starts_with('-') { l.sign_bit() } else { 0 };
                return Ok(inf | sign);
            }
            hex if hex.starts_with("0x") => return parse_hex(dtype, size, bits, hex, v),
            _ => return Err(invalid(dtype, EXPECTED, v)),
        },
        Value::Number(n) => number_to_exact(n).ok_or_else(|| invalid(dtype, EXPECTED, v))?,
        _ => return Err(invalid(dtype, EXPECTED, v)),
    };
    let oor = if l.inf {
        OutOfRange::Clamp
    } else {
        OutOfRange::Error
    };
    let (code, st) = crate::number::float::round_to_float(l, exact, Rounding::NearestEven, oor);
    if st.is_error() {
        return Err(not_representable(dtype, v));
    }
    Ok(code)
}

/// Encode a float code as JSON: finite values as numbers (exact, so they parse back to the
/// same code), the canonical NaN as `"NaN"`, any other NaN as `"0x…"`, infinities by name.
pub fn float_to_json(l: &FloatLayout, size: usize, bits: u64) -> Value {
    let x: Exact = crate::number::float::decode_float(l, bits);
    match x.class {
        Class::Nan => {
            if Some(bits) == l.nan_bits() {
                Value::from("NaN")
            } else {
                Value::from(format!("0x{:0width$x}", bits, width = 2 * size))
            }
        }
        Class::Inf => Value::from(if x.neg { "-Infinity" } else { "Infinity" }),
        Class::Zero | Class::Finite => {
            let f = x.to_f64();
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
    }
}

/// Parse a complex fill value `[re, im]`, each component in `C`'s float encoding.
///
/// # Errors
/// Anything but a two-element array of valid component encodings.
pub fn complex_from_json<C: DType>(
    dtype: &'static str,
    v: &Value,
) -> Result<(C, C), FillValueError> {
    // The array's shape and the error are checked and built once for all part types.
    let [re, im] = complex_parts(dtype, v)?;
    match (C::fill_value_from_json(re), C::fill_value_from_json(im)) {
        (Ok(re), Ok(im)) => Ok((re, im)),
        _ => Err(not_representable(dtype, v)),
    }
}

/// The two components of a complex fill value, `[re, im]`.
fn complex_parts<'v>(dtype: &'static str, v: &'v Value) -> Result<[&'v Value; 2], FillValueError> {
    match v {
        Value::Array(a) if a.len() == 2 => Ok([&a[0], &a[1]]),
        _ => Err(invalid(dtype, "a two-element array [re, im]", v)),
    }
}

/// Parse a `numpy.datetime64`/`numpy.timedelta64` fill value: an integer or `"NaT"`.
///
/// # Errors
/// Anything else.
pub fn datetime_from_json(dtype: &'static str, v: &Value) -> Result<i64, FillValueError> {
    if v.as_str() == Some("NaT") {
        return Ok(i64::MIN);
    }
    let l = IntLayout {
        bits: 64,
        signed: true,
    };
    int_from_json(dtype, &l, v)
        .map(|b| b as i64)
        .map_err(|_| invalid(dtype, "a JSON integer or \"NaT\"", v))
}

/// Encode a datetime/timedelta count: `"NaT"` for `i64::MIN`.
pub fn datetime_to_json(x: i64) -> Value {
    if x == i64::MIN {
        Value::from("NaT")
    } else {
        Value::from(x)
    }
}
