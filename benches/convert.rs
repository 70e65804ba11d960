//! Development benchmarks of the conversion kernels: `cast_value` encode/decode over slices
//! and the bare conversion core [`zquant::cast_slice`], on 1M elements of the same
//! data as `examples/throughput.rs`.
//!
//! ```sh
//! cargo bench --bench convert               # all
//! cargo bench --bench convert -- f64_to_u8  # a filter
//! ```
//!
//! Throughput is reported in input bytes. For the numbers that go into
//! `docs/performance.md` (16M elements, memcpy baseline, JSON) use the throughput example.

use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use half::{bf16, f16};
use serde_json::{Value, json};
use zquant::CastValueConfig;
use zquant::dtype::{Float4E2M1Fn, Float8E4M3, Float8E5M2};
use zquant::{ArrayCodec, CastOptions, CastValue, OutOfRange, Real, Rounding};

#[path = "common/data.rs"]
mod data;

/// Elements per benchmark.
const N: usize = 1 << 20;

fn main() {
    divan::main();
}

fn unit() -> &'static [f64] {
    static UNIT: OnceLock<Vec<f64>> = OnceLock::new();
    UNIT.get_or_init(|| data::unit_field(N, 0x5eed))
}

fn codec<S: Real, D: Real>(data_type: &str, rounding: &str, oor: Option<&str>) -> CastValue<S, D> {
    let mut c = json!({"data_type": data_type, "rounding": rounding});
    if let Some(o) = oor {
        c["out_of_range"] = json!(o);
    }
    codec_from(c)
}

fn codec_from<S: Real, D: Real>(config: Value) -> CastValue<S, D> {
    let cfg = CastValueConfig::from_configuration(Some(&config)).expect("valid configuration");
    CastValue::from_config(&cfg).expect("valid codec")
}

/// Time `codec.encode_slice(src, dst)` over a preallocated output.
fn encode<S: Real, D: Real>(b: Bencher, codec: CastValue<S, D>, src: Vec<S>) {
    let mut dst = vec![D::default(); src.len()];
    b.counter(BytesCount::of_slice(&src)).bench_local(|| {
        codec
            .encode_slice(black_box(&src), black_box(&mut dst))
            .expect("in-range data")
    });
}

#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod cast_value {
    use super::*;

    #[divan::bench]
    fn f64_to_u8_nearest_even_clamp(b: Bencher) {
        let c = codec::<f64, u8>("uint8", "nearest-even", Some("clamp"));
        encode(b, c, data::scaled(unit(), 0.0, 255.0));
    }

    #[divan::bench]
    fn f64_to_u8_nearest_even_checked(b: Bencher) {
        let c = codec::<f64, u8>("uint8", "nearest-even", None);
        encode(b, c, data::scaled(unit(), 0.0, 255.0));
    }

    #[divan::bench]
    fn f64_to_u8_nearest_away_clamp(b: Bencher) {
        let c = codec::<f64, u8>("uint8", "nearest-away", Some("clamp"));
        encode(b, c, data::scaled(unit(), 0.0, 255.0));
    }

    #[divan::bench]
    fn f64_to_u8_wrap(b: Bencher) {
        let c = codec::<f64, u8>("uint8", "nearest-even", Some("wrap"));
        encode(b, c, data::scaled(unit(), 0.0, 255.0));
    }

    #[divan::bench]
    fn f64_to_u8_clamp_scalar_map_nan(b: Bencher) {
        let c = codec_from::<f64, u8>(json!({
            "data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
        }));
        encode(
            b,
            c,
            data::with_nans(data::scaled(unit(), 0.0, 255.0), 1000, 7),
        );
    }

    #[divan::bench]
    fn f64_to_i32(b: Bencher) {
        let c = codec::<f64, i32>("int32", "nearest-even", None);
        encode(b, c, data::scaled(unit(), -1.0e9, 1.0e9));
    }

    #[divan::bench]
    fn f64_to_f32(b: Bencher) {
        let c = codec::<f64, f32>("float32", "nearest-even", None);
        encode(b, c, data::scaled(unit(), 200.0, 320.0));
    }

    #[divan::bench]
    fn f32_to_f16(b: Bencher) {
        let c = codec::<f32, f16>("float16", "nearest-even", None);
        encode(b, c, data::scaled_f32(unit(), -1000.0, 1000.0));
    }

    #[divan::bench]
    fn f32_to_bf16(b: Bencher) {
        let c = codec::<f32, bf16>("bfloat16", "nearest-even", None);
        encode(b, c, data::scaled_f32(unit(), -1000.0, 1000.0));
    }

    #[divan::bench]
    fn f64_to_f16(b: Bencher) {
        let c = codec::<f64, f16>("float16", "nearest-even", None);
        encode(b, c, data::scaled(unit(), -1000.0, 1000.0));
    }

    #[divan::bench]
    fn f32_to_float8_e4m3(b: Bencher) {
        let c = codec::<f32, Float8E4M3>("float8_e4m3", "nearest-even", None);
        encode(b, c, data::scaled_f32(unit(), -200.0, 200.0));
    }

    #[divan::bench]
    fn f32_to_float8_e5m2(b: Bencher) {
        let c = codec::<f32, Float8E5M2>("float8_e5m2", "nearest-even", None);
        encode(b, c, data::scaled_f32(unit(), -50000.0, 50000.0));
    }

    #[divan::bench]
    fn f32_to_float4_e2m1fn_clamp(b: Bencher) {
        let c = codec::<f32, Float4E2M1Fn>("float4_e2m1fn", "nearest-even", Some("clamp"));
        encode(b, c, data::scaled_f32(unit(), -8.0, 8.0));
    }

    #[divan::bench]
    fn float8_e4m3_to_f32(b: Bencher) {
        let to8 = codec::<f32, Float8E4M3>("float8_e4m3", "nearest-even", Some("clamp"));
        let f = data::scaled_f32(unit(), -200.0, 200.0);
        let mut src = vec![Float8E4M3::default(); f.len()];
        to8.encode_slice(&f, &mut src).expect("clamp");
        encode(
            b,
            codec::<Float8E4M3, f32>("float32", "nearest-even", None),
            src,
        );
    }

    #[divan::bench]
    fn f16_to_f32(b: Bencher) {
        let src: Vec<f16> = data::scaled_f32(unit(), -1000.0, 1000.0)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        encode(b, codec::<f16, f32>("float32", "nearest-even", None), src);
    }

    #[divan::bench]
    fn i16_to_u8_wrap(b: Bencher) {
        let src: Vec<i16> = data::scaled_int(unit(), -1000.0, 1000.0)
            .into_iter()
            .map(|x| x as i16)
            .collect();
        encode(
            b,
            codec::<i16, u8>("uint8", "nearest-even", Some("wrap")),
            src,
        );
    }

    #[divan::bench]
    fn i32_to_f32(b: Bencher) {
        let src: Vec<i32> = data::scaled_int(unit(), -2.0e9, 2.0e9)
            .into_iter()
            .map(|x| x as i32)
            .collect();
        encode(b, codec::<i32, f32>("float32", "nearest-even", None), src);
    }

    /// `cast_value` decode (`uint8 -> float64`), the second half of a chain decode.
    #[divan::bench]
    fn decode_u8_to_f64(b: Bencher) {
        let c = codec::<f64, u8>("uint8", "nearest-even", Some("clamp"));
        let x = data::scaled(unit(), 0.0, 255.0);
        let mut src = vec![0u8; x.len()];
        c.encode_slice(&x, &mut src).expect("clamp");
        let mut dst = vec![0.0f64; src.len()];
        b.counter(BytesCount::of_slice(&src)).bench_local(|| {
            c.decode_slice(black_box(&src), black_box(&mut dst))
                .expect("u8 decodes")
        });
    }
}

/// The conversion core without a codec around it.
#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod cast_slice {
    use super::*;

    fn run<S: Real, D: Real>(b: Bencher, src: Vec<S>, opts: CastOptions) {
        let mut dst = vec![D::default(); src.len()];
        b.counter(BytesCount::of_slice(&src)).bench_local(|| {
            zquant::cast_slice(black_box(&src), black_box(&mut dst), opts).expect("in-range data")
        });
    }

    #[divan::bench]
    fn f64_to_u8_nearest_even_clamp(b: Bencher) {
        let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
        run::<f64, u8>(b, data::scaled(unit(), 0.0, 255.0), opts);
    }

    #[divan::bench]
    fn f32_to_f16(b: Bencher) {
        run::<f32, f16>(
            b,
            data::scaled_f32(unit(), -1000.0, 1000.0),
            CastOptions::default(),
        );
    }

    #[divan::bench]
    fn f32_to_float8_e4m3(b: Bencher) {
        run::<f32, Float8E4M3>(
            b,
            data::scaled_f32(unit(), -200.0, 200.0),
            CastOptions::default(),
        );
    }
}

/// The baseline: a memcpy of 8 MiB (1M f64), as in the throughput example.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn memcpy_8mib(b: Bencher) {
    let src = vec![1u8; N * 8];
    let mut dst = vec![0u8; N * 8];
    b.counter(BytesCount::of_slice(&src))
        .bench_local(|| black_box(&mut dst).copy_from_slice(black_box(&src)));
}
