//! `cast_value` bound to data types known only at run time (metadata read from a store):
//! one [`DynStage`] for every (source, target) pair, over the same [`CastCore`] as the
//! typed codec.

use serde_json::{Map, Value};

use super::config::metadata;
use super::scalar_map::{map_pairs, map_warnings};
use super::{CastCore, CastValueConfig, NAME};
use crate::codec::{Direction, DynStage, check_words, element_error_words};
use crate::convert::KeyMap;
use crate::dtype::DTypeId;
use crate::dtype::id::ElementWords;
use crate::error::{CodecError, MetadataError};
use crate::metadata::DataType;
use crate::number::CastOptions;
use crate::number::layout::Format;
use crate::number::storage::{Words, WordsMut};

/// `cast_value` bound to run-time data types: one type for every (source, target) pair.
#[derive(Debug)]
pub struct CastValueStage {
    core: CastCore,
    input: DataType,
    output: DataType,
    config: CastValueConfig,
    warnings: Vec<String>,
}

fn real_format(dt: &DataType, role: &'static str) -> Result<(Format, u32), MetadataError> {
    match dt.id.format() {
        Some(f) => Ok((f, dt.id.word_bits())),
        None => Err(MetadataError::UnsupportedDataType {
            codec: NAME,
            dtype: dt.id.name().into(),
            reason: if role == "target" {
                "cast_value only targets integer and floating-point types"
            } else {
                "cast_value only reads integer and floating-point types"
            },
        }),
    }
}

/// What `cast_value` refuses whatever its source type: a target that is not an integer or
/// floating-point type, and `wrap` into a float target.
pub(super) fn check_target(config: &CastValueConfig) -> Result<(), MetadataError> {
    let (dst, _) = real_format(&config.data_type, "target")?;
    super::check_wrap(config.out_of_range, dst, config.data_type.id.name())
}

impl CastValueStage {
    /// Bind `config` to the array data type `input`.
    ///
    /// # Errors
    /// A source or target that is not a real type, an invalid `scalar_map` entry, `wrap`
    /// into a float target.
    pub fn new(input: &DataType, config: &CastValueConfig) -> Result<Self, MetadataError> {
        let output = config.data_type.clone();
        let dst = real_format(&output, "target")?;
        let src = real_format(input, "source")?;
        let parse = |id: DTypeId| move |v: &Value| id.value_from_json(v).map(|x| x[0]);
        let (i, o) = (input.id, output.id);
        let (enc, dec) = match &config.scalar_map {
            None => (Vec::new(), Vec::new()),
            Some(sm) => (
                map_pairs(sm.get("encode"), &parse(i), &parse(o))?,
                map_pairs(sm.get("decode"), &parse(o), &parse(i))?,
            ),
        };
        let opts = CastOptions::new(config.rounding, config.out_of_range);
        let decode = KeyMap::new(dst.0, dec);
        let warnings = map_warnings((src.0, dst.0), opts.out_of_range, &decode, o.name());
        let core = CastCore::new(src, dst, opts, KeyMap::new(src.0, enc), decode, o.name())?;
        Ok(CastValueStage {
            core,
            input: input.clone(),
            output,
            config: config.clone(),
            warnings,
        })
    }
}

fn pairs_json(m: &KeyMap, k: DTypeId, v: DTypeId) -> Value {
    Value::Array(
        m.entries()
            .iter()
            .map(|&(a, b)| Value::Array(vec![k.value_to_json([a, 0]), v.value_to_json([b, 0])]))
            .collect(),
    )
}

impl DynStage for CastValueStage {
    fn name(&self) -> &'static str {
        NAME
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn input(&self) -> &DataType {
        &self.input
    }
    fn output(&self) -> &DataType {
        &self.output
    }
    fn encode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.input, &self.output, &src, &dst)?;
        self.core.encode(src, dst).map_err(|f| {
            element_error_words(
                NAME,
                Direction::Encode,
                (self.input.id, self.output.id),
                src,
                f,
            )
            .into()
        })
    }
    fn decode_words(&self, src: Words<'_>, dst: WordsMut<'_>) -> Result<(), CodecError> {
        check_words(&self.output, &self.input, &src, &dst)?;
        self.core.decode(src, dst).map_err(|f| {
            element_error_words(
                NAME,
                Direction::Decode,
                (self.output.id, self.input.id),
                src,
                f,
            )
            .into()
        })
    }
    fn encode_fill_value(&self, fill: ElementWords) -> Result<ElementWords, MetadataError> {
        let (i, o) = (self.input.id, self.output.id);
        let show_in = |b: u64| i.value_to_json([b, 0]);
        let show_out = |b: u64| o.value_to_json([b, 0]);
        self.core
            .encode_fill(fill[0], &show_in, &show_out)
            .map(|y| [y, 0])
    }
    fn to_metadata(&self) -> Value {
        let (i, o) = (self.input.id, self.output.id);
        let sm = self.config.scalar_map.as_ref().map(|_| {
            let mut sm = Map::new();
            if !self.core.encode.map().is_empty() {
                sm.insert("encode".into(), pairs_json(self.core.encode.map(), i, o));
            }
            if !self.core.decode.map().is_empty() {
                sm.insert("decode".into(), pairs_json(self.core.decode.map(), o, i));
            }
            Value::Object(sm)
        });
        let opts = CastOptions::new(self.config.rounding, self.config.out_of_range);
        metadata(o.name(), opts, self.config.rounding_explicit, sm)
    }
    fn fusion(&self, dir: Direction) -> crate::codec::Fusion<'_> {
        self.core.fusion(dir)
    }
}
