//! Validation: turn the parsed arguments into a checked description, or an error whose span
//! points at the key that is wrong.

use proc_macro2::Span;
use syn::{LitInt, Type};

use crate::attr::{Args, FloatArgs, IntArgs, KindArgs};

/// A checked dtype description.
pub struct Desc {
    pub name: String,
    pub layout: Layout,
}

pub enum Layout {
    Int { bits: u32, signed: bool },
    Float(Float),
    Complex(Type),
    DateTime,
    TimeDelta,
}

pub struct Float {
    pub exponent: u32,
    pub mantissa: u32,
    pub bias: i32,
    pub signed: bool,
    pub subnormals: bool,
    pub inf: bool,
    /// Variant name of `NanEncoding`.
    pub nan: &'static str,
}

impl Float {
    pub fn bits(&self) -> u32 {
        self.signed as u32 + self.exponent + self.mantissa
    }
}

fn num<T: std::str::FromStr>(lit: &LitInt, what: &str) -> syn::Result<T>
where
    T::Err: std::fmt::Display,
{
    lit.base10_parse::<T>()
        .map_err(|e| syn::Error::new(lit.span(), format!("{what}: {e}")))
}

pub fn validate(args: Args, attr_span: Span) -> syn::Result<Desc> {
    let name = args.name.ok_or_else(|| {
        syn::Error::new(
            attr_span,
            "missing `name = \"…\"` (the Zarr data type name)",
        )
    })?;
    if name.value().is_empty() {
        return Err(syn::Error::new(
            name.span(),
            "the data type name cannot be empty",
        ));
    }
    let (kind, _) = args.kind.ok_or_else(|| {
        syn::Error::new(
            attr_span,
            "missing kind: one of `int(..)`, `float(..)`, `complex(T)`, `datetime`, `timedelta`",
        )
    })?;
    let layout = match kind {
        KindArgs::Int(i) => int(i, attr_span)?,
        KindArgs::Float(f) => float(f)?,
        KindArgs::Complex(t) => Layout::Complex(t),
        KindArgs::DateTime => Layout::DateTime,
        KindArgs::TimeDelta => Layout::TimeDelta,
    };
    Ok(Desc {
        name: name.value(),
        layout,
    })
}

fn int(i: IntArgs, span: Span) -> syn::Result<Layout> {
    let bits_lit = i
        .bits
        .ok_or_else(|| syn::Error::new(span, "int(..) needs `bits = N`"))?;
    let bits: u32 = num(&bits_lit, "bits")?;
    let (signed, sspan) = i
        .signed
        .ok_or_else(|| syn::Error::new(bits_lit.span(), "int(..) needs `signed` or `unsigned`"))?;
    if !(1..=64).contains(&bits) {
        return Err(syn::Error::new(
            bits_lit.span(),
            "integer `bits` must be between 1 and 64",
        ));
    }
    if signed && bits < 2 {
        return Err(syn::Error::new(
            sspan,
            "a signed integer needs at least 2 bits",
        ));
    }
    Ok(Layout::Int { bits, signed })
}

fn float(f: FloatArgs) -> syn::Result<Layout> {
    let e_lit = f
        .exponent
        .ok_or_else(|| syn::Error::new(f.span, "float(..) needs `exponent = E`"))?;
    let m_lit = f
        .mantissa
        .ok_or_else(|| syn::Error::new(f.span, "float(..) needs `mantissa = M`"))?;
    let exponent: u32 = num(&e_lit, "exponent")?;
    let mantissa: u32 = num(&m_lit, "mantissa")?;
    if !(1..=11).contains(&exponent) {
        return Err(syn::Error::new(
            e_lit.span(),
            "`exponent` must be between 1 and 11 bits",
        ));
    }
    if mantissa > 52 {
        return Err(syn::Error::new(
            m_lit.span(),
            "`mantissa` must be at most 52 bits",
        ));
    }
    let bias = match &f.bias {
        Some(b) => num::<i32>(b, "bias")?,
        None => (1 << (exponent - 1)) - 1,
    };
    let nan = match &f.nan {
        None if f.inf => "Ieee",
        None => "None",
        Some(s) => match s.value().as_str() {
            "ieee" => "Ieee",
            "all_ones" => "AllOnes",
            "negative_zero" => "NegativeZero",
            "none" => "None",
            other => {
                return Err(syn::Error::new(
                    s.span(),
                    format!(
                        "unknown NaN encoding \"{other}\": expected \"ieee\", \"all_ones\", \"negative_zero\" or \"none\""
                    ),
                ));
            }
        },
    };
    let nan_span = f.nan.as_ref().map_or(f.span, |s| s.span());
    if f.inf && nan != "Ieee" {
        return Err(syn::Error::new(
            nan_span,
            "a format with `inf` must use `nan = \"ieee\"` (Inf and NaN share the all-ones exponent)",
        ));
    }
    if nan == "Ieee" && mantissa == 0 {
        return Err(syn::Error::new(
            m_lit.span(),
            "IEEE NaN encoding needs at least one mantissa bit",
        ));
    }
    if nan == "NegativeZero" && f.unsigned {
        return Err(syn::Error::new(
            nan_span,
            "the \"negative_zero\" NaN encoding needs a sign bit",
        ));
    }
    if let Some(span) = f.no_subnormals.filter(|_| !f.unsigned || mantissa != 0) {
        return Err(syn::Error::new(
            span,
            "`no_subnormals` is supported only for unsigned exponent-only formats (`unsigned`, `mantissa = 0`), like float8_e8m0fnu",
        ));
    }
    let fl = Float {
        exponent,
        mantissa,
        bias,
        signed: !f.unsigned,
        subnormals: f.no_subnormals.is_none(),
        inf: f.inf,
        nan,
    };
    if fl.bits() > 64 {
        return Err(syn::Error::new(
            f.span,
            "a float format must fit in 64 bits",
        ));
    }
    Ok(Layout::Float(fl))
}
