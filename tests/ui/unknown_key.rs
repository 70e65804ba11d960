// `mantisa` is not a float key (typo of `mantissa`).
#[zquant::dtype(name = "float8_e4m3fn", float(exponent = 4, mantisa = 3, bias = 7))]
pub struct Float8(u8);

fn main() {}
