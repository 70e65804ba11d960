//! Chains of codecs checked by the compiler, and the one fused block loop of the crate.
//!
//! [`Chain`] composes two [`ArrayCodec`]s whose types line up (`a.then(b)` only compiles
//! when `b` takes `a`'s output type) and runs them fused: the input is processed in blocks
//! of [`BLOCK`] elements, each block going through every stage while it is in cache, so a
//! chain never materialises a whole-array intermediate. The run-time
//! [`DynChain`](crate::DynChain) runs the same loop, `fused`, over storage words.

use serde_json::Value;

use super::ArrayCodec;
use crate::error::{ElementError, MetadataError};

/// Elements per block in fused chains: 4096 elements of at most 16 bytes stay in L1/L2.
pub const BLOCK: usize = 4096;

/// The fused block loop: for each block of [`BLOCK`] of the `n` elements, run the stages
/// `0..stages` in order; `step(i, start, len)` runs stage `i` on elements
/// `start..start + len` (reading what stage `i - 1` wrote for them, or the input).
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
    mut step: impl FnMut(usize, usize, usize) -> Result<(), E>,
    index: impl Fn(&E) -> Option<usize>,
    shift: impl Fn(E, usize) -> E,
) -> Result<(), E> {
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK).min(n);
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
        let step = |i: usize, start: usize, len: usize| {
            let (s, d) = (start..start + len, &mut buf[..len]);
            if i == 0 {
                self.first.encode_slice(&src[s], d)
            } else {
                self.second.encode_slice(d, &mut dst[s])
            }
        };
        fused(n, 2, step, index, shift)
    }

    fn decode_slice(&self, src: &[B::Out], dst: &mut [A::In]) -> Result<(), ElementError> {
        super::same_length("chain", super::Direction::Decode, src.len(), dst.len())?;
        let n = src.len().min(dst.len());
        let mut buf = vec![A::Out::default(); n.min(BLOCK)];
        let step = |i: usize, start: usize, len: usize| {
            let (s, d) = (start..start + len, &mut buf[..len]);
            if i == 0 {
                self.second.decode_slice(&src[s], d)
            } else {
                self.first.decode_slice(d, &mut dst[s])
            }
        };
        fused(n, 2, step, index, shift)
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
