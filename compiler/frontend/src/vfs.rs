//! Where project files are read from: the disk, or memory (tests and the fuzzer).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub trait Vfs: Sync {
    /// The file's bytes: `Missing` when there is none, `Unreadable` when it is there but
    /// may not be read (a special file; for [`Confined`], a link leading out of the
    /// project).
    fn read_bytes(&self, path: &Path) -> Result<Vec<u8>, ReadError>;

    /// The file as text: `Missing` when it cannot be read, `Unreadable` when it is not
    /// UTF-8 (with the place of the first bad byte) or may not be read, so that the
    /// loader reports that one problem instead of checking a file whose content it lost.
    fn read(&self, path: &Path) -> Result<String, ReadError> {
        let bytes = self.read_bytes(path)?;
        String::from_utf8(bytes).map_err(|e| ReadError::Unreadable(Unreadable::not_utf8(e.as_bytes(), e.utf8_error())))
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
    Unreadable(Unreadable),
}

/// A file that is there but whose text svc does not check: not UTF-8 (where its first bad
/// byte is, and the text with bad bytes replaced, for showing the line in the diagnostic,
/// never for checking), or refused (a FIFO, a device, a link out of the project).
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    pub line: u32,
    pub column: u32,
    pub lossy: String,
    pub why: Why,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    NotUtf8,
    /// Not read at all: what the file is, and what to do.
    Refused {
        what: String,
        help: String,
    },
}

impl Unreadable {
    fn not_utf8(bytes: &[u8], error: std::str::Utf8Error) -> Unreadable {
        let valid = &bytes[..error.valid_up_to()];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // The prefix is valid UTF-8, so the column counts characters, like every span.
        let column = std::str::from_utf8(&valid[line_start..]).map_or(1, |l| l.chars().count() + 1);
        Unreadable {
            line: valid.iter().filter(|&&b| b == b'\n').count() as u32 + 1,
            column: column as u32,
            lossy: String::from_utf8_lossy(bytes).into_owned(),
            why: Why::NotUtf8,
        }
    }

    fn refused(what: impl Into<String>, help: impl Into<String>) -> ReadError {
        ReadError::Unreadable(Unreadable {
            line: 1,
            column: 1,
            lossy: String::new(),
            why: Why::Refused {
                what: what.into(),
                help: help.into(),
            },
        })
    }

    /// Reports the file once: it joins `sources` as `shown` (with bad bytes replaced, so
    /// that the diagnostic can show the line; empty when it was not read).
    pub fn report(
        self,
        shown: &str,
        path: std::path::PathBuf,
        sources: &mut crate::SourceMap,
        diags: &mut crate::Diagnostics,
    ) {
        let file = sources.add(crate::SourceFile::new(shown, Some(path), self.lossy));
        let at = crate::source::Span::new(file, self.line, self.column, 1);
        let diagnostic = match self.why {
            Why::NotUtf8 => crate::Diagnostic::new(crate::Code::Io, at, format!("`{shown}` is not valid UTF-8"))
                .label("the first byte that is not UTF-8")
                .help("save the file as UTF-8 (svc reads every project file as UTF-8 text); nothing else in this file was checked"),
            Why::Refused { what, help } => crate::Diagnostic::new(crate::Code::Io, at, format!("`{shown}` is {what}"))
                .label("not read")
                .help(help),
        };
        diags.push(diagnostic);
    }
}

/// The real filesystem. Links are followed, as every command-line tool follows them;
/// a FIFO or a device is refused rather than read (a read could wait forever).
pub struct Disk;

impl Vfs for Disk {
    fn read_bytes(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        regular_file::read(path, regular_file::Links::Follow)
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        list_dir(dir)
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
}

fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// The project directory and nothing outside it: what the Builder reads a project
/// through. A project opened in the Builder may have been cloned from anyone, and what
/// the Builder reads it shows (diagnostics quote lines), so no read leaves the project:
/// a path whose links resolve outside it, a file with a second hard link, a FIFO or a
/// device is refused with a diagnostic, and a linked directory is not walked into.
pub struct Confined {
    /// The project as the loader names it (paths under it are the project's files).
    given: PathBuf,
    /// The project's canonical path.
    root: PathBuf,
}

impl Confined {
    /// The project at `root`; `None` when it does not exist.
    pub fn new(root: &Path) -> Option<Confined> {
        Some(Confined {
            given: root.to_path_buf(),
            root: root.canonicalize().ok()?,
        })
    }

    /// Where `path`, one of the project's files, leads, if that is inside the project.
    fn inside(&self, path: &Path) -> Result<PathBuf, ReadError> {
        let real = match path.canonicalize() {
            Ok(real) => real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A link to nothing is refused, not missing: it is not the user's file.
                return match std::fs::symlink_metadata(path) {
                    Ok(_) => Err(outside()),
                    Err(_) => Err(ReadError::Missing),
                };
            }
            Err(_) => return Err(ReadError::Missing),
        };
        if real.starts_with(&self.root) {
            Ok(real)
        } else {
            Err(outside())
        }
    }
}

fn outside() -> ReadError {
    Unreadable::refused(
        "a symbolic link that leads out of the project",
        "the Builder reads only the project's own files: replace the link with the file it points to (`svc check` follows links)",
    )
}

impl Vfs for Confined {
    fn read_bytes(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        if !path.starts_with(&self.given) {
            // Not one of the project's files (a node crate's workspace manifest above
            // it): the user's own directories, read as `svc check` reads them.
            return regular_file::read(path, regular_file::Links::Follow);
        }
        let real = self.inside(path)?;
        regular_file::read(&real, regular_file::Links::Refuse)
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        if !self.is_dir(dir) {
            return Vec::new();
        }
        list_dir(dir)
    }

    /// A directory of the project itself; a linked one is listed as a file (and refused
    /// if it is ever read).
    fn is_dir(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) && self.inside(path).is_ok()
    }
}

/// Reading a file only if it is a regular one: opened without blocking (a FIFO would
/// otherwise wait for a writer), then checked on the open descriptor, so that what is
/// checked is what is read.
pub mod regular_file {
    use super::{ReadError, Unreadable};
    use std::io::Read;
    use std::path::Path;

    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Links {
        /// Symbolic links are followed; a file with several hard links is read.
        Follow,
        /// The last component must not be a symbolic link, and the file must have one
        /// hard link (another would be a second name, perhaps outside the project).
        Refuse,
    }

    pub fn read(path: &Path, links: Links) -> Result<Vec<u8>, ReadError> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let nofollow = if links == Links::Refuse { libc::O_NOFOLLOW } else { 0 };
            options.custom_flags(libc::O_NONBLOCK | nofollow);
        }
        let mut file = match options.open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::Missing),
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(Unreadable::refused(
                    "a symbolic link",
                    "the Builder reads only the project's own files: replace the link with the file it points to",
                ));
            }
            Err(_) => return Err(ReadError::Missing),
        };
        let meta = file.metadata().map_err(|_| ReadError::Missing)?;
        if meta.is_dir() {
            return Err(ReadError::Missing);
        }
        if !meta.is_file() {
            return Err(Unreadable::refused(
                "not a regular file (a FIFO, a socket or a device)",
                "svc reads project files as text: replace it with a regular file",
            ));
        }
        #[cfg(unix)]
        if links == Links::Refuse && std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            return Err(Unreadable::refused(
                "a file with more than one hard link",
                "the Builder reads only files that are the project's alone: replace the link with a copy (`cp --remove-destination`)",
            ));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.read_to_end(&mut bytes).map_err(|_| ReadError::Missing)?;
        Ok(bytes)
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
    fn read_bytes(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        self.files.get(path).cloned().ok_or(ReadError::Missing)
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
            Err(ReadError::Unreadable(n)) => {
                assert_eq!(n.why, Why::NotUtf8);
                assert_eq!((n.line, n.column), (2, 9), "after `name: ét`");
                assert!(n.lossy.contains('\u{fffd}'));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(vfs.read(Path::new("b")).unwrap(), "fine");
        assert_eq!(vfs.read(Path::new("c")), Err(ReadError::Missing));
    }
}
