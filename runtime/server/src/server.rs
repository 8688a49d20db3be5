//! The server around the routes: health and metrics endpoints, JSON 404/405, request ids,
//! a request timeout (408), a last-resort panic guard (500), and graceful shutdown.
//!
//! Generated code builds a `Router<Arc<Runtime>>` of its routes and hands it to
//! [`app`]; [`serve`] runs it until SIGTERM or SIGINT, letting in-flight requests finish.

use crate::apikey::KeyIndex;
use crate::error::ApiError;
use crate::request_id::{self, RequestId};
use crate::runtime::Runtime;
use crate::store::WorkspaceStore;
use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderValue, Method, StatusCode, header};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The complete application: `routes` plus `/healthz`, `/metrics`, the 404 fallback, and
/// around all of it the guard every request goes through.
pub type App = Guard<Router>;

/// Builds the [`App`].
///
/// The guard wraps the whole router once rather than being added with `Router::layer`,
/// which would wrap every route's boxed service in a second boxed service: one routing
/// step and one box per request instead of two (about 3,000 instructions a request,
/// measured with `bench/instructions.py`).
pub fn app(rt: Arc<Runtime>, routes: Router<Arc<Runtime>>) -> App {
    let router = routes
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .with_state(rt.clone());
    Guard { inner: router, rt }
}

async fn healthz(State(rt): State<Arc<Runtime>>) -> Response {
    let body = rt.health.to_json().to_string();
    let mut r = (StatusCode::OK, body).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

async fn metrics(State(rt): State<Arc<Runtime>>) -> Response {
    let mut r = (StatusCode::OK, rt.metrics.render()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    r
}

async fn not_found(req: Request) -> Response {
    let id = RequestId::of(req.headers());
    let mut e = ApiError::for_status(StatusCode::NOT_FOUND).request_id(id);
    e.message = format!("no route matches {} {}", req.method(), req.uri().path());
    e.into_response()
}

/// The answer for a known path and a method it does not accept: 405 with `Allow`.
pub fn method_not_allowed(req: &Request, allow: &'static str) -> Response {
    let id = RequestId::of(req.headers());
    let mut e = ApiError::for_status(StatusCode::METHOD_NOT_ALLOWED).request_id(id);
    e.message = format!("this route accepts {allow}, not {}", req.method());
    let mut r = e.into_response();
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// Every request: a request id (kept from a well-formed `X-Request-Id`, else generated),
/// the timeout, and a guard that turns a panic outside node code into a 500 instead of a
/// dropped connection.
///
/// A hand-written service rather than `axum::middleware::from_fn`: no boxed future per
/// request, and the timeout's timer is only armed when the route has to wait (most
/// requests finish in their first poll and never touch the timer wheel).
#[derive(Clone)]
pub struct Guard<S> {
    inner: S,
    rt: Arc<Runtime>,
}

impl<S> tower::Service<Request> for Guard<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = GuardFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let id = RequestId::assign(req.headers_mut());
        let method = req.method().clone();
        GuardFuture {
            inner: self.inner.call(req),
            timer: None,
            started: Instant::now(),
            id,
            method,
            rt: self.rt.clone(),
        }
    }
}

pin_project_lite::pin_project! {
    pub struct GuardFuture<F> {
        #[pin]
        inner: F,
        // Armed on the first `Pending`, at `started + timeout`.
        timer: Option<Pin<Box<tokio::time::Sleep>>>,
        started: Instant,
        id: RequestId,
        method: Method,
        rt: Arc<Runtime>,
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for GuardFuture<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let inner = this.inner;
        let mut response = match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(Ok(response))) => response,
            Ok(Poll::Ready(Err(never))) => match never {},
            Ok(Poll::Pending) => {
                let deadline = *this.started + this.rt.limits.timeout;
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline.into())));
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                tracing::warn!(request_id = %this.id, timeout_ms = this.rt.limits.timeout.as_millis() as u64, "request timed out");
                this.rt
                    .metrics
                    .request("-", this.method, 408, this.started.elapsed().as_secs_f64());
                let mut r = ApiError::for_status(StatusCode::REQUEST_TIMEOUT)
                    .request_id(&*this.id)
                    .into_response();
                r.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                r
            }
            Err(_) => {
                tracing::error!(request_id = %this.id, "a request handler panicked");
                this.rt
                    .metrics
                    .request("-", this.method, 500, this.started.elapsed().as_secs_f64());
                ApiError::for_status(StatusCode::INTERNAL_SERVER_ERROR)
                    .request_id(&*this.id)
                    .into_response()
            }
        };
        if !response.headers().contains_key(request_id::HEADER) {
            response
                .headers_mut()
                .insert(request_id::HEADER, this.id.header_value());
        }
        Poll::Ready(Ok(response))
    }
}

/// Replaces the default panic hook (which prints the raw panic message to stderr) with one
/// that logs through `tracing`, with known secret values redacted: a node that panics
/// with a secret in its message must not leak it into the server's output.
pub fn install_panic_hook(redactor: crate::secrets::Redactor) {
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-text payload".to_string());
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!(target: "svc::panic", location = %location, "panic: {}", redactor.redact(&message));
    }));
}

/// Runs `app` on `listener` until `shutdown` resolves, then waits for in-flight requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: App,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let make_service = axum::ServiceExt::<Request>::into_make_service_with_connect_info::<SocketAddr>(app);
    axum::serve(listener, make_service)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

/// How often the key reloader compares the store's key revision: the fast path for
/// SQLite, a backstop behind LISTEN/NOTIFY for PostgreSQL.
pub const KEY_POLL_EVERY: Duration = Duration::from_millis(500);
/// How often the key reloader reloads every key whatever the revision says (a store
/// recreated from a backup can come back with an old revision).
pub const FULL_RELOAD_EVERY: Duration = Duration::from_secs(60);

/// Keeps `index` in step with the store: reloads every key when the store pushes a change
/// ([`WorkspaceStore::key_changes`]), when its key revision moves (polled every
/// [`KEY_POLL_EVERY`]), and every [`FULL_RELOAD_EVERY`] regardless. While the store cannot
/// be read, the index keeps the keys it last loaded; the outage is logged once, counted,
/// and shown by `/healthz`. Returns the task.
pub fn spawn_key_reloader(
    store: Arc<dyn WorkspaceStore>,
    index: Arc<KeyIndex>,
    rt: Arc<Runtime>,
) -> tokio::task::JoinHandle<()> {
    let changes = store.key_changes();
    tokio::spawn(async move {
        let mut seen: Option<i64> = None;
        let mut last_full = Instant::now();
        loop {
            let pushed = async {
                match &changes {
                    Some(c) => c.wait().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = pushed => {}
                _ = tokio::time::sleep(KEY_POLL_EVERY) => {}
            }
            let full =
                changes.as_ref().is_some_and(|c| c.take_reload_all()) || last_full.elapsed() >= FULL_RELOAD_EVERY;
            let store = store.clone();
            let target = index.clone();
            let previous = if full { None } else { seen };
            let outcome = tokio::task::spawn_blocking(move || -> Result<Option<(i64, usize)>, String> {
                // The revision is read first: a change that lands during the reload moves it
                // again, and the next round reloads once more.
                let revision = store.keys_revision().map_err(|e| e.to_string())?;
                if previous == Some(revision) {
                    return Ok(None);
                }
                let keys = store.list_keys().map_err(|e| e.to_string())?;
                let count = keys.len();
                target.replace(keys);
                Ok(Some((revision, count)))
            })
            .await
            .unwrap_or_else(|e| Err(format!("the reload task failed: {e}")));
            let stores = &rt.metrics.stores;
            match outcome {
                Ok(reloaded) => {
                    if !rt.health.workspace_reachable() {
                        tracing::info!("workspace store reachable again; API keys reloaded");
                    }
                    if full {
                        last_full = Instant::now();
                    }
                    if let Some((revision, count)) = reloaded {
                        seen = Some(revision);
                        stores.key_reloads.inc();
                        stores.keys_loaded.set(count as i64);
                        tracing::debug!(keys = count, revision, full, "reloaded API keys");
                        rt.health.reloaded(count);
                    } else {
                        rt.health.reloaded(index.len());
                    }
                    stores.workspace_up.set(1);
                }
                Err(e) => {
                    stores.workspace_errors.inc();
                    stores.workspace_up.set(0);
                    if rt.health.unreachable() {
                        tracing::error!(
                            "cannot read the workspace store: {e}; verifying API keys against the {} keys loaded last until it answers",
                            index.len()
                        );
                    }
                }
            }
        }
    })
}
