//! packbits' configuration: `padding_encoding`, `first_bit` and `last_bit`, checked as far
//! as they can be without a data type (the codec checks the bits against it).

use serde_json::{Map, Value};

use super::NAME;
use crate::error::{MetadataError, unknown_key};

/// The configuration keys (the README's names; schema.json's `start_bit`/`end_bit` are
/// not read, see docs/spec-readings.md).
const KEYS: [&str; 3] = ["padding_encoding", "first_bit", "last_bit"];

/// How the number of padding bits is stored (`padding_encoding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PaddingEncoding {
    /// `"none"` (the default): not stored.
    #[default]
    None,
    /// `"first_byte"`: one byte before the packed bits.
    FirstByte,
    /// `"last_byte"`: one byte after the packed bits.
    LastByte,
}

impl PaddingEncoding {
    /// The configuration value.
    pub fn name(self) -> &'static str {
        match self {
            PaddingEncoding::None => "none",
            PaddingEncoding::FirstByte => "first_byte",
            PaddingEncoding::LastByte => "last_byte",
        }
    }

    pub(super) fn extra(self) -> usize {
        match self {
            PaddingEncoding::None => 0,
            _ => 1,
        }
    }
}

pub(super) fn field(field: &'static str, reason: impl Into<String>) -> MetadataError {
    MetadataError::Field {
        codec: NAME,
        field,
        reason: reason.into(),
    }
}

/// The configuration's three values, unbound: what can be checked without the data type.
type Parsed = (PaddingEncoding, Option<u32>, Option<u32>);

fn parse_bit(v: &Value, name: &'static str) -> Result<Option<u32>, MetadataError> {
    match v {
        Value::Null => Ok(None),
        _ => match v.as_u64() {
            Some(x) if x < 64 => Ok(Some(x as u32)),
            Some(x) => Err(field(
                name,
                format!("{x} is not a bit of any data type's component (at most 63)"),
            )),
            None => Err(field(
                name,
                format!("must be a non-negative integer or null, got {v}"),
            )),
        },
    }
}

/// Check a `configuration` (absent, or an object) without a data type.
///
/// # Errors
/// Not an object; an unknown key; a `padding_encoding` other than `"none"`,
/// `"first_byte"`, `"last_byte"`; a bit index that is not a non-negative integer below 64
/// or `null`; `last_bit` less than `first_bit`.
pub fn parse_configuration(config: Option<&Value>) -> Result<Parsed, MetadataError> {
    let empty = Map::new();
    let m = match config {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(field(
                "configuration",
                format!("must be an object, got {other}"),
            ));
        }
    };
    for k in m.keys() {
        if !KEYS.contains(&k.as_str()) {
            let hint = match k.as_str() {
                "start_bit" | "end_bit" => {
                    " (schema.json's name: the README, zarrs and zquant write `first_bit` \
                     and `last_bit`)"
                }
                _ => "",
            };
            return Err(field("configuration", unknown_key(k, &KEYS) + hint));
        }
    }
    let padding = match m.get("padding_encoding") {
        None => PaddingEncoding::None,
        Some(Value::String(s)) => match s.as_str() {
            "none" => PaddingEncoding::None,
            "first_byte" => PaddingEncoding::FirstByte,
            "last_byte" => PaddingEncoding::LastByte,
            "start_byte" | "end_byte" => {
                return Err(field(
                    "padding_encoding",
                    format!(
                        "{s:?} is schema.json's name: the README, zarrs and zquant write \
                         \"first_byte\" and \"last_byte\""
                    ),
                ));
            }
            _ => {
                return Err(field(
                    "padding_encoding",
                    format!(
                        "unknown padding encoding {s:?}: {}",
                        crate::error::choices(s, &["none", "first_byte", "last_byte"])
                    ),
                ));
            }
        },
        Some(other) => {
            return Err(field(
                "padding_encoding",
                format!("must be \"none\", \"first_byte\" or \"last_byte\", got {other}"),
            ));
        }
    };
    let first = m
        .get("first_bit")
        .map_or(Ok(None), |v| parse_bit(v, "first_bit"))?;
    let last = m
        .get("last_bit")
        .map_or(Ok(None), |v| parse_bit(v, "last_bit"))?;
    if let (Some(f), Some(l)) = (first, last) {
        check_order(f, l)?;
    }
    Ok((padding, first, last))
}

/// The spec's one rule between the two bits: "It is invalid for `last_bit` to be less than
/// `first_bit`".
pub(super) fn check_order(first: u32, last: u32) -> Result<(), MetadataError> {
    if last < first {
        return Err(field(
            "last_bit",
            format!(
                "{last} is less than first_bit {first} (\"It is invalid for last_bit to be \
                 less than first_bit\"): swap them"
            ),
        ));
    }
    Ok(())
}
