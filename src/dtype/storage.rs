//! The storage types a dtype's code can live in, and how to get their raw bits.
//!
//! The [`dtype`](crate::dtype) macro reads and writes every code through this trait, so one
//! expansion serves a newtype over `u8` and an impl for `half::f16` alike.

/// A plain-old-data storage type with a fixed-width bit pattern.
pub trait Storage: Copy + Default + PartialEq + Send + Sync + 'static {
    /// Size in bytes.
    const SIZE: usize;
    /// The bit pattern, zero-extended.
    fn to_raw(self) -> u64;
    /// From a bit pattern (truncated to the width).
    fn from_raw(raw: u64) -> Self;
}

macro_rules! storage_int {
    ($($t:ty => $u:ty),*) => {$(
        impl Storage for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn to_raw(self) -> u64 { self as $u as u64 }
            #[inline(always)]
            fn from_raw(raw: u64) -> Self { raw as $u as $t }
        }
    )*};
}
storage_int!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, i8 => u8, i16 => u16, i32 => u32, i64 => u64);

macro_rules! storage_float {
    ($($t:ty => $u:ty),*) => {$(
        impl Storage for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn to_raw(self) -> u64 { self.to_bits() as u64 }
            #[inline(always)]
            fn from_raw(raw: u64) -> Self { <$t>::from_bits(raw as $u) }
        }
    )*};
}
storage_float!(f32 => u32, f64 => u64, half::f16 => u16, half::bf16 => u16);

/// Read `n` little-endian bytes as a zero-extended `u64`.
#[inline(always)]
pub fn read_le_bits(bytes: &[u8], n: usize) -> u64 {
    let mut buf = [0u8; 8];
    let n = n.min(8).min(bytes.len());
    buf[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(buf)
}

/// Write the low `n` bytes of `bits` little-endian.
#[inline(always)]
pub fn write_le_bits(bits: u64, out: &mut [u8], n: usize) {
    let n = n.min(8).min(out.len());
    out[..n].copy_from_slice(&bits.to_le_bytes()[..n]);
}
