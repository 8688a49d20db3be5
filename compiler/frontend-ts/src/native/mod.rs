//! TypeScript nodes compiled to Rust: a node's `run`, and the helpers it calls, translated
//! into Rust that the server calls directly, with no engine in between.
//!
//! Only a subset is translated (docs/sdk.md, "Compiled to Rust"): the
//! straight-line, typed code most nodes are made of. Types come from the values, not from
//! annotations (which JavaScript does not check): `ctx.inputs` from the pins, a structure's
//! fields from the config, everything else from the expressions. A node with anything
//! outside the subset is not translated ([`NotNative`] says what and where) and runs in
//! the engine, as every node does in `svc dev`.
//!
//! The translation must answer exactly what the engine answers. Where a value could make
//! JavaScript do something the translation does not model (a key missing from a lookup
//! table, a non-ASCII string to upper-case, a number an output cannot hold), the Rust
//! stops with `Exit::Deopt` and the server runs the call again in the engine: the
//! translated code has no side effects before it returns, so that is not observable.
//!
//! - `types`: the values the subset knows, and their Rust types;
//! - `scope`: locals, narrowed optionals, the callbacks being translated;
//! - `expr`, `stmt`: expressions and statements;
//! - `program`: modules, constant tables, helper functions, the node's `run`.

mod expr;
mod program;
mod scope;
mod stmt;
mod types;

pub use program::{Source, translate};

use svc_frontend::Span;

/// Why a node is not compiled to Rust: the first construct outside the subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotNative {
    pub span: Span,
    pub reason: String,
}

impl NotNative {
    fn new(span: Span, reason: impl Into<String>) -> Self {
        NotNative {
            span,
            reason: reason.into(),
        }
    }
}

type Result<T> = std::result::Result<T, NotNative>;
