//! Static iteration over the built-in real types.

use half::{bf16, f16};
use zquant::Real;
use zquant::dtype::{
    Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4, Float8E4M3, Float8E4M3B11Fnuz,
    Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz, Float8E8M0Fnu, Int2, Int4, UInt2, UInt4,
};

/// Something done once per type.
pub trait Visit {
    /// Called with each type in turn.
    fn visit<T: Real>(&mut self);
}

/// The built-in real types of at most 16 bits (20 types).
pub fn for_each_small<V: Visit>(v: &mut V) {
    v.visit::<Int2>();
    v.visit::<Int4>();
    v.visit::<i8>();
    v.visit::<i16>();
    v.visit::<UInt2>();
    v.visit::<UInt4>();
    v.visit::<u8>();
    v.visit::<u16>();
    v.visit::<f16>();
    v.visit::<bf16>();
    v.visit::<Float4E2M1Fn>();
    v.visit::<Float6E2M3Fn>();
    v.visit::<Float6E3M2Fn>();
    v.visit::<Float8E3M4>();
    v.visit::<Float8E4M3>();
    v.visit::<Float8E4M3B11Fnuz>();
    v.visit::<Float8E4M3Fnuz>();
    v.visit::<Float8E5M2>();
    v.visit::<Float8E5M2Fnuz>();
    v.visit::<Float8E8M0Fnu>();
}

/// All 26 built-in real types.
pub fn for_each_real<V: Visit>(v: &mut V) {
    for_each_small(v);
    v.visit::<i32>();
    v.visit::<i64>();
    v.visit::<u32>();
    v.visit::<u64>();
    v.visit::<f32>();
    v.visit::<f64>();
}
