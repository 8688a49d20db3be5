//! `run` must return exactly the declared outputs, and a node definition that tools
//! cannot read must not compile. Each case under `tests/ui/` has the expected rustc
//! message beside it. Refresh them with `TRYBUILD=overwrite cargo test -p svc-sdk --test compile_fail`
//! and review the diff like code.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
