//! Shared by the runtime's integration tests: test nodes, handlers wired the way
//! generated routes are, a real server on a free loopback port, an HTTP client, and
//! captured logs.

#![allow(dead_code, unused_macros)]

use axum::Router;
use axum::routing::{MethodRouter, any, get};
use http::StatusCode;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use svc_runtime::Runtime;
use svc_runtime::ratelimit::RateLimiter;
use svc_sdk::CodeFunctionNode;

/// A handler for the route named `$route`, opened as a generated route opens one: in
/// `$answer`, `$ex` is the request's `Exchange`, `$metrics` its route's counters
/// (`$metrics.node(…)`), and `$body` the request's body. `[a, b]` before the closure
/// names captured values cloned into each request.
macro_rules! handler {
    ($route:expr, $([$($captured:ident),*])? |$ex:ident, $metrics:ident, $body:pat_param| $answer:block) => {
        move |axum::extract::State(rt): axum::extract::State<std::sync::Arc<svc_runtime::Runtime>>,
              axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
              req: axum::extract::Request| {
            $($(let $captured = $captured.clone();)*)?
            async move {
                let (parts, $body) = req.into_parts();
                let $metrics = rt.metrics.route($route, &[], &[]);
                #[allow(unused_mut)]
                let mut $ex = svc_runtime::Exchange::new(rt.clone(), &$metrics, parts, peer);
                $answer
            }
        }
    };
}
#[allow(unused_imports)] // Not every test binary opens exchanges by hand.
pub(crate) use handler;

/// A GET route named `route` that runs node `N` (node id `node`) on `inputs()` and
/// answers its outputs as JSON, or its failure as generated routes do without `on_fail`.
pub fn node_route<N: CodeFunctionNode>(
    route: &'static str,
    node: &'static str,
    inputs: fn() -> N::Inputs,
) -> MethodRouter<Arc<Runtime>> {
    get(handler!(
        route,
        [route, node, inputs] | ex,
        metrics,
        _body | {
            match ex.run_node::<N>(&metrics.node(node, "code"), inputs(), true).await {
                Ok(out) => ex.json(StatusCode::OK, &out),
                Err(e) => ex.node_error(e),
            }
        }
    ))
}

/// A route named `limited` behind one Rate Limit (node `limit`, by IP) answering `true`.
pub fn rate_limited_route(limiter: Arc<RateLimiter>) -> MethodRouter<Arc<Runtime>> {
    any(handler!(
        "limited",
        [limiter] | ex,
        metrics,
        _body | {
            let key = ex.ip_key();
            match ex.rate_limit(&metrics.node("limit", "rate-limit"), &limiter, key).await {
                Ok(true) => ex.json(StatusCode::OK, &true),
                Ok(false) => ex.status(StatusCode::TOO_MANY_REQUESTS),
                Err(e) => ex.error(e),
            }
        }
    ))
}

/// Code nodes, defined with the real macro.
pub mod nodes {
    pub mod greet {
        use svc_sdk::prelude::*;
        define_code_function_node! {
            node_key: "test.greet",
            name: "Greet",
            inputs: { name: t::string() },
            outputs: { greeting: t::string() },
            run: |ctx| async move {
                ctx.log(format_args!("greeting {}", ctx.inputs.name));
                Ok(Outputs { greeting: format!("hello {}", ctx.inputs.name) })
            },
        }
    }

    pub mod fail {
        use svc_sdk::prelude::*;
        define_code_function_node! {
            node_key: "test.fail",
            name: "Fail",
            inputs: { code: t::string().optional() },
            outputs: { never: t::string() },
            run: |ctx| async move {
                ctx.log("about to fail");
                Err(ctx.fail("the order cannot be priced", ctx.inputs.code.as_deref()))
            },
        }
    }

    pub mod panic {
        use svc_sdk::prelude::*;
        define_code_function_node! {
            node_key: "test.panic",
            name: "Panic",
            outputs: { never: t::string() },
            run: |ctx| async move {
                let token = ctx.secret("API_TOKEN")?;
                if token.expose().len() < 1000 {
                    panic!("boom with {}", token.expose());
                }
                Ok(Outputs { never: String::new() })
            },
        }
    }

    /// Unwinds as the TypeScript engine does when it has no room for a call.
    pub mod busy {
        use svc_sdk::prelude::*;
        define_code_function_node! {
            node_key: "test.busy",
            name: "Busy",
            outputs: { never: t::string() },
            run: |ctx| async move {
                if ctx.node_key() == "test.busy" {
                    std::panic::resume_unwind(Box::new(svc_sdk::__private::NodeAbort::new(
                        svc_sdk::__private::NODE_BUSY,
                        "no room in the engine",
                    )));
                }
                Ok(Outputs { never: String::new() })
            },
        }
    }

    pub mod leaky {
        use svc_sdk::prelude::*;
        define_code_function_node! {
            node_key: "test.leaky",
            name: "Leaky",
            outputs: { length: t::number() },
            run: |ctx| async move {
                let token = ctx.secret("API_TOKEN")?;
                // A careless node: logs the secret's value itself.
                ctx.log(format_args!("using token {}", token.expose()));
                ctx.log(format_args!("debug {token:?} / {token}"));
                Ok(Outputs { length: token.expose().len() as f64 })
            },
        }
    }

    pub mod context {
        use svc_sdk::prelude::*;
        define_code_function_node! {
            node_key: "test.context",
            name: "Context",
            outputs: { env: t::any(), request: t::any() },
            run: |ctx| async move {
                let env = serde_json::json!({
                    "isDev": ctx.env.is_dev,
                    "version": ctx.env.version,
                    "gitSha": ctx.env.git_sha,
                    "HOME": ctx.env.get("HOME"),
                    "APP_TEST_VAR": ctx.env.get("APP_TEST_VAR"),
                    "SVC_DEV_TRACE_TOKEN": ctx.env.get("SVC_DEV_TRACE_TOKEN"),
                    "LISTEN_FDS": ctx.env.get("LISTEN_FDS"),
                });
                let r = ctx.request.as_ref().unwrap();
                let request = serde_json::json!({ "method": r.method, "url": r.url, "headers": r.headers });
                Ok(Outputs { env, request })
            },
        }
    }

    pub mod fetcher {
        use svc_sdk::prelude::*;
        define_code_function_node! {
            node_key: "test.fetch",
            name: "Fetch",
            inputs: { url: t::string(), timeout_ms: t::number().optional(), max_bytes: t::number().optional(), post: t::boolean().default(false) },
            outputs: { status: t::number(), body: t::string() },
            run: |ctx| async move {
                let mut request = if ctx.inputs.post {
                    Request::post(ctx.inputs.url.clone()).bearer_auth(&ctx.secret("API_TOKEN")?).json(&serde_json::json!({"hello": "world"}))
                } else {
                    Request::get(ctx.inputs.url.clone())
                };
                if let Some(ms) = ctx.inputs.timeout_ms {
                    request = request.timeout(std::time::Duration::from_millis(ms as u64));
                }
                if let Some(n) = ctx.inputs.max_bytes {
                    request = request.max_response_bytes(n as usize);
                }
                match ctx.fetch(request).await {
                    Ok(r) => Ok(Outputs { status: r.status as f64, body: r.text() }),
                    Err(e) => Err(ctx.fail(e.to_string(), "FETCH_FAILED")),
                }
            },
        }
    }
}

/// A running server; stops when dropped.
pub struct TestServer {
    pub base: String,
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Serves `routes` with `rt` on a free loopback port.
    pub async fn start(rt: Arc<Runtime>, routes: Router<Arc<Runtime>>) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let app = svc_runtime::server::app(rt, routes);
        let done = tokio::spawn(svc_runtime::server::serve(listener, app, async move {
            let _ = rx.await;
        }));
        TestServer {
            base: format!("http://{addr}"),
            addr,
            stop: Some(tx),
            done: Some(done),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Begins a graceful shutdown.
    pub fn shutdown(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }

    /// Shuts down (if that has not begun) and waits for the server to have stopped,
    /// `within` at most.
    pub async fn stopped_within(&mut self, within: std::time::Duration) {
        self.shutdown();
        let done = self.done.take().expect("the server runs");
        let stopped = tokio::time::timeout(within, done).await;
        stopped.expect("the server stops in time").unwrap().unwrap();
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Serves a plain axum `app` (an upstream service, not an svc route server) on a free
/// loopback port for the rest of the test; returns its `http://…` base.
pub async fn upstream(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Sends `request` and reads the answer's JSON body (check the status first where it
/// matters).
pub async fn json_of(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Sends `request` and reads the answer's body as text.
pub async fn text_of(request: reqwest::RequestBuilder) -> String {
    request.send().await.unwrap().text().await.unwrap()
}

/// Sends `request`; the answer's status.
pub async fn status_of(request: reqwest::RequestBuilder) -> StatusCode {
    request.send().await.unwrap().status()
}

/// Every log line any test in this binary produced (JSON lines).
pub fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = {
            let buffer = buffer.clone();
            move || LogWriter(buffer.clone())
        };
        let _ = tracing_subscriber::fmt()
            .json()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(writer)
            .try_init();
        buffer
    })
    .clone()
}

pub fn captured_logs() -> String {
    String::from_utf8_lossy(&logs().lock().unwrap()).into_owned()
}

pub struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Fails unless `text` holds each of `parts`, naming the first that is missing.
pub fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no `{part}` in:\n{text}");
    }
}
