//! Rust expressions for values: reading a wire (a reference or an `Option` of one),
//! turning it into the owned type a pin wants, and writing literals.

use crate::lower::{PinTarget, RootIr, ValueIr};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use svc_frontend::rust_types::{RustPaths, ident, rust_type};
use svc_types::{Assets, TypeRef};

/// How generated route code names the locals of a flow.
pub trait Names {
    fn output(&self, node: usize) -> proc_macro2::Ident;
    fn failure(&self, node: usize) -> proc_macro2::Ident;
    fn identity(&self, node: usize) -> proc_macro2::Ident;
}

pub fn paths() -> RustPaths {
    RustPaths {
        sdk: quote!(::svc_sdk),
        assets: Some(quote!(crate::assets)),
    }
}

/// The request input field of a query parameter / header / path parameter.
pub fn query_field(name: &str) -> proc_macro2::Ident {
    format_ident!("query_{}", svc_types::case::to_snake(name))
}

pub fn header_field(name: &str) -> proc_macro2::Ident {
    format_ident!("header_{}", svc_types::case::to_snake(name))
}

pub fn param_field(name: &str) -> proc_macro2::Ident {
    format_ident!("param_{}", svc_types::case::to_snake(name))
}

/// What an access expression is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A place of type `T` (`out_price.quote.total`).
    Place,
    /// A value of type `&T` (`fail_price.message()`).
    Ref,
    /// A value of type `Option<&T>`.
    OptRef,
}

/// An expression reading a wire.
pub struct Access {
    pub expr: TokenStream,
    pub kind: Kind,
}

impl Access {
    pub fn is_option(&self) -> bool {
        self.kind == Kind::OptRef
    }

    /// The value as `&T` (or `&Option<&T>` for an optional one: both serialize).
    pub fn reference(&self) -> TokenStream {
        let e = &self.expr;
        match self.kind {
            Kind::Place | Kind::OptRef => quote!(&#e),
            Kind::Ref => quote!(#e),
        }
    }
}

/// An expression reading `v`.
pub fn access(v: &ValueIr, names: &dyn Names) -> Access {
    let (mut expr, mut kind) = match (&v.root, root_place(v, names)) {
        (_, Some((place, false))) => (place, Kind::Place),
        (_, Some((place, true))) => (quote!(#place.as_ref()), Kind::OptRef),
        (RootIr::FailureMessage { node }, None) => {
            let local = names.failure(*node);
            (quote!(#local.message()), Kind::Ref)
        }
        (RootIr::FailureCode { node }, None) => {
            let local = names.failure(*node);
            (quote!(#local.code()), Kind::OptRef)
        }
        (RootIr::Identity { node, field }, None) if field == "claims" => {
            // A Check JWT's claims: a structure, read in place.
            let local = names.identity(*node);
            (quote!(#local.claims), Kind::Place)
        }
        (RootIr::Identity { node, field }, None) => {
            // Read an identity's strings as `&str`.
            let local = names.identity(*node);
            let f = ident(field);
            (quote!(&*#local.#f), Kind::Ref)
        }
        (_, None) => unreachable!("root_place reads every other root"),
    };
    for step in &v.steps {
        if step.json {
            let key = &step.field;
            expr = match kind {
                Kind::OptRef => quote!(#expr.and_then(|v| v.get(#key))),
                _ => quote!(#expr.get(#key)),
            };
            kind = Kind::OptRef;
            continue;
        }
        let f = ident(&step.field);
        (expr, kind) = match (kind, step.optional, step.boxed) {
            (Kind::OptRef, false, false) => (quote!(#expr.map(|v| &v.#f)), Kind::OptRef),
            (Kind::OptRef, false, true) => (quote!(#expr.map(|v| &*v.#f)), Kind::OptRef),
            (Kind::OptRef, true, false) => (quote!(#expr.and_then(|v| v.#f.as_ref())), Kind::OptRef),
            (Kind::OptRef, true, true) => (quote!(#expr.and_then(|v| v.#f.as_deref())), Kind::OptRef),
            (_, false, false) => (quote!(#expr.#f), Kind::Place),
            (_, false, true) => (quote!((*#expr.#f)), Kind::Place),
            (_, true, false) => (quote!(#expr.#f.as_ref()), Kind::OptRef),
            (_, true, true) => (quote!(#expr.#f.as_deref()), Kind::OptRef),
        };
    }
    Access { expr, kind }
}

/// An owned `target` from a value of type `source`, given as a place (`v.to_owned()`
/// clones it) or a reference.
fn convert(v: TokenStream, source: &TypeRef, target: &TypeRef, source_is_struct: bool) -> TokenStream {
    match (source, target) {
        (_, TypeRef::Any) => quote!(::svc_runtime::convert::to_value(&#v)),
        (TypeRef::Object, TypeRef::Object) if source_is_struct => quote!(::svc_runtime::convert::to_object(&#v)),
        (TypeRef::Structure(_), TypeRef::Object) => quote!(::svc_runtime::convert::to_object(&#v)),
        (TypeRef::Enum(_), TypeRef::String) => quote!(#v.value().to_owned()),
        (TypeRef::Array(a), TypeRef::Array(b)) if a != b => {
            let inner = convert(quote!(e), a, b, false);
            quote!(#v.iter().map(|e| #inner).collect::<Vec<_>>())
        }
        _ => quote!(#v.to_owned()),
    }
}

/// An owned copy of `v` (`T`, or `Option<T>` when it may be absent), for a held local.
pub fn owned_copy(v: &ValueIr, names: &dyn Names) -> TokenStream {
    let a = access(v, names);
    let expr = a.expr;
    match a.kind {
        Kind::OptRef => quote!(#expr.cloned()),
        Kind::Place | Kind::Ref => quote!(#expr.to_owned()),
    }
}

/// Where the root of `v` lives when it is a local or a field of one (request inputs,
/// outputs, held copies), and whether it is an `Option` there; `None` for values read
/// through a method or a reference (failures, identities).
fn root_place(v: &ValueIr, names: &dyn Names) -> Option<(TokenStream, bool)> {
    Some(match &v.root {
        RootIr::Body { .. } | RootIr::BodyStruct => (quote!(req.body), false),
        RootIr::BodyField { name, optional } => {
            let f = ident(&svc_types::case::to_snake(name));
            (quote!(req.body.#f), *optional)
        }
        RootIr::Query { name, optional } => {
            let f = query_field(name);
            (quote!(req.#f), *optional)
        }
        RootIr::Header { name, optional } => {
            let f = header_field(name);
            (quote!(req.#f), *optional)
        }
        RootIr::Param { name } => {
            let f = param_field(name);
            (quote!(req.#f), false)
        }
        RootIr::Output { node, pin, optional } => {
            let local = names.output(*node);
            let f = ident(&svc_types::names::pin_field(pin));
            (quote!(#local.#f), *optional)
        }
        RootIr::Held { name } => {
            let local = format_ident!("{}", name);
            (quote!(#local), v.optional)
        }
        RootIr::FailureMessage { .. } | RootIr::FailureCode { .. } | RootIr::Identity { .. } => return None,
    })
}

/// The place a movable value lives in (`req.body.lines`, `out_price.quote`): of type `T`,
/// or `Option<T>` when its last step is optional (see `ValueIr::movable`).
fn place(v: &ValueIr, names: &dyn Names) -> TokenStream {
    let Some((mut expr, _)) = root_place(v, names) else {
        unreachable!(
            "lowering moves only request inputs, outputs and held copies, not {:?}",
            v.root
        )
    };
    for step in &v.steps {
        let f = ident(&step.field);
        expr = quote!(#expr.#f);
    }
    expr
}

/// The expression filling a pin by moving the value out of its place (its last read; the
/// types are the same, see `lower::moves`).
pub fn moved_input(v: &ValueIr, pin: &PinTarget, names: &dyn Names, assets: &Assets) -> TokenStream {
    let place = place(v, names);
    match (v.optional, pin.option, &pin.default) {
        (false, false, _) | (true, true, _) => place,
        (false, true, _) => quote!(Some(#place)),
        (true, false, Some(default)) => {
            let d = literal(default, &pin.ty, assets);
            quote!(#place.unwrap_or_else(|| #d))
        }
        // The checker refuses an optional value for a required pin without a default.
        (true, false, None) => quote!(::core::unreachable!("svc: an optional value for a required pin")),
    }
}

/// The expression filling a pin from a wire.
pub fn wire_input(v: &ValueIr, pin: &PinTarget, names: &dyn Names, assets: &Assets) -> TokenStream {
    let a = access(v, names);
    let expr = match a.kind {
        // `&*key.user`: parenthesized, so that a method call applies to the reference.
        Kind::Ref => {
            let e = &a.expr;
            quote!((#e))
        }
        Kind::Place | Kind::OptRef => a.expr.clone(),
    };
    let source_is_struct = matches!(v.root, RootIr::BodyStruct) && v.steps.is_empty();
    let conv = convert(quote!(v), &v.ty, &pin.ty, source_is_struct);
    match (a.is_option(), pin.option, &pin.default) {
        (false, false, _) => convert(expr, &v.ty, &pin.ty, source_is_struct),
        (false, true, _) => {
            let c = convert(expr, &v.ty, &pin.ty, source_is_struct);
            quote!(Some(#c))
        }
        (true, true, _) => quote!(#expr.map(|v| #conv)),
        (true, false, Some(default)) => {
            let d = literal(default, &pin.ty, assets);
            quote!(#expr.map(|v| #conv).unwrap_or_else(|| #d))
        }
        // The checker refuses an optional value for a required pin without a default.
        (true, false, None) => quote!(::core::unreachable!("svc: an optional value for a required pin")),
    }
}

/// A literal of type `ty` (checked against the type by `svc check`).
pub fn literal(json: &serde_json::Value, ty: &TypeRef, assets: &Assets) -> TokenStream {
    use serde_json::Value as J;
    match (ty, json) {
        (TypeRef::String, J::String(s)) => quote!(String::from(#s)),
        (TypeRef::Number, J::Number(n)) => {
            let f = Literal::f64_suffixed(n.as_f64().unwrap_or(0.0));
            quote!(#f)
        }
        (TypeRef::Boolean, J::Bool(b)) => quote!(#b),
        (TypeRef::Enum(name), J::String(s)) => {
            let e = format_ident!("{}", name);
            let variant = assets
                .enum_named(name)
                .and_then(|def| def.find_value(s))
                .map(|v| format_ident!("{}", v.rust_variant()))
                .expect("svc check: an enum literal is one of the enum's values");
            quote!(crate::assets::#e::#variant)
        }
        (TypeRef::Array(inner), J::Array(items)) => {
            let items = items.iter().map(|i| literal(i, inner, assets));
            quote!(vec![#(#items),*])
        }
        (TypeRef::Structure(name), J::Object(map)) => {
            let def = assets.structure_named(name).expect("svc check: the structure exists");
            let s = format_ident!("{}", name);
            let boxed = svc_frontend::assets_codegen::recursive_fields(assets);
            let fields = def.fields.iter().map(|f| {
                let fi = ident(&f.rust_name());
                let fty = f.type_ref().unwrap_or(TypeRef::Any);
                let value = map
                    .get(&f.name)
                    .filter(|v| !v.is_null())
                    .map(|v| literal(v, &fty, assets));
                let is_boxed = boxed.contains(&(name.clone(), f.name.clone()));
                let value = value.map(|v| {
                    if is_boxed {
                        quote!(::std::boxed::Box::new(#v))
                    } else {
                        v
                    }
                });
                match (value, f.required) {
                    (Some(v), true) => quote!(#fi: #v),
                    (Some(v), false) => quote!(#fi: Some(#v)),
                    (None, _) => quote!(#fi: None),
                }
            });
            quote!(crate::assets::#s { #(#fields),* })
        }
        (TypeRef::Object, _) => {
            let text = json.to_string();
            quote!(::svc_runtime::convert::object_literal(#text))
        }
        (_, _) => {
            let text = json.to_string();
            quote!(::svc_runtime::convert::json_literal(#text))
        }
    }
}

/// The Rust type of a pin in `Inputs`.
pub fn pin_type(pin: &PinTarget) -> TokenStream {
    let t = rust_type(&pin.ty, &paths());
    if pin.option { quote!(Option<#t>) } else { t }
}
