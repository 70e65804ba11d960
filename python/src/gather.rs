//! The strided-row gather: a chain run over an N-d input whose rows (last-axis lanes) are
//! contiguous but not adjacent, without copying the whole input first.
//!
//! zarr hands a codec such an array when it writes a chunk that is a slice of the user's
//! array. Short rows are gathered into a cache-sized block and the chain runs per block;
//! long rows run in place.

use numpy::ndarray::{ArrayViewD, Axis};
use zquant::dtype::{Words, WordsMut};

/// Words gathered per call of the chain from a strided input: 128 KiB of `u64`, in L2.
const GATHER_WORDS: usize = 1 << 14;

/// A chain's run over `n` elements' words into their output words (encode or decode).
pub(crate) type Run<'a> =
    dyn Fn(Words<'_>, usize, WordsMut<'_>) -> Result<(), zquant::CodecError> + Sync + 'a;

/// Run `run` over the rows (last-axis lanes, each contiguous) of `src` in C order, writing
/// consecutive output words: short rows are gathered into a cache-sized block first, long
/// ones run in place. `elements` is the element count of `src`; both buffers hold a whole
/// number of words per element.
///
/// # Errors
/// The message of the first failing block, without a position (the caller reruns the
/// contiguous path for the located message), or a shape mismatch.
pub(crate) fn run_rows<T: Copy + Default>(
    src: ArrayViewD<'_, T>,
    elements: usize,
    mut out: WordsMut<'_>,
    wrap: fn(&[T]) -> Words<'_>,
    run: &Run<'_>,
) -> Result<(), String> {
    let ndim = src.ndim();
    if ndim == 0 || src.is_empty() {
        return Err("not a strided N-d input".into());
    }
    let words = src.len();
    if elements == 0 || words % elements != 0 || out.len() % elements != 0 {
        return Err("the buffers do not hold whole elements".into());
    }
    let (k_in, k_out) = (words / elements, out.len() / elements);
    let mut scratch: Vec<T> = Vec::with_capacity(GATHER_WORDS);
    let mut at = 0usize; // output words written
    let flush = |block: &[T], out: &mut WordsMut<'_>, at: &mut usize| {
        let n = block.len() / k_in;
        let end = *at + n * k_out;
        run(wrap(block), n, out.sub(*at, end)).map_err(|e| e.to_string())?;
        *at = end;
        Ok::<(), String>(())
    };
    for row in src.lanes(Axis(ndim - 1)) {
        let row = row.to_slice().ok_or("a row is not contiguous")?;
        if row.len() % k_in != 0 {
            return Err("a row does not hold whole elements".into());
        }
        if row.len() >= GATHER_WORDS / 2 {
            if !scratch.is_empty() {
                flush(&scratch, &mut out, &mut at)?;
                scratch.clear();
            }
            flush(row, &mut out, &mut at)?;
            continue;
        }
        if scratch.len() + row.len() > GATHER_WORDS {
            flush(&scratch, &mut out, &mut at)?;
            scratch.clear();
        }
        scratch.extend_from_slice(row);
    }
    if !scratch.is_empty() {
        flush(&scratch, &mut out, &mut at)?;
    }
    if at != out.len() {
        return Err("the output does not match the input".into());
    }
    Ok(())
}
