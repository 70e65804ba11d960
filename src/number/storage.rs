//! Storage: the plain machine words a dtype's code lives in, and how to see a slice of
//! elements as a slice of those words.
//!
//! Every kernel of the crate is monomorphized on storage width (`u8`, `u16`, `u32`, `u64`),
//! never on the element type: `&[Float8E4M3]`, `&[u8]` and `&[i8]` are all seen as `&[u8]`
//! (see [`Plain`]), and the element's layout travels as a run-time [`Format`] value.
//!
//! [`Format`]: super::layout::Format

/// A plain-old-data storage type with a fixed-width bit pattern: what a `#[dtype]` newtype
/// wraps, or an existing type implemented as its own storage.
///
/// # Safety
/// `Self` must have exactly the size and alignment of [`Storage::Word`], no padding, and
/// every bit pattern of `Word` must be a valid `Self` (the crate reads and writes slices of
/// `Self` as slices of `Word`).
pub unsafe trait Storage: Copy + Default + PartialEq + Send + Sync + 'static {
    /// Size in bytes.
    const SIZE: usize;
    /// The unsigned machine word of the same width.
    type Word: Word;
    /// The bit pattern, zero-extended.
    fn to_raw(self) -> u64;
    /// From a bit pattern (truncated to the width).
    fn from_raw(raw: u64) -> Self;
}

/// An element type made of `WORDS` storage words and nothing else.
///
/// The [`dtype`](macro@crate::dtype) macro implements it (the one place that may): for a
/// `#[repr(transparent)]` newtype over a [`Storage`] type, for an existing `Storage` type,
/// and for complex types (`WORDS = 2`: real, then imaginary component).
///
/// # Safety
/// `Self` must have the size of `[Self::Word; Self::WORDS]`, an alignment at least that of
/// `Word`, no padding, and every bit pattern must be a valid `Self`.
pub unsafe trait Plain: Copy + Send + Sync + 'static {
    /// The storage word.
    type Word: Word;
    /// Words per element (2 for complex types, 1 otherwise).
    const WORDS: usize;
}

/// A complex type made of two `C` components (`re`, then `im`), for the macro's layout
/// check of `complex(C)` types.
///
/// # Safety
/// `Self` must be laid out as `[C; 2]` with no padding (e.g. a `#[repr(C)]` struct of two
/// `C` fields, or a `#[repr(transparent)]` newtype of one).
pub unsafe trait ComplexOf<C: Plain>: Copy + Send + Sync + 'static {}

mod sealed {
    pub trait Sealed {}
}

/// The four storage widths, `u8`, `u16`, `u32` and `u64`: what kernels are generic over.
pub trait Word:
    sealed::Sealed
    + Copy
    + Default
    + PartialEq
    + Eq
    + Ord
    + std::fmt::Debug
    + std::hash::Hash
    + Send
    + Sync
    + 'static
{
    /// Width in bits.
    const BITS: u32;
    /// Zero-extended to 64 bits.
    fn to_u64(self) -> u64;
    /// The low bits of `x`.
    fn from_u64(x: u64) -> Self;
    /// Tag a slice with its width.
    fn words(s: &[Self]) -> Words<'_>;
    /// Tag a mutable slice with its width.
    fn words_mut(s: &mut [Self]) -> WordsMut<'_>;
    /// The slice, if `w` holds this width.
    fn of(w: Words<'_>) -> Option<&[Self]>;
    /// The mutable slice, if `w` holds this width.
    fn of_mut(w: WordsMut<'_>) -> Option<&mut [Self]>;
    /// The buffer's words, if it holds this width.
    fn of_buf(w: &WordBuf) -> Option<&[Self]>;
    /// A buffer of these words.
    fn into_buf(v: Vec<Self>) -> WordBuf;
    /// The buffer's vector, if it holds this width (else the buffer, unchanged).
    ///
    /// # Errors
    /// The buffer, when it holds another width.
    fn from_buf(w: WordBuf) -> Result<Vec<Self>, WordBuf>;
}

/// A slice of storage words, tagged with its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Words<'a> {
    /// 8-bit words.
    U8(&'a [u8]),
    /// 16-bit words.
    U16(&'a [u16]),
    /// 32-bit words.
    U32(&'a [u32]),
    /// 64-bit words.
    U64(&'a [u64]),
}

/// A mutable slice of storage words, tagged with its width.
#[derive(Debug, PartialEq, Eq)]
pub enum WordsMut<'a> {
    /// 8-bit words.
    U8(&'a mut [u8]),
    /// 16-bit words.
    U16(&'a mut [u16]),
    /// 32-bit words.
    U32(&'a mut [u32]),
    /// 64-bit words.
    U64(&'a mut [u64]),
}

/// An owned buffer of storage words, tagged with its width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordBuf {
    /// 8-bit words.
    U8(Vec<u8>),
    /// 16-bit words.
    U16(Vec<u16>),
    /// 32-bit words.
    U32(Vec<u32>),
    /// 64-bit words.
    U64(Vec<u64>),
}

macro_rules! word {
    ($($t:ident => $v:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Word for $t {
            const BITS: u32 = $t::BITS;
            #[inline(always)]
            fn to_u64(self) -> u64 { self as u64 }
            #[inline(always)]
            fn from_u64(x: u64) -> Self { x as $t }
            #[inline(always)]
            fn words(s: &[Self]) -> Words<'_> { Words::$v(s) }
            #[inline(always)]
            fn words_mut(s: &mut [Self]) -> WordsMut<'_> { WordsMut::$v(s) }
            #[inline(always)]
            fn of(w: Words<'_>) -> Option<&[Self]> {
                match w { Words::$v(s) => Some(s), _ => None }
            }
            #[inline(always)]
            fn of_mut(w: WordsMut<'_>) -> Option<&mut [Self]> {
                match w { WordsMut::$v(s) => Some(s), _ => None }
            }
            #[inline(always)]
            fn of_buf(w: &WordBuf) -> Option<&[Self]> {
                match w { WordBuf::$v(s) => Some(s), _ => None }
            }
            #[inline(always)]
            fn into_buf(v: Vec<Self>) -> WordBuf { WordBuf::$v(v) }
            #[inline(always)]
            fn from_buf(w: WordBuf) -> Result<Vec<Self>, WordBuf> {
                match w { WordBuf::$v(v) => Ok(v), other => Err(other) }
            }
        }
    )*};
}
word!(u8 => U8, u16 => U16, u32 => U32, u64 => U64);

impl<'a> Words<'a> {
    /// Number of words.
    pub fn len(&self) -> usize {
        match self {
            Words::U8(s) => s.len(),
            Words::U16(s) => s.len(),
            Words::U32(s) => s.len(),
            Words::U64(s) => s.len(),
        }
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Width in bits.
    pub fn bits(&self) -> u32 {
        match self {
            Words::U8(_) => 8,
            Words::U16(_) => 16,
            Words::U32(_) => 32,
            Words::U64(_) => 64,
        }
    }

    /// Words `[start, end)`.
    ///
    /// # Panics
    /// When the range is out of bounds (callers slice within lengths they checked).
    pub fn sub(&self, start: usize, end: usize) -> Words<'a> {
        match *self {
            Words::U8(s) => Words::U8(&s[start..end]),
            Words::U16(s) => Words::U16(&s[start..end]),
            Words::U32(s) => Words::U32(&s[start..end]),
            Words::U64(s) => Words::U64(&s[start..end]),
        }
    }

    /// Word `i`, zero-extended.
    pub fn get(&self, i: usize) -> Option<u64> {
        match self {
            Words::U8(s) => s.get(i).map(|x| u64::from(*x)),
            Words::U16(s) => s.get(i).map(|x| u64::from(*x)),
            Words::U32(s) => s.get(i).map(|x| u64::from(*x)),
            Words::U64(s) => s.get(i).copied(),
        }
    }
}

impl WordsMut<'_> {
    /// Number of words.
    pub fn len(&self) -> usize {
        match self {
            WordsMut::U8(s) => s.len(),
            WordsMut::U16(s) => s.len(),
            WordsMut::U32(s) => s.len(),
            WordsMut::U64(s) => s.len(),
        }
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Width in bits.
    pub fn bits(&self) -> u32 {
        match self {
            WordsMut::U8(_) => 8,
            WordsMut::U16(_) => 16,
            WordsMut::U32(_) => 32,
            WordsMut::U64(_) => 64,
        }
    }

    /// Reborrow words `[start, end)`.
    ///
    /// # Panics
    /// When the range is out of bounds (callers slice within lengths they checked).
    pub fn sub(&mut self, start: usize, end: usize) -> WordsMut<'_> {
        match self {
            WordsMut::U8(s) => WordsMut::U8(&mut s[start..end]),
            WordsMut::U16(s) => WordsMut::U16(&mut s[start..end]),
            WordsMut::U32(s) => WordsMut::U32(&mut s[start..end]),
            WordsMut::U64(s) => WordsMut::U64(&mut s[start..end]),
        }
    }

    /// Read-only view.
    pub fn as_words(&self) -> Words<'_> {
        match self {
            WordsMut::U8(s) => Words::U8(s),
            WordsMut::U16(s) => Words::U16(s),
            WordsMut::U32(s) => Words::U32(s),
            WordsMut::U64(s) => Words::U64(s),
        }
    }

    /// Store `x` (truncated to the width) at `i`.
    ///
    /// # Panics
    /// When `i` is out of bounds.
    pub fn set(&mut self, i: usize, x: u64) {
        match self {
            WordsMut::U8(s) => s[i] = x as u8,
            WordsMut::U16(s) => s[i] = x as u16,
            WordsMut::U32(s) => s[i] = x as u32,
            WordsMut::U64(s) => s[i] = x,
        }
    }

    /// Copy `src` (same width and length) in.
    ///
    /// Returns `false` (copying nothing) when the widths or lengths differ.
    pub fn copy_from(&mut self, src: Words<'_>) -> bool {
        match (self, src) {
            (WordsMut::U8(d), Words::U8(s)) if d.len() == s.len() => d.copy_from_slice(s),
            (WordsMut::U16(d), Words::U16(s)) if d.len() == s.len() => d.copy_from_slice(s),
            (WordsMut::U32(d), Words::U32(s)) if d.len() == s.len() => d.copy_from_slice(s),
            (WordsMut::U64(d), Words::U64(s)) if d.len() == s.len() => d.copy_from_slice(s),
            _ => return false,
        }
        true
    }
}

impl WordBuf {
    /// `n` zero words of `bits` width (8, 16, 32 or 64; anything else is 64).
    pub fn zeroed(bits: u32, n: usize) -> WordBuf {
        match bits {
            8 => WordBuf::U8(vec![0; n]),
            16 => WordBuf::U16(vec![0; n]),
            32 => WordBuf::U32(vec![0; n]),
            _ => WordBuf::U64(vec![0; n]),
        }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.as_words().len()
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Borrow.
    pub fn as_words(&self) -> Words<'_> {
        match self {
            WordBuf::U8(s) => Words::U8(s),
            WordBuf::U16(s) => Words::U16(s),
            WordBuf::U32(s) => Words::U32(s),
            WordBuf::U64(s) => Words::U64(s),
        }
    }

    /// Borrow mutably.
    pub fn as_words_mut(&mut self) -> WordsMut<'_> {
        match self {
            WordBuf::U8(s) => WordsMut::U8(s),
            WordBuf::U16(s) => WordsMut::U16(s),
            WordBuf::U32(s) => WordsMut::U32(s),
            WordBuf::U64(s) => WordsMut::U64(s),
        }
    }
}

macro_rules! storage_int {
    ($($t:ty => $u:ty),*) => {$(
        // SAFETY: a primitive integer has the size and alignment of the unsigned integer of
        // its width, and every bit pattern is valid.
        unsafe impl Storage for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            type Word = $u;
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
        // SAFETY: IEEE floats (and `half`'s `#[repr(transparent)]` 16-bit types) have the size
        // and alignment of the unsigned integer of their width, and every bit pattern is valid.
        unsafe impl Storage for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            type Word = $u;
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
