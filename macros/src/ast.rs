//! The item the attribute sits on: a one-field tuple struct, or an empty `impl … for T {}`.

use syn::{Attribute, Fields, Item, Type, Visibility};

/// The annotated item.
pub enum Target {
    /// `struct Name(Storage);` — the struct is re-emitted and implemented.
    Newtype {
        attrs: Vec<Attribute>,
        vis: Visibility,
        ident: syn::Ident,
        field_vis: Visibility,
        storage: Type,
    },
    /// `impl DType for T {}` — implemented for an existing type `T` (its own storage).
    Existing { ty: Type },
}

impl Target {
    pub fn from_syn(item: Item) -> syn::Result<Target> {
        match item {
            Item::Struct(s) => {
                if !s.generics.params.is_empty() {
                    return Err(syn::Error::new_spanned(
                        &s.generics,
                        "a dtype struct cannot be generic",
                    ));
                }
                let field = match &s.fields {
                    Fields::Unnamed(f) if f.unnamed.len() == 1 => f.unnamed[0].clone(),
                    other => {
                        return Err(syn::Error::new_spanned(
                            other,
                            "a dtype struct must be a tuple struct with exactly one field, its storage (e.g. `struct Float8(u8);`)",
                        ));
                    }
                };
                Ok(Target::Newtype {
                    attrs: s.attrs,
                    vis: s.vis,
                    ident: s.ident,
                    field_vis: field.vis,
                    storage: field.ty,
                })
            }
            Item::Impl(i) => {
                if i.trait_.is_none() {
                    return Err(syn::Error::new_spanned(
                        &i.self_ty,
                        "expected `impl DType for T {}`",
                    ));
                }
                if let Some(it) = i.items.first() {
                    return Err(syn::Error::new_spanned(
                        it,
                        "the impl block must be empty: the macro writes its items",
                    ));
                }
                Ok(Target::Existing { ty: *i.self_ty })
            }
            other => Err(syn::Error::new_spanned(
                other,
                "#[dtype] goes on a one-field tuple struct or on an empty `impl DType for T {}`",
            )),
        }
    }
}
