//! What the fuzz targets share: how fuzz input becomes a project.
//!
//! Two forms:
//! - split at NUL bytes into: the config, up to three flow files, a Rust node module,
//!   and a test file (`tests/t.yaml`);
//! - when it starts with `//- `, files named by `//- path` lines, as the diagnostics
//!   corpus writes them: any project, such as one with `svc.config.ts` and TypeScript
//!   node modules in `src/nodes/`.
//!
//! Seeds in `seeds/` are the example projects in one form or the other.

use std::path::{Path, PathBuf};
use svc_frontend::vfs::Memory;

/// The project directory inside the in-memory file system.
pub const ROOT: &str = "/p";

/// The files of the project `data` describes: (path in the project, text).
pub fn files(data: &[u8]) -> Vec<(PathBuf, String)> {
    let text = String::from_utf8_lossy(data);
    if text.starts_with("//- ") {
        return sections(&text);
    }
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

/// The files of the `//- path` form; a path that would leave the project is left out.
fn sections(text: &str) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(path) = line.strip_prefix("//- ") {
            files.push((PathBuf::from(path.trim()), String::new()));
        } else if let Some((_, body)) = files.last_mut() {
            body.push_str(line);
        }
    }
    files.retain(|(path, _)| {
        !path.as_os_str().is_empty()
            && path
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
    });
    files
}

/// The same files in memory, under [`ROOT`].
pub fn vfs(files: &[(PathBuf, String)]) -> Memory {
    let root = Path::new(ROOT);
    files
        .iter()
        .fold(Memory::new(), |vfs, (path, text)| vfs.with(root.join(path), text.clone()))
}
