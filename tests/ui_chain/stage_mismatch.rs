// `ScaleOffset<f64>` writes f64, `CastValue<f32, u8>` reads f32: the chain must not compile.
use zquant::{ArrayCodec, CastOptions, CastValue, ScalarMap, ScaleOffset};

fn main() {
    let cast = CastValue::<f32, u8>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    let _chain = ScaleOffset::<f64>::new(0.0, 1.0).unwrap().then(cast);
}
