//! The attribute's arguments: `name = "…"` and one kind with its layout keys.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitInt, LitStr, Token, Type};

/// A parsed `#[dtype(...)]` argument list.
pub struct Args {
    /// The Zarr name and its span.
    pub name: Option<LitStr>,
    /// The kind, with the span of its keyword.
    pub kind: Option<(KindArgs, Span)>,
}

/// The kind-specific part.
pub enum KindArgs {
    Int(IntArgs),
    Float(FloatArgs),
    Complex(Type),
    DateTime,
    TimeDelta,
}

pub struct IntArgs {
    pub bits: Option<LitInt>,
    /// `Some(true)` for `signed`, `Some(false)` for `unsigned`.
    pub signed: Option<(bool, Span)>,
}

pub struct FloatArgs {
    pub exponent: Option<LitInt>,
    pub mantissa: Option<LitInt>,
    pub bias: Option<LitInt>,
    pub inf: bool,
    pub nan: Option<LitStr>,
    pub unsigned: bool,
    /// The span of the `no_subnormals` flag, when given.
    pub no_subnormals: Option<Span>,
    pub span: Span,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = Args {
            name: None,
            kind: None,
        };
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            let span = key.span();
            let k = key.to_string();
            if args.kind.is_some() && k != "name" {
                return Err(syn::Error::new(
                    span,
                    "only one kind (int, float, complex, datetime, timedelta) may be given",
                ));
            }
            match k.as_str() {
                "name" => {
                    if args.name.is_some() {
                        return Err(syn::Error::new(span, "duplicate `name`"));
                    }
                    input.parse::<Token![=]>()?;
                    args.name = Some(input.parse()?);
                }
                "int" => {
                    let content;
                    syn::parenthesized!(content in input);
                    args.kind = Some((KindArgs::Int(parse_int(&content)?), span));
                }
                "float" => {
                    let content;
                    syn::parenthesized!(content in input);
                    args.kind = Some((KindArgs::Float(parse_float(&content, span)?), span));
                }
                "complex" => {
                    let content;
                    syn::parenthesized!(content in input);
                    args.kind = Some((KindArgs::Complex(content.parse()?), span));
                }
                "datetime" => args.kind = Some((KindArgs::DateTime, span)),
                "timedelta" => args.kind = Some((KindArgs::TimeDelta, span)),
                _ => {
                    return Err(syn::Error::new(
                        span,
                        format!(
                            "unknown key `{k}`: expected `name`, `int(..)`, `float(..)`, `complex(..)`, `datetime` or `timedelta`"
                        ),
                    ));
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(args)
    }
}

/// One `key` or `key = value` inside `int(..)`/`float(..)`.
struct Item {
    key: Ident,
    value: Option<syn::Lit>,
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Item { key, value })
    }
}

fn items(input: ParseStream) -> syn::Result<Vec<Item>> {
    let p: Punctuated<Item, Token![,]> = Punctuated::parse_terminated(input)?;
    Ok(p.into_iter().collect())
}

fn int_lit(item: &Item) -> syn::Result<LitInt> {
    match &item.value {
        Some(syn::Lit::Int(i)) => Ok(i.clone()),
        _ => Err(syn::Error::new(
            item.key.span(),
            format!("`{}` needs an integer, as in `{} = 4`", item.key, item.key),
        )),
    }
}

fn flag(item: &Item) -> syn::Result<()> {
    match &item.value {
        None => Ok(()),
        Some(v) => Err(syn::Error::new_spanned(
            v,
            format!("`{}` is a flag and takes no value", item.key),
        )),
    }
}

fn once<T>(slot: &mut Option<T>, v: T, key: &Ident) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(key.span(), format!("duplicate `{key}`")));
    }
    *slot = Some(v);
    Ok(())
}

fn parse_int(input: ParseStream) -> syn::Result<IntArgs> {
    let mut a = IntArgs {
        bits: None,
        signed: None,
    };
    for it in items(input)? {
        match it.key.to_string().as_str() {
            "bits" => once(&mut a.bits, int_lit(&it)?, &it.key)?,
            "signed" | "unsigned" => {
                flag(&it)?;
                once(&mut a.signed, (it.key == "signed", it.key.span()), &it.key)?;
            }
            k => {
                return Err(syn::Error::new(
                    it.key.span(),
                    format!("unknown int key `{k}`: expected `bits = N`, `signed` or `unsigned`"),
                ));
            }
        }
    }
    Ok(a)
}

fn parse_float(input: ParseStream, span: Span) -> syn::Result<FloatArgs> {
    let mut a = FloatArgs {
        exponent: None,
        mantissa: None,
        bias: None,
        inf: false,
        nan: None,
        unsigned: false,
        no_subnormals: None,
        span,
    };
    for it in items(input)? {
        match it.key.to_string().as_str() {
            "exponent" => once(&mut a.exponent, int_lit(&it)?, &it.key)?,
            "mantissa" => once(&mut a.mantissa, int_lit(&it)?, &it.key)?,
            "bias" => once(&mut a.bias, int_lit(&it)?, &it.key)?,
            "inf" => {
                flag(&it)?;
                a.inf = true;
            }
            "unsigned" => {
                flag(&it)?;
                a.unsigned = true;
            }
            "no_subnormals" => {
                flag(&it)?;
                a.no_subnormals = Some(it.key.span());
            }
            "nan" => match &it.value {
                Some(syn::Lit::Str(s)) => once(&mut a.nan, s.clone(), &it.key)?,
                _ => {
                    return Err(syn::Error::new(
                        it.key.span(),
                        "`nan` needs a string: \"ieee\", \"all_ones\", \"negative_zero\" or \"none\"",
                    ));
                }
            },
            k => {
                return Err(syn::Error::new(
                    it.key.span(),
                    format!(
                        "unknown float key `{k}`: expected `exponent`, `mantissa`, `bias`, `inf`, `nan`, `unsigned` or `no_subnormals`"
                    ),
                ));
            }
        }
    }
    Ok(a)
}
