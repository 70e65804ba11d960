//! Diagnostics of the `#[zquant::dtype(...)]` attribute: each misuse is one error whose span
//! points at the offending key (`tests/ui/*.rs`, golden `.stderr` files), and a user type
//! works with zquant's generic API (`tests/ui/pass/*.rs`).
//!
//! Regenerate the golden files with `TRYBUILD=overwrite cargo test --test compile_fail`, and
//! review them: the messages are part of the macro's interface.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
