//! Check Origin at run time: the decision for a request, the CORS headers of its
//! response, and the answer to a CORS preflight.
//!
//! - Exactly one `Origin` header, parsed strictly and matched against the patterns
//!   (see `svc_types::origin`). Several `Origin` headers are ambiguous and blocked.
//! - No `Origin` header: the route's `missing_origin` policy (allow by default).
//! - An allowed origin is echoed in `Access-Control-Allow-Origin`; every response of a
//!   route with Check Origin carries `Vary: Origin`, so that caches keep per-origin copies.
//! - A preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered 204 with the
//!   route's methods and allowed headers, or 403 when the origin is blocked.

use crate::error::ApiError;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use svc_types::origin::{OriginPattern, OriginText};

/// What Check Origin does with a request that has no `Origin` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingOrigin {
    Allow,
    Block,
}

/// The configuration of one Check Origin node, built once at start-up.
#[derive(Debug, Clone)]
pub struct OriginPolicy {
    patterns: Vec<OriginPattern>,
    missing: MissingOrigin,
    allow_methods: HeaderValue,
    allow_headers: Option<HeaderValue>,
    expose_headers: Option<HeaderValue>,
    allow_credentials: bool,
    max_age: Option<HeaderValue>,
}

/// The outcome of Check Origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginDecision {
    /// Allowed; `echo` is the origin to put in `Access-Control-Allow-Origin` (none when
    /// the request had no `Origin` and the policy lets it through).
    Allowed {
        echo: Option<HeaderValue>,
    },
    Blocked,
}

impl OriginDecision {
    pub fn is_allowed(&self) -> bool {
        matches!(self, OriginDecision::Allowed { .. })
    }
}

/// Builder input for [`OriginPolicy::new`].
#[derive(Debug, Clone, Default)]
pub struct OriginConfig<'a> {
    pub allowed_origins: &'a [&'a str],
    pub missing_origin_allowed: bool,
    /// The route's methods, for preflight answers.
    pub methods: &'a [&'a str],
    pub allowed_headers: &'a [&'a str],
    pub expose_headers: &'a [&'a str],
    pub allow_credentials: bool,
    pub max_age_seconds: Option<u64>,
}

fn join(items: &[&str]) -> Option<HeaderValue> {
    if items.is_empty() {
        None
    } else {
        crate::header_value_for_life(items.join(", "))
    }
}

impl OriginPolicy {
    /// Builds the policy. Patterns were validated by the compiler; an invalid one here is
    /// a bug in the caller and is reported as an error.
    pub fn new(config: OriginConfig<'_>) -> Result<Self, String> {
        let patterns = config
            .allowed_origins
            .iter()
            .map(|p| OriginPattern::parse(p).map_err(|e| e.message))
            .collect::<Result<Vec<_>, _>>()?;
        let mut methods: Vec<&str> = config.methods.to_vec();
        if !methods.contains(&"OPTIONS") {
            methods.push("OPTIONS");
        }
        Ok(OriginPolicy {
            patterns,
            missing: if config.missing_origin_allowed {
                MissingOrigin::Allow
            } else {
                MissingOrigin::Block
            },
            allow_methods: join(&methods).unwrap_or(HeaderValue::from_static("OPTIONS")),
            allow_headers: join(config.allowed_headers),
            expose_headers: join(config.expose_headers),
            allow_credentials: config.allow_credentials,
            max_age: config.max_age_seconds.map(HeaderValue::from),
        })
    }

    /// Decides a request.
    pub fn check(&self, headers: &HeaderMap) -> OriginDecision {
        let mut values = headers.get_all(header::ORIGIN).iter();
        let Some(first) = values.next() else {
            return match self.missing {
                MissingOrigin::Allow => OriginDecision::Allowed { echo: None },
                MissingOrigin::Block => OriginDecision::Blocked,
            };
        };
        if values.next().is_some() {
            return OriginDecision::Blocked;
        }
        // Cut once; each pattern checks the host only as far as it needs to (the same
        // answers as parsing it in full, tested in svc_types::origin).
        let origin = OriginText::split(first.as_bytes());
        if self.patterns.iter().any(|p| p.admits(&origin)) {
            OriginDecision::Allowed {
                echo: Some(first.clone()),
            }
        } else {
            OriginDecision::Blocked
        }
    }

    /// Adds the CORS headers for `decision` to a response of this route. The decision is
    /// used up: its echoed origin moves into the response instead of being copied.
    pub fn decorate(&self, decision: OriginDecision, headers: &mut HeaderMap) {
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
        if let OriginDecision::Allowed { echo: Some(origin) } = decision {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            if self.allow_credentials {
                headers.insert(
                    header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                    HeaderValue::from_static("true"),
                );
            }
            if let Some(expose) = &self.expose_headers {
                headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, expose.clone());
            }
        }
    }

    /// Whether a request is a CORS preflight.
    pub fn is_preflight(method: &http::Method, headers: &HeaderMap) -> bool {
        method == http::Method::OPTIONS && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
    }

    /// Answers a preflight: 204 with the route's methods and allowed headers, or 403.
    pub fn preflight(&self, headers: &HeaderMap, request_id: &str) -> Response {
        let decision = self.check(headers);
        let mut response = match &decision {
            OriginDecision::Allowed { echo: Some(_) } => {
                let mut r = StatusCode::NO_CONTENT.into_response();
                let h = r.headers_mut();
                h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, self.allow_methods.clone());
                if let Some(allowed) = &self.allow_headers {
                    h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, allowed.clone());
                }
                if let Some(age) = &self.max_age {
                    h.insert(header::ACCESS_CONTROL_MAX_AGE, age.clone());
                }
                r
            }
            // A preflight without an Origin is not a browser preflight; a blocked origin gets 403.
            _ => ApiError::for_status(StatusCode::FORBIDDEN)
                .request_id(request_id)
                .into_response(),
        };
        self.decorate(decision, response.headers_mut());
        response
            .headers_mut()
            .append(header::VARY, HeaderValue::from_static("Access-Control-Request-Method"));
        response
            .headers_mut()
            .append(header::VARY, HeaderValue::from_static("Access-Control-Request-Headers"));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(missing_allowed: bool) -> OriginPolicy {
        OriginPolicy::new(OriginConfig {
            allowed_origins: &["https://example.com", "https://*.example.org", "http://localhost:5173"],
            missing_origin_allowed: missing_allowed,
            methods: &["GET", "POST"],
            allowed_headers: &["content-type", "x-api-key"],
            expose_headers: &["x-request-id"],
            allow_credentials: false,
            max_age_seconds: Some(600),
        })
        .unwrap()
    }

    fn with_origins(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::ORIGIN, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn allowed(p: &OriginPolicy, values: &[&str]) -> bool {
        p.check(&with_origins(values)).is_allowed()
    }

    #[test]
    fn the_tricks() {
        let p = policy(true);
        assert!(allowed(&p, &["https://example.com"]));
        assert!(allowed(&p, &["https://example.com:443"]));
        assert!(allowed(&p, &["https://EXAMPLE.com"]));
        assert!(allowed(&p, &["https://a.example.org"]));
        assert!(!allowed(&p, &["https://example.com.evil.com"]));
        assert!(!allowed(&p, &["http://example.com"]));
        assert!(!allowed(&p, &["https://example.com:8443"]));
        assert!(!allowed(&p, &["https://example.com/"]));
        assert!(!allowed(&p, &["null"]));
        assert!(!allowed(&p, &["https://example.org"]));
        assert!(!allowed(&p, &["https://example.com", "https://example.com"]));
        assert!(!allowed(&p, &["https://example.com", "https://evil.com"]));
        assert!(!allowed(&p, &["garbage"]));
    }

    #[test]
    fn missing_origin_policy() {
        assert!(policy(true).check(&HeaderMap::new()).is_allowed());
        assert!(!policy(false).check(&HeaderMap::new()).is_allowed());
    }

    #[test]
    fn decorates_allowed_responses() {
        let p = policy(true);
        let d = p.check(&with_origins(&["https://a.example.org"]));
        let mut h = HeaderMap::new();
        p.decorate(d, &mut h);
        assert_eq!(h[header::ACCESS_CONTROL_ALLOW_ORIGIN], "https://a.example.org");
        assert_eq!(h[header::VARY], "Origin");
        assert_eq!(h[header::ACCESS_CONTROL_EXPOSE_HEADERS], "x-request-id");
        let mut h = HeaderMap::new();
        p.decorate(OriginDecision::Blocked, &mut h);
        assert!(!h.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
        assert_eq!(h[header::VARY], "Origin");
    }

    #[test]
    fn preflights() {
        let p = policy(true);
        let mut h = with_origins(&["https://example.com"]);
        h.insert(header::ACCESS_CONTROL_REQUEST_METHOD, HeaderValue::from_static("POST"));
        assert!(OriginPolicy::is_preflight(&http::Method::OPTIONS, &h));
        let r = p.preflight(&h, "id");
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
        assert_eq!(r.headers()[header::ACCESS_CONTROL_ALLOW_METHODS], "GET, POST, OPTIONS");
        assert_eq!(
            r.headers()[header::ACCESS_CONTROL_ALLOW_HEADERS],
            "content-type, x-api-key"
        );
        assert_eq!(r.headers()[header::ACCESS_CONTROL_MAX_AGE], "600");
        assert_eq!(r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "https://example.com");
        let mut h = with_origins(&["https://evil.com"]);
        h.insert(header::ACCESS_CONTROL_REQUEST_METHOD, HeaderValue::from_static("POST"));
        let r = p.preflight(&h, "id");
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(!r.headers().contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
    }
}
