//! `ctx.fail(message, code?)`: a structured node failure (spec §2.6, §7).

use std::fmt;

/// A node failure: a message and an optional machine-readable code. Returned from
/// `run` as `Err(ctx.fail(…))`; the node then produces no output at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFailure {
    pub message: String,
    pub code: Option<String>,
}

/// What `run` returns.
pub type NodeResult<T> = Result<T, NodeFailure>;

impl NodeFailure {
    pub fn new(message: impl Into<String>, code: impl Into<FailureCode>) -> Self {
        NodeFailure {
            message: message.into(),
            code: code.into().0,
        }
    }
}

impl fmt::Display for NodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{} ({code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for NodeFailure {}

/// Why a node stopped without outputs and without `ctx.fail`: a TypeScript node threw,
/// returned outputs that do not fit its pins, or hit its memory limit or deadline.
///
/// Raised with `std::panic::resume_unwind` (no panic message is printed) and caught
/// where the server catches a node's panic, which then answers 500 with `code` and
/// `message` instead of its generic panic answer. Not for node code: used by the
/// TypeScript engine.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAbort {
    /// The error code of the 500 answer: `node_output_invalid`, `node_timeout`, …
    pub code: &'static str,
    /// What the answer says.
    pub message: String,
    /// What only the log says (an exception's message may hold data the caller must not see).
    pub detail: Option<String>,
}

impl NodeAbort {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        NodeAbort {
            code,
            message: message.into(),
            detail: None,
        }
    }

    /// A thrown exception: answered like a panic, its message only logged.
    pub fn exception(detail: impl Into<String>) -> Self {
        NodeAbort {
            code: "internal_error",
            message: "the node failed unexpectedly".into(),
            detail: Some(detail.into()),
        }
    }
}

/// The optional code of a failure: `"OUT_OF_STOCK"`, `String`, or `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FailureCode(pub Option<String>);

impl From<&str> for FailureCode {
    fn from(code: &str) -> Self {
        FailureCode(Some(code.to_string()))
    }
}

impl From<String> for FailureCode {
    fn from(code: String) -> Self {
        FailureCode(Some(code))
    }
}

impl From<Option<&str>> for FailureCode {
    fn from(code: Option<&str>) -> Self {
        FailureCode(code.map(str::to_string))
    }
}

impl From<()> for FailureCode {
    fn from(_: ()) -> Self {
        FailureCode(None)
    }
}
