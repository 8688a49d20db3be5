//! Helpers for svc's benchmarks.

pub mod synth;
