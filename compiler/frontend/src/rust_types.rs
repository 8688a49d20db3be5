//! How svc types become Rust types. One mapping, used by the node macro (for the
//! `Inputs` / `Outputs` structs), the asset generator, and the server emitter, so the
//! types generated code builds are exactly the types node code receives.
//!
//! | svc type            | Rust type                         |
//! |---------------------|-----------------------------------|
//! | `string`            | `String`                          |
//! | `number`            | `f64`                             |
//! | `boolean`           | `bool`                            |
//! | `any`               | `svc_sdk::Value` (JSON value)     |
//! | `object`            | `svc_sdk::Object` (JSON object)   |
//! | `object:<Name>`     | `<assets>::<Name>`                |
//! | `enum-value:<Name>` | `<assets>::<Name>`                |
//! | `<T>:array`         | `Vec<T>`                          |
//! | optional, no default| `Option<T>`                       |

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use svc_types::TypeRef;
use svc_types::case;
use svc_types::manifest::PinDefinition;

/// Where generated code finds the SDK and the asset types.
#[derive(Clone)]
pub struct RustPaths {
    /// The SDK crate, for example `::svc_sdk`.
    pub sdk: TokenStream,
    /// The module holding asset types (`crate::assets`), or `None` when the code is
    /// generated inside that module.
    pub assets: Option<TokenStream>,
}

impl RustPaths {
    /// Paths as seen from inside a node crate.
    pub fn node_crate() -> Self {
        RustPaths {
            sdk: quote!(::svc_sdk),
            assets: Some(quote!(crate::assets)),
        }
    }
}

/// The Rust type of a value of type `t`.
pub fn rust_type(t: &TypeRef, paths: &RustPaths) -> TokenStream {
    let sdk = &paths.sdk;
    match t {
        TypeRef::String => quote!(::std::string::String),
        TypeRef::Number => quote!(f64),
        TypeRef::Boolean => quote!(bool),
        TypeRef::Any => quote!(#sdk::Value),
        TypeRef::Object => quote!(#sdk::Object),
        TypeRef::Structure(name) | TypeRef::Enum(name) => {
            let ident = format_ident!("{}", name);
            match &paths.assets {
                Some(assets) => quote!(#assets::#ident),
                None => quote!(#ident),
            }
        }
        TypeRef::Array(inner) => {
            let inner = rust_type(inner, paths);
            quote!(::std::vec::Vec<#inner>)
        }
    }
}

/// The Rust type of a pin's field in `Inputs` / `Outputs`: optional pins without a
/// default are `Option<T>`.
pub fn pin_rust_type(pin: &PinDefinition, paths: &RustPaths) -> Option<TokenStream> {
    let t = rust_type(pin.type_ref()?, paths);
    Some(if pin.optional && pin.default.is_none() {
        quote!(::core::option::Option<#t>)
    } else {
        t
    })
}

/// An identifier for `name`, raw (`r#type`) when it is a keyword.
pub fn ident(name: &str) -> Ident {
    if case::is_keyword(name) && case::can_be_raw(name) {
        Ident::new_raw(name, Span::call_site())
    } else if case::is_keyword(name) {
        format_ident!("{}_", name)
    } else {
        Ident::new(name, Span::call_site())
    }
}
