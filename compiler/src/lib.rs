//! The svc compiler.
//!
//! ```text
//! load (project) → check (check/) → lower → emit → build
//! ```
//!
//! See ARCHITECTURE.md at the repository root for a map of the code.

pub mod build;
pub mod check;
pub mod cli;
pub mod dev;
pub mod emit;
pub mod graph_render;
pub mod init;
pub mod lower;
pub mod openapi;
pub mod pgo;
pub mod project;
pub mod runner;
pub mod schema;
pub mod sources;
pub mod test;
pub mod typescript_env;
