//! NumPy's cast between two of its numeric types (`arr.astype(t)`, casting `"unsafe"`), one
//! loop per pair of types that write different words (or two through float64): what
//! `numcodecs.astype` runs both ways and `numcodecs.quantize` decodes with.

use crate::codec::fixed_scale_offset::NumpyNumber;
use crate::codec::fixed_scale_offset::numpy::with_numpy;
use crate::dtype::{DTypeId, Kind};
use crate::number::storage::{Word, Words, WordsMut};

/// NumPy's cast of one element on x86-64: float sources through their exact float64 value
/// (nearest-even into floats, the `cvttsd2si` rule of
/// [`float_to_int_x86`](crate::codec::fixed_scale_offset::numpy_number::float_to_int_x86) into integers); integer
/// sources through their exact value (the low bits into integers, nearest-even into floats:
/// LLVM folds the widening to `i128` away, so `i64 -> f32` is one correctly rounded
/// conversion, not two roundings).
///
/// A NaN into or out of float16 takes NumPy's bit formulas (`npy_floatbits_to_halfbits`
/// and its kin): the sign and the significand's top bits, shifted, never quieted (a
/// signaling NaN stays signaling; a payload that shifts out to zero becomes `1`), where the
/// hardware conversion through float64 would quiet it.
#[inline(always)]
pub(crate) fn cast_one<S: NumpyNumber, D: NumpyNumber>(x: S) -> D {
    if S::IS_FLOAT {
        let v = x.to_f64();
        let half = size_of::<S>() == 2 || size_of::<D>() == 2;
        if D::IS_FLOAT && half && v.is_nan() {
            return D::from_bits(numpy_nan_bits(size_of::<S>(), size_of::<D>(), x.to_bits()));
        }
        if !D::IS_FLOAT && converts_through_i32::<D>() {
            // `cvttsd2si` into 32 bits, then the low bits: written as a range test and a
            // conversion on the `f64` lanes, which LLVM packs into `cvttpd2dq`, where
            // `float_to_int_x86`'s scalar form stays one element at a time.
            return D::from_i128(i128::from(crate::arch::truncate_or_indefinite(v)));
        }
        D::from_f64(v)
    } else {
        D::from_i128(x.to_i128())
    }
}

/// Whether NumPy's C cast into the integer type `D` is a 32-bit `cvttsd2si` (`int8`,
/// `uint8`, `int16`, `uint16`, `int32`; `uint32` and the 64-bit types take the 64-bit one,
/// see [`float_to_int_x86`](crate::codec::fixed_scale_offset::numpy_number::float_to_int_x86)). Constant per `D`.
#[inline(always)]
fn converts_through_i32<D: NumpyNumber>() -> bool {
    let signed = D::from_i128(-1).to_i128() < 0;
    size_of::<D>() < 4 || (size_of::<D>() == 4 && signed)
}

/// NumPy's NaN between float types of `from` and `to` bytes (2, 4 or 8): the sign, the
/// exponent all ones, the significand shifted (at least `1` when narrowed).
#[inline(always)]
fn numpy_nan_bits(from: usize, to: usize, bits: u64) -> u64 {
    let mantissa = |bytes: usize| match bytes {
        2 => 10,
        4 => 23,
        _ => 52,
    };
    let (fb, fm, tb, tm) = (8 * from, mantissa(from), 8 * to, mantissa(to));
    let sign = (bits >> (fb - 1)) & 1;
    let sig = bits & ((1u64 << fm) - 1);
    let sig = if tm >= fm {
        sig << (tm - fm)
    } else {
        (sig >> (fm - tm)).max(1)
    };
    (sign << (tb - 1)) | ((1u64 << (tb - 1)) - (1u64 << tm)) | sig
}

/// A kernel's input and output words.
type WordSlices<'a, A, B> = (&'a [A], &'a mut [B]);

/// `src` and `dst` as words of `A` and `B` (a pair's `S::Word` and `D::Word`); `None` for
/// words of other widths. Generic over the words, not the types: 16 instances at most
/// rather than one per pair of types.
#[inline(always)]
fn word_slices<'a, A: Word, B: Word>(
    src: Words<'a>,
    dst: WordsMut<'a>,
) -> Option<WordSlices<'a, A, B>> {
    Some((A::of(src)?, B::of_mut(dst)?))
}

/// `dst[i] = f(src[i])` over the shorter length, compiled with AVX2 where the CPU has it
/// ([`crate::arch::vectorized`]): the one element loop of both codecs, `f` (an
/// `#[inline(always)]` closure, its parameters captured as loop invariants) inlined into
/// it. Words of other widths than `S`'s and `D`'s convert nothing.
#[inline(always)]
pub(crate) fn map_words<S: NumpyNumber, D: NumpyNumber>(
    src: Words<'_>,
    dst: WordsMut<'_>,
    f: impl Fn(S) -> D,
) {
    let Some((src, dst)) = word_slices::<S::Word, D::Word>(src, dst) else {
        return;
    };
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                *y = <D::Word as Word>::from_u64(f(S::from_bits(x.to_u64())).to_bits());
            }
        },
    );
}

/// `dst[i] = cast(src[i])` over the shorter length. From `float32`/`float64` into the
/// types converted through 32 bits ([`converts_through_i32`]), AVX2 and AVX-512 run the
/// arch layer's kernels ([`crate::arch::float_to_i32_low_bits`]: the conversion's own
/// indefinite value, where portable code needs a range test and a blend per vector),
/// which write the same words as `cast_one`; without them, the plain loop (no AVX2 build
/// of it, which would never run).
#[inline(never)]
fn cast_loop<S: NumpyNumber, D: NumpyNumber>(src: Words<'_>, mut dst: WordsMut<'_>) {
    if S::IS_FLOAT && size_of::<S>() >= 4 && !D::IS_FLOAT && converts_through_i32::<D>() {
        if !crate::arch::float_to_i32_low_bits(src, dst.sub(0, dst.len()))
            && let Some((src, dst)) = word_slices::<S::Word, D::Word>(src, dst)
        {
            for (x, y) in src.iter().zip(dst.iter_mut()) {
                let v: D = cast_one::<S, D>(S::from_bits(x.to_u64()));
                *y = <D::Word as Word>::from_u64(v.to_bits());
            }
        }
        return;
    }
    map_words::<S, D>(
        src,
        dst,
        #[inline(always)]
        |x| cast_one::<S, D>(x),
    );
}

/// `dst = src`, the words of `S`.
fn copy<S: NumpyNumber>(src: Words<'_>, dst: WordsMut<'_>) {
    if let (Some(src), Some(dst)) = (<S::Word as Word>::of(src), <S::Word as Word>::of_mut(dst)) {
        dst.copy_from_slice(src);
    }
}

/// `dst[i] = cast(re(src[i]))`: NumPy's cast of a complex array to a real type takes the
/// real part (with a `ComplexWarning`), cast as a value of the part type `S`.
#[inline(never)]
fn real_part_loop<S: NumpyNumber, D: NumpyNumber>(src: Words<'_>, dst: WordsMut<'_>) {
    let Some((src, dst)) = word_slices::<S::Word, D::Word>(src, dst) else {
        return;
    };
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            for (x, y) in src.chunks_exact(2).zip(dst.iter_mut()) {
                let v: D = cast_one::<S, D>(S::from_bits(x[0].to_u64()));
                *y = <D::Word as Word>::from_u64(v.to_bits());
            }
        },
    );
}

/// `dst[i] = cast(src[i]) + 0j`: NumPy's cast of a real array to a complex type, the real
/// part cast to the part type `F`, the imaginary part `+0.0`.
#[inline(never)]
fn to_complex_loop<S: NumpyNumber, F: NumpyNumber>(src: Words<'_>, dst: WordsMut<'_>) {
    let Some((src, dst)) = word_slices::<S::Word, F::Word>(src, dst) else {
        return;
    };
    crate::arch::vectorized(
        #[inline(always)]
        move || {
            for (x, y) in src.iter().zip(dst.chunks_exact_mut(2)) {
                let v: F = cast_one::<S, F>(S::from_bits(x.to_u64()));
                y[0] = <F::Word as Word>::from_u64(v.to_bits());
                y[1] = <F::Word as Word>::from_u64(0);
            }
        },
    );
}

/// Elements per block of the complex casts' two passes: the parts' buffer (at most 8 KiB)
/// stays in the first-level cache between them.
const PART_BLOCK: usize = 1024;

/// The cast of a complex array (parts of type `part`, in words `P`) to the real type
/// `target`: its real parts gathered a block at a time, then cast as a real array.
#[inline(never)]
fn from_complex<P: Word>(part: DTypeId, target: DTypeId, src: &[P], mut dst: WordsMut<'_>) {
    let mut re = [P::default(); PART_BLOCK];
    for (k, pairs) in src.chunks(2 * PART_BLOCK).enumerate() {
        let m = pairs.len() / 2;
        for (r, pair) in re.iter_mut().zip(pairs.chunks_exact(2)) {
            *r = pair[0];
        }
        let start = k * PART_BLOCK;
        real_words(part, target, P::words(&re[..m]), dst.sub(start, start + m));
    }
}

/// The cast of a real array of type `source` to a complex type (parts of type `part`, in
/// words `P`): a block at a time, the values cast as a real array, then written as the real
/// parts beside a `+0.0` imaginary part.
#[inline(never)]
fn into_complex<P: Word>(source: DTypeId, part: DTypeId, src: Words<'_>, dst: &mut [P]) {
    let mut re = [P::default(); PART_BLOCK];
    let n = dst.len() / 2;
    for start in (0..n).step_by(PART_BLOCK) {
        let end = (start + PART_BLOCK).min(n);
        let m = end - start;
        real_words(
            source,
            part,
            src.sub(start, end),
            P::words_mut(&mut re[..m]),
        );
        for (pair, r) in dst[2 * start..2 * end].chunks_exact_mut(2).zip(&re[..m]) {
            pair[0] = *r;
            pair[1] = P::default();
        }
    }
}

/// The float type of a complex type's parts (`complex64`: `float32`, `complex128`:
/// `float64`); `None` for the real types.
pub(crate) fn complex_part(id: DTypeId) -> Option<DTypeId> {
    match id {
        DTypeId::Complex64 => Some(DTypeId::Float32),
        DTypeId::Complex128 => Some(DTypeId::Float64),
        _ => None,
    }
}

/// The pair of NumPy types whose cast writes the same words as `source -> target`, so that
/// one loop serves both: the loops are compiled per pair of storage widths and value rules,
/// not per pair of types (66 pairs for the 110 of distinct types, 56 of them with a loop of
/// their own, the others [`through_f64`]).
/// - Into an integer type from an integer type, the result is the low bits of the value:
///   the same words for the signed and the unsigned target of one width, and, when the
///   target is not wider than the source, for the signed and the unsigned source too.
/// - Into `int8`/`int16` from a float type, the low bits of the 32-bit conversion
///   (`converts_through_i32`): the same words as into `uint8`/`uint16`.
fn same_words_as(source: DTypeId, target: DTypeId) -> (DTypeId, DTypeId) {
    let unsigned = |id: DTypeId| match id {
        DTypeId::Int8 => DTypeId::UInt8,
        DTypeId::Int16 => DTypeId::UInt16,
        DTypeId::Int32 => DTypeId::UInt32,
        DTypeId::Int64 => DTypeId::UInt64,
        other => other,
    };
    let int = |id: DTypeId| {
        matches!(
            unsigned(id),
            DTypeId::UInt8 | DTypeId::UInt16 | DTypeId::UInt32 | DTypeId::UInt64
        )
    };
    match (int(source), int(target)) {
        (true, true) if target.size() <= source.size() => (unsigned(source), unsigned(target)),
        (true, true) => (source, unsigned(target)),
        (false, true) if target.size() < 4 => (source, unsigned(target)),
        _ => (source, target),
    }
}

/// NumPy's cast between two real NumPy types, `src` and `dst` of one length.
fn real_words(source: DTypeId, target: DTypeId, src: Words<'_>, mut dst: WordsMut<'_>) {
    let (source, target) = same_words_as(source, target);
    if source == target {
        // NumPy's cast to the same type copies the bits: a signaling NaN stays signaling
        // (a round trip through float64 would quiet it).
        with_numpy!(source, S => copy::<S>(src, dst), else {});
        return;
    }
    // Only the pairs `same_words_as` leaves are compiled, their own loop or two through
    // float64 (constants per arm). A pair's own loop is picked as a function, with whether
    // it widens, and called once below: the test for a streamed output is written once,
    // not in each pair's arm.
    let n = dst.len();
    // An integer of at most 32 bits into float64 (exact), as a large output: streamed from
    // the conversion's registers, which beats `widen_streamed`'s pass through L1.
    let int_source = match source {
        DTypeId::Int8 | DTypeId::Int16 | DTypeId::Int32 => Some(true),
        DTypeId::UInt8 | DTypeId::UInt16 | DTypeId::UInt32 => Some(false),
        _ => None,
    };
    if let (Some(signed), DTypeId::Float64, WordsMut::U64(out)) = (int_source, target, &mut dst)
        && crate::arch::ints_to_f64_streamed(src, &mut out[..n], signed)
    {
        return;
    }
    let mut own: Option<(WordLoop, bool)> = None;
    with_numpy!(source, S => with_numpy!(target, D => {
        if const { through_f64((S::IS_FLOAT, size_of::<S>()), (D::IS_FLOAT, size_of::<D>())) } {
            by_f64(source, target, src, dst.sub(0, n));
        } else if const { writes_own_words::<S, D>() } {
            own = Some((cast_loop::<S, D>, size_of::<D>() > size_of::<S>()));
        }
    }, else {}), else {});
    if let Some((kernel, widens)) = own
        && !(widens && widen_streamed(src, &mut dst, kernel))
    {
        kernel(src, dst);
    }
}

/// A pair's own loop over words, as [`real_words`] picks it.
type WordLoop = fn(Words<'_>, WordsMut<'_>);

/// `kernel` over a large output wider than its input (`float32 -> float64`, `uint8 ->
/// int16`; integers into float64 stream from the registers instead), block by block into
/// L1 and streamed out by
/// [`crate::arch::through_l1_words`], so that each output line is not first read from
/// memory; `false` (nothing written) when the output does not stream. One function for
/// every widening pair, which passes its loop: a pair pays only for the call.
#[inline(never)]
fn widen_streamed(src: Words<'_>, dst: &mut WordsMut<'_>, kernel: WordLoop) -> bool {
    let n = dst.len();
    crate::arch::through_l1_words(src, dst.sub(0, n), &mut |s, d| {
        let done = s.len().min(d.len());
        kernel(s, d);
        done
    })
    .is_some()
}

/// Whether the cast between a source and a target of these kinds (float or not) and sizes
/// writes the same words as the source's cast to float64 followed by that value's cast to
/// the target, so that [`by_f64`] runs it with two loops other pairs compile anyway, not a
/// loop of its own. Taken for casts out of and into `float16` that are long loops of their
/// own (float16's rounding and NumPy's NaN rule take tens of instructions an element),
/// which a second, short pass slows by a tenth or less:
/// - from `float16` into an integer type: the element cast converts the source's exact
///   float64 value;
/// - from an integer type of 32 or 64 bits into `float16`: NumPy's cast rounds to float64
///   first (`NumpyNumber::from_i128`), the same two roundings.
///
/// The other pairs would write the same words too (`float32` into an integer type, the
/// integer types into `float32` but the 64-bit ones, the narrow ones into `float16`), but
/// their own loops are a few instructions an element, or exact into `float16`, which a
/// second pass would multiply. A constant per pair of types in [`real_words`].
const fn through_f64((s_float, ss): (bool, usize), (d_float, ds): (bool, usize)) -> bool {
    match (s_float, d_float) {
        (true, false) => ss == 2,
        (false, true) => ds == 2 && ss >= 4,
        _ => false,
    }
}

/// [`through_f64`]'s cast: a block at a time, `source` cast to float64 words in a buffer
/// that stays in the first-level cache (8 KiB), then those cast to `target`.
#[inline(never)]
fn by_f64(source: DTypeId, target: DTypeId, src: Words<'_>, mut dst: WordsMut<'_>) {
    let mut mid = [0u64; PART_BLOCK];
    let n = src.len().min(dst.len());
    for start in (0..n).step_by(PART_BLOCK) {
        let end = (start + PART_BLOCK).min(n);
        let mid = &mut mid[..end - start];
        real_words(
            source,
            DTypeId::Float64,
            src.sub(start, end),
            u64::words_mut(mid),
        );
        real_words(
            DTypeId::Float64,
            target,
            u64::words(mid),
            dst.sub(start, end),
        );
    }
}

/// Whether `S -> D` is a pair [`same_words_as`] leaves as it is, of two distinct types: the
/// same rules, for the types' kinds and sizes, as a constant.
const fn writes_own_words<S: NumpyNumber, D: NumpyNumber>() -> bool {
    let (ss, ds) = (size_of::<S>(), size_of::<D>());
    match (S::KIND, D::KIND) {
        (Kind::Int(s), Kind::Int(d)) if ds <= ss => !s.signed && !d.signed && ds < ss,
        (Kind::Int(_), Kind::Int(d)) => !d.signed,
        (Kind::Float(_), Kind::Int(d)) if ds < 4 => !d.signed,
        (Kind::Float(_), Kind::Float(_)) => ss != ds,
        _ => true,
    }
}

/// NumPy's cast from `source` to `target` (NumPy's eleven real types, `complex64` and
/// `complex128`) over `src` into `dst`, the shorter number of elements, the kernel chosen
/// once per call: one loop per pair that writes different words ([`same_words_as`]), or
/// two [`through_f64`]. Between the complex types each part is cast as its
/// float type (NumPy casts them so); from a complex type the real part is cast, into one
/// the real part is the cast value and the imaginary part `+0.0`.
pub(crate) fn cast_words(source: DTypeId, target: DTypeId, src: Words<'_>, mut dst: WordsMut<'_>) {
    let (sp, tp) = (complex_part(source), complex_part(target));
    let (ws, wt) = (1 + usize::from(sp.is_some()), 1 + usize::from(tp.is_some()));
    let n = (src.len() / ws).min(dst.len() / wt);
    let (src, dst) = (src.sub(0, n * ws), dst.sub(0, n * wt));
    match (sp, tp) {
        (None, None) => real_words(source, target, src, dst),
        (Some(s), Some(t)) => real_words(s, t, src, dst),
        // The part's own type: one loop that also quiets a signaling NaN, as the cast of
        // the value through float64 does (`real_words` would copy the bits).
        (Some(s), None) if s == target => with_numpy!(s, S => {
            if const { size_of::<S>() >= 4 && S::IS_FLOAT } {
                real_part_loop::<S, S>(src, dst);
            }
        }, else {}),
        // Otherwise the real parts, a block at a time, cast as a real array by the real
        // casts' loops: one gathering loop per part width instead of a loop per pair.
        (Some(s), None) => match src {
            Words::U32(w) => from_complex::<u32>(s, target, w, dst),
            Words::U64(w) => from_complex::<u64>(s, target, w, dst),
            _ => {}
        },
        (None, Some(t)) if source == t => with_numpy!(t, F => {
            if const { size_of::<F>() >= 4 && F::IS_FLOAT } {
                to_complex_loop::<F, F>(src, dst);
            }
        }, else {}),
        (None, Some(t)) => match dst {
            WordsMut::U32(w) => into_complex::<u32>(source, t, src, w),
            WordsMut::U64(w) => into_complex::<u64>(source, t, src, w),
            _ => {}
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::fixed_scale_offset::numpy::with_numpy;
    use crate::dtype::Real;
    use crate::number::xorshift::xorshift64;

    const REAL: [DTypeId; 11] = [
        DTypeId::Int8,
        DTypeId::Int16,
        DTypeId::Int32,
        DTypeId::Int64,
        DTypeId::UInt8,
        DTypeId::UInt16,
        DTypeId::UInt32,
        DTypeId::UInt64,
        DTypeId::Float16,
        DTypeId::Float32,
        DTypeId::Float64,
    ];

    /// Words of `id` (`k` per element) from a generator: any bits, NaNs (signaling ones
    /// too) and values near each type's range among them.
    fn words_of(id: DTypeId, n: usize) -> Vec<u64> {
        let bits = 8 * id.size() as u32 / id.words_per_element().max(1) as u32;
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut next = xorshift64(0x2545_f491_4f6c_dd1d);
        (0..n * id.words_per_element().max(1))
            .map(|i| {
                let x = next();
                let v = match i % 5 {
                    0 => (x % 300) as f64 - 150.0,
                    1 => (x % 70_000) as f64 * 1e5,
                    _ => f64::from_bits(x),
                };
                let w = match bits {
                    64 => v.to_bits(),
                    32 => u64::from((v as f32).to_bits()),
                    _ => x,
                };
                (if i % 3 == 0 { x } else { w }) & mask
            })
            .collect()
    }

    /// Run `cast_words` on `src` (words of `source`) at `level`, into words of `target`.
    fn run(level: crate::isa::Isa, source: DTypeId, target: DTypeId, src: &[u64]) -> Vec<u64> {
        let (ks, kt) = (source.words_per_element(), target.words_per_element());
        let n = src.len() / ks;
        let mut sw = crate::number::storage::WordBuf::zeroed(source.word_bits(), src.len());
        for (i, &w) in src.iter().enumerate() {
            sw.as_words_mut().set(i, w);
        }
        let mut dw = crate::number::storage::WordBuf::zeroed(target.word_bits(), n * kt);
        crate::isa::with_max_isa(level, || {
            cast_words(source, target, sw.as_words(), dw.as_words_mut())
        });
        (0..n * kt)
            .map(|i| dw.as_words().get(i).unwrap_or(0))
            .collect()
    }

    /// Words near the roundings' edges: ties of each float type's significand after a
    /// rounding to float64 (where a second rounding would differ), the integer types'
    /// limits, float16's largest finite value and the first that rounds to infinity,
    /// signaling and quiet NaNs of each float width.
    const EDGES: [u64; 20] = [
        (1 << 60) + (1 << 36) + 1,
        (1 << 63) + (1 << 39) + 1,
        (1 << 60) + (1 << 49) + 1,
        (1 << 53) + 1,
        (1 << 24) + 1,
        (1 << 11) + 1,
        (1 << 32) + 1,
        u64::MAX,
        1 << 63,
        1 << 31,
        0x7fff_ffff,
        0xffff_ffff,
        65504,
        65520,
        0x7c01,
        0xfe01,
        0x7f80_0001,
        0xffc0_0001,
        0x7ff0_0000_0000_0001,
        0xfff8_0000_0000_0001,
    ];

    /// Casts between the real types write, at every instruction-set level, each element's
    /// `cast_one` (the bits themselves between one type), whichever loop or loops run the
    /// pair (its own, one it shares, or two through float64 a block at a time), on lengths
    /// across the blocks and odd ones.
    #[test]
    fn real_casts_are_the_element_cast_at_every_level() {
        for source in REAL {
            for target in REAL {
                let mut src = words_of(source, 2600);
                let mask = u64::MAX >> (64 - 8 * source.size());
                for (w, e) in src.iter_mut().zip(EDGES) {
                    *w = e & mask;
                }
                let want: Vec<u64> = if source == target {
                    src.clone()
                } else {
                    src.iter()
                        .map(|&w| {
                            with_numpy!(source, S => with_numpy!(target, D =>
                                Real::to_bits(cast_one::<S, D>(<S as Real>::from_bits(w))), else 0), else 0)
                        })
                        .collect()
                };
                for level in crate::isa::Isa::available() {
                    for (start, len) in [(0, 2600), (3, 1030), (1, 7), (0, 1024)] {
                        let got = run(level, source, target, &src[start..start + len]);
                        let ctx = format!("{source} -> {target} {level:?} {start} {len}");
                        assert!(got[..] == want[start..start + len], "{ctx}");
                    }
                }
            }
        }
    }

    /// From `float32`/`float64` into the types converted through 32 bits (AVX-512 runs the
    /// arch layer's `vcvttpd2dq`/`vcvttps2dq` kernel there), every level writes each
    /// element's `cast_one`: values at the edges of `i32`'s range and of the targets'
    /// (where the truncation does or does not leave it), NaN, ±Inf, ±0, subnormals, in
    /// whole vectors and tails, from unaligned starts.
    #[test]
    fn float_casts_through_i32_are_the_element_cast_at_every_level() {
        let two31 = 2_147_483_648.0_f64;
        let mut values = vec![
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::from_bits(1),
            -f64::MIN_POSITIVE,
            two31,
            -two31,
            two31 - 0.5,
            two31 - 1.0,
            -two31 - 0.5,
            -two31 - 1.0,
            two31 - 128.0,
            -two31 + 128.0,
            65535.9,
            65536.0,
            -32768.5,
            32767.99,
            255.5,
            -128.9,
            1e300,
            -1e300,
        ];
        let mut next = xorshift64(0x9e37_79b9_7f4a_7c15);
        for i in 0..200 {
            let x = next();
            let scale = [1e2, 4e4, 3e9, 1e19][i % 4];
            values.push(((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2.0 * scale);
        }
        for source in [DTypeId::Float32, DTypeId::Float64] {
            let src: Vec<u64> = values
                .iter()
                .map(|&v| match source {
                    DTypeId::Float32 => u64::from((v as f32).to_bits()),
                    _ => v.to_bits(),
                })
                .collect();
            for target in [
                DTypeId::Int8,
                DTypeId::UInt8,
                DTypeId::Int16,
                DTypeId::UInt16,
                DTypeId::Int32,
            ] {
                let want: Vec<u64> = src
                    .iter()
                    .map(|&w| {
                        with_numpy!(source, S => with_numpy!(target, D =>
                            Real::to_bits(cast_one::<S, D>(<S as Real>::from_bits(w))), else 0), else 0)
                    })
                    .collect();
                for level in crate::isa::Isa::available() {
                    for (start, len) in [(0, src.len()), (5, 33), (1, 15), (3, 16), (0, 1)] {
                        let got = run(level, source, target, &src[start..start + len]);
                        let ctx = format!("{source} -> {target} {level:?} {start} {len}");
                        assert!(got[..] == want[start..start + len], "{ctx}");
                    }
                }
            }
        }
    }

    /// `cast_words` writes the shorter number of elements, whichever side is shorter and
    /// whichever loop runs the pair: the same type's copy, a loop of its own, two through
    /// float64, out of and into a complex type.
    #[test]
    fn casts_write_the_shorter_length() {
        let pairs = [
            (DTypeId::Float32, DTypeId::Float32),
            (DTypeId::Float64, DTypeId::Int16),
            (DTypeId::Float16, DTypeId::Int32),
            (DTypeId::Complex64, DTypeId::Int16),
            (DTypeId::Complex128, DTypeId::Float64),
            (DTypeId::Int64, DTypeId::Complex64),
            (DTypeId::Float64, DTypeId::Complex128),
        ];
        for (source, target) in pairs {
            let (ks, kt) = (source.words_per_element(), target.words_per_element());
            for (ns, nt) in [(1500, 1100), (1100, 1500), (3, 0), (0, 3)] {
                let src = words_of(source, ns);
                let mut sw = crate::number::storage::WordBuf::zeroed(source.word_bits(), ns * ks);
                for (i, &w) in src.iter().enumerate() {
                    sw.as_words_mut().set(i, w);
                }
                let sentinel = 0x5a;
                let mut dw = crate::number::storage::WordBuf::zeroed(target.word_bits(), nt * kt);
                for i in 0..nt * kt {
                    dw.as_words_mut().set(i, sentinel);
                }
                cast_words(source, target, sw.as_words(), dw.as_words_mut());
                let n = ns.min(nt);
                let want = run(crate::isa::Isa::Portable, source, target, &src[..n * ks]);
                let got: Vec<u64> = (0..nt * kt)
                    .map(|i| dw.as_words().get(i).unwrap_or(0))
                    .collect();
                let ctx = format!("{source} -> {target}, {ns} into {nt}");
                assert!(got[..n * kt] == want[..], "{ctx}");
                assert!(
                    got[n * kt..].iter().all(|&w| w == sentinel),
                    "{ctx}: past the end"
                );
            }
        }
    }

    /// Widening casts whose output is large enough to stream (`widen_streamed`: through L1
    /// by `arch::through_l1_words`) write each element's `cast_one` at every level, at and
    /// around the threshold (`arch::STREAM_MIN` bytes of output: one element below it, at
    /// it, and a few blocks and an odd tail above), into an output from an aligned start
    /// and from an unaligned one, the words around it untouched.
    #[test]
    #[cfg_attr(miri, ignore = "16 MiB outputs")]
    fn large_widening_outputs_are_the_element_cast_at_every_level() {
        let pairs = [
            (DTypeId::Int16, DTypeId::Float64),
            (DTypeId::UInt8, DTypeId::Int16),
            (DTypeId::Int8, DTypeId::Int64),
            (DTypeId::Float16, DTypeId::Float32),
            (DTypeId::Float32, DTypeId::Float64),
            (DTypeId::Int32, DTypeId::Float64),
        ];
        let sentinel = 0x5a;
        for (source, target) in pairs {
            let per = crate::arch::STREAM_MIN / target.size();
            let n = per + 3 * 1024 + 77;
            let src = words_of(source, n);
            let want: Vec<u64> = src
                .iter()
                .map(|&w| {
                    with_numpy!(source, S => with_numpy!(target, D =>
                        Real::to_bits(cast_one::<S, D>(<S as Real>::from_bits(w))), else 0), else 0)
                })
                .collect();
            let mut sw = crate::number::storage::WordBuf::zeroed(source.word_bits(), n);
            for (i, &w) in src.iter().enumerate() {
                sw.as_words_mut().set(i, w);
            }
            let mut dw = crate::number::storage::WordBuf::zeroed(target.word_bits(), n + 8);
            for level in crate::isa::Isa::available() {
                for (at, len) in [(0, per - 1), (0, per), (3, per), (1, n - 5), (0, n)] {
                    for i in 0..n + 8 {
                        dw.as_words_mut().set(i, sentinel);
                    }
                    crate::isa::with_max_isa(level, || {
                        cast_words(
                            source,
                            target,
                            sw.as_words().sub(0, len),
                            dw.as_words_mut().sub(at, at + len),
                        )
                    });
                    let ctx = format!("{source} -> {target} {level:?} at {at} len {len}");
                    let got = dw.as_words();
                    for i in 0..n + 8 {
                        let w = if (at..at + len).contains(&i) {
                            want[i - at]
                        } else {
                            sentinel
                        };
                        assert_eq!(got.get(i), Some(w), "{ctx} word {i}");
                    }
                }
            }
        }
    }

    /// Casts from and into `complex64` / `complex128` write, at every instruction-set level,
    /// each element's `cast_one` of the part (the real part out of a complex type; the cast
    /// value and `+0.0` into one), on lengths across the blocks of the two passes.
    #[test]
    fn complex_casts_are_the_element_cast_at_every_level() {
        for (complex, part) in [
            (DTypeId::Complex64, DTypeId::Float32),
            (DTypeId::Complex128, DTypeId::Float64),
        ] {
            for real in REAL {
                for n in [0, 1, 1023, 1024, 2500] {
                    // Into the complex type.
                    let src = words_of(real, n);
                    let want: Vec<u64> = src
                        .iter()
                        .flat_map(|&w| {
                            let re = with_numpy!(real, S => with_numpy!(part, F =>
                                Real::to_bits(cast_one::<S, F>(<S as Real>::from_bits(w))), else 0), else 0);
                            [re, 0]
                        })
                        .collect();
                    for level in crate::isa::Isa::available() {
                        let got = run(level, real, complex, &src);
                        assert!(got == want, "{real} -> {complex} n {n} {level:?}");
                    }
                    // Out of it.
                    let src = words_of(complex, n);
                    let want: Vec<u64> = src
                        .chunks_exact(2)
                        .map(|pair| {
                            with_numpy!(part, S => with_numpy!(real, D =>
                                Real::to_bits(cast_one::<S, D>(<S as Real>::from_bits(pair[0]))), else 0), else 0)
                        })
                        .collect();
                    for level in crate::isa::Isa::available() {
                        let got = run(level, complex, real, &src);
                        assert!(got == want, "{complex} -> {real} n {n} {level:?}");
                    }
                }
            }
        }
    }
}
