//! A `scalar_map` direction, untyped: keys matched by value on the codes of one format.
//!
//! The typed [`MapEntries`](crate::codec::cast_value::MapEntries) and the run-time
//! `cast_value` stage both hold one of these, so the matching code exists once, whatever
//! the data types.

use std::collections::HashMap;

use super::{exact_of, round_into};
use crate::number::exact::{Class, Exact};
use crate::number::layout::Format;
use crate::number::{CastOptions, Status};

/// Keys (codes of the `key` format) and the codes they map to, first occurrence first.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyMap {
    key: Format,
    /// `(key code, value code)` as given, later duplicates of a key dropped.
    entries: Vec<(u64, u64)>,
    /// The keys as canonical exact values, for matching by value.
    keys: Vec<Exact>,
    /// Every code of the key format that has a key's value (both zeros for a zero key), with
    /// its value: a slice is scanned for keys on its bits.
    codes: Vec<(u64, u64)>,
    /// The value of a NaN key: every NaN code matches it.
    nan: Option<u64>,
    /// `keys` and `codes` indexed, for maps with more than [`LINEAR`] codes: building and
    /// matching then cost O(1) per key or element, not O(keys).
    key_index: HashMap<Exact, usize>,
    code_index: HashMap<u64, u64>,
}

/// Up to this many codes, a linear scan (vectorizable, no hashing) finds a key.
const LINEAR: usize = 8;

/// The canonical form of a value for matching: every NaN alike, ±0 alike, finite values
/// with the significand's trailing zeros removed.
pub fn canonical(x: Exact) -> Exact {
    match x.class {
        Class::Nan => Exact::NAN,
        Class::Zero => Exact::ZERO,
        Class::Inf => x,
        Class::Finite => {
            let tz = x.mant.trailing_zeros();
            Exact {
                mant: x.mant >> tz,
                exp: x.exp + tz as i32,
                ..x
            }
        }
    }
}

impl KeyMap {
    /// An empty map on keys of format `key`.
    pub fn empty(key: Format) -> Self {
        KeyMap {
            key,
            entries: Vec::new(),
            keys: Vec::new(),
            codes: Vec::new(),
            nan: None,
            key_index: HashMap::new(),
            code_index: HashMap::new(),
        }
    }

    /// Entries in order; later duplicates of a key are ignored ("readers MUST use the first
    /// occurrence"). Linear in the number of entries.
    pub fn new(key: Format, pairs: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let mut m = KeyMap::empty(key);
        for (k, v) in pairs {
            let c = canonical(exact_of(key, k));
            if m.key_index.contains_key(&c) {
                continue;
            }
            m.key_index.insert(c, m.keys.len());
            m.keys.push(c);
            m.entries.push((k & key.mask(), v));
            if c.class == Class::Nan {
                m.nan = Some(v);
                continue;
            }
            let signs: &[bool] = if c.class == Class::Zero {
                &[false, true]
            } else {
                &[c.neg]
            };
            for &neg in signs {
                let (code, st) = round_into(key, Exact { neg, ..c }, CastOptions::default());
                if st == Status::Exact
                    && canonical(exact_of(key, code)) == c
                    && !m.code_index.contains_key(&code)
                {
                    m.code_index.insert(code, v);
                    m.codes.push((code, v));
                }
            }
        }
        m
    }

    /// The value of the key with code `b` (masked), by a linear scan of few codes or the index.
    #[inline(always)]
    fn code_value(&self, b: u64) -> Option<u64> {
        if self.codes.len() <= LINEAR {
            self.codes.iter().find(|(c, _)| *c == b).map(|(_, v)| *v)
        } else {
            self.code_index.get(&b).copied()
        }
    }

    /// The key format.
    pub fn key_format(&self) -> Format {
        self.key
    }

    /// `(key code, value code)` in order.
    pub fn entries(&self) -> &[(u64, u64)] {
        &self.entries
    }

    /// The code NaN maps to, when NaN is the only key.
    pub(crate) fn only_nan(&self) -> Option<u64> {
        self.nan.filter(|_| self.entries.len() == 1)
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The mapped code of the value `x`, if it is a key.
    #[inline]
    pub fn lookup(&self, x: Exact) -> Option<u64> {
        if self.keys.is_empty() {
            return None;
        }
        self.key_index
            .get(&canonical(x))
            .map(|&i| self.entries[i].1)
    }

    /// The mapped code of the element with code `bits`, if its value is a key (the same
    /// answer as [`KeyMap::lookup`], from the bits).
    #[inline(always)]
    pub fn lookup_bits(&self, bits: u64) -> Option<u64> {
        let bits = bits & self.key.mask();
        if let Some(v) = self.nan
            && self.is_nan_code(bits)
        {
            return Some(v);
        }
        self.code_value(bits)
    }

    /// Whether the element with code `bits` is a key.
    #[inline(always)]
    pub fn is_key_bits(&self, bits: u64) -> bool {
        let bits = bits & self.key.mask();
        (self.nan.is_some() && self.is_nan_code(bits)) | self.code_value(bits).is_some()
    }

    /// Whether any element of `s` is a key: [`KeyMap::is_key_bits`] over a slice, with the
    /// layout's tests hoisted out of the loop.
    #[inline]
    pub fn any_key<W: crate::number::storage::Word>(&self, s: &[W]) -> bool {
        let mask = self.key.mask();
        let has = |b: u64| self.code_value(b).is_some();
        match (self.nan, self.key) {
            (None, _) => s.iter().fold(false, |h, x| h | has(x.to_u64() & mask)),
            (Some(_), Format::Float(l)) if l.nan == crate::number::layout::NanEncoding::Ieee => {
                let mag = l.magnitude_mask();
                let inf = l.inf_bits().unwrap_or(mag);
                s.iter().fold(false, |h, x| {
                    let b = x.to_u64() & mask;
                    h | (b & mag > inf) | has(b)
                })
            }
            _ => s.iter().any(|x| self.is_key_bits(x.to_u64())),
        }
    }

    /// `src` with every key replaced by code 0, into `dst`.
    #[inline]
    pub fn stand_in<W: crate::number::storage::Word>(&self, src: &[W], dst: &mut [W]) {
        let mask = self.key.mask();
        let has = |b: u64| self.code_value(b).is_some();
        match (self.nan, self.key) {
            (Some(_), Format::Float(l)) if l.nan == crate::number::layout::NanEncoding::Ieee => {
                let mag = l.magnitude_mask();
                let inf = l.inf_bits().unwrap_or(mag);
                for (x, y) in src.iter().zip(dst.iter_mut()) {
                    let b = x.to_u64() & mask;
                    *y = if (b & mag > inf) | has(b) {
                        W::default()
                    } else {
                        *x
                    };
                }
            }
            _ => {
                for (x, y) in src.iter().zip(dst.iter_mut()) {
                    *y = if self.is_key_bits(x.to_u64()) {
                        W::default()
                    } else {
                        *x
                    };
                }
            }
        }
    }

    /// Write the mapped value over every element of `src` that is a key:
    /// [`KeyMap::lookup_bits`] over a slice, with the layout's tests hoisted.
    #[inline]
    pub fn write_keys<SW: crate::number::storage::Word, DW: crate::number::storage::Word>(
        &self,
        src: &[SW],
        dst: &mut [DW],
    ) {
        let mask = self.key.mask();
        let code = |b: u64| self.code_value(b);
        match (self.nan, self.key) {
            (Some(v), Format::Float(l)) if l.nan == crate::number::layout::NanEncoding::Ieee => {
                let mag = l.magnitude_mask();
                let inf = l.inf_bits().unwrap_or(mag);
                for (x, y) in src.iter().zip(dst.iter_mut()) {
                    let b = x.to_u64() & mask;
                    if b & mag > inf {
                        *y = DW::from_u64(v);
                    } else if let Some(v) = code(b) {
                        *y = DW::from_u64(v);
                    }
                }
            }
            _ => {
                for (x, y) in src.iter().zip(dst.iter_mut()) {
                    if let Some(v) = self.lookup_bits(x.to_u64()) {
                        *y = DW::from_u64(v);
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn is_nan_code(&self, bits: u64) -> bool {
        match self.key {
            Format::Float(l) => l.is_nan_bits(bits),
            Format::Int(_) => false,
        }
    }
}
