//! libFuzzer target for the run-time API: metadata JSON + bytes -> chain -> encode/decode
//! -> to_metadata -> build again (see `fuzz/run_case.rs` and docs/fuzzing.md).
#![no_main]

#[path = "../run_case.rs"]
mod run_case;

libfuzzer_sys::fuzz_target!(|data: &[u8]| run_case::run_case(data));
