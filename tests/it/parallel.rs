//! `zquant::parallel` (feature `rayon`) gives what the one-threaded calls give: the same
//! output bits, and on failure the same first failing element with its whole-slice index.
//!
//! Run with `cargo test --features rayon --test it parallel::`.

use ndarray::{Array2, ShapeBuilder};
use zquant::parallel::{CHUNK, ParArrayCodec, for_each_chunk, map_chunks};
use zquant::{
    ArrayCodec, ArrayCodecExt, CastOptions, CastValue, Chain, OutOfRange, Rounding, ScalarMap,
    ScaleOffset,
};

/// SplitMix64.
fn stream(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn chain() -> Chain<ScaleOffset<f64>, CastValue<f64, u8>> {
    let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Error);
    Chain::new(
        ScaleOffset::new(250.0, 4.0).expect("scale_offset"),
        CastValue::new(opts, ScalarMap::default()).expect("cast_value"),
    )
}

/// Values in `[250, 313.75]`: they encode to `[0, 255]`.
fn in_range(n: usize, seed: u64) -> Vec<f64> {
    let mut r = stream(seed);
    (0..n)
        .map(|_| 250.0 + (r() % 1024) as f64 / 16.0 * (255.0 / 256.0))
        .collect()
}

#[test]
fn par_encode_and_decode_match_one_thread() {
    let c = chain();
    // Not a multiple of CHUNK: the last chunk is short.
    let n = 5 * CHUNK + 123;
    let x = in_range(n, 1);
    let (mut one, mut par) = (vec![0u8; n], vec![0u8; n]);
    c.encode_slice(&x, &mut one).expect("one thread");
    c.par_encode_slice(&x, &mut par).expect("parallel");
    assert_eq!(one, par);
    let (mut back_one, mut back_par) = (vec![0.0; n], vec![0.0; n]);
    c.decode_slice(&one, &mut back_one).expect("one thread");
    c.par_decode_slice(&one, &mut back_par).expect("parallel");
    assert!(
        back_one
            .iter()
            .zip(&back_par)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
}

#[test]
fn par_error_is_the_first_failing_element_of_the_whole_slice() {
    let c = chain();
    let n = 6 * CHUNK;
    let mut x = in_range(n, 2);
    // Failures in three chunks; the first one is not in the first chunk that finishes.
    let bad = [4 * CHUNK + 7, 2 * CHUNK + CHUNK - 1, 5 * CHUNK];
    for &i in &bad {
        x[i] = 1.0e6;
    }
    let mut out = vec![0u8; n];
    let one = c.encode_slice(&x, &mut out).expect_err("out of range");
    let par = c.par_encode_slice(&x, &mut out).expect_err("out of range");
    assert_eq!(par.index, 2 * CHUNK + CHUNK - 1);
    assert_eq!(par, one);
}

#[test]
fn par_arrays_match_one_thread_in_every_layout() {
    let c = chain();
    let (rows, cols) = (700, 300);
    let v = in_range(rows * cols, 3);
    let c_order = Array2::from_shape_vec((rows, cols), v.clone()).expect("shape");
    let f_order = Array2::from_shape_vec((rows, cols).f(), v).expect("shape");
    for a in [
        c_order.view(),
        f_order.view(),
        c_order.slice(ndarray::s![..;3, 1..]),
    ] {
        let one = c.encode(&a).expect("one thread");
        let par = c.par_encode(&a).expect("parallel");
        assert_eq!(one, par);
        assert_eq!(
            c.decode(&one).expect("decode"),
            c.par_decode(&one).expect("decode")
        );
    }
}

#[test]
fn chunk_helpers_cover_every_element_once() {
    let n = 3 * CHUNK + 5;
    let src: Vec<u32> = (0..n as u32).collect();
    let mut dst = vec![0u32; n];
    map_chunks(&src, &mut dst, |s, d| {
        for (a, b) in s.iter().zip(d.iter_mut()) {
            *b = a + 1;
        }
        Ok(())
    })
    .expect("no error");
    assert!(dst.iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
    for_each_chunk(&mut dst, |c| {
        for v in c.iter_mut() {
            *v *= 2;
        }
        Ok(())
    })
    .expect("no error");
    assert!(
        dst.iter()
            .enumerate()
            .all(|(i, &v)| v == 2 * (i as u32 + 1))
    );
}

#[test]
fn par_calls_agree_in_any_pool_and_from_inside_a_worker() {
    let c = chain();
    let n = 7 * CHUNK + 5;
    let mut x = in_range(n, 3);
    x[3 * CHUNK + 11] = -1.0;
    let mut one = vec![0u8; n];
    let want = c.encode_slice(&x, &mut one).expect_err("out of range");
    for threads in [1, 2, 3, 5] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        // From outside the pool (the caller takes chunks beside the workers) ...
        let mut out = vec![0u8; n];
        let got = pool.install(|| c.par_encode_slice(&x, &mut out));
        assert_eq!(got, Err(want.clone()), "{threads} threads, installed");
        // ... and from a task running on one of its workers.
        let mut out = vec![0u8; n];
        let mut inner = None;
        pool.scope(|s| {
            s.spawn(|_| inner = Some(c.par_encode_slice(&x, &mut out)));
        });
        assert_eq!(
            inner,
            Some(Err(want.clone())),
            "{threads} threads, in a worker"
        );
    }
}

/// Equal lengths and every element bit-equal.
fn same_bits<T: zquant::Real>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// From 16 MiB of output on, a parallel call's chunks are streamed out (non-temporal
/// stores) by the kernels that stream a large one-threaded output: the byte-table decode,
/// `int32 -> float32`, float16 -> `f32`. The bits are those of the one-threaded call.
#[test]
fn par_streamed_outputs_match_one_thread() {
    let mut r = stream(4);
    let n = (16 << 20) / 4 + 3 * CHUNK / 2 + 5;
    let codes: Vec<u8> = (0..n).map(|_| r() as u8).collect();
    let c = chain();
    let (mut one, mut par) = (vec![0.0f64; n], vec![0.0f64; n]);
    c.decode_slice(&codes, &mut one).expect("one thread");
    c.par_decode_slice(&codes, &mut par).expect("parallel");
    assert!(same_bits(&one, &par), "u8 -> f64");

    let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Error);
    let ints: Vec<i32> = (0..n).map(|_| r() as i32).collect();
    let to_f32 = CastValue::<i32, f32>::new(opts, ScalarMap::default()).expect("cast");
    let (mut one, mut par) = (vec![0.0f32; n], vec![0.0f32; n]);
    to_f32.encode_slice(&ints, &mut one).expect("one thread");
    to_f32.par_encode_slice(&ints, &mut par).expect("parallel");
    assert!(same_bits(&one, &par), "i32 -> f32");

    let halves: Vec<half::f16> = (0..n).map(|_| half::f16::from_bits(r() as u16)).collect();
    let widen = CastValue::<half::f16, f32>::new(opts, ScalarMap::default()).expect("cast");
    let (mut one, mut par) = (vec![0.0f32; n], vec![0.0f32; n]);
    widen.encode_slice(&halves, &mut one).expect("one thread");
    widen.par_encode_slice(&halves, &mut par).expect("parallel");
    assert!(same_bits(&one, &par), "f16 -> f32");
}
