//! Source files and spans.
//!
//! A [`Span`] is a file, a 1-based line and column (in characters, as editors count
//! them) and a length on that line. Both readers produce them: YAML through
//! serde-saphyr's locations, Rust through proc-macro2's span locations.

use std::path::{Path, PathBuf};

/// Index of a file in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A place in a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub file: FileId,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// Length in characters on `line` (at least 1 when rendered).
    pub len: u32,
}

impl Span {
    pub fn new(file: FileId, line: u32, column: u32, len: u32) -> Self {
        Span {
            file,
            line,
            column,
            len,
        }
    }

    /// The span of a whole file (line 1, column 1), for problems without a better place.
    pub fn file_start(file: FileId) -> Self {
        Span {
            file,
            line: 1,
            column: 1,
            len: 0,
        }
    }

    /// The span of a proc-macro2 token (requires the `span-locations` feature when
    /// used outside a procedural macro).
    pub fn from_proc_macro(file: FileId, span: proc_macro2::Span) -> Self {
        let start = span.start();
        let end = span.end();
        let len = if end.line == start.line {
            end.column.saturating_sub(start.column)
        } else {
            1
        };
        Span {
            file,
            line: start.line as u32,
            column: start.column as u32 + 1,
            len: len as u32,
        }
    }
}

/// One loaded file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as shown to users: relative to the project root when possible.
    pub display_path: String,
    /// The path on disk (absent for in-memory sources in tests and the fuzzer).
    pub disk_path: Option<PathBuf>,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(display_path: impl Into<String>, disk_path: Option<PathBuf>, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            display_path: display_path.into(),
            disk_path,
            text,
            line_starts,
        }
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line(&self, line: u32) -> Option<&str> {
        let idx = (line as usize).checked_sub(1)?;
        let start = *self.line_starts.get(idx)?;
        let end = self.line_starts.get(idx + 1).copied().unwrap_or(self.text.len());
        Some(self.text[start..end].trim_end_matches(['\n', '\r']))
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

/// Every file a compilation read, addressed by [`FileId`].
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(self.files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(i as u32), f))
    }

    /// The file with this display path, if loaded.
    pub fn find(&self, display_path: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.display_path == display_path)
            .map(|i| FileId(i as u32))
    }
}

/// `path` relative to `root` with `/` separators, for display; `path` itself otherwise.
pub fn display_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let f = SourceFile::new("a.yaml", None, "one\r\ntwo\nthree".into());
        assert_eq!(f.line(1), Some("one"));
        assert_eq!(f.line(2), Some("two"));
        assert_eq!(f.line(3), Some("three"));
        assert_eq!(f.line(4), None);
        assert_eq!(f.line(0), None);
    }
}
