//! Data types declared with [`dtype`](macro@crate::dtype), made known to run-time code.
//!
//! Typed code knows a declared type by its Rust type; metadata knows it only by name. One call,
//! [`register_dtype`], records what run-time code needs of the type (its layout, size and
//! fill-value encoding, as values and function pointers) under its name, after which
//! [`DTypeId`]'s `FromStr`, [`crate::metadata::DataType`], `cast_value`'s `data_type`,
//! [`crate::DynChain`] and [`crate::DynArray`] accept it like a built-in type. A typed codec's
//! `to_metadata()` registers the types it names, so metadata zquant writes always reads back
//! in the same process; a process that only reads metadata registers its types first.
//!
//! The registry only grows, by one small record per distinct type: registering a type again
//! returns the record already there.

use std::any::TypeId;
use std::sync::RwLock;

use serde_json::Value;

use super::id::{Scalar, element_of, scalar};
use super::{DType, DTypeId, FillValueError, Kind, Word};

/// A data type declared by a user and registered with [`register_dtype`].
///
/// Two handles are equal when they name the same type; they order and hash by name.
#[derive(Clone, Copy)]
pub struct CustomDType(&'static Entry);

struct Entry {
    name: &'static str,
    rust_type: &'static str,
    type_id: TypeId,
    kind: Kind,
    size: usize,
    word_bits: u32,
    words: usize,
    from_json: fn(&Value) -> Result<Scalar, FillValueError>,
    to_json: fn(Scalar) -> Value,
}

fn entry_of<T: DType>() -> Entry {
    Entry {
        name: T::NAME,
        rust_type: std::any::type_name::<T>(),
        type_id: TypeId::of::<T>(),
        kind: T::KIND,
        size: T::SIZE,
        word_bits: <T::Word as Word>::BITS,
        words: T::WORDS,
        from_json: |v| T::fill_value_from_json(v).map(scalar),
        to_json: |x| element_of::<T>(x).fill_value_to_json(),
    }
}

impl CustomDType {
    /// The Zarr name the type was declared with.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The Rust type registered under the name.
    pub fn rust_type(self) -> &'static str {
        self.0.rust_type
    }

    /// Whether the registered Rust type is `T`.
    pub fn is<T: 'static>(self) -> bool {
        self.0.type_id == TypeId::of::<T>()
    }

    pub(crate) fn kind(self) -> Kind {
        self.0.kind
    }
    pub(crate) fn size(self) -> usize {
        self.0.size
    }
    pub(crate) fn word_bits(self) -> u32 {
        self.0.word_bits
    }
    pub(crate) fn words_per_element(self) -> usize {
        self.0.words
    }
    pub(crate) fn value_from_json(self, v: &Value) -> Result<Scalar, FillValueError> {
        (self.0.from_json)(v)
    }
    pub(crate) fn value_to_json(self, x: Scalar) -> Value {
        (self.0.to_json)(x)
    }
}

impl PartialEq for CustomDType {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}
impl Eq for CustomDType {}
impl PartialOrd for CustomDType {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CustomDType {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.name.cmp(other.0.name)
    }
}
impl std::hash::Hash for CustomDType {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state)
    }
}
impl std::fmt::Debug for CustomDType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CustomDType({:?} = {})", self.0.name, self.0.rust_type)
    }
}

/// A name that is already taken by another type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "data type name {name:?} is already taken by {taken_by}; give {rust_type} another \
     `name = \"…\"` in its #[zquant::dtype] attribute"
)]
pub struct RegisterError {
    /// The contested name.
    pub name: &'static str,
    /// The Rust type being registered.
    pub rust_type: &'static str,
    /// What holds the name: a built-in type or another registered Rust type.
    pub taken_by: String,
}

static REGISTRY: RwLock<Vec<CustomDType>> = RwLock::new(Vec::new());

fn registry() -> std::sync::RwLockReadGuard<'static, Vec<CustomDType>> {
    // A panic while the lock is held cannot leave the list half-written (a push is the
    // only write), so a poisoned lock is still sound to read.
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}

/// Make the declared type `T` known to run-time code under its name, `T::NAME`.
///
/// Returns its run-time identity: [`DTypeId::Custom`] for a declared type, or the built-in
/// identity when `T` is a built-in type. Registering a type again returns the same identity.
///
/// # Errors
/// [`RegisterError`] when the name belongs to a built-in type or to another registered
/// Rust type.
///
/// # Example
/// ```
/// #[zquant::dtype(name = "uint12", int(bits = 12, unsigned))]
/// pub struct UInt12(u16);
///
/// let id = zquant::register_dtype::<UInt12>()?;
/// assert_eq!(id.name(), "uint12");
/// assert_eq!("uint12".parse::<zquant::DTypeId>(), Ok(id));
///
/// // Metadata can now name it: a run-time chain from float32 to uint12.
/// let chain = zquant::DynChain::from_metadata(
///     &serde_json::json!("float32"),
///     &serde_json::json!(0.0),
///     &[serde_json::json!({"name": "cast_value",
///         "configuration": {"data_type": "uint12", "rounding": "nearest-even"}})],
/// )?;
/// let out = chain.encode(&zquant::DynArray::from_vec(vec![1.4f32, 4095.0]))?;
/// assert_eq!(out.dtype(), id);
/// assert_eq!(out.to_vec::<UInt12>(), Some(vec![UInt12(1), UInt12(4095)]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn register_dtype<T: DType>() -> Result<DTypeId, RegisterError> {
    let taken = |taken_by: String| RegisterError {
        name: T::NAME,
        rust_type: std::any::type_name::<T>(),
        taken_by,
    };
    if let Some(&b) = DTypeId::ALL.iter().find(|b| b.name() == T::NAME) {
        return if b.is_builtin_type::<T>() {
            Ok(b)
        } else {
            Err(taken(format!("the built-in type {}", T::NAME)))
        };
    }
    let find = |list: &[CustomDType]| list.iter().copied().find(|c| c.name() == T::NAME);
    let check = |c: CustomDType| {
        if c.is::<T>() {
            Ok(DTypeId::Custom(c))
        } else {
            Err(taken(c.rust_type().to_string()))
        }
    };
    if let Some(c) = find(&registry()) {
        return check(c);
    }
    let mut list = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = find(&list) {
        return check(c);
    }
    // One leaked record per distinct type, for the life of the process.
    let c = CustomDType(Box::leak(Box::new(entry_of::<T>())));
    list.push(c);
    Ok(DTypeId::Custom(c))
}

/// The registered type of this name.
pub(crate) fn lookup(name: &str) -> Option<CustomDType> {
    registry().iter().copied().find(|c| c.name() == name)
}

/// Every registered type, in registration order.
pub fn registered_dtypes() -> Vec<DTypeId> {
    registry().iter().copied().map(DTypeId::Custom).collect()
}
