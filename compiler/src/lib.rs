//! The svc compiler.
//!
//! ```text
//! load (project) → check (check/) → lower → emit → build
//! ```
//!
//! See ARCHITECTURE.md at the repository root for a map of the code.

/// Items only the `svc` binary needs, beyond the pipeline: each is compiled with the
/// `cli` feature (on by default; the library alone, for the fuzz targets, goes without).
macro_rules! cli_only {
    ($($item:item)*) => { $( #[cfg(feature = "cli")] $item )* };
}

pub mod check;
pub mod emit;
pub mod error;
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

pub use error::Error;

// What the `svc` binary drives beyond the pipeline.
cli_only! {
    pub mod build;
    pub mod builder;
    pub mod cli;
    pub mod dev;
    pub mod init;
    pub mod keys;
    pub mod pgo;
    pub mod relink;
    pub mod watch;
    pub mod workspace;
}
