//! The run-time chain's loop: the stages of a [`DynChain`](super::DynChain) over words, block
//! by block (`run_fused`, through `codec::chain::fused`), by a 256-entry table for inputs of
//! one byte per element (`byte_lookup`), and the error placement (`locate`, `shift_index`).

use super::array::DynArray;
use super::words;
use crate::codec::Fusion;
use crate::codec::chain::{BLOCK, BYTE_TABLE_MIN, FUSED, fused, has_pair_kernel, pair_kernel};
use crate::codec::json_text;
use crate::codec::{Direction, DynStage};
use crate::dtype::DTypeId;
use crate::error::CodecError;
use crate::number::storage::{WordBuf, Words, WordsMut};

/// Locate an element error in `input`: its N-d position, and the caller's element there.
pub(super) fn locate(e: CodecError, input: &DynArray) -> CodecError {
    e.located(input.shape(), |i| input.element_json(i).map(json_text))
}

pub(super) fn wrong_type(expected: DTypeId, found: DTypeId) -> CodecError {
    CodecError::Array(format!("expected an array of {expected}, got {found}"))
}

pub(super) fn run(
    stage: &dyn DynStage,
    dir: Direction,
    src: Words<'_>,
    dst: WordsMut<'_>,
) -> Result<(), CodecError> {
    match dir {
        Direction::Encode => stage.encode_words(src, dst),
        Direction::Decode => stage.decode_words(src, dst),
    }
}

pub(super) fn shift_index(e: CodecError, by: usize) -> CodecError {
    match e {
        CodecError::Element(mut el) => {
            el.index += by;
            CodecError::Element(el)
        }
        other => other,
    }
}

/// The data type a stage writes in a direction.
pub(super) fn written(stage: &dyn DynStage, dir: Direction) -> DTypeId {
    match dir {
        Direction::Encode => stage.output().id,
        Direction::Decode => stage.input().id,
    }
}

/// [`run_fused`] by a 256-entry table: `false` (nothing written) when a code fails.
pub(super) fn byte_lookup(
    dtype: DTypeId,
    stages: &[(&dyn DynStage, Direction)],
    codes: &[u8],
    out: &mut WordsMut<'_>,
) -> bool {
    let Some(&(last, dir)) = stages.last() else {
        return false;
    };
    let out_type = written(last, dir);
    let (Ok(mut all), Ok(mut table)) = (
        DynArray::zeroed(dtype, &[256]),
        DynArray::zeroed(out_type, &[256]),
    ) else {
        return false;
    };
    if let Some(WordsMut::U8(w)) = all.words_mut() {
        for (i, x) in w.iter_mut().enumerate() {
            *x = i as u8;
        }
    }
    if run_fused(&all, stages, &mut table).is_err() {
        return false;
    }
    let k = out_type.words_per_element();
    macro_rules! lookup {
        ($t:expr, $o:expr) => {{
            crate::convert::lookup::byte_lookup($t, k, codes, $o);
            true
        }};
    }
    match (table.words(), out) {
        (Some(Words::U8(t)), WordsMut::U8(o)) if t.len() == 256 * k => lookup!(t, o),
        (Some(Words::U16(t)), WordsMut::U16(o)) if t.len() == 256 * k => lookup!(t, o),
        (Some(Words::U32(t)), WordsMut::U32(o)) if t.len() == 256 * k => lookup!(t, o),
        (Some(Words::U64(t)), WordsMut::U64(o)) if t.len() == 256 * k => lookup!(t, o),
        _ => false,
    }
}

/// Run `stages` (each in its direction) over `input` block by block into `out`: each
/// block of [`BLOCK`] elements goes through every stage while it is in cache, with one
/// block-sized word buffer per stage boundary, and the last stage writes straight into the
/// output. With no stage, `out` gets a copy of `input`.
pub(super) fn run_fused(
    input: &DynArray,
    stages: &[(&dyn DynStage, Direction)],
    out: &mut DynArray,
) -> Result<(), CodecError> {
    let standard = input.to_standard_layout();
    let src = standard
        .words()
        .ok_or_else(|| CodecError::Array("array is not in standard layout".into()))?;
    run_fused_words((src, input.dtype(), input.shape()), stages, out)
}

/// Check that `words` hold the elements of `shape` of `id`.
pub(super) fn check_words(
    what: &str,
    words_len: usize,
    bits: u32,
    id: DTypeId,
    shape: &[usize],
) -> Result<(), CodecError> {
    let n = crate::pipeline::element_count(shape)?;
    let k = id.words_per_element().max(1);
    if bits != id.word_bits() || n.checked_mul(k) != Some(words_len) {
        return Err(CodecError::Array(format!(
            "the {what} has {words_len} words of {bits} bits, but shape {shape:?} of {id} needs \
             {} words of {} bits",
            n.saturating_mul(k),
            id.word_bits()
        )));
    }
    Ok(())
}

/// [`run_fused_words`] into caller-owned words of `out_type` elements: both buffers are
/// checked against `shape` first, and an element error is located in `shape` with the
/// input element's value.
pub(super) fn run_words(
    (src, in_type, shape): (Words<'_>, DTypeId, &[usize]),
    stages: &[(&dyn DynStage, Direction)],
    (out, out_type): (WordsMut<'_>, DTypeId),
) -> Result<(), CodecError> {
    check_words("input", src.len(), src.bits(), in_type, shape)?;
    check_words("output", out.len(), out.bits(), out_type, shape)?;
    run_stages((src, in_type), stages, out).map_err(|e| {
        e.located(shape, |i| {
            words::scalar_at(src, in_type.words_per_element(), i)
                .map(|x| json_text(in_type.value_to_json(x)))
        })
    })
}

/// [`run_fused`] over the words of `in_type` elements in C order, of `shape`.
pub(super) fn run_fused_words(
    (src, in_type, shape): (Words<'_>, DTypeId, &[usize]),
    stages: &[(&dyn DynStage, Direction)],
    out: &mut DynArray,
) -> Result<(), CodecError> {
    let out_type = stages.last().map_or(in_type, |&(s, d)| written(s, d));
    if out.dtype() != out_type {
        return Err(CodecError::Array(format!(
            "the output array must be of {out_type}, not {}",
            out.dtype()
        )));
    }
    if out.shape() != shape {
        return Err(CodecError::Array(format!(
            "the output array must have the input's shape {:?}, not {:?}",
            shape,
            out.shape()
        )));
    }
    let out_words = out
        .words_mut()
        .ok_or_else(|| CodecError::Array("the output array is not in standard layout".into()))?;
    run_stages((src, in_type), stages, out_words)
}

/// The stages over `src` into `out_words`, whose lengths the caller has checked: `src`
/// holds whole elements of `in_type`, and `out_words` the same number of elements of the
/// type the last stage writes.
pub(super) fn run_stages(
    (src, in_type): (Words<'_>, DTypeId),
    stages: &[(&dyn DynStage, Direction)],
    mut out_words: WordsMut<'_>,
) -> Result<(), CodecError> {
    let out_type = stages.last().map_or(in_type, |&(s, d)| written(s, d));
    if stages.is_empty() {
        return if out_words.copy_from(src) {
            Ok(())
        } else {
            Err(CodecError::Array(
                "the output array does not match the input".into(),
            ))
        };
    }
    let k0 = in_type.words_per_element();
    let n = src.len() / k0.max(1);
    if let Words::U8(codes) = src {
        // One byte per element: the 256 codes once through the chain, then a lookup per
        // element (see `codec::chain::byte_table`); a failing code falls through to the
        // stages, which find the first failing element.
        if k0 == 1 && n >= BYTE_TABLE_MIN && byte_lookup(in_type, stages, codes, &mut out_words) {
            return Ok(());
        }
    }
    let kl = out_type.words_per_element();
    let block = BLOCK.min(n.max(1));
    let last = stages.len() - 1;
    // Intermediate blocks alternate between two sets of buffers, one buffer per word width
    // in each set, allocated when first needed: stage `i` writes into set `i % 2` and
    // reads what stage `i - 1` wrote into the other. Memory is bounded by 8 block-sized
    // buffers, whatever the chain's length.
    let ks: Vec<usize> = stages
        .iter()
        .map(|&(s, d)| written(s, d).words_per_element())
        .collect();
    let width = |i: usize| {
        let (s, d) = stages[i];
        written(s, d).word_bits()
    };
    let slot = |bits: u32| bits.trailing_zeros().saturating_sub(3).min(3) as usize;
    let mut sets: [[Option<WordBuf>; 4]; 2] = Default::default();
    // The first two stages' fused kernel, when the chain is just them.
    let fusion = |i: usize| stages.get(i).map_or(Fusion::None, |&(s, d)| s.fusion(d));
    let (f0, f1) = (fusion(0), fusion(1));
    let pair = stages.len() == 2 && has_pair_kernel(f0, f1);
    let step = |i: usize, start: usize, len: usize| {
        if i == FUSED {
            let input = src.sub(start * k0, (start + len) * k0);
            let out = out_words.sub(start * kl, (start + len) * kl);
            return Ok(pair_kernel(f0, f1, input, out));
        }
        let (stage, dir) = stages[i];
        let (even, odd) = sets.split_at_mut(1);
        let (mine, other) = if i.is_multiple_of(2) {
            (&mut even[0], &odd[0])
        } else {
            (&mut odd[0], &even[0])
        };
        let input = if i == 0 {
            src.sub(start * k0, (start + len) * k0)
        } else {
            match &other[slot(width(i - 1))] {
                Some(buf) => buf.as_words().sub(0, len * ks[i - 1]),
                None => return Err(CodecError::Array("missing intermediate block".into())),
            }
        };
        if i == last {
            return run(
                stage,
                dir,
                input,
                out_words.sub(start * kl, (start + len) * kl),
            )
            .map(|()| 0);
        }
        let buf = mine[slot(width(i))].get_or_insert_with(|| WordBuf::zeroed(width(i), block * 2));
        run(stage, dir, input, buf.as_words_mut().sub(0, len * ks[i])).map(|()| 0)
    };
    let index = |e: &CodecError| match e {
        CodecError::Element(el) => Some(el.index),
        _ => None,
    };
    fused(n, stages.len(), pair, step, index, shift_index)
}
