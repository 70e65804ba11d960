//! Memory layouts: every input and output layout gives exactly the values of a C-order copy.
//!
//! For typed codecs and chains, inputs in C order, Fortran order, sliced, strided (step 2),
//! with negative strides, transposed, with permuted axes, broadcast, empty or with
//! zero-length axes are encoded (and decoded) and compared bit for bit with the same codec
//! run on a contiguous C-order copy. The output layout is the documented one (F-contiguous
//! input -> F-order output, else C order); `encode_into`/`decode_into` write outputs of any
//! layout; `encode_in_place`/`decode_in_place` equal `encode`/`decode`; and an element error
//! reports the C-order flat index of the first failing element whatever the layout, with the
//! same codec, rule and value as that element encoded on its own.

use ndarray::{
    Array, Array3, ArrayD, ArrayView3, ArrayViewMut3, Dimension, Ix3, IxDyn, ShapeBuilder, arr0, s,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use zquant::dtype::Float8E4M3;
use zquant::{
    ArrayCodec, ArrayCodecExt, BitRound, CastOptions, CastValue, OutOfRange, Real, Rounding,
    ScalarMap, ScaleOffset,
};
use zquant::{CodecError, ElementError};

// ---------------------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    C,
    F,
    /// A window of a larger array (offset start, cut end).
    Sliced,
    /// Every second element along two axes.
    Strided,
    /// `s![..;-1, .., ..;-1]`.
    Reversed,
    /// `.t()` of a C array (F-contiguous through a view).
    Transposed,
    /// `permuted_axes([2, 0, 1])` of a C array: neither C nor F contiguous.
    Permuted,
    /// A `(1, b, 1)` array broadcast to `(a, b, c)` (zero strides; read-only).
    Broadcast,
}

const ALL: [Layout; 8] = [
    Layout::C,
    Layout::F,
    Layout::Sliced,
    Layout::Strided,
    Layout::Reversed,
    Layout::Transposed,
    Layout::Permuted,
    Layout::Broadcast,
];

/// The layouts that can be written through.
const MUTABLE: [Layout; 7] = [
    Layout::C,
    Layout::F,
    Layout::Sliced,
    Layout::Strided,
    Layout::Reversed,
    Layout::Transposed,
    Layout::Permuted,
];

/// The owned array behind a view of `shape` in `layout`, filled from `pool` (cycled).
fn backing<T: Copy>(layout: Layout, [a, b, c]: [usize; 3], pool: &[T]) -> Array3<T> {
    let (bs, f) = match layout {
        Layout::C | Layout::Reversed => ([a, b, c], false),
        Layout::F => ([a, b, c], true),
        Layout::Sliced => ([a + 1, b + 2, c + 1], false),
        Layout::Strided => ([2 * a, b, 2 * c], false),
        Layout::Transposed => ([c, b, a], false),
        Layout::Permuted => ([b, c, a], false),
        Layout::Broadcast => ([1, b, 1], false),
    };
    let n = bs.iter().product::<usize>();
    let data: Vec<T> = (0..n).map(|i| pool[i % pool.len()]).collect();
    if f {
        Array3::from_shape_vec(bs.f(), data).unwrap()
    } else {
        Array3::from_shape_vec(bs, data).unwrap()
    }
}

fn view<T>(layout: Layout, x: &Array3<T>, [a, b, c]: [usize; 3]) -> ArrayView3<'_, T> {
    let v = match layout {
        Layout::C | Layout::F => x.view(),
        Layout::Sliced => x.slice(s![1.., 1..b + 1, ..c]),
        Layout::Strided => x.slice(s![..;2, .., ..;2]),
        Layout::Reversed => x.slice(s![..;-1, .., ..;-1]),
        Layout::Transposed => x.t(),
        Layout::Permuted => x.view().permuted_axes([2, 0, 1]),
        Layout::Broadcast => x.broadcast((a, b, c)).unwrap(),
    };
    assert_eq!(v.shape(), &[a, b, c], "{layout:?}");
    v
}

fn view_mut<T>(layout: Layout, x: &mut Array3<T>, [a, b, c]: [usize; 3]) -> ArrayViewMut3<'_, T> {
    let v = match layout {
        Layout::C | Layout::F => x.view_mut(),
        Layout::Sliced => x.slice_mut(s![1.., 1..b + 1, ..c]),
        Layout::Strided => x.slice_mut(s![..;2, .., ..;2]),
        Layout::Reversed => x.slice_mut(s![..;-1, .., ..;-1]),
        Layout::Transposed => x.view_mut().reversed_axes(),
        Layout::Permuted => x.view_mut().permuted_axes([2, 0, 1]),
        Layout::Broadcast => panic!("broadcast views are read-only"),
    };
    assert_eq!(v.shape(), &[a, b, c], "{layout:?}");
    v
}

fn element(e: CodecError) -> ElementError {
    match e {
        CodecError::Element(e) => e,
        other => panic!("expected an element error, got {other}"),
    }
}

/// A contiguous C-order copy (built element by element, whatever the source layout).
fn c_copy<T: Copy, D: Dimension>(a: &ndarray::ArrayView<'_, T, D>) -> Array<T, D> {
    let v = Array::from_shape_vec(a.raw_dim(), a.iter().copied().collect()).unwrap();
    assert!(v.is_standard_layout());
    v
}

fn same_bits<T: Real, D: Dimension>(
    a: &ndarray::ArrayView<'_, T, D>,
    b: &ndarray::ArrayView<'_, T, D>,
) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

fn f_contiguous<T, D: Dimension>(a: &ndarray::ArrayView<'_, T, D>) -> bool {
    a.t().is_standard_layout()
}

// ---------------------------------------------------------------------------------------
// One direction of a codec, as closures
// ---------------------------------------------------------------------------------------

type Whole<'c, A, B> = Box<dyn Fn(&ArrayView3<'_, A>) -> Result<Array3<B>, CodecError> + 'c>;
type IntoFn<'c, A, B> =
    Box<dyn Fn(&ArrayView3<'_, A>, &mut ArrayViewMut3<'_, B>) -> Result<(), CodecError> + 'c>;
type One<'c, A, B> = Box<dyn Fn(A) -> Result<B, ElementError> + 'c>;

struct Direction<'c, A, B> {
    whole: Whole<'c, A, B>,
    into: IntoFn<'c, A, B>,
    one: One<'c, A, B>,
}

fn encoding<C: ArrayCodec>(c: &C) -> Direction<'_, C::In, C::Out> {
    Direction {
        whole: Box::new(move |x| c.encode(x)),
        into: Box::new(move |x, o| c.encode_into(x, o)),
        one: Box::new(move |x| {
            let mut o = [C::Out::default()];
            c.encode_slice(&[x], &mut o).map(|()| o[0])
        }),
    }
}

fn decoding<C: ArrayCodec>(c: &C) -> Direction<'_, C::Out, C::In> {
    Direction {
        whole: Box::new(move |x| c.decode(x)),
        into: Box::new(move |x, o| c.decode_into(x, o)),
        one: Box::new(move |x| {
            let mut o = [C::In::default()];
            c.decode_slice(&[x], &mut o).map(|()| o[0])
        }),
    }
}

/// The error of the first element (C order) that fails on its own, with its flat index.
fn first_failure<A: Copy, B>(dir: &Direction<'_, A, B>, data: &[A]) -> Option<ElementError> {
    data.iter().enumerate().find_map(|(i, &x)| {
        (dir.one)(x).err().map(|mut e| {
            e.index = i;
            e
        })
    })
}

/// Check one direction on one input layout against the C-order copy.
fn check_layout<A: Real, B: Real>(
    dir: &Direction<'_, A, B>,
    layout: Layout,
    shape: [usize; 3],
    pool: &[A],
) -> Result<(), TestCaseError> {
    let owner = backing(layout, shape, pool);
    let input = view(layout, &owner, shape);
    let reference = c_copy(&input);
    let want = (dir.whole)(&reference.view());
    let got = (dir.whole)(&input);

    // The reference fails exactly at the first element that fails on its own.
    let first = first_failure(dir, reference.as_slice().unwrap());
    match &want {
        Ok(_) => prop_assert!(
            first.is_none(),
            "{first:?} fails alone but not in the array"
        ),
        Err(CodecError::Element(e)) => {
            // The array call adds where the element is, and the caller's value there.
            let core = |e: &ElementError| (e.codec, e.direction, e.rule, e.index, e.value.clone());
            prop_assert_eq!(Some(core(e)), first.as_ref().map(core));
            prop_assert_eq!(&e.position, &e.clone().in_shape(&shape).position);
        }
        Err(e) => prop_assert!(false, "unexpected error {e}"),
    }

    match (&want, &got) {
        (Ok(w), Ok(g)) => {
            prop_assert!(
                same_bits(&w.view(), &g.view()),
                "{layout:?}: {w:?} != {g:?}"
            );
            if f_contiguous(&input) {
                prop_assert!(f_contiguous(&g.view()), "{layout:?}: F input, output not F");
            } else {
                prop_assert!(g.is_standard_layout(), "{layout:?}: output not C order");
            }
        }
        (Err(we), Err(ge)) => prop_assert_eq!(ge, we, "{:?}", layout),
        _ => prop_assert!(false, "{layout:?}: {want:?} vs {got:?}"),
    }

    // Preallocated outputs of every writable layout.
    let garbage = [B::from_bits(0x5a)];
    for out_layout in MUTABLE {
        let mut out_owner = backing(out_layout, shape, &garbage);
        let mut out = view_mut(out_layout, &mut out_owner, shape);
        let r = (dir.into)(&input, &mut out);
        match (&want, r) {
            (Ok(w), Ok(())) => prop_assert!(
                same_bits(&w.view(), &out.view()),
                "{layout:?} into {out_layout:?}"
            ),
            (Err(we), Err(e)) => prop_assert_eq!(&e, we, "{:?} into {:?}", layout, out_layout),
            (w, r) => prop_assert!(false, "{layout:?} into {out_layout:?}: {w:?} vs {r:?}"),
        }
    }
    Ok(())
}

fn check_all_layouts<A: Real, B: Real>(
    dir: &Direction<'_, A, B>,
    shape: [usize; 3],
    pool: &[A],
) -> Result<(), TestCaseError> {
    for layout in ALL {
        check_layout(dir, layout, shape, pool)?;
    }
    Ok(())
}

/// `encode_in_place`/`decode_in_place` on every writable layout equal `encode`/`decode`.
fn check_in_place<C>(c: &C, shape: [usize; 3], pool: &[C::In]) -> Result<(), TestCaseError>
where
    C: ArrayCodec<Out = <C as ArrayCodec>::In>,
    C::In: Real,
{
    for layout in MUTABLE {
        for decode in [false, true] {
            let mut owner = backing(layout, shape, pool);
            let mut data = view_mut(layout, &mut owner, shape);
            let reference = c_copy(&data.view());
            let (want, got) = if decode {
                (c.decode(&reference), c.decode_in_place(&mut data))
            } else {
                (c.encode(&reference), c.encode_in_place(&mut data))
            };
            match (want, got) {
                (Ok(w), Ok(())) => prop_assert!(
                    same_bits(&w.view(), &data.view()),
                    "{layout:?} decode={decode}"
                ),
                (Err(we), Err(ge)) => prop_assert_eq!(ge, we, "{:?} decode={}", layout, decode),
                (w, g) => prop_assert!(false, "{layout:?} decode={decode}: {w:?} vs {g:?}"),
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------

fn shape3() -> impl Strategy<Value = [usize; 3]> {
    [0usize..=4, 0usize..=5, 0usize..=4]
}

/// `pool` with up to three elements replaced by `bad` values.
fn poisoned<T: Copy + std::fmt::Debug>(
    good: impl Strategy<Value = T>,
    bad: impl Strategy<Value = T>,
) -> impl Strategy<Value = Vec<T>> {
    (
        prop::collection::vec(good, 1..=64),
        prop::collection::vec((any::<usize>(), bad), 0..=3),
    )
        .prop_map(|(mut pool, poison)| {
            let n = pool.len();
            for (i, v) in poison {
                pool[i % n] = v;
            }
            pool
        })
}

fn rounding() -> impl Strategy<Value = Rounding> {
    prop::sample::select(Rounding::ALL.to_vec())
}

fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        (-300.0f32..300.0),
        prop::sample::select(vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]),
    ]
}

fn so_f64_u8(
    offset: f64,
    scale: f64,
    clamp: bool,
    mode: Rounding,
) -> impl ArrayCodec<In = f64, Out = u8> {
    let oor = if clamp {
        OutOfRange::Clamp
    } else {
        OutOfRange::Error
    };
    ScaleOffset::<f64>::new(offset, scale)
        .unwrap()
        .then(CastValue::<f64, u8>::new(CastOptions::new(mode, oor), ScalarMap::default()).unwrap())
}

/// A 3-stage chain in which every stage can fail.
fn three_stage(o1: i16, s1: i16, s3: i8) -> impl ArrayCodec<In = i16, Out = i8> {
    ScaleOffset::<i16>::new(o1, s1)
        .unwrap()
        .then(CastValue::<i16, i8>::new(CastOptions::default(), ScalarMap::default()).unwrap())
        .then(ScaleOffset::<i8>::new(0, s3).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn scale_offset_then_cast_to_u8(
        shape in shape3(),
        pool in poisoned(-60.0f64..320.0, prop::sample::select(vec![f64::NAN, f64::INFINITY, -1e300, 1e300])),
        codes in prop::collection::vec(any::<u8>(), 1..=64),
        offset in -10.0f64..10.0,
        scale in prop::sample::select(vec![0.1, 0.5, 1.0, 2.0, -1.0, 0.75]),
        clamp in any::<bool>(),
        mode in rounding(),
    ) {
        let c = so_f64_u8(offset, scale, clamp, mode);
        check_all_layouts(&encoding(&c), shape, &pool)?;
        check_all_layouts(&decoding(&c), shape, &codes)?;
    }

    #[test]
    fn bitround_f32(
        shape in shape3(),
        pool in prop::collection::vec(any_f32(), 1..=64),
        keepbits in 1u64..=23,
    ) {
        let c = BitRound::<f32>::new(keepbits).unwrap();
        check_all_layouts(&encoding(&c), shape, &pool)?;
        check_all_layouts(&decoding(&c), shape, &pool)?;
        check_in_place(&c, shape, &pool)?;
    }

    #[test]
    fn cast_f32_to_float8_e4m3(
        shape in shape3(),
        pool in prop::collection::vec(any_f32(), 1..=64),
        codes in prop::collection::vec(any::<u8>().prop_map(Float8E4M3), 1..=64),
        clamp in any::<bool>(),
        mode in rounding(),
    ) {
        let oor = if clamp { OutOfRange::Clamp } else { OutOfRange::Error };
        let c = CastValue::<f32, Float8E4M3>::new(CastOptions::new(mode, oor), ScalarMap::default()).unwrap();
        check_all_layouts(&encoding(&c), shape, &pool)?;
        check_all_layouts(&decoding(&c), shape, &codes)?;
    }

    #[test]
    fn three_stage_chain_reports_first_failing_element(
        shape in shape3(),
        pool in poisoned(-200i16..200, any::<i16>()),
        codes in poisoned(-20i8..20, any::<i8>()),
        o1 in -100i16..100,
        s1 in prop::sample::select(vec![1i16, 2, -1, 3, 100]),
        s3 in prop::sample::select(vec![1i8, 2, -1, 3]),
    ) {
        let c = three_stage(o1, s1, s3);
        check_all_layouts(&encoding(&c), shape, &pool)?;
        check_all_layouts(&decoding(&c), shape, &codes)?;
    }

    #[test]
    fn in_place_equals_encode(
        shape in shape3(),
        ints in poisoned(-1000i16..1000, any::<i16>()),
        floats in prop::collection::vec(any_f32(), 1..=64),
        offset in -500i16..500,
        scale in prop::sample::select(vec![1i16, 2, -3, 64]),
        keepbits in 1u64..=23,
        fscale in -4.0f32..4.0,
    ) {
        check_in_place(&ScaleOffset::<i16>::new(offset, scale).unwrap(), shape, &ints)?;
        let fscale = if fscale == 0.0 { 1.0 } else { fscale };
        let chain = ScaleOffset::<f32>::new(1.5, fscale)
            .unwrap()
            .then(BitRound::<f32>::new(keepbits).unwrap());
        check_in_place(&chain, shape, &floats)?;
    }
}

// ---------------------------------------------------------------------------------------
// Deterministic cases
// ---------------------------------------------------------------------------------------

/// Arrays larger than a fused block (4096 elements), with failures on either side of a
/// block boundary: the first failure in C order is reported in every layout.
#[test]
fn large_arrays_across_blocks() {
    let shape = [3, 50, 41];
    let n: usize = shape.iter().product();
    let mut pool: Vec<i16> = (0..n).map(|i| (i % 200) as i16 - 100).collect();
    let c = three_stage(0, 1, 1);
    let enc = encoding(&c);
    check_all_layouts(&enc, shape, &pool).unwrap();
    // i8 range failures (cast_value) after the block boundary in memory order of the
    // backing, and one before it.
    for (i, v) in [(4100, 300), (5000, 1000), (4095, -129), (200, 128)] {
        pool[i] = v;
        check_all_layouts(&enc, shape, &pool).unwrap();
    }
    let c = BitRound::<f32>::new(5).unwrap();
    let floats: Vec<f32> = (0..n).map(|i| (i as f32).sin() * 1e3).collect();
    check_all_layouts(&encoding(&c), shape, &floats).unwrap();
    check_in_place(&c, shape, &floats).unwrap();
    let so = ScaleOffset::<i16>::new(0, 8).unwrap();
    let mut ints: Vec<i16> = (0..n).map(|i| (i % 2000) as i16 - 1000).collect();
    check_in_place(&so, shape, &ints).unwrap();
    for i in [4100, 6000, 4095, 10] {
        ints[i] = 5000;
        check_in_place(&so, shape, &ints).unwrap();
    }
}

/// An F-order array whose first failure in memory order is not the first in C order.
#[test]
fn fortran_order_error_index_is_c_order() {
    // C order: [[1, 300], [400, 2]]; memory (F) order: 1, 400, 300, 2.
    let a = Array::from_shape_vec((2, 2).f(), vec![1.0f64, 400.0, 300.0, 2.0]).unwrap();
    assert!(!a.is_standard_layout());
    let c = CastValue::<f64, u8>::new(CastOptions::default(), ScalarMap::default()).unwrap();
    let e = c.encode(&a).unwrap_err();
    let e = element(e);
    assert_eq!((e.index, e.value.as_str()), (1, "300.0"));

    let so = ScaleOffset::<i8>::new(0, 2).unwrap();
    let mut b = Array::from_shape_vec((2, 2).f(), vec![1i8, 100, 90, 2]).unwrap();
    let e = so.encode_in_place(&mut b.view_mut()).unwrap_err();
    let e = element(e);
    assert_eq!((e.index, e.value.as_str()), (1, "90"));
}

/// A chain reports the first element that fails in any stage, not the first failure of
/// the first stage.
#[test]
fn chain_error_is_the_first_failing_element() {
    // Element 0: -1 * 2 = -2 fits int8 but not uint8 (stage 2); element 1: 100 * 2
    // overflows int8 (stage 1).
    let c = ScaleOffset::<i8>::new(0, 2)
        .unwrap()
        .then(CastValue::<i8, u8>::new(CastOptions::default(), ScalarMap::default()).unwrap());
    let e = c.encode(&ndarray::arr1(&[-1i8, 100])).unwrap_err();
    let e = element(e);
    assert_eq!(
        (e.codec, e.index, e.value.as_str()),
        ("cast_value", 0, "-2")
    );
    // Decoding runs the stages in reverse: element 0 fails in scale_offset (3 / 2 is
    // inexact), element 1 in cast_value (200 > 127).
    let e = c.decode(&ndarray::arr1(&[3u8, 200])).unwrap_err();
    let e = element(e);
    assert_eq!(
        (e.codec, e.index, e.value.as_str()),
        ("scale_offset", 0, "3")
    );
    let e = c.decode(&ndarray::arr1(&[4u8, 200, 3])).unwrap_err();
    let e = element(e);
    assert_eq!(
        (e.codec, e.index, e.value.as_str()),
        ("cast_value", 1, "200")
    );
}

#[test]
fn zero_dimensional_one_dimensional_and_dynamic() {
    let c = so_f64_u8(-10.0, 0.1, false, Rounding::NearestEven);
    // 0-d
    let x = arr0(2540.0f64);
    let y = c.encode(&x).unwrap();
    assert_eq!(y.shape(), &[] as &[usize]);
    assert_eq!(y[()], 255);
    assert_eq!(c.decode(&y).unwrap()[()], 2540.0);
    // 1-d, reversed and strided
    let v: Vec<f64> = (0..21).map(|i| i as f64 * 10.0).collect();
    let a = ndarray::Array1::from(v);
    for sl in [s![..;-1], s![..;2], s![1..;-3], s![5..5]] {
        let view = a.slice(sl);
        let got = c.encode(&view).unwrap();
        let want = c.encode(&c_copy(&view)).unwrap();
        assert_eq!(got, want);
        assert!(got.is_standard_layout());
    }
    // IxDyn: C, F, transposed, empty
    for shape in [vec![2, 3, 4], vec![0, 3], vec![3, 0, 2], vec![], vec![0]] {
        let n: usize = shape.iter().product();
        let data: Vec<f64> = (0..n).map(|i| i as f64 * 3.0 - 7.0).collect();
        let cx = ArrayD::from_shape_vec(IxDyn(&shape), data.clone()).unwrap();
        let fx = ArrayD::from_shape_vec(IxDyn(&shape).f(), data).unwrap();
        let want = c.encode(&cx).unwrap();
        assert!(want.is_standard_layout());
        for x in [fx.view(), cx.t(), fx.t()] {
            let got = c.encode(&x).unwrap();
            assert_eq!(got, c.encode(&c_copy(&x)).unwrap());
            assert_eq!(got.shape(), x.shape());
        }
        // Empty arrays encode to empty arrays of the same shape, into any layout.
        if n == 0 {
            assert_eq!(want.len(), 0);
            let mut out = ArrayD::<u8>::zeros(IxDyn(&shape).f());
            c.encode_into(&cx, &mut out.view_mut()).unwrap();
        }
    }
}

#[test]
fn into_rejects_shape_mismatch() {
    let c = BitRound::<f32>::new(3).unwrap();
    let x = Array3::<f32>::zeros((2, 3, 4));
    let mut out = Array3::<f32>::zeros((2, 4, 3));
    let e = c.encode_into(&x, &mut out.view_mut()).unwrap_err();
    assert!(matches!(e, CodecError::Array(_)), "{e}");
    let e = c.decode_into(&x, &mut out.view_mut()).unwrap_err();
    assert!(matches!(e, CodecError::Array(_)), "{e}");
}

/// The documented output layout, case by case.
#[test]
fn output_layout() {
    let c = BitRound::<f32>::new(3).unwrap();
    let data: Vec<f32> = (0..24).map(|i| i as f32 * 1.7).collect();
    let f = Array::from_shape_vec((2, 3, 4).f(), data.clone()).unwrap();
    let out = c.encode(&f).unwrap();
    assert!(!out.is_standard_layout() && out.t().is_standard_layout());
    let out = c.decode(&f).unwrap();
    assert!(!out.is_standard_layout() && out.t().is_standard_layout());
    let cx = Array::from_shape_vec((2, 3, 4), data).unwrap();
    assert!(c.encode(&cx).unwrap().is_standard_layout());
    assert!(c.encode(&cx.t()).unwrap().t().is_standard_layout());
    assert!(
        c.encode(&cx.slice(s![.., ..;2, ..]))
            .unwrap()
            .is_standard_layout()
    );
    assert!(
        c.encode(&f.slice(s![.., ..;2, ..]))
            .unwrap()
            .is_standard_layout()
    );
    let p = cx.view().permuted_axes([1, 0, 2]);
    assert!(c.encode(&p).unwrap().is_standard_layout());
    let _: Ix3 = c.encode(&p).unwrap().raw_dim();
}
