//! The one JSON error shape of svc servers.
//!
//! Every error response, whether produced by the server (404, 405, 408, 413, a body
//! that does not parse, a node failure, a panic) or by a flow's Return JSON node without
//! a body (401, 403, 429, …), has this body:
//!
//! ```json
//! { "error": { "status": 429, "code": "rate_limited", "message": "too many requests",
//!              "request_id": "4f1c0a9b2d3e0000000a" } }
//! ```
//!
//! Optional members: `"field"` (the path of the offending field of a request body or
//! query, for 400), `"violations"` and `"violation_count"` (the field constraints a
//! request breaks, for 400 `invalid_request`: see [`crate::validate`]), `"node"` (the
//! key of a node that failed, for 500), `"retry_after"` (seconds, for 429).

use crate::validate::Violation;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use std::borrow::Cow;

/// An error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiError {
    #[serde(skip)]
    pub status: StatusCode,
    pub code: Cow<'static, str>,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The constraints the request breaks (boxed: rare, and errors travel by value).
    #[serde(flatten)]
    pub violated: Option<Box<Violated>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The field constraints a request breaks: the first [`crate::validate::MAX_LISTED`],
/// and how many in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violated {
    pub violations: Vec<Violation>,
    pub violation_count: usize,
}

#[derive(Serialize)]
struct Envelope<'a> {
    error: Body<'a>,
}

#[derive(Serialize)]
struct Body<'a> {
    status: u16,
    #[serde(flatten)]
    inner: &'a ApiError,
}

impl ApiError {
    pub fn new(status: StatusCode, code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code: code.into(),
            message: message.into(),
            field: None,
            violated: None,
            node: None,
            retry_after: None,
            request_id: None,
        }
    }

    /// The standard error for a status: the code and message a Return JSON node without
    /// a body answers with.
    pub fn for_status(status: StatusCode) -> Self {
        let (code, message) = match status.as_u16() {
            400 => ("bad_request", "the request is not valid"),
            401 => ("unauthorized", "a valid API key is required"),
            403 => ("forbidden", "this origin may not call this route"),
            404 => ("not_found", "no route matches this path"),
            405 => ("method_not_allowed", "the route does not accept this method"),
            408 => ("request_timeout", "the request took too long"),
            409 => ("conflict", "the request conflicts with the current state"),
            413 => ("payload_too_large", "the request body is too large"),
            415 => ("unsupported_media_type", "the request body must be JSON"),
            422 => ("unprocessable", "the request could not be processed"),
            429 => ("rate_limited", "too many requests"),
            500 => ("internal_error", "the server failed to handle the request"),
            502 => ("bad_gateway", "an upstream service failed"),
            503 => ("unavailable", "the service is unavailable"),
            504 => ("gateway_timeout", "an upstream service took too long"),
            s if s >= 500 => ("server_error", "the server failed to handle the request"),
            _ => ("client_error", "the request could not be handled"),
        };
        ApiError::new(status, code, message)
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn violations(mut self, violations: Vec<Violation>, count: usize) -> Self {
        self.violated = Some(Box::new(Violated {
            violations,
            violation_count: count,
        }));
        self
    }

    pub fn node(mut self, node: impl Into<String>) -> Self {
        self.node = Some(node.into());
        self
    }

    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// The JSON body.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&Envelope {
            error: Body {
                status: self.status.as_u16(),
                inner: self,
            },
        })
        .unwrap_or_else(|_| br#"{"error":{"status":500,"code":"internal_error","message":"error"}}"#.to_vec())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.to_json();
        let mut response = (self.status, body).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// `text` followed by `": <cause>"` for each error in `e`'s chain of sources: many
/// libraries put the reason (a TLS verdict, a DNS failure) in a source, not in `Display`.
pub fn with_causes(mut text: String, e: &(dyn std::error::Error + 'static)) -> String {
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape() {
        let e = ApiError::for_status(StatusCode::TOO_MANY_REQUESTS)
            .retry_after(3)
            .request_id("abc");
        let v: serde_json::Value = serde_json::from_slice(&e.to_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"error": {"status": 429, "code": "rate_limited", "message": "too many requests", "retry_after": 3, "request_id": "abc"}})
        );
        let e = ApiError::new(StatusCode::BAD_REQUEST, "invalid_body", "x").field("order.lines[0].quantity");
        let v: serde_json::Value = serde_json::from_slice(&e.to_json()).unwrap();
        assert_eq!(v["error"]["field"], "order.lines[0].quantity");
        assert!(v["error"].get("node").is_none());
    }

    #[test]
    fn every_status_has_a_code() {
        for s in [400, 401, 403, 404, 405, 408, 413, 429, 500] {
            let e = ApiError::for_status(StatusCode::from_u16(s).unwrap());
            assert!(
                !e.code.is_empty() && e.code != "client_error" && e.code != "server_error",
                "{s}"
            );
        }
    }
}
