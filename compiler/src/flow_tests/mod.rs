//! `svc test`: flow tests in YAML (`tests/*.yaml`), run over real HTTP against the
//! project's own server, with flow coverage.
//!
//! The pipeline: check the project and the test files (`suite`), build the server once
//! (debug, the shared target directory), then per test file start it on a free loopback
//! port with a fresh store holding that file's fixtures (`server`), run each case
//! (`case`), stop it, and report like `cargo test`; the traces of every response give the
//! coverage (`coverage`).

pub mod coverage;
pub mod suite;

// Running the cases: a server, an HTTP client.
cli_only! {
    pub mod case;
    pub mod report;
    mod run;
    pub mod server;
    pub mod train;
    pub use run::{CaseResult, Options, client, run};
}
