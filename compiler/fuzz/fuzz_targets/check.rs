//! Fuzzes the whole front half of the compiler: load (YAML, `svc.config.yaml` or the
//! TypeScript `svc.config.ts`, flows, Rust node source, `svc test` files) and check.
//! Any panic is a bug: bad input must become diagnostics.
//!
//! Run: `cargo +nightly fuzz run check -- -max_total_time=60` from `compiler/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use svc_compiler::check;
use svc_compiler::project::Project;
use svc_frontend::Diagnostics;

fuzz_target!(|data: &[u8]| {
    let vfs = svc_fuzz::vfs(&svc_fuzz::files(data));
    let mut diags = Diagnostics::new();
    let mut project = Project::load_from(&vfs, Path::new(svc_fuzz::ROOT), &mut diags);
    let _ = check::check(&project, &mut diags);
    let _ = svc_compiler::test::suite::load_from(&vfs, &mut project, &mut diags);
    // Rendering must not panic either.
    for d in diags.sorted(&project.sources) {
        let _ = d.render(&project.sources);
        let _ = d.to_json(&project.sources);
    }
});
