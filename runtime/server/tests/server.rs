//! The server around routes: every error status in the one JSON shape, request ids,
//! limits, graceful shutdown, health, metrics, and client IPs behind proxies.

mod common;

use axum::Router;
use axum::extract::Request;
use axum::routing::{get, post};
use common::{TestServer, assert_contains, client, handler, json_of, rate_limited_route, text_of};
use http::StatusCode;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use svc_runtime::client_ip::TrustedProxies;
use svc_runtime::ratelimit::{Quota, RateLimiter};
use svc_runtime::{Runtime, body};

#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct Line {
    sku: String,
    quantity: f64,
}

#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct Order {
    lines: Vec<Line>,
}

fn routes() -> Router<Arc<Runtime>> {
    Router::new()
        .route(
            "/ws/api/orders",
            post(handler!("orders", |ex, _metrics, body| {
                let body_bytes = ex.runtime().limits.body_bytes;
                let order: Order = match body::read_json(&ex.headers, body, body_bytes).await {
                    Ok(o) => o,
                    Err(e) => return ex.error(e),
                };
                ex.json(StatusCode::CREATED, &order)
            }))
            .fallback(|req: Request| async move { svc_runtime::server::method_not_allowed(&req, "POST") }),
        )
        .route(
            "/ws/api/slow",
            get(handler!("slow", |ex, _metrics, _body| {
                let ms: u64 = ex
                    .uri
                    .query()
                    .and_then(|q| q.strip_prefix("ms="))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(300);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ex.json(StatusCode::OK, &serde_json::json!({"slept": ms}))
            })),
        )
        .route(
            "/ws/api/glue-panic",
            get(|| async move {
                if std::hint::black_box(true) {
                    panic!("a bug in glue code");
                }
                "unreachable"
            }),
        )
        .route(
            "/ws/api/ip",
            get(handler!("ip", |ex, _metrics, _body| {
                let ip = ex.client_ip.to_string();
                ex.json(StatusCode::OK, &serde_json::json!({"ip": ip}))
            })),
        )
}

fn runtime(timeout: Duration, body_bytes: usize, trusted: &str) -> Arc<Runtime> {
    let mut rt = Runtime::for_tests("ws/api");
    rt.limits.timeout = timeout;
    rt.limits.body_bytes = body_bytes;
    rt.trusted_proxies = TrustedProxies::parse(trusted).unwrap();
    Arc::new(rt)
}

async fn error_of(r: reqwest::Response) -> (StatusCode, serde_json::Value, http::HeaderMap) {
    let status = r.status();
    let headers = r.headers().clone();
    assert_eq!(headers["content-type"], "application/json", "{status}");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["status"], status.as_u16(), "{body}");
    assert!(body["error"]["code"].is_string(), "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    assert_eq!(
        body["error"]["request_id"].as_str(),
        headers.get("x-request-id").and_then(|v| v.to_str().ok()),
        "{body}"
    );
    (status, body, headers)
}

#[tokio::test]
async fn every_error_is_json_with_a_request_id() {
    let server = TestServer::start(runtime(Duration::from_millis(300), 1024, ""), routes()).await;
    let c = client();
    let url = server.url("/ws/api/orders");

    let (s, body, _) = error_of(
        c.post(&url)
            .header("content-type", "application/json")
            .body(r#"{"lines":[{"sku":"a","quantity":"two"}]}"#)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 400);
    assert_eq!(body["error"]["field"], "lines[0].quantity");
    let (s, body, _) = error_of(c.post(&url).body("{not json").send().await.unwrap()).await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_body"))
    );
    let (s, body, _) = error_of(c.post(&url).body(r#"{"lines":[],"admin":true}"#).send().await.unwrap()).await;
    assert_eq!(s, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `admin`")
    );
    let (s, _, _) = error_of(
        c.post(&url)
            .header("content-type", "text/plain")
            .body("{}")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 415);
    let (s, _, _) = error_of(
        c.post(&url)
            .body(format!(
                r#"{{"lines":[{{"sku":"{}","quantity":1}}]}}"#,
                "x".repeat(2000)
            ))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 413);
    let (s, _, _) = error_of(c.post(server.url("/ws/api/nope")).send().await.unwrap()).await;
    assert_eq!(s, 404);
    let (s, _, h) = error_of(c.get(&url).send().await.unwrap()).await;
    assert_eq!(s, 405);
    assert_eq!(h["allow"], "POST");
    let (s, _, _) = error_of(c.get(server.url("/ws/api/slow?ms=2000")).send().await.unwrap()).await;
    assert_eq!(s, 408);
    let (s, _, _) = error_of(c.get(server.url("/ws/api/glue-panic")).send().await.unwrap()).await;
    assert_eq!(s, 500);
    // The server kept serving through all of that.
    let r = c
        .post(&url)
        .body(r#"{"lines":[{"sku":"a","quantity":2}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
}

#[tokio::test]
async fn request_ids_are_kept_when_well_formed_and_generated_otherwise() {
    let server = TestServer::start(runtime(Duration::from_secs(5), 1024, ""), routes()).await;
    let c = client();
    let answered_id = |sent: &'static str| {
        let request = c.get(server.url("/ws/api/ip")).header("x-request-id", sent);
        async move { request.send().await.unwrap().headers()["x-request-id"].clone() }
    };
    assert_eq!(answered_id("trace-123").await, "trace-123");
    let id = answered_id("bad id <script>").await.to_str().unwrap().to_string();
    assert_eq!(id.len(), 24);
    let a = c.get(server.url("/ws/api/ip")).send().await.unwrap().headers()["x-request-id"].clone();
    let b = c.get(server.url("/nope")).send().await.unwrap().headers()["x-request-id"].clone();
    assert_ne!(a, b);
}

#[tokio::test]
async fn health_and_metrics() {
    let mut rt = Runtime::for_tests("ws/api");
    let limiter = Arc::new(RateLimiter::in_memory("limit", Quota::per(1, Duration::from_secs(60))));
    rt.limits.timeout = Duration::from_secs(5);
    let routes = routes().route("/ws/api/limited", rate_limited_route(limiter));
    let server = TestServer::start(Arc::new(rt), routes).await;
    let c = client();
    let r = c.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), r#"{"status":"ok"}"#);
    for _ in 0..3 {
        c.get(server.url("/ws/api/limited")).send().await.unwrap();
    }
    c.get(server.url("/ws/api/ip")).send().await.unwrap();
    let text = text_of(c.get(server.url("/metrics"))).await;
    assert_contains(
        &text,
        &[
            r#"svc_http_requests_total{route="limited",method="GET",status="200"} 1"#,
            r#"svc_http_requests_total{route="limited",method="GET",status="429"} 2"#,
            r#"svc_protection_outcomes_total{route="limited",node="limit",check="rate_limit",outcome="sequence-limited"} 2"#,
            "svc_http_request_duration_seconds_bucket{",
            r#"svc_http_request_duration_seconds_count{route="ip"} 1"#,
        ],
    );
}

#[tokio::test]
async fn client_ips_come_from_forwarded_headers_only_behind_trusted_proxies() {
    let c = client();
    // The test client connects from 127.0.0.1.
    let untrusted = TestServer::start(runtime(Duration::from_secs(5), 1024, ""), routes()).await;
    let body: serde_json::Value =
        json_of(c.get(untrusted.url("/ws/api/ip")).header("x-forwarded-for", "1.2.3.4")).await;
    assert_eq!(body["ip"], "127.0.0.1");
    let trusted = TestServer::start(runtime(Duration::from_secs(5), 1024, "127.0.0.1/32"), routes()).await;
    let body: serde_json::Value = json_of(
        c.get(trusted.url("/ws/api/ip"))
            .header("x-forwarded-for", "6.6.6.6, 1.2.3.4"),
    )
    .await;
    assert_eq!(body["ip"], "1.2.3.4");
    // `Forwarded` is not the header this server believes (X-Forwarded-For, the default):
    // ignored, as a client's own `Forwarded` passed through nginx must be.
    let body: serde_json::Value = json_of(
        c.get(trusted.url("/ws/api/ip"))
            .header("forwarded", "for=\"[2001:db8::1]:4711\""),
    )
    .await;
    assert_eq!(body["ip"], "127.0.0.1");
}

#[tokio::test]
async fn graceful_shutdown_finishes_in_flight_requests() {
    let mut server = TestServer::start(runtime(Duration::from_secs(10), 1024, ""), routes()).await;
    let url = server.url("/ws/api/slow?ms=600");
    let in_flight = tokio::spawn(async move { client().get(url).send().await.map(|r| r.status()) });
    tokio::time::sleep(Duration::from_millis(150)).await;
    server.shutdown();
    let status = in_flight.await.unwrap().expect("the in-flight request completes");
    assert_eq!(status, 200);
    server.stopped_within(Duration::from_secs(5)).await;
    // New connections are refused once it has stopped.
    assert!(client().get(server.url("/healthz")).send().await.is_err());
}

#[tokio::test]
async fn garbage_requests_get_4xx_not_crashes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start(runtime(Duration::from_secs(5), 1024, ""), routes()).await;
    for raw in [
        "GET /ws/api/ip HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
        "BREW /coffee HTCPCP/1.0\r\n\r\n",
        "POST /ws/api/orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST /ws/api/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{\"lin",
        "\u{0}\u{1}\u{2}garbage\r\n\r\n",
    ] {
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(raw.as_bytes()).await.unwrap();
        let mut buf = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut buf)).await;
        let text = String::from_utf8_lossy(&buf);
        if let Some(status) = text.split(' ').nth(1) {
            let code: u16 = status.parse().unwrap_or(0);
            assert!((400..500).contains(&code) || text.is_empty(), "{raw:?} → {text}");
        }
    }
    assert_eq!(client().get(server.url("/healthz")).send().await.unwrap().status(), 200);
}

/// Sends `count` requests with `body` over one TCP connection, each after the previous
/// answer, and returns the status of each (fewer when the server closed the connection).
async fn statuses_on_one_connection(server: &TestServer, path: &str, body: &str, count: usize) -> Vec<u16> {
    statuses_with_late_bodies(server, path, body, count, Duration::ZERO).await
}

/// Like [`statuses_on_one_connection`], with each body sent `late` after its headers (as
/// clients that write headers and body separately do).
async fn statuses_with_late_bodies(
    server: &TestServer,
    path: &str,
    body: &str,
    count: usize,
    late: Duration,
) -> Vec<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = server
        .url("")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut statuses = Vec::new();
    for _ in 0..count {
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if stream.write_all(head.as_bytes()).await.is_err() {
            break;
        }
        tokio::time::sleep(late).await;
        if stream.write_all(body.as_bytes()).await.is_err() {
            break;
        }
        // Read one response: headers, then content-length bytes of body.
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let status = loop {
            let n = match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => n,
                _ => return statuses,
            };
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + length {
                    break text[9..12].parse::<u16>().unwrap();
                }
            }
        };
        statuses.push(status);
    }
    statuses
}

#[tokio::test]
async fn unread_request_bodies_do_not_close_the_connection() {
    // `/ws/api/ip` never reads its body: the route's unread body is drained when the
    // route is done, so the next request can use the same connection.
    let server = TestServer::start(runtime(Duration::from_secs(5), 1024, ""), routes()).await;
    let routes_without_body_reading = Router::new().route(
        "/ws/api/ignore",
        post(|req: Request| async move {
            let (_, body) = req.into_parts();
            let _unread = body::DrainOnDrop::new(body);
            "ok"
        }),
    );
    let server2 = TestServer::start(runtime(Duration::from_secs(5), 1024, ""), routes_without_body_reading).await;
    let statuses = statuses_on_one_connection(&server2, "/ws/api/ignore", r#"{"a":1}"#, 3).await;
    assert_eq!(statuses, [200, 200, 200]);
    // The route answers before the body arrives; the body is read after the answer.
    let statuses =
        statuses_with_late_bodies(&server2, "/ws/api/ignore", r#"{"a":1}"#, 3, Duration::from_millis(50)).await;
    assert_eq!(statuses, [200, 200, 200]);
    // A body the route reads keeps the connection too, of course.
    let statuses = statuses_on_one_connection(&server, "/ws/api/orders", r#"{"lines":[]}"#, 3).await;
    assert_eq!(statuses, [201, 201, 201]);
}

#[tokio::test]
async fn large_answers_arrive_whole_on_a_kept_alive_connection() {
    // Answers go out as one buffer, head and body copied together (`writev(false)` in
    // the accept loop): a body far larger than hyper's write buffer must still arrive
    // byte for byte, and the connection must serve the next request.
    let server = TestServer::start(runtime(Duration::from_secs(10), 8 << 20, ""), routes()).await;
    let lines: Vec<String> = (0..60_000)
        .map(|i| format!(r#"{{"sku":"sku-{i:06}-abcdefghij","quantity":{i}}}"#))
        .collect();
    let order = format!(r#"{{"lines":[{}]}}"#, lines.join(","));
    assert!(order.len() > 2 << 20, "{}", order.len());
    let c = client();
    for _ in 0..2 {
        let r = c
            .post(server.url("/ws/api/orders"))
            .header("content-type", "application/json")
            .body(order.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let echoed: serde_json::Value = r.json().await.unwrap();
        let sent: serde_json::Value = serde_json::from_str(&order).unwrap();
        assert_eq!(echoed, sent);
    }
    let statuses = statuses_on_one_connection(&server, "/ws/api/orders", &order, 2).await;
    assert_eq!(statuses, [201, 201]);
}

/// `runtime`, with the connection limits of a test: a short header deadline, a short drain.
fn runtime_with_connection_limits(header_read: Duration, drain: Duration) -> Arc<Runtime> {
    let mut rt = Runtime::for_tests("ws/api");
    rt.limits.timeout = Duration::from_secs(10);
    rt.limits.header_read_timeout = header_read;
    rt.limits.drain_timeout = drain;
    Arc::new(rt)
}

/// Opens `count` connections that each send the start of a request head and no more.
async fn half_sent_heads(server: &TestServer, count: usize) -> Vec<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(b"GET /ws/api/ip HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .unwrap();
        held.push(s);
    }
    held
}

/// Waits until the server has closed every one of `conns` (a read sees EOF or a reset),
/// at most `within`; returns how many were still open then.
async fn still_open_after(conns: Vec<tokio::net::TcpStream>, within: Duration) -> usize {
    use tokio::io::AsyncReadExt;
    let deadline = tokio::time::Instant::now() + within;
    let mut open = 0;
    for mut s in conns {
        let mut buf = [0u8; 512];
        loop {
            match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(_)) => continue,
                Err(_) => {
                    open += 1;
                    break;
                }
            }
        }
    }
    open
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_clients_are_cut_at_the_header_deadline_while_others_are_served() {
    use tokio::io::AsyncWriteExt;
    let header_read = Duration::from_secs(2);
    let server = TestServer::start(
        runtime_with_connection_limits(header_read, Duration::from_secs(5)),
        routes(),
    )
    .await;
    let started = std::time::Instant::now();
    let slow = half_sent_heads(&server, 1000).await;
    // Drip-feeders: a byte every 100 ms keeps no deadline from running out.
    let mut drip = Vec::new();
    for _ in 0..10 {
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(b"GET /ws/api/ip HTTP/1.1\r\n").await.unwrap();
        drip.push(s);
    }
    let dripping = tokio::spawn(async move {
        for _ in 0..60 {
            for s in &mut drip {
                let _ = s.write_all(b"X").await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        drip
    });
    // Meanwhile every well-behaved client is served.
    let c = client();
    for _ in 0..50 {
        let r = c.get(server.url("/ws/api/ip")).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
    let served_within = started.elapsed();
    assert!(
        served_within < header_read,
        "50 requests were served while 1,010 slow clients held connections ({served_within:?})"
    );
    // Then every slow connection is closed at its deadline, not when the client gives up.
    assert_eq!(still_open_after(slow, header_read + Duration::from_secs(4)).await, 0);
    let drip = dripping.await.unwrap();
    assert_eq!(
        still_open_after(drip, Duration::from_secs(1)).await,
        0,
        "drip-fed heads have the same deadline"
    );
    assert_eq!(client().get(server.url("/healthz")).send().await.unwrap().status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_slow_and_stuck_clients_and_exits_within_the_deadline() {
    use tokio::io::AsyncWriteExt;
    let drain = Duration::from_millis(1500);
    // A header deadline far beyond the drain: only the shutdown can close these.
    let mut server = TestServer::start(
        runtime_with_connection_limits(Duration::from_secs(120), drain),
        routes(),
    )
    .await;
    let half_sent = half_sent_heads(&server, 200).await;
    let mut silent = Vec::new();
    for _ in 0..50 {
        silent.push(tokio::net::TcpStream::connect(server.addr).await.unwrap());
    }
    // A keep-alive connection idle after one answer.
    let mut idle = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A request that finishes inside the drain, and one that cannot.
    let finishes = tokio::spawn({
        let url = server.url("/ws/api/slow?ms=500");
        async move { client().get(url).send().await.map(|r| r.status()) }
    });
    let cannot = tokio::spawn({
        let url = server.url("/ws/api/slow?ms=8000");
        async move { client().get(url).send().await.map(|r| r.status()) }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;

    let asked = std::time::Instant::now();
    server.stopped_within(drain + Duration::from_secs(2)).await;
    let took = asked.elapsed();
    assert!(
        took >= drain - Duration::from_millis(100),
        "it waited for the long request ({took:?})"
    );
    assert_eq!(
        finishes.await.unwrap().expect("answered"),
        200,
        "in-flight requests that can finish, finish"
    );
    assert!(cannot.await.unwrap().is_err(), "the request past the deadline is cut");
    let mut every = half_sent;
    every.extend(silent);
    every.push(idle);
    assert_eq!(
        still_open_after(every, Duration::from_secs(1)).await,
        0,
        "every connection is closed"
    );
}

#[tokio::test]
async fn health_and_metrics_answer_other_methods_with_the_json_405() {
    let server = TestServer::start(runtime(Duration::from_secs(5), 1024, ""), routes()).await;
    let c = client();
    for path in ["/healthz", "/metrics"] {
        let (s, body, h) = error_of(c.post(server.url(path)).send().await.unwrap()).await;
        assert_eq!(s, 405, "{path}");
        assert_eq!(h["allow"], "GET, HEAD");
        assert!(body["error"]["message"].as_str().unwrap().contains("POST"), "{body}");
        assert_eq!(c.head(server.url(path)).send().await.unwrap().status(), 200);
    }
}

/// The accept loop calls the app without waiting for `poll_ready` (it would only hold the
/// request in one more future; `server::serve`). That is right only while the app never
/// applies back-pressure: a layer that does would need the loop to wait for it again.
#[test]
fn the_app_is_always_ready_so_the_accept_loop_may_call_it_at_once() {
    use std::task::{Context, Poll, Waker};
    use tower::Service;
    let rt = Arc::new(Runtime::for_tests("ws"));
    let mut app = svc_runtime::server::app(rt, routes());
    let mut cx = Context::from_waker(Waker::noop());
    assert!(matches!(app.poll_ready(&mut cx), Poll::Ready(Ok(()))));
}

/// `/healthz` is public: the stores a server uses, its key count and whether its workspace
/// store answers are shown only with `--health-details`, and never a credential.
#[tokio::test]
async fn healthz_shows_store_details_only_when_asked() {
    let start = |details: bool| {
        let mut rt = Runtime::for_tests("ws/api");
        rt.health
            .set_workspace("PostgreSQL postgres://***@db.internal:5432/shop".into());
        rt.health.reloaded(42);
        rt.health.unreachable();
        rt.health_details = details;
        TestServer::start(Arc::new(rt), routes())
    };
    let public = start(false).await;
    let r = client().get(public.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), r#"{"status":"ok"}"#, "nothing but the status");
    let operators = start(true).await;
    let body: serde_json::Value = json_of(client().get(operators.url("/healthz"))).await;
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["workspace_store"]["keys_loaded"], 42, "{body}");
}

/// The outside review: an HTTP/2 connection that had made a request was never closed
/// when idle (hyper's keep-alive only pings), so a client could hold thousands. A real
/// HTTP/2 client (hyper's, prior knowledge) holds 50, each after one request: every one is
/// closed, with a GOAWAY, once idle past the deadline.
#[tokio::test]
async fn idle_http2_connections_are_closed_like_http1_ones() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let server = TestServer::start(
        runtime_with_connection_limits(Duration::from_millis(400), Duration::from_secs(1)),
        routes(),
    )
    .await;
    let mut drivers = Vec::new();
    for _ in 0..50 {
        let io = TokioIo::new(tokio::net::TcpStream::connect(server.addr).await.unwrap());
        let (mut sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .unwrap();
        let driver = tokio::spawn(conn);
        let request = http::Request::get(server.url("/healthz"))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.version(), http::Version::HTTP_2);
        drivers.push((sender, driver));
    }
    // The deadline is 400 ms (closed between it and two ticks more): all are gone in 3 s.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    for (sender, driver) in drivers {
        let ended = tokio::time::timeout_at(deadline, driver).await;
        assert!(ended.is_ok(), "an idle HTTP/2 connection was still open after 3 s");
        assert!(sender.is_closed());
    }
}

/// Past `--max-connections`, a new connection gets a JSON 503 with `Retry-After` and is
/// closed; the connections already open are served as before.
#[tokio::test]
async fn connections_past_the_cap_get_a_503_and_are_closed() {
    use tokio::io::AsyncReadExt;
    let mut rt = Runtime::for_tests("ws/api");
    rt.limits.max_connections = 5;
    let server = TestServer::start(Arc::new(rt), routes()).await;
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(tokio::net::TcpStream::connect(server.addr).await.unwrap());
    }
    // The accept loop takes them in order: give it a moment to count the five.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut extra = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), extra.read_to_string(&mut answer))
        .await
        .expect("answered and closed")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(
        answer.contains("retry-after: 1") && answer.contains(r#""status":503"#),
        "{answer}"
    );
    drop(held);
    // Room again once they are gone.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match client().get(server.url("/healthz")).send().await {
            Ok(r) if r.status() == 200 => break,
            _ => assert!(
                tokio::time::Instant::now() < deadline,
                "no room after the held connections closed"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The reliability run: SIGTERM under 32 busy keep-alive connections left 30 requests sent
/// around the signal without an answer (the connection just closed). Now each request
/// whose head arrived gets an answer; the drain's answers say `Connection: close`, and a
/// client that reads it sends nothing more on that connection.
#[tokio::test]
async fn a_shutdown_under_load_leaves_no_request_unanswered() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut server = TestServer::start(
        runtime_with_connection_limits(Duration::from_secs(10), Duration::from_secs(5)),
        routes(),
    )
    .await;
    let addr = server.addr;
    let mut clients = Vec::new();
    for _ in 0..32 {
        clients.push(tokio::spawn(async move {
            // (answered, unanswered, answers that closed the connection)
            let (mut answered, mut unanswered, mut closing) = (0u32, 0u32, 0u32);
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            // Until the server closes the connection, one way or another.
            loop {
                if s.write_all(b"GET /ws/api/ip HTTP/1.1\r\nHost: x\r\n\r\n")
                    .await
                    .is_err()
                {
                    break;
                }
                // One whole answer: its head, then `content-length` bytes.
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let complete = loop {
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length: ")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + length {
                            break Some(text[..end].to_ascii_lowercase());
                        }
                    }
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => break None,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                match complete {
                    None => {
                        unanswered += 1;
                        break;
                    }
                    Some(head) => {
                        answered += 1;
                        if head.contains("connection: close") {
                            closing += 1;
                            break;
                        }
                    }
                }
                // A client thinks between requests: its connection is idle, kept alive,
                // when the signal comes.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            (answered, unanswered, closing)
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = std::time::Instant::now();
    server.stopped_within(Duration::from_secs(7)).await;
    let took = asked.elapsed();
    let (mut answered, mut unanswered, mut closing) = (0, 0, 0);
    for c in clients {
        let (a, u, c) = c.await.unwrap();
        answered += a;
        unanswered += u;
        closing += c;
    }
    assert!(answered > 32, "the clients were busy: {answered} answers");
    assert_eq!(
        unanswered, 0,
        "requests sent around the signal got no answer ({closing} answers closed their connection)"
    );
    assert_eq!(closing, 32, "every connection ended with an answer that closed it");
    assert!(took < Duration::from_secs(3), "the drain took {took:?}");
}
