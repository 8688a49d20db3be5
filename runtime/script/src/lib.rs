//! svc's engine for code nodes written in TypeScript (issue 12): QuickJS (through
//! rquickjs), with no Node.js at build or run time.
//!
//! - [`compile`]: svc compiles a project's modules (stripped of their types by
//!   `svc-frontend-ts`'s bundler) to bytecode, at `svc build` / `svc emit` time;
//! - [`bundle`]: the bytecode of every module in one embedded byte string;
//! - [`engine`]: the generated server runs a node's `run(ctx)` from it, with typed inputs,
//!   outputs checked against the pins, a memory limit and a deadline.
//!
//! A crate of its own, depended on by svc and by generated servers with TypeScript
//! nodes only: Rust-only projects and node crates never build QuickJS.

pub mod bundle;
pub mod compile;
#[cfg(feature = "engine")]
mod convert;
#[cfg(feature = "engine")]
pub mod engine;
#[cfg(feature = "engine")]
mod heap;
#[cfg(feature = "engine")]
mod raw;
#[cfg(feature = "engine")]
mod web;

pub use compile::compile;
#[cfg(feature = "engine")]
pub use engine::{DEFAULT_LIMITS, Engine, Limits};
