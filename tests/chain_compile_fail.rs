//! Typed chains only compile when each stage reads what the previous one writes.

#[test]
fn chain_stages_must_line_up() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_chain/*_mismatch.rs");
    t.pass("tests/ui_chain/*_pass.rs");
}
