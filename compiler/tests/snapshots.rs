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
        .filter(|e| e.path().join("svc.config.yaml").exists())
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
    let ir = lower::lower(&checked);
    emit::emit(
        &ir,
        &repo().join("snapshots").join(example),
        emit::Placement::Standalone,
    )
    .unwrap()
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
            expectorate::assert_contents(dir.join(&f.path), &f.text);
        }
        // No stale generated files (a route whose flow was removed).
        let expected: Vec<PathBuf> = files.iter().map(|f| dir.join(&f.path)).collect();
        let mut stack = vec![dir.join("src")];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap().flatten() {
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
                assert!(f.text.contains("@generated"), "{}: {}", example, f.path.display());
            }
            if f.path.starts_with("src/routes") && f.path.file_name().unwrap() != "mod.rs" {
                assert!(f.text.contains("from `flows/"), "{}: {}", example, f.path.display());
            }
        }
    }
}
