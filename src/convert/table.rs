//! Conversion by table lookup, for sources of at most 16 bits: every code is converted once
//! by the reference path (scalar map first), then a slice is one lookup per element. Correct
//! by construction for every target, rounding mode and out-of-range rule.
//!
//! `cast_value` keeps the table of an at-most-8-bit side for the codec's lifetime, so that a
//! fused chain, which converts blocks of a few thousand elements, does not rebuild it per
//! block.

use super::{CastOptions, ElementFailure, Exact, Status};
use crate::dtype::Real;

/// Every code of `S` converted to `D`: the value, and whether its status is an error.
#[derive(Clone, PartialEq)]
pub struct CodeTable<D> {
    values: Box<[D]>,
    bad: Box<[bool]>,
    any_bad: bool,
    opts: CastOptions,
}

impl<D> std::fmt::Debug for CodeTable<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CodeTable({} codes, {:?})", self.values.len(), self.opts)
    }
}

impl<D: Real> CodeTable<D> {
    /// The table of `S -> D` under `opts`, `map` applied first. `S` must have at most 16
    /// bits (`None` otherwise).
    pub fn build<S: Real>(opts: CastOptions, map: &impl Fn(Exact) -> Option<D>) -> Option<Self> {
        if S::BITS > 16 {
            return None;
        }
        // Whole bytes: a sub-byte type's storage byte indexes the table as it is.
        let n = if S::BITS <= 8 { 256 } else { 65536 };
        let mut values = vec![D::default(); n];
        let mut bad = vec![false; n];
        let mut any_bad = false;
        for code in 0..n {
            let x = S::from_bits(code as u64).to_exact();
            let (v, st) = match map(x) {
                Some(v) => (v, Status::Exact),
                None => D::from_exact(x, opts),
            };
            values[code] = v;
            bad[code] = st.is_error();
            any_bad |= st.is_error();
        }
        Some(CodeTable {
            values: values.into_boxed_slice(),
            bad: bad.into_boxed_slice(),
            any_bad,
            opts,
        })
    }

    /// Convert `src` into `dst` (the shorter length of the two).
    ///
    /// # Errors
    /// The first element whose status is an error (`dst` is fully written, with that
    /// element's reference value in place).
    #[inline]
    pub fn apply<S: Real>(&self, src: &[S], dst: &mut [D]) -> Result<(), ElementFailure> {
        let mask = (self.values.len() - 1) as u64;
        for (s, d) in src.iter().zip(dst.iter_mut()) {
            *d = self.values[(s.to_bits() & mask) as usize];
        }
        if self.any_bad {
            if let Some(index) = src
                .iter()
                .position(|s| self.bad[(s.to_bits() & mask) as usize])
            {
                return Err(ElementFailure {
                    index,
                    status: D::from_exact(src[index].to_exact(), self.opts).1,
                });
            }
        }
        Ok(())
    }
}
