//! The planner's functions: per-chunk statistics, their merge, and the plan
//! (`zquant.plans` calls them; the planner itself is `zquant::plan`).

use pyo3::prelude::*;
use serde_json::Value;
use zquant::dtype::Words;
use zquant::plan as planner;

use crate::error::{dtype_id, err, parse};
use crate::words::InWords;

/// The planner's statistics of one chunk of a float array (`words` of `data_type`, `shape`
/// in C order) as JSON text; `information`: also count bit pairs along `axis`. With
/// `pairs_only`, the bit pairs alone (no elements counted): the pairs across a chunk edge,
/// from the two slices either side of it, which merged into the chunks' statistics make
/// the counts the whole array's.
#[pyfunction]
#[pyo3(signature = (data_type, words, shape, axis, information=false, pairs_only=false))]
pub(crate) fn plan_stats(
    py: Python<'_>,
    data_type: &str,
    words: &Bound<'_, PyAny>,
    shape: Vec<usize>,
    axis: usize,
    information: bool,
    pairs_only: bool,
) -> PyResult<String> {
    let id = dtype_id(data_type)?;
    let words = InWords::new(words)?;
    let w = words.words()?;
    let axis = (information || pairs_only).then_some(axis);
    let stats = py
        .detach(|| planner::PlanStats::of_words(id, w, &shape, axis))
        .map_err(err)?;
    let stats = if pairs_only {
        planner::PlanStats {
            counts: stats.counts,
            ..planner::PlanStats::empty(id)
        }
    } else {
        stats
    };
    Ok(stats.to_json().to_string())
}

/// Two pieces' planner statistics (JSON text) merged.
#[pyfunction]
pub(crate) fn plan_stats_merge(a: &str, b: &str) -> PyResult<String> {
    let mut x = planner::PlanStats::from_json(&parse("statistics", a)?).map_err(err)?;
    let y = planner::PlanStats::from_json(&parse("statistics", b)?).map_err(err)?;
    x.merge(&y).map_err(err)?;
    Ok(x.to_json().to_string())
}

/// A Python fill value as Zarr JSON: numbers as numbers, NaN and infinities by name, a
/// string as given (the data type's own encodings, such as `"0x7fc00000"`).
fn fill_json(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        return Ok(Value::from(0));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(Value::String(s));
    }
    if let Ok(b) = v.extract::<bool>() {
        return Ok(Value::from(u8::from(b)));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(Value::from(i));
    }
    let x: f64 = v
        .extract()
        .map_err(|_| err(format!("fill value {v} is not a number or a string")))?;
    Ok(if x.is_nan() {
        Value::from("NaN")
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Value::from(x)
    })
}

/// Plan the chain for an array of `data_type` (see `zquant::plan::plan`): `stats` from
/// `plan_stats`/`plan_stats_merge`, `samples` a few chunks as `(words, shape)`, `target` and
/// `options` JSON text, `size` the compressed size of a serialized chunk's bytes. Returns
/// the plan's JSON text.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan(
    data_type: &str,
    stats: &str,
    samples: Vec<(Bound<'_, PyAny>, Vec<usize>)>,
    fill_value: &Bound<'_, PyAny>,
    target: &str,
    options: &str,
    size: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let id = dtype_id(data_type)?;
    let stats = planner::PlanStats::from_json(&parse("statistics", stats)?).map_err(err)?;
    let target = planner::Target::from_json(&parse("target", target)?).map_err(err)?;
    let options = planner::PlanOptions::from_json(&parse("options", options)?).map_err(err)?;
    let fill = fill_json(fill_value)?;
    let held: Vec<(InWords<'_>, Vec<usize>)> = samples
        .iter()
        .map(|(w, shape)| Ok((InWords::new(w)?, shape.clone())))
        .collect::<PyResult<_>>()?;
    let words: Vec<(Words<'_>, &[usize])> = held
        .iter()
        .map(|(w, shape)| Ok((w.words()?, shape.as_slice())))
        .collect::<PyResult<_>>()?;
    let py = size.py();
    let mut failure: Option<PyErr> = None;
    let mut measure = |bytes: &[u8]| -> usize {
        if failure.is_some() {
            return 0;
        }
        match size
            .call1((pyo3::types::PyBytes::new(py, bytes),))
            .and_then(|r| r.extract::<usize>())
        {
            Ok(n) => n,
            Err(e) => {
                failure = Some(e);
                0
            }
        }
    };
    let result = planner::plan(id, &fill, &stats, &words, target, &options, &mut measure);
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(result.map_err(err)?.to_json().to_string())
}
