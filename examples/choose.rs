//! Choose `bitround`'s keepbits or `scale_offset`'s parameters from an array file.
//!
//! ```sh
//! cargo run --release --example choose -- keepbits <in.bin> <data_type> <shape> <information_level> [--axis N] [--svg out.svg] [--keep-insignificant]
//! cargo run --release --example choose -- scale-offset <in.bin> <data_type> <shape> <target_dtype> <max_abs_error> [--nan-sentinel] [--smallest-scale]
//! cargo run --release --example choose -- bench [rows,cols] [case filter] [--rounds N]
//! ```
//!
//! `in.bin` holds the elements in C order, little endian, of `data_type` (`float32`,
//! `float64`, `float16` or `bfloat16`); `shape` is like `180,360`. The last line printed is
//! `keepbits=N`, or `offset=X scale=Y` (JSON numbers); when the bound cannot be met the
//! example prints why on stderr and exits with status 1 (2 for a usage error). `--svg` also
//! writes the information per bit position, with the chosen keepbits marked;
//! `--keep-insignificant` skips the binomial significance test (as xbitinfo's Python
//! implementation, which has none). `bench` times
//! the bit counts (at the machine's instruction-set level, then capped at each lower one),
//! the finite range, a read-only
//! pass and a copy on a generated temperature-like field (default 1800,3600), f32 and f64,
//! C and F order, in alternating rounds (7, or `--rounds N`); a filter keeps the cases
//! whose name contains it, and the read-only passes, and skips the check that every level
//! counts the same (for profiling one case: `valgrind --tool=callgrind` sees then one
//! warm-up and `--rounds` runs of it).

use std::process::ExitCode;
use std::str::FromStr;
use std::time::Instant;

use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use zquant::choose::{
    BitCounts, BitInformation, FiniteRange, FitOptions, InformationOptions, ScaleChoice,
    fit_scale_offset,
};
use zquant::isa::{Isa, with_max_isa};
use zquant::{DTypeId, Real};

const USAGE: &str = "usage:
  choose keepbits <in.bin> <data_type> <shape> <information_level> [--axis N] [--svg out.svg] [--keep-insignificant]
  choose scale-offset <in.bin> <data_type> <shape> <target_dtype> <max_abs_error> [--nan-sentinel] [--smallest-scale]
  choose bench [rows,cols] [case filter] [--rounds N]";

/// What went wrong: a usage error (status 2) or a failure to choose (status 1).
enum Failure {
    Usage(String),
    Choose(String),
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(why)) => {
            eprintln!("error: {why}\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Choose(why)) => {
            eprintln!("error: {why}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &[String]) -> Result<(), Failure> {
    let usage = |s: &str| Failure::Usage(s.to_string());
    match args.first().map(String::as_str) {
        Some("keepbits") if args.len() >= 5 => {
            let level: f64 = parse(&args[4], "information_level")?;
            let axis = flag_value(&args[5..], "--axis")?
                .map(|a| parse::<usize>(&a, "--axis"))
                .transpose()?;
            let svg = flag_value(&args[5..], "--svg")?;
            let opts = InformationOptions {
                axis,
                set_zero_insignificant: !args[5..].iter().any(|a| a == "--keep-insignificant"),
                ..Default::default()
            };
            let a = load(&args[1], &args[2], &args[3])?;
            keepbits(a.as_ref(), level, &opts, svg.as_deref())
        }
        Some("scale-offset") if args.len() >= 6 => {
            let target = DTypeId::from_str(&args[4]).map_err(|e| Failure::Usage(e.to_string()))?;
            let bound: f64 = parse(&args[5], "max_abs_error")?;
            let opts = FitOptions {
                nan_sentinel: args[6..].iter().any(|a| a == "--nan-sentinel"),
                scale: if args[6..].iter().any(|a| a == "--smallest-scale") {
                    ScaleChoice::Smallest
                } else {
                    ScaleChoice::Largest
                },
            };
            let source = DTypeId::from_str(&args[2]).map_err(|e| Failure::Usage(e.to_string()))?;
            let a = load(&args[1], &args[2], &args[3])?;
            scale_offset(a.as_ref(), source, target, bound, opts)
        }
        Some("bench") => bench(
            args.get(1).map_or("1800,3600", String::as_str),
            args.get(2).map(String::as_str),
            flag_value(&args[1..], "--rounds")?
                .map(|r| parse::<usize>(&r, "--rounds"))
                .transpose()?
                .unwrap_or(7),
        ),
        _ => Err(usage(
            "expected `keepbits`, `scale-offset` or `bench` and their arguments",
        )),
    }
}

fn parse<T: FromStr>(s: &str, what: &str) -> Result<T, Failure> {
    s.parse()
        .map_err(|_| Failure::Usage(format!("{what}: cannot parse {s:?}")))
}

/// The value after `flag` in `rest`, if the flag is there.
fn flag_value(rest: &[String], flag: &str) -> Result<Option<String>, Failure> {
    match rest.iter().position(|a| a == flag) {
        None => Ok(None),
        Some(i) => rest
            .get(i + 1)
            .cloned()
            .map(Some)
            .ok_or_else(|| Failure::Usage(format!("{flag} needs a value"))),
    }
}

/// The two things the subcommands do with an array, whatever its element type.
trait AnyArray {
    fn information(&self, opts: &InformationOptions) -> Result<BitInformation, Failure>;
    fn range(&self) -> Option<FiniteRange>;
}

impl<T: Real> AnyArray for ArrayD<T> {
    fn information(&self, opts: &InformationOptions) -> Result<BitInformation, Failure> {
        BitInformation::of(self, opts).map_err(|e| Failure::Choose(e.to_string()))
    }
    fn range(&self) -> Option<FiniteRange> {
        FiniteRange::of(self)
    }
}

/// Read `path` as C-order little-endian `dtype` elements of `shape`.
fn load(path: &str, dtype: &str, shape: &str) -> Result<Box<dyn AnyArray>, Failure> {
    let shape: Vec<usize> = shape
        .split(',')
        .map(|d| parse(d.trim(), "shape"))
        .collect::<Result<_, _>>()?;
    let bytes = std::fs::read(path).map_err(|e| Failure::Usage(format!("{path}: {e}")))?;
    match dtype {
        "float32" => Ok(Box::new(read::<f32>(&bytes, &shape)?)),
        "float64" => Ok(Box::new(read::<f64>(&bytes, &shape)?)),
        "float16" => Ok(Box::new(read::<half::f16>(&bytes, &shape)?)),
        "bfloat16" => Ok(Box::new(read::<half::bf16>(&bytes, &shape)?)),
        _ => Err(Failure::Usage(format!(
            "data_type {dtype:?}: expected float32, float64, float16 or bfloat16"
        ))),
    }
}

fn read<T: Real>(bytes: &[u8], shape: &[usize]) -> Result<ArrayD<T>, Failure> {
    let n: usize = shape.iter().product();
    if bytes.len() != n * T::SIZE {
        return Err(Failure::Usage(format!(
            "the file has {} bytes, a {shape:?} array of {} needs {}",
            bytes.len(),
            T::NAME,
            n * T::SIZE
        )));
    }
    let v: Vec<T> = bytes.chunks_exact(T::SIZE).map(T::read_le).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).map_err(|e| Failure::Usage(e.to_string()))
}

fn keepbits(
    a: &dyn AnyArray,
    level: f64,
    opts: &InformationOptions,
    svg: Option<&str>,
) -> Result<(), Failure> {
    let info = a.information(opts)?;
    let k = info
        .keepbits(level)
        .map_err(|e| Failure::Choose(e.to_string()))?;
    let total: f64 = info.per_bit().iter().sum();
    println!(
        "pairs={} total_information={total:.4} bits, free_entropy={:.3e}",
        info.pairs(),
        info.free_entropy().unwrap_or(0.0)
    );
    let row: Vec<String> = info.per_bit().iter().map(|m| format!("{m:.12}")).collect();
    println!("information per bit (sign first): {}", row.join(" "));
    if let Some(path) = svg {
        std::fs::write(path, plot(&info, k, level))
            .map_err(|e| Failure::Usage(format!("{path}: {e}")))?;
        println!("wrote {path}");
    }
    println!("keepbits={k}");
    Ok(())
}

fn scale_offset(
    a: &dyn AnyArray,
    source: DTypeId,
    target: DTypeId,
    bound: f64,
    opts: FitOptions,
) -> Result<(), Failure> {
    let range = a
        .range()
        .ok_or_else(|| Failure::Choose("the array has no finite value".into()))?;
    let fit = fit_scale_offset(source, target, range, bound, opts)
        .map_err(|e| Failure::Choose(e.to_string()))?;
    println!(
        "range=[{}, {}] codes=[{}, {}] ({} codes) guaranteed_max_abs_error={:e} ({:?})",
        range.min,
        range.max,
        fit.codes.0,
        fit.codes.1,
        fit.code_count(),
        fit.max_abs_error,
        fit.guarantee
    );
    println!("codecs={}", fit.codecs());
    println!("offset={} scale={}", fit.offset_json(), fit.scale_json());
    Ok(())
}

/// The information per bit position as bars, the kept bits shaded, keepbits marked by a
/// line after the last kept mantissa bit (as xbitinfo's `plot_bitinformation`).
fn plot(info: &BitInformation, keepbits: u32, level: f64) -> String {
    let bits = info.per_bit();
    let (n, h, left, top, bar) = (bits.len(), 260.0, 50.0, 30.0, 18.0);
    let width = left + bar * n as f64 + 20.0;
    let mantissa = match info.format() {
        zquant::dtype::Format::Float(l) => l.mantissa_bits as usize,
        _ => 0,
    };
    let first_mantissa = n - mantissa;
    let cut = first_mantissa + keepbits as usize;
    let y = |v: f64| top + h * (1.0 - v.clamp(0.0, 1.0));
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"10\">\n",
        top + h + 40.0
    );
    s += &format!(
        "<text x=\"{left}\" y=\"18\" font-size=\"12\">real information per bit; keepbits={keepbits} keeps {}% of it</text>\n",
        100.0 * level
    );
    s += &format!(
        "<rect x=\"{left}\" y=\"{top}\" width=\"{}\" height=\"{h}\" fill=\"#e8f0fe\"/>\n",
        bar * cut as f64
    );
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        s += &format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y0}\" y2=\"{y0}\" stroke=\"#ccc\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{t}</text>\n",
            left + bar * n as f64,
            left - 4.0,
            y(t) + 3.0,
            y0 = y(t)
        );
    }
    for (i, m) in bits.iter().enumerate() {
        let x = left + bar * i as f64;
        let color = if i == 0 {
            "#888"
        } else if i < first_mantissa {
            "#6a8"
        } else {
            "#46c"
        };
        s += &format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>bit {i}: {m:.4}</title></rect>\n",
            x + 2.0,
            y(*m),
            bar - 4.0,
            top + h - y(*m)
        );
        let label = if i == 0 {
            "±".to_string()
        } else if i < first_mantissa {
            format!("e{i}")
        } else {
            format!("m{}", i - first_mantissa + 1)
        };
        s += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"8\">{label}</text>\n",
            x + bar / 2.0,
            top + h + 12.0
        );
    }
    let xc = left + bar * cut as f64;
    s += &format!(
        "<line x1=\"{xc}\" x2=\"{xc}\" y1=\"{top}\" y2=\"{}\" stroke=\"#c00\" stroke-width=\"2\"/>\n",
        top + h
    );
    s += &format!(
        "<text x=\"{left}\" y=\"{}\">information (bits) per bit position: sign, exponent (green), mantissa (blue); red line: keepbits</text>\n</svg>\n",
        top + h + 30.0
    );
    s
}

/// A temperature-like field: a smooth large-scale pattern, weather-scale waves and
/// small noise, in kelvin.
fn field(rows: usize, cols: usize) -> ArrayD<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    ArrayD::from_shape_fn(IxDyn(&[rows, cols]), |ix| {
        let (lat, lon) = (ix[0] as f64 / rows as f64, ix[1] as f64 / cols as f64);
        let pi = std::f64::consts::PI;
        250.0
            + 50.0 * (pi * lat).sin()
            + 5.0 * (6.0 * pi * lon + 3.0 * lat).sin() * (4.0 * pi * lat).cos()
            + 0.05 * noise()
    })
}

/// Seconds per run of `run`: `reps` timed runs after one warm-up, returned all (the caller
/// takes minima and medians).
fn times(reps: usize, run: &mut dyn FnMut() -> u64) -> Vec<f64> {
    std::hint::black_box(run());
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(run());
            t.elapsed().as_secs_f64()
        })
        .collect()
}

fn bench(shape: &str, filter: Option<&str>, reps: usize) -> Result<(), Failure> {
    let dims: Vec<usize> = shape
        .split(',')
        .map(|d| parse(d.trim(), "shape"))
        .collect::<Result<_, _>>()?;
    let [rows, cols] = dims[..] else {
        return Err(Failure::Usage("bench takes rows,cols".into()));
    };
    let f64c = field(rows, cols);
    let f32c = f64c.mapv(|x| x as f32);
    // F order: the same values, column-major in memory.
    let f64f = {
        let mut a = ArrayD::<f64>::zeros(IxDyn(&[rows, cols]).f());
        a.assign(&f64c);
        a
    };
    let f32f = f64f.mapv(|x| x as f32);
    let opts = InformationOptions::default();
    let axis0 = InformationOptions {
        axis: Some(0),
        ..opts
    };
    let mut dst = vec![0u8; f64c.len() * 8];
    let levels = Isa::available();
    // Rounds alternate every case, so that a noisy neighbour hits all of them alike.
    type Case<'a> = (String, usize, Box<dyn FnMut() -> u64 + 'a>);
    let mut cases: Vec<Case<'_>> = Vec::new();
    fn read_pass<T: Real>(a: &ArrayD<T>) -> u64 {
        let flat = a.as_slice_memory_order().unwrap_or(&[]);
        flat.iter().fold(0u64, |s, x| s.wrapping_add(x.to_bits()))
    }
    macro_rules! arrays {
        ($($name:literal, $a:expr, $t:ty;)*) => {$(
            let a: &ArrayD<$t> = $a;
            let bytes = a.len() * std::mem::size_of::<$t>();
            cases.push((format!("read-only pass {}", $name), bytes, Box::new(move || read_pass(a))));
            for (label, o) in [("axis 1", opts), ("axis 0", axis0)] {
                cases.push((format!("information {} {label}", $name), bytes, Box::new(move || {
                    BitCounts::of(a, &o).map_or(0, |c| c.pairs())
                })));
                // The same count capped at each lower instruction-set level.
                for &level in levels.iter().rev().skip(1) {
                    let name = format!("  {} {} {label}", level.name(), $name);
                    cases.push((name, bytes, Box::new(move || {
                        with_max_isa(level, || BitCounts::of(a, &o)).map_or(0, |c| c.pairs())
                    })));
                }
            }
            cases.push((format!("finite range {}", $name), bytes, Box::new(move || {
                FiniteRange::of(a).map_or(0, |r| r.max.to_bits())
            })));
        )*};
    }
    arrays! {
        "float32 C", &f32c, f32;
        "float32 F", &f32f, f32;
        "float64 C", &f64c, f64;
        "float64 F", &f64f, f64;
    }
    {
        let src = f64c.as_slice().unwrap_or(&[]);
        let dst = &mut dst;
        cases.push((
            "memcpy float64".into(),
            src.len() * 8,
            Box::new(move || {
                for (d, s) in dst.chunks_exact_mut(8).zip(src) {
                    d.copy_from_slice(&s.to_ne_bytes());
                }
                u64::from(dst[dst.len() / 2])
            }),
        ));
    }
    let filter = filter.filter(|f| !f.starts_with("--"));
    if let Some(f) = filter {
        cases.retain(|(name, _, _)| name.contains(f) || name.starts_with("read-only"));
    }
    let reps = reps.max(1);
    let mut all: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for _ in 0..reps {
        for (i, (_, _, run)) in cases.iter_mut().enumerate() {
            all[i].extend(times(1, run.as_mut()));
        }
    }
    let mut read = 0.0;
    println!(
        "{rows}x{cols}, {reps} rounds alternating the cases: min / median ms, GB/s at the minimum, and against the last read-only pass (minima)"
    );
    for ((name, bytes, _), t) in cases.iter().zip(&mut all) {
        t.sort_by(f64::total_cmp);
        let (min, med) = (t[0], t[t.len() / 2]);
        if name.starts_with("read-only") {
            read = min;
        }
        println!(
            "{name:<32} {:8.2} / {:8.2} ms  {:6.2} GB/s  {:5.2} of a read",
            min * 1e3,
            med * 1e3,
            *bytes as f64 / min / 1e9,
            read / min
        );
    }
    // Every level counts the same (the tests check it against a reference; here on the
    // fields).
    let mut same = true;
    let check = if filter.is_some() {
        vec![]
    } else {
        vec![opts, axis0]
    };
    for o in check {
        for &level in &levels {
            let at = |f: &dyn Fn() -> Option<BitCounts>| with_max_isa(level, f);
            same &= at(&|| BitCounts::of(&f32c, &o).ok()) == BitCounts::of(&f32c, &o).ok();
            same &= at(&|| BitCounts::of(&f32f, &o).ok()) == BitCounts::of(&f32f, &o).ok();
            same &= at(&|| BitCounts::of(&f64c, &o).ok()) == BitCounts::of(&f64c, &o).ok();
            same &= at(&|| BitCounts::of(&f64f, &o).ok()) == BitCounts::of(&f64f, &o).ok();
        }
    }
    let names: Vec<&str> = levels.iter().map(|l| l.name()).collect();
    if filter.is_none() {
        println!("counts equal at every level ({}): {same}", names.join(", "));
    }
    if filter.is_none() {
        let k = BitInformation::of(&f32c, &opts)
            .and_then(|i| i.keepbits(0.99))
            .map_err(|e| Failure::Choose(e.to_string()))?;
        println!("keepbits(0.99) float32 = {k}");
    }
    Ok(())
}
