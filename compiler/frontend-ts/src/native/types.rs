//! The values the subset knows, how each is held in Rust, and how a translated expression
//! is handed from one part of the translation to the next ([`Val`]).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use svc_types::TypeRef;

/// What an optional value is in JavaScript when it is absent: a structure's optional
/// field is left out of its object (`undefined`); an optional input pin is `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    Undefined,
    Null,
}

/// A value's type, as the subset sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// A JavaScript number: `f64`.
    Num,
    Bool,
    /// A string: `String`, or `&'static str` for literals ([`Kind::Static`]).
    Str,
    /// A value of a config enum: the generated Rust enum, its wire value as a string.
    Enum(String),
    /// A config structure: the generated Rust struct.
    Struct(String),
    Array(Box<Ty>),
    /// An object literal the code builds: a struct of the translation (`Record0`).
    Record(usize),
    /// A value that may be absent: `Option<T>`.
    Opt(Box<Ty>, Absent),
    /// `ctx.inputs`: the node's `Inputs`.
    Inputs,
    /// The `undefined` and `null` literals, only compared with or assigned to optionals.
    Undefined,
    Null,
}

impl Ty {
    /// From a config or pin type; `None` for `any` and `object`, which the subset leaves
    /// to the engine.
    pub fn from_type_ref(t: &TypeRef) -> Option<Ty> {
        Some(match t {
            TypeRef::String => Ty::Str,
            TypeRef::Number => Ty::Num,
            TypeRef::Boolean => Ty::Bool,
            TypeRef::Enum(name) => Ty::Enum(name.clone()),
            TypeRef::Structure(name) => Ty::Struct(name.clone()),
            TypeRef::Array(inner) => Ty::Array(Box::new(Ty::from_type_ref(inner)?)),
            TypeRef::Any | TypeRef::Object => return None,
        })
    }

    /// Whether Rust copies it (reading never clones).
    pub fn is_copy(&self) -> bool {
        matches!(self, Ty::Num | Ty::Bool | Ty::Enum(_))
    }

    /// Whether it is text in JavaScript (a string or an enum's value).
    pub fn is_text(&self) -> bool {
        matches!(self, Ty::Str | Ty::Enum(_))
    }

    /// Its Rust type, in the node's `native` module.
    pub fn rust(&self) -> TokenStream {
        match self {
            Ty::Num => quote!(f64),
            Ty::Bool => quote!(bool),
            Ty::Str => quote!(::std::string::String),
            Ty::Enum(name) | Ty::Struct(name) => {
                let name = format_ident!("{}", name);
                quote!(crate::assets::#name)
            }
            Ty::Array(inner) => {
                let inner = inner.rust();
                quote!(::std::vec::Vec<#inner>)
            }
            Ty::Record(id) => {
                let name = record_ident(*id);
                quote!(#name)
            }
            Ty::Opt(inner, _) => {
                let inner = inner.rust();
                quote!(::core::option::Option<#inner>)
            }
            Ty::Inputs => quote!(super::Inputs),
            Ty::Undefined | Ty::Null => quote!(()),
        }
    }

    /// How TypeScript would name it, for messages.
    pub fn describe(&self) -> String {
        match self {
            Ty::Num => "number".into(),
            Ty::Bool => "boolean".into(),
            Ty::Str => "string".into(),
            Ty::Enum(name) => format!("a `{name}` value"),
            Ty::Struct(name) => format!("a `{name}`"),
            Ty::Array(inner) => format!("an array of {}", inner.describe()),
            Ty::Record(_) => "an object".into(),
            Ty::Opt(inner, Absent::Undefined) => format!("{} or undefined", inner.describe()),
            Ty::Opt(inner, Absent::Null) => format!("{} or null", inner.describe()),
            Ty::Inputs => "`ctx.inputs`".into(),
            Ty::Undefined => "undefined".into(),
            Ty::Null => "null".into(),
        }
    }
}

pub fn record_ident(id: usize) -> proc_macro2::Ident {
    format_ident!("Record{}", id)
}

/// How a translated expression holds its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A new value: take it as it is.
    Owned,
    /// A place (a field of the inputs, a local): read through it, clone to keep it.
    Place,
    /// A `&'static str` (string literals and what is made of them).
    Static,
}

/// A translated expression: its type, its Rust, and the path it reads, when it reads one
/// (`order.couponCode`: what a check for `undefined` narrows).
#[derive(Debug, Clone)]
pub struct Val {
    pub ty: Ty,
    pub code: TokenStream,
    pub kind: Kind,
    /// The path, when the expression is one whose root is never assigned again.
    pub path: Option<String>,
    /// The local (or `ctx.inputs`) a place is read through, assigned again or not.
    pub root: Option<String>,
}

impl Val {
    pub fn owned(ty: Ty, code: TokenStream) -> Val {
        Val {
            ty,
            code,
            kind: Kind::Owned,
            path: None,
            root: None,
        }
    }

    /// A place of the generated code (a binding of a `match`, a record's field) that is
    /// not read through any local: `root` is where its data comes from, when known.
    pub fn place(ty: Ty, code: TokenStream, root: Option<String>) -> Val {
        Val {
            ty,
            code,
            kind: Kind::Place,
            path: None,
            root,
        }
    }

    /// The value, owned: places are cloned, literals made `String`s.
    pub fn own(&self) -> TokenStream {
        let code = &self.code;
        match (self.kind, self.ty.is_copy()) {
            (_, true) | (Kind::Owned, _) => code.clone(),
            (Kind::Static, _) => quote!(::std::string::String::from(#code)),
            (Kind::Place, _) => quote!((#code).clone()),
        }
    }

    /// A text value as `&str`.
    pub fn as_str(&self) -> TokenStream {
        let code = &self.code;
        match (&self.ty, self.kind) {
            (Ty::Enum(_), _) => quote!((#code).value()),
            (_, Kind::Static) => code.clone(),
            _ => quote!((#code).as_str()),
        }
    }
}
