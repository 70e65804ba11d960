//! Every `cast_value` pair of the machine types, timed: a map of where a cast has no fast
//! kernel and falls to the exact per-element path.
//!
//! ```sh
//! cargo run --release --example cast_matrix -- [checked|clamp|wrap] [--elements N] [--max-ns X]
//! ```
//!
//! Each cell is the best of 3 rounds of 8 `encode_slice` calls over `N` elements (default
//! 65,536: source and target stay in the L2 cache, so the figure is the kernel's cost, not the
//! memory's), in nanoseconds per element, nearest-even. Rows are sources, columns targets; `-`
//! is a pair the mode does not take (`wrap` is for integer targets only). A cell above
//! `--max-ns` (default 2.0, about 20x a copy of eight bytes from L2) is marked `!`, and the
//! program exits with status 1 when any is, so that a script can watch for pairs that lose
//! their kernel. Not part of `cargo test`: a benchmark, on a shared machine, is noisy.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use half::{bf16, f16};
use serde_json::json;
use zquant::{ArrayCodec, CastValue, CastValueConfig, Real};

struct Opts {
    mode: String,
    elements: usize,
    max_ns: f64,
}

/// The codec casting to `data_type` under `mode`, or `None` when the mode does not apply.
fn codec<S: Real, D: Real>(data_type: &str, mode: &str) -> Option<CastValue<S, D>> {
    let mut config = json!({"data_type": data_type, "rounding": "nearest-even"});
    if mode != "checked" {
        config["out_of_range"] = json!(mode);
    }
    let config = CastValueConfig::from_configuration(Some(&config)).ok()?;
    CastValue::from_config(&config).ok()
}

/// Nanoseconds per element of `S -> D` over `src`, or `None` when the mode does not apply.
fn time<S: Real, D: Real>(src: &[S], data_type: &str, mode: &str) -> Option<f64> {
    let codec = codec::<S, D>(data_type, mode)?;
    let mut dst = vec![D::default(); src.len()];
    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..8 {
            // Out-of-range elements are an error under `checked`: the data below is in
            // every target's range, so the result is not looked at.
            let _ = codec.encode_slice(src, &mut dst);
            black_box(&mut dst);
        }
        best = best.min(start.elapsed().as_secs_f64() / (8 * src.len()) as f64);
    }
    Some(best * 1e9)
}

/// One row: `S` to every column's type.
fn row<S: Real>(name: &str, src: &[S], opts: &Opts, slow: &mut Vec<String>) {
    macro_rules! cells {
        ($(($t:ty, $dt:expr, $col:expr)),*) => {
            [$((time::<S, $t>(src, $dt, &opts.mode), $col)),*]
        };
    }
    let cells = cells!(
        (i8, "int8", "i8"),
        (u8, "uint8", "u8"),
        (i16, "int16", "i16"),
        (u16, "uint16", "u16"),
        (i32, "int32", "i32"),
        (u32, "uint32", "u32"),
        (i64, "int64", "i64"),
        (u64, "uint64", "u64"),
        (f16, "float16", "f16"),
        (bf16, "bfloat16", "bf16"),
        (f32, "float32", "f32"),
        (f64, "float64", "f64")
    );
    let mut line = format!("{name:5}");
    for (ns, col) in cells {
        match ns {
            Some(ns) if ns > opts.max_ns => {
                line += &format!(" {ns:6.2}!");
                slow.push(format!("{name} -> {col} {ns:.2} ns"));
            }
            Some(ns) => line += &format!(" {ns:6.2} "),
            None => line += "    -   ",
        }
    }
    println!("{line}");
}

fn parse() -> Result<Opts, String> {
    let mut opts = Opts {
        mode: "clamp".into(),
        elements: 1 << 16,
        max_ns: 2.0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match a.as_str() {
            "checked" | "clamp" | "wrap" => opts.mode = a,
            "--elements" => {
                opts.elements = value("--elements")?.parse().map_err(|e| format!("{e}"))?;
            }
            "--max-ns" => opts.max_ns = value("--max-ns")?.parse().map_err(|e| format!("{e}"))?,
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let opts = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}\nusage: cast_matrix [checked|clamp|wrap] [--elements N] [--max-ns X]");
            return ExitCode::from(2);
        }
    };
    // Values in [0, 1) from a multiplicative hash, scaled into [-100, 100) (or [0, 200) for
    // unsigned sources): inside every target's range, so `checked` converts every element.
    let unit: Vec<f64> = (0..opts.elements as u64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64)
        .collect();
    let signed = |x: f64| x * 200.0 - 100.0;
    let unsigned = |x: f64| x * 200.0;
    println!(
        "cast_value {}, nearest-even, {} elements: ns per element (rows: source, columns: target)",
        opts.mode, opts.elements
    );
    println!(
        "src   {}",
        [
            "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"
        ]
        .map(|c| format!("{c:>6}  "))
        .concat()
    );
    let mut slow = Vec::new();
    let o = &opts;
    let s = &mut slow;
    row(
        "i8",
        &unit.iter().map(|&x| signed(x) as i8).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "u8",
        &unit.iter().map(|&x| unsigned(x) as u8).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "i16",
        &unit.iter().map(|&x| signed(x) as i16).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "u16",
        &unit.iter().map(|&x| unsigned(x) as u16).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "i32",
        &unit.iter().map(|&x| signed(x) as i32).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "u32",
        &unit.iter().map(|&x| unsigned(x) as u32).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "i64",
        &unit.iter().map(|&x| signed(x) as i64).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "u64",
        &unit.iter().map(|&x| unsigned(x) as u64).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "f16",
        &unit
            .iter()
            .map(|&x| f16::from_f64(signed(x)))
            .collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "bf16",
        &unit
            .iter()
            .map(|&x| bf16::from_f64(signed(x)))
            .collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "f32",
        &unit.iter().map(|&x| signed(x) as f32).collect::<Vec<_>>(),
        o,
        s,
    );
    row(
        "f64",
        &unit.iter().map(|&x| signed(x)).collect::<Vec<_>>(),
        o,
        s,
    );
    if slow.is_empty() {
        println!("every pair within {} ns per element", opts.max_ns);
        ExitCode::SUCCESS
    } else {
        println!(
            "{} pairs above {} ns per element: {}",
            slow.len(),
            opts.max_ns,
            slow.join(", ")
        );
        ExitCode::FAILURE
    }
}
