//! Multi-threaded encode and decode (feature `rayon`).
//!
//! Every codec's slice kernel is elementwise, so a slice can be cut into independent chunks
//! and the chunks shared between the calling thread and the workers of the current
//! [rayon](https://docs.rs/rayon) pool (the global one, or the one a caller `install`s). A chunk is [`CHUNK`] elements: large
//! enough that the per-task cost vanishes, small enough that both cores of a small machine
//! get an even share and that a fused [`Chain`](crate::Chain) still works in cache-sized
//! blocks inside it.
//!
//! Errors are those of the one-threaded call: the *first* failing element of the whole
//! slice (every chunk is run, then the lowest failing index wins), with its index in the
//! whole slice. As there, the output is then partly written.

use ndarray::{Array, ArrayBase, Data, Dimension};
use std::sync::Mutex;

use crate::codec::{ArrayCodec, Direction};
use crate::error::{CodecError, ElementError};
use crate::pipeline::ArrayCodecExt;

/// Elements per task.
pub const CHUNK: usize = 1 << 16;

/// Run `f` on matching chunks of `src` and `dst` (up to the shorter length), in parallel.
///
/// # Errors
/// The failing element with the lowest index, its index made relative to the whole slice.
pub fn map_chunks<S: Sync, D: Send>(
    src: &[S],
    dst: &mut [D],
    f: impl Fn(&[S], &mut [D]) -> Result<(), ElementError> + Sync,
) -> Result<(), ElementError> {
    let n = src.len().min(dst.len());
    let out = crate::arch::Region::of(&src[..n], &dst[..n]);
    let parts = src[..n].chunks(CHUNK).zip(dst[..n].chunks_mut(CHUNK));
    share(parts, |(s, d)| out.streaming(|| f(s, d)))
}

/// Run `f` on chunks of `data`, in parallel.
///
/// # Errors
/// As [`map_chunks`].
pub fn for_each_chunk<T: Send>(
    data: &mut [T],
    f: impl Fn(&mut [T]) -> Result<(), ElementError> + Sync,
) -> Result<(), ElementError> {
    share(data.chunks_mut(CHUNK), f)
}

/// Run `f` on every chunk, the calling thread included: it works through the chunks beside
/// `current_num_threads() - 1` tasks of the pool, each taking the next chunk in order until
/// none is left. A caller from outside the pool would otherwise only wait for it (as
/// `par_iter` does), leaving a core idle on a machine whose pool has one thread per core.
/// The `k`-th chunk's error index is made relative to the whole slice (`k * CHUNK`), and the
/// lowest one wins.
fn share<C: Send>(
    chunks: impl Iterator<Item = C> + Send,
    f: impl Fn(C) -> Result<(), ElementError> + Sync,
) -> Result<(), ElementError> {
    let queue = Mutex::new(chunks.enumerate());
    let first: Mutex<Option<ElementError>> = Mutex::new(None);
    let work = || {
        loop {
            // A poisoned lock means another worker panicked: rayon re-raises that panic at
            // the end of the scope, so this one just stops.
            let Some((k, chunk)) = queue.lock().ok().and_then(|mut q| q.next()) else {
                return;
            };
            if let Err(mut e) = f(chunk) {
                e.index += k * CHUNK;
                if let Ok(mut best) = first.lock()
                    && best.as_ref().is_none_or(|b| e.index < b.index)
                {
                    *best = Some(e);
                }
            }
        }
    };
    rayon::in_place_scope(|scope| {
        for _ in 1..rayon::current_num_threads() {
            scope.spawn(|_| work());
        }
        work();
    });
    match first.into_inner() {
        Ok(Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// The multi-threaded forms of [`ArrayCodec`]'s and [`ArrayCodecExt`]'s calls, for every
/// codec and chain.
pub trait ParArrayCodec: ArrayCodec {
    /// [`ArrayCodec::encode_slice`] on the current rayon pool.
    ///
    /// # Errors
    /// As the one-threaded call: the first element that cannot be encoded, or slices of
    /// different lengths.
    fn par_encode_slice(
        &self,
        src: &[Self::In],
        dst: &mut [Self::Out],
    ) -> Result<(), ElementError> {
        crate::codec::same_length(self.name(), Direction::Encode, src.len(), dst.len())?;
        map_chunks(src, dst, |s, d| self.encode_slice(s, d))
    }

    /// [`ArrayCodec::decode_slice`] on the current rayon pool.
    ///
    /// # Errors
    /// As the one-threaded call: the first element that cannot be decoded, or slices of
    /// different lengths.
    fn par_decode_slice(
        &self,
        src: &[Self::Out],
        dst: &mut [Self::In],
    ) -> Result<(), ElementError> {
        crate::codec::same_length(self.name(), Direction::Decode, src.len(), dst.len())?;
        map_chunks(src, dst, |s, d| self.decode_slice(s, d))
    }

    /// [`ArrayCodecExt::encode`] on the current rayon pool. An input in standard (C) layout
    /// is encoded in parallel; any other layout goes through the one-threaded call, which
    /// handles every layout.
    ///
    /// # Errors
    /// The first element (C-order flat index) that cannot be encoded.
    fn par_encode<S, D>(&self, input: &ArrayBase<S, D>) -> Result<Array<Self::Out, D>, CodecError>
    where
        S: Data<Elem = Self::In>,
        D: Dimension,
    {
        match input.as_slice() {
            Some(src) => {
                let mut out = Array::from_elem(input.raw_dim(), Self::Out::default());
                match out.as_slice_mut() {
                    Some(dst) => self.par_encode_slice(src, dst)?,
                    None => return self.encode(input),
                }
                Ok(out)
            }
            None => self.encode(input),
        }
    }

    /// [`ArrayCodecExt::decode`] on the current rayon pool, as [`par_encode`](Self::par_encode).
    ///
    /// # Errors
    /// The first element (C-order flat index) that cannot be decoded.
    fn par_decode<S, D>(&self, input: &ArrayBase<S, D>) -> Result<Array<Self::In, D>, CodecError>
    where
        S: Data<Elem = Self::Out>,
        D: Dimension,
    {
        match input.as_slice() {
            Some(src) => {
                let mut out = Array::from_elem(input.raw_dim(), Self::In::default());
                match out.as_slice_mut() {
                    Some(dst) => self.par_decode_slice(src, dst)?,
                    None => return self.decode(input),
                }
                Ok(out)
            }
            None => self.decode(input),
        }
    }
}

impl<C: ArrayCodec + ?Sized> ParArrayCodec for C {}
