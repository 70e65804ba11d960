//! A `DynArray`'s elements as storage words: read from and written to little-endian
//! bytes, filled, zeroed, compared and gathered.
//!
//! Everything here runs once per storage width (`u8`, `u16`, `u32`, `u64`), not once per
//! data type: a data type only contributes its run-time layout (word width, words per
//! element, the bits of a word that hold a code). The one step that names the element
//! type, `DynArray::from_words` (`array.rs`), moves a word vector into a typed array without
//! touching the elements. Monomorphizing byte and layout code per data type makes the
//! library's release build 1.7x as slow (39 s against 22.5 s, measured), for no speed at
//! run time.

use crate::dtype::arith::float_same;
use crate::dtype::id::ElementWords;
use crate::dtype::{DTypeId, Kind};
use crate::number::layout::FloatLayout;
use crate::number::storage::{Word, WordBuf, Words};
use crate::number::storage::{read_le_bits, write_le_bits};

/// `$f::<W>($args)`, wrapped in a [`WordBuf`], with `W` the word type of the given width
/// in bits.
macro_rules! by_width {
    (bits $bits:expr, $f:ident($($arg:expr),*)) => {
        match $bits {
            8 => WordBuf::U8($f::<u8>($($arg),*)),
            16 => WordBuf::U16($f::<u16>($($arg),*)),
            32 => WordBuf::U32($f::<u32>($($arg),*)),
            _ => WordBuf::U64($f::<u64>($($arg),*)),
        }
    };
}

/// The bits of a storage word that hold a component's code. A sub-byte type's upper bits
/// are ignored on read and written as zero, as its data type spec says of the `bytes`
/// codec ("the upper `IIII` bits are ignored"), and as the typed `read_le`/`write_le` do.
pub(crate) fn code_mask(id: DTypeId) -> u64 {
    let bits = match id.kind() {
        Kind::Int(l) => l.bits,
        Kind::Float(l) | Kind::Complex(l) => l.bits(),
        Kind::DateTime | Kind::TimeDelta => 64,
    };
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// The words of little-endian element bytes (`id.size()` bytes each, `bytes.len()` a
/// multiple of it), codes masked.
pub(crate) fn words_from_le(id: DTypeId, bytes: &[u8]) -> WordBuf {
    let mask = code_mask(id);
    by_width!(bits id.word_bits(), read_words(bytes, mask))
}

fn read_words<W: Word>(bytes: &[u8], mask: u64) -> Vec<W> {
    let n = (W::BITS / 8) as usize;
    bytes
        .chunks_exact(n)
        .map(|b| W::from_u64(read_le_bits(b, n) & mask))
        .collect()
}

/// Native-endian element bytes of `id` as its words, in place: `None` when they are not
/// aligned for the word or not whole words, or when `id`'s codes leave bits of the word
/// unused (sub-byte types, whose upper bits [`words_from_le`] masks on read and
/// [`words_to_le`] clears on write).
#[cfg(feature = "zarrs")]
pub(crate) fn ne_words(id: DTypeId, bytes: &[u8]) -> Option<Words<'_>> {
    if code_mask(id) != width_mask(id.word_bits()) {
        return None;
    }
    Some(match id.word_bits() {
        8 => Words::U8(bytes),
        16 => Words::U16(crate::arch::words_of_bytes(bytes)?),
        32 => Words::U32(crate::arch::words_of_bytes(bytes)?),
        _ => Words::U64(crate::arch::words_of_bytes(bytes)?),
    })
}

/// [`ne_words`], for writing.
#[cfg(feature = "zarrs")]
pub(crate) fn ne_words_mut(
    id: DTypeId,
    bytes: &mut [u8],
) -> Option<crate::number::storage::WordsMut<'_>> {
    use crate::number::storage::WordsMut;
    if code_mask(id) != width_mask(id.word_bits()) {
        return None;
    }
    Some(match id.word_bits() {
        8 => WordsMut::U8(bytes),
        16 => WordsMut::U16(crate::arch::words_of_bytes_mut(bytes)?),
        32 => WordsMut::U32(crate::arch::words_of_bytes_mut(bytes)?),
        _ => WordsMut::U64(crate::arch::words_of_bytes_mut(bytes)?),
    })
}

#[cfg(feature = "zarrs")]
fn width_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Words as little-endian bytes, codes masked (the inverse of [`words_from_le`]).
pub(crate) fn words_to_le(id: DTypeId, words: Words<'_>) -> Vec<u8> {
    let mask = code_mask(id);
    match words {
        Words::U8(s) => write_words(s, mask),
        Words::U16(s) => write_words(s, mask),
        Words::U32(s) => write_words(s, mask),
        Words::U64(s) => write_words(s, mask),
    }
}

fn write_words<W: Word>(words: &[W], mask: u64) -> Vec<u8> {
    let n = (W::BITS / 8) as usize;
    let mut out = vec![0u8; words.len() * n];
    for (w, o) in words.iter().zip(out.chunks_exact_mut(n)) {
        write_le_bits(w.to_u64() & mask, o, n);
    }
    out
}

/// Whether two arrays' words (same type, C order) hold the same elements: equal codes, or
/// both NaN, per component (the conformance rule of [`crate::DType::same_as`]).
pub(crate) fn same_words(id: DTypeId, a: Words<'_>, b: Words<'_>) -> bool {
    let mask = code_mask(id);
    let float = match id.kind() {
        Kind::Float(l) | Kind::Complex(l) => Some(l),
        _ => None,
    };
    match (a, b) {
        (Words::U8(a), Words::U8(b)) => same(a, b, mask, float),
        (Words::U16(a), Words::U16(b)) => same(a, b, mask, float),
        (Words::U32(a), Words::U32(b)) => same(a, b, mask, float),
        (Words::U64(a), Words::U64(b)) => same(a, b, mask, float),
        _ => false,
    }
}

fn same<W: Word>(a: &[W], b: &[W], mask: u64, float: Option<FloatLayout>) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(&x, &y)| {
            let (x, y) = (x.to_u64() & mask, y.to_u64() & mask);
            x == y || float.is_some_and(|l| float_same(&l, x, y))
        })
}

/// The words of element `i` of `words` (`k` words per element, at most 2).
pub(crate) fn scalar_at(words: Words<'_>, k: usize, i: usize) -> Option<ElementWords> {
    let first = i.checked_mul(k)?;
    let mut x = [0u64; 2];
    for (j, o) in x.iter_mut().enumerate().take(k) {
        *o = words.get(first.checked_add(j)?)?;
    }
    Some(x)
}

/// `n` elements of `id`, each the element whose words are `x`.
///
/// # Panics
/// When `n` elements do not fit in memory (as `vec!` does).
pub(crate) fn filled(id: DTypeId, n: usize, x: ElementWords) -> Option<WordBuf> {
    let k = id.words_per_element().max(1);
    let x = &x[..k.min(2)];
    Some(match id.word_bits() {
        8 => WordBuf::U8(fill_words(n, x)?),
        16 => WordBuf::U16(fill_words(n, x)?),
        32 => WordBuf::U32(fill_words(n, x)?),
        _ => WordBuf::U64(fill_words(n, x)?),
    })
}

/// `None` when the words overflow the address range or do not fit in memory (instead of
/// panicking or aborting on the allocation).
fn fill_words<W: Word + crate::number::storage::Plain>(n: usize, x: &[u64]) -> Option<Vec<W>> {
    let x: Vec<W> = x.iter().map(|&o| W::from_u64(o)).collect();
    let len = n.checked_mul(x.len())?;
    if x.iter().all(|&w| w == W::default()) {
        return crate::arch::zeroed_vec(len);
    }
    let mut v = Vec::new();
    v.try_reserve_exact(len).ok()?;
    v.extend(x.iter().copied().cycle().take(len));
    Some(v)
}

/// `n` zero words of `bits` width in fresh memory that nothing has written
/// (`arch::zeroed_vec`); `None` when they do not fit in memory's address range.
pub(crate) fn fresh_zeroed(bits: u32, n: usize) -> Option<WordBuf> {
    Some(match bits {
        8 => WordBuf::U8(crate::arch::zeroed_vec(n)?),
        16 => WordBuf::U16(crate::arch::zeroed_vec(n)?),
        32 => WordBuf::U32(crate::arch::zeroed_vec(n)?),
        _ => WordBuf::U64(crate::arch::zeroed_vec(n)?),
    })
}

/// The words of a strided view, gathered in its logical (C) order.
pub(crate) fn gather<W: Word>(view: ndarray::ArrayViewD<'_, W>) -> WordBuf {
    W::into_buf(view.iter().copied().collect())
}
