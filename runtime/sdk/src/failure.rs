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
