//! The svc compiler.
//!
//! ```text
//! load (project) → check (check/) → lower → emit → build
//! ```
//!
//! See ARCHITECTURE.md at the repository root for a map of the code.

pub mod check;
pub mod emit;
pub mod flow_tests;
pub mod graph_render;
pub mod lower;
pub mod openapi;
pub mod pipeline;
pub mod project;
pub mod runner;
pub mod schema;
pub mod sources;
pub mod typescript_env;

// What the `svc` binary drives beyond the pipeline (the `cli` feature, on by default).
#[cfg(feature = "cli")]
pub mod build;
#[cfg(feature = "cli")]
pub mod builder;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod dev;
#[cfg(feature = "cli")]
pub mod init;
#[cfg(feature = "cli")]
pub mod keys;
#[cfg(feature = "cli")]
pub mod pgo;
#[cfg(feature = "cli")]
pub mod relink;
#[cfg(feature = "cli")]
pub mod workspace;
