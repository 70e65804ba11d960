//! Run conformance vector directories through the run-time API.
//!
//! ```sh
//! cargo run --release --example conformance -- tests/data/conformance
//! ```
//!
//! Prints one line per failing case and ends with `N passed, M failed`; exits non-zero when
//! any case fails.

use std::path::PathBuf;
use std::process::ExitCode;

use zquant::conformance::{Report, run_dir};

fn main() -> ExitCode {
    let dirs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if dirs.is_empty() {
        eprintln!("usage: conformance DIR [DIR ...]");
        return ExitCode::from(2);
    }
    let mut report = Report::default();
    for d in &dirs {
        if let Err(e) = run_dir(d, &mut report) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    for (id, why) in &report.failures {
        println!("FAIL {id}: {why}");
    }
    println!("{}", report.summary());
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
