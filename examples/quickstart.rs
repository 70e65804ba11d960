//! zquant in one run: realistic codec chains on a synthetic temperature field.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```
//!
//! The data is generated here, deterministically: a smooth 512 × 1024 float64 field of
//! surface temperatures in kelvin (250–310 K, warm equator, cold poles, a few waves) plus
//! seeded pseudo-random noise, with a patch of missing values (NaN). The fill value is NaN.
//!
//! - (a) typed chain `ScaleOffset::<f64>` then `CastValue::<f64, u16>`: millikelvin steps
//!   in uint16, out of range clamped, NaN stored as 0 through `scalar_map`;
//! - (b) `bitround` on the float32 field, 7 mantissa bits kept, in place;
//! - (c) `cast_value` float32 -> float8_e4m3 (with clamp) of the anomaly `T - 280 K`;
//! - (d) chain (a) again, built at run time from its `codecs` JSON with
//!   `DynChain::from_array_to_array_codecs`, checked byte for byte against (a).
//!
//! For each: the codec JSON, then one table row with the largest absolute error after
//! decoding (NaNs must come back as NaNs), the bytes before and after, and the encoded fill.
//!
//! Then (e) the planner (`zquant::plan`) on the dataset's three fields (the temperature,
//! a precipitation field with exact zeros, a relative humidity in [0, 1]), each at a stated
//! absolute error: the table of every candidate chain (its guarantee, the zstd bytes of a
//! sample of chunks, its readers or why it is ruled out), the winner's codecs, and the
//! winner run over the whole field with its maximum error measured.

use std::error::Error;

use ndarray::{Array2, Ix2, Zip};
use serde_json::{Value, json};
use zquant::MapEntries;
use zquant::dtype::Float8E4M3;
use zquant::{
    ArrayCodec, ArrayCodecExt, BitRound, CastOptions, CastValue, DType, DynArray, DynChain,
    OutOfRange, Rounding, ScalarMap, ScaleOffset,
};

const ROWS: usize = 512;
const COLS: usize = 1024;
const SEED: u64 = 0x5eed_2024_cafe_f00d;

/// SplitMix64: a tiny, well-mixed deterministic generator (enough for demo noise).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, 53 random bits.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Roughly normal with mean 0 and standard deviation 1 (Irwin–Hall, 12 uniforms).
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
    }
}

/// The default dataset: a smooth temperature field in kelvin, clamped to 250–310 K, with a
/// patch of missing values (NaN) where an imaginary instrument failed.
fn temperature_field() -> Array2<f64> {
    use std::f64::consts::PI;
    let mut rng = SplitMix64(SEED);
    Array2::from_shape_fn((ROWS, COLS), |(i, j)| {
        let lat = ((i as f64 + 0.5) / ROWS as f64 - 0.5) * PI; // -pi/2 .. pi/2
        let lon = j as f64 / COLS as f64 * 2.0 * PI; // 0 .. 2 pi
        let (di, dj) = (i as f64 - 160.0, j as f64 - 700.0);
        if (di / 40.0).powi(2) + (dj / 90.0).powi(2) < 1.0 {
            return f64::NAN;
        }
        let t = 252.0
            + 55.0 * lat.cos().powi(2)
            + 3.0 * (3.0 * lon).sin() * lat.cos()
            + 2.0 * (2.0 * lat + lon).sin()
            + 0.5 * rng.normal();
        t.clamp(250.0, 310.0)
    })
}

/// Largest `|a - b|` over the elements; an error if NaNs are not in the same places.
fn max_abs_error(a: &Array2<f64>, b: &Array2<f64>) -> Result<f64, Box<dyn Error>> {
    let mut worst = 0.0f64;
    let mut nan_mismatch = 0usize;
    Zip::from(a)
        .and(b)
        .for_each(|&x, &y| match (x.is_nan(), y.is_nan()) {
            (true, true) => {}
            (false, false) => worst = worst.max((x - y).abs()),
            _ => nan_mismatch += 1,
        });
    if nan_mismatch > 0 {
        return Err(format!("{nan_mismatch} elements lost or gained NaN").into());
    }
    Ok(worst)
}

fn le_bytes<T: DType>(a: &Array2<T>) -> Vec<u8> {
    let mut out = vec![0u8; a.len() * T::SIZE];
    for (x, chunk) in a.iter().zip(out.chunks_exact_mut(T::SIZE)) {
        x.write_le(chunk);
    }
    out
}

/// One line of the results table.
struct Row {
    case: &'static str,
    what: String,
    encoded: String,
    max_err: f64,
    bytes_in: usize,
    bytes_out: usize,
    fill: String,
}

/// The `codecs` list of case (a), as a user would write it in `zarr.json`.
fn chain_a_json() -> Value {
    json!([
        {"name": "scale_offset", "configuration": {"offset": 245, "scale": 1000}},
        {"name": "cast_value", "configuration": {
            "data_type": "uint16",
            "rounding": "nearest-even",
            "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
        }}
    ])
}

fn main() -> Result<(), Box<dyn Error>> {
    let field = temperature_field();
    let n = field.len();
    let missing = field.iter().filter(|v| v.is_nan()).count();
    println!(
        "dataset: {ROWS}x{COLS} float64 temperature field, 250-310 K, {missing} NaN (missing), \
         fill value NaN, seed {SEED:#x}\n"
    );
    let mut rows = Vec::new();
    let mut codec_json = Vec::new();

    // (a) Typed chain: (T - 245 K) * 1000 -> millikelvin in [5000, 65000], rounded to uint16.
    // 0 is never produced by a temperature, so it is free to stand for NaN.
    let nan_map = ScalarMap {
        encode: MapEntries::new([(f64::NAN, 0u16)]),
        decode: MapEntries::new([(0u16, f64::NAN)]),
        present: true,
    };
    let chain_a = ScaleOffset::<f64>::new(245.0, 1000.0)?.then(CastValue::<f64, u16>::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        nan_map,
    )?);
    let enc_a = chain_a.encode(&field)?;
    let dec_a = chain_a.decode(&enc_a)?;
    let fill_a = chain_a.encode_fill_value(f64::NAN)?;
    codec_json.push(("(a)", chain_a.to_metadata()));
    rows.push(Row {
        case: "(a)",
        what: "float64: scale_offset, cast_value (typed)".into(),
        encoded: "uint16".into(),
        max_err: max_abs_error(&field, &dec_a)?,
        bytes_in: n * f64::SIZE,
        bytes_out: enc_a.len() * u16::SIZE,
        fill: format!("NaN -> {}", fill_a.fill_value_to_json()),
    });

    // (b) bitround on float32, in place: 7 of 23 mantissa bits kept; the rest become zeros
    // that a following compressor squeezes out. Decoding is the identity.
    let f32_field: Array2<f32> = field.mapv(|v| v as f32);
    let mut rounded = f32_field.clone();
    let bitround = BitRound::<f32>::new(7)?;
    bitround.encode_in_place(&mut rounded.view_mut())?;
    let dec_b = bitround.decode(&rounded)?;
    let fill_b = bitround.encode_fill_value(f32::NAN)?;
    codec_json.push(("(b)", json!([bitround.to_metadata()])));
    rows.push(Row {
        case: "(b)",
        what: "float32: bitround, in place".into(),
        encoded: "float32".into(),
        max_err: max_abs_error(&f32_field.mapv(f64::from), &dec_b.mapv(f64::from))?,
        bytes_in: n * f32::SIZE,
        bytes_out: rounded.len() * f32::SIZE,
        fill: format!("NaN -> {}", fill_b.fill_value_to_json()),
    });

    // (c) float32 -> float8_e4m3 of the anomaly T - 280 K (about ±30 K; e4m3's finite range
    // is ±240, and with `clamp` anything beyond it would become ±Infinity).
    let anomaly: Array2<f32> = field.mapv(|v| (v - 280.0) as f32);
    let to_e4m3 = CastValue::<f32, Float8E4M3>::new(
        CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp),
        ScalarMap::default(),
    )?;
    let enc_c = to_e4m3.encode(&anomaly)?;
    let dec_c = to_e4m3.decode(&enc_c)?;
    let fill_c = to_e4m3.encode_fill_value(f32::NAN)?;
    codec_json.push(("(c)", json!([to_e4m3.to_metadata()])));
    rows.push(Row {
        case: "(c)",
        what: "float32 anomaly: cast_value".into(),
        encoded: "float8_e4m3".into(),
        max_err: max_abs_error(&anomaly.mapv(f64::from), &dec_c.mapv(f64::from))?,
        bytes_in: n * f32::SIZE,
        bytes_out: enc_c.len() * Float8E4M3::SIZE,
        fill: format!(
            "NaN -> {} (0x{:02x})",
            fill_c.fill_value_to_json(),
            fill_c.0
        ),
    });

    // (d) Chain (a) from metadata, as a reader of `zarr.json` would build it.
    let codecs_d = chain_a_json();
    let list = codecs_d.as_array().ok_or("codecs must be a JSON list")?;
    let chain_d = DynChain::from_array_to_array_codecs(&json!("float64"), &json!("NaN"), list)?;
    let enc_d = chain_d.encode(&DynArray::Float64(field.clone().into_dyn()))?;
    let bytes_d = enc_d.to_le_bytes();
    if bytes_d != le_bytes(&enc_a) {
        return Err("(d): run-time chain bytes differ from the typed chain (a)".into());
    }
    if chain_d.to_metadata() != chain_a.to_metadata() {
        return Err("(d): run-time chain metadata differs from the typed chain (a)".into());
    }
    let DynArray::Float64(dec_d) = chain_d.decode(&enc_d)? else {
        return Err("(d): decoded array is not float64".into());
    };
    let dec_d = dec_d.into_dimensionality::<Ix2>()?;
    let fill_d = chain_d
        .encoded_fill_value()
        .first_to_json()
        .ok_or("(d): no encoded fill value")?;
    codec_json.push(("(d)", codecs_d));
    rows.push(Row {
        case: "(d)",
        what: "float64: chain (a) from JSON (DynChain)".into(),
        encoded: chain_d.encoded_data_type().id.name().into(),
        max_err: max_abs_error(&field, &dec_d)?,
        bytes_in: n * f64::SIZE,
        bytes_out: bytes_d.len(),
        fill: format!("NaN -> {fill_d}"),
    });
    // Decoding (d) must also agree with (a) element for element.
    if !DynArray::Float64(dec_a.into_dyn()).same_as(&DynArray::Float64(dec_d.into_dyn())) {
        return Err("(d): decoded values differ from the typed chain (a)".into());
    }

    println!("codecs:");
    for (case, j) in &codec_json {
        println!("  {case} {}", serde_json::to_string(j)?);
    }
    println!();
    println!(
        "{:<4}  {:<41}  {:<11}  {:>10}  {:>19}  {:>5}  fill -> encoded fill",
        "case", "chain", "encoded", "max |err|", "bytes in -> out", "ratio"
    );
    println!("{}", "-".repeat(121));
    for r in &rows {
        println!(
            "{:<4}  {:<41}  {:<11}  {:>8.4} K  {:>19}  {:>4.1}x  {}",
            r.case,
            r.what,
            r.encoded,
            r.max_err,
            format!("{} -> {}", r.bytes_in, r.bytes_out),
            r.bytes_in as f64 / r.bytes_out as f64,
            r.fill
        );
    }
    println!();
    println!("(d) encodes to the same bytes as (a), decodes to the same values, and its");
    println!("    to_metadata() equals (a)'s.");
    println!("(b) keeps the size: bitround zeroes 16 of 23 mantissa bits for a later compressor.");
    println!("(c) e4m3 keeps 3 mantissa bits: |anomaly| in [16, 32) K is stored in steps of 2 K.");

    planner_demo(&field)
}

/// (e): plan each field of the dataset at a bound, print the table and the winner, and
/// check the winner on every element.
fn planner_demo(temperature: &Array2<f64>) -> Result<(), Box<dyn Error>> {
    use zquant::dtype::{WordBuf, Words};
    use zquant::plan::{PlanOptions, PlanStats, Target, plan};

    // Derived fields on the same grid: rain where a wave pattern is positive (else exactly
    // 0 mm), and relative humidity in [0, 1].
    let mut rng = SplitMix64(SEED ^ 1);
    let precipitation = Array2::from_shape_fn((ROWS, COLS), |(i, j)| {
        let w = ((i as f64) / 23.0).sin() * ((j as f64) / 41.0).cos() - 0.3;
        if w > 0.0 {
            (40.0 * w * w + 0.2 * rng.uniform()) as f32
        } else {
            0.0
        }
    });
    let humidity = Array2::from_shape_fn((ROWS, COLS), |(i, j)| {
        (0.6 + 0.35 * ((i as f64) / 50.0 + (j as f64) / 80.0).sin() + 0.05 * rng.normal())
            .clamp(0.0, 1.0) as f32
    });
    let t32 = temperature.mapv(|x| x as f32);
    let fields: [(&str, &Array2<f32>, f64); 3] = [
        ("temperature (K)", &t32, 0.01),
        ("precipitation (mm)", &precipitation, 0.05),
        ("relative humidity", &humidity, 0.001),
    ];
    let zstd_len = |b: &[u8]| zstd::bulk::compress(b, 3).map_or(b.len(), |c| c.len());
    println!();
    println!(
        "(e) the planner, float32 fields, fill value NaN, chunks of 64 x {COLS}, zstd level 3:"
    );
    for (name, a, bound) in fields {
        let words: Vec<u32> = a.iter().map(|x| x.to_bits()).collect();
        let stats = PlanStats::of_words(
            zquant::DTypeId::Float32,
            Words::U32(&words),
            &[ROWS, COLS],
            None,
        )?;
        // A sample of every other chunk of 64 rows.
        let chunk = 64 * COLS;
        let shape = [64, COLS];
        let samples: Vec<(Words<'_>, &[usize])> = words
            .chunks(chunk)
            .step_by(2)
            .map(|c| (Words::U32(c), &shape[..]))
            .collect();
        let p = plan(
            zquant::DTypeId::Float32,
            &json!("NaN"),
            &stats,
            &samples,
            Target::MaxAbsError(bound),
            &PlanOptions::default(),
            &mut |b: &[u8]| zstd_len(b),
        )?;
        println!();
        println!("{name}, max_abs_error {bound}:");
        print!("{}", p.table());
        let w = p.winner();
        println!("winner: {}", serde_json::to_string(&w.codecs())?);
        // The winner over the whole field, through the run-time chain (and packbits).
        let chain =
            DynChain::from_array_to_array_codecs(&json!("float32"), &json!("NaN"), &w.filters)?;
        let to = chain.encoded_data_type().id;
        let n = words.len();
        let mut enc = WordBuf::zeroed(to.word_bits(), n);
        chain.encode_words(Words::U32(&words), &[n], enc.as_words_mut())?;
        let enc = match &w.serializer {
            Some(s) => {
                let pb = zquant::zarr::PackBits::new(to, s.get("configuration"))?;
                pb.decode(&pb.encode(enc.as_words())?, n)?
            }
            None => enc,
        };
        let mut dec = vec![0u32; n];
        chain.decode_words(enc.as_words(), &[n], zquant::dtype::WordsMut::U32(&mut dec))?;
        let mut worst = 0.0f64;
        for (&x, &y) in words.iter().zip(&dec) {
            let (x, y) = (f32::from_bits(x), f32::from_bits(y));
            if x.is_nan() != y.is_nan() || (x == 0.0 && y != 0.0) {
                return Err(format!("{name}: {x} decodes as {y}").into());
            }
            if !x.is_nan() {
                worst = worst.max((f64::from(y) - f64::from(x)).abs());
            }
        }
        if worst > p.bound() {
            return Err(format!("{name}: error {worst} above the guarantee {}", p.bound()).into());
        }
        println!(
            "guaranteed {:.3e}, measured on all {n} elements {worst:.3e}; zeros stay 0, NaN stays NaN",
            p.bound()
        );
    }
    Ok(())
}
