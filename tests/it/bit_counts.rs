//! Bit counting (`BitCounts`, `BitInformation`) and the vectorized finite range against
//! references written from their definitions, at every instruction-set level the machine
//! has: shapes whose blocks and tiles end anywhere, C and F order, every axis, NaNs and
//! masked codes dense or sparse, views that start anywhere.

use ndarray::{ArrayBase, ArrayD, Axis, Data, IxDyn, ShapeBuilder};
use proptest::prelude::*;
use zquant::Real;
use zquant::choose::{BitCounts, BitInformation, FiniteRange, InformationOptions, signed_exponent};
use zquant::dtype::Format;
use zquant::isa::{Isa, with_max_isa};

/// Raw bits, often specials: the exponent all ones (Inf, NaN payloads), all zeros
/// (zeros, subnormals), or a few distinct codes (so that the masked value recurs).
fn code(kind: u8, x: u64, bits: u32, emask: u64) -> u64 {
    let x = x >> (64 - bits);
    let sign = x & (1 << (bits - 1));
    match kind % 6 {
        0 => x | emask,
        1 => x & !emask,
        2 => x & 7,
        3 => sign | emask,
        _ => x,
    }
}

fn array<T: Real>(shape: &[usize], f_order: bool, kinds: &[(u8, u64)]) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let emask = match T::FORMAT {
        zquant::dtype::Format::Float(l) => ((1u64 << l.exponent_bits) - 1) << l.mantissa_bits,
        _ => 0,
    };
    let v: Vec<T> = (0..n)
        .map(|i| {
            let (k, x) = kinds[i % kinds.len()];
            let x = x
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .wrapping_add(i as u64 * 0x2545);
            T::from_bits(code(k, x, T::SIZE as u32 * 8, emask))
        })
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape).set_f(f_order), v).expect("shape")
}

/// The counts by their definition, one pair and one bit at a time (BitInformation.jl's
/// `signed_exponent`, NaN and the masked code skipped): the independent reference that
/// every counter, at every instruction-set level, is checked against.
fn reference<T: Real, S: Data<Elem = T>>(
    a: &ArrayBase<S, IxDyn>,
    o: &InformationOptions,
) -> BitCounts {
    let axis = o.axis.unwrap_or(a.ndim() - 1);
    let format = T::FORMAT;
    let code = format.mask();
    let prepared = |x: T| -> Option<u64> {
        let c = x.to_bits() & code;
        let masked = o.masked_bits.is_some_and(|m| m & code == c);
        match format {
            Format::Float(l) if l.signed => {
                let nan = o.mask_nan && l.is_nan_bits(c);
                (!nan && !masked).then(|| signed_exponent(&l, c))
            }
            _ => (!masked).then_some(c),
        }
    };
    let ([mut first, mut second, mut both], mut pairs) = ([[0u64; 64]; 3], 0u64);
    for lane in a.lanes(Axis(axis)) {
        let v: Vec<Option<u64>> = lane.iter().map(|&x| prepared(x)).collect();
        for w in v.windows(2) {
            if let [Some(x), Some(y)] = *w {
                pairs += 1;
                let counts = first.iter_mut().zip(&mut second).zip(&mut both);
                for (p, ((a, b), z)) in counts.enumerate().take(format.bits() as usize) {
                    let (bx, by) = ((x >> p) & 1, (y >> p) & 1);
                    *a += bx;
                    *b += by;
                    *z += bx & by;
                }
            }
        }
    }
    BitCounts::from_parts(format, axis, pairs, [first, second, both])
        .expect("counts of data are consistent")
}

/// [`BitCounts::of`] at every instruction-set level this machine has, and the information
/// from the counts, against [`reference`]: along every axis, with and without NaN masked.
fn check<T: Real, S: Data<Elem = T>>(a: &ArrayBase<S, IxDyn>, masked: Option<u64>) {
    for axis in 0..a.ndim() {
        for mask_nan in [true, false] {
            let o = InformationOptions {
                axis: Some(axis),
                mask_nan,
                masked_bits: masked,
                ..Default::default()
            };
            let want = reference(a, &o);
            let wi = want.information(&o);
            for level in Isa::available() {
                let got = with_max_isa(level, || BitCounts::of(a, &o)).expect("counts");
                let what = format!("{} {:?} axis {axis} {level:?}", T::NAME, a.shape());
                assert_eq!(got, want, "{what} mask_nan {mask_nan} masked {masked:?}");
                let gi = got.information(&o);
                assert_eq!(gi, wi, "{what}");
                if let Ok(g) = &gi {
                    let of = with_max_isa(level, || BitInformation::of(a, &o));
                    assert_eq!(Ok(g.clone()), of, "{what}");
                }
            }
        }
    }
}

/// The range as a plain fold over values: NaN and ±Inf skipped, the first of equal
/// values kept (so `-0.0` when it comes first).
fn range_reference<T: Real>(a: &ArrayD<T>) -> Option<(u64, u64)> {
    let mut r: Option<(f64, f64)> = None;
    let flat: Vec<T> = a.as_slice_memory_order().expect("contiguous").to_vec();
    for x in flat {
        let v = x.to_exact().to_f64();
        if v.is_finite() {
            r = Some(match r {
                None => (v, v),
                Some((lo, hi)) => (if v < lo { v } else { lo }, if v > hi { v } else { hi }),
            });
        }
    }
    r.map(|(lo, hi)| (lo.to_bits(), hi.to_bits()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sliced_counts_equal_the_reference(
        d0 in 1usize..9, d1 in 1usize..140, d2 in 1usize..5,
        f_order: bool, three: bool,
        kinds in proptest::collection::vec((0u8..6, any::<u64>()), 1..40),
    ) {
        let shape: Vec<usize> = if three { vec![d0, d1, d2] } else { vec![d0 * d2, d1] };
        let a32 = array::<f32>(&shape, f_order, &kinds);
        let m32 = a32.iter().nth(2).map(|x| u64::from(x.to_bits()));
        check(&a32, None);
        check(&a32, m32);
        let a64 = array::<f64>(&shape, f_order, &kinds);
        check(&a64, a64.iter().nth(1).map(|x| x.to_bits()));
        check(&array::<half::f16>(&shape, f_order, &kinds), None);
        check(&array::<half::bf16>(&shape, f_order, &kinds), Some(0));
        // A strided view (every other row), gathered as the reference gathers it.
        let v = a32.slice_axis(Axis(0), ndarray::Slice::new(0, None, 2)).to_owned();
        check(&v, None);
    }

    #[test]
    fn finite_range_equals_the_plain_fold(
        n in 1usize..300, f_order: bool,
        kinds in proptest::collection::vec((0u8..6, any::<u64>()), 1..40),
    ) {
        let a = array::<f32>(&[n, 3], f_order, &kinds);
        let got = FiniteRange::of(&a).map(|r| (r.min.to_bits(), r.max.to_bits()));
        prop_assert_eq!(got, range_reference(&a));
        let b = array::<f64>(&[3, n], f_order, &kinds);
        let got = FiniteRange::of(&b).map(|r| (r.min.to_bits(), r.max.to_bits()));
        prop_assert_eq!(got, range_reference(&b));
        let h = array::<half::f16>(&[n], f_order, &kinds);
        let got = FiniteRange::of(&h).map(|r| (r.min.to_bits(), r.max.to_bits()));
        prop_assert_eq!(got, range_reference(&h));
    }
}

/// Raw bits without the exponent's top bit (finite, no NaN: tiles stay clean), except
/// at the `specials` positions, which get [`code`]'s kinds (Inf, NaN payloads, zeros,
/// subnormals, a recurring code).
fn sparse<T: Real>(
    shape: &[usize],
    f_order: bool,
    seed: u64,
    specials: &[(usize, u8)],
) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let bits = T::SIZE as u32 * 8;
    let emask = match T::FORMAT {
        zquant::dtype::Format::Float(l) => ((1u64 << l.exponent_bits) - 1) << l.mantissa_bits,
        _ => 0,
    };
    let top = emask & !(emask >> 1);
    let mut v: Vec<u64> = (0..n)
        .map(|i| {
            let x = seed
                .wrapping_add(i as u64)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (x >> (64 - bits)) & !top
        })
        .collect();
    for &(at, kind) in specials {
        if n > 0 {
            let x = (at as u64).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ seed;
            v[at % n] = code(kind, x, bits, emask);
        }
    }
    let v: Vec<T> = v.into_iter().map(T::from_bits).collect();
    ArrayD::from_shape_vec(IxDyn(shape).set_f(f_order), v).expect("shape")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The positional counter's shapes (blocks of >= 512 elements, tiles of 4096 pairs
    /// and of `4 · inner`, partial chunks, pairs across block ends), clean tiles and
    /// tiles with a few specials or a masked code, both layouts, every axis.
    #[test]
    fn positional_counts_equal_the_reference(
        d0 in 1usize..6, d1 in 500usize..2200, d2 in 1usize..4,
        f_order: bool, three: bool, seed: u64,
        specials in proptest::collection::vec((0usize..1 << 20, 0u8..6), 0..6),
    ) {
        let shape: Vec<usize> = if three { vec![d0, d1, d2] } else { vec![d0 * d2, d1] };
        let a32 = sparse::<f32>(&shape, f_order, seed, &specials);
        let m32 = a32.iter().nth(d1 / 2).map(|x| u64::from(x.to_bits()));
        check(&a32, None);
        check(&a32, m32);
        let a64 = sparse::<f64>(&shape, f_order, seed, &specials);
        check(&a64, a64.iter().nth(1).map(|x| x.to_bits()));
        check(&sparse::<half::f16>(&shape, f_order, seed, &specials), None);
        check(&sparse::<half::bf16>(&shape, f_order, seed, &specials), Some(0));
    }
}

/// Large enough for several tiles, an `inner` beyond the shared spans (the second
/// elements prepared apart), and NaNs here and there.
#[test]
fn sliced_counts_equal_the_reference_on_large_arrays() {
    let field = |rows: usize, cols: usize| {
        ArrayD::from_shape_fn(IxDyn(&[rows, cols]), |ix| {
            let (i, j) = (ix[0] as f32, ix[1] as f32);
            if (ix[0] * 7 + ix[1] * 3) % 1013 == 0 {
                f32::NAN
            } else {
                280.0 + 20.0 * (i * 0.05).sin() * (j * 0.013).cos() + (i * j) % 0.37
            }
        })
    };
    for a in [field(90, 1000), field(3, 40_000)] {
        check(&a, None);
        let f = a.t().as_standard_layout().reversed_axes().into_owned();
        check(&f, None);
    }
}

/// Views that start 1 to 16 elements into their buffer (no vector alignment) and hold
/// lengths no vector width divides, contiguous in C and F order: every kernel's loads
/// from any address, its partial vectors and chunks at both ends.
#[test]
fn counts_from_unaligned_starts() {
    fn views<T: Real>(seed: u64) {
        let (rows, cols) = (3, 1531);
        let n = rows * cols + 16;
        let base = sparse::<T>(&[n], false, seed, &[(5, 0), (777, 3), (2900, 1)]);
        for off in 0..=16 {
            let flat = base.slice_axis(Axis(0), ndarray::Slice::from(off..off + rows * cols));
            check(&flat.view().into_dyn(), None);
            let c = flat
                .into_shape_with_order(IxDyn(&[rows, cols]))
                .expect("contiguous");
            check(&c, None);
            let flat = base.slice_axis(Axis(0), ndarray::Slice::from(off..off + rows * cols));
            let f = flat
                .into_shape_with_order(IxDyn(&[cols, rows]))
                .expect("contiguous");
            check(&f.reversed_axes(), Some(T::from_bits(0).to_bits()));
        }
    }
    views::<f32>(1);
    views::<f64>(2);
    views::<half::f16>(3);
}
