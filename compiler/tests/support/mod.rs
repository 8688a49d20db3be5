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

/// Runs svc as a user would in a shell with no store configured (no `SVC_STORE`),
/// nothing on its standard input, and the workspace's target directory (dependencies are
/// already compiled there); returns (exit code, stdout, stderr).
pub fn svc(args: &[&str]) -> (i32, String, String) {
    let out = svc_command()
        .args(args)
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .env_remove("SVC_STORE")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    outcome(out)
}

/// An empty directory for one test, named by `label` and this process (parallel runs
/// never share one); whatever an earlier run left there is removed first.
pub fn scratch_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("svc-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of `examples/<example>` as committed, in [`scratch_dir`]`(label)`: a project a
/// test may change.
pub fn example_copy(example: &str, label: &str) -> PathBuf {
    let dir = scratch_dir(label);
    copy_committed(&repo().join("examples").join(example), &dir);
    dir
}

/// The `http://…` address a started server prints first on its piped stdout
/// (`listening on …`).
pub fn listening_address(server: &mut std::process::Child) -> String {
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(server.stdout.take().unwrap()), &mut line).unwrap();
    match line.trim().strip_prefix("listening on ") {
        Some(address) => address.to_string(),
        None => panic!("the server printed `{line}`, not its address"),
    }
}

/// The commands `svc --help` lists.
pub fn commands() -> Vec<String> {
    let (_, help, _) = svc(&["--help"]);
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // Descriptions that wrap continue on lines indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(commands.iter().any(|c| c == "check"), "{help}");
    commands
}

/// Fails, listing them, when the docs name `things` svc does not have.
pub fn assert_none_unknown(mut things: Vec<String>, what: &str) {
    things.sort();
    things.dedup();
    assert!(
        things.is_empty(),
        "{what} named in the docs that svc does not have: {things:?}"
    );
}

/// Makes each change (`from` → `to`, every occurrence) to the file at `path`; a `from`
/// the file does not hold fails the test, so that an edit never silently does nothing.
pub fn edit(path: &Path, changes: &[(&str, &str)]) {
    let mut text = std::fs::read_to_string(path).unwrap();
    for (from, to) in changes {
        assert!(text.contains(from), "{} has no `{from}`", path.display());
        text = text.replace(from, to);
    }
    std::fs::write(path, text).unwrap();
}

/// Fails unless `text` (what a command printed) holds each of `parts`, naming the first
/// that is missing.
pub fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no `{part}` in:\n{text}");
    }
}
