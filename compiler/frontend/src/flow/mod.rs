//! Flow files: one YAML file per route (see `docs/flow-format.md`).
//!
//! [`model`] is what a flow file is read into: a spanned syntax tree of the route, its
//! request and its nodes. [`read`] reads a file into it and reports problems of form (unknown keys, wrong kinds of values, malformed references); [`node`] reads
//! one node, its type's keys coming from the table of built-in node types
//! (`svc_types::builtin_nodes`). Names and types are resolved and checked by the
//! compiler.

mod model;
mod node;
mod pem;
mod read;

pub use model::*;
pub use node::{MAX_WINDOW_SECS, parse_window, read_binding, read_reference, read_template, setting_problem};
pub use read::{load, param_names};
