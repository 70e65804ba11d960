//! Codecs over `ndarray` arrays.
//!
//! [`ArrayCodecExt`] gives every codec (and chain) `encode`/`decode` on arrays of any memory
//! layout. The memory-order slice is used when the array is contiguous (C or Fortran order);
//! otherwise the elements are gathered in logical (C) order first. **Output layout:** an
//! F-contiguous input gives an F-order output, any other input a C-order (standard layout)
//! output. Values never depend on the layout. Element errors report the flat index in C
//! (row-major) order whatever the layout.

pub use crate::codec::chain::BLOCK;

use ndarray::{Array, ArrayBase, ArrayD, ArrayViewMut, Data, Dimension, IxDyn, ShapeBuilder};

use crate::codec::ArrayCodec;
use crate::codec::json_text;
use crate::dtype::DType;
use crate::error::{CodecError, ElementError, Rule};

/// The flat C-order index of the element at memory position `pos` of an F-contiguous array.
fn f_to_c_index(shape: &[usize], mut pos: usize) -> usize {
    let mut idx = vec![0; shape.len()];
    for (i, &n) in shape.iter().enumerate() {
        if n > 0 {
            idx[i] = pos % n;
            pos /= n;
        }
    }
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

fn is_f_only<S: Data, D: Dimension>(a: &ArrayBase<S, D>) -> bool {
    !a.is_standard_layout() && a.t().is_standard_layout()
}

/// Array-level encode and decode for every codec and chain: arrays of any dimension and
/// memory layout, into new arrays, into the caller's arrays, or in place.
///
/// ```
/// use ndarray::{Array2, ShapeBuilder};
/// use zquant::{ArrayCodecExt, BitRound};
///
/// let codec = BitRound::<f32>::new(4)?;
/// // A Fortran-order array: the output keeps its layout, values do not depend on it.
/// let a = Array2::from_shape_vec((2, 3).f(), vec![1.01f32, 2.02, 3.03, 4.04, 5.05, 6.06])?;
/// let encoded = codec.encode(&a)?;
/// assert_eq!(encoded[[1, 2]], 6.0);
/// assert!(encoded.t().is_standard_layout());
/// // Into a preallocated array, or in place.
/// let mut out = Array2::<f32>::zeros((2, 3));
/// codec.encode_into(&a, &mut out.view_mut())?;
/// assert_eq!(out, encoded);
/// let mut b = a.clone();
/// codec.encode_in_place(&mut b.view_mut())?;
/// assert_eq!(b, encoded);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ArrayCodecExt: ArrayCodec {
    /// Encode an array of any layout; see the module docs for the output layout.
    ///
    /// # Errors
    /// The first element (C-order flat index) that cannot be encoded.
    fn encode<S, D>(&self, input: &ArrayBase<S, D>) -> Result<Array<Self::Out, D>, CodecError>
    where
        S: Data<Elem = Self::In>,
        D: Dimension,
    {
        run(input, |s, d| self.encode_slice(s, d)).map_err(|e| locate(e, input))
    }

    /// Decode an array of any layout; see the module docs for the output layout.
    ///
    /// # Errors
    /// The first element (C-order flat index) that cannot be decoded.
    fn decode<S, D>(&self, input: &ArrayBase<S, D>) -> Result<Array<Self::In, D>, CodecError>
    where
        S: Data<Elem = Self::Out>,
        D: Dimension,
    {
        run(input, |s, d| self.decode_slice(s, d)).map_err(|e| locate(e, input))
    }

    /// Encode into a preallocated array of the same shape (any layout).
    ///
    /// # Errors
    /// A shape mismatch, or the first element that cannot be encoded (the output is then
    /// partly written).
    fn encode_into<S, D>(
        &self,
        input: &ArrayBase<S, D>,
        output: &mut ArrayViewMut<'_, Self::Out, D>,
    ) -> Result<(), CodecError>
    where
        S: Data<Elem = Self::In>,
        D: Dimension,
    {
        run_into(input, output, |s, d| self.encode_slice(s, d)).map_err(|e| locate(e, input))
    }

    /// Decode into a preallocated array of the same shape (any layout).
    ///
    /// # Errors
    /// A shape mismatch, or the first element that cannot be decoded (the output is then
    /// partly written).
    fn decode_into<S, D>(
        &self,
        input: &ArrayBase<S, D>,
        output: &mut ArrayViewMut<'_, Self::In, D>,
    ) -> Result<(), CodecError>
    where
        S: Data<Elem = Self::Out>,
        D: Dimension,
    {
        run_into(input, output, |s, d| self.decode_slice(s, d)).map_err(|e| locate(e, input))
    }

    /// Encode in place, for codecs that keep the element type (`scale_offset`, `bitround`,
    /// chains of them).
    ///
    /// # Errors
    /// The first element that cannot be encoded; elements are then partly encoded.
    fn encode_in_place<D: Dimension>(
        &self,
        data: &mut ArrayViewMut<'_, Self::In, D>,
    ) -> Result<(), CodecError>
    where
        Self: ArrayCodec<Out = <Self as ArrayCodec>::In>,
    {
        in_place(data, |s, d| self.encode_slice(s, d))
    }

    /// Decode in place, for codecs that keep the element type.
    ///
    /// # Errors
    /// The first element that cannot be decoded; elements are then partly decoded.
    fn decode_in_place<D: Dimension>(
        &self,
        data: &mut ArrayViewMut<'_, Self::In, D>,
    ) -> Result<(), CodecError>
    where
        Self: ArrayCodec<Out = <Self as ArrayCodec>::In>,
    {
        in_place(data, |s, d| self.decode_slice(s, d))
    }
}

impl<C: ArrayCodec + ?Sized> ArrayCodecExt for C {}

/// The elements of `a` as little-endian bytes in C order (the `bytes` codec's output with
/// `"endian": "little"`; sub-byte types take one byte each), whatever its memory layout.
///
/// ```
/// let a = ndarray::array![[1u16, 2], [3, 0x0102]];
/// assert_eq!(zquant::to_le_bytes(&a.t()), [1, 0, 3, 0, 2, 0, 2, 1]);
/// ```
pub fn to_le_bytes<T, S, D>(a: &ArrayBase<S, D>) -> Vec<u8>
where
    T: DType,
    S: Data<Elem = T>,
    D: Dimension,
{
    let mut out = vec![0u8; a.len() * T::SIZE];
    for (x, chunk) in a.iter().zip(out.chunks_exact_mut(T::SIZE.max(1))) {
        x.write_le(chunk);
    }
    out
}

/// An array of `shape` from little-endian element bytes in C order (see [`to_le_bytes`];
/// the bits above a sub-byte type's width are ignored, as its data type spec says).
///
/// ```
/// let a = zquant::from_le_bytes::<i16>(&[2], &[0xff, 0xff, 2, 0])?;
/// assert_eq!(a, ndarray::arr1(&[-1i16, 2]).into_dyn());
/// # Ok::<(), zquant::CodecError>(())
/// ```
///
/// # Errors
/// A byte count that is not the shape's element count times `T::SIZE`.
pub fn from_le_bytes<T: DType>(shape: &[usize], bytes: &[u8]) -> Result<ArrayD<T>, CodecError> {
    let n = element_count(shape)?;
    if n.checked_mul(T::SIZE) != Some(bytes.len()) {
        return Err(CodecError::Array(format!(
            "{} bytes do not hold {n} elements of {} ({} bytes each)",
            bytes.len(),
            T::NAME,
            T::SIZE
        )));
    }
    let v: Vec<T> = bytes.chunks_exact(T::SIZE.max(1)).map(T::read_le).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).map_err(|e| CodecError::Array(e.to_string()))
}

/// The number of elements of `shape`, or the error that it overflows `usize`.
pub(crate) fn element_count(shape: &[usize]) -> Result<usize, CodecError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| CodecError::Array(format!("shape {shape:?} overflows")))
}

/// Locate an element error in `input`: its N-d position, and the caller's element there.
fn locate<S, D, A>(e: CodecError, input: &ArrayBase<S, D>) -> CodecError
where
    S: Data<Elem = A>,
    D: Dimension,
    A: DType,
{
    e.located(input.shape(), |i| {
        input
            .iter()
            .nth(i)
            .map(|x| json_text(x.fill_value_to_json()))
    })
}

fn run<S, D, A, B>(
    input: &ArrayBase<S, D>,
    kernel: impl Fn(&[A], &mut [B]) -> Result<(), ElementError>,
) -> Result<Array<B, D>, CodecError>
where
    S: Data<Elem = A>,
    D: Dimension,
    A: DType,
    B: DType,
{
    let shape = input.raw_dim();
    let n = input.len();
    let mut out = vec![B::default(); n];
    if let (true, Some(src)) = (input.is_standard_layout(), input.as_slice_memory_order()) {
        kernel(src, &mut out)?;
        return Array::from_shape_vec(shape, out).map_err(|e| CodecError::Array(e.to_string()));
    }
    if let (true, Some(src)) = (is_f_only(input), input.as_slice_memory_order()) {
        // On a failure, the first failing element in memory order need not be the first in
        // C order: the gathered run below finds that one.
        if kernel(src, &mut out).is_ok() {
            return Array::from_shape_vec(shape.f(), out)
                .map_err(|e| CodecError::Array(e.to_string()));
        }
    }
    let gathered: Vec<A> = input.iter().copied().collect();
    kernel(&gathered, &mut out)?;
    Array::from_shape_vec(shape, out).map_err(|e| CodecError::Array(e.to_string()))
}

fn run_into<S, D, A, B>(
    input: &ArrayBase<S, D>,
    output: &mut ArrayViewMut<'_, B, D>,
    kernel: impl Fn(&[A], &mut [B]) -> Result<(), ElementError>,
) -> Result<(), CodecError>
where
    S: Data<Elem = A>,
    D: Dimension,
    A: DType,
    B: DType,
{
    if input.shape() != output.shape() {
        return Err(CodecError::Array(format!(
            "output shape {:?} does not match input shape {:?}",
            output.shape(),
            input.shape()
        )));
    }
    let same_c = input.is_standard_layout() && output.is_standard_layout();
    if same_c
        && let (Some(src), Some(dst)) = (
            input.as_slice_memory_order(),
            output.as_slice_memory_order_mut(),
        )
    {
        return kernel(src, dst).map_err(CodecError::from);
    }
    let result = run(input, kernel)?;
    output.assign(&result);
    Ok(())
}

fn in_place<T: DType, D: Dimension>(
    data: &mut ArrayViewMut<'_, T, D>,
    kernel: impl Fn(&[T], &mut [T]) -> Result<(), ElementError>,
) -> Result<(), CodecError> {
    let shape = data.shape().to_vec();
    in_place_at(data, kernel).map_err(|e| match e {
        CodecError::Element(el) if el.rule != Rule::LengthMismatch => el.in_shape(&shape).into(),
        other => other,
    })
}

fn in_place_at<T: DType, D: Dimension>(
    data: &mut ArrayViewMut<'_, T, D>,
    kernel: impl Fn(&[T], &mut [T]) -> Result<(), ElementError>,
) -> Result<(), CodecError> {
    let c_order = data.is_standard_layout();
    let f_order = is_f_only(data);
    let shape = data.shape().to_vec();
    if let (true, Some(slice)) = (c_order || f_order, data.as_slice_memory_order_mut()) {
        // Blocks are copied out and transformed back into place: the kernels take distinct
        // input and output slices.
        let mut buf = Vec::with_capacity(BLOCK.min(slice.len()));
        let mut start = 0;
        while start < slice.len() {
            let end = (start + BLOCK).min(slice.len());
            buf.clear();
            buf.extend_from_slice(&slice[start..end]);
            if let Err(mut e) = kernel(&buf, &mut slice[start..end]) {
                e.index += start;
                if f_order {
                    // Memory order is not C order: put this block back, and report the
                    // failing element that comes first in C order among those not encoded
                    // yet (every element before `start` succeeded).
                    slice[start..end].copy_from_slice(&buf);
                    e = first_in_c_order(&slice[start..], start, &shape, &kernel).unwrap_or(e);
                }
                return Err(e.into());
            }
            start = end;
        }
        return Ok(());
    }
    let gathered: Vec<T> = data.iter().copied().collect();
    let mut out = vec![T::default(); gathered.len()];
    kernel(&gathered, &mut out)?;
    for (d, v) in data.iter_mut().zip(out) {
        *d = v;
    }
    Ok(())
}

/// The failing element of `rest` (memory positions `offset..` of an F-contiguous array of
/// `shape`) whose C-order flat index is smallest, with that index.
fn first_in_c_order<T: DType>(
    rest: &[T],
    offset: usize,
    shape: &[usize],
    kernel: &impl Fn(&[T], &mut [T]) -> Result<(), ElementError>,
) -> Option<ElementError> {
    let mut best: Option<ElementError> = None;
    let mut one = [T::default()];
    for (i, x) in rest.iter().enumerate() {
        if let Err(mut e) = kernel(std::slice::from_ref(x), &mut one) {
            e.index = f_to_c_index(shape, offset + i);
            if best.as_ref().is_none_or(|b| e.index < b.index) {
                best = Some(e);
            }
        }
    }
    best
}
