//! Compile-time diagnostics, pinned by trybuild golden `.stderr` files. The paths are
//! relative to the crate root (trybuild runs from `CARGO_MANIFEST_DIR`).
//!
//! - `ui`: each misuse of the `#[zquant::dtype(...)]` attribute is one error whose span
//!   points at the offending key (`tests/ui/*.rs`), and a user type works with zquant's
//!   generic API (`tests/ui/pass/*.rs`).
//! - `chain_stages_must_line_up`: typed chains only compile when each stage reads what the
//!   previous one writes (`tests/ui_chain/`).
//! - `nan_as_needs_a_nan`: `ScalarMap::nan_as` only builds for a source type with NaN
//!   (`tests/ui_map/`).
//!
//! Regenerate the golden files with `TRYBUILD=overwrite cargo test --test it compile_fail`,
//! and review them: the messages are part of the macro's interface.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}

#[test]
fn chain_stages_must_line_up() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_chain/*_mismatch.rs");
    t.pass("tests/ui_chain/*_pass.rs");
}

#[test]
fn nan_as_needs_a_nan() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_map/nan_as_integer.rs");
    t.pass("tests/ui_map/nan_as_float_pass.rs");
}
