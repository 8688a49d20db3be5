//! What stops a command on the pipeline's path (link svc's sources, lower, emit, write,
//! build, train a profile), as one type: a caller can tell a file it cannot write from a
//! tool that failed from a bug of svc's, and every command says each in the same words.
//!
//! A project with errors is not an [`Error`]: its diagnostics are printed where it is
//! checked, and the step returns `None` (`pipeline::emit_project`).

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum Error {
    /// A file or directory svc reads or writes, or a program it starts:
    /// "cannot `action` `path`: `source`".
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// `.svc/source` could not be made a link to svc's sources.
    Link {
        link: PathBuf,
        target: PathBuf,
        source: std::io::Error,
    },
    /// Where `.svc/source` should be a link, something else is: not svc's to delete.
    NotALink { path: PathBuf },
    /// What the machine lacks for this step (a cache directory, `llvm-profdata`), with
    /// how to get it.
    Environment(String),
    /// A program svc runs ran and failed: "`command` `problem`".
    Tool { command: String, problem: String },
    /// The generated crate did not build; rustc's errors were printed as they came.
    Build { errors: usize },
    /// What the project lacks for this step (code nodes to run, flow tests to train a
    /// profile on), with what to do.
    Project(String),
    /// A profile-guided build's training run went wrong.
    Training(String),
    /// svc generated `what` (Rust, a manifest) that is not valid: a bug in svc.
    Bug { what: &'static str, detail: String },
}

impl Error {
    /// An I/O error of `action` on `path` ("create", "write", "copy the binary to").
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { action, path, source } => write!(f, "cannot {action} `{}`: {source}", path.display()),
            Error::Link { link, target, source } => write!(
                f,
                "cannot link `{}` to svc's sources at `{}`: {source}",
                link.display(),
                target.display()
            ),
            Error::NotALink { path } => write!(
                f,
                "`{}` is not the link svc makes (a copy that followed links?): remove it, and svc links it again",
                path.display()
            ),
            Error::Tool { command, problem } => write!(f, "`{command}` {problem}"),
            Error::Build { errors: 0 } => write!(f, "the build failed"),
            Error::Build { errors } => write!(
                f,
                "the build failed with {errors} error{}",
                if *errors == 1 { "" } else { "s" }
            ),
            Error::Environment(text) | Error::Project(text) | Error::Training(text) => f.write_str(text),
            Error::Bug { what, detail } => write!(f, "svc generated invalid {what} (a bug in svc): {detail}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Link { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// For the commands that report any failure as one line of text.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_reads_as_one_sentence() {
        let denied = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(
            Error::io("create", "/srv/app", denied()).to_string(),
            "cannot create `/srv/app`: permission denied"
        );
        assert_eq!(Error::Build { errors: 1 }.to_string(), "the build failed with 1 error");
        assert_eq!(Error::Build { errors: 3 }.to_string(), "the build failed with 3 errors");
        assert_eq!(Error::Build { errors: 0 }.to_string(), "the build failed");
        assert_eq!(
            Error::Tool {
                command: "rustc -vV".into(),
                problem: "names no host".into()
            }
            .to_string(),
            "`rustc -vV` names no host"
        );
    }
}
