//! Runs conformance vector files (the format of `tests/data/conformance/README.md`) through the
//! run-time API.
//!
//! Each case builds a [`DynChain`] from `data_type`, `fill_value` and `codecs`, then follows
//! the README's harness algorithm: a `"metadata"` error must be rejected at build time (or at
//! the latest by the first encode, without output); otherwise the input is encoded and
//! compared with `encoded` (hex, data type, fill value), and `encoded.hex` is decoded and
//! compared with `decoded`. Elements compare bit for bit, except that any NaN equals any NaN
//! (per component for complex types). Fields a case does not have are not checked.

use std::path::Path;

use serde_json::Value;

use crate::dispatch::{DynArray, DynChain};
use crate::metadata::DataType;

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything checked matched.
    Pass,
    /// Something differed: what was expected and what came out.
    Fail(String),
}

/// Results of a run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// `(case id, failure description)` for every failing case.
    pub failures: Vec<(String, String)>,
    /// Number of passing cases.
    pub passed: usize,
}

impl Report {
    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failures.len())
    }
}

fn hex_decode(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd-length hex {s:?}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("bad hex {s:?}: {e}")))
        .collect()
}

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn shape_of(case: &Value) -> Result<Vec<usize>, String> {
    case.get("shape")
        .and_then(Value::as_array)
        .ok_or("case has no shape")?
        .iter()
        .map(|v| {
            v.as_u64()
                .map(|n| n as usize)
                .ok_or_else(|| format!("bad shape entry {v}"))
        })
        .collect()
}

/// Parse an ARRAY object into a [`DynArray`] of `shape`.
fn array_of(obj: &Value, shape: &[usize]) -> Result<DynArray, String> {
    let dt = DataType::from_json(obj.get("data_type").ok_or("array without data_type")?)
        .map_err(|e| e.to_string())?;
    let hex = obj
        .get("hex")
        .and_then(Value::as_str)
        .ok_or("array without hex")?;
    DynArray::from_le_bytes(dt.id, shape, &hex_decode(hex)?).map_err(|e| e.to_string())
}

/// Run one case.
pub fn run_case(case: &Value) -> Outcome {
    match run_case_inner(case) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn run_case_inner(case: &Value) -> Result<(), String> {
    let error = case.get("error").and_then(Value::as_str);
    let shape = shape_of(case)?;
    let codecs: Vec<Value> = case
        .get("codecs")
        .and_then(Value::as_array)
        .cloned()
        .ok_or("case has no codecs list")?;
    let data_type = case.get("data_type").ok_or("case has no data_type")?;
    let fill = case.get("fill_value").ok_or("case has no fill_value")?;
    let chain = DynChain::from_array_to_array_codecs(data_type, fill, &codecs);
    if error == Some("metadata") {
        let Ok(chain) = chain else { return Ok(()) };
        // Acceptable only if the first encode fails.
        if let Some(input) = case.get("input").filter(|v| !v.is_null()) {
            let a = array_of(input, &shape)?;
            if chain.encode(&a).is_err() {
                return Ok(());
            }
        }
        return Err("expected a metadata error, but the chain was accepted".into());
    }
    let chain = chain.map_err(|e| format!("expected a valid chain, got metadata error: {e}"))?;
    if let Some(input) = case.get("input").filter(|v| !v.is_null()) {
        let a = array_of(input, &shape)?;
        let enc = chain.encode(&a);
        if error == Some("encode") {
            return match enc {
                Err(_) => Ok(()),
                Ok(out) => Err(format!(
                    "expected an encode error, got {}",
                    hex_encode(&out.to_le_bytes())
                )),
            };
        }
        let enc = enc.map_err(|e| format!("expected encode to succeed, got error: {e}"))?;
        if let Some(expected) = case.get("encoded") {
            let want = array_of(expected, &shape)?;
            if !enc.same_as(&want) {
                return Err(format!(
                    "encoded: expected {} ({}), got {} ({})",
                    hex_encode(&want.to_le_bytes()),
                    want.dtype(),
                    hex_encode(&enc.to_le_bytes()),
                    enc.dtype()
                ));
            }
            if let Some(dt) = expected.get("data_type") {
                let want_dt = DataType::from_json(dt).map_err(|e| e.to_string())?;
                if &want_dt != chain.encoded_data_type() {
                    return Err(format!(
                        "encoded data type: expected {}, got {}",
                        want_dt.to_json(),
                        chain.encoded_data_type().to_json()
                    ));
                }
            }
            if let Some(fv) = expected.get("fill_value") {
                let got = chain.encoded_fill_value();
                let want = DynArray::fill_value(got.dtype(), fv)
                    .map_err(|e| format!("expected fill value unparsable: {e}"))?;
                if !got.same_as(&want) {
                    return Err(format!(
                        "encoded fill value: expected {fv}, got {}",
                        got.first_to_json().unwrap_or(Value::Null)
                    ));
                }
            }
        }
    } else if error == Some("encode") {
        return Err("case expects an encode error but has no input".into());
    }
    let Some(encoded) = case.get("encoded") else {
        return Ok(());
    };
    let e = array_of(encoded, &shape)?;
    let dec = chain.decode(&e);
    if error == Some("decode") {
        return match dec {
            Err(_) => Ok(()),
            Ok(out) => Err(format!(
                "expected a decode error, got {}",
                hex_encode(&out.to_le_bytes())
            )),
        };
    }
    let dec = dec.map_err(|e| format!("expected decode to succeed, got error: {e}"))?;
    if let Some(expected) = case.get("decoded") {
        let want = array_of(expected, &shape)?;
        if !dec.same_as(&want) {
            return Err(format!(
                "decoded: expected {}, got {}",
                hex_encode(&want.to_le_bytes()),
                hex_encode(&dec.to_le_bytes())
            ));
        }
    }
    Ok(())
}

/// Run every case of every `*.json` file with a `cases` list in `dir`.
///
/// # Errors
/// An unreadable directory or file, or invalid JSON.
pub fn run_dir(dir: &Path, report: &mut Report) -> Result<(), String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        let Some(cases) = v.get("cases").and_then(Value::as_array) else {
            continue;
        };
        for case in cases {
            let id = case
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("<no id>")
                .to_string();
            match run_case(case) {
                Outcome::Pass => report.passed += 1,
                Outcome::Fail(why) => report.failures.push((id, why)),
            }
        }
    }
    Ok(())
}
