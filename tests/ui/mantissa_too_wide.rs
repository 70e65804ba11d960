// A mantissa wider than float64's 52 bits cannot be rounded into exactly.
#[zquant::dtype(name = "float_huge", float(exponent = 11, mantissa = 60))]
pub struct Huge(u64);

fn main() {}
