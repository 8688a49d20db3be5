//! What a node definition and a project's config mean, for the node macro and the
//! compiler alike.
//!
//! - [`source`] and [`diagnostic`]: files, spans, and the problems found in them.
//! - [`yaml`]: YAML with a span on every node.
//! - [`config`]: `svc.config.yaml`'s assets (enums, structures, secret requirements).
//! - [`pin_language`]: the pin builders and modifiers, their meaning and rules, and their
//!   Rust and TypeScript spellings.
//! - [`node_def`]: a `define_code_function_node!` invocation, read with the pin language.
//! - [`rust_types`] and [`assets_codegen`]: the Rust a type, a node's I/O and the config's
//!   assets are written as, by the macro and by the emitter.
//!
//! The SDK's procedural macro depends on this crate and nothing else of svc's compiler;
//! reading a whole project (flows, tests, a node crate's sources) is `svc-frontend`'s job.

pub mod assets_codegen;
pub mod config;
pub mod diagnostic;
pub mod node_def;
pub mod pin_language;
pub mod rust_types;
pub mod source;
pub mod yaml;

pub use diagnostic::{Code, Diagnostic, Diagnostics, Severity};
pub use source::{FileId, SourceFile, SourceMap, Span};
