//! The deployment example of docs/deploy.md, run as a user would: `scripts/cluster-demo.sh`
//! starts Redis, PostgreSQL, three shop instances and nginx on loopback, and checks a
//! shared limit and a revocation through the balancer.

use crate::harness::{binary, repo};
use crate::support::assert_contains;
use std::process::Command;

#[test]
fn the_cluster_demo_of_the_deployment_guide_passes() {
    let out = Command::new("bash")
        .arg(repo().join("scripts/cluster-demo.sh"))
        .env("SVC", env!("CARGO_BIN_EXE_svc"))
        .env("SHOP", binary("shop"))
        .env_remove("SVC_STORE")
        .env_remove("KEEP")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_contains(&stdout, &["20 passed, 5 limited", "cluster demo passed"]);
}
