// The struct's one field is its storage.
#[zquant::dtype(name = "pair", int(bits = 16, unsigned))]
pub struct Pair(u8, u8);

fn main() {}
