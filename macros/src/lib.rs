//! `zquant-macros`: the `#[zquant::dtype(...)]` attribute.
//!
//! It turns a layout description into the `DType` (and `Real`) impls of one element type.
//! The pipeline is the one of `thiserror-impl`: parse the attribute and the item into a typed
//! description (`attr`, `ast`), validate it with spans pointing at the offending key
//! (`valid`), then emit code (`expand`). On error only `compile_error!` and the original
//! item are emitted (a struct is kept, an `impl DType for T {}` is dropped), so one mistake
//! gives one message.
//!
//! Generated code names nothing but `::zquant::__private::…`, so it does not depend on what
//! the user imported.

mod ast;
mod attr;
mod expand;
mod valid;

use proc_macro::TokenStream;

/// Generate a zquant element type from its layout. See `zquant::dtype` for the syntax.
#[proc_macro_attribute]
pub fn dtype(args: TokenStream, item: TokenStream) -> TokenStream {
    run(args, item, true)
}

/// zquant's own declarations of the built-in types: the same expansion, less the link-time
/// record. A built-in type is found through the type table, and a record per built-in type
/// would compile `register_dtype` 44 more times for nothing.
#[doc(hidden)]
#[proc_macro_attribute]
pub fn builtin_dtype(args: TokenStream, item: TokenStream) -> TokenStream {
    run(args, item, false)
}

fn run(args: TokenStream, item: TokenStream, record: bool) -> TokenStream {
    let item2: proc_macro2::TokenStream = item.clone().into();
    match expand::expand(args.into(), item2.clone(), record) {
        Ok(ts) => ts.into(),
        Err(e) => {
            let err = e.to_compile_error();
            // Keep a struct, so that its uses do not cascade into more errors, but drop an
            // `impl DType for T {}`: its items are the macro's to write, and the empty impl
            // would add "not all trait items implemented".
            match syn::parse2::<syn::Item>(item2.clone()) {
                Ok(syn::Item::Impl(_)) => err.into(),
                _ => quote::quote!(#err #item2).into(),
            }
        }
    }
}
