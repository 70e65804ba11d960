//! Code generation: the `DType` impl, and the `Real` impl for integers and floats.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::ast::Target;
use crate::attr::Args;
use crate::valid::{Desc, Float, Layout, validate};

/// `record`: whether to add the type to the link-time list of declared types (not for the
/// built-in types, which the type table lists).
pub fn expand(args: TokenStream, item: TokenStream, record: bool) -> syn::Result<TokenStream> {
    let args: Args = syn::parse2(args)?;
    let item: syn::Item = syn::parse2(item)?;
    let span = Span::call_site();
    let target = Target::from_syn(item)?;
    let desc = validate(args, span)?;
    let registered = if record {
        register(&target)
    } else {
        TokenStream::new()
    };
    let imp = emit(&target, &desc);
    Ok(quote!(#imp #registered))
}

/// The type's entry in zquant's link-time list of declared types, through which run-time
/// code finds it by name without a `register_dtype` call.
fn register(target: &Target) -> TokenStream {
    let p = quote!(::zquant::__private);
    let ty = match target {
        Target::Newtype { ident, .. } => quote!(#ident),
        Target::Existing { ty } => quote!(#ty),
    };
    quote! {
        #p::inventory::submit! { #p::Declared::of::<#ty>() }
    }
}

fn emit(target: &Target, desc: &Desc) -> TokenStream {
    let p = quote!(::zquant::__private);
    // The type being implemented, its storage, and how to reach the storage value.
    let get_other = match target {
        Target::Newtype { .. } => quote!(other.0),
        Target::Existing { .. } => quote!(other),
    };
    // Integer storage compares and hashes by bits; a complex of hardware floats cannot.
    let eq_hash = match desc.layout {
        Layout::Complex(_) => quote!(),
        _ => quote!(#[derive(::core::cmp::Eq, ::core::hash::Hash)]),
    };
    let (prelude, self_ty, storage, get, wrap) = match target {
        Target::Newtype {
            attrs,
            vis,
            ident,
            field_vis,
            storage,
        } => (
            quote! {
                #(#attrs)*
                #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::default::Default,
                         ::core::cmp::PartialEq, ::core::fmt::Debug)]
                #eq_hash
                #[repr(transparent)]
                #vis struct #ident(#field_vis #storage);
            },
            quote!(#ident),
            quote!(#storage),
            quote!(self.0),
            quote!(Self),
        ),
        Target::Existing { ty } => (quote!(), quote!(#ty), quote!(#ty), quote!(self), quote!()),
    };
    let name = &desc.name;
    match &desc.layout {
        Layout::Int { bits, signed } => {
            let l = quote!(#p::IntLayout { bits: #bits, signed: #signed });
            let real = real_common(&p, &self_ty, &storage, &get, &wrap, *bits);
            let arith = |op: TokenStream| {
                quote! {
                    const L: #p::IntLayout = #l;
                    #p::int_arith(&L, <Self as #p::Real>::to_bits(self), <Self as #p::Real>::to_bits(rhs), #p::ArithOp::#op)
                        .map(<Self as #p::Real>::from_bits)
                }
            };
            let (sub, add, mul, div) = (
                arith(quote!(Sub)),
                arith(quote!(Add)),
                arith(quote!(Mul)),
                arith(quote!(Div)),
            );
            let plain = plain_word(&p, &self_ty, &storage);
            quote! {
                #prelude
                #plain
                const _: () = ::core::assert!(
                    #bits <= 8 * <#storage as #p::Storage>::SIZE as u32,
                    "the storage type is too small for the declared bits"
                );
                impl #p::DType for #self_ty {
                    const NAME: &'static str = #name;
                    const SIZE: usize = <#storage as #p::Storage>::SIZE;
                    const KIND: #p::Kind = #p::Kind::Int(#l);
                    #[inline(always)]
                    fn read_le(bytes: &[u8]) -> Self {
                        <Self as #p::Real>::from_bits(#p::read_le_bits(bytes, <Self as #p::DType>::SIZE))
                    }
                    #[inline(always)]
                    fn write_le(self, out: &mut [u8]) {
                        #p::write_le_bits(<Self as #p::Real>::to_bits(self), out, <Self as #p::DType>::SIZE)
                    }
                    fn fill_value_from_json(v: &#p::Value) -> ::core::result::Result<Self, #p::FillValueError> {
                        const L: #p::IntLayout = #l;
                        #p::int_from_json(#name, &L, v).map(<Self as #p::Real>::from_bits)
                    }
                    fn fill_value_to_json(self) -> #p::Value {
                        const L: #p::IntLayout = #l;
                        #p::int_to_json(&L, <Self as #p::Real>::to_bits(self))
                    }
                    #[inline(always)]
                    fn same_as(self, other: Self) -> bool {
                        <Self as #p::Real>::to_bits(self) == <Self as #p::Real>::to_bits(other)
                    }
                }
                impl #p::Real for #self_ty {
                    #real
                    #[inline(always)]
                    fn to_exact(self) -> #p::Exact {
                        const L: #p::IntLayout = #l;
                        #p::decode_int(&L, <Self as #p::Real>::to_bits(self))
                    }
                    #[inline(always)]
                    fn from_exact(x: #p::Exact, opts: #p::CastOptions) -> (Self, #p::Status) {
                        const L: #p::IntLayout = #l;
                        let (b, s) = #p::round_to_int(&L, x, opts.rounding, opts.out_of_range);
                        (<Self as #p::Real>::from_bits(b), s)
                    }
                    #[inline(always)]
                    fn checked_sub(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #sub }
                    #[inline(always)]
                    fn checked_add(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #add }
                    #[inline(always)]
                    fn checked_mul(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #mul }
                    #[inline(always)]
                    fn checked_div(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #div }
                }
            }
        }
        Layout::Float(f) => emit_float(&p, &prelude, &self_ty, &storage, &get, &wrap, name, f),
        Layout::Complex(c) => quote! {
            #prelude
            // SAFETY: the storage (`#self_ty` itself, or the newtype's field, which
            // `#[repr(transparent)]` makes the layout of `#self_ty`) is `ComplexOf<#c>`: laid
            // out as two `#c` components without padding, each `#c`'s own words.
            const _: fn() = || {
                fn complex_of<T: #p::ComplexOf<#c>>() {}
                complex_of::<#storage>();
            };
            unsafe impl #p::Plain for #self_ty {
                type Word = <#c as #p::Plain>::Word;
                const WORDS: usize = 2 * <#c as #p::Plain>::WORDS;
            }
            impl #p::DType for #self_ty {
                const NAME: &'static str = #name;
                const SIZE: usize = 2 * <#c as #p::DType>::SIZE;
                const KIND: #p::Kind = #p::Kind::Complex(#p::component_layout(<#c as #p::DType>::KIND));
                #[inline(always)]
                fn read_le(bytes: &[u8]) -> Self {
                    let n = <#c as #p::DType>::SIZE;
                    #wrap(#p::Complex {
                        re: <#c as #p::DType>::read_le(&bytes[..n]),
                        im: <#c as #p::DType>::read_le(&bytes[n..]),
                    })
                }
                #[inline(always)]
                fn write_le(self, out: &mut [u8]) {
                    let n = <#c as #p::DType>::SIZE;
                    let z: #p::Complex<#c> = #get;
                    <#c as #p::DType>::write_le(z.re, &mut out[..n]);
                    <#c as #p::DType>::write_le(z.im, &mut out[n..2 * n]);
                }
                fn fill_value_from_json(v: &#p::Value) -> ::core::result::Result<Self, #p::FillValueError> {
                    #p::complex_from_json::<#c>(#name, v).map(|(re, im)| #wrap(#p::Complex { re, im }))
                }
                fn fill_value_to_json(self) -> #p::Value {
                    let z: #p::Complex<#c> = #get;
                    #p::Value::Array(::std::vec![
                        <#c as #p::DType>::fill_value_to_json(z.re),
                        <#c as #p::DType>::fill_value_to_json(z.im),
                    ])
                }
                #[inline(always)]
                fn same_as(self, other: Self) -> bool {
                    let (z, w): (#p::Complex<#c>, #p::Complex<#c>) = (#get, #get_other);
                    <#c as #p::DType>::same_as(z.re, w.re) && <#c as #p::DType>::same_as(z.im, w.im)
                }
            }
        },
        Layout::DateTime | Layout::TimeDelta => {
            let kind = if matches!(desc.layout, Layout::DateTime) {
                quote!(#p::Kind::DateTime)
            } else {
                quote!(#p::Kind::TimeDelta)
            };
            let plain = plain_word(&p, &self_ty, &storage);
            quote! {
                #prelude
                #plain
                const _: () = ::core::assert!(
                    <#storage as #p::Storage>::SIZE == 8,
                    "datetime/timedelta storage must be i64"
                );
                impl #p::DType for #self_ty {
                    const NAME: &'static str = #name;
                    const SIZE: usize = 8;
                    const KIND: #p::Kind = #kind;
                    #[inline(always)]
                    fn read_le(bytes: &[u8]) -> Self {
                        #wrap(<#storage as #p::Storage>::from_raw(#p::read_le_bits(bytes, 8)))
                    }
                    #[inline(always)]
                    fn write_le(self, out: &mut [u8]) {
                        #p::write_le_bits(<#storage as #p::Storage>::to_raw(#get), out, 8)
                    }
                    fn fill_value_from_json(v: &#p::Value) -> ::core::result::Result<Self, #p::FillValueError> {
                        #p::datetime_from_json(#name, v)
                            .map(|x| #wrap(<#storage as #p::Storage>::from_raw(x as u64)))
                    }
                    fn fill_value_to_json(self) -> #p::Value {
                        #p::datetime_to_json(<#storage as #p::Storage>::to_raw(#get) as i64)
                    }
                    #[inline(always)]
                    fn same_as(self, other: Self) -> bool {
                        self == other
                    }
                }
            }
        }
    }
}

/// The `Plain` impl of a type made of one storage word: `self_ty` is `storage` itself, or a
/// `#[repr(transparent)]` newtype of it (the macro re-emits the struct with that attribute).
fn plain_word(p: &TokenStream, self_ty: &TokenStream, storage: &TokenStream) -> TokenStream {
    quote! {
        // SAFETY: `Storage` (an unsafe trait) guarantees that the storage is exactly its word,
        // and `#self_ty` is the storage or a `#[repr(transparent)]` newtype of it.
        unsafe impl #p::Plain for #self_ty {
            type Word = <#storage as #p::Storage>::Word;
            const WORDS: usize = 1;
        }
    }
}

/// `BITS`, `to_bits` and `from_bits`, shared by integers and floats.
fn real_common(
    p: &TokenStream,
    _self_ty: &TokenStream,
    storage: &TokenStream,
    get: &TokenStream,
    wrap: &TokenStream,
    bits: u32,
) -> TokenStream {
    let mask: u64 = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    quote! {
        const BITS: u32 = #bits;
        #[inline(always)]
        fn to_bits(self) -> u64 {
            <#storage as #p::Storage>::to_raw(#get) & #mask
        }
        #[inline(always)]
        fn from_bits(bits: u64) -> Self {
            #wrap(<#storage as #p::Storage>::from_raw(bits & #mask))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn emit_float(
    p: &TokenStream,
    prelude: &TokenStream,
    self_ty: &TokenStream,
    storage: &TokenStream,
    get: &TokenStream,
    wrap: &TokenStream,
    name: &str,
    f: &Float,
) -> TokenStream {
    let Float {
        exponent,
        mantissa,
        bias,
        signed,
        subnormals,
        inf,
        nan,
    } = f;
    let bits = f.bits();
    let nan = syn::Ident::new(nan, Span::call_site());
    let l = quote! {
        #p::FloatLayout {
            exponent_bits: #exponent, mantissa_bits: #mantissa, bias: #bias, signed: #signed,
            subnormals: #subnormals, inf: #inf, nan: #p::NanEncoding::#nan,
        }
    };
    let real = real_common(p, self_ty, storage, get, wrap, bits);
    // Types of 8 bits or fewer decode through a table of their 2^bits codes built at
    // compile time (`decode_float` ignores the bits above the width, so the index is
    // masked to it).
    let to_exact = if bits <= 8 {
        let n = proc_macro2::Literal::usize_unsuffixed(1usize << bits);
        let mask = proc_macro2::Literal::u64_unsuffixed((1u64 << bits) - 1);
        quote! {
            static TABLE: [#p::Exact; #n] = #p::decode_table::<#n>(&L);
            TABLE[(<Self as #p::Real>::to_bits(self) & #mask) as usize]
        }
    } else {
        quote!(#p::decode_float(&L, <Self as #p::Real>::to_bits(self)))
    };
    let arith = |op: TokenStream| {
        quote! {
            const L: #p::FloatLayout = #l;
            #p::float_arith(&L, <Self as #p::Real>::to_bits(self), <Self as #p::Real>::to_bits(rhs), #p::ArithOp::#op)
                .map(<Self as #p::Real>::from_bits)
        }
    };
    let (sub, add, mul, div) = (
        arith(quote!(Sub)),
        arith(quote!(Add)),
        arith(quote!(Mul)),
        arith(quote!(Div)),
    );
    let plain = plain_word(p, self_ty, storage);
    quote! {
        #prelude
        #plain
        const _: () = {
            const L: #p::FloatLayout = #l;
            ::core::assert!(L.validate().is_ok(), "invalid float layout");
            ::core::assert!(
                #bits <= 8 * <#storage as #p::Storage>::SIZE as u32,
                "the storage type is too small for the declared layout"
            );
        };
        impl #p::DType for #self_ty {
            const NAME: &'static str = #name;
            const SIZE: usize = <#storage as #p::Storage>::SIZE;
            const KIND: #p::Kind = #p::Kind::Float(#l);
            #[inline(always)]
            fn read_le(bytes: &[u8]) -> Self {
                <Self as #p::Real>::from_bits(#p::read_le_bits(bytes, <Self as #p::DType>::SIZE))
            }
            #[inline(always)]
            fn write_le(self, out: &mut [u8]) {
                #p::write_le_bits(<Self as #p::Real>::to_bits(self), out, <Self as #p::DType>::SIZE)
            }
            fn fill_value_from_json(v: &#p::Value) -> ::core::result::Result<Self, #p::FillValueError> {
                const L: #p::FloatLayout = #l;
                #p::float_from_json::<Self>(&L, v)
            }
            fn fill_value_to_json(self) -> #p::Value {
                const L: #p::FloatLayout = #l;
                #p::float_to_json(&L, <Self as #p::DType>::SIZE, <Self as #p::Real>::to_bits(self))
            }
            #[inline(always)]
            fn same_as(self, other: Self) -> bool {
                const L: #p::FloatLayout = #l;
                #p::float_same(&L, <Self as #p::Real>::to_bits(self), <Self as #p::Real>::to_bits(other))
            }
        }
        impl #p::Real for #self_ty {
            #real
            #[inline(always)]
            fn to_exact(self) -> #p::Exact {
                const L: #p::FloatLayout = #l;
                #to_exact
            }
            #[inline(always)]
            fn from_exact(x: #p::Exact, opts: #p::CastOptions) -> (Self, #p::Status) {
                const L: #p::FloatLayout = #l;
                let (b, s) = #p::round_to_float(&L, x, opts.rounding, opts.out_of_range);
                (<Self as #p::Real>::from_bits(b), s)
            }
            #[inline(always)]
            fn checked_sub(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #sub }
            #[inline(always)]
            fn checked_add(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #add }
            #[inline(always)]
            fn checked_mul(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #mul }
            #[inline(always)]
            fn checked_div(self, rhs: Self) -> ::core::result::Result<Self, #p::ArithFault> { #div }
        }
    }
}
