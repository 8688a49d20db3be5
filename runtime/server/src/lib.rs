//! # svc-runtime
//!
//! What generated svc servers link. Generated code is thin wiring over these pieces:
//!
//! - [`cors`]: Check Origin (exact origin matching, CORS headers, preflights).
//! - [`ratelimit`]: Rate Limit (GCRA behind a store trait; bounded memory).
//! - [`apikey`]: Check API Key (key format, hashes, verification, key locations).
//! - [`store`]: the workspace store (API keys, secret values, synced assets) in SQLite.
//! - [`secrets`]: secret values for `ctx.secret`, and redaction of them.
//! - [`fetch`]: outbound HTTP for `ctx.fetch`.
//! - [`exchange`]: one request through a route: protections, nodes, responses.
//! - [`body`]: typed JSON bodies and query parameters, with field-naming 400s.
//! - [`server`]: health, metrics, 404/405, request ids, timeouts, graceful shutdown.
//! - [`error`]: the one JSON error shape.
//!
//! See `docs/runtime.md` for the behaviour users rely on.

// `ApiError` is the 4xx/5xx answer being built (status, code, message, field, node,
// request id); it is returned on the error path only, where its size costs nothing that
// boxing it would not cost more.
#![allow(clippy::result_large_err)]

pub mod alloc;
pub mod apikey;
pub mod app;
pub mod body;
pub mod call;
pub mod client_ip;
pub mod convert;
pub mod cors;
pub mod dev_traces;
pub mod error;
pub mod exchange;
pub mod fetch;
pub mod health;
pub mod idle;
pub mod json;
pub mod jwt;
pub mod listen;
pub mod log_lines;
pub mod metrics;
pub mod node_runner;
pub mod ratelimit;
pub mod request_id;
pub mod runtime;
pub mod scheduler;
pub mod seal;
pub mod secrets;
pub mod server;
pub mod signature;
pub mod store;
pub mod tls_roots;
pub mod url_redaction;
pub mod validate;

pub use error::ApiError;

/// A header value built once at start-up and kept for the life of the process, so that
/// every response clones it for free (a value made from a `String` costs two atomic
/// reference-count operations per clone and drop). For per-route configuration only:
/// each call keeps its text forever. `None` if the text is not a valid header value.
pub(crate) fn header_value_for_life(text: String) -> Option<http::HeaderValue> {
    http::HeaderValue::from_str(&text).ok()?;
    Some(http::HeaderValue::from_static(Box::leak(text.into_boxed_str())))
}
pub use exchange::{Exchange, NodeError};
pub use runtime::Runtime;

/// Re-exports for generated code, so that it depends on this crate alone.
#[doc(hidden)]
pub mod __private {
    pub use axum;
    pub use http;
    pub use serde;
    pub use serde_json;
    pub use svc_sdk;
    pub use tokio;

    /// String equality in constant context (for generated static assertions).
    pub const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
}
