//! What `numcodecs.quantize` and `numcodecs.astype` share: each is a core mapping words of
//! one NumPy type to another, with a typed face and a run-time stage over it (their
//! length and type checks are here), and a configuration object of known keys holding
//! Zarr v2 data type strings (its parsing and errors are here).

use serde_json::{Map, Value};

use super::{Direction, check_words, same_length};
use crate::codec::fixed_scale_offset::NumpyNumber;
use crate::convert::{words_of, words_of_mut};
use crate::dtype::DTypeId;
use crate::error::{CodecError, ElementError, MetadataError};
use crate::metadata::DataType;
use crate::number::storage::{Words, WordsMut};

/// `MetadataError::Field` of `codec`.
pub(crate) fn field(
    codec: &'static str,
    field: &'static str,
    reason: impl Into<String>,
) -> MetadataError {
    MetadataError::Field {
        codec,
        field,
        reason: reason.into(),
    }
}

/// The configuration object of `codec`, whose keys are all in `keys`.
///
/// # Errors
/// A missing or non-object configuration; an unknown key.
pub(crate) fn config_object<'a>(
    codec: &'static str,
    config: Option<&'a Value>,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, MetadataError> {
    let Some(Value::Object(map)) = config else {
        return Err(field(
            codec,
            "configuration",
            format!("{codec} requires a configuration object"),
        ));
    };
    if let Some(k) = map.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(field(
            codec,
            "configuration",
            crate::error::unknown_key(k, keys),
        ));
    }
    Ok(map)
}

/// `{"name": codec, "configuration": configuration}`.
pub(crate) fn metadata(codec: &'static str, configuration: Value) -> Value {
    let mut obj = Map::new();
    obj.insert("name".into(), Value::from(codec));
    obj.insert("configuration".into(), configuration);
    Value::Object(obj)
}

/// The built-in data types of `S` and `D`, or an error naming `key`.
pub(crate) fn type_ids<S: NumpyNumber, D: NumpyNumber>(
    codec: &'static str,
    key: &'static str,
) -> Result<(DTypeId, DTypeId), MetadataError> {
    let id = |name: &str| name.parse::<DTypeId>().ok();
    match (id(S::NAME), id(D::NAME)) {
        (Some(s), Some(d)) => Ok((s, d)),
        _ => Err(field(codec, key, "not a built-in data type")),
    }
}

/// Each configured type (`(key, configured, the Rust type's name)`) is the one the typed
/// codec is for.
///
/// # Errors
/// The first that is not, naming its key.
pub(crate) fn check_typed(
    codec: &'static str,
    pairs: [(&'static str, DTypeId, &str); 2],
) -> Result<(), MetadataError> {
    for (key, id, want) in pairs {
        if id.name() != want {
            return Err(field(
                codec,
                key,
                format!(
                    "configured {}, but the codec is typed for {want}",
                    id.name()
                ),
            ));
        }
    }
    Ok(())
}

/// The configured decoded type `configured` (its key and text) is the array's `dt`.
///
/// # Errors
/// It is not.
pub(crate) fn check_array_type(
    codec: &'static str,
    key: &'static str,
    text: &str,
    configured: DTypeId,
    dt: &DataType,
) -> Result<(), MetadataError> {
    if configured == dt.id {
        return Ok(());
    }
    Err(field(
        codec,
        key,
        format!(
            "{text:?} is {}, but the array data type is {}",
            configured.name(),
            dt.id.name()
        ),
    ))
}

/// One element through `f` (a core's `encode` or `decode`).
pub(crate) fn one<S: NumpyNumber, D: NumpyNumber>(
    x: S,
    f: impl FnOnce(Words<'_>, WordsMut<'_>),
) -> D {
    let mut out = [D::default()];
    f(words_of(std::slice::from_ref(&x)), words_of_mut(&mut out));
    out[0]
}

/// A typed codec's `encode_slice`/`decode_slice`: the lengths agree, then the core.
///
/// # Errors
/// The lengths differ.
pub(crate) fn slice<S: NumpyNumber, D: NumpyNumber>(
    codec: &'static str,
    direction: Direction,
    src: &[S],
    dst: &mut [D],
    f: impl FnOnce(Words<'_>, WordsMut<'_>),
) -> Result<(), ElementError> {
    same_length(codec, direction, src.len(), dst.len())?;
    f(words_of(src), words_of_mut(dst));
    Ok(())
}

/// A run-time stage's `encode_words`/`decode_words`: the words are of `from` and `to`
/// and agree in length, then the core.
///
/// # Errors
/// They are not, or do not.
pub(crate) fn stage_words(
    from: &DataType,
    to: &DataType,
    src: Words<'_>,
    dst: WordsMut<'_>,
    f: impl FnOnce(Words<'_>, WordsMut<'_>),
) -> Result<(), CodecError> {
    check_words(from, to, &src, &dst)?;
    f(src, dst);
    Ok(())
}

/// The parts of a typed codec `$typed<S, D>` and a run-time stage `$stage` that only
/// forward to their `core` (fields `config: $config`, `core`, and for the stage `input`
/// and `output`), for the codec named `NAME` in the calling module: the typed codec's
/// `config`, `encode_one`, `decode_one` and [`ArrayCodec`](crate::codec::ArrayCodec) impl,
/// the stage's [`DynStage`](crate::codec::DynStage) impl.
macro_rules! forward_to_core {
    ($typed:ident, $stage:ident, $config:ty) => {
        impl<S: NumpyNumber, D: NumpyNumber> $typed<S, D> {
            /// The configuration.
            pub fn config(&self) -> &$config {
                &self.config
            }

            /// Encode one element.
            pub fn encode_one(&self, x: S) -> D {
                $crate::codec::numcodecs_filter::one(x, |s, d| self.core.encode(s, d))
            }

            /// Decode one element.
            pub fn decode_one(&self, y: D) -> S {
                $crate::codec::numcodecs_filter::one(y, |s, d| self.core.decode(s, d))
            }
        }

        impl<S: NumpyNumber, D: NumpyNumber> $crate::codec::ArrayCodec for $typed<S, D> {
            type In = S;
            type Out = D;

            fn name(&self) -> &'static str {
                NAME
            }

            fn encode_slice(
                &self,
                src: &[S],
                dst: &mut [D],
            ) -> Result<(), $crate::error::ElementError> {
                let dir = $crate::codec::Direction::Encode;
                $crate::codec::numcodecs_filter::slice(NAME, dir, src, dst, |s, d| {
                    self.core.encode(s, d)
                })
            }

            fn decode_slice(
                &self,
                src: &[D],
                dst: &mut [S],
            ) -> Result<(), $crate::error::ElementError> {
                let dir = $crate::codec::Direction::Decode;
                $crate::codec::numcodecs_filter::slice(NAME, dir, src, dst, |s, d| {
                    self.core.decode(s, d)
                })
            }

            fn to_metadata(&self) -> serde_json::Value {
                $crate::codec::numcodecs_filter::metadata(NAME, self.config.to_configuration())
            }
        }

        impl $crate::codec::DynStage for $stage {
            fn name(&self) -> &'static str {
                NAME
            }
            fn input(&self) -> &$crate::metadata::DataType {
                &self.input
            }
            fn output(&self) -> &$crate::metadata::DataType {
                &self.output
            }
            fn encode_words(
                &self,
                src: $crate::number::storage::Words<'_>,
                dst: $crate::number::storage::WordsMut<'_>,
            ) -> Result<(), $crate::error::CodecError> {
                let (i, o) = (&self.input, &self.output);
                $crate::codec::numcodecs_filter::stage_words(i, o, src, dst, |s, d| {
                    self.core.encode(s, d);
                })
            }
            fn decode_words(
                &self,
                src: $crate::number::storage::Words<'_>,
                dst: $crate::number::storage::WordsMut<'_>,
            ) -> Result<(), $crate::error::CodecError> {
                let (i, o) = (&self.input, &self.output);
                $crate::codec::numcodecs_filter::stage_words(o, i, src, dst, |s, d| {
                    self.core.decode(s, d);
                })
            }
            fn to_metadata(&self) -> serde_json::Value {
                $crate::codec::numcodecs_filter::metadata(NAME, self.config.to_configuration())
            }
        }
    };
}
pub(crate) use forward_to_core;
