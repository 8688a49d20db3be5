//! What a generated route handler receives, and its request inputs, parsed once.

use crate::error::ApiError;
use crate::exchange::Exchange;
use crate::runtime::Runtime;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use futures_util::FutureExt;
use http::StatusCode;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

/// The extractor of generated handlers: the runtime, the peer, the path parameters and
/// the request. Path parameters that are not valid UTF-8 after percent-decoding are
/// answered with the JSON error shape (axum's own rejection would be plain text).
pub struct Call {
    pub rt: Arc<Runtime>,
    pub peer: SocketAddr,
    pub params: Result<Vec<(String, String)>, InvalidPathParameter>,
    pub request: Request,
}

/// A path parameter that is not valid UTF-8 after percent-decoding: answered 400 when
/// the route reads its inputs.
///
/// A unit rather than the [`ApiError`] itself: a `Call` and the route's pending inputs
/// live in every request's future, and an `ApiError` would make both 130 bytes larger
/// for a case that almost never happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidPathParameter;

impl From<InvalidPathParameter> for ApiError {
    fn from(_: InvalidPathParameter) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_parameter",
            "a path parameter is not valid UTF-8",
        )
    }
}

impl Call {
    /// Takes a request apart for a route of the runtime `rt`. Everything it reads is at
    /// hand (the peer and the path parameters are request extensions), so it does not
    /// wait.
    pub fn new(rt: Arc<Runtime>, req: Request) -> Call {
        let (mut parts, body) = req.into_parts();
        let peer = match parts.extensions.get::<ConnectInfo<SocketAddr>>() {
            Some(ConnectInfo(p)) => *p,
            None => SocketAddr::from(([0, 0, 0, 0], 0)),
        };
        // axum's extractor is an `async fn` that never waits: polled once, it is ready.
        let params = match axum::extract::RawPathParams::from_request_parts(&mut parts, &rt).now_or_never() {
            Some(Ok(raw)) => Ok(raw.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            Some(Err(_)) | None => Err(InvalidPathParameter),
        };
        Call {
            rt,
            peer,
            params,
            request: Request::from_parts(parts, body),
        }
    }
}

impl FromRequest<Arc<Runtime>> for Call {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, state: &Arc<Runtime>) -> Result<Self, Self::Rejection> {
        Ok(Call::new(state.clone(), req))
    }
}

/// A generated route's handler, for axum's router: `handle` takes the [`Call`] and
/// returns the route's future, which axum boxes as it is.
///
/// An axum handler closure (`move |call: Call| handle(state, call)`) would box a larger
/// future instead: an `async` block around the extractor's future and the route's, which
/// every request copies.
#[derive(Clone, Copy)]
pub struct RouteHandler<F>(pub F);

/// The marker of [`RouteHandler`]'s `Handler` implementation (axum's handler traits
/// are told apart by a type parameter).
pub enum ByRoute {}

impl<F, Fut> axum::handler::Handler<ByRoute, Arc<Runtime>> for RouteHandler<F>
where
    F: Fn(Call) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = axum::response::Response> + Send + 'static,
{
    type Future = Fut;

    fn call(self, req: Request, rt: Arc<Runtime>) -> Fut {
        (self.0)(Call::new(rt, req))
    }
}

/// A route's typed request inputs (body, query parameters, headers, path parameters), as
/// generated from the flow's `request` block.
pub trait RequestInputs: Sized + Send + Sync + 'static {
    /// Whether the route declares a body (otherwise the body is not read).
    const HAS_BODY: bool;
    fn parse(ex: &Exchange<'_>, params: &[(String, String)], body: &[u8]) -> Result<Self, ApiError>;
}

/// Request inputs that are parsed when first needed: after the protection checks (a
/// rejected request never has its body read), at most once per request.
///
/// [`Lazy::parse`] consumes it and hands out the inputs by value, so that generated code
/// can move a field into the node that reads it last instead of cloning it. Code that has
/// parsed them and then calls a merge point's function passes them on with
/// [`Lazy::ready`].
pub enum Lazy<T> {
    Pending {
        body: crate::body::DrainOnDrop,
        params: Result<Vec<(String, String)>, InvalidPathParameter>,
    },
    /// The body read (a Check Signature verified its bytes), not yet parsed.
    Read {
        bytes: axum::body::Bytes,
        params: Result<Vec<(String, String)>, InvalidPathParameter>,
    },
    Ready(T),
}

impl<T: RequestInputs> Lazy<T> {
    pub fn new(body: axum::body::Body, params: Result<Vec<(String, String)>, InvalidPathParameter>) -> Self {
        Lazy::Pending {
            body: crate::body::DrainOnDrop::new(body),
            params,
        }
    }

    /// Inputs parsed already.
    pub fn ready(inputs: T) -> Self {
        Lazy::Ready(inputs)
    }

    /// The body's exact bytes, read now if they were not (under the body limit and read
    /// timeout, as for parsing): what a webhook's signature is checked over. Parsing
    /// reads them from here afterwards, with no second copy.
    pub async fn bytes(&mut self, ex: &Exchange<'_>) -> Result<axum::body::Bytes, ApiError> {
        let pending = std::mem::replace(
            self,
            Lazy::Read {
                bytes: axum::body::Bytes::new(),
                params: Ok(Vec::new()),
            },
        );
        let (body, params) = match pending {
            Lazy::Pending { body, params } => (body, params),
            read @ Lazy::Read { .. } => {
                *self = read;
                let Lazy::Read { bytes, .. } = self else { unreachable!() };
                return Ok(bytes.clone());
            }
            // Parsed already: generated code checks signatures before any node reads the
            // request (svc check refuses a flow that does otherwise).
            Lazy::Ready(inputs) => {
                *self = Lazy::Ready(inputs);
                return Ok(axum::body::Bytes::new());
            }
        };
        let bytes = crate::body::read_bytes(&ex.headers, body.take(), ex.runtime().limits.body_bytes).await?;
        if let Some(details) = &ex.runtime().dev_details {
            details.keep(&ex.request_id, bytes.clone());
        }
        *self = Lazy::Read {
            bytes: bytes.clone(),
            params,
        };
        Ok(bytes)
    }

    /// The parsed inputs, or the 4xx to answer.
    pub async fn parse(self, ex: &Exchange<'_>) -> Result<T, ApiError> {
        let (body, params) = match self {
            Lazy::Ready(inputs) => return Ok(inputs),
            Lazy::Read { bytes, params } => return T::parse(ex, &params?, &bytes),
            Lazy::Pending { body, params } => (body, params),
        };
        let params = params?;
        let bytes = if T::HAS_BODY {
            crate::body::read_bytes(&ex.headers, body.take(), ex.runtime().limits.body_bytes).await?
        } else {
            axum::body::Bytes::new()
        };
        if T::HAS_BODY
            && let Some(details) = &ex.runtime().dev_details
        {
            details.keep(&ex.request_id, bytes.clone());
        }
        T::parse(ex, &params, &bytes)
    }
}

/// The request id the server's middleware assigned (or a new one).
pub fn request_id(request: &Request) -> crate::request_id::RequestId {
    crate::request_id::RequestId::of(request.headers())
}

/// A path parameter by name (present whenever the route matched).
pub fn path_param(params: &[(String, String)], name: &str) -> Result<String, ApiError> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "missing_parameter",
                format!("the path parameter `{name}` is missing"),
            )
            .field(format!("params.{name}"))
        })
}
