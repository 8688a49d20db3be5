//! The front end of svc: everything that reads a project into typed, spanned models.
//!
//! - [`flow`]: a route's flow file.
//! - [`testfile`]: a flow test file.
//! - [`node_crate`]: the node crate's sources, scanned for node definitions.
//! - [`vfs`]: the project's files, from disk or from memory.
//! - [`yaml_edit`]: format-preserving edits of YAML files (the Builder's saves).
//!
//! What the node macro reads as well (config, node definitions, YAML, diagnostics) is
//! `svc-syntax`'s, re-exported here under the same paths so that the compiler names one
//! front end.

pub mod flow;
pub mod node_crate;
pub mod testfile;
pub mod vfs;
pub mod yaml_edit;

pub use svc_syntax::{Code, Diagnostic, Diagnostics, Severity};
pub use svc_syntax::{FileId, SourceFile, SourceMap, Span};
pub use svc_syntax::{assets_codegen, config, diagnostic, node_def, pin_language, rust_types, source, yaml};
