//! The conversion core: any supported real value to any supported real type, rounded once.
//!
//! A source element is first decoded to an [`Exact`] value (a table lookup for types of 8
//! bits or fewer, bit arithmetic otherwise), then rounded into the target by
//! [`float::round_to_float`] or [`int::round_to_int`]. Both work on integer bits only: there
//! is no detour through a narrower hardware float, so `f64 -> float16`, `f64 -> bfloat16` and
//! `f64 -> float8_*` are correctly rounded (libraries that go `f64 -> f32 -> f16` round
//! twice: `1.0 + 2^-11 + 2^-40` rounds up to `1.0 + 2^-10` in float16, but through float32 it
//! first becomes the tie `1.0 + 2^-11` and then rounds to even, `1.0`).
//!
//! Nothing here is monomorphized per (source, target) pair. The reference path
//! ([`exact_of`], [`round_into`]) takes the layouts as run-time [`Format`] values and is
//! compiled once; the fast kernels are generic over storage *words* only. A [`Caster`]
//! chooses, once, the fast path (or table) for its formats and options, and converts slices
//! of words, recording the first failing element instead of building a `Result` per
//! element. The typed functions ([`cast`], [`cast_slice`]) are thin views onto it.

mod blocks;
mod fast;
pub(crate) mod lookup;
pub(crate) use blocks::{FAST_BLOCK, by_blocks};
#[doc(hidden)]
pub use fast::Affine;
pub(crate) mod map;
mod narrow;
pub(crate) mod table;

pub use map::KeyMap;

use crate::number::exact::Exact;
use crate::number::{CastOptions, Status, float, int};

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::dtype::Real;
use crate::number::layout::Format;
use crate::number::storage::{Word, WordBuf, Words, WordsMut};
use table::CodeTable;

/// Convert one element, returning the result and its [`Status`].
///
/// When the status is an error the returned value is unspecified (but valid).
#[inline]
pub fn cast<S: Real, D: Real>(x: S, opts: CastOptions) -> (D, Status) {
    D::from_exact(x.to_exact(), opts)
}

/// The exact value of the code `bits` of format `f` (bits above the format's width are
/// ignored). The reference path's first step, compiled once for every format.
#[inline]
pub fn exact_of(f: Format, bits: u64) -> Exact {
    match f {
        Format::Int(l) => int::decode_int(&l, bits),
        Format::Float(l) => float::decode_float(&l, bits),
    }
}

/// `x` rounded once into format `f` under `opts`: the code and what happened. The
/// reference path's second step, compiled once for every format.
#[inline]
pub fn round_into(f: Format, x: Exact, opts: CastOptions) -> (u64, Status) {
    match f {
        Format::Int(l) => int::round_to_int(&l, x, opts.rounding, opts.out_of_range),
        Format::Float(l) => float::round_to_float(&l, x, opts.rounding, opts.out_of_range),
    }
}

/// The first element of a slice that could not be converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementFailure {
    /// Index in the slice.
    pub index: usize,
    /// Why it failed ([`Status::is_error`] is true).
    pub status: Status,
}

/// Elements per block of the mapped path (see [`Caster::run`]).
const MAP_BLOCK: usize = 256;

/// Once a caster with a 16-bit source has converted this many elements, it converts by a
/// 65536-entry table, built then and kept (its cost, 65536 reference conversions, is then
/// a small fraction of the work).
const TABLE16_MIN: usize = 1 << 18;

/// One conversion, `src -> dst` under fixed options and scalar map, with its kernel chosen
/// once: the table of an at-most-8-bit source, else a fast path over storage words (with
/// the reference path for the blocks it declines), else the reference path.
///
/// This is what `cast_value` runs in each direction, typed or built from metadata.
#[derive(Debug)]
pub struct Caster {
    src: Format,
    src_word: u32,
    dst: Format,
    dst_word: u32,
    opts: CastOptions,
    fast: fast::Fast,
    map: KeyMap,
    /// Every code of an at-most-8-bit source converted once (scalar map included).
    table: Option<CodeTable>,
    /// The 65536-entry table of a 16-bit source, built once this caster has converted
    /// [`TABLE16_MIN`] elements (in one call or many: a chain's blocks, a parallel call's
    /// chunks), so that its cost is amortized.
    table16: OnceLock<Option<CodeTable>>,
    /// Elements converted so far from a 16-bit source without the table.
    seen16: AtomicUsize,
}

impl Clone for Caster {
    fn clone(&self) -> Self {
        Caster {
            src: self.src,
            src_word: self.src_word,
            dst: self.dst,
            dst_word: self.dst_word,
            opts: self.opts,
            fast: self.fast,
            map: self.map.clone(),
            table: self.table.clone(),
            table16: self.table16.clone(),
            seen16: AtomicUsize::new(self.seen16.load(Ordering::Relaxed)),
        }
    }
}

impl PartialEq for Caster {
    fn eq(&self, other: &Self) -> bool {
        (self.src, self.dst, self.dst_word, self.opts, &self.map)
            == (other.src, other.dst, other.dst_word, other.opts, &other.map)
    }
}

impl Caster {
    /// A conversion from `src` codes stored in `src_word`-bit words to `dst` codes stored
    /// in `dst_word`-bit words, `map` applied first (its key format must be `src`).
    pub fn new(
        src: Format,
        src_word: u32,
        dst: Format,
        dst_word: u32,
        opts: CastOptions,
        map: KeyMap,
    ) -> Self {
        let fast = fast::select(src, src_word, dst, dst_word, opts);
        // A widening kernel (8 elements per vector) beats a table (a scalar load each).
        let widens = matches!(fast, fast::Fast::Widen(_)) && map.is_empty();
        let table = (src.bits() <= 8 && !widens)
            .then(|| CodeTable::build(src, dst, dst_word, opts, &map))
            .flatten();
        Caster {
            src,
            src_word,
            dst,
            dst_word,
            opts,
            fast,
            map,
            table,
            table16: OnceLock::new(),
            seen16: AtomicUsize::new(0),
        }
    }

    /// The source format.
    pub fn source(&self) -> Format {
        self.src
    }

    /// The target format.
    pub fn target(&self) -> Format {
        self.dst
    }

    /// The options.
    pub fn options(&self) -> CastOptions {
        self.opts
    }

    /// The scalar map.
    pub fn map(&self) -> &KeyMap {
        &self.map
    }

    /// Convert `src` into `dst` (the shorter length of the two).
    ///
    /// # Errors
    /// The first element whose status is an error; `dst` is then partly written. Words of
    /// other widths than the caster was made for convert nothing and report element 0 as
    /// out of range.
    pub fn run(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), ElementFailure> {
        use {Words as S, WordsMut as D};
        match (src, dst) {
            (S::U8(s), D::U8(d)) => self.run_words(s, d),
            (S::U8(s), D::U16(d)) => self.run_words(s, d),
            (S::U8(s), D::U32(d)) => self.run_words(s, d),
            (S::U8(s), D::U64(d)) => self.run_words(s, d),
            (S::U16(s), D::U8(d)) => self.run_words(s, d),
            (S::U16(s), D::U16(d)) => self.run_words(s, d),
            (S::U16(s), D::U32(d)) => self.run_words(s, d),
            (S::U16(s), D::U64(d)) => self.run_words(s, d),
            (S::U32(s), D::U8(d)) => self.run_words(s, d),
            (S::U32(s), D::U16(d)) => self.run_words(s, d),
            (S::U32(s), D::U32(d)) => self.run_words(s, d),
            (S::U32(s), D::U64(d)) => self.run_words(s, d),
            (S::U64(s), D::U8(d)) => self.run_words(s, d),
            (S::U64(s), D::U16(d)) => self.run_words(s, d),
            (S::U64(s), D::U32(d)) => self.run_words(s, d),
            (S::U64(s), D::U64(d)) => self.run_words(s, d),
        }
    }

    /// `scale_offset`'s encode `(x - offset) * scale` on `f32`/`f64` words, then this
    /// cast, fused into one loop where a kernel exists (a cast to an integer of at most 32
    /// bits without a scalar map). Returns how many elements were done: all, those before
    /// the first block the kernel declines (a NaN, an element out of range, ...: the caller
    /// runs the two stages on it), or 0 when no kernel applies.
    pub(crate) fn run_affine(&self, a: fast::Affine, src: Words<'_>, dst: WordsMut<'_>) -> usize {
        use {Words as S, WordsMut as D};
        let Some(l) = self.fast.float_to_int() else {
            return 0;
        };
        if !self.map.is_empty()
            || self.table.is_some()
            || src.bits() != self.src_word
            || dst.bits() != self.dst_word
        {
            return 0;
        }
        let (o, k) = (self.opts, a);
        match (src, dst) {
            (S::U64(s), D::U8(d)) => fast::Src::affine_to_int(s, d, o, l, k),
            (S::U64(s), D::U16(d)) => fast::Src::affine_to_int(s, d, o, l, k),
            (S::U64(s), D::U32(d)) => fast::Src::affine_to_int(s, d, o, l, k),
            (S::U32(s), D::U8(d)) => fast::Src::affine_to_int(s, d, o, l, k),
            (S::U32(s), D::U16(d)) => fast::Src::affine_to_int(s, d, o, l, k),
            (S::U32(s), D::U32(d)) => fast::Src::affine_to_int(s, d, o, l, k),
            _ => 0,
        }
    }

    /// Convert one code (a fill value, a scalar), in the caster's own word widths.
    ///
    /// # Errors
    /// The status of a failing conversion.
    pub fn run_one(&self, x: u64) -> Result<u64, Status> {
        let mut src = WordBuf::zeroed(self.src_word, 1);
        src.as_words_mut().set(0, x);
        let mut dst = WordBuf::zeroed(self.dst_word, 1);
        self.run(src.as_words(), dst.as_words_mut())
            .map_err(|f| f.status)?;
        Ok(dst.as_words().get(0).unwrap_or(0))
    }

    /// One pair of word widths. Out of line: [`Caster::run`] is then a 16-way jump, and
    /// LLVM optimizes 16 functions of one pair each rather than one function holding
    /// every pair's table, map and block bookkeeping (which took it superlinearly long).
    #[inline(never)]
    fn run_words<SW: fast::Src, DW: fast::Dst>(
        &self,
        src: &[SW],
        dst: &mut [DW],
    ) -> Result<(), ElementFailure> {
        let n = src.len().min(dst.len());
        let (src, dst) = (&src[..n], &mut dst[..n]);
        if SW::BITS != self.src_word || DW::BITS != self.dst_word {
            return Err(ElementFailure {
                index: 0,
                status: Status::OutOfRange,
            });
        }
        // A table's source has at most 16 bits (`CodeTable::build`), so its words are
        // `u8`/`u16` (the data types' own): the lookup is compiled only for those. A wider
        // word would take the paths below, which write the same codes.
        if const { SW::BITS <= 16 } {
            if let Some(t) = &self.table {
                return t.apply(src, dst);
            }
            if let Some(t) = self.table16(n) {
                return t.apply(src, dst);
            }
        }
        // A float -> integer path reads `f32`/`f64` words, or 16-bit ones from float16 and
        // bfloat16 (`fast::select`): the NaN kernel's loop is compiled only for the word
        // pairs that can take it.
        let nan_kernel = self
            .nan_kernel()
            .filter(|_| const { SW::BITS >= 16 && DW::BITS <= 32 });
        if self.map.is_empty() {
            self.blocks(src, dst, 0)
        } else if let Some((l, code)) = nan_kernel {
            self.nan_mapped(src, dst, l, code)
        } else {
            self.mapped(src, dst)
        }
    }

    /// The integer layout and NaN's code when the fast path maps NaN itself (a map whose
    /// only key is NaN, a float -> integer path, a target word of at most 32 bits): the one
    /// test of `run_words`' NaN kernel, which `table16` leaves to it.
    fn nan_kernel(&self) -> Option<(crate::number::layout::IntLayout, u64)> {
        let code = self.map.only_nan()?;
        let l = self.fast.maps_nan()?;
        (self.dst_word <= 32).then_some((l, code))
    }

    /// The lookup table of a source of at most 16 bits, once [`TABLE16_MIN`] elements have
    /// come through (`n` more now): built at most once, outside the per-word-pair code.
    #[inline(never)]
    fn table16(&self, n: usize) -> Option<&CodeTable> {
        // A fast kernel (integer -> integer, int16 -> float) beats a table lookup, which is
        // one scalar load per element: the table is for sources without one, or with a map
        // (but a NaN-only map on a path that maps NaN itself, `run_words`' NaN kernel).
        if self.src.bits() > 16
            || (self.fast != fast::Fast::None && self.map.is_empty())
            || self.nan_kernel().is_some()
        {
            return None;
        }
        let seen = self.seen16.fetch_add(n, Ordering::Relaxed) + n;
        if seen < TABLE16_MIN {
            return None;
        }
        self.table16
            .get_or_init(|| {
                CodeTable::build(self.src, self.dst, self.dst_word, self.opts, &self.map)
            })
            .as_ref()
    }

    /// The fast path, and the reference path for each block it declines.
    fn blocks<SW: fast::Src, DW: fast::Dst>(
        &self,
        src: &[SW],
        dst: &mut [DW],
        base: usize,
    ) -> Result<(), ElementFailure> {
        let n = src.len().min(dst.len());
        let mut start = 0;
        while start < n {
            start += fast::run(self.fast, self.opts, &src[start..n], &mut dst[start..n]);
            if start < n {
                let end = (start + FAST_BLOCK).min(n);
                reference_words(
                    &src[start..end],
                    &mut dst[start..end],
                    self.src,
                    self.dst,
                    self.opts,
                    None,
                )
                .map_err(|mut f| {
                    f.index += base + start;
                    f
                })?;
                start = end;
            }
        }
        Ok(())
    }

    /// `float -> integer` under a map whose only key is NaN: the kernel maps NaNs itself,
    /// in one pass; a block it declines (out of range, ±Inf, or a target it has no such
    /// kernel for) goes by the element-wise mapped path, which finds the first failure.
    fn nan_mapped<SW: fast::Src, DW: fast::Dst>(
        &self,
        src: &[SW],
        dst: &mut [DW],
        l: crate::number::layout::IntLayout,
        code: u64,
    ) -> Result<(), ElementFailure> {
        let n = src.len().min(dst.len());
        let mut start = 0;
        while start < n {
            let (s, d) = (&src[start..n], &mut dst[start..n]);
            start += match self.fast {
                fast::Fast::SmallFloatToInt(sl, _) => {
                    SW::small_float_to_int(s, d, self.opts, sl, l, Some(code))
                }
                _ => SW::float_to_int_nan(s, d, self.opts, l, code),
            };
            if start < n {
                let end = (start + FAST_BLOCK).min(n);
                let (s, d) = (&src[start..end], &mut dst[start..end]);
                reference_words(s, d, self.src, self.dst, self.opts, Some(&self.map)).map_err(
                    |mut f| {
                        f.index += start;
                        f
                    },
                )?;
                start = end;
            }
        }
        Ok(())
    }

    /// With a non-empty map: a block without a key (found on the bits) is a plain cast; a
    /// block with keys is cast with each key replaced by code 0, then the keys' values are
    /// written over. Only when that cast fails (the error may be the stand-in's) is the
    /// block redone by the element-wise mapped path, which also finds the first failing
    /// element.
    fn mapped<SW: fast::Src, DW: fast::Dst>(
        &self,
        src: &[SW],
        dst: &mut [DW],
    ) -> Result<(), ElementFailure> {
        let mut tmp = [SW::default(); MAP_BLOCK];
        for (k, (s, d)) in src
            .chunks(MAP_BLOCK)
            .zip(dst.chunks_mut(MAP_BLOCK))
            .enumerate()
        {
            let base = k * MAP_BLOCK;
            let hit = self.map.any_key(s);
            if !hit {
                self.blocks(s, d, base)?;
                continue;
            }
            let t = &mut tmp[..s.len()];
            self.map.stand_in(s, t);
            if self.blocks(t, d, base).is_ok() {
                self.map.write_keys(s, d);
            } else {
                reference_words(s, d, self.src, self.dst, self.opts, Some(&self.map)).map_err(
                    |mut f| {
                        f.index += base;
                        f
                    },
                )?;
            }
        }
        Ok(())
    }
}

/// The typed view of a slice as its storage words.
#[inline(always)]
pub(crate) fn words_of<T: crate::number::storage::Plain>(s: &[T]) -> Words<'_> {
    <T::Word as Word>::words(crate::arch::words(s))
}

/// The typed view of a mutable slice as its storage words.
#[inline(always)]
pub(crate) fn words_of_mut<T: crate::number::storage::Plain>(s: &mut [T]) -> WordsMut<'_> {
    <T::Word as Word>::words_mut(crate::arch::words_mut(s))
}

/// Convert `src` into `dst` (same length) element by element.
///
/// Uses the vectorizable fast paths where they apply and the reference path
/// ([`cast_slice_reference`]) elsewhere; the results are bit-identical. To convert many
/// slices under the same options, build a [`Caster`] once instead.
///
/// # Errors
/// Returns the first element whose status is an error; `dst` is then partly written.
#[inline]
pub fn cast_slice<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
) -> Result<(), ElementFailure> {
    caster::<S, D>(opts, KeyMap::empty(S::FORMAT)).run(words_of(src), words_of_mut(dst))
}

/// The [`Caster`] of `S -> D`.
fn caster<S: Real, D: Real>(opts: CastOptions, map: KeyMap) -> Caster {
    Caster::new(
        S::FORMAT,
        <S::Word as Word>::BITS,
        D::FORMAT,
        <D::Word as Word>::BITS,
        opts,
        map,
    )
}

/// The reference path: one conversion per element (after the scalar map), no fast path.
/// Every fast path is tested against it.
///
/// # Errors
/// Returns the first element whose status is an error; `dst` is then partly written.
pub fn cast_slice_reference<S: Real, D: Real>(
    src: &[S],
    dst: &mut [D],
    opts: CastOptions,
) -> Result<(), ElementFailure> {
    let (s, d) = (crate::arch::words(src), crate::arch::words_mut(dst));
    reference_words(s, d, S::FORMAT, D::FORMAT, opts, None)
}

/// The reference path over words: decode, map, round, per element.
pub(crate) fn reference_words<SW: Word, DW: Word>(
    src: &[SW],
    dst: &mut [DW],
    sf: Format,
    df: Format,
    opts: CastOptions,
    map: Option<&KeyMap>,
) -> Result<(), ElementFailure> {
    let mut first: Option<ElementFailure> = None;
    for (i, (s, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
        let (v, st) = reference_one(s.to_u64(), sf, df, opts, map);
        *d = DW::from_u64(v);
        if st.is_error() && first.is_none() {
            first = Some(ElementFailure {
                index: i,
                status: st,
            });
        }
    }
    match first {
        None => Ok(()),
        Some(f) => Err(f),
    }
}

/// [`reference_words`]' element: the code of `w` (a code of `sf`) in `df`, and its
/// status (a mapped key is exact). Kept out of line: the reference path's work is the exact
/// arithmetic, so a call per element costs little, and the loop above, compiled for each
/// of the 16 pairs of word widths, stays a few instructions.
#[inline(never)]
fn reference_one(
    w: u64,
    sf: Format,
    df: Format,
    opts: CastOptions,
    map: Option<&KeyMap>,
) -> (u64, Status) {
    let x = exact_of(sf, w);
    if let Some(v) = map.and_then(|m| m.lookup(x)) {
        return (v, Status::Exact);
    }
    round_into(df, x, opts)
}
