//! `svc build` as a user runs it.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::{copy_committed, repo};

fn build(dir: &Path, extra: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("build")
        .arg(dir)
        .args(extra)
        // The workspace's target directory: dependencies are already compiled there.
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn compiled(stderr: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.contains("Finished"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let n = line.split("compiled ").nth(1).unwrap().split(' ').next().unwrap();
    n.parse().unwrap()
}

#[test]
fn builds_one_binary_and_rebuilds_only_what_changed() {
    let dir = std::env::temp_dir().join(format!("svc-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // A copy of the example elsewhere, as it is committed (no `.svc/`): svc links the
    // copy's `.svc/source` itself, and nothing in the project names the repository.
    copy_committed(&repo().join("examples/hello"), &dir);

    let (code, stderr) = build(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let binary = dir.join("dist/hello");
    let out = Command::new(&binary).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("hello 0.1.0"),
        "{:?}",
        out
    );

    // Change one flow: only the generated server crate is compiled again.
    let flow = dir.join("flows/greeting.yaml");
    let text = std::fs::read_to_string(&flow)
        .unwrap()
        .replace("limit: 60", "limit: 61");
    std::fs::write(&flow, text).unwrap();
    let (code, stderr) = build(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(compiled(&stderr), 1, "only the server crate recompiles: {stderr}");
    let out = Command::new(&binary).arg("routes").output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("61/60s"),
        "the new binary has the change"
    );

    // -o puts the binary elsewhere.
    let other = dir.join("elsewhere/server");
    let (code, stderr) = build(&dir, &["-o", other.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(other.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rustc_errors_in_node_code_point_at_the_users_file() {
    let dir = std::env::temp_dir().join(format!("svc-build-error-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_committed(&repo().join("examples/hello"), &dir);
    let node = dir.join("src/nodes/greet.rs");
    let text = std::fs::read_to_string(&node).unwrap().replace(
        "Ok(Outputs { message, tone: ctx.inputs.tone })",
        "Ok(Outputs { message: 42, tone: ctx.inputs.tone })",
    );
    std::fs::write(&node, text).unwrap();
    let (code, stderr) = build(&dir, &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("error[E0308]: mismatched types"), "{stderr}");
    assert!(
        stderr.contains("--> src/nodes/greet.rs:"),
        "the path is relative to the project: {stderr}"
    );
    assert!(stderr.contains("the build failed with 1 error"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file of `dir` a project commits, for `needle`.
fn committed_files_mentioning(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if support::NOT_COMMITTED.contains(&entry.file_name().to_str().unwrap_or_default()) {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            found.extend(committed_files_mentioning(&entry.path(), needle));
        } else if std::fs::read_to_string(entry.path()).is_ok_and(|t| t.contains(needle)) {
            found.push(entry.path());
        }
    }
    found
}

#[test]
fn a_project_made_by_init_builds_after_it_moves() {
    let base = std::env::temp_dir().join(format!("svc-move-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let made = base.join("made-here");
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .arg("init")
        .arg(&made)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Nothing the project commits names svc's checkout or the cache.
    let link = std::fs::read_link(made.join(".svc/source")).unwrap();
    assert!(
        !link.starts_with(repo()),
        "the SDK comes from svc's carried copy, not the checkout: {link:?}"
    );
    for needle in [repo().display().to_string(), link.display().to_string()] {
        assert_eq!(
            committed_files_mentioning(&made, &needle),
            Vec::<PathBuf>::new(),
            "{needle}"
        );
    }

    // A teammate's clone elsewhere: the committed files only, no `.svc/`.
    let clone = base.join("elsewhere/clone");
    copy_committed(&made, &clone);
    assert!(!clone.join(".svc").exists());
    let (code, stderr) = build(&clone, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(clone.join("dist/made-here").exists());
    assert_eq!(std::fs::read_link(clone.join(".svc/source")).unwrap(), link);

    // Moved as a whole, its `.svc/` with it: the link still points at the same sources.
    let moved = base.join("moved");
    std::fs::rename(&clone, &moved).unwrap();
    let (code, stderr) = build(&moved, &[]);
    assert_eq!(code, 0, "{stderr}");
    let _ = std::fs::remove_dir_all(&base);
}
