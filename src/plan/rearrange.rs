//! The lossless rearrangements weighed with every candidate, before the caller's
//! compressor: `numcodecs.shuffle` (each element's bytes grouped by significance, so that
//! the high bytes of 16-bit codes, nearly constant, compress apart from the low ones) and
//! `numcodecs.delta` (differences of neighbouring integer codes, small on smooth fields).
//!
//! Both are in zarr-python's built-in codecs. zarrs has `numcodecs.shuffle` but not
//! `numcodecs.delta`, so a chain with delta lists zarr-python (and numcodecs) as its
//! readers only. Delta applies to integer codes alone: on floats numcodecs subtracts in
//! floating point, which does not invert exactly.

use std::borrow::Cow;

use serde_json::json;

use super::{Candidate, reader};
use crate::dtype::DTypeId;

/// One arrangement of a candidate's serialized bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rearrange {
    Plain,
    Shuffle,
    Delta,
    DeltaShuffle,
}

/// Bytes per element of `stored` (the chain's encoded type).
fn element_bytes(stored: DTypeId) -> usize {
    (stored.word_bits() as usize / 8) * stored.words_per_element()
}

/// NumPy's little-endian name of an unsigned integer type of `bytes` bytes.
fn numpy_uint(bytes: usize) -> &'static str {
    match bytes {
        1 => "|u1",
        2 => "<u2",
        4 => "<u4",
        _ => "<u8",
    }
}

impl Rearrange {
    /// The arrangements worth measuring for a chain storing `stored` (`packed`: through
    /// `packbits`, whose bytes no longer hold whole elements).
    pub(super) fn for_stored(stored: DTypeId, packed: bool) -> Vec<Rearrange> {
        let mut v = vec![Rearrange::Plain];
        if packed {
            return v;
        }
        let wide = element_bytes(stored) > 1;
        let codes = matches!(
            stored,
            DTypeId::UInt8 | DTypeId::UInt16 | DTypeId::UInt32 | DTypeId::UInt64
        );
        if wide {
            v.push(Rearrange::Shuffle);
        }
        if codes {
            v.push(Rearrange::Delta);
            if wide {
                v.push(Rearrange::DeltaShuffle);
            }
        }
        v
    }

    /// `bytes` (little-endian elements of `stored`, C order) as this arrangement stores
    /// them.
    pub(super) fn apply(self, bytes: &[u8], stored: DTypeId) -> Cow<'_, [u8]> {
        let e = element_bytes(stored);
        match self {
            Rearrange::Plain => Cow::Borrowed(bytes),
            Rearrange::Shuffle => Cow::Owned(shuffle(bytes, e)),
            Rearrange::Delta => Cow::Owned(delta(bytes, e)),
            Rearrange::DeltaShuffle => Cow::Owned(shuffle(&delta(bytes, e), e)),
        }
    }

    /// `row` (the plain chain) turned into this arrangement's: its name, its codecs and
    /// its readers.
    pub(super) fn annotate(self, row: &mut Candidate, stored: DTypeId) {
        let e = element_bytes(stored);
        let (d, s) = match self {
            Rearrange::Plain => return,
            Rearrange::Shuffle => (false, true),
            Rearrange::Delta => (true, false),
            Rearrange::DeltaShuffle => (true, true),
        };
        let mut suffix = Vec::new();
        if d {
            row.filters.push(json!({"name": "numcodecs.delta",
                "configuration": {"dtype": numpy_uint(e), "astype": numpy_uint(e)}}));
            row.readers
                .retain(|r| *r == reader::ZARR_PYTHON || *r == reader::NUMCODECS);
            suffix.push("delta");
        }
        if s {
            row.bytes_codecs
                .push(json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": e}}));
            suffix.push("shuffle");
        }
        row.name = format!("{} +{}", row.name, suffix.join("+"));
    }
}

/// numcodecs' shuffle: byte `j` of element `i` moves to `j * count + i`; the bytes past
/// the last whole element stay where they are.
pub(super) fn shuffle(bytes: &[u8], e: usize) -> Vec<u8> {
    if e <= 1 {
        return bytes.to_vec();
    }
    let count = bytes.len() / e;
    let mut out = vec![0u8; bytes.len()];
    for (i, el) in bytes.chunks_exact(e).enumerate() {
        for (j, &b) in el.iter().enumerate() {
            out[j * count + i] = b;
        }
    }
    out[count * e..].copy_from_slice(&bytes[count * e..]);
    out
}

/// numcodecs' delta on unsigned little-endian integers of `e` bytes: the first element,
/// then each element minus the one before, wrapping.
pub(super) fn delta(bytes: &[u8], e: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut prev = 0u64;
    let mask = if e >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * e)) - 1
    };
    for el in bytes.chunks_exact(e) {
        let mut w = [0u8; 8];
        w[..e].copy_from_slice(el);
        let x = u64::from_le_bytes(w);
        out.extend_from_slice(&(x.wrapping_sub(prev) & mask).to_le_bytes()[..e]);
        prev = x;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_groups_bytes_by_significance() {
        let b = [1, 2, 3, 4, 5, 6, 7];
        assert_eq!(shuffle(&b, 2), vec![1, 3, 5, 2, 4, 6, 7]);
        assert_eq!(shuffle(&b, 1), b.to_vec());
    }

    #[test]
    fn delta_wraps_like_numpy_diff() {
        let x: Vec<u8> = [5u16, 3, 65535, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let d: Vec<u16> = delta(&x, 2)
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(d, vec![5, 65534, 65532, 1]);
    }
}
