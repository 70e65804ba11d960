//! Float narrowing: `f32`/`f64` to a narrower float format by integer arithmetic on the
//! bits (`convert::narrow`), and `f64 -> f32` nearest-even by the hardware conversion.

use crate::convert::blocks::by_blocks;
use crate::number::layout::FloatLayout;
use crate::number::storage::Word;
use crate::number::{OutOfRange, Rounding};

#[inline(always)]
pub(super) fn narrow<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    mode: Rounding,
    oor: OutOfRange,
    l: FloatLayout,
) -> usize {
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            let plan = crate::convert::narrow::plan(l, oor);
            if let Some(done) =
                crate::convert::narrow::f32_nearest_even(src, dst, mode, oor, l, plan)
            {
                return done;
            }
            by_blocks(
                src,
                dst,
                #[inline(always)]
                |s, d| !crate::convert::narrow::cast(s, d, mode, oor, l, plan),
            )
        },
    )
}

#[inline(always)]
pub(super) fn f64_to_f32_blocks<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    clamp: bool,
) -> usize {
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            by_blocks(
                src,
                dst,
                #[inline(always)]
                |s, d| f64_to_f32(s, d, clamp),
            )
        },
    )
}

/// `f64 -> f32`, nearest-even, by the hardware conversion. NaN (tested on the `f32`
/// lanes, where it stays NaN) becomes the canonical NaN. Without `clamp`, a block with an
/// infinite result is declined: an overflow, or an infinite input (which the reference
/// path converts to ±Inf too). Telling the two apart would need a test on the `f64` lanes
/// per element, for a case rare in data.
#[inline(always)]
fn f64_to_f32<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], clamp: bool) -> bool {
    const INF: u32 = 0x7f80_0000;
    let mut infinite = 0u32;
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        let y = f64::from_bits(s.to_u64()) as f32;
        let bits = y.to_bits();
        infinite |= u32::from(bits & 0x7fff_ffff == INF);
        let bits = if y.is_nan() { 0x7fc0_0000 } else { bits };
        *d = DW::from_u64(u64::from(bits));
    }
    // Under clamp an overflow goes to ±Inf, which is what the hardware produced.
    infinite == 0 || clamp
}
