//! Integer to `f32`/`f64`, nearest-even: Rust's `as`, which rounds once, in `i32` lanes
//! where the values fit.

use super::int_to_int::{value_i32, value_i64};
use crate::number::layout::IntLayout;
use crate::number::storage::Word;

/// Integer to `f32`/`f64` (by target word width), nearest-even: Rust's integer-to-float
/// `as` rounds once, to nearest-even. One loop per case (not a `match` per element, which
/// keeps the loop scalar), and an `i32` source where the values fit one: x86 converts `i32`
/// lanes (`vcvtdq2ps`/`vcvtdq2pd`) but not `i64` ones. `false` (nothing done) for 8-bit
/// sources, which are declined.
#[inline(always)]
pub(super) fn int_to_hw_float<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    sl: IntLayout,
) -> bool {
    macro_rules! each {
        (|$b:ident| $e:expr) => {
            crate::arch::vectorized(
                #[inline(always)]
                // `move`: the invariants are copied into the closure, not read through
                // references that LLVM cannot tell from `dst` (which keeps a loop scalar).
                move || {
                    for (s, d) in src.iter().zip(dst.iter_mut()) {
                        let $b = s.to_u64();
                        *d = DW::from_u64($e);
                    }
                },
            )
        };
    }
    let to_f64 = DW::BITS == 64;
    let signed = sl.signed;
    // Sources fill their words (`select`), so the width tests are on `SW::BITS`, constants:
    // each source word compiles only the loops it can reach (no `uint64` loop for 32-bit
    // words, no `i32` one for 64-bit words). 8-bit sources are declined: the `Caster`
    // converts every one by its 256-entry table.
    if const { SW::BITS == 8 } {
        return false;
    }
    if const { SW::BITS <= 16 } || (const { SW::BITS == 32 } && signed) {
        if to_f64 {
            each!(|b| (value_i32(b as u32, 32 - SW::BITS.min(32), signed) as f64).to_bits());
        } else {
            each!(|b| u64::from(
                (value_i32(b as u32, 32 - SW::BITS.min(32), signed) as f32).to_bits()
            ));
        }
    } else if const { SW::BITS == 64 } && !signed {
        if to_f64 {
            each!(|b| (b as f64).to_bits());
        } else {
            each!(|b| u64::from((b as f32).to_bits()));
        }
    } else if to_f64 {
        each!(|b| (value_i64(b, 64 - SW::BITS, signed) as f64).to_bits());
    } else {
        each!(|b| u64::from((value_i64(b, 64 - SW::BITS, signed) as f32).to_bits()));
    }
    true
}
