//! Complex numbers: a real and an imaginary component of one float type.

/// A complex number stored as `re` then `im` (the Zarr byte layout: "real component followed
/// by imaginary component").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Complex<T> {
    /// Real component.
    pub re: T,
    /// Imaginary component.
    pub im: T,
}

impl<T> Complex<T> {
    /// `re + im·i`.
    pub const fn new(re: T, im: T) -> Self {
        Complex { re, im }
    }
}

/// The component layout of a complex dtype built from a float dtype `KIND`.
pub const fn component_layout(kind: super::Kind) -> super::FloatLayout {
    match kind {
        super::Kind::Float(l) => l,
        _ => panic!("complex(T) needs a float dtype T"),
    }
}

#[allow(unsafe_code)] // a storage trait's impl
// SAFETY: `#[repr(C)]` with two fields of the same type: laid out as `[T; 2]`, no padding.
unsafe impl<T: crate::number::storage::Plain> crate::number::storage::ComplexOf<T> for Complex<T> {}
