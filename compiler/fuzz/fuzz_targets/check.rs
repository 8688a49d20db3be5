//! Fuzzes the whole front half of the compiler: load (YAML, config, flows, Rust node
//! source) and check. Any panic is a bug: bad input must become diagnostics.
//!
//! The input is split at NUL bytes into: the config, up to three flow files, and a node
//! module. Seeds in `../seeds` are the example projects in that form.
//!
//! Run: `cargo +nightly fuzz run check -- -max_total_time=60` from `compiler/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use svc_compiler::check;
use svc_compiler::project::Project;
use svc_frontend::vfs::Memory;
use svc_frontend::Diagnostics;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let root = Path::new("/p");
    let mut vfs = Memory::new()
        .with(root.join("svc.config.yaml"), parts.next().unwrap_or_default())
        .with(root.join("Cargo.toml"), "[package]\nname = \"fuzz-nodes\"\n")
        .with(root.join("src/lib.rs"), "svc_sdk::include_assets!();\npub mod node;\n");
    for i in 0..3 {
        if let Some(flow) = parts.next() {
            vfs = vfs.with(root.join(format!("flows/f{i}.yaml")), flow);
        }
    }
    vfs = vfs.with(root.join("src/node.rs"), parts.next().unwrap_or_default());
    let mut diags = Diagnostics::new();
    let project = Project::load_from(&vfs, root, &mut diags);
    let _ = check::check(&project, &mut diags);
    // Rendering must not panic either.
    for d in diags.sorted(&project.sources) {
        let _ = d.render(&project.sources);
        let _ = d.to_json(&project.sources);
    }
});
