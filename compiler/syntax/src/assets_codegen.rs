//! Rust types for a project's named assets: each structure becomes a struct and each
//! enum an enum, with serde attributes that keep the JSON shape of the spec (field names
//! as written, enum values as their wire strings). Used by `svc_sdk::include_assets!`
//! in node crates and by the server emitter.

use crate::rust_types::{RustPaths, ident, rust_type};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::{BTreeMap, BTreeSet};
use svc_types::{Assets, TypeRef};

/// Generates the items of the `assets` module.
pub fn generate(assets: &Assets, sdk: &TokenStream) -> TokenStream {
    let paths = RustPaths {
        sdk: sdk.clone(),
        assets: None,
    };
    let serde_crate = format!("{}::__private::serde", sdk.to_string().replace(' ', ""));
    let boxed = recursive_fields(assets);
    let mut items = Vec::new();

    for e in &assets.enums {
        let name = format_ident!("{}", e.name);
        let doc = doc_attr(e.description.as_deref().unwrap_or(&format!("The `{}` enum.", e.name)));
        let variants: Vec<_> = e.values.iter().map(|v| format_ident!("{}", v.rust_variant())).collect();
        let wire: Vec<&str> = e.values.iter().map(|v| v.value()).collect();
        let keys: Vec<&str> = e.values.iter().map(|v| v.key()).collect();
        let labels: Vec<&str> = e.values.iter().map(|v| v.label()).collect();
        let variant_docs: Vec<_> = e
            .values
            .iter()
            .map(|v| doc_attr(&format!("`{}`: {}", v.value(), v.label())))
            .collect();
        items.push(quote! {
            #doc
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash, ::core::cmp::PartialOrd, ::core::cmp::Ord, #sdk::__private::serde::Serialize, #sdk::__private::serde::Deserialize)]
            #[serde(crate = #serde_crate)]
            pub enum #name {
                #( #variant_docs #[serde(rename = #wire)] #variants, )*
            }

            impl #name {
                /// Every value, in definition order.
                pub const ALL: &'static [#name] = &[ #( #name::#variants, )* ];

                /// The value as it appears on the wire.
                pub const fn value(self) -> &'static str {
                    match self { #( #name::#variants => #wire, )* }
                }

                /// The value's stable key.
                pub const fn key(self) -> &'static str {
                    match self { #( #name::#variants => #keys, )* }
                }

                /// The label the Builder shows.
                pub const fn label(self) -> &'static str {
                    match self { #( #name::#variants => #labels, )* }
                }

                /// The value with this wire form.
                pub fn from_value(value: &str) -> ::core::option::Option<Self> {
                    match value { #( #wire => ::core::option::Option::Some(#name::#variants), )* _ => ::core::option::Option::None }
                }
            }

            impl ::core::fmt::Display for #name {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(self.value())
                }
            }
        });
    }

    for s in &assets.structures {
        let name = format_ident!("{}", s.name);
        let doc = doc_attr(
            s.description
                .as_deref()
                .unwrap_or(&format!("The `{}` structure.", s.name)),
        );
        let fields = s.fields.iter().map(|f| {
            let field_ident = ident(&f.rust_name());
            let wire = &f.name;
            let t = f.type_ref().unwrap_or(TypeRef::Any);
            let mut ty = rust_type(&t, &paths);
            if boxed.contains(&(s.name.clone(), f.name.clone())) {
                ty = quote!(::std::boxed::Box<#ty>);
            }
            // The constraints are documented on the field: a value that reached a node
            // through a request has been checked against them at the edge.
            let constraints = (!f.constraints.is_empty())
                .then(|| doc_attr(&format!("Checked at the edge: {}.", f.constraints.describe())));
            let doc = match (f.description.as_deref().map(doc_attr), constraints) {
                (Some(d), Some(c)) => Some(quote!(#d #[doc = ""] #c)),
                (d, c) => d.or(c),
            };
            if f.required {
                quote! { #doc #[serde(rename = #wire)] pub #field_ident: #ty, }
            } else {
                quote! {
                    #doc
                    #[serde(rename = #wire, default, skip_serializing_if = "::core::option::Option::is_none")]
                    pub #field_ident: ::core::option::Option<#ty>,
                }
            }
        });
        items.push(quote! {
            #doc
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::cmp::PartialEq, #sdk::__private::serde::Serialize, #sdk::__private::serde::Deserialize)]
            // A structure is a JSON object, never serde's positional array form.
            #[serde(crate = #serde_crate, remote = "Self", deny_unknown_fields)]
            pub struct #name {
                #( #fields )*
            }
            #sdk::__object_serde!(#name, #sdk::__private::serde);
        });
    }

    let secret_consts = assets.secrets.iter().map(|s| {
        let c = format_ident!("{}", s.name);
        let name = &s.name;
        let doc = doc_attr(s.description.as_deref().unwrap_or("A secret required by this project."));
        quote! { #doc pub const #c: &str = #name; }
    });
    let json = serde_json::to_string(assets).expect("assets serialize");
    items.push(quote! {
        /// The names of the project's secrets, for `ctx.secret(secrets::NAME)`.
        pub mod secrets {
            #( #secret_consts )*
        }

        /// Every asset of the project, as `collect_assets` would return them.
        pub fn definitions() -> #sdk::Assets {
            #sdk::__private::serde_json::from_str(#json).expect("assets embedded by svc are valid")
        }
    });
    quote! { #( #items )* }
}

fn doc_attr(text: &str) -> TokenStream {
    let text = format!(" {text}");
    quote!(#[doc = #text])
}

/// The (structure, field) pairs that must be boxed: non-array structure fields that
/// close a cycle of structures containing each other (otherwise the type is infinitely
/// large). `Vec` already breaks such cycles.
pub fn recursive_fields(assets: &Assets) -> BTreeSet<(String, String)> {
    let mut edges: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for s in &assets.structures {
        for f in &s.fields {
            if let Some(TypeRef::Structure(target)) = f.type_ref() {
                edges
                    .entry(&s.name)
                    .or_default()
                    .push((target_name(&assets.structures, &target), &f.name));
            }
        }
    }
    let mut out = BTreeSet::new();
    for (from, targets) in &edges {
        for (to, field) in targets {
            if reaches(&edges, to, from) {
                out.insert((from.to_string(), field.to_string()));
            }
        }
    }
    out
}

fn target_name<'a>(structures: &'a [svc_types::StructureDefinition], name: &str) -> &'a str {
    structures
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.name.as_str())
        .unwrap_or("")
}

fn reaches(edges: &BTreeMap<&str, Vec<(&str, &str)>>, from: &str, to: &str) -> bool {
    let mut stack = vec![from];
    let mut seen = BTreeSet::new();
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n)
            && let Some(next) = edges.get(n)
        {
            stack.extend(next.iter().map(|(t, _)| *t));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_types::{EnumDefinition, FieldDefinition, StructureDefinition};

    #[test]
    fn boxes_only_recursive_non_array_fields() {
        let f = |n: &str, t: &str| FieldDefinition {
            name: n.into(),
            type_: t.into(),
            required: false,
            description: None,
            constraints: Default::default(),
        };
        let assets = Assets {
            structures: vec![
                StructureDefinition {
                    name: "Tree".into(),
                    description: None,
                    fields: vec![f("parent", "object:Tree"), f("children", "object:Tree:array")],
                },
                StructureDefinition {
                    name: "A".into(),
                    description: None,
                    fields: vec![f("b", "object:B")],
                },
                StructureDefinition {
                    name: "B".into(),
                    description: None,
                    fields: vec![f("a", "object:A"), f("t", "object:Tree")],
                },
            ],
            ..Default::default()
        };
        let boxed = recursive_fields(&assets);
        let expected: BTreeSet<(String, String)> = [("Tree", "parent"), ("A", "b"), ("B", "a")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(boxed, expected);
    }

    #[test]
    fn keyword_enum_keys_become_valid_variants() {
        let assets = Assets {
            enums: vec![EnumDefinition {
                name: "Scope".into(),
                description: None,
                values: vec![
                    "self".into(),
                    "super".into(),
                    "crate".into(),
                    "type".into(),
                    "fn".into(),
                ],
            }],
            ..Default::default()
        };
        assert!(assets.validate().is_empty(), "{:?}", assets.validate());
        let tokens = generate(&assets, &quote!(::svc_sdk));
        let file: syn::File = syn::parse2(tokens.clone()).unwrap_or_else(|e| panic!("{e}: {tokens}"));
        let text = quote!(#file).to_string();
        assert!(text.contains("Self_"), "{text}");
    }

    #[test]
    fn generates_parseable_items() {
        let assets = Assets {
            enums: vec![EnumDefinition {
                name: "State".into(),
                description: None,
                values: vec!["in-progress".into(), "done".into()],
            }],
            structures: vec![StructureDefinition {
                name: "Job".into(),
                description: Some("A job".into()),
                fields: vec![
                    FieldDefinition {
                        name: "type".into(),
                        type_: "string".into(),
                        required: true,
                        description: None,
                        constraints: Default::default(),
                    },
                    FieldDefinition {
                        name: "stateNow".into(),
                        type_: "enum-value:State".into(),
                        required: false,
                        description: None,
                        constraints: Default::default(),
                    },
                ],
            }],
            secrets: vec![],
        };
        let tokens = generate(&assets, &quote!(::svc_sdk));
        let file: syn::File = syn::parse2(tokens).unwrap();
        let text = quote!(#file).to_string();
        assert!(text.contains("InProgress"));
        assert!(text.contains("r#type"));
        assert!(text.contains("state_now"));
    }
}
