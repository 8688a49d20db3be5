//! # svc-sdk: write code nodes for svc
//!
//! The Rust counterpart of the spec's `@svc/sdk`, concept for concept:
//!
//! | spec (`@svc/sdk`)          | Rust (`svc_sdk`)                                  |
//! |----------------------------|---------------------------------------------------|
//! | `defineCodeFunctionNode`   | [`define_code_function_node!`]                    |
//! | `t.string()` …             | [`t::string()`] …, see [`pin`]                     |
//! | `seq.in()` / `seq.out()`   | [`seq::input()`] / [`seq::output()`]              |
//! | `ctx.inputs` …             | [`RunContext`]: `inputs`, `request`, `env`, `secret`, `log`, `fail`, `fetch` |
//! | `defineEnum` …             | [`define_enum`], [`define_structure`], [`define_secret`], [`collect_assets`] |
//! | `buildManifestFromNode`    | [`build_manifest_from_node`]                      |
//!
//! A node module:
//!
//! ```ignore
//! use svc_sdk::prelude::*;
//!
//! define_code_function_node! {
//!     node_key: "acme.price-order",
//!     name: "Price order",
//!     inputs: { order: t::structure("Order"), discount: t::number().optional() },
//!     outputs: { total: t::number() },
//!     run: |ctx| async move {
//!         let total: f64 = ctx.inputs.order.lines.iter().map(|l| l.price * l.quantity).sum();
//!         if total < 0.0 {
//!             return Err(ctx.fail("negative total", "NEGATIVE_TOTAL"));
//!         }
//!         ctx.log(format_args!("total {total}"));
//!         Ok(Outputs { total: total * (1.0 - ctx.inputs.discount.unwrap_or(0.0)) })
//!     },
//! }
//! ```
//!
//! `run` must return exactly the declared outputs: `Outputs` is a struct with one field
//! per output pin, so a missing, extra or mistyped output is a compile error.

pub mod assets;
pub mod context;
pub mod failure;
pub mod fetch;
mod js;
pub mod node;
mod only_maps;
pub mod pin;
pub mod testing;

pub use assets::{collect_assets, define_enum, define_secret, define_structure, field};
pub use context::{Env, Host, LogLine, RequestMeta, RunContext, Secret};
pub use failure::{FailureCode, NodeFailure, NodeResult};
pub use node::{CodeFunctionNode, build_manifest_from_node};
pub use pin::{PinBuilder, seq, t};
pub use svc_sdk_macros::{define_code_function_node, include_assets};
pub use svc_types::{
    Asset, Assets, EnumDefinition, EnumValue, FieldDefinition, NodeManifest, PinDefinition, PinKind, PinMap,
    SecretDefinition, StructureDefinition, TypeRef,
};

/// Any JSON value (the Rust type of `any` pins).
pub type Value = serde_json::Value;

/// A JSON object (the Rust type of `object` pins).
pub type Object = serde_json::Map<String, serde_json::Value>;

/// Everything a node module needs: `use svc_sdk::prelude::*;`.
pub mod prelude {
    pub use crate::fetch::{Headers, Request, Response, Url};
    pub use crate::{
        CodeFunctionNode, EnumValue, NodeFailure, NodeResult, Object, RunContext, Secret, Value,
        build_manifest_from_node, collect_assets, define_code_function_node, define_enum, define_secret,
        define_structure, field, seq, t,
    };
}

/// Used by generated code. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::failure::NodeAbort;
    /// The code of a [`NodeAbort`] for a call that found no room in the engine (every
    /// permit of `SVC_TS_CONCURRENCY` taken for as long as a call may run): answered 503
    /// with `Retry-After`.
    pub const NODE_BUSY: &str = "node_busy";
    /// JavaScript's semantics for TypeScript nodes compiled to Rust.
    pub mod js {
        pub use crate::js::*;
    }
    pub use crate::only_maps::OnlyMaps;
    pub use serde;
    pub use serde_json;

    /// Converts a pin's literal default into its Rust type. The compiler and the macro
    /// have checked the literal against the pin type, so failure means a bug in svc.
    pub fn default_value<T: serde::de::DeserializeOwned>(node_key: &str, pin: &str, json: &str) -> T {
        match serde_json::from_str(json) {
            Ok(v) => v,
            Err(e) => panic!("svc: the default of pin `{pin}` of node `{node_key}` does not fit its type: {e}"),
        }
    }
}
