//! Fuzzes the whole front half of the compiler: load (YAML, `svc.config.yaml` or the
//! TypeScript `svc.config.ts`, flows, Rust node source, `svc test` files) and check, and
//! the translation of an accepted project's TypeScript nodes to Rust.
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
    let checked = check::check(&project, &mut diags);
    // What `svc build` does next with an accepted project's TypeScript: compile its nodes
    // to Rust (or say why not), which must not panic either.
    if !checked.has_errors {
        svc_compiler::lower::lower(&checked, svc_compiler::lower::TypeScriptNodes::Compiled);
    }
    let _ = svc_compiler::flow_tests::suite::load_from(&vfs, &mut project, &mut diags);
    // Rendering must not panic either.
    for d in diags.sorted(&project.sources) {
        let _ = d.render(&project.sources);
        let _ = d.to_json(&project.sources);
    }
});
