//! Throughput harness: every hot kernel, beside a memcpy of the same size.
//!
//! ```sh
//! cargo run --release --example throughput -- [--quick] [--json PATH] [--threads N]
//!                                             [--runs R] [--elements N] [--filter TEXT]
//! ```
//!
//! Each case runs on 16M elements (`--quick`: 4M; `--elements` overrides both) of seeded,
//! realistic data (a smooth field plus noise, in the case's range; see
//! `benches/common/data.rs`). Outputs are preallocated and only the kernel call is timed
//! (`encode_slice`/`decode_slice`/`encode_slice_in_place`), except for the run-time API
//! ([`DynChain`]), which allocates its output inside the timed call: that is what a caller
//! of `DynChain::encode` pays. Beside every case its baseline is timed in the same loop,
//! interleaved run by run: a `copy_from_slice` of `max(input bytes, output bytes)`.
//!
//! Reported per case: the median of `R` runs (at least 5; default 7, `--quick` 5), GB/s of
//! *input* bytes (10^9 bytes per second), and `ratio_to_memcpy` = baseline median / case
//! median (1.0 means "as fast as copying the bytes"). The small-float casts are also timed
//! through a per-element scalar path (`D::from_exact(x.to_exact())` on one element at a
//! time, kept from vectorising), for the ">= 30x a scalar path" target.
//!
//! `--threads N` (N > 1) runs every case, the baseline memcpy too, on N threads, and also
//! times each case on one thread to report the speedup (target: >= 1.8x at N = 2 on >= 4M
//! elements). Built with `--features rayon`, the typed cases go through the library's
//! `zquant::parallel` (chunks on a rayon pool of N threads); without it, and for the
//! run-time (`dyn`) cases, the input is cut into N contiguous parts, one scoped thread each.
//!
//! `--count` runs each case `R` times and nothing else (no timing, no baseline, no scalar
//! path), each run inside [`counted_run`] and each case after a call of [`next_case`]: for
//! callgrind's instruction counts per element (`benches/instructions.sh` reads them).
//!
//! `--json PATH` writes `{"cases": [{"name", "elements", "in_bytes", "median_s", "gbps",
//! "ratio_to_memcpy", ...}]}` (more keys are informative extras).

use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use serde_json::{Value, json};
use zquant::CastValueConfig;
use zquant::dtype::{Float4E2M1Fn, Float8E4M3, Float8E5M2, Plain, zeroed_vec};
use zquant::{ArrayCodec, BitRound, CastOptions, CastValue, DynArray, DynChain, Real, ScaleOffset};
use zquant::{AsType, FixedScaleOffset, FixedScaleOffsetConfig, Quantize};

#[path = "../benches/common/data.rs"]
mod data;

// ---------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------

struct Opts {
    elements: usize,
    quick: bool,
    json: Option<PathBuf>,
    threads: usize,
    runs: usize,
    filter: Option<String>,
    count: bool,
}

const USAGE: &str = "usage: throughput [--quick] [--json PATH] [--threads N] [--runs R] \
                     [--elements N] [--filter TEXT] [--count]";

fn parse_args() -> Result<Opts, String> {
    let mut quick = false;
    let mut json = None;
    let mut threads = 1;
    let mut runs = None;
    let mut elements = None;
    let mut filter = None;
    let mut count = false;
    let mut args = std::env::args().skip(1);
    let num = |v: Option<String>, what: &str| -> Result<usize, String> {
        v.ok_or_else(|| format!("{what} needs a value"))?
            .parse::<usize>()
            .map_err(|e| format!("{what}: {e}"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--json" => json = Some(PathBuf::from(args.next().ok_or("--json needs a path")?)),
            "--threads" => threads = num(args.next(), "--threads")?.max(1),
            "--runs" => runs = Some(num(args.next(), "--runs")?),
            "--elements" => elements = Some(num(args.next(), "--elements")?),
            "--filter" => filter = Some(args.next().ok_or("--filter needs a value")?),
            "--count" => count = true,
            "-h" | "--help" => return Err(USAGE.into()),
            // `cargo bench` style harness flags are not ours; anything else is a mistake.
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let default_n = if quick { 4 << 20 } else { 16 << 20 };
    Ok(Opts {
        elements: elements.unwrap_or(default_n).max(1),
        quick,
        json,
        threads,
        runs: runs.unwrap_or(if quick { 5 } else { 7 }).max(5),
        filter,
        count,
    })
}

// ---------------------------------------------------------------------------------------
// Splitting work over threads
// ---------------------------------------------------------------------------------------

/// Elements per part when `n` elements are split over `threads` (a multiple of 64, so parts
/// start on cache-line boundaries for every element size).
fn part_len(n: usize, threads: usize) -> usize {
    n.div_ceil(threads).next_multiple_of(64).max(64)
}

/// `f(src, dst)`, or, on more than one thread, `f` on parts of both: with the `rayon`
/// feature through the library's own [`zquant::parallel::map_chunks`] (chunks of
/// [`zquant::parallel::CHUNK`] elements on the rayon pool, sized to `--threads` in `main`),
/// without it on `threads` contiguous parts, one scoped thread each.
fn par_map<A: Sync, B: Send>(
    threads: usize,
    src: &[A],
    dst: &mut [B],
    f: &(impl Fn(&[A], &mut [B]) + Sync),
) {
    if threads <= 1 {
        f(src, dst);
        return;
    }
    #[cfg(feature = "rayon")]
    {
        let r = zquant::parallel::map_chunks(src, dst, |a, b| {
            f(a, b);
            Ok(())
        });
        debug_assert!(r.is_ok());
    }
    #[cfg(not(feature = "rayon"))]
    {
        // The calling thread takes the first part itself, as a caller of a library would:
        // spawning every part (the caller waiting) measured 0.9-1.1x one thread where
        // this measures 1.7-1.9x.
        let len = part_len(src.len(), threads);
        std::thread::scope(|s| {
            let mut parts = src.chunks(len).zip(dst.chunks_mut(len));
            let first = parts.next();
            for (a, b) in parts {
                s.spawn(move || f(a, b));
            }
            if let Some((a, b)) = first {
                f(a, b);
            }
        });
    }
}

/// `f(data)`, or, on more than one thread, `f` on parts of it, as [`par_map`].
fn par_in_place<T: Send>(threads: usize, data: &mut [T], f: &(impl Fn(&mut [T]) + Sync)) {
    if threads <= 1 {
        f(data);
        return;
    }
    #[cfg(feature = "rayon")]
    {
        let r = zquant::parallel::for_each_chunk(data, |c| {
            f(c);
            Ok(())
        });
        debug_assert!(r.is_ok());
    }
    #[cfg(not(feature = "rayon"))]
    {
        let len = part_len(data.len(), threads);
        std::thread::scope(|s| {
            let mut parts = data.chunks_mut(len);
            let first = parts.next();
            for part in parts {
                s.spawn(move || f(part));
            }
            if let Some(part) = first {
                f(part);
            }
        });
    }
}

// ---------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------

/// Arrays a timed call allocated; dropped after the clock stops.
type Garbage = Vec<DynArray>;

struct Case {
    name: String,
    elements: usize,
    in_bytes: usize,
    out_bytes: usize,
    note: &'static str,
    /// One kernel run over all elements on the given number of threads.
    run: Box<dyn FnMut(usize) -> Garbage>,
    /// One run of the per-element scalar reference path, single-threaded.
    scalar: Option<Box<dyn FnMut()>>,
}

/// Builds one case from its name and the unit data (`Err`: a reason to skip it).
type BuildFn = Box<dyn FnOnce(&'static str, &[f64]) -> Result<Case, String>>;

/// A case built lazily (so that only one case's buffers are alive at a time, and a filtered
/// out case costs nothing); `Err` is a reason to skip it.
struct Builder {
    name: &'static str,
    build: BuildFn,
}

fn add(
    list: &mut Vec<Builder>,
    name: &'static str,
    build: impl FnOnce(&'static str, &[f64]) -> Result<Case, String> + 'static,
) {
    list.push(Builder {
        name,
        build: Box::new(build),
    });
}

fn size_of_val_slice<T>(v: &[T]) -> usize {
    std::mem::size_of_val(v)
}

/// `v` moved into memory like the peers' (NumPy advises huge pages for arrays from 4 MiB
/// on; `zquant::dtype::zeroed_vec` does the same), so that both sides stream over the same
/// kind of pages.
fn rehome<T: Plain + Copy>(v: Vec<T>) -> Vec<T> {
    let mut out = zeroed_vec::<T>(v.len()).expect("fits in memory");
    out.copy_from_slice(&v);
    out
}

/// A zeroed buffer of `n` elements (huge pages from 4 MiB on, like the peers' arrays).
fn zeros<T: Plain>(n: usize) -> Vec<T> {
    zeroed_vec::<T>(n).expect("fits in memory")
}

/// Write one element per page so that the first timed run does not pay for page faults
/// (`vec![0; n]` maps zeroed pages lazily).
fn prefault<T: Default>(v: &mut [T]) {
    let step = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for i in (0..v.len()).step_by(step) {
        v[i] = black_box(T::default());
    }
}

/// A copying kernel `f(src, dst)` over preallocated buffers.
fn map_case<A, B, F>(name: &str, src: Vec<A>, f: F) -> Case
where
    A: Plain + Copy + Sync + 'static,
    B: Plain + Default + Clone + Send + 'static,
    F: Fn(&[A], &mut [B]) + Sync + 'static,
{
    let n = src.len();
    let src = rehome(src);
    let mut dst = zeros::<B>(n);
    prefault(&mut dst);
    Case {
        name: name.into(),
        elements: n,
        in_bytes: size_of_val_slice(&src),
        out_bytes: size_of_val_slice(&dst),
        note: "",
        run: Box::new(move |threads| {
            par_map(threads, &src, &mut dst, &f);
            black_box(&mut dst);
            Vec::new()
        }),
        scalar: None,
    }
}

/// An in-place kernel `f(data)`. Every case here is idempotent on its own output, so the
/// repeated runs do the same work.
fn in_place_case<T, F>(name: &str, data: Vec<T>, f: F) -> Case
where
    T: Plain + Copy + Send + 'static,
    F: Fn(&mut [T]) + Sync + 'static,
{
    let mut data = rehome(data);
    let bytes = size_of_val_slice(&data);
    Case {
        name: name.into(),
        elements: data.len(),
        in_bytes: bytes,
        out_bytes: bytes,
        note: "in place",
        run: Box::new(move |threads| {
            par_in_place(threads, &mut data, &f);
            black_box(&mut data);
            Vec::new()
        }),
        scalar: None,
    }
}

/// A `cast_value` codec from its `configuration` JSON.
fn cast_codec<S: Real, D: Real>(config: Value) -> Result<CastValue<S, D>, String> {
    let cfg = CastValueConfig::from_configuration(Some(&config)).map_err(|e| e.to_string())?;
    CastValue::from_config(&cfg).map_err(|e| e.to_string())
}

fn cast_config(data_type: &str, rounding: &str, out_of_range: Option<&str>) -> Value {
    let mut c = json!({"data_type": data_type, "rounding": rounding});
    if let Some(o) = out_of_range {
        c["out_of_range"] = json!(o);
    }
    c
}

/// `cast_value` encode `S -> D`; with `scalar_ref`, also the per-element scalar path.
fn cast_case<S: Real + 'static, D: Real + 'static>(
    name: &str,
    src: Vec<S>,
    config: Value,
    scalar_ref: bool,
) -> Result<Case, String> {
    let codec: CastValue<S, D> = cast_codec(config)?;
    let opts = codec.options();
    let scalar: Option<Box<dyn FnMut()>> = if scalar_ref {
        let src = src.clone();
        let mut dst = vec![D::default(); src.len()];
        Some(Box::new(move || {
            scalar_path(&src, &mut dst, opts);
            black_box(&mut dst);
        }))
    } else {
        None
    };
    let mut case = map_case(name, src, move |s: &[S], d: &mut [D]| {
        codec.encode_slice(s, d).expect("in-range data encodes");
    });
    case.scalar = scalar;
    Ok(case)
}

/// The per-element scalar path: the generic correctly rounded conversion, one element at a
/// time, each input passed through `black_box` so that nothing is vectorised or hoisted.
#[inline(never)]
fn scalar_path<S: Real, D: Real>(src: &[S], dst: &mut [D], opts: CastOptions) {
    for (s, d) in src.iter().zip(dst.iter_mut()) {
        *d = D::from_exact(black_box(*s).to_exact(), opts).0;
    }
}

fn dyn_f64(v: Vec<f64>) -> DynArray {
    let n = v.len();
    let v = rehome(v);
    DynArray::Float64(ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("1-d shape"))
}

fn dyn_u8(v: Vec<u8>) -> DynArray {
    let n = v.len();
    let v = rehome(v);
    DynArray::UInt8(ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("1-d shape"))
}

/// `v` whole, and cut into `threads` contiguous parts.
fn dyn_parts<T: Clone>(
    v: Vec<T>,
    threads: usize,
    wrap: fn(Vec<T>) -> DynArray,
) -> (DynArray, Vec<DynArray>) {
    let parts = if threads > 1 {
        let len = part_len(v.len(), threads);
        v.chunks(len).map(|c| wrap(c.to_vec())).collect()
    } else {
        Vec::new()
    };
    (wrap(v), parts)
}

#[derive(Clone, Copy)]
enum Dir {
    Encode,
    Decode,
}

/// A run-time chain over `input` (split for the configured thread count), allocating its
/// output in the timed call as `DynChain::encode`/`decode` do.
fn dyn_case(
    name: &str,
    chain: DynChain,
    dir: Dir,
    input: (DynArray, Vec<DynArray>),
    out_elem_bytes: usize,
) -> Case {
    let (whole, parts) = input;
    let n = whole.shape().iter().product::<usize>();
    let in_bytes = n * whole.dtype().size();
    let run_one = move |chain: &DynChain, a: &DynArray| -> DynArray {
        match dir {
            Dir::Encode => chain.encode(a),
            Dir::Decode => chain.decode(a),
        }
        .expect("in-range data")
    };
    Case {
        name: name.into(),
        elements: n,
        in_bytes,
        out_bytes: n * out_elem_bytes,
        note: "run-time API: allocates its output",
        run: Box::new(move |threads| {
            if threads <= 1 || parts.is_empty() {
                return vec![run_one(&chain, &whole)];
            }
            let chain = &chain;
            // The caller takes the first part itself, as in `par_map`.
            std::thread::scope(|s| {
                let handles: Vec<_> = parts[1..]
                    .iter()
                    .map(|p| s.spawn(move || run_one(chain, p)))
                    .collect();
                let mut outs = vec![run_one(chain, &parts[0])];
                outs.extend(handles.into_iter().map(|h| h.join().expect("worker")));
                outs
            })
        }),
        scalar: None,
    }
}

/// [`dyn_case`] through `DynChain::encode_into`/`decode_into`: the outputs are allocated
/// once, before timing (a caller reusing its buffers), so the timed call does not pay for
/// first touches of fresh pages.
fn dyn_into_case(
    name: &str,
    chain: DynChain,
    dir: Dir,
    input: (DynArray, Vec<DynArray>),
    out_elem_bytes: usize,
) -> Result<Case, String> {
    let (whole, parts) = input;
    let n = whole.shape().iter().product::<usize>();
    let in_bytes = n * whole.dtype().size();
    let alloc = |a: &DynArray| match dir {
        Dir::Encode => chain.encode(a),
        Dir::Decode => chain.decode(a),
    };
    let mut out_whole = alloc(&whole).map_err(|e| e.to_string())?;
    let mut out_parts = parts
        .iter()
        .map(alloc)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let run_one = move |chain: &DynChain, a: &DynArray, out: &mut DynArray| {
        match dir {
            Dir::Encode => chain.encode_into(a, out),
            Dir::Decode => chain.decode_into(a, out),
        }
        .expect("in-range data");
    };
    Ok(Case {
        name: name.into(),
        elements: n,
        in_bytes,
        out_bytes: n * out_elem_bytes,
        note: "run-time API into a reused output",
        run: Box::new(move |threads| {
            if threads <= 1 || parts.is_empty() {
                run_one(&chain, &whole, &mut out_whole);
                black_box(&mut out_whole);
                return Vec::new();
            }
            let chain = &chain;
            // The caller takes the first part itself, as in `par_map`.
            std::thread::scope(|s| {
                let mut pairs = parts.iter().zip(out_parts.iter_mut());
                let first = pairs.next();
                for (p, o) in pairs {
                    s.spawn(move || run_one(chain, p, o));
                }
                if let Some((p, o)) = first {
                    run_one(chain, p, o);
                }
            });
            black_box(&mut out_parts);
            Vec::new()
        }),
        scalar: None,
    })
}

fn chain_metadata() -> (Value, Value, Vec<Value>) {
    (
        json!("float64"),
        json!(250.0),
        vec![
            json!({"name": "scale_offset", "configuration": {"offset": 250, "scale": 4}}),
            json!({"name": "cast_value", "configuration":
                {"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "clamp"}}),
        ],
    )
}

fn fso_metadata() -> (Value, Value, Vec<Value>) {
    (
        json!("float64"),
        json!(1000.0),
        vec![
            json!({"name": "numcodecs.fixedscaleoffset", "configuration":
            {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}}),
        ],
    )
}

fn fso_typed() -> Result<FixedScaleOffset<f64, u8>, String> {
    let (_, _, codecs) = fso_metadata();
    let cfg = FixedScaleOffsetConfig::from_configuration(codecs[0].get("configuration"))
        .map_err(|e| e.to_string())?;
    FixedScaleOffset::from_config(&cfg).map_err(|e| e.to_string())
}

fn build_chain(meta: (Value, Value, Vec<Value>)) -> Result<DynChain, String> {
    DynChain::from_array_to_array_codecs(&meta.0, &meta.1, &meta.2).map_err(|e| e.to_string())
}

fn typed_chain() -> Result<zquant::Chain<ScaleOffset<f64>, CastValue<f64, u8>>, String> {
    let so = ScaleOffset::<f64>::new(250.0, 4.0).map_err(|e| e.to_string())?;
    let cv = cast_codec::<f64, u8>(cast_config("uint8", "nearest-even", Some("clamp")))?;
    Ok(so.then(cv))
}

/// `packbits` encode (`dir` Encode: words -> bytes) or decode of codes of `dtype`
/// (`words` per element and word width as the type's), from `u` scaled to `bits`-bit codes.
/// One thread (the codec has no parallel entry point); outputs preallocated.
fn packbits_case(
    name: &str,
    dtype: zquant::DTypeId,
    config: Value,
    code_bits: u32,
    u: &[f64],
    dir: Dir,
) -> Result<Case, String> {
    use zquant::dtype::WordBuf;
    let codec = zquant::zarr::PackBits::new(dtype, Some(&config)).map_err(|e| e.to_string())?;
    let top = ((1u64 << code_bits) - 1) as f64;
    let codes: Vec<u64> = data::scaled(u, 0.0, top)
        .iter()
        .map(|&x| x as u64)
        .collect();
    let per = dtype.words_per_element();
    let elements = codes.len() / per;
    let codes = &codes[..elements * per];
    let words = match dtype.word_bits() {
        8 => WordBuf::U8(rehome(codes.iter().map(|&x| x as u8).collect())),
        16 => WordBuf::U16(rehome(codes.iter().map(|&x| x as u16).collect())),
        32 => WordBuf::U32(rehome(codes.iter().map(|&x| x as u32).collect())),
        _ => WordBuf::U64(rehome(codes.to_vec())),
    };
    let len = codec.encoded_len(elements).map_err(|e| e.to_string())?;
    let mut bytes = zeros::<u8>(len);
    codec
        .encode_into(words.as_words(), &mut bytes)
        .map_err(|e| e.to_string())?;
    let word_bytes = words.len() * (dtype.word_bits() / 8) as usize;
    let (in_bytes, out_bytes) = match dir {
        Dir::Encode => (word_bytes, len),
        Dir::Decode => (len, word_bytes),
    };
    let mut words = words;
    Ok(Case {
        name: name.into(),
        elements,
        in_bytes,
        out_bytes,
        note: "one thread",
        run: Box::new(move |_threads| {
            let r = match dir {
                Dir::Encode => codec.encode_into(words.as_words(), &mut bytes),
                Dir::Decode => codec.decode_into(&bytes, words.as_words_mut()),
            };
            debug_assert!(r.is_ok());
            black_box(&mut bytes);
            Vec::new()
        }),
        scalar: None,
    })
}

fn builders(threads: usize) -> Vec<Builder> {
    let mut b: Vec<Builder> = Vec::new();

    // --- packbits (issue 25) ----------------------------------------------------------
    let packbits_cases: [(&str, zquant::DTypeId, &str, u32); 8] = [
        (
            "uint32 bits 0..=22",
            zquant::DTypeId::UInt32,
            "{\"last_bit\": 22}",
            23,
        ),
        (
            "int32 bits 3..=27",
            zquant::DTypeId::Int32,
            "{\"first_bit\": 3, \"last_bit\": 27}",
            25,
        ),
        ("uint4", zquant::DTypeId::UInt4, "{}", 4),
        ("int4", zquant::DTypeId::Int4, "{}", 4),
        ("float4_e2m1fn", zquant::DTypeId::Float4E2M1Fn, "{}", 4),
        ("uint2", zquant::DTypeId::UInt2, "{}", 2),
        ("float6_e2m3fn", zquant::DTypeId::Float6E2M3Fn, "{}", 6),
        (
            "uint16 bits 0..=11",
            zquant::DTypeId::UInt16,
            "{\"last_bit\": 11}",
            12,
        ),
    ];
    for (label, dtype, config, code_bits) in packbits_cases {
        for (dir, what) in [(Dir::Encode, "encode"), (Dir::Decode, "decode")] {
            let name: &'static str = Box::leak(format!("packbits/{label}/{what}").into_boxed_str());
            add(&mut b, name, move |name, u| {
                let config: Value = serde_json::from_str(config).map_err(|e| e.to_string())?;
                packbits_case(name, dtype, config, code_bits, u, dir)
            });
        }
    }

    // --- cast_value -------------------------------------------------------------------
    let u8_cases: [(&str, &str, Option<&str>); 4] = [
        (
            "cast_value/f64->u8/nearest-even/clamp",
            "nearest-even",
            Some("clamp"),
        ),
        (
            "cast_value/f64->u8/nearest-even/checked",
            "nearest-even",
            None,
        ),
        (
            "cast_value/f64->u8/nearest-away/clamp",
            "nearest-away",
            Some("clamp"),
        ),
        (
            "cast_value/f64->u8/nearest-even/wrap",
            "nearest-even",
            Some("wrap"),
        ),
    ];
    for (name, rounding, oor) in u8_cases {
        add(&mut b, name, move |name, u| {
            let src = data::scaled(u, 0.0, 255.0);
            cast_case::<f64, u8>(name, src, cast_config("uint8", rounding, oor), false)
        });
    }
    for (name, rounding, oor) in [
        (
            "cast_value/f64->u8/nearest-away/clamp+scalar_map",
            "nearest-away",
            "clamp",
        ),
        (
            "cast_value/f64->u8/towards-zero/clamp+scalar_map",
            "towards-zero",
            "clamp",
        ),
        (
            "cast_value/f64->u8/towards-zero/clamp",
            "towards-zero",
            "clamp",
        ),
        (
            "cast_value/f64->u8/towards-zero/wrap+scalar_map",
            "towards-zero",
            "wrap",
        ),
    ] {
        add(&mut b, name, move |name, u| {
            let src = data::with_nans(data::scaled(u, 0.0, 255.0), 1000, 7);
            let mut config = cast_config("uint8", rounding, Some(oor));
            if name.ends_with("scalar_map") {
                config["scalar_map"] = json!({"encode": [["NaN", 0]], "decode": [[0, "NaN"]]});
                let mut c = cast_case::<f64, u8>(name, src, config, false)?;
                c.note = "scalar_map {NaN: 0}; 0.1% NaN";
                Ok(c)
            } else {
                let src = data::scaled(u, 0.0, 255.0);
                cast_case::<f64, u8>(name, src, config, false)
            }
        });
    }
    add(
        &mut b,
        "cast_value/f64->u8/nearest-even/clamp+scalar_map",
        |name, u| {
            let src = data::with_nans(data::scaled(u, 0.0, 255.0), 1000, 7);
            let mut config = cast_config("uint8", "nearest-even", Some("clamp"));
            config["scalar_map"] = json!({"encode": [["NaN", 0]], "decode": [[0, "NaN"]]});
            let mut c = cast_case::<f64, u8>(name, src, config, false)?;
            c.note = "scalar_map {NaN: 0}; 0.1% NaN";
            Ok(c)
        },
    );
    add(
        &mut b,
        "cast_value/f64->i32/nearest-even/checked",
        |name, u| {
            let src = data::scaled(u, -1.0e9, 1.0e9);
            cast_case::<f64, i32>(name, src, cast_config("int32", "nearest-even", None), false)
        },
    );
    add(
        &mut b,
        "cast_value/f64->f32/nearest-even/checked",
        |name, u| {
            let src = data::scaled(u, 200.0, 320.0);
            cast_case::<f64, f32>(
                name,
                src,
                cast_config("float32", "nearest-even", None),
                false,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f32->f16/nearest-even/checked",
        |name, u| {
            let src = data::scaled_f32(u, -1000.0, 1000.0);
            cast_case::<f32, f16>(
                name,
                src,
                cast_config("float16", "nearest-even", None),
                true,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f32->bf16/nearest-even/checked",
        |name, u| {
            let src = data::scaled_f32(u, -1000.0, 1000.0);
            cast_case::<f32, bf16>(
                name,
                src,
                cast_config("bfloat16", "nearest-even", None),
                true,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f64->f16/nearest-even/checked",
        |name, u| {
            let src = data::scaled(u, -1000.0, 1000.0);
            cast_case::<f64, f16>(
                name,
                src,
                cast_config("float16", "nearest-even", None),
                true,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f32->float8_e4m3/nearest-even/checked",
        |name, u| {
            let src = data::scaled_f32(u, -200.0, 200.0);
            cast_case::<f32, Float8E4M3>(
                name,
                src,
                cast_config("float8_e4m3", "nearest-even", None),
                true,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f32->float8_e5m2/nearest-even/checked",
        |name, u| {
            let src = data::scaled_f32(u, -50000.0, 50000.0);
            cast_case::<f32, Float8E5M2>(
                name,
                src,
                cast_config("float8_e5m2", "nearest-even", None),
                true,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f32->float4_e2m1fn/nearest-even/clamp",
        |name, u| {
            let src = data::scaled_f32(u, -8.0, 8.0);
            let mut c = cast_case::<f32, Float4E2M1Fn>(
                name,
                src,
                cast_config("float4_e2m1fn", "nearest-even", Some("clamp")),
                true,
            )?;
            c.note = "range [-8, 8]: the tails clamp to +-6";
            Ok(c)
        },
    );
    add(
        &mut b,
        "cast_value/float8_e4m3->f32/nearest-even/checked",
        |name, u| {
            let f = data::scaled_f32(u, -200.0, 200.0);
            let enc: CastValue<f32, Float8E4M3> =
                cast_codec(cast_config("float8_e4m3", "nearest-even", Some("clamp")))?;
            let mut src = vec![Float8E4M3::default(); f.len()];
            enc.encode_slice(&f, &mut src).map_err(|e| e.to_string())?;
            cast_case::<Float8E4M3, f32>(
                name,
                src,
                cast_config("float32", "nearest-even", None),
                false,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f16->f32/nearest-even/checked",
        |name, u| {
            let src: Vec<f16> = data::scaled_f32(u, -1000.0, 1000.0)
                .into_iter()
                .map(f16::from_f32)
                .collect();
            cast_case::<f16, f32>(
                name,
                src,
                cast_config("float32", "nearest-even", None),
                false,
            )
        },
    );
    add(&mut b, "cast_value/i16->u8/nearest-even/wrap", |name, u| {
        let src: Vec<i16> = data::scaled_int(u, -1000.0, 1000.0)
            .into_iter()
            .map(|x| x as i16)
            .collect();
        cast_case::<i16, u8>(
            name,
            src,
            cast_config("uint8", "nearest-even", Some("wrap")),
            false,
        )
    });
    add(
        &mut b,
        "cast_value/i32->f32/nearest-even/checked",
        |name, u| {
            let src: Vec<i32> = data::scaled_int(u, -2.0e9, 2.0e9)
                .into_iter()
                .map(|x| x as i32)
                .collect();
            cast_case::<i32, f32>(
                name,
                src,
                cast_config("float32", "nearest-even", None),
                false,
            )
        },
    );

    // --- scale_offset -----------------------------------------------------------------
    add(&mut b, "scale_offset/f64/encode", |name, u| {
        let so = ScaleOffset::<f64>::new(273.15, 10.0).map_err(|e| e.to_string())?;
        let src = data::scaled(u, 250.0, 310.0);
        Ok(map_case(name, src, move |s: &[f64], d: &mut [f64]| {
            so.encode_slice(s, d).expect("finite")
        }))
    });
    add(&mut b, "scale_offset/f64/decode", |name, u| {
        let so = ScaleOffset::<f64>::new(273.15, 10.0).map_err(|e| e.to_string())?;
        let x = data::scaled(u, 250.0, 310.0);
        let mut src = vec![0.0; x.len()];
        so.encode_slice(&x, &mut src).map_err(|e| e.to_string())?;
        Ok(map_case(name, src, move |s: &[f64], d: &mut [f64]| {
            so.decode_slice(s, d).expect("finite")
        }))
    });
    add(&mut b, "scale_offset/i16/encode", |name, u| {
        let so = ScaleOffset::<i16>::new(100, 2).map_err(|e| e.to_string())?;
        let src: Vec<i16> = data::scaled_int(u, -10000.0, 10000.0)
            .into_iter()
            .map(|x| x as i16)
            .collect();
        Ok(map_case(name, src, move |s: &[i16], d: &mut [i16]| {
            so.encode_slice(s, d).expect("in range")
        }))
    });
    add(&mut b, "scale_offset/i16/decode", |name, u| {
        let so = ScaleOffset::<i16>::new(100, 2).map_err(|e| e.to_string())?;
        let x: Vec<i16> = data::scaled_int(u, -10000.0, 10000.0)
            .into_iter()
            .map(|x| x as i16)
            .collect();
        let mut src = vec![0i16; x.len()];
        so.encode_slice(&x, &mut src).map_err(|e| e.to_string())?;
        Ok(map_case(name, src, move |s: &[i16], d: &mut [i16]| {
            so.decode_slice(s, d).expect("exact division")
        }))
    });

    // --- fused chain scale_offset -> cast_value f64 -> u8 -----------------------------
    add(
        &mut b,
        "chain/scale_offset+cast_value/f64->u8/encode/typed",
        |name, u| {
            let chain = typed_chain()?;
            let src = data::scaled(u, 250.0, 310.0);
            Ok(map_case(name, src, move |s: &[f64], d: &mut [u8]| {
                chain.encode_slice(s, d).expect("clamp")
            }))
        },
    );
    add(
        &mut b,
        "chain/scale_offset+cast_value/f64->u8/decode/typed",
        |name, u| {
            let chain = typed_chain()?;
            let x = data::scaled(u, 250.0, 310.0);
            let mut src = vec![0u8; x.len()];
            chain
                .encode_slice(&x, &mut src)
                .map_err(|e| e.to_string())?;
            Ok(map_case(name, src, move |s: &[u8], d: &mut [f64]| {
                chain.decode_slice(s, d).expect("u8 decodes")
            }))
        },
    );
    add(
        &mut b,
        "chain/scale_offset+cast_value/f64->u8/encode/dyn",
        move |name, u| {
            let chain = build_chain(chain_metadata())?;
            let src = data::scaled(u, 250.0, 310.0);
            Ok(dyn_case(
                name,
                chain,
                Dir::Encode,
                dyn_parts(src, threads, dyn_f64),
                1,
            ))
        },
    );
    add(
        &mut b,
        "chain/scale_offset+cast_value/f64->u8/decode/dyn",
        move |name, u| {
            let chain = build_chain(chain_metadata())?;
            let x = data::scaled(u, 250.0, 310.0);
            let typed = typed_chain()?;
            let mut src = vec![0u8; x.len()];
            typed
                .encode_slice(&x, &mut src)
                .map_err(|e| e.to_string())?;
            Ok(dyn_case(
                name,
                chain,
                Dir::Decode,
                dyn_parts(src, threads, dyn_u8),
                8,
            ))
        },
    );

    add(
        &mut b,
        "chain/scale_offset+cast_value/f64->u8/decode/dyn-into",
        move |name, u| {
            let chain = build_chain(chain_metadata())?;
            let x = data::scaled(u, 250.0, 310.0);
            let typed = typed_chain()?;
            let mut src = vec![0u8; x.len()];
            typed
                .encode_slice(&x, &mut src)
                .map_err(|e| e.to_string())?;
            dyn_into_case(name, chain, Dir::Decode, dyn_parts(src, threads, dyn_u8), 8)
        },
    );

    // --- bitround ---------------------------------------------------------------------
    add(&mut b, "bitround/f32/keepbits10/copy", |name, u| {
        let br = BitRound::<f32>::new(10).map_err(|e| e.to_string())?;
        let src = data::scaled_f32(u, 200.0, 320.0);
        Ok(map_case(name, src, move |s: &[f32], d: &mut [f32]| {
            br.encode_slice(s, d).expect("never fails")
        }))
    });
    add(&mut b, "bitround/f32/keepbits10/in-place", |name, u| {
        let br = BitRound::<f32>::new(10).map_err(|e| e.to_string())?;
        let src = data::scaled_f32(u, 200.0, 320.0);
        Ok(in_place_case(name, src, move |d: &mut [f32]| {
            br.encode_slice_in_place(d).unwrap_or_default()
        }))
    });
    add(&mut b, "bitround/f64/keepbits10/copy", |name, u| {
        let br = BitRound::<f64>::new(10).map_err(|e| e.to_string())?;
        let src = data::scaled(u, 200.0, 320.0);
        Ok(map_case(name, src, move |s: &[f64], d: &mut [f64]| {
            br.encode_slice(s, d).expect("never fails")
        }))
    });
    add(&mut b, "bitround/f64/keepbits10/in-place", |name, u| {
        let br = BitRound::<f64>::new(10).map_err(|e| e.to_string())?;
        let src = data::scaled(u, 200.0, 320.0);
        Ok(in_place_case(name, src, move |d: &mut [f64]| {
            br.encode_slice_in_place(d).unwrap_or_default()
        }))
    });
    add(&mut b, "bitround/bf16/keepbits5/copy", |name, u| {
        let br = BitRound::<bf16>::new(5).map_err(|e| e.to_string())?;
        let src: Vec<bf16> = data::scaled_f32(u, 200.0, 320.0)
            .into_iter()
            .map(bf16::from_f32)
            .collect();
        Ok(map_case(name, src, move |s: &[bf16], d: &mut [bf16]| {
            br.encode_slice(s, d).expect("never fails")
        }))
    });
    add(&mut b, "bitround/bf16/keepbits5/in-place", |name, u| {
        let br = BitRound::<bf16>::new(5).map_err(|e| e.to_string())?;
        let src: Vec<bf16> = data::scaled_f32(u, 200.0, 320.0)
            .into_iter()
            .map(bf16::from_f32)
            .collect();
        Ok(in_place_case(name, src, move |d: &mut [bf16]| {
            br.encode_slice_in_place(d).unwrap_or_default()
        }))
    });

    // --- numcodecs.fixedscaleoffset: typed, and through the run-time API (which
    // allocates, like numcodecs; it skips with the reason if the codec is unknown) -----
    add(
        &mut b,
        "numcodecs.fixedscaleoffset/f8->u1/encode/typed",
        |name, u| {
            let c = fso_typed()?;
            let src = data::scaled(u, 1000.0, 1025.0);
            Ok(map_case(name, src, move |s: &[f64], d: &mut [u8]| {
                c.encode_slice(s, d).expect("never fails")
            }))
        },
    );
    add(
        &mut b,
        "numcodecs.fixedscaleoffset/f8->u1/decode/typed",
        |name, u| {
            let c = fso_typed()?;
            let x = data::scaled(u, 1000.0, 1025.0);
            let mut src = vec![0u8; x.len()];
            c.encode_slice(&x, &mut src).map_err(|e| e.to_string())?;
            Ok(map_case(name, src, move |s: &[u8], d: &mut [f64]| {
                c.decode_slice(s, d).expect("never fails")
            }))
        },
    );
    add(
        &mut b,
        "numcodecs.fixedscaleoffset/f8->u1/encode/dyn",
        move |name, u| {
            let chain = build_chain(fso_metadata())?;
            let src = data::scaled(u, 1000.0, 1025.0);
            Ok(dyn_case(
                name,
                chain,
                Dir::Encode,
                dyn_parts(src, threads, dyn_f64),
                1,
            ))
        },
    );
    add(
        &mut b,
        "numcodecs.fixedscaleoffset/f8->u1/decode/dyn",
        move |name, u| {
            let chain = build_chain(fso_metadata())?;
            let x = data::scaled(u, 1000.0, 1025.0);
            let enc = chain.encode(&dyn_f64(x)).map_err(|e| e.to_string())?;
            let DynArray::UInt8(a) = enc else {
                return Err(format!("encoded to {}, expected uint8", enc.dtype()));
            };
            let src = a.into_raw_vec_and_offset().0;
            Ok(dyn_case(
                name,
                chain,
                Dir::Decode,
                dyn_parts(src, threads, dyn_u8),
                8,
            ))
        },
    );
    add(
        &mut b,
        "numcodecs.fixedscaleoffset/f8->u1/decode/dyn-into",
        move |name, u| {
            let chain = build_chain(fso_metadata())?;
            let x = data::scaled(u, 1000.0, 1025.0);
            let enc = chain.encode(&dyn_f64(x)).map_err(|e| e.to_string())?;
            let DynArray::UInt8(a) = enc else {
                return Err(format!("encoded to {}, expected uint8", enc.dtype()));
            };
            let src = a.into_raw_vec_and_offset().0;
            dyn_into_case(name, chain, Dir::Decode, dyn_parts(src, threads, dyn_u8), 8)
        },
    );

    // --- numcodecs.quantize and numcodecs.astype (typed): one kernel per type pair ------
    add(
        &mut b,
        "numcodecs.quantize/f8->f4/encode/typed",
        |name, u| {
            let c = Quantize::<f64, f32>::new(3).map_err(|e| e.to_string())?;
            let src = data::scaled(u, -20.0, 20.0);
            Ok(map_case(name, src, move |s: &[f64], d: &mut [f32]| {
                c.encode_slice(s, d).expect("never fails")
            }))
        },
    );
    add(
        &mut b,
        "numcodecs.quantize/f4->f4/encode/typed",
        |name, u| {
            let c = Quantize::<f32, f32>::new(3).map_err(|e| e.to_string())?;
            let src = data::scaled_f32(u, -20.0, 20.0);
            Ok(map_case(name, src, move |s: &[f32], d: &mut [f32]| {
                c.encode_slice(s, d).expect("never fails")
            }))
        },
    );
    add(&mut b, "numcodecs.astype/f8->f4/encode/typed", |name, u| {
        let c = AsType::<f64, f32>::new().map_err(|e| e.to_string())?;
        let src = data::scaled(u, -20.0, 20.0);
        Ok(map_case(name, src, move |s: &[f64], d: &mut [f32]| {
            c.encode_slice(s, d).expect("never fails")
        }))
    });
    add(&mut b, "numcodecs.astype/f8->i2/encode/typed", |name, u| {
        let c = AsType::<f64, i16>::new().map_err(|e| e.to_string())?;
        let src = data::scaled(u, -20000.0, 20000.0);
        Ok(map_case(name, src, move |s: &[f64], d: &mut [i16]| {
            c.encode_slice(s, d).expect("never fails")
        }))
    });
    add(&mut b, "numcodecs.astype/f8->i2/decode/typed", |name, u| {
        let c = AsType::<f64, i16>::new().map_err(|e| e.to_string())?;
        let x = data::scaled(u, -20000.0, 20000.0);
        let mut src = vec![0i16; x.len()];
        c.encode_slice(&x, &mut src).map_err(|e| e.to_string())?;
        Ok(map_case(name, src, move |s: &[i16], d: &mut [f64]| {
            c.decode_slice(s, d).expect("never fails")
        }))
    });
    // The decode of the most common lossy store: float64 data kept as float32 (a smooth
    // field, 0.1% NaN for missing values) read back as float64.
    add(
        &mut b,
        "cast_value/f32->f64/nearest-even/checked",
        |name, u| {
            let src: Vec<f32> = data::with_nans(data::scaled(u, 200.0, 320.0), 1000, 7)
                .into_iter()
                .map(|x| x as f32)
                .collect();
            let mut c = cast_case::<f32, f64>(
                name,
                src,
                cast_config("float64", "nearest-even", None),
                false,
            )?;
            c.note = "the decode of a float32 store; 0.1% NaN";
            Ok(c)
        },
    );

    // --- cast_value into and from 64-bit integers -------------------------------------
    // Nanosecond timestamps (about 1.7e18, beyond 2^53: integral `f64`s) and signed
    // values of every magnitude, into `int64`; `f32` into `uint64` towards zero.
    add(
        &mut b,
        "cast_value/f64->i64/nearest-even/clamp",
        |name, u| {
            let src = data::scaled(u, -4.0e18, 4.0e18);
            let config = cast_config("int64", "nearest-even", Some("clamp"));
            cast_case::<f64, i64>(name, src, config, false)
        },
    );
    add(
        &mut b,
        "cast_value/f64->i64/nearest-even/checked",
        |name, u| {
            let src = data::scaled(u, 1.6e18, 1.8e18);
            let config = cast_config("int64", "nearest-even", None);
            cast_case::<f64, i64>(name, src, config, false)
        },
    );
    add(
        &mut b,
        "cast_value/f32->u64/towards-zero/wrap",
        |name, u| {
            let src = data::scaled_f32(u, 0.0, 1.0e12);
            let config = cast_config("uint64", "towards-zero", Some("wrap"));
            cast_case::<f32, u64>(name, src, config, false)
        },
    );
    // Counts as `uint64` narrowed to `uint32` (checked) and `uint8` (clamped).
    for (name, target, oor) in [
        ("cast_value/u64->u32/nearest-even/checked", "uint32", None),
        (
            "cast_value/u64->u8/nearest-even/clamp",
            "uint8",
            Some("clamp"),
        ),
    ] {
        add(&mut b, name, move |name, u| {
            let src: Vec<u64> = data::scaled_int(u, 0.0, 4.0e9)
                .into_iter()
                .map(|x| x as u64)
                .collect();
            let config = cast_config(target, "nearest-even", oor);
            if target == "uint8" {
                cast_case::<u64, u8>(name, src, config, false)
            } else {
                cast_case::<u64, u32>(name, src, config, false)
            }
        });
    }

    add(
        &mut b,
        "cast_value/i32->f16/nearest-even/clamp",
        |name, u| {
            let src: Vec<i32> = data::scaled_int(u, -70000.0, 70000.0)
                .into_iter()
                .map(|x| x as i32)
                .collect();
            cast_case::<i32, f16>(
                name,
                src,
                cast_config("float16", "nearest-even", Some("clamp")),
                true,
            )
        },
    );
    add(
        &mut b,
        "cast_value/i64->bf16/nearest-even/checked",
        |name, u| {
            let src: Vec<i64> = data::scaled_int(u, -9.0e18, 9.0e18);
            cast_case::<i64, bf16>(
                name,
                src,
                cast_config("bfloat16", "nearest-even", None),
                true,
            )
        },
    );
    add(
        &mut b,
        "cast_value/f64->bf16/nearest-even/checked",
        |name, u| {
            let src = data::scaled(u, -1000.0, 1000.0);
            cast_case::<f64, bf16>(
                name,
                src,
                cast_config("bfloat16", "nearest-even", None),
                true,
            )
        },
    );

    add(
        &mut b,
        "cast_value/f16->i16/nearest-even/clamp",
        |name, u| {
            let src: Vec<f16> = data::scaled_f32(u, -1000.0, 1000.0)
                .into_iter()
                .map(f16::from_f32)
                .collect();
            cast_case::<f16, i16>(
                name,
                src,
                cast_config("int16", "nearest-even", Some("clamp")),
                false,
            )
        },
    );
    // The usual encode of half-precision data with missing values: NaN to a fill code.
    add(
        &mut b,
        "cast_value/f16->i16/nearest-even/clamp+scalar_map",
        |name, u| {
            let src: Vec<f16> = data::with_nans(data::scaled(u, -1000.0, 1000.0), 1000, 7)
                .into_iter()
                .map(f16::from_f64)
                .collect();
            let mut config = cast_config("int16", "nearest-even", Some("clamp"));
            config["scalar_map"] =
                json!({"encode": [["NaN", -32768]], "decode": [[-32768, "NaN"]]});
            let mut c = cast_case::<f16, i16>(name, src, config, false)?;
            c.note = "scalar_map {NaN: -32768}; 0.1% NaN";
            Ok(c)
        },
    );
    add(
        &mut b,
        "cast_value/bf16->i32/nearest-even/checked",
        |name, u| {
            let src: Vec<bf16> = data::scaled_f32(u, -1.0e6, 1.0e6)
                .into_iter()
                .map(bf16::from_f32)
                .collect();
            cast_case::<bf16, i32>(name, src, cast_config("int32", "nearest-even", None), false)
        },
    );
    b
}

// ---------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------

/// The memcpy baseline: two buffers as large as the largest case needs, touched once.
struct Baseline {
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl Baseline {
    fn new(bytes: usize) -> Self {
        let src = rehome((0..bytes).map(|i| (i * 31 + 7) as u8).collect());
        let mut dst = zeros::<u8>(bytes);
        dst.fill(1);
        Baseline { src, dst }
    }

    /// Copy the whole buffer for at least `time` before anything is measured: the first
    /// cases of a run started right after another process (the peers' run in
    /// `compare_peers.sh`) measured 20-30 % slower than the same cases later, while the
    /// machine settled (clock, the kernel's page work).
    fn warm_up(&mut self, time: Duration, threads: usize) {
        let start = Instant::now();
        while start.elapsed() < time {
            self.copy(self.src.len(), threads);
        }
    }

    fn copy(&mut self, bytes: usize, threads: usize) {
        let (src, dst) = (&self.src[..bytes], &mut self.dst[..bytes]);
        par_map(threads, src, dst, &|s: &[u8], d: &mut [u8]| {
            d.copy_from_slice(s)
        });
        black_box(&mut self.dst);
    }
}

fn median(v: &[Duration]) -> f64 {
    let mut v = v.to_vec();
    v.sort();
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m].as_secs_f64()
    } else {
        (v[m - 1].as_secs_f64() + v[m].as_secs_f64()) / 2.0
    }
}

fn time<R>(f: impl FnOnce() -> R) -> Duration {
    let t0 = Instant::now();
    let garbage = f();
    let dt = t0.elapsed();
    drop(garbage);
    dt
}

struct Measured {
    name: String,
    elements: usize,
    in_bytes: usize,
    out_bytes: usize,
    note: &'static str,
    median_s: f64,
    min_s: f64,
    baseline_s: f64,
    baseline_min_s: f64,
    /// Single-thread median when run with `--threads N > 1`.
    one_thread_s: Option<f64>,
    /// Scalar-path median, for the small-float casts.
    scalar_s: Option<f64>,
}

impl Measured {
    fn gbps(&self) -> f64 {
        self.in_bytes as f64 / self.median_s / 1e9
    }
    fn ratio(&self) -> f64 {
        self.baseline_s / self.median_s
    }
    /// Bytes moved (input read + output written) per second, over those of the memcpy
    /// baseline in the same run (which reads and writes its `max(in, out)` bytes): 1.0 is
    /// "moves bytes as fast as a copy does".
    fn roofline(&self) -> f64 {
        let moved = (self.in_bytes + self.out_bytes) as f64;
        let copied = 2.0 * self.in_bytes.max(self.out_bytes) as f64;
        self.ratio() * moved / copied
    }
    fn speedup(&self) -> Option<f64> {
        self.one_thread_s.map(|t| t / self.median_s)
    }
    /// Speed over the scalar path, both single-threaded.
    fn vs_scalar(&self) -> Option<f64> {
        self.scalar_s
            .map(|s| s / self.one_thread_s.unwrap_or(self.median_s))
    }
}

/// Marks the start of a case for `--count`: callgrind dumps its counters here
/// (`--dump-before=*next_case*`), so that each dump holds one case's runs.
#[inline(never)]
fn next_case(name: &str) {
    std::hint::black_box(name);
}

/// One run of a case for `--count`: callgrind collects inside this function only
/// (`--toggle-collect=*counted_run*`).
#[inline(never)]
fn counted_run(case: &mut Case, threads: usize) {
    drop(std::hint::black_box((case.run)(threads)));
}

fn measure(case: &mut Case, threads: usize, runs: usize, base: &mut Baseline) -> Measured {
    let bytes = case.in_bytes.max(case.out_bytes);
    // Warm-up: faults in the output pages, fills caches and branch predictors.
    drop((case.run)(threads));
    if threads > 1 {
        drop((case.run)(1));
    }
    base.copy(bytes, threads);
    // The per-element scalar path is a one-thread figure. With more threads it is not run:
    // interleaved with the timed runs, its hundreds of milliseconds of one-core work slowed
    // both the threaded runs and the one-thread ones after them by 10-30 %.
    if threads > 1 {
        case.scalar = None;
    }
    if let Some(s) = case.scalar.as_mut() {
        s();
    }
    let (mut tc, mut tb, mut t1, mut ts) = (vec![], vec![], vec![], vec![]);
    // Interleaved so that the case and its baseline see the same machine load.
    for _ in 0..runs {
        tc.push(time(|| (case.run)(threads)));
        tb.push(time(|| base.copy(bytes, threads)));
        if threads > 1 {
            t1.push(time(|| (case.run)(1)));
        }
        if let Some(s) = case.scalar.as_mut() {
            ts.push(time(s));
        }
    }
    Measured {
        name: case.name.clone(),
        elements: case.elements,
        in_bytes: case.in_bytes,
        out_bytes: case.out_bytes,
        note: case.note,
        min_s: tc.iter().min().map_or(0.0, Duration::as_secs_f64),
        baseline_min_s: tb.iter().min().map_or(0.0, Duration::as_secs_f64),
        median_s: median(&tc),
        baseline_s: median(&tb),
        one_thread_s: (threads > 1).then(|| median(&t1)),
        scalar_s: (!ts.is_empty()).then(|| median(&ts)),
    }
}

// ---------------------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------------------

fn print_table(results: &[Measured], threads: usize) {
    let w = results
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut head = format!(
        "{:<w$} {:>9} {:>8} {:>9} {:>9} {:>8} {:>8} {:>8}",
        "case", "median ms", "min ms", "GB/s in", "memcpy ms", "x memcpy", "roofline", "x scalar"
    );
    if threads > 1 {
        head += &format!(" {:>9} {:>8}", "1-thr ms", "speedup");
    }
    println!("{head}  note");
    println!("{}", "-".repeat(head.len() + 6));
    for m in results {
        let opt = |x: Option<f64>, prec: usize| match x {
            Some(v) => format!("{v:.prec$}"),
            None => "-".into(),
        };
        let mut line = format!(
            "{:<w$} {:>9.2} {:>8.2} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>8}",
            m.name,
            m.median_s * 1e3,
            m.min_s * 1e3,
            m.gbps(),
            m.baseline_s * 1e3,
            m.ratio(),
            m.roofline(),
            opt(m.vs_scalar(), 1),
        );
        if threads > 1 {
            line += &format!(
                " {:>9} {:>8}",
                opt(m.one_thread_s.map(|t| t * 1e3), 2),
                opt(m.speedup(), 2)
            );
        }
        println!("{line}  {}", m.note);
    }
}

fn print_targets(results: &[Measured], threads: usize) {
    println!("\ntargets (see docs/performance.md):");
    // The allocating run-time calls pay for their output's fresh pages: they are reported
    // but not held to the roofline (their `dyn-into` twins are).
    let held: Vec<_> = results
        .iter()
        .filter(|m| !m.note.contains("allocates"))
        .collect();
    let slow: Vec<_> = held.iter().filter(|m| m.roofline() < 0.8).collect();
    println!(
        "  every non-allocating case >= 0.8 of the roofline: {}/{} pass",
        held.len() - slow.len(),
        held.len()
    );
    for m in &slow {
        println!("    below: {:<55} {:.2}", m.name, m.roofline());
    }
    let small: Vec<_> = results
        .iter()
        .filter(|m| {
            m.name.contains("->float8_")
                || m.name.contains("->float4_")
                || m.name.contains("->float6_")
        })
        .collect();
    if !small.is_empty() {
        let pass = small
            .iter()
            .filter(|m| m.vs_scalar().is_some_and(|r| r >= 30.0))
            .count();
        println!(
            "  small-float encode >= 30x the per-element scalar path: {pass}/{} pass",
            small.len()
        );
        for m in &small {
            println!(
                "    {:<55} {:.1}x",
                m.name,
                m.vs_scalar().unwrap_or(f64::NAN)
            );
        }
    }
    if threads > 1 {
        let big: Vec<_> = results.iter().filter(|m| m.elements >= 4 << 20).collect();
        let pass = big
            .iter()
            .filter(|m| m.speedup().is_some_and(|s| s >= 1.8))
            .count();
        println!(
            "  {threads} threads >= 1.8x one thread (cases of >= 4M elements): {pass}/{} pass",
            big.len()
        );
    } else {
        println!("  thread scaling: run with --threads 2");
    }
    println!(
        "  fused f64->u8 chain encode >= 1.2x cast-value-rs' clamp cast: run benches/compare_peers.sh"
    );
}

fn write_json(path: &PathBuf, results: &[Measured], opts: &Opts) -> std::io::Result<()> {
    let cases: Vec<Value> = results
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "elements": m.elements,
                "in_bytes": m.in_bytes,
                "median_s": m.median_s,
                "gbps": m.gbps(),
                "ratio_to_memcpy": m.ratio(),
                "roofline": m.roofline(),
                "out_bytes": m.out_bytes,
                "memcpy_bytes": m.in_bytes.max(m.out_bytes),
                "memcpy_median_s": m.baseline_s,
                "min_s": m.min_s,
                "memcpy_min_s": m.baseline_min_s,
                "threads": opts.threads,
                "one_thread_median_s": m.one_thread_s,
                "speedup": m.speedup(),
                "scalar_median_s": m.scalar_s,
                "ratio_to_scalar": m.vs_scalar(),
                "note": m.note,
            })
        })
        .collect();
    let doc = json!({
        "runs": opts.runs,
        "quick": opts.quick,
        "threads": opts.threads,
        "cases": cases,
    });
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!("warning: debug build; run with --release for meaningful numbers");
    }
    #[cfg(feature = "rayon")]
    if opts.threads > 1
        && let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build_global()
    {
        eprintln!("rayon pool: {e}");
        return ExitCode::FAILURE;
    }
    let n = opts.elements;
    let started = Instant::now();
    println!(
        "zquant throughput: {n} elements, median of {} runs, {} thread(s){}{}",
        opts.runs,
        opts.threads,
        if cfg!(feature = "rayon") && opts.threads > 1 {
            ", zquant::parallel on rayon"
        } else if opts.threads > 1 {
            ", scoped threads"
        } else {
            ""
        },
        if opts.threads > 1 {
            " (the memcpy baseline is split the same way)"
        } else {
            ""
        }
    );
    let unit = data::unit_field(n, 0x5eed);
    // The largest case moves 8 bytes per element (f64 in or out).
    let mut base = Baseline::new(n * 8);
    if !opts.count {
        base.warm_up(Duration::from_millis(500), opts.threads);
    }
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for b in builders(opts.threads) {
        if let Some(f) = &opts.filter
            && !b.name.contains(f.as_str())
        {
            continue;
        }
        let mut case = match (b.build)(b.name, &unit) {
            Ok(c) => c,
            Err(reason) => {
                eprintln!("  {:<55} skipped: {reason}", b.name);
                skipped.push((b.name, reason));
                continue;
            }
        };
        if opts.count {
            next_case(b.name);
            for _ in 0..opts.runs {
                counted_run(&mut case, opts.threads);
            }
            println!("counted\t{}\t{}\t{}", b.name, case.elements, opts.runs);
            continue;
        }
        let m = measure(&mut case, opts.threads, opts.runs, &mut base);
        drop(case);
        eprintln!(
            "  {:<55} {:>8.2} ms  {:>6.2} GB/s  {:>5.2}x memcpy",
            m.name,
            m.median_s * 1e3,
            m.gbps(),
            m.ratio()
        );
        results.push(m);
    }
    if opts.count {
        return ExitCode::SUCCESS;
    }
    println!();
    print_table(&results, opts.threads);
    for (name, reason) in &skipped {
        println!("skipped {name}: {reason}");
    }
    print_targets(&results, opts.threads);
    println!("\ntotal time {:.1} s", started.elapsed().as_secs_f64());
    if let Some(path) = &opts.json {
        if let Err(e) = write_json(path, &results, &opts) {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}
