//! The codec registry: the one table of zquant's codecs.
//!
//! Each codec module declares its [`CodecEntry`] (`ENTRY`) beside its code: its Zarr v3
//! name and aliases, its Zarr v2 filter id, how its configuration is checked before the
//! data type is known, and how it binds to a data type. [`CODECS`] lists the entries;
//! everything that knows codecs by name is derived from it: [`CODEC_NAMES`] (public as
//! `zquant::CODEC_NAMES`; the names the errors list and the Python package reads), run-time
//! binding ([`bind`], behind
//! `dispatch::bind_codec`), the zarrs adapter's registration and `V2_IDS`, and the Zarr v2
//! filter mapping of `zarr/v2.rs`.
//!
//! Adding a codec: write its module with its `ENTRY`, then add one line to [`CODECS`].

use serde_json::Value;

use super::{DynStage, astype, bitround, cast_value, fixed_scale_offset, quantize, scale_offset};
use crate::error::MetadataError;
use crate::metadata::{CodecObject, DataType};

/// One codec, as the registry knows it.
pub(crate) struct CodecEntry {
    /// The Zarr v3 name (written back unless the codec was named by an alias).
    pub name: &'static str,
    /// Other Zarr v3 names read as this codec.
    pub aliases: &'static [&'static str],
    /// The Zarr v2 filter this codec reads, if any.
    pub v2: Option<V2Filter>,
    /// Check the configuration, for the name it was named by (its name or an alias), where
    /// it does not depend on the data type: what [`check_configuration`] (the Python
    /// classes' constructors) and zarrs' adapter check when a codec object is created.
    pub check: fn(&'static str, Option<&Value>) -> Result<(), MetadataError>,
    /// Bind the codec, named `name` (its name or an alias), to the data type it receives.
    pub bind: Bind,
}

/// How a codec binds: `(name it was named by, input data type, configuration)`.
pub(crate) type Bind =
    fn(&'static str, &DataType, Option<&Value>) -> Result<Box<dyn DynStage>, MetadataError>;

/// A Zarr v2 filter that a codec reads.
pub(crate) struct V2Filter {
    /// The v2 `id`.
    pub id: &'static str,
    /// The v3 name (the codec's name or one of its aliases) the filter is read as.
    pub v3_name: &'static str,
    /// The configuration members holding a v2 type string, whose byte order is dropped
    /// (the filter sees native values; the byte order is the `bytes` codec's business).
    pub type_keys: &'static [&'static str],
}

// `MetadataError::UnknownCodec`'s message lists these names; the error layer sits below
// the registry, so the registry hands them down.
inventory::submit! { crate::error::CodecNames(CODEC_NAMES) }

/// The one table of codecs, in the order their names are listed.
pub(crate) const CODECS: &[&CodecEntry] = &[
    &scale_offset::ENTRY,
    &cast_value::ENTRY,
    &bitround::ENTRY,
    &fixed_scale_offset::ENTRY,
    &quantize::ENTRY,
    &astype::ENTRY,
];

const fn name_count() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < CODECS.len() {
        n += 1 + CODECS[i].aliases.len();
        i += 1;
    }
    n
}

const fn names() -> [&'static str; name_count()] {
    let mut out = [""; name_count()];
    let (mut n, mut i) = (0, 0);
    while i < CODECS.len() {
        out[n] = CODECS[i].name;
        n += 1;
        let mut a = 0;
        while a < CODECS[i].aliases.len() {
            out[n] = CODECS[i].aliases[a];
            n += 1;
            a += 1;
        }
        i += 1;
    }
    out
}

const NAMES: [&str; name_count()] = names();

/// The array->array codecs zquant implements, by their metadata names (each codec's name,
/// then its aliases, in table order).
pub const CODEC_NAMES: &[&str] = &NAMES;

/// How many codecs read a Zarr v2 filter.
#[cfg_attr(not(feature = "zarrs"), allow(dead_code))]
pub(crate) const V2_COUNT: usize = {
    let (mut n, mut i) = (0, 0);
    while i < CODECS.len() {
        if CODECS[i].v2.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The Zarr v2 filter ids, and the v3 name each is read as.
#[cfg_attr(not(feature = "zarrs"), allow(dead_code))]
pub(crate) const V2_IDS: [(&str, &str); V2_COUNT] = {
    let mut out = [("", ""); V2_COUNT];
    let (mut n, mut i) = (0, 0);
    while i < CODECS.len() {
        if let Some(f) = &CODECS[i].v2 {
            out[n] = (f.id, f.v3_name);
            n += 1;
        }
        i += 1;
    }
    out
};

/// The entry named `name` (its name or an alias), with that name as the table spells it.
pub(crate) fn find(name: &str) -> Option<(&'static CodecEntry, &'static str)> {
    CODECS.iter().find_map(|e| {
        std::iter::once(&e.name)
            .chain(e.aliases)
            .find(|n| **n == name)
            .map(|n| (*e, *n))
    })
}

/// Check a codec's `configuration` as far as it does not depend on the data type: what can
/// be refused when a codec object is built, before any array exists. Binding to a data
/// type ([`DynChain::from_array_to_array_codecs`](crate::DynChain::from_array_to_array_codecs)) checks the rest.
///
/// ```
/// use serde_json::json;
/// // bitround's README: keepbits "Must be at least 1"; numcodecs' BitRound takes 0.
/// assert!(zquant::check_configuration("bitround", Some(&json!({"keepbits": 0}))).is_err());
/// assert!(zquant::check_configuration("numcodecs.bitround", Some(&json!({"keepbits": 0}))).is_ok());
/// assert!(zquant::check_configuration("cast_value", Some(&json!({"data_type": "uint8", "rounding": "up"}))).is_err());
/// ```
///
/// # Errors
/// An unknown codec name, or a configuration the codec refuses whatever the data type.
pub fn check_configuration(name: &str, configuration: Option<&Value>) -> Result<(), MetadataError> {
    let (entry, name) = find(name).ok_or_else(|| MetadataError::UnknownCodec(name.into()))?;
    (entry.check)(name, configuration)
}

/// The Zarr v2 filter whose `id` is `id`.
pub(crate) fn v2_filter(id: &str) -> Option<&'static V2Filter> {
    CODECS
        .iter()
        .filter_map(|e| e.v2.as_ref())
        .find(|f| f.id == id)
}

/// Bind one codec object to the data type it receives.
///
/// # Errors
/// Unknown codec, invalid configuration, unsupported data type.
pub(crate) fn bind(
    obj: &CodecObject,
    input: &DataType,
) -> Result<Box<dyn DynStage>, MetadataError> {
    match find(&obj.name) {
        Some((entry, name)) => (entry.bind)(name, input, obj.configuration.as_ref()),
        None => Err(MetadataError::UnknownCodec(obj.name.clone())),
    }
}

#[cfg(test)]
mod tests {
    /// Each name is listed once and finds the entry that lists it: the table needs no
    /// second list to agree with.
    #[test]
    fn every_name_finds_its_entry_once() {
        for (i, name) in super::CODEC_NAMES.iter().enumerate() {
            assert!(
                !super::CODEC_NAMES[..i].contains(name),
                "{name} listed twice"
            );
            let (entry, found) = super::find(name).expect("a listed name is found");
            assert_eq!(found, *name);
            assert!(entry.name == *name || entry.aliases.contains(name));
        }
        let per_entry: usize = super::CODECS.iter().map(|e| 1 + e.aliases.len()).sum();
        assert_eq!(super::CODEC_NAMES.len(), per_entry);
    }
}
