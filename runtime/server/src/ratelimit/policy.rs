//! What a Rate Limit node does when its shared store (Redis) cannot answer.

use std::fmt;
use std::str::FromStr;

/// The answer to a request whose shared limiter failed (an error, a timeout, or an open
/// circuit breaker). Set per server with `--rate-limit-failure` and per node with
/// `on_store_error` in the flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// Let the request through unchecked (logged and counted).
    Open,
    /// Answer 503 with `Retry-After`, in the one JSON error shape.
    Closed,
    /// Count the request in this instance's own in-memory limiter, with the node's quota:
    /// each instance then admits up to the quota on its own until the store is back.
    #[default]
    Local,
}

impl FailurePolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Open => "open",
            FailurePolicy::Closed => "closed",
            FailurePolicy::Local => "local",
        }
    }
}

impl fmt::Display for FailurePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FailurePolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "open" => Ok(FailurePolicy::Open),
            "closed" => Ok(FailurePolicy::Closed),
            "local" => Ok(FailurePolicy::Local),
            other => Err(format!(
                "`{other}` is not a failure policy: use `open`, `closed` or `local`"
            )),
        }
    }
}
