//! The code nodes of the `hooks` example.

svc_sdk::include_assets!();

pub mod crypto;
pub mod nodes;
