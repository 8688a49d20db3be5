//! What the CLI tests share: where the repository is, svc's binary and what it printed,
//! and copies of projects as a user commits them. Each test binary uses its part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// svc's own binary, with colour off: its messages are compared as text.
pub fn svc_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_svc"));
    command.env("NO_COLOR", "1");
    command
}

/// A finished command's exit code (-1 if a signal ended it), standard output and
/// standard error.
pub fn outcome(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// What a project does not commit: build output, svc's own `.svc/` (links included), and
/// the packages npm installs for a TypeScript project.
pub const NOT_COMMITTED: &[&str] = &["target", ".svc", "dist", "node_modules"];

/// Copies the project at `src` to `dst` as committed, as a teammate's clone has it.
pub fn copy_committed(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if NOT_COMMITTED.contains(&name.to_str().unwrap_or_default()) {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_committed(&entry.path(), &dst.join(name));
        } else {
            std::fs::copy(entry.path(), dst.join(name)).unwrap();
        }
    }
}
