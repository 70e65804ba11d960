//! Development benchmarks of the codecs and chains: `scale_offset`, `bitround` (copying and
//! in place), the fused `scale_offset -> cast_value` chain through the typed API and the
//! run-time API ([`DynChain`]), and `numcodecs.fixedscaleoffset`, on 1M elements of the same
//! data as `examples/throughput.rs`.
//!
//! ```sh
//! cargo bench --bench pipeline
//! cargo bench --bench pipeline -- chain
//! ```
//!
//! Throughput is reported in input bytes. The run-time API allocates its output inside the
//! timed call (that is its API); everything else writes into preallocated buffers.

use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use half::bf16;
use ndarray::{ArrayD, IxDyn};
use serde_json::{Value, json};
use zquant::CastValueConfig;
use zquant::{ArrayCodec, BitRound, CastValue, Chain, DType, DynArray, DynChain, ScaleOffset};
use zquant::{FixedScaleOffset, FixedScaleOffsetConfig};

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

/// Time `f(src, dst)` over a preallocated output.
fn copying<A: DType, B: DType>(b: Bencher, src: Vec<A>, f: impl Fn(&[A], &mut [B])) {
    let mut dst = vec![B::default(); src.len()];
    b.counter(BytesCount::of_slice(&src))
        .bench_local(|| f(black_box(&src), black_box(&mut dst)));
}

/// Time `f(data)` in place (every kernel here is idempotent on its own output).
fn in_place<T: DType>(b: Bencher, mut data: Vec<T>, f: impl Fn(&mut [T])) {
    b.counter(BytesCount::of_slice(&data))
        .bench_local(|| f(black_box(&mut data)));
}

#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod scale_offset {
    use super::*;

    fn f64_codec() -> ScaleOffset<f64> {
        ScaleOffset::new(273.15, 10.0).expect("non-zero scale")
    }

    fn i16_codec() -> ScaleOffset<i16> {
        ScaleOffset::new(100, 2).expect("non-zero scale")
    }

    fn i16_data() -> Vec<i16> {
        data::scaled_int(unit(), -10000.0, 10000.0)
            .into_iter()
            .map(|x| x as i16)
            .collect()
    }

    #[divan::bench]
    fn f64_encode(b: Bencher) {
        let c = f64_codec();
        copying(b, data::scaled(unit(), 250.0, 310.0), |s, d: &mut [f64]| {
            c.encode_slice(s, d).expect("finite")
        });
    }

    #[divan::bench]
    fn f64_decode(b: Bencher) {
        let c = f64_codec();
        let x = data::scaled(unit(), 250.0, 310.0);
        let mut src = vec![0.0; N];
        c.encode_slice(&x, &mut src).expect("finite");
        copying(b, src, |s, d: &mut [f64]| {
            c.decode_slice(s, d).expect("finite")
        });
    }

    #[divan::bench]
    fn i16_encode(b: Bencher) {
        let c = i16_codec();
        copying(b, i16_data(), |s, d: &mut [i16]| {
            c.encode_slice(s, d).expect("in range")
        });
    }

    #[divan::bench]
    fn i16_decode(b: Bencher) {
        let c = i16_codec();
        let mut src = vec![0i16; N];
        c.encode_slice(&i16_data(), &mut src).expect("in range");
        copying(b, src, |s, d: &mut [i16]| {
            c.decode_slice(s, d).expect("exact division")
        });
    }
}

/// The fused `scale_offset(offset 250, scale 4) -> cast_value(uint8, clamp)` chain.
#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod chain_f64_u8 {
    use super::*;

    fn typed() -> Chain<ScaleOffset<f64>, CastValue<f64, u8>> {
        let config =
            json!({"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp"});
        let cfg = CastValueConfig::from_configuration(Some(&config)).expect("valid");
        let cv = CastValue::from_config(&cfg).expect("valid");
        ScaleOffset::new(250.0, 4.0).expect("valid").then(cv)
    }

    fn dynamic() -> DynChain {
        let codecs: Vec<Value> = vec![
            json!({"name": "scale_offset", "configuration": {"offset": 250, "scale": 4}}),
            json!({"name": "cast_value", "configuration":
                {"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp"}}),
        ];
        DynChain::from_array_to_array_codecs(&json!("float64"), &json!(250.0), &codecs)
            .expect("valid")
    }

    fn encoded() -> Vec<u8> {
        let mut out = vec![0u8; N];
        typed()
            .encode_slice(&data::scaled(unit(), 250.0, 310.0), &mut out)
            .expect("clamp");
        out
    }

    #[divan::bench]
    fn encode_typed(b: Bencher) {
        let c = typed();
        copying(b, data::scaled(unit(), 250.0, 310.0), |s, d: &mut [u8]| {
            c.encode_slice(s, d).expect("clamp")
        });
    }

    #[divan::bench]
    fn decode_typed(b: Bencher) {
        let c = typed();
        copying(b, encoded(), |s, d: &mut [f64]| {
            c.decode_slice(s, d).expect("u8 decodes")
        });
    }

    #[divan::bench]
    fn encode_dyn(b: Bencher) {
        let c = dynamic();
        let a = DynArray::Float64(
            ArrayD::from_shape_vec(IxDyn(&[N]), data::scaled(unit(), 250.0, 310.0)).expect("1-d"),
        );
        b.counter(BytesCount::new(N * 8))
            .bench_local(|| c.encode(black_box(&a)).expect("clamp"));
    }

    #[divan::bench]
    fn decode_dyn(b: Bencher) {
        let c = dynamic();
        let a = DynArray::UInt8(ArrayD::from_shape_vec(IxDyn(&[N]), encoded()).expect("1-d"));
        b.counter(BytesCount::new(N))
            .bench_local(|| c.decode(black_box(&a)).expect("u8 decodes"));
    }
}

#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod bitround {
    use super::*;

    fn bf16_data() -> Vec<bf16> {
        data::scaled_f32(unit(), 200.0, 320.0)
            .into_iter()
            .map(bf16::from_f32)
            .collect()
    }

    #[divan::bench]
    fn f32_keepbits10_copy(b: Bencher) {
        let c = BitRound::<f32>::new(10).expect("valid");
        copying(
            b,
            data::scaled_f32(unit(), 200.0, 320.0),
            |s, d: &mut [f32]| c.encode_slice(s, d).expect("infallible"),
        );
    }

    #[divan::bench]
    fn f32_keepbits10_in_place(b: Bencher) {
        let c = BitRound::<f32>::new(10).expect("valid");
        in_place(b, data::scaled_f32(unit(), 200.0, 320.0), |d| {
            c.encode_slice_in_place(d).unwrap_or_default()
        });
    }

    #[divan::bench]
    fn f64_keepbits10_copy(b: Bencher) {
        let c = BitRound::<f64>::new(10).expect("valid");
        copying(b, data::scaled(unit(), 200.0, 320.0), |s, d: &mut [f64]| {
            c.encode_slice(s, d).expect("infallible")
        });
    }

    #[divan::bench]
    fn f64_keepbits10_in_place(b: Bencher) {
        let c = BitRound::<f64>::new(10).expect("valid");
        in_place(b, data::scaled(unit(), 200.0, 320.0), |d| {
            c.encode_slice_in_place(d).unwrap_or_default()
        });
    }

    #[divan::bench]
    fn bf16_keepbits5_copy(b: Bencher) {
        let c = BitRound::<bf16>::new(5).expect("valid");
        copying(b, bf16_data(), |s, d: &mut [bf16]| {
            c.encode_slice(s, d).expect("infallible")
        });
    }

    #[divan::bench]
    fn bf16_keepbits5_in_place(b: Bencher) {
        let c = BitRound::<bf16>::new(5).expect("valid");
        in_place(b, bf16_data(), |d| {
            c.encode_slice_in_place(d).unwrap_or_default()
        });
    }
}

/// `numcodecs.fixedscaleoffset` (offset 1000, scale 10, `<f8` -> `|u1`), typed and through
/// the run-time API.
#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod fixedscaleoffset {
    use super::*;

    fn config() -> Value {
        json!({"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"})
    }

    fn typed() -> FixedScaleOffset<f64, u8> {
        let cfg = FixedScaleOffsetConfig::from_configuration(Some(&config())).expect("valid");
        FixedScaleOffset::from_config(&cfg).expect("valid")
    }

    fn chain() -> Option<DynChain> {
        let codecs = [json!({"name": "numcodecs.fixedscaleoffset", "configuration": config()})];
        DynChain::from_array_to_array_codecs(&json!("float64"), &json!(1000.0), &codecs)
            .map_err(|e| eprintln!("skipping numcodecs.fixedscaleoffset: {e}"))
            .ok()
    }

    #[divan::bench]
    fn f8_to_u1_encode_typed(b: Bencher) {
        let c = typed();
        copying(
            b,
            data::scaled(unit(), 1000.0, 1025.0),
            |s, d: &mut [u8]| c.encode_slice(s, d).expect("never fails"),
        );
    }

    #[divan::bench]
    fn f8_to_u1_decode_typed(b: Bencher) {
        let c = typed();
        let mut src = vec![0u8; N];
        c.encode_slice(&data::scaled(unit(), 1000.0, 1025.0), &mut src)
            .expect("never fails");
        copying(b, src, |s, d: &mut [f64]| {
            c.decode_slice(s, d).expect("never fails")
        });
    }

    fn input() -> DynArray {
        DynArray::Float64(
            ArrayD::from_shape_vec(IxDyn(&[N]), data::scaled(unit(), 1000.0, 1025.0)).expect("1-d"),
        )
    }

    #[divan::bench]
    fn f8_to_u1_encode_dyn(b: Bencher) {
        let Some(c) = chain() else { return };
        let a = input();
        b.counter(BytesCount::new(N * 8))
            .bench_local(|| c.encode(black_box(&a)).expect("never fails"));
    }

    #[divan::bench]
    fn f8_to_u1_decode_dyn(b: Bencher) {
        let Some(c) = chain() else { return };
        let a = c.encode(&input()).expect("never fails");
        b.counter(BytesCount::new(N))
            .bench_local(|| c.decode(black_box(&a)).expect("never fails"));
    }
}
