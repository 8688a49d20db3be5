//! The front end of svc: everything that reads a project into typed, spanned models.
//!
//! - [`source`] and [`diagnostic`]: files, spans, and the problems found in them.
//! - [`yaml`]: YAML with a span on every node.
//!
//! This crate is shared by the compiler (`svc`) and by the SDK's procedural macros, so
//! that a node definition means the same thing to both.

pub mod assets_codegen;
pub mod config;
pub mod diagnostic;
pub mod flow;
pub mod node_crate;
pub mod node_def;
pub mod rust_types;
pub mod source;
pub mod testfile;
pub mod vfs;
pub mod yaml;

pub use diagnostic::{Code, Diagnostic, Diagnostics, Severity};
pub use source::{FileId, SourceFile, SourceMap, Span};
