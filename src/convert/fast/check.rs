//! The check the fast paths' tests share: a typed cast at every instruction-set level the
//! machine has, against the reference path.

use crate::convert::{cast_slice, cast_slice_reference};
use crate::dtype::Real;
use crate::isa::{Isa, with_max_isa};
use crate::number::{CastOptions, OutOfRange, Rounding};

/// For each `(from, to, len)` of `cuts` (unaligned starts, odd lengths), each mode of
/// `modes` and rule of `rules`: `src[from..from + len]` cast to `D` into an output at offset
/// `to`, at every level, gives the reference path's result and, up to its first failing
/// element (all of them when it succeeds), the same bits.
pub(super) fn every_level<S: Real, D: Real>(
    src: &[S],
    cuts: &[(usize, usize, usize)],
    modes: &[Rounding],
    rules: &[OutOfRange],
) {
    for &(from, to, len) in cuts {
        let s = &src[from..from + len];
        for &mode in modes {
            for &oor in rules {
                let opts = CastOptions::new(mode, oor);
                let mut want = vec![D::from_bits(0); len];
                let expected = cast_slice_reference(s, &mut want, opts);
                let upto = expected.as_ref().map_or_else(|e| e.index, |()| len);
                for level in Isa::available() {
                    let mut got = vec![D::from_bits(0); to + len];
                    let r = with_max_isa(level, || cast_slice(s, &mut got[to..], opts));
                    let what = format!(
                        "{} -> {} {level:?} {mode:?} {oor:?} {from}/{to}/{len}",
                        S::NAME,
                        D::NAME
                    );
                    assert_eq!(r, expected, "{what}");
                    let bad = (0..upto).find(|&i| got[to + i].to_bits() != want[i].to_bits());
                    assert_eq!(bad, None, "{what}: first differing element");
                }
            }
        }
    }
}
