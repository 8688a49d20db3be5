//! The files of a project that are watched for changes: what `svc dev` rebuilds on, and
//! what the Builder's page is told about (its project's revision) so that it reads the
//! project again only when one of them changed.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What is watched: every file under these, with its modification time and size.
pub type Fingerprint = Vec<(PathBuf, Option<SystemTime>, u64)>;

/// Every watched file of the project at `dir`, in path order.
pub fn fingerprint(dir: &Path) -> Fingerprint {
    let mut out = Vec::new();
    for top in ["svc.config.yaml", "svc.config.ts", "Cargo.toml", "flows", "src"] {
        collect(&dir.join(top), &mut out);
    }
    // TypeScript modules may import from anywhere in the project, and the config may put
    // the nodes elsewhere (`nodes`): every other `.ts` file is watched too.
    typescript_elsewhere(dir, dir, &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The `.ts` files of the project outside what `fingerprint` already watches, and outside
/// what is not the user's (dependencies, build output, hidden directories).
fn typescript_elsewhere(root: &Path, dir: &Path, out: &mut Fingerprint) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            // `src` and `flows` are watched whole above; dependencies anywhere are not ours.
            let skipped =
                name == "node_modules" || dir == root && ["src", "flows", "target", "dist"].contains(&name.as_ref());
            if !skipped {
                typescript_elsewhere(root, &path, out);
            }
        } else if (name.ends_with(".ts") || name.ends_with(".mts")) && !(dir == root && name == "svc.config.ts") {
            collect(&path, out);
        }
    }
}

/// The files that differ between two fingerprints (added, removed or changed).
pub fn changed<'a>(before: &'a Fingerprint, after: &'a Fingerprint) -> Vec<&'a Path> {
    let mut out: Vec<&Path> = after
        .iter()
        .filter(|entry| !before.contains(entry))
        .chain(before.iter().filter(|entry| !after.iter().any(|a| a.0 == entry.0)))
        .map(|entry| entry.0.as_path())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn collect(path: &Path, out: &mut Fingerprint) {
    let Ok(meta) = std::fs::metadata(path) else { return };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        for e in entries.flatten() {
            let name = e.file_name();
            // Editor swap and backup files change constantly and mean nothing.
            let name = name.to_string_lossy();
            // The Builder's positions (`flows/<route>.layout.json`) change no server.
            if name.starts_with('.') || name.ends_with('~') || name.ends_with(".swp") || name.ends_with(".layout.json")
            {
                continue;
            }
            collect(&e.path(), out);
        }
    } else {
        out.push((path.to_path_buf(), meta.modified().ok(), meta.len()));
    }
}

/// The project's revision: a digest of its watched files' names, sizes and modification
/// times, and of the bytes of its flows and config. Two readings of an unchanged project
/// give the same revision; a change to a flow or the config changes it even within one
/// tick of the file system's clock (the bytes are read: they are small).
pub fn revision(dir: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let flows = dir.join("flows");
    for (path, modified, len) in fingerprint(dir) {
        (&path, modified, len).hash(&mut hasher);
        let described = path.starts_with(&flows) || path.parent() == Some(dir);
        if described && let Ok(bytes) = std::fs::read(&path) {
            bytes.hash(&mut hasher);
        }
    }
    format!("{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_changed_within_one_clock_tick_is_a_new_revision() {
        let dir = std::env::temp_dir().join(format!("svc-revision-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("flows")).unwrap();
        std::fs::write(dir.join("svc.config.yaml"), "project_name: p\n").unwrap();
        let flow = dir.join("flows/a.yaml");
        std::fs::write(&flow, "route: a\n").unwrap();
        let first = revision(&dir);
        assert_eq!(revision(&dir), first, "unchanged");
        // Same size, and the modification time put back: only the bytes differ.
        let modified = std::fs::metadata(&flow).unwrap().modified().unwrap();
        std::fs::write(&flow, "route: b\n").unwrap();
        std::fs::File::options().write(true).open(&flow).unwrap().set_modified(modified).unwrap();
        assert_ne!(revision(&dir), first, "the bytes changed");
        // The Builder's positions are not the project's.
        let second = revision(&dir);
        std::fs::write(dir.join("flows/a.layout.json"), "{}").unwrap();
        assert_eq!(revision(&dir), second);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
