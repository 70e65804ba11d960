// A well-typed 3-stage chain compiles and runs: f64 -> f64 -> f32 -> f32.
use ndarray::arr1;
use zquant::{ArrayCodec, ArrayCodecExt, BitRound, CastOptions, CastValue, ScalarMap, ScaleOffset};

fn main() {
    let chain = ScaleOffset::<f64>::new(1.0, 2.0)
        .unwrap()
        .then(CastValue::<f64, f32>::new(CastOptions::default(), ScalarMap::default()).unwrap())
        .then(BitRound::<f32>::new(10).unwrap());
    let encoded = chain.encode(&arr1(&[1.0f64, 2.5])).unwrap();
    assert_eq!(encoded, arr1(&[0.0f32, 3.0]));
    let decoded = chain.decode(&encoded).unwrap();
    assert_eq!(decoded, arr1(&[1.0f64, 2.5]));
    let _: &ScaleOffset<f64> = chain.first().first();
}
