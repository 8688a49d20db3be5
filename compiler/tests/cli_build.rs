//! `svc build` as a user runs it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".svc" || name == "dist" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dst.join(name));
        } else {
            std::fs::copy(entry.path(), dst.join(name)).unwrap();
        }
    }
}

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
    copy_dir(&repo().join("examples/hello"), &dir);
    // The copy's node crate must find the SDK in this repository.
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("../../runtime/sdk", &repo().join("runtime/sdk").display().to_string());
    std::fs::write(&manifest, text).unwrap();

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
    copy_dir(&repo().join("examples/hello"), &dir);
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("../../runtime/sdk", &repo().join("runtime/sdk").display().to_string());
    std::fs::write(&manifest, text).unwrap();
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
