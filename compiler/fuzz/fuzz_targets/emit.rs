//! Fuzzes the back half: every project the checker accepts is lowered and emitted, and
//! every emitted Rust file must parse. Any panic is a bug.
//!
//! The slower mode behind `scripts/fuzz-build.sh`: with `SVC_FUZZ_ACCEPTED=DIR`, each
//! accepted project is also written to `DIR/<digest>/`, and the script then builds a
//! sample of them with `svc build`: a project the checker accepts must build.
//!
//! Run: `cargo +nightly fuzz run emit -- -max_total_time=60` from `compiler/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::hash::{Hash, Hasher};
use std::path::Path;
use svc_compiler::check;
use svc_compiler::project::Project;
use svc_frontend::Diagnostics;

fuzz_target!(|data: &[u8]| {
    let files = svc_fuzz::files(data);
    let vfs = svc_fuzz::vfs(&files);
    let root = Path::new(svc_fuzz::ROOT);
    let mut diags = Diagnostics::new();
    let project = Project::load_from(&vfs, root, &mut diags);
    let checked = check::check(&project, &mut diags);
    if checked.has_errors {
        return;
    }
    // As `svc build` emits it: TypeScript nodes compiled to Rust where they can be.
    let ir = svc_compiler::lower::lower(&checked, svc_compiler::lower::TypeScriptNodes::Compiled);
    let out = root.join(".svc/server");
    let layout = svc_compiler::pipeline::layout(root, &ir, &out);
    let emitted = svc_compiler::emit::emit(&ir, &layout).expect("an accepted project emits");
    for file in emitted.iter().filter(|f| f.path.extension().is_some_and(|e| e == "rs")) {
        let text = file.as_text().expect("Rust files are text");
        if let Err(e) = syn::parse_file(text) {
            panic!("emitted {} does not parse: {e}\n{text}", file.path.display());
        }
    }
    if let Some(dir) = std::env::var_os("SVC_FUZZ_ACCEPTED") {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        data.hash(&mut hasher);
        let project_dir = Path::new(&dir).join(format!("{:016x}", hasher.finish()));
        for (path, text) in &files {
            let file = project_dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
    }
});
