// Inf and NaN share the all-ones exponent: a format with `inf` must use IEEE NaNs.
#[zquant::dtype(
    name = "float8_bad",
    float(exponent = 4, mantissa = 3, inf, nan = "negative_zero")
)]
pub struct Float8(u8);

fn main() {}
