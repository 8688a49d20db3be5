//! Where a project finds svc's own crates (svc-sdk for its nodes, svc-runtime for the
//! generated server) without a path to svc in any file it commits.
//!
//! The svc binary carries the sources of those crates (`build.rs`), with self-contained
//! manifests. The first command that needs them writes them, once per svc version and
//! content, into a cache directory every project shares (`~/.cache/svc/sources/…`, or
//! `SVC_CACHE_DIR`). Each project reaches them through `.svc/source`, a link inside its
//! own ignored `.svc/` directory: the node crate's `Cargo.toml` says
//! `svc-sdk = { path = ".svc/source/runtime/sdk" }`, and the generated crate points into
//! the same link. Every svc command that reads a project points the link at the running
//! svc's copy, so:
//!
//! - a moved or freshly cloned project builds after any svc command (`svc check` is
//!   enough), and nothing in it names svc's checkout or install;
//! - an svc installed with `cargo install`, whose source tree is gone, builds projects;
//! - every project links the same files, so a shared `CARGO_TARGET_DIR` compiles svc's
//!   crates once for all of them;
//! - a project always builds against the runtime of the svc that generated its code.

use crate::Error;
use std::path::{Path, PathBuf};

mod carried {
    include!(concat!(env!("OUT_DIR"), "/carried_sources.rs"));
}

/// The link, relative to the project directory, and the SDK crate inside it: what a node
/// crate's `Cargo.toml` names (and what `svc check` expects it to name).
pub use svc_frontend::node_crate::{SDK_PATH, SOURCE_LINK as LINK};

/// Points `DIR/.svc/source` at [`root`], unless it already does.
pub fn link(project_dir: &Path) -> Result<(), Error> {
    let target = root()?;
    let link = project_dir.join(LINK);
    if std::fs::read_link(&link).is_ok_and(|current| current == target) {
        return Ok(());
    }
    let parent = link.parent().expect("LINK has a parent");
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    // Replace whatever is there: a link to another svc's sources, or nothing. A real
    // directory is left alone: it is not ours to delete.
    let repointed = match std::fs::symlink_metadata(&link) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::remove_file(&link).map_err(|e| Error::io("replace", &link, e))?;
            true
        }
        Ok(_) => {
            return Err(Error::NotALink { path: link });
        }
        Err(_) => false,
    };
    symlink_dir(&target, &link).map_err(|source| Error::Link {
        link: link.clone(),
        target: target.clone(),
        source,
    })?;
    if repointed {
        mark_changed(&target);
    }
    Ok(())
}

/// Dates every carried file now. Cargo knows svc's crates by their path through the
/// link, which stays the same when the link is pointed at other sources, and judges them
/// by modification time: sources written before the project's last build (switching
/// back to an svc used before) would look unchanged, and the project would link the
/// runtime it was last built with. Other projects linked to the same sources rebuild
/// svc's crates once. Best effort: a cache this user cannot write keeps its dates.
fn mark_changed(root: &Path) {
    let now = std::time::SystemTime::now();
    for (path, _) in carried::FILES {
        if let Ok(file) = std::fs::OpenOptions::new().write(true).open(root.join(path)) {
            let _ = file.set_modified(now);
        }
    }
}

#[cfg(unix)]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

/// The cache directory: `SVC_CACHE_DIR`, else `$XDG_CACHE_HOME/svc`, else `~/.cache/svc`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SVC_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("svc"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("svc"))
}

/// The tree of svc crates this svc builds projects against: the carried sources, written
/// into the cache once per version and content.
pub fn root() -> Result<PathBuf, Error> {
    let cache = cache_dir()
        .ok_or_else(|| Error::Environment("no cache directory for svc's sources: set SVC_CACHE_DIR or HOME".into()))?;
    let dir = cache
        .join("sources")
        .join(format!("{}-{}", env!("CARGO_PKG_VERSION"), carried::HASH));
    let complete = dir.join(".complete");
    if complete.is_file() {
        return Ok(dir);
    }
    // Write beside, then rename: a concurrent svc sees all of it or none of it.
    let staging = cache
        .join("sources")
        .join(format!(".staging-{}-{}", carried::HASH, std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let write = || -> std::io::Result<()> {
        for (path, bytes) in carried::FILES {
            let file = staging.join(path);
            std::fs::create_dir_all(file.parent().expect("a file has a parent"))?;
            std::fs::write(file, bytes)?;
        }
        std::fs::write(staging.join(".complete"), "")
    };
    write().map_err(|e| Error::io("write svc's sources into", &staging, e))?;
    if std::fs::rename(&staging, &dir).is_err() {
        // Another svc finished first: use its copy.
        let _ = std::fs::remove_dir_all(&staging);
        if !complete.is_file() {
            let unfinished = std::io::Error::other("another svc wrote an unfinished copy there");
            return Err(Error::io("write svc's sources into", &dir, unfinished));
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_carries_self_contained_crates() {
        let paths: Vec<&str> = carried::FILES.iter().map(|(p, _)| *p).collect();
        for needed in [
            "Cargo.lock",
            "runtime/sdk/Cargo.toml",
            "runtime/sdk/src/lib.rs",
            "runtime/macros/src/lib.rs",
            "runtime/server/src/lib.rs",
            "compiler/syntax/src/lib.rs",
            "runtime/script/src/prelude.js",
        ] {
            assert!(paths.contains(&needed), "{needed} is not carried");
        }
        // What only the compiler reads (flows, test files, node-crate scanning) stays
        // behind: node crates build svc-syntax, not svc-frontend.
        assert!(
            !paths.iter().any(|p| p.starts_with("compiler/frontend/")),
            "svc-frontend is carried"
        );
        // `@svc/sdk` as `npm pack` would publish it: every file its package.json lists.
        let package: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk-ts/package.json")).unwrap(),
        )
        .unwrap();
        for file in package["files"]
            .as_array()
            .unwrap()
            .iter()
            .chain([&serde_json::json!("package.json")])
        {
            let carried = format!("sdk-ts/{}", file.as_str().unwrap());
            assert!(
                paths.contains(&carried.as_str()),
                "{carried} is not carried (compiler/build.rs PACKAGES)"
            );
        }
        assert!(!paths.iter().any(|p| p.contains("/tests/")), "tests stay behind");
        for (path, bytes) in carried::FILES.iter().filter(|(p, _)| p.ends_with("/Cargo.toml")) {
            let manifest: toml::Table = std::str::from_utf8(bytes).unwrap().parse().unwrap();
            let text = toml::to_string(&manifest).unwrap();
            assert!(!text.contains("workspace"), "{path} inherits from a workspace:\n{text}");
            assert!(!manifest.contains_key("dev-dependencies"), "{path}");
            // Every path dependency is another carried crate.
            let dir = std::path::Path::new(path).parent().unwrap();
            for dep in manifest["dependencies"].as_table().unwrap().values() {
                if let Some(rel) = dep.get("path").and_then(|p| p.as_str()) {
                    let target = normalize(&dir.join(rel).join("Cargo.toml"));
                    assert!(paths.contains(&target.as_str()), "{path}: {rel} is not carried");
                }
            }
        }
    }

    fn normalize(path: &Path) -> String {
        let mut parts: Vec<String> = Vec::new();
        for c in path.components() {
            match c {
                std::path::Component::ParentDir => {
                    parts.pop();
                }
                c => parts.push(c.as_os_str().to_string_lossy().into_owned()),
            }
        }
        parts.join("/")
    }
}
