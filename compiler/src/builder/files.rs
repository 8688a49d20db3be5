//! The files the Builder reads and writes itself: flows and their layouts, in the
//! project's `flows/`.
//!
//! A project opened in the Builder may have been cloned from anyone, and opening it must
//! be as safe as reading it. So nothing here follows a link: `flows/` must be the
//! project's own directory, a flow or layout file a regular file with one name (a
//! symbolic link, a second hard link, a FIFO or a device is refused with a message), and
//! every write goes to a file created exclusively under a random name beside its target
//! (`O_CREAT | O_EXCL`, which no planted link can redirect), then renamed over it or
//! linked in, as git's lock files are.

use std::io::Write;
use std::path::{Path, PathBuf};
use svc_frontend::vfs::{ReadError, Why, regular_file};

/// Why the Builder will not touch a file: a sentence for the user.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

const NOT_FOLLOWED: &str =
    "the Builder reads and writes only the project's own files; replace the link with the file itself";

/// The project's `flows/` directory: a directory of its own, or not there yet.
pub fn flows_dir(project: &Path) -> Result<PathBuf, Refused> {
    let dir = project.join("flows");
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(dir),
        Ok(m) if m.file_type().is_symlink() => Err(Refused(format!("`flows/` is a symbolic link: {NOT_FOLLOWED}"))),
        Ok(_) => Err(Refused("`flows` is not a directory".into())),
        Err(_) => Ok(dir),
    }
}

/// `flows/<name>.yaml` (or `.yml`), if there is one: `Err` when it is there but is not a
/// regular file of the project's own.
pub fn flow_file(project: &Path, name: &str) -> Result<Option<PathBuf>, Refused> {
    let flows = flows_dir(project)?;
    for ext in ["yaml", "yml"] {
        let file = flows.join(format!("{name}.{ext}"));
        if let Some(found) = own_file(&file, &format!("flows/{name}.{ext}"))? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// `file` when it is a regular file with one name; `None` when there is nothing there.
pub fn own_file(file: &Path, shown: &str) -> Result<Option<PathBuf>, Refused> {
    let meta = match std::fs::symlink_metadata(file) {
        Ok(meta) => meta,
        Err(_) => return Ok(None),
    };
    if meta.file_type().is_symlink() {
        return Err(Refused(format!("`{shown}` is a symbolic link: {NOT_FOLLOWED}")));
    }
    if !meta.is_file() {
        return Err(Refused(format!("`{shown}` is not a regular file")));
    }
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
        return Err(Refused(format!(
            "`{shown}` has more than one hard link: {NOT_FOLLOWED} (`cp --remove-destination`)"
        )));
    }
    Ok(Some(file.to_path_buf()))
}

/// The text of `file`, not following a link (`None` when there is no file).
pub fn read_text(file: &Path, shown: &str) -> Result<Option<String>, Refused> {
    match regular_file::read(file, regular_file::Links::Refuse) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| Refused(format!("`{shown}` is not valid UTF-8"))),
        Err(ReadError::Missing) => Ok(None),
        Err(ReadError::Unreadable(u)) => Err(Refused(match u.why {
            Why::Refused { what, help } => format!("`{shown}` is {what}: {help}"),
            Why::NotUtf8 => format!("`{shown}` is not valid UTF-8"),
        })),
    }
}

/// Replaces `file` with `bytes` at once: a reader sees the old text or the new, and a
/// link planted at the target is replaced, never written through.
pub fn replace(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let permissions = match std::fs::symlink_metadata(file) {
        Ok(meta) if !meta.is_file() => return Err(std::io::Error::other("it is not a regular file")),
        // The file keeps its mode.
        Ok(meta) => Some(meta.permissions()),
        Err(_) => None,
    };
    let tmp = write_beside(file, bytes, permissions)?;
    std::fs::rename(&tmp, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Creates `file` with `bytes`, complete from the first moment it is seen, and never over
/// anything already there (a link to an existing name fails, whatever it is).
pub fn create(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = write_beside(file, bytes, None)?;
    let linked = std::fs::hard_link(&tmp, file);
    let _ = std::fs::remove_file(&tmp);
    linked
}

/// A new file beside `file` holding `bytes`, created exclusively under a random name.
fn write_beside(file: &Path, bytes: &[u8], permissions: Option<std::fs::Permissions>) -> std::io::Result<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| std::io::Error::other(e.to_string()))?;
    let suffix: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let tmp = dir.join(format!(".{name}.{suffix}.svc-tmp"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // As `std::fs::write` creates a file: 0666 less the umask.
        options.mode(0o666).custom_flags(libc::O_NOFOLLOW);
    }
    let mut out = options.open(&tmp)?;
    let written = permissions
        .map_or(Ok(()), |p| out.set_permissions(p))
        .and_then(|()| out.write_all(bytes))
        .and_then(|()| out.sync_data());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("svc-builder-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("flows")).unwrap();
        dir
    }

    #[cfg(unix)]
    #[test]
    fn a_replacement_goes_beside_the_file_and_never_through_a_planted_link() {
        let dir = scratch("replace");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let file = dir.join("flows/a.yaml");
        std::fs::write(&file, "one").unwrap();
        // The old fixed temporary names, planted.
        for planted in ["a.yaml.svc-tmp", "a.layout.json.tmp", ".a.yaml.svc-new"] {
            std::os::unix::fs::symlink(&victim, dir.join("flows").join(planted)).unwrap();
        }
        replace(&file, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "two");
        create(&dir.join("flows/b.yaml"), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.join("flows"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.') && n.ends_with(".svc-tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn links_and_special_files_are_refused_with_a_message() {
        let dir = scratch("refuse");
        let secret = dir.join("secret");
        std::fs::write(&secret, "s3cret").unwrap();
        std::os::unix::fs::symlink(&secret, dir.join("flows/link.yaml")).unwrap();
        std::fs::hard_link(&secret, dir.join("flows/hard.yaml")).unwrap();
        let fifo = std::ffi::CString::new(dir.join("flows/fifo.yaml").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let refused = |name: &str| flow_file(&dir, name).unwrap_err().0;
        assert!(refused("link").contains("is a symbolic link"), "{}", refused("link"));
        assert!(refused("hard").contains("more than one hard link"));
        assert!(refused("fifo").contains("not a regular file"));
        assert_eq!(flow_file(&dir, "none"), Ok(None));
        // Read directly, without the check first: refused too, never read.
        let read = read_text(&dir.join("flows/link.yaml"), "flows/link.yaml").unwrap_err().0;
        assert!(read.contains("symbolic link") && !read.contains("s3cret"), "{read}");
        assert!(read_text(&dir.join("flows/fifo.yaml"), "flows/fifo.yaml").is_err());
        // Replacing a FIFO or creating over a dangling link fails, and writes nothing.
        assert!(replace(&dir.join("flows/fifo.yaml"), b"x").is_err());
        std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("flows/dangling.yaml")).unwrap();
        assert!(create(&dir.join("flows/dangling.yaml"), b"x").is_err());
        assert!(!dir.join("nowhere").exists());
        // A linked `flows/` itself.
        let elsewhere = scratch("refuse-elsewhere");
        std::fs::remove_dir_all(dir.join("flows")).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("flows"), dir.join("flows")).unwrap();
        assert!(flows_dir(&dir).unwrap_err().0.contains("`flows/` is a symbolic link"));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }
}
