//! What a generated route handler receives, and its request inputs, parsed once.

use crate::error::ApiError;
use crate::exchange::Exchange;
use crate::runtime::Runtime;
use axum::extract::{ConnectInfo, FromRequest, Request, State};
use http::StatusCode;
use std::net::SocketAddr;
use std::sync::Arc;

/// The extractor of generated handlers: the runtime, the peer, the path parameters and
/// the request. Path parameters that are not valid UTF-8 after percent-decoding are
/// answered with the JSON error shape (axum's own rejection would be plain text).
pub struct Call {
    pub rt: Arc<Runtime>,
    pub peer: SocketAddr,
    pub params: Result<Vec<(String, String)>, ApiError>,
    pub request: Request,
}

impl FromRequest<Arc<Runtime>> for Call {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, state: &Arc<Runtime>) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = req.into_parts();
        let peer = match ConnectInfo::<SocketAddr>::from_request_parts(&mut parts, state).await {
            Ok(ConnectInfo(p)) => p,
            Err(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        };
        let params = match axum::extract::RawPathParams::from_request_parts(&mut parts, state).await {
            Ok(raw) => Ok(raw.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            Err(_) => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_parameter",
                "a path parameter is not valid UTF-8",
            )),
        };
        let State(rt) = State::<Arc<Runtime>>::from_request_parts(&mut parts, state)
            .await
            .expect("state is always present");
        Ok(Call {
            rt,
            peer,
            params,
            request: Request::from_parts(parts, body),
        })
    }
}

use axum::extract::FromRequestParts;

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
        params: Result<Vec<(String, String)>, ApiError>,
    },
    Ready(T),
}

impl<T: RequestInputs> Lazy<T> {
    pub fn new(body: axum::body::Body, params: Result<Vec<(String, String)>, ApiError>) -> Self {
        Lazy::Pending {
            body: crate::body::DrainOnDrop::new(body),
            params,
        }
    }

    /// Inputs parsed already.
    pub fn ready(inputs: T) -> Self {
        Lazy::Ready(inputs)
    }

    /// The parsed inputs, or the 4xx to answer.
    pub async fn parse(self, ex: &Exchange<'_>) -> Result<T, ApiError> {
        let (body, params) = match self {
            Lazy::Ready(inputs) => return Ok(inputs),
            Lazy::Pending { body, params } => (body, params),
        };
        let params = params?;
        let bytes = if T::HAS_BODY {
            crate::body::read_bytes(&ex.headers, body.take(), ex.runtime().limits.body_bytes).await?
        } else {
            axum::body::Bytes::new()
        };
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
