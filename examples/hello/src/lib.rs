//! The code nodes of the `hello` example.

svc_sdk::include_assets!();

pub mod nodes;
