//! End to end: each example's generated crate (its committed snapshot) is built once per
//! run, in the workspace's target directory, and its binary is driven over real HTTP:
//! every output of every protection node, code node outputs, structure and enum round
//! trips, `ctx.fail`, secrets, 400, 404 and 405.

mod cluster;
mod conformance;
mod deploy;
mod harness;
mod hello;
mod helpdesk;
mod hooks;
mod jwt;
mod native;
mod pin_constraints;
mod shop;
mod signature;
#[path = "../support/mod.rs"]
mod support;
mod ts_corpus;
