//! Web-style outbound HTTP for code nodes (spec §4.3 point 5): `Request`, `Response`,
//! `Headers` and `Url`, used as `ctx.fetch(Request::get(url)).await`.
//!
//! The runtime performs the request (TLS, a timeout and a response size limit by
//! default; see `docs/runtime.md`). Credentials reach a request only through
//! `ctx.secret(…)`, e.g. `Request::get(url).bearer_auth(&ctx.secret("API_TOKEN")?)`.

use crate::context::Secret;
use std::fmt;
use std::time::Duration;

pub use url::Url;

/// HTTP headers; names are compared case-insensitively and stored in lowercase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(Vec<(String, String)>);

impl Headers {
    pub fn new() -> Self {
        Self::default()
    }

    /// The first value of a header.
    pub fn get(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of a header.
    pub fn get_all(&self, name: &str) -> Vec<&str> {
        let name = name.to_ascii_lowercase();
        self.0
            .iter()
            .filter(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Replaces every value of a header.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.remove(name);
        self.append(name, value);
    }

    /// Adds a value.
    pub fn append(&mut self, name: &str, value: impl Into<String>) {
        self.0.push((name.to_ascii_lowercase(), value.into()));
    }

    pub fn remove(&mut self, name: &str) {
        let name = name.to_ascii_lowercase();
        self.0.retain(|(k, _)| *k != name);
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// An outbound request.
#[derive(Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub url: String,
    pub headers: Headers,
    pub body: Option<Vec<u8>>,
    /// Overrides the runtime's default timeout (it cannot exceed the runtime's maximum).
    pub timeout: Option<Duration>,
    /// Overrides the runtime's default response size limit (it cannot exceed the maximum).
    pub max_response_bytes: Option<usize>,
    /// A problem found while building the request (reported by `fetch`).
    pub invalid: Option<String>,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may carry credentials: print names only.
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("body_len", &self.body.as_ref().map(Vec::len))
            .finish()
    }
}

impl Request {
    pub fn new(method: &str, url: impl Into<String>) -> Self {
        Request {
            method: method.to_ascii_uppercase(),
            url: url.into(),
            headers: Headers::new(),
            body: None,
            timeout: None,
            max_response_bytes: None,
            invalid: None,
        }
    }

    pub fn get(url: impl Into<String>) -> Self {
        Self::new("GET", url)
    }

    pub fn post(url: impl Into<String>) -> Self {
        Self::new("POST", url)
    }

    pub fn put(url: impl Into<String>) -> Self {
        Self::new("PUT", url)
    }

    pub fn patch(url: impl Into<String>) -> Self {
        Self::new("PATCH", url)
    }

    pub fn delete(url: impl Into<String>) -> Self {
        Self::new("DELETE", url)
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.append(name, value);
        self
    }

    /// `Authorization: Bearer <secret>`.
    pub fn bearer_auth(self, token: &Secret) -> Self {
        let value = format!("Bearer {}", token.expose());
        self.header("authorization", value)
    }

    /// A JSON body, with `content-type: application/json`.
    pub fn json<T: serde::Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => {
                self.body = Some(body);
                self.headers.set("content-type", "application/json");
            }
            Err(e) => self.invalid = Some(format!("the JSON body could not be serialized: {e}")),
        }
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = Some(limit);
        self
    }
}

/// A response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Headers,
    /// The final URL (after redirects).
    pub url: String,
    body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, headers: Headers, url: impl Into<String>, body: Vec<u8>) -> Self {
        Response {
            status,
            headers,
            url: url.into(),
            body,
        }
    }

    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.body
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, FetchError> {
        serde_json::from_slice(&self.body).map_err(|e| FetchError::InvalidBody(e.to_string()))
    }
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// The request could not be built or its URL is not an absolute http(s) URL.
    InvalidRequest(String),
    /// No response within the timeout.
    Timeout(Duration),
    /// The response body exceeded the size limit.
    TooLarge { limit: usize },
    /// Connecting, TLS, or transfer failed.
    Network(String),
    /// The response body is not what was expected (for `Response::json`).
    InvalidBody(String),
    /// The runtime has no outbound HTTP here (for example a unit test's host).
    Unavailable(String),
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::InvalidRequest(m) => write!(f, "invalid request: {m}"),
            FetchError::Timeout(d) => write!(f, "no response within {} ms", d.as_millis()),
            FetchError::TooLarge { limit } => {
                write!(f, "the response is larger than {limit} bytes")
            }
            FetchError::Network(m) => write!(f, "network error: {m}"),
            FetchError::InvalidBody(m) => write!(f, "invalid response body: {m}"),
            FetchError::Unavailable(m) => write!(f, "fetch is not available: {m}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// `ctx.fetch(…).await?` inside `run`: a fetch error becomes a node failure with the
/// code `FETCH_FAILED`.
impl From<FetchError> for crate::NodeFailure {
    fn from(e: FetchError) -> Self {
        crate::NodeFailure {
            message: e.to_string(),
            code: Some("FETCH_FAILED".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_case_insensitive() {
        let mut h = Headers::new();
        h.append("X-Trace", "a");
        h.append("x-trace", "b");
        assert_eq!(h.get("X-TRACE"), Some("a"));
        assert_eq!(h.get_all("x-trace"), vec!["a", "b"]);
        h.set("X-Trace", "c");
        assert_eq!(h.get_all("x-trace"), vec!["c"]);
    }

    #[test]
    fn requests_do_not_print_credentials() {
        let r = Request::post("https://api.example.com")
            .bearer_auth(&Secret::new("s3cr3t"))
            .json(&serde_json::json!({"a": 1}));
        assert!(!format!("{r:?}").contains("s3cr3t"));
        assert_eq!(r.headers.get("content-type"), Some("application/json"));
        assert_eq!(r.headers.get("authorization"), Some("Bearer s3cr3t"));
    }
}
