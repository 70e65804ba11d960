//! Every public conformance vector (`tests/data/conformance`, kept in the repository; its
//! `SOURCE.md` says where it comes from) through the run-time API.
//! The case id appears in every failure message.

use std::path::PathBuf;

use zquant::conformance::{Report, run_dir};

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
    eprintln!("{}", report.summary());
    assert!(
        report.passed > 3000,
        "too few cases ran: {}",
        report.summary()
    );
    assert!(report.failures.is_empty(), "{}", report.summary());
}
