//! Every public conformance vector (`tests/data/conformance`, kept in the repository; its
//! `SOURCE.md` says where it comes from) through the run-time API.
//! The case id appears in every failure message.

use std::path::PathBuf;

use serde_json::Value;
use zquant::conformance::{Outcome, Report, run_case, run_dir};

/// Vectors whose expectation zquant departs from, each for a reading in
/// docs/spec-readings.md, with the oracle whose result zquant gives instead.
///
/// `numcodecs.bitround` is defined by numcodecs ("See numcodecs' documentation"), whose
/// `BitRound` takes `keepbits >= 0`; the vector applies `bitround`'s README ("Must be at
/// least 1") to the alias.
const DEPARTURES: &[(&str, &str)] =
    &[("bitround/invalid/alias-keepbits-zero", "numcodecs==0.17.1")];

#[test]
fn all_public_conformance_vectors_pass() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/conformance"
    ));
    assert!(
        dir.is_dir(),
        "conformance vectors not found at {} (tests/data/conformance/ in the repository)",
        dir.display()
    );
    let mut report = Report::default();
    run_dir(&dir, &mut report).expect("vector files are readable JSON");
    for (id, why) in &report.failures {
        eprintln!("FAIL {id}: {why}");
    }
    report
        .failures
        .retain(|(id, _)| !DEPARTURES.iter().any(|(d, _)| d == id));
    eprintln!("{}", report.summary());
    assert!(
        report.passed > 3000,
        "too few cases ran: {}",
        report.summary()
    );
    assert!(report.failures.is_empty(), "{}", report.summary());
}

/// Each departure: the vector fails as written, and passes with the named oracle's result as
/// its expectation.
#[test]
fn departures_follow_their_oracle() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/conformance"
    ));
    let mut cases = Vec::new();
    for f in std::fs::read_dir(&dir).unwrap() {
        let path = f.unwrap().path();
        if path.file_name().is_some_and(|n| n == "disagreements.json") {
            continue;
        }
        if path.extension().is_some_and(|x| x == "json") {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            if let Some(list) = v.get("cases").and_then(Value::as_array) {
                cases.extend(list.iter().cloned());
            }
        }
    }
    for (id, oracle) in DEPARTURES {
        let case = cases
            .iter()
            .find(|c| c["id"] == *id)
            .unwrap_or_else(|| panic!("{id}: no such vector"));
        assert!(
            matches!(run_case(case), Outcome::Fail(_)),
            "{id} passes: remove the departure"
        );
        let result = case["disagreements"]
            .as_array()
            .and_then(|d| d.iter().find(|r| r["oracle"] == *oracle))
            .unwrap_or_else(|| panic!("{id}: no result of {oracle}"))["result"]
            .clone();
        let mut by_oracle = case.clone();
        let obj = by_oracle.as_object_mut().unwrap();
        obj.remove("error");
        obj.insert("encoded".into(), result["encoded"].clone());
        obj.insert("decoded".into(), result["decoded"].clone());
        assert_eq!(
            run_case(&by_oracle),
            Outcome::Pass,
            "{id} with {oracle}'s result"
        );
    }
}
