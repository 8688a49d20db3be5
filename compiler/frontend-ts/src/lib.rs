//! svc's reader of TypeScript sources: `svc.config.ts` and code node modules, read
//! statically with oxc (nothing is run, Node.js is not needed), into the same models the
//! YAML and Rust readers of `svc-frontend` produce, with spans into the `.ts` files.
//!
//! A crate of its own so that oxc is compiled only by the svc binary: node crates (which
//! reach `svc-frontend` through the SDK's macros) never build it.
//!
//! - `position`: oxc's byte offsets to svc's lines and columns;
//! - `module`: parse one module; its imports, top-level `const`s and default export;
//! - `literal`: an expression read as data (the located tree the YAML reader makes);
//! - `config`: `svc.config.ts` into a `Config`;
//! - `pin`, `node`: a node module's `defineCodeFunctionNode({...})` into a manifest;
//! - `contract`: the runtime contract (spec §4.3) and the secrets a module reads;
//! - `nodes`: the project's node modules and the modules they import;
//! - `strip`: a checked module as the JavaScript the server's engine compiles.

pub mod config;
pub mod contract;
pub mod literal;
pub mod module;
pub mod native;
pub mod node;
pub mod nodes;
pub mod pin;
pub mod position;
pub mod strip;

pub use config::{CONFIG_FILE, load as load_config};
