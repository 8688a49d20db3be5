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
use svc_types::manifest::{NodeManifest, PinDefinition, PinMap};
use svc_types::names;

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

/// A node's `Node` and its `impl CodeFunctionNode`, around the items of
/// [`node_io_items`]: `manifest` is the body of `fn manifest()`, `run` the body of
/// `fn run(ctx)` (a future). The one writer of the impl, for the node macro (Rust nodes)
/// and the server emitter (TypeScript nodes).
pub fn node_impl(doc: &str, manifest: TokenStream, run: TokenStream) -> TokenStream {
    quote! {
        #[doc = #doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::default::Default)]
        pub struct Node;

        impl ::svc_sdk::CodeFunctionNode for Node {
            type Inputs = Inputs;
            type Outputs = Outputs;
            const NODE_KEY: &'static str = NODE_KEY;

            fn manifest() -> ::svc_sdk::NodeManifest {
                #manifest
            }

            fn run(ctx: &::svc_sdk::RunContext<Inputs>) -> impl ::core::future::Future<Output = ::svc_sdk::NodeResult<Outputs>> + ::core::marker::Send {
                #run
            }
        }
    }
}

/// A node's `NODE_KEY`, `Inputs` and `Outputs`: one field per data pin, with the pin's
/// description as doc, its default through serde, unknown fields refused. The node macro
/// writes these for a Rust node, and the server emitter for a TypeScript node, so a
/// value crosses into and out of a node of either language with the same checks.
pub fn node_io_items(manifest: &NodeManifest, paths: &RustPaths) -> TokenStream {
    let sdk = &paths.sdk;
    let node_key = &manifest.node_key;
    let (input_fields, input_defaults) = pin_fields(&manifest.inputs, node_key, paths, "input");
    let (output_fields, _) = pin_fields(&manifest.outputs, node_key, paths, "output");
    let inputs_doc = format!(" The inputs of the `{node_key}` node, one field per data input pin.");
    let outputs_doc = format!(" The outputs of the `{node_key}` node: `run` returns exactly these.");
    quote! {
        /// The stable key of this node.
        pub const NODE_KEY: &str = #node_key;

        #[doc = #inputs_doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::cmp::PartialEq, #sdk::__private::serde::Deserialize, #sdk::__private::serde::Serialize)]
        #[serde(crate = "::svc_sdk::__private::serde", remote = "Self", deny_unknown_fields)]
        pub struct Inputs {
            #( #input_fields )*
        }

        #( #input_defaults )*

        #[doc = #outputs_doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::cmp::PartialEq, #sdk::__private::serde::Deserialize, #sdk::__private::serde::Serialize)]
        #[serde(crate = "::svc_sdk::__private::serde", remote = "Self", deny_unknown_fields)]
        pub struct Outputs {
            #( #output_fields )*
        }

        #sdk::__object_serde!(Inputs, #sdk::__private::serde);
        #sdk::__object_serde!(Outputs, #sdk::__private::serde);
    }
}

/// The fields of `Inputs` or `Outputs`, and the functions giving the pins' defaults.
fn pin_fields(
    pins: &PinMap,
    node_key: &str,
    paths: &RustPaths,
    direction: &str,
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let sdk = &paths.sdk;
    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    for (id, pin) in pins.iter() {
        let Some(ty) = pin_rust_type(pin, paths) else {
            continue;
        };
        let field_name = names::pin_field(id);
        let field = ident(&field_name);
        let doc = pin.description.as_ref().map(|d| {
            let d = format!(" {d}");
            quote!(#[doc = #d])
        });
        // A node author reads what svc guarantees (inputs) or holds them to (outputs).
        let checked = (!pin.constraints.is_empty()).then(|| {
            let when = if direction == "input" { "before" } else { "after" };
            let d = format!(" Checked {when} `run`: {}.", pin.constraints.describe());
            // Its own paragraph after a description.
            let gap = pin.description.is_some().then(|| quote!(#[doc = ""]));
            quote!(#gap #[doc = #d])
        });
        // JSON, flows and manifests use the id as written (`maxTags`); Rust, its
        // snake_case field. A raw identifier (`r#type`) is already its id to serde.
        let rename = (field.to_string().trim_start_matches("r#") != id).then(|| quote!(#[serde(rename = #id)]));
        let serde_attr = match (&pin.default, pin.optional) {
            (Some(default), _) => {
                let fn_name = format_ident!("__svc_default_{}_{}", direction, field_name);
                let fn_path = fn_name.to_string();
                let json = default.to_string();
                defaults.push(quote! {
                    #[doc(hidden)]
                    fn #fn_name() -> #ty {
                        #sdk::__private::default_value(#node_key, #id, #json)
                    }
                });
                quote!(#[serde(default = #fn_path)])
            }
            (None, true) => quote!(#[serde(default)]),
            (None, false) => quote!(),
        };
        fields.push(quote! { #doc #checked #rename #serde_attr pub #field: #ty, });
    }
    (fields, defaults)
}
