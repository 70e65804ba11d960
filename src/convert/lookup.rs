//! The byte lookup: `out = table[code]` for inputs of one byte per element, over a
//! 256-entry table: a chain's elementwise run (`codec::chain`'s typed `Chain`, the run-time
//! chain of `dispatch/chain.rs`), `CodeTable` and fixedscaleoffset's decode. One function
//! for all, over the table's and output's storage words; for one-word elements it is
//! `arch::lookup_bytes`, which streams a large output. Here, in the cast engine, because
//! `CodeTable` uses it and the codecs sit above.

use crate::number::storage::{Word, Words, WordsMut};

/// `out[i] = table[codes[i]]` for elements of `k` words: `table` holds the 256 elements'
/// words (element `c` at `c * k .. c * k + k`), `out` `k` words per code (the shorter
/// length). An element of one word (a table of exactly 256 words) goes through
/// `arch::lookup_bytes_u8`/`_u16` (one- and two-byte words, AVX-512) or
/// `arch::lookup_bytes`, where a byte indexes the table without a bounds check.
#[inline(always)]
pub(crate) fn byte_lookup<W: Word>(table: &[W], k: usize, codes: &[u8], out: &mut [W]) {
    if let (1, Ok(t)) = (k, <&[W; 256]>::try_from(table)) {
        let done =
            match (W::words(t), W::words_mut(out)) {
                (Words::U8(t), WordsMut::U8(o)) => <&[u8; 256]>::try_from(t)
                    .is_ok_and(|t| crate::arch::lookup_bytes_u8(t, codes, o)),
                (Words::U16(t), WordsMut::U16(o)) => <&[u16; 256]>::try_from(t)
                    .is_ok_and(|t| crate::arch::lookup_bytes_u16(t, codes, o)),
                _ => false,
            };
        if !done {
            crate::arch::lookup_bytes(t, codes, out);
        }
    } else {
        for (c, d) in codes.iter().zip(out.chunks_exact_mut(k)) {
            let i = usize::from(*c) * k;
            d.copy_from_slice(&table[i..i + k]);
        }
    }
}
