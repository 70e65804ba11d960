// Every dtype needs its Zarr name.
#[zquant::dtype(float(exponent = 4, mantissa = 3, bias = 7, nan = "all_ones"))]
pub struct Float8(u8);

fn main() {}
