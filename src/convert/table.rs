//! Conversion by table lookup, for sources of at most 16 bits: every code is converted once
//! by the reference path (scalar map first), then a slice is one lookup per element. Correct
//! by construction for every target, rounding mode and out-of-range rule.
//!
//! A [`Caster`](super::Caster) keeps the table of an at-most-8-bit source for its lifetime,
//! and builds the 65536-entry table of a 16-bit source the first time a long slice asks
//! for it, so that a fused chain, which converts blocks of a few thousand elements, and the
//! chunks of a parallel call do not rebuild it.

use super::map::KeyMap;
use super::{ElementFailure, exact_of, round_into};
use crate::number::CastOptions;
use crate::number::layout::Format;
use crate::number::storage::{Word, WordBuf};

/// Every code of a source format converted to a target format: the value, and whether its
/// status is an error.
#[derive(Clone, PartialEq)]
pub struct CodeTable {
    values: WordBuf,
    /// 1 where the code's status is an error, else 0 (bytes, for `arch::first_flagged`).
    bad: Box<[u8]>,
    any_bad: bool,
    src: Format,
    dst: Format,
    opts: CastOptions,
}

impl std::fmt::Debug for CodeTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CodeTable({} codes, {:?} -> {:?}, {:?})",
            self.values.len(),
            self.src,
            self.dst,
            self.opts
        )
    }
}

impl CodeTable {
    /// The table of `src -> dst` under `opts`, `map` applied first, with values stored in
    /// words of `dst_word_bits`. `src` must have at most 16 bits (`None` otherwise).
    pub fn build(
        src: Format,
        dst: Format,
        dst_word_bits: u32,
        opts: CastOptions,
        map: &KeyMap,
    ) -> Option<Self> {
        if src.bits() > 16 {
            return None;
        }
        // Whole bytes: a sub-byte type's storage byte indexes the table as it is.
        let n = if src.bits() <= 8 { 256 } else { 65536 };
        let mut values = WordBuf::zeroed(dst_word_bits, n);
        let mut bad = vec![0u8; n];
        let mut any_bad = false;
        let mut out = values.as_words_mut();
        for (code, b) in bad.iter_mut().enumerate() {
            let x = exact_of(src, code as u64);
            let (v, err) = match map.lookup(x) {
                Some(v) => (v, false),
                None => {
                    let (v, st) = round_into(dst, x, opts);
                    (v, st.is_error())
                }
            };
            out.set(code, v);
            *b = u8::from(err);
            any_bad |= err;
        }
        Some(CodeTable {
            values,
            bad: bad.into_boxed_slice(),
            any_bad,
            src,
            dst,
            opts,
        })
    }

    /// Convert `src` into `dst` (the shorter length of the two).
    ///
    /// # Errors
    /// The first element whose status is an error (`dst` is fully written, with that
    /// element's reference value in place).
    #[inline]
    pub fn apply<SW: Word, DW: Word>(
        &self,
        src: &[SW],
        dst: &mut [DW],
    ) -> Result<(), ElementFailure> {
        let Some(values) = DW::of_buf(&self.values) else {
            // Built for another target width: the caller's bug, reported as the reference
            // path would (every element redone by it).
            return super::reference_words(src, dst, self.src, self.dst, self.opts, None);
        };
        let mask = (values.len() - 1) as u64;
        match (
            <u8 as Word>::of(SW::words(src)),
            <&[DW; 256]>::try_from(values),
        ) {
            // A one-byte source: the words' lookup, which streams a large output.
            (Some(codes), Ok(table)) => super::lookup::byte_lookup(table, 1, codes, dst),
            _ => {
                for (s, d) in src.iter().zip(dst.iter_mut()) {
                    *d = values[(s.to_u64() & mask) as usize];
                }
            }
        }
        if self.any_bad
            && let Some(index) = self.first_bad(src, mask)
        {
            let x = exact_of(self.src, src[index].to_u64());
            return Err(ElementFailure {
                index,
                status: round_into(self.dst, x, self.opts).1,
            });
        }
        Ok(())
    }

    /// The index of the first element of `src` whose status is an error.
    fn first_bad<SW: Word>(&self, src: &[SW], mask: u64) -> Option<usize> {
        if let (Some(codes), Ok(flags)) = (
            <u8 as Word>::of(SW::words(src)),
            <&[u8; 256]>::try_from(&self.bad[..]),
        ) && let Ok(first) = crate::arch::first_flagged(flags, codes)
        {
            return first;
        }
        src.iter()
            .position(|s| self.bad[(s.to_u64() & mask) as usize] != 0)
    }
}
