//! The node trait that `define_code_function_node!` implements, and
//! `build_manifest_from_node`.

use crate::context::RunContext;
use crate::failure::NodeResult;
use std::future::Future;
use svc_types::NodeManifest;

/// A code node. Implemented by `define_code_function_node!`; not by hand.
///
/// The macro generates, in the node's module: `Inputs` and `Outputs` structs (one field
/// per data pin, typed by the pin), `NODE_KEY`, an `async fn run`, and a unit struct
/// `Node` implementing this trait.
pub trait CodeFunctionNode: Send + Sync + 'static {
    /// The typed input values (`ctx.inputs`).
    /// Serializable too: `svc dev` shows a call's inputs in the Builder's traces.
    type Inputs: serde::de::DeserializeOwned + serde::Serialize + Send + Sync + 'static;
    /// The typed outputs `run` returns: exactly the declared output pins.
    type Outputs: serde::Serialize + Send + 'static;
    /// The stable `<namespace>.<node-name>` key.
    const NODE_KEY: &'static str;

    /// The publishable manifest (the definition without `run`).
    fn manifest() -> NodeManifest;

    /// Runs the node.
    fn run(ctx: &RunContext<Self::Inputs>) -> impl Future<Output = NodeResult<Self::Outputs>> + Send;
}

/// The publishable manifest of a node, without `run` (spec §2.7). Serializes to the
/// spec's camelCase JSON shape.
pub fn build_manifest_from_node<N: CodeFunctionNode>(_node: &N) -> NodeManifest {
    N::manifest()
}
