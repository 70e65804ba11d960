//! Chains of codecs checked by the compiler, and the one fused block loop of the crate.
//!
//! [`Chain`] composes two [`ArrayCodec`]s whose types line up (`a.then(b)` only compiles
//! when `b` takes `a`'s output type) and runs them fused: the input is processed in blocks
//! of [`BLOCK`] elements, each block going through every stage while it is in cache, so a
//! chain never materialises a whole-array intermediate. The run-time
//! [`DynChain`](crate::DynChain) runs the same loop, `fused`, over storage words.

use serde_json::Value;

use super::{ArrayCodec, Direction, Fusion};
use crate::convert::{words_of, words_of_mut};
use crate::error::{ElementError, MetadataError};
use crate::number::storage::{Words, WordsMut};

/// Elements per block in fused chains: 4096 elements of at most 16 bytes stay in L1/L2.
pub const BLOCK: usize = 4096;

/// The stage index with which [`fused`] asks `step` to run the fused kernel of the first
/// two stages (see [`pair_kernel`]) on a range; `step` then returns how many elements of
/// it the kernel did (for the other stages it returns `Ok(0)`).
pub(crate) const FUSED: usize = usize::MAX;

/// The fused block loop: for each block of [`BLOCK`] of the `n` elements (one block of all
/// of them when there is one stage), run the stages `0..stages` in order;
/// `step(i, start, len)` runs stage `i` on elements `start..start + len` (reading what
/// stage `i - 1` wrote for them, or the input).
///
/// With `pair`, the first two stages (and only they: `stages == 2`) have a fused kernel:
/// all the rest of the input is first offered to it (`step(FUSED, ..)`, of any length: it
/// writes no intermediate), and only the block it declines (a kernel block with a rare
/// element) goes stage by stage, which also finds the errors.
///
/// After a stage fails at element `k` of the block, only the elements before `k` go on: a
/// later stage may fail on one of them, which is then the first failing element. A stage's
/// output is only partly written after a failure, so the elements before it are redone
/// (they succeed). `index` gives a failure's element index in the block (`None`: not an
/// element failure, returned at once); `shift` adds the block's start to it.
///
/// # Errors
/// The first failing element's error, its index shifted to the whole input.
pub(crate) fn fused<E>(
    n: usize,
    stages: usize,
    pair: bool,
    mut step: impl FnMut(usize, usize, usize) -> Result<usize, E>,
    index: impl Fn(&E) -> Option<usize>,
    shift: impl Fn(E, usize) -> E,
) -> Result<(), E> {
    let pair = pair && stages == 2;
    let mut start = 0;
    while start < n {
        // One stage reads the input and writes the output: no intermediate, so no block
        // (long inputs then run as two streams in the kernels' own block loop).
        let mut end = if stages == 1 {
            n
        } else {
            (start + BLOCK).min(n)
        };
        if pair {
            // The kernel needs no intermediate buffer: it is offered all the rest at once
            // (its own block loop runs long inputs as two streams).
            start += step(FUSED, start, n - start)?;
            if start >= n {
                break;
            }
            // Only the kernel block it declined goes stage by stage; the rest is offered
            // to the kernel again.
            end = (start + crate::convert::FAST_BLOCK).min(n);
        }
        let mut len = end - start;
        let mut failure: Option<E> = None;
        for i in 0..stages {
            if len == 0 {
                break;
            }
            if let Err(e) = step(i, start, len) {
                let Some(k) = index(&e) else {
                    return Err(e);
                };
                len = k;
                failure = Some(shift(e, start));
                step(i, start, len).map_err(|e| shift(e, start))?;
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        start = end;
    }
    Ok(())
}

/// Whether two neighbouring stages have a fused kernel: `scale_offset`'s `f32`/`f64` encode
/// then a `cast_value` encode.
pub(crate) fn has_pair_kernel(a: Fusion<'_>, b: Fusion<'_>) -> bool {
    matches!((a, b), (Fusion::Affine(_), Fusion::Cast(_)))
}

/// The fused kernel of two neighbouring stages over `src` into `dst`: how many elements it
/// did (all, those before the first kernel block it declined, or none when there is none).
pub(crate) fn pair_kernel(
    a: Fusion<'_>,
    b: Fusion<'_>,
    src: Words<'_>,
    dst: WordsMut<'_>,
) -> usize {
    match (a, b) {
        (Fusion::Affine(a), Fusion::Cast(c)) => c.run_affine(a, src, dst),
        _ => 0,
    }
}

/// From this many elements on, a chain whose input has one byte per element runs by
/// [`byte_table`]: its 256 conversions are then at most 1/16 of the work.
pub(crate) const BYTE_TABLE_MIN: usize = BLOCK;

/// For an input type of one byte per element (`uint8`, `int8`, the float8 types, ...):
/// every one of the 256 codes run once through the chain (`run`, on 256 elements), or
/// `None` when one of them fails — then the elements go stage by stage, which find the
/// first failure. The chain is elementwise, so looking each element's code up in this
/// table gives exactly what running it would: a decode from `uint8` becomes one lookup per
/// element instead of a table pass, a buffer and a division pass.
pub(crate) fn byte_table<I: crate::dtype::DType, O: crate::dtype::DType, E>(
    run: impl FnOnce(&[I], &mut [O]) -> Result<(), E>,
) -> Option<Box<[O; 256]>> {
    if std::mem::size_of::<I>() != 1 {
        return None;
    }
    let mut codes = [I::default(); 256];
    for (i, w) in crate::arch::words_mut(&mut codes).iter_mut().enumerate() {
        *w = crate::number::storage::Word::from_u64(i as u64);
    }
    let mut out = Box::new([O::default(); 256]);
    run(&codes, &mut out[..]).ok()?;
    Some(out)
}

/// `dst[i] = table[code of src[i]]`, for inputs of one byte per element
/// (`convert::lookup::byte_lookup` on the words).
fn byte_lookup<I: crate::dtype::DType, O: crate::dtype::DType>(
    table: &[O; 256],
    src: &[I],
    dst: &mut [O],
) {
    use crate::number::storage::Word;
    // An element of one byte is one `u8` word (`Plain`'s layout), so this always holds.
    let Some(codes) = <u8 as Word>::of(Word::words(crate::arch::words(src))) else {
        unreachable!("byte_lookup on an input of more than one byte per element")
    };
    crate::convert::lookup::byte_lookup(
        crate::arch::words(&table[..]),
        O::WORDS,
        codes,
        crate::arch::words_mut(dst),
    );
}

/// Two codecs run one after the other: `A`, then `B`, fused block by block (each block of
/// [`BLOCK`] elements goes through both while in cache). Built with [`ArrayCodec::then`] or
/// [`Chain::new`]; a mismatch of `A`'s output and `B`'s input type does not compile.
///
/// ```
/// use zquant::{ArrayCodec, ArrayCodecExt, BitRound, CastValue, Chain, ScalarMap};
///
/// let chain = Chain::new(
///     BitRound::<f64>::new(10)?,
///     CastValue::<f64, f32>::new(Default::default(), ScalarMap::default())?,
/// );
/// let out = chain.encode(&ndarray::array![std::f64::consts::PI])?;
/// assert_eq!(out[0], 3.140625f32);
/// assert_eq!(chain.to_metadata().as_array().map(Vec::len), Some(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// [`ArrayCodec::then`]: crate::ArrayCodec::then
#[derive(Clone, Debug, PartialEq)]
pub struct Chain<A, B> {
    first: A,
    second: B,
}

impl<A: ArrayCodec, B: ArrayCodec<In = A::Out>> Chain<A, B> {
    /// `first`, then `second`.
    pub fn new(first: A, second: B) -> Self {
        Chain { first, second }
    }

    /// The first stage.
    pub fn first(&self) -> &A {
        &self.first
    }

    /// The second stage.
    pub fn second(&self) -> &B {
        &self.second
    }
}

fn index(e: &ElementError) -> Option<usize> {
    Some(e.index)
}

fn shift(mut e: ElementError, by: usize) -> ElementError {
    e.index += by;
    e
}

impl<A: ArrayCodec, B: ArrayCodec<In = A::Out>> ArrayCodec for Chain<A, B> {
    type In = A::In;
    type Out = B::Out;

    fn name(&self) -> &'static str {
        "chain"
    }

    fn encode_slice(&self, src: &[A::In], dst: &mut [B::Out]) -> Result<(), ElementError> {
        super::same_length("chain", super::Direction::Encode, src.len(), dst.len())?;
        let n = src.len().min(dst.len());
        let mut buf = vec![A::Out::default(); n.min(BLOCK)];
        let (fa, fb) = (
            self.first.fusion(Direction::Encode),
            self.second.fusion(Direction::Encode),
        );
        let step = |i: usize, start: usize, len: usize| {
            let s = start..start + len;
            if i == FUSED {
                // Any length: the fused kernel writes no intermediate.
                return Ok(pair_kernel(
                    fa,
                    fb,
                    words_of(&src[s.clone()]),
                    words_of_mut(&mut dst[s]),
                ));
            }
            let d = &mut buf[..len];
            if i == 0 {
                self.first.encode_slice(&src[s], d).map(|()| 0)
            } else {
                self.second.encode_slice(d, &mut dst[s]).map(|()| 0)
            }
        };
        fused(n, 2, has_pair_kernel(fa, fb), step, index, shift)
    }

    fn decode_slice(&self, src: &[B::Out], dst: &mut [A::In]) -> Result<(), ElementError> {
        super::same_length("chain", super::Direction::Decode, src.len(), dst.len())?;
        let n = src.len().min(dst.len());
        if n >= BYTE_TABLE_MIN
            && let Some(t) = byte_table(|c, o| self.decode_slice(c, o))
        {
            byte_lookup(&t, src, dst);
            return Ok(());
        }
        let mut buf = vec![A::Out::default(); n.min(BLOCK)];
        let step = |i: usize, start: usize, len: usize| {
            let (s, d) = (start..start + len, &mut buf[..len]);
            if i == 0 {
                self.second.decode_slice(&src[s], d).map(|()| 0)
            } else {
                self.first.decode_slice(d, &mut dst[s]).map(|()| 0)
            }
        };
        fused(n, 2, false, step, index, shift)
    }

    fn encode_fill_value(&self, fill: A::In) -> Result<B::Out, MetadataError> {
        let mid = self.first.encode_fill_value(fill)?;
        self.second.encode_fill_value(mid)
    }

    /// The codec list, flattened.
    fn to_metadata(&self) -> Value {
        let mut list = Vec::new();
        for part in [self.first.to_metadata(), self.second.to_metadata()] {
            match part {
                Value::Array(v) => list.extend(v),
                other => list.push(other),
            }
        }
        Value::Array(list)
    }
}
