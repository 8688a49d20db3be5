//! What the fuzz targets share: how fuzz input becomes a project.
//!
//! The input is split at NUL bytes into: the config, up to three flow files, a node
//! module, and a test file (`tests/t.yaml`). Seeds in `seeds/` are the example projects
//! in that form.

use std::path::{Path, PathBuf};
use svc_frontend::vfs::Memory;

/// The project directory inside the in-memory file system.
pub const ROOT: &str = "/p";

/// The files of the project `data` describes: (path in the project, text).
pub fn files(data: &[u8]) -> Vec<(PathBuf, String)> {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let mut files = vec![
        (PathBuf::from("svc.config.yaml"), parts.next().unwrap_or_default().to_string()),
        (
            PathBuf::from("Cargo.toml"),
            "[package]\nname = \"fuzz-nodes\"\nversion = \"0.1.0\"\nedition = \"2024\"\n".to_string(),
        ),
        (
            PathBuf::from("src/lib.rs"),
            "svc_sdk::include_assets!();\npub mod node;\n".to_string(),
        ),
    ];
    for i in 0..3 {
        // An empty part is no file: a project with one flow has two empty slots.
        if let Some(flow) = parts.next().filter(|f| !f.is_empty()) {
            files.push((PathBuf::from(format!("flows/f{i}.yaml")), flow.to_string()));
        }
    }
    files.push((PathBuf::from("src/node.rs"), parts.next().unwrap_or_default().to_string()));
    if let Some(tests) = parts.next() {
        files.push((PathBuf::from("tests/t.yaml"), tests.to_string()));
    }
    files
}

/// The same files in memory, under [`ROOT`].
pub fn vfs(files: &[(PathBuf, String)]) -> Memory {
    let root = Path::new(ROOT);
    files
        .iter()
        .fold(Memory::new(), |vfs, (path, text)| vfs.with(root.join(path), text.clone()))
}
