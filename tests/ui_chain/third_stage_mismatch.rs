// The first two stages line up (f32 -> f32 -> u8); the third reads f32 but receives u8.
use zquant::{ArrayCodec, BitRound, CastOptions, CastValue, ScalarMap, ScaleOffset};

fn main() {
    let _chain = ScaleOffset::<f32>::new(0.0, 1.0)
        .unwrap()
        .then(CastValue::<f32, u8>::new(CastOptions::default(), ScalarMap::default()).unwrap())
        .then(BitRound::<f32>::new(3).unwrap());
}
