// `ScalarMap::nan_as` with a source type that has no NaN does not build.
use zquant::ScalarMap;

fn main() {
    let map: ScalarMap<i32, u8> = ScalarMap::nan_as(255);
    let _ = map;
}
