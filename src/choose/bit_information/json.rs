//! The JSON form of [`BitCounts`]: the element type by its Zarr name, the axis, the pairs
//! and the three per-bit count lists, read back through [`BitCounts::from_parts`]'s checks.

use super::BitCounts;
use crate::choose::ChooseError;
use crate::dtype::DTypeId;

/// The JSON form of [`BitCounts`].
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BitCountsJson {
    data_type: String,
    axis: usize,
    pairs: u64,
    a: Vec<u64>,
    b: Vec<u64>,
    both: Vec<u64>,
}

impl From<BitCounts> for BitCountsJson {
    fn from(c: BitCounts) -> Self {
        let bits = c.format.bits() as usize;
        // Every built-in real type has a format of its own; a format no built-in type has
        // (none counted by `BitCounts::of` today) is named by its layout.
        let data_type = DTypeId::ALL
            .iter()
            .find(|id| id.format() == Some(c.format))
            .map_or_else(|| format!("{:?}", c.format), |id| id.name().to_string());
        let p = &c.counts;
        BitCountsJson {
            data_type,
            axis: c.axis,
            pairs: p.pairs,
            a: p.a[..bits].to_vec(),
            b: p.b[..bits].to_vec(),
            both: p.both[..bits].to_vec(),
        }
    }
}

impl TryFrom<BitCountsJson> for BitCounts {
    type Error = ChooseError;
    fn try_from(j: BitCountsJson) -> Result<Self, ChooseError> {
        let id: DTypeId = j
            .data_type
            .parse()
            .map_err(|e| ChooseError::Words(format!("bit counts: {e}")))?;
        let format = id.format().ok_or_else(|| {
            ChooseError::Words(format!("bit counts of {id}, which is not a real data type"))
        })?;
        let bits = format.bits() as usize;
        let mut parts = [[0u64; 64]; 3];
        for (out, v) in parts.iter_mut().zip([&j.a, &j.b, &j.both]) {
            if v.len() != bits {
                return Err(ChooseError::Words(format!(
                    "bit counts of {id} need {bits} counts per list, got {}",
                    v.len()
                )));
            }
            out[..bits].copy_from_slice(v);
        }
        BitCounts::from_parts(format, j.axis, j.pairs, parts)
    }
}
