//! zquant's integration tests, as one test crate: one module per topic, plus the shared
//! helpers (`common`, `formula`). One crate links zquant and the dev-dependencies once,
//! instead of once per test file.
//!
//! `cargo test` runs them all; `cargo test --test it <module>::` runs one topic. The
//! feature-gated modules need `--features float8` / `--features rayon` / `--features zarrs`.

mod common;
mod formula;

mod bit_counts;
mod choose;
mod codecs;
mod compile_fail;
mod conformance;
mod convert_boundaries;
mod convert_exhaustive;
mod convert_properties;
mod custom_dtype;
mod fast_paths;
mod fill_value;
mod fixedscaleoffset_fixture;
mod fixedscaleoffset_metadata;
#[cfg(feature = "float8")]
mod float8_interop;
mod fused_chain;
mod isa_levels;
mod layouts;
mod messages;
mod metadata;
mod module_graph;
mod narrow_f32_sweep;
mod numcodecs_quantize_astype;
mod packbits;
#[cfg(feature = "rayon")]
mod parallel;
mod plan;
mod robustness;
mod small_float_tables;
mod smoke;
mod word_layout;
mod zarr_chunks;
#[cfg(feature = "zarrs")]
mod zarrs_codecs;
