//! What a node crate is read into: its nodes, where their parts are written, the secrets
//! its code reads, and the files beside it that are none of its modules.

use crate::node_def::NodeDef;
use crate::source::{FileId, Span};
use std::path::PathBuf;
use svc_types::NodeManifest;

/// A code node found in the crate.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub manifest: NodeManifest,
    pub spans: NodeSourceSpans,
    pub file: FileId,
    /// Whether the node may read `ctx.request` (conservatively: any `.request` in its
    /// module, or `ctx` handed to another function). When not, generated code does not
    /// build the request metadata for it.
    pub uses_request: bool,
    /// Where its code is, and in which language.
    pub code: NodeCode,
}

/// Where a node's code is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeCode {
    /// A `define_code_function_node!` of the node crate, at this module path from the
    /// crate root: `["nodes", "price_order"]`.
    Rust { module_path: Vec<String> },
    /// The default export of a TypeScript module, named by its path in the project:
    /// `src/nodes/price-order.ts`.
    TypeScript { module: String },
}

/// Where a node's parts are written.
#[derive(Debug, Clone)]
pub struct NodeSourceSpans {
    pub definition: Span,
    pub node_key: Span,
    /// Per input pin, in order: the id and the builder expression.
    pub inputs: Vec<(Span, Span)>,
    pub outputs: Vec<(Span, Span)>,
}

impl NodeSourceSpans {
    pub(super) fn new(file: FileId, def: &NodeDef) -> Self {
        let convert = |pins: &[(proc_macro2::Span, proc_macro2::Span)]| {
            pins.iter()
                .map(|(a, b)| (Span::from_proc_macro(file, *a), Span::from_proc_macro(file, *b)))
                .collect()
        };
        NodeSourceSpans {
            definition: Span::from_proc_macro(file, def.spans.definition),
            node_key: Span::from_proc_macro(file, def.spans.node_key),
            inputs: convert(&def.spans.inputs),
            outputs: convert(&def.spans.outputs),
        }
    }
}

/// A `ctx.secret("NAME")` call.
#[derive(Debug, Clone)]
pub struct SecretUse {
    pub name: String,
    pub span: Span,
}

/// What was read from the node crate.
#[derive(Debug, Clone, Default)]
pub struct NodeCrate {
    pub dir: PathBuf,
    /// The package name from `Cargo.toml`.
    pub package_name: String,
    /// The package version from `Cargo.toml` (a literal one; not one inherited from a
    /// workspace), which the generated server takes as its own.
    pub version: Option<String>,
    /// The name Rust code uses for the crate (`-` replaced by `_`).
    pub crate_name: String,
    pub nodes: Vec<NodeInfo>,
    pub secrets: Vec<SecretUse>,
    /// Where the crate root calls `include_assets!` (which makes `crate::assets`), if it does.
    pub include_assets: Option<Span>,
    pub files: Vec<FileId>,
    /// `.rs` files under `src/` that no `mod` reaches, with the node key each defines:
    /// a node written there is not part of the crate (a newcomer forgets `pub mod`).
    pub outside_crate: Vec<OutsideFile>,
    /// Whether a file of the crate could not be read or parsed, or a node definition in
    /// it was refused (already reported): its nodes are unknown, so flows that use them
    /// get no second, misleading error.
    pub unreadable: bool,
}

/// A source file of the node crate's directory that is not one of its modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideFile {
    /// As users see it: `src/nodes/hello.rs`.
    pub path: String,
    /// Where its `mod` line belongs: `src/nodes/mod.rs`.
    pub parent: String,
    /// The module name to declare: `hello`.
    pub module: String,
    /// The `node_key: "…"` the file defines, if it defines one.
    pub node_key: Option<String>,
}
