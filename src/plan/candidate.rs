//! The candidates run: each chain `specs` proposes, on the statistics' extremes and the
//! sample, its bytes measured in every arrangement, its guarantee checked on every element;
//! then ranked.

use serde_json::{Value, json};

use super::specs::{
    Ctx, Spec, bitround_spec, int_specs, offset_bitround_spec, pow2, small_float_specs,
};
use super::{Candidate, Plan, PlanOptions, PlanStats, Target, rearrange};
use crate::choose::{ChooseError, InformationOptions, binade};
use crate::codec::bitround;
use crate::convert::exact_of;
use crate::dispatch::{DynChain, words_to_le};
use crate::dtype::DTypeId;
use crate::number::layout::Format;
use crate::number::storage::{WordBuf, Words};
use crate::zarr::PackBits;

/// The values of elements of `id` held as words.
fn values(id: DTypeId, w: Words<'_>) -> Vec<f64> {
    match (id, w) {
        (DTypeId::Float64, Words::U64(w)) => w.iter().map(|&b| f64::from_bits(b)).collect(),
        (DTypeId::Float32, Words::U32(w)) => {
            w.iter().map(|&b| f64::from(f32::from_bits(b))).collect()
        }
        (DTypeId::Float16, Words::U16(w)) => w
            .iter()
            .map(|&b| half::f16::from_bits(b).to_f64())
            .collect(),
        (DTypeId::BFloat16, Words::U16(w)) => w
            .iter()
            .map(|&b| half::bf16::from_bits(b).to_f64())
            .collect(),
        (_, w) => {
            let f = id.format().expect("a real type");
            (0..w.len())
                .map(|i| exact_of(f, w.get(i).unwrap_or(0)).to_f64())
                .collect()
        }
    }
}

/// Encode, serialize, deserialize, decode: the stored bytes and the decoded words.
fn round_trip(
    chain: &DynChain,
    packbits: Option<&PackBits>,
    words: Words<'_>,
    shape: &[usize],
) -> Result<(Vec<u8>, WordBuf), String> {
    let n = words.len();
    let (from, to) = (chain.data_type().id, chain.encoded_data_type().id);
    let mut enc = WordBuf::zeroed(to.word_bits(), n * to.words_per_element());
    chain
        .encode_words(words, shape, enc.as_words_mut())
        .map_err(|e| e.to_string())?;
    let (bytes, enc) = match packbits {
        Some(pb) => {
            let bytes = pb.encode(enc.as_words()).map_err(|e| e.to_string())?;
            let back = pb.decode(&bytes, n).map_err(|e| e.to_string())?;
            (bytes, back)
        }
        None => (words_to_le(to, enc.as_words()), enc),
    };
    let mut dec = WordBuf::zeroed(from.word_bits(), n * from.words_per_element());
    chain
        .decode_words(enc.as_words(), shape, dec.as_words_mut())
        .map_err(|e| e.to_string())?;
    Ok((bytes, dec))
}

/// Every element within the guarantee, NaN kept, infinities and zeros exact.
fn check(xs: &[f64], ys: &[f64], bound: f64, rel: bool) -> Result<(), String> {
    for (&x, &y) in xs.iter().zip(ys) {
        let ok = if x.is_nan() {
            y.is_nan()
        } else if x.is_infinite() || x == 0.0 {
            y == x
        } else {
            let err = (y - x).abs();
            err <= if rel { bound * x.abs() } else { bound }
        };
        if !ok {
            return Err(format!(
                "{x} decodes as {y}, outside the guarantee {bound:e}{}",
                if rel { " (relative)" } else { "" }
            ));
        }
    }
    Ok(())
}

/// The statistics' extremes (and NaN, infinities, zero, the smallest nonzero magnitude),
/// as words of the source type: where a guarantee could break first.
fn extremes(c: &Ctx) -> WordBuf {
    let mut v = Vec::new();
    if let Some(r) = c.stats.range {
        v.extend([r.min, r.max]);
    }
    if c.stats.zeros > 0 {
        v.extend([0.0, -0.0]);
    }
    if let (Some(nz), Some(r)) = (c.stats.min_nonzero_abs, c.stats.range) {
        if r.max >= nz {
            v.push(nz);
        }
        if r.min <= -nz {
            v.push(-nz);
        }
    }
    if c.stats.nan > 0 {
        v.push(f64::NAN);
    }
    if c.stats.pos_inf > 0 {
        v.push(f64::INFINITY);
    }
    if c.stats.neg_inf > 0 {
        v.push(f64::NEG_INFINITY);
    }
    let mut w = WordBuf::zeroed(c.id.word_bits(), v.len());
    {
        let mut m = w.as_words_mut();
        for (i, x) in v.iter().enumerate() {
            m.set(i, c.bits_of(*x));
        }
    }
    w
}

pub(super) fn run(
    id: DTypeId,
    fill_value: &Value,
    stats: &PlanStats,
    samples: &[(Words<'_>, &[usize])],
    target: Target,
    options: &PlanOptions,
    size: &mut dyn FnMut(&[u8]) -> usize,
) -> Result<Plan, ChooseError> {
    target.check()?;
    let l = match id.format() {
        Some(Format::Float(l)) if l.signed && l.subnormals => l,
        _ => return Err(ChooseError::SourceNotFloat(id.name())),
    };
    if stats.dtype != id {
        return Err(ChooseError::Plan(format!(
            "statistics of {} for an array of {id}",
            stats.dtype
        )));
    }
    for (w, shape) in samples {
        let n: Option<usize> = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if w.bits() != id.word_bits() || n != Some(w.len()) {
            return Err(ChooseError::Plan(format!(
                "a sample of {} {}-bit words is not shape {shape:?} of {id}",
                w.len(),
                w.bits()
            )));
        }
    }
    let fill = crate::DynArray::fill_value(id, fill_value)
        .ok()
        .and_then(|a| a.first_scalar())
        .map(|s| exact_of(Format::Float(l), s[0]).to_f64())
        .ok_or_else(|| {
            ChooseError::Plan(format!("fill value {fill_value} is not a value of {id}"))
        })?;
    let max_abs = stats.max_abs();
    // An information level becomes the absolute bound bitround guarantees at its keepbits.
    let (bound, rel, abs_bound) = match target {
        Target::MaxAbsError(b) => (b, false, None),
        Target::MaxRelError(r) => (r, true, None),
        Target::Information(level) => {
            let counts = stats.counts.as_ref().ok_or_else(|| {
                ChooseError::Plan(
                    "an information target needs bit counts: compute the statistics with an \
                     axis"
                        .into(),
                )
            })?;
            let k = counts
                .information(&InformationOptions::default())?
                .keepbits(level)?;
            let b = if k >= l.mantissa_bits {
                0.0
            } else {
                pow2(binade(&l, max_abs) - k as i32 - 1)
            };
            (b, false, Some(b))
        }
    };
    let ctx = Ctx {
        id,
        l,
        stats,
        bound,
        rel,
        fill,
        headroom: options.headroom,
    };
    let mut specs = Vec::new();
    if bound > 0.0 {
        if bitround::supports(id.kind()) {
            specs.push(bitround_spec(&ctx));
        }
        specs.extend(int_specs(&ctx));
        specs.extend(small_float_specs(&ctx));
        if bitround::supports(id.kind()) {
            specs.push(offset_bitround_spec(&ctx));
        }
    }
    specs.push(Spec {
        name: "lossless".into(),
        filters: Vec::new(),
        packbits: None,
        bound: Some(0.0),
        best: Some(0.0),
        readers: ctx.readers(true, true),
        ruled_out: None,
        lossy: false,
    });
    for s in &mut specs {
        if s.ruled_out.is_none() && s.bound.is_some_and(|b| b > bound) {
            s.ruled_out = Some(format!(
                "guarantees {:.3e} > {bound:e}",
                s.bound.unwrap_or(0.0)
            ));
        }
    }

    let extremes = extremes(&ctx);
    let xs_extremes = values(id, extremes.as_words());
    // The samples taken (whole, up to the option's count), their values once for all
    // candidates.
    let mut seen = 0usize;
    let taken: Vec<(Words<'_>, &[usize], Vec<f64>)> = samples
        .iter()
        .take_while(|(w, _)| {
            let take = seen == 0 || seen + w.len() <= options.sample_elements;
            seen += w.len();
            take
        })
        .map(|&(w, shape)| (w, shape, values(id, w)))
        .collect();
    let dtype = json!(id.name());
    let mut candidates = Vec::with_capacity(specs.len());
    // Per candidate: its spec, and whether it failed when run (no bound to offer then).
    let mut of_spec = Vec::with_capacity(specs.len());
    let mut failed = Vec::with_capacity(specs.len());
    for (si, s) in specs.iter().enumerate() {
        let mut row = Candidate {
            name: s.name.clone(),
            filters: s.filters.clone(),
            serializer: s.packbits.map(|p| p.to_metadata()),
            bytes_codecs: Vec::new(),
            bound: s.bound,
            sample_bytes: None,
            ratio: None,
            readers: s.readers.clone(),
            ruled_out: s.ruled_out.clone(),
        };
        let mut push = |row: Candidate, fail: bool| {
            candidates.push(row);
            of_spec.push(si);
            failed.push(fail);
        };
        // Ruled out already (by its bound): not worth a run.
        if row.ruled_out.is_some() && s.lossy {
            push(row, false);
            continue;
        }
        let g = s.bound.unwrap_or(0.0);
        let chain = match DynChain::from_array_to_array_codecs(&dtype, fill_value, &s.filters) {
            Ok(chain) => chain,
            Err(e) => {
                row.ruled_out
                    .get_or_insert(format!("the chain refuses it: {e}"));
                push(row, false);
                continue;
            }
        };
        let stored = chain.encoded_data_type().id;
        let variants = rearrange::Rearrange::for_stored(stored, s.packbits.is_some());
        let mut run_one =
            |words: Words<'_>, shape: &[usize], xs: &[f64]| -> Result<Vec<u64>, String> {
                let (bytes, dec) = round_trip(&chain, s.packbits.as_ref(), words, shape)?;
                check(xs, &values(id, dec.as_words()), g, rel)?;
                Ok(variants
                    .iter()
                    .map(|v| size(&v.apply(&bytes, stored)) as u64)
                    .collect())
            };
        let n_ext = xs_extremes.len();
        let ext = if n_ext > 0 {
            run_one(extremes.as_words(), &[n_ext], &xs_extremes).map(|_| ())
        } else {
            Ok(())
        };
        let measured = ext.and_then(|()| {
            let mut total = vec![0u64; variants.len()];
            for (w, shape, xs) in &taken {
                for (t, b) in total.iter_mut().zip(run_one(*w, shape, xs)?) {
                    *t += b;
                }
            }
            Ok(total)
        });
        match measured {
            Ok(totals) => {
                for (v, b) in variants.iter().zip(totals) {
                    let mut r = row.clone();
                    r.sample_bytes = Some(b);
                    v.annotate(&mut r, stored);
                    push(r, false);
                }
            }
            Err(e) => {
                row.ruled_out
                    .get_or_insert(format!("fails its guarantee when run: {e}"));
                push(row, true);
            }
        }
    }
    for c in &mut candidates {
        if !options.readers.admits(&c.readers, ctx.zarr_python_type()) {
            c.ruled_out.get_or_insert(format!(
                "not opened by the readers asked for ({:?}; readers \"any\" allows it)",
                options.readers
            ));
        }
    }
    // The lossless baseline, unrearranged, is the last row: the reference for ratios.
    if let Some(i) = candidates
        .iter()
        .position(|c| c.name == "lossless" && c.bytes_codecs.is_empty())
    {
        let base = candidates.remove(i);
        let (sp, fl) = (of_spec.remove(i), failed.remove(i));
        candidates.push(base);
        of_spec.push(sp);
        failed.push(fl);
    }
    let base = candidates.last().and_then(|c| c.sample_bytes);
    for c in &mut candidates {
        if let (Some(b), Some(x)) = (base, c.sample_bytes) {
            c.ratio = Some(b as f64 / (x as f64).max(1.0));
        }
    }
    let feasible = |i: &usize| candidates[*i].ruled_out.is_none();
    let lossy_ok = (0..candidates.len())
        .filter(feasible)
        .any(|i| specs[of_spec[i]].lossy);
    if !lossy_ok && bound > 0.0 && !options.lossless_fallback {
        let (smallest, who) = (0..candidates.len())
            .filter(|&i| specs[of_spec[i]].lossy && !failed[i])
            .filter_map(|i| {
                specs[of_spec[i]]
                    .best
                    .map(|b| (b, candidates[i].name.clone()))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((0.0, "none".into()));
        return Err(ChooseError::Unreachable {
            requested: target.describe(),
            smallest,
            candidate: who,
        });
    }
    let winner = (0..candidates.len())
        .filter(feasible)
        .min_by_key(|&i| (candidates[i].sample_bytes.unwrap_or(u64::MAX), i))
        .unwrap_or(candidates.len() - 1);
    Ok(Plan {
        target,
        abs_bound,
        candidates,
        winner,
    })
}
