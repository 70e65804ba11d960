// `ScalarMap::nan_as` with a float source builds.
use zquant::ScalarMap;

fn main() {
    let map: ScalarMap<f32, u8> = ScalarMap::nan_as(255);
    assert_eq!(map.encode.entries().len(), 1);
}
