//! One request on its way through a route: the object generated route code drives.
//!
//! A route function creates an [`Exchange`] from the request, calls one method per node
//! in flow order (`check_origin`, `rate_limit`, `check_api_key`, `run_node`), and ends with
//! one of the response methods, which add what the protections decided (CORS headers,
//! RateLimit headers, a `WWW-Authenticate` challenge), the request id, metrics, an access
//! log line, and the development trace.

use crate::apikey::{Identity, KeyLocation};
use crate::cors::OriginPolicy;
use crate::error::ApiError;
use crate::metrics::{NodeCounters, RouteMetrics};
use crate::ratelimit::{Checked, LimitKey, RateLimitStore, RateLimiter};
use crate::request_id;
pub use crate::request_id::RequestId;
use crate::runtime::Runtime;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_sdk::{CodeFunctionNode, NodeFailure, RequestMeta, RunContext};

/// Which way one node went.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub node: &'static str,
    pub outcome: &'static str,
    /// What the Builder shows of it, kept for `serve --dev` only.
    pub detail: Option<Box<StepDetail>>,
}

/// What a step did, for the Builder's traces (`serve --dev` only): when it finished, and
/// a code node's inputs, outputs or failure, with secret values redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDetail {
    /// Since the request began.
    pub finished: Duration,
    pub inputs: Option<serde_json::Value>,
    pub outputs: Option<serde_json::Value>,
    pub failure: Option<NodeFailure>,
}

/// One line logged by a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLog {
    pub node: &'static str,
    pub message: String,
}

/// Everything about a finished request, for `svc dev`'s per-request output and the
/// Builder's traces.
#[derive(Debug, Clone)]
pub struct Trace {
    pub request_id: RequestId,
    pub method: Method,
    pub path: String,
    pub query: Option<String>,
    /// As received, credentials included: `svc dev` keeps them to replay the request and
    /// shows the Builder none of them.
    pub headers: HeaderMap,
    /// The body the route read, if it read one.
    pub body: Option<bytes::Bytes>,
    pub route: &'static str,
    pub status: u16,
    pub steps: Vec<Step>,
    pub logs: Vec<NodeLog>,
    pub duration: Duration,
}

/// Why a code node produced no outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeError {
    /// `ctx.fail(message, code)`.
    Failed {
        node_key: &'static str,
        failure: NodeFailure,
    },
    /// The node panicked; the server keeps serving.
    Panicked { node_key: &'static str },
    /// A TypeScript node threw, returned outputs that do not fit its pins, or hit a
    /// limit: answered 500 with this code and message.
    Aborted {
        node_key: &'static str,
        abort: svc_sdk::__private::NodeAbort,
    },
}

impl NodeError {
    /// Whether this is the node's own failure (`ctx.fail`), which a flow may route with
    /// `on_fail`. A panic, an exception, outputs that do not fit the pins or a limit are
    /// defects: always answered 500 (docs/decisions.md).
    pub fn is_failure(&self) -> bool {
        matches!(self, NodeError::Failed { .. })
    }

    /// The failure message, for `<node>.failure.message` (a panic has a fixed message).
    pub fn message(&self) -> &str {
        match self {
            NodeError::Failed { failure, .. } => &failure.message,
            NodeError::Panicked { .. } => "the node failed unexpectedly",
            NodeError::Aborted { abort, .. } => &abort.message,
        }
    }

    /// The failure code, for `<node>.failure.code`.
    pub fn code(&self) -> Option<&str> {
        match self {
            NodeError::Failed { failure, .. } => failure.code.as_deref(),
            NodeError::Panicked { .. } => Some("PANIC"),
            NodeError::Aborted { abort, .. } => Some(abort.code),
        }
    }
}

/// A header value from text, without copying it; `None` (logged) when the text cannot be
/// sent in a header (a line break, …): generated code then leaves the header out.
pub fn header_text(name: &'static str, text: String) -> Option<HeaderValue> {
    match HeaderValue::from_maybe_shared(axum::body::Bytes::from(text)) {
        Ok(v) => Some(v),
        Err(_) => {
            tracing::warn!(
                header = name,
                "dropped a response header whose value cannot be sent in HTTP"
            );
            None
        }
    }
}

/// Request headers that never reach `ctx.request.headers` (credentials of any kind).
const ALWAYS_HIDDEN: &[&str] = &["authorization", "proxy-authorization", "cookie", "x-api-key"];

pub struct Exchange<'r> {
    pub(crate) rt: Arc<Runtime>,
    metrics: &'r RouteMetrics,
    pub request_id: RequestId,
    pub route: &'static str,
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub client_ip: IpAddr,
    started: Instant,
    response_headers: HeaderMap,
    pub(crate) challenge: Option<HeaderValue>,
    /// The challenge is RFC 6750's `insufficient_scope`: sent with a 403 too.
    pub(crate) challenge_on_forbidden: bool,
    /// The last credential refused was a token (Check JWT), not an API key.
    pub(crate) refused_token: bool,
    credential_headers: Vec<&'static str>,
    credential_query: Vec<&'static str>,
    steps: Vec<Step>,
    logs: Vec<NodeLog>,
    meta: Option<Arc<RequestMeta>>,
}

/// `serve --test-mode`: which way each check and node went, `node=outcome, …`.
pub const TRACE_HEADER: HeaderName = HeaderName::from_static("x-svc-trace");
/// `serve --test-mode`: milliseconds to move the limiters' clock forward before this
/// request.
pub const ADVANCE_CLOCK_HEADER: HeaderName = HeaderName::from_static("x-svc-test-advance-ms");

fn trace_header(steps: &[Step]) -> String {
    let steps: Vec<String> = steps.iter().map(|s| format!("{}={}", s.node, s.outcome)).collect();
    steps.join(", ")
}

fn advance_test_clock(headers: &HeaderMap) {
    if let Some(ms) = headers
        .get(ADVANCE_CLOCK_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        crate::ratelimit::advance_test_clock(std::time::Duration::from_millis(ms));
    }
}

impl<'r> Exchange<'r> {
    /// Starts handling a request of the route whose series are `metrics` (built once per
    /// route with [`crate::metrics::Metrics::route`]).
    pub fn new(
        rt: Arc<Runtime>,
        metrics: &'r RouteMetrics,
        parts: http::request::Parts,
        peer: SocketAddr,
    ) -> Exchange<'r> {
        let request_id = RequestId::of(&parts.headers);
        let client_ip = rt.trusted_proxies.client_ip(peer.ip(), &parts.headers);
        if rt.test_mode {
            advance_test_clock(&parts.headers);
        }
        Exchange {
            rt,
            metrics,
            request_id,
            route: metrics.route(),
            method: parts.method,
            uri: parts.uri,
            headers: parts.headers,
            client_ip,
            started: Instant::now(),
            // Room for the headers of a full chain (CORS, RateLimit, content type, request
            // id, a few of the route's own) without growing.
            response_headers: HeaderMap::with_capacity(12),
            challenge: None,
            challenge_on_forbidden: false,
            refused_token: false,
            credential_headers: Vec::new(),
            credential_query: Vec::new(),
            steps: Vec::new(),
            logs: Vec::new(),
            meta: None,
        }
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.rt
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Whether this request is traced for `svc dev` or `svc test` (steps and node logs are
    /// kept only then).
    fn tracing_steps(&self) -> bool {
        self.rt.dev_trace.is_some() || self.rt.test_mode
    }

    /// Records which way a check went: its counter, and the dev trace's step.
    pub(crate) fn step(&mut self, node: &NodeCounters, passed: bool, outcome: &'static str) {
        if passed {
            node.passed();
        } else {
            node.failed();
        }
        self.record_step(node, outcome);
    }

    /// The step for the trace (the node's counters already counted it).
    pub(crate) fn record_step(&mut self, node: &NodeCounters, outcome: &'static str) {
        if self.tracing_steps() {
            let detail = self.detailed().then(|| {
                Box::new(StepDetail {
                    finished: self.started.elapsed(),
                    inputs: None,
                    outputs: None,
                    failure: None,
                })
            });
            self.steps.push(Step {
                node: node.node(),
                outcome,
                detail,
            });
        }
    }

    /// Whether steps carry what the Builder shows (`serve --dev` under `svc dev` with the
    /// Builder; a plain `--dev` server prints one line per request and needs none).
    fn detailed(&self) -> bool {
        self.rt.dev_details.is_some()
    }

    /// A value as the Builder may see it: every secret value redacted.
    fn shown(&self, value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.rt.redactor.redact(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.shown(v)).collect()),
            Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, self.shown(v))).collect()),
            other => other,
        }
    }

    /// Check Origin: records the CORS headers; true for `allowed`.
    pub fn check_origin(&mut self, node: &NodeCounters, policy: &OriginPolicy) -> bool {
        let decision = policy.check(&self.headers);
        let allowed = decision.is_allowed();
        policy.decorate(decision, &mut self.response_headers);
        self.step(node, allowed, if allowed { "allowed" } else { "blocked" });
        allowed
    }

    /// Rate Limit: records the RateLimit headers; `Ok(true)` for `sequence-ok`,
    /// `Ok(false)` for `sequence-limited`, and the 503 to answer when a shared limiter
    /// failed under the `closed` policy.
    pub async fn rate_limit<S: RateLimitStore>(
        &mut self,
        node: &NodeCounters,
        limiter: &RateLimiter<S>,
        key: LimitKey<'_>,
    ) -> Result<bool, ApiError> {
        match limiter.check_at(&key, crate::ratelimit::clock_at(self.started)).await {
            Checked::Decided(decision) => {
                limiter.decorate(&decision, &mut self.response_headers);
                let outcome = if decision.allowed {
                    "sequence-ok"
                } else {
                    "sequence-limited"
                };
                self.step(node, decision.allowed, outcome);
                Ok(decision.allowed)
            }
            Checked::Unchecked => {
                self.step(node, true, "sequence-ok (unchecked: store failed, policy open)");
                Ok(true)
            }
            Checked::Unavailable => {
                self.step(node, false, "store-unavailable (policy closed)");
                Err(crate::ratelimit::unavailable())
            }
        }
    }

    /// The key for `by: ip`.
    pub fn ip_key(&self) -> LimitKey<'static> {
        LimitKey::Ip(self.rt.limits.rate_limit_ip(self.client_ip))
    }

    /// The key for `by: api-key` before the key is checked: the hash of what was
    /// presented (never the key), or the client IP when no key was presented.
    pub fn presented_key(&self, location: &KeyLocation) -> LimitKey<'static> {
        match location.extract(&self.headers, self.uri.query()) {
            Some(k) => LimitKey::PresentedKey(crate::apikey::format::hash(&k)),
            None => self.ip_key(),
        }
    }

    /// Check API Key: the identity for `valid`, or `None` for `invalid` (a later 401 then
    /// carries a `WWW-Authenticate` challenge for this location).
    pub async fn check_api_key(&mut self, node: &NodeCounters, location: &KeyLocation) -> Option<Identity> {
        self.hide_credential(location);
        let presented = location.extract(&self.headers, self.uri.query());
        match self.rt.keys.verify_or_look_up(presented.as_deref()).await {
            Ok(identity) => {
                self.step(node, true, "valid");
                Some(identity)
            }
            Err(reason) => {
                tracing::info!(request_id = %self.request_id, route = self.route, node = node.node(), reason = reason.as_str(), "API key rejected");
                self.challenge = HeaderValue::from_str(&location.challenge(&self.rt.realm)).ok();
                self.refused_token = false;
                self.challenge_on_forbidden = false;
                self.step(node, false, "invalid");
                None
            }
        }
    }

    /// Hides, from the start, where the route's Check API Key nodes read keys (a custom
    /// header, a query parameter): a code node that runs before the key check, or on a
    /// path that skips it, must not see the key either. Generated routes call this right
    /// after [`Exchange::new`] when a location is not one [`ALWAYS_HIDDEN`] covers.
    pub fn hide_credentials(&mut self, locations: &[&'static KeyLocation]) {
        for location in locations {
            self.hide_credential(location);
        }
    }

    pub(crate) fn hide_credential(&mut self, location: &KeyLocation) {
        if let Some(h) = location.header_name()
            && !ALWAYS_HIDDEN.contains(&h)
            && !self.credential_headers.contains(&h)
        {
            self.credential_headers.push(h);
        }
        if let KeyLocation::Query(q) = location
            && !self.credential_query.contains(q)
        {
            self.credential_query.push(*q);
        }
    }

    /// `ctx.request` for nodes: method, path and query, and headers, without credentials.
    fn request_meta(&mut self) -> Arc<RequestMeta> {
        if let Some(m) = &self.meta {
            return m.clone();
        }
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in &self.headers {
            let name = name.as_str();
            if ALWAYS_HIDDEN.contains(&name) || self.credential_headers.contains(&name) {
                continue;
            }
            if let Ok(v) = value.to_str() {
                headers
                    .entry(name.to_string())
                    .and_modify(|e| {
                        e.push_str(", ");
                        e.push_str(v);
                    })
                    .or_insert_with(|| v.to_string());
            }
        }
        let url = match self.uri.query() {
            Some(q) if !self.credential_query.is_empty() => {
                let kept: Vec<(String, String)> = url::form_urlencoded::parse(q.as_bytes())
                    .filter(|(k, _)| !self.credential_query.contains(&k.as_ref()))
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                let query = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(kept)
                    .finish();
                if query.is_empty() {
                    self.uri.path().to_string()
                } else {
                    format!("{}?{query}", self.uri.path())
                }
            }
            _ => self.uri.path_and_query().map(|p| p.to_string()).unwrap_or_default(),
        };
        let meta = Arc::new(RequestMeta {
            method: Some(self.method.to_string()),
            url: Some(url),
            headers: Some(headers),
        });
        self.meta = Some(meta.clone());
        meta
    }

    /// Runs a code node. Its `ctx.log` lines are collected (with known secret values
    /// redacted) and emitted through `tracing`; a failure or a panic is an `Err`, and the
    /// server keeps serving either way.
    ///
    /// `with_request`: whether to give the node `ctx.request`. The compiler passes `false`
    /// for nodes whose code cannot read it, which saves building it (the spec makes
    /// `ctx.request` optional).
    pub async fn run_node<N: CodeFunctionNode>(
        &mut self,
        node: &NodeCounters,
        inputs: N::Inputs,
        with_request: bool,
    ) -> Result<N::Outputs, NodeError> {
        let meta = if with_request { Some(self.request_meta()) } else { None };
        // Lines go to the log and to the dev trace; when neither wants them, they are dropped
        // without being formatted.
        let wanted = self.rt.dev_trace.is_some() || tracing::enabled!(target: "svc::node", tracing::Level::INFO);
        let ctx = RunContext::new(N::NODE_KEY, inputs, meta, self.rt.env.clone(), self.rt.host.clone());
        let ctx = if wanted { ctx } else { ctx.discarding_logs() };
        let shown_inputs = self
            .detailed()
            .then(|| serde_json::to_value(&ctx.inputs).ok().map(|v| self.shown(v)))
            .flatten();
        let result = AssertUnwindSafe(N::run(&ctx)).catch_unwind().await;
        for line in ctx.take_logs() {
            let message = self.rt.redactor.redact(&line.message);
            tracing::info!(target: "svc::node", request_id = %self.request_id, route = self.route, node = N::NODE_KEY, "{message}");
            if self.rt.dev_trace.is_some() {
                self.logs.push(NodeLog {
                    node: node.node(),
                    message,
                });
            }
        }
        let (outcome, result) = match result {
            Ok(Ok(outputs)) => ("ok", Ok(outputs)),
            Ok(Err(failure)) => {
                let failure = NodeFailure {
                    message: self.rt.redactor.redact(&failure.message),
                    code: failure.code,
                };
                // One the flow routes (`on_fail`) is an answer the flow chose, written with
                // the node's own lines; one it leaves to svc is a warning (`node_error`).
                tracing::info!(target: "svc::node", request_id = %self.request_id, route = self.route, node = N::NODE_KEY, code = failure.code.as_deref().unwrap_or(""), "node failed: {}", failure.message);
                (
                    "failed",
                    Err(NodeError::Failed {
                        node_key: N::NODE_KEY,
                        failure,
                    }),
                )
            }
            Err(payload) => match payload.downcast::<svc_sdk::__private::NodeAbort>() {
                Ok(abort) => {
                    let detail = abort.detail.as_deref().map(|d| self.rt.redactor.redact(d));
                    tracing::error!(request_id = %self.request_id, route = self.route, node = N::NODE_KEY, code = abort.code, detail = detail.as_deref().unwrap_or(""), "node stopped: {}", abort.message);
                    (
                        "panicked",
                        Err(NodeError::Aborted {
                            node_key: N::NODE_KEY,
                            abort: *abort,
                        }),
                    )
                }
                Err(_) => {
                    tracing::error!(request_id = %self.request_id, route = self.route, node = N::NODE_KEY, "node panicked");
                    ("panicked", Err(NodeError::Panicked { node_key: N::NODE_KEY }))
                }
            },
        };
        match outcome {
            "ok" => node.passed(),
            "failed" => node.failed(),
            _ => node.panicked(),
        }
        if self.tracing_steps() {
            let detail = self.detailed().then(|| {
                let (outputs, failure) = match &result {
                    Ok(outputs) => (serde_json::to_value(outputs).ok().map(|v| self.shown(v)), None),
                    Err(NodeError::Failed { failure, .. }) => (None, Some(failure.clone())),
                    Err(e) => (
                        None,
                        Some(NodeFailure {
                            message: self.rt.redactor.redact(e.message()),
                            code: e.code().map(str::to_string),
                        }),
                    ),
                };
                Box::new(StepDetail {
                    finished: self.started.elapsed(),
                    inputs: shown_inputs,
                    outputs,
                    failure,
                })
            });
            self.steps.push(Step {
                node: node.node(),
                outcome: if outcome == "ok" { "next" } else { "on_fail" },
                detail,
            });
        }
        result
    }

    // --- responses -------------------------------------------------------------------

    /// A response whose JSON body the route wrote (with `crate::json::JsonWriter`).
    pub fn json_bytes(
        self,
        status: StatusCode,
        body: Vec<u8>,
        headers: impl IntoIterator<Item = (HeaderName, HeaderValue)>,
    ) -> Response {
        self.json_body(status, axum::body::Body::from(body), headers)
    }

    /// A JSON response: its headers go straight into the map the protections filled, which
    /// then becomes the response's (no copying of headers from map to map).
    fn json_body(
        mut self,
        status: StatusCode,
        body: axum::body::Body,
        headers: impl IntoIterator<Item = (HeaderName, HeaderValue)>,
    ) -> Response {
        const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
        let mut response = Response::new(body);
        *response.status_mut() = status;
        self.response_headers.insert(header::CONTENT_TYPE, APPLICATION_JSON);
        for (name, value) in headers {
            self.response_headers.append(name, value);
        }
        self.finish(response)
    }

    /// A response whose whole body is literal JSON text.
    pub fn json_static(
        self,
        status: StatusCode,
        body: &'static str,
        headers: impl IntoIterator<Item = (HeaderName, HeaderValue)>,
    ) -> Response {
        self.json_body(
            status,
            axum::body::Body::from(axum::body::Bytes::from_static(body.as_bytes())),
            headers,
        )
    }

    /// The standard error body for `status`, with the node's extra headers.
    pub fn status_with_headers(
        self,
        status: StatusCode,
        headers: impl IntoIterator<Item = (HeaderName, HeaderValue)>,
    ) -> Response {
        let mut response = ApiError::for_status(status)
            .request_id(&self.request_id)
            .into_response();
        self.append_headers(&mut response, headers);
        self.finish(response)
    }

    fn append_headers(&self, response: &mut Response, headers: impl IntoIterator<Item = (HeaderName, HeaderValue)>) {
        for (name, value) in headers {
            response.headers_mut().append(name, value);
        }
    }

    /// A JSON response from a Return JSON node.
    pub fn json<T: Serialize + ?Sized>(self, status: StatusCode, body: &T) -> Response {
        self.json_with_headers(status, body, [])
    }

    /// A JSON response with the node's extra headers. A header value that is not valid
    /// (for example with a line break) is dropped and logged, never sent.
    pub fn json_with_headers<T: Serialize + ?Sized>(
        self,
        status: StatusCode,
        body: &T,
        headers: impl IntoIterator<Item = (HeaderName, HeaderValue)>,
    ) -> Response {
        match crate::json::to_vec(body) {
            Ok(bytes) => self.json_bytes(status, bytes, headers),
            Err(e) => {
                tracing::error!(request_id = %self.request_id, route = self.route, "response body could not be serialized: {e}");
                self.error(ApiError::for_status(StatusCode::INTERNAL_SERVER_ERROR))
            }
        }
    }

    /// The standard error body for `status` (a Return JSON node without a body).
    pub fn status(self, status: StatusCode) -> Response {
        let mut e = ApiError::for_status(status);
        // A Check JWT refused the request: its answer speaks of a token, not an API key.
        if self.challenge.is_some() && self.refused_token {
            if status == StatusCode::UNAUTHORIZED {
                e = ApiError::new(status, "unauthorized", "a valid bearer token is required");
            } else if status == StatusCode::FORBIDDEN && self.challenge_on_forbidden {
                e = ApiError::new(
                    status,
                    "insufficient_scope",
                    "the token does not grant a scope this route requires",
                );
            }
        }
        self.error(e)
    }

    /// An error response.
    pub fn error(self, error: ApiError) -> Response {
        let response = error.request_id(&self.request_id).into_response();
        self.finish(response)
    }

    /// The answer when a node's outputs break the field constraints of the structures
    /// they are declared as: a node defect (500 `node_output_invalid`, whatever the
    /// flow's `on_fail`), as outputs of the wrong type are for TypeScript nodes.
    pub fn node_output_invalid(self, node_key: &'static str, problem: String) -> Response {
        let abort = svc_sdk::__private::NodeAbort::new("node_output_invalid", problem);
        self.node_error(NodeError::Aborted { node_key, abort })
    }

    /// The answer when a value wired into a node breaks the constraints of the node's
    /// input pin (`t.number().minimum(1)`), checked before the node runs because what
    /// the value comes from does not guarantee them: the node does not run, and the
    /// flow is answered as for a node defect (500 `node_input_invalid`, whatever
    /// `on_fail`). `svc check` points at such wires; constraining the source (the
    /// request's field, which then answers 400) moves the check to the edge.
    pub fn node_input_invalid(self, node_key: &'static str, problem: String) -> Response {
        let abort = svc_sdk::__private::NodeAbort::new("node_input_invalid", problem);
        self.node_error(NodeError::Aborted { node_key, abort })
    }

    /// The default answer to a node failure that the flow does not route (`on_fail`
    /// unwired): 500 with the message, the code and the node key.
    pub fn node_error(self, error: NodeError) -> Response {
        let e = match &error {
            NodeError::Failed { node_key, failure } => {
                tracing::warn!(request_id = %self.request_id, route = self.route, node = *node_key, code = failure.code.as_deref().unwrap_or(""), "node failed, and the flow does not route its failure (`on_fail`): answered 500: {}", failure.message);
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    failure.code.clone().unwrap_or_else(|| "node_failed".into()),
                    failure.message.clone(),
                )
                .node(*node_key)
            }
            NodeError::Panicked { node_key } => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                error.message().to_string(),
            )
            .node(*node_key),
            // Too many TypeScript calls at once: the server's state, not the node's fault,
            // and one to retry.
            NodeError::Aborted { node_key, abort } if abort.code == svc_sdk::__private::NODE_BUSY => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, abort.code, abort.message.clone())
                    .node(*node_key)
                    .retry_after(1)
            }
            NodeError::Aborted { node_key, abort } => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, abort.code, abort.message.clone()).node(*node_key)
            }
        };
        self.error(e)
    }

    /// Adds what the protections decided, the request id, metrics and logs.
    pub fn finish(mut self, mut response: Response) -> Response {
        let status = response.status();
        // The protections' headers first, then the response's own, moved in.
        let own = std::mem::take(response.headers_mut());
        let mut last = None;
        for (name, value) in own {
            let name = match name {
                Some(name) => last.insert(name).clone(),
                // The iterator gives a name once for all of its values.
                None => last.clone().expect("a header value follows its name"),
            };
            self.response_headers.append(name, value);
        }
        *response.headers_mut() = std::mem::take(&mut self.response_headers);
        let headers = response.headers_mut();
        if self.rt.test_mode
            && let Ok(trace) = HeaderValue::from_str(&trace_header(&self.steps))
        {
            headers.insert(TRACE_HEADER, trace);
        }
        if (status == StatusCode::UNAUTHORIZED || (status == StatusCode::FORBIDDEN && self.challenge_on_forbidden))
            && let Some(challenge) = &self.challenge
        {
            headers.insert(header::WWW_AUTHENTICATE, challenge.clone());
        }
        headers.insert(request_id::HEADER, self.request_id.header_value());
        let duration = self.started.elapsed();
        self.metrics
            .request(&self.method, status.as_u16(), duration.as_secs_f64());
        tracing::info!(
            target: "svc::access",
            request_id = %self.request_id,
            method = %self.method,
            route = self.route,
            status = status.as_u16(),
            duration_us = duration.as_micros() as u64,
            client_ip = %self.client_ip,
        );
        if let Some(dev) = &self.rt.dev_trace {
            let body = self.rt.dev_details.as_ref().and_then(|d| d.take(&self.request_id));
            dev(&Trace {
                request_id: self.request_id.clone(),
                method: self.method.clone(),
                path: self.uri.path().to_string(),
                query: self.uri.query().map(str::to_string),
                headers: self.headers.clone(),
                body,
                route: self.route,
                status: status.as_u16(),
                steps: self.steps.clone(),
                logs: self.logs.clone(),
                duration,
            });
        }
        response
    }
}
