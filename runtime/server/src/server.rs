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
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
        .route("/healthz", get(healthz).fallback(only_get))
        .route("/metrics", get(metrics).fallback(only_get))
        .fallback(not_found)
        .with_state(rt.clone());
    Guard { inner: router, rt }
}

async fn healthz(State(rt): State<Arc<Runtime>>) -> Response {
    let body = if rt.health_details {
        rt.health.detailed_json()
    } else {
        crate::health::Health::public_json()
    };
    let body = body.to_string();
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

/// `/healthz` and `/metrics` asked with another method: the JSON 405 of every route.
async fn only_get(req: Request) -> Response {
    method_not_allowed(&req, "GET, HEAD")
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
        // A panic outside the workers (start-up) ends the process: its line is written
        // first. A node's panic is caught, and its worker does not wait for stderr.
        if std::thread::current().name() == Some("main") {
            crate::log_lines::flush(Duration::from_secs(1));
        }
    }));
}

/// Runs `app` on `listener` until `shutdown` resolves, then drains in two steps, as Envoy
/// does. First no new connection is accepted, and for
/// [`Limits::drain_window`](crate::runtime::Limits::drain_window) requests arriving on
/// open connections are still answered, with `Connection: close` (HTTP/2 connections get
/// a GOAWAY): a keep-alive client that sent a request as the signal came gets its answer.
/// Then connections with no request in flight (idle, or still sending a head) are closed
/// at once, requests in flight may finish, and whatever is still open after
/// [`Limits::drain_timeout`](crate::runtime::Limits::drain_timeout) (counted from the
/// signal) is closed. Returns when every connection is gone.
///
/// Our own accept loop on hyper-util rather than `axum::serve`, for the limits a server
/// facing the internet needs and `axum::serve` does not set: a deadline for reading each
/// request head (slowloris; kept by [`crate::idle::Watchdog`]), and a bounded drain.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: App,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = app.rt.limits;
    serve_with_limits(listener, app, &limits, shutdown).await
}

/// [`serve`] for any service, with the connection limits of `limits` (its request-head
/// deadline, connection cap and drain): what the Builder serves its page and API with,
/// so that it holds against slow and idle clients as a generated server does.
pub async fn serve_with_limits<S>(
    listener: tokio::net::TcpListener,
    app: S,
    limits: &crate::runtime::Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto::Builder;

    raise_open_files_limit();
    let drain_timeout = limits.drain_timeout;
    let mut builder = Builder::new(TokioExecutor::new());
    // The request-head deadline is the watchdog's, not a hyper timer per request head.
    //
    // `writev(false)`: each answer goes out as one buffer (`send`), the head and the JSON
    // body copied together, instead of a `writev` of the two. A route's answer is a small
    // JSON body built in memory, so the copy costs less than the vectored write does in
    // the kernel: 5 % less CPU per request under load (`bench/load.py --compare`).
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(None)
        .writev(false);
    // A peer that stops answering is pinged, then dropped; an idle HTTP/2 connection is
    // closed by the watchdog, as an idle HTTP/1 one is.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.header_read_timeout))
        .keep_alive_timeout(limits.header_read_timeout);
    let max_connections = limits.max_connections;
    let drain_window = limits.drain_window.min(drain_timeout);
    // Set when the drain begins: every answer from then on closes its connection.
    let draining = Arc::new(AtomicBool::new(false));
    let watchdog = crate::idle::Watchdog::new(limits.header_read_timeout);
    let watching = tokio::spawn(watchdog.clone().run());
    let builder = Arc::new(builder);
    let (closing, closing_seen) = tokio::sync::watch::channel(Shutdown::Serve);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        if connections.len() >= max_connections {
            // Answered rather than left in the kernel's queue, where the client would wait
            // without knowing why.
            tokio::spawn(refuse_connection(stream));
            continue;
        }
        let app = app.clone();
        let watch = watchdog.watch();
        let requests = watch.clone();
        let draining_now = draining.clone();
        let service = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
            let version = req.version();
            let in_flight = requests.request(version);
            let mut req = req.map(axum::body::Body::new);
            req.extensions_mut().insert(axum::extract::ConnectInfo(remote));
            // Called at once rather than through `ServiceExt::oneshot`: the app is always
            // ready (axum's router is, and `Guard` adds no back-pressure), and a oneshot
            // would carry the request inside this future until its first poll, one more
            // copy of it for every request. (tests/server.rs keeps the app always ready.)
            let call = tower::Service::call(&mut app.clone(), req);
            let draining = draining_now.clone();
            async move {
                let _in_flight = in_flight;
                let mut response = call.await;
                if draining.load(Ordering::Relaxed)
                    && version <= http::Version::HTTP_11
                    && let Ok(r) = &mut response
                {
                    r.headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                response
            }
        });
        let builder = builder.clone();
        let mut closing = closing_seen.clone();
        connections.spawn(async move {
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            let mut closed = std::pin::pin!(watch.closed());
            // Each step of the shutdown: `Drain`, then `Close`.
            let mut announced = false;
            loop {
                tokio::select! {
                    _ = conn.as_mut() => return,
                    // Idle past the request-head deadline: an HTTP/2 connection gets a
                    // GOAWAY and a moment to send it; any other is dropped, which closes it.
                    _ = closed.as_mut() => {
                        if watch.is_multiplexed() {
                            conn.as_mut().graceful_shutdown();
                            let _ = tokio::time::timeout(Duration::from_secs(1), conn).await;
                        }
                        return;
                    }
                    changed = closing.changed() => {
                        let step = if changed.is_ok() { *closing.borrow_and_update() } else { Shutdown::Close };
                        match step {
                            Shutdown::Serve => {}
                            // HTTP/1: answers now carry `Connection: close`. HTTP/2: a GOAWAY
                            // now; the streams it already has finish.
                            Shutdown::Drain => {
                                if watch.is_multiplexed() && !announced {
                                    announced = true;
                                    conn.as_mut().graceful_shutdown();
                                }
                            }
                            // Nothing in flight (idle, or a head still arriving): nothing to
                            // answer, closed at once. Otherwise the request finishes.
                            Shutdown::Close => {
                                if !watch.is_busy() {
                                    return;
                                }
                                if !announced {
                                    conn.as_mut().graceful_shutdown();
                                }
                                break;
                            }
                        }
                    }
                }
            }
            tokio::select! {
                _ = conn => {}
                _ = closed => {}
            }
        });
    }
    drop(listener);
    let signalled = tokio::time::Instant::now();
    let open = connections.len();
    if open > 0 {
        tracing::info!(connections = open, "draining open connections");
        draining.store(true, Ordering::Relaxed);
        let _ = closing.send(Shutdown::Drain);
        let _ = tokio::time::timeout(drain_window, async { while connections.join_next().await.is_some() {} }).await;
    }
    let _ = closing.send(Shutdown::Close);
    let drained = tokio::time::timeout_at(signalled + drain_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            connections = connections.len(),
            drain_timeout_ms = drain_timeout.as_millis() as u64,
            "closing the connections still open at the shutdown deadline"
        );
        connections.shutdown().await;
    }
    watching.abort();
    Ok(())
}

/// The steps of a shutdown, as each connection sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shutdown {
    Serve,
    /// Answers close their connections; HTTP/2 connections are sent a GOAWAY.
    Drain,
    /// Connections with nothing in flight are closed; the rest finish their requests.
    Close,
}

/// A connection past `--max-connections`: a JSON 503 with `Retry-After`, then closed.
/// Written as HTTP/1.1 whatever the client speaks (an HTTP/2 client sees the connection
/// close); bounded in time, so a client that does not read cannot hold it.
async fn refuse_connection(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let body = ApiError::for_status(StatusCode::SERVICE_UNAVAILABLE).to_json();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await?;
        stream.shutdown().await
    })
    .await;
}

/// What to do when `accept` fails: a connection that was reset before we took it is
/// nothing; anything else (out of file descriptors, most likely) is logged and waited out
/// briefly, so that the loop does not spin while the condition lasts.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    ) {
        return;
    }
    tracing::warn!("accepting a connection failed: {e}");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Raises the soft limit of open files to the hard limit, as Go's runtime and nginx's
/// `worker_rlimit_nofile` do: every connection is a file, and the soft default (often
/// 1,024) would refuse clients long before memory or CPU run out.
fn raise_open_files_limit() {
    #[cfg(unix)]
    // SAFETY: getrlimit and setrlimit only read and write the struct we pass.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
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
                let keys = store.index_keys().map_err(|e| e.to_string())?;
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
