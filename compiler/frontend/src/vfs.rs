//! Where project files are read from: the disk, or memory (tests and the fuzzer).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub trait Vfs: Sync {
    fn read(&self, path: &Path) -> Option<String>;
    /// The files directly in `dir`, sorted.
    fn list(&self, dir: &Path) -> Vec<PathBuf>;
    fn is_dir(&self, path: &Path) -> bool;
}

/// The real filesystem.
pub struct Disk;

impl Vfs for Disk {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        out.sort();
        out
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
}

/// Files held in memory, keyed by path.
#[derive(Default, Clone)]
pub struct Memory {
    pub files: BTreeMap<PathBuf, String>,
}

impl Memory {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        self.files.insert(path.into(), text.into());
        self
    }
}

impl Vfs for Memory {
    fn read(&self, path: &Path) -> Option<String> {
        self.files.get(path).cloned()
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for p in self.files.keys() {
            if let Ok(rest) = p.strip_prefix(dir)
                && let Some(first) = rest.components().next()
            {
                let child = dir.join(first.as_os_str());
                if !out.contains(&child) {
                    out.push(child);
                }
            }
        }
        out.sort();
        out
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.files.keys().any(|p| p.starts_with(path) && p != path)
    }
}
