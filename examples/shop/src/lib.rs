//! The code nodes of the `shop` example.

svc_sdk::include_assets!();

pub mod nodes;
