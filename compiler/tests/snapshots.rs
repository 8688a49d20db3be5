//! The generated crate of every example is committed under `snapshots/<example>/`.
//! This test regenerates each one and fails on any difference, so a change to generated
//! code is reviewed like a change to source. Accept an intended change with
//!
//! ```sh
//! EXPECTORATE=overwrite cargo test -p svc --test snapshots
//! ```
//!
//! and read the diff. The end-to-end tests build these crates, so a snapshot is proven
//! both unchanged and buildable.

mod support;

use std::path::PathBuf;
use support::repo;
use svc_compiler::{check, emit, lower, project::Project};
use svc_frontend::Diagnostics;

fn examples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("examples"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("svc.config.yaml").exists() || e.path().join("svc.config.ts").exists())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

fn generate(example: &str) -> Vec<emit::File> {
    let dir = repo().join("examples").join(example);
    let mut diags = Diagnostics::new();
    let project = Project::load(&dir, &mut diags);
    let checked = check::check(&project, &mut diags);
    assert!(
        !checked.has_errors,
        "{example} has errors: {:?}",
        diags.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let ir = lower::lower(&checked, lower::TypeScriptNodes::Compiled);
    let out = repo().join("snapshots").join(example);
    let node_crate = ir.node_crate.as_ref().map(|k| k.dir.as_path());
    let layout = emit::Layout::new(&dir, node_crate, &out, emit::Placement::Standalone);
    emit::emit(&ir, &layout).unwrap()
}

#[test]
fn every_example_has_a_snapshot() {
    let examples = examples();
    assert!(examples.len() >= 3);
    for e in &examples {
        assert!(
            repo().join("snapshots").join(e).join("Cargo.toml").exists(),
            "no snapshot for example `{e}`: run `svc emit examples/{e} --out snapshots/{e}`"
        );
    }
}

#[test]
fn snapshots_match_the_generated_code() {
    for example in examples() {
        let dir = repo().join("snapshots").join(&example);
        let files = generate(&example);
        for f in &files {
            match f.as_text() {
                Some(text) => expectorate::assert_contents(dir.join(&f.path), text),
                None => assert_bytes(&dir.join(&f.path), f.as_bytes()),
            }
        }
        // No stale generated files (a route whose flow was removed).
        let expected: Vec<PathBuf> = files.iter().map(|f| dir.join(&f.path)).collect();
        let mut stack = vec![dir.join("src"), dir.join(emit::SCRIPTS_DIR)];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for entry in entries.flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    assert!(
                        expected.contains(&p),
                        "`{}` is no longer generated: delete it",
                        p.display()
                    );
                }
            }
        }
    }
}

/// A binary file (the TypeScript nodes' bytecode) matches, as expectorate does for text:
/// the e2e tests build the snapshot crates, so the snapshot holds the real bytes.
fn assert_bytes(path: &std::path::Path, generated: &[u8]) {
    let on_disk = std::fs::read(path).ok();
    if on_disk.as_deref() == Some(generated) {
        return;
    }
    if std::env::var("EXPECTORATE").as_deref() == Ok("overwrite") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, generated).unwrap();
        return;
    }
    panic!(
        "`{}` differs from what svc generates ({} bytes on disk, {} generated): run with EXPECTORATE=overwrite and review",
        path.display(),
        on_disk.map_or(0, |b| b.len()),
        generated.len()
    );
}

#[test]
fn generation_is_deterministic() {
    for example in examples() {
        assert_eq!(generate(&example), generate(&example), "{example}");
    }
}

#[test]
fn every_generated_file_says_it_is_generated_and_names_its_source() {
    for example in examples() {
        for f in generate(&example) {
            if f.path.extension().is_some_and(|e| e == "rs" || e == "toml") {
                assert!(
                    f.as_text().unwrap().contains("@generated"),
                    "{}: {}",
                    example,
                    f.path.display()
                );
            }
            if f.path.starts_with("src/routes") && f.path.file_name().unwrap() != "mod.rs" {
                assert!(
                    f.as_text().unwrap().contains("from `flows/"),
                    "{}: {}",
                    example,
                    f.path.display()
                );
            }
        }
    }
}
