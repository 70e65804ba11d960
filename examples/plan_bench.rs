//! The planner against the usual ways to store climate fields at a stated absolute error.
//!
//! ```sh
//! cargo run --release --example plan_bench
//! ```
//!
//! Six synthetic float32 fields of 24 x 181 x 360 (time, lat, lon), chunks of one time step,
//! every chunk compressed with zstd level 3, at two or three bounds each:
//!
//! - **plan**: `zquant::plan` with readers plain zarr-python (as Python's
//!   `zquant.choose.plan` plans by default; the last column with Rust's default readers,
//!   zarr-python and zarrs, which rules out `numcodecs.delta`), statistics over the whole
//!   field, a sample of 4 chunks spread over time;
//! - **cbp bitround**: ClimateBenchPress's rule `keepbits = -floor(log2(bound / max|x|)) - 1`;
//! - **linear u16**: `scale_offset` (offset min, scale `1 / (2 bound)`) + `cast_value` uint16
//!   (NaN as 65535), when the codes fit;
//! - **CF int16**: xarray's CF packing with the same step (`scale_factor = 2 bound`,
//!   `add_offset` the midrange, `_FillValue` -32768 for NaN), written here as xarray does
//!   (`round((x - add_offset) / scale_factor)`), when the codes fit;
//! - **xbitinfo 0.99**: keepbits at 99% of the real information (along longitude) and
//!   bitround; its measured error is reported, not held to the bound;
//! - **zstd**: the float32 bytes, lossless.
//!
//! Each row gives the stored bytes, and the maximum absolute error measured on every
//! element. At the end: the geometric mean over rows of (best of cbp, linear u16 and CF
//! bytes) / (plan bytes), and the planner's time against one read of the data. Timings on a
//! shared machine are indicative only.

use std::time::Instant;

use serde_json::{Value, json};
use zquant::DTypeId;
use zquant::DynChain;
use zquant::choose::{BitCounts, InformationOptions};
use zquant::dtype::{WordBuf, Words, WordsMut};
use zquant::plan::{Candidate, Plan, PlanOptions, PlanStats, Readers, Target, plan};
use zquant::zarr::PackBits;

const T: usize = 24;
const LAT: usize = 181;
const LON: usize = 360;
const CHUNK: usize = LAT * LON;

struct Rng(u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
    }
}

/// A field from `f(t, lat in radians, lon in radians, rng)`, rounded to float32.
fn field(seed: u64, f: impl Fn(f64, f64, f64, &mut Rng) -> f64) -> Vec<f32> {
    use std::f64::consts::PI;
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(T * CHUNK);
    for t in 0..T {
        for i in 0..LAT {
            let lat = (i as f64 / (LAT - 1) as f64 - 0.5) * PI;
            for j in 0..LON {
                let lon = j as f64 / LON as f64 * 2.0 * PI;
                out.push(f(t as f64, lat, lon, &mut rng) as f32);
            }
        }
    }
    out
}

/// Smooth large-scale weather: a few travelling waves.
fn waves(t: f64, lat: f64, lon: f64) -> f64 {
    (3.0 * lon - 0.2 * t).sin() * lat.cos()
        + 0.5 * (5.0 * lon + 2.0 * lat + 0.3 * t).sin()
        + 0.3 * (2.0 * lat - lon + 0.1 * t).cos()
}

fn fields() -> Vec<(&'static str, Vec<f32>, Vec<f64>)> {
    vec![
        (
            "t2m (K)",
            field(1, |t, la, lo, r| {
                235.0 + 65.0 * la.cos().powi(2) + 6.0 * waves(t, la, lo) + 0.8 * r.normal()
            }),
            vec![0.1, 0.05, 0.01, 1e-4],
        ),
        (
            "tp (mm)",
            field(2, |t, la, lo, r| {
                let w = waves(t, la, lo) + 0.6 * (7.0 * lo + 3.0 * la).sin() - 0.6;
                if w > 0.0 {
                    30.0 * w * w * la.cos() * (0.5 + r.uniform())
                } else {
                    0.0
                }
            }),
            vec![0.1, 0.01],
        ),
        (
            "r (1)",
            field(3, |t, la, lo, r| {
                (0.65 + 0.25 * waves(t, la, lo) + 0.05 * r.normal()).clamp(0.0, 1.0)
            }),
            vec![0.01, 0.001],
        ),
        (
            "sst (K) 30% NaN",
            field(4, |t, la, lo, r| {
                // Land: a fixed pattern covering about 30% of the cells.
                if (2.0 * lo).sin() * (3.0 * la).cos() + 0.3 * (5.0 * lo).cos() > 0.55 {
                    return f64::NAN;
                }
                (271.3 + 32.0 * la.cos().powi(3) + 1.0 * waves(t, la, lo) + 0.1 * r.normal())
                    .max(271.3)
            }),
            vec![0.05, 0.01],
        ),
        (
            "u10 (m/s)",
            field(5, |t, la, lo, r| {
                8.0 * (2.0 * la).sin() + 6.0 * waves(t, la, lo) + 1.5 * r.normal()
            }),
            vec![0.1, 0.01],
        ),
        (
            "z500 (m2/s2)",
            field(6, |t, la, lo, r| {
                54_000.0 + 3_500.0 * la.cos().powi(2) + 600.0 * waves(t, la, lo) + 5.0 * r.normal()
            }),
            vec![10.0, 1.0],
        ),
        (
            // The hard case: no neighbour predicts another, so no arrangement helps.
            "noise (1)",
            field(7, |_, _, _, r| 100.0 * r.uniform()),
            vec![0.01, 1e-4],
        ),
    ]
}

/// The plan of a float32 field with fill value NaN for `bound`, sizes measured by `size`.
fn plan_f32(
    stats: &PlanStats,
    samples: &[(Words<'_>, &[usize])],
    bound: f64,
    options: &PlanOptions,
    size: &mut dyn FnMut(&[u8]) -> usize,
) -> Plan {
    plan(
        DTypeId::Float32,
        &json!("NaN"),
        stats,
        samples,
        Target::MaxAbsError(bound),
        options,
        size,
    )
    .unwrap()
}

fn zstd_len(b: &[u8]) -> usize {
    zstd::bulk::compress(b, 3).map_or(b.len(), |c| c.len())
}

/// Run `filters` (+ `packbits`) over every chunk: the zstd bytes and the maximum error.
/// The winner's whole chain: its lossy filters through `DynChain`, `numcodecs.delta` on
/// the integer codes, the serializer, `numcodecs.shuffle`, zstd.
fn run_plan(data: &[f32], c: &Candidate) -> (usize, f64) {
    let (delta, lossy): (Vec<Value>, Vec<Value>) = c
        .filters
        .iter()
        .cloned()
        .partition(|f| f["name"] == "numcodecs.delta");
    let shuffle = c
        .bytes_codecs
        .iter()
        .find(|b| b["name"] == "numcodecs.shuffle")
        .and_then(|b| b["configuration"]["elementsize"].as_u64());
    run_chain_with(
        data,
        &lossy,
        c.serializer.as_ref(),
        !delta.is_empty(),
        shuffle,
    )
}

fn run_chain(data: &[f32], filters: &[Value], serializer: Option<&Value>) -> (usize, f64) {
    run_chain_with(data, filters, serializer, false, None)
}

/// numcodecs' delta (wrapping, over the chunk in C order) of little-endian unsigned
/// integers of `e` bytes.
fn delta(b: &[u8], e: usize) -> Vec<u8> {
    let mut prev = 0u64;
    let mask = if e == 8 { u64::MAX } else { (1 << (8 * e)) - 1 };
    b.chunks_exact(e)
        .flat_map(|c| {
            let mut w = [0u8; 8];
            w[..e].copy_from_slice(c);
            let x = u64::from_le_bytes(w);
            let d = x.wrapping_sub(prev) & mask;
            prev = x;
            d.to_le_bytes()[..e].to_vec()
        })
        .collect()
}

/// numcodecs' shuffle with element size `e`.
fn shuffle(b: &[u8], e: usize) -> Vec<u8> {
    let n = b.len() / e;
    let mut out = b.to_vec();
    for i in 0..n {
        for j in 0..e {
            out[j * n + i] = b[i * e + j];
        }
    }
    out
}

fn run_chain_with(
    data: &[f32],
    filters: &[Value],
    serializer: Option<&Value>,
    with_delta: bool,
    with_shuffle: Option<u64>,
) -> (usize, f64) {
    let chain =
        DynChain::from_array_to_array_codecs(&json!("float32"), &json!("NaN"), filters).unwrap();
    let to = chain.encoded_data_type().id;
    let pb = serializer.map(|s| PackBits::new(to, s.get("configuration")).unwrap());
    let (mut bytes, mut worst) = (0usize, 0.0f64);
    let words: Vec<u32> = data.iter().map(|x| x.to_bits()).collect();
    for c in words.chunks(CHUNK) {
        let n = c.len();
        let mut enc = WordBuf::zeroed(to.word_bits(), n);
        chain
            .encode_words(Words::U32(c), &[n], enc.as_words_mut())
            .unwrap();
        let (stored, enc) = match &pb {
            Some(pb) => {
                let b = pb.encode(enc.as_words()).unwrap();
                let back = pb.decode(&b, n).unwrap();
                (b, back)
            }
            None => (le(enc.as_words()), enc),
        };
        let e = (to.word_bits() / 8) as usize;
        let stored = if with_delta {
            delta(&stored, e)
        } else {
            stored
        };
        let stored = match with_shuffle {
            Some(e) => shuffle(&stored, e as usize),
            None => stored,
        };
        bytes += zstd_len(&stored);
        let mut dec = vec![0u32; n];
        chain
            .decode_words(enc.as_words(), &[n], WordsMut::U32(&mut dec))
            .unwrap();
        worst = worst.max(max_err(c, &dec));
    }
    (bytes, worst)
}

fn le(w: Words<'_>) -> Vec<u8> {
    match w {
        Words::U8(s) => s.to_vec(),
        Words::U16(s) => s.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Words::U32(s) => s.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Words::U64(s) => s.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn max_err(x: &[u32], y: &[u32]) -> f64 {
    let mut worst = 0.0f64;
    for (&a, &b) in x.iter().zip(y) {
        let (a, b) = (f32::from_bits(a), f32::from_bits(b));
        if a.is_nan() || b.is_nan() {
            assert!(a.is_nan() && b.is_nan(), "NaN lost: {a} -> {b}");
            continue;
        }
        worst = worst.max((f64::from(a) - f64::from(b)).abs());
    }
    worst
}

/// xarray's CF packing into int16: `round((x - add_offset) / scale_factor)`, NaN as the
/// `_FillValue` -32768; decoded as `q * scale_factor + add_offset`. `None` when the codes
/// do not fit.
fn cf_int16(data: &[f32], bound: f64, min: f64, max: f64) -> Option<(usize, f64)> {
    let (sf, ao) = (2.0 * bound, min / 2.0 + max / 2.0);
    if ((max - ao) / sf).round() > 32767.0 || ((min - ao) / sf).round() < -32767.0 {
        return None;
    }
    let (mut bytes, mut worst) = (0usize, 0.0f64);
    for c in data.chunks(CHUNK) {
        let q: Vec<i16> = c
            .iter()
            .map(|&x| {
                if x.is_nan() {
                    -32768
                } else {
                    ((f64::from(x) - ao) / sf).round_ties_even() as i16
                }
            })
            .collect();
        let b: Vec<u8> = q.iter().flat_map(|x| x.to_le_bytes()).collect();
        bytes += zstd_len(&b);
        for (&x, &q) in c.iter().zip(&q) {
            if !x.is_nan() {
                let y = (f64::from(q) * sf + ao) as f32;
                worst = worst.max((f64::from(x) - f64::from(y)).abs());
            }
        }
    }
    Some((bytes, worst))
}

fn bitround(k: u32) -> Vec<Value> {
    vec![json!({"name": "numcodecs.bitround", "configuration": {"keepbits": k}})]
}

fn main() {
    let mut ratios = Vec::new();
    let (mut t_read, mut t_stats, mut t_plan, mut t_zstd, mut t_fixed) = (0.0, 0.0, 0.0, 0.0, 0.0);
    // The stores zarr-python writes, as `zquant.choose.plan` plans them by default.
    let zarr_python = PlanOptions {
        readers: Readers::ZarrPython,
        ..PlanOptions::default()
    };
    let mut ratios_zarrs = Vec::new();
    println!(
        "| field | bound | plan chain | plan bytes | plan err | cbp bitround | linear u16 | CF int16 | xbitinfo 0.99 (err) | zstd | best baseline / plan | plan for zarr-python and zarrs (best baseline / it) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, data, bounds) in fields() {
        let words: Vec<u32> = data.iter().map(|x| x.to_bits()).collect();
        let shape = [T, LAT, LON];
        // One read of the data, for scale.
        let t0 = Instant::now();
        let sum: f64 = data
            .iter()
            .filter(|x| !x.is_nan())
            .map(|&x| f64::from(x))
            .sum();
        t_read += t0.elapsed().as_secs_f64() * bounds.len() as f64;
        std::hint::black_box(sum);

        let t0 = Instant::now();
        let stats =
            PlanStats::of_words(DTypeId::Float32, Words::U32(&words), &shape, None).unwrap();
        t_stats += t0.elapsed().as_secs_f64() * bounds.len() as f64;
        let range = stats.range.unwrap();
        let max_abs = stats.max_abs();
        let chunk_shape = [1, LAT, LON];
        let samples: Vec<(Words<'_>, &[usize])> = [1usize, 8, 15, 22]
            .iter()
            .map(|&t| {
                (
                    Words::U32(&words[t * CHUNK..(t + 1) * CHUNK]),
                    &chunk_shape[..],
                )
            })
            .collect();

        let lossless = run_chain(&data, &[], None).0;
        // xbitinfo: keepbits at 99% of the information along longitude, once per field.
        let counts = BitCounts::of_words(
            DTypeId::Float32,
            Words::U32(&words),
            &shape,
            &InformationOptions {
                axis: Some(2),
                ..InformationOptions::default()
            },
        )
        .unwrap();
        let kx = counts
            .information(&InformationOptions::default())
            .unwrap()
            .keepbits(0.99)
            .unwrap();
        let xbit = run_chain(&data, &bitround(kx), None);

        for &bound in &bounds {
            let t0 = Instant::now();
            let p = plan_f32(&stats, &samples, bound, &zarr_python, &mut |b: &[u8]| {
                let t = Instant::now();
                let n = zstd_len(b);
                t_zstd += t.elapsed().as_secs_f64();
                n
            });
            t_plan += t0.elapsed().as_secs_f64();
            // The same plan without a sample: statistics to parameters, guarantees and the
            // extremes' check, the part of planning that is not the sample's encoding and
            // compression.
            let t0 = Instant::now();
            plan_f32(&stats, &[], bound, &PlanOptions::default(), &mut zstd_len);
            t_fixed += t0.elapsed().as_secs_f64();
            let w = p.winner();
            let (pb, pe) = run_plan(&data, w);
            assert!(pe <= p.bound(), "{name} {bound}: {pe} > {}", p.bound());

            let kc = (-((bound / max_abs).log2().floor()) - 1.0).clamp(1.0, 23.0) as u32;
            let cbp = run_chain(&data, &bitround(kc), None);
            let lin = {
                let scale = 1.0 / (2.0 * bound);
                if ((range.max - range.min) * scale).round() <= 65534.0 {
                    let f = vec![
                        json!({"name": "scale_offset", "configuration": {"offset": range.min, "scale": scale as f32}}),
                        json!({"name": "cast_value", "configuration": {"data_type": "uint16",
                            "rounding": "nearest-even",
                            "scalar_map": {"encode": [["NaN", 65535]], "decode": [[65535, "NaN"]]}}}),
                    ];
                    Some(run_chain(&data, &f, None))
                } else {
                    None
                }
            };
            let cf = cf_int16(&data, bound, range.min, range.max);
            let best = [Some(cbp), lin, cf]
                .iter()
                .flatten()
                .map(|r| r.0)
                .min()
                .unwrap();
            let ratio = best as f64 / pb as f64;
            ratios.push(ratio);
            // The same, for stores zarrs writes too (Rust's default readers: no delta).
            let pz = plan_f32(
                &stats,
                &samples,
                bound,
                &PlanOptions::default(),
                &mut zstd_len,
            );
            let (pzb, pze) = run_plan(&data, pz.winner());
            assert!(pze <= pz.bound(), "{name} {bound}: {pze} > {}", pz.bound());
            let ratio_zarrs = best as f64 / pzb as f64;
            ratios_zarrs.push(ratio_zarrs);
            let cell = |r: Option<(usize, f64)>| {
                r.map_or("does not fit".to_string(), |(b, e)| {
                    format!("{b} ({e:.4e})")
                })
            };
            println!(
                "| {name} | {bound} | {} | {pb} | {pe:.4e} | {} k={kc} | {} | {} | {} k={kx} ({:.2e}) | {lossless} | {ratio:.3} | {} {pzb} ({ratio_zarrs:.3}) |",
                w.name,
                cell(Some(cbp)),
                cell(lin),
                cell(cf),
                xbit.0,
                xbit.1,
                pz.winner().name,
            );
        }
    }
    let geomean = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    let geomean_zarrs =
        (ratios_zarrs.iter().map(|r| r.ln()).sum::<f64>() / ratios_zarrs.len() as f64).exp();
    println!();
    println!(
        "geometric mean of (best of cbp bitround, linear u16, CF int16 bytes) / (plan bytes): {geomean:.3} over {} rows \
         (readers zarr-python, as Python plans); {geomean_zarrs:.3} for zarr-python and zarrs (Rust's default)",
        ratios.len()
    );
    println!(
        "planner time: statistics {:.3} s + planning {:.3} s (of which the sample's compression {:.3} s), against one read of the data {:.3} s (summed over rows)",
        t_stats, t_plan, t_zstd, t_read
    );
    println!(
        "statistics and parameters (planning without a sample): {:.3} s = {:.2} reads of the data; \
         the sample (4 of 24 chunks, encoded, decoded, checked and compressed by every candidate): {:.3} s",
        t_stats + t_fixed,
        (t_stats + t_fixed) / t_read,
        t_plan - t_fixed
    );
    small_field();
}

/// The planner's time on a small field (30 x 47, one chunk) as the bound shrinks: the
/// codes the bound implies grow a hundredfold, the time should not.
fn small_field() {
    let (ny, nx) = (30usize, 47usize);
    let data: Vec<f32> = (0..ny * nx)
        .map(|i| {
            let (y, x) = ((i / nx) as f32, (i % nx) as f32);
            250.0 + 40.0 * (y / 7.0).sin() * (x / 11.0).cos() + 0.37 * x
        })
        .collect();
    let words: Vec<u32> = data.iter().map(|x| x.to_bits()).collect();
    let shape = [ny, nx];
    let stats = PlanStats::of_words(DTypeId::Float32, Words::U32(&words), &shape, None).unwrap();
    let samples = [(Words::U32(&words), &shape[..])];
    println!();
    println!("small field {ny} x {nx}: planning time by bound (best of 5)");
    for bound in [0.1, 0.01, 0.001, 1e-4] {
        let mut best = f64::INFINITY;
        let mut chain = String::new();
        for _ in 0..5 {
            let t0 = Instant::now();
            let p = plan_f32(
                &stats,
                &samples,
                bound,
                &PlanOptions::default(),
                &mut zstd_len,
            );
            best = best.min(t0.elapsed().as_secs_f64());
            chain = p.winner().name.clone();
        }
        println!("  bound {bound:e}: {:.2} ms ({chain})", best * 1e3);
    }
}
