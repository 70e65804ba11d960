//! The cast engine's arch twins at every instruction-set level this machine has
//! (`Isa::available()`, each in turn by `with_max_isa`), against the exact reference path
//! (`cast_slice_reference`, which rounds through exact rationals and never reaches a twin):
//! on lengths around every vector width and block (odd ones, shorter than one vector,
//! several vectors and a tail), from unaligned starts of the source and the output.
//!
//! One table row per twin, reached through `cast_slice`:
//! - `arch::f16c` (AVX2 level): `f32`/`f64` -> float16, float16 -> `f32`;
//! - `arch::widen` (AVX2): one-byte floats -> `f32`;
//! - `arch::byte_float` (AVX2, AVX-512): `f32` -> one-byte floats;
//! - `arch::bf16` (AVX-512 BF16): `f32` -> bfloat16;
//! - `arch::small_int` (AVX-512): `f32`/`f64` -> 8- and 16-bit integers, directed modes;
//! - `arch::stream` (AVX2, outputs of 16 MiB or more): `int32 -> float32`, float16 -> `f32`,
//!   and the one-byte table lookup (fixedscaleoffset's decode), in [`streamed_outputs`].
//! - `arch::vectorized` (portable kernels built for AVX2): the fast casts between floats
//!   and integers, and the kernels of scale_offset, bitround and fixedscaleoffset (these
//!   against the portable level, see [`codec_at_every_level`]).
//!
//! The rest of the arch layer has its own per-level tests: packbits in `packbits.rs`
//! (`every_width_at_every_isa_level`), the bit-information twins in `bit_counts.rs`
//! (`counts_from_unaligned_starts`); docs/performance.md lists them all.

use zquant::__private::cast_slice_reference;
use zquant::dtype::*;
use zquant::isa::{Isa, with_max_isa};
use zquant::{CastOptions, OutOfRange, Real, Rounding, cast_slice};

use crate::common::XorShift as Rng;

/// Lengths around the vector widths (8 to 64 elements) and the kernels' blocks (up to 1024
/// elements), most of them odd.
const LENGTHS: [usize; 16] = [
    0, 1, 3, 7, 15, 16, 17, 31, 33, 63, 65, 127, 129, 1025, 2049, 4099,
];

/// (source start, output start) in elements: none, either or both unaligned.
const STARTS: [(usize, usize); 4] = [(0, 0), (1, 0), (0, 3), (5, 1)];

/// `cast_slice` of `src` into `D` at every level, every length and every start, against
/// the reference path: the same result (the same first failing index) and, when it
/// succeeds, the same bits.
fn every_level<S: Real, D: Real>(src: &[S]) {
    every_level_in::<S, D>(
        src,
        &[Rounding::NearestEven],
        &[OutOfRange::Error, OutOfRange::Clamp],
    );
}

/// [`every_level`] under each of `modes` and `rules`.
fn every_level_in<S: Real, D: Real>(src: &[S], modes: &[Rounding], rules: &[OutOfRange]) {
    let combinations = modes
        .iter()
        .flat_map(|&m| rules.iter().map(move |&oor| (m, oor)));
    for (mode, oor) in combinations {
        let opts = CastOptions::new(mode, oor);
        for len in LENGTHS {
            for (from, to) in STARTS {
                let Some(s) = src.get(from..from + len) else {
                    continue;
                };
                let mut want = vec![D::default(); len];
                let expected = cast_slice_reference(s, &mut want, opts);
                for level in Isa::available() {
                    let mut got = vec![D::default(); to + len];
                    let result = with_max_isa(level, || cast_slice(s, &mut got[to..], opts));
                    let what = format!(
                        "{} -> {} {level:?} {mode:?} {oor:?} len {len} starts {from}/{to}",
                        S::NAME,
                        D::NAME
                    );
                    assert_eq!(result, expected, "{what}");
                    if result.is_ok() {
                        let first = (0..len).find(|&i| got[to + i].to_bits() != want[i].to_bits());
                        assert_eq!(first, None, "{what}: first differing element");
                    }
                }
            }
        }
    }
}

/// Values of `S` near the codes of `D`: a random code of `D` (rarely a NaN or an infinity,
/// so that most blocks stay on the fast kernels) in `S`, its low bits perturbed so that
/// the cast rounds, ties included.
fn near_codes<S: Real, D: Real>(rng: &mut Rng, n: usize) -> Vec<S> {
    let width = D::BITS.min(64);
    let opts = CastOptions::new(Rounding::NearestEven, OutOfRange::Clamp);
    let mut codes = Vec::with_capacity(n);
    while codes.len() < n {
        let r = rng.next();
        let d = D::from_bits(if width == 64 {
            r
        } else {
            r & ((1 << width) - 1)
        });
        let mut x = [S::default()];
        if cast_slice_reference(&[d], &mut x, opts).is_err() {
            continue;
        }
        let bits = x[0].to_bits();
        let low = match (r >> 56) % 4 {
            0 => 0,
            1 => 1,
            2 => (r >> 32) & 0xff,
            _ => (r >> 20) & ((1 << (S::BITS / 2)) - 1),
        };
        let y = S::from_bits(bits ^ low);
        // A NaN or an infinity now and then only (one block in a few).
        let finite = matches!(y.to_exact().class, Class::Zero | Class::Finite);
        if !finite && !r.is_multiple_of(512) {
            continue;
        }
        codes.push(y);
    }
    codes
}

/// Every code of a one-byte type, then random codes.
fn byte_codes<S: Real>(rng: &mut Rng, n: usize) -> Vec<S> {
    let width = S::BITS;
    (0..n)
        .map(|i| {
            let c = if i < 256 { i as u64 } else { rng.next() };
            S::from_bits(c & ((1 << width) - 1))
        })
        .collect()
}

const N: usize = 4099 + 8;

/// `arch::f16c` at the AVX2 level and above (F16C's `vcvtps2ph`/`vcvtph2ps`).
#[test]
fn float16_casts_at_every_isa_level() {
    let mut rng = Rng(0xf16c_0001);
    every_level::<f32, half::f16>(&near_codes::<f32, half::f16>(&mut rng, N));
    every_level::<f64, half::f16>(&near_codes::<f64, half::f16>(&mut rng, N));
    let codes: Vec<half::f16> = (0..N)
        .map(|i| {
            half::f16::from_bits(if i < 4096 {
                (i * 16) as u16
            } else {
                rng.next() as u16
            })
        })
        .collect();
    every_level::<half::f16, f32>(&codes);
    every_level::<half::f16, f64>(&codes);
}

/// `arch::widen`: one-byte floats to `f32`, every code of each format.
#[test]
fn byte_floats_widened_at_every_isa_level() {
    let mut rng = Rng(0x51de_0002);
    every_level::<Float8E4M3, f32>(&byte_codes(&mut rng, N));
    every_level::<Float8E5M2, f32>(&byte_codes(&mut rng, N));
    every_level::<Float8E4M3Fnuz, f32>(&byte_codes(&mut rng, N));
    every_level::<Float8E5M2Fnuz, f32>(&byte_codes(&mut rng, N));
    every_level::<Float8E3M4, f32>(&byte_codes(&mut rng, N));
    every_level::<Float6E2M3Fn, f32>(&byte_codes(&mut rng, N));
    every_level::<Float6E3M2Fn, f32>(&byte_codes(&mut rng, N));
    every_level::<Float4E2M1Fn, f32>(&byte_codes(&mut rng, N));
}

/// `arch::byte_float` (AVX2 and AVX-512 twins) and `arch::bf16`: `f32` narrowed.
#[test]
fn f32_narrowed_at_every_isa_level() {
    let mut rng = Rng(0xb17e_0003);
    every_level::<f32, half::bf16>(&near_codes::<f32, half::bf16>(&mut rng, N));
    every_level::<f32, Float8E4M3>(&near_codes::<f32, Float8E4M3>(&mut rng, N));
    every_level::<f32, Float8E5M2>(&near_codes::<f32, Float8E5M2>(&mut rng, N));
    every_level::<f32, Float8E4M3Fnuz>(&near_codes::<f32, Float8E4M3Fnuz>(&mut rng, N));
    every_level::<f32, Float8E5M2Fnuz>(&near_codes::<f32, Float8E5M2Fnuz>(&mut rng, N));
    every_level::<f32, Float8E4M3B11Fnuz>(&near_codes::<f32, Float8E4M3B11Fnuz>(&mut rng, N));
    every_level::<f32, Float8E3M4>(&near_codes::<f32, Float8E3M4>(&mut rng, N));
    every_level::<f32, Float6E2M3Fn>(&near_codes::<f32, Float6E2M3Fn>(&mut rng, N));
    every_level::<f32, Float6E3M2Fn>(&near_codes::<f32, Float6E3M2Fn>(&mut rng, N));
    every_level::<f32, Float4E2M1Fn>(&near_codes::<f32, Float4E2M1Fn>(&mut rng, N));
}

/// `arch::stream`'s kernels, which only run for outputs of 16 MiB or more that hold more
/// than 24 MiB with their input: one such output per kernel, at every level, from unaligned starts.
#[test]
fn streamed_outputs() {
    let n = (24 << 20) / 4 + 37;
    let mut rng = Rng(0x57ea_0004);
    let opts = CastOptions::default();
    let check = |what: &str, got: &[f32], want: &[f32]| {
        let first = (0..want.len()).find(|&i| got[i].to_bits() != want[i].to_bits());
        assert_eq!(first, None, "{what}");
    };
    // int32 -> float32 (`vcvtdq2ps` and streamed stores).
    let ints: Vec<i32> = (0..n).map(|_| rng.next() as i32).collect();
    let mut want = vec![0f32; n];
    cast_slice_reference(&ints, &mut want, opts).expect("every int32 is a float32");
    // float16 -> f32, streamed by F16C.
    let halves: Vec<half::f16> = (0..n)
        .map(|_| half::f16::from_bits(rng.next() as u16 & 0x7bff))
        .collect();
    let mut want16 = vec![0f32; n];
    cast_slice_reference(&halves, &mut want16, opts).expect("finite float16 codes");
    let mut got = vec![0f32; n + 3];
    for level in Isa::available() {
        for (from, to) in [(0, 0), (1, 3), (2, 1)] {
            let len = n - from;
            let out = &mut got[to..to + len];
            with_max_isa(level, || cast_slice(&ints[from..], out, opts)).expect("casts");
            check(&format!("int32 {level:?} {from}/{to}"), out, &want[from..]);
            with_max_isa(level, || cast_slice(&halves[from..], out, opts)).expect("casts");
            check(
                &format!("float16 {level:?} {from}/{to}"),
                out,
                &want16[from..],
            );
        }
    }
    // The one-byte lookup: fixedscaleoffset's decode of `u8` codes into f32, each element
    // against its decode alone.
    use zquant::{ArrayCodec, FixedScaleOffset, PyNumber};
    let c = FixedScaleOffset::<f32, u8>::new(PyNumber::Float(-3.0), PyNumber::Float(7.5))
        .expect("valid");
    let codes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
    for level in Isa::available() {
        for (from, to) in [(0, 0), (3, 1)] {
            let len = n - from;
            let out = &mut got[to..to + len];
            with_max_isa(level, || c.decode_slice(&codes[from..], out)).expect("decodes");
            let first =
                (0..len).find(|&i| out[i].to_bits() != c.decode_one(codes[from + i]).to_bits());
            assert_eq!(first, None, "lookup {level:?} {from}/{to}");
        }
    }
}

/// The cast kernels that are portable code built for AVX2 by `arch::vectorized` (float ->
/// float, float -> int, int -> float, int -> int): the same rows, against the reference.
#[test]
fn vectorized_casts_at_every_isa_level() {
    let mut rng = Rng(0xca57_0005);
    every_level::<f64, f32>(&near_codes::<f64, f32>(&mut rng, N));
    every_level::<f32, f64>(&near_codes::<f32, f64>(&mut rng, N));
    every_level::<f64, i32>(&near_codes::<f64, i32>(&mut rng, N));
    every_level::<f32, i16>(&near_codes::<f32, i16>(&mut rng, N));
    every_level::<f32, u8>(&near_codes::<f32, u8>(&mut rng, N));
    every_level::<i32, f32>(&near_codes::<i32, f32>(&mut rng, N));
    every_level::<i64, f64>(&near_codes::<i64, f64>(&mut rng, N));
    every_level::<u16, f32>(&near_codes::<u16, f32>(&mut rng, N));
    every_level::<u32, f64>(&near_codes::<u32, f64>(&mut rng, N));
    every_level::<u64, f32>(&near_codes::<u64, f32>(&mut rng, N));
    every_level::<i8, f64>(&near_codes::<i8, f64>(&mut rng, N));
    every_level::<i16, u8>(&near_codes::<i16, u8>(&mut rng, N));
    every_level::<i64, i32>(&near_codes::<i64, i32>(&mut rng, N));
    every_level::<u8, i16>(&near_codes::<u8, i16>(&mut rng, N));
}

/// `arch::small_int` (AVX-512): `f32`/`f64` to 8- and 16-bit integers under every mode
/// (nearest-even reaches it with a `scalar_map` only, in the unit tests), clamped and wrapped; the sources near the codes of a wider type (out of the
/// target's range, wrapped values beyond 2^31, ties), with a NaN or an infinity now and
/// then (blocks the kernel hands back to the loops it stands in for).
#[test]
fn directed_casts_to_small_integers_at_every_isa_level() {
    let mut rng = Rng(0xca57_0006);
    let modes = [
        Rounding::NearestEven,
        Rounding::TowardsZero,
        Rounding::TowardsNegative,
        Rounding::TowardsPositive,
        Rounding::NearestAway,
    ];
    let rules = [OutOfRange::Clamp, OutOfRange::Wrap];
    let mut near = |wide: bool| {
        let mut v = near_codes::<f64, i16>(&mut rng, N);
        if wide {
            // Beyond 2^31 (one block in four), for the wrap rule.
            let far = near_codes::<f64, i64>(&mut rng, N);
            for (i, x) in v.iter_mut().enumerate() {
                if i % 4096 < 1024 && i % 3 == 0 {
                    *x = far[i] / 2f64.powi(i as i32 % 40);
                }
            }
        }
        v
    };
    let (narrow, wide) = (near(false), near(true));
    every_level_in::<f64, u8>(&narrow, &modes, &rules);
    every_level_in::<f64, i8>(&wide, &modes, &rules);
    every_level_in::<f64, u16>(&wide, &modes, &rules);
    every_level_in::<f64, i16>(&narrow, &modes, &rules);
    let narrow32: Vec<f32> = narrow.iter().map(|&x| x as f32).collect();
    let wide32: Vec<f32> = wide.iter().map(|&x| x as f32).collect();
    every_level_in::<f32, u8>(&wide32, &modes, &rules);
    every_level_in::<f32, i16>(&narrow32, &modes, &rules);
    every_level_in::<f32, u16>(&narrow32, &modes, &rules);
}

/// `c`'s encode and decode at every level against the portable level, every length and
/// start. The portable kernels are the reference here because they are themselves checked
/// against the codecs' definitions elsewhere (`codecs.rs`, `formula.rs`, `conformance.rs`,
/// `fixedscaleoffset_fixture.rs`); the twins are the same source built for AVX2.
fn codec_at_every_level<C>(c: &C, src: &[C::In])
where
    C: zquant::ArrayCodec,
    C::In: Real,
    C::Out: Real,
{
    let bits = |v: &[C::Out]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let back = |v: &[C::In]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for len in LENGTHS {
        for (from, to) in STARTS {
            let Some(s) = src.get(from..from + len) else {
                continue;
            };
            let run = |level| {
                with_max_isa(level, || {
                    let mut enc = vec![C::Out::default(); to + len];
                    let e = c.encode_slice(s, &mut enc[to..]);
                    let mut dec = vec![C::In::default(); to + len];
                    let d = e
                        .as_ref()
                        .ok()
                        .map(|_| c.decode_slice(&enc[to..], &mut dec[to..]));
                    (e, bits(&enc[to..]), d, back(&dec[to..]))
                })
            };
            let want = run(Isa::Portable);
            for level in Isa::available() {
                let got = run(level);
                let what = format!("{} {level:?} len {len} starts {from}/{to}", c.name());
                assert_eq!(got.0, want.0, "{what}: encode result");
                assert_eq!(got.1, want.1, "{what}: encoded");
                assert_eq!(got.2, want.2, "{what}: decode result");
                assert_eq!(got.3, want.3, "{what}: decoded");
            }
        }
    }
}

/// The codecs whose kernels run under `arch::vectorized`: scale_offset, bitround,
/// numcodecs.fixedscaleoffset, numcodecs.astype.
#[test]
fn vectorized_codecs_at_every_isa_level() {
    use zquant::{BitRound, FixedScaleOffset, PyNumber, ScaleOffset};
    let mut rng = Rng(0xc0de_0006);
    let smooth: Vec<f64> = (0..N)
        .map(|i| 280.0 + 20.0 * (i as f64 * 0.01).sin() + (rng.next() % 1000) as f64 * 1e-3)
        .collect();
    let f32s: Vec<f32> = smooth.iter().map(|&x| x as f32).collect();
    codec_at_every_level(&ScaleOffset::<f64>::new(250.0, 4.0).unwrap(), &smooth);
    codec_at_every_level(&ScaleOffset::<f32>::new(250.0, 0.25).unwrap(), &f32s);
    codec_at_every_level(&BitRound::<f32>::new(7).unwrap(), &f32s);
    codec_at_every_level(&BitRound::<f64>::new(20).unwrap(), &smooth);
    let fso = |o: f64, s: f64| (PyNumber::Float(o), PyNumber::Float(s));
    let (o, s) = fso(270.0, 100.0);
    codec_at_every_level(&FixedScaleOffset::<f64, i16>::new(o, s).unwrap(), &smooth);
    let (o, s) = fso(260.0, 5.0);
    codec_at_every_level(&FixedScaleOffset::<f32, u8>::new(o, s).unwrap(), &f32s);
    // numcodecs.astype from floats into 8-, 16- and 32-bit integers (AVX-512's
    // `vcvttpd2dq`/`vcvttps2dq` kernel): values across and beyond each target's range,
    // NaN and ±Inf among them, where the cast keeps the low bits of x86's indefinite value.
    let spread: Vec<f64> = smooth
        .iter()
        .enumerate()
        .map(|(i, &x)| match i % 97 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -3.5e9,
            _ => (x - 280.0) * [3.0, 2e3, 1e8][i % 3],
        })
        .collect();
    let spread32: Vec<f32> = spread.iter().map(|&x| x as f32).collect();
    use zquant::AsType;
    codec_at_every_level(&AsType::<f64, i16>::new().unwrap(), &spread);
    codec_at_every_level(&AsType::<f64, u8>::new().unwrap(), &spread);
    codec_at_every_level(&AsType::<f32, i32>::new().unwrap(), &spread32);
    codec_at_every_level(&AsType::<f32, i8>::new().unwrap(), &spread32);
}

/// `scale_offset` on 8- and 16-bit integers (`small_int_at_level`: 16-bit lanes with AVX2
/// and AVX-512, the latter's checks in mask registers) and `bitround` on the 16-bit floats
/// (AVX-512 too), at every level against the portable one, every length and start, copying
/// and in place. The integer slices hold elements that pass, with one element that fails
/// planted first, in the middle or last (`planted`), or none: the error must be the same
/// at every level (the planted element's index, rule and value), and in place the elements
/// before it done and the rest untouched, as at the portable level.
#[test]
fn small_integer_and_half_float_codecs_at_every_isa_level() {
    use zquant::{ArrayCodec, BitRound, ScaleOffset};
    fn ints<T: Real>(pairs: &[(i64, i64)], signed: bool, seed: u64)
    where
        ScaleOffset<T>: ArrayCodec<In = T, Out = T>,
    {
        use crate::codecs::{int_of, int_range, ref_int_decode, ref_int_encode};
        let bits = T::BITS;
        let code = |v: i128| T::from_bits(v as u64 & ((1u64 << bits) - 1));
        let mut rng = Rng(seed);
        let raw: Vec<T> = (0..16 * N).map(|_| code(i128::from(rng.next()))).collect();
        for &(o, s) in pairs {
            let (o, s) = (i128::from(o), i128::from(s));
            let c = ScaleOffset::<T>::new(code(o), code(s)).unwrap();
            // The exact reference, not the codec, says which elements pass.
            let one = |x: T, decode: bool| {
                let (x, range) = (int_of(x.to_bits(), bits, signed), int_range(bits, signed));
                let y = if decode {
                    ref_int_decode(x, o, s, range)
                } else {
                    ref_int_encode(x, o, s, range)
                };
                y.map(code)
            };
            // Elements that pass (encoded ones decode), and one that fails, each way.
            let good_enc: Vec<T> = (raw.iter().copied())
                .filter(|&x| one(x, false).is_some())
                .take(N)
                .collect();
            assert_eq!(good_enc.len(), N, "{} {o} {s}", T::NAME);
            let good_dec: Vec<T> = good_enc.iter().map(|&x| one(x, false).unwrap()).collect();
            for (decode, good) in [(false, &good_enc), (true, &good_dec)] {
                // (None for `0, 1`, where every element passes.)
                let bad = raw.iter().copied().find(|&x| one(x, decode).is_none());
                every_length_and_start(&c, good, bad, decode);
            }
        }
    }
    fn every_length_and_start<T: Real>(c: &ScaleOffset<T>, good: &[T], bad: Option<T>, decode: bool)
    where
        ScaleOffset<T>: ArrayCodec<In = T, Out = T>,
    {
        let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for len in LENGTHS {
            for (from, to) in STARTS {
                let Some(s) = good.get(from..from + len) else {
                    continue;
                };
                let plants = [None, Some(0), Some(len / 2), Some(len.saturating_sub(1))];
                let can_plant = |p: &Option<usize>| p.is_none() || (len > 0 && bad.is_some());
                for planted in plants.into_iter().filter(can_plant) {
                    let mut s = s.to_vec();
                    if let (Some(i), Some(bad)) = (planted, bad) {
                        s[i] = bad;
                    }
                    let run = |level| {
                        with_max_isa(level, || {
                            let mut out = vec![T::default(); to + len];
                            let mut data = s.clone();
                            let (r, r_in_place) = if decode {
                                let r = c.decode_slice(&s, &mut out[to..]);
                                (r, c.decode_slice_in_place(&mut data))
                            } else {
                                let r = c.encode_slice(&s, &mut out[to..]);
                                (r, c.encode_slice_in_place(&mut data))
                            };
                            // Only a success defines every output element.
                            let out = r.is_ok().then(|| bits(&out[to..]));
                            (r, out, r_in_place, bits(&data))
                        })
                    };
                    let want = run(Isa::Portable);
                    let what = format!(
                        "{} decode {decode} len {len} starts {from}/{to} planted {planted:?}",
                        T::NAME
                    );
                    assert_eq!(want.0.as_ref().err().map(|e| e.index), planted, "{what}");
                    assert_eq!(want.2.as_ref().err().map(|e| e.index), planted, "{what}");
                    for level in Isa::available() {
                        assert_eq!(run(level), want, "{what} at {level:?}");
                    }
                }
            }
        }
    }
    ints::<i16>(
        &[(100, 2), (-3, -7), (0, 1), (32767, -1), (5, 3)],
        true,
        0x5ca1e,
    );
    ints::<u16>(&[(100, 2), (7, 5), (0, 1), (40000, 1)], false, 0x5ca1f);
    ints::<i8>(&[(10, 2), (-3, -7), (127, -1), (5, 3)], true, 0x5ca20);
    ints::<u8>(&[(10, 2), (7, 5), (200, 1)], false, 0x5ca21);

    // bitround on the 16-bit floats: every code (NaNs, infinities, subnormals, the carry
    // into the exponent) in a scrambled order.
    let mut rng = Rng(0xb17_0016);
    let mut codes: Vec<u64> = (0..1u64 << 16).collect();
    for i in (1..codes.len()).rev() {
        codes.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let bf: Vec<half::bf16> = codes
        .iter()
        .map(|&b| half::bf16::from_bits(b as u16))
        .collect();
    let hf: Vec<half::f16> = codes
        .iter()
        .map(|&b| half::f16::from_bits(b as u16))
        .collect();
    for keepbits in [1, 2, 5, 6] {
        codec_at_every_level(&BitRound::<half::bf16>::new(keepbits).unwrap(), &bf);
        codec_at_every_level(&BitRound::<half::f16>::new(keepbits).unwrap(), &hf);
    }
}

/// `convert::fast::float_float` (the AVX-512 twins of `arch::float_float`, the portable
/// loops under `arch::vectorized`): `f32 -> f64`, `f32 -> f32` and `f64 -> f64` under every
/// mode and rule (all exact: the same bits whatever the options), on random codes of every
/// class and NaNs of both signs, quiet and signalling, with payloads, ±0, subnormals, ±Inf
/// and the range ends; then `cast_value`'s decode of a float64 array stored as float32
/// (`f32 -> f64`), with and without a `scalar_map`, in a chain after scale_offset too.
#[test]
fn float_to_float_at_every_isa_level() {
    const SPECIAL: [u32; 16] = [
        0x7fc0_0000,
        0xffc0_0000,
        0x7fc0_0001,
        0xffff_ffff,
        0x7f80_0001,
        0xff80_0001,
        0x0000_0000,
        0x8000_0000,
        0x0000_0001,
        0x807f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x0080_0000,
        0x3f80_0001,
    ];
    let mut rng = Rng(0xf10a_7f10);
    let a: Vec<f32> = (0..N)
        .map(|i| {
            let r = rng.next();
            f32::from_bits(if i % 5 == 2 {
                SPECIAL[(r % 16) as usize]
            } else {
                r as u32
            })
        })
        .collect();
    let b: Vec<f64> = (0..N)
        .map(|i| {
            let r = rng.next();
            if i % 5 == 2 {
                let s = SPECIAL[(r % 16) as usize];
                // NaNs with 64-bit payloads; the other specials widened.
                if s & 0x7fff_ffff > 0x7f80_0000 {
                    f64::from_bits(0x7ff0_0000_0000_0000 | (r & 0x800f_ffff_ffff_ffff) | 1)
                } else {
                    f64::from(f32::from_bits(s))
                }
            } else {
                f64::from_bits(r)
            }
        })
        .collect();
    let rules = [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap];
    every_level_in::<f32, f64>(&a, &Rounding::ALL, &rules);
    every_level_in::<f32, f32>(&a, &Rounding::ALL, &rules);
    every_level_in::<f64, f64>(&b, &Rounding::ALL, &rules);

    // The decode of a float32 store: every element as its reference cast, or the map's
    // value (keys match by value: the `0.0` key takes `-0.0` too, the NaN key every NaN).
    use zquant::{ArrayCodec, CastValue, ScalarMap, ScaleOffset};
    let canonical = |x: f32| {
        let mut d = [0f64];
        cast_slice_reference(&[x], &mut d, CastOptions::default()).expect("exact");
        d[0]
    };
    // A decode's scalar map, and what it maps a stored value to (`None`: not a key).
    type MapCase = (ScalarMap<f64, f32>, fn(f32) -> Option<f64>);
    let maps: [MapCase; 2] = [
        (ScalarMap::default(), |_| None),
        (
            ScalarMap::default().decoding([(f32::NAN, -9999.0), (0.0, 1.5)]),
            |x| {
                if x.is_nan() {
                    Some(-9999.0)
                } else if x == 0.0 {
                    Some(1.5)
                } else {
                    None
                }
            },
        ),
    ];
    for (map, mapped) in maps {
        for oor in rules {
            let opts = CastOptions::new(Rounding::NearestEven, oor);
            let Ok(c) = CastValue::<f64, f32>::new(opts, map.clone()) else {
                continue;
            };
            for len in LENGTHS {
                for (from, to) in STARTS {
                    let s = &a[from..from + len];
                    for level in Isa::available() {
                        let mut got = vec![0f64; to + len];
                        with_max_isa(level, || c.decode_slice(s, &mut got[to..])).expect("exact");
                        let first = (0..len).find(|&i| {
                            let want = mapped(s[i]).unwrap_or_else(|| canonical(s[i]));
                            got[to + i].to_bits() != want.to_bits()
                        });
                        assert_eq!(
                            first, None,
                            "decode {level:?} {oor:?} len {len} {from}/{to}"
                        );
                    }
                }
            }
        }
    }
    // In a chain: the cast's decode, then scale_offset's, fused block by block: the same
    // bits as the two codecs' decodes one after the other.
    let so = ScaleOffset::<f64>::new(0.5, 4.0).expect("valid");
    let cv =
        CastValue::<f64, f32>::new(CastOptions::default(), ScalarMap::default()).expect("valid");
    let mut widened = vec![0f64; N];
    cv.decode_slice(&a, &mut widened).expect("exact");
    let mut want = vec![0f64; N];
    so.decode_slice(&widened, &mut want).expect("decodes");
    let chain = so.then(cv);
    for level in Isa::available() {
        let mut got = vec![0f64; N];
        with_max_isa(level, || chain.decode_slice(&a, &mut got)).expect("decodes");
        let first = (0..N).find(|&i| got[i].to_bits() != want[i].to_bits());
        assert_eq!(first, None, "chain decode {level:?}");
    }
}

/// The 64-bit integer casts (`convert/fast/int_to_int.rs` for `uint64` sources,
/// `convert/fast/float_to_int.rs` for `f32`/`f64` into `int64`/`uint64`) under every rule,
/// and every rounding mode from floats: values of every magnitude up to the 64-bit ends,
/// `uint64` values above `i64::MAX`, the ends' `f64` neighbours (2^63 - 1024, 2^63,
/// 2^64 - 2048, 2^64, -2^63, -2^63 - 2048), ties below 2^53, -0, NaN and ±Inf, now and then
/// among values every target keeps (so that an error names an element deep in the slice).
#[test]
fn wide_integer_casts_at_every_isa_level() {
    let mut rng = Rng(0xca57_0064);
    let modes = [
        Rounding::NearestEven,
        Rounding::TowardsZero,
        Rounding::TowardsNegative,
        Rounding::TowardsPositive,
        Rounding::NearestAway,
    ];
    let rules = [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Wrap];
    let two63 = 9_223_372_036_854_775_808.0f64;
    let edges = [
        two63 - 1024.0,
        two63,
        2.0 * two63 - 2048.0,
        2.0 * two63,
        -two63,
        -two63 - 2048.0,
        4_503_599_627_370_495.5,
        -4_503_599_627_370_494.5,
        -0.5,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    // Floats kept by every 64-bit target under every rule (`0..2^63`, ties and fractions
    // below 2^53 among them), an edge every 700 elements or so in `rare`.
    let mut floats = |rare: bool| -> Vec<f64> {
        (0..N)
            .map(|i| {
                let r = rng.next();
                if rare && r.is_multiple_of(701) {
                    return edges[(r >> 20) as usize % edges.len()];
                }
                match i % 4 {
                    0 => (r >> (1 + r % 63)) as f64,
                    1 => ((r >> 12) % 4096) as f64 / 4.0,
                    2 => (r >> 11) as f64 + 0.5,
                    _ => (r >> 1) as f64,
                }
            })
            .collect()
    };
    let (clean, rare) = (floats(false), floats(true));
    for src in [&clean, &rare] {
        every_level_in::<f64, i64>(src, &modes, &rules);
        every_level_in::<f64, u64>(src, &modes, &rules);
        let narrow: Vec<f32> = src.iter().map(|&x| x as f32).collect();
        every_level_in::<f32, i64>(&narrow, &modes, &rules);
        every_level_in::<f32, u64>(&narrow, &modes, &rules);
    }
    // Negative values, kept by `int64` only.
    let negative: Vec<f64> = rare.iter().map(|&x| -x).collect();
    every_level_in::<f64, i64>(&negative, &modes, &rules);
    every_level_in::<f64, u64>(&negative, &modes, &rules);
    // `uint64` sources: mostly small values, one in 64 of any magnitude (above `i64::MAX`
    // one time in two), or a target's bound or its neighbour.
    let bounds: Vec<u64> = [8u32, 16, 32, 64]
        .iter()
        .flat_map(|&b| {
            let (imax, umax) = ((1u64 << (b - 1)) - 1, u64::MAX >> (64 - b));
            [imax, imax + 1, umax, umax.wrapping_add(1), umax - 1]
        })
        .collect();
    let ints: Vec<u64> = (0..N)
        .map(|_| {
            let r = rng.next();
            match r % 128 {
                0 => r >> (r >> 58),
                1 => bounds[(r >> 20) as usize % bounds.len()],
                _ => r % 100,
            }
        })
        .collect();
    let nearest = [Rounding::NearestEven];
    every_level_in::<u64, i8>(&ints, &nearest, &rules);
    every_level_in::<u64, u8>(&ints, &nearest, &rules);
    every_level_in::<u64, i16>(&ints, &nearest, &rules);
    every_level_in::<u64, u16>(&ints, &nearest, &rules);
    every_level_in::<u64, i32>(&ints, &nearest, &rules);
    every_level_in::<u64, u32>(&ints, &nearest, &rules);
    every_level_in::<u64, i64>(&ints, &nearest, &rules);
    every_level_in::<u64, u64>(&ints, &nearest, &rules);
}

/// `f32` into `uint64`/`int64` on outputs of 16 MiB and more (where a widening output
/// would stream: through L1 it was slower for this cast and is not, so this guards
/// whatever path such outputs take): every level gives what the reference path gives,
/// the words and the error, under directed and nearest modes and each rule, from an
/// aligned and an unaligned output; a failing element (NaN, out of range) in the first
/// blocks, a block's first and last word, and the tail is the error's element.
#[test]
#[cfg_attr(miri, ignore = "16 MiB outputs")]
fn f32_into_64_bit_integers_on_large_outputs() {
    const N: usize = (16 << 20) / 8 + 3 * 1024 + 77;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let clean: Vec<f32> = (0..N)
        .map(|i| match i % 4099 {
            0 => -0.0,
            1 => 0.5,
            2 => 9.2e18,
            3 => 1.8e19,
            _ => (rng.next() >> 40) as f32 * 0.37 + if i % 2 == 0 { 0.5 } else { 0.0 },
        })
        .collect();
    fn check<D: Real + std::fmt::Debug>(src: &[f32], at: usize, opts: CastOptions, ctx: &str) {
        let zero = D::from_bits(0);
        let mut want = vec![zero; src.len()];
        let expected = cast_slice_reference(src, &mut want, opts);
        let upto = expected.map_or_else(|e| e.index, |()| src.len());
        for level in Isa::available() {
            let mut got = vec![zero; src.len() + at];
            let r = with_max_isa(level, || cast_slice(src, &mut got[at..], opts));
            assert_eq!(r, expected, "{ctx} {level:?}");
            let g = &got[at..at + upto];
            if let Some(i) = (0..upto).find(|&i| g[i].to_bits() != want[i].to_bits()) {
                panic!("{ctx} {level:?} at {i}: {:?} != {:?}", g[i], want[i]);
            }
        }
    }
    let modes = [
        (Rounding::TowardsZero, OutOfRange::Wrap),
        (Rounding::TowardsZero, OutOfRange::Clamp),
        (Rounding::NearestEven, OutOfRange::Error),
        (Rounding::TowardsNegative, OutOfRange::Clamp),
    ];
    for (mode, oor) in modes {
        let opts = CastOptions::new(mode, oor);
        for at in [0, 3] {
            let ctx = format!("{mode:?} {oor:?} from {at}");
            check::<u64>(&clean, at, opts, &ctx);
            check::<i64>(&clean, at, opts, &ctx);
        }
    }
    let opts = CastOptions::new(Rounding::TowardsZero, OutOfRange::Error);
    for bad in [f32::NAN, -1.0, 3.0e19] {
        for p in [5, 1000, 5000, 8 * 1024, 9 * 1024 - 1, N - 40, N - 1] {
            let mut src = clean.clone();
            src[p] = bad;
            for at in [0, 1] {
                let ctx = format!("{bad} at {p} from {at}");
                check::<u64>(&src, at, opts, &ctx);
            }
        }
    }
}
