//! Data types declared with [`dtype`](macro@crate::dtype), made known to run-time code.
//!
//! Typed code knows a declared type by its Rust type; metadata knows it only by name. The
//! registry records what run-time code needs of the type (its layout, size and fill-value
//! encoding, as values and function pointers) under its name, after which [`DTypeId`]'s
//! `FromStr`, [`crate::metadata::DataType`], `cast_value`'s `data_type`,
//! [`crate::DynChain`] and [`crate::DynArray`] accept it like a built-in type.
//!
//! **Declared types register themselves.** The attribute submits each type it declares to a
//! link-time list (`inventory`, as zarrs registers its codecs): the first time run-time code
//! looks for a name it does not know, every declared type linked into the process is
//! registered. So metadata naming a declared type reads in any process that links the type,
//! with no call. [`register_dtype`] stays for what that list cannot hold: types whose
//! registration should fail loudly on a name clash, and code that wants the identity.
//!
//! The registry only grows, by one small record per distinct type: registering a type again
//! returns the record already there.

use std::any::TypeId;
use std::sync::RwLock;

use serde_json::Value;

use super::id::{ElementWords, element_of, scalar};
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
    from_json: fn(&Value) -> Result<ElementWords, FillValueError>,
    to_json: fn(ElementWords) -> Value,
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
    pub(crate) fn value_from_json(self, v: &Value) -> Result<ElementWords, FillValueError> {
        (self.0.from_json)(v)
    }
    pub(crate) fn value_to_json(self, x: ElementWords) -> Value {
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
/// A type declared with [`dtype`](macro@crate::dtype) is registered without this call the
/// first time run-time code looks up a name it does not know (see [`registered_dtypes`]);
/// calling it is still how to learn the identity, or to hear of a name clash.
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
/// let chain = zquant::DynChain::from_array_to_array_codecs(
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

/// A type declared with [`dtype`](macro@crate::dtype), as the attribute submits it to the
/// link-time list: how to register it. Not a public API.
#[doc(hidden)]
pub struct Declared {
    name: &'static str,
    register: fn() -> Result<DTypeId, RegisterError>,
}

impl Declared {
    /// The entry of `T` (a `const`, as a link-time list needs).
    pub const fn of<T: DType>() -> Self {
        Declared {
            name: T::NAME,
            register: register_dtype::<T>,
        }
    }
}

inventory::collect!(Declared);

/// Register every declared type linked into the process, once. A name that two declared
/// types share is registered for neither: which one metadata means is for the program to
/// say, by calling [`register_dtype`] for it (the other's call then returns the
/// [`RegisterError`] naming both), and link order must not decide it. Neither is a name a
/// built-in type holds (its `register_dtype` fails). The built-in types are declared by the
/// attribute's built-in form, which writes no record: the type table lists them.
fn register_declared() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let all: Vec<&Declared> = inventory::iter::<Declared>.into_iter().collect();
        for d in &all {
            if all.iter().filter(|e| e.name == d.name).count() == 1 {
                // A clash with a built-in name is reported where it can be acted on: by
                // `register_dtype::<T>()`.
                let _ = (d.register)();
            }
        }
    });
}

/// The registered type of this name (every declared type linked in is registered first).
pub(crate) fn lookup(name: &str) -> Option<CustomDType> {
    let find = || registry().iter().copied().find(|c| c.name() == name);
    find().or_else(|| {
        register_declared();
        find()
    })
}

/// Every registered type, in registration order: every type declared with
/// [`dtype`](macro@crate::dtype) that the process links, and those registered with
/// [`register_dtype`].
///
/// ```
/// #[zquant::dtype(name = "uint11", int(bits = 11, unsigned))]
/// pub struct UInt11(u16);
///
/// // No registration call: the attribute made the type known.
/// let id: zquant::DTypeId = "uint11".parse()?;
/// assert!(zquant::dtype::registered_dtypes().contains(&id));
/// # Ok::<(), zquant::dtype::UnknownDType>(())
/// ```
pub fn registered_dtypes() -> Vec<DTypeId> {
    register_declared();
    registry().iter().copied().map(DTypeId::Custom).collect()
}
