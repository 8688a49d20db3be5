//! Where project files are read from: the disk, or memory (tests and the fuzzer).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub trait Vfs: Sync {
    /// The file's bytes, or `None` when it cannot be read.
    fn read_bytes(&self, path: &Path) -> Option<Vec<u8>>;

    /// The file as text: `Missing` when it cannot be read, `NotUtf8` (with the place of
    /// the first bad byte) when it is not UTF-8, so that the loader reports that one
    /// problem instead of checking a file whose content it lost.
    fn read(&self, path: &Path) -> Result<String, ReadError> {
        let bytes = self.read_bytes(path).ok_or(ReadError::Missing)?;
        String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8(NotUtf8::at(e.as_bytes(), e.utf8_error())))
    }
    /// The files directly in `dir`, sorted.
    fn list(&self, dir: &Path) -> Vec<PathBuf>;
    fn is_dir(&self, path: &Path) -> bool;

    /// The files under `dir` at any depth (not the directories), sorted by path.
    fn files_under(&self, dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        let mut dirs = vec![dir.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for path in self.list(&dir) {
                if self.is_dir(&path) {
                    dirs.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }
}

/// Why a file could not be read as text.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    Missing,
    NotUtf8(NotUtf8),
}

/// A file that is not UTF-8: where its first bad byte is, and the text with bad bytes
/// replaced (for showing the line in the diagnostic, never for checking).
#[derive(Debug, Clone, PartialEq)]
pub struct NotUtf8 {
    pub line: u32,
    pub column: u32,
    pub lossy: String,
}

impl NotUtf8 {
    fn at(bytes: &[u8], error: std::str::Utf8Error) -> NotUtf8 {
        let valid = &bytes[..error.valid_up_to()];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // The prefix is valid UTF-8, so the column counts characters, like every span.
        let column = std::str::from_utf8(&valid[line_start..]).map_or(1, |l| l.chars().count() + 1);
        NotUtf8 {
            line: valid.iter().filter(|&&b| b == b'\n').count() as u32 + 1,
            column: column as u32,
            lossy: String::from_utf8_lossy(bytes).into_owned(),
        }
    }

    /// Reports the file once, at its first bad byte: it joins `sources` as `shown`, with
    /// bad bytes replaced, so that the diagnostic can show the line.
    pub fn report(
        self,
        shown: &str,
        path: std::path::PathBuf,
        sources: &mut crate::SourceMap,
        diags: &mut crate::Diagnostics,
    ) {
        let file = sources.add(crate::SourceFile::new(shown, Some(path), self.lossy));
        diags.push(
            crate::Diagnostic::new(
                crate::Code::Io,
                crate::source::Span::new(file, self.line, self.column, 1),
                format!("`{shown}` is not valid UTF-8"),
            )
            .label("the first byte that is not UTF-8")
            .help("save the file as UTF-8 (svc reads every project file as UTF-8 text); nothing else in this file was checked"),
        );
    }
}

/// The real filesystem.
pub struct Disk;

impl Vfs for Disk {
    fn read_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        std::fs::read(path).ok()
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
    pub files: BTreeMap<PathBuf, Vec<u8>>,
}

impl Memory {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(self, path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        self.with_bytes(path, text.into().into_bytes())
    }

    pub fn with_bytes(mut self, path: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.insert(path.into(), bytes.into());
        self
    }
}

impl Vfs for Memory {
    fn read_bytes(&self, path: &Path) -> Option<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bad_byte_is_placed_by_line_and_character() {
        let vfs = Memory::new()
            .with_bytes("a", b"ok: 1\nname: \xc3\xa9t\xe9\n".to_vec())
            .with("b", "fine");
        match vfs.read(Path::new("a")) {
            Err(ReadError::NotUtf8(n)) => {
                assert_eq!((n.line, n.column), (2, 9), "after `name: ét`");
                assert!(n.lossy.contains('\u{fffd}'));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(vfs.read(Path::new("b")).unwrap(), "fine");
        assert_eq!(vfs.read(Path::new("c")), Err(ReadError::Missing));
    }
}
